/*
 * test_rules.c — the one table of validity rules (costmodel/rules.c): one
 * test per rule. Each case starts from a strategy that passes every rule,
 * breaks exactly the rule under test, and checks that the rule fails with
 * its id, the field it names and no CLI wording; for a framework rule, that
 * another framework can do what this one refuses. Every rule has a case,
 * and no rule's sentence is written in two source files.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/costmodel.h"
#include "costmodel/framework.h"
#include "costmodel/rules.h"
#include "tests/fixtures.h"

typedef struct rule_case {
    pp_rule rule;
    const char *model;
    const char *cluster;
    int gpus;
    pp_framework fw;
    void (*valid)(pp_strategy *s);  /* adjustments of the base that still pass every rule */
    void (*broken)(pp_strategy *s); /* breaks the rule under test */
    int ok_fw;                      /* a framework for which `broken` passes the rule; -1 none */
    int max_tp;                     /* the search's TP limit for the context; 0 none */
} rule_case;

/* The base: 16 GPUs, dp 2 x tp 8, ZeRO-1, bf16, global batch 64, seq 4096. */
static void base(const rule_case *k, pp_strategy *s)
{
    pp_strategy_default(s);
    s->framework = k->fw;
    s->dp = k->gpus / 8, s->tp = 8;
    s->zero = s->framework == PP_FW_FSDP ? 3 : 1;
    s->sp = s->framework == PP_FW_FSDP;
    s->global_batch = 64;
    s->seq = 4096;
    if (k->valid) k->valid(s);
}

static void tp1(pp_strategy *s) { s->dp *= s->tp, s->tp = 1, s->sp = 0; }
static void one_gpu(pp_strategy *s) { s->dp = 1, s->tp = 1, s->sp = 0, s->zero = 0, s->global_batch = 4; }
static void pp2(pp_strategy *s) { s->dp /= 2, s->pp = 2; }

