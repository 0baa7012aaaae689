/*
 * hw_json.c — the GPU catalog (topologies/gpus.json) and cluster JSON
 * (topologies/clusters/NAME.json): strict readers, lookup by name or alias,
 * resizing, and JSON renderings. Formats and units: docs/formats.md.
 * Units are converted once, here: GiB -> bytes, TB/s -> bytes/s, TFLOP/s ->
 * FLOP/s, bidirectional GB/s -> bytes/s per direction, Gb/s -> bytes/s.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/configs.h"
#include "configs/presets.h"

#define CATALOG_PATH "topologies/gpus.json"
#define CATALOG_MAX 256      /* GPUs in one catalog */
#define ALIAS_MAX 8          /* aliases per GPU */
#define GPUS_MAX (1 << 20)   /* 1,048,576 GPUs in a cluster; more is absurd */
#define NODES_MAX 1000000
#define GPN_MAX 4096         /* GPUs per node (a rack-sized node is 72) */

typedef struct gpu_entry {
    pp_gpu gpu;
    int naliases;
    char aliases[ALIAS_MAX][PP_NAME_LEN];
} gpu_entry;

static const char *const prec_names[] = {"fp32", "tf32", "bf16", "fp16", "fp8", NULL};
static const char *const link_names[] = {"nvlink", "pcie", "xgmi", "infiniband", "roce", "ethernet"};
_Static_assert(sizeof prec_names / sizeof *prec_names == PP_PREC_COUNT + 1, "precision names");
_Static_assert(sizeof link_names / sizeof *link_names == PP_LINK_COUNT, "link kind names");

/* Link kinds allowed per tier, as jr_enum name lists and their enum values. */
static const char *const intra_names[] = {"nvlink", "pcie", "xgmi", "roce"};
static const pp_link_kind intra_kinds[] = {PP_LINK_NVLINK, PP_LINK_PCIE, PP_LINK_XGMI, PP_LINK_ROCE};
static const char *const inter_names[] = {"infiniband", "roce", "ethernet"};
static const pp_link_kind inter_kinds[] = {PP_LINK_INFINIBAND, PP_LINK_ROCE, PP_LINK_ETHERNET};

/* PCIe x16 per direction, GB/s, by generation (tests/reference/interconnects.csv). */
static const double pcie_gb_s[7] = {[3] = 15.75, [4] = 31.5, [5] = 63.0, [6] = 121.0};

static const char *const gpu_keys[] = {
    "name", "aliases", "full_name", "vendor", "source", "mem_gib", "hbm_tb_s", "tflops", "tdp_w",
    "price_usd_per_gpu_hour", "price_date", "price_provider", "efficiency", "fp8_transpose", "p2p", NULL};
static const char *const eff_keys[] = {"matmul", "attention", "cudnn_attention_speedup", "hbm", "source", NULL};
static const char *const catalog_keys[] = {"gpus", NULL};
static const char *const cluster_keys[] = {
    "name", "description", "source", "gpu", "nodes", "gpus_per_node", "nvlink_domain", "intra",
    "inter", "pcie", "host_mem_gib", "nvme_tb", "nvme_read_gbytes_s", "nvme_write_gbytes_s", "nvme_source",
    "nccl_efficiency",
    "host_mem_gbytes_s", "price_usd_per_gpu_hour", "price_date", "price_provider", NULL};
static const char *const nccl_keys[] = {"intra", "inter", "overlap_slowdown", "source", NULL};
static const char *const intra_keys[] = {"kind", "gbytes_per_s_bidir", "gen", "latency_us", NULL};
static const char *const inter_keys[] = {"kind", "nics", "nic_gbit_s", "latency_us", NULL};
static const char *const pcie_keys[] = {"gen", "gbytes_per_s", NULL};

const char *pp_precision_name(pp_precision p)
{
    PP__C_NUMERIC;
    return (unsigned)p < PP_PREC_COUNT ? prec_names[p] : "unknown";
}

const char *pp_link_kind_name(pp_link_kind k)
{
    PP__C_NUMERIC;
    return (unsigned)k < PP_LINK_COUNT ? link_names[k] : "unknown";
}

