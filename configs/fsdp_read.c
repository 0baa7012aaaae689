/*
 * fsdp_read.c — FSDP launcher files read back (docs/fsdp.md): HF
 * Accelerate's FSDP2 config YAML (v1.14.0: commands/config/config_args.py
 * ClusterConfig, commands/launch.py's fsdp_* and parallelism_config_*
 * arguments, parallelism_config.py's checks) with the TrainingArguments
 * the Trainer takes the batch from, and torchtitan's job TOML (v0.2.2,
 * torchtitan/config/job_config.py; distributed/pipeline_parallel.py for
 * the default stage split). Both become a strategy of the fsdp framework.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/emit.h"
#include "configs/readers.h"
#include "configs/shell_words.h"
#include "configs/trees.h"

typedef struct fr {
    jr_ctx jr;
    pp_notes *warn;
    const pp_model *m;
    const pp_cluster *c;
} fr;

static void fwarn(fr *r, const char *path, const char *key, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void fwarn(fr *r, const char *path, const char *key, const char *fmt, ...)
{
    char what[PP_NOTE_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char line[PP_NOTE_LEN + 256];
    snprintf(line, sizeof line, "%.120s: %.60s%s%.60s: %s", r->jr.where, path, key ? "." : "", key ? key : "", what);
    jr_sanitize(line);
    pp__note(r->warn, "%s", line);
}

static int in(const char *s, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(s, list[i])) return 1;
    return 0;
}

static int nlist(const char *const *list)
{
    int n = 0;
    while (list[n]) n++;
    return n;
}

/* Unknown keys fail (nearest named); keys in unpriced are warned about. */
static void keys(fr *r, const cJSON *o, const char *path, const char *const *known, const char *const *unpriced,
                 const char *who)
{
    char list[200] = "";
    size_t n = 0;
    for (const cJSON *it = o ? o->child : NULL; it && r->jr.st == PP_OK; it = it->next) {
        if (in(it->string, known)) continue;
        if (unpriced && in(it->string, unpriced)) {
            if (n + strlen(it->string) + 4 < sizeof list) n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", it->string);
            continue;
        }
        const char *near = jr_nearest(it->string, known, nlist(known));
        if (!near && unpriced) near = jr_nearest(it->string, unpriced, nlist(unpriced));
        if (near) jr_fail(&r->jr, path, it->string, "unknown key: %s has no such key (did you mean \"%s\"?)", who, near);
        else jr_fail(&r->jr, path, it->string, "unknown key: %s has no such key", who);
    }
    if (n && r->jr.st == PP_OK) fwarn(r, path, NULL, "not priced (parplan's estimate does not model them): %s", list);
}

/* A boolean as Accelerate takes it: a YAML boolean or "true"/"false". */
static int flag_bool(fr *r, const cJSON *o, const char *path, const char *key, int def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v)) return def;
    if (cJSON_IsBool(v)) return cJSON_IsTrue(v);
    if (cJSON_IsString(v) && (!strcmp(v->valuestring, "true") || !strcmp(v->valuestring, "True"))) return 1;
    if (cJSON_IsString(v) && (!strcmp(v->valuestring, "false") || !strcmp(v->valuestring, "False"))) return 0;
    jr_fail(&r->jr, path, key, "expected true or false");
    return def;
}

/* ------------------------------------------------------------ Accelerate */

static const char *const acc_top[] = {
    "compute_environment", "distributed_type", "mixed_precision", "use_cpu", "debug", "num_processes",
    "machine_rank", "num_machines", "gpu_ids", "main_process_ip", "main_process_port", "rdzv_backend",
    "same_network", "main_training_function", "enable_cpu_affinity", "fp8_config", "deepspeed_config",
    "fsdp_config", "parallelism_config", "megatron_lm_config", "mpirun_config", "downcast_bf16", "tpu_name",
    "tpu_zone", "tpu_use_cluster", "tpu_use_sudo", "command_file", "commands", "tpu_vm", "tpu_env",
    "dynamo_config", "fp16", "dynamo_backend", NULL};
static const char *const acc_fsdp[] = {
    "fsdp_version", "fsdp_reshard_after_forward", "fsdp_auto_wrap_policy", "fsdp_transformer_layer_cls_to_wrap",
    "fsdp_min_num_params", "fsdp_offload_params", "fsdp_state_dict_type", "fsdp_activation_checkpointing",
    "fsdp_cpu_ram_efficient_loading", NULL};
/* FSDP1 keys FSDP2 drops or ignores (fsdp1_vs_fsdp2.md), and the rest */
static const char *const acc_fsdp_unpriced[] = {"fsdp_sharding_strategy", "fsdp_backward_prefetch",
                                                "fsdp_forward_prefetch", "fsdp_sync_module_states",
                                                "fsdp_use_orig_params", "fsdp_activation_cpu_offload", NULL};
static const char *const acc_par[] = {
    "parallelism_config_dp_replicate_size", "parallelism_config_dp_shard_size", "parallelism_config_tp_size",
    "parallelism_config_cp_size", "parallelism_config_cp_backend", "parallelism_config_cp_comm_strategy",
    "parallelism_config_sp_size", "parallelism_config_sp_backend", "parallelism_config_sp_seq_length",
    "parallelism_config_sp_seq_length_is_variable", "parallelism_config_sp_attn_implementation", NULL};

/* fsdp_config keys may drop the fsdp_ prefix (launch.py adds it). */
static const cJSON *fsdp_key(const cJSON *f, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(f, key);
    return v ? v : cJSON_GetObjectItemCaseSensitive(f, key + 5);
}

