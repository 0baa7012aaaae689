/*
 * svg.h — private helpers of the SVG charts (svg.c: compare's cost/time chart;
 * chart_memory.c, chart_schedule.c, chart_waterfall.c: the report's charts)
 * and of the HTML report (report.c). Charts are plain SVG 1.1 written by hand:
 * the same bytes for the same inputs, text escaped, no NaN in an attribute.
 */
#ifndef PARPLAN_SVG_H
#define PARPLAN_SVG_H

#include "configs/emit.h"

/* Text escaped for XML/HTML: markup characters as entities, control
 * characters and invalid UTF-8 as '?', so a name from a file cannot break
 * the file. */
void pp__svg_esc(pp__sbuf *b, const char *s);
/* v with 3 significant digits, trailing zeros dropped ("1.5", "20", "0.25"). */
void pp__svg_num(char *out, size_t cap, double v);
/* Dollars with a k/M/B suffix: "$950", "$12k", "$1.5M". */
void pp__svg_usd(char *out, size_t cap, double v);

/* A chart axis: linear, or logarithmic when the data spans 10x or more. */
typedef struct pp__axis {
    int log;            /* logarithmic */
    double lo, hi;      /* domain, data units */
    double p0, p1;      /* pixels of lo and hi */
    int nt;
    double tick[64];    /* labelled ticks */
    int nm;
    double minor[128];  /* unlabelled (log only) */
} pp__axis;

double pp__axis_px(const pp__axis *a, double v);
/* 1, 2 or 5 x 10^k, the least at least x. */
double pp__nice_step(double x);
/* Domain and ticks covering [lo, hi] (both > 0). */
void pp__axis_fit(pp__axis *a, double lo, double hi);
/* A linear axis from 0 to at least hi with about n ticks. */
void pp__axis_linear0(pp__axis *a, double hi, int n);

/* The compare chart. inline_svg: no XML declaration (for HTML); link: the
 * markers of options i with linked[i] (linked NULL: all) link to
 * "#<link><i>" (link NULL: no links). */
void pp__compare_svg(pp__sbuf *b, const pp_compare_result *r, int inline_svg, const char *link,
                     const unsigned char *linked);

/* ---- the report's charts (each appends one <svg> element) */

/* Colour and label of a memory category. */
const char *pp__mem_colour(pp_mem_cat c);
const char *pp__mem_label(pp_mem_cat c);

typedef struct pp__chart_ctx {
    const pp_model *m;
    const pp_cluster *c;
    const pp_plan *p;
    const char *id;     /* element id prefix, e.g. "p1" */
    int alt;            /* memory timeline: hidden until its stage is picked */
} pp__chart_ctx;

/* Memory timeline of one stage (t from pp_memory_timeline). band_lo/band_hi:
 * the validation's error range as fractions (e.g. -0.111, 0.064); both 0 =
 * no band. */
void pp__svg_memory_timeline(pp__sbuf *b, const pp__chart_ctx *x, const pp_mem_timeline *t, double band_lo,
                             double band_hi);
/* One stacked bar per stage at its peak moment, blocks under each bar. */
void pp__svg_stage_bars(pp__sbuf *b, const pp__chart_ctx *x, pp_mem_timeline *scratch);
/* The pipeline schedule of one step. */
void pp__svg_schedule(pp__sbuf *b, const pp__chart_ctx *x);
/* The step-time waterfall. */
void pp__svg_waterfall(pp__sbuf *b, const pp__chart_ctx *x);

/* Bytes as GiB with 2 decimals ("38.49"). */
void pp__fmt_gib(char *out, size_t cap, double bytes);
/* Seconds with 3 significant digits and a unit ("1.23 s", "45.6 ms", "7.8 µs"). */
void pp__fmt_secs(char *out, size_t cap, double s);

#endif
