#define _GNU_SOURCE /* qsort_r */
/* cmd_plan.c — `parplan plan`: search every strategy, print the top K. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const cli_opt opts[] = {
    {"framework", 1, "all (default) or a list of pytorch,deepspeed,megatron,megatron-deepspeed,fsdp: "
                     "each plan is priced as its framework runs it"},
    {"model", 1, "model preset or JSON file (native or HF config.json)"},
    {"cluster", 1, "cluster preset or JSON file"},
    {"nodes", 1, "number of nodes"},
    {"gpus", 1, "total GPUs (instead of --nodes)"},
    {"global-batch", 1, "sequences per optimizer step (required)"},
    {"seq", 1, "sequence length (default: the model's)"},
    {"top", 1, "plans to print, 1-1000 (default 3)"},
    {"objective", 1, "throughput|cost|memory (default throughput)"},
    {"train-tokens", 1, "report days, GPU-hours, cost and energy for T tokens"},
    {"price-per-gpu-hour", 1, "override the catalog price, $"},
    {"tdp-w", 1, "override the GPU board power, W"},
    {"format", 1, "table (default), json or csv (columns: docs/planner.md)"},
    {"explain", 0, "why #1 wins and why common alternatives lose"},
    CLI_REPORT_OPT,
    {"force", 0, "replace existing output files (--report, --emit)"},
    {"emit", 1, "write each plan's launch files into DIR/1, DIR/2, ... (its framework's files, README.txt, plan.json)"},
    {"nvme-path", 1, "NVMe mount for DeepSpeed NVMe offload in emitted files (default /local_nvme)"},
    CLI_HPARAM_OPTS,
    CLI_FINETUNE_OPTS,
    /* lora-rank here may be a list: one search per rank, merged */
    {"threads", 1, "search threads (default: all cores); the result is the same for any"},
    {"dp", 1, "restrict data parallelism, e.g. 8 or 4,8"},
    {"tp", 1, "restrict tensor parallelism, e.g. 8 or 2,4,8"},
    {"pp", 1, "restrict pipeline parallelism, e.g. 2,4"},
    {"cp", 1, "restrict context parallelism"},
    {"ep", 1, "restrict expert parallelism"},
    {"sp", 1, "sequence parallelism: 0, 1 or 0,1 (default both where tp > 1)"},
    {"zero", 1, "ZeRO stages, e.g. 1,2 (default 0-3)"},
    {"micro-batch", 1, "micro-batch sizes, e.g. 1,2 (default every divisor)"},
    {"virtual-stages", 1, "interleaved chunks per stage (default every valid)"},
    {"precision", 1, "fp32,fp16,bf16,fp8 or all (default bf16 + fp8 where supported)"},
    {"offload", 1, "none,optimizer,optimizer+params,nvme (default all)"},
    {"recompute", 1, "none,selective,full (default all)"},
    {"schedule", 1, "1f1b,interleaved,gpipe (default all)"},
    {"max-tp-per-node", 1, "largest TP degree (default: the NVLink domain)"},
    {"optimizer", 1, "adamw|adam8bit|adafactor|sgd (default adamw)"},
    {"attention", 1, "flash|materialised (default flash)"},
    {"cp-comm", 1, "context parallelism: ring, allgather or a2a (default: each framework's)"},
    {"loss", 1, "loss kernel: fp32, fused or chunked (default fp32)"},
    {"grad-accum", 1, "gradient accumulation: 16bit, fp32 or 16bit+fp32 (default: each framework's)"},
    {"optimizer-states", 1, "fp32 (default) or bf16 (megatron's precision-aware optimizer: plans of megatron with zero 1 only)"},
    {"fp8-param-gather", 1, "on|off: megatron fp8 plans with FP8 primary weights (default: on where Megatron can)"},
    {"recompute-modules", 1, "what selective recompute redoes, among core_attn, mlp, moe_act, layernorm, mla_up_proj "
                             "(megatron's --recompute-modules; default: each group the model has is tried)"},
    {"act-offload-layers", 1, "megatron, pp 1, no recompute: the first N blocks' activations go to host memory "
                              "(default 0)"},
    {"no-partition", 0, "keep the default even stage split (no ILP)"},
    {"no-stage-recompute", 0, "full recompute is uniform, not chosen per stage"},
    {"ilp-time-limit", 1, "safety net per stage-split ILP, s (default 10)"},
    {"ilp-budget", 1, "all stage-split ILPs together, s (default 5); then default splits; 0 = none"},
    {"reduce-bucket", 1, "DeepSpeed reduce_bucket_size, elements (default 5e8)"},
    {"allgather-bucket", 1, "DeepSpeed allgather_bucket_size, elements (default 5e8)"},
    {"cuda-context-gib", 1, "CUDA context and kernels per GPU, GiB (default 1.0)"},
    {"fragmentation", 1, "caching allocator's overhead, fraction (default 0.10)"},
    {"allocator", 1, "caching or expandable (default: expandable where the launch file sets it: megatron on NVIDIA)"},
    {"free-pipeline-outputs", 0, "stages free their outputs once sent (only frameworks that do: megatron)"},
    {"order", 1, "rank order, fastest first (default tp-cp-dp-pp)"},
    {"no-dp-overlap", 0, "DP/ZeRO communication does not overlap backward"},
    {"tp-overlap", 0, "TP communication overlapped with GEMMs"},
    {NULL, 0, NULL}};

