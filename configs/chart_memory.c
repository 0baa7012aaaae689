/*
 * chart_memory.c — the report's memory charts (docs/report.md):
 *   - the timeline of one stage over one step, a stacked area of the
 *     categories of pp_memory_timeline, with the usable memory, the peak
 *     and, where the validation has one, its error band;
 *   - one stacked bar per pipeline stage at its peak moment, the blocks of
 *     each stage written under its bar.
 * Every number drawn is also in a data-* attribute, so a test can hold the
 * picture to the JSON output.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "configs/svg.h"

#define W 920
#define H 380
#define X0 64.0
#define X1 700.0
#define Y0 52.0
#define Y1 318.0
#define LX 716.0
#define GIB 1073741824.0

/* Bottom to top: what stays, then what comes and goes. */
static const pp_mem_cat stack_order[PP_MEM_CAT_COUNT] = {
    PP_MEM_CONTEXT, PP_MEM_PARAMS,      PP_MEM_OPTIMIZER, PP_MEM_GRADS,     PP_MEM_OPT_TEMP, PP_MEM_COMM,
    PP_MEM_CAST,    PP_MEM_ACTIVATIONS, PP_MEM_RECOMPUTE, PP_MEM_LOSS,      PP_MEM_ALLOCATOR};

const char *pp__mem_colour(pp_mem_cat c)
{
    static const char *const col[PP_MEM_CAT_COUNT] = {
        [PP_MEM_PARAMS] = "#4477AA",    [PP_MEM_GRADS] = "#EE7733",     [PP_MEM_OPTIMIZER] = "#228833",
        [PP_MEM_OPT_TEMP] = "#CCBB44",  [PP_MEM_ACTIVATIONS] = "#CC3311", [PP_MEM_RECOMPUTE] = "#AA3377",
        [PP_MEM_CAST] = "#44AA99",
        [PP_MEM_LOSS] = "#882255",      [PP_MEM_COMM] = "#66CCEE",      [PP_MEM_ALLOCATOR] = "#BBBBBB",
        [PP_MEM_CONTEXT] = "#777777"};
    return (int)c >= 0 && c < PP_MEM_CAT_COUNT ? col[c] : "#000";
}

const char *pp__mem_label(pp_mem_cat c)
{
    static const char *const lab[PP_MEM_CAT_COUNT] = {
        [PP_MEM_PARAMS] = "parameters",        [PP_MEM_GRADS] = "gradients",
        [PP_MEM_OPTIMIZER] = "optimizer state", [PP_MEM_OPT_TEMP] = "optimizer step temporaries",
        [PP_MEM_ACTIVATIONS] = "activations",  [PP_MEM_RECOMPUTE] = "backward working set",
        [PP_MEM_CAST] = "16-bit weight casts (autocast)",
        [PP_MEM_LOSS] = "logits and loss",     [PP_MEM_COMM] = "communication buffers",
        [PP_MEM_ALLOCATOR] = "allocator reserve", [PP_MEM_CONTEXT] = "CUDA context + NCCL"};
    return (int)c >= 0 && c < PP_MEM_CAT_COUNT ? lab[c] : "?";
}

static const char *phase_name(pp_phase p) { return p == PP_PHASE_OPTIMIZER ? "optimizer step" : "forward/backward"; }

/* ------------------------------------------------------------ shared */

static void svg_open(pp__sbuf *b, const char *cls, const char *id, const char *suffix, const char *attrs, int w, int h)
{
    pp__sb_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" class=\"chart %s\" id=\"", cls);
    pp__svg_esc(b, id);
    pp__sb_printf(b, "%s\" %s width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                     "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n<rect width=\"%d\" height=\"%d\" "
                     "fill=\"#fff\"/>\n",
                  suffix, attrs, w, h, w, h, w, h);
}

