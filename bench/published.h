/* published.h — planner vs published configurations (bench/published.c). */
#ifndef PARPLAN_BENCH_PUBLISHED_H
#define PARPLAN_BENCH_PUBLISHED_H

#include <stdio.h>

#include "parplan.h"

#define PUB_MAX 64 /* rows evaluated at most */

typedef struct pub_case {
    char name[64];
    pp_model m;
    pp_cluster c;
    pp_strategy s;           /* the published strategy, micro-batch open */
    double reported_tflops;  /* as published (basis in the CSV notes) */
    pp_plan published;       /* costed, best fitting micro-batch */
    int published_fits;
    pp_plan best;            /* the planner's #1 */
    int found;
    pp_search_stats stats;
    char msg[PP_ERR_LEN];
} pub_case;

/* Reads the CSV and evaluates every selected row; returns the count, -1 if
 * the file cannot be read. */
int pub_run(const char *csv, pub_case *out, int cap, int threads);
/* Writes docs/planner_vs_published.md's text. */
void pub_markdown(FILE *out, const pub_case *k, int n);

#endif
