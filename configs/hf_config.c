/*
 * hf_config.c — import a Hugging Face transformers config.json into a
 * pp_model (docs/formats.md, "Hugging Face config.json").
 *
 * One reader per model_type family knows that architecture's key names and
 * the transformers defaults. Keys a reader does not know are ignored (HF
 * configs carry many), unless one is within a small edit distance of a key
 * the reader knows: that is a likely typo and an error.
 */
#include <stdlib.h> /* realpath, free */
#include <stdio.h>
#include <string.h>

#include "configs/configs.h"

#define HF_SEQ_CAP (1 << 20)      /* longer max_position_embeddings: seq is capped */
#define HF_POS_MAX (1L << 30)     /* larger position counts are rejected as absurd */
#define HF_TYPO_KEY_MAX 48        /* longer keys are never treated as typos */

typedef struct hf_type hf_type;
typedef void (*hf_reader)(jr_ctx *c, const cJSON *r, pp_model *m, const hf_type *t);

struct hf_type {
    const char *name;            /* model_type */
    hf_reader read;
    const char *const *keys[3];  /* keys the reader knows (NULL-terminated lists) */
    int variant;                 /* reader-specific switch (defaults, legacy forms) */
    const pp__hf_rope_spec *rope; /* rotary base, scaling and norm epsilon */
};

/* ------------------------------------------------------------ small readers */

static int present(const cJSON *r, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);
    return v && !cJSON_IsNull(v);
}

/* An int under its HF name k1 or its attribute_map alias k2. */
static int alias_int(jr_ctx *c, const cJSON *r, const char *k1, const char *k2, int req, long lo,
                     long hi, int *out)
{
    int has1 = present(r, k1), has2 = present(r, k2);
    if (has1 && has2) return jr_fail(c, "$", k2, "duplicates \"%s\": give only one of them", k1);
    if (!has1 && !has2 && req)
        return jr_fail(c, "$", k1, "missing required field (or its alias \"%s\")", k2);
    return jr_int(c, r, "$", has2 ? k2 : k1, 0, lo, hi, out);
}

/* Like jr_int, but an explicit null means 0 ("none") and absence means dflt. */
static void int_or_null(jr_ctx *c, const cJSON *r, const char *key, int dflt, long hi, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);
    *out = v ? 0 : dflt;
    jr_int(c, r, "$", key, 0, 0, hi, out);
}

static void read_bool(jr_ctx *c, const cJSON *r, const char *key, int dflt, int *out)
{
    *out = dflt;
    jr_bool(c, r, "$", key, 0, out);
}

/* HF activation names: gelu, gelu_new, gelu_fast, quick_gelu, relu, silu, swish, ... */
static void read_act(jr_ctx *c, const cJSON *r, const char *key, pp_act dflt, pp_model *m)
{
    char s[64];
    m->activation = dflt;
    if (!jr_str(c, r, "$", key, 0, s, sizeof s)) return;
    if (strstr(s, "gelu")) m->activation = PP_ACT_GELU;
    else if (strstr(s, "relu")) m->activation = PP_ACT_RELU;
    else if (!strcmp(s, "silu") || !strcmp(s, "swish")) m->activation = PP_ACT_SILU;
    else jr_fail(c, "$", key, "expected a gelu, relu or silu/swish activation, got \"%s\"", s);
}

/* dropout: the largest of the architecture's dropout probabilities. */
static void read_dropout(jr_ctx *c, const cJSON *r, const char *const *keys, double dflt, pp_model *m)
{
    m->dropout = 0;
    for (; *keys; keys++) {
        double p = dflt;
        jr_num(c, r, "$", *keys, 0, 0, 0.99, &p);
        if (p > m->dropout) m->dropout = p;
    }
}

static void set_seq(pp_model *m, int positions) { m->seq = positions < HF_SEQ_CAP ? positions : HF_SEQ_CAP; }

/* num_hidden_layers, hidden_size, num_attention_heads, vocab_size. */
static void read_std_shape(jr_ctx *c, const cJSON *r, pp_model *m)
{
    jr_int(c, r, "$", "num_hidden_layers", 1, 1, PP_MAX_LAYERS, &m->layers);
    jr_int(c, r, "$", "hidden_size", 1, 1, 1 << 20, &m->hidden);
    jr_int(c, r, "$", "num_attention_heads", 1, 1, 1 << 16, &m->heads);
    jr_int(c, r, "$", "vocab_size", 1, 1, 1 << 24, &m->vocab);
}

static void all_biases(pp_model *m, int on) { m->qkv_bias = m->out_bias = m->mlp_bias = on; }

/* ------------------------------------------------------- llama-like family */

static const char *const llama_core_keys[] = {
    "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
    "intermediate_size", "vocab_size", "hidden_act", "max_position_embeddings",
    "attention_dropout", "tie_word_embeddings", "rope_theta", "rope_scaling", "rope_parameters",
    "rms_norm_eps", NULL};