/* "8" or "2,4,8" into s; values in [lo, hi]. */
static int int_list(const cli_args *a, const char *name, long lo, long hi, pp_int_set *s)
{
    const char *v = cli_get(a, name), *p = v;
    s->n = 0;
    if (!v) return 0;
    for (;;) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        double x;
        if (cli_parse_num(p, (size_t)(end - p), &x) || x < lo || x > hi || x != floor(x) || s->n >= PP_SET_MAX) {
            fprintf(stderr, "parplan: --%s: expected up to %d comma-separated integers in [%ld, %ld], got '%s'\n", name,
                    PP_SET_MAX, lo, hi, cli_q(v));
            return 2;
        }
        s->v[s->n++] = (int)x;
        if (!*end) return 0;
        p = end + 1;
    }
}


static int parse_objective(const cli_args *a, pp_objective *o)
{
    const char *v = cli_get(a, "objective");
    static const char *const names[PP_OBJ_COUNT] = {"throughput", "cost", "memory"};
    *o = PP_OBJ_THROUGHPUT;
    if (!v) return 0;
    for (int i = 0; i < PP_OBJ_COUNT; i++)
        if (!strcmp(v, names[i])) {
            *o = (pp_objective)i;
            return 0;
        }
    fprintf(stderr, "parplan: --objective: expected throughput, cost or memory, got '%s'\n", cli_q(v));
    return 2;
}

/* Options estimate also has that fix what is not searched. */
static int base_strategy(const cli_args *a, const pp_model *m, const pp_cluster *c, pp_strategy *s)
{
    static const char *const keep[] = {"optimizer", "optimizer-states", "recompute-modules", "fp8-param-gather", "attention", "cp-comm", "loss", "grad-accum", "act-offload-layers", "reduce-bucket", "allgather-bucket", "cuda-context-gib",
                                       "fragmentation", "allocator", "free-pipeline-outputs", "order", "no-dp-overlap", "tp-overlap", "mode", "lora-alpha",
                                       "lora-dropout", "lora-targets", "freeze"};
    cli_args f;
    memset(&f, 0, sizeof f);
    for (int i = 0; i < a->n; i++)
        for (size_t k = 0; k < sizeof keep / sizeof *keep; k++)
            if (!strcmp(a->keys[i], keep[k])) {
                f.keys[f.n] = a->keys[i];
                f.vals[f.n++] = a->vals[i];
            }
    return cli_strategy(&f, m, c, s);
}

