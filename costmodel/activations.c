/*
 * activations.c — bytes each transformer block stores for backward, per
 * micro-batch. Follows Korthikanti et al. 2022 (arXiv 2205.05198) Sec. 4.1
 * term by term, generalised to GQA, gated MLPs, MoE, dropout off, flash
 * attention and context parallelism. 16-bit activations (2 bytes; 4 in
 * pure fp32 training), 1-byte dropout masks, fp32 softmax statistics.
 */
#include <math.h>

#include "costmodel/costmodel.h"
#include "costmodel/framework.h"

typedef struct act_dims {
    double tok;   /* tokens of one micro-batch on this rank: b * s / cp */
    double h, t;  /* hidden, tensor-parallel degree */
    double rep;   /* divisor of "replicated" terms: t with SP, else 1 */
    double gin_rep; /* divisor of the column-parallel GEMMs' saved inputs: rep, or 1
                     where TP keeps them gathered (framework tp_gathered_inputs) */
    double cores; /* materialised score elements: heads * (s/cp) * s * b */
    int drop;     /* dropout present */
    double ab;    /* bytes of an activation element: 4 in fp32 training, else 2 */
    double gin;   /* bytes of a saved GEMM input: 1 under fp8, else ab */
    int proj_orig; /* the output projection keeps its 16-bit input under fp8 */
    int flash_ckpt; /* core_attn recompute checkpoints fused attention too */
    double glu;   /* bytes an ffn unit the gated MLP keeps beside its GEMMs' inputs: the
                     SiLU's output where PyTorch code runs it unfused, else 0 */
    double norm;  /* bytes a hidden unit each norm keeps: its 16-bit input, or (eager
                     RMSNorm) an fp32 copy of it and the normalised 16-bit tensor */
    unsigned keep; /* KEEP_*: the GEMM inputs saved for the backward */
    double qkv_copies, mlp_copies; /* copies of the QKV and MLP inputs kept (fp32 adapters: one each) */
    double etp;    /* the experts' TP degree */
    int gshard;    /* DeepSpeed-MoE's einsum dispatch (framework gshard_einsum) */
} act_dims;

/* A linear's input is saved for its weight's gradient only: PyTorch's
 * autograd saves nothing that only the gradient of an input that needs none
 * would use (tools/autograd/gen_variable_type.py, guard_for). Under LoRA
 * and QLoRA the base weights are frozen, so an input is kept only when an
 * adapter's lora_A reads it (without adapter dropout: with it lora_A keeps
 * the dropped copy, finetune.c). FlashAttention keeps the projection's
 * input (its output O) for its own backward. */
enum { KEEP_QKV_IN = 1, KEEP_O_IN = 2, KEEP_MLP_IN = 4, KEEP_DOWN_IN = 8, KEEP_ALL = 15 };

static unsigned kept_inputs(const pp_strategy *s)
{
    const pp_finetune *f = &s->ft;
    if (f->mode == PP_MODE_FULL) return KEEP_ALL;
    unsigned t = f->lora_dropout > 0 ? 0 : f->lora_targets, k = 0;
    if (t & (PP_LORA_Q | PP_LORA_K | PP_LORA_V)) k |= KEEP_QKV_IN;
    if (t & PP_LORA_O) k |= KEEP_O_IN;
    if (t & (PP_LORA_GATE | PP_LORA_UP)) k |= KEEP_MLP_IN;
    if (t & PP_LORA_DOWN) k |= KEEP_DOWN_IN;
    return k;
}

double pp__act_bytes(const pp_strategy *s) { return s->precision == PP_PREC_FP32 ? 4.0 : 2.0; }

/* fp32 adapters under autocast: the HF Trainer's AMP (pytorch). FSDP2's
 * mixed precision computes them in bf16 (Accelerate's param_dtype: review);
 * DeepSpeed casts the module to 16 bits. */
int pp__fp32_adapters(const pp_strategy *s)
{
    return s->ft.mode == PP_MODE_LORA && s->precision != PP_PREC_FP32 && s->framework == PP_FW_PYTORCH;
}

/* PEFT's fp32 adapters cast their input to fp32 (lora/layer.py
 * Linear.forward: _cast_input_dtype) and autocast casts it back to 16 bits
 * for lora_A, a new tensor each adapter saves: q, k and v keep three copies
 * of the normed input, gate and up two. 16-bit adapters read the input
 * itself: one copy. */
