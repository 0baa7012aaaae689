/*
 * scenario.c — one question as JSON (docs/sweep.md): read a scenario into
 * search options, run it, and render the result. The same reader serves
 * `parplan sweep` lines and the pp_plan_request library entry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/configs.h"
#include "configs/presets.h"

static const char *const scenario_keys[] = {
    "model", "cluster", "nodes", "gpus", "global_batch", "seq", "top", "objective", "train_tokens",
    "price_per_gpu_hour", "max_tp_per_node", "dp", "tp", "pp", "cp", "ep", "sp", "zero", "micro_batch",
    "virtual_stages", "precision", "offload", "recompute", "schedule", "optimizer", "attention", "cp_comm", "loss", "free_pipeline_outputs",
    "expandable_segments", "grad_accum_dtype", "act_offload_layers", "opt_states", "recompute_modules", "fp8_param_gather", "mode", "lora_rank", "lora_alpha", "lora_dropout", "lora_targets",
    "freeze_embeddings", "freeze_layers", "stage_partition", "framework", NULL};

static const char *const objective_names[] = {"throughput", "cost", "memory"};
static const char *const lora_names[] = {"q", "k", "v", "o", "gate", "up", "down", "lm_head"};

/* An int or a list of ints into a restriction set. */
static void read_set(jr_ctx *c, const cJSON *o, const char *path, const char *key, long lo, long hi, pp_int_set *set)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || c->st != PP_OK) return;
    if (cJSON_IsBool(v)) { /* "sp": true */
        set->n = 1;
        set->v[0] = cJSON_IsTrue(v);
        return;
    }
    if (!cJSON_IsArray(v)) {
        set->n = jr_int(c, o, path, key, 1, lo, hi, &set->v[0]);
        return;
    }
    set->n = 0;
    char p[128];
    snprintf(p, sizeof p, "%s.%s", path, key);
    int i = 0;
    for (const cJSON *it = v->child; it && c->st == PP_OK; it = it->next, i++) {
        char k[16];
        snprintf(k, sizeof k, "[%d]", i);
        cJSON *wrap = cJSON_CreateObject();
        cJSON_AddItemReferenceToObject(wrap, k, (cJSON *)it);
        if (set->n >= PP_SET_MAX) jr_fail(c, p, NULL, "expected at most %d values", PP_SET_MAX);
        else if (jr_int(c, wrap, p, k, 1, lo, hi, &set->v[set->n])) set->n++;
        cJSON_Delete(wrap);
    }
    if (c->st == PP_OK && set->n == 0) jr_fail(c, path, key, "expected a non-empty list");
}

/* A name or a list of names into a bit mask. */
static void read_mask(jr_ctx *c, const cJSON *o, const char *path, const char *key, int which, unsigned *mask)
{
    int n;
    const char *const *names = pp_enum_names(which, &n);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || c->st != PP_OK) return;
    *mask = 0;
    if (!cJSON_IsArray(v)) {
        int e;
        if (jr_enum(c, o, path, key, 1, names, n, &e)) *mask = 1u << e;
        return;
    }
    char p[128];
    snprintf(p, sizeof p, "%s.%s", path, key);
    int i = 0;
    for (const cJSON *it = v->child; it && c->st == PP_OK; it = it->next, i++) {
        char k[16];
        int e;
        snprintf(k, sizeof k, "[%d]", i);
        cJSON *wrap = cJSON_CreateObject();
        cJSON_AddItemReferenceToObject(wrap, k, (cJSON *)it);
        if (jr_enum(c, wrap, p, k, 1, names, n, &e)) *mask |= 1u << e;
        cJSON_Delete(wrap);
    }
}

static void read_lora_targets(jr_ctx *c, const cJSON *o, const char *path, pp_finetune *f)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "lora_targets");
    if (!v) return;
    if (cJSON_IsString(v) && !strcmp(v->valuestring, "all-linear")) {
        f->lora_targets = PP_LORA_ALL_LINEAR;
        return;
    }
    if (!cJSON_IsArray(v) || !v->child) {
        jr_fail(c, path, "lora_targets", "expected \"all-linear\" or a list of q,k,v,o,gate,up,down,lm_head");
        return;
    }
    f->lora_targets = 0;
    for (const cJSON *it = v->child; it && c->st == PP_OK; it = it->next) {
        int e = cJSON_IsString(it) ? pp_enum_parse(lora_names, 8, it->valuestring) : -1;
        if (e < 0) jr_fail(c, path, "lora_targets", "expected names among q,k,v,o,gate,up,down,lm_head");
        else f->lora_targets |= 1u << e;
    }
}

