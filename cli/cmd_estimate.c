/* cmd_estimate.c — `parplan estimate`: memory (and time) of one strategy. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const cli_opt opts[] = {
    {"framework", 1, "pytorch|deepspeed|megatron|megatron-deepspeed|fsdp (default: the --deepspeed file's, "
                     "else pytorch on one GPU and the first framework that can run it beyond)"},
    {"model", 1, "model preset or JSON file (native or HF config.json)"},
    {"cluster", 1, "cluster preset or JSON file"},
    {"nodes", 1, "number of nodes"},
    {"gpus", 1, "total GPUs (instead of --nodes)"},
    {"tp", 1, "tensor-parallel degree (default 1)"},
    {"pp", 1, "pipeline-parallel degree (default 1)"},
    {"dp", 1, "data-parallel degree (default GPUs/(tp*pp*cp))"},
    {"cp", 1, "context-parallel degree (default 1)"},
    {"ep", 1, "expert-parallel degree (default 1)"},
    {"etp", 1, "megatron, MoE: the experts' tensor-parallel degree, a divisor of tp (--expert-tensor-parallel-size; default tp)"},
    {"sp", 0, "Megatron sequence parallelism"},
    {"zero", 1, "ZeRO stage 0-3 (default 0); fsdp: 3 reshards after forward, 2 keeps parameters gathered"},
    {"shard", 1, "ranks one ZeRO/FSDP shard spans (default all dp*cp; fewer: hybrid sharding, fsdp)"},
    {"recompute", 1, "none|selective|full (default none)"},
    {"recompute-layers", 1, "with full: blocks per stage to recompute (default all)"},
    {"recompute-modules", 1, "megatron, with selective: what it recomputes, among core_attn (the default), mlp, moe_act, "
                             "layernorm, mla_up_proj, comma-separated (--recompute-modules)"},
    {"act-offload-layers", 1, "megatron: the first N blocks' activations go to host memory and back "
                              "(--cpu-offloading-num-layers; pp 1, no recompute; default 0)"},
    {"precision", 1, "fp32|fp16|bf16|fp8 (default bf16)"},
    {"optimizer", 1, "adamw|adam8bit|adafactor|sgd|lion|adagrad|rmsprop (default adamw)"},
    {"optimizer-states", 1, "fp32 (default) or bf16: megatron's precision-aware optimizer, AdamW's moments in bf16 "
                            "(--use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16; zero 1)"},
    {"fp8-param-gather", 1, "on|off: megatron fp8, FP8 primary weights (--fp8-param-gather: no bf16 copy, 1-byte "
                            "parameter gathers; default on with zero 1 or 3)"},
    {"attention", 1, "flash|materialised (default flash)"},
    {"cp-comm", 1, "with --cp: ring (send/recv under attention), allgather (of K/V) or a2a (Ulysses) "
                   "(default: the framework's)"},
    {"loss", 1, "loss kernel: fp32 (the framework's: Megatron's, or PyTorch's on logits.float()), fused (flash-attn, "
                "TE) or chunked (Liger) (default fp32)"},
    {"micro-batch", 1, "sequences per GPU per micro-step (default 1)"},
    {"global-batch", 1, "sequences per step (default micro-batch*dp)"},
    {"seq", 1, "sequence length (default: the model's)"},
    {"schedule", 1, "1f1b|interleaved|gpipe (default 1f1b)"},
    {"virtual-stages", 1, "interleaved chunks per stage (default 1, 2 with interleaved)"},
    {"offload", 1, "none|optimizer|optimizer+params|nvme (default none)"},
    {"grad-accum", 1, "gradient accumulation: 16bit (DeepSpeed ZeRO), fp32 (Megatron main_grad, PyTorch AMP, "
                      "FSDP), 16bit+fp32 (DeepSpeed BF16_Optimizer) (default: the framework's)"},
    {"stage-layers", 1, "blocks per stage, e.g. 9,10,10,9, or deepspeed / deepspeed+embedding: "
                        "the split of DeepSpeed's partition_method type:transformer / "
                        "type:transformer|embedding (default even split)"},
    {"reduce-bucket", 1, "DeepSpeed reduce_bucket_size, elements (default 5e8); megatron --ddp-bucket-size "
                         "(default max(4e7, 1e6 x dp))"},
    {"allgather-bucket", 1, "DeepSpeed allgather_bucket_size, elements (default 5e8)"},
    {"cuda-context-gib", 1, "CUDA context and kernels per GPU, GiB (default 1.0)"},
    {"fragmentation", 1, "caching allocator's overhead on activations, fraction (default 0.10)"},
    {"allocator", 1, "caching (PyTorch's default) or expandable (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, "
                     "no fragmentation; megatron's argument script sets it) (default: what the framework's launch file sets)"},
    {"free-pipeline-outputs", 0, "a stage frees its outputs once sent (Megatron's behaviour; the framework's "
                                 "by default)"},
    {"order", 1, "rank order, fastest first (default tp-cp-dp-pp)"},
    CLI_FINETUNE_OPTS,
    {"measured-step-s", 1, "calibrate: your measured step time for this strategy, s"},
    {"measured-tflops", 1, "calibrate: your measured model TFLOP/s per GPU for this strategy"},
    {"no-dp-overlap", 0, "DP/ZeRO communication does not overlap backward (default: as the framework does)"},
    {"tp-overlap", 0, "TP communication overlapped with GEMMs (TE userbuffers; megatron with --sp does by default)"},
    {"ep-dispatch", 1, "megatron, ep > 1: alltoall (NCCL, the default) or hierarchical (DeepEP/HybridEP: a token crosses once per NVLink domain)"},
    {"ep-overlap", 0, "megatron: EP all-to-alls overlapped with another micro-batch (--overlap-moe-expert-parallel-comm)"},
    {"train-tokens", 1, "report days, GPU-hours, cost and energy for T tokens"},
    {"price-per-gpu-hour", 1, "override the catalog price, $"},
    {"tdp-w", 1, "override the GPU board power, W"},
    {"format", 1, "table (default) or json"},
    {"fail-if-oom", 0, "exit 1 when the strategy does not fit (default: DOES NOT FIT is a result, exit 0)"},
    {"deepspeed", 1, "read dp, ZeRO, batch, precision... from this ds_config.json"},
    {"fsdp-config", 1, "read the strategy from an HF Accelerate FSDP2 config YAML (with --training-args) or a "
                       "torchtitan job TOML (docs/fsdp.md)"},
    {"training-args", 1, "read batch, checkpointing, precision and optimizer from HF TrainingArguments JSON (plain "
                         "PyTorch, or DeepSpeed when it names a ds_config.json; docs/fsdp.md)"},
    {"megatron-args", 1, "read the strategy from Megatron-LM or Megatron-DeepSpeed arguments (MEGATRON_ARGS=( ... ), "
                         "one flag per line, or a command line; docs/megatron.md)"},
    {"emit-deepspeed", 1, "write ds_config.json for DeepSpeed v0.14.5 to FILE"},
    {"emit-megatron", 1, "write Megatron-LM arguments (Megatron-DeepSpeed with --emit-deepspeed)"},
    {"force", 0, "replace existing output files"},
    CLI_REPORT_OPT,
    {"nvme-path", 1, "NVMe mount for --offload nvme in ds_config.json"},
    CLI_HPARAM_OPTS,
    {"emit", 1, "write the launch files of the plan's framework into folder DIR (docs/frameworks.md)"},
    {NULL, 0, NULL}};

static int parse_enum(const cli_args *a, const char *name, int which, int *out)
{
    const char *v = cli_get(a, name);
    if (!v) return 0;
    int n;
    const char *const *names = pp_enum_names(which, &n);
    int e = pp_enum_parse(names, n, v);
    if (e < 0) {
        fprintf(stderr, "parplan: --%s: expected one of", name);
        for (int i = 0; i < n; i++) fprintf(stderr, "%s%s", i ? "|" : " ", names[i]);
        fprintf(stderr, ", got '%s'\n", cli_q(v));
        return 2;
    }
    *out = e;
    return 0;
}

static int parse_stage_layers(const char *v, const pp_model *m, pp_strategy *s)
{
    int n = 0;
    if (!strcmp(v, "deepspeed") || !strcmp(v, "deepspeed+embedding")) {
        pp_error err;
        if (pp_split_deepspeed(m, s, v[9] == '+', s->stage_layers, &err) == PP_OK) return 0;
        return cli_fail(PP_ERR_INPUT, &err);
    }
    const char *p = v;
    while (*p) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        double x;
        if (cli_parse_num(p, (size_t)(end - p), &x) || x < 0 || x > PP_MAX_LAYERS || x != (int)x || n >= PP_MAX_STAGES) {
            fprintf(stderr, "parplan: --stage-layers: expected comma-separated block counts, got '%s'\n", cli_q(v));
            return 2;
        }
        s->stage_layers[n++] = (int)x;
        p = *end ? end + 1 : end;
    }
    if (n != s->pp) {
        fprintf(stderr, "parplan: --stage-layers: expected %d counts (one per --pp stage), got %d\n", s->pp, n);
        return 2;
    }
    return 0;
}

static int parse_enums(const cli_args *a, pp_strategy *s)
{
    int e, rc = 0;
    if (!rc && !(rc = parse_enum(a, "precision", PP_ENUM_PRECISION, &e)) && cli_has(a, "precision")) s->precision = e;
    if (!rc && !(rc = parse_enum(a, "recompute", PP_ENUM_RECOMPUTE, &e)) && cli_has(a, "recompute")) s->recompute = e;
    if (!rc && !(rc = parse_enum(a, "optimizer", PP_ENUM_OPTIMIZER, &e)) && cli_has(a, "optimizer")) s->optimizer = e;
    if (!rc && !(rc = parse_enum(a, "attention", PP_ENUM_ATTENTION, &e)) && cli_has(a, "attention")) s->attention = e;
    if (!rc && !(rc = parse_enum(a, "cp-comm", PP_ENUM_CP_COMM, &e)) && cli_has(a, "cp-comm")) s->cp_comm = e;
    if (!rc && !(rc = parse_enum(a, "loss", PP_ENUM_LOSS, &e)) && cli_has(a, "loss")) s->loss = e;
    if (!rc && !(rc = parse_enum(a, "schedule", PP_ENUM_SCHEDULE, &e)) && cli_has(a, "schedule")) s->schedule = e;
    if (!rc && !(rc = parse_enum(a, "offload", PP_ENUM_OFFLOAD, &e)) && cli_has(a, "offload")) s->offload = e;
    if (!rc && !(rc = parse_enum(a, "grad-accum", PP_ENUM_GRAD_ACCUM, &e)) && cli_has(a, "grad-accum"))
        s->grad_accum_dtype = e;
    if (!rc && !(rc = parse_enum(a, "optimizer-states", PP_ENUM_OPT_STATES, &e)) && cli_has(a, "optimizer-states"))
        s->opt_states = e;
    unsigned mods = 0;
    if (!rc && cli_has(a, "recompute-modules") &&
        (pp_rc_modules_parse(cli_get(a, "recompute-modules"), &mods) || !mods)) {
        fprintf(stderr, "parplan: --recompute-modules: expected names among core_attn, mlp, moe_act, layernorm, "
                        "mla_up_proj separated by commas, got '%s'\n", cli_q(cli_get(a, "recompute-modules")));
        rc = 2;
    }
    if (!rc && mods) s->recompute_modules = mods == PP_RC_CORE_ATTN ? 0 : mods; /* core_attn alone is the default */
    if (!rc && cli_has(a, "framework") && strcmp(cli_get(a, "framework"), "auto") &&
        !(rc = parse_enum(a, "framework", PP_ENUM_FRAMEWORK, &e)))
        s->framework = e;
    return rc;
}

