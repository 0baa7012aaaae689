/*
 * explain.c — words for a ranking: what separates the best plan from the
 * runner-up (the step-time term that moves most), why common alternatives
 * lose (each found by a restricted search: OOM by how much on which stage,
 * or the term that dominates), and, when a plan does not fit, which
 * changes would: one mechanism for `estimate` (a strategy out of memory,
 * pp_oom_advice) and `plan` (nothing fits, pp_plan_why_infeasible). The
 * same header says by how much, on which stage and which term dominates;
 * each candidate change is checked (estimate: re-estimated; plan: searched
 * again), the ones that fit are kept when no smaller change fits, and they
 * are listed fastest first, those on the same GPUs before those needing
 * more.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/framework.h"
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
    char rc[128], mods[96];
    if (s->recompute == PP_RECOMPUTE_SELECTIVE && s->recompute_modules)
        snprintf(rc, sizeof rc, "selective (%s)", pp_rc_modules_format(s->recompute_modules, ',', mods, sizeof mods));
    else if (s->recompute == PP_RECOMPUTE_FULL && s->per_stage_recompute) snprintf(rc, sizeof rc, "full (per stage)");
    else if (s->recompute == PP_RECOMPUTE_FULL && s->recompute_layers >= 0)
        snprintf(rc, sizeof rc, "full (%d blocks/stage)", s->recompute_layers);
    else snprintf(rc, sizeof rc, "%s", pp_recompute_name(s->recompute));
    char moe[64] = "";
    if (s->etp > 0 && s->etp != s->tp) snprintf(moe, sizeof moe, " (experts tp %d)", s->etp);
    if (s->ep > 1 && s->ep_dispatch) strncat(moe, " hierarchical", sizeof moe - strlen(moe) - 1);
    if (s->ep > 1 && s->overlap_ep) strncat(moe, " overlapped", sizeof moe - strlen(moe) - 1);
    snprintf(buf, cap, "dp %d, tp %d%s, pp %d, cp %d, ep %d%s, ZeRO-%d%s%s, %s%s, recompute %s, micro-batch %d x %d, %s%s",
             s->dp, s->tp, s->sp ? " +sp" : "", s->pp, s->cp, s->ep, moe, s->zero, s->offload ? ", offload " : "",
             s->offload ? pp_offload_name(s->offload) : "", prec[s->precision],
             s->precision == PP_PREC_FP8 && s->fp8_param_gather > 0 ? " (fp8 primary weights)" : "", rc, s->micro_batch,
             s->grad_accum,
             pp_schedule_name(s->schedule), s->schedule == PP_SCHED_INTERLEAVED ? " (v " : "");
    if (s->schedule == PP_SCHED_INTERLEAVED) {
        size_t l = strlen(buf);
        snprintf(buf + l, cap - l, "%d)", s->virtual_stages);
    }
    if (s->act_offload_layers > 0) {
        size_t l = strlen(buf);
        snprintf(buf + l, cap - l, ", activations of %d blocks offloaded", s->act_offload_layers);
    }
    if (s->opt_states == PP_OPT_STATES_BF16) {
        size_t l = strlen(buf);
        snprintf(buf + l, cap - l, ", bf16 optimizer states");
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
    else if (x->recompute_modules != y->recompute_modules) {
        char mx[96], my[96];
        pp_rc_modules_format(x->recompute_modules ? x->recompute_modules : PP_RC_CORE_ATTN, ',', mx, sizeof mx);
        pp_rc_modules_format(y->recompute_modules ? y->recompute_modules : PP_RC_CORE_ATTN, ',', my, sizeof my);
        sb_printf(b, "%srecompute modules %s vs %s", any++ ? ", " : " (", mx, my);
    }
    if (x->offload != y->offload)
        sb_printf(b, "%soffload %s vs %s", any++ ? ", " : " (", pp_offload_name(x->offload), pp_offload_name(y->offload));
    if (x->schedule != y->schedule)
        sb_printf(b, "%s%s vs %s", any++ ? ", " : " (", pp_schedule_name(x->schedule), pp_schedule_name(y->schedule));
    if (x->precision != y->precision) {
        int n;
        const char *const *pn = pp_enum_names(PP_ENUM_PRECISION, &n);
        sb_printf(b, "%s%s vs %s", any++ ? ", " : " (", pn[x->precision], pn[y->precision]);
    } else if (x->precision == PP_PREC_FP8 && (x->fp8_param_gather > 0) != (y->fp8_param_gather > 0))
        sb_printf(b, "%s%s vs %s weights", any++ ? ", " : " (", x->fp8_param_gather > 0 ? "fp8 primary" : "bf16",
                  y->fp8_param_gather > 0 ? "fp8 primary" : "bf16");
    const char *lx = pp_strategy_launcher(x), *ly = pp_strategy_launcher(y);
    if (x->framework == y->framework && strcmp(lx, ly)) sb_printf(b, "%slauncher %s vs %s", any++ ? ", " : " (", lx, ly);
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
    double ea = alt->time.expert_host_s, eb = best->time.expert_host_s; /* inside compute and recompute */
    if (fabs(ea - eb) > 0.005 * best->time.step_s)
        sb_printf(b, " (of compute and recompute, waiting on expert launches %.3f s vs %.3f s)", ea, eb);
}