void pp__scenario_read_base(jr_ctx *c, const cJSON *o, const char *path, pp_strategy *b)
{
    int n, e;
    const char *const *names = pp_enum_names(PP_ENUM_OPTIMIZER, &n);
    if (jr_enum(c, o, path, "optimizer", 0, names, n, &e)) b->optimizer = (pp_optimizer)e;
    names = pp_enum_names(PP_ENUM_ATTENTION, &n);
    if (jr_enum(c, o, path, "attention", 0, names, n, &e)) b->attention = (pp_attention)e;
    names = pp_enum_names(PP_ENUM_CP_COMM, &n);
    if (jr_enum(c, o, path, "cp_comm", 0, names, n, &e)) b->cp_comm = (pp_cp_comm)e;
    names = pp_enum_names(PP_ENUM_LOSS, &n);
    if (jr_enum(c, o, path, "loss", 0, names, n, &e)) b->loss = (pp_loss)e;
    jr_bool(c, o, path, "free_pipeline_outputs", 0, &b->buf.free_pipeline_outputs);
    jr_bool(c, o, path, "expandable_segments", 0, &b->buf.expandable_segments);
    jr_bool(c, o, path, "fp8_param_gather", 0, &b->fp8_param_gather);
    names = pp_enum_names(PP_ENUM_GRAD_ACCUM, &n);
    if (jr_enum(c, o, path, "grad_accum_dtype", 0, names, n, &e)) b->grad_accum_dtype = (pp_grad_accum)e;
    jr_int(c, o, path, "act_offload_layers", 0, 0, PP_MAX_LAYERS, &b->act_offload_layers);
    names = pp_enum_names(PP_ENUM_OPT_STATES, &n);
    if (jr_enum(c, o, path, "opt_states", 0, names, n, &e)) b->opt_states = e;
    read_mask(c, o, path, "recompute_modules", PP_ENUM_RECOMPUTE_MODULES, &b->recompute_modules);
    if (b->recompute_modules == PP_RC_CORE_ATTN) b->recompute_modules = 0; /* Megatron's default */
    names = pp_enum_names(PP_ENUM_MODE, &n);
    if (jr_enum(c, o, path, "mode", 0, names, n, &e)) b->ft.mode = (pp_train_mode)e;
    jr_int(c, o, path, "lora_rank", 0, 1, 4096, &b->ft.lora_rank);
    jr_num(c, o, path, "lora_alpha", 0, 0, 1e6, &b->ft.lora_alpha);
    jr_num(c, o, path, "lora_dropout", 0, 0, 0.99, &b->ft.lora_dropout);
    read_lora_targets(c, o, path, &b->ft);
    jr_bool(c, o, path, "freeze_embeddings", 0, &b->ft.freeze_embeddings);
    jr_int(c, o, path, "freeze_layers", 0, 0, PP_MAX_LAYERS, &b->ft.freeze_layers);
}

