/*
 * memory.c — peak memory per GPU of every pipeline stage (docs/memory.md).
 * Model states follow ZeRO (Rajbhandari et al. 2019, arXiv 1910.02054,
 * Sec. 5 and Table 1); activations follow Korthikanti et al. 2022; buffers
 * are DeepSpeed's and PyTorch's. Peak = max over the forward/backward moment
 * and the optimizer-step moment.
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "costmodel/costmodel.h"
#include "costmodel/framework.h"

/* Bytes per weight a GPU stores for the strategy (docs/memory.md, "FP8
 * primary weights"). Under fp8 Transformer Engine caches each weight's FP8
 * cast across micro-batches (linear.py _fp8_workspaces), with a transposed
 * copy where FP8 GEMMs are TN only (Hopper, Ada): 2 + 1 or 2 + 2 bytes.
 * With FP8 primary weights (Megatron's --fp8-param-gather) the FP8 tensor
 * is the parameter and no bf16 copy is kept: 1 byte, 2 with the transpose
 * (fp8_param_gather.md: TE float8_tensor_storage.py, Megatron-LM
 * param_and_grad_buffer.py, d98e8a64dd). */
double pp__weight_bytes_on(const pp_strategy *s, const pp_gpu *g)
{
    if (s->precision != PP_PREC_FP8) return s->precision == PP_PREC_FP32 ? 4.0 : 2.0;
    double fp8 = 1.0 + (g && g->fp8_transpose ? 1.0 : 0.0);
    return pp__fp8_params(s) ? fp8 : 2.0 + fp8;
}

/* Bytes per weight the parameter all-gather moves: 16-bit (fp32 in fp32
 * training), the FP8 bytes of FP8 primary weights (the transpose is made
 * after the gather: TE utils.py post_all_gather_processing). */
double pp__gather_bytes(const pp_strategy *s)
{
    if (s->precision == PP_PREC_FP32) return 4.0;
    return s->precision == PP_PREC_FP8 && pp__fp8_params(s) ? 1.0 : 2.0;
}

double pp__grad_bytes(const pp_strategy *s)
{
    if (s->precision == PP_PREC_FP32) return 4.0;
    return s->grad_accum_dtype == PP_GRAD_FP32 ? 4.0 : s->grad_accum_dtype == PP_GRAD_16_FP32 ? 6.0 : 2.0;
}

double pp__optimizer_bytes_per_param(const pp_model *m, pp_optimizer o, pp_precision p)
{
    double master = p == PP_PREC_FP32 ? 0.0 : 4.0; /* fp32 master copy */
    switch (o) {
    case PP_OPT_ADAMW: return master + 8.0; /* m, v fp32 (Loshchilov & Hutter) */
    case PP_OPT_ADAM8BIT:                   /* Dettmers et al. 2021: int8 m, v, */
        return master + 2.0 + 2 * 4.0 / 2048; /* fp32 absmax per 2048-block */
    case PP_OPT_ADAFACTOR:                  /* Shazeer & Stern 2018: factored v, */
        return master + 4.0 * (1.0 / m->hidden + 1.0 / m->ffn); /* no momentum */
    case PP_OPT_SGD: return master + 4.0;   /* momentum buffer */
    case PP_OPT_LION: return master + 4.0;  /* Chen et al. 2023: one momentum */
    case PP_OPT_ADAGRAD: return master + 4.0; /* Duchi et al. 2011: sum of squares */
    case PP_OPT_RMSPROP: return master + 4.0; /* Hinton: square average (momentum 0) */
    default: return master + 8.0;
    }
}

/* Optimizer bytes per trained weight of the strategy: its optimizer's, or
 * with bf16 states Megatron-Core's precision-aware optimizer: bf16 exp_avg
 * and exp_avg_sq and, in bf16 training, Transformer Engine's FusedAdam keeps
 * the fp32 master as the 16 bits the bf16 parameter lacks
 * (store_param_remainders, default on with TE >= 2.1). Under fp8 with the
 * current-scaling recipe parplan's Megatron files launch (--fp8-recipe
 * tensorwise) the distributed optimizer keeps its own fp32 master shard
 * instead (use_precision_aware_optimizer_no_fp8_or_ds_fp8 false: Megatron-LM
 * d98e8a64dd optimizer_config.py): 8 bytes. */
double pp__opt_bytes_per_param(const pp_model *m, const pp_strategy *s)
{
    if (s->opt_states == PP_OPT_STATES_BF16 && s->optimizer == PP_OPT_ADAMW)
        return 2.0 + 2.0 + (pp__mcore_master(s) ? 4.0 : 2.0);
    return pp__optimizer_bytes_per_param(m, s->optimizer, s->precision);
}

/* Megatron's optimizer takes a 16-bit main_grad shard as an fp32 copy at
 * the step (model_states: optimizer.py, distrib_optimizer.py), unless
 * the precision-aware optimizer hands it over as it is. */
int pp__grad_copy_at_step(const pp_strategy *s)
{
    const pp__fw *fw = pp__fw_get(s->framework);
    return fw && fw->buckets == PP_BUCKETS_VIEWS && s->precision != PP_PREC_FP32 && pp__grad_bytes(s) < 4 &&
           (s->opt_states != PP_OPT_STATES_BF16 || pp__mcore_master(s));
}

/* bf16 optimizer states with an fp32 master shard that Megatron-Core keeps
 * (fp8 training, current scaling) rather than TE's 16-bit remainders. */
int pp__mcore_master(const pp_strategy *s)
{
    return s->opt_states == PP_OPT_STATES_BF16 && s->precision == PP_PREC_FP8;
}

/* Per-GPU parameter elements of one stage, split by what ZeRO shards over. */
typedef struct stage_params {
    double embed;         /* the input embedding table (first stage), elements */
    double head;          /* the final norm and the output table (last stage), elements */
    double dense;         /* sharded over dp*cp */
    double expert;        /* sharded over dp*cp/ep */
    double largest_block; /* elements of the largest block on this GPU */
    double trainable;     /* base weights that train (full mode, not frozen) */
    double lora;          /* adapter weights (fp32, trainable) */
    double quantized;     /* base weights stored in NF4 (QLoRA) */
    double largest_matrix; /* elements of the largest linear map (QLoRA dequant) */
} stage_params;

static double block_params_gpu(const pp_model *m, const pp_strategy *s, int kind, double *expert)
{
    double t = s->tp, norms = m->norms_per_block * pp__norm_params(m);
    double dense = pp__attn_params(m) / t + norms;
    *expert = 0;
    if (kind == PP_BLOCK_MOE) {
        double e = pp__mlp_params(m, m->expert_ffn);
        dense += (double)m->hidden * m->experts + m->shared_experts * e / t;
        *expert = (double)m->experts / s->ep * e / pp__etp(s); /* routed experts split over etp */
    } else {
        dense += pp__mlp_params(m, m->ffn) / t;
    }
    return dense;
}