/* The largest part of a stage's memory, by name; *bytes its size. */
static const char *dominant_term(const pp_stage_mem *st, double *bytes)
{
    struct { const char *name; double v; } t[] = {
        {"weights", st->params_bytes}, {"gradients", st->grads_bytes}, {"optimizer states", st->optimizer_bytes},
        {"activations", st->activations_bytes}, {"buffers", st->buffers_bytes}};
    int k = 0;
    for (int i = 1; i < 5; i++)
        if (t[i].v > t[k].v) k = i;
    *bytes = t[k].v;
    /* the loss's tensors count only when larger than the backward working set (memory.c) */
    if (k == 4 && st->logits_bytes >= st->recompute_bytes && st->logits_bytes > 0.5 * st->buffers_bytes)
        return "buffers (mostly the logits of the last stage)";
    if (k == 4 && st->zero_gather_bytes > 0.5 * st->buffers_bytes) return "buffers (mostly ZeRO-3's gathered weights)";
    return t[k].name;
}

/* By how much, on which stage, and which term dominates. */
static void oom_numbers(sbuf *b, const pp_plan *p, double usable)
{
    const pp_memory *mem = &p->memory;
    const pp_stage_mem *st = &mem->stages[mem->peak_stage];
    double dom;
    const char *dom_name = dominant_term(st, &dom);
    if (mem->load_bytes > usable)
        sb_printf(b, "needs %.2f GiB while the model loads, %.2f GiB (%.0f%%) more than the %.2f GiB usable: "
                     "QLoRA under DeepSpeed ZeRO-3 quantises the whole model onto every GPU before DeepSpeed partitions it",
                  mem->load_bytes / GIB, (mem->load_bytes - usable) / GIB, 100 * (mem->load_bytes - usable) / usable,
                  usable / GIB);
    else if (mem->peak_bytes > usable)
        sb_printf(b, "needs %.2f GiB on stage %d, %.2f GiB (%.0f%%) more than the %.2f GiB usable; the largest term is "
                     "%s, %.2f GiB (weights %.2f, gradients %.2f, optimizer %.2f, activations %.2f, buffers %.2f GiB; "
                     "peak %s)",
                  mem->peak_bytes / GIB, mem->peak_stage, (mem->peak_bytes - usable) / GIB,
                  100 * (mem->peak_bytes - usable) / usable, usable / GIB, dom_name, dom / GIB, st->params_bytes / GIB,
                  st->grads_bytes / GIB, st->optimizer_bytes / GIB, st->activations_bytes / GIB, st->buffers_bytes / GIB,
                  st->peak_phase == PP_PHASE_OPTIMIZER ? "in the optimizer step" : "in forward/backward");
    else
        sb_printf(b, "fits the GPU (%.2f of %.2f GiB) but not the %s", mem->peak_bytes / GIB, usable / GIB,
                  mem->host_fits ? "NVMe drives" : "host");
    if (!mem->host_fits && mem->host_bytes_per_node > 0)
        sb_printf(b, "; offloaded states need %.1f GiB of host memory per node, %.1f GiB usable",
                  mem->host_bytes_per_node / GIB, mem->host_usable_bytes / GIB);
    if (!mem->nvme_fits)
        sb_printf(b, "; swapped states need %.1f GB of NVMe per node, %.1f GB there",
                  mem->nvme_bytes_per_node / 1e9, mem->nvme_usable_bytes / 1e9);
}