static const char *const llama_bias_keys[] = {"attention_bias", "mlp_bias", NULL};
static const char *const mixtral_keys[] = {"num_local_experts", "num_experts_per_tok", "router_aux_loss_coef", NULL};
static const char *const qwen2_moe_keys[] = {
    "num_experts", "num_experts_per_tok", "moe_intermediate_size",
    "shared_expert_intermediate_size", "decoder_sparse_step", "mlp_only_layers", "router_aux_loss_coef", NULL};
static const char *const attn_dropout_key[] = {"attention_dropout", NULL};
static const char *const qwen3_keys[] = {"attention_bias", "use_sliding_window", "sliding_window", "max_window_layers",
                                         "layer_types", NULL};
static const char *const qwen3_moe_keys[] = {"num_experts", "num_experts_per_tok", "moe_intermediate_size",
                                             "decoder_sparse_step", "mlp_only_layers", "norm_topk_prob",
                                             "router_aux_loss_coef", "output_router_logits", NULL};

/* Llama/Mistral/Qwen2 decoder: RMSNorm, RoPE, gated SiLU MLP, untied by
 * default; variant = the transformers default of max_position_embeddings. */
static void read_llama_core(jr_ctx *c, const cJSON *r, pp_model *m, const hf_type *t)
{
    int pos = t->variant;
    read_std_shape(c, r, m);
    jr_int(c, r, "$", "num_key_value_heads", 0, 1, 1 << 16, &m->kv_heads);
    jr_int(c, r, "$", "head_dim", 0, 1, 1 << 14, &m->head_dim);
    jr_int(c, r, "$", "intermediate_size", 1, 1, 1 << 22, &m->ffn);
    read_act(c, r, "hidden_act", PP_ACT_SILU, m);
    jr_int(c, r, "$", "max_position_embeddings", 0, 1, HF_POS_MAX, &pos);
    set_seq(m, pos);
    read_dropout(c, r, attn_dropout_key, 0, m);
    read_bool(c, r, "tie_word_embeddings", 0, &m->tied_embeddings);
    m->gated_mlp = 1;
    m->norm = PP_NORM_RMSNORM;
    m->position = PP_POS_ROPE;
}

static void read_llama(jr_ctx *c, const cJSON *r, pp_model *m, const hf_type *t)
{
    read_llama_core(c, r, m, t);
    read_bool(c, r, "attention_bias", 0, &m->qkv_bias); /* q, k, v and o */
    m->out_bias = m->qkv_bias;
    read_bool(c, r, "mlp_bias", 0, &m->mlp_bias);
}

/* Every block MoE: experts of intermediate_size, router without bias. */
static void read_mixtral(jr_ctx *c, const cJSON *r, pp_model *m, const hf_type *t)
{
    read_llama_core(c, r, m, t);
    m->experts = 8;
    m->topk = 2;
    jr_int(c, r, "$", "num_local_experts", 0, 1, 4096, &m->experts);
    jr_int(c, r, "$", "num_experts_per_tok", 0, 1, 4096, &m->topk);
    m->expert_ffn = m->ffn;
    m->aux_loss_coeff = 0.001; /* MixtralConfig's default */
    jr_num(c, r, "$", "router_aux_loss_coef", 0, 0, 10, &m->aux_loss_coeff);
    pp__model_set_moe_layers(m, 0, 1);
}

/* Qwen2 hardcodes bias on q, k, v (not o, not the MLP). */
static void read_qwen2(jr_ctx *c, const cJSON *r, pp_model *m, const hf_type *t)
{
    read_llama_core(c, r, m, t);
    m->qkv_bias = 1;
}

/* Qwen3 (transformers Qwen3Config): the Llama core with an explicit
 * head_dim and an RMSNorm on each head's q and k (Qwen3Attention q_norm,
 * k_norm); sliding-window attention is not modelled. */
static void read_qwen3(jr_ctx *c, const cJSON *r, pp_model *m, const hf_type *t)
{
    int swa = 0;
    read_llama_core(c, r, m, t);
    read_bool(c, r, "attention_bias", 0, &m->qkv_bias);
    m->out_bias = m->qkv_bias;
    read_bool(c, r, "use_sliding_window", 0, &swa);
    if (swa) jr_fail(c, "$", "use_sliding_window", "true: sliding-window attention is not modelled");
    m->qk_norm = 1;
}

static void qwen2_moe_layers(jr_ctx *c, const cJSON *r, pp_model *m, int step);

/* Qwen3-MoE (Qwen3MoeConfig): Qwen3's attention, routed experts of
 * moe_intermediate_size without a shared expert, every decoder_sparse_step
 * block MoE unless in mlp_only_layers; router_aux_loss_coef 0.001. */
static void read_qwen3_moe(jr_ctx *c, const cJSON *r, pp_model *m, const hf_type *t)
{
    int step = 1;
    read_qwen3(c, r, m, t);
    m->experts = 128, m->topk = 8, m->expert_ffn = 768, m->aux_loss_coeff = 0.001;
    jr_int(c, r, "$", "num_experts", 0, 1, 4096, &m->experts);
    jr_int(c, r, "$", "num_experts_per_tok", 0, 1, 4096, &m->topk);
    jr_int(c, r, "$", "moe_intermediate_size", 0, 1, 1 << 22, &m->expert_ffn);
    jr_int(c, r, "$", "decoder_sparse_step", 0, 1, PP_MAX_LAYERS, &step);
    jr_num(c, r, "$", "router_aux_loss_coef", 0, 0, 10, &m->aux_loss_coeff);
    if (c->st == PP_OK) qwen2_moe_layers(c, r, m, step);
}

