/*
 * test_deepspeed.c — ds_config.json written and read back (configs/deepspeed.c,
 * configs/deepspeed_read.c) against DeepSpeed v0.14.5's documented rules
 * (tests/reference/deepspeed_config.md, section numbers below):
 *   (a) value checks: batch arithmetic with DP = GPUs/(tp*pp*cp), key names
 *       and types, stage-specific keys, buckets equal to pp_buffers;
 *   (b) golden files (tests/golden/deepspeed/NAME.json; PARPLAN_UPDATE_GOLDEN=1
 *       rewrites them);
 *   (c) refusals with their reasons;
 *   (d) reading users' configs: §3's fill-in table and its failures, "auto",
 *       unknown keys, wrappers (tests/golden/deepspeed/read/);
 *   (e) properties over thousands of strategies: each is refused with a
 *       reason or emits a config that passes an independent rule checker
 *       and reads back to the same strategy and the same plan;
 *   (f) atomic writes and the CLI's --emit-deepspeed / --deepspeed / --force.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parplan.h"
#include "tests/fixtures.h"

#define GOLDEN PARPLAN_SOURCE_DIR "/tests/golden/deepspeed"

/* ------------------------------------------------------------ fixtures */

static pp_strategy base(const pp_model *m, const pp_cluster *c, int tp, int pp, int cp)
{
    pp_strategy s;
    pp_strategy_default(&s);
    s.tp = tp;
    s.pp = pp;
    s.cp = cp;
    s.dp = pp_cluster_gpus(c) / (tp * pp * cp);
    s.seq = m->seq > 4096 ? 4096 : m->seq;
    s.micro_batch = 1;
    s.global_batch = s.dp * 8;
    return s;
}

static pp_plan *estimate(const pp_model *m, const pp_cluster *c, const pp_strategy *s)
{
    pp_plan *p = malloc(sizeof *p);
    cr_assert(p);
    pp_error err = {""};
    pp_status st = pp_estimate(m, c, s, p, &err);
    cr_assert_eq(st, PP_OK, "estimate: %s", err.msg);
    return p;
}

/* Adapts s for DeepSpeed, estimates it and returns the ds_config.json text. */
static char *emit(const pp_model *m, const pp_cluster *c, pp_strategy *s, const pp_deepspeed_opts *o,
                  pp_notes *notes)
{
    pp_error err = {""};
    cr_assert_eq(pp_deepspeed_adapt(m, c, s, notes, &err), PP_OK, "adapt: %s", err.msg);
    pp_plan *p = estimate(m, c, s);
    *s = p->strategy;
    char *text = NULL;
    pp_status st = pp_deepspeed_to_string(m, c, p, o, &text, notes, &err);
    cr_assert_eq(st, PP_OK, "to_string: %s", err.msg);
    free(p);
    return text;
}

static int has_note(const pp_notes *n, const char *needle)
{
    for (int i = 0; i < n->n; i++)
        if (strstr(n->line[i], needle)) return 1;
    return 0;
}

/* ------------------------------------------- an independent rule checker */

static const char *const top_known[] = {
    "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "gradient_clipping", "fp16",
    "bf16", "data_types", "zero_optimization", "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer",
    "activation_checkpointing", "pipeline", "optimizer", "scheduler", NULL};
/* §4, v0.14.5 (0.16-only keys deliberately absent) */
static const char *const zero_known[] = {
    "stage", "contiguous_gradients", "reduce_scatter", "reduce_bucket_size", "allgather_partitions",
    "allgather_bucket_size", "overlap_comm", "offload_param", "offload_optimizer", "sub_group_size",
    "stage3_prefetch_bucket_size", "stage3_param_persistence_threshold", "stage3_max_live_parameters",
    "stage3_max_reuse_distance", "stage3_gather_16bit_weights_on_model_save", NULL};
static const char *const offload_opt_known[] = {"device", "nvme_path", "buffer_count", "pin_memory", "pipeline_read",
                                                "pipeline_write", "fast_init", "ratio", NULL};
static const char *const offload_par_known[] = {"device", "nvme_path", "buffer_count", "buffer_size", "max_in_cpu",
                                                "pin_memory", NULL};
static const char *const fp16_known[] = {"enabled", "loss_scale", "initial_scale_power", "loss_scale_window",
                                         "hysteresis", "min_loss_scale", NULL};
static const char *const ac_known[] = {"partition_activations", "contiguous_memory_optimization", "number_checkpoints",
                                       "cpu_checkpointing", NULL};
static const char *const pipe_known[] = {"activation_checkpoint_interval", "pipe_partitioned", "grad_partitioned",
                                         NULL};

static int listed(const char *s, const char *const *l)
{
    for (; *l; l++)
        if (!strcmp(s, *l)) return 1;
    return 0;
}

static void keys_within(const cJSON *o, const char *const *known, const char *where, const char *ctx)
{
    cr_assert(cJSON_IsObject(o), "%s: %s is not an object", ctx, where);
    for (const cJSON *it = o->child; it; it = it->next) {
        cr_assert(listed(it->string, known), "%s: %s.%s is not a key DeepSpeed 0.14.5 reads here", ctx, where,
                  it->string);
        for (const cJSON *jt = it->next; jt; jt = jt->next)
            cr_assert(strcmp(it->string, jt->string), "%s: duplicate key %s", ctx, it->string);
    }
}

static void no_auto(const cJSON *v, const char *ctx)
{
    if (cJSON_IsString(v)) cr_assert(strcmp(v->valuestring, "auto"), "%s: \"auto\" emitted", ctx);
    for (const cJSON *it = v->child; it; it = it->next) no_auto(it, ctx);
}

static long int_of(const cJSON *o, const char *key, const char *ctx)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsNumber(v), "%s: %s missing or not a number", ctx, key);
    cr_assert(v->valuedouble == floor(v->valuedouble), "%s: %s = %g is not an integer", ctx, key, v->valuedouble);
    return (long)v->valuedouble;
}

static int bool_of(const cJSON *o, const char *key, const char *ctx)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsBool(v), "%s: %s missing or not a boolean", ctx, key);
    return cJSON_IsTrue(v);
}

