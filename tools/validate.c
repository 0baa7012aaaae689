/*
 * validate.c — regenerates docs/validation.md: every published run in
 * tests/reference/published_runs.csv with a throughput or memory figure,
 * predicted by parplan and compared, with the error. Nothing here is fitted
 * per row; unknown settings (micro-batch, recompute) follow documented rules.
 *
 *   build/validate tests/reference/published_runs.csv > docs/validation.md
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parplan.h"

#define MAXF 24
#define MAXROWS 512

#define FIELD 4096 /* notes quote the source's rows and headers */

typedef struct row {
    char f[MAXF][FIELD];
    int n;
} row;

enum { C_NAME, C_MODEL, C_GPU, C_NGPU, C_TP, C_PP, C_DP, C_CP, C_EP, C_ZERO, C_RECOMP, C_SEQ, C_MB, C_GB,
       C_PREC, C_TFLOPS, C_MFU, C_MEM, C_SOURCE, C_NOTES };

/* RFC 4180-ish: commas, double quotes, "" escapes; one record per line. */
static int parse_csv_line(const char *s, row *r)
{
    r->n = 0;
    while (r->n < MAXF) {
        char *out = r->f[r->n];
        size_t k = 0;
        if (*s == '"') {
            s++;
            while (*s && !(*s == '"' && s[1] != '"')) {
                if (*s == '"') s++;
                if (k < FIELD - 1) out[k++] = *s;
                s++;
            }
            if (*s == '"') s++;
        } else {
            while (*s && *s != ',' && *s != '\n' && *s != '\r') {
                if (k < FIELD - 1) out[k++] = *s;
                s++;
            }
        }
        out[k] = '\0';
        r->n++;
        if (*s != ',') break;
        s++;
    }
    return r->n;
}

static double num(const char *s) { return *s ? atof(s) : 0; }

typedef struct scenario {
    pp_model model;
    pp_cluster cluster;
    pp_strategy s;
    int mb_known;
    const char *basis; /* which reported figure: "hw" tflops, "model" tflops, "mfu" */
    double step_s;     /* the source's seconds per iteration, when printed */
    char note[PP_ERR_LEN + 16];
} scenario;

/* Published model label -> preset name. */
static const char *preset_for(const char *label)
{
    static const struct { const char *prefix, *preset; } map[] = {
        {"megatron-gpt-1.7B", "megatron-1.7b"}, {"megatron-gpt-7.5B", "megatron-7.5b"},
        {"megatron-gpt-39.1B", "megatron-39.1b"}, {"megatron-gpt-145.6B", "megatron-145.6b"},
        {"megatron-gpt-529.6B", "megatron-529.6b"}, {"korthikanti-22B", "korthikanti-22b"},
        {"megatron-gpt-174.6B", "gpt3-175b"}, /* Narayanan's Table 2: GPT-3's 96 x 12288 shape */
        {"korthikanti-530B", "korthikanti-530b"}, {"korthikanti-175B", "korthikanti-175b"},
        {"mcore-gpt-1.7B", "mcore-gpt-1.7b"}, {"mcore-gpt-16B", "mcore-gpt-16b"}, {"mcore-gpt-70B", "mcore-gpt-70b"},
        {"mcore-gpt-177B", "mcore-gpt-177b"}, {"mcore-gpt-462B", "mcore-gpt-462b"}, {"Llama-2-70B", "llama2-70b"},
        {"Llama-3-70B", "llama3-70b"}, {"Qwen3_235B_a22B", "qwen3-235b-a22b"}, {"DeepSeek-V3", "deepseek-v3"},
        {"MPT-125m", "mpt-125m"}, {"MPT-350m", "mpt-350m"}, {"MPT-760m", "mpt-760m"}, {"MPT-1b", "mpt-1b"},
        {"MPT-3b", "mpt-3b"}, {"MPT-7b", "mpt-7b"}, {"MPT-13b", "mpt-13b"}, {"MPT-30b", "mpt-30b"},
        {"MPT-70b", "mpt-70b"}, {"MT-NLG-530B", "korthikanti-530b"}, {"Llama-3.1-405B", "llama3.1-405b"},
        {"korthikanti-1T", "korthikanti-1t"}, {"LLAMA3_8B", "llama3-8b"}, {"LLAMA3_70B", "llama3-70b"},
        {"Llama-3-8B", "llama3-8b"}, {"Llama-3.1-8B", "llama3.1-8b"}, {"Llama-3.1-70B", "llama3.1-70b"}, {"LLAMA3.1_405B", "llama3.1-405b"},
        {"DeepSeekV3", "deepseek-v3"}, {"DeepSeekV3 (w/o MTP)", "deepseek-v3"}, {"Llama-2-70B (LoRA r16)", "llama2-70b"},
        /* NeMo's GPT-3 175B (conf/training/gpt3/175b.yaml: 96 x 12288, 96 heads,
         * learned positions, GeLU, biases): GPT-3's shape */
        {"GPT-3-175B (NeMo Megatron)", "gpt3-175b"}, {"GPT3-175B", "gpt3-175b"},
        {"Nemotron-340B", "models/nemotron-4-340b.json"},
        /* shapes transcribed for validation only: tests/data/models/ */
        {"Qwen3_30B_a3B", "models/qwen3-30b-a3b.json"}, {"Nemotron-4-340B", "models/nemotron-4-340b.json"}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strcmp(label, map[i].prefix) == 0) return map[i].preset;
    return NULL;
}

/* BLOOM prequel experiments: "bigscience-exp-181B (h14336,L72,a64,v~250k)".
 * Rows up to 02-23 that do not print heads ran with 64: "all NHEADS=64
 * (above too)" (chronicles-prequel.md, section "Final round comparison"). */
static int bloom_model(const char *label, const char *notes, pp_model *m)
{
    int h, l, a, day;
    const char *p = strchr(label, '('), *d = strstr(notes, "date 02-");
    if (!p) return 0;
    if (sscanf(p, "(h%d,L%d,a%d", &h, &l, &a) != 3) {
        if (sscanf(p, "(h%d,L%d,a?", &h, &l) != 2 || !d || sscanf(d, "date 02-%d", &day) != 1 || day < 20 || day > 23)
            return 0;
        a = 64;
    }
    pp_error err;
    if (pp_model_load("bloom-176b", m, &err) != PP_OK) return 0;
    m->hidden = h;
    m->layers = l;
    m->heads = a;
    m->kv_heads = a;
    m->ffn = 4 * h;
    snprintf(m->name, sizeof m->name, "bloom-exp-h%d-l%d-a%d", h, l, a);
    for (int i = 0; i < l; i++) m->block_kind[i] = PP_BLOCK_DENSE;
    return 1;
}

static const char *cluster_for(const char *gpu)
{
    static const struct { const char *label, *cluster; } map[] = {
        {"A100-80GB", "dgx-a100-80g"}, {"A100-40GB", "dgx-a100-40g"}, {"H100-80GB", "dgx-h100"},
        {"H200-141GB", "dgx-h200"},    {"B200", "dgx-b200"},         {"GB200", "gb200-nvl72"},
        {"B300", "dgx-b300"},          {"GB300", "gb300-nvl72"},
        {"MI300X", "mi300x-8x"},       {"MI325X", "mi300x-8x"},     {"H100-96GB-HBM2e-500W", "dgx-h100"}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(gpu, map[i].label)) return map[i].cluster;
    return NULL;
}

/* GB200 and GB300 as Megatron-Bridge launches them (scripts/performance/utils/
 * executors.py at 4ab94dfad3): Slurm nodes are 4-GPU trays ("gb200", "gb300":
 * 4 GPUs per node, argument_parser.py), and sbatch --segment puts the job's trays, or when
 * there are more than 18 the largest divisor of their count up to 18, in one
 * NVLink domain. Per-GPU NIC share and host memory stay the rack's. */
static int gb200_trays(pp_cluster *c, int gpus, pp_error *err)
{
    if (gpus <= 4) return pp_cluster_resize(c, 0, gpus, err) == PP_OK;
    int trays = gpus / 4, seg = trays > 18 ? 18 : trays;
    if (gpus % 4) return 0;
    while (trays % seg) seg--;
    c->host_mem_bytes *= 4.0 / c->gpus_per_node;
    c->nics_per_node = 4;
    c->gpus_per_node = 4;
    c->nodes = trays;
    c->nvlink_domain = 4 * seg;
    return 1;
}

/* The row's GPUs: the cluster preset at the run's size; the MI325X board is
 * the MI300X platform (same 8-OAM Infinity Fabric mesh, hardware.csv) with
 * the MI325X in it. */
static int load_cluster(const char *label, const char *cl, int gpus, pp_cluster *c, pp_error *err)
{
    if (!cl || pp_cluster_load(cl, c, err) != PP_OK) return 0;
    if (!strcmp(label, "MI325X") && pp_gpu_load("mi325x", &c->gpu, err) != PP_OK) return 0;
    if (!strcmp(label, "GB200") || !strcmp(label, "GB300")) return gb200_trays(c, gpus, err);
    /* Meta's Grand Teton H100 (torchtitan's benchmarks/llama3_h100_202412_
     * torchtitan.md): 96 GB of HBM2e at 2.4 TB/s; rows from it carry memory
     * only (its 500 W limit sets clocks parplan has no rate for) */
    if (!strcmp(label, "H100-96GB-HBM2e-500W")) c->gpu.mem_bytes = 96.0 * 1073741824.0, c->gpu.hbm_bw = 2.4e12;
    return pp_cluster_resize(c, 0, gpus, err) == PP_OK;
}

/* FSDP's sharding strategies shard weights too: FSDP2 is the fsdp
 * framework's ZeRO-3, Megatron-FSDP (FSDP > 0 in Megatron-Bridge's tables)
 * Megatron's (--use-megatron-fsdp). */
static void set_zero(const char *z, pp_strategy *s)
{
    const char *mf = strstr(z, "FSDP=");
    if (strstr(z, "FSDP2")) {
        s->framework = PP_FW_FSDP;
        s->zero = 3;
    } else if (mf && atoi(mf + 5) > 0) {
        s->framework = PP_FW_MEGATRON;
        s->zero = 3;
    } else if (strstr(z, "FULL_SHARD")) s->zero = 3;
    else if (strstr(z, "SHARD_GRAD_OP")) s->zero = 2;
    else if (strstr(z, "DDP")) s->zero = 1; /* Megatron distributed optimizer */
    else s->zero = atoi(z);
}

