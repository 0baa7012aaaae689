/*
 * validate.c — regenerates docs/validation.md: every published run in
 * tests/reference/published_runs.csv with a throughput or memory figure,
 * predicted by parplan and compared, with the error. Nothing here is fitted
 * per row; unknown settings (micro-batch, recompute) follow documented rules.
 *
 *   build/validate tests/reference/published_runs.csv > docs/validation.md
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parplan.h"

#define MAXF 24
#define MAXROWS 512

typedef struct row {
    char f[MAXF][640];
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
                if (k < 639) out[k++] = *s;
                s++;
            }
            if (*s == '"') s++;
        } else {
            while (*s && *s != ',' && *s != '\n' && *s != '\r') {
                if (k < 639) out[k++] = *s;
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
        {"korthikanti-530B", "korthikanti-530b"}, {"korthikanti-175B", "korthikanti-175b"},
        {"mcore-gpt-1.7B", "mcore-gpt-1.7b"}, {"mcore-gpt-16B", "mcore-gpt-16b"}, {"mcore-gpt-70B", "mcore-gpt-70b"},
        {"mcore-gpt-177B", "mcore-gpt-177b"}, {"mcore-gpt-462B", "mcore-gpt-462b"}, {"Llama-2-70B", "llama2-70b"},
        {"Llama-3-70B", "llama3-70b"}, {"Qwen3_235B_a22B", "qwen3-235b-a22b"}, {"DeepSeek-V3", "deepseek-v3"},
        {"MPT-125m", "mpt-125m"}, {"MPT-350m", "mpt-350m"}, {"MPT-760m", "mpt-760m"}, {"MPT-1b", "mpt-1b"},
        {"MPT-3b", "mpt-3b"}, {"MPT-7b", "mpt-7b"}, {"MPT-13b", "mpt-13b"}, {"MPT-30b", "mpt-30b"},
        {"MPT-70b", "mpt-70b"}, {"MT-NLG-530B", "korthikanti-530b"}, {"Llama-3.1-405B", "llama3.1-405b"},
        {"korthikanti-1T", "korthikanti-1t"}};
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
    if (!strcmp(gpu, "A100-80GB")) return "dgx-a100-80g";
    if (!strcmp(gpu, "A100-40GB")) return "dgx-a100-40g";
    if (!strcmp(gpu, "H100-80GB")) return "dgx-h100";
    return NULL;
}

static void set_zero(const char *z, pp_strategy *s)
{
    if (strstr(z, "FULL_SHARD")) s->zero = 3;
    else if (strstr(z, "SHARD_GRAD_OP")) s->zero = 2;
    else if (strstr(z, "DDP")) s->zero = 1; /* Megatron distributed optimizer */
    else s->zero = atoi(z);
}

