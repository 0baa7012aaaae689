/*
 * test_hw.c — the GPU catalog and cluster JSON: every preset loads, values
 * match tests/reference/hardware.csv and interconnects.csv (written out
 * below), units convert once, resizing rules hold, and bad input gets
 * PP_ERR_INPUT with the file and JSON path named.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/presets.h"
#include "parplan.h"

#define GIB 1073741824.0
#define DATA PARPLAN_SOURCE_DIR "/tests/data/hw/"

static void expect_near(double got, double want, const char *what)
{
    double tol = 1e-9 * (want < 0 ? -want : want);
    cr_expect(got >= want - tol && got <= want + tol, "%s: got %.17g, want %.17g", what, got, want);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert(buf);
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

/* ------------------------------------------------------------ GPU catalog */

/* tests/reference/hardware.csv (dense TFLOP/s; empty = 0), plus the five
 * datasheet-only cards. mem in GiB as the catalog reads it. */
typedef struct gpu_ref {
    const char *name;
    double mem_gib, hbm_tb_s, fp32, tf32, bf16, fp16, fp8, tdp_w, price;
} gpu_ref;

static const gpu_ref refs[] = {
    {"v100-32g", 32, 0.9, 15.7, 0, 0, 125, 0, 300, 3.9},
    {"a100-40g", 40, 1.555, 19.5, 156, 312, 312, 0, 400, 2.74},
    {"a100-80g", 80, 2.039, 19.5, 156, 312, 312, 0, 400, 3.43},
    {"a100-80g-pcie", 80, 1.935, 19.5, 156, 312, 312, 0, 300, 3.67},
    {"h100-sxm", 80, 3.35, 67, 494.5, 989, 989, 1979, 700, 6.155},
    {"h100-pcie", 80, 2.0, 51, 378, 756, 756, 1513, 350, 3.29},
    {"h100-nvl", 94, 3.9, 60, 417.5, 835.5, 835.5, 1670.5, 400, 6.98},
    /* as the driver exposes them: 143771 and 183359 MiB (nvidia-smi) of 141 and 180 GB */
    {"h200", 143771.0 / 1024, 4.8, 67, 494.5, 989, 989, 1979, 700, 6.305},
    {"b200", 183359.0 / 1024, 8.0, 80, 1125, 2250, 2250, 4500, 1000, 8.6},
    {"gb200", 186, 8.0, 80, 1250, 2500, 2500, 5000, 1200, 10.5},
    /* Blackwell Ultra, not in hardware.csv: NVIDIA's GB300 NVL72 rack figures over
     * 72 GPUs (360 PF FP8, 180 PF BF16 dense, 576 TB/s) and HGX B300's, 279/270 GB usable */
    {"gb300", 279, 8.0, 80, 1250, 2500, 2500, 5000, 1400, 0},
    {"b300", 270, 8.0, 75, 1125, 2250, 2250, 4500, 1100, 0},
    /* GDDR6 cards with ECC on (the default): 46068 MiB exposed of 48 GB (nvidia-smi) */
    {"l40s", 46068.0 / 1024, 0.864, 91.6, 183, 362, 362, 733, 350, 0.86},
    {"l4", 24, 0.3, 30.3, 60, 121, 121, 242.5, 72, 0},
    {"mi250x", 128, 3.28, 47.9, 0, 383, 383, 0, 500, 0},
    {"mi300x", 192, 5.3, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 750, 0},
    {"mi325x", 256, 6.0, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 1000, 0},
    {"gaudi2", 96, 2.46, 0, 0, 432, 0, 865, 600, 0},
    {"gaudi3", 128, 3.7, 229, 459, 1835, 459, 1835, 900, 0},
    /* NVIDIA datasheets / architecture whitepapers, dense */
    {"rtx-4090", 24, 1.008, 82.6, 82.6, 165.2, 165.2, 330.3, 450, 0},
    {"rtx-3090", 24, 0.936, 35.6, 35.6, 71, 71, 0, 350, 0},
    {"rtx-a6000", 48, 0.768, 38.7, 77.4, 154.8, 154.8, 0, 300, 0},
    {"rtx-6000-ada", 48, 0.96, 91.1, 182.1, 364.2, 364.2, 728.5, 300, 0},
    {"l40", 46068.0 / 1024, 0.864, 90.5, 90.5, 181.05, 181.05, 362, 300, 0},
};

