/*
 * test_timeline.c — the memory timeline (costmodel/timeline.c) against the
 * cost model it draws:
 *  - laws over many random strategies: the timeline's maximum is the stage's
 *    total_bytes and lies in its peak_phase, every category is >= 0, the
 *    categories add up to the total at every point, the weights never move,
 *    activations rise through the forward and fall through the backward;
 *  - Qwen2.5-1.5B, fp32 AdamW on one GPU, seq 256, by hand from the
 *    parameter count and the byte sizes.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parplan.h"
#include "tests/fixtures.h"

#define REL 1e-9

static int close_rel(double a, double b) { return fabs(a - b) <= REL * fmax(1, fmax(fabs(a), fabs(b))); }

/* Checks every law on one stage. */
static void check_laws(const char *what, const pp_strategy *s, const pp_stage_mem *st, const pp_mem_timeline *t)
{
    cr_assert_gt(t->n, 3, "%s: %d points", what, t->n);
    cr_assert_lt(t->n, PP_TIMELINE_MAX + 1);
    double max = 0;
    for (int i = 0; i < t->n; i++) {
        const pp_mem_point *p = &t->pts[i];
        double sum = 0;
        for (int c = 0; c < PP_MEM_CAT_COUNT; c++) {
            cr_assert(p->bytes[c] >= 0, "%s stage %d point %d: %s = %g < 0", what, st->stage, i,
                      pp_mem_cat_name((pp_mem_cat)c), p->bytes[c]);
            sum += p->bytes[c];
        }
        cr_assert(close_rel(sum, p->total), "%s stage %d point %d: categories %.17g vs total %.17g", what, st->stage,
                  i, sum, p->total);
        cr_assert(close_rel(p->bytes[PP_MEM_PARAMS], st->params_bytes), "%s: weights move", what);
        cr_assert(close_rel(p->bytes[PP_MEM_OPTIMIZER], st->optimizer_bytes), "%s: optimizer states move", what);
        cr_assert(close_rel(p->bytes[PP_MEM_CONTEXT], st->context_bytes), "%s: context moves", what);
        cr_assert(p->bytes[PP_MEM_GRADS] <= st->grads_total_bytes * (1 + REL), "%s: more gradients than the stage has",
                  what);
        cr_assert(p->bytes[PP_MEM_GRADS] >= st->grads_persistent_bytes * (1 - REL), "%s: a persistent buffer freed",
                  what);
        if (p->total > max) max = p->total;
    }
    const pp_mem_point *pk = &t->pts[t->peak];
    cr_assert(close_rel(max, st->total_bytes), "%s stage %d: timeline max %.17g vs total_bytes %.17g (pp %d zero %d)",
              what, st->stage, max, st->total_bytes, s->pp, s->zero);
    cr_assert(close_rel(pk->total, max), "%s: peak index is not the maximum", what);
    cr_assert_eq(pk->phase, st->peak_phase, "%s stage %d: peak in phase %d, cost model says %d", what, st->stage,
                 pk->phase, st->peak_phase);
    /* the peak holds what the cost model says it holds */
    cr_assert(close_rel(pk->bytes[PP_MEM_ACTIVATIONS], st->activations_bytes), "%s: peak activations %g vs %g", what,
              pk->bytes[PP_MEM_ACTIVATIONS], st->activations_bytes);
    cr_assert(close_rel(pk->bytes[PP_MEM_GRADS], st->grads_bytes), "%s stage %d: peak gradients %g vs %g", what,
              st->stage, pk->bytes[PP_MEM_GRADS], st->grads_bytes);
    if (st->peak_phase == PP_PHASE_OPTIMIZER)
        cr_assert(close_rel(pk->bytes[PP_MEM_OPT_TEMP], st->opt_temp_bytes), "%s: the step's temporaries", what);
    /* both phases appear, each reaching the cost model's figure for it */
    double ph[PP_PHASE_COUNT] = {0, 0};
    for (int i = 0; i < t->n; i++)
        if (t->pts[i].total > ph[t->pts[i].phase]) ph[t->pts[i].phase] = t->pts[i].total;
    for (int k = 0; k < PP_PHASE_COUNT; k++)
        cr_assert(close_rel(ph[k], st->phase_bytes[k]), "%s stage %d: phase %d max %.17g vs %.17g", what, st->stage, k,
                  ph[k], st->phase_bytes[k]);
}

