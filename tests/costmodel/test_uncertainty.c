/*
 * test_uncertainty.c — error bars (costmodel/uncertainty.c):
 *  - conformal bounds against order statistics picked by hand;
 *  - groups and their fall-back on a small residual table, bounds by hand;
 *  - coverage (each run left out, each source left out) on tables whose
 *    answer is worked out below;
 *  - every estimate's interval holds the estimate;
 *  - fits / tight / does not fit at the exact boundaries;
 *  - the checked-in table is what tools/validate + tools/uncertainty make.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "costmodel/uncertainty.h"
#include "tests/fixtures.h"

#define EPS 1e-12

Test(uncertainty, conformal_bounds_are_the_hand_picked_order_statistics)
{
    /* n = 9: ranks floor(10 x 0.1) = 1 and ceil(10 x 0.9) = 9: min and max */
    double a[] = {1.3, 0.9, 1.1, 0.8, 1.0, 1.2, 0.95, 1.05, 0.85}, lo, hi;
    cr_assert(pp__conformal_bounds(a, 9, 0.8, &lo, &hi));
    cr_expect_float_eq(lo, 0.8, EPS);
    cr_expect_float_eq(hi, 1.3, EPS);
    /* n = 19 (0.1 ... 1.9, shuffled): ranks 2 and 18 */
    double b[19];
    for (int i = 0; i < 19; i++) b[i] = ((i * 7) % 19 + 1) / 10.0;
    cr_assert(pp__conformal_bounds(b, 19, 0.8, &lo, &hi));
    cr_expect_float_eq(lo, 0.2, EPS);
    cr_expect_float_eq(hi, 1.8, EPS);
    /* n = 29: ranks 3 and 27; n = 12: floor(1.3) = 1 and ceil(11.7) = 12 */
    double c[29], d[12];
    for (int i = 0; i < 29; i++) c[i] = 29 - i;
    for (int i = 0; i < 12; i++) d[i] = 100 + i;
    cr_assert(pp__conformal_bounds(c, 29, 0.8, &lo, &hi));
    cr_expect_float_eq(lo, 3, EPS);
    cr_expect_float_eq(hi, 27, EPS);
    cr_assert(pp__conformal_bounds(d, 12, 0.8, &lo, &hi));
    cr_expect_float_eq(lo, 100, EPS);
    cr_expect_float_eq(hi, 111, EPS);
    /* too few: 8 runs have no 80% bounds; 9 is the least, 19 at 90% */
    cr_expect_not(pp__conformal_bounds(a, 8, 0.8, &lo, &hi));
    cr_expect_eq(pp__min_rows(0.8), 9);
    cr_expect_eq(pp__min_rows(0.9), 19);
}

static pp__resid resid(const char *family, int fw, int zero, int gpus, double step, const char *source)
{
    pp__resid r;
    memset(&r, 0, sizeof r);
    snprintf(r.family, sizeof r.family, "%s", family);
    r.framework = fw, r.zero = zero, r.gpus = gpus, r.attention = PP_ATTN_FLASH;
    r.precision = PP_PREC_BF16, r.ep = 1, r.cp = 1;
    r.ratio[PP__U_STEP] = step;
    snprintf(r.source, sizeof r.source, "%s", source);
    return r;
}

/* 10 X100/megatron/ZeRO-1/16-GPU runs at 1.00 ... 1.09, 9 X100/fsdp/ZeRO-3/
 * 8-GPU runs at 0.80 ... 0.88, 3 Y200/megatron runs at 2.0. */
static int small_table(pp__resid *r)
{
    int n = 0;
    for (int i = 0; i < 10; i++) r[n++] = resid("X100", PP_FW_MEGATRON, 1, 16, 1.00 + i / 100.0, "a");
    for (int i = 0; i < 9; i++) r[n++] = resid("X100", PP_FW_FSDP, 3, 8, 0.80 + i / 100.0, "b");
    for (int i = 0; i < 3; i++) r[n++] = resid("Y200", PP_FW_MEGATRON, 1, 16, 2.0, "c");
    return n;
}

