/*
 * rank.c — the ranking: objective values and a total order over plans (fits
 * before tight, then the objective), so that equal objectives are broken by
 * the strategy itself and the output never depends on which thread finished
 * first.
 */
#include <string.h>

#include "planner/planner.h"

double pp_plan_objective(const pp_cluster *c, const pp_plan *p, pp_objective obj, double price)
{
    const pp_strategy *s = &p->strategy;
    switch (obj) {
    case PP_OBJ_COST: /* $ per token: GPU-hours per step times price over tokens per step */
        return p->time.step_s * pp_cluster_gpus(c) * price / 3600 / ((double)s->global_batch * s->seq);
    case PP_OBJ_MEMORY: return p->memory.peak_bytes;
    default: return p->time.step_s;
    }
}

static int cmp_d(double a, double b) { return (a > b) - (a < b); }
static int cmp_i(int a, int b) { return (a > b) - (a < b); }

/* Simpler strategies first when everything else ties: fewer pipeline
 * stages, less TP/CP/EP, no sequence parallelism, lower ZeRO, no offload,
 * less recompute, then the remaining fields (the framework and the shard
 * group last: plans the search tells apart are never equal). */
static int cmp_strategy(const pp_strategy *a, const pp_strategy *b)
{
    int f[][2] = {{a->pp, b->pp}, {a->tp, b->tp}, {a->cp, b->cp}, {a->ep, b->ep}, {a->dp, b->dp}, {a->sp, b->sp},
                  {a->zero, b->zero}, {a->offload, b->offload}, {a->recompute, b->recompute},
                  {__builtin_popcount(a->recompute_modules), __builtin_popcount(b->recompute_modules)},
                  {(int)a->recompute_modules, (int)b->recompute_modules},
                  {a->precision, b->precision}, {-a->micro_batch, -b->micro_batch}, {a->schedule, b->schedule},
                  {a->virtual_stages, b->virtual_stages}, {a->recompute_layers, b->recompute_layers},
                  {a->per_stage_recompute, b->per_stage_recompute}, {-pp__etp(a), -pp__etp(b)},
                  {a->ep_dispatch, b->ep_dispatch}, {a->overlap_ep, b->overlap_ep},
                  {-a->fp8_param_gather, -b->fp8_param_gather}, {a->framework, b->framework}, {a->shard, b->shard}};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        if (f[i][0] != f[i][1]) return cmp_i(f[i][0], f[i][1]);
    for (int i = 0; i < a->pp; i++) {
        int c = cmp_i(a->stage_layers[i], b->stage_layers[i]);
        if (c) return c;
    }
    for (int i = 0; a->per_stage_recompute && i < a->pp; i++) {
        int c = cmp_i(a->stage_recompute[i], b->stage_recompute[i]);
        if (c) return c;
    }
    return 0;
}

/* Plans that fit come before tight ones (the peak's error bar crosses the
 * usable memory: docs/validation.md, "Error bars"), whatever their
 * objective; a least-memory ranking ranks by memory alone. */
/* Fits, then tight within the GPU (only the error bar crosses it), then
 * tight beyond it with the live tensors within (it runs only where the
 * allocator's fragmentation leaves room: red team rt14 found the #1 of an
 * all-tight list the one furthest over), then tight with the live tensors
 * over (only the error bar's low end fits), then does not fit. */
static int fit_tier(const pp_plan *p)
{
    if (p->uncertainty.fit != PP_FIT_TIGHT) return p->uncertainty.fit == PP_FIT_FITS ? 0 : 4;
    return p->memory.fits ? 1 : p->memory.live_fits ? 2 : 3;
}

int pp__plan_cmp(const pp_cluster *c, const pp_plan *a, const pp_plan *b, pp_objective obj, double price)
{
    int r = obj == PP_OBJ_MEMORY ? 0 : cmp_i(fit_tier(a), fit_tier(b));
    if (r) return r;
    r = cmp_d(pp_plan_objective(c, a, obj, price), pp_plan_objective(c, b, obj, price));
    if (r) return r;
    if (obj == PP_OBJ_MEMORY && (r = cmp_d(a->time.step_s, b->time.step_s))) return r;
    if (obj != PP_OBJ_MEMORY && (r = cmp_d(a->memory.peak_bytes, b->memory.peak_bytes))) return r;
    return cmp_strategy(&a->strategy, &b->strategy);
}
