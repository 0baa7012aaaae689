/*
 * strategy.c — strategy defaults, enum names, and the validity rules that
 * turn a user's degrees into a resolved strategy (or a reason why not).
 */
#include <string.h>

#include "costmodel/costmodel.h"

static const char *const precision_names[] = {"fp32", "tf32", "bf16", "fp16", "fp8"};
static const char *const offload_names[] = {"none", "optimizer", "optimizer+params", "nvme"};
static const char *const recompute_names[] = {"none", "selective", "full"};
static const char *const schedule_names[] = {"1f1b", "interleaved", "gpipe"};
static const char *const optimizer_names[] = {"adamw", "adam8bit", "adafactor", "sgd", "lion", "adagrad", "rmsprop"};
static const char *const mode_names[] = {"full", "lora", "qlora"};
static const char *const attention_names[] = {"flash", "materialised"};
static const char *const grad_names[] = {"16bit", "fp32", "16bit+fp32"};
static const char *const cp_comm_names[] = {"ring", "allgather"};
static const char *const loss_names[] = {"fp32", "fused", "chunked"};

_Static_assert(sizeof precision_names / sizeof *precision_names == PP_PREC_COUNT, "names");
_Static_assert(sizeof offload_names / sizeof *offload_names == PP_OFFLOAD_COUNT, "names");
_Static_assert(sizeof recompute_names / sizeof *recompute_names == PP_RECOMPUTE_COUNT, "names");
_Static_assert(sizeof schedule_names / sizeof *schedule_names == PP_SCHED_COUNT, "names");
_Static_assert(sizeof optimizer_names / sizeof *optimizer_names == PP_OPT_COUNT, "names");
_Static_assert(sizeof attention_names / sizeof *attention_names == PP_ATTN_COUNT, "names");
_Static_assert(sizeof grad_names / sizeof *grad_names == PP_GRAD_COUNT, "names");
_Static_assert(sizeof mode_names / sizeof *mode_names == PP_MODE_COUNT, "names");
_Static_assert(sizeof cp_comm_names / sizeof *cp_comm_names == PP_CP_COUNT, "names");
_Static_assert(sizeof loss_names / sizeof *loss_names == PP_LOSS_COUNT, "names");

const char *const *pp_enum_names(int which, int *n)
{
    static const struct { const char *const *names; int n; } t[PP_ENUM_COUNT] = {
        [PP_ENUM_PRECISION] = {precision_names, PP_PREC_COUNT},
        [PP_ENUM_OFFLOAD] = {offload_names, PP_OFFLOAD_COUNT},
        [PP_ENUM_RECOMPUTE] = {recompute_names, PP_RECOMPUTE_COUNT},
        [PP_ENUM_SCHEDULE] = {schedule_names, PP_SCHED_COUNT},
        [PP_ENUM_OPTIMIZER] = {optimizer_names, PP_OPT_COUNT},
        [PP_ENUM_ATTENTION] = {attention_names, PP_ATTN_COUNT},
        [PP_ENUM_GRAD_ACCUM] = {grad_names, PP_GRAD_COUNT},
        [PP_ENUM_MODE] = {mode_names, PP_MODE_COUNT},
        [PP_ENUM_CP_COMM] = {cp_comm_names, PP_CP_COUNT},
        [PP_ENUM_LOSS] = {loss_names, PP_LOSS_COUNT},
    };
    if (which < 0 || which >= PP_ENUM_COUNT) {
        *n = 0;
        return NULL;
    }
    *n = t[which].n;
    return t[which].names;
}

int pp_enum_parse(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0) return i;
    return -1;
}

const char *pp_offload_name(pp_offload o) { return o < PP_OFFLOAD_COUNT ? offload_names[o] : "?"; }
const char *pp_recompute_name(pp_recompute r) { return r < PP_RECOMPUTE_COUNT ? recompute_names[r] : "?"; }
const char *pp_schedule_name(pp_schedule s) { return s < PP_SCHED_COUNT ? schedule_names[s] : "?"; }
const char *pp_optimizer_name(pp_optimizer o) { return o < PP_OPT_COUNT ? optimizer_names[o] : "?"; }
const char *pp_attention_name(pp_attention a) { return a < PP_ATTN_COUNT ? attention_names[a] : "?"; }
const char *pp_cp_comm_name(pp_cp_comm c) { return c < PP_CP_COUNT ? cp_comm_names[c] : "?"; }
const char *pp_loss_name(pp_loss l) { return l < PP_LOSS_COUNT ? loss_names[l] : "?"; }