static void b_order(pp_strategy *s) { strcpy(s->order, "tp-tp-dp-pp"); }
static void b_degrees(pp_strategy *s) { s->ep = 0; }
static void b_gpus(pp_strategy *s) { s->dp = 1; }
static void b_tp_heads(pp_strategy *s) { s->tp = 16, s->dp = 1; }
static void b_tp16(pp_strategy *s) { s->tp = 16, s->dp = 1; }
static void b_pp_layers(pp_strategy *s) { s->pp = 64; }
static void b_cp_seq(pp_strategy *s) { s->cp = 3; }
static void b_ep2(pp_strategy *s) { s->ep = 2; }
static void b_ep_group(pp_strategy *s) { s->ep = 8, s->dp = 2; }
static void ep2(pp_strategy *s) { s->ep = 2; }
static void b_etp1(pp_strategy *s) { s->etp = 1; }
static void b_ep_overlap(pp_strategy *s) { s->overlap_ep = 1; }
static void b_ep_dispatch(pp_strategy *s) { s->ep_dispatch = 1; }
static void b_batch(pp_strategy *s) { s->global_batch = 63; }
static void b_sp(pp_strategy *s) { s->sp = 1, s->tp = 1; }
static void b_sp_on(pp_strategy *s) { s->sp = 1; }
static void b_fp8(pp_strategy *s) { s->precision = PP_PREC_FP8; }
static void b_zero4(pp_strategy *s) { s->zero = 4; }
static void b_shard(pp_strategy *s) { s->shard = 3; }
static void b_offload0(pp_strategy *s) { s->offload = PP_OFFLOAD_OPTIMIZER, s->zero = 0; }
static void b_nvme(pp_strategy *s) { s->offload = PP_OFFLOAD_NVME, s->zero = 3; }
static void b_sched(pp_strategy *s) { s->schedule = PP_SCHED_INTERLEAVED, s->virtual_stages = 2; }
static void b_v3(pp_strategy *s)
{
    pp2(s), s->schedule = PP_SCHED_INTERLEAVED, s->virtual_stages = 3;
    memset(s->stage_layers, 0, sizeof s->stage_layers);
}
static void b_ga_odd(pp_strategy *s) { pp2(s), s->schedule = PP_SCHED_INTERLEAVED, s->virtual_stages = 2, s->global_batch = 3; }
static void b_split(pp_strategy *s) { pp2(s), s->stage_layers[0] = 10, s->stage_layers[1] = 10, s->filled &= ~PP_FILLED_SPLIT; }
static void b_rc_layers(pp_strategy *s) { s->recompute = PP_RECOMPUTE_FULL, s->recompute_layers = -2; }
static void b_behaviour(pp_strategy *s) { s->cp_comm = (pp_cp_comm)7, s->filled &= ~PP_FILLED_CP_COMM; }
static void b_lora0(pp_strategy *s) { s->ft.mode = PP_MODE_LORA, s->ft.lora_rank = 0; }
static void b_qlora32(pp_strategy *s) { s->ft.mode = PP_MODE_QLORA, s->precision = PP_PREC_FP32; }
static void b_tp2(pp_strategy *s) { s->tp = 2, s->dp = 8; }
static void b_tp2_nosp(pp_strategy *s) { s->tp = 2, s->dp = 8, s->sp = 0; }
static void b_pp2(pp_strategy *s) { s->pp = 2; }
static void b_cp2(pp_strategy *s) { s->cp = 2; }
static void b_cp2_a2a(pp_strategy *s) { s->cp = 2, s->dp /= 2, s->cp_comm = PP_CP_A2A, s->filled &= ~PP_FILLED_CP_COMM; }
static void b_cp16_a2a(pp_strategy *s) { s->cp = 16, s->dp = 1, s->cp_comm = PP_CP_A2A, s->filled &= ~PP_FILLED_CP_COMM; }
static void b_zero2(pp_strategy *s) { s->zero = 2; } /* Megatron has 0, 1 and 3 (Megatron-FSDP) */
static void b_zero2_pp2(pp_strategy *s) { pp2(s), s->zero = 2; }
static void b_hybrid(pp_strategy *s) { s->shard = 1; }
static void b_offload_opt(pp_strategy *s) { s->offload = PP_OFFLOAD_OPTIMIZER; }
static void b_interleaved(pp_strategy *s) { pp2(s), s->schedule = PP_SCHED_INTERLEAVED, s->virtual_stages = 2; }
static void b_selective(pp_strategy *s) { s->recompute = PP_RECOMPUTE_SELECTIVE; }
static void b_partial(pp_strategy *s)
{
    pp2(s), s->recompute = PP_RECOMPUTE_FULL, s->recompute_layers = 4;
    s->stage_layers[0] = s->stage_layers[1] = 16;
    s->filled &= ~PP_FILLED_SPLIT;
}
static void b_uneven(pp_strategy *s) { pp2(s), s->stage_layers[0] = 14, s->stage_layers[1] = 18, s->filled &= ~PP_FILLED_SPLIT; }
static void b_adam8(pp_strategy *s) { s->optimizer = PP_OPT_ADAM8BIT; }
static void b_sgd_offload(pp_strategy *s) { s->optimizer = PP_OPT_SGD, s->offload = PP_OFFLOAD_OPT_PARAMS, s->zero = 3; }
static void b_lora(pp_strategy *s) { s->ft.mode = PP_MODE_LORA; }
static void b_act_offload(pp_strategy *s) { s->act_offload_layers = 8; }
static void b_order2(pp_strategy *s) { strcpy(s->order, "cp-tp-dp-pp"); }
static void b_tp_overlap(pp_strategy *s) { s->overlap_tp = 1, s->tp = 2, s->dp = 8, s->sp = 1, s->filled &= ~PP_FILLED_OVERLAP_TP; }
static void b_dp_overlap(pp_strategy *s) { pp2(s), s->overlap_dp = 1, s->filled &= ~PP_FILLED_OVERLAP_DP; }
static void b_grad32(pp_strategy *s) { s->zero = 2, s->grad_accum_dtype = PP_GRAD_FP32, s->filled &= ~PP_FILLED_GRAD_DTYPE; }
static void b_outputs(pp_strategy *s) { pp2(s), s->buf.free_pipeline_outputs = 1, s->filled &= ~PP_FILLED_OUTPUTS; }
static void b_expandable(pp_strategy *s) { s->buf.expandable_segments = 1, s->filled &= ~PP_FILLED_ALLOCATOR; }
static void b_chunked(pp_strategy *s) { s->loss = PP_LOSS_CHUNKED, s->filled &= ~PP_FILLED_LOSS; }
static void b_megatron(pp_strategy *s) { s->framework = PP_FW_MEGATRON; }
static void b_bf16_states(pp_strategy *s) { s->opt_states = PP_OPT_STATES_BF16; }
static void b_fp8_params(pp_strategy *s)
{
    s->precision = PP_PREC_FP8, s->fp8_param_gather = 1, s->zero = 3, s->filled &= ~PP_FILLED_FP8_PARAMS;
}
static void b_rc_mlp(pp_strategy *s) { s->recompute = PP_RECOMPUTE_SELECTIVE, s->recompute_modules = PP_RC_MLP; }
static void b_fsdp_pp2(pp_strategy *s)
{
    s->framework = PP_FW_FSDP, s->zero = 2, s->sp = s->tp > 1, pp2(s);
    s->filled |= PP_FILLED_OUTPUTS | PP_FILLED_OVERLAP_DP | PP_FILLED_OVERLAP_TP | PP_FILLED_GRAD_DTYPE; /* FSDP's own */
}