/* ------------------------------------------------------------ field readers */

/* A number in (0, hi]: zero, negative, non-finite (1e999) and absurd values
 * are errors. Returns 1 when present and valid. */
/* A positive quantity within physical bounds [lo, hi]: a bandwidth of
 * 1e-300 GB/s passes "positive" but prints 10^300-second steps (red team
 * rt12); the floors are far below any real part (1 GbE, a 10 ns link). */
static int num_pos(jr_ctx *c, const cJSON *o, const char *path, const char *key, int req, double lo, double hi,
                   double *out)
{
    if (c->st != PP_OK) return 0;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v)) return req ? jr_fail(c, path, key, "missing required field") : 0;
    if (!cJSON_IsNumber(v)) return jr_fail(c, path, key, "expected a number in [%g, %g]", lo, hi);
    double d = v->valuedouble;
    if (!isfinite(d) || d < lo || d > hi)
        return jr_fail(c, path, key, "expected a number in [%g, %g], got %g", lo, hi, d);
    *out = d;
    return 1;
}

/* Lowercase-hyphen preset name: [a-z0-9][a-z0-9-]*. */
static int valid_name(const char *s)
{
    if (!*s || *s == '-') return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-')) return 0;
    return 1;
}

/* YYYY-MM-DD with plausible month and day. */
static int valid_date(const char *s)
{
    int y, m, d;
    char tail;
    if (strlen(s) != 10 || s[4] != '-' || s[7] != '-') return 0;
    if (sscanf(s, "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3) return 0;
    return y >= 1990 && y <= 2100 && m >= 1 && m <= 12 && d >= 1 && d <= 31;
}

static void read_aliases(jr_ctx *c, const cJSON *g, const char *path, gpu_entry *e)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(g, "aliases");
    if (c->st != PP_OK || !a || cJSON_IsNull(a)) return;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > ALIAS_MAX) {
        jr_fail(c, path, "aliases", "expected an array of at most %d names", ALIAS_MAX);
        return;
    }
    for (const cJSON *it = a->child; it && c->st == PP_OK; it = it->next) {
        char p[96];
        snprintf(p, sizeof p, "%s.aliases[%d]", path, e->naliases);
        if (!cJSON_IsString(it) || !valid_name(it->valuestring) || strlen(it->valuestring) >= PP_NAME_LEN)
            jr_fail(c, p, NULL, "expected a lowercase-hyphen name (a-z, 0-9, -) under %d characters", PP_NAME_LEN);
        else
            strcpy(e->aliases[e->naliases++], it->valuestring);
    }
}

static void read_tflops(jr_ctx *c, const cJSON *g, const char *path, pp_gpu *out)
{
    char p[96];
    const cJSON *t = jr_obj(c, g, path, "tflops", 1);
    if (!t) return;
    snprintf(p, sizeof p, "%s.tflops", path);
    jr_check_keys(c, t, p, prec_names);
    int any = 0;
    for (int i = 0; i < PP_PREC_COUNT; i++) {
        double v = 0;
        if (jr_num(c, t, p, prec_names[i], 0, 0, 1e5, &v)) out->peak_flops[i] = v * 1e12;
        any |= v > 0;
    }
    if (!any) jr_fail(c, path, "tflops", "expected at least one precision above 0 TFLOP/s");
}

/* Optional achievable fractions (docs/time.md); absent = documented defaults. */
static void read_efficiency(jr_ctx *c, const cJSON *g, const char *path, pp_gpu *out)
{
    char p[96], src[PP_TEXT_LEN];
    const cJSON *e = jr_obj(c, g, path, "efficiency", 0);
    if (!e) return;
    snprintf(p, sizeof p, "%s.efficiency", path);
    jr_check_keys(c, e, p, eff_keys);
    jr_num(c, e, p, "matmul", 0, 0.01, 1, &out->matmul_eff);
    jr_num(c, e, p, "attention", 0, 0.01, 1, &out->attn_eff);
    jr_num(c, e, p, "cudnn_attention_speedup", 0, 1, 4, &out->cudnn_attn_speedup);
    jr_num(c, e, p, "hbm", 0, 0.01, 1, &out->hbm_eff);
    jr_str(c, e, p, "source", 0, src, sizeof src);
}