static void oom_line(sbuf *b, const pp_plan *near, double usable)
{
    char sum[384];
    summary(near, sum, sizeof sum);
    sb_printf(b, "its least-memory plan (%s) ", sum);
    oom_numbers(b, near, usable);
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
    char sum[384];
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
    return o->precisions || o->offloads || o->recomputes || o->schedules || o->base.act_offload_layers ||
           o->base.recompute_modules;
}

static void unpin(pp_search_opts *a)
{
    pp_int_set none = {0};
    a->dp = a->tp = a->pp = a->cp = a->ep = a->sp = a->zero = a->micro_batch = a->virtual_stages = none;
    a->precisions = a->offloads = a->recomputes = a->schedules = 0;
    a->base.act_offload_layers = 0;
    a->base.recompute_modules = 0;
}

/* Plans ranked after others because their peak's error bar crosses the
 * usable memory (rank.c; docs/validation.md, "Error bars"). */
static void tight_lines(sbuf *b, const pp_plan_list *l)
{
    for (int i = 0; i < l->n; i++) {
        const pp_plan *p = &l->plans[i];
        const pp_uncertainty *u = &p->uncertainty;
        if (u->fit != PP_FIT_TIGHT) continue;
        sb_printf(b, "#%d is tight: its peak %.2f GiB has a %.0f%% interval of %.2f-%.2f GiB (%s, %d runs) that crosses "
                     "the %.2f GiB usable", i + 1, p->memory.peak_bytes / GIB, 100 * u->level, u->peak_bytes.lo / GIB,
                  u->peak_bytes.hi / GIB, u->peak_bytes.group, u->peak_bytes.rows, p->memory.gpu_bytes / GIB);
        int j = 0;
        while (j < i && !(l->plans[j].uncertainty.fit == PP_FIT_FITS && l->plans[j].time.step_s > p->time.step_s)) j++;
        if (j < i) sb_printf(b, ", so it ranks after the plans that fit although it is faster than #%d (%.3f s vs %.3f s)", j + 1,
                             p->time.step_s, l->plans[j].time.step_s);
        else if (i == 0) sb_printf(b, "; no plan searched fits with its error bar");
        sb_printf(b, ".\n");
    }
}

/* When the stage splits were not all the ILP's optimum: the budget ran out
 * (the rest kept the default split) or solves stopped at their time limit. */
static void ilp_lines(sbuf *b, const pp_search_opts *o, const pp_search_stats *st)
{
    if (st->ilp_budget_skipped)
        sb_printf(b, "Stage splits: the ILP budget of %g s was spent after %d ILPs; %d other pipeline candidates kept "
                     "the default split, so a better split of theirs may be missed (--ilp-budget gives more time).\n",
                  o->ilp_budget_s, st->ilp_solved, st->ilp_budget_skipped);
    if (st->ilp_time_limit_hits)
        sb_printf(b, "Stage splits: %d ILPs stopped at the %g s limit with their best split so far, which may not be "
                     "optimal (--ilp-time-limit).\n", st->ilp_time_limit_hits, o->ilp_time_limit_s);
}

