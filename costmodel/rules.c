/*
 * rules.c — every validity rule, generic and per framework, in one table.
 * A rule reads a strategy (with its framework and filled behaviours), the
 * model and the cluster; a failure names the rule, the field and its value
 * in the library's terms (JSON field names), and the front ends word the
 * field their own way. What a framework can express is data
 * (framework.c); the rules here read it. Sources: docs/frameworks.md.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "costmodel/costmodel.h"
#include "costmodel/framework.h"
#include "costmodel/rules.h"
#include "topologies/topologies.h"

typedef struct rule_def {
    pp_rule_info info;
    unsigned deps;
} rule_def;

#define D(x) PP_DIM_##x
static const rule_def defs[PP_RULE_COUNT] = {
    [PP_RULE_NONE] = {{"none", "", "no rule"}, 0},
    [PP_RULE_ORDER] = {{"order", "order", "the rank order names tp, cp, dp and pp once each, fastest first"}, D(BASE)},
    [PP_RULE_DEGREES] = {{"degrees", "dp", "every parallel degree is at least 1"}, D(DEG) | D(EP)},
    [PP_RULE_GPUS] = {{"gpus", "dp", "dp x tp x pp x cp equals the GPU count"}, D(DEG)},
    [PP_RULE_TP_HEADS] = {{"tp-heads", "tp", "tp divides the attention heads and the key/value heads"}, D(DEG)},
    [PP_RULE_TP_DOMAIN] = {{"tp-domain", "tp", "a TP group stays inside one NVLink domain (search limit max_tp_per_node)"}, D(DEG)},
    [PP_RULE_PP_LAYERS] = {{"pp-layers", "pp", "pp is at most the number of blocks"}, D(DEG)},
    [PP_RULE_CP_SEQ] = {{"cp-seq", "cp", "cp divides the sequence length (2 cp with causal load balancing: megatron, fsdp)"}, D(FW) | D(DEG) | D(BASE)},
    [PP_RULE_EP_DENSE] = {{"ep-dense", "ep", "a dense model has ep = 1"}, D(EP)},
    [PP_RULE_EP_GROUP] = {{"ep-group", "ep", "ep divides the experts, and ep x etp divides tp x dp x cp, the ranks expert groups are carved from (with etp = tp: ep divides dp x cp)"}, D(DEG) | D(EP)},
    [PP_RULE_BATCH] = {{"batch", "global_batch", "micro-batch x dp divides the global batch"}, D(DEG) | D(MB) | D(BASE)},
    [PP_RULE_SP_TP] = {{"sp-tp", "sp", "sequence parallelism needs tp > 1"}, D(DEG) | D(SP)},
    [PP_RULE_PRECISION] = {{"precision-gpu", "precision", "the GPU has dense FLOP/s at the precision (tf32 is not a training precision)"}, D(PREC)},
    [PP_RULE_ZERO_RANGE] = {{"zero-range", "zero", "the ZeRO stage is 0, 1, 2 or 3"}, D(ZERO)},
    [PP_RULE_SHARD] = {{"shard", "shard", "a hybrid shard group divides dp x cp and needs ZeRO >= 1"}, D(DEG) | D(ZERO)},
    [PP_RULE_OFFLOAD_ZERO] = {{"offload-zero", "offload", "optimizer offload needs ZeRO >= 1; parameter and NVMe offload need ZeRO-3"}, D(ZERO) | D(OFFLOAD) | D(BASE)},
    [PP_RULE_NVME] = {{"nvme-drive", "offload", "NVMe offload needs a cluster with NVMe"}, D(OFFLOAD)},
    [PP_RULE_SCHEDULE] = {{"schedule", "schedule", "interleaving needs pp >= 2 and v >= 2; other schedules have v = 1"}, D(DEG) | D(SCHED)},
    [PP_RULE_INTERLEAVE_LAYERS] = {{"interleave-layers", "virtual_stages", "without an explicit split, pp x v divides the blocks"}, D(DEG) | D(SCHED)},
    [PP_RULE_INTERLEAVE_MICROBATCHES] = {{"interleave-microbatches", "virtual_stages", "interleaving needs the micro-batches per step to be a multiple of pp"}, D(DEG) | D(SCHED) | D(MB) | D(BASE)},
    [PP_RULE_SPLIT] = {{"split", "stage_layers", "one block count per stage, summing to the blocks; an interleaved stage fills its v chunks, at most one of them empty"}, D(DEG) | D(SCHED) | D(SPLIT)},
    [PP_RULE_RECOMPUTE_LAYERS] = {{"recompute-layers", "recompute_layers", "recompute counts are -1 (all) or >= 0"}, D(RC) | D(SPLIT)},
    [PP_RULE_BEHAVIOUR] = {{"behaviour", "grad_accum_dtype", "every named setting has a known value"}, D(BASE) | D(BEHAV) | D(PREC) | D(OFFLOAD) | D(RC) | D(SCHED)},
    [PP_RULE_FINETUNE] = {{"finetune", "mode", "fine-tuning settings are in range"}, D(BASE)},
    [PP_RULE_QLORA_PRECISION] = {{"qlora-precision", "precision", "QLoRA computes in bf16 or fp16"}, D(BASE) | D(PREC)},
    [PP_RULE_FW_TP] = {{"fw-tp", "tp", "the framework has tensor parallelism"}, D(FW) | D(DEG)},
    [PP_RULE_FW_SP] = {{"fw-sp", "sp", "sequence parallelism as the framework does it (Megatron: with EP and TP)"}, D(FW) | D(DEG) | D(EP) | D(SP)},
    [PP_RULE_FW_PP] = {{"fw-pp", "pp", "the framework has pipeline parallelism"}, D(FW) | D(DEG)},
    [PP_RULE_FW_CP] = {{"fw-cp", "cp", "the framework has context (sequence) parallelism"}, D(FW) | D(DEG)},
    [PP_RULE_FW_CP_COMM] = {{"fw-cp-comm", "cp_comm", "the framework runs that kind of context parallelism"}, D(FW) | D(DEG) | D(BEHAV)},
    [PP_RULE_ULYSSES_HEADS] = {{"ulysses-heads", "cp", "all-to-all context parallelism splits each TP rank's heads over cp: tp x cp divides heads and kv_heads"}, D(DEG) | D(BEHAV)},
    [PP_RULE_FW_EP] = {{"fw-ep", "ep", "the framework has expert parallelism"}, D(FW) | D(EP)},
    [PP_RULE_FW_ZERO] = {{"fw-zero", "zero", "the framework has the ZeRO stage"}, D(FW) | D(ZERO)},
    [PP_RULE_FW_ZERO_PP] = {{"fw-zero-pp", "zero", "the framework combines the ZeRO stage with pipeline parallelism"}, D(FW) | D(ZERO) | D(DEG)},
    [PP_RULE_FW_SHARD] = {{"fw-shard", "shard", "the framework has hybrid sharding"}, D(FW) | D(ZERO) | D(DEG)},
    [PP_RULE_FW_OFFLOAD] = {{"fw-offload", "offload", "the framework has the offload"}, D(FW) | D(OFFLOAD)},
    [PP_RULE_FW_SCHEDULE] = {{"fw-schedule", "schedule", "the framework runs the pipeline schedule"}, D(FW) | D(SCHED) | D(DEG)},
    [PP_RULE_FW_PRECISION] = {{"fw-precision", "precision", "the framework trains at the precision"}, D(FW) | D(PREC)},
    [PP_RULE_FW_RECOMPUTE] = {{"fw-recompute", "recompute", "the framework has the recompute granularity"}, D(FW) | D(RC) | D(BASE)},
    [PP_RULE_FW_PARTIAL_RECOMPUTE] = {{"fw-partial-recompute", "recompute_layers", "the framework can recompute that many blocks per stage"}, D(FW) | D(RC) | D(SCHED) | D(SPLIT)},
    [PP_RULE_FW_SPLIT] = {{"fw-split", "stage_layers", "the framework's launcher can write the stage split"}, D(FW) | D(DEG) | D(SCHED) | D(SPLIT)},
    [PP_RULE_FW_OPTIMIZER] = {{"fw-optimizer", "optimizer", "the framework has the optimizer"}, D(FW) | D(BASE)},
    [PP_RULE_FW_OFFLOAD_OPTIMIZER] = {{"offload-optimizer", "optimizer", "an offloaded optimizer steps on the CPU, which the optimizer must support"}, D(FW) | D(OFFLOAD) | D(BASE)},
    [PP_RULE_FW_FINETUNE] = {{"fw-finetune", "mode", "the framework has the fine-tuning mode"}, D(FW) | D(BASE)},
    [PP_RULE_FW_ARCH] = {{"fw-arch", "model", "the framework's arguments can build the model"}, D(FW) | D(BASE)},
    [PP_RULE_FW_ORDER] = {{"fw-order", "order", "the framework orders ranks tp-cp-dp-pp"}, D(FW) | D(BASE)},
    [PP_RULE_FW_TP_OVERLAP] = {{"fw-tp-overlap", "overlap_tp", "TP overlap needs the framework's support, tp > 1, sequence parallelism and peer-to-peer GPUs on NVLink"}, D(FW) | D(DEG) | D(SP) | D(BEHAV)},
    [PP_RULE_FW_DP_OVERLAP] = {{"fw-dp-overlap", "overlap_dp", "the framework overlaps DP traffic with the backward pass there"}, D(FW) | D(DEG) | D(ZERO) | D(BEHAV)},
    [PP_RULE_FW_GRAD_ACCUM] = {{"fw-grad-accum", "grad_accum_dtype", "the framework accumulates gradients in that dtype"}, D(FW) | D(PREC) | D(ZERO) | D(OFFLOAD) | D(BEHAV)},
    [PP_RULE_FW_OUTPUTS] = {{"fw-pipeline-outputs", "free_pipeline_outputs", "pipeline outputs are kept or freed as the framework does"}, D(FW) | D(DEG) | D(BEHAV)},
    [PP_RULE_FW_LOSS] = {{"fw-loss", "loss", "the framework has the loss kernel"}, D(FW) | D(BEHAV)},
    [PP_RULE_FW_LAUNCHER] = {{"fw-launcher", "model", "a launcher of the framework runs the model with these settings"}, D(FW) | D(DEG) | D(ZERO) | D(PREC) | D(RC) | D(BASE) | D(LAUNCH) | D(BEHAV)},
    [PP_RULE_FW_ETP] = {{"fw-etp", "etp", "experts take their own tensor-parallel degree (etp dividing tp) only in Megatron-Core, for a mixture-of-experts model"}, D(FW) | D(DEG) | D(EP)},
    [PP_RULE_FW_EP_OVERLAP] = {{"fw-ep-overlap", "overlap_ep", "EP all-to-all overlap is Megatron-Core's, with ep > 1, pp 1 or the interleaved schedule, no full recomputation, 16-bit"}, D(FW) | D(EP) | D(DEG) | D(RC) | D(SCHED) | D(PREC) | D(BEHAV)},
    [PP_RULE_FW_EP_DISPATCH] = {{"fw-ep-dispatch", "ep_dispatch", "hierarchical EP dispatch (DeepEP/HybridEP) is Megatron-Core's flex dispatcher, on NVIDIA GPUs (a no-op with ep 1)"}, D(FW) | D(EP) | D(BEHAV)},
    [PP_RULE_FW_ALLOCATOR] = {{"fw-allocator", "expandable_segments", "expandable segments are set by a launch file that gives PYTORCH_CUDA_ALLOC_CONF to every rank (Megatron-LM's argument script)"}, D(FW) | D(BEHAV)},
    [PP_RULE_FW_RC_MODULES] = {{"fw-recompute-modules", "recompute_modules", "recompute modules are Megatron-Core's, with recompute selective; mla_up_proj needs multi-latent attention, moe_act experts"}, D(FW) | D(RC) | D(BASE)},
    [PP_RULE_FW_OPT_STATES] = {{"fw-opt-states", "opt_states", "bf16 optimizer states are Megatron-Core's precision-aware optimizer: AdamW, the distributed optimizer (zero 1), bf16 or fp8 training, full training"}, D(FW) | D(ZERO) | D(PREC) | D(BASE)},
    [PP_RULE_FW_FP8_PARAMS] = {{"fw-fp8-params", "fp8_param_gather", "FP8 primary weights are Megatron-Core's --fp8-param-gather: fp8 training, the distributed optimizer (zero 1) or Megatron-FSDP (zero 3), full training, no offload"}, D(FW) | D(PREC) | D(ZERO) | D(OFFLOAD) | D(BEHAV) | D(BASE)},
    [PP_RULE_FW_ACT_OFFLOAD] = {{"fw-act-offload", "act_offload_layers", "activations go to the CPU only where the framework offloads them: Megatron-Core with pp 1, no recompute, fewer blocks than the model's"}, D(FW) | D(DEG) | D(RC) | D(BASE)},
};
#undef D

const pp_rule_info *pp_rule_get(pp_rule r) { return (unsigned)r < PP_RULE_COUNT ? &defs[r].info : NULL; }
unsigned pp__rule_deps(pp_rule r) { return (unsigned)r < PP_RULE_COUNT ? defs[r].deps : 0; }

/* ------------------------------------------------------------ helpers */