int pp__recomputed_blocks(const pp_strategy *s, int stage, int n)
{
    if (s->recompute != PP_RECOMPUTE_FULL) return 0;
    int k = s->per_stage_recompute ? s->stage_recompute[stage] : s->recompute_layers;
    return k < 0 || k > n ? n : k;
}

/* DeepSpeed defaults: deepspeed/runtime/zero/config.py (v0.14.5):
 * reduce_bucket_size 5e8, allgather_bucket_size 5e8,
 * stage3_prefetch_bucket_size 5e7, stage3_max_live_parameters 1e9,
 * stage3_param_persistence_threshold 1e5 (elements). */
void pp_buffers_default(pp_buffers *b)
{
    b->reduce_bucket = 5e8;
    b->allgather_bucket = 5e8;
    b->prefetch_bucket = 5e7;
    b->max_live_params = 1e9;
    b->param_persistence = 1e5;
    b->cuda_context = PP_COST_CUDA_CONTEXT;
    b->fragmentation = PP_COST_FRAGMENTATION;
    b->reserve = PP_COST_GPU_RESERVE;
    b->host_reserve = PP_COST_HOST_RESERVE;
}

void pp_strategy_default(pp_strategy *s)
{
    memset(s, 0, sizeof *s);
    s->dp = s->tp = s->pp = s->cp = s->ep = 1;
    s->precision = PP_PREC_BF16;
    s->optimizer = PP_OPT_ADAMW;
    s->attention = PP_ATTN_FLASH;
    s->recompute_layers = -1;
    s->micro_batch = 1;
    s->schedule = PP_SCHED_1F1B;
    s->virtual_stages = 1;
    s->overlap_dp = 1;
    s->ft.lora_rank = 16;
    s->ft.lora_alpha = 32;
    s->ft.lora_targets = PP_LORA_Q | PP_LORA_V;
    memcpy(s->order, "tp-cp-dp-pp", 12);
    pp_buffers_default(&s->buf);
}

/* Default split: equal blocks per stage; the remainder goes to the middle
 * stages first, since stage 0 holds the most activations under 1F1B and the
 * last stage holds the logits. */
static void default_split(pp_strategy *s, int layers)
{
    int p = s->pp, base = layers / p, rem = layers % p;
    for (int i = 0; i < p; i++) s->stage_layers[i] = base;
    for (int k = 0; k < rem; k++) {
        int i = p > 2 ? 1 + k % (p - 2) : k % p;
        s->stage_layers[i]++;
    }
}

/* DeepSpeed's ds_utils._lprobe: greedy parts no heavier than bottleneck b
 * over inclusive prefix sums pref[0..n-1]; 1 when the last part fits too. */
static int ds_lprobe(const double *pref, int n, int p, double b, int *parts)
{
    for (int k = 0; k <= p; k++) parts[k] = k ? n : 0;
    double bsum = b;
    for (int k = 1, i = 0; k < p; k++) {
        while (i < n && pref[i] < bsum) i++; /* bisect_left */
        parts[k] = i;
        if (i == n) return pref[n - 1] - pref[parts[k - 1]] < b; /* DeepSpeed's own check */
        bsum = (i ? pref[i - 1] : 0) + b;
    }
    return bsum >= pref[n - 1];
}

/* DeepSpeed PipelineModule's split (runtime/utils.py partition_balanced):
 * bisection on a real-valued bottleneck, then the greedy probe, over the
 * layer specs of Megatron-DeepSpeed's GPTModelPipe: embedding, blocks, final
 * norm, tied head. Blocks weigh 1; the two embedding specs weigh 1 under
 * type:transformer|embedding, 0 under type:transformer. The float search is
 * kept as DeepSpeed does it: 78 blocks over 12 stages give 7 x 11 + 1 ("78/12
 * =6.5 - so the last stage has 1 block, while the rest have 7", bigscience
 * tr11 chronicles-prequel.md), where an even split would give 6 or 7. */
