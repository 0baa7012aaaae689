/*
 * calibrate.c — fit a GPU's achievable efficiencies to one measured run of
 * the user's: scale matmul_eff and attn_eff by one common factor until the
 * predicted step time equals the measured one (bisection; step time falls
 * monotonically as the factor grows).
 */
#include "costmodel/costmodel.h"

static double step_with(const pp_model *m, const pp_cluster *c, const pp_strategy *s, double mm, double at)
{
    pp_cluster cc = *c;
    pp_time t;
    pp_throughput q;
    cc.gpu.matmul_eff = mm;
    cc.gpu.attn_eff = at;
    pp_time_estimate(m, &cc, s, &t, &q);
    return t.step_s;
}

pp_status pp_calibrate(const pp_model *m, pp_cluster *c, const pp_strategy *resolved, double measured_step_s,
                       pp_error *err)
{
    if (!(measured_step_s > 0 && measured_step_s < 1e7))
        return pp__fail(err, PP_ERR_INPUT, "measured step time: expected seconds in (0, 1e7), got %g", measured_step_s);
    double mm0 = pp__matmul_eff(&c->gpu), at0 = pp__attn_eff(&c->gpu);
    double at_run = at0 * pp__attn_kernel_speedup(c, resolved); /* the kernel the framework runs */
    double lo = 0.02 / mm0, hi = 1.0 / (mm0 > at_run ? mm0 : at_run); /* efficiencies stay in (0, 1] */
    if (step_with(m, c, resolved, mm0 * hi, at0 * hi) > measured_step_s)
        return pp__fail(err, PP_ERR_INPUT,
                        "measured step %.4g s is faster than the model allows even at 100%% efficiency (%.4g s): "
                        "check the configuration (GPUs, batch, recompute)",
                        measured_step_s, step_with(m, c, resolved, mm0 * hi, at0 * hi));
    if (step_with(m, c, resolved, mm0 * lo, at0 * lo) < measured_step_s)
        return pp__fail(err, PP_ERR_INPUT,
                        "measured step %.4g s is slower than compute at 2%% efficiency explains: "
                        "the run is bound by something the model does not see (data loading, I/O)",
                        measured_step_s);
    for (int i = 0; i < 60; i++) {
        double mid = 0.5 * (lo + hi);
        if (step_with(m, c, resolved, mm0 * mid, at0 * mid) > measured_step_s) lo = mid;
        else hi = mid;
    }
    double f = 0.5 * (lo + hi);
    c->gpu.matmul_eff = mm0 * f;
    c->gpu.attn_eff = at0 * f;
    return PP_OK;
}