static int parse_buffers(const cli_args *a, pp_buffers *b)
{
    double gib;
    int rc;
    if ((rc = cli_num(a, "reduce-bucket", 1, 1e12, b->reduce_bucket, &b->reduce_bucket))) return rc;
    if ((rc = cli_num(a, "allgather-bucket", 1, 1e12, b->allgather_bucket, &b->allgather_bucket))) return rc;
    if ((rc = cli_num(a, "fragmentation", 0, 1, b->fragmentation, &b->fragmentation))) return rc;
    if ((rc = cli_num(a, "cuda-context-gib", 0, 64, b->cuda_context / 1073741824.0, &gib))) return rc;
    b->cuda_context = gib * 1073741824.0;
    return 0;
}

int cli_strategy(const cli_args *a, const pp_model *m, const pp_cluster *c, pp_strategy *s)
{
    int rc, dp = 0;
    pp_strategy_default(s);
    if ((rc = cli_int(a, "tp", 1, 1 << 16, 1, &s->tp)) || (rc = cli_int(a, "pp", 1, PP_MAX_STAGES, 1, &s->pp)) ||
        (rc = cli_int(a, "cp", 1, 1 << 16, 1, &s->cp)) || (rc = cli_int(a, "ep", 1, 1 << 16, 1, &s->ep)) ||
        (rc = cli_int(a, "etp", 1, 1 << 16, 0, &s->etp)) ||
        (rc = cli_int(a, "dp", 1, 1 << 24, 0, &dp)) || (rc = cli_int(a, "zero", 0, 3, 0, &s->zero)) ||
        (rc = cli_int(a, "shard", 1, 1 << 24, 0, &s->shard)) ||
        (rc = cli_int(a, "micro-batch", 1, 1 << 20, 1, &s->micro_batch)) ||
        (rc = cli_int(a, "seq", 1, 1 << 24, m->seq, &s->seq)) ||
        (rc = cli_int(a, "recompute-layers", 0, PP_MAX_LAYERS, -1, &s->recompute_layers)) ||
        (rc = cli_int(a, "act-offload-layers", 0, PP_MAX_LAYERS, 0, &s->act_offload_layers)))
        return rc;
    if ((rc = parse_enums(a, s)) || (rc = parse_buffers(a, &s->buf)) || (rc = cli_finetune(a, &s->ft))) return rc;
    s->sp = cli_has(a, "sp");
    if (cli_has(a, "no-dp-overlap")) s->overlap_dp = 0;
    if (cli_has(a, "tp-overlap")) s->overlap_tp = 1;
    if (cli_has(a, "ep-overlap")) s->overlap_ep = 1;
    const char *ed = cli_get(a, "ep-dispatch");
    if (ed && strcmp(ed, "alltoall") && strcmp(ed, "hierarchical")) {
        fprintf(stderr, "parplan: --ep-dispatch: expected alltoall|hierarchical, got '%s'\n", cli_q(ed));
        return 2;
    }
    if (ed) s->ep_dispatch = !strcmp(ed, "hierarchical");
    if (cli_has(a, "free-pipeline-outputs")) s->buf.free_pipeline_outputs = 1;
    const char *al = cli_get(a, "allocator");
    if (al && strcmp(al, "caching") && strcmp(al, "expandable")) {
        fprintf(stderr, "parplan: --allocator: expected caching|expandable, got '%s'\n", cli_q(al));
        return 2;
    }
    if (al) s->buf.expandable_segments = !strcmp(al, "expandable");
    const char *fg = cli_get(a, "fp8-param-gather");
    if (fg && strcmp(fg, "on") && strcmp(fg, "off")) {
        fprintf(stderr, "parplan: --fp8-param-gather: expected on|off, got '%s'\n", cli_q(fg));
        return 2;
    }
    if (fg) s->fp8_param_gather = !strcmp(fg, "on");
    const char *ord = cli_get(a, "order");
    if (ord) {
        if (strlen(ord) >= sizeof s->order) {
            fprintf(stderr, "parplan: --order: expected e.g. tp-cp-dp-pp, got '%s'\n", cli_q(ord));
            return 2;
        }
        memcpy(s->order, ord, strlen(ord) + 1);
    }
    long rest = (long)s->tp * s->pp * s->cp;
    s->dp = dp ? dp : (int)(pp_cluster_gpus(c) / rest > 0 ? pp_cluster_gpus(c) / rest : 1);
    if ((rc = cli_int(a, "virtual-stages", 1, 64, s->schedule == PP_SCHED_INTERLEAVED ? 2 : 1, &s->virtual_stages)))
        return rc;
    if ((rc = cli_int(a, "global-batch", 1, 1 << 26, s->micro_batch * s->dp, &s->global_batch))) return rc;
    const char *sl = cli_get(a, "stage-layers");
    return sl ? parse_stage_layers(sl, m, s) : 0;
}

