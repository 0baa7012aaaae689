/*
 * chart_schedule.c — the pipeline schedule of one step (docs/report.md):
 * forward and backward of each micro-batch on each stage for 1F1B (PipeDream
 * flush, Narayanan et al. 2021 Fig. 4), interleaved 1F1B (Megatron-LM's
 * order: chunk (k / p) mod v, micro-batch (k / pv) p + k mod p) and GPipe
 * (all forwards, then the backwards in reverse).
 *
 * Durations: stage i's micro-batch time is pp_time.stage_microbatch_s[i];
 * it is split into forward and backward by the slowest stage's breakdown:
 * backward compute = (1 + trained fraction) x forward compute (input and
 * weight gradients; a frozen weight only passes gradients back), the
 * recomputation belongs to the backward, TP/CP/EP/PP and ZeRO-3 traffic is
 * split evenly. Each operation starts when its stage is free and its
 * predecessor (the previous stage's forward, the next stage's backward) has
 * finished; the idle time left is the bubble. After the last backward: the
 * exposed DP/ZeRO communication, the optimizer, the offload traffic.
 * Large micro-batch counts: the steady state between the first and the last
 * few micro-batches is cut out and the break says how much.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/svg.h"

#define W 920
#define X0 70.0
#define X1 860.0
#define TOP 58.0
#define KEEP 3               /* micro-batches kept at each end around an elision */
#define SIM_CAP 2000000.0    /* most (virtual stage x micro-batch) pairs simulated */
#define BREAK_PX 26.0

typedef struct op {
    int fwd, chunk, mb;
} op;

typedef struct sched {
    int p, v, m, m_real;     /* stages, chunks per stage, micro-batches simulated / real */
    pp_schedule kind;
    double f[PP_MAX_STAGES], b[PP_MAX_STAGES]; /* one chunk's forward, backward, s */
    double *fin_f, *fin_b;   /* finish time per (virtual stage, micro-batch); -1 = not run */
    double end;              /* last backward's finish */
} sched;

/* The k-th operation of stage i in the schedule's order. */
static op op_at(const sched *s, int i, int k)
{
    int p = s->p, v = s->v, n = s->m * v;
    if (s->kind == PP_SCHED_GPIPE) return k < n ? (op){1, 0, k} : (op){0, 0, 2 * n - 1 - k};
    int w = s->kind == PP_SCHED_INTERLEAVED ? (p - i - 1) * 2 + (v - 1) * p : p - i - 1;
    if (w > n) w = n;
    int fwd, j;
    if (k < w) fwd = 1, j = k;
    else if (k < w + 2 * (n - w)) fwd = (k - w) % 2 == 0, j = fwd ? w + (k - w) / 2 : (k - w) / 2;
    else fwd = 0, j = n - w + (k - w - 2 * (n - w));
    if (v == 1) return (op){fwd, 0, j};
    int chunk = (j / p) % v, mb = (j / (p * v)) * p + j % p;
    return (op){fwd, fwd ? chunk : v - 1 - chunk, mb};
}

static double *fin(const sched *s, int fwd, int vs, int mb) { return (fwd ? s->fin_f : s->fin_b) + (size_t)vs * s->m + mb; }

/* Finish of what op o on stage i waits for (-1: not yet known). */
static double ready_at(const sched *s, int i, op o)
{
    int vs = o.chunk * s->p + i, last = s->p * s->v - 1;
    if (o.fwd) return vs == 0 ? 0 : *fin(s, 1, vs - 1, o.mb);
    double own = *fin(s, 1, vs, o.mb);
    if (own < 0 || vs == last) return own;
    double next = *fin(s, 0, vs + 1, o.mb);
    return next < 0 ? -1 : fmax(own, next);
}

/* Runs every operation as early as its stage and predecessor allow. A
 * worklist of stages: each scheduled op wakes its neighbours, so the work is
 * linear in the operations. Returns 0, or -1 if out of memory or stuck. */
