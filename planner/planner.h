/*
 * planner.h — private interface of the planner/ room: the strategy space and
 * its validity rules (space.c), the search (search.c), the stage split
 * (partition.c with ilp_glpk.c, the only file that sees GLPK, and the exact
 * DP of dp_partition.c) and the explanations (explain.c).
 * Internal symbols are pp__; nothing here allocates behind the caller's back
 * except where a function says it returns owned memory.
 */
#ifndef PARPLAN_PLANNER_H
#define PARPLAN_PLANNER_H

#include <stdint.h>

#include "costmodel/costmodel.h" /* pp__fail */
#include "parplan.h"

/* ------------------------------------------------------------ the space */

/* One point of the space before the stage split. Degrees are ints; the
 * small enums are bytes. */
typedef struct pp__cand {
    double lb;          /* objective lower bound (s per step, or bytes for memory) */
    double lb_mem;      /* peak-memory lower bound, bytes */
    double lb_opt;      /* optimizer-step lower bound, s (part of lb) */
    int dp, tp, pp, cp, ep, mb, shard;
    uint32_t id;        /* enumeration index: the last tie-break */
    uint8_t fw, sp, zero, offload, recompute, precision, schedule, v;
    /* sp packs the MoE options too (keeps the struct at 64 bytes):
     * bit 0 sequence parallelism, PP_CAND_FOLD (etp 1), PP_CAND_HIER
     * (hierarchical dispatch), PP_CAND_EPOV (EP all-to-all overlap),
     * PP_CAND_BF16W (bf16 weights where FP8 primary weights are the
     * framework's default), PP_CAND_TT (torchtitan's launch of an FSDP
     * plan HF Accelerate would run) */
} pp__cand;

#define PP_CAND_SP 1u
#define PP_CAND_FOLD 2u
#define PP_CAND_HIER 4u
#define PP_CAND_EPOV 8u
#define PP_CAND_BF16W 16u
#define PP_CAND_TT 32u /* fsdp at pp 1 launched by torchtitan, not HF Accelerate */
/* recompute packs the recompute modules too: bits 0-1 pp_recompute, the
 * PP_RC_* mask above them */
#define PP_CAND_RC(k) ((pp_recompute)((k)->recompute & 3u))
#define PP_CAND_RC_MODULES(k) ((unsigned)(k)->recompute >> 2)

#define PP_SPACE_MAX 256 /* values of one derived dimension (divisors of <= 2^20 GPUs: <= 240) */

/* The resolved search settings: every dimension as an explicit value list. */
typedef struct pp__space {
    const pp_model *m;
    const pp_cluster *c;
    pp_search_opts o;           /* copy, with seq and defaults filled */
    int gpus, seq, max_tp;
    int tp[PP_SET_MAX], ntp, pp[PP_SPACE_MAX], npp, cp[PP_SPACE_MAX], ncp, ep[PP_SET_MAX], nep;
    int sp[2], nsp, zero[4], nzero;
    int prec[PP_PREC_COUNT], nprec, off[PP_OFFLOAD_COUNT], noff, rc[PP_RECOMPUTE_COUNT], nrc;
    unsigned rc_groups[3];                /* the model's recompute module groups (pp__rc_module_groups) */
    int nrc_groups;
    int sched[PP_SCHED_COUNT], nsched;
    int fw[PP_FW_COUNT], nfw;   /* frameworks searched */
    double usable;              /* GPU bytes a plan may use */
    double price;               /* $ per GPU-hour for the cost objective */
} pp__space;

/* Fills a space from options; PP_ERR_INPUT naming the option on bad input
 * (a pinned value that breaks a rule on its own, an unknown value). */
pp_status pp__space_init(pp__space *sp, const pp_model *m, const pp_cluster *c, const pp_search_opts *o,
                         pp_error *err);
/* 1 if the candidate passes rule r (the search's evaluation of the one
 * rule table, costmodel/rules.c). */
int pp__rule_ok(const pp__space *sp, const pp__cand *k, pp_rule r);
/* Writes the strategy of candidate k into s: its framework's behaviours
 * filled, grad_accum 0 and no split (pp_strategy_resolve completes it). */
void pp__cand_strategy(const pp__space *sp, const pp__cand *k, pp_strategy *s);

