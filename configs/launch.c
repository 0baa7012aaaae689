/*
 * launch.c — the files a plan's framework launches with (docs/frameworks.md):
 *   pytorch             training_args.json (HF TrainingArguments), with PEFT's
 *                       adapter_config.json and a BitsAndBytesConfig for QLoRA
 *   deepspeed           ds_config.json; training_args.json for the HF Trainer
 *                       when it can run the plan (no pipeline, no Ulysses)
 *   megatron            megatron_args.sh
 *   megatron-deepspeed  ds_config.json and megatron_deepspeed_args.sh
 *   fsdp                accelerate_fsdp.yaml (HF Accelerate 1.14, FSDP2) and
 *                       training_args.json, or torchtitan.toml (v0.2.2)
 * plus README.txt (the launch command) and plan.json. Every file is built
 * in memory first; pp_plan_emit writes all plans' files as one set.
 */
#include <math.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configs/configs.h"
#include "configs/emit.h"

#define ACCELERATE_VERSION "1.14.0"
#define TORCHTITAN_VERSION "v0.2.2"

void pp_launch_opts_default(pp_launch_opts *o)
{
    memset(o, 0, sizeof *o);
    pp_hparams_default(&o->hp);
    snprintf(o->nvme_path, sizeof o->nvme_path, "/local_nvme");
}

void pp_launch_free(pp_launch *l)
{
    if (!l) return;
    for (int i = 0; i < l->n; i++) pp_free(l->files[i].text);
    l->n = 0;
}

static pp_status add_file(pp_launch *l, const char *name, char *text, pp_error *err)
{
    if (!text) return pp__fail(err, PP_ERR_NOMEM, "out of memory writing %s", name);
    if (l->n >= PP_LAUNCH_MAX) {
        pp_free(text);
        return pp__fail(err, PP_ERR_INTERNAL, "more than %d launch files", PP_LAUNCH_MAX);
    }
    snprintf(l->files[l->n].name, sizeof l->files[l->n].name, "%s", name);
    l->files[l->n++].text = text;
    return PP_OK;
}

static char *json_text(cJSON *o)
{
    char *t = o ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    if (!t) return NULL;
    size_t n = strlen(t);
    char *r = realloc(t, n + 2);
    if (!r) {
        free(t);
        return NULL;
    }
    r[n] = '\n', r[n + 1] = '\0';
    return r;
}

/* ------------------------------------------------------------ HF */

/* transformers' OptimizerNames for each optimizer (the default foreach
 * AdamW is what the pytorch framework prices). */
static const char *hf_optim(pp_optimizer o)
{
    static const char *const names[PP_OPT_COUNT] = {
        [PP_OPT_ADAMW] = "adamw_torch", [PP_OPT_ADAM8BIT] = "adamw_bnb_8bit", [PP_OPT_ADAFACTOR] = "adafactor",
        [PP_OPT_SGD] = "sgd", [PP_OPT_LION] = "lion_32bit", [PP_OPT_ADAGRAD] = "adagrad", [PP_OPT_RMSPROP] = "rmsprop"};
    return (unsigned)o < PP_OPT_COUNT ? names[o] : "adamw_torch";
}

/* JSON that is YAML too, which TRL's `trl sft --config` reads
 * (trl/scripts/utils.py: yaml.safe_load, YAML 1.1): spaces where cJSON
 * indents with tabs, and a mantissa with a point in exponent numbers
 * (YAML 1.1 reads 1e-08 as a string, 1.0e-08 as a float). */
static char *json_yaml_text(cJSON *o)
{
    char *t = json_text(o);
    char *r = t ? malloc(2 * strlen(t) + 1) : NULL;
    if (!r) {
        free(t);
        return NULL;
    }
    char *d = r;
    int str = 0, esc = 0, num = 0, dot = 0;
    for (const char *c = t; *c; c++) {
        if (str) { /* a quote ends the string unless escaped; an escaped backslash escapes nothing */
            if (esc) esc = 0;
            else if (*c == '\\') esc = 1;
            else if (*c == '"') str = 0;
            *d++ = *c;
            continue;
        }
        if (*c == '"') str = 1;
        if (!num && (isdigit((unsigned char)*c) || *c == '-')) num = 1, dot = 0;
        else if (num && !(isdigit((unsigned char)*c) || *c == '.' || *c == 'e' || *c == 'E' || *c == '-' || *c == '+'))
            num = 0;
        if (num && *c == '.') dot = 1;
        if (num && (*c == 'e' || *c == 'E') && !dot) *d++ = '.', *d++ = '0', dot = 1;
        if (*c == '\t') *d++ = ' ', *d++ = ' '; /* strings escape their tabs: these are indentation and separators */
        else *d++ = *c;
    }
    *d = '\0';
    free(t);
    return r;
}

/* LoRA and QLoRA run under TRL's `trl sft --config training_args.json`
 * (SFTConfig, a TrainingArguments subclass, and ModelConfig keys: TRL v1.x
 * trl/scripts/sft.py, trl/trainer/model_config.py): the adapter, the 4-bit
 * base, the base's dtype (TRL loads float32 unless told) and the sequence
 * length (SFTConfig.max_length cuts to 1024 unless told), as priced. */
static void trl_keys(cJSON *o, const pp_model *m, const pp_strategy *s)
{
    const pp_finetune *f = &s->ft;
    cJSON_AddStringToObject(o, "dtype", s->precision == PP_PREC_FP16 ? "float16" : s->precision == PP_PREC_BF16 ? "bfloat16" : "float32");
    cJSON_AddBoolToObject(o, "use_peft", 1);
    cJSON_AddNumberToObject(o, "lora_r", f->lora_rank);
    cJSON_AddNumberToObject(o, "lora_alpha", f->lora_alpha);
    cJSON_AddNumberToObject(o, "lora_dropout", f->lora_dropout);
    /* TRL's ModelConfig turns a one-name list into a string, which PEFT
     * then matches as a regex against whole module paths (nothing
     * matches): a lone name is written twice (review) */
    cJSON *tm = cJSON_AddArrayToObject(o, "lora_target_modules");
    pp__lora_target_names(tm, m, f->lora_targets);
    if (cJSON_GetArraySize(tm) == 1) cJSON_AddItemToArray(tm, cJSON_CreateString(tm->child->valuestring));
    if (f->mode == PP_MODE_QLORA) { /* bitsandbytes NF4 with double quantisation, as bnb_config.json */
        cJSON_AddBoolToObject(o, "load_in_4bit", 1);
        cJSON_AddStringToObject(o, "bnb_4bit_quant_type", "nf4");
        cJSON_AddBoolToObject(o, "use_bnb_nested_quant", 1);
        if (s->zero == 3) cJSON_AddStringToObject(o, "bnb_4bit_quant_storage", s->precision == PP_PREC_FP16 ? "float16" : "bfloat16");
    }
    cJSON_AddNumberToObject(o, "max_length", s->seq);
}