static int simulate(sched *s)
{
    int p = s->p, nops = 2 * s->m * s->v, done = 0;
    size_t cells = (size_t)p * s->v * s->m;
    s->fin_f = malloc(cells * sizeof(double));
    s->fin_b = malloc(cells * sizeof(double));
    int *next = calloc((size_t)p, sizeof(int)), *stack = malloc((size_t)p * sizeof(int)), *in = calloc((size_t)p, sizeof(int));
    double *free_at = calloc((size_t)p, sizeof(double));
    int rc = -1, top = 0;
    if (!s->fin_f || !s->fin_b || !next || !stack || !in || !free_at) goto cleanup;
    for (size_t c = 0; c < cells; c++) s->fin_f[c] = s->fin_b[c] = -1;
    for (int i = p - 1; i >= 0; i--) stack[top++] = i, in[i] = 1;
    while (top > 0) {
        int i = stack[--top];
        in[i] = 0;
        while (next[i] < nops) {
            op o = op_at(s, i, next[i]);
            double r = ready_at(s, i, o);
            if (r < 0) break;
            double start = fmax(free_at[i], r), end = start + (o.fwd ? s->f[i] : s->b[i]);
            *fin(s, o.fwd, o.chunk * p + i, o.mb) = end;
            free_at[i] = end;
            next[i]++;
            done++;
            int nb[2] = {(i + 1) % p, (i + p - 1) % p};
            for (int k = 0; k < 2; k++)
                if (!in[nb[k]]) stack[top++] = nb[k], in[nb[k]] = 1;
        }
    }
    s->end = 0;
    for (int i = 0; i < p; i++) s->end = fmax(s->end, free_at[i]);
    rc = done == nops * p ? 0 : -1;
cleanup:
    free(next);
    free(stack);
    free(in);
    free(free_at);
    return rc;
}

/* Forward share of a micro-batch's time (see the file comment). */
static double forward_share(const pp_plan *pl)
{
    const pp_time *t = &pl->time;
    double fr = pl->params_total > 0 ? pl->params_trainable / pl->params_total : 1;
    double comm = t->tp_comm_s + t->cp_comm_s + t->ep_comm_s + t->pp_comm_s +
                  (pl->strategy.zero == 3 ? t->dp_comm_exposed_s : 0);
    double all = t->compute_s + t->recompute_s + comm;
    return all > 0 ? (t->compute_s / (2 + fr) + comm / 2) / all : 1.0 / 3;
}

static int setup(sched *s, const pp_plan *pl, char *note, size_t cap)
{
    const pp_strategy *st = &pl->strategy;
    memset(s, 0, sizeof *s);
    s->p = st->pp;
    s->kind = st->pp > 1 ? st->schedule : PP_SCHED_1F1B;
    s->v = s->kind == PP_SCHED_INTERLEAVED ? st->virtual_stages : 1;
    s->m_real = st->grad_accum;
    int m = s->m_real;
    note[0] = '\0';
    if (s->kind == PP_SCHED_INTERLEAVED && m % s->p) {
        m = (m / s->p + 1) * s->p;
        snprintf(note, cap, "; drawn with %d micro-batches, a multiple of %d, for Megatron's interleaved order", m, s->p);
    }
    double cap_m = SIM_CAP / ((double)s->p * s->v);
    if (m > cap_m) { /* the elided steady state is periodic: simulate fewer */
        m = (int)(cap_m / s->p) * s->p;
        if (m < 2 * s->p) m = 2 * s->p;
    }
    s->m = m;
    double phi = forward_share(pl);
    for (int i = 0; i < s->p; i++) {
        s->f[i] = phi * pl->time.stage_microbatch_s[i] / s->v;
        s->b[i] = (1 - phi) * pl->time.stage_microbatch_s[i] / s->v;
    }
    return simulate(s);
}

/* ------------------------------------------------------------ elision */

typedef struct window {
    double a, z;     /* elided time range, s (simulated clock) */
    double shift;    /* real time minus simulated time after this window, s */
    int passes;      /* micro-batches elided (real) */
} window;

typedef struct timemap {
    int n;
    window w[2];
    double visible;  /* seconds drawn */
    double px_per_s;
} timemap;

/* Latest finish (lo = 1) or earliest start of the ops of micro-batches in
 * [m0, m1) and of the given direction (-1 = both) over all stages. */
