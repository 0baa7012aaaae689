/*
 * strategy.c — strategy defaults, enum names, and the validity rules that
 * turn a user's degrees into a resolved strategy (or a reason why not).
 */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "costmodel/costmodel.h"
#include "costmodel/framework.h"
#include "costmodel/rules.h"

static const char *const precision_names[] = {"fp32", "tf32", "bf16", "fp16", "fp8"};
static const char *const opt_states_names[] = {"fp32", "bf16"};
static const char *const offload_names[] = {"none", "optimizer", "optimizer+params", "nvme"};
static const char *const recompute_names[] = {"none", "selective", "full"};
static const char *const schedule_names[] = {"1f1b", "interleaved", "gpipe"};
static const char *const optimizer_names[] = {"adamw", "adam8bit", "adafactor", "sgd", "lion", "adagrad", "rmsprop"};
static const char *const mode_names[] = {"full", "lora", "qlora"};
static const char *const attention_names[] = {"flash", "materialised"};
static const char *const grad_names[] = {"16bit", "fp32", "16bit+fp32"};
static const char *const cp_comm_names[] = {"ring", "allgather", "a2a"};
static const char *const framework_names[] = {"pytorch", "deepspeed", "megatron", "megatron-deepspeed", "fsdp"};
static const char *const loss_names[] = {"fp32", "fused", "chunked"};
static const char *const rc_module_names[] = {"core_attn", "mlp", "moe_act", "layernorm", "mla_up_proj"};

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
_Static_assert(sizeof framework_names / sizeof *framework_names == PP_FW_COUNT, "names");
_Static_assert(sizeof rc_module_names / sizeof *rc_module_names == PP_RC_COUNT, "names");

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
        [PP_ENUM_FRAMEWORK] = {framework_names, PP_FW_COUNT},
        [PP_ENUM_OPT_STATES] = {opt_states_names, PP_OPT_STATES_COUNT},
        [PP_ENUM_RECOMPUTE_MODULES] = {rc_module_names, PP_RC_COUNT},
    };
    if (which < 0 || which >= PP_ENUM_COUNT) {
        *n = 0;
        return NULL;
    }
    *n = t[which].n;
    return t[which].names;
}

/* "mla_up_proj,mlp" <-> PP_RC_* mask: names of PP_ENUM_RECOMPUTE_MODULES
 * separated by commas or spaces; empty is 0 (Megatron's default). */
int pp_rc_modules_parse(const char *list, unsigned *mask)
{
    unsigned m = 0;
    const char *p = list;
    while (p && *p) {
        size_t n = strcspn(p, ", ");
        if (n) {
            int i = 0;
            while (i < PP_RC_COUNT && !(strlen(rc_module_names[i]) == n && !strncmp(p, rc_module_names[i], n))) i++;
            if (i == PP_RC_COUNT) return -1;
            m |= 1u << i;
        }
        p += n;
        p += strspn(p, ", ");
    }
    *mask = m;
    return 0;
}

const char *pp_rc_modules_format(unsigned mask, char sep, char *buf, size_t cap)
{
    size_t n = 0;
    if (cap) buf[0] = 0;
    for (int i = 0; i < PP_RC_COUNT && cap; i++)
        if (mask >> i & 1) {
            int k = snprintf(buf + n, cap - n, "%.1s%s", n ? &sep : "", rc_module_names[i]);
            if (k < 0 || (size_t)k >= cap - n) break;
            n += (size_t)k;
        }
    return buf;
}

int pp_enum_parse(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0) return i;
    return -1;
}

const char *pp_offload_name(pp_offload o) { return (unsigned)o < PP_OFFLOAD_COUNT ? offload_names[o] : "?"; }
const char *pp_recompute_name(pp_recompute r) { return (unsigned)r < PP_RECOMPUTE_COUNT ? recompute_names[r] : "?"; }
const char *pp_schedule_name(pp_schedule s) { return (unsigned)s < PP_SCHED_COUNT ? schedule_names[s] : "?"; }
const char *pp_optimizer_name(pp_optimizer o) { return (unsigned)o < PP_OPT_COUNT ? optimizer_names[o] : "?"; }
const char *pp_attention_name(pp_attention a) { return (unsigned)a < PP_ATTN_COUNT ? attention_names[a] : "?"; }
const char *pp_cp_comm_name(pp_cp_comm c)
{
    return (unsigned)c < PP_CP_COUNT ? cp_comm_names[c] : c == PP_CP_AUTO ? "auto" : "?";
}
const char *pp_loss_name(pp_loss l) { return (unsigned)l < PP_LOSS_COUNT ? loss_names[l] : l == PP_LOSS_AUTO ? "auto" : "?"; }