/* One block's parameter terms: the same for every block of a kind. */
typedef struct block_terms {
    double dense, expert, lora, quantized, big;
    int done;
} block_terms;

static void block_terms_of(const pp_model *m, const pp_strategy *s, int kind, block_terms *b)
{
    double act, t = s->tp;
    b->dense = block_params_gpu(m, s, kind, &b->expert);
    b->lora = pp__lora_block_params(m, s, kind, &act) / t;
    /* QLoRA: linear weights on this GPU, everything but norms and the router */
    double router = kind == PP_BLOCK_MOE ? (double)m->hidden * m->experts : 0;
    b->quantized = b->dense + b->expert - m->norms_per_block * pp__norm_params(m) - router;
    b->big = (double)m->hidden * (kind == PP_BLOCK_MOE ? m->expert_ffn : m->ffn) / t;
    b->done = 1;
}

static void add_block(const pp_strategy *s, int i, const block_terms *b, stage_params *sp)
{
    double d = b->dense, ex = b->expert;
    sp->dense += d;
    sp->expert += ex;
    if (d + ex > sp->largest_block) sp->largest_block = d + ex;
    if (!pp__base_frozen(s, i)) sp->trainable += d + ex;
    sp->lora += b->lora;
    if (s->ft.mode == PP_MODE_QLORA) {
        sp->quantized += b->quantized;
        if (b->big > sp->largest_matrix) sp->largest_matrix = b->big;
    }
}

/* The parameters of stage `stage`, whose blocks are blk[0..nb) (pp__stage_blocks). */
static stage_params stage_param_count(const pp_model *m, const pp_strategy *s, int stage, const int *blk, int nb)
{
    stage_params sp = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    double t = s->tp, h = m->hidden, emb = pp__vocab(m, s) * h / t;
    int is_first = stage == 0, is_last = stage == s->pp - 1;
    block_terms bt[PP_BLOCK_COUNT] = {{0}};
    for (int j = 0; j < nb; j++) {
        int i = blk[j], kind = m->block_kind[i];
        if (!bt[kind].done) block_terms_of(m, s, kind, &bt[kind]);
        add_block(s, i, &bt[kind], &sp);
    }
    if (is_first) {
        double e = emb + (m->position == PP_POS_LEARNED ? (double)m->max_positions * h : 0);
        if (m->embed_norm) e += pp__norm_params(m);
        sp.dense += e;
        sp.embed = emb;
        if (!pp__embedding_frozen(s)) sp.trainable += e;
    }
    if (is_last) {
        /* untied head; a tied head is a copy of the embedding when pp > 1 */
        double head = pp__norm_params(m) + (!m->tied_embeddings || !is_first ? emb : 0);
        sp.dense += head;
        sp.head = head;
        if (!pp__head_frozen(m, s)) sp.trainable += head;
        sp.lora += pp__lora_head_params(m, s) / t;
    }
    return sp;
}

void pp__stage_params(const pp_model *m, const pp_strategy *s, int stage, int first, int last,
                      double *dense, double *expert)
{
    double trainable, quantized;
    pp__stage_counts(m, s, stage, first, last, dense, expert, &trainable, &quantized);
}

void pp__stage_trainable(const pp_model *m, const pp_strategy *s, int stage, int first, int last,
                         double *trainable, double *quantized)
{
    double dense, expert;
    pp__stage_counts(m, s, stage, first, last, &dense, &expert, trainable, quantized);
}

void pp__stage_counts(const pp_model *m, const pp_strategy *s, int stage, int first, int last, double *dense,
                      double *expert, double *trainable, double *quantized)
{
    int blk[PP_MAX_LAYERS], nb = pp__stage_blocks(m, s, stage, first, last, blk);
    pp__stage_counts_of(m, s, stage, blk, nb, dense, expert, trainable, quantized);
}

void pp__stage_counts_of(const pp_model *m, const pp_strategy *s, int stage, const int *blk, int nb, double *dense,
                         double *expert, double *trainable, double *quantized)
{
    stage_params sp = stage_param_count(m, s, stage, blk, nb);
    *dense = sp.dense;
    *expert = sp.expert;
    *trainable = sp.trainable + sp.lora;
    *quantized = sp.quantized;
}

/* Whether stage i's chunks are an explicit layout's and differ in size.
 * The search's own splits (chunks within one block of each other) keep the
 * whole-stage rule, linear in the blocks as the stage ILP needs: off by at
 * most one block a held pass (about 1% at v 2). */
static int uneven_chunks(const pp_strategy *s, int i)
{
    int n = s->stage_layers[i];
    if (n <= 0 || !pp__chunks_explicit(s)) return 0;
    for (int c = 1; c < s->virtual_stages; c++)
        if (pp__chunk_blocks(s, i, c) != pp__chunk_blocks(s, i, 0)) return 1;
    return 0;
}

/* Micro-batches a chunk runs back to back (Megatron's
 * microbatch_group_size_per_vp_stage; pp by default). */
static long vp_group(const pp_strategy *s) { return s->vp_group > 0 ? s->vp_group : s->pp; }

/* The chunk of pass k in Megatron's schedule table (schedules.py
 * get_schedule_table): groups of g micro-batches, chunk-major within each;
 * the last group takes what is left (m micro-batches in all). */
static int table_chunk(long k, long m, long g, long v)
{
    long start = k / (g * v) * g; /* the group's first micro-batch */
    if (start + g >= m) return (int)((k - start * v) / (m - start));
    return (int)(k % (g * v) / g);
}

/* Megatron's interleaved order on stage i: `warm` forward chunk passes,
 * then one forward and one backward at a time, then the rest of the
 * backwards. Forward pass k runs chunk table_chunk(k), backward pass k
 * chunk v - 1 - table_chunk(k). Returns the most blocks' activations held at
 * once (a forward's are held until its backward). With groups of pp the
 * steady state repeats every pv passes, so two periods past the warm-up
 * find the peak; other group sizes are walked to the end. */
static double held_chunk_blocks(const pp_strategy *s, int i, long warm)
{
    long v = s->virtual_stages, m = s->grad_accum, g = vp_group(s), n = m * v;
    long stop = s->vp_group > 0 && s->vp_group != s->pp ? n : (warm + 2 * g * v < n ? warm + 2 * g * v : n);
    double held = 0, peak = 0, blocks[PP_MAX_CHUNKS]; /* an explicit layout: v <= PP_MAX_CHUNKS */
    for (long c = 0; c < v; c++) blocks[c] = pp__chunk_blocks(s, i, (int)c); /* looked up once, not each pass */
    long f = 0, b = 0;
    for (; f < warm; f++) held += blocks[table_chunk(f, m, g, v)], peak = fmax(peak, held);
    for (; f < stop; f++, b++) {
        held += blocks[table_chunk(f, m, g, v)];
        peak = fmax(peak, held);
        held -= blocks[v - 1 - table_chunk(b, m, g, v)];
    }
    return peak;
}