/* TrainingArguments as JSON (HfArgumentParser.parse_json_file): what the
 * plan sets, and the hyper-parameters; TRL's keys for LoRA and QLoRA.
 * ds_config names DeepSpeed's file. */
static char *training_args(const pp_model *m, const pp_plan *p, const pp_hparams *hp, const char *ds_config)
{
    const pp_strategy *s = &p->strategy;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "output_dir", "output");
    cJSON_AddNumberToObject(o, "per_device_train_batch_size", s->micro_batch);
    cJSON_AddNumberToObject(o, "gradient_accumulation_steps", s->grad_accum);
    /* under FSDP the YAML's fsdp_activation_checkpointing says it: the
     * Trainer refuses both (transformers training_args.py) */
    int ckpt = s->recompute == PP_RECOMPUTE_FULL && s->framework != PP_FW_FSDP;
    cJSON_AddBoolToObject(o, "gradient_checkpointing", ckpt);
    /* reentrant, as priced (the whole forward again): transformers' default
     * until PR #43203 (January 2026), which made it non-reentrant */
    if (ckpt) cJSON_AddBoolToObject(cJSON_AddObjectToObject(o, "gradient_checkpointing_kwargs"), "use_reentrant", 1);
    cJSON_AddBoolToObject(o, "bf16", s->precision == PP_PREC_BF16);
    cJSON_AddBoolToObject(o, "fp16", s->precision == PP_PREC_FP16);
    cJSON_AddBoolToObject(o, "tf32", 0);
    /* FSDP's CPU offload runs the step on the CPU's fp32 shards: torch's
     * AdamW defaults to foreach only on CUDA (optimizer.py
     * _default_to_fused_or_foreach), so adamw_torch would loop tensor by
     * tensor there; the fused CPU kernel (torch >= 2.4) is one pass, as
     * priced (steptime.c optimizer_time) */
    int cpu_step = s->framework == PP_FW_FSDP && s->offload != PP_OFFLOAD_NONE && s->optimizer == PP_OPT_ADAMW;
    cJSON_AddStringToObject(o, "optim", cpu_step ? "adamw_torch_fused" : hf_optim(s->optimizer));
    cJSON_AddNumberToObject(o, "learning_rate", hp->lr);
    cJSON_AddNumberToObject(o, "weight_decay", hp->weight_decay);
    cJSON_AddNumberToObject(o, "adam_beta1", hp->beta1);
    cJSON_AddNumberToObject(o, "adam_beta2", hp->beta2);
    cJSON_AddNumberToObject(o, "adam_epsilon", hp->eps);
    cJSON_AddNumberToObject(o, "max_grad_norm", hp->gradient_clipping);
    cJSON_AddNumberToObject(o, "max_steps", hp->total_steps);
    cJSON_AddNumberToObject(o, "warmup_steps", hp->warmup_steps);
    if (hp->min_lr > 0) {
        /* linear from min_lr up and back down to it: the warmup-stable-decay
         * schedule with no stable phase (transformers optimization.py
         * get_wsd_schedule; "linear" has no floor; red team rt11) */
        cJSON_AddStringToObject(o, "lr_scheduler_type", "warmup_stable_decay");
        cJSON *kw = cJSON_AddObjectToObject(o, "lr_scheduler_kwargs");
        cJSON_AddNumberToObject(kw, "num_stable_steps", 0);
        cJSON_AddNumberToObject(kw, "num_decay_steps", hp->total_steps - hp->warmup_steps);
        cJSON_AddStringToObject(kw, "decay_type", "linear");
        cJSON_AddNumberToObject(kw, "min_lr_ratio", hp->min_lr / hp->lr);
    } else
        cJSON_AddStringToObject(o, "lr_scheduler_type", "linear");
    if (s->loss == PP_LOSS_CHUNKED) cJSON_AddBoolToObject(o, "use_liger_kernel", 1);
    if (s->dp > 1) cJSON_AddBoolToObject(o, "ddp_find_unused_parameters", 0);
    if (ds_config) cJSON_AddStringToObject(o, "deepspeed", ds_config);
    if (s->ft.mode != PP_MODE_FULL) trl_keys(o, m, s);
    /* run_clm.py's DataTrainingArguments: the sequence length priced (its
     * default is the tokenizer's limit capped at 1024) */
    else cJSON_AddNumberToObject(o, "block_size", s->seq);
    return json_yaml_text(o);
}

/* bitsandbytes' 4-bit NF4 with double quantisation (the QLoRA recipe, as
 * parplan prices it: pp__qlora_bytes_per_param). */
static char *bnb_config(const pp_strategy *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "load_in_4bit", 1);
    cJSON_AddStringToObject(o, "bnb_4bit_quant_type", "nf4");
    cJSON_AddBoolToObject(o, "bnb_4bit_use_double_quant", 1);
    cJSON_AddStringToObject(o, "bnb_4bit_compute_dtype", s->precision == PP_PREC_FP16 ? "float16" : "bfloat16");
    /* 4-bit weights sharded by ZeRO-3 need a 16-bit storage dtype to be
     * flattened and partitioned with the rest (peft docs/source/accelerate/
     * deepspeed.md: bnb_4bit_quant_storage = the torch_dtype) */
    if (s->zero == 3)
        cJSON_AddStringToObject(o, "bnb_4bit_quant_storage", s->precision == PP_PREC_FP16 ? "float16" : "bfloat16");
    return json_text(o);
}

/* ------------------------------------------------------------ FSDP */

/* The decoder-layer class HF transformers wraps as one FSDP unit. */
static const char *hf_layer_class(const pp_model *m)
{
    static const struct { const char *prefix, *cls; } map[] = {
        {"llama", "LlamaDecoderLayer"}, {"mistral", "MistralDecoderLayer"}, {"mixtral", "MixtralDecoderLayer"},
        {"qwen3", "Qwen3DecoderLayer"}, {"qwen2", "Qwen2DecoderLayer"}, {"gemma", "GemmaDecoderLayer"},
        {"gpt2", "GPT2Block"}, {"gpt-neox", "GPTNeoXLayer"}, {"pythia", "GPTNeoXLayer"}, {"falcon", "FalconDecoderLayer"},
        {"bloom", "BloomBlock"}, {"opt", "OPTDecoderLayer"}, {"mpt", "MPTBlock"}, {"deepseek", "DeepseekV3DecoderLayer"},
        {"phi", "PhiDecoderLayer"}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strncmp(m->name, map[i].prefix, strlen(map[i].prefix))) return map[i].cls;
    return NULL;
}

/* HF Accelerate's FSDP2 config (accelerate config's keys, v1.14):
 * reshard_after_forward for zero 3/2, parameters and optimizer on the CPU
 * for offload, activation checkpointing for full recompute, and the
 * parallelism sizes (HSDP: replicate x shard; TP and CP). */
