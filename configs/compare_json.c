/*
 * compare_json.c — `parplan compare --format json|csv`: the comparison as
 * one JSON document (each option carries the same plan object as
 * `estimate`) or as CSV with the fixed columns of docs/compare.md. Numbers
 * in CSV are the shortest decimals that read back exactly; an empty cell is
 * "not applicable" (no plan, no price, no deadline).
 */
#include <math.h>
#include <string.h>

#include "configs/emit.h"

static const char *status_word(pp_status st)
{
    return st == PP_OK ? "ok" : st == PP_ERR_INFEASIBLE ? "infeasible" : "invalid";
}

static void add_num_or_null(cJSON *o, const char *k, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, k, v);
    else cJSON_AddNullToObject(o, k);
}

static void add_flag(cJSON *o, const char *k, int given, int ok, int v)
{
    if (given && ok) cJSON_AddBoolToObject(o, k, v);
    else cJSON_AddNullToObject(o, k);
}

static void add_index_or_null(cJSON *o, const char *k, int i)
{
    if (i >= 0) cJSON_AddNumberToObject(o, k, i);
    else cJSON_AddNullToObject(o, k);
}

static cJSON *cluster_json(const pp_compare_result *r, int ci)
{
    const pp_compare_cluster *cc = &r->clusters[ci];
    const pp_gpu *g = &cc->cluster.gpu;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", cc->cluster.name);
    cJSON_AddStringToObject(j, "gpu", g->name);
    cJSON_AddNumberToObject(j, "gpus_per_node", cc->cluster.gpus_per_node);
    cJSON_AddNumberToObject(j, "tdp_w", g->tdp_w);
    add_num_or_null(j, "catalog_usd_per_gpu_hour", g->price_usd_per_hour > 0 ? g->price_usd_per_hour : NAN);
    cJSON_AddStringToObject(j, "catalog_price_date", g->price_usd_per_hour > 0 ? g->price_date : "");
    cJSON_AddStringToObject(j, "catalog_price_provider", g->price_usd_per_hour > 0 ? g->price_provider : "");
    cJSON_AddStringToObject(j, "catalog_source", g->source);
    add_num_or_null(j, "override_usd_per_gpu_hour", cc->price_usd_per_gpu_hour > 0 ? cc->price_usd_per_gpu_hour : NAN);
    add_num_or_null(j, "purchase_usd_per_gpu", cc->purchase_usd_per_gpu > 0 ? cc->purchase_usd_per_gpu : NAN);
    return j;
}

static cJSON *option_json(const pp_model *m, const pp_compare_result *r, int i)
{
    const pp_compare_option *e = &r->options[i];
    const pp_compare_opts *o = &r->opts;
    int ok = e->status == PP_OK;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "index", i);
    cJSON_AddStringToObject(j, "cluster", r->clusters[e->cluster].cluster.name);
    cJSON_AddNumberToObject(j, "gpus", e->gpus);
    cJSON_AddNumberToObject(j, "nodes", e->nodes);
    cJSON_AddStringToObject(j, "origin", e->from_search ? "deadline_search" : "asked");
    cJSON_AddStringToObject(j, "status", status_word(e->status));
    if (!ok) cJSON_AddStringToObject(j, "error", e->error);
    cJSON_AddStringToObject(j, "price_kind", pp_price_kind_name(e->price_kind));
    cJSON_AddStringToObject(j, "price_basis", pp_price_basis(e->price_kind));
    add_num_or_null(j, "usd_per_gpu_hour", e->usd_per_gpu_hour);
    cJSON_AddStringToObject(j, "price_date", e->price_date);
    add_num_or_null(j, "days", e->days);
    add_num_or_null(j, "gpu_hours", e->gpu_hours);
    add_num_or_null(j, "cost_usd", e->cost_usd);
    add_num_or_null(j, "energy_kwh", e->energy_kwh);
    add_num_or_null(j, "tokens_per_s", e->tokens_per_s);
    if (ok) cJSON_AddStringToObject(j, "framework", pp_framework_name(e->plan.strategy.framework));
    else cJSON_AddNullToObject(j, "framework");
    if (ok) cJSON_AddStringToObject(j, "precision", pp_precision_name(e->plan.strategy.precision));
    else cJSON_AddNullToObject(j, "precision");
    add_num_or_null(j, "mfu_bf16", e->mfu_bf16);
    add_num_or_null(j, "tokens_per_s_per_usd_hour", e->tokens_per_s_per_usd_hour);
    add_num_or_null(j, "tokens_per_usd", e->tokens_per_usd);
    add_flag(j, "meets_deadline", o->deadline_days > 0, ok, e->meets_deadline);
    add_flag(j, "within_budget", o->budget_usd > 0, ok && isfinite(e->cost_usd), e->within_budget);
    cJSON_AddBoolToObject(j, "pareto", e->pareto);
    if (ok) {
        pp_cluster c = r->clusters[e->cluster].cluster;
        pp_cluster_resize(&c, 0, e->gpus, NULL);
        cJSON *p = pp__plan_json(m, &c, &e->plan);
        if (p) cJSON_AddItemToObject(j, "plan", p);
    }
    return j;
}