static void adapter_copies(const pp_model *m, const pp_strategy *s, act_dims *d)
{
    d->qkv_copies = d->mlp_copies = 1;
    if (!pp__fp32_adapters(s) || s->ft.lora_dropout > 0) return;
    unsigned t = s->ft.lora_targets;
    if (!m->gated_mlp) t &= ~(unsigned)(PP_LORA_K | PP_LORA_V); /* fused QKV: one adapter on query_key_value */
    int qkv = __builtin_popcount(t & (PP_LORA_Q | PP_LORA_K | PP_LORA_V)), mlp = __builtin_popcount(t & (PP_LORA_GATE | PP_LORA_UP));
    if (qkv > 1) d->qkv_copies = qkv;
    if (mlp > 1) d->mlp_copies = mlp;
}

static act_dims dims(const pp_model *m, const pp_strategy *s)
{
    act_dims d;
    double sl = (double)s->seq / s->cp;
    d.tok = sl * s->micro_batch;
    d.h = m->hidden;
    d.t = s->tp;
    d.rep = s->sp ? s->tp : 1;
    const pp__fw *f = pp__fw_get(s->framework);
    d.gin_rep = f && f->tp_gathered_inputs ? 1 : d.rep;
    d.cores = (double)m->heads * sl * s->seq * s->micro_batch;
    d.drop = m->dropout > 0;
    /* Transformer Engine keeps the FP8 cast of each GEMM input for the
     * weight gradient, not the 16-bit tensor */
    d.ab = pp__act_bytes(s);
    d.gin = s->precision == PP_PREC_FP8 && !(f && f->fp8_hp_inputs && !s->buf.fp8_te_linears) ? 1 : d.ab;
    /* ... except Megatron's attention output projection under the current-
     * scaling recipe its files launch: it keeps the 16-bit input, which
     * fused attention saves anyway (attention.py, multi_latent_attention.py:
     * set_save_original_input with fp8_recipe != delayed, TE >= 2.6) */
    d.proj_orig = s->precision == PP_PREC_FP8 && f && f->fp8_proj_original;
    d.flash_ckpt = f && f->flash_core_checkpoint;
    /* HF Transformers' LlamaMLP, torchtitan's FeedForward and Megatron-
     * DeepSpeed's swiglu compute silu(gate) * up in PyTorch: SiLU keeps its
     * input, the product both operands and the down GEMM the product, four
     * f-wide tensors; Megatron-Core's bias_swiglu keeps only its input */
    d.glu = m->gated_mlp && f && f->unfused_glu && !pp__liger(s) ? d.ab : 0;
    /* LlamaRMSNorm (HF modeling_llama.py): hidden_states.to(float32), pow
     * and the rsqrt product keep the fp32 copy, weight * x.to(input dtype)
     * the normalised tensor: in the activation dtype, or fp32 under AMP,
     * whose residual stream is fp32 (the embedding's fp32 weights) */
    int amp = f && f->weights == PP_W_AMP && s->ft.mode == PP_MODE_FULL; /* LoRA's base is 16-bit */
    /* HF's modeling code, FSDP2 under Accelerate too; Liger's RMSNorm keeps its input */
    int hf = m->norm == PP_NORM_RMSNORM && pp__eager_code(s) == PP_CODE_HF;
    d.norm = hf ? 4 + (amp ? 4 : d.ab) : d.ab;
    /* a frozen norm's weight * x keeps no x: the fp32 copy (for pow) alone */
    if (s->ft.mode != PP_MODE_FULL && hf) d.norm = 4;
    d.keep = kept_inputs(s);
    adapter_copies(m, s, &d);
    d.etp = pp__etp(s);
    d.gshard = f && f->gshard_einsum;
    return d;
}

/* Attention block minus its norm: QKV input, Q, K, V, projection input,
 * dropout mask, and the core (scores) unless recomputed. rc: the modules a
 * selective recomputation redoes (PP_RC_*): the core; MLA's up-projected
 * Q, K, V (mla_up_proj); MLA's input norm output, a module of its own in
 * Megatron's MLA layer spec where a standard block fuses it into the QKV
 * GEMM (layernorm; gpt_layer_specs.py). */
