/*
 * hf_args_read.c — a Hugging Face TrainingArguments JSON file (what
 * HfArgumentParser.parse_json_file reads; the training_args.json parplan
 * writes) and the strategy of the HF Trainer run it launches: plain
 * PyTorch (DDP), or DeepSpeed when it names a ds_config.json. Keys are
 * TrainingArguments' fields (transformers 5.x, with the 4.x names still
 * met in the wild): an unknown key fails with the nearest one, as
 * HfArgumentParser does; known keys that change memory or time and are not
 * priced are named in a warning; the rest (logging, saving, the learning
 * rate schedule) are read silently.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/emit.h"
#include "configs/readers.h"

/* Read and priced. */
static const char *const priced[] = {"per_device_train_batch_size", "gradient_accumulation_steps",
                                     "gradient_checkpointing", "gradient_checkpointing_kwargs", "bf16", "fp16", "optim",
                                     "use_liger_kernel",
                                     "deepspeed", "ddp_bucket_cap_mb", "tf32", "fsdp", "fsdp_config", "use_cpu", NULL};
/* TRL's `trl sft` config: ModelConfig and SFTConfig keys read and priced
 * (TRL v1.x trl/trainer/model_config.py, sft_config.py). */
static const char *const trl_priced[] = {"dtype", "use_peft", "lora_r", "lora_alpha", "lora_dropout",
                                         "lora_target_modules", "load_in_4bit", "max_length", "block_size", NULL};
/* ... read without effect on a step's memory or time (bnb_4bit_quant_type:
 * fp4 and nf4 store the same 4 bits) */
static const char *const trl_no_effect[] = {
    "model_name_or_path", "model_revision", "trust_remote_code", "lora_task_type", "use_rslora",
    "bnb_4bit_quant_type", "use_bnb_nested_quant", "bnb_4bit_quant_storage", "dataset_name", "dataset_config",
    "dataset_train_split", "dataset_test_split", "dataset_streaming", "dataset_text_field", "dataset_num_proc",
    "dataset_kwargs", "chat_template_path", "eos_token", "pad_token", "truncation_mode", "shuffle_dataset",
    "packing", "packing_strategy", "padding_free", "pad_to_multiple_of", "eval_packing", "completion_only_loss",
    "assistant_only_loss", "loss_type", "router_aux_loss_coef", "ignore_bias_buffers", NULL};
/* ... that change memory or time and are not priced */
static const char *const trl_unpriced[] = {"attn_implementation", "lora_modules_to_save", "lora_target_parameters",
                                           "use_dora", "load_in_8bit", "model_init_kwargs", "activation_offloading",
                                           "use_liger_kernel_for_loss", NULL};

/* No effect on a training step's memory or time. */
static const char *const no_effect[] = {
    "output_dir", "overwrite_output_dir", "num_train_epochs", "max_steps", "learning_rate", "lr_scheduler_type",
    "lr_scheduler_kwargs", "warmup_steps", "warmup_ratio", "weight_decay", "adam_beta1", "adam_beta2", "adam_epsilon",
    "max_grad_norm", "label_smoothing_factor", "average_tokens_across_devices", "bf16_full_eval", "fp16_full_eval",
    "logging_strategy", "logging_steps", "logging_first_step", "log_on_each_node", "logging_nan_inf_filter",
    "logging_dir", "include_num_input_tokens_seen", "include_tokens_per_second", "log_level", "log_level_replica",
    "disable_tqdm", "report_to", "run_name", "project", "trackio_space_id", "eval_strategy", "evaluation_strategy",
    "eval_steps", "eval_delay", "per_device_eval_batch_size", "prediction_loss_only", "eval_on_start",
    "eval_do_concat_batches", "eval_use_gather_object", "eval_accumulation_steps", "include_for_metrics",
    "include_inputs_for_metrics", "batch_eval_metrics", "save_only_model", "save_strategy", "save_steps",
    "save_on_each_node", "save_total_limit", "save_safetensors", "enable_jit_checkpoint", "push_to_hub", "hub_token",
    "hub_private_repo", "hub_model_id", "hub_strategy", "hub_always_push", "hub_revision", "load_best_model_at_end",
    "metric_for_best_model", "greater_is_better", "ignore_data_skip", "restore_callback_states_from_checkpoint",
    "full_determinism", "seed", "data_seed", "dataloader_drop_last", "dataloader_num_workers", "dataloader_pin_memory",
    "dataloader_persistent_workers", "dataloader_prefetch_factor", "remove_unused_columns", "label_names",
    "train_sampling_strategy", "group_by_length", "length_column_name", "ddp_find_unused_parameters",
    "ddp_broadcast_buffers", "ddp_backend", "ddp_timeout", "debug", "skip_memory_metrics", "do_train", "do_eval",
    "do_predict", "resume_from_checkpoint", "local_rank", "past_index", "use_legacy_prediction_loop",
    "push_to_hub_model_id", "push_to_hub_organization", "push_to_hub_token", "hub_private_repo", "ray_scope",
    "use_cache", NULL};
