/*
 * partition.c — the stage split. For a resolved strategy with pp > 1 it
 * builds the integer program of ilp_glpk.c from probes of the public cost
 * model (never from its internals), checks the coefficients against the
 * cost model on real splits, and writes the solution back; when the
 * coefficients do not reproduce the cost model exactly it falls back to the
 * exact DP of dp_partition.c. See docs/planner.md, "Stage partitioning".
 *
 * Coefficients. Blocks of one kind are interchangeable, so a stage is
 * described by u_k (blocks of kind k) and v_k (of those, fully recomputed).
 * For stage i the cost model is reproduced as
 *   time   = t0 + sum_k tau_k u_k + rho_k v_k
 *   memory = min(A_inf(u,v), A_zero(u,v) + cap) + max(0, jumps present)
 * per phase (forward/backward, optimizer step): A_inf with the ZeRO/DDP
 * bucket caps removed, A_zero with the buckets absent, cap the bucket when it
 * saturates, and jumps the one-off working set of the largest block (kept or
 * recomputed) present. All are finite differences of probes, so a
 * recalibrated cost model needs no change here; one that breaks the form is
 * caught by the checks and solved by the DP.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner.h"

#define REL_TOL 1e-9
#define MEM_ABS_TOL 1.0   /* bytes */
#define TIME_ABS_TOL 1e-12 /* s */

/* Differences of byte counts near 1e11 carry ~1e-5 bytes of rounding:
 * below a byte is zero (keeps 1e-16 noise out of the ILP's matrix). */
static double snap(double bytes) { return fabs(bytes) < 1 ? 0 : bytes; }

static int near(double a, double b, double abs_tol)
{
    return fabs(a - b) <= REL_TOL * fmax(fabs(a), fabs(b)) + abs_tol;
}

int pp__model_runs(const pp_model *m, pp__run *runs, int cap)
{
    int n = 0;
    for (int i = 0; i < m->layers; i++) {
        if (n && runs[n - 1].kind == m->block_kind[i]) {
            runs[n - 1].len++;
            continue;
        }
        if (n == cap) return cap + 1;
        runs[n].kind = m->block_kind[i];
        runs[n].start = i;
        runs[n].len = 1;
        n++;
    }
    return n;
}

/* ------------------------------------------------------------ oracle */

void pp__oracle_init(pp__oracle *o, const pp_model *m, const pp_cluster *c, const pp_strategy *s)
{
    o->m = m;
    o->c = c;
    o->s = *s;
    o->s.per_stage_recompute = 1;
    o->calls = 0;
}

void pp__oracle_stage(pp__oracle *o, int i, int a, int n, int k, double *peak, double *t_mb)
{
    pp_strategy *s = &o->s;
    memset(s->stage_layers, 0, sizeof s->stage_layers);
    memset(s->stage_recompute, 0, sizeof s->stage_recompute);
    if (i > 0) s->stage_layers[0] = a;
    s->stage_layers[i] = n;
    s->stage_recompute[i] = k;
    pp_memory_estimate(o->m, o->c, s, &o->mem);
    pp_time_estimate(o->m, o->c, s, &o->time, &o->thr);
    *peak = o->mem.stages[i].total_bytes;
    *t_mb = o->time.stage_microbatch_s[i];
    o->calls++;
}

/* ------------------------------------------------------------ probes */

enum { CAP_REAL, CAP_INF, CAP_ZERO, CAP_COUNT };

typedef struct probe_res {
    double t[PP_MAX_STAGES];
    double mem[PP_PHASE_COUNT][PP_MAX_STAGES];
} probe_res;

/* Scratch of one build: big, so on the heap. */
typedef struct scratch {
    pp_model pm;           /* the model with every block of one kind */
    pp_strategy s;         /* probe strategy */
    pp_memory mem;
    pp_time time;
    pp_throughput thr;
    probe_res e[CAP_COUNT], p1[CAP_COUNT], p2[CAP_COUNT], p1r[CAP_COUNT], p2r[CAP_COUNT], p3r[CAP_COUNT];
    int probes;
} scratch;

static void set_caps(pp_strategy *s, const pp_strategy *real, int caps)
{
    s->buf = real->buf;
    if (caps == CAP_REAL) return;
    double v = caps == CAP_INF ? 1e300 : 0;
    s->buf.reduce_bucket = s->buf.allgather_bucket = s->buf.prefetch_bucket = s->buf.max_live_params = v;
}

