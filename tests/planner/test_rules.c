/*
 * test_rules.c — every validity rule of the strategy space, each accepting
 * a valid candidate and rejecting an invalid one; pinned options that break
 * a rule on their own are input errors naming the option; and every plan a
 * search returns obeys every rule and every restriction.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "planner/planner.h"

static pp_model model;
static pp_cluster cluster;
static pp__space space;

static void setup_space(const char *m, const char *c, int nodes, int gb, int seq)
{
    pp_error e = {""};
    cr_assert_eq(pp_model_load(m, &model, &e), PP_OK, "%s", e.msg);
    cr_assert_eq(pp_cluster_load(c, &cluster, &e), PP_OK, "%s", e.msg);
    cr_assert_eq(pp_cluster_resize(&cluster, nodes, 0, &e), PP_OK, "%s", e.msg);
    pp_search_opts o;
    pp_search_opts_default(&o);
    o.global_batch = gb;
    o.seq = seq;
    cr_assert_eq(pp__space_init(&space, &model, &cluster, &o, &e), PP_OK, "%s", e.msg);
}

/* A valid candidate of llama3-8b on 2 x DGX H100 (16 GPUs), gb 64, seq 4096. */
static pp__cand base(void)
{
    pp__cand k;
    memset(&k, 0, sizeof k);
    k.dp = 2, k.tp = 8, k.pp = 1, k.cp = 1, k.ep = 1, k.mb = 1, k.v = 1;
    k.zero = 1, k.precision = PP_PREC_BF16, k.schedule = PP_SCHED_1F1B;
    return k;
}

static void init(void) { setup_space("llama3-8b", "dgx-h100", 2, 64, 4096); }

TestSuite(rules, .init = init);

Test(rules, gpus_product)
{
    pp__cand k = base();
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_GPUS));
    k.dp = 1;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_GPUS), "8 of 16 GPUs");
}

Test(rules, tp_divides_heads_and_kv_heads)
{
    pp__cand k = base();
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_TP_HEADS));
    k.tp = 16; /* divides 32 heads, not 8 kv heads */
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_TP_HEADS));
    k.tp = 3;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_TP_HEADS));
}

Test(rules, tp_inside_the_node)
{
    pp__cand k = base();
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_TP_NODE));
    k.tp = 16, k.dp = 1;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_TP_NODE), "16 > 8 GPUs per node");
    /* the node size comes from the cluster, not from a constant 8 */
    setup_space("llama3-8b", "pcie-4x-4090", 2, 64, 4096);
    k = base(), k.tp = 8, k.dp = 1;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_TP_NODE), "4 GPUs per node");
    k.tp = 4, k.dp = 2;
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_TP_NODE));
    /* --max-tp-per-node lowers it */
    pp_search_opts o = space.o;
    o.max_tp_per_node = 2;
    pp_error e;
    cr_assert_eq(pp__space_init(&space, &model, &cluster, &o, &e), PP_OK);
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_TP_NODE));
}

Test(rules, pp_at_most_layers)
{
    pp__cand k = base();
    k.pp = 32, k.tp = 1, k.dp = 1, k.zero = 0;
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_PP_LAYERS));
    k.pp = 33;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_PP_LAYERS));
}

Test(rules, cp_divides_seq)
{
    pp__cand k = base();
    k.cp = 2, k.dp = 1;
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_CP_SEQ));
    k.cp = 3;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_CP_SEQ));
}

Test(rules, ep_divides_experts_and_dp_cp)
{
    pp__cand k = base();
    k.ep = 2;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_EP), "dense model");
    setup_space("mixtral-8x7b", "dgx-h100", 2, 64, 4096);
    k = base(), k.tp = 2, k.dp = 8, k.ep = 8;
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_EP));
    k.ep = 3;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_EP), "3 does not divide 8 experts");
    k.ep = 8, k.tp = 8, k.dp = 2;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_EP), "8 does not divide dp*cp = 2");
}