static char *accelerate_yaml(const pp_model *m, const pp_cluster *c, const pp_plan *p, pp_notes *notes)
{
    const pp_strategy *s = &p->strategy;
    int world = pp_cluster_gpus(c), nd = s->dp * s->cp, shard = s->shard > 0 && s->shard < nd ? s->shard : nd;
    const char *cls = hf_layer_class(m);
    if (!cls) pp__note(notes, "accelerate_fsdp.yaml: set fsdp_transformer_layer_cls_to_wrap to %s's decoder-layer class", m->name);
    pp__sbuf b = {0};
    char nm[2][PP_NAME_LEN];
    pp__sb_printf(&b, "# HF Accelerate %s FSDP2 config for %s on %d x %s, written by parplan %s.\n", ACCELERATE_VERSION,
                  pp__safe(m->name, nm[0], sizeof nm[0]), world, pp__safe(c->gpu.name, nm[1], sizeof nm[1]), pp_version());
    pp__sb_printf(&b, "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\n");
    pp__sb_printf(&b, "mixed_precision: %s\n", s->precision == PP_PREC_BF16 ? "bf16" : "'no'");
    pp__sb_printf(&b, "num_machines: %d\nnum_processes: %d\nmachine_rank: 0\nmain_training_function: main\n"
                      "rdzv_backend: static\nsame_network: true\nuse_cpu: false\n", c->nodes, world);
    pp__sb_printf(&b, "fsdp_config:\n  fsdp_version: 2\n  fsdp_reshard_after_forward: %s\n",
                  s->zero == 3 ? "true" : "false");
    pp__sb_printf(&b, "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n  fsdp_transformer_layer_cls_to_wrap: %s\n",
                  cls ? cls : "DecoderLayer");
    pp__sb_printf(&b, "  fsdp_offload_params: %s\n", s->offload == PP_OFFLOAD_OPT_PARAMS ? "true" : "false");
    pp__sb_printf(&b, "  fsdp_state_dict_type: SHARDED_STATE_DICT\n  fsdp_activation_checkpointing: %s\n",
                  s->recompute == PP_RECOMPUTE_FULL ? "true" : "false");
    pp__sb_printf(&b, "  fsdp_cpu_ram_efficient_loading: true\n");
    pp__sb_printf(&b, "parallelism_config:\n  parallelism_config_dp_replicate_size: %d\n"
                      "  parallelism_config_dp_shard_size: %d\n  parallelism_config_tp_size: %d\n"
                      "  parallelism_config_cp_size: %d\n", nd / shard, shard / s->cp, s->tp, s->cp);
    if (s->cp > 1) /* Accelerate 1.14 ParallelismConfig: allgather (default) or alltoall (the ring's rotation) */
        pp__sb_printf(&b, "  parallelism_config_cp_comm_strategy: %s\n", s->cp_comm == PP_CP_RING ? "alltoall" : "allgather");
    return pp__sb_take(&b);
}

/* torchtitan's job: the llama3 flavor's baseline with this plan's
 * parallelism, batch, precision and checkpointing (config keys of
 * torchtitan/config/job_config.py at v0.2.2). local_batch_size is per DP
 * rank: with pipeline stages a step's micro-batches (the schedule's
 * microbatch count is local / pipeline_parallel_microbatch_size), without
 * them one micro-batch (accumulation = global / (local x dp)). */
static char *torchtitan_toml(const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_hparams *hp)
{
    const pp_strategy *s = &p->strategy;
    int nd = s->dp * s->cp, shard = s->shard > 0 && s->shard < nd ? s->shard : nd;
    static const char *const sched[PP_SCHED_COUNT] = {"1F1B", "Interleaved1F1B", "GPipe"};
    pp__sbuf b = {0};
    char nm[2][PP_NAME_LEN];
    pp__sb_printf(&b, "# torchtitan %s job for %s on %d x %s, written by parplan %s.\n", TORCHTITAN_VERSION,
                  pp__safe(m->name, nm[0], sizeof nm[0]), pp_cluster_gpus(c), pp__safe(c->gpu.name, nm[1], sizeof nm[1]),
                  pp_version());
    pp__sb_printf(&b, "[job]\ndump_folder = \"./outputs\"\n\n[model]\nname = \"llama3\"\nflavor = \"%s\"\n",
                  pp__torchtitan_flavor(m));
    /* torchtitan v0.2.2 docs/float8.md: the converter's registered name */
    if (s->precision == PP_PREC_FP8) pp__sb_printf(&b, "converters = [\"quantize.linear.float8\"]\n");
    /* the output layer stays BF16, as parplan prices it (compute.c
     * pp__head_time; v0.2.2 converts every linear unless filtered) */
    if (s->precision == PP_PREC_FP8) pp__sb_printf(&b, "\n[quantize.linear.float8]\nfilter_fqns = [\"output\"]\n");
    pp__sb_printf(&b, "\n[optimizer]\nname = \"AdamW\"\nlr = %g\nbeta1 = %g\nbeta2 = %g\neps = %g\nweight_decay = %g\n", hp->lr,
                  hp->beta1, hp->beta2, hp->eps, hp->weight_decay);
    pp__sb_printf(&b, "\n[lr_scheduler]\nwarmup_steps = %d\n", hp->warmup_steps);
    /* the decay ends at lr x min_lr_factor (v0.2.2 LRScheduler); its warmup
     * starts near 0 whatever min_lr says */
    if (hp->min_lr > 0) pp__sb_printf(&b, "min_lr_factor = %.9g\n", hp->min_lr / hp->lr);
    pp__sb_printf(&b, "\n[training]\nlocal_batch_size = %d\nglobal_batch_size = %d\nseq_len = %d\nsteps = %d\n"
                      "max_norm = %g\nmixed_precision_param = \"%s\"\nmixed_precision_reduce = \"float32\"\n",
                  s->pp > 1 ? s->micro_batch * s->grad_accum : s->micro_batch, s->global_batch, s->seq, hp->total_steps,
                  hp->gradient_clipping, s->precision == PP_PREC_FP32 ? "float32" : "bfloat16");
    if (s->offload == PP_OFFLOAD_OPT_PARAMS) pp__sb_printf(&b, "enable_cpu_offload = true\n");
    pp__sb_printf(&b, "\n[parallelism]\ndata_parallel_replicate_degree = %d\ndata_parallel_shard_degree = %d\n"
                      "fsdp_reshard_after_forward = \"%s\"\ntensor_parallel_degree = %d\ncontext_parallel_degree = %d\n",
                  nd / shard, shard / s->cp, s->zero == 3 ? "always" : "never", s->tp, s->cp);
    if (s->cp > 1)
        pp__sb_printf(&b, "context_parallel_rotate_method = \"%s\"\n", s->cp_comm == PP_CP_RING ? "alltoall" : "allgather");
    pp__sb_printf(&b, "pipeline_parallel_degree = %d\n", s->pp);
    if (s->pp > 1) {
        pp__sb_printf(&b, "pipeline_parallel_schedule = \"%s\"\npipeline_parallel_microbatch_size = %d\n",
                      sched[s->schedule], s->micro_batch);
        /* model parts in model order: part k * pp + r is chunk k of rank r
         * (torchtitan's loop-style stage placement), its blocks the next
         * pp__chunk_blocks(r, k) of the model */
        pp__sb_printf(&b, "module_fqns_per_model_part = [");
        int v = s->virtual_stages, next = 0;
        for (int k = 0; k < v; k++)
            for (int r = 0; r < s->pp; r++) {
                int n = pp__chunk_blocks(s, r, k);
                pp__sb_printf(&b, "%s[", k || r ? ", " : "");
                int any = 0;
                if (!k && !r) pp__sb_printf(&b, "\"tok_embeddings\""), any = 1;
                for (int l = next; l < next + n; l++) pp__sb_printf(&b, "%s\"layers.%d\"", any++ ? ", " : "", l);
                next += n;
                if (k == v - 1 && r == s->pp - 1) pp__sb_printf(&b, "%s\"norm\", \"output\"", any ? ", " : "");
                pp__sb_printf(&b, "]");
            }
        pp__sb_printf(&b, "]\n");
    }
    /* the fused loss: the compiled loss (components/loss.py
     * build_cross_entropy_loss), which keeps the 16-bit logits only; fp8:
     * the compiled model, whose float8 casts Inductor fuses (docs/float8.md:
     * "required for competitive performance"; compute.c prices them so) */
    int closs = s->loss == PP_LOSS_FUSED, cmodel = s->precision == PP_PREC_FP8;
    if (closs || cmodel)
        pp__sb_printf(&b, "\n[compile]\nenable = true\ncomponents = [%s%s%s]\n", cmodel ? "\"model\"" : "",
                      closs && cmodel ? ", " : "", closs ? "\"loss\"" : "");
    if (s->recompute == PP_RECOMPUTE_SELECTIVE) /* the per-op policy; torchtitan's default is every 2nd block */
        pp__sb_printf(&b, "\n[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"op\"\n");
    else
        pp__sb_printf(&b, "\n[activation_checkpoint]\nmode = \"%s\"\n", s->recompute == PP_RECOMPUTE_FULL ? "full" : "none");
    return pp__sb_take(&b);
}

