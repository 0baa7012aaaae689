/*
 * sweep.c — a sweep spec as an indexed sequence of scenarios (docs/sweep.md).
 * The spec is parsed once; each grid key keeps an array of pointers to its
 * values, so scenario i is built from i's mixed-radix digits (last key
 * fastest) in O(keys), never by walking lists or expanding the grid. Memory
 * is the parsed spec, whatever the number of scenarios. Running them in
 * order on threads is sweep_stream.c.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/configs.h"

#define SWEEP_KEYS_MAX 64

static const char *const spec_keys[] = {"grid", "scenarios", NULL};

struct pp_sweep {
    cJSON *root;                         /* the parsed spec, owned */
    char where[PP_TEXT_LEN];             /* file name for messages */
    int nk;                              /* grid keys */
    const char *key[SWEEP_KEYS_MAX];
    const cJSON **val[SWEEP_KEYS_MAX];   /* val[k][d]: the d-th value of key k */
    int len[SWEEP_KEYS_MAX];
    int ngrid;                           /* grid scenarios (0: no grid) */
    const cJSON **list;                  /* listed scenarios */
    int nlist;
};

/* One pointer per value of a grid key (a scalar is its one value). */
static int index_key(pp_sweep *s, const cJSON *k)
{
    int n = cJSON_IsArray(k) ? cJSON_GetArraySize(k) : 1;
    const cJSON **v = malloc((size_t)n * sizeof *v);
    if (!v) return 0;
    if (!cJSON_IsArray(k)) v[0] = k;
    int d = 0;
    for (const cJSON *it = cJSON_IsArray(k) ? k->child : NULL; it; it = it->next) v[d++] = it;
    s->key[s->nk] = k->string;
    s->val[s->nk] = v;
    s->len[s->nk++] = n;
    return 1;
}

static void index_grid(jr_ctx *c, pp_sweep *s, const cJSON *grid)
{
    double total = 1;
    if (!grid->child) jr_fail(c, "$", "grid", "expected at least one key (model, cluster, gpus, ...)");
    for (const cJSON *k = grid->child; k && c->st == PP_OK; k = k->next) {
        if (s->nk == SWEEP_KEYS_MAX) jr_fail(c, "$.grid", NULL, "expected at most %d keys", SWEEP_KEYS_MAX);
        else if (cJSON_IsArray(k) && !k->child) jr_fail(c, "$.grid", k->string, "expected a non-empty list");
        else if (!index_key(s, k)) c->st = pp__fail(c->err, PP_ERR_NOMEM, "%s: out of memory", c->where);
        else total *= s->len[s->nk - 1];
    }
    if (c->st == PP_OK && total > PP_SWEEP_MAX)
        jr_fail(c, "$", "grid", "expands to %.0f scenarios: expected at most %d", total, PP_SWEEP_MAX);
    if (c->st == PP_OK) s->ngrid = (int)total;
}

static void index_list(jr_ctx *c, pp_sweep *s, const cJSON *list)
{
    int n = cJSON_GetArraySize(list);
    if ((double)n + s->ngrid > PP_SWEEP_MAX) {
        jr_fail(c, "$", "scenarios", "with the grid, expected at most %d scenarios", PP_SWEEP_MAX);
        return;
    }
    s->list = malloc((size_t)(n ? n : 1) * sizeof *s->list);
    if (!s->list) {
        c->st = pp__fail(c->err, PP_ERR_NOMEM, "%s: out of memory", c->where);
        return;
    }
    for (const cJSON *it = list->child; it; it = it->next) s->list[s->nlist++] = it;
}

pp_status pp_sweep_open(const char *spec, size_t len, const char *where, pp_sweep **out, pp_error *err)
{
    PP__C_NUMERIC;
    *out = NULL;
    pp_sweep *s = calloc(1, sizeof *s);
    if (!s) return pp__fail(err, PP_ERR_NOMEM, "%s: out of memory", where);
    snprintf(s->where, sizeof s->where, "%s", where);
    s->root = jr_parse(spec, len, s->where, err);
    if (!s->root) {
        free(s);
        return PP_ERR_INPUT;
    }
    jr_ctx c = {s->where, err, PP_OK};
    jr_check_keys(&c, s->root, "$", spec_keys);
    const cJSON *grid = jr_obj(&c, s->root, "$", "grid", 0);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(s->root, "scenarios");
    if (c.st == PP_OK && list && !cJSON_IsArray(list)) jr_fail(&c, "$", "scenarios", "expected a list of scenario objects");
    if (c.st == PP_OK && !grid && !list) jr_fail(&c, "$", "grid", "expected \"grid\" or \"scenarios\"");
    if (c.st == PP_OK && grid) index_grid(&c, s, grid);
    if (c.st == PP_OK && list) index_list(&c, s, list);
    if (c.st == PP_OK && s->ngrid + s->nlist == 0) jr_fail(&c, "$", "scenarios", "expected at least one scenario");
    if (c.st != PP_OK) {
        pp_sweep_close(s);
        return c.st;
    }
    *out = s;
    return PP_OK;
}