/* Checks one emitted config against DeepSpeed's rules for strategy s. */
static void ds_rules(const char *text, const pp_strategy *s, const pp_cluster *c, const char *ctx)
{
    cJSON *j = cJSON_Parse(text);
    cr_assert(cJSON_IsObject(j), "%s: not a JSON object", ctx);
    keys_within(j, top_known, "$", ctx);
    no_auto(j, ctx);
    /* §3: all three integers, TB = MB * GAS * DP, DP = GPUs / (tp*pp*cp) */
    long tb = int_of(j, "train_batch_size", ctx), mb = int_of(j, "train_micro_batch_size_per_gpu", ctx);
    long gas = int_of(j, "gradient_accumulation_steps", ctx);
    long dp = pp_cluster_gpus(c) / ((long)s->tp * s->pp * s->cp);
    cr_assert(tb > 0 && mb > 0 && gas > 0, "%s: batch keys must be > 0", ctx);
    cr_assert_eq(tb, mb * gas * dp, "%s: %ld != %ld * %ld * %ld", ctx, tb, mb, gas, dp);
    cr_assert_eq(tb, s->global_batch, "%s", ctx);
    cr_assert_eq(mb, s->micro_batch, "%s", ctx);
    /* §5: exactly one 16-bit mode, loss scaling only under fp16 */
    const cJSON *bf = cJSON_GetObjectItemCaseSensitive(j, "bf16"), *fp = cJSON_GetObjectItemCaseSensitive(j, "fp16");
    cr_assert(!(bf && fp), "%s: both bf16 and fp16 blocks", ctx);
    if (s->precision == PP_PREC_BF16 || s->precision == PP_PREC_FP8) {
        keys_within(bf, (const char *const[]){"enabled", NULL}, "bf16", ctx);
        cr_assert(bool_of(bf, "enabled", ctx), "%s", ctx);
    } else if (s->precision == PP_PREC_FP16) {
        keys_within(fp, fp16_known, "fp16", ctx);
        cr_assert(bool_of(fp, "enabled", ctx), "%s", ctx);
        cr_assert_eq(int_of(fp, "loss_scale", ctx), 0, "%s: dynamic loss scaling expected", ctx);
    } else {
        cr_assert(!bf && !fp, "%s: fp32 plan with a 16-bit block", ctx);
    }
    /* §4 */
    const cJSON *z = cJSON_GetObjectItemCaseSensitive(j, "zero_optimization");
    keys_within(z, zero_known, "zero_optimization", ctx);
    long stage = int_of(z, "stage", ctx);
    cr_assert(stage >= 0 && stage <= 3, "%s", ctx);
    if (s->pp > 1) cr_assert(stage <= 1, "%s: ZeRO-%ld with pipeline parallelism", ctx, stage);
    const cJSON *oo = cJSON_GetObjectItemCaseSensitive(z, "offload_optimizer");
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(z, "offload_param");
    if (stage < 3) {
        cr_assert(!op, "%s: offload_param below stage 3 is ignored by DeepSpeed", ctx);
        for (const cJSON *it = z->child; it; it = it->next)
            cr_assert(strncmp(it->string, "stage3_", 7), "%s: %s at stage %ld", ctx, it->string, stage);
    }
    if (stage == 0) cr_assert(!oo, "%s: offload_optimizer at stage 0 is ignored", ctx);
    if (stage == 3) cr_assert(!cJSON_GetObjectItemCaseSensitive(z, "allgather_bucket_size"), "%s: unused at 3", ctx);
    for (int k = 0; k < 2; k++) {
        const cJSON *o = k ? op : oo;
        if (!o) continue;
        keys_within(o, k ? offload_par_known : offload_opt_known, k ? "offload_param" : "offload_optimizer", ctx);
        const cJSON *dev = cJSON_GetObjectItemCaseSensitive(o, "device");
        cr_assert(cJSON_IsString(dev) && (!strcmp(dev->valuestring, "cpu") || !strcmp(dev->valuestring, "nvme")), "%s",
                  ctx);
        if (!strcmp(dev->valuestring, "nvme")) {
            const cJSON *np = cJSON_GetObjectItemCaseSensitive(o, "nvme_path");
            cr_assert(cJSON_IsString(np) && np->valuestring[0], "%s: nvme without nvme_path", ctx);
        }
    }
    /* buckets: the memory model's values (one source of truth) */
    if (stage >= 1) {
        cr_assert_eq(int_of(z, "reduce_bucket_size", ctx), (long)s->buf.reduce_bucket, "%s", ctx);
        if (s->pp > 1) cr_assert(!bool_of(z, "overlap_comm", ctx), "%s: overlap under PipelineEngine", ctx);
    }
    if (stage == 1 || stage == 2)
        cr_assert_eq(int_of(z, "allgather_bucket_size", ctx), (long)s->buf.allgather_bucket, "%s", ctx);
    if (stage == 3) {
        cr_assert_eq(int_of(z, "stage3_prefetch_bucket_size", ctx), (long)s->buf.prefetch_bucket, "%s", ctx);
        cr_assert_eq(int_of(z, "stage3_max_live_parameters", ctx), (long)s->buf.max_live_params, "%s", ctx);
        cr_assert_eq(int_of(z, "stage3_param_persistence_threshold", ctx), (long)s->buf.param_persistence, "%s", ctx);
    }
    /* data_types: only "fp32", only without the ZeRO optimizer (BF16_Optimizer) */
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(j, "data_types");
    if (dt) {
        keys_within(dt, (const char *const[]){"grad_accum_dtype", NULL}, "data_types", ctx);
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(dt, "grad_accum_dtype")->valuestring, "fp32", "%s", ctx);
        cr_assert(bf && stage == 0, "%s: fp32 accumulation is used only by BF16_Optimizer", ctx);
    }
    if (bf && stage == 0) cr_assert(dt, "%s: bf16 without ZeRO must say fp32 accumulation", ctx);
    /* §6, §7 */
    const cJSON *ac = cJSON_GetObjectItemCaseSensitive(j, "activation_checkpointing");
    cr_assert_eq(ac != NULL, s->recompute == PP_RECOMPUTE_FULL, "%s: activation_checkpointing vs recompute", ctx);
    if (ac) keys_within(ac, ac_known, "activation_checkpointing", ctx);
    const cJSON *pipe = cJSON_GetObjectItemCaseSensitive(j, "pipeline");
    cr_assert_eq(pipe != NULL, s->pp > 1, "%s: pipeline block iff pp > 1", ctx);
    if (pipe) {
        keys_within(pipe, pipe_known, "pipeline", ctx);
        cr_assert_eq(int_of(pipe, "activation_checkpoint_interval", ctx), s->recompute == PP_RECOMPUTE_FULL, "%s", ctx);
        bool_of(pipe, "pipe_partitioned", ctx);
        bool_of(pipe, "grad_partitioned", ctx);
    }
    /* §8 */
    const cJSON *gc = cJSON_GetObjectItemCaseSensitive(j, "gradient_clipping");
    cr_assert(cJSON_IsNumber(gc) && gc->valuedouble >= 0, "%s: gradient_clipping", ctx);
    const cJSON *opt = cJSON_GetObjectItemCaseSensitive(j, "optimizer");
    if (opt) {
        const char *t = cJSON_GetObjectItemCaseSensitive(opt, "type")->valuestring;
        cr_assert(listed(t, (const char *const[]){"AdamW", "SGD", "Lion", "Adagrad", "RMSprop", NULL}), "%s: %s", ctx, t);
        const cJSON *par = cJSON_GetObjectItemCaseSensitive(opt, "params");
        cr_assert(!cJSON_GetObjectItemCaseSensitive(par, "max_grad_norm"), "%s", ctx);
        int supported = listed(t, (const char *const[]){"AdamW", "Lion", "Adagrad", NULL});
        if (stage >= 1 && !supported)
            cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "zero_allow_untested_optimizer")), "%s", ctx);
    }
    const cJSON *sch = cJSON_GetObjectItemCaseSensitive(j, "scheduler");
    if (sch) {
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(sch, "type")->valuestring, "WarmupDecayLR", "%s", ctx);
        const cJSON *par = cJSON_GetObjectItemCaseSensitive(sch, "params");
        cr_assert(int_of(par, "total_num_steps", ctx) >= int_of(par, "warmup_num_steps", ctx), "%s", ctx);
    }
    cJSON_Delete(j);
}

/* --------------------------------------------------------- (a) values */

TestSuite(deepspeed_values);

Test(deepspeed_values, batch_rule_uses_the_data_parallel_size)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 4, 0); /* 32 GPUs */
    pp_strategy s = base(&m, &c, 1, 1, 8); /* DP = 32 / 8 = 4, not 32 (Ulysses runs with tp 1, pp 1) */
    s.zero = 1;
    s.micro_batch = 2;
    s.global_batch = 64; /* GAS = 64 / (2 * 4) = 8 */
    pp_notes n = {0};
    pp_deepspeed_opts o;
    pp_deepspeed_opts_default(&o);
    char *t = emit(&m, &c, &s, &o, &n);
    cJSON *j = cJSON_Parse(t);
    cr_assert_eq(cJSON_GetObjectItem(j, "train_batch_size")->valueint, 64);
    cr_assert_eq(cJSON_GetObjectItem(j, "train_micro_batch_size_per_gpu")->valueint, 2);
    cr_assert_eq(cJSON_GetObjectItem(j, "gradient_accumulation_steps")->valueint, 8);
    cr_assert(has_note(&n, "Ulysses"), "cp is DeepSpeed-Ulysses for the batch rule");
    ds_rules(t, &s, &c, "batch rule");
    cJSON_Delete(j);
    pp_free(t);
}

Test(deepspeed_values, buckets_are_the_memory_models)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = base(&m, &c, 1, 1, 1);
    s.zero = 2;
    s.buf.reduce_bucket = 2e8;
    s.buf.allgather_bucket = 3e8;
    pp_deepspeed_opts o;
    pp_deepspeed_opts_default(&o);
    pp_notes n = {0};
    char *t = emit(&m, &c, &s, &o, &n);
    cr_assert(strstr(t, "\"reduce_bucket_size\": 200000000"), "%s", t);
    cr_assert(strstr(t, "\"allgather_bucket_size\": 300000000"), "%s", t);
    cr_assert(!strstr(t, "stage3_"), "no stage-3 keys at stage 2");
    pp_free(t);
    s = base(&m, &c, 1, 1, 1);
    s.zero = 3;
    s.buf.prefetch_bucket = 1e7;
    s.buf.max_live_params = 3e8;
    s.buf.param_persistence = 1e4;
    t = emit(&m, &c, &s, &o, &n);
    cr_assert(strstr(t, "\"stage3_prefetch_bucket_size\": 10000000"), "%s", t);
    cr_assert(strstr(t, "\"stage3_max_live_parameters\": 300000000"), "%s", t);
    cr_assert(strstr(t, "\"stage3_param_persistence_threshold\": 10000"), "%s", t);
    cr_assert(!strstr(t, "allgather_bucket_size"), "not read at stage 3");
    ds_rules(t, &s, &c, "stage 3 buckets");
    pp_free(t);
}

