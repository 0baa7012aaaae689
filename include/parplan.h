/*
 * parplan.h — the one public header of libparplan.
 *
 * parplan answers: given a transformer and a cluster, how should training be
 * parallelised, will it fit, how fast will it run, what will it cost.
 *
 * Conventions (whole library):
 *   - sizes are bytes, times seconds, bandwidths bytes/s, rates FLOP/s, all
 *     as double; degrees and counts are int.
 *   - every fallible call returns pp_status (0 = PP_OK, negative = error) and
 *     writes a one-line message into a caller-owned pp_error.
 *   - ownership: structs here are plain values the caller owns; functions
 *     that allocate say so, and their *_free(NULL) is a no-op.
 */
#ifndef PARPLAN_H
#define PARPLAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PP_VERSION_MAJOR 0
#define PP_VERSION_MINOR 1
#define PP_VERSION_PATCH 0
#define PP_VERSION_STRING "0.1.0"
#define PP_SCHEMA_VERSION 1 /* version of the JSON output schema (docs/schema.md) */

#if defined(_WIN32)
#define PP_API
#else
#define PP_API __attribute__((visibility("default")))
#endif

/* ---------------------------------------------------------------- status */

typedef enum pp_status {
    PP_OK = 0,
    PP_ERR_INPUT = -1,      /* bad input or usage: CLI exit 2 */
    PP_ERR_INFEASIBLE = -2, /* nothing fits / no plan: CLI exit 1 */
    PP_ERR_IO = -3,         /* file could not be read or written: exit 2 */
    PP_ERR_NOMEM = -4,      /* allocation failed: exit 3 */
    PP_ERR_INTERNAL = -5,   /* a bug or a solver failure: exit 3 */
} pp_status;

#define PP_ERR_LEN 512
/* A failure, written only when a call fails (a call that returns PP_OK
 * leaves the caller's pp_error as it was: clear it first if you print it
 * regardless). msg is one self-contained line in the library's own terms
 * (strategy fields by their JSON names, never a CLI flag). When a validity
 * rule failed, rule is its id (pp_rule, below; 0 otherwise), field the
 * strategy field it names ("tp", "zero", "stage_layers", ...), value that
 * field's value as text, and msg + detail the reason without the
 * "field value: " prefix, so that a front end can word the field its own
 * way (a flag, a JSON path, a ds_config key). */
typedef struct pp_error {
    char msg[PP_ERR_LEN]; /* one line, no trailing newline */
    int rule;             /* pp_rule of the failed validity rule; 0 = none */
    char field[32];       /* the field the rule names; "" = none */
    char value[48];       /* its value as text */
    int detail;           /* offset in msg of the reason after "field value: " */
} pp_error;

PP_API const char *pp_status_str(pp_status st);
PP_API int pp_status_exit_code(pp_status st); /* 0,1,2,3 per ARCHITECTURE */
PP_API const char *pp_version(void);

/* ---------------------------------------------------------------- model */

#define PP_NAME_LEN 64
#define PP_TEXT_LEN 512
#define PP_MAX_LAYERS 1024 /* transformer blocks; more is rejected as absurd */

typedef enum pp_norm { PP_NORM_LAYERNORM, PP_NORM_RMSNORM, PP_NORM_COUNT } pp_norm;
typedef enum pp_pos { PP_POS_ROPE, PP_POS_LEARNED, PP_POS_ALIBI, PP_POS_COUNT } pp_pos;
typedef enum pp_act { PP_ACT_GELU, PP_ACT_RELU, PP_ACT_SILU, PP_ACT_COUNT } pp_act;
typedef enum pp_block_kind { PP_BLOCK_DENSE, PP_BLOCK_MOE, PP_BLOCK_COUNT } pp_block_kind;
/* RoPE frequency scaling (HF config.json rope_scaling.rope_type). */
typedef enum pp_rope_scaling {
    PP_ROPE_NONE, PP_ROPE_LLAMA3, PP_ROPE_YARN, PP_ROPE_LINEAR, PP_ROPE_DYNAMIC, PP_ROPE_COUNT
} pp_rope_scaling;

/* Multi-head latent attention (DeepSeek-V2/V3). Zero ranks mean "not MLA". */
typedef struct pp_mla {
    int q_lora_rank;      /* 0 = plain q projection */
    int kv_lora_rank;     /* compressed KV width d_c; >0 enables MLA */
    int qk_nope_head_dim; /* per-head q/k width without rotary */
    int qk_rope_head_dim; /* per-head decoupled rotary width */
    int v_head_dim;       /* per-head value width */
} pp_mla;

/* A decoder-only transformer. Blocks are listed one by one (block_kind), so
 * dense and MoE blocks may mix; the embedding and LM head are separate. */
typedef struct pp_model {
    char name[PP_NAME_LEN];
    char description[PP_TEXT_LEN];
    char source[PP_TEXT_LEN];  /* where the shape was read */
    int layers;                /* transformer blocks */
    int hidden;                /* d_model */
    int heads;                 /* query heads */
    int kv_heads;              /* key/value heads (GQA/MQA); = heads for MHA */
    int head_dim;              /* per-head width; hidden/heads unless set */
    int ffn;                   /* dense MLP intermediate size */
    int gated_mlp;             /* 1: SwiGLU/GeGLU (3 matrices), 0: 2 matrices */
    pp_act activation;
    int vocab;
    int seq;                   /* max (training) sequence length, tokens */
    int tied_embeddings;       /* LM head shares the input embedding */
    pp_norm norm;
    int norms_per_block;       /* 2 for pre-LN blocks, 1 for Falcon-7B style */
    int qkv_bias, out_bias, mlp_bias; /* biases present (0/1) */
    int lm_head_bias;
    pp_pos position;           /* learned positions add max_pos x hidden */
    int max_positions;         /* rows of the learned position table */
    int embed_norm;            /* a norm right after the embedding (BLOOM) */
    int parallel_block;        /* attention and MLP in parallel (GPT-J/NeoX) */
    double dropout;            /* dropout probability used in training */
    /* what changes training but not its cost; launch files must carry it
     * (0 = unknown: the framework's default is written, with a note) */
    double rope_theta;         /* rotary base (Llama 3: 500000, Qwen2.5: 1e6) */
    pp_rope_scaling rope_scaling; /* context extension of the rotary frequencies */
    double rope_factor;        /* its factor (Llama 3.1: 8) */
    double rope_low_freq, rope_high_freq; /* llama3 scaling: low/high frequency factors (1, 4) */
    int rope_original_max;     /* llama3/yarn scaling: original context (8192) */
    double norm_eps;           /* epsilon of the norms (Llama: 1e-5, Qwen2.5: 1e-6) */
    int qk_norm;               /* RMSNorm on each head's q and k (Qwen3), or MLA's latent
                                  norms (DeepSeek-V3): Megatron's --qk-layernorm */
    /* mixture of experts */
    int experts;               /* routed experts per MoE block; 0 = dense */
    int topk;                  /* routed experts per token */
    int shared_experts;        /* always-on experts (DeepSeek) */
    int expert_groups;         /* group-limited routing: experts in this many groups,  */
    int topk_groups;           /* a token routed within topk_groups of them (DeepSeek-V3:
                                  8 and 4, n_group/topk_group); 0 = unlimited */
    int expert_ffn;            /* intermediate size of one expert */
    double capacity_factor;    /* token capacity per expert; 0 = dropless */
    /* the router, as it trains (no effect on cost; launch files carry it) */
    int router_sigmoid;        /* sigmoid scores (DeepSeek-V3 scoring_func), else softmax */
    int router_expert_bias;    /* aux-loss-free balancing bias (topk_method noaux_tc) */
    double router_scaling;     /* routed_scaling_factor; 0 = none */
    double aux_loss_coeff;     /* load-balancing loss weight; 0 = unknown (1e-2 written) */
    int aux_loss_seq;          /* the loss per sequence (DeepSeek-V3), else per batch */
    pp_mla mla;
    unsigned char block_kind[PP_MAX_LAYERS]; /* pp_block_kind per block */
    double params_reported;    /* published total count; 0 = unknown */
    char params_reported_str[PP_NAME_LEN]; /* as printed, e.g. "175.0B" */
} pp_model;

/* Parameter counts by part, in parameters (not bytes). */
typedef struct pp_param_counts {
    double embedding;   /* token (+ position, + embed norm) */
    double lm_head;     /* 0 when tied */
    double final_norm;
    double attention;   /* all blocks */
    double mlp;         /* dense MLPs, all blocks */
    double experts;     /* routed + shared experts and routers, all blocks */
    double norms;       /* per-block norms */
    double total;
    double active;      /* used per token (MoE: top-k + shared only) */
    double per_dense_block;
    double per_moe_block;        /* total, all experts */
    double per_moe_block_active; /* top-k + shared + router */
} pp_param_counts;

PP_API void pp_model_param_counts(const pp_model *m, pp_param_counts *out);
/* Forward FLOPs per token at sequence length seq (matmuls only, 2 per MAC,
 * causal attention counted over the full s x s as Megatron does). */
PP_API double pp_model_fwd_flops_per_token(const pp_model *m, int seq);
/* Check a model's shape; message names `where` (a file or preset). */
PP_API pp_status pp_model_validate(const pp_model *m, const char *where, pp_error *err);

/* ---------------------------------------------------------------- hardware */

typedef enum pp_precision {
    PP_PREC_FP32, PP_PREC_TF32, PP_PREC_BF16, PP_PREC_FP16, PP_PREC_FP8, PP_PREC_COUNT
} pp_precision;

typedef struct pp_gpu {
    char name[PP_NAME_LEN];     /* preset key, e.g. "h100-sxm" */
    char full_name[PP_NAME_LEN];
    char vendor[PP_NAME_LEN];
    double mem_bytes;           /* HBM capacity, bytes */
    double hbm_bw;              /* bytes/s */
    double peak_flops[PP_PREC_COUNT]; /* dense FLOP/s; 0 = unsupported */
    double tdp_w;               /* W */
    double price_usd_per_hour;  /* on-demand, per GPU; 0 = unknown */
    /* achievable fractions (0 = use the documented default, docs/time.md) */
    double matmul_eff;          /* best large-GEMM FLOP/s over dense peak (MAMF) */
    double attn_eff;            /* fused attention FLOP/s over peak for flash-attn and PyTorch
                                   SDPA kernels, as fitted to published runs (docs/time.md) */
    double cudnn_attn_speedup;  /* cuDNN fused attention (what Transformer Engine runs on
                                   sm90+) over that rate; 0 = the same (docs/time.md) */
    double hbm_eff;             /* elementwise kernels' fraction of HBM bandwidth */
    int fp8_transpose;          /* FP8 GEMMs take only the TN layout (sm89, sm90), so Transformer
                                   Engine keeps a transposed FP8 copy of each FP8 weight for the
                                   backward pass (TE utils.py is_non_tn_fp8_gemm_supported: false
                                   below sm100) */
    int no_p2p;                 /* no peer-to-peer access between GPUs (GeForce RTX 4090: NCCL
                                   stages through host memory, and Transformer Engine's TP
                                   overlap, which maps the peers' memory, cannot run) */
    char price_date[16];        /* YYYY-MM-DD */
    char price_provider[32];    /* whose list price ("CoreWeave", "AWS"); "" unknown */
    char source[PP_TEXT_LEN];
} pp_gpu;

typedef enum pp_link_kind {
    PP_LINK_NVLINK, PP_LINK_PCIE, PP_LINK_XGMI, PP_LINK_INFINIBAND, PP_LINK_ROCE,
    PP_LINK_ETHERNET, PP_LINK_COUNT
} pp_link_kind;

/* One tier of the network: per-GPU bandwidth per direction and latency. */
typedef struct pp_link {
    pp_link_kind kind;
    double bw;        /* bytes/s per GPU per direction */
    double latency;   /* s per hop */
} pp_link;

typedef struct pp_cluster {
    char name[PP_NAME_LEN];
    char description[PP_TEXT_LEN];
    char source[PP_TEXT_LEN];
    pp_gpu gpu;
    int nodes;
    int gpus_per_node;
    int nvlink_domain;    /* GPUs sharing the fast intra tier (NVL72: 72) */
    pp_link intra;        /* inside a node (or NVLink domain) */
    pp_link inter;        /* between nodes: bw is per GPU = nics*rate/gpus */
    int nics_per_node;
    double nic_bw;        /* bytes/s per NIC per direction */
    pp_link pcie;         /* host <-> GPU, per GPU per direction */
    double nccl_eff_intra; /* bus bandwidth NCCL reaches over the intra link; 0 = default */
    double nccl_eff_inter; /* same over the NICs; 0 = default */
    double nccl_overlap;   /* compute throughput lost while a collective overlaps it;
                              0 = default (0.20), < 0 = none */
    double host_mem_bw;    /* bytes/s per node for CPU optimizer updates; 0 = default */
    double host_mem_bytes; /* per node */
    double nvme_bytes;     /* per node; 0 = none */
    double nvme_read_bw;   /* bytes/s per node the NVMe drives deliver to DeepSpeed's
                              aio swapper; 0 = default (docs/formats.md) */
    double nvme_write_bw;  /* bytes/s per node, writes; 0 = default */
} pp_cluster;

