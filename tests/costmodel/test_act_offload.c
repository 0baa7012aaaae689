/*
 * test_act_offload.c — Megatron-Core's CPU offloading of activations
 * (--cpu-offloading-num-layers N, through Transformer Engine): the rule that
 * holds Megatron's asserts, the memory it moves (two accountings checked
 * against each other and against the stage's activations), the time it
 * exposes (by hand from the bytes and the PCIe bandwidth), and its laws.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "tests/fixtures.h"

/* Llama-3-8B on one DGX H100: megatron, dp 8, ZeRO-1, micro-batch 1 of
 * 8192 tokens, m micro-batches per step, N blocks offloaded. */
static pp_status run(const pp_model *m, const pp_cluster *c, int n, int micro_batches, pp_plan *p, pp_error *err)
{
    pp_strategy s;
    pp_strategy_default(&s);
    s.framework = PP_FW_MEGATRON;
    s.dp = 8, s.zero = 1, s.micro_batch = 1, s.seq = 8192, s.global_batch = 8 * micro_batches;
    s.act_offload_layers = n;
    return pp_estimate(m, c, &s, p, err);
}

/* Megatron-Core's transformer_config.py: no CPU offloading with pipeline
 * parallelism or with recomputation, and fewer blocks than the model has;
 * only Megatron (Transformer Engine's offload context) offloads. */
Test(act_offload, megatron_asserts_are_rules)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    struct {
        pp_framework fw;
        int pp, n;
        pp_recompute rc;
        const char *want;
    } bad[] = {
        {PP_FW_MEGATRON, 2, 4, PP_RECOMPUTE_NONE, "pipeline parallelism"},
        {PP_FW_MEGATRON, 1, 4, PP_RECOMPUTE_SELECTIVE, "recomputation"},
        {PP_FW_MEGATRON, 1, 4, PP_RECOMPUTE_FULL, "recomputation"},
        {PP_FW_MEGATRON, 1, 32, PP_RECOMPUTE_NONE, "fewer blocks than the model has (32)"},
        {PP_FW_MEGATRON, 1, -1, PP_RECOMPUTE_NONE, "expected a block count >= 0"},
        {PP_FW_DEEPSPEED, 1, 4, PP_RECOMPUTE_NONE, "frameworks that do: megatron"},
        {PP_FW_FSDP, 1, 4, PP_RECOMPUTE_NONE, "frameworks that do: megatron"},
        {PP_FW_MEGATRON_DEEPSPEED, 1, 4, PP_RECOMPUTE_NONE, "frameworks that do: megatron"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pp_strategy s;
        pp_strategy_default(&s);
        s.framework = bad[i].fw;
        s.dp = 8 / bad[i].pp, s.pp = bad[i].pp, s.recompute = bad[i].rc, s.global_batch = 64, s.seq = 4096;
        s.zero = bad[i].fw == PP_FW_FSDP ? 3 : 0;
        s.act_offload_layers = bad[i].n;
        pp_plan p;
        pp_error err = {""};
        cr_expect_eq(pp_estimate(&m, &c, &s, &p, &err), PP_ERR_INPUT, "case %zu passed", i);
        cr_expect_eq(err.rule, PP_RULE_FW_ACT_OFFLOAD, "case %zu: rule %d: %s", i, err.rule, err.msg);
        cr_expect(strstr(err.msg, bad[i].want), "case %zu: %s", i, err.msg);
    }
    pp_plan p;
    pp_error err = {""};
    cr_expect_eq(run(&m, &c, 31, 1, &p, &err), PP_OK, "31 of 32 blocks: %s", err.msg);
}

/* Memory. Llama-3-8B's 32 blocks are alike, so with b one block's stored
 * activations:
 *   host    H(N) = N b        (pinned buffers, per GPU)
 *   GPU     A(N) = A(0) - N b (Transformer Engine's DefaultOffloadSynchronizer
 *                              has every offloaded block's copy done before
 *                              the last block: (L - N) T at most, its docstring)
 *   stage   A(0) = 32 b + the final norm's and the head's inputs,
 *                  2 x 2 bytes x 8192 tokens x 4096 = 134,217,728 bytes
 * The host side is pp__act_offload_bytes, the GPU side stage_act's loop:
 * two code paths. */
Test(act_offload, memory_moves_to_the_host)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_plan p0, p;
    pp_error err = {""};
    cr_assert_eq(run(&m, &c, 0, 1, &p0, &err), PP_OK, "%s", err.msg);
    const pp_stage_mem *s0 = &p0.memory.stages[0];
    double b = (s0->act_per_microbatch - 2 * 2.0 * 8192 * 4096) / 32;
    cr_expect_eq(s0->act_offload_bytes, 0);
    cr_expect_eq(p0.memory.host_bytes_per_node, 0);
    const int ns[] = {1, 2, 8, 16, 31};
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
        int n = ns[i];
        cr_assert_eq(run(&m, &c, n, 1, &p, &err), PP_OK, "%s", err.msg);
        const pp_stage_mem *st = &p.memory.stages[0];
        cr_expect(fabs(st->act_offload_bytes - n * b) < 1e-6 * n * b, "N %d: host %.9g, by hand %.9g", n,
                  st->act_offload_bytes, n * b);
        double gpu = s0->act_per_microbatch - n * b;
        cr_expect(fabs(st->act_per_microbatch - gpu) < 1e-6 * gpu, "N %d: GPU %.9g, by hand %.9g", n,
                  st->act_per_microbatch, gpu);
        cr_expect(fabs(p.memory.host_bytes_per_node - 8 * n * b) < 1e-6 * n * b, "N %d: node %.9g", n,
                  p.memory.host_bytes_per_node);
    }
}