static void fsdp_block(fr *r, const cJSON *f, pp_strategy *s)
{
    const char *P = "$.fsdp_config";
    /* normalise: every key with its fsdp_ prefix */
    for (const cJSON *it = f->child; it && r->jr.st == PP_OK; it = it->next) {
        char full[96];
        snprintf(full, sizeof full, "fsdp_%.80s", it->string);
        if (strncmp(it->string, "fsdp_", 5) && (in(full, acc_fsdp) || in(full, acc_fsdp_unpriced)) &&
            cJSON_GetObjectItemCaseSensitive(f, full))
            jr_fail(&r->jr, P, it->string, "given twice (with and without the fsdp_ prefix)");
    }
    cJSON *norm = cJSON_CreateObject();
    for (const cJSON *it = f->child; norm && it; it = it->next) {
        char full[96];
        snprintf(full, sizeof full, "%s%.80s", strncmp(it->string, "fsdp_", 5) ? "fsdp_" : "", it->string);
        if (!cJSON_GetObjectItemCaseSensitive(norm, full)) cJSON_AddItemToObject(norm, full, cJSON_CreateNull());
    }
    keys(r, norm, P, acc_fsdp, acc_fsdp_unpriced, "Accelerate 1.14's fsdp_config");
    cJSON_Delete(norm);
    const cJSON *ver = fsdp_key(f, "fsdp_version");
    int v2 = ver && ((cJSON_IsNumber(ver) && ver->valuedouble == 2) || (cJSON_IsString(ver) && !strcmp(ver->valuestring, "2")));
    if (r->jr.st == PP_OK && !v2)
        jr_fail(&r->jr, P, "fsdp_version", "%s: parplan prices FSDP2 (fully_shard); Accelerate's default is FSDP1: "
                "set fsdp_version: 2", ver ? "not 2" : "absent");
    const cJSON *raf = fsdp_key(f, "fsdp_reshard_after_forward");
    if (raf && cJSON_IsString(raf) && strcmp(raf->valuestring, "true") && strcmp(raf->valuestring, "false"))
        jr_fail(&r->jr, P, "fsdp_reshard_after_forward", "\"%s\": FSDP2 takes true or false (FULL_SHARD / SHARD_GRAD_OP "
                "are FSDP1's)", raf->valuestring);
    else s->zero = flag_bool(r, raf ? f : NULL, P, raf && raf->string ? raf->string : "x", 1) ? 3 : 2;
    const cJSON *off = fsdp_key(f, "fsdp_offload_params");
    s->offload = off && flag_bool(r, f, P, off->string, 0) ? PP_OFFLOAD_OPT_PARAMS : PP_OFFLOAD_NONE;
    const cJSON *ac = fsdp_key(f, "fsdp_activation_checkpointing");
    if (ac && flag_bool(r, f, P, ac->string, 0)) s->recompute = PP_RECOMPUTE_FULL, s->recompute_layers = -1;
    const cJSON *wrap = fsdp_key(f, "fsdp_auto_wrap_policy");
    if (wrap && (!cJSON_IsString(wrap) || strcmp(wrap->valuestring, "TRANSFORMER_BASED_WRAP")))
        fwarn(r, P, "fsdp_auto_wrap_policy", "%s: parplan prices one FSDP unit per transformer block "
              "(TRANSFORMER_BASED_WRAP)", cJSON_IsString(wrap) ? wrap->valuestring : "not a name");
}

static int par_int(fr *r, const cJSON *p, const char *key, int *out)
{
    *out = 1;
    return jr_int(&r->jr, p, "$.parallelism_config", key, 0, 1, 1 << 24, out);
}

static void parallelism_block(fr *r, const cJSON *p, int world, pp_strategy *s)
{
    const char *P = "$.parallelism_config";
    int rep = 1, shard = 1, tp = 1, cp = 1, sp = 1;
    if (p) {
        keys(r, p, P, acc_par, NULL, "Accelerate 1.14's parallelism_config");
        par_int(r, p, "parallelism_config_dp_replicate_size", &rep);
        par_int(r, p, "parallelism_config_dp_shard_size", &shard);
        par_int(r, p, "parallelism_config_tp_size", &tp);
        par_int(r, p, "parallelism_config_cp_size", &cp);
        par_int(r, p, "parallelism_config_sp_size", &sp);
    } else {
        shard = world; /* FSDP over every process */
    }
    if (r->jr.st) return;
    if (sp > 1) return (void)jr_fail(&r->jr, P, "parallelism_config_sp_size", "%d: DeepSpeed ALST/Ulysses sequence "
                                     "parallelism under Accelerate is not priced", sp);
    if ((long)rep * shard * tp * cp != world)
        return (void)jr_fail(&r->jr, P, p ? "parallelism_config_dp_replicate_size" : NULL, "dp_replicate x dp_shard x tp "
                             "x cp = %d x %d x %d x %d = %ld, but the run has %d processes: Accelerate raises "
                             "ValueError", rep, shard, tp, cp, (long)rep * shard * tp * cp, world);
    if (tp > 1) /* transformers' tp_plan: no sequence-parallel norms, the head's logits gathered (colwise_rep) */
        return (void)jr_fail(&r->jr, P, "parallelism_config_tp_size", "%d: parplan prices FSDP's tensor parallelism as "
                             "torchtitan runs it (sequence-parallel norms, vocabulary-sharded loss); transformers' TP "
                             "plans under Accelerate are not priced (a torchtitan job TOML is)", tp);
    if ((tp > 1 || cp > 1) && rep > 1 && shard == 1)
        return (void)jr_fail(&r->jr, P, "parallelism_config_dp_shard_size", "1 with dp_replicate %d and tp or cp > 1: "
                             "Accelerate raises ValueError (pure replication with TP/CP is not supported)", rep);
    s->tp = tp, s->cp = cp, s->pp = 1;
    s->sp = tp > 1;
    s->dp = rep * shard;
    s->shard = rep > 1 ? shard * cp : 0;
    char strat[32] = "allgather";
    if (p) jr_str(&r->jr, p, P, "parallelism_config_cp_comm_strategy", 0, strat, sizeof strat);
    if (!strcmp(strat, "allgather")) s->cp_comm = PP_CP_ALLGATHER;
    else if (!strcmp(strat, "alltoall")) s->cp_comm = PP_CP_RING;
    else jr_fail(&r->jr, P, "parallelism_config_cp_comm_strategy", "\"%s\": expected allgather or alltoall", strat);
}

static const pp__key_of acc_rule_keys[] = {
    {"zero", "$.fsdp_config.fsdp_reshard_after_forward"}, {"offload", "$.fsdp_config.fsdp_offload_params"},
    {"recompute", "$.fsdp_config.fsdp_activation_checkpointing"}, {"precision", "$.mixed_precision"},
    {"tp", "$.parallelism_config.parallelism_config_tp_size"}, {"cp", "$.parallelism_config.parallelism_config_cp_size"},
    {"shard", "$.parallelism_config.parallelism_config_dp_shard_size"},
    {"dp", "$.parallelism_config.parallelism_config_dp_replicate_size"},
    {"cp_comm", "$.parallelism_config.parallelism_config_cp_comm_strategy"},
    {"micro_batch", "per_device_train_batch_size (training args)"},
    {"global_batch", "gradient_accumulation_steps (training args)"}, {"optimizer", "optim (training args)"},
    {"mode", "--mode"}, {NULL, NULL}};