static int search_opts(const cli_args *a, const pp_model *m, const pp_cluster *c, pp_search_opts *o)
{
    int rc;
    pp_search_opts_default(o);
    if ((rc = base_strategy(a, m, c, &o->base))) return rc;
    if (!cli_has(a, "global-batch")) {
        fprintf(stderr, "parplan: --global-batch: expected the sequences per optimizer step, e.g. --global-batch 512\n");
        return 2;
    }
    if ((rc = cli_int(a, "global-batch", 1, 1 << 26, 0, &o->global_batch)) || (rc = cli_int(a, "seq", 1, 1 << 24, 0, &o->seq)) ||
        (rc = cli_int(a, "top", 1, PP_TOP_MAX, 3, &o->top_k)) || (rc = cli_int(a, "threads", 1, 4096, 0, &o->threads)) ||
        (rc = cli_int(a, "max-tp-per-node", 1, 1 << 16, 0, &o->max_tp_per_node)) ||
        (rc = cli_num(a, "ilp-time-limit", 0.001, 3600, 10, &o->ilp_time_limit_s)) ||
        (rc = cli_num(a, "ilp-budget", 0, 86400, 5, &o->ilp_budget_s)) ||
        (rc = cli_num(a, "price-per-gpu-hour", 0, 1e4, 0, &o->price_usd_per_gpu_hour)) || (rc = parse_objective(a, &o->objective)))
        return rc;
    if ((rc = int_list(a, "dp", 1, 1 << 24, &o->dp)) || (rc = int_list(a, "tp", 1, 1 << 16, &o->tp)) ||
        (rc = int_list(a, "pp", 1, PP_MAX_STAGES, &o->pp)) || (rc = int_list(a, "cp", 1, 1 << 20, &o->cp)) ||
        (rc = int_list(a, "ep", 1, 1 << 16, &o->ep)) || (rc = int_list(a, "sp", 0, 1, &o->sp)) ||
        (rc = int_list(a, "zero", 0, 3, &o->zero)) || (rc = int_list(a, "micro-batch", 1, 1 << 20, &o->micro_batch)) ||
        (rc = int_list(a, "virtual-stages", 2, PP_MAX_LAYERS, &o->virtual_stages)))
        return rc;
    if ((rc = cli_enum_list(a, "precision", PP_ENUM_PRECISION, &o->precisions)) ||
        (rc = cli_enum_list(a, "offload", PP_ENUM_OFFLOAD, &o->offloads)) ||
        (rc = cli_enum_list(a, "recompute", PP_ENUM_RECOMPUTE, &o->recomputes)) ||
        (rc = cli_enum_list(a, "schedule", PP_ENUM_SCHEDULE, &o->schedules)) ||
        (rc = cli_enum_list(a, "framework", PP_ENUM_FRAMEWORK, &o->frameworks)))
        return rc;
    o->stage_partition = !cli_has(a, "no-partition");
    o->stage_recompute = !cli_has(a, "no-stage-recompute");
    return 0;
}

/* ------------------------------------------------------------ output */

static double gib(double b) { return b / 1073741824.0; }

static const char *prec_name(pp_precision p)
{
    int n;
    return pp_enum_names(PP_ENUM_PRECISION, &n)[p];
}

static void print_stages(const pp_plan *p)
{
    const pp_strategy *s = &p->strategy;
    printf("    stages   ");
    for (int i = 0, first = 0; i < s->pp; first += s->stage_layers[i], i++) {
        int k = s->recompute != PP_RECOMPUTE_FULL ? 0
              : s->per_stage_recompute ? s->stage_recompute[i]
              : s->recompute_layers < 0 || s->recompute_layers > s->stage_layers[i] ? s->stage_layers[i] : s->recompute_layers;
        char ranges[64];
        pp_stage_blocks_text(s, i, ranges, sizeof ranges);
        printf("%s%s", i ? " | " : "", ranges);
        if (k) printf(" (r%d)", k);
        if (i == 7 && s->pp > 10) {
            printf(" | ... (%d stages)", s->pp);
            break;
        }
    }
    printf("\n");
}

