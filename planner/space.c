/*
 * space.c — the strategy space: search options, the value list of every
 * dimension, the validity rules (one predicate each, PP_RULE_*), and the
 * enumeration that attaches a memory and a step-time lower bound to every
 * valid candidate (bounds.c probes the cost model for them).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/costmodel.h"
#include "planner/planner.h"
#include "topologies/topologies.h"

void pp_search_opts_default(pp_search_opts *o)
{
    memset(o, 0, sizeof *o);
    o->top_k = 3;
    o->objective = PP_OBJ_THROUGHPUT;
    o->stage_partition = 1;
    o->stage_recompute = 1;
    o->ilp_time_limit_s = 10;
    pp_strategy_default(&o->base);
}

static const char *const rule_names[PP_RULE_COUNT] = {
    [PP_RULE_GPUS] = "dp*tp*pp*cp must equal the GPU count",
    [PP_RULE_TP_HEADS] = "tp must divide heads and kv_heads",
    [PP_RULE_TP_NODE] = "TP groups must stay inside one NVLink domain (--max-tp-per-node)",
    [PP_RULE_PP_LAYERS] = "pp must not exceed the blocks",
    [PP_RULE_CP_SEQ] = "cp must divide the sequence length",
    [PP_RULE_EP] = "ep must divide the experts and dp*cp (1 for dense models)",
    [PP_RULE_BATCH] = "micro-batch*dp must divide the global batch",
    [PP_RULE_SP] = "sequence parallelism needs tp > 1",
    [PP_RULE_PRECISION] = "the GPU must support the precision",
    [PP_RULE_ZERO_PP] = "ZeRO-2/3 cannot be combined with pp > 1 (DeepSpeed PipelineEngine)",
    [PP_RULE_OFFLOAD] = "offload needs ZeRO (optimizer: >= 1; params, NVMe: 3) and NVMe needs a drive",
    [PP_RULE_SCHEDULE] = "interleaving needs pp >= 2, v >= 2, layers % (pp*v) = 0 and micro-batches % pp = 0",
};
_Static_assert(sizeof rule_names / sizeof *rule_names == PP_RULE_COUNT, "rule names");

const char *pp__rule_name(pp__rule r) { return r < PP_RULE_COUNT ? rule_names[r] : "?"; }

/* ------------------------------------------------------------ rules */

static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

int pp__rule_ok(const pp__space *sp, const pp__cand *k, pp__rule r)
{
    const pp_model *m = sp->m;
    switch (r) {
    case PP_RULE_GPUS: return (long long)k->dp * k->tp * k->pp * k->cp == sp->gpus;
    case PP_RULE_TP_HEADS: return k->tp >= 1 && m->heads % k->tp == 0 && m->kv_heads % k->tp == 0;
    case PP_RULE_TP_NODE: {
        int dom = pp_topo_domain_size(sp->c);
        if (dom > sp->gpus) dom = sp->gpus;
        return k->tp <= sp->max_tp && (k->tp > dom ? k->tp % dom == 0 : dom % k->tp == 0);
    }
    case PP_RULE_PP_LAYERS: return k->pp >= 1 && k->pp <= m->layers && k->pp <= PP_MAX_STAGES;
    case PP_RULE_CP_SEQ: return k->cp >= 1 && sp->seq % k->cp == 0;
    case PP_RULE_EP:
        if (m->experts == 0) return k->ep == 1;
        return k->ep >= 1 && m->experts % k->ep == 0 && ((long long)k->dp * k->cp) % k->ep == 0;
    case PP_RULE_BATCH: return k->mb >= 1 && sp->o.global_batch % ((long long)k->mb * k->dp) == 0;
    case PP_RULE_SP: return k->sp == 0 || k->tp > 1;
    case PP_RULE_PRECISION:
        return k->precision < PP_PREC_COUNT && k->precision != PP_PREC_TF32 && sp->c->gpu.peak_flops[k->precision] > 0;
    case PP_RULE_ZERO_PP: return k->pp == 1 || k->zero <= 1;
    case PP_RULE_OFFLOAD:
        switch (k->offload) {
        case PP_OFFLOAD_NONE: return 1;
        case PP_OFFLOAD_OPTIMIZER: return k->zero >= 1;
        case PP_OFFLOAD_OPT_PARAMS: return k->zero == 3;
        case PP_OFFLOAD_NVME: return k->zero == 3 && sp->c->nvme_bytes > 0;
        default: return 0;
        }
    case PP_RULE_SCHEDULE: {
        if (k->schedule != PP_SCHED_INTERLEAVED) return k->v == 1 && (k->pp > 1 || k->schedule == PP_SCHED_1F1B);
        if (k->pp < 2 || k->v < 2 || m->layers % (k->pp * k->v)) return 0;
        long long ga = sp->o.global_batch / ((long long)k->mb * k->dp);
        return ga % k->pp == 0;
    }
    default: return 0;
    }
}

