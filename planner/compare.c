/*
 * compare.c — what-if analysis (docs/compare.md): one model on several
 * cluster types and GPU counts. Each option is one pp_plan_search (top 1);
 * then time, cost, energy and tokens/s per $ for T tokens, the Pareto front
 * of (days, cost), the cheapest option meeting a deadline and a budget, and
 * per cluster type the smallest GPU count meeting the deadline: a bounded
 * search over whole nodes (grow by doubling, or by the linear-scaling
 * estimate when larger; shrink by halving; then bisection).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner.h"

#define HOURS_PER_YEAR 8766.0      /* 365.25 days x 24 h */
#define PP_COMPARE_GPUS_MAX (1 << 20) /* pp_cluster_resize's limit */

static const char *const price_kind_names[PP_PRICE_KIND_COUNT] = {
    [PP_PRICE_NONE] = "none", [PP_PRICE_CATALOG] = "catalog", [PP_PRICE_OVERRIDE] = "override",
    [PP_PRICE_PURCHASE] = "purchase"};

const char *pp_price_kind_name(pp_price_kind k)
{
    return k >= 0 && k < PP_PRICE_KIND_COUNT ? price_kind_names[k] : "?";
}

pp_precision pp_compare_default_precision(const pp_gpu *g)
{
    return g->peak_flops[PP_PREC_BF16] > 0 ? PP_PREC_BF16 : PP_PREC_FP16;
}

double pp_compare_mfu_bf16(const pp_cluster *c, const pp_plan *p)
{
    double peak = c->gpu.peak_flops[pp_compare_default_precision(&c->gpu)];
    double den = p->time.step_s * pp_cluster_gpus(c) * peak;
    return den > 0 ? p->throughput.model_flops_per_step / den : NAN;
}

const char *pp_price_basis(pp_price_kind k)
{
    switch (k) {
    case PP_PRICE_CATALOG: return "on-demand";
    case PP_PRICE_OVERRIDE: return "given";
    case PP_PRICE_PURCHASE: return "purchase";
    default: return "none";
    }
}

void pp_compare_opts_default(pp_compare_opts *o)
{
    memset(o, 0, sizeof *o);
    pp_search_opts_default(&o->search);
    o->search.top_k = 1;
    o->deadline_search = 1;
    o->max_nodes = 4096;
    o->max_probes = 24;
}

void pp_compare_free(pp_compare_result *r)
{
    if (!r) return;
    free(r->clusters);
    free(r->options);
    free(r->front);
    r->clusters = NULL;
    r->options = NULL;
    r->front = NULL;
    r->n = r->nfront = r->nclusters = 0;
}

/* ------------------------------------------------------------ Pareto front */

typedef struct pt {
    double x, y;
    int i;
} pt;

