/*
 * uncertainty.h — error bars from the validation residuals (docs/validation.md,
 * "Error bars"). A residual is truth / prediction of one published run
 * (step time, peak memory). Runs are grouped by the mechanisms they share;
 * a plan takes the bounds of the narrowest group that holds enough runs.
 * Pure: the built-in groups are a generated constant table
 * (costmodel/uncertainty_table.c, written by tools/uncertainty.c).
 */
#ifndef PARPLAN_UNCERTAINTY_H
#define PARPLAN_UNCERTAINTY_H

#include <stddef.h>

#include "parplan.h"

enum { PP__U_STEP, PP__U_MEM, PP__U_WHAT };             /* which estimate */
enum { PP__UK_FAMILY = 1, PP__UK_FRAMEWORK = 2, PP__UK_ZERO = 4, PP__UK_BAND = 8, PP__UK_ATTN = 16,
       PP__UK_EP = 32, PP__UK_ALL = 63 };                               /* a group's keys */
enum { PP__BAND_NODE, PP__BAND_64, PP__BAND_512, PP__BAND_MORE, PP__BAND_COUNT }; /* scale bands */

#define PP__U_LEVELS 7
#define PP__U_FAMILY_LEN 16
#define PP__U_MAX_FAMILIES 32

/* The groupings tried for each estimate, narrowest first (uncertainty.c). */
extern const unsigned char pp__u_levels[PP__U_WHAT][PP__U_LEVELS];

/* One validated published run. */
typedef struct pp__resid {
    char family[PP__U_FAMILY_LEN];
    int framework, zero, gpus, attention;   /* pp_framework, ZeRO stage, GPUs, pp_attention */
    int precision, mode, offload, ep, cp;   /* for what the runs cover */
    double ratio[PP__U_WHAT];               /* truth / prediction; 0 = not reported */
    char source[24];                        /* publication, for leave-one-source-out */
} pp__resid;

/* The mechanisms of a plan that select its group. */
typedef struct pp__ukey {
    char family[PP__U_FAMILY_LEN];
    int framework, zero, band, attention;
    int ep; /* expert parallelism (ep > 1): MoE runs err apart (red team rt16, review7) */
} pp__ukey;

/* A group and its bounds: an element of the generated table. */
typedef struct pp__ugroup {
    unsigned char what;  /* PP__U_STEP or PP__U_MEM */
    unsigned char mask;  /* PP__UK_* keys that define it */
    char family[PP__U_FAMILY_LEN];
    signed char framework, zero, band, attention;
    short rows;
    double lo, hi;       /* truth/prediction bounds at PP_INTERVAL_LEVEL */
    signed char ep;      /* with PP__UK_EP: 1 expert-parallel runs, 0 the others */
} pp__ugroup;

/* What the validated runs cover, for the notes. */
typedef struct pp__ucover {
    char families[PP__U_MAX_FAMILIES][PP__U_FAMILY_LEN]; /* with a step residual */
    int nfamilies;
    char mem_families[PP__U_MAX_FAMILIES][PP__U_FAMILY_LEN];
    int nmem_families;
    unsigned frameworks, zero, bands, attention, precision, modes, offload; /* bit per value */
    unsigned mem_frameworks;
    int ep, cp;                                          /* a run with ep > 1, cp > 1 */
    /* a GPU family with no published run: the bounds of every validated
     * run's step predicted at the default constants (validate --unfitted) */
    double unfitted_lo, unfitted_hi;
    int unfitted_rows;
    /* every group's bounds widen by this factor for a run of a new
     * publication (pp__publication_widen) */
    double widen[PP__U_WHAT];
} pp__ucover;

/* The built-in table (generated). */
extern const pp__ugroup pp__ugroups[];
extern const int pp__nugroups;
extern const pp__ucover pp__ucoverage;

/* A GPU's family ("A100" for a100-80g and a100-40g) into out. */
void pp__gpu_family(const char *gpu_name, char *out, size_t cap);
int pp__band(int gpus);
const char *pp__band_name(int band);

/* Split-conformal bounds at `level` of n ratios (sorted in place): the
 * floor((n+1)(1-level)/2)-th and ceil((n+1)(1+level)/2)-th smallest.
 * 0 when n is too small for both to exist. */
int pp__conformal_bounds(double *ratios, int n, double level, double *lo, double *hi);
/* Smallest group with finite bounds at level. */
int pp__min_rows(double level);

/* Every group of every level with at least pp__min_rows rows, from the
 * runs i with use[i] (use NULL: all); returns the count (<= cap). */
int pp__ugroups_build(const pp__resid *rows, int n, const unsigned char *use, double level, pp__ugroup *out,
                      int cap);
/* The narrowest group for k computed from the rows themselves (what
 * pp__ugroup_find gives on the table pp__ugroups_build makes of the same
 * rows); 0 when not even all rows are enough. */
int pp__ugroup_direct(const pp__resid *rows, int n, const unsigned char *use, int what, const pp__ukey *k, double level,
                      pp__ugroup *g);
/* How often a run's ratio falls inside the interval (widened to hold 1, as
 * a plan's) of groups built without it: each run left out in turn (loo), or
 * each source's runs left out together (lso). by_level: checked and inside
 * per pp__u_levels[what] entry the group came from. */
typedef struct pp__ucount {
    int checked, inside, sources;
    int by_level[PP__U_LEVELS][2];
} pp__ucount;
void pp__coverage_loo(const pp__resid *rows, int n, int what, double level, pp__ucount *out);
/* The factor >= 1 by which groups' bounds widen so that a run of a
 * publication left out falls inside at `level` (runs i with use[i]). */
double pp__publication_widen(const pp__resid *rows, int n, const unsigned char *use, int what, double level);
void pp__coverage_lso(const pp__resid *rows, int n, int what, double level, pp__ucount *out);
/* What runs i with use[i] cover. */
void pp__ucover_build(const pp__resid *rows, int n, const unsigned char *use, pp__ucover *out);

void pp__ukey_of(const pp_cluster *c, const pp_strategy *s, pp__ukey *k);
void pp__ukey_of_resid(const pp__resid *r, pp__ukey *k);
/* The narrowest group of tab for k, -1 when none. */
int pp__ugroup_find(const pp__ugroup *tab, int n, int what, const pp__ukey *k);
/* "H100, megatron, ZeRO-1, 65-512 GPUs, fused attention"; "all published runs". */
void pp__ugroup_label(const pp__ugroup *g, char *buf, size_t cap);

/* fits / tight / does not fit for mem, given its peak's interval. */
pp_fit pp__fit_verdict(const pp_memory *mem, const pp_interval *peak);

/* pp_uncertainty_estimate with a given table and coverage. */
void pp__uncertainty_with(const pp__ugroup *tab, int n, const pp__ucover *cov, const pp_cluster *c, const pp_plan *p,
                          pp_uncertainty *out);

#endif
