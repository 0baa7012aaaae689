/*
 * compute.c — time of one micro-batch through one block on one GPU
 * (docs/time.md). Three kinds of work:
 *   - GEMMs at the GPU's measured large-GEMM efficiency (MAMF, Bekman,
 *     ml-engineering "Maximum Achievable Matmul FLOPS"), lowered for small
 *     dimensions by d/(d + 64) (tile quantisation; an assumed curve, checked
 *     against EleutherAI cookbook shapes in docs/time.md);
 *   - fused attention (FlashAttention-2/cuDNN) at its own efficiency, causal
 *     (half the s^2 work), backward 2.5x forward (Dao 2023, Sec. 3);
 *   - elementwise kernels (norms, bias+dropout+residual, activation, rotary,
 *     softmax of materialised scores) bound by HBM bandwidth.
 */
#include <math.h>

#include "costmodel/costmodel.h"
#include "costmodel/framework.h"

/* Defaults for GPUs without an "efficiency" in topologies/gpus.json: the
 * fitted A100 and H100 runs reached 0.79 and 0.675 of their MAMF; their
 * mean, 0.73, times an assumed MAMF of 0.80 of peak. Attention: 0.25, below
 * FlashAttention-2's measured 0.30 on H100 (gpus.json) for a GPU whose
 * kernels nobody measured. Both are estimates with wide error bars. */
#define MATMUL_EFF_DEFAULT 0.58
#define ATTN_EFF_DEFAULT 0.25
#define HBM_EFF_DEFAULT 0.80    /* elementwise kernels' share of HBM bandwidth */
#define GEMM_DIM_HALF 64.0      /* d/(d+64): 128 -> 0.67, 1024 -> 0.94 */
/* Efficiency factor of a GEMM whose k or n is not a multiple of 8: H100,
 * fp16 bmm 4x4096xk . kx4096, k = 10922 (not a multiple of 8) 272.7 TFLOP/s
 * against 398.4 at k = 10944 (Bekman, ml-engineering, training/performance,
 * "a whooping 46% speedup") -> 0.685. */
#define GEMM_MISALIGNED 0.685
/* The same for the batched GEMMs of materialised attention, whose k or n is
 * the head width: fitted (docs/time.md, "Unaligned GEMMs") on the three BLOOM
 * prequel runs with head_dim 108 (h 13824, 128 heads), whose only change from
 * their 64-head neighbours is the head width; checked on the held-out h 14400
 * run (head_dim 150): +33% -> +19%. Far below the 0.685 measured for large
 * GEMMs: at a small unaligned head width more than alignment goes wrong. */
#define ATTN_BMM_MISALIGNED 0.10
/* FP8 GEMMs against BF16 on the same shapes, kernels alone (inputs quantised
 * beforehand): 1.90x on H200 and 1.92x on B300 with per-tensor current
 * scaling (Transformer Engine docs/examples/gemm_profiling, "Worked Example:
 * 5B Model", pre-quantized tables): 0.95 of twice the BF16 rate. The
 * quantisation itself is priced as HBM traffic (fp8_cast_bytes). */
#define FP8_GEMM_REL 0.95
/* Bytes per element Transformer Engine moves to quantise a GEMM operand
 * with current scaling: an amax pass (read 2), then the cast writing both
 * layouts Hopper's FP8 GEMMs need (read 2, write 1 + 1; cast_transpose). */
#define FP8_CAST_BYTES 6.0

double pp__matmul_eff(const pp_gpu *g) { return g->matmul_eff > 0 ? g->matmul_eff : MATMUL_EFF_DEFAULT; }
double pp__attn_eff(const pp_gpu *g) { return g->attn_eff > 0 ? g->attn_eff : ATTN_EFF_DEFAULT; }
/* Transformer Engine's DotProductAttention disables FlashAttention "to give
 * FusedAttention preference on Hopper+ for performance reasons" (TE
 * attention/dot_product_attention/utils.py, get_attention_backend): cuDNN's
 * kernel, at the GPU's speedup over the FlashAttention-2 class that
 * flash-attn and PyTorch's SDPA run (gpus.json, docs/time.md). */