Test(deepspeed_values, fp16_block_and_hyper_parameters)
{
    pp_model m = fx_model("gpt3-1.3b");
    pp_cluster c = fx_cluster("dgx-a100-80g", 1, 0);
    pp_strategy s = base(&m, &c, 1, 1, 1);
    s.precision = PP_PREC_FP16;
    s.zero = 2;
    pp_deepspeed_opts o;
    pp_deepspeed_opts_default(&o);
    o.hp.lr = 2e-4;
    o.hp.beta2 = 0.999;
    o.hp.initial_scale_power = 12;
    o.hp.warmup_steps = 375;
    o.hp.total_steps = 10000;
    o.hp.gradient_clipping = 0.5;
    pp_notes n = {0};
    char *t = emit(&m, &c, &s, &o, &n);
    cJSON *j = cJSON_Parse(t);
    cJSON *f = cJSON_GetObjectItem(j, "fp16");
    cr_assert_eq(cJSON_GetObjectItem(f, "initial_scale_power")->valueint, 12);
    cr_assert_eq(cJSON_GetObjectItem(f, "loss_scale")->valueint, 0);
    cr_assert_eq(cJSON_GetObjectItem(f, "loss_scale_window")->valueint, 1000);
    cr_assert_eq(cJSON_GetObjectItem(f, "hysteresis")->valueint, 2);
    cr_assert_eq(cJSON_GetObjectItem(f, "min_loss_scale")->valuedouble, 1);
    cr_assert_eq(cJSON_GetObjectItem(j, "gradient_clipping")->valuedouble, 0.5);
    cJSON *p = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "optimizer"), "params");
    cr_assert_eq(cJSON_GetObjectItem(p, "lr")->valuedouble, 2e-4);
    cr_assert_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(p, "betas"), 1)->valuedouble, 0.999);
    cJSON *sp = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "scheduler"), "params");
    cr_assert_eq(cJSON_GetObjectItem(sp, "warmup_num_steps")->valueint, 375);
    cr_assert_eq(cJSON_GetObjectItem(sp, "total_num_steps")->valueint, 10000);
    cr_assert_eq(cJSON_GetObjectItem(sp, "warmup_max_lr")->valuedouble, 2e-4);
    cr_assert(!cJSON_GetObjectItem(j, "bf16"));
    ds_rules(t, &s, &c, "fp16");
    cJSON_Delete(j);
    pp_free(t);
}

Test(deepspeed_values, bf16_without_zero_is_bf16_optimizer)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = base(&m, &c, 1, 1, 1);
    pp_notes n = {0};
    pp_deepspeed_opts o;
    pp_deepspeed_opts_default(&o);
    char *t = emit(&m, &c, &s, &o, &n);
    cr_assert_eq(s.zero, 0, "ZeRO-0, as written");
    cr_assert_eq(s.grad_accum_dtype, PP_GRAD_16_FP32, "BF16_Optimizer accumulates in fp32");
    cr_assert_eq(s.overlap_dp, 0);
    cr_assert(has_note(&n, "BF16_Optimizer"));
    cr_assert(strstr(t, "\"stage\": 0") && strstr(t, "\"grad_accum_dtype\": \"fp32\""), "%s", t);
    ds_rules(t, &s, &c, "bf16 optimizer");
    pp_free(t);
}

/* DeepSpeed has no fp8 switch: its plans train in bf16; fp8 is megatron's or
 * fsdp's (Transformer Engine, torchao). */
Test(deepspeed_values, fp8_is_not_a_deepspeed_precision)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = base(&m, &c, 1, 1, 1);
    s.precision = PP_PREC_FP8;
    s.zero = 1;
    pp_notes n = {0};
    pp_error err = {""};
    cr_assert_eq(pp_deepspeed_adapt(&m, &c, &s, &n, &err), PP_ERR_INPUT);
    cr_assert_eq(err.rule, PP_RULE_FW_PRECISION, "%s", err.msg);
    cr_assert(strstr(err.msg, "megatron") && strstr(err.msg, "fsdp"), "names who can: %s", err.msg);
}

Test(deepspeed_values, offload_and_optimizer_rules)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_deepspeed_opts o;
    pp_deepspeed_opts_default(&o);
    pp_notes n = {0};
    pp_strategy s = base(&m, &c, 1, 1, 1);
    s.zero = 2;
    s.offload = PP_OFFLOAD_OPTIMIZER;
    char *t = emit(&m, &c, &s, &o, &n);
    cr_assert(strstr(t, "\"offload_optimizer\"") && !strstr(t, "offload_param"), "%s", t);
    pp_free(t);
    s = base(&m, &c, 1, 1, 1);
    s.zero = 3;
    s.offload = PP_OFFLOAD_NVME;
    snprintf(o.nvme_path, sizeof o.nvme_path, "/local_nvme");
    t = emit(&m, &c, &s, &o, &n);
    cr_assert(strstr(t, "\"offload_param\"") && strstr(t, "\"nvme_path\": \"/local_nvme\""), "%s", t);
    ds_rules(t, &s, &c, "nvme");
    pp_free(t);
    /* SGD under ZeRO needs the untested-optimizer switch; adam8bit is passed by the script */
    o.nvme_path[0] = '\0';
    s = base(&m, &c, 1, 1, 1);
    s.zero = 1;
    s.optimizer = PP_OPT_SGD;
    t = emit(&m, &c, &s, &o, &n);
    cr_assert(strstr(t, "\"zero_allow_untested_optimizer\": true") && strstr(t, "\"type\": \"SGD\""), "%s", t);
    pp_free(t);
    s.optimizer = PP_OPT_ADAM8BIT;
    n.n = 0;
    t = emit(&m, &c, &s, &o, &n);
    cr_assert(!strstr(t, "\"optimizer\"") && strstr(t, "\"scheduler\""), "%s", t);
    cr_assert(has_note(&n, "deepspeed.initialize(optimizer=...)"));
    pp_free(t);
}

/* ------------------------------------------------------------ (b) golden */

typedef struct golden {
    const char *file, *model, *cluster;
    int nodes, tp, pp, cp, zero, micro, global;
    pp_precision prec;
    pp_offload off;
    pp_recompute rec;
    double reduce_bucket; /* 0 = default */
} golden;

static const golden goldens[] = {
    {"zero3_offload_full_recompute", "llama3-8b", "dgx-h100", 1, 1, 1, 1, 3, 2, 64, PP_PREC_BF16,
     PP_OFFLOAD_OPTIMIZER, PP_RECOMPUTE_FULL, 0},
    {"zero1_tp8_pp4_pipeline", "llama3-70b", "dgx-h100", 8, 8, 4, 1, 1, 1, 256, PP_PREC_BF16, PP_OFFLOAD_NONE,
     PP_RECOMPUTE_FULL, 0},
    {"fp16_zero2_custom_buckets", "gpt3-1.3b", "dgx-a100-80g", 2, 2, 1, 1, 2, 4, 512, PP_PREC_FP16, PP_OFFLOAD_NONE,
     PP_RECOMPUTE_SELECTIVE, 2e8},
    {"bf16_no_zero_bf16_optimizer", "llama3-8b", "dgx-h100", 2, 2, 2, 1, 0, 1, 64, PP_PREC_BF16, PP_OFFLOAD_NONE,
     PP_RECOMPUTE_NONE, 0},
    {"zero3_nvme_bf16", "llama3-70b", "dgx-h100", 2, 1, 1, 1, 3, 1, 64, PP_PREC_BF16, PP_OFFLOAD_NVME,
     PP_RECOMPUTE_FULL, 0},
    {"mixtral_ep_zero1_cp2", "mixtral-8x7b", "dgx-h100", 4, 1, 1, 2, 1, 1, 64, PP_PREC_BF16, PP_OFFLOAD_NONE,
     PP_RECOMPUTE_FULL, 0},
};

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    cr_assert(b);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    fclose(f);
    return b;
}

TestSuite(deepspeed_golden);

Test(deepspeed_golden, files_match)
{
    int update = getenv("PARPLAN_UPDATE_GOLDEN") != NULL;
    for (size_t i = 0; i < sizeof goldens / sizeof *goldens; i++) {
        const golden *g = &goldens[i];
        pp_model m = fx_model(g->model);
        pp_cluster c = fx_cluster(g->cluster, g->nodes, 0);
        pp_strategy s = base(&m, &c, g->tp, g->pp, g->cp);
        s.zero = g->zero;
        s.micro_batch = g->micro;
        s.global_batch = g->global;
        s.precision = g->prec;
        s.offload = g->off;
        s.recompute = g->rec;
        if (m.experts) s.ep = 4;
        if (g->reduce_bucket > 0) s.buf.reduce_bucket = g->reduce_bucket;
        pp_deepspeed_opts o;
        pp_deepspeed_opts_default(&o);
        if (g->off == PP_OFFLOAD_NVME) snprintf(o.nvme_path, sizeof o.nvme_path, "/local_nvme");
        pp_notes n = {0};
        char *t = emit(&m, &c, &s, &o, &n);
        ds_rules(t, &s, &c, g->file);
        char path[512];
        snprintf(path, sizeof path, "%s/%s.json", GOLDEN, g->file);
        if (update) {
            FILE *f = fopen(path, "w");
            cr_assert(f, "cannot write %s", path);
            fputs(t, f);
            fclose(f);
        }
        char *want = slurp(path);
        cr_assert(want, "missing golden %s (run with PARPLAN_UPDATE_GOLDEN=1)", path);
        cr_assert_str_eq(t, want, "%s differs from the writer's output:\n%s", path, t);
        free(want);
        pp_free(t);
    }
}