static double attn_act(const pp_model *m, const act_dims *d, unsigned rc, int flash)
{
    double q, k, v, o, latent = 0, a = m->heads;
    if (m->mla.kv_lora_rank > 0) {
        q = k = a * (m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim);
        v = o = a * m->mla.v_head_dim;
        /* MLA's down-projected latents are not TP-split in Megatron */
        latent = d->ab * d->tok * (m->mla.q_lora_rank + m->mla.kv_lora_rank + m->mla.qk_rope_head_dim);
    } else {
        double hd = pp__head_dim(m);
        q = o = a * hd;
        k = v = m->kv_heads * hd;
    }
    int mla = m->mla.kv_lora_rank > 0;
    double repl = (d->drop ? d->tok * d->h : 0) + latent; /* mask */
    double qkv_in = d->keep & KEEP_QKV_IN ? d->qkv_copies * d->gin * d->tok * d->h / d->gin_rep : 0; /* QKV input */
    /* MLA: the q and kv down (or q) projections share the normed input;
     * under fp8 each keeps its own FP8 cast of it */
    if (mla && d->gin < d->ab) qkv_in *= 2;
    if (mla && (rc & PP_RC_LAYERNORM)) qkv_in = 0;
    /* projection input: flash attention keeps its 16-bit output O, which is
     * that input; under fp8 Transformer Engine keeps its 1-byte cast too,
     * unless the projection keeps the 16-bit input itself (proj_orig) */
    double oin = d->proj_orig ? d->ab : flash ? d->ab + (d->gin < d->ab ? d->gin : 0) : d->gin;
    if (!(d->keep & KEEP_O_IN)) oin = flash ? d->ab : 0; /* a frozen projection: only what attention keeps */
    double qkv = mla && (rc & PP_RC_MLA_UP_PROJ) ? 0 : d->ab * d->tok * (q + k + v);
    double split = qkv + oin * d->tok * o; /* Q, K, V, projection input */
    /* QK norm (Qwen3's per-head RMSNorm on q and k, Megatron's
     * --qk-layernorm): each norm keeps its input, the pre-norm Q and K,
     * which nothing else keeps; MLA's latent norms fuse into the up
     * projections (TE LayerNormLinear keeps its input beside the normed
     * copy the GEMM keeps): the two latents once more (red team rt10) */
    if (m->qk_norm && !mla) split += d->norm * d->tok * (q + k);
    if (m->qk_norm && mla && !(rc & PP_RC_MLA_UP_PROJ))
        repl += d->ab * d->tok * (m->mla.q_lora_rank + m->mla.kv_lora_rank);
    double core = 0;
    if ((rc & PP_RC_CORE_ATTN) && (!flash || d->flash_ckpt))
        core = 0; /* recomputed from Q, K, V, which the checkpoint keeps (tensor_parallel.checkpoint) */
    else if (flash)
        core = 4 * d->tok * a; /* fp32 log-sum-exp per head; O is the projection input */
    else
        core = d->ab * d->cores + (d->drop ? (1 + d->ab) * d->cores : 0); /* softmax; mask + dropout out */
    return repl / d->rep + qkv_in + (split + core) / d->t;
}

/* MLP internals: the up (and gate) outputs in 16 bits and the activation's
 * output, which is the down GEMM's input: 4 s b f plain, 6 s b f gated in
 * 16-bit training (Korthikanti), one byte less per f under fp8; 8 s b f
 * gated where PyTorch code keeps the SiLU's output too (glu). */
static double mlp_inner(const pp_model *m, const act_dims *d, double tok, double f)
{
    double down_in = d->keep & KEEP_DOWN_IN ? d->gin : 0; /* the activation's output */
    return ((m->gated_mlp ? 2.0 : 1.0) * d->ab + d->glu + down_in) * tok * f;
}

/* The MLP's saved tensors. rc (PP_RC_*): mlp recomputes a dense block's
 * MLP from its input, the residual stream the norm already keeps; moe_act
 * the routed experts' activation, whose output (the down GEMM's input) is
 * dropped; layernorm MoE's pre-MLP norm (a module of its own there), whose
 * output is the router's and the shared experts' input. */
static double mlp_act(const pp_model *m, const act_dims *d, int kind, unsigned rc)
{
    double mask = d->drop ? d->tok * d->h : 0;
    if (kind != PP_BLOCK_MOE)
        /* the dropout mask belongs to the bias-dropout-add after the MLP
         * (mlp_bda), outside the checkpoint (transformer_layer.py) */
        return mask / d->rep + (rc & PP_RC_MLP ? 0 : (d->keep & KEEP_MLP_IN ? d->mlp_copies * d->gin * d->tok * d->h / d->gin_rep : 0) +
                                                         mlp_inner(m, d, d->tok, m->ffn) / d->t);
    double cf = m->capacity_factor > 0 ? m->capacity_factor : 1.0;
    double routed = m->topk * cf; /* token copies per token after dispatch */
    double router = 4 * d->tok * m->experts; /* fp32 router logits */
    double normed = rc & PP_RC_LAYERNORM ? 0 : d->ab * d->tok * d->h;
    /* the permuted copies a rank's experts take: under expert TP the
     * dispatcher gathers the routed tokens of the etp sequence shards
     * (alltoall: all-gather over etp; flex: every shard sent), etp x its own */
    double gathered = fmin(d->etp, d->rep);
    double inputs = normed + d->gin * d->tok * d->h * routed * gathered; /* router input + permuted copies */
    double inner = mlp_inner(m, d, d->tok * (routed + m->shared_experts), m->expert_ffn);
    if (rc & PP_RC_MOE_ACT) inner -= d->gin * d->tok * routed * m->expert_ffn;
    /* DeepSpeed-MoE's einsums save the dispatch mask and the combine
     * weights, [S, E, C] in the activation dtype, on every TP rank
     * (pp__gshard_einsum), and its gate's "se,sc->sec" products their fp32
     * [S, C] locations, one a routed choice (review8) */
    double gshard = d->gshard ? 2 * d->ab * d->tok * d->tok * routed +
                                    (m->topk > 1 ? 2 : 1) * 4 * d->tok * d->tok * routed / m->experts : 0;
    return (inputs + mask + router) / d->rep + inner / d->t + gshard;
}