static double extreme(const sched *s, int m0, int m1, int dir, int latest)
{
    double best = latest ? 0 : INFINITY;
    for (int vs = 0; vs < s->p * s->v; vs++)
        for (int mb = m0; mb < m1; mb++)
            for (int fwd = 0; fwd < 2; fwd++) {
                if (dir >= 0 && fwd != dir) continue;
                int i = vs % s->p;
                double e = *fin(s, fwd, vs, mb), t = latest ? e : e - (fwd ? s->f[i] : s->b[i]);
                best = latest ? fmax(best, t) : fmin(best, t);
            }
    return best;
}

static void add_window(timemap *tm, double a, double z, double period, int passes, double shift)
{
    if (!(z - a > 2 * period) || tm->n >= 2) return;
    tm->w[tm->n++] = (window){a, z, shift, passes};
}

static void plan_windows(const sched *s, double tail, timemap *tm)
{
    memset(tm, 0, sizeof *tm);
    int m = s->m, extra = s->m_real > m ? s->m_real - m : 0;
    double fmax_s = 0, bmax = 0;
    for (int i = 0; i < s->p; i++) fmax_s = fmax(fmax_s, s->f[i] * s->v), bmax = fmax(bmax, s->b[i] * s->v);
    if (m > 2 * KEEP + 2) {
        if (s->kind == PP_SCHED_GPIPE) {
            add_window(tm, extreme(s, 0, KEEP, 1, 1), extreme(s, m - KEEP, m, 1, 0), fmax_s, m - 2 * KEEP + extra,
                       extra * fmax_s);
            add_window(tm, extreme(s, m - KEEP, m, 0, 1), extreme(s, 0, KEEP, 0, 0), bmax, m - 2 * KEEP + extra,
                       extra * (fmax_s + bmax));
        } else {
            add_window(tm, extreme(s, 0, KEEP, -1, 1), extreme(s, m - KEEP, m, -1, 0), fmax_s + bmax,
                       m - 2 * KEEP + extra, extra * (fmax_s + bmax));
        }
    }
    tm->visible = s->end + tail;
    for (int k = 0; k < tm->n; k++) tm->visible -= tm->w[k].z - tm->w[k].a;
    tm->px_per_s = (X1 - X0 - BREAK_PX * tm->n) / tm->visible;
}

/* Pixel of simulated time t; *hidden = 1 inside an elided window. */
static double px(const timemap *tm, double t, int *hidden)
{
    double x = X0 + t * tm->px_per_s;
    *hidden = 0;
    for (int k = 0; k < tm->n; k++) {
        if (t >= tm->w[k].z) x += BREAK_PX - (tm->w[k].z - tm->w[k].a) * tm->px_per_s;
        else if (t > tm->w[k].a) *hidden = 1;
    }
    return x;
}

/* [t0, t1] less the elided windows, in pixels; 0 when nothing is left. An
 * operation never spans a whole window (a window is two periods long). */
static int clip(const timemap *tm, double t0, double t1, double *x0, double *x1)
{
    for (int k = 0; k < tm->n; k++) {
        const window *w = &tm->w[k];
        if (t0 >= w->a && t1 <= w->z) return 0;
        if (t0 < w->a && t1 > w->a) t1 = w->a;
        else if (t0 < w->z && t1 > w->z) t0 = w->z;
    }
    int h;
    *x0 = px(tm, t0, &h);
    *x1 = px(tm, t1, &h);
    return 1;
}

/* ------------------------------------------------------------ drawing */

static const char *op_colour(op o, int v)
{
    static const char *const fc[2] = {"#4C8BD0", "#2B5C99"}, *const bc[2] = {"#F0A35E", "#C8702A"};
    return o.fwd ? fc[v > 1 ? o.chunk % 2 : 0] : bc[v > 1 ? o.chunk % 2 : 0];
}

typedef struct seg {
    double x0, x1, last_w;  /* pixels; width of its last operation */
    double busy;            /* pixels of the span with an operation running */
    int fwd, bwd, count;
    op first;
} seg;