#define L3 "llama3-8b"
#define H "dgx-h100"
static rule_case cases[] = {
    {PP_RULE_ORDER, L3, H, 16, PP_FW_MEGATRON, NULL, b_order, -1, 0},
    {PP_RULE_DEGREES, L3, H, 16, PP_FW_MEGATRON, NULL, b_degrees, -1, 0},
    {PP_RULE_GPUS, L3, H, 16, PP_FW_MEGATRON, NULL, b_gpus, -1, 0},
    {PP_RULE_TP_HEADS, L3, H, 16, PP_FW_MEGATRON, NULL, b_tp_heads, -1, 0},
    {PP_RULE_TP_DOMAIN, "llama2-7b", H, 16, PP_FW_MEGATRON, NULL, b_tp16, -1, 8},
    {PP_RULE_PP_LAYERS, L3, H, 16, PP_FW_MEGATRON, NULL, b_pp_layers, -1, 0},
    {PP_RULE_CP_SEQ, L3, H, 16, PP_FW_MEGATRON, NULL, b_cp_seq, -1, 0},
    {PP_RULE_EP_DENSE, L3, H, 16, PP_FW_MEGATRON, NULL, b_ep2, -1, 0},
    {PP_RULE_EP_GROUP, "mixtral-8x7b", H, 16, PP_FW_MEGATRON, NULL, b_ep_group, -1, 0},
    {PP_RULE_BATCH, L3, H, 16, PP_FW_MEGATRON, NULL, b_batch, -1, 0},
    {PP_RULE_SP_TP, L3, H, 16, PP_FW_MEGATRON, NULL, b_sp, -1, 0},
    {PP_RULE_PRECISION, L3, "dgx-a100-80g", 16, PP_FW_MEGATRON, NULL, b_fp8, -1, 0},
    {PP_RULE_ZERO_RANGE, L3, H, 16, PP_FW_MEGATRON, NULL, b_zero4, -1, 0},
    {PP_RULE_SHARD, L3, H, 16, PP_FW_FSDP, NULL, b_shard, -1, 0},
    {PP_RULE_OFFLOAD_ZERO, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_offload0, -1, 0},
    {PP_RULE_NVME, L3, "l40s-8x-eth", 1, PP_FW_DEEPSPEED, one_gpu, b_nvme, -1, 0},
    {PP_RULE_SCHEDULE, L3, H, 16, PP_FW_MEGATRON, NULL, b_sched, -1, 0},
    {PP_RULE_INTERLEAVE_LAYERS, L3, H, 16, PP_FW_MEGATRON, NULL, b_v3, -1, 0},
    {PP_RULE_INTERLEAVE_MICROBATCHES, L3, H, 16, PP_FW_MEGATRON, NULL, b_ga_odd, -1, 0},
    {PP_RULE_SPLIT, L3, H, 16, PP_FW_MEGATRON, NULL, b_split, -1, 0},
    {PP_RULE_RECOMPUTE_LAYERS, L3, H, 16, PP_FW_MEGATRON, NULL, b_rc_layers, -1, 0},
    {PP_RULE_BEHAVIOUR, L3, H, 16, PP_FW_MEGATRON, NULL, b_behaviour, -1, 0},
    {PP_RULE_FINETUNE, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_lora0, -1, 0},
    {PP_RULE_QLORA_PRECISION, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_qlora32, -1, 0},
    {PP_RULE_FW_TP, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_tp2, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_SP, L3, H, 16, PP_FW_FSDP, NULL, b_tp2_nosp, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_PP, L3, H, 1, PP_FW_PYTORCH, one_gpu, b_pp2, PP_FW_DEEPSPEED, 0},
    {PP_RULE_FW_CP, L3, H, 1, PP_FW_PYTORCH, one_gpu, b_cp2, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_CP_COMM, L3, H, 16, PP_FW_FSDP, NULL, b_cp2_a2a, PP_FW_MEGATRON, 0},
    {PP_RULE_ULYSSES_HEADS, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_cp16_a2a, -1, 0},
    {PP_RULE_FW_EP, "mixtral-8x7b", H, 16, PP_FW_FSDP, tp1, b_ep2, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_ZERO, L3, H, 16, PP_FW_MEGATRON, NULL, b_zero2, PP_FW_DEEPSPEED, 0},
    {PP_RULE_FW_ZERO_PP, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_zero2_pp2, PP_FW_FSDP, 0},
    {PP_RULE_FW_SHARD, L3, H, 16, PP_FW_MEGATRON, NULL, b_hybrid, PP_FW_FSDP, 0},
    {PP_RULE_FW_OFFLOAD, L3, H, 16, PP_FW_MEGATRON, NULL, b_offload_opt, PP_FW_DEEPSPEED, 0},
    {PP_RULE_FW_SCHEDULE, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_interleaved, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_PRECISION, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_fp8, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_RECOMPUTE, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_selective, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_PARTIAL_RECOMPUTE, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_partial, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_SPLIT, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_uneven, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_OPTIMIZER, L3, H, 16, PP_FW_MEGATRON, NULL, b_adam8, PP_FW_PYTORCH, 0},
    {PP_RULE_FW_OFFLOAD_OPTIMIZER, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_sgd_offload, PP_FW_FSDP, 0},
    {PP_RULE_FW_FINETUNE, L3, H, 16, PP_FW_MEGATRON, NULL, b_lora, PP_FW_PYTORCH, 0},
    {PP_RULE_FW_ARCH, "bloom-176b", H, 16, PP_FW_DEEPSPEED, tp1, b_megatron, PP_FW_DEEPSPEED, 0},
    {PP_RULE_FW_ORDER, L3, H, 16, PP_FW_MEGATRON, NULL, b_order2, -1, 0},
    {PP_RULE_FW_TP_OVERLAP, L3, H, 16, PP_FW_MEGATRON_DEEPSPEED, NULL, b_tp_overlap, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_DP_OVERLAP, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_dp_overlap, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_GRAD_ACCUM, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_grad32, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_OUTPUTS, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_outputs, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_LOSS, L3, H, 16, PP_FW_MEGATRON, NULL, b_chunked, PP_FW_PYTORCH, 0},
    {PP_RULE_FW_LAUNCHER, "mistral-7b", H, 16, PP_FW_MEGATRON, NULL, b_fsdp_pp2, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_ACT_OFFLOAD, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_act_offload, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_ETP, "mixtral-8x7b", H, 16, PP_FW_MEGATRON_DEEPSPEED, ep2, b_etp1, PP_FW_MEGATRON, 0},
    /* DeepSpeed-MoE under Megatron-DeepSpeed's SP: TP ranks hold different tokens (rt16) */
    {PP_RULE_FW_SP, "mixtral-8x7b", H, 16, PP_FW_MEGATRON_DEEPSPEED, ep2, b_sp_on, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_EP_OVERLAP, "mixtral-8x7b", H, 16, PP_FW_MEGATRON_DEEPSPEED, ep2, b_ep_overlap, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_EP_DISPATCH, "mixtral-8x7b", H, 16, PP_FW_MEGATRON_DEEPSPEED, ep2, b_ep_dispatch, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_ALLOCATOR, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_expandable, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_OPT_STATES, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_bf16_states, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_RC_MODULES, L3, H, 16, PP_FW_DEEPSPEED, tp1, b_rc_mlp, PP_FW_MEGATRON, 0},
    {PP_RULE_FW_FP8_PARAMS, L3, H, 16, PP_FW_FSDP, tp1, b_fp8_params, PP_FW_MEGATRON, 0},
};
#define NCASES (sizeof cases / sizeof *cases)

