/*
 * chart_waterfall.c — the step-time waterfall (docs/report.md): compute,
 * recompute, exposed TP/CP/EP/PP communication, the pipeline bubble, exposed
 * DP/ZeRO communication, the optimizer and offload, each bar starting where
 * the previous ended, adding up to the step (pp_time; docs/time.md). The
 * DP/ZeRO traffic hidden behind the backward (dp_comm_s - dp_comm_exposed_s)
 * is drawn hatched beside the exposed part; it does not add to the step.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "configs/svg.h"

#define W 920
#define LX 168.0  /* bars start */
#define RX 740.0  /* bars end at the largest extent */
#define TOP 50.0
#define ROW 24.0

typedef struct term {
    const char *key, *name;
    double s;
} term;

static void bar(pp__sbuf *b, const term *t, double at, double scale, double y, double step, const char *fill, int total)
{
    char d[32];
    pp__fmt_secs(d, sizeof d, t->s);
    double x0 = LX + at * scale, w = t->s * scale;
    pp__sb_printf(b, "<g class=\"wf-row%s\" data-key=\"%s\" data-s=\"%.17g\"><text x=\"%.1f\" y=\"%.1f\" "
                     "font-size=\"12\" text-anchor=\"end\"%s>%s</text>",
                  total ? " wf-total" : "", t->key, t->s, LX - 10, y + ROW / 2 + 2, total ? " font-weight=\"bold\"" : "",
                  t->name);
    if (t->s > 0)
        pp__sb_printf(b, "<rect class=\"wf-bar\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"/>", x0,
                      y + 3, fmax(w, 1), ROW - 8, fill);
    pp__sb_printf(b, "<text class=\"wf-value\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\">%s",
                  fmin(x0 + fmax(w, 1) + 6, RX + 8), y + ROW / 2 + 2, t->s > 0 ? "#222" : "#999", d);
    if (!total && step > 0) pp__sb_printf(b, " (%.1f%%)", 100 * t->s / step);
    pp__sb_printf(b, "</text></g>\n");
}

void pp__svg_waterfall(pp__sbuf *b, const pp__chart_ctx *x)
{
    const pp_time *t = &x->p->time;
    term terms[] = {
        {"compute_s", "compute", t->compute_s},        {"recompute_s", "recompute", t->recompute_s},
        {"tp_comm_s", "TP comm", t->tp_comm_s},        {"cp_comm_s", "CP comm", t->cp_comm_s},
        {"ep_comm_s", "EP comm", t->ep_comm_s},        {"pp_comm_s", "PP comm", t->pp_comm_s},
        {"bubble_s", "pipeline bubble", t->bubble_s},  {"dp_comm_exposed_s", "DP/ZeRO exposed", t->dp_comm_exposed_s},
        {"optimizer_s", "optimizer", t->optimizer_s},  {"offload_s", "offload", t->offload_s}};
    static const char *const fill[] = {"#4C8BD0", "#6BAED6", "#66CCEE", "#44AA99", "#117733", "#999933",
                                       "#BBBBBB", "#CC3311", "#7b4fa0", "#8c564b"};
    int n = (int)(sizeof terms / sizeof *terms);
    double hidden = fmax(0, t->dp_comm_s - t->dp_comm_exposed_s), before_dp = 0, extent = t->step_s;
    for (int k = 0; k < 7; k++) before_dp += terms[k].s;
    extent = fmax(extent, before_dp + t->dp_comm_exposed_s + hidden);
    double scale = extent > 0 ? (RX - LX) / extent : 0, h = TOP + (n + 2) * ROW + 40 + (t->expert_host_s > 0 ? 10 : 0);
    pp__sb_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" class=\"chart waterfall\" id=\"");
    pp__svg_esc(b, x->id);
    pp__sb_printf(b, "-waterfall\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" data-step=\"%.17g\" "
                     "data-dp-total=\"%.17g\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n<rect "
                     "width=\"%d\" height=\"%.0f\" fill=\"#fff\"/>\n<defs><pattern id=\"",
                  W, h, W, h, t->step_s, t->dp_comm_s, W, h);
    pp__svg_esc(b, x->id);
    pp__sb_printf(b, "-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
                     "<rect width=\"6\" height=\"6\" fill=\"#fff\"/><rect width=\"2\" height=\"6\" fill=\"#CC3311\"/>"
                     "</pattern></defs>\n");
    char st[32];
    pp__fmt_secs(st, sizeof st, t->step_s);
    pp__sb_printf(b, "<text class=\"title\" x=\"%.1f\" y=\"22\" font-size=\"14\" font-weight=\"bold\">Step time: "
                     "%s</text>\n<text x=\"%.1f\" y=\"40\" font-size=\"11\" fill=\"#555\">the slowest stage (%d); each "
                     "bar starts where the previous ended</text>\n",
                  20.0, st, 20.0, t->slowest_stage);
    double at = 0, y = TOP;
    for (int k = 0; k < n; k++, y += ROW) {
        bar(b, &terms[k], at, scale, y, t->step_s, fill[k], 0);
        if (k == 1 && t->expert_host_s > 0) { /* inside compute and recompute: named, not drawn twice */
            char d[32];
            pp__fmt_secs(d, sizeof d, t->expert_host_s);
            pp__sb_printf(b, "<text class=\"wf-note\" data-key=\"expert_host_s\" data-s=\"%.17g\" x=\"%.1f\" "
                             "y=\"%.1f\" font-size=\"10\" fill=\"#555\">of compute and recompute, %s waiting on "
                             "the host to launch expert GEMMs</text>\n",
                          t->expert_host_s, LX, y + ROW + 1, d);
            y += 10;
        }
        if (k == 7 && hidden > 0) { /* the overlapped part, beside the exposed one */
            char d[32];
            pp__fmt_secs(d, sizeof d, hidden);
            double x0 = LX + (at + terms[k].s) * scale;
            pp__sb_printf(b, "<g class=\"wf-hidden\" data-s=\"%.17g\"><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                             "height=\"%.1f\" fill=\"url(#",
                          hidden, x0, y + 5, fmax(hidden * scale, 1), ROW - 12);
            pp__svg_esc(b, x->id);
            pp__sb_printf(b, "-hatch)\" stroke=\"#CC3311\" stroke-width=\"0.6\"/><text x=\"%.1f\" y=\"%.1f\" "
                             "font-size=\"10\" fill=\"#CC3311\">+ %s hidden behind the backward</text></g>\n",
                          fmin(x0 + hidden * scale + 6, RX - 150), y + ROW + 1, d);
            y += 10;
        }
        at += terms[k].s;
    }
    term total = {"step_s", "step", t->step_s};
    pp__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n", LX - 150, y + 2, RX,
                  y + 2);
    bar(b, &total, 0, scale, y + 4, t->step_s, "#333", 1);
    pp__sb_printf(b, "</svg>\n");
}