double pp__attn_kernel_speedup(const pp_cluster *c, const pp_strategy *s)
{
    const pp__fw *f = pp__fw_get(s->framework);
    return f && f->te_attention && c->gpu.cudnn_attn_speedup > 0 ? c->gpu.cudnn_attn_speedup : 1;
}

double pp__hbm_bw_eff(const pp_gpu *g) { return g->hbm_bw * (g->hbm_eff > 0 ? g->hbm_eff : HBM_EFF_DEFAULT); }

typedef struct hw {
    double peak, mm, attn, hbm; /* FLOP/s, fractions, bytes/s */
} hw;

static hw hardware(const pp_cluster *c, pp_precision p)
{
    hw h;
    h.peak = c->gpu.peak_flops[p];
    h.mm = pp__matmul_eff(&c->gpu) * (p == PP_PREC_FP8 ? FP8_GEMM_REL : 1);
    h.attn = pp__attn_eff(&c->gpu);
    h.hbm = pp__hbm_bw_eff(&c->gpu);
    return h;
}

/* A GEMM (m x k) . (k x n): FLOPs at the shape-dependent efficiency. 16-bit
 * tensor-core GEMMs want k and n in multiples of 8 elements (NVIDIA "Matrix
 * Multiplication Background" guide, Sec. 2.2); off that grid cuBLAS >= 11
 * runs slower unaligned kernels, at `misaligned` of the rate. */
static double gemm_sf(const hw *h, double m, double k, double n, double misaligned)
{
    if (m <= 0 || k <= 0 || n <= 0) return 0;
    double d = m < k ? m : k;
    if (n < d) d = n;
    double eff = h->mm * d / (d + GEMM_DIM_HALF);
    if (fmod(k, 8) != 0 || fmod(n, 8) != 0) eff *= misaligned;
    return 2 * m * k * n / (h->peak * eff);
}

static double gemm_s(const hw *h, double m, double k, double n) { return gemm_sf(h, m, k, n, GEMM_MISALIGNED); }

/* An MLP of width f split t ways: its up (and gate) GEMM, its down GEMM. */
static double mlp_up_s(const pp_model *m, const hw *h, double tok, double f, double t)
{
    return gemm_s(h, tok, m->hidden, (m->gated_mlp ? 2 : 1) * f / t);
}

static double mlp_down_s(const pp_model *m, const hw *h, double tok, double f, double t)
{
    return gemm_s(h, tok, f / t, m->hidden);
}

static double mlp_gemms(const pp_model *m, const hw *h, double tok, double f, double t)
{
    return mlp_up_s(m, h, tok, f, t) + mlp_down_s(m, h, tok, f, t);
}

static double attn_proj_gemms(const pp_model *m, const hw *h, double tok, double t)
{
    double hd = pp__head_dim(m), a = m->heads, hid = m->hidden;
    if (m->mla.kv_lora_rank > 0) {
        const pp_mla *l = &m->mla;
        double qk = l->qk_nope_head_dim + l->qk_rope_head_dim, q;
        q = l->q_lora_rank > 0 ? gemm_s(h, tok, hid, l->q_lora_rank) + gemm_s(h, tok, l->q_lora_rank, a * qk / t)
                               : gemm_s(h, tok, hid, a * qk / t);
        double kv = gemm_s(h, tok, hid, l->kv_lora_rank + l->qk_rope_head_dim)
                  + gemm_s(h, tok, l->kv_lora_rank, a * (l->qk_nope_head_dim + l->v_head_dim) / t);
        return q + kv + gemm_s(h, tok, a * l->v_head_dim / t, hid);
    }
    double qkv = gemm_s(h, tok, hid, (a + 2.0 * m->kv_heads) * hd / t);
    return qkv + gemm_s(h, tok, a * hd / t, hid);
}