pp_status pp__scenario_read(const cJSON *o, const char *where, const char *path, pp_scenario *sc, pp_error *err)
{
    jr_ctx c = {where, err, PP_OK};
    pp_search_opts *op = &sc->opts;
    memset(sc, 0, sizeof *sc);
    pp_search_opts_default(op);
    if (!cJSON_IsObject(o)) return jr_fail(&c, path, NULL, "expected a scenario object"), c.st;
    jr_check_keys(&c, o, path, scenario_keys);
    jr_str(&c, o, path, "model", 1, sc->model, sizeof sc->model);
    jr_str(&c, o, path, "cluster", 1, sc->cluster, sizeof sc->cluster);
    jr_int(&c, o, path, "nodes", 0, 1, 1 << 20, &sc->nodes);
    jr_int(&c, o, path, "gpus", 0, 1, 1 << 24, &sc->gpus);
    if (c.st == PP_OK && sc->nodes && sc->gpus) jr_fail(&c, path, "gpus", "give nodes or gpus, not both");
    jr_int(&c, o, path, "global_batch", 1, 1, 1 << 26, &op->global_batch);
    jr_int(&c, o, path, "seq", 0, 1, 1 << 24, &op->seq);
    jr_int(&c, o, path, "top", 0, 1, PP_TOP_MAX, &op->top_k);
    int e;
    if (jr_enum(&c, o, path, "objective", 0, objective_names, PP_OBJ_COUNT, &e)) op->objective = (pp_objective)e;
    jr_num(&c, o, path, "train_tokens", 0, 1, 1e16, &sc->train_tokens);
    jr_num(&c, o, path, "price_per_gpu_hour", 0, 0, 1e4, &op->price_usd_per_gpu_hour);
    jr_int(&c, o, path, "max_tp_per_node", 0, 1, 1 << 16, &op->max_tp_per_node);
    read_set(&c, o, path, "dp", 1, 1 << 24, &op->dp);
    read_set(&c, o, path, "tp", 1, 1 << 16, &op->tp);
    read_set(&c, o, path, "pp", 1, PP_MAX_STAGES, &op->pp);
    read_set(&c, o, path, "cp", 1, 1 << 16, &op->cp);
    read_set(&c, o, path, "ep", 1, 1 << 16, &op->ep);
    read_set(&c, o, path, "sp", 0, 1, &op->sp);
    read_set(&c, o, path, "zero", 0, 3, &op->zero);
    read_set(&c, o, path, "micro_batch", 1, 1 << 20, &op->micro_batch);
    read_set(&c, o, path, "virtual_stages", 1, 64, &op->virtual_stages);
    read_mask(&c, o, path, "precision", PP_ENUM_PRECISION, &op->precisions);
    read_mask(&c, o, path, "offload", PP_ENUM_OFFLOAD, &op->offloads);
    read_mask(&c, o, path, "recompute", PP_ENUM_RECOMPUTE, &op->recomputes);
    read_mask(&c, o, path, "schedule", PP_ENUM_SCHEDULE, &op->schedules);
    read_mask(&c, o, path, "framework", PP_ENUM_FRAMEWORK, &op->frameworks);
    jr_bool(&c, o, path, "stage_partition", 0, &op->stage_partition);
    pp__scenario_read_base(&c, o, path, &op->base);
    return c.st;
}

pp_status pp_scenario_parse(const char *json, size_t len, const char *where, pp_scenario *out, pp_error *err)
{
    PP__C_NUMERIC;
    cJSON *root = jr_parse(json, len, where, err);
    if (!root) return PP_ERR_INPUT;
    pp_status st = pp__scenario_read(root, where, "$", out, err);
    cJSON_Delete(root);
    return st;
}

pp_status pp_scenario_load(const pp_scenario *sc, pp_model *m, pp_cluster *c, pp_error *err)
{
    PP__C_NUMERIC;
    pp_status st = pp_model_load(sc->model, m, err);
    if (st == PP_OK) st = pp_cluster_load(sc->cluster, c, err);
    if (st == PP_OK) st = pp_cluster_resize(c, sc->nodes, sc->gpus, err);
    return st;
}

/* The error object of a scenario or request: exit code, status, the field
 * as a JSON path, the message (a failed rule's field worded as that path). */
cJSON *pp__error_object(pp_status st, const pp_error *err, const char *field)
{
    char f[PP_ERR_LEN];
    if (!field) { /* from the message: "$.tp" as it is, "--tp" as the key "$.tp" */
        pp_error_field(err, f + 2, sizeof f - 2);
        if (f[2] == '$' || !f[2]) field = f + 2;
        else {
            f[0] = '$', f[1] = '.';
            for (char *p = f + 2; *p; p++) *p = *p == '-' ? '_' : *p;
            field = f;
        }
    }
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "exit_code", pp_status_exit_code(st));
    cJSON_AddStringToObject(e, "status", pp_status_str(st));
    cJSON_AddStringToObject(e, "field", field);
    if (err->field[0] && err->detail > 0 && err->detail < (int)sizeof err->msg) {
        char msg[PP_ERR_LEN + 80];
        snprintf(msg, sizeof msg, "%s%s%s: %s", field, err->value[0] ? " = " : "", err->value, err->msg + err->detail);
        cJSON_AddStringToObject(e, "message", msg);
    } else {
        cJSON_AddStringToObject(e, "message", err->msg);
    }
    const pp_rule_info *r = err->rule ? pp_rule_get((pp_rule)err->rule) : NULL;
    if (r) cJSON_AddStringToObject(e, "rule", r->id);
    return e;
}

