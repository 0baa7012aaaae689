/*
 * finetune.c — what fine-tuning changes (docs/finetune.md): which weights
 * train, LoRA adapter sizes (Hu et al. 2021: r (d_in + d_out) per adapted
 * matrix), QLoRA storage (Dettmers et al. 2023, arXiv 2305.14314, Sec. 3:
 * NF4 4 bits + double-quantised block constants 8/64 + 32/(64*256) bits),
 * and which blocks the backward pass must reach.
 */
#include "costmodel/costmodel.h"

/* QLoRA bytes per quantised parameter: (4 + 8/64 + 32/(64*256)) / 8. */
#define QLORA_BYTES_PER_PARAM ((4.0 + 8.0 / 64 + 32.0 / (64 * 256)) / 8)

double pp__qlora_bytes_per_param(void) { return QLORA_BYTES_PER_PARAM; }

int pp__base_frozen(const pp_strategy *s, int block)
{
    if (s->ft.mode != PP_MODE_FULL) return 1;
    return block < s->ft.freeze_layers;
}

int pp__embedding_frozen(const pp_strategy *s)
{
    return s->ft.mode != PP_MODE_FULL || s->ft.freeze_embeddings;
}

int pp__head_frozen(const pp_model *m, const pp_strategy *s)
{
    if (s->ft.mode != PP_MODE_FULL) return 1;
    return m->tied_embeddings && s->ft.freeze_embeddings;
}

/* The backward pass reaches a block when something at or before it trains. */
int pp__block_needs_backward(const pp_strategy *s, int block)
{
    if (s->ft.mode != PP_MODE_FULL) return 1; /* adapters in every block */
    if (!pp__embedding_frozen(s)) return 1;
    return block >= s->ft.freeze_layers;
}

/* Widths (d_in, d_out) of a block's linear maps, unsplit. */
static void dims(const pp_model *m, int which, double *din, double *dout)
{
    double h = m->hidden, hd = pp__head_dim(m), a = m->heads, kv = m->kv_heads;
    if (m->mla.kv_lora_rank > 0) {
        hd = m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim;
        kv = a;
    }
    switch (which) {
    case PP_LORA_Q: *din = h, *dout = a * hd; break;
    case PP_LORA_K:
    case PP_LORA_V: *din = h, *dout = kv * hd; break;
    case PP_LORA_O: *din = a * hd, *dout = h; break;
    case PP_LORA_GATE:
    case PP_LORA_UP: *din = h, *dout = m->ffn; break;
    default: *din = m->ffn, *dout = h; break; /* down */
    }
}

/* Whether a block of a kind has the adapter bit, with its widths; an
 * expert MLP's adapter is the expert's (moe = 1). */
static int adapter_of(const pp_model *m, unsigned targets, int bit, int kind, double *din, double *dout, int *moe)
{
    if (!(targets & (unsigned)bit) || (bit == PP_LORA_GATE && !m->gated_mlp)) return 0;
    dims(m, bit, din, dout);
    *moe = bit >= PP_LORA_GATE && kind == PP_BLOCK_MOE;
    if (*moe) {
        *din = bit == PP_LORA_DOWN ? m->expert_ffn : m->hidden;
        *dout = bit == PP_LORA_DOWN ? m->hidden : m->expert_ffn;
    }
    return 1;
}

/* Adapter parameters of one block (MoE: one adapter per expert MLP). */
double pp__lora_block_params(const pp_model *m, const pp_strategy *s, int kind, double *act_per_token)
{
    const pp_finetune *f = &s->ft;
    double n = 0, act = 0, din, dout;
    int moe;
    *act_per_token = 0;
    if (f->mode == PP_MODE_FULL) return 0;
    for (int bit = PP_LORA_Q; bit <= PP_LORA_DOWN; bit <<= 1) {
        if (!adapter_of(m, f->lora_targets, bit, kind, &din, &dout, &moe)) continue;
        n += (moe ? m->experts + m->shared_experts : 1) * f->lora_rank * (din + dout);
        /* stored per token: the r-wide intermediate (16-bit), and with
         * dropout PEFT's dropped copy of the input plus its mask */
        act += 2.0 * f->lora_rank + (f->lora_dropout > 0 ? 3.0 * din : 0);
    }
    *act_per_token = act;
    return n;
}

/* HBM bytes per token of a block's adapters outside their GEMMs' FLOPs:
 * PEFT's lora/layer.py Linear.forward reads the input for lora_A, writes
 * lora_B's output, scales it and adds it to the base's (2 d_in + 12 d_out
 * with 16-bit adapters); the backward scales the gradient, reads the
 * input again for lora_A's weight gradient and adds the adapter's input
 * gradient into the input's (10 d_in + 8 d_out). fp32 adapters under
 * autocast cast the input to fp32 and back (+12 d_in forward, +12 d_in
 * backward: 36 d_in + 20 d_out in all; red team rt7's count from the code
 * path). fp32 training moves 4-byte elements: twice the 16-bit counts. */
void pp__lora_block_bytes(const pp_model *m, const pp_strategy *s, int kind, int fp32_adapters, double *fwd, double *bwd)
{
    const pp_finetune *f = &s->ft;
    *fwd = *bwd = 0;
    if (f->mode == PP_MODE_FULL) return;
    double x = s->precision == PP_PREC_FP32 ? 2 : 1, din, dout;
    int moe;
    for (int bit = PP_LORA_Q; bit <= PP_LORA_DOWN; bit <<= 1) {
        if (!adapter_of(m, f->lora_targets, bit, kind, &din, &dout, &moe)) continue;
        double copies = moe && m->topk > 0 ? m->topk + m->shared_experts : 1; /* the experts a token visits */
        double cast = fp32_adapters ? 12 * din : 0;
        *fwd += copies * x * (2 * din + 12 * dout + cast);
        *bwd += copies * x * (10 * din + 8 * dout + cast);
    }
}

double pp__lora_head_params(const pp_model *m, const pp_strategy *s)
{
    if (s->ft.mode == PP_MODE_FULL || !(s->ft.lora_targets & PP_LORA_LM_HEAD)) return 0;
    return (double)s->ft.lora_rank * ((double)m->hidden + m->vocab);
}

/* Linear weights of a block that QLoRA stores in NF4 (norms stay 16-bit). */
double pp__quantizable_block_params(const pp_model *m, int kind)
{
    double lin = pp__attn_params(m);
    if (kind == PP_BLOCK_MOE)
        lin += (double)(m->experts + m->shared_experts) * pp__mlp_params(m, m->expert_ffn);
    else
        lin += pp__mlp_params(m, m->ffn);
    return lin;
}

void pp_trainable_params(const pp_model *m, const pp_strategy *s, double *total, double *trainable)
{
    pp_param_counts pc;
    pp_model_param_counts(m, &pc);
    *total = pc.total;
    double t = 0, act;
    if (s->ft.mode == PP_MODE_FULL) {
        t = pc.total;
        if (s->ft.freeze_embeddings) t -= pc.embedding + (m->tied_embeddings ? 0 : 0);
        for (int i = 0; i < s->ft.freeze_layers && i < m->layers; i++)
            t -= m->block_kind[i] == PP_BLOCK_MOE ? pc.per_moe_block : pc.per_dense_block;
    } else {
        for (int i = 0; i < m->layers; i++) t += pp__lora_block_params(m, s, m->block_kind[i], &act);
        t += pp__lora_head_params(m, s);
    }
    *trainable = t;
}