typedef struct why {
    const pp__rule_ctx *x;
    pp_rule r;
    pp_error *err;
} why;

/* Records a failure of w->r about field = value; returns 0 (the verdict). */
__attribute__((format(printf, 4, 5))) static int no(const why *w, const char *field, const char *value, const char *fmt, ...)
{
    if (!w->err) return 0;
    char detail[PP_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    pp__fail_field(w->err, w->r, field ? field : defs[w->r].info.field, value, "%s [rule %s]", detail, defs[w->r].info.id);
    return 0;
}

static const char *itoa_(char *b, int v)
{
    snprintf(b, 16, "%d", v);
    return b;
}
/* The value as text, formatted only when a message is wanted (the search
 * evaluates rules without one, millions of times). */
#define I(v) (w->err ? itoa_((char[16]){0}, (v)) : NULL)

static const char *ename(int which, int v)
{
    int n;
    const char *const *names = pp_enum_names(which, &n);
    return v >= 0 && v < n ? names[v] : "?";
}

/* Counts beyond pp are zero or rule split says so. */
static int split_given(const pp_strategy *s)
{
    for (int i = 0; i < s->pp && i < PP_MAX_STAGES; i++)
        if (s->stage_layers[i]) return 1;
    return 0;
}

/* Names of the frameworks whose entries satisfy pred, for "use X" hints. */
static void who_can(int (*pred)(const pp__fw *, int), int v, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (int f = 0; f < PP_FW_COUNT && n + 24 < cap; f++)
        if (pred(pp__fw_get(f), v)) n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? ", " : "", pp_framework_name(f));
    if (!n) snprintf(out, cap, "none");
}

static int has_tp(const pp__fw *f, int v) { return (void)v, f->tp; }
static int has_pp(const pp__fw *f, int v) { return (void)v, f->pp; }
static int has_cp(const pp__fw *f, int v) { return (void)v, f->cp; }
static int has_ep(const pp__fw *f, int v) { return (void)v, f->ep; }
static int has_zero(const pp__fw *f, int v) { return (f->zero >> v) & 1; }
static int has_offload(const pp__fw *f, int v) { return (f->offload >> v) & 1; }
static int has_sched(const pp__fw *f, int v) { return (f->schedules >> v) & 1; }
static int has_prec(const pp__fw *f, int v) { return (f->precisions >> v) & 1; }
static int has_rc(const pp__fw *f, int v) { return (f->recompute >> v) & 1; }
static int has_opt(const pp__fw *f, int v) { return (f->optimizers >> v) & 1; }
static int has_mode(const pp__fw *f, int v) { return (f->modes >> v) & 1; }
static int has_loss(const pp__fw *f, int v) { return (f->losses >> v) & 1; }
static int has_cp_comm(const pp__fw *f, int v) { return f->cp && ((f->cp_comm >> v) & 1); }
static int has_act_offload(const pp__fw *f, int v) { return (void)v, f->act_offload; }
static int has_etp(const pp__fw *f, int v) { return (void)v, f->etp; }
static int has_bf16_states(const pp__fw *f, int v) { return (void)v, f->bf16_opt_states; }
static int has_rc_modules(const pp__fw *f, int v) { return (void)v, f->recompute_modules; }
static int has_fp8_params(const pp__fw *f, int v) { return (void)v, f->fp8_param_gather; }

/* "megatron has no X (frameworks that do: a, b)" */
static int no_fw(const why *w, const char *value, int (*pred)(const pp__fw *, int), int v, const char *what)
{
    char list[160];
    if (!w->err) return 0; /* the search: no message wanted */
    who_can(pred, v, list, sizeof list);
    return no(w, NULL, value, "%s has no %s (frameworks that do: %s)", pp_framework_name(w->x->s->framework), what, list);
}

/* ------------------------------------------------------------ generic rules */

static int order_ok(const why *w)
{
    static const char *const dims[4] = {"tp", "cp", "dp", "pp"};
    const char *o = w->x->s->order, *p = o;
    int seen[4] = {0, 0, 0, 0}, n = 0;
    while (*p && n < 5) {
        int hit = -1;
        for (int d = 0; d < 4; d++)
            if (strncmp(p, dims[d], 2) == 0 && (p[2] == '-' || p[2] == '\0')) hit = d;
        if (hit < 0 || seen[hit]++) break;
        n++;
        p += p[2] ? 3 : 2;
    }
    if (n == 4 && !*p) return 1;
    return no(w, NULL, o, "expected tp, cp, dp and pp once each, fastest first, e.g. tp-cp-dp-pp");
}

static int degrees_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    const char *names[5] = {"dp", "tp", "pp", "cp", "ep"};
    int v[5] = {s->dp, s->tp, s->pp, s->cp, s->ep};
    for (int i = 0; i < 5; i++)
        if (v[i] < 1) return no(w, names[i], I(v[i]), "expected a degree of at least 1");
    return 1;
}

static int gpus_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    long long n = (long long)s->dp * s->tp * s->pp * s->cp;
    if (n == pp_cluster_gpus(w->x->c)) return 1;
    return no(w, NULL, I(s->dp), "dp x tp x pp x cp = %d x %d x %d x %d = %lld, but the cluster has %d GPUs", s->dp,
              s->tp, s->pp, s->cp, n, pp_cluster_gpus(w->x->c));
}

static int tp_heads_ok(const why *w)
{
    const pp_model *m = w->x->m;
    int t = w->x->s->tp;
    if (t >= 1 && m->heads % t == 0 && m->kv_heads % t == 0) return 1;
    return no(w, NULL, I(t), "must divide the %d heads and %d kv_heads of %s", m->heads, m->kv_heads, m->name);
}

