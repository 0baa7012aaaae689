/*
 * timeline.c — one stage's memory through one optimizer step (docs/report.md),
 * drawn from its pp_stage_mem so that the picture is the cost model's
 * (costmodel/memory.c, docs/memory.md):
 *   - the forward/backward figure is the larger of the start of a backward
 *     (every in-flight micro-batch's activations, the logits, autocast's
 *     weight casts, and, from the second micro-batch of a step on, the
 *     gradients) and the end of the last backward (every gradient); both
 *     with the backward working set and the buffers;
 *   - the optimizer figure is the step: every gradient, the optimizer's
 *     temporaries, the buffers of the step;
 *   - gradients a framework frees each step (zero_grad(set_to_none=True))
 *     appear during the first backward; a persistent buffer (Megatron's
 *     main_grad, DeepSpeed's) is there all along;
 *   - the allocator reserve is the strategy's fragmentation fraction of what
 *     training allocates (not the weights, not the context).
 * At the two peak moments the allocator reserve is what the phase total
 * leaves, so the timeline's maximum is the cost model's figure; elsewhere it
 * is the fragmentation fraction. The buffers of the step are what its total
 * leaves beside the gradients, states and temporaries.
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
        [PP_MEM_OPT_TEMP] = "optimizer_temp", [PP_MEM_ACTIVATIONS] = "activations", [PP_MEM_CAST] = "cast",
        [PP_MEM_RECOMPUTE] = "recompute",   [PP_MEM_LOSS] = "loss",       [PP_MEM_COMM] = "comm",
        [PP_MEM_ALLOCATOR] = "allocator",   [PP_MEM_CONTEXT] = "context"};
    return (int)c >= 0 && c < PP_MEM_CAT_COUNT ? names[c] : "?";
}

/* Where the forward/backward figure of the cost model stands in the step. */
typedef enum anchor_kind {
    ANCHOR_FIRST_BWD,  /* the first backward's start */
    ANCHOR_STEADY_BWD, /* a steady-state backward's start, the gradients there */
    ANCHOR_LAST_END,   /* the end of the last backward */
} anchor_kind;

typedef struct tl_state {
    double params, opt, ctx, frag;
    double persist, gt;              /* persistent gradients; those the step allocates */
    double act_total, unit;          /* activations at the peak; one unit's */
    double cast, rec, loss;          /* autocast's copies; backward working set; logits */
    int apart;                       /* the loss is freed before the working set appears */
    double comm_fwd, bucket;         /* buffers in forward/backward; the buckets alone */
    double rs_loss;                  /* FSDP: the bucket bytes beside the loss (-1: all) */
    double g_front;                  /* gradients the cost model counts at a backward's start */
    double temp, comm_opt, alloc_opt; /* optimizer step */
    double phase_fwd;
    anchor_kind anchor;
    int held, per_step, pairs;       /* units in flight at the peak; per step; 1F1B pairs */
    int first, top, nblocks;         /* the stage's blocks: the first and last it runs, how many */
    double share[BLOCK_POINTS];      /* activations of each block group, fraction of a unit */
    int group_first[BLOCK_POINTS], group_last[BLOCK_POINTS]; /* model blocks each group starts and ends with */
    int ngroups;
} tl_state;