/* ------------------------------------------------------------ README */

/* DeepSpeed's runner (v0.14.5 launcher/runner.py) as each node starts it:
 * one node takes the local GPUs; on several, every node names its rank
 * and the master and reads the hostfile that lists them all (--no_ssh:
 * without it one runner starts the whole job over ssh, and N of them would
 * start N jobs; without a hostfile it refuses "Num nodes is >1"). The HF
 * Trainer scripts read a lone JSON argument, which the launcher's
 * --local_rank=N would precede (launch.py): --no_local_rank (red team rt9). */
static void ds_runner(pp__sbuf *b, int nodes, int per, int no_local_rank)
{
    if (nodes > 1)
        pp__sb_printf(b, "  deepspeed --hostfile hostfile --no_ssh --node_rank $NODE_RANK --master_addr $MASTER_ADDR "
                         "--master_port 29500 --num_nodes %d --num_gpus %d", nodes, per);
    else pp__sb_printf(b, "  deepspeed --num_gpus %d", per);
    if (no_local_rank) pp__sb_printf(b, " --no_local_rank");
}

static void ds_hostfile_note(pp__sbuf *b, int nodes, int per)
{
    if (nodes > 1)
        pp__sb_printf(b, "\nhostfile: the %d nodes, one line each, \"<host> slots=%d\", the same on every node; "
                         "NODE_RANK 0 to %d, MASTER_ADDR node 0's address.\n", nodes, per, nodes - 1);
}

/* LoRA and QLoRA: TRL's SFT script reads training_args.json as its config
 * (trl_keys); the launchers take it as a module (torchrun -m, deepspeed
 * --module, accelerate launch -m). Returns 0 for a framework without one. */
static int trl_launch(pp__sbuf *b, const pp_cluster *c, const pp_plan *p)
{
    const pp_strategy *s = &p->strategy;
    int nodes = c->nodes, per = c->gpus_per_node, world = pp_cluster_gpus(c);
    const char *rdzv = nodes > 1 ? " --rdzv_backend c10d --rdzv_endpoint $MASTER_ADDR:29500" : "";
    const char *args = "--config training_args.json --model_name_or_path <HF model> --dataset_name <dataset>";
    switch (s->framework) {
    case PP_FW_PYTORCH:
        if (world == 1) pp__sb_printf(b, "  trl sft %s\n", args);
        else pp__sb_printf(b, "  torchrun --nnodes %d --nproc_per_node %d%s -m trl.scripts.sft %s\n", nodes, per, rdzv, args);
        break;
    case PP_FW_DEEPSPEED:
        ds_runner(b, nodes, per, 0);
        pp__sb_printf(b, " --module trl.scripts.sft %s\n", args);
        ds_hostfile_note(b, nodes, per);
        pp__sb_printf(b, "\n(DeepSpeed v0.14.5: training_args.json points the Trainer at ds_config.json)\n");
        break;
    case PP_FW_FSDP:
        pp__sb_printf(b, "  accelerate launch --config_file accelerate_fsdp.yaml --num_machines %d --num_processes %d "
                         "--machine_rank $NODE_RANK -m trl.scripts.sft %s\n\n(HF Accelerate %s, FSDP2)\n",
                      nodes, world, args, ACCELERATE_VERSION);
        break;
    default: return 0;
    }
    pp__sb_printf(b, "\nTRL's SFT script (pip install trl peft%s; TRL >= 0.27 for its dtype key) reads training_args.json\n"
                     "as its --config (JSON is YAML): the adapter (use_peft, lora_*), %sthe base model's dtype (TRL\n"
                     "loads float32 unless told) and max_length (TRL cuts sequences to 1024 unless told), as priced.\n"
                     "adapter_config.json%s: the same for a script of your own.\n",
                  s->ft.mode == PP_MODE_QLORA ? " bitsandbytes" : "", s->ft.mode == PP_MODE_QLORA ? "the 4-bit base (load_in_4bit), " : "",
                  s->ft.mode == PP_MODE_QLORA ? " and bnb_config.json" : "");
    return 1;
}