static void print_time(const pp_plan *p)
{
    const pp_time *t = &p->time;
    struct { const char *name; double v; } rows[] = {
        {"compute", t->compute_s}, {"recompute", t->recompute_s}, {"TP", t->tp_comm_s}, {"CP", t->cp_comm_s},
        {"EP", t->ep_comm_s}, {"PP", t->pp_comm_s}, {"DP/ZeRO", t->dp_comm_exposed_s}, {"bubble", t->bubble_s},
        {"optimizer", t->optimizer_s}, {"offload", t->offload_s}};
    printf("    time    ");
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        if (rows[i].v > 0) printf(" %s %.3f s (%.0f%%)", rows[i].name, rows[i].v, 100 * rows[i].v / t->step_s);
    if (t->expert_host_s > 0) printf("; of compute and recompute, expert launches %.3f s", t->expert_host_s);
    printf("\n");
}

static void print_plan(int rank, const pp_plan *p)
{
    const pp_strategy *s = &p->strategy;
    const pp_uncertainty *u = &p->uncertainty;
    printf("#%d  %.0f tokens/s  MFU %.1f%%  step %.3f s  peak %.2f GiB (stage %d)  %s\n", rank, p->throughput.tokens_per_s,
           100 * p->throughput.mfu, p->time.step_s, gib(p->memory.peak_bytes), p->memory.peak_stage, pp_fit_name(u->fit));
    printf("    strategy %s (%s): dp %d, tp %d%s, pp %d, cp %d, ep %d%s, ZeRO-%d%s, offload %s, %s, recompute %s%s, micro-batch %d x %d, %s",
           pp_framework_name(s->framework), pp_strategy_launcher(s), s->dp, s->tp, s->sp ? " +sp" : "", s->pp, s->cp, s->ep, cli_etp(s), s->zero,
           s->shard && s->shard < s->dp * s->cp ? " (hybrid)" : "", pp_offload_name(s->offload),
           prec_name(s->precision), pp_recompute_name(s->recompute), cli_extras(s), s->micro_batch, s->grad_accum,
           pp_schedule_name(s->schedule));
    if (s->schedule == PP_SCHED_INTERLEAVED) printf(" v%d", s->virtual_stages);
    if (s->buf.expandable_segments > 0) printf(", expandable segments");
    printf("\n");
    if (s->ft.mode != PP_MODE_FULL || p->params_trainable < p->params_total)
        printf("    training %s%s r=%d, %.4g M of %.4g B parameters trainable (%.3f%%)\n",
               s->ft.mode == PP_MODE_QLORA ? "QLoRA" : s->ft.mode == PP_MODE_LORA ? "LoRA" : "partly frozen", "",
               s->ft.lora_rank, p->params_trainable / 1e6, p->params_total / 1e9,
               100 * p->params_trainable / p->params_total);
    print_stages(p);
    print_time(p);
    if (u->step_s.rows || u->peak_bytes.rows)
        printf("    %.0f%%     step %.3f-%.3f s (%d runs: %s), peak %.2f-%.2f GiB (%d runs: %s)\n", 100 * u->level,
               u->step_s.lo, u->step_s.hi, u->step_s.rows, u->step_s.group, gib(u->peak_bytes.lo), gib(u->peak_bytes.hi),
               u->peak_bytes.rows, u->peak_bytes.group);
    if (u->notes[0]) printf("    not validated: %s\n", u->notes);
    if (p->train.tokens > 0)
        printf("    train    %.3g tokens: %.1f days, %.0f GPU-hours, $%.0f, %.0f kWh\n", p->train.tokens, p->train.days,
               p->train.gpu_hours, p->train.cost_usd, p->train.energy_kwh);
}

