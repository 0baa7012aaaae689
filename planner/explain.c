/*
 * explain.c — words for a ranking: what separates the best plan from the
 * runner-up (the step-time term that moves most), why common alternatives
 * lose (each found by a restricted search: OOM by how much on which stage,
 * or the term that dominates), and, when nothing fits, which change would
 * fit, each checked by searching again.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner.h"

#define GIB 1073741824.0

typedef struct sbuf {
    char *s;
    size_t n, cap;
    int failed;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t room = b->cap - b->n;
        va_start(ap, fmt);
        int k = b->s ? vsnprintf(b->s + b->n, room, fmt, ap) : -1;
        va_end(ap);
        if (k >= 0 && (size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 1024;
        while (k >= 0 && cap < b->n + (size_t)k + 1) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

static pp_status sb_done(sbuf *b, char **text, pp_error *err)
{
    if (b->failed || !b->s) {
        free(b->s);
        *text = NULL;
        return pp__fail(err, PP_ERR_NOMEM, "out of memory writing the explanation");
    }
    *text = b->s;
    return PP_OK;
}

/* "dp 8, tp 8, pp 16 (v 2), cp 1, ep 1 +sp, ZeRO-1, bf16, recompute full, mb 1 x 24, interleaved" */
static void summary(const pp_plan *p, char *buf, size_t cap)
{
    const pp_strategy *s = &p->strategy;
    int n;
    const char *const *prec = pp_enum_names(PP_ENUM_PRECISION, &n);
    char rc[48];
    if (s->recompute == PP_RECOMPUTE_FULL && s->per_stage_recompute) snprintf(rc, sizeof rc, "full (per stage)");
    else if (s->recompute == PP_RECOMPUTE_FULL && s->recompute_layers >= 0)
        snprintf(rc, sizeof rc, "full (%d blocks/stage)", s->recompute_layers);
    else snprintf(rc, sizeof rc, "%s", pp_recompute_name(s->recompute));
    snprintf(buf, cap, "dp %d, tp %d%s, pp %d, cp %d, ep %d, ZeRO-%d%s%s, %s, recompute %s, micro-batch %d x %d, %s%s",
             s->dp, s->tp, s->sp ? " +sp" : "", s->pp, s->cp, s->ep, s->zero, s->offload ? ", offload " : "",
             s->offload ? pp_offload_name(s->offload) : "", prec[s->precision], rc, s->micro_batch, s->grad_accum,
             pp_schedule_name(s->schedule), s->schedule == PP_SCHED_INTERLEAVED ? " (v " : "");
    if (s->schedule == PP_SCHED_INTERLEAVED) {
        size_t l = strlen(buf);
        snprintf(buf + l, cap - l, "%d)", s->virtual_stages);
    }
}

typedef struct term {
    const char *name;
    double a, b;
} term;

/* The term whose increase from a to b is largest. */
static term dominant(const pp_plan *a, const pp_plan *b)
{
    const pp_time *x = &a->time, *y = &b->time;
    term t[] = {{"compute", x->compute_s, y->compute_s}, {"recomputation", x->recompute_s, y->recompute_s},
                {"TP communication", x->tp_comm_s, y->tp_comm_s}, {"CP communication", x->cp_comm_s, y->cp_comm_s},
                {"EP all-to-all", x->ep_comm_s, y->ep_comm_s}, {"pipeline send/recv", x->pp_comm_s, y->pp_comm_s},
                {"exposed DP/ZeRO communication", x->dp_comm_exposed_s, y->dp_comm_exposed_s},
                {"pipeline bubble", x->bubble_s, y->bubble_s}, {"optimizer step", x->optimizer_s, y->optimizer_s},
                {"offload traffic", x->offload_s, y->offload_s}};
    int best = 0;
    for (size_t i = 1; i < sizeof t / sizeof *t; i++)
        if (t[i].b - t[i].a > t[best].b - t[best].a) best = (int)i;
    return t[best];
}

