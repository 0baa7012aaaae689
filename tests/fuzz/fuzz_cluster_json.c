/* fuzz_cluster_json.c — libFuzzer harness: the cluster JSON reader
 * (pp_cluster_parse, topologies/clusters/NAME.json format), then resizing
 * and the JSON rendering. Seeds: tests/fuzz/corpus/cluster. */
#include <math.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char where[] = "fuzz/cluster.json";
    char *text = fuzz_copy(data, size);
    pp_cluster c, d;
    pp_error err = {""};
    pp_status st = pp_cluster_parse(text, size, where, &c, &err);
    fuzz_check_status(st, &err, where);
    if (st == PP_OK) {
        FUZZ_CHECK(c.nodes >= 1 && c.gpus_per_node >= 1 && c.nvlink_domain >= c.gpus_per_node,
                   "shape %d x %d, domain %d", c.nodes, c.gpus_per_node, c.nvlink_domain);
        FUZZ_CHECK(isfinite(c.intra.bw) && c.intra.bw > 0 && isfinite(c.inter.bw) && c.inter.bw > 0
                       && c.pcie.bw > 0 && c.gpu.mem_bytes > 0,
                   "bandwidths intra %g inter %g pcie %g", c.intra.bw, c.inter.bw, c.pcie.bw);
        char *a = fuzz_json_ok(pp_cluster_to_json(&c), "cluster");
        FUZZ_CHECK(pp_cluster_parse(text, size, where, &d, &err) == PP_OK, "second parse: %s", err.msg);
        char *b = fuzz_json_ok(pp_cluster_to_json(&d), "cluster");
        FUZZ_CHECK(strcmp(a, b) == 0, "two parses of one input differ");
        pp_free(a);
        pp_free(b);
        /* resizing takes any count and either succeeds or says why */
        int k = size ? data[size - 1] : 0;
        pp_status rs = pp_cluster_resize(&d, k % 7, (k / 7) % 5 * 3, &err);
        FUZZ_CHECK(rs == PP_OK || rs == PP_ERR_INPUT, "resize status %d", (int)rs);
        if (rs == PP_OK) FUZZ_CHECK(d.nodes >= 1 && d.gpus_per_node >= 1, "resized %d x %d", d.nodes, d.gpus_per_node);
    }
    free(text);
    return 0;
}
