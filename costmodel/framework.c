/*
 * framework.c — the frameworks as data (docs/frameworks.md has the same
 * table as prose, with sources). Each entry says which values a framework
 * can express and how it runs them; pp__fw_fill turns AUTO behaviours of a
 * strategy into the framework's.
 */
#include <math.h>
#include <string.h>

#include "costmodel/costmodel.h"
#include "costmodel/framework.h"

#define B PP__BIT
#define ALL_ZERO (B(0) | B(1) | B(2) | B(3))
#define ALL_OFFLOAD (B(PP_OFFLOAD_NONE) | B(PP_OFFLOAD_OPTIMIZER) | B(PP_OFFLOAD_OPT_PARAMS) | B(PP_OFFLOAD_NVME))
#define ALL_OPT ((1u << PP_OPT_COUNT) - 1)
#define ALL_MODES ((1u << PP_MODE_COUNT) - 1)
#define RC_ALL (B(PP_RECOMPUTE_NONE) | B(PP_RECOMPUTE_SELECTIVE) | B(PP_RECOMPUTE_FULL))
#define RC_BLOCKS (B(PP_RECOMPUTE_NONE) | B(PP_RECOMPUTE_FULL))
#define P16 (B(PP_PREC_FP32) | B(PP_PREC_BF16) | B(PP_PREC_FP16))

