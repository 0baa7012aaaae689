/*
 * test_time.c — the step-time model against hand calculations written out
 * here: Narayanan et al. 2021 Eq. 3 and Korthikanti et al. 2022's FLOP
 * counts, every collective formula, the bubble formulas, and calibration to
 * one measured run (Korthikanti Table 5) predicting another.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/costmodel.h"
#include "costmodel/framework.h"
#include "tests/fixtures.h"

static void estimate(const pp_model *m, const pp_cluster *c, pp_strategy *s, pp_plan *p)
{
    pp_error err = {""};
    cr_assert_eq(pp_estimate(m, c, s, p, &err), PP_OK, "%s", err.msg);
}

/* Transformer Engine runs cuDNN's fused attention on Hopper (1.6x the
 * FlashAttention-2 class: FlashAttention-3 paper Figs. 5 and 7); the
 * attention core of a Megatron plan takes 1/1.6 of the same core under
 * FSDP there, and the same time on an A100 (TE prefers FlashAttention on
 * sm80). */
Test(time, megatron_runs_cudnn_attention_on_hopper)
{
    pp_model m = fx_model("llama3-8b");
    const char *clusters[] = {"dgx-h100", "dgx-a100-80g"};
    const double want[] = {1 / 1.6, 1};
    for (int k = 0; k < 2; k++) {
        pp_cluster c = fx_cluster(clusters[k], 1, 0);
        double t[2];
        for (int f = 0; f < 2; f++) {
            pp_strategy s;
            pp_strategy_default(&s);
            s.framework = f ? PP_FW_MEGATRON : PP_FW_FSDP;
            s.dp = 8, s.seq = 8192, s.global_batch = 8;
            t[f] = pp__attn_core_fwd_s(&m, &c, &s);
        }
        cr_expect(t[0] > 0 && fabs(t[1] / t[0] - want[k]) < 1e-12, "%s: megatron %.6g s, fsdp %.6g s", clusters[k], t[1],
                  t[0]);
    }
}

/* Narayanan Eq. 3: F = 96 B s l h^2 (1 + s/6h + V/16lh) per iteration with
 * full recomputation (4 passes over the blocks, 3 over the LM head). */
Test(time, narayanan_eq3_hardware_flops)
{
    pp_model m = fx_model("megatron-145.6b");
    pp_cluster c = fx_cluster("dgx-a100-80g", 0, 1536);
    pp_strategy s;
    pp_strategy_default(&s);
    s.tp = 8, s.pp = 8, s.dp = 24, s.seq = 2048, s.global_batch = 2304;
    s.recompute = PP_RECOMPUTE_FULL;
    s.attention = PP_ATTN_MATERIALISED;
    pp_plan p;
    estimate(&m, &c, &s, &p);
    double B = 2304, S = 2048, l = 80, h = 12288, V = 51200;
    double eq3 = 96 * B * S * l * h * h * (1 + S / (6 * h) + V / (16 * l * h));
    double got = p.throughput.hardware_flops_per_step;
    /* ours also counts bias adds as FLOPs: allow 0.1% */
    cr_expect(fabs(got / eq3 - 1) < 1e-3, "hardware FLOPs %.6g vs Eq. 3 %.6g", got, eq3);
    /* model FLOPs: 3 passes, Korthikanti Eq. 7: 72 B s l h^2 (1 + s/6h + V/12lh) */
    double eq7 = 72 * B * S * l * h * h * (1 + S / (6 * h) + V / (12 * l * h));
    cr_expect(fabs(p.throughput.model_flops_per_step / eq7 - 1) < 1e-3);
}

/* Selective recompute re-runs QK^T and AV: 2 * 2 B s^2 h per block on top
 * of the model FLOPs (Korthikanti Sec. 5, hardware vs model FLOPs). */
Test(time, korthikanti_selective_hardware_flops)
{
    pp_model m = fx_model("korthikanti-22b");
    pp_cluster c = fx_cluster("dgx-a100-80g", 0, 8);
    pp_strategy s;
    pp_strategy_default(&s);
    s.tp = 8, s.dp = 1, s.sp = 1, s.seq = 2048, s.micro_batch = 4, s.global_batch = 4;
    s.recompute = PP_RECOMPUTE_SELECTIVE;
    s.attention = PP_ATTN_MATERIALISED; /* Korthikanti's runs predate flash attention */
    pp_plan p;
    estimate(&m, &c, &s, &p);
    double B = 4, S = 2048, l = 48, h = 6144, V = 51200;
    double model = 72 * B * S * l * h * h * (1 + S / (6 * h) + V / (12 * l * h));
    double hw = model + 4 * B * S * S * h * l;
    cr_expect(fabs(p.throughput.hardware_flops_per_step / hw - 1) < 1e-3, "%.6g vs %.6g",
              p.throughput.hardware_flops_per_step, hw);
}

/* Collectives: a 4-member NVLink group, 100 GB/s, 2 us per step. */
Test(time, collective_formulas)
{
    pp__comm_group g = {4, 100e9, 2e-6, 0};
    double S = 1e9, base = 8e-6; /* NCCL base latency per call */
    cr_expect(fabs(pp__allreduce_s(&g, S) - (base + 2 * 3 * 2e-6 + 2 * 3.0 / 4 * S / 100e9)) < 1e-12);
    cr_expect(fabs(pp__allgather_s(&g, S) - (base + 3 * 2e-6 + 3.0 / 4 * S / 100e9)) < 1e-12);
    cr_expect(fabs(pp__reducescatter_s(&g, S) - (base + 3 * 2e-6 + 3.0 / 4 * S / 100e9)) < 1e-12);
    cr_expect(fabs(pp__alltoall_s(&g, S) - (base + 3 * 2e-6 + 3.0 / 4 * S / 100e9)) < 1e-12);
    cr_expect(fabs(pp__sendrecv_s(&g, S) - (base + 2e-6 + S / 100e9)) < 1e-12);
    /* across nodes NCCL's tree wins on latency for small messages: 64
     * ranks, 8 per node, 1 KB: ring 2*63 steps of 5 us vs a chain of 8 in
     * each node (7 steps of 3 us) and a tree over 8 nodes (3 steps of 5
     * us), up and down: NCCL tuning.cc 2((nRanks/nNodes-1) intraLat +
     * log2(nNodes) interLat) */
    pp__comm_group x = {64, 10e9, 5e-6, 1, 8, 8, 3e-6};
    double tree = base + 2 * (7 * 3e-6 + 3 * 5e-6) + 2 * 1e3 / 10e9;
    cr_expect(fabs(pp__allreduce_s(&x, 1e3) - tree) < 1e-12);
    pp__comm_group one = {1, 100e9, 2e-6, 0};
    cr_expect_eq(pp__allreduce_s(&one, S), 0, "a group of one does not communicate");
}

Test(time, group_tiers_follow_rank_order)
{
    pp_cluster c = fx_cluster("dgx-h100", 0, 64);
    pp__comm_group tp, dp;
    pp__group(&c, 8, 1, &tp);  /* TP=8, stride 1: one node, NVLink */
    pp__group(&c, 8, 8, &dp);  /* DP=8, stride 8: one member per node, NICs */
    cr_expect_eq(tp.crosses_nodes, 0);
    cr_expect(fabs(tp.bw - 450e9 * 0.80) < 1, "NVLink4 450 GB/s per direction x 0.80: %g", tp.bw);
    cr_expect_eq(dp.crosses_nodes, 1);
    cr_expect(fabs(dp.bw - 50e9 * 0.74) < 1, "one 400 Gb/s NIC per GPU x 0.74: %g", dp.bw);
}

/* A group spanning two 64-GPU NVLink domains of 4-GPU trays (Megatron-
 * Bridge's GB200 segment): 32 members per domain drive 32 NICs, so the ring
 * runs at the NVLink rate (900 GB/s x 0.80), not at the 2 NICs of a tray
 * (2 x 50 GB/s x 0.74 = 74 GB/s, what it was priced at before). */
Test(time, ring_leaves_an_nvlink_domain_through_its_members_nics)
{
    pp_cluster c = fx_gb200_segment();
    pp__comm_group fsdp, cross;
    pp__group(&c, 64, 2, &fsdp);
    cr_expect(fabs(fsdp.bw - 900e9 * 0.80) < 1, "NVLink-bound: %g", fsdp.bw);
    pp__group(&c, 2, 64, &cross); /* one member per domain: its own NIC */
    cr_expect(fabs(cross.bw - 50e9 * 0.74) < 1, "one NIC: %g", cross.bw);
}

/* DeepSpeed's ZeRO-3 before v0.4 (zero3_per_tensor): one all-gather per
 * parameter tensor, 12 per GPT block (2 LayerNorms x weight and bias, fused
 * QKV, projection, two MLP maps, each with its bias; 6 for Llama: 2 RMSNorm
 * weights, QKV, projection, fused gate+up, down), each after a 380 us host
 * stall (issue #1069). GPT-3 175B, ZeRO-3 over 384 and 1,536 A100s at one
 * micro-batch per GPU, full recompute, no overlap, as Narayanan Table 2:
 * the per-tensor calls cost at least their host stalls, 3 gathers (forward,
 * backward, recompute) x (96 x 12 + 4 edge tensors), and the gap to the
 * coalesced DeepSpeed grows with the ring's (n - 1) latency. */
