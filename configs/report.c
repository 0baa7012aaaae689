/*
 * report.c — `--report FILE.html` of estimate, plan and compare
 * (docs/report.md): one self-contained page with the inputs in full, and for
 * each plan its memory timeline (a stage picker over the stages embedded),
 * the per-stage bars, the pipeline schedule and the step waterfall; for plan
 * the sortable top-K table, the --explain text and why the runner-up loses;
 * for compare the cost/time chart whose points link to their plans. The
 * run's JSON is embedded so that a reader (or a test) can check the picture
 * against the numbers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "configs/configs.h"
#include "configs/report.h"

#define GIB 1073741824.0
#define TIMELINES_MAX 8 /* memory timelines embedded per plan (the stage picker's choices) */
#define CHARTED_MAX 20  /* plans (compare: options) drawn; the table and the JSON hold all */

/* Memory readings of the validation (docs/validation.md, "memory per GPU":
 * 21 BLOOM runs, Megatron-DeepSpeed, ZeRO-1, full training, nvidia-smi):
 * errors (predicted - measured) / measured from -11.1% to +6.4%. */
#define BAND_LO (-0.111)
#define BAND_HI 0.064

/* The band applies to what the validation measured: DeepSpeed's memory
 * behaviour (Megatron-DeepSpeed, DeepSpeed), full training without offload,
 * ZeRO at most 1. Elsewhere there is none. */
static void error_band(const pp_strategy *s, double *lo, double *hi)
{
    int ds = s->framework == PP_FW_MEGATRON_DEEPSPEED || s->framework == PP_FW_DEEPSPEED;
    int covered = ds && s->ft.mode == PP_MODE_FULL && s->zero <= 1 && s->offload == PP_OFFLOAD_NONE;
    *lo = covered ? BAND_LO : 0;
    *hi = covered ? BAND_HI : 0;
}

/* ------------------------------------------------------------ page frame */

static void esc(pp__sbuf *b, const char *s) { pp__svg_esc(b, s); }

static void page_begin(pp__sbuf *b, const char *title, const pp_report_meta *meta)
{
    char date[64] = "unknown date";
    time_t t = (time_t)(meta ? meta->date : 0);
    struct tm tm;
    if (gmtime_r(&t, &tm)) strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);
    pp__sb_printf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                     "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<meta name=\"generator\" content=\"parplan %s\">\n<title>",
                  pp_version());
    esc(b, title);
    pp__sb_printf(b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<div id=\"tip\"></div>\n<header>\n<h1>", pp__report_css);
    esc(b, title);
    pp__sb_printf(b, "</h1>\n<p class=\"meta\">parplan <span class=\"version\">%s</span> \xc2\xb7 <time "
                     "datetime=\"%lld\">%s</time>",
                  pp_version(), meta ? meta->date : 0LL, date);
    if (meta && meta->command) {
        pp__sb_printf(b, " \xc2\xb7 <code class=\"command\">");
        esc(b, meta->command);
        pp__sb_printf(b, "</code>");
    }
    pp__sb_printf(b, "</p>\n</header>\n");
}

/* The run's JSON in a data block: '<' escaped so nothing can close it. */
static void page_end(pp__sbuf *b, const char *json)
{
    pp__sb_printf(b, "<footer class=\"meta\"><p>Every chart is drawn from the numbers embedded below (the run's "
                     "<code>--format json</code>); docs/report.md explains each one.</p></footer>\n"
                     "<script type=\"application/json\" id=\"parplan-data\">");
    for (const char *p = json ? json : "null"; *p; p++) {
        if (*p == '<') pp__sb_printf(b, "\\u003c");
        else pp__sb_printf(b, "%c", *p);
    }
    pp__sb_printf(b, "</script>\n<script>\n%s</script>\n</body>\n</html>\n", pp__report_js);
}

static char *json_text(cJSON *j)
{
    char *s = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    return s;
}

/* ------------------------------------------------------------ one plan */

static const char *prec(pp_precision p) { return pp_precision_name(p); }

