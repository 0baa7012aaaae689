/*
 * deepspeed_auto.c — "auto" in a ds_config.json, filled in the way the
 * Hugging Face integration fills it before DeepSpeed reads the file
 * (transformers src/transformers/integrations/deepspeed.py,
 * HfTrainerDeepSpeedConfig.trainer_config_process and
 * trainer_config_finalize; Accelerate's _prepare_deepspeed does the same):
 *
 *   train_micro_batch_size_per_gpu  <- per_device_train_batch_size (default 8)
 *   gradient_accumulation_steps     <- gradient_accumulation_steps (default 1)
 *   train_batch_size                <- world_size x the two above
 *   gradient_clipping               <- max_grad_norm (default 1.0)
 *   optimizer.params lr, betas, eps, weight_decay
 *                                   <- learning_rate 5e-5, [adam_beta1 0.9, adam_beta2 0.999],
 *                                      adam_epsilon 1e-8, weight_decay 0.0
 *   scheduler.params warmup_min_lr 0, warmup_max_lr = lr, warmup_num_steps
 *                                      <- warmup_steps (default 0), total_num_steps <- the
 *                                      training steps (from the dataset: unknown here)
 *   fp16.enabled / bf16.enabled     <- --fp16 / --bf16;  amp.enabled <- false
 *   zero_optimization.reduce_bucket_size <- hidden x hidden; at stage 3
 *   stage3_prefetch_bucket_size <- 0.9 x hidden x hidden, stage3_param_persistence_threshold
 *                                      <- 10 x hidden (the model's hidden size)
 *
 * parplan's flags stand for the Trainer's arguments (pp_hf_trainer_args):
 * --micro-batch is per_device_train_batch_size, --global-batch sets the
 * accumulation (global / (micro x data-parallel)), --precision the bf16 or
 * fp16 flag. A value the file gives that differs from a flag given is the
 * Trainer's "values that mismatch TrainingArguments" error; a key the file
 * leaves out takes the flag. Every value filled in is noted.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "configs/emit.h"

/* TrainingArguments defaults (transformers training_args.py). */
#define HF_MICRO_BATCH 8
#define HF_LR 5e-5
#define HF_BETA1 0.9
#define HF_BETA2 0.999
#define HF_EPS 1e-8
#define HF_WEIGHT_DECAY 0.0
#define HF_MAX_GRAD_NORM 1.0

typedef struct filler {
    jr_ctx *jr;
    pp_notes *notes;
    const char *where;
    char group[PP_NOTE_LEN]; /* "key = value, ..." gathered for one note; "" = note each key */
    int grouping;
} filler;

static int is_auto(const cJSON *v) { return cJSON_IsString(v) && strcmp(v->valuestring, "auto") == 0; }

static void note_fill(filler *f, const char *path, const char *key, const char *value, const char *why)
{
    if (f->grouping) {
        size_t n = strlen(f->group);
        snprintf(f->group + n, sizeof f->group - n, "%s%s %s", n ? ", " : "", key, value);
        return;
    }
    pp__note(f->notes, "%s: %s.%s: \"auto\" filled in as the Hugging Face Trainer does: %s (%s)", f->where, path, key,
             value, why);
}

/* Starts gathering the keys filled next into one note. */
static void group_begin(filler *f)
{
    f->group[0] = '\0';
    f->grouping = 1;
}

static void group_end(filler *f, const char *what)
{
    f->grouping = 0;
    if (f->group[0])
        pp__note(f->notes, "%s: \"auto\" filled in as the Hugging Face Trainer does: %s: %s", f->where, what, f->group);
}

/* Replaces an "auto" under obj.key with v; 1 when it did. */
static int fill_num(filler *f, cJSON *obj, const char *path, const char *key, double v, const char *why)
{
    cJSON *it = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    if (!is_auto(it)) return 0;
    cJSON_ReplaceItemInObjectCaseSensitive(obj, key, cJSON_CreateNumber(v));
    char txt[40];
    pp__fmt_num(txt, sizeof txt, v);
    note_fill(f, path, key, txt, why);
    return 1;
}

static void fill_bool(filler *f, cJSON *obj, const char *path, const char *key, int v, const char *why)
{
    cJSON *it = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    if (!is_auto(it)) return;
    cJSON_ReplaceItemInObjectCaseSensitive(obj, key, cJSON_CreateBool(v));
    note_fill(f, path, key, v ? "true" : "false", why);
}

/* A batch count the file gives: a whole number in [1, 2^31); 0 otherwise
 * (absent, "auto", or a value the DeepSpeed reader will refuse itself). */
static long count_of(const cJSON *v)
{
    if (!cJSON_IsNumber(v)) return 0;
    double d = v->valuedouble;
    return isfinite(d) && d >= 1 && d < 2147483648.0 && d == floor(d) ? (long)d : 0;
}

/* One batch key: "auto" takes want; a number that differs from a value
 * the caller gave (given) is the Trainer's mismatch error; absent and
 * given: set. */
