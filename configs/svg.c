/*
 * svg.c — the chart of `parplan compare --plot`: cost against time to train
 * for every option, one marker per option (colour and shape per cluster
 * type), labels placed to avoid each other, the Pareto front ringed and
 * joined, deadline and budget lines, ticks and axis titles, a legend with
 * each type's GPU and price (and its source date). Plain SVG 1.1 written by
 * hand: no dependency, the same bytes for the same result. Axes turn
 * logarithmic when the data spans a factor of 10 or more.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/svg.h"

/* ------------------------------------------------------------ text */

static void sb_put(pp__sbuf *b, const char *s, size_t len) { pp__sb_printf(b, "%.*s", (int)len, s); }

static void sb_esc(pp__sbuf *b, const char *s) { pp__svg_esc(b, s); }

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when invalid. */
static int utf8_len(const unsigned char *s)
{
    int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return n;
}

void pp__svg_esc(pp__sbuf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n;
        switch (*p) {
        case '&': sb_put(b, "&amp;", 5); p++; continue;
        case '<': sb_put(b, "&lt;", 4); p++; continue;
        case '>': sb_put(b, "&gt;", 4); p++; continue;
        case '"': sb_put(b, "&quot;", 6); p++; continue;
        case '\'': sb_put(b, "&#39;", 5); p++; continue;
        default: break;
        }
        if (*p < 0x20 || *p == 0x7f) n = 0;
        else if (*p < 0x80) n = 1;
        else n = utf8_len(p);
        if (n == 0) {
            sb_put(b, "?", 1);
            p++;
        } else {
            sb_put(b, (const char *)p, (size_t)n);
            p += n;
        }
    }
}

/* ------------------------------------------------------------ numbers */

void pp__svg_num(char *out, size_t cap, double v)
{
    if (v == 0) {
        snprintf(out, cap, "0");
        return;
    }
    int mag = (int)floor(log10(fabs(v)));
    int dec = mag >= 2 ? 0 : 2 - mag;
    snprintf(out, cap, "%.*f", dec > 6 ? 6 : dec, v);
    if (strchr(out, '.')) {
        char *e = out + strlen(out) - 1;
        while (*e == '0') *e-- = '\0';
        if (*e == '.') *e = '\0';
    }
}

void pp__svg_usd(char *out, size_t cap, double v)
{
    static const char *const suf[] = {"", "k", "M", "B", "T"};
    int k = 0;
    while (fabs(v) >= 1000 && k < 4) v /= 1000, k++;
    char num[32];
    pp__svg_num(num, sizeof num, v);
    snprintf(out, cap, "$%s%s", num, suf[k]);
}

void pp__fmt_gib(char *out, size_t cap, double bytes) { snprintf(out, cap, "%.2f", bytes / 1073741824.0); }

void pp__fmt_secs(char *out, size_t cap, double s)
{
    static const char *const unit[] = {"s", "ms", "\xc2\xb5s", "ns"};
    int k = 0;
    while (s != 0 && fabs(s) < 1 && k < 3) s *= 1000, k++;
    char num[32];
    pp__svg_num(num, sizeof num, s);
    snprintf(out, cap, "%s %s", num, unit[k]);
}

/* ------------------------------------------------------------ axes */

double pp__axis_px(const pp__axis *a, double v)
{
    double t = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo)) : (v - a->lo) / (a->hi - a->lo);
    return a->p0 + t * (a->p1 - a->p0);
}

double pp__nice_step(double x)
{
    double e = pow(10, floor(log10(x))), f = x / e;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * e;
}