static void set_recompute(const char *r, pp_strategy *s)
{
    const char *nl = strstr(r, " layers");
    if (!strncmp(r, "full", 4)) s->recompute = PP_RECOMPUTE_FULL;
    else if (!strncmp(r, "selective", 9)) s->recompute = PP_RECOMPUTE_SELECTIVE;
    else s->recompute = PP_RECOMPUTE_NONE;
    /* "full, block, 21 layers": the first 21 blocks of a stage */
    if (s->recompute == PP_RECOMPUTE_FULL && nl && nl > r && nl[-1] >= '0' && nl[-1] <= '9') {
        while (nl > r && nl[-1] >= '0' && nl[-1] <= '9') nl--;
        s->recompute_layers = atoi(nl);
    }
    if (strstr(r, "sequence-parallel") && !strstr(r, "no sequence")) s->sp = 1;
}

/* Which figure the source reports, and on which FLOP basis. */
static const char *basis_for(const char *name)
{
    if (!strncmp(name, "narayanan", 9) || !strncmp(name, "bloom", 5)) return "hw";
    if (!strncmp(name, "korthikanti", 11) || !strncmp(name, "llama3", 6)) return "mfu";
    return "model";
}

/* Calibration hook (tools/fit.py): PARPLAN_FIT_<gpu>=matmul,attention
 * overrides the catalog's efficiencies, e.g. PARPLAN_FIT_h100_sxm=0.6,0.35. */
/* --unfitted: every GPU at the cost model's default efficiencies, as a GPU
 * with no published run and no measured kernel rates is priced: the
 * residuals that give such a GPU its error bar (tools/uncertainty.c). */
static int unfitted;

static void apply_fit_overrides(pp_gpu *g)
{
    if (unfitted) g->matmul_eff = 0.58, g->attn_eff = 0.25; /* compute.c MATMUL_EFF_DEFAULT, ATTN_EFF_DEFAULT */
    char key[96];
    snprintf(key, sizeof key, "PARPLAN_FIT_%s", g->name);
    for (char *p = key; *p; p++)
        if (*p == '-') *p = '_';
    const char *v = getenv(key);
    double mm, at;
    if (v && sscanf(v, "%lf,%lf", &mm, &at) == 2) {
        g->matmul_eff = mm;
        g->attn_eff = at;
    }
}

/* BLOOM prequel rows as Megatron-DeepSpeed ran them (chronicles-prequel.md):
 * PipelineModule's partition_method type:transformer until the "Rebalancing
 * layers" section enabled type:transformer|embedding; the CUDA context the
 * same document measured with nvidia-smi on an A100 (1573 MiB); dropout 0.1,
 * Megatron's default for --hidden-dropout and --attention-dropout, which the
 * tr11 scripts do not pass (the released config.json says 0.0 for inference). */
static int bloom_setup(const row *r, scenario *sc)
{
    pp_error err;
    int embed = strstr(r->f[C_NOTES], "Rebalancing layers") || strstr(r->f[C_NOTES], "type:transformer|embed");
    sc->s.buf.ds_split_2022 = 1; /* BigScience's DeepSpeed of 2022 */
    if (pp_split_deepspeed(&sc->model, &sc->s, embed, sc->s.stage_layers, &err) != PP_OK) {
        snprintf(sc->note, sizeof sc->note, "%s", err.msg);
        return 0;
    }
    sc->s.buf.cuda_context = 1573.0 * 1048576.0;
    sc->model.dropout = 0.1;
    return 1;
}

/* MT-NLG 530B (Smith et al. 2022): Megatron-DeepSpeed of 2021, as for
 * Narayanan's rows: full recompute, materialised scores, gradients reduced
 * after the pipeline flush. */
static void mtnlg_setup(scenario *sc)
{
    sc->s.recompute = PP_RECOMPUTE_FULL;
    sc->s.attention = PP_ATTN_MATERIALISED;
}

/* Llama 3 405B (Dubey et al. 2024, Sec. 3.3.2): FSDP "sharding optimizer
 * states and gradients, but not resharding after forward" (fsdp, zero 2)
 * with TP, PP and CP, the interleaved schedule with the first and last
 * stages one block short (126 = 16 x 8 - 2), one block per virtual stage
 * (the rule used for every interleaved row whose v is not printed),
 * all-gather context parallelism, FP32 gradients, and sequence parallelism
 * with TP (our assumption; the paper does not say). */
static int llama3_setup(scenario *sc)
{
    pp_strategy *s = &sc->s;
    s->framework = PP_FW_FSDP;
    s->zero = 2;
    int p = s->pp, per = (sc->model.layers + 2) / p;
    if (p < 2 || per * p != sc->model.layers + 2) {
        snprintf(sc->note, sizeof sc->note, "blocks + 2 not divisible by pp");
        return 0;
    }
    for (int i = 0; i < p; i++) s->stage_layers[i] = i == 0 || i == p - 1 ? per - 1 : per;
    s->schedule = PP_SCHED_INTERLEAVED;
    s->virtual_stages = per;
    s->cp_comm = PP_CP_ALLGATHER;
    s->sp = s->tp > 1;
    return 1;
}

static int is(const char *name, const char *prefix) { return strncmp(name, prefix, strlen(prefix)) == 0; }

/* Compute capability 10.x (torchtitan has_cuda_capability(10, 0)): B200, GB200, B300, GB300. */
static int sm100(const char *gpu)
{
    static const char *const n[] = {"b200", "b300"};
    for (size_t i = 0; i < sizeof n / sizeof *n; i++)
        if (strstr(gpu, n[i])) return 1;
    return 0;
}

/* Launched through torchtitan's run_train.sh: said so, or by torchao's
 * float8 benchmark scripts, which call it (benchmarks/float8/training/
 * llama3.sh, float8_training_benchmark.sh before April 2025). */
static int run_train_sh(const row *r)
{
    const char *n = r->f[C_NOTES];
    return strstr(n, "run_train.sh") || strstr(n, "float8/training/llama3.sh") || strstr(n, "float8_training_benchmark.sh");
}

/* The earliest ISO date (YYYY-MM-DD) in a row's source is when the run was
 * first published; 1 when that is before date, 0 when later or undated. */
static int published_before(const row *r, const char *date)
{
    const char *best = NULL;
    for (const char *p = r->f[C_SOURCE]; *p; p++) {
        if (!(isdigit((unsigned char)p[0]) && p[1] && p[2] && p[3] && p[4] == '-' && strlen(p) >= 10 && p[7] == '-'))
            continue;
        int ok = 1;
        for (int i = 0; i < 10; i++) ok &= i == 4 || i == 7 ? 1 : isdigit((unsigned char)p[i]) != 0;
        if (ok && (!best || strncmp(p, best, 10) < 0)) best = p;
    }
    return best && strncmp(best, date, 10) < 0;
}

/* Whether the row's source names a NeMo container ("'26.08 NeMo
 * Container'", "'26.04.01 NeMo Container'") of release yy.mm or later. */
static int nemo_container_since(const row *r, int yy, int mm)
{
    const char *src = r->f[C_SOURCE], *p = strstr(src, " NeMo Container");
    if (!p) return 0;
    const char *q = p;
    while (q > src && (isdigit((unsigned char)q[-1]) || q[-1] == '.')) q--; /* the release: yy.mm[.nn] */
    int y = 0, m = 0;
    if (sscanf(q, "%d.%d", &y, &m) != 2) return 0;
    return y > yy || (y == yy && m >= mm);
}

/* MLPerf Training v5.1's llama31_8b/llama31_405b submissions (NeMo on
 * Megatron-Core; their configs reduce gradients in bf16), not its LoRA ones */
static int mlperf_pretrain(const char *nm) { return is(nm, "mlperf") && !strstr(nm, "lora"); }

/* The MLPerf v5.1 NeMo runs' DDP bucket (model.optim.bucket_size, elements;
 * training_results_v5.1 441d65f4): BUCKET_SIZE=768000000 in the Llama 3.1 8B
 * config_common_8b.sh of NVIDIA, Dell, Oracle, Nebius and Lenovo; else
 * custom.yaml's default: 134217728 (University of Florida, HPE), 64 (Cisco's
 * 8B), 200 (Nebius's 405B): every tensor a bucket of its own. 0: Megatron's. */
static double mlperf_bucket(const char *nm)
{
    if (!mlperf_pretrain(nm)) return 0;
    if (strstr(nm, "_cisco_")) return 64;
    if (strstr(nm, "_nebius_") && strstr(nm, "405b")) return 200;
    if (strstr(nm, "_uf_") || strstr(nm, "_hpe_") || strstr(nm, "405b")) return 134217728;
    return 768e6;
}

/* Whether the run's launch set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,
 * release by release of Megatron-Bridge's performance scripts:
 *   25.09, 25.11 (v0.2.0 scripts/performance/perf_plugins.py): Llama 3.1 405B
 *     pretraining on GB200 in FP8-CS and MXFP8 only;
 *   26.02 (v0.3.0): and DeepSeek-V3 on H100;
 *   26.04 (v0.4.2): 405B on GB200/GB300 in FP8-CS/MXFP8 (NVFP4 on GB200),
 *     DeepSeek-V3 on H100/GB200/B200, Llama 3 70B MXFP8 pretraining on GB300;
 *   26.06 (v0.5.0 utils/executors.py PERF_ENV_VARS): every run;
 *   26.08 (v0.6.0, env_vars per recipe in src/megatron/bridge/perf_recipes):
 *     all but the Llama 3 70B Megatron-FSDP recipes in BF16/FP8-CS, the 405B
 *     BF16 recipes on GB300/B300 and gpt-oss.
 * NeMo 2.0's scripts/performance (executors.py), which DGX Cloud's recipes
 * patch: every GPU but B200 ("causes an unexpected error"). */
