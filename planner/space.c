/*
 * space.c — the strategy space: search options, the value list of every
 * dimension, the validity rules (one predicate each, PP_RULE_*), and the
 * enumeration that attaches a memory and a step-time lower bound to every
 * valid candidate (bounds.c probes the cost model for them).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/costmodel.h"
#include "costmodel/framework.h"
#include "costmodel/rules.h"
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
    o->ilp_budget_s = 5;
    pp_strategy_default(&o->base);
}

/* ------------------------------------------------------------ rules */

void pp__cand_strategy(const pp__space *sp, const pp__cand *k, pp_strategy *s)
{
    *s = sp->o.base;
    /* a layout and a chunk group belong to one pp and v, not the search's */
    memset(s->chunk_layers, 0, sizeof s->chunk_layers);
    s->vp_group = 0;
    s->framework = (pp_framework)k->fw;
    s->dp = k->dp;
    s->tp = k->tp;
    s->pp = k->pp;
    s->cp = k->cp;
    s->ep = k->ep;
    s->sp = k->sp & PP_CAND_SP;
    s->etp = k->sp & PP_CAND_FOLD ? 1 : 0;
    s->ep_dispatch = (k->sp & PP_CAND_HIER) != 0;
    s->overlap_ep = (k->sp & PP_CAND_EPOV) != 0;
    if (k->sp & PP_CAND_BF16W) s->fp8_param_gather = 0;
    if (k->sp & PP_CAND_TT) s->buf.fsdp_no_sync = 0;
    s->zero = k->zero;
    s->shard = k->shard;
    s->offload = (pp_offload)k->offload;
    s->recompute = PP_CAND_RC(k);
    s->recompute_modules = PP_CAND_RC_MODULES(k);
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
    pp__fw_fill(s, sp->c);
}

int pp__rule_ok(const pp__space *sp, const pp__cand *k, pp_rule r)
{
    pp_strategy s;
    pp__cand_strategy(sp, k, &s);
    pp__rule_ctx x = {sp->m, sp->c, &s, sp->max_tp};
    return pp__rule_eval(&x, r, NULL);
}

/* ------------------------------------------------------------ options */

/* Divisors of n in increasing order, O(sqrt n); at most cap of them. */
int pp__divisors(long long n, int *out, int cap)
{
    int lo = 0, hi = 0, big[2048];
    for (long long d = 1; d * d <= n && lo < cap; d++) {
        if (n % d) continue;
        out[lo++] = (int)d;
        if (d != n / d && hi < 2048) big[hi++] = (int)(n / d);
    }
    for (int i = hi - 1; i >= 0 && lo < cap; i--) out[lo++] = big[i];
    return lo;
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
    if (s->n < 0 || s->n > PP_SET_MAX) return pp__fail_field(err, 0, opt, "", "expected 1 to %d values", PP_SET_MAX);
    for (int i = 0; i < s->n; i++)
        if (s->v[i] < lo || s->v[i] > hi) {
            char v[16];
            snprintf(v, sizeof v, "%d", s->v[i]);
            return pp__fail_field(err, 0, opt, v, "expected a value in %d..%d", lo, hi);
        }
    return PP_OK;
}

/* A pinned value that breaks a rule on its own (whatever the other
 * dimensions) is an input error naming the option: the rules that read
 * only `dims` are evaluated on a probe with that value and neutral others. */
static pp_status pinned_probe(const pp__space *sp, pp_strategy *probe, unsigned dims, const char *opt,
                              const char *val, pp_error *err)
{
    pp__rule_ctx x = {sp->m, sp->c, probe, sp->max_tp};
    pp_status st = PP_OK;
    /* the rules that read only these dimensions; the GPU count last */
    for (int r = 1; r < PP_RULE_COUNT && st == PP_OK; r++) {
        unsigned d = pp__rule_deps((pp_rule)r);
        if (r != PP_RULE_GPUS && !(d & ~(dims | PP_DIM_BASE)) && !pp__rule_eval(&x, (pp_rule)r, err)) st = PP_ERR_INPUT;
    }
    if (st == PP_OK && !pp__rule_eval(&x, PP_RULE_GPUS, err)) {
        if (err) snprintf(err->msg, sizeof err->msg, "x: must divide the %d GPUs [rule %s]", sp->gpus,
                          pp_rule_get(PP_RULE_GPUS)->id), err->detail = 3;
        st = PP_ERR_INPUT;
    }
    if (st != PP_OK && err) {
        char detail[PP_ERR_LEN];
        snprintf(detail, sizeof detail, "%s", err->msg + err->detail);
        int rule = err->rule;
        pp__fail_field(err, rule, opt, val, "%s", detail);
    }
    return st;
}