static inline int pp_cluster_gpus(const pp_cluster *c) { return c->nodes * c->gpus_per_node; }



/* ---------------------------------------------------------------- strategy */

#define PP_MAX_STAGES 256
#define PP_MAX_CHUNKS 512 /* pp x v of an explicit interleaved layout */

typedef enum pp_offload {
    PP_OFFLOAD_NONE, PP_OFFLOAD_OPTIMIZER, PP_OFFLOAD_OPT_PARAMS, PP_OFFLOAD_NVME, PP_OFFLOAD_COUNT
} pp_offload;
typedef enum pp_recompute {
    PP_RECOMPUTE_NONE, PP_RECOMPUTE_SELECTIVE, PP_RECOMPUTE_FULL, PP_RECOMPUTE_COUNT
} pp_recompute;
typedef enum pp_schedule {
    PP_SCHED_1F1B, PP_SCHED_INTERLEAVED, PP_SCHED_GPIPE, PP_SCHED_COUNT
} pp_schedule;
typedef enum pp_optimizer {
    PP_OPT_ADAMW, PP_OPT_ADAM8BIT, PP_OPT_ADAFACTOR, PP_OPT_SGD, PP_OPT_LION, PP_OPT_ADAGRAD,
    PP_OPT_RMSPROP, PP_OPT_COUNT
} pp_optimizer;
/* Where gradients accumulate (mixed precision). AUTO: as the plan's
 * framework does (pp_strategy_resolve fills it). */
typedef enum pp_grad_accum {
    PP_GRAD_16,      /* 16-bit .grad (DeepSpeed ZeRO default): 2 bytes */
    PP_GRAD_FP32,    /* fp32 gradients only (Megatron-LM main_grad; PyTorch AMP and FSDP
                        keep fp32 parameters, so their .grad is fp32): 4 bytes */
    PP_GRAD_16_FP32, /* 16-bit .grad + fp32 accumulation (DeepSpeed BF16_Optimizer,
                        data_types.grad_accum_dtype fp32): 6 bytes */
    PP_GRAD_COUNT,
    PP_GRAD_AUTO = -1
} pp_grad_accum;
/* pp_strategy.recompute_modules: what a selective recomputation redoes, as
 * Megatron-Core's --recompute-granularity selective --recompute-modules
 * (transformer_config.py). Bit i is name i of PP_ENUM_RECOMPUTE_MODULES;
 * 0 is Megatron's default, core_attn. */
enum {
    PP_RC_CORE_ATTN = 1,   /* the attention core (scores, softmax) */
    PP_RC_MLP = 2,         /* a dense block's whole MLP */
    PP_RC_MOE_ACT = 4,     /* the routed experts' activation function */
    PP_RC_LAYERNORM = 8,   /* the norms that are modules of their own (MLA's input norm, MoE's) */
    PP_RC_MLA_UP_PROJ = 16, /* MLA's up projections and rotary embedding */
    PP_RC_COUNT = 5
};
/* pp_strategy.opt_states */
enum { PP_OPT_STATES_FP32, PP_OPT_STATES_BF16, PP_OPT_STATES_COUNT };
typedef enum pp_attention { PP_ATTN_FLASH, PP_ATTN_MATERIALISED, PP_ATTN_COUNT } pp_attention;
/* How context parallelism moves K/V: a ring of send/recv overlapped with the
 * attention core (Megatron-Core p2p, ring attention), an all-gather of K/V
 * before it (Llama 3, Megatron-Core all_gather, torchtitan's default), or
 * all-to-alls that trade sequence shards for head shards around the core
 * (DeepSpeed-Ulysses, Megatron-Core a2a). AUTO: the framework's. */
typedef enum pp_cp_comm { PP_CP_RING, PP_CP_ALLGATHER, PP_CP_A2A, PP_CP_COUNT, PP_CP_AUTO = -1 } pp_cp_comm;
/* The loss kernel, which decides what the last stage holds for the logits:
 * fp32 (Megatron's vocab-parallel cross-entropy: 16-bit logits + an fp32
 * softmax), fused (flash-attn/TE kernels: 16-bit logits and their gradient),
 * chunked (Liger's fused linear cross-entropy: one chunk of tokens at once). */
typedef enum pp_loss { PP_LOSS_FP32, PP_LOSS_FUSED, PP_LOSS_CHUNKED, PP_LOSS_COUNT, PP_LOSS_AUTO = -1 } pp_loss;

/* The framework that runs a plan (docs/frameworks.md). A plan is priced with
 * its framework's behaviour (gradient dtype and lifetime, buffers, which
 * collectives, pipeline outputs) and uses only what the framework can
 * express; its emitted files launch exactly that. */
typedef enum pp_framework {
    PP_FW_PYTORCH,            /* plain PyTorch on one GPU or with DDP: the HF Trainer
                                 without DeepSpeed or FSDP, PEFT, bitsandbytes */
    PP_FW_DEEPSPEED,          /* DeepSpeed v0.14.5 (also the HF Trainer/Accelerate path) */
    PP_FW_MEGATRON,           /* Megatron-LM / Megatron-Core */
    PP_FW_MEGATRON_DEEPSPEED, /* microsoft/Megatron-DeepSpeed (BLOOM, MT-NLG) */
    PP_FW_FSDP,               /* PyTorch FSDP2 (fully_shard): torchtitan, HF Accelerate */
    PP_FW_COUNT,
    PP_FW_AUTO = -1           /* estimate: pytorch on one GPU, else the first of deepspeed,
                                 megatron-deepspeed, megatron, fsdp that can run it */
} pp_framework;

PP_API const char *pp_framework_name(pp_framework f); /* "pytorch", "deepspeed", ... */
/* What parplan takes the framework to be, with the version its files target
 * ("DeepSpeed v0.14.5"); "?" when f is not a framework. */
PP_API const char *pp_framework_title(pp_framework f);

/* Training mode (fine-tuning). */
typedef enum pp_train_mode { PP_MODE_FULL, PP_MODE_LORA, PP_MODE_QLORA, PP_MODE_COUNT } pp_train_mode;

/* LoRA target modules (bit mask), by their Llama/PEFT names. */
enum {
    PP_LORA_Q = 1, PP_LORA_K = 2, PP_LORA_V = 4, PP_LORA_O = 8, PP_LORA_GATE = 16, PP_LORA_UP = 32,
    PP_LORA_DOWN = 64, PP_LORA_LM_HEAD = 128, PP_LORA_ALL_LINEAR = 127
};

typedef struct pp_finetune {
    pp_train_mode mode;
    int lora_rank;            /* r */
    double lora_alpha;        /* scaling alpha/r; no effect on cost */
    double lora_dropout;      /* dropout on the adapter input (stores a copy) */
    unsigned lora_targets;    /* PP_LORA_* mask */
    int freeze_embeddings;    /* full mode: embedding (and a tied head) frozen */
    int freeze_layers;        /* full mode: the first N blocks frozen */
} pp_finetune;

/* Framework buffers. Defaults (pp_buffers_default) are DeepSpeed's and
 * PyTorch's; each can be overridden. Bucket sizes are in elements, as
 * DeepSpeed's ds_config.json gives them. One source of truth: the DeepSpeed
 * writer emits exactly these values. */
typedef struct pp_buffers {
    double reduce_bucket;        /* elements; zero_optimization.reduce_bucket_size */
    double allgather_bucket;     /* elements; zero_optimization.allgather_bucket_size */
    double prefetch_bucket;      /* elements; stage3_prefetch_bucket_size */
    double max_live_params;      /* elements; stage3_max_live_parameters */
    double sub_group_size;       /* elements; zero_optimization.sub_group_size: ZeRO-3's
                                    optimizer steps its partition in sub-groups this large */
    double param_persistence;    /* elements; stage3_param_persistence_threshold */
    double cuda_context;         /* bytes: CUDA context, kernels, cuBLAS workspace */
    double fragmentation;        /* fraction added to dynamic (activation) memory */
    double reserve;              /* bytes of GPU memory never usable */
    double host_reserve;         /* fraction of host RAM kept for the OS and loaders */
    int ds_split_2022;           /* 1: DeepSpeed's PipelineModule split as before v0.12.5
                                    (bisection + greedy probe; PR #4312 replaced it by a
                                    dynamic program): BigScience's 2022 runs. For published
                                    runs of that era only; default 0 (v0.14.5) */
    int zero3_per_tensor;        /* 1: DeepSpeed ZeRO-3 as before v0.4 (PR #1188, June
                                    2021): one all-gather per parameter tensor, each
                                    after a host sync (issue #1069). For predicting
                                    published runs of that era only: parplan writes
                                    v0.14.5 configs and never sets it (default 0) */
    int sac_attn_recomputed;     /* 1: torchtitan's per-op checkpointing runs the attention
                                    again: between May and December 2025 torchtitan chose
                                    cuDNN attention on sm100 (PR #1196) but its save list
                                    had no cuDNN op until PR #2095. For published runs of
                                    that era only: parplan never sets it (default 0) */
    int mcore_p2p_deferred;      /* 1: Megatron-Core before v0.18.0 (2026-06-22): with
                                    overlap_p2p_comm an interleaved chunk's output send was
                                    waited one compute later, behind it (commit 260cba7133
                                    moved the wait before the output is freed): two exposed
                                    transfers a micro-batch whatever v. For predicting
                                    published runs of that era only: parplan never sets it
                                    (default 0) */
    int expert_graphs;           /* 1: CUDA graphs replay the routed experts (Megatron-
                                    Bridge's full-iteration graphs with paged stash), no
                                    host launches to wait for (docs/time.md, "Expert
                                    launches"). For predicting published runs: parplan's
                                    launch files run eager (default 0) */
    int free_pipeline_outputs;   /* 1: a stage's outputs are freed once sent (Megatron's
                                    deallocate_pipeline_outputs); 0: kept until their
                                    backward (DeepSpeed PipelineEngine); -1 = the
                                    framework's (the default) */
    int expandable_segments;     /* 1: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,
                                    no fragmentation overhead (docs/memory.md); 0:
                                    PyTorch's caching allocator, `fragmentation` of the
                                    dynamic memory; -1 = what the framework's launch file
                                    sets (the default) */
    int checkpoint_early_stop;   /* full recompute's torch.utils.checkpoint stops once the
                                    last saved tensor is back (non-reentrant, PyTorch >=
                                    2.1): 1 on, -1 off, 0 = as the framework's launch runs
                                    it (the default: HF Accelerate's FSDP only). For
                                    predicting runs of other launchers (llm-foundry) */
    int fp8_te_linears;          /* 1: fp8 linears are Transformer Engine's, which save a
                                    1-byte cast of their inputs, under any framework (llm-
                                    foundry's fc_type te); 0: the framework's (fsdp:
                                    torchao float8, 16-bit inputs). For predicting runs */
    int fsdp_no_sync;            /* FSDP with gradient accumulation: 1 every micro-batch
                                    but the last in no_sync (the HF Trainer under
                                    Accelerate: unsharded gradients accumulate, one
                                    reduce-scatter a step); 0 a reduce-scatter each micro-
                                    batch (torchtitan, Composer); -1 = as the launcher
                                    parplan writes: Accelerate unless the plan needs
                                    torchtitan (the default) */
    int fsdp1;                   /* 1: FSDP1's FlatParameter (Composer/llm-foundry): each
                                    unit all-gathers into its flat parameter, whose views
                                    are the weights; 0: FSDP2 (fully_shard), which copies
                                    every gathered unit out into its parameters on the
                                    compute stream. For predicting published runs:
                                    parplan's files launch FSDP2 (default 0) */
} pp_buffers;

