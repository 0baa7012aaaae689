/*
 * report.h — private interface of the HTML report (report.c, report_inputs.c,
 * report_assets.c): the input tables and the page's style and script.
 */
#ifndef PARPLAN_REPORT_H
#define PARPLAN_REPORT_H

#include "configs/svg.h"

/* Key/value tables of the inputs, in full. */
void pp__report_model(pp__sbuf *b, const pp_model *m);
void pp__report_cluster(pp__sbuf *b, const pp_cluster *c);
void pp__report_strategy(pp__sbuf *b, const pp_strategy *s, const char *caption);
void pp__report_search(pp__sbuf *b, const pp_search_opts *o);

/* The page's stylesheet (screen and A4 print) and its script (hover values,
 * sortable tables, the stage picker). Static storage. */
extern const char pp__report_css[];
extern const char pp__report_js[];

#endif