static void probe_base(const pp__space *sp, pp_strategy *s)
{
    *s = sp->o.base;
    s->framework = PP_FW_AUTO;
    s->seq = sp->seq;
    s->global_batch = sp->o.global_batch;
    s->dp = sp->gpus, s->tp = s->pp = s->cp = s->ep = 1;
}

static pp_status check_pins(const pp__space *sp, pp_error *err)
{
    struct { const pp_int_set *set; const char *opt; int *field_of; } deg[] = {
        {&sp->o.tp, "tp", NULL}, {&sp->o.pp, "pp", NULL}, {&sp->o.cp, "cp", NULL}, {&sp->o.ep, "ep", NULL}};
    for (int d = 0; d < 4; d++)
        for (int i = 0; i < deg[d].set->n; i++) {
            pp_strategy s;
            probe_base(sp, &s);
            int v = deg[d].set->v[i];
            int *f[4] = {&s.tp, &s.pp, &s.cp, &s.ep};
            *f[d] = v;
            if (d < 3) s.dp = sp->gpus % v ? 1 : sp->gpus / v;
            char val[16];
            snprintf(val, sizeof val, "%d", v);
            pp_status st = pinned_probe(sp, &s, PP_DIM_DEG | PP_DIM_EP, deg[d].opt, val, err);
            if (st != PP_OK) return st;
        }
    return PP_OK;
}

static pp_status init_degrees(pp__space *sp, pp_error *err)
{
    const pp_model *m = sp->m;
    int dom = pp_topo_domain_size(sp->c), d[1024], nd = pp__divisors(sp->gpus, d, 1024);
    sp->max_tp = sp->o.max_tp_per_node > 0 ? sp->o.max_tp_per_node : (dom < sp->gpus ? dom : sp->gpus);
    pp_status st = check_pins(sp, err);
    if (st != PP_OK) return st;
    sp->ntp = sp->npp = sp->ncp = sp->nep = 0;
    for (int i = 0; i < nd; i++) {
        if (d[i] <= sp->max_tp && in_set(&sp->o.tp, d[i]) && sp->ntp < PP_SET_MAX) sp->tp[sp->ntp++] = d[i];
        if (in_set(&sp->o.pp, d[i]) && sp->npp < PP_SPACE_MAX) sp->pp[sp->npp++] = d[i];
        if (in_set(&sp->o.cp, d[i]) && sp->ncp < PP_SPACE_MAX) sp->cp[sp->ncp++] = d[i];
    }
    int e[1024], ne = pp__divisors(m->experts ? m->experts : 1, e, 1024);
    for (int i = 0; i < ne && sp->nep < PP_SET_MAX; i++)
        if (in_set(&sp->o.ep, e[i])) sp->ep[sp->nep++] = e[i];
    return PP_OK;
}

