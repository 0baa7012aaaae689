/*
 * test_partition.c — the stage-split ILP against independent truth:
 *  - random small instances (<= 12 blocks, <= 4 stages, dense and mixed
 *    dense/MoE, free per-stage recompute, memory set so it binds): the ILP's
 *    optimum equals an exhaustive enumeration of every contiguous split and
 *    every recompute count, each costed by pp_memory_estimate and
 *    pp_time_estimate;
 *  - larger instances (real presets, up to 32 stages): the exact DP over
 *    block boundaries agrees with the ILP;
 *  - GLPK hygiene: bad problems come back as statuses, not aborts.
 * The objective is the slowest stage's micro-batch time.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner.h"
#include "tests/fixtures.h"

static unsigned long long rng = 88172645463325252ULL;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng % n);
}

typedef struct inst {
    pp_model m;
    pp_cluster c;
    pp_strategy s;
    int allow_rc;
    char what[160];
} inst;

/* Peak of stage i for the even split with k recomputed per stage. */
static double even_peak(inst *x, int k)
{
    pp_strategy s = x->s;
    s.recompute_layers = k;
    pp_memory mem;
    pp_memory_estimate(&x->m, &x->c, &s, &mem);
    return mem.peak_bytes;
}

/* A small model from a preset: L blocks, optionally a dense/MoE pattern. */
static void small_model(inst *x, int L, int kind)
{
    pp_error e;
    cr_assert_eq(pp_model_load(kind ? "mixtral-8x7b" : "gpt3-1.3b", &x->m, &e), PP_OK, "%s", e.msg);
    x->m.layers = L;
    if (kind == 1) /* dense prefix, MoE suffix (DeepSeek-V3's shape) */
        for (int i = 0; i < L; i++) x->m.block_kind[i] = i < 1 + (int)rnd(3) ? PP_BLOCK_DENSE : PP_BLOCK_MOE;
    if (kind == 2) /* three runs: dense, MoE, dense */
        for (int i = 0; i < L; i++) x->m.block_kind[i] = i >= 2 && i < L - 2 ? PP_BLOCK_MOE : PP_BLOCK_DENSE;
}

static int make_small(inst *x, unsigned seed)
{
    rng = 0x9E3779B97F4A7C15ULL * (seed + 1);
    memset(x, 0, sizeof *x);
    int kind = seed % 3, L = 4 + (int)rnd(9), p = 2 + (int)rnd(3);
    if (p > L) p = L;
    small_model(x, L, kind);
    pp_error e;
    cr_assert_eq(pp_cluster_load("dgx-a100-80g", &x->c, &e), PP_OK);
    int tp = kind ? 1 : 1 + (int)rnd(2), dp = 1 + (int)rnd(2);
    cr_assert_eq(pp_cluster_resize(&x->c, 0, tp * p * dp, &e), PP_OK, "%s", e.msg);
    pp_strategy *s = &x->s;
    pp_strategy_default(s);
    s->tp = tp, s->pp = p, s->dp = dp, s->zero = (int)rnd(2);
    s->sp = tp > 1 && rnd(2);
    s->micro_batch = 1 + (int)rnd(2);
    s->seq = rnd(2) ? 1024 : 2048;
    s->attention = rnd(3) ? PP_ATTN_FLASH : PP_ATTN_MATERIALISED;
    s->global_batch = s->micro_batch * dp * (1 + (int)rnd(8));
    s->schedule = rnd(4) ? PP_SCHED_1F1B : PP_SCHED_GPIPE;
    /* frameworks whose launchers write any split: Megatron (1F1B), FSDP with
     * torch.distributed.pipelining (GPipe) */
    s->framework = s->schedule == PP_SCHED_GPIPE ? PP_FW_FSDP : PP_FW_MEGATRON;
    if (s->framework == PP_FW_FSDP) s->zero = 2, s->sp = tp > 1;
    x->allow_rc = seed % 4 != 3;
    s->recompute = x->allow_rc ? PP_RECOMPUTE_FULL : PP_RECOMPUTE_NONE;
    if (pp_strategy_resolve(s, &x->m, &x->c, &e) != PP_OK) return 0;
    /* usable memory between "everything recomputed fits" and "nothing needed" */
    double lo = even_peak(x, x->allow_rc ? -1 : 0), hi = even_peak(x, 0), u = 0.05 + 0.9 * rnd(1000) / 1000.0;
    double usable = x->allow_rc ? lo + u * (hi - lo) : hi * (0.85 + 0.3 * u);
    x->c.gpu.mem_bytes = usable + s->buf.reserve;
    snprintf(x->what, sizeof x->what, "seed %u: %s L=%d p=%d tp=%d dp=%d mb=%d m=%d %s rc=%d usable=%.3f GiB", seed,
             kind ? "moe-mix" : "dense", L, p, tp, dp, s->micro_batch, s->grad_accum, pp_schedule_name(s->schedule),
             x->allow_rc, usable / 1073741824.0);
    return 1;
}