typedef struct pp_strategy {
    pp_framework framework;      /* who runs it (default PP_FW_AUTO) */
    int dp, tp, pp, cp, ep;      /* degrees; dp*tp*pp*cp = GPUs */
    int etp;                     /* expert tensor parallelism (Megatron-Core's MoE
                                    parallel folding, --expert-tensor-parallel-size):
                                    experts split over etp ranks, and the expert groups
                                    etp x ep x (expert dp) fold over tp x cp x dp;
                                    0 = tp (Megatron's default) */
    int sp;                      /* Megatron sequence parallelism (0/1) */
    int zero;                    /* ZeRO stage 0-3; FSDP: 3 = reshard after forward
                                    (FULL_SHARD), 2 = keep gathered until backward */
    int shard;                   /* ranks a ZeRO/FSDP shard spans; 0 = all dp*cp. Less
                                    is hybrid sharding (FSDP HSDP): shard inside groups of
                                    `shard` ranks, replicate across them */
    pp_offload offload;
    pp_recompute recompute;
    unsigned recompute_modules;  /* with SELECTIVE under megatron: PP_RC_* mask; 0 = core_attn */
    int recompute_layers;        /* with FULL: blocks per stage recomputed; -1 = all */
    int per_stage_recompute;     /* 1: stage_recompute[] overrides recompute_layers */
    int stage_recompute[PP_MAX_STAGES]; /* with FULL: blocks recomputed on each stage */
    int act_offload_layers;      /* Megatron-Core's CPU offloading (--cpu-offloading-num-
                                    layers, through Transformer Engine): the activations of
                                    the first N blocks go to host memory after their forward
                                    and come back for their backward; 0 = none */
    pp_precision precision;      /* fp32, or bf16/fp16/fp8 mixed with fp32 master */
    pp_optimizer optimizer;
    int opt_states;              /* AdamW's moments: PP_OPT_STATES_FP32 (0, default: fp32
                                    moments and an fp32 master copy, 12 bytes a trained
                                    weight) or PP_OPT_STATES_BF16 (Megatron-Core's precision-
                                    aware optimizer, --use-precision-aware-optimizer
                                    --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16: Transformer
                                    Engine's FusedAdam keeps bf16 moments and the master
                                    weight as the 16 bits its bf16 copy lacks, 6 bytes) */
    int fp8_param_gather;        /* megatron fp8: FP8 primary weights (--fp8-param-gather): no
                                    bf16 copy, the distributed optimizer or Megatron-FSDP gathers
                                    1 byte a weight; 0 off, 1 on, -1 (default) the framework's:
                                    parplan's Megatron files turn it on wherever Megatron can */
    pp_grad_accum grad_accum_dtype; /* AUTO (default): the framework's */
    pp_attention attention;
    pp_cp_comm cp_comm;          /* with cp > 1; AUTO (default): the framework's */
    pp_loss loss;                /* loss kernel; AUTO (default): the framework's (fp32) */
    int micro_batch;             /* sequences per GPU per micro-step */
    int grad_accum;              /* micro-batches per step (= pipeline m) */
    int global_batch;            /* sequences per optimizer step */
    int seq;                     /* tokens per sequence */
    pp_schedule schedule;
    int virtual_stages;          /* interleaved chunks per stage (v) */
    int vp_group;                /* interleaved: micro-batches each chunk runs back to back
                                    (Megatron's --microbatch-group-size-per-virtual-pipeline-
                                    stage, in [pp, micro-batches]); 0 = pp, Megatron's default */
    int stage_layers[PP_MAX_STAGES]; /* blocks per stage; all 0 = default split */
    unsigned short chunk_layers[PP_MAX_CHUNKS]; /* interleaved: blocks of virtual stage k,
                                    chunk k / pp of stage k % pp (Megatron's layout order),
                                    summing to stage_layers per stage; all 0 = each stage's
                                    blocks over its v chunks as evenly as they go */
    pp_buffers buf;
    char order[16];              /* rank order, fastest first: "tp-cp-dp-pp" (Megatron) */
    int overlap_dp;              /* DP/ZeRO communication overlaps backward; -1 (default):
                                    where the framework does */
    int overlap_tp;              /* TP communication overlapped with GEMMs (TE userbuffers);
                                    -1 (default): where the framework does */
    int ep_dispatch;             /* EP token dispatch: 0 (default) NCCL all-to-all (Megatron's
                                    alltoall dispatcher); 1 hierarchical: a token crosses to
                                    each other NVLink domain holding its experts once, then
                                    NVLink (DeepEP/HybridEP, Megatron's flex dispatcher) */
    int overlap_ep;              /* 1: expert-parallel all-to-alls overlapped with another
                                    micro-batch's computation (Megatron-Core's
                                    --overlap-moe-expert-parallel-comm); 0 (default) */
    pp_finetune ft;              /* full training by default */
    unsigned filled;             /* what pp_strategy_resolve derived rather than was given
                                    (bit per PP_FILLED_*): resolving again derives it anew,
                                    so a resolved strategy with a changed degree re-resolves
                                    to the framework's behaviour for it */
} pp_strategy;

enum {
    PP_FILLED_FRAMEWORK = 1u << 0, PP_FILLED_GRAD_DTYPE = 1u << 1, PP_FILLED_CP_COMM = 1u << 2,
    PP_FILLED_LOSS = 1u << 3, PP_FILLED_OVERLAP_DP = 1u << 4, PP_FILLED_OVERLAP_TP = 1u << 5,
    PP_FILLED_OUTPUTS = 1u << 6, PP_FILLED_REDUCE_BUCKET = 1u << 7, PP_FILLED_ALLGATHER_BUCKET = 1u << 8,
    PP_FILLED_GRAD_ACCUM = 1u << 9, PP_FILLED_SPLIT = 1u << 10, PP_FILLED_ALLOCATOR = 1u << 11,
    PP_FILLED_FP8_PARAMS = 1u << 12, PP_FILLED_CHUNKS = 1u << 13
};

PP_API void pp_buffers_default(pp_buffers *b);
/* A strategy with every field at its default (1-way, ZeRO 0, bf16, AdamW,
 * 1F1B, flash attention, no recompute, framework and its behaviours AUTO)
 * and buffers at their defaults. */
PP_API void pp_strategy_default(pp_strategy *s);
/* The program parplan's launch files run a strategy with, which decides
 * what its model code costs (docs/frameworks.md): "megatron-lm",
 * "megatron-deepspeed", "hf-trainer" (pytorch), "hf-trainer+deepspeed",
 * "hf-accelerate" or "torchtitan" (fsdp), with "+liger" where the HF
 * Trainer applies Liger's kernels (use_liger_kernel). */
PP_API const char *pp_strategy_launcher(const pp_strategy *s);
/* The blocks stage `stage` of a resolved strategy runs, as ranges in its
 * order: "0-19", or under the interleaved schedule one range a chunk,
 * "0,15-16,31-32" (virtual stages stage, stage + pp, ...). Truncated with
 * "..." to fit cap; returns how many blocks. */
PP_API int pp_stage_blocks_text(const pp_strategy *s, int stage, char *buf, size_t cap);
/* Resolves a strategy once: picks the framework when AUTO, fills every AUTO
 * behaviour with the framework's, grad_accum from global_batch and the
 * framework's default stage split, then evaluates every validity rule
 * (pp_rule). PP_ERR_INPUT with the failed rule in err on failure. A
 * resolved strategy resolves to itself. */
PP_API pp_status pp_strategy_resolve(pp_strategy *s, const pp_model *m, const pp_cluster *c,
                                     pp_error *err);

/* ---------------------------------------------------------------- rules
 * Every validity rule, generic and per framework, is one entry of one table
 * (costmodel/rules.c); the search, estimate, the emitters and the readers
 * all evaluate it. */
typedef enum pp_rule {
    PP_RULE_NONE,
    /* generic */
    PP_RULE_ORDER, PP_RULE_DEGREES, PP_RULE_GPUS, PP_RULE_TP_HEADS, PP_RULE_TP_DOMAIN, PP_RULE_PP_LAYERS,
    PP_RULE_CP_SEQ, PP_RULE_EP_DENSE, PP_RULE_EP_GROUP, PP_RULE_BATCH, PP_RULE_SP_TP, PP_RULE_PRECISION,
    PP_RULE_ZERO_RANGE, PP_RULE_SHARD, PP_RULE_OFFLOAD_ZERO, PP_RULE_NVME, PP_RULE_SCHEDULE,
    PP_RULE_INTERLEAVE_LAYERS, PP_RULE_INTERLEAVE_MICROBATCHES, PP_RULE_SPLIT, PP_RULE_RECOMPUTE_LAYERS,
    PP_RULE_BEHAVIOUR, PP_RULE_FINETUNE, PP_RULE_QLORA_PRECISION,
    /* per framework */
    PP_RULE_FW_TP, PP_RULE_FW_SP, PP_RULE_FW_PP, PP_RULE_FW_CP, PP_RULE_FW_CP_COMM, PP_RULE_ULYSSES_HEADS,
    PP_RULE_FW_EP, PP_RULE_FW_ZERO, PP_RULE_FW_ZERO_PP, PP_RULE_FW_SHARD, PP_RULE_FW_OFFLOAD,
    PP_RULE_FW_SCHEDULE, PP_RULE_FW_PRECISION, PP_RULE_FW_RECOMPUTE, PP_RULE_FW_PARTIAL_RECOMPUTE,
    PP_RULE_FW_SPLIT, PP_RULE_FW_OPTIMIZER, PP_RULE_FW_OFFLOAD_OPTIMIZER, PP_RULE_FW_FINETUNE,
    PP_RULE_FW_ARCH, PP_RULE_FW_ORDER, PP_RULE_FW_TP_OVERLAP, PP_RULE_FW_DP_OVERLAP, PP_RULE_FW_GRAD_ACCUM,
    PP_RULE_FW_OUTPUTS, PP_RULE_FW_LOSS, PP_RULE_FW_LAUNCHER, PP_RULE_FW_ACT_OFFLOAD, PP_RULE_FW_ETP,
    PP_RULE_FW_EP_OVERLAP, PP_RULE_FW_EP_DISPATCH, PP_RULE_FW_ALLOCATOR, PP_RULE_FW_OPT_STATES, PP_RULE_FW_RC_MODULES,
    PP_RULE_FW_FP8_PARAMS, PP_RULE_COUNT
} pp_rule;

typedef struct pp_rule_info {
    const char *id;     /* stable identifier, e.g. "fw-zero" (docs/frameworks.md) */
    const char *field;  /* the strategy field it is usually about, e.g. "zero" */
    const char *text;   /* the rule in one sentence */
} pp_rule_info;

/* The rule's description (NULL for an id out of range). Static storage. */
PP_API const pp_rule_info *pp_rule_get(pp_rule r);
/* Evaluates every rule on a strategy whose framework and behaviours are
 * filled (pp_strategy_resolve does this): PP_OK, or PP_ERR_INPUT with the
 * first failed rule. No side effects. */
PP_API pp_status pp_rules_check(const pp_model *m, const pp_cluster *c, const pp_strategy *s, pp_error *err);
/* 1 when framework f can run a strategy with these settings at all: the
 * value of one dimension ("tp", 2) is within what f supports. Dimensions:
 * tp, pp, cp, ep (degrees), sp (0/1), zero, zero_pp (ZeRO stages with
 * pp > 1), shard (1: hybrid sharding), offload, schedule, precision,
 * recompute, partial_recompute (1: a block count per stage), optimizer,
 * mode, cp_comm, loss (enum values), freeze (1: frozen layers), split (0:
 * any counts per stage, 1: DeepSpeed's partition_method, 2: even only),
 * act_offload (1: activations offloaded to host memory), expandable_segments
 * (1: PyTorch's expandable segments, set by the launch file), te_attention
 * (1: Transformer Engine's attention, cuDNN's kernel on Hopper and later),
 * opt_states (PP_OPT_STATES_*: bf16 AdamW moments), recompute_modules
 * (1: selective recomputation of modules beyond the attention core).
 * For tables and quick filters; pp_rules_check is the authority. */
PP_API int pp_framework_supports(pp_framework f, const char *dim, int value);
/* The split the DeepSpeed of s makes (s->pp stages; v0.14.5's PipelineModule,
 * or the 2022 one with s->buf.ds_split_2022) of m's layer specs as
 * Megatron-DeepSpeed's GPTModelPipe lists them (the 16-bit cast, the
 * embedding, the blocks, the final norm, the head, the fp32 cast):
 * partition_method "type:transformer" (embedding = 0: blocks weigh 1) or
 * "type:transformer|embedding" (embedding = 1: the embedding too, and the
 * head when tied, which is then an EmbeddingPipe). Fills blocks per stage
 * into stage_layers[0..pp-1] (nothing beyond); PP_ERR_INPUT when a stage
 * would get no block. */
PP_API pp_status pp_split_deepspeed(const pp_model *m, const pp_strategy *s, int embedding, int *stage_layers,
                                    pp_error *err);

PP_API const char *pp_offload_name(pp_offload o);
PP_API const char *pp_recompute_name(pp_recompute r);
PP_API const char *pp_schedule_name(pp_schedule s);
PP_API const char *pp_optimizer_name(pp_optimizer o);
PP_API const char *pp_attention_name(pp_attention a);
PP_API const char *pp_cp_comm_name(pp_cp_comm c);
PP_API const char *pp_loss_name(pp_loss l);
/* Name -> enum value; returns -1 when unknown. */
PP_API int pp_enum_parse(const char *const *names, int n, const char *s);
PP_API const char *const *pp_enum_names(int which, int *n); /* which: see PP_ENUM_* */
/* Recompute modules (pp_strategy.recompute_modules): "mla_up_proj,mlp" (commas
 * or spaces) to a PP_RC_* mask, 0 or -1 on an unknown name; and back (the
 * names separated by sep: ',' or ' ' as Megatron takes them; "" for 0)
 * into buf, which it returns. */
PP_API int pp_rc_modules_parse(const char *list, unsigned *mask);
PP_API const char *pp_rc_modules_format(unsigned mask, char sep, char *buf, size_t cap);
enum { PP_ENUM_PRECISION, PP_ENUM_OFFLOAD, PP_ENUM_RECOMPUTE, PP_ENUM_SCHEDULE, PP_ENUM_OPTIMIZER,
       PP_ENUM_ATTENTION, PP_ENUM_GRAD_ACCUM, PP_ENUM_MODE, PP_ENUM_CP_COMM, PP_ENUM_LOSS, PP_ENUM_FRAMEWORK,
       PP_ENUM_OPT_STATES, PP_ENUM_RECOMPUTE_MODULES, PP_ENUM_COUNT };

/* ---------------------------------------------------------------- memory */