static int tp_domain_ok(const why *w)
{
    int t = w->x->s->tp, lim = w->x->max_tp, dom = pp_topo_domain_size(w->x->c), gpus = pp_cluster_gpus(w->x->c);
    if (lim <= 0) return 1;
    if (dom > gpus) dom = gpus;
    if (t <= lim && (t > dom ? t % dom == 0 : dom % t == 0)) return 1;
    return no(w, NULL, I(t), "exceeds the largest TP degree %d, or straddles NVLink domains of %d GPUs (raise "
              "max_tp_per_node to allow it)", lim, dom);
}

static int pp_layers_ok(const why *w)
{
    int p = w->x->s->pp, l = w->x->m->layers;
    if (p <= l && p <= PP_MAX_STAGES) return 1;
    return no(w, NULL, I(p), "exceeds the %d blocks of %s (or %d stages)", l, w->x->m->name, PP_MAX_STAGES);
}

/* Causal load balancing (framework cp_balanced) gives each CP rank two
 * chunks, one from each end of the sequence; Ulysses splits it once. */
static int cp_seq_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    const pp__fw *f = pp__fw_get(s->framework);
    int two = s->cp > 1 && f && f->cp_balanced ? 2 : 1;
    if (s->seq % (two * s->cp) == 0) return 1;
    if (two == 2 && s->seq % s->cp == 0)
        return no(w, NULL, I(s->cp), "2 x cp must divide the sequence length %d: %s balances causal attention with two "
                  "chunks a rank, one from each end (Megatron asserts seq %% (2 cp) == 0)", s->seq, pp_framework_name(s->framework));
    return no(w, NULL, I(s->cp), "must divide the sequence length %d", s->seq);
}

static int ep_dense_ok(const why *w)
{
    if (w->x->m->experts || w->x->s->ep == 1) return 1;
    return no(w, NULL, I(w->x->s->ep), "needs a mixture-of-experts model; %s is dense", w->x->m->name);
}

/* Megatron-Core folds the expert groups (etp x ep x expert-dp) over the
 * tp x cp x dp ranks of a stage (MoE parallel folding); with etp = tp that
 * is ep | dp x cp, DeepSpeed-MoE's rule too. */
static int ep_group_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    const pp_model *m = w->x->m;
    long long et = pp__etp(s), fold = (long long)s->tp * s->dp * s->cp;
    if (et < 1 || s->tp % et) return 1; /* not a divisor of tp: rule fw-etp says so */
    if (!m->experts || (m->experts % s->ep == 0 && fold % (s->ep * et) == 0)) return 1;
    if (m->experts % s->ep || et == s->tp)
        return no(w, NULL, I(s->ep), "must divide the %d experts and dp x cp = %d (expert-parallel groups are carved "
                  "out of the data- and context-parallel ranks; Megatron can fold them over tp too with a smaller "
                  "etp)", m->experts, s->dp * s->cp);
    return no(w, NULL, I(s->ep), "ep x etp = %lld must divide tp x dp x cp = %lld (Megatron folds the expert groups "
              "over those ranks)", s->ep * et, fold);
}

static int batch_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if (s->micro_batch < 1) return no(w, "micro_batch", I(s->micro_batch), "expected at least 1");
    if (s->seq < 1) return no(w, "seq", I(s->seq), "expected at least 1");
    if (s->global_batch < 1) return no(w, NULL, I(s->global_batch), "expected at least 1");
    long per = (long)s->micro_batch * s->dp;
    if (s->global_batch % per)
        return no(w, NULL, I(s->global_batch), "not divisible by micro_batch x dp = %d x %d = %ld", s->micro_batch,
                  s->dp, per);
    int ga = (int)(s->global_batch / per);
    if (s->grad_accum && s->grad_accum != ga)
        return no(w, "grad_accum", I(s->grad_accum), "contradicts global_batch / (micro_batch x dp) = %d", ga);
    return 1;
}

static int sp_tp_ok(const why *w)
{
    if (!w->x->s->sp || w->x->s->tp > 1) return 1;
    return no(w, NULL, "on", "sequence parallelism shards what tensor parallelism replicates: needs tp > 1");
}

static int precision_ok(const why *w)
{
    pp_precision p = w->x->s->precision;
    if ((unsigned)p >= PP_PREC_COUNT || p == PP_PREC_TF32)
        return no(w, NULL, (unsigned)p < PP_PREC_COUNT ? ename(PP_ENUM_PRECISION, p) : "?", "expected fp32, fp16, bf16 or fp8");
    if (w->x->c->gpu.peak_flops[p] > 0) return 1;
    return no(w, NULL, ename(PP_ENUM_PRECISION, p), "%s does not support it", w->x->c->gpu.name);
}

static int zero_range_ok(const why *w)
{
    int z = w->x->s->zero;
    return z >= 0 && z <= 3 ? 1 : no(w, NULL, I(z), "expected 0, 1, 2 or 3");
}

static int shard_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    int nd = s->dp * s->cp;
    if (s->shard == 0 || s->shard == nd) return 1;
    if (s->shard < 0 || nd % s->shard) return no(w, NULL, I(s->shard), "expected a divisor of dp x cp = %d", nd);
    if (s->zero < 1) return no(w, NULL, I(s->shard), "hybrid sharding shards states: needs zero >= 1");
    return 1;
}

static int offload_zero_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    pp_offload o = s->offload;
    if ((unsigned)o >= PP_OFFLOAD_COUNT) return no(w, NULL, "?", "expected none, optimizer, optimizer+params or nvme");
    if (o == PP_OFFLOAD_OPTIMIZER && s->zero < 1)
        return no(w, NULL, ename(PP_ENUM_OFFLOAD, o), "needs zero 1, 2 or 3 (ZeRO-Offload)");
    if ((o == PP_OFFLOAD_OPT_PARAMS || o == PP_OFFLOAD_NVME) && s->zero != 3)
        return no(w, NULL, ename(PP_ENUM_OFFLOAD, o), "needs zero 3 (parameters are offloaded only when sharded)");
    return 1;
}

static int nvme_ok(const why *w)
{
    if (w->x->s->offload != PP_OFFLOAD_NVME || w->x->c->nvme_bytes > 0) return 1;
    return no(w, NULL, "nvme", "cluster %s has no NVMe", w->x->c->name);
}

static int schedule_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if ((unsigned)s->schedule >= PP_SCHED_COUNT) return no(w, NULL, "?", "expected 1f1b, interleaved or gpipe");
    if (s->schedule != PP_SCHED_INTERLEAVED) {
        if (s->virtual_stages == 1) return 1;
        return no(w, "virtual_stages", I(s->virtual_stages), "needs the interleaved schedule");
    }
    if (s->pp >= 2 && s->virtual_stages >= 2) return 1;
    return no(w, NULL, "interleaved", "needs pp >= 2 and virtual_stages >= 2 (pp %d, v %d)", s->pp, s->virtual_stages);
}

static int interleave_layers_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    long pv = (long)s->pp * s->virtual_stages;
    if (s->schedule != PP_SCHED_INTERLEAVED || pv < 1 || w->x->m->layers % pv == 0 || split_given(s)) return 1;
    return no(w, NULL, I(s->virtual_stages), "%d blocks are not divisible by pp x v = %d x %d (or give stage_layers)",
              w->x->m->layers, s->pp, s->virtual_stages);
}

static int interleave_mb_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if (s->vp_group && (s->schedule != PP_SCHED_INTERLEAVED || s->vp_group < 0))
        return no(w, "vp_group", I(s->vp_group), "a micro-batch group per chunk needs the interleaved schedule");
    if (s->schedule != PP_SCHED_INTERLEAVED || s->pp < 1 || s->micro_batch < 1 || s->dp < 1) return 1;
    long ga = s->global_batch / ((long)s->micro_batch * s->dp), g = s->vp_group;
    /* schedules.py: N in [pp, M], and M mod N either 0 or at least pp */
    if (g > 0 && (g < s->pp || g > ga || (ga % g && ga % g < s->pp)))
        return no(w, "vp_group", I(s->vp_group), "micro-batches per chunk group: expected pp (%d) to the %ld micro-batches "
                  "a step, leaving 0 or at least pp over (Megatron's schedules.py)", s->pp, ga);
    if (g > 0 || ga % s->pp == 0) return 1;
    return no(w, "global_batch", I(s->global_batch), "gives %ld micro-batches per step; the interleaved schedule needs a "
              "multiple of pp (%d)", ga, s->pp);
}

/* An explicit interleaved layout: v chunks a stage (pp x v of them at
 * most), whose blocks sum to the stage's. */
static int chunks_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if (!pp__chunks_explicit(s)) return 1;
    long pv = (long)s->pp * s->virtual_stages;
    if (s->schedule != PP_SCHED_INTERLEAVED || pv > PP_MAX_CHUNKS)
        return no(w, "chunk_layers", "set", "an explicit chunk layout needs the interleaved schedule and pp x v <= %d "
                  "(pp %d, v %d)", PP_MAX_CHUNKS, s->pp, s->virtual_stages);
    for (long k = pv; k < PP_MAX_CHUNKS; k++)
        if (s->chunk_layers[k]) return no(w, "chunk_layers", I(s->chunk_layers[k]), "expected %ld chunks (pp x v)", pv);
    for (int i = 0; i < s->pp; i++) {
        int sum = 0;
        for (int c = 0; c < s->virtual_stages; c++) sum += s->chunk_layers[c * s->pp + i];
        if (sum != s->stage_layers[i])
            return no(w, "chunk_layers", I(sum), "stage %d's chunks hold %d blocks, its stage_layers %d", i, sum,
                      s->stage_layers[i]);
    }
    return 1;
}

