/*
 * ilp_glpk.c — the stage-partition integer program, solved with GLPK's
 * glp_intopt. The only file that includes glpk.h.
 *
 *   minimise  T                                  (slowest stage, s per micro-batch)
 *   s.t.      time_i(u_i, v_i) <= T              every stage i
 *             mem_i,f(u_i, v_i) <= usable        every stage i, phase f
 *             u_i >= 1 unit, contiguous runs, v_i <= u_i, recompute first-k order
 * Variables: P[b][r] = blocks of run r before boundary b (integer), so
 * u[i][r] = P[i+1][r] - P[i][r]; w[b][r] = boundary b is past run r
 * (binary, 2+ runs only); v[i][r] recomputed blocks (integer); q[i][r] run r
 * of stage i fully recomputed (binary, order of recompute); pi/psi[i][k] a
 * kept / recomputed block of kind k present (binary); H[i][f] working-set
 * jump; z[i][f] which side of the bucket cap binds (binary); T.
 *
 * GLPK hygiene (STYLE.md habit 9): an error hook that longjmps (returning
 * from it aborts), then glp_free_env as GLPK requires; terminal output off;
 * a time limit as a safety net only (reported when hit); one glp_prob per
 * call; return codes mapped to pp_status.
 *
 * parplan is a guest in its caller's program, which may use GLPK itself.
 * GLPK keeps its whole state per thread (terminal output flag, error hook,
 * every object, all freed by glp_free_env), so each solve runs on a thread
 * of its own, created here and joined before returning: the hook, the
 * terminal setting and the glp_free_env after an error touch only that
 * thread's environment, and the caller's thread keeps its own as it was
 * (include/parplan.h, "GLPK"). A GLPK without thread-local storage, or a
 * thread that cannot be created, is PP_ERR_INTERNAL: the caller then uses
 * the exact DP split (counted in ilp_fallbacks).
 */
#include <glpk.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner.h"

#define GIB 1073741824.0

typedef struct ilp {
    const pp__part_problem *pr;
    glp_prob *lp;
    int ncols;
    int P[PP_MAX_STAGES + 1][PP_PART_MAX_RUNS];     /* columns; 0 = constant */
    double Pc[PP_MAX_STAGES + 1][PP_PART_MAX_RUNS]; /* constant value when column 0 */
    int w[PP_MAX_STAGES][PP_PART_MAX_RUNS];
    int v[PP_MAX_STAGES][PP_PART_MAX_RUNS], q[PP_MAX_STAGES][PP_PART_MAX_RUNS];
    int pi[PP_MAX_STAGES][PP_BLOCK_COUNT], psi[PP_MAX_STAGES][PP_BLOCK_COUNT];
    int H[PP_MAX_STAGES][PP_PHASE_COUNT], z[PP_MAX_STAGES][PP_PHASE_COUNT];
    int zside[PP_MAX_STAGES][PP_PHASE_COUNT]; /* 0 uncapped side only, 1 capped only, 2 either (z) */
    int T;
    double tref;               /* time scale, s */
    double t_ub;               /* slowest stage of a known feasible split, s */
    int nmax[PP_MAX_STAGES];   /* units a stage can hold within t_ub */
    double *acc;               /* dense row accumulator, ncols + 1 */
    int *ind;
    double *val;
    double cst;
} ilp;

typedef struct hook {
    jmp_buf jb;
} hook;

static void on_glpk_error(void *info) { longjmp(((hook *)info)->jb, 1); }

static int col(ilp *x, int kind, double lo, double hi)
{
    int j = glp_add_cols(x->lp, 1);
    glp_set_col_kind(x->lp, j, kind);
    if (kind != GLP_BV) glp_set_col_bnds(x->lp, j, isfinite(hi) ? (lo == hi ? GLP_FX : GLP_DB) : GLP_LO, lo, hi);
    return j;
}

static void row_begin(ilp *x)
{
    memset(x->acc, 0, (size_t)(x->ncols + 1) * sizeof *x->acc);
    x->cst = 0;
}

static void row_add(ilp *x, int j, double c)
{
    if (j) x->acc[j] += c;
    else x->cst += c;
}

/* coef * P[b][r] */
static void row_P(ilp *x, int b, int r, double coef)
{
    if (x->P[b][r]) x->acc[x->P[b][r]] += coef;
    else x->cst += coef * x->Pc[b][r];
}

/* coef * u[i][r] (units) */
static void row_u(ilp *x, int i, int r, double coef)
{
    row_P(x, i + 1, r, coef);
    row_P(x, i, r, -coef);
}