static pp_status init_masks(pp__space *sp, pp_error *err)
{
    const pp_gpu *g = &sp->c->gpu;
    unsigned pm = sp->o.precisions;
    for (int p = 0; p < PP_PREC_COUNT; p++)
        if (pm >> p & 1) {
            pp_strategy s;
            probe_base(sp, &s);
            s.precision = (pp_precision)p;
            pp_status st = pinned_probe(sp, &s, PP_DIM_PREC, "precision", pp_precision_name((pp_precision)p), err);
            if (st != PP_OK) return st;
        }
    if (pm >> PP_PREC_COUNT) return pp__fail_field(err, 0, "precision", "?", "unknown precision");
    if (!pm) {
        pm = g->peak_flops[PP_PREC_BF16] > 0 ? 1u << PP_PREC_BF16 : g->peak_flops[PP_PREC_FP16] > 0 ? 1u << PP_PREC_FP16 : 1u << PP_PREC_FP32;
        if (g->peak_flops[PP_PREC_FP8] > 0) pm |= 1u << PP_PREC_FP8;
    }
    sp->nprec = 0;
    for (int p = 0; p < PP_PREC_COUNT; p++)
        if (pm >> p & 1) sp->prec[sp->nprec++] = p;
    if ((sp->o.offloads >> PP_OFFLOAD_COUNT) || (sp->o.recomputes >> PP_RECOMPUTE_COUNT) ||
        (sp->o.schedules >> PP_SCHED_COUNT) || (sp->o.frameworks >> PP_FW_COUNT))
        return pp__fail_field(err, 0, "offload", "?", "unknown offload, recompute, schedule or framework value");
    if (sp->o.offloads == 1u << PP_OFFLOAD_NVME && sp->c->nvme_bytes <= 0)
        return pp__fail_field(err, PP_RULE_NVME, "offload", "nvme", "cluster %s has no NVMe", sp->c->name);
    sp->noff = sp->nrc = sp->nsched = sp->nfw = 0;
    sp->nrc_groups = pp__rc_module_groups(sp->m, sp->rc_groups);
    for (int i = 0; i < PP_OFFLOAD_COUNT; i++)
        if (!sp->o.offloads || (sp->o.offloads >> i & 1)) sp->off[sp->noff++] = i;
    for (int i = 0; i < PP_RECOMPUTE_COUNT; i++)
        if (!sp->o.recomputes || (sp->o.recomputes >> i & 1)) sp->rc[sp->nrc++] = i;
    for (int i = 0; i < PP_SCHED_COUNT; i++)
        if (!sp->o.schedules || (sp->o.schedules >> i & 1)) sp->sched[sp->nsched++] = i;
    for (int i = 0; i < PP_FW_COUNT; i++)
        if (!sp->o.frameworks || (sp->o.frameworks >> i & 1)) sp->fw[sp->nfw++] = i;
    return PP_OK;
}

static pp_status check_scalars(const pp_search_opts *o, pp_error *err)
{
    char v[32];
#define BAD(f, val, ...) (snprintf(v, sizeof v, "%g", (double)(val)), pp__fail_field(err, 0, f, v, __VA_ARGS__))
    if (o->global_batch < 1) return BAD("global_batch", o->global_batch, "expected an integer >= 1");
    if (o->seq < 0) return BAD("seq", o->seq, "expected an integer >= 1");
    if (o->top_k < 1 || o->top_k > PP_TOP_MAX) return BAD("top_k", o->top_k, "expected an integer in 1..%d", PP_TOP_MAX);
    if ((unsigned)o->objective >= PP_OBJ_COUNT) return BAD("objective", o->objective, "expected throughput, cost or memory");
    if (o->threads < 0 || o->threads > 4096) return BAD("threads", o->threads, "expected 0..4096");
    if (o->max_tp_per_node < 0) return BAD("max_tp_per_node", o->max_tp_per_node, "expected an integer >= 1");
    if (!(o->ilp_time_limit_s > 0) || o->ilp_time_limit_s > 3600)
        return BAD("ilp_time_limit_s", o->ilp_time_limit_s, "expected seconds in (0, 3600]");
    if (!(o->ilp_budget_s >= 0) || o->ilp_budget_s > 86400)
        return BAD("ilp_budget_s", o->ilp_budget_s, "expected seconds in [0, 86400]");
    if (o->price_usd_per_gpu_hour < 0) return BAD("price_usd_per_gpu_hour", o->price_usd_per_gpu_hour, "expected >= 0");
#undef BAD
    pp_status st;
    if ((st = check_set(&o->dp, "dp", 1, 1 << 24, err)) || (st = check_set(&o->tp, "tp", 1, 1 << 16, err)) ||
        (st = check_set(&o->pp, "pp", 1, PP_MAX_STAGES, err)) || (st = check_set(&o->cp, "cp", 1, 1 << 20, err)) ||
        (st = check_set(&o->ep, "ep", 1, 1 << 16, err)) || (st = check_set(&o->sp, "sp", 0, 1, err)) ||
        (st = check_set(&o->zero, "zero", 0, 3, err)) || (st = check_set(&o->micro_batch, "micro_batch", 1, 1 << 20, err)) ||
        (st = check_set(&o->virtual_stages, "virtual_stages", 2, PP_MAX_LAYERS, err)))
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
    if ((st = init_degrees(sp, err)) || (st = init_masks(sp, err))) return st;
    sp->nsp = sp->nzero = 0;
    for (int v = 0; v <= 1; v++)
        if (in_set(&o->sp, v)) sp->sp[sp->nsp++] = v;
    for (int z = 0; z <= 3; z++)
        if (in_set(&o->zero, z)) sp->zero[sp->nzero++] = z;
    sp->usable = c->gpu.mem_bytes - o->base.buf.reserve;
    sp->price = o->price_usd_per_gpu_hour > 0 ? o->price_usd_per_gpu_hour : c->gpu.price_usd_per_hour;
    if (o->objective == PP_OBJ_COST && !(sp->price > 0))
        return pp__fail_field(err, 0, "objective", "cost", "the catalog has no price for %s; give price_usd_per_gpu_hour",
                              c->gpu.name);
    return PP_OK;
}