static void read_price(jr_ctx *c, const cJSON *g, const char *path, pp_gpu *out)
{
    int has_price = jr_num(c, g, path, "price_usd_per_gpu_hour", 0, 0, 1000, &out->price_usd_per_hour);
    int has_date = jr_str(c, g, path, "price_date", has_price && out->price_usd_per_hour > 0,
                          out->price_date, sizeof out->price_date);
    if (has_date && !valid_date(out->price_date))
        jr_fail(c, path, "price_date", "expected a date YYYY-MM-DD, got \"%s\"", out->price_date);
    jr_str(c, g, path, "price_provider", 0, out->price_provider, sizeof out->price_provider);
}

/* One GPU object at `path` (e.g. "$.gpus[3]" or "$.gpu"). */
static void read_gpu(jr_ctx *c, const cJSON *g, const char *path, gpu_entry *e)
{
    pp_gpu *out = &e->gpu;
    double v;
    memset(e, 0, sizeof *e);
    jr_check_keys(c, g, path, gpu_keys);
    if (jr_str(c, g, path, "name", 1, out->name, sizeof out->name) && !valid_name(out->name))
        jr_fail(c, path, "name", "expected a lowercase-hyphen name (a-z, 0-9, -), got \"%s\"", out->name);
    read_aliases(c, g, path, e);
    jr_str(c, g, path, "full_name", 1, out->full_name, sizeof out->full_name);
    jr_str(c, g, path, "vendor", 1, out->vendor, sizeof out->vendor);
    jr_str(c, g, path, "source", 1, out->source, sizeof out->source);
    if (num_pos(c, g, path, "mem_gib", 1, 1, 4096, &v)) out->mem_bytes = v * PP_GIB;
    if (num_pos(c, g, path, "hbm_tb_s", 1, 0.01, 1000, &v)) out->hbm_bw = v * 1e12;
    read_tflops(c, g, path, out);
    read_efficiency(c, g, path, out);
    jr_bool(c, g, path, "fp8_transpose", 0, &out->fp8_transpose);
    int p2p = 1;
    if (jr_bool(c, g, path, "p2p", 0, &p2p)) out->no_p2p = !p2p;
    num_pos(c, g, path, "tdp_w", 1, 1, 1e4, &out->tdp_w);
    read_price(c, g, path, out);
}

/* ------------------------------------------------------------ the catalog */

static int entry_has(const gpu_entry *e, const char *name)
{
    if (strcmp(e->gpu.name, name) == 0) return 1;
    for (int i = 0; i < e->naliases; i++)
        if (strcmp(e->aliases[i], name) == 0) return 1;
    return 0;
}

/* Rejects a name or alias of entry i already used by an earlier entry. */
static void check_unique(jr_ctx *c, const gpu_entry *e, int i, const char *path)
{
    for (int j = 0; j < i && c->st == PP_OK; j++) {
        if (entry_has(&e[j], e[i].gpu.name))
            jr_fail(c, path, "name", "expected a unique name, \"%s\" is also $.gpus[%d]", e[i].gpu.name, j);
        for (int a = 0; a < e[i].naliases && c->st == PP_OK; a++)
            if (entry_has(&e[j], e[i].aliases[a]))
                jr_fail(c, path, "aliases", "expected unique aliases, \"%s\" is also $.gpus[%d]",
                        e[i].aliases[a], j);
    }
    for (int a = 0; a < e[i].naliases && c->st == PP_OK; a++)
        if (strcmp(e[i].aliases[a], e[i].gpu.name) == 0)
            jr_fail(c, path, "aliases", "expected aliases other than the name \"%s\"", e[i].gpu.name);
}