/* Adds the accumulated row with bound type (GLP_UP, GLP_LO, GLP_FX) at rhs. */
static void row_end(ilp *x, int type, double rhs)
{
    int n = 0;
    for (int j = 1; j <= x->ncols; j++)
        if (x->acc[j] != 0) {
            n++;
            x->ind[n] = j;
            x->val[n] = x->acc[j];
        }
    int i = glp_add_rows(x->lp, 1);
    if (n) glp_set_mat_row(x->lp, i, n, x->ind, x->val);
    double b = rhs - x->cst;
    glp_set_row_bnds(x->lp, i, type, b, b);
}

static int blocks_of_kind(const pp__part_problem *pr, int k)
{
    int n = 0;
    for (int r = 0; r < pr->nruns; r++)
        if (pr->runs[r].kind == k) n += pr->runs[r].len;
    return n;
}

/* delta(u) = A_inf - (A_zero + cap), GiB: >= 0 exactly when the bucket cap
 * binds (the parameters on the stage exceed it). Its value with no blocks
 * and its largest value within the stage's unit bound. */
static void delta_range(const ilp *x, int i, int f, double *a, double *hi)
{
    const pp__part_problem *pr = x->pr;
    const pp__stage_coef *st = &pr->st[i];
    *a = (st->e_inf[f] - st->e_zero[f] - pr->cap[f]) / GIB;
    *hi = *a;
    for (int k = 0; k < PP_BLOCK_COUNT; k++)
        *hi += fmax(0, st->s_inf[f][k] - st->s_zero[f][k]) / GIB * fmin(blocks_of_kind(pr, k), x->nmax[i] * pr->unit);
}

static int cap_side(const ilp *x, int i, int f)
{
    if (!isfinite(x->pr->cap[f])) return 0;
    double a, hi;
    delta_range(x, i, f, &a, &hi);
    return hi <= 0 ? 0 : a >= 0 ? 1 : 2;
}

/* z = [delta(u) >= 0]: delta <= hi z and delta >= a (1 - z). */
static void add_cap_link(ilp *x, int i, int f)
{
    const pp__part_problem *pr = x->pr;
    const pp__stage_coef *st = &pr->st[i];
    double a, hi;
    delta_range(x, i, f, &a, &hi);
    for (int side = 0; side < 2; side++) {
        row_begin(x);
        x->cst += a;
        for (int r = 0; r < pr->nruns; r++) {
            int k = pr->runs[r].kind;
            row_u(x, i, r, pr->unit * (st->s_inf[f][k] - st->s_zero[f][k]) / GIB);
        }
        row_add(x, x->z[i][f], side ? a : -hi);
        row_end(x, side ? GLP_LO : GLP_UP, side ? a : 0);
    }
}

static void add_columns(ilp *x)
{
    const pp__part_problem *pr = x->pr;
    int p = pr->p, R = pr->nruns;
    for (int r = 0; r < R; r++) {
        x->Pc[0][r] = 0;
        x->Pc[p][r] = pr->runs[r].len / pr->unit;
        for (int b = 1; b < p; b++) x->P[b][r] = col(x, GLP_IV, 0, x->Pc[p][r]);
    }
    for (int b = 1; b < p; b++)
        for (int r = 0; r + 1 < R; r++) x->w[b][r] = col(x, GLP_BV, 0, 1);
    for (int i = 0; i < p; i++) {
        for (int r = 0; r < R && pr->allow_rc; r++) x->v[i][r] = col(x, GLP_IV, 0, pr->runs[r].len);
        for (int r = 0; r + 1 < R && pr->allow_rc == 1; r++) x->q[i][r] = col(x, GLP_BV, 0, 1);
        for (int k = 0; k < PP_BLOCK_COUNT; k++) {
            x->pi[i][k] = col(x, GLP_BV, 0, 1);
            if (pr->allow_rc) x->psi[i][k] = col(x, GLP_BV, 0, 1);
        }
        for (int f = 0; f < PP_PHASE_COUNT; f++) {
            x->H[i][f] = col(x, GLP_CV, 0, HUGE_VAL);
            x->zside[i][f] = cap_side(x, i, f);
            if (x->zside[i][f] == 2) x->z[i][f] = col(x, GLP_BV, 0, 1);
        }
    }
    x->T = col(x, GLP_CV, 0, HUGE_VAL);
    glp_set_obj_coef(x->lp, x->T, 1);
    x->ncols = glp_get_num_cols(x->lp);
}

