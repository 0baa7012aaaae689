/*
 * test_nvme.c — NVMe offload (ZeRO-Infinity) by hand: what DeepSpeed
 * v0.14.5 keeps in host memory and swaps to the drives, the swap traffic of
 * one step, the capacity check, and the case of issue 13: Mistral-7B on one
 * RTX 4090, where NVMe offload was priced exactly as CPU offload (docs/time.md
 * and docs/memory.md, "NVMe").
 */
#include <criterion/criterion.h>
#include <math.h>

#include "costmodel/costmodel.h"
#include "tests/fixtures.h"

#define M_IN_CPU 1e9 /* offload_param.max_in_cpu */

/* Mistral-7B, full fine-tuning on one RTX 4090: DeepSpeed ZeRO-3, bf16,
 * full recomputation, micro-batch 1 x 8 (the model's seq, 8192). */
static pp_plan mistral_4090(pp_offload off)
{
    pp_model m = fx_model("mistral-7b");
    pp_cluster c = fx_cluster("workstation-1x-4090", 0, 0);
    pp_strategy s;
    pp_strategy_default(&s);
    s.framework = PP_FW_DEEPSPEED;
    s.zero = 3, s.offload = off, s.recompute = PP_RECOMPUTE_FULL, s.global_batch = 8, s.seq = m.seq;
    pp_plan p;
    pp_error err = {""};
    cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
    return p;
}

/* memory.md: NVMe = kP + 4P + w max(0, P - M); host = w min(P, M) +
 * w 5e8 + 4 min(P, 1e9) 4 + g P, with P = every parameter (one GPU, all
 * trained), k = 12 (AdamW + fp32 master), w = g = 2 (bf16). */
Test(nvme, states_by_hand)
{
    double P = fx_total_params("mistral-7b");
    pp_plan p = mistral_4090(PP_OFFLOAD_NVME);
    const pp_stage_mem *st = &p.memory.stages[0];
    double nvme = 12 * P + 4 * P + 2 * (P - M_IN_CPU);
    double host = 2 * M_IN_CPU + 2 * 5e8 + 4 * 1e9 * 4 + 2 * P;
    cr_expect(fabs(st->nvme_bytes / nvme - 1) < 1e-12, "NVMe %.6g vs %.6g", st->nvme_bytes, nvme);
    cr_expect(fabs(st->host_bytes / host - 1) < 1e-12, "host %.6g vs %.6g", st->host_bytes, host);
    cr_expect_eq(st->params_bytes, 0);
    cr_expect_eq(st->optimizer_bytes, 0);
    cr_expect_eq(p.memory.nvme_bytes_per_node, st->nvme_bytes, "one GPU per node");
    cr_expect_eq(p.memory.nvme_usable_bytes, 2e12, "the workstation's 2 TB");
    cr_expect(p.memory.nvme_fits && p.memory.host_fits && p.memory.fits);
    /* CPU offload keeps it all in host memory: 121 GiB, more than the 115 GiB usable */
    pp_plan cpu = mistral_4090(PP_OFFLOAD_OPT_PARAMS);
    cr_expect_eq(cpu.memory.stages[0].nvme_bytes, 0);
    cr_expect_eq(cpu.memory.nvme_bytes_per_node, 0);
    cr_expect(cpu.memory.nvme_fits && !cpu.memory.host_fits);
}

/* A drive too small for the swapped states does not fit, and says so. */
Test(nvme, capacity_check)
{
    pp_model m = fx_model("mistral-7b");
    pp_cluster c = fx_cluster("workstation-1x-4090", 0, 0);
    c.nvme_bytes = 100e9; /* 128 GB needed */
    pp_strategy s;
    pp_strategy_default(&s);
    s.framework = PP_FW_DEEPSPEED;
    s.zero = 3, s.offload = PP_OFFLOAD_NVME, s.recompute = PP_RECOMPUTE_FULL, s.global_batch = 8, s.seq = m.seq;
    pp_plan p;
    pp_error err = {""};
    cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
    cr_expect(p.memory.host_fits && p.memory.peak_bytes <= p.memory.gpu_bytes);
    cr_expect(!p.memory.nvme_fits && !p.memory.fits);
    cr_expect_eq(p.memory.nvme_usable_bytes, 100e9);
    /* eight GPUs of one node share its drives: 8 x the per-GPU bytes */
    pp_cluster d = fx_cluster("dgx-h100", 0, 8);
    pp_strategy t;
    pp_strategy_default(&t);
    t.framework = PP_FW_DEEPSPEED;
    t.zero = 3, t.offload = PP_OFFLOAD_NVME, t.dp = 8, t.global_batch = 8, t.seq = 2048;
    pp_model l = fx_model("llama3-70b");
    cr_assert_eq(pp_estimate(&l, &d, &t, &p, &err), PP_OK, "%s", err.msg);
    double P = fx_total_params("llama3-70b") / 8;
    double nvme = 16 * P + 2 * (P - M_IN_CPU);
    cr_expect(fabs(p.memory.stages[0].nvme_bytes / nvme - 1) < 1e-3, "%.6g vs %.6g", p.memory.stages[0].nvme_bytes,
              nvme);
    cr_expect(fabs(p.memory.nvme_bytes_per_node / (8 * p.memory.stages[0].nvme_bytes) - 1) < 1e-12);
}