/* Reads a whole catalog into out[0..CATALOG_MAX); *n entries on success. */
static pp_status catalog_read(const char *text, size_t len, const char *where, gpu_entry *out, int *n,
                              pp_error *err)
{
    *n = 0;
    pp_status pst;
    cJSON *root = jr_parse_ex(text, len, where, NULL, err, &pst);
    if (!root) return pst;
    jr_ctx c = {where, err, PP_OK};
    jr_check_keys(&c, root, "$", catalog_keys);
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "gpus");
    if (!arr) jr_fail(&c, "$", "gpus", "missing required field");
    else if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1 || cJSON_GetArraySize(arr) > CATALOG_MAX)
        jr_fail(&c, "$", "gpus", "expected an array of 1 to %d GPU objects", CATALOG_MAX);
    int i = 0;
    for (const cJSON *it = arr ? arr->child : NULL; it && c.st == PP_OK; it = it->next, i++) {
        char path[32];
        snprintf(path, sizeof path, "$.gpus[%d]", i);
        if (!cJSON_IsObject(it)) {
            jr_fail(&c, path, NULL, "expected a GPU object");
            break;
        }
        read_gpu(&c, it, path, &out[i]);
        check_unique(&c, out, i, path);
    }
    cJSON_Delete(root);
    if (c.st == PP_OK) *n = i;
    return c.st;
}

pp_status pp_gpu_catalog_parse(const char *text, size_t len, const char *where, pp_gpu *out, int cap,
                               int *n, pp_error *err)
{
    PP__C_NUMERIC;
    *n = 0;
    gpu_entry *e = malloc(sizeof *e * CATALOG_MAX);
    if (!e) return pp__fail(err, PP_ERR_NOMEM, "%s: out of memory reading the GPU catalog", where);
    int count;
    pp_status st = catalog_read(text, len, where, e, &count, err);
    for (int i = 0; st == PP_OK && i < count && i < cap; i++) out[(*n)++] = e[i].gpu;
    free(e);
    return st;
}

/* The built-in catalog, parsed once (thread-safe) and never freed. A parse
 * failure is kept as a status and message, not an abort. */
static struct {
    pthread_once_t once;
    gpu_entry entries[CATALOG_MAX];
    const char *names[CATALOG_MAX]; /* sorted */
    int n;
    pp_status st;
    pp_error err;
} builtin = {.once = PTHREAD_ONCE_INIT};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void builtin_init(void)
{
    const pp_embedded_file *f = pp__embedded_path(CATALOG_PATH);
    if (!f) {
        builtin.st = pp__fail(&builtin.err, PP_ERR_INTERNAL, "%s: not embedded in the library", CATALOG_PATH);
        return;
    }
    builtin.st = catalog_read(f->data, f->len, f->path, builtin.entries, &builtin.n, &builtin.err);
    for (int i = 0; i < builtin.n; i++) builtin.names[i] = builtin.entries[i].gpu.name;
    qsort(builtin.names, (size_t)builtin.n, sizeof *builtin.names, cmp_str);
}

static void builtin_ready(void) { pthread_once(&builtin.once, builtin_init); }

int pp__gpu_names(const char **out, int cap)
{
    builtin_ready();
    int n = builtin.n < cap ? builtin.n : cap;
    for (int i = 0; i < n; i++) out[i] = builtin.names[i];
    return n;
}

static const gpu_entry *builtin_find(const char *name)
{
    for (int i = 0; i < builtin.n; i++)
        if (entry_has(&builtin.entries[i], name)) return &builtin.entries[i];
    return NULL;
}