static void readme_launch(pp__sbuf *b, const pp_cluster *c, const pp_plan *p, const pp_launch *l)
{
    const pp_strategy *s = &p->strategy;
    int nodes = c->nodes, per = c->gpus_per_node, world = pp_cluster_gpus(c);
    const char *rdzv = nodes > 1 ? " --rdzv_backend c10d --rdzv_endpoint $MASTER_ADDR:29500" : "";
    int hf = 0, tt = 0;
    for (int i = 0; i < l->n; i++) {
        hf |= !strcmp(l->files[i].name, "training_args.json");
        tt |= !strcmp(l->files[i].name, "torchtitan.toml");
    }
    pp__sb_printf(b, "Launch (on each of the %d node%s; your training script and data are yours):\n\n", nodes,
                  nodes > 1 ? "s" : "");
    if (hf && s->ft.mode != PP_MODE_FULL && trl_launch(b, c, p)) return;
    switch (s->framework) {
    case PP_FW_PYTORCH:
        if (world == 1) pp__sb_printf(b, "  python train.py training_args.json\n");
        else pp__sb_printf(b, "  torchrun --nnodes %d --nproc_per_node %d%s train.py training_args.json\n", nodes, per, rdzv);
        pp__sb_printf(b, "\ntrain.py: a Hugging Face Trainer script that reads its TrainingArguments from the JSON\n"
                         "(HfArgumentParser.parse_json_file), e.g. transformers' examples/pytorch/language-modeling/run_clm.py\n"
                         "with your model_name_or_path and dataset added to the JSON (block_size is run_clm's sequence\n"
                         "length; drop it for a script without it).\n");
        break;
    case PP_FW_DEEPSPEED:
        ds_runner(b, nodes, per, hf);
        pp__sb_printf(b, hf ? " train.py training_args.json\n" : " your_script.py --deepspeed ds_config.json\n");
        ds_hostfile_note(b, nodes, per);
        pp__sb_printf(b, "\n(DeepSpeed v0.14.5; %s)\n", hf ? "training_args.json points the HF Trainer at ds_config.json"
                                                           : "your script builds what the HF Trainer cannot:");
        /* partition_method "type:X" is a regex on the layers' class names
         * (pipe/module.py _find_layer_type): HF's blocks are LlamaDecoderLayer
         * and the like, which "transformer" does not match */
        int blocks = 0;
        for (int i = 0; i < s->pp && i < PP_MAX_STAGES; i++) blocks += s->stage_layers[i];
        if (s->pp > 1)
            pp__sb_printf(b, "  - deepspeed.pipe.PipelineModule(layers, num_stages=%d, partition_method=\"type:<block class, "
                             "e.g. DecoderLayer for LlamaDecoderLayer>\"%s), layers = [embedding, %d blocks, final norm, "
                             "head]: the split priced is DeepSpeed v0.14.5's of that list\n",
                          s->pp, s->recompute == PP_RECOMPUTE_FULL ? ", activation_checkpoint_interval=1" : "", blocks);
        if (s->cp > 1)
            pp__sb_printf(b, "  - deepspeed.sequence.layer.DistributedAttention around the attention core, over groups of %d "
                             "consecutive ranks (Ulysses), and deepspeed.initialize(..., mpu=M): DeepSpeed v0.14.5 takes "
                             "the data-parallel size (%d, for its batch rule) and the sequence-parallel groups only from "
                             "an mpu (runtime/config.py, engine.py), so M gives get_data_parallel_world_size/rank/group "
                             "(dp %d), get_sequence_parallel_world_size/rank/group (%d), "
                             "get_sequence_data_parallel_world_size/rank/group (%d) and the model-parallel getters "
                             "(1); without it DeepSpeed stops on its batch check\n",
                          s->cp, s->dp, s->dp, s->cp, s->dp * s->cp);
        if (s->ep > 1)
            pp__sb_printf(b, "  - deepspeed.moe.layer.MoE(num_experts=..., ep_size=%d, k=...) for the expert layers "
                             "(DeepSpeed-MoE)\n", s->ep);
        if (!hf && s->recompute == PP_RECOMPUTE_FULL && s->pp == 1)
            pp__sb_printf(b, "  - activation checkpointing of every block (e.g. model.gradient_checkpointing_enable())\n");
        break;
    case PP_FW_MEGATRON:
        pp__sb_printf(b, "  source megatron_args.sh\n  torchrun --nnodes %d --nproc_per_node %d%s pretrain_gpt.py "
                         "\"${MEGATRON_ARGS[@]}\" \\\n    --data-path ... --tokenizer-type ... --save ... --load ...\n",
                      nodes, per, rdzv);
        break;
    case PP_FW_MEGATRON_DEEPSPEED:
        pp__sb_printf(b, "  source megatron_deepspeed_args.sh\n");
        ds_runner(b, nodes, per, 0);
        pp__sb_printf(b, " pretrain_gpt.py \"${MEGATRON_ARGS[@]}\" \\\n    --data-path ... --tokenizer-type ... --save ... "
                         "--load ...\n");
        ds_hostfile_note(b, nodes, per);
        break;
    case PP_FW_FSDP:
        if (tt)
            pp__sb_printf(b, "  torchrun --nnodes %d --nproc_per_node %d%s -m torchtitan.train --job.config_file "
                             "torchtitan.toml\n\n(torchtitan %s: later releases changed the config system)\n",
                          nodes, per, rdzv, TORCHTITAN_VERSION);
        else
            pp__sb_printf(b, "  accelerate launch --config_file accelerate_fsdp.yaml --num_machines %d --num_processes %d "
                             "--machine_rank $NODE_RANK train.py training_args.json\n\n(HF Accelerate %s, FSDP2)\n",
                          nodes, world, ACCELERATE_VERSION);
        break;
    default: break;
    }
}

/* ------------------------------------------------------------ README: Check */

static int is_preset(pp_preset_kind kind, const char *name)
{
    for (int i = 0, n = pp_preset_count(kind); i < n; i++)
        if (!strcmp(pp_preset_name(kind, i), name)) return 1;
    return 0;
}

/* A word for the shell: as it is when plain, else in single quotes. */
static void sh_word(pp__sbuf *b, const char *word)
{
    char w[2 * PP_TEXT_LEN]; /* control characters as '?': README is read on a terminal */
    pp__safe(word, w, sizeof w);
    int plain = *w != '\0';
    for (const char *p = w; *p && plain; p++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:+=", *p) != NULL;
    if (plain) {
        pp__sb_printf(b, " %s", w);
        return;
    }
    pp__sb_printf(b, " '");
    for (const char *p = w; *p; p++) pp__sb_printf(b, *p == '\'' ? "'\\''" : "%c", *p);
    pp__sb_printf(b, "'");
}

static int has_file(const pp_launch *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->files[i].name, name)) return 1;
    return 0;
}

/* The stage split for --stage-layers: DeepSpeed's partition_method names
 * when they give it, else the counts. */
static void split_arg(pp__sbuf *b, const pp_model *m, const pp_strategy *s)
{
    int want[PP_MAX_STAGES];
    for (int e = 0; e <= 1; e++)
        if (pp_split_deepspeed(m, s, e, want, NULL) == PP_OK &&
            !memcmp(want, s->stage_layers, (size_t)s->pp * sizeof *want)) {
            pp__sb_printf(b, " --stage-layers %s", e ? "deepspeed+embedding" : "deepspeed");
            return;
        }
    pp__sb_printf(b, " --stage-layers ");
    for (int i = 0; i < s->pp; i++) pp__sb_printf(b, "%s%d", i ? "," : "", s->stage_layers[i]);
}

/* What no file carries for a DeepSpeed plan without the HF Trainer (its
 * PipelineModule, Ulysses and checkpointing live in the training script). */