/* Activations of each block as memory.c stores them, as fractions of one unit. */
static void block_shares(const pp_model *m, const pp_strategy *s, const pp_stage_mem *st, tl_state *t)
{
    int idx[PP_MAX_LAYERS], n = pp__stage_blocks(NULL, s, st->stage, t->first, t->first + t->nblocks - 1, idx);
    int k = pp__recomputed_blocks(s, st->stage, n);
    double w[PP_MAX_LAYERS], sum = 0;
    for (int b = 0; b < n; b++) {
        int blk = idx[b];
        pp_recompute r = s->recompute == PP_RECOMPUTE_FULL && b >= k ? PP_RECOMPUTE_NONE : s->recompute;
        w[b] = pp__block_needs_backward(s, blk) ? pp__block_act_bytes(m, s, m->block_kind[blk], r) : 0;
        sum += w[b];
    }
    t->ngroups = n < BLOCK_POINTS ? n : BLOCK_POINTS;
    if (t->ngroups == 0) { /* no block: the embedding or head's activations in one step */
        t->ngroups = 1;
        t->share[0] = 1;
        t->group_first[0] = t->group_last[0] = -1;
        return;
    }
    t->first = idx[0], t->top = idx[n - 1]; /* interleaved: chunk 0's first, the last chunk's last */
    for (int g = 0; g < t->ngroups; g++) {
        int b0 = (int)((long)g * n / t->ngroups), b1 = (int)((long)(g + 1) * n / t->ngroups);
        double a = 0;
        for (int b = b0; b < b1; b++) a += sum > 0 ? w[b] / sum : 1.0 / n;
        t->share[g] = a;
        t->group_first[g] = idx[b0];
        t->group_last[g] = idx[b1 - 1];
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
    t->pairs = t->per_step - t->held;
    t->act_total = st->inflight * st->act_per_microbatch;
    t->unit = t->act_total / t->held;
}

static void derive(const pp_model *m, const pp_strategy *s, const pp_stage_mem *st, tl_state *t)
{
    double f = pp__fragmentation(s);
    memset(t, 0, sizeof *t);
    t->params = st->params_bytes;
    t->opt = st->optimizer_bytes;
    t->ctx = st->context_bytes;
    t->frag = f;
    t->persist = st->grads_persistent_bytes;
    t->gt = fmax(0, st->grads_total_bytes - t->persist);
    t->first = st->first_layer;
    t->nblocks = st->first_layer >= 0 ? st->last_layer - st->first_layer + 1 : 0;
    t->top = t->first + t->nblocks - 1;
    units(s, st, t);
    block_shares(m, s, st, t);
    t->cast = st->cast_bytes;
    t->rec = st->recompute_bytes;
    t->loss = st->logits_bytes;
    t->bucket = st->bucket_bytes;
    t->comm_fwd = st->bucket_bytes + st->zero_gather_bytes + st->p2p_bytes;
    t->phase_fwd = st->phase_bytes[PP_PHASE_FWD_BWD];
    /* the cost model's two candidates for the forward/backward moment */
    int m_gt = s->grad_accum > 1;
    t->rs_loss = pp__fsdp_rs_loss_bytes(s, st);
    t->apart = pp__loss_overlap(s, st) > 0 || t->rs_loss >= 0;
    double lrb = pp__loss_rec_bufs(s, st) - t->bucket; /* the loss and working set, beside the buckets */
    double front = t->act_total + lrb + t->cast + (m_gt ? t->gt : 0), back = t->gt + t->rec;
    t->g_front = t->persist + (m_gt ? t->gt : 0);
    t->anchor = back > front ? ANCHOR_LAST_END : m_gt && t->pairs > 0 ? ANCHOR_STEADY_BWD : ANCHOR_FIRST_BWD;
    /* the optimizer step: what its total leaves beside gradients, states and
     * temporaries is its buffers (the all-gather after the step, DDP's buckets) */
    double ph = st->phase_bytes[PP_PHASE_OPTIMIZER], alloc = (ph - t->params - t->ctx) / (1 + f);
    t->temp = st->opt_temp_bytes;
    t->comm_opt = fmax(0, alloc - st->grads_total_bytes - t->opt - t->temp);
    t->alloc_opt = ph - (t->params + t->ctx + st->grads_total_bytes + t->opt + t->temp + t->comm_opt);
}

/* ------------------------------------------------------------ points */

typedef struct tl_builder {
    const tl_state *t;
    pp_mem_timeline *out;
    int pending_elided;
} tl_builder;

typedef struct mom {
    double grads, act, cast, rec, loss, comm, temp;
} mom; /* what changes from moment to moment */

static void total(pp_mem_point *p)
{
    p->total = 0;
    for (int c = 0; c < PP_MEM_CAT_COUNT; c++) p->total += p->bytes[c];
}

/* Appends a point; its allocator reserve is f x what training allocates. */
static int put(tl_builder *b, pp_tl_event ev, pp_phase ph, int unit, int block, mom x)
{
    pp_mem_timeline *o = b->out;
    if (o->n >= PP_TIMELINE_MAX) return o->n - 1;
    const tl_state *t = b->t;
    pp_mem_point *p = &o->pts[o->n];
    memset(p, 0, sizeof *p);
    p->event = ev;
    p->phase = ph;
    p->unit = unit;
    p->block = block;
    p->elided = b->pending_elided;
    b->pending_elided = 0;
    double *v = p->bytes;
    v[PP_MEM_PARAMS] = t->params;
    v[PP_MEM_GRADS] = fmax(0, x.grads);
    v[PP_MEM_OPTIMIZER] = t->opt;
    v[PP_MEM_OPT_TEMP] = x.temp;
    v[PP_MEM_ACTIVATIONS] = x.act > 1e-12 * t->act_total ? x.act : 0; /* the rounding of act_total - held x unit */
    v[PP_MEM_CAST] = fmax(0, x.cast);
    v[PP_MEM_RECOMPUTE] = x.rec;
    v[PP_MEM_LOSS] = x.loss;
    /* FSDP's reduce-scatter copy is not live while the loss is (memory.c
     * pp__fsdp_rs_loss_bytes) */
    v[PP_MEM_COMM] = x.loss > 0 && t->rs_loss >= 0 ? x.comm - (t->bucket - t->rs_loss) : x.comm;
    v[PP_MEM_CONTEXT] = t->ctx;
    double dyn = 0;
    for (int c = 0; c < PP_MEM_CAT_COUNT; c++)
        if (c != PP_MEM_PARAMS && c != PP_MEM_CONTEXT) dyn += v[c];
    v[PP_MEM_ALLOCATOR] = t->frag * dyn;
    total(p);
    return o->n++;
}

/* The cost model's forward/backward moment: the allocator reserve is what
 * the phase total leaves (the fragmentation fraction when the two agree). */
static void pin(pp_mem_timeline *o, int i, double phase_total)
{
    pp_mem_point *p = &o->pts[i];
    double rest = p->total - p->bytes[PP_MEM_ALLOCATOR];
    p->bytes[PP_MEM_ALLOCATOR] = fmax(0, phase_total - rest);
    total(p);
}

/* The first forward, block group by block group (autocast casting each
 * block's weights), then the other warm-up forwards one point each. */
static void warmup(tl_builder *b)
{
    const tl_state *t = b->t;
    mom x = {t->persist, 0, 0, 0, 0, t->comm_fwd, 0};
    double done = 0;
    for (int g = 0; g < t->ngroups; g++) {
        done += t->share[g];
        x.act = done * t->unit;
        x.cast = fmin(1, done) * t->cast;
        x.loss = t->held == 1 && g == t->ngroups - 1 ? t->loss : 0;
        put(b, PP_TL_FORWARD, PP_PHASE_FWD_BWD, 0, t->group_last[g], x);
    }
    x.cast = t->cast;
    for (int u = 1; u < t->held; u++) {
        if (u > UNIT_POINTS && u < t->held - UNIT_POINTS) {
            b->pending_elided++;
            continue;
        }
        x.act = (u + 1) * t->unit;
        x.loss = u == t->held - 1 ? t->loss : 0;
        put(b, PP_TL_FORWARD, PP_PHASE_FWD_BWD, u, t->top, x);
    }
}

/* A backward's start: the loss (and head) backward, then the last block's
 * working set once the loss's tensors are freed (memory.c
 * pp__loss_overlap); one point where both stay (GPipe). Returns the point
 * the cost model's forward/backward moment is: the larger. */
static int backward_start(tl_builder *b, int unit, int top, mom x)
{
    const tl_state *t = b->t;
    if (!t->apart) return put(b, PP_TL_BACKWARD, PP_PHASE_FWD_BWD, unit, top, x);
    mom a = x, w = x;
    a.rec = 0;
    w.loss = 0;
    int ia = put(b, PP_TL_BACKWARD, PP_PHASE_FWD_BWD, unit, top, a);
    int iw = put(b, PP_TL_BACKWARD, PP_PHASE_FWD_BWD, unit, top, w);
    return b->out->pts[ia].total >= b->out->pts[iw].total ? ia : iw;
}

/* The first backward: it starts with everything in flight, then releases
 * the oldest unit block group by block group while the gradients the step
 * allocates appear. When it is also the last backward, the casts go too. */
static void first_backward(tl_builder *b)
{
    const tl_state *t = b->t;
    int last = t->pairs == 0 && t->held == 1, top = t->top;
    mom x = {t->anchor == ANCHOR_FIRST_BWD ? t->g_front : t->persist, t->act_total, t->cast, t->rec, t->loss,
             t->comm_fwd, 0};
    int i = backward_start(b, 0, top, x);
    if (t->anchor == ANCHOR_FIRST_BWD) pin(b->out, i, t->phase_fwd);
    double g0 = x.grads, done = 0;
    x.loss = 0;
    for (int g = t->ngroups - 1; g >= 0; g--) {
        done = g == 0 ? 1 : done + t->share[g];
        x.act = t->act_total - done * t->unit;
        x.grads = g0 + (t->persist + t->gt - g0) * done;
        x.cast = last ? (1 - done) * t->cast : t->cast;
        put(b, PP_TL_BACKWARD, PP_PHASE_FWD_BWD, 0, t->nblocks ? t->group_first[g] : -1, x);
    }
}

/* 1F1B's steady state: a forward brings the held units back, the next
 * backward starts with them and the step's gradients, and releases one. The
 * first and last pairs are drawn, the others elided. Then the cool-down. */
static void steady_and_cooldown(tl_builder *b)
{
    const tl_state *t = b->t;
    int top = t->top;
    double full = t->persist + t->gt;
    for (int k = 0; k < t->pairs; k++) {
        if (k >= 1 && k < t->pairs - 1) {
            b->pending_elided += 2;
            continue;
        }
        int last = k == t->pairs - 1 && t->held == 1;
        mom x = {full, t->act_total, t->cast, 0, t->loss, t->comm_fwd, 0};
        put(b, PP_TL_FORWARD, PP_PHASE_FWD_BWD, t->held + k, top, x);
        x.rec = t->rec;
        int i = backward_start(b, k + 1, top, x);
        if (k == 0 && t->anchor == ANCHOR_STEADY_BWD) pin(b->out, i, t->phase_fwd);
        x.act = t->act_total - t->unit;
        x.loss = 0;
        x.cast = last ? 0 : t->cast;
        put(b, PP_TL_BACKWARD, PP_PHASE_FWD_BWD, k + 1, t->first, x);
    }
    for (int u = 1; u < t->held; u++) {
        if (u > UNIT_POINTS && u < t->held - UNIT_POINTS) {
            b->pending_elided++;
            continue;
        }
        mom x = {full, t->act_total - (u + 1) * t->unit, u == t->held - 1 ? 0 : t->cast, t->rec, 0, t->comm_fwd, 0};
        put(b, PP_TL_BACKWARD, PP_PHASE_FWD_BWD, t->pairs + u, t->first, x);
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
    put(&b, PP_TL_START, PP_PHASE_FWD_BWD, -1, -1, (mom){t.persist, 0, 0, 0, 0, t.bucket, 0});
    warmup(&b);
    first_backward(&b);
    steady_and_cooldown(&b);
    /* the end of the last backward: its working set still there, every gradient */
    if (t.anchor == ANCHOR_LAST_END) pin(out, out->n - 1, t.phase_fwd);
    int i = put(&b, PP_TL_STEP, PP_PHASE_OPTIMIZER, -1, -1,
                (mom){st->grads_total_bytes, 0, 0, 0, 0, t.comm_opt, t.temp});
    out->pts[i].bytes[PP_MEM_ALLOCATOR] = fmax(0, t.alloc_opt);
    total(&out->pts[i]);
    /* ready for the next step: the temporaries and the freed gradients gone;
     * the cost model counts the buckets with the forward/backward */
    put(&b, PP_TL_END, PP_PHASE_FWD_BWD, -1, -1, (mom){t.persist, 0, 0, 0, 0, t.bucket, 0});
    out->peak = 0;
    for (int k = 1; k < out->n; k++)
        if (out->pts[k].total > out->pts[out->peak].total * (1 + 1e-12)) out->peak = k;
}