void pp__axis_fit(pp__axis *a, double lo, double hi)
{
    a->nt = a->nm = 0;
    if (!(hi > lo)) { /* one value: a window around it */
        lo = lo * 0.8;
        hi = hi * 1.25;
    }
    a->log = hi / lo >= 10;
    if (!a->log) {
        double step = pp__nice_step((hi - lo) / 5);
        a->lo = floor(lo / step) * step;
        a->hi = ceil(hi / step) * step;
        if (a->hi - hi < 0.04 * (a->hi - a->lo)) a->hi += step; /* room for the top marker */
        if (lo - a->lo < 0.04 * (a->hi - a->lo) && a->lo - step >= 0) a->lo -= step;
        for (double t = a->lo; t <= a->hi + step * 1e-9 && a->nt < 64; t += step) a->tick[a->nt++] = t;
        return;
    }
    a->lo = lo / 1.5;
    a->hi = hi * 1.5;
    int d0 = (int)floor(log10(a->lo)), d1 = (int)ceil(log10(a->hi));
    int few = d1 - d0 <= 3; /* few decades: label 1, 2, 5 */
    for (int d = d0; d <= d1; d++)
        for (int m = 1; m <= 9; m++) {
            double v = m * pow(10, d);
            if (v < a->lo || v > a->hi) continue;
            if (m == 1 || (few && (m == 2 || m == 5))) {
                if (a->nt < 64) a->tick[a->nt++] = v;
            } else if (a->nm < 128) {
                a->minor[a->nm++] = v;
            }
        }
}

void pp__axis_linear0(pp__axis *a, double hi, int n)
{
    a->log = 0;
    a->nm = 0;
    a->lo = 0;
    if (!(hi > 0) || !isfinite(hi)) hi = 1;
    double step = pp__nice_step(hi / (n > 0 ? n : 5));
    a->hi = ceil(hi / step) * step;
    a->nt = 0;
    for (double t = 0; t <= a->hi + step * 1e-9 && a->nt < 64; t += step) a->tick[a->nt++] = t;
}

/* ------------------------------------------------------------ layout */

#define W 1000
#define H 640
#define PX0 96.0  /* plot area */
#define PX1 700.0
#define PY0 76.0
#define PY1 560.0
#define LX 724.0  /* legend */
#define CHAR_W 6.3 /* average glyph width at 11 px sans-serif, px */

static const char *const colours[8] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                       "#E69F00", "#56B4E9", "#8C564B", "#000000"};

static const char *colour_of(int ci) { return colours[ci % 8]; }
static int shape_of(int ci) { return (ci + ci / 8) % 4; } /* unique for 16 types */

/* A marker of cluster type ci centred at (x, y), radius about r. */
static void marker(pp__sbuf *b, int ci, double x, double y, double r, const char *extra)
{
    const char *c = colour_of(ci);
    switch (shape_of(ci)) {
    case 0: pp__sb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"%s/>", x, y, r, c, extra); break;
    case 1:
        pp__sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"%s/>", x - r * 0.9,
                  y - r * 0.9, r * 1.8, r * 1.8, c, extra);
        break;
    case 2:
        pp__sb_printf(b, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"%s/>", x, y - r * 1.25,
                  x + r * 1.25, y, x, y + r * 1.25, x - r * 1.25, y, c, extra);
        break;
    default:
        pp__sb_printf(b, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"%s/>", x, y - r * 1.2, x + r * 1.1,
                  y + r * 0.8, x - r * 1.1, y + r * 0.8, c, extra);
        break;
    }
}

typedef struct box {
    double x0, y0, x1, y1;
} box;

static double overlap_area(box a, box b)
{
    double w = fmin(a.x1, b.x1) - fmax(a.x0, b.x0), h = fmin(a.y1, b.y1) - fmax(a.y0, b.y0);
    return w > 0 && h > 0 ? w * h : 0;
}

/* Picks a label position around (x, y) inside the plot: right, left,
 * above, below, the diagonals, then the same farther out; the first that
 * overlaps no placed box (except the marker's own, self), else the one
 * that overlaps least. */
