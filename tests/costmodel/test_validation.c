/*
 * test_validation.c — the cost model against published runs, end to end:
 * runs tools/validate over tests/reference/published_runs.csv and holds the
 * error summary to its documented bounds (docs/validation.md). The bounds
 * are the targets (tighter where the model does better), so a change
 * that makes predictions worse fails here.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

typedef struct summary {
    int rows;
    double median, worst; /* absolute percentage error */
} summary;

/* Runs tools/validate on the reference runs and the held-out files and
 * hands each output line to `scan`. */
static void each_validate_line(void (*scan)(const char *line, void *ctx), void *ctx)
{
    char cmd[1024], line[4096];
    snprintf(cmd, sizeof cmd, "%s %s/published_runs.csv %s/bloom_chronicles.csv %s/published_more.csv "
             "%s/zero3_scale.csv %s/torchtitan_h100.csv %s/moe_h100.csv", PARPLAN_VALIDATE, PARPLAN_REFERENCE_DIR,
             PARPLAN_DATA_DIR, PARPLAN_DATA_DIR, PARPLAN_DATA_DIR, PARPLAN_DATA_DIR, PARPLAN_DATA_DIR);
    FILE *p = popen(cmd, "r");
    cr_assert(p, "cannot run %s", cmd);
    while (fgets(line, sizeof line, p)) scan(line, ctx);
    pclose(p);
}

typedef struct summary_scan {
    const char *label;
    summary *s;
} summary_scan;

static void scan_summary(const char *line, void *ctx)
{
    summary_scan *q = ctx;
    char fmt[128];
    snprintf(fmt, sizeof fmt, "| %s | %%d | %%lf%%%% | %%lf%%%% |", q->label);
    if (q->s->rows == 0) sscanf(line, fmt, &q->s->rows, &q->s->median, &q->s->worst);
}

static void read_summary(const char *label, summary *s)
{
    memset(s, 0, sizeof *s);
    summary_scan q = {label, s};
    each_validate_line(scan_summary, &q);
    cr_assert_gt(s->rows, 0, "no summary line for %s", label);
}

Test(validation, throughput_against_published_runs)
{
    summary s;
    read_summary("throughput (TFLOP/s or MFU)", &s);
    cr_expect_geq(s.rows, 127, "rows evaluated: %d", s.rows);
    cr_expect_leq(s.median, 7.0, "median %.1f%% (issue 4 target: 10%%)", s.median);
    cr_expect_leq(s.worst, 25.0, "worst %.1f%% (issue 4 target: 25%%)", s.worst);
}

Test(validation, memory_against_bloom_nvidia_smi)
{
    summary s;
    read_summary("memory per GPU", &s);
    cr_expect_geq(s.rows, 21);
    /* issue 3 targets 5% and 15%; we stand at 2.4% and 11.1% */
    cr_expect_leq(s.median, 3.0, "median %.1f%% (issue 3 target: 5%%)", s.median);
    cr_expect_leq(s.worst, 12.0, "worst %.1f%% (issue 3 target: 15%%)", s.worst);
}

static void scan_oom(const char *line, void *ctx)
{
    int *v = ctx;
    sscanf(line, "Runs the source reports as out of memory: %d; predicted to fit: %d.", &v[0], &v[1]);
    sscanf(line, "Held out, more BigScience runs reported out of memory: %d; predicted to fit: %d.", &v[2], &v[3]);
}

/* Issue 3: never predict "fits" for a run the source reports as OOM. */
Test(validation, never_fits_when_the_source_ran_out_of_memory)
{
    int v[4] = {-1, -1, -1, -1}; /* reference: rows, fit; held out: rows, fit */
    each_validate_line(scan_oom, v);
    int n = v[0], fits = v[1], hn = v[2], hfits = v[3];
    cr_expect_geq(n, 2, "OOM rows evaluated: %d", n);
    cr_expect_eq(fits, 0, "%d of %d OOM runs predicted to fit", fits, n);
    /* held out: 206B (h 14336, 82 blocks, 128 heads) is predicted at 67 GiB
     * and fits, though the chronicles report OOM (docs/memory.md); no other */
    cr_expect_geq(hn, 4, "held-out OOM rows evaluated: %d", hn);
    cr_expect_leq(hfits, 1, "%d of %d held-out OOM runs predicted to fit", hfits, hn);
}