static void strategy_diff(sbuf *b, const pp_strategy *x, const pp_strategy *y)
{
    struct { const char *name; int a, b; } f[] = {
        {"dp", x->dp, y->dp}, {"tp", x->tp, y->tp}, {"pp", x->pp, y->pp}, {"cp", x->cp, y->cp}, {"ep", x->ep, y->ep},
        {"sp", x->sp, y->sp}, {"ZeRO", x->zero, y->zero}, {"micro-batch", x->micro_batch, y->micro_batch},
        {"virtual stages", x->virtual_stages, y->virtual_stages}};
    int any = 0;
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        if (f[i].a != f[i].b) sb_printf(b, "%s%s %d vs %d", any++ ? ", " : " (", f[i].name, f[i].a, f[i].b);
    if (x->recompute != y->recompute)
        sb_printf(b, "%srecompute %s vs %s", any++ ? ", " : " (", pp_recompute_name(x->recompute), pp_recompute_name(y->recompute));
    if (x->offload != y->offload)
        sb_printf(b, "%soffload %s vs %s", any++ ? ", " : " (", pp_offload_name(x->offload), pp_offload_name(y->offload));
    if (x->schedule != y->schedule)
        sb_printf(b, "%s%s vs %s", any++ ? ", " : " (", pp_schedule_name(x->schedule), pp_schedule_name(y->schedule));
    if (x->precision != y->precision) {
        int n;
        const char *const *pn = pp_enum_names(PP_ENUM_PRECISION, &n);
        sb_printf(b, "%s%s vs %s", any++ ? ", " : " (", pn[x->precision], pn[y->precision]);
    }
    if (!any) sb_printf(b, " (same degrees; the stage split or recompute differs)");
    else sb_printf(b, ")");
}

/* One line: how plan `alt` compares with the best plan `best`. */
static void versus(sbuf *b, const pp_plan *best, const pp_plan *alt)
{
    double d = alt->time.step_s - best->time.step_s;
    if (fabs(d) <= 1e-12 * best->time.step_s) {
        sb_printf(b, "as fast (%.3f s per step); it ranks lower on peak memory (%.2f vs %.2f GiB) or, when that "
                     "ties too, on the fixed order that prefers fewer stages, less TP, CP and EP",
                  best->time.step_s, alt->memory.peak_bytes / GIB, best->memory.peak_bytes / GIB);
        return;
    }
    term t = d >= 0 ? dominant(best, alt) : dominant(alt, best);
    sb_printf(b, "%.*f%% %s per step (%.3f s vs %.3f s); the term that moves most is %s: %.3f s vs %.3f s",
              fabs(d) < 0.01 * best->time.step_s ? 2 : 1, 100 * fabs(d) / best->time.step_s, d >= 0 ? "slower" : "faster",
              alt->time.step_s, best->time.step_s, t.name, d >= 0 ? t.b : t.a, d >= 0 ? t.a : t.b);
}

static void oom_line(sbuf *b, const pp_plan *near, double usable)
{
    const pp_stage_mem *st = &near->memory.stages[near->memory.peak_stage];
    char sum[256];
    summary(near, sum, sizeof sum);
    sb_printf(b, "its least-memory plan (%s) needs %.2f GiB on stage %d, %.2f GiB more than the %.2f GiB usable "
                 "(states %.2f, activations %.2f, buffers %.2f GiB; peak %s)",
              sum, near->memory.peak_bytes / GIB, near->memory.peak_stage, (near->memory.peak_bytes - usable) / GIB,
              usable / GIB, (st->params_bytes + st->grads_bytes + st->optimizer_bytes) / GIB,
              st->activations_bytes / GIB, st->buffers_bytes / GIB,
              st->peak_phase == PP_PHASE_OPTIMIZER ? "in the optimizer step" : "in forward/backward");
}

static void pin(pp_int_set *s, int v)
{
    s->n = 1;
    s->v[0] = v;
}