/* Change memory or time; not priced: named in a warning. */
static const char *const unpriced[] = {
    "optim_args", "optim_target_modules", "torch_compile", "torch_compile_backend",
    "torch_compile_mode", "liger_kernel_config", "neftune_noise_alpha", "torch_empty_cache_steps",
    "auto_find_batch_size", "accelerator_config", "parallelism_config", "half_precision_backend", "fp16_opt_level",
    "fp16_backend", "jit_mode_eval", "use_ipex", "tpu_num_cores", "tpu_metrics_debug", "mp_parameters", "torchdynamo",
    "dispatch_batches", "split_batches", "fsdp_min_num_params", "fsdp_transformer_layer_cls_to_wrap", "no_cuda",
    "use_mps_device", "per_gpu_train_batch_size", "per_gpu_eval_batch_size", "adafactor", NULL};

static int in(const char *s, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(s, list[i])) return 1;
    return 0;
}

/* gradient_checkpointing_kwargs: parplan prices the reentrant checkpoint
 * (the whole forward again), which launch.c writes; without the key,
 * transformers before PR #43203 (January 2026) is reentrant and later
 * releases are not. */
static void ckpt_kwargs(jr_ctx *c, const cJSON *root, int checkpointing, pp_notes *warn)
{
    const cJSON *kw = cJSON_GetObjectItemCaseSensitive(root, "gradient_checkpointing_kwargs");
    if (!kw || cJSON_IsNull(kw) || c->st != PP_OK) return;
    if (!cJSON_IsObject(kw)) {
        jr_fail(c, "$", "gradient_checkpointing_kwargs", "expected an object of torch.utils.checkpoint arguments");
        return;
    }
    int reentrant = 1;
    jr_bool(c, kw, "$.gradient_checkpointing_kwargs", "use_reentrant", 0, &reentrant);
    if (c->st == PP_OK && checkpointing && !reentrant)
        pp__note(warn, "%.120s: gradient_checkpointing_kwargs.use_reentrant false: priced as the reentrant checkpoint "
                 "(the whole forward again); the non-reentrant one skips each block's down projection", c->where);
    for (const cJSON *it = kw->child; it && c->st == PP_OK; it = it->next)
        if (strcmp(it->string, "use_reentrant"))
            pp__note(warn, "%.120s: gradient_checkpointing_kwargs.%.40s: not priced", c->where, it->string);
}

void pp_training_args_default(pp_training_args *t)
{
    memset(t, 0, sizeof *t);
    t->micro_batch = 8; /* TrainingArguments defaults */
    t->grad_accum = 1;
    t->precision = -1;
    t->optimizer = PP_OPT_ADAMW;
    t->loss = PP_LOSS_FP32;
    t->use_peft = t->lora_r = t->lora_targets = t->load_in_4bit = t->max_length = t->block_size = -1;
    t->lora_alpha = t->lora_dropout = -1;
}

/* lora_target_modules: HF module names (Llama's and GPT-NeoX's) as PP_LORA_* */
static int lora_target_bits(const char *n)
{
    static const struct { const char *name; int bits; } map[] = {
        {"q_proj", PP_LORA_Q}, {"k_proj", PP_LORA_K}, {"v_proj", PP_LORA_V}, {"o_proj", PP_LORA_O},
        {"gate_proj", PP_LORA_GATE}, {"up_proj", PP_LORA_UP}, {"down_proj", PP_LORA_DOWN}, {"lm_head", PP_LORA_LM_HEAD},
        {"query_key_value", PP_LORA_Q | PP_LORA_K | PP_LORA_V}, {"dense", PP_LORA_O}, {"dense_h_to_4h", PP_LORA_UP},
        {"dense_4h_to_h", PP_LORA_DOWN}, {"all-linear", PP_LORA_ALL_LINEAR}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(n, map[i].name)) return map[i].bits;
    return -1;
}