/* Every stage holds n blocks of pm's kind, k of them recomputed. */
static void probe(scratch *w, const pp_model *pm, const pp_cluster *c, const pp_strategy *real, int n, int k,
                  int caps, probe_res *out)
{
    pp_strategy *s = &w->s;
    set_caps(s, real, caps);
    for (int i = 0; i < s->pp; i++) {
        s->stage_layers[i] = n;
        s->stage_recompute[i] = k;
    }
    pp_memory_estimate(pm, c, s, &w->mem);
    for (int i = 0; i < s->pp; i++)
        for (int f = 0; f < PP_PHASE_COUNT; f++) out->mem[f][i] = w->mem.stages[i].phase_bytes[f];
    if (caps == CAP_REAL) {
        pp_time_estimate(pm, c, s, &w->time, &w->thr);
        for (int i = 0; i < s->pp; i++) out->t[i] = w->time.stage_microbatch_s[i];
    }
    w->probes++;
}

/* Probe strategy: s with recompute per stage when the ILP may choose it. */
static void probe_strategy(const pp_strategy *s, int rc_mode, pp_strategy *out)
{
    *out = *s;
    memset(out->stage_layers, 0, sizeof out->stage_layers);
    memset(out->stage_recompute, 0, sizeof out->stage_recompute);
    out->per_stage_recompute = rc_mode != 0;
    if (rc_mode) out->recompute = PP_RECOMPUTE_FULL;
}

/* Per-kind coefficients of every stage from the six probe shapes (w->s is
 * the probe strategy, s the real one). */
static int kind_coefs(scratch *w, const pp_cluster *c, const pp_strategy *s, int kind, int rc_mode,
                      pp__part_problem *pr)
{
    for (int cv = 0; cv < CAP_COUNT; cv++) {
        probe(w, &w->pm, c, s, 1, 0, cv, &w->p1[cv]);
        probe(w, &w->pm, c, s, 2, 0, cv, &w->p2[cv]);
        if (rc_mode) {
            probe(w, &w->pm, c, s, 1, 1, cv, &w->p1r[cv]);
            probe(w, &w->pm, c, s, 2, 1, cv, &w->p2r[cv]);
            probe(w, &w->pm, c, s, 3, 2, cv, &w->p3r[cv]);
        }
    }
    for (int i = 0; i < s->pp; i++) {
        pp__stage_coef *st = &pr->st[i];
        st->tau[kind] = w->p1[CAP_REAL].t[i] - w->e[CAP_REAL].t[i];
        if (!near(w->p2[CAP_REAL].t[i] - w->p1[CAP_REAL].t[i], st->tau[kind], TIME_ABS_TOL)) return -1;
        if (rc_mode) {
            st->rho[kind] = w->p1r[CAP_REAL].t[i] - w->p1[CAP_REAL].t[i];
            if (!near(w->p3r[CAP_REAL].t[i], w->e[CAP_REAL].t[i] + 3 * st->tau[kind] + 2 * st->rho[kind], TIME_ABS_TOL))
                return -1;
        }
        for (int f = 0; f < PP_PHASE_COUNT; f++) {
            double e[2] = {w->e[CAP_INF].mem[f][i], w->e[CAP_ZERO].mem[f][i]};
            double sl[2], j1[2], d[2] = {0, 0}, j2[2] = {0, 0};
            for (int v = 0; v < 2; v++) {
                int cv = v ? CAP_ZERO : CAP_INF;
                sl[v] = w->p2[cv].mem[f][i] - w->p1[cv].mem[f][i];
                j1[v] = w->p1[cv].mem[f][i] - e[v] - sl[v];
                if (rc_mode) {
                    d[v] = sl[v] - (w->p3r[cv].mem[f][i] - w->p2r[cv].mem[f][i]);
                    j2[v] = w->p1r[cv].mem[f][i] - e[v] - sl[v] + d[v];
                    double pred = e[v] + 2 * sl[v] - d[v] + fmax(0, fmax(j1[v], j2[v]));
                    if (!near(pred, w->p2r[cv].mem[f][i], MEM_ABS_TOL)) return -1;
                }
            }
            if (!near(j1[0], j1[1], MEM_ABS_TOL) || !near(d[0], d[1], MEM_ABS_TOL) || !near(j2[0], j2[1], MEM_ABS_TOL))
                return -1;
            if (j1[0] < -MEM_ABS_TOL || j2[0] < -MEM_ABS_TOL) return -1;
            st->s_inf[f][kind] = snap(sl[0]);
            st->s_zero[f][kind] = snap(sl[1]);
            st->d[f][kind] = snap(d[0]);
            st->j1[f][kind] = snap(fmax(0, j1[0]));
            st->j2[f][kind] = snap(fmax(0, j2[0]));
        }
    }
    return 0;
}