static int expandable_run(const char *nm)
{
    int l405 = strstr(nm, "405B") != NULL, ds = strstr(nm, "DeepSeek") != NULL;
    int fp8 = strstr(nm, "_FP8") || strstr(nm, "MXFP8") || strstr(nm, "FP8-MX") || strstr(nm, "_nop");
    int gb200 = strstr(nm, "_gb200_") != NULL, gb300 = strstr(nm, "_gb300_") != NULL;
    if (is(nm, "mbridge2509") || is(nm, "mbridge2511")) return l405 && gb200 && fp8;
    if (is(nm, "mbridge2602")) return (l405 && gb200 && fp8) || (ds && strstr(nm, "_h100_"));
    if (is(nm, "mbridge2604"))
        return (l405 && (gb200 || gb300) && fp8) || (l405 && gb200 && strstr(nm, "NVFP4")) ||
               (ds && !gb300) || (strstr(nm, "LLAMA3_70B") && gb300 && strstr(nm, "MXFP8"));
    if (is(nm, "mbridge2606")) return 1;
    if (is(nm, "mbridge")) {
        int low = strstr(nm, "MXFP8") || strstr(nm, "FP8-MX") || strstr(nm, "NVFP4");
        if (strstr(nm, "LLAMA3_70B") && !low) return 0;
        if (l405 && strstr(nm, "BF16") && strstr(nm, "b300")) return 0;
        return !strstr(nm, "gpt_oss") && !strstr(nm, "GPT_OSS");
    }
    if ((is(nm, "nemo") && !is(nm, "nemo2407")) || is(nm, "dgxc")) return !strstr(nm, "_b200_");
    return 0;
}

/* Model and cluster of a row; 0 with a note when either is not published.
 * A preset named "models/..." is a file next to the CSV (dir). */
/* DGX Cloud's proxy runs ("Llama-3.1-405B-proxy-8L"): the model's blocks
 * cut to the first N, as its recipes set num_layers; the label before
 * "-proxy-" names the model. Returns N, 0 for a full model. */
static int proxy_layers(const char *label, char *base, size_t cap)
{
    const char *p = strstr(label, "-proxy-");
    snprintf(base, cap, "%.*s", p ? (int)(p - label) : (int)strlen(label), label);
    int n = p ? atoi(p + 7) : 0;
    return n > 0 && p[7 + strspn(p + 7, "0123456789")] == 'L' ? n : 0;
}

static int load_hardware(const row *r, const char *dir, scenario *sc)
{
    pp_error err = {""};
    char label[256];
    int cut = proxy_layers(r->f[C_MODEL], label, sizeof label);
    const char *preset = preset_for(label);
    char path[1100];
    if (preset && !strncmp(preset, "models/", 7)) {
        snprintf(path, sizeof path, "%s/%s", dir, preset);
        preset = path;
    }
    if (preset ? pp_model_load(preset, &sc->model, &err) != PP_OK : !bloom_model(r->f[C_MODEL], r->f[C_NOTES], &sc->model)) {
        snprintf(sc->note, sizeof sc->note, "shape not published");
        return 0;
    }
    if (cut > 0 && cut < sc->model.layers) sc->model.layers = cut;
    const char *cl = is(r->f[C_NAME], "bloom") ? "jean-zay-a100" : cluster_for(r->f[C_GPU]);
    if (!load_cluster(r->f[C_GPU], cl, atoi(r->f[C_NGPU]), &sc->cluster, &err)) {
        snprintf(sc->note, sizeof sc->note, "cluster: %s", cl ? err.msg : "GPU not in the catalog");
        return 0;
    }
    apply_fit_overrides(&sc->cluster.gpu);
    return 1;
}

/* The columns: degrees, ZeRO, recompute, batch, sequence, precision. */
static void read_columns(const row *r, scenario *sc)
{
    pp_strategy *s = &sc->s;
    pp_strategy_default(s);
    s->tp = r->f[C_TP][0] ? atoi(r->f[C_TP]) : 1;
    s->pp = r->f[C_PP][0] ? atoi(r->f[C_PP]) : 1;
    s->cp = r->f[C_CP][0] ? atoi(r->f[C_CP]) : 1;
    s->ep = r->f[C_EP][0] ? atoi(r->f[C_EP]) : 1;
    s->dp = atoi(r->f[C_NGPU]) / (s->tp * s->pp * s->cp);
    set_zero(r->f[C_ZERO], s);
    set_recompute(r->f[C_RECOMP], s);
    /* Megatron-Core's activation offload, from the recipe the notes cite */
    const char *co = strstr(r->f[C_NOTES], "cpu_offloading_num_layers=");
    if (co) s->act_offload_layers = atoi(co + strlen("cpu_offloading_num_layers="));
    s->seq = atoi(r->f[C_SEQ]);
    s->global_batch = atoi(r->f[C_GB]);
    s->micro_batch = r->f[C_MB][0] ? atoi(r->f[C_MB]) : 1;
    sc->mb_known = r->f[C_MB][0] != '\0';
    const char *prec = r->f[C_PREC];
    s->precision = strstr(prec, "FP8") || strstr(prec, "fp8") || strstr(prec, "float8") ? PP_PREC_FP8 : PP_PREC_BF16;
    if (strstr(prec, "fp32 grad accumulation")) s->grad_accum_dtype = PP_GRAD_16_FP32;
    if (is(r->f[C_NAME], "bloom") && !strstr(prec, "bf16")) s->precision = PP_PREC_FP16;
}

/* llm-foundry's benchmark runs keep submit_benchmarks.py's default
 * attn_impl 'triton' (b2a43a1): triton_flash_attn_fn over its copy of
 * flash-attn's Triton FlashAttention (llmfoundry/models/layers/
 * flash_attn_triton.py, for the pre-MLIR Triton, "only tested on A100"),
 * whose docstring finds it "slightly slower than CUDA forward + backward"
 * FlashAttention, which FlashAttention-2 beats 1.7-3.0x (Dao 2023, Sec. 4.1).
 * Its slowdown against the FlashAttention-2 class parplan prices is fitted
 * on MosaicML's Triton H100 runs with H100's constants as the catalog has
 * them (tools/fit.py, "llm-foundry's Triton attention"); PARPLAN_FIT_TRITON
 * overrides it for that fit. */
#define MPT_TRITON_SLOWDOWN 1.7

static double triton_slowdown(void)
{
    const char *v = getenv("PARPLAN_FIT_TRITON");
    return v && atof(v) > 0 ? atof(v) : MPT_TRITON_SLOWDOWN;
}

/* 1 for MosaicML rows that ran the Triton kernel: all but the "Large Scale"
 * table's 1b, 3b, 7b and 70b, which its sweep.py (5e85bd6) runs with
 * --attn_impl flash (flash-attn, the FlashAttention-2 class). */
static int mpt_triton(const row *r)
{
    if (!strstr(r->f[C_SOURCE], "Large Scale")) return 1;
    return strstr(r->f[C_MODEL], "13b") || strstr(r->f[C_MODEL], "30b");
}

/* The framework each source ran, and what it did that the framework's
 * defaults do not say. The framework prices its own behaviours (gradient
 * dtype, buffers, pipeline outputs, overlap): docs/frameworks.md. */