/* Forward time of the attention core: scores, softmax, values. */
double pp__attn_core_fwd_s(const pp_model *m, const pp_cluster *c, const pp_strategy *s)
{
    /* attention runs in bf16 under fp8 recipes (Transformer Engine) */
    hw h = hardware(c, s->precision == PP_PREC_FP8 ? PP_PREC_BF16 : s->precision);
    h.attn = fmin(1, h.attn * pp__attn_kernel_speedup(c, s));
    double tok = (double)s->micro_batch * s->seq / s->cp, t = s->tp, a = m->heads / t;
    double qk = m->mla.kv_lora_rank > 0 ? m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim : pp__head_dim(m);
    double v = m->mla.kv_lora_rank > 0 ? m->mla.v_head_dim : pp__head_dim(m);
    double flops = 2 * tok * s->seq * a * (qk + v); /* full s x s */
    if (s->attention == PP_ATTN_FLASH) return 0.5 * flops / (h.peak * h.attn); /* causal */
    /* materialised: two batched GEMMs and the softmax/dropout passes */
    double bmm = gemm_sf(&h, s->seq, qk, s->seq, ATTN_BMM_MISALIGNED) + gemm_sf(&h, s->seq, s->seq, v, ATTN_BMM_MISALIGNED);
    double scores = tok * s->seq * a; /* elements */
    double bytes = scores * (4 + (m->dropout > 0 ? 5 : 0));
    return bmm * a * tok / s->seq + bytes / h.hbm;
}

/* Bytes a token-element eager PyTorch modeling code moves beyond a fused
 * kernel's (fused: a norm or rotary reads and writes its tensor once, 4
 * bytes in 16 bits, backward twice that), counted op by op from the code
 * and, backward, from autograd's formulas (FunctionsManual.cpp: pow's
 * backward computes self.pow(1), then 2 *, then grad *; red team rt21):
 *   - Hugging Face's RMSNorm (LlamaRMSNorm and its copies: .to(float32),
 *     pow, mean, * rsqrt, .to(dtype), weight *): 36 bytes forward, 92
 *     backward (84 with the weight frozen); in fp32 training the casts
 *     are no-ops: 28 and 92 (76) against a fused 8 and 16. PR #48915,
 *     which fuses it, counts "six passes forward, about ten backward";
 *   - Hugging Face's rotary (apply_rotary_pos_emb: q * cos, rotate_half's
 *     neg and cat, * sin, add): 20 forward, 30 backward;
 *   - torchtitan's rotary (apply_rotary_emb: .float(), a complex product
 *     with freqs_cis, type_as): 20 forward, 20 backward, uncompiled;
 *   - transformers 5.x's grouped_mm experts' dispatch (integrations/moe.py
 *     grouped_mm_experts_forward: hidden_states[token_idx], [perm], the
 *     routing-weight product, [inv_perm], then index_add_): 18 bytes a
 *     routed row-element against a fused permute and unpermute's 8,
 *     backward twice the forward;
 *   - PyTorch's gated MLP (silu(gate) * up, two kernels): 10 bytes an ffn
 *     element forward and 18 backward against a fused SwiGLU's 6 and 12.
 * Liger's kernels (the HF Trainer's use_liger_kernel: RMSNorm, rotary and
 * SwiGLU by apply_liger_kernel_to_*'s defaults) and Inductor (parplan's
 * torchtitan files compile the model under fp8) fuse them again. */
#define HF_NORM_FWD 32.0
#define HF_NORM_BWD 84.0
#define HF_NORM_FROZEN 8.0 /* less backward: no weight gradient */
#define HF_ROPE_FWD 16.0
#define HF_ROPE_BWD 22.0
#define TT_ROPE_FWD 16.0
#define TT_ROPE_BWD 12.0
#define HF_PERMUTE_FWD 10.0
#define UNFUSED_GLU_FWD 4.0
#define UNFUSED_GLU_BWD 6.0