static void accelerate(fr *r, const cJSON *root, const pp_training_args *t, pp_strategy *s)
{
    static const char *const unpriced[] = {"dynamo_config", "dynamo_backend", "fp8_config", "megatron_lm_config",
                                           "deepspeed_config", NULL};
    keys(r, root, "$", acc_top, NULL, "Accelerate 1.14's config");
    for (int i = 0; unpriced[i] && r->jr.st == PP_OK; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, unpriced[i]);
        if (v && !cJSON_IsNull(v) && !(cJSON_IsObject(v) && !v->child))
            fwarn(r, "$", unpriced[i], "not priced (parplan's estimate does not model it)");
    }
    char dt[32] = "", mp[16] = "no";
    jr_str(&r->jr, root, "$", "distributed_type", 1, dt, sizeof dt);
    if (r->jr.st == PP_OK && strcmp(dt, "FSDP"))
        return (void)jr_fail(&r->jr, "$", "distributed_type", "\"%s\": expected FSDP (a DeepSpeed config is read with "
                             "--deepspeed, plain DDP with --training-args)", dt);
    const cJSON *mpv = cJSON_GetObjectItemCaseSensitive(root, "mixed_precision");
    if (mpv && cJSON_IsFalse(mpv)) snprintf(mp, sizeof mp, "no"); /* an unquoted no is YAML's false */
    else jr_str(&r->jr, root, "$", "mixed_precision", 0, mp, sizeof mp);
    static const char *const mps[] = {"no", "fp16", "bf16", "fp8", NULL};
    if (r->jr.st == PP_OK && !in(mp, mps))
        return (void)jr_fail(&r->jr, "$", "mixed_precision", "\"%s\": expected 'no', fp16, bf16 or fp8", mp);
    if (!strcmp(mp, "fp8"))
        return (void)jr_fail(&r->jr, "$", "mixed_precision", "fp8: parplan prices fp8 FSDP as torchtitan runs it "
                             "(torchtitan.toml with converters = [\"quantize.linear.float8\"])");
    s->precision = !strcmp(mp, "bf16") ? PP_PREC_BF16 : !strcmp(mp, "fp16") ? PP_PREC_FP16 : PP_PREC_FP32;
    int use_cpu = 0, machines = 1, procs = -1;
    jr_bool(&r->jr, root, "$", "use_cpu", 0, &use_cpu);
    if (use_cpu) return (void)jr_fail(&r->jr, "$", "use_cpu", "true: training on the CPU is not priced");
    jr_int(&r->jr, root, "$", "num_machines", 0, 1, 1 << 20, &machines);
    if (!jr_int(&r->jr, root, "$", "num_processes", 0, 1, 1 << 24, &procs) && r->jr.st == PP_OK)
        return (void)jr_fail(&r->jr, "$", "num_processes", "absent: accelerate launch raises \"You need to manually "
                             "pass in --num_processes\"; expected the %d GPUs", pp_cluster_gpus(r->c));
    if (r->jr.st) return;
    if (procs != pp_cluster_gpus(r->c) || machines != r->c->nodes)
        return (void)jr_fail(&r->jr, "$", procs != pp_cluster_gpus(r->c) ? "num_processes" : "num_machines", "%d "
                             "processes on %d machines, but the cluster is %d GPUs on %d nodes (--nodes/--gpus)", procs,
                             machines, pp_cluster_gpus(r->c), r->c->nodes);
    const cJSON *f = jr_obj(&r->jr, root, "$", "fsdp_config", 1);
    if (f) fsdp_block(r, f, s);
    if (r->jr.st == PP_OK) parallelism_block(r, jr_obj(&r->jr, root, "$", "parallelism_config", 0), procs, s);
    if (r->jr.st || !t) return;
    if (t->checkpointing && s->recompute == PP_RECOMPUTE_FULL)
        return (void)jr_fail(&r->jr, "$.fsdp_config", "fsdp_activation_checkpointing", "true with gradient_checkpointing "
                             "true in %s: the HF Trainer raises \"The activation_checkpointing in FSDP config and the "
                             "gradient_checkpointing in training arg can't be set to True simultaneously\"", t->where);
    if (t->precision >= 0 && s->precision != PP_PREC_FP32 && t->precision != (int)s->precision)
        return (void)jr_fail(&r->jr, "$", "mixed_precision", "%s, but %s sets %s", mp, t->where,
                             pp_precision_name((pp_precision)t->precision));
    pp__training_args_apply(t, s);
}

/* ------------------------------------------------------------ torchtitan */

typedef struct tt_table {
    const char *name;
    const char *const *keys;
    const char *const *priced; /* read by parplan (the others change nothing priced, or are warned) */
} tt_table;

static const char *const tt_job[] = {"config_file", "dump_folder", "description", "print_config", "save_config_file",
                                     "custom_config_module", NULL};
static const char *const tt_profiling[] = {"enable_profiling", "save_traces_folder", "profile_freq", "profiler_active",
                                           "profiler_warmup", "enable_memory_snapshot", "save_memory_snapshot_folder", NULL};
static const char *const tt_metrics[] = {"log_freq", "enable_tensorboard", "disable_color_printing", "save_tb_folder",
                                         "save_for_all_ranks", "enable_wandb", NULL};
static const char *const tt_model[] = {"name", "flavor", "hf_assets_path", "tokenizer_path", "converters",
                                       "print_after_conversion", NULL};
static const char *const tt_optimizer[] = {"name", "lr", "beta1", "beta2", "eps", "weight_decay", "implementation",
                                           "early_step_in_backward", NULL};
static const char *const tt_lr[] = {"warmup_steps", "total_steps", "decay_ratio", "decay_type", "min_lr_factor", NULL};
static const char *const tt_training[] = {"dataset", "dataset_path", "local_batch_size", "global_batch_size", "seq_len",
                                          "max_norm", "steps", "enable_cpu_offload", "dtype", "mixed_precision_param",
                                          "mixed_precision_reduce", "gc_freq", "gc_debug", "dataloader", NULL};
static const char *const tt_parallelism[] = {
    "data_parallel_replicate_degree", "data_parallel_shard_degree", "fsdp_reshard_after_forward",
    "tensor_parallel_degree", "disable_loss_parallel", "enable_async_tensor_parallel", "pipeline_parallel_degree",
    "module_fqns_per_model_part", "pipeline_parallel_first_stage_less_layers", "pipeline_parallel_last_stage_less_layers",
    "pipeline_parallel_layers_per_stage", "pipeline_parallel_schedule", "pipeline_parallel_schedule_csv",
    "pipeline_parallel_microbatch_size", "pipeline_parallel_expert_parallel_overlap", "context_parallel_degree",
    "context_parallel_load_balancer", "context_parallel_rotate_method", "expert_parallel_degree",
    "expert_tensor_parallel_degree", "expert_parallel_comm_backend", NULL};