static box place_label(const box *placed, int np, int self, double x, double y, double r, double w)
{
    const double h = 12;
    box best = {x + r + 2, y - h / 2, x + r + 2 + w, y + h / 2};
    double least = INFINITY;
    for (int ring = 0; ring < 3; ring++) {
        double g = r + 2 + 10 * ring;
        const double cand[8][2] = {{x + g, y - h / 2}, {x - g - w, y - h / 2}, {x - w / 2, y - g - h},
                                   {x - w / 2, y + g}, {x + g, y - g - h},     {x + g, y + g},
                                   {x - g - w, y - g - h}, {x - g - w, y + g}};
        for (int k = 0; k < 8; k++) {
            box bx = {cand[k][0], cand[k][1], cand[k][0] + w, cand[k][1] + h};
            if (bx.x0 < PX0 + 2 || bx.x1 > PX1 - 2 || bx.y0 < PY0 + 2 || bx.y1 > PY1 - 2) continue;
            double area = 0;
            for (int i = 0; i < np; i++)
                if (i != self) area += overlap_area(bx, placed[i]);
            if (area == 0) return bx;
            if (area < least) least = area, best = bx;
        }
    }
    return best;
}

static int plotted(const pp_compare_option *e) { return e->status == PP_OK && isfinite(e->cost_usd) && e->cost_usd > 0 && e->days > 0; }

static void draw_axes(pp__sbuf *b, const pp__axis *ax, const pp__axis *ay, const char *xt, const char *yt)
{
    char s[64];
    pp__sb_printf(b, "<g class=\"grid\" stroke=\"#e6e6e6\" stroke-width=\"1\">\n");
    for (int i = 0; i < ax->nm; i++)
        pp__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#f3f3f3\"/>\n", pp__axis_px(ax, ax->minor[i]),
                  PY0, pp__axis_px(ax, ax->minor[i]), PY1);
    for (int i = 0; i < ay->nm; i++)
        pp__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#f3f3f3\"/>\n", PX0,
                  pp__axis_px(ay, ay->minor[i]), PX1, pp__axis_px(ay, ay->minor[i]));
    for (int i = 0; i < ax->nt; i++)
        pp__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", pp__axis_px(ax, ax->tick[i]), PY0,
                  pp__axis_px(ax, ax->tick[i]), PY1);
    for (int i = 0; i < ay->nt; i++)
        pp__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", PX0, pp__axis_px(ay, ay->tick[i]), PX1,
                  pp__axis_px(ay, ay->tick[i]));
    pp__sb_printf(b, "</g>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n", PX0,
              PY0, PX1 - PX0, PY1 - PY0);
    pp__sb_printf(b, "<g class=\"ticks\" font-size=\"11\" fill=\"#333\">\n");
    for (int i = 0; i < ax->nt; i++) {
        double x = pp__axis_px(ax, ax->tick[i]);
        pp__svg_num(s, sizeof s, ax->tick[i]);
        pp__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>", x, PY1, x, PY1 + 5);
        pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x, PY1 + 18, s);
    }
    for (int i = 0; i < ay->nt; i++) {
        double y = pp__axis_px(ay, ay->tick[i]);
        pp__svg_usd(s, sizeof s, ay->tick[i]);
        pp__sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>", PX0 - 5, y, PX0, y);
        pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", PX0 - 8, y + 4, s);
    }
    pp__sb_printf(b, "</g>\n<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">", (PX0 + PX1) / 2,
              PY1 + 42);
    sb_esc(b, xt);
    pp__sb_printf(b, "</text>\n<text class=\"axis-title\" transform=\"translate(%.1f,%.1f) rotate(-90)\" text-anchor=\"middle\" "
                 "font-size=\"13\">",
              24.0, (PY0 + PY1) / 2);
    sb_esc(b, yt);
    pp__sb_printf(b, "</text>\n");
}

/* Deadline (vertical) and budget (horizontal) lines, when inside the axes. */
static void draw_limits(pp__sbuf *b, const pp_compare_result *r, const pp__axis *ax, const pp__axis *ay)
{
    char s[64];
    double D = r->opts.deadline_days, B = r->opts.budget_usd;
    if (D > 0 && D >= ax->lo && D <= ax->hi) {
        double x = pp__axis_px(ax, D);
        pp__svg_num(s, sizeof s, D);
        pp__sb_printf(b, "<g class=\"deadline\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c00\" "
                     "stroke-dasharray=\"6,4\" stroke-width=\"1.5\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                     "fill=\"#c00\" text-anchor=\"end\">deadline %s d</text></g>\n",
                  x, PY0, x, PY1, x - 4, PY0 + 12, s);
    }
    if (B > 0 && B >= ay->lo && B <= ay->hi) {
        double y = pp__axis_px(ay, B);
        pp__svg_usd(s, sizeof s, B);
        pp__sb_printf(b, "<g class=\"budget\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c00\" "
                     "stroke-dasharray=\"2,3\" stroke-width=\"1.5\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                     "fill=\"#c00\" text-anchor=\"end\">budget %s</text></g>\n",
                  PX0, y, PX1, y, PX1 - 4, y - 4, s);
    }
}

