/*
 * test_compare.c — the what-if comparison (planner/compare.c, docs/compare.md):
 *  - cost, time, energy and rates of a fixed plan, computed by hand;
 *  - the Pareto front against brute force on random sets (ties, NaN);
 *  - deadline and budget selection against brute force over the options;
 *  - the smallest GPU count meeting a deadline: it meets, one node fewer
 *    does not (checked with a direct search), and the work is bounded;
 *  - bad input is PP_ERR_INPUT, nothing fitting is PP_ERR_INFEASIBLE;
 *  - output (JSON, CSV) is byte-identical for 1 and 2 threads;
 *  - the `parplan compare` command: exit codes and one-line errors;
 *  - fairness (issue 14): one precision on every cluster (bf16) unless
 *    asked, MFU on one basis (dense bf16 peak), price basis stated.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parplan.h"

static int REL(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

static void load_cluster(const char *name, pp_compare_cluster *cc)
{
    memset(cc, 0, sizeof *cc);
    pp_error err = {""};
    cr_assert_eq(pp_cluster_load(name, &cc->cluster, &err), PP_OK, "%s", err.msg);
}

static void load_model(const char *name, pp_model *m)
{
    pp_error err = {""};
    cr_assert_eq(pp_model_load(name, m, &err), PP_OK, "%s", err.msg);
}

/* ------------------------------------------------------------ arithmetic */

/* A plan whose step is 10 s for 512 x 2048 tokens = 1,048,576 tokens. */
static void fixed_plan(pp_plan *p)
{
    memset(p, 0, sizeof *p);
    pp_strategy_default(&p->strategy);
    p->strategy.global_batch = 512;
    p->strategy.seq = 2048;
    p->time.step_s = 10;
    p->throughput.tokens_per_s = 104857.6;
}