pp_status pp_split_deepspeed(int layers, int pp, int embedding, int *stage_layers, pp_error *err)
{
    if (layers < 1 || layers > PP_MAX_LAYERS || pp < 1 || pp > PP_MAX_STAGES)
        return pp__fail(err, PP_ERR_INPUT, "--stage-layers deepspeed: expected 1..%d stages and 1..%d blocks",
                        PP_MAX_STAGES, PP_MAX_LAYERS);
    int n = layers + 3, parts[PP_MAX_STAGES + 1];
    double pref[PP_MAX_LAYERS + 3], acc = 0;
    for (int i = 0; i < n; i++) {
        int block = i >= 1 && i <= layers;
        acc += block || (embedding && (i == 0 || i == n - 1));
        pref[i] = acc;
    }
    if (n <= pp) {
        for (int i = 0; i < pp; i++) stage_layers[i] = 0;
    } else {
        double lower = acc / pp, upper = acc, eps = 1e-3;
        while (upper > lower + eps) {
            double mid = lower + (upper - lower) / 2;
            if (ds_lprobe(pref, n, pp, mid, parts)) upper = mid;
            else lower = mid + eps;
        }
        ds_lprobe(pref, n, pp, upper, parts);
        for (int k = 0; k < pp; k++) {
            int lo = parts[k] > 1 ? parts[k] : 1, hi = parts[k + 1] < layers + 1 ? parts[k + 1] : layers + 1;
            stage_layers[k] = hi > lo ? hi - lo : 0; /* block specs are items 1..layers */
        }
    }
    for (int k = 0; k < pp; k++)
        if (stage_layers[k] < 1)
            return pp__fail(err, PP_ERR_INPUT,
                            "--stage-layers deepspeed: stage %d gets no transformer block (%d blocks over %d stages); "
                            "DeepSpeed refuses such a split", k, layers, pp);
    return PP_OK;
}

/* Whether the caller gave a split: any of the first n counts set. */
static int split_given(const pp_strategy *s, int n)
{
    for (int i = 0; i < n && i < PP_MAX_STAGES; i++)
        if (s->stage_layers[i] != 0) return 1;
    return 0;
}

static pp_status check_split(pp_strategy *s, const pp_model *m, pp_error *err)
{
    int sum = 0;
    if (!split_given(s, PP_MAX_STAGES)) {
        default_split(s, m->layers);
        return PP_OK;
    }
    for (int i = 0; i < PP_MAX_STAGES; i++) {
        if (s->stage_layers[i] < 0 || (i >= s->pp && s->stage_layers[i] != 0))
            return pp__fail(err, PP_ERR_INPUT, "--stage-layers: expected %d non-negative counts, one per stage", s->pp);
        sum += s->stage_layers[i];
        /* interleaved: v chunks per stage, at most one of them empty (the slot
         * Llama 3 and Megatron's --account-for-embedding-in-pipeline-split give
         * the embedding or the head) */
        int v = s->virtual_stages, n = s->stage_layers[i];
        if (s->schedule == PP_SCHED_INTERLEAVED && i < s->pp && (n < v - 1 || (n % v && (n + 1) % v)))
            return pp__fail(err, PP_ERR_INPUT,
                            "--stage-layers: stage %d has %d blocks: with --virtual-stages %d a stage holds a multiple "
                            "of %d blocks, or one fewer (a chunk left to the embedding or the head)", i, n, v, v);
    }
    if (sum != m->layers)
        return pp__fail(err, PP_ERR_INPUT, "--stage-layers: blocks sum to %d, but %s has %d", sum, m->name, m->layers);
    return PP_OK;
}