static void mlp_only_layers(jr_ctx *c, const cJSON *only, pp_model *m);

/* Block i is MoE unless listed in mlp_only_layers, when (i+1) % step == 0;
 * at least one must be (a MoE model without one the model file refuses). */
static void qwen2_moe_layers(jr_ctx *c, const cJSON *r, pp_model *m, int step)
{
    const cJSON *only = cJSON_GetObjectItemCaseSensitive(r, "mlp_only_layers");
    pp__model_set_moe_layers(m, 0, 1);
    for (int i = 0; i < m->layers; i++)
        if ((i + 1) % step != 0) m->block_kind[i] = PP_BLOCK_DENSE;
    if (only && !cJSON_IsNull(only)) mlp_only_layers(c, only, m);
    int moe = 0;
    for (int i = 0; i < m->layers; i++) moe += m->block_kind[i] == PP_BLOCK_MOE;
    if (c->st == PP_OK && m->experts > 0 && !moe)
        jr_fail(c, "$", "decoder_sparse_step", "%d (with mlp_only_layers) leaves none of the %d blocks MoE "
                "(expected at least one)", step, m->layers);
}

static void mlp_only_layers(jr_ctx *c, const cJSON *only, pp_model *m)
{
    if (!cJSON_IsArray(only)) {
        jr_fail(c, "$", "mlp_only_layers", "expected an array of block indices");
        return;
    }
    for (const cJSON *it = only->child; it; it = it->next) {
        /* range first: casting 1e30 to int is undefined behaviour */
        if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0 && it->valuedouble < m->layers)
            || it->valuedouble != (int)it->valuedouble) {
            jr_fail(c, "$", "mlp_only_layers", "expected block indices in [0, %d)", m->layers);
            return;
        }
        m->block_kind[(int)it->valuedouble] = PP_BLOCK_DENSE;
    }
}

/* Routed experts of moe_intermediate_size plus one gated shared expert of
 * shared_expert_intermediate_size, counted as that many expert widths. */
static void read_qwen2_moe(jr_ctx *c, const cJSON *r, pp_model *m, const hf_type *t)
{
    int shared_ffn = 5632, step = 1;
    read_qwen2(c, r, m, t);
    m->experts = 60;
    m->topk = 4;
    m->expert_ffn = 1408;
    jr_int(c, r, "$", "num_experts", 0, 0, 4096, &m->experts);
    jr_int(c, r, "$", "num_experts_per_tok", 0, 1, 4096, &m->topk);
    jr_int(c, r, "$", "moe_intermediate_size", 0, 1, 1 << 22, &m->expert_ffn);
    jr_int(c, r, "$", "shared_expert_intermediate_size", 0, 0, 1 << 22, &shared_ffn);
    jr_int(c, r, "$", "decoder_sparse_step", 0, 1, PP_MAX_LAYERS, &step);
    if (c->st != PP_OK) return;
    if (shared_ffn % m->expert_ffn != 0)
        jr_fail(c, "$", "shared_expert_intermediate_size",
                "expected a multiple of moe_intermediate_size %d, got %d", m->expert_ffn, shared_ffn);
    m->shared_experts = shared_ffn / m->expert_ffn;
    m->aux_loss_coeff = 0.001; /* Qwen2MoeConfig's default */
    jr_num(c, r, "$", "router_aux_loss_coef", 0, 0, 10, &m->aux_loss_coeff);
    qwen2_moe_layers(c, r, m, step);
}

/* ------------------------------------------------------------------ gpt2 */

static const char *const gpt2_keys[] = {
    "n_layer", "num_hidden_layers", "n_embd", "hidden_size", "n_head", "num_attention_heads",
    "n_positions", "max_position_embeddings", "n_inner", "vocab_size", "activation_function",
    "resid_pdrop", "embd_pdrop", "attn_pdrop", "tie_word_embeddings", "layer_norm_epsilon", NULL};
static const char *const gpt2_dropout[] = {"resid_pdrop", "embd_pdrop", "attn_pdrop", NULL};

/* Pre-LN, learned positions, biases everywhere, FFN n_inner or 4h, tied. */
static void read_gpt2(jr_ctx *c, const cJSON *r, pp_model *m, const hf_type *t)
{
    int pos = 1024;
    (void)t;
    alias_int(c, r, "n_layer", "num_hidden_layers", 1, 1, PP_MAX_LAYERS, &m->layers);
    alias_int(c, r, "n_embd", "hidden_size", 1, 1, 1 << 20, &m->hidden);
    alias_int(c, r, "n_head", "num_attention_heads", 1, 1, 1 << 16, &m->heads);
    alias_int(c, r, "n_positions", "max_position_embeddings", 0, 1, 1 << 24, &pos);
    jr_int(c, r, "$", "vocab_size", 1, 1, 1 << 24, &m->vocab);
    m->ffn = 4 * m->hidden;
    jr_int(c, r, "$", "n_inner", 0, 1, 1 << 22, &m->ffn);
    read_act(c, r, "activation_function", PP_ACT_GELU, m);
    read_dropout(c, r, gpt2_dropout, 0.1, m);
    read_bool(c, r, "tie_word_embeddings", 1, &m->tied_embeddings);
    set_seq(m, pos);
    m->max_positions = pos;
    m->position = PP_POS_LEARNED;
    m->norm = PP_NORM_LAYERNORM;
    all_biases(m, 1);
}