/* Parameters are case indices: Criterion runs each instance in a new
 * process, where pointers from this one would not hold. */
static size_t case_index[NCASES];

ParameterizedTestParameters(rules, each_rule)
{
    for (size_t i = 0; i < NCASES; i++) case_index[i] = i;
    return cr_make_param_array(size_t, case_index, NCASES);
}

ParameterizedTest(size_t *ki, rules, each_rule)
{
    const rule_case *k = &cases[*ki];
    const pp_rule_info *info = pp_rule_get(k->rule);
    pp_model m = fx_model(k->model);
    pp_cluster c = fx_cluster(k->cluster, 0, k->gpus);
    pp_strategy s, b;
    pp_error e = {""};
    base(k, &s);
    cr_assert_eq(pp_strategy_resolve(&s, &m, &c, &e), PP_OK, "rule %s: the base must pass: %s", info->id, e.msg);
    b = s;
    k->broken(&b);
    pp__rule_ctx x = {&m, &c, &s, k->max_tp};
    cr_assert(pp__rule_eval(&x, k->rule, &e), "rule %s fails on the valid base: %s", info->id, e.msg);
    x.s = &b;
    cr_assert(!pp__rule_eval(&x, k->rule, &e), "rule %s holds on the broken strategy", info->id);
    cr_assert_eq(e.rule, (int)k->rule, "%s: %s", info->id, e.msg);
    cr_assert(e.field[0], "rule %s names no field: %s", info->id, e.msg);
    cr_assert(e.detail > 0 && !strncmp(e.msg, e.field, strlen(e.field)), "%s", e.msg);
    char tag[64];
    snprintf(tag, sizeof tag, "[rule %s]", info->id);
    cr_assert(strstr(e.msg, tag), "%s", e.msg);
    cr_assert(!strstr(e.msg, "--"), "no CLI wording in the library: %s", e.msg);
    if (!k->max_tp) { /* the whole table refuses it too (tp-domain is the search's own limit); resolve
                         does too unless the rule is about launchers */
        pp_strategy r = b;
        pp_error e3 = {""};
        int launch = (pp__rule_deps(k->rule) & PP_DIM_LAUNCH) != 0;
        cr_assert_eq(pp_strategy_resolve(&r, &m, &c, &e3) == PP_OK, launch, "rule %s: resolve %s", info->id, e3.msg);
        pp_error e2 = {""};
        cr_assert_eq(pp_rules_check(&m, &c, &b, &e2), PP_ERR_INPUT, "rule %s", info->id);
    }
    if (k->ok_fw >= 0) {
        b.framework = (pp_framework)k->ok_fw;
        cr_assert(pp__rule_eval(&x, k->rule, &e), "rule %s: %s should allow it: %s", info->id,
                  pp_framework_name(b.framework), e.msg);
    }
}