/* The module groups of m a Megatron selective recompute can redo, into
 * g[0..2]: mlp where it has dense blocks, mla_up_proj with MLA, moe_act
 * and layernorm with experts; returns how many. */
int pp__rc_module_groups(const pp_model *m, unsigned g[3])
{
    int n = 0, dense = 0;
    for (int i = 0; i < m->layers && !dense; i++) dense = m->block_kind[i] != PP_BLOCK_MOE;
    if (dense) g[n++] = PP_RC_MLP;
    if (m->mla.kv_lora_rank > 0) g[n++] = PP_RC_MLA_UP_PROJ;
    if (m->experts) g[n++] = PP_RC_MOE_ACT | PP_RC_LAYERNORM;
    return n;
}

unsigned pp__rc_modules(const pp_strategy *s)
{
    if (s->recompute != PP_RECOMPUTE_SELECTIVE) return 0;
    return s->recompute_modules ? s->recompute_modules : PP_RC_CORE_ATTN;
}

double pp__cp_kv_bytes(const pp_model *m, const pp_strategy *s)
{
    double tok = (double)s->micro_batch * s->seq / s->cp;
    return 2 * tok * pp__act_bytes(s) * m->kv_heads * pp__head_dim(m) / s->tp;
}

/* torchtitan's per-op selective checkpointing (activation_checkpoint.py:
 * saves the outputs of mm, SDPA and the c10d reduce-scatter, except every
 * second mm of the block): a Llama block runs wq, wk, wv, wo, w1, w3, w2 in
 * that order, so it keeps the block input, wq's and wv's outputs, SDPA's
 * output and fp32 log-sum-exp, w1's output and w2's local output (before
 * the reduce-scatter under TP), and under TP the two reduce-scatter
 * outputs; the rest is recomputed (rule fw-recompute: dense gated blocks). */
static double op_sac_bytes(const pp_model *m, const act_dims *d, int flash)
{
    double hd = pp__head_dim(m), q = m->heads * hd, v = m->kv_heads * hd;
    double rs = d->t > 1 ? 2 * d->ab * d->tok * d->h / d->rep : 0;
    /* SDPA's output and log-sum-exp: a fused kernel's; the math path's bmm
     * and softmax are not on the list and run again */
    double sdpa = flash ? d->ab * d->tok * q / d->t + 4 * d->tok * m->heads / d->t : 0;
    return d->ab * d->tok * d->h / d->rep + d->ab * d->tok * (q + v + m->ffn) / d->t + sdpa + d->ab * d->tok * d->h + rs;
}

/* Whether torchtitan's per-op policy keeps the attention's output: a fused
 * kernel on its save list. */
int pp__op_sac_keeps_attn(const pp_strategy *s)
{
    return s->attention == PP_ATTN_FLASH && !s->buf.sac_attn_recomputed;
}

/* The GEMM work torchtitan's per-op policy recomputes in a Llama block: wk,
 * wo and w3 (the second, fourth and sixth mm): weights per token it
 * multiplies again (*redo) and of all the block's GEMMs (*all). */
void pp__op_sac_gemms(const pp_model *m, double *redo, double *all)
{
    double hd = pp__head_dim(m), h = m->hidden, q = m->heads * hd, v = m->kv_heads * hd, f = m->ffn;
    *redo = h * v + q * h + h * f;
    *all = h * q + 2 * h * v + q * h + 3 * h * f;
}

double pp__block_act_bytes(const pp_model *m, const pp_strategy *s, int kind, pp_recompute r)
{
    act_dims d = dims(m, s);
    if (r == PP_RECOMPUTE_FULL) return d.ab * d.tok * d.h / d.rep; /* the block input only */
    const pp__fw *f = pp__fw_get(s->framework);
    if (r == PP_RECOMPUTE_SELECTIVE && f && f->selective_ops) return op_sac_bytes(m, &d, pp__op_sac_keeps_attn(s));
    double norms = m->norms_per_block * d.norm * d.tok * d.h / d.rep; /* what the norms keep */
    unsigned rc = r == PP_RECOMPUTE_SELECTIVE ? pp__rc_modules(s) : 0;
    return norms + attn_act(m, &d, rc, s->attention == PP_ATTN_FLASH) + mlp_act(m, &d, kind, rc);
}