static void draw_front(pp__sbuf *b, const pp_compare_result *r, const pp__axis *ax, const pp__axis *ay)
{
    if (r->nfront == 0) return;
    pp__sb_printf(b, "<polyline class=\"front-line\" fill=\"none\" stroke=\"#222\" stroke-width=\"1.5\" "
                 "stroke-dasharray=\"5,3\" points=\"");
    for (int i = 0; i < r->nfront; i++) {
        const pp_compare_option *e = &r->options[r->front[i]];
        pp__sb_printf(b, "%s%.1f,%.1f", i ? " " : "", pp__axis_px(ax, e->days), pp__axis_px(ay, e->cost_usd));
    }
    pp__sb_printf(b, "\"/>\n");
}

/* Tooltip of an option: what a reader hovering the marker wants. */
static void option_title(pp__sbuf *b, const pp_compare_result *r, const pp_compare_option *e)
{
    const pp_strategy *s = &e->plan.strategy;
    char c[32];
    pp__svg_usd(c, sizeof c, e->cost_usd);
    pp__sb_printf(b, "<title>");
    sb_esc(b, r->clusters[e->cluster].cluster.name);
    pp__sb_printf(b, " \xc3\x97 %d GPUs: %.3g days, %s, %.0f kWh; dp %d tp %d pp %d cp %d ZeRO-%d%s%s</title>", e->gpus, e->days,
              c, e->energy_kwh, s->dp, s->tp, s->pp, s->cp, s->zero, e->pareto ? "; Pareto front" : "",
              e->from_search ? "; smallest count meeting the deadline" : "");
}

/* Half the size of an option's marker with its rings, px. */
static double radius(const pp_compare_result *r, int i)
{
    return i == r->cheapest ? 15 : r->options[i].pareto ? 11 : 6.5;
}

#define FRONT_SAMPLES 400 /* points along the front line that labels avoid */

/* Small boxes every 6 px along the front's polyline, at most cap. */
static int front_obstacles(const pp_compare_result *r, const pp__axis *ax, const pp__axis *ay, box *out, int cap)
{
    int k = 0;
    for (int i = 1; i < r->nfront; i++) {
        const pp_compare_option *a = &r->options[r->front[i - 1]], *c = &r->options[r->front[i]];
        double x0 = pp__axis_px(ax, a->days), y0 = pp__axis_px(ay, a->cost_usd);
        double x1 = pp__axis_px(ax, c->days), y1 = pp__axis_px(ay, c->cost_usd);
        int steps = (int)(hypot(x1 - x0, y1 - y0) / 6) + 1;
        for (int s = 0; s <= steps && k < cap; s++) {
            double t = (double)s / steps, x = x0 + t * (x1 - x0), y = y0 + t * (y1 - y0);
            out[k++] = (box){x - 2, y - 2, x + 2, y + 2};
        }
    }
    return k;
}