static void deepspeed_flags(pp__sbuf *b, const pp_model *m, const pp_strategy *s)
{
    if (s->pp > 1) {
        pp__sb_printf(b, " --pp %d", s->pp);
        split_arg(b, m, s);
    }
    if (s->cp > 1) pp__sb_printf(b, " --cp %d", s->cp);
    if (s->recompute != PP_RECOMPUTE_NONE) pp__sb_printf(b, " --recompute %s", pp_recompute_name(s->recompute));
    if (s->recompute == PP_RECOMPUTE_FULL && s->recompute_layers >= 0 && !s->per_stage_recompute)
        pp__sb_printf(b, " --recompute-layers %d", s->recompute_layers);
    if (s->attention != PP_ATTN_FLASH) pp__sb_printf(b, " --attention %s", pp_attention_name(s->attention));
    if (s->loss != PP_LOSS_FP32) pp__sb_printf(b, " --loss %s", pp_loss_name(s->loss));
}

static void finetune_flags(pp__sbuf *b, const pp_strategy *s)
{
    const pp_finetune *f = &s->ft;
    static const char *const tnames[] = {"q", "k", "v", "o", "gate", "up", "down", "lm_head"};
    if (f->mode != PP_MODE_FULL) {
        pp__sb_printf(b, " --mode %s --lora-rank %d", f->mode == PP_MODE_QLORA ? "qlora" : "lora", f->lora_rank);
        if (f->lora_dropout > 0) pp__sb_printf(b, " --lora-dropout %g", f->lora_dropout);
        if (f->lora_targets != (PP_LORA_Q | PP_LORA_V)) {
            if (f->lora_targets == PP_LORA_ALL_LINEAR) pp__sb_printf(b, " --lora-targets all-linear");
            else {
                pp__sb_printf(b, " --lora-targets ");
                for (int i = 0, n = 0; i < 8; i++)
                    if (f->lora_targets >> i & 1) pp__sb_printf(b, "%s%s", n++ ? "," : "", tnames[i]);
            }
        }
    }
    if (f->freeze_embeddings || f->freeze_layers) {
        pp__sb_printf(b, " --freeze %s", f->freeze_embeddings ? "embeddings" : "");
        if (f->freeze_layers) pp__sb_printf(b, "%slayers:%d", f->freeze_embeddings ? "," : "", f->freeze_layers);
    }
}

/* The command that reads this folder's files back into the plan's
 * strategy (run in the folder): the model, the cluster, the readers for
 * the files, and flags only for what no file carries. */
static void readme_check(pp__sbuf *b, const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_launch *l)
{
    const pp_strategy *s = &p->strategy;
    pp__sb_printf(b, "\nCheck (in this folder: parplan reads these files back and prints the same peak and step):\n\n"
                     "  parplan estimate --model");
    sh_word(b, is_preset(PP_PRESET_MODEL, m->name) || !m->source[0] ? m->name : m->source);
    pp__sb_printf(b, " --cluster");
    sh_word(b, is_preset(PP_PRESET_CLUSTER, c->name) || !c->source[0] ? c->name : c->source);
    if (c->nodes > 1) pp__sb_printf(b, " --nodes %d", c->nodes);
    else pp__sb_printf(b, " --gpus %d", c->gpus_per_node);
    int seq_in_file = 0;
    if (has_file(l, "megatron_args.sh")) pp__sb_printf(b, " --megatron-args megatron_args.sh"), seq_in_file = 1;
    else if (has_file(l, "megatron_deepspeed_args.sh")) pp__sb_printf(b, " --megatron-args megatron_deepspeed_args.sh"), seq_in_file = 1;
    else if (has_file(l, "torchtitan.toml")) pp__sb_printf(b, " --fsdp-config torchtitan.toml"), seq_in_file = 1;
    else if (has_file(l, "accelerate_fsdp.yaml")) pp__sb_printf(b, " --fsdp-config accelerate_fsdp.yaml --training-args training_args.json");
    else if (has_file(l, "training_args.json")) pp__sb_printf(b, " --training-args training_args.json");
    else if (has_file(l, "ds_config.json")) {
        pp__sb_printf(b, " --deepspeed ds_config.json");
        deepspeed_flags(b, m, s);
    }
    if (s->framework == PP_FW_DEEPSPEED && s->ep > 1) pp__sb_printf(b, " --ep %d", s->ep);
    if (!seq_in_file && s->seq != m->seq) pp__sb_printf(b, " --seq %d", s->seq);
    finetune_flags(b, s);
    pp_buffers def;
    pp_buffers_default(&def);
    if (s->buf.cuda_context != def.cuda_context) pp__sb_printf(b, " --cuda-context-gib %g", s->buf.cuda_context / 1073741824.0);
    if (s->buf.fragmentation != def.fragmentation) pp__sb_printf(b, " --fragmentation %g", s->buf.fragmentation);
    pp__sb_printf(b, "\n");
}

static char *readme(const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_launch *l, const pp_notes *notes)
{
    const pp_strategy *s = &p->strategy;
    pp__sbuf b = {0};
    char nm[3][PP_NAME_LEN];
    pp__sb_printf(&b, "%s on %d x %s (%s), run by %s, written by parplan %s.\n\n", pp__safe(m->name, nm[0], sizeof nm[0]),
                  pp_cluster_gpus(c), pp__safe(c->gpu.name, nm[1], sizeof nm[1]), pp__safe(c->name, nm[2], sizeof nm[2]),
                  pp_framework_name(s->framework), pp_version());
    pp__sb_printf(&b, "Predicted: peak %.2f GiB per GPU on stage %d (%s), step %.3f s, %.0f tokens/s, MFU %.1f%%.\n",
                  p->memory.peak_bytes / 1073741824.0, p->memory.peak_stage, p->uncertainty.fit == PP_FIT_NO ? "DOES NOT FIT" : pp_fit_name(p->uncertainty.fit),
                  p->time.step_s, p->throughput.tokens_per_s, 100 * p->throughput.mfu);
    char etp[32] = "";
    if (s->etp > 0 && s->etp != s->tp) snprintf(etp, sizeof etp, " (experts tp %d)", s->etp);
    pp__sb_printf(&b, "Strategy: dp %d, tp %d%s, pp %d, cp %d, ep %d%s, ZeRO-%d, %s, recompute %s, micro-batch %d x %d, "
                      "%s", s->dp, s->tp, s->sp ? " +sp" : "", s->pp, s->cp, s->ep, etp, s->zero,
                  pp_precision_name(s->precision), pp_recompute_name(s->recompute), s->micro_batch, s->grad_accum,
                  pp_schedule_name(s->schedule));
    if (s->act_offload_layers > 0) pp__sb_printf(&b, ", activations of %d blocks offloaded", s->act_offload_layers);
    pp__sb_printf(&b, ".\n\n");
    readme_launch(&b, c, p, l);
    readme_check(&b, m, c, p, l);
    pp__sb_printf(&b, "\nFiles:\n");
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->files[i].name, "plan.json")) pp__sb_printf(&b, "  %s\n", l->files[i].name);
    pp__sb_printf(&b, "  plan.json (the plan these files launch, as parplan's JSON)\n");
    if (notes && notes->n) {
        pp__sb_printf(&b, "\nNotes:\n");
        for (int i = 0; i < notes->n; i++) pp__sb_printf(&b, "  - %s\n", notes->line[i]);
    }
    return pp__sb_take(&b);
}