/* Contiguity of runs across boundaries and at least one unit per stage. */
static void add_layout(ilp *x)
{
    const pp__part_problem *pr = x->pr;
    int p = pr->p, R = pr->nruns;
    for (int i = 0; i < p; i++) {
        row_begin(x);
        for (int r = 0; r < R; r++) row_u(x, i, r, 1);
        row_end(x, GLP_LO, 1);
        row_begin(x);
        for (int r = 0; r < R; r++) row_u(x, i, r, 1);
        row_end(x, GLP_UP, x->nmax[i]);
        for (int r = 0; r < R; r++) {
            row_begin(x);
            row_u(x, i, r, 1);
            row_end(x, GLP_LO, 0);
        }
    }
    for (int b = 1; b < p; b++)
        for (int r = 0; r < R; r++) {
            double len = x->Pc[p][r];
            if (r + 1 < R) { /* w = 1 -> run r done */
                row_begin(x);
                row_P(x, b, r, 1);
                row_add(x, x->w[b][r], -len);
                row_end(x, GLP_LO, 0);
            }
            if (r > 0) { /* run r starts only after run r-1 is done */
                row_begin(x);
                row_P(x, b, r, 1);
                row_add(x, x->w[b][r - 1], -len);
                row_end(x, GLP_UP, 0);
            }
            if (r > 0 && r + 1 < R) {
                row_begin(x);
                row_add(x, x->w[b][r], 1);
                row_add(x, x->w[b][r - 1], -1);
                row_end(x, GLP_UP, 0);
            }
        }
}

/* v <= u (or = u), and the cost model's order: the first k blocks. */
static void add_recompute(ilp *x, int i)
{
    const pp__part_problem *pr = x->pr;
    int R = pr->nruns, U = pr->unit;
    for (int r = 0; r < R; r++) {
        row_begin(x);
        row_add(x, x->v[i][r], 1);
        row_u(x, i, r, -U);
        row_end(x, pr->allow_rc == 2 ? GLP_FX : GLP_UP, 0);
    }
    if (pr->allow_rc != 1) return;
    for (int r = 0; r + 1 < R; r++) {
        double cap = x->nmax[i] * U, len = fmin(pr->runs[r].len, cap), next = fmin(pr->runs[r + 1].len, cap);
        row_begin(x); /* q = 1 -> run r fully recomputed on the stage */
        row_add(x, x->v[i][r], 1);
        row_u(x, i, r, -U);
        row_add(x, x->q[i][r], -len);
        row_end(x, GLP_LO, -len);
        row_begin(x); /* later runs recompute only after run r is all recomputed */
        row_add(x, x->v[i][r + 1], 1);
        row_add(x, x->q[i][r], -next);
        row_end(x, GLP_UP, 0);
        if (r > 0) {
            row_begin(x);
            row_add(x, x->q[i][r], 1);
            row_add(x, x->q[i][r - 1], -1);
            row_end(x, GLP_UP, 0);
        }
    }
}

/* Presence of kept / recomputed blocks of each kind, and the jumps H. */
static void add_presence(ilp *x, int i)
{
    const pp__part_problem *pr = x->pr;
    const pp__stage_coef *st = &pr->st[i];
    for (int k = 0; k < PP_BLOCK_COUNT; k++) {
        double nk = fmin(blocks_of_kind(pr, k), x->nmax[i] * pr->unit);
        row_begin(x);
        for (int r = 0; r < pr->nruns; r++)
            if (pr->runs[r].kind == k) {
                row_u(x, i, r, pr->unit);
                if (pr->allow_rc) row_add(x, x->v[i][r], -1);
            }
        row_add(x, x->pi[i][k], -(nk > 0 ? nk : 1));
        row_end(x, GLP_UP, 0);
        if (pr->allow_rc) {
            row_begin(x);
            for (int r = 0; r < pr->nruns; r++)
                if (pr->runs[r].kind == k) row_add(x, x->v[i][r], 1);
            row_add(x, x->psi[i][k], -(nk > 0 ? nk : 1));
            row_end(x, GLP_UP, 0);
        }
        for (int f = 0; f < PP_PHASE_COUNT; f++) {
            row_begin(x);
            row_add(x, x->H[i][f], 1);
            row_add(x, x->pi[i][k], -st->j1[f][k] / GIB);
            row_end(x, GLP_LO, 0);
            if (!pr->allow_rc) continue;
            row_begin(x);
            row_add(x, x->H[i][f], 1);
            row_add(x, x->psi[i][k], -st->j2[f][k] / GIB);
            row_end(x, GLP_LO, 0);
        }
    }
}