static const char *const tt_checkpoint[] = {
    "enable", "enable_ft_dataloader_checkpoints", "folder", "interval", "initial_load_path", "initial_load_model_only",
    "initial_load_in_hf", "initial_load_in_hf_quantized", "last_save_model_only", "last_save_in_hf", "export_dtype",
    "async_mode", "keep_latest_k", "load_step", "exclude_from_loading", "enable_first_step_checkpoint",
    "create_seed_checkpoint", "load_only", NULL};
static const char *const tt_ac[] = {"mode", "selective_ac_option", "per_op_sac_force_recompute_mm_shapes_by_fqns",
                                    "early_stop", "memory_budget", "visualize_memory_budget_pareto", "preserve_rng_state",
                                    "determinism_check", "debug", NULL};
static const char *const tt_compile[] = {"enable", "components", "backend", NULL};
static const char *const tt_quantize[] = {"linear", "grouped_mm", NULL};
static const char *const tt_comm[] = {"init_timeout_seconds", "train_timeout_seconds", "trace_buf_size",
                                      "save_traces_folder", "save_traces_file_prefix", "mode", NULL};
static const char *const tt_memest[] = {"enable", "disable_fake_mode", NULL};
static const char *const tt_ft[] = {"enable", "process_group", "process_group_timeout_ms", "replica_id", "group_size",
                                    "min_replica_size", "semi_sync_method", NULL};
static const char *const tt_exp[] = {"custom_import", "custom_args_module", NULL};
static const char *const tt_validation[] = {"enable", "dataset", "dataset_path", "local_batch_size", "seq_len", "freq",
                                            "steps", "dataloader", NULL};
static const char *const tt_debug[] = {"seed", "deterministic", "deterministic_warn_only", "moe_force_load_balance", NULL};

static const tt_table tt_tables[] = {
    {"job", tt_job, NULL}, {"profiling", tt_profiling, NULL}, {"metrics", tt_metrics, NULL}, {"model", tt_model, NULL},
    {"optimizer", tt_optimizer, NULL}, {"lr_scheduler", tt_lr, NULL}, {"training", tt_training, NULL},
    {"parallelism", tt_parallelism, NULL}, {"checkpoint", tt_checkpoint, NULL}, {"activation_checkpoint", tt_ac, NULL},
    {"compile", tt_compile, NULL}, {"quantize", tt_quantize, NULL}, {"comm", tt_comm, NULL},
    {"memory_estimation", tt_memest, NULL}, {"fault_tolerance", tt_ft, NULL}, {"experimental", tt_exp, NULL},
    {"validation", tt_validation, NULL}, {"debug", tt_debug, NULL}};

static void tt_keys(fr *r, const cJSON *root)
{
    const char *names[sizeof tt_tables / sizeof *tt_tables + 1];
    int n = 0;
    for (size_t i = 0; i < sizeof tt_tables / sizeof *tt_tables; i++) names[n++] = tt_tables[i].name;
    names[n] = NULL;
    keys(r, root, "$", names, NULL, "torchtitan v0.2.2's JobConfig");
    for (size_t i = 0; i < sizeof tt_tables / sizeof *tt_tables && r->jr.st == PP_OK; i++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, tt_tables[i].name);
        if (!t) continue;
        char path[48];
        snprintf(path, sizeof path, "$.%s", tt_tables[i].name);
        if (!cJSON_IsObject(t)) {
            jr_fail(&r->jr, "$", tt_tables[i].name, "expected a [%s] table", tt_tables[i].name);
            return;
        }
        keys(r, t, path, tt_tables[i].keys, NULL, "torchtitan v0.2.2's JobConfig");
    }
}

/* Which blocks a model part holds: "tok_embeddings", "layers.N", "norm",
 * "output", in order, each block once over all parts. */
static int tt_parts(fr *r, const cJSON *parts, int pp, pp_strategy *s)
{
    const char *P = "$.parallelism";
    int nparts = cJSON_GetArraySize(parts), next = 0, L = r->m->layers;
    if (nparts < pp || nparts % pp || nparts / pp > 64)
        return jr_fail(&r->jr, P, "module_fqns_per_model_part", "%d model parts: expected a multiple of "
                       "pipeline_parallel_degree %d (each rank runs parts rank, rank + pp, ...)", nparts, pp), 0;
    int blocks[PP_MAX_STAGES * 8] = {0}, k = 0, prev = -1, in_order = 1;
    int emb = -1, norm = -1, out = -1;
    unsigned char seen[PP_MAX_LAYERS] = {0};
    for (const cJSON *part = parts->child; part; part = part->next, k++) {
        if (!cJSON_IsArray(part)) return jr_fail(&r->jr, P, "module_fqns_per_model_part", "part %d: expected a list of "
                                                 "module names", k), 0;
        for (const cJSON *nm = part->child; nm; nm = nm->next) {
            const char *v = cJSON_IsString(nm) ? nm->valuestring : "";
            long b;
            char *end;
            if (!strcmp(v, "tok_embeddings") && emb < 0) emb = k;
            else if (!strcmp(v, "norm") && norm < 0) norm = k;
            else if (!strcmp(v, "output") && out < 0) out = k;
            else if (!strncmp(v, "layers.", 7) && (b = strtol(v + 7, &end, 10), end != v + 7 && !*end) && b >= 0 &&
                     b < L && !seen[b])
                blocks[k]++, next++, seen[b] = 1, in_order &= b == prev + 1, prev = (int)b;
            else
                return jr_fail(&r->jr, P, "module_fqns_per_model_part", "part %d: \"%.40s\": expected tok_embeddings, "
                               "layers.0 .. layers.%d, norm, output, each once", k, v, L - 1), 0;
        }
    }
    if (next != L || emb != 0 || norm != nparts - 1 || out != nparts - 1)
        return jr_fail(&r->jr, P, "module_fqns_per_model_part", "expected every block of %s once (%d of %d listed), "
                       "tok_embeddings in the first part, norm and output in the last", r->m->name, next, L), 0;
    if (!in_order)
        fwarn(r, P, "module_fqns_per_model_part", "the blocks are not listed in the model's order: torchtitan runs them "
              "in the order listed (a permuted model; priced by the blocks per part)");
    int v = nparts / pp;
    s->virtual_stages = v;
    memset(s->stage_layers, 0, sizeof s->stage_layers);
    for (int j = 0; j < nparts; j++) s->stage_layers[j % pp] += blocks[j];
    memset(s->chunk_layers, 0, sizeof s->chunk_layers);
    for (int j = 0; j < nparts && v > 1; j++)
        if (pp__chunk_blocks(s, j % pp, j / pp) != blocks[j]) {
            if (nparts > PP_MAX_CHUNKS)
                return jr_fail(&r->jr, P, "module_fqns_per_model_part", "%d uneven model parts; parplan prices explicit "
                               "layouts of at most %d", nparts, PP_MAX_CHUNKS), 0;
            for (int q = 0; q < nparts; q++) s->chunk_layers[q] = (unsigned short)blocks[q];
            break;
        }
    return 1;
}