Test(compare_arith, rental_override_by_hand)
{
    static pp_compare_cluster cc;
    load_cluster("dgx-h100", &cc); /* 8 x H100, 700 W */
    cc.price_usd_per_gpu_hour = 2.0;
    static pp_plan p;
    fixed_plan(&p);
    pp_compare_opts o;
    pp_compare_opts_default(&o);
    o.train_tokens = 1.048576e12; /* 1e6 steps = 1e7 s */
    static pp_compare_option e;
    pp_error err = {""};
    cr_assert_eq(pp_compare_option_eval(&o, &cc, 64, &p, &e, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(e.price_kind, PP_PRICE_OVERRIDE);
    cr_expect_eq(e.nodes, 8);
    cr_expect(REL(e.days, 1e7 / 86400), "days %.17g", e.days);               /* 115.740740... */
    cr_expect(REL(e.gpu_hours, 1e7 / 3600.0 * 64), "gpu-h %.17g", e.gpu_hours); /* 177,777.78 */
    cr_expect(REL(e.cost_usd, 1e7 / 3600.0 * 64 * 2), "cost %.17g", e.cost_usd); /* $355,555.56 */
    cr_expect(REL(e.energy_kwh, 1e7 / 3600.0 * 64 * 0.7), "kWh %.17g", e.energy_kwh); /* 124,444.44 */
    cr_expect(REL(e.tokens_per_s_per_usd_hour, 104857.6 / 128), "%.17g", e.tokens_per_s_per_usd_hour); /* 819.2 */
    cr_expect(REL(e.tokens_per_usd, 2949120), "%.17g", e.tokens_per_usd);
    cr_expect(REL(e.tokens_per_usd, o.train_tokens / e.cost_usd)); /* the same thing, two ways */
    cr_expect_eq(e.price_date[0], '\0');
}

Test(compare_arith, catalog_price_and_date)
{
    static pp_compare_cluster cc;
    load_cluster("dgx-a100-80g", &cc);
    static pp_plan p;
    fixed_plan(&p);
    pp_compare_opts o;
    pp_compare_opts_default(&o);
    o.train_tokens = 1.048576e12;
    static pp_compare_option e;
    pp_error err = {""};
    cr_assert_eq(pp_compare_option_eval(&o, &cc, 8, &p, &e, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(e.price_kind, PP_PRICE_CATALOG);
    cr_expect(REL(e.usd_per_gpu_hour, cc.cluster.gpu.price_usd_per_hour));
    cr_expect(REL(e.usd_per_gpu_hour, 3.43), "catalog A100-80G price changed: %g", e.usd_per_gpu_hour);
    cr_expect_str_eq(e.price_date, cc.cluster.gpu.price_date);
    cr_expect(REL(e.cost_usd, 1e7 / 3600.0 * 8 * 3.43));
    cr_expect(REL(e.energy_kwh, 1e7 / 3600.0 * 8 * 0.4)); /* 400 W */
}

Test(compare_arith, purchase_amortised_with_power)
{
    static pp_compare_cluster cc;
    load_cluster("dgx-h100", &cc);
    cc.purchase_usd_per_gpu = 25000;
    cc.price_usd_per_gpu_hour = 9.99; /* a purchase takes precedence */
    static pp_plan p;
    fixed_plan(&p);
    pp_compare_opts o;
    pp_compare_opts_default(&o);
    o.train_tokens = 1.048576e12;
    o.amortize_years = 4;
    o.usd_per_kwh = 0.1;
    static pp_compare_option e;
    pp_error err = {""};
    cr_assert_eq(pp_compare_option_eval(&o, &cc, 64, &p, &e, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(e.price_kind, PP_PRICE_PURCHASE);
    double rate = 25000.0 / (4 * 8766) + 0.7 * 0.1; /* 0.712982 + 0.07 $/GPU-h */
    cr_expect(REL(e.usd_per_gpu_hour, rate), "%.17g vs %.17g", e.usd_per_gpu_hour, rate);
    cr_expect(REL(e.cost_usd, 1e7 / 3600.0 * 64 * rate));
    /* the run's share of the purchase: 1e7 s of a 4-year life */
    cr_expect(REL(e.cost_usd - e.energy_kwh * 0.1, 64 * 25000.0 * (1e7 / 3600) / (4 * 8766)));
}

Test(compare_arith, no_price_is_nan_not_zero)
{
    static pp_compare_cluster cc;
    load_cluster("mi300x-8x", &cc);
    cc.cluster.gpu.price_usd_per_hour = 0; /* whatever the catalog says */
    static pp_plan p;
    fixed_plan(&p);
    pp_compare_opts o;
    pp_compare_opts_default(&o);
    o.train_tokens = 1e12;
    static pp_compare_option e;
    pp_error err = {""};
    cr_assert_eq(pp_compare_option_eval(&o, &cc, 8, &p, &e, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(e.price_kind, PP_PRICE_NONE);
    cr_expect(isnan(e.cost_usd) && isnan(e.tokens_per_usd) && isnan(e.usd_per_gpu_hour));
    cr_expect(e.days > 0 && e.energy_kwh > 0);
}

Test(compare_arith, count_the_cluster_cannot_take)
{
    static pp_compare_cluster cc;
    load_cluster("dgx-h100", &cc);
    static pp_plan p;
    fixed_plan(&p);
    pp_compare_opts o;
    pp_compare_opts_default(&o);
    o.train_tokens = 1e12;
    static pp_compare_option e;
    pp_error err = {""};
    cr_expect_eq(pp_compare_option_eval(&o, &cc, 12, &p, &e, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "dgx-h100") && strstr(err.msg, "12"), "%s", err.msg);
}

/* ------------------------------------------------------------ Pareto */

static unsigned long long rng = 0x9E3779B97F4A7C15ULL;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static int dominated_brute(const double *x, const double *y, int n, int i)
{
    if (isnan(x[i]) || isnan(y[i])) return 1;
    for (int j = 0; j < n; j++) {
        if (j == i || isnan(x[j]) || isnan(y[j])) continue;
        if (x[j] <= x[i] && y[j] <= y[i] && (x[j] < x[i] || y[j] < y[i])) return 1;
    }
    return 0;
}

Test(compare_pareto, brute_force_random_sets)
{
    double x[64], y[64];
    int on[64];
    for (int trial = 0; trial < 2000; trial++) {
        int n = 1 + (int)rnd(40);
        int grid = 2 + (int)rnd(12); /* small grids make ties and duplicates */
        for (int i = 0; i < n; i++) {
            x[i] = rnd(grid) + (rnd(3) == 0 ? 0.5 : 0);
            y[i] = rnd(grid) * 10.0;
            if (rnd(25) == 0) x[i] = NAN;
            if (rnd(25) == 0) y[i] = NAN;
        }
        cr_assert_eq(pp_pareto_front(x, y, n, on), 0);
        int count = 0;
        for (int i = 0; i < n; i++) {
            cr_assert_eq(on[i], !dominated_brute(x, y, n, i), "trial %d point %d (%g, %g)", trial, i, x[i], y[i]);
            count += on[i];
        }
        int finite = 0;
        for (int i = 0; i < n; i++) finite += !isnan(x[i]) && !isnan(y[i]);
        cr_assert(finite == 0 || count >= 1, "trial %d: a non-empty set has a front", trial);
    }
}

Test(compare_pareto, known_small_set)
{
    /* (days, cost): A(10, 100) B(20, 50) C(15, 120) D(20, 50) E(5, 300) F(30, 50) */
    double x[] = {10, 20, 15, 20, 5, 30}, y[] = {100, 50, 120, 50, 300, 50};
    int on[6], want[] = {1, 1, 0, 1, 1, 0};
    cr_assert_eq(pp_pareto_front(x, y, 6, on), 0);
    for (int i = 0; i < 6; i++) cr_expect_eq(on[i], want[i], "point %d", i);
}

/* ------------------------------------------------------------ end to end */

typedef struct fixture {
    pp_model m;
    pp_compare_cluster cl[3];
    pp_compare_opts o;
    pp_compare_result r;
} fixture;

/* llama3-8b at 8 and 16 GPUs on H100 and A100 nodes, 100B tokens. */
static fixture *small(void)
{
    fixture *f = calloc(1, sizeof *f);
    cr_assert(f);
    load_model("llama3-8b", &f->m);
    load_cluster("dgx-h100", &f->cl[0]);
    load_cluster("dgx-a100-80g", &f->cl[1]);
    for (int i = 0; i < 2; i++) {
        f->cl[i].ncounts = 2;
        f->cl[i].gpus[0] = 16; /* out of order on purpose */
        f->cl[i].gpus[1] = 8;
    }
    pp_compare_opts_default(&f->o);
    f->o.train_tokens = 1e11;
    f->o.search.global_batch = 256;
    f->o.search.seq = 4096;
    return f;
}

static void done(fixture *f)
{
    pp_compare_free(&f->r);
    free(f);
}

/* Brute force: the cheapest option meeting the deadline and the budget
 * (ties to the faster), the fastest within the budget. */
static void expect_selection(const pp_compare_result *r)
{
    double D = r->opts.deadline_days, B = r->opts.budget_usd;
    int cheap = -1, fast = -1;
    for (int i = 0; i < r->n; i++) {
        const pp_compare_option *e = &r->options[i];
        if (e->status != PP_OK) continue;
        int inb = !(B > 0) || e->cost_usd <= B, ind = !(D > 0) || e->days <= D;
        cr_expect_eq(e->meets_deadline, D > 0 && e->days <= D, "option %d", i);
        cr_expect_eq(e->within_budget, B > 0 && e->cost_usd <= B, "option %d", i);
        if (inb && ind &&
            (cheap < 0 || e->cost_usd < r->options[cheap].cost_usd ||
             (e->cost_usd == r->options[cheap].cost_usd && e->days < r->options[cheap].days)))
            cheap = i;
        if (inb && (fast < 0 || e->days < r->options[fast].days)) fast = i;
    }
    cr_expect_eq(r->cheapest, cheap, "cheapest %d, brute force %d", r->cheapest, cheap);
    cr_expect_eq(r->fastest, fast, "fastest %d, brute force %d", r->fastest, fast);
}

Test(compare_run, options_match_direct_searches)
{
    fixture *f = small();
    pp_error err = {""};
    cr_assert_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, &f->r, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(f->r.n, 4);
    int want_gpus[] = {8, 16, 8, 16}, want_cl[] = {0, 0, 1, 1};
    static pp_plan_list list;
    for (int i = 0; i < 4; i++) {
        const pp_compare_option *e = &f->r.options[i];
        cr_expect_eq(e->gpus, want_gpus[i]);
        cr_expect_eq(e->cluster, want_cl[i]);
        cr_assert_eq(e->status, PP_OK, "%s", e->error);
        cr_expect_eq(e->from_search, 0);
        /* the same best plan as a direct top-1 search */
        pp_cluster c = f->cl[e->cluster].cluster;
        cr_assert_eq(pp_cluster_resize(&c, 0, e->gpus, &err), PP_OK);
        pp_search_opts so = f->o.search;
        so.top_k = 1;
        so.precisions = 1u << PP_PREC_BF16; /* compare's default: bf16 on every cluster */
        cr_assert_eq(pp_plan_search(&f->m, &c, &so, &list, &err), PP_OK, "%s", err.msg);
        cr_expect(REL(list.plans[0].time.step_s, e->plan.time.step_s));
        cr_expect_eq(list.plans[0].strategy.dp, e->plan.strategy.dp);
        pp_plan_list_free(&list);
        /* and its numbers are the hand formulas */
        double days = 1e11 / (256.0 * 4096) * e->plan.time.step_s / 86400;
        cr_expect(REL(e->days, days), "%g vs %g", e->days, days);
        cr_expect(REL(e->cost_usd, days * 24 * e->gpus * c.gpu.price_usd_per_hour));
        cr_expect(REL(e->energy_kwh, days * 24 * e->gpus * c.gpu.tdp_w / 1000));
        cr_expect_eq(e->price_kind, PP_PRICE_CATALOG);
        cr_expect_str_eq(e->price_date, c.gpu.price_date);
    }
    cr_expect_eq(f->r.feasible, 4);
    cr_expect_eq(f->r.evaluations, 4);
    /* no deadline, no budget: cheapest overall (equal costs: the faster)
     * and fastest overall */
    expect_selection(&f->r);
    cr_expect(f->r.options[f->r.fastest].pareto && f->r.options[f->r.cheapest].pareto);
    done(f);
}

Test(compare_run, deadline_and_budget_selection)
{
    fixture *f = small();
    f->o.deadline_search = 0;
    pp_error err = {""};
    cr_assert_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, &f->r, &err), PP_OK, "%s", err.msg);
    /* the days and costs of the four options, sorted, give thresholds
     * between them: every deadline/budget pair is checked by brute force */
    double days[4], cost[4];
    for (int i = 0; i < 4; i++) days[i] = f->r.options[i].days, cost[i] = f->r.options[i].cost_usd;
    pp_compare_result *r2 = calloc(1, sizeof *r2);
    for (int di = -1; di < 4; di++)
        for (int bi = -1; bi < 4; bi++) {
            f->o.deadline_days = di < 0 ? 0 : days[di] * (1 + 1e-9);
            f->o.budget_usd = bi < 0 ? 0 : cost[bi] * (1 + 1e-9);
            cr_assert_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, r2, &err), PP_OK, "%s", err.msg);
            expect_selection(r2);
            pp_compare_free(r2);
        }
    /* a deadline nobody meets: no cheapest, the fastest is still named */
    f->o.deadline_days = days[0] / 1000;
    f->o.budget_usd = 0;
    cr_assert_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, r2, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(r2->cheapest, -1);
    cr_expect_geq(r2->fastest, 0);
    cr_expect_eq(r2->mins[0].found, 0);
    pp_compare_free(r2);
    free(r2);
    done(f);
}

Test(compare_run, smallest_count_meeting_deadline)
{
    fixture *f = small();
    f->cl[0].ncounts = 1;
    f->cl[0].gpus[0] = 8;
    f->cl[1].ncounts = 1;
    f->cl[1].gpus[0] = 8;
    pp_error err = {""};
    /* a deadline at a third of the 8-GPU time: a few nodes more */
    cr_assert_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, &f->r, &err), PP_OK, "%s", err.msg);
    f->o.deadline_days = f->r.options[0].days / 3;
    pp_compare_free(&f->r);
    cr_assert_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, &f->r, &err), PP_OK, "%s", err.msg);
    expect_selection(&f->r);
    for (int ci = 0; ci < 2; ci++) {
        const pp_compare_min *mn = &f->r.mins[ci];
        cr_assert(mn->found, "%s: %s", f->cl[ci].cluster.name, mn->note);
        cr_assert_geq(mn->option, 0);
        const pp_compare_option *e = &f->r.options[mn->option];
        cr_expect_eq(e->gpus, mn->gpus);
        cr_expect(e->meets_deadline);
        cr_expect_eq(e->from_search, 1);
        cr_expect_leq(mn->probes, f->o.max_probes);
        /* one node fewer does not meet it (a direct search) */
        int gpn = f->cl[ci].cluster.gpus_per_node;
        if (mn->gpus > gpn) {
            pp_cluster c = f->cl[ci].cluster;
            cr_assert_eq(pp_cluster_resize(&c, 0, mn->gpus - gpn, &err), PP_OK);
            static pp_plan_list list;
            pp_search_opts so = f->o.search;
            so.top_k = 1;
            so.precisions = 1u << PP_PREC_BF16; /* compare's default */
            pp_status st = pp_plan_search(&f->m, &c, &so, &list, &err);
            if (st == PP_OK) {
                pp_plan_train(&c, &list.plans[0], f->o.train_tokens, 0, 0);
                cr_expect_gt(list.plans[0].train.days, f->o.deadline_days, "%s: %d GPUs also meet the deadline",
                             f->cl[ci].cluster.name, mn->gpus - gpn);
            }
            pp_plan_list_free(&list);
        }
        /* every probe is recorded, in order, with its days */
        for (int k = 0; k < mn->probes; k++) cr_expect_gt(mn->probe_gpus[k], 0);
    }
    cr_expect_geq(f->r.cheapest, 0);
    done(f);
}