static const pp__fw table[PP_FW_COUNT] = {
    /* PyTorch 2.x with DDP, as the HF Trainer runs it without DeepSpeed or
     * FSDP: AMP keeps fp32 parameters (torch.autocast), .grad is fp32 and
     * freed by zero_grad(set_to_none=True) (the default since PyTorch 2.0),
     * DDP adds flat buckets (gradient_as_bucket_view=False by default),
     * torch.optim.AdamW's default foreach path holds one parameter-sized
     * temporary. Gradient checkpointing is per block (HF). */
    [PP_FW_PYTORCH] = {
        .name = "pytorch", .title = "PyTorch (DDP, HF Trainer, PEFT, bitsandbytes)",
        .ce_upcast = 1, .unfused_glu = 1, .eager_rmsnorm = 1,
        .zero = B(0), .zero_pp = B(0), .cp_comm = ~0u, .offload = B(PP_OFFLOAD_NONE),
        .schedules = B(PP_SCHED_1F1B), .precisions = P16, .recompute = RC_BLOCKS, .optimizers = ALL_OPT,
        .modes = ALL_MODES, .freeze = 1, .losses = B(PP_LOSS_FP32) | B(PP_LOSS_CHUNKED), .split = PP_SPLIT_EVEN,
        .fixed_order = 1, .weights = PP_W_AMP, .buckets = PP_BUCKETS_DDP, .opt_temp = PP_OPT_TEMP_FOREACH,
        .cp_default = PP_CP_RING,
    },
    /* DeepSpeed v0.14.5 (tests/reference/deepspeed_config.md): ZeRO 0-3 and
     * offload; PipelineEngine runs 1F1B only, with ZeRO <= 1, splits layers by
     * partition_method, checkpoints every layer, keeps stage outputs until
     * their backward and reduces gradients after the flush; sequence
     * parallelism is Ulysses; tensor parallelism needs Megatron's model code
     * and expert parallelism DeepSpeed-MoE layers in the model
     * (deepspeed.moe.layer.MoE): both are megatron-deepspeed. An HF MoE
     * model under DeepSpeed keeps its experts data-parallel. */
    [PP_FW_DEEPSPEED] = {
        .name = "deepspeed", .title = "DeepSpeed v0.14.5", .ce_upcast = 1, .unfused_glu = 1, .eager_rmsnorm = 1,
        .zero = ALL_ZERO, .zero_pp = B(0) | B(1), .pp = 1, .cp = 1, .cp_comm = B(PP_CP_A2A),
        .offload = ALL_OFFLOAD, .schedules = B(PP_SCHED_1F1B), .precisions = P16, .recompute = RC_BLOCKS,
        .optimizers = ALL_OPT, .modes = ALL_MODES, .freeze = 1, .losses = B(PP_LOSS_FP32) | B(PP_LOSS_CHUNKED),
        .split = PP_SPLIT_DEEPSPEED, .fixed_order = 1, .weights = PP_W_MASTER16, .buckets = PP_BUCKETS_DEEPSPEED,
        .opt_temp = PP_OPT_TEMP_DEEPSPEED, .cp_default = PP_CP_A2A,
    },
    /* Megatron-LM / Megatron-Core: TP with sequence parallelism and TE's TP
     * overlap, the distributed optimizer (ZeRO-1) with an fp32 main_grad
     * buffer whose buckets are views, 1F1B and interleaved schedules,
     * outputs freed once sent, CP p2p/all_gather/a2a, EP, selective and
     * full recompute with --recompute-num-layers, any split through
     * --pipeline-model-parallel-layout. ZeRO-3 is Megatron-FSDP
     * (--use-megatron-fsdp --data-parallel-sharding-strategy
     * optim_grads_params; arguments.py: adam or sgd, ckpt-format
     * fsdp_dtensor, CUDA_DEVICE_MAX_CONNECTIONS != 1), per transformer layer
     * with --fsdp-double-buffer; without pipeline stages, as Megatron-
     * Bridge's recipes run it (perf_recipes/llama/gb200/llama3.py).
     * bf16 AdamW moments: the precision-aware optimizer (optimizer_config.py
     * d98e8a64dd: adam only, store_param_remainders on by default with
     * Transformer Engine >= 2.1; optimizer/__init__.py: the distributed
     * optimizer only), as Megatron-Bridge's DeepSeek and Qwen3-MoE recipes
     * run it. */
    [PP_FW_MEGATRON] = {
        .name = "megatron", .title = "Megatron-LM (Megatron-Core)",
        .zero = B(0) | B(1) | B(3), .zero_pp = B(0) | B(1), .tp = 1, .pp = 1, .cp = 1, .ep = 1, .sp = 1,
        .cp_comm = B(PP_CP_RING) | B(PP_CP_ALLGATHER) | B(PP_CP_A2A), .offload = B(PP_OFFLOAD_NONE),
        .schedules = B(PP_SCHED_1F1B) | B(PP_SCHED_INTERLEAVED), .precisions = P16 | B(PP_PREC_FP8),
        .recompute = RC_ALL, .partial_recompute = 1, .optimizers = B(PP_OPT_ADAMW) | B(PP_OPT_SGD),
        .modes = B(PP_MODE_FULL), .losses = B(PP_LOSS_FP32) | B(PP_LOSS_FUSED), .split = PP_SPLIT_ANY,
        .megatron_arch = 1, .fixed_order = 1, .tp_overlap = 1, .dp_overlap_pp = 1, .act_offload = 1, .etp = 1,
        .mcore_moe = 1, .cp_balanced = 1, .fp8_bf16_head = 1,
        .bf16_opt_states = 1, .fp8_param_gather = 1, .recompute_modules = 1, .fp8_proj_original = 1, .flash_core_checkpoint = 1,
        .weights = PP_W_MASTER16, .buckets = PP_BUCKETS_VIEWS, .opt_temp = PP_OPT_TEMP_NONE, .grads_persist = 1,
        .free_outputs = 1, .cp_default = PP_CP_RING, .z3_per_block = 1, .alloc_env = 1, .te_attention = 1,
    },
    /* microsoft/Megatron-DeepSpeed: Megatron's model and TP/SP under
     * DeepSpeed's engine (ZeRO, offload, PipelineEngine with
     * type:transformer splits, Ulysses, DeepSpeed-MoE). */
    [PP_FW_MEGATRON_DEEPSPEED] = {
        .name = "megatron-deepspeed", .title = "Megatron-DeepSpeed", .unfused_glu = 1, .gshard_einsum = 1,
        .zero = ALL_ZERO, .zero_pp = B(0) | B(1), .tp = 1, .pp = 1, .cp = 1, .ep = 1, .sp = 1,
        .cp_comm = B(PP_CP_A2A), .offload = ALL_OFFLOAD, .schedules = B(PP_SCHED_1F1B), .precisions = P16,
        .recompute = RC_ALL, .optimizers = B(PP_OPT_ADAMW) | B(PP_OPT_SGD), .modes = B(PP_MODE_FULL),
        .losses = B(PP_LOSS_FP32), .split = PP_SPLIT_DEEPSPEED, .megatron_arch = 1, .fixed_order = 1,
        .weights = PP_W_MASTER16, .buckets = PP_BUCKETS_DEEPSPEED, .opt_temp = PP_OPT_TEMP_DEEPSPEED,
        .cp_default = PP_CP_A2A,
    },
    /* PyTorch FSDP2 (fully_shard) as torchtitan and HF Accelerate run it:
     * per-block units all-gathered in 16 bits (one prefetched), fp32
     * sharded parameters and gradients, reshard after forward (ZeRO-3) or
     * not (2), hybrid sharding, TP always with sequence parallelism; with
     * pipeline stages, torch.distributed.pipelining keeps a stage gathered
     * from its first forward to its last backward (reshard_after_forward
     * False, no reshard or reduce-scatter before the last micro-batch):
     * zero 2 only,
     * torch.distributed.pipelining schedules, CP all-gather/ring rotation,
     * CPU offload of parameters and optimizer, fused AdamW; selective
     * recompute is torchtitan's per-op policy (activation_checkpoint mode
     * selective, selective_ac_option "op"). Full recompute under Accelerate
     * (fsdp_activation_checkpointing, accelerator.py) wraps each block in
     * checkpoint_wrapper's NO_REENTRANT: torch.utils.checkpoint without
     * reentrancy, whose recomputation stops once every saved tensor is back
     * (early stop, the default since PyTorch 2.1, pytorch PR #96866);
     * torchtitan v0.2.2 passes early_stop=False (its default since PR #1580,
     * August 2025: a leak with MoE all-to-alls). */
    [PP_FW_FSDP] = {
        .name = "fsdp", .title = "PyTorch FSDP2 (torchtitan, HF Accelerate)",
        .ce_upcast = 1, .unfused_glu = 1, .fp8_hp_inputs = 1, .cp_balanced = 1, .fp8_bf16_head = 1,
        .zero = B(2) | B(3), .zero_pp = B(2), .tp = 1, .pp = 1, .cp = 1, .sp = 2, .shard = 1,
        .cp_comm = B(PP_CP_ALLGATHER) | B(PP_CP_RING), .offload = B(PP_OFFLOAD_NONE) | B(PP_OFFLOAD_OPT_PARAMS),
        .schedules = B(PP_SCHED_1F1B) | B(PP_SCHED_INTERLEAVED) | B(PP_SCHED_GPIPE),
        .precisions = B(PP_PREC_FP32) | B(PP_PREC_BF16) | B(PP_PREC_FP8), .recompute = RC_ALL, .selective_ops = 1,
        .optimizers = ALL_OPT & ~B(PP_OPT_ADAM8BIT), .modes = B(PP_MODE_FULL) | B(PP_MODE_LORA), .freeze = 1,
        .losses = B(PP_LOSS_FP32) | B(PP_LOSS_FUSED), .split = PP_SPLIT_ANY, .fixed_order = 1, .dp_overlap_pp = 1,
        .weights = PP_W_FSDP, .buckets = PP_BUCKETS_FSDP, .opt_temp = PP_OPT_TEMP_NONE,
        .cp_default = PP_CP_ALLGATHER, .z3_per_block = 1, .tp_gathered_inputs = 1, .recompute_early_stop = 1,
    },
};