static double gib(double b) { return b / 1073741824.0; }

static void print_memory(const pp_model *m, const pp_cluster *c, const pp_plan *p)
{
    const pp_strategy *s = &p->strategy;
    const pp_memory *mem = &p->memory;
    printf("%s on %d x %s with %s (%s): dp %d, tp %d, pp %d, cp %d, ep %d%s%s, ZeRO-%d, %s, recompute %s%s, micro-batch %d x %d, seq %d\n",
           cli_safe(m->name), pp_cluster_gpus(c), cli_safe(c->gpu.name), pp_framework_name(s->framework),
           pp_strategy_launcher(s), s->dp, s->tp,
           s->pp, s->cp, s->ep, cli_etp(s), s->sp ? " +sp" : "",
           s->zero, pp_enum_names(PP_ENUM_PRECISION, &(int){0})[s->precision], pp_recompute_name(s->recompute),
           cli_extras(s), s->micro_batch, s->grad_accum, s->seq);
    if (s->ft.mode != PP_MODE_FULL || p->params_trainable < p->params_total) {
        int n;
        printf("training: %s, %.4g M of %.4g B parameters trainable (%.3f%%)\n",
               pp_enum_names(PP_ENUM_MODE, &n)[s->ft.mode], p->params_trainable / 1e6, p->params_total / 1e9,
               100 * p->params_trainable / p->params_total);
    }
    static char lays[PP_MAX_STAGES][48]; /* an interleaved stage's chunks: "0,15-16,31-32+E" */
    int width = 10;
    for (int i = 0; i < mem->nstages && i < PP_MAX_STAGES; i++) {
        const pp_stage_mem *st = &mem->stages[i];
        char ranges[40];
        pp_stage_blocks_text(s, i, ranges, sizeof ranges);
        int w = snprintf(lays[i], sizeof lays[i], "%s%s%s", st->first_layer >= 0 ? ranges : "-",
                         st->has_embedding ? "+E" : "", st->has_lm_head ? "+H" : "");
        if (w > width) width = w < (int)sizeof lays[i] ? w : (int)sizeof lays[i] - 1;
    }
    printf("\nmemory per GPU (GiB)\n stage  %-*s  params   grads  optim  activ  buffers   total  peak moment\n", width,
           "layers");
    for (int i = 0; i < mem->nstages && i < PP_MAX_STAGES; i++) {
        const pp_stage_mem *st = &mem->stages[i];
        printf(" %5d  %-*s %7.2f %7.2f %6.2f %6.2f %8.2f %7.2f%s %s\n", i, width, lays[i], gib(st->params_bytes),
               gib(st->grads_bytes), gib(st->optimizer_bytes), gib(st->activations_bytes), gib(st->buffers_bytes),
               gib(st->total_bytes), i == mem->peak_stage ? "*" : " ",
               st->peak_phase == PP_PHASE_OPTIMIZER ? "optimizer step" : "forward/backward");
    }
    const pp_uncertainty *u = &p->uncertainty;
    const pp_interval *pk = &u->peak_bytes;
    printf("\npeak %.2f GiB on stage %d of %.2f GiB usable: %s\n", gib(mem->peak_bytes), mem->peak_stage,
           gib(mem->gpu_bytes), u->fit == PP_FIT_NO ? "DOES NOT FIT" : pp_fit_name(u->fit));
    if (mem->load_bytes > 0)
        printf("  at load: %.2f GiB, the whole 4-bit model on every GPU before DeepSpeed partitions it (QLoRA under "
               "ZeRO-3: transformers quantises onto the GPU without zero.Init)\n", gib(mem->load_bytes));
    if (mem->live_fits && !mem->fits)
        printf("  tight: the live tensors need %.2f GiB; the rest is the caching allocator's fragmentation allowance: "
               "cached segments with nothing live it frees and retries (slower), free space inside segments that hold "
               "live tensors it cannot, so runs in this band have both run and run out of memory (docs/memory.md)\n",
               gib(mem->live_peak_bytes));
    else if (!mem->live_fits && u->fit == PP_FIT_TIGHT)
        printf("  tight: the live tensors need %.2f GiB, over the usable memory, but by less than the error bar: at "
               "its low end (x%.3f) they fit, so it may run, but more likely runs out of memory (docs/memory.md)\n",
               gib(mem->live_peak_bytes), pk->lo / mem->peak_bytes);
    if (pk->rows)
        printf("  %.0f%% interval %.2f-%.2f GiB (from %d published runs: %s)\n", 100 * u->level, gib(pk->lo), gib(pk->hi),
               pk->rows, pk->group);
    const pp_stage_mem *top = &mem->stages[mem->peak_stage];
    if (p->strategy.buf.expandable_segments > 0)
        printf("  allocator: expandable segments (PYTORCH_CUDA_ALLOC_CONF), no fragmentation reserve\n");
    else
        printf("  allocator: PyTorch's caching allocator, %.2f GiB of the peak is its fragmentation (%g)\n",
               gib(top->fragmentation_bytes), p->strategy.buf.fragmentation);
    if (mem->host_bytes_per_node > 0)
        printf("host: %.1f GiB offloaded per node of %.1f GiB usable: %s\n", gib(mem->host_bytes_per_node),
               gib(mem->host_usable_bytes), mem->host_fits ? "fits" : "DOES NOT FIT");
    if (mem->nvme_bytes_per_node > 0)
        printf("NVMe: %.1f GB swapped per node of %.1f GB: %s\n", mem->nvme_bytes_per_node / 1e9,
               mem->nvme_usable_bytes / 1e9, mem->nvme_fits ? "fits" : "DOES NOT FIT");
}