static pp__ukey key(const char *family, int fw, int zero, int band)
{
    pp__ukey k;
    memset(&k, 0, sizeof k);
    snprintf(k.family, sizeof k.family, "%s", family);
    k.framework = fw, k.zero = zero, k.band = band, k.attention = PP_ATTN_FLASH;
    return k;
}

/* The group a key falls into, from the table and from the rows directly. */
static void expect_group(const pp__ugroup *tab, int ng, const pp__resid *r, int n, pp__ukey k, const char *label, int rows,
                         double lo, double hi)
{
    int i = pp__ugroup_find(tab, ng, PP__U_STEP, &k);
    cr_assert_geq(i, 0, "%s: no group", label);
    char got[128];
    pp__ugroup_label(&tab[i], got, sizeof got);
    cr_expect_str_eq(got, label);
    cr_expect_eq(tab[i].rows, rows, "%s: %d rows", label, tab[i].rows);
    cr_expect_float_eq(tab[i].lo, lo, 1e-9, "%s: lo %.9g", label, tab[i].lo);
    cr_expect_float_eq(tab[i].hi, hi, 1e-9, "%s: hi %.9g", label, tab[i].hi);
    pp__ugroup g;
    cr_assert(pp__ugroup_direct(r, n, NULL, PP__U_STEP, &k, 0.8, &g));
    cr_expect(g.rows == tab[i].rows && g.lo == tab[i].lo && g.hi == tab[i].hi && g.mask == tab[i].mask,
              "%s: the table and the rows disagree", label);
}

Test(uncertainty, groups_fall_back_to_wider_ones_with_hand_computed_bounds)
{
    pp__resid r[32];
    pp__ugroup tab[256];
    int n = small_table(r), ng = pp__ugroups_build(r, n, NULL, 0.8, tab, 256);
    /* the narrowest group: its own 10 runs, min and max */
    expect_group(tab, ng, r, n, key("X100", PP_FW_MEGATRON, 1, PP__BAND_64), "X100, megatron, ZeRO-1, 9-64 GPUs, fused attention, no EP",
                 10, 1.00, 1.09);
    /* another scale: the same runs without the scale band */
    expect_group(tab, ng, r, n, key("X100", PP_FW_MEGATRON, 1, PP__BAND_MORE), "X100, megatron, ZeRO-1, fused attention, no EP", 10,
                 1.00, 1.09);
    /* a framework X100 has no run of: the family's 19 runs, ranks 2 and 18
     * of 0.80 ... 0.88, 1.00 ... 1.09 */
    expect_group(tab, ng, r, n, key("X100", PP_FW_DEEPSPEED, 2, PP__BAND_64), "X100", 19, 0.81, 1.08);
    /* Y200's 3 runs are too few: megatron's 13 runs, ranks 1 and 13 */
    expect_group(tab, ng, r, n, key("Y200", PP_FW_MEGATRON, 1, PP__BAND_64), "megatron", 13, 1.00, 2.0);
    /* nothing in common: all 22 runs, ranks floor(2.3) = 2 and ceil(20.7) = 21 */
    expect_group(tab, ng, r, n, key("Z300", PP_FW_PYTORCH, 0, PP__BAND_NODE), "all published runs", 22, 0.81, 2.0);
    /* no group below 9 runs was written */
    for (int i = 0; i < ng; i++) cr_expect_geq(tab[i].rows, 9);
}

/* Memory falls back to the framework before the GPU family; step time to
 * the family first. 9 X100/fsdp runs (step and memory 0.80 ... 0.88) and 9
 * Y200/megatron runs (1.10 ... 1.18): a megatron plan on X100 takes
 * megatron's memory bounds and X100's step bounds. */