/* The chronicles' rows that shared/reference does not carry: nothing was
 * fitted to them (tests/data/bloom_chronicles.csv). */
Test(validation, held_out_bigscience_rows)
{
    summary t, m;
    read_summary("held out: throughput, more BigScience runs", &t);
    read_summary("held out: memory, more BigScience runs", &m);
    cr_expect_geq(t.rows, 40);
    cr_expect_geq(m.rows, 40);
    cr_expect_leq(t.median, 8.0, "held-out throughput median %.1f%%", t.median);
    cr_expect_leq(m.median, 5.0, "held-out memory median %.1f%%", m.median);
}

/* Narayanan 2021 Table 2, ZeRO-3 on 384-2,240 A100s (tests/data/zero3_scale.csv):
 * with DeepSpeed's per-tensor gathers and reduce-scatters of the time 15.2% / 40.1%; priced as
 * today's coalesced DeepSpeed they were 43.6% / 84.9% (throughput per GPU
 * falls ~3x from 384 to 1,536 GPUs; the model's fell 2x). */
static void expect_held_out(const char *figure, int rows, double median, double worst)
{
    summary t;
    read_summary(figure, &t);
    cr_expect_geq(t.rows, rows, "%s: rows %d", figure, t.rows);
    cr_expect_leq(t.median, median, "%s: median %.1f%%", figure, t.median);
    cr_expect_leq(t.worst, worst, "%s: worst %.1f%%", figure, t.worst);
}

Test(validation, held_out_zero3_at_scale)
{
    /* and the table's PTD-P arm (6 runs, 0.9-6.6%) */
    expect_held_out("held out: throughput, ZeRO-3 and PTD-P at scale", 12, 10.0, 45.0);
}

/* MT-NLG 530B, Llama 3 405B, Korthikanti 175B/1T, BLOOM-176B's production
 * run (tests/data/published_more.csv): nothing was fitted to them. The
 * worst is Meta's 131k-token Llama 3 run (cp 16), 29% slow: its attention is
 * most of the step, priced at H100's fitted attention rate (0.15 of peak,
 * about half what kernel benchmarks reach; docs/time.md); it was 16% when
 * the fit also took MoE runs (0.20). */
Test(validation, held_out_other_published_runs)
{
    expect_held_out("held out: throughput, other published runs", 9, 12.0, 30.0);
}

/* Fine-grained MoE on H100 (red team rt16): a known gap, ~46% fast (no
 * small-GEMM or host-launch term); the bound guards it from growing. */
Test(validation, held_out_fine_grained_moe_on_h100)
{
    expect_held_out("held out: throughput, fine-grained MoE on H100", 5, 50.0, 170.0);
}

/* torchtitan's Llama 3.1 8B-405B benchmarks on H100 (tests/data/
 * torchtitan_h100.csv), the allocator's peak reserved memory (no CUDA
 * context, no NCCL buffers) over FSDP2, TP, PP and CP: 6.5% / 11.6% (the
 * 70B FSDP + TP run, -12%). Before FSDP2's accumulated fp32 gradients under
 * pipelining, loss_parallel's 16 bytes a logit and DTensor's gathered GEMM
 * inputs, the 405B pipelined runs were 27-39% under and the 70B runs
 * 19-24%. */
Test(validation, held_out_torchtitan_memory)
{
    expect_held_out("held out: memory, torchtitan on H100", 18, 7.5, 15.0);
}