Test(rules, global_batch_arithmetic)
{
    pp__cand k = base();
    k.mb = 4; /* 64 = 4 * 8 * 2 */
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_BATCH));
    k.mb = 3;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_BATCH));
    k.mb = 64;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_BATCH), "64 * dp 2 > 64");
}

Test(rules, sequence_parallel_needs_tp)
{
    pp__cand k = base();
    k.sp = 1;
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_SP));
    k.tp = 1, k.dp = 16;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_SP));
}

Test(rules, fp8_only_where_the_gpu_has_it)
{
    pp__cand k = base();
    k.precision = PP_PREC_FP8;
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_PRECISION), "H100 has fp8");
    k.precision = PP_PREC_TF32;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_PRECISION));
    setup_space("llama3-8b", "dgx-a100-80g", 2, 64, 4096);
    k.precision = PP_PREC_FP8;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_PRECISION), "A100 has no fp8");
}

Test(rules, zero2_3_not_with_pipeline)
{
    pp__cand k = base();
    k.pp = 2, k.dp = 1;
    k.zero = 1;
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_ZERO_PP));
    k.zero = 2;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_ZERO_PP));
    k.zero = 3;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_ZERO_PP));
    k.pp = 1, k.dp = 2;
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_ZERO_PP));
}

Test(rules, offload_needs_zero)
{
    pp__cand k = base();
    k.offload = PP_OFFLOAD_OPTIMIZER, k.zero = 0;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_OFFLOAD));
    k.zero = 1;
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_OFFLOAD));
    k.offload = PP_OFFLOAD_OPT_PARAMS;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_OFFLOAD));
    k.zero = 3;
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_OFFLOAD));
    k.offload = PP_OFFLOAD_NVME;
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_OFFLOAD), "DGX H100 has NVMe");
    setup_space("llama3-8b", "workstation-1x-4090", 1, 8, 2048);
    if (cluster.nvme_bytes <= 0) cr_assert(!pp__rule_ok(&space, &k, PP_RULE_OFFLOAD), "no NVMe");
}

Test(rules, schedules)
{
    pp__cand k = base();
    k.schedule = PP_SCHED_GPIPE;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_SCHEDULE), "pp = 1: 1F1B only");
    k.pp = 2, k.dp = 1, k.schedule = PP_SCHED_INTERLEAVED, k.v = 4; /* 32 % 8 = 0; m = 64 % 2 = 0 */
    cr_assert(pp__rule_ok(&space, &k, PP_RULE_SCHEDULE));
    k.v = 3; /* 32 % 6 != 0 */
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_SCHEDULE));
    k.v = 1;
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_SCHEDULE), "v >= 2");
    k.v = 2, k.mb = 64, k.dp = 1; /* m = 1, not a multiple of pp 2 */
    cr_assert(!pp__rule_ok(&space, &k, PP_RULE_SCHEDULE));
}

/* ------------------------------------------------------------ pinned input */

static pp_status pinned(pp_search_opts *o, pp_error *e)
{
    pp_plan_list l;
    pp_status st = pp_plan_search(&model, &cluster, o, &l, e);
    pp_plan_list_free(&l);
    return st;
}

static pp_search_opts opts(void)
{
    pp_search_opts o;
    pp_search_opts_default(&o);
    o.global_batch = 64;
    o.seq = 4096;
    return o;
}