/* lin(u, v) + H [+ cap] <= usable [+ BM z], in GiB. */
static void mem_row(ilp *x, int i, int f, int zero_side, double bm)
{
    const pp__part_problem *pr = x->pr;
    const pp__stage_coef *st = &pr->st[i];
    row_begin(x);
    x->cst += (zero_side ? st->e_zero[f] + pr->cap[f] : st->e_inf[f]) / GIB;
    for (int r = 0; r < pr->nruns; r++) {
        int k = pr->runs[r].kind;
        row_u(x, i, r, pr->unit * (zero_side ? st->s_zero[f][k] : st->s_inf[f][k]) / GIB);
        if (pr->allow_rc) row_add(x, x->v[i][r], -st->d[f][k] / GIB);
    }
    row_add(x, x->H[i][f], 1);
    double rhs = pr->mem / GIB;
    if (x->zside[i][f] == 2) {
        row_add(x, x->z[i][f], zero_side ? bm : -bm);
        if (zero_side) rhs += bm;
    }
    row_end(x, GLP_UP, rhs);
}

/* A bound on how far a memory row can exceed the usable memory, GiB. */
static double big_m(const pp__part_problem *pr, int i, int f, int nmax)
{
    const pp__stage_coef *st = &pr->st[i];
    double lin = fmax(st->e_inf[f], st->e_zero[f] + pr->cap[f]), jump = 0;
    for (int k = 0; k < PP_BLOCK_COUNT; k++) {
        double n = fmin(blocks_of_kind(pr, k), (double)nmax * pr->unit);
        lin += n * fmax(0, fmax(st->s_inf[f][k], st->s_zero[f][k])) + n * fmax(0, st->d[f][k]);
        jump = fmax(jump, fmax(st->j1[f][k], st->j2[f][k]));
    }
    return fmax(1, (lin + jump - pr->mem) / GIB + 1);
}

static void add_stage(ilp *x, int i)
{
    const pp__part_problem *pr = x->pr;
    const pp__stage_coef *st = &pr->st[i];
    if (pr->allow_rc) add_recompute(x, i);
    add_presence(x, i);
    for (int f = 0; f < PP_PHASE_COUNT; f++) {
        double bm = big_m(pr, i, f, x->nmax[i]);
        if (x->zside[i][f] != 1) mem_row(x, i, f, 0, bm);
        if (x->zside[i][f] != 0) mem_row(x, i, f, 1, bm);
        if (x->zside[i][f] == 2) add_cap_link(x, i, f);
    }
    row_begin(x); /* time_i <= T */
    x->cst += st->t0 / x->tref;
    for (int r = 0; r < pr->nruns; r++) {
        int k = pr->runs[r].kind;
        row_u(x, i, r, pr->unit * st->tau[k] / x->tref);
        if (pr->allow_rc) row_add(x, x->v[i][r], st->rho[k] / x->tref);
    }
    row_add(x, x->T, -1);
    row_end(x, GLP_UP, 0);
}

/* ------------------------------------------------------------ one run
 * All blocks of one kind (most models): per stage n (units), and with free
 * recompute k = psi + k' (psi = [k >= 1], k' <= (blocks-1) psi), so the
 * working-set jump is j1 + (j2 - j1) psi exactly when j2 >= j1. Which side
 * of the bucket cap binds depends on n only: z = [n >= n*]. Much tighter
 * than the general form, whose presence binaries are big-M. */

typedef struct one {
    int n[PP_MAX_STAGES], psi[PP_MAX_STAGES], kk[PP_MAX_STAGES], z[PP_MAX_STAGES][PP_PHASE_COUNT];
    int side[PP_MAX_STAGES][PP_PHASE_COUNT]; /* 0 inf only, 1 zero only, 2 both (z) */
    int nstar[PP_MAX_STAGES][PP_PHASE_COUNT];
} one;

static int one_applies(const pp__part_problem *pr)
{
    if (pr->nruns != 1) return 0;
    int k = pr->runs[0].kind;
    for (int i = 0; i < pr->p; i++)
        for (int f = 0; f < PP_PHASE_COUNT; f++)
            if (pr->allow_rc == 1 && pr->st[i].j1[f][k] > pr->st[i].j2[f][k]) return 0;
    return 1;
}

