/*
 * params.c — exact parameter counts and forward FLOPs per token, from the
 * architecture alone. Matmul FLOPs are 2 per multiply-accumulate; attention
 * scores are counted over the full s x s (Narayanan et al. 2021, Eq. 3).
 */
#include <math.h>
#include <stdio.h>

#include "costmodel/costmodel.h"

int pp__head_dim(const pp_model *m)
{
    if (m->head_dim > 0) return m->head_dim;
    return m->heads > 0 ? m->hidden / m->heads : 0;
}

static int is_mla(const pp_model *m) { return m->mla.kv_lora_rank > 0; }

double pp__norm_params(const pp_model *m)
{
    return (m->norm == PP_NORM_LAYERNORM ? 2.0 : 1.0) * m->hidden;
}

/* MLA (DeepSeek-V3 report, Sec. 2.1.1): low-rank q and kv projections. */
static double mla_params(const pp_model *m)
{
    const pp_mla *a = &m->mla;
    double h = m->hidden, nh = m->heads;
    double qk = a->qk_nope_head_dim + a->qk_rope_head_dim;
    double q = a->q_lora_rank > 0
        ? h * a->q_lora_rank + a->q_lora_rank + (double)a->q_lora_rank * nh * qk
        : h * nh * qk;
    double kv = h * (a->kv_lora_rank + a->qk_rope_head_dim) + a->kv_lora_rank
              + (double)a->kv_lora_rank * nh * (a->qk_nope_head_dim + a->v_head_dim);
    double o = nh * a->v_head_dim * h;
    return q + kv + o;
}

double pp__attn_params(const pp_model *m)
{
    if (is_mla(m)) return mla_params(m);
    double h = m->hidden, hd = pp__head_dim(m);
    double q = h * m->heads * hd, kv = 2.0 * h * m->kv_heads * hd;
    double o = m->heads * hd * h;
    double b = 0;
    if (m->qkv_bias) b += m->heads * hd + 2.0 * m->kv_heads * hd;
    if (m->out_bias) b += h;
    return q + kv + o + b;
}

double pp__mlp_params(const pp_model *m, int ffn)
{
    double h = m->hidden, f = ffn;
    double w = (m->gated_mlp ? 3.0 : 2.0) * h * f;
    double b = m->mlp_bias ? (m->gated_mlp ? 2.0 : 1.0) * f + h : 0.0;
    return w + b;
}

void pp_model_param_counts(const pp_model *m, pp_param_counts *o)
{
    double h = m->hidden, norm = pp__norm_params(m);
    double attn = pp__attn_params(m);
    double block_norms = m->norms_per_block * norm;
    double dense_mlp = pp__mlp_params(m, m->ffn);
    double expert = m->experts > 0 ? pp__mlp_params(m, m->expert_ffn) : 0.0;
    double router = m->experts > 0 ? h * m->experts : 0.0;
    double moe_all = router + (m->experts + m->shared_experts) * expert;
    double moe_act = router + (m->topk + m->shared_experts) * expert;

    *o = (pp_param_counts){0};
    o->embedding = (double)m->vocab * h;
    if (m->position == PP_POS_LEARNED) o->embedding += (double)m->max_positions * h;
    if (m->embed_norm) o->embedding += norm;
    o->lm_head = m->tied_embeddings ? 0.0 : (double)m->vocab * h + (m->lm_head_bias ? m->vocab : 0);
    o->final_norm = norm;
    o->per_dense_block = attn + dense_mlp + block_norms;
    o->per_moe_block = attn + moe_all + block_norms;
    o->per_moe_block_active = attn + moe_act + block_norms;

    double active_blocks = 0;
    for (int i = 0; i < m->layers; i++) {
        o->attention += attn;
        o->norms += block_norms;
        if (m->block_kind[i] == PP_BLOCK_MOE) {
            o->experts += moe_all;
            active_blocks += o->per_moe_block_active;
        } else {
            o->mlp += dense_mlp;
            active_blocks += o->per_dense_block;
        }
    }
    o->total = o->embedding + o->lm_head + o->final_norm + o->attention + o->mlp
             + o->experts + o->norms;
    o->active = o->embedding + o->lm_head + o->final_norm + active_blocks;
}

/* Parameter tensors of one block as Megatron's GPT builds it: each norm's
 * weight (and bias for LayerNorm), fused QKV, output projection, the MLP's
 * two linear maps (gate and up fused), their biases; an MoE block has each
 * expert's two and the router's. */
int pp__block_tensors(const pp_model *m, int kind)
{
    int t = m->norms_per_block * (m->norm == PP_NORM_LAYERNORM ? 2 : 1);
    t += 1 + m->qkv_bias + 1 + m->out_bias;
    int mlp = 2 * (1 + m->mlp_bias);
    return t + (kind == PP_BLOCK_MOE ? (m->experts + m->shared_experts) * mlp + 1 : mlp);
}