Test(uncertainty, memory_falls_back_to_the_framework_step_to_the_family)
{
    pp__resid r[18];
    pp__ugroup tab[64], g;
    int n = 0;
    for (int i = 0; i < 9; i++) r[n++] = resid("X100", PP_FW_FSDP, 3, 8, 0.80 + i / 100.0, "a");
    for (int i = 0; i < 9; i++) r[n++] = resid("Y200", PP_FW_MEGATRON, 1, 16, 1.10 + i / 100.0, "b");
    for (int i = 0; i < n; i++) r[i].ratio[PP__U_MEM] = r[i].ratio[PP__U_STEP];
    int ng = pp__ugroups_build(r, n, NULL, 0.8, tab, 64);
    pp__ukey k = key("X100", PP_FW_MEGATRON, 1, PP__BAND_64);
    char got[128];
    int i = pp__ugroup_find(tab, ng, PP__U_MEM, &k);
    cr_assert_geq(i, 0);
    pp__ugroup_label(&tab[i], got, sizeof got);
    cr_expect_str_eq(got, "megatron");
    cr_expect_float_eq(tab[i].lo, 1.10, 1e-9);
    cr_expect_float_eq(tab[i].hi, 1.18, 1e-9);
    cr_assert(pp__ugroup_direct(r, n, NULL, PP__U_MEM, &k, 0.8, &g));
    cr_expect(g.mask == tab[i].mask && g.lo == tab[i].lo, "the table and the rows disagree");
    i = pp__ugroup_find(tab, ng, PP__U_STEP, &k);
    cr_assert_geq(i, 0);
    pp__ugroup_label(&tab[i], got, sizeof got);
    cr_expect_str_eq(got, "X100");
    cr_expect_float_eq(tab[i].hi, 0.88, 1e-9);
}

Test(uncertainty, coverage_left_out_matches_the_hand_count)
{
    pp__resid r[20];
    pp__ucount t;
    /* 10 runs at 0.6 ... 1.5: leaving one out leaves 9, bounds = the other
     * runs' min and max; only the smallest and the largest fall outside */
    for (int i = 0; i < 10; i++) r[i] = resid("X100", PP_FW_MEGATRON, 1, 16, 0.6 + i / 10.0, "a");
    pp__coverage_loo(r, 10, PP__U_STEP, 0.8, &t);
    cr_expect_eq(t.checked, 10);
    cr_expect_eq(t.inside, 8);
    /* one publication: no run can be checked against the others, factor 1 */
    cr_expect_eq(pp__publication_widen(r, 10, NULL, PP__U_STEP, 0.8), 1);
    /* 20 runs at 0.60 ... 1.55 (step 0.05), a: 0.60-1.05, b: 1.10-1.55.
     * Without its publication an a-run meets b's [1.10, 1.55], held to
     * [1, 1.55]: factor 1/r (1.667 ... 1.053, then 1, 1); a b-run meets a's
     * [0.60, 1.05]: factor r/1.05 (1.048 ... 1.476). Rank ceil(21 x 0.8) =
     * 17 of the 20 sorted factors: 1.5/1.05 = 1/0.7 = 10/7. */
    for (int i = 0; i < 20; i++) r[i] = resid("X100", PP_FW_MEGATRON, 1, 16, 0.60 + i * 0.05, i < 10 ? "a" : "b");
    double q = pp__publication_widen(r, 20, NULL, PP__U_STEP, 0.8);
    cr_expect(fabs(q - 10.0 / 7) < 1e-9, "factor %.9g", q);
    /* leaving one run out leaves 19, ranks 2 and 18 (the two smallest and
     * the two largest fall outside them), but widened by 10/7 every run is
     * inside */
    pp__coverage_loo(r, 20, PP__U_STEP, 0.8, &t);
    cr_expect_eq(t.checked, 20);
    cr_expect_eq(t.inside, 20);
    cr_expect_eq(t.by_level[0][0], 20, "all from the narrowest group");
    /* each source left out: a's runs against b's [1.10, 1.55] widened to
     * [1, 1.55] (1.00 and 1.05 inside), b's against a's [0.60, 1.05] (none);
     * the factor, computed without the publication checked, is 1 (one
     * publication left cannot be checked against another) */
    pp__coverage_lso(r, 20, PP__U_STEP, 0.8, &t);
    cr_expect_eq(t.sources, 2);
    cr_expect_eq(t.checked, 20);
    cr_expect_eq(t.inside, 2);
}

