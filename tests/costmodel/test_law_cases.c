/*
 * test_law_cases.c — one worked case per law of tests/costmodel/test_laws.c
 * that the cost model once broke, computed by hand here; each fails on the
 * code that broke it (named in the test).
 */
#include <criterion/criterion.h>
#include <math.h>

#include "costmodel/costmodel.h"
#include "tests/fixtures.h"

#define BASE 8e-6 /* NCCL's launch latency per collective (comm.c) */

/* Law: more ranks never lower a collective's latency term. All-reduce of
 * one byte on two DGX H100 (NVLink 3.4 us per hop, InfiniBand 5 us):
 *   8 ranks, one node: ring 2 x 7 x 3.4 us = 47.6 us (+ 8 us launch);
 *   16 ranks, two nodes: NCCL's tree, a chain of 8 in each node up and
 *   down and one hop between the nodes: 2 (7 x 3.4 + 1 x 5) = 57.6 us,
 *   cheaper than the ring's 2 x 15 x 5 = 150 us.
 * The tree used to be priced 2 log2(16) x 5 = 40 us, as if all 16 ranks
 * were one binary tree over the network: below the 8-rank ring. */
Test(law_cases, tree_all_reduce_latency_by_hand)
{
    pp_cluster c = fx_cluster("dgx-h100", 2, 0);
    pp__comm_group g8, g16;
    pp__group(&c, 8, 1, &g8);
    pp__group(&c, 16, 1, &g16);
    cr_expect(g16.chain == 8 && g16.tree_nodes == 2, "chain %d, nodes %d", g16.chain, g16.tree_nodes);
    double slope = 2 * 7.0 / 8 / g8.bw, slope16 = 2 / g16.bw; /* bytes/s terms of 1 byte */
    double r8 = BASE + 2 * 7 * 3.4e-6 + slope, t16 = BASE + 2 * (7 * 3.4e-6 + 1 * 5e-6) + slope16;
    cr_expect(fabs(pp__allreduce_s(&g8, 1) - r8) < 1e-12, "%.6g vs %.6g", pp__allreduce_s(&g8, 1), r8);
    cr_expect(fabs(pp__allreduce_s(&g16, 1) - t16) < 1e-12, "%.6g vs %.6g", pp__allreduce_s(&g16, 1), t16);
    cr_expect(pp__allreduce_s(&g16, 1) > pp__allreduce_s(&g8, 1));
    /* a family of groups straddling two NVLink domains (16 ranks at stride
     * 4 in blocks of 64 on 72-GPU racks) takes the tree over 2 domains */
    pp_cluster r = fx_cluster("gb200-nvl72", 16, 0);
    pp__comm_group s16;
    pp__group(&r, 16, 4, &s16);
    cr_expect(s16.crosses_nodes && s16.chain == 16 && s16.tree_nodes == 2, "chain %d, nodes %d", s16.chain,
              s16.tree_nodes);
}

/* Law: bytes over a group of size > 1 cost time. TP traffic hidden behind
 * the GEMMs by Transformer Engine's userbuffers (--tp-overlap) costs the
 * SMs TE takes for it: 8.5 of 132 on average (TE initialize_ub defaults:
 * 16 SMs for the reduce-scatter half, 1 for the all-gather half), so
 * exposed TP = slowdown x the hidden TP time when all of it hides. Each
 * collective hides behind its own GEMM (the all-gather behind the GEMM that
 * consumes it, the reduce-scatter behind the one that produces it).
 * Llama-3-8B on one DGX H100, SP, micro-batch 1, seq 8192: at tp 2 every
 * GEMM outlasts its collective (the output projection's 137 GFLOP against
 * half of 67 MB over NVLink): all hidden; at tp 8 the attention's GEMMs are
 * 8x smaller and its collectives longer: partly exposed, below the
 * un-overlapped time. It used to be charged 0 s. */
Test(law_cases, tp_overlap_is_not_free)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    for (int tp = 2; tp <= 8; tp *= 4) {
        pp_strategy s;
        pp_strategy_default(&s);
        s.framework = PP_FW_MEGATRON;
        s.tp = tp, s.sp = 1, s.dp = 8 / tp, s.seq = 8192, s.global_batch = 8 / tp;
        pp_plan plain, over;
        pp_error err = {""};
        s.overlap_tp = 0;
        pp_strategy a = s;
        cr_assert_eq(pp_estimate(&m, &c, &a, &plain, &err), PP_OK, "%s", err.msg);
        s.overlap_tp = 1;
        cr_assert_eq(pp_estimate(&m, &c, &s, &over, &err), PP_OK, "%s", err.msg);
        double want = 8.5 / 132 * plain.time.tp_comm_s;
        cr_expect(over.time.tp_comm_s > 0, "TP overlap moved TP bytes in 0 s");
        if (tp == 2)
            cr_expect(fabs(over.time.tp_comm_s / want - 1) < 1e-9, "exposed TP %.6g s, want %.6g s (all hidden)",
                      over.time.tp_comm_s, want);
        else
            cr_expect(over.time.tp_comm_s > want * 1.5 && over.time.tp_comm_s < plain.time.tp_comm_s,
                      "tp 8: exposed %.6g s between %.6g and %.6g", over.time.tp_comm_s, want, plain.time.tp_comm_s);
    }
}