/* ------------------------------------------------------------ (c) refusals */

TestSuite(deepspeed_refuse);

static void refused(const pp_model *m, const pp_cluster *c, pp_strategy s, const pp_deepspeed_opts *o,
                    const char *needle)
{
    pp_error err = {""};
    pp_notes n = {0};
    pp_status st = pp_deepspeed_adapt(m, c, &s, &n, &err);
    if (st == PP_OK) st = pp_deepspeed_check(m, c, &s, o, &err);
    cr_assert_eq(st, PP_ERR_INPUT, "expected a refusal containing '%s'", needle);
    cr_assert(strstr(err.msg, needle), "refusal '%s' lacks '%s'", err.msg, needle);
    /* the writer refuses the same way and writes nothing */
    pp_plan *p = malloc(sizeof *p);
    if (pp_estimate(m, c, &s, p, &err) == PP_OK) {
        char path[] = "/tmp/parplan-refused-XXXXXX";
        int fd = mkstemp(path);
        close(fd);
        unlink(path);
        cr_assert_eq(pp_deepspeed_write(m, c, p, o, path, 0, &n, &err), PP_ERR_INPUT);
        cr_assert_eq(access(path, F_OK), -1, "a refused config must not be written");
    }
    free(p);
}

Test(deepspeed_refuse, deepspeed_cannot_run_these)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 2, 0);
    pp_deepspeed_opts o;
    pp_deepspeed_opts_default(&o);
    pp_strategy s = base(&m, &c, 1, 2, 1);
    s.zero = 2;
    refused(&m, &c, s, &o, "incompatible with pipeline parallelism");
    s.zero = 3;
    refused(&m, &c, s, &o, "incompatible with pipeline parallelism");
    s = base(&m, &c, 1, 2, 1);
    s.zero = 1;
    s.schedule = PP_SCHED_INTERLEAVED;
    s.virtual_stages = 2;
    s.global_batch = s.dp * 8;
    refused(&m, &c, s, &o, "[rule fw-schedule]");
    s = base(&m, &c, 1, 2, 1);
    s.zero = 1;
    s.recompute = PP_RECOMPUTE_FULL;
    s.recompute_layers = 4;
    refused(&m, &c, s, &o, "[rule fw-partial-recompute]");
    s = base(&m, &c, 1, 1, 1);
    s.zero = 3;
    s.offload = PP_OFFLOAD_NVME;
    refused(&m, &c, s, &o, "nvme_path");
    s = base(&m, &c, 1, 1, 1);
    s.zero = 2;
    s.offload = PP_OFFLOAD_OPTIMIZER;
    s.optimizer = PP_OPT_ADAM8BIT;
    refused(&m, &c, s, &o, "bitsandbytes");
    s = base(&m, &c, 2, 1, 2);
    s.sp = 1;
    refused(&m, &c, s, &o, "Ulysses");
    s = base(&m, &c, 1, 1, 16); /* 8 KV heads over tp*cp = 16 */
    refused(&m, &c, s, &o, "kv_heads");
    o.hp.warmup_steps = o.hp.total_steps + 1;
    s = base(&m, &c, 1, 1, 1);
    s.zero = 1;
    refused(&m, &c, s, &o, "warmup steps");
}

/* check refuses a plan DeepSpeed would run differently (16-bit accumulation
 * without ZeRO: DeepSpeed runs bf16 there through BF16_Optimizer, fp32
 * accumulation); adapt hands the choice back to DeepSpeed, once. */
Test(deepspeed_refuse, check_refuses_what_adapt_would_change)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = base(&m, &c, 1, 1, 1);
    s.framework = PP_FW_DEEPSPEED;
    s.grad_accum_dtype = PP_GRAD_16;
    pp_error err = {""};
    cr_assert_eq(pp_deepspeed_check(&m, &c, &s, NULL, &err), PP_ERR_INPUT);
    cr_assert(strstr(err.msg, "BF16_Optimizer") && err.rule == PP_RULE_FW_GRAD_ACCUM, "%s", err.msg);
    pp_notes n = {0};
    cr_assert_eq(pp_deepspeed_adapt(&m, &c, &s, &n, &err), PP_OK);
    cr_assert(has_note(&n, "16bit -> 16bit+fp32"), "%s", n.n ? n.line[0] : "no note");
    cr_assert_eq(pp_deepspeed_check(&m, &c, &s, NULL, &err), PP_OK, "%s", err.msg);
    pp_notes again = {0};
    pp_strategy t = s;
    cr_assert_eq(pp_deepspeed_adapt(&m, &c, &t, &again, &err), PP_OK);
    cr_assert_eq(again.n, 0, "adapt is idempotent: %s", again.n ? again.line[0] : "");
}

/* --------------------------------------------------------------- (d) read */

TestSuite(deepspeed_read);

typedef struct readcase {
    pp_status st;
    pp_strategy s;
    pp_deepspeed_opts o;
    pp_notes warn;
    pp_error err;
} readcase;

static readcase *read_text(const char *text, const char *model_name, const char *cluster_name, int nodes, int tp,
                           int pp, int cp)
{
    readcase *r = calloc(1, sizeof *r);
    cr_assert(r);
    pp_model m = fx_model(model_name);
    pp_cluster c = fx_cluster(cluster_name, nodes, 0);
    r->s = base(&m, &c, tp, pp, cp);
    r->st = pp_deepspeed_parse(text, strlen(text), "ds.json", &m, &c, &r->s, &r->o, &r->warn, &r->err);
    return r;
}

static readcase *read_file(const char *name, const char *model_name, const char *cluster_name, int nodes, int tp,
                           int pp)
{
    char path[512];
    snprintf(path, sizeof path, "%s/read/%s", GOLDEN, name);
    char *t = slurp(path);
    cr_assert(t, "missing %s", path);
    readcase *r = read_text(t, model_name, cluster_name, nodes, tp, pp, 1);
    free(t);
    return r;
}

static void read_fails(readcase *r, const char *n1, const char *n2)
{
    cr_assert_eq(r->st, PP_ERR_INPUT, "expected an error with '%s'", n1);
    cr_assert(strstr(r->err.msg, n1) && (!n2 || strstr(r->err.msg, n2)), "'%s' lacks '%s' / '%s'", r->err.msg, n1,
              n2 ? n2 : "");
    free(r);
}

static int warned(const readcase *r, const char *needle) { return has_note(&r->warn, needle); }

/* All three batch keys fix DeepSpeed's data-parallel size: 64 = 1 x 16 x 4
 * on 8 GPUs leaves 2 ranks per data-parallel rank, which only Ulysses (cp
 * 2; its mpu reports dp = world/(tp*pp*sp)) explains. 64 = 1 x 24 x ...
 * has no whole data-parallel size and stays DeepSpeed's batch error. */
Test(deepspeed_read, ulysses_degree_from_the_batch_keys)
{
    readcase *r = read_text("{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 1, "
                            "\"gradient_accumulation_steps\": 16}", "llama3-8b", "dgx-h100", 1, 1, 1, 1);
    cr_assert_eq(r->st, PP_OK, "%s", r->err.msg);
    cr_expect_eq(r->s.cp, 2);
    cr_expect_eq(r->s.dp, 4);
    cr_expect(warned(r, "Ulysses"), "the inference is said");
    free(r);
    read_fails(read_text("{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 1, "
                         "\"gradient_accumulation_steps\": 24}", "llama3-8b", "dgx-h100", 1, 1, 1, 1),
               "train_batch_size is not equal", NULL);
    /* --cp given: the file must agree with it */
    read_fails(read_text("{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 1, "
                         "\"gradient_accumulation_steps\": 32}", "llama3-8b", "dgx-h100", 1, 1, 1, 2),
               "train_batch_size is not equal", NULL);
}