Test(gpu_catalog, values_match_reference)
{
    for (size_t i = 0; i < sizeof refs / sizeof *refs; i++) {
        const gpu_ref *r = &refs[i];
        pp_gpu g;
        pp_error err = {""};
        cr_assert_eq(pp_gpu_load(r->name, &g, &err), PP_OK, "%s: %s", r->name, err.msg);
        cr_expect_str_eq(g.name, r->name);
        expect_near(g.mem_bytes, r->mem_gib * GIB, r->name);
        expect_near(g.hbm_bw, r->hbm_tb_s * 1e12, r->name);
        const double tf[PP_PREC_COUNT] = {r->fp32, r->tf32, r->bf16, r->fp16, r->fp8};
        for (int p = 0; p < PP_PREC_COUNT; p++) expect_near(g.peak_flops[p], tf[p] * 1e12, pp_precision_name(p));
        expect_near(g.tdp_w, r->tdp_w, r->name);
        expect_near(g.price_usd_per_hour, r->price, r->name);
        cr_expect(g.source[0] && g.full_name[0] && g.vendor[0], "%s: text fields", r->name);
        cr_expect(r->price == 0 || strlen(g.price_date) == 10, "%s: dated price", r->name);
    }
}

Test(gpu_catalog, spot_checks)
{
    pp_gpu g;
    pp_error err = {""};
    cr_assert_eq(pp_gpu_load("h100-sxm", &g, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(g.peak_flops[PP_PREC_BF16], 989e12);
    cr_expect_eq(g.mem_bytes, 80 * GIB);
    cr_expect_eq(g.mem_bytes, 81920.0 * 1048576.0); /* nvidia-smi: 81920 MiB */
    cr_expect_str_eq(g.price_date, "2026-09-20");
    cr_expect_str_eq(g.price_provider, "CoreWeave"); /* as the H200, B200 and GB200 prices */
    cr_assert_eq(pp_gpu_load("v100-32g", &g, &err), PP_OK);
    cr_expect_eq(g.peak_flops[PP_PREC_BF16], 0, "Volta has no bf16");
}

Test(gpu_catalog, every_preset_loads_and_names_are_sorted)
{
    int n = pp_preset_count(PP_PRESET_GPU);
    cr_assert_geq(n, (int)(sizeof refs / sizeof *refs));
    for (int i = 0; i < n; i++) {
        const char *name = pp_preset_name(PP_PRESET_GPU, i);
        pp_gpu g;
        pp_error err = {""};
        cr_assert_eq(pp_gpu_load(name, &g, &err), PP_OK, "%s: %s", name, err.msg);
        cr_expect_str_eq(g.name, name);
        cr_expect_gt(g.mem_bytes, 0);
        cr_expect_gt(g.hbm_bw, 0);
        if (i) cr_expect_lt(strcmp(pp_preset_name(PP_PRESET_GPU, i - 1), name), 0, "sorted");
    }
    for (size_t i = 0; i < sizeof refs / sizeof *refs; i++) {
        int found = 0;
        for (int j = 0; j < n; j++) found |= !strcmp(pp_preset_name(PP_PRESET_GPU, j), refs[i].name);
        cr_expect(found, "%s listed", refs[i].name);
    }
}

Test(gpu_catalog, aliases)
{
    static const char *const pairs[][2] = {
        {"h100", "h100-sxm"}, {"a100", "a100-80g"}, {"v100", "v100-32g"}, {"4090", "rtx-4090"},
        {"h200-sxm", "h200"}, {"a6000", "rtx-a6000"}, {"gaudi-3", "gaudi3"}};
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        pp_gpu g;
        pp_error err = {""};
        cr_assert_eq(pp_gpu_load(pairs[i][0], &g, &err), PP_OK, "%s: %s", pairs[i][0], err.msg);
        cr_expect_str_eq(g.name, pairs[i][1]);
    }
}

Test(gpu_catalog, unknown_name_suggests)
{
    pp_gpu g;
    pp_error err = {""};
    cr_assert_eq(pp_gpu_load("h100-sxn", &g, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "unknown GPU 'h100-sxn'"), "%s", err.msg);
    cr_expect(strstr(err.msg, "did you mean") && strstr(err.msg, "h100-sxm"), "%s", err.msg);
    cr_expect(strstr(err.msg, "parplan gpus"), "%s", err.msg);
    cr_assert_eq(pp_gpu_load("zzzzzzzzzzzzzzzz", &g, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "h100-sxm"), "lists names when none is close: %s", err.msg);
    cr_assert_eq(pp_gpu_load("", &g, &err), PP_ERR_INPUT);
}

Test(gpu_catalog, parse_from_text_and_cap)
{
    size_t len;
    char *text = slurp(PARPLAN_SOURCE_DIR "/topologies/gpus.json", &len);
    pp_gpu out[64];
    int n = 0;
    pp_error err = {""};
    cr_assert_eq(pp_gpu_catalog_parse(text, len, "gpus.json", out, 64, &n, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(n, pp_preset_count(PP_PRESET_GPU));
    cr_assert_eq(pp_gpu_catalog_parse(text, len, "gpus.json", out, 3, &n, &err), PP_OK);
    cr_expect_eq(n, 3);
    cr_expect_str_eq(out[0].name, "v100-32g"); /* file order */
    free(text);
}

static void *load_many(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++) {
        pp_gpu g;
        pp_error err = {""};
        if (pp_gpu_load("h100", &g, &err) != PP_OK || g.peak_flops[PP_PREC_BF16] != 989e12) return (void *)1;
    }
    return NULL;
}

Test(gpu_catalog, first_use_is_thread_safe)
{
    pthread_t t[8];
    for (int i = 0; i < 8; i++) cr_assert_eq(pthread_create(&t[i], NULL, load_many, NULL), 0);
    for (int i = 0; i < 8; i++) {
        void *rc;
        pthread_join(t[i], &rc);
        cr_expect_null(rc);
    }
    const char *names[4];
    cr_expect_eq(pp__gpu_names(names, 4), 4);
}

Test(gpu_catalog, to_json)
{
    pp_gpu g;
    pp_error err = {""};
    cr_assert_eq(pp_gpu_load("h100-sxm", &g, &err), PP_OK);
    char *s = pp_gpu_to_json(&g);
    cr_assert(s);
    cJSON *o = cJSON_Parse(s);
    cr_assert(o);
    cr_expect_eq(cJSON_GetObjectItem(o, "schema_version")->valuedouble, PP_SCHEMA_VERSION);
    cr_expect_eq(cJSON_GetObjectItem(o, "mem_bytes")->valuedouble, 80 * GIB);
    cr_expect_eq(cJSON_GetObjectItem(o, "hbm_bytes_per_s")->valuedouble, 3.35e12);
    cr_expect_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "peak_flops_per_s"), "bf16")->valuedouble, 989e12);
    cr_expect(strstr(s, "\"h100\""), "aliases listed");
    cJSON_Delete(o);
    pp_free(s);
}