static void print_table(const pp_model *m, const pp_cluster *c, const pp_search_opts *o, const pp_plan_list *l)
{
    const pp_search_stats *st = &l->stats;
    printf("%s on %d x %s (%s), global batch %d, seq %d\n", cli_safe(m->name), pp_cluster_gpus(c), cli_safe(c->gpu.name), cli_safe(c->name),
           o->global_batch, o->seq ? o->seq : m->seq);
    printf("searched %lld valid strategies: %lld over memory by bound, %lld beyond the top %d by bound, %lld costed "
           "(%lld fit), %d stage-split ILPs",
           st->enumerated, st->pruned_memory, st->pruned_bound, o->top_k, st->costed, st->fitting, st->ilp_solved);
    if (st->ilp_budget_skipped)
        printf(", %d kept the default split (ILP budget of %g s spent)", st->ilp_budget_skipped, o->ilp_budget_s);
    if (st->ilp_time_limit_hits) printf(", %d stopped at the %g s limit", st->ilp_time_limit_hits, o->ilp_time_limit_s);
    printf("\n\n");
    for (int i = 0; i < l->n; i++) {
        print_plan(i + 1, &l->plans[i]);
        printf("\n");
    }
}

static int print_json(const pp_model *m, const pp_cluster *c, const pp_plan_list *l, const char *explain)
{
    static const char *const obj[PP_OBJ_COUNT] = {"throughput", "cost", "memory"};
    const pp_search_stats *st = &l->stats;
    printf("{\n\"schema_version\": %d,\n\"objective\": \"%s\",\n\"plans\": [", PP_SCHEMA_VERSION, obj[l->objective]);
    for (int i = 0; i < l->n; i++) {
        char *j = pp_plan_to_json(m, c, &l->plans[i]);
        if (!j) return 3;
        printf("%s\n%s", i ? "," : "", j);
        pp_free(j);
    }
    /* per-stage recompute counts chosen by the ILP: the plan object has no
     * field for them yet, so they ride alongside, one entry per plan */
    printf("],\n\"stage_recompute\": [");
    for (int i = 0; i < l->n; i++) {
        const pp_strategy *s = &l->plans[i].strategy;
        if (s->recompute != PP_RECOMPUTE_FULL || !s->per_stage_recompute) {
            printf("%snull", i ? ", " : "");
            continue;
        }
        for (int k = 0; k < s->pp; k++) printf("%s%d", k ? ", " : i ? ", [" : "[", s->stage_recompute[k]);
        printf("]");
    }
    printf("],\n\"search\": {\"enumerated\": %lld, \"pruned_memory\": %lld, \"pruned_bound\": %lld, \"costed\": %lld, "
           "\"fitting\": %lld, \"probes\": %d, \"ilp_considered\": %d, \"ilp_bounded\": %d, \"ilp_solved\": %d, "
           "\"ilp_cache_hits\": %d, \"ilp_improved\": %d, \"ilp_time_limit_hits\": %d, \"ilp_fallbacks\": %d, "
           "\"ilp_budget_skipped\": %d}",
           st->enumerated, st->pruned_memory, st->pruned_bound, st->costed, st->fitting, st->probes, st->ilp_considered,
           st->ilp_bounded, st->ilp_solved, st->ilp_cache_hits, st->ilp_improved, st->ilp_time_limit_hits,
           st->ilp_fallbacks, st->ilp_budget_skipped);
    if (explain) {
        printf(",\n\"explain\": \"");
        for (const char *p = explain; *p; p++) {
            if (*p == '"' || *p == '\\') printf("\\%c", *p);
            else if (*p == '\n') printf("\\n");
            else if ((unsigned char)*p >= 0x20) putchar(*p);
        }
        printf("\"");
    }
    printf("\n}\n");
    return 0;
}

static void join(char *buf, size_t cap, const int *v, int n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && k + 12 < cap; i++) k += (size_t)snprintf(buf + k, cap - k, "%s%d", i ? ";" : "", v[i]);
}