/* Runs a parsed scenario; adds "plans" or "error" to out. */
static pp_status run(const pp_scenario *sc, cJSON *out)
{
    pp_error err = {""};
    pp_model *m = malloc(sizeof *m);
    pp_cluster *c = malloc(sizeof *c);
    pp_plan_list list = {0};
    const char *field = NULL;
    pp_status st = m && c ? PP_OK : PP_ERR_NOMEM;
    if (st == PP_OK && (st = pp_model_load(sc->model, m, &err)) != PP_OK) field = "$.model";
    if (st == PP_OK && (st = pp_cluster_load(sc->cluster, c, &err)) != PP_OK) field = "$.cluster";
    if (st == PP_OK && (st = pp_cluster_resize(c, sc->nodes, sc->gpus, &err)) != PP_OK) field = sc->gpus ? "$.gpus" : "$.nodes";
    if (st == PP_OK) {
        pp_search_opts o = sc->opts;
        o.threads = 1; /* scenarios run in parallel instead */
        st = pp_plan_search(m, c, &o, &list, &err);
    }
    if (st == PP_OK && list.n == 0) {
        st = PP_ERR_INFEASIBLE;
        snprintf(err.msg, sizeof err.msg, "no strategy fits: the least memory any candidate needed exceeds the %.1f GiB usable",
                 list.usable_bytes / PP_GIB);
        field = "";
    }
    if (st == PP_OK) {
        cJSON *plans = cJSON_AddArrayToObject(out, "plans");
        for (int i = 0; i < list.n; i++) {
            if (sc->train_tokens > 0) pp_plan_train(c, &list.plans[i], sc->train_tokens, sc->opts.price_usd_per_gpu_hour, 0);
            cJSON_AddItemToArray(plans, pp__plan_json(m, c, &list.plans[i]));
        }
    } else {
        cJSON_AddItemToObject(out, "error", pp__error_object(st, &err, field));
    }
    pp_plan_list_free(&list);
    free(m);
    free(c);
    return st;
}

cJSON *pp__scenario_result(int index, const cJSON *scenario, const char *where, pp_status *status)
{
    cJSON *out = cJSON_CreateObject();
    pp_scenario sc;
    pp_error err = {""};
    if (index >= 0) cJSON_AddNumberToObject(out, "index", index);
    cJSON_AddNumberToObject(out, "schema_version", PP_SCHEMA_VERSION);
    cJSON_AddItemToObject(out, "scenario", cJSON_Duplicate(scenario, 1));
    *status = pp__scenario_read(scenario, where, "$", &sc, &err);
    if (*status != PP_OK) cJSON_AddItemToObject(out, "error", pp__error_object(*status, &err, NULL));
    else *status = run(&sc, out);
    return out;
}

char *pp_plan_request(const char *json, pp_status *status)
{
    PP__C_NUMERIC;
    pp_error err = {""};
    pp_status st;
    cJSON *out;
    cJSON *root = json ? jr_parse(json, strlen(json), "request", &err) : NULL;
    if (!root) {
        st = PP_ERR_INPUT;
        out = cJSON_CreateObject();
        cJSON_AddNumberToObject(out, "schema_version", PP_SCHEMA_VERSION);
        cJSON_AddItemToObject(out, "error", pp__error_object(st, &err, "$"));
    } else {
        out = pp__scenario_result(-1, root, "request", &st);
        cJSON_Delete(root);
    }
    if (status) *status = st;
    char *s = cJSON_PrintUnformatted(out);
    cJSON_Delete(out);
    return s;
}