pp_status pp_plan_explain(const pp_model *m, const pp_cluster *c, const pp_search_opts *o, const pp_plan_list *list,
                          char **text, pp_error *err)
{
    PP__C_NUMERIC;
    sbuf b = {0};
    *text = NULL;
    if (!list || list->n < 1) return pp__fail(err, PP_ERR_INPUT, "--explain: no plan to explain");
    const pp_plan *best = &list->plans[0];
    char sum[384];
    summary(best, sum, sizeof sum);
    sb_printf(&b, "#1 %s.\n", sum);
    if (list->n >= 2) {
        sb_printf(&b, "#2 is ");
        versus(&b, best, &list->plans[1]);
        sb_printf(&b, "; #2 differs in");
        strategy_diff(&b, &best->strategy, &list->plans[1].strategy);
        sb_printf(&b, ".\n");
    }
    tight_lines(&b, list);
    ilp_lines(&b, o, &list->stats);
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

/* ------------------------------------------------------------ what would fit */

#define FIX_SHOW_SAME 5 /* fixes listed on the same GPUs */
#define FIX_SHOW_MORE 3 /* and with more GPUs */

typedef struct fix {
    char what[384];      /* the change, in words (several moves, each with its flags) */
    char how[384];       /* the plan it gives, in words */
    int gpus;            /* GPUs it runs on */
    int tight;           /* fits by the estimate, but its error bar crosses the limit */
    double peak, usable, step_s, tokens_per_s;
} fix;

typedef struct fixes {
    int n, cap, tried;
    fix *v;
    int failed;          /* out of memory */
} fixes;

static void fixes_add(fixes *f, const char *what, const pp_cluster *c, const pp_plan *p, double usable)
{
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 16;
        fix *v = realloc(f->v, sizeof *v * (size_t)cap);
        if (!v) {
            f->failed = 1;
            return;
        }
        f->v = v;
        f->cap = cap;
    }
    fix *x = &f->v[f->n++];
    snprintf(x->what, sizeof x->what, "%s", what);
    summary(p, x->how, sizeof x->how);
    x->gpus = pp_cluster_gpus(c);
    x->peak = p->memory.peak_bytes;
    x->tight = p->uncertainty.fit == PP_FIT_TIGHT;
    x->usable = usable;
    x->step_s = p->time.step_s;
    x->tokens_per_s = p->throughput.tokens_per_s;
}

static int cmp_fix(const void *a, const void *b)
{
    const fix *x = a, *y = b;
    if (x->gpus != y->gpus) return x->gpus < y->gpus ? -1 : 1; /* the same GPUs first */
    if (x->step_s != y->step_s) return x->step_s < y->step_s ? -1 : 1;
    return strcmp(x->what, y->what);
}

/* The fixes fastest first: those on `gpus` GPUs, then those needing more
 * (fewest GPUs first, then fastest). */
static void fixes_print(sbuf *b, fixes *f, int gpus, const char *checked)
{
    if (f->n > 1) qsort(f->v, (size_t)f->n, sizeof *f->v, cmp_fix); /* v is NULL while nothing fits */
    int same = 0, more = 0;
    for (int i = 0; i < f->n; i++) {
        if (f->v[i].gpus == gpus) same++;
        else more++;
    }
    sb_printf(b, "What would fit (%s, %d tried), fastest first:\n", checked, f->tried);
    if (!f->n) sb_printf(b, "- nothing tried fits.\n");
    for (int i = 0, s = 0, m = 0; i < f->n; i++) {
        const fix *x = &f->v[i];
        int here = x->gpus == gpus;
        if (here ? s++ >= FIX_SHOW_SAME : m++ >= FIX_SHOW_MORE) continue;
        sb_printf(b, "- %s: %s (%.2f of %.2f GiB%s), step %.3f s, %.0f tokens/s, with %s%s.\n", x->what,
                  x->tight ? "tight" : "fits", x->peak / GIB, x->usable / GIB, x->tight ? ", the error bar crosses it" : "",
                  x->step_s, x->tokens_per_s, x->how, here ? "" : " (more GPUs)");
    }
    if (same > FIX_SHOW_SAME || more > FIX_SHOW_MORE)
        sb_printf(b, "  (%d more that fit not listed)\n", (same > FIX_SHOW_SAME ? same - FIX_SHOW_SAME : 0) +
                  (more > FIX_SHOW_MORE ? more - FIX_SHOW_MORE : 0));
}

/* ---- estimate: changes of one strategy, each re-estimated */

enum { MV_MB, MV_RC, MV_ZERO, MV_OFF, MV_AOFF, MV_STATES, MV_TP, MV_PP, MV_GPUS, MV_COUNT };
#define MV_VALS 3 /* values per dimension, ordered: a later value does more */

typedef struct moves {
    int nval[MV_COUNT];
    int val[MV_COUNT][MV_VALS];
} moves;

/* Every module group of m a Megatron selective recompute can redo (0 where
 * the framework has no --recompute-modules). */
static unsigned rc_all_modules(const pp_model *m, const pp_strategy *s)
{
    if (!pp_framework_supports(s->framework, "recompute_modules", 1)) return 0;
    unsigned g[3], all = s->attention == PP_ATTN_FLASH ? 0 : PP_RC_CORE_ATTN;
    for (int i = 0, n = pp__rc_module_groups(m, g); i < n; i++) all |= g[i];
    return all;
}

