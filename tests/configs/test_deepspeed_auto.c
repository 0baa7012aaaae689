/*
 * test_deepspeed_auto.c — "auto" in a user's ds_config.json, filled in as
 * the Hugging Face Trainer does (configs/deepspeed_auto.c; transformers
 * integrations/deepspeed.py trainer_config_process/_finalize): from the
 * Trainer's arguments (--micro-batch, --global-batch, --precision) or its
 * defaults, ZeRO buckets from the model's hidden size, every value filled
 * in named, a contradicting number refused as the Trainer refuses it.
 * Expected values are the Trainer's rules written out by hand below.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parplan.h"

/* The Trainer-style config most fine-tuning recipes ship (HF docs' ZeRO-3). */
static const char HF_ZERO3[] =
    "{\"fp16\": {\"enabled\": \"auto\", \"loss_scale\": 0, \"initial_scale_power\": 16},\n"
    " \"bf16\": {\"enabled\": \"auto\"},\n"
    " \"optimizer\": {\"type\": \"AdamW\", \"params\": {\"lr\": \"auto\", \"betas\": \"auto\", \"eps\": \"auto\",\n"
    "               \"weight_decay\": \"auto\"}},\n"
    " \"scheduler\": {\"type\": \"WarmupLR\", \"params\": {\"warmup_min_lr\": \"auto\", \"warmup_max_lr\": \"auto\",\n"
    "               \"warmup_num_steps\": \"auto\"}},\n"
    " \"zero_optimization\": {\"stage\": 3, \"overlap_comm\": true, \"reduce_bucket_size\": \"auto\",\n"
    "     \"stage3_prefetch_bucket_size\": \"auto\", \"stage3_param_persistence_threshold\": \"auto\"},\n"
    " \"gradient_accumulation_steps\": \"auto\", \"gradient_clipping\": \"auto\",\n"
    " \"train_batch_size\": \"auto\", \"train_micro_batch_size_per_gpu\": \"auto\"}\n";

typedef struct rd {
    pp_status st;
    pp_strategy s;
    pp_deepspeed_opts o;
    pp_notes warn;
    pp_error err;
} rd;

/* Reads text for llama3-8b (hidden 4096) on `nodes` DGX H100 nodes, tp 1. */
static rd *read_hf(const char *text, const pp_hf_trainer_args *hf, const char *cluster, int nodes)
{
    rd *r = calloc(1, sizeof *r);
    cr_assert(r);
    pp_model m;
    pp_cluster c;
    cr_assert_eq(pp_model_load("llama3-8b", &m, &r->err), PP_OK);
    cr_assert_eq(pp_cluster_load(cluster, &c, &r->err), PP_OK);
    cr_assert_eq(pp_cluster_resize(&c, nodes, 0, &r->err), PP_OK);
    pp_strategy_default(&r->s);
    r->s.seq = m.seq;
    r->st = pp_deepspeed_parse_hf(text, strlen(text), "ds.json", &m, &c, hf, &r->s, &r->o, &r->warn, &r->err);
    return r;
}

static int noted(const rd *r, const char *needle)
{
    for (int i = 0; i < r->warn.n; i++)
        if (strstr(r->warn.line[i], needle)) return 1;
    return 0;
}

static void dump(const rd *r)
{
    for (int i = 0; i < r->warn.n; i++) fprintf(stderr, "  note: %s\n", r->warn.line[i]);
}