static void framework_rules(const row *r, scenario *sc)
{
    pp_strategy *s = &sc->s;
    const char *nm = r->f[C_NAME];
    /* dgxc: NeMo recipes; MLPerf's pre-training submissions: NeMo on Megatron-Core */
    int mcore = is(nm, "mcore") || is(nm, "nemo") || is(nm, "mbridge") || is(nm, "dgxc") || mlperf_pretrain(nm);
    int fsdp = s->framework == PP_FW_FSDP; /* FSDP2 (set_zero) */
    if ((mcore || is(nm, "narayanan") || is(nm, "korthikanti")) && !fsdp) s->framework = PP_FW_MEGATRON;
    if (is(nm, "bloom") || is(nm, "mtnlg")) s->framework = PP_FW_MEGATRON_DEEPSPEED;
    /* Narayanan 2021's ZeRO-3 baseline: DeepSpeed's ZeRO-3 under its Megatron
     * model ("We integrated ZeRO into our codebase using the DeepSpeed Python
     * library", Sec. 5.2), with activation recomputation as in every run of
     * the paper (its Eq. 3 counts the recomputed forward; without it 96
     * blocks of 4 x 2048 x 12288 activations need ~330 GB a GPU) */
    if (is(nm, "narayanan") && s->zero >= 2) s->framework = PP_FW_MEGATRON_DEEPSPEED;
    /* ... in its 2021 form (arXiv v1 April 2021): one all-gather per parameter
     * tensor after a host sync, until DeepSpeed PR #1188 (June 2021) */
    if (is(nm, "narayanan") && s->zero == 3) s->buf.zero3_per_tensor = 1;
    if (is(nm, "narayanan") && !r->f[C_RECOMP][0]) s->recompute = PP_RECOMPUTE_FULL;
    if (mcore && !r->f[C_ZERO][0]) s->zero = 1; /* their recipes set use_distributed_optimizer */
    /* NeMo's scripts/performance (helpers.py set_precision_configs) and
     * Megatron-Bridge's performance recipes set grad_reduce_in_fp32 = False:
     * a bf16 main_grad (--grad-reduce-in-bf16), whatever the compute dtype.
     * NeMo 24.07 predates those scripts (NeMo 1.0 launcher): Megatron's default */
    if ((is(nm, "nemo") && !is(nm, "nemo2407")) || is(nm, "mbridge") || is(nm, "dgxc") || mlperf_pretrain(nm))
        s->grad_accum_dtype = PP_GRAD_16;
    if (mlperf_bucket(nm) > 0) s->buf.reduce_bucket = mlperf_bucket(nm);
    /* ... but NeMo 24.07's launcher ran Nemotron-4 340B with Apex's
     * DistributedFusedAdam, dtype bf16 and grad_sync_dtype bf16
     * (NeMo-Framework-Launcher conf/training/nemotron/nemotron_340b.yaml at
     * 7c842fcd, June 2024, until 3dd35614 moved it to Megatron's optimizer):
     * a bf16 parameter copy and bf16 moments (6 bytes a weight, sharded),
     * bf16 gradients; in bytes, Megatron's precision-aware optimizer with
     * bf16 moments and --grad-reduce-in-bf16 (in its fp8 runs that keeps
     * an fp32 master: 8 bytes, 2 over Apex's 6, about 5 GB a GPU here) */
    if ((is(nm, "nemo2407") && strstr(r->f[C_MODEL], "Nemotron-340B")) ||
        strstr(r->f[C_NOTES], "distributed_fused_adam with dtype bf16")) { /* the dgxc rows' yaml says so too */
        s->opt_states = PP_OPT_STATES_BF16;
        s->grad_accum_dtype = PP_GRAD_16;
    }
    /* FP8 primary weights (--fp8-param-gather) are parplan's default where
     * Megatron takes them, as Megatron-Bridge's FP8-CS and MXFP8 recipes,
     * NeMo's DGX Cloud recipes and NVIDIA's MLPerf v5.1 configs ran them
     * (tests/data/fp8_param_gather.md, fp8_param_gather_rows.md). Off for
     * NeMo 24.07 (no config published; the launcher's default is off) but
     * its GPT-3 175B 512-GPU cell, which is NVIDIA's MLPerf v4.0 result (the
     * launcher's gpt3/mlperf.yaml at 24.07 sets fp8_params: true),
     * Bridge's blockwise FP8-SC recipes (off in every release), and MXFP8:
     * its parameters keep both MXFP8 directions (2.06 bytes) and gather in
     * bf16 through the gradient buffer (reuse_grad_buf_for_mxfp8_param_ag),
     * which parplan, having no MXFP8 recipe, prices as bf16 weights with an
     * FP8 cache (3 bytes, 2-byte gathers) */
    if ((is(nm, "nemo2407") && !strstr(nm, "gpt3_175b_512gpu")) || strstr(nm, "FP8-SC") || strstr(nm, "FP8_SC") || strstr(nm, "MXFP8") ||
        strstr(nm, "FP8-MX") || strstr(r->f[C_PREC], "mxfp8") || strstr(r->f[C_PREC], "MXFP8"))
        s->fp8_param_gather = 0;
    if (mcore && s->tp > 1) s->sp = 1;          /* and sequence parallelism with TP (TP overlap follows) */
    /* BigScience tr11 scripts always pass --checkpoint-activations */
    if (is(nm, "bloom") && !r->f[C_RECOMP][0]) s->recompute = PP_RECOMPUTE_FULL;
    /* Megatron-LM (2021-22) reduced gradients after the pipeline flush, not
     * during the backward pass; FlashAttention arrived after these runs */
    if (is(nm, "narayanan") || is(nm, "korthikanti") || is(nm, "bloom")) {
        s->overlap_dp = 0;
        s->overlap_tp = 0; /* before Transformer Engine's TP overlap */
        s->attention = PP_ATTN_MATERIALISED;
    }
    /* the Megatron-Bridge 25.09 table has no precision column; its rows repeat
     * the FP8 recipes of the 25.11 and 26.02 tables (same layout, same TFLOP/s) */
    if (is(nm, "mbridge2509")) s->precision = PP_PREC_FP8;
    /* NeMo 2.0 (24.12 on, as above) and Megatron-Bridge fuse the cross-entropy by default
     * (nemo/collections/llm/gpt/model/base.py GPTConfig, Megatron-Bridge
     * models/gpt_provider.py: cross_entropy_loss_fusion = True) */
    if (is(nm, "mbridge") || (is(nm, "nemo") && !is(nm, "nemo2407")) || is(nm, "dgxc")) s->loss = PP_LOSS_FUSED;
    /* Megatron-Bridge's MoE recipes fold the experts: expert_tensor_parallel_size
     * = 1 whatever the TP (recipes/qwen/h100/qwen3_moe.py, recipes/deepseek/h100/
     * deepseek_v3.py, perf_recipes/deepseek/common.py) */
    if (is(nm, "mbridge") && sc->model.experts && s->tp > 1) s->etp = 1;
    s->buf.expandable_segments = expandable_run(nm);
    /* torchtitan: parallelize_llama shards the norms' sequence whenever TP is
     * on (SequenceParallel on attention_norm, ffn_norm and norm); with PP it
     * builds FSDP with reshard_after_forward=False (apply_fsdp at 9dec370:
     * parameters stay gathered through the step, ZeRO-2); from April 2025
     * (bbb1b616e, 2025-04-02, components/loss.py build_cross_entropy_loss) it
     * compiles the loss with the model under --training.compile: the fused
     * loss. Before, the loss stayed eager (d1f62be73 loss.py: "compiling loss
     * function causes CUDA errors, turning off for now"), so a run published
     * earlier cannot have compiled it. The compiled blocks are not priced.
     * torchtitan's run_train.sh exports PYTORCH_CUDA_ALLOC_CONF=
     * expandable_segments:True (run_llama_train.sh before February 2025);
     * PyTorch honours it on NVIDIA GPUs (ROCm only from 2.11, docs/memory.md):
     * no fragmentation. */
    if (is(nm, "torchtitan")) {
        s->buf.fsdp_no_sync = 0;
        if (s->tp > 1) s->sp = 1;
        if (s->pp > 1 && s->zero == 3) s->zero = 2;
        if (strstr(r->f[C_NOTES], "--training.compile") && !published_before(r, "2025-04-02")) s->loss = PP_LOSS_FUSED;
        /* May to December 2025 torchtitan ran cuDNN attention on sm100 (PR
         * #1196, 2025-05-14), which its per-op save list lacked until PR #2095
         * (2025-12-01): B200/GB200/B300 runs published between recompute it */
        if (sm100(sc->cluster.gpu.name) && !published_before(r, "2025-05-14") && published_before(r, "2025-12-01"))
            s->buf.sac_attn_recomputed = 1;
        if (run_train_sh(r) && !strcmp(sc->cluster.gpu.vendor, "NVIDIA"))
            s->buf.fragmentation = 0; /* as expandable segments are priced; parplan's fsdp files
                                         cannot set them (rule fw-allocator): --fragmentation 0 */
    }
    /* llm-foundry: FSDP and flash-attn's fused cross-entropy (loss_fn
     * default 'fused_crossentropy'). The rows' MP column: DEFAULT (the
     * amp_bf16/amp_fp8 tables, submit_benchmarks.py's default) reduce-
     * scatters in fp32 (Composer v0.16.4 mosaic_fsdp_utils.py: reduce_dtype
     * float32), PURE (the A100-40GB table, A100-80GB "bf16") in bf16. The
     * PURE tables date from May 2023 or before, on the script's default
     * image mosaicml/pytorch:1.13.1 (300cc5c submit_benchmarks.py; README
     * "TODO: Update tables with torch 2.0"); the DEFAULT ones ran PyTorch
     * 2.1, whose non-reentrant checkpoint stops early (PR #96866), as
     * Composer's checkpoint_wrapper NO_REENTRANT runs it. */
    if (is(nm, "mpt")) {
        int pure = strstr(r->f[C_NOTES], "MP mode PURE") != NULL;
        if (mpt_triton(r)) sc->cluster.gpu.attn_eff /= triton_slowdown();
        s->buf.checkpoint_early_stop = !pure;
        s->buf.fp8_te_linears = 1; /* amp_fp8 rows: fc_type te (submit_benchmarks.py) */
        s->buf.fsdp_no_sync = 0;   /* Composer syncs FSDP every micro-batch (ddp_sync_context: DDP only) */
        s->buf.fsdp1 = 1;          /* Composer wraps FSDP1 (FullyShardedDataParallel, flat parameters) */
        s->framework = PP_FW_FSDP;
        s->grad_accum_dtype = pure ? PP_GRAD_16 : PP_GRAD_FP32;
        s->loss = PP_LOSS_FUSED;
    }
    /* MLPerf Training v5.1 llama2_70b_lora: LoRA rank 16 on the attention's
     * linear_qkv and linear_proj (megatron_gpt_peft_tuning_config.yaml),
     * base weights frozen; single-node runs use fused_adam without the
     * distributed optimizer. parplan's frameworks with a LoRA mode are
     * pytorch (DDP + PEFT) and fsdp; the TP/CP layouts are not expressible. */
    if (is(nm, "mlperf") && !mlperf_pretrain(nm)) {
        s->framework = PP_FW_PYTORCH;
        s->ft.mode = PP_MODE_LORA;
        s->ft.lora_rank = 16;
        s->ft.lora_alpha = 32;
        s->ft.lora_targets = PP_LORA_Q | PP_LORA_K | PP_LORA_V | PP_LORA_O;
    }
}

/* The pipeline schedule the notes name. Megatron-LM turns
 * --overlap-p2p-communication off unless the schedule is interleaved
 * (arguments.py: "Overlap P2P communication is disabled if not using the
 * interleaved schedule"), so "PP comm overlap on" means interleaved; without
 * a printed v, one block per virtual stage. */
static void schedule_rules(const row *r, scenario *sc)
{
    pp_strategy *s = &sc->s;
    int pp_overlap = strstr(r->f[C_SOURCE], "PP comm overlap on") != NULL;
    if (strstr(r->f[C_NOTES], "interleaved schedule") || (pp_overlap && s->pp > 1)) {
        s->schedule = PP_SCHED_INTERLEAVED;
        s->virtual_stages = sc->model.layers / s->pp;
    }
    const char *vp = strstr(r->f[C_NOTES], "VP="), *vp2 = strstr(r->f[C_NOTES], "virtual pipeline ");
    int v = 0;
    if (vp) v = atoi(vp + 3);
    else if (vp2) v = atoi(vp2 + 17);
    if (v > 1 && s->pp > 1 && sc->model.layers % (s->pp * v) == 0) {
        s->schedule = PP_SCHED_INTERLEAVED;
        s->virtual_stages = v;
    } else if (v > 1 && s->pp > 1 && (sc->model.layers + 2) % (s->pp * v) == 0) {
        /* NeMo's and Megatron-Bridge's recipes for the models whose blocks
         * VP does not divide (Llama 3.1 405B, Qwen3-235B: "Pipeline split
         * accounting (required for 235B model)") set
         * account_for_embedding_in_pipeline_split and
         * account_for_loss_in_pipeline_split: the embedding and the loss
         * each take a block's place (405B: 126 + 2 = 8 x 8 x 2), so the
         * first and last stages hold one block fewer */
        int per = (sc->model.layers + 2) / s->pp;
        for (int i = 0; i < s->pp; i++) s->stage_layers[i] = i == 0 || i == s->pp - 1 ? per - 1 : per;
        s->schedule = PP_SCHED_INTERLEAVED;
        s->virtual_stages = v;
    } else if (v > 1 && s->pp > 1 && sc->model.layers >= s->pp * (v - 1)) {
        /* a recipe's --pipeline-model-parallel-layout (DeepSeek-V3's 61
         * blocks: Megatron-Bridge's set_deepseek_v3_pipeline_model_parallel_
         * layout puts the embedding in the first chunk, the MTP block and
         * the loss in the last): the blocks as even as they go over the
         * stages, the first and last stages short first */
        int L = sc->model.layers, hi = (L + s->pp - 1) / s->pp, fewer = s->pp * hi - L;
        for (int i = 0; i < s->pp; i++) s->stage_layers[i] = hi;
        for (int k = 0; k < fewer; k++) s->stage_layers[k % 2 ? k / 2 : s->pp - 1 - k / 2] = hi - 1;
        s->schedule = PP_SCHED_INTERLEAVED;
        s->virtual_stages = v;
    }
}