/* Law: bytes over a group of size > 1 cost time. Mixtral-8x7B on 4 DGX
 * H100, dp 4 x cp 8, ep 8 (issue 13): the expert group is carved out of
 * dp x cp, 8 consecutive ranks on one node's NVLink (450 GB/s at NCCL's
 * 0.80, 3.4 us a hop). Per MoE block 4 all-to-alls (dispatch and combine,
 * forward and backward) of tokens x top-k x 2 bytes x hidden, tokens =
 * 32768 / cp per rank. Built with the data-parallel stride (d012ba3
 * steptime.c: stride cp x tp = 8, 8 members: past the 32 GPUs), the group
 * had no bandwidth and the term was 0 s. */
static double ep_by_hand(int cp)
{
    double tok = 32768.0 / cp, bytes = tok * 2 * 2 * 4096, bw = 450e9 * 0.80;
    double a2a = BASE + 7 * 3.4e-6 + 7.0 / 8 * bytes / bw;
    return 32 * 4 * a2a;
}

Test(law_cases, expert_group_beyond_dp_by_hand)
{
    pp_model m = fx_model("mixtral-8x7b");
    pp_cluster c = fx_cluster("dgx-h100", 4, 0);
    for (int cp = 4; cp <= 8; cp *= 2) {
        pp_strategy s;
        pp_strategy_default(&s);
        s.framework = PP_FW_MEGATRON;
        s.dp = 32 / cp, s.cp = cp, s.ep = 8, s.seq = 32768, s.global_batch = s.dp;
        pp_plan p;
        pp_error err = {""};
        cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
        double want = ep_by_hand(cp);
        cr_expect(fabs(p.time.ep_comm_s / want - 1) < 1e-9, "cp %d: EP %.6g s, by hand %.6g s", cp, p.time.ep_comm_s,
                  want);
    }
}

/* Law: activation bytes scale with the activation dtype. Qwen2.5-1.5B,
 * micro-batch 16 x 256 tokens on one GPU (issue 13: fp32 and bf16 both
 * stored 7.85 GiB): in fp32 every stored tensor doubles except flash
 * attention's fp32 log-sum-exp (4 bytes x heads per token, 12 heads) and
 * HF's two RMSNorms a block, which keep 8 bytes a hidden unit in both (an
 * fp32 copy of the input and, under AMP's fp32 residual stream, an fp32
 * output), so
 *   fp32 = 2 x bf16 - 28 blocks x (4 x 4096 tokens x 12 heads
 *                                  + 2 norms x 8 x 4096 tokens x 1536);
 * with materialised attention only the norms stay fixed. */
Test(law_cases, fp32_activations_by_hand)
{
    pp_model m = fx_model("qwen2.5-1.5b");
    pp_cluster c = fx_cluster("workstation-1x-4090", 0, 0);
    for (int att = 0; att < PP_ATTN_COUNT; att++) {
        double act[2];
        for (int i = 0; i < 2; i++) {
            pp_strategy s;
            pp_strategy_default(&s);
            s.framework = PP_FW_PYTORCH;
            s.micro_batch = 16, s.global_batch = 16, s.seq = 256, s.attention = (pp_attention)att;
            s.precision = i ? PP_PREC_FP32 : PP_PREC_BF16;
            pp_plan p;
            pp_error err = {""};
            cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
            act[i] = p.memory.stages[0].act_per_microbatch;
        }
        double lse = att == PP_ATTN_FLASH ? 28 * 4.0 * 4096 * 12 : 0, norms = 28 * 2 * 8.0 * 4096 * 1536;
        cr_expect(fabs(act[1] - (2 * act[0] - lse - norms)) < 1e-6 * act[1], "%s: fp32 %.9g B, bf16 %.9g B",
                  pp_attention_name((pp_attention)att), act[1], act[0]);
    }
}

/* A context-parallel ring hop that leaves a node is one GPU sending to one
 * GPU: one NIC (DGX H100: 400 Gb/s = 50 GB/s a GPU, at NCCL's 0.74), not
 * the 8 NICs the group's members in the node would drive for a collective
 * (red team, sessions 27 and 28). 64 MiB: 8 us + 5 us + 64 MiB / 37 GB/s. */
Test(law_cases, ring_hop_across_nodes_is_one_nic)
{
    pp_cluster c = fx_cluster("dgx-h100", 2, 0);
    pp__comm_group g;
    pp__group(&c, 16, 1, &g);
    double bytes = 64.0 * 1048576, want = 8e-6 + 5e-6 + bytes / (50e9 * 0.74);
    cr_expect(fabs(pp__ring_hop_s(&g, bytes) - want) < 1e-12 + 1e-9 * want, "%.9g s vs %.9g s", pp__ring_hop_s(&g, bytes),
              want);
    cr_expect_gt(pp__ring_hop_s(&g, bytes), 4 * pp__sendrecv_s(&g, bytes), "a collective's pooled NICs are faster");
    /* inside one node the hop is NVLink's */
    pp__comm_group n8;
    pp__group(&c, 8, 1, &n8);
    cr_expect_float_eq(pp__ring_hop_s(&n8, bytes), pp__sendrecv_s(&n8, bytes), 1e-15);
}