/* Micro-batches (in whole-stage units) whose activations stage i holds.
 * Depends only on pp, the schedule, v and the micro-batch count; with
 * 1F1B and interleaving it stops growing at pp__inflight_saturates. */
double pp__inflight(const pp_strategy *s, int i)
{
    int p = s->pp, m = s->grad_accum, v = s->virtual_stages;
    if (p == 1) return 1;
    switch (s->schedule) {
    case PP_SCHED_GPIPE: return m;
    case PP_SCHED_INTERLEAVED: {
        /* Megatron: warmup = (p-i-1)*2 + (v-1)*p chunk passes, plus one;
         * one more with the EP overlap (schedules.py: num_warmup_microbatches
         * += 1 under overlap_moe_expert_parallel_comm) */
        long warm = (p - i - 1) * 2L + (v - 1L) * vp_group(s) + (s->overlap_ep && s->ep > 1);
        if (warm > (long)m * v) warm = (long)m * v;
        if (!uneven_chunks(s, i)) return (warm + ((long)m * v > warm)) / (double)v;
        return held_chunk_blocks(s, i, warm) / s->stage_layers[i];
    }
    default: return p - i < m ? p - i : m; /* 1F1B: stage i holds p - i */
    }
}

/* The least micro-batch count from which every stage's pp__inflight no
 * longer depends on it (GPipe holds them all: never). */
long pp__inflight_saturates(const pp_strategy *s)
{
    int p = s->pp, v = s->virtual_stages;
    if (p == 1) return 1;
    switch (s->schedule) {
    case PP_SCHED_GPIPE: return LONG_MAX;
    case PP_SCHED_INTERLEAVED: /* stage 0's warmup */
        return (2L * (p - 1) + (v - 1L) * vp_group(s) + 1 + (s->overlap_ep && s->ep > 1) + v - 1) / v;
    default: return p;
    }
}

/* Activations Megatron's CPU offloading moves to the host per micro-batch:
 * what the stage's first act_offload_layers blocks store (no recompute:
 * rule fw-act-offload). */
double pp__act_offload_bytes(const pp_model *m, const pp_strategy *s, int first, int last)
{
    double sum = 0;
    for (int i = first, n = 0; i <= last && i >= 0 && n < s->act_offload_layers; i++, n++)
        sum += pp__block_act_bytes(m, s, m->block_kind[i], PP_RECOMPUTE_NONE);
    return sum;
}

/* Stored activations of one micro-batch through the stage's blocks. An
 * offloaded block's are on the host by the end of the forward: Transformer
 * Engine's DefaultOffloadSynchronizer finishes block i's copy before block
 * L - N + i and starts its reload one block earlier in the backward, so the
 * GPU holds L - N blocks' activations at most (cpu_offload.py; its v1
 * handler, NVTE_CPU_OFFLOAD_V1, held one block more). */
static double stage_act(const pp_model *m, const pp_strategy *s, int stage, const int *blk, int nb, double *one_block)
{
    double sum = 0;
    int k = pp__recomputed_blocks(s, stage, nb);
    *one_block = 0;
    /* per kind and recompute (the same for every such block): -1 unknown */
    double bytes[PP_BLOCK_COUNT][PP_RECOMPUTE_COUNT], lora[PP_BLOCK_COUNT];
    for (int a = 0; a < PP_BLOCK_COUNT; a++) {
        lora[a] = -1;
        for (int b = 0; b < PP_RECOMPUTE_COUNT; b++) bytes[a][b] = -1;
    }
    for (int n = 0; n < nb; n++) {
        pp_recompute r = s->recompute;
        int i = blk[n], kind = m->block_kind[i];
        if (r == PP_RECOMPUTE_FULL && n >= k) r = PP_RECOMPUTE_NONE; /* the first k blocks only */
        if (!pp__block_needs_backward(s, i)) continue; /* frozen prefix: nothing stored */
        if (lora[kind] < 0) pp__lora_block_params(m, s, kind, &lora[kind]);
        if (bytes[kind][r] < 0) bytes[kind][r] = pp__block_act_bytes(m, s, kind, r);
        if (bytes[kind][PP_RECOMPUTE_NONE] < 0) bytes[kind][PP_RECOMPUTE_NONE] = pp__block_act_bytes(m, s, kind, PP_RECOMPUTE_NONE);
        int offloaded = n < s->act_offload_layers;
        if (r != PP_RECOMPUTE_FULL && !offloaded)
            sum += lora[kind] * s->micro_batch * s->seq / s->cp / s->tp;
        if (!offloaded) sum += bytes[kind][r];
        /* backward working set: the gradients of one block's activations,
         * plus, when it was recomputed, the activations themselves */
        double full = bytes[kind][PP_RECOMPUTE_NONE];
        double work = (r == PP_RECOMPUTE_FULL ? 2 : 1) * full;
        if (work > *one_block) *one_block = work;
    }
    return sum;
}

typedef struct states {
    double params, grads, grads_persist, opt, host, opt_temp, gather_after_step, shard_params;
    double nvme;      /* swapped to NVMe (offload nvme) */
    double cast;      /* autocast's 16-bit weight copies (fwd/bwd) */
} states;

/* Fraction of the stage's weights one GPU keeps when states are sharded:
 * dense weights over dp*cp ranks (or the hybrid shard group), experts over
 * their expert-data-parallel group. */
static double shard_fraction(const pp_strategy *s, const stage_params *sp)
{
    double nd = (double)s->dp * s->cp, ns = s->shard > 0 && s->shard < nd ? s->shard : nd, ne = pp__edp(s);
    double all = sp->dense + sp->expert, shard = sp->dense / ns + sp->expert / (ne < ns ? ne : ns);
    return all > 0 ? shard / all : 1;
}

/* Bytes per stored base weight: 16 bits with an fp32 master in the
 * optimizer (Megatron, DeepSpeed); fp32 parameters under PyTorch AMP and
 * FSDP in full training; 16 bits for a LoRA base loaded in bf16. */
static double weight_bytes(const pp__fw *f, const pp_strategy *s, const pp_gpu *g)
{
    /* Megatron-FSDP keeps no FP8 transpose of its shards (keep_fp8_transpose_
     * cache off by default): it is made for each gathered unit */
    if (f->buckets == PP_BUCKETS_VIEWS && s->zero == 3 && pp__fp8_params(s)) return 1.0;
    if (f->weights == PP_W_MASTER16 || s->precision == PP_PREC_FP32) return pp__weight_bytes_on(s, g);
    return s->ft.mode == PP_MODE_FULL ? 4.0 : 2.0;
}