/* Y axis in GiB with gridlines across [x0, x1]. */
static void y_axis(pp__sbuf *b, const pp__axis *ay, double x0, double x1, double y0, double y1)
{
    char s[32];
    pp__sb_printf(b, "<g class=\"y-axis\" font-size=\"11\" fill=\"#333\">\n");
    for (int i = 0; i < ay->nt; i++) {
        double y = pp__axis_px(ay, ay->tick[i]);
        pp__svg_num(s, sizeof s, ay->tick[i]);
        pp__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>"
                         "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                      x0, y, x1, y, x0 - 6, y + 4, s);
    }
    pp__sb_printf(b, "</g>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n"
                     "<text x=\"16\" y=\"%.1f\" font-size=\"12\" transform=\"rotate(-90 16 %.1f)\" "
                     "text-anchor=\"middle\">GiB per GPU</text>\n",
                  x0, y0, x1 - x0, y1 - y0, (y0 + y1) / 2, (y0 + y1) / 2);
}

/* Legend of the categories any of the totals uses, at (x, y). */
static void legend(pp__sbuf *b, const int used[PP_MEM_CAT_COUNT], double x, double y)
{
    pp__sb_printf(b, "<g class=\"legend\" font-size=\"11\" fill=\"#222\">\n");
    for (int k = PP_MEM_CAT_COUNT - 1; k >= 0; k--) {
        pp_mem_cat c = stack_order[k];
        if (!used[c]) continue;
        pp__sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%.1f\" "
                         "y=\"%.1f\">%s</text>\n",
                      x, y - 10, pp__mem_colour(c), x + 18, y, pp__mem_label(c));
        y += 18;
    }
    pp__sb_printf(b, "</g>\n");
}

/* The usable-memory line, or a note that it lies above the chart. */
static void usable_line(pp__sbuf *b, const pp__axis *ay, double usable, double x0, double x1)
{
    char g[32];
    pp__fmt_gib(g, sizeof g, usable);
    if (usable / GIB <= ay->hi) {
        double y = pp__axis_px(ay, usable / GIB);
        pp__sb_printf(b, "<g class=\"usable\" data-bytes=\"%.17g\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                         "stroke=\"#c00\" stroke-width=\"1.5\" stroke-dasharray=\"6,4\"/><text x=\"%.1f\" y=\"%.1f\" "
                         "font-size=\"11\" fill=\"#c00\" paint-order=\"stroke\" stroke=\"#fff\" stroke-width=\"3\">"
                         "usable %s GiB</text></g>\n",
                      usable, x0, y, x1, y, x0 + 4, y - 4, g);
    } else {
        pp__sb_printf(b, "<g class=\"usable\" data-bytes=\"%.17g\"><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                         "fill=\"#c00\">\xe2\x86\x91 usable %s GiB,</text><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                         "fill=\"#c00\">above the chart</text></g>\n",
                      usable, LX, Y1 - 18, g, LX + 12, Y1 - 4);
    }
}

/* A tooltip's lines for a set of category values. */
static void tip_categories(pp__sbuf *b, const double *bytes, double total)
{
    char g[32];
    pp__fmt_gib(g, sizeof g, total);
    pp__sb_printf(b, "total %s GiB", g);
    for (int k = PP_MEM_CAT_COUNT - 1; k >= 0; k--) {
        pp_mem_cat c = stack_order[k];
        if (bytes[c] <= 0) continue;
        pp__fmt_gib(g, sizeof g, bytes[c]);
        pp__sb_printf(b, "&#10;%s %s", pp__mem_label(c), g);
    }
}

/* ------------------------------------------------------------ timeline */

static const char *event_word(pp_tl_event e)
{
    switch (e) {
    case PP_TL_START: return "step starts";
    case PP_TL_FORWARD: return "forward";
    case PP_TL_BACKWARD: return "backward";
    case PP_TL_STEP: return "optimizer step";
    default: return "after the step";
    }
}

/* x of each point: one slot each, two more for an elided run. */
static void x_positions(const pp_mem_timeline *t, double *x)
{
    double pos = 0;
    for (int i = 0; i < t->n; i++) {
        if (i > 0) pos += t->pts[i].elided ? 3 : 1;
        x[i] = pos;
    }
    double span = pos > 0 ? pos : 1;
    for (int i = 0; i < t->n; i++) x[i] = X0 + 8 + x[i] / span * (X1 - X0 - 16);
}

