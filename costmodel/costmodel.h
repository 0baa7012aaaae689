/*
 * costmodel.h — pure arithmetic over a model, a cluster and a strategy:
 * parameter counts, FLOPs, per-GPU memory, collective and step times.
 * No I/O, no globals; types come from include/parplan.h.
 */
#ifndef PARPLAN_COSTMODEL_H
#define PARPLAN_COSTMODEL_H

#include "parplan.h"

#define PP_GIB 1073741824.0 /* bytes */
#define PP_GB 1e9           /* bytes */

/* Formats a one-line error into err (may be NULL) and returns st. */
pp_status pp__fail(pp_error *err, pp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Head dimension actually used (head_dim if set, else hidden/heads). */
int pp__head_dim(const pp_model *m);
/* Per-block parameter counts by part. */
double pp__attn_params(const pp_model *m);
double pp__mlp_params(const pp_model *m, int ffn);
double pp__norm_params(const pp_model *m); /* one norm of width hidden */

#endif