/* Optimizer states per trained weight; no master copy where the
 * parameters already are fp32. */
static double opt_bytes(const pp_model *m, const pp__fw *f, const pp_strategy *s)
{
    double k = pp__opt_bytes_per_param(m, s);
    return f->weights == PP_W_MASTER16 || s->precision == PP_PREC_FP32 ? k : k - 4.0;
}

/* ZeRO-Infinity (offload nvme, which parplan writes as offload_optimizer
 * and offload_param on NVMe; DeepSpeed v0.14.5 stage3.py and
 * runtime/swap_tensor/). NVMe holds the trained partition's fp32 master
 * weights and moments (st->host as ZeRO-Offload had them) and its fp32
 * gradients, swapped out at the last backward, and the 16-bit partitions
 * beyond offload_param.max_in_cpu. Host memory keeps the 16-bit partitions
 * up to max_in_cpu (pinned flat buffer, _create_param_groups_fp16_flat_
 * cpu_memory), the parameter swapper's buffer_count x buffer_size buffers,
 * the optimizer swapper's buffer_count x the largest sub-group x 4 B
 * (SwapBufferManager), and the gradient accumulation partition on the CPU
 * (grad_partitions_flat_buffer, in the gradient dtype). */
static void nvme_states(const pp_strategy *s, double opt, double train, states *st)
{
    double w = s->precision == PP_PREC_FP32 ? 4 : 2, g = fmin(pp__grad_bytes(s), 4);
    double beyond = fmax(0, st->shard_params - PP_DS_MAX_IN_CPU);
    st->nvme = opt + 4.0 * train + w * beyond;
    st->host = w * fmin(st->shard_params, PP_DS_MAX_IN_CPU) + w * PP_DS_PARAM_BUFFER_ELEMS +
               PP_DS_OPT_BUFFERS * fmin(train, PP_DS_SUB_GROUP) * 4.0 + g * train;
}

/* Model states on the GPU and on the host, after ZeRO and offload. Frozen
 * weights hold storage only; LoRA adapters train in their own dtype and need
 * no master copy; QLoRA stores linear weights in NF4. */