const pp__fw *pp__fw_get(pp_framework f) { return (unsigned)f < PP_FW_COUNT ? &table[f] : NULL; }

const char *pp_framework_name(pp_framework f)
{
    return (unsigned)f < PP_FW_COUNT ? table[f].name : f == PP_FW_AUTO ? "auto" : "?";
}

const char *pp_framework_title(pp_framework f) { return (unsigned)f < PP_FW_COUNT ? table[f].title : "?"; }

int pp__ds_is_bf16(const pp_strategy *s) { return s->precision == PP_PREC_BF16 || s->precision == PP_PREC_FP8; }

pp__ds_wrapper pp__ds_wrapper_of(const pp_strategy *s)
{
    if (pp__ds_is_bf16(s) && s->grad_accum_dtype == PP_GRAD_16_FP32 && s->zero <= 1 && s->offload == PP_OFFLOAD_NONE)
        return PP_DS_BF16;
    if (s->zero >= 1) return PP_DS_ZERO;
    return s->precision == PP_PREC_FP16 ? PP_DS_FP16 : PP_DS_PLAIN;
}

int pp__zero_states(const pp_strategy *s)
{
    const pp__fw *f = pp__fw_get(s->framework);
    if (f && f->weights == PP_W_FSDP) return 3; /* sharded in both reshard modes */
    if (f && f->buckets == PP_BUCKETS_DEEPSPEED && pp__ds_wrapper_of(s) == PP_DS_BF16) return 1;
    return s->zero;
}