void pp__cand_strategy(const pp__space *sp, const pp__cand *k, pp_strategy *s)
{
    *s = sp->o.base;
    s->dp = k->dp;
    s->tp = k->tp;
    s->pp = k->pp;
    s->cp = k->cp;
    s->ep = k->ep;
    s->sp = k->sp;
    s->zero = k->zero;
    s->offload = (pp_offload)k->offload;
    s->recompute = (pp_recompute)k->recompute;
    s->recompute_layers = -1;
    s->per_stage_recompute = 0;
    s->precision = (pp_precision)k->precision;
    s->micro_batch = k->mb;
    s->global_batch = sp->o.global_batch;
    s->grad_accum = 0;
    s->seq = sp->seq;
    s->schedule = (pp_schedule)k->schedule;
    s->virtual_stages = k->v;
    memset(s->stage_layers, 0, sizeof s->stage_layers);
    memset(s->stage_recompute, 0, sizeof s->stage_recompute);
}

/* ------------------------------------------------------------ options */

static int divisors(int n, int *out, int cap)
{
    int k = 0;
    for (int d = 1; d <= n && k < cap; d++)
        if (n % d == 0) out[k++] = d;
    return k;
}

static int in_set(const pp_int_set *s, int v)
{
    if (s->n == 0) return 1;
    for (int i = 0; i < s->n; i++)
        if (s->v[i] == v) return 1;
    return 0;
}

/* Pinned values of an int dimension must be in [lo, hi]. */
static pp_status check_set(const pp_int_set *s, const char *opt, int lo, int hi, pp_error *err)
{
    if (s->n < 0 || s->n > PP_SET_MAX) return pp__fail(err, PP_ERR_INPUT, "--%s: expected 1 to %d values", opt, PP_SET_MAX);
    for (int i = 0; i < s->n; i++)
        if (s->v[i] < lo || s->v[i] > hi)
            return pp__fail(err, PP_ERR_INPUT, "--%s %d: expected a value in %d..%d", opt, s->v[i], lo, hi);
    return PP_OK;
}

static pp_status init_tp(pp__space *sp, pp_error *err)
{
    const pp_model *m = sp->m;
    int dom = pp_topo_domain_size(sp->c);
    sp->max_tp = sp->o.max_tp_per_node > 0 ? sp->o.max_tp_per_node : (dom < sp->gpus ? dom : sp->gpus);
    for (int i = 0; i < sp->o.tp.n; i++) {
        int t = sp->o.tp.v[i];
        if (m->heads % t || m->kv_heads % t)
            return pp__fail(err, PP_ERR_INPUT, "--tp %d: must divide the %d heads and %d kv_heads of %s", t, m->heads,
                            m->kv_heads, m->name);
        if (t > sp->max_tp)
            return pp__fail(err, PP_ERR_INPUT, "--tp %d: exceeds the largest TP degree %d (TP stays inside an NVLink domain "
                            "of %d GPUs; raise --max-tp-per-node to allow it)", t, sp->max_tp, dom);
        if (sp->gpus % t) return pp__fail(err, PP_ERR_INPUT, "--tp %d: must divide the %d GPUs", t, sp->gpus);
    }
    int g = gcd(m->heads, m->kv_heads);
    sp->ntp = 0;
    for (int t = 1; t <= g && sp->ntp < PP_SET_MAX; t++)
        if (g % t == 0 && sp->gpus % t == 0 && t <= sp->max_tp && in_set(&sp->o.tp, t)) sp->tp[sp->ntp++] = t;
    return PP_OK;
}