/* Time. The copies run on streams of their own beside the compute: out
 * during the forward, back during the backward, so per micro-batch
 *   exposed = max(0, t - forward) + max(0, t - backward),  t = H / (0.87 PCIe),
 * host copies reaching 0.87 of the link (nvbandwidth, Gen5: 88% and 87%).
 * Over a 1 GB/s link every copy outlasts its pass, so over m micro-batches
 *   offload_s = m (2 t - forward - backward) = 2 m t - compute_s.
 * On links where the forward is shorter than t and the backward longer
 * (t between 0.45 and 0.55 of a micro-batch's compute: the backward is about
 * twice the forward), only the way out shows, m (t - forward), so two such
 * links differ by m (t2 - t1) = 0.1 compute_s whatever the forward is. */
Test(act_offload, exposed_copy_time_by_hand)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    c.pcie.bw = 1e9;
    pp_plan p;
    pp_error err = {""};
    const int mb = 4;
    cr_assert_eq(run(&m, &c, 24, mb, &p, &err), PP_OK, "%s", err.msg);
    double t = p.memory.stages[0].act_offload_bytes / (1e9 * 0.87); /* copies at 0.87 of the link (steptime.c) */
    double want = 2 * mb * t - p.time.compute_s;
    cr_expect(want > 0);
    cr_expect(fabs(p.time.offload_s - want) < 1e-9 * want, "offload %.9g s, by hand %.9g s", p.time.offload_s, want);
    double per_mb = p.time.compute_s / mb, off[2];
    for (int i = 0; i < 2; i++) {
        c.pcie.bw = p.memory.stages[0].act_offload_bytes / ((i ? 0.55 : 0.45) * per_mb * 0.87);
        pp_plan q;
        cr_assert_eq(run(&m, &c, 24, mb, &q, &err), PP_OK, "%s", err.msg);
        off[i] = q.time.offload_s;
    }
    cr_expect(off[0] > 0, "t = 0.45 of a micro-batch: the copy out outlasts the forward");
    cr_expect(fabs(off[1] - off[0] - 0.1 * p.time.compute_s) < 1e-9 * p.time.compute_s,
              "out only: %.9g s more, by hand %.9g s", off[1] - off[0], 0.1 * p.time.compute_s);
    double sum = p.time.compute_s + p.time.recompute_s + p.time.tp_comm_s + p.time.cp_comm_s + p.time.ep_comm_s +
                 p.time.pp_comm_s + p.time.dp_comm_exposed_s + p.time.bubble_s + p.time.optimizer_s + p.time.offload_s;
    cr_expect(fabs(sum - p.time.step_s) < 1e-9 * p.time.step_s, "breakdown %.9g s, step %.9g s", sum, p.time.step_s);
}

/* Laws: offloading more blocks never raises the GPU's activations or peak
 * and never shortens the step; moving bytes over a slower link never costs
 * less. */
Test(act_offload, monotone_in_blocks_and_bandwidth)
{
    pp_model m = fx_model("llama3-8b");
    const double links[] = {64e9, 8e9, 1e9};
    double prev_link = -1;
    for (size_t l = 0; l < sizeof links / sizeof *links; l++) {
        pp_cluster c = fx_cluster("dgx-h100", 1, 0);
        c.pcie.bw = links[l];
        double prev_act = HUGE_VAL, prev_peak = HUGE_VAL, prev_step = 0;
        for (int n = 1; n < 32; n++) {
            pp_plan p;
            pp_error err = {""};
            cr_assert_eq(run(&m, &c, n, 2, &p, &err), PP_OK, "%s", err.msg);
            double act = p.memory.stages[0].act_per_microbatch;
            cr_expect(act <= prev_act * (1 + 1e-12), "N %d: activations rose", n);
            cr_expect(p.memory.peak_bytes <= prev_peak * (1 + 1e-12), "N %d: peak rose", n);
            cr_expect(p.time.step_s >= prev_step * (1 - 1e-12), "N %d: step fell", n);
            cr_expect(p.time.offload_s >= 0);
            prev_act = act, prev_peak = p.memory.peak_bytes, prev_step = p.time.step_s;
            if (n == 31) {
                cr_expect(p.time.offload_s >= prev_link, "link %.3g: offload %.6g s < %.6g s on a faster link",
                          links[l], p.time.offload_s, prev_link);
                prev_link = p.time.offload_s;
            }
        }
    }
}
