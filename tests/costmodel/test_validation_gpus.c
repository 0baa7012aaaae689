/*
 * test_validation_gpus.c — runs on GPUs beyond A100/H100 (tests/data/
 * new_gpus.csv) through tools/validate: the rows parplan can model are
 * evaluated, and the errors stay within bounds a little above today's. The
 * catalog's B200 and GB200 efficiencies are fitted to these rows (their
 * leave-one-source-out errors, 19.7% and 11.3% pooled, are in
 * docs/validation.md), so the medians here are in-sample (GB200 6.0% over
 * 45 runs, B200 3.9% over 17, 2026-11-24) and the bounds are tight: a
 * change that makes them worse fails here.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

typedef struct summary {
    const char *label;
    int rows;
    double median, worst;
} summary;

static void read_summaries(summary *s, int n)
{
    char cmd[1024], line[4096], fmt[160];
    snprintf(cmd, sizeof cmd, "%s %s/published_runs.csv %s/new_gpus.csv", PARPLAN_VALIDATE, PARPLAN_REFERENCE_DIR,
             PARPLAN_DATA_DIR);
    FILE *p = popen(cmd, "r");
    cr_assert(p, "cannot run %s", cmd);
    while (fgets(line, sizeof line, p))
        for (int i = 0; i < n; i++) {
            snprintf(fmt, sizeof fmt, "| %s | %%d | %%lf%%%% | %%lf%%%% |", s[i].label);
            if (!s[i].rows) sscanf(line, fmt, &s[i].rows, &s[i].median, &s[i].worst);
        }
    cr_expect_eq(pclose(p), 0, "%s failed", cmd);
}

Test(validation_gpus, runs_beyond_a100_h100_are_evaluated_within_bounds)
{
    /* B200's and GB200's efficiencies are fitted to these rows (their
     * leave-one-source-out errors are in docs/validation.md, Calibration) */
    summary s[] = {{"partly fitted: throughput, runs on other GPUs", 0, 0, 0},
                   {"fitted: throughput, GB200", 0, 0, 0},
                   {"fitted: throughput, B200", 0, 0, 0}};
    read_summaries(s, 3);
    cr_expect_geq(s[0].rows, 60, "rows evaluated: %d of 70", s[0].rows);
    cr_expect_geq(s[1].rows, 40, "GB200 rows: %d", s[1].rows);
    cr_expect_leq(s[1].median, 8.0, "GB200 median %.1f%%", s[1].median);
    cr_expect_geq(s[2].rows, 15, "B200 rows: %d", s[2].rows);
    cr_expect_leq(s[2].median, 6.0, "B200 median %.1f%%", s[2].median);
}