static int split_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    int sum = 0, v = s->virtual_stages;
    for (int i = 0; i < PP_MAX_STAGES; i++) {
        int n = s->stage_layers[i];
        if (n < 0 || (i >= s->pp && n != 0))
            return no(w, NULL, I(n), "expected %d non-negative counts, one per stage", s->pp);
        sum += n;
        /* interleaved: v chunks per stage, as even as the count allows (any
         * count: Megatron's --pipeline-model-parallel-layout writes chunks of
         * any size, as DeepSeek-V3's 61 blocks need), at most one of them empty
         * (the slot Llama 3 and Megatron's --account-for-embedding-in-
         * pipeline-split give the embedding or the head) */
        if (s->schedule == PP_SCHED_INTERLEAVED && i < s->pp && n < v - 1)
            return no(w, NULL, I(n), "stage %d: with virtual_stages %d a stage holds at least %d blocks (one chunk may "
                      "be left to the embedding or the head)", i, v, v - 1);
    }
    if (sum != w->x->m->layers)
        return no(w, NULL, I(sum), "blocks sum to %d, but %s has %d", sum, w->x->m->name, w->x->m->layers);
    return chunks_ok(w);
}

static int recompute_layers_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if ((unsigned)s->recompute >= PP_RECOMPUTE_COUNT) return no(w, "recompute", "?", "expected none, selective or full");
    if (s->recompute_layers < -1) return no(w, NULL, I(s->recompute_layers), "expected -1 (all) or a count >= 0");
    for (int i = 0; s->per_stage_recompute && i < s->pp; i++)
        if (s->stage_recompute[i] < 0) return no(w, NULL, I(s->stage_recompute[i]), "stage %d: expected a count >= 0", i);
    return 1;
}

static int behaviour_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if ((unsigned)s->grad_accum_dtype >= PP_GRAD_COUNT) return no(w, "grad_accum_dtype", "?", "expected 16bit, fp32 or 16bit+fp32");
    if ((unsigned)s->cp_comm >= PP_CP_COUNT) return no(w, "cp_comm", "?", "expected ring, allgather or a2a");
    if ((unsigned)s->loss >= PP_LOSS_COUNT) return no(w, "loss", "?", "expected fp32, fused or chunked");
    if ((unsigned)s->optimizer >= PP_OPT_COUNT) return no(w, "optimizer", "?", "unknown optimizer");
    if ((unsigned)s->attention >= PP_ATTN_COUNT) return no(w, "attention", "?", "expected flash or materialised");
    if (s->overlap_dp < 0 || s->overlap_dp > 1 || s->overlap_tp < 0 || s->overlap_tp > 1)
        return no(w, "overlap_dp", "?", "expected 0 or 1");
    if (s->buf.free_pipeline_outputs < 0 || s->buf.free_pipeline_outputs > 1)
        return no(w, "free_pipeline_outputs", "?", "expected 0 or 1");
    if (s->buf.expandable_segments < 0 || s->buf.expandable_segments > 1)
        return no(w, "expandable_segments", "?", "expected 0 or 1");
    return 1;
}

static int finetune_ok(const why *w)
{
    const pp_finetune *f = &w->x->s->ft;
    const pp_model *m = w->x->m;
    if ((unsigned)f->mode >= PP_MODE_COUNT) return no(w, "mode", "?", "expected full, lora or qlora");
    if (f->mode != PP_MODE_FULL) {
        if (f->lora_rank < 1 || f->lora_rank > 4096) return no(w, "lora_rank", I(f->lora_rank), "expected an integer in [1, 4096]");
        if (!(f->lora_dropout >= 0 && f->lora_dropout < 1)) return no(w, "lora_dropout", "", "expected a number in [0, 1)");
        if (!(f->lora_targets & (PP_LORA_ALL_LINEAR | PP_LORA_LM_HEAD)))
            return no(w, "lora_targets", "", "expected at least one of q,k,v,o,gate,up,down,lm_head");
        if ((f->lora_targets & PP_LORA_GATE) && !m->gated_mlp) return no(w, "lora_targets", "gate", "%s has no gated MLP", m->name);
    }
    if (f->freeze_layers < 0 || f->freeze_layers > m->layers)
        return no(w, "freeze_layers", I(f->freeze_layers), "expected 0..%d", m->layers);
    return 1;
}

static int qlora_precision_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if (s->ft.mode != PP_MODE_QLORA || s->precision == PP_PREC_BF16 || s->precision == PP_PREC_FP16) return 1;
    return no(w, NULL, ename(PP_ENUM_PRECISION, s->precision), "QLoRA computes in bf16 or fp16");
}

/* ------------------------------------------------------------ framework rules */

#define FW(w) pp__fw_get((w)->x->s->framework)

static int fw_tp_ok(const why *w)
{
    return w->x->s->tp == 1 || FW(w)->tp ? 1 : no_fw(w, I(w->x->s->tp), has_tp, 0, "tensor parallelism");
}

static int fw_sp_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    const pp__fw *f = FW(w);
    if (s->sp && !f->sp) return no(w, NULL, "on", "%s has no sequence parallelism (Megatron's)", f->name);
    if (f->sp == 2 && s->tp > 1 && !s->sp)
        return no(w, NULL, "off", "%s always shards the norms' sequence with TP: set sp", f->name);
    /* Megatron-Core warns "When using expert parallelism and tensor parallelism
     * for training, sequence parallelism must be used" (model_parallel_config.py);
     * parplan prices the MoE layer on the sequence-parallel shard */
    if (f->etp && w->x->m->experts && s->ep > 1 && s->tp > 1 && !s->sp)
        return no(w, NULL, "off", "Megatron-Core runs expert parallelism with TP under sequence parallelism "
                  "(model_parallel_config.py: \"sequence parallelism must be used\"): set sp");
    /* DeepSpeed-MoE takes every TP rank to hold the same tokens (sharded_moe.py
     * MOELayer: drop_tokens, then gather_tokens over TP), but Megatron-DeepSpeed
     * hands it the rank's sequence shard under --sequence-parallel
     * (transformer.py: self.mlp(layernorm_output)): red team rt16 */
    if (s->framework == PP_FW_MEGATRON_DEEPSPEED && w->x->m->experts && s->sp)
        return no(w, NULL, "on", "DeepSpeed-MoE assumes the TP ranks hold the same tokens (sharded_moe.py drop_tokens / "
                  "gather_tokens), and Megatron-DeepSpeed gives each its sequence shard under its sequence parallelism: unset sp");
    return 1;
}

static int fw_pp_ok(const why *w)
{
    return w->x->s->pp == 1 || FW(w)->pp ? 1 : no_fw(w, I(w->x->s->pp), has_pp, 0, "pipeline parallelism");
}

/* DeepSpeed's sequence parallelism is Ulysses, which Megatron-DeepSpeed
 * builds only with tp = 1 and pp = 1 (megatron/core/parallel_state.py). */
static int fw_cp_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if (s->cp == 1) return 1;
    if (!FW(w)->cp) return no_fw(w, I(s->cp), has_cp, 0, "context parallelism");
    if (FW(w)->cp_comm == PP__BIT(PP_CP_A2A) && (s->tp > 1 || s->pp > 1))
        return no(w, NULL, I(s->cp), "%s's sequence parallelism is DeepSpeed-Ulysses, which Megatron-DeepSpeed "
                  "builds only with tp 1 and pp 1 (tp %d, pp %d); megatron or fsdp combine them", FW(w)->name, s->tp, s->pp);
    return 1;
}

static int fw_cp_comm_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if (s->cp == 1 || (unsigned)s->cp_comm >= PP_CP_COUNT || (FW(w)->cp_comm >> s->cp_comm & 1)) return 1;
    return no_fw(w, ename(PP_ENUM_CP_COMM, s->cp_comm), has_cp_comm, s->cp_comm, "context parallelism of that kind");
}

static int ulysses_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    const pp_model *m = w->x->m;
    long g = (long)s->tp * s->cp;
    if (s->cp == 1 || s->cp_comm != PP_CP_A2A || (m->heads % g == 0 && m->kv_heads % g == 0)) return 1;
    return no(w, NULL, I(s->cp), "all-to-all context parallelism (Ulysses) splits each tensor-parallel rank's heads "
              "over the cp ranks: tp x cp = %ld must divide heads (%d) and kv_heads (%d)", g, m->heads, m->kv_heads);
}

static int fw_ep_ok(const why *w)
{
    return w->x->s->ep == 1 || FW(w)->ep ? 1 : no_fw(w, I(w->x->s->ep), has_ep, 0, "expert parallelism");
}

static int fw_zero_ok(const why *w)
{
    int z = w->x->s->zero;
    if (z < 0 || z > 3 || (FW(w)->zero >> z & 1)) return 1;
    if (FW(w)->buckets == PP_BUCKETS_VIEWS)
        return no(w, NULL, I(z), "Megatron-LM shards optimizer states (the distributed optimizer, ZeRO-1) or "
                  "everything (Megatron-FSDP, ZeRO-3), never gradients alone: expected 0, 1 or 3 (ZeRO-2: deepspeed "
                  "or fsdp)");
    if (FW(w)->weights == PP_W_FSDP)
        return no(w, NULL, I(z), "FSDP always shards parameters, gradients and states: 3 reshards after forward "
                  "(FULL_SHARD), 2 keeps parameters gathered until backward (SHARD_GRAD_OP)");
    return no_fw(w, I(z), has_zero, z, "ZeRO stage");
}

