/*
 * test_finetune.c — fine-tuning against independent truth: LoRA trainable
 * counts (PEFT's print_trainable_parameters output, and hand counts written
 * out here), QLoRA's storage arithmetic and its 65B-on-48GB claim
 * (Dettmers et al. 2023), optimizer bytes per parameter from each optimizer's
 * paper, frozen-weight backward cost, and the peak-moment rule.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "costmodel/costmodel.h"
#include "tests/fixtures.h"

static double lora_count(const char *model, int r, unsigned targets)
{
    pp_model m = fx_model(model);
    pp_strategy s;
    pp_strategy_default(&s);
    s.ft.mode = PP_MODE_LORA;
    s.ft.lora_rank = r;
    s.ft.lora_targets = targets;
    double total, trainable;
    pp_trainable_params(&m, &s, &total, &trainable);
    return trainable;
}

/* Each adapted d_in x d_out matrix adds r (d_in + d_out). */
Test(finetune, lora_counts_llama2_7b)
{
    /* q,v: 32 layers x 2 x r (4096 + 4096). PEFT prints 4,194,304 for r=8. */
    cr_expect_eq(lora_count("llama2-7b", 8, PP_LORA_Q | PP_LORA_V), 4194304);
    cr_expect_eq(lora_count("llama2-7b", 16, PP_LORA_Q | PP_LORA_V), 8388608);
    /* all linear, r=8: 32 x 8 x [4 x 8192 + 3 x (4096 + 11008)] = 19,988,480 */
    cr_expect_eq(lora_count("llama2-7b", 8, PP_LORA_ALL_LINEAR), 19988480);
}

Test(finetune, lora_counts_llama3_8b)
{
    /* q: r(4096+4096), v: r(4096+1024) (8 KV heads of 128): 32 x 8 x 13312 */
    cr_expect_eq(lora_count("llama3-8b", 8, PP_LORA_Q | PP_LORA_V), 3407872);
    cr_expect_eq(lora_count("llama3-8b", 16, PP_LORA_Q | PP_LORA_V), 6815744);
    /* all linear, r=16: 32 x 16 x [2 x 8192 + 2 x 5120 + 3 x 18432] = 41,943,040 */
    cr_expect_eq(lora_count("llama3-8b", 16, PP_LORA_ALL_LINEAR), 41943040);
}

/* QLoRA Sec. 3: NF4 4 bits; double quantisation cuts the constants from
 * 32/64 = 0.5 to 8/64 + 32/(64*256) = 0.127 bits per parameter. */
Test(finetune, qlora_storage_per_parameter)
{
    double bits = 4 + 8.0 / 64 + 32.0 / (64 * 256);
    cr_expect(fabs(pp__qlora_bytes_per_param() * 8 - bits) < 1e-12);
    cr_expect(fabs(pp__qlora_bytes_per_param() - 0.516) < 0.001, "about half a byte per parameter");
}

/* "QLoRA reduces the average memory requirements of finetuning a 65B
 * parameter model from >780GB of GPU memory to <48GB" — one 48 GB GPU, LoRA
 * r=64 on all linear layers, gradient checkpointing, batch 1 (QLoRA Sec. 4-5). */