/* Background band of each run of forward, backward or optimizer points. */
static void phase_bands(pp__sbuf *b, const pp_mem_timeline *t, const double *x)
{
    static const char *const fill[PP_TL_EVENT_COUNT] = {"none", "#eaf2fb", "#fbefe4", "#f1eaf7", "none"};
    static const char *const word[PP_TL_EVENT_COUNT] = {"", "forward", "backward", "step", ""};
    pp__sb_printf(b, "<g class=\"phases\">\n");
    for (int i = 0; i < t->n;) {
        int j = i;
        pp_tl_event e = t->pts[i].event;
        while (j + 1 < t->n && t->pts[j + 1].event == e) j++;
        double a = i > 0 ? (x[i - 1] + x[i]) / 2 : X0, z = j + 1 < t->n ? (x[j] + x[j + 1]) / 2 : X1;
        if (strcmp(fill[e], "none")) {
            pp__sb_printf(b, "<rect class=\"phase phase-%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                             "fill=\"%s\"/>",
                          word[e], a, Y0, z - a, Y1 - Y0, fill[e]);
            if (z - a > 46)
                pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#666\" text-anchor=\"middle\">%s</text>",
                              (a + z) / 2, Y0 + 12, word[e]);
            pp__sb_printf(b, "\n");
        }
        i = j + 1;
    }
    pp__sb_printf(b, "</g>\n");
}

/* A polyline through (x[i], y[i]) in the order given, points inside a flat
 * run left out (the pixels are the same). */
static void polyline(pp__sbuf *b, const double *x, const double *y, int n, int reverse, int first)
{
    for (int k = 0; k < n; k++) {
        int i = reverse ? n - 1 - k : k, prev = reverse ? i + 1 : i - 1, next = reverse ? i - 1 : i + 1;
        int flat = k > 0 && k < n - 1 && fabs(y[prev] - y[i]) < 0.05 && fabs(y[next] - y[i]) < 0.05;
        if (flat) continue;
        pp__sb_printf(b, "%s%.1f %.1f", first && k == 0 ? "M" : "L", x[i], y[i]);
    }
}

/* The stacked areas, bottom up; *used marks the categories drawn. */
static void areas(pp__sbuf *b, const pp_mem_timeline *t, const double *x, const pp__axis *ay, int *used)
{
    double low[PP_TIMELINE_MAX] = {0}, y0[PP_TIMELINE_MAX], y1[PP_TIMELINE_MAX];
    pp__sb_printf(b, "<g class=\"areas\">\n");
    for (int k = 0; k < PP_MEM_CAT_COUNT; k++) {
        pp_mem_cat c = stack_order[k];
        int any = 0;
        for (int i = 0; i < t->n; i++) any |= t->pts[i].bytes[c] > 0;
        used[c] = any;
        if (!any) continue;
        for (int i = 0; i < t->n; i++) {
            y0[i] = pp__axis_px(ay, low[i] / GIB);
            y1[i] = pp__axis_px(ay, (low[i] + t->pts[i].bytes[c]) / GIB);
            low[i] += t->pts[i].bytes[c];
        }
        pp__sb_printf(b, "<path class=\"area cat-%s\" fill=\"%s\" d=\"", pp_mem_cat_name(c), pp__mem_colour(c));
        polyline(b, x, y1, t->n, 0, 1);
        polyline(b, x, y0, t->n, 1, 0);
        pp__sb_printf(b, "Z\"/>\n");
    }
    pp__sb_printf(b, "</g>\n");
}

static void elisions(pp__sbuf *b, const pp_mem_timeline *t, const double *x)
{
    for (int i = 1; i < t->n; i++) {
        if (!t->pts[i].elided) continue;
        double mx = (x[i - 1] + x[i]) / 2;
        pp__sb_printf(b, "<g class=\"elided\" data-passes=\"%d\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                         "stroke=\"#fff\" stroke-width=\"3\" stroke-dasharray=\"3,3\"/><text x=\"%.1f\" y=\"%.1f\" "
                         "font-size=\"10\" fill=\"#444\" text-anchor=\"middle\">\xe2\x8b\xaf %d</text></g>\n",
                      t->pts[i].elided, mx, Y0 + 16, mx, Y1, mx, Y1 + 13, t->pts[i].elided);
    }
}

