/*
 * timeline.c — one stage's memory through one optimizer step (docs/report.md),
 * derived from its pp_stage_mem so that the picture and the numbers agree:
 *   - the forward/backward peak is the moment the first backward starts: every
 *     in-flight micro-batch's activations, the loss, the backward working set;
 *   - the optimizer peak is the step itself, with its temporaries;
 *   - the allocator reserve is the strategy's fragmentation fraction of what is
 *     allocated while training runs (not of the weights or the context), as
 *     costmodel/memory.c applies it.
 * Gradients present at the forward/backward peak, and the optimizer step's
 * temporaries, are what the phase totals leave once the other categories are
 * counted; so a cost model that frees gradients before the forward (PyTorch's
 * zero_grad(set_to_none=True)) draws them appearing in the backward instead.
 */
#include <math.h>
#include <string.h>

#include "costmodel/costmodel.h"

#define BLOCK_POINTS 48 /* block-by-block points per pass at most (blocks are grouped beyond) */
#define UNIT_POINTS 6   /* whole-pass points shown at each end of a long run */

const char *pp_mem_cat_name(pp_mem_cat c)
{
    static const char *const names[PP_MEM_CAT_COUNT] = {
        [PP_MEM_PARAMS] = "params",         [PP_MEM_GRADS] = "grads",     [PP_MEM_OPTIMIZER] = "optimizer",
        [PP_MEM_OPT_TEMP] = "optimizer_temp", [PP_MEM_ACTIVATIONS] = "activations",
        [PP_MEM_RECOMPUTE] = "recompute",   [PP_MEM_LOSS] = "loss",       [PP_MEM_COMM] = "comm",
        [PP_MEM_ALLOCATOR] = "allocator",   [PP_MEM_CONTEXT] = "context"};
    return (int)c >= 0 && c < PP_MEM_CAT_COUNT ? names[c] : "?";
}

/* What the step's moments hold, bytes (see the file comment). */
typedef struct tl_state {
    double params, opt, ctx, frag;
    double grads_full, grads_fwd;     /* after the backward; held at the fwd/bwd peak */
    double act_total, unit;           /* activations at the peak; one unit's */
    double rec, loss, comm_fwd;       /* backward working set; loss; buffers in fwd/bwd */
    double alloc_fwd;                 /* allocator reserve at the fwd/bwd peak */
    double temp, gather, alloc_opt;   /* optimizer step: temporaries, all-gather, reserve */
    int held, per_step;               /* units in flight at the peak; units per step */
    int first, nblocks;               /* the stage's blocks */
    double share[BLOCK_POINTS];       /* activations of each block group, fraction of a unit */
    int group_last[BLOCK_POINTS];     /* last model block of each group */
    int ngroups;
} tl_state;