/* The TRL keys parplan prices (trl_priced). */
static void read_trl(jr_ctx *c, const cJSON *root, pp_training_args *t)
{
    jr_bool(c, root, "$", "use_peft", 0, &t->use_peft);
    jr_int(c, root, "$", "lora_r", 0, 1, 65536, &t->lora_r);
    jr_num(c, root, "$", "lora_alpha", 0, 0, 1e6, &t->lora_alpha);
    jr_num(c, root, "$", "lora_dropout", 0, 0, 0.99, &t->lora_dropout);
    jr_bool(c, root, "$", "load_in_4bit", 0, &t->load_in_4bit);
    jr_int(c, root, "$", "max_length", 0, 1, 1 << 24, &t->max_length);
    int block = -1; /* run_clm.py's DataTrainingArguments.block_size: the same cut */
    if (jr_int(c, root, "$", "block_size", 0, 1, 1 << 24, &block)) {
        if (t->max_length > 0 && block != t->max_length)
            jr_fail(c, "$", "block_size", "%d with max_length %d: one sequence length, please", block, t->max_length);
        t->block_size = block;
    }
    if (jr_str(c, root, "$", "dtype", 0, t->dtype, sizeof t->dtype) && strcmp(t->dtype, "bfloat16") &&
        strcmp(t->dtype, "float16") && strcmp(t->dtype, "float32") && strcmp(t->dtype, "auto"))
        jr_fail(c, "$", "dtype", "\"%s\": expected auto, bfloat16, float16 or float32 (TRL ModelConfig)", t->dtype);
    const cJSON *tm = cJSON_GetObjectItemCaseSensitive(root, "lora_target_modules");
    if (!tm || cJSON_IsNull(tm) || c->st != PP_OK) return;
    if (cJSON_IsString(tm)) tm = NULL; /* a single name or "all-linear" */
    const cJSON *one = cJSON_GetObjectItemCaseSensitive(root, "lora_target_modules");
    int bits = 0;
    for (const cJSON *it = tm ? tm->child : one; it && c->st == PP_OK; it = tm ? it->next : NULL) {
        int b = cJSON_IsString(it) ? lora_target_bits(it->valuestring) : -1;
        if (b < 0) {
            jr_fail(c, "$", "lora_target_modules", "expected HF module names (q_proj, k_proj, v_proj, o_proj, gate_proj, "
                    "up_proj, down_proj, lm_head; query_key_value, dense, dense_h_to_4h, dense_4h_to_h) or "
                    "\"all-linear\", got %s", cJSON_IsString(it) ? it->valuestring : "a non-string");
            return;
        }
        bits |= b;
    }
    if (tm && !cJSON_IsArray(tm)) jr_fail(c, "$", "lora_target_modules", "expected a list of module names");
    else t->lora_targets = bits;
}

/* transformers' OptimizerNames that parplan prices (launch.c writes the first). */
static int optim_of(const char *v)
{
    static const struct { const char *name; int opt; } map[] = {
        {"adamw_torch", PP_OPT_ADAMW}, {"adamw_torch_fused", PP_OPT_ADAMW}, {"adamw_hf", PP_OPT_ADAMW},
        {"adamw_bnb_8bit", PP_OPT_ADAM8BIT}, {"adamw_8bit", PP_OPT_ADAM8BIT}, {"adafactor", PP_OPT_ADAFACTOR},
        {"sgd", PP_OPT_SGD}, {"lion_32bit", PP_OPT_LION}, {"adagrad", PP_OPT_ADAGRAD}, {"rmsprop", PP_OPT_RMSPROP},
        {"paged_adamw_32bit", PP_OPT_ADAMW}, {"paged_adamw", PP_OPT_ADAMW}, {"paged_adamw_8bit", PP_OPT_ADAM8BIT},
        {"paged_lion_32bit", PP_OPT_LION}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(v, map[i].name)) return map[i].opt;
    return -1;
}