/* Runs a restricted search and writes one line about it. */
static void alternative(sbuf *b, const pp_model *m, const pp_cluster *c, const pp_search_opts *o, const char *label,
                        const pp_plan *best)
{
    pp_search_opts a = *o;
    a.top_k = 1;
    pp_plan_list l;
    pp_error e = {""};
    pp_status st = pp_plan_search(m, c, &a, &l, &e);
    char sum[256];
    sb_printf(b, "- %s: ", label);
    if (st == PP_OK) {
        summary(&l.plans[0], sum, sizeof sum);
        double price = o->price_usd_per_gpu_hour > 0 ? o->price_usd_per_gpu_hour : c->gpu.price_usd_per_hour;
        if (pp__plan_cmp(c, &l.plans[0], best, o->objective, price) == 0) sb_printf(b, "that is #1.\n");
        else {
            versus(b, best, &l.plans[0]);
            sb_printf(b, ". Best of them: %s.\n", sum);
        }
    } else if (st == PP_ERR_INFEASIBLE && l.nearest) {
        sb_printf(b, "does not fit: ");
        oom_line(b, l.nearest, l.usable_bytes);
        sb_printf(b, ".\n");
    } else {
        sb_printf(b, "not possible here: %s.\n", e.msg);
    }
    pp_plan_list_free(&l);
}

static int pinned(const pp_search_opts *o)
{
    const pp_int_set *s[] = {&o->dp, &o->tp, &o->pp, &o->cp, &o->ep, &o->sp, &o->zero, &o->micro_batch, &o->virtual_stages};
    for (size_t i = 0; i < sizeof s / sizeof *s; i++)
        if (s[i]->n) return 1;
    return o->precisions || o->offloads || o->recomputes || o->schedules;
}

static void unpin(pp_search_opts *a)
{
    pp_int_set none = {0};
    a->dp = a->tp = a->pp = a->cp = a->ep = a->sp = a->zero = a->micro_batch = a->virtual_stages = none;
    a->precisions = a->offloads = a->recomputes = a->schedules = 0;
}

pp_status pp_plan_explain(const pp_model *m, const pp_cluster *c, const pp_search_opts *o, const pp_plan_list *list,
                          char **text, pp_error *err)
{
    sbuf b = {0};
    *text = NULL;
    if (!list || list->n < 1) return pp__fail(err, PP_ERR_INPUT, "--explain: no plan to explain");
    const pp_plan *best = &list->plans[0];
    char sum[256];
    summary(best, sum, sizeof sum);
    sb_printf(&b, "#1 %s.\n", sum);
    if (list->n >= 2) {
        sb_printf(&b, "#2 is ");
        versus(&b, best, &list->plans[1]);
        sb_printf(&b, "; #2 differs in");
        strategy_diff(&b, &best->strategy, &list->plans[1].strategy);
        sb_printf(&b, ".\n");
    }
    sb_printf(&b, "Common alternatives:\n");
    pp_search_opts a = *o;
    pin(&a.tp, 1), pin(&a.pp, 1), pin(&a.cp, 1), pin(&a.ep, 1), pin(&a.zero, 3);
    alternative(&b, m, c, &a, "pure data parallelism with ZeRO-3 (FSDP)", best);
    a = *o;
    int dom = c->nvlink_domain > 0 ? c->nvlink_domain : c->gpus_per_node, t = o->max_tp_per_node > 0 ? o->max_tp_per_node : dom;
    if (t > pp_cluster_gpus(c)) t = pp_cluster_gpus(c);
    char label[96];
    snprintf(label, sizeof label, "tensor parallelism across the node (tp %d)", t);
    if (t > 1 && m->heads % t == 0 && m->kv_heads % t == 0) {
        pin(&a.tp, t);
        alternative(&b, m, c, &a, label, best);
    } else {
        sb_printf(&b, "- %s: tp %d does not divide the %d heads / %d kv heads.\n", label, t, m->heads, m->kv_heads);
    }
    a = *o;
    pin(&a.pp, 1);
    alternative(&b, m, c, &a, "no pipeline (pp 1)", best);
    if (pinned(o)) {
        a = *o;
        unpin(&a);
        alternative(&b, m, c, &a, "without your restrictions", best);
    }
    return sb_done(&b, text, err);
}

