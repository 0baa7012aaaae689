/*
 * search.c — pp_plan_search: enumerate (space.c), order the candidates by
 * their objective lower bound, and cost them in fixed chunks on OpenMP
 * threads; stop when the next bound exceeds the K-th best plan.
 *
 * Determinism: chunks are cut from the bound order (lower bound, then
 * enumeration index), every thread writes only its candidate's slot, and
 * slots are merged in chunk order after the parallel loop. Pruning uses the
 * threshold as it stood at the chunk boundary, so which candidates are
 * costed (and the stats) does not depend on the thread count either.
 *
 * Per chunk: A) cost each candidate on the default split (full recompute:
 * the least uniform recompute that fits); B) for pipeline candidates whose
 * split could still change the ranking, build the ILP (partition.c), solve
 * the distinct ones (cached across chunks), verify, and keep the better
 * split. The solves share one budget (ilp_budget_s, their summed wall
 * time): once it is spent, the rest keep the default split (the exact DP,
 * the other fallback, can take longer than the ILP on deep models: 0.26 s
 * a split for 1,021 blocks on 64 stages).
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "costmodel/framework.h"
#include "costmodel/rules.h"
#include "planner/planner.h"

#define CHUNK 128        /* candidates costed between threshold updates */
#define SUPER 4096       /* candidates selected and sorted at once */
#define LB_SLACK 1e-9    /* relative: bounds are compared with this margin */

typedef struct ctl {
    int rank_unfit;      /* rank plans that do not fit too (least-memory search) */
    int prune_memory;    /* drop candidates whose memory bound exceeds the GPU */
} ctl;

typedef struct slot {
    const pp__cand *k;
    int costed, need_ilp, build_ok, shared, improved, how, probes, bounded;
    pp_plan plan;        /* best split found for this candidate */
    pp_plan *even;       /* B: the default-split plan it replaced (to retract) */
    pp__part_problem *pr;
    uint64_t hash;
    pp__part_result res;
} slot;

typedef struct cache_entry {
    uint64_t hash;
    pp__part_problem *pr;
    pp__part_result res;
} cache_entry;

typedef struct search {
    const pp__space *sp;
    ctl ctl;
    int threads;
    int k;                 /* plans kept */
    int n;
    pp_plan *top;          /* n best, sorted */
    pp_search_stats st;
    cache_entry *cache;
    int ncache, capcache;
    double ilp_spent;      /* s of wall time the ILP solves took, summed */
    int failed;
} search;

/* ------------------------------------------------------------ top K */

/* The K-th plan's objective bounds what can still enter the top K, but only
 * when it fits: a plan that fits outranks a tight one whatever its
 * objective (rank.c), so while the K-th is tight nothing may be pruned. */
static double threshold(const search *S)
{
    if (S->n < S->k) return HUGE_VAL;
    const pp_plan *last = &S->top[S->n - 1];
    if (S->sp->o.objective != PP_OBJ_MEMORY && last->uncertainty.fit != PP_FIT_FITS) return HUGE_VAL;
    return pp_plan_objective(S->sp->c, last, S->sp->o.objective, S->sp->price);
}

static int plan_cmp(const search *S, const pp_plan *a, const pp_plan *b)
{
    return pp__plan_cmp(S->sp->c, a, b, S->sp->o.objective, S->sp->price);
}

static void offer(search *S, const pp_plan *p)
{
    if (!S->ctl.rank_unfit && !p->memory.live_fits) return; /* tight ones rank after those that fit */
    int pos = S->n;
    while (pos > 0 && plan_cmp(S, p, &S->top[pos - 1]) < 0) pos--;
    if (pos > 0 && plan_cmp(S, p, &S->top[pos - 1]) == 0) return; /* the same plan again */
    if (pos >= S->k) return;
    int last = S->n < S->k ? S->n : S->k - 1;
    memmove(&S->top[pos + 1], &S->top[pos], (size_t)(last - pos) * sizeof *S->top);
    S->top[pos] = *p;
    if (S->n < S->k) S->n++;
}

static void retract(search *S, const pp_plan *p)
{
    for (int i = 0; i < S->n; i++)
        if (plan_cmp(S, p, &S->top[i]) == 0) {
            memmove(&S->top[i], &S->top[i + 1], (size_t)(S->n - i - 1) * sizeof *S->top);
            S->n--;
            return;
        }
}

/* ------------------------------------------------------------ phase A */

static int in_rc_set(const pp__space *sp, int r)
{
    for (int i = 0; i < sp->nrc; i++)
        if (sp->rc[i] == r) return 1;
    return 0;
}

static int fits_with(const pp__space *sp, pp_strategy *s, int k, pp_memory *mem)
{
    s->recompute_layers = k;
    pp_memory_estimate(sp->m, sp->c, s, mem);
    return mem->peak_bytes <= mem->gpu_bytes;
}