/* §3's table, with DP = 8 (8 GPUs, tp 1) */
Test(deepspeed_read, batch_fill_in_table)
{
    struct { const char *json; int tb, mb, gas; } ok[] = {
        {"{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 2, \"gradient_accumulation_steps\": 4}", 64, 2, 4},
        {"{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 2}", 64, 2, 4},
        {"{\"train_batch_size\": 64, \"gradient_accumulation_steps\": 2}", 64, 4, 2},
        {"{\"train_micro_batch_size_per_gpu\": 2, \"gradient_accumulation_steps\": 3}", 48, 2, 3},
        {"{\"train_batch_size\": 64}", 64, 8, 1},
        {"{\"train_micro_batch_size_per_gpu\": 3}", 24, 3, 1},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        readcase *r = read_text(ok[i].json, "llama3-8b", "dgx-h100", 1, 1, 1, 1);
        cr_assert_eq(r->st, PP_OK, "%s: %s", ok[i].json, r->err.msg);
        cr_assert_eq(r->s.dp, 8);
        cr_assert_eq(r->s.global_batch, ok[i].tb, "%s", ok[i].json);
        cr_assert_eq(r->s.micro_batch, ok[i].mb, "%s", ok[i].json);
        cr_assert_eq(r->s.grad_accum, ok[i].gas, "%s", ok[i].json);
        free(r);
    }
    /* the failures §3 lists (run against DeepSpeed 0.14.5) */
    read_fails(read_text("{\"gradient_accumulation_steps\": 4}", "llama3-8b", "dgx-h100", 1, 1, 1, 1),
               "train_batch_size", "Either train_batch_size or train_micro_batch_size_per_gpu");
    read_fails(read_text("{}", "llama3-8b", "dgx-h100", 1, 1, 1, 1), "Either train_batch_size", NULL);
    read_fails(read_text("{\"train_batch_size\": 30, \"train_micro_batch_size_per_gpu\": 4}", "llama3-8b", "dgx-h100",
                         1, 1, 1, 1), "$.gradient_accumulation_steps", "Gradient accumulation steps: 0 has to be greater than 0");
    read_fails(read_text("{\"train_batch_size\": 20}", "llama3-8b", "dgx-h100", 1, 1, 1, 1), "20 != 2 * 1 * 8", NULL);
    read_fails(read_text("{\"train_batch_size\": 20, \"train_micro_batch_size_per_gpu\": 0}", "llama3-8b", "dgx-h100",
                         1, 1, 1, 1), "ZeroDivisionError", NULL);
    /* "auto" is filled in as the HF Trainer does (tests/configs/test_deepspeed_auto.c) */
    read_fails(read_text("{\"train_batch_size\": 64.5}", "llama3-8b", "dgx-h100", 1, 1, 1, 1), "expected an integer", NULL);
}

Test(deepspeed_read, data_parallel_size_excludes_tp_pp_cp)
{
    readcase *r = read_text("{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 1}", "llama3-8b",
                            "dgx-h100", 4, 2, 2, 1);
    cr_assert_eq(r->st, PP_OK, "%s", r->err.msg);
    cr_assert_eq(r->s.dp, 8);
    cr_assert_eq(r->s.grad_accum, 8);
    free(r);
    r = read_text("{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 1}", "llama3-8b", "dgx-h100", 4, 1,
                  1, 2); /* Ulysses: the sequence ranks are not data-parallel */
    cr_assert_eq(r->st, PP_OK, "%s", r->err.msg);
    cr_assert_eq(r->s.dp, 16);
    cr_assert_eq(r->s.grad_accum, 4);
    free(r);
    read_fails(read_text("{\"train_batch_size\": 64}", "llama3-8b", "dgx-h100", 1, 3, 1, 1), "does not divide", NULL);
}

Test(deepspeed_read, bloom_176b_config)
{
    /* BigScience's tr11-176B: 384 A100-80GB, tp 4, pp 12, ZeRO stage 0, bf16 */
    readcase *r = read_file("bloom_176b.json", "bloom-176b", "jean-zay-a100", 48, 4, 12);
    cr_assert_eq(r->st, PP_OK, "%s", r->err.msg);
    cr_assert_eq(r->s.dp, 8);
    cr_assert_eq(r->s.grad_accum, 128);
    cr_assert_eq(r->s.zero, 0, "stage 0, as the file says: BF16_Optimizer shards like ZeRO-1");
    cr_assert_eq(r->s.grad_accum_dtype, PP_GRAD_16_FP32);
    cr_assert_eq(r->s.framework, PP_FW_MEGATRON_DEEPSPEED, "tp 4 is Megatron's model code under DeepSpeed");
    cr_assert_eq(r->s.overlap_dp, 0);
    cr_assert(warned(r, "BF16_Optimizer"));
    cr_assert(r->o.client_optimizer, "no optimizer block: Megatron-DeepSpeed passes its own");
    cr_assert_eq(r->o.hp.gradient_clipping, 1.0);
    free(r);
}

Test(deepspeed_read, hugging_face_auto)
{
    /* "auto" in zero_optimization: filled from the hidden size (4096) as the
     * HF Trainer does before DeepSpeed sees the file */
    readcase *r = read_file("zero3_auto_buckets.json", "llama3-8b", "dgx-h100", 1, 1, 1);
    cr_assert_eq(r->st, PP_OK, "%s", r->err.msg);
    cr_assert_eq(r->s.zero, 3);
    cr_assert_eq(r->s.offload, PP_OFFLOAD_OPT_PARAMS);
    cr_assert_eq(r->s.buf.reduce_bucket, 4096.0 * 4096);
    cr_assert_eq(r->s.buf.prefetch_bucket, floor(0.9 * 4096 * 4096));
    cr_assert_eq(r->s.buf.max_live_params, 2e8);
    cr_assert_eq(r->s.overlap_dp, 1, "overlap_comm defaults to true at stage 3");
    cr_assert_eq(r->s.global_batch, 64);
    cr_assert(warned(r, "reduce_bucket_size 16777216"));
    cr_assert(r->o.pin_memory);
    free(r);
}

Test(deepspeed_read, unknown_keys)
{
    readcase *r = read_file("typos.json", "llama3-8b", "dgx-h100", 1, 1, 1);
    cr_assert_eq(r->st, PP_OK, "%s", r->err.msg);
    cr_assert(warned(r, "$.gradient_acumulation_steps: unknown key: DeepSpeed ignores it (did you mean "
                        "\"gradient_accumulation_steps\"?)"));
    cr_assert(warned(r, "$.activation_checkpointing.partitioned_activations: unknown key"));
    cr_assert(warned(r, "(did you mean \"partition_activations\"?)"));
    cr_assert(warned(r, "$.bf16.loss_scale: unknown key"));
    cr_assert_eq(r->s.grad_accum, 1, "the misspelled key is ignored: GAS = 1");
    cr_assert_eq(r->s.zero, 2);
    cr_assert_eq(r->s.overlap_dp, 1);
    free(r);
    read_fails(read_file("zero_key_typo.json", "llama3-8b", "dgx-h100", 1, 1, 1),
               "ds.json: $.zero_optimization.overlap_com: unknown key: DeepSpeed rejects it", "\"overlap_comm\"");
}

Test(deepspeed_read, deepspeed_failures_name_the_key)
{
    read_fails(read_file("stage4.json", "llama3-8b", "dgx-h100", 1, 1, 1), "$.zero_optimization.stage",
               "permitted: 0, 1, 2, 3");
    read_fails(read_file("batch_mismatch.json", "llama3-8b", "dgx-h100", 1, 2, 1), "100 != 4 * 8 * 4", NULL);
    read_fails(read_file("fp16_and_bf16.json", "llama3-8b", "dgx-h100", 1, 1, 1), "cannot be simultaneously enabled",
               NULL);
    read_fails(read_file("duplicate_key.json", "llama3-8b", "dgx-h100", 1, 1, 1), "$.zero_optimization.stage",
               "Duplicate keys");
    read_fails(read_file("sgd_zero_untested.json", "llama3-8b", "dgx-h100", 1, 1, 1), "$.optimizer.type",
               "zero_allow_untested_optimizer");
    read_fails(read_text("{\"train_batch_size\": 64, \"zero_optimization\": {\"stage\": \"2\"}}", "llama3-8b",
                         "dgx-h100", 1, 1, 1, 1), "$.zero_optimization.stage", "string");
    read_fails(read_text("{\"train_batch_size\": 64, \"zero_optimization\": {\"stage\": 2}}", "llama3-8b",
                         "dgx-h100", 1, 1, 2, 1), "incompatible with pipeline parallelism", NULL);
    read_fails(read_text("{\"train_batch_size\": 64, \"optimizer\": {\"type\": \"AdamWW\"}}", "llama3-8b", "dgx-h100",
                         1, 1, 1, 1), "$.optimizer.type", "did you mean \"AdamW\"");
    read_fails(read_text("{\"train_batch_size\": 64, \"optimizer\": {\"type\": \"Adam\", \"params\": {\"max_grad_norm\": 1}}}",
                         "llama3-8b", "dgx-h100", 1, 1, 1, 1), "max_grad_norm", "gradient_clipping");
    read_fails(read_text("{\"train_batch_size\": 64, \"scheduler\": {\"type\": \"WarmupDecayLR\", \"params\": {}}}",
                         "llama3-8b", "dgx-h100", 1, 1, 1, 1), "$.scheduler.params.total_num_steps", NULL);
    read_fails(read_text("{\"train_batch_size\": 64, \"zero_optimization\": {\"stage\": 1}, \"optimizer\": {\"type\": "
                         "\"OneBitAdam\"}}", "llama3-8b", "dgx-h100", 1, 1, 1, 1), "not compatible with ZeRO", NULL);
    read_fails(read_text("{\"train_batch_size\": 64, \"fp16\": {\"enabled\": true}, \"data_types\": {\"grad_accum_dtype\": "
                         "\"fp32\"}}", "llama3-8b", "dgx-h100", 1, 1, 1, 1), "NotImplementedError", NULL);
    read_fails(read_text("{\"train_batch_size\": 64, \"bf16\": {\"enabled\": true}, \"data_types\": {\"grad_accum_dtype\": "
                         "\"bf16\"}}", "llama3-8b", "dgx-h100", 1, 1, 1, 1), "Bfloat16 wrapper", NULL);
    read_fails(read_text("{\"train_batch_size\": 64, \"communication_data_type\": \"fp8\"}", "llama3-8b", "dgx-h100",
                         1, 1, 1, 1), "communication_data_type", NULL);
    read_fails(read_text("[1]", "llama3-8b", "dgx-h100", 1, 1, 1, 1), "top level", NULL);
    read_fails(read_text("{\"train_batch_size\": 64,", "llama3-8b", "dgx-h100", 1, 1, 1, 1), "ds.json:1:", NULL);
}