/* Counts a global batch cannot split over must not decide the bracket (red
 * team rt8: Llama-3-70B, 2T tokens, 30 days, batch 512 x 8192: the search
 * grew through 101 and 202 nodes of H100, which have no strategy, and gave
 * up, or bracketed on 153-197 nodes and answered 1,600 GPUs where 1,024
 * meet the deadline in 22.4 days). */
Test(compare_run, planless_counts_do_not_decide_the_deadline_search)
{
    fixture *f = small();
    load_model("llama3-70b", &f->m);
    f->cl[0].ncounts = 0;
    f->o.train_tokens = 2e12;
    f->o.search.global_batch = 512;
    f->o.search.seq = 8192;
    f->o.deadline_days = 30;
    pp_error err = {""};
    cr_assert_eq(pp_compare_run(&f->m, f->cl, 1, &f->o, &f->r, &err), PP_OK, "%s", err.msg);
    const pp_compare_min *mn = &f->r.mins[0];
    cr_assert(mn->found, "%s", mn->note);
    cr_expect_leq(mn->gpus, 1024, "%d GPUs", mn->gpus);
    cr_expect(f->r.options[mn->option].meets_deadline);
    done(f);
}

Test(compare_run, search_is_bounded)
{
    fixture *f = small();
    f->cl[0].ncounts = 1;
    f->cl[0].gpus[0] = 8;
    f->o.deadline_days = 1e-3; /* 86 s: unreachable */
    f->o.max_probes = 3;
    pp_error err = {""};
    cr_assert_eq(pp_compare_run(&f->m, f->cl, 1, &f->o, &f->r, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(f->r.mins[0].found, 0);
    cr_expect_leq(f->r.mins[0].probes, 3);
    cr_expect_leq(f->r.evaluations, 4);
    cr_expect(f->r.mins[0].note[0], "a reason is given");
    cr_expect_eq(f->r.cheapest, -1);
    done(f);
}

Test(compare_run, bad_input)
{
    fixture *f = small();
    pp_error err = {""};
    double bad_tokens[] = {0, -1, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        f->o.train_tokens = bad_tokens[i];
        cr_expect_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, &f->r, &err), PP_ERR_INPUT, "tokens %g", bad_tokens[i]);
        cr_expect(strstr(err.msg, "--train-tokens"), "%s", err.msg);
        pp_compare_free(&f->r);
    }
    f->o.train_tokens = 1e11;
    f->o.deadline_days = NAN;
    cr_expect_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, &f->r, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "--deadline-days"), "%s", err.msg);
    f->o.deadline_days = -3;
    cr_expect_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, &f->r, &err), PP_ERR_INPUT);
    f->o.deadline_days = 0;
    f->cl[0].gpus[0] = 12; /* not whole nodes */
    cr_expect_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, &f->r, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "dgx-h100"), "%s", err.msg);
    f->cl[0].gpus[0] = 16;
    f->cl[0].purchase_usd_per_gpu = 30000; /* without a period */
    cr_expect_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, &f->r, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "--amortize-years"), "%s", err.msg);
    f->cl[0].purchase_usd_per_gpu = 0;
    f->cl[1] = f->cl[0]; /* the same type twice */
    cr_expect_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, &f->r, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "twice"), "%s", err.msg);
    f->o.search.global_batch = 0;
    cr_expect_eq(pp_compare_run(&f->m, f->cl, 1, &f->o, &f->r, &err), PP_ERR_INPUT);
    done(f);
}