static void print_csv(const pp_model *m, const pp_cluster *c, const pp_plan_list *l)
{
    /* columns are only added at the end, so earlier ones keep their places */
    printf("rank,framework,model,cluster,gpus,dp,tp,pp,cp,ep,sp,zero,shard,offload,recompute,precision,"
           "micro_batch,grad_accum,"
           "global_batch,seq,schedule,virtual_stages,stage_layers,stage_recompute,peak_bytes,peak_stage,step_s,"
           "compute_s,recompute_s,tp_comm_s,cp_comm_s,ep_comm_s,pp_comm_s,dp_comm_exposed_s,bubble_s,optimizer_s,"
           "offload_s,tokens_per_s,model_tflops_per_gpu,mfu,train_days,train_cost_usd,train_energy_kwh,etp,ep_dispatch,"
           "overlap_ep,expandable_segments,opt_states,recompute_modules,fp8_param_gather,act_offload_layers,expert_host_s,"
           "launcher\n");
    for (int i = 0; i < l->n; i++) {
        const pp_plan *p = &l->plans[i];
        const pp_strategy *s = &p->strategy;
        const pp_time *t = &p->time;
        char lay[4 * PP_MAX_STAGES + 8], rc[4 * PP_MAX_STAGES + 8];
        int rcv[PP_MAX_STAGES];
        for (int k = 0; k < s->pp; k++)
            rcv[k] = s->recompute != PP_RECOMPUTE_FULL ? 0
                   : s->per_stage_recompute ? s->stage_recompute[k]
                   : s->recompute_layers < 0 || s->recompute_layers > s->stage_layers[k] ? s->stage_layers[k] : s->recompute_layers;
        join(lay, sizeof lay, s->stage_layers, s->pp);
        join(rc, sizeof rc, rcv, s->pp);
        char mods[96];
        pp_rc_modules_format(s->recompute_modules, ' ', mods, sizeof mods);
        printf("%d,%s,%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s,%s,%s,%d,%d,%d,%d,%s,%d,%s,%s,%.0f,%d,%.9g,%.9g,%.9g,%.9g,%.9g,"
               "%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d,%s,%d,%d,%s,%s,%d,%d,%.9g,%s\n",
               i + 1, pp_framework_name(s->framework), cli_csv(m->name), cli_csv(c->name), pp_cluster_gpus(c), s->dp,
               s->tp, s->pp, s->cp, s->ep, s->sp, s->zero, s->shard,
               pp_offload_name(s->offload), pp_recompute_name(s->recompute),
               prec_name(s->precision), s->micro_batch,
               s->grad_accum, s->global_batch, s->seq, pp_schedule_name(s->schedule), s->virtual_stages, lay, rc,
               p->memory.peak_bytes, p->memory.peak_stage, t->step_s, t->compute_s, t->recompute_s, t->tp_comm_s,
               t->cp_comm_s, t->ep_comm_s, t->pp_comm_s, t->dp_comm_exposed_s, t->bubble_s, t->optimizer_s,
               t->offload_s, p->throughput.tokens_per_s, p->throughput.model_tflops_per_gpu, p->throughput.mfu,
               p->train.days, p->train.cost_usd, p->train.energy_kwh, s->etp > 0 ? s->etp : s->tp,
               s->ep_dispatch ? "hierarchical" : "alltoall", s->overlap_ep, s->buf.expandable_segments > 0,
               pp_enum_names(PP_ENUM_OPT_STATES, &(int){0})[s->opt_states], mods,
               s->precision == PP_PREC_FP8 && s->fp8_param_gather > 0, s->act_offload_layers, t->expert_host_s,
               pp_strategy_launcher(s));
    }
}