static void batch(filler *f, cJSON *root, const char *key, long want, int given, const char *flag, const char *why)
{
    cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);
    if (fill_num(f, root, "$", key, (double)want, why)) return;
    if ((!it || cJSON_IsNull(it)) && given) {
        if (it) cJSON_ReplaceItemInObjectCaseSensitive(root, key, cJSON_CreateNumber((double)want));
        else cJSON_AddNumberToObject(root, key, (double)want);
        pp__note(f->notes, "%s: $.%s: absent; %s gives %ld", f->where, key, flag, want);
        return;
    }
    if (given && cJSON_IsNumber(it) && it->valuedouble != (double)want)
        jr_fail(f->jr, "$", key, "%g in the file, %s %ld: the Hugging Face Trainer raises \"Please correct the "
                "following DeepSpeed config values that mismatch TrainingArguments values\"; make them equal or set "
                "the key to \"auto\"", it->valuedouble, flag, want);
}

/* The batch keys (trainer_config_process). */
static void fill_batch(filler *f, cJSON *root, int dp, const pp_hf_trainer_args *hf)
{
    const cJSON *mb_v = cJSON_GetObjectItemCaseSensitive(root, "train_micro_batch_size_per_gpu");
    const cJSON *ga_v = cJSON_GetObjectItemCaseSensitive(root, "gradient_accumulation_steps");
    const cJSON *tb_v = cJSON_GetObjectItemCaseSensitive(root, "train_batch_size");
    if (!is_auto(mb_v) && !is_auto(ga_v) && !is_auto(tb_v) && hf->micro_batch <= 0 && hf->global_batch <= 0) return;
    /* TrainingArguments as the user would pass them: the flags, else what
     * the file says, else the Trainer's defaults */
    long mb = hf->micro_batch > 0 ? hf->micro_batch : count_of(mb_v) ? count_of(mb_v) : HF_MICRO_BATCH;
    long ga = count_of(ga_v) ? count_of(ga_v) : 1, tb = count_of(tb_v);
    if (hf->global_batch > 0) {
        if (mb < 1 || hf->global_batch % ((long)dp * mb)) {
            jr_fail(f->jr, "$", "train_batch_size", "global batch %d: expected a multiple of micro-batch x "
                    "data-parallel = %ld x %d (the Trainer's train_batch_size is world_size x "
                    "per_device_train_batch_size x gradient_accumulation_steps)", hf->global_batch, mb, dp);
            return;
        }
        ga = hf->global_batch / ((long)dp * mb);
    } else if (!count_of(ga_v) && tb && dp > 0 && tb % (mb * dp) == 0) {
        ga = tb / (mb * dp); /* what a user passing matching arguments would give */
    }
    char why[160];
    snprintf(why, sizeof why, "per_device_train_batch_size%s", hf->micro_batch > 0 ? " = --micro-batch"
             : cJSON_IsNumber(mb_v) ? "" : ", the Trainer's default 8; --micro-batch sets it");
    batch(f, root, "train_micro_batch_size_per_gpu", mb, hf->micro_batch > 0, "--micro-batch", why);
    snprintf(why, sizeof why, "gradient_accumulation_steps%s", hf->global_batch > 0 ? " = --global-batch / (micro-batch "
             "x data-parallel)" : cJSON_IsNumber(ga_v) || cJSON_IsNumber(tb_v) ? "" : ", the Trainer's default 1; "
             "--global-batch sets it");
    batch(f, root, "gradient_accumulation_steps", ga, hf->global_batch > 0, "--global-batch / (micro x dp)", why);
    double total = (double)dp * (double)mb * (double)ga;
    if (total > 67108864.0) { /* 2^26 sequences per step, as the reader's limit */
        jr_fail(f->jr, "$", "train_batch_size", "world_size x micro-batch x accumulation = %d x %ld x %ld: expected at "
                "most 67108864 sequences per step", dp, mb, ga);
        return;
    }
    snprintf(why, sizeof why, "world_size x micro-batch x accumulation = %d x %ld x %ld", dp, mb, ga);
    batch(f, root, "train_batch_size", (long)total, hf->global_batch > 0, "--global-batch", why);
}