/* The bucket cap in bytes per phase: saturated on the largest stage? */
static int find_caps(scratch *w, const pp_model *m, const pp_cluster *c, const pp_strategy *s, pp__part_problem *pr)
{
    double r[2][CAP_COUNT][PP_PHASE_COUNT];
    for (int end = 0; end < 2; end++) {
        int i = end ? s->pp - 1 : 0;
        for (int cv = 0; cv < CAP_COUNT; cv++) {
            set_caps(&w->s, s, cv);
            memset(w->s.stage_layers, 0, sizeof w->s.stage_layers);
            memset(w->s.stage_recompute, 0, sizeof w->s.stage_recompute);
            w->s.stage_layers[i] = m->layers;
            pp_memory_estimate(m, c, &w->s, &w->mem);
            w->probes++;
            for (int f = 0; f < PP_PHASE_COUNT; f++) r[end][cv][f] = w->mem.stages[i].phase_bytes[f];
        }
    }
    for (int f = 0; f < PP_PHASE_COUNT; f++) {
        pr->cap[f] = HUGE_VAL;
        for (int end = 0; end < 2; end++) {
            double real = r[end][CAP_REAL][f], inf = r[end][CAP_INF][f], zero = r[end][CAP_ZERO][f];
            if (near(real, inf, MEM_ABS_TOL)) continue;
            if (real > inf) return -1; /* a cap that adds memory: not a min() */
            double cap = real - zero;
            if (isfinite(pr->cap[f]) && !near(cap, pr->cap[f], MEM_ABS_TOL)) return -1;
            pr->cap[f] = cap;
        }
    }
    return 0;
}

/* Composition of stage i under a split: blocks per kind, recomputed per kind. */
static void composition(const pp__part_problem *pr, const int *layers, const int *rc, int stage, double *u, double *v)
{
    int a = 0;
    for (int i = 0; i < stage; i++) a += layers[i];
    int b = a + layers[stage], k = rc ? rc[stage] : 0;
    for (int q = 0; q < PP_BLOCK_COUNT; q++) u[q] = v[q] = 0;
    for (int r = 0; r < pr->nruns; r++) {
        const pp__run *run = &pr->runs[r];
        int lo = a > run->start ? a : run->start, hi = b < run->start + run->len ? b : run->start + run->len;
        if (hi <= lo) continue;
        int n = hi - lo, kr = k < n ? k : n;
        u[run->kind] += n;
        v[run->kind] += kr;
        k -= kr;
    }
}

void pp__part_eval(const pp__part_problem *pr, const int *layers, const int *rc, int stage, double *time, double *mem)
{
    const pp__stage_coef *st = &pr->st[stage];
    double u[PP_BLOCK_COUNT], v[PP_BLOCK_COUNT];
    composition(pr, layers, rc, stage, u, v);
    *time = st->t0;
    for (int q = 0; q < PP_BLOCK_COUNT; q++) *time += st->tau[q] * u[q] + st->rho[q] * v[q];
    for (int f = 0; f < PP_PHASE_COUNT; f++) {
        double li = st->e_inf[f], lz = st->e_zero[f], h = 0;
        for (int q = 0; q < PP_BLOCK_COUNT; q++) {
            li += st->s_inf[f][q] * u[q] - st->d[f][q] * v[q];
            lz += st->s_zero[f][q] * u[q] - st->d[f][q] * v[q];
            if (u[q] - v[q] >= 1) h = fmax(h, st->j1[f][q]);
            if (v[q] >= 1) h = fmax(h, st->j2[f][q]);
        }
        mem[f] = fmin(li, lz + pr->cap[f]) + h;
    }
}