/* time.md: NVMe adds to CPU offload of optimizer and parameters
 *   max(0, 4P/W - t_bwd) + (k+4)P/R + (kP + w(P-M))/W
 *   + m [max(copy, g w(P-M)/R) - t_c]+ - m [copy - t_c]+
 * with R = 2.5 GB/s, W = 1.25 GB/s (one drive, DeepNVMe), copy = g w P /
 * PCIe Gen4 31.5 GB/s, g = 2 + 32/34 gathers per micro-batch (forward,
 * backward, and DeepSpeed's again for each of the 32 recomputed blocks of
 * the 34 units: blocks, embedding, head), t_c one micro-batch's compute.
 * Everything is known but the last backward's time t_bwd, which must come
 * out between 0 and t_c. */
Test(nvme, step_traffic_by_hand)
{
    double P = fx_total_params("mistral-7b"), R = 2.5e9, W = 1.25e9, k = 12, w = 2, m = 8, g = 2 + 32.0 / 34;
    pp_plan nv = mistral_4090(PP_OFFLOAD_NVME), cpu = mistral_4090(PP_OFFLOAD_OPT_PARAMS);
    double tc = nv.time.compute_s / m, copy = g * w * P / 31.5e9, fetch = g * w * (P - M_IN_CPU) / R;
    double step = (k + 4) * P / R + (k * P + w * (P - M_IN_CPU)) / W;
    double fetches = m * (fmax(0, fmax(copy, fetch) - tc) - fmax(0, copy - tc));
    double grads = nv.time.offload_s - cpu.time.offload_s - step - fetches;
    double bwd = 4 * P / W - grads;
    cr_expect(bwd > 0 && bwd < tc, "implied backward %.4g s outside (0, %.4g)", bwd, tc);
    cr_expect(fabs(step - (46.35 + 79.51)) < 0.05, "step %.4g s", step);
    /* the rest of the step is as CPU offload prices it */
    cr_expect_eq(nv.time.compute_s, cpu.time.compute_s);
    cr_expect_eq(nv.time.optimizer_s, cpu.time.optimizer_s, "CPU-Adam either way");
    cr_expect(nv.time.step_s > 4 * cpu.time.step_s, "NVMe %.4g s vs CPU %.4g s", nv.time.step_s, cpu.time.step_s);
}

/* DeepSpeed ZeRO-3 over dp ranks; each test sets what it varies. */
static pp_strategy ds_zero3(int dp, int seq, long global_batch)
{
    pp_strategy s;
    pp_strategy_default(&s);
    s.framework = PP_FW_DEEPSPEED;
    s.dp = dp, s.zero = 3, s.seq = seq, s.global_batch = global_batch;
    return s;
}

/* Parameter offload copies each rank's partition host -> GPU before every
 * gather, not the whole stage: Llama-3-8B on one DGX H100, DeepSpeed
 * ZeRO-3 over 8 ranks, seq 512. Offloading the parameters too adds, per
 * micro-batch, max(0, g x 2 B x P/8 / (0.87 x 63 GB/s, PCIe Gen5) - b), g = 2
 * gathers (forward, backward); it used to copy all P (8x the bytes). The
 * budget b is the compute t_c less what the ZeRO-3 traffic (t_z a
 * micro-batch) already hides under: b = t_c - min(t_z, t_c) (one budget,
 * docs/time.md "Overlap"). */
Test(nvme, parameter_offload_copies_the_partition)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_plan p[2];
    for (int i = 0; i < 2; i++) {
        pp_strategy s = ds_zero3(8, 512, 16);
        s.offload = i ? PP_OFFLOAD_OPT_PARAMS : PP_OFFLOAD_OPTIMIZER;
        pp_error err = {""};
        cr_assert_eq(pp_estimate(&m, &c, &s, &p[i], &err), PP_OK, "%s", err.msg);
    }
    double P = fx_total_params("llama3-8b"), mb = 2, tc = p[1].time.compute_s / mb, tz = p[1].time.dp_comm_s / mb;
    double budget = tc - fmin(tz, tc);
    double copy = 2 * 2 * (P / 8) / (63e9 * 0.87), want = mb * fmax(0, copy - budget); /* copies at 0.87 of the link */
    double got = p[1].time.offload_s - p[0].time.offload_s;
    cr_expect(want > 0, "the copy (%.4g s) must outlast the budget (%.4g s of %.4g s) here", copy, budget, tc);
    cr_expect(fabs(got / want - 1) < 1e-6, "fetch exposed %.6g s, by hand %.6g s", got, want);
}

/* Issue 13: NVMe offload cost what CPU offload cost (14.421 s both, then
 * 59.474 s both); plan recommended full fine-tuning with NVMe offload on a
 * 4090 ahead of QLoRA. Now NVMe is slower, and QLoRA's best plan beats
 * every full fine-tuning plan that offloads to NVMe. */