Test(gpu_catalog, enum_names)
{
    cr_expect_str_eq(pp_precision_name(PP_PREC_BF16), "bf16");
    cr_expect_str_eq(pp_precision_name(PP_PREC_FP8), "fp8");
    cr_expect_str_eq(pp_link_kind_name(PP_LINK_NVLINK), "nvlink");
    cr_expect_str_eq(pp_link_kind_name(PP_LINK_INFINIBAND), "infiniband");
    cr_expect_str_eq(pp_link_kind_name(PP_LINK_COUNT), "unknown");
}

/* ------------------------------------------------------------ clusters */

Test(cluster, every_preset_loads)
{
    static const char *const want[] = {
        "dgx-a100-40g", "dgx-a100-80g", "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72", "dgx-b300", "gb300-nvl72",
        "a100-pcie-8x", "l40s-8x-eth", "mi300x-8x", "aws-p4d", "aws-p5", "workstation-1x-4090",
        "pcie-4x-4090"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        pp_cluster c;
        pp_error err = {""};
        cr_assert_eq(pp_cluster_load(want[i], &c, &err), PP_OK, "%s: %s", want[i], err.msg);
    }
    int n = pp_preset_count(PP_PRESET_CLUSTER);
    cr_assert_geq(n, (int)(sizeof want / sizeof *want));
    for (int i = 0; i < n; i++) {
        const char *name = pp_preset_name(PP_PRESET_CLUSTER, i);
        pp_cluster c;
        pp_error err = {""};
        cr_assert_eq(pp_cluster_load(name, &c, &err), PP_OK, "%s: %s", name, err.msg);
        cr_expect_str_eq(c.name, name, "name matches the file");
        cr_expect_eq(c.nodes, 1, "%s: default one node", name);
        cr_expect_eq(c.nvlink_domain % c.gpus_per_node, 0);
        expect_near(c.inter.bw, c.nics_per_node * c.nic_bw / c.gpus_per_node, name);
        cr_expect(c.intra.bw > 0 && c.inter.bw > 0 && c.pcie.bw > 0, "%s: bandwidths", name);
        cr_expect(c.intra.latency > 0 && c.inter.latency > 0, "%s: latencies", name);
        cr_expect(c.host_mem_bytes > 0 && c.source[0], "%s", name);
    }
}