/* torchtitan's generate_llm_fqn_per_model_part (pipeline_parallel.py): the
 * stage split when the file gives no module names. */
static int tt_default_split(fr *r, int nstages, int in_w, int out_w, int pp, pp_strategy *s)
{
    int L = r->m->layers, eff = L + in_w + out_w, per = eff / nstages, extra = eff % nstages, cur = 0;
    if (nstages > eff || per == 0 || in_w > per || out_w > per)
        return jr_fail(&r->jr, "$.parallelism", "pipeline_parallel_degree", "%d stages over %d blocks (+%d, +%d for "
                       "the embedding and the output): torchtitan raises ValueError", nstages, L, in_w, out_w), 0;
    memset(s->stage_layers, 0, sizeof s->stage_layers);
    for (int st = 0; st < nstages; st++) {
        int n = per + (st < extra) - (st == 0 ? in_w : 0) - (st == nstages - 1 && st ? out_w : 0);
        if (nstages == 1) n = L;
        if (n > L - cur) n = L - cur;
        s->stage_layers[st % pp] += n;
        cur += n;
    }
    s->virtual_stages = nstages / pp;
    return 1;
}

static void tt_model_block(fr *r, const cJSON *root, pp_strategy *s)
{
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    char name[32] = "llama3", flavor[32] = "debugmodel";
    jr_str(&r->jr, model, "$.model", "name", 0, name, sizeof name);
    jr_str(&r->jr, model, "$.model", "flavor", 0, flavor, sizeof flavor);
    const char *want = pp__torchtitan_flavor(r->m);
    if (r->jr.st) return;
    if (strcmp(name, "llama3"))
        return (void)jr_fail(&r->jr, "$.model", "name", "\"%s\": parplan prices torchtitan's llama3 models", name);
    if (!want || strcmp(flavor, want))
        return (void)jr_fail(&r->jr, "$.model", "flavor", "\"%s\" contradicts %s, which is torchtitan's llama3 flavor "
                             "%s", flavor, r->m->name, want ? want : "none (torchtitan builds Llama 3 8B, 70B, 405B)");
    const cJSON *conv = cJSON_GetObjectItemCaseSensitive(model, "converters");
    s->precision = PP_PREC_BF16;
    for (const cJSON *c = conv ? conv->child : NULL; c && r->jr.st == PP_OK; c = c->next) {
        const char *v = cJSON_IsString(c) ? c->valuestring : "";
        if (!strcmp(v, "quantize.linear.float8")) s->precision = PP_PREC_FP8;
        else if (!strcmp(v, "float8"))
            jr_fail(&r->jr, "$.model", "converters", "\"float8\": torchtitan v0.2.2 registers the converter as "
                    "\"quantize.linear.float8\" (\"float8\" raises KeyError at start-up)");
        else
            jr_fail(&r->jr, "$.model", "converters", "\"%.40s\": not priced (parplan prices quantize.linear.float8)", v);
    }
    if (conv && !cJSON_IsArray(conv)) jr_fail(&r->jr, "$.model", "converters", "expected a list of names");
}

static void tt_parallel(fr *r, const cJSON *root, pp_strategy *s, int *pp_out)
{
    const cJSON *par = cJSON_GetObjectItemCaseSensitive(root, "parallelism");
    const char *P = "$.parallelism";
    int rep = 1, shard = -1, tp = 1, cp = 1, pp = 1, ep = 1;
    jr_int(&r->jr, par, P, "data_parallel_replicate_degree", 0, 1, 1 << 24, &rep);
    jr_int(&r->jr, par, P, "data_parallel_shard_degree", 0, -1, 1 << 24, &shard);
    jr_int(&r->jr, par, P, "tensor_parallel_degree", 0, 1, 1 << 16, &tp);
    jr_int(&r->jr, par, P, "context_parallel_degree", 0, 1, 1 << 16, &cp);
    jr_int(&r->jr, par, P, "pipeline_parallel_degree", 0, 1, PP_MAX_STAGES, &pp);
    jr_int(&r->jr, par, P, "expert_parallel_degree", 0, 1, 1 << 16, &ep);
    if (r->jr.st) return;
    int world = pp_cluster_gpus(r->c);
    long rest = (long)rep * tp * cp * pp;
    if (shard == 0) return (void)jr_fail(&r->jr, P, "data_parallel_shard_degree", "0: expected -1 (the ranks left) or >= 1");
    if (shard < 0) shard = world % rest ? 0 : (int)(world / rest);
    if (shard < 1 || rest * shard != world)
        return (void)jr_fail(&r->jr, P, "data_parallel_shard_degree", "replicate x shard x tp x cp x pp = %d x %d x %d x "
                             "%d x %d does not make the %d GPUs: torchtitan's ParallelDims asserts it", rep, shard, tp, cp,
                             pp, world);
    if (ep > 1) return (void)jr_fail(&r->jr, P, "expert_parallel_degree", "%d: torchtitan's llama3 is dense", ep);
    s->tp = tp, s->cp = cp, s->pp = pp, s->ep = 1;
    s->sp = tp > 1;
    s->dp = rep * shard;
    s->shard = rep > 1 ? shard * cp : 0;
    char raf[16] = "default", rot[16] = "allgather";
    jr_str(&r->jr, par, P, "fsdp_reshard_after_forward", 0, raf, sizeof raf);
    if (!strcmp(raf, "always")) s->zero = 3;
    else if (!strcmp(raf, "never")) s->zero = 2;
    else if (!strcmp(raf, "default")) s->zero = pp > 1 ? 2 : 3; /* torchtitan: reshard unless pipelined */
    else jr_fail(&r->jr, P, "fsdp_reshard_after_forward", "\"%s\": expected default, always or never", raf);
    jr_str(&r->jr, par, P, "context_parallel_rotate_method", 0, rot, sizeof rot);
    if (!strcmp(rot, "allgather")) s->cp_comm = PP_CP_ALLGATHER;
    else if (!strcmp(rot, "alltoall")) s->cp_comm = PP_CP_RING;
    else jr_fail(&r->jr, P, "context_parallel_rotate_method", "\"%s\": expected allgather or alltoall", rot);
    /* v0.2.2 parallelize.py: without a shard or CP group the replicas run DDP,
     * which raises beside TP or PP */
    if (rep > 1 && shard == 1 && cp == 1 && (tp > 1 || pp > 1))
        return (void)jr_fail(&r->jr, P, "data_parallel_shard_degree", "1 with data_parallel_replicate_degree %d and TP or PP: "
                             "torchtitan runs DDP and raises \"DDP has not supported > 1D parallelism\"", rep);
    int nolp = 0;
    if (jr_bool(&r->jr, par, P, "disable_loss_parallel", 0, &nolp) && nolp && tp > 1)
        return (void)jr_fail(&r->jr, P, "disable_loss_parallel", "true with TP: the logits are gathered whole on each rank; "
                             "parplan prices torchtitan's loss_parallel (vocabulary-sharded logits) only");
    int async = 0;
    if (jr_bool(&r->jr, par, P, "enable_async_tensor_parallel", 0, &async) && async)
        fwarn(r, P, "enable_async_tensor_parallel", "not priced (TP communication is priced unoverlapped)");
    *pp_out = pp;
}