/* Megatron-Bridge's MoE dispatch, and the recipes that overlap the EP all-to-alls with another
 * micro-batch (comm_overlap.overlap_moe_expert_parallel_comm; model.
 * moe_a2a_overlap sets it, scripts/performance/utils/overrides.py): DeepSeek-V3
 * on Blackwell as deepseek_a2a_overlap says, and Qwen3-235B on H100
 * (perf_recipes/qwen/h100/qwen3_moe.py); the Qwen3 recipes on Blackwell and
 * DeepSeek-V3's on H100 do not. Megatron runs it with pp 1 or the
 * interleaved schedule only. */
/* DeepSeek-V3 on Blackwell, release by release (moe_a2a_overlap in
 * scripts/performance/configs/deepseek/ workload base configs, then
 * perf_recipes/deepseek/): v0.2 (25.11) and v0.3 (26.02) off everywhere;
 * v0.4.2 (26.04.01) on for B200's MXFP8 V2 recipe only (GBS 4096, pp 8,
 * vp 2); v0.5 (26.06) that and the GB200 and GB300 MXFP8 V1 recipes; v0.6
 * (26.08) the MXFP8 recipes of B200, B300, GB200 and GB300
 * (_enable_deepseek_full_iteration_mxfp8, b200/deepseek_v3.py). */
static int deepseek_a2a_overlap(const char *nm, int gbs)
{
    int mx = strstr(nm, "MXFP8") || strstr(nm, "FP8-MX"), b200 = strstr(nm, "_b200_") != NULL;
    int grace = strstr(nm, "_gb200_") || strstr(nm, "_gb300_"), b300 = strstr(nm, "_b300_") != NULL;
    if (!mx) return 0;
    if (is(nm, "mbridge2604")) return b200 && gbs == 4096;
    if (is(nm, "mbridge2606")) return grace || (b200 && gbs == 4096);
    if (is(nm, "mbridge2608")) return grace || b200 || b300;
    return 0;
}

static void moe_overlap_rules(const row *r, scenario *sc)
{
    pp_strategy *s = &sc->s;
    const char *nm = r->f[C_NAME], *model = r->f[C_MODEL], *gpu = r->f[C_GPU];
    if (!is(nm, "mbridge") || s->ep < 2) return;
    /* DeepSeek-V3's recipes dispatch with HybridEP or DeepEP (flex): recipes/
     * deepseek/h100/deepseek_v3.py apply_flex_dispatcher_backend("hybridep"),
     * perf_recipes/deepseek/b200 "deepep", gb200 "hybridep"; Qwen3's alltoall */
    if (strstr(model, "DeepSeek")) s->ep_dispatch = 1;
    /* ... and so does Qwen3-30B-A3B on H100 (HybridEP, no EP overlap:
     * scripts/performance/configs/qwen/qwen3_workload_base_configs.py
     * QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_* from March 2026, then
     * perf_recipes/qwen/h100/qwen3_moe.py; red team rt16) */
    if (strstr(model, "Qwen3_30B") && strstr(gpu, "H100")) s->ep_dispatch = 1;
    /* ... and keep AdamW's moments in bf16 (the precision-aware optimizer,
     * main grads bf16): recipes/deepseek/deepseek_v3.py pretrain_config from
     * v0.2 to v0.5, which scripts/performance builds on; v0.6.0's tuned
     * perf_recipes call _enable_deepseek_precision_aware_optimizer. 6 bytes
     * a weight in BF16 runs; with MXFP8 or current scaling Megatron keeps an
     * fp32 master shard as well (8 bytes, optimizer_config.py), as parplan
     * prices fp8 (the rows' fp8 recipes are all other than delayed) */
    if (strstr(model, "DeepSeek") && (s->precision == PP_PREC_BF16 || s->precision == PP_PREC_FP8) && s->zero == 1 &&
        pp_framework_supports(s->framework, "opt_states", PP_OPT_STATES_BF16))
        s->opt_states = PP_OPT_STATES_BF16;
    if (s->pp > 1 && s->schedule != PP_SCHED_INTERLEAVED) return;
    int h100 = strstr(gpu, "H100") != NULL;
    if ((strstr(model, "DeepSeek") && !h100 && deepseek_a2a_overlap(nm, s->global_batch)) ||
        (strstr(model, "Qwen3_235B") && h100))
        s->overlap_ep = 1;
}

/* Megatron-Bridge's recompute and activation offload, release by release
 * (tests/data/bridge_recompute.md: each value traced through the
 * base recipe, the workload preset and the performance scripts' overrides
 * at the release's tag; 25.09 v0.1.0rc3, 25.11 v0.2.0, 26.04.01 v0.4.2,
 * 26.06 v0.5.0, 26.08 v0.6.0). DeepSeek-V3 runs selective recompute:
 *   26.08 perf_recipes/deepseek/gb200 mla_up_proj, gb300 [] (nothing);
 *   26.06 deepseek_workload_base_configs.py GB200 mla_up_proj, GB300 [],
 *     B300 mla_up_proj;
 *   26.04.01 GB200 mlp, B200 mla_up_proj mlp, GB300 and B300 mla_up_proj;
 *   25.11 workload_base_configs.py GB200 mla_up_proj, GB300 moe_act (the
 *     rows printed w/o MTP match no preset but GB200 BF16's: the others are
 *     the code's values, not certain);
 *   25.09 H100 (run_script.py) mla_up_proj mlp.
 * Qwen3's and Llama's run none (Llama 3 70B's Megatron-FSDP recipes
 * offload activations instead: cpu_offloading_num_layers in the rows'
 * notes, read with the columns). */
static void bridge_recompute(const row *r, pp_strategy *s)
{
    const char *nm = r->f[C_NAME];
    int gb200 = strstr(nm, "_gb200_") != NULL, gb300 = strstr(nm, "_gb300_") != NULL;
    int b200 = strstr(nm, "_b200_") != NULL, b300 = strstr(nm, "_b300_") != NULL, h100 = strstr(nm, "_h100_") != NULL;
    if (!is(nm, "mbridge") || !strstr(nm, "DeepSeek")) return;
    unsigned m = 0;
    if (is(nm, "mbridge2608")) m = gb200 ? PP_RC_MLA_UP_PROJ : 0;
    else if (is(nm, "mbridge2606")) m = gb200 || b300 ? PP_RC_MLA_UP_PROJ : 0;
    else if (is(nm, "mbridge2604")) m = gb200 ? PP_RC_MLP : b200 ? PP_RC_MLA_UP_PROJ | PP_RC_MLP : PP_RC_MLA_UP_PROJ;
    else if (is(nm, "mbridge2511")) m = gb300 ? PP_RC_MOE_ACT : PP_RC_MLA_UP_PROJ; /* GB300's: the code's, unsure */
    else if (is(nm, "mbridge2509") && h100) m = PP_RC_MLA_UP_PROJ | PP_RC_MLP;
    if (m) s->recompute = PP_RECOMPUTE_SELECTIVE, s->recompute_modules = m;
}

/* Megatron-Bridge's 26.06 and 26.08 MoE recipes on GB200, GB300 and B300
 * capture the whole iteration in CUDA graphs (set_full_iter_cg_configs:
 * paged stash, static expert capacity; gated on is_full_iteration_cuda_graph,
 * v0.5.0 scripts/performance/configs/qwen/qwen3_llm_pretrain.py and
 * deepseek_llm_pretrain.py; tests/data/bridge_recompute.md lists the rows
 * "paged-stash"): no expert launches to wait for. B300's DeepSeek-V3 graphs
 * only attn, moe_router and moe_preprocess (deepseek_workload_base_configs.py
 * DEEPSEEK_V3_PRETRAIN_CONFIG_B300_V2): its experts run eager. */
static void bridge_graphs(const row *r, scenario *sc)
{
    const char *nm = r->f[C_NAME];
    if (!is(nm, "mbridge") || sc->model.experts <= 0 || !nemo_container_since(r, 26, 6)) return;
    int blackwell = strstr(nm, "_gb200_") || strstr(nm, "_gb300_") || strstr(nm, "_b300_");
    if (blackwell && !(strstr(nm, "_b300_") && strstr(nm, "DeepSeek"))) sc->s.buf.expert_graphs = 1;
}