/* Slowest stage of a full split by the cost model; HUGE_VAL when a stage does not fit. */
static double truth(inst *x, const int *layers, const int *rc, pp_memory *mem, pp_time *t)
{
    pp_strategy s = x->s;
    pp_throughput q;
    s.per_stage_recompute = 1;
    for (int i = 0; i < s.pp; i++) s.stage_layers[i] = layers[i], s.stage_recompute[i] = rc[i];
    pp_memory_estimate(&x->m, &x->c, &s, mem);
    double worst = 0;
    for (int i = 0; i < s.pp; i++)
        if (mem->stages[i].total_bytes > mem->gpu_bytes) return HUGE_VAL;
    pp_time_estimate(&x->m, &x->c, &s, t, &q);
    for (int i = 0; i < s.pp; i++) worst = fmax(worst, t->stage_microbatch_s[i]);
    return worst;
}

typedef struct exh {
    inst *x;
    int layers[PP_MAX_STAGES], rc[PP_MAX_STAGES];
    double best;
    int best_rc;         /* the optimum recomputes something */
    long evals;
    pp_memory mem;
    pp_time t;
} exh;

static void rc_rec(exh *e, int i)
{
    if (i == e->x->s.pp) {
        e->evals++;
        double v = truth(e->x, e->layers, e->rc, &e->mem, &e->t);
        if (v < e->best) {
            int any = 0;
            for (int k = 0; k < e->x->s.pp; k++) any |= e->rc[k];
            e->best = v, e->best_rc = any;
        }
        return;
    }
    int hi = e->x->allow_rc ? e->layers[i] : 0;
    for (int k = 0; k <= hi; k++) {
        e->rc[i] = k;
        rc_rec(e, i + 1);
    }
}

static void split_rec(exh *e, int i, int left)
{
    int p = e->x->s.pp;
    if (i == p - 1) {
        e->layers[i] = left;
        rc_rec(e, 0);
        return;
    }
    for (int n = 1; n <= left - (p - 1 - i); n++) {
        e->layers[i] = n;
        split_rec(e, i + 1, left - n);
    }
}

static double exhaustive(inst *x, long *evals, int *uses_rc)
{
    exh *e = calloc(1, sizeof *e);
    e->x = x;
    e->best = HUGE_VAL;
    split_rec(e, 0, x->m.layers);
    double b = e->best;
    *evals = e->evals;
    *uses_rc = e->best_rc;
    free(e);
    return b;
}

/* The ILP through the planner's own path; its split re-costed by the cost model. */
static double ilp(inst *x, int *how)
{
    pp_strategy s = x->s;
    pp_error e = {""};
    int tl = 0, probes = 0;
    pp_status st = pp__partition(&x->m, &x->c, &s, x->allow_rc, 10, how, &tl, &probes, &e);
    cr_assert_eq(tl, 0, "%s: ILP time limit hit", x->what);
    if (st == PP_ERR_INFEASIBLE) return HUGE_VAL;
    cr_assert_eq(st, PP_OK, "%s: %s", x->what, e.msg);
    int rc[PP_MAX_STAGES] = {0};
    for (int i = 0; i < s.pp; i++) {
        int k = s.recompute != PP_RECOMPUTE_FULL ? 0 : s.per_stage_recompute ? s.stage_recompute[i] : s.recompute_layers;
        rc[i] = k < 0 || k > s.stage_layers[i] ? s.stage_layers[i] : k;
    }
    pp_memory *mem = malloc(sizeof *mem);
    pp_time *t = malloc(sizeof *t);
    double v = truth(x, s.stage_layers, rc, mem, t);
    free(mem);
    free(t);
    return v;
}

