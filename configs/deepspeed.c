/*
 * deepspeed.c — ds_config.json for DeepSpeed v0.14.5: what DeepSpeed runs
 * for a strategy (pp_deepspeed_adapt), what ds_config.json cannot express
 * (pp_deepspeed_check), and the writer. Reading a config back is in
 * deepspeed_read.c. Every rule cites DeepSpeed's source through
 * tests/reference/deepspeed_config.md (section numbers below) and is
 * listed in docs/deepspeed.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/emit.h"

void pp_deepspeed_opts_default(pp_deepspeed_opts *o)
{
    memset(o, 0, sizeof *o);
    pp_hparams_default(&o->hp);
    o->client_optimizer = 0;
    o->pin_memory = 1;
    o->gather_16bit_on_save = 1;
}

/* ------------------------------------------------------------------ rules */

static const char *grad_name(pp_grad_accum g)
{
    int n;
    const char *const *names = pp_enum_names(PP_ENUM_GRAD_ACCUM, &n);
    return (int)g >= 0 && (int)g < n ? names[g] : "?";
}

/* What DeepSpeed decides implicitly, applied to s. Returns the number of
 * fields changed; each change with a data-parallel effect is noted. */
static int soft_rules(pp_strategy *s, pp_notes *notes)
{
    int changed = 0, bf = pp__ds_is_bf16(s);
    if (s->pp > 1 && s->buf.free_pipeline_outputs) {
        pp__note(notes, "DeepSpeed's PipelineEngine keeps each stage's outputs until their backward: estimating "
                        "without --free-pipeline-outputs");
        s->buf.free_pipeline_outputs = 0;
        changed++;
    }
    long nd = (long)s->dp * s->cp;
    if (bf && s->zero == 0) {
        /* §5 + engine.py get_data_types: bf16 without ZeRO accumulates in
         * fp32, which selects BF16_Optimizer; it shards fp32 master weights
         * and optimizer states over data parallel ranks like ZeRO-1. */
        s->zero = 1;
        s->grad_accum_dtype = PP_GRAD_16_FP32;
        pp__note(notes, "DeepSpeed runs bf16 without ZeRO through BF16_Optimizer: 16-bit gradients plus an fp32 "
                        "accumulation copy, fp32 master weights and optimizer states sharded over the data-parallel "
                        "ranks like ZeRO-1; estimating that (ZeRO-1, gradients 16bit+fp32)");
        changed++;
    }
    if (s->precision == PP_PREC_FP32) {
        s->grad_accum_dtype = PP_GRAD_16; /* unused at fp32: normalised silently */
    } else if (s->precision == PP_PREC_FP16) {
        if (s->grad_accum_dtype != PP_GRAD_16) {
            pp__note(notes, "DeepSpeed accumulates fp16 gradients in fp16 (FP16_Optimizer or ZeRO; fp16 with fp32 "
                            "accumulation raises NotImplementedError): gradients %s -> 16bit",
                     grad_name(s->grad_accum_dtype));
            s->grad_accum_dtype = PP_GRAD_16;
            changed++;
        }
    } else if (s->zero == 1 && s->offload == PP_OFFLOAD_NONE) {
        if (s->grad_accum_dtype == PP_GRAD_FP32) {
            pp__note(notes, "DeepSpeed has no fp32-only gradient buffer (that is Megatron-LM's main_grad); fp32 "
                            "accumulation with bf16 runs BF16_Optimizer: gradients fp32 -> 16bit+fp32");
            s->grad_accum_dtype = PP_GRAD_16_FP32;
            changed++;
        }
    } else if (s->grad_accum_dtype != PP_GRAD_16) {
        pp__note(notes, "DeepSpeed's ZeRO optimizer (stage 2/3, or with offload) accumulates gradients in the 16-bit "
                        "model dtype: gradients %s -> 16bit", grad_name(s->grad_accum_dtype));
        s->grad_accum_dtype = PP_GRAD_16;
        changed++;
    }
    pp__ds_wrapper w = pp__ds_wrapper_of(s);
    if (s->overlap_dp && (s->pp > 1 || w != PP_DS_ZERO)) {
        /* engine.py: overlap_comm is switched off for a PipelineModule; the
         * non-ZeRO wrappers all-reduce after backward (allreduce_gradients) */
        if (nd > 1)
            pp__note(notes, "DeepSpeed reduces gradients after the backward pass here (%s), without overlap: "
                            "estimating with DP communication exposed",
                     s->pp > 1 ? "PipelineEngine runs ReduceGrads after the pipeline flush and turns overlap_comm off"
                               : "no ZeRO optimizer, so overlap_comm does not apply");
        s->overlap_dp = 0;
        changed++;
    }
    if (w != PP_DS_ZERO && s->buf.reduce_bucket != PP_DS_FIXED_ALLREDUCE_BUCKET) {
        pp__note(notes, "without the ZeRO optimizer DeepSpeed all-reduces gradients in fixed 5e8-element buckets "
                        "(engine.py MEMORY_OPT_ALLREDUCE_SIZE); reduce_bucket_size %g is not used: estimating 5e8",
                 s->buf.reduce_bucket);
        s->buf.reduce_bucket = PP_DS_FIXED_ALLREDUCE_BUCKET;
        changed++;
    }
    if (s->overlap_tp) {
        pp__note(notes, "neither DeepSpeed nor Megatron-DeepSpeed overlaps tensor-parallel communication with GEMMs: "
                        "estimating with TP communication exposed");
        s->overlap_tp = 0;
        changed++;
    }
    return changed;
}