static void strategy_line(char *out, size_t cap, const pp_strategy *s)
{
    int k = snprintf(out, cap, "%s (%s): dp %d, tp %d%s, pp %d, cp %d, ep %d, ZeRO-%d, %s, recompute %s, micro-batch %d x "
                     "%d, %s", pp_framework_name(s->framework), pp_strategy_launcher(s),
                     s->dp, s->tp, s->sp ? " +sp" : "", s->pp, s->cp, s->ep, s->zero, prec(s->precision),
                     pp_recompute_name(s->recompute), s->micro_batch, s->grad_accum, pp_schedule_name(s->schedule));
    if (s->schedule == PP_SCHED_INTERLEAVED && k > 0 && (size_t)k < cap) snprintf(out + k, cap - k, " v%d", s->virtual_stages);
    if (s->offload != PP_OFFLOAD_NONE && k > 0 && (size_t)k < cap)
        snprintf(out + strlen(out), cap - strlen(out), ", offload %s", pp_offload_name(s->offload));
    if (s->act_offload_layers > 0 && k > 0 && (size_t)k < cap)
        snprintf(out + strlen(out), cap - strlen(out), ", activations of %d blocks offloaded", s->act_offload_layers);
}

/* Up to TIMELINES_MAX stages: the peak, the first, the last, evenly between. */
static int pick_stages(const pp_memory *mem, int *out)
{
    int p = mem->nstages, n = 0;
    if (p <= TIMELINES_MAX) {
        out[n++] = mem->peak_stage;
        for (int i = 0; i < p; i++)
            if (i != mem->peak_stage) out[n++] = i;
        return n;
    }
    out[n++] = mem->peak_stage;
    for (int steps = TIMELINES_MAX - 2; n < TIMELINES_MAX && steps < p; steps++)
        for (int k = 0; k <= steps && n < TIMELINES_MAX; k++) {
            int i = (int)lround((double)k * (p - 1) / steps), dup = 0;
            for (int j = 0; j < n; j++) dup |= out[j] == i;
            if (!dup) out[n++] = i;
        }
    return n;
}

static void summary(pp__sbuf *b, const pp_plan *p)
{
    char g[32], u[32], st[32];
    pp__fmt_gib(g, sizeof g, p->memory.peak_bytes);
    pp__fmt_gib(u, sizeof u, p->memory.gpu_bytes);
    pp__fmt_secs(st, sizeof st, p->time.step_s);
    pp__sb_printf(b, "<p class=\"summary\"><b data-v=\"%.17g\">%.0f</b> tokens/s \xc2\xb7 MFU %.1f%% \xc2\xb7 step <span "
                     "data-v=\"%.17g\">%s</span> \xc2\xb7 peak <span class=\"peak-gib\" data-v=\"%.17g\">%s</span> GiB "
                     "on stage %d of %s GiB usable: <span class=\"%s\">%s</span>",
                  p->throughput.tokens_per_s, p->throughput.tokens_per_s, 100 * p->throughput.mfu, p->time.step_s, st,
                  p->memory.peak_bytes, g, p->memory.peak_stage, u, p->memory.fits ? "fits" : "nofit",
                  p->uncertainty.fit == PP_FIT_NO ? "does not fit" : pp_fit_name(p->uncertainty.fit));
    if (p->train.tokens > 0)
        pp__sb_printf(b, " \xc2\xb7 %.3g tokens: %.1f days, %.0f GPU-hours, $%.0f, %.0f kWh", p->train.tokens,
                      p->train.days, p->train.gpu_hours, p->train.cost_usd, p->train.energy_kwh);
    pp__sb_printf(b, "</p>\n");
}