static states model_states(const pp_model *m, const pp_strategy *s, const pp_gpu *gpu, const stage_params *sp)
{
    states st;
    const pp__fw *fw = pp__fw_get(s->framework);
    int zs = pp__zero_states(s);
    double nd = (double)s->dp * s->cp, f = shard_fraction(s, sp);
    /* FSDP's sharded gradients take the sharded parameters' dtype, fp32,
     * whatever dtype the reduce-scatter ran in (FSDP2 foreach_reduce casts
     * the output to the parameter's dtype; FSDP1 without
     * keep_low_precision_grads the same) */
    double w = weight_bytes(fw, s, gpu), g = fw->weights == PP_W_FSDP ? 4 : pp__grad_bytes(s);
    double k = opt_bytes(m, fw, s), k_lora = pp__optimizer_bytes_per_param(m, s->optimizer, PP_PREC_FP32);
    double all = sp->dense + sp->expert;
    /* adapters: fp32 under PEFT's default autocast; 16-bit in QLoRA's recipe
     * (qlora.py casts LoRA modules to bf16); their optimizer needs no master */
    double la = s->ft.mode == PP_MODE_QLORA ? 2 : 4;
    /* torch's optimizers keep their states in the parameter's dtype
     * (zeros_like(p)): bf16 adapters, bf16 states; bitsandbytes' 8-bit Adam
     * and HF's Adafactor keep their own */
    if (la == 2 && s->optimizer != PP_OPT_ADAM8BIT && s->optimizer != PP_OPT_ADAFACTOR) k_lora *= 0.5;
    /* DeepSpeed casts the whole module to the 16-bit dtype, adapters
     * included (engine.py _configure_distributed_model: module.bfloat16()),
     * and its optimizer keeps an fp32 master and fp32 moments of every
     * trainable element (stage_1_and_2.py single_partition_of_fp32_groups;
     * BF16_Optimizer the same), with an fp32 gradient at the step (below) */
    int ds_adapters = fw->weights == PP_W_MASTER16 && s->precision != PP_PREC_FP32 && sp->lora > 0;
    if (ds_adapters) la = 2, k_lora = k;
    /* under fp8 the embedding and the output layer stay 16-bit: Transformer
     * Engine quantises the blocks' GEMM weights only */
    double edge = s->precision == PP_PREC_FP8 && fw->weights == PP_W_MASTER16 ? sp->embed + sp->head : 0;
    double weights = (all - sp->quantized - edge) * w + edge * 2.0 + sp->quantized * pp__qlora_bytes_per_param() +
                     sp->lora * la;
    double grads = sp->trainable * g + sp->lora * la, opt = sp->trainable * k + sp->lora * k_lora;
    double train = sp->trainable + sp->lora;
    /* DeepSpeed's BF16_Optimizer keeps an fp32 accumulation buffer all run;
     * Megatron's main_grad buffer too. FSDP2 allocates the sharded
     * gradients (the reduce-scatter's output) on its reduce-scatter stream,
     * and the caching allocator reuses a block only on the stream that made
     * it: freed by zero_grad, they stay reserved through the next step's
     * forward and backward (torch _fsdp_collectives.py foreach_reduce;
     * pytorch PR #129721; #132445, which would move them, closed unmerged) */
    int fsdp2_rs = fw->weights == PP_W_FSDP && zs >= 2 && (double)s->dp * s->cp > 1;
    double persist = fw->grads_persist || fsdp2_rs ? grads
                   : s->grad_accum_dtype == PP_GRAD_16_FP32 ? sp->trainable * 4.0 : 0;
    st.shard_params = f * all;
    st.params = (zs >= 3 ? f : 1) * weights;
    st.grads = (zs >= 2 ? f : 1) * grads;
    st.grads_persist = (zs >= 2 ? f : 1) * persist;
    st.opt = (zs >= 1 ? f : 1) * opt;
    double opt_elems = (zs >= 1 ? f : 1) * (sp->trainable + (ds_adapters ? sp->lora : 0));
    st.opt_temp = 0;
    if (fw->opt_temp == PP_OPT_TEMP_FOREACH)
        st.opt_temp = 4.0 * opt_elems + (s->ft.mode != PP_MODE_FULL ? sp->lora * la : 0); /* foreach's, in their dtype */
    if (fw->opt_temp == PP_OPT_TEMP_DEEPSPEED) {
        /* fp32 gradients for the step (+ with ZeRO-1 the averaged 16-bit
         * partition). ZeRO-3 (stage3.py, v0.14.5) keeps its 16-bit gradient
         * partition in one flat buffer all run (grad_partitions_flat_buffer)
         * and makes the fp32 copy one sub-group at a time
         * (_prepare_fp32_grad_for_sub_group: a 16-bit flatten, then .to(fp32)),
         * sub_group_size elements at most; DeepSpeed before v0.4
         * (zero3_per_tensor) had neither (sub_group_size 1e12, no buffer) */
        int stage3 = zs == 3 && pp__ds_wrapper_of(s) == PP_DS_ZERO && !s->buf.zero3_per_tensor;
        double sub = s->buf.sub_group_size > 0 ? s->buf.sub_group_size : opt_elems;
        double elems = stage3 ? fmin(opt_elems, sub) : opt_elems, per = stage3 ? 4.0 + pp__grad_bytes(s) : 4.0;
        st.opt_temp = s->precision == PP_PREC_FP32 ? 0 : per * elems;
        if (zs == 1) st.opt_temp += 2.0 * f * train;
        if (stage3) st.grads_persist = st.grads;
    }
    /* Megatron's optimizer takes its fp32 .grad from main_grad with .float()
     * (optimizer.py _copy_model_grads_to_main_grads; distrib_optimizer.py,
     * the rank's shard): the same tensor for an fp32 main_grad, a new fp32
     * copy at the step for a 16-bit one (--grad-reduce-in-bf16, fp16). The
     * precision-aware optimizer hands FusedAdam the shard itself
     * (distrib_optimizer.py: decoupled_grad = the model grad): no copy,
     * unless Megatron keeps the fp32 master (fp8: .float() again) */
    if (pp__grad_copy_at_step(s)) st.opt_temp += 4.0 * opt_elems;
    st.gather_after_step = fw->buckets == PP_BUCKETS_DEEPSPEED && (zs == 1 || zs == 2) && nd > 1
                               ? fmin(s->buf.allgather_bucket, train) * w : 0;
    /* autocast caches the 16-bit cast of every fp32 weight a GEMM uses */
    st.cast = fw->weights == PP_W_AMP && s->precision != PP_PREC_FP32 && w == 4.0 ? 2.0 * (all - sp->embed) : 0;
    st.host = 0;
    if (s->offload != PP_OFFLOAD_NONE) {
        /* ZeRO-Offload: optimizer states and fp32 grads live on the host */
        st.host = st.opt + 4.0 * opt_elems;
        /* ... and DeepSpeed's gradient accumulation, pinned beside them:
         * ZeRO-3 puts its grad_partitions_flat_buffer (the accumulation
         * dtype) on the CPU whenever the optimizer is offloaded (stage3.py
         * v0.14.5: self.device, partition_grads); ZeRO-1/2 accumulates
         * micro-batches in 16-bit CPU copies of its partition
         * (stage_1_and_2.py async_accumulate_grad_in_cpu_via_gpu) when
         * there is more than one (red team rt9) */
        if (fw->buckets == PP_BUCKETS_DEEPSPEED && s->offload != PP_OFFLOAD_NVME) {
            if (zs == 3) st.host += fmin(pp__grad_bytes(s), 4) * opt_elems;
            else if (s->grad_accum > 1) st.host += w * opt_elems;
        }
        st.opt = 0;
        st.opt_temp = 0;
        /* reduced gradient partitions are copied out bucket by bucket */
        if (zs >= 2) st.grads = st.grads_persist = 0;
    }
    if (s->offload == PP_OFFLOAD_OPT_PARAMS || s->offload == PP_OFFLOAD_NVME) {
        /* QLoRA under DeepSpeed: PEFT's DeepSpeed guide (caveat 3) measured
         * ZeRO-3 + QLoRA with CPU offload using more GPU memory than without;
         * parplan keeps the 4-bit base's partition on the GPU (no saving
         * priced; red team rt15) and moves the rest */
        double q4 = s->ft.mode == PP_MODE_QLORA && fw->weights == PP_W_MASTER16
                        ? (zs >= 3 ? f : 1) * sp->quantized * pp__qlora_bytes_per_param() : 0;
        st.host += st.params - q4;
        st.params = q4;
    }
    st.nvme = 0;
    if (s->offload == PP_OFFLOAD_NVME) nvme_states(s, (zs >= 1 ? f : 1) * opt, (zs >= 1 ? f : 1) * train, &st);
    return st;
}

/* FSDP wraps each block, the embedding, and the final norm with the head
 * (torchtitan v0.2.2 apply_fsdp: fully_shard([norm, output])): the largest
 * unit gathered or reduced at once, elements. */
static double largest_unit(const stage_params *sp) { return fmax(sp->largest_block, fmax(sp->embed, sp->head)); }

/* Communication buffers and gathered weights during forward/backward:
 * DeepSpeed's buckets and ZeRO-3 live parameters, DDP's bucket copy of the
 * gradients, FSDP's all-gathered units (the one computing and the one
 * prefetched; every unit when parameters stay gathered after forward) with
 * one unit's unsharded gradients before its reduce-scatter; Megatron-FSDP
 * the same, double-buffered by layer. */