/* The values each dimension can move to from s, smallest change first. */
static void moves_of(const pp_model *m, const pp_cluster *c, const pp_strategy *s, moves *mv)
{
    memset(mv, 0, sizeof *mv);
    if (s->micro_batch > 2) mv->val[MV_MB][mv->nval[MV_MB]++] = s->micro_batch / 2;
    if (s->micro_batch > 1) mv->val[MV_MB][mv->nval[MV_MB]++] = 1;
    if (s->recompute == PP_RECOMPUTE_NONE) mv->val[MV_RC][mv->nval[MV_RC]++] = PP_RECOMPUTE_SELECTIVE;
    /* Megatron: selective recompute of every module group the model has
     * (planner/space.c tries the same), the PP_RC_* mask above bit 2 */
    unsigned all = rc_all_modules(m, s);
    if (all && (s->recompute == PP_RECOMPUTE_NONE || (s->recompute == PP_RECOMPUTE_SELECTIVE && s->recompute_modules != all)))
        mv->val[MV_RC][mv->nval[MV_RC]++] = PP_RECOMPUTE_SELECTIVE | (int)(all << 2);
    if (s->recompute != PP_RECOMPUTE_FULL || s->recompute_layers >= 0 || s->per_stage_recompute)
        mv->val[MV_RC][mv->nval[MV_RC]++] = PP_RECOMPUTE_FULL;
    for (int z = s->zero + 1; z <= (s->pp > 1 ? 1 : 3); z++) mv->val[MV_ZERO][mv->nval[MV_ZERO]++] = z;
    for (int o = s->offload + 1; o <= PP_OFFLOAD_OPT_PARAMS; o++) mv->val[MV_OFF][mv->nval[MV_OFF]++] = o;
    /* Megatron's activation offload (pp 1, no recompute): more blocks, up to
     * all but one (rule fw-act-offload) */
    int most = m->layers - 1, n = s->act_offload_layers;
    if (pp_framework_supports(s->framework, "act_offload", 1) && s->pp == 1 && s->recompute == PP_RECOMPUTE_NONE &&
        n < most) {
        int half = n > 0 ? 2 * n : m->layers / 2;
        if (half > n && half < most) mv->val[MV_AOFF][mv->nval[MV_AOFF]++] = half;
        mv->val[MV_AOFF][mv->nval[MV_AOFF]++] = most;
    }
    /* bf16 AdamW moments (Megatron's precision-aware optimizer; rule
     * fw-opt-states decides where it runs: a combination it refuses is not
     * tried) */
    if (pp_framework_supports(s->framework, "opt_states", PP_OPT_STATES_BF16) && s->opt_states == PP_OPT_STATES_FP32)
        mv->val[MV_STATES][mv->nval[MV_STATES]++] = PP_OPT_STATES_BF16;
    int dom = c->nvlink_domain > 0 ? c->nvlink_domain : c->gpus_per_node;
    if (s->dp % 2 == 0 && 2 * s->tp <= dom && m->heads % (2 * s->tp) == 0 && m->kv_heads % (2 * s->tp) == 0)
        mv->val[MV_TP][mv->nval[MV_TP]++] = 2 * s->tp;
    if (s->dp % 2 == 0 && 2 * s->pp <= m->layers && 2 * s->pp <= PP_MAX_STAGES) mv->val[MV_PP][mv->nval[MV_PP]++] = 2 * s->pp;
    for (int f = 2; f <= 8; f *= 2)
        if ((long long)pp_cluster_gpus(c) * f <= (1 << 20)) mv->val[MV_GPUS][mv->nval[MV_GPUS]++] = f;
}