/* Which side of min(A_inf, A_zero + cap) binds, as n grows (d cancels). */
static void one_sides(const pp__part_problem *pr, const int *nm, one *o)
{
    int k = pr->runs[0].kind;
    for (int i = 0; i < pr->p; i++)
        for (int f = 0; f < PP_PHASE_COUNT; f++) {
            int nmax = nm[i];
            const pp__stage_coef *st = &pr->st[i];
            double a = st->e_inf[f] - st->e_zero[f] - pr->cap[f];
            double b = (st->s_inf[f][k] - st->s_zero[f][k]) * pr->unit; /* delta(n) = a + b n */
            if (!isfinite(pr->cap[f]) || a + b * nmax <= 0) o->side[i][f] = 0;
            else if (a + b >= 0) o->side[i][f] = 1;
            else {
                o->side[i][f] = 2;
                o->nstar[i][f] = (int)ceil(-a / b);
            }
        }
}

static void one_mem_row(ilp *x, one *o, int i, int f, int zero_side, double bm)
{
    const pp__part_problem *pr = x->pr;
    const pp__stage_coef *st = &pr->st[i];
    int k = pr->runs[0].kind, U = pr->unit;
    double sl = zero_side ? st->s_zero[f][k] : st->s_inf[f][k], d = st->d[f][k];
    row_begin(x);
    x->cst += (zero_side ? st->e_zero[f] + pr->cap[f] : st->e_inf[f]) / GIB;
    if (pr->allow_rc == 2) { /* every block recomputed */
        row_add(x, o->n[i], U * (sl - d) / GIB);
        x->cst += st->j2[f][k] / GIB;
    } else {
        row_add(x, o->n[i], U * sl / GIB);
        x->cst += st->j1[f][k] / GIB;
        if (pr->allow_rc == 1) {
            row_add(x, o->kk[i], -d / GIB);
            row_add(x, o->psi[i], (st->j2[f][k] - st->j1[f][k] - d) / GIB);
        }
    }
    double rhs = pr->mem / GIB;
    if (o->side[i][f] == 2) {
        row_add(x, o->z[i][f], zero_side ? bm : -bm);
        if (zero_side) rhs += bm;
    }
    row_end(x, GLP_UP, rhs);
}

static void one_build(ilp *x, one *o)
{
    const pp__part_problem *pr = x->pr;
    int p = pr->p, U = pr->unit, nu = pr->runs[0].len / U, k = pr->runs[0].kind;
    const int *nm = x->nmax;
    one_sides(pr, nm, o);
    for (int i = 0; i < p; i++) {
        o->n[i] = col(x, GLP_IV, 1, nm[i]);
        if (pr->allow_rc == 1) {
            o->psi[i] = col(x, GLP_BV, 0, 1);
            o->kk[i] = col(x, GLP_IV, 0, nm[i] * U - 1);
        }
        for (int f = 0; f < PP_PHASE_COUNT; f++)
            if (o->side[i][f] == 2) o->z[i][f] = col(x, GLP_BV, 0, 1);
    }
    x->T = col(x, GLP_CV, 0, HUGE_VAL);
    glp_set_obj_coef(x->lp, x->T, 1);
    x->ncols = glp_get_num_cols(x->lp);
    row_begin(x);
    for (int i = 0; i < p; i++) row_add(x, o->n[i], 1);
    row_end(x, GLP_FX, nu);
    for (int i = 0; i < p; i++) {
        const pp__stage_coef *st = &pr->st[i];
        if (pr->allow_rc == 1) {
            row_begin(x); /* k' <= (blocks - 1) psi */
            row_add(x, o->kk[i], 1);
            row_add(x, o->psi[i], -(nm[i] * U - 1));
            row_end(x, GLP_UP, 0);
            row_begin(x); /* psi + k' <= blocks */
            row_add(x, o->kk[i], 1);
            row_add(x, o->psi[i], 1);
            row_add(x, o->n[i], -U);
            row_end(x, GLP_UP, 0);
        }
        for (int f = 0; f < PP_PHASE_COUNT; f++) {
            if (o->side[i][f] == 2) { /* z = [n >= n*] */
                int ns = o->nstar[i][f];
                row_begin(x);
                row_add(x, o->n[i], 1);
                row_add(x, o->z[i][f], -ns);
                row_end(x, GLP_LO, 0);
                row_begin(x);
                row_add(x, o->n[i], 1);
                row_add(x, o->z[i][f], -nm[i]);
                row_end(x, GLP_UP, ns - 1);
            }
            double bm = big_m(pr, i, f, nm[i]);
            if (o->side[i][f] != 1) one_mem_row(x, o, i, f, 0, bm);
            if (o->side[i][f] != 0) one_mem_row(x, o, i, f, 1, bm);
        }
        row_begin(x); /* time_i <= T */
        x->cst += st->t0 / x->tref;
        row_add(x, o->n[i], U * st->tau[k] / x->tref);
        if (pr->allow_rc == 1) {
            row_add(x, o->kk[i], st->rho[k] / x->tref);
            row_add(x, o->psi[i], st->rho[k] / x->tref);
        }
        if (pr->allow_rc == 2) row_add(x, o->n[i], U * st->rho[k] / x->tref);
        row_add(x, x->T, -1);
        row_end(x, GLP_UP, 0);
    }
}

