/*
 * test_ilp_budget.c — the search's total ILP budget (issue 14 item 11,
 * pp_search_opts.ilp_budget_s): once the stage-split ILPs have used it up,
 * the remaining pipeline candidates keep their default split, counted in
 * stats.ilp_budget_skipped and said by --explain and the table. Checked
 * without timing: a budget of 0 starts no ILP (every candidate as with
 * --no-partition); a budget too small to finish them all leaves every plan
 * between the unbudgeted search and the one with no ILP at all, with the
 * counters adding up; the default budget skips nothing on an ordinary case.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "parplan.h"
#include "tests/fixtures.h"

/* Llama-3-70B on 4 DGX H100, pp 4 or 8: 25 pipeline candidates reach the
 * ILP stage (the glpk_guest case with a second pipeline depth). */
static void search(double budget, int partition, pp_plan_list *l)
{
    pp_model m = fx_model("llama3-70b");
    pp_cluster c = fx_cluster("dgx-h100", 4, 0);
    pp_error err = {""};
    pp_search_opts o;
    pp_search_opts_default(&o);
    o.global_batch = 256;
    o.top_k = 5;
    o.threads = 1;
    o.pp.n = 2;
    o.pp.v[0] = 4;
    o.pp.v[1] = 8;
    o.stage_partition = partition;
    if (budget >= 0) o.ilp_budget_s = budget;
    cr_assert_eq(pp_plan_search(&m, &c, &o, l, &err), PP_OK, "%s", err.msg);
}

static void expect_same_plans(const pp_plan_list *a, const pp_plan_list *b, const char *what)
{
    cr_assert_eq(a->n, b->n, "%s", what);
    for (int i = 0; i < a->n; i++) {
        cr_expect_eq(a->plans[i].time.step_s, b->plans[i].time.step_s, "%s: plan %d", what, i + 1);
        cr_expect_eq(a->plans[i].memory.peak_bytes, b->plans[i].memory.peak_bytes, "%s: plan %d", what, i + 1);
    }
}

Test(ilp_budget, the_default_budget_skips_nothing_here)
{
    pp_search_opts o;
    pp_search_opts_default(&o);
    cr_expect_eq(o.ilp_budget_s, 5, "the documented default");
    pp_plan_list l;
    search(-1, 1, &l);
    cr_expect_gt(l.stats.ilp_solved, 0, "no ILP solved: the other cases prove nothing");
    cr_expect_eq(l.stats.ilp_budget_skipped, 0);
    pp_plan_list_free(&l);
}

Test(ilp_budget, zero_starts_no_ilp_and_keeps_the_default_splits)
{
    pp_plan_list zero, none, full;
    search(0, 1, &zero);
    search(-1, 0, &none);
    search(-1, 1, &full);
    cr_expect_eq(zero.stats.ilp_solved, 0);
    cr_expect_eq(zero.stats.ilp_improved, 0);
    cr_expect_gt(zero.stats.ilp_budget_skipped, 0);
    /* every candidate that would have been solved was skipped instead */
    cr_expect_eq(zero.stats.ilp_budget_skipped, full.stats.ilp_solved + full.stats.ilp_cache_hits,
                 "skipped %d, solved %d + cached %d without a budget", zero.stats.ilp_budget_skipped,
                 full.stats.ilp_solved, full.stats.ilp_cache_hits);
    expect_same_plans(&zero, &none, "budget 0 vs --no-partition");
    pp_plan_list_free(&zero);
    pp_plan_list_free(&none);
    pp_plan_list_free(&full);
}

Test(ilp_budget, a_small_budget_lands_between_no_ilp_and_all_ilps)
{
    pp_plan_list part, none, full;
    search(0.002, 1, &part); /* 2 ms: some solves, maybe none, never all 25 on any machine we know */
    search(-1, 0, &none);
    search(-1, 1, &full);
    const pp_search_stats *s = &part.stats;
    cr_expect_eq(s->ilp_considered, full.stats.ilp_considered, "the budget does not change what is considered");
    cr_expect_eq(s->ilp_solved + s->ilp_cache_hits + s->ilp_budget_skipped,
                 full.stats.ilp_solved + full.stats.ilp_cache_hits, "every ILP is solved, cached or skipped");
    cr_expect_leq(s->ilp_improved, full.stats.ilp_improved);
    /* each plan is its candidate's default split or a better one: the best
     * plan lies between the two searches */
    cr_expect_leq(full.plans[0].time.step_s, part.plans[0].time.step_s * (1 + 1e-12));
    cr_expect_leq(part.plans[0].time.step_s, none.plans[0].time.step_s * (1 + 1e-12));
    pp_plan_list_free(&part);
    pp_plan_list_free(&none);
    pp_plan_list_free(&full);
}

Test(ilp_budget, out_of_range_is_refused_with_the_field)
{
    pp_model m;
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_model_load("llama3-8b", &m, &err), PP_OK);
    cr_assert_eq(pp_cluster_load("dgx-h100", &c, &err), PP_OK);
    pp_search_opts o;
    pp_search_opts_default(&o);
    o.global_batch = 64;
    pp_plan_list l;
    double bad[] = {-1, NAN, 1e9};
    for (int i = 0; i < 3; i++) {
        o.ilp_budget_s = bad[i];
        cr_expect_eq(pp_plan_search(&m, &c, &o, &l, &err), PP_ERR_INPUT, "%g accepted", bad[i]);
        cr_expect(strstr(err.msg, "ilp_budget_s"), "%s", err.msg);
    }
}

/* The CLI says it: the table's first lines, the JSON's search object, and
 * --explain. */
Test(ilp_budget, cli_reports_a_spent_budget)
{
    const char *cmd = PARPLAN_CLI " plan --model llama3-70b --cluster dgx-h100 --nodes 4 --global-batch 256 --pp 4,8"
                                  " --top 2 --ilp-budget 0 --explain 2>&1";
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    static char out[1 << 16];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", out);
    cr_expect(strstr(out, "0 stage-split ILPs, ") && strstr(out, "kept the default split (ILP budget of 0 s spent)"),
              "%.400s", out);
    cr_expect(strstr(out, "Stage splits: the ILP budget of 0 s was spent after 0 ILPs;"), "%s", out);
    p = popen(PARPLAN_CLI " plan --model llama3-70b --cluster dgx-h100 --nodes 4 --global-batch 256 --pp 4,8 --top 2"
                          " --ilp-budget 0 --format json 2>&1", "r");
    cr_assert(p);
    n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    pclose(p);
    cr_expect(strstr(out, "\"ilp_solved\": 0,") && strstr(out, "\"ilp_budget_skipped\": "), "%s",
              strstr(out, "\"search\"") ? strstr(out, "\"search\"") : out);
    cr_expect(!strstr(out, "\"ilp_budget_skipped\": 0}"), "nothing counted as skipped");
    /* a negative budget is a bad flag */
    p = popen(PARPLAN_CLI " plan --model llama3-8b --cluster dgx-h100 --global-batch 64 --ilp-budget -1 2>&1", "r");
    cr_assert(p);
    n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    st = pclose(p);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 2 && strstr(out, "--ilp-budget"), "%s", out);
}