static void timeline_figure(pp__sbuf *b, pp__chart_ctx *x, pp_mem_timeline *t, int all)
{
    const pp_memory *mem = &x->p->memory;
    int st[TIMELINES_MAX], n = all ? pick_stages(mem, st) : (st[0] = mem->peak_stage, 1);
    double lo, hi;
    error_band(&x->p->strategy, &lo, &hi);
    pp__sb_printf(b, "<figure class=\"timeline\" id=\"%s-memory\">\n", x->id);
    if (n > 1) {
        pp__sb_printf(b, "<div class=\"picker\">stage <select class=\"stage-pick\" data-figure=\"%s-memory\">", x->id);
        for (int k = 0; k < n; k++)
            pp__sb_printf(b, "<option value=\"%d\"%s>%d%s</option>", st[k], k ? "" : " selected", st[k],
                          st[k] == mem->peak_stage ? " (peak)" : "");
        pp__sb_printf(b, "</select>%s</div>\n", mem->nstages > n ? " (a selection of the stages)" : "");
    }
    for (int k = 0; k < n; k++) {
        pp_memory_timeline(x->m, &x->p->strategy, &mem->stages[st[k]], t);
        x->alt = k > 0;
        pp__svg_memory_timeline(b, x, t, lo, hi);
    }
    x->alt = 0;
    pp__sb_printf(b, "<figcaption>Memory of one GPU of the stage over one step, as the cost model counts it "
                     "(docs/memory.md): states, then activations growing block by block through the forward of the "
                     "micro-batches in flight and released through the backward, gradients appearing in the "
                     "backward, the optimizer step's temporaries. Hover for values.%s</figcaption>\n</figure>\n",
                  lo != 0 || hi != 0 ? " The I-bar at the peak spans where measured memory fell relative to the "
                                       "prediction in the validation (docs/validation.md)." : "");
}

static void plan_charts(pp__sbuf *b, pp__chart_ctx *x, pp_mem_timeline *t, int all_stages)
{
    timeline_figure(b, x, t, all_stages);
    pp__sb_printf(b, "<figure class=\"stages\">\n");
    pp__svg_stage_bars(b, x, t);
    pp__sb_printf(b, "<figcaption>Each stage at its own peak; the uneven first and last stages (embedding, LM "
                     "head, logits) and the stage split show here.</figcaption>\n</figure>\n<figure class=\"schedule\">\n");
    pp__svg_schedule(b, x);
    pp__sb_printf(b, "<figcaption>One step on every stage, each operation drawn to its predicted duration; grey is "
                     "idle (the bubble). Forward and backward split each stage's micro-batch time by the slowest "
                     "stage's breakdown (docs/report.md).</figcaption>\n</figure>\n<figure class=\"waterfall\">\n");
    pp__svg_waterfall(b, x);
    pp__sb_printf(b, "<figcaption>Where the step goes (docs/time.md). The hatched bar is DP/ZeRO traffic hidden "
                     "behind the backward: it costs no time.</figcaption>\n</figure>\n");
}

static void plan_section(pp__sbuf *b, const pp_model *m, const pp_cluster *c, const pp_plan *p, const char *id,
                         const char *heading, pp_mem_timeline *t)
{
    char line[512];
    strategy_line(line, sizeof line, &p->strategy);
    pp__sb_printf(b, "<section class=\"plan\" id=\"%s\">\n<h2>", id);
    esc(b, heading);
    pp__sb_printf(b, "</h2>\n<p class=\"strategy\">");
    esc(b, line);
    pp__sb_printf(b, "</p>\n");
    summary(b, p);
    pp__chart_ctx x = {m, c, p, id, 0};
    plan_charts(b, &x, t, 1);
    pp__report_strategy(b, &p->strategy, "Strategy in full");
    pp__sb_printf(b, "</section>\n");
}

/* ------------------------------------------------------------ estimate */

static void inputs(pp__sbuf *b, const pp_model *m, const pp_cluster *c)
{
    pp__sb_printf(b, "<section id=\"inputs\">\n<h2>Inputs</h2>\n<div class=\"inputs\">\n");
    pp__report_model(b, m);
    if (c) pp__report_cluster(b, c);
}