/* "did you mean a, b, c?" from the nearest names, else every name. */
static void suggest(pp_preset_kind kind, const char *name, char *buf, size_t cap)
{
    char near[256];
    pp__preset_suggest(kind, name, near, sizeof near);
    if (*near) {
        snprintf(buf, cap, ": did you mean %s?", near);
        return;
    }
    size_t used = (size_t)snprintf(buf, cap, ": expected one of ");
    int n = pp_preset_count(kind);
    for (int i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", pp_preset_name(kind, i));
}

/* Looks a GPU up by name or alias; the message starts with `prefix`. */
static pp_status gpu_lookup(const char *name, const char *prefix, pp_gpu *out, pp_error *err)
{
    builtin_ready();
    if (builtin.st != PP_OK)
        return pp__fail(err, PP_ERR_INTERNAL, "built-in GPU catalog is invalid: %s", builtin.err.msg);
    const gpu_entry *e = builtin_find(name);
    if (e) {
        *out = e->gpu;
        return PP_OK;
    }
    char hint[320];
    suggest(PP_PRESET_GPU, name, hint, sizeof hint);
    pp__fail(err, PP_ERR_INPUT, "%sunknown GPU '%.64s'%s (see `parplan gpus`)", prefix, name, hint);
    if (err) jr_sanitize(err->msg); /* the name may come from a file */
    return PP_ERR_INPUT;
}

pp_status pp_gpu_load(const char *name, pp_gpu *out, pp_error *err)
{
    PP__C_NUMERIC;
    if (!name || !*name) return pp__fail(err, PP_ERR_INPUT, "--gpu: expected a GPU name (see `parplan gpus`)");
    return gpu_lookup(name, "", out, err);
}

/* ------------------------------------------------------------ clusters */

/* "gpu": a catalog name or alias, or an inline GPU object. */
static void read_cluster_gpu(jr_ctx *c, const cJSON *root, pp_gpu *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "gpu");
    if (c->st != PP_OK) return;
    if (!v || cJSON_IsNull(v)) {
        jr_fail(c, "$", "gpu", "missing required field");
    } else if (cJSON_IsString(v)) {
        char prefix[PP_ERR_LEN / 2];
        snprintf(prefix, sizeof prefix, "%.200s: $.gpu: ", c->where);
        c->st = gpu_lookup(v->valuestring, prefix, out, c->err);
    } else if (cJSON_IsObject(v)) {
        gpu_entry *e = malloc(sizeof *e);
        if (!e) {
            c->st = pp__fail(c->err, PP_ERR_NOMEM, "%s: out of memory", c->where);
            return;
        }
        read_gpu(c, v, "$.gpu", e);
        *out = e->gpu;
        free(e);
    } else {
        jr_fail(c, "$", "gpu", "expected a GPU name from the catalog or a GPU object");
    }
}

static void read_intra(jr_ctx *c, const cJSON *root, pp_link *l)
{
    const char *p = "$.intra";
    const cJSON *o = jr_obj(c, root, "$", "intra", 1);
    int k, gen = 0;
    double bidir = 0, lat;
    if (!o) return;
    jr_check_keys(c, o, p, intra_keys);
    if (jr_enum(c, o, p, "kind", 1, intra_names, 4, &k)) l->kind = intra_kinds[k];
    int has_bw = num_pos(c, o, p, "gbytes_per_s_bidir", 0, 0.1, 1e5, &bidir);
    int has_gen = jr_int(c, o, p, "gen", 0, 3, 6, &gen);
    if (has_gen && l->kind != PP_LINK_PCIE) jr_fail(c, p, "gen", "expected only with kind \"pcie\"");
    if (has_bw == has_gen) jr_fail(c, "$", "intra", "expected exactly one of gbytes_per_s_bidir or gen");
    l->bw = has_gen ? pcie_gb_s[gen] * 1e9 : bidir * 1e9 / 2; /* bytes/s per direction */
    if (num_pos(c, o, p, "latency_us", 1, 0.01, 1e4, &lat)) l->latency = lat * 1e-6;
}

static void read_inter(jr_ctx *c, const cJSON *root, pp_cluster *cl)
{
    const char *p = "$.inter";
    const cJSON *o = jr_obj(c, root, "$", "inter", 1);
    int k;
    double gbit, lat;
    if (!o) return;
    jr_check_keys(c, o, p, inter_keys);
    if (jr_enum(c, o, p, "kind", 1, inter_names, 3, &k)) cl->inter.kind = inter_kinds[k];
    jr_int(c, o, p, "nics", 1, 1, 1024, &cl->nics_per_node);
    if (num_pos(c, o, p, "nic_gbit_s", 1, 0.1, 1e5, &gbit)) cl->nic_bw = gbit * 1e9 / 8; /* line rate */
    if (num_pos(c, o, p, "latency_us", 1, 0.01, 1e4, &lat)) cl->inter.latency = lat * 1e-6;
}

