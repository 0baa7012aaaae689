/*
 * bounds.c — lower bounds on a candidate's peak memory and step time, from
 * probes of the public cost model cached by the few fields they depend on:
 *   core   (tp, cp, ep, sp, precision, micro-batch, recompute): micro-batch
 *          time T and activations A of the whole model on one stage;
 *   states (tp, cp, dp, ep, ZeRO, offload, precision, FP8 primary weights): model states S and
 *          the CUDA context + NCCL buffers of the whole model on one stage;
 *   flight (pp, schedule, v, micro-batches): micro-batches held per stage;
 * and the optimizer step and DP/ZeRO traffic of the whole model on one
 * stage, over p.
 * They rely on one property of the cost model, tested in
 * tests/planner/test_search.c (bounds_are_lower_bounds): splitting blocks over stages never makes the
 * sum of the stages' states, activations or micro-batch times smaller than
 * the whole model's on one stage.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/costmodel.h"
#include "planner/planner.h"

typedef struct key {
    uint64_t a, b;
} key;

/* A probe's cached values. k.a is never 0 for a real key (every key holds a
 * degree >= 1 in its low bits): 0 marks an empty slot, and v[0] = UNPROBED
 * one found but not yet probed (a probe's own result is never -inf; a NaN
 * result stays cached).
 *   core:   T, A, R (recompute time of every block), a0, a1 (the blocks'
 *           activations with none and all recomputed);
 *   states: S, context, optimizer s, DP traffic s, gradients alive only
 *           from the second micro-batch on, and S and those gradients of
 *           the embedding and head alone;
 *   flight: the offset of the p values in the pool. */
typedef struct slot {
    key k;
    double v[8];
} slot;

#define UNPROBED (-HUGE_VAL)

typedef struct table {
    slot *s;
    size_t cap, n;
} table;

struct pp__bounds {
    table core, states, flight;
    int known;    /* the two flags below are set (first pp__bounds_cand) */
    int same_kind; /* every block of one kind */
    int uniform;  /* and trained the same, none offloaded: the recompute bound applies */
    double *pool;
    size_t npool, cappool;
    int probes, failed;
    pp_memory mem;
    pp_time time;
    pp_throughput thr;
};

pp__bounds *pp__bounds_new(void) { return calloc(1, sizeof(pp__bounds)); }

void pp__bounds_free(pp__bounds *b)
{
    if (!b) return;
    free(b->core.s);
    free(b->states.s);
    free(b->flight.s);
    free(b->pool);
    free(b);
}

int pp__bounds_probes(const pp__bounds *b) { return b->probes; }
int pp__bounds_failed(const pp__bounds *b) { return b->failed; }

uint64_t pp__hash(const void *p, size_t n, uint64_t h)
{
    const unsigned char *c = p;
    if (!h) h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ULL;
    return h;
}

/* splitmix64's finaliser over both words: the probe tables' hash */
static size_t key_hash(key k)
{
    uint64_t x = k.a ^ (k.b * 0x9e3779b97f4a7c15ULL);
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return (size_t)x;
}

/* Finds k; on a miss inserts it and returns the slot with v[0] UNPROBED. */
static slot *lookup(pp__bounds *b, table *t, key k)
{
    if (t->n * 2 >= t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        slot *s = calloc(cap, sizeof *s);
        if (!s) {
            b->failed = 1;
            return NULL;
        }
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->s[i].k.a) continue;
            size_t h = key_hash(t->s[i].k) & (cap - 1);
            while (s[h].k.a) h = (h + 1) & (cap - 1);
            s[h] = t->s[i];
        }
        free(t->s);
        t->s = s;
        t->cap = cap;
    }
    size_t h = key_hash(k) & (t->cap - 1);
    while (t->s[h].k.a) {
        if (t->s[h].k.a == k.a && t->s[h].k.b == k.b) return &t->s[h];
        h = (h + 1) & (t->cap - 1);
    }
    t->s[h].k = k;
    t->s[h].v[0] = UNPROBED;
    return &t->s[h];
}