static void tt_pipeline(fr *r, const cJSON *root, pp_strategy *s)
{
    const cJSON *par = cJSON_GetObjectItemCaseSensitive(root, "parallelism");
    const char *P = "$.parallelism";
    s->schedule = PP_SCHED_1F1B;
    s->virtual_stages = 1;
    memset(s->stage_layers, 0, sizeof s->stage_layers);
    if (s->pp == 1) return;
    char sched[40] = "1F1B";
    jr_str(&r->jr, par, P, "pipeline_parallel_schedule", 0, sched, sizeof sched);
    static const char *const single[] = {"1F1B", "GPipe", NULL}, *const multi[] = {"Interleaved1F1B", NULL};
    static const char *const other[] = {"LoopedBFS", "InterleavedZeroBubble", "ZBVZeroBubble", "DualPipeV", NULL};
    int is_single = in(sched, single);
    if (r->jr.st == PP_OK && !is_single && !in(sched, multi))
        return (void)jr_fail(&r->jr, P, "pipeline_parallel_schedule", "\"%s\": %s; parplan prices 1F1B, GPipe and "
                             "Interleaved1F1B", sched, in(sched, other) ? "not priced" : "not a torch.distributed."
                             "pipelining schedule");
    s->schedule = !strcmp(sched, "GPipe") ? PP_SCHED_GPIPE : is_single ? PP_SCHED_1F1B : PP_SCHED_INTERLEAVED;
    const cJSON *parts = cJSON_GetObjectItemCaseSensitive(par, "module_fqns_per_model_part");
    if (parts && !cJSON_IsNull(parts)) {
        if (!cJSON_IsArray(parts)) return (void)jr_fail(&r->jr, P, "module_fqns_per_model_part", "expected a list of lists");
        if (!tt_parts(r, parts, s->pp, s)) return;
    } else {
        int in_w = 1, out_w = 1, lps = 0, stages;
        jr_int(&r->jr, par, P, "pipeline_parallel_first_stage_less_layers", 0, 0, PP_MAX_LAYERS, &in_w);
        jr_int(&r->jr, par, P, "pipeline_parallel_last_stage_less_layers", 0, 0, PP_MAX_LAYERS, &out_w);
        if (jr_int(&r->jr, par, P, "pipeline_parallel_layers_per_stage", 0, 1, PP_MAX_LAYERS, &lps))
            stages = (r->m->layers + in_w + out_w + lps - 1) / lps;
        else
            stages = s->pp * (is_single ? 1 : 2);
        if (r->jr.st) return;
        if (stages % s->pp || (is_single ? stages != s->pp : stages / s->pp < 2))
            return (void)jr_fail(&r->jr, P, "pipeline_parallel_layers_per_stage", "gives %d stages over %d ranks: "
                                 "torchtitan raises ValueError (%s schedules run %s stage per rank)", stages, s->pp,
                                 sched, is_single ? "one" : "two or more");
        if (!tt_default_split(r, stages, in_w, out_w, s->pp, s)) return;
    }
    if (is_single && s->virtual_stages != 1)
        return (void)jr_fail(&r->jr, P, "module_fqns_per_model_part", "%d parts per rank with the single-stage "
                             "schedule %s: torchtitan raises ValueError", s->virtual_stages, sched);
    if (!is_single && s->virtual_stages < 2)
        return (void)jr_fail(&r->jr, P, "module_fqns_per_model_part", "one part per rank with the multi-stage schedule "
                             "%s: torchtitan raises ValueError", sched);
}

static void tt_batch(fr *r, const cJSON *root, pp_strategy *s)
{
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(root, "training");
    const char *P = "$.training";
    int local = 8, global = -1, seq = 2048, off = 0;
    jr_int(&r->jr, tr, P, "local_batch_size", 0, 1, 1 << 20, &local);
    jr_int(&r->jr, tr, P, "global_batch_size", 0, -1, 1 << 26, &global);
    jr_int(&r->jr, tr, P, "seq_len", 0, 1, 1 << 24, &seq);
    if (jr_bool(&r->jr, tr, P, "enable_cpu_offload", 0, &off) && off) s->offload = PP_OFFLOAD_OPT_PARAMS;
    char dtype[16] = "float32", mpp[16] = "bfloat16", mpr[16] = "float32";
    jr_str(&r->jr, tr, P, "dtype", 0, dtype, sizeof dtype);
    jr_str(&r->jr, tr, P, "mixed_precision_param", 0, mpp, sizeof mpp);
    jr_str(&r->jr, tr, P, "mixed_precision_reduce", 0, mpr, sizeof mpr);
    if (r->jr.st) return;
    if (strcmp(dtype, "float32"))
        return (void)jr_fail(&r->jr, P, "dtype", "\"%s\": parplan prices fp32 sharded parameters (float32) with "
                             "mixed_precision_param", dtype);
    if (strcmp(mpr, "float32")) return (void)jr_fail(&r->jr, P, "mixed_precision_reduce", "\"%s\": torchtitan v0.2.2 takes "
                                                     "float32 only", mpr);
    if (!strcmp(mpp, "float32")) {
        if (s->precision == PP_PREC_FP8) return (void)jr_fail(&r->jr, P, "mixed_precision_param", "float32 with the fp8 "
                                                                "converter: parplan prices fp8 with bf16 outside its GEMMs");
        s->precision = PP_PREC_FP32;
    } else if (strcmp(mpp, "bfloat16")) {
        return (void)jr_fail(&r->jr, P, "mixed_precision_param", "\"%s\": expected bfloat16 or float32", mpp);
    }
    s->grad_accum_dtype = PP_GRAD_FP32;
    s->buf.fsdp_no_sync = 0; /* torchtitan reduce-scatters every micro-batch */
    s->seq = seq;
    int dp = s->dp;
    if (global < 0) global = local * dp;
    if (global % (local * dp))
        return (void)jr_fail(&r->jr, P, "global_batch_size", "%d is not a multiple of local_batch_size x data-parallel "
                             "degree = %d x %d: torchtitan asserts it", global, local, dp);
    int accum = global / (local * dp);
    if (s->pp == 1) {
        s->micro_batch = local;
    } else {
        int mbs = 1;
        jr_int(&r->jr, cJSON_GetObjectItemCaseSensitive(root, "parallelism"), "$.parallelism",
               "pipeline_parallel_microbatch_size", 0, 1, 1 << 20, &mbs);
        if (r->jr.st) return;
        if (local % mbs) return (void)jr_fail(&r->jr, "$.parallelism", "pipeline_parallel_microbatch_size", "%d does not "
                                              "divide local_batch_size %d", mbs, local);
        if (accum > 1) return (void)jr_fail(&r->jr, P, "global_batch_size", "%d: %d pipeline steps accumulated per "
                                            "optimizer step are not priced; set local_batch_size to the global batch "
                                            "over the data-parallel degree (%d)", global, accum, global / dp);
        s->micro_batch = mbs;
    }
    s->global_batch = global;
    s->grad_accum = 0;
}