static double clampd(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

/* Activations of each block as memory.c stores them, as fractions of one unit. */
static void block_shares(const pp_model *m, const pp_strategy *s, const pp_stage_mem *st, tl_state *t)
{
    int n = t->nblocks, k = pp__recomputed_blocks(s, st->stage, n);
    double w[PP_MAX_LAYERS], sum = 0;
    for (int b = 0; b < n; b++) {
        int blk = t->first + b;
        pp_recompute r = s->recompute == PP_RECOMPUTE_FULL && b >= k ? PP_RECOMPUTE_NONE : s->recompute;
        w[b] = pp__block_needs_backward(s, blk) ? pp__block_act_bytes(m, s, m->block_kind[blk], r) : 0;
        sum += w[b];
    }
    t->ngroups = n < BLOCK_POINTS ? n : BLOCK_POINTS;
    if (t->ngroups == 0) { /* no block: the embedding or head's activations in one step */
        t->ngroups = 1;
        t->share[0] = 1;
        t->group_last[0] = -1;
        return;
    }
    for (int g = 0; g < t->ngroups; g++) {
        int b0 = (int)((long)g * n / t->ngroups), b1 = (int)((long)(g + 1) * n / t->ngroups);
        double a = 0;
        for (int b = b0; b < b1; b++) a += sum > 0 ? w[b] / sum : 1.0 / n;
        t->share[g] = a;
        t->group_last[g] = t->first + b1 - 1;
    }
}

/* Units (micro-batches, or chunk passes when interleaved) held at the peak. */
static void units(const pp_strategy *s, const pp_stage_mem *st, tl_state *t)
{
    int v = s->pp > 1 && s->schedule == PP_SCHED_INTERLEAVED ? s->virtual_stages : 1;
    t->held = (int)lround(st->inflight * v);
    if (t->held < 1) t->held = 1;
    t->per_step = s->grad_accum * v;
    if (t->per_step < t->held) t->per_step = t->held;
    t->act_total = st->inflight * st->act_per_microbatch;
    t->unit = t->act_total / t->held;
}

/* The ZeRO-1/2 all-gather of updated weights after the step (memory.c). */
static double gather_after_step(const pp_model *m, const pp_strategy *s, const pp_stage_mem *st)
{
    if (!(s->zero == 1 || s->zero == 2) || (double)s->dp * s->cp <= 1) return 0;
    double train, quant;
    pp__stage_trainable(m, s, st->stage, st->first_layer, st->last_layer, &train, &quant);
    return fmin(s->buf.allgather_bucket, train) * pp__weight_bytes(s->precision);
}

static void derive(const pp_model *m, const pp_strategy *s, const pp_stage_mem *st, tl_state *t)
{
    double f = s->buf.fragmentation > 0 ? s->buf.fragmentation : 0;
    memset(t, 0, sizeof *t);
    t->params = st->params_bytes;
    t->opt = st->optimizer_bytes;
    t->ctx = st->context_bytes;
    t->frag = f;
    t->grads_full = st->grads_bytes;
    t->first = st->first_layer;
    t->nblocks = st->first_layer >= 0 ? st->last_layer - st->first_layer + 1 : 0;
    units(s, st, t);
    block_shares(m, s, st, t);
    t->rec = st->recompute_bytes;
    t->loss = st->logits_bytes;
    t->comm_fwd = st->bucket_bytes + st->zero_gather_bytes + st->p2p_bytes;
    /* forward/backward peak: params + context + (1 + f) x what training allocates */
    double ph = st->phase_bytes[PP_PHASE_FWD_BWD], alloc = (ph - t->params - t->ctx) / (1 + f);
    double known = t->opt + t->act_total + t->rec + t->loss + t->comm_fwd;
    t->grads_fwd = clampd(alloc - known, 0, t->grads_full);
    t->alloc_fwd = ph - (t->params + t->ctx + known + t->grads_fwd);
    /* optimizer step: the same, with the temporaries the total leaves */
    ph = st->phase_bytes[PP_PHASE_OPTIMIZER];
    alloc = (ph - t->params - t->ctx) / (1 + f);
    double room = fmax(0, alloc - t->grads_full - t->opt);
    t->gather = fmin(gather_after_step(m, s, st), room);
    t->temp = room - t->gather;
    t->alloc_opt = ph - (t->params + t->ctx + t->grads_full + t->opt + t->gather + t->temp);
}

/* ------------------------------------------------------------ points */

typedef struct tl_builder {
    const tl_state *t;
    pp_mem_timeline *out;
    int pending_elided;
} tl_builder;

/* Appends a point; alloc < 0: the reserve is f x what is allocated. */
static void put(tl_builder *b, pp_tl_event ev, pp_phase ph, int unit, int block, double grads, double act,
                double rec, double loss, double comm, double temp, double alloc)
{
    pp_mem_timeline *o = b->out;
    if (o->n >= PP_TIMELINE_MAX) return;
    const tl_state *t = b->t;
    pp_mem_point *p = &o->pts[o->n++];
    memset(p, 0, sizeof *p);
    p->event = ev;
    p->phase = ph;
    p->unit = unit;
    p->block = block;
    p->elided = b->pending_elided;
    b->pending_elided = 0;
    double *x = p->bytes;
    x[PP_MEM_PARAMS] = t->params;
    x[PP_MEM_GRADS] = grads;
    x[PP_MEM_OPTIMIZER] = t->opt;
    x[PP_MEM_OPT_TEMP] = temp;
    x[PP_MEM_ACTIVATIONS] = fmax(0, act);
    x[PP_MEM_RECOMPUTE] = rec;
    x[PP_MEM_LOSS] = loss;
    x[PP_MEM_COMM] = comm;
    x[PP_MEM_CONTEXT] = t->ctx;
    double dyn = grads + t->opt + temp + x[PP_MEM_ACTIVATIONS] + rec + loss + comm;
    x[PP_MEM_ALLOCATOR] = alloc >= 0 ? alloc : t->frag * dyn;
    p->total = 0;
    for (int c = 0; c < PP_MEM_CAT_COUNT; c++) p->total += x[c];
}

/* The first forward, block group by block group, then the other warm-up
 * forwards one point each (the middle of a long run elided). */
static void warmup(tl_builder *b)
{
    const tl_state *t = b->t;
    double act = 0;
    for (int g = 0; g < t->ngroups; g++) {
        act += t->share[g] * t->unit;
        int last_fwd = t->held == 1 && g == t->ngroups - 1;
        put(b, PP_TL_FORWARD, PP_PHASE_FWD_BWD, 0, t->group_last[g], t->grads_fwd, act, 0,
            last_fwd ? t->loss : 0, t->comm_fwd, 0, -1);
    }
    for (int u = 1; u < t->held; u++) {
        if (u > UNIT_POINTS && u < t->held - UNIT_POINTS) {
            b->pending_elided++;
            continue;
        }
        put(b, PP_TL_FORWARD, PP_PHASE_FWD_BWD, u, t->first + t->nblocks - 1, t->grads_fwd, (u + 1) * t->unit, 0,
            u == t->held - 1 ? t->loss : 0, t->comm_fwd, 0, -1);
    }
}

/* The peak of the forward/backward, then the first backward releasing the
 * oldest unit block group by block group while its gradients appear. */
static void first_backward(tl_builder *b)
{
    const tl_state *t = b->t;
    put(b, PP_TL_BACKWARD, PP_PHASE_FWD_BWD, 0, t->first + t->nblocks - 1, t->grads_fwd, t->act_total, t->rec, t->loss,
        t->comm_fwd, 0, t->alloc_fwd);
    double act = t->act_total, done = 0;
    for (int g = t->ngroups - 1; g >= 0; g--) {
        act -= t->share[g] * t->unit;
        done += t->share[g];
        double grads = t->grads_fwd + (t->grads_full - t->grads_fwd) * (g == 0 ? 1 : done);
        int blk = g > 0 ? t->group_last[g - 1] + 1 : t->first;
        put(b, PP_TL_BACKWARD, PP_PHASE_FWD_BWD, 0, t->nblocks ? blk : -1, grads, act, g > 0 ? t->rec : 0, 0,
            t->comm_fwd, 0, -1);
    }
}

/* 1F1B's steady state: a forward brings the held units back, a backward
 * releases one; one pair is drawn, the others elided. Then the cool-down. */
static void steady_and_cooldown(tl_builder *b)
{
    const tl_state *t = b->t;
    int pairs = t->per_step - t->held, last = t->first + t->nblocks - 1;
    for (int k = 0; k < pairs; k++) {
        if (k >= 1 && k < pairs - 1) {
            b->pending_elided += 2;
            continue;
        }
        put(b, PP_TL_FORWARD, PP_PHASE_FWD_BWD, t->held + k, last, t->grads_full, t->act_total, 0, t->loss,
            t->comm_fwd, 0, -1);
        put(b, PP_TL_BACKWARD, PP_PHASE_FWD_BWD, k + 1, t->first, t->grads_full, t->act_total - t->unit, 0, 0,
            t->comm_fwd, 0, -1);
    }
    for (int u = 1; u < t->held; u++) {
        if (u > UNIT_POINTS && u < t->held - UNIT_POINTS) {
            b->pending_elided++;
            continue;
        }
        put(b, PP_TL_BACKWARD, PP_PHASE_FWD_BWD, pairs + u, t->first, t->grads_full, t->act_total - (u + 1) * t->unit,
            0, 0, t->comm_fwd, 0, -1);
    }
}

void pp_memory_timeline(const pp_model *m, const pp_strategy *s, const pp_stage_mem *st, pp_mem_timeline *out)
{
    tl_state t;
    derive(m, s, st, &t);
    out->stage = st->stage;
    out->n = 0;
    out->units_held = t.held;
    out->units_per_step = t.per_step;
    out->unit_bytes = t.unit;
    tl_builder b = {&t, out, 0};
    put(&b, PP_TL_START, PP_PHASE_FWD_BWD, -1, -1, t.grads_fwd, 0, 0, 0, st->bucket_bytes, 0, -1);
    warmup(&b);
    first_backward(&b);
    steady_and_cooldown(&b);
    put(&b, PP_TL_STEP, PP_PHASE_OPTIMIZER, -1, -1, t.grads_full, 0, 0, 0, t.gather, t.temp, t.alloc_opt);
    /* ready for the next step: the cost model counts the buckets with the
     * forward/backward, not with the optimizer step */
    put(&b, PP_TL_END, PP_PHASE_FWD_BWD, -1, -1, t.grads_fwd, 0, 0, 0, st->bucket_bytes, 0, -1);
    out->peak = 0;
    for (int i = 1; i < out->n; i++)
        if (out->pts[i].total > out->pts[out->peak].total * (1 + 1e-12)) out->peak = i;
}