typedef enum pp_phase { PP_PHASE_FWD_BWD, PP_PHASE_OPTIMIZER, PP_PHASE_COUNT } pp_phase;

/* Peak memory of one GPU of one pipeline stage, bytes. */
typedef struct pp_stage_mem {
    int stage;
    int first_layer, last_layer;   /* block indices, inclusive; -1,-1 when none */
    int has_embedding, has_lm_head;
    double params_bytes;           /* weights resident on the GPU */
    double grads_bytes;            /* gradients alive at the peak moment (a framework
                                      that frees them, zero_grad(set_to_none=True), has
                                      none in the first forward of a step) */
    double optimizer_bytes;        /* master copy + moments on the GPU */
    double activations_bytes;      /* stored for backward, all in-flight micro-batches */
    double buffers_bytes;          /* buckets, gathers, p2p, logits, recompute, context */
    double total_bytes;            /* the peak: max over phases */
    pp_phase peak_phase;
    double phase_bytes[PP_PHASE_COUNT];
    /* detail */
    double inflight;               /* micro-batches (or chunk-equivalents) held */
    double act_per_microbatch;     /* bytes for one micro-batch through the stage */
    double logits_bytes;           /* last stage: logits + fp32 loss */
    double zero_gather_bytes;      /* ZeRO-3 gathered working set */
    double bucket_bytes;           /* ZeRO/DDP communication buckets */
    double p2p_bytes;              /* pipeline send/recv buffers */
    double recompute_bytes;        /* backward working set: one block's activation
                                      gradients (+ its activations if recomputed) */
    double context_bytes;          /* CUDA context etc. */
    double fragmentation_bytes;    /* the caching allocator's allowance at the peak */
    double live_bytes;             /* the larger phase without that allowance: what live
                                      tensors need once the allocator, short of memory, has
                                      freed its cached blocks and retried (PyTorch's
                                      num_alloc_retries) */
    double host_bytes;             /* states (and offloaded activations) on the host, per GPU */
    double act_offload_bytes;      /* activations Megatron's CPU offloading moves to the
                                      host and back, per micro-batch (act_offload_layers) */
    double nvme_bytes;             /* states swapped to NVMe, per GPU (offload nvme) */
    double grads_total_bytes;      /* every gradient, as at the optimizer step */
    double grads_persistent_bytes; /* of which a buffer alive all step (Megatron's
                                      main_grad, DeepSpeed's fp32 accumulation) */
    double cast_bytes;             /* 16-bit copies of fp32 weights autocast keeps from
                                      the forward to the backward (PyTorch AMP) */
    double opt_temp_bytes;         /* the optimizer step's temporaries */
} pp_stage_mem;

typedef struct pp_memory {
    int nstages;
    pp_stage_mem stages[PP_MAX_STAGES];
    double peak_bytes;             /* max over stages */
    int peak_stage;
    double gpu_bytes;              /* usable: GPU memory - reserve */
    int fits;                      /* peak <= usable, host fits and NVMe fits */
    double live_peak_bytes;        /* max over stages of live_bytes */
    double load_bytes;             /* loading the model, before the framework shards it, when
                                      that is the larger moment: QLoRA under DeepSpeed ZeRO-3
                                      holds the whole 4-bit model on every GPU (0 = none);
                                      peak_bytes and live_peak_bytes include it */
    int live_fits;                 /* live_peak <= usable, host and NVMe fit: the run can
                                      start, perhaps only through the allocator's retries */
    double host_bytes_per_node;    /* offloaded states of the node's GPUs */
    double host_usable_bytes;
    int host_fits;
    double nvme_bytes_per_node;    /* states the node's GPUs swap to NVMe */
    double nvme_usable_bytes;      /* the node's NVMe capacity */
    int nvme_fits;                 /* 1 when nothing is swapped or it fits */
} pp_memory;

/* Per-GPU memory of every stage for a resolved strategy. Pure arithmetic. */
PP_API void pp_memory_estimate(const pp_model *m, const pp_cluster *c, const pp_strategy *s,
                               pp_memory *out);

/* ---------------------------------------------------------------- memory timeline
 * One stage's memory through one optimizer step (docs/report.md), drawn as a
 * stacked area by the HTML report: the states stay, activations grow block by
 * block through the forward of the in-flight micro-batches and are released
 * through the backward, gradients appear during the backward (or stay, where
 * the framework keeps a persistent buffer), the optimizer step spikes. Derived from the stage's pp_stage_mem and the strategy only,
 * so that its maximum is the stage's total_bytes and lies in its peak_phase
 * (tests/costmodel/test_timeline.c holds it to that). Pure arithmetic. */

typedef enum pp_mem_cat {
    PP_MEM_PARAMS,      /* weights on the GPU (after ZeRO-3 sharding / offload) */
    PP_MEM_GRADS,       /* gradients (after ZeRO-2 sharding) */
    PP_MEM_OPTIMIZER,   /* master copy and moments (after ZeRO-1 sharding) */
    PP_MEM_OPT_TEMP,    /* the optimizer step's temporaries (fp32 gradient copies, ...) */
    PP_MEM_ACTIVATIONS, /* stored for backward */
    PP_MEM_CAST,        /* 16-bit copies of fp32 weights autocast keeps from the forward
                           to the backward (PyTorch AMP) */
    PP_MEM_RECOMPUTE,   /* backward working set: activation gradients, recomputed
                           activations, context parallelism's K/V in flight */
    PP_MEM_LOSS,        /* last stage: logits and the loss kernel's buffers */
    PP_MEM_COMM,        /* DP/ZeRO buckets, ZeRO-3 gathered weights, pipeline send/recv,
                           the all-gather after the step, QLoRA's dequantised matrix */
    PP_MEM_ALLOCATOR,   /* the caching allocator's reserve beyond what is allocated */
    PP_MEM_CONTEXT,     /* CUDA context, kernels, NCCL communicators */
    PP_MEM_CAT_COUNT
} pp_mem_cat;

/* What happens at a point of the timeline. */
typedef enum pp_tl_event {
    PP_TL_START,    /* the step begins: states only */
    PP_TL_FORWARD,  /* a forward pass (of a block, or of a whole micro-batch) has run */
    PP_TL_BACKWARD, /* a backward pass has run (or, for the first, is starting) */
    PP_TL_STEP,     /* the optimizer step */
    PP_TL_END,      /* after the step: its temporaries are freed */
    PP_TL_EVENT_COUNT
} pp_tl_event;

typedef struct pp_mem_point {
    pp_tl_event event;
    pp_phase phase;       /* the cost model's phase this moment belongs to */
    int unit;             /* micro-batch (interleaved: chunk pass) index; -1 = none */
    int block;            /* last block of the model this point covers; -1 = none */
    int elided;           /* passes between the previous point and this one that are
                             not points of their own (a steady state); 0 = none */
    double bytes[PP_MEM_CAT_COUNT];
    double total;         /* sum of bytes[] */
} pp_mem_point;

#define PP_TIMELINE_MAX 256

typedef struct pp_mem_timeline {
    int stage;
    int n;                /* points used */
    int peak;             /* index of the first point with the largest total */
    int units_held;       /* micro-batches (interleaved: chunks) in flight at the peak */
    int units_per_step;   /* micro-batches (chunks) the stage runs per step */
    double unit_bytes;    /* activations of one of them */
    pp_mem_point pts[PP_TIMELINE_MAX];
} pp_mem_timeline;

/* The timeline of stage st (from pp_memory_estimate of the resolved s). */
PP_API void pp_memory_timeline(const pp_model *m, const pp_strategy *s, const pp_stage_mem *st,
                               pp_mem_timeline *out);
/* "params", "grads", ... for a category; "?" when out of range. */
PP_API const char *pp_mem_cat_name(pp_mem_cat c);



/* ---------------------------------------------------------------- time */

/* One optimizer step, seconds, for the slowest pipeline stage. The terms add
 * up to step_s. */
typedef struct pp_time {
    double step_s;
    double compute_s;          /* forward + backward matmuls, attention, elementwise */
    double recompute_s;        /* extra forward work of activation recomputation */
    double tp_comm_s, cp_comm_s, ep_comm_s, pp_comm_s; /* exposed */
    double dp_comm_s;          /* total DP/ZeRO traffic time */
    double dp_comm_exposed_s;  /* the part not hidden behind backward */
    double bubble_s;           /* pipeline fill and drain */
    double optimizer_s;        /* the update: HBM-bound on GPU, or CPU with offload */
    double offload_s;          /* exposed traffic of offload: PCIe, and NVMe swaps */
    double expert_host_s;      /* of compute_s and recompute_s: the GPU waiting for the
                                  host to launch MoE experts one by one (docs/time.md) */
    int slowest_stage;
    double stage_microbatch_s[PP_MAX_STAGES]; /* fwd+bwd of one micro-batch, per stage */
} pp_time;

typedef struct pp_throughput {
    double tokens_per_s;
    double samples_per_s;
    double model_flops_per_step;    /* 6ND-style: fwd+bwd, no recompute, full s^2 */
    double hardware_flops_per_step; /* including recomputation */
    double model_tflops_per_gpu;
    double hardware_tflops_per_gpu;
    double mfu, hfu;                /* over the dense peak of the precision */
} pp_throughput;

typedef struct pp_train {
    double tokens;
    double days;
    double gpu_hours;
    double cost_usd;
    double energy_kwh;
} pp_train;

/* ---------------------------------------------------------------- error bars
 * How far the published runs that share a plan's mechanisms were from their
 * predictions (docs/validation.md, "Error bars"): the validation residuals
 * (truth / prediction) grouped by GPU family, framework, ZeRO stage, scale
 * band and attention kind, widened group by group until one holds enough
 * rows; the bounds are split-conformal order statistics of that group's
 * ratios. tools/uncertainty.c builds the groups into
 * costmodel/uncertainty_table.c from tools/validate's residuals. */

#define PP_INTERVAL_LEVEL 0.80 /* nominal coverage of every interval */

typedef enum pp_fit {
    PP_FIT_FITS,  /* the peak, and its interval's top, within the usable memory */
    PP_FIT_TIGHT, /* the interval crosses the usable memory: its top, the peak with the
                     allocator's fragmentation allowance, or the live tensors are over it,
                     but the live tensors at the interval's low end are not */
    PP_FIT_NO,    /* the live tensors exceed it even at the interval's low end (model
                     states exact, the rest scaled), or host memory or NVMe does not fit */
    PP_FIT_COUNT
} pp_fit;

typedef struct pp_interval {
    double lo, hi;             /* bounds in the estimate's unit (s, bytes); lo <= estimate <= hi */
    double ratio_lo, ratio_hi; /* lo/estimate and hi/estimate: the group's truth/prediction
                                  bounds, stretched to hold 1 and widened for a new
                                  publication (docs/validation.md, "Error bars") */
    int rows;                  /* published rows of the group; 0 = no interval (lo = hi) */
    char group[96];            /* which rows, e.g. "H100, megatron, ZeRO-1, 65-512 GPUs, fused attention" */
} pp_interval;

typedef struct pp_uncertainty {
    double level;              /* nominal coverage (PP_INTERVAL_LEVEL) */
    pp_interval step_s;        /* seconds per optimizer step */
    pp_interval peak_bytes;    /* peak memory per GPU */
    pp_fit fit;                /* peak_bytes against memory.gpu_bytes */
    char notes[PP_TEXT_LEN];   /* mechanisms no validated run covers, "; "-separated, e.g.
                                  "B200: no published run; constants are estimates"; "" = none */
} pp_uncertainty;

/* ---------------------------------------------------------------- plan */

/* A strategy with its predictions. */
typedef struct pp_plan {
    pp_strategy strategy;
    pp_memory memory;
    pp_time time;
    pp_throughput throughput;
    pp_train train;          /* filled by pp_plan_train when tokens are given */
    double params_total;     /* parameters of the model */
    double params_trainable; /* of which trained (LoRA adapters, unfrozen weights) */
    pp_uncertainty uncertainty; /* error bars and the fits/tight/does-not-fit verdict */
} pp_plan;

/* "fits", "tight", "does not fit"; "?" when out of range. */
PP_API const char *pp_fit_name(pp_fit f);
/* The intervals and the verdict of an estimated plan (its memory and time
 * filled), from the built-in residual groups. Pure; pp_estimate calls it. */
PP_API void pp_uncertainty_estimate(const pp_cluster *c, const pp_plan *p, pp_uncertainty *out);

/* Parameters of the model, and how many the strategy trains. */
PP_API void pp_trainable_params(const pp_model *m, const pp_strategy *s, double *total, double *trainable);

/* Step time and throughput of a resolved strategy. Pure arithmetic. */
PP_API void pp_time_estimate(const pp_model *m, const pp_cluster *c, const pp_strategy *s,
                             pp_time *t, pp_throughput *tp);
/* Fits c->gpu.matmul_eff and attn_eff (one common factor) so that the
 * resolved strategy's predicted step equals a measured step time (s) of the
 * user's own run. PP_ERR_INPUT when no efficiency in (0, 1] explains it
 * (the configuration or the measurement is wrong, CLI exit 2). */
PP_API pp_status pp_calibrate(const pp_model *m, pp_cluster *c, const pp_strategy *resolved,
                              double measured_step_s, pp_error *err);