static int fw_zero_pp_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if (s->pp == 1 || s->zero < 0 || s->zero > 3 || (FW(w)->zero_pp >> s->zero & 1)) return 1;
    if (FW(w)->weights == PP_W_FSDP)
        return no(w, NULL, I(s->zero), "with pipeline stages (pp %d) torch.distributed.pipelining keeps a stage's "
                  "parameters gathered from its first forward to its last backward: zero 2", s->pp);
    if (FW(w)->buckets == PP_BUCKETS_VIEWS)
        return no(w, NULL, I(s->zero), "with pipeline parallelism (pp %d): parplan prices Megatron-FSDP without "
                  "pipeline stages, as Megatron-Bridge's recipes run it; use zero 0 or 1, or pp 1", s->pp);
    return no(w, NULL, I(s->zero), "with pipeline parallelism (pp %d): DeepSpeed's PipelineEngine asserts \"ZeRO-2 and "
              "ZeRO-3 are incompatible with pipeline parallelism\"; use zero 0 or 1, or pp 1", s->pp);
}

static int fw_shard_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if (s->shard == 0 || s->shard == s->dp * s->cp || FW(w)->shard) return 1;
    return no(w, NULL, I(s->shard), "%s has no hybrid sharding (fsdp does: HSDP)", FW(w)->name);
}

static int fw_offload_ok(const why *w)
{
    int o = w->x->s->offload;
    if ((unsigned)o >= PP_OFFLOAD_COUNT || (FW(w)->offload >> o & 1)) return 1;
    return no_fw(w, ename(PP_ENUM_OFFLOAD, o), has_offload, o, "offload of that kind");
}

static int fw_schedule_ok(const why *w)
{
    int k = w->x->s->schedule;
    if (w->x->s->pp == 1 || (unsigned)k >= PP_SCHED_COUNT || (FW(w)->schedules >> k & 1)) return 1;
    return no_fw(w, ename(PP_ENUM_SCHEDULE, k), has_sched, k, "such pipeline schedule");
}

static int fw_precision_ok(const why *w)
{
    int p = w->x->s->precision;
    if ((unsigned)p >= PP_PREC_COUNT || (FW(w)->precisions >> p & 1)) return 1;
    return no_fw(w, ename(PP_ENUM_PRECISION, p), has_prec, p, "training at that precision");
}

static int fw_recompute_ok(const why *w)
{
    int r = w->x->s->recompute;
    const pp_model *m = w->x->m;
    if ((unsigned)r < PP_RECOMPUTE_COUNT && !(FW(w)->recompute >> r & 1))
        return no_fw(w, ename(PP_ENUM_RECOMPUTE, r), has_rc, r, "such recompute granularity");
    /* torchtitan's per-op policy, priced for the Llama block it runs */
    if (r == PP_RECOMPUTE_SELECTIVE && FW(w)->selective_ops &&
        (m->experts || m->mla.kv_lora_rank || !m->gated_mlp || w->x->s->ft.mode != PP_MODE_FULL))
        return no(w, NULL, "selective", "%s's selective recompute is torchtitan's per-op policy, priced for full "
                  "training of dense blocks with a gated MLP (Llama's); %s has %s", FW(w)->name, m->name,
                  w->x->s->ft.mode != PP_MODE_FULL ? "adapters (torchtitan has no LoRA)"
                  : m->experts ? "experts" : m->mla.kv_lora_rank ? "latent attention" : "a plain MLP");
    return 1;
}

/* Blocks recomputed per stage must be all of them, or one count for every
 * stage (a multiple of v with interleaving: Megatron counts per chunk). */
static int fw_partial_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    const pp__fw *f = FW(w);
    if (s->recompute != PP_RECOMPUTE_FULL || !split_given(s)) return 1;
    int k = -3;
    for (int i = 0; i < s->pp; i++) {
        int n = s->stage_layers[i], ki = pp__recomputed_blocks(s, i, n);
        if (ki >= n) continue;
        if (!f->partial_recompute)
            return no(w, NULL, I(ki), "stage %d recomputes %d of its %d blocks: %s recomputes every block or none "
                      "(recompute all blocks, or use megatron)", i, ki, n, f->name);
        int want = s->per_stage_recompute ? s->stage_recompute[i] : s->recompute_layers;
        if (f->partial_recompute == 1 && k != -3 && want != k)
            return no(w, NULL, I(want), "recompute differs between stages: %s's count is one value for every stage", f->name);
        k = want;
        if (f->partial_recompute == 1 && s->virtual_stages > 1 && k % s->virtual_stages)
            return no(w, NULL, I(k), "with %d virtual stages Megatron counts --recompute-num-layers per model chunk, so "
                      "it must divide by %d", s->virtual_stages, s->virtual_stages);
    }
    return 1;
}

/* The default split of each framework (strategy.c); DeepSpeed's is its
 * partition_method, with or without the embedding weighed as a block. */
static int fw_split_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    const pp__fw *f = FW(w);
    if (s->pp == 1 || f->split == PP_SPLIT_ANY || !split_given(s)) return 1;
    int want[PP_MAX_STAGES];
    for (int e = 0; e <= (f->split == PP_SPLIT_DEEPSPEED); e++) {
        if (f->split == PP_SPLIT_DEEPSPEED) {
            if (pp_split_deepspeed(w->x->m, s, e, want, NULL) != PP_OK) continue;
        } else {
            pp__split_default(s->pp, w->x->m->layers, want);
        }
        if (!memcmp(want, s->stage_layers, (size_t)s->pp * sizeof *want)) return 1;
    }
    return no(w, NULL, "", "%s's launcher cannot write this split: %s", f->name,
              f->split == PP_SPLIT_DEEPSPEED ? "DeepSpeed's PipelineModule splits by partition_method "
                                               "(type:transformer or type:transformer|embedding)"
                                             : "it splits evenly");
}

static int fw_optimizer_ok(const why *w)
{
    int o = w->x->s->optimizer;
    if ((unsigned)o >= PP_OPT_COUNT || (FW(w)->optimizers >> o & 1)) return 1;
    return no_fw(w, ename(PP_ENUM_OPTIMIZER, o), has_opt, o, "such optimizer");
}

/* DeepSpeed steps an offloaded optimizer with its CPU kernels (Adam(W),
 * Adagrad, Lion); bitsandbytes' 8-bit Adam runs only on the GPU. */
static int fw_offload_optimizer_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if (s->offload == PP_OFFLOAD_NONE) return 1;
    if (s->optimizer == PP_OPT_ADAM8BIT)
        return no(w, NULL, "adam8bit", "bitsandbytes' 8-bit Adam runs only on the GPU, and offload %s steps on the CPU",
                  ename(PP_ENUM_OFFLOAD, s->offload));
    int cpu = s->optimizer == PP_OPT_ADAMW || s->optimizer == PP_OPT_ADAGRAD || s->optimizer == PP_OPT_LION;
    if (FW(w)->buckets == PP_BUCKETS_DEEPSPEED && !cpu)
        return no(w, NULL, ename(PP_ENUM_OPTIMIZER, s->optimizer), "DeepSpeed's CPU optimizers are Adam(W), Adagrad "
                  "and Lion");
    return 1;
}

static int fw_finetune_ok(const why *w)
{
    const pp_finetune *t = &w->x->s->ft;
    if ((unsigned)t->mode < PP_MODE_COUNT && !(FW(w)->modes >> t->mode & 1))
        return no_fw(w, ename(PP_ENUM_MODE, t->mode), has_mode, t->mode, "such fine-tuning mode");
    if ((t->freeze_embeddings || t->freeze_layers) && !FW(w)->freeze)
        return no(w, "freeze_layers", I(t->freeze_layers), "%s has no argument to freeze parameters", FW(w)->name);
    return 1;
}

static int fw_order_ok(const why *w)
{
    if (!FW(w)->fixed_order || !strcmp(w->x->s->order, "tp-cp-dp-pp")) return 1;
    return no(w, NULL, w->x->s->order, "%s orders ranks tp-cp-dp-pp", FW(w)->name);
}

/* --overlap-moe-expert-parallel-comm: transformer_config.py asserts ep > 1,
 * the virtual pipeline when pp > 1, no full recomputation and a bf16 or
 * fp16 model (Megatron-LM d98e8a64dd). */
static int fw_ep_overlap_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if (s->overlap_ep == 0) return 1;
    if (s->overlap_ep != 1) return no(w, NULL, I(s->overlap_ep), "expected 0 or 1");
    if (!FW(w)->etp) return no_fw(w, "on", has_etp, 1, "overlap of expert-parallel all-to-alls");
    if (s->ep < 2) return no(w, "ep", I(s->ep), "Megatron overlaps EP all-to-alls only with expert parallelism (ep > 1)");
    if (s->pp > 1 && s->schedule != PP_SCHED_INTERLEAVED)
        return no(w, "schedule", pp_schedule_name(s->schedule), "Megatron's EP overlap with pp > 1 needs the "
                  "interleaved schedule (virtual pipeline stages)");
    if (s->recompute == PP_RECOMPUTE_FULL)
        return no(w, "recompute", "full", "Megatron's EP overlap does not run with full recomputation");
    if (s->precision == PP_PREC_FP32 || s->precision == PP_PREC_TF32)
        return no(w, "precision", pp_precision_name(s->precision), "Megatron's EP overlap needs a bf16 or fp16 model");
    return 1;
}