/* Re-searches with one change; one line saying whether it fits. */
static void try_change(sbuf *b, const pp_model *m, const pp_cluster *c, const pp_search_opts *o, const char *what)
{
    pp_search_opts a = *o;
    a.top_k = 1;
    pp_plan_list l;
    pp_error e = {""};
    pp_status st = pp_plan_search(m, c, &a, &l, &e);
    char sum[256];
    if (st == PP_OK) {
        summary(&l.plans[0], sum, sizeof sum);
        sb_printf(b, "- %s: fits (%.2f of %.2f GiB, %.0f tokens/s) with %s.\n", what, l.plans[0].memory.peak_bytes / GIB,
                  l.usable_bytes / GIB, l.plans[0].throughput.tokens_per_s, sum);
    } else if (st == PP_ERR_INFEASIBLE && l.nearest) {
        sb_printf(b, "- %s: still does not fit (needs %.2f GiB).\n", what, l.nearest->memory.peak_bytes / GIB);
    } else {
        sb_printf(b, "- %s: %s.\n", what, e.msg[0] ? e.msg : "no valid strategy");
    }
    pp_plan_list_free(&l);
}

/* The smallest multiple of the cluster (x2, x4, ...) on which a plan fits. */
static void more_gpus(sbuf *b, const pp_model *m, const pp_cluster *c, const pp_search_opts *o)
{
    for (int f = 2; f <= 64; f *= 2) {
        pp_cluster big = *c;
        pp_error e;
        if (pp_cluster_resize(&big, c->nodes * f, 0, &e)) break;
        pp_search_opts a = *o;
        a.top_k = 1;
        pp_plan_list l;
        pp_status st = pp_plan_search(m, &big, &a, &l, &e);
        char sum[256] = "";
        if (st == PP_OK) summary(&l.plans[0], sum, sizeof sum);
        pp_plan_list_free(&l);
        if (st == PP_OK) {
            sb_printf(b, "- more GPUs: fits on %d GPUs (%d nodes) with %s.\n", pp_cluster_gpus(&big), big.nodes, sum);
            return;
        }
    }
    sb_printf(b, "- more GPUs: no fit up to 64 times the GPUs at this global batch.\n");
}

pp_status pp_plan_why_infeasible(const pp_model *m, const pp_cluster *c, const pp_search_opts *o,
                                 const pp_plan_list *list, char **text, pp_error *err)
{
    sbuf b = {0};
    *text = NULL;
    double usable = list ? list->usable_bytes : 0;
    if (list && list->nearest) {
        sb_printf(&b, "Nothing fits: ");
        oom_line(&b, list->nearest, usable);
        sb_printf(&b, ".\n");
    } else {
        sb_printf(&b, "Nothing fits in %.2f GiB per GPU.\n", usable / GIB);
    }
    sb_printf(&b, "What would fit (each checked by searching again):\n");
    more_gpus(&b, m, c, o);
    pp_search_opts a = *o;
    if (o->offloads && o->offloads != (1u << PP_OFFLOAD_COUNT) - 1) {
        a.offloads = 0;
        try_change(&b, m, c, &a, "allow offload (ZeRO-Offload of optimizer states and parameters)");
    }
    a = *o;
    if (o->recomputes && !(o->recomputes >> PP_RECOMPUTE_FULL & 1)) {
        a.recomputes = 0;
        try_change(&b, m, c, &a, "allow full activation recomputation");
    }
    a = *o;
    int mb_min = 0;
    for (int i = 0; i < o->micro_batch.n; i++)
        if (!mb_min || o->micro_batch.v[i] < mb_min) mb_min = o->micro_batch.v[i];
    if (mb_min > 1) {
        pin(&a.micro_batch, 1);
        try_change(&b, m, c, &a, "micro-batch 1");
    }
    a = *o;
    if (o->zero.n && o->zero.n < 4) {
        a.zero.n = 0;
        try_change(&b, m, c, &a, "any ZeRO stage");
    }
    a = *o;
    if (o->dp.n || o->tp.n || o->pp.n || o->cp.n || o->ep.n) {
        a.dp.n = a.tp.n = a.pp.n = a.cp.n = a.ep.n = 0;
        try_change(&b, m, c, &a, "any parallel degrees");
    }
    return sb_done(&b, text, err);
}