/* Does the surrogate reproduce the cost model on strategy s's split? */
static int check_split(scratch *w, const pp_model *m, const pp_cluster *c, const pp__part_problem *pr,
                       const pp_strategy *s)
{
    pp_memory_estimate(m, c, s, &w->mem);
    pp_time_estimate(m, c, s, &w->time, &w->thr);
    w->probes++;
    int rc[PP_MAX_STAGES];
    for (int i = 0; i < s->pp; i++) {
        int n = s->stage_layers[i], k = s->per_stage_recompute ? s->stage_recompute[i] : s->recompute_layers;
        rc[i] = s->recompute != PP_RECOMPUTE_FULL ? 0 : k < 0 || k > n ? n : k;
    }
    for (int i = 0; i < s->pp; i++) {
        double t, mem[PP_PHASE_COUNT];
        pp__part_eval(pr, s->stage_layers, rc, i, &t, mem);
        if (!near(t, w->time.stage_microbatch_s[i], TIME_ABS_TOL)) return -1;
        for (int f = 0; f < PP_PHASE_COUNT; f++)
            if (!near(mem[f], w->mem.stages[i].phase_bytes[f], MEM_ABS_TOL)) return -1;
    }
    return 0;
}

static int rc_mode_of(const pp_strategy *s, int allow_rc)
{
    if (s->recompute != PP_RECOMPUTE_FULL) return 0;
    return allow_rc ? 1 : 2;
}

static int build(scratch *w, const pp_model *m, const pp_cluster *c, const pp_strategy *s, int allow_rc,
                 pp__part_problem *pr)
{
    memset(pr, 0, sizeof *pr);
    pr->p = s->pp;
    pr->unit = s->schedule == PP_SCHED_INTERLEAVED ? s->virtual_stages : 1;
    pr->nruns = pp__model_runs(m, pr->runs, PP_PART_MAX_RUNS);
    pr->allow_rc = rc_mode_of(s, allow_rc);
    pr->mem = c->gpu.mem_bytes - s->buf.reserve;
    if (pr->nruns > PP_PART_MAX_RUNS || (pr->unit > 1 && pr->nruns > 1) || s->pp < 2 || 3 * s->pp > PP_MAX_LAYERS ||
        m->layers / pr->unit < s->pp)
        return -1;
    probe_strategy(s, pr->allow_rc, &w->s);
    w->pm = *m;
    for (int cv = 0; cv < CAP_COUNT; cv++) probe(w, m, c, s, 0, 0, cv, &w->e[cv]);
    for (int i = 0; i < s->pp; i++) {
        pr->st[i].t0 = w->e[CAP_REAL].t[i];
        for (int f = 0; f < PP_PHASE_COUNT; f++) {
            pr->st[i].e_inf[f] = w->e[CAP_INF].mem[f][i];
            pr->st[i].e_zero[f] = w->e[CAP_ZERO].mem[f][i];
        }
    }
    int done[PP_BLOCK_COUNT] = {0};
    for (int r = 0; r < pr->nruns; r++) {
        int k = pr->runs[r].kind;
        if (done[k]++) continue;
        memset(w->pm.block_kind, k, sizeof w->pm.block_kind);
        if (kind_coefs(w, c, s, k, pr->allow_rc, pr)) return -1;
    }
    if (find_caps(w, m, c, s, pr)) return -1;
    /* the real model on s's own split must come out exactly */
    w->s = *s;
    if (check_split(w, m, c, pr, &w->s)) return -1;
    return 0;
}

int pp__part_build(const pp_model *m, const pp_cluster *c, const pp_strategy *s, int allow_rc,
                   pp__part_problem *pr, int *probes)
{
    scratch *w = malloc(sizeof *w);
    if (!w) return -1;
    w->probes = 0;
    int rc = build(w, m, c, s, allow_rc, pr);
    if (probes) *probes += w->probes;
    free(w);
    return rc;
}

/* ------------------------------------------------------------ greedy
 * A primal heuristic for the ILP: for a target T, fill stages left to right
 * with as many units as can meet T (with the least recompute that fits);
 * bisect on T. It gives the ILP an incumbent value and tight per-stage
 * bounds; the ILP still proves optimality. */

/* Least recompute that fits stage i with n blocks from `at`; -1 if none. */
static int least_fit(const pp__part_problem *pr, int *layers, int *rc, int i, double *t)
{
    double mem[PP_PHASE_COUNT];
    int n = layers[i], hi = pr->allow_rc == 1 ? n : 0;
    rc[i] = pr->allow_rc == 2 ? n : 0;
    pp__part_eval(pr, layers, rc, i, t, mem);
    if (mem[0] <= pr->mem && mem[1] <= pr->mem) return rc[i];
    if (hi == 0) return -1;
    rc[i] = hi;
    pp__part_eval(pr, layers, rc, i, t, mem);
    if (mem[0] > pr->mem || mem[1] > pr->mem) return -1;
    int lo = 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        rc[i] = mid;
        pp__part_eval(pr, layers, rc, i, t, mem);
        if (mem[0] <= pr->mem && mem[1] <= pr->mem) hi = mid;
        else lo = mid + 1;
    }
    rc[i] = hi;
    pp__part_eval(pr, layers, rc, i, t, mem);
    return hi;
}