Test(cluster, unit_conversions)
{
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_cluster_load("dgx-h100", &c, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(c.intra.kind, PP_LINK_NVLINK);
    cr_expect_eq(c.intra.bw, 450e9, "900 GB/s bidir -> 450e9 B/s per direction");
    cr_expect_eq(c.nic_bw, 50e9, "400 Gb/s -> 50e9 B/s");
    cr_expect_eq(c.inter.bw, 50e9, "8 x 400 Gb/s over 8 GPUs -> 50e9 B/s per GPU");
    cr_expect_eq(c.pcie.bw, 63e9, "PCIe Gen5 x16 per direction");
    expect_near(c.intra.latency, 3.4e-6, "NVLink latency");
    expect_near(c.inter.latency, 5e-6, "IB latency");
    cr_expect_eq(c.host_mem_bytes, 2048 * GIB);
    cr_expect_eq(c.gpu.peak_flops[PP_PREC_BF16], 989e12);

    cr_assert_eq(pp_cluster_load("dgx-a100-80g", &c, &err), PP_OK);
    cr_expect_eq(c.intra.bw, 300e9);
    cr_expect_eq(c.inter.bw, 25e9, "8 x HDR 200 Gb/s");
    cr_expect_eq(c.pcie.bw, 31.5e9);
    cr_assert_eq(pp_cluster_load("aws-p4d", &c, &err), PP_OK);
    cr_expect_eq(c.inter.bw, 6.25e9, "EFA 4 x 100 Gb/s over 8 GPUs");
    cr_expect_eq(c.inter.kind, PP_LINK_ETHERNET);
    cr_assert_eq(pp_cluster_load("aws-p5", &c, &err), PP_OK);
    cr_expect_eq(c.inter.bw, 50e9, "EFA 32 x 100 Gb/s over 8 GPUs");
    cr_assert_eq(pp_cluster_load("gb200-nvl72", &c, &err), PP_OK);
    cr_expect_eq(c.gpus_per_node, 72);
    cr_expect_eq(c.nvlink_domain, 72);
    cr_expect_eq(c.intra.bw, 900e9);
    cr_expect_eq(c.inter.bw, 50e9, "72 x 400 Gb/s over 72 GPUs");
    cr_assert_eq(pp_cluster_load("gb300-nvl72", &c, &err), PP_OK);
    cr_expect_eq(c.nvlink_domain, 72);
    cr_expect_eq(c.inter.bw, 100e9, "72 x ConnectX-8 800 Gb/s over 72 GPUs");
    cr_expect_eq(c.gpu.mem_bytes, 279 * GIB);
    cr_assert_eq(pp_cluster_load("dgx-b300", &c, &err), PP_OK);
    cr_expect_eq(c.inter.bw, 100e9, "8 x ConnectX-8 800 Gb/s over 8 GPUs");
    cr_expect_eq(c.pcie.bw, 121e9, "PCIe Gen6 x16 per direction (the catalog's 121 GB/s)");
    cr_assert_eq(pp_cluster_load("a100-pcie-8x", &c, &err), PP_OK);
    cr_expect_eq(c.intra.kind, PP_LINK_PCIE);
    cr_expect_eq(c.intra.bw, 31.5e9, "PCIe Gen4 x16 per direction");
    cr_assert_eq(pp_cluster_load("mi300x-8x", &c, &err), PP_OK);
    cr_expect_eq(c.intra.kind, PP_LINK_XGMI);
    cr_expect_eq(c.intra.bw, 448e9);
    cr_assert_eq(pp_cluster_load("workstation-1x-4090", &c, &err), PP_OK);
    cr_expect_eq(c.gpus_per_node, 1);
    cr_expect_eq(c.inter.bw, 1.25e9, "10GbE");
}

Test(cluster, inline_gpu_object_and_path)
{
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_cluster_load(DATA "cluster_inline_ok.json", &c, &err), PP_OK, "%s", err.msg);
    cr_expect_str_eq(c.gpu.name, "my-gpu");
    cr_expect_eq(c.gpu.mem_bytes, 24 * GIB);
    cr_expect_eq(c.gpu.peak_flops[PP_PREC_FP16], 0);
    cr_expect_eq(c.nvlink_domain, 8);
    cr_expect_eq(c.intra.bw, 31.5e9);
    cr_expect_eq(c.inter.bw, 2 * 12.5e9 / 4);
    cr_expect_eq(c.pcie.bw, 20e9);
    cr_expect_eq(c.nvme_bytes, 1e12);
}