static void draw_options(pp__sbuf *b, const pp_compare_result *r, const pp__axis *ax, const pp__axis *ay, const char *link,
                         const unsigned char *linked)
{
    int n = r->n, cap = 2 * n + 5 + FRONT_SAMPLES;
    box *placed = calloc((size_t)cap, sizeof *placed);
    if (!placed) {
        b->oom = 1;
        return;
    }
    int np = 0;
    for (int i = 0; i < n; i++) /* markers and rings first: labels avoid them all */
        if (plotted(&r->options[i])) {
            double x = pp__axis_px(ax, r->options[i].days), y = pp__axis_px(ay, r->options[i].cost_usd);
            double h = radius(r, i);
            placed[np++] = (box){x - h, y - h, x + h, y + h};
        }
    np += front_obstacles(r, ax, ay, placed + np, FRONT_SAMPLES);
    double D = r->opts.deadline_days, B = r->opts.budget_usd; /* their lines and labels */
    if (D > 0 && D >= ax->lo && D <= ax->hi)
        placed[np++] = (box){pp__axis_px(ax, D) - 90, PY0, pp__axis_px(ax, D) + 2, PY0 + 16},
        placed[np++] = (box){pp__axis_px(ax, D) - 2, PY0, pp__axis_px(ax, D) + 2, PY1};
    if (B > 0 && B >= ay->lo && B <= ay->hi)
        placed[np++] = (box){PX1 - 110, pp__axis_px(ay, B) - 16, PX1, pp__axis_px(ay, B) + 2},
        placed[np++] = (box){PX0, pp__axis_px(ay, B) - 2, PX1, pp__axis_px(ay, B) + 2};
    int self = 0; /* the marker box of the option being labelled */
    for (int i = 0; i < n; i++) {
        const pp_compare_option *e = &r->options[i];
        if (!plotted(e)) continue;
        double x = pp__axis_px(ax, e->days), y = pp__axis_px(ay, e->cost_usd);
        if (e->pareto)
            pp__sb_printf(b, "<circle class=\"front-point\" cx=\"%.1f\" cy=\"%.1f\" r=\"10\" fill=\"none\" stroke=\"#222\" "
                         "stroke-width=\"1.5\"/>\n", x, y);
        if (i == r->cheapest)
            pp__sb_printf(b, "<circle class=\"chosen\" cx=\"%.1f\" cy=\"%.1f\" r=\"14\" fill=\"none\" stroke=\"#c00\" "
                         "stroke-width=\"2\"/>\n", x, y);
        int linking = link && (!linked || linked[i]);
        if (linking) {
            pp__sb_printf(b, "<a href=\"#");
            sb_esc(b, link);
            pp__sb_printf(b, "%d\">", i);
        }
        pp__sb_printf(b, "<g class=\"option\" data-option=\"%d\" data-cluster=\"", i);
        sb_esc(b, r->clusters[e->cluster].cluster.name);
        pp__sb_printf(b, "\" data-gpus=\"%d\" data-days=\"%.17g\" data-cost=\"%.17g\">", e->gpus, e->days, e->cost_usd);
        option_title(b, r, e);
        marker(b, e->cluster, x, y, 5.5, " stroke=\"#fff\" stroke-width=\"0.8\"");
        char lab[PP_NAME_LEN + 32];
        snprintf(lab, sizeof lab, "%s \xc3\x97%d", r->clusters[e->cluster].cluster.name, e->gpus);
        double w = CHAR_W * (double)(strlen(lab) - 1); /* the x sign is two bytes, one glyph */
        double rad = radius(r, i);
        box bx = place_label(placed, np, self++, x, y, rad, w);
        placed[np++] = bx;
        double cx = fmin(fmax(x, bx.x0), bx.x1), cy = fmin(fmax(y, bx.y0), bx.y1), d = hypot(cx - x, cy - y);
        if (d > rad + 5) /* far from its marker: a leader line says whose label it is */
            pp__sb_printf(b, "<line class=\"leader\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
                             "stroke-width=\"0.8\"/>", x + (cx - x) * rad / d, y + (cy - y) * rad / d, cx, cy);
        pp__sb_printf(b, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#222\">", bx.x0, bx.y1 - 2);
        sb_esc(b, lab);
        pp__sb_printf(b, "</text></g>%s\n", linking ? "</a>" : "");
    }
    free(placed);
}

/* Price line of cluster type ci for the legend. */
static void price_text(const pp_compare_result *r, int ci, char *out, size_t cap)
{
    const pp_compare_option *e = NULL;
    for (int i = 0; i < r->n && !e; i++)
        if (r->options[i].cluster == ci) e = &r->options[i];
    if (!e || e->price_kind == PP_PRICE_NONE) {
        snprintf(out, cap, "no price: not plotted");
        return;
    }
    switch (e->price_kind) {
    case PP_PRICE_CATALOG: snprintf(out, cap, "$%.2f/GPU-h catalog, %s", e->usd_per_gpu_hour, e->price_date); break;
    case PP_PRICE_OVERRIDE: snprintf(out, cap, "$%.2f/GPU-h (given)", e->usd_per_gpu_hour); break;
    default:
        snprintf(out, cap, "$%.0f/GPU over %g y = $%.2f/GPU-h", r->clusters[ci].purchase_usd_per_gpu,
                 r->opts.amortize_years, e->usd_per_gpu_hour);
        break;
    }
}

static void draw_legend(pp__sbuf *b, const pp_compare_result *r, int unplotted)
{
    double y = PY0 + 4;
    char s[160];
    pp__sb_printf(b, "<g class=\"legend\" font-size=\"11\" fill=\"#222\">\n");
    pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" font-weight=\"bold\">cluster types</text>\n", LX, y);
    y += 20;
    for (int ci = 0; ci < r->nclusters; ci++) {
        const pp_cluster *c = &r->clusters[ci].cluster;
        pp__sb_printf(b, "<g class=\"legend-entry\">");
        marker(b, ci, LX + 6, y - 4, 5, "");
        pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\">", LX + 18, y);
        sb_esc(b, c->name);
        pp__sb_printf(b, " (");
        sb_esc(b, c->gpu.name);
        pp__sb_printf(b, ", %d/node)</text>", c->gpus_per_node);
        price_text(r, ci, s, sizeof s);
        pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#555\" font-size=\"10\">", LX + 18, y + 13);
        sb_esc(b, s);
        pp__sb_printf(b, "</text></g>\n");
        y += 32;
    }
    y += 6;
    pp__sb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"8\" fill=\"none\" stroke=\"#222\" stroke-width=\"1.5\"/>"
                 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222\" stroke-dasharray=\"5,3\"/>"
                 "<text x=\"%.1f\" y=\"%.1f\">Pareto front: no option is both</text>"
                 "<text x=\"%.1f\" y=\"%.1f\">cheaper and faster</text>\n",
              LX + 6, y - 4, LX - 6, y + 8, LX + 18, y + 8, LX + 24, y, LX + 24, y + 13);
    y += 34;
    if (r->cheapest >= 0) {
        const pp_compare_option *e = &r->options[r->cheapest];
        pp__sb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"9\" fill=\"none\" stroke=\"#c00\" stroke-width=\"2\"/>", LX + 6,
                  y - 4);
        int dl = r->opts.deadline_days > 0, bu = r->opts.budget_usd > 0;
        pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\">cheapest%s:</text><text x=\"%.1f\" y=\"%.1f\">", LX + 24, y,
                      dl && bu ? " meeting deadline and budget" : dl ? " meeting the deadline" : bu ? " within budget" : "",
                      LX + 24, y + 13);
        sb_esc(b, r->clusters[e->cluster].cluster.name);
        pp__sb_printf(b, " \xc3\x97%d GPUs</text>\n", e->gpus);
        y += 34;
    }
    if (unplotted > 0) {
        pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#555\">%d option%s without a plan or a price</text>"
                     "<text x=\"%.1f\" y=\"%.1f\" fill=\"#555\">not plotted</text>\n",
                  LX, y, unplotted, unplotted == 1 ? "" : "s", LX, y + 13);
        y += 30;
    }
    pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#555\" font-size=\"10\">energy is GPU board power x time;</text>"
                 "<text x=\"%.1f\" y=\"%.1f\" fill=\"#555\" font-size=\"10\">hover a marker for its plan</text>\n",
              LX, y, LX, y + 12);
    pp__sb_printf(b, "</g>\n");
}