static int fw_ep_dispatch_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if (s->ep_dispatch == 0) return 1;
    if (s->ep_dispatch != 1) return no(w, NULL, I(s->ep_dispatch), "expected 0 (all-to-all) or 1 (hierarchical)");
    if (s->ep < 2) return 1; /* nothing to dispatch across ranks: the same plan */
    if (!FW(w)->etp) return no_fw(w, "on", has_etp, 1, "hierarchical expert dispatch");
    /* DeepEP's HybridEP kernels use NVIDIA's TMA instructions (DeepEP
     * README, "Hybrid-EP"); AMD's port is another branch (Mori-EP) */
    if (strcmp(w->x->c->gpu.vendor, "NVIDIA"))
        return no(w, NULL, "on", "hierarchical expert dispatch runs DeepEP's HybridEP kernels (NVIDIA TMA instructions); "
                  "%s is a %s GPU", w->x->c->gpu.name, w->x->c->gpu.vendor);
    return 1;
}

static int fw_tp_overlap_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if (s->overlap_tp && w->x->c->gpu.no_p2p)
        return no(w, NULL, "on", "Transformer Engine's TP overlap maps the other GPUs' memory (userbuffers), and %s has "
                  "no peer-to-peer access (NVIDIA/nccl issue #1127)", w->x->c->gpu.name);
    /* TE examples/pytorch/comm_gemm_overlap/README.md, Requirements:
     * "Tensor-parallel GPUs must be on a single node, and connected over
     * NVLink/NVSwitch" */
    if (s->overlap_tp && w->x->c->intra.kind != PP_LINK_NVLINK)
        return no(w, NULL, "on", "Transformer Engine's TP overlap (userbuffers) needs the tensor-parallel GPUs connected "
                  "over NVLink/NVSwitch, and %s's GPUs are linked by %s", w->x->c->name,
                  w->x->c->intra.kind == PP_LINK_PCIE ? "PCIe" : w->x->c->intra.kind == PP_LINK_XGMI ? "xGMI" : "another fabric");
    if (!s->overlap_tp || (FW(w)->tp_overlap && s->sp && s->tp > 1)) return 1;
    if (!FW(w)->tp_overlap)
        return no(w, NULL, "on", "%s does not overlap tensor-parallel communication with GEMMs (megatron does, "
                  "with Transformer Engine)", FW(w)->name);
    return no(w, NULL, "on", "Megatron-LM overlaps TP communication (--tp-comm-overlap) only with tp > 1 and "
              "sequence parallelism");
}

static int fw_dp_overlap_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    const pp__fw *f = FW(w);
    if (!s->overlap_dp) return 1;
    if (s->pp > 1 && !f->dp_overlap_pp)
        return no(w, NULL, "on", "%s reduces gradients after the pipeline flush (PipelineEngine turns overlap_comm off)",
                  f->name);
    if (f->buckets == PP_BUCKETS_DEEPSPEED && pp__ds_wrapper_of(s) != PP_DS_ZERO)
        return no(w, NULL, "on", "without the ZeRO optimizer (zero 0, or BF16_Optimizer) DeepSpeed all-reduces "
                  "gradients after the backward pass");
    return 1;
}

/* Gradient dtypes a framework can accumulate in at a precision. */
static unsigned grads_allowed(const pp__fw *f, const pp_strategy *s)
{
    unsigned g16 = PP__BIT(PP_GRAD_16), g32 = PP__BIT(PP_GRAD_FP32), g48 = PP__BIT(PP_GRAD_16_FP32);
    if (s->precision == PP_PREC_FP32) return g16 | g32 | g48; /* fp32 gradients whatever the setting */
    if (f->weights == PP_W_FSDP) return g32 | g16;           /* reduce_dtype fp32, or bf16 (mixed_precision PURE) */
    if (f->weights != PP_W_MASTER16) return g32;             /* .grad of fp32 parameters */
    /* Megatron: fp32 main_grad, or 16 bits with --grad-reduce-in-bf16 (what
     * NVIDIA's NeMo and Megatron-Bridge performance recipes set) */
    if (f->buckets == PP_BUCKETS_VIEWS) return g16 | g32;
    if (s->precision == PP_PREC_FP16) return g16;
    if (s->zero == 0) return g48;                            /* BF16_Optimizer */
    if (s->zero == 1 && s->offload == PP_OFFLOAD_NONE) return g16 | g48;
    return g16;
}

static int fw_grad_accum_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if ((unsigned)s->grad_accum_dtype >= PP_GRAD_COUNT || (grads_allowed(FW(w), s) >> s->grad_accum_dtype & 1)) return 1;
    static const char *const why_not[PP_FW_COUNT] = {
        [PP_FW_PYTORCH] = "PyTorch AMP keeps fp32 parameters, so gradients are fp32",
        [PP_FW_DEEPSPEED] = "DeepSpeed accumulates fp16 and ZeRO-2/3 (or offloaded) gradients in 16 bits, bf16 without "
                            "ZeRO in BF16_Optimizer's 16bit+fp32, and has no fp32-only buffer",
        [PP_FW_MEGATRON] = "Megatron-LM accumulates gradients in a main_grad buffer: fp32, or 16 bits with "
                           "--grad-reduce-in-bf16 (bf16) or without --accumulate-allreduce-grads-in-fp32 (fp16)",
        [PP_FW_MEGATRON_DEEPSPEED] = "Megatron-DeepSpeed accumulates as DeepSpeed does",
        [PP_FW_FSDP] = "FSDP keeps fp32 sharded parameters and reduces gradients in fp32 (or 16 bits)",
    };
    return no(w, NULL, ename(PP_ENUM_GRAD_ACCUM, s->grad_accum_dtype), "%s", why_not[s->framework]);
}

/* The allocator is set in the environment of the launch: parplan writes it
 * only into the shell script it emits for Megatron-LM, so only there can the
 * files read back give the priced memory. */
static int fw_allocator_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if (s->buf.expandable_segments <= 0 || FW(w)->alloc_env) return 1;
    return no(w, NULL, "expandable", "%s's launch files cannot give PYTORCH_CUDA_ALLOC_CONF to every rank; parplan "
              "prices it with PyTorch's caching allocator", FW(w)->title);
}

static int fw_outputs_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if (s->pp == 1 || s->buf.free_pipeline_outputs == FW(w)->free_outputs) return 1;
    return no(w, NULL, s->buf.free_pipeline_outputs ? "on" : "off", "%s", FW(w)->free_outputs
              ? "Megatron-LM always frees a stage's outputs once sent (deallocate_pipeline_outputs)"
              : "this framework keeps each stage's outputs until their backward");
}

static int fw_loss_ok(const why *w)
{
    int l = w->x->s->loss;
    if ((unsigned)l >= PP_LOSS_COUNT || (FW(w)->losses >> l & 1)) return 1;
    return no_fw(w, ename(PP_ENUM_LOSS, l), has_loss, l, "such loss kernel");
}

/* Megatron-Core's CPU offloading (Transformer Engine's offload context):
 * transformer_config.py refuses it with pipeline parallelism, with
 * recomputation, and for num_layers or more blocks (Megatron-LM
 * d98e8a64dd). */
static int fw_act_offload_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    int n = s->act_offload_layers;
    if (n == 0) return 1;
    if (n < 0) return no(w, NULL, I(n), "expected a block count >= 0");
    if (!FW(w)->act_offload) return no_fw(w, I(n), has_act_offload, 1, "activation offload to the CPU");
    if (s->pp > 1)
        return no(w, "pp", I(s->pp), "Megatron-Core has no CPU offloading with pipeline parallelism (pp must be 1)");
    if (s->recompute != PP_RECOMPUTE_NONE)
        return no(w, "recompute", ename(PP_ENUM_RECOMPUTE, s->recompute),
                  "Megatron-Core's CPU offloading does not work with activation recomputation");
    if (n >= w->x->m->layers)
        return no(w, NULL, I(n), "Megatron-Core offloads fewer blocks than the model has (%d)", w->x->m->layers);
    return 1;
}

/* Megatron-Core's precision-aware optimizer (--use-precision-aware-optimizer,
 * Megatron-LM d98e8a64dd): optimizer_config.py accepts it with adam only,
 * optimizer/__init__.py with the distributed optimizer or Megatron-FSDP
 * (which keeps its own fp32 main weights: not priced); the master weight
 * kept as the low 16 bits of a bf16 parameter (Transformer Engine's
 * store_param_remainders) in bf16 training; under fp8 with the current
 * scaling parplan's Megatron files launch (--fp8-recipe tensorwise) an
 * fp32 master shard beside the moments (optimizer_config.py: 8 bytes). */
static int fw_opt_states_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    int v = s->opt_states;
    if (v == PP_OPT_STATES_FP32) return 1;
    if (v != PP_OPT_STATES_BF16) return no(w, NULL, I(v), "expected fp32 or bf16");
    if (!FW(w)->bf16_opt_states) return no_fw(w, "bf16", has_bf16_states, 1, "bf16 optimizer states");
    if (s->optimizer != PP_OPT_ADAMW)
        return no(w, "optimizer", ename(PP_ENUM_OPTIMIZER, s->optimizer), "bf16 optimizer states are AdamW's moments (expected adamw)");
    if (s->zero != 1)
        return no(w, "zero", I(s->zero), "parplan prices the precision-aware optimizer in the distributed optimizer "
                  "(Megatron-FSDP keeps its own fp32 main weights) (expected zero 1)");
    if (s->precision != PP_PREC_BF16 && s->precision != PP_PREC_FP8)
        return no(w, "precision", ename(PP_ENUM_PRECISION, s->precision),
                  "the precision-aware optimizer keeps an fp32 master beside bf16 or fp8 training's bf16 "
                  "parameters (expected bf16 or fp8)");
    if (s->ft.mode != PP_MODE_FULL)
        return no(w, "mode", ename(PP_ENUM_MODE, s->ft.mode), "bf16 optimizer states are Megatron's, for full training "
                  "(expected full)");
    return 1;
}

