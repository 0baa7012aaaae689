/* fuzz_gpu_catalog.c — libFuzzer harness: the GPU catalog reader
 * (pp_gpu_catalog_parse, topologies/gpus.json format). Seeds:
 * tests/fuzz/corpus/gpus. */
#include <math.h>

#include "fuzz_common.h"

#define CAP 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char where[] = "fuzz/gpus.json";
    char *text = fuzz_copy(data, size);
    pp_gpu *g = malloc(CAP * sizeof *g);
    FUZZ_CHECK(g != NULL, "malloc");
    pp_error err = {""};
    int n = -1;
    pp_status st = pp_gpu_catalog_parse(text, size, where, g, CAP, &n, &err);
    fuzz_check_status(st, &err, where);
    FUZZ_CHECK(st == PP_OK ? n >= 1 && n <= CAP : n == 0, "status %d with %d GPUs", (int)st, n);
    for (int i = 0; st == PP_OK && i < n; i++) {
        FUZZ_CHECK(g[i].name[0] && isfinite(g[i].mem_bytes) && g[i].mem_bytes > 0 && g[i].hbm_bw > 0,
                   "gpu %d values", i);
        pp_free(fuzz_json_ok(pp_gpu_to_json(&g[i]), "gpu"));
    }
    /* a smaller cap fills at most cap entries and reports that many */
    if (st == PP_OK) {
        int n1 = -1;
        pp_error err1 = {""};
        FUZZ_CHECK(pp_gpu_catalog_parse(text, size, where, g, 1, &n1, &err1) == PP_OK && n1 == 1,
                   "cap 1: %d (%s)", n1, err1.msg);
    }
    free(g);
    free(text);
    return 0;
}