/* Time, cost and energy to train on `tokens` tokens. price_usd_per_gpu_hour
 * and tdp_w override the catalog when > 0. */
PP_API void pp_plan_train(const pp_cluster *c, pp_plan *p, double tokens, double price_usd_per_gpu_hour,
                          double tdp_w);

/* Resolves s and estimates it: the one call behind `parplan estimate`. */
PP_API pp_status pp_estimate(const pp_model *m, const pp_cluster *c, const pp_strategy *s,
                             pp_plan *out, pp_error *err);
/* The plan as JSON (docs/schema.md); caller frees with pp_free. */
PP_API char *pp_plan_to_json(const pp_model *m, const pp_cluster *c, const pp_plan *p);

/* ---------------------------------------------------------------- loading
 * A NAME is a bundled preset (lowercase-hyphen, see `parplan models`); a
 * PATH (contains '/' or ends in .json, or names an existing file) is read
 * from disk. Model files may be parplan's native JSON or a Hugging Face
 * config.json, recognised by its keys. */

typedef enum pp_preset_kind {
    PP_PRESET_MODEL, PP_PRESET_CLUSTER, PP_PRESET_GPU, PP_PRESET_KIND_COUNT
} pp_preset_kind;

PP_API int pp_preset_count(pp_preset_kind kind);
/* i-th preset name in sorted order, or NULL. Static storage. */
PP_API const char *pp_preset_name(pp_preset_kind kind, int i);

PP_API pp_status pp_model_load(const char *name_or_path, pp_model *out, pp_error *err);
/* Parses model JSON text (native or HF); where names it in messages. */
PP_API pp_status pp_model_parse(const char *text, size_t len, const char *where, pp_model *out,
                                pp_error *err);
PP_API pp_status pp_gpu_load(const char *name, pp_gpu *out, pp_error *err);
/* Parses a GPU catalog ({"gpus":[...]}); fills up to cap entries. */
PP_API pp_status pp_gpu_catalog_parse(const char *text, size_t len, const char *where, pp_gpu *out,
                                      int cap, int *n, pp_error *err);
PP_API pp_status pp_cluster_load(const char *name_or_path, pp_cluster *out, pp_error *err);
PP_API pp_status pp_cluster_parse(const char *text, size_t len, const char *where, pp_cluster *out,
                                  pp_error *err);
/* Rescales to `nodes` nodes, or to `gpus` GPUs (0 = leave). gpus below one
 * node's worth make a single partial node; above, it must be a multiple. */
PP_API pp_status pp_cluster_resize(pp_cluster *c, int nodes, int gpus, pp_error *err);

/* JSON renderings (caller frees with pp_free). NULL on allocation failure. */
PP_API char *pp_model_to_json(const pp_model *m);
PP_API char *pp_gpu_to_json(const pp_gpu *g);
PP_API char *pp_cluster_to_json(const pp_cluster *c);
PP_API void pp_free(void *p);

PP_API const char *pp_precision_name(pp_precision p);
PP_API const char *pp_link_kind_name(pp_link_kind k);

/* ---------------------------------------------------------------- configs out
 * Launcher files for a plan: DeepSpeed's ds_config.json (written, and read
 * back into a strategy) and Megatron-LM / Megatron-DeepSpeed arguments.
 * Targeted versions and every rule: docs/deepspeed.md, docs/megatron.md.
 *
 * Each framework decides a few things implicitly (DeepSpeed runs bf16
 * without ZeRO through its BF16_Optimizer; Megatron-LM accumulates bf16
 * gradients in fp32; DeepSpeed's pipeline engine never overlaps gradient
 * reduction). pp_*_adapt rewrites a strategy into what the framework will
 * really run, noting each change, so that the estimate matches the file;
 * pp_*_check refuses anything the file cannot express exactly (the reason
 * says what to change); the writers call check and never emit what the
 * framework rejects or silently ignores.
 *
 * Ownership: notes and option structs are plain caller-owned values;
 * *_to_string and pp_megatron_args return text the caller frees with
 * pp_free. Notes are appended to (start from an all-zero pp_notes). */

#define PP_NOTES_MAX 32
#define PP_NOTE_LEN 320

/* Human-readable notes beside a result: what was adapted or assumed, what a
 * file cannot say, keys DeepSpeed ignores. Never written into the files. */
typedef struct pp_notes {
    int n;                                 /* lines used */
    int dropped;                           /* lines that did not fit */
    char line[PP_NOTES_MAX][PP_NOTE_LEN];  /* one line each, no newline */
} pp_notes;

/* Training hyper-parameters the emitted configs carry. Defaults
 * (pp_hparams_default) are common LLM pretraining values, docs/deepspeed.md. */
typedef struct pp_hparams {
    double lr;                /* peak learning rate; default 3e-4 */
    double min_lr;            /* warmup start and end of decay; default 0 */
    double beta1, beta2;      /* AdamW moments; default 0.9, 0.95 */
    double eps;               /* AdamW epsilon; default 1e-8 */
    double weight_decay;      /* default 0.1 */
    double momentum;          /* SGD; default 0.9 */
    int warmup_steps;         /* linear warmup, optimizer steps; default 2000 */
    int total_steps;          /* optimizer steps of the run (linear decay to min_lr); default 100000 */
    double gradient_clipping; /* max global gradient L2 norm, 0 = off; default 1.0 */
    int initial_scale_power;  /* fp16: first dynamic loss scale is 2^this; default 16 */
    int loss_scale_window;    /* fp16: steps without overflow before the scale grows; default 1000 */
    int hysteresis;           /* fp16: overflows tolerated before it shrinks; default 2 */
    double min_loss_scale;    /* fp16: floor of the dynamic loss scale; default 1 */
} pp_hparams;

PP_API void pp_hparams_default(pp_hparams *h);
/* Range checks (lr > 0, min_lr <= lr, warmup <= total, ...); `where` names
 * the source in the message. */
PP_API pp_status pp_hparams_check(const pp_hparams *h, const char *where, pp_error *err);

/* DeepSpeed v0.14.5 ds_config.json. */
typedef struct pp_deepspeed_opts {
    pp_hparams hp;
    int client_optimizer;       /* 1: no optimizer block, the training script passes its
                                   own (Megatron-DeepSpeed does); default 0 */
    int client_scheduler;       /* 1: no scheduler block, likewise; default 0 */
    int pin_memory;             /* offload buffers in pinned host memory; default 1 */
    int gather_16bit_on_save;   /* ZeRO-3: stage3_gather_16bit_weights_on_model_save; default 1 */
    char nvme_path[PP_TEXT_LEN];/* local NVMe mount for --offload nvme (required then) */
} pp_deepspeed_opts;

PP_API void pp_deepspeed_opts_default(pp_deepspeed_opts *o);
/* Rewrites s into what DeepSpeed will run (see above); notes each change.
 * PP_ERR_INPUT when s asks for something DeepSpeed cannot do (ZeRO-2/3
 * with pipeline parallelism, ...). s need not be resolved. */
PP_API pp_status pp_deepspeed_adapt(const pp_model *m, const pp_cluster *c, pp_strategy *s, pp_notes *notes,
                                    pp_error *err);
/* PP_OK when ds_config.json can express s exactly; else PP_ERR_INPUT with
 * the reason. No I/O; cheap enough to filter candidate strategies. o may be
 * NULL: the rules that depend on it (NVMe path, hyper-parameters) are skipped. */
PP_API pp_status pp_deepspeed_check(const pp_model *m, const pp_cluster *c, const pp_strategy *s,
                                    const pp_deepspeed_opts *o, pp_error *err);
/* The ds_config.json text for plan p (its resolved strategy); *out is
 * caller-freed with pp_free. Refuses (PP_ERR_INPUT, nothing written) what
 * pp_deepspeed_check refuses. Notes say what the file leaves to the launcher
 * and the model code. o NULL = pp_deepspeed_opts_default. */
PP_API pp_status pp_deepspeed_to_string(const pp_model *m, const pp_cluster *c, const pp_plan *p,
                                        const pp_deepspeed_opts *o, char **out, pp_notes *notes,
                                        pp_error *err);
/* Writes it to path atomically; an existing file is replaced only with
 * force (else PP_ERR_IO naming the file). */
PP_API pp_status pp_deepspeed_write(const pp_model *m, const pp_cluster *c, const pp_plan *p,
                                    const pp_deepspeed_opts *o, const char *path, int force, pp_notes *notes,
                                    pp_error *err);
/* Reads a user's ds_config.json the way DeepSpeed v0.14.5 does (batch rule,
 * defaults, its failures; "auto" filled in first as the Hugging Face Trainer
 * does, see pp_hf_trainer_args below) into s. On entry s carries what a
 * DeepSpeed config does not: tp, pp, cp, ep, sp, seq, recompute, schedule,
 * stage split, attention, order (and precision fp8 or optimizer as
 * fallbacks); the file sets dp, ZeRO, offload, precision, gradient dtype,
 * batch, buckets, overlap, optimizer. o (may be NULL) receives the
 * hyper-parameters. Warnings name keys DeepSpeed ignores. Errors are
 * PP_ERR_INPUT naming `where` and the key. */
PP_API pp_status pp_deepspeed_parse(const char *text, size_t len, const char *where, const pp_model *m,
                                    const pp_cluster *c, pp_strategy *s, pp_deepspeed_opts *o,
                                    pp_notes *warnings, pp_error *err);
PP_API pp_status pp_deepspeed_read(const char *path, const pp_model *m, const pp_cluster *c, pp_strategy *s,
                                   pp_deepspeed_opts *o, pp_notes *warnings, pp_error *err);

/* What the Hugging Face Trainer (or Accelerate) fills into "auto" values of
 * a ds_config.json before DeepSpeed reads it: its TrainingArguments
 * (transformers integrations/deepspeed.py; every rule in
 * configs/deepspeed_auto.c and docs/deepspeed.md). 0 or -1 = not given:
 * the Trainer's default (per_device_train_batch_size 8, accumulation 1),
 * and for the precision parplan's default, bf16 (the Trainer's own default
 * is fp32). A given value that a number in the file contradicts is the
 * Trainer's mismatch error (PP_ERR_INPUT naming the key); a key the file
 * leaves out takes the given value. The model's hidden size fills the ZeRO
 * bucket keys. Every value filled in is added to the warnings. */
typedef struct pp_hf_trainer_args {
    int micro_batch;   /* per_device_train_batch_size; 0 = not given */
    int global_batch;  /* sequences per step: accumulation = global / (micro x dp); 0 = not given */
    int precision;     /* pp_precision of --bf16/--fp16/neither (fp8: bf16 outside its GEMMs); -1 = not given */
} pp_hf_trainer_args;

/* pp_deepspeed_parse / _read with the Trainer's arguments for "auto" (hf
 * may be NULL: none given). The plain functions are these with NULL. */
PP_API pp_status pp_deepspeed_parse_hf(const char *text, size_t len, const char *where, const pp_model *m,
                                       const pp_cluster *c, const pp_hf_trainer_args *hf, pp_strategy *s,
                                       pp_deepspeed_opts *o, pp_notes *warnings, pp_error *err);
PP_API pp_status pp_deepspeed_read_hf(const char *path, const pp_model *m, const pp_cluster *c,
                                      const pp_hf_trainer_args *hf, pp_strategy *s, pp_deepspeed_opts *o,
                                      pp_notes *warnings, pp_error *err);

/* Hugging Face TrainingArguments as JSON (HfArgumentParser.parse_json_file;
 * the training_args.json parplan writes), read back: what the HF Trainer
 * takes from them. Unknown keys fail with the nearest field, keys that
 * change memory or time and are not priced are named in warnings. */
typedef struct pp_training_args {
    int micro_batch;   /* per_device_train_batch_size (the Trainer's default 8) */
    int grad_accum;    /* gradient_accumulation_steps (default 1) */
    int checkpointing; /* gradient_checkpointing: every block recomputed */
    int precision;     /* pp_precision of bf16 / fp16 true; -1 = neither (fp32) */
    int optimizer;     /* pp_optimizer of optim (default adamw_torch) */
    int loss;          /* pp_loss: chunked with use_liger_kernel, else fp32 */
    double ddp_bucket; /* ddp_bucket_cap_mb as fp32 gradient elements; 0 = DDP's 25 MiB */
    char deepspeed[PP_TEXT_LEN]; /* the "deepspeed" key: a ds_config.json path; "" = none */
    char where[PP_TEXT_LEN];     /* the file read (relative paths in it are from its folder) */
    /* TRL's `trl sft` config (SFTConfig + ModelConfig keys), what parplan
     * writes for LoRA and QLoRA plans: -1 = the key is absent */
    int use_peft;              /* use_peft */
    int lora_r;                /* lora_r */
    double lora_alpha, lora_dropout;
    int lora_targets;          /* PP_LORA_* mask of lora_target_modules */
    int load_in_4bit;          /* load_in_4bit (QLoRA) */
    int max_length;            /* SFTConfig.max_length: sequences cut to it */
    int block_size;            /* run_clm.py's block_size: sequences of that length */
    char dtype[16];            /* ModelConfig.dtype the base loads in; "" = absent */
} pp_training_args;