Test(rules, every_rule_has_a_case)
{
    for (int r = 1; r < PP_RULE_COUNT; r++) {
        int found = 0;
        for (size_t i = 0; i < NCASES; i++) found |= cases[i].rule == (pp_rule)r;
        cr_assert(found, "rule %s has no test case", pp_rule_get((pp_rule)r)->id);
        cr_assert(pp__rule_deps((pp_rule)r), "rule %s reads no dimension", pp_rule_get((pp_rule)r)->id);
    }
}

Test(rules, ids_are_unique)
{
    for (int r = 1; r < PP_RULE_COUNT; r++)
        for (int q = r + 1; q < PP_RULE_COUNT; q++)
            cr_assert(strcmp(pp_rule_get((pp_rule)r)->id, pp_rule_get((pp_rule)q)->id), "%s twice",
                      pp_rule_get((pp_rule)r)->id);
}

/* A resolved strategy resolves to itself, and passes the whole table. */
Test(rules, resolve_is_idempotent)
{
    for (size_t i = 0; i < NCASES; i++) {
        pp_model m = fx_model(cases[i].model);
        pp_cluster c = fx_cluster(cases[i].cluster, 0, cases[i].gpus);
        pp_strategy s, t;
        pp_error e = {""};
        base(&cases[i], &s);
        cr_assert_eq(pp_strategy_resolve(&s, &m, &c, &e), PP_OK, "%s", e.msg);
        t = s;
        cr_assert_eq(pp_strategy_resolve(&t, &m, &c, &e), PP_OK, "%s", e.msg);
        cr_assert(!memcmp(&s, &t, sizeof s), "case %zu: resolving twice changed the strategy", i);
        cr_assert_eq(pp_rules_check(&m, &c, &s, &e), PP_OK, "%s", e.msg);
    }
}