static void flush(pp__sbuf *b, const sched *s, const seg *g, double y, double h, double zero3)
{
    if (g->count == 0) return;
    const char *fill = g->fwd && g->bwd ? "url(#steady)" : op_colour(g->first, s->v);
    double w = fmax(g->x1 - g->x0, 0.6), share = fmin(1, g->busy / w);
    pp__sb_printf(b, "<rect class=\"op %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"",
                  g->fwd && g->bwd ? "fb" : g->fwd ? "f" : "b", g->x0, y, w, h, fill);
    /* a run of narrow operations with idle slivers between them: drawn
     * once, as light as the slivers would make it */
    if (share < 0.97) pp__sb_printf(b, " fill-opacity=\"%.2f\"", share);
    pp__sb_printf(b, "/>");
    if (zero3 > 0) /* ZeRO-3's gathers exposed inside each micro-batch */
        pp__sb_printf(b, "<rect class=\"zero3\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#c00\"/>",
                      g->x0, y + h * 0.7, w * zero3, h * 0.3);
    if (g->count == 1 && w >= 14 && h >= 9)
        pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" fill=\"#fff\" text-anchor=\"middle\">%d</text>",
                      g->x0 + w / 2, y + h / 2 + 3, g->first.mb + 1);
}

/* One stage's operations, neighbours narrower than a few pixels merged. */
static void draw_row(pp__sbuf *b, const sched *s, const timemap *tm, int i, double y, double h, double zero3)
{
    seg g = {0};
    for (int k = 0; k < 2 * s->m * s->v; k++) {
        op o = op_at(s, i, k);
        double e = *fin(s, o.fwd, o.chunk * s->p + i, o.mb), d = o.fwd ? s->f[i] : s->b[i];
        double x0, x1;
        if (!clip(tm, e - d, e, &x0, &x1)) continue; /* inside an elided window */
        /* operations a few pixels wide merge with a narrow neighbour: any
         * kind when they touch (1F1B's steady state), the same kind across
         * an idle sliver under 2 px (the cool-down); wider ones stay apart,
         * so each micro-batch can be seen and labelled */
        double gap = x0 - g.x1;
        int narrow = x1 - x0 < 4 && g.last_w < 4, pure = !(g.fwd && g.bwd) && (g.fwd != 0) == o.fwd;
        if (g.count && narrow && (gap < 0.75 || (gap < 2 && pure))) {
            g.x1 = x1, g.last_w = x1 - x0, g.busy += x1 - x0, g.count++, g.fwd |= o.fwd, g.bwd |= !o.fwd;
            continue;
        }
        flush(b, s, &g, y, h, zero3);
        g = (seg){x0, x1, x1 - x0, x1 - x0, o.fwd, !o.fwd, 1, o};
    }
    flush(b, s, &g, y, h, zero3);
}

static void time_axis(pp__sbuf *b, const timemap *tm, const sched *s, double tail, double y)
{
    double total = s->end + tail, step = pp__nice_step(tm->visible / 7);
    char lab[32];
    pp__sb_printf(b, "<g class=\"time-axis\" font-size=\"10\" fill=\"#333\">\n");
    for (double t = 0; t <= total + step * 1e-9; t += step) {
        int hidden;
        double x = px(tm, t, &hidden);
        if (hidden) continue;
        double real = t;
        for (int k = 0; k < tm->n; k++)
            if (t >= tm->w[k].z) real = t + tm->w[k].shift;
        pp__fmt_secs(lab, sizeof lab, real);
        pp__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/><text x=\"%.1f\" "
                         "y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                      x, y, x, y + 4, x, y + 15, lab);
    }
    pp__sb_printf(b, "</g>\n");
}