Test(finetune, qlora_65b_fits_one_48gb_gpu)
{
    pp_model m = fx_model("llama-65b");
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_cluster_load("workstation-1x-4090", &c, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(pp_gpu_load("rtx-a6000", &c.gpu, &err), PP_OK, "%s", err.msg);
    pp_strategy s;
    pp_strategy_default(&s);
    s.ft.mode = PP_MODE_QLORA;
    s.ft.lora_rank = 64;
    s.ft.lora_dropout = 0.05;
    s.ft.lora_targets = PP_LORA_ALL_LINEAR;
    s.recompute = PP_RECOMPUTE_FULL;
    s.seq = 512;
    s.global_batch = 1;
    pp_plan p;
    cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
    cr_expect(p.memory.fits, "peak %.1f GiB of %.1f", p.memory.peak_bytes / PP_GIB, p.memory.gpu_bytes / PP_GIB);
    /* the adapters are bf16 (QLoRA's recipe): torch's AdamW keeps bf16 m
     * and v (zeros_like), 4 bytes an adapter weight, and foreach's one bf16
     * temporary, 2; r 64 on every linear of 80 blocks (red team rt3: 799.5 M;
     * the step was priced 4.5 GiB higher with fp32 states and temporary) */
    double lora = 0, act;
    for (int i = 0; i < m.layers; i++) lora += pp__lora_block_params(&m, &s, m.block_kind[i], &act);
    cr_expect(fabs(lora - 799.5e6) < 0.1e6, "%.4g adapter weights", lora);
    cr_expect_float_eq(p.memory.stages[0].optimizer_bytes, 4 * lora, 1);
    cr_expect_float_eq(p.memory.stages[0].opt_temp_bytes, 2 * lora, 1);
    /* and full fine-tuning of the same model does not (>780 GB) */
    s.ft.mode = PP_MODE_FULL;
    cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
    cr_expect_gt(p.memory.peak_bytes, 780e9);
}

/* Optimizer state bytes per trainable parameter, with the fp32 master copy
 * of mixed precision (4 bytes) where there is one. */
Test(finetune, optimizer_bytes_per_parameter)
{
    pp_model m = fx_model("llama3-8b");
    struct { pp_optimizer o; double mixed, fp32; const char *why; } t[] = {
        {PP_OPT_ADAMW, 12, 8, "Adam: m, v fp32 (Kingma & Ba; ZeRO's K = 12)"},
        {PP_OPT_ADAM8BIT, 4 + 2 + 8.0 / 2048, 2 + 8.0 / 2048, "bitsandbytes: int8 m, v + fp32 absmax per 2048"},
        {PP_OPT_SGD, 8, 4, "momentum buffer"},
        {PP_OPT_LION, 8, 4, "Lion: one momentum (Chen et al. 2023)"},
        {PP_OPT_ADAGRAD, 8, 4, "Adagrad: sum of squared gradients"},
        {PP_OPT_RMSPROP, 8, 4, "RMSprop: running square average"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        cr_expect(fabs(pp__optimizer_bytes_per_param(&m, t[i].o, PP_PREC_BF16) - t[i].mixed) < 1e-9, "%s", t[i].why);
        cr_expect(fabs(pp__optimizer_bytes_per_param(&m, t[i].o, PP_PREC_FP32) - t[i].fp32) < 1e-9, "%s", t[i].why);
    }
    /* Adafactor: factored second moment, rows + cols per matrix: well under a byte */
    double af = pp__optimizer_bytes_per_param(&m, PP_OPT_ADAFACTOR, PP_PREC_FP32);
    cr_expect_lt(af, 0.01);
}

/* A frozen layer's backward computes input gradients only: about one
 * forward instead of two, so LoRA's model FLOPs per token are ~4N, not 6N. */
Test(finetune, frozen_backward_costs_one_forward)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_cluster_load("dgx-h100", &c, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(pp_cluster_resize(&c, 0, 1, &err), PP_OK, "%s", err.msg);
    pp_strategy s;
    pp_strategy_default(&s);
    s.seq = 2048;
    s.global_batch = 1;
    pp_plan full, lora;
    cr_assert_eq(pp_estimate(&m, &c, &s, &full, &err), PP_OK, "%s", err.msg);
    s.ft.mode = PP_MODE_LORA;
    cr_assert_eq(pp_estimate(&m, &c, &s, &lora, &err), PP_OK, "%s", err.msg);
    double ratio = lora.throughput.model_flops_per_step / full.throughput.model_flops_per_step;
    cr_expect(ratio > 0.62 && ratio < 0.72, "LoRA/full model FLOPs %.3f, expected about 2/3", ratio);
    cr_expect_lt(lora.time.step_s, full.time.step_s);
    cr_expect_lt(lora.memory.peak_bytes, full.memory.peak_bytes);
}

/* The peak is a moment: one sequence of a 1.3B model on one GPU peaks in the
 * optimizer step (states + fp32 gradient copy); 32 sequences peak in the
 * forward/backward pass. */
Test(finetune, peak_moment_small_vs_large_batch)
{
    pp_model m = fx_model("gpt3-1.3b");
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_cluster_load("dgx-a100-80g", &c, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(pp_cluster_resize(&c, 0, 1, &err), PP_OK, "%s", err.msg);
    pp_strategy s;
    pp_strategy_default(&s);
    s.seq = 512;
    s.global_batch = 1;
    pp_plan p;
    cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(p.memory.stages[0].peak_phase, PP_PHASE_OPTIMIZER);
    s.micro_batch = s.global_batch = 32;
    cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(p.memory.stages[0].peak_phase, PP_PHASE_FWD_BWD);
}

/* DeepSpeed casts the module to bf16, adapters included, and its ZeRO
 * optimizer keeps an fp32 master and fp32 moments of each trainable element
 * (engine.py module.bfloat16(); stage_1_and_2.py
 * single_partition_of_fp32_groups): 4 + 4 + 4 = 12 bytes an adapter element
 * for AdamW, where torch's AdamW on TRL's bf16 QLoRA adapters keeps two bf16
 * moments, 4 bytes (red team rt7). Llama-3-70B, r 64 on every linear map, one
 * GPU: 64 x 80 x (2 x 16384 + 2 x 9216 + 3 x 36864) adapter elements. */
Test(finetune, deepspeed_adapters_keep_an_fp32_master_and_moments)
{
    pp_model m = fx_model("llama3-70b");
    pp_cluster c = fx_cluster("dgx-h100", 0, 1);
    pp_strategy s;
    pp_strategy_default(&s);
    s.ft.mode = PP_MODE_QLORA, s.ft.lora_rank = 64, s.ft.lora_targets = PP_LORA_ALL_LINEAR;
    s.framework = PP_FW_DEEPSPEED, s.zero = 1, s.seq = 4096, s.global_batch = 8, s.micro_batch = 1;
    s.recompute = PP_RECOMPUTE_FULL;
    double lora = 64.0 * 80 * (2 * 16384 + 2 * 9216 + 3 * 36864);
    pp_plan p;
    pp_error err = {""};
    cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
    cr_expect(fabs(p.params_trainable - lora) < 1, "%.0f adapter elements, by hand %.0f", p.params_trainable, lora);
    cr_expect(fabs(p.memory.stages[0].optimizer_bytes - 12 * lora) < 1e-9 * lora, "optimizer %.0f, by hand %.0f",
              p.memory.stages[0].optimizer_bytes, 12 * lora);
    s.framework = PP_FW_PYTORCH, s.zero = 0;
    cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
    cr_expect(fabs(p.memory.stages[0].optimizer_bytes - 4 * lora) < 1e-9 * lora, "torch on bf16 adapters %.0f, by hand %.0f",
              p.memory.stages[0].optimizer_bytes, 4 * lora);
}

/* PEFT's adapters outside their GEMMs' FLOPs (red team rt7, from the code
 * path of lora/layer.py): 16-bit adapters move 12 d_in + 20 d_out bytes a
 * token (forward and backward), fp32 ones under autocast 36 d_in + 20 d_out.
 * Llama-3-8B, q and v: 36 x 2 x 4096 + 20 x (4096 + 1024) = 397,312; every
 * linear map: 36 x 38,912 + 20 x 43,008 = 2,260,992. The step grows by it
 * at the GPU's HBM rate. */
Test(finetune, adapter_elementwise_traffic_by_hand)
{
    pp_model m = fx_model("llama3-8b");
    pp_strategy s;
    pp_strategy_default(&s);
    s.ft.mode = PP_MODE_LORA, s.ft.lora_targets = PP_LORA_Q | PP_LORA_V;
    double f, b;
    pp__lora_block_bytes(&m, &s, PP_BLOCK_DENSE, 1, &f, &b);
    cr_expect_float_eq(f + b, 397312.0, 1e-6);
    pp__lora_block_bytes(&m, &s, PP_BLOCK_DENSE, 0, &f, &b);
    cr_expect_float_eq(f + b, 12.0 * 2 * 4096 + 20.0 * (4096 + 1024), 1e-6);
    s.ft.lora_targets = PP_LORA_ALL_LINEAR;
    pp__lora_block_bytes(&m, &s, PP_BLOCK_DENSE, 1, &f, &b);
    cr_expect_float_eq(f + b, 2260992.0, 1e-6);
    /* in the step: one L40S, 4096 tokens, 32 blocks, HBM at its efficiency */
    pp_cluster c = fx_cluster("l40s-8x-eth", 0, 1);
    s.seq = 4096, s.global_batch = 1, s.micro_batch = 1, s.framework = PP_FW_PYTORCH;
    pp_plan p;
    pp_error err = {""};
    cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
    double with = p.time.compute_s;
    s.ft.lora_targets = PP_LORA_Q | PP_LORA_V;
    cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
    cr_expect_gt(with - p.time.compute_s, (2260992.0 - 397312.0) * 4096 * 32 / pp__hbm_bw_eff(&c.gpu));
}

/* QLoRA under DeepSpeed ZeRO-3 (red team rt15): transformers quantises the
 * whole model onto every GPU before DeepSpeed partitions it (no zero.Init
 * for quantised models), so Llama-3-70B needs, at load, its 80 blocks'
 * linear weights in NF4 (80 x (2 x 8192 x 1024 + 2 x 8192^2 + 3 x 8192 x
 * 28672) x 0.516 B) and the rest (embedding, head, norms: 2 x 128256 x 8192
 * + 8192 x 161) in bf16, plus the CUDA context: 37.8 GiB, more than a
 * 4090's 23.25, on each of four ranks that then hold a quarter of the base. And offloading parameters saves none of the 4-bit base's
 * GPU bytes (PEFT's DeepSpeed guide, caveat 3). */
Test(finetune, qlora_under_zero3_loads_the_whole_model_and_keeps_its_base)
{
    pp_model m = fx_model("llama3-70b");
    pp_cluster c = fx_cluster("pcie-4x-4090", 0, 4); /* four ranks: after loading, a quarter of the base each */
    pp_strategy s;
    pp_strategy_default(&s);
    s.ft.mode = PP_MODE_QLORA, s.framework = PP_FW_DEEPSPEED, s.zero = 3, s.offload = PP_OFFLOAD_OPT_PARAMS, s.dp = 4;
    s.seq = 1024, s.global_batch = 8, s.micro_batch = 1, s.recompute = PP_RECOMPUTE_FULL;
    static pp_plan p, q;
    pp_error err = {""};
    cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
    double lin = 80.0 * (2.0 * 8192 * 1024 + 2.0 * 8192 * 8192 + 3.0 * 8192 * 28672);
    double rest = 2.0 * 128256 * 8192 + 8192.0 * 161, nf4 = (4.0 + 8.0 / 64 + 32.0 / (64 * 256)) / 8;
    double want = lin * nf4 + rest * 2 + s.buf.cuda_context;
    cr_expect(fabs(p.memory.load_bytes - want) < 1e-6 * want, "load %.4g B, by hand %.4g", p.memory.load_bytes, want);
    cr_expect(p.memory.peak_bytes == p.memory.load_bytes && p.uncertainty.fit == PP_FIT_NO, "peak %.4g, %s",
              p.memory.peak_bytes, pp_fit_name(p.uncertainty.fit));
    /* 8B on one GPU: the base's partition stays on the GPU with or without offload */
    m = fx_model("llama3-8b");
    c = fx_cluster("workstation-1x-4090", 0, 1);
    s.dp = 1;
    cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
    s.offload = PP_OFFLOAD_OPTIMIZER;
    cr_assert_eq(pp_estimate(&m, &c, &s, &q, &err), PP_OK, "%s", err.msg);
    double base8 = 32.0 * (2.0 * 4096 * 1024 + 2.0 * 4096 * 4096 + 3.0 * 4096 * 14336) * nf4;
    cr_expect(fabs(p.memory.stages[0].params_bytes - base8) < 1e-6 * base8, "on the GPU with offload %.4g B, the base %.4g",
              p.memory.stages[0].params_bytes, base8);
    cr_expect_gt(q.memory.stages[0].params_bytes, base8); /* and the 16-bit embedding and head without it */
}