/* Elementwise bytes of one block's forward (bwd 0) or backward, per GPU:
 * fused kernels' traffic (the backward twice the forward), plus what the
 * framework's unfused PyTorch code moves beyond it. */
static double elementwise_bytes(const pp_model *m, const pp_strategy *s, int kind, double tok, int bwd)
{
    double h = m->hidden, t = s->tp, rep = s->sp ? t : 1, f = m->ffn, k = 0;
    double qkv = (m->heads + m->kv_heads) * (double)pp__head_dim(m) / t; /* q and k elements a token */
    double qk = m->qk_norm && !m->mla.kv_lora_rank ? qkv : 0;
    double b = m->norms_per_block * 4 * h / rep;            /* norms: read + write */
    b += 4 * qk;                                            /* QK norm on q and k's heads */
    b += 2 * (6 * h + (m->dropout > 0 ? h : 0)) / rep;      /* bias+dropout+residual */
    if (kind == PP_BLOCK_MOE) {
        double cf = m->capacity_factor > 0 ? m->capacity_factor : 1;
        k = m->topk * cf;
        f = (double)m->expert_ffn * (k + m->shared_experts);
        b += 2 * 2 * 2 * h * k / rep;                          /* permute + unpermute */
    }
    b += (m->gated_mlp ? 6 : 4) * f / t;                     /* activation */
    double rope = m->position == PP_POS_ROPE ? qkv : 0;
    b += 4 * rope;
    if (bwd) b *= 2;
    const pp__fw *fw = pp__fw_get(s->framework);
    int code = pp__eager_code(s), hf = code == PP_CODE_HF;
    if (code && fw && fw->unfused_glu && m->gated_mlp) b += (bwd ? UNFUSED_GLU_BWD : UNFUSED_GLU_FWD) * f / t;
    if (code == PP_CODE_TORCHTITAN) b += (bwd ? TT_ROPE_BWD : TT_ROPE_FWD) * rope;
    if (hf) b += (bwd ? HF_ROPE_BWD : HF_ROPE_FWD) * rope;
    if (pp__hf_modeling(s) && kind == PP_BLOCK_MOE && !(fw && fw->gshard_einsum))
        b += (bwd ? 2 : 1) * HF_PERMUTE_FWD * h * k / rep; /* not Liger's */
    b *= pp__act_bytes(s) / 2; /* the counts above are for 16-bit tensors */
    double norm = 0;           /* fp32 passes, not scaled: in fp32 training the two casts vanish */
    if (hf && m->norm == PP_NORM_RMSNORM) {
        double fp32 = s->precision == PP_PREC_FP32;
        double frozen = s->ft.mode != PP_MODE_FULL ? HF_NORM_FROZEN * (1 + fp32) : 0;
        double x = bwd ? HF_NORM_BWD - frozen - 8 * fp32 : HF_NORM_FWD - 12 * fp32;
        norm = x * (m->norms_per_block * h / rep + qk);
    }
    return (b + norm) * tok;
}

/* Elements an MLP's FP8 GEMMs quantise per token row: forward the up and
 * down inputs (h, f), backward their output gradients (up, h). */
static double mlp_cast(const pp_model *m, double h, double f, int bwd)
{
    return bwd ? (m->gated_mlp ? 2 : 1) * f + h : h + f;
}

/* FP8 quantisation of one block's GEMM operands, bytes per GPU: in the
 * forward the inputs (QKV and MLP inputs, sequence shards under SP; the
 * projection and down GEMMs' inputs), in the backward the output
 * gradients; a MoE block's routed rows as moe_gemms counts them (topk x
 * cf rows a token, etp/tp of them here, at f/etp). Weights are cast once
 * per step (Transformer Engine caches them across micro-batches). */