/* Divisors of n in increasing order, O(sqrt n); at most cap. */
int pp__divisors(long long n, int *out, int cap);

/* Lower-bound tables: probes of the cost model shared by many candidates. */
typedef struct pp__bounds pp__bounds;
pp__bounds *pp__bounds_new(void);
void pp__bounds_free(pp__bounds *b);
int pp__bounds_probes(const pp__bounds *b);
int pp__bounds_failed(const pp__bounds *b);
/* Fills k->lb_mem (bytes) and k->lb (objective units) from cached probes:
 *   memory >= context + 1 / sum_i 1/(S + inflight_i A)   (uniform blocks)
 *   step   >= (m + (p-1)/v) (T + R X) / p + U / p
 * where S, A, T, U are the model states, activations per micro-batch,
 * micro-batch time and optimizer step of the whole model on one stage, and
 * for full recompute R the recompute time of every block and X
 * pp__least_recompute (docs/planner.md). */
void pp__bounds_cand(pp__bounds *b, const pp__space *sp, pp__cand *k);
/* The least fraction of all blocks a fitting split must recompute: p
 * stages holding infl[i] micro-batches, M bytes for blocks on each, the
 * blocks' states s and activations a0 (none recomputed) and a1 (all), per
 * micro-batch; 1 when even recomputing all cannot fit. */
double pp__least_recompute(int p, const double *infl, double M, double s, double a0, double a1);

/* Enumerates every valid candidate, fills k->lb and k->lb_mem, and keeps
 * those whose memory bound is at most mem_limit bytes. *out is malloc'ed
 * (caller frees). *enumerated counts valid candidates, *pruned those
 * dropped by memory. rule_hits[r] counts rejections by each rule (for "no
 * valid strategy"); rule_why (may be NULL), PP_RULE_COUNT lines, gets each
 * rule's message for the first strategy it refused. */
pp_status pp__space_enumerate(const pp__space *sp, pp__bounds *b, double mem_limit, pp__cand **out, long long *n,
                              long long *enumerated, long long *pruned, long long rule_hits[PP_RULE_COUNT],
                              char (*rule_why)[PP_ERR_LEN], pp_error *err);

/* ------------------------------------------------------------ the split */

#define PP_PART_MAX_RUNS 4  /* runs of one block kind the ILP models; more -> exact DP */

/* A contiguous run of blocks of one kind. */
typedef struct pp__run {
    int kind, start, len;
} pp__run;

int pp__model_runs(const pp_model *m, pp__run *runs, int cap);

/* Per-stage costs as the ILP sees them (partition.c builds them by probing
 * pp_memory_estimate / pp_time_estimate; see docs/planner.md):
 *   time_i  = t0 + sum_k (tau_k u_k + rho_k v_k)               [s]
 *   mem_i,f = min(lin_inf, lin_zero + cap) + max(present jumps) [bytes]
 * for phase f (forward/backward, optimizer step), u_k blocks of kind k on
 * the stage and v_k of them fully recomputed. */
typedef struct pp__stage_coef {
    double t0, tau[PP_BLOCK_COUNT], rho[PP_BLOCK_COUNT];
    double e_inf[PP_PHASE_COUNT], e_zero[PP_PHASE_COUNT];        /* empty stage */
    double s_inf[PP_PHASE_COUNT][PP_BLOCK_COUNT];               /* per block */
    double s_zero[PP_PHASE_COUNT][PP_BLOCK_COUNT];
    double d[PP_PHASE_COUNT][PP_BLOCK_COUNT];                   /* saved per recomputed block */
    double j1[PP_PHASE_COUNT][PP_BLOCK_COUNT];                  /* a kept block present */
    double j2[PP_PHASE_COUNT][PP_BLOCK_COUNT];                  /* a recomputed block present */
} pp__stage_coef;

typedef struct pp__part_problem {
    int p;                      /* stages */
    int unit;                   /* blocks per unit (interleaved: v) */
    int nruns;
    pp__run runs[PP_PART_MAX_RUNS];
    int allow_rc;               /* per-stage full recompute allowed */
    double mem;                 /* usable bytes */
    double cap[PP_PHASE_COUNT]; /* saturation constant, bytes; HUGE_VAL = none */
    pp__stage_coef st[PP_MAX_STAGES];
} pp__part_problem;

