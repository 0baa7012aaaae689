/*
 * request.c — the estimate request (one strategy as JSON in, the plan object
 * of `parplan estimate --format json` out) and pp_error_field, which reads
 * the field an error message names. Keys and defaults follow the estimate
 * command's flags (cli/cmd_estimate.c), so a script gets the CLI's numbers.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/configs.h"

static const char *const estimate_keys[] = {
    "model", "cluster", "nodes", "gpus", "dp", "tp", "pp", "cp", "ep", "etp", "sp", "zero", "micro_batch", "global_batch",
    "seq", "recompute", "recompute_layers", "precision", "schedule", "virtual_stages", "offload", "stage_layers",
    "chunk_layers", "vp_group",
    "reduce_bucket", "allgather_bucket", "cuda_context_gib", "fragmentation", "order", "dp_overlap", "tp_overlap",
    "ep_overlap", "ep_dispatch",
    "train_tokens", "price_per_gpu_hour", "tdp_w", "framework", "shard",
    /* read by pp__scenario_read_base, as in a scenario */
    "optimizer", "attention", "cp_comm", "loss", "free_pipeline_outputs", "expandable_segments", "grad_accum_dtype",
    "act_offload_layers", "opt_states", "recompute_modules", "fp8_param_gather", "mode", "lora_rank",
    "lora_alpha", "lora_dropout", "lora_targets", "freeze_embeddings", "freeze_layers", NULL};

typedef struct est_req {
    char model[PP_TEXT_LEN], cluster[PP_TEXT_LEN];
    int nodes, gpus;
    double train_tokens, price, tdp_w;
} est_req;

static int read_one_enum(jr_ctx *c, const cJSON *o, const char *key, int which, int *out)
{
    int n;
    const char *const *names = pp_enum_names(which, &n);
    return jr_enum(c, o, "$", key, 0, names, n, out);
}

/* "stage_layers": a list of block counts, one per stage, or "deepspeed" /
 * "deepspeed+embedding" (DeepSpeed's partition_method split). */
static void read_stage_layers(jr_ctx *c, const cJSON *o, const pp_model *m, pp_strategy *s)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "stage_layers");
    if (!v || c->st != PP_OK) return;
    if (cJSON_IsString(v) && (!strcmp(v->valuestring, "deepspeed") || !strcmp(v->valuestring, "deepspeed+embedding"))) {
        pp_error e = {""};
        if (pp_split_deepspeed(m, s, v->valuestring[9] == '+', s->stage_layers, &e) != PP_OK)
            jr_fail(c, "$", "stage_layers", "%s", e.msg);
        return;
    }
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (n != s->pp) {
        jr_fail(c, "$", "stage_layers", "expected a list of %d block counts (one per pp stage), or \"deepspeed\"", s->pp);
        return;
    }
    int i = 0;
    for (const cJSON *it = v->child; it; it = it->next, i++) {
        if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble > PP_MAX_LAYERS ||
            it->valuedouble != (int)it->valuedouble) {
            jr_fail(c, "$.stage_layers", NULL, "[%d]: expected a block count in [0, %d]", i, PP_MAX_LAYERS);
            return;
        }
        s->stage_layers[i] = (int)it->valuedouble;
    }
}

/* "chunk_layers": with the interleaved schedule, the blocks of each of the
 * pp x v virtual stages in Megatron's layout order (chunk k / pp of stage
 * k % pp); the stages' counts follow from them. */
static void read_chunk_layers(jr_ctx *c, const cJSON *o, pp_strategy *s)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "chunk_layers");
    if (!v || c->st != PP_OK) return;
    long pv = (long)s->pp * s->virtual_stages;
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (s->schedule != PP_SCHED_INTERLEAVED || pv > PP_MAX_CHUNKS || n != pv) {
        jr_fail(c, "$", "chunk_layers", "expected, with the interleaved schedule, a list of pp x virtual_stages = %ld "
                "block counts (at most %d)", pv, PP_MAX_CHUNKS);
        return;
    }
    int k = 0, stages[PP_MAX_STAGES] = {0};
    for (const cJSON *it = v->child; it; it = it->next, k++) {
        if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble > PP_MAX_LAYERS ||
            it->valuedouble != (int)it->valuedouble) {
            jr_fail(c, "$.chunk_layers", NULL, "[%d]: expected a block count in [0, %d]", k, PP_MAX_LAYERS);
            return;
        }
        s->chunk_layers[k] = (unsigned short)it->valuedouble;
        stages[k % s->pp] += s->chunk_layers[k];
    }
    for (int i = 0; i < s->pp; i++)
        if (cJSON_GetObjectItemCaseSensitive(o, "stage_layers") && stages[i] != s->stage_layers[i]) {
            jr_fail(c, "$", "chunk_layers", "stage %d's chunks hold %d blocks, stage_layers says %d", i, stages[i],
                    s->stage_layers[i]);
            return;
        }
    memcpy(s->stage_layers, stages, sizeof stages);
}