/* What ds_config.json (with the launcher DeepSpeed needs) cannot do at all.
 * r is resolved; o may be NULL (then the option-dependent rules are skipped). */
static pp_status hard_rules(const pp_model *m, const pp_strategy *r, const pp_deepspeed_opts *o, pp_error *err)
{
    if (r->pp > 1 && r->zero >= 2)
        return pp__fail(err, PP_ERR_INPUT,
                        "ZeRO-%d with pipeline parallelism (pp %d): DeepSpeed's PipelineEngine asserts \"ZeRO-2 and "
                        "ZeRO-3 are incompatible with pipeline parallelism\"; use --zero 0 or 1, or --pp 1",
                        r->zero, r->pp);
    if (r->pp > 1 && r->schedule != PP_SCHED_1F1B)
        return pp__fail(err, PP_ERR_INPUT,
                        "schedule %s: DeepSpeed's PipelineEngine runs only its 1F1B TrainSchedule; use --schedule 1f1b "
                        "(the interleaved schedule needs Megatron-LM)",
                        pp_schedule_name(r->schedule));
    if (r->pp > 1 && r->recompute == PP_RECOMPUTE_FULL)
        for (int i = 0; i < r->pp; i++) {
            int k = pp__recomputed_blocks(r, i, r->stage_layers[i]);
            if (k < r->stage_layers[i])
                return pp__fail(err, PP_ERR_INPUT,
                                "recomputing %d of the %d blocks of stage %d: DeepSpeed's PipelineModule checkpoints "
                                "every layer (pipeline.activation_checkpoint_interval); recompute all blocks "
                                "(--recompute full without --recompute-layers) or use Megatron-LM",
                                k, r->stage_layers[i], i);
        }
    if (r->cp > 1) {
        if (r->sp)
            return pp__fail(err, PP_ERR_INPUT,
                            "cp %d with sp: DeepSpeed shards sequences with Ulysses (--ds-sequence-parallel-size), "
                            "which Megatron-DeepSpeed refuses to combine with Megatron's --sequence-parallel; drop --sp",
                            r->cp);
        long g = (long)r->tp * r->cp;
        if (m->heads % g || m->kv_heads % g)
            return pp__fail(err, PP_ERR_INPUT,
                            "cp %d: DeepSpeed-Ulysses splits the attention heads of each tensor-parallel rank over "
                            "the cp ranks, so tp*cp = %ld must divide heads (%d) and kv_heads (%d)",
                            r->cp, g, m->heads, m->kv_heads);
    }
    if (r->offload == PP_OFFLOAD_NVME && o && !o->nvme_path[0])
        return pp__fail(err, PP_ERR_INPUT,
                        "offload nvme: give the NVMe mount point with --nvme-path (DeepSpeed accepts a config without "
                        "nvme_path and fails when it starts swapping)");
    if (r->optimizer == PP_OPT_ADAM8BIT && r->offload != PP_OFFLOAD_NONE)
        return pp__fail(err, PP_ERR_INPUT,
                        "optimizer adam8bit with offload %s: ZeRO-Offload steps the optimizer on the CPU, and "
                        "bitsandbytes' 8-bit Adam runs only on the GPU; use --optimizer adamw or --offload none",
                        pp_offload_name(r->offload));
    if (r->precision == PP_PREC_TF32)
        return pp__fail(err, PP_ERR_INPUT, "precision tf32: DeepSpeed has no tf32 mode; use fp32, fp16, bf16 or fp8");
    if (o) return pp_hparams_check(&o->hp, "DeepSpeed hyper-parameters", err);
    return PP_OK;
}