static pp_status check_degrees(const pp_strategy *s, const pp_model *m, const pp_cluster *c, pp_error *err)
{
    int gpus = pp_cluster_gpus(c);
    if (s->dp < 1 || s->tp < 1 || s->pp < 1 || s->cp < 1 || s->ep < 1)
        return pp__fail(err, PP_ERR_INPUT, "degrees must be at least 1 (dp %d, tp %d, pp %d, cp %d, ep %d)",
                        s->dp, s->tp, s->pp, s->cp, s->ep);
    if ((long)s->dp * s->tp * s->pp * s->cp != gpus)
        return pp__fail(err, PP_ERR_INPUT, "dp*tp*pp*cp = %d*%d*%d*%d = %ld, but the cluster has %d GPUs",
                        s->dp, s->tp, s->pp, s->cp, (long)s->dp * s->tp * s->pp * s->cp, gpus);
    if (m->heads % s->tp || m->kv_heads % s->tp)
        return pp__fail(err, PP_ERR_INPUT, "--tp %d must divide heads (%d) and kv_heads (%d) of %s", s->tp,
                        m->heads, m->kv_heads, m->name);
    if (s->pp > m->layers || s->pp > PP_MAX_STAGES)
        return pp__fail(err, PP_ERR_INPUT, "--pp %d exceeds the %d blocks of %s", s->pp, m->layers, m->name);
    if (s->seq % s->cp)
        return pp__fail(err, PP_ERR_INPUT, "--cp %d must divide --seq %d", s->cp, s->seq);
    if (m->experts == 0 && s->ep != 1)
        return pp__fail(err, PP_ERR_INPUT, "--ep %d needs a mixture-of-experts model; %s is dense", s->ep, m->name);
    if (m->experts && (m->experts % s->ep || (s->dp * s->cp) % s->ep))
        return pp__fail(err, PP_ERR_INPUT, "--ep %d must divide the %d experts and dp*cp = %d", s->ep,
                        m->experts, s->dp * s->cp);
    if (s->sp && s->tp == 1)
        return pp__fail(err, PP_ERR_INPUT, "--sp (sequence parallelism) needs --tp > 1");
    return PP_OK;
}

static pp_status check_batch(pp_strategy *s, pp_error *err)
{
    if (s->micro_batch < 1 || s->seq < 1 || s->global_batch < 1)
        return pp__fail(err, PP_ERR_INPUT, "--micro-batch, --global-batch and --seq must be at least 1");
    long per = (long)s->micro_batch * s->dp;
    if (s->global_batch % per)
        return pp__fail(err, PP_ERR_INPUT, "--global-batch %d is not divisible by micro-batch*dp = %d*%d = %ld",
                        s->global_batch, s->micro_batch, s->dp, per);
    int ga = (int)(s->global_batch / per);
    if (s->grad_accum && s->grad_accum != ga)
        return pp__fail(err, PP_ERR_INPUT, "gradient accumulation %d contradicts global batch %d / (%d*%d) = %d",
                        s->grad_accum, s->global_batch, s->micro_batch, s->dp, ga);
    s->grad_accum = ga;
    return PP_OK;
}

static pp_status check_schedule(const pp_strategy *s, const pp_model *m, pp_error *err)
{
    if (s->schedule != PP_SCHED_INTERLEAVED) {
        if (s->virtual_stages != 1)
            return pp__fail(err, PP_ERR_INPUT, "--virtual-stages %d needs --schedule interleaved", s->virtual_stages);
        return PP_OK;
    }
    if (s->pp < 2 || s->virtual_stages < 2)
        return pp__fail(err, PP_ERR_INPUT, "interleaved schedule needs --pp >= 2 and --virtual-stages >= 2");
    if (!split_given(s, s->pp) && m->layers % (s->pp * s->virtual_stages)) /* an explicit split may be uneven */
        return pp__fail(err, PP_ERR_INPUT, "interleaved: %d blocks not divisible by pp*v = %d*%d (or give --stage-layers)",
                        m->layers, s->pp, s->virtual_stages);
    if (s->grad_accum % s->pp)
        return pp__fail(err, PP_ERR_INPUT, "interleaved: micro-batches per step (%d) must be a multiple of pp (%d)",
                        s->grad_accum, s->pp);
    return PP_OK;
}