/* fp16/bf16/amp "enabled" from the precision the Trainer runs. */
static void fill_precision(filler *f, cJSON *root, const pp_hf_trainer_args *hf, int has_bf16)
{
    int p = hf->precision >= 0 ? hf->precision : has_bf16 ? PP_PREC_BF16 : PP_PREC_FP16;
    int bf = p == PP_PREC_BF16 || p == PP_PREC_FP8, fp = p == PP_PREC_FP16;
    const char *why = hf->precision >= 0 ? "from --precision"
                    : "parplan's default precision, as --bf16 (the Trainer's default is fp32: --precision fp32)";
    cJSON *b16 = cJSON_GetObjectItemCaseSensitive(root, "bf16");
    fill_bool(f, cJSON_GetObjectItemCaseSensitive(root, "fp16"), "$.fp16", "enabled", fp, why);
    fill_bool(f, b16 ? b16 : cJSON_GetObjectItemCaseSensitive(root, "bfloat16"), b16 ? "$.bf16" : "$.bfloat16",
              "enabled", bf, why);
    fill_bool(f, cJSON_GetObjectItemCaseSensitive(root, "amp"), "$.amp", "enabled", 0, "Apex is not used");
    if (hf->precision < 0 || p == PP_PREC_FP8) return;
    /* a precision given against a file that says otherwise */
    static const char *const blocks[] = {"fp16", "bf16"};
    for (int i = 0; i < 2; i++) {
        const cJSON *en = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, blocks[i]), "enabled");
        int want = i == 0 ? fp : bf;
        if (cJSON_IsBool(en) && cJSON_IsTrue(en) != want)
            jr_fail(f->jr, i ? "$.bf16" : "$.fp16", "enabled", "%s in the file, --precision %s: the Hugging Face "
                    "Trainer raises its mismatch error (TrainingArguments --%s); make them agree or set it to "
                    "\"auto\"", cJSON_IsTrue(en) ? "true" : "false", pp_precision_name((pp_precision)p), blocks[i]);
    }
}

/* The optimizer, scheduler and clipping values (no effect on the estimate). */
static void fill_hparams(filler *f, cJSON *root)
{
    group_begin(f);
    fill_num(f, root, "$", "gradient_clipping", HF_MAX_GRAD_NORM, "max_grad_norm, the Trainer's default");
    cJSON *op = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "optimizer"), "params");
    double lr = HF_LR;
    fill_num(f, op, "$.optimizer.params", "lr", HF_LR, "learning_rate, the Trainer's default");
    const cJSON *lv = cJSON_IsObject(op) ? cJSON_GetObjectItemCaseSensitive(op, "lr") : NULL;
    if (cJSON_IsNumber(lv)) lr = lv->valuedouble;
    fill_num(f, op, "$.optimizer.params", "eps", HF_EPS, "adam_epsilon, the Trainer's default");
    fill_num(f, op, "$.optimizer.params", "weight_decay", HF_WEIGHT_DECAY, "weight_decay, the Trainer's default");
    cJSON *betas = cJSON_IsObject(op) ? cJSON_GetObjectItemCaseSensitive(op, "betas") : NULL;
    if (is_auto(betas)) {
        double b[2] = {HF_BETA1, HF_BETA2};
        cJSON_ReplaceItemInObjectCaseSensitive(op, "betas", cJSON_CreateDoubleArray(b, 2));
        note_fill(f, "$.optimizer.params", "betas", "[0.9, 0.999]", "adam_beta1, adam_beta2, the Trainer's defaults");
    }
    cJSON *sp = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "scheduler"), "params");
    fill_num(f, sp, "$.scheduler.params", "warmup_min_lr", 0, "the Trainer always sets 0");
    fill_num(f, sp, "$.scheduler.params", "warmup_max_lr", lr, "learning_rate");
    fill_num(f, sp, "$.scheduler.params", "warmup_num_steps", 0, "warmup_steps, the Trainer's default");
    fill_num(f, sp, "$.scheduler.params", "total_num_steps", 100000, "");
    group_end(f, "its defaults, none changing the estimate");
}

/* ZeRO buckets from the model's hidden size (trainer_config_finalize). */
static void fill_zero(filler *f, cJSON *root, int hidden)
{
    cJSON *z = cJSON_GetObjectItemCaseSensitive(root, "zero_optimization");
    if (!cJSON_IsObject(z)) return;
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(z, "stage");
    double h = hidden;
    group_begin(f);
    char why[96];
    snprintf(why, sizeof why, "hidden x hidden = %d x %d", hidden, hidden);
    fill_num(f, z, "$.zero_optimization", "reduce_bucket_size", h * h, why);
    char what[96];
    snprintf(what, sizeof what, "$.zero_optimization from the hidden size %d", hidden);
    if (!cJSON_IsNumber(st) || st->valuedouble != 3) { /* the others stay "auto": DeepSpeed drops them */
        group_end(f, what);
        return;
    }
    snprintf(why, sizeof why, "0.9 x hidden x hidden, hidden %d", hidden);
    fill_num(f, z, "$.zero_optimization", "stage3_prefetch_bucket_size", floor(0.9 * h * h), why);
    snprintf(why, sizeof why, "10 x hidden = 10 x %d", hidden);
    fill_num(f, z, "$.zero_optimization", "stage3_param_persistence_threshold", 10 * h, why);
    group_end(f, what);
}

void pp__ds_fill_auto(cJSON *root, jr_ctx *jr, const pp_model *m, const pp_cluster *c, int dp,
                      const pp_hf_trainer_args *hf, pp_notes *notes)
{
    pp_hf_trainer_args none = {0, 0, -1};
    filler f = {jr, notes, jr->where};
    if (!hf) hf = &none;
    fill_batch(&f, root, dp, hf);
    if (jr->st != PP_OK) return;
    fill_precision(&f, root, hf, c->gpu.peak_flops[PP_PREC_BF16] > 0);
    if (jr->st != PP_OK) return;
    fill_hparams(&f, root);
    fill_zero(&f, root, m->hidden);
}