Test(hf_auto, trainer_defaults_when_nothing_is_given)
{
    rd *r = read_hf(HF_ZERO3, NULL, "dgx-h100", 1);
    cr_assert_eq(r->st, PP_OK, "%s", r->err.msg);
    /* per_device_train_batch_size 8, accumulation 1, world 8: 8 x 8 x 1 = 64 */
    cr_expect_eq(r->s.micro_batch, 8);
    cr_expect_eq(r->s.grad_accum, 1);
    cr_expect_eq(r->s.global_batch, 64);
    cr_expect_eq(r->s.dp, 8);
    cr_expect_eq(r->s.zero, 3);
    cr_expect_eq(r->s.precision, PP_PREC_BF16, "bf16.enabled auto -> true (parplan's default), fp16 -> false");
    /* ZeRO-3 buckets from hidden 4096: h^2, floor(0.9 h^2), 10 h */
    cr_expect_eq(r->s.buf.reduce_bucket, 16777216.0);
    cr_expect_eq(r->s.buf.prefetch_bucket, 15099494.0);
    cr_expect_eq(r->s.buf.param_persistence, 40960.0);
    /* hyper-parameters: learning_rate 5e-5, betas (0.9, 0.999), eps 1e-8, wd 0, clip 1 */
    cr_expect_eq(r->o.hp.lr, 5e-5);
    cr_expect_eq(r->o.hp.beta2, 0.999);
    cr_expect_eq(r->o.hp.eps, 1e-8);
    cr_expect_eq(r->o.hp.weight_decay, 0);
    cr_expect_eq(r->o.hp.gradient_clipping, 1.0);
    /* every filled value is named */
    cr_expect(noted(r, "$.train_micro_batch_size_per_gpu: \"auto\" filled in") && noted(r, ": 8 (") &&
              noted(r, "$.gradient_accumulation_steps: \"auto\"") && noted(r, "$.train_batch_size: \"auto\"") &&
              noted(r, "$.bf16.enabled: \"auto\" filled in as the Hugging Face Trainer does: true") &&
              noted(r, "reduce_bucket_size 16777216") && noted(r, "stage3_param_persistence_threshold 40960") &&
              noted(r, "lr 5e-05"), "notes incomplete");
    if (!noted(r, "lr 5e-05")) dump(r);
    free(r);
}

Test(hf_auto, flags_fill_auto_as_training_arguments)
{
    /* --micro-batch 2 --global-batch 128 on 16 GPUs: accumulation 128 / (2 x 16) = 4 */
    pp_hf_trainer_args hf = {2, 128, PP_PREC_FP16};
    rd *r = read_hf(HF_ZERO3, &hf, "dgx-h100", 2);
    cr_assert_eq(r->st, PP_OK, "%s", r->err.msg);
    cr_expect_eq(r->s.micro_batch, 2);
    cr_expect_eq(r->s.grad_accum, 4);
    cr_expect_eq(r->s.global_batch, 128);
    cr_expect_eq(r->s.precision, PP_PREC_FP16, "--precision fp16: fp16.enabled auto -> true");
    cr_expect(noted(r, "= --micro-batch") && noted(r, "16 x 2 x 4"), "notes");
    free(r);
    /* a global batch that is not a multiple of micro x dp = 2 x 8 */
    pp_hf_trainer_args odd = {2, 100, -1};
    r = read_hf(HF_ZERO3, &odd, "dgx-h100", 1);
    cr_expect_eq(r->st, PP_ERR_INPUT);
    cr_expect(strstr(r->err.msg, "global batch 100") && strstr(r->err.msg, "2 x 8"), "%s", r->err.msg);
    free(r);
}

Test(hf_auto, a_number_in_the_file_that_contradicts_a_flag_is_the_trainers_mismatch)
{
    const char *ds = "{\"train_micro_batch_size_per_gpu\": 4, \"gradient_accumulation_steps\": \"auto\", "
                     "\"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 2}}";
    pp_hf_trainer_args hf = {2, 0, -1};
    rd *r = read_hf(ds, &hf, "dgx-h100", 1);
    cr_expect_eq(r->st, PP_ERR_INPUT);
    cr_expect(strstr(r->err.msg, "ds.json: $.train_micro_batch_size_per_gpu") && strstr(r->err.msg, "4 in the file") &&
              strstr(r->err.msg, "--micro-batch 2") && strstr(r->err.msg, "mismatch"), "%s", r->err.msg);
    free(r);
    /* the same value is fine; the file's number then stands for the flag */
    hf.micro_batch = 4;
    r = read_hf(ds, &hf, "dgx-h100", 1);
    cr_expect_eq(r->st, PP_OK, "%s", r->err.msg);
    cr_expect_eq(r->s.micro_batch, 4);
    cr_expect_eq(r->s.grad_accum, 1);
    free(r);
    /* a precision against the file's */
    pp_hf_trainer_args p16 = {0, 0, PP_PREC_FP16};
    r = read_hf(ds, &p16, "dgx-h100", 1);
    cr_expect_eq(r->st, PP_ERR_INPUT);
    cr_expect(strstr(r->err.msg, "$.bf16.enabled") && strstr(r->err.msg, "--precision fp16"), "%s", r->err.msg);
    free(r);
}