/* Forward matmul FLOPs of one token through one block at sequence s. */
double pp__block_fwd_flops(const pp_model *m, int kind, double s)
{
    double h = m->hidden, hd = pp__head_dim(m);
    double proj = 2.0 * pp__attn_params(m);
    double qk = is_mla(m) ? m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim : hd;
    double v = is_mla(m) ? m->mla.v_head_dim : hd;
    double scores = 2.0 * s * m->heads * (qk + v); /* QK^T and AV */
    double mlp;
    if (kind == PP_BLOCK_MOE) {
        double e = pp__mlp_params(m, m->expert_ffn);
        mlp = 2.0 * (h * m->experts + (m->topk + m->shared_experts) * e);
    } else {
        mlp = 2.0 * pp__mlp_params(m, m->ffn);
    }
    return proj + scores + mlp;
}

double pp_model_fwd_flops_per_token(const pp_model *m, int seq)
{
    double f = 0;
    for (int i = 0; i < m->layers; i++) f += pp__block_fwd_flops(m, m->block_kind[i], seq);
    return f + 2.0 * m->hidden * (double)m->vocab; /* LM head logits */
}

static int bad_int(int v, int lo, int hi) { return v < lo || v > hi; }

#define CHECK_RANGE(field, lo, hi)                                                     \
    do {                                                                               \
        if (bad_int(m->field, lo, hi))                                                 \
            return pp__fail(err, PP_ERR_INPUT, "%s: %s: expected an integer in [%d, %d], got %d", \
                            where, #field, lo, hi, m->field);                         \
    } while (0)

static pp_status validate_moe(const pp_model *m, const char *where, pp_error *err)
{
    if (m->experts == 0) return PP_OK;
    CHECK_RANGE(topk, 1, m->experts);
    CHECK_RANGE(expert_ffn, 1, 1 << 22);
    CHECK_RANGE(shared_experts, 0, 64);
    CHECK_RANGE(expert_groups, 0, m->experts);
    if (m->expert_groups > 0) {
        CHECK_RANGE(topk_groups, 1, m->expert_groups);
        if (m->experts % m->expert_groups)
            return pp__fail(err, PP_ERR_INPUT, "%s: moe.groups: expected a divisor of the %d experts, got %d", where,
                            m->experts, m->expert_groups);
    } else {
        CHECK_RANGE(topk_groups, 0, 0);
    }
    if (!(m->capacity_factor == 0 || (m->capacity_factor >= 0.1 && m->capacity_factor <= 64)))
        return pp__fail(err, PP_ERR_INPUT, "%s: moe.capacity_factor: expected 0 (dropless) or a number in [0.1, 64], got %g",
                        where, m->capacity_factor);
    return PP_OK;
}

pp_status pp_model_validate(const pp_model *m, const char *where, pp_error *err)
{
    CHECK_RANGE(layers, 1, PP_MAX_LAYERS);
    CHECK_RANGE(hidden, 1, 1 << 20);
    CHECK_RANGE(heads, 1, m->hidden);
    CHECK_RANGE(kv_heads, 1, m->heads);
    CHECK_RANGE(ffn, 1, 1 << 22);
    CHECK_RANGE(vocab, 1, 1 << 24);
    CHECK_RANGE(seq, 1, 1 << 24);
    CHECK_RANGE(norms_per_block, 0, 4);
    CHECK_RANGE(experts, 0, 4096);
    CHECK_RANGE(head_dim, 0, 1 << 14);
    if (m->head_dim == 0 && m->hidden % m->heads != 0)
        return pp__fail(err, PP_ERR_INPUT, "%s: heads: %d does not divide hidden %d (set head_dim if that is intended)",
                        where, m->heads, m->hidden);
    if (m->head_dim == 0 && m->hidden / m->heads > 1 << 14) /* the same bound as an explicit head_dim */
        return pp__fail(err, PP_ERR_INPUT, "%s: heads: hidden %d / %d heads gives a head width of %d, above %d", where,
                        m->hidden, m->heads, m->hidden / m->heads, 1 << 14);
    if (m->heads % m->kv_heads != 0)
        return pp__fail(err, PP_ERR_INPUT, "%s: kv_heads: %d does not divide heads %d", where,
                        m->kv_heads, m->heads);
    if (m->position == PP_POS_LEARNED) CHECK_RANGE(max_positions, 1, 1 << 24);
    if (!(m->dropout >= 0 && m->dropout < 1))
        return pp__fail(err, PP_ERR_INPUT, "%s: dropout: expected a number in [0, 1), got %g", where, m->dropout);
    pp_status st = validate_moe(m, where, err);
    if (st != PP_OK) return st;
    for (int i = 0; i < m->layers; i++)
        if (m->block_kind[i] == PP_BLOCK_MOE && m->experts == 0)
            return pp__fail(err, PP_ERR_INPUT, "%s: block %d is MoE but moe.experts is 0", where, i);
    return PP_OK;
}