Test(compare_run, nothing_fits_is_infeasible)
{
    fixture *f = calloc(1, sizeof *f);
    load_model("deepseek-v3", &f->m); /* 671B on 8 x 48 GB without NVMe */
    load_cluster("l40s-8x-eth", &f->cl[0]);
    pp_compare_opts_default(&f->o);
    f->o.train_tokens = 1e9;
    f->o.search.global_batch = 8;
    f->o.search.seq = 2048;
    pp_error err = {""};
    cr_expect_eq(pp_compare_run(&f->m, f->cl, 1, &f->o, &f->r, &err), PP_ERR_INFEASIBLE);
    cr_expect(strstr(err.msg, "l40s-8x-eth") && strstr(err.msg, "fits"), "%s", err.msg);
    cr_expect_eq(f->r.n, 1);
    cr_expect_eq(f->r.options[0].status, PP_ERR_INFEASIBLE);
    cr_expect(f->r.options[0].error[0]);
    cr_expect_eq(f->r.cheapest, -1);
    cr_expect_eq(f->r.nfront, 0);
    done(f);
}

/* When the GPU memory fits and the host does not, the reason says the host
 * (red team rt8: it printed "4.04 GiB per GPU of 44.24 usable" alone). */
Test(compare_run, nothing_fits_names_the_host_when_it_is_the_host)
{
    fixture *f = calloc(1, sizeof *f);
    load_model("llama3-70b", &f->m);
    load_cluster("l40s-8x-eth", &f->cl[0]);
    f->cl[0].ncounts = 1, f->cl[0].gpus[0] = 8;
    pp_compare_opts_default(&f->o);
    f->o.train_tokens = 2e12;
    f->o.search.global_batch = 512;
    f->o.search.seq = 4096;
    pp_error err = {""};
    cr_expect_eq(pp_compare_run(&f->m, f->cl, 1, &f->o, &f->r, &err), PP_ERR_INFEASIBLE);
    cr_expect(strstr(f->r.options[0].error, "fits the GPU") && strstr(f->r.options[0].error, "but not the host") &&
                  strstr(f->r.options[0].error, "GiB of host memory per node"),
              "%s", f->r.options[0].error);
    done(f);
}