/* ------------------------------------------------------------------- opt */

static const char *const opt_keys[] = {
    "num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size", "ffn_dim",
    "word_embed_proj_dim", "max_position_embeddings", "activation_function", "enable_bias",
    "do_layer_norm_before", "dropout", "attention_dropout", "activation_dropout",
    "tie_word_embeddings", NULL};
static const char *const opt_dropout[] = {"dropout", "attention_dropout", "activation_dropout", NULL};

/* OPT: learned positions with 2 extra rows (OPTLearnedPositionalEmbedding's
 * offset), ReLU, biases, tied. A post-LN config (do_layer_norm_before false)
 * has no final norm; parplan still counts one (2h). */
static void read_opt(jr_ctx *c, const cJSON *r, pp_model *m, const hf_type *t)
{
    int pos = 2048, proj = 0, bias = 1, pre_ln = 1;
    (void)t;
    read_std_shape(c, r, m);
    jr_int(c, r, "$", "ffn_dim", 1, 1, 1 << 22, &m->ffn);
    jr_int(c, r, "$", "max_position_embeddings", 0, 1, 1 << 24, &pos);
    read_act(c, r, "activation_function", PP_ACT_RELU, m);
    read_bool(c, r, "enable_bias", 1, &bias);
    read_bool(c, r, "do_layer_norm_before", 1, &pre_ln);
    read_dropout(c, r, opt_dropout, 0, m);
    read_bool(c, r, "tie_word_embeddings", 1, &m->tied_embeddings);
    if (jr_int(c, r, "$", "word_embed_proj_dim", 0, 1, 1 << 20, &proj) && proj != m->hidden)
        jr_fail(c, "$", "word_embed_proj_dim",
                "%d differs from hidden_size %d: embedding projections (OPT-350m) are not modelled",
                proj, m->hidden);
    set_seq(m, pos);
    m->max_positions = pos + 2;
    m->position = PP_POS_LEARNED;
    m->norm = PP_NORM_LAYERNORM;
    all_biases(m, bias);
}

/* ----------------------------------------------------------------- bloom */

static const char *const bloom_keys[] = {
    "n_layer", "num_hidden_layers", "hidden_size", "n_embed", "n_head", "num_attention_heads",
    "vocab_size", "hidden_dropout", "attention_dropout", "tie_word_embeddings", "layer_norm_epsilon", NULL};
static const char *const hidden_attn_dropout[] = {"hidden_dropout", "attention_dropout", NULL};

/* BLOOM: ALiBi, LayerNorm after the embedding, FFN 4h, GELU, biases, tied.
 * The config has no length; seq is BLOOM's training length 2048. */
static void read_bloom(jr_ctx *c, const cJSON *r, pp_model *m, const hf_type *t)
{
    (void)t;
    alias_int(c, r, "n_layer", "num_hidden_layers", 1, 1, PP_MAX_LAYERS, &m->layers);
    alias_int(c, r, "hidden_size", "n_embed", 1, 1, 1 << 20, &m->hidden);
    alias_int(c, r, "n_head", "num_attention_heads", 1, 1, 1 << 16, &m->heads);
    jr_int(c, r, "$", "vocab_size", 1, 1, 1 << 24, &m->vocab);
    read_dropout(c, r, hidden_attn_dropout, 0, m);
    read_bool(c, r, "tie_word_embeddings", 1, &m->tied_embeddings);
    m->ffn = 4 * m->hidden;
    m->activation = PP_ACT_GELU;
    m->seq = 2048;
    m->position = PP_POS_ALIBI;
    m->norm = PP_NORM_LAYERNORM;
    m->embed_norm = 1;
    all_biases(m, 1);
}

/* -------------------------------------------------------------- gpt_neox */

static const char *const neox_keys[] = {
    "num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size", "intermediate_size",
    "max_position_embeddings", "hidden_act", "use_parallel_residual", "attention_bias",
    "hidden_dropout", "attention_dropout", "tie_word_embeddings", "rotary_emb_base", "rope_theta",
    "rope_scaling", "rope_parameters", "layer_norm_eps", NULL};