static double fp8_cast_bytes(const pp_model *m, const pp_strategy *s, int kind, double tok, int bwd)
{
    if (s->precision != PP_PREC_FP8) return 0;
    double h = m->hidden, t = s->tp, rep = s->sp ? t : 1, hd = pp__head_dim(m);
    double q = m->heads * hd, kv = m->kv_heads * hd;
    double el = bwd ? (q + 2 * kv) / t + h / rep : h / rep + q / t; /* attention */
    if (kind != PP_BLOCK_MOE) {
        el += mlp_cast(m, h / rep, m->ffn / t, bwd);
    } else {
        double cf = m->capacity_factor > 0 ? m->capacity_factor : 1, et = pp__etp(s), fe = m->expert_ffn;
        el += et / t * m->topk * cf * mlp_cast(m, h, fe / et, bwd);
        if (m->shared_experts) el += mlp_cast(m, h / rep, fe * m->shared_experts / t, bwd);
    }
    return FP8_CAST_BYTES * el * tok;
}

/* torchao's float8 linears (torchtitan's "quantize.linear.float8"; the
 * framework's fp8_hp_inputs, unless the run's linears are Transformer
 * Engine's) cache nothing across calls: float8_linear.py casts the weight in
 * every forward and again, transposed, in every backward. A tensorwise cast
 * is an amax pass (read 2) and the scaled cast (read 2, write 1), two passes
 * even compiled (the scale needs the whole tensor's amax first): 5 bytes a
 * weight element a cast. Bytes per GPU of one block, forward or backward. */
#define TORCHAO_WEIGHT_CAST_BYTES 5.0

static double torchao_weight_cast_bytes(const pp_model *m, const pp_strategy *s, int kind)
{
    const pp__fw *f = pp__fw_get(s->framework);
    if (s->precision != PP_PREC_FP8 || !f || !f->fp8_hp_inputs || s->buf.fp8_te_linears) return 0;
    double t = s->tp, w = pp__attn_params(m) / t;
    if (kind != PP_BLOCK_MOE)
        w += pp__mlp_params(m, m->ffn) / t;
    else
        w += pp__mlp_params(m, m->expert_ffn) * ((double)m->experts / s->ep / pp__etp(s) + (double)m->shared_experts / t);
    return TORCHAO_WEIGHT_CAST_BYTES * w;
}

/* The routed and shared experts' GEMMs at h's rate; the router at r's
 * (BF16 under fp8 recipes: Megatron's TopKRouter is outside TE). */
static double moe_gemms(const pp_model *m, const hw *h, const hw *r, const pp_strategy *s, double tok,
                        double *routed_s)
{
    double cf = m->capacity_factor > 0 ? m->capacity_factor : 1, t = s->tp, et = pp__etp(s);
    double local = (double)m->experts / s->ep;
    /* tokens reaching each local expert: tok * topk * ep / E on average;
     * folded experts (etp < tp) see their etp sequence shards of tok */
    double per_expert = tok * et / t * m->topk * cf / local;
    double routed = local * mlp_gemms(m, h, per_expert, m->expert_ffn, et);
    double shared = m->shared_experts ? mlp_gemms(m, h, tok, (double)m->expert_ffn * m->shared_experts, t) : 0;
    *routed_s = routed;
    return routed + shared + gemm_s(r, tok, m->hidden, m->experts);
}