Test(time, legacy_zero3_gathers_each_tensor)
{
    pp_model m = fx_model("gpt3-175b"), l3 = fx_model("llama3-8b");
    cr_expect_eq(pp__block_tensors(&m, PP_BLOCK_DENSE), 12);
    cr_expect_eq(pp__block_tensors(&l3, PP_BLOCK_DENSE), 6);
    double gap[2];
    int gpus[2] = {384, 1536};
    for (int i = 0; i < 2; i++) {
        pp_cluster c = fx_cluster("dgx-a100-80g", 0, gpus[i]);
        pp_strategy s;
        pp_strategy_default(&s);
        s.framework = PP_FW_MEGATRON_DEEPSPEED;
        s.dp = gpus[i], s.zero = 3, s.seq = 2048, s.global_batch = 1536, s.micro_batch = 1536 / gpus[i];
        s.recompute = PP_RECOMPUTE_FULL, s.attention = PP_ATTN_MATERIALISED, s.overlap_dp = 0;
        pp_plan now, old;
        estimate(&m, &c, &s, &now);
        s.buf.zero3_per_tensor = 1;
        estimate(&m, &c, &s, &old);
        double host = 3 * (96 * 12 + 4) * 380e-6;
        gap[i] = old.time.step_s - now.time.step_s;
        cr_expect_gt(gap[i], host, "%d GPUs: legacy %.3f s vs %.3f s, host stalls alone %.3f s", gpus[i],
                     old.time.step_s, now.time.step_s, host);
        cr_expect(fabs(old.time.dp_comm_exposed_s - old.time.dp_comm_s) < 1e-9, "no overlap: all exposed");
    }
    cr_expect_gt(gap[1], 2 * gap[0], "the per-call ring latency grows with the ranks: %.3f vs %.3f s", gap[1], gap[0]);
}

/* Brute force: Megatron's 1F1B on p stages, m micro-batches, stage i taking
 * fwd[i] and bwd[i]: stage i warms up with min(p - i - 1, m) forwards, then
 * alternates one forward and one backward, then drains; a forward waits for
 * the previous stage's, a backward for the next stage's. The makespan. */
static double sim_1f1b(int p, int m, const double *fwd, const double *bwd)
{
    enum { MAXP = 16, MAXM = 64 };
    double fend[MAXP][MAXM] = {{0}}, bend[MAXP][MAXM] = {{0}}, free_at[MAXP] = {0};
    int op[MAXP][2 * MAXM], next[MAXP] = {0}; /* op: +j+1 forward j, -(j+1) backward j */
    cr_assert(p <= MAXP && m <= MAXM);
    for (int i = 0; i < p; i++) {
        int w = p - i - 1 < m ? p - i - 1 : m, k = 0, f = 0, b = 0;
        for (; f < w; f++) op[i][k++] = f + 1;
        while (f < m) op[i][k++] = ++f, op[i][k++] = -(++b);
        while (b < m) op[i][k++] = -(++b);
    }
    for (int left = p * 2 * m; left > 0;)
        for (int i = 0; i < p; i++) {
            if (next[i] == 2 * m) continue;
            int o = op[i][next[i]], j = (o > 0 ? o : -o) - 1;
            double ready;
            if (o > 0) {
                if (i > 0 && (next[i - 1] <= 0 || fend[i - 1][j] == 0)) continue;
                ready = i > 0 ? fend[i - 1][j] : 0;
            } else {
                if (i < p - 1 && bend[i + 1][j] == 0) continue;
                ready = i < p - 1 ? bend[i + 1][j] : fend[i][j];
            }
            double start = ready > free_at[i] ? ready : free_at[i];
            free_at[i] = start + (o > 0 ? fwd[i] : bwd[i]);
            if (o > 0) fend[i][j] = free_at[i];
            else bend[i][j] = free_at[i];
            next[i]++, left--;
        }
    double end = 0;
    for (int i = 0; i < p; i++) end = free_at[i] > end ? free_at[i] : end;
    return end;
}

/* Bubble: fill and drain pass once through every stage but the slowest,
 * which sets the steady state: the other stages' micro-batch times summed,
 * 1/v of it interleaved. Checked against the brute-force schedule on the red
 * team's uneven split (session 28: 10 blocks of Llama-3-8B shape with a 256k
 * vocabulary as 1,4,4,1 over 4 stages, 4 micro-batches), where charging
 * (p-1) times the slowest stage was 34% over; backward twice the forward. */
Test(time, bubble_fractions)
{
    pp_model m = fx_model("llama3-8b");
    m.layers = 10, m.vocab = 256000;
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s;
    pp_strategy_default(&s);
    s.framework = PP_FW_MEGATRON, s.tp = 2, s.sp = 1, s.pp = 4, s.dp = 1, s.global_batch = 4, s.seq = 8192;
    s.recompute = PP_RECOMPUTE_NONE, s.precision = PP_PREC_BF16, s.overlap_tp = 0;
    int split[4] = {1, 4, 4, 1};
    memcpy(s.stage_layers, split, sizeof split);
    pp_plan p;
    estimate(&m, &c, &s, &p);
    cr_assert_eq(p.strategy.grad_accum, 4);
    double fwd[4], bwd[4], tmax = p.time.stage_microbatch_s[p.time.slowest_stage];
    for (int i = 0; i < 4; i++) fwd[i] = p.time.stage_microbatch_s[i] / 3, bwd[i] = 2 * fwd[i];
    double sim = sim_1f1b(4, 4, fwd, bwd), model = 4 * tmax + p.time.bubble_s;
    cr_expect(fabs(model / sim - 1) < 0.01, "model %.4f s, schedule %.4f s", model, sim);
    cr_expect(3 * tmax > 1.2 * p.time.bubble_s, "the uneven stages' bubble is well below (p-1) t_max");
    /* even stages (a negligible vocabulary, 8 blocks a stage): (p-1) t, and
     * (p-1)/v t interleaved (Narayanan et al. 2021 Sec. 2.2) */
    m.layers = 32, m.vocab = 8;
    memset(s.stage_layers, 0, sizeof s.stage_layers);
    for (int v = 1; v <= 2; v++) {
        s.schedule = v > 1 ? PP_SCHED_INTERLEAVED : PP_SCHED_1F1B, s.virtual_stages = v;
        estimate(&m, &c, &s, &p);
        tmax = p.time.stage_microbatch_s[p.time.slowest_stage];
        cr_expect(fabs(p.time.bubble_s / (3.0 / v * tmax) - 1) < 2e-3, "v %d: %.6g s vs 3/v x %.6g s", v,
                  p.time.bubble_s, tmax);
    }
}

Test(time, terms_add_up)
{
    pp_model m = fx_model("llama3-70b");
    pp_cluster c = fx_cluster("dgx-h100", 0, 64);
    pp_strategy s;
    pp_strategy_default(&s);
    s.tp = 4, s.pp = 4, s.dp = 4, s.sp = 1, s.zero = 1, s.seq = 8192, s.global_batch = 128;
    pp_plan p;
    estimate(&m, &c, &s, &p);
    const pp_time *t = &p.time;
    double sum = t->compute_s + t->recompute_s + t->tp_comm_s + t->cp_comm_s + t->ep_comm_s + t->pp_comm_s +
                 t->dp_comm_exposed_s + t->bubble_s + t->optimizer_s + t->offload_s;
    cr_expect(fabs(sum - t->step_s) < 1e-9 * t->step_s);
    cr_expect_gt(t->tp_comm_s, 0);
    cr_expect_gt(p.throughput.mfu, 0.2);
    cr_expect_lt(p.throughput.mfu, 0.8);
}

/* Calibrate on Korthikanti Table 5's full-recompute baseline of the 22B
 * model (1.42 s per iteration), then predict the selective + SP column
 * (1.10 s) with the fitted efficiency. */
Test(time, calibrate_on_one_run_predicts_another)
{
    pp_model m = fx_model("korthikanti-22b");
    pp_cluster c = fx_cluster("dgx-a100-80g", 0, 8);
    pp_strategy s;
    pp_strategy_default(&s);
    s.tp = 8, s.dp = 1, s.seq = 2048, s.micro_batch = 4, s.global_batch = 4;
    s.recompute = PP_RECOMPUTE_FULL;
    s.attention = PP_ATTN_MATERIALISED;
    pp_plan p;
    estimate(&m, &c, &s, &p);
    pp_error err = {""};
    cr_assert_eq(pp_calibrate(&m, &c, &p.strategy, 1.42, &err), PP_OK, "%s", err.msg);
    estimate(&m, &c, &s, &p);
    cr_expect(fabs(p.time.step_s - 1.42) < 1e-6, "calibrated step %g", p.time.step_s);
    s.recompute = PP_RECOMPUTE_SELECTIVE;
    s.sp = 1;
    estimate(&m, &c, &s, &p);
    cr_expect(fabs(p.time.step_s / 1.10 - 1) < 0.10, "predicted %.3f s vs published 1.10 s", p.time.step_s);
    /* an impossible measurement is refused, not fitted */
    cr_expect_eq(pp_calibrate(&m, &c, &p.strategy, 1e-3, &err), PP_ERR_INPUT);
}

/* Materialised attention core, by hand: per head two batched GEMMs (QK^T:
 * s x hd x s; AV: s x s x hd), 2 FLOPs per multiply-add, at
 * peak x matmul_eff x d/(d+64) with d = hd, times 0.10 when hd is not a
 * multiple of 8; plus the score passes at HBM speed: 4 bytes per score
 * (softmax read + write), 5 more with dropout (mask + dropout read/write).
 * BLOOM-like h 13824: 64 heads (hd 216, aligned) vs 128 (hd 108, unaligned). */