static pp_plan best(pp_train_mode mode, unsigned offloads)
{
    pp_model m = fx_model("mistral-7b");
    pp_cluster c = fx_cluster("workstation-1x-4090", 0, 0);
    pp_search_opts o;
    pp_search_opts_default(&o);
    o.global_batch = 8, o.seq = 2048, o.top_k = 1, o.threads = 1, o.offloads = offloads; /* the issue's plan */
    o.base.ft.mode = mode;
    pp_plan_list l = {0};
    pp_error err = {""};
    cr_assert_eq(pp_plan_search(&m, &c, &o, &l, &err), PP_OK, "%s", err.msg);
    pp_plan p = l.plans[0];
    pp_plan_list_free(&l);
    return p;
}

Test(nvme, issue13_nvme_is_not_cpu_offload)
{
    pp_plan nv = mistral_4090(PP_OFFLOAD_NVME), cpu = mistral_4090(PP_OFFLOAD_OPT_PARAMS);
    cr_expect(nv.time.step_s > cpu.time.step_s, "NVMe %.6g s, CPU %.6g s", nv.time.step_s, cpu.time.step_s);
    pp_plan full = best(PP_MODE_FULL, 0), qlora = best(PP_MODE_QLORA, 0);
    pp_plan full_nvme = best(PP_MODE_FULL, 1u << PP_OFFLOAD_NVME);
    cr_expect_neq(full.strategy.offload, PP_OFFLOAD_NVME, "full fine-tuning's best plan offloads to NVMe");
    cr_expect(full_nvme.throughput.tokens_per_s < qlora.throughput.tokens_per_s,
              "NVMe full fine-tuning %.0f tokens/s vs QLoRA %.0f", full_nvme.throughput.tokens_per_s,
              qlora.throughput.tokens_per_s);
}

/* QLoRA's frozen linear weights are stored in NF4 (0.516 bytes a weight):
 * ZeRO-3 gathers them and parameter offload copies them as stored, not in
 * 16 bits (red team, session 27: LoRA and QLoRA printed the same step).
 * Llama-3-8B on 4 RTX 4090, DeepSpeed ZeRO-3, parameters offloaded. */
Test(nvme, qlora_moves_its_weights_as_stored)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("pcie-4x-4090", 0, 0);
    pp_plan p[2];
    for (int i = 0; i < 2; i++) {
        pp_strategy s = ds_zero3(4, 2048, 16);
        s.recompute = PP_RECOMPUTE_FULL, s.offload = PP_OFFLOAD_OPT_PARAMS;
        s.ft.mode = i ? PP_MODE_QLORA : PP_MODE_LORA;
        pp_error err = {""};
        cr_assert_eq(pp_estimate(&m, &c, &s, &p[i], &err), PP_OK, "%s", err.msg);
    }
    /* the linear weights are ~87% of Llama-3-8B's: the gathers move well under half */
    cr_expect_lt(p[1].time.dp_comm_s, 0.5 * p[0].time.dp_comm_s, "QLoRA %g s, LoRA %g s", p[1].time.dp_comm_s,
                 p[0].time.dp_comm_s);
    cr_expect_leq(p[1].time.offload_s, p[0].time.offload_s);
    cr_expect_gt(p[1].time.dp_comm_s, 0, "NF4 gathers still move bytes");
}

/* With its parameters offloaded even one rank brings them to the GPU unit by
 * unit: the block computing and the one prefetched (DeepSpeed: capped by
 * stage3_max_live_parameters, plus the prefetch bucket; FSDP2: two
 * blocks) are held, 2 bytes a weight; without offload one rank gathers
 * nothing (red team, session 27: both were 0 on one GPU). */
Test(nvme, one_rank_still_holds_the_fetched_units)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("workstation-1x-4090", 0, 0);
    const pp_framework fw[] = {PP_FW_DEEPSPEED, PP_FW_FSDP};
    double block = 2.0 * 4096 * 4096 + 2.0 * 4096 * 1024 + 3.0 * 4096 * 14336 + 2 * 4096;
    for (int f = 0; f < 2; f++)
        for (int off = 0; off < 2; off++) {
            pp_strategy s;
            pp_strategy_default(&s);
            s.framework = fw[f];
            s.dp = 1, s.zero = 3, s.seq = 1024, s.global_batch = 1, s.recompute = PP_RECOMPUTE_FULL;
            s.ft.mode = PP_MODE_LORA;
            s.offload = off ? PP_OFFLOAD_OPT_PARAMS : PP_OFFLOAD_OPTIMIZER;
            if (fw[f] == PP_FW_FSDP && !off) s.offload = PP_OFFLOAD_NONE;
            pp_plan p;
            pp_error err = {""};
            cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
            double got = p.memory.stages[0].zero_gather_bytes;
            if (off) cr_expect_geq(got, 2 * block * 2 * (1 - 1e-9), "%s: %.0f B", f ? "fsdp" : "deepspeed", got);
            else cr_expect_lt(got, 2 * block, "no offload, one rank: %.0f B", got);
        }
}