char *pp_report_estimate(const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_report_meta *meta)
{
    PP__C_NUMERIC;
    pp__sbuf b = {0};
    pp_mem_timeline *t = malloc(sizeof *t);
    cJSON *root = cJSON_CreateObject(), *plans = root ? cJSON_AddArrayToObject(root, "plans") : NULL;
    char *json = NULL;
    if (!t || !plans) goto fail;
    cJSON_AddStringToObject(root, "command", "estimate");
    cJSON_AddItemToArray(plans, pp__plan_json(m, c, p));
    json = json_text(root);
    root = NULL;
    if (!json) goto fail;
    char title[PP_NAME_LEN * 3 + 64];
    snprintf(title, sizeof title, "parplan estimate: %s on %d x %s (%s)", m->name, pp_cluster_gpus(c), c->gpu.name,
             c->name);
    page_begin(&b, title, meta);
    inputs(&b, m, c);
    pp__report_strategy(&b, &p->strategy, "Strategy");
    pp__sb_printf(&b, "</div>\n</section>\n");
    plan_section(&b, m, c, p, "plan-1", "The plan", t);
    page_end(&b, json);
    free(t);
    pp_free(json);
    return pp__sb_take(&b);
fail:
    cJSON_Delete(root);
    free(t);
    pp_free(json);
    b.oom = 1;
    return pp__sb_take(&b);
}

/* ------------------------------------------------------------ plan */

static void cell(pp__sbuf *b, double v, const char *fmt)
{
    pp__sb_printf(b, "<td class=\"n\" data-v=\"%.17g\">", v);
    pp__sb_printf(b, fmt, v);
    pp__sb_printf(b, "</td>");
}

static void topk_table(pp__sbuf *b, const pp_plan_list *l)
{
    int train = l->n > 0 && l->plans[0].train.tokens > 0;
    pp__sb_printf(b, "<table class=\"plans sortable\" id=\"topk\">\n<thead><tr><th class=\"n\">#</th><th class=\"n\">"
                     "tokens/s</th><th class=\"n\">MFU %%</th><th class=\"n\">step s</th><th class=\"n\">peak GiB</th>"
                     "<th class=\"n\">dp</th><th class=\"n\">tp</th><th class=\"n\">pp</th><th class=\"n\">cp</th>"
                     "<th class=\"n\">ep</th><th class=\"n\">ZeRO</th><th>offload</th><th>recompute</th><th>precision</th>"
                     "<th class=\"n\">micro-batch</th><th>schedule</th>%s</tr></thead>\n<tbody>\n",
                  train ? "<th class=\"n\">days</th><th class=\"n\">cost $</th>" : "");
    for (int i = 0; i < l->n; i++) {
        const pp_plan *p = &l->plans[i];
        const pp_strategy *s = &p->strategy;
        if (i < CHARTED_MAX)
            pp__sb_printf(b, "<tr data-plan=\"%d\"><td class=\"n\" data-v=\"%d\"><a href=\"#plan-%d\">%d</a></td>",
                          i + 1, i + 1, i + 1, i + 1);
        else
            pp__sb_printf(b, "<tr data-plan=\"%d\"><td class=\"n\" data-v=\"%d\">%d</td>", i + 1, i + 1, i + 1);
        cell(b, p->throughput.tokens_per_s, "%.0f");
        cell(b, 100 * p->throughput.mfu, "%.1f");
        cell(b, p->time.step_s, "%.3f");
        pp__sb_printf(b, "<td class=\"n\" data-v=\"%.17g\">%.2f</td>", p->memory.peak_bytes, p->memory.peak_bytes / GIB);
        pp__sb_printf(b, "<td>%s</td>", pp_framework_name(s->framework));
        pp__sb_printf(b, "<td class=\"n\">%d</td><td class=\"n\">%d%s</td><td class=\"n\">%d</td><td class=\"n\">%d</td>"
                         "<td class=\"n\">%d</td><td class=\"n\">%d</td><td>%s</td><td>%s</td><td>%s</td>"
                         "<td class=\"n\" data-v=\"%d\">%d x %d</td><td>%s",
                      s->dp, s->tp, s->sp ? "+sp" : "", s->pp, s->cp, s->ep, s->zero, pp_offload_name(s->offload),
                      pp_recompute_name(s->recompute), prec(s->precision), s->micro_batch, s->micro_batch,
                      s->grad_accum, pp_schedule_name(s->schedule));
        if (s->schedule == PP_SCHED_INTERLEAVED) pp__sb_printf(b, " v%d", s->virtual_stages);
        pp__sb_printf(b, "</td>");
        if (train) {
            cell(b, p->train.days, "%.1f");
            cell(b, p->train.cost_usd, "%.0f");
        }
        pp__sb_printf(b, "</tr>\n");
    }
    pp__sb_printf(b, "</tbody>\n</table>\n<p class=\"meta\">Click a column to sort; the rank links to the plan's "
                     "charts%s.</p>\n", l->n > CHARTED_MAX ? " (the first 20 plans are drawn)" : "");
}