static cJSON *search_json(const pp_compare_result *r, int ci)
{
    const pp_compare_min *mn = &r->mins[ci];
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "cluster", r->clusters[ci].cluster.name);
    cJSON_AddBoolToObject(j, "found", mn->found);
    add_num_or_null(j, "gpus", mn->found ? mn->gpus : NAN);
    add_num_or_null(j, "nodes", mn->found ? mn->nodes : NAN);
    add_index_or_null(j, "option", mn->option);
    cJSON_AddNumberToObject(j, "evaluations", mn->probes);
    cJSON *pa = cJSON_AddArrayToObject(j, "probes");
    for (int k = 0; k < mn->probes && k < PP_COMPARE_MAX_PROBES; k++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "gpus", mn->probe_gpus[k]);
        add_num_or_null(p, "days", mn->probe_days[k]);
        cJSON_AddItemToArray(pa, p);
    }
    cJSON_AddStringToObject(j, "note", mn->note);
    return j;
}

char *pp_compare_to_json(const pp_model *m, const pp_compare_result *r)
{
    PP__C_NUMERIC;
    const pp_compare_opts *o = &r->opts;
    cJSON *j = cJSON_CreateObject();
    if (!j) return NULL;
    cJSON_AddNumberToObject(j, "schema_version", PP_SCHEMA_VERSION);
    cJSON_AddStringToObject(j, "model", r->model);
    cJSON_AddNumberToObject(j, "train_tokens", o->train_tokens);
    cJSON_AddNumberToObject(j, "global_batch", o->search.global_batch);
    int seq = o->search.seq ? o->search.seq : m->seq;
    cJSON_AddNumberToObject(j, "seq", seq);
    cJSON_AddStringToObject(j, "objective", o->search.objective == PP_OBJ_COST ? "cost" : "throughput");
    add_num_or_null(j, "deadline_days", o->deadline_days > 0 ? o->deadline_days : NAN);
    add_num_or_null(j, "budget_usd", o->budget_usd > 0 ? o->budget_usd : NAN);
    add_num_or_null(j, "amortize_years", o->amortize_years > 0 ? o->amortize_years : NAN);
    add_num_or_null(j, "usd_per_kwh", o->usd_per_kwh > 0 ? o->usd_per_kwh : NAN);
    cJSON_AddStringToObject(j, "energy_basis", "GPU board power (TDP) x GPU-hours; no CPUs, network or cooling");
    cJSON_AddStringToObject(j, "mfu_basis", "mfu_bf16: model FLOP/s per GPU over the GPU's dense bf16 peak (fp16 "
                            "where it has no bf16), the same basis for every option; plan.throughput.mfu is over the "
                            "peak of the plan's own precision");
    cJSON_AddStringToObject(j, "price_basis", "catalog prices are on-demand list prices (never reserved or spot) "
                            "of their price_date and catalog_price_provider; given prices are the user's own");
    cJSON *a = cJSON_AddArrayToObject(j, "clusters");
    for (int i = 0; i < r->nclusters; i++) cJSON_AddItemToArray(a, cluster_json(r, i));
    a = cJSON_AddArrayToObject(j, "options");
    for (int i = 0; i < r->n; i++) cJSON_AddItemToArray(a, option_json(m, r, i));
    a = cJSON_AddArrayToObject(j, "pareto_front");
    for (int i = 0; i < r->nfront; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(r->front[i]));
    add_index_or_null(j, "cheapest", r->cheapest);
    add_index_or_null(j, "fastest", r->fastest);
    if (o->deadline_days > 0) {
        a = cJSON_AddArrayToObject(j, "deadline_search");
        for (int i = 0; i < r->nclusters; i++) cJSON_AddItemToArray(a, search_json(r, i));
    }
    cJSON_AddNumberToObject(j, "evaluations", r->evaluations);
    char *s = cJSON_Print(j);
    cJSON_Delete(j);
    return s;
}

/* ------------------------------------------------------------ CSV */

static const char *const csv_columns =
    "index,cluster,gpu,nodes,gpus,origin,status,dp,tp,pp,cp,ep,sp,zero,recompute,precision,micro_batch,"
    "grad_accum,schedule,virtual_stages,offload,step_s,tokens_per_s,mfu,mfu_bf16,peak_bytes,days,gpu_hours,"
    "price_kind,price_basis,usd_per_gpu_hour,price_date,cost_usd,energy_kwh,tokens_per_s_per_usd_hour,tokens_per_usd,meets_deadline,"
    "within_budget,pareto,cheapest,framework,error,recompute_modules,fp8_param_gather,fit";

