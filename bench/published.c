/*
 * published.c — the planner against published configurations: every
 * calibration row of tests/reference/published_runs.csv from Narayanan et
 * al. 2021 Table 1 (narayanan21_*) and the Megatron-Core H100 weak-scaling
 * table (mcore_h100_weak_*). For each, the published configuration is
 * costed by parplan's own model (with its best fitting micro-batch when the
 * source does not print one), and the planner searches the same GPUs,
 * global batch, sequence length, attention kind and bf16. The planner's best
 * must fit and be at least as fast; the published configuration must fit.
 *
 * Used by tests/planner/test_published.c (which includes this file) and by
 * `parplan_bench published CSV`, which writes docs/planner_vs_published.md.
 * Public API only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "published.h"

#define PUB_FIELDS 24
#define PUB_FIELD_LEN 640

typedef struct pub_row {
    char f[PUB_FIELDS][PUB_FIELD_LEN];
    int n;
} pub_row;

enum { PUB_NAME, PUB_MODEL, PUB_GPU, PUB_NGPU, PUB_TP, PUB_PP, PUB_DP, PUB_CP, PUB_EP, PUB_ZERO, PUB_RECOMP, PUB_SEQ,
       PUB_MB, PUB_GB, PUB_PREC, PUB_TFLOPS };

/* One CSV record per line; quotes and "" escapes. */
static int pub_parse_line(const char *s, pub_row *r)
{
    r->n = 0;
    while (r->n < PUB_FIELDS) {
        char *out = r->f[r->n];
        size_t k = 0;
        if (*s == '"') {
            for (s++; *s && !(*s == '"' && s[1] != '"'); s++) {
                if (*s == '"') s++;
                if (k + 1 < PUB_FIELD_LEN) out[k++] = *s;
            }
            if (*s == '"') s++;
        } else {
            for (; *s && *s != ',' && *s != '\n' && *s != '\r'; s++)
                if (k + 1 < PUB_FIELD_LEN) out[k++] = *s;
        }
        out[k] = '\0';
        r->n++;
        if (*s != ',') break;
        s++;
    }
    return r->n;
}

/* The rows this comparison covers. */
static int pub_selected(const pub_row *r)
{
    return !strncmp(r->f[PUB_NAME], "narayanan21_", 12) || !strncmp(r->f[PUB_NAME], "mcore_h100_weak_", 16);
}

/* "megatron-gpt-1.7B" -> "megatron-1.7b", "mcore-gpt-16B" -> "mcore-gpt-16b". */
static void pub_preset(const char *label, char *out, size_t cap)
{
    const char *p = !strncmp(label, "megatron-gpt-", 13) ? label + 13 : label;
    snprintf(out, cap, "%s%.48s", p == label ? "" : "megatron-", p);
    for (char *q = out; *q; q++)
        if (*q >= 'A' && *q <= 'Z') *q = (char)(*q - 'A' + 'a');
}

static int pub_build(const pub_row *r, pub_case *k)
{
    pp_error e = {""};
    char preset[64];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%.60s", r->f[PUB_NAME]);
    pub_preset(r->f[PUB_MODEL], preset, sizeof preset);
    const char *cl = !strcmp(r->f[PUB_GPU], "A100-80GB") ? "dgx-a100-80g" : "dgx-h100";
    if (pp_model_load(preset, &k->m, &e) || pp_cluster_load(cl, &k->c, &e) ||
        pp_cluster_resize(&k->c, 0, atoi(r->f[PUB_NGPU]), &e)) {
        snprintf(k->msg, sizeof k->msg, "%s", e.msg);
        return 0;
    }
    pp_strategy *s = &k->s;
    pp_strategy_default(s);
    s->tp = atoi(r->f[PUB_TP]), s->pp = atoi(r->f[PUB_PP]), s->dp = pp_cluster_gpus(&k->c) / (s->tp * s->pp);
    s->seq = atoi(r->f[PUB_SEQ]), s->global_batch = atoi(r->f[PUB_GB]), s->precision = PP_PREC_BF16;
    s->grad_accum_dtype = PP_GRAD_FP32; /* Megatron's fp32 main_grad */
    if (!strncmp(k->name, "narayanan", 9)) {
        /* PTD-P: full recompute, no ZeRO, scores materialised (before
         * FlashAttention), gradients reduced after the pipeline flush */
        s->recompute = PP_RECOMPUTE_FULL, s->zero = 0, s->attention = PP_ATTN_MATERIALISED, s->overlap_dp = 0;
    } else {
        /* Megatron-Core recipes: distributed optimizer (ZeRO-1), SP and TP
         * overlap with TP, flash; "PP comm overlap on" implies the interleaved
         * schedule (tools/validate.c gives the same rules) */
        s->zero = 1, s->sp = s->tp > 1, s->overlap_tp = s->tp > 1, s->attention = PP_ATTN_FLASH;
        if (s->pp > 1 && k->m.layers % s->pp == 0) {
            s->schedule = PP_SCHED_INTERLEAVED;
            s->virtual_stages = k->m.layers / s->pp;
        }
    }
    k->reported_tflops = atof(r->f[PUB_TFLOPS]);
    return 1;
}

/* The published strategy at its best fitting micro-batch: one whose peak
 * interval stays under the memory when there is one, as the planner ranks
 * "tight" plans after those that fit. */