/* Least blocks per stage to recompute so every stage fits: 0, else the
 * smallest k >= 1 (memory falls with k from 1 on); -1 (all) if none fits.
 * Only counts the framework can write: all or none, or (Megatron) a
 * multiple of the virtual stages. */
static int least_uniform_recompute(const pp__space *sp, pp_strategy *s, pp_memory *mem)
{
    const pp__fw *f = pp__fw_get(s->framework);
    int hi = 0;
    for (int i = 0; i < s->pp; i++)
        if (s->stage_layers[i] > hi) hi = s->stage_layers[i];
    if (fits_with(sp, s, 0, mem)) return 0;
    if (!f->partial_recompute || !fits_with(sp, s, hi, mem)) return -1;
    int lo = 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (fits_with(sp, s, mid, mem)) hi = mid;
        else lo = mid + 1;
    }
    int v = s->virtual_stages;
    if (v > 1 && hi % v) hi += v - hi % v;
    for (int i = 0; i < s->pp; i++)
        if (hi < s->stage_layers[i]) return hi;
    return -1;
}

/* The framework's launcher can write any split (the ILP's), and any
 * per-stage recompute counts. */
static int free_split(const pp_strategy *s) { return pp__fw_get(s->framework)->split == PP_SPLIT_ANY; }
static int per_stage_rc(const pp__space *sp, const pp_strategy *s)
{
    return sp->o.stage_recompute && pp__fw_get(s->framework)->partial_recompute == 2;
}

static int imbalanced(const pp_plan *p)
{
    const pp_strategy *s = &p->strategy;
    double sum = 0, mx = 0;
    for (int i = 0; i < s->pp; i++) {
        sum += p->time.stage_microbatch_s[i];
        if (p->time.stage_microbatch_s[i] > mx) mx = p->time.stage_microbatch_s[i];
    }
    return mx > sum / s->pp * (1 + LB_SLACK);
}

static void eval_even(const search *S, slot *x, pp_memory *mem)
{
    const pp__space *sp = S->sp;
    pp_strategy s;
    pp_error e;
    pp__cand_strategy(sp, x->k, &s);
    if (pp_strategy_resolve(&s, sp->m, sp->c, &e) != PP_OK) return;
    int obj_mem = sp->o.objective == PP_OBJ_MEMORY;
    if (s.recompute == PP_RECOMPUTE_FULL && !obj_mem) {
        int k = least_uniform_recompute(sp, &s, mem);
        if (k == 0 && !per_stage_rc(sp, &s) && in_rc_set(sp, PP_RECOMPUTE_NONE)) return; /* the same as no recompute */
        s.recompute_layers = k;
    }
    if (pp_estimate(sp->m, sp->c, &s, &x->plan, &e) != PP_OK) return;
    x->costed = 1;
    int full_free = s.recompute == PP_RECOMPUTE_FULL && per_stage_rc(sp, &s);
    x->need_ilp = sp->o.stage_partition && s.pp > 1 && !obj_mem && free_split(&s) &&
                  (!x->plan.memory.fits || full_free || imbalanced(&x->plan));
}

/* ------------------------------------------------------------ phase B */

static size_t problem_bytes(const pp__part_problem *pr)
{
    return offsetof(pp__part_problem, st) + (size_t)pr->p * sizeof(pp__stage_coef);
}

static const cache_entry *cache_find(const search *S, const pp__part_problem *pr, uint64_t h)
{
    for (int i = 0; i < S->ncache; i++)
        if (S->cache[i].hash == h && !memcmp(S->cache[i].pr, pr, problem_bytes(pr))) return &S->cache[i];
    return NULL;
}

static void cache_add(search *S, const pp__part_problem *pr, uint64_t h, const pp__part_result *r)
{
    if (S->ncache == S->capcache) {
        int cap = S->capcache ? 2 * S->capcache : 64;
        cache_entry *c = realloc(S->cache, (size_t)cap * sizeof *c);
        if (!c) return;
        S->cache = c;
        S->capcache = cap;
    }
    pp__part_problem *copy = malloc(problem_bytes(pr));
    if (!copy) return;
    memcpy(copy, pr, problem_bytes(pr));
    S->cache[S->ncache++] = (cache_entry){h, copy, *r};
}

/* Objective units of a step-time bound for this candidate. */
static double step_to_objective(const pp__space *sp, double step)
{
    if (sp->o.objective == PP_OBJ_COST) return step * sp->gpus * sp->price / 3600 / ((double)sp->o.global_batch * sp->seq);
    return step;
}

/* Builds the ILP; drops it (need_ilp = 0) when even the best conceivable
 * split cannot reach the threshold: the step is m T + (S - T)/v with T the
 * slowest stage and S the stages' sum, so at least (m - 1/v) T_lb + S_lb/v,
 * S_lb no less than T_lb. */