Test(compare_run, deterministic_across_threads)
{
    char *out[2][3];
    for (int t = 0; t < 2; t++) {
        fixture *f = small();
        f->o.search.threads = t + 1;
        f->o.deadline_days = 20;
        pp_error err = {""};
        cr_assert_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, &f->r, &err), PP_OK, "%s", err.msg);
        out[t][0] = pp_compare_to_json(&f->m, &f->r);
        out[t][1] = pp_compare_to_csv(&f->r);
        out[t][2] = pp_compare_to_svg(&f->r);
        for (int k = 0; k < 3; k++) cr_assert(out[t][k]);
        done(f);
    }
    for (int k = 0; k < 3; k++) {
        cr_expect_str_eq(out[0][k], out[1][k], "output %d differs between 1 and 2 threads", k);
        pp_free(out[0][k]);
        pp_free(out[1][k]);
    }
}

/* Fields of one CSV line (quotes respected). */
static int csv_fields(const char *line, size_t len)
{
    int n = 1, q = 0;
    for (size_t i = 0; i < len; i++) {
        if (line[i] == '"') q = !q;
        else if (line[i] == ',' && !q) n++;
    }
    return n;
}

Test(compare_run, csv_fixed_columns)
{
    fixture *f = small();
    f->o.deadline_days = 20;
    pp_error err = {""};
    cr_assert_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, &f->r, &err), PP_OK, "%s", err.msg);
    char *csv = pp_compare_to_csv(&f->r);
    cr_assert(csv);
    const char *header = "index,cluster,gpu,nodes,gpus,origin,status,dp,tp,pp,cp,ep,sp,zero,recompute,precision,"
                         "micro_batch,grad_accum,schedule,virtual_stages,offload,step_s,tokens_per_s,mfu,mfu_bf16,"
                         "peak_bytes,days,gpu_hours,price_kind,price_basis,usd_per_gpu_hour,price_date,cost_usd,energy_kwh,"
                         "tokens_per_s_per_usd_hour,tokens_per_usd,meets_deadline,within_budget,pareto,cheapest,framework,error,"
                         "recompute_modules,fp8_param_gather,fit\n";
    cr_expect(strncmp(csv, header, strlen(header)) == 0, "header: %.400s", csv);
    int cols = csv_fields(header, strlen(header) - 1), rows = 0;
    for (const char *p = csv; *p;) {
        const char *nl = strchr(p, '\n');
        cr_assert(nl, "every line ends in a newline");
        cr_expect_eq(csv_fields(p, (size_t)(nl - p)), cols, "line %d: %.*s", rows, (int)(nl - p), p);
        rows++;
        p = nl + 1;
    }
    cr_expect_eq(rows, f->r.n + 1);
    /* the documentation lists the same columns */
    FILE *doc = fopen(PARPLAN_SOURCE_DIR "/docs/compare.md", "r");
    cr_assert(doc, "docs/compare.md");
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, doc);
    text[n] = '\0';
    fclose(doc);
    char col[64];
    for (const char *p = header; *p;) {
        size_t l = strcspn(p, ",\n");
        snprintf(col, sizeof col, "`%.*s`", (int)l, p);
        cr_expect(strstr(text, col), "column %s is not documented in docs/compare.md", col);
        p += l + (p[l] != '\0');
    }
    pp_free(csv);
    done(f);
}