static void read_buffers(jr_ctx *c, const cJSON *o, pp_buffers *b)
{
    double gib = b->cuda_context / PP_GIB;
    jr_num(c, o, "$", "reduce_bucket", 0, 1, 1e12, &b->reduce_bucket);
    jr_num(c, o, "$", "allgather_bucket", 0, 1, 1e12, &b->allgather_bucket);
    jr_num(c, o, "$", "fragmentation", 0, 0, 1, &b->fragmentation);
    if (jr_num(c, o, "$", "cuda_context_gib", 0, 0, 64, &gib)) b->cuda_context = gib * PP_GIB;
}

/* The strategy keys, with `parplan estimate`'s defaults (cli_strategy). */
static void read_strategy(jr_ctx *c, const cJSON *o, const pp_model *m, const pp_cluster *cl, pp_strategy *s)
{
    int dp = 0;
    pp_strategy_default(s);
    jr_int(c, o, "$", "tp", 0, 1, 1 << 16, &s->tp);
    jr_int(c, o, "$", "pp", 0, 1, PP_MAX_STAGES, &s->pp);
    jr_int(c, o, "$", "cp", 0, 1, 1 << 16, &s->cp);
    jr_int(c, o, "$", "ep", 0, 1, 1 << 16, &s->ep);
    jr_int(c, o, "$", "etp", 0, 1, 1 << 16, &s->etp);
    jr_int(c, o, "$", "dp", 0, 1, 1 << 24, &dp);
    jr_int(c, o, "$", "zero", 0, 0, 3, &s->zero);
    jr_int(c, o, "$", "micro_batch", 0, 1, 1 << 20, &s->micro_batch);
    s->seq = m->seq;
    jr_int(c, o, "$", "seq", 0, 1, 1 << 24, &s->seq);
    jr_int(c, o, "$", "recompute_layers", 0, 0, PP_MAX_LAYERS, &s->recompute_layers);
    int e;
    if (read_one_enum(c, o, "precision", PP_ENUM_PRECISION, &e)) s->precision = (pp_precision)e;
    if (read_one_enum(c, o, "recompute", PP_ENUM_RECOMPUTE, &e)) s->recompute = (pp_recompute)e;
    if (read_one_enum(c, o, "schedule", PP_ENUM_SCHEDULE, &e)) s->schedule = (pp_schedule)e;
    if (read_one_enum(c, o, "offload", PP_ENUM_OFFLOAD, &e)) s->offload = (pp_offload)e;
    if (cJSON_IsString(cJSON_GetObjectItem(o, "framework")) && !strcmp(cJSON_GetObjectItem(o, "framework")->valuestring, "auto"))
        s->framework = PP_FW_AUTO;
    else if (read_one_enum(c, o, "framework", PP_ENUM_FRAMEWORK, &e)) s->framework = (pp_framework)e;
    jr_int(c, o, "$", "shard", 0, 0, 1 << 20, &s->shard);
    pp__scenario_read_base(c, o, "$", s);
    if (c->st == PP_OK && s->ft.mode == PP_MODE_FULL &&
        (cJSON_HasObjectItem(o, "lora_rank") || cJSON_HasObjectItem(o, "lora_targets")))
        jr_fail(c, "$", cJSON_HasObjectItem(o, "lora_rank") ? "lora_rank" : "lora_targets",
                "needs \"mode\": \"lora\" or \"qlora\"");
    read_buffers(c, o, &s->buf);
    jr_bool(c, o, "$", "sp", 0, &s->sp);
    jr_bool(c, o, "$", "dp_overlap", 0, &s->overlap_dp);
    jr_bool(c, o, "$", "tp_overlap", 0, &s->overlap_tp);
    jr_bool(c, o, "$", "ep_overlap", 0, &s->overlap_ep);
    static const char *const dispatch[] = {"alltoall", "hierarchical"};
    int ed;
    if (jr_enum(c, o, "$", "ep_dispatch", 0, dispatch, 2, &ed)) s->ep_dispatch = ed;
    jr_str(c, o, "$", "order", 0, s->order, sizeof s->order);
    long rest = (long)s->tp * s->pp * s->cp;
    s->dp = dp ? dp : (int)(pp_cluster_gpus(cl) / rest > 0 ? pp_cluster_gpus(cl) / rest : 1);
    s->virtual_stages = s->schedule == PP_SCHED_INTERLEAVED ? 2 : 1;
    jr_int(c, o, "$", "virtual_stages", 0, 1, 64, &s->virtual_stages);
    jr_int(c, o, "$", "vp_group", 0, 1, 1 << 24, &s->vp_group);
    s->global_batch = s->micro_batch * s->dp;
    jr_int(c, o, "$", "global_batch", 0, 1, 1 << 26, &s->global_batch);
    read_stage_layers(c, o, m, s);
    read_chunk_layers(c, o, s);
}