static int stage_ok(const pp__part_problem *pr, int *layers, int *rc, int i, double T)
{
    double t;
    return least_fit(pr, layers, rc, i, &t) >= 0 && t <= T;
}

/* Packs stages for target T; 1 when every stage meets it. */
static int pack(const pp__part_problem *pr, double T, int *layers, int *rc)
{
    int nu = 0, U = pr->unit, used = 0;
    for (int r = 0; r < pr->nruns; r++) nu += pr->runs[r].len / U;
    memset(layers, 0, PP_MAX_STAGES * sizeof *layers);
    for (int i = 0; i < pr->p; i++) {
        int left = nu - used, rest = pr->p - 1 - i, lo = 1, hi = left - rest;
        if (hi < 1) return 0;
        if (i == pr->p - 1) lo = hi;
        layers[i] = lo * U;
        if (!stage_ok(pr, layers, rc, i, T)) return 0;
        while (lo < hi) { /* largest n in [lo, hi] that meets T */
            int mid = lo + (hi - lo + 1) / 2;
            layers[i] = mid * U;
            if (stage_ok(pr, layers, rc, i, T)) lo = mid;
            else hi = mid - 1;
        }
        layers[i] = lo * U;
        stage_ok(pr, layers, rc, i, T);
        used += lo;
    }
    return 1;
}

static double packed_max(const pp__part_problem *pr, const int *layers, const int *rc)
{
    double mx = 0;
    for (int i = 0; i < pr->p; i++) {
        double t, mem[PP_PHASE_COUNT];
        pp__part_eval(pr, layers, rc, i, &t, mem);
        mx = fmax(mx, t);
    }
    return mx;
}

pp_status pp__part_greedy(const pp__part_problem *pr, double t_lb, pp__part_result *out)
{
    int layers[PP_MAX_STAGES], rc[PP_MAX_STAGES];
    memset(out, 0, sizeof *out);
    double lo = t_lb > 0 ? t_lb : 1e-9, hi = lo * 1.25;
    while (!pack(pr, hi, layers, rc)) {
        lo = hi;
        hi *= 2;
        if (hi > 1e9) return out->status = PP_ERR_INFEASIBLE;
    }
    hi = packed_max(pr, layers, rc);
    for (int it = 0; it < 60 && hi - lo > 1e-9 * hi; it++) {
        double mid = (lo + hi) / 2;
        if (pack(pr, mid, layers, rc)) hi = packed_max(pr, layers, rc);
        else lo = mid;
    }
    if (!pack(pr, hi, layers, rc)) return out->status = PP_ERR_INTERNAL;
    out->objective = packed_max(pr, layers, rc);
    memcpy(out->layers, layers, sizeof layers);
    memcpy(out->recompute, rc, sizeof rc);
    return out->status = PP_OK;
}

/* ------------------------------------------------------------ apply */

void pp__part_apply_raw(const pp__part_result *r, int allow_rc, pp_strategy *s)
{
    for (int i = 0; i < s->pp; i++) s->stage_layers[i] = r->layers[i];
    s->filled &= ~PP_FILLED_SPLIT; /* given now, kept when resolved again */
    if (s->recompute == PP_RECOMPUTE_FULL && allow_rc) {
        s->per_stage_recompute = 1;
        for (int i = 0; i < s->pp; i++) s->stage_recompute[i] = r->recompute[i];
    }
}

/* Least recompute on each stage that still fits, by the coefficients. */
static void least_recompute(const pp__part_problem *pr, const int *layers, int *rc)
{
    for (int i = 0; i < pr->p; i++) {
        for (int k = 0; k < rc[i]; k++) {
            int save = rc[i];
            double t, mem[PP_PHASE_COUNT];
            rc[i] = k;
            pp__part_eval(pr, layers, rc, i, &t, mem);
            if (mem[0] <= pr->mem && mem[1] <= pr->mem) break;
            rc[i] = save;
        }
    }
}

