/*
 * costmodel.h — pure arithmetic over a model, a cluster and a strategy:
 * parameter counts, FLOPs, per-GPU memory, collective and step times.
 * No I/O, no globals; types come from include/parplan.h.
 */
#ifndef PARPLAN_COSTMODEL_H
#define PARPLAN_COSTMODEL_H

#include <locale.h>
#include "parplan.h"

#define PP_GIB 1073741824.0 /* bytes */
#define PP_GB 1e9           /* bytes */

/* Defaults of pp_buffers that are not DeepSpeed settings (docs/memory.md):
 * CUDA context + cuBLAS workspace: HF transformers "model memory anatomy"
 * puts loaded CUDA kernels at 1-2 GB (NCCL buffers are counted apart).
 * Fragmentation: the caching allocator's reserved
 * minus allocated, an estimate. Reserve: torch total_memory on an 80 GiB
 * A100/H100 is about 79.2-79.3 GiB. */
#define PP_COST_CUDA_CONTEXT (1.0 * PP_GIB)
#define PP_COST_FRAGMENTATION 0.10
#define PP_COST_GPU_RESERVE (0.75 * PP_GIB)
#define PP_COST_HOST_RESERVE 0.10

/* NVMe offload (ZeRO-Infinity; docs/time.md and docs/memory.md, "NVMe").
 * A cluster without NVMe bandwidths gets one drive's share of what DeepNVMe
 * measured through libaio on 4 NVMe drives in RAID-0 (DeepSpeed blog
 * deepspeed-gds, Azure NC96ads_A100_v4): 10 GB/s reads, 5 GB/s writes.
 * DeepSpeed v0.14.5 defaults (runtime/zero/offload_config.py, config.py),
 * which parplan's ds_config leaves unset: */
#define PP_NVME_READ_BW_DEFAULT 2.5e9   /* bytes/s per node */
#define PP_NVME_WRITE_BW_DEFAULT 1.25e9 /* bytes/s per node */
#define PP_DS_MAX_IN_CPU 1e9            /* offload_param.max_in_cpu: 16-bit elements kept in host memory */
#define PP_DS_PARAM_BUFFER_ELEMS 5e8    /* offload_param.buffer_count 5 x buffer_size 1e8 */
#define PP_DS_OPT_BUFFERS 4.0           /* offload_optimizer.buffer_count */
#define PP_DS_SUB_GROUP 1e9             /* zero_optimization.sub_group_size, elements */
/* The allocator's overhead, a fraction of the memory allocated while training
 * runs: buf.fragmentation under PyTorch's caching allocator, none with
 * expandable segments (docs/memory.md, "Allocator"). */
double pp__fragmentation(const pp_strategy *s);
/* cuDNN's attention speedup where the framework runs it (compute.c). */
double pp__attn_kernel_speedup(const pp_cluster *c, const pp_strategy *s);
/* The cluster's NVMe bandwidths per node, or the defaults above. */
double pp__nvme_read_bw(const pp_cluster *c);
double pp__nvme_write_bw(const pp_cluster *c);

/* Activation bytes one micro-batch leaves stored in one block (for backward)
 * under recompute mode r (NONE, SELECTIVE or FULL). Korthikanti et al. 2022
 * Sec. 4, generalised: GQA, gated MLP, MoE, dropout, flash attention, CP. */
double pp__block_act_bytes(const pp_model *m, const pp_strategy *s, int kind, pp_recompute r);
/* torchtitan's per-op selective checkpointing in a Llama block: the
 * weights per token of the GEMMs it recomputes (wk, wo, w3) and of all. */
void pp__op_sac_gemms(const pp_model *m, double *redo, double *all);
int pp__op_sac_keeps_attn(const pp_strategy *s);
/* Activations Megatron's CPU offloading moves to the host per micro-batch
 * (blocks first..last). */
double pp__act_offload_bytes(const pp_model *m, const pp_strategy *s, int first, int last);
/* Micro-batches (whole-stage units) stage i holds (memory.c), and the
 * micro-batch count (grad_accum) from which that no longer changes. */