static void one_extract(const ilp *x, const one *o, pp__part_result *out)
{
    const pp__part_problem *pr = x->pr;
    for (int i = 0; i < pr->p; i++) {
        out->layers[i] = (int)lround(glp_mip_col_val(x->lp, o->n[i])) * pr->unit;
        out->recompute[i] = pr->allow_rc == 2 ? out->layers[i]
                          : pr->allow_rc == 1 ? (int)lround(glp_mip_col_val(x->lp, o->psi[i]) + glp_mip_col_val(x->lp, o->kk[i]))
                                              : 0;
    }
    out->objective = glp_mip_obj_val(x->lp) * x->tref;
}

static double time_scale(const pp__part_problem *pr)
{
    double t = 0;
    for (int r = 0; r < pr->nruns; r++) t += pr->runs[r].len * pr->st[0].tau[pr->runs[r].kind];
    t = (t + pr->st[0].t0) / pr->p;
    return t > 0 ? t : 1;
}

/* A lower bound on the slowest stage, by a relaxation that is solved
 * exactly: every block as fast as the fastest kind and as light as the
 * lightest, every recomputed block saving as much as the best kind saves
 * and costing as little as the cheapest; jumps dropped. A stage of n units
 * then needs k >= (memory - usable) / saving recomputed blocks, so its least
 * time is a function of n alone; the least T for which the stages can hold
 * every unit is found by bisection. */
typedef struct relax {
    double tau, rho, d, s_inf[PP_PHASE_COUNT], s_zero[PP_PHASE_COUNT];
} relax;

static relax relaxed(const pp__part_problem *pr, int i)
{
    relax x = {HUGE_VAL, HUGE_VAL, 0, {HUGE_VAL, HUGE_VAL}, {HUGE_VAL, HUGE_VAL}};
    const pp__stage_coef *st = &pr->st[i];
    for (int r = 0; r < pr->nruns; r++) {
        int k = pr->runs[r].kind;
        x.tau = fmin(x.tau, st->tau[k] * pr->unit);
        x.rho = fmin(x.rho, pr->allow_rc ? st->rho[k] : HUGE_VAL);
        for (int f = 0; f < PP_PHASE_COUNT; f++) {
            x.s_inf[f] = fmin(x.s_inf[f], st->s_inf[f][k] * pr->unit);
            x.s_zero[f] = fmin(x.s_zero[f], st->s_zero[f][k] * pr->unit);
            x.d = fmax(x.d, st->d[f][k]);
        }
    }
    return x;
}

/* Least relaxed time of stage i with n units; HUGE_VAL if it cannot fit. */
static double relaxed_time(const pp__part_problem *pr, int i, const relax *x, int n)
{
    const pp__stage_coef *st = &pr->st[i];
    double k = 0;
    if (pr->allow_rc == 2) return st->t0 + x->tau * n + x->rho * n * pr->unit; /* time only */
    for (int f = 0; f < PP_PHASE_COUNT; f++) {
        double mem = fmin(st->e_inf[f] + x->s_inf[f] * n, st->e_zero[f] + pr->cap[f] + x->s_zero[f] * n);
        if (mem <= pr->mem) continue;
        if (pr->allow_rc != 1 || x->d <= 0) return HUGE_VAL;
        k = fmax(k, ceil((mem - pr->mem) / x->d * (1 - 1e-12)));
    }
    if (k > (double)n * pr->unit) return HUGE_VAL;
    return st->t0 + x->tau * n + (k > 0 ? x->rho * k : 0);
}