static void read_keys(jr_ctx *c, const cJSON *root, pp_training_args *t, pp_notes *warn)
{
    char list[PP_NOTE_LEN - 100] = "";
    size_t n = 0;
    for (const cJSON *it = root->child; it && c->st == PP_OK; it = it->next) {
        const char *k = it->string;
        if (in(k, priced) || in(k, no_effect) || in(k, trl_priced) || in(k, trl_no_effect)) continue;
        if (in(k, unpriced) || in(k, trl_unpriced)) {
            if (n + strlen(k) + 4 < sizeof list) n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", k);
            continue;
        }
        const char *const *lists[] = {priced, no_effect, unpriced, trl_priced, trl_no_effect, trl_unpriced};
        const char *all[sizeof priced / sizeof *priced + sizeof no_effect / sizeof *no_effect +
                        sizeof unpriced / sizeof *unpriced + sizeof trl_priced / sizeof *trl_priced +
                        sizeof trl_no_effect / sizeof *trl_no_effect + sizeof trl_unpriced / sizeof *trl_unpriced];
        int m = 0;
        for (size_t l = 0; l < sizeof lists / sizeof *lists; l++)
            for (int i = 0; lists[l][i]; i++) all[m++] = lists[l][i];
        const char *near = jr_nearest(k, all, m);
        if (near) jr_fail(c, "$", k, "unknown key: HfArgumentParser refuses it (did you mean \"%s\"?)", near);
        else jr_fail(c, "$", k, "unknown key: HfArgumentParser refuses it (expected a TrainingArguments field, or "
                     "TRL's SFTConfig/ModelConfig for `trl sft --config`)");
    }
    if (n && c->st == PP_OK) pp__note(warn, "%.120s: not priced (parplan's estimate does not model them): %s", c->where, list);
    (void)t;
}