double pp__inflight(const pp_strategy *s, int i);
long pp__inflight_saturates(const pp_strategy *s);
/* What the loss's bytes and the block backward's working set would count
 * twice at the forward/backward moment (memory.c). */
double pp__loss_overlap(const pp_strategy *s, const pp_stage_mem *o);
double pp__fsdp_rs_loss_bytes(const pp_strategy *s, const pp_stage_mem *o);
double pp__loss_rec_bufs(const pp_strategy *s, const pp_stage_mem *o);
/* Bytes of one activation element: 4 in pure fp32 training, else 2. */
double pp__act_bytes(const pp_strategy *s);
/* 16-bit K and V of one micro-batch's sequence chunk on this rank (s/cp
 * tokens, kv_heads/tp heads): what context parallelism moves and holds. */
double pp__cp_kv_bytes(const pp_model *m, const pp_strategy *s);
/* Optimizer-state bytes per trainable parameter (master copy included). */
double pp__optimizer_bytes_per_param(const pp_model *m, pp_optimizer o, pp_precision p);
double pp__opt_bytes_per_param(const pp_model *m, const pp_strategy *s); /* with s->opt_states */
unsigned pp__rc_modules(const pp_strategy *s); /* PP_RC_* a selective recompute redoes; 0 without */
int pp__rc_module_groups(const pp_model *m, unsigned g[3]); /* the model's module groups */
int pp__mcore_master(const pp_strategy *s); /* bf16 states with an fp32 master shard (fp8) */
int pp__grad_copy_at_step(const pp_strategy *s); /* Megatron copies a 16-bit main_grad shard to fp32 */
/* Bytes per stored weight and per gradient element. */
double pp__weight_bytes_on(const pp_strategy *s, const pp_gpu *g); /* stored, with FP8 primary weights */
double pp__gather_bytes(const pp_strategy *s); /* per weight in a parameter all-gather */
double pp__grad_bytes(const pp_strategy *s);

/* A parallel group as the collectives see it. */
typedef struct pp__comm_group {
    int n;             /* members */
    double bw;         /* bytes/s per GPU per direction NCCL reaches */
    double latency;    /* s per ring step (the slowest tier the group crosses) */
    int crosses_nodes;
    /* NCCL's tree across NVLink domains: a chain of `chain` members inside
     * each domain (intra_latency per hop), a double binary tree over
     * `tree_nodes` domains (latency per hop); tree_nodes <= 1: no tree */
    int chain, tree_nodes;
    double intra_latency;
    /* all-to-all across domains: each member's off-domain bytes leave
     * through its own NIC share, the rest over the intra-domain link */
    double nic_bw, intra_bw;
    int local; /* members surely in one domain with each member (1 when the family straddles misaligned) */
} pp__comm_group;

/* Strides of each dimension from the rank order (steptime.c), and the
 * stride of the dp x cp ranks that share weights (expert groups are carved
 * from them). */
void pp__strides(const pp_strategy *s, int *st_tp, int *st_cp, int *st_dp, int *st_pp);
int pp__dp_stride(const pp_strategy *s);
/* The stride of the EP group's ranks: after the experts' TP when folded
 * (etp < tp: etp-ep-edp over the stage's tp x cp x dp ranks), else the
 * dp x cp stride. */
int pp__ep_stride(const pp_strategy *s);
/* The expert tensor-parallel degree: etp, or tp when unset. */
static inline int pp__etp(const pp_strategy *s) { return s->etp > 0 ? s->etp : s->tp; }
/* Ranks one expert's weights are replicated over (expert data parallelism):
 * tp x dp x cp / (ep x etp); dp x cp / ep when etp = tp. */
static inline double pp__edp(const pp_strategy *s)
{
    return (double)s->tp * s->dp * s->cp / ((double)s->ep * pp__etp(s));
}
/* The group of `size` ranks at `stride` on c (n = 1: no communication). */
void pp__group(const pp_cluster *c, int size, int stride, pp__comm_group *g);
/* Collective times, s. `bytes` is the full buffer each rank holds (all-
 * reduce), the gathered size (all-gather, reduce-scatter), what each rank
 * sends in total (all-to-all), or the message (send/recv). */