static void print_time(const pp_plan *p)
{
    const pp_time *t = &p->time;
    const pp_throughput *q = &p->throughput;
    struct { const char *name; double v; } rows[] = {
        {"compute", t->compute_s}, {"recompute", t->recompute_s}, {"TP comm", t->tp_comm_s},
        {"CP comm", t->cp_comm_s}, {"EP comm", t->ep_comm_s}, {"PP comm", t->pp_comm_s},
        {"DP/ZeRO comm (exposed)", t->dp_comm_exposed_s}, {"pipeline bubble", t->bubble_s},
        {"optimizer", t->optimizer_s}, {"offload", t->offload_s}};
    printf("\nstep time (slowest stage %d)\n", t->slowest_stage);
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        if (rows[i].v > 0) printf("  %-24s %9.3f s  %5.1f%%\n", rows[i].name, rows[i].v, 100 * rows[i].v / t->step_s);
    if (t->expert_host_s > 0)
        printf("  %-24s %9.3f s   (of compute and recompute: the GPU waits for the host to launch the "
               "experts one by one)\n", "expert launches", t->expert_host_s);
    if (t->dp_comm_s > 0)
        printf("  %-24s %9.3f s   (DP/ZeRO traffic %.3f s, of which %.0f%% adds to the step)\n", "step", t->step_s,
               t->dp_comm_s, 100 * t->dp_comm_exposed_s / t->dp_comm_s);
    else
        printf("  %-24s %9.3f s\n", "step", t->step_s);
    const pp_interval *si = &p->uncertainty.step_s;
    if (si->rows)
        printf("  %.0f%% interval %.3f-%.3f s (from %d published runs: %s)\n", 100 * p->uncertainty.level, si->lo, si->hi,
               si->rows, si->group);
    if (p->uncertainty.notes[0]) printf("  not validated: %s\n", p->uncertainty.notes);
    printf("\n%.0f tokens/s, %.1f model TFLOP/s per GPU, MFU %.1f%%, HFU %.1f%%\n", q->tokens_per_s,
           q->model_tflops_per_gpu, 100 * q->mfu, 100 * q->hfu);
    if (p->train.tokens > 0)
        printf("%.3g tokens: %.1f days, %.0f GPU-hours, $%.0f, %.0f kWh (GPU board power)\n", p->train.tokens,
               p->train.days, p->train.gpu_hours, p->train.cost_usd, p->train.energy_kwh);
}