static pp_status init_pp_cp_ep(pp__space *sp, pp_error *err)
{
    const pp_model *m = sp->m;
    int maxpp = m->layers < PP_MAX_STAGES ? m->layers : PP_MAX_STAGES;
    for (int i = 0; i < sp->o.pp.n; i++)
        if (sp->o.pp.v[i] > maxpp || sp->gpus % sp->o.pp.v[i])
            return pp__fail(err, PP_ERR_INPUT, "--pp %d: must divide the %d GPUs and be at most %d (the blocks of %s)",
                            sp->o.pp.v[i], sp->gpus, maxpp, m->name);
    for (int i = 0; i < sp->o.cp.n; i++)
        if (sp->seq % sp->o.cp.v[i] || sp->gpus % sp->o.cp.v[i])
            return pp__fail(err, PP_ERR_INPUT, "--cp %d: must divide --seq %d and the %d GPUs", sp->o.cp.v[i], sp->seq,
                            sp->gpus);
    for (int i = 0; i < sp->o.ep.n; i++) {
        int e = sp->o.ep.v[i];
        if (m->experts == 0 && e != 1)
            return pp__fail(err, PP_ERR_INPUT, "--ep %d: needs a mixture-of-experts model; %s is dense", e, m->name);
        if (m->experts && m->experts % e)
            return pp__fail(err, PP_ERR_INPUT, "--ep %d: must divide the %d experts of %s", e, m->experts, m->name);
    }
    int d[1024], nd = divisors(sp->gpus, d, 1024);
    sp->npp = sp->ncp = 0;
    for (int i = 0; i < nd; i++) {
        if (d[i] <= maxpp && in_set(&sp->o.pp, d[i]) && sp->npp < PP_SPACE_MAX) sp->pp[sp->npp++] = d[i];
        if (sp->seq % d[i] == 0 && in_set(&sp->o.cp, d[i]) && sp->ncp < PP_SPACE_MAX) sp->cp[sp->ncp++] = d[i];
    }
    sp->nep = 0;
    int ne = m->experts ? m->experts : 1;
    for (int e = 1; e <= ne && sp->nep < PP_SET_MAX; e++)
        if (ne % e == 0 && in_set(&sp->o.ep, e)) sp->ep[sp->nep++] = e;
    return PP_OK;
}

static pp_status init_masks(pp__space *sp, pp_error *err)
{
    const pp_gpu *g = &sp->c->gpu;
    unsigned pm = sp->o.precisions;
    int n;
    const char *const *names = pp_enum_names(PP_ENUM_PRECISION, &n);
    for (int p = 0; p < PP_PREC_COUNT; p++)
        if ((pm >> p & 1) && (p == PP_PREC_TF32 || g->peak_flops[p] <= 0))
            return pp__fail(err, PP_ERR_INPUT, "--precision %s: %s", names[p],
                            p == PP_PREC_TF32 ? "expected fp32, fp16, bf16 or fp8 (tf32 is a matmul mode, not a training precision)"
                                              : "this GPU does not support it");
    if (pm >> PP_PREC_COUNT) return pp__fail(err, PP_ERR_INPUT, "--precision: unknown precision");
    if (!pm) {
        pm = g->peak_flops[PP_PREC_BF16] > 0 ? 1u << PP_PREC_BF16 : g->peak_flops[PP_PREC_FP16] > 0 ? 1u << PP_PREC_FP16 : 1u << PP_PREC_FP32;
        if (g->peak_flops[PP_PREC_FP8] > 0) pm |= 1u << PP_PREC_FP8;
    }
    sp->nprec = 0;
    for (int p = 0; p < PP_PREC_COUNT; p++)
        if (pm >> p & 1) sp->prec[sp->nprec++] = p;
    if ((sp->o.offloads >> PP_OFFLOAD_COUNT) || (sp->o.recomputes >> PP_RECOMPUTE_COUNT) || (sp->o.schedules >> PP_SCHED_COUNT))
        return pp__fail(err, PP_ERR_INPUT, "--offload/--recompute/--schedule: unknown value");
    if (sp->o.offloads == 1u << PP_OFFLOAD_NVME && sp->c->nvme_bytes <= 0)
        return pp__fail(err, PP_ERR_INPUT, "--offload nvme: cluster %s has no NVMe", sp->c->name);
    sp->noff = sp->nrc = sp->nsched = 0;
    for (int i = 0; i < PP_OFFLOAD_COUNT; i++)
        if (!sp->o.offloads || (sp->o.offloads >> i & 1)) sp->off[sp->noff++] = i;
    for (int i = 0; i < PP_RECOMPUTE_COUNT; i++)
        if (!sp->o.recomputes || (sp->o.recomputes >> i & 1)) sp->rc[sp->nrc++] = i;
    for (int i = 0; i < PP_SCHED_COUNT; i++)
        if (!sp->o.schedules || (sp->o.schedules >> i & 1)) sp->sched[sp->nsched++] = i;
    return PP_OK;
}

