/*
 * test_moe_search.c — the search turns on Megatron-Core's MoE options
 * where they apply: hierarchical dispatch when the EP group leaves a node,
 * the EP all-to-all overlap where Megatron allows it without pipeline
 * stages (with them it holds one more micro-batch), and folded experts
 * (etp 1) as a dimension; each returned plan re-estimates to itself, and
 * neither option it turned on makes the step longer (they are chosen, not
 * searched, because they never cost time or memory).
 */
#include <criterion/criterion.h>
#include <math.h>

#include "costmodel/costmodel.h"
#include "planner/planner.h"
#include "tests/fixtures.h"

/* Brute force on Megatron's rank order (tp fastest, then cp and dp; the
 * expert groups fold etp-ep-edp over those ranks, so an EP group's members
 * are etp apart when folded and tp apart otherwise, cp folded into EP):
 * whether the first group's members sit on more than one 8-GPU node. */
static int ep_crosses(const pp_strategy *s)
{
    int et = s->etp > 0 ? s->etp : s->tp, stride = et < s->tp ? et : s->tp;
    for (int i = 1; i < s->ep; i++)
        if ((i * stride) / 8 != 0) return 1;
    return 0;
}

Test(moe_search, options_where_they_apply, .timeout = 600)
{
    pp_model m = fx_model("mixtral-8x7b");
    pp_cluster c = fx_cluster("dgx-h100", 4, 0);
    pp_search_opts o;
    pp_error e = {""};
    pp_plan_list l;
    pp_search_opts_default(&o);
    o.global_batch = 512, o.seq = 4096, o.top_k = 20;
    o.frameworks = 1u << PP_FW_MEGATRON;
    cr_assert_eq(pp_plan_search(&m, &c, &o, &l, &e), PP_OK, "%s", e.msg);
    int folded = 0, with_ep = 0;
    for (int i = 0; i < l.n; i++) {
        const pp_strategy *s = &l.plans[i].strategy;
        if (s->ep < 2) continue;
        with_ep++;
        cr_expect_eq(s->ep_dispatch, ep_crosses(s), "#%d: hierarchical exactly when EP leaves a node", i + 1);
        int can = s->recompute != PP_RECOMPUTE_FULL && s->pp == 1 && s->precision != PP_PREC_FP32 &&
                  s->precision != PP_PREC_TF32;
        cr_expect_eq(s->overlap_ep, can, "#%d: overlap exactly where it is free (pp 1) and allowed", i + 1);
        pp_strategy x = *s;
        pp_plan p, q;
        cr_assert_eq(pp_estimate(&m, &c, &x, &p, &e), PP_OK, "%s", e.msg);
        cr_expect(fabs(p.time.step_s / l.plans[i].time.step_s - 1) < 1e-9, "#%d re-estimates to itself", i + 1);
        x = *s, x.ep_dispatch = 0, x.overlap_ep = 0, x.filled = 0;
        cr_assert_eq(pp_estimate(&m, &c, &x, &q, &e), PP_OK, "%s", e.msg);
        cr_expect_geq(q.time.step_s, p.time.step_s * (1 - 1e-12), "#%d: the options never cost time", i + 1);
        cr_expect(fabs(q.memory.peak_bytes / p.memory.peak_bytes - 1) < 1e-12, "#%d: nor memory", i + 1);
    }
    cr_expect_gt(with_ep, 0, "plans with expert parallelism in the top %d", l.n);
    pp_plan_list_free(&l);
    /* ep 8 over tp 4 x pp 2 (dp 4) exists only folded: the search finds it */
    o.tp = (pp_int_set){.n = 1, .v = {4}};
    o.pp = (pp_int_set){.n = 1, .v = {2}};
    o.ep = (pp_int_set){.n = 1, .v = {8}};
    o.top_k = 5;
    cr_assert_eq(pp_plan_search(&m, &c, &o, &l, &e), PP_OK, "%s", e.msg);
    cr_expect_gt(l.n, 0);
    for (int i = 0; i < l.n; i++) folded += l.plans[i].strategy.etp == 1;
    cr_expect_eq(folded, l.n, "every plan folded: %d of %d", folded, l.n);
    pp_plan_list_free(&l);
}