static void breaks(pp__sbuf *b, const timemap *tm, double y0, double y1)
{
    char d[32];
    for (int k = 0; k < tm->n; k++) {
        int hidden;
        double x = px(tm, tm->w[k].a, &hidden);
        pp__fmt_secs(d, sizeof d, tm->w[k].z - tm->w[k].a + tm->w[k].shift - (k ? tm->w[k - 1].shift : 0));
        pp__sb_printf(b, "<g class=\"elided\" data-microbatches=\"%d\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                         "height=\"%.1f\" fill=\"url(#breakfill)\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                         "text-anchor=\"middle\" fill=\"#333\">\xe2\x8b\xaf</text><text x=\"%.1f\" y=\"%.1f\" "
                         "font-size=\"9\" text-anchor=\"middle\" fill=\"#333\">%d mb</text><text x=\"%.1f\" y=\"%.1f\" "
                         "font-size=\"9\" text-anchor=\"middle\" fill=\"#333\">%s</text></g>\n",
                      tm->w[k].passes, x + 2, y0, BREAK_PX - 4, y1 - y0, x + BREAK_PX / 2, y0 - 4, x + BREAK_PX / 2,
                      y1 + 26, tm->w[k].passes, x + BREAK_PX / 2, y1 + 36, d);
    }
}

/* Exposed DP/ZeRO communication, the optimizer and offload after the pipeline. */
static void tail_blocks(pp__sbuf *b, const pp_plan *pl, const timemap *tm, double start, double y0, double y1)
{
    const pp_time *t = &pl->time;
    struct { const char *cls, *fill, *name; double s; } parts[3] = {
        {"dp-exposed", "#c00", "DP/ZeRO exposed", pl->strategy.zero == 3 ? 0 : t->dp_comm_exposed_s},
        {"optimizer", "#7b4fa0", "optimizer", t->optimizer_s},
        {"offload", "#8c564b", "offload", t->offload_s}};
    double at = start;
    for (int k = 0; k < 3; k++) {
        if (parts[k].s <= 0) continue;
        int hidden;
        double x0 = px(tm, at, &hidden), x1 = px(tm, at + parts[k].s, &hidden);
        char d[32];
        pp__fmt_secs(d, sizeof d, parts[k].s);
        pp__sb_printf(b, "<rect class=\"%s tip\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                         "data-s=\"%.17g\" data-tip=\"%s: %s\"/>\n",
                      parts[k].cls, x0, y0, fmax(x1 - x0, 2), y1 - y0, parts[k].fill, parts[k].s, parts[k].name, d);
        at += parts[k].s;
    }
}

static void defs(pp__sbuf *b)
{
    pp__sb_printf(b, "<defs><pattern id=\"steady\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                     "patternTransform=\"rotate(45)\"><rect width=\"3\" height=\"6\" fill=\"#4C8BD0\"/><rect x=\"3\" "
                     "width=\"3\" height=\"6\" fill=\"#F0A35E\"/></pattern><pattern id=\"breakfill\" width=\"4\" "
                     "height=\"4\" patternUnits=\"userSpaceOnUse\"><rect width=\"4\" height=\"4\" fill=\"#fff\"/>"
                     "<circle cx=\"2\" cy=\"2\" r=\"0.8\" fill=\"#999\"/></pattern></defs>\n");
}

static void legend(pp__sbuf *b, const pp_plan *pl, double y)
{
    static const struct { const char *fill, *name; } items[] = {
        {"#4C8BD0", "forward"}, {"#F0A35E", "backward"}, {"url(#steady)", "forward/backward, merged"},
        {"#e9e9e9", "idle (bubble)"}, {"#c00", "DP/ZeRO exposed"}, {"#7b4fa0", "optimizer"}, {"#8c564b", "offload"}};
    double x = X0;
    pp__sb_printf(b, "<g class=\"legend\" font-size=\"10\" fill=\"#222\">");
    for (size_t k = 0; k < sizeof items / sizeof *items; k++) {
        if (k == 6 && pl->time.offload_s <= 0) continue;
        pp__sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"11\" height=\"11\" fill=\"%s\" stroke=\"#999\" "
                         "stroke-width=\"0.3\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>",
                      x, y - 9, items[k].fill, x + 15, y, items[k].name);
        x += 22 + 6.1 * strlen(items[k].name);
    }
    if (pl->strategy.zero == 3)
        pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\">red strip: ZeRO-3 traffic exposed in each micro-batch</text>", X0,
                      y + 16);
    pp__sb_printf(b, "</g>\n");
}