static void comm_buffers(const pp_strategy *s, const pp_gpu *gpu, const stage_params *sp, pp_stage_mem *o)
{
    const pp__fw *fw = pp__fw_get(s->framework);
    double nd = (double)s->dp * s->cp, w = pp__weight_bytes_on(s, gpu);
    double g = pp__grad_bytes(s), all = sp->dense + sp->expert, train = sp->trainable + sp->lora;
    /* offloaded parameters come to the GPU unit by unit even on one rank */
    int fetched = nd > 1 || s->offload == PP_OFFLOAD_OPT_PARAMS || s->offload == PP_OFFLOAD_NVME;
    o->bucket_bytes = 0;
    o->zero_gather_bytes = 0;
    switch (fw->buckets) {
    case PP_BUCKETS_DEEPSPEED:
        o->bucket_bytes = nd > 1 ? fmin(s->buf.reduce_bucket, train) * g : 0;
        if (s->zero == 3 && fetched) {
            /* the gathered block being computed plus the one prefetched, capped
             * by stage3_max_live_parameters, plus the prefetch bucket; the
             * cap bounds prefetching only: the module computing is gathered
             * whole, the embedding or the head on its stage (red team rt9) */
            double live = fmax(fmin(s->buf.max_live_params, 2 * sp->largest_block), fmax(sp->embed, sp->head));
            o->zero_gather_bytes = (live + fmin(s->buf.prefetch_bucket, all)) * w;
        }
        break;
    case PP_BUCKETS_DDP: o->bucket_bytes = nd > 1 ? train * g : 0; break;
    case PP_BUCKETS_FSDP: {
        /* the unit computing and the one prefetched. torchtitan: a block
         * beside the embedding or the head (never gathered together), else
         * two blocks. Accelerate wraps the blocks and leaves the embedding,
         * final norm and head to the root unit, which FSDP2 keeps gathered
         * from forward to backward (fully_shard: "the root FSDP state has
         * its value specially set to False"), beside two blocks */
        double wg = s->precision == PP_PREC_FP32 ? 4 : 2, unit = largest_unit(sp);
        double pair = pp__fsdp_accelerate(s) ? sp->embed + sp->head + 2 * sp->largest_block : unit + sp->largest_block;
        double live = s->zero == 3 && s->pp == 1 ? pair : all; /* pipelined: gathered all step */
        o->zero_gather_bytes = fetched ? live * wg : 0;
        /* pipelined: torch.distributed.pipelining runs each backward with
         * gradient sync off and reduce-scatters after the step's last
         * (stage.py backward_maybe_with_nosync), so FSDP2 accumulates the
         * stage's unsharded gradients in fp32 (the reduce dtype: _fsdp_param.py
         * to_accumulated_grad_if_needed), a unit's 16-bit ones added at a
         * time; else the unit's 16-bit gradients and their fp32 cast for
         * its reduce-scatter */
        if (pp__fsdp_no_sync(s)) /* HF Trainer + Accelerate: every unit's unsharded
                                    gradients accumulate (in the reduce dtype) until the
                                    last micro-batch's reduce-scatter, on one GPU too */
            o->bucket_bytes = train * (g >= 4 ? 4 : wg);
        else if (nd <= 1) o->bucket_bytes = 0;
        else if (s->pp > 1) o->bucket_bytes = unit * wg + train * 4;
        else o->bucket_bytes = unit * (wg + (wg < 4 ? 4 : 0));
        break;
    }
    case PP_BUCKETS_VIEWS:
        /* Megatron-FSDP (zero 3): the layer computing and the one prefetched
         * are gathered (double buffering), and one layer's unsharded
         * gradients wait for their reduce-scatter (Megatron-LM megatron/core/
         * distributed/fsdp/src/docs/runtime_schedule.md: AO/DO, AI/DI) */
        if (s->zero == 3 && nd > 1) {
            /* FP8 primary weights: a unit arrives in FP8 and the Hopper
             * transpose is rebuilt beside it (w) */
            double unit = largest_unit(sp), table = fmax(sp->embed, sp->head); /* 16-bit beside FP8 weights */
            o->zero_gather_bytes = 2 * (pp__fp8_params(s) ? fmax(sp->largest_block * w, table * 2.0) : unit * w);
            o->bucket_bytes = unit * g;
        }
        break;
    }
    /* QLoRA: one linear map dequantised to 16 bits at a time */
    o->zero_gather_bytes += sp->largest_matrix * 2;
}

/* NCCL buffers: per communicator, NCCL_BUFFSIZE (4 MiB) for Simple plus
 * LL128 (~4.6 MiB) and LL (256 KiB) per channel per ring peer (NCCL docs,
 * env NCCL_BUFFSIZE); ~16 channels over NVSwitch, 2 peers. */
#define NCCL_COMM_BYTES (2.0 * 16 * 9 * 1048576)

double pp__nccl_bytes(const pp_strategy *s)
{
    int comms = (s->tp > 1) + (s->cp > 1) + (s->dp * s->cp > 1) + (s->ep > 1) + (s->pp > 1 ? 2 : 0);
    return comms * NCCL_COMM_BYTES;
}

/* What the last stage holds for the loss, bytes (docs/memory.md):
 *   fp32: 16-bit logits + the fp32 softmax Megatron's vocab-parallel
 *         cross-entropy keeps for backward (6 bytes per logit; 8 in fp32
 *         training); HF models upcast the logits the same way;
 *   fused: flash-attn's CrossEntropyLoss (llm-foundry's default) keeps the
 *         16-bit logits and writes a 16-bit gradient (4 bytes);
 *   chunked: Liger's fused linear cross-entropy materialises one chunk of
 *         2^ceil(log2(tokens / ceil(V/h))) tokens at a time (fp32 logits and
 *         their gradient, 8 bytes per logit of the chunk).
 * GPipe keeps every micro-batch's loss inputs until its backward. */
/* The loss kernel's bytes at its peak, the start of the backward.
 * fp32 is the framework's: Megatron's vocab-parallel cross-entropy keeps
 * the 16-bit logits and an fp32 softmax (ab + 4 per logit); PyTorch's
 * F.cross_entropy on logits.float() (HF Transformers' ForCausalLMLoss,
 * torchtitan's cross_entropy_loss) keeps log_softmax's fp32 output, and its
 * backward holds that, the incoming fp32 gradient and the fp32 gradient it
 * makes at once: 12 per logit (the 16-bit logits and their fp32 copy are
 * dropped before the backward: the Trainer returns the loss alone,
 * torchtitan deletes pred). With TP, torchtitan's loss_parallel runs
 * DTensor's decomposition (torch/distributed/tensor/parallel/loss.py
 * _nll_loss_and_log_softmax_backward: (grad_input + exp(x)) * grad_output
 * beside the saved x): 16 per logit. */
static double logits_bytes(const pp_model *m, const pp_strategy *s, double tok)
{
    double V = pp__vocab(m, s), logits = tok * V / s->tp, ab = pp__act_bytes(s); /* elements of one micro-batch */
    const pp__fw *fw = pp__fw_get(s->framework);
    double per, keep;
    switch (s->loss) {
    case PP_LOSS_FUSED: per = 2 * ab * logits, keep = ab * logits; break;
    case PP_LOSS_CHUNKED: {
        double chunks = ceil(V / m->hidden), chunk = fmax(1, exp2(ceil(log2(tok / chunks))));
        per = 8 * (chunk < tok ? chunk : tok) * V / s->tp, keep = 0;
        break;
    }
    default: per = (fw && fw->ce_upcast ? (s->tp > 1 ? 16 : 12) : ab + 4) * logits, keep = 4 * logits; break;
    }
    double stored = s->pp > 1 && s->schedule == PP_SCHED_GPIPE ? (s->grad_accum - 1) * keep : 0;
    return per + stored;
}

/* Context parallelism's K/V in flight during one block's backward: the ring
 * holds the next K,V chunk and the dK,dV chunk it passes on; the all-gather
 * kind holds the whole sequence's K,V and their gradients. */
static double cp_kv_bytes(const pp_model *m, const pp_strategy *s)
{
    if (s->cp <= 1) return 0;
    double kv = pp__cp_kv_bytes(m, s);
    return s->cp_comm == PP_CP_ALLGATHER ? 2 * kv * s->cp : 2 * kv; /* ring, or a2a's send/receive buffers */
}