/* GPT-NeoX/Pythia: rotary, parallel residual, biases, untied embed_out. */
static void read_neox(jr_ctx *c, const cJSON *r, pp_model *m, const hf_type *t)
{
    int pos = 2048;
    (void)t;
    read_std_shape(c, r, m);
    jr_int(c, r, "$", "intermediate_size", 1, 1, 1 << 22, &m->ffn);
    jr_int(c, r, "$", "max_position_embeddings", 0, 1, HF_POS_MAX, &pos);
    read_act(c, r, "hidden_act", PP_ACT_GELU, m);
    read_bool(c, r, "use_parallel_residual", 1, &m->parallel_block);
    read_bool(c, r, "attention_bias", 1, &m->qkv_bias);
    read_dropout(c, r, hidden_attn_dropout, 0, m);
    read_bool(c, r, "tie_word_embeddings", 0, &m->tied_embeddings);
    set_seq(m, pos);
    m->out_bias = m->qkv_bias;
    m->mlp_bias = 1;
    m->norm = PP_NORM_LAYERNORM;
    m->position = PP_POS_ROPE;
}

/* ---------------------------------------------------------------- falcon */

static const char *const falcon_keys[] = {
    "num_hidden_layers", "n_layer", "num_attention_heads", "n_head", "hidden_size", "n_embed",
    "num_kv_heads", "n_head_kv", "vocab_size", "new_decoder_architecture", "multi_query",
    "parallel_attn", "num_ln_in_parallel_attn", "bias", "alibi", "ffn_hidden_size", "activation",
    "max_position_embeddings", "hidden_dropout", "attention_dropout", "tie_word_embeddings", "rope_theta",
    "rope_scaling", "rope_parameters", "layer_norm_epsilon", NULL};

/* Query/key/value heads: grouped (new architecture), one KV head
 * (multi_query, Falcon-7B) or full multi-head. legacy: RWConfig defaults. */
static void falcon_attention(jr_ctx *c, const cJSON *r, pp_model *m, int new_arch, int legacy)
{
    int mq = 1, kv = legacy ? 1 : m->heads;
    read_bool(c, r, "multi_query", 1, &mq);
    alias_int(c, r, "num_kv_heads", "n_head_kv", 0, 1, 1 << 16, &kv);
    m->kv_heads = new_arch ? kv : mq ? 1 : m->heads;
}

/* Norms per block: 2 if sequential; in parallel, num_ln_in_parallel_attn
 * (default 2 for the new architecture, else 1: Falcon-7B). */
static void falcon_norms(jr_ctx *c, const cJSON *r, pp_model *m, int new_arch, int legacy)
{
    int par = !legacy, n_ln = new_arch ? 2 : 1;
    read_bool(c, r, "parallel_attn", par, &par);
    jr_int(c, r, "$", "num_ln_in_parallel_attn", 0, 1, 2, &n_ln);
    m->parallel_block = par || new_arch;
    m->norms_per_block = par ? n_ln : 2;
}

/* variant: 0 "falcon" (FalconConfig), 1 "RefinedWebModel" (Falcon-7B), 2
 * "RefinedWeb" (Falcon-40B: new architecture), the legacy remote-code types. */
static void read_falcon(jr_ctx *c, const cJSON *r, pp_model *m, const hf_type *t)
{
    int new_arch = t->variant == 2, pos = 2048, alibi = 0, bias = 0;
    alias_int(c, r, "num_hidden_layers", "n_layer", 1, 1, PP_MAX_LAYERS, &m->layers);
    alias_int(c, r, "num_attention_heads", "n_head", 1, 1, 1 << 16, &m->heads);
    alias_int(c, r, "hidden_size", "n_embed", 1, 1, 1 << 20, &m->hidden);
    jr_int(c, r, "$", "vocab_size", 1, 1, 1 << 24, &m->vocab);
    read_bool(c, r, "new_decoder_architecture", new_arch, &new_arch);
    falcon_attention(c, r, m, new_arch, t->variant != 0);
    falcon_norms(c, r, m, new_arch, t->variant != 0);
    m->ffn = 4 * m->hidden;
    jr_int(c, r, "$", "ffn_hidden_size", 0, 1, 1 << 22, &m->ffn);
    read_act(c, r, "activation", PP_ACT_GELU, m);
    read_bool(c, r, "bias", 0, &bias);
    read_bool(c, r, "alibi", 0, &alibi);
    jr_int(c, r, "$", "max_position_embeddings", 0, 1, HF_POS_MAX, &pos);
    read_dropout(c, r, hidden_attn_dropout, 0, m);
    read_bool(c, r, "tie_word_embeddings", 1, &m->tied_embeddings);
    set_seq(m, pos);
    all_biases(m, bias);
    m->position = alibi ? PP_POS_ALIBI : PP_POS_ROPE;
    m->norm = PP_NORM_LAYERNORM;
}

/* -------------------------------------------------------------- deepseek */

static const char *const deepseek_keys[] = {
    "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
    "vocab_size", "intermediate_size", "hidden_act", "max_position_embeddings",
    "attention_dropout", "attention_bias", "tie_word_embeddings", "q_lora_rank", "kv_lora_rank",
    "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "n_routed_experts",
    "num_experts_per_tok", "n_shared_experts", "moe_intermediate_size", "first_k_dense_replace",
    "moe_layer_freq", "rope_theta", "rope_scaling", "rope_parameters", "rms_norm_eps",
    "head_dim", "qk_head_dim", /* derived; saved by transformers' own config class; ignored */
    "scoring_func", "topk_method", "routed_scaling_factor", "aux_loss_alpha", "seq_aux", "n_group", "topk_group",
    NULL};