/* ------------------------------------------------------------ the command */

typedef struct run {
    int code;
    char out[1 << 16], err[4096];
} run;

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = '\0';
    if (f) fclose(f);
}

/* Runs parplan compare with args (NULL-terminated); stdout/stderr captured. */
static run *cli(const char *const *args)
{
    static run r;
    char po[] = "/tmp/pp_cmp_outXXXXXX", pe[] = "/tmp/pp_cmp_errXXXXXX";
    int fo = mkstemp(po), fe = mkstemp(pe);
    cr_assert(fo >= 0 && fe >= 0);
    const char *argv[64] = {PARPLAN_CLI, "compare"};
    int n = 2;
    for (int i = 0; args[i]; i++) argv[n++] = args[i];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        dup2(fo, 1);
        dup2(fe, 2);
        int dn = open("/dev/null", O_RDONLY);
        dup2(dn, 0);
        execv(PARPLAN_CLI, (char *const *)argv);
        _exit(127);
    }
    int ws;
    waitpid(pid, &ws, 0);
    r.code = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    slurp(po, r.out, sizeof r.out);
    slurp(pe, r.err, sizeof r.err);
    close(fo);
    close(fe);
    unlink(po);
    unlink(pe);
    return &r;
}

#define BASE "--model", "llama3-8b", "--global-batch", "256", "--seq", "4096"

/* Exit 2, nothing on stdout, one line on stderr containing want. */
static void expect_usage(const char *const *args, const char *want)
{
    run *r = cli(args);
    cr_expect_eq(r->code, 2, "exit %d: %s", r->code, r->err);
    cr_expect_eq(r->out[0], '\0', "stdout: %s", r->out);
    cr_expect(strstr(r->err, want), "stderr lacks '%s': %s", want, r->err);
    char *nl = strchr(r->err, '\n');
    cr_expect(nl && nl[1] == '\0', "one line: %s", r->err);
}