/* Bytes the loss and one block's backward working set would count twice.
 * The loss's tensors (logits and their gradient) live from the loss to
 * the head's backward; the blocks' backward starts after it, once PyTorch's
 * engine has released those nodes' saved tensors (torch/csrc/autograd/
 * engine.cpp: call_function releases a node's variables after it runs
 * unless retain_graph). So the forward/backward moment holds the larger of
 * the two, not both. GPipe keeps the other micro-batches' loss inputs
 * through every backward: nothing overlaps there. */
double pp__loss_overlap(const pp_strategy *s, const pp_stage_mem *o)
{
    if (s->pp > 1 && s->schedule == PP_SCHED_GPIPE) return 0;
    return fmin(o->logits_bytes, o->recompute_bytes);
}

/* Expandable segments map physical pages into one growing virtual range per
 * stream, so neighbouring free blocks merge whatever their segment (PyTorch
 * docs, CUDA semantics, "expandable_segments"); what stays reserved beyond
 * the live blocks is a partly used mapping granule per stream, megabytes.
 * The same mechanism (GMLake, ASPLOS 2024: virtual memory stitching) removed
 * the 15% average fragmentation of the caching allocator on eight LLM
 * trainings. */
double pp__fragmentation(const pp_strategy *s)
{
    if (s->buf.expandable_segments > 0) return 0;
    return s->buf.fragmentation > 0 ? s->buf.fragmentation : 0;
}

/* FSDP2 reduce-scatters a unit once its backward is done (the 16-bit
 * gradients and, for a 16-bit unit, their reduce-dtype copy: bucket_bytes),
 * while the next block recomputes; by then the loss and the head's backward
 * have freed the logits, beside which only the head's 16-bit gradients
 * exist (torchtitan v0.2.2: fully_shard([norm, output]); FSDP2
 * _fsdp_collectives.py foreach_reduce). For torchtitan's pp 1 reduce-scatter
 * per micro-batch: the bucket bytes that stay beside the logits; -1
 * elsewhere (Accelerate's root unit keeps the head's gradients to the end of
 * the backward; pipelining accumulates every unit). */
double pp__fsdp_rs_loss_bytes(const pp_strategy *s, const pp_stage_mem *o)
{
    const pp__fw *fw = pp__fw_get(s->framework);
    if (fw->buckets != PP_BUCKETS_FSDP || s->pp > 1 || pp__fsdp_accelerate(s) || o->bucket_bytes <= 0) return -1;
    double wg = s->precision == PP_PREC_FP32 ? 4 : 2;
    return o->bucket_bytes * wg / (wg < 4 ? wg + 4 : wg);
}

/* The loss, the backward's working set and the buckets at the start of a
 * backward: the larger of the loss moment and the working-set moment. */
double pp__loss_rec_bufs(const pp_strategy *s, const pp_stage_mem *o)
{
    double b16 = pp__fsdp_rs_loss_bytes(s, o), rec = o->recompute_bytes;
    if (b16 >= 0) return fmax(o->logits_bytes + b16, rec + o->bucket_bytes);
    return o->logits_bytes + rec - pp__loss_overlap(s, o) + o->bucket_bytes;
}

/* The two moments of a step (docs/memory.md).
 * Forward/backward: model states, the buffers, and the larger of the start
 * of the last backward (every in-flight activation, the logits, autocast's
 * casts) and its end (every gradient). Gradients a framework frees at each
 * step (zero_grad(set_to_none=True)) exist in the forward only from the
 * second micro-batch of a step on; persistent buffers (Megatron's
 * main_grad, DeepSpeed's fp32 accumulation) always.
 * Optimizer step: model states with every gradient, the optimizer's
 * temporaries, the all-gather after the step, DDP's buckets.
 * The caching allocator reserves more than it hands out (nvidia-smi shows
 * reserved memory): fragmentation is applied to what is allocated while
 * training runs, not to the weights loaded once, the CUDA context or
 * NCCL's own buffers. */
static void phases(const pp_strategy *s, const states *st, double act, pp_stage_mem *o)
{
    const pp__fw *fw = pp__fw_get(s->framework);
    double gt = st->grads - st->grads_persist, frag = pp__fragmentation(s);
    /* the loss's bytes and one block's backward working set are not live
     * together (pp__loss_overlap), nor FSDP's reduce-scatter copy and the
     * logits (pp__loss_rec_bufs) */
    double rec = o->recompute_bytes, loss_rec = pp__loss_rec_bufs(s, o) - o->bucket_bytes; /* + bufs below */
    double front = act + loss_rec + st->cast + (s->grad_accum > 1 ? gt : 0), back = gt + rec;
    int at_end = back > front;
    double g_fb = st->grads_persist + (at_end || s->grad_accum > 1 ? gt : 0), act_fb = at_end ? 0 : act;
    double cast = at_end ? 0 : st->cast, logits = at_end ? rec : loss_rec; /* with the working set */
    double bufs = o->zero_gather_bytes + o->bucket_bytes + o->p2p_bytes;
    double frag_fwd = frag * (g_fb + st->opt + act_fb + logits + cast + bufs);
    double ddp = fw->buckets == PP_BUCKETS_DDP ? o->bucket_bytes : 0;
    double opt_dyn = st->opt_temp + st->gather_after_step + ddp;
    double frag_opt = frag * (st->grads + st->opt + opt_dyn);
    double fwd_buf = logits + cast + bufs + o->context_bytes + frag_fwd;
    double opt_buf = opt_dyn + o->context_bytes + frag_opt;
    o->grads_total_bytes = st->grads;
    o->grads_persistent_bytes = st->grads_persist;
    o->cast_bytes = st->cast;
    o->opt_temp_bytes = st->opt_temp;
    o->phase_bytes[PP_PHASE_FWD_BWD] = st->params + st->opt + g_fb + act_fb + fwd_buf;
    o->phase_bytes[PP_PHASE_OPTIMIZER] = st->params + st->opt + st->grads + opt_buf;
    if (o->phase_bytes[PP_PHASE_OPTIMIZER] > o->phase_bytes[PP_PHASE_FWD_BWD]) {
        o->peak_phase = PP_PHASE_OPTIMIZER;
        o->grads_bytes = st->grads;
        o->activations_bytes = 0;
        o->buffers_bytes = opt_buf;
        o->fragmentation_bytes = frag_opt;
    } else {
        o->peak_phase = PP_PHASE_FWD_BWD;
        o->grads_bytes = g_fb;
        o->activations_bytes = act_fb;
        o->buffers_bytes = fwd_buf;
        o->fragmentation_bytes = frag_fwd;
    }
    o->total_bytes = o->phase_bytes[o->peak_phase];
    o->live_bytes = fmax(o->phase_bytes[PP_PHASE_FWD_BWD] - frag_fwd, o->phase_bytes[PP_PHASE_OPTIMIZER] - frag_opt);
}