/* The gradient dtype a framework accumulates in. */
static pp_grad_accum grad_default(const pp__fw *f, const pp_strategy *s)
{
    if (s->precision == PP_PREC_FP32) return PP_GRAD_16; /* unused: fp32 gradients */
    switch (f->weights) {
    case PP_W_AMP: return PP_GRAD_FP32; /* .grad of fp32 parameters */
    /* torchtitan reduces in fp32 (mixed_precision_reduce); Accelerate's
     * FSDP2 policy in the parameter dtype (utils/dataclasses.py
     * set_mixed_precision: reduce_dtype = param_dtype) */
    case PP_W_FSDP: return pp__fsdp_accelerate(s) ? PP_GRAD_16 : PP_GRAD_FP32;
    default: break;
    }
    if (f->buckets == PP_BUCKETS_VIEWS) /* Megatron: --bf16 forces fp32 main_grad */
        return s->precision == PP_PREC_FP16 ? PP_GRAD_16 : PP_GRAD_FP32;
    /* DeepSpeed: bf16 without ZeRO runs BF16_Optimizer (fp32 accumulation) */
    return s->precision == PP_PREC_BF16 && s->zero == 0 ? PP_GRAD_16_FP32 : PP_GRAD_16;
}

/* Whether DP/ZeRO traffic overlaps the backward pass. DeepSpeed: the
 * PipelineEngine reduces after the flush and the non-ZeRO wrappers after
 * backward; with ZeRO, ds_config's overlap_comm (parplan writes true). */
static int overlap_default(const pp__fw *f, const pp_strategy *s)
{
    if (s->pp > 1 && !f->dp_overlap_pp) return 0;
    if (f->buckets == PP_BUCKETS_DEEPSPEED) return pp__ds_wrapper_of(s) == PP_DS_ZERO;
    return 1;
}

/* Megatron-LM's bucket when --ddp-bucket-size is not given: max(40M,
 * 1M x dp x cp) elements, "to ensure that chunks used in NCCL ring-reduce
 * implementations are large enough to remain bandwidth-bound" (training.py
 * resolve_ddp_bucket_size, the dp x cp group; distributed_data_parallel.py,
 * d98e8a64dd). */
static double mcore_bucket(const pp_strategy *s) { return fmax(4e7, 1e6 * s->dp * s->cp); }