static void same(double a, double b, const char *what)
{
    if (isinf(a) || isinf(b)) cr_assert(isinf(a) && isinf(b), "%s: ILP %g vs truth %g", what, a, b);
    else cr_assert(fabs(a - b) <= 1e-9 * fabs(b), "%s: ILP %.12g s vs truth %.12g s", what, a, b);
}

Test(partition, ilp_equals_exhaustive_small, .timeout = 600)
{
    int done = 0, feasible = 0, recomputing = 0, mixed = 0, ilp_used = 0;
    long evals_all = 0;
    inst *x = malloc(sizeof *x);
    for (unsigned seed = 0; done < 60 && seed < 400; seed++) {
        if (!make_small(x, seed)) continue;
        long evals;
        int how, uses_rc;
        double want = exhaustive(x, &evals, &uses_rc), got = ilp(x, &how);
        same(got, want, x->what);
        ilp_used += how == 0;
        feasible += isfinite(want);
        recomputing += uses_rc;
        mixed += seed % 3 != 0;
        evals_all += evals;
        done++;
    }
    free(x);
    cr_log_info("%d instances, %d feasible, %d whose optimum recomputes, %d dense/MoE mixes, %ld splits costed", done,
                feasible, recomputing, mixed, evals_all);
    cr_assert_geq(done, 60);
    cr_assert_geq(feasible, 40, "only %d feasible instances", feasible);
    cr_assert_geq(recomputing, 15, "only %d instances where recompute matters", recomputing);
    cr_assert_geq(ilp_used, done * 9 / 10, "the ILP (not the DP fallback) solved only %d of %d", ilp_used, done);
}

/* Larger instances from presets: ILP vs exact DP. */
static void big_case(const char *model, const char *cluster, int gpus, int tp, int pp, int mb, int gb, int seq,
                     pp_recompute rc, pp_schedule sched, int v, double mem_scale)
{
    inst *x = calloc(1, sizeof *x);
    pp_error e;
    cr_assert_eq(pp_model_load(model, &x->m, &e), PP_OK);
    cr_assert_eq(pp_cluster_load(cluster, &x->c, &e), PP_OK);
    cr_assert_eq(pp_cluster_resize(&x->c, 0, gpus, &e), PP_OK, "%s", e.msg);
    pp_strategy *s = &x->s;
    pp_strategy_default(s);
    s->framework = sched == PP_SCHED_GPIPE ? PP_FW_FSDP : PP_FW_MEGATRON;
    s->tp = tp, s->pp = pp, s->dp = gpus / (tp * pp), s->sp = tp > 1, s->zero = sched == PP_SCHED_GPIPE ? 2 : 1;
    s->micro_batch = mb, s->global_batch = gb, s->seq = seq, s->recompute = rc;
    s->schedule = sched, s->virtual_stages = v;
    cr_assert_eq(pp_strategy_resolve(s, &x->m, &x->c, &e), PP_OK, "%s", e.msg);
    x->allow_rc = rc == PP_RECOMPUTE_FULL;
    if (mem_scale > 0) x->c.gpu.mem_bytes = even_peak(x, 0) * mem_scale + s->buf.reserve;
    snprintf(x->what, sizeof x->what, "%s tp%d pp%d mb%d rc%d sched %s", model, tp, pp, mb, rc, pp_schedule_name(sched));
    int how;
    double got = ilp(x, &how);
    cr_assert_eq(how, 0, "%s: the ILP's coefficients failed their check", x->what);
    pp__part_result d;
    pp_status st = pp__dp_partition(&x->m, &x->c, s, x->allow_rc, &d);
    double want = HUGE_VAL;
    if (st == PP_OK) {
        pp_memory *mem = malloc(sizeof *mem);
        pp_time *t = malloc(sizeof *t);
        want = truth(x, d.layers, d.recompute, mem, t);
        free(mem);
        free(t);
    }
    same(got, want, x->what);
    free(x);
}