static void build_one(const search *S, slot *x, double thr)
{
    const pp_strategy *s = &x->plan.strategy;
    x->pr = malloc(sizeof *x->pr);
    if (!x->pr) return;
    x->build_ok = pp__part_build(S->sp->m, S->sp->c, s, per_stage_rc(S->sp, s), x->pr, &x->probes) == 0;
    if (!x->build_ok) return;
    double v = s->schedule == PP_SCHED_INTERLEAVED ? s->virtual_stages : 1, tlb = pp__part_time_lb(x->pr);
    double slb = fmax(tlb, pp__part_sum_lb(x->pr));
    double lb = step_to_objective(S->sp, (s->grad_accum - 1 / v) * tlb + slb / v + x->k->lb_opt);
    if (lb > thr * (1 + LB_SLACK)) {
        x->need_ilp = 0;
        x->bounded = 1;
        return;
    }
    x->hash = pp__hash(x->pr, problem_bytes(x->pr), 0);
}


/* Applies the ILP (or DP) split and keeps it when it beats the default. */
static void apply_one(const search *S, slot *x)
{
    const pp__space *sp = S->sp;
    pp_strategy s = x->plan.strategy;
    pp__part_result r = x->res;
    int ok = 0;
    if (x->build_ok && r.status == PP_OK) ok = pp__part_apply(sp->m, sp->c, x->pr, &r, &s) == 0;
    if (x->build_ok && r.status == PP_ERR_INFEASIBLE) return; /* no split fits */
    if (x->build_ok && r.budget_skipped) return; /* the budget is spent: the default split stays */
    if (!ok) {
        x->how = 1;
        s = x->plan.strategy;
        if (pp__dp_partition(sp->m, sp->c, &s, per_stage_rc(sp, &s), &r) != PP_OK) return;
        pp__part_apply_raw(&r, per_stage_rc(sp, &s), &s);
    }
    if (s.recompute == PP_RECOMPUTE_FULL && s.per_stage_recompute) {
        int any = 0;
        for (int i = 0; i < s.pp; i++) any |= s.stage_recompute[i];
        if (!any) s.recompute = PP_RECOMPUTE_NONE, s.per_stage_recompute = 0, s.recompute_layers = -1;
    }
    pp_plan *alt = malloc(sizeof *alt);
    pp_error e;
    if (!alt) return;
    if (pp_estimate(sp->m, sp->c, &s, alt, &e) == PP_OK && alt->memory.fits &&
        (!x->plan.memory.fits || pp__plan_cmp(sp->c, alt, &x->plan, sp->o.objective, sp->price) < 0)) {
        x->even = malloc(sizeof *x->even);
        if (x->even) *x->even = x->plan;
        x->plan = *alt;
        x->improved = 1;
    }
    free(alt);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* One ILP within what is left of the search's budget; a solve that would
 * get less than GLPK's 1 ms resolution is not started (budget_skipped: the
 * candidate keeps its default split). */
static void solve_budgeted(search *S, slot *x)
{
    pp_error e;
    double spent;
#pragma omp atomic read
    spent = S->ilp_spent;
    double left = S->sp->o.ilp_budget_s - spent;
    if (left < 1e-3) {
        memset(&x->res, 0, sizeof x->res);
        x->res.status = PP_ERR_INTERNAL;
        x->res.budget_skipped = 1;
        return;
    }
    double t0 = now_s();
    pp__ilp_solve(x->pr, fmin(S->sp->o.ilp_time_limit_s, left), &x->res, &e);
    double dt = now_s() - t0;
#pragma omp atomic
    S->ilp_spent += dt;
}