Test(deepspeed_read, stage_rules_and_ignored_keys)
{
    readcase *r = read_text("{\"train_batch_size\": 64, \"zero_optimization\": {\"stage\": 2, \"offload_param\": "
                            "{\"device\": \"cpu\"}, \"stage3_max_live_parameters\": 1e8}}", "llama3-8b", "dgx-h100",
                            1, 1, 1, 1);
    cr_assert_eq(r->st, PP_OK, "%s", r->err.msg);
    cr_assert_eq(r->s.offload, PP_OFFLOAD_NONE, "offload_param is ignored below stage 3");
    cr_assert(warned(r, "offload_param: ignored at stage 2"));
    cr_assert(warned(r, "stage3_* keys are used only at stage 3"));
    cr_assert_eq(r->s.overlap_dp, 0, "overlap_comm defaults to false below stage 3");
    cr_assert_eq(r->o.hp.gradient_clipping, 0, "DeepSpeed's code default");
    cr_assert(warned(r, "$.gradient_clipping: absent"));
    free(r);
    r = read_text("{\"train_batch_size\": 64, \"zero_optimization\": {\"stage\": 1, \"overlap_comm\": true}, "
                  "\"pipeline\": {\"activation_checkpoint_interval\": 1}}", "llama3-8b", "dgx-h100", 1, 1, 2, 1);
    cr_assert_eq(r->st, PP_OK, "%s", r->err.msg);
    cr_assert_eq(r->s.overlap_dp, 0, "PipelineEngine turns overlap_comm off");
    cr_assert(warned(r, "overlap_comm: true is not applied"));
    cr_assert_eq(r->s.recompute, PP_RECOMPUTE_FULL, "activation_checkpoint_interval recomputes every layer");
    free(r);
    r = read_text("{\"train_batch_size\": 64, \"zero_optimization\": {\"stage\": 2, \"offload_optimizer\": "
                  "{\"device\": \"nvme\", \"nvme_path\": \"/nvme\"}}}", "llama3-8b", "dgx-h100", 1, 1, 1, 1);
    cr_assert_eq(r->st, PP_OK, "%s", r->err.msg);
    cr_assert_eq(r->s.offload, PP_OFFLOAD_NONE, "nvme optimizer offload works only at stage 3");
    free(r);
    r = read_file("sgd_zero_allowed.json", "llama3-8b", "dgx-h100", 1, 1, 1);
    cr_assert_eq(r->st, PP_OK, "%s", r->err.msg);
    cr_assert_eq(r->s.precision, PP_PREC_FP16);
    cr_assert_eq(r->s.optimizer, PP_OPT_SGD);
    cr_assert_eq(r->s.buf.reduce_bucket, 2e8);
    cr_assert_eq(r->s.buf.allgather_bucket, 3e8);
    cr_assert_eq(r->o.hp.initial_scale_power, 12);
    cr_assert_eq(r->o.hp.loss_scale_window, 500);
    cr_assert_eq(r->o.hp.hysteresis, 3);
    cr_assert_eq(r->o.hp.min_loss_scale, 0.5);
    cr_assert_eq(r->o.hp.lr, 0.01);
    cr_assert_eq(r->o.hp.momentum, 0.8);
    cr_assert_eq(r->o.hp.gradient_clipping, 0.5);
    free(r);
}

/* ---------------------------------------------------- (e) properties */

/* Fields a ds_config.json carries (the rest come from the command line). */
static void scramble(pp_strategy *b, const pp_strategy *a)
{
    b->dp = 1;
    b->zero = 0;
    b->offload = PP_OFFLOAD_NONE;
    b->precision = a->precision == PP_PREC_FP8 ? PP_PREC_FP8 : PP_PREC_BF16;
    b->grad_accum_dtype = PP_GRAD_FP32;
    b->micro_batch = 7;
    b->grad_accum = 0;
    b->global_batch = 1;
    b->overlap_dp = 1;
    pp_buffers_default(&b->buf);
    b->buf.cuda_context = a->buf.cuda_context;
    if (a->pp > 1 && a->recompute == PP_RECOMPUTE_FULL) b->recompute = PP_RECOMPUTE_NONE;
    if (a->optimizer != PP_OPT_ADAM8BIT && a->optimizer != PP_OPT_ADAFACTOR) b->optimizer = PP_OPT_ADAMW;
}

static void same_carried(const pp_strategy *a, const pp_strategy *b, const char *ctx)
{
    cr_assert_eq(b->dp, a->dp, "%s: dp", ctx);
    cr_assert_eq(b->zero, a->zero, "%s: zero", ctx);
    cr_assert_eq(b->offload, a->offload, "%s: offload", ctx);
    cr_assert_eq(b->precision, a->precision, "%s: precision", ctx);
    if (a->precision != PP_PREC_FP32) cr_assert_eq(b->grad_accum_dtype, a->grad_accum_dtype, "%s: grad dtype", ctx);
    cr_assert_eq(b->micro_batch, a->micro_batch, "%s: micro batch", ctx);
    cr_assert_eq(b->grad_accum, a->grad_accum, "%s: grad accum", ctx);
    cr_assert_eq(b->global_batch, a->global_batch, "%s: global batch", ctx);
    cr_assert_eq(b->overlap_dp, a->overlap_dp, "%s: overlap", ctx);
    cr_assert_eq(b->overlap_tp, a->overlap_tp, "%s: tp overlap", ctx);
    cr_assert_eq(b->optimizer, a->optimizer, "%s: optimizer", ctx);
    cr_assert_eq(b->recompute, a->recompute, "%s: recompute", ctx);
    cr_assert_eq(b->buf.reduce_bucket, a->buf.reduce_bucket, "%s: reduce bucket", ctx);
    if (a->zero == 1 || a->zero == 2)
        cr_assert_eq(b->buf.allgather_bucket, a->buf.allgather_bucket, "%s: allgather bucket", ctx);
    if (a->zero == 3) {
        cr_assert_eq(b->buf.prefetch_bucket, a->buf.prefetch_bucket, "%s", ctx);
        cr_assert_eq(b->buf.max_live_params, a->buf.max_live_params, "%s", ctx);
        cr_assert_eq(b->buf.param_persistence, a->buf.param_persistence, "%s", ctx);
    }
}

static void same_plan(const pp_plan *x, const pp_plan *y, const char *ctx)
{
    cr_assert_eq(x->memory.nstages, y->memory.nstages, "%s", ctx);
    for (int i = 0; i < x->memory.nstages; i++)
        cr_assert_eq(x->memory.stages[i].total_bytes, y->memory.stages[i].total_bytes, "%s: stage %d memory", ctx, i);
    cr_assert_eq(x->memory.peak_bytes, y->memory.peak_bytes, "%s: peak", ctx);
    cr_assert_eq(x->time.step_s, y->time.step_s, "%s: step time", ctx);
    cr_assert_eq(x->throughput.tokens_per_s, y->throughput.tokens_per_s, "%s", ctx);
}

typedef struct tally {
    int tried, invalid, refused, emitted, by_stage[4], by_offload[PP_OFFLOAD_COUNT], by_prec[PP_PREC_COUNT];
    int rules[PP_RULE_COUNT];
} tally;