/* --fp8-param-gather (Megatron-LM d98e8a64dd): transformer_config.py
 * asserts fp8; arguments.py needs the distributed optimizer or Megatron-FSDP
 * and refuses it with --optimizer-cpu-offload but for delayed scaling
 * (parplan's files run tensorwise). Megatron trains full models only. */
static int fw_fp8_params_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    int v = s->fp8_param_gather;
    if (v <= 0) return 1;
    if (v != 1) return no(w, NULL, I(v), "expected 0 (off) or 1 (on)");
    if (!FW(w)->fp8_param_gather) return no_fw(w, "on", has_fp8_params, 1, "FP8 primary weights");
    if (s->precision != PP_PREC_FP8)
        return no(w, "precision", ename(PP_ENUM_PRECISION, s->precision), "FP8 primary weights need fp8 training "
                  "(Megatron asserts it) (expected fp8)");
    if (s->zero != 1 && s->zero != 3)
        return no(w, "zero", I(s->zero), "--fp8-param-gather needs the distributed optimizer or Megatron-FSDP "
                  "(expected zero 1 or 3)");
    if (s->offload != PP_OFFLOAD_NONE)
        return no(w, "offload", pp_offload_name(s->offload), "Megatron offloads the optimizer with FP8 primary weights "
                  "only under delayed scaling; parplan's files run tensorwise (expected none)");
    if (s->ft.mode != PP_MODE_FULL)
        return no(w, "mode", ename(PP_ENUM_MODE, s->ft.mode), "FP8 primary weights are Megatron's, for full training "
                  "(expected full)");
    return 1;
}

/* Megatron-Core's --recompute-modules (transformer_config.py d98e8a64dd:
 * with --recompute-granularity selective; mla_up_proj only with
 * multi-latent attention, moe_act only with grouped-GEMM experts, which is
 * how parplan prices experts). mlp and layernorm are accepted where they
 * change nothing, as Megatron accepts them (a MoE-only model's blocks; a
 * standard block's norms are fused into its GEMMs). Under fp8, moe_act and
 * layernorm need a recipe other than delayed: parplan's is tensorwise. */
static int fw_rc_modules_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    unsigned v = s->recompute_modules;
    char b[96];
    if (v == 0) return 1;
    if (v >> PP_RC_COUNT) return no(w, NULL, itoa_(b, (int)v), "expected a mask of %d module bits", PP_RC_COUNT);
    pp_rc_modules_format(v, ',', b, sizeof b);
    if (!FW(w)->recompute_modules) return no_fw(w, b, has_rc_modules, 1, "recompute modules");
    if (s->recompute != PP_RECOMPUTE_SELECTIVE)
        return no(w, NULL, b, "recompute modules are what a selective recomputation redoes (recompute is %s; expected selective)",
                  ename(PP_ENUM_RECOMPUTE, s->recompute));
    if ((v & PP_RC_MLA_UP_PROJ) && w->x->m->mla.kv_lora_rank <= 0)
        return no(w, NULL, b, "mla_up_proj needs multi-latent attention; %s has none", w->x->m->name);
    if ((v & PP_RC_MOE_ACT) && !w->x->m->experts)
        return no(w, NULL, b, "moe_act needs a mixture-of-experts model; %s is dense", w->x->m->name);
    return 1;
}

/* --expert-tensor-parallel-size (Megatron-Core): any divisor of tp, for
 * a model with experts; elsewhere experts follow tp. */
static int fw_etp_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    if (s->etp == 0 || s->etp == s->tp) return 1;
    if (s->etp < 0 || s->tp % s->etp) return no(w, NULL, I(s->etp), "expected a divisor of tp = %d", s->tp);
    if (!w->x->m->experts) return no(w, NULL, I(s->etp), "needs a mixture-of-experts model; %s is dense", w->x->m->name);
    if (!FW(w)->etp) return no_fw(w, I(s->etp), has_etp, 1, "expert tensor parallelism apart from tp");
    return 1;
}

/* FSDP is launched by HF Accelerate (any HF model; no pipeline stages, no
 * fp8) or torchtitan (pipeline stages and fp8 too, for the models it
 * builds: Llama 3 8B/70B/405B; no LoRA). */
static int fw_launcher_ok(const why *w)
{
    const pp_strategy *s = w->x->s;
    const pp_model *m = w->x->m;
    /* the arguments target microsoft/Megatron-DeepSpeed: ALiBi and the
     * embedding norm are BigScience's fork (BLOOM), priced but not written */
    if (s->framework == PP_FW_MEGATRON_DEEPSPEED && (m->position == PP_POS_ALIBI || m->embed_norm))
        return no(w, NULL, m->name, "uses %s: the Megatron-DeepSpeed arguments parplan writes (microsoft/Megatron-DeepSpeed) "
                  "cannot build it; BigScience's fork can (--position-embedding-type alibi, --embed-layernorm)",
                  m->position == PP_POS_ALIBI ? "ALiBi positions" : "a norm after the embedding");
    const char *why_tt = pp__torchtitan_only(s);
    if (FW(w)->weights != PP_W_FSDP) return 1;
    /* a plan parplan launches with torchtitan by choice (buf.fsdp_no_sync 0
     * at pp 1, a search's launcher option): torchtitan's limits hold too */
    if (!why_tt && !pp__fsdp_accelerate(s)) why_tt = "torchtitan's launch (chosen)";
    /* Accelerate's FSDP2 policy reduces in the parameter dtype (utils/
     * dataclasses.py set_mixed_precision: reduce_dtype = param_dtype); its
     * YAML has no key for another */
    if (pp__fsdp_accelerate(s) && s->precision != PP_PREC_FP32 && s->grad_accum_dtype == PP_GRAD_FP32)
        return no(w, "grad_accum_dtype", "fp32", "HF Accelerate's FSDP2 reduces gradients in the parameter dtype "
                  "(mixed_precision %s); torchtitan reduces in fp32 (with pipeline stages, fp8, selective recompute or "
                  "tp > 1), or set mixed_precision_policy in your own FullyShardedDataParallelPlugin",
                  s->precision == PP_PREC_BF16 ? "bf16" : "fp16");
    if (!why_tt) return 1;
    /* torchtitan v0.2.2 takes mixed_precision_reduce float32 only */
    if (s->precision != PP_PREC_FP32 && s->grad_accum_dtype == PP_GRAD_16)
        return no(w, "grad_accum_dtype", "16bit", "FSDP with %s is launched by torchtitan, which reduces gradients in "
                  "fp32 only (mixed_precision_reduce)", why_tt);
    /* torchtitan v0.2.2 components/optimizer.py: OptimizersContainer
     * "currently only supports Adam and AdamW" */
    if (s->optimizer != PP_OPT_ADAMW)
        return no(w, "optimizer", ename(PP_ENUM_OPTIMIZER, s->optimizer), "FSDP with %s is launched by torchtitan, "
                  "whose optimizers are Adam and AdamW; parplan launches HF Accelerate (any optimizer) without %s",
                  why_tt, why_tt);
    if (s->ft.mode != PP_MODE_FULL)
        return no(w, "mode", ename(PP_ENUM_MODE, s->ft.mode), "FSDP with %s is launched by torchtitan, which has no "
                  "LoRA; parplan launches HF Accelerate (LoRA) without %s", why_tt, why_tt);
    /* torchtitan v0.2.2's job config has no frozen parameters (review10 M1) */
    if (s->ft.freeze_embeddings || s->ft.freeze_layers)
        return no(w, "freeze", "on", "FSDP with %s is launched by torchtitan, which trains every weight; parplan "
                  "launches HF Accelerate (frozen blocks) without %s", why_tt, why_tt);
    if (pp__torchtitan_flavor(w->x->m)) return 1;
    return no(w, NULL, w->x->m->name, "FSDP with %s is launched by torchtitan, whose flavors build Llama 3 8B, 70B and "
              "405B; parplan launches HF Accelerate (any model) without %s", why_tt, why_tt);
}

/* Model shapes Megatron's arguments can build (docs/megatron.md). */
/* Rotary settings the arguments can carry (Megatron-LM d98e8a64dd
 * arguments.py:2400-2426: --rotary-base int, --use-rope-scaling with Llama
 * 3's frequency factors 1/4 and original context 8192 hard-coded in
 * rotary_pos_embedding.py, yarn, an integer interpolation factor;
 * Megatron-DeepSpeed: --rotary-position-embeddings-theta int, no scaling). */