/* Stage i's time, its higher phase's memory, and whether both phases fit. */
static int stage_stat(const pp__part_problem *pr, const int *layers, const int *rc, int i, double *t, double *mem)
{
    double m[PP_PHASE_COUNT];
    pp__part_eval(pr, layers, rc, i, t, m);
    *mem = 0;
    int ok = 1;
    for (int f = 0; f < PP_PHASE_COUNT; f++) *mem = fmax(*mem, m[f]), ok &= m[f] <= pr->mem;
    return ok;
}

static double arr_max(const double *v, int n)
{
    double x = 0;
    for (int i = 0; i < n; i++) x = fmax(x, v[i]);
    return x;
}

/* The program minimises the slowest stage only, so among splits that tie
 * on it the one returned is arbitrary; a heavy head stage leaves many
 * (red team, session 28: 5,1,5,1 where 1,5,5,1 holds 11 GiB less). Moves
 * one unit at a time between neighbours while the slowest stage does not
 * get slower and the highest stage memory drops; a move re-evaluates its
 * two stages only, and at most 4 p passes run. */
static void lower_peak(const pp__part_problem *pr, int *layers, int *rc)
{
    double t[PP_MAX_STAGES], mem[PP_MAX_STAGES];
    int p = pr->p, unit = pr->unit > 0 ? pr->unit : 1;
    for (int i = 0; i < p; i++)
        if (!stage_stat(pr, layers, rc, i, &t[i], &mem[i])) return;
    double T0 = arr_max(t, p), peak = arr_max(mem, p);
    for (int pass = 0, improved = 1; improved && pass < 4 * p; pass++) {
        improved = 0;
        for (int i = 0; i + 1 < p; i++)
            for (int dir = 0; dir < 2; dir++) {
                int from = dir ? i + 1 : i, to = dir ? i : i + 1;
                if (layers[from] <= unit) continue;
                int save_rc = rc[from];
                double tf = t[from], tt = t[to], mf = mem[from], mt = mem[to];
                layers[from] -= unit, layers[to] += unit;
                if (rc[from] > layers[from]) rc[from] = layers[from];
                int ok = stage_stat(pr, layers, rc, from, &t[from], &mem[from]) &
                         stage_stat(pr, layers, rc, to, &t[to], &mem[to]);
                double pk = arr_max(mem, p);
                if (ok && arr_max(t, p) <= T0 * (1 + 1e-12) && pk < peak * (1 - 1e-9)) {
                    peak = pk, improved = 1;
                } else {
                    layers[from] += unit, layers[to] -= unit, rc[from] = save_rc;
                    t[from] = tf, t[to] = tt, mem[from] = mf, mem[to] = mt;
                }
            }
    }
}

int pp__part_apply(const pp_model *m, const pp_cluster *c, const pp__part_problem *pr, const pp__part_result *r,
                   pp_strategy *s)
{
    pp__part_result x = *r;
    if (pr->allow_rc == 1) least_recompute(pr, x.layers, x.recompute);
    lower_peak(pr, x.layers, x.recompute);
    pp__part_apply_raw(&x, pr->allow_rc == 1, s);
    scratch *w = malloc(sizeof *w);
    if (!w) return -1;
    int rc = check_split(w, m, c, pr, s);
    free(w);
    return rc;
}

/* ------------------------------------------------------------ all in one */

pp_status pp__partition(const pp_model *m, const pp_cluster *c, pp_strategy *s, int allow_rc, double tlim, int *how,
                        int *time_limit_hit, int *probes, pp_error *err)
{
    pp__part_problem *pr = malloc(sizeof *pr);
    pp__part_result res;
    pp_status st;
    if (!pr) return pp__fail(err, PP_ERR_NOMEM, "out of memory");
    *how = 0;
    *time_limit_hit = 0;
    if (pp__part_build(m, c, s, allow_rc, pr, probes) == 0) {
        st = pp__ilp_solve(pr, tlim, &res, err);
        *time_limit_hit = res.time_limit_hit;
        if (st == PP_OK && pp__part_apply(m, c, pr, &res, s) == 0) goto cleanup;
        if (st != PP_OK && st != PP_ERR_INTERNAL) goto cleanup;
    }
    *how = 1;
    st = pp__dp_partition(m, c, s, allow_rc, &res);
    if (st == PP_OK) pp__part_apply_raw(&res, allow_rc, s);
    else if (st == PP_ERR_INPUT)
        pp__fail(err, st, "stage_layers: no split search for an interleaved model whose blocks differ in kind (its "
                          "stages hold every pp-th chunk); give the split or a chunk layout");
    else pp__fail(err, st, "no stage split fits in memory");
cleanup:
    free(pr);
    return st;
}