/* One candidate: refused with a known reason, or emitted, checked, read
 * back to the same strategy and the same plan. */
static void one(const pp_model *m, const pp_cluster *c, pp_strategy s, tally *t)
{
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s dp%d tp%d pp%d cp%d ep%d sp%d z%d off %s %s rec %s/%d opt %s grad %d mb%d sch %s",
             m->name, s.dp, s.tp, s.pp, s.cp, s.ep, s.sp, s.zero, pp_offload_name(s.offload),
             pp_enum_names(PP_ENUM_PRECISION, &(int){0})[s.precision], pp_recompute_name(s.recompute),
             s.recompute_layers, pp_optimizer_name(s.optimizer), s.grad_accum_dtype, s.micro_batch,
             pp_schedule_name(s.schedule));
    t->tried++;
    pp_error err = {""};
    pp_plan *p = malloc(sizeof *p), *q = malloc(sizeof *q);
    cr_assert(p && q);
    if (pp_estimate(m, c, &s, p, &err) != PP_OK) {
        t->invalid++;
        goto out;
    }
    pp_notes n = {0};
    pp_strategy a = s;
    pp_status st = pp_deepspeed_adapt(m, c, &a, &n, &err);
    if (st != PP_OK) {
        cr_assert_eq(st, PP_ERR_INPUT, "%s", ctx);
        cr_assert(err.rule > 0 && strstr(err.msg, "[rule "), "%s: refusal outside the rule table '%s'", ctx, err.msg);
        t->rules[err.rule]++;
        t->refused++;
        goto out;
    }
    pp_strategy again = a;
    pp_notes n2 = {0};
    cr_assert_eq(pp_deepspeed_adapt(m, c, &again, &n2, &err), PP_OK, "%s", ctx);
    cr_assert_eq(n2.n, 0, "%s: adapt not idempotent: %s", ctx, n2.n ? n2.line[0] : "");
    cr_assert_eq(pp_estimate(m, c, &a, p, &err), PP_OK, "%s: %s", ctx, err.msg);
    pp_deepspeed_opts o;
    pp_deepspeed_opts_default(&o);
    if (a.offload == PP_OFFLOAD_NVME) snprintf(o.nvme_path, sizeof o.nvme_path, "/local_nvme");
    char *text = NULL;
    st = pp_deepspeed_to_string(m, c, p, &o, &text, &n, &err);
    cr_assert_eq(st, PP_OK, "%s: adapted but not written: %s", ctx, err.msg);
    ds_rules(text, &p->strategy, c, ctx);
    /* read back */
    pp_strategy b = p->strategy;
    scramble(&b, &p->strategy);
    pp_deepspeed_opts ro;
    pp_notes w = {0};
    st = pp_deepspeed_parse(text, strlen(text), "emitted.json", m, c, &b, &ro, &w, &err);
    cr_assert_eq(st, PP_OK, "%s: read back: %s\n%s", ctx, err.msg, text);
    same_carried(&p->strategy, &b, ctx);
    cr_assert_eq(pp_estimate(m, c, &b, q, &err), PP_OK, "%s: %s", ctx, err.msg);
    same_plan(p, q, ctx);
    if (!ro.client_optimizer) {
        cr_assert_eq(ro.hp.lr, o.hp.lr, "%s", ctx);
        cr_assert_eq(ro.hp.total_steps, o.hp.total_steps, "%s", ctx);
        cr_assert_eq(ro.hp.warmup_steps, o.hp.warmup_steps, "%s", ctx);
        cr_assert_eq(ro.hp.weight_decay, o.hp.weight_decay, "%s", ctx);
    }
    cr_assert_eq(ro.hp.gradient_clipping, o.hp.gradient_clipping, "%s", ctx);
    cr_assert_eq(pp_deepspeed_check(m, c, &b, &ro, &err), PP_OK, "%s: read-back not re-emittable: %s", ctx, err.msg);
    char *text2 = NULL;
    cr_assert_eq(pp_deepspeed_to_string(m, c, q, &ro, &text2, NULL, &err), PP_OK, "%s", ctx);
    cr_assert_str_eq(text2, text, "%s: re-emitting the read-back config changed it", ctx);
    pp_free(text2);
    pp_free(text);
    t->emitted++;
    t->by_stage[p->strategy.zero]++;
    t->by_offload[p->strategy.offload]++;
    t->by_prec[p->strategy.precision]++;
out:
    free(p);
    free(q);
}

static void sweep(const char *model_name, const char *cluster_name, int nodes, tally *t)
{
    pp_model m = fx_model(model_name);
    pp_cluster c = fx_cluster(cluster_name, nodes, 0);
    static const int tps[] = {1, 2, 8}, pps[] = {1, 2, 4}, cps[] = {1, 2};
    static const pp_precision precs[] = {PP_PREC_FP32, PP_PREC_FP16, PP_PREC_BF16, PP_PREC_FP8};
    unsigned seed = 12345;
    for (int ti = 0; ti < 3; ti++)
        for (int pi = 0; pi < 3; pi++)
            for (int ci = 0; ci < 2; ci++)
                for (int z = 0; z <= 3; z++)
                    for (int off = 0; off < PP_OFFLOAD_COUNT; off++)
                        for (int pr = 0; pr < 4; pr++)
                            for (int rec = 0; rec < 4; rec++) {
                                if (pps[pi] * tps[ti] * cps[ci] > pp_cluster_gpus(&c)) continue;
                                pp_strategy s = base(&m, &c, tps[ti], pps[pi], cps[ci]);
                                s.zero = z;
                                s.offload = off;
                                s.precision = precs[pr];
                                s.recompute = rec == 3 ? PP_RECOMPUTE_FULL : rec;
                                if (rec == 3) s.recompute_layers = 1;
                                if (m.experts) s.ep = 2;
                                /* vary the rest pseudo-randomly, deterministically */
                                seed = seed * 1103515245u + 12345u;
                                unsigned r = seed >> 8;
                                s.optimizer = (pp_optimizer)(r % PP_OPT_COUNT);
                                s.grad_accum_dtype = (pp_grad_accum)((r >> 4) % PP_GRAD_COUNT);
                                s.sp = s.tp > 1 && ((r >> 6) & 1);
                                s.micro_batch = 1 + ((r >> 7) & 1);
                                s.global_batch = s.dp * s.micro_batch * (4 << ((r >> 8) & 1));
                                s.overlap_dp = (r >> 9) & 1;
                                if (((r >> 10) & 7) == 0) s.buf.reduce_bucket = 2e8;
                                if (((r >> 13) & 7) == 0) s.buf.allgather_bucket = 1e8;
                                if (s.pp > 1 && ((r >> 16) & 3) == 0) {
                                    s.schedule = PP_SCHED_INTERLEAVED;
                                    s.virtual_stages = 2;
                                }
                                one(&m, &c, s, t);
                            }
}

TestSuite(deepspeed_property, .timeout = 600);

Test(deepspeed_property, every_plan_emits_or_refuses_and_round_trips)
{
    tally t = {0};
    sweep("llama3-8b", "dgx-h100", 2, &t);
    sweep("mixtral-8x7b", "dgx-h100", 4, &t);
    sweep("gpt3-1.3b", "dgx-a100-80g", 1, &t);
    cr_log_info("deepspeed sweep: %d tried, %d not valid strategies, %d refused, %d emitted", t.tried, t.invalid,
                t.refused, t.emitted);
    cr_assert_gt(t.emitted, 200, "too few configs emitted (%d)", t.emitted);
    cr_assert_gt(t.refused, 100);
    for (int z = 0; z < 4; z++) cr_assert_gt(t.by_stage[z], 0, "no config at ZeRO-%d", z);
    for (int o = 0; o < PP_OFFLOAD_COUNT; o++) cr_assert_gt(t.by_offload[o], 0, "no config with offload %d", o);
    cr_assert(t.by_prec[PP_PREC_FP32] > 0 && t.by_prec[PP_PREC_FP16] > 0 && t.by_prec[PP_PREC_BF16] > 0,
              "every DeepSpeed precision emitted");
    static const pp_rule must[] = {PP_RULE_FW_ZERO_PP, PP_RULE_FW_SCHEDULE, PP_RULE_FW_PARTIAL_RECOMPUTE, PP_RULE_FW_CP,
                                   PP_RULE_FW_PRECISION};
    for (size_t k = 0; k < sizeof must / sizeof *must; k++)
        cr_assert_gt(t.rules[must[k]], 0, "refusal by rule %s never exercised", pp_rule_get(must[k])->id);
}

/* ------------------------------------------------- (f) files and the CLI */

static char tmpdir[128];

static void mk_tmp(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/parplan-ds-XXXXXX");
    cr_assert(mkdtemp(tmpdir));
}

