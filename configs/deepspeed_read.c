/*
 * deepspeed_read.c — reads a user's ds_config.json the way DeepSpeed
 * v0.14.5 does (tests/reference/deepspeed_config.md, section numbers
 * below): the batch rule and how missing batch keys are filled in, the
 * pydantic-checked zero_optimization block (unknown keys rejected, "auto"
 * dropped to the default), the plain-dict blocks (unknown keys ignored:
 * warned here), precision and the optimizer wrapper DeepSpeed picks. The
 * result is a strategy the cost model can estimate; DeepSpeed's own
 * failures become errors naming the file and the key.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "configs/emit.h"

typedef struct ds_reader {
    jr_ctx jr;          /* file name, error, sticky status */
    pp_notes *warn;     /* warnings (may be NULL) */
    const pp_model *m;
    const pp_strategy *base; /* what the command line gave */
    int dp;             /* data-parallel size for the batch rule (§2-3) */
} ds_reader;

static void warn(ds_reader *r, const char *path, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* "$", "$.zero_optimization", ...: the JSON path of a block. */
static const char *full_path(const char *path, char *buf, size_t cap)
{
    if (!path || !*path || path[0] == '$') return path && *path ? path : "$";
    snprintf(buf, cap, "$.%s", path);
    return buf;
}

/* Keys come from the file: keep messages on one printable line. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

static void warn(ds_reader *r, const char *path, const char *key, const char *fmt, ...)
{
    char what[PP_NOTE_LEN], pb[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    pp__sbuf line = {0};
    pp__sb_printf(&line, "%s: %s%s%.80s: %s", r->jr.where, full_path(path, pb, sizeof pb), key ? "." : "",
                  key ? key : "", what);
    char *text = pp__sb_take(&line);
    if (!text) return;
    one_line(text);
    pp__note(r->warn, "%s", text);
    free(text);
}

static int dfail(ds_reader *r, const char *path, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* jr_fail with the block path written from the root ("$.fp16"). */
static int dfail(ds_reader *r, const char *path, const char *key, const char *fmt, ...)
{
    char what[PP_ERR_LEN], pb[96], kb[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    one_line(what);
    if (key) {
        snprintf(kb, sizeof kb, "%.80s", key);
        one_line(kb);
    }
    return jr_fail(&r->jr, full_path(path, pb, sizeof pb), key ? kb : NULL, "%s", what);
}

static int is_auto(const cJSON *v) { return cJSON_IsString(v) && strcmp(v->valuestring, "auto") == 0; }

static int in_list(const char *s, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(s, list[i]) == 0) return 1;
    return 0;
}

static int list_len(const char *const *list)
{
    int n = 0;
    while (list[n]) n++;
    return n;
}

/* "(did you mean "x"?)" or "" */
static const char *suggest(const char *s, const char *const *list, char *buf, size_t cap)
{
    const char *near = jr_nearest(s, list, list_len(list));
    if (near && strcmp(near, s) != 0) snprintf(buf, cap, " (did you mean \"%s\"?)", near);
    else buf[0] = '\0';
    return buf;
}

/* Python truthiness of a value DeepSpeed reads with dict.get. */
static int truthy(const cJSON *v)
{
    if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v)) return 0;
    if (cJSON_IsTrue(v)) return 1;
    if (cJSON_IsNumber(v)) return v->valuedouble != 0;
    if (cJSON_IsString(v)) return v->valuestring[0] != '\0';
    return v->child != NULL;
}

/* Warns about keys of a plain-dict block that DeepSpeed never reads. */
static void warn_unread(ds_reader *r, const cJSON *obj, const char *path, const char *const *known, const char *why)
{
    char sug[96];
    for (const cJSON *it = obj ? obj->child : NULL; it; it = it->next)
        if (!in_list(it->string, known))
            warn(r, path, it->string, "unknown key: DeepSpeed %s%s", why, suggest(it->string, known, sug, sizeof sug));
}

/* ------------------------------------------------------------- top level */

/* Top-level keys DeepSpeed v0.14.5 reads (runtime/constants.py and the
 * config classes DeepSpeedConfig builds). Anything else is ignored. */
static const char *const top_keys[] = {
    "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "steps_per_print",
    "dump_state", "disable_allgather", "communication_data_type", "seq_parallel_communication_data_type",
    "prescale_gradients", "gradient_predivide_factor", "sparse_gradients", "zero_optimization",
    "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer", "activation_checkpointing", "comms_logger",
    "tensorboard", "wandb", "csv_monitor", "comet", "gradient_clipping", "fp16", "bf16", "bfloat16", "amp",
    "compression_training", "graph_harvesting", "optimizer", "scheduler", "flops_profiler", "wall_clock_breakdown",
    "memory_breakdown", "autotuning", "eigenvalue", "use_data_before_expert_parallelism", "hybrid_engine",
    "sparse_attention", "pipeline", "progressive_layer_drop", "curriculum_learning", "data_efficiency", "checkpoint",
    "data_types", "aio", "dataloader_drop_last", "nebula", "weight_quantization", "compile", "timers", "elasticity",
    "vocabulary_size", "quantize_training", NULL};

/* ----------------------------------------------------------------- batch */

/* Reads one batch key (§3): absent, or a positive integer. */
static int batch_key(ds_reader *r, const cJSON *root, const char *key, long *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v || cJSON_IsNull(v)) return 0;
    if (is_auto(v))
        return dfail(r, "$", key,
                       "\"auto\" is a Hugging Face Trainer placeholder that the Trainer replaces before DeepSpeed sees "
                       "the file; DeepSpeed itself fails on it (TypeError): give an integer");
    if (!cJSON_IsNumber(v)) return dfail(r, "$", key, "expected a positive integer");
    double d = v->valuedouble;
    if (d != floor(d) || fabs(d) > 2147483647.0)
        return dfail(r, "$", key, "expected an integer, got %g", d);
    *out = (long)d;
    return 1;
}

static long floordiv(long a, long b) { return (long)floor((double)a / (double)b); }

/* All three batch keys fix DeepSpeed's data-parallel size: train_batch_size
 * / (micro x accumulation). With no --cp given and that size a proper
 * divisor of GPUs/(tp*pp), the ranks left over are Ulysses sequence
 * parallelism (its mpu reports dp = world/(tp*pp*sp)): cp is taken from
 * the file, with a warning. 1 when it did, 0 when the sizes do not fit. */
static int ulysses_from_batch(ds_reader *r, pp_strategy *s, long tb, long per_rank)
{
    if (s->cp != 1 || per_rank < 1 || tb % per_rank) return 0;
    long dp = tb / per_rank;
    if (dp < 1 || dp >= r->dp || r->dp % dp) return 0;
    s->cp = (int)(r->dp / dp);
    warn(r, "$", "train_batch_size", "%ld = %ld x data-parallel %ld: the other %d ranks of each tp x pp group are "
         "DeepSpeed-Ulysses sequence parallelism (cp %d; give --cp to say otherwise)", tb, per_rank, dp, s->cp, s->cp);
    r->dp = (int)dp;
    s->dp = r->dp;
    return 1;
}