/* DeepSpeed buckets (elements): reduce_bucket_size and allgather_bucket_size
 * 5e8 (deepspeed/runtime/zero/config.py); DDP: bucket_cap_mb 25 MiB of fp32
 * gradients (torch.nn.parallel.DistributedDataParallel); Megatron's above. */
static void buckets_default(const pp__fw *f, pp_strategy *s, pp_buffers *b)
{
    double ddp = 25.0 * 1048576 / 4;
    if (b->reduce_bucket <= 0)
        b->reduce_bucket = f->buckets == PP_BUCKETS_DDP ? ddp : f->buckets == PP_BUCKETS_VIEWS ? mcore_bucket(s) : 5e8,
        s->filled |= PP_FILLED_REDUCE_BUCKET;
    if (b->allgather_bucket <= 0) b->allgather_bucket = 5e8, s->filled |= PP_FILLED_ALLGATHER_BUCKET;
    /* without its ZeRO optimizer DeepSpeed all-reduces in fixed 5e8-element
     * buckets (engine.py MEMORY_OPT_ALLREDUCE_SIZE), whatever the config says */
    if (f->buckets == PP_BUCKETS_DEEPSPEED && pp__ds_wrapper_of(s) != PP_DS_ZERO) b->reduce_bucket = 5e8;
}

/* Expandable segments where the launch file can set them, on NVIDIA GPUs:
 * PyTorch enabled them on ROCm only in 2.11 (pytorch PR #177974, March
 * 2026), with hangs still reported (issue #192259). They cost no time and
 * only lower memory (docs/memory.md, "Allocator"). */
static int expandable_default(const pp__fw *f, const pp_cluster *c)
{
    return f->alloc_env && c && strcmp(c->gpu.vendor, "NVIDIA") == 0;
}

/* FP8 primary weights wherever Megatron-LM takes them (arguments.py:
 * --fp8-param-gather needs fp8, and the distributed optimizer or
 * Megatron-FSDP; d98e8a64dd), as Megatron-Bridge's FP8 recipes and NVIDIA's
 * MLPerf v5.1 runs set them: less memory and half the parameter gather,
 * for the same arithmetic (docs/memory.md, "FP8 primary weights"). */
static int fp8_params_default(const pp__fw *f, const pp_strategy *s)
{
    return f->fp8_param_gather && s->precision == PP_PREC_FP8 && s->zero >= 1 && s->ft.mode == PP_MODE_FULL &&
           s->offload == PP_OFFLOAD_NONE;
}

int pp__fp8_params(const pp_strategy *s)
{
    if (s->precision != PP_PREC_FP8) return 0;
    if (s->fp8_param_gather >= 0) return s->fp8_param_gather > 0;
    const pp__fw *f = pp__fw_get(s->framework);
    return f && fp8_params_default(f, s);
}

void pp__fw_fill(pp_strategy *s, const pp_cluster *c)
{
    const pp__fw *f = pp__fw_get(s->framework);
    if (!f) return;
    if (s->grad_accum_dtype == PP_GRAD_AUTO) s->grad_accum_dtype = grad_default(f, s), s->filled |= PP_FILLED_GRAD_DTYPE;
    if (s->cp_comm == PP_CP_AUTO) s->cp_comm = f->cp_default, s->filled |= PP_FILLED_CP_COMM;
    if (s->loss == PP_LOSS_AUTO) s->loss = PP_LOSS_FP32, s->filled |= PP_FILLED_LOSS;
    if (s->overlap_dp < 0) s->overlap_dp = overlap_default(f, s), s->filled |= PP_FILLED_OVERLAP_DP;
    if (s->overlap_tp < 0)
        s->overlap_tp = f->tp_overlap && s->sp && s->tp > 1 && pp__tp_overlap_hw(c), s->filled |= PP_FILLED_OVERLAP_TP;
    if (s->buf.free_pipeline_outputs < 0) s->buf.free_pipeline_outputs = f->free_outputs, s->filled |= PP_FILLED_OUTPUTS;
    if (s->buf.expandable_segments < 0)
        s->buf.expandable_segments = expandable_default(f, c), s->filled |= PP_FILLED_ALLOCATOR;
    if (s->fp8_param_gather < 0) s->fp8_param_gather = fp8_params_default(f, s), s->filled |= PP_FILLED_FP8_PARAMS;
    buckets_default(f, s, &s->buf);
}