/* A one-stage strategy of the candidate, valid for pp_time_estimate. */
static void one_stage(const pp__space *sp, const pp__cand *k, pp_strategy *s)
{
    pp__cand c = *k;
    c.pp = 1;
    c.schedule = PP_SCHED_1F1B;
    c.v = 1;
    pp__cand_strategy(sp, &c, s);
    s->grad_accum = 1;
    /* the probe's dp is all the ranks tp x cp leaves (core_probe): with a
     * large micro-batch the product can pass INT_MAX; the batch only scales
     * the throughput figures, which the bounds do not read */
    long long gb = (long long)s->micro_batch * s->dp;
    s->global_batch = gb > INT_MAX ? INT_MAX : (int)gb;
    s->stage_layers[0] = sp->m->layers;
}

static slot *core_probe(pp__bounds *b, const pp__space *sp, const pp__cand *k)
{
    key kk = {(uint64_t)k->tp | (uint64_t)k->cp << 16 | (uint64_t)k->ep << 40 | (uint64_t)(k->sp & 15) << 56 |
                  (uint64_t)k->precision << 60,
              (uint64_t)k->mb | (uint64_t)k->recompute << 32 | (uint64_t)k->fw << 40};
    slot *s = lookup(b, &b->core, kk);
    if (!s || s->v[0] != UNPROBED) return s;
    pp__cand c = *k;
    c.dp = sp->gpus / (k->tp * k->cp);
    c.zero = 0;
    c.offload = PP_OFFLOAD_NONE;
    pp_strategy st;
    one_stage(sp, &c, &st);
    /* the core serves every pp and launcher: FSDP's one stage would be HF
     * Accelerate's, whose eager modeling code and FSDP2 copy-out cost more
     * than torchtitan's; probe without them, and with Accelerate's early
     * stop of a full recompute, which torchtitan has not: the least of both */
    if (st.framework == PP_FW_FSDP) st.buf.fsdp_no_sync = 0, st.buf.fsdp1 = 1, st.buf.checkpoint_early_stop = 1;
    pp_memory_estimate(sp->m, sp->c, &st, &b->mem);
    s->v[1] = b->mem.stages[0].act_per_microbatch;

    double T;
    if (st.recompute == PP_RECOMPUTE_FULL) st.recompute_layers = 0; /* the ILP may recompute nothing */
    pp_time_estimate(sp->m, sp->c, &st, &b->time, &b->thr);
    /* without the per-micro-batch gathers of sharded parameters (FSDP at any
     * ZeRO stage): the DP term of the bound counts those */
    int gathers = st.framework == PP_FW_FSDP; /* the probe runs ZeRO 0: only FSDP gathers */
    T = b->time.stage_microbatch_s[0] - (gathers ? b->time.dp_comm_exposed_s : 0);
    s->v[2] = s->v[3] = s->v[4] = 0;
    if (st.recompute == PP_RECOMPUTE_FULL && b->uniform) {
        double none = b->time.stage_microbatch_s[0];
        st.recompute_layers = -1; /* every block */
        pp_time_estimate(sp->m, sp->c, &st, &b->time, &b->thr);
        int kind = sp->m->block_kind[0], L = sp->m->layers;
        s->v[2] = fmax(0, b->time.stage_microbatch_s[0] - none);
        s->v[3] = L * pp__block_act_bytes(sp->m, &st, kind, PP_RECOMPUTE_NONE);
        s->v[4] = L * pp__block_act_bytes(sp->m, &st, kind, PP_RECOMPUTE_FULL);
        b->probes++;
    }
    s->v[0] = T; /* last: the slot is filled */
    b->core.n++;
    b->probes += 2;
    return s;
}