void pp_sweep_close(pp_sweep *s)
{
    if (!s) return;
    for (int k = 0; k < s->nk; k++) free(s->val[k]);
    free(s->list);
    cJSON_Delete(s->root);
    free(s);
}

int pp_sweep_size(const pp_sweep *s) { return s->ngrid + s->nlist; }

pp_status pp_sweep_count(const char *spec, size_t len, const char *where, int *count, pp_error *err)
{
    pp_sweep *s;
    pp_status st = pp_sweep_open(spec, len, where, &s, err);
    *count = st == PP_OK ? pp_sweep_size(s) : 0;
    pp_sweep_close(s);
    return st;
}

/* Scenario i as a fresh object: grid digits from i, last key fastest. */
/* "framework": the names in mask, as a list. 0 ok, -1 out of memory. */
static int add_frameworks(cJSON *sc, unsigned mask)
{
    int n;
    const char *const *names = pp_enum_names(PP_ENUM_FRAMEWORK, &n);
    cJSON *a = cJSON_AddArrayToObject(sc, "framework");
    for (int i = 0; a && i < n; i++)
        if (mask & (1u << i) && !cJSON_AddItemToArray(a, cJSON_CreateString(names[i]))) return -1;
    return a ? 0 : -1;
}

static cJSON *scenario_at(const pp_sweep *s, const pp_sweep_opts *o, int i)
{
    if (i < 0 || i >= pp_sweep_size(s)) return NULL;
    cJSON *sc;
    if (i < s->ngrid) {
        int d[SWEEP_KEYS_MAX];
        for (int k = s->nk - 1, r = i; k >= 0; k--) {
            d[k] = r % s->len[k];
            r /= s->len[k];
        }
        sc = cJSON_CreateObject();
        for (int k = 0; sc && k < s->nk; k++) {
            cJSON *v = cJSON_Duplicate(s->val[k][d[k]], 1);
            if (!v || !cJSON_AddItemToObject(sc, s->key[k], v)) {
                cJSON_Delete(v);
                cJSON_Delete(sc);
                return NULL;
            }
        }
    } else {
        sc = cJSON_Duplicate(s->list[i - s->ngrid], 1);
    }
    if (sc && o && o->top > 0 && cJSON_IsObject(sc) && !cJSON_GetObjectItemCaseSensitive(sc, "top") &&
        !cJSON_AddNumberToObject(sc, "top", o->top)) {
        cJSON_Delete(sc);
        return NULL;
    }
    if (sc && o && o->frameworks && cJSON_IsObject(sc) && !cJSON_GetObjectItemCaseSensitive(sc, "framework") &&
        add_frameworks(sc, o->frameworks)) {
        cJSON_Delete(sc);
        return NULL;
    }
    return sc;
}

char *pp_sweep_scenario(const pp_sweep *s, const pp_sweep_opts *o, int index)
{
    PP__C_NUMERIC;
    cJSON *sc = scenario_at(s, o, index);
    char *text = sc ? cJSON_PrintUnformatted(sc) : NULL;
    cJSON_Delete(sc);
    return text;
}

int pp_sweep_selected(const pp_sweep_opts *o, int i)
{
    if (!o) return 1;
    if (o->shard_n > 0 && i % o->shard_n != o->shard_k - 1) return 0;
    int lo = 0, hi = o->nskip - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (o->skip[mid] == i) return 0;
        if (o->skip[mid] < i) lo = mid + 1;
        else hi = mid - 1;
    }
    return 1;
}

const char *pp_sweep_csv_header(void)
{
    PP__C_NUMERIC;
    return "index,status,model,cluster,gpus,global_batch,seq,framework,dp,tp,pp,cp,ep,sp,zero,offload,recompute,"
           "precision,"
           "micro_batch,grad_accum,schedule,virtual_stages,mode,peak_bytes,fits,step_s,tokens_per_s,mfu,train_days,"
           "cost_usd,error,etp,ep_dispatch,overlap_ep,expandable_segments,opt_states,recompute_modules,fp8_param_gather,"
           "act_offload_layers,launcher";
}

static const cJSON *path_get(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    return b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
}

/* A string field, RFC 4180: quoted (quotes doubled) when it holds a comma,
 * a quote or a line break; line breaks become spaces so a row stays one
 * line (resume reads rows as lines). */