/* Nothing fits: the report on stdout, the one-line reason on stderr. */
static int infeasible(const pp_model *m, const pp_cluster *c, const pp_search_opts *o, const pp_plan_list *l,
                      const char *fmt, const pp_error *err)
{
    char *text = NULL;
    pp_error e2 = {""};
    pp_plan_why_infeasible(m, c, o, l, &text, &e2);
    if (!strcmp(fmt, "json")) {
        printf("{\n\"schema_version\": %d,\n\"plans\": [],\n\"error\": \"", PP_SCHEMA_VERSION);
        for (const char *p = err->msg; *p; p++)
            if ((unsigned char)*p >= 0x20) printf(*p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
        printf("\"");
        if (l->nearest) {
            char *j = pp_plan_to_json(m, c, l->nearest);
            if (j) printf(",\n\"nearest\": %s", j);
            pp_free(j);
        }
        printf("\n}\n");
    }
    if (text) cli_print_text(strcmp(fmt, "table") ? stderr : stdout, text);
    pp_free(text);
    return cli_fail(PP_ERR_INFEASIBLE, err);
}

/* --lora-rank 8,16,64: one search per rank, merged by the objective. */
static int parse_ranks(const cli_args *a, int *ranks, int *n)
{
    const char *v = cli_get(a, "lora-rank");
    *n = 0;
    if (!v) return 0;
    for (const char *p = v; *p && *n < 16;) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        double r;
        if (cli_parse_num(p, (size_t)(end - p), &r) || r < 1 || r > 4096 || r != floor(r)) {
            fprintf(stderr, "parplan: --lora-rank: expected ranks in [1, 4096], comma-separated, got '%s'\n", cli_q(v));
            return 2;
        }
        ranks[(*n)++] = (int)r;
        p = *end ? end + 1 : end;
    }
    return 0;
}

static int cmp_plan_obj(const void *x, const void *y, void *ctx);

typedef struct obj_ctx {
    const pp_cluster *c;
    const pp_search_opts *o;
} obj_ctx;

static pp_status search_ranks(const pp_model *m, const pp_cluster *c, pp_search_opts *o, const int *ranks, int nr,
                              pp_plan_list *out, pp_error *err)
{
    if (nr <= 1) {
        if (nr == 1) o->base.ft.lora_rank = ranks[0];
        return pp_plan_search(m, c, o, out, err);
    }
    pp_plan *all = NULL;
    int n = 0;
    pp_status last = PP_ERR_INFEASIBLE;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < nr; i++) {
        pp_plan_list l;
        o->base.ft.lora_rank = ranks[i];
        pp_status st = pp_plan_search(m, c, o, &l, err);
        if (st == PP_OK && l.n > 0) {
            pp_plan *grown = realloc(all, (size_t)(n + l.n) * sizeof *all);
            if (!grown) {
                pp_plan_list_free(&l);
                free(all);
                return PP_ERR_NOMEM;
            }
            all = grown;
            memcpy(all + n, l.plans, (size_t)l.n * sizeof *all);
            n += l.n;
            last = PP_OK;
            if (!out->plans) *out = l, out->plans = NULL, out->nearest = NULL, out->n = 0;
        } else if (st != PP_OK && st != PP_ERR_INFEASIBLE) {
            free(all);
            return st;
        }
        pp_plan_list_free(&l);
    }
    if (last != PP_OK) return pp_plan_search(m, c, o, out, err); /* report the last rank's infeasibility */
    obj_ctx ctx = {c, o};
    qsort_r(all, (size_t)n, sizeof *all, cmp_plan_obj, &ctx); /* stable enough: ties keep rank order rarely */
    out->plans = all;
    out->n = n < o->top_k ? n : o->top_k;
    return PP_OK;
}

static int cmp_plan_obj(const void *x, const void *y, void *ctx)
{
    const obj_ctx *k = ctx;
    double a = pp_plan_objective(k->c, x, k->o->objective, k->o->price_usd_per_gpu_hour);
    double b = pp_plan_objective(k->c, y, k->o->objective, k->o->price_usd_per_gpu_hour);
    if (a != b) return a < b ? -1 : 1;
    return ((const pp_plan *)x)->strategy.ft.lora_rank - ((const pp_plan *)y)->strategy.ft.lora_rank;
}