Test(time, materialised_attention_core_by_hand)
{
    pp_cluster c = fx_cluster("dgx-a100-80g", 0, 8);
    pp_model m = fx_model("bloom-176b");
    m.hidden = 13824;
    m.dropout = 0.1;
    pp_strategy s;
    pp_strategy_default(&s);
    s.attention = PP_ATTN_MATERIALISED;
    s.micro_batch = 2;
    s.seq = 2048;
    s.tp = 4;
    double peak = c.gpu.peak_flops[PP_PREC_BF16], mm = pp__matmul_eff(&c.gpu), bw = pp__hbm_bw_eff(&c.gpu);
    double sq = 2048, tok = 2 * sq;
    for (int heads = 64; heads <= 128; heads *= 2) {
        m.heads = m.kv_heads = heads;
        double hd = 13824.0 / heads, a = heads / 4.0;
        double eff = mm * hd / (hd + 64) * (fmod(hd, 8) != 0 ? 0.10 : 1);
        double bmm = a * (tok / sq) * 2 * (2 * sq * hd * sq) / (peak * eff);
        double elem = tok * sq * a * (4 + 5) / bw;
        double got = pp__attn_core_fwd_s(&m, &c, &s);
        cr_expect_float_eq(got, bmm + elem, 1e-9 * got, "%d heads: %g s, by hand %g s", heads, got, bmm + elem);
    }
}

/* Overlap costs compute: NCCL's CTAs take SMs while a collective runs beside
 * a GEMM. exposed = (comm - hidden) + slowdown x hidden, hidden = min(comm,
 * compute that can cover it). */
/* Megatron's distributed optimizer, by hand: Llama-3-8B on two DGX H100,
 * dp 16, bf16 with an fp32 main_grad, Megatron's bucket max(4e7, 1.6e7) =
 * 4e7 elements. Tensors whole in backward order: the output layer (525.3M)
 * closes a bucket; each block's down projection (58.7M) and gate/up
 * (117.4M) close one each, its output projection (16.8M) and QKV (25.2M)
 * one together: 3 a block; the embedding (525.3M) the last. 1 + 96 + 1 = 98
 * ring reduce-scatters of 4 bytes a weight and 98 all-gathers of 2, each
 * paying its latency; the embedding's bucket, reduced last and gathered
 * first, is exposed whole (the norms, in no GEMM, are left out of the
 * buckets: 1e-4). One bucket of everything (1e12) is two calls. */
Test(time, distributed_optimizer_buckets_by_hand)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 0, 16);
    pp__comm_group g;
    pp__group(&c, 16, 1, &g);
    double P = 0, E = 128256.0 * 4096, buckets[] = {0, 1e12}, calls[] = {98, 1};
    pp_plan *p = malloc(sizeof *p);
    for (int i = 0; i < 2; i++) {
        pp_strategy s;
        pp_strategy_default(&s);
        s.framework = PP_FW_MEGATRON;
        s.dp = 16, s.zero = 1, s.seq = 8192, s.global_batch = 16, s.buf.reduce_bucket = buckets[i];
        estimate(&m, &c, &s, p);
        P = p->params_total;
        double k = calls[i], rs = k * pp__reducescatter_s(&g, 4 * P / k), ag = k * pp__allgather_s(&g, 2 * P / k);
        cr_expect(fabs(p->time.dp_comm_s - (rs + ag)) < 1e-9 * p->time.dp_comm_s, "bucket %g: DP %.9g s, by hand %.9g s",
                  buckets[i], p->time.dp_comm_s, rs + ag);
        double last = i ? P : E, floor_s = pp__reducescatter_s(&g, 4 * last) + pp__allgather_s(&g, 2 * last);
        cr_expect(p->time.dp_comm_exposed_s >= floor_s * (1 - 1e-4) && p->time.dp_comm_exposed_s <= p->time.dp_comm_s,
                  "bucket %g: exposed %.9g s, at least the last bucket's %.9g s", buckets[i], p->time.dp_comm_exposed_s, floor_s);
    }
    free(p);
}

Test(time, overlapped_collectives_slow_compute)
{
    cr_expect_float_eq(pp__exposed(0.2, 10, 4), 6 + 0.2 * 4, 1e-12);
    cr_expect_float_eq(pp__exposed(0.2, 3, 10), 0.2 * 3, 1e-12);
    cr_expect_float_eq(pp__exposed(0, 3, 10), 0, 1e-12);
    cr_expect_float_eq(pp__exposed(0.2, 3, 0), 3, 1e-12);

    /* ZeRO-3 on 2 nodes, gathers well under the compute: the exposed part is
     * exactly the default 0.20 of the traffic, and nothing with "0" */
    pp_model m = fx_model("llama2-7b");
    pp_cluster c = fx_cluster("dgx-h100", 0, 16);
    pp_strategy s;
    pp_strategy_default(&s);
    s.dp = 16;
    s.zero = 3;
    s.micro_batch = 4;
    s.global_batch = 128;
    s.seq = 4096;
    pp_plan *p = malloc(sizeof *p);
    estimate(&m, &c, &s, p);
    cr_assert_gt(p->time.dp_comm_s, 0);
    cr_assert_lt(p->time.dp_comm_s, p->time.compute_s, "the case needs comm under compute");
    cr_expect_float_eq(p->time.dp_comm_exposed_s, 0.20 * p->time.dp_comm_s, 1e-9 * p->time.dp_comm_s);
    c.nccl_overlap = -1; /* the cluster file's "overlap_slowdown": 0 */
    pp_strategy_default(&s);
    s.dp = 16, s.zero = 3, s.micro_batch = 4, s.global_batch = 128, s.seq = 4096;
    estimate(&m, &c, &s, p);
    cr_expect_float_eq(p->time.dp_comm_exposed_s, 0, 1e-12);
    free(p);
}

/* Context parallelism's three kinds, per block on one GPU (no recompute):
 * all-gather: K,V gathered in forward and again in backward, dK,dV
 * reduce-scattered: 2 AG + 1 RS of the whole sequence's K,V, exposed;
 * ring: (cp-1) send/recv of this rank's K,V chunk x 3 (fwd K,V; bwd K,V +
 * dK,dV), hidden under 3.5x the attention core but for the NCCL slowdown;
 * a2a (Ulysses): all-to-alls of Q, K, V and the output in forward, the
 * same four in backward, exposed: 2 x (2 A2A(q) + A2A(k,v)). Megatron runs
 * all three (--cp-comm-type p2p, all_gather, a2a). */
Test(time, context_parallel_ring_allgather_a2a)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 0, 8);
    pp_strategy s;
    pp_plan *p = malloc(sizeof *p);
    double hd = m.hidden / m.heads, tok = 1.0 * 32768 / 4;
    double kv = 2 * tok * 2.0 * m.kv_heads * hd, q = 2 * tok * m.heads * hd; /* bytes, tp 1 */
    pp__comm_group g;
    pp__group(&c, 4, 1, &g);
    for (int kind = 0; kind < PP_CP_COUNT; kind++) {
        pp_strategy_default(&s);
        s.framework = PP_FW_MEGATRON;
        s.cp = 4, s.dp = 2, s.seq = 32768, s.global_batch = 2, s.cp_comm = kind;
        estimate(&m, &c, &s, p);
        double ag = pp__allgather_s(&g, kv * 4), rs = pp__reducescatter_s(&g, kv * 4);
        double ring = 3 * (4 - 1) * pp__sendrecv_s(&g, kv);
        double core = pp__attn_core_fwd_s(&m, &c, &s) * 3.5;
        double a2a = 2 * (2 * pp__alltoall_s(&g, q) + pp__alltoall_s(&g, kv));
        double per_block = kind == PP_CP_ALLGATHER ? 2 * ag + rs : kind == PP_CP_A2A ? a2a : pp__exposed(0.20, ring, core);
        cr_expect_float_eq(p->time.cp_comm_s, m.layers * per_block, 1e-9 * p->time.cp_comm_s, "%s: %g s, by hand %g s",
                           pp_cp_comm_name(kind), p->time.cp_comm_s, m.layers * per_block);
    }
    free(p);
}

/* An MLP width off the 8-element grid (10922, as an unrounded 8h/3 SwiGLU
 * gives) runs its GEMMs at 0.685 of the rate: Bekman's H100 measurement,
 * 272.7 against 398.4 TFLOP/s. By hand: up + down GEMMs are 2 x 2 tok h f
 * FLOPs at peak x matmul_eff x d/(d+64), d = h here (the smallest side). */
Test(time, unaligned_mlp_width_by_hand)
{
    pp_model m = fx_model("llama2-7b");
    pp_cluster c = fx_cluster("dgx-h100", 0, 8);
    m.gated_mlp = 0; /* two matrices, as in the formula */
    pp_strategy s;
    pp_strategy_default(&s);
    s.seq = 4096;
    double tok = 4096, h = m.hidden, peak = c.gpu.peak_flops[PP_PREC_BF16], mm = pp__matmul_eff(&c.gpu);
    pp__block_times a, b;
    m.ffn = 10920;
    pp__block_time(&m, &c, &s, PP_BLOCK_DENSE, &a);
    m.ffn = 10922;
    pp__block_time(&m, &c, &s, PP_BLOCK_DENSE, &b);
    double eff = mm * h / (h + 64);
    double by_hand = 4 * tok * h * 10922 / (peak * eff * 0.685) - 4 * tok * h * 10920 / (peak * eff);
    cr_expect_float_eq(b.gemm_fwd_s - a.gemm_fwd_s, by_hand, 1e-9 * by_hand, "%g s, by hand %g s",
                       b.gemm_fwd_s - a.gemm_fwd_s, by_hand);
}