static pp_status check_states(const pp_strategy *s, const pp_cluster *c, pp_error *err)
{
    if (s->zero < 0 || s->zero > 3) return pp__fail(err, PP_ERR_INPUT, "--zero %d: expected 0, 1, 2 or 3", s->zero);
    if (s->precision >= PP_PREC_COUNT || s->precision == PP_PREC_TF32)
        return pp__fail(err, PP_ERR_INPUT, "--precision: expected fp32, fp16, bf16 or fp8");
    if (c->gpu.peak_flops[s->precision] <= 0)
        return pp__fail(err, PP_ERR_INPUT, "--precision %s: %s does not support it", precision_names[s->precision],
                        c->gpu.name);
    if (s->offload == PP_OFFLOAD_OPTIMIZER && s->zero < 1 && s->ft.mode != PP_MODE_QLORA)
        return pp__fail(err, PP_ERR_INPUT, "--offload optimizer needs --zero 1, 2 or 3 (ZeRO-Offload)");
    if ((s->offload == PP_OFFLOAD_OPT_PARAMS || s->offload == PP_OFFLOAD_NVME) && s->zero != 3)
        return pp__fail(err, PP_ERR_INPUT, "--offload %s needs --zero 3 (DeepSpeed offloads parameters only at stage 3)",
                        offload_names[s->offload]);
    if (s->offload == PP_OFFLOAD_NVME && c->nvme_bytes <= 0)
        return pp__fail(err, PP_ERR_INPUT, "--offload nvme: cluster %s has no NVMe", c->name);
    if (s->recompute_layers < -1)
        return pp__fail(err, PP_ERR_INPUT, "recompute layers: expected -1 (all) or a count >= 0");
    if (s->cp_comm >= PP_CP_COUNT) return pp__fail(err, PP_ERR_INPUT, "--cp-comm: expected ring or allgather");
    if (s->loss >= PP_LOSS_COUNT) return pp__fail(err, PP_ERR_INPUT, "--loss: expected fp32, fused or chunked");
    for (int i = 0; s->per_stage_recompute && i < s->pp; i++)
        if (s->stage_recompute[i] < 0)
            return pp__fail(err, PP_ERR_INPUT, "stage %d: recomputed blocks must be >= 0", i);
    return PP_OK;
}

static pp_status check_finetune(const pp_strategy *s, const pp_model *m, pp_error *err)
{
    const pp_finetune *f = &s->ft;
    if (f->mode >= PP_MODE_COUNT) return pp__fail(err, PP_ERR_INPUT, "--mode: expected full, lora or qlora");
    if (f->mode != PP_MODE_FULL) {
        if (f->lora_rank < 1 || f->lora_rank > 4096)
            return pp__fail(err, PP_ERR_INPUT, "--lora-rank %d: expected an integer in [1, 4096]", f->lora_rank);
        if (!(f->lora_dropout >= 0 && f->lora_dropout < 1))
            return pp__fail(err, PP_ERR_INPUT, "--lora-dropout %g: expected a number in [0, 1)", f->lora_dropout);
        if (!(f->lora_targets & (PP_LORA_ALL_LINEAR | PP_LORA_LM_HEAD)))
            return pp__fail(err, PP_ERR_INPUT, "--lora-targets: expected at least one of q,k,v,o,gate,up,down,lm_head");
        if ((f->lora_targets & PP_LORA_GATE) && !m->gated_mlp)
            return pp__fail(err, PP_ERR_INPUT, "--lora-targets gate: %s has no gated MLP", m->name);
    }
    if (f->freeze_layers < 0 || f->freeze_layers > m->layers)
        return pp__fail(err, PP_ERR_INPUT, "--freeze layers %d: expected 0..%d", f->freeze_layers, m->layers);
    if (f->mode == PP_MODE_QLORA && s->precision != PP_PREC_BF16 && s->precision != PP_PREC_FP16)
        return pp__fail(err, PP_ERR_INPUT, "--mode qlora computes in bf16 or fp16, not %s", precision_names[s->precision]);
    return PP_OK;
}

/* The rank order must name tp, cp, dp and pp once each. */
static pp_status check_order(const pp_strategy *s, pp_error *err)
{
    static const char *const dims[4] = {"tp", "cp", "dp", "pp"};
    int seen[4] = {0, 0, 0, 0}, n = 0;
    const char *p = s->order;
    while (*p && n < 5) {
        int hit = -1;
        for (int d = 0; d < 4; d++)
            if (strncmp(p, dims[d], 2) == 0 && (p[2] == '-' || p[2] == '\0')) hit = d;
        if (hit < 0 || seen[hit]++) break;
        n++;
        p += p[2] ? 3 : 2;
    }
    if (n != 4 || *p)
        return pp__fail(err, PP_ERR_INPUT, "--order '%s': expected tp, cp, dp and pp once each, fastest first, e.g. tp-cp-dp-pp",
                        s->order);
    return PP_OK;
}

pp_status pp_strategy_resolve(pp_strategy *s, const pp_model *m, const pp_cluster *c, pp_error *err)
{
    pp_status st;
    if ((st = check_order(s, err))) return st;
    if ((st = check_degrees(s, m, c, err))) return st;
    if ((st = check_batch(s, err))) return st;
    if ((st = check_schedule(s, m, err))) return st;
    if ((st = check_states(s, c, err))) return st;
    if ((st = check_finetune(s, m, err))) return st;
    return check_split(s, m, err);
}