/* ---- configs out: --deepspeed (read back), --emit-deepspeed, --emit-megatron.
 * Errors print one line and nothing on stdout (docs/errors.md), so notes
 * wait until the command succeeds and files are written before the table. */

static void print_notes(const pp_notes *n, const char *kind)
{
    for (int i = 0; i < n->n; i++) fprintf(stderr, "parplan: %s: %s\n", kind, cli_safe(n->line[i]));
    if (n->dropped) fprintf(stderr, "parplan: %s: (%d more)\n", kind, n->dropped);
}

/* --deepspeed FILE: the file decides what DeepSpeed decides. --micro-batch,
 * --global-batch and --precision are the HF Trainer's arguments: they fill
 * "auto" values and keys the file leaves out (pp_hf_trainer_args). */
static int read_deepspeed(const cli_args *a, const pp_model *m, const pp_cluster *c, pp_strategy *s,
                          pp_deepspeed_opts *dso, pp_notes *warn)
{
    static const char *const from_file[] = {"dp", "zero", "offload", "reduce-bucket", "allgather-bucket",
                                            "no-dp-overlap", NULL};
    for (int i = 0; from_file[i]; i++)
        if (cli_has(a, from_file[i])) {
            fprintf(stderr, "parplan: --%s: with --deepspeed it comes from the DeepSpeed config; give one of them\n",
                    from_file[i]);
            return 2;
        }
    pp_hf_trainer_args hf = {cli_has(a, "micro-batch") ? s->micro_batch : 0,
                             cli_has(a, "global-batch") ? s->global_batch : 0,
                             cli_has(a, "precision") ? (int)s->precision : -1};
    pp_error err = {""};
    pp_status st = pp_deepspeed_read_hf(cli_get(a, "deepspeed"), m, c, &hf, s, dso, warn, &err);
    return st == PP_OK ? 0 : cli_fail(st, &err);
}

/* The flags a launcher file decides: given beside it, they are refused. */
static int refuse_from_file(const cli_args *a, const char *const *flags, const char *file_flag)
{
    for (int i = 0; flags[i]; i++)
        if (cli_has(a, flags[i])) {
            fprintf(stderr, "parplan: --%s: with --%s it comes from the file; give one of them\n", flags[i], file_flag);
            return 2;
        }
    return 0;
}

/* --megatron-args FILE: the file decides the strategy (and names the
 * ds_config.json of Megatron-DeepSpeed); the model and cluster are the
 * command line's, and so are the buffer overrides. */
static int read_megatron(const cli_args *a, const pp_model *m, const pp_cluster *c, pp_strategy *s, pp_notes *warn)
{
    if (cli_has(a, "fsdp-config") || cli_has(a, "training-args")) {
        fprintf(stderr, "parplan: --megatron-args with --%s: give the launcher files of one framework\n",
                cli_has(a, "fsdp-config") ? "fsdp-config" : "training-args");
        return 2;
    }
    static const char *const from_file[] = {"tp", "pp", "dp", "cp", "ep", "etp", "sp", "zero", "shard", "recompute",
                                            "recompute-layers", "act-offload-layers", "precision", "optimizer",
                                            "attention", "cp-comm", "loss", "micro-batch", "global-batch", "seq", "schedule",
                                            "virtual-stages", "stage-layers", "offload", "grad-accum", "deepspeed",
                                            "no-dp-overlap", "tp-overlap", "ep-overlap", "ep-dispatch", "reduce-bucket", "allgather-bucket",
                                            "allocator", "optimizer-states", "recompute-modules", "fp8-param-gather",
                                            NULL};
    int rc = refuse_from_file(a, from_file, "megatron-args");
    if (rc) return rc;
    pp_framework want = s->framework;
    pp_error err = {""};
    pp_status st = pp_megatron_read(cli_get(a, "megatron-args"), m, c, s, warn, &err);
    if (st != PP_OK) return cli_fail(st, &err);
    if (want != PP_FW_AUTO && want != s->framework) {
        fprintf(stderr, "parplan: --framework %s: %s holds %s arguments (framework %s)\n", pp_framework_name(want),
                cli_safe(cli_get(a, "megatron-args")), s->framework == PP_FW_MEGATRON ? "Megatron-LM" : "Megatron-DeepSpeed",
                pp_framework_name(s->framework));
        return 2;
    }
    return 0;
}