/* Each rule's sentence is written once in the library: grep every source
 * file of the library for it (the table is the one place). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (p) p[n] = '\0';
    fclose(f);
    return p;
}

Test(rules, each_rule_written_once)
{
    static const char *const files[] = {
        "costmodel/rules.c", "costmodel/strategy.c", "costmodel/framework.c", "planner/space.c", "planner/search.c",
        "planner/explain.c", "configs/deepspeed.c", "configs/megatron.c", "configs/deepspeed_read.c",
        "configs/scenario.c", "configs/megatron_read.c", "configs/fsdp_read.c", "configs/hf_args_read.c",
        "configs/launch.c", "cli/cmd_estimate.c", "cli/cmd_plan.c", "cli/cmd_compare.c", "cli/cmd_sweep.c"};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", PARPLAN_SOURCE_DIR, files[f]);
        char *text = slurp(path);
        cr_assert(text, "%s", path);
        for (int r = 1; r < PP_RULE_COUNT; r++) {
            const char *t = pp_rule_get((pp_rule)r)->text;
            int here = strstr(text, t) != NULL;
            cr_assert(here == !strcmp(files[f], "costmodel/rules.c"), "rule %s's sentence in %s",
                      pp_rule_get((pp_rule)r)->id, files[f]);
        }
        free(text);
    }
}

/* A value from the caller's input is quoted in the message with its
 * control characters as '?' (found by fuzz_estimate_request: an "order"
 * holding a carriage return came back raw in the request's JSON error). */
Test(rules, quoted_values_have_no_control_characters)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s;
    pp_strategy_default(&s);
    s.dp = 8;
    snprintf(s.order, sizeof s.order, "\rtp-cp\n\x1b[2J");
    pp_plan p;
    pp_error err = {""};
    cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_ERR_INPUT);
    for (const char *q = err.msg; *q; q++) cr_assert((unsigned char)*q >= 0x20 && *q != 0x7f, "%s", err.msg);
    for (const char *q = err.value; *q; q++) cr_assert((unsigned char)*q >= 0x20 && *q != 0x7f, "%s", err.value);
    cr_expect(strstr(err.msg, "?tp-cp?"), "%s", err.msg);
}

/* Rule r refuses case i of a table, naming the field it says. */
static void refuses_naming(const pp_model *m, const pp_cluster *c, const pp_strategy *b, pp_rule r, const char *field,
                           size_t i)
{
    pp_error e = {""};
    pp__rule_ctx x = {m, c, b, 0};
    cr_assert(!pp__rule_eval(&x, r, &e), "case %zu passes", i);
    cr_assert_str_eq(e.field, field, "%s", e.msg);
}

/* Megatron on 16 H100s: dp 2 x tp 8, the distributed optimizer. */
static void megatron_16(pp_strategy *s)
{
    pp_strategy_default(s);
    s->framework = PP_FW_MEGATRON, s->dp = 2, s->tp = 8, s->zero = 1, s->global_batch = 64, s->seq = 4096;
}

/* bf16 optimizer states (Megatron's precision-aware optimizer): AdamW in the
 * distributed optimizer over bf16 parameters, full training; each other
 * setting fails the rule naming its own field. */
Test(rules, bf16_states_need_adamw_zero1_bf16_params)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 0, 16);
    pp_strategy s;
    pp_error e = {""};
    megatron_16(&s);
    s.opt_states = PP_OPT_STATES_BF16;
    cr_assert_eq(pp_strategy_resolve(&s, &m, &c, &e), PP_OK, "%s", e.msg);
    struct { const char *field; int zero, prec, opt; } bad[] = {
        {"zero", 0, PP_PREC_BF16, PP_OPT_ADAMW}, {"zero", 3, PP_PREC_BF16, PP_OPT_ADAMW},
        {"precision", 1, PP_PREC_FP16, PP_OPT_ADAMW}, {"optimizer", 1, PP_PREC_BF16, PP_OPT_SGD}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pp_strategy b = s;
        b.zero = bad[i].zero, b.precision = (pp_precision)bad[i].prec, b.optimizer = (pp_optimizer)bad[i].opt;
        refuses_naming(&m, &c, &b, PP_RULE_FW_OPT_STATES, bad[i].field, i);
    }
    pp_strategy b = s;
    b.opt_states = 2;
    pp__rule_ctx x = {&m, &c, &b, 0};
    cr_assert(!pp__rule_eval(&x, PP_RULE_FW_OPT_STATES, &e));
    cr_assert(strstr(e.msg, "expected fp32 or bf16"), "%s", e.msg);
}

/* --fp8-param-gather (Megatron-LM d98e8a64dd): fp8 training, the
 * distributed optimizer or Megatron-FSDP, no optimizer offload (but for
 * delayed scaling), full training; each other setting fails the rule naming
 * its field, and the framework's default turns it on exactly where it passes. */