pp_status pp_deepspeed_adapt(const pp_model *m, const pp_cluster *c, pp_strategy *s, pp_notes *notes, pp_error *err)
{
    soft_rules(s, notes);
    pp_strategy r = *s;
    pp_status st = pp_strategy_resolve(&r, m, c, err);
    if (st != PP_OK) return st;
    return hard_rules(m, &r, NULL, err);
}

pp_status pp_deepspeed_check(const pp_model *m, const pp_cluster *c, const pp_strategy *s,
                             const pp_deepspeed_opts *o, pp_error *err)
{
    pp_strategy r = *s;
    pp_status st = pp_strategy_resolve(&r, m, c, err);
    if (st != PP_OK) return st;
    if ((st = hard_rules(m, &r, o, err)) != PP_OK) return st;
    pp_notes why = {0};
    if (soft_rules(&r, &why) == 0) return PP_OK;
    return pp__fail(err, PP_ERR_INPUT,
                    "ds_config.json cannot express this plan exactly: %s (pp_deepspeed_adapt gives the plan DeepSpeed "
                    "runs; `parplan estimate --emit-deepspeed` applies it)",
                    why.n ? why.line[0] : "tensor-parallel overlap or gradient settings DeepSpeed does not have");
}

/* ------------------------------------------------------------------ JSON */

static void add_num(cJSON *o, const char *k, double v) { cJSON_AddItemToObject(o, k, cJSON_CreateNumber(v)); }
static void add_bool(cJSON *o, const char *k, int v) { cJSON_AddItemToObject(o, k, cJSON_CreateBool(v)); }

/* Two-space indented JSON; arrays of scalars stay on one line. */
static void print_value(pp__sbuf *b, const cJSON *v, int depth);

static void print_string(pp__sbuf *b, const char *s)
{
    pp__sb_printf(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') pp__sb_printf(b, "\\%c", ch);
        else if (ch == '\n') pp__sb_printf(b, "\\n");
        else if (ch < 0x20) pp__sb_printf(b, "\\u%04x", ch);
        else pp__sb_printf(b, "%c", ch);
    }
    pp__sb_printf(b, "\"");
}