/* transformers defaults that differ between DeepseekV2Config and V3. */
typedef struct ds_defaults {
    int positions, experts, topk, shared, expert_ffn, first_dense;
} ds_defaults;
static const ds_defaults ds_v2 = {2048, 0, 0, 0, 1407, 0};
static const ds_defaults ds_v3 = {4096, 256, 8, 1, 2048, 3};

/* Multi-head latent attention; q_lora_rank null = plain q projection. */
static void read_mla(jr_ctx *c, const cJSON *r, pp_model *m)
{
    pp_mla *a = &m->mla;
    int bias = 0;
    int_or_null(c, r, "q_lora_rank", 1536, 1 << 16, &a->q_lora_rank);
    a->kv_lora_rank = 512;
    a->qk_nope_head_dim = 128;
    a->qk_rope_head_dim = 64;
    a->v_head_dim = 128;
    jr_int(c, r, "$", "kv_lora_rank", 0, 1, 1 << 16, &a->kv_lora_rank);
    jr_int(c, r, "$", "qk_nope_head_dim", 0, 1, 1 << 14, &a->qk_nope_head_dim);
    jr_int(c, r, "$", "qk_rope_head_dim", 0, 0, 1 << 14, &a->qk_rope_head_dim);
    jr_int(c, r, "$", "v_head_dim", 0, 1, 1 << 14, &a->v_head_dim);
    if (jr_bool(c, r, "$", "attention_bias", 0, &bias) && bias)
        jr_fail(c, "$", "attention_bias", "expected false: MLA projection biases are not modelled");
    m->head_dim = a->v_head_dim;
}

/* Block i is MoE when i >= first_k_dense_replace and i % moe_layer_freq == 0
 * (DeepseekV3DecoderLayer); n_routed_experts null = a dense model. */
static void read_ds_moe(jr_ctx *c, const cJSON *r, pp_model *m, const ds_defaults *d)
{
    int first = d->first_dense, freq = 1;
    int_or_null(c, r, "n_routed_experts", d->experts, 4096, &m->experts);
    int_or_null(c, r, "num_experts_per_tok", d->topk, 4096, &m->topk);
    int_or_null(c, r, "n_shared_experts", d->shared, 64, &m->shared_experts);
    /* group-limited routing (DeepseekV3Config n_group, topk_group) */
    jr_int(c, r, "$", "n_group", 0, 0, 4096, &m->expert_groups);
    jr_int(c, r, "$", "topk_group", 0, 0, 4096, &m->topk_groups);
    m->expert_ffn = d->expert_ffn;
    jr_int(c, r, "$", "moe_intermediate_size", 0, 1, 1 << 22, &m->expert_ffn);
    /* at least one MoE block (num_hidden_layers is read before) */
    jr_int(c, r, "$", "first_k_dense_replace", 0, 0, m->layers > 0 ? m->layers - 1 : PP_MAX_LAYERS, &first);
    jr_int(c, r, "$", "moe_layer_freq", 0, 1, PP_MAX_LAYERS, &freq);
    pp__model_set_moe_layers(m, first, 1);
    for (int i = 0; i < m->layers; i++)
        if (i % freq != 0) m->block_kind[i] = PP_BLOCK_DENSE;
}

/* variant: 2 or 3 (DeepSeek-V2 or V3 defaults). */
/* DeepSeek's router (DeepseekV3Config: scoring_func "sigmoid", topk_method
 * "noaux_tc" = the balancing bias, routed_scaling_factor, aux_loss_alpha
 * with seq_aux: a per-sequence loss), and the latent norms MLA always has
 * (kv_a_layernorm, q_a_layernorm): Megatron's --qk-layernorm builds them. */
static void ds_router(jr_ctx *c, const cJSON *r, pp_model *m)
{
    char score[32] = "softmax", method[32] = "";
    jr_str(c, r, "$", "scoring_func", 0, score, sizeof score);
    jr_str(c, r, "$", "topk_method", 0, method, sizeof method);
    if (c->st == PP_OK && strcmp(score, "softmax") && strcmp(score, "sigmoid"))
        jr_fail(c, "$", "scoring_func", "expected \"softmax\" or \"sigmoid\" (DeepSeek's routers), got \"%s\"", score);
    if (c->st == PP_OK && method[0] && strcmp(method, "greedy") && strcmp(method, "group_limited_greedy") &&
        strcmp(method, "noaux_tc"))
        jr_fail(c, "$", "topk_method", "expected \"greedy\", \"group_limited_greedy\" or \"noaux_tc\", got \"%s\"",
                method);
    m->router_sigmoid = !strcmp(score, "sigmoid");
    m->router_expert_bias = !strcmp(method, "noaux_tc");
    /* as the model file says (model_json.c): Megatron's router takes the bias with sigmoid scores only */
    if (c->st == PP_OK && m->router_expert_bias && !m->router_sigmoid)
        jr_fail(c, "$", "topk_method", "\"noaux_tc\" (the aux-loss-free balancing bias) needs scoring_func "
                "\"sigmoid\", as DeepSeek-V3's; Megatron refuses the bias with softmax scores");
    jr_num(c, r, "$", "routed_scaling_factor", 0, 0, 1000, &m->router_scaling);
    if (m->router_scaling == 1) m->router_scaling = 0;
    jr_num(c, r, "$", "aux_loss_alpha", 0, 0, 10, &m->aux_loss_coeff);
    read_bool(c, r, "seq_aux", 0, &m->aux_loss_seq);
    m->qk_norm = m->mla.kv_lora_rank > 0;
}

