/*
 * test_published.c — issue 5's truth: for every calibration row of
 * tests/reference/published_runs.csv from Narayanan et al. 2021 Table 1 and
 * the Megatron-Core H100 table, the published configuration fits by
 * parplan's memory model (at its best fitting micro-batch) and the search,
 * restricted to the same GPUs, global batch, sequence, attention kind and
 * bf16, finds a plan at least as fast by the same model. The comparison
 * itself lives in bench/published.c (also docs/planner_vs_published.md).
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "bench/published.c"

Test(published, planner_matches_or_beats_published_configs, .timeout = 900)
{
    pub_case *k = calloc(PUB_MAX, sizeof *k);
    int n = pub_run(PARPLAN_REFERENCE_DIR "/published_runs.csv", k, PUB_MAX, 0);
    cr_assert_eq(n, 10, "expected 5 Narayanan + 5 Megatron-Core rows, got %d", n);
    for (int i = 0; i < n; i++) {
        cr_assert(k[i].published_fits, "%s: %s", k[i].name, k[i].msg);
        cr_assert(k[i].found, "%s: %s", k[i].name, k[i].msg);
        cr_assert(k[i].best.memory.fits, "%s", k[i].name);
        cr_assert_geq(k[i].best.throughput.tokens_per_s, k[i].published.throughput.tokens_per_s * (1 - 1e-12),
                      "%s: planner %.0f tokens/s < published %.0f", k[i].name, k[i].best.throughput.tokens_per_s,
                      k[i].published.throughput.tokens_per_s);
        /* the published configuration is in the searched space */
        const pp_strategy *p = &k[i].published.strategy, *b = &k[i].best.strategy;
        cr_assert_eq(b->global_batch, p->global_batch);
        cr_assert_eq(b->seq, p->seq);
        cr_assert_eq(b->attention, p->attention);
        cr_assert_eq(b->precision, PP_PREC_BF16);
    }
    free(k);
}