/* ------------------------------------------------------------ enumeration
 * Dimensions are chosen in the order of the levels below; at each level the
 * rules whose dimensions have just all been chosen are evaluated (the one
 * table, costmodel/rules.c), on one working strategy. */

enum { L_FW, L_DEG, L_EP, L_ZERO, L_OFFLOAD, L_PREC, L_SP, L_RC, L_SCHED, L_MB, L_BEHAV, L_COUNT };
static const unsigned level_dims[L_COUNT] = {
    PP_DIM_FW | PP_DIM_BASE | PP_DIM_LAUNCH, PP_DIM_DEG, PP_DIM_EP, PP_DIM_ZERO, PP_DIM_OFFLOAD, PP_DIM_PREC, PP_DIM_SP,
    PP_DIM_RC, PP_DIM_SCHED, PP_DIM_MB, PP_DIM_BEHAV};

typedef struct enum_ctx {
    const pp__space *sp;
    double mem_limit;
    pp__bounds *b;
    pp__cand *out;
    long long n, cap, enumerated, pruned;
    long long *hits;
    char (*why)[PP_ERR_LEN];             /* each rule's first refusal, worded (may be NULL) */
    int failed;
    pp_strategy s;                       /* the working strategy */
    pp__rule_ctx x;
    unsigned char rules[L_COUNT][PP_RULE_COUNT];
    int nrules[L_COUNT];
    const int *mbs;                      /* micro-batch candidates, increasing */
    int nmb;
    long long per;                       /* samples per data-parallel rank per step */
    int over;                            /* the last emit was over memory by bound */
    long long mb_weight;                 /* micro-batch candidates of the current shapes */
} enum_ctx;

static void level_rules(enum_ctx *e)
{
    unsigned had = 0;
    for (int l = 0; l < L_COUNT; l++) {
        unsigned have = had | level_dims[l];
        e->nrules[l] = 0;
        for (int r = 1; r < PP_RULE_COUNT; r++) {
            unsigned d = pp__rule_deps((pp_rule)r);
            if (!(d & ~have) && (d & ~had) && !(d & PP_DIM_SPLIT)) e->rules[l][e->nrules[l]++] = (unsigned char)r;
        }
        had = have;
    }
}

/* 1 when every rule of level l holds for the working strategy. */
static int level_ok(enum_ctx *e, int l)
{
    for (int i = 0; i < e->nrules[l]; i++)
        if (!pp__rule_eval(&e->x, (pp_rule)e->rules[l][i], NULL)) {
            pp_rule r = (pp_rule)e->rules[l][i];
            if (e->why && !e->hits[r]) { /* worded once per rule, for "no valid strategy" */
                pp_error why = {""};
                pp__rule_eval(&e->x, r, &why);
                snprintf(e->why[r], PP_ERR_LEN, "%s", why.msg);
            }
            /* a shape refused before its micro-batches stands for each of
             * them ("no valid strategy" names the rule refusing the most) */
            e->hits[r] += l > L_PREC && l < L_MB ? e->mb_weight : 1;
            return 0;
        }
    return 1;
}