void pp__fw_unfill(pp_strategy *s)
{
    unsigned k = s->filled;
    if (k & PP_FILLED_FRAMEWORK) s->framework = PP_FW_AUTO;
    if (k & PP_FILLED_GRAD_DTYPE) s->grad_accum_dtype = PP_GRAD_AUTO;
    if (k & PP_FILLED_CP_COMM) s->cp_comm = PP_CP_AUTO;
    if (k & PP_FILLED_LOSS) s->loss = PP_LOSS_AUTO;
    if (k & PP_FILLED_OVERLAP_DP) s->overlap_dp = -1;
    if (k & PP_FILLED_OVERLAP_TP) s->overlap_tp = -1;
    if (k & PP_FILLED_OUTPUTS) s->buf.free_pipeline_outputs = -1;
    if (k & PP_FILLED_ALLOCATOR) s->buf.expandable_segments = -1;
    if (k & PP_FILLED_FP8_PARAMS) s->fp8_param_gather = -1;
    if (k & PP_FILLED_REDUCE_BUCKET) s->buf.reduce_bucket = 0;
    if (k & PP_FILLED_ALLGATHER_BUCKET) s->buf.allgather_bucket = 0;
    if (k & PP_FILLED_GRAD_ACCUM) s->grad_accum = 0;
    if (k & PP_FILLED_SPLIT) memset(s->stage_layers, 0, sizeof s->stage_layers);
    if (k & PP_FILLED_CHUNKS) memset(s->chunk_layers, 0, sizeof s->chunk_layers);
    s->filled = 0;
}

int pp_framework_supports(pp_framework fw, const char *dim, int v)
{
    const pp__fw *f = pp__fw_get(fw);
    if (!f || !dim) return 0;
    static const char *const degrees[] = {"tp", "pp", "cp", "ep"};
    const int caps[] = {f->tp, f->pp, f->cp, f->ep};
    for (int i = 0; i < 4; i++)
        if (!strcmp(dim, degrees[i])) return v == 1 || (v > 1 && caps[i]);
    struct { const char *dim; unsigned mask; int n; } sets[] = {
        {"zero", f->zero | f->zero_pp, 4}, {"offload", f->offload, PP_OFFLOAD_COUNT},
        {"schedule", f->schedules, PP_SCHED_COUNT}, {"precision", f->precisions, PP_PREC_COUNT},
        {"recompute", f->recompute, PP_RECOMPUTE_COUNT}, {"optimizer", f->optimizers, PP_OPT_COUNT},
        {"mode", f->modes, PP_MODE_COUNT}, {"cp_comm", f->cp_comm, PP_CP_COUNT}, {"loss", f->losses, PP_LOSS_COUNT}};
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        if (!strcmp(dim, sets[i].dim)) return v >= 0 && v < sets[i].n && (sets[i].mask >> v & 1);
    if (!strcmp(dim, "zero_pp")) return v >= 0 && v < 4 && (f->zero_pp >> v & 1);
    if (!strcmp(dim, "sp")) return v == 0 ? f->sp != 2 : v == 1 && f->sp > 0;
    if (!strcmp(dim, "shard")) return v == 0 || (v == 1 && f->shard);
    if (!strcmp(dim, "freeze")) return v == 0 || (v == 1 && f->freeze);
    if (!strcmp(dim, "partial_recompute")) return v >= 0 && v <= f->partial_recompute;
    if (!strcmp(dim, "split")) return v == (int)f->split;
    if (!strcmp(dim, "act_offload")) return v == 0 || (v == 1 && f->act_offload);
    if (!strcmp(dim, "etp")) return v == 0 || (v == 1 && f->etp);
    if (!strcmp(dim, "expandable_segments")) return v == 0 || (v == 1 && f->alloc_env);
    if (!strcmp(dim, "te_attention")) return v == (f->te_attention != 0);
    if (!strcmp(dim, "tp_gathered_inputs")) return v == (f->tp_gathered_inputs != 0);
    if (!strcmp(dim, "recompute_early_stop")) return v == (f->recompute_early_stop != 0);
    if (!strcmp(dim, "fp8_param_gather")) return v == 0 || (v == 1 && f->fp8_param_gather);
    if (!strcmp(dim, "opt_states")) return v == PP_OPT_STATES_FP32 || (v == PP_OPT_STATES_BF16 && f->bf16_opt_states);
    if (!strcmp(dim, "recompute_modules")) return v == 0 || f->recompute_modules;
    return 0;
}