/* Applies value k of dimension d to s (and c); appends words to what. */
static void apply_move(const moves *mv, int d, int k, pp_strategy *s, pp_cluster *c, int ds_keys, char *what, size_t cap)
{
    size_t n = strlen(what);
    const char *sep = n ? ", " : "";
    int v = mv->val[d][k];
    switch (d) {
    case MV_MB:
        s->micro_batch = v;
        s->vp_group = 0; /* the group must fit the new micro-batch count */
        snprintf(what + n, cap - n, "%smicro-batch %d%s", sep, v, ds_keys ? " (train_micro_batch_size_per_gpu)" : "");
        break;
    case MV_RC: {
        char mods[96] = "", list[128] = "";
        s->recompute = (pp_recompute)(v & 3);
        s->recompute_modules = (unsigned)v >> 2;
        s->recompute_layers = -1;
        s->per_stage_recompute = 0;
        if (s->recompute_modules) {
            pp_rc_modules_format(s->recompute_modules, ' ', mods, sizeof mods);
            snprintf(list, sizeof list, " (--recompute-modules %s)", mods);
        }
        snprintf(what + n, cap - n, "%s%s recompute%s%s", sep, s->recompute == PP_RECOMPUTE_FULL ? "full" : "selective", list,
                 s->act_offload_layers ? " (no activation offload: Megatron has not both)" : "");
        s->act_offload_layers = 0;
        if (v == PP_RECOMPUTE_FULL) s->overlap_ep = 0; /* Megatron's EP overlap refuses full recompute */
        break;
    }
    case MV_AOFF:
        s->act_offload_layers = v;
        snprintf(what + n, cap - n, "%sactivations of %d blocks offloaded (--cpu-offloading-num-layers %d)", sep, v, v);
        break;
    case MV_STATES:
        s->opt_states = v;
        snprintf(what + n, cap - n, "%sbf16 optimizer states (--use-precision-aware-optimizer --exp-avg-dtype bf16 "
                 "--exp-avg-sq-dtype bf16; the moments' precision changes)", sep);
        break;
    case MV_ZERO:
        if (v > s->zero) s->zero = v;
        snprintf(what + n, cap - n, "%sZeRO-%d%s", sep, v, ds_keys ? " (zero_optimization.stage)" : "");
        break;
    case MV_OFF:
        s->offload = (pp_offload)v;
        if (s->zero < (v == PP_OFFLOAD_OPT_PARAMS ? 3 : 1)) s->zero = v == PP_OFFLOAD_OPT_PARAMS ? 3 : 1;
        snprintf(what + n, cap - n, "%soffload %s%s", sep, pp_offload_name((pp_offload)v),
                 ds_keys ? (v == PP_OFFLOAD_OPT_PARAMS ? " (offload_optimizer and offload_param device cpu)"
                                                      : " (zero_optimization.offload_optimizer.device cpu)") : "");
        break;
    case MV_TP: {
        /* from tp 1, with the sequence parallelism TP runs with where the
         * framework has it (Megatron's TP overlap needs it) */
        const pp__fw *f = pp__fw_get(s->framework);
        int sp = s->tp == 1 && f && f->sp && !s->sp;
        s->dp /= v / s->tp;
        s->tp = v;
        if (sp) s->sp = 1;
        snprintf(what + n, cap - n, "%stp %d%s", sep, v, sp ? " with sequence parallelism" : "");
        break;
    }
    case MV_PP:
        s->dp /= v / s->pp;
        s->pp = v;
        memset(s->stage_layers, 0, sizeof s->stage_layers);
        memset(s->chunk_layers, 0, sizeof s->chunk_layers);
        s->vp_group = 0; /* Megatron's default group for the new pp */
        s->per_stage_recompute = 0;
        snprintf(what + n, cap - n, "%spp %d%s", sep, v, s->act_offload_layers ? " (no activation offload)" : "");
        s->act_offload_layers = 0;
        s->overlap_ep = 0; /* with stages it costs a micro-batch of memory and needs v */
        break;
    case MV_GPUS: {
        pp_error e;
        int gpus = pp_cluster_gpus(c) * v;
        if (c->nodes == 1 && c->gpus_per_node < c->nvlink_domain) pp_cluster_resize(c, 0, gpus, &e);
        else pp_cluster_resize(c, c->nodes * v, 0, &e);
        s->dp *= v;
        snprintf(what + n, cap - n, "%s%d GPUs (%d nodes, dp %d)", sep, pp_cluster_gpus(c), c->nodes, s->dp);
        break;
    }
    }
}

/* Bits of a combination: a value sets its own bit and those of the smaller
 * changes of its dimension, so a combination that fits makes every larger
 * one redundant ((fit & combo) == fit). */
