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
#include "costmodel/rules.h"

void pp_deepspeed_opts_default(pp_deepspeed_opts *o)
{
    memset(o, 0, sizeof *o);
    pp_hparams_default(&o->hp);
    o->client_optimizer = 0;
    o->pin_memory = 1;
    o->gather_16bit_on_save = 1;
}

/* ------------------------------------------------------------------ rules
 * What DeepSpeed can express and how it runs is the framework table
 * (costmodel/framework.c) and the rule table (costmodel/rules.c); here only
 * what depends on the file's options. */

/* Behaviours the framework decides, back to AUTO, saying which were set
 * otherwise; the framework itself from the degrees. */
/* A behaviour the user set that framework fw cannot run goes back to AUTO
 * (the framework's own), with a note; one it can run stays. */
typedef struct behaviour {
    pp_rule rule;
    const char *what;
    int *field;
    const char *const *names; /* value names, or NULL for on/off */
} behaviour;

void pp__adapt_framework(const pp_model *m, const pp_cluster *c, pp_strategy *s, pp_framework fw, pp_notes *notes)
{
    if (s->framework != fw && s->framework != PP_FW_AUTO)
        pp__note(notes, "framework %s -> %s", pp_framework_name(s->framework), pp_framework_name(fw));
    s->framework = fw;
    int n;
    const char *const *cp_names = pp_enum_names(PP_ENUM_CP_COMM, &n);
    behaviour b[] = {
        {PP_RULE_FW_GRAD_ACCUM, "gradient accumulation", (int *)&s->grad_accum_dtype, pp_enum_names(PP_ENUM_GRAD_ACCUM, &n)},
        {PP_RULE_FW_CP_COMM, "context parallelism", (int *)&s->cp_comm, cp_names},
        {PP_RULE_FW_DP_OVERLAP, "DP overlap", &s->overlap_dp, NULL},
        {PP_RULE_FW_TP_OVERLAP, "TP overlap", &s->overlap_tp, NULL},
        {PP_RULE_FW_OUTPUTS, "pipeline outputs freed once sent", &s->buf.free_pipeline_outputs, NULL},
        {PP_RULE_FW_ALLOCATOR, "expandable segments", &s->buf.expandable_segments, NULL},
        {PP_RULE_FW_FP8_PARAMS, "FP8 primary weights", &s->fp8_param_gather, NULL}};
    for (size_t i = 0; i < sizeof b / sizeof *b; i++) {
        if (*b[i].field < 0) continue;
        pp__rule_ctx x = {m, c, s, 0};
        if (pp__rule_eval(&x, b[i].rule, NULL)) continue;
        int was = *b[i].field;
        *b[i].field = -1;
        pp_strategy d = *s;
        pp__fw_fill(&d, c);
        int now = *(int *)((char *)&d + ((char *)b[i].field - (char *)s));
        pp__note(notes, "%s runs %s its own way: %s -> %s", pp_framework_name(fw), b[i].what,
                 b[i].names ? b[i].names[was] : was ? "on" : "off", b[i].names ? b[i].names[now] : now ? "on" : "off");
    }
    /* buckets: DeepSpeed's two; Megatron's --ddp-bucket-size when one was given */
    int bk = pp__fw_get(fw)->buckets;
    if (bk != PP_BUCKETS_DEEPSPEED) s->buf.allgather_bucket = 0;
    if (bk != PP_BUCKETS_DEEPSPEED && (bk != PP_BUCKETS_VIEWS || (s->filled & PP_FILLED_REDUCE_BUCKET)))
        s->buf.reduce_bucket = 0;
}

/* What ds_config.json needs from its options. */
static pp_status option_rules(const pp_strategy *r, const pp_deepspeed_opts *o, pp_error *err)
{
    if (r->offload == PP_OFFLOAD_NVME && o && !o->nvme_path[0])
        return pp__fail_field(err, 0, "nvme_path", "", "offload nvme: give the NVMe mount point (DeepSpeed accepts a "
                              "config without nvme_path and fails when it starts swapping)");
    if (o) return pp_hparams_check(&o->hp, "DeepSpeed hyper-parameters", err);
    return PP_OK;
}

/* ds_config.json is for plans DeepSpeed runs. */
static pp_status for_deepspeed(const pp_strategy *r, pp_error *err)
{
    if (r->framework == PP_FW_DEEPSPEED || r->framework == PP_FW_MEGATRON_DEEPSPEED) return PP_OK;
    return pp__fail_field(err, 0, "framework", pp_framework_name(r->framework),
                          "ds_config.json is for plans DeepSpeed runs (framework deepspeed or megatron-deepspeed)");
}