/* NVMe per node: capacity and the bandwidths DeepSpeed's swapper reaches;
 * a drive without bandwidths gets the cited one-drive default (DeepNVMe's
 * 10/5 GB/s over 4 drives: 2.5 and 1.25 GB/s); bandwidth without a drive,
 * or zero, is refused naming the field. */
static pp_status nvme_cluster(const char *extra, pp_cluster *c, pp_error *err)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"name\": \"x\", \"gpu\": \"h100\", \"nodes\": 1, \"gpus_per_node\": 8,"
             "\"intra\": {\"kind\": \"nvlink\", \"gbytes_per_s_bidir\": 900, \"latency_us\": 1},"
             "\"inter\": {\"kind\": \"infiniband\", \"nics\": 1, \"nic_gbit_s\": 1, \"latency_us\": 1},"
             "\"pcie\": {\"gen\": 4}, \"host_mem_gib\": 1%s}", extra);
    return pp_cluster_parse(text, strlen(text), "nvme.json", c, err);
}

Test(cluster, nvme_bandwidths)
{
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(nvme_cluster(", \"nvme_tb\": 2, \"nvme_read_gbytes_s\": 28, \"nvme_write_gbytes_s\": 14,"
                              "\"nvme_source\": \"ZeRO-Infinity\"", &c, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(c.nvme_bytes, 2e12);
    cr_expect_eq(c.nvme_read_bw, 28e9);
    cr_expect_eq(c.nvme_write_bw, 14e9);
    cr_assert_eq(nvme_cluster(", \"nvme_tb\": 2", &c, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(c.nvme_read_bw, 10e9 / 4, "one drive of DeepNVMe's four");
    cr_expect_eq(c.nvme_write_bw, 5e9 / 4);
    cr_assert_eq(nvme_cluster("", &c, &err), PP_OK, "%s", err.msg);
    cr_expect(c.nvme_bytes == 0 && c.nvme_read_bw == 0 && c.nvme_write_bw == 0, "no drive, no bandwidth");
    cr_assert_eq(nvme_cluster(", \"nvme_read_gbytes_s\": 3", &c, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "nvme.json: $.nvme_read_gbytes_s: expected only with nvme_tb > 0"), "%s", err.msg);
    cr_assert_eq(nvme_cluster(", \"nvme_tb\": 1, \"nvme_write_gbytes_s\": 0", &c, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "$.nvme_write_gbytes_s: expected a number in [0.01, 10000], got 0"), "%s", err.msg);
    /* every preset with a drive has its bandwidths; DGX H100 as ZeRO-Infinity measured a DGX-2 */
    cr_assert_eq(pp_cluster_load("dgx-h100", &c, &err), PP_OK);
    cr_expect(c.nvme_read_bw == 28e9 && c.nvme_write_bw == 14e9);
    for (int i = 0; i < pp_preset_count(PP_PRESET_CLUSTER); i++) {
        cr_assert_eq(pp_cluster_load(pp_preset_name(PP_PRESET_CLUSTER, i), &c, &err), PP_OK);
        cr_expect((c.nvme_bytes > 0) == (c.nvme_read_bw > 0 && c.nvme_write_bw > 0), "%s", c.name);
    }
}

Test(cluster, unknown_preset_lists_names)
{
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_cluster_load("no-such-cluster", &c, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "unknown cluster 'no-such-cluster'"), "%s", err.msg);
    cr_expect(strstr(err.msg, "dgx-h100") && strstr(err.msg, "parplan clusters"), "%s", err.msg);
    cr_assert_eq(pp_cluster_load("dgx-h10", &c, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "did you mean") && strstr(err.msg, "dgx-h100"), "%s", err.msg);
    cr_assert_eq(pp_cluster_load(DATA "no-such-file.json", &c, &err), PP_ERR_IO);
    cr_expect(strstr(err.msg, "no-such-file.json"), "%s", err.msg);
}

Test(cluster, resize)
{
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_cluster_load("dgx-h100", &c, &err), PP_OK);
    cr_assert_eq(pp_cluster_resize(&c, 4, 0, &err), PP_OK);
    cr_expect_eq(pp_cluster_gpus(&c), 32);
    cr_assert_eq(pp_cluster_resize(&c, 0, 16, &err), PP_OK);
    cr_expect_eq(c.nodes, 2);
    cr_expect_eq(c.gpus_per_node, 8);
    cr_assert_eq(pp_cluster_resize(&c, 0, 0, &err), PP_OK, "0, 0 leaves it");
    cr_expect_eq(pp_cluster_gpus(&c), 16);
    cr_assert_eq(pp_cluster_resize(&c, 2, 16, &err), PP_OK, "consistent pair");

    cr_assert_eq(pp_cluster_resize(&c, 0, 12, &err), PP_ERR_INPUT);
    cr_expect(!strcmp(err.field, "gpus") && !strcmp(err.value, "12") && strstr(err.msg, "node size 8"), "%s", err.msg);
    cr_assert_eq(pp_cluster_resize(&c, 0, 2000000, &err), PP_ERR_INPUT);
    cr_expect(!strcmp(err.field, "gpus") && strstr(err.msg, "1048576"), "%s", err.msg);
    cr_assert_eq(pp_cluster_resize(&c, 1000000, 0, &err), PP_ERR_INPUT, "8M GPUs");
    cr_assert_eq(pp_cluster_resize(&c, -1, 0, &err), PP_ERR_INPUT);
    cr_assert_eq(pp_cluster_resize(&c, 3, 16, &err), PP_ERR_INPUT, "disagreeing pair");
    cr_expect_eq(pp_cluster_gpus(&c), 16, "unchanged after errors");

    cr_assert_eq(pp_cluster_resize(&c, 0, 4, &err), PP_OK, "partial node");
    cr_expect_eq(c.nodes, 1);
    cr_expect_eq(c.gpus_per_node, 4);
    cr_expect_eq(c.nvlink_domain, 4);

    cr_assert_eq(pp_cluster_load("gb200-nvl72", &c, &err), PP_OK);
    cr_assert_eq(pp_cluster_resize(&c, 0, 144, &err), PP_OK);
    cr_expect_eq(c.nodes, 2);
    cr_assert_eq(pp_cluster_resize(&c, 0, 100, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "node size 72"), "%s", err.msg);
}

Test(cluster, to_json_units)
{
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_cluster_load("dgx-h100", &c, &err), PP_OK);
    char *s = pp_cluster_to_json(&c);
    cr_assert(s);
    cJSON *o = cJSON_Parse(s);
    cr_assert(o);
    cr_expect_eq(cJSON_GetObjectItem(o, "schema_version")->valuedouble, PP_SCHEMA_VERSION);
    cr_expect_eq(cJSON_GetObjectItem(o, "gpus")->valuedouble, 8);
    cJSON *intra = cJSON_GetObjectItem(o, "intra"), *inter = cJSON_GetObjectItem(o, "inter");
    cr_expect_eq(cJSON_GetObjectItem(intra, "bw_bytes_per_s")->valuedouble, 450e9);
    cr_expect_eq(cJSON_GetObjectItem(inter, "bw_bytes_per_s")->valuedouble, 50e9);
    cr_expect_eq(cJSON_GetObjectItem(inter, "nic_bw_bytes_per_s")->valuedouble, 50e9);
    cr_expect_str_eq(cJSON_GetObjectItem(inter, "kind")->valuestring, "infiniband");
    cr_expect_eq(cJSON_GetObjectItem(o, "host_mem_bytes")->valuedouble, 2048 * GIB);
    cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "gpu"), "name")->valuestring, "h100-sxm");
    cJSON_Delete(o);
    pp_free(s);
}