static unsigned combo_bits(const int *dims, const int *vals, int n)
{
    unsigned bits = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k <= vals[i]; k++) bits |= 1u << (dims[i] * MV_VALS + k);
    return bits;
}

typedef struct advisor {
    const pp_model *m;
    const pp_cluster *c;
    const pp_strategy *s;
    moves mv;
    int ds_keys;
    unsigned fit[256];   /* combinations that fit */
    int nfit;
    fixes f;
    pp_plan *p;          /* scratch */
} advisor;

static void try_combo(advisor *A, const int *dims, const int *vals, int n)
{
    unsigned bits = combo_bits(dims, vals, n);
    for (int i = 0; i < A->nfit; i++)
        if ((A->fit[i] & bits) == A->fit[i]) return; /* a smaller change already fits */
    pp_strategy s = *A->s;
    pp_cluster c = *A->c;
    char what[384] = "";
    s.grad_accum = 0;
    for (int i = 0; i < n; i++) apply_move(&A->mv, dims[i], vals[i], &s, &c, A->ds_keys, what, sizeof what);
    /* tp and pp each halve dp: together they can leave none (dp 2) */
    if (s.dp < 1 || (long long)s.dp * s.tp * s.pp * s.cp != pp_cluster_gpus(&c)) return;
    if ((long long)s.micro_batch * s.dp > s.global_batch || s.global_batch % (s.micro_batch * s.dp)) return;
    pp_error e;
    pp_status st = pp_estimate(A->m, &c, &s, A->p, &e); /* resolves again what the changes touch */
    if (st == PP_ERR_INPUT) return;                     /* not a strategy its framework runs: not tried */
    /* nor one no launcher of it writes (rule fw-launcher: torchtitan, which
     * the changes may call for, builds Llama 3 only) */
    if (st == PP_OK && pp_rules_check(A->m, &c, &A->p->strategy, &e) != PP_OK) return;
    A->f.tried++;
    if (st != PP_OK || !A->p->memory.fits) return;
    size_t k = strlen(what);
    if (A->p->strategy.framework != A->s->framework) /* a framework the estimate chose, not the user */
        snprintf(what + k, sizeof what - k, " (run by %s)", pp_framework_name(A->p->strategy.framework));
    else if (strcmp(pp_strategy_launcher(&A->p->strategy), pp_strategy_launcher(A->s)))
        snprintf(what + k, sizeof what - k, " (launched by %s)", pp_strategy_launcher(&A->p->strategy));
    if (A->nfit < 256) A->fit[A->nfit++] = bits;
    fixes_add(&A->f, what, &c, A->p, A->p->memory.gpu_bytes);
}

/* Every combination of up to three dimensions, one value each, smallest
 * combinations first (so a larger one is tried only when none of its
 * smaller parts fits). */
static void try_all(advisor *A)
{
    for (int size = 1; size <= 3; size++)
        for (unsigned mask = 1; mask < 1u << MV_COUNT; mask++) {
            int dims[3], n = 0, total = 1;
            for (int d = 0; d < MV_COUNT && n <= size; d++)
                if (mask >> d & 1) {
                    if (n < 3) dims[n] = d;
                    n++;
                }
            if (n != size) continue;
            for (int i = 0; i < n; i++) total *= A->mv.nval[dims[i]];
            for (int t = 0; t < total; t++) { /* value indices in mixed radix */
                int vals[3], r = t;
                for (int i = 0; i < n; i++) {
                    vals[i] = r % A->mv.nval[dims[i]];
                    r /= A->mv.nval[dims[i]];
                }
                try_combo(A, dims, vals, n);
            }
        }
}

pp_status pp_oom_advice(const pp_model *m, const pp_cluster *c, const pp_plan *p, unsigned flags, char **text,
                        pp_error *err)
{
    PP__C_NUMERIC;
    sbuf b = {0};
    *text = NULL;
    if (p->memory.fits) return pp__fail(err, PP_ERR_INPUT, "the strategy fits: no advice needed");
    advisor *A = calloc(1, sizeof *A);
    pp_plan *scratch = malloc(sizeof *scratch);
    if (!A || !scratch) {
        free(A);
        free(scratch);
        return pp__fail(err, PP_ERR_NOMEM, "out of memory advising");
    }
    *A = (advisor){m, c, &p->strategy, {{0}}, (flags & PP_ADVICE_DEEPSPEED) != 0, {0}, 0, {0}, scratch};
    moves_of(m, c, &p->strategy, &A->mv);
    try_all(A);
    sb_printf(&b, "Does not fit: ");
    oom_numbers(&b, p, p->memory.gpu_bytes);
    sb_printf(&b, ".\n");
    fixes_print(&b, &A->f, pp_cluster_gpus(c), "each re-estimated, the global batch kept");
    if (A->f.failed) b.failed = 1;
    free(A->f.v);
    free(A);
    free(scratch);
    return sb_done(&b, text, err);
}