Test(rules, fp8_params_follow_megatrons_asserts)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 0, 16);
    pp_strategy s;
    pp_error e = {""};
    megatron_16(&s);
    s.precision = PP_PREC_FP8;
    cr_assert_eq(pp_strategy_resolve(&s, &m, &c, &e), PP_OK, "%s", e.msg);
    cr_assert_eq(s.fp8_param_gather, 1, "on by default with fp8 and zero 1");
    struct { const char *field; int zero, prec, offload, mode; } bad[] = {
        {"zero", 0, PP_PREC_FP8, PP_OFFLOAD_NONE, PP_MODE_FULL}, {"precision", 1, PP_PREC_BF16, PP_OFFLOAD_NONE, PP_MODE_FULL},
        {"offload", 1, PP_PREC_FP8, PP_OFFLOAD_OPTIMIZER, PP_MODE_FULL}, {"mode", 1, PP_PREC_FP8, PP_OFFLOAD_NONE, PP_MODE_LORA}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pp_strategy b = s;
        b.zero = bad[i].zero, b.precision = (pp_precision)bad[i].prec, b.offload = (pp_offload)bad[i].offload;
        b.ft.mode = (pp_train_mode)bad[i].mode;
        refuses_naming(&m, &c, &b, PP_RULE_FW_FP8_PARAMS, bad[i].field, i);
        /* resolved from the default instead, it is off there */
        b.fp8_param_gather = -1;
        b.filled = 0;
        pp__fw_fill(&b, &c);
        cr_assert_eq(b.fp8_param_gather, 0, "case %zu: the default is off", i);
    }
    pp_strategy b = s;
    b.zero = 3;
    pp__rule_ctx x = {&m, &c, &b, 0};
    cr_assert(pp__rule_eval(&x, PP_RULE_FW_FP8_PARAMS, &e), "Megatron-FSDP takes it: %s", e.msg);
    b.fp8_param_gather = 2;
    cr_assert(!pp__rule_eval(&x, PP_RULE_FW_FP8_PARAMS, &e));
    cr_assert(strstr(e.msg, "expected 0 (off) or 1 (on)"), "%s", e.msg);
}

/* --recompute-modules (transformer_config.py): with selective recompute
 * only; mla_up_proj needs MLA, moe_act experts; bits beyond the five named
 * are refused; mlp on a dense model and layernorm anywhere pass (Megatron
 * accepts them, and where they change nothing parplan prices nothing). */
Test(rules, recompute_modules_follow_megatrons_asserts)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 0, 16);
    pp_strategy s;
    pp_error e = {""};
    megatron_16(&s);
    s.recompute = PP_RECOMPUTE_SELECTIVE, s.recompute_modules = PP_RC_MLP | PP_RC_LAYERNORM;
    cr_assert_eq(pp_strategy_resolve(&s, &m, &c, &e), PP_OK, "%s", e.msg);
    struct { int rc; unsigned mods; const char *want; } bad[] = {
        {PP_RECOMPUTE_NONE, PP_RC_MLP, "expected selective"}, {PP_RECOMPUTE_FULL, PP_RC_MLP, "expected selective"},
        {PP_RECOMPUTE_SELECTIVE, PP_RC_MLA_UP_PROJ, "mla_up_proj needs multi-latent attention"},
        {PP_RECOMPUTE_SELECTIVE, PP_RC_MOE_ACT | PP_RC_MLP, "moe_act needs a mixture-of-experts model"},
        {PP_RECOMPUTE_SELECTIVE, 1u << PP_RC_COUNT, "module bits"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pp_strategy b = s;
        b.recompute = (pp_recompute)bad[i].rc, b.recompute_modules = bad[i].mods;
        pp__rule_ctx x = {&m, &c, &b, 0};
        cr_assert(!pp__rule_eval(&x, PP_RULE_FW_RC_MODULES, &e), "case %zu passes", i);
        cr_expect(strstr(e.msg, bad[i].want) && strstr(e.msg, "[rule fw-recompute-modules]"), "case %zu: %s", i, e.msg);
    }
    pp_model d = fx_model("deepseek-v3");
    pp_strategy b = s;
    b.recompute_modules = PP_RC_MLA_UP_PROJ | PP_RC_MOE_ACT | PP_RC_MLP | PP_RC_LAYERNORM | PP_RC_CORE_ATTN;
    pp__rule_ctx x = {&d, &c, &b, 0};
    cr_expect(pp__rule_eval(&x, PP_RULE_FW_RC_MODULES, &e), "all five on DeepSeek-V3: %s", e.msg);
}