/* Host time of one MoE block's routing and expert launches, forward and
 * backward, per micro-batch, that the GPU waits for, s. Megatron-Core's
 * token dispatchers copy the tokens per expert to the host and wait for
 * them (token_dispatcher.py, the cuda_sync_point before permutation), so
 * the CPU cannot run ahead there: what it launches after the sync, the
 * permutation, the all-to-all and a cuBLAS GEMM per local expert
 * (Transformer Engine's GroupedLinear, multi_stream_cublas_gemm), keeps the
 * GPU waiting for as long as launching takes beyond the GPU time of the
 * routed GEMMs: max(0, EXPERT_HOST_BLOCK_S + local x EXPERT_HOST_S - the
 * GEMMs' time), split 1:2 between forward and backward as the GEMMs are.
 * Only Megatron-Core's MoE (framework mcore_moe): DeepSpeed-MoE's GShard
 * einsums have static shapes, and transformers 5.x runs HF's experts as one
 * grouped_mm a projection with device-side offsets (integrations/moe.py): no
 * host sync, so the launches queue ahead. None when CUDA graphs replay the
 * experts (buf.expert_graphs). Both constants fitted (docs/time.md, "Expert
 * launches"). */
#define EXPERT_HOST_BLOCK_S 1.0e-3
#define EXPERT_HOST_S 0.4e-3

static void expert_host(const pp_model *m, const pp_strategy *s, double routed_fwd, double *fwd, double *bwd)
{
    const pp__fw *f = pp__fw_get(s->framework);
    *fwd = *bwd = 0;
    if (m->experts <= 0 || s->buf.expert_graphs || !f || !f->mcore_moe) return;
    double host = EXPERT_HOST_BLOCK_S + (double)m->experts / s->ep * EXPERT_HOST_S;
    *fwd = fmax(0, host / 3 - routed_fwd);
    *bwd = fmax(0, 2 * host / 3 - 2 * routed_fwd);
}

/* DeepSpeed-MoE's GShard dispatch and combine (sharded_moe.py MOELayer:
 * einsum("sec,sm->ecm") and einsum("sec,ecm->sm"); Tutel's gather kernels
 * replace them only with --use-tutel, which parplan's Megatron-DeepSpeed
 * files do not pass). The [S, E, C] mask makes each a dense GEMM of 2 S E C
 * M FLOPs, E C = S k cf token slots (the capacity at balance; dropless
 * runs pad every expert to the busiest, more): 2 S^2 k cf M, quadratic in
 * the rank's tokens S, which TP does not split (red team rt16 #3). Two run
 * forward; three backward (the input's gradient, and the combine's two:
 * its weights carry the gate's). Its gate builds the mask at HBM speed:
 * top-2 writes two fp32 [S, E, C] outer products ("se,sc->sec"), adds
 * them, takes the boolean dispatch mask and casts both to 16 bits: 34
 * bytes an element (top-1, one product and no add: 18), backward twice
 * (red team rt17). Times of one block into *fwd and *bwd; returns the
 * einsums' FLOPs. */
double pp__gshard_einsum(const pp_model *m, const pp_cluster *c, const pp_strategy *s, double *fwd, double *bwd)
{
    const pp__fw *f = pp__fw_get(s->framework);
    *fwd = *bwd = 0;
    if (!f || !f->gshard_einsum || m->experts <= 0) return 0;
    hw h = hardware(c, s->precision == PP_PREC_FP8 ? PP_PREC_BF16 : s->precision);
    double cf = m->capacity_factor > 0 ? m->capacity_factor : 1;
    double S = (double)s->micro_batch * s->seq / s->cp, slots = S * m->topk * cf;
    double one = gemm_s(&h, slots, S, m->hidden);
    double mask = (m->topk > 1 ? 34 : 18) * S * slots / h.hbm;
    *fwd = 2 * one + mask, *bwd = 3 * one + 2 * mask;
    return 5 * 2 * slots * S * m->hidden;
}

/* The forward GEMMs TE's TP overlap pairs its collectives with (userbuffers
 * overlap each all-gather with the GEMM that consumes it and each reduce-
 * scatter with the GEMM that produces it): QKV, output projection, MLP up
 * and down (a MoE block's shared experts'; its routed experts' tokens come
 * through the dispatcher). */