/* Issue 4: "ZeRO-3 adds parameter all-gathers in forward and backward". As
 * DeepSpeed v0.14.5 runs them: ZeRO-2 all-reduces its gradient buckets
 * every micro-batch (stage_1_and_2.py average_tensor with
 * use_multi_rank_bucket_allreduce, true by default) and all-gathers the
 * updated 16-bit partitions after the step; ZeRO-3 gathers per fetch (4
 * linear modules per block, one coalesced call per module or per prefetch
 * bucket of 5e7 elements, whichever is fewer) twice and reduce-scatters in
 * buckets of 5e8, each call paying NCCL's launch and ring latency. By hand,
 * for Llama-2-7B's D dense elements on 16 GPUs and m micro-batches a step:
 *   ZeRO-2 = m AR(2D) + AG(2D)
 *   ZeRO-3 = m (2 n_ag AG(2D / n_ag) + n_rs RS(2D / n_rs)),
 *   n_ag = max(1, min(4 x 34, ceil(D / 5e7))), n_rs = max(1, D / 5e8);
 * the bytes are 2m + 1 units against 3m: equal at one micro-batch, and
 * ZeRO-3 more from two on. */
Test(time, zero3_and_zero2_collectives_by_hand)
{
    pp_model m = fx_model("llama2-7b");
    pp_cluster c = fx_cluster("dgx-h100", 0, 16);
    pp_plan *p = malloc(sizeof *p);
    double dense, ex;
    pp_strategy s1;
    pp_strategy_default(&s1);
    s1.tp = 1;
    pp__stage_params(&m, &s1, 0, 0, m.layers - 1, &dense, &ex);
    pp__comm_group g;
    pp__group(&c, 16, 1, &g);
    double n_ag = fmax(1, fmin(4 * 34, ceil(dense / 5e7))), n_rs = fmax(1, dense / 5e8);
    for (int mb = 1; mb <= 4; mb *= 4) {
        double t[4];
        for (int z = 2; z <= 3; z++) {
            pp_strategy s;
            pp_strategy_default(&s);
            s.framework = PP_FW_DEEPSPEED;
            s.dp = 16, s.zero = z, s.micro_batch = 1, s.global_batch = 16 * mb, s.seq = 4096;
            s.grad_accum_dtype = PP_GRAD_16;
            estimate(&m, &c, &s, p);
            t[z] = p->time.dp_comm_s;
        }
        double z2 = mb * pp__allreduce_s(&g, 2 * dense) + pp__allgather_s(&g, 2 * dense);
        double z3 = mb * (2 * n_ag * pp__allgather_s(&g, 2 * dense / n_ag) + n_rs * pp__reducescatter_s(&g, 2 * dense / n_rs));
        cr_expect_float_eq(t[2], z2, 1e-9 * z2, "m %d: ZeRO-2 %g s, by hand %g s", mb, t[2], z2);
        cr_expect_float_eq(t[3], z3, 1e-9 * z3, "m %d: ZeRO-3 %g s, by hand %g s", mb, t[3], z3);
        if (mb > 1) cr_expect_gt(t[3], t[2], "m %d: ZeRO-3 moves 3m units against 2m + 1", mb);
    }
    free(p);
}

/* EP, per MoE block on one GPU: all-to-all dispatch and combine, forward and
 * backward (4), each moving the routed copies of the micro-batch's tokens:
 * tok x topk x 2 bytes x hidden (dropless: capacity 1). */
Test(time, expert_parallel_all_to_all_by_hand)
{
    pp_model m = fx_model("mixtral-8x7b");
    pp_cluster c = fx_cluster("dgx-h100", 0, 8);
    pp_strategy s;
    pp_strategy_default(&s);
    s.ep = 8, s.dp = 8, s.zero = 1, s.micro_batch = 1, s.seq = 4096, s.global_batch = 8;
    pp_plan *p = malloc(sizeof *p);
    estimate(&m, &c, &s, p);
    pp__comm_group g;
    pp__group(&c, 8, 1, &g);
    double bytes = 4096.0 * m.topk * 2 * m.hidden;
    double by_hand = m.layers * 4 * pp__alltoall_s(&g, bytes);
    cr_expect_float_eq(p->time.ep_comm_s, by_hand, 1e-9 * by_hand, "%g s, by hand %g s", p->time.ep_comm_s, by_hand);
    free(p);
}

/* Full recompute under FSDP as HF Accelerate launches it is
 * torch.utils.checkpoint without reentrancy (checkpoint_wrapper's
 * NO_REENTRANT), which stops re-running a block's forward once its last
 * saved tensor is back: the MLP down projection packs its input before it
 * runs, so the recomputation skips that GEMM. By hand, per block and
 * micro-batch, 2 tok f h FLOPs at the matmul efficiency times d/(d+64),
 * d = min(tok, f, h), off the recompute time and the hardware FLOPs.
 * Nothing is skipped under Megatron's own checkpoint, under torchtitan
 * (early_stop False: pipeline stages here), with a LoRA adapter on the down
 * projection, with dropout after it, or with a norm after it (4 a block). */
static void recompute_run_es(pp_model *m, pp_framework fw, int pp, unsigned lora, int es, pp_plan *p)
{
    pp_cluster c = fx_cluster("dgx-h100", 0, 8);
    pp_strategy s;
    pp_strategy_default(&s);
    s.framework = fw;
    s.dp = 8 / pp, s.pp = pp, s.zero = fw == PP_FW_FSDP ? (pp > 1 ? 2 : 3) : 1;
    s.seq = 4096, s.global_batch = 16, s.micro_batch = 1, s.recompute = PP_RECOMPUTE_FULL;
    if (lora) s.ft.mode = PP_MODE_LORA, s.ft.lora_rank = 16, s.ft.lora_targets = lora;
    s.buf.checkpoint_early_stop = es;
    estimate(m, &c, &s, p);
}

static void recompute_run(pp_model *m, pp_framework fw, int pp, unsigned lora, pp_plan *p)
{
    recompute_run_es(m, fw, pp, lora, 0, p);
}

Test(time, fsdp_recompute_stops_before_the_down_projection)
{
    pp_model m = fx_model("llama2-7b");
    pp_cluster c = fx_cluster("dgx-h100", 0, 8);
    pp_plan p;
    recompute_run(&m, PP_FW_FSDP, 1, 0, &p);
    pp__block_times bt;
    pp__block_time(&m, &c, &p.strategy, PP_BLOCK_DENSE, &bt);
    double tok = 4096, f = m.ffn, h = m.hidden, d = tok < h ? tok : h, L = m.layers, ga = 2;
    double tail = 2 * tok * f * h / (c.gpu.peak_flops[PP_PREC_BF16] * pp__matmul_eff(&c.gpu) * d / (d + 64));
    double want = ga * L * (bt.fwd_s - tail);
    cr_expect(fabs(p.time.recompute_s - want) < 1e-9 * want, "recompute %.6g s, by hand %.6g s", p.time.recompute_s, want);
    /* hardware FLOPs: four passes less the skipped GEMM, every replica */
    double model = p.throughput.model_flops_per_step, fwd_blocks = 8 * ga * L * pp__block_fwd_flops(&m, PP_BLOCK_DENSE, 4096) * tok;
    double hw = model + fwd_blocks - 8 * ga * L * 2 * tok * f * h;
    cr_expect(fabs(p.throughput.hardware_flops_per_step / hw - 1) < 1e-9, "hardware FLOPs %.6g, by hand %.6g",
              p.throughput.hardware_flops_per_step, hw);
    /* the whole forward again */
    struct { const char *why; pp_framework fw; int pp; unsigned lora; double dropout; int norms; } whole[] = {
        {"megatron", PP_FW_MEGATRON, 1, 0, 0, 2}, {"torchtitan (pp 2)", PP_FW_FSDP, 2, 0, 0, 2},
        {"LoRA on the down projection", PP_FW_FSDP, 1, PP_LORA_DOWN | PP_LORA_Q, 0, 2},
        {"dropout", PP_FW_FSDP, 1, 0, 0.1, 2}, {"post-norms", PP_FW_FSDP, 1, 0, 0, 4}};
    for (size_t i = 0; i < sizeof whole / sizeof *whole; i++) {
        pp_model mm = m;
        mm.dropout = whole[i].dropout, mm.norms_per_block = whole[i].norms;
        recompute_run(&mm, whole[i].fw, whole[i].pp, whole[i].lora, &p);
        pp__block_time(&mm, &c, &p.strategy, PP_BLOCK_DENSE, &bt);
        double blocks = ga * L / whole[i].pp; /* the first stage's, under pp */
        cr_expect(p.time.recompute_s >= blocks * bt.fwd_s * (1 - 1e-12),
                  "%s: recompute %.6g s < whole forwards %.6g s", whole[i].why, p.time.recompute_s, blocks * bt.fwd_s);
    }
    /* the launcher's behaviour overridden (buf.checkpoint_early_stop, for runs
     * of other launchers): on under megatron skips the same GEMM, off under
     * Accelerate's fsdp skips nothing */
    pp_plan q;
    recompute_run_es(&m, PP_FW_MEGATRON, 1, 0, 1, &q);
    recompute_run_es(&m, PP_FW_MEGATRON, 1, 0, 0, &p);
    cr_expect(fabs(p.time.recompute_s - q.time.recompute_s - ga * L * tail) < 1e-9 * p.time.recompute_s,
              "megatron, early stop on: %.6g s, off: %.6g s, tail %.6g s", q.time.recompute_s, p.time.recompute_s,
              ga * L * tail);
    /* with TP 2 and SP the recomputation skips the down projection's
     * reduce-scatter too: half of one block's forward pair (all-gather and
     * reduce-scatter of the same bytes), of which the step has 4 a block */
    pp_cluster c8 = fx_cluster("dgx-h100", 0, 8);
    pp_plan t[3];
    for (int es = 0; es < 3; es++) {
        pp_strategy s;
        pp_strategy_default(&s);
        s.framework = PP_FW_MEGATRON, s.tp = 2, s.sp = 1, s.dp = 4, s.seq = 4096, s.global_batch = 16;
        s.overlap_tp = 0, s.recompute = es < 2 ? PP_RECOMPUTE_FULL : PP_RECOMPUTE_NONE;
        s.buf.checkpoint_early_stop = es == 1 ? 1 : 0;
        estimate(&m, &c8, &s, &t[es]);
    }
    double rs = t[2].time.tp_comm_s / 8; /* 4 pairs a block, one reduce-scatter each half */
    cr_expect(fabs(t[0].time.tp_comm_s - t[1].time.tp_comm_s - rs) < 1e-9 * rs,
              "TP saved by the early stop %.6g s, one reduce-scatter a block %.6g s",
              t[0].time.tp_comm_s - t[1].time.tp_comm_s, rs);
    recompute_run_es(&m, PP_FW_FSDP, 1, 0, -1, &p);
    pp__block_time(&m, &c, &p.strategy, PP_BLOCK_DENSE, &bt);
    cr_expect(fabs(p.time.recompute_s - ga * L * bt.fwd_s) < 1e-9 * p.time.recompute_s, "fsdp, early stop off: %.6g s, "
              "whole forwards %.6g s", p.time.recompute_s, ga * L * bt.fwd_s);
    /* LoRA on q and v only: the down projection is a plain GEMM, skipped */
    recompute_run(&m, PP_FW_FSDP, 1, PP_LORA_Q | PP_LORA_V, &p);
    pp__block_time(&m, &c, &p.strategy, PP_BLOCK_DENSE, &bt);
    cr_expect(p.time.recompute_s < ga * L * bt.fwd_s, "LoRA (q, v): recompute %.6g s, whole forwards %.6g s",
              p.time.recompute_s, ga * L * bt.fwd_s);
}