/* Why #2 is not #1: its step (and memory) term by term against #1's. */
static void runner_up(pp__sbuf *b, const pp_plan_list *l)
{
    if (l->n < 2) {
        pp__sb_printf(b, "<p>Only one plan was found, so there is no runner-up.</p>\n");
        return;
    }
    const pp_plan *a = &l->plans[0], *z = &l->plans[1];
    const pp_time *ta = &a->time, *tz = &z->time;
    struct { const char *name; double d; } d[] = {
        {"compute", tz->compute_s - ta->compute_s},       {"recompute", tz->recompute_s - ta->recompute_s},
        {"TP comm", tz->tp_comm_s - ta->tp_comm_s},       {"CP comm", tz->cp_comm_s - ta->cp_comm_s},
        {"EP comm", tz->ep_comm_s - ta->ep_comm_s},       {"PP comm", tz->pp_comm_s - ta->pp_comm_s},
        {"pipeline bubble", tz->bubble_s - ta->bubble_s}, {"DP/ZeRO exposed", tz->dp_comm_exposed_s - ta->dp_comm_exposed_s},
        {"optimizer", tz->optimizer_s - ta->optimizer_s}, {"offload", tz->offload_s - ta->offload_s}};
    int n = (int)(sizeof d / sizeof *d), order[10];
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = 1; i < n; i++) /* by size of the difference, largest first */
        for (int j = i; j > 0 && fabs(d[order[j]].d) > fabs(d[order[j - 1]].d); j--) {
            int k = order[j];
            order[j] = order[j - 1], order[j - 1] = k;
        }
    char sa[32], sz[32], line[512];
    pp__fmt_secs(sa, sizeof sa, ta->step_s);
    pp__fmt_secs(sz, sizeof sz, tz->step_s);
    strategy_line(line, sizeof line, &z->strategy);
    pp__sb_printf(b, "<p id=\"runner-up\">The runner-up, <a href=\"#plan-2\">#2</a> (");
    esc(b, line);
    pp__sb_printf(b, "), takes %s per step against %s for #1 (%+.1f%%)", sz, sa,
                  ta->step_s > 0 ? 100 * (tz->step_s - ta->step_s) / ta->step_s : 0);
    if (l->objective != PP_OBJ_THROUGHPUT)
        pp__sb_printf(b, " and ranks behind by the %s objective", l->objective == PP_OBJ_COST ? "cost" : "memory");
    pp__sb_printf(b, ". The terms that differ most:</p>\n<ul class=\"runner-up\">\n");
    for (int k = 0; k < 4; k++) {
        const char *name = d[order[k]].name;
        double v = d[order[k]].d;
        if (fabs(v) <= 0.005 * ta->step_s) break;
        char s[32];
        pp__fmt_secs(s, sizeof s, fabs(v));
        pp__sb_printf(b, "<li>%s: %s%s</li>\n", name, v > 0 ? "+" : "\xe2\x88\x92", s);
    }
    double eh = tz->expert_host_s - ta->expert_host_s; /* inside compute and recompute */
    if (fabs(eh) > 0.005 * ta->step_s) {
        char s[32];
        pp__fmt_secs(s, sizeof s, fabs(eh));
        pp__sb_printf(b, "<li>of compute and recompute, waiting on expert launches: %s%s</li>\n",
                      eh > 0 ? "+" : "\xe2\x88\x92", s);
    }
    char ga[32], gz[32];
    pp__fmt_gib(ga, sizeof ga, a->memory.peak_bytes);
    pp__fmt_gib(gz, sizeof gz, z->memory.peak_bytes);
    pp__sb_printf(b, "<li>peak memory: %s GiB against %s GiB</li>\n</ul>\n", gz, ga);
}