/* _set_batch_related_parameters then _batch_assertion (config.py:915-975). */
static void read_batch(ds_reader *r, const cJSON *root, pp_strategy *s)
{
    long tb = 0, mb = 0, gas = 0, dp = r->dp;
    int has_tb = batch_key(r, root, "train_batch_size", &tb);
    int has_mb = batch_key(r, root, "train_micro_batch_size_per_gpu", &mb);
    int has_gas = batch_key(r, root, "gradient_accumulation_steps", &gas);
    if (r->jr.st) return;
    if (has_mb && mb == 0 && has_tb && !has_gas) {
        dfail(r, "$", "train_micro_batch_size_per_gpu",
                "0: DeepSpeed divides the batch by it (ZeroDivisionError); expected a positive integer");
        return;
    }
    if (has_tb && has_mb && has_gas) {
    } else if (has_tb && has_mb) {
        gas = floordiv(floordiv(tb, mb), dp);
        warn(r, "$", "gradient_accumulation_steps", "absent: DeepSpeed sets it to train_batch_size // micro batch // "
             "data-parallel size = %ld // %ld // %ld = %ld", tb, mb, dp, gas);
    } else if (has_tb && has_gas) {
        if (gas == 0) {
            dfail(r, "$", "gradient_accumulation_steps",
                    "0: DeepSpeed divides the batch by it (ZeroDivisionError); expected a positive integer");
            return;
        }
        mb = floordiv(floordiv(tb, dp), gas);
        warn(r, "$", "train_micro_batch_size_per_gpu", "absent: DeepSpeed sets it to train_batch_size // "
             "data-parallel size // gradient_accumulation_steps = %ld // %ld // %ld = %ld", tb, dp, gas, mb);
    } else if (has_mb && has_gas) {
        tb = (double)mb * gas * dp > 2147483647.0 ? -1 : mb * gas * dp;
        if (tb < 0) {
            dfail(r, "$", "train_micro_batch_size_per_gpu", "%ld x %ld x data-parallel %ld sequences per step: expected "
                  "at most %d", mb, gas, dp, 1 << 26);
            return;
        }
    } else if (has_tb) {
        gas = 1;
        mb = floordiv(tb, dp);
        warn(r, "$", "train_micro_batch_size_per_gpu", "absent: DeepSpeed sets gradient_accumulation_steps = 1 and "
             "the micro batch to train_batch_size // data-parallel size = %ld // %ld = %ld", tb, dp, mb);
    } else if (has_mb) {
        gas = 1;
        tb = mb * dp; /* mb < 2^31, dp < 2^24 */
    } else {
        dfail(r, "$", "train_batch_size",
                "missing: DeepSpeed asserts \"Either train_batch_size or train_micro_batch_size_per_gpu needs to be "
                "provided\"");
        return;
    }
    if (tb <= 0) {
        dfail(r, "$", "train_batch_size", "DeepSpeed asserts \"Train batch size: %ld has to be greater than 0\"", tb);
    } else if (mb <= 0) {
        dfail(r, "$", "train_micro_batch_size_per_gpu",
                "DeepSpeed asserts \"Micro batch size per gpu: %ld has to be greater than 0\"%s", mb,
                has_mb ? "" : " (filled in from train_batch_size, which is smaller than the data-parallel size)");
    } else if (gas <= 0) {
        dfail(r, "$", "gradient_accumulation_steps",
                "DeepSpeed asserts \"Gradient accumulation steps: %ld has to be greater than 0\"%s", gas,
                has_gas ? "" : " (filled in by floor division: train_batch_size is smaller than micro batch x "
                               "data-parallel size)");
    } else if ((double)tb != (double)mb * gas * dp && !ulysses_from_batch(r, s, tb, mb * gas)) {
        dfail(r, "$", "train_batch_size",
                "DeepSpeed asserts \"train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * "
                "world_size %ld != %ld * %ld * %ld\" (world_size is the data-parallel size GPUs/(tp*pp*cp) = %ld)",
                tb, mb, gas, dp, dp);
    } else if (tb > 1 << 26) {
        dfail(r, "$", "train_batch_size", "%ld sequences per step: expected at most %d", tb, 1 << 26);
    }
    s->micro_batch = (int)mb;
    s->grad_accum = (int)gas;
    s->global_batch = (int)tb;
}

/* ------------------------------------------------------------- precision */

typedef enum { DT_FP32, DT_FP16, DT_BF16 } ds_dtype;

static const char *dtype_name(ds_dtype d) { return d == DT_FP16 ? "fp16" : d == DT_BF16 ? "bf16" : "fp32"; }

static const char *const fp16_keys[] = {"enabled", "auto_cast", "loss_scale", "initial_scale_power",
                                        "loss_scale_window", "hysteresis", "consecutive_hysteresis",
                                        "min_loss_scale", "fp16_master_weights_and_grads", NULL};
static const char *const bf16_keys[] = {"enabled", "immediate_grad_update", NULL};

/* "enabled" of a plain-dict block, with DeepSpeed's truthiness. */
static int block_enabled(ds_reader *r, const cJSON *blk, const char *name)
{
    if (!blk) return 0;
    if (!cJSON_IsObject(blk)) {
        dfail(r, "$", name, "expected an object such as {\"enabled\": true}");
        return 0;
    }
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(blk, "enabled");
    if (is_auto(en))
        warn(r, name, "enabled", "\"auto\" is a Hugging Face Trainer placeholder; DeepSpeed reads the string as true");
    else if (en && !cJSON_IsBool(en) && !cJSON_IsNull(en))
        warn(r, name, "enabled", "not a boolean; DeepSpeed uses its truth value (%s)", truthy(en) ? "on" : "off");
    return truthy(en);
}

/* A number in a plain-dict block: "auto" or a non-number fails the way
 * DeepSpeed fails when it uses the value. */
static int plain_num(ds_reader *r, const cJSON *obj, const char *path, const char *key, double lo, double hi,
                     double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) return 0;
    if (is_auto(v))
        return dfail(r, path, key,
                       "\"auto\" is a Hugging Face Trainer placeholder; DeepSpeed itself passes the string on and "
                       "fails (TypeError): give a number");
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return dfail(r, path, key, "expected a number in [%g, %g]", lo, hi);
    *out = v->valuedouble;
    return 1;
}

static void read_fp16_params(ds_reader *r, const cJSON *fp16, const char *name, pp_hparams *hp, int zero_stage)
{
    double x;
    warn_unread(r, fp16, name, fp16_keys, "ignores it");
    if (plain_num(r, fp16, name, "loss_scale", 0, 1e30, &x) && x > 0)
        warn(r, name, "loss_scale", "%g: a static loss scale; parplan's files use dynamic scaling (0)", x);
    if (plain_num(r, fp16, name, "initial_scale_power", 0, 63, &x)) hp->initial_scale_power = (int)x;
    if (plain_num(r, fp16, name, "loss_scale_window", 1, 1e9, &x)) hp->loss_scale_window = (int)x;
    if (plain_num(r, fp16, name, "hysteresis", 1, 1e9, &x)) hp->hysteresis = (int)x;
    if (plain_num(r, fp16, name, "min_loss_scale", 1e-30, 1e30, &x)) hp->min_loss_scale = x;
    if (truthy(cJSON_GetObjectItemCaseSensitive(fp16, "fp16_master_weights_and_grads"))) {
        if (zero_stage != 2)
            dfail(r, name, "fp16_master_weights_and_grads",
                    "DeepSpeed asserts it needs ZeRO stage 2 (this file has stage %d)", zero_stage);
        else
            warn(r, name, "fp16_master_weights_and_grads",
                 "fp16 master weights are not modeled: the estimate counts fp32 master weights (conservative)");
    }
}

/* fp16 / bf16 / amp blocks and the model dtype (§5). */
static ds_dtype read_precision(ds_reader *r, const cJSON *root, pp_hparams *hp, int zero_stage)
{
    const cJSON *fp16 = cJSON_GetObjectItemCaseSensitive(root, "fp16");
    const cJSON *bf16 = cJSON_GetObjectItemCaseSensitive(root, "bf16");
    const cJSON *bf_old = cJSON_GetObjectItemCaseSensitive(root, "bfloat16");
    const char *bf_name = "bf16";
    if (!bf16 && bf_old) {
        bf16 = bf_old;
        bf_name = "bfloat16";
    } else if (bf16 && bf_old) {
        warn(r, "$", "bfloat16", "ignored: DeepSpeed reads \"bf16\" first");
    }
    int f = block_enabled(r, fp16, "fp16");
    int b = block_enabled(r, bf16, bf_name);
    if (r->jr.st) return DT_FP32;
    if (bf16) warn_unread(r, bf16, bf_name, bf16_keys, "ignores it (bf16 uses no loss scaling)");
    if (f && b) {
        dfail(r, "$", "bf16", "DeepSpeed asserts \"bfloat16 and fp16 modes cannot be simultaneously enabled\"");
        return DT_FP32;
    }
    if (f) read_fp16_params(r, fp16, "fp16", hp, zero_stage);
    const cJSON *amp = cJSON_GetObjectItemCaseSensitive(root, "amp");
    if (amp && cJSON_IsObject(amp) && truthy(cJSON_GetObjectItemCaseSensitive(amp, "enabled"))) {
        if (zero_stage > 0)
            dfail(r, "amp", "enabled",
                    "DeepSpeed asserts \"Amp and ZeRO are not currently compatible\"; use fp16 or bf16");
        else
            dfail(r, "amp", "enabled", "Apex amp is not modeled by parplan; use the fp16 or bf16 block");
    }
    const cJSON *cdt = cJSON_GetObjectItemCaseSensitive(root, "communication_data_type");
    if (cdt && !cJSON_IsNull(cdt)) {
        if (!cJSON_IsString(cdt) || (strcasecmp(cdt->valuestring, "fp16") && strcasecmp(cdt->valuestring, "bf16") &&
                                     strcasecmp(cdt->valuestring, "fp32")))
            dfail(r, "$", "communication_data_type",
                    "DeepSpeed raises ValueError: Invalid communication_data_type; expected fp16, bf16 or fp32");
        else
            warn(r, "$", "communication_data_type", "\"%s\": not modeled; parplan times gradient traffic in the "
                 "gradient dtype", cdt->valuestring);
    }
    return f ? DT_FP16 : b ? DT_BF16 : DT_FP32;
}