/* A plan with only what the verdict reads. */
/* live: the peak without the allocator's allowance (memory.c's rules for
 * fits and live_fits, 100 bytes usable) */
static void boundary_plan(pp_plan *p, double peak, double live, int host_fits)
{
    memset(p, 0, sizeof *p);
    pp_strategy_default(&p->strategy);
    p->memory.peak_bytes = peak;
    p->memory.live_peak_bytes = live;
    p->memory.gpu_bytes = 100;
    p->memory.host_fits = host_fits;
    p->memory.nvme_fits = 1;
    p->memory.fits = peak <= 100 && host_fits;
    p->memory.live_fits = live <= 100 && host_fits;
    p->time.step_s = 1;
}

Test(uncertainty, tight_exactly_when_the_interval_crosses_the_limit)
{
    /* one group of every run: truth/prediction in [0.8, 1.25] */
    pp__ugroup all = {PP__U_MEM, 0, "", -1, -1, -1, -1, 9, 0.8, 1.25};
    pp_cluster c;
    memset(&c, 0, sizeof c);
    snprintf(c.gpu.name, sizeof c.gpu.name, "x100");
    c.nodes = c.gpus_per_node = 1;
    pp_plan *p = malloc(sizeof *p);
    pp_uncertainty u;
    struct { double peak, live; int host; pp_fit want; } cases[] = {
        {80, 72, 1, PP_FIT_FITS},                         /* top 80 x 1.25 = 100 = usable */
        {nextafter(80, 200), 72, 1, PP_FIT_TIGHT},        /* top just above */
        {100, 90, 1, PP_FIT_TIGHT},                       /* the estimate at the limit */
        {125, 100, 1, PP_FIT_TIGHT},                      /* over with the allocator's allowance, live at the limit */
        {125, nextafter(100, 200), 1, PP_FIT_TIGHT},      /* the live tensors just over: the interval crosses */
        {125, 125, 1, PP_FIT_TIGHT},                      /* no allowance, live 125 x 0.8 = 100: at the limit */
        {130, nextafter(125, 200), 1, PP_FIT_NO},         /* live x 0.8 just over */
        {200, 150, 1, PP_FIT_NO},                         /* well over */
        {10, 10, 0, PP_FIT_NO}};                          /* host memory does not fit */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        boundary_plan(p, cases[i].peak, cases[i].live, cases[i].host);
        pp__uncertainty_with(&all, 1, NULL, &c, p, &u);
        cr_expect_eq(u.fit, cases[i].want, "peak %.17g: %s, expected %s", cases[i].peak, pp_fit_name(u.fit),
                     pp_fit_name(cases[i].want));
        cr_expect(u.peak_bytes.lo <= cases[i].peak && cases[i].peak <= u.peak_bytes.hi);
    }
    /* no group at all: no interval, the verdict is the estimate's */
    boundary_plan(p, 99, 99, 1);
    pp__uncertainty_with(&all, 0, NULL, &c, p, &u);
    cr_expect(u.fit == PP_FIT_FITS && u.peak_bytes.rows == 0 && u.peak_bytes.lo == 99 && u.peak_bytes.hi == 99);
    /* model states are exact: only the rest scales by 0.8 (red team rt17,
     * review8): 90 of states + 0.8 x 12.5 = 100, at the limit; 91 over */
    boundary_plan(p, 110, 102.5, 1);
    p->memory.nstages = 1;
    p->memory.stages[0].live_bytes = 102.5;
    p->memory.stages[0].params_bytes = 30, p->memory.stages[0].grads_persistent_bytes = 20;
    p->memory.stages[0].optimizer_bytes = 40;
    pp__uncertainty_with(&all, 1, NULL, &c, p, &u);
    cr_expect_eq(u.fit, PP_FIT_TIGHT, "states at the limit: %s", pp_fit_name(u.fit));
    p->memory.stages[0].optimizer_bytes = 41;
    pp__uncertainty_with(&all, 1, NULL, &c, p, &u);
    cr_expect_eq(u.fit, PP_FIT_NO, "states over: %s", pp_fit_name(u.fit));
    p->memory.stages[0].params_bytes = p->memory.stages[0].grads_persistent_bytes = 0; /* all activations: x 0.8 */
    p->memory.stages[0].optimizer_bytes = 0;
    pp__uncertainty_with(&all, 1, NULL, &c, p, &u);
    cr_expect_eq(u.fit, PP_FIT_TIGHT, "activations: %s", pp_fit_name(u.fit));
    boundary_plan(p, 101, nextafter(100, 200), 1); /* no interval: the live tensors' estimate decides */
    pp__uncertainty_with(&all, 0, NULL, &c, p, &u);
    cr_expect_eq(u.fit, PP_FIT_NO, "%s", pp_fit_name(u.fit));
    /* bounds both above 1: the interval still starts at the estimate */
    pp__ugroup above = {PP__U_MEM, 0, "", -1, -1, -1, -1, 9, 1.1, 1.3};
    boundary_plan(p, 50, 50, 1);
    pp__uncertainty_with(&above, 1, NULL, &c, p, &u);
    cr_expect_float_eq(u.peak_bytes.lo, 50, EPS);
    cr_expect_float_eq(u.peak_bytes.hi, 65, 1e-9);
    free(p);
}