static char *plan_json(const pp_model *m, const pp_cluster *c, const pp_plan_list *l, const char *explain)
{
    cJSON *root = cJSON_CreateObject(), *plans = root ? cJSON_AddArrayToObject(root, "plans") : NULL;
    if (!plans) {
        cJSON_Delete(root);
        return NULL;
    }
    cJSON_AddStringToObject(root, "command", "plan");
    for (int i = 0; i < l->n; i++) cJSON_AddItemToArray(plans, pp__plan_json(m, c, &l->plans[i]));
    if (explain) cJSON_AddStringToObject(root, "explain", explain);
    return json_text(root);
}

char *pp_report_plan(const pp_model *m, const pp_cluster *c, const pp_search_opts *o, const pp_plan_list *l,
                     const char *explain, const pp_report_meta *meta)
{
    PP__C_NUMERIC;
    pp__sbuf b = {0};
    pp_mem_timeline *t = malloc(sizeof *t);
    char *json = plan_json(m, c, l, explain);
    if (!t || !json) {
        free(t);
        pp_free(json);
        return NULL;
    }
    char title[PP_NAME_LEN * 3 + 64];
    snprintf(title, sizeof title, "parplan plan: %s on %d x %s (%s)", m->name, pp_cluster_gpus(c), c->gpu.name, c->name);
    page_begin(&b, title, meta);
    pp__sb_printf(&b, "<nav><b>Contents</b><ul><li><a href=\"#inputs\">Inputs</a></li><li><a href=\"#top\">Top %d "
                      "plans</a></li>", l->n);
    for (int i = 0; i < l->n && i < CHARTED_MAX; i++)
        pp__sb_printf(&b, "<li><a href=\"#plan-%d\">Plan #%d</a></li>", i + 1, i + 1);
    pp__sb_printf(&b, "<li><a href=\"#why\">Why #1</a></li></ul></nav>\n");
    inputs(&b, m, c);
    pp__report_search(&b, o);
    pp__sb_printf(&b, "</div>\n</section>\n<section id=\"top\">\n<h2>Top %d plans</h2>\n", l->n);
    const pp_search_stats *st = &l->stats;
    pp__sb_printf(&b, "<p class=\"meta\">searched %lld valid strategies: %lld over memory by bound, %lld beyond the "
                      "top %d by bound, %lld costed (%lld fit), %d stage-split ILPs</p>\n",
                  st->enumerated, st->pruned_memory, st->pruned_bound, o->top_k, st->costed, st->fitting, st->ilp_solved);
    topk_table(&b, l);
    pp__sb_printf(&b, "</section>\n");
    for (int i = 0; i < l->n && i < CHARTED_MAX; i++) {
        char id[32], head[48];
        snprintf(id, sizeof id, "plan-%d", i + 1);
        snprintf(head, sizeof head, "Plan #%d", i + 1);
        plan_section(&b, m, c, &l->plans[i], id, head, t);
    }
    pp__sb_printf(&b, "<section id=\"why\">\n<h2>Why #1</h2>\n");
    runner_up(&b, l);
    if (explain) {
        pp__sb_printf(&b, "<h3>parplan plan --explain</h3>\n<pre class=\"explain\">");
        esc(&b, explain);
        pp__sb_printf(&b, "</pre>\n");
    }
    pp__sb_printf(&b, "</section>\n");
    page_end(&b, json);
    free(t);
    pp_free(json);
    return pp__sb_take(&b);
}

/* ------------------------------------------------------------ compare */

/* The options drawn: those with a plan, the first CHARTED_MAX of them. */
static int charted(const pp_compare_result *r, int i)
{
    if (r->options[i].status != PP_OK) return 0;
    int before = 0;
    for (int k = 0; k < i; k++) before += r->options[k].status == PP_OK;
    return before < CHARTED_MAX;
}