static int build(const row *r, const char *dir, scenario *sc)
{
    memset(sc, 0, sizeof *sc);
    if (!load_hardware(r, dir, sc)) return 0;
    /* tools/fit.py fits the dense GEMM and attention kernel rates on dense
     * models: a mixture of experts adds grouped GEMMs, token permutation and
     * routing imbalance, whose maturity changed release by release */
    if (getenv("PARPLAN_VALIDATE_DENSE") && sc->model.experts > 0) {
        snprintf(sc->note, sizeof sc->note, "mixture of experts: not in the dense kernel-rate fit");
        return 0;
    }
    /* 4-bit training (Transformer Engine's NVFP4 recipe: block-scaled FP4
     * GEMMs, some layers kept in BF16) is not a precision parplan prices;
     * pricing it as BF16 or FP8 would measure nothing */
    if (strstr(r->f[C_PREC], "FP4") || strstr(r->f[C_PREC], "fp4")) {
        snprintf(sc->note, sizeof sc->note, "precision %.40s: 4-bit training is not a parplan precision", r->f[C_PREC]);
        return 0;
    }
    read_columns(r, sc);
    framework_rules(r, sc);
    schedule_rules(r, sc);
    /* Megatron-Core before v0.18.0 (2026-06-22) deferred the wait on an
     * interleaved chunk's output send (commit 260cba7133, red team rt17):
     * every Megatron row but those of NeMo containers from 26.08 on (an
     * assumption: no source says which container first ships v0.18; 26.06
     * was cut within days of it) */
    if (sc->s.framework == PP_FW_MEGATRON && !nemo_container_since(r, 26, 8)) sc->s.buf.mcore_p2p_deferred = 1;
    moe_overlap_rules(r, sc);
    bridge_recompute(r, &sc->s);
    bridge_graphs(r, sc);
    const char *name = r->f[C_NAME];
    if (is(name, "mtnlg")) mtnlg_setup(sc);
    if (is(name, "llama3") && !llama3_setup(sc)) return 0;
    if (is(name, "bloom") && !bloom_setup(r, sc)) return 0;
    sc->basis = basis_for(name);
    /* BigScience's TFLOP/s formula under-reported until 02-21 ("TFLOPs
     * calculation improved"); for rows before it, compare the seconds per
     * iteration the same logs print */
    const char *si = strstr(r->f[C_NOTES], "sec/it ");
    if (si && !strstr(r->f[C_NOTES], "TFLOPs-formula fix")) sc->step_s = atof(si + 7);
    /* DGX Cloud's READMEs print the seconds per step beside an MFU whose
     * FLOP count changed between releases (Nemotron-4 340B on 256 H100:
     * 4.67 s is 54.7% in v25.02, 4.61 s is 47.3% in v25.05) and counts
     * attention without causal halving: compare the time */
    const char *st = strstr(r->f[C_NOTES], "step_time_s=");
    if (st && atof(st + 12) > 0) sc->step_s = atof(st + 12);
    return 1;
}

/* Best fitting micro-batch when the source does not print it; when none
 * fits, the smallest that resolves (the run happened: our memory model is
 * then wrong, and the table says so). */
static int evaluate(scenario *sc, pp_plan *best, char *why, size_t cap)
{
    pp_error err = {""};
    int found = 0, fallback = 0, dp = sc->s.dp;
    int lo = sc->mb_known ? sc->s.micro_batch : 1, hi = sc->mb_known ? sc->s.micro_batch : 64;
    pp_plan *p = malloc(sizeof *p), *small = malloc(sizeof *small);
    for (int mb = lo; p && small && mb <= hi; mb++) {
        if (sc->s.global_batch % (mb * dp)) continue;
        pp_strategy s = sc->s;
        s.micro_batch = mb;
        if (pp_estimate(&sc->model, &sc->cluster, &s, p, &err) != PP_OK) continue;
        if (!fallback) *small = *p, fallback = 1;
        int ok = p->memory.fits || sc->mb_known;
        if (ok && (!found || p->time.step_s < best->time.step_s)) {
            *best = *p;
            found = 1;
        }
    }
    if (!found && fallback) *best = *small, found = 1;
    free(p);
    free(small);
    if (!found) snprintf(why, cap, "%s", err.msg[0] ? err.msg : "no micro-batch fits");
    return found;
}


/* What the source read: for BLOOM (nvidia-smi), the nodes holding the word
 * embedding, stages 0 and p-1 ("Mem = max memory used by the first (last)
 * nodes with the word embedding matrix"); torchtitan logs PyTorch's
 * reserved_bytes.all.peak (metrics.py at 9dec370), which holds neither the
 * CUDA context nor NCCL's buffers; otherwise the peak over all stages. */
static double measured_bytes(const char *name, const pp_memory *m)
{
    if (!strncmp(name, "torchtitan", 10)) return m->peak_bytes - m->stages[m->peak_stage].context_bytes;
    if (strncmp(name, "bloom", 5)) return m->peak_bytes;
    double a = m->stages[0].total_bytes, b = m->stages[m->nstages - 1].total_bytes;
    return a > b ? a : b;
}


static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void summary(const char *what, const double *errs, int n)
{
    static double e[MAXROWS];
    if (!n) return;
    memcpy(e, errs, (size_t)n * sizeof *e); /* the caller's order stays (summary_by_gpu) */
    qsort(e, (size_t)n, sizeof *e, cmp);
    double med = n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
    printf("| %s | %d | %.1f%% | %.1f%% |\n", what, n, med, e[n - 1]);
}

/* Predicted-against-reported rows of one CSV file. */
typedef struct results {
    double terr[MAXROWS], merr[MAXROWS];
    char tgpu[MAXROWS][24];  /* the GPU label of each terr */
    int nt, nm;
    char resid[MAXROWS][320]; /* --residuals lines */
    int nres;
    char tbl_t[MAXROWS][2400], tbl_m[MAXROWS][2400], tbl_o[MAXROWS][2400];
    int rows_t, rows_m, rows_o, n_oom, oom_fits, ran_no, ran_tight;
} results;

static void dump_if_asked(const row *r, const scenario *sc, const pp_plan *p)
{
    const char *dump = getenv("PARPLAN_VALIDATE_DUMP"); /* debugging: a row's whole plan */
    if (!dump || strcmp(dump, r->f[C_NAME])) return;
    char *js = pp_plan_to_json(&sc->model, &sc->cluster, p);
    if (js) fprintf(stderr, "%s\n", js);
    free(js);
}

/* Returns truth / prediction of the step time (= predicted over reported
 * throughput on the same FLOP basis). */
static const char *oom_flag(const pp_plan *p, char *buf, size_t cap);

static double add_throughput(results *o, const row *r, const scenario *sc, const pp_plan *p, const char *cfg)
{
    char flag[64];
    double tf = num(r->f[C_TFLOPS]), mfu = num(r->f[C_MFU]), pred, rep;
    o->ran_no += p->uncertainty.fit == PP_FIT_NO, o->ran_tight += p->uncertainty.fit == PP_FIT_TIGHT; /* they ran */
    const char *unit;
    snprintf(o->tgpu[o->nt], sizeof o->tgpu[o->nt], "%.23s", r->f[C_GPU]);
    if (sc->step_s > 0) { /* throughput from time: + means predicted faster */
        double e = 100 * (sc->step_s / p->time.step_s - 1);
        o->terr[o->nt++] = fabs(e);
        snprintf(o->tbl_t[o->rows_t++], 2400, "| %.200s | %.200s | %s%s | %.1f | %.1f | %+.1f%% throughput (s/step) |",
                 r->f[C_NAME], r->f[C_MODEL], cfg, oom_flag(p, flag, sizeof flag), sc->step_s,
                 p->time.step_s, e);
        return sc->step_s / p->time.step_s;
    }
    if (!strcmp(sc->basis, "mfu") || tf <= 0) {
        pred = 100 * p->throughput.mfu;
        rep = mfu;
        unit = "MFU %";
    } else {
        pred = !strcmp(sc->basis, "hw") ? p->throughput.hardware_tflops_per_gpu : p->throughput.model_tflops_per_gpu;
        rep = tf;
        unit = !strcmp(sc->basis, "hw") ? "hw TFLOP/s" : "model TFLOP/s";
    }
    double e = 100 * (pred - rep) / rep;
    o->terr[o->nt++] = fabs(e);
    snprintf(o->tbl_t[o->rows_t++], 2400, "| %.200s | %.200s | %s%s | %.1f | %.1f | %+.1f%% %s |", r->f[C_NAME], r->f[C_MODEL],
             cfg, oom_flag(p, flag, sizeof flag), rep, pred, e, unit);
    return pred / rep;
}

/* The row's memory flag: "" when it fits with its error bar, else the
 * verdict with the peak against the usable memory. */
static const char *oom_flag(const pp_plan *p, char *buf, size_t cap)
{
    pp_fit f = p->uncertainty.fit;
    if (f == PP_FIT_FITS && p->memory.fits) return "";
    snprintf(buf, cap, " (%s: %.1f of %.1f GiB)", f == PP_FIT_NO ? "predicted OOM" : "tight",
             p->memory.peak_bytes / 1073741824.0, p->memory.gpu_bytes / 1073741824.0);
    return buf;
}

/* Returns truth / prediction of the memory reading, 0 without one. */
static double add_memory(results *o, const row *r, const pp_plan *p, const char *cfg, int oom)
{
    double mem = num(r->f[C_MEM]);
    if (o->rows_o >= MAXROWS || o->rows_m >= MAXROWS) return 0;
    if (oom) { /* wrong only when predicted to fit: tight says it may not */
        pp_fit f = p->uncertainty.fit;
        o->oom_fits += f == PP_FIT_FITS;
        o->n_oom++;
        snprintf(o->tbl_o[o->rows_o++], 2400, "| %.200s | %.200s | %s | %.1f | %s |", r->f[C_NAME], r->f[C_MODEL], cfg,
                 p->memory.peak_bytes / 1073741824.0, f == PP_FIT_FITS ? "**fits (wrong)**" : f == PP_FIT_TIGHT
                 ? (p->memory.live_fits ? "tight (live tensors fit)" : "tight (live tensors over, within the error bar)") : "OOM predicted");
    }
    if (mem > 0) {
        double pred = measured_bytes(r->f[C_NAME], &p->memory) / 1073741824.0; /* nvidia-smi prints MiB: GiB */
        double e = 100 * (pred - mem) / mem;
        o->merr[o->nm++] = fabs(e);
        snprintf(o->tbl_m[o->rows_m++], 2400, "| %.200s | %s | %.1f | %.1f | %+.1f%% | %s |", r->f[C_NAME], cfg, mem, pred,
                 e, p->memory.fits ? "fits" : p->uncertainty.fit == PP_FIT_TIGHT ? "tight" : "OOM predicted");
        return mem / pred;
    }
    return 0;
}

/* The publication a row comes from: its name up to the first '_' or digit
 * (tools/fit.py's source()); bloomx rows are BigScience's chronicles-prequel.md
 * as the bloom rows are (red team rt13): one publication. */
static void source_of(const char *name, char *out, size_t cap)
{
    size_t k = 0;
    while (name[k] && name[k] != '_' && !(name[k] >= '0' && name[k] <= '9') && k + 1 < cap) out[k] = name[k], k++;
    out[k] = '\0';
    if (!strcmp(out, "bloomx")) out[5] = '\0';
}

/* One line of the residual table tools/uncertainty.c reads (tab-separated):
 * name, source, GPU, framework, zero, GPUs, attention, precision, mode,
 * offload, ep, cp, step ratio, memory ratio (truth / prediction; 0 = none). */