/* ---- plan: changes of the search, each searched again */

/* Re-searches with one change; keeps it when a plan fits. */
static void try_search(fixes *f, const pp_model *m, const pp_cluster *c, const pp_search_opts *o, const char *what)
{
    pp_search_opts a = *o;
    a.top_k = 1;
    pp_plan_list l;
    pp_error e = {""};
    f->tried++;
    if (pp_plan_search(m, c, &a, &l, &e) == PP_OK) fixes_add(f, what, c, &l.plans[0], l.usable_bytes);
    pp_plan_list_free(&l);
}

/* The smallest multiple of the cluster (x2, x4, ... x64) on which a plan fits. */
static void more_gpus(fixes *f, const pp_model *m, const pp_cluster *c, const pp_search_opts *o)
{
    for (int k = 2; k <= 64; k *= 2) {
        pp_cluster big = *c;
        pp_error e;
        if (pp_cluster_resize(&big, c->nodes * k, 0, &e)) break;
        char what[96];
        snprintf(what, sizeof what, "more GPUs: %d GPUs (%d nodes)", pp_cluster_gpus(&big), big.nodes);
        int before = f->n;
        try_search(f, m, &big, o, what);
        if (f->n > before) return;
    }
}

pp_status pp_plan_why_infeasible(const pp_model *m, const pp_cluster *c, const pp_search_opts *o,
                                 const pp_plan_list *list, char **text, pp_error *err)
{
    PP__C_NUMERIC;
    sbuf b = {0};
    fixes f = {0};
    *text = NULL;
    double usable = list ? list->usable_bytes : 0;
    if (list && list->nearest) {
        sb_printf(&b, "Nothing fits: ");
        oom_line(&b, list->nearest, usable);
        sb_printf(&b, ".\n");
    } else {
        sb_printf(&b, "Nothing fits in %.2f GiB per GPU.\n", usable / GIB);
    }
    more_gpus(&f, m, c, o);
    pp_search_opts a = *o;
    if (o->offloads && o->offloads != (1u << PP_OFFLOAD_COUNT) - 1) {
        a.offloads = 0;
        try_search(&f, m, c, &a, "allow offload (ZeRO-Offload of optimizer states and parameters)");
    }
    a = *o;
    if ((o->recomputes && !(o->recomputes >> PP_RECOMPUTE_FULL & 1)) || o->base.recompute_modules) {
        a.recomputes = 0;
        a.base.recompute_modules = 0; /* pinned modules allow selective recompute only */
        try_search(&f, m, c, &a, o->base.recompute_modules ? "allow any recomputation (without --recompute-modules)"
                                                          : "allow full activation recomputation");
    }
    a = *o;
    int mb_min = 0;
    for (int i = 0; i < o->micro_batch.n; i++)
        if (!mb_min || o->micro_batch.v[i] < mb_min) mb_min = o->micro_batch.v[i];
    if (mb_min > 1) {
        pin(&a.micro_batch, 1);
        try_search(&f, m, c, &a, "micro-batch 1");
    }
    a = *o;
    if (o->zero.n && o->zero.n < 4) {
        a.zero.n = 0;
        try_search(&f, m, c, &a, "any ZeRO stage");
    }
    a = *o;
    if (o->dp.n || o->tp.n || o->pp.n || o->cp.n || o->ep.n) {
        a.dp.n = a.tp.n = a.pp.n = a.cp.n = a.ep.n = 0;
        try_search(&f, m, c, &a, "any parallel degrees");
    }
    fixes_print(&b, &f, pp_cluster_gpus(c), "each checked by searching again");
    if (f.failed) b.failed = 1;
    free(f.v);
    return sb_done(&b, text, err);
}