/* Launches that cannot run as priced (red-team round 4): torchtitan builds
 * Adam/AdamW only; Transformer Engine's TP overlap needs NVLink; HybridEP is
 * NVIDIA's. Each refused naming its field; each allowed where it runs. */
Test(rules, launches_the_hardware_and_launcher_can_run)
{
    pp_model m = fx_model("llama3-70b");
    pp_error e = {""};
    /* FSDP with pipeline stages is torchtitan's: AdamW yes, Adafactor no */
    pp_cluster h = fx_cluster("dgx-h100", 0, 16);
    pp_strategy s;
    pp_strategy_default(&s);
    s.framework = PP_FW_FSDP, s.dp = 4, s.pp = 4, s.zero = 2, s.global_batch = 64, s.seq = 4096;
    s.optimizer = PP_OPT_ADAMW;
    pp__rule_ctx x = {&m, &h, &s, 0};
    cr_expect(pp__rule_eval(&x, PP_RULE_FW_LAUNCHER, &e), "%s", e.msg);
    s.optimizer = PP_OPT_ADAFACTOR;
    refuses_naming(&m, &h, &s, PP_RULE_FW_LAUNCHER, "optimizer", 0);
    s.pp = 1, s.dp = 16; /* HF Accelerate launches it: any optimizer */
    cr_expect(pp__rule_eval(&x, PP_RULE_FW_LAUNCHER, &e), "%s", e.msg);
    /* TP overlap: on NVLink yes, on the PCIe L40S box no */
    megatron_16(&s);
    s.sp = 1, s.overlap_tp = 1;
    cr_expect(pp__rule_eval(&x, PP_RULE_FW_TP_OVERLAP, &e), "%s", e.msg);
    pp_cluster l = fx_cluster("l40s-8x-eth", 0, 16);
    s.tp = 2, s.dp = 8;
    refuses_naming(&m, &l, &s, PP_RULE_FW_TP_OVERLAP, "overlap_tp", 1);
    pp_plan p;
    s.overlap_tp = -1; /* left to the framework: off there */
    cr_assert_eq(pp_estimate(&m, &l, &s, &p, &e), PP_OK, "%s", e.msg);
    cr_expect(!p.strategy.overlap_tp);
    /* hierarchical dispatch: DeepSeek-V3 over two nodes of H100 yes, MI300X no */
    pp_model ds = fx_model("deepseek-v3");
    pp_cluster a = fx_cluster("mi300x-8x", 0, 16);
    pp_strategy_default(&s);
    s.framework = PP_FW_MEGATRON, s.dp = 16, s.ep = 16, s.zero = 1, s.global_batch = 64, s.seq = 4096, s.ep_dispatch = 1;
    pp__rule_ctx y = {&ds, &h, &s, 0};
    cr_expect(pp__rule_eval(&y, PP_RULE_FW_EP_DISPATCH, &e), "%s", e.msg);
    refuses_naming(&ds, &a, &s, PP_RULE_FW_EP_DISPATCH, "ep_dispatch", 2);
}

/* Causal load balancing: two chunks a CP rank (Megatron asserts seq % (2 cp)
 * == 0; TE's ring and torch's load balancer need the same); Ulysses
 * (DeepSpeed) splits the sequence once. 131000 tokens: 8 divides, 16 not. */
Test(rules, cp_needs_two_chunks_a_rank_with_load_balancing)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster h = fx_cluster("dgx-h100", 0, 8);
    pp_error e = {""};
    pp_strategy s;
    pp_strategy_default(&s);
    s.cp = 8, s.seq = 131000, s.global_batch = 8;
    static const pp_framework two[] = {PP_FW_MEGATRON, PP_FW_FSDP};
    for (size_t i = 0; i < 2; i++) {
        s.framework = two[i];
        refuses_naming(&m, &h, &s, PP_RULE_CP_SEQ, "cp", i);
    }
    s.framework = PP_FW_DEEPSPEED;
    pp__rule_ctx x = {&m, &h, &s, 0};
    cr_expect(pp__rule_eval(&x, PP_RULE_CP_SEQ, &e), "%s", e.msg);
    s.framework = PP_FW_MEGATRON, s.seq = 131072;
    cr_expect(pp__rule_eval(&x, PP_RULE_CP_SEQ, &e), "%s", e.msg);
}