/* Activations rise through the forward points and fall through the backward
 * points that follow the peak of the forward/backward, apart from 1F1B's
 * steady state where one forward refills what one backward released. */
static void check_shape(const pp_mem_timeline *t)
{
    int i = 1;
    for (; i < t->n && t->pts[i].event == PP_TL_FORWARD; i++)
        cr_assert_geq(t->pts[i].bytes[PP_MEM_ACTIVATIONS], t->pts[i - 1].bytes[PP_MEM_ACTIVATIONS] * (1 - REL));
    cr_assert_eq(t->pts[i].event, PP_TL_BACKWARD, "the forward ends in a backward");
    cr_assert_eq(t->pts[t->n - 2].event, PP_TL_STEP);
    cr_assert_eq(t->pts[t->n - 2].bytes[PP_MEM_ACTIVATIONS], 0);
}

static unsigned next(unsigned *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

static int pick(unsigned *x, int n) { return (int)(next(x) % (unsigned)n); }

/* A random strategy on a cluster of `gpus`; may be invalid (resolve says). */
static pp_strategy random_strategy(unsigned *x, const pp_model *m, int gpus)
{
    static const int deg[] = {1, 1, 2, 4, 8};
    pp_strategy s;
    pp_strategy_default(&s);
    s.tp = deg[pick(x, 5)];
    s.pp = deg[pick(x, 5)];
    s.cp = pick(x, 4) == 0 ? 2 : 1;
    s.ep = m->experts > 0 ? deg[pick(x, 4)] : 1;
    s.sp = s.tp > 1 && pick(x, 2);
    s.dp = gpus / (s.tp * s.pp * s.cp);
    if (s.dp < 1) s.dp = 1;
    s.zero = pick(x, 4);
    s.offload = pick(x, 6) == 0 ? (pp_offload)(1 + pick(x, 2)) : PP_OFFLOAD_NONE;
    s.recompute = (pp_recompute)pick(x, PP_RECOMPUTE_COUNT);
    if (s.recompute == PP_RECOMPUTE_FULL && pick(x, 2)) s.recompute_layers = 1 + pick(x, 4);
    static const pp_precision prec[] = {PP_PREC_FP32, PP_PREC_BF16, PP_PREC_FP16, PP_PREC_FP8};
    s.precision = prec[pick(x, 4)];
    s.framework = pick(x, 6) == 0 ? PP_FW_AUTO : (pp_framework)pick(x, PP_FW_COUNT);
    s.optimizer = (pp_optimizer)pick(x, PP_OPT_COUNT);
    if (pick(x, 3) == 0) s.grad_accum_dtype = (pp_grad_accum)pick(x, PP_GRAD_COUNT); /* else the framework's */
    if (pick(x, 3) == 0) s.loss = (pp_loss)pick(x, PP_LOSS_COUNT);
    s.attention = pick(x, 5) == 0 ? PP_ATTN_MATERIALISED : PP_ATTN_FLASH;
    s.schedule = (pp_schedule)pick(x, PP_SCHED_COUNT);
    s.virtual_stages = s.schedule == PP_SCHED_INTERLEAVED ? 2 + pick(x, 2) : 1;
    s.micro_batch = 1 + pick(x, 4);
    s.seq = 256 << pick(x, 4);
    s.global_batch = s.micro_batch * s.dp * (1 + pick(x, 3) * s.pp);
    if (pick(x, 3) == 0) s.buf.free_pipeline_outputs = pick(x, 2);
    if (s.framework == PP_FW_PYTORCH) /* plain PyTorch: no ZeRO, no offload, block recompute */
        s.zero = 0, s.offload = PP_OFFLOAD_NONE, s.recompute = s.recompute == PP_RECOMPUTE_SELECTIVE ? PP_RECOMPUTE_FULL : s.recompute;
    s.buf.fragmentation = pick(x, 3) == 0 ? 0 : 0.05 * pick(x, 6);
    if (pick(x, 4) == 0) {
        s.ft.mode = pick(x, 2) ? PP_MODE_QLORA : PP_MODE_LORA;
        s.ft.lora_rank = 8 << pick(x, 3);
        s.ft.lora_targets = pick(x, 2) ? PP_LORA_ALL_LINEAR : PP_LORA_Q | PP_LORA_V;
        if (s.ft.mode == PP_MODE_QLORA) s.precision = PP_PREC_BF16, s.zero = s.zero > 2 ? 2 : s.zero;
    } else if (pick(x, 6) == 0) {
        s.ft.freeze_embeddings = 1;
        s.ft.freeze_layers = pick(x, 4);
    }
    return s;
}

Test(timeline, laws_over_random_strategies)
{
    static const char *const models[] = {"gpt3-1.3b", "llama3-8b", "qwen2.5-1.5b", "mixtral-8x7b", "bloom-176b",
                                         "deepseek-v3"};
    static const struct { const char *name; int gpus; } clusters[] = {
        {"dgx-h100", 8}, {"dgx-a100-80g", 64}, {"workstation-1x-4090", 1}, {"dgx-h100", 1024}};
    unsigned x = 20240917u;
    int valid = 0, stages = 0, opt_peaks = 0, fwd_peaks = 0;
    pp_plan *p = malloc(sizeof *p);
    pp_mem_timeline *t = malloc(sizeof *t);
    cr_assert(p && t);
    pp_model ms[6];
    for (int i = 0; i < 6; i++) ms[i] = fx_model(models[i]);
    int per_fw[PP_FW_COUNT] = {0};
    for (int attempt = 0; attempt < 40000 && valid < 600; attempt++) {
        int mi = pick(&x, 6), ci = pick(&x, 4);
        pp_cluster c = fx_cluster(clusters[ci].name, 0, clusters[ci].gpus);
        pp_strategy s = random_strategy(&x, &ms[mi], clusters[ci].gpus);
        pp_error err = {""};
        if (pp_estimate(&ms[mi], &c, &s, p, &err) != PP_OK) continue;
        valid++;
        per_fw[p->strategy.framework]++;
        char what[128];
        snprintf(what, sizeof what, "#%d %s on %d %s", attempt, models[mi], clusters[ci].gpus, clusters[ci].name);
        for (int i = 0; i < p->memory.nstages; i++) {
            const pp_stage_mem *st = &p->memory.stages[i];
            pp_memory_timeline(&ms[mi], &p->strategy, st, t);
            check_laws(what, &p->strategy, st, t);
            check_shape(t);
            stages++;
            opt_peaks += st->peak_phase == PP_PHASE_OPTIMIZER;
            fwd_peaks += st->peak_phase == PP_PHASE_FWD_BWD;
        }
    }
    /* the sample must exercise both phases and many stages to mean anything */
    cr_expect_geq(valid, 300, "only %d valid random strategies", valid);
    cr_expect_geq(opt_peaks, 20, "only %d optimizer-step peaks", opt_peaks);
    cr_expect_geq(fwd_peaks, 200, "only %d forward/backward peaks", fwd_peaks);
    for (int f = 0; f < PP_FW_COUNT; f++)
        cr_expect_geq(per_fw[f], 30, "only %d strategies of %s", per_fw[f], pp_framework_name((pp_framework)f));
    cr_log_info("timeline laws: %d strategies (pytorch %d, deepspeed %d, megatron %d, megatron-deepspeed %d, fsdp %d), "
                "%d stages (%d fwd/bwd peaks, %d optimizer peaks)", valid, per_fw[0], per_fw[1], per_fw[2], per_fw[3],
                per_fw[4], stages, fwd_peaks, opt_peaks);
    free(p);
    free(t);
}

Test(timeline, pipeline_stages_hold_their_in_flight_micro_batches)
{
    /* 1F1B on 4 stages, 8 micro-batches: stage i holds 4 - i at its peak and
     * runs 8 forward/backward pairs; GPipe holds all 8 */
    pp_model m = fx_model("gpt3-1.3b");
    pp_cluster c = fx_cluster("dgx-a100-80g", 0, 4);
    pp_strategy s;
    pp_strategy_default(&s);
    s.pp = 4;
    s.dp = 1;
    s.global_batch = 8;
    s.seq = 2048;
    pp_plan *p = malloc(sizeof *p);
    pp_mem_timeline *t = malloc(sizeof *t);
    pp_error err = {""};
    cr_assert_eq(pp_estimate(&m, &c, &s, p, &err), PP_OK, "%s", err.msg);
    for (int i = 0; i < 4; i++) {
        pp_memory_timeline(&m, &p->strategy, &p->memory.stages[i], t);
        cr_expect_eq(t->units_held, 4 - i);
        cr_expect_eq(t->units_per_step, 8);
        check_laws("1f1b", &p->strategy, &p->memory.stages[i], t);
    }
    s.schedule = PP_SCHED_GPIPE;
    s.framework = PP_FW_FSDP; /* the framework that runs GPipe */
    s.zero = 2; /* torch.distributed.pipelining keeps a stage's weights gathered */
    cr_assert_eq(pp_estimate(&m, &c, &s, p, &err), PP_OK, "%s", err.msg);
    pp_memory_timeline(&m, &p->strategy, &p->memory.stages[0], t);
    cr_expect_eq(t->units_held, 8);
    free(p);
    free(t);
}

/* ---- Qwen2.5-1.5B, fp32 AdamW, one GPU, seq 256, no parallelism or recompute.
 *
 * Parameters by hand (HF config: h 1536, 12 heads of 128, 2 KV heads, FFN
 * 8960, vocab 151936, 28 blocks, QKV bias, tied embeddings, RMSNorm):
 *   q 1536*1536 + 1536 = 2,360,832   k, v 1536*256 + 256 = 393,472 each
 *   o 1536*1536 = 2,359,296          MLP 3*1536*8960 = 41,287,680
 *   norms 2*1536 = 3,072             block 46,797,824; x 28 = 1,310,339,072
 *   embedding 151936*1536 = 233,373,696; final norm 1,536
 *   N = 1,543,714,304 (the model card's 1.54B)
 * fp32: weights 4N, gradients 4N, AdamW m and v 8N (no master copy). */
#define QWEN_N 1543714304.0

static void qwen(int batch, pp_plan *p, pp_mem_timeline *t, pp_model *m)
{
    *m = fx_model("qwen2.5-1.5b");
    pp_cluster c = fx_cluster("dgx-a100-80g", 0, 1);
    pp_strategy s;
    pp_strategy_default(&s);
    s.precision = PP_PREC_FP32;
    s.optimizer = PP_OPT_ADAMW;
    s.seq = 256;
    s.micro_batch = batch;
    s.global_batch = batch;
    pp_error err = {""};
    cr_assert_eq(pp_estimate(m, &c, &s, p, &err), PP_OK, "%s", err.msg);
    pp_memory_timeline(m, &p->strategy, &p->memory.stages[0], t);
}

Test(timeline, qwen_states_by_hand)
{
    pp_param_counts pc;
    pp_model m = fx_model("qwen2.5-1.5b");
    pp_model_param_counts(&m, &pc);
    cr_assert_eq(pc.total, QWEN_N, "parameters %.0f, by hand %.0f", pc.total, QWEN_N);
    pp_plan *p = malloc(sizeof *p);
    pp_mem_timeline *t = malloc(sizeof *t);
    for (int b = 2; b <= 16; b *= 8) {
        qwen(b, p, t, &m);
        const pp_stage_mem *st = &p->memory.stages[0];
        check_laws("qwen", &p->strategy, st, t);
        const pp_mem_point *step = &t->pts[t->n - 2];
        cr_assert_eq(step->event, PP_TL_STEP);
        cr_expect_eq(step->bytes[PP_MEM_PARAMS], 4 * QWEN_N);
        cr_expect_eq(step->bytes[PP_MEM_OPTIMIZER], 8 * QWEN_N);
        cr_expect_eq(step->bytes[PP_MEM_GRADS], 4 * QWEN_N, "every gradient is there at the step");
        cr_expect_eq(step->bytes[PP_MEM_ACTIVATIONS], 0);
        cr_expect_eq(t->units_held, 1);
    }
    free(p);
    free(t);
}

/* The phase flip (issue 15): plain PyTorch (the default framework on one
 * GPU) frees gradients with zero_grad(set_to_none=True), has no DeepSpeed
 * buckets on one GPU, and torch.optim.AdamW's foreach step holds one
 * parameter-sized temporary (docs/memory.md). So:
 *   batch 16: the peak is the start of the backward, parameters + optimizer
 *             state + activations (and the logits), no gradient yet;
 *   batch 2:  the peak is the optimizer step, parameters + optimizer state +
 *             every gradient + the step's temporary copy, 4 N (fp32). */
Test(timeline, qwen_peak_flips_from_forward_to_optimizer_step)
{
    pp_plan *p = malloc(sizeof *p);
    pp_mem_timeline *t = malloc(sizeof *t);
    pp_model m;
    const double ctx = 1073741824.0, frag = 0.10; /* CUDA context (no NCCL on one GPU); allocator */
    /* batch 16: 4N weights + 8N AdamW moments + activations + the loss at
     * its backward (PyTorch's cross_entropy: log_softmax's fp32 output, the
     * incoming fp32 gradient and the one it makes, 12 bytes x 16 x 256 x
     * 151936), which the engine frees before the blocks' backward working
     * set appears (so the larger of the two counts: the loss here), 10%
     * reserve on all but weights and context */
    qwen(16, p, t, &m);
    const pp_stage_mem *st = &p->memory.stages[0];
    cr_assert_str_eq(pp_framework_name(p->strategy.framework), "pytorch");
    const pp_mem_point *pk = &t->pts[t->peak];
    double logits = 12.0 * 16 * 256 * 151936, act = st->activations_bytes, rec = st->recompute_bytes;
    cr_expect_gt(logits, rec, "one block's working set is smaller than the loss's tensors");
    double want = 12 * QWEN_N + ctx + act + logits + frag * (8 * QWEN_N + act + logits);
    cr_expect_eq(pk->phase, PP_PHASE_FWD_BWD);
    cr_expect(pk->event == PP_TL_FORWARD || pk->event == PP_TL_BACKWARD, "the loss: the forward's end, the backward's start");
    cr_expect_eq(pk->bytes[PP_MEM_PARAMS], 4 * QWEN_N);
    cr_expect_eq(pk->bytes[PP_MEM_OPTIMIZER], 8 * QWEN_N);
    cr_expect_eq(pk->bytes[PP_MEM_GRADS], 0, "gradients were freed by zero_grad(set_to_none=True)");
    cr_expect(close_rel(pk->bytes[PP_MEM_LOSS], logits), "logits %.0f, by hand %.0f", pk->bytes[PP_MEM_LOSS], logits);
    cr_expect(close_rel(pk->bytes[PP_MEM_ACTIVATIONS], act));
    cr_expect_gt(act, 6 * 1073741824.0, "batch 16's activations outweigh the 4N gradients");
    cr_expect(close_rel(pk->total, want), "peak %.0f, by hand %.0f", pk->total, want);
    cr_expect(close_rel(pk->total, st->total_bytes));
    /* batch 2: 4N weights + 8N moments + 4N gradients + the foreach step's 4N
     * temporary + the context, 10% reserve on the 16N the step allocates */
    qwen(2, p, t, &m);
    st = &p->memory.stages[0];
    pk = &t->pts[t->peak];
    want = 20 * QWEN_N + ctx + frag * 16 * QWEN_N;
    cr_expect_eq(pk->phase, PP_PHASE_OPTIMIZER);
    cr_expect_eq(pk->event, PP_TL_STEP);
    cr_expect_eq(pk->bytes[PP_MEM_PARAMS], 4 * QWEN_N);
    cr_expect_eq(pk->bytes[PP_MEM_OPTIMIZER], 8 * QWEN_N);
    cr_expect_eq(pk->bytes[PP_MEM_GRADS], 4 * QWEN_N);
    cr_expect_eq(pk->bytes[PP_MEM_OPT_TEMP], 4 * QWEN_N, "the foreach step's fp32 temporary, one per parameter");
    cr_expect_eq(pk->bytes[PP_MEM_ACTIVATIONS], 0);
    cr_expect_eq(pk->bytes[PP_MEM_COMM], 0, "no DeepSpeed or DDP buckets on one GPU");
    cr_expect(close_rel(pk->total, want), "peak %.0f, by hand %.0f", pk->total, want);
    cr_expect(close_rel(pk->total, st->total_bytes));
    free(p);
    free(t);
}
