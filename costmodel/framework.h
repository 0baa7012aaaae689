/*
 * framework.h — each framework as data (framework.c, docs/frameworks.md):
 * which values of each strategy dimension it can express, and which
 * memory/time behaviours the cost model applies for it. The validity rules
 * (rules.c) read the first half; memory.c and steptime.c the second.
 * Adding a framework adds one entry, not branches in the search.
 */
#ifndef PARPLAN_FRAMEWORK_H
#define PARPLAN_FRAMEWORK_H

#include "parplan.h"

#define PP__BIT(x) (1u << (x))

/* How a framework can write an uneven stage split. */
typedef enum pp__split_kind {
    PP_SPLIT_ANY,       /* any counts (Megatron's --pipeline-model-parallel-layout,
                           torchtitan's split points) */
    PP_SPLIT_DEEPSPEED, /* DeepSpeed PipelineModule partition_method type:transformer */
    PP_SPLIT_EVEN,      /* only the framework's own default split */
} pp__split_kind;

/* What the weights are while training. */
typedef enum pp__weights_kind {
    PP_W_MASTER16, /* 16-bit weights; the optimizer keeps an fp32 master copy */
    PP_W_AMP,      /* fp32 parameters, autocast casts to 16 bits in the forward
                      and caches the casts until backward (torch.autocast) */
    PP_W_FSDP,     /* fp32 sharded parameters; 16-bit all-gathered units
                      (MixedPrecisionPolicy param_dtype bf16) */
} pp__weights_kind;

/* Gradient communication buffers. */
typedef enum pp__bucket_kind {
    PP_BUCKETS_DEEPSPEED, /* reduce_bucket_size / allgather_bucket_size (ZeRO) */
    PP_BUCKETS_DDP,       /* DDP's flat buckets beside .grad (gradient_as_bucket_view
                             False): one more copy of every gradient */
    PP_BUCKETS_VIEWS,     /* buckets are views of the gradient buffer (Megatron) */
    PP_BUCKETS_FSDP,      /* unsharded gradients of one unit before its reduce-scatter */
} pp__bucket_kind;

/* Temporary memory of the optimizer step. */
typedef enum pp__opt_temp_kind {
    PP_OPT_TEMP_NONE,      /* fused kernels (Megatron/TE, torchtitan's fused AdamW) */
    PP_OPT_TEMP_FOREACH,   /* torch.optim foreach: one parameter-sized list */
    PP_OPT_TEMP_DEEPSPEED, /* fp32 gradient partition (+ averaged 16-bit with ZeRO-1) */
} pp__opt_temp_kind;