int pp__recomputed_blocks(const pp_strategy *s, int stage, int n)
{
    if (s->recompute != PP_RECOMPUTE_FULL) return 0;
    int k = s->per_stage_recompute ? s->stage_recompute[stage] : s->recompute_layers;
    return k < 0 || k > n ? n : k;
}

/* DeepSpeed defaults: deepspeed/runtime/zero/config.py (v0.14.5):
 * stage3_prefetch_bucket_size 5e7, stage3_max_live_parameters 1e9,
 * stage3_param_persistence_threshold 1e5 (elements). The reduce and
 * all-gather buckets are 0 until resolved: the framework's (framework.c). */
void pp_buffers_default(pp_buffers *b)
{
    b->reduce_bucket = 0;
    b->allgather_bucket = 0;
    b->prefetch_bucket = 5e7;
    b->max_live_params = 1e9;
    b->sub_group_size = 1e9; /* DeepSpeed zero/config.py sub_group_size default */
    b->param_persistence = 1e5;
    b->cuda_context = PP_COST_CUDA_CONTEXT;
    b->fragmentation = PP_COST_FRAGMENTATION;
    b->reserve = PP_COST_GPU_RESERVE;
    b->host_reserve = PP_COST_HOST_RESERVE;
    b->free_pipeline_outputs = -1;
    b->expandable_segments = -1;
    b->fp8_te_linears = 0;
    b->fsdp_no_sync = -1;
}

void pp_strategy_default(pp_strategy *s)
{
    memset(s, 0, sizeof *s);
    s->framework = PP_FW_AUTO;
    s->grad_accum_dtype = PP_GRAD_AUTO;
    s->cp_comm = PP_CP_AUTO;
    s->loss = PP_LOSS_AUTO;
    s->overlap_tp = -1;
    s->fp8_param_gather = -1;
    s->dp = s->tp = s->pp = s->cp = s->ep = 1;
    s->precision = PP_PREC_BF16;
    s->optimizer = PP_OPT_ADAMW;
    s->attention = PP_ATTN_FLASH;
    s->recompute_layers = -1;
    s->micro_batch = 1;
    s->schedule = PP_SCHED_1F1B;
    s->virtual_stages = 1;
    s->overlap_dp = -1;
    s->ft.lora_rank = 16;
    s->ft.lora_alpha = 32;
    s->ft.lora_targets = PP_LORA_Q | PP_LORA_V;
    memcpy(s->order, "tp-cp-dp-pp", 12);
    pp_buffers_default(&s->buf);
}

/* Default split: equal blocks per stage; the remainder goes to the middle
 * stages first, since stage 0 holds the most activations under 1F1B and the
 * last stage holds the logits. */