/* Every estimate's intervals hold its estimate, come from a named group,
 * and name what no run covers. */
Test(uncertainty, every_interval_holds_its_estimate)
{
    struct { const char *model, *cluster; int gpus, tp, pp, zero; pp_framework fw; pp_train_mode mode; } k[] = {
        {"llama3-8b", "dgx-h100", 8, 1, 1, 1, PP_FW_MEGATRON, PP_MODE_FULL},
        {"gpt3-175b", "dgx-a100-80g", 1024, 8, 16, 1, PP_FW_MEGATRON, PP_MODE_FULL},
        {"mpt-7b", "dgx-a100-40g", 8, 1, 1, 3, PP_FW_FSDP, PP_MODE_FULL},
        {"mistral-7b", "workstation-1x-4090", 1, 1, 1, 0, PP_FW_PYTORCH, PP_MODE_LORA},
        {"llama3-70b", "dgx-b200", 64, 4, 2, 1, PP_FW_MEGATRON, PP_MODE_FULL},
        {"qwen2.5-7b", "mi300x-8x", 8, 1, 1, 3, PP_FW_DEEPSPEED, PP_MODE_FULL}};
    pp_plan *p = malloc(sizeof *p);
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        pp_model m = fx_model(k[i].model);
        pp_cluster c = fx_cluster(k[i].cluster, 0, k[i].gpus);
        pp_strategy s;
        pp_error e = {""};
        pp_strategy_default(&s);
        s.framework = k[i].fw, s.tp = k[i].tp, s.pp = k[i].pp, s.zero = k[i].zero, s.ft.mode = k[i].mode;
        s.dp = k[i].gpus / (k[i].tp * k[i].pp);
        s.global_batch = 8 * s.dp;
        s.seq = 2048;
        s.recompute = PP_RECOMPUTE_FULL;
        cr_assert_eq(pp_estimate(&m, &c, &s, p, &e), PP_OK, "%s on %s: %s", k[i].model, k[i].cluster, e.msg);
        const pp_uncertainty *u = &p->uncertainty;
        cr_expect_float_eq(u->level, PP_INTERVAL_LEVEL, EPS);
        cr_expect(u->step_s.lo <= p->time.step_s && p->time.step_s <= u->step_s.hi, "%s: step %.9g not in [%.9g, %.9g]",
                  k[i].model, p->time.step_s, u->step_s.lo, u->step_s.hi);
        cr_expect(u->peak_bytes.lo <= p->memory.peak_bytes && p->memory.peak_bytes <= u->peak_bytes.hi, "%s: peak",
                  k[i].model);
        cr_expect(u->step_s.rows >= pp__min_rows(PP_INTERVAL_LEVEL) && u->step_s.group[0], "%s: group %s (%d runs)",
                  k[i].model, u->step_s.group, u->step_s.rows);
        cr_expect(p->memory.fits ? u->fit != PP_FIT_NO : u->fit != PP_FIT_FITS, "%s: %s with fits %d", k[i].model,
                  pp_fit_name(u->fit), p->memory.fits);
    }
    /* no MI300X run could be evaluated (docs/validation.md), and the plan says so */
    cr_expect(strstr(p->uncertainty.notes, "no published run") != NULL, "%s", p->uncertainty.notes);
    free(p);
}