/* The same file? (a missing one is not the same as anything) */
static int same_file(const char *a, const char *b)
{
    char ra[4096], rb[4096];
    return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

/* --deepspeed FILE alone: the HF Trainer's training_args.json beside it
 * (what `--emit` writes) when its "deepspeed" names FILE and no Trainer
 * flag is given, so the folder reads back whole (gradient checkpointing is
 * the Trainer's, not ds_config's). The path in buf, or NULL. */
static const char *sibling_training_args(const cli_args *a, char *buf, size_t cap)
{
    static const char *const trainer[] = {"micro-batch", "global-batch", "precision", "recompute", "recompute-layers",
                                          "optimizer", "loss", NULL};
    const char *ds = cli_get(a, "deepspeed"), *slash = ds ? strrchr(ds, '/') : NULL;
    if (!ds || cli_has(a, "training-args") || cli_has(a, "fsdp-config")) return NULL;
    for (int i = 0; trainer[i]; i++)
        if (cli_has(a, trainer[i])) return NULL;
    snprintf(buf, cap, "%.*s%straining_args.json", slash ? (int)(slash - ds) : 0, ds, slash ? "/" : "");
    pp_training_args ta;
    pp_notes quiet = {0};
    pp_error err = {""};
    if (access(buf, R_OK) != 0 || pp_training_args_read(buf, &ta, &quiet, &err) != PP_OK || !ta.deepspeed[0])
        return NULL;
    char named[PP_TEXT_LEN * 2];
    if (ta.deepspeed[0] == '/' || !slash) snprintf(named, sizeof named, "%s", ta.deepspeed);
    else snprintf(named, sizeof named, "%.*s/%s", (int)(slash - ds), ds, ta.deepspeed);
    return same_file(named, ds) ? buf : NULL;
}

/* --fsdp-config and --training-args: HF Accelerate / torchtitan FSDP, or
 * the HF Trainer's TrainingArguments (plain PyTorch, or DeepSpeed with the
 * ds_config.json they name or --deepspeed gives). */
static int read_hf_fsdp(const cli_args *a, const pp_model *m, const pp_cluster *c, pp_strategy *s,
                        pp_deepspeed_opts *dso, pp_notes *warn, const char *sibling)
{
    static const char *const layout[] = {"tp", "pp", "dp", "cp", "ep", "etp", "sp", "zero", "shard", "offload", "schedule",
                                         "virtual-stages", "stage-layers", "cp-comm", "reduce-bucket",
                                         "allgather-bucket", "no-dp-overlap", "tp-overlap", NULL};
    static const char *const trainer[] = {"micro-batch", "global-batch", "precision", "recompute", "recompute-layers",
                                          "optimizer", "loss", NULL};
    const char *fsdp = cli_get(a, "fsdp-config"), *ds = cli_get(a, "deepspeed");
    const char *ta_path = sibling ? sibling : cli_get(a, "training-args");
    int rc;
    pp_error err = {""};
    pp_training_args ta;
    if (fsdp && ds) {
        fprintf(stderr, "parplan: --fsdp-config with --deepspeed: give the launcher files of one framework\n");
        return 2;
    }
    if (ta_path && (rc = refuse_from_file(a, trainer, "training-args"))) return rc;
    if (ta_path && pp_training_args_read(ta_path, &ta, warn, &err) != PP_OK) return cli_fail(PP_ERR_INPUT, &err);
    if (fsdp) {
        if ((rc = refuse_from_file(a, layout, "fsdp-config"))) return rc;
        static const char *const more[] = {"precision", "recompute", "recompute-layers", "loss", NULL};
        if ((rc = refuse_from_file(a, more, "fsdp-config"))) return rc;
        if (s->framework != PP_FW_AUTO && s->framework != PP_FW_FSDP) {
            fprintf(stderr, "parplan: --framework %s: --fsdp-config files are run by fsdp\n", pp_framework_name(s->framework));
            return 2;
        }
        pp_status st = pp_fsdp_read(fsdp, m, c, ta_path ? &ta : NULL, s, warn, &err);
        return st == PP_OK ? 0 : cli_fail(st, &err);
    }
    if (ds && ta.deepspeed[0]) {
        char named[PP_TEXT_LEN * 2];
        const char *slash = strrchr(ta_path, '/');
        if (ta.deepspeed[0] == '/' || !slash) snprintf(named, sizeof named, "%s", ta.deepspeed);
        else snprintf(named, sizeof named, "%.*s/%s", (int)(slash - ta_path), ta_path, ta.deepspeed);
        if (!same_file(named, ds)) {
            fprintf(stderr, "parplan: --deepspeed %s: %s names another ds_config.json (\"deepspeed\": \"%s\")\n",
                    cli_safe(ds), cli_safe(ta_path), cli_safe(ta.deepspeed));
            return 2;
        }
    }
    static const char *const from_ds[] = {"dp", "zero", "offload", "reduce-bucket", "allgather-bucket",
                                          "no-dp-overlap", NULL};
    if ((ds || ta.deepspeed[0]) && (rc = refuse_from_file(a, from_ds, "training-args"))) return rc;
    static const char *const from_ddp[] = {"dp", "zero", "offload", NULL};
    if (!ds && !ta.deepspeed[0] && (rc = refuse_from_file(a, from_ddp, "training-args"))) return rc;
    pp_status st = pp_hf_strategy(&ta, ds, m, c, s, dso, warn, &err);
    return st == PP_OK ? 0 : cli_fail(st, &err);
}

static void note_unused_optimizer(pp_notes *n, const char *file)
{
    if (n->n < PP_NOTES_MAX)
        snprintf(n->line[n->n++], PP_NOTE_LEN, "%s: Megatron-DeepSpeed passes its own optimizer and scheduler to "
                 "DeepSpeed; the file's optimizer/scheduler blocks are not used (the --lr ... flags are)", file);
}

typedef struct emit_req {
    const char *ds_path, *mg_path;
    int force;
    pp_deepspeed_opts ds;
    pp_megatron_opts mg;
    pp_notes notes;
} emit_req;

/* Options of the emitters, then the strategy adapted to what the framework
 * runs and checked against what its files can say. */
static int prepare_emit(const cli_args *a, const pp_model *m, const pp_cluster *c, pp_strategy *s, emit_req *e)
{
    int rc;
    e->ds_path = cli_get(a, "emit-deepspeed");
    e->mg_path = cli_get(a, "emit-megatron");
    e->force = cli_has(a, "force");
    if ((rc = cli_hparams(a, &e->ds.hp))) return rc;
    const char *nv = cli_get(a, "nvme-path");
    if (nv) snprintf(e->ds.nvme_path, sizeof e->ds.nvme_path, "%s", nv);
    pp_megatron_opts_default(&e->mg);
    e->mg.hp = e->ds.hp;
    const char *ds_in = cli_get(a, "deepspeed");
    if (e->mg_path && (e->ds_path || ds_in)) { /* Megatron-DeepSpeed, with the written or the given JSON */
        e->mg.flavor = PP_MEGATRON_DEEPSPEED;
        snprintf(e->mg.deepspeed_config, sizeof e->mg.deepspeed_config, "%s", e->ds_path ? e->ds_path : ds_in);
        if (!e->ds_path && (!e->ds.client_optimizer || !e->ds.client_scheduler))
            note_unused_optimizer(&e->notes, ds_in);
        e->ds.client_optimizer = 1; /* Megatron-DeepSpeed passes its own optimizer and schedule */
        e->ds.client_scheduler = 1;
    }
    if (!e->ds_path && !e->mg_path) return 0;
    pp_error err = {""};
    pp_status st = pp_hparams_check(&e->ds.hp, "--lr, --min-lr, --warmup-steps, --train-steps, --adam-*", &err);
    if (st == PP_OK)
        st = e->mg_path ? pp_megatron_adapt(m, c, s, e->mg.flavor, &e->notes, &err)
                        : pp_deepspeed_adapt(m, c, s, &e->notes, &err);
    if (st == PP_OK && e->ds_path) st = pp_deepspeed_check(m, c, s, &e->ds, &err);
    if (st == PP_OK && e->mg_path) st = pp_megatron_check(m, c, s, &e->mg, &err);
    /* every destination checked before the (slow) estimate and any write */
    const char *paths[2] = {e->ds_path, e->mg_path};
    for (int i = 0; i < 2 && st == PP_OK; i++)
        if (paths[i]) st = pp_write_check(paths[i], e->force, &err);
    return st == PP_OK ? 0 : cli_fail(st, &err);
}

/* dir of ds_path + name, for the HF files written beside ds_config.json */
static void beside(const char *ds_path, const char *name, char *buf, size_t cap)
{
    const char *slash = strrchr(ds_path, '/');
    snprintf(buf, cap, "%.*s%s", slash ? (int)(slash - ds_path) + 1 : 0, ds_path, name);
}

/* Every requested file rendered first, then written as one set: all of them
 * or none (pp_write_files). */
static int write_emit(const pp_model *m, const pp_cluster *c, const pp_plan *p, emit_req *e)
{
    pp_error err = {""};
    pp_status st = PP_OK;
    char *text[4] = {NULL}, trainer[4096], adapter[4096];
    pp_out_file f[4];
    int n = 0;
    if (e->ds_path && (st = pp_deepspeed_to_string(m, c, p, &e->ds, &text[n], &e->notes, &err)) == PP_OK)
        f[n] = (pp_out_file){e->ds_path, text[n], strlen(text[n])}, n++;
    /* fine-tuning plans also get the HF Trainer config and the PEFT adapter config */
    if (st == PP_OK && e->ds_path && p->strategy.ft.mode != PP_MODE_FULL) {
        beside(e->ds_path, "ds_config_trainer.json", trainer, sizeof trainer);
        beside(e->ds_path, "adapter_config.json", adapter, sizeof adapter);
        if ((st = pp_hf_trainer_deepspeed_to_string(m, c, p, &e->ds, &text[n], &e->notes, &err)) == PP_OK)
            f[n] = (pp_out_file){trainer, text[n], strlen(text[n])}, n++;
        if (st == PP_OK && (st = pp_peft_config_to_string(m, p, &text[n], &err)) == PP_OK)
            f[n] = (pp_out_file){adapter, text[n], strlen(text[n])}, n++;
    }
    if (st == PP_OK && e->mg_path && (st = pp_megatron_args(m, c, p, &e->mg, &text[n], &e->notes, &err)) == PP_OK)
        f[n] = (pp_out_file){e->mg_path, text[n], strlen(text[n])}, n++;
    if (st == PP_OK && n) st = pp_write_files(f, n, e->force ? PP_WRITE_FORCE : 0, &err);
    for (int i = 0; i < 4; i++) pp_free(text[i]);
    return st == PP_OK ? 0 : cli_fail(st, &err);
}

/* --measured-step-s / --measured-tflops: fit this GPU's efficiencies to the
 * user's run (pp_calibrate), say what was fitted, and estimate with it. */
static int calibrate(const cli_args *a, const pp_model *m, pp_cluster *c, const pp_plan *p)
{
    double step, tflops;
    int rc;
    if ((rc = cli_num(a, "measured-step-s", 1e-6, 1e7, 0, &step)) ||
        (rc = cli_num(a, "measured-tflops", 1e-3, 1e5, 0, &tflops)))
        return rc;
    if (step > 0 && tflops > 0) {
        fprintf(stderr, "parplan: give --measured-step-s or --measured-tflops, not both\n");
        return 2;
    }
    if (tflops > 0) step = p->throughput.model_flops_per_step / (tflops * 1e12 * pp_cluster_gpus(c));
    if (step <= 0) return 0;
    pp_error err = {""};
    double mm = c->gpu.matmul_eff, at = c->gpu.attn_eff;
    pp_status st = pp_calibrate(m, c, &p->strategy, step, &err);
    if (st != PP_OK) { /* the measurement or the configuration is wrong: bad input, named */
        fprintf(stderr, "parplan: %s: %s\n", tflops > 0 ? "--measured-tflops" : "--measured-step-s", err.msg);
        return pp_status_exit_code(st);
    }
    fprintf(stderr, "parplan: calibrated %s to a %.4g s step: matmul efficiency %.3f (was %.3f), attention %.3f (was %.3f)\n"
                    "parplan: reuse it with \"efficiency\": {\"matmul\": %.3f, \"attention\": %.3f} in a GPU or cluster file\n",
            c->gpu.name, step, c->gpu.matmul_eff, mm, c->gpu.attn_eff, at, c->gpu.matmul_eff, c->gpu.attn_eff);
    return 0;
}

static int run(const cli_args *a)
{
    const char *fmt;
    pp_model m;
    pp_cluster c;
    pp_strategy s;
    int rc;
    if (a->npos) {
        fprintf(stderr, "parplan estimate: unexpected argument '%s'; options start with -- (see `parplan estimate --help`)\n", cli_q(a->pos[0]));
        return 2;
    }
    if ((rc = cli_format(a, "table|json", &fmt)) || (rc = cli_load_model(a, &m)) || (rc = cli_load_cluster(a, &c)) ||
        (rc = cli_strategy(a, &m, &c, &s)))
        return rc;
    emit_req *e = calloc(1, sizeof *e);
    pp_notes *warn = calloc(1, sizeof *warn);
    pp_plan *p = malloc(sizeof *p);
    if (!e || !warn || !p) {
        free(e);
        free(warn);
        free(p);
        return 3;
    }
    pp_deepspeed_opts_default(&e->ds);
    char sib[PP_TEXT_LEN * 2];
    const char *sibling = sibling_training_args(a, sib, sizeof sib);
    if (sibling && warn->n < PP_NOTES_MAX)
        snprintf(warn->line[warn->n++], PP_NOTE_LEN, "%.100s: read beside --deepspeed (its \"deepspeed\" names that "
                 "file): batch, gradient checkpointing and precision are the Trainer's; give --training-args or "
                 "Trainer flags to say otherwise", sibling);
    if ((cli_has(a, "megatron-args") && (rc = read_megatron(a, &m, &c, &s, warn))) ||
        ((cli_has(a, "fsdp-config") || cli_has(a, "training-args")) &&
         (rc = read_hf_fsdp(a, &m, &c, &s, &e->ds, warn, NULL))) ||
        (sibling && (rc = read_hf_fsdp(a, &m, &c, &s, &e->ds, warn, sibling))) ||
        (cli_has(a, "deepspeed") && !sibling && !cli_has(a, "fsdp-config") && !cli_has(a, "training-args") &&
         (rc = read_deepspeed(a, &m, &c, &s, &e->ds, warn))) ||
        (rc = prepare_emit(a, &m, &c, &s, e)))
        goto done;
    pp_error err = {""};
    pp_status st = pp_estimate(&m, &c, &s, p, &err);
    if (st == PP_OK && (rc = calibrate(a, &m, &c, p))) goto done;
    if (st == PP_OK && (cli_has(a, "measured-step-s") || cli_has(a, "measured-tflops")))
        st = pp_estimate(&m, &c, &s, p, &err);
    if (st != PP_OK) {
        rc = cli_fail(st, &err);
        goto done;
    }
    double tokens, price, tdp;
    if ((rc = cli_num(a, "train-tokens", 1, 1e16, 0, &tokens)) || (rc = cli_num(a, "price-per-gpu-hour", 0, 1e4, 0, &price)) ||
        (rc = cli_num(a, "tdp-w", 1, 1e5, 0, &tdp)))
        goto done;
    if (tokens > 0) pp_plan_train(&c, p, tokens, price, tdp);
    if ((rc = cli_report_estimate(a, &m, &c, p))) goto done;
    if ((e->ds_path || e->mg_path) && (rc = write_emit(&m, &c, p, e))) goto done;
    if ((rc = cli_emit_plans(a, &m, &c, p, 1, 0))) goto done;
    if (!strcmp(fmt, "json")) {
        char *j = pp_plan_to_json(&m, &c, p);
        if (j) printf("%s\n", j);
        pp_free(j);
        rc = j ? 0 : 3;
    } else {
        print_memory(&m, &c, p);
        print_time(p);
    }
    if (!p->memory.fits) { /* by how much, and what would fit (planner/explain.c, shared with plan) */
        char *advice = NULL;
        pp_error e2 = {""};
        if (pp_oom_advice(&m, &c, p, cli_has(a, "deepspeed") ? PP_ADVICE_DEEPSPEED : 0, &advice, &e2) == PP_OK) {
            FILE *to = strcmp(fmt, "json") ? stdout : stderr;
            fputc('\n', to);
            cli_print_text(to, advice);
        }
        pp_free(advice);
    }
    print_notes(warn, "warning");
    print_notes(&e->notes, "note");
    if (e->ds_path) fprintf(stderr, "parplan: wrote %s%s\n", e->ds_path,
                            p->strategy.ft.mode != PP_MODE_FULL ? " (and ds_config_trainer.json, adapter_config.json beside it)" : "");
    if (e->mg_path) fprintf(stderr, "parplan: wrote %s\n", e->mg_path);
    if (rc == 0 && cli_has(a, "fail-if-oom") && !p->memory.fits) {
        fprintf(stderr, "parplan: %s: peak %.2f GiB on stage %d of %.2f GiB usable%s%s (--fail-if-oom)\n",
                p->uncertainty.fit == PP_FIT_NO ? "does not fit"
                : p->memory.live_fits ? "tight, over the GPU with the allocator's fragmentation allowance"
                                      : "tight, its live tensors over the GPU but within the error bar",
                p->memory.peak_bytes / 1073741824.0, p->memory.peak_stage, p->memory.gpu_bytes / 1073741824.0,
                p->memory.host_fits ? "" : "; offloaded states exceed host memory",
                p->memory.nvme_fits ? "" : "; swapped states exceed the NVMe drives");
        rc = 1;
    }
done:
    free(e);
    free(warn);
    free(p);
    return rc;
}

const cli_cmd cli_cmd_estimate = {"estimate", "memory per stage (and step time) of one strategy",
    "  parplan estimate --model M --cluster C [--nodes N] --tp T --pp P [--dp D] [--cp C] [--ep E] [--sp]\n"
    "                   --zero Z --recompute none|selective|full --precision fp32|fp16|bf16|fp8\n"
    "                   --micro-batch B --global-batch G [--seq S] [--schedule 1f1b|interleaved|gpipe]\n"
    "                   [--virtual-stages V] [--offload none|optimizer|optimizer+params|nvme]\n"
    "                   [--stage-layers L1,L2,...] [--format table|json]\n"
    "                   [--deepspeed ds_config.json] [--emit-deepspeed FILE] [--emit-megatron FILE] [--force]\n"
    "                   [--megatron-args FILE] [--fsdp-config FILE] [--training-args FILE] [--emit DIR]",
    "  parplan estimate --model gpt3-175b --cluster dgx-a100-80g --nodes 128 --tp 8 --pp 16 \\\n"
    "                   --recompute selective --sp --micro-batch 1 --global-batch 1536\n"
    "  parplan estimate --model llama3-8b --cluster dgx-h100 --zero 3 --micro-batch 2 --format json\n"
    "  parplan estimate --model llama3-70b --cluster dgx-h100 --nodes 8 --tp 8 --zero 1 --global-batch 512 \\\n"
    "                   --emit-deepspeed ds_config.json --emit-megatron megatron_args.sh\n"
    "  parplan estimate --model llama3-8b --cluster dgx-h100 --deepspeed ds_config.json   # will my config OOM?\n"
    "  parplan estimate --model llama3-8b --cluster dgx-h100 --megatron-args megatron_args.sh   # read my arguments back",
    opts, run};