/* GiB with 3 decimals, "0" for nothing (compact for the hover data). */
static void put_gib(pp__sbuf *b, double bytes)
{
    if (bytes <= 0) pp__sb_printf(b, "0");
    else pp__sb_printf(b, "%.3f", bytes / GIB);
}

/* Hover data: one overlay over the plot, the points' x and values as JSON
 * ({"x": [...], "c": [category labels], "p": [[event, micro-batch, block,
 * elided, total, values...], ...]}, GiB); the script shows the nearest. */
static void hover_data(pp__sbuf *b, const pp_mem_timeline *t, const double *x)
{
    pp__sb_printf(b, "<rect class=\"hover-area\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                     "fill=\"transparent\" data-points=\"{&quot;x&quot;:[",
                  X0, Y0, X1 - X0, Y1 - Y0);
    for (int i = 0; i < t->n; i++) pp__sb_printf(b, "%s%.1f", i ? "," : "", x[i]);
    pp__sb_printf(b, "],&quot;c&quot;:[");
    for (int k = PP_MEM_CAT_COUNT - 1; k >= 0; k--)
        pp__sb_printf(b, "%s&quot;%s&quot;", k < PP_MEM_CAT_COUNT - 1 ? "," : "", pp__mem_label(stack_order[k]));
    pp__sb_printf(b, "],&quot;p&quot;:[");
    for (int i = 0; i < t->n; i++) {
        const pp_mem_point *p = &t->pts[i];
        pp__sb_printf(b, "%s[&quot;%s&quot;,%d,%d,%d,", i ? "," : "", event_word(p->event), p->unit + 1, p->block,
                      p->elided);
        put_gib(b, p->total);
        for (int k = PP_MEM_CAT_COUNT - 1; k >= 0; k--) {
            pp__sb_printf(b, ",");
            put_gib(b, p->bytes[stack_order[k]]);
        }
        pp__sb_printf(b, "]");
    }
    pp__sb_printf(b, "]}\"/>\n");
}

/* The peak: a marker, its value and phase, and the validation's band. */
static void peak_marker(pp__sbuf *b, const pp_mem_timeline *t, const double *x, const pp__axis *ay, double lo,
                        double hi)
{
    const pp_mem_point *p = &t->pts[t->peak];
    double px = x[t->peak], py = pp__axis_px(ay, p->total / GIB);
    char g[32];
    pp__fmt_gib(g, sizeof g, p->total);
    pp__sb_printf(b, "<g class=\"peak\" data-bytes=\"%.17g\" data-phase=\"%s\" data-event=\"%s\">"
                     "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-dasharray=\"2,2\"/>"
                     "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#000\"/>",
                  p->total, p->phase == PP_PHASE_OPTIMIZER ? "optimizer_step" : "forward_backward",
                  event_word(p->event), px, Y1, px, py, px, py);
    int right = px < (X0 + X1) / 2;
    /* where in the step: the forward's end, the backward's start, ... */
    int k = t->peak;
    const char *when = p->event == PP_TL_FORWARD ? "end of the forward"
                     : p->event == PP_TL_STEP    ? "optimizer step"
                     : p->event != PP_TL_BACKWARD ? "between steps"
                     : k > 0 && t->pts[k - 1].event == PP_TL_FORWARD ? "start of the backward"
                     : k + 1 < t->n && t->pts[k + 1].event == PP_TL_STEP ? "end of the backward"
                     : "backward";
    pp__sb_printf(b, "<text class=\"peak-label\" x=\"%.1f\" y=\"%.1f\" font-size=\"12\" font-weight=\"bold\" "
                     "paint-order=\"stroke\" stroke=\"#fff\" stroke-width=\"3\" text-anchor=\"%s\">peak %s GiB "
                     "(%s)</text></g>\n",
                  px + (right ? 8 : -8), py - 8 < Y0 + 26 ? Y0 + 26 : py - 8, right ? "start" : "end", g, when);
    if (lo == 0 && hi == 0) return;
    /* measured = predicted / (1 + error): the band a measurement fell in */
    double ylo = pp__axis_px(ay, p->total / (1 + hi) / GIB), yhi = pp__axis_px(ay, p->total / (1 + lo) / GIB);
    double bx = px + (right ? -10 : 10);
    pp__sb_printf(b, "<g class=\"error-band\" data-lo=\"%.17g\" data-hi=\"%.17g\" stroke=\"#000\"><rect x=\"%.1f\" "
                     "y=\"%.1f\" width=\"6\" height=\"%.1f\" fill=\"#000\" fill-opacity=\"0.15\"/><line x1=\"%.1f\" "
                     "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/></g>\n",
                  lo, hi, bx - 3, yhi, ylo - yhi, bx - 5, ylo, bx + 5, ylo, bx - 5, yhi, bx + 5, yhi);
}