static void print_value(pp__sbuf *b, const cJSON *v, int depth)
{
    char num[40];
    if (cJSON_IsObject(v)) {
        if (!v->child) {
            pp__sb_printf(b, "{}");
            return;
        }
        pp__sb_printf(b, "{\n");
        for (const cJSON *it = v->child; it; it = it->next) {
            pp__sb_printf(b, "%*s", 2 * (depth + 1), "");
            print_string(b, it->string);
            pp__sb_printf(b, ": ");
            print_value(b, it, depth + 1);
            pp__sb_printf(b, "%s\n", it->next ? "," : "");
        }
        pp__sb_printf(b, "%*s}", 2 * depth, "");
    } else if (cJSON_IsArray(v)) {
        pp__sb_printf(b, "[");
        for (const cJSON *it = v->child; it; it = it->next) {
            print_value(b, it, depth + 1);
            if (it->next) pp__sb_printf(b, ", ");
        }
        pp__sb_printf(b, "]");
    } else if (cJSON_IsNumber(v)) {
        pp__fmt_num(num, sizeof num, v->valuedouble);
        pp__sb_printf(b, "%s", num);
    } else if (cJSON_IsString(v)) {
        print_string(b, v->valuestring);
    } else if (cJSON_IsBool(v)) {
        pp__sb_printf(b, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else {
        pp__sb_printf(b, "null");
    }
}

/* ------------------------------------------------------------------ writer */

static int recomputed_per_stage(const pp_strategy *s)
{
    int most = 0;
    for (int i = 0; i < s->pp; i++) {
        int k = pp__recomputed_blocks(s, i, s->stage_layers[i]);
        if (k > most) most = k;
    }
    return most;
}

static void add_offload(cJSON *zero, const char *key, pp_offload off, const pp_deepspeed_opts *o)
{
    cJSON *j = cJSON_AddObjectToObject(zero, key);
    int nvme = off == PP_OFFLOAD_NVME;
    cJSON_AddStringToObject(j, "device", nvme ? "nvme" : "cpu");
    if (nvme) cJSON_AddStringToObject(j, "nvme_path", o->nvme_path);
    add_bool(j, "pin_memory", o->pin_memory);
}

/* §4: zero_optimization with only the keys the stage reads. */
static void add_zero(cJSON *root, const pp_strategy *s, const pp_deepspeed_opts *o)
{
    cJSON *z = cJSON_AddObjectToObject(root, "zero_optimization");
    pp__ds_wrapper w = pp__ds_wrapper_of(s);
    if (w != PP_DS_ZERO) {
        add_num(z, "stage", 0);
        /* BF16_Optimizer gathers updated weights in allgather buckets */
        if (w == PP_DS_BF16) add_num(z, "allgather_bucket_size", floor(s->buf.allgather_bucket));
        return;
    }
    add_num(z, "stage", s->zero);
    add_bool(z, "overlap_comm", s->overlap_dp);
    add_bool(z, "contiguous_gradients", 1);
    if (s->zero <= 2) add_bool(z, "reduce_scatter", 1);
    add_num(z, "reduce_bucket_size", floor(s->buf.reduce_bucket));
    if (s->zero <= 2) add_num(z, "allgather_bucket_size", floor(s->buf.allgather_bucket));
    if (s->offload != PP_OFFLOAD_NONE) add_offload(z, "offload_optimizer", s->offload, o);
    if (s->zero == 3) {
        if (s->offload == PP_OFFLOAD_OPT_PARAMS || s->offload == PP_OFFLOAD_NVME)
            add_offload(z, "offload_param", s->offload, o);
        add_num(z, "stage3_prefetch_bucket_size", floor(s->buf.prefetch_bucket));
        add_num(z, "stage3_param_persistence_threshold", floor(s->buf.param_persistence));
        add_num(z, "stage3_max_live_parameters", floor(s->buf.max_live_params));
        add_num(z, "stage3_max_reuse_distance", PP_DS_MAX_REUSE_DISTANCE);
        add_bool(z, "stage3_gather_16bit_weights_on_model_save", o->gather_16bit_on_save);
    }
}

static void add_precision(cJSON *root, const pp_strategy *s, const pp_hparams *hp)
{
    if (pp__ds_is_bf16(s)) {
        add_bool(cJSON_AddObjectToObject(root, "bf16"), "enabled", 1);
    } else if (s->precision == PP_PREC_FP16) {
        cJSON *f = cJSON_AddObjectToObject(root, "fp16");
        add_bool(f, "enabled", 1);
        add_num(f, "loss_scale", 0); /* dynamic */
        add_num(f, "initial_scale_power", hp->initial_scale_power);
        add_num(f, "loss_scale_window", hp->loss_scale_window);
        add_num(f, "hysteresis", hp->hysteresis);
        add_num(f, "min_loss_scale", hp->min_loss_scale);
    }
    if (pp__ds_wrapper_of(s) == PP_DS_BF16)
        cJSON_AddStringToObject(cJSON_AddObjectToObject(root, "data_types"), "grad_accum_dtype", "fp32");
}

/* DeepSpeed builds these from the optimizer block (§8): its own adamw,
 * lion, adagrad, or a torch.optim class. */
static int ds_builds(pp_optimizer o)
{
    return o == PP_OPT_ADAMW || o == PP_OPT_SGD || o == PP_OPT_LION || o == PP_OPT_ADAGRAD || o == PP_OPT_RMSPROP;
}

/* engine.py ZERO_SUPPORTED_OPTIMIZERS: Adam(W), FusedAdam, CPUAdam,
 * Adagrad, CPUAdagrad, Lion (fused and CPU). */
static int zero_supported(pp_optimizer o)
{
    return o == PP_OPT_ADAMW || o == PP_OPT_LION || o == PP_OPT_ADAGRAD;
}

/* §8: optimizer and scheduler blocks DeepSpeed builds itself. */
static void add_optimizer(cJSON *root, const pp_strategy *s, const pp_deepspeed_opts *o)
{
    const pp_hparams *hp = &o->hp;
    int builds = !o->client_optimizer && ds_builds(s->optimizer);
    /* engine.py: ZeRO with an optimizer outside ZERO_SUPPORTED_OPTIMIZERS asserts unless allowed */
    if (pp__ds_wrapper_of(s) == PP_DS_ZERO && !zero_supported(s->optimizer))
        add_bool(root, "zero_allow_untested_optimizer", 1);
    /* a client optimizer with offload must be DeepSpeedCPUAdam unless this is false */
    if (s->offload != PP_OFFLOAD_NONE && !builds && s->optimizer != PP_OPT_ADAMW)
        add_bool(root, "zero_force_ds_cpu_optimizer", 0);
    if (builds) {
        cJSON *opt = cJSON_AddObjectToObject(root, "optimizer");
        static const char *const type[PP_OPT_COUNT] = {
            [PP_OPT_ADAMW] = "AdamW", [PP_OPT_SGD] = "SGD", [PP_OPT_LION] = "Lion", [PP_OPT_ADAGRAD] = "Adagrad",
            [PP_OPT_RMSPROP] = "RMSprop"};
        cJSON_AddStringToObject(opt, "type", type[s->optimizer]);
        cJSON *par = cJSON_AddObjectToObject(opt, "params");
        add_num(par, "lr", hp->lr);
        if (s->optimizer == PP_OPT_ADAMW || s->optimizer == PP_OPT_LION) {
            cJSON *betas = cJSON_AddArrayToObject(par, "betas");
            cJSON_AddItemToArray(betas, cJSON_CreateNumber(hp->beta1));
            cJSON_AddItemToArray(betas, cJSON_CreateNumber(hp->beta2));
        }
        if (s->optimizer == PP_OPT_ADAMW || s->optimizer == PP_OPT_ADAGRAD || s->optimizer == PP_OPT_RMSPROP)
            add_num(par, "eps", hp->eps);
        if (s->optimizer == PP_OPT_SGD) add_num(par, "momentum", hp->momentum);
        add_num(par, "weight_decay", hp->weight_decay);
    }
    if (o->client_scheduler) return;
    cJSON *sch = cJSON_AddObjectToObject(root, "scheduler");
    cJSON_AddStringToObject(sch, "type", "WarmupDecayLR");
    cJSON *par = cJSON_AddObjectToObject(sch, "params");
    add_num(par, "total_num_steps", hp->total_steps);
    add_num(par, "warmup_min_lr", hp->min_lr);
    add_num(par, "warmup_max_lr", hp->lr);
    add_num(par, "warmup_num_steps", hp->warmup_steps);
    cJSON_AddStringToObject(par, "warmup_type", "linear");
}

static cJSON *build(const pp_strategy *s, const pp_deepspeed_opts *o)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    /* §3: all three batch keys, integers, TB = MB * GAS * DP */
    add_num(root, "train_batch_size", s->global_batch);
    add_num(root, "train_micro_batch_size_per_gpu", s->micro_batch);
    add_num(root, "gradient_accumulation_steps", s->grad_accum);
    add_num(root, "gradient_clipping", o->hp.gradient_clipping);
    add_precision(root, s, &o->hp);
    add_zero(root, s, o);
    add_optimizer(root, s, o);
    if (s->recompute == PP_RECOMPUTE_FULL) {
        /* §6: correct key names; partitioning and CPU copies off, as
         * parplan's memory model assumes */
        cJSON *ac = cJSON_AddObjectToObject(root, "activation_checkpointing");
        add_bool(ac, "partition_activations", 0);
        add_bool(ac, "contiguous_memory_optimization", 0);
        add_num(ac, "number_checkpoints", recomputed_per_stage(s));
        add_bool(ac, "cpu_checkpointing", 0);
    }
    if (s->pp > 1) {
        /* §7: the keys PipelineEngine reads; stages come from the model */
        cJSON *pipe = cJSON_AddObjectToObject(root, "pipeline");
        add_num(pipe, "activation_checkpoint_interval", s->recompute == PP_RECOMPUTE_FULL ? 1 : 0);
        add_bool(pipe, "pipe_partitioned", 1);
        add_bool(pipe, "grad_partitioned", 1);
    }
    return root;
}

static void split_text(const pp_strategy *s, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->pp && n + 12 < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%d", i ? "," : "", s->stage_layers[i]);
}

/* What the file leaves to the launcher and the model code. */
static void launcher_notes(const pp_model *m, const pp_strategy *s, const pp_memory *mem, const pp_deepspeed_opts *o,
                           pp_notes *notes)
{
    if (s->precision == PP_PREC_FP8)
        pp__note(notes, "fp8: ds_config.json enables bf16; DeepSpeed has no fp8 switch, the fp8 GEMMs come from "
                        "Transformer Engine layers in the model code (te.fp8_autocast), as parplan's fp8 estimate assumes");
    if (pp__ds_wrapper_of(s) == PP_DS_BF16)
        pp__note(notes, "zero_optimization.stage 0 with bf16 and fp32 gradient accumulation runs BF16_Optimizer, "
                        "which shards fp32 master weights and optimizer states over the %d data-parallel ranks "
                        "(parplan: ZeRO-1)", s->dp * s->cp);
    if (s->tp > 1 || s->pp > 1 || s->cp > 1 || s->ep > 1)
        pp__note(notes, "tp %d, pp %d, cp %d, ep %d are set by the launcher, not by ds_config.json (Megatron-DeepSpeed "
                        "flags: --emit-megatron); DeepSpeed's batch rule uses the data-parallel size %d its mpu reports",
                 s->tp, s->pp, s->cp, s->ep, s->dp);
    if (s->cp > 1)
        pp__note(notes, "cp %d is DeepSpeed-Ulysses (--ds-sequence-parallel-size %d): the same activation and ZeRO "
                        "sharding (ZeRO shards over dp*cp = %d) but all-to-all attention exchange instead of the ring "
                        "parplan times", s->cp, s->cp, s->dp * s->cp);
    if (s->pp > 1) {
        char split[256];
        split_text(s, split, sizeof split);
        pp__note(notes, "pp %d: PipelineModule(num_stages=%d) places layers with its own partition_method; parplan "
                        "assumed %s blocks per stage", s->pp, s->pp, split);
    }
    if (s->recompute == PP_RECOMPUTE_FULL && s->pp == 1)
        pp__note(notes, "recompute full is switched on by the training code (Hugging Face "
                        "model.gradient_checkpointing_enable(), Megatron --recompute-granularity full); "
                        "activation_checkpointing only configures deepspeed.checkpointing");
    if (s->recompute == PP_RECOMPUTE_SELECTIVE)
        pp__note(notes, "recompute selective is model code (Megatron --recompute-granularity selective, or flash "
                        "attention); ds_config.json has no switch for it");
    if (m->experts > 0)
        pp__note(notes, "MoE: experts and expert parallelism are model code (deepspeed.moe.layer.MoE(ep_size=%d) or "
                        "Megatron flags); ds_config.json does not describe them", s->ep);
    if (!o->client_optimizer && !ds_builds(s->optimizer))
        pp__note(notes, "optimizer %s is not one DeepSpeed builds: pass it to deepspeed.initialize(optimizer=...) "
                        "(bitsandbytes.optim.AdamW8bit or transformers.Adafactor); the scheduler block still applies",
                 pp_optimizer_name(s->optimizer));
    if (o->client_optimizer && s->offload != PP_OFFLOAD_NONE && s->optimizer == PP_OPT_ADAMW)
        pp__note(notes, "offload with the training script's own optimizer: it must be "
                        "deepspeed.ops.adam.DeepSpeedCPUAdam (Megatron-DeepSpeed: --cpu-optimizer), or DeepSpeed raises "
                        "ZeRORuntimeException");
    if (s->ft.mode != PP_MODE_FULL || s->ft.freeze_embeddings || s->ft.freeze_layers)
        pp__note(notes, "fine-tuning (%s%s): adapters and frozen weights are model code (PEFT, requires_grad); "
                        "ds_config.json is the same as for full training%s",
                 s->ft.mode == PP_MODE_LORA ? "LoRA" : s->ft.mode == PP_MODE_QLORA ? "QLoRA" : "full",
                 s->ft.freeze_embeddings || s->ft.freeze_layers ? ", frozen parts" : "",
                 s->ft.mode == PP_MODE_QLORA && s->zero == 3
                     ? "; QLoRA under ZeRO-3 needs bnb_4bit_quant_storage set to the 16-bit dtype" : "");
    if (!mem->fits)
        pp__note(notes, "the plan's predicted peak %.1f GiB per GPU %s %.1f GiB usable%s: this config is expected to "
                        "run out of memory", mem->peak_bytes / 1073741824.0,
                 mem->peak_bytes > mem->gpu_bytes ? "exceeds the" : "fits the", mem->gpu_bytes / 1073741824.0,
                 mem->host_fits ? "" : ", but the offloaded states exceed host memory");
}

pp_status pp_deepspeed_to_string(const pp_model *m, const pp_cluster *c, const pp_plan *p,
                                 const pp_deepspeed_opts *o, char **out, pp_notes *notes, pp_error *err)
{
    *out = NULL;
    pp_deepspeed_opts def;
    if (!o) {
        pp_deepspeed_opts_default(&def);
        o = &def;
    }
    pp_status st = pp_deepspeed_check(m, c, &p->strategy, o, err);
    if (st != PP_OK) return st;
    pp_strategy s = p->strategy;
    if ((st = pp_strategy_resolve(&s, m, c, err)) != PP_OK) return st;
    cJSON *root = build(&s, o);
    if (!root) return pp__fail(err, PP_ERR_NOMEM, "out of memory building ds_config.json");
    pp__sbuf b = {0};
    print_value(&b, root, 0);
    pp__sb_printf(&b, "\n");
    cJSON_Delete(root);
    *out = pp__sb_take(&b);
    if (!*out) return pp__fail(err, PP_ERR_NOMEM, "out of memory printing ds_config.json");
    launcher_notes(m, &s, &p->memory, o, notes);
    return PP_OK;
}

pp_status pp_deepspeed_write(const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_deepspeed_opts *o,
                             const char *path, int force, pp_notes *notes, pp_error *err)
{
    char *text = NULL;
    pp_notes local = {0};
    pp_status st = pp_deepspeed_to_string(m, c, p, o, &text, &local, err);
    if (st != PP_OK) return st;
    st = pp_write_file(path, text, strlen(text), force, err);
    pp_free(text);
    if (st == PP_OK && notes)
        for (int i = 0; i < local.n; i++) pp__note(notes, "%s", local.line[i]);
    return st;
}