Test(partition, ilp_equals_dp_plain_minmax, .timeout = 600)
{
    big_case("gpt3-175b", "dgx-a100-80g", 64, 8, 8, 1, 512, 2048, PP_RECOMPUTE_NONE, PP_SCHED_1F1B, 1, 0);
    big_case("llama3.1-405b", "dgx-h100", 256, 8, 32, 1, 512, 8192, PP_RECOMPUTE_NONE, PP_SCHED_1F1B, 1, 0);
    big_case("llama3.1-405b", "dgx-h100", 128, 8, 16, 1, 128, 8192, PP_RECOMPUTE_NONE, PP_SCHED_GPIPE, 1, 0);
    big_case("llama3-70b", "dgx-h100", 32, 8, 4, 1, 64, 8192, PP_RECOMPUTE_SELECTIVE, PP_SCHED_1F1B, 1, 0);
    big_case("llama3-70b", "dgx-h100", 32, 8, 4, 1, 64, 8192, PP_RECOMPUTE_NONE, PP_SCHED_INTERLEAVED, 4, 0);
    big_case("mixtral-8x22b", "dgx-h100", 64, 8, 8, 1, 64, 4096, PP_RECOMPUTE_NONE, PP_SCHED_1F1B, 1, 0);
}

Test(partition, ilp_equals_dp_memory_and_recompute, .timeout = 600)
{
    big_case("gpt3-175b", "dgx-a100-80g", 64, 8, 8, 1, 512, 2048, PP_RECOMPUTE_FULL, PP_SCHED_1F1B, 1, 0.8);
    big_case("llama3.1-405b", "dgx-h100", 256, 8, 16, 1, 512, 8192, PP_RECOMPUTE_FULL, PP_SCHED_1F1B, 1, 0.7);
    big_case("megatron-529.6b", "dgx-a100-80g", 280, 8, 35, 1, 280, 2048, PP_RECOMPUTE_FULL, PP_SCHED_1F1B, 1, 0.9);
    big_case("gpt3-175b", "dgx-a100-80g", 64, 8, 8, 1, 512, 2048, PP_RECOMPUTE_NONE, PP_SCHED_1F1B, 1, 0.97);
}

Test(partition, ilp_equals_dp_mixed_dense_moe, .timeout = 600)
{
    /* DeepSeek-V3: 3 dense then 58 MoE blocks; per-kind counts, contiguity */
    big_case("deepseek-v3", "dgx-h100", 64, 2, 8, 1, 64, 4096, PP_RECOMPUTE_NONE, PP_SCHED_1F1B, 1, 0);
    big_case("deepseek-v3", "dgx-h100", 64, 2, 4, 1, 64, 4096, PP_RECOMPUTE_FULL, PP_SCHED_1F1B, 1, 0.8);
}

Test(partition, glpk_errors_are_statuses)
{
    pp__part_problem *pr = calloc(1, sizeof *pr);
    pp__part_result r;
    pp_error e = {""};
    pr->p = 1; /* malformed: fewer than 2 stages */
    cr_assert_eq(pp__ilp_solve(pr, 1, &r, &e), PP_ERR_INTERNAL);
    cr_assert(strstr(e.msg, "malformed") != NULL, "%s", e.msg);
    /* an infeasible problem: memory below the empty stage */
    pr->p = 2, pr->unit = 1, pr->nruns = 1, pr->runs[0].len = 4, pr->mem = 1e9;
    for (int i = 0; i < 2; i++) {
        pr->st[i].t0 = 1e-3, pr->st[i].tau[0] = 1e-3;
        for (int f = 0; f < PP_PHASE_COUNT; f++) pr->st[i].e_inf[f] = pr->st[i].e_zero[f] = 2e9;
    }
    pr->cap[0] = pr->cap[1] = HUGE_VAL;
    cr_assert_eq(pp__ilp_solve(pr, 1, &r, &e), PP_ERR_INFEASIBLE, "%s", e.msg);
    /* feasible: 4 equal blocks on 2 equal stages -> 2 + 2 */
    for (int i = 0; i < 2; i++)
        for (int f = 0; f < PP_PHASE_COUNT; f++) pr->st[i].e_inf[f] = pr->st[i].e_zero[f] = 1e8;
    cr_assert_eq(pp__ilp_solve(pr, 1, &r, &e), PP_OK, "%s", e.msg);
    cr_assert_eq(r.layers[0], 2);
    cr_assert_eq(r.layers[1], 2);
    cr_assert_eq(r.time_limit_hit, 0);
    /* GLPK rejects a column whose lower bound exceeds its upper bound (a
     * negative run): its error hook must bring us back with a status, and
     * GLPK must work again afterwards (its environment is rebuilt) */
    pp__part_problem bad = *pr;
    bad.nruns = 2, bad.runs[0].len = -4, bad.runs[1].kind = PP_BLOCK_MOE, bad.runs[1].len = 4;
    cr_assert_eq(pp__ilp_solve(&bad, 1, &r, &e), PP_ERR_INTERNAL);
    cr_assert(strstr(e.msg, "GLPK"), "%s", e.msg);
    cr_assert_eq(pp__ilp_solve(pr, 1, &r, &e), PP_OK, "%s", e.msg);
    cr_assert_eq(r.layers[0], 2);
    free(pr);
}