static void draw_title(pp__sbuf *b, const pp_compare_result *r, const pp__axis *ax, const pp__axis *ay)
{
    char t[32];
    pp__svg_num(t, sizeof t, r->opts.train_tokens >= 1e12 ? r->opts.train_tokens / 1e12 : r->opts.train_tokens / 1e9);
    pp__sb_printf(b, "<text class=\"title\" x=\"%.1f\" y=\"28\" font-size=\"17\" font-weight=\"bold\">", PX0);
    sb_esc(b, r->model);
    pp__sb_printf(b, ": cost against time to train on %s%s tokens</text>\n", t, r->opts.train_tokens >= 1e12 ? "T" : "B");
    int purchase = 0;
    for (int i = 0; i < r->nclusters; i++) purchase |= r->clusters[i].purchase_usd_per_gpu > 0;
    const pp_search_opts *so = &r->opts.search;
    int seq = so->seq;
    for (int i = 0; i < r->n && !seq; i++)
        if (r->options[i].status == PP_OK) seq = r->options[i].plan.strategy.seq;
    pp__sb_printf(b, "<text class=\"subtitle\" x=\"%.1f\" y=\"50\" font-size=\"12\" fill=\"#555\">global batch %d "
                     "\xc3\x97 %d tokens; best plan of each option by %s; cost: %s; %s x, %s y</text>\n",
                  PX0, so->global_batch, seq, so->objective == PP_OBJ_COST ? "cost" : "throughput",
                  purchase ? "rental or amortised purchase" : "rental $/GPU-hour", ax->log ? "log" : "linear",
                  ay->log ? "log" : "linear");
}