static int pt_cmp(const void *pa, const void *pb)
{
    const pt *a = pa, *b = pb;
    if (a->x != b->x) return a->x < b->x ? -1 : 1;
    if (a->y != b->y) return a->y < b->y ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* Sort by x then y; sweep keeping the least y seen. A point is on the front
 * when its y is below every y of a strictly smaller x, and it ties the best
 * of its own x (equal points are all kept). */
int pp_pareto_front(const double *x, const double *y, int n, int *on_front)
{
    PP__C_NUMERIC;
    if (n <= 0) return 0;
    pt *v = malloc((size_t)n * sizeof *v);
    if (!v) return -1;
    int m = 0;
    for (int i = 0; i < n; i++) {
        on_front[i] = 0;
        if (!isnan(x[i]) && !isnan(y[i])) v[m++] = (pt){x[i], y[i], i};
    }
    qsort(v, (size_t)m, sizeof *v, pt_cmp);
    double best = INFINITY; /* least y over strictly smaller x */
    for (int a = 0; a < m;) {
        int b = a;
        while (b < m && v[b].x == v[a].x) b++;
        double ymin = v[a].y; /* sorted: the first of the group has the least y */
        if (ymin < best)
            for (int k = a; k < b && v[k].y == ymin; k++) on_front[v[k].i] = 1;
        if (ymin < best) best = ymin;
        a = b;
    }
    free(v);
    return 0;
}

/* ------------------------------------------------------------ evaluation */

typedef struct ctx {
    const pp_model *m;
    const pp_compare_cluster *cl;
    int ncl;
    pp_compare_opts o;
    const pp_compare_opts *user; /* for the progress callback */
    pp_compare_option *ev;       /* every evaluation, the cache */
    int nev, cap;
    int done;
} ctx;

static void price_of(const pp_compare_opts *o, const pp_compare_cluster *cc, pp_compare_option *e)
{
    const pp_gpu *g = &cc->cluster.gpu;
    e->price_date[0] = '\0';
    if (cc->purchase_usd_per_gpu > 0) {
        e->price_kind = PP_PRICE_PURCHASE;
        e->usd_per_gpu_hour =
            cc->purchase_usd_per_gpu / (o->amortize_years * HOURS_PER_YEAR) + g->tdp_w / 1000 * o->usd_per_kwh;
    } else if (cc->price_usd_per_gpu_hour > 0) {
        e->price_kind = PP_PRICE_OVERRIDE;
        e->usd_per_gpu_hour = cc->price_usd_per_gpu_hour;
    } else if (g->price_usd_per_hour > 0) {
        e->price_kind = PP_PRICE_CATALOG;
        e->usd_per_gpu_hour = g->price_usd_per_hour;
        memcpy(e->price_date, g->price_date, sizeof e->price_date);
        e->price_date[sizeof e->price_date - 1] = '\0';
    } else {
        e->price_kind = PP_PRICE_NONE;
        e->usd_per_gpu_hour = NAN;
    }
}

/* Time, cost, energy and rates of an option with a plan (pp_plan_train:
 * days = tokens / (G s) x step / 86400; GPU-hours = days x 24 x GPUs;
 * cost = GPU-hours x rate; energy = GPU-hours x TDP / 1000). */
static void fill_metrics(const pp_compare_opts *o, const pp_cluster *c, pp_compare_option *e)
{
    double rate = e->usd_per_gpu_hour;
    pp_plan_train(c, &e->plan, o->train_tokens, isfinite(rate) ? rate : 0, 0);
    e->days = e->plan.train.days;
    e->gpu_hours = e->plan.train.gpu_hours;
    e->energy_kwh = e->plan.train.energy_kwh;
    e->tokens_per_s = e->plan.throughput.tokens_per_s;
    e->mfu_bf16 = pp_compare_mfu_bf16(c, &e->plan);
    if (isfinite(rate)) {
        e->cost_usd = e->plan.train.cost_usd;
        e->tokens_per_s_per_usd_hour = e->tokens_per_s / (e->gpus * rate);
        e->tokens_per_usd = 3600 * e->tokens_per_s_per_usd_hour;
    } else {
        e->plan.train.cost_usd = NAN;
        e->cost_usd = e->tokens_per_s_per_usd_hour = e->tokens_per_usd = NAN;
    }
}

/* Cluster type cc resized to gpus (whole nodes, or one partial node). */
static pp_status sized(const pp_compare_cluster *cc, int gpus, pp_cluster *c, pp_error *err)
{
    *c = cc->cluster;
    pp_error e = {""};
    if (pp_cluster_resize(c, 0, gpus, &e) != PP_OK) return pp__fail(err, PP_ERR_INPUT, "%s: %s", cc->cluster.name, e.msg);
    return PP_OK;
}

/* An option without a plan yet: where, at what price; NaN metrics. */
static void option_init(const pp_compare_opts *o, const pp_compare_cluster *cc, const pp_cluster *c, int gpus,
                        pp_compare_option *e)
{
    memset(e, 0, sizeof *e);
    e->gpus = gpus;
    e->nodes = c->nodes;
    price_of(o, cc, e);
    e->days = e->gpu_hours = e->cost_usd = e->energy_kwh = NAN;
    e->tokens_per_s = e->tokens_per_s_per_usd_hour = e->tokens_per_usd = e->mfu_bf16 = NAN;
}

pp_status pp_compare_option_eval(const pp_compare_opts *o, const pp_compare_cluster *cc, int gpus,
                                 const pp_plan *plan, pp_compare_option *out, pp_error *err)
{
    PP__C_NUMERIC;
    pp_cluster c;
    pp_status st = sized(cc, gpus, &c, err);
    if (st != PP_OK) return st;
    option_init(o, cc, &c, gpus, out);
    out->status = PP_OK;
    out->plan = *plan;
    fill_metrics(o, &c, out);
    return PP_OK;
}

static int find_ev(const ctx *X, int ci, int gpus)
{
    for (int i = 0; i < X->nev; i++)
        if (X->ev[i].cluster == ci && X->ev[i].gpus == gpus) return i;
    return -1;
}

/* Evaluates cluster type ci at gpus (once: later calls hit the cache) and
 * sets *idx to the evaluation. A search that finds nothing is a result,
 * not an error; errors are out of memory, an internal error, or a count
 * the cluster cannot take. *fresh (may be NULL): 1 when not cached. */
static pp_status evaluate(ctx *X, int ci, int gpus, int *idx, int *fresh, pp_error *err)
{
    int k = find_ev(X, ci, gpus);
    if (fresh) *fresh = k < 0;
    *idx = k;
    if (k >= 0) return PP_OK;
    pp_cluster c;
    pp_status rs = sized(&X->cl[ci], gpus, &c, err);
    if (rs != PP_OK) return rs;
    if (X->nev == X->cap) {
        int cap = X->cap ? 2 * X->cap : 16;
        pp_compare_option *v = realloc(X->ev, (size_t)cap * sizeof *v);
        if (!v) return pp__fail(err, PP_ERR_NOMEM, "out of memory");
        X->ev = v;
        X->cap = cap;
    }
    pp_compare_option *e = &X->ev[X->nev];
    option_init(&X->o, &X->cl[ci], &c, gpus, e);
    e->cluster = ci;
    pp_search_opts so = X->o.search;
    so.top_k = 1;
    /* one precision for every option unless asked (a faster number type on
     * one GPU is not a faster GPU): bf16, fp16 where the GPU has no bf16 */
    if (!so.precisions) so.precisions = 1u << pp_compare_default_precision(&c.gpu);
    else { /* a list asked for: each GPU runs those of them it has (fp8 where there is fp8) */
        unsigned have = 0;
        for (int p = 0; p < PP_PREC_COUNT; p++)
            if (c.gpu.peak_flops[p] > 0) have |= 1u << p;
        if (so.precisions & have) so.precisions &= have;
    }
    /* The cost objective ranks by $ per token at this option's rate; with
     * the GPU count and the batch fixed it orders plans as throughput does,
     * so an option without a price searches by throughput. */
    if (so.objective == PP_OBJ_COST) {
        if (isfinite(e->usd_per_gpu_hour)) so.price_usd_per_gpu_hour = e->usd_per_gpu_hour;
        else so.objective = PP_OBJ_THROUGHPUT;
    }
    pp_plan_list list;
    pp_error se = {""};
    pp_status st = pp_plan_search(X->m, &c, &so, &list, &se);
    X->nev++;
    e->status = st;
    if (st == PP_OK) {
        e->plan = list.plans[0];
        fill_metrics(&X->o, &c, e);
    } else {
        snprintf(e->error, sizeof e->error, "%s", se.msg[0] ? se.msg : pp_status_str(st));
    }
    pp_plan_list_free(&list);
    if (st != PP_OK && st != PP_ERR_INFEASIBLE && st != PP_ERR_INPUT)
        return pp__fail(err, st, "%s on %d GPUs: %s", X->cl[ci].cluster.name, gpus, e->error);
    X->done++;
    if (X->user->progress) X->user->progress(X->user->progress_user, X->done, e);
    *idx = X->nev - 1;
    return PP_OK;
}

static int meets(const ctx *X, const pp_compare_option *e)
{
    return e->status == PP_OK && e->days <= X->o.deadline_days;
}

/* ------------------------------------------------------------ deadline search */

typedef struct bracket {
    int lo, hi;        /* nodes: lo does not meet (0 = none known), hi meets (0 = none known) */
    double dlo, dhi;   /* days at lo and hi (NaN: no plan) */
    int planless[PP_COMPARE_MAX_PROBES]; /* counts between with no valid strategy: no evidence either way */
    int nplanless;
} bracket;

static int is_planless(const bracket *b, int n)
{
    for (int i = 0; i < b->nplanless; i++)
        if (b->planless[i] == n) return 1;
    return 0;
}

static int twos(int n) { return n > 0 ? __builtin_ctz((unsigned)n) : 0; }

/* The count to try between lo and hi: the one with most factors of two
 * (a global batch splits over it; red team rt8: counts such as 85 or 73
 * nodes have no strategy, or a poor one, and must not decide the bracket),
 * nearest the middle; 0 when every count between has no plan. */
static int between(const bracket *b)
{
    int mid = b->lo + (b->hi - b->lo) / 2, best = 0;
    long score = -1;
    for (int n = b->lo + 1; n < b->hi; n++) {
        if (is_planless(b, n)) continue;
        long sc = (long)twos(n) * 1000000L - labs((long)(n - mid));
        if (sc > score) score = sc, best = n;
    }
    return best;
}

/* Seeds the bracket from counts already evaluated (whole nodes only). */
static void seed(const ctx *X, int ci, int gpn, bracket *b)
{
    memset(b, 0, sizeof *b);
    b->dlo = b->dhi = NAN;
    for (int i = 0; i < X->nev; i++) {
        const pp_compare_option *e = &X->ev[i];
        if (e->cluster != ci || e->gpus % gpn || !meets(X, e)) continue;
        int n = e->gpus / gpn;
        if (!b->hi || n < b->hi) b->hi = n, b->dhi = e->days;
    }
    for (int i = 0; i < X->nev; i++) {
        const pp_compare_option *e = &X->ev[i];
        if (e->cluster != ci || e->gpus % gpn || meets(X, e)) continue;
        int n = e->gpus / gpn;
        if ((!b->hi || n < b->hi) && n > b->lo) b->lo = n, b->dlo = e->days;
    }
}

/* The count in [a, b] with most factors of two, the smallest (up) or the
 * largest (down) among them: a guess rounded to a count a batch splits over. */
static int roundest(int a, int b, int up)
{
    int best = up ? a : b;
    for (int n = a; n <= b; n++)
        if (twos(n) > twos(best) || (!up && twos(n) == twos(best))) best = n;
    return best;
}

/* The next node count to try, or 0 to stop (the note says why). */
static int next_count(const ctx *X, const bracket *b, int gpn, pp_compare_min *mn)
{
    double D = X->o.deadline_days;
    int maxn = X->o.max_nodes < PP_COMPARE_GPUS_MAX / gpn ? X->o.max_nodes : PP_COMPARE_GPUS_MAX / gpn;
    if (b->hi) {
        if (b->lo == 0) { /* shrink: halve, or lower when the linear estimate says so */
            double guess = isfinite(b->dhi) ? floor(b->hi * b->dhi / D) : 1;
            int next = (int)fmax(1, fmin(guess, b->hi / 2));
            next = roundest((int)ceil(0.8 * next), next, 0);
            while (next > 1 && is_planless(b, next)) next--; /* set aside: try the next below */
            return is_planless(b, next) ? 0 : next;
        }
        return between(b);
    }
    if (b->lo >= maxn) {
        snprintf(mn->note, sizeof mn->note, "no count up to %d nodes meets the deadline (the search bound)", maxn);
        return 0;
    }
    if (b->lo == 0) return 1;
    /* grow: double, or jump to the linear-scaling estimate when larger */
    double guess = isfinite(b->dlo) ? ceil(b->lo * b->dlo / D) : 0;
    int next = (int)fmin(maxn, fmax(2.0 * b->lo, guess));
    return roundest(next, (int)fmin(maxn, floor(1.25 * next)), 1);
}

static pp_status min_search(ctx *X, int ci, pp_compare_min *mn, pp_error *err)
{
    int gpn = X->cl[ci].cluster.gpus_per_node;
    if (gpn < 1) gpn = 1;
    bracket b;
    seed(X, ci, gpn, &b);
    int stall = 0;
    double prev = NAN;
    mn->option = -1;
    while (!(b.hi && b.hi - b.lo <= 1)) {
        if (mn->probes >= X->o.max_probes) {
            snprintf(mn->note, sizeof mn->note, "search stopped after %d evaluations (the bound)", mn->probes);
            break;
        }
        int n = next_count(X, &b, gpn, mn);
        if (n <= 0) break;
        int fresh, k;
        pp_status st = evaluate(X, ci, n * gpn, &k, &fresh, err);
        if (st != PP_OK) return st;
        const pp_compare_option *e = &X->ev[k];
        if (fresh && mn->probes < PP_COMPARE_MAX_PROBES) {
            mn->probe_gpus[mn->probes] = e->gpus;
            mn->probe_days[mn->probes++] = e->status == PP_OK ? e->days : NAN;
        }
        if (meets(X, e)) {
            b.hi = n, b.dhi = e->days;
            continue;
        }
        int growing = !b.hi;
        /* no valid strategy (the batch does not split over it) is no
         * evidence: try another count; nothing fitting is a miss (fewer
         * GPUs fit no better) */
        if (!growing && e->status == PP_ERR_INPUT && b.nplanless < PP_COMPARE_MAX_PROBES) {
            b.planless[b.nplanless++] = n;
            continue;
        }
        b.lo = n, b.dlo = e->days;
        if (!growing) continue;
        /* more GPUs stop helping: twice in a row no valid strategy, or
         * under 1% shorter */
        int flat = e->status == PP_ERR_INPUT || (e->status == PP_OK && isfinite(prev) && e->days > 0.99 * prev);
        stall = flat ? stall + 1 : 0;
        if (e->status == PP_OK) prev = e->days;
        if (stall >= 2) {
            if (e->status == PP_OK)
                snprintf(mn->note, sizeof mn->note,
                         "more GPUs stop shortening training: %.3g days at %d GPUs, short of %.3g days",
                         e->days, e->gpus, X->o.deadline_days);
            else
                snprintf(mn->note, sizeof mn->note, "at %d GPUs: %.400s", e->gpus, e->error);
            break;
        }
    }
    return PP_OK;
}

/* The smallest evaluated count of ci that meets the deadline. */
static void min_pick(const ctx *X, int ci, pp_compare_min *mn)
{
    int best = -1;
    for (int i = 0; i < X->nev; i++)
        if (X->ev[i].cluster == ci && meets(X, &X->ev[i]) && (best < 0 || X->ev[i].gpus < X->ev[best].gpus)) best = i;
    if (best < 0) {
        if (!mn->note[0])
            snprintf(mn->note, sizeof mn->note, "no evaluated count meets the deadline of %.3g days", X->o.deadline_days);
        return;
    }
    mn->found = 1;
    mn->gpus = X->ev[best].gpus;
    mn->nodes = X->ev[best].nodes;
}

/* ------------------------------------------------------------ checks */

static int bad(double v) { return !isfinite(v) || v < 0; }

static pp_status check_opts(const pp_compare_cluster *cl, int ncl, const pp_compare_opts *o, pp_error *err)
{
    if (ncl < 1 || ncl > PP_COMPARE_MAX_CLUSTERS)
        return pp__fail(err, PP_ERR_INPUT, "--clusters: expected 1 to %d cluster types, got %d", PP_COMPARE_MAX_CLUSTERS,
                        ncl);
    if (!isfinite(o->train_tokens) || o->train_tokens <= 0 || o->train_tokens > 1e18)
        return pp__fail(err, PP_ERR_INPUT, "--train-tokens: expected a number of tokens in (0, 1e18], got %g",
                        o->train_tokens);
    if (bad(o->deadline_days) || o->deadline_days > 1e5)
        return pp__fail(err, PP_ERR_INPUT, "--deadline-days: expected days in (0, 1e5], got %g", o->deadline_days);
    if (bad(o->budget_usd) || o->budget_usd > 1e15)
        return pp__fail(err, PP_ERR_INPUT, "--budget-usd: expected dollars in (0, 1e15], got %g", o->budget_usd);
    if (bad(o->usd_per_kwh) || o->usd_per_kwh > 100)
        return pp__fail(err, PP_ERR_INPUT, "--usd-per-kwh: expected dollars in [0, 100], got %g", o->usd_per_kwh);
    if (o->search.global_batch < 1)
        return pp__fail(err, PP_ERR_INPUT, "--global-batch: expected sequences per step >= 1, got %d",
                        o->search.global_batch);
    if (o->search.objective != PP_OBJ_THROUGHPUT && o->search.objective != PP_OBJ_COST)
        return pp__fail(err, PP_ERR_INPUT, "--objective: expected throughput or cost");
    if (o->max_nodes < 1 || o->max_nodes > (1 << 20))
        return pp__fail(err, PP_ERR_INPUT, "max_nodes: expected 1 to %d, got %d", 1 << 20, o->max_nodes);
    if (o->max_probes < 1 || o->max_probes > PP_COMPARE_MAX_PROBES)
        return pp__fail(err, PP_ERR_INPUT, "max_probes: expected 1 to %d, got %d", PP_COMPARE_MAX_PROBES,
                        o->max_probes);
    for (int i = 0; i < ncl; i++) {
        const pp_compare_cluster *c = &cl[i];
        if (bad(c->price_usd_per_gpu_hour) || c->price_usd_per_gpu_hour > 1e4)
            return pp__fail(err, PP_ERR_INPUT, "--price-per-gpu-hour %s: expected $ in (0, 1e4], got %g",
                            c->cluster.name, c->price_usd_per_gpu_hour);
        if (bad(c->purchase_usd_per_gpu) || c->purchase_usd_per_gpu > 1e8)
            return pp__fail(err, PP_ERR_INPUT, "--purchase-usd-per-gpu %s: expected $ in (0, 1e8], got %g",
                            c->cluster.name, c->purchase_usd_per_gpu);
        if (c->purchase_usd_per_gpu > 0 && (!isfinite(o->amortize_years) || o->amortize_years <= 0 ||
                                            o->amortize_years > 50))
            return pp__fail(err, PP_ERR_INPUT,
                            "--amortize-years: expected the period a purchase is spread over, years in (0, 50], got %g",
                            o->amortize_years);
        if (c->ncounts < 0 || c->ncounts > PP_COMPARE_MAX_COUNTS)
            return pp__fail(err, PP_ERR_INPUT, "%s: expected at most %d GPU counts, got %d", c->cluster.name,
                            PP_COMPARE_MAX_COUNTS, c->ncounts);
        for (int j = 0; j < i; j++)
            if (!strcmp(cl[j].cluster.name, c->cluster.name))
                return pp__fail(err, PP_ERR_INPUT, "--clusters: %s is given twice", c->cluster.name);
        for (int k = 0; k < c->ncounts; k++) {
            pp_cluster tmp = c->cluster;
            pp_error e = {""};
            if (c->gpus[k] < 1) return pp__fail(err, PP_ERR_INPUT, "%s: expected GPU counts >= 1, got %d", c->cluster.name, c->gpus[k]);
            if (pp_cluster_resize(&tmp, 0, c->gpus[k], &e) != PP_OK)
                return pp__fail(err, PP_ERR_INPUT, "%s: %s", c->cluster.name, e.msg);
        }
    }
    return PP_OK;
}

/* ------------------------------------------------------------ selection */

static int opt_cmp(const void *pa, const void *pb)
{
    const pp_compare_option *a = pa, *b = pb;
    if (a->cluster != b->cluster) return a->cluster < b->cluster ? -1 : 1;
    return (a->gpus > b->gpus) - (a->gpus < b->gpus);
}

/* a before b: smaller primary, then secondary (NaN last), then index. */
static int better(double pa, double sa, double pb, double sb)
{
    if (pa != pb) return pa < pb;
    if (isnan(sb) && !isnan(sa)) return 1;
    return sa < sb;
}

static void select_options(pp_compare_result *r)
{
    const pp_compare_opts *o = &r->opts;
    r->cheapest = r->fastest = -1;
    r->feasible = 0;
    for (int i = 0; i < r->n; i++) {
        pp_compare_option *e = &r->options[i];
        if (e->status != PP_OK) continue;
        r->feasible++;
        e->meets_deadline = o->deadline_days > 0 && e->days <= o->deadline_days;
        e->within_budget = o->budget_usd > 0 && isfinite(e->cost_usd) && e->cost_usd <= o->budget_usd;
        int in_budget = !(o->budget_usd > 0) || e->within_budget;
        int ok = in_budget && (!(o->deadline_days > 0) || e->meets_deadline);
        const pp_compare_option *c = r->cheapest >= 0 ? &r->options[r->cheapest] : NULL;
        if (ok && isfinite(e->cost_usd) && (!c || better(e->cost_usd, e->days, c->cost_usd, c->days)))
            r->cheapest = i;
        const pp_compare_option *f = r->fastest >= 0 ? &r->options[r->fastest] : NULL;
        if (in_budget && (!f || better(e->days, e->cost_usd, f->days, f->cost_usd))) r->fastest = i;
    }
}

static pp_status pareto(pp_compare_result *r, pp_error *err)
{
    if (r->n <= 0) return PP_OK;
    double *x = malloc((size_t)r->n * sizeof *x), *y = malloc((size_t)r->n * sizeof *y);
    int *on = malloc((size_t)r->n * sizeof *on);
    r->front = malloc((size_t)r->n * sizeof *r->front);
    pp_status st = PP_OK;
    if (!x || !y || !on || !r->front) {
        st = pp__fail(err, PP_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    for (int i = 0; i < r->n; i++) {
        int ok = r->options[i].status == PP_OK;
        x[i] = ok ? r->options[i].days : NAN;
        y[i] = ok ? r->options[i].cost_usd : NAN;
    }
    if (pp_pareto_front(x, y, r->n, on)) {
        st = pp__fail(err, PP_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    r->nfront = 0;
    for (int i = 0; i < r->n; i++) {
        r->options[i].pareto = on[i];
        if (on[i]) r->front[r->nfront++] = i;
    }
    /* by days, then cost, then index (insertion sort: the front is short) */
    for (int a = 1; a < r->nfront; a++)
        for (int b = a; b > 0; b--) {
            const pp_compare_option *p = &r->options[r->front[b - 1]], *q = &r->options[r->front[b]];
            if (!(q->days < p->days || (q->days == p->days && q->cost_usd < p->cost_usd))) break;
            int t = r->front[b];
            r->front[b] = r->front[b - 1];
            r->front[b - 1] = t;
        }
cleanup:
    free(x);
    free(y);
    free(on);
    return st;
}

/* ------------------------------------------------------------ entry */

/* The options shown: every count asked for, and each search's answer. */
static pp_status collect(ctx *X, pp_compare_result *r, int nasked, pp_error *err)
{
    r->options = malloc((size_t)(X->nev ? X->nev : 1) * sizeof *r->options);
    if (!r->options) return pp__fail(err, PP_ERR_NOMEM, "out of memory");
    for (int i = 0; i < X->nev; i++) {
        const pp_compare_option *e = &X->ev[i];
        int shown = i < nasked;
        const pp_compare_min *mn = &r->mins[e->cluster];
        if (mn->found && mn->gpus == e->gpus) shown = 1;
        if (!shown) continue;
        r->options[r->n] = *e;
        r->options[r->n++].from_search = i >= nasked;
    }
    qsort(r->options, (size_t)r->n, sizeof *r->options, opt_cmp);
    for (int c = 0; c < r->nclusters; c++) {
        pp_compare_min *mn = &r->mins[c];
        mn->option = -1;
        for (int i = 0; mn->found && i < r->n; i++)
            if (r->options[i].cluster == c && r->options[i].gpus == mn->gpus) mn->option = i;
    }
    return PP_OK;
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Evaluates the counts asked for, cluster by cluster, ascending. */
static pp_status run_asked(ctx *X, pp_error *err)
{
    for (int ci = 0; ci < X->ncl; ci++) {
        const pp_compare_cluster *cc = &X->cl[ci];
        int counts[PP_COMPARE_MAX_COUNTS], n = cc->ncounts;
        if (n == 0) counts[n++] = pp_cluster_gpus(&cc->cluster);
        else memcpy(counts, cc->gpus, (size_t)n * sizeof *counts);
        qsort(counts, (size_t)n, sizeof *counts, int_cmp);
        for (int k = 0; k < n; k++) {
            if (k && counts[k] == counts[k - 1]) continue;
            int idx;
            pp_status st = evaluate(X, ci, counts[k], &idx, NULL, err);
            if (st != PP_OK) return st;
        }
    }
    return PP_OK;
}

/* No option has a plan: PP_ERR_INPUT when every search refused its input
 * (the search options themselves are bad), else PP_ERR_INFEASIBLE. The
 * message quotes the first option's reason. */
static pp_status infeasible_summary(const pp_compare_result *r, pp_error *err)
{
    if (r->n == 0) return pp__fail(err, PP_ERR_INFEASIBLE, "no option was evaluated");
    int all_input = 1;
    for (int i = 0; i < r->n; i++) all_input &= r->options[i].status == PP_ERR_INPUT;
    const pp_compare_option *e = &r->options[0];
    return pp__fail(err, all_input ? PP_ERR_INPUT : PP_ERR_INFEASIBLE, "no option has a plan: %s on %d GPUs: %.300s%s",
                    r->clusters[e->cluster].cluster.name, e->gpus, e->error,
                    r->n > 1 ? " (see each option for the others)" : "");
}

pp_status pp_compare_run(const pp_model *m, const pp_compare_cluster *clusters, int nclusters,
                         const pp_compare_opts *o, pp_compare_result *out, pp_error *err)
{
    PP__C_NUMERIC;
    memset(out, 0, sizeof *out);
    out->cheapest = out->fastest = -1;
    pp_status st = check_opts(clusters, nclusters, o, err);
    if (st != PP_OK) return st;
    ctx X = {m, clusters, nclusters, *o, o, NULL, 0, 0, 0};
    X.o.search.top_k = 1;
    snprintf(out->model, sizeof out->model, "%s", m->name);
    out->opts = X.o;
    out->opts.progress = NULL;
    out->opts.progress_user = NULL;
    out->nclusters = nclusters;
    out->clusters = malloc((size_t)nclusters * sizeof *out->clusters);
    if (!out->clusters) {
        st = pp__fail(err, PP_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    memcpy(out->clusters, clusters, (size_t)nclusters * sizeof *clusters);
    if ((st = run_asked(&X, err))) goto cleanup;
    int nasked = X.nev;
    for (int ci = 0; X.o.deadline_days > 0 && ci < nclusters; ci++) {
        if (X.o.deadline_search && (st = min_search(&X, ci, &out->mins[ci], err))) goto cleanup;
        min_pick(&X, ci, &out->mins[ci]);
    }
    if ((st = collect(&X, out, nasked, err))) goto cleanup;
    out->evaluations = X.nev;
    select_options(out);
    if ((st = pareto(out, err))) goto cleanup;
    if (out->feasible == 0) st = infeasible_summary(out, err);
cleanup:
    free(X.ev);
    return st;
}