/* DeepSpeed's ds_utils.partition_balanced, transcribed a second time from
 * its Python (prefix sums, bisection on a real bottleneck, the greedy probe
 * with its step/chunksize bisect window), independently of the library's
 * version. w[i] are the weights of PipelineModule's layer specs in order. */
static int ds_lprobe(const double *pref, int n, int p, double b, int *parts)
{
    for (int k = 0; k <= p; k++) parts[k] = k ? n : 0;
    double bsum = b;
    int chunk = n / p, step = chunk;
    for (int k = 1; k < p; k++) {
        while (step < n && pref[step] < bsum) step += chunk;
        int lo = step - chunk, hi = step < n ? step : n;
        while (lo < hi) { /* bisect.bisect_left(weights, bsum, lo, hi) */
            int mid = (lo + hi) / 2;
            if (pref[mid] < bsum) lo = mid + 1;
            else hi = mid;
        }
        parts[k] = lo;
        if (lo == n) return pref[n - 1] - pref[parts[k - 1]] < b;
        bsum = (lo ? pref[lo - 1] : 0) + b;
    }
    return bsum >= pref[n - 1];
}

static void ds_partition_balanced(const int *w, int n, int p, int *parts)
{
    double pref[PP_MAX_LAYERS + 8], acc = 0;
    for (int i = 0; i < n; i++) pref[i] = acc += w[i];
    double lower = acc / p, upper = acc, eps = 1e-3;
    while (upper > lower + eps) {
        double mid = lower + (upper - lower) / 2;
        if (ds_lprobe(pref, n, p, mid, parts)) upper = mid;
        else lower = mid + eps;
    }
    cr_assert(ds_lprobe(pref, n, p, upper, parts));
}

/* Specs as Megatron-DeepSpeed's GPTModelPipe lists them: embedding, blocks,
 * final norm, tied head. Weight 1 for blocks, and for the two embedding
 * specs under type:transformer|embedding. */
static void ds_reference(int layers, int p, int embed, int *stage_layers)
{
    int w[PP_MAX_LAYERS + 8], kind[PP_MAX_LAYERS + 8], n = 0, parts[PP_MAX_STAGES + 1];
    w[n] = embed, kind[n++] = 0;
    for (int i = 0; i < layers; i++) w[n] = 1, kind[n++] = 1;
    w[n] = 0, kind[n++] = 0;
    w[n] = embed, kind[n++] = 0;
    if (n <= p) { /* DeepSpeed's partition_uniform edge case: too few specs */
        for (int k = 0; k < p; k++) stage_layers[k] = 0;
        return;
    }
    ds_partition_balanced(w, n, p, parts);
    for (int k = 0; k < p; k++) {
        stage_layers[k] = 0;
        for (int i = parts[k]; i < parts[k + 1]; i++) stage_layers[k] += kind[i];
    }
}

/* The 2022 DeepSpeed of BigScience's runs (buf.ds_split_2022). */
static pp_status split_2022(int layers, int pp, int embed, int *out, pp_error *err)
{
    pp_model m = {0};
    pp_strategy s;
    pp_strategy_default(&s);
    m.layers = layers, m.tied_embeddings = 1, s.pp = pp, s.buf.ds_split_2022 = 1;
    return pp_split_deepspeed(&m, &s, embed, out, err);
}