/* A field quoted per RFC 4180 when it holds a comma, a quote or a line
 * break; control characters become '?'. */
static void csv_str(pp__sbuf *b, const char *s)
{
    int q = strpbrk(s, ",\"\r\n") != NULL;
    if (q) pp__sb_printf(b, "\"");
    for (const char *p = s; *p; p++) {
        if (*p == '"') pp__sb_printf(b, "\"\"");
        else if ((unsigned char)*p < 0x20 || *p == 0x7f) pp__sb_printf(b, "?");
        else pp__sb_printf(b, "%c", *p);
    }
    if (q) pp__sb_printf(b, "\"");
    pp__sb_printf(b, ",");
}

static void csv_num(pp__sbuf *b, double v)
{
    char t[40] = "";
    if (isfinite(v)) pp__fmt_num(t, sizeof t, v);
    pp__sb_printf(b, "%s,", t);
}

static void csv_row(pp__sbuf *b, const pp_compare_result *r, int i)
{
    const pp_compare_option *e = &r->options[i];
    const pp_strategy *s = &e->plan.strategy;
    const pp_cluster *c = &r->clusters[e->cluster].cluster;
    int ok = e->status == PP_OK, n;
    pp__sb_printf(b, "%d,", i);
    csv_str(b, c->name);
    csv_str(b, c->gpu.name);
    pp__sb_printf(b, "%d,%d,%s,%s,", e->nodes, e->gpus, e->from_search ? "deadline_search" : "asked",
                  status_word(e->status));
    if (ok)
        pp__sb_printf(b, "%d,%d,%d,%d,%d,%d,%d,%s,%s,%d,%d,%s,%d,%s,", s->dp, s->tp, s->pp, s->cp, s->ep, s->sp, s->zero,
                      pp_recompute_name(s->recompute), pp_enum_names(PP_ENUM_PRECISION, &n)[s->precision],
                      s->micro_batch, s->grad_accum, pp_schedule_name(s->schedule), s->virtual_stages,
                      pp_offload_name(s->offload));
    else
        pp__sb_printf(b, ",,,,,,,,,,,,,,");
    csv_num(b, ok ? e->plan.time.step_s : NAN);
    csv_num(b, e->tokens_per_s);
    csv_num(b, ok ? e->plan.throughput.mfu : NAN);
    csv_num(b, e->mfu_bf16);
    csv_num(b, ok ? e->plan.memory.peak_bytes : NAN);
    csv_num(b, e->days);
    csv_num(b, e->gpu_hours);
    pp__sb_printf(b, "%s,%s,", pp_price_kind_name(e->price_kind), pp_price_basis(e->price_kind));
    csv_num(b, e->usd_per_gpu_hour);
    csv_str(b, e->price_date);
    csv_num(b, e->cost_usd);
    csv_num(b, e->energy_kwh);
    csv_num(b, e->tokens_per_s_per_usd_hour);
    csv_num(b, e->tokens_per_usd);
    pp__sb_printf(b, "%s,", r->opts.deadline_days > 0 && ok ? (e->meets_deadline ? "1" : "0") : "");
    pp__sb_printf(b, "%s,", r->opts.budget_usd > 0 && ok && isfinite(e->cost_usd) ? (e->within_budget ? "1" : "0") : "");
    pp__sb_printf(b, "%d,%d,%s,", e->pareto, i == r->cheapest, ok ? pp_framework_name(s->framework) : "");
    csv_str(b, ok ? "" : e->error);
    /* added after the error, so the earlier columns keep their places */
    char mods[96] = "";
    if (ok) pp_rc_modules_format(s->recompute_modules, ' ', mods, sizeof mods);
    csv_str(b, mods);
    pp__sb_printf(b, "%s,", ok ? (s->precision == PP_PREC_FP8 && s->fp8_param_gather > 0 ? "1" : "0") : "");
    /* the memory verdict: a tight option may need the allocator's luck (review7) */
    pp__sb_printf(b, "%s,", ok ? pp_fit_name(e->plan.uncertainty.fit) : "");
    if (b->p && b->n && b->p[b->n - 1] == ',') b->p[--b->n] = '\0';
    pp__sb_printf(b, "\n");
}

char *pp_compare_to_csv(const pp_compare_result *r)
{
    PP__C_NUMERIC;
    pp__sbuf b = {0};
    pp__sb_printf(&b, "%s\n", csv_columns);
    for (int i = 0; i < r->n; i++) csv_row(&b, r, i);
    return pp__sb_take(&b);
}