static slot *states_probe(pp__bounds *b, const pp__space *sp, const pp__cand *k)
{
    key kk = {(uint64_t)k->tp | (uint64_t)k->ep << 16 | (uint64_t)k->zero << 32 | (uint64_t)k->offload << 34 |
                  (uint64_t)k->precision << 37 | (uint64_t)k->fw << 40 | (uint64_t)(k->shard & 0xfffff) << 44,
              (uint64_t)k->dp | (uint64_t)k->cp << 32 | (uint64_t)((k->sp & PP_CAND_TT) != 0) << 61 |
                  (uint64_t)((k->sp & PP_CAND_BF16W) != 0) << 62 |
                  (uint64_t)((k->sp & PP_CAND_FOLD) != 0) << 63};
    slot *s = lookup(b, &b->states, kk);
    if (!s || s->v[0] != UNPROBED) return s;
    pp__cand c = *k;
    c.mb = 1;
    c.recompute = PP_RECOMPUTE_NONE;
    pp_strategy st;
    one_stage(sp, &c, &st);
    st.global_batch = st.dp;
    pp_memory_estimate(sp->m, sp->c, &st, &b->mem);
    const pp_stage_mem *m0 = &b->mem.stages[0];
    /* gradients a framework frees each step (set_to_none) are in the
     * forward only with more than one micro-batch: kept apart (v[4]) */
    double S = m0->params_bytes + m0->grads_persistent_bytes + m0->optimizer_bytes;
    s->v[1] = m0->context_bytes;
    s->v[4] = m0->grads_total_bytes - m0->grads_persistent_bytes;
    pp_time_estimate(sp->m, sp->c, &st, &b->time, &b->thr);
    s->v[2] = b->time.optimizer_s; /* the update of every parameter this GPU keeps */
    s->v[3] = b->time.dp_comm_s;   /* DP/ZeRO traffic of one micro-batch's step */
    s->v[7] = s->v[3];             /* of which repeats each micro-batch */
    if (st.framework == PP_FW_FSDP) {
        /* HF Trainer + Accelerate (no_sync) reduce-scatters once a step: with
         * two micro-batches the traffic is 2 gathers + 1 reduction */
        pp_strategy two = st;
        two.global_batch = 2 * st.dp, two.grad_accum = 2;
        pp_time_estimate(sp->m, sp->c, &two, &b->time, &b->thr);
        s->v[7] = fmin(s->v[3], fmax(0, b->time.dp_comm_s - s->v[3]));
        b->probes++;
    }
    /* the embedding and head alone: what the blocks' states are not */
    st.stage_layers[0] = 0;
    pp_memory_estimate(sp->m, sp->c, &st, &b->mem);
    s->v[5] = m0->params_bytes + m0->grads_persistent_bytes + m0->optimizer_bytes;
    s->v[6] = m0->grads_total_bytes - m0->grads_persistent_bytes;
    b->probes++;
    s->v[0] = S; /* last: the slot is filled */
    b->states.n++;
    b->probes += 2;
    return s;
}

/* Micro-batches held by each stage (the cost model's pp__inflight). */
static const double *flight_probe(pp__bounds *b, const pp__space *sp, const pp__cand *k, long m)
{
    key kk = {(uint64_t)k->pp | (uint64_t)k->schedule << 16 | (uint64_t)k->v << 24 |
                  (uint64_t)((k->sp & PP_CAND_EPOV) && k->ep > 1) << 32, (uint64_t)m};
    slot *s = lookup(b, &b->flight, kk);
    if (!s) return NULL;
    if (s->v[0] != UNPROBED) return b->pool + (size_t)s->v[0];
    if (b->npool + (size_t)k->pp > b->cappool) {
        size_t cap = b->cappool ? b->cappool * 2 : 4096;
        while (cap < b->npool + (size_t)k->pp) cap *= 2;
        double *p = realloc(b->pool, cap * sizeof *p);
        if (!p) {
            b->failed = 1;
            return NULL;
        }
        b->pool = p;
        b->cappool = cap;
    }
    pp_strategy st;
    pp__cand_strategy(sp, k, &st);
    st.grad_accum = (int)m;
    size_t off = b->npool;
    for (int i = 0; i < k->pp; i++) b->pool[b->npool++] = pp__inflight(&st, i);
    s->v[0] = (double)off;
    b->flight.n++;
    b->probes++;
    return b->pool + off;
}

static int uniform_blocks(const pp_model *m)
{
    for (int i = 1; i < m->layers; i++)
        if (m->block_kind[i] != m->block_kind[0]) return 0;
    return 1;
}

/* min over fractional splits of max_i x_i (S + infl_i A), sum x_i = 1. */
static double mem_bound(int same_kind, int p, const double *infl, double S, double A)
{
    double lo = HUGE_VAL, inv = 0;
    for (int i = 0; i < p; i++) {
        double w = S + infl[i] * A;
        if (infl[i] < lo) lo = infl[i];
        inv += w > 0 ? 1 / w : HUGE_VAL;
    }
    if (!same_kind) return (S + lo * A) / p;
    return inv > 0 && isfinite(inv) ? 1 / inv : 0;
}