static void pair_gemms(const pp_model *m, const hw *h, const pp_strategy *s, int kind, double tok, double attn,
                       double out[4])
{
    double t = s->tp, a = m->heads, v = m->mla.kv_lora_rank > 0 ? m->mla.v_head_dim : pp__head_dim(m);
    double proj = gemm_s(h, tok, a * v / t, m->hidden);
    out[0] = attn - proj;
    out[1] = proj;
    double f = kind != PP_BLOCK_MOE ? m->ffn : (double)m->expert_ffn * m->shared_experts;
    out[2] = f > 0 ? mlp_up_s(m, h, tok, f, t) : 0;
    out[3] = f > 0 ? mlp_down_s(m, h, tok, f, t) : 0;
}

void pp__block_time(const pp_model *m, const pp_cluster *c, const pp_strategy *s, int kind,
                    pp__block_times *out)
{
    hw h = hardware(c, s->precision);
    double tok = (double)s->micro_batch * s->seq / s->cp, t = s->tp;
    double attn = attn_proj_gemms(m, &h, tok, t);
    hw r = hardware(c, s->precision == PP_PREC_FP8 ? PP_PREC_BF16 : s->precision);
    pair_gemms(m, &h, s, kind, tok, attn, out->pair_s);
    /* a dense block's MLP: its up and down GEMMs, as paired */
    double routed = 0; /* a MoE block's routed experts' forward GEMMs */
    double gemm = attn + (kind == PP_BLOCK_MOE ? moe_gemms(m, &h, &r, s, tok, &routed)
                                               : out->pair_s[2] + out->pair_s[3]);
    double core = pp__attn_core_fwd_s(m, c, s);
    double elem = elementwise_bytes(m, s, kind, tok, 0) / h.hbm, elem_b = elementwise_bytes(m, s, kind, tok, 1) / h.hbm;
    /* the down projection saves its input before it runs (autograd packs a
     * GEMM's inputs first); only the residual add (and its dropout, which
     * saves a mask: then nothing is skipped) follows it. MoE blocks end in
     * the weighted combine, which saves the experts' outputs. */
    out->tail_fwd_s = out->tail_flops = 0;
    if (kind != PP_BLOCK_MOE && m->dropout <= 0) {
        out->tail_fwd_s = out->pair_s[3]; /* the MLP's down GEMM */
        out->tail_flops = 2 * tok * m->ffn / t * m->hidden;
    }
    double wcast = torchao_weight_cast_bytes(m, s, kind);
    double cast_f = (fp8_cast_bytes(m, s, kind, tok, 0) + wcast) / h.hbm;
    double cast_b = (fp8_cast_bytes(m, s, kind, tok, 1) + wcast) / h.hbm;
    double ein_f = 0, ein_b = 0;
    if (kind == PP_BLOCK_MOE) pp__gshard_einsum(m, c, s, &ein_f, &ein_b);
    out->host_fwd_s = out->host_bwd_s = 0;
    if (kind == PP_BLOCK_MOE) expert_host(m, s, routed, &out->host_fwd_s, &out->host_bwd_s);
    out->fwd_s = gemm + core + elem + cast_f + ein_f + out->host_fwd_s;
    double core_bwd = s->attention == PP_ATTN_FLASH ? 2.5 * core : 2 * core;
    out->bwd_s = 2 * gemm + core_bwd + elem_b + cast_b + ein_b + out->host_bwd_s;
    out->core_fwd_s = core;
    out->gemm_fwd_s = gemm;
}

/* The forward work a selective recomputation of Megatron's modules (rc:
 * PP_RC_*, the attention core apart: pp__block_times.core_fwd_s) runs again
 * in one block's backward, s; its FLOPs in *flops. mlp: a dense block's MLP
 * GEMMs, activation and fp8 casts; mla_up_proj: MLA's two up-projection
 * GEMMs (the q projection itself without a q LoRA; rotary is elementwise
 * and small; under SP the all-gather of their inputs again, not priced:
 * the latents, kv_lora_rank + q_lora_rank wide, a few % of h, but h itself
 * for the q projection without a q LoRA); layernorm: the norms that are
 * modules of their own (MLA's input norm, MoE's pre-MLP norm), at HBM
 * speed; moe_act: the routed experts' activation at HBM speed. */