static void stage_estimate(const pp_model *m, const pp_cluster *c, const pp_strategy *s, int i,
                           int first, int last, pp_stage_mem *o)
{
    int is_first = i == 0, is_last = i == s->pp - 1;
    double tok = (double)s->micro_batch * s->seq / s->cp, rep = s->sp ? s->tp : 1;
    int blk[PP_MAX_LAYERS], nb = pp__stage_blocks(m, s, i, first, last, blk); /* once for the stage */
    stage_params sp = stage_param_count(m, s, i, blk, nb);
    states st = model_states(m, s, &c->gpu, &sp);

    memset(o, 0, sizeof *o);
    o->stage = i;
    o->first_layer = first <= last ? first : -1;
    o->last_layer = first <= last ? last : -1;
    o->has_embedding = is_first;
    o->has_lm_head = is_last;
    o->params_bytes = st.params;
    o->optimizer_bytes = st.opt;
    o->host_bytes = st.host;
    o->nvme_bytes = st.nvme;
    o->act_offload_bytes = pp__act_offload_bytes(m, s, first, last);
    o->host_bytes += o->act_offload_bytes; /* pinned buffers, one micro-batch (pp = 1) */

    double extra = 0, ab = pp__act_bytes(s);
    if (is_first && m->dropout > 0) extra += tok * m->hidden / rep;     /* embedding dropout mask */
    if (is_first && m->embed_norm) extra += ab * tok * m->hidden / rep; /* its input, not checkpointed */
    if (is_last) { /* final norm and head inputs; DTensor's TP keeps the head's gathered */
        double head_rep = pp__fw_get(s->framework)->tp_gathered_inputs ? 1 : rep;
        extra += ab * tok * m->hidden / rep + ab * tok * m->hidden / head_rep;
    }
    o->act_per_microbatch = stage_act(m, s, i, blk, nb, &o->recompute_bytes) + extra;
    o->recompute_bytes += cp_kv_bytes(m, s);
    o->inflight = pp__inflight(s, i);
    double act = o->act_per_microbatch * o->inflight;

    if (is_last) o->logits_bytes = logits_bytes(m, s, tok);
    /* pipeline: DeepSpeed's PipelineEngine keeps each in-flight micro-batch's
     * output for its backward; Megatron frees it once sent (training always
     * sets deallocate_pipeline_outputs); plus a receive buffer */
    double outs = s->buf.free_pipeline_outputs ? 1 : o->inflight;
    o->p2p_bytes = s->pp > 1 ? (outs + 1) * ab * tok * m->hidden / rep : 0;
    comm_buffers(s, &c->gpu, &sp, o);
    o->context_bytes = s->buf.cuda_context + pp__nccl_bytes(s);
    phases(s, &st, act, o);
}

/* QLoRA under DeepSpeed ZeRO-3: transformers builds a quantised model
 * without deepspeed.zero.Init (modeling_utils.py get_init_context: only
 * when not is_quantized) and bitsandbytes quantises it onto the current
 * GPU (quantizer_bnb_4bit.py update_device_map; TRL leaves device_map None
 * under DeepSpeed), so every rank holds the whole 4-bit model until
 * deepspeed.initialize partitions it: PEFT's DeepSpeed guide, caveat 3, and
 * bitsandbytes #1249, peft #1844, transformers #24395 (red team rt15).
 * Bytes per GPU at that moment; 0 where no such moment exceeds the run. */
static double qlora_load_bytes(const pp_model *m, const pp_strategy *s)
{
    if (s->ft.mode != PP_MODE_QLORA || s->zero != 3 || pp__fw_get(s->framework)->weights != PP_W_MASTER16) return 0;
    pp_strategy whole = *s;
    whole.tp = whole.pp = whole.cp = whole.ep = whole.dp = 1, whole.zero = 0, whole.offload = PP_OFFLOAD_NONE;
    double dense, expert, trainable, quantized;
    pp__stage_counts(m, &whole, 0, 0, m->layers - 1, &dense, &expert, &trainable, &quantized);
    return quantized * pp__qlora_bytes_per_param() + (dense + expert - quantized) * 2 + s->buf.cuda_context;
}

void pp_memory_estimate(const pp_model *m, const pp_cluster *c, const pp_strategy *s, pp_memory *out)
{
    int first = 0;
    out->nstages = s->pp;
    out->peak_bytes = out->live_peak_bytes = 0;
    out->peak_stage = 0;
    double host_per_gpu = 0, nvme_per_gpu = 0;
    for (int i = 0; i < s->pp; i++) {
        int n = s->stage_layers[i];
        pp_stage_mem *st = &out->stages[i];
        stage_estimate(m, c, s, i, first, first + n - 1, st);
        first += n;
        if (st->total_bytes > out->peak_bytes) {
            out->peak_bytes = st->total_bytes;
            out->peak_stage = i;
        }
        if (st->live_bytes > out->live_peak_bytes) out->live_peak_bytes = st->live_bytes;
        if (st->host_bytes > host_per_gpu) host_per_gpu = st->host_bytes;
        if (st->nvme_bytes > nvme_per_gpu) nvme_per_gpu = st->nvme_bytes;
    }
    out->load_bytes = qlora_load_bytes(m, s);
    if (out->load_bytes <= out->peak_bytes) out->load_bytes = 0;
    out->peak_bytes = fmax(out->peak_bytes, out->load_bytes);
    out->live_peak_bytes = fmax(out->live_peak_bytes, out->load_bytes);
    int per_node = pp_cluster_gpus(c) < c->gpus_per_node ? pp_cluster_gpus(c) : c->gpus_per_node;
    out->gpu_bytes = c->gpu.mem_bytes - s->buf.reserve;
    out->host_bytes_per_node = host_per_gpu * per_node;
    out->host_usable_bytes = c->host_mem_bytes * (1 - s->buf.host_reserve);
    out->host_fits = out->host_bytes_per_node <= out->host_usable_bytes;
    /* the node's GPUs swap to its drives (ZeRO-Infinity: nvme_path is local) */
    out->nvme_bytes_per_node = nvme_per_gpu * per_node;
    out->nvme_usable_bytes = c->nvme_bytes;
    out->nvme_fits = out->nvme_bytes_per_node <= out->nvme_usable_bytes;
    out->fits = out->peak_bytes <= out->gpu_bytes && out->host_fits && out->nvme_fits;
    out->live_fits = out->live_peak_bytes <= out->gpu_bytes && out->host_fits && out->nvme_fits;
}
