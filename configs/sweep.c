/*
 * sweep.c — expand a sweep spec into scenarios and run them on OpenMP
 * threads, emitting results strictly in spec order (docs/sweep.md). Output
 * is byte-identical for any thread count: each scenario's search runs on one
 * thread and results are released in index order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "configs/configs.h"

#define SWEEP_MAX 1000000 /* scenarios one spec may expand to */

static const char *const spec_keys[] = {"grid", "scenarios", NULL};

typedef struct expansion {
    cJSON **items; /* scenario objects, owned */
    int n, cap;
} expansion;

static int push(expansion *x, cJSON *o)
{
    if (x->n == x->cap) {
        int cap = x->cap ? 2 * x->cap : 64;
        cJSON **it = realloc(x->items, (size_t)cap * sizeof *it);
        if (!it) return 0;
        x->items = it;
        x->cap = cap;
    }
    x->items[x->n++] = o;
    return 1;
}

static void expansion_free(expansion *x)
{
    for (int i = 0; i < x->n; i++) cJSON_Delete(x->items[i]);
    free(x->items);
}

/* Grid: the cartesian product, last key fastest. */
static pp_status expand_grid(jr_ctx *c, const cJSON *grid, expansion *x)
{
    const cJSON *keys[64];
    int nk = 0, len[64];
    double total = 1;
    for (const cJSON *k = grid->child; k; k = k->next) {
        if (nk == 64) return jr_fail(c, "$.grid", NULL, "expected at most 64 keys"), c->st;
        int n = cJSON_IsArray(k) ? cJSON_GetArraySize(k) : 1;
        if (n == 0) return jr_fail(c, "$.grid", k->string, "expected a non-empty list"), c->st;
        keys[nk] = k;
        len[nk++] = n;
        total *= n;
    }
    if (total > SWEEP_MAX) return jr_fail(c, "$.grid", NULL, "expands to %.0f scenarios: expected at most %d", total, SWEEP_MAX), c->st;
    int idx[64] = {0};
    for (long done = 0; done < (long)total; done++) {
        cJSON *o = cJSON_CreateObject();
        for (int k = 0; k < nk; k++) {
            const cJSON *v = cJSON_IsArray(keys[k]) ? cJSON_GetArrayItem(keys[k], idx[k]) : keys[k];
            cJSON_AddItemToObject(o, keys[k]->string, cJSON_Duplicate(v, 1));
        }
        if (!push(x, o)) return PP_ERR_NOMEM;
        for (int k = nk - 1; k >= 0; k--) { /* odometer, last key fastest */
            if (++idx[k] < len[k]) break;
            idx[k] = 0;
        }
    }
    return PP_OK;
}

static pp_status expand(const char *spec, size_t len, const char *where, expansion *x, pp_error *err)
{
    memset(x, 0, sizeof *x);
    cJSON *root = jr_parse(spec, len, where, err);
    if (!root) return PP_ERR_INPUT;
    jr_ctx c = {where, err, PP_OK};
    jr_check_keys(&c, root, "$", spec_keys);
    const cJSON *grid = jr_obj(&c, root, "$", "grid", 0);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "scenarios");
    if (c.st == PP_OK && list && !cJSON_IsArray(list)) jr_fail(&c, "$", "scenarios", "expected a list of scenario objects");
    if (c.st == PP_OK && !grid && !list) jr_fail(&c, "$", "grid", "expected \"grid\" or \"scenarios\"");
    if (c.st == PP_OK && grid) expand_grid(&c, grid, x);
    for (const cJSON *it = list ? list->child : NULL; it && c.st == PP_OK; it = it->next)
        if (!push(x, cJSON_Duplicate(it, 1))) c.st = PP_ERR_NOMEM;
    cJSON_Delete(root);
    if (c.st != PP_OK) expansion_free(x);
    return c.st;
}

pp_status pp_sweep_count(const char *spec, size_t len, const char *where, int *count, pp_error *err)
{
    expansion x;
    pp_status st = expand(spec, len, where, &x, err);
    *count = st == PP_OK ? x.n : 0;
    if (st == PP_OK) expansion_free(&x);
    return st;
}

const char *pp_sweep_csv_header(void)
{
    return "index,status,model,cluster,gpus,global_batch,seq,dp,tp,pp,cp,ep,sp,zero,offload,recompute,precision,"
           "micro_batch,grad_accum,schedule,virtual_stages,mode,peak_bytes,fits,step_s,tokens_per_s,mfu,train_days,"
           "cost_usd,error";
}

static const cJSON *path_get(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    return b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
}

static void csv_num(char *buf, size_t cap, const cJSON *v)
{
    size_t l = strlen(buf);
    if (cJSON_IsNumber(v)) snprintf(buf + l, cap - l, ",%.17g", v->valuedouble);
    else if (cJSON_IsBool(v)) snprintf(buf + l, cap - l, ",%d", cJSON_IsTrue(v));
    else if (cJSON_IsString(v)) snprintf(buf + l, cap - l, ",%s", v->valuestring);
    else snprintf(buf + l, cap - l, ",");
}