static void add_residual(results *o, const row *r, const scenario *sc, const pp_plan *p, double step, double mem)
{
    const pp_strategy *s = &p->strategy;
    char src[24];
    int n;
    if (o->nres >= MAXROWS || (step <= 0 && mem <= 0)) return;
    source_of(r->f[C_NAME], src, sizeof src);
    snprintf(o->resid[o->nres++], sizeof o->resid[0], "%.120s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%.6f\t%.6f",
             r->f[C_NAME], src, sc->cluster.gpu.name, pp_framework_name(s->framework), s->zero,
             pp_cluster_gpus(&sc->cluster), pp_attention_name(s->attention), pp_precision_name(s->precision),
             pp_enum_names(PP_ENUM_MODE, &n)[s->ft.mode], pp_offload_name(s->offload), s->ep, s->cp, step, mem);
}

static int run_file(const char *path, results *o)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 0;
    }
    static char line[16384];
    static row r;
    memset(o, 0, sizeof *o);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
    pp_plan *p = malloc(sizeof *p);
    if (!p || !fgets(line, sizeof line, f)) {
        free(p);
        fclose(f);
        return 0;
    }
    while (fgets(line, sizeof line, f) && o->rows_t < MAXROWS - 1) {
        if (parse_csv_line(line, &r) < C_NOTES) continue;
        double tf = num(r.f[C_TFLOPS]), mfu = num(r.f[C_MFU]), mem = num(r.f[C_MEM]);
        int oom = strstr(r.f[C_NOTES], "; OOM;") != NULL; /* the source ran it out of memory */
        int timed = strstr(r.f[C_NOTES], "sec/it ") || strstr(r.f[C_NOTES], "step_time_s="); /* seconds per step */
        if (tf <= 0 && mfu <= 0 && mem <= 0 && !oom && !timed) continue;
        scenario sc;
        char why[PP_ERR_LEN] = "";
        if (!build(&r, dir, &sc) || !evaluate(&sc, p, why, sizeof why)) {
            snprintf(o->tbl_t[o->rows_t++], 2400, "| %.200s | %.200s | — | — | not evaluated: %s |", r.f[C_NAME], r.f[C_MODEL],
                     why[0] ? why : sc.note);
            continue;
        }
        dump_if_asked(&r, &sc, p);
        const pp_strategy *s = &p->strategy;
        char cfg[96];
        snprintf(cfg, sizeof cfg, "tp%d pp%d dp%d%s z%d mb%d %s", s->tp, s->pp, s->dp, s->sp ? " sp" : "", s->zero,
                 s->micro_batch, s->recompute == PP_RECOMPUTE_FULL ? "full" : s->recompute ? "sel" : "none");
        double step = tf > 0 || mfu > 0 || sc.step_s > 0 ? add_throughput(o, &r, &sc, p, cfg) : 0;
        add_residual(o, &r, &sc, p, step, add_memory(o, &r, p, cfg, oom));
    }
    fclose(f);
    free(p);
    return 1;
}

static void print_tables(const results *o, const char *h)
{
    printf("\n%s Throughput\n\n| run | model | configuration | reported | predicted | error |\n|---|---|---|---|---|---|\n", h);
    for (int i = 0; i < o->rows_t; i++) printf("%s\n", o->tbl_t[i]);
    printf("\n%s Memory (GiB: nvidia-smi for BLOOM, the allocator's peak reserved for torchtitan)\n\n"
           "| run | configuration | reported | predicted | error | verdict |\n"
           "|---|---|---|---|---|---|\n", h);
    for (int i = 0; i < o->rows_m; i++) printf("%s\n", o->tbl_m[i]);
    printf("\n%s Runs reported out of memory\n\nThe source's configuration, predicted peak (GiB) and verdict; "
           "a prediction of \"fits\" here is wrong.\n\n"
           "| run | model | configuration | predicted peak | verdict |\n|---|---|---|---|---|\n", h);
    for (int i = 0; i < o->rows_o; i++) printf("%s\n", o->tbl_o[i]);
}

#define MAXMORE 8

/* Held-out files: what they hold, in the summary's words. */
static const char *held_out_name(const char *path)
{
    if (strstr(path, "new_gpus")) return "runs on other GPUs";
    if (strstr(path, "zero3_scale")) return "ZeRO-3 and PTD-P at scale";
    if (strstr(path, "torchtitan")) return "torchtitan on H100";
    if (strstr(path, "mlperf51")) return "MLPerf Training v5.1 pre-training";
    if (strstr(path, "moe_h100")) return "fine-grained MoE on H100";
    return strstr(path, "bloom_chronicles") ? "more BigScience runs" : "other published runs";
}

static const char *held_out_text(const char *path)
{
    if (strstr(path, "moe_h100"))
        return "Megatron-Bridge's Qwen3-30B-A3B runs on 16 H100 (128 experts of 768, top 8; FP8 current scaling,\n"
               "HybridEP dispatch, no EP overlap), added after red team rt16 found them missing. parplan prices\n"
               "them ~46% fast: it has no term for the small expert GEMMs' efficiency or the host's kernel\n"
               "launches, which NVIDIA's MoE guide names the bottleneck there (moe-optimization.md, \"Small expert\n"
               "GEMMs + host overhead\"), and no published constant to price them with. The 26.02 row, the same\n"
               "layout as 26.02.01 at half its speed, is a release regression parplan cannot see.";
    if (strstr(path, "new_gpus"))
        return "Runs on GPUs beyond A100 and H100 (Megatron-Bridge and NeMo performance tables, NVIDIA\n"
               "DGX Cloud benchmarking, torchtitan, MLPerf Training v5.1), transcribed with their sources; the rows\n"
               "parplan can model (the GPU is in topologies/gpus.json, the shape is a preset or in\n"
               "tests/data/models/, the layout and batch are printed). Errors with the catalog's constants: B200's\n"
               "and GB200's were fitted to these rows (in-sample here; their leave-one-source-out errors are\n"
               "under Calibration, below), the other GPUs' are estimates: B300's are B200's; GB300's are GB200's\n"
               "scaled by measured GB300/GB200 ratios (cuDNN's attention benchmark; MLPerf v5.1's identical-config\n"
               "8B runs: topologies/gpus.json), so its lines below are held out. GB200 and GB300 run on 4-GPU trays with the NVLink\n"
               "domain Megatron-Bridge's launcher asks Slurm for (--segment); MLPerf's LoRA runs have no framework\n"
               "in parplan's table that runs them as published; torchtitan's runs use its per-op selective\n"
               "recompute (fsdp's selective); under torch.compile their loss is the fused one (compiled with\n"
               "the model since April 2025: runs published before keep it eager) and the compiled blocks are\n"
               "not priced; runs launched through torchtitan's run_train.sh on NVIDIA GPUs have expandable\n"
               "segments (no fragmentation).";
    if (strstr(path, "torchtitan"))
        return "torchtitan's Llama 3.1 benchmarks on Meta's Grand Teton H100 (96 GB HBM2e, 500 W; benchmarks/\n"
               "llama3_h100_202412_torchtitan.md at torchtitan 9dec370): peak reserved memory (max over ranks) of\n"
               "FSDP2 with TP, PP and CP from 8 to 512 GPUs. Memory only: the 500 W limit sets clocks parplan has\n"
               "no rate for. 16 of the 18 runs compile the blocks (not priced: parplan predicts the eager\n"
               "memory); that release left the loss uncompiled. No constant was fitted to them, but three FSDP2\n"
               "mechanisms (docs/memory.md: accumulated fp32 gradients under pipelining, loss_parallel's loss,\n"
               "DTensor's gathered GEMM inputs) were found by reading the code these runs used when they came out\n"
               "27-39% low: for those mechanisms the rows are not a blind test.";
    if (strstr(path, "zero3_scale"))
        return "Narayanan et al. 2021 (Table 2): GPT-3 175B and 530B trained with DeepSpeed's ZeRO-3 on 384 to\n"
               "2,240 A100s at a fixed global batch of 1,536 (one to four sequences per GPU), priced with the\n"
               "DeepSpeed of that time: one all-gather per parameter tensor after a host sync (zero3_per_tensor;\n"
               "DeepSpeed issue #1069, coalesced from PR #1188, June 2021); and the table's PTD-P arm on the same\n"
               "GPUs (model-parallel size 96 and 280: TP 8 within a server, PP across, the paper's Takeaway #1;\n"
               "interleaved schedule). Nothing was fitted to them.";
    if (strstr(path, "mlperf51"))
        return "MLPerf Training v5.1 (closed division) llama31_8b and llama31_405b submissions on B200, GB200,\n"
               "B300, GB300, H200 and H100, transcribed from the submissions' config_*.sh and logs\n"
               "(mlcommons/training_results_v5.1 at 441d65f444): NeMo on Megatron-Core with the distributed\n"
               "optimizer (each run's DDP bucket) and bf16 gradient reduction, FP8 primary weights where the\n"
               "config gathers them in FP8, compared on the median logged train_step_time. Kept out of\n"
               "tools/fit.py: a blind test of the catalog's constants, but for GB300's, which reproduce the\n"
               "GB300/GB200 step ratio of the two 72-GPU 8B runs (topologies/gpus.json). NVFP4 runs are\n"
               "not evaluated (4-bit training is not a parplan precision); whole-iteration CUDA graphs are\n"
               "not priced.";
    if (strstr(path, "bloom_chronicles"))
        return "Rows of the same chronicles-prequel.md that shared/reference does not carry, transcribed with\n"
               "their dates and sections. Nothing was fitted to them; they show the error on runs the\n"
               "constants never saw.";
    return "Published runs outside shared/reference (MT-NLG 530B, Llama 3 405B, Korthikanti's 175B and 1T,\n"
           "BLOOM-176B's production run), transcribed with their sources. Nothing was fitted to them.";
}