/* FP8 as Transformer Engine runs it (docs/time.md, "FP8"): the GEMMs at 0.95
 * of twice the BF16 rate (TE's GEMM profiling guide: 1.90x on H200, 1.92x
 * on B300, inputs pre-quantised), and each GEMM operand quantised at 6 bytes
 * an element (amax read 2, cast_transpose read 2, write 1 + 1): forward the
 * QKV, projection, up and down inputs (2h + q + f per token, tp 1), backward
 * the output gradients (q + 2 kv + h + 2f + h). Attention stays BF16;
 * Megatron's output layer is outside TE's fp8 autocast, torchtitan's not. */
Test(time, fp8_gemms_and_quantisation_by_hand)
{
    pp_model m = fx_model("llama2-7b");
    pp_cluster c = fx_cluster("dgx-h100", 0, 8);
    pp_strategy s;
    pp_strategy_default(&s);
    s.framework = PP_FW_MEGATRON, s.seq = 4096, s.micro_batch = 1;
    pp__block_times b16, b8;
    s.precision = PP_PREC_BF16;
    pp__block_time(&m, &c, &s, PP_BLOCK_DENSE, &b16);
    double head16 = pp__head_time(&m, &c, &s);
    s.precision = PP_PREC_FP8;
    pp__block_time(&m, &c, &s, PP_BLOCK_DENSE, &b8);
    double head8 = pp__head_time(&m, &c, &s);
    double rate = c.gpu.peak_flops[PP_PREC_FP8] * 0.95 / c.gpu.peak_flops[PP_PREC_BF16];
    cr_expect(fabs(b8.gemm_fwd_s * rate / b16.gemm_fwd_s - 1) < 1e-12, "fp8 GEMMs %.6g s, bf16 %.6g s", b8.gemm_fwd_s,
              b16.gemm_fwd_s);
    cr_expect_float_eq(b8.core_fwd_s, b16.core_fwd_s, 1e-15, "attention stays bf16");
    double tok = 4096, h = m.hidden, f = m.ffn, hd = h / m.heads, q = m.heads * hd, kv = m.kv_heads * hd;
    double hbm = pp__hbm_bw_eff(&c.gpu);
    double cast_f = 6 * tok * (2 * h + q + f) / hbm, cast_b = 6 * tok * (q + 2 * kv + h + 2 * f + h) / hbm;
    double got_f = (b8.fwd_s - b8.gemm_fwd_s) - (b16.fwd_s - b16.gemm_fwd_s);
    double got_b = (b8.bwd_s - 2 * b8.gemm_fwd_s) - (b16.bwd_s - 2 * b16.gemm_fwd_s);
    cr_expect(fabs(got_f / cast_f - 1) < 1e-9, "forward casts %.6g s, by hand %.6g s", got_f, cast_f);
    cr_expect(fabs(got_b / cast_b - 1) < 1e-9, "backward casts %.6g s, by hand %.6g s", got_b, cast_b);
    cr_expect_float_eq(head8, head16, 1e-15, "megatron's output layer runs bf16 under fp8: %g vs %g s", head8, head16);
    s.framework = PP_FW_FSDP; /* torchtitan's files filter "output" out of float8 */
    cr_expect_float_eq(pp__head_time(&m, &c, &s), head16, 1e-15, "fsdp's output layer runs bf16 under fp8");

    /* GQA with TP 2 and sequence parallelism: the norms' outputs quantised
     * as sequence shards (h/2), the rest as TP shards */
    m = fx_model("llama3-8b");
    s.framework = PP_FW_MEGATRON, s.tp = 2, s.sp = 1;
    s.precision = PP_PREC_BF16;
    pp__block_time(&m, &c, &s, PP_BLOCK_DENSE, &b16);
    s.precision = PP_PREC_FP8;
    pp__block_time(&m, &c, &s, PP_BLOCK_DENSE, &b8);
    h = m.hidden, f = m.ffn, hd = h / m.heads, q = m.heads * hd, kv = m.kv_heads * hd;
    cast_f = 6 * tok * (h / 2 + q / 2 + h / 2 + f / 2) / hbm;
    cast_b = 6 * tok * ((q + 2 * kv) / 2 + h / 2 + 2 * f / 2 + h / 2) / hbm;
    got_f = (b8.fwd_s - b8.gemm_fwd_s) - (b16.fwd_s - b16.gemm_fwd_s);
    got_b = (b8.bwd_s - 2 * b8.gemm_fwd_s) - (b16.bwd_s - 2 * b16.gemm_fwd_s);
    cr_expect(fabs(got_f / cast_f - 1) < 1e-9 && fabs(got_b / cast_b - 1) < 1e-9, "tp 2: casts %.6g/%.6g s, by hand "
              "%.6g/%.6g s", got_f, got_b, cast_f, cast_b);

    /* a MoE block (Mixtral: 8 experts, top-2, no shared, tp 1): each token's
     * two routed rows quantised at h and f; the router stays bf16 */
    m = fx_model("mixtral-8x7b");
    s.tp = 1, s.sp = 0;
    s.precision = PP_PREC_BF16;
    pp__block_time(&m, &c, &s, PP_BLOCK_MOE, &b16);
    s.precision = PP_PREC_FP8;
    pp__block_time(&m, &c, &s, PP_BLOCK_MOE, &b8);
    h = m.hidden, f = m.expert_ffn, hd = h / m.heads, q = m.heads * hd, kv = m.kv_heads * hd;
    double k = m.topk * (m.capacity_factor > 0 ? m.capacity_factor : 1), d = 8; /* min(tok, h, experts) */
    double router = 2 * tok * h * m.experts / (c.gpu.peak_flops[PP_PREC_BF16] * pp__matmul_eff(&c.gpu) * d / (d + 64));
    cr_expect(fabs(((b8.gemm_fwd_s - router) * rate + router) / b16.gemm_fwd_s - 1) < 1e-9, "MoE GEMMs: router bf16");
    cast_f = 6 * tok * (h + q + k * (h + f)) / hbm;
    cast_b = 6 * tok * ((q + 2 * kv) + h + k * (2 * f + h)) / hbm;
    got_f = (b8.fwd_s - b8.gemm_fwd_s) - (b16.fwd_s - b16.gemm_fwd_s);
    got_b = (b8.bwd_s - 2 * b8.gemm_fwd_s) - (b16.bwd_s - 2 * b16.gemm_fwd_s);
    cr_expect(fabs(got_f / cast_f - 1) < 1e-9 && fabs(got_b / cast_b - 1) < 1e-9, "MoE: casts %.6g/%.6g s, by hand "
              "%.6g/%.6g s", got_f, got_b, cast_f, cast_b);
}

/* --recompute-modules mlp on Llama-3-8B (TP 2 with SP, TP overlap off):
 * each block's MLP forward runs again in its backward, 2 x 3 h f / t FLOPs
 * a token more in hardware FLOPs (Narayanan's count: gated MLP, 3 GEMMs),
 * and its all-gather and reduce-scatter again: TP traffic goes from 4 to 5
 * collective pairs a block. The step adds recompute time, never less. */