void pp__svg_memory_timeline(pp__sbuf *b, const pp__chart_ctx *cx, const pp_mem_timeline *t, double lo, double hi)
{
    const pp_memory *mem = &cx->p->memory;
    double x[PP_TIMELINE_MAX], top = 0;
    for (int i = 0; i < t->n; i++) top = fmax(top, t->pts[i].total);
    if (hi != 0 || lo != 0) top = fmax(top, t->pts[t->peak].total / (1 + lo));
    /* keep the usable line in view unless it would flatten the picture */
    if (mem->gpu_bytes <= 1.6 * top) top = fmax(top, mem->gpu_bytes);
    pp__axis ay = {.p0 = Y1, .p1 = Y0 + 22};
    pp__axis_linear0(&ay, top * 1.04 / GIB, 5);
    x_positions(t, x);
    char suffix[32];
    snprintf(suffix, sizeof suffix, "-timeline-%d", t->stage);
    char attrs[96];
    snprintf(attrs, sizeof attrs, "data-stage=\"%d\" data-peak-bytes=\"%.17g\"", t->stage, t->pts[t->peak].total);
    svg_open(b, cx->alt ? "memory-timeline alt" : "memory-timeline", cx->id, suffix, attrs, W, H);
    pp__sb_printf(b, "<text class=\"title\" x=\"%.1f\" y=\"22\" font-size=\"14\" font-weight=\"bold\">Stage %d memory "
                     "over one step</text>\n<text x=\"%.1f\" y=\"40\" font-size=\"11\" fill=\"#555\">%d micro-batch%s in "
                     "flight at the peak, %d per step; events in order, not to scale in time</text>\n",
                  X0, t->stage, X0, t->units_held, t->units_held == 1 ? "" : "es", t->units_per_step);
    phase_bands(b, t, x);
    int used[PP_MEM_CAT_COUNT];
    areas(b, t, x, &ay, used);
    y_axis(b, &ay, X0, X1, Y0, Y1);
    elisions(b, t, x);
    usable_line(b, &ay, mem->gpu_bytes, X0, X1);
    peak_marker(b, t, x, &ay, lo, hi);
    hover_data(b, t, x);
    legend(b, used, LX, Y0 + 10);
    if (lo != 0 || hi != 0)
        pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#444\">I-bar: measured range in "
                         "validation</text>\n",
                      LX, Y1 + 14);
    pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#333\" text-anchor=\"middle\">start "
                     "\xe2\x86\x92 forward \xe2\x86\x92 backward \xe2\x86\x92 optimizer step</text>\n</svg>\n",
                  (X0 + X1) / 2, Y1 + 36);
}

/* ------------------------------------------------------------ stage bars */

/* Blocks of stage i written under its bar: "12", "+E", "+H". */
static void blocks_text(const pp_stage_mem *st, char *out, size_t cap)
{
    int n = st->first_layer >= 0 ? st->last_layer - st->first_layer + 1 : 0;
    snprintf(out, cap, "%d%s%s", n, st->has_embedding ? "+E" : "", st->has_lm_head ? "+H" : "");
}