Test(rules, pinned_values_are_input_errors)
{
    pp_search_opts o = opts();
    pp_error e = {""};
    o.tp.n = 1, o.tp.v[0] = 3;
    cr_assert_eq(pinned(&o, &e), PP_ERR_INPUT);
    cr_assert(strstr(e.msg, "--tp 3") && strstr(e.msg, "heads"), "%s", e.msg);
    o = opts(), o.zero.n = 1, o.zero.v[0] = 5;
    cr_assert_eq(pinned(&o, &e), PP_ERR_INPUT);
    cr_assert(strstr(e.msg, "--zero 5"), "%s", e.msg);
    o = opts(), o.top_k = 0;
    cr_assert_eq(pinned(&o, &e), PP_ERR_INPUT);
    cr_assert(strstr(e.msg, "--top"), "%s", e.msg);
    o = opts(), o.tp.n = 1, o.tp.v[0] = 16;
    cr_assert_eq(pinned(&o, &e), PP_ERR_INPUT);
    cr_assert(strstr(e.msg, "--tp 16"), "%s", e.msg);
    o = opts(), o.cp.n = 1, o.cp.v[0] = 3;
    cr_assert_eq(pinned(&o, &e), PP_ERR_INPUT);
    cr_assert(strstr(e.msg, "--cp 3"), "%s", e.msg);
    o = opts(), o.ep.n = 1, o.ep.v[0] = 2;
    cr_assert_eq(pinned(&o, &e), PP_ERR_INPUT);
    cr_assert(strstr(e.msg, "--ep 2") && strstr(e.msg, "dense"), "%s", e.msg);
    o = opts(), o.pp.n = 1, o.pp.v[0] = 64;
    cr_assert_eq(pinned(&o, &e), PP_ERR_INPUT);
    cr_assert(strstr(e.msg, "--pp 64"), "%s", e.msg);
    o = opts(), o.global_batch = 0;
    cr_assert_eq(pinned(&o, &e), PP_ERR_INPUT);
    cr_assert(strstr(e.msg, "--global-batch"), "%s", e.msg);
    /* valid alone, impossible together: 8 * 4 > 16 GPUs */
    o = opts(), o.tp.n = 1, o.tp.v[0] = 8, o.pp.n = 1, o.pp.v[0] = 4, o.cp.n = 1, o.cp.v[0] = 1;
    cr_assert_eq(pinned(&o, &e), PP_ERR_INPUT);
    cr_assert(strstr(e.msg, "no valid strategy"), "%s", e.msg);
}

Test(rules, pinned_precision_needs_the_gpu)
{
    setup_space("llama3-8b", "dgx-a100-80g", 2, 64, 4096);
    pp_search_opts o = opts();
    pp_error e = {""};
    o.precisions = 1u << PP_PREC_FP8;
    cr_assert_eq(pinned(&o, &e), PP_ERR_INPUT);
    cr_assert(strstr(e.msg, "--precision fp8"), "%s", e.msg);
}

/* Every returned plan obeys every rule and every restriction. */
Test(rules, plans_obey_rules_and_pins)
{
    pp_search_opts o = opts();
    o.top_k = 20;
    o.tp.n = 2, o.tp.v[0] = 2, o.tp.v[1] = 4;
    o.zero.n = 2, o.zero.v[0] = 0, o.zero.v[1] = 1;
    o.precisions = 1u << PP_PREC_BF16;
    pp_plan_list l;
    pp_error e = {""};
    cr_assert_eq(pp_plan_search(&model, &cluster, &o, &l, &e), PP_OK, "%s", e.msg);
    cr_assert_eq(l.n, 20);
    for (int i = 0; i < l.n; i++) {
        const pp_strategy *s = &l.plans[i].strategy;
        pp__cand k = {0};
        k.dp = s->dp, k.tp = s->tp, k.pp = s->pp, k.cp = s->cp, k.ep = s->ep, k.mb = s->micro_batch;
        k.sp = (uint8_t)s->sp, k.zero = (uint8_t)s->zero, k.offload = (uint8_t)s->offload;
        k.recompute = (uint8_t)s->recompute, k.precision = (uint8_t)s->precision;
        k.schedule = (uint8_t)s->schedule, k.v = (uint8_t)s->virtual_stages;
        for (int r = 0; r < PP_RULE_COUNT; r++) cr_assert(pp__rule_ok(&space, &k, (pp__rule)r), "plan %d breaks %s", i, pp__rule_name((pp__rule)r));
        cr_assert(s->tp == 2 || s->tp == 4);
        cr_assert(s->zero <= 1);
        cr_assert_eq(s->precision, PP_PREC_BF16);
        cr_assert(l.plans[i].memory.fits);
        if (i) cr_assert_leq(l.plans[i - 1].time.step_s, l.plans[i].time.step_s, "ranked by step time");
    }
    pp_plan_list_free(&l);
}