Test(partition, deepspeed_2022_split_published_cases)
{
    int s[PP_MAX_STAGES];
    pp_error err;
    /* "78/12=6.5 - so the last stage has 1 block, while the rest have 7"
     * (bigscience tr11 chronicles-prequel.md, type:transformer) */
    cr_assert_eq(split_2022(78, 12, 0, s, &err), PP_OK);
    for (int i = 0; i < 11; i++) cr_expect_eq(s[i], 7);
    cr_expect_eq(s[11], 1);
    /* BLOOM-176B: 70 blocks + 2 embedding slots = 72 = 12 x 6
     * (tr11-176B-ml.slurm, --pp-partition-method 'type:transformer|embedding') */
    cr_assert_eq(split_2022(70, 12, 1, s, &err), PP_OK);
    cr_expect(s[0] == 5 && s[11] == 5);
    for (int i = 1; i < 11; i++) cr_expect_eq(s[i], 6);
    /* DeepSpeed needs a block on every stage */
    cr_expect_eq(split_2022(78, 48, 0, s, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "no transformer block") != NULL, "%s", err.msg);
}

Test(partition, deepspeed_2022_split_equals_partition_balanced)
{
    int a[PP_MAX_STAGES], b[PP_MAX_STAGES], checked = 0;
    pp_error err;
    for (int embed = 0; embed <= 1; embed++)
        for (int p = 1; p <= 16; p++)
            for (int layers = 1; layers <= 130; layers++) {
                if (split_2022(layers, p, embed, a, &err) != PP_OK) continue;
                ds_reference(layers, p, embed, b);
                for (int k = 0; k < p; k++)
                    cr_assert_eq(a[k], b[k], "%d blocks, %d stages, embedding %d: stage %d has %d, DeepSpeed %d",
                                 layers, p, embed, k, a[k], b[k]);
                checked++;
            }
    cr_expect_gt(checked, 2500, "only %d splits were valid", checked);
}

/* DeepSpeed v0.14.5 (partition_balanced's dynamic program, PR #4312) on
 * Megatron-DeepSpeed's GPTModelPipe specs, as the red team's line-by-line
 * Python port of v0.14.5 computed them (research/rt4.md, dssplit.py). */
Test(partition, deepspeed_v0145_split_cases)
{
    static const struct { int layers, tied, pp, embed; int want[16]; } c[] = {
        {70, 1, 16, 0, {5, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}},           /* bloom-176b */
        {105, 1, 8, 0, {14, 13, 13, 13, 13, 13, 13, 13}},                              /* korthikanti-530b */
        {80, 0, 8, 1, {10, 10, 10, 10, 10, 10, 10, 10}},                               /* llama2-70b, untied head */
        {80, 0, 12, 0, {7, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 6}},                          /* llama2-70b */
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        pp_model m = {0};
        pp_strategy s;
        pp_strategy_default(&s);
        m.layers = c[i].layers, m.tied_embeddings = c[i].tied, s.pp = c[i].pp;
        int got[PP_MAX_STAGES];
        pp_error err = {""};
        cr_assert_eq(pp_split_deepspeed(&m, &s, c[i].embed, got, &err), PP_OK, "case %zu: %s", i, err.msg);
        for (int k = 0; k < c[i].pp; k++) cr_expect_eq(got[k], c[i].want[k], "case %zu stage %d", i, k);
    }
}

/* Law: v0.14.5's split minimises max - min of the parts' weights over the
 * specs (blocks 1, embedding and tied head 1 under +embedding, the casts
 * and the norm 0): brute force over every cut of small cases finds no
 * smaller spread. */
static int best_spread(const int *w, int n, int p, int at, int used, int lo, int hi)
{
    if (used == p - 1) {
        int seg = 0;
        for (int i = at; i < n; i++) seg += w[i];
        lo = seg < lo ? seg : lo, hi = seg > hi ? seg : hi;
        return hi - lo;
    }
    int best = 1 << 30, seg = 0;
    for (int e = at; e < n - (p - 1 - used); e++) { /* part = at..e */
        seg += w[e];
        int r = best_spread(w, n, p, e + 1, used + 1, seg < lo ? seg : lo, seg > hi ? seg : hi);
        if (r < best) best = r;
    }
    return best;
}