Test(time, recompute_mlp_flops_and_tp_by_hand)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 0, 8);
    pp_plan p[2];
    for (int i = 0; i < 2; i++) {
        pp_strategy s;
        pp_strategy_default(&s);
        s.framework = PP_FW_MEGATRON, s.tp = 2, s.sp = 1, s.dp = 4, s.zero = 1, s.seq = 4096, s.micro_batch = 1;
        s.global_batch = 32, s.overlap_tp = 0, s.recompute = i ? PP_RECOMPUTE_SELECTIVE : PP_RECOMPUTE_NONE;
        s.recompute_modules = i ? PP_RC_MLP : 0; /* against no recompute: mlp alone, not core_attn */
        estimate(&m, &c, &s, &p[i]);
    }
    double tok = 4096.0 * 32, extra = 2.0 * 3 * 4096 * 14336 * 32 * tok; /* per step, all GPUs: 32 blocks */
    double got = p[1].throughput.hardware_flops_per_step - p[0].throughput.hardware_flops_per_step;
    cr_expect(fabs(got / extra - 1) < 1e-9, "hardware FLOPs +%.6g, by hand %.6g", got, extra);
    cr_expect(fabs(p[1].time.tp_comm_s / p[0].time.tp_comm_s - 5.0 / 4) < 1e-9, "TP %.6g s vs %.6g s",
              p[1].time.tp_comm_s, p[0].time.tp_comm_s);
    cr_expect(p[1].time.recompute_s > p[0].time.recompute_s && p[1].time.step_s > p[0].time.step_s,
              "recompute %.6g vs %.6g s", p[1].time.recompute_s, p[0].time.recompute_s);
    cr_expect(p[1].memory.peak_bytes < p[0].memory.peak_bytes, "peak %.6g vs %.6g", p[1].memory.peak_bytes,
              p[0].memory.peak_bytes);
}

/* mla_up_proj without a q LoRA runs the whole q projection again: the
 * recomputed FLOPs per token are 2 (h a (d_nope + d_rope) + d_c a (d_nope
 * + d_v)) / t; with DeepSeek-V3's q LoRA the first term is d'_c, not h. */
Test(time, mla_up_proj_recompute_flops_by_hand)
{
    pp_model d = fx_model("deepseek-v3");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s;
    pp_strategy_default(&s);
    s.framework = PP_FW_MEGATRON, s.tp = 2, s.seq = 4096, s.recompute = PP_RECOMPUTE_SELECTIVE;
    double tok = 4096, a = 128, qk = 128 + 64, kvo = 128 + 128, fl;
    cr_expect_gt(pp__rc_fwd_s(&d, &c, &s, PP_BLOCK_MOE, PP_RC_MLA_UP_PROJ, &fl), 0);
    double want = 2 * tok * (1536 * a * qk + 512 * a * kvo) / 2;
    cr_expect(fabs(fl / want - 1) < 1e-12, "q LoRA: %.6g FLOPs, by hand %.6g", fl, want);
    d.mla.q_lora_rank = 0;
    cr_expect_gt(pp__rc_fwd_s(&d, &c, &s, PP_BLOCK_MOE, PP_RC_MLA_UP_PROJ, &fl), 0);
    want = 2 * tok * (7168 * a * qk + 512 * a * kvo) / 2;
    cr_expect(fabs(fl / want - 1) < 1e-12, "no q LoRA: %.6g FLOPs, by hand %.6g", fl, want);
}

/* The HF Trainer under Accelerate runs every micro-batch but the last in
 * no_sync: FSDP2 gathers each unit every micro-batch but reduce-scatters
 * once a step, in bf16 (Accelerate's reduce dtype is the parameter dtype).
 * Llama-3-8B on 8 H100, ZeRO-3: with one micro-batch a step the traffic is
 * AG + RS, with two 2 AG + RS; torchtitan (selective recompute is its)
 * reduces every micro-batch, in fp32: exactly twice. */
Test(time, accelerate_no_sync_reduces_once_a_step)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    double dp[2][2];
    for (int tt = 0; tt < 2; tt++)
        for (int k = 0; k < 2; k++) {
            pp_strategy s;
            pp_strategy_default(&s);
            s.framework = PP_FW_FSDP;
            s.dp = 8, s.zero = 3, s.seq = 4096, s.micro_batch = 1, s.global_batch = 8 * (k + 1);
            s.recompute = tt ? PP_RECOMPUTE_SELECTIVE : PP_RECOMPUTE_FULL;
            pp_plan p;
            pp_error err = {""};
            cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
            cr_expect_eq(p.strategy.grad_accum_dtype, tt ? PP_GRAD_FP32 : PP_GRAD_16);
            dp[tt][k] = p.time.dp_comm_s;
        }
    double ag = dp[0][1] - dp[0][0], rs = dp[0][0] - ag;
    cr_expect_gt(ag, 0);
    cr_expect_gt(rs, 0, "the reduce-scatter still moves bytes: %g s", rs);
    cr_expect_lt(dp[0][1], 2 * dp[0][0] * (1 - 1e-6), "no_sync: %g s against 2 x %g s", dp[0][1], dp[0][0]);
    cr_expect(fabs(dp[1][1] - 2 * dp[1][0]) < 1e-9 * dp[1][1], "torchtitan: %g vs 2 x %g s", dp[1][1], dp[1][0]);
}

/* torchao's float8 linears (FSDP plans, launched by torchtitan) cast each
 * weight in every forward and, transposed, in every backward: 5 bytes an
 * element a cast (amax read 2; scaled cast read 2, write 1). Transformer
 * Engine's linears (fp8_te_linears) cache the cast across micro-batches.
 * Llama-3-8B block weights by hand:
 *   4096 x (4096 + 2 x 1024) + 4096 x 4096 + 3 x 4096 x 14336 = 218,103,808,
 * so the step differs by 32 blocks x 8 micro-batches x 2 casts x 5 B x that
 * at the H100's elementwise bandwidth. */
Test(time, torchao_float8_casts_weights_every_microbatch)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    double step[2];
    for (int te = 0; te < 2; te++) {
        pp_strategy s;
        pp_strategy_default(&s);
        s.framework = PP_FW_FSDP, s.dp = 8, s.zero = 3, s.precision = PP_PREC_FP8;
        s.micro_batch = 1, s.global_batch = 64, s.seq = 4096, s.recompute = PP_RECOMPUTE_NONE;
        s.buf.fp8_te_linears = te;
        pp_plan p;
        pp_error err = {""};
        cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
        cr_assert_eq(p.strategy.grad_accum, 8);
        step[te] = p.time.compute_s;
    }
    double w = 4096.0 * (4096 + 2 * 1024) + 4096.0 * 4096 + 3 * 4096.0 * 14336;
    cr_assert_float_eq(w, 218103808.0, 0.5);
    double want = 32 * 8 * 2 * 5 * w / pp__hbm_bw_eff(&c.gpu);
    cr_expect(fabs(step[0] - step[1] - want) < 1e-9 * want, "got %.9g s, want %.9g s", step[0] - step[1], want);
}

/* A word embedding tied to the head: with pipeline stages its gradient is
 * all-reduced between the first and the last stage after the backward
 * (Megatron-Core _allreduce_word_embedding_grads, DeepSpeed
 * _exec_reduce_tied_grads). GPT-3 175B, tp 8, pp 8, dp 1 on 8 DGX A100:
 * the only data-parallel-side traffic; fp32 main_grad of 51200 x 12288 / 8
 * = 314.6 MB between two nodes, one 200 Gb/s NIC at NCCL's 0.74: about
 * 17 ms, a ring of 2 (one step each way) plus latencies. */
Test(time, tied_embedding_gradient_crosses_the_pipeline)
{
    pp_model m = fx_model("gpt3-175b");
    pp_cluster c = fx_cluster("dgx-a100-80g", 0, 64);
    pp_strategy s;
    pp_strategy_default(&s);
    s.framework = PP_FW_MEGATRON, s.tp = 8, s.pp = 8, s.dp = 1, s.seq = 2048, s.global_batch = 32;
    s.recompute = PP_RECOMPUTE_FULL;
    pp_plan p;
    estimate(&m, &c, &s, &p);
    double bytes = 4.0 * 51200 * 12288 / 8, want = bytes / (25e9 * 0.74);
    cr_expect(p.time.dp_comm_s > want && p.time.dp_comm_s < want * 1.01 + 1e-4, "%.6f s vs %.6f s", p.time.dp_comm_s,
              want);
    cr_expect_float_eq(p.time.dp_comm_exposed_s, p.time.dp_comm_s, 1e-12, "blocking");
    m.tied_embeddings = 0; /* an untied head: nothing to synchronise */
    estimate(&m, &c, &s, &p);
    cr_expect_float_eq(p.time.dp_comm_s, 0, 1e-12);
}

/* DeepSpeed-MoE's GShard einsums (red team rt16 #3), by hand for Mixtral
 * at S = 2048 tokens a rank: E C = S k = 4096 slots, M = 4096; each einsum
 * 2 x 2048 x 4096 x 4096 = 68.7 GFLOP, five a block (two forward, three
 * backward): 343.6 GFLOP, backward 3/2 of forward. TP does not split them.
 * Megatron-Core's dispatcher has none. The saved masks, 2 x [S, E, C] in
 * 16 bits, and the gate's 2 fp32 [S, C] locations are quadratic in S: with
 * fused attention every other term is linear, so act(2S) - 2 act(S) =
 * (2 x 2 B x k + 2 x 4 B x k / E) x (4 - 2) S^2. */