/* Distinct problems: from the cache, from an earlier slot, or solved now. */
static void solve_distinct(search *S, slot *xs, int n)
{
    int *todo = malloc((size_t)n * sizeof *todo), nt = 0;
    if (!todo) return;
    for (int i = 0; i < n; i++) {
        slot *x = &xs[i];
        if (!x->need_ilp || !x->build_ok) continue;
        const cache_entry *ce = cache_find(S, x->pr, x->hash);
        if (ce) {
            x->res = ce->res;
            x->shared = 1;
            continue;
        }
        for (int j = 0; j < nt && !x->shared; j++) {
            slot *y = &xs[todo[j]];
            if (y->hash == x->hash && !memcmp(y->pr, x->pr, problem_bytes(x->pr))) x->shared = 1 + todo[j];
        }
        if (!x->shared) todo[nt++] = i;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(S->threads)
    for (int j = 0; j < nt; j++) solve_budgeted(S, &xs[todo[j]]);
    for (int i = 0; i < n; i++)
        if (xs[i].shared > 1) xs[i].res = xs[xs[i].shared - 1].res;
    for (int j = 0; j < nt; j++) {
        slot *x = &xs[todo[j]];
        if (x->res.budget_skipped) continue; /* not solved: neither cached nor counted */
        cache_add(S, x->pr, x->hash, &x->res);
        S->st.ilp_time_limit_hits += x->res.time_limit_hit;
        S->st.ilp_solved++;
    }
    free(todo);
}

static void phase_b(search *S, slot *xs, int n)
{
    double thr = threshold(S);
    int m = 0;
    for (int i = 0; i < n; i++) {
        xs[i].need_ilp = xs[i].costed && xs[i].need_ilp && xs[i].k->lb <= thr * (1 + LB_SLACK);
        m += xs[i].need_ilp;
    }
    if (!m) return;
#pragma omp parallel for schedule(dynamic, 1) num_threads(S->threads)
    for (int i = 0; i < n; i++)
        if (xs[i].need_ilp) build_one(S, &xs[i], thr);
    for (int i = 0; i < n; i++) {
        S->st.probes += xs[i].probes;
        S->st.ilp_bounded += xs[i].bounded;
    }
    solve_distinct(S, xs, n);
#pragma omp parallel for schedule(dynamic, 1) num_threads(S->threads)
    for (int i = 0; i < n; i++)
        if (xs[i].need_ilp) apply_one(S, &xs[i]);
    for (int i = 0; i < n; i++) {
        slot *x = &xs[i];
        if (!x->need_ilp) continue;
        S->st.ilp_considered++;
        S->st.ilp_cache_hits += x->build_ok && x->shared && !x->res.budget_skipped;
        S->st.ilp_budget_skipped += x->res.budget_skipped;
        S->st.ilp_fallbacks += x->how;
        if (!x->improved) continue;
        S->st.ilp_improved++;
        if (x->even) retract(S, x->even);
        offer(S, &x->plan);
    }
}

/* ------------------------------------------------------------ chunks */

static void run_chunk(search *S, const pp__cand *ks, int n, slot *xs)
{
    memset(xs, 0, (size_t)n * sizeof *xs);
    for (int i = 0; i < n; i++) xs[i].k = &ks[i];
#pragma omp parallel num_threads(S->threads)
    {
        pp_memory *mem = malloc(sizeof *mem);
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < n; i++)
            if (mem) eval_even(S, &xs[i], mem);
        free(mem);
    }
    for (int i = 0; i < n; i++) {
        if (!xs[i].costed) continue;
        S->st.costed++;
        S->st.fitting += xs[i].plan.memory.fits;
        offer(S, &xs[i].plan);
    }
    phase_b(S, xs, n);
    for (int i = 0; i < n; i++) {
        free(xs[i].pr);
        free(xs[i].even);
    }
}