Test(compare_cli, bad_input_exits_2)
{
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h10", "--train-tokens", "1e11", NULL}, "did you mean dgx-h100");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "0", NULL}, "--train-tokens");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "-5", NULL}, "--train-tokens");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "nan", NULL}, "--train-tokens");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", NULL}, "--train-tokens");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "1T", "--deadline-days", "0", NULL},
                 "--deadline-days");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "1T", "--deadline-days", "NaN", NULL},
                 "--deadline-days");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "1T", "--price-per-gpu-hour",
                                  "dgx-h100=abc", NULL},
                 "--price-per-gpu-hour");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "1T", "--price-per-gpu-hour",
                                  "dgx-h10=2", NULL},
                 "did you mean dgx-h100");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "1T", "--price-per-gpu-hour",
                                  "=2", NULL},
                 "CLUSTER=PRICE");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "1T", "--price-per-gpu-hour",
                                  "dgx-h100=2,dgx-h100=3", NULL},
                 "twice");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "1T", "--amortize-years", "3", NULL},
                 "--purchase-usd-per-gpu");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "1T", "--purchase-usd-per-gpu",
                                  "30000", NULL},
                 "--amortize-years");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "1T", "--gpus", "12", NULL}, "12");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "1T", "--gpus", "8", "--nodes", "1",
                                  NULL},
                 "not both");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100,dgx-h100", "--train-tokens", "1T", NULL}, "twice");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100:0", "--train-tokens", "1T", NULL}, "--clusters");
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "1T", "--objective", "memory", NULL},
                 "--objective");
}

Test(compare_cli, infeasible_exits_1)
{
    run *r = cli((const char *[]){"--model", "deepseek-v3", "--global-batch", "8", "--seq", "2048", "--clusters",
                                  "l40s-8x-eth", "--train-tokens", "1e9", NULL});
    cr_expect_eq(r->code, 1, "exit %d: %s", r->code, r->err);
    cr_expect_eq(r->out[0], '\0');
    cr_expect(strstr(r->err, "fits"), "%s", r->err);
}

Test(compare_cli, table_json_csv_and_plot)
{
    char dir[] = "/tmp/pp_cmp_plotXXXXXX";
    cr_assert(mkdtemp(dir));
    char svg[128];
    snprintf(svg, sizeof svg, "%s/c.svg", dir);
    run *r = cli((const char *[]){BASE, "--clusters", "dgx-h100,dgx-a100-80g", "--gpus", "8,16", "--train-tokens",
                                  "100B", "--deadline-days", "30", "--plot", svg, NULL});
    cr_assert_eq(r->code, 0, "exit %d: %s", r->code, r->err);
    cr_expect(strstr(r->out, "catalog price of 2026-"), "prices with dates: %s", r->out);
    cr_expect(strstr(r->out, "smallest GPU count meeting the 30-day deadline"), "%s", r->out);
    cr_expect(strstr(r->out, "cheapest option meeting the 30-day deadline"), "%s", r->out);
    cr_expect(strstr(r->out, "kWh"), "%s", r->out);
    struct stat st;
    cr_expect(stat(svg, &st) == 0 && st.st_size > 1000, "the chart was written");
    /* again without --force: refused before any search, file untouched */
    r = cli((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "100B", "--plot", svg, NULL});
    cr_expect_eq(r->code, 2);
    cr_expect(strstr(r->err, "--force"), "%s", r->err);
    r = cli((const char *[]){BASE, "--clusters", "dgx-h100:8", "--train-tokens", "100B", "--plot", svg, "--force",
                             "--format", "csv", "--price-per-gpu-hour", "2.5", NULL});
    cr_expect_eq(r->code, 0, "%s", r->err);
    cr_expect(strncmp(r->out, "index,cluster,", 14) == 0, "%s", r->out);
    cr_expect(strstr(r->out, ",override,given,2.5,"), "%s", r->out);
    r = cli((const char *[]){BASE, "--clusters", "dgx-h100", "--gpus", "8", "--train-tokens", "100B", "--format", "json",
                             "--purchase-usd-per-gpu", "dgx-h100=30000", "--amortize-years", "4", NULL});
    cr_expect_eq(r->code, 0, "%s", r->err);
    cr_expect(strstr(r->out, "\"price_kind\":\t\"purchase\""), "%.600s", r->out);
    unlink(svg);
    rmdir(dir);
}

/* ------------------------------------------------------------ fairness */

Test(compare_fair, one_precision_on_every_cluster_by_default)
{
    fixture *f = small(); /* H100 (has fp8) and A100 (has not) */
    pp_error err = {""};
    cr_assert_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, &f->r, &err), PP_OK, "%s", err.msg);
    for (int i = 0; i < f->r.n; i++) {
        const pp_compare_option *e = &f->r.options[i];
        cr_assert_eq(e->status, PP_OK, "%s", e->error);
        cr_expect_eq(e->plan.strategy.precision, PP_PREC_BF16, "option %d (%s) runs %s: not the same footing", i,
                     f->cl[e->cluster].cluster.name, pp_precision_name(e->plan.strategy.precision));
    }
    done(f);
    /* asked for: fp8 where the GPU has it */
    f = small();
    f->o.search.precisions = 1u << PP_PREC_FP8 | 1u << PP_PREC_BF16;
    cr_assert_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, &f->r, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(f->r.options[0].plan.strategy.precision, PP_PREC_FP8, "H100 with fp8 allowed");
    cr_expect_eq(f->r.options[2].plan.strategy.precision, PP_PREC_BF16, "A100 has no fp8");
    done(f);
    /* a GPU without bf16 runs fp16 */
    pp_gpu g;
    cr_assert_eq(pp_gpu_load("v100-32g", &g, &err), PP_OK);
    cr_expect_eq(pp_compare_default_precision(&g), PP_PREC_FP16);
    cr_assert_eq(pp_gpu_load("a100-80g", &g, &err), PP_OK);
    cr_expect_eq(pp_compare_default_precision(&g), PP_PREC_BF16);
}