const char *pp__torchtitan_only(const pp_strategy *s)
{
    if (s->pp > 1) return "pipeline stages";
    if (s->precision == PP_PREC_FP8) return "fp8";
    if (s->recompute == PP_RECOMPUTE_SELECTIVE) return "selective recompute";
    /* DTensor TP with sequence-parallel norms and loss_parallel is what
     * parplan prices; HF's TP plans replicate the norms and gather the logits */
    if (s->tp > 1) return "tensor parallelism";
    if (s->loss == PP_LOSS_FUSED) return "the fused loss";
    /* Accelerate's ParallelismConfig raises on replicas of one rank beside CP */
    if (s->cp > 1 && s->shard > 0 && s->shard == s->cp && s->shard < s->dp * s->cp) return "replicated context-parallel groups";
    return NULL;
}

/* FSDP2 as the HF Trainer runs it under Accelerate (parplan's launcher
 * unless the plan needs torchtitan; buf.fsdp_no_sync says otherwise for
 * files read back and published runs). With gradient accumulation every
 * micro-batch but the last runs in accelerator.no_sync
 * (transformers trainer.py; DeepSpeed excepted), which for FSDP2 is
 * set_requires_gradient_sync(False) (accelerate accelerator.py no_sync):
 * FSDP2 keeps each unit's unsharded gradient and reduce-scatters once, in
 * the last backward (torch _fsdp_param_group.py post_backward). */
int pp__fsdp_accelerate(const pp_strategy *s)
{
    const pp__fw *f = pp__fw_get(s->framework);
    if (!f || f->weights != PP_W_FSDP) return 0;
    return s->buf.fsdp_no_sync < 0 ? !pp__torchtitan_only(s) : s->buf.fsdp_no_sync;
}

/* Transformer Engine's userbuffers map the TP peers' memory over NVLink
 * (TE comm_gemm_overlap README: "connected over NVLink/NVSwitch"). */
int pp__tp_overlap_hw(const pp_cluster *c) { return !c->gpu.no_p2p && c->intra.kind == PP_LINK_NVLINK; }

/* Whether the launched program runs Hugging Face transformers' modeling
 * code, eager: the HF Trainer's frameworks (pytorch, deepspeed) and FSDP2
 * under Accelerate; not torchtitan, Composer or Megatron. */
int pp__hf_modeling(const pp_strategy *s)
{
    const pp__fw *f = pp__fw_get(s->framework);
    return f && (f->eager_rmsnorm || pp__fsdp_accelerate(s));
}

/* Liger's kernels in HF's modeling code (the HF Trainer's use_liger_kernel,
 * which parplan's chunked loss launches): apply_liger_kernel_to_*'s
 * defaults replace RMSNorm, rotary and the SwiGLU MLP. */