/* A mechanism no validated run has widens the interval (red team rt13):
 * a family without runs takes the default-constant bounds, an offload or a
 * framework without a memory reading the widest group of its kind; a plan
 * whose mechanisms are all covered keeps its group. Hand-made table: one
 * step group x0.9-1.1 for family X100, one wider x0.8-1.5 for all runs,
 * memory x0.95-1.05 and x0.9-1.2. */
Test(uncertainty, unvalidated_mechanisms_take_the_widest_bounds)
{
    pp__ugroup tab[] = {{PP__U_STEP, PP__UK_FAMILY, "X100", -1, -1, -1, -1, 9, 0.9, 1.1},
                        {PP__U_STEP, 0, "", -1, -1, -1, -1, 20, 0.8, 1.5},
                        {PP__U_MEM, PP__UK_FAMILY, "X100", -1, -1, -1, -1, 9, 0.95, 1.05},
                        {PP__U_MEM, 0, "", -1, -1, -1, -1, 20, 0.9, 1.2}};
    pp__ucover cov;
    memset(&cov, 0, sizeof cov);
    snprintf(cov.families[0], PP__U_FAMILY_LEN, "X100"), cov.nfamilies = 1;
    snprintf(cov.mem_families[0], PP__U_FAMILY_LEN, "X100"), cov.nmem_families = 1;
    cov.frameworks = cov.mem_frameworks = 1u << PP_FW_MEGATRON;
    cov.zero = cov.bands = cov.attention = 0xf, cov.precision = 1u << PP_PREC_BF16, cov.modes = 1u << PP_MODE_FULL;
    cov.offload = 1u << PP_OFFLOAD_NONE;
    cov.unfitted_lo = 0.7, cov.unfitted_hi = 1.3, cov.unfitted_rows = 30;
    pp_cluster c;
    memset(&c, 0, sizeof c);
    c.nodes = c.gpus_per_node = 1;
    pp_plan *p = malloc(sizeof *p);
    pp_uncertainty u;
    boundary_plan(p, 50, 50, 1);
    p->strategy.framework = PP_FW_MEGATRON, p->strategy.precision = PP_PREC_BF16;
    snprintf(c.gpu.name, sizeof c.gpu.name, "x100");
    pp__uncertainty_with(tab, 4, &cov, &c, p, &u); /* all covered: the family's groups */
    cr_expect(u.step_s.ratio_lo == 0.9 && u.step_s.ratio_hi == 1.1 && u.peak_bytes.ratio_hi == 1.05, "%s / %s",
              u.step_s.group, u.peak_bytes.group);
    snprintf(c.gpu.name, sizeof c.gpu.name, "y200"); /* a family without runs */
    pp__uncertainty_with(tab, 4, &cov, &c, p, &u);
    cr_expect(u.step_s.ratio_lo == 0.7 && u.step_s.ratio_hi == 1.5, "new family: x%g-%g (%s)", u.step_s.ratio_lo,
              u.step_s.ratio_hi, u.step_s.group);
    cr_expect(fabs(u.step_s.lo - 0.7) < 1e-12 && fabs(u.step_s.hi - 1.5) < 1e-12);
    snprintf(c.gpu.name, sizeof c.gpu.name, "x100");
    p->strategy.offload = PP_OFFLOAD_OPTIMIZER; /* no run offloads */
    pp__uncertainty_with(tab, 4, &cov, &c, p, &u);
    cr_expect(u.step_s.ratio_lo == 0.8 && u.step_s.ratio_hi == 1.5 && strstr(u.step_s.group, "offload"), "%s",
              u.step_s.group);
    cr_expect(u.peak_bytes.ratio_lo == 0.9 && u.peak_bytes.ratio_hi == 1.2, "%s", u.peak_bytes.group);
    p->strategy.offload = PP_OFFLOAD_NONE;
    p->strategy.framework = PP_FW_DEEPSPEED; /* neither its step nor its memory validated */
    pp__uncertainty_with(tab, 4, &cov, &c, p, &u);
    cr_expect(u.step_s.ratio_hi == 1.5 && u.peak_bytes.ratio_hi == 1.2 && strstr(u.peak_bytes.group, "deepspeed"), "%s",
              u.peak_bytes.group);
    /* a new publication's factor (pp__publication_widen) widens borrowed
     * bounds as it widens a group's (review7 L3): x1.25 on every side */
    cov.widen[PP__U_STEP] = cov.widen[PP__U_MEM] = 1.25;
    pp__uncertainty_with(tab, 4, &cov, &c, p, &u);
    cr_expect(fabs(u.step_s.ratio_lo - 0.8 / 1.25) < 1e-12 && fabs(u.step_s.ratio_hi - 1.5 * 1.25) < 1e-12 &&
              fabs(u.peak_bytes.ratio_lo - 0.9 / 1.25) < 1e-12 && fabs(u.peak_bytes.ratio_hi - 1.2 * 1.25) < 1e-12,
              "widest x%g-%g, memory x%g-%g", u.step_s.ratio_lo, u.step_s.ratio_hi, u.peak_bytes.ratio_lo,
              u.peak_bytes.ratio_hi);
    p->strategy.framework = PP_FW_MEGATRON;
    snprintf(c.gpu.name, sizeof c.gpu.name, "y200");
    pp__uncertainty_with(tab, 4, &cov, &c, p, &u);
    cr_expect(fabs(u.step_s.ratio_lo - 0.7 / 1.25) < 1e-12 && fabs(u.step_s.ratio_hi - 1.5 * 1.25) < 1e-12,
              "new family: x%g-%g", u.step_s.ratio_lo, u.step_s.ratio_hi);
    free(p);
}