PP_API void pp_training_args_default(pp_training_args *t);
PP_API pp_status pp_training_args_parse(const char *text, size_t len, const char *where, pp_training_args *t,
                                        pp_notes *warnings, pp_error *err);
PP_API pp_status pp_training_args_read(const char *path, pp_training_args *t, pp_notes *warnings, pp_error *err);
/* The strategy of the HF Trainer run t launches on c: dp = GPUs / (tp x pp
 * x cp of s), batch, checkpointing, precision, optimizer, loss from t. With
 * a ds_config (ds_config, else t->deepspeed relative to t's folder) it is
 * read with pp_deepspeed_read_hf, the Trainer filling its "auto" values
 * (dso, may be NULL, receives its options); without, the run is plain
 * PyTorch (framework pytorch unless s names another). Checked with the rule
 * table; a failure names the TrainingArguments key and the rule. */
PP_API pp_status pp_hf_strategy(const pp_training_args *t, const char *ds_config, const pp_model *m,
                                const pp_cluster *c, pp_strategy *s, pp_deepspeed_opts *dso, pp_notes *warnings,
                                pp_error *err);
/* An FSDP launcher file read back (docs/fsdp.md): HF Accelerate's FSDP2
 * config YAML (v1.14 keys: distributed_type FSDP, mixed_precision,
 * num_machines, num_processes, fsdp_config.*, parallelism_config.*) with
 * the TrainingArguments t (batch, checkpointing, optimizer; may be NULL:
 * s keeps its batch), or a torchtitan v0.2.2 job TOML (t must be NULL: it
 * carries the batch). Told apart by content (a [table] line is TOML).
 * Unknown keys fail with the nearest one, known keys that are not priced
 * are named in warnings, values the framework rejects fail; the strategy
 * (framework fsdp) is checked with the rule table, a failure naming the
 * key and the rule. */
PP_API pp_status pp_fsdp_parse(const char *text, size_t len, const char *where, const pp_model *m,
                               const pp_cluster *c, const pp_training_args *t, pp_strategy *s, pp_notes *warnings,
                               pp_error *err);
PP_API pp_status pp_fsdp_read(const char *path, const pp_model *m, const pp_cluster *c, const pp_training_args *t,
                              pp_strategy *s, pp_notes *warnings, pp_error *err);

/* Megatron-LM (Megatron-Core) or Megatron-DeepSpeed command-line arguments. */
typedef enum pp_megatron_flavor {
    PP_MEGATRON_LM,        /* NVIDIA Megatron-LM, Megatron-Core argument names */
    PP_MEGATRON_DEEPSPEED, /* microsoft/Megatron-DeepSpeed with a ds_config.json */
    PP_MEGATRON_FLAVOR_COUNT
} pp_megatron_flavor;

typedef struct pp_megatron_opts {
    pp_megatron_flavor flavor;          /* default PP_MEGATRON_LM */
    pp_hparams hp;
    char deepspeed_config[PP_TEXT_LEN]; /* DEEPSPEED: value of --deepspeed_config; default "ds_config.json" */
} pp_megatron_opts;

PP_API void pp_megatron_opts_default(pp_megatron_opts *o);
/* As pp_deepspeed_adapt, for the flavor's framework. */
PP_API pp_status pp_megatron_adapt(const pp_model *m, const pp_cluster *c, pp_strategy *s,
                                   pp_megatron_flavor flavor, pp_notes *notes, pp_error *err);
PP_API pp_status pp_megatron_check(const pp_model *m, const pp_cluster *c, const pp_strategy *s,
                                   const pp_megatron_opts *o, pp_error *err);
/* The arguments as a bash file defining MEGATRON_ARGS=( ... ), one flag per
 * line; *out is caller-freed with pp_free. */
PP_API pp_status pp_megatron_args(const pp_model *m, const pp_cluster *c, const pp_plan *p,
                                  const pp_megatron_opts *o, char **out, pp_notes *notes, pp_error *err);
PP_API pp_status pp_megatron_write(const pp_model *m, const pp_cluster *c, const pp_plan *p,
                                   const pp_megatron_opts *o, const char *path, int force, pp_notes *notes,
                                   pp_error *err);
/* Reads Megatron-LM or Megatron-DeepSpeed arguments back (docs/megatron.md):
 * the MEGATRON_ARGS=( ... ) file pp_megatron_args writes, one flag per line,
 * or a command line (# comments, quotes, backslash continuations; nothing is
 * expanded or run). --deepspeed makes them Megatron-DeepSpeed's, whose
 * ds_config.json (--deepspeed_config, relative to where's folder) is read
 * with pp_deepspeed_read. Every flag must exist in the flavor's parser
 * (Megatron-LM d98e8a64dd, Megatron-DeepSpeed f4157bea): an unknown one
 * fails with the nearest flag, the other flavor's says so. Model flags
 * (--num-layers, --hidden-size, ..., rotary base, norm epsilon) must agree
 * with m. The flags that change the price set s (framework, degrees, batch,
 * sequence, precision, recompute, schedule, split, overlap, loss, optimizer,
 * attention); s keeps the rest (buffers, fine-tuning). Flags that exist but
 * are not priced are named in warnings. The strategy is then checked with
 * the rule table (pp_strategy_resolve); a failure names the flag and the
 * rule (err->rule). PP_ERR_INPUT naming where:line and the flag. */
PP_API pp_status pp_megatron_parse(const char *text, size_t len, const char *where, const pp_model *m,
                                   const pp_cluster *c, pp_strategy *s, pp_notes *warnings, pp_error *err);
PP_API pp_status pp_megatron_read(const char *path, const pp_model *m, const pp_cluster *c, pp_strategy *s,
                                  pp_notes *warnings, pp_error *err);

/* ---------------------------------------------------------------- files out
 * Every file parplan writes (ds_config.json, Megatron arguments, the HF and
 * PEFT configs, SVG charts) goes through pp_write_files: each file goes to a
 * temporary file in its own directory, is fsynced, and only when all of a
 * set are written are they renamed into place; if installing one fails, the
 * ones already in place are removed again (an old file replaced with force
 * is put back). So a set of files is complete or untouched, never half.
 * Every destination is checked first (pp_write_check): its directory exists
 * and is writable, and the name is absent, or, with force, a regular file.
 * force never replaces a directory, a symbolic link (not written through:
 * give the target's path), a device such as /dev/full, a FIFO or a socket.
 * Errors: PP_ERR_INPUT for a missing path or the same file twice; PP_ERR_IO
 * (exit 2) for a bad destination; PP_ERR_INTERNAL (exit 3) when the bytes
 * could not be written (disk full, file size limit, I/O error). The message
 * names the file and the system's reason (strerror). */

typedef struct pp_out_file {
    const char *path;
    const char *data;
    size_t len;              /* bytes of data */
} pp_out_file;

/* PP_OK when path could be written now (see above); nothing is created. */
PP_API pp_status pp_write_check(const char *path, int force, pp_error *err);
#define PP_WRITE_FORCE 1u  /* replace existing regular files */
#define PP_WRITE_MKDIRS 2u /* create missing directories (as mkdir -p; e.g. one folder per plan),
                              and remove the ones created if the set fails */
/* Writes n files as one set (see above). flags: PP_WRITE_*. */
PP_API pp_status pp_write_files(const pp_out_file *files, int n, unsigned flags, pp_error *err);
/* One file: pp_write_files with n = 1. */
PP_API pp_status pp_write_file(const char *path, const char *data, size_t len, int force, pp_error *err);

/* ---------------------------------------------------------------- launch files
 * What a plan's framework launches with (docs/frameworks.md), built in
 * memory: pytorch training_args.json (HF TrainingArguments); deepspeed
 * ds_config.json (and training_args.json for the HF Trainer when it can
 * run the plan); megatron megatron_args.sh; megatron-deepspeed
 * ds_config.json and megatron_deepspeed_args.sh; fsdp accelerate_fsdp.yaml
 * and training_args.json, or torchtitan.toml (pipeline stages, fp8);
 * adapter_config.json and bnb_config.json for LoRA/QLoRA; README.txt with
 * the launch command; plan.json. The plan's strategy must be resolved (as
 * pp_estimate and pp_plan_search return it): it is trusted as it is. */

#define PP_LAUNCH_MAX 8

typedef struct pp_launch_file {
    char name[64];   /* file name in the plan's folder */
    char *text;      /* owned (pp_launch_free) */
} pp_launch_file;

typedef struct pp_launch {
    int n;
    pp_launch_file files[PP_LAUNCH_MAX];
    pp_notes notes;  /* what the files leave to the launcher or the model code */
} pp_launch;

typedef struct pp_launch_opts {
    pp_hparams hp;
    char nvme_path[PP_TEXT_LEN]; /* DeepSpeed NVMe offload mount; default /local_nvme */
} pp_launch_opts;

PP_API void pp_launch_opts_default(pp_launch_opts *o);
PP_API pp_status pp_launch_files(const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_launch_opts *o,
                                 pp_launch *out, pp_error *err);
PP_API void pp_launch_free(pp_launch *l);
/* Writes n plans' launch files under dir: dir/1/, dir/2/, ... (dir itself for
 * one plan unless flags has PP_EMIT_NUMBERED), all of them as one set
 * (pp_write_files; PP_WRITE_FORCE honoured, folders made as mkdir -p):
 * nothing is written if any plan cannot be emitted or any file cannot be
 * written, and folders it created go again. */
#define PP_EMIT_NUMBERED 4u
PP_API pp_status pp_plan_emit(const pp_model *m, const pp_cluster *c, const pp_plan *plans, int n,
                              const pp_launch_opts *o, const char *dir, unsigned flags, pp_notes *notes,
                              pp_error *err);

/* ---------------------------------------------------------------- planner
 * pp_plan_search enumerates every valid strategy for a model on a cluster
 * and a global batch (docs/planner.md), prunes with memory and step-time
 * lower bounds, splits pipeline stages with an integer program (GLPK), costs
 * each survivor with pp_estimate and ranks with a total order, so the plans
 * are the same for any thread count.
 * Ownership: a pp_plan_list owns its plans; free it with pp_plan_list_free
 * (a zeroed list is safe to free). Text results are freed with pp_free. */

typedef enum pp_objective {
    PP_OBJ_THROUGHPUT, /* shortest step (most tokens/s) */
    PP_OBJ_COST,       /* least $ per token at the GPU price */
    PP_OBJ_MEMORY,     /* least peak memory per GPU, then shortest step */
    PP_OBJ_COUNT
} pp_objective;

#define PP_SET_MAX 32   /* values in one restriction */
#define PP_TOP_MAX 1000 /* largest top_k */

/* A restriction of one integer dimension: n = 0 means every valid value. */
typedef struct pp_int_set {
    int n;
    int v[PP_SET_MAX];
} pp_int_set;

typedef struct pp_search_opts {
    int global_batch;          /* sequences per step (required, >= 1) */
    int seq;                   /* tokens per sequence; 0 = the model's */
    int top_k;                 /* plans returned, 1..PP_TOP_MAX */
    pp_objective objective;
    int threads;               /* OpenMP threads; 0 = the runtime default */
    int max_tp_per_node;       /* largest TP degree; 0 = the cluster's NVLink domain
                                  (gpus_per_node unless the cluster says otherwise) */
    pp_int_set dp, tp, pp, cp, ep, sp, zero, micro_batch, virtual_stages;
    unsigned precisions;       /* bit (1u << pp_precision) each; 0 = the default set:
                                  bf16 (fp16 where no bf16) and fp8 where the GPU has it */
    unsigned offloads;         /* bit per pp_offload; 0 = all */
    unsigned recomputes;       /* bit per pp_recompute; 0 = all */
    unsigned schedules;        /* bit per pp_schedule; 0 = all */
    unsigned frameworks;       /* bit per pp_framework; 0 = all */
    int stage_partition;       /* 1 (default): ILP stage split; 0: default even split */
    int stage_recompute;       /* 1 (default): with full recompute the ILP picks how
                                  many blocks each stage recomputes */
    double ilp_time_limit_s;   /* safety net per ILP solve, s (default 10); a hit
                                  is counted in the stats, never silent */
    double ilp_budget_s;       /* all the search's ILP solves together, s of their
                                  wall time (default 5; each solve's limit is
                                  also cut to what is left); once spent, the
                                  remaining pipeline candidates keep the default
                                  split (stats.ilp_budget_skipped). 0: no ILP */
    double price_usd_per_gpu_hour; /* cost objective; 0 = the catalog price */
    pp_strategy base;          /* what is not searched: optimizer, attention,
                                  gradient dtype, buffers, rank order, overlap */
} pp_search_opts;

/* GLPK: the stage-split ILP is solved with GLPK (planner/ilp_glpk.c). A
 * program that uses GLPK itself keeps its GLPK state as it had it: GLPK
 * keeps everything per thread (the terminal output flag set with
 * glp_term_out, the glp_error_hook, every glp_prob, and glp_free_env frees
 * them all), and parplan runs each solve on a thread it creates and joins
 * within the call. There it switches terminal output off, installs its own
 * error hook, and calls glp_free_env before the thread ends (also after a
 * GLPK error). Nothing of this reaches the calling thread: its hook,
 * terminal setting and objects are untouched, and no GLPK environment is
 * left on it. This needs a GLPK built with thread-local storage
 * (glp_config("TLS") not NULL, as Debian's is); without it parplan does not
 * call GLPK and splits stages with its exact DP (stats.ilp_fallbacks). */