/* ------------------------------------------------------------ per framework */

static pp_status megatron_file(const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_launch_opts *o,
                               pp_megatron_flavor f, pp_launch *out, pp_error *err)
{
    pp_megatron_opts mo;
    pp_megatron_opts_default(&mo);
    mo.flavor = f;
    mo.hp = o->hp;
    char *text = NULL;
    pp_status st = pp_megatron_args(m, c, p, &mo, &text, &out->notes, err);
    if (st != PP_OK) return st;
    return add_file(out, f == PP_MEGATRON_LM ? "megatron_args.sh" : "megatron_deepspeed_args.sh", text, err);
}

static pp_status deepspeed_files(const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_launch_opts *o,
                                 pp_launch *out, pp_error *err)
{
    const pp_strategy *s = &p->strategy;
    int mds = s->framework == PP_FW_MEGATRON_DEEPSPEED;
    pp_deepspeed_opts d;
    pp_deepspeed_opts_default(&d);
    d.hp = o->hp;
    snprintf(d.nvme_path, sizeof d.nvme_path, "%s", o->nvme_path);
    d.client_optimizer = d.client_scheduler = mds; /* Megatron-DeepSpeed passes its own */
    char *text = NULL;
    pp_status st = pp_deepspeed_to_string(m, c, p, &d, &text, &out->notes, err);
    if (st == PP_OK) st = add_file(out, "ds_config.json", text, err);
    if (st != PP_OK) return st;
    if (mds) return megatron_file(m, c, p, o, PP_MEGATRON_DEEPSPEED, out, err);
    /* the HF Trainer runs DeepSpeed without a pipeline or Ulysses */
    if (s->pp == 1 && s->cp == 1 && s->ep == 1) st = add_file(out, "training_args.json", training_args(m, p, &o->hp, "ds_config.json"), err);
    return st;
}

static pp_status fsdp_files(const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_launch_opts *o,
                            pp_launch *out, pp_error *err)
{
    const pp_strategy *s = &p->strategy;
    if (!pp__fsdp_accelerate(s)) /* rule fw-launcher: torchtitan launches it (needed, or chosen) */
        return add_file(out, "torchtitan.toml", torchtitan_toml(m, c, p, &o->hp), err);
    pp_status st = add_file(out, "accelerate_fsdp.yaml", accelerate_yaml(m, c, p, &out->notes), err);
    if (st == PP_OK) st = add_file(out, "training_args.json", training_args(m, p, &o->hp, NULL), err);
    return st;
}

static pp_status finetune_files(const pp_model *m, const pp_plan *p, pp_launch *out, pp_error *err)
{
    if (p->strategy.ft.mode == PP_MODE_FULL) return PP_OK;
    char *t = NULL;
    pp_status st = pp_peft_config_to_string(m, p, &t, err);
    if (st == PP_OK) st = add_file(out, "adapter_config.json", t, err);
    if (st == PP_OK && p->strategy.ft.mode == PP_MODE_QLORA) {
        st = add_file(out, "bnb_config.json", bnb_config(&p->strategy), err);
        /* peft's prepare_model_for_kbit_training casts every 16-bit
         * parameter left (the embedding, the head, the norms) to fp32 (peft
         * utils/other.py): an fp32 norm weight makes weight * x fp32, and
         * bitsandbytes' Linear4bit returns its input's dtype, so the
         * residual stream and the saved activations become fp32 (red-team
         * reviews, sessions 27 and 28; TRL's SFTTrainer called it for 4-bit
         * models from Sept 2023 to Dec 2025 and still keeps norms fp32) */
        pp_param_counts pc;
        pp_model_param_counts(m, &pc);
        pp__note(&out->notes, "QLoRA: priced with the embedding, output layer and norms in 16 bits and 16-bit activations "
                              "(qlora.py), as training_args.json's dtype makes TRL load them; TRL before 0.27 (and "
                              "scripts that call peft's prepare_model_for_kbit_training, or load without a 16-bit "
                              "dtype) keep them in fp32: the embedding and head take up to %.2f GB more per GPU, and "
                              "fp32 norms make the residual stream and the saved activations fp32, about twice the "
                              "activation memory priced", (pc.embedding + pc.lm_head) * 2 / 1e9);
    }
    return st;
}

pp_status pp_launch_files(const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_launch_opts *o,
                          pp_launch *out, pp_error *err)
{
    PP__C_NUMERIC;
    pp_launch_opts def;
    if (!o) pp_launch_opts_default(&def), o = &def;
    memset(out, 0, sizeof *out);
    /* every rule, with those about what has a launcher (estimate skips them) */
    pp_status st = pp_rules_check(m, c, &p->strategy, err);
    if (st == PP_OK) st = pp_hparams_check(&o->hp, "hyper-parameters", err);
    switch (st == PP_OK ? p->strategy.framework : PP_FW_COUNT) {
    case PP_FW_PYTORCH: st = add_file(out, "training_args.json", training_args(m, p, &o->hp, NULL), err); break;
    case PP_FW_DEEPSPEED:
    case PP_FW_MEGATRON_DEEPSPEED: st = deepspeed_files(m, c, p, o, out, err); break;
    case PP_FW_MEGATRON: st = megatron_file(m, c, p, o, PP_MEGATRON_LM, out, err); break;
    case PP_FW_FSDP: st = fsdp_files(m, c, p, o, out, err); break;
    default:
        if (st == PP_OK)
            st = pp__fail_field(err, 0, "framework", pp_framework_name(p->strategy.framework),
                                "a plan names the framework that runs it (resolve it first)");
    }
    if (st == PP_OK) st = finetune_files(m, p, out, err);
    if (st == PP_OK) st = add_file(out, "plan.json", pp_plan_to_json(m, c, p), err);
    if (st == PP_OK) st = add_file(out, "README.txt", readme(m, c, p, out, &out->notes), err);
    if (st != PP_OK) pp_launch_free(out);
    return st;
}

/* ------------------------------------------------------------ a folder of plans */

/* Every name a plan's folder can hold (pp_launch_files). */
static const char *const launch_names[] = {
    "README.txt", "training_args.json", "ds_config.json", "megatron_args.sh", "megatron_deepspeed_args.sh",
    "accelerate_fsdp.yaml", "torchtitan.toml", "adapter_config.json", "bnb_config.json", "plan.json",
};

/* Each emitted folder lists what it wrote: only files an emit listed are
 * ever removed by a later one, never a user's. */
#define EMIT_MANIFEST ".parplan-emit"

static int has_name(const pp_launch *l, const char *name)
{
    for (int k = 0; l && k < l->n; k++)
        if (!strcmp(l->files[k].name, name)) return 1;
    return 0;
}

static int known_name(const char *name)
{
    for (size_t k = 0; k < sizeof launch_names / sizeof *launch_names; k++)
        if (!strcmp(launch_names[k], name)) return 1;
    return 0;
}