static void read_deepseek(jr_ctx *c, const cJSON *r, pp_model *m, const hf_type *t)
{
    const ds_defaults *d = t->variant == 2 ? &ds_v2 : &ds_v3;
    int pos = d->positions;
    read_std_shape(c, r, m);
    jr_int(c, r, "$", "num_key_value_heads", 0, 1, 1 << 16, &m->kv_heads);
    jr_int(c, r, "$", "intermediate_size", 1, 1, 1 << 22, &m->ffn);
    read_act(c, r, "hidden_act", PP_ACT_SILU, m);
    jr_int(c, r, "$", "max_position_embeddings", 0, 1, HF_POS_MAX, &pos);
    read_dropout(c, r, attn_dropout_key, 0, m);
    read_bool(c, r, "tie_word_embeddings", 0, &m->tied_embeddings);
    read_mla(c, r, m);
    read_ds_moe(c, r, m, d);
    ds_router(c, r, m);
    set_seq(m, pos);
    m->gated_mlp = 1;
    m->norm = PP_NORM_RMSNORM;
    m->position = PP_POS_ROPE;
}

/* ------------------------------------------------------------- dispatch */

/* Where each keeps its rotary base and norm epsilon, with the transformers
 * config class defaults (Llama/Mistral/Qwen2/Qwen2-MoE/DeepSeek-V2/V3:
 * rms_norm_eps 1e-6, rope_theta 10000; Mixtral 1e-5 and 1e6; GPT-2, BLOOM,
 * Falcon layer_norm_epsilon and GPT-NeoX layer_norm_eps 1e-5, their rotary
 * base 10000). OPT has no key: nn.LayerNorm's default 1e-5. */
static const pp__hf_rope_spec rope_llama = {"rope_theta", NULL, 1e4, "rms_norm_eps", 1e-6};
static const pp__hf_rope_spec rope_mixtral = {"rope_theta", NULL, 1e6, "rms_norm_eps", 1e-5};
static const pp__hf_rope_spec rope_gpt2 = {NULL, NULL, 0, "layer_norm_epsilon", 1e-5};
static const pp__hf_rope_spec rope_neox = {"rotary_emb_base", "rope_theta", 1e4, "layer_norm_eps", 1e-5};
static const pp__hf_rope_spec rope_opt = {NULL, NULL, 0, NULL, 1e-5};
static const pp__hf_rope_spec rope_falcon = {"rope_theta", NULL, 1e4, "layer_norm_epsilon", 1e-5};

static const hf_type hf_types[] = {
    {"llama", read_llama, {llama_core_keys, llama_bias_keys}, 2048, &rope_llama},
    {"mistral", read_llama_core, {llama_core_keys}, 131072, &rope_llama},
    {"mixtral", read_mixtral, {llama_core_keys, mixtral_keys}, 131072, &rope_mixtral},
    {"qwen2", read_qwen2, {llama_core_keys}, 32768, &rope_llama},
    {"qwen2_moe", read_qwen2_moe, {llama_core_keys, qwen2_moe_keys}, 32768, &rope_llama},
    {"qwen3", read_qwen3, {llama_core_keys, qwen3_keys}, 32768, &rope_llama},
    {"qwen3_moe", read_qwen3_moe, {llama_core_keys, qwen3_keys, qwen3_moe_keys}, 32768, &rope_llama},
    {"gpt2", read_gpt2, {gpt2_keys}, 0, &rope_gpt2},
    {"gpt_neox", read_neox, {neox_keys}, 0, &rope_neox},
    {"opt", read_opt, {opt_keys}, 0, &rope_opt},
    {"bloom", read_bloom, {bloom_keys}, 0, &rope_gpt2},
    {"falcon", read_falcon, {falcon_keys}, 0, &rope_falcon},
    {"RefinedWebModel", read_falcon, {falcon_keys}, 1, &rope_falcon}, /* legacy Falcon-7B */
    {"RefinedWeb", read_falcon, {falcon_keys}, 2, &rope_falcon},      /* legacy Falcon-40B */
    {"deepseek_v3", read_deepseek, {deepseek_keys}, 3, &rope_llama},
    {"deepseek_v2", read_deepseek, {deepseek_keys}, 2, &rope_llama},
};
#define HF_NTYPES ((int)(sizeof hf_types / sizeof hf_types[0]))

