/* estimate.c — resolve a strategy and cost it: memory, time and their error bars. */
#include "costmodel/costmodel.h"

pp_status pp_estimate(const pp_model *m, const pp_cluster *c, const pp_strategy *s, pp_plan *out,
                      pp_error *err)
{
    out->strategy = *s;
    pp_status st = pp_strategy_resolve(&out->strategy, m, c, err);
    if (st != PP_OK) return st;
    pp_memory_estimate(m, c, &out->strategy, &out->memory);
    pp_time_estimate(m, c, &out->strategy, &out->time, &out->throughput);
    out->train = (pp_train){0};
    pp_trainable_params(m, &out->strategy, &out->params_total, &out->params_trainable);
    pp_uncertainty_estimate(c, out, &out->uncertainty); /* error bars (uncertainty.c) */
    /* the launch wait's constants were fitted on 4 to 32 local experts */
    int local = m->experts / out->strategy.ep;
    if (out->time.expert_host_s > 0 && (local < 4 || local > 32))
        pp__unote(&out->uncertainty, "expert launches: %d local experts, outside the 4-32 of the runs their time "
                  "was fitted to", local);
    return PP_OK;
}