/* Removes the test's flat temporary folder. */
static void rm_tmp(void)
{
    if (!tmpdir[0]) return;
    DIR *d = opendir(tmpdir);
    if (d) {
        char path[512];
        for (struct dirent *e; (e = readdir(d));)
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(tmpdir);
}

TestSuite(deepspeed_files);

static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

Test(deepspeed_files, atomic_write_refuses_to_overwrite)
{
    mk_tmp();
    char path[256];
    snprintf(path, sizeof path, "%s/ds.json", tmpdir);
    pp_error err = {""};
    cr_assert_eq(pp_write_file(path, "{}\n", 3, 0, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(pp_write_file(path, "{\"x\": 1}\n", 9, 0, &err), PP_ERR_IO);
    cr_assert(strstr(err.msg, "already exists") && strstr(err.msg, "--force"), "%s", err.msg);
    char *t = slurp(path);
    cr_assert_str_eq(t, "{}\n", "the existing file is untouched");
    free(t);
    cr_assert_eq(pp_write_file(path, "{\"x\": 1}\n", 9, 1, &err), PP_OK, "%s", err.msg);
    t = slurp(path);
    cr_assert_str_eq(t, "{\"x\": 1}\n");
    free(t);
    cr_assert_eq(dir_entries(tmpdir), 1, "no temporary files left behind");
    cr_assert_eq(pp_write_file(tmpdir, "{}", 2, 1, &err), PP_ERR_IO, "a directory is not replaced");
    char missing[300];
    snprintf(missing, sizeof missing, "%s/no/such/dir.json", tmpdir);
    cr_assert_eq(pp_write_file(missing, "{}", 2, 0, &err), PP_ERR_IO);
    cr_assert(strstr(err.msg, missing), "%s", err.msg);
    rm_tmp();
}

typedef struct cli_run {
    int code;
    char *out, *err;
} cli_run;

static cli_run run_cli(const char *const *args)
{
    char po[256], pe[256];
    snprintf(po, sizeof po, "%s/.out", tmpdir);
    snprintf(pe, sizeof pe, "%s/.err", tmpdir);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(126);
        const char *argv[64] = {PARPLAN_CLI};
        for (int i = 0; args[i] && i < 62; i++) argv[i + 1] = args[i];
        execv(PARPLAN_CLI, (char *const *)argv);
        _exit(127);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cli_run r = {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(po), slurp(pe)};
    unlink(po);
    unlink(pe);
    return r;
}

static void cli_free(cli_run *r)
{
    free(r->out);
    free(r->err);
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

Test(deepspeed_files, cli_emit_read_back_and_force)
{
    mk_tmp();
    char ds[256], mg[256];
    snprintf(ds, sizeof ds, "%s/ds_config.json", tmpdir);
    snprintf(mg, sizeof mg, "%s/megatron.sh", tmpdir);
    cli_run r = run_cli((const char *const[]){"estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--zero",
                                              "3", "--micro-batch", "2", "--global-batch", "64", "--emit-deepspeed", ds,
                                              NULL});
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(strstr(r.err, "wrote") && strstr(r.out, "peak"), "%s", r.err);
    cli_free(&r);
    char *first = slurp(ds);
    /* an existing file: exit 2, one line, nothing on stdout, file untouched */
    r = run_cli((const char *const[]){"estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--zero", "2",
                                      "--emit-deepspeed", ds, NULL});
    cr_assert_eq(r.code, 2);
    cr_assert(strstr(r.err, ds) && strstr(r.err, "--force") && lines(r.err) == 1 && !r.out[0], "%s", r.err);
    cli_free(&r);
    char *now = slurp(ds);
    cr_assert_str_eq(now, first);
    free(now);
    /* read back: the same table as the original command */
    r = run_cli((const char *const[]){"estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--deepspeed", ds,
                                      "--format", "json", NULL});
    cr_assert_eq(r.code, 0, "%s", r.err);
    cli_run orig = run_cli((const char *const[]){"estimate", "--model", "llama3-8b", "--cluster", "dgx-h100",
                                                 "--zero", "3", "--micro-batch", "2", "--global-batch", "64",
                                                 "--format", "json", NULL});
    cr_assert_str_eq(r.out, orig.out, "the read-back plan differs from the emitted one");
    cli_free(&r);
    cli_free(&orig);
    /* --force replaces it; both files with Megatron-DeepSpeed */
    r = run_cli((const char *const[]){"estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--nodes", "2",
                                      "--tp", "2", "--pp", "2", "--zero", "1", "--global-batch", "64", "--force",
                                      "--emit-deepspeed", ds, "--emit-megatron", mg, NULL});
    cr_assert_eq(r.code, 0, "%s", r.err);
    cli_free(&r);
    now = slurp(ds);
    cr_assert(strcmp(now, first) && strstr(now, "\"pipeline\"") && !strstr(now, "\"optimizer\""),
              "Megatron-DeepSpeed passes its own optimizer: %s", now);
    free(now);
    char *args = slurp(mg);
    cr_assert(strstr(args, "--deepspeed_config") && strstr(args, ds), "%s", args);
    free(args);
    free(first);
    /* a refusal writes nothing */
    char y[256];
    snprintf(y, sizeof y, "%s/refused.json", tmpdir);
    r = run_cli((const char *const[]){"estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--pp", "2",
                                      "--zero", "2", "--emit-deepspeed", y, NULL});
    cr_assert_eq(r.code, 2);
    cr_assert(strstr(r.err, "pipeline parallelism") && lines(r.err) == 1 && !r.out[0], "%s", r.err);
    cr_assert_eq(access(y, F_OK), -1);
    cli_free(&r);
    rm_tmp();
}

Test(deepspeed_files, cli_read_errors_are_one_line)
{
    mk_tmp();
    char bad[256];
    snprintf(bad, sizeof bad, "%s/bad.json", tmpdir);
    FILE *f = fopen(bad, "w");
    fputs("{\"train_batch_size\": 64, \"gradient_acumulation_steps\": 2, \"zero_optimization\": {\"stage\": 4}}", f);
    fclose(f);
    cli_run r = run_cli((const char *const[]){"estimate", "--model", "llama3-8b", "--cluster", "dgx-h100",
                                              "--deepspeed", bad, NULL});
    cr_assert_eq(r.code, 2);
    cr_assert(strstr(r.err, bad) && strstr(r.err, "$.zero_optimization.stage") && lines(r.err) == 1 && !r.out[0],
              "%s", r.err);
    cli_free(&r);
    r = run_cli((const char *const[]){"estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--deepspeed", bad,
                                      "--zero", "2", NULL});
    cr_assert_eq(r.code, 2);
    cr_assert(strstr(r.err, "--zero") && lines(r.err) == 1, "%s", r.err); /* --micro-batch is the HF override */
    cli_free(&r);
    f = fopen(bad, "w");
    fputs("{\"train_batch_size\": 64, \"gradient_acumulation_steps\": 2}", f);
    fclose(f);
    r = run_cli((const char *const[]){"estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--deepspeed", bad,
                                      NULL});
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(strstr(r.err, "warning") && strstr(r.err, "did you mean \"gradient_accumulation_steps\""), "%s", r.err);
    cli_free(&r);
    rm_tmp();
}

/* ---------------------------------- (e') every plan the search returns */

TestSuite(deepspeed_search, .timeout = 1200);

static void search_scenario(const char *model_name, const char *cluster_name, int nodes, int global_batch, tally *t)
{
    pp_model m = fx_model(model_name);
    pp_cluster c = fx_cluster(cluster_name, nodes, 0);
    pp_search_opts so;
    pp_search_opts_default(&so);
    so.global_batch = global_batch;
    so.seq = m.seq > 4096 ? 4096 : 0;
    so.top_k = 25;
    so.threads = 1;
    pp_plan_list list = {0};
    pp_error err = {""};
    pp_status st = pp_plan_search(&m, &c, &so, &list, &err);
    cr_assert(st == PP_OK || st == PP_ERR_INFEASIBLE, "%s: %s", model_name, err.msg);
    for (int i = 0; i < list.n; i++) one(&m, &c, list.plans[i].strategy, t);
    pp_plan_list_free(&list);
}

Test(deepspeed_search, every_searched_plan_emits_or_refuses)
{
    tally t = {0};
    search_scenario("llama3-8b", "dgx-h100", 2, 256, &t);
    search_scenario("llama3-70b", "dgx-h100", 8, 512, &t);
    search_scenario("mixtral-8x7b", "dgx-h100", 4, 256, &t);
    search_scenario("gpt3-1.3b", "dgx-a100-80g", 1, 128, &t);
    cr_log_info("search plans: %d tried, %d refused, %d emitted", t.tried, t.refused, t.emitted);
    cr_assert_eq(t.invalid, 0, "the search returned a strategy pp_estimate rejects");
    cr_assert_gt(t.emitted, 10);
}