Test(compare_fair, mfu_on_the_dense_bf16_peak_for_every_option)
{
    fixture *f = small();
    f->o.search.precisions = 1u << PP_PREC_FP8 | 1u << PP_PREC_BF16;
    pp_error err = {""};
    cr_assert_eq(pp_compare_run(&f->m, f->cl, 2, &f->o, &f->r, &err), PP_OK, "%s", err.msg);
    for (int i = 0; i < f->r.n; i++) {
        const pp_compare_option *e = &f->r.options[i];
        pp_cluster c = f->cl[e->cluster].cluster;
        cr_assert_eq(pp_cluster_resize(&c, 0, e->gpus, &err), PP_OK);
        /* by hand: model FLOPs per step / (step x GPUs x bf16 peak) */
        double want = e->plan.throughput.model_flops_per_step /
                      (e->plan.time.step_s * e->gpus * c.gpu.peak_flops[PP_PREC_BF16]);
        cr_expect(REL(e->mfu_bf16, want), "option %d: %g vs %g", i, e->mfu_bf16, want);
        /* the plan's own MFU is over its precision's peak: for fp8 on H100
         * (1979 vs 989 TFLOP/s) the bf16 basis is 2.001 times larger */
        double ratio = c.gpu.peak_flops[e->plan.strategy.precision] / c.gpu.peak_flops[PP_PREC_BF16];
        cr_expect(REL(e->mfu_bf16, e->plan.throughput.mfu * ratio), "option %d", i);
    }
    cr_expect_eq(f->r.options[0].plan.strategy.precision, PP_PREC_FP8);
    cr_expect_gt(f->r.options[0].mfu_bf16, 1.9 * f->r.options[0].plan.throughput.mfu);
    char *csv = pp_compare_to_csv(&f->r), *json = pp_compare_to_json(&f->m, &f->r);
    cr_assert(csv && json);
    cr_expect(strstr(csv, ",mfu,mfu_bf16,") && strstr(csv, ",price_kind,price_basis,"), "%.300s", csv);
    cr_expect(strstr(json, "\"mfu_basis\"") && strstr(json, "\"mfu_bf16\"") && strstr(json, "\"precision\":\t\"fp8\"") &&
              strstr(json, "\"price_basis\":\t\"on-demand\""), "%.2000s", json);
    pp_free(csv);
    pp_free(json);
    done(f);
}

Test(compare_fair, price_basis_is_named)
{
    cr_expect_str_eq(pp_price_basis(PP_PRICE_CATALOG), "on-demand");
    cr_expect_str_eq(pp_price_basis(PP_PRICE_OVERRIDE), "given");
    cr_expect_str_eq(pp_price_basis(PP_PRICE_PURCHASE), "purchase");
    cr_expect_str_eq(pp_price_basis(PP_PRICE_NONE), "none");
}

Test(compare_fair, cli_precision_and_per_cluster_prices)
{
    run *r = cli((const char *[]){BASE, "--clusters", "dgx-h100,dgx-a100-80g", "--gpus", "8", "--train-tokens", "100B",
                                  "--price-per-gpu-hour", "dgx-h100=2.5,dgx-a100-80g=1.5", NULL});
    cr_assert_eq(r->code, 0, "exit %d: %s", r->code, r->err);
    cr_expect(strstr(r->out, "prec") && strstr(r->out, "MFU") && strstr(r->out, "dense bf16 peak"), "%s", r->out);
    cr_expect(!strstr(r->out, " fp8 "), "fp8 without --precision: %s", r->out);
    cr_expect(strstr(r->out, "$2.50/GPU-hour given") && strstr(r->out, "$1.50/GPU-hour given") &&
              strstr(r->out, "on-demand"), "%s", r->out);
    r = cli((const char *[]){BASE, "--clusters", "dgx-h100,dgx-a100-80g", "--gpus", "8", "--train-tokens", "100B",
                             "--precision", "bf16,fp8", "--format", "csv", NULL});
    cr_assert_eq(r->code, 0, "exit %d: %s", r->code, r->err);
    cr_expect(strstr(r->out, ",fp8,") && strstr(r->out, ",bf16,"), "%s", r->out);
    expect_usage((const char *[]){BASE, "--clusters", "dgx-h100", "--train-tokens", "1T", "--precision", "fp9", NULL},
                 "--precision");
}