static int run(const cli_args *a)
{
    const char *fmt;
    pp_model m;
    pp_cluster c;
    pp_search_opts o;
    int rc;
    double tokens, price, tdp;
    if ((rc = cli_format(a, "table|json|csv", &fmt)) || (rc = cli_load_model(a, &m)) || (rc = cli_load_cluster(a, &c)) ||
        (rc = search_opts(a, &m, &c, &o)) || (rc = cli_num(a, "train-tokens", 1, 1e16, 0, &tokens)) ||
        (rc = cli_num(a, "price-per-gpu-hour", 0, 1e4, 0, &price)) || (rc = cli_num(a, "tdp-w", 1, 1e5, 0, &tdp)))
        return rc;
    int ranks[16], nr;
    if ((rc = parse_ranks(a, ranks, &nr))) return rc;
    if (nr && o.base.ft.mode == PP_MODE_FULL) {
        fprintf(stderr, "parplan: --lora-rank needs --mode lora or qlora\n");
        return 2;
    }
    pp_plan_list l;
    pp_error err = {""};
    pp_status st = search_ranks(&m, &c, &o, ranks, nr, &l, &err);
    if (st == PP_ERR_INFEASIBLE) rc = infeasible(&m, &c, &o, &l, fmt, &err);
    else if (st != PP_OK) rc = cli_fail(st, &err);
    if (st != PP_OK) {
        pp_plan_list_free(&l);
        return rc;
    }
    for (int i = 0; tokens > 0 && i < l.n; i++) pp_plan_train(&c, &l.plans[i], tokens, price, tdp);
    char *why = NULL;
    if (cli_has(a, "explain") && (st = pp_plan_explain(&m, &c, &o, &l, &why, &err)) != PP_OK) {
        pp_plan_list_free(&l);
        return cli_fail(st, &err);
    }
    if ((rc = cli_report_plan(a, &m, &c, &o, &l, why)) || (rc = cli_emit_plans(a, &m, &c, l.plans, l.n, 1))) {
        pp_free(why);
        pp_plan_list_free(&l);
        return rc;
    }
    if (!strcmp(fmt, "json")) rc = print_json(&m, &c, &l, why);
    else if (!strcmp(fmt, "csv")) print_csv(&m, &c, &l);
    else print_table(&m, &c, &o, &l);
    if (why && strcmp(fmt, "json")) {
        fprintf(strcmp(fmt, "csv") ? stdout : stderr, "Why:\n");
        cli_print_text(strcmp(fmt, "csv") ? stdout : stderr, why);
    }
    pp_free(why);
    pp_plan_list_free(&l);
    return rc;
}

const cli_cmd cli_cmd_plan = {"plan", "search every parallel strategy and print the best plans",
    "  parplan plan --model M --cluster C [--nodes N | --gpus N] --global-batch G [--seq S] [--top K]\n"
    "               [--objective throughput|cost|memory] [--train-tokens T] [--format table|json|csv]\n"
    "               [--explain] [--threads N] [--tp 8] [--pp 2,4] [--zero 1,2] [--precision bf16] ...",
    "  parplan plan --model llama3-8b --cluster dgx-h100 --global-batch 512 --seq 8192 --top 3\n"
    "  parplan plan --model gpt3-175b --cluster dgx-a100-80g --nodes 128 --global-batch 1536 --explain\n"
    "  parplan plan --model llama3-70b --cluster dgx-h100 --nodes 8 --global-batch 1024 --tp 8 --zero 1 --format json\n"
    "  parplan plan --model llama3-70b --cluster dgx-a100-40g --gpus 4 --mode lora --lora-rank 8,16,64 --global-batch 16",
    opts, run};
