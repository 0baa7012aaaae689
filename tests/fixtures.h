/*
 * fixtures.h — loading presets in tests: a model or cluster by name (or
 * path), failing the test with the reader's message when it does not load.
 */
#ifndef PARPLAN_TEST_FIXTURES_H
#define PARPLAN_TEST_FIXTURES_H

#include <criterion/criterion.h>

#include "parplan.h"

static inline pp_model fx_model(const char *name)
{
    pp_model m;
    pp_error err = {""};
    cr_assert_eq(pp_model_load(name, &m, &err), PP_OK, "%s: %s", name, err.msg);
    return m;
}

/* A cluster preset resized to nodes, or to gpus (0 keeps the preset's). */
static inline pp_cluster fx_cluster(const char *name, int nodes, int gpus)
{
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_cluster_load(name, &c, &err), PP_OK, "%s: %s", name, err.msg);
    cr_assert_eq(pp_cluster_resize(&c, nodes, gpus, &err), PP_OK, "%s", err.msg);
    return c;
}

static inline double fx_total_params(const char *name)
{
    pp_model m = fx_model(name);
    pp_param_counts pc;
    pp_model_param_counts(&m, &pc);
    return pc.total;
}

#endif