static void read_request(jr_ctx *c, const cJSON *o, est_req *r)
{
    memset(r, 0, sizeof *r);
    if (!cJSON_IsObject(o)) {
        jr_fail(c, "$", NULL, "expected an estimate request object");
        return;
    }
    jr_check_keys(c, o, "$", estimate_keys);
    jr_str(c, o, "$", "model", 1, r->model, sizeof r->model);
    jr_str(c, o, "$", "cluster", 1, r->cluster, sizeof r->cluster);
    jr_int(c, o, "$", "nodes", 0, 1, 1 << 20, &r->nodes);
    jr_int(c, o, "$", "gpus", 0, 1, 1 << 24, &r->gpus);
    jr_num(c, o, "$", "train_tokens", 0, 1, 1e16, &r->train_tokens);
    jr_num(c, o, "$", "price_per_gpu_hour", 0, 0, 1e4, &r->price);
    jr_num(c, o, "$", "tdp_w", 0, 1, 1e5, &r->tdp_w);
}

/* Loads, reads the strategy and estimates; "plan" or "error" into out. */
static pp_status estimate(const cJSON *o, cJSON *out)
{
    pp_error err = {""};
    jr_ctx c = {"request", &err, PP_OK};
    est_req r;
    const char *field = NULL;
    pp_model *m = malloc(sizeof *m);
    pp_cluster *cl = malloc(sizeof *cl);
    pp_strategy *s = malloc(sizeof *s);
    pp_plan *p = malloc(sizeof *p);
    pp_status st = m && cl && s && p ? PP_OK : PP_ERR_NOMEM;
    if (st == PP_OK) read_request(&c, o, &r), st = c.st;
    if (st == PP_OK && (st = pp_model_load(r.model, m, &err)) != PP_OK) field = "$.model";
    if (st == PP_OK && (st = pp_cluster_load(r.cluster, cl, &err)) != PP_OK) field = "$.cluster";
    if (st == PP_OK && (st = pp_cluster_resize(cl, r.nodes, r.gpus, &err)) != PP_OK) field = r.gpus ? "$.gpus" : "$.nodes";
    if (st == PP_OK) read_strategy(&c, o, m, cl, s), st = c.st;
    if (st == PP_OK && (st = pp_estimate(m, cl, s, p, &err)) != PP_OK) {
        /* a rule names the strategy's field; the request's key is worded the other way round */
        if (!strcmp(err.field, "overlap_tp")) field = "$.tp_overlap";
        if (!strcmp(err.field, "overlap_ep")) field = "$.ep_overlap";
        if (!strcmp(err.field, "ep_dispatch")) field = "$.ep_dispatch";
        if (!strcmp(err.field, "overlap_dp")) field = "$.dp_overlap";
    }
    if (st == PP_OK) {
        if (r.train_tokens > 0) pp_plan_train(cl, p, r.train_tokens, r.price, r.tdp_w);
        cJSON_AddItemToObject(out, "plan", pp__plan_json(m, cl, p));
    } else {
        cJSON_AddItemToObject(out, "error", pp__error_object(st, &err, field));
    }
    free(m), free(cl), free(s), free(p);
    return st;
}

char *pp_estimate_request(const char *json, pp_status *status)
{
    PP__C_NUMERIC;
    pp_error err = {""};
    pp_status st;
    cJSON *out = cJSON_CreateObject();
    cJSON *root = json ? jr_parse(json, strlen(json), "request", &err) : NULL;
    cJSON_AddNumberToObject(out, "schema_version", PP_SCHEMA_VERSION);
    if (!root) {
        st = PP_ERR_INPUT;
        cJSON_AddItemToObject(out, "error", pp__error_object(st, &err, "$"));
    } else {
        cJSON_AddItemToObject(out, "scenario", cJSON_Duplicate(root, 1));
        st = estimate(root, out);
        cJSON_Delete(root);
    }
    if (status) *status = st;
    char *text = out ? cJSON_PrintUnformatted(out) : NULL;
    cJSON_Delete(out);
    return text;
}

/* ---- the field an error names ---- */

/* Whole-document failures of jr_parse (jsonread.c): their field is "$". */
static const char *const whole_doc[] = {"malformed", "empty file", "binary data", "file is ", "nested deeper",
                                        "out of memory reading"};

char *pp_error_field(const pp_error *err, char *buf, size_t cap)
{
    const char *m = err ? err->msg : "";
    size_t n = 0;
    if (!cap) return buf;
    buf[0] = '\0';
    if (err && err->field[0]) { /* a rule's failure names its field */
        snprintf(buf, cap, "$.%s", err->field);
        return buf;
    }
    const char *p = strstr(m, ": $");
    if (p) { /* "WHERE: $.path: what" */
        p += 2;
        while (p[n] && !(p[n] == ':' && (p[n + 1] == ' ' || !p[n + 1]))) n++;
    } else if (!strncmp(m, "--", 2)) { /* "--flag VALUE: what" */
        p = m + 2;
        while (isalnum((unsigned char)p[n]) || p[n] == '-' || p[n] == '_') n++;
    } else {
        for (size_t i = 0; i < sizeof whole_doc / sizeof *whole_doc; i++)
            if (strstr(m, whole_doc[i])) p = "$", n = 1;
    }
    if (!p) return buf;
    if (n >= cap) n = cap - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}