/* [compile]: torchtitan v0.2.2 compiles the components listed (default
 * "model" and "loss", config/job_config.py Compile). A compiled loss is
 * Inductor's fusion of logits.float() and the cross-entropy: it keeps the
 * 16-bit logits, not their fp32 copy and log-softmax (components/loss.py
 * build_cross_entropy_loss), priced as the fused loss; compiled blocks are
 * not priced (more memory and time than they take: conservative). */
static void tt_compile_read(fr *r, const cJSON *cc, pp_strategy *s)
{
    int on = 0, loss = 1, model = 1;
    char backend[32] = "inductor";
    const cJSON *comp = cJSON_GetObjectItemCaseSensitive(cc, "components");
    jr_bool(&r->jr, cc, "$.compile", "enable", 0, &on);
    jr_str(&r->jr, cc, "$.compile", "backend", 0, backend, sizeof backend);
    if (comp && !cJSON_IsArray(comp)) return (void)jr_fail(&r->jr, "$.compile", "components", "expected a list of names");
    if (comp) {
        loss = model = 0;
        for (const cJSON *c = comp->child; c && r->jr.st == PP_OK; c = c->next) {
            if (!cJSON_IsString(c)) return (void)jr_fail(&r->jr, "$.compile", "components", "expected a list of names");
            if (!strcmp(c->valuestring, "loss")) loss = 1;
            else if (!strcmp(c->valuestring, "model")) model = 1;
            else jr_fail(&r->jr, "$.compile", "components", "\"%.40s\": expected \"model\" or \"loss\"", c->valuestring);
        }
    }
    if (r->jr.st != PP_OK) return;
    int inductor = on && !strcmp(backend, "inductor"); /* only Inductor generates the fused kernels */
    /* torchao's float8 casts are priced as Inductor fuses them (compute.c) */
    if (s->precision == PP_PREC_FP8 && !(inductor && model))
        fwarn(r, "$.compile", "components", "float8 without compiling the model: torchao's casts run eager, several "
              "times the bytes parplan prices (torchtitan docs/float8.md: compile is \"required for competitive "
              "performance\")");
    if (!on) return;
    if (!inductor) {
        fwarn(r, "$.compile", "backend", "\"%s\": priced as the eager run (no Inductor fusion)", backend);
        return;
    }
    if (loss) s->loss = PP_LOSS_FUSED;
    if (model) fwarn(r, "$.compile", "components", "torch.compile of the model's blocks is not priced beyond "
                     "float8's casts");
}

static void tt_rest(fr *r, const cJSON *root, pp_strategy *s)
{
    const cJSON *ac = cJSON_GetObjectItemCaseSensitive(root, "activation_checkpoint");
    /* torchtitan v0.2.2 ActivationCheckpoint: mode "selective" and
     * selective_ac_option "2" (every 2nd block fully) by default; "op" is the
     * per-op policy (fsdp's selective recompute) */
    char mode[24] = "selective", acopt[16] = "2";
    jr_str(&r->jr, ac, "$.activation_checkpoint", "mode", 0, mode, sizeof mode);
    jr_str(&r->jr, ac, "$.activation_checkpoint", "selective_ac_option", 0, acopt, sizeof acopt);
    char *end = NULL;
    long every = strtol(acopt, &end, 10);
    if (!strcmp(mode, "full")) s->recompute = PP_RECOMPUTE_FULL, s->recompute_layers = -1;
    else if (!strcmp(mode, "none")) s->recompute = PP_RECOMPUTE_NONE;
    else if (strcmp(mode, "selective")) {
        if (r->jr.st == PP_OK)
            jr_fail(&r->jr, "$.activation_checkpoint", "mode", "\"%s\": expected selective, full or none", mode);
    } else if (!strcmp(acopt, "op")) {
        s->recompute = PP_RECOMPUTE_SELECTIVE;
    } else if (r->jr.st == PP_OK && end && *end == '\0' && end != acopt && every >= 1) {
        jr_fail(&r->jr, "$.activation_checkpoint", "selective_ac_option", "\"%s\"%s: one block in %ld checkpointed "
                "whole is not priced (parplan prices torchtitan's \"op\" policy, full or none)", acopt,
                ac && cJSON_GetObjectItemCaseSensitive(ac, "selective_ac_option") ? "" : " (absent: torchtitan's default)",
                every);
    } else if (r->jr.st == PP_OK) {
        jr_fail(&r->jr, "$.activation_checkpoint", "selective_ac_option", "\"%s\": expected \"op\" or a block "
                "interval", acopt);
    }
    /* torchtitan turns torch.utils.checkpoint's early stop off by default
     * (v0.2.2 ActivationCheckpoint.early_stop False): what parplan prices */
    int early = 0;
    if (jr_bool(&r->jr, ac, "$.activation_checkpoint", "early_stop", 0, &early) && early && s->recompute != PP_RECOMPUTE_NONE)
        fwarn(r, "$.activation_checkpoint", "early_stop", "true: priced without it (torchtitan's default); the "
              "recomputation it stops early is not priced");
    const cJSON *opt = cJSON_GetObjectItemCaseSensitive(root, "optimizer");
    char name[16] = "AdamW", impl[16] = "fused";
    jr_str(&r->jr, opt, "$.optimizer", "name", 0, name, sizeof name);
    jr_str(&r->jr, opt, "$.optimizer", "implementation", 0, impl, sizeof impl);
    if (r->jr.st == PP_OK && strcmp(name, "AdamW") && strcmp(name, "Adam"))
        jr_fail(&r->jr, "$.optimizer", "name", "\"%s\": torchtitan v0.2.2 builds Adam and AdamW", name);
    s->optimizer = PP_OPT_ADAMW;
    if (r->jr.st == PP_OK && strcmp(impl, "fused"))
        fwarn(r, "$.optimizer", "implementation", "\"%s\": parplan prices the fused step (no temporaries)", impl);
    tt_compile_read(r, cJSON_GetObjectItemCaseSensitive(root, "compile"), s);
    const cJSON *quant = cJSON_GetObjectItemCaseSensitive(root, "quantize");
    if (quant && s->precision != PP_PREC_FP8)
        fwarn(r, "$", "quantize", "settings without the quantize.linear.float8 converter are not used");
    /* v0.2.2's Float8Linear config: filter_fqns empty by default, every
     * linear (the output layer too) in FP8; parplan prices the blocks in FP8
     * and the output layer in BF16, which filter_fqns = ["output"] gives */
    const cJSON *f8 = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(quant, "linear"), "float8");
    const cJSON *skip = cJSON_GetObjectItemCaseSensitive(f8, "filter_fqns");
    int n = cJSON_GetArraySize(skip);
    const cJSON *first = cJSON_GetArrayItem(skip, 0);
    int output_only = n == 1 && cJSON_IsString(first) && !strcmp(first->valuestring, "output");
    if (s->precision == PP_PREC_FP8 && n == 0)
        fwarn(r, "$.quantize.linear.float8", "filter_fqns", "absent: the output layer runs in FP8 and is priced in BF16 "
              "(filter_fqns = [\"output\"], as parplan writes)");
    else if (s->precision == PP_PREC_FP8 && !output_only)
        fwarn(r, "$.quantize.linear.float8", "filter_fqns", "the block modules it keeps in BF16 are priced as FP8");
}