pp_status pp_training_args_parse(const char *text, size_t len, const char *where, pp_training_args *t,
                                 pp_notes *warnings, pp_error *err)
{
    PP__C_NUMERIC;
    pp_status pst;
    cJSON *root = jr_parse_ex(text, len, where, NULL, err, &pst);
    if (!root) return pst;
    jr_ctx c = {where, err, PP_OK};
    pp_training_args out;
    pp_training_args_default(&out);
    snprintf(out.where, sizeof out.where, "%s", where);
    if (!cJSON_IsObject(root)) jr_fail(&c, "$", NULL, "expected an object of TrainingArguments fields");
    pp_notes local = warnings ? *warnings : (pp_notes){0};
    if (c.st == PP_OK) read_keys(&c, root, &out, &local);
    jr_int(&c, root, "$", "per_device_train_batch_size", 0, 1, 1 << 20, &out.micro_batch);
    jr_int(&c, root, "$", "gradient_accumulation_steps", 0, 1, 1 << 20, &out.grad_accum);
    jr_bool(&c, root, "$", "gradient_checkpointing", 0, &out.checkpointing);
    ckpt_kwargs(&c, root, out.checkpointing, &local);
    int bf = 0, fp = 0, liger = 0, cpu = 0, tf32 = 0;
    jr_bool(&c, root, "$", "bf16", 0, &bf);
    jr_bool(&c, root, "$", "fp16", 0, &fp);
    if (bf && fp) jr_fail(&c, "$", "fp16", "true with bf16 true: the Trainer raises \"At most one of fp16 and bf16 can be True\"");
    out.precision = bf ? PP_PREC_BF16 : fp ? PP_PREC_FP16 : -1;
    if (jr_bool(&c, root, "$", "tf32", 0, &tf32) && tf32 && !bf && !fp)
        pp__note(&local, "%.120s: tf32 true: TF32 matmuls are not priced; estimating fp32", where);
    char optim[64] = "";
    if (jr_str(&c, root, "$", "optim", 0, optim, sizeof optim)) {
        out.optimizer = optim_of(optim);
        if (out.optimizer < 0)
            jr_fail(&c, "$", "optim", "\"%s\": not priced; expected adamw_torch, adamw_torch_fused, adamw_bnb_8bit, "
                    "adafactor, sgd, lion_32bit, adagrad, rmsprop or a paged_ one of them", optim);
        else if (!strncmp(optim, "paged_", 6))
            pp__note(&local, "%.120s: optim %s: bitsandbytes keeps the states in CUDA unified memory, on the GPU "
                     "unless it runs short, then paged to the CPU: priced on the GPU as %s (an upper bound)", where,
                     optim, optim + 6);
        else if (!strcmp(optim, "adamw_torch_fused"))
            pp__note(&local, "%.120s: optim adamw_torch_fused: priced as adamw_torch (its foreach step holds one "
                     "parameter-sized temporary; the fused step does not)", where);
    } else {
        pp__note(&local, "%.120s: optim absent: transformers' default is adamw_torch (adamw_torch_fused with torch >= "
                 "2.8); priced as adamw_torch", where);
    }
    if (jr_bool(&c, root, "$", "use_liger_kernel", 0, &liger) && liger) out.loss = PP_LOSS_CHUNKED;
    read_trl(&c, root, &out);
    double mb = 0;
    if (jr_num(&c, root, "$", "ddp_bucket_cap_mb", 0, 0.001, 1e6, &mb)) out.ddp_bucket = mb * 1048576.0 / 4;
    if (jr_bool(&c, root, "$", "use_cpu", 0, &cpu) && cpu) jr_fail(&c, "$", "use_cpu", "true: training on the CPU is not priced");
    const cJSON *fsdp = cJSON_GetObjectItemCaseSensitive(root, "fsdp");
    if (c.st == PP_OK && fsdp && !cJSON_IsNull(fsdp) && !(cJSON_IsString(fsdp) && !fsdp->valuestring[0]) &&
        !(cJSON_IsArray(fsdp) && !fsdp->child) && !cJSON_IsFalse(fsdp))
        jr_fail(&c, "$", "fsdp", "FSDP through TrainingArguments is not read: parplan reads FSDP from the Accelerate "
                "config (--fsdp-config accelerate_fsdp.yaml); remove fsdp/fsdp_config here");
    const cJSON *ds = cJSON_GetObjectItemCaseSensitive(root, "deepspeed");
    if (c.st == PP_OK && ds && !cJSON_IsNull(ds)) {
        if (!cJSON_IsString(ds) || !ds->valuestring[0])
            jr_fail(&c, "$", "deepspeed", "expected the path of a ds_config.json (an inline object is not read)");
        else snprintf(out.deepspeed, sizeof out.deepspeed, "%s", ds->valuestring);
    }
    cJSON_Delete(root);
    if (c.st != PP_OK) return c.st;
    *t = out;
    if (warnings) *warnings = local;
    return PP_OK;
}

pp_status pp_training_args_read(const char *path, pp_training_args *t, pp_notes *warnings, pp_error *err)
{
    PP__C_NUMERIC;
    char *text;
    size_t len;
    pp_status st = jr_read_file(path, &text, &len, err);
    if (st != PP_OK) return st;
    st = pp_training_args_parse(text, len, path, t, warnings, err);
    free(text);
    return st;
}

/* ------------------------------------------------------------ rule wording */

pp_status pp__rule_in_file(const char *where, const pp_error *e, const pp__key_of *keys, pp_error *err)
{
    const char *k = NULL;
    for (int i = 0; keys && keys[i].field && !k; i++)
        if (!strcmp(e->field, keys[i].field)) k = keys[i].key;
    if (k && e->detail > 0)
        pp__fail(err, PP_ERR_INPUT, "%.200s: %s (%s %s): %s", where, k, e->field, e->value, e->msg + e->detail);
    else if (e->field[0] && e->detail > 0)
        pp__fail(err, PP_ERR_INPUT, "%.200s: with %s %s: %s", where, e->field, e->value, e->msg + e->detail);
    else
        pp__fail(err, PP_ERR_INPUT, "%.200s: the strategy this file gives cannot run here: %s", where, e->msg);
    if (err) err->rule = e->rule;
    return PP_ERR_INPUT;
}

/* What the TrainingArguments set on a strategy whose dp is set. */
void pp__training_args_apply(const pp_training_args *t, pp_strategy *s)
{
    s->micro_batch = t->micro_batch;
    s->global_batch = t->micro_batch * t->grad_accum * s->dp;
    s->grad_accum = 0;
    if (t->checkpointing) s->recompute = PP_RECOMPUTE_FULL, s->recompute_layers = -1, s->per_stage_recompute = 0;
    if (t->precision >= 0) s->precision = (pp_precision)t->precision;
    s->optimizer = (pp_optimizer)t->optimizer;
    s->loss = (pp_loss)t->loss;
    if (t->ddp_bucket > 0) s->buf.reduce_bucket = t->ddp_bucket;
}