/* data_types.grad_accum_dtype (DtypeEnum names); -1 when absent. */
static int read_grad_dtype(ds_reader *r, const cJSON *root)
{
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(root, "data_types");
    if (!dt || cJSON_IsNull(dt)) return -1;
    if (!cJSON_IsObject(dt)) return dfail(r, "$", "data_types", "expected an object"), -1;
    static const char *const dt_keys[] = {"grad_accum_dtype", NULL};
    warn_unread(r, dt, "data_types", dt_keys, "ignores it");
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(dt, "grad_accum_dtype");
    if (!g || cJSON_IsNull(g)) return -1;
    static const char *const f32[] = {"fp32", "float32", "float", "torch.float32", NULL};
    static const char *const f16[] = {"fp16", "float16", "half", "torch.float16", NULL};
    static const char *const b16[] = {"bf16", "bfloat16", "bfloat", "torch.bfloat16", NULL};
    if (cJSON_IsString(g)) {
        if (in_list(g->valuestring, f32)) return DT_FP32;
        if (in_list(g->valuestring, f16)) return DT_FP16;
        if (in_list(g->valuestring, b16)) return DT_BF16;
    }
    dfail(r, "data_types", "grad_accum_dtype",
            "expected \"fp32\", \"fp16\" or \"bf16\" (DeepSpeed's DtypeEnum raises ValueError otherwise)");
    return -1;
}

/* --------------------------------------------------------------- ZeRO (§4) */

static const char *const zero_keys[] = {
    "stage", "contiguous_gradients", "reduce_scatter", "reduce_bucket_size", "use_multi_rank_bucket_allreduce",
    "allgather_partitions", "allgather_bucket_size", "overlap_comm", "load_from_fp32_weights", "elastic_checkpoint",
    "offload_param", "offload_optimizer", "sub_group_size", "cpu_offload_param", "cpu_offload_use_pin_memory",
    "cpu_offload", "prefetch_bucket_size", "stage3_prefetch_bucket_size", "param_persistence_threshold",
    "stage3_param_persistence_threshold", "model_persistence_threshold", "stage3_model_persistence_threshold",
    "max_live_parameters", "stage3_max_live_parameters", "max_reuse_distance", "stage3_max_reuse_distance",
    "gather_16bit_weights_on_model_save", "stage3_gather_16bit_weights_on_model_save",
    "stage3_gather_fp16_weights_on_model_save", "use_all_reduce_for_fetch_params",
    "stage3_use_all_reduce_for_fetch_params", "ignore_unused_parameters", "legacy_stage1", "round_robin_gradients",
    "zero_hpz_partition_size", "zero_quantized_weights", "zero_quantized_nontrainable_weights",
    "zero_quantized_gradients", "mics_shard_size", "mics_hierarchical_params_gather", "memory_efficient_linear",
    "pipeline_loading_checkpoint", "override_module_apply", NULL};
static const char *const offopt_keys[] = {"device", "nvme_path", "buffer_count", "pin_memory", "pipeline_read",
                                          "pipeline_write", "fast_init", "ratio", NULL};
static const char *const offpar_keys[] = {"device", "nvme_path", "buffer_count", "buffer_size", "max_in_cpu",
                                          "pin_memory", NULL};

typedef enum { DEV_NONE, DEV_CPU, DEV_NVME } ds_device;

typedef struct ds_zero {
    int stage;
    int overlap_comm;       /* after the stage default */
    int overlap_given;
    double reduce_bucket, allgather_bucket, prefetch, persistence, max_live, sub_group;
    int reduce_given, allgather_given, stage3_given;
    ds_device opt_dev, par_dev;
    int pin_memory;
    double ratio;
    char nvme_path[PP_TEXT_LEN];
} ds_zero;

/* pydantic with extra="forbid": unknown keys are errors, "auto" values
 * are dropped (DeepSpeed then uses the default), types are checked. */
static int zero_check_keys(ds_reader *r, const cJSON *obj, const char *path, const char *const *known)
{
    char sug[96];
    for (const cJSON *it = obj->child; it && r->jr.st == PP_OK; it = it->next) {
        if (!in_list(it->string, known))
            return dfail(r, path, it->string, "unknown key: DeepSpeed rejects it (extra fields not permitted)%s",
                           suggest(it->string, known, sug, sizeof sug));
        if (is_auto(it)) warn(r, path, it->string, "\"auto\": DeepSpeed drops it and uses its default");
    }
    return 1;
}

static const cJSON *zget(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return v && !cJSON_IsNull(v) && !is_auto(v) ? v : NULL;
}

/* pydantic bool: true/false, or 0/1. */
static int zbool(ds_reader *r, const cJSON *obj, const char *path, const char *key, int def, int *given)
{
    const cJSON *v = zget(obj, key);
    if (given) *given = v != NULL;
    if (!v) return def;
    if (cJSON_IsBool(v)) return cJSON_IsTrue(v);
    if (cJSON_IsNumber(v) && (v->valuedouble == 0 || v->valuedouble == 1)) return v->valuedouble != 0;
    dfail(r, path, key, "expected true or false (DeepSpeed's pydantic check rejects other values)");
    return def;
}

/* pydantic int >= 0 (floats truncated, as pydantic v1 does). */
static double zcount(ds_reader *r, const cJSON *obj, const char *path, const char *key, double def, int *given)
{
    const cJSON *v = zget(obj, key);
    if (given) *given = v != NULL;
    if (!v) return def;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 || v->valuedouble > 9.2e18) {
        dfail(r, path, key, "expected an integer >= 0 (DeepSpeed's pydantic check: ge=0)");
        return def;
    }
    return floor(v->valuedouble);
}

/* The value of an aliased field (stage3_x or x). */
static double zcount2(ds_reader *r, const cJSON *obj, const char *k1, const char *k2, double def, int *given)
{
    int g1 = 0, g2 = 0;
    double a = zcount(r, obj, "zero_optimization", k1, def, &g1);
    double b = zcount(r, obj, "zero_optimization", k2, def, &g2);
    if (g1 && g2 && a != b) warn(r, "zero_optimization", k2, "given together with %s; parplan uses %s", k1, k1);
    *given = g1 || g2;
    return g1 ? a : b;
}

static ds_device zdevice(ds_reader *r, const cJSON *obj, const char *path)
{
    const cJSON *v = zget(obj, "device");
    if (!v) return DEV_NONE;
    if (cJSON_IsString(v)) {
        if (!strcmp(v->valuestring, "none")) return DEV_NONE;
        if (!strcmp(v->valuestring, "cpu")) return DEV_CPU;
        if (!strcmp(v->valuestring, "nvme")) return DEV_NVME;
    }
    dfail(r, path, "device", "expected \"none\", \"cpu\" or \"nvme\" (DeepSpeed rejects other devices)");
    return DEV_NONE;
}

static void read_offload(ds_reader *r, const cJSON *z, const char *key, const char *const *known, ds_device *dev,
                         ds_zero *out)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(z, key);
    if (!o || cJSON_IsNull(o)) return;
    char path[64];
    snprintf(path, sizeof path, "$.zero_optimization.%s", key);
    if (!cJSON_IsObject(o)) {
        dfail(r, "zero_optimization", key, "expected an object or null");
        return;
    }
    zero_check_keys(r, o, path, known);
    *dev = zdevice(r, o, path);
    int given = 0;
    int pin = zbool(r, o, path, "pin_memory", 0, &given);
    if (given && *dev != DEV_NONE) out->pin_memory = pin;
    if (given && !pin && *dev != DEV_NONE)
        warn(r, path, "pin_memory", "false: not priced (the estimate times pinned host copies; pageable ones are "
             "slower)");
    const cJSON *np = zget(o, "nvme_path");
    if (np && !cJSON_IsString(np)) dfail(r, path, "nvme_path", "expected a string");
    else if (np && *dev == DEV_NVME) snprintf(out->nvme_path, sizeof out->nvme_path, "%s", np->valuestring);
    if (known == offopt_keys) {
        const cJSON *ratio = zget(o, "ratio");
        if (ratio && (!cJSON_IsNumber(ratio) || ratio->valuedouble < 0 || ratio->valuedouble > 1))
            dfail(r, path, "ratio", "expected a number in [0, 1]");
        else if (ratio) out->ratio = ratio->valuedouble;
    }
}