void pp__svg_stage_bars(pp__sbuf *b, const pp__chart_ctx *cx, pp_mem_timeline *t)
{
    const pp_memory *mem = &cx->p->memory;
    int p = mem->nstages, used[PP_MEM_CAT_COUNT] = {0};
    double top = mem->peak_bytes;
    if (mem->gpu_bytes <= 1.6 * top) top = fmax(top, mem->gpu_bytes);
    pp__axis ay = {.p0 = Y1, .p1 = Y0};
    pp__axis_linear0(&ay, top * 1.04 / GIB, 5);
    char attrs[64];
    snprintf(attrs, sizeof attrs, "data-stages=\"%d\"", p);
    svg_open(b, "stage-bars", cx->id, "-stages", attrs, W, H);
    pp__sb_printf(b, "<text class=\"title\" x=\"%.1f\" y=\"22\" font-size=\"14\" font-weight=\"bold\">Memory per "
                     "stage at its peak</text>\n<text x=\"%.1f\" y=\"40\" font-size=\"11\" fill=\"#555\">under each "
                     "bar: the stage and its blocks (+E embedding, +H LM head)</text>\n",
                  X0, X0);
    y_axis(b, &ay, X0, X1, Y0, Y1);
    double slot = (X1 - X0) / p, bw = fmin(44, slot * 0.72);
    int every = p <= 24 ? 1 : (p + 23) / 24; /* labels every k-th stage */
    pp__sb_printf(b, "<g class=\"bars\">\n");
    for (int i = 0; i < p; i++) {
        const pp_stage_mem *st = &mem->stages[i];
        pp_memory_timeline(cx->m, &cx->p->strategy, st, t);
        const pp_mem_point *pk = &t->pts[t->peak];
        double bx = X0 + slot * (i + 0.5) - bw / 2, low = 0;
        char lab[32], ranges[96];
        blocks_text(st, lab, sizeof lab);
        pp_stage_blocks_text(&cx->p->strategy, i, ranges, sizeof ranges);
        pp__sb_printf(b, "<g class=\"bar tip%s\" data-stage=\"%d\" data-bytes=\"%.17g\" data-blocks=\"%s\" "
                         "data-tip=\"stage %d, blocks %s (%s), peak in %s&#10;",
                      i == mem->peak_stage ? " peak-stage" : "", i, pk->total, lab, i,
                      st->first_layer >= 0 ? ranges : "none", lab, phase_name(st->peak_phase));
        tip_categories(b, pk->bytes, pk->total);
        pp__sb_printf(b, "\">");
        for (int k = 0; k < PP_MEM_CAT_COUNT; k++) {
            pp_mem_cat c = stack_order[k];
            if (pk->bytes[c] <= 0) continue;
            used[c] = 1;
            double y0 = pp__axis_px(&ay, low / GIB), y1 = pp__axis_px(&ay, (low + pk->bytes[c]) / GIB);
            pp__sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.2f\" fill=\"%s\"/>", bx, y1, bw,
                          y0 - y1, pp__mem_colour(c));
            low += pk->bytes[c];
        }
        if (i == mem->peak_stage)
            pp__sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#000\" "
                             "stroke-width=\"1.5\"/>",
                          bx - 1, pp__axis_px(&ay, low / GIB) - 1, bw + 2, Y1 - pp__axis_px(&ay, low / GIB) + 1);
        if (i % every == 0 || i == p - 1)
            pp__sb_printf(b, "<text class=\"stage-label\" x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\">%d"
                             "</text><text class=\"blocks-label\" x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#555\" "
                             "text-anchor=\"middle\">%s</text>",
                          bx + bw / 2, Y1 + 13, i, bx + bw / 2, Y1 + 26, lab);
        pp__sb_printf(b, "</g>\n");
    }
    pp__sb_printf(b, "</g>\n");
    char g[32];
    pp__fmt_gib(g, sizeof g, mem->peak_bytes);
    pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">stage (blocks)%s; peak %s GiB "
                     "on stage %d (outlined)</text>\n",
                  (X0 + X1) / 2, Y1 + 44, every > 1 ? ", every few labelled" : "", g, mem->peak_stage);
    usable_line(b, &ay, mem->gpu_bytes, X0, X1);
    legend(b, used, LX, Y0 + 10);
    pp__sb_printf(b, "</svg>\n");
}