Test(hf_auto, a_key_the_file_leaves_out_takes_the_flag)
{
    /* train_batch_size 64 alone: DeepSpeed would set micro 8 on 8 GPUs;
     * --micro-batch 2 makes it micro 2 x accumulation 4 */
    pp_hf_trainer_args hf = {2, 0, -1};
    rd *r = read_hf("{\"train_batch_size\": 64}", &hf, "dgx-h100", 1);
    cr_assert_eq(r->st, PP_OK, "%s", r->err.msg);
    cr_expect_eq(r->s.micro_batch, 2);
    cr_expect_eq(r->s.grad_accum, 4);
    cr_expect(noted(r, "$.train_micro_batch_size_per_gpu: absent; --micro-batch gives 2"), "notes");
    free(r);
}

Test(hf_auto, what_the_trainer_does_not_fill_still_fails_as_deepspeed_fails)
{
    /* SGD momentum is not a TrainingArguments value: DeepSpeed gets "auto" */
    const char *ds = "{\"train_micro_batch_size_per_gpu\": 1, \"optimizer\": {\"type\": \"SGD\", \"params\": "
                     "{\"lr\": \"auto\", \"momentum\": \"auto\"}}}";
    rd *r = read_hf(ds, NULL, "dgx-h100", 1);
    cr_expect_eq(r->st, PP_ERR_INPUT);
    cr_expect(strstr(r->err.msg, "$.optimizer.params.momentum"), "%s", r->err.msg);
    free(r);
    /* below stage 3 the stage-3 buckets stay "auto", and DeepSpeed drops them */
    ds = "{\"train_micro_batch_size_per_gpu\": 1, \"zero_optimization\": {\"stage\": 2, \"reduce_bucket_size\": "
         "\"auto\", \"stage3_prefetch_bucket_size\": \"auto\"}}";
    r = read_hf(ds, NULL, "dgx-h100", 1);
    cr_assert_eq(r->st, PP_OK, "%s", r->err.msg);
    cr_expect_eq(r->s.buf.reduce_bucket, 16777216.0);
    cr_expect_eq(r->s.buf.prefetch_bucket, 5e7, "DeepSpeed's default");
    cr_expect(noted(r, "$.zero_optimization.stage3_prefetch_bucket_size: \"auto\": DeepSpeed drops it"), "notes");
    free(r);
}

Test(hf_auto, a_gpu_without_bf16_fills_fp16)
{
    /* no V100 cluster preset: an A100 cluster with the GPU's bf16 peak
     * zeroed stands for one */
    pp_model m;
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_model_load("llama3-8b", &m, &err), PP_OK);
    cr_assert_eq(pp_cluster_load("dgx-a100-80g", &c, &err), PP_OK);
    c.gpu.peak_flops[PP_PREC_BF16] = 0;
    pp_strategy s;
    pp_strategy_default(&s);
    s.seq = 4096;
    pp_notes w = {0};
    const char *ds = "{\"train_micro_batch_size_per_gpu\": 1, \"fp16\": {\"enabled\": \"auto\"}, \"bf16\": {\"enabled\": "
                     "\"auto\"}, \"zero_optimization\": {\"stage\": 1}}";
    cr_assert_eq(pp_deepspeed_parse_hf(ds, strlen(ds), "ds.json", &m, &c, NULL, &s, NULL, &w, &err), PP_OK, "%s",
                 err.msg);
    cr_expect_eq(s.precision, PP_PREC_FP16);
}
