/*
 * bench.c — `parplan_bench`, the planner's benchmarks (bench/run.sh runs them
 * and writes bench/results.md):
 *   parplan_bench speed CASE [RUNS] [THREADS]   one scenario of issue 5, the
 *       median wall time of RUNS (>= 5) searches, the search counters, and
 *       the process's peak RSS (getrusage); one markdown table row;
 *   parplan_bench published CSV                 docs/planner_vs_published.md.
 * Each speed case runs in its own process so peak RSS is its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "parplan.h"
#include "published.h"

typedef struct bench_case {
    const char *id, *model, *cluster;
    int nodes, global_batch, seq;
    const char *what;
    int layers, top, pp[2]; /* > 0: the preset's shape with this many blocks; top K; --pp pins */
} bench_case;

/* Issue 5's scenarios; (e) gives no batch: 1024 sequences of 4096 tokens.
 * Issue 14's: (f) the largest global batch plan takes (micro-batch
 * candidates are the divisors of gb/dp, O(sqrt n) each: 16 s before), and
 * (g) a 1,021-block model with --pp 32,64 --top 20, hundreds of stage-split
 * ILPs under the search's ILP budget (219 s before, at 10 s per slow ILP). */
static const bench_case cases[] = {
    {"a", "llama3-8b", "dgx-h100", 1, 512, 8192, "Llama-3-8B, 1 x DGX H100 (8 GPUs), gb 512, seq 8192"},
    {"b", "gpt3-175b", "dgx-a100-80g", 128, 1536, 0, "GPT-3 175B, 128 x DGX A100-80G (1024 GPUs), gb 1536"},
    {"c", "megatron-1t", "dgx-a100-80g", 384, 3072, 0, "Megatron 1T, 384 x DGX A100-80G (3072 GPUs), gb 3072"},
    {"d", "llama3.1-405b", "dgx-h100", 2048, 2048, 8192, "Llama-3.1-405B, 2048 x DGX H100 (16384 GPUs), gb 2048, seq 8192"},
    {"e", "mixtral-8x22b", "dgx-h100", 64, 1024, 4096, "Mixtral-8x22B, 64 x DGX H100 (512 GPUs), gb 1024, seq 4096"},
    {"f", "megatron-1t", "dgx-a100-80g", 8192, 1 << 26, 0, "Megatron 1T, 8192 x DGX A100-80G (65536 GPUs), gb 2^26"},
    {"g", "llama3-8b", "dgx-h100", 64, 512, 0, "Llama-3-8B shape with 1021 blocks, 64 x DGX H100, gb 512, pp 32,64, top 20",
     1021, 20, {32, 64}},
    {"h", "megatron-1t", "dgx-a100-80g", 8192, 64864800, 0,
     "Megatron 1T, 8192 x DGX A100-80G (65536 GPUs), gb 64,864,800 (720 divisors)"},
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int speed(const char *id, int runs, int threads)
{
    const bench_case *k = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (!strcmp(cases[i].id, id)) k = &cases[i];
    if (!k || runs < 1 || runs > 101) {
        fprintf(stderr, "parplan_bench speed: expected a case a-h and 1-101 runs\n");
        return 2;
    }
    pp_model m;
    pp_cluster c;
    pp_error e = {""};
    if (pp_model_load(k->model, &m, &e) || pp_cluster_load(k->cluster, &c, &e) || pp_cluster_resize(&c, k->nodes, 0, &e) ||
        (k->layers && ((m.layers = k->layers), snprintf(m.name, sizeof m.name, "deep%d", k->layers),
                       pp_model_validate(&m, "bench", &e)))) {
        fprintf(stderr, "parplan_bench: %s\n", e.msg);
        return 2;
    }
    pp_search_opts o;
    pp_search_opts_default(&o);
    o.global_batch = k->global_batch;
    o.seq = k->seq;
    o.threads = threads;
    if (k->top) o.top_k = k->top;
    for (int i = 0; i < 2 && k->pp[i]; i++) o.pp.v[o.pp.n++] = k->pp[i];
    double t[101];
    pp_plan_list l;
    memset(&l, 0, sizeof l);
    for (int r = 0; r < runs; r++) {
        pp_plan_list_free(&l);
        double t0 = now();
        pp_status st = pp_plan_search(&m, &c, &o, &l, &e);
        t[r] = now() - t0;
        if (st != PP_OK) {
            fprintf(stderr, "parplan_bench: case %s: %s\n", id, e.msg);
            return 3;
        }
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_d);
    double med = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const pp_search_stats *s = &l.stats;
    const pp_plan *b = &l.plans[0];
    printf("| (%s) %s | %lld | %lld | %lld | %d (%d at the time limit, %d by DP, %d over the budget) | %.3f | %.3f | %.0f | "
           "%.0f | %.1f | %.0f tok/s, MFU %.1f%% |\n", k->id, k->what, s->enumerated, s->pruned_memory, s->costed,
           s->ilp_solved, s->ilp_time_limit_hits, s->ilp_fallbacks, s->ilp_budget_skipped, med, t[runs - 1], s->enumerated / med,
           s->costed / med, ru.ru_maxrss / 1024.0, b->throughput.tokens_per_s, 100 * b->throughput.mfu);
    pp_plan_list_free(&l);
    return 0;
}

static int published(const char *csv)
{
    pub_case *k = calloc(PUB_MAX, sizeof *k);
    int n = k ? pub_run(csv, k, PUB_MAX, 0) : -1;
    if (n < 0) {
        fprintf(stderr, "parplan_bench published: cannot read %s\n", csv);
        free(k);
        return 2;
    }
    pub_markdown(stdout, k, n);
    free(k);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "speed"))
        return speed(argv[2], argc > 3 ? atoi(argv[3]) : 7, argc > 4 ? atoi(argv[4]) : 0);
    if (argc == 3 && !strcmp(argv[1], "published")) return published(argv[2]);
    fprintf(stderr, "usage: parplan_bench speed a|b|c|d|e|f|g [RUNS] [THREADS]\n"
                    "       parplan_bench published tests/reference/published_runs.csv > docs/planner_vs_published.md\n");
    return 2;
}
