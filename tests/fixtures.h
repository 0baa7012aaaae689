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

/* Megatron-Bridge's GB200 launcher: 32 trays of 4 GPUs whose NVLink domain
 * is the Slurm segment of 16 trays (64 GPUs). */
static inline pp_cluster fx_gb200_segment(void)
{
    static const char text[] =
        "{\"name\": \"gb200-segment\", \"gpu\": \"gb200\", \"nodes\": 32, \"gpus_per_node\": 4,"
        " \"nvlink_domain\": 64,"
        " \"intra\": {\"kind\": \"nvlink\", \"gbytes_per_s_bidir\": 1800, \"latency_us\": 3.4},"
        " \"inter\": {\"kind\": \"infiniband\", \"nics\": 4, \"nic_gbit_s\": 400, \"latency_us\": 5},"
        " \"pcie\": {\"gbytes_per_s\": 225}, \"host_mem_gib\": 960}";
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_cluster_parse(text, sizeof text - 1, "segment", &c, &err), PP_OK, "%s", err.msg);
    return c;
}

/* Mixtral's shape with 64 experts on one DGX H100, Megatron over 8 ranks,
 * one 256-token sequence a rank: every expert local, each with few tokens,
 * so its blocks wait on the host's expert launches (compute.c). */
static inline void fx_moe64_megatron(pp_model *m, pp_cluster *c, pp_strategy *s)
{
    *m = fx_model("mixtral-8x7b");
    m->experts = 64;
    *c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy_default(s);
    s->framework = PP_FW_MEGATRON, s->dp = 8, s->seq = 256, s->micro_batch = 1, s->global_batch = 8;
}

static inline double fx_total_params(const char *name)
{
    pp_model m = fx_model(name);
    pp_param_counts pc;
    pp_model_param_counts(&m, &pc);
    return pc.total;
}

#endif