static const hf_type *find_type(jr_ctx *c, const cJSON *r)
{
    const char *names[HF_NTYPES];
    char type[64], list[256] = "";
    if (!present(r, "model_type")) {
        jr_fail(c, "$", "model_type", "missing required field (HF configs name their model_type)");
        return NULL;
    }
    if (!jr_str(c, r, "$", "model_type", 1, type, sizeof type)) return NULL;
    for (int i = 0; i < HF_NTYPES; i++) {
        if (!strcmp(type, hf_types[i].name)) return &hf_types[i];
        names[i] = hf_types[i].name;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
    }
    const char *near = jr_nearest(type, names, HF_NTYPES);
    jr_fail(c, "$", "model_type", "unsupported model_type \"%s\"%s%s%s; supported: %s", type,
            near ? " (did you mean \"" : "", near ? near : "", near ? "\"?)" : "", list);
    return NULL;
}

/* Optimal string alignment distance: a swap of neighbours is one edit. */
static int osa_distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b), d[HF_TYPO_KEY_MAX + 1][HF_TYPO_KEY_MAX + 1];
    if (la > HF_TYPO_KEY_MAX || lb > HF_TYPO_KEY_MAX) return 1 << 20;
    for (int i = 0; i <= la; i++) d[i][0] = i;
    for (int j = 0; j <= lb; j++) d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            int swap = i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1];
            if (swap && d[i - 2][j - 2] + 1 < v) v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb];
}

static const char *const common_keys[] = {"model_type", "architectures", "_name_or_path", NULL};

/* A key the reader does not know but within 1 edit (2 for keys of 8+
 * characters) of one it does is a likely typo: reject it, suggesting that. */
static void check_typos(jr_ctx *c, const cJSON *r, const hf_type *t)
{
    const char *const *lists[] = {common_keys, t->keys[0], t->keys[1], t->keys[2]};
    for (const cJSON *it = r->child; it && c->st == PP_OK; it = it->next) {
        const char *best = NULL;
        int bd = 1 << 20, limit = strlen(it->string) >= 8 ? 2 : 1;
        for (int l = 0; l < 4 && lists[l]; l++)
            for (const char *const *k = lists[l]; *k; k++) {
                int dist = osa_distance(it->string, *k);
                if (dist < bd) bd = dist, best = *k;
            }
        if (bd > 0 && bd <= limit)
            jr_fail(c, "$", it->string, "unknown key for model_type %s (did you mean \"%s\"?)", t->name,
                    best);
    }
}

/* m->name: basename of _name_or_path, else of the file (stem; a file named
 * config.json takes its directory's name), lowercased, other chars -> '-'. */
static void set_name(jr_ctx *c, const cJSON *r, const char *where, pp_model *m)
{
    char buf[PP_TEXT_LEN] = "";
    int from_file = !jr_str(c, r, "$", "_name_or_path", 0, buf, sizeof buf) || !buf[0];
    if (from_file) snprintf(buf, sizeof buf, "%s", where);
    size_t n = strlen(buf);
    while (n > 0 && buf[n - 1] == '/') buf[--n] = '\0';
    if (from_file && n > 5 && !strcmp(buf + n - 5, ".json")) buf[n - 5] = '\0';
    char *base = strrchr(buf, '/');
    if (from_file && !strcmp(base ? base + 1 : buf, "config")) {
        /* config.json takes its directory's name; "./config.json" and a bare
         * "config.json" the working directory's (never "." or "") */
        if (base) *base = '\0';
        else buf[0] = '\0';
        base = strrchr(buf, '/');
        const char *last = base ? base + 1 : buf;
        if (!*last || !strcmp(last, ".") || !strcmp(last, "..")) { /* the directory's real name */
            char *dir = realpath(buf[0] ? buf : ".", NULL);
            if (dir) snprintf(buf, sizeof buf, "%s", dir);
            free(dir);
            base = strrchr(buf, '/');
        }
    }
    base = base ? base + 1 : buf;
    if (!strcmp(base, ".") || !strcmp(base, "..")) base[0] = '\0';
    size_t j = 0;
    for (; base[j] && j + 1 < sizeof m->name; j++) {
        char ch = base[j];
        if (ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
        m->name[j] = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' ? ch : '-';
    }
    m->name[j] = '\0';
    if (!j) snprintf(m->name, sizeof m->name, "hf-model");
}

int pp__is_hf_config(const cJSON *root)
{
    return cJSON_GetObjectItemCaseSensitive(root, "model_type") != NULL
        || cJSON_GetObjectItemCaseSensitive(root, "architectures") != NULL;
}

pp_status pp__hf_config_read(const cJSON *root, const char *where, pp_model *m, pp_error *err)
{
    jr_ctx c = {where, err, PP_OK};
    *m = (pp_model){0};
    m->norms_per_block = 2;
    const hf_type *t = find_type(&c, root);
    if (!t) return c.st;
    check_typos(&c, root, t);
    t->read(&c, root, m, t);
    pp__hf_rope_read(&c, root, t->rope, m);
    set_name(&c, root, where, m);
    if (c.st != PP_OK) return c.st;
    snprintf(m->description, sizeof m->description,
             "imported from Hugging Face config.json (model_type %s)", t->name);
    snprintf(m->source, sizeof m->source, "%s", where);
    pp__model_defaults(m);
    return PP_OK;
}