static void read_pcie(jr_ctx *c, const cJSON *root, pp_link *l)
{
    const char *p = "$.pcie";
    const cJSON *o = jr_obj(c, root, "$", "pcie", 1);
    int gen = 0;
    double gbs = 0;
    if (!o) return;
    jr_check_keys(c, o, p, pcie_keys);
    int has_gen = jr_int(c, o, p, "gen", 0, 3, 6, &gen);
    int has_bw = num_pos(c, o, p, "gbytes_per_s", 0, 0.1, 1e4, &gbs);
    if (has_bw == has_gen) jr_fail(c, "$", "pcie", "expected exactly one of gen or gbytes_per_s");
    l->kind = PP_LINK_PCIE;
    l->bw = (has_gen ? pcie_gb_s[gen] : gbs) * 1e9; /* bytes/s per direction */
    l->latency = 0;                                 /* host-link latency is not modelled */
}

/* Node counts and the NVLink domain; the domain is whole nodes. */
static void read_shape(jr_ctx *c, const cJSON *root, pp_cluster *cl)
{
    jr_int(c, root, "$", "nodes", 1, 1, NODES_MAX, &cl->nodes);
    jr_int(c, root, "$", "gpus_per_node", 1, 1, GPN_MAX, &cl->gpus_per_node);
    if (c->st != PP_OK) return;
    if ((long long)cl->nodes * cl->gpus_per_node > GPUS_MAX)
        jr_fail(c, "$", "nodes", "expected nodes x gpus_per_node at most %d GPUs, got %lld", GPUS_MAX,
                (long long)cl->nodes * cl->gpus_per_node);
    cl->nvlink_domain = cl->gpus_per_node;
    if (jr_int(c, root, "$", "nvlink_domain", 0, 1, GPUS_MAX, &cl->nvlink_domain)
        && cl->nvlink_domain % cl->gpus_per_node != 0)
        jr_fail(c, "$", "nvlink_domain", "expected a multiple of gpus_per_node (%d), got %d",
                cl->gpus_per_node, cl->nvlink_domain);
}

/* NVMe drives per node: capacity, and the read/write bandwidths DeepSpeed's
 * swapper reaches (GB/s per node); a drive without bandwidths gets the
 * defaults of costmodel.h (one drive as DeepNVMe measured it). */
static void read_nvme(jr_ctx *c, const cJSON *root, pp_cluster *cl)
{
    double v;
    char src[PP_TEXT_LEN];
    if (jr_num(c, root, "$", "nvme_tb", 0, 0, 1e4, &v)) cl->nvme_bytes = v * 1e12;
    jr_str(c, root, "$", "nvme_source", 0, src, sizeof src);
    if (num_pos(c, root, "$", "nvme_read_gbytes_s", 0, 0.01, 1e4, &v)) cl->nvme_read_bw = v * 1e9;
    if (num_pos(c, root, "$", "nvme_write_gbytes_s", 0, 0.01, 1e4, &v)) cl->nvme_write_bw = v * 1e9;
    if (c->st != PP_OK) return;
    if (cl->nvme_bytes <= 0 && (cl->nvme_read_bw > 0 || cl->nvme_write_bw > 0)) {
        jr_fail(c, "$", cl->nvme_read_bw > 0 ? "nvme_read_gbytes_s" : "nvme_write_gbytes_s",
                "expected only with nvme_tb > 0 (a node without NVMe has no NVMe bandwidth)");
        return;
    }
    if (cl->nvme_bytes > 0 && cl->nvme_read_bw <= 0) cl->nvme_read_bw = PP_NVME_READ_BW_DEFAULT;
    if (cl->nvme_bytes > 0 && cl->nvme_write_bw <= 0) cl->nvme_write_bw = PP_NVME_WRITE_BW_DEFAULT;
}