static const pp__key_of tt_rule_keys[] = {
    {"zero", "$.parallelism.fsdp_reshard_after_forward"}, {"offload", "$.training.enable_cpu_offload"},
    {"recompute", "$.activation_checkpoint.mode"}, {"precision", "$.model.converters / $.training.mixed_precision_param"},
    {"tp", "$.parallelism.tensor_parallel_degree"}, {"cp", "$.parallelism.context_parallel_degree"},
    {"pp", "$.parallelism.pipeline_parallel_degree"}, {"shard", "$.parallelism.data_parallel_shard_degree"},
    {"dp", "$.parallelism.data_parallel_replicate_degree"}, {"cp_comm", "$.parallelism.context_parallel_rotate_method"},
    {"schedule", "$.parallelism.pipeline_parallel_schedule"}, {"virtual_stages", "$.parallelism.module_fqns_per_model_part"},
    {"stage_layers", "$.parallelism.module_fqns_per_model_part"},
    {"micro_batch", "$.training.local_batch_size"}, {"global_batch", "$.training.global_batch_size"},
    {"grad_accum", "$.training.global_batch_size"}, {"seq", "$.training.seq_len"}, {"mode", "--mode"},
    {"model", "$.model.flavor"}, {NULL, NULL}};

static void torchtitan(fr *r, const cJSON *root, pp_strategy *s)
{
    int pp = 1;
    tt_keys(r, root);
    if (r->jr.st == PP_OK) tt_model_block(r, root, s);
    if (r->jr.st == PP_OK) tt_parallel(r, root, s, &pp);
    if (r->jr.st == PP_OK) tt_pipeline(r, root, s);
    if (r->jr.st == PP_OK) tt_batch(r, root, s);
    if (r->jr.st == PP_OK) tt_rest(r, root, s);
}

/* ------------------------------------------------------------ entry */

/* TOML when a line starts with '[' (a table header); YAML otherwise. */
static int looks_toml(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        size_t j = i;
        while (j < len && (text[j] == ' ' || text[j] == '\t')) j++;
        if (j < len && text[j] == '[') return 1;
        while (i < len && text[i] != '\n') i++;
    }
    return 0;
}

pp_status pp_fsdp_parse(const char *text, size_t len, const char *where, const pp_model *m, const pp_cluster *c,
                        const pp_training_args *t, pp_strategy *s, pp_notes *warnings, pp_error *err)
{
    PP__C_NUMERIC;
    int toml = looks_toml(text, len);
    if (toml && t)
        return pp__fail(err, PP_ERR_INPUT, "%.200s: a torchtitan job file carries the batch: drop the TrainingArguments "
                        "(%s)", where, t->where);
    pp_status pst;
    cJSON *root = toml ? pp__toml_parse(text, len, where, err, &pst) : pp__yaml_parse(text, len, where, err, &pst);
    if (!root) return pst;
    pp_notes local = warnings ? *warnings : (pp_notes){0};
    fr r = {{where, err, PP_OK}, &local, m, c};
    pp_strategy out = *s;
    out.framework = PP_FW_FSDP;
    out.filled = 0;
    out.grad_accum_dtype = PP_GRAD_AUTO;
    out.cp_comm = PP_CP_AUTO;
    out.loss = PP_LOSS_AUTO;
    out.overlap_dp = out.overlap_tp = -1;
    out.buf.free_pipeline_outputs = -1;
    if (s->filled & PP_FILLED_ALLOCATOR) out.buf.expandable_segments = -1; /* derived for another framework */
    out.recompute = PP_RECOMPUTE_NONE;
    out.offload = PP_OFFLOAD_NONE;
    out.ep = 1;
    if (toml) torchtitan(&r, root, &out);
    else accelerate(&r, root, t, &out);
    cJSON_Delete(root);
    if (r.jr.st != PP_OK) return r.jr.st;
    pp_strategy res = out;
    pp_error e = {""};
    if (pp_strategy_resolve(&res, m, c, &e) != PP_OK)
        return pp__rule_in_file(where, &e, toml ? tt_rule_keys : acc_rule_keys, err);
    *s = out;
    if (warnings) *warnings = local;
    return PP_OK;
}

pp_status pp_fsdp_read(const char *path, const pp_model *m, const pp_cluster *c, const pp_training_args *t,
                       pp_strategy *s, pp_notes *warnings, pp_error *err)
{
    PP__C_NUMERIC;
    char *text;
    size_t len;
    pp_status st = pp__read_text_file(path, &text, &len, err);
    if (st != PP_OK) return st;
    st = pp_fsdp_parse(text, len, path, m, c, t, s, warnings, err);
    free(text);
    return st;
}