static void read_zero(ds_reader *r, const cJSON *root, ds_zero *zo)
{
    memset(zo, 0, sizeof *zo);
    zo->reduce_bucket = zo->allgather_bucket = 5e8;
    zo->prefetch = 5e7;
    zo->persistence = 1e5;
    zo->max_live = 1e9;
    zo->ratio = 1;
    zo->pin_memory = 0;
    const cJSON *z = cJSON_GetObjectItemCaseSensitive(root, "zero_optimization");
    if (!z || cJSON_IsNull(z)) return;
    if (cJSON_IsBool(z)) {
        zo->stage = cJSON_IsTrue(z) ? 1 : 0;
        warn(r, "$", "zero_optimization", "a bare boolean is DeepSpeed's deprecated form (true = stage %d)", zo->stage);
        return;
    }
    if (!cJSON_IsObject(z)) {
        dfail(r, "$", "zero_optimization", "expected an object such as {\"stage\": 1}");
        return;
    }
    const char *P = "zero_optimization";
    zero_check_keys(r, z, P, zero_keys);
    const cJSON *st = zget(z, "stage");
    if (st) {
        if (cJSON_IsString(st))
            dfail(r, P, "stage", "\"%.8s\" is a string: DeepSpeed 0.14.5 rejects it; write the number",
                    st->valuestring);
        else if (!cJSON_IsNumber(st) || st->valuedouble != floor(st->valuedouble) || st->valuedouble < 0 ||
                 st->valuedouble > 3)
            dfail(r, P, "stage", "DeepSpeed rejects it: value is not a valid enumeration member; permitted: 0, "
                    "1, 2, 3");
        else
            zo->stage = (int)st->valuedouble;
    }
    if (r->jr.st) return;
    zo->overlap_comm = zbool(r, z, P, "overlap_comm", zo->stage == 3, &zo->overlap_given);
    static const char *const bools[] = {"contiguous_gradients", "reduce_scatter", "use_multi_rank_bucket_allreduce",
                                        "allgather_partitions", "load_from_fp32_weights", "elastic_checkpoint",
                                        "cpu_offload_param", "cpu_offload_use_pin_memory", "cpu_offload",
                                        "gather_16bit_weights_on_model_save",
                                        "stage3_gather_16bit_weights_on_model_save",
                                        "stage3_gather_fp16_weights_on_model_save", "use_all_reduce_for_fetch_params",
                                        "stage3_use_all_reduce_for_fetch_params", "ignore_unused_parameters",
                                        "legacy_stage1", "round_robin_gradients", "zero_quantized_weights",
                                        "zero_quantized_nontrainable_weights", "zero_quantized_gradients",
                                        "mics_hierarchical_params_gather", "memory_efficient_linear",
                                        "pipeline_loading_checkpoint", "override_module_apply", NULL};
    for (int i = 0; bools[i]; i++) zbool(r, z, P, bools[i], 0, NULL);
    static const char *const counts[] = {"zero_hpz_partition_size", "stage3_model_persistence_threshold",
                                         "model_persistence_threshold", "stage3_max_reuse_distance",
                                         "max_reuse_distance", NULL};
    for (int i = 0; counts[i]; i++) zcount(r, z, P, counts[i], 0, NULL);
    zo->sub_group = zcount(r, z, P, "sub_group_size", 1e9, NULL);
    zo->reduce_bucket = zcount(r, z, P, "reduce_bucket_size", 5e8, &zo->reduce_given);
    zo->allgather_bucket = zcount(r, z, P, "allgather_bucket_size", 5e8, &zo->allgather_given);
    int g1, g2, g3;
    zo->prefetch = zcount2(r, z, "stage3_prefetch_bucket_size", "prefetch_bucket_size", 5e7, &g1);
    zo->persistence = zcount2(r, z, "stage3_param_persistence_threshold", "param_persistence_threshold", 1e5, &g2);
    zo->max_live = zcount2(r, z, "stage3_max_live_parameters", "max_live_parameters", 1e9, &g3);
    zo->stage3_given = g1 || g2 || g3;
    /* read and written, not priced (red team rt9): which tensors stay whole
     * (norms and biases below the threshold: megabytes), a non-contiguous
     * gradient layout (fragmentation), pageable offload copies (slower) */
    if (g2 && zo->persistence > 1e7)
        warn(r, P, "stage3_param_persistence_threshold", "%.4g elements: not priced; parplan partitions every tensor "
             "(tensors below the threshold stay whole on every rank)", zo->persistence);
    int cg_given = 0;
    if (!zbool(r, z, P, "contiguous_gradients", 1, &cg_given) && cg_given)
        warn(r, P, "contiguous_gradients", "false: not priced (the estimate assumes DeepSpeed's contiguous gradient "
             "buffer; without it fragmentation grows)");
    if (zbool(r, z, P, "legacy_stage1", 0, NULL))
        dfail(r, P, "legacy_stage1", "true: DeepSpeed raises at engine start-up (legacy stage 1 was removed)");
    if (zbool(r, z, P, "cpu_offload", 0, NULL)) {
        warn(r, P, "cpu_offload", "deprecated: DeepSpeed turns it into offload_optimizer {\"device\": \"cpu\"}");
        zo->opt_dev = DEV_CPU;
    }
    if (zbool(r, z, P, "cpu_offload_param", 0, NULL)) {
        warn(r, P, "cpu_offload_param", "deprecated: DeepSpeed turns it into offload_param {\"device\": \"cpu\"}");
        zo->par_dev = DEV_CPU;
    }
    zo->pin_memory = zbool(r, z, P, "cpu_offload_use_pin_memory", 0, NULL);
    read_offload(r, z, "offload_optimizer", offopt_keys, &zo->opt_dev, zo);
    read_offload(r, z, "offload_param", offpar_keys, &zo->par_dev, zo);
    if (zbool(r, z, P, "zero_quantized_weights", 0, NULL) || zbool(r, z, P, "zero_quantized_gradients", 0, NULL) ||
        zcount(r, z, P, "zero_hpz_partition_size", 1, NULL) > 1)
        warn(r, P, "zero_quantized_weights", "ZeRO++ (quantized weights/gradients, hpZ) is not modeled: the estimate "
             "uses plain ZeRO-%d traffic and memory", zo->stage);
    const cJSON *mics = zget(z, "mics_shard_size");
    if (mics && (!cJSON_IsNumber(mics) || mics->valuedouble != floor(mics->valuedouble)))
        dfail(r, P, "mics_shard_size", "expected an integer");
    else if (mics && mics->valuedouble > 0)
        warn(r, P, "mics_shard_size", "MiCS is not modeled: the estimate shards over all data-parallel ranks");
}