static void pub_cost_published(pub_case *k)
{
    pp_plan *p = malloc(sizeof *p);
    pp_error e = {""};
    int per = k->s.global_batch / k->s.dp;
    for (int mb = 1; p && mb <= per; mb++) {
        if (per % mb) continue;
        pp_strategy s = k->s;
        s.micro_batch = mb;
        if (pp_estimate(&k->m, &k->c, &s, p, &e) != PP_OK || !p->memory.fits) continue;
        int safe = p->uncertainty.fit == PP_FIT_FITS, had = k->published_fits && k->published.uncertainty.fit == PP_FIT_FITS;
        if (!k->published_fits || safe > had || (safe == had && p->time.step_s < k->published.time.step_s))
            k->published = *p;
        k->published_fits = 1;
    }
    if (!k->published_fits) snprintf(k->msg, sizeof k->msg, "published configuration does not fit: %.400s", e.msg);
    free(p);
}

/* The planner on the same GPUs, batch, sequence, attention and bf16, with
 * the framework features the published run had (TP overlap, DP overlap,
 * fp32 main grads). */
static void pub_search(pub_case *k, int threads)
{
    pp_search_opts o;
    pp_search_opts_default(&o);
    o.global_batch = k->s.global_batch;
    o.seq = k->s.seq;
    o.top_k = 1;
    o.threads = threads;
    o.precisions = 1u << PP_PREC_BF16;
    o.base.attention = k->s.attention;
    o.base.overlap_tp = k->s.overlap_tp;
    o.base.overlap_dp = k->s.overlap_dp;
    o.base.grad_accum_dtype = k->s.grad_accum_dtype;
    pp_plan_list l;
    pp_error e = {""};
    if (pp_plan_search(&k->m, &k->c, &o, &l, &e) == PP_OK) {
        k->best = l.plans[0];
        k->found = 1;
    } else {
        snprintf(k->msg, sizeof k->msg, "search: %.480s", e.msg);
    }
    k->stats = l.stats;
    pp_plan_list_free(&l);
}

/* Reads the CSV and evaluates every selected row; returns the count, -1 if
 * the file cannot be read. */
int pub_run(const char *csv, pub_case *out, int cap, int threads)
{
    FILE *f = fopen(csv, "r");
    if (!f) return -1;
    static char line[16384];
    pub_row *r = malloc(sizeof *r);
    int n = 0;
    if (!fgets(line, sizeof line, f)) n = -1;
    while (n >= 0 && r && n < cap && fgets(line, sizeof line, f)) {
        if (pub_parse_line(line, r) <= PUB_TFLOPS || !pub_selected(r)) continue;
        pub_case *k = &out[n++];
        if (!pub_build(r, k)) continue;
        pub_cost_published(k);
        pub_search(k, threads);
    }
    free(r);
    fclose(f);
    return n;
}

static void pub_config(const pp_plan *p, char *buf, size_t cap)
{
    const pp_strategy *s = &p->strategy;
    snprintf(buf, cap, "tp %d%s pp %d dp %d cp %d, ZeRO-%d, mb %d, %s%s%s, %s", s->tp, s->sp ? "+sp" : "", s->pp, s->dp,
             s->cp, s->zero, s->micro_batch, pp_recompute_name(s->recompute),
             s->recompute == PP_RECOMPUTE_FULL && s->per_stage_recompute ? " (per stage)" : "",
             s->offload ? ", offload" : "", pp_schedule_name(s->schedule));
}

/* The markdown section. */
void pub_markdown(FILE *out, const pub_case *k, int n)
{
    fprintf(out, "# Planner vs published configurations\n\n"
                 "Generated by `parplan_bench published tests/reference/published_runs.csv` (bench/published.c); "
                 "do not edit by hand. The same comparison is a test (tests/planner/test_published.c).\n\n"
                 "Rows: Narayanan et al. 2021 Table 1 (A100-80GB, PTD-P: full recompute, no ZeRO, materialised "
                 "attention) and the Megatron-Core H100 weak-scaling table (ZeRO-1 distributed optimizer, sequence "
                 "parallelism, flash attention, seq 4096). Both are costed by parplan's own model; the published "
                 "micro-batch, when not printed, is the fastest that fits. The planner searches the same GPUs, "
                 "global batch, sequence length and attention kind in bf16. Throughput is predicted model TFLOP/s "
                 "per GPU; \"reported\" is the source's figure (hardware FLOPs for Narayanan, model FLOPs for "
                 "Megatron-Core), for orientation only.\n\n"
                 "| run | GPUs | published configuration | fits | predicted | planner's best | predicted | gain | reported |\n"
                 "|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < n; i++) {
        char a[160] = "—", b[160] = "—";
        if (k[i].published_fits) pub_config(&k[i].published, a, sizeof a);
        if (k[i].found) pub_config(&k[i].best, b, sizeof b);
        double pa = k[i].published_fits ? k[i].published.throughput.model_tflops_per_gpu : 0;
        double pb = k[i].found ? k[i].best.throughput.model_tflops_per_gpu : 0;
        fprintf(out, "| %s | %d | %s | %s | %.1f | %s | %.1f | %+.1f%% | %.1f |\n", k[i].name, pp_cluster_gpus(&k[i].c), a,
                k[i].published_fits ? "yes" : "**no**", pa, b, pb, pa > 0 ? 100 * (pb - pa) / pa : 0,
                k[i].reported_tflops);
    }
    fprintf(out, "\nWhere the planner's best differs, it is because parplan's cost model predicts it to be faster; "
                 "`parplan plan --explain` shows the term that moves most. Gains are model-relative, not measured "
                 "speed-ups.\n");
}