static pp_status check_scalars(const pp_search_opts *o, pp_error *err)
{
    if (o->global_batch < 1) return pp__fail(err, PP_ERR_INPUT, "--global-batch: expected an integer >= 1, got %d", o->global_batch);
    if (o->seq < 0) return pp__fail(err, PP_ERR_INPUT, "--seq: expected an integer >= 1, got %d", o->seq);
    if (o->top_k < 1 || o->top_k > PP_TOP_MAX)
        return pp__fail(err, PP_ERR_INPUT, "--top %d: expected an integer in 1..%d", o->top_k, PP_TOP_MAX);
    if ((unsigned)o->objective >= PP_OBJ_COUNT) return pp__fail(err, PP_ERR_INPUT, "--objective: expected throughput, cost or memory");
    if (o->threads < 0 || o->threads > 4096) return pp__fail(err, PP_ERR_INPUT, "--threads %d: expected 0..4096", o->threads);
    if (o->max_tp_per_node < 0) return pp__fail(err, PP_ERR_INPUT, "--max-tp-per-node: expected an integer >= 1");
    if (!(o->ilp_time_limit_s > 0) || o->ilp_time_limit_s > 3600)
        return pp__fail(err, PP_ERR_INPUT, "--ilp-time-limit: expected seconds in (0, 3600]");
    if (o->price_usd_per_gpu_hour < 0) return pp__fail(err, PP_ERR_INPUT, "--price-per-gpu-hour: expected >= 0");
    pp_status st;
    if ((st = check_set(&o->dp, "dp", 1, 1 << 24, err)) || (st = check_set(&o->tp, "tp", 1, 1 << 16, err)) ||
        (st = check_set(&o->pp, "pp", 1, PP_MAX_STAGES, err)) || (st = check_set(&o->cp, "cp", 1, 1 << 20, err)) ||
        (st = check_set(&o->ep, "ep", 1, 1 << 16, err)) || (st = check_set(&o->sp, "sp", 0, 1, err)) ||
        (st = check_set(&o->zero, "zero", 0, 3, err)) || (st = check_set(&o->micro_batch, "micro-batch", 1, 1 << 20, err)) ||
        (st = check_set(&o->virtual_stages, "virtual-stages", 2, PP_MAX_LAYERS, err)))
        return st;
    return PP_OK;
}

pp_status pp__space_init(pp__space *sp, const pp_model *m, const pp_cluster *c, const pp_search_opts *o, pp_error *err)
{
    pp_status st;
    memset(sp, 0, sizeof *sp);
    sp->m = m;
    sp->c = c;
    sp->o = *o;
    if ((st = check_scalars(o, err))) return st;
    sp->gpus = pp_cluster_gpus(c);
    sp->seq = o->seq ? o->seq : m->seq;
    sp->o.seq = sp->seq;
    if (sp->gpus < 1 || m->layers < 1) return pp__fail(err, PP_ERR_INPUT, "expected a cluster with GPUs and a model with blocks");
    if ((st = init_tp(sp, err)) || (st = init_pp_cp_ep(sp, err)) || (st = init_masks(sp, err))) return st;
    sp->nsp = sp->nzero = 0;
    for (int v = 0; v <= 1; v++)
        if (in_set(&o->sp, v)) sp->sp[sp->nsp++] = v;
    for (int z = 0; z <= 3; z++)
        if (in_set(&o->zero, z)) sp->zero[sp->nzero++] = z;
    sp->usable = c->gpu.mem_bytes - o->base.buf.reserve;
    sp->price = o->price_usd_per_gpu_hour > 0 ? o->price_usd_per_gpu_hour : c->gpu.price_usd_per_hour;
    if (o->objective == PP_OBJ_COST && !(sp->price > 0))
        return pp__fail(err, PP_ERR_INPUT, "--objective cost: the catalog has no price for %s; give --price-per-gpu-hour",
                        c->gpu.name);
    return PP_OK;
}

/* ------------------------------------------------------------ enumeration */

typedef struct enum_ctx {
    const pp__space *sp;
    double mem_limit;
    pp__bounds *b;
    pp__cand *out;
    long long n, cap, enumerated, pruned;
    long long *hits;
    int failed;
} enum_ctx;

static int check(enum_ctx *e, const pp__cand *k, pp__rule r)
{
    if (pp__rule_ok(e->sp, k, r)) return 1;
    e->hits[r]++;
    return 0;
}

static void emit(enum_ctx *e, pp__cand *k)
{
    e->enumerated++;
    k->id = (uint32_t)e->enumerated;
    pp__bounds_cand(e->b, e->sp, k);
    if (k->lb_mem > e->mem_limit) {
        e->pruned++;
        return;
    }
    if (e->n == e->cap) {
        long long cap = e->cap ? 2 * e->cap : 4096;
        pp__cand *p = realloc(e->out, (size_t)cap * sizeof *p);
        if (!p) {
            e->failed = 1;
            return;
        }
        e->out = p;
        e->cap = cap;
    }
    e->out[e->n++] = *k;
}