/* One CSV row from a result object (the best plan, or the error). */
static char *csv_row(const cJSON *res, int index)
{
    size_t cap = 4096;
    char *b = malloc(cap);
    if (!b) return NULL;
    const cJSON *plan = cJSON_GetArrayItem(path_get(res, "plans", NULL), 0), *err = path_get(res, "error", NULL);
    const cJSON *sc = path_get(res, "scenario", NULL);
    snprintf(b, cap, "%d,%s", index, plan ? "ok" : cJSON_GetStringValue(path_get(res, "error", "status")));
    csv_num(b, cap, path_get(sc, "model", NULL));
    csv_num(b, cap, plan ? path_get(plan, "cluster", NULL) : path_get(sc, "cluster", NULL));
    csv_num(b, cap, plan ? path_get(plan, "gpus", NULL) : path_get(sc, "gpus", NULL));
    csv_num(b, cap, path_get(sc, "global_batch", NULL));
    csv_num(b, cap, plan ? path_get(plan, "strategy", "seq") : path_get(sc, "seq", NULL));
    static const char *const sk[] = {"dp", "tp", "pp", "cp", "ep", "sp", "zero", "offload", "recompute", "precision",
                                     "micro_batch", "grad_accum", "schedule", "virtual_stages"};
    for (size_t i = 0; i < sizeof sk / sizeof *sk; i++) csv_num(b, cap, plan ? path_get(plan, "strategy", sk[i]) : NULL);
    csv_num(b, cap, plan ? path_get(plan, "training", "mode") : NULL);
    csv_num(b, cap, plan ? path_get(plan, "memory", "peak_bytes") : NULL);
    csv_num(b, cap, plan ? path_get(plan, "memory", "fits") : NULL);
    csv_num(b, cap, plan ? path_get(plan, "time", "step_s") : NULL);
    csv_num(b, cap, plan ? path_get(plan, "throughput", "tokens_per_s") : NULL);
    csv_num(b, cap, plan ? path_get(plan, "throughput", "mfu") : NULL);
    csv_num(b, cap, plan ? path_get(plan, "train", "days") : NULL);
    csv_num(b, cap, plan ? path_get(plan, "train", "cost_usd") : NULL);
    /* the message, quoted, with quotes doubled (RFC 4180) */
    const char *msg = err ? cJSON_GetStringValue(path_get(err, "message", NULL)) : "";
    size_t l = strlen(b);
    l += (size_t)snprintf(b + l, cap - l, ",\"");
    for (const char *p = msg ? msg : ""; *p && l + 3 < cap; p++) {
        if (*p == '"') b[l++] = '"';
        b[l++] = *p == '\n' ? ' ' : *p;
    }
    snprintf(b + l, cap - l, "\"");
    return b;
}

static int skipped(const pp_sweep_opts *o, int i)
{
    if (o->shard_n > 0 && i % o->shard_n != o->shard_k - 1) return 1;
    int lo = 0, hi = o->nskip - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (o->skip[mid] == i) return 1;
        if (o->skip[mid] < i) lo = mid + 1;
        else hi = mid - 1;
    }
    return 0;
}

static char *run_one(const expansion *x, int i, const char *where, pp_sweep_format f, pp_status *st)
{
    cJSON *res = pp__scenario_result(i, x->items[i], where, st);
    char *line = f == PP_SWEEP_CSV ? csv_row(res, i) : cJSON_PrintUnformatted(res);
    cJSON_Delete(res);
    return line;
}

pp_status pp_sweep_run(const char *spec, size_t len, const char *where, const pp_sweep_opts *o, int *failed,
                       pp_error *err)
{
    expansion x;
    pp_status st = expand(spec, len, where, &x, err);
    *failed = 0;
    if (st != PP_OK) return st;
    if (o->shard_n < 0 || (o->shard_n > 0 && (o->shard_k < 1 || o->shard_k > o->shard_n))) {
        expansion_free(&x);
        return pp__fail(err, PP_ERR_INPUT, "--shard K/N: expected 1 <= K <= N, got %d/%d", o->shard_k, o->shard_n);
    }
    int todo = 0, done = 0, bad = 0, next = 0;
    for (int i = 0; i < x.n; i++) todo += !skipped(o, i);
    /* results wait in a slot until every earlier one is out: any thread that
     * completes the next index releases the ready prefix, so output streams
     * in spec order while all threads stay busy */
    char **lines = calloc((size_t)x.n + 1, sizeof *lines);
    pp_status *sts = calloc((size_t)x.n + 1, sizeof *sts);
    unsigned char *ready = calloc((size_t)x.n + 1, 1);
    if (!lines || !sts || !ready) {
        free(lines), free(sts), free(ready), expansion_free(&x);
        return pp__fail(err, PP_ERR_NOMEM, "out of memory for %d scenarios", x.n);
    }
#ifdef _OPENMP
    int threads = o->jobs > 0 ? o->jobs : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
    for (int i = 0; i < x.n; i++) {
        pp_status s = PP_OK;
        char *line = skipped(o, i) ? NULL : run_one(&x, i, where, o->format, &s);
#ifdef _OPENMP
#pragma omp critical(pp_sweep_emit)
#endif
        {
            lines[i] = line;
            sts[i] = s;
            ready[i] = 1;
            for (; next < x.n && ready[next]; next++) {
                if (!lines[next]) continue;
                bad += sts[next] != PP_OK;
                if (o->emit) o->emit(next, lines[next], sts[next], o->user);
                if (o->progress) o->progress(++done, todo, o->user);
                cJSON_free(lines[next]);
                lines[next] = NULL;
            }
        }
    }
    free(lines);
    free(sts);
    free(ready);
    *failed = bad;
    expansion_free(&x);
    return PP_OK;
}