static int rope_ok(const why *w, const pp_model *m, int mds)
{
    static const char *const kind[PP_ROPE_COUNT] = {"none", "llama3", "yarn", "linear", "dynamic"};
    const char *fw = FW(w)->title;
    if (m->position != PP_POS_ROPE) return 1;
    if (m->rope_theta > 0 && m->rope_theta != floor(m->rope_theta))
        return no(w, NULL, m->name, "has rotary base %g: %s takes an integer base", m->rope_theta, fw);
    if (m->rope_scaling == PP_ROPE_NONE) return 1;
    if (mds) return no(w, NULL, m->name, "scales its rotary frequencies (%s): Megatron-DeepSpeed has no argument for it "
                       "(megatron has)", kind[m->rope_scaling % PP_ROPE_COUNT]);
    if (m->rope_scaling == PP_ROPE_DYNAMIC)
        return no(w, NULL, m->name, "uses dynamic NTK rotary scaling: %s has no argument for it", fw);
    if (m->rope_scaling == PP_ROPE_LINEAR && m->rope_factor != floor(m->rope_factor))
        return no(w, NULL, m->name, "scales rotary positions linearly by %g: %s's "
                  "--rotary-seq-len-interpolation-factor takes an integer", m->rope_factor, fw);
    if (m->rope_scaling == PP_ROPE_LLAMA3 &&
        ((m->rope_low_freq > 0 && m->rope_low_freq != 1) || (m->rope_high_freq > 0 && m->rope_high_freq != 4) ||
         (m->rope_original_max > 0 && m->rope_original_max != 8192)))
        return no(w, NULL, m->name, "uses Llama 3 rotary scaling with low/high frequency factors %g/%g and original "
                  "context %d: %s fixes them at 1/4 and 8192", m->rope_low_freq, m->rope_high_freq, m->rope_original_max,
                  fw);
    return 1;
}

static int fw_arch_ok(const why *w)
{
    const pp_model *m = w->x->m;
    const char *fw = FW(w)->title;
    int mds = w->x->s->framework == PP_FW_MEGATRON_DEEPSPEED;
    if (!FW(w)->megatron_arch) return 1;
    /* ALiBi and the embedding norm are BigScience's Megatron-DeepSpeed (BLOOM):
     * --position-embedding-type alibi, --embed-layernorm */
    if (m->position == PP_POS_ALIBI && !mds)
        return no(w, NULL, m->name, "uses ALiBi positions: %s offers rotary or learned positions (megatron-deepspeed as "
                  "BLOOM ran it has ALiBi)", fw);
    if (m->parallel_block) return no(w, NULL, m->name, "has parallel attention and MLP blocks: %s has no argument for them", fw);
    if (m->norms_per_block != 2)
        return no(w, NULL, m->name, "has %d norms per block: %s builds two (pre-attention, pre-MLP)", m->norms_per_block, fw);
    if (m->embed_norm && !mds) return no(w, NULL, m->name, "has a norm after the embedding: %s has no argument for it", fw);
    if (m->gated_mlp && m->activation != PP_ACT_SILU)
        return no(w, NULL, m->name, "has a gated MLP with %s: %s's --swiglu gates with SiLU only",
                  m->activation == PP_ACT_GELU ? "GELU" : "ReLU", fw);
    if (m->lm_head_bias) return no(w, NULL, m->name, "has an LM-head bias: %s's output layer has none", fw);
    int all = m->qkv_bias && m->out_bias && m->mlp_bias, none = !m->qkv_bias && !m->out_bias && !m->mlp_bias;
    int qkv_only = m->qkv_bias && !m->out_bias && !m->mlp_bias;
    if (!all && !none && !(qkv_only && !mds))
        return no(w, NULL, m->name, "biases (qkv %d, out %d, mlp %d): %s has all linear biases, none "
                  "(--disable-bias-linear)%s", m->qkv_bias, m->out_bias, m->mlp_bias, fw,
                  mds ? "" : " or q/k/v only (--add-qkv-bias)");
    if (mds && m->mla.kv_lora_rank > 0)
        return no(w, NULL, m->name, "uses multi-head latent attention: Megatron-DeepSpeed cannot build it (megatron can)");
    if (mds && m->experts > 0 && (m->shared_experts || m->expert_ffn != m->ffn || m->topk > 2))
        return no(w, NULL, m->name, "experts (top-%d, %d shared, expert FFN %d vs FFN %d): DeepSpeed-MoE in "
                  "Megatron-DeepSpeed routes top-1 or top-2 to experts of --ffn-hidden-size, without shared experts",
                  m->topk, m->shared_experts, m->expert_ffn, m->ffn);
    return rope_ok(w, m, mds);
}

/* ------------------------------------------------------------ evaluation */

static int (*const checks[PP_RULE_COUNT])(const why *) = {
    [PP_RULE_ORDER] = order_ok, [PP_RULE_DEGREES] = degrees_ok, [PP_RULE_GPUS] = gpus_ok,
    [PP_RULE_TP_HEADS] = tp_heads_ok, [PP_RULE_TP_DOMAIN] = tp_domain_ok, [PP_RULE_PP_LAYERS] = pp_layers_ok,
    [PP_RULE_CP_SEQ] = cp_seq_ok, [PP_RULE_EP_DENSE] = ep_dense_ok, [PP_RULE_EP_GROUP] = ep_group_ok,
    [PP_RULE_BATCH] = batch_ok, [PP_RULE_SP_TP] = sp_tp_ok, [PP_RULE_PRECISION] = precision_ok,
    [PP_RULE_ZERO_RANGE] = zero_range_ok, [PP_RULE_SHARD] = shard_ok, [PP_RULE_OFFLOAD_ZERO] = offload_zero_ok,
    [PP_RULE_NVME] = nvme_ok, [PP_RULE_SCHEDULE] = schedule_ok, [PP_RULE_INTERLEAVE_LAYERS] = interleave_layers_ok,
    [PP_RULE_INTERLEAVE_MICROBATCHES] = interleave_mb_ok, [PP_RULE_SPLIT] = split_ok,
    [PP_RULE_RECOMPUTE_LAYERS] = recompute_layers_ok, [PP_RULE_BEHAVIOUR] = behaviour_ok,
    [PP_RULE_FINETUNE] = finetune_ok, [PP_RULE_QLORA_PRECISION] = qlora_precision_ok, [PP_RULE_FW_TP] = fw_tp_ok,
    [PP_RULE_FW_SP] = fw_sp_ok, [PP_RULE_FW_PP] = fw_pp_ok, [PP_RULE_FW_CP] = fw_cp_ok,
    [PP_RULE_FW_CP_COMM] = fw_cp_comm_ok, [PP_RULE_ULYSSES_HEADS] = ulysses_ok, [PP_RULE_FW_EP] = fw_ep_ok,
    [PP_RULE_FW_ZERO] = fw_zero_ok, [PP_RULE_FW_ZERO_PP] = fw_zero_pp_ok, [PP_RULE_FW_SHARD] = fw_shard_ok,
    [PP_RULE_FW_OFFLOAD] = fw_offload_ok, [PP_RULE_FW_SCHEDULE] = fw_schedule_ok,
    [PP_RULE_FW_PRECISION] = fw_precision_ok, [PP_RULE_FW_RECOMPUTE] = fw_recompute_ok,
    [PP_RULE_FW_PARTIAL_RECOMPUTE] = fw_partial_ok, [PP_RULE_FW_SPLIT] = fw_split_ok,
    [PP_RULE_FW_OPTIMIZER] = fw_optimizer_ok, [PP_RULE_FW_OFFLOAD_OPTIMIZER] = fw_offload_optimizer_ok,
    [PP_RULE_FW_FINETUNE] = fw_finetune_ok, [PP_RULE_FW_ARCH] = fw_arch_ok, [PP_RULE_FW_ORDER] = fw_order_ok,
    [PP_RULE_FW_TP_OVERLAP] = fw_tp_overlap_ok, [PP_RULE_FW_DP_OVERLAP] = fw_dp_overlap_ok,
    [PP_RULE_FW_GRAD_ACCUM] = fw_grad_accum_ok, [PP_RULE_FW_OUTPUTS] = fw_outputs_ok, [PP_RULE_FW_LOSS] = fw_loss_ok,
    [PP_RULE_FW_ALLOCATOR] = fw_allocator_ok,
    [PP_RULE_FW_LAUNCHER] = fw_launcher_ok, [PP_RULE_FW_ACT_OFFLOAD] = fw_act_offload_ok,
    [PP_RULE_FW_ETP] = fw_etp_ok, [PP_RULE_FW_EP_OVERLAP] = fw_ep_overlap_ok,
    [PP_RULE_FW_EP_DISPATCH] = fw_ep_dispatch_ok, [PP_RULE_FW_OPT_STATES] = fw_opt_states_ok,
    [PP_RULE_FW_RC_MODULES] = fw_rc_modules_ok, [PP_RULE_FW_FP8_PARAMS] = fw_fp8_params_ok,
};

int pp__rule_eval(const pp__rule_ctx *x, pp_rule r, pp_error *err)
{
    if ((unsigned)r >= PP_RULE_COUNT || !checks[r]) return 1;
    if ((defs[r].deps & PP_DIM_FW) && !pp__fw_get(x->s->framework)) return 1; /* no framework yet */
    why w = {x, r, err};
    return checks[r](&w);
}

pp_status pp__rules_eval(const pp__rule_ctx *x, unsigned have, unsigned had, pp_rule *failed, pp_error *err)
{
    for (int r = 1; r < PP_RULE_COUNT; r++) {
        unsigned d = defs[r].deps;
        if ((d & ~have) || (had && !(d & ~had))) continue;
        if (!pp__rule_eval(x, (pp_rule)r, err)) {
            if (failed) *failed = (pp_rule)r;
            return PP_ERR_INPUT;
        }
    }
    return PP_OK;
}

pp_status pp_rules_check(const pp_model *m, const pp_cluster *c, const pp_strategy *s, pp_error *err)
{
    if (!pp__fw_get(s->framework))
        return pp__fail_field(err, 0, "framework", pp_framework_name(s->framework),
                              "expected one of pytorch, deepspeed, megatron, megatron-deepspeed, fsdp");
    pp__rule_ctx x = {m, c, s, 0};
    return pp__rules_eval(&x, PP_DIM_ALL | PP_DIM_LAUNCH, 0, NULL, err);
}