static void options_table(pp__sbuf *b, const pp_compare_result *r)
{
    pp__sb_printf(b, "<table class=\"plans sortable\" id=\"options\">\n<thead><tr><th class=\"n\">#</th><th>cluster</th>"
                     "<th class=\"n\">GPUs</th><th>best plan</th><th class=\"n\">days</th><th class=\"n\">cost $</th>"
                     "<th class=\"n\">kWh</th><th>Pareto</th></tr></thead>\n<tbody>\n");
    for (int i = 0; i < r->n; i++) {
        const pp_compare_option *e = &r->options[i];
        pp__sb_printf(b, "<tr data-option=\"%d\"><td class=\"n\" data-v=\"%d\">", i, i);
        if (charted(r, i)) pp__sb_printf(b, "<a href=\"#opt-%d\">%d</a>", i, i);
        else pp__sb_printf(b, "%d", i);
        pp__sb_printf(b, "</td><td>");
        esc(b, r->clusters[e->cluster].cluster.name);
        pp__sb_printf(b, "</td><td class=\"n\">%d</td><td>", e->gpus);
        if (e->status != PP_OK) {
            esc(b, e->error);
            pp__sb_printf(b, "</td><td></td><td></td><td></td><td></td></tr>\n");
            continue;
        }
        char line[512];
        strategy_line(line, sizeof line, &e->plan.strategy);
        esc(b, line);
        pp__sb_printf(b, "</td>");
        cell(b, e->days, "%.1f");
        if (isfinite(e->cost_usd)) cell(b, e->cost_usd, "%.0f");
        else pp__sb_printf(b, "<td class=\"n\">?</td>");
        cell(b, e->energy_kwh, "%.0f");
        pp__sb_printf(b, "<td>%s</td></tr>\n", e->pareto ? "yes" : "");
    }
    pp__sb_printf(b, "</tbody>\n</table>\n");
}

static char *compare_json(const pp_model *m, const pp_compare_result *r)
{
    char *text = pp_compare_to_json(m, r);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    pp_free(text);
    cJSON *root = j ? cJSON_CreateObject() : NULL;
    if (!root) {
        cJSON_Delete(j);
        return NULL;
    }
    cJSON_AddStringToObject(root, "command", "compare");
    cJSON_AddItemToObject(root, "compare", j);
    return json_text(root);
}

char *pp_report_compare(const pp_model *m, const pp_compare_result *r, const pp_report_meta *meta)
{
    PP__C_NUMERIC;
    pp__sbuf b = {0};
    pp_mem_timeline *t = malloc(sizeof *t);
    char *json = compare_json(m, r);
    if (!t || !json) {
        free(t);
        pp_free(json);
        return NULL;
    }
    char title[PP_NAME_LEN + 64];
    snprintf(title, sizeof title, "parplan compare: %s on %d cluster type%s", m->name, r->nclusters,
             r->nclusters == 1 ? "" : "s");
    page_begin(&b, title, meta);
    inputs(&b, m, NULL);
    pp__report_search(&b, &r->opts.search);
    for (int ci = 0; ci < r->nclusters; ci++) pp__report_cluster(&b, &r->clusters[ci].cluster);
    pp__sb_printf(&b, "</div>\n</section>\n<section id=\"pareto\">\n<h2>Cost against time to train</h2>\n<figure>\n");
    unsigned char *linked = calloc((size_t)(r->n > 0 ? r->n : 1), 1);
    if (!linked) b.oom = 1;
    for (int i = 0; linked && i < r->n; i++) linked[i] = (unsigned char)charted(r, i);
    pp__compare_svg(&b, r, 1, "opt-", linked);
    free(linked);
    pp__sb_printf(&b, "<figcaption>Each point is a cluster type at a GPU count with its best plan; click one for "
                      "its charts.</figcaption>\n</figure>\n");
    options_table(&b, r);
    pp__sb_printf(&b, "</section>\n");
    for (int i = 0; i < r->n; i++) {
        const pp_compare_option *e = &r->options[i];
        if (!charted(r, i)) continue;
        pp_cluster c = r->clusters[e->cluster].cluster;
        pp_cluster_resize(&c, 0, e->gpus, NULL);
        char id[32], head[PP_NAME_LEN + 64];
        snprintf(id, sizeof id, "opt-%d", i);
        snprintf(head, sizeof head, "Option %d: %s x %d GPUs", i, c.name, e->gpus);
        plan_section(&b, m, &c, &e->plan, id, head, t);
    }
    page_end(&b, json);
    free(t);
    pp_free(json);
    return pp__sb_take(&b);
}