Test(time, deepspeed_moe_einsum_dispatch_by_hand)
{
    pp_model m = fx_model("mixtral-8x7b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s;
    pp_strategy_default(&s);
    s.framework = PP_FW_MEGATRON_DEEPSPEED, s.seq = 2048, s.micro_batch = 1, s.tp = 4;
    double f, b, flops = pp__gshard_einsum(&m, &c, &s, &f, &b);
    cr_expect_float_eq(flops, 10.0 * 2048 * 4096 * 4096, 1, "%.6g FLOP", flops);
    /* the gate's mask, 34 B an element of [S, E, C] forward, twice backward:
     * backward - 1.5 forward = (2 - 1.5) x mask */
    double mask = 34.0 * 2048 * 4096 / pp__hbm_bw_eff(&c.gpu);
    cr_expect(f > mask && fabs((b - 1.5 * f) - 0.5 * mask) < 1e-9 * b, "forward %g s, backward %g s", f, b);
    s.attention = PP_ATTN_FLASH;
    double one = pp__block_act_bytes(&m, &s, PP_BLOCK_MOE, PP_RECOMPUTE_NONE);
    s.seq = 4096;
    double two = pp__block_act_bytes(&m, &s, PP_BLOCK_MOE, PP_RECOMPUTE_NONE);
    /* and the gate's two fp32 [S, C] locations, C = S k / E: 2 x 4 B x k / 8 */
    cr_expect_float_eq(two - 2 * one, (2 * 2.0 * 2 + 2 * 4.0 * 2 / 8) * 2 * 2048.0 * 2048, 1, "%.6g B", two - 2 * one);
    s.framework = PP_FW_MEGATRON;
    cr_expect_eq(pp__gshard_einsum(&m, &c, &s, &f, &b), 0);
    cr_expect(f == 0 && b == 0);
}

/* Pipeline transfers per micro-batch (steptime.c p2p_hops): 1F1B's two
 * blocking exchanges; interleaved, each of the v chunk forwards waits for
 * its output's send (Megatron's overlap_p2p_comm with deallocated
 * outputs), never fewer than two. GPT-3 175B, tp 8, pp 8 over 8 nodes,
 * 96 blocks: 1F1B and v 2 move the same, v 4 twice, v 12 six times; as
 * Megatron-Core ran before v0.18 (the send waited one compute later), as
 * 1F1B at any v. */
Test(time, interleaved_chunks_each_send_their_output)
{
    pp_model m = fx_model("gpt3-175b");
    pp_cluster c = fx_cluster("dgx-a100-80g", 0, 64);
    pp_strategy s;
    pp_strategy_default(&s);
    s.framework = PP_FW_MEGATRON, s.tp = 8, s.pp = 8, s.dp = 1, s.sp = 1, s.seq = 2048, s.global_batch = 32;
    s.recompute = PP_RECOMPUTE_FULL;
    pp_plan p;
    estimate(&m, &c, &s, &p);
    double one = p.time.pp_comm_s;
    cr_expect_gt(one, 0);
    const int v[] = {2, 4, 12};
    const double times[] = {1, 2, 6};
    for (int i = 0; i < 3; i++) {
        pp_strategy t = s;
        t.schedule = PP_SCHED_INTERLEAVED, t.virtual_stages = v[i];
        estimate(&m, &c, &t, &p);
        cr_expect_float_eq(p.time.pp_comm_s, times[i] * one, 1e-9 * one, "v %d: %.9g s, 1F1B %.9g s", v[i],
                           p.time.pp_comm_s, one);
        t = s; /* Megatron-Core before v0.18: the output send waited behind the next compute */
        t.schedule = PP_SCHED_INTERLEAVED, t.virtual_stages = v[i], t.buf.mcore_p2p_deferred = 1;
        estimate(&m, &c, &t, &p);
        cr_expect_float_eq(p.time.pp_comm_s, one, 1e-9 * one, "deferred, v %d: %.9g s", v[i], p.time.pp_comm_s);
    }
}

/* FSDP2 accumulating on the host (red team rt11): with a gradient on the
 * host to add to, each unit's post-backward copies its fp32 shard with a
 * blocking copy and adds it on the CPU (torch _fsdp_collectives.py
 * foreach_reduce), so each micro-batch after the first costs the copy,
 * shard x 4 B over PCIe at 0.87 of its rate, and the add, 12 B an element
 * for each of the node's 8 ranks at the host's memory bandwidth; and its
 * reduce-scatter no longer hides. Accelerate's no_sync reduces once: none.
 * Either way each micro-batch's first unit (one of 32 blocks + embedding +
 * head) is fetched in fp32 with nothing to hide under. */
Test(time, fsdp2_offload_accumulation_costs_each_extra_microbatch)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    static pp_plan p[3];
    for (int torchtitan = 1; torchtitan >= 0; torchtitan--) {
        for (int k = 0; k < 3; k++) {
            pp_strategy s;
            pp_strategy_default(&s);
            s.framework = PP_FW_FSDP, s.zero = 3, s.dp = 8, s.seq = 4096, s.offload = PP_OFFLOAD_OPT_PARAMS;
            s.recompute = PP_RECOMPUTE_FULL, s.global_batch = 8 * (k + 1), s.buf.fsdp_no_sync = !torchtitan;
            pp_error e = {""};
            cr_assert_eq(pp_estimate(&m, &c, &s, &p[k], &e), PP_OK, "%s", e.msg);
        }
        double shard = p[0].params_trainable / 8, pcie = c.pcie.bw * 0.87;
        double host = c.host_mem_bw > 0 ? c.host_mem_bw : 100e9, each = shard * 4 / pcie + shard * 8 * 12 / host;
        double first = shard / 34 * 4 / pcie;
        for (int k = 1; k < 3; k++) {
            double d = p[k].time.offload_s - p[k - 1].time.offload_s;
            double want = first + (torchtitan ? each : 0);
            cr_expect(fabs(d - want) < 1e-9 * want, "torchtitan %d, %d -> %d micro-batches: +%.6g s, want %.6g",
                      torchtitan, k, k + 1, d, want);
        }
        if (torchtitan) /* the reduce-scatters of the extra micro-batches are exposed */
            cr_expect_gt(p[2].time.dp_comm_exposed_s - p[1].time.dp_comm_exposed_s,
                         p[1].time.dp_comm_exposed_s - p[0].time.dp_comm_exposed_s - 1e-12);
    }
}

/* Expert launches (compute.c expert_host): after Megatron-Core's dispatcher
 * syncs with the host, the GPU waits while the host launches the block's
 * routing and each local expert's GEMMs, 1 ms a block plus 0.4 ms an
 * expert forward and backward (EXPERT_HOST_BLOCK_S, EXPERT_HOST_S), less
 * the GEMMs' own time, 1:2 forward to backward. Mixtral-8x7B's shapes with
 * 64 experts, top-2, 256 tokens a micro-batch on one H100, ep 1: 8 tokens
 * an expert, so each expert GEMM has d = 8 and runs at mm x 8 / (8 + 64) of
 * peak (compute.c gemm_sf). Forward FLOPs of an expert: 2 x 8 x (4096 x 2 x
 * 14336 + 14336 x 4096). A block waits 1 ms + 64 x 0.4 ms - 3 r, r the 64
 * experts' forward GEMM time; 32 blocks, one micro-batch. CUDA graphs over
 * the experts remove exactly that; DeepSpeed-MoE's einsums and HF's
 * grouped_mm (transformers 5.x) never sync. */
Test(time, expert_launches_by_hand)
{
    pp_model m;
    pp_cluster c;
    pp_strategy s;
    fx_moe64_megatron(&m, &c, &s);
    pp_plan p, g;
    estimate(&m, &c, &s, &p);
    double eff = pp__matmul_eff(&c.gpu) * 8 / (8 + 64.0), host = 1e-3 + 64 * 0.4e-3;
    double r = 64 * 2 * 8 * (4096 * 2 * 14336.0 + 14336 * 4096.0) / (c.gpu.peak_flops[PP_PREC_BF16] * eff);
    double want = 32 * (host - 3 * r);
    cr_expect(r > 1e-3 && r < host / 3, "r %g s: both terms positive", r);
    cr_expect_float_eq(p.time.expert_host_s, want, 1e-9 * want, "%.9g s, by hand %.9g s", p.time.expert_host_s, want);
    cr_expect(strstr(p.uncertainty.notes, "64 local experts, outside the 4-32"), "%s", p.uncertainty.notes);
    s = p.strategy;
    s.buf.expert_graphs = 1;
    estimate(&m, &c, &s, &g);
    cr_expect_eq(g.time.expert_host_s, 0);
    cr_expect_float_eq(p.time.compute_s - g.time.compute_s, want, 1e-9 * want, "%.9g s", p.time.compute_s - g.time.compute_s);
    /* ep 8: 8 local experts of 64 tokens each (d = 64), 1 ms + 8 x 0.4 ms a
     * block; full recompute launches the forward twice: 4 x (launch / 3 - r) */
    s = p.strategy;
    s.ep = 8, s.recompute = PP_RECOMPUTE_FULL, s.recompute_layers = -1;
    estimate(&m, &c, &s, &g);
    eff = pp__matmul_eff(&c.gpu) * 64 / (64 + 64.0), host = 1e-3 + 8 * 0.4e-3;
    r = 8 * 2 * 64 * (4096 * 2 * 14336.0 + 14336 * 4096) / (c.gpu.peak_flops[PP_PREC_BF16] * eff);
    want = 32 * 4 * (host / 3 - r);
    cr_expect(r > 0 && r < host / 3, "r %g s", r);
    cr_expect_float_eq(g.time.expert_host_s, want, 1e-9 * want, "%.9g s, by hand %.9g s", g.time.expert_host_s, want);
    const pp_framework none[] = {PP_FW_MEGATRON_DEEPSPEED, PP_FW_PYTORCH, PP_FW_FSDP};
    for (int i = 0; i < 3; i++) {
        pp_strategy_default(&s);
        s.framework = none[i], s.dp = 8, s.seq = 256, s.micro_batch = 1, s.global_batch = 8;
        s.zero = none[i] == PP_FW_FSDP ? 3 : 0;
        estimate(&m, &c, &s, &g);
        cr_expect_eq(g.time.expert_host_s, 0, "%s: %g s", pp_framework_name(none[i]), g.time.expert_host_s);
    }
}