double pp__rc_fwd_s(const pp_model *m, const pp_cluster *c, const pp_strategy *s, int kind, unsigned rc, double *flops)
{
    hw h = hardware(c, s->precision);
    double tok = (double)s->micro_batch * s->seq / s->cp, t = s->tp, hid = m->hidden, rep = s->sp ? t : 1;
    double ab = pp__act_bytes(s), sec = 0, fl = 0;
    int mla = m->mla.kv_lora_rank > 0, moe = kind == PP_BLOCK_MOE;
    if ((rc & PP_RC_MLP) && !moe) {
        sec += mlp_gemms(m, &h, tok, m->ffn, t) + (m->gated_mlp ? 3 : 2) * ab * m->ffn / t * tok / h.hbm;
        if (s->precision == PP_PREC_FP8) sec += FP8_CAST_BYTES * mlp_cast(m, hid / rep, m->ffn / t, 0) * tok / h.hbm;
        fl += 2 * tok * (m->gated_mlp ? 3 : 2) * hid * m->ffn / t;
    }
    if ((rc & PP_RC_MLA_UP_PROJ) && mla) {
        const pp_mla *l = &m->mla;
        double a = m->heads, qk = l->qk_nope_head_dim + l->qk_rope_head_dim, kvo = l->qk_nope_head_dim + l->v_head_dim;
        /* without a q LoRA the checkpoint runs the whole q projection again */
        double qin = l->q_lora_rank > 0 ? l->q_lora_rank : hid;
        sec += gemm_s(&h, tok, qin, a * qk / t);
        fl += 2 * tok * qin * a * qk / t;
        sec += gemm_s(&h, tok, l->kv_lora_rank, a * kvo / t);
        fl += 2 * tok * l->kv_lora_rank * a * kvo / t;
    }
    if (rc & PP_RC_LAYERNORM) sec += ((mla ? 1 : 0) + (moe ? 1 : 0)) * 2 * ab * hid / rep * tok / h.hbm;
    if ((rc & PP_RC_MOE_ACT) && moe) {
        double cf = m->capacity_factor > 0 ? m->capacity_factor : 1;
        sec += (m->gated_mlp ? 3 : 2) * ab * m->expert_ffn * m->topk * cf / t * tok / h.hbm;
    }
    *flops = fl;
    return sec;
}

/* LM head + loss (last stage) and embedding (first stage), fwd + bwd. */
double pp__head_time(const pp_model *m, const pp_cluster *c, const pp_strategy *s)
{
    /* the output layer stays a BF16 GEMM under fp8 (framework fp8_bf16_head) */
    const pp__fw *f = pp__fw_get(s->framework);
    int bf16_head = s->precision == PP_PREC_FP8 && f && f->fp8_bf16_head;
    hw h = hardware(c, bf16_head ? PP_PREC_BF16 : s->precision);
    double tok = (double)s->micro_batch * s->seq / s->cp, vt = pp__vocab(m, s) / s->tp;
    double gemm = gemm_s(&h, tok, m->hidden, vt);
    double ce = tok * vt * (16 + 10); /* fp32 softmax cross entropy, fwd + bwd */
    return 3 * gemm + ce / h.hbm;
}

double pp__embed_time(const pp_model *m, const pp_cluster *c, const pp_strategy *s)
{
    hw h = hardware(c, s->precision);
    double tok = (double)s->micro_batch * s->seq / s->cp;
    return 3 * 2 * tok * m->hidden / h.hbm; /* gather fwd, scatter-add bwd */
}