typedef struct pp__part_result {
    int status;                 /* PP_OK, PP_ERR_INFEASIBLE, PP_ERR_INTERNAL */
    int time_limit_hit;
    int budget_skipped;         /* not solved: the search's ILP budget was spent */
    double objective;           /* slowest stage time per micro-batch, s */
    int layers[PP_MAX_STAGES];
    int recompute[PP_MAX_STAGES];
} pp__part_result;

/* Solves the problem with GLPK (ilp_glpk.c). Thread-safe: one glp_prob per
 * call; GLPK errors come back as PP_ERR_INTERNAL, never abort(). */
pp_status pp__ilp_solve(const pp__part_problem *pr, double time_limit_s, pp__part_result *out, pp_error *err);

/* Evaluates the surrogate costs for a split: per-stage time and both phases. */
void pp__part_eval(const pp__part_problem *pr, const int *layers, const int *rc, int stage, double *time,
                   double *mem);

/* Primal heuristic on the coefficients: bisection on the slowest stage time
 * with maximal left-to-right packing. PP_ERR_INFEASIBLE when no split fits. */
pp_status pp__part_greedy(const pp__part_problem *pr, double t_lb, pp__part_result *out);
/* A lower bound on the slowest stage time, s (cheapest blocks, no memory). */
double pp__part_time_lb(const pp__part_problem *pr);
/* A lower bound on the sum of the stages' times, s: every stage's fixed
 * time and every unit at the cheapest stage's rate. */
double pp__part_sum_lb(const pp__part_problem *pr);

/* Exact stage oracle: the true memory peak and micro-batch time of stage i
 * holding blocks [a, a+n) with k recomputed, from pp_memory_estimate and
 * pp_time_estimate (other stages empty). */
typedef struct pp__oracle {
    const pp_model *m;
    const pp_cluster *c;
    pp_strategy s;              /* resolved; per_stage_recompute set */
    pp_memory mem;              /* scratch */
    pp_time time;
    pp_throughput thr;
    long long calls;
} pp__oracle;

void pp__oracle_init(pp__oracle *o, const pp_model *m, const pp_cluster *c, const pp_strategy *s);
void pp__oracle_stage(pp__oracle *o, int i, int a, int n, int k, double *peak, double *t_mb);

/* Builds the ILP problem for resolved strategy s by probing, and checks the
 * coefficients against the oracle on s's own split. 0 on success; -1 when
 * the layer pattern or the cost model does not have the structure the ILP
 * assumes (the caller then uses the DP). */
int pp__part_build(const pp_model *m, const pp_cluster *c, const pp_strategy *s, int allow_rc,
                   pp__part_problem *pr, int *probes);
/* Writes a solution into s (stage_layers, and per-stage recompute reduced to
 * the least that fits), then checks it with pp_memory_estimate and
 * pp_time_estimate against the coefficients. 0 ok, -1 mismatch. */
int pp__part_apply(const pp_model *m, const pp_cluster *c, const pp__part_problem *pr, const pp__part_result *r,
                   pp_strategy *s);
/* Exact DP over block boundaries (min-max stage time, per-stage least
 * recompute that fits) with the oracle. Independent of the ILP: the
 * cross-check and the fallback. PP_ERR_INFEASIBLE when no split fits. */
pp_status pp__dp_partition(const pp_model *m, const pp_cluster *c, const pp_strategy *s, int allow_rc,
                           pp__part_result *out);
/* Writes a DP result into s. */
void pp__part_apply_raw(const pp__part_result *r, int allow_rc, pp_strategy *s);

/* The whole split step for one resolved strategy: build, solve (ILP, or the
 * DP when the ILP does not apply), verify, write into s. *how: 0 ILP, 1 DP. */
pp_status pp__partition(const pp_model *m, const pp_cluster *c, pp_strategy *s, int allow_rc, double tlim,
                        int *how, int *time_limit_hit, int *probes, pp_error *err);

/* 64-bit FNV-1a over bytes, for cache keys. */
uint64_t pp__hash(const void *p, size_t n, uint64_t h);

/* ------------------------------------------------------------ ranking */

/* Total order of plans by objective, then strategy fields, then split:
 * <0 when a ranks before b. */
int pp__plan_cmp(const pp_cluster *c, const pp_plan *a, const pp_plan *b, pp_objective obj, double price);

#endif