static const pp__key_of hf_keys[] = {
    {"micro_batch", "per_device_train_batch_size"}, {"global_batch", "gradient_accumulation_steps"},
    {"grad_accum", "gradient_accumulation_steps"}, {"precision", "bf16/fp16"}, {"recompute", "gradient_checkpointing"},
    {"optimizer", "optim"}, {"loss", "use_liger_kernel"}, {NULL, NULL}};

static int trl_file(const pp_training_args *t)
{
    return t->use_peft >= 0 || t->lora_r >= 0 || t->load_in_4bit >= 0 || t->max_length >= 0 || t->dtype[0] ||
           t->lora_targets >= 0 || t->lora_dropout >= 0 || t->lora_alpha >= 0;
}

/* What TRL's `trl sft` launches from the file, against the strategy priced
 * (TRL v1.x: ModelConfig dtype "float32", lora_r 16, lora_dropout 0.05,
 * lora_target_modules None = PEFT's default for the model, q_proj and
 * v_proj for Llama; SFTConfig max_length 1024). */
/* The adapters a mask launches on m: a fused QKV model (GPT-NeoX, Falcon,
 * BLOOM names) has one query_key_value map for any of q, k, v. */
static unsigned launched_targets(const pp_model *m, unsigned t)
{
    unsigned qkv = PP_LORA_Q | PP_LORA_K | PP_LORA_V;
    if (m && !m->gated_mlp && (t & qkv)) t |= qkv;
    return t;
}

static pp_status trl_check(const pp_training_args *t, const pp_model *m, const pp_strategy *s, pp_notes *warn,
                           pp_error *err)
{
    const pp_finetune *f = &s->ft;
    const char *w = t->where;
    int lora = f->mode != PP_MODE_FULL;
    if (t->block_size > 0 && t->block_size != s->seq)
        return pp__fail(err, PP_ERR_INPUT, "%.200s: block_size %d: run_clm.py trains sequences of that length; the "
                        "estimate is --seq %d", w, t->block_size, s->seq);
    if (!trl_file(t)) {
        if (lora)
            pp__note(warn, "%.120s: TrainingArguments only: your script applies adapter_config.json and loads the base "
                     "model in 16 bits (from_pretrained dtype), as priced", w);
        return PP_OK;
    }
    if (t->use_peft != 1) {
        if (lora)
            return pp__fail(err, PP_ERR_INPUT, "%.200s: use_peft %s: `trl sft` trains the whole model; the estimate "
                            "is for --mode %s (set use_peft true)", w, t->use_peft == 0 ? "false" : "absent",
                            f->mode == PP_MODE_QLORA ? "qlora" : "lora");
        return PP_OK;
    }
    if (!lora)
        return pp__fail(err, PP_ERR_INPUT, "%.200s: use_peft true: `trl sft` trains a LoRA adapter; give --mode lora "
                        "(or qlora with load_in_4bit)", w);
    int q = t->load_in_4bit == 1;
    if (q != (f->mode == PP_MODE_QLORA))
        return pp__fail(err, PP_ERR_INPUT, "%.200s: load_in_4bit %s: the file launches %s, the estimate is --mode %s", w,
                        q ? "true" : "false or absent", q ? "QLoRA" : "LoRA on a 16-bit base",
                        f->mode == PP_MODE_QLORA ? "qlora" : "lora");
    int r = t->lora_r >= 0 ? t->lora_r : 16;
    if (r != f->lora_rank)
        return pp__fail(err, PP_ERR_INPUT, "%.200s: lora_r %d%s: the estimate is --lora-rank %d", w, r,
                        t->lora_r >= 0 ? "" : " (TRL's default)", f->lora_rank);
    double dr = t->lora_dropout >= 0 ? t->lora_dropout : 0.05;
    if ((dr > 0) != (f->lora_dropout > 0))
        return pp__fail(err, PP_ERR_INPUT, "%.200s: lora_dropout %g%s: the estimate is --lora-dropout %g (a dropout "
                        "keeps a copy of each adapter's input)", w, dr, t->lora_dropout >= 0 ? "" : " (TRL's default)",
                        f->lora_dropout);
    int tg = t->lora_targets >= 0 ? t->lora_targets : PP_LORA_Q | PP_LORA_V; /* PEFT's default: q, v or query_key_value */
    if (launched_targets(m, (unsigned)tg) != launched_targets(m, f->lora_targets))
        return pp__fail(err, PP_ERR_INPUT, "%.200s: lora_target_modules%s adapt other matrices than the estimate's "
                        "--lora-targets", w, t->lora_targets >= 0 ? "" : " absent (PEFT's default for the model)");
    const char *want = s->precision == PP_PREC_FP16 ? "float16" : s->precision == PP_PREC_BF16 ? "bfloat16" : "float32";
    if (!t->dtype[0] || (strcmp(t->dtype, want) && strcmp(t->dtype, "auto")))
        return pp__fail(err, PP_ERR_INPUT, "%.200s: dtype %s%s: the base model loads in %s; parplan prices it in %s (set "
                        "dtype %s)", w, t->dtype[0] ? t->dtype : "absent", t->dtype[0] ? "" : " (TRL's default float32)",
                        t->dtype[0] ? t->dtype : "float32", want, want);
    if (!strcmp(t->dtype, "auto"))
        pp__note(warn, "%.120s: dtype auto: the checkpoint's dtype (bfloat16 for most on the Hub); priced as %s", w, want);
    int len = t->max_length > 0 ? t->max_length : 1024;
    if (len != s->seq)
        return pp__fail(err, PP_ERR_INPUT, "%.200s: max_length %d%s: TRL cuts sequences to it; the estimate is --seq %d",
                        w, len, t->max_length > 0 ? "" : " (TRL's default)", s->seq);
    return PP_OK;
}