Test(partition, deepspeed_v0145_split_minimises_the_spread)
{
    int checked = 0;
    for (int tied = 0; tied <= 1; tied++)
        for (int embed = 0; embed <= 1; embed++)
            for (int p = 2; p <= 5; p++)
                for (int layers = p; layers <= 14; layers++) {
                    pp_model m = {0};
                    pp_strategy s;
                    pp_strategy_default(&s);
                    m.layers = layers, m.tied_embeddings = tied, s.pp = p;
                    int got[PP_MAX_STAGES], w[PP_MAX_LAYERS + 5], n = layers + 5;
                    pp_error err = {""};
                    if (pp_split_deepspeed(&m, &s, embed, got, &err) != PP_OK) continue;
                    for (int i = 0; i < n; i++)
                        w[i] = (i >= 2 && i < 2 + layers) || (embed && (i == 1 || (tied && i == layers + 3)));
                    /* the split's spread: stage k holds its blocks, stage 0 the embedding, the last the head */
                    int lo = 1 << 30, hi = 0;
                    for (int k = 0; k < p; k++) {
                        int wk = got[k] + (k == 0 ? w[1] : 0) + (k == p - 1 ? w[layers + 3] : 0);
                        lo = wk < lo ? wk : lo, hi = wk > hi ? wk : hi;
                    }
                    cr_expect_eq(hi - lo, best_spread(w, n, p, 0, 0, 1 << 30, 0),
                                 "%d blocks, %d stages, embed %d, tied %d", layers, p, embed, tied);
                    checked++;
                }
    cr_expect_gt(checked, 150, "%d cases", checked);
}

/* Among splits whose slowest stage ties, the highest stage memory is
 * lowered (red team, session 28: a 12-block Llama-3-8B shape with a 256k
 * vocabulary, 4 stages, tp 2 on a DGX A100-40GB split 5,1,5,1 at 31.0 GiB
 * where 1,5,5,1 holds 19.6). Law on the result: no single-block move to a
 * neighbour keeps the slowest stage as fast and lowers the peak. */
Test(partition, ties_on_the_slowest_stage_go_to_the_lower_peak)
{
    pp_model m = fx_model("llama3-8b");
    m.layers = 12, m.vocab = 256000;
    for (int i = 0; i < m.layers; i++) m.block_kind[i] = PP_BLOCK_DENSE;
    pp_cluster c = fx_cluster("dgx-a100-40g", 1, 0);
    pp_strategy s;
    pp_strategy_default(&s);
    s.framework = PP_FW_MEGATRON, s.tp = 2, s.sp = 1, s.pp = 4, s.dp = 1, s.global_batch = 16, s.seq = 8192;
    s.recompute = PP_RECOMPUTE_NONE, s.precision = PP_PREC_BF16;
    pp_error e = {""};
    int how = 0, tl = 0, probes = 0;
    cr_assert_eq(pp__partition(&m, &c, &s, 0, 10, &how, &tl, &probes, &e), PP_OK, "%s", e.msg);
    pp_plan best;
    cr_assert_eq(pp_estimate(&m, &c, &s, &best, &e), PP_OK, "%s", e.msg);
    double T = 0;
    for (int i = 0; i < s.pp; i++) T = fmax(T, best.time.stage_microbatch_s[i]);
    for (int i = 0; i + 1 < s.pp; i++)
        for (int dir = 0; dir < 2; dir++) {
            pp_strategy t = s;
            int from = dir ? i + 1 : i, to = dir ? i : i + 1;
            if (t.stage_layers[from] <= 1) continue;
            t.stage_layers[from]--, t.stage_layers[to]++;
            pp_plan p;
            if (pp_estimate(&m, &c, &t, &p, &e) != PP_OK) continue;
            double Tm = 0;
            for (int k = 0; k < s.pp; k++) Tm = fmax(Tm, p.time.stage_microbatch_s[k]);
            if (Tm <= T * (1 + 1e-9))
                cr_expect_geq(p.memory.peak_bytes, best.memory.peak_bytes * (1 - 1e-3), "move %d -> %d: %.2f GiB < %.2f GiB",
                              from, to, p.memory.peak_bytes / PP_GIB, best.memory.peak_bytes / PP_GIB);
        }
    cr_expect_lt(best.memory.peak_bytes, 25 * PP_GIB, "split %d,%d,%d,%d: %.2f GiB", s.stage_layers[0], s.stage_layers[1],
                 s.stage_layers[2], s.stage_layers[3], best.memory.peak_bytes / PP_GIB);
}