/* Most units stage i can hold within T in the relaxation (0: none). */
static int relaxed_cap(const pp__part_problem *pr, int i, const relax *x, int nu, double T)
{
    int lo = 0, hi = nu;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (relaxed_time(pr, i, x, mid) <= T) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

double pp__part_sum_lb(const pp__part_problem *pr)
{
    double sum = 0, tau = HUGE_VAL;
    int nu = 0;
    for (int r = 0; r < pr->nruns; r++) nu += pr->runs[r].len / pr->unit;
    for (int i = 0; i < pr->p; i++) {
        relax x = relaxed(pr, i);
        sum += pr->st[i].t0;
        tau = fmin(tau, x.tau);
    }
    return isfinite(tau) && tau > 0 ? (sum + tau * nu) * (1 - 1e-9) : 0;
}

double pp__part_time_lb(const pp__part_problem *pr)
{
    relax x[PP_MAX_STAGES];
    double lo = 0, hi = 0;
    int nu = 0;
    for (int r = 0; r < pr->nruns; r++) nu += pr->runs[r].len / pr->unit;
    for (int i = 0; i < pr->p; i++) {
        x[i] = relaxed(pr, i);
        if (!(x[i].tau > 0)) return 0;
        hi = fmax(hi, pr->st[i].t0 + x[i].tau * nu + (x[i].rho < HUGE_VAL ? x[i].rho * nu * pr->unit : 0));
    }
    for (int it = 0; it < 100; it++) {
        double mid = (lo + hi) / 2;
        if (mid <= lo || mid >= hi) break; /* adjacent doubles: nothing left to halve */
        long cnt = 0;
        for (int i = 0; i < pr->p && cnt >= 0 && cnt < nu; i++) {
            int c = relaxed_cap(pr, i, &x[i], nu, mid);
            cnt = c < 1 ? -1 : cnt + c;
        }
        if (cnt >= nu) hi = mid;
        else lo = mid;
    }
    return lo * (1 - 1e-9);
}

/* Units each stage can hold and still finish within t_ub: every unit costs
 * at least the cheapest kind's time. */
static void stage_caps(ilp *x)
{
    const pp__part_problem *pr = x->pr;
    int nu = 0;
    for (int r = 0; r < pr->nruns; r++) nu += pr->runs[r].len / pr->unit;
    for (int i = 0; i < pr->p; i++) {
        double tau = HUGE_VAL, cap = nu - pr->p + 1;
        for (int r = 0; r < pr->nruns; r++) tau = fmin(tau, pr->st[i].tau[pr->runs[r].kind] * pr->unit);
        double t = tau > 0 ? (x->t_ub - pr->st[i].t0) / tau : HUGE_VAL;
        x->nmax[i] = (int)fmax(1, fmin(cap, isfinite(t) && t >= 0 ? floor(t) : cap));
    }
}

static void extract(const ilp *x, pp__part_result *out)
{
    const pp__part_problem *pr = x->pr;
    for (int i = 0; i < pr->p; i++) {
        double n = 0, k = 0;
        for (int r = 0; r < pr->nruns; r++) {
            double hi = x->P[i + 1][r] ? glp_mip_col_val(x->lp, x->P[i + 1][r]) : x->Pc[i + 1][r];
            double lo = x->P[i][r] ? glp_mip_col_val(x->lp, x->P[i][r]) : x->Pc[i][r];
            n += hi - lo;
            if (pr->allow_rc) k += glp_mip_col_val(x->lp, x->v[i][r]);
        }
        out->layers[i] = (int)lround(n) * pr->unit;
        out->recompute[i] = (int)lround(k);
    }
    out->objective = glp_mip_obj_val(x->lp) * x->tref;
}

static pp_status map_result(int ret, int mip, pp__part_result *out, pp_error *err)
{
    if (ret == GLP_ETMLIM) out->time_limit_hit = 1;
    if ((ret == 0 || ret == GLP_ETMLIM) && (mip == GLP_OPT || mip == GLP_FEAS)) return PP_OK;
    if ((ret == 0 && mip == GLP_NOFEAS) || ret == GLP_ENOPFS)
        return pp__fail(err, PP_ERR_INFEASIBLE, "no stage split fits in memory");
    if (ret == GLP_ETMLIM) return pp__fail(err, PP_ERR_INTERNAL, "stage-split ILP: time limit hit before any split was found");
    return pp__fail(err, PP_ERR_INTERNAL, "stage-split ILP: GLPK returned %d (status %d)", ret, mip);
}

static pp_status solve_here(const pp__part_problem *pr, double time_limit_s, pp__part_result *out, pp_error *err)
{
    memset(out, 0, sizeof *out);
    out->status = PP_ERR_INTERNAL;
    if (pr->p < 2 || pr->p > PP_MAX_STAGES || pr->nruns < 1 || pr->nruns > PP_PART_MAX_RUNS || pr->unit < 1)
        return pp__fail(err, PP_ERR_INTERNAL, "stage-split ILP: malformed problem (%d stages, %d runs)", pr->p, pr->nruns);
    ilp *x = calloc(1, sizeof *x);
    int cap = pr->p * (4 * PP_PART_MAX_RUNS + 4 * PP_BLOCK_COUNT + 4 * PP_PHASE_COUNT) + 8;
    if (x) {
        x->acc = calloc((size_t)cap + 1, sizeof *x->acc);
        x->ind = calloc((size_t)cap + 1, sizeof *x->ind);
        x->val = calloc((size_t)cap + 1, sizeof *x->val);
    }
    if (!x || !x->acc || !x->ind || !x->val) {
        if (x) free(x->acc), free(x->ind), free(x->val);
        free(x);
        return pp__fail(err, PP_ERR_NOMEM, "out of memory building the stage-split ILP");
    }
    x->pr = pr;
    x->tref = time_scale(pr);
    double t_lb = pp__part_time_lb(pr);
    pp__part_result ub;
    pp__part_greedy(pr, t_lb, &ub);
    x->t_ub = ub.status == PP_OK ? ub.objective * (1 + 1e-9) : HUGE_VAL;
    stage_caps(x);
    one *o = one_applies(pr) ? calloc(1, sizeof *o) : NULL;
    hook h;
    pp_status st;
    glp_error_hook(on_glpk_error, &h);
    if (setjmp(h.jb)) {
        glp_error_hook(NULL, NULL);
        glp_free_env(); /* required after an error; frees x->lp as well */
        st = pp__fail(err, PP_ERR_INTERNAL, "stage-split ILP: GLPK reported an internal error");
        goto cleanup;
    }
    glp_term_out(GLP_OFF);
    x->lp = glp_create_prob();
    glp_set_obj_dir(x->lp, GLP_MIN);
    if (o) {
        one_build(x, o);
    } else {
        add_columns(x);
        add_layout(x);
        for (int i = 0; i < pr->p; i++) add_stage(x, i);
    }
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    parm.mip_gap = 0;
    parm.tm_lim = (int)fmin(time_limit_s * 1000, 3.6e6);
    if (ub.status == PP_OK) glp_set_col_bnds(x->lp, x->T, GLP_DB, t_lb / x->tref, ub.objective * (1 + 1e-9) / x->tref);
    else glp_set_col_bnds(x->lp, x->T, GLP_LO, t_lb / x->tref, 0);
    int ret = glp_intopt(x->lp, &parm);
    int mip = glp_mip_status(x->lp);
    st = map_result(ret, mip, out, err);
    if (st == PP_OK) {
        if (o) one_extract(x, o, out);
        else extract(x, out);
    }
    out->status = st;
    glp_delete_prob(x->lp);
    glp_error_hook(NULL, NULL);
cleanup:
    free(o);
    free(x->acc);
    free(x->ind);
    free(x->val);
    free(x);
    return st;
}

typedef struct job {
    const pp__part_problem *pr;
    double time_limit_s;
    pp__part_result *out;
    pp_error *err;
    pp_status st;
} job;

static void *solve_thread(void *arg)
{
    job *j = arg;
    /* every GLPK call on this thread, the check too: the caller's thread
     * (an OpenMP worker that may end) is left without a GLPK environment */
    j->st = glp_config("TLS") ? solve_here(j->pr, j->time_limit_s, j->out, j->err)
                              : pp__fail(j->err, PP_ERR_INTERNAL, "stage-split ILP: this GLPK keeps one environment "
                                         "for all threads (built without thread-local storage); not used");
    glp_free_env(); /* this thread's environment only; a no-op when already freed */
    return NULL;
}

pp_status pp__ilp_solve(const pp__part_problem *pr, double time_limit_s, pp__part_result *out, pp_error *err)
{
    memset(out, 0, sizeof *out);
    out->status = PP_ERR_INTERNAL;
    job j = {pr, time_limit_s, out, err, PP_ERR_INTERNAL};
    pthread_attr_t attr;
    pthread_t t;
    int rc = pthread_attr_init(&attr);
    if (rc == 0) {
        pthread_attr_setstacksize(&attr, 8u << 20); /* GLPK's branch and bound recurses; as a main thread */
        rc = pthread_create(&t, &attr, solve_thread, &j);
        pthread_attr_destroy(&attr);
    }
    if (rc != 0) return pp__fail(err, PP_ERR_INTERNAL, "stage-split ILP: cannot start its thread: %s", strerror(rc));
    pthread_join(t, NULL);
    return j.st;
}