/* Schedules and virtual stages for one candidate. */
static void enum_schedules(enum_ctx *e, pp__cand *k)
{
    const pp__space *sp = e->sp;
    for (int si = 0; si < sp->nsched; si++) {
        k->schedule = (uint8_t)sp->sched[si];
        if (k->schedule != PP_SCHED_INTERLEAVED) {
            k->v = 1;
            if (check(e, k, PP_RULE_SCHEDULE)) emit(e, k);
            continue;
        }
        const pp_int_set *vs = &sp->o.virtual_stages;
        int nv = vs->n ? vs->n : sp->m->layers / (k->pp > 0 ? k->pp : 1);
        for (int i = 0; i < nv; i++) {
            int v = vs->n ? vs->v[i] : i + 2;
            if (v > 255) break;
            k->v = (uint8_t)v;
            if (check(e, k, PP_RULE_SCHEDULE)) emit(e, k);
        }
    }
}

static void enum_inner(enum_ctx *e, pp__cand *k)
{
    const pp__space *sp = e->sp;
    int per = sp->o.global_batch % k->dp ? 0 : sp->o.global_batch / k->dp;
    for (int mb = 1; mb <= per && !e->failed; mb++) {
        if (per % mb || !in_set(&sp->o.micro_batch, mb)) continue;
        k->mb = mb;
        if (!check(e, k, PP_RULE_BATCH)) continue;
        for (int a = 0; a < sp->nsp; a++) {
            k->sp = (uint8_t)sp->sp[a];
            if (!check(e, k, PP_RULE_SP)) continue;
            for (int r = 0; r < sp->nrc; r++) {
                k->recompute = (uint8_t)sp->rc[r];
                enum_schedules(e, k);
            }
        }
    }
    if (per == 0) e->hits[PP_RULE_BATCH]++;
}

static void enum_states(enum_ctx *e, pp__cand *k)
{
    const pp__space *sp = e->sp;
    for (int z = 0; z < sp->nzero; z++) {
        k->zero = (uint8_t)sp->zero[z];
        if (!check(e, k, PP_RULE_ZERO_PP)) continue;
        for (int o = 0; o < sp->noff; o++) {
            k->offload = (uint8_t)sp->off[o];
            if (!check(e, k, PP_RULE_OFFLOAD)) continue;
            for (int p = 0; p < sp->nprec; p++) {
                k->precision = (uint8_t)sp->prec[p];
                if (check(e, k, PP_RULE_PRECISION)) enum_inner(e, k);
            }
        }
    }
}

static void enum_degrees(enum_ctx *e)
{
    const pp__space *sp = e->sp;
    pp__cand k;
    memset(&k, 0, sizeof k);
    for (int a = 0; a < sp->npp; a++)
        for (int b = 0; b < sp->ntp; b++)
            for (int c = 0; c < sp->ncp; c++) {
                k.pp = sp->pp[a];
                k.tp = sp->tp[b];
                k.cp = sp->cp[c];
                long long rest = (long long)k.pp * k.tp * k.cp;
                k.dp = sp->gpus % rest ? 0 : (int)(sp->gpus / rest);
                if (!check(e, &k, PP_RULE_GPUS) || !in_set(&sp->o.dp, k.dp)) continue;
                if (!check(e, &k, PP_RULE_TP_HEADS) || !check(e, &k, PP_RULE_TP_NODE) ||
                    !check(e, &k, PP_RULE_PP_LAYERS) || !check(e, &k, PP_RULE_CP_SEQ))
                    continue;
                for (int d = 0; d < sp->nep; d++) {
                    k.ep = sp->ep[d];
                    if (check(e, &k, PP_RULE_EP)) enum_states(e, &k);
                }
            }
}

pp_status pp__space_enumerate(const pp__space *sp, pp__bounds *b, double mem_limit, pp__cand **out, long long *n,
                              long long *enumerated, long long *pruned, long long rule_hits[PP_RULE_COUNT],
                              pp_error *err)
{
    enum_ctx e;
    memset(&e, 0, sizeof e);
    e.sp = sp;
    e.mem_limit = mem_limit;
    e.b = b;
    e.hits = rule_hits;
    memset(rule_hits, 0, PP_RULE_COUNT * sizeof *rule_hits);
    enum_degrees(&e);
    if (e.failed || pp__bounds_failed(b)) {
        free(e.out);
        *out = NULL;
        return pp__fail(err, PP_ERR_NOMEM, "out of memory enumerating strategies");
    }
    *out = e.out;
    *n = e.n;
    *enumerated = e.enumerated;
    *pruned = e.pruned;
    return PP_OK;
}