static pp_status read_cluster(const cJSON *root, const char *where, pp_cluster *cl, pp_error *err)
{
    jr_ctx c = {where, err, PP_OK};
    double v;
    memset(cl, 0, sizeof *cl);
    jr_check_keys(&c, root, "$", cluster_keys);
    jr_str(&c, root, "$", "name", 1, cl->name, sizeof cl->name);
    if (c.st == PP_OK && !cl->name[0]) jr_fail(&c, "$", "name", "expected a non-empty name");
    jr_str(&c, root, "$", "description", 0, cl->description, sizeof cl->description);
    jr_str(&c, root, "$", "source", 0, cl->source, sizeof cl->source);
    read_cluster_gpu(&c, root, &cl->gpu);
    /* a cluster's own rental price (an AWS instance) replaces its GPU's */
    if (c.st == PP_OK && cJSON_GetObjectItemCaseSensitive(root, "price_usd_per_gpu_hour")) {
        cl->gpu.price_date[0] = cl->gpu.price_provider[0] = '\0';
        read_price(&c, root, "$", &cl->gpu);
    }
    read_shape(&c, root, cl);
    read_intra(&c, root, &cl->intra);
    read_inter(&c, root, cl);
    read_pcie(&c, root, &cl->pcie);
    if (num_pos(&c, root, "$", "host_mem_gib", 1, 1, 1e6, &v)) cl->host_mem_bytes = v * PP_GIB;
    read_nvme(&c, root, cl);
    if (jr_num(&c, root, "$", "host_mem_gbytes_s", 0, 1, 1e5, &v)) cl->host_mem_bw = v * 1e9;
    const cJSON *nc = jr_obj(&c, root, "$", "nccl_efficiency", 0);
    if (nc) {
        char src[PP_TEXT_LEN];
        jr_check_keys(&c, nc, "$.nccl_efficiency", nccl_keys);
        jr_num(&c, nc, "$.nccl_efficiency", "intra", 0, 0.01, 1.5, &cl->nccl_eff_intra);
        jr_num(&c, nc, "$.nccl_efficiency", "inter", 0, 0.01, 1.5, &cl->nccl_eff_inter);
        double ov = -1;
        if (jr_num(&c, nc, "$.nccl_efficiency", "overlap_slowdown", 0, 0, 0.9, &ov))
            cl->nccl_overlap = ov > 0 ? ov : -1; /* 0 given: no slowdown */
        jr_str(&c, nc, "$.nccl_efficiency", "source", 0, src, sizeof src);
    }
    if (c.st != PP_OK) return c.st;
    /* a node's NICs are shared by its GPUs: bytes/s per GPU per direction */
    cl->inter.bw = cl->nics_per_node * cl->nic_bw / cl->gpus_per_node;
    return PP_OK;
}

pp_status pp_cluster_parse(const char *text, size_t len, const char *where, pp_cluster *out, pp_error *err)
{
    PP__C_NUMERIC;
    pp_status pst;
    cJSON *root = jr_parse_ex(text, len, where, NULL, err, &pst);
    if (!root) return pst;
    pp_status st = read_cluster(root, where, out, err);
    cJSON_Delete(root);
    return st;
}

pp_status pp_cluster_load(const char *arg, pp_cluster *out, pp_error *err)
{
    PP__C_NUMERIC;
    if (!arg || !*arg)
        return pp__fail(err, PP_ERR_INPUT, "--cluster: expected a preset name or a JSON file (see `parplan clusters`)");
    if (!pp__looks_like_path(arg)) {
        const pp_embedded_file *f = pp__preset_find(PP_PRESET_CLUSTER, arg);
        if (!f && !jr_exists(arg)) { /* else read it as a path: "is a directory", "is a FIFO" */
            char hint[320];
            suggest(PP_PRESET_CLUSTER, arg, hint, sizeof hint);
            pp__fail(err, PP_ERR_INPUT, "unknown cluster '%.64s'%s (see `parplan clusters`)", arg, hint);
            if (err) jr_sanitize(err->msg);
            return PP_ERR_INPUT;
        }
        if (f) return pp_cluster_parse(f->data, f->len, f->path, out, err);
    }
    char *text;
    size_t len;
    pp_status st = jr_read_file(arg, &text, &len, err);
    if (st != PP_OK) return st;
    st = pp_cluster_parse(text, len, arg, out, err);
    free(text);
    return st;
}

/* ------------------------------------------------------------ JSON output */