static void set_recompute(const char *r, pp_strategy *s)
{
    if (!strncmp(r, "full", 4)) s->recompute = PP_RECOMPUTE_FULL;
    else if (!strncmp(r, "selective", 9)) s->recompute = PP_RECOMPUTE_SELECTIVE;
    else s->recompute = PP_RECOMPUTE_NONE;
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
static void apply_fit_overrides(pp_gpu *g)
{
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
    if (pp_split_deepspeed(sc->model.layers, sc->s.pp, embed, sc->s.stage_layers, &err) != PP_OK) {
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

/* Model and cluster of a row; 0 with a note when either is not published. */
static int load_hardware(const row *r, scenario *sc)
{
    pp_error err;
    const char *preset = preset_for(r->f[C_MODEL]);
    if (preset ? pp_model_load(preset, &sc->model, &err) != PP_OK : !bloom_model(r->f[C_MODEL], r->f[C_NOTES], &sc->model)) {
        snprintf(sc->note, sizeof sc->note, "shape not published");
        return 0;
    }
    const char *cl = is(r->f[C_NAME], "bloom") ? "jean-zay-a100" : cluster_for(r->f[C_GPU]);
    if (!cl || pp_cluster_load(cl, &sc->cluster, &err) != PP_OK ||
        pp_cluster_resize(&sc->cluster, 0, atoi(r->f[C_NGPU]), &err) != PP_OK) {
        snprintf(sc->note, sizeof sc->note, "cluster: %s", err.msg);
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
    s->seq = atoi(r->f[C_SEQ]);
    s->global_batch = atoi(r->f[C_GB]);
    s->micro_batch = r->f[C_MB][0] ? atoi(r->f[C_MB]) : 1;
    sc->mb_known = r->f[C_MB][0] != '\0';
    const char *prec = r->f[C_PREC];
    s->precision = strstr(prec, "FP8") || strstr(prec, "fp8") ? PP_PREC_FP8 : PP_PREC_BF16;
    if (strstr(prec, "fp32 grad accumulation")) s->grad_accum_dtype = PP_GRAD_16_FP32;
    if (is(r->f[C_NAME], "bloom") && !strstr(prec, "bf16")) s->precision = PP_PREC_FP16;
}

/* The framework each source ran, and what it did that the framework's
 * defaults do not say. The framework prices its own behaviours (gradient
 * dtype, buffers, pipeline outputs, overlap): docs/frameworks.md. */
static void framework_rules(const row *r, scenario *sc)
{
    pp_strategy *s = &sc->s;
    const char *nm = r->f[C_NAME];
    int mcore = is(nm, "mcore") || is(nm, "nemo") || is(nm, "mbridge");
    if (mcore || is(nm, "narayanan") || is(nm, "korthikanti")) s->framework = PP_FW_MEGATRON;
    if (is(nm, "bloom") || is(nm, "mtnlg")) s->framework = PP_FW_MEGATRON_DEEPSPEED;
    if (mcore && !r->f[C_ZERO][0]) s->zero = 1; /* their recipes set use_distributed_optimizer */
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
    /* llm-foundry: FSDP with mixed_precision PURE (16-bit gradient
     * reduce-scatter) and flash-attn's fused cross-entropy (loss_fn default
     * 'fused_crossentropy') */
    if (is(nm, "mpt")) {
        s->framework = PP_FW_FSDP;
        s->grad_accum_dtype = PP_GRAD_16;
        s->loss = PP_LOSS_FUSED;
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
    }
}

static int build(const row *r, scenario *sc)
{
    memset(sc, 0, sizeof *sc);
    if (!load_hardware(r, sc)) return 0;
    read_columns(r, sc);
    framework_rules(r, sc);
    schedule_rules(r, sc);
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


/* The GPUs the source read: for BLOOM, the nodes holding the word embedding,
 * stages 0 and p-1 ("Mem = max memory used by the first (last) nodes with
 * the word embedding matrix"); otherwise the peak over all stages. */
static double measured_bytes(const char *name, const pp_memory *m)
{
    if (strncmp(name, "bloom", 5)) return m->peak_bytes;
    double a = m->stages[0].total_bytes, b = m->stages[m->nstages - 1].total_bytes;
    return a > b ? a : b;
}


static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void summary(const char *what, double *e, int n)
{
    if (!n) return;
    qsort(e, (size_t)n, sizeof *e, cmp);
    double med = n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
    printf("| %s | %d | %.1f%% | %.1f%% |\n", what, n, med, e[n - 1]);
}

/* Predicted-against-reported rows of one CSV file. */
typedef struct results {
    double terr[MAXROWS], merr[MAXROWS];
    int nt, nm;
    char tbl_t[MAXROWS][2400], tbl_m[MAXROWS][2400], tbl_o[MAXROWS][2400];
    int rows_t, rows_m, rows_o, n_oom, oom_fits;
} results;

static void dump_if_asked(const row *r, const scenario *sc, const pp_plan *p)
{
    const char *dump = getenv("PARPLAN_VALIDATE_DUMP"); /* debugging: a row's whole plan */
    if (!dump || strcmp(dump, r->f[C_NAME])) return;
    char *js = pp_plan_to_json(&sc->model, &sc->cluster, p);
    if (js) fprintf(stderr, "%s\n", js);
    free(js);
}

static void add_throughput(results *o, const row *r, const scenario *sc, const pp_plan *p, const char *cfg)
{
    double tf = num(r->f[C_TFLOPS]), mfu = num(r->f[C_MFU]), pred, rep;
    const char *unit;
    if (sc->step_s > 0) { /* throughput from time: + means predicted faster */
        double e = 100 * (sc->step_s / p->time.step_s - 1);
        o->terr[o->nt++] = fabs(e);
        snprintf(o->tbl_t[o->rows_t++], 2400, "| %s | %s | %s%s | %.1f | %.1f | %+.1f%% throughput (s/step) |",
                 r->f[C_NAME], r->f[C_MODEL], cfg, p->memory.fits ? "" : " (predicted OOM)", sc->step_s,
                 p->time.step_s, e);
        return;
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
    snprintf(o->tbl_t[o->rows_t++], 2400, "| %s | %s | %s%s | %.1f | %.1f | %+.1f%% %s |", r->f[C_NAME], r->f[C_MODEL],
             cfg, p->memory.fits ? "" : " (predicted OOM)", rep, pred, e, unit);
}

static void add_memory(results *o, const row *r, const pp_plan *p, const char *cfg, int oom)
{
    double mem = num(r->f[C_MEM]);
    if (o->rows_o >= MAXROWS || o->rows_m >= MAXROWS) return;
    if (oom) {
        o->oom_fits += p->memory.fits;
        o->n_oom++;
        snprintf(o->tbl_o[o->rows_o++], 2400, "| %s | %s | %s | %.1f | %s |", r->f[C_NAME], r->f[C_MODEL], cfg,
                 p->memory.peak_bytes / 1073741824.0, p->memory.fits ? "**fits (wrong)**" : "OOM predicted");
    }
    if (mem > 0) {
        double pred = measured_bytes(r->f[C_NAME], &p->memory) / 1073741824.0; /* nvidia-smi prints MiB: GiB */
        double e = 100 * (pred - mem) / mem;
        o->merr[o->nm++] = fabs(e);
        snprintf(o->tbl_m[o->rows_m++], 2400, "| %s | %s | %.1f | %.1f | %+.1f%% | %s |", r->f[C_NAME], cfg, mem, pred,
                 e, p->memory.fits ? "fits" : "OOM predicted");
    }
}

static int run_file(const char *path, results *o)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 0;
    }
    static char line[8192];
    static row r;
    memset(o, 0, sizeof *o);
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
        if (tf <= 0 && mfu <= 0 && mem <= 0 && !oom) continue;
        scenario sc;
        char why[PP_ERR_LEN] = "";
        if (!build(&r, &sc) || !evaluate(&sc, p, why, sizeof why)) {
            snprintf(o->tbl_t[o->rows_t++], 2400, "| %s | %s | — | — | not evaluated: %s |", r.f[C_NAME], r.f[C_MODEL],
                     why[0] ? why : sc.note);
            continue;
        }
        dump_if_asked(&r, &sc, p);
        const pp_strategy *s = &p->strategy;
        char cfg[96];
        snprintf(cfg, sizeof cfg, "tp%d pp%d dp%d%s z%d mb%d %s", s->tp, s->pp, s->dp, s->sp ? " sp" : "", s->zero,
                 s->micro_batch, s->recompute == PP_RECOMPUTE_FULL ? "full" : s->recompute ? "sel" : "none");
        if (tf > 0 || mfu > 0) add_throughput(o, &r, &sc, p, cfg);
        add_memory(o, &r, p, cfg, oom);
    }
    fclose(f);
    free(p);
    return 1;
}

static void print_tables(const results *o, const char *h)
{
    printf("\n%s Throughput\n\n| run | model | configuration | reported | predicted | error |\n|---|---|---|---|---|---|\n", h);
    for (int i = 0; i < o->rows_t; i++) printf("%s\n", o->tbl_t[i]);
    printf("\n%s Memory (BLOOM runs, nvidia-smi, GiB)\n\n| run | configuration | reported | predicted | error | verdict |\n"
           "|---|---|---|---|---|---|\n", h);
    for (int i = 0; i < o->rows_m; i++) printf("%s\n", o->tbl_m[i]);
    printf("\n%s Runs reported out of memory\n\nThe source's configuration, predicted peak (GiB) and verdict; "
           "a prediction of \"fits\" here is wrong.\n\n"
           "| run | model | configuration | predicted peak | verdict |\n|---|---|---|---|---|\n", h);
    for (int i = 0; i < o->rows_o; i++) printf("%s\n", o->tbl_o[i]);
}

#define MAXMORE 4

/* Held-out files: what they hold, in the summary's words. */
static const char *held_out_name(const char *path)
{
    return strstr(path, "bloom_chronicles") ? "more BigScience runs" : "other published runs";
}

static const char *held_out_text(const char *path)
{
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
           "- MosaicML (llm-foundry): flash-attn's fused cross-entropy, MPTConfig's default loss_fn;\n"
           "- Megatron-LM family: fp32 main grads, pipeline outputs freed once sent (deallocate_pipeline_outputs);\n"
           "- Megatron-Core/NeMo/Megatron-Bridge: distributed optimizer (ZeRO-1), sequence parallelism and TP\n"
           "  overlap with TP > 1; the 25.09 Megatron-Bridge table (no precision column) repeats FP8 recipes;\n"
           "  \"PP comm overlap on\" means the interleaved schedule (Megatron-LM disables\n"
           "  --overlap-p2p-communication otherwise), with one block per virtual stage;\n"
           "- figures compared on the source's FLOP basis: hardware TFLOP/s (with recompute) for Narayanan\n"
           "  and BLOOM, MFU for Korthikanti, model TFLOP/s otherwise.\n\n"
           "Constants: each GPU's matmul and attention efficiency is fitted to these rows (Calibration,\n"
           "below), and the unaligned-GEMM factor of materialised attention to three BLOOM rows\n"
           "(docs/time.md); everything else (NCCL efficiency and overlap slowdown, HBM efficiency, memory\n"
           "buffers) is from sources cited in docs/time.md and docs/memory.md and was not tuned here.\n\n"
           "## Summary (absolute percentage error)\n\n| figure | rows | median | worst |\n|---|---|---|---|\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 2 + MAXMORE) {
        fprintf(stderr, "usage: validate published_runs.csv [more_runs.csv ...] > docs/validation.md\n");
        return 2;
    }
    static results ref, more[MAXMORE];
    int nmore = argc - 2;
    if (!run_file(argv[1], &ref)) return 2;
    for (int i = 0; i < nmore; i++)
        if (!run_file(argv[2 + i], &more[i])) return 2;
    print_preamble();
    summary("throughput (TFLOP/s or MFU)", ref.terr, ref.nt);
    summary("memory per GPU", ref.merr, ref.nm);
    char label[160];
    for (int i = 0; i < nmore; i++) {
        snprintf(label, sizeof label, "held out: throughput, %s", held_out_name(argv[2 + i]));
        summary(label, more[i].terr, more[i].nt);
        snprintf(label, sizeof label, "held out: memory, %s", held_out_name(argv[2 + i]));
        summary(label, more[i].merr, more[i].nm);
    }
    printf("\nRuns the source reports as out of memory: %d; predicted to fit: %d.\n", ref.n_oom, ref.oom_fits);
    for (int i = 0; i < nmore; i++)
        printf("Held out, %s reported out of memory: %d; predicted to fit: %d.\n", held_out_name(argv[2 + i]),
               more[i].n_oom, more[i].oom_fits);
    print_tables(&ref, "##");
    for (int i = 0; i < nmore; i++) {
        printf("\n## Held out: %s (%s)\n\n%s\n", held_out_name(argv[2 + i]), argv[2 + i], held_out_text(argv[2 + i]));
        print_tables(&more[i], "###");
    }
    return 0;
}