static void csv_str(char *buf, size_t cap, const char *v, int quote)
{
    size_t l = strlen(buf);
    quote = quote || strpbrk(v, ",\"\r\n") != NULL;
    if (l + 2 < cap) buf[l++] = ',';
    if (quote && l + 2 < cap) buf[l++] = '"';
    for (const char *p = v; *p && l + 3 < cap; p++) {
        if (*p == '"') buf[l++] = '"';
        buf[l++] = *p == '\n' || *p == '\r' ? ' ' : *p;
    }
    if (quote && l + 1 < cap) buf[l++] = '"';
    buf[l] = '\0';
}

static void csv_num(char *buf, size_t cap, const cJSON *v)
{
    size_t l = strlen(buf);
    if (cJSON_IsNumber(v)) snprintf(buf + l, cap - l, ",%.17g", v->valuedouble);
    else if (cJSON_IsBool(v)) snprintf(buf + l, cap - l, ",%d", cJSON_IsTrue(v));
    else if (cJSON_IsString(v)) csv_str(buf, cap, v->valuestring, 0);
    else if (cJSON_IsArray(v)) { /* names, space-separated (recompute_modules, as Megatron takes them) */
        char j[256] = "";
        size_t n = 0;
        for (const cJSON *it = v->child; it && n < sizeof j; it = it->next)
            if (cJSON_IsString(it)) n += (size_t)snprintf(j + n, sizeof j - n, "%s%s", n ? " " : "", it->valuestring);
        csv_str(buf, cap, j, 0);
    } else snprintf(buf + l, cap - l, ",");
}

/* One CSV row from a result object (the best plan, or the error). */
static char *csv_row(const cJSON *res, int index)
{
    size_t cap = 4096;
    char *b = malloc(cap);
    if (!b) return NULL;
    const cJSON *plan = cJSON_GetArrayItem(path_get(res, "plans", NULL), 0), *err = path_get(res, "error", NULL);
    const cJSON *sc = path_get(res, "scenario", NULL);
    const char *status = plan ? "ok" : cJSON_GetStringValue(path_get(res, "error", "status"));
    snprintf(b, cap, "%d,%s", index, status ? status : "");
    csv_num(b, cap, path_get(sc, "model", NULL));
    csv_num(b, cap, plan ? path_get(plan, "cluster", NULL) : path_get(sc, "cluster", NULL));
    csv_num(b, cap, plan ? path_get(plan, "gpus", NULL) : path_get(sc, "gpus", NULL));
    csv_num(b, cap, path_get(sc, "global_batch", NULL));
    csv_num(b, cap, plan ? path_get(plan, "strategy", "seq") : path_get(sc, "seq", NULL));
    static const char *const sk[] = {"framework", "dp", "tp", "pp", "cp", "ep", "sp", "zero", "offload", "recompute",
                                     "precision", "micro_batch", "grad_accum", "schedule", "virtual_stages"};
    for (size_t i = 0; i < sizeof sk / sizeof *sk; i++) csv_num(b, cap, plan ? path_get(plan, "strategy", sk[i]) : NULL);
    csv_num(b, cap, plan ? path_get(plan, "training", "mode") : NULL);
    csv_num(b, cap, plan ? path_get(plan, "memory", "peak_bytes") : NULL);
    csv_num(b, cap, plan ? path_get(plan, "memory", "fits") : NULL);
    csv_num(b, cap, plan ? path_get(plan, "time", "step_s") : NULL);
    csv_num(b, cap, plan ? path_get(plan, "throughput", "tokens_per_s") : NULL);
    csv_num(b, cap, plan ? path_get(plan, "throughput", "mfu") : NULL);
    csv_num(b, cap, plan ? path_get(plan, "train", "days") : NULL);
    csv_num(b, cap, plan ? path_get(plan, "train", "cost_usd") : NULL);
    const char *msg = err ? cJSON_GetStringValue(path_get(err, "message", NULL)) : "";
    csv_str(b, cap, msg ? msg : "", 1); /* the message, always quoted */
    /* added after the message, so earlier columns keep their places */
    static const char *const late[] = {"etp", "ep_dispatch", "overlap_ep", "expandable_segments", "opt_states",
                                        "recompute_modules", "fp8_param_gather", "act_offload_layers", "launcher"};
    for (size_t i = 0; i < sizeof late / sizeof *late; i++) csv_num(b, cap, plan ? path_get(plan, "strategy", late[i]) : NULL);
    return b;
}

char *pp_sweep_result(const pp_sweep *s, const pp_sweep_opts *o, int index, pp_status *st)
{
    PP__C_NUMERIC;
    cJSON *sc = scenario_at(s, o, index);
    *st = PP_ERR_NOMEM;
    if (!sc) return NULL;
    cJSON *res = pp__scenario_result(index, sc, s->where, st);
    cJSON_Delete(sc);
    char *line = !res ? NULL : o && o->format == PP_SWEEP_CSV ? csv_row(res, index) : cJSON_PrintUnformatted(res);
    cJSON_Delete(res);
    if (!line) *st = PP_ERR_NOMEM;
    return line;
}