/* Offload as parplan models it, after DeepSpeed's stage rules. */
static pp_offload map_offload(ds_reader *r, ds_zero *zo)
{
    const char *P = "zero_optimization";
    if (zo->stage == 0) {
        if (zo->opt_dev != DEV_NONE)
            warn(r, P, "offload_optimizer", "ignored at stage 0: DeepSpeed builds no ZeRO optimizer to offload");
        if (zo->par_dev != DEV_NONE) warn(r, P, "offload_param", "ignored: parameters are offloaded only at stage 3");
        return PP_OFFLOAD_NONE;
    }
    if (zo->stage < 3) {
        if (zo->par_dev != DEV_NONE)
            warn(r, P, "offload_param", "ignored at stage %d: DeepSpeed uses offload_param only at stage 3", zo->stage);
        if (zo->opt_dev == DEV_NVME) {
            warn(r, P, "offload_optimizer", "device nvme is used only at stage 3 (ZeRO-Infinity); at stage %d "
                 "DeepSpeed's zero_cpu_offload() is false and nothing is offloaded", zo->stage);
            return PP_OFFLOAD_NONE;
        }
        if (zo->ratio < 1)
            warn(r, P, "offload_optimizer", "ratio %g: partial offload is meant for stage 3 (0.14.5 accepts it by a "
                 "bug, 0.16 rejects it); estimating full offload", zo->ratio);
        return zo->opt_dev == DEV_CPU ? PP_OFFLOAD_OPTIMIZER : PP_OFFLOAD_NONE;
    }
    if (zo->opt_dev == DEV_NONE && zo->par_dev != DEV_NONE) {
        dfail(r, P, "offload_param",
                "parameters offloaded with the optimizer states on the GPU: parplan does not model this combination "
                "(it offloads optimizer states first); add offload_optimizer");
        return PP_OFFLOAD_NONE;
    }
    if (zo->ratio < 1)
        warn(r, P, "offload_optimizer", "ratio %g: partial offload is not modeled; estimating full offload", zo->ratio);
    if (zo->opt_dev == DEV_NVME || zo->par_dev == DEV_NVME) {
        if (zo->opt_dev != zo->par_dev)
            warn(r, P, "offload_param", "optimizer on %s, parameters on %s: parplan models NVMe offload of both",
                 zo->opt_dev == DEV_NVME ? "nvme" : "cpu", zo->par_dev == DEV_NVME ? "nvme" : zo->par_dev ? "cpu" : "the GPU");
        if (!zo->nvme_path[0])
            warn(r, P, "offload_optimizer", "device nvme without nvme_path: DeepSpeed accepts it and fails when it "
                 "starts swapping");
        return PP_OFFLOAD_NVME;
    }
    if (zo->opt_dev == DEV_CPU) return zo->par_dev == DEV_CPU ? PP_OFFLOAD_OPT_PARAMS : PP_OFFLOAD_OPTIMIZER;
    return PP_OFFLOAD_NONE;
}

/* Which optimizer wrapper DeepSpeed picks and what gradients cost
 * (engine.py get_data_types and _do_optimizer_sanity_check). */
static void map_wrapper(ds_reader *r, ds_dtype model, int grad_given, ds_zero *zo, pp_strategy *s)
{
    int explicit_grad = grad_given >= 0;
    ds_dtype grad = explicit_grad ? (ds_dtype)grad_given : (model == DT_BF16 && zo->stage == 0 ? DT_FP32 : model);
    int cpu_offload = zo->opt_dev == DEV_CPU;
    s->grad_accum_dtype = PP_GRAD_16;
    if (zo->stage >= 1) {
        if (model == DT_BF16 && grad == DT_FP32 && zo->stage == 1 && !cpu_offload) {
            s->zero = 1;
            s->grad_accum_dtype = PP_GRAD_16_FP32;
            return;
        }
        s->zero = zo->stage;
        if (explicit_grad && grad != model)
            warn(r, "data_types", "grad_accum_dtype", "%s is not used by DeepSpeed's ZeRO optimizer at stage %d%s; "
                 "gradients accumulate in %s", dtype_name(grad), zo->stage, cpu_offload ? " with offload" : "",
                 dtype_name(model));
        return;
    }
    s->zero = 0;
    if (model == grad) {
        if (model == DT_BF16) {
            if (s->pp > 1) {
                warn(r, "data_types", "grad_accum_dtype", "bf16: BF16_Optimizer accumulates in bf16 under pipeline "
                     "parallelism (DeepSpeed warns this is numerically unsafe); estimating 16-bit gradients");
                s->zero = 1;
                return;
            }
            dfail(r, "data_types", "grad_accum_dtype",
                    "bf16 without ZeRO: DeepSpeed raises NotImplementedError (\"Bfloat16 wrapper must use a gradient "
                    "accumulation type of fp32, enable ZeRO to use Bfloat16 gradient accumulation\")");
        }
        return; /* fp16: FP16_Optimizer; fp32: the bare optimizer */
    }
    if (model == DT_BF16 && grad == DT_FP32) { /* BF16_Optimizer: shards like ZeRO-1 (pp__zero_states) */
        s->zero = 0;
        s->grad_accum_dtype = PP_GRAD_16_FP32;
        return;
    }
    dfail(r, "data_types", "grad_accum_dtype",
            "%s with %s gradient accumulation and no ZeRO: DeepSpeed raises NotImplementedError (unsupported mix of "
            "model dtype and gradient accumulation type)", dtype_name(model), dtype_name(grad));
}

/* ----------------------------------------------------- optimizer (§8) */

static const char *const ds_optimizers[] = {"adagrad", "adam", "adamw", "lamb", "onebitadam", "zerooneadam",
                                            "onebitlamb", "lion", "muadam", "muadamw", "musgd", NULL};
static const char *const torch_optimizers[] = {"Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "ASGD",
                                               "LBFGS", "NAdam", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam",
                                               NULL};
/* engine.py ZERO_SUPPORTED_OPTIMIZERS, by config name */
static const char *const zero_supported[] = {"adam", "adamw", "Adam", "AdamW", "adagrad", "Adagrad", "lion", "lamb",
                                             NULL};
static const char *const adam_params[] = {"lr", "betas", "eps", "weight_decay", "bias_correction", "amsgrad",
                                          "adam_w_mode", "torch_adam", "set_grad_none", "fused", "foreach",
                                          "capturable", "differentiable", "maximize", NULL};

static pp_optimizer optimizer_kind(ds_reader *r, const char *name, const cJSON *par)
{
    static const char *const two_state[] = {"adam", "adamw", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "muadam",
                                            "muadamw", "onebitadam", "zerooneadam", "lamb", "onebitlamb", "Adadelta",
                                            "SparseAdam", NULL};
    if (in_list(name, two_state)) return PP_OPT_ADAMW;
    if (!strcmp(name, "SGD") || !strcmp(name, "musgd")) return PP_OPT_SGD;
    if (!strcmp(name, "Adafactor")) return PP_OPT_ADAFACTOR;
    if (!strcmp(name, "lion")) return PP_OPT_LION;
    if (!strcmp(name, "adagrad") || !strcmp(name, "Adagrad")) return PP_OPT_ADAGRAD;
    if (!strcmp(name, "RMSprop")) {
        const cJSON *mom = par && cJSON_IsObject(par) ? cJSON_GetObjectItemCaseSensitive(par, "momentum") : NULL;
        if (mom && cJSON_IsNumber(mom) && mom->valuedouble > 0)
            warn(r, "optimizer.params", "momentum", "RMSprop with momentum keeps a second buffer; the estimate counts "
                 "one (momentum 0)");
        return PP_OPT_RMSPROP;
    }
    warn(r, "optimizer", "type", "%s is not modeled: estimated with AdamW's two fp32 states", name);
    return PP_OPT_ADAMW;
}