static int cand_cmp(const void *a, const void *b)
{
    const pp__cand *x = a, *y = b;
    if (x->lb != y->lb) return x->lb < y->lb ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Moves the k smallest of v[0..n) to the front (quickselect, total order). */
static void select_front(pp__cand *v, long long n, long long k)
{
    long long lo = 0, hi = n - 1;
    while (lo < hi) {
        pp__cand pivot = v[lo + (hi - lo) / 2];
        long long i = lo, j = hi;
        while (i <= j) {
            while (cand_cmp(&v[i], &pivot) < 0) i++;
            while (cand_cmp(&v[j], &pivot) > 0) j--;
            if (i <= j) {
                pp__cand t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (k - 1 <= j) hi = j;
        else if (k - 1 >= i) lo = i;
        else return;
    }
}

/* Drops candidates whose bound exceeds the threshold; returns the new count. */
static long long filter(const search *S, pp__cand *v, long long n)
{
    double thr = threshold(S);
    if (!isfinite(thr)) return n;
    long long m = 0;
    for (long long i = 0; i < n; i++)
        if (v[i].lb <= thr * (1 + LB_SLACK)) v[m++] = v[i];
    return m;
}

static void run_all(search *S, pp__cand *v, long long n)
{
    slot *xs = malloc(CHUNK * sizeof *xs);
    if (!xs) {
        S->failed = 1;
        return;
    }
    long long done = 0, left = n, total = n;
    while (left > 0) {
        long long take = left < SUPER ? left : SUPER;
        select_front(v, left, take);
        qsort(v, (size_t)take, sizeof *v, cand_cmp);
        long long pos = 0;
        while (pos < take) {
            double thr = threshold(S);
            if (v[pos].lb > thr * (1 + LB_SLACK)) break; /* sorted: the rest are worse too */
            int c = (int)(take - pos < CHUNK ? take - pos : CHUNK), m = 0;
            while (m < c && v[pos + m].lb <= thr * (1 + LB_SLACK)) m++;
            run_chunk(S, v + pos, m, xs);
            pos += m;
            done += m;
        }
        v += take;
        left -= take;
        left = filter(S, v, left);
    }
    S->st.pruned_bound = total - done;
    free(xs);
}

/* ------------------------------------------------------------ entry */

static pp_status no_valid(const pp__space *sp, const long long *hits, char (*why)[PP_ERR_LEN], pp_error *err)
{
    int r = 0;
    for (int i = 1; i < PP_RULE_COUNT; i++)
        if (hits[i] > hits[r]) r = i;
    char eg[PP_ERR_LEN] = ""; /* the first refusal, worded */
    if (why && why[r][0]) {
        const char *tag = strstr(why[r], " [rule "); /* the rule is named already */
        snprintf(eg, sizeof eg, " (e.g. %.*s)", tag ? (int)(tag - why[r]) : 300, why[r]);
    }
    /* a framework that cannot build or launch the model refuses every
     * strategy, whichever rule a combination meets first: said first */
    static const pp_rule decisive[] = {PP_RULE_FW_LAUNCHER, PP_RULE_FW_ARCH};
    for (size_t k = 0; k < sizeof decisive / sizeof *decisive; k++) {
        int d = (int)decisive[k];
        if (d == r || !hits[d] || !why || !why[d][0]) continue;
        const char *tag = strstr(why[d], " [rule ");
        pp__fail(err, PP_ERR_INPUT,
                 "no valid strategy for %s on %d GPUs with global_batch %d and seq %d under the given restrictions; "
                 "rule %s: %.*s (most combinations also break the rule %s)", sp->m->name, sp->gpus, sp->o.global_batch,
                 sp->seq, pp_rule_get((pp_rule)d)->id, tag ? (int)(tag - why[d]) : 300, why[d], pp_rule_get((pp_rule)r)->id);
        if (err) err->rule = d;
        return PP_ERR_INPUT;
    }
    pp__fail(err, PP_ERR_INPUT,
             "no valid strategy for %s on %d GPUs with global_batch %d and seq %d under the given restrictions; "
             "most combinations break the rule %s: %s%s",
             sp->m->name, sp->gpus, sp->o.global_batch, sp->seq, pp_rule_get((pp_rule)r)->id, pp_rule_get((pp_rule)r)->text, eg);
    if (err) err->rule = r;
    return PP_ERR_INPUT;
}

/* A restriction no framework in the mask can run at all ("--framework
 * megatron --zero 3"): said with the dimension, its values and the
 * framework's rule, before any search. */
typedef struct pinned {
    const char *dim;
    pp_rule rule;
    const pp_int_set *set; /* integer dimensions */
    unsigned mask;         /* enum dimensions (bit per value); 0 = not restricted */
    int enum_kind;         /* PP_ENUM_* for mask, -1 for set */
} pinned;

static int fw_takes(pp_framework f, const pinned *p)
{
    if (p->set) {
        for (int i = 0; i < p->set->n; i++)
            if (pp_framework_supports(f, p->dim, p->set->v[i])) return 1;
        return 0;
    }
    for (int v = 0; v < 32; v++)
        if (p->mask >> v & 1 && pp_framework_supports(f, p->dim, v)) return 1;
    return 0;
}

static void pinned_values(const pinned *p, char *out, size_t cap)
{
    size_t used = 0;
    int n = 0;
    const char *const *names = p->set ? NULL : pp_enum_names(p->enum_kind, &n);
    out[0] = '\0';
    for (int i = 0; p->set && i < p->set->n; i++)
        used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%s%d", i ? "," : "", p->set->v[i]);
    for (int v = 0, k = 0; !p->set && v < n; v++)
        if (p->mask >> v & 1) used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%s%s", k++ ? "," : "", names[v]);
}

/* What framework f runs of p's dimension: "0,1", "bf16,fp16", "1 only". */
static void supported_values(const pinned *p, pp_framework f, char *out, size_t cap)
{
    size_t used = 0;
    int n = 4;
    const char *const *names = p->set ? NULL : pp_enum_names(p->enum_kind, &n);
    if (p->set && strcmp(p->dim, "zero")) {
        int more = pp_framework_supports(f, p->dim, 2);
        snprintf(out, cap, "%s", !strcmp(p->dim, "sp") ? (pp_framework_supports(f, "sp", 1) ? "sp" : "no sp")
                                 : more ? "any" : "1 only");
        return;
    }
    out[0] = '\0';
    for (int v = 0, k = 0; v < n; v++)
        if (pp_framework_supports(f, p->dim, v) && !(names && p->enum_kind == PP_ENUM_PRECISION && v == PP_PREC_TF32))
            used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%s%s", k++ ? "," : "",
                                     names ? names[v] : (char[2]){(char)('0' + v), 0});
    if (!used) snprintf(out, cap, "none");
}

static pp_status frameworks_take_restrictions(const pp_search_opts *o, pp_error *err)
{
    /* degrees above 1 need the framework's support; 1 every framework runs */
    pp_int_set tp = {0}, pp = {0}, cp = {0}, ep = {0};
    const pp_int_set *deg[] = {&o->tp, &o->pp, &o->cp, &o->ep};
    pp_int_set *big[] = {&tp, &pp, &cp, &ep};
    for (int d = 0; d < 4; d++) {
        int one = 0;
        for (int i = 0; i < deg[d]->n; i++) one |= deg[d]->v[i] == 1;
        if (!one) *big[d] = *deg[d];
    }
    const pinned ps[] = {
        {"zero", PP_RULE_FW_ZERO, o->zero.n ? &o->zero : NULL, 0, -1},
        {"tp", PP_RULE_FW_TP, tp.n ? &tp : NULL, 0, -1},
        {"pp", PP_RULE_FW_PP, pp.n ? &pp : NULL, 0, -1},
        {"cp", PP_RULE_FW_CP, cp.n ? &cp : NULL, 0, -1},
        {"ep", PP_RULE_FW_EP, ep.n ? &ep : NULL, 0, -1},
        {"sp", PP_RULE_FW_SP, o->sp.n ? &o->sp : NULL, 0, -1},
        {"offload", PP_RULE_FW_OFFLOAD, NULL, o->offloads, PP_ENUM_OFFLOAD},
        {"schedule", PP_RULE_FW_SCHEDULE, NULL, o->schedules, PP_ENUM_SCHEDULE},
        {"precision", PP_RULE_FW_PRECISION, NULL, o->precisions, PP_ENUM_PRECISION},
        {"recompute", PP_RULE_FW_RECOMPUTE, NULL, o->recomputes, PP_ENUM_RECOMPUTE},
    };
    unsigned fws = o->frameworks ? o->frameworks : (1u << PP_FW_COUNT) - 1;
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) {
        if (!ps[i].set && !ps[i].mask) continue;
        int any = 0, first = -1;
        for (int f = 0; f < PP_FW_COUNT; f++)
            if (fws >> f & 1) {
                if (first < 0) first = f;
                any |= fw_takes((pp_framework)f, &ps[i]);
            }
        if (any || first < 0) continue;
        char vals[128], who[256] = "";
        pinned_values(&ps[i], vals, sizeof vals);
        size_t used = 0;
        for (int f = 0; f < PP_FW_COUNT; f++)
            if (fws >> f & 1) {
                char can[96];
                supported_values(&ps[i], (pp_framework)f, can, sizeof can);
                used += (size_t)snprintf(who + used, used < sizeof who ? sizeof who - used : 0, "%s%s runs %s",
                                         used ? "; " : "", pp_framework_name((pp_framework)f), can);
            }
        pp__fail_field(err, ps[i].rule, ps[i].dim, vals, "no framework asked for runs it: %s (parplan frameworks) "
                       "[rule %s]", who, pp_rule_get(ps[i].rule)->id);
        return PP_ERR_INPUT;
    }
    return PP_OK;
}

/* A pinned activation offload (base.act_offload_layers) holds for every
 * candidate or none (rule fw-act-offload): said before searching, naming
 * what stands in its way. */
static pp_status act_offload_takes(const pp_model *m, const pp_search_opts *o, pp_error *err)
{
    int n = o->base.act_offload_layers;
    char v[16];
    snprintf(v, sizeof v, "%d", n);
    const pp_rule r = PP_RULE_FW_ACT_OFFLOAD;
    if (n == 0) return PP_OK;
    if (n < 0 || n >= m->layers)
        return pp__fail_field(err, r, "act_offload_layers", v, "expected 1 to %d: Megatron offloads fewer blocks than "
                              "%s has (%d) [rule fw-act-offload]", m->layers - 1, m->name, m->layers);
    unsigned fws = o->frameworks ? o->frameworks : (1u << PP_FW_COUNT) - 1;
    int any = 0;
    for (int f = 0; f < PP_FW_COUNT; f++) any |= (fws >> f & 1) && pp_framework_supports((pp_framework)f, "act_offload", 1);
    if (!any)
        return pp__fail_field(err, r, "act_offload_layers", v, "no framework asked for offloads activations: only "
                              "megatron does (parplan frameworks) [rule fw-act-offload]");
    int pp1 = !o->pp.n;
    for (int i = 0; i < o->pp.n; i++) pp1 |= o->pp.v[i] == 1;
    if (!pp1)
        return pp__fail_field(err, r, "pp", o->pp.n ? (snprintf(v, sizeof v, "%d", o->pp.v[0]), v) : "", "Megatron-Core "
                              "has no CPU offloading with pipeline parallelism (pp must be 1) [rule fw-act-offload]");
    if (o->recomputes && !(o->recomputes >> PP_RECOMPUTE_NONE & 1))
        return pp__fail_field(err, r, "recompute", pp_recompute_name(__builtin_ctz(o->recomputes)), "Megatron-Core's "
                              "CPU offloading does not work with activation recomputation [rule fw-act-offload]");
    return PP_OK;
}

/* The first framework asked for (all when none is) that has value v of
 * dimension dim (pp_framework_supports), or -1. */
static int first_fw_with(const pp_search_opts *o, const char *dim, int v)
{
    unsigned fws = o->frameworks ? o->frameworks : (1u << PP_FW_COUNT) - 1;
    for (int f = 0; f < PP_FW_COUNT; f++)
        if ((fws >> f & 1) && pp_framework_supports((pp_framework)f, dim, v)) return f;
    return -1;
}

/* Pinned bf16 optimizer states (base.opt_states) hold for every candidate
 * or none: said before searching. No framework asked for keeps them, or
 * rule fw-opt-states refuses the base on one that does, at ZeRO-1 and a
 * bf16 (or fp8) precision where the restrictions allow them, else the
 * first they give (the rule names the field). */
static pp_status opt_states_take(const pp_model *m, const pp_cluster *c, const pp_search_opts *o, pp_error *err)
{
    if (o->base.opt_states != PP_OPT_STATES_BF16) return PP_OK;
    int fw = first_fw_with(o, "opt_states", PP_OPT_STATES_BF16);
    if (fw < 0)
        return pp__fail_field(err, PP_RULE_FW_OPT_STATES, "opt_states", "bf16", "no framework asked for keeps bf16 "
                              "optimizer states: only megatron does (parplan frameworks) [rule fw-opt-states]");
    pp_strategy s = o->base;
    s.framework = (pp_framework)fw;
    s.zero = o->zero.n ? o->zero.v[0] : 1;
    for (int i = 0; i < o->zero.n; i++)
        if (o->zero.v[i] == 1) s.zero = 1;
    unsigned p = o->precisions ? o->precisions : 1u << PP_PREC_BF16;
    s.precision = p >> PP_PREC_BF16 & 1 ? PP_PREC_BF16 : p >> PP_PREC_FP8 & 1 ? PP_PREC_FP8 : (pp_precision)__builtin_ctz(p);
    pp__rule_ctx x = {m, c, &s, 0};
    return pp__rule_eval(&x, PP_RULE_FW_OPT_STATES, err) ? PP_OK : PP_ERR_INPUT;
}

/* Pinned recompute modules (base.recompute_modules) are what every
 * selective candidate recomputes, under megatron only: said before
 * searching when no framework asked for has them, selective recompute is
 * not searched, or rule fw-recompute-modules refuses the set for the model. */
static pp_status rc_modules_take(const pp_model *m, const pp_cluster *c, const pp_search_opts *o, pp_error *err)
{
    if (!o->base.recompute_modules) return PP_OK;
    char mods[96];
    pp_rc_modules_format(o->base.recompute_modules, ',', mods, sizeof mods);
    int fw = first_fw_with(o, "recompute_modules", 1);
    if (fw < 0)
        return pp__fail_field(err, PP_RULE_FW_RC_MODULES, "recompute_modules", mods, "no framework asked for has "
                              "recompute modules: only megatron does (parplan frameworks) [rule fw-recompute-modules]");
    if (o->recomputes && !(o->recomputes >> PP_RECOMPUTE_SELECTIVE & 1)) {
        char asked[48] = "";
        for (int r = 0; r < PP_RECOMPUTE_COUNT; r++)
            if (o->recomputes >> r & 1)
                snprintf(asked + strlen(asked), sizeof asked - strlen(asked), "%s%s", *asked ? "," : "", pp_recompute_name(r));
        return pp__fail_field(err, PP_RULE_FW_RC_MODULES, "recompute", asked, "recompute modules %s need selective "
                              "recompute among those searched [rule fw-recompute-modules]", mods);
    }
    pp_strategy s = o->base;
    s.framework = (pp_framework)fw;
    s.recompute = PP_RECOMPUTE_SELECTIVE;
    pp__rule_ctx x = {m, c, &s, 0};
    return pp__rule_eval(&x, PP_RULE_FW_RC_MODULES, err) ? PP_OK : PP_ERR_INPUT;
}

static pp_status search_run(const pp_model *m, const pp_cluster *c, const pp_search_opts *o, ctl cl, pp_plan_list *list,
                            pp_error *err)
{
    pp__space *sp = malloc(sizeof *sp);
    search S;
    pp__cand *v = NULL;
    long long n = 0, hits[PP_RULE_COUNT];
    char (*why)[PP_ERR_LEN] = calloc(PP_RULE_COUNT, sizeof *why);
    memset(&S, 0, sizeof S);
    pp__bounds *b = pp__bounds_new();
    pp_status st = sp && b ? frameworks_take_restrictions(o, err) : pp__fail(err, PP_ERR_NOMEM, "out of memory");
    if (st == PP_OK) st = act_offload_takes(m, o, err);
    if (st == PP_OK) st = opt_states_take(m, c, o, err);
    if (st == PP_OK) st = rc_modules_take(m, c, o, err);
    if (st == PP_OK) st = pp__space_init(sp, m, c, o, err);
    if (st) goto cleanup;
    list->objective = o->objective;
    list->usable_bytes = sp->usable;
    S.sp = sp;
    S.ctl = cl;
    S.k = o->top_k;
#ifdef _OPENMP
    S.threads = o->threads > 0 ? o->threads : omp_get_max_threads();
#else
    S.threads = 1;
#endif
    S.top = malloc((size_t)S.k * sizeof *S.top);
    if (!S.top) {
        st = pp__fail(err, PP_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    if ((st = pp__space_enumerate(sp, b, cl.prune_memory ? sp->usable : HUGE_VAL, &v, &n, &S.st.enumerated,
                                  &S.st.pruned_memory, hits, why, err)))
        goto cleanup;
    if (S.st.enumerated == 0) {
        st = no_valid(sp, hits, why, err);
        goto cleanup;
    }
    run_all(&S, v, n);
    S.st.probes += pp__bounds_probes(b);
    if (S.failed) {
        st = pp__fail(err, PP_ERR_NOMEM, "out of memory during the search");
        goto cleanup;
    }
    list->stats = S.st;
    list->n = S.n;
    list->plans = S.n ? S.top : NULL;
    if (S.n) S.top = NULL;
    st = S.n ? PP_OK : PP_ERR_INFEASIBLE;
cleanup:
    free(why);
    for (int i = 0; i < S.ncache; i++) free(S.cache[i].pr);
    free(S.cache);
    free(S.top);
    free(v);
    pp__bounds_free(b);
    free(sp);
    return st;
}

pp_status pp_plan_search(const pp_model *m, const pp_cluster *c, const pp_search_opts *o, pp_plan_list *list,
                         pp_error *err)
{
    PP__C_NUMERIC;
    memset(list, 0, sizeof *list);
    ctl cl = {0, 1};
    pp_status st = search_run(m, c, o, cl, list, err);
    if (st != PP_ERR_INFEASIBLE) return st;
    /* nothing fits: find the candidate that needs the least memory */
    pp_search_opts lo = *o;
    lo.objective = PP_OBJ_MEMORY;
    lo.top_k = 1;
    pp_plan_list near;
    memset(&near, 0, sizeof near);
    ctl nl = {1, 0};
    pp_error e2;
    if (search_run(m, c, &lo, nl, &near, &e2) == PP_OK && near.n) {
        list->nearest = near.plans;
        near.plans = NULL;
    }
    pp_plan_list_free(&near);
    double gib = 1073741824.0;
    const pp_memory *nm = list->nearest ? &list->nearest->memory : NULL;
    /* a plan whose GPU memory fits fails on the host or the drives: say that (red team rt8) */
    if (nm && nm->peak_bytes <= list->usable_bytes && !nm->host_fits)
        return pp__fail(err, PP_ERR_INFEASIBLE,
                        "nothing fits: the least-memory plan fits the GPU (%.2f of %.2f GiB) but not the host: its "
                        "offloaded states need %.1f GiB of host memory per node, %.1f GiB usable",
                        nm->peak_bytes / gib, list->usable_bytes / gib, nm->host_bytes_per_node / gib,
                        nm->host_usable_bytes / gib);
    if (nm && nm->peak_bytes <= list->usable_bytes && !nm->nvme_fits)
        return pp__fail(err, PP_ERR_INFEASIBLE,
                        "nothing fits: the least-memory plan fits the GPU (%.2f of %.2f GiB) but not the NVMe drives: "
                        "its swapped states need %.1f GB per node, %.1f GB there",
                        nm->peak_bytes / gib, list->usable_bytes / gib, nm->nvme_bytes_per_node / 1e9,
                        nm->nvme_usable_bytes / 1e9);
    if (nm)
        return pp__fail(err, PP_ERR_INFEASIBLE,
                        "nothing fits: the least memory any plan needs is %.2f GiB per GPU (stage %d) of %.2f GiB usable",
                        nm->peak_bytes / gib, nm->peak_stage, list->usable_bytes / gib);
    return pp__fail(err, PP_ERR_INFEASIBLE, "nothing fits in %.2f GiB per GPU", list->usable_bytes / gib);
}

void pp_plan_list_free(pp_plan_list *list)
{
    if (!list) return;
    free(list->plans);
    free(list->nearest);
    list->plans = NULL;
    list->nearest = NULL;
    list->n = 0;
}