pp_status pp_deepspeed_adapt(const pp_model *m, const pp_cluster *c, pp_strategy *s, pp_notes *notes, pp_error *err)
{
    PP__C_NUMERIC;
    pp__adapt_framework(m, c, s, s->tp > 1 || s->sp || s->ep > 1 ? PP_FW_MEGATRON_DEEPSPEED : PP_FW_DEEPSPEED, notes);
    pp_strategy r = *s;
    return pp_strategy_resolve(&r, m, c, err);
}

pp_status pp_deepspeed_check(const pp_model *m, const pp_cluster *c, const pp_strategy *s,
                             const pp_deepspeed_opts *o, pp_error *err)
{
    PP__C_NUMERIC;
    pp_strategy r = *s;
    pp_status st = pp_strategy_resolve(&r, m, c, err);
    if (st == PP_OK) st = for_deepspeed(&r, err);
    return st == PP_OK ? option_rules(&r, o, err) : st;
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
        add_num(z, "sub_group_size", floor(s->buf.sub_group_size)); /* what the step's fp32 gradient copy is priced by */
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
static void launcher_notes(const pp_model *m, const pp_strategy *s, const pp_memory *mem, pp_fit fit,
                           const pp_deepspeed_opts *o, pp_notes *notes)
{
    if (s->precision == PP_PREC_FP8)
        pp__note(notes, "fp8: ds_config.json enables bf16; DeepSpeed has no fp8 switch, the fp8 GEMMs come from "
                        "Transformer Engine layers in the model code (te.fp8_autocast), as parplan's fp8 estimate assumes");
    if (pp__ds_wrapper_of(s) == PP_DS_BF16)
        pp__note(notes, "zero_optimization.stage 0 with bf16 and fp32 gradient accumulation runs BF16_Optimizer, "
                        "which shards fp32 master weights and optimizer states over the %d data-parallel ranks "
                        "(parplan: ZeRO-1)", s->dp * s->cp);
    if (s->tp > 1 || s->pp > 1 || s->cp > 1 || s->ep > 1)
        pp__note(notes, "tp %d, pp %d, cp %d, ep %d are set by the %s, not by ds_config.json; DeepSpeed's batch rule "
                        "uses the data-parallel size %d its mpu reports", s->tp, s->pp, s->cp, s->ep,
                 s->framework == PP_FW_MEGATRON_DEEPSPEED ? "Megatron-DeepSpeed arguments" : "training script", s->dp);
    if (s->cp > 1)
        pp__note(notes, "cp %d is DeepSpeed-Ulysses (%s): all-to-all exchanges of q/k/v and the attention output, "
                        "ZeRO shards over dp*cp = %d", s->cp,
                 s->framework == PP_FW_MEGATRON_DEEPSPEED ? "--ds-sequence-parallel-size" : "DistributedAttention",
                 s->dp * s->cp);
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
                     ? "; QLoRA under ZeRO-3 needs bnb_4bit_quant_storage in the 16-bit dtype (bnb_config.json "
                       "sets it) and the model loaded in that torch_dtype" : "");
    if (!mem->fits) pp__note_unfit(notes, mem, fit);
}

pp_status pp_deepspeed_to_string(const pp_model *m, const pp_cluster *c, const pp_plan *p,
                                 const pp_deepspeed_opts *o, char **out, pp_notes *notes, pp_error *err)
{
    PP__C_NUMERIC;
    *out = NULL;
    pp_deepspeed_opts def;
    if (!o) {
        pp_deepspeed_opts_default(&def);
        o = &def;
    }
    /* the plan's strategy is resolved (pp_estimate): trusted as it is */
    (void)c;
    const pp_strategy s = p->strategy;
    pp_status st = for_deepspeed(&s, err);
    if (st == PP_OK) st = option_rules(&s, o, err);
    if (st != PP_OK) return st;
    cJSON *root = build(&s, o);
    if (!root) return pp__fail(err, PP_ERR_NOMEM, "out of memory building ds_config.json");
    pp__sbuf b = {0};
    print_value(&b, root, 0);
    pp__sb_printf(&b, "\n");
    cJSON_Delete(root);
    *out = pp__sb_take(&b);
    if (!*out) return pp__fail(err, PP_ERR_NOMEM, "out of memory printing ds_config.json");
    launcher_notes(m, &s, &p->memory, p->uncertainty.fit, o, notes);
    return PP_OK;
}

pp_status pp_deepspeed_write(const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_deepspeed_opts *o,
                             const char *path, int force, pp_notes *notes, pp_error *err)
{
    PP__C_NUMERIC;
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