static void emit(enum_ctx *e)
{
    const pp_strategy *s = &e->s;
    pp__cand k;
    memset(&k, 0, sizeof k);
    k.fw = (uint8_t)s->framework;
    k.dp = s->dp, k.tp = s->tp, k.pp = s->pp, k.cp = s->cp, k.ep = s->ep, k.mb = s->micro_batch, k.shard = s->shard;
    k.sp = (uint8_t)((s->sp ? PP_CAND_SP : 0) | (s->etp == 1 && s->tp > 1 ? PP_CAND_FOLD : 0) |
                     (s->ep_dispatch ? PP_CAND_HIER : 0) | (s->overlap_ep ? PP_CAND_EPOV : 0) |
                     (s->precision == PP_PREC_FP8 && s->fp8_param_gather == 0 ? PP_CAND_BF16W : 0) |
                     (s->framework == PP_FW_FSDP && s->buf.fsdp_no_sync == 0 ? PP_CAND_TT : 0));
    k.zero = (uint8_t)s->zero, k.offload = (uint8_t)s->offload;
    k.recompute = (uint8_t)((unsigned)s->recompute | s->recompute_modules << 2), k.precision = (uint8_t)s->precision;
    k.schedule = (uint8_t)s->schedule, k.v = (uint8_t)s->virtual_stages;
    e->enumerated++;
    k.id = (uint32_t)e->enumerated;
    pp__bounds_cand(e->b, e->sp, &k);
    e->over = k.lb_mem > e->mem_limit;
    if (e->over) {
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
    e->out[e->n++] = k;
}

/* MoE options the search turns on by itself: the framework runs them
 * (Megatron-Core) and the user left them to it. */
static int moe_options(const enum_ctx *e)
{
    const pp__fw *f = pp__fw_get(e->s.framework);
    return f && f->etp && e->sp->m->experts && !e->sp->o.base.ep_dispatch && !e->sp->o.base.overlap_ep;
}

/* Whether the EP group leaves an NVLink domain (then hierarchical dispatch
 * sends less; inside one it is the all-to-all, so not worth a flag). */
static int ep_crosses_domains(const enum_ctx *e)
{
    pp_group_link gl;
    return pp_topo_group_link(e->sp->c, e->s.ep, pp__ep_stride(&e->s), &gl) == 0 && gl.tier == PP_TOPO_INTER;
}

/* torchtitan runs Llama 3 with fused norms and a reduce-scatter each
 * micro-batch where HF Accelerate runs HF's eager code and no_sync: an FSDP
 * plan Accelerate would launch is tried under torchtitan too, its gradient
 * dtype refilled from the base's g (torchtitan reduces in fp32). */
static void emit_torchtitan(enum_ctx *e, pp_grad_accum g)
{
    pp_strategy *s = &e->s;
    if (s->framework != PP_FW_FSDP || e->sp->o.base.buf.fsdp_no_sync >= 0 || !pp__fsdp_accelerate(s) ||
        !pp__torchtitan_flavor(e->sp->m))
        return;
    int over = e->over;
    s->buf.fsdp_no_sync = 0;
    s->grad_accum_dtype = g;
    pp__fw_fill(s, e->x.c);
    if (level_ok(e, L_BEHAV)) {
        emit(e);
        e->over = over && e->over;
    }
    s->buf.fsdp_no_sync = -1;
}

/* The behaviours the framework decides, filled on the working strategy for
 * the last rules and put back as the base had them. */
static void enum_behaviours(enum_ctx *e)
{
    pp_strategy *s = &e->s;
    pp_grad_accum g = s->grad_accum_dtype;
    pp_cp_comm cc = s->cp_comm;
    pp_loss lo = s->loss;
    int odp = s->overlap_dp, otp = s->overlap_tp, fo = s->buf.free_pipeline_outputs, xs = s->buf.expandable_segments;
    double rb = s->buf.reduce_bucket, ab = s->buf.allgather_bucket;
    int f8 = s->fp8_param_gather;
    pp__fw_fill(s, e->x.c);
    e->over = 0;
    /* hierarchical dispatch never costs time or memory, nor does the EP
     * overlap without pipeline stages (with them Megatron warms up one more
     * micro-batch): used wherever they are free (laws in test_moe_comm.c) */
    int hier = s->ep_dispatch, epov = s->overlap_ep;
    if (s->ep > 1 && moe_options(e)) {
        s->ep_dispatch = ep_crosses_domains(e);
        if (s->ep_dispatch && !pp__rule_eval(&e->x, PP_RULE_FW_EP_DISPATCH, NULL)) s->ep_dispatch = 0; /* not NVIDIA */
        s->overlap_ep = s->pp == 1;
        if (!pp__rule_eval(&e->x, PP_RULE_FW_EP_OVERLAP, NULL))
            s->overlap_ep = 0;
    }
    if (level_ok(e, L_BEHAV)) {
        emit(e);
        /* FP8 primary weights save memory and gather bytes, but Megatron
         * then reduces the 16-bit embedding and head with the first layers,
         * last (param_and_grad_buffer.py partition_buckets): the bf16
         * weights' plan is tried too */
        if (f8 < 0 && s->fp8_param_gather == 1) { /* no rule but fw-fp8-params reads it: still valid */
            int over = e->over; /* over memory only if both are */
            s->fp8_param_gather = 0;
            emit(e);
            e->over = over && e->over;
        }
    }
    emit_torchtitan(e, g);
    s->ep_dispatch = hier, s->overlap_ep = epov;
    s->grad_accum_dtype = g, s->cp_comm = cc, s->loss = lo, s->overlap_dp = odp, s->overlap_tp = otp;
    s->buf.free_pipeline_outputs = fo, s->buf.reduce_bucket = rb, s->buf.allgather_bucket = ab;
    s->buf.expandable_segments = xs;
    s->fp8_param_gather = f8;
}

/* Micro-batches of one shape (everything else chosen), increasing. The
 * memory bound (bounds.c) is context + f(micro-batches in flight, states,
 * activations of one micro-batch), rising in the activations, which never
 * fall as the micro-batch grows (law "activations grow with the micro-
 * batch", tests/costmodel/test_laws.c). Once the micro-batch count m is at
 * least 2 and saturates the schedule (pp__inflight_saturates: the in-flight
 * counts no longer change), nothing else in the bound depends on the
 * micro-batch. So a shape over the limit stays over it for every larger
 * micro-batch whose m is still saturated: those are skipped, unexamined
 * (issue 14 item 10: a global batch with 720 divisors examined each shape
 * 720 times). */
static void enum_mbs(enum_ctx *e)
{
    const pp__space *sp = e->sp;
    pp_strategy *s = &e->s;
    long long sat = pp__inflight_saturates(s);
    if (sat < 2) sat = 2;
    for (int i = 0; i < e->nmb && !e->failed; i++) {
        if (!in_set(&sp->o.micro_batch, e->mbs[i])) continue;
        s->micro_batch = e->mbs[i];
        if (!level_ok(e, L_MB)) continue;
        enum_behaviours(e);
        if (e->over && e->per / e->mbs[i] >= sat)
            while (i + 1 < e->nmb && e->per / e->mbs[i + 1] >= sat) i++;
    }
}

/* Schedules and virtual stages; one pipeline has 1F1B only. */
static void enum_schedules(enum_ctx *e)
{
    const pp__space *sp = e->sp;
    pp_strategy *s = &e->s;
    for (int si = 0; si < sp->nsched && !e->failed; si++) {
        s->schedule = (pp_schedule)sp->sched[si];
        if (s->pp == 1 && s->schedule != PP_SCHED_1F1B) continue;
        if (s->schedule != PP_SCHED_INTERLEAVED) {
            s->virtual_stages = 1;
            if (level_ok(e, L_SCHED)) enum_mbs(e);
            continue;
        }
        /* unpinned: the v with pp x v dividing the blocks (rule
         * interleave-layers; the search's candidates have no explicit split) */
        const pp_int_set *vs = &sp->o.virtual_stages;
        int dv[256], nv = vs->n;
        if (!nv && s->pp > 0 && sp->m->layers % s->pp == 0) nv = pp__divisors(sp->m->layers / s->pp, dv, 256);
        for (int i = 0; i < nv; i++) {
            int v = vs->n ? vs->v[i] : dv[i];
            if (v < 2 && !vs->n) continue;
            if (v > 255) break;
            s->virtual_stages = v;
            if (level_ok(e, L_SCHED)) enum_mbs(e);
        }
    }
}

/* The modules a selective recompute tries where the framework has
 * Megatron's --recompute-modules: its default (0, core_attn), each group of
 * modules the model has (mlp with dense blocks, mla_up_proj with MLA,
 * moe_act and layernorm with experts) and, with more than one, all of them
 * (DeepSeek-V3's recipes run such sets: docs/memory.md); core_attn joins
 * them only with materialised attention, where it saves the scores. A
 * pinned set (base.recompute_modules) is the only one, only where the
 * framework has it, and the candidates without selective recompute go. */
static int rc_module_sets(const pp__space *sp, const pp_strategy *s, unsigned *out)
{
    if (sp->o.base.recompute_modules) return out[0] = sp->o.base.recompute_modules, 1; /* the rule refuses it elsewhere */
    int n = 0;
    out[n++] = 0;
    if (!pp_framework_supports(s->framework, "recompute_modules", 1)) return n;
    unsigned core = s->attention == PP_ATTN_FLASH ? 0 : PP_RC_CORE_ATTN, all = 0;
    for (int i = 0; i < sp->nrc_groups; i++) out[n++] = sp->rc_groups[i] | core, all |= sp->rc_groups[i];
    if (sp->nrc_groups > 1) out[n++] = all | core;
    return n;
}

static void enum_inner(enum_ctx *e)
{
    const pp__space *sp = e->sp;
    pp_strategy *s = &e->s;
    long long per = sp->o.global_batch % s->dp ? 0 : sp->o.global_batch / s->dp;
    int mbs[2048], nmb = per ? pp__divisors(per, mbs, 2048) : 0;
    if (!nmb) {
        s->micro_batch = 1;
        level_ok(e, L_MB); /* counts the batch rule's rejection */
        return;
    }
    e->mbs = mbs, e->nmb = nmb, e->per = per;
    e->mb_weight = 0;
    for (int i = 0; i < nmb; i++) e->mb_weight += in_set(&sp->o.micro_batch, mbs[i]);
    for (int a = 0; a < sp->nsp && !e->failed; a++) {
        s->sp = sp->sp[a];
        if (!level_ok(e, L_SP)) continue;
        for (int r = 0; r < sp->nrc; r++) {
            unsigned sets[8];
            s->recompute = (pp_recompute)sp->rc[r];
            /* pinned modules: selective recompute of them, nothing else (the
             * mask stays on the other candidates, which rule
             * fw-recompute-modules refuses, and so counts) */
            int nsets = s->recompute == PP_RECOMPUTE_SELECTIVE ? rc_module_sets(sp, s, sets)
                                                                : (sets[0] = sp->o.base.recompute_modules, 1);
            for (int j = 0; j < nsets && !e->failed; j++) {
                s->recompute_modules = sets[j];
                if (level_ok(e, L_RC)) enum_schedules(e);
            }
            s->recompute_modules = 0;
        }
    }
    e->mbs = NULL, e->nmb = 0;
}

/* Hybrid shard groups: all dp*cp ranks, and (where the framework has it)
 * the ranks of one node's data- and context-parallel groups. */
static int shard_options(const enum_ctx *e, int *out)
{
    const pp_strategy *s = &e->s;
    int n = 0, nd = s->dp * s->cp;
    out[n++] = 0;
    if (!pp_framework_supports(s->framework, "zero", s->zero) || s->zero < 2) return n;
    const pp__fw *f = pp__fw_get(s->framework);
    int local = e->sp->c->gpus_per_node / s->tp;
    if (f && f->shard && local > 1 && local < nd && nd % local == 0 && local % s->cp == 0) out[n++] = local;
    return n;
}

static void enum_states(enum_ctx *e)
{
    const pp__space *sp = e->sp;
    pp_strategy *s = &e->s;
    const pp__fw *f = pp__fw_get(s->framework);
    for (int z = 0; z < sp->nzero && !e->failed; z++) {
        s->zero = sp->zero[z];
        /* Megatron's distributed optimizer (or Megatron-FSDP) over one data-
         * parallel rank is ZeRO-0 by another name: the same plan twice in the
         * ranking, unless folded experts shard over an expert-dp group > 1 */
        if ((s->zero == 1 || s->zero == 3) && (long)s->dp * s->cp == 1 && pp__edp(s) <= 1 && f &&
            f->buckets == PP_BUCKETS_VIEWS)
            continue;
        int sh[2], nsh = shard_options(e, sh);
        for (int h = 0; h < nsh; h++) {
            s->shard = sh[h];
            if (!level_ok(e, L_ZERO)) continue;
            for (int o = 0; o < sp->noff; o++) {
                s->offload = (pp_offload)sp->off[o];
                if (!level_ok(e, L_OFFLOAD)) continue;
                for (int p = 0; p < sp->nprec; p++) {
                    s->precision = (pp_precision)sp->prec[p];
                    if (level_ok(e, L_PREC)) enum_inner(e);
                }
            }
        }
    }
}

static void enum_degrees(enum_ctx *e)
{
    const pp__space *sp = e->sp;
    pp_strategy *s = &e->s;
    for (int a = 0; a < sp->npp; a++)
        for (int b = 0; b < sp->ntp; b++)
            for (int c = 0; c < sp->ncp; c++) {
                s->pp = sp->pp[a], s->tp = sp->tp[b], s->cp = sp->cp[c], s->ep = 1;
                long long rest = (long long)s->pp * s->tp * s->cp;
                if (rest > sp->gpus || sp->gpus % rest) continue; /* no whole dp: not a candidate */
                s->dp = (int)(sp->gpus / rest);
                if (!in_set(&sp->o.dp, s->dp) || !level_ok(e, L_DEG)) continue;
                for (int d = 0; d < sp->nep; d++)
                    for (int fold = 0; fold < 2; fold++) {
                        /* MoE parallel folding: experts whole (etp 1) under tp > 1 */
                        s->ep = sp->ep[d];
                        if (fold && !(s->tp > 1 && s->ep > 1 && sp->m->experts)) continue;
                        s->etp = fold ? 1 : 0;
                        if (level_ok(e, L_EP)) enum_states(e);
                    }
                s->etp = 0;
            }
}

pp_status pp__space_enumerate(const pp__space *sp, pp__bounds *b, double mem_limit, pp__cand **out, long long *n,
                              long long *enumerated, long long *pruned, long long rule_hits[PP_RULE_COUNT],
                              char (*rule_why)[PP_ERR_LEN], pp_error *err)
{
    enum_ctx *e = calloc(1, sizeof *e);
    if (!e) return pp__fail(err, PP_ERR_NOMEM, "out of memory enumerating strategies");
    e->sp = sp;
    e->mem_limit = mem_limit;
    e->b = b;
    e->hits = rule_hits;
    memset(rule_hits, 0, PP_RULE_COUNT * sizeof *rule_hits);
    e->why = rule_why;
    if (rule_why) memset(rule_why, 0, PP_RULE_COUNT * sizeof *rule_why);
    level_rules(e);
    e->s = sp->o.base;
    e->s.seq = sp->seq;
    e->s.global_batch = sp->o.global_batch;
    e->s.grad_accum = 0;
    e->s.recompute_layers = -1;
    e->s.per_stage_recompute = 0;
    memset(e->s.stage_layers, 0, sizeof e->s.stage_layers);
    e->x = (pp__rule_ctx){sp->m, sp->c, &e->s, sp->max_tp};
    for (int f = 0; f < sp->nfw && !e->failed; f++) {
        e->s.framework = (pp_framework)sp->fw[f];
        if (level_ok(e, L_FW)) enum_degrees(e);
    }
    pp_status st = PP_OK;
    if (e->failed || pp__bounds_failed(b)) {
        free(e->out);
        *out = NULL;
        st = pp__fail(err, PP_ERR_NOMEM, "out of memory enumerating strategies");
    } else {
        *out = e->out;
        *n = e->n;
        *enumerated = e->enumerated;
        *pruned = e->pruned;
    }
    free(e);
    return st;
}