static void read_optimizer(ds_reader *r, const cJSON *root, ds_zero *zo, pp_strategy *s, pp_deepspeed_opts *o)
{
    const cJSON *opt = cJSON_GetObjectItemCaseSensitive(root, "optimizer");
    int allow_untested = truthy(cJSON_GetObjectItemCaseSensitive(root, "zero_allow_untested_optimizer"));
    const cJSON *force = cJSON_GetObjectItemCaseSensitive(root, "zero_force_ds_cpu_optimizer");
    int force_cpu = force ? truthy(force) : 1;
    const cJSON *type = opt && cJSON_IsObject(opt) ? cJSON_GetObjectItemCaseSensitive(opt, "type") : NULL;
    if (opt && !cJSON_IsNull(opt) && !cJSON_IsObject(opt)) {
        dfail(r, "$", "optimizer", "expected an object {\"type\": ..., \"params\": {...}}");
        return;
    }
    if (!type || cJSON_IsNull(type)) {
        o->client_optimizer = 1;
        if (opt) warn(r, "optimizer", "type", "absent: DeepSpeed builds no optimizer from this block");
        pp__note(r->warn, "%s: no optimizer in the file: the training script passes its own; estimating %s "
                 "(--optimizer)", r->jr.where, pp_optimizer_name(s->optimizer));
        if (s->offload != PP_OFFLOAD_NONE && force_cpu && s->optimizer == PP_OPT_ADAMW)
            pp__note(r->warn, "%s: with offload the script's optimizer must be DeepSpeedCPUAdam, or DeepSpeed raises "
                     "ZeRORuntimeException (set \"zero_force_ds_cpu_optimizer\": false to allow others)", r->jr.where);
        return;
    }
    if (!cJSON_IsString(type)) {
        dfail(r, "optimizer", "type", "expected a string such as \"AdamW\"");
        return;
    }
    char name[64], sug[96];
    snprintf(name, sizeof name, "%s", type->valuestring);
    char lower[64];
    for (size_t i = 0; i <= strlen(name); i++) lower[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
    if (in_list(lower, ds_optimizers)) {
        memcpy(name, lower, sizeof name);
    } else if (!in_list(name, torch_optimizers)) {
        const char *all[32];
        int n = 0;
        for (int i = 0; ds_optimizers[i]; i++) all[n++] = ds_optimizers[i];
        for (int i = 0; torch_optimizers[i] && n < 31; i++) all[n++] = torch_optimizers[i];
        all[n] = NULL;
        dfail(r, "optimizer", "type", "\"%s\" is neither a DeepSpeed optimizer nor a torch.optim class: "
                "DeepSpeed fails at start-up%s", name, suggest(name, all, sug, sizeof sug));
        return;
    }
    if (zo->stage >= 1 && (!strcmp(name, "onebitadam") || !strcmp(name, "zerooneadam") || !strcmp(name, "onebitlamb"))) {
        dfail(r, "optimizer", "type", "%s: DeepSpeed asserts it is not compatible with ZeRO (stage %d)", name,
                zo->stage);
        return;
    }
    if (zo->stage >= 1 && !in_list(name, zero_supported) && !allow_untested) {
        dfail(r, "optimizer", "type", "%s with ZeRO: DeepSpeed asserts \"You are using an untested ZeRO "
                "Optimizer\"; add \"zero_allow_untested_optimizer\": true", name);
        return;
    }
    const cJSON *par = cJSON_GetObjectItemCaseSensitive(opt, "params");
    s->optimizer = optimizer_kind(r, name, par);
    o->client_optimizer = 0;
    if (!par || cJSON_IsNull(par)) return;
    if (!cJSON_IsObject(par)) {
        dfail(r, "optimizer", "params", "expected an object of constructor arguments");
        return;
    }
    if (cJSON_GetObjectItemCaseSensitive(par, "max_grad_norm"))
        dfail(r, "optimizer.params", "max_grad_norm",
                "DeepSpeed raises ValueError: use the top-level \"gradient_clipping\" instead");
    pp_hparams *hp = &o->hp;
    double x;
    if (plain_num(r, par, "optimizer.params", "lr", 1e-12, 10, &x)) hp->lr = x;
    if (plain_num(r, par, "optimizer.params", "eps", 1e-30, 1, &x)) hp->eps = x;
    if (plain_num(r, par, "optimizer.params", "weight_decay", 0, 10, &x)) hp->weight_decay = x;
    if (plain_num(r, par, "optimizer.params", "momentum", 0, 0.999999, &x)) hp->momentum = x;
    const cJSON *betas = cJSON_GetObjectItemCaseSensitive(par, "betas");
    if (betas && !cJSON_IsNull(betas)) {
        if (is_auto(betas))
            dfail(r, "optimizer.params", "betas", "\"auto\" is a Hugging Face Trainer placeholder; DeepSpeed "
                    "passes the string to the optimizer and fails: give [beta1, beta2]");
        else if (!cJSON_IsArray(betas) || cJSON_GetArraySize(betas) != 2 ||
                 !cJSON_IsNumber(cJSON_GetArrayItem(betas, 0)) || !cJSON_IsNumber(cJSON_GetArrayItem(betas, 1)))
            dfail(r, "optimizer.params", "betas", "expected [beta1, beta2]");
        else {
            hp->beta1 = cJSON_GetArrayItem(betas, 0)->valuedouble;
            hp->beta2 = cJSON_GetArrayItem(betas, 1)->valuedouble;
        }
    }
    if (s->optimizer == PP_OPT_ADAMW && (!strcmp(name, "adam") || !strcmp(name, "adamw") || !strcmp(name, "Adam") ||
                                         !strcmp(name, "AdamW")))
        for (const cJSON *it = par->child; it; it = it->next)
            if (!in_list(it->string, adam_params))
                warn(r, "optimizer.params", it->string, "not an Adam argument: the optimizer constructor will reject "
                     "it at start-up%s", suggest(it->string, adam_params, sug, sizeof sug));
    for (const cJSON *it = par->child; it; it = it->next)
        if (is_auto(it) && strcmp(it->string, "lr") && strcmp(it->string, "eps") && strcmp(it->string, "weight_decay"))
            dfail(r, "optimizer.params", it->string, "\"auto\" is a Hugging Face Trainer placeholder; "
                    "DeepSpeed passes the string to the optimizer and fails");
}

/* --------------------------------------------------------------- scheduler */

static const char *const ds_schedulers[] = {"LRRangeTest", "OneCycle", "WarmupLR", "WarmupDecayLR", "WarmupCosineLR",
                                            "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
                                            "LinearLR", "ExponentialLR", "SequentialLR", "CosineAnnealingLR",
                                            "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
                                            "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR", NULL};

static void read_scheduler(ds_reader *r, const cJSON *root, pp_deepspeed_opts *o)
{
    pp_hparams *hp = &o->hp;
    const cJSON *sch = cJSON_GetObjectItemCaseSensitive(root, "scheduler");
    o->client_scheduler = 1;
    if (!sch || cJSON_IsNull(sch)) return;
    if (!cJSON_IsObject(sch)) {
        dfail(r, "$", "scheduler", "expected an object {\"type\": ..., \"params\": {...}}");
        return;
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(sch, "type");
    if (!type || cJSON_IsNull(type)) return;
    o->client_scheduler = 0;
    char sug[96];
    if (!cJSON_IsString(type) || !in_list(type->valuestring, ds_schedulers)) {
        dfail(r, "scheduler", "type", "expected a DeepSpeed or torch.optim.lr_scheduler name: DeepSpeed "
                "asserts at start-up%s", cJSON_IsString(type) ? suggest(type->valuestring, ds_schedulers, sug, sizeof sug) : "");
        return;
    }
    const char *t = type->valuestring;
    const cJSON *par = cJSON_GetObjectItemCaseSensitive(sch, "params");
    if (par && !cJSON_IsNull(par) && !cJSON_IsObject(par)) {
        dfail(r, "scheduler", "params", "expected an object");
        return;
    }
    int warmup = !strcmp(t, "WarmupLR") || !strcmp(t, "WarmupDecayLR");
    if (!warmup && strcmp(t, "WarmupCosineLR")) {
        warn(r, "scheduler", "type", "%s: its schedule is not carried into files parplan writes (they use "
             "WarmupDecayLR)", t);
        return;
    }
    for (const cJSON *it = par ? par->child : NULL; it; it = it->next)
        if (is_auto(it))
            dfail(r, "scheduler.params", it->string, "\"auto\" is a Hugging Face Trainer placeholder; "
                    "DeepSpeed passes the string to the scheduler and fails");
    double x;
    int has_total = plain_num(r, par, "scheduler.params", "total_num_steps", 1, 1e12, &x);
    if (has_total) hp->total_steps = (int)fmin(x, 2e9);
    if (!has_total && strcmp(t, "WarmupLR") && r->jr.st == PP_OK) {
        dfail(r, "scheduler.params", "total_num_steps", "missing: %s requires it (TypeError at start-up)", t);
        return;
    }
    if (plain_num(r, par, "scheduler.params", "warmup_num_steps", 0, 2e9, &x)) hp->warmup_steps = (int)x;
    else if (warmup) hp->warmup_steps = 1000; /* lr_schedules.py default */
    if (warmup) {
        hp->min_lr = 0;
        hp->lr = 0.001; /* lr_schedules.py defaults of warmup_min_lr, warmup_max_lr */
        if (plain_num(r, par, "scheduler.params", "warmup_min_lr", 0, 10, &x)) hp->min_lr = x;
        if (plain_num(r, par, "scheduler.params", "warmup_max_lr", 1e-12, 10, &x)) hp->lr = x;
        const cJSON *wt = par ? cJSON_GetObjectItemCaseSensitive(par, "warmup_type") : NULL;
        if (!wt || !cJSON_IsString(wt) || strcmp(wt->valuestring, "linear"))
            warn(r, "scheduler.params", "warmup_type", "%s: warmup is logarithmic (DeepSpeed's default); files "
                 "parplan writes use \"linear\"", wt && cJSON_IsString(wt) ? wt->valuestring : "absent");
    }
    if (hp->warmup_steps > hp->total_steps) hp->warmup_steps = hp->total_steps;
}

/* ------------------------------------------- checkpointing and pipeline */

static const char *const ac_keys[] = {"partition_activations", "contiguous_memory_optimization", "cpu_checkpointing",
                                      "number_checkpoints", "synchronize_checkpoint_boundary", "profile", NULL};
static const char *const pipe_keys[] = {"stages", "partition", "seed_layers", "activation_checkpoint_interval",
                                        "pipe_partitioned", "grad_partitioned", "use_reentrant", NULL};

static void read_checkpointing(ds_reader *r, const cJSON *root, pp_strategy *s)
{
    const cJSON *ac = cJSON_GetObjectItemCaseSensitive(root, "activation_checkpointing");
    if (ac && !cJSON_IsNull(ac)) {
        if (!cJSON_IsObject(ac)) {
            dfail(r, "$", "activation_checkpointing", "expected an object");
            return;
        }
        warn_unread(r, ac, "activation_checkpointing", ac_keys, "ignores it");
        int part = truthy(cJSON_GetObjectItemCaseSensitive(ac, "partition_activations"));
        int cpu = truthy(cJSON_GetObjectItemCaseSensitive(ac, "cpu_checkpointing"));
        int contig = truthy(cJSON_GetObjectItemCaseSensitive(ac, "contiguous_memory_optimization"));
        const cJSON *nc = cJSON_GetObjectItemCaseSensitive(ac, "number_checkpoints");
        if (part && s->tp > 1 && !s->sp)
            warn(r, "activation_checkpointing", "partition_activations", "splits checkpoints over the %d tensor-parallel "
                 "ranks; parplan does not model it, so the estimate is conservative", s->tp);
        if (cpu)
            warn(r, "activation_checkpointing", "cpu_checkpointing", "checkpoints in host memory are not modeled; the "
                 "estimate keeps them on the GPU (conservative)");
        if (contig && (!part || !nc || cJSON_IsNull(nc)))
            warn(r, "activation_checkpointing", "contiguous_memory_optimization", "needs partition_activations and "
                 "number_checkpoints: deepspeed.checkpointing.configure() asserts when the training code calls it");
        /* number_checkpoints: the blocks the training code checkpoints
         * through deepspeed.checkpointing (what parplan writes for recompute
         * full); without it nothing says recompute is on */
        int k = cJSON_IsNumber(nc) && nc->valuedouble >= 1 && nc->valuedouble == floor(nc->valuedouble)
                    ? (int)fmin(nc->valuedouble, 1 << 20) : 0;
        if (s->pp == 1 && s->recompute == PP_RECOMPUTE_NONE && k) {
            s->recompute = PP_RECOMPUTE_FULL;
            s->recompute_layers = -1;
            warn(r, "activation_checkpointing", "number_checkpoints", "%d: the training code checkpoints its blocks "
                 "through deepspeed.checkpointing: estimating --recompute full of every block (give --recompute to say "
                 "otherwise)", k);
        } else if (s->pp == 1 && s->recompute == PP_RECOMPUTE_NONE) {
            warn(r, "$", "activation_checkpointing", "configures deepspeed.checkpointing but does not switch recompute "
                 "on (the training code does); estimating --recompute none");
        }
    }
    const cJSON *pipe = cJSON_GetObjectItemCaseSensitive(root, "pipeline");
    if (!pipe || cJSON_IsNull(pipe)) return;
    if (!cJSON_IsObject(pipe)) {
        dfail(r, "$", "pipeline", "expected an object");
        return;
    }
    warn_unread(r, pipe, "pipeline", pipe_keys, "keeps it but never reads it");
    if (s->pp == 1) {
        warn(r, "$", "pipeline", "used only by a PipelineModule (pp > 1); --pp is 1");
        return;
    }
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(pipe, "stages");
    if (st && cJSON_IsNumber(st) && (int)st->valuedouble != s->pp)
        warn(r, "pipeline", "stages", "%g is not read: the stage count comes from PipelineModule(num_stages) = --pp "
             "%d", st->valuedouble, s->pp);
    static const char *const bools[] = {"pipe_partitioned", "grad_partitioned", NULL};
    for (int i = 0; bools[i]; i++) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(pipe, bools[i]);
        if (b && !cJSON_IsBool(b))
            dfail(r, "pipeline", bools[i], "expected true or false (PipelineEngine asserts a bool)");
    }
    const cJSON *iv = cJSON_GetObjectItemCaseSensitive(pipe, "activation_checkpoint_interval");
    if (!iv || cJSON_IsNull(iv)) return;
    if (!cJSON_IsNumber(iv) || iv->valuedouble != floor(iv->valuedouble) || iv->valuedouble < 0) {
        dfail(r, "pipeline", "activation_checkpoint_interval", "expected an integer >= 0");
        return;
    }
    int k = (int)iv->valuedouble;
    if (k == 0) return; /* the PipelineModule's own interval applies */
    int all = s->recompute == PP_RECOMPUTE_FULL && !s->per_stage_recompute && s->recompute_layers < 0;
    if (!all)
        warn(r, "pipeline", "activation_checkpoint_interval", "%d: PipelineEngine recomputes every layer; estimating "
             "--recompute full on all blocks (the command line said %s)", k, pp_recompute_name(s->recompute));
    if (k > 1)
        warn(r, "pipeline", "activation_checkpoint_interval", "%d: checkpoints every %d layers; parplan models one "
             "checkpoint per layer (k = 1)", k, k);
    s->recompute = PP_RECOMPUTE_FULL;
    s->recompute_layers = -1;
    s->per_stage_recompute = 0;
}

/* ---------------------------------------------------------------- entry */

static void fill(ds_reader *r, const cJSON *root, const pp_cluster *c, pp_strategy *s, pp_deepspeed_opts *o)
{
    char sug[96];
    for (const cJSON *it = root->child; it; it = it->next)
        if (!in_list(it->string, top_keys))
            warn(r, "$", it->string, "unknown key: DeepSpeed ignores it%s", suggest(it->string, top_keys, sug, sizeof sug));
    const cJSON *el = cJSON_GetObjectItemCaseSensitive(root, "elasticity");
    if (el && cJSON_IsObject(el) && truthy(cJSON_GetObjectItemCaseSensitive(el, "enabled"))) {
        dfail(r, "elasticity", "enabled", "elastic training overrides the batch keys; parplan does not model it");
        return;
    }
    if (s->framework != PP_FW_AUTO && s->framework != PP_FW_DEEPSPEED && s->framework != PP_FW_MEGATRON_DEEPSPEED) {
        pp__fail_field(r->jr.err, 0, "framework", pp_framework_name(s->framework), "%s is run by deepspeed or "
                       "megatron-deepspeed (a ds_config.json)", r->jr.where);
        r->jr.st = PP_ERR_INPUT;
        return;
    }
    /* DeepSpeed runs it; tensor and expert parallelism come from Megatron-DeepSpeed's model code */
    if (s->framework == PP_FW_AUTO)
        s->framework = s->tp > 1 || s->sp || s->ep > 1 ? PP_FW_MEGATRON_DEEPSPEED : PP_FW_DEEPSPEED;
    long rest = (long)s->tp * s->pp * s->cp;
    int gpus = pp_cluster_gpus(c);
    if (rest < 1 || gpus % rest) {
        pp__fail(r->jr.err, PP_ERR_INPUT, "%s: tp*pp*cp = %d*%d*%d = %ld does not divide the %d GPUs; DeepSpeed's "
                 "data-parallel size would not be whole", r->jr.where, s->tp, s->pp, s->cp, rest, gpus);
        r->jr.st = PP_ERR_INPUT;
        return;
    }
    r->dp = (int)(gpus / rest);
    s->dp = r->dp;
    read_batch(r, root, s);
    ds_zero zo;
    read_zero(r, root, &zo);
    if (r->jr.st) return;
    ds_dtype model = read_precision(r, root, &o->hp, zo.stage);
    int grad = read_grad_dtype(r, root);
    if (r->jr.st) return;
    s->precision = model == DT_FP16 ? PP_PREC_FP16 : model == DT_FP32 ? PP_PREC_FP32
                 : r->base->precision == PP_PREC_FP8 ? PP_PREC_FP8 : PP_PREC_BF16;
    if (r->base->precision == PP_PREC_FP8 && model != DT_BF16)
        warn(r, "$", model == DT_FP16 ? "fp16" : "bf16", "fp8 (Transformer Engine) runs with bf16 outside its GEMMs; "
             "this file has %s, so estimating %s", dtype_name(model), dtype_name(model));
    s->offload = map_offload(r, &zo);
    map_wrapper(r, model, grad, &zo, s);
    if (r->jr.st) return;
    if (s->pp > 1 && s->zero >= 2) {
        dfail(r, "zero_optimization", "stage", "%d with --pp %d: DeepSpeed's PipelineEngine asserts \"ZeRO-2 and ZeRO-3 "
              "are incompatible with pipeline parallelism\"", s->zero, s->pp);
        return;
    }
    if (pp__ds_wrapper_of(s) == PP_DS_BF16)
        pp__note(r->warn, "%s: bf16 with fp32 gradient accumulation runs BF16_Optimizer: fp32 master weights and "
                 "optimizer states sharded over the %d data-parallel ranks like ZeRO-1, 16-bit gradients with an "
                 "fp32 accumulation buffer", r->jr.where, s->dp * s->cp);
    /* overlap: only the ZeRO optimizer overlaps, and never under a PipelineModule */
    int zero_opt = pp__ds_wrapper_of(s) == PP_DS_ZERO;
    s->overlap_dp = zero_opt && s->pp == 1 ? zo.overlap_comm : 0;
    if (zo.overlap_given && zo.overlap_comm && !s->overlap_dp)
        warn(r, "zero_optimization", "overlap_comm", "true is not applied: %s", s->pp > 1
             ? "DeepSpeed turns it off for a PipelineModule" : "only the ZeRO optimizer overlaps communication");
    if (r->base->overlap_tp > 0) /* -1: the framework's default, not asked for */
        warn(r, "$", "zero_optimization", "--tp-overlap: DeepSpeed does not overlap tensor-parallel communication; "
             "estimating without it");
    s->overlap_tp = 0;
    s->buf.reduce_bucket = zero_opt ? zo.reduce_bucket : PP_DS_FIXED_ALLREDUCE_BUCKET;
    if (!zero_opt && zo.reduce_given && zo.reduce_bucket != PP_DS_FIXED_ALLREDUCE_BUCKET)
        warn(r, "zero_optimization", "reduce_bucket_size", "not used without the ZeRO optimizer: gradients are "
             "all-reduced in fixed 5e8-element buckets");
    s->buf.allgather_bucket = zo.allgather_bucket;
    if (zo.allgather_given && s->zero == 3)
        warn(r, "zero_optimization", "allgather_bucket_size", "not used at stage 3 (stage3_prefetch_bucket_size is)");
    s->buf.prefetch_bucket = zo.prefetch;
    s->buf.param_persistence = zo.persistence;
    s->buf.max_live_params = zo.max_live;
    s->buf.sub_group_size = zo.sub_group;
    if (zo.stage3_given && s->zero != 3)
        warn(r, "zero_optimization", "stage3_prefetch_bucket_size", "stage3_* keys are used only at stage 3");
    o->pin_memory = zo.pin_memory;
    memcpy(o->nvme_path, zo.nvme_path, sizeof o->nvme_path);
    read_optimizer(r, root, &zo, s, o);
    read_scheduler(r, root, o);
    double clip = 0;
    const cJSON *gc = cJSON_GetObjectItemCaseSensitive(root, "gradient_clipping");
    if (gc && !cJSON_IsNull(gc)) {
        if (plain_num(r, root, "$", "gradient_clipping", 0, 1e6, &clip)) o->hp.gradient_clipping = clip;
    } else {
        o->hp.gradient_clipping = 0;
        warn(r, "$", "gradient_clipping", "absent: DeepSpeed's code default is 0.0, no clipping (its documentation "
             "says 1.0)");
    }
    read_checkpointing(r, root, s);
}

/* A rule the file breaks, worded as the ds_config key that sets the field
 * (the command line's fields keep their names). */
static pp_status ds_rule_failure(const char *where, const pp_error *e, pp_error *err)
{
    static const struct { const char *field, *key; } keys[] = {
        {"zero", "zero_optimization.stage"}, {"offload", "zero_optimization.offload_optimizer"},
        {"micro_batch", "train_micro_batch_size_per_gpu"}, {"global_batch", "train_batch_size"},
        {"grad_accum", "gradient_accumulation_steps"}, {"grad_accum_dtype", "data_types.grad_accum_dtype"},
        {"precision", "bf16/fp16"}, {"overlap_dp", "zero_optimization.overlap_comm"}, {"optimizer", "optimizer.type"}};
    if (!e->field[0] || e->detail <= 0)
        return pp__fail(err, PP_ERR_INPUT, "%s: $: the strategy this file gives cannot run here: %s", where, e->msg);
    const char *k = NULL;
    for (size_t i = 0; i < sizeof keys / sizeof *keys && !k; i++)
        if (!strcmp(e->field, keys[i].field)) k = keys[i].key;
    if (k)
        pp__fail(err, PP_ERR_INPUT, "%s: $.%s (%s %s): %s", where, k, e->field, e->value, e->msg + e->detail);
    else /* a command-line field with this file's values */
        pp__fail(err, PP_ERR_INPUT, "%s: $: with %s %s: %s", where, e->field, e->value, e->msg + e->detail);
    if (err) err->rule = e->rule;
    return PP_ERR_INPUT;
}

pp_status pp_deepspeed_parse_hf(const char *text, size_t len, const char *where, const pp_model *m,
                                const pp_cluster *c, const pp_hf_trainer_args *hf, pp_strategy *s,
                                pp_deepspeed_opts *o, pp_notes *warnings, pp_error *err)
{
    PP__C_NUMERIC;
    pp_deepspeed_opts local;
    pp_deepspeed_opts_default(&local);
    /* DeepSpeed's loader rejects duplicate keys at any depth (§2); so does jr_parse */
    pp_status pst;
    cJSON *root = jr_parse_ex(text, len, where, "DeepSpeed's loader raises ValueError: Duplicate keys in DeepSpeed "
                              "config", err, &pst);
    if (!root) return pst;
    pp_strategy base = *s, out = *s;
    ds_reader r = {{where, err, PP_OK}, warnings, m, &base, 1};
    long rest = (long)s->tp * s->pp * s->cp;
    if (rest >= 1 && pp_cluster_gpus(c) % rest == 0) /* else fill() says so */
        pp__ds_fill_auto(root, &r.jr, m, c, (int)(pp_cluster_gpus(c) / rest), hf, warnings);
    if (r.jr.st == PP_OK) fill(&r, root, c, &out, &local);
    cJSON_Delete(root);
    if (r.jr.st != PP_OK) return r.jr.st;
    pp_strategy resolved = out;
    pp_error e2 = {""};
    pp_status st = pp_strategy_resolve(&resolved, m, c, &e2);
    if (st != PP_OK) return ds_rule_failure(where, &e2, err);
    *s = out;
    if (o) *o = local;
    return PP_OK;
}

pp_status pp_deepspeed_parse(const char *text, size_t len, const char *where, const pp_model *m, const pp_cluster *c,
                             pp_strategy *s, pp_deepspeed_opts *o, pp_notes *warnings, pp_error *err)
{
    PP__C_NUMERIC;
    return pp_deepspeed_parse_hf(text, len, where, m, c, NULL, s, o, warnings, err);
}

pp_status pp_deepspeed_read_hf(const char *path, const pp_model *m, const pp_cluster *c, const pp_hf_trainer_args *hf,
                               pp_strategy *s, pp_deepspeed_opts *o, pp_notes *warnings, pp_error *err)
{
    PP__C_NUMERIC;
    char *text;
    size_t len;
    pp_status st = jr_read_file(path, &text, &len, err);
    if (st != PP_OK) return st;
    st = pp_deepspeed_parse_hf(text, len, path, m, c, hf, s, o, warnings, err);
    free(text);
    return st;
}

pp_status pp_deepspeed_read(const char *path, const pp_model *m, const pp_cluster *c, pp_strategy *s,
                            pp_deepspeed_opts *o, pp_notes *warnings, pp_error *err)
{
    PP__C_NUMERIC;
    return pp_deepspeed_read_hf(path, m, c, NULL, s, o, warnings, err);
}