/* One DGX H100's 8 ranks of `fw` at ZeRO `zero`, one 2048-token sequence a
 * rank, one micro-batch a step, no recompute: the shape the tests of the
 * launched program's code (below) vary. */
static pp_strategy dp8_seq2048(pp_framework fw, int zero)
{
    pp_strategy s;
    pp_strategy_default(&s);
    s.framework = fw, s.zero = zero, s.dp = 8, s.seq = 2048, s.micro_batch = 1, s.global_batch = 8;
    s.recompute = PP_RECOMPUTE_NONE;
    return s;
}

/* Eager PyTorch modeling code (compute.c: HF_NORM_*, HF_ROPE_*,
 * TT_ROPE_*, UNFUSED_GLU_*), by hand on Llama-3-8B under FSDP2: the same
 * plan launched through Accelerate (HF modeling) and through torchtitan
 * (fsdp_no_sync 0), one micro-batch (no no_sync difference). Per token and
 * block, HF's two RMSNorms of 4096 at 32 + 84 extra bytes an element; the
 * rotary on 32 + 8 heads of 128 at 16 + 22 under HF, 16 + 12 under
 * torchtitan; both run the same unfused SwiGLU and FSDP2 copy-out. Then
 * the copy-out itself, FSDP2 against FSDP1: two gathers (forward,
 * backward) of every weight in bf16, each read and written once. */
Test(time, hf_eager_modeling_and_fsdp2_copy_out_by_hand)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = dp8_seq2048(PP_FW_FSDP, 3);
    pp_plan hf, tt, f1;
    s.buf.fsdp_no_sync = 1;
    estimate(&m, &c, &s, &hf);
    cr_assert_eq(pp__eager_code(&hf.strategy), PP_CODE_HF);
    s.buf.fsdp_no_sync = 0;
    estimate(&m, &c, &s, &tt);
    cr_assert_eq(pp__eager_code(&tt.strategy), PP_CODE_TORCHTITAN);
    double hbm = pp__hbm_bw_eff(&c.gpu);
    double per_token = 2 * 4096 * (32 + 84.0) + (32 + 8) * 128 * ((16 + 22) - (16 + 12.0)); /* 1,001,472 B */
    double want = per_token * 2048 * 32 / hbm;
    cr_expect_float_eq(hf.time.compute_s - tt.time.compute_s, want, 1e-9 * want, "%.9g s, by hand %.9g s",
                       hf.time.compute_s - tt.time.compute_s, want);
    s.buf.fsdp1 = 1;
    estimate(&m, &c, &s, &f1);
    want = 2 * 2 * 2 * hf.params_total / hbm;
    cr_expect_float_eq(tt.time.compute_s - f1.time.compute_s, want, 1e-9 * want, "%.9g s, by hand %.9g s",
                       tt.time.compute_s - f1.time.compute_s, want);
    cr_expect(tt.time.step_s > f1.time.step_s && hf.time.step_s > tt.time.step_s);
    /* a Qwen3-30B-A3B MoE block, HF's code against torchtitan's: the norms
     * (two of 2048, QK norm on 32 + 4 heads of 128) at 32 + 84, the rotary
     * at 38 against 28, and transformers 5.x's grouped_mm dispatch at 10 +
     * 20 extra bytes a routed row-element (8 experts a token) */
    pp_model q = fx_model(PARPLAN_SOURCE_DIR "/tests/data/models/qwen3-30b-a3b.json");
    pp__block_times bh, bt;
    s.buf.fsdp1 = 0, s.buf.fsdp_no_sync = 1;
    pp__block_time(&q, &c, &s, PP_BLOCK_MOE, &bh);
    s.buf.fsdp_no_sync = 0;
    pp__block_time(&q, &c, &s, PP_BLOCK_MOE, &bt);
    double qk = (32 + 4) * 128.0;
    per_token = (2 * 2048 + qk) * (32 + 84.0) + qk * ((16 + 22) - (16 + 12.0)) + (10 + 20.0) * 2048 * 8; /* 1,547,264 B */
    double want_b = per_token * 2048 / hbm, got = bh.fwd_s + bh.bwd_s - bt.fwd_s - bt.bwd_s;
    cr_expect_float_eq(got, want_b, 1e-9 * want_b, "MoE block: %.9g s, by hand %.9g s", got, want_b);
    /* DeepSpeed ZeRO-3 concatenates each coalesced fetch the same way
     * (AllGatherCoalescedHandle.wait); ZeRO-2 gathers nothing a micro-batch */
    pp_plan z3, z2;
    s = dp8_seq2048(PP_FW_DEEPSPEED, 3);
    estimate(&m, &c, &s, &z3);
    s.zero = 2;
    estimate(&m, &c, &s, &z2);
    cr_expect_float_eq(z3.time.compute_s - z2.time.compute_s, want, 1e-9 * want, "deepspeed: %.9g s, by hand %.9g s",
                       z3.time.compute_s - z2.time.compute_s, want);
}

/* The HF Trainer with use_liger_kernel (parplan's chunked loss) runs
 * Liger's RMSNorm, rotary and SwiGLU: a block costs what fused kernels
 * cost, by hand HF's extra per token (above) plus the SwiGLU's 4 + 6 bytes
 * an ffn element less, forward and backward together; and in fp32
 * training HF's norm casts vanish (12 bytes forward, 8 backward less an
 * element), its other passes moving fp32. */
Test(time, liger_fuses_what_hf_runs_eager)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = dp8_seq2048(PP_FW_DEEPSPEED, 3);
    s.loss = PP_LOSS_FP32;
    pp__block_times eager, liger, e32;
    pp__block_time(&m, &c, &s, PP_BLOCK_DENSE, &eager);
    s.loss = PP_LOSS_CHUNKED;
    cr_assert(pp__liger(&s) && pp__eager_code(&s) == PP_CODE_NONE);
    pp__block_time(&m, &c, &s, PP_BLOCK_DENSE, &liger);
    double hbm = pp__hbm_bw_eff(&c.gpu), tok = 2048;
    double per_token = 2 * 4096 * (32 + 84.0) + (32 + 8) * 128 * (16 + 22.0) + 14336 * (4 + 6.0); /* 1,288,192 B */
    double got = eager.fwd_s + eager.bwd_s - liger.fwd_s - liger.bwd_s, want = per_token * tok / hbm;
    cr_expect_float_eq(got, want, 1e-9 * want, "%.9g s, by hand %.9g s", got, want);
    /* fp32: the norm's passes (fp32 either way) lose the two casts, 20 +
     * 76 extra bytes an element; the rotary's and SwiGLU's double */
    pp__block_times l32;
    s.precision = PP_PREC_FP32;
    pp__block_time(&m, &c, &s, PP_BLOCK_DENSE, &l32);
    s.loss = PP_LOSS_FP32;
    pp__block_time(&m, &c, &s, PP_BLOCK_DENSE, &e32);
    per_token = 2 * 4096 * (20 + 76.0) + 2 * ((32 + 8) * 128 * (16 + 22.0) + 14336 * (4 + 6.0)); /* 1,462,272 B */
    got = e32.fwd_s + e32.bwd_s - l32.fwd_s - l32.bwd_s, want = per_token * tok / hbm;
    cr_expect_float_eq(got, want, 1e-9 * want, "fp32: %.9g s, by hand %.9g s", got, want);
}


/* A full recompute stops early (before the down projection) only under HF
 * Accelerate's checkpoint_wrapper; torchtitan v0.2.2, which the search may
 * now choose at pp 1, runs it to the end (early_stop False): its recompute
 * is what the same plan costs with the early stop off, Accelerate's what it
 * costs with it on, and less (review10 H1). */
Test(time, full_recompute_stops_early_under_accelerate_only)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = dp8_seq2048(PP_FW_FSDP, 3);
    s.recompute = PP_RECOMPUTE_FULL, s.recompute_layers = -1;
    pp_plan a, b;
    for (int tt = 0; tt < 2; tt++) {
        s.buf.fsdp_no_sync = tt ? 0 : 1;
        s.buf.checkpoint_early_stop = 0;
        estimate(&m, &c, &s, &a);
        s.buf.checkpoint_early_stop = tt ? -1 : 1;
        estimate(&m, &c, &s, &b);
        cr_expect_float_eq(a.time.recompute_s, b.time.recompute_s, 1e-12, "%s: %.9g s, %.9g s with the stop %s",
                           tt ? "torchtitan" : "Accelerate", a.time.recompute_s, b.time.recompute_s, tt ? "off" : "on");
        s.buf.checkpoint_early_stop = tt ? 1 : -1;
        estimate(&m, &c, &s, &b);
        cr_expect(tt ? a.time.recompute_s > b.time.recompute_s : a.time.recompute_s < b.time.recompute_s,
                  "%s: %.9g s against %.9g s", tt ? "torchtitan" : "Accelerate", a.time.recompute_s, b.time.recompute_s);
    }
}