/* ------------------------------------------------------------ bad input */

static void expect_msg(const char *file, pp_status st, const pp_error *err, const char *want1,
                       const char *want2)
{
    cr_expect_eq(st, PP_ERR_INPUT, "%s: status %d (%s)", file, st, err->msg);
    cr_expect(strstr(err->msg, file), "%s: message names the file: %s", file, err->msg);
    if (want1) cr_expect(strstr(err->msg, want1), "%s: wants \"%s\": %s", file, want1, err->msg);
    if (want2) cr_expect(strstr(err->msg, want2), "%s: wants \"%s\": %s", file, want2, err->msg);
    cr_expect(!strchr(err->msg, '\n'), "one line");
}

static void bad_catalog(const char *file, const char *want1, const char *want2)
{
    char path[512];
    size_t len;
    snprintf(path, sizeof path, DATA "%s", file);
    char *text = slurp(path, &len);
    pp_gpu out[4];
    int n = -1;
    pp_error err = {""};
    pp_status st = pp_gpu_catalog_parse(text, len, path, out, 4, &n, &err);
    expect_msg(file, st, &err, want1, want2);
    cr_expect_eq(n, 0);
    free(text);
}

static void bad_cluster(const char *file, const char *want1, const char *want2)
{
    char path[512];
    pp_cluster c;
    pp_error err = {""};
    snprintf(path, sizeof path, DATA "%s", file);
    expect_msg(file, pp_cluster_load(path, &c, &err), &err, want1, want2);
}