/* Defaults: top 3, throughput, everything searched, ILP on. global_batch
 * must still be set. */
PP_API void pp_search_opts_default(pp_search_opts *o);

/* What the search did. Deterministic (no timings): the same for any thread
 * count, unless an ILP hit its time limit or the ILP budget ran out (both
 * counted here). */
typedef struct pp_search_stats {
    long long enumerated;     /* valid candidates examined (strategies before the stage split;
                                 a shape over memory by bound is not examined at the larger
                                 micro-batches whose bound cannot be lower: docs/planner.md) */
    long long pruned_memory;  /* dropped by the memory lower bound, never costed */
    long long pruned_bound;   /* never costed: step-time lower bound above the K-th best */
    long long costed;         /* evaluated with pp_estimate */
    long long fitting;        /* costed and fit in memory */
    int probes;               /* cost-model probes for bounds and ILP coefficients */
    int ilp_considered;       /* pipeline candidates whose split could change the ranking */
    int ilp_bounded;          /* of those, dropped: even an ideal split could not */
    int ilp_solved;           /* distinct ILPs solved by GLPK */
    int ilp_cache_hits;       /* identical sub-problems answered from the cache */
    int ilp_improved;         /* ILP split better than the default split */
    int ilp_time_limit_hits;  /* solves stopped by the time limit (may be suboptimal) */
    int ilp_fallbacks;        /* solved by the exact DP instead (coefficient check failed
                                 or the layer pattern has too many runs) */
    int ilp_budget_skipped;   /* not solved: ilp_budget_s was spent, so they kept the
                                 default split (timing-dependent, like
                                 ilp_time_limit_hits; 0 unless the budget ran out) */
} pp_search_stats;

typedef struct pp_plan_list {
    int n;                    /* plans found, best first */
    pp_plan *plans;           /* n plans, owned */
    pp_search_stats stats;
    pp_objective objective;
    double usable_bytes;      /* GPU memory a plan may use, bytes */
    pp_plan *nearest;         /* n == 0 only: the costed candidate needing the least
                                 memory (NULL when none could be costed); owned */
} pp_plan_list;

/* Searches the strategy space. PP_OK with list->n >= 1; PP_ERR_INFEASIBLE
 * when nothing fits (list->nearest then says how close it came);
 * PP_ERR_INPUT when the options are invalid or no strategy is valid, with
 * the option named in err. The list is filled in every case and must be
 * freed. */
PP_API pp_status pp_plan_search(const pp_model *m, const pp_cluster *c, const pp_search_opts *o,
                                pp_plan_list *list, pp_error *err);
PP_API void pp_plan_list_free(pp_plan_list *list);

/* The objective value of a plan (lower is better): seconds per step, $ per
 * token, or peak bytes. */
PP_API double pp_plan_objective(const pp_cluster *c, const pp_plan *p, pp_objective obj, double price);

/* Why the best plan wins: what separates #1 from #2 and why common
 * alternatives (pure data parallelism with ZeRO-3, TP across the node, no
 * pipeline, and the unpinned best when dimensions were pinned) lose. Runs
 * restricted searches. *text is a caller-freed (pp_free) multi-line string. */
PP_API pp_status pp_plan_explain(const pp_model *m, const pp_cluster *c, const pp_search_opts *o,
                                 const pp_plan_list *list, char **text, pp_error *err);
/* When nothing fits: the least memory any candidate needed against what is
 * usable (by how much, on which stage, the largest term), and which change
 * would fit (more GPUs, offload, recompute, a smaller micro-batch, ZeRO),
 * each checked by searching again, fastest first. The same words and
 * ranking as pp_oom_advice. */
PP_API pp_status pp_plan_why_infeasible(const pp_model *m, const pp_cluster *c, const pp_search_opts *o,
                                        const pp_plan_list *list, char **text, pp_error *err);

/* When an estimated plan p (from pp_estimate) does not fit: by how much, on
 * which stage and which term dominates, and the smallest changes that fit
 * (micro-batch, recompute, ZeRO stage, offload, tp x 2, pp x 2, or 2-8 times
 * the GPUs for the same global batch; up to three at once), each checked by
 * re-estimating and kept only when no smaller change fits, listed by
 * predicted step time (those on the same GPUs first). flags:
 * PP_ADVICE_DEEPSPEED names the ds_config.json keys of each change.
 * *text is caller-freed (pp_free); PP_ERR_INPUT when p fits. */
#define PP_ADVICE_DEEPSPEED 1u
PP_API pp_status pp_oom_advice(const pp_model *m, const pp_cluster *c, const pp_plan *p, unsigned flags, char **text,
                               pp_error *err);

/* ---------------------------------------------------------------- Hugging Face
 * For the HF Trainer + PEFT stack (docs/finetune.md). */

/* PEFT adapter_config.json (LoraConfig: r, lora_alpha, lora_dropout,
 * target_modules, bias, task_type) for a LoRA/QLoRA plan. Caller frees. */
PP_API pp_status pp_peft_config_to_string(const pp_model *m, const pp_plan *p, char **out, pp_error *err);
/* The plan's ds_config.json with the keys the HF Trainer fills set to "auto". */
PP_API pp_status pp_hf_trainer_deepspeed_to_string(const pp_model *m, const pp_cluster *c, const pp_plan *p,
                                                   const pp_deepspeed_opts *o, char **out, pp_notes *notes,
                                                   pp_error *err);
/* Writes ds_config_trainer.json (and adapter_config.json for LoRA/QLoRA)
 * next to ds_path, atomically; refuses to overwrite without force. */
PP_API pp_status pp_hf_write(const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_deepspeed_opts *o,
                             const char *ds_path, int force, pp_notes *notes, pp_error *err);

/* ---------------------------------------------------------------- scenarios
 * A scenario is one question in JSON (docs/sweep.md): a model, a cluster
 * with its size, a global batch, and any strategy dimension pinned or
 * restricted ("tp": 8, "zero": [1, 2], "precision": "bf16", "mode": "lora").
 * It is the line format of `parplan sweep` and the request of the JSON
 * library entry, so a script in any language can drive parplan with text. */

typedef struct pp_scenario {
    char model[PP_TEXT_LEN];     /* preset name or path */
    char cluster[PP_TEXT_LEN];   /* preset name or path */
    int nodes, gpus;             /* 0 = the preset's */
    pp_search_opts opts;         /* global batch, seq, restrictions, base strategy */
    double train_tokens;         /* 0 = no train{} block */
} pp_scenario;

PP_API pp_status pp_scenario_parse(const char *json, size_t len, const char *where, pp_scenario *out,
                                   pp_error *err);
/* Loads the scenario's model and sized cluster. */
PP_API pp_status pp_scenario_load(const pp_scenario *sc, pp_model *m, pp_cluster *c, pp_error *err);
/* The whole request in one call: scenario JSON in, result JSON out
 * ({"schema_version", "scenario", "plans": [...]} or {"error": {...}}). Never
 * NULL unless out of memory; *status gets the outcome (PP_ERR_INFEASIBLE when
 * nothing fits). Caller frees with pp_free. Thread-safe. */
PP_API char *pp_plan_request(const char *json, pp_status *status);
/* The estimate of one strategy as a request (docs/sweep.md): model,
 * cluster, nodes/gpus and strategy keys named as `parplan estimate`'s flags
 * (tp, pp, dp, zero, micro_batch, global_batch, recompute, ...), with the
 * same defaults. Result {"schema_version", "scenario", "plan": {...}} where
 * "plan" is exactly `parplan estimate --format json`, or {"error": {...}}.
 * A plan that does not fit is a result (PP_OK, "fits": false), as in the
 * CLI. Caller frees with pp_free. Thread-safe. */
PP_API char *pp_estimate_request(const char *json, pp_status *status);

/* ---------------------------------------------------------------- sweeps
 * A sweep spec ({"grid": {...}, "scenarios": [...]}, docs/sweep.md) is an
 * indexed sequence of scenarios: the grid first, in the order its keys are
 * written with the last varying fastest, then the listed scenarios. Nothing
 * is expanded up front: scenario i is built from i in O(grid keys), so a
 * sweep of any size runs in constant memory, and shards and resumed indices
 * are skipped without being built. Each result is one JSON line or CSV row
 * carrying its index; results leave in index order, with at most a bounded
 * window of finished results held back for ordering.
 * Ownership: a pp_sweep owns its parsed spec (pp_sweep_close); lines and
 * scenario texts returned are the caller's (pp_free). */

typedef enum pp_sweep_format { PP_SWEEP_JSONL, PP_SWEEP_CSV, PP_SWEEP_FORMAT_COUNT } pp_sweep_format;

#define PP_SWEEP_MAX 2147483647 /* scenarios one spec may hold (INT_MAX) */

#define PP_SWEEP_MAX_JOBS 1024 /* threads a sweep may ask for */

typedef struct pp_sweep_opts {
    int jobs;                   /* threads running scenarios, the caller's included (it runs
                                   them while it waits for results); 0 = the OpenMP default;
                                   at most PP_SWEEP_MAX_JOBS */
    int shard_k, shard_n;       /* run indices i with i % n == k - 1; 0/0 = all */
    pp_sweep_format format;
    int top;                    /* > 0: "top" for scenarios that do not give one (the
                                   scenario echoed in the line carries it); 0 = theirs */
    unsigned frameworks;        /* != 0: "framework" (1u << pp_framework bits) for
                                   scenarios that do not give one; 0 = theirs (all) */
    int window;                 /* results held back for ordering, at most; 0 = default
                                   (64 + 32 x jobs) */
    const int *skip;            /* sorted indices to skip (resume); may be NULL */
    int nskip;
    /* pp_sweep_run: called once per result, in index order, from one thread
     * at a time: the line (no newline) and the scenario's status. Return 0
     * to go on, non-zero to stop the sweep (pp_sweep_run then returns
     * PP_ERR_IO). */
    int (*emit)(int index, const char *line, pp_status st, void *user);
    /* pp_sweep_run: called after each emitted result: done of total (the
     * scenarios this shard runs, less those skipped). */
    void (*progress)(int done, int total, void *user);
    void *user;
} pp_sweep_opts;

typedef struct pp_sweep pp_sweep;             /* a parsed spec, indexable */
typedef struct pp_sweep_queue pp_sweep_queue; /* the ordered window of a running sweep */

/* Parses and checks a spec; builds no scenario. PP_ERR_INPUT names `where`
 * and the JSON path. *out is freed with pp_sweep_close. */
PP_API pp_status pp_sweep_open(const char *spec, size_t len, const char *where, pp_sweep **out, pp_error *err);
PP_API void pp_sweep_close(pp_sweep *s);
/* Scenarios in the spec (before sharding). */
PP_API int pp_sweep_size(const pp_sweep *s);
/* Scenario `index` as JSON text, with "top" and "framework" added as o says (o may be
 * NULL). NULL when out of memory or index is out of range. Thread-safe. */
PP_API char *pp_sweep_scenario(const pp_sweep *s, const pp_sweep_opts *o, int index);
/* Runs scenario `index` on the calling thread and renders its result line
 * in o->format (no newline); *st gets the scenario's status. NULL (and
 * *st = PP_ERR_NOMEM) when out of memory. Thread-safe: MPI ranks and worker
 * threads call it side by side. */
PP_API char *pp_sweep_result(const pp_sweep *s, const pp_sweep_opts *o, int index, pp_status *st);
/* 1 when index is run under o's shard and skip list, else 0. */
PP_API int pp_sweep_selected(const pp_sweep_opts *o, int index);

/* Runs a sweep on o->jobs threads: drive(q, user) runs on the calling
 * thread and takes the results in order with pp_sweep_queue_next (running
 * scenarios itself while it waits), o->jobs - 1 workers run beside it.
 * Other processes (MPI ranks) can take part: the driver claims indices for
 * them and puts their lines back. Returns what drive returns; once drive
 * returns, workers finish the scenario in hand and stop. PP_ERR_INPUT for
 * a bad shard. Deterministic order whatever the thread count. */
PP_API pp_status pp_sweep_stream(const pp_sweep *s, const pp_sweep_opts *o,
                                 pp_status (*drive)(pp_sweep_queue *q, void *user), void *user, pp_error *err);
/* The next result in index order. wait = 1 blocks until it is ready, the
 * caller running scenarios meanwhile; 0 returns at once. Returns 1 with
 * *line (caller frees with pp_free), 0 not ready yet, -1 when every selected
 * scenario has been returned, -2 when a worker ran out of memory. */
PP_API int pp_sweep_queue_next(pp_sweep_queue *q, int wait, int *index, char **line, pp_status *st);
/* For a worker outside this process: the next index to run. 1 with *index,
 * 0 when the window is full (claim again after taking results), -1 when
 * nothing is left to claim. */
PP_API int pp_sweep_queue_claim(pp_sweep_queue *q, int *index);
/* Hands in the line of a claimed index (copied). PP_ERR_INPUT when index is
 * not claimed and pending. */