/* Compute lost while a collective overlaps it (fraction), and the time a
 * collective of `comm` s adds when `hide` s of compute can cover it: the
 * uncovered part plus the slowdown of the covered part. */
double pp__overlap_slowdown(const pp_cluster *c);
double pp__exposed(double slowdown, double comm, double hide);
double pp__allreduce_s(const pp__comm_group *g, double bytes);
double pp__allgather_s(const pp__comm_group *g, double bytes);
double pp__reducescatter_s(const pp__comm_group *g, double bytes);
double pp__alltoall_s(const pp__comm_group *g, double bytes);
/* The same for MoE dispatch of `bytes` = token copies x size, k copies a
 * token, when each token crosses once to each other domain holding one of
 * its experts (DeepEP/HybridEP); with group-limited routing (topk_groups of
 * `groups` expert groups; 0 = none) only the domains of those groups. */
double pp__alltoall_dedup_s(const pp__comm_group *g, double bytes, double k, int groups, int topk_groups);
double pp__alltoall_dedup_fan_s(const pp__comm_group *g, double bytes, double k, int groups, int topk_groups,
                                double fan);
double pp__sendrecv_s(const pp__comm_group *g, double bytes);
/* One hop of a point-to-point ring over g: one NIC where it leaves a node. */
double pp__ring_hop_s(const pp__comm_group *g, double bytes);

/* One micro-batch through one block on one GPU, s. */
typedef struct pp__block_times {
    double fwd_s, bwd_s;
    double core_fwd_s;   /* attention core share of fwd_s */
    double gemm_fwd_s;   /* GEMM share of fwd_s (what TP overlap can hide behind) */
    double pair_s[4];    /* forward time of the GEMM each sequence-parallel collective
                            pairs with under TE's TP overlap: the QKV projection (its
                            all-gather), the output projection (its reduce-scatter),
                            the MLP's up and down projections (a MoE block: the shared
                            experts'; 0 without them) */
    double tail_fwd_s;   /* the GEMM after the block's last saved tensor (a dense
                            block's MLP down projection, when no dropout follows):
                            what a recomputation that stops early skips */
    double tail_flops;   /* its forward FLOPs */
    double host_fwd_s, host_bwd_s; /* of fwd_s and bwd_s: the GPU waiting for the host to
                                      launch the routed experts (compute.c expert_host) */
} pp__block_times;

/* Appends a "; "-separated note to u->notes (uncertainty.c): a mechanism
 * of the plan that no validated run covers. */
__attribute__((format(printf, 2, 3))) void pp__unote(pp_uncertainty *u, const char *fmt, ...);

void pp__block_time(const pp_model *m, const pp_cluster *c, const pp_strategy *s, int kind,
                    pp__block_times *out);
double pp__attn_core_fwd_s(const pp_model *m, const pp_cluster *c, const pp_strategy *s);
/* DeepSpeed-MoE's einsum dispatch and combine in one MoE block: forward and
 * backward times; returns FLOPs (0 for other frameworks). */
double pp__gshard_einsum(const pp_model *m, const pp_cluster *c, const pp_strategy *s, double *fwd, double *bwd);
double pp__rc_fwd_s(const pp_model *m, const pp_cluster *c, const pp_strategy *s, int kind, unsigned rc,
                    double *flops); /* selective modules' forward again, s per block */
double pp__head_time(const pp_model *m, const pp_cluster *c, const pp_strategy *s);
double pp__embed_time(const pp_model *m, const pp_cluster *c, const pp_strategy *s);

/* Parameter elements on one GPU of a stage: sharded over dp*cp (dense) and
 * over dp*cp/ep (expert weights), before ZeRO. */
void pp__stage_params(const pp_model *m, const pp_strategy *s, int stage, int first, int last,
                      double *dense, double *expert);

/* The default split: equal blocks per stage, the remainder to the middle
 * stages first (out[0..p-1]). */
void pp__split_default(int p, int layers, int *out);

/* Text with numbers in the "C" locale (c_locale.c): PP__C_NUMERIC as the
 * first line of an API function sets it for this thread until it returns. */
locale_t pp__c_numeric_enter(void);
void pp__c_numeric_leave(locale_t *old);
#define PP__C_NUMERIC locale_t pp__saved_locale __attribute__((cleanup(pp__c_numeric_leave))) = pp__c_numeric_enter()