void pp__split_default(int p, int layers, int *out)
{
    int base = layers / p, rem = layers % p;
    for (int i = 0; i < p; i++) out[i] = base;
    for (int k = 0; k < rem; k++) out[p > 2 ? 1 + k % (p - 2) : k % p]++;
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

/* DeepSpeed's PipelineModule split before v0.12.5 (runtime/utils.py
 * partition_balanced): bisection on a real-valued bottleneck, then the
 * greedy probe, over embedding, blocks, final norm, tied head. Blocks weigh
 * 1; the two embedding specs 1 under type:transformer|embedding. The float
 * search is kept as DeepSpeed did it: 78 blocks over 12 stages give 7 x 11
 * + 1 ("78/12=6.5 - so the last stage has 1 block, while the rest have 7",
 * bigscience tr11 chronicles-prequel.md). */
static void split_2022(int layers, int pp, int embedding, int *stage_layers)
{
    int n = layers + 3, parts[PP_MAX_STAGES + 1];
    double pref[PP_MAX_LAYERS + 3], acc = 0;
    for (int i = 0; i < n; i++) {
        int block = i >= 1 && i <= layers;
        acc += block || (embedding && (i == 0 || i == n - 1));
        pref[i] = acc;
    }
    if (n <= pp) {
        for (int i = 0; i < pp; i++) stage_layers[i] = 0;
        return;
    }
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

/* DeepSpeed v0.14.5's partition_balanced (runtime/utils.py, PR #4312): a
 * dynamic program over prefix sums choosing, for each item count i and part
 * count j, the last cut k minimising max - min of the parts' weights, later
 * k on ties (>=); unreachable states carry an infinite cost, as numpy's inf
 * arithmetic gives them; n <= parts falls back to partition_uniform. parts
 * gets the p + 1 cut indices. O(n^2 p) on at most PP_MAX_LAYERS + 5 items. */
static void ds_partition_dp(const double *w, int n, int p, int *parts)
{
    if (n <= p) {
        for (int k = 0; k <= p; k++) parts[k] = k < n ? k : n;
        return;
    }
    int cols = p + 1;
    double *pre = calloc((size_t)n + 1, sizeof *pre);
    double *mx = malloc(sizeof *mx * (size_t)(n + 1) * cols), *mn = malloc(sizeof *mn * (size_t)(n + 1) * cols);
    double *cost = malloc(sizeof *cost * (size_t)(n + 1) * cols);
    int *pos = calloc((size_t)(n + 1) * cols, sizeof *pos);
    if (!pre || !mx || !mn || !cost || !pos) { /* out of memory: DeepSpeed's uniform split */
        for (int k = 0; k <= p; k++) parts[k] = (int)((long long)n * k / p);
        goto out;
    }
    for (int i = 0; i < n; i++) pre[i + 1] = pre[i] + w[i];
    for (int i = 0; i < (n + 1) * cols; i++) mx[i] = mn[i] = cost[i] = INFINITY;
    mx[0] = cost[0] = 0;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= (i < p ? i : p); j++)
            for (int k = 0; k < i; k++) {
                double seg = pre[i] - pre[k], hi = fmax(mx[k * cols + j - 1], seg), lo = fmin(mn[k * cols + j - 1], seg);
                double c = hi - lo; /* inf - finite = inf, as numpy */
                if (cost[i * cols + j] >= c) cost[i * cols + j] = c, mx[i * cols + j] = hi, mn[i * cols + j] = lo, pos[i * cols + j] = k;
            }
    parts[p] = n;
    for (int j = p; j >= 1; j--) parts[j - 1] = pos[parts[j] * cols + j];
out:
    free(pre), free(mx), free(mn), free(cost), free(pos);
}

static pp_status no_block(int k, int layers, int pp, pp_error *err)
{
    return pp__fail_field(err, PP_RULE_FW_SPLIT, "stage_layers", "deepspeed",
                          "stage %d gets no transformer block (%d blocks over %d stages); parplan prices stages that "
                          "hold one (fewer stages, or give --stage-layers)", k, layers, pp);
}

static pp_status split_range(int layers, int pp, pp_error *err)
{
    if (layers < 1 || layers > PP_MAX_LAYERS || pp < 1 || pp > PP_MAX_STAGES)
        return pp__fail_field(err, PP_RULE_FW_SPLIT, "stage_layers", "deepspeed", "expected 1..%d stages and 1..%d blocks",
                              PP_MAX_STAGES, PP_MAX_LAYERS);
    return PP_OK;
}

/* v0.14.5: GPTModelPipe's specs (Megatron-DeepSpeed gpt_model.py):
 * _to_float16, the embedding, the blocks, the final norm, the head (the
 * tied EmbeddingPipe, or an untied head the regex does not match),
 * float16_to_fp32 */
/* The dynamic program is O(n^2 p): the search asks for the same split for
 * many candidates, so each thread remembers its last few. */
#define DS_SPLIT_CACHE 8
typedef struct ds_split_memo {
    int layers, tied, pp, embedding, used;
    int out[PP_MAX_STAGES];
} ds_split_memo;

static void split_0145_dp(const pp_model *m, int pp, int embedding, int *stage_layers);

static void split_0145(const pp_model *m, int pp, int embedding, int *stage_layers)
{
    static _Thread_local ds_split_memo memo[DS_SPLIT_CACHE];
    static _Thread_local int next;
    int tied = m->tied_embeddings != 0;
    for (int i = 0; i < DS_SPLIT_CACHE; i++) {
        const ds_split_memo *c = &memo[i];
        if (c->used && c->layers == m->layers && c->tied == tied && c->pp == pp && c->embedding == embedding) {
            memcpy(stage_layers, c->out, (size_t)pp * sizeof *stage_layers);
            return;
        }
    }
    split_0145_dp(m, pp, embedding, stage_layers);
    ds_split_memo *c = &memo[next];
    next = (next + 1) % DS_SPLIT_CACHE;
    *c = (ds_split_memo){m->layers, tied, pp, embedding, 1, {0}};
    memcpy(c->out, stage_layers, (size_t)pp * sizeof *stage_layers);
}

static void split_0145_dp(const pp_model *m, int pp, int embedding, int *stage_layers)
{
    int layers = m->layers, n = layers + 5, parts[PP_MAX_STAGES + 1];
    double w[PP_MAX_LAYERS + 5];
    for (int i = 0; i < n; i++) {
        int block = i >= 2 && i < 2 + layers, embed = i == 1, head = i == layers + 3;
        w[i] = block || (embedding && (embed || (head && m->tied_embeddings)));
    }
    ds_partition_dp(w, n, pp, parts);
    for (int k = 0; k < pp; k++) {
        int lo = parts[k] > 2 ? parts[k] : 2, hi = parts[k + 1] < layers + 2 ? parts[k + 1] : layers + 2;
        stage_layers[k] = hi > lo ? hi - lo : 0; /* block specs are items 2..layers + 1 */
    }
}

pp_status pp_split_deepspeed(const pp_model *m, const pp_strategy *s, int embedding, int *stage_layers, pp_error *err)
{
    pp_status st = split_range(m ? m->layers : 0, s ? s->pp : 0, err);
    if (st != PP_OK) return st;
    if (s->buf.ds_split_2022) split_2022(m->layers, s->pp, embedding, stage_layers);
    else split_0145(m, s->pp, embedding, stage_layers);
    for (int k = 0; k < s->pp; k++)
        if (stage_layers[k] < 1) return no_block(k, m->layers, s->pp, err);
    return PP_OK;
}

/* Whether s carries an explicit interleaved layout (chunk_layers). */
int pp__chunks_explicit(const pp_strategy *s)
{
    for (int k = 0; k < PP_MAX_CHUNKS; k++)
        if (s->chunk_layers[k]) return 1;
    return 0;
}

/* Blocks of chunk `chunk` of stage `stage`: the explicit layout's, else
 * the stage's blocks over its v chunks evenly: with one block short of a
 * multiple of v, the short chunk is the first on the first stage, beside
 * the embedding, and the last elsewhere, beside the head; with other
 * remainders the first chunks take one block more. `explicit`: whether s
 * has a layout (pp__chunks_explicit, a 512-entry scan, looked up once). */
static int chunk_blocks(const pp_strategy *s, int explicit, int stage, int chunk)
{
    if (explicit) return s->chunk_layers[chunk * s->pp + stage];
    int v = s->virtual_stages > 1 ? s->virtual_stages : 1, n = s->stage_layers[stage], base = n / v, rem = n % v;
    int short_chunk = stage == 0 ? 0 : v - 1;
    if (!rem) return base;
    return base + (rem == v - 1 ? chunk != short_chunk : chunk < rem);
}

int pp__chunk_blocks(const pp_strategy *s, int stage, int chunk)
{
    return chunk_blocks(s, pp__chunks_explicit(s), stage, chunk);
}

/* Whether m's blocks are all alike for s: one kind, none frozen apart. */
static int blocks_alike(const pp_model *m, const pp_strategy *s)
{
    if (s->ft.freeze_layers > 0) return 0;
    for (int i = 1; m->experts > 0 && i < m->layers && i < PP_MAX_LAYERS; i++)
        if (m->block_kind[i] != m->block_kind[0]) return 0;
    return 1;
}

/* Virtual stages are numbered chunk-major (chunk c of stage i is virtual
 * stage c*pp + i) and take the model's blocks in that order: Megatron's
 * layer offsets (get_transformer_layer_offset) and its layout, torchtitan's
 * "loop" stage ids. A layout that does not add up to the split keeps the
 * contiguous range (the rules refuse one). */
int pp__stage_blocks(const pp_model *m, const pp_strategy *s, int stage, int first, int last, int *out)
{
    int n = 0, p = s->pp, v = s->virtual_stages;
    if (s->schedule == PP_SCHED_INTERLEAVED && p > 1 && v > 1 && p <= PP_MAX_STAGES && !(m && blocks_alike(m, s))) {
        /* an explicit layout holds at most PP_MAX_CHUNKS (rules refuse more:
         * an unresolved strategy keeps the range, review8); the layout is
         * looked for once, not per chunk (a 512-entry scan: bench) */
        int explicit = pp__chunks_explicit(s), off = 0, total = 0;
        if (!explicit || (long)p * v <= PP_MAX_CHUNKS) {
            for (int r = 0; r < p; r++) total += s->stage_layers[r];
            for (int c = 0; c < v; c++)
                for (int r = 0; r < p; r++) {
                    int k = chunk_blocks(s, explicit, r, c);
                    for (int j = 0; r == stage && j < k && n < PP_MAX_LAYERS; j++) out[n++] = off + j;
                    off += k > 0 ? k : 0;
                }
            if (off == total && n == last - first + 1) return n;
            n = 0;
        }
    }
    for (int i = first; i <= last && i >= 0 && n < PP_MAX_LAYERS; i++) out[n++] = i;
    return n;
}

int pp_stage_blocks_text(const pp_strategy *s, int stage, char *buf, size_t cap)
{
    int first = 0, blk[PP_MAX_LAYERS], n = 0;
    if (!buf || cap == 0) return 0;
    buf[0] = 0;
    if (stage < 0 || stage >= s->pp || s->pp > PP_MAX_STAGES) return 0;
    for (int i = 0; i < stage; i++) first += s->stage_layers[i];
    n = pp__stage_blocks(NULL, s, stage, first, first + s->stage_layers[stage] - 1, blk);
    size_t k = 0;
    for (int j = 0; j < n;) {
        int e = j;
        while (e + 1 < n && blk[e + 1] == blk[e] + 1) e++;
        char part[32];
        int w = e > j ? snprintf(part, sizeof part, "%s%d-%d", j ? "," : "", blk[j], blk[e])
                      : snprintf(part, sizeof part, "%s%d", j ? "," : "", blk[j]);
        size_t need = (size_t)w + (e + 1 < n ? 3 : 0); /* and "..." while ranges follow */
        if (k + need >= cap) {
            snprintf(buf + k, cap - k, "%s", cap - k > 3 ? "..." : "");
            return n;
        }
        memcpy(buf + k, part, (size_t)w + 1);
        k += (size_t)w;
        j = e + 1;
    }
    return n;
}

/* Whether the caller gave a split: any count set. */
static int split_given(const pp_strategy *s)
{
    for (int i = 0; i < PP_MAX_STAGES; i++)
        if (s->stage_layers[i] != 0) return 1;
    return 0;
}

/* The framework's own split when none is given. */
static void fill_split(pp_strategy *s, const pp_model *m)
{
    const pp__fw *f = pp__fw_get(s->framework);
    if (split_given(s) || s->pp < 1 || s->pp > PP_MAX_STAGES || s->pp > m->layers) return;
    s->filled |= PP_FILLED_SPLIT;
    if (f && f->split == PP_SPLIT_DEEPSPEED && s->pp > 1 && pp_split_deepspeed(m, s, 0, s->stage_layers, NULL) == PP_OK)
        return;
    pp__split_default(s->pp, m->layers, s->stage_layers);
}

/* Resolves s for its (set) framework: behaviours, accumulation, split, rules. */
/* An interleaved stage whose blocks are not a multiple of v has chunks of
 * two sizes: written out as the layout Megatron runs (pp__chunk_blocks), so
 * memory follows the schedule over them (red team rt14: the last stage of
 * DeepSeek-V3's 7,8,...,8,6 split was 7.8 GiB low under the whole-stage
 * rule). The search's own splits come in units of v and need none. */
static void fill_chunks(pp_strategy *s)
{
    int p = s->pp, v = s->virtual_stages, uneven = 0;
    if (s->schedule != PP_SCHED_INTERLEAVED || v < 2 || p < 2 || (long)p * v > PP_MAX_CHUNKS || pp__chunks_explicit(s))
        return;
    for (int i = 0; i < p; i++) uneven |= s->stage_layers[i] % v != 0;
    if (!uneven) return;
    unsigned short out[PP_MAX_CHUNKS];
    for (int k = 0; k < p * v; k++) {
        int n = pp__chunk_blocks(s, k % p, k / p);
        out[k] = (unsigned short)(n > 0 ? n : 0);
    }
    memcpy(s->chunk_layers, out, sizeof(unsigned short) * (size_t)(p * v));
    s->filled |= PP_FILLED_CHUNKS;
}

static pp_status resolve_for(pp_strategy *s, const pp_model *m, const pp_cluster *c, pp_error *err)
{
    pp__rule_ctx x = {m, c, s, 0};
    pp__fw_fill(s, c);
    pp_status st = pp__rules_eval(&x, PP_DIM_ALL & ~PP_DIM_SPLIT, 0, NULL, err);
    if (st != PP_OK) return st;
    if (!s->grad_accum) s->filled |= PP_FILLED_GRAD_ACCUM;
    s->grad_accum = (int)(s->global_batch / ((long)s->micro_batch * s->dp));
    fill_split(s, m);
    fill_chunks(s);
    return pp__rules_eval(&x, PP_DIM_ALL, PP_DIM_ALL & ~PP_DIM_SPLIT, NULL, err);
}

static pp_status resolve_one(pp_strategy *s, const pp_model *m, const pp_cluster *c, pp_error *err);

/* AUTO: plain PyTorch on one GPU, else DeepSpeed, then the others in the
 * order below: the first that can run the strategy. */
static pp_status resolve_auto(pp_strategy *s, const pp_model *m, const pp_cluster *c, pp_error *err)
{
    static const pp_framework order[] = {PP_FW_PYTORCH, PP_FW_DEEPSPEED, PP_FW_MEGATRON_DEEPSPEED, PP_FW_MEGATRON,
                                         PP_FW_FSDP};
    int first = pp_cluster_gpus(c) == 1 ? 0 : 1;
    pp_error first_err = {""};
    for (int i = first; i < (int)(sizeof order / sizeof *order); i++) {
        pp_strategy t = *s;
        pp_error e = {""};
        t.framework = order[i];
        if (resolve_for(&t, m, c, &e) == PP_OK) {
            *s = t;
            s->filled |= PP_FILLED_FRAMEWORK;
            return PP_OK;
        }
        if (i == first) first_err = e;
    }
    if (err) *err = first_err;
    return PP_ERR_INPUT;
}

pp_status pp_strategy_resolve(pp_strategy *s, const pp_model *m, const pp_cluster *c, pp_error *err)
{
    pp_strategy in = *s;
    pp__fw_unfill(s); /* what an earlier resolve derived is derived anew */
    pp_status st = s->framework == PP_FW_AUTO ? resolve_auto(s, m, c, err) : resolve_one(s, m, c, err);
    if (st != PP_OK) *s = in;
    return st;
}

static pp_status resolve_one(pp_strategy *s, const pp_model *m, const pp_cluster *c, pp_error *err)
{
    if (!pp__fw_get(s->framework))
        return pp__fail_field(err, 0, "framework", "?", "expected one of pytorch, deepspeed, megatron, "
                              "megatron-deepspeed, fsdp");
    return resolve_for(s, m, c, err);
}