void pp__svg_schedule(pp__sbuf *b, const pp__chart_ctx *x)
{
    const pp_plan *pl = x->p;
    const pp_time *t = &pl->time;
    sched s;
    char note[160];
    int ok = setup(&s, pl, note, sizeof note) == 0;
    double tail = (pl->strategy.zero == 3 ? 0 : t->dp_comm_exposed_s) + t->optimizer_s + t->offload_s;
    timemap tm = {0};
    if (ok) plan_windows(&s, tail, &tm);
    int p = s.p;
    double row = fmax(2.5, fmin(22, 300.0 / p)), gap = row >= 8 ? 2 : row >= 4 ? 1 : 0;
    double y1 = TOP + p * row, h = y1 + 74;
    pp__sb_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" class=\"chart schedule\" id=\"");
    pp__svg_esc(b, x->id);
    pp__sb_printf(b, "-schedule\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" data-step=\"%.17g\" "
                     "data-bubble=\"%.17g\" data-stages=\"%d\" data-microbatches=\"%d\" "
                     "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n<rect width=\"%d\" height=\"%.0f\" "
                     "fill=\"#fff\"/>\n",
                  W, h, W, h, t->step_s, t->bubble_s, p, s.m_real, W, h);
    defs(b);
    char st[32], bu[32];
    pp__fmt_secs(st, sizeof st, t->step_s);
    pp__fmt_secs(bu, sizeof bu, t->bubble_s);
    pp__sb_printf(b, "<text class=\"title\" x=\"%.1f\" y=\"20\" font-size=\"14\" font-weight=\"bold\">Pipeline "
                     "schedule: %s, %d stage%s, %d micro-batch%s</text>\n",
                  X0, pp_schedule_name(s.kind), p, p == 1 ? "" : "s", s.m_real, s.m_real == 1 ? "" : "es");
    if (s.v > 1) pp__sb_printf(b, "<text x=\"%.1f\" y=\"20\" font-size=\"11\" text-anchor=\"end\">%d chunks per stage "
                                  "(two shades)</text>\n", X1, s.v);
    pp__sb_printf(b, "<text x=\"%.1f\" y=\"38\" font-size=\"11\" fill=\"#555\">step %s (cost model), bubble %s; "
                     "forward:backward split assumed from the breakdown%s%s</text>\n",
                  X0, st, bu, ok && tm.n ? "; steady state elided" : "", note);
    if (!ok) {
        pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">schedule not drawn: out of memory or an order that cannot run</text></svg>\n",
                      X0, TOP + 20);
        free(s.fin_f);
        free(s.fin_b);
        return;
    }
    double z3 = pl->strategy.zero == 3 && t->compute_s > 0 ? t->dp_comm_exposed_s /
                (t->step_s - t->bubble_s - t->optimizer_s - t->offload_s) : 0;
    int every = p <= 32 ? 1 : (p + 31) / 32;
    pp__sb_printf(b, "<g class=\"rows\">\n");
    for (int i = 0; i < p; i++) {
        double y = TOP + i * row;
        pp__sb_printf(b, "<g class=\"stage-row\" data-stage=\"%d\"><rect class=\"idle\" x=\"%.1f\" y=\"%.1f\" "
                         "width=\"%.1f\" height=\"%.1f\" fill=\"#e9e9e9\"/>",
                      i, X0, y, X1 - X0, row - gap);
        draw_row(b, &s, &tm, i, y, row - gap, z3);
        if (i % every == 0 || i == p - 1)
            pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" text-anchor=\"end\">stage %d</text>",
                          X0 - 6, y + (row - gap) / 2 + 3.5, fmin(10, fmax(7, row)), i);
        pp__sb_printf(b, "</g>\n");
    }
    pp__sb_printf(b, "</g>\n");
    tail_blocks(b, pl, &tm, s.end, TOP, y1);
    breaks(b, &tm, TOP, y1);
    time_axis(b, &tm, &s, tail, y1 + 2);
    legend(b, pl, y1 + 58);
    pp__sb_printf(b, "</svg>\n");
    free(s.fin_f);
    free(s.fin_b);
}