/* The least fraction X of all blocks a plan must recompute to fit, over
 * fractional splits (stage i takes f_i of the blocks and recomputes x_i of
 * them): stage i holds f_i s + infl_i (f_i a0 - x_i (a0 - a1)) <= M, with s
 * the blocks' states, a0 and a1 their activations with none and with all
 * recomputed. Each stage holds c_i = M / (s + infl_i a0) for free; beyond
 * that, a fraction costs (s + infl_i a0) / (infl_i (a0 - a1)) of
 * recompute, up to C_i = M / (s + infl_i a1): the cheapest stages first.
 * Embedding, head, buffers and the working set are left out (they only add
 * memory), so X is never more than a real split recomputes. 1 if even
 * recomputing everything cannot fit (the memory bound prunes those). */
double pp__least_recompute(int p, const double *infl, double M, double s, double a0, double a1)
{
    double d = a0 - a1, free = 0, cost[PP_MAX_STAGES], room[PP_MAX_STAGES];
    if (!(M > 0) || !(d > 0)) return 0;
    int n = 0;
    for (int i = 0; i < p; i++) {
        double w0 = s + infl[i] * a0, w1 = s + infl[i] * a1;
        if (!(w0 > 0)) return 0;
        double c = M / w0;
        free += c;
        if (infl[i] > 0 && w1 > 0) cost[n] = w0 / (infl[i] * d), room[n++] = M / w1 - c;
    }
    if (free >= 1) return 0;
    double need = 1 - free, x = 0;
    int sorted = 1; /* cost rises as infl falls: 1F1B and interleaving hold fewer on later stages */
    for (int i = 1; i < n && sorted; i++) sorted = cost[i] >= cost[i - 1];
    for (int next = 0; need > 0; next++) {
        int best = -1;
        if (sorted) best = next < n ? next : -1;
        else
            for (int i = 0; i < n; i++)
                if (room[i] > 0 && (best < 0 || cost[i] < cost[best])) best = i;
        if (best < 0) return 1;
        double t = fmin(need, room[best]);
        x += cost[best] * t;
        need -= t;
        room[best] = 0;
    }
    return fmin(1, x);
}

void pp__bounds_cand(pp__bounds *b, const pp__space *sp, pp__cand *k)
{
    k->lb = 0;
    k->lb_mem = 0;
    if (!b->known) {
        const pp_strategy *base = &sp->o.base;
        b->same_kind = uniform_blocks(sp->m);
        b->uniform = b->same_kind && base->ft.mode == PP_MODE_FULL && base->ft.freeze_layers == 0 &&
                     base->act_offload_layers == 0;
        b->known = 1;
    }
    long m = sp->o.global_batch / ((long)k->mb * k->dp);
    slot *core = core_probe(b, sp, k), *st = states_probe(b, sp, k);
    const double *infl = flight_probe(b, sp, k, m);
    if (!core || !st || !infl) return;
    double T = core->v[0], A = core->v[1], S = st->v[0] + (m > 1 ? st->v[4] : 0); /* full: T without recompute */
    k->lb_mem = st->v[1] + mem_bound(b->same_kind, k->pp, infl, S, A);
    if (PP_CAND_RC(k) == PP_RECOMPUTE_FULL && core->v[2] > 0) {
        /* a plan that fits recomputes at least X of the blocks (the K-th plan
         * prunes only when it fits: search.c threshold) */
        double sb = S - st->v[5] - (m > 1 ? st->v[6] : 0);
        T += core->v[2] * pp__least_recompute(k->pp, infl, sp->usable - st->v[1], fmax(0, sb), core->v[3], core->v[4]);
    }
    double veff = k->schedule == PP_SCHED_INTERLEAVED ? k->v : 1;
    k->lb_opt = st->v[2] / k->pp; /* the slowest stage's update is at least the average */
    /* exposed DP/ZeRO time >= slowdown x traffic, hidden or not (comm.c); the
     * slowest stage carries at least 1/p of it; ZeRO-3 repeats it per micro-batch
     * (its gathers only, under no_sync: v[7]) */
    int per_mb = k->fw == PP_FW_FSDP ? k->pp == 1 : k->zero == 3; /* gathers every micro-batch */
    double dp = pp__overlap_slowdown(sp->c) * (per_mb ? m * st->v[7] + st->v[3] - st->v[7] : st->v[3]) / k->pp;
    double step = (m + (k->pp - 1) / veff) * T / k->pp + k->lb_opt + dp;
    switch (sp->o.objective) {
    case PP_OBJ_COST: k->lb = step * sp->gpus * sp->price / 3600 / ((double)sp->o.global_batch * sp->seq); break;
    case PP_OBJ_MEMORY: k->lb = k->lb_mem; break;
    default: k->lb = step;
    }
}