typedef struct pp__fw {
    const char *name, *title;
    /* what it can express */
    unsigned zero, zero_pp;   /* bit per ZeRO stage with pp = 1 / pp > 1 */
    int tp, pp, cp, ep;       /* degree > 1 allowed */
    int sp;                   /* 0: never; 1: optional with tp; 2: always with tp */
    int shard;                /* hybrid sharding (shard < dp*cp) */
    unsigned cp_comm;         /* bit per pp_cp_comm */
    unsigned offload;         /* bit per pp_offload */
    unsigned schedules;       /* bit per pp_schedule, with pp > 1 */
    unsigned precisions;      /* bit per pp_precision */
    unsigned recompute;       /* bit per pp_recompute */
    int partial_recompute;    /* 0: all blocks or none; 1: k of each stage's blocks, one k
                                 (with v chunks: a multiple of v); 2: per stage */
    unsigned optimizers;      /* bit per pp_optimizer */
    unsigned modes;           /* bit per pp_train_mode */
    int freeze;               /* frozen embeddings or blocks */
    unsigned losses;          /* bit per pp_loss */
    pp__split_kind split;
    int megatron_arch;        /* the model must be buildable with Megatron's arguments */
    int fixed_order;          /* ranks ordered tp-cp-dp-pp */
    int tp_overlap;           /* can overlap TP traffic with GEMMs (needs sp) */
    int dp_overlap_pp;        /* overlaps DP traffic with backward when pp > 1 */
    int etp;                  /* experts' own tensor-parallel degree (MoE parallel folding) */
    int act_offload;          /* activations of the first N blocks to host memory
                                 (Megatron-Core + Transformer Engine CPU offloading) */
    int ce_upcast;            /* loss fp32 is PyTorch's cross_entropy on logits.float()
                                 (HF Transformers, torchtitan), not Megatron's kernel */
    int selective_ops;        /* selective recompute is torchtitan's per-op policy (saves
                                 attention and every other matmul), not Megatron's core_attn */
    int tp_gathered_inputs;   /* TP's column-parallel GEMMs keep their all-gathered input
                                 for backward (DTensor), where Megatron keeps its sequence
                                 shard and gathers it again (Korthikanti Sec. 4.2.2) */
    int flash_core_checkpoint; /* selective recompute checkpoints fused attention too (Megatron-
                                 Core's core_attn: attention.py tensor_parallel.checkpoint);
                                 Megatron-DeepSpeed checkpoints only the unfused core */
    int fp8_proj_original;    /* under fp8 the attention output projection keeps its 16-bit
                                 input, not an FP8 cast of it (Megatron with a recipe other
                                 than delayed and TE >= 2.6: attention.py set_save_original_input) */
    int recompute_modules;    /* selective recomputation of chosen modules (Megatron-Core's
                                 --recompute-modules), not only the attention core */
    int fp8_param_gather;     /* FP8 primary weights gathered in FP8 (Megatron-Core's
                                 --fp8-param-gather: the distributed optimizer or
                                 Megatron-FSDP) */
    int bf16_opt_states;      /* AdamW with bf16 moments and the master weight's low 16
                                 bits (Megatron-Core's precision-aware optimizer) */
    int mcore_moe;            /* MoE through Megatron-Core's token dispatcher (the expert-TP
                                 gather of routed tokens, the flex dispatcher); DeepSpeed-MoE
                                 keeps its experts beside TP like a dense MLP */
    int gshard_einsum;        /* MoE dispatch and combine are DeepSpeed-MoE's GShard einsums
                                 over a [tokens, experts, capacity] mask (sharded_moe.py
                                 without Tutel): dense GEMMs quadratic in the tokens */
    int unfused_glu;          /* the gated MLP is PyTorch code, silu(gate) * up: it keeps the
                                 SiLU's output beside its input, 8 bytes an ffn unit in 16
                                 bits where Megatron-Core's fused bias_swiglu keeps 6 */
    int eager_rmsnorm;        /* RMSNorm as HF Transformers writes it (LlamaRMSNorm): keeps an
                                 fp32 copy of its input and the normalised 16-bit tensor */
    int fp8_hp_inputs;        /* fp8 linears save their 16-bit inputs (torchao float8's
                                 matmul_with_hp_or_float8_args), not a 1-byte cast (TE) */
    int cp_balanced;          /* causal CP load balancing: two sequence chunks a rank, one
                                 from each end (Megatron asserts seq % (2 cp) == 0; TE's
                                 ring and torch's load balancer need it too) */
    int fp8_bf16_head;        /* under fp8 the output layer stays a 16-bit GEMM (Megatron-
                                 Core's ColumnParallelLinear outside TE's autocast;
                                 torchtitan's files filter "output", llm-foundry's TE
                                 layers leave the head nn.Linear) */
    int recompute_early_stop; /* full recompute is torch.utils.checkpoint's non-reentrant
                                 variant, which stops re-running the forward once the
                                 last saved tensor is back (PyTorch >= 2.1) */
    /* how it runs */
    pp__weights_kind weights;
    pp__bucket_kind buckets;
    pp__opt_temp_kind opt_temp;
    int grads_persist;        /* the gradient buffer lives through every forward */
    int z3_per_block;         /* ZeRO-3 gathers and reduce-scatters one block (unit) at a
                                 time, double-buffered, no extra gather for recompute
                                 (FSDP2, Megatron-FSDP); 0: module by module in prefetch
                                 buckets (DeepSpeed) */
    int free_outputs;         /* pipeline outputs freed once sent */
    int te_attention;         /* attention is Transformer Engine's DotProductAttention,
                                 which runs cuDNN's fused kernel on sm90+ */
    int alloc_env;            /* its launch file is a shell script that exports
                                 PYTORCH_CUDA_ALLOC_CONF (expandable segments) to
                                 every rank: Megatron-LM's, sourced before torchrun on
                                 each node (not Megatron-DeepSpeed's: the deepspeed
                                 launcher forwards only MLFLOW, PYTHON, MV2, UCX and
                                 accelerator variables to other nodes, runner.py) */
    pp_cp_comm cp_default;
} pp__fw;