/* The checked-in table is the one tools/validate's residuals give. */
Test(uncertainty, regenerating_the_table_gives_the_checked_in_file, .timeout = 600)
{
    char tsv[64], unf[64], tab[64], csvs[1024], cmd[4096];
    snprintf(tsv, sizeof tsv, "uncertainty_regen_%d.tsv", (int)getpid());
    snprintf(unf, sizeof unf, "uncertainty_regen_%d_unfitted.tsv", (int)getpid());
    snprintf(tab, sizeof tab, "uncertainty_regen_%d.c", (int)getpid());
    snprintf(csvs, sizeof csvs,
             "%s/published_runs.csv %s/bloom_chronicles.csv %s/published_more.csv %s/new_gpus.csv %s/zero3_scale.csv "
             "%s/torchtitan_h100.csv %s/mlperf51_pretrain.csv %s/moe_h100.csv", PARPLAN_REFERENCE_DIR, PARPLAN_DATA_DIR,
             PARPLAN_DATA_DIR, PARPLAN_DATA_DIR, PARPLAN_DATA_DIR, PARPLAN_DATA_DIR, PARPLAN_DATA_DIR, PARPLAN_DATA_DIR);
    snprintf(cmd, sizeof cmd,
             "%s --residuals %s %s >/dev/null && %s --unfitted --residuals %s %s >/dev/null && %s %s %s %s >/dev/null",
             PARPLAN_VALIDATE, tsv, csvs, PARPLAN_VALIDATE, unf, csvs, PARPLAN_UNCERTAINTY, tsv, tab, unf);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    remove(unf);
    FILE *a = fopen(tab, "rb"), *b = fopen(PARPLAN_SOURCE_DIR "/costmodel/uncertainty_table.c", "rb");
    cr_assert(a && b);
    int ca, cb, line = 1;
    do {
        ca = fgetc(a), cb = fgetc(b);
        line += ca == '\n';
    } while (ca == cb && ca != EOF);
    fclose(a);
    fclose(b);
    remove(tsv);
    remove(tab);
    cr_expect_eq(ca, cb, "costmodel/uncertainty_table.c differs from a fresh `make validate` at line %d: run make validate",
                 line);
}