/* Adders that clear *ok when cJSON runs out of memory. */
static void put_num(cJSON *o, const char *k, double v, int *ok)
{
    if (!cJSON_AddNumberToObject(o, k, v)) *ok = 0;
}

static void put_str(cJSON *o, const char *k, const char *v, int *ok)
{
    if (!cJSON_AddStringToObject(o, k, v)) *ok = 0;
}

static void put_gpu(cJSON *o, const pp_gpu *g, int *ok)
{
    put_str(o, "name", g->name, ok);
    builtin_ready();
    const gpu_entry *e = builtin.st == PP_OK ? builtin_find(g->name) : NULL;
    if (e && e->naliases) {
        cJSON *a = cJSON_AddArrayToObject(o, "aliases");
        for (int i = 0; i < e->naliases; i++)
            if (!a || !cJSON_AddItemToArray(a, cJSON_CreateString(e->aliases[i]))) *ok = 0;
    }
    put_str(o, "full_name", g->full_name, ok);
    put_str(o, "vendor", g->vendor, ok);
    put_num(o, "mem_bytes", g->mem_bytes, ok);
    put_num(o, "hbm_bytes_per_s", g->hbm_bw, ok);
    cJSON *f = cJSON_AddObjectToObject(o, "peak_flops_per_s");
    for (int i = 0; i < PP_PREC_COUNT; i++) put_num(f, prec_names[i], g->peak_flops[i], ok);
    put_num(o, "tdp_w", g->tdp_w, ok);
    put_num(o, "price_usd_per_gpu_hour", g->price_usd_per_hour, ok);
    put_str(o, "price_date", g->price_date, ok);
    if (g->price_provider[0]) put_str(o, "price_provider", g->price_provider, ok);
    put_str(o, "source", g->source, ok);
}

static void put_link(cJSON *parent, const char *key, const pp_link *l, int *ok)
{
    cJSON *o = cJSON_AddObjectToObject(parent, key);
    put_str(o, "kind", pp_link_kind_name(l->kind), ok);
    put_num(o, "bw_bytes_per_s", l->bw, ok);
    put_num(o, "latency_s", l->latency, ok);
}

static char *print_or_null(cJSON *o, int ok)
{
    char *s = ok ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    return s;
}

char *pp_gpu_to_json(const pp_gpu *g)
{
    PP__C_NUMERIC;
    int ok = 1;
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    put_num(o, "schema_version", PP_SCHEMA_VERSION, &ok);
    put_gpu(o, g, &ok);
    return print_or_null(o, ok);
}

char *pp_cluster_to_json(const pp_cluster *c)
{
    PP__C_NUMERIC;
    int ok = 1;
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    put_num(o, "schema_version", PP_SCHEMA_VERSION, &ok);
    put_str(o, "name", c->name, &ok);
    put_str(o, "description", c->description, &ok);
    put_str(o, "source", c->source, &ok);
    put_num(o, "nodes", c->nodes, &ok);
    put_num(o, "gpus_per_node", c->gpus_per_node, &ok);
    put_num(o, "gpus", (double)c->nodes * c->gpus_per_node, &ok);
    put_num(o, "nvlink_domain", c->nvlink_domain, &ok);
    put_gpu(cJSON_AddObjectToObject(o, "gpu"), &c->gpu, &ok);
    put_link(o, "intra", &c->intra, &ok);
    put_link(o, "inter", &c->inter, &ok);
    cJSON *inter = cJSON_GetObjectItemCaseSensitive(o, "inter");
    put_num(inter, "nics_per_node", c->nics_per_node, &ok);
    put_num(inter, "nic_bw_bytes_per_s", c->nic_bw, &ok);
    put_link(o, "pcie", &c->pcie, &ok);
    put_num(o, "host_mem_bytes", c->host_mem_bytes, &ok);
    put_num(o, "nvme_bytes", c->nvme_bytes, &ok);
    put_num(o, "nvme_read_bytes_per_s", c->nvme_read_bw, &ok);
    put_num(o, "nvme_write_bytes_per_s", c->nvme_write_bw, &ok);
    return print_or_null(o, ok);
}