/* The ds_config.json the "deepspeed" key names, relative to the file. */
static void ds_path(const pp_training_args *t, char *buf, size_t cap)
{
    const char *slash = strrchr(t->where, '/');
    if (t->deepspeed[0] == '/' || !slash) snprintf(buf, cap, "%s", t->deepspeed);
    else snprintf(buf, cap, "%.*s/%s", (int)(slash - t->where), t->where, t->deepspeed);
}

pp_status pp_hf_strategy(const pp_training_args *t, const char *ds_config, const pp_model *m, const pp_cluster *c,
                         pp_strategy *s, pp_deepspeed_opts *dso, pp_notes *warnings, pp_error *err)
{
    PP__C_NUMERIC;
    char path[PP_TEXT_LEN * 2];
    if (!ds_config && t->deepspeed[0]) ds_path(t, path, sizeof path), ds_config = path;
    pp_strategy out = *s;
    long rest = (long)out.tp * out.pp * out.cp;
    if (rest < 1 || pp_cluster_gpus(c) % rest)
        return pp__fail(err, PP_ERR_INPUT, "%.200s: tp x pp x cp = %ld does not divide the %d GPUs", t->where, rest,
                        pp_cluster_gpus(c));
    out.dp = (int)(pp_cluster_gpus(c) / rest);
    pp__training_args_apply(t, &out);
    pp_status tst = trl_check(t, m, &out, warnings, err);
    if (tst != PP_OK) return tst;
    if (ds_config) { /* the Trainer fills the ds_config's "auto" values from these arguments */
        pp_hf_trainer_args hf = {t->micro_batch, out.global_batch, t->precision >= 0 ? t->precision : PP_PREC_FP32};
        pp_deepspeed_opts local;
        pp_status st = pp_deepspeed_read_hf(ds_config, m, c, &hf, &out, dso ? dso : &local, warnings, err);
        if (st != PP_OK) return st;
        *s = out;
        return PP_OK;
    }
    if (out.framework == PP_FW_AUTO) out.framework = PP_FW_PYTORCH;
    if (t->precision < 0) out.precision = PP_PREC_FP32; /* neither bf16 nor fp16: the Trainer trains in fp32 */
    pp_strategy r = out;
    pp_error e = {""};
    if (pp_strategy_resolve(&r, m, c, &e) != PP_OK) return pp__rule_in_file(t->where, &e, hf_keys, err);
    *s = out;
    return PP_OK;
}