static int is_regular(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *manifest_text(const pp_launch *l)
{
    pp__sbuf b = {0};
    pp__sb_printf(&b, "# parplan --emit: the files it wrote here, which a later --emit --force may remove\n");
    for (int k = 0; k < l->n; k++) pp__sb_printf(&b, "%s\n", l->files[k].name);
    return pp__sb_take(&b);
}

typedef struct stale_list {
    char (*path)[PP_TEXT_LEN * 2 + 32];
    int n, cap;
    int dirs[PP_TOP_MAX + 2]; /* numbered folders past the new set, to remove when emptied */
    int ndirs;
} stale_list;

static int stale_add(stale_list *sl, const char *path)
{
    if (sl->n == sl->cap) {
        int cap = sl->cap ? 2 * sl->cap : 16;
        void *p = realloc(sl->path, (size_t)cap * sizeof *sl->path);
        if (!p) return -1;
        sl->path = p, sl->cap = cap;
    }
    snprintf(sl->path[sl->n++], sizeof *sl->path, "%s", path);
    return 0;
}

/* The launch files an earlier emit listed in folder (a real directory, not
 * a link) that mine, the set written there now (NULL: none), does not
 * hold; with no new set the manifest goes too. -1 out of memory. */
static int stale_in(const char *folder, const pp_launch *mine, stale_list *sl)
{
    struct stat st;
    char path[PP_TEXT_LEN * 2 + 32], line[128];
    if (lstat(folder, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    snprintf(path, sizeof path, "%s/%s", folder, EMIT_MANIFEST);
    if (!is_regular(path)) return 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!known_name(line) || has_name(mine, line)) continue;
        snprintf(path, sizeof path, "%s/%s", folder, line);
        if (is_regular(path)) rc = stale_add(sl, path);
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/%s", folder, EMIT_MANIFEST);
    if (!rc && !mine) rc = stale_add(sl, path);
    return rc;
}

/* What an earlier emit left in dir that this set does not write: in a plan
 * folder beside the new files, or in plan folders past the new count (any
 * of 1 .. PP_TOP_MAX + 1, gaps included). */
static int stale_files(const char *dir, int numbered, int n, const pp_launch *l, stale_list *sl)
{
    if (!numbered) return stale_in(dir, &l[0], sl);
    char folder[PP_TEXT_LEN * 2 + 32];
    for (int k = 1; k <= PP_TOP_MAX + 1; k++) {
        snprintf(folder, sizeof folder, "%s/%d", dir, k);
        int before = sl->n;
        if (stale_in(folder, k <= n ? &l[k - 1] : NULL, sl) != 0) return -1;
        if (k > n && sl->n > before) sl->dirs[sl->ndirs++] = k;
    }
    return 0;
}

pp_status pp_plan_emit(const pp_model *m, const pp_cluster *c, const pp_plan *plans, int n, const pp_launch_opts *o,
                       const char *dir, unsigned flags, pp_notes *notes, pp_error *err)
{
    PP__C_NUMERIC;
    if (!dir || !*dir) return pp__fail(err, PP_ERR_INPUT, "emit: expected a folder name");
    if (n < 1) return pp__fail(err, PP_ERR_INPUT, "emit: no plan to write");
    pp_launch *l = calloc((size_t)n, sizeof *l);
    pp_out_file *files = calloc((size_t)n * (PP_LAUNCH_MAX + 1), sizeof *files);
    char (*paths)[PP_TEXT_LEN * 2] = calloc((size_t)n * (PP_LAUNCH_MAX + 1), sizeof *paths);
    char **manifests = calloc((size_t)n, sizeof *manifests);
    int nf = 0, numbered = n > 1 || (flags & PP_EMIT_NUMBERED);
    pp_status st = l && files && paths && manifests ? PP_OK : pp__fail(err, PP_ERR_NOMEM, "out of memory");
    /* every plan's files first: nothing is written if one cannot be emitted */
    for (int i = 0; st == PP_OK && i < n; i++) {
        st = pp_launch_files(m, c, &plans[i], o, &l[i], err);
        if (st != PP_OK && err) {
            char msg[PP_ERR_LEN];
            snprintf(msg, sizeof msg, "%s", err->msg);
            snprintf(err->msg, sizeof err->msg, "plan %d: %.490s", i + 1, msg);
            err->detail = 0, err->field[0] = '\0';
        }
        for (int k = 0; st == PP_OK && k < l[i].n; k++) {
            if (numbered) snprintf(paths[nf], sizeof paths[nf], "%s/%d/%s", dir, i + 1, l[i].files[k].name);
            else snprintf(paths[nf], sizeof paths[nf], "%s/%s", dir, l[i].files[k].name);
            files[nf] = (pp_out_file){paths[nf], l[i].files[k].text, strlen(l[i].files[k].text)};
            nf++;
        }
        if (st == PP_OK && !(manifests[i] = manifest_text(&l[i]))) st = pp__fail(err, PP_ERR_NOMEM, "out of memory");
        if (st == PP_OK) {
            if (numbered) snprintf(paths[nf], sizeof paths[nf], "%s/%d/%s", dir, i + 1, EMIT_MANIFEST);
            else snprintf(paths[nf], sizeof paths[nf], "%s/%s", dir, EMIT_MANIFEST);
            files[nf] = (pp_out_file){paths[nf], manifests[i], strlen(manifests[i])};
            nf++;
        }
        for (int k = 0; notes && k < l[i].notes.n; k++) pp__note(notes, "plan %d: %s", i + 1, l[i].notes.line[k]);
    }
    /* an earlier emit's launch files that this set would not replace (as
     * its manifest lists them): a folder mixing two plans' files, or old
     * plans numbered past the new ones, would be launched as current ones.
     * Refused without force, removed with it once the new set is written. */
    stale_list sl = {0};
    int force = (flags & PP_WRITE_FORCE) != 0;
    if (st == PP_OK && stale_files(dir, numbered, n, l, &sl) != 0) st = pp__fail(err, PP_ERR_NOMEM, "out of memory");
    if (st == PP_OK && !force && sl.n > 0)
        st = pp__fail(err, PP_ERR_IO, "%s: left by an earlier emit, and not part of these plans' files; not mixed with "
                      "them (use --force to replace the folder's plans, or another folder)", sl.path[0]);
    /* the files as one set: folders made as needed, and removed again on failure */
    if (st == PP_OK) st = pp_write_files(files, nf, (flags & PP_WRITE_FORCE) | PP_WRITE_MKDIRS, err);
    if (st == PP_OK && force) {
        char folder[PP_TEXT_LEN * 2 + 32];
        for (int k = 0; k < sl.n; k++) unlink(sl.path[k]);
        for (int k = 0; k < sl.ndirs; k++) {
            snprintf(folder, sizeof folder, "%s/%d", dir, sl.dirs[k]);
            rmdir(folder); /* kept if it holds files parplan did not write */
        }
    }
    free(sl.path);
    for (int i = 0; manifests && i < n; i++) pp_free(manifests[i]);
    free(manifests);
    for (int i = 0; l && i < n; i++) pp_launch_free(&l[i]);
    free(l);
    free(files);
    free(paths);
    return st;
}