PP_API pp_status pp_sweep_queue_put(pp_sweep_queue *q, int index, const char *line, pp_status st);
/* Scenarios the sweep runs (selected by shard and skip list) and of those
 * returned by pp_sweep_queue_next so far. */
PP_API int pp_sweep_queue_total(const pp_sweep_queue *q);
PP_API int pp_sweep_queue_done(const pp_sweep_queue *q);

/* Number of scenarios a spec holds (before sharding), or a status. */
PP_API pp_status pp_sweep_count(const char *spec, size_t len, const char *where, int *count, pp_error *err);
/* Runs a sweep, calling o->emit per result in index order. PP_OK when the
 * spec was valid and every result was emitted (scenario failures are in
 * their lines); *failed counts scenarios that did not give a plan. */
PP_API pp_status pp_sweep_run(const char *spec, size_t len, const char *where, const pp_sweep_opts *o,
                              int *failed, pp_error *err);
/* The fixed CSV header of PP_SWEEP_CSV (docs/sweep.md). Static storage. */
PP_API const char *pp_sweep_csv_header(void);

/* The field an error message names, from the library's message forms
 * ("FILE: $.grid.gpus: ...", "--tp 3: ...", "FILE:3:7: malformed ...")
 * into buf: "$.grid.gpus", "tp", "$" (the whole document). "" when the
 * message names none. Returns buf. */
PP_API char *pp_error_field(const pp_error *err, char *buf, size_t cap);

/* ---------------------------------------------------------------- compare
 * What-if analysis (docs/compare.md): one model on several cluster types and
 * GPU counts. Every option (a cluster at one GPU count) gets its best plan
 * from pp_plan_search (top 1), the time to train T tokens, the cost (rental
 * $/GPU-hour from the catalog with its date, an override, or a purchase
 * price amortised over a stated period), the energy (GPU board power x
 * GPU-hours) and tokens/s per $/hour. The options are then ranked: Pareto
 * front of (days, cost), the cheapest meeting a deadline and a budget, the
 * fastest within the budget, and with a deadline, the smallest GPU count of
 * each cluster type that meets it (a bounded search over whole nodes).
 * Ownership: a pp_compare_result owns its arrays; free it with
 * pp_compare_free (a zeroed result is safe to free). Text results are freed
 * with pp_free. */

#define PP_COMPARE_MAX_CLUSTERS 16 /* cluster types in one comparison */
#define PP_COMPARE_MAX_COUNTS 32   /* GPU counts per cluster type */
#define PP_COMPARE_MAX_PROBES 64   /* evaluations kept per deadline search */

typedef enum pp_price_kind {
    PP_PRICE_NONE,     /* no price known: cost, tokens/s per $ are NaN */
    PP_PRICE_CATALOG,  /* on-demand rental from topologies/gpus.json, dated */
    PP_PRICE_OVERRIDE, /* rental price given by the user */
    PP_PRICE_PURCHASE, /* purchase price / amortisation period (+ electricity) */
    PP_PRICE_KIND_COUNT
} pp_price_kind;

PP_API const char *pp_price_kind_name(pp_price_kind k); /* "none", "catalog", ... */
/* What kind of rental rate a price is: "on-demand" (the catalog's prices are
 * on-demand list prices, never reserved or spot), "given" (the user's rate,
 * whatever their contract), "purchase", "none". */
PP_API const char *pp_price_basis(pp_price_kind k);
/* The precision compare uses on every cluster unless told otherwise: bf16,
 * or fp16 on a GPU without bf16 (V100). */
PP_API pp_precision pp_compare_default_precision(const pp_gpu *g);
/* Model FLOPs utilisation on one basis for every GPU: model FLOP/s per GPU
 * over the dense peak of pp_compare_default_precision (bf16), whatever
 * precision the plan runs in (pp_throughput.mfu is over the plan's own
 * precision's peak, so an fp8 plan's mfu is against twice the FLOP/s). NaN
 * when not computable. */
PP_API double pp_compare_mfu_bf16(const pp_cluster *c, const pp_plan *p);

/* One cluster type to compare. */
typedef struct pp_compare_cluster {
    pp_cluster cluster;             /* loaded; resized to each GPU count */
    int ncounts;                    /* 0: evaluate at the cluster's own size */
    int gpus[PP_COMPARE_MAX_COUNTS];/* GPU counts (whole nodes, or one partial node) */
    double price_usd_per_gpu_hour;  /* > 0: rental price overriding the catalog */
    double purchase_usd_per_gpu;    /* > 0: cost is this amortised (takes precedence) */
} pp_compare_cluster;

struct pp_compare_option;

typedef struct pp_compare_opts {
    pp_search_opts search;   /* global_batch (required), seq, objective (throughput or
                                cost), threads, restrictions; top_k is forced to 1;
                                precisions 0 = pp_compare_default_precision on every
                                cluster (bf16), never fp8 unless asked */
    double train_tokens;     /* tokens to train on, > 0 (required) */
    double deadline_days;    /* > 0: a deadline; 0 = none */
    double budget_usd;       /* > 0: a budget; 0 = none */
    double amortize_years;   /* period a purchase price is spread over, years (required
                                when a cluster has purchase_usd_per_gpu) */
    double usd_per_kwh;      /* purchase only: electricity at GPU board power added to the
                                cost; 0 = not counted (rental prices include power) */
    int deadline_search;     /* 1 (default): with a deadline, find each type's smallest
                                GPU count meeting it */
    int max_nodes;           /* that search's largest count, nodes (default 4096) */
    int max_probes;          /* that search's evaluations per cluster type (default 24) */
    /* Called after every evaluation (may be NULL): done evaluations so far
     * and the option just evaluated. For a progress line; must not fail. */
    void (*progress)(void *user, int done, const struct pp_compare_option *opt);
    void *progress_user;
} pp_compare_opts;

/* Defaults: deadline search on, 4096 nodes, 24 probes; search options from
 * pp_search_opts_default with top_k 1. train_tokens and
 * search.global_batch must still be set. */
PP_API void pp_compare_opts_default(pp_compare_opts *o);

/* One option: a cluster type at one GPU count, and its best plan. */
typedef struct pp_compare_option {
    int cluster;             /* index into the clusters given */
    int gpus, nodes;
    int from_search;         /* 1: added by the deadline search (not asked for) */
    pp_status status;        /* PP_OK; PP_ERR_INFEASIBLE nothing fits; PP_ERR_INPUT no
                                valid strategy (e.g. the global batch is too small) */
    char error[PP_ERR_LEN];  /* the reason when status != PP_OK */
    pp_price_kind price_kind;
    double usd_per_gpu_hour; /* rate the cost uses (purchase: amortised + electricity); NaN if none */
    char price_date[16];     /* catalog: the price's source date; else "" */
    double days;             /* time to train, days (NaN without a plan) */
    double gpu_hours;
    double cost_usd;         /* gpu_hours x usd_per_gpu_hour (NaN without a plan or price) */
    double energy_kwh;       /* GPU board power (TDP) x GPU-hours, kWh */
    double tokens_per_s;
    double tokens_per_s_per_usd_hour; /* tokens/s / (GPUs x $/GPU-hour) */
    double tokens_per_usd;   /* = 3600 x the above */
    double mfu_bf16;         /* pp_compare_mfu_bf16: one basis for every option; NaN without a plan */
    int meets_deadline;      /* 1 when a deadline is given and days <= it */
    int within_budget;       /* 1 when a budget is given and cost <= it */
    int pareto;              /* on the Pareto front of (days, cost) */
    pp_plan plan;            /* the best plan (status PP_OK), train{} filled */
} pp_compare_option;

/* Per cluster type: the smallest GPU count meeting the deadline. */
typedef struct pp_compare_min {
    int found;               /* 1: gpus meets the deadline and gpus - one node does not
                                (or is one node) */
    int gpus, nodes;
    int option;              /* index into options, -1 when not found */
    int probes;              /* evaluations spent (cache hits on asked counts are free) */
    int probe_gpus[PP_COMPARE_MAX_PROBES]; /* every count evaluated, in order */
    double probe_days[PP_COMPARE_MAX_PROBES]; /* NaN: no plan at that count */
    char note[PP_TEXT_LEN];  /* why not found, or that the bound was hit; "" */
} pp_compare_min;

typedef struct pp_compare_result {
    char model[PP_NAME_LEN];
    pp_compare_opts opts;    /* as used (progress callback cleared) */
    int nclusters;
    pp_compare_cluster *clusters; /* copies of the input, owned */
    int n;                   /* options: clusters in the order given, GPUs ascending */
    pp_compare_option *options;   /* owned */
    int nfront;
    int *front;              /* option indices on the Pareto front, by days ascending; owned */
    int feasible;            /* options with a plan */
    int cheapest;            /* cheapest meeting the deadline and the budget (those given),
                                ties to the faster; -1 when none */
    int fastest;             /* fastest within the budget (any when no budget); -1 */
    pp_compare_min mins[PP_COMPARE_MAX_CLUSTERS]; /* with a deadline search */
    int evaluations;         /* pp_plan_search calls made */
} pp_compare_result;

/* Runs the comparison. PP_OK when at least one option has a plan;
 * PP_ERR_INFEASIBLE when none does (err summarises why; the result is
 * filled and lists each option's reason); PP_ERR_INPUT for bad options (a
 * GPU count the cluster cannot take, tokens <= 0 or not finite, ...). The
 * result must be freed in every case. Deterministic for any thread count. */
PP_API pp_status pp_compare_run(const pp_model *m, const pp_compare_cluster *clusters, int nclusters,
                                const pp_compare_opts *o, pp_compare_result *out, pp_error *err);
PP_API void pp_compare_free(pp_compare_result *r);

/* What pp_compare_run fills after each search, for any plan (one from
 * pp_estimate, say): the price of cluster type cc (purchase, override or
 * catalog, with its date), then for o->train_tokens tokens at gpus GPUs
 *   days = tokens / (global_batch x seq) x step_s / 86400
 *   GPU-hours = days x 24 x gpus;  cost = GPU-hours x $/GPU-hour
 *   energy = GPU-hours x TDP / 1000 (kWh);  tokens/s per $/h =
 *   tokens_per_s / (gpus x $/GPU-hour);  tokens per $ = 3600 x that
 * where a purchase costs purchase / (amortize_years x 8766 h) + TDP/1000 x
 * usd_per_kwh per GPU-hour. out->status is PP_OK and out->plan a copy
 * with train{} filled; deadline, budget and front flags are left 0.
 * PP_ERR_INPUT when cc cannot take gpus GPUs. */
PP_API pp_status pp_compare_option_eval(const pp_compare_opts *o, const pp_compare_cluster *cc, int gpus,
                                        const pp_plan *plan, pp_compare_option *out, pp_error *err);

/* Pareto front of n points minimising both x and y: on_front[i] = 1 when no
 * other point is <= in both and < in one. Points with a NaN coordinate are
 * never on it. Equal points are all on it. O(n log n); 0 on success, -1 out
 * of memory. */
PP_API int pp_pareto_front(const double *x, const double *y, int n, int *on_front);

/* Renderings of a result, caller-freed with pp_free; NULL when out of
 * memory. JSON: docs/compare.md. CSV: a header and one row per option with
 * the fixed columns of docs/compare.md. SVG: cost against time to train,
 * one marker per option, the Pareto front, deadline and budget lines. */
PP_API char *pp_compare_to_json(const pp_model *m, const pp_compare_result *r);
PP_API char *pp_compare_to_csv(const pp_compare_result *r);
PP_API char *pp_compare_to_svg(const pp_compare_result *r);
/* The SVG written atomically to path (pp_write_file; force to replace). */
PP_API pp_status pp_compare_write_svg(const pp_compare_result *r, const char *path, int force, pp_error *err);

/* ---------------------------------------------------------------- HTML report
 * One self-contained HTML page (docs/report.md): the inputs in full, and per
 * plan the memory timeline of a stage over one step (pp_memory_timeline), a
 * bar per stage at its peak, the pipeline schedule and the step-time
 * waterfall, as inline SVG; CSS for screen and A4 print; a little JavaScript
 * for hover values, sorting and the stage picker; no request of any kind (a
 * Content-Security-Policy forbids them). The run's JSON (docs/schema.md) is
 * embedded in <script type="application/json" id="parplan-data">. The same
 * inputs and meta give the same bytes. Caller frees with pp_free; NULL when
 * out of memory. Write it with pp_write_file. */
typedef struct pp_report_meta {
    const char *command; /* the command line as run, printed in the header; may be NULL */
    long long date;      /* seconds since 1970-01-01 UTC, printed in the header */
} pp_report_meta;

PP_API char *pp_report_estimate(const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_report_meta *meta);
/* explain: pp_plan_explain's text, or NULL. */
PP_API char *pp_report_plan(const pp_model *m, const pp_cluster *c, const pp_search_opts *o, const pp_plan_list *l,
                            const char *explain, const pp_report_meta *meta);
PP_API char *pp_report_compare(const pp_model *m, const pp_compare_result *r, const pp_report_meta *meta);

#ifdef __cplusplus
}
#endif
#endif /* PARPLAN_H */