static void print_preamble(void)
{
    printf("# Validation against published runs\n\n"
           "Generated by `make validate` (tools/validate.c, tools/fit.py) from `tests/reference/published_runs.csv`;\n"
           "do not edit by hand. `tests/costmodel/test_validation.c` holds the summary to its bounds.\n\n"
           "Each row is predicted with the source's own configuration. Where the source is silent, these\n"
           "documented rules apply (tools/validate.c), never a per-row constant:\n"
           "- micro-batch not printed: the fastest micro-batch that fits by parplan's memory model;\n"
           "- Narayanan 2021, Korthikanti 2022 and BLOOM ran before FlashAttention: materialised scores; they\n"
           "  reduce gradients after the pipeline flush (no DP overlap); Megatron keeps fp32 main grads;\n"
           "- BLOOM: the BigScience scripts pass --checkpoint-activations (full recompute), fp16 unless bf16 is\n"
           "  noted, on the Jean Zay cluster (4 x 100 Gb/s per node, topologies/clusters/jean-zay-a100.json);\n"
           "  from chronicles-prequel.md and the tr11 scripts: DeepSpeed's stage split (partition_method\n"
           "  type:transformer, type:transformer|embedding from section \"Rebalancing layers\"), the CUDA\n"
           "  context the document measured (1573 MiB), Megatron's default dropout 0.1 (the scripts pass\n"
           "  none), 64 heads where a row up to 02-23 does not print them (\"all NHEADS=64 (above too)\"),\n"
           "  memory read on the first and last stages (\"Mem = max memory used by the first (last) nodes\n"
           "  with the word embedding matrix\"); rows before the 02-21 TFLOP/s formula fix compared on the\n"
           "  seconds per iteration the logs print;\n"
           "- MosaicML (llm-foundry): flash-attn's fused cross-entropy, MPTConfig's default loss_fn; the\n"
           "  benchmark script's default attn_impl 'triton' (llm-foundry's copy of flash-attn's Triton\n"
           "  FlashAttention) at 1/1.7 of the FlashAttention-2 class (fitted, Calibration), except the\n"
           "  Large Scale table's 1b, 3b, 7b and 70b, which its sweep.py runs with attn_impl flash;\n"
           "- Megatron-LM family: fp32 main grads, pipeline outputs freed once sent (deallocate_pipeline_outputs);\n"
           "- Megatron-Core/NeMo/Megatron-Bridge: distributed optimizer (ZeRO-1), sequence parallelism and TP\n"
           "  overlap with TP > 1; the 25.09 Megatron-Bridge table (no precision column) repeats FP8 recipes;\n"
           "  Megatron-Bridge's BF16 runs use the precision-aware optimizer with fp32 moments (set_post_\n"
           "  overrides: 10 bytes a weight, priced at 12, a state parplan does not have), its DeepSeek-V3\n"
           "  BF16 runs bf16 moments (6 bytes), its MXFP8 runs bf16 moments beside an fp32 master (8);\n"
           "  \"PP comm overlap on\" means the interleaved schedule (Megatron-LM disables\n"
           "  --overlap-p2p-communication otherwise), with one block per virtual stage;\n"
           "- NeMo (24.12 on), Megatron-Bridge and DGX Cloud: a bf16 main_grad (their performance scripts set\n"
           "  grad_reduce_in_fp32 = False); with a printed VP that does not divide the blocks, the embedding\n"
           "  and the loss count as pipeline layers (account_for_embedding/loss_in_pipeline_split: 405B's\n"
           "  126 + 2 blocks, the first and last stages one short); NeMo 2.0, Megatron-Bridge and DGX Cloud\n"
           "  fuse the cross-entropy (cross_entropy_loss_fusion defaults to True in NeMo's GPTConfig and\n"
           "  Megatron-Bridge's GPTModelProvider); Megatron-Bridge's MoE recipes fold the experts\n"
           "  (expert_tensor_parallel_size 1), dispatch DeepSeek-V3's tokens with HybridEP/DeepEP (hierarchical)\n"
           "  and Qwen3's with the all-to-all, and overlap the EP all-to-alls where the recipe says so\n"
           "  (DeepSeek-V3 on Blackwell, Qwen3-235B on H100) and the schedule allows it; DeepSeek-V3's recipes\n"
           "  recompute the modules each release's recipe names (mla_up_proj, mlp, moe_act; 26.06/26.08 GB300\n"
           "  none), traced at each release's tag (the 25.11 rows printed w/o MTP: the code's values);\n"
           "  their 26.06 and 26.08 MoE recipes on GB200, GB300 and B300 (B300's DeepSeek-V3 apart) replay\n"
           "  the whole iteration as CUDA graphs (set_full_iter_cg_configs: paged stash), so their experts\n"
           "  cost no launch wait (docs/time.md, \"Expert launches\"); every other MoE run launches eagerly;\n"
           "- figures compared on the source's FLOP basis: hardware TFLOP/s (with recompute) for Narayanan\n"
           "  and BLOOM, MFU for Korthikanti, model TFLOP/s otherwise;\n"
           "- runs on other GPUs (tests/data/new_gpus.csv): DGX Cloud benchmarking's NeMo recipes as\n"
           "  Megatron-Core's; Megatron-FSDP (FSDP > 0) as Megatron's ZeRO-3 (--use-megatron-fsdp) with the\n"
           "  activation offload of its recipe (cpu_offloading_num_layers in the row's notes), FSDP2 as the\n"
           "  fsdp framework's ZeRO-3; GB200 and GB300\n"
           "  on 4-GPU trays whose NVLink domain is the Slurm --segment Megatron-Bridge's launcher asks for\n"
           "  (scripts/performance/utils/executors.py: the trays, or the largest divisor of their count up to\n"
           "  18); MXFP8 and FP8 recipes as fp8; a printed VP that does not divide the blocks (DeepSeek-V3's\n"
           "  61 and its recipe's pipeline layout) with the blocks as even as they go over the stages;\n"
           "  DGX Cloud, MLPerf and torchtitan rows compared on seconds\n"
           "  per step (printed, or derived from the printed throughput as each row's notes say).\n\n"
           "Constants: each GPU's matmul and attention efficiency is fitted to these rows (Calibration,\n"
           "below) where no measured rate exists (H100's attention is FlashAttention-2's measured rate),\n"
           "with the slowdown of llm-foundry's Triton attention; the unaligned-GEMM factor of\n"
           "materialised attention is fitted to three BLOOM rows\n"
           "(docs/time.md), and the host time of launching a Megatron MoE block (1 ms, and 0.4 ms a local\n"
           "expert, forward and backward) to the 30 eagerly launched MoE runs (docs/time.md, \"Expert\n"
           "launches\": one GPU family held out, 8.9%% median, 30%% worst); everything else (NCCL\n"
           "efficiency and overlap slowdown, HBM efficiency, memory buffers) is from sources cited in\n"
           "docs/time.md and docs/memory.md and was not tuned here.\n\n"
           "## Summary (absolute percentage error)\n\n| figure | rows | median | worst |\n|---|---|---|---|\n");
}

/* Throughput errors of one file by GPU label, in order of first row. */
static void summary_by_gpu(const results *o)
{
    double e[MAXROWS];
    char label[160];
    for (int i = 0; i < o->nt; i++) {
        int seen = 0, n = 0;
        for (int j = 0; j < i && !seen; j++) seen = !strcmp(o->tgpu[j], o->tgpu[i]);
        if (seen) continue;
        for (int j = i; j < o->nt; j++)
            if (!strcmp(o->tgpu[j], o->tgpu[i])) e[n++] = o->terr[j];
        /* B200 and GB200 efficiencies were fitted to these rows (Calibration) */
        int fitted = !strcmp(o->tgpu[i], "B200") || !strcmp(o->tgpu[i], "GB200");
        snprintf(label, sizeof label, "%s: throughput, %s", fitted ? "fitted" : "held out", o->tgpu[i]);
        summary(label, e, n);
    }
}

/* --residuals FILE: every evaluated row's residuals (add_residual). */
static int write_residuals(const char *path, const results *sets, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 0;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < sets[i].nres; j++) fprintf(f, "%s\n", sets[i].resid[j]);
    return fclose(f) == 0;
}

int main(int argc, char **argv)
{
    const char *resid = NULL;
    if (argc > 1 && !strcmp(argv[1], "--unfitted")) unfitted = 1, argc--, argv++;
    if (argc > 2 && !strcmp(argv[1], "--residuals")) {
        resid = argv[2];
        argc -= 2, argv += 2;
    }
    if (argc < 2 || argc > 2 + MAXMORE) {
        fprintf(stderr, "usage: validate [--unfitted] [--residuals FILE] published_runs.csv [more_runs.csv ...] > "
                        "docs/validation.md\n");
        return 2;
    }
    static results sets[1 + MAXMORE];
    results *ref = &sets[0], *more = &sets[1];
    int nmore = argc - 2;
    for (int i = 0; i <= nmore; i++)
        if (!run_file(argv[1 + i], &sets[i])) return 2;
    if (resid && !write_residuals(resid, sets, 1 + nmore)) return 2;
    print_preamble();
    summary("throughput (TFLOP/s or MFU)", ref->terr, ref->nt);
    summary("memory per GPU", ref->merr, ref->nm);
    char label[160];
    for (int i = 0; i < nmore; i++) {
        snprintf(label, sizeof label, "%s: throughput, %s", strstr(argv[2 + i], "new_gpus") ? "partly fitted" : "held out",
                 held_out_name(argv[2 + i]));
        summary(label, more[i].terr, more[i].nt);
        snprintf(label, sizeof label, "held out: memory, %s", held_out_name(argv[2 + i]));
        summary(label, more[i].merr, more[i].nm);
        if (strstr(argv[2 + i], "new_gpus")) summary_by_gpu(&more[i]);
    }
    printf("\nRuns the source reports as out of memory: %d; predicted to fit: %d.\n", ref->n_oom, ref->oom_fits);
    printf("Runs that ran: predicted not to fit %d, tight %d.\n", ref->ran_no, ref->ran_tight);
    for (int i = 0; i < nmore; i++)
        printf("Held out, %s reported out of memory: %d; predicted to fit: %d. Ran: predicted not to fit %d, tight %d.\n",
               held_out_name(argv[2 + i]), more[i].n_oom, more[i].oom_fits, more[i].ran_no, more[i].ran_tight);
    print_tables(ref, "##");
    for (int i = 0; i < nmore; i++) {
        printf("\n## Held out: %s (%s)\n\n%s\n", held_out_name(argv[2 + i]), argv[2 + i], held_out_text(argv[2 + i]));
        print_tables(&more[i], "###");
    }
    return 0;
}