char *pp_compare_to_svg(const pp_compare_result *r)
{
    PP__C_NUMERIC;
    pp__sbuf b = {0};
    pp__compare_svg(&b, r, 0, NULL, NULL);
    return pp__sb_take(&b);
}

void pp__compare_svg(pp__sbuf *b, const pp_compare_result *r, int inline_svg, const char *link,
                     const unsigned char *linked)
{
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
    int np = 0;
    for (int i = 0; i < r->n; i++) {
        const pp_compare_option *e = &r->options[i];
        if (!plotted(e)) continue;
        np++;
        xlo = fmin(xlo, e->days), xhi = fmax(xhi, e->days);
        ylo = fmin(ylo, e->cost_usd), yhi = fmax(yhi, e->cost_usd);
    }
    if (np == 0) xlo = xhi = 1, ylo = yhi = 1;
    /* deadline and budget inside the axes when within a factor 3 of the data */
    double D = r->opts.deadline_days, B = r->opts.budget_usd;
    if (D > 0 && D < xhi * 3 && D > xlo / 3) xlo = fmin(xlo, D), xhi = fmax(xhi, D);
    if (B > 0 && B < yhi * 3 && B > ylo / 3) ylo = fmin(ylo, B), yhi = fmax(yhi, B);
    pp__axis ax = {.p0 = PX0, .p1 = PX1}, ay = {.p0 = PY1, .p1 = PY0};
    pp__axis_fit(&ax, xlo, xhi);
    pp__axis_fit(&ay, ylo, yhi);
    if (!inline_svg) pp__sb_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    pp__sb_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" class=\"chart pareto\" width=\"%d\" "
                  "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
              W, H, W, H);
    pp__sb_printf(b, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", W, H);
    draw_title(b, r, &ax, &ay);
    char xt[64], yt[64];
    snprintf(xt, sizeof xt, "time to train (days%s)", ax.log ? ", log scale" : "");
    snprintf(yt, sizeof yt, "cost (US$%s)", ay.log ? ", log scale" : "");
    draw_axes(b, &ax, &ay, xt, yt);
    draw_limits(b, r, &ax, &ay);
    draw_front(b, r, &ax, &ay);
    draw_options(b, r, &ax, &ay, link, linked);
    if (np == 0)
        pp__sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"14\" fill=\"#555\">no option "
                      "with a plan and a price to plot</text>\n", (PX0 + PX1) / 2, (PY0 + PY1) / 2);
    draw_legend(b, r, r->n - np);
    pp__sb_printf(b, "</svg>\n");
}

pp_status pp_compare_write_svg(const pp_compare_result *r, const char *path, int force, pp_error *err)
{
    PP__C_NUMERIC;
    char *s = pp_compare_to_svg(r);
    if (!s) return pp__fail(err, PP_ERR_NOMEM, "out of memory");
    pp_status st = pp_write_file(path, s, strlen(s), force, err);
    pp_free(s);
    return st;
}
