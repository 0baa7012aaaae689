/*
 * resize.c — pp_cluster_resize: a cluster preset at another size. Pure
 * arithmetic on a pp_cluster (the planner's deadline search and explain use
 * it, so it lives here and not with the JSON readers).
 */
#include <stdarg.h>
#include <stdio.h>

#include "topologies/topologies.h"

#define GPUS_MAX (1 << 20) /* GPUs in one cluster, as configs/hw_json.c reads them */

/* A failure about field (gpus or nodes) = value: "field value: reason",
 * with pp_error's field, value and detail set for the front ends. */
__attribute__((format(printf, 4, 5))) static pp_status fail(pp_error *err, const char *field, int value, const char *fmt,
                                                            ...)
{
    if (err) {
        snprintf(err->field, sizeof err->field, "%s", field);
        snprintf(err->value, sizeof err->value, "%d", value);
        int n = snprintf(err->msg, sizeof err->msg, "%s %d: ", field, value);
        err->detail = n > 0 && n < (int)sizeof err->msg ? n : 0;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg + err->detail, sizeof err->msg - (size_t)err->detail, fmt, ap);
        va_end(ap);
        err->rule = 0;
    }
    return PP_ERR_INPUT;
}

/* gpus below one node make a single partial node (its NVLink domain shrinks
 * with it; inter.bw keeps the full node's per-GPU NIC share, unused with
 * one node). Otherwise gpus must be whole nodes. */
pp_status pp_cluster_resize(pp_cluster *c, int nodes, int gpus, pp_error *err)
{
    int gpn = c->gpus_per_node;
    const char *f = gpus ? "gpus" : "nodes";
    int v = gpus ? gpus : nodes;
    if (gpn < 1 || c->nodes < 1)
        return fail(err, f, v, "expected a loaded cluster with at least one GPU per node (%s)", c->name);
    if (nodes < 0 || gpus < 0) return fail(err, nodes < 0 ? "nodes" : "gpus", nodes < 0 ? nodes : gpus, "expected a positive count");
    if (gpus > GPUS_MAX || (long long)nodes * gpn > GPUS_MAX)
        return fail(err, f, v, "expected at most %d GPUs in all (%s has %d GPUs per node)", GPUS_MAX, c->name, gpn);
    if (nodes && gpus && (long long)nodes * gpn != gpus)
        return fail(err, "gpus", gpus, "disagrees with nodes %d: %s has %d GPUs per node", nodes, c->name, gpn);
    if (gpus && gpus < gpn) {
        c->nodes = 1;
        c->gpus_per_node = gpus;
        c->nvlink_domain = gpus;
    } else if (gpus) {
        if (gpus % gpn != 0)
            return fail(err, "gpus", gpus, "expected fewer than one node or a multiple of the node size %d (%s has %d GPUs "
                        "per node)", gpn, c->name, gpn);
        c->nodes = gpus / gpn;
    } else if (nodes) {
        c->nodes = nodes;
    }
    return PP_OK;
}