int pp__liger(const pp_strategy *s) { return pp__hf_modeling(s) && s->loss == PP_LOSS_CHUNKED; }

/* Which uncompiled PyTorch modeling code the launched program runs, whose
 * norms, rotary and gated MLP are separate kernels (compute.c): Hugging
 * Face's unless Liger's kernels replace them (the HF Trainer's
 * use_liger_kernel: parplan's chunked loss), torchtitan's unless its files
 * compile the model (fp8), Megatron-DeepSpeed's gated MLP; none for
 * Megatron-Core (Transformer Engine's fused kernels). */
int pp__eager_code(const pp_strategy *s)
{
    const pp__fw *f = pp__fw_get(s->framework);
    if (!f) return PP_CODE_NONE;
    if (pp__hf_modeling(s)) return pp__liger(s) ? PP_CODE_NONE : PP_CODE_HF;
    if (f->weights == PP_W_FSDP) return s->precision == PP_PREC_FP8 ? PP_CODE_NONE : PP_CODE_TORCHTITAN;
    return f->unfused_glu ? PP_CODE_GLU : PP_CODE_NONE;
}

const char *pp_strategy_launcher(const pp_strategy *s)
{
    int liger = pp__liger(s);
    switch (s->framework) {
    case PP_FW_MEGATRON: return "megatron-lm";
    case PP_FW_MEGATRON_DEEPSPEED: return "megatron-deepspeed";
    case PP_FW_PYTORCH: return liger ? "hf-trainer+liger" : "hf-trainer";
    case PP_FW_DEEPSPEED: return liger ? "hf-trainer+deepspeed+liger" : "hf-trainer+deepspeed";
    case PP_FW_FSDP: return pp__fsdp_accelerate(s) ? (liger ? "hf-accelerate+liger" : "hf-accelerate") : "torchtitan";
    default: return "?";
    }
}

int pp__fsdp_no_sync(const pp_strategy *s) { return s->pp == 1 && s->grad_accum > 1 && pp__fsdp_accelerate(s); }

const char *pp__torchtitan_flavor(const pp_model *m)
{
    static const struct { const char *name; int layers, hidden, heads, kv, ffn; } flavors[] = {
        {"8B", 32, 4096, 32, 8, 14336}, {"70B", 80, 8192, 64, 8, 28672}, {"405B", 126, 16384, 128, 8, 53248}};
    if (m->vocab != 128256 || !m->gated_mlp || m->norm != PP_NORM_RMSNORM || m->position != PP_POS_ROPE ||
        m->tied_embeddings || m->qkv_bias || m->out_bias || m->mlp_bias || m->experts || m->mla.kv_lora_rank)
        return NULL;
    for (size_t i = 0; i < sizeof flavors / sizeof *flavors; i++)
        if (m->layers == flavors[i].layers && m->hidden == flavors[i].hidden && m->heads == flavors[i].heads &&
            m->kv_heads == flavors[i].kv && m->ffn == flavors[i].ffn)
            return flavors[i].name;
    return NULL;
}

/* Megatron pads the vocabulary to a multiple of make_vocab_size_divisible_by
 * x tp (core/tokenizers/utils/build_tokenizer.py); parplan's Megatron
 * arguments choose the divisor that keeps the model's vocabulary when tp
 * divides it, and Megatron's default 128 otherwise. */
int pp__megatron_divisor(int vocab, int tp)
{
    if (tp < 1 || vocab % tp) return 128;
    int d = 128;
    while (d > 1 && vocab % ((long)d * tp)) d /= 2;
    return d;
}

double pp__vocab(const pp_model *m, const pp_strategy *s)
{
    const pp__fw *f = pp__fw_get(s->framework);
    if (!f || !f->megatron_arch || s->tp < 1) return m->vocab;
    long q = (long)pp__megatron_divisor(m->vocab, s->tp) * s->tp;
    return (double)((m->vocab + q - 1) / q * q);
}