/* The torchtitan (v0.2.2) llama3 flavor that builds model m ("8B", "70B",
 * "405B"), or NULL: the shapes of torchtitan/models/llama3/__init__.py. */
const char *pp__torchtitan_flavor(const pp_model *m);
/* What of an FSDP strategy only torchtitan launches (HF Accelerate has no
 * pipeline stages, fp8, per-op selective recompute or compiled loss; its
 * TP plans are not the DTensor TP parplan prices), or NULL: the one test
 * behind rule fw-launcher and the launch files' choice. */
const char *pp__torchtitan_only(const pp_strategy *s);
/* Whether the cluster's GPUs can run TE's TP overlap (peer access over NVLink). */
int pp__tp_overlap_hw(const pp_cluster *c);
int pp__fsdp_accelerate(const pp_strategy *s);
int pp__fsdp_no_sync(const pp_strategy *s);
int pp__hf_modeling(const pp_strategy *s);
enum { PP_CODE_NONE, PP_CODE_HF, PP_CODE_TORCHTITAN, PP_CODE_GLU };
int pp__eager_code(const pp_strategy *s);
int pp__liger(const pp_strategy *s);

/* The vocabulary the framework builds: Megatron pads it to a multiple of
 * make_vocab_size_divisible_by x tp; pp__megatron_divisor is the divisor
 * parplan writes (the largest power of two <= 128 keeping the model's). */
int pp__megatron_divisor(int vocab, int tp);
double pp__vocab(const pp_model *m, const pp_strategy *s);

/* The entry of f (NULL when out of range). */
const pp__fw *pp__fw_get(pp_framework f);
/* Fills every AUTO behaviour of s (framework set) with the framework's:
 * gradient dtype, CP kind, loss, overlaps, pipeline outputs, buckets. */
/* FP8 primary weights in effect: set, or -1 and the framework's default. */
int pp__fp8_params(const pp_strategy *s);
void pp__fw_fill(pp_strategy *s, const pp_cluster *c);
/* Undoes what resolve derived (pp_strategy.filled): back to AUTO. */
void pp__fw_unfill(pp_strategy *s);
/* The ZeRO stage the model states follow: FSDP shards everything (3);
 * DeepSpeed's BF16_Optimizer (bf16 with fp32 accumulation, ZeRO <= 1)
 * shards fp32 master weights and optimizer states like ZeRO-1. */
int pp__zero_states(const pp_strategy *s);

/* Which DeepSpeed optimizer wrapper a strategy runs under (engine.py
 * _do_optimizer_sanity_check, v0.14.5). */
typedef enum pp__ds_wrapper {
    PP_DS_PLAIN,      /* fp32, no ZeRO: the bare optimizer */
    PP_DS_FP16,       /* fp16, no ZeRO: FP16_Optimizer */
    PP_DS_BF16,       /* bf16 with fp32 gradient accumulation: BF16_Optimizer */
    PP_DS_ZERO        /* DeepSpeedZeroOptimizer (stages 1-2) or stage 3 */
} pp__ds_wrapper;

pp__ds_wrapper pp__ds_wrapper_of(const pp_strategy *s);
/* 1 when the precision runs as bf16 in DeepSpeed. */
int pp__ds_is_bf16(const pp_strategy *s);

#endif
