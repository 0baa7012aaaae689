/*
 * test_least_recompute.c — pp__least_recompute (planner/bounds.c), the
 * least fraction of blocks a fitting split must recompute, which the step
 * bound of a full-recompute candidate charges. Stage i takes f_i of the
 * blocks and recomputes x_i of all blocks (x_i <= f_i); it fits when
 * f_i s + infl_i (f_i a0 - x_i (a0 - a1)) <= M.
 *  - one case by hand;
 *  - brute force: on 2,000 random 2- and 3-stage cases, the least sum x_i
 *    over a grid of splits (each x_i the least that fits its f_i) is never
 *    below the function's answer (it is a lower bound), and comes within
 *    the grid's resolution of it (it is the least).
 */
#include <criterion/criterion.h>
#include <math.h>

#include "planner/planner.h"

/* Two stages holding 2 and 1 micro-batches, M = 4, s = 4, a0 = 4, a1 = 1:
 * stage 0 fits 4/12 of the blocks unrecomputed, stage 1 4/8, together 5/6.
 * The missing 1/6 goes where recompute buys the most room: stage 0, whose
 * recomputed fraction frees 2 x 3 = 6 bytes per fraction against 12 used,
 * costs 12/6 = 2 per fraction (stage 1: 8/3). So X = 2/6 = 1/3; check:
 * f = (1/2, 1/2), x0 = 1/3: stage 0 holds 2 + 2 (2 - 1) = 4, stage 1 2 + 2 = 4. */
Test(least_recompute, by_hand)
{
    const double infl[2] = {2, 1};
    cr_assert_float_eq(pp__least_recompute(2, infl, 4, 4, 4, 1), 1.0 / 3, 1e-12);
    cr_assert_eq(pp__least_recompute(2, infl, 5, 4, 4, 1), 0, "5/12 + 5/8 >= 1 fit with no recompute");
    cr_assert_eq(pp__least_recompute(2, infl, 1, 4, 4, 1), 1, "1/6 + 1/5 < 1 even with all recomputed");
    cr_assert_eq(pp__least_recompute(2, infl, 4, 4, 4, 4), 0, "recompute that saves nothing buys nothing");
}

static unsigned rng = 7;
static double uni(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return (rng & 0xffffff) / (double)0x1000000;
}

/* Least x for stage i with fraction f: -1 if it cannot fit. */
static double x_for(double f, double infl, double M, double s, double a0, double a1)
{
    double need = f * s + infl * f * a0 - M;
    if (need <= 0) return 0;
    double x = need / (infl * (a0 - a1));
    return x <= f * (1 + 1e-12) ? x : -1;
}

static double brute(int p, const double *infl, double M, double s, double a0, double a1, double step)
{
    double best = HUGE_VAL;
    for (double f0 = 0; f0 <= 1 + 1e-12; f0 += step)
        for (double f1 = 0; f0 + f1 <= 1 + 1e-12; f1 += step) {
            if (p == 2) f1 = 1 - f0;
            double f[3] = {f0, f1, 1 - f0 - f1}, X = 0;
            int ok = 1;
            for (int i = 0; i < p && ok; i++) {
                double x = x_for(f[i], infl[i], M, s, a0, a1);
                if (x < 0) ok = 0;
                else X += x;
            }
            if (ok && X < best) best = X;
            if (p == 2) break;
        }
    return best;
}

Test(least_recompute, brute_force_on_small_cases)
{
    int binding = 0;
    for (int k = 0; k < 2000; k++) {
        int p = 2 + (k & 1);
        double infl[3];
        for (int i = 0; i < p; i++) infl[i] = 1 + floor(uni() * 8);
        double s = uni() * 4, a0 = 0.5 + uni() * 4, a1 = a0 * uni(), M = 0.5 + uni() * 12;
        double got = pp__least_recompute(p, infl, M, s, a0, a1);
        double step = p == 2 ? 1e-4 : 2e-3;
        double want = brute(p, infl, M, s, a0, a1, step);
        if (!isfinite(want)) {
            cr_assert_eq(got, 1, "case %d: nothing fits, got %g", k, got);
            continue;
        }
        /* a grid point is one feasible split: the least is at most it */
        cr_assert_leq(got, want + 1e-9, "case %d (p %d, M %g, s %g, a0 %g, a1 %g): %g above the grid's %g", k, p, M, s,
                      a0, a1, got, want);
        /* and the grid comes within its resolution of the least: moving a
         * fraction step shifts x by at most step x max cost */
        double cost = 0;
        for (int i = 0; i < p; i++) cost = fmax(cost, (s + infl[i] * a0) / (infl[i] * (a0 - a1)));
        cr_assert_geq(got, want - 2 * step * (1 + cost) * p - 1e-9, "case %d: %g far below the grid's %g", k, got, want);
        binding += got > 0;
    }
    cr_assert_gt(binding, 200, "only %d cases needed recompute", binding);
}