/* Interleaving: whether s carries an explicit layout, and the blocks of
 * chunk c of stage i (the layout's, else the stage's split evenly). */
int pp__chunks_explicit(const pp_strategy *s);
int pp__chunk_blocks(const pp_strategy *s, int stage, int chunk);
/* The model blocks stage `stage` holds, in the order it runs them, into
 * out (room for PP_MAX_LAYERS); returns how many. first..last, the stage's
 * share of the split, unless interleaving gives it chunk c of virtual stage
 * c*pp + stage: every pp-th virtual stage (Megatron, torchtitan). With m,
 * blocks that are all alike (one kind, no frozen prefix) keep first..last:
 * their sums are the same, and the walk over every chunk is not free. */
int pp__stage_blocks(const pp_model *m, const pp_strategy *s, int stage, int first, int last, int *out);

/* Blocks of stage i that are fully recomputed (the first ones; Megatron's
 * "block" method), given n blocks on the stage. */
int pp__recomputed_blocks(const pp_strategy *s, int stage, int n);

/* NCCL communicator buffers per GPU, bytes, for the groups the strategy uses. */
double pp__nccl_bytes(const pp_strategy *s);

/* Fine-tuning (finetune.c). */
double pp__qlora_bytes_per_param(void);
int pp__base_frozen(const pp_strategy *s, int block);
int pp__embedding_frozen(const pp_strategy *s);
int pp__head_frozen(const pp_model *m, const pp_strategy *s);
int pp__block_needs_backward(const pp_strategy *s, int block);
/* Adapter parameters of one block; *act_per_token: bytes LoRA adds per token. */
double pp__lora_block_params(const pp_model *m, const pp_strategy *s, int kind, double *act_per_token);
void pp__lora_block_bytes(const pp_model *m, const pp_strategy *s, int kind, int fp32_adapters, double *fwd, double *bwd);
int pp__fp32_adapters(const pp_strategy *s);
double pp__lora_head_params(const pp_model *m, const pp_strategy *s);
double pp__quantizable_block_params(const pp_model *m, int kind);

/* Trainable (unfrozen + adapter) and NF4-stored elements of a stage's GPU. */
void pp__stage_trainable(const pp_model *m, const pp_strategy *s, int stage, int first, int last,
                         double *trainable, double *quantized);
/* Both of the above from one pass over the stage's blocks. */
void pp__stage_counts(const pp_model *m, const pp_strategy *s, int stage, int first, int last, double *dense,
                      double *expert, double *trainable, double *quantized);
/* The same for a stage whose blocks (pp__stage_blocks) are already listed. */
void pp__stage_counts_of(const pp_model *m, const pp_strategy *s, int stage, const int *blk, int nb, double *dense,
                         double *expert, double *trainable, double *quantized);

/* A GPU's achievable fractions: its catalog values, or the documented
 * defaults (compute.c, docs/time.md) when the catalog has none. */
double pp__matmul_eff(const pp_gpu *g);
double pp__attn_eff(const pp_gpu *g);
double pp__hbm_bw_eff(const pp_gpu *g); /* bytes/s elementwise kernels reach */

/* Forward matmul FLOPs of one token through one block at sequence s. */
double pp__block_fwd_flops(const pp_model *m, int kind, double s);
/* Parameter tensors of one block (Megatron's GPT layout). */
int pp__block_tensors(const pp_model *m, int kind);

/* Formats a one-line error into err (may be NULL) and returns st. */
pp_status pp__fail(pp_error *err, pp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A failure about one field: msg = "field value: <reason>", with rule,
 * field, value and detail set (pp_error); returns PP_ERR_INPUT. */
pp_status pp__fail_field(pp_error *err, int rule, const char *field, const char *value, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Head dimension actually used (head_dim if set, else hidden/heads). */
int pp__head_dim(const pp_model *m);
/* Per-block parameter counts by part. */
double pp__attn_params(const pp_model *m);
double pp__mlp_params(const pp_model *m, int ffn);
double pp__norm_params(const pp_model *m); /* one norm of width hidden */

#endif