#define BAD_GPUS(id, w1, w2) \
    Test(gpu_catalog_bad, id) { bad_catalog("gpus_" #id ".json", w1, w2); }
#define BAD_CLUSTER(id, w1, w2) \
    Test(cluster_bad, id) { bad_cluster("cluster_" #id ".json", w1, w2); }

BAD_GPUS(malformed, "json:1:", "malformed")
BAD_GPUS(truncated, "json:1:", "truncated")
BAD_GPUS(wrong_type, "$.gpus[0].mem_gib", "expected a number")
BAD_GPUS(missing, "$.gpus[0].hbm_tb_s", "missing required field")
BAD_GPUS(unknown_key, "$.gpus[0].mem_gb", "did you mean \"mem_gib\"")
BAD_GPUS(negative, "$.gpus[1].tdp_w", "got -700")
BAD_GPUS(zero, "$.gpus[0].mem_gib", "got 0")
BAD_GPUS(inf, "$.gpus[0].hbm_tb_s", "got inf")
BAD_GPUS(absurd, "$.gpus[0].tflops.bf16", "got 1e+30")
BAD_GPUS(duplicate, "$.gpus[1].name", "unique")
BAD_GPUS(empty, "empty file", NULL)
BAD_GPUS(binary, "binary", NULL)
BAD_GPUS(deep, "nested deeper", NULL)

BAD_CLUSTER(malformed, "json:4:2", "malformed")
BAD_CLUSTER(truncated, "json:3:", "truncated")
BAD_CLUSTER(wrong_type, "$.nodes", "expected an integer")
BAD_CLUSTER(missing, "$.host_mem_gib", "missing required field")
BAD_CLUSTER(unknown_key, "$.inter.nic_gbits", "did you mean \"nic_gbit_s\"")
BAD_CLUSTER(negative, "$.intra.latency_us", "got -3.4")
BAD_CLUSTER(zero, "$.gpus_per_node", "got 0")
BAD_CLUSTER(inf, "$.inter.nic_gbit_s", "got inf")
BAD_CLUSTER(absurd, "$.intra.gbytes_per_s_bidir", "got 1e+30")
BAD_CLUSTER(unknown_gpu, "$.gpu", "did you mean h100-sxm")
BAD_CLUSTER(inline_gpu_zero, "$.gpu.mem_gib", "got 0")
BAD_CLUSTER(domain, "$.nvlink_domain", "multiple of gpus_per_node")
BAD_CLUSTER(too_many, "$.nodes", "1000000")
BAD_CLUSTER(empty, "empty file", NULL)
BAD_CLUSTER(binary, "binary", NULL)
BAD_CLUSTER(deep, "nested deeper", NULL)

Test(cluster_bad, parse_text_names_where)
{
    const char *text = "{\"name\": \"x\", \"gpu\": 7}";
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_cluster_parse(text, strlen(text), "inline.json", &c, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "inline.json: $.gpu: expected a GPU name"), "%s", err.msg);
    const char *two = "{\"name\": \"x\", \"gpu\": \"h100\", \"nodes\": 1, \"gpus_per_node\": 8,"
                      "\"intra\": {\"kind\": \"nvlink\", \"latency_us\": 1},"
                      "\"inter\": {\"kind\": \"infiniband\", \"nics\": 1, \"nic_gbit_s\": 1, \"latency_us\": 1},"
                      "\"pcie\": {\"gen\": 4}, \"host_mem_gib\": 1}";
    cr_assert_eq(pp_cluster_parse(two, strlen(two), "two.json", &c, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "two.json: $.intra: expected exactly one of"), "%s", err.msg);
}

/* An AWS instance is rented at AWS's price, not the GPU's catalog
 * (CoreWeave) one: tests/reference/cloud_prices.csv, p5.48xlarge $55.04 an
 * hour for 8 GPUs = $6.88, p4d.24xlarge $21.96 / 8 = $2.74 (2026-11-09). A
 * cluster's price needs its date, like a GPU's. */
Test(cluster_catalog, a_cluster_price_replaces_its_gpus)
{
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_cluster_load("aws-p5", &c, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(c.gpu.price_usd_per_hour, 55.04 / 8);
    cr_expect_str_eq(c.gpu.price_provider, "AWS");
    cr_assert_eq(pp_cluster_load("aws-p4d", &c, &err), PP_OK, "%s", err.msg);
    cr_expect(c.gpu.price_usd_per_hour > 21.96 / 8 - 0.01 && c.gpu.price_usd_per_hour < 21.96 / 8 + 0.01);
    cr_assert_eq(pp_cluster_load("dgx-h100", &c, &err), PP_OK, "%s", err.msg);
    cr_expect_str_eq(c.gpu.price_provider, "CoreWeave");
    const char *bad = "{\"name\": \"x\", \"gpu\": \"h100-sxm\", \"nodes\": 1, \"gpus_per_node\": 8, "
                      "\"intra\": {\"kind\": \"nvlink\", \"gbytes_per_s_bidir\": 900}, "
                      "\"inter\": {\"kind\": \"infiniband\", \"nics\": 8, \"nic_gbit_s\": 400}, "
                      "\"price_usd_per_gpu_hour\": 5}";
    cr_expect_eq(pp_cluster_parse(bad, strlen(bad), "x.json", &c, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "price_date") != NULL, "%s", err.msg);
}
