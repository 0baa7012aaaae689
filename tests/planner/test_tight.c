/*
 * test_tight.c — the ranking with error bars (planner/rank.c, search.c):
 * plans whose peak-memory interval crosses the usable memory ("tight") come
 * after those that fit, whatever their step time; the search still returns
 * the same plans as a longer list's head (its pruning respects the order)
 * and the same for any thread count.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "planner/planner.h"
#include "tests/fixtures.h"

/* Llama-3-8B on one DGX H100 with Megatron, no TP or PP, ZeRO 0/1: the fastest plans
 * fill the GPU, and the published memory residuals (H100's: torchtitan's runs) put
 * the tops of those from the ninth on above it. */
static void search(int top, int threads, pp_plan_list *l)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_search_opts o;
    pp_error e = {""};
    pp_search_opts_default(&o);
    o.global_batch = 64, o.seq = 8192, o.top_k = top, o.threads = threads;
    o.frameworks = 1u << PP_FW_MEGATRON;
    o.tp = (pp_int_set){.n = 1, .v = {1}};
    o.pp = (pp_int_set){.n = 1, .v = {1}};
    o.zero = (pp_int_set){.n = 2, .v = {0, 1}}; /* without Megatron-FSDP, whose plans fit with room */
    /* nor selective recompute, whose mlp module makes room too (under flash
     * attention core_attn alone saves nothing) */
    o.recomputes = 1u << PP_RECOMPUTE_NONE | 1u << PP_RECOMPUTE_FULL;
    cr_assert_eq(pp_plan_search(&m, &c, &o, l, &e), PP_OK, "%s", e.msg);
}

Test(tight, ranked_after_the_plans_that_fit, .timeout = 600)
{
    pp_plan_list l;
    search(16, 0, &l);
    int tight = 0, faster = 0;
    for (int i = 0; i < l.n; i++) {
        const pp_plan *p = &l.plans[i];
        cr_expect_neq(p->uncertainty.fit, PP_FIT_NO, "#%d: a plan the search returns fits by its estimate", i + 1);
        if (i) cr_expect_geq(p->uncertainty.fit, l.plans[i - 1].uncertainty.fit, "#%d is %s after a %s plan", i + 1,
                             pp_fit_name(p->uncertainty.fit), pp_fit_name(l.plans[i - 1].uncertainty.fit));
        if (p->uncertainty.fit != PP_FIT_TIGHT) continue;
        tight++;
        cr_expect_gt(p->uncertainty.peak_bytes.hi, p->memory.gpu_bytes);
        cr_expect_leq(p->memory.peak_bytes, p->memory.gpu_bytes);
        faster += p->time.step_s < l.plans[0].time.step_s;
    }
    /* the scenario exercises the rule: tight plans that would have won on speed */
    cr_expect_gt(tight, 0, "no tight plan in the top %d", l.n);
    cr_expect_gt(faster, 0, "no tight plan is faster than #1");
    cr_expect_eq(l.plans[0].uncertainty.fit, PP_FIT_FITS);
    /* and the comparison itself: a faster tight plan ranks after a slower one that fits */
    pp_plan a = l.plans[0], b = l.plans[0];
    b.uncertainty.fit = PP_FIT_TIGHT;
    b.time.step_s = a.time.step_s / 2;
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    cr_expect_lt(pp__plan_cmp(&c, &a, &b, PP_OBJ_THROUGHPUT, 0), 0);
    cr_expect_gt(pp__plan_cmp(&c, &b, &a, PP_OBJ_THROUGHPUT, 0), 0);
    /* a tight plan over the GPU (it needs the allocator's fragmentation to
     * leave room) ranks after a slower tight one whose estimate is within it */
    pp_plan d = b;
    d.memory.fits = 0, d.memory.peak_bytes = 1.05 * d.memory.gpu_bytes, d.time.step_s = b.time.step_s / 2;
    cr_expect_lt(pp__plan_cmp(&c, &b, &d, PP_OBJ_THROUGHPUT, 0), 0);
    /* and one whose live tensors are over too (only the error bar's low end
     * fits) after that, and before one that does not fit */
    pp_plan f = d, n = d;
    f.memory.live_fits = 0, f.time.step_s = d.time.step_s / 2;
    n.uncertainty.fit = PP_FIT_NO, n.time.step_s = f.time.step_s / 2;
    cr_expect_lt(pp__plan_cmp(&c, &d, &f, PP_OBJ_THROUGHPUT, 0), 0);
    cr_expect_lt(pp__plan_cmp(&c, &f, &n, PP_OBJ_THROUGHPUT, 0), 0);
    /* a least-memory ranking looks at memory only */
    b.memory.peak_bytes = a.memory.peak_bytes / 2;
    cr_expect_gt(pp__plan_cmp(&c, &a, &b, PP_OBJ_MEMORY, 0), 0);
    pp_plan_list_free(&l);
}

static int same_plan(const pp_plan *a, const pp_plan *b)
{
    return a->uncertainty.fit == b->uncertainty.fit && a->time.step_s == b->time.step_s &&
           a->memory.peak_bytes == b->memory.peak_bytes && !memcmp(&a->strategy, &b->strategy, sizeof a->strategy);
}

Test(tight, pruning_and_threads_keep_the_order, .timeout = 600)
{
    pp_plan_list k3, k8, t1, t2;
    search(3, 0, &k3);
    search(8, 0, &k8);
    search(8, 1, &t1);
    search(8, 2, &t2);
    cr_assert(k3.n == 3 && k8.n == 8 && t1.n == 8 && t2.n == 8);
    for (int i = 0; i < 3; i++) cr_expect(same_plan(&k3.plans[i], &k8.plans[i]), "top 3 #%d differs from top 8's", i + 1);
    for (int i = 0; i < 8; i++) cr_expect(same_plan(&t1.plans[i], &t2.plans[i]), "#%d differs between 1 and 2 threads", i + 1);
    pp_plan_list_free(&k3);
    pp_plan_list_free(&k8);
    pp_plan_list_free(&t1);
    pp_plan_list_free(&t2);
}
