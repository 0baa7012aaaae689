/*
 * test_hf_config.c — Hugging Face config.json import (configs/hf_config.c).
 *
 * Fixtures in tests/data/hf/ are the config.json files of the named hub
 * checkpoints. Expected totals are the checkpoints' own parameter counts
 * (sum of tensor sizes, as the hub's safetensors metadata or the papers
 * print them), not values computed by parplan.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "parplan.h"
#include "tests/fixtures.h"

#define HF_DIR PARPLAN_SOURCE_DIR "/tests/data/hf/"

#define ASSERT_TOTAL(file, expect)                                                            \
    do {                                                                                      \
        double got_ = fx_total_params(HF_DIR file);                                                  \
        cr_assert(got_ == (double)(expect), "%s: total %.0f, expected %.0f", file, got_,      \
                  (double)(expect));                                                          \
    } while (0)

#define ASSERT_NEAR_REL(got, expect, rel)                                                     \
    cr_assert(fabs((got) / (expect) - 1) <= (rel), "got %.0f, expected %.0f within %g", (got), \
              (double)(expect), (double)(rel))

/* ------------------------------------------------------------ exact counts */

/* meta-llama/Llama-2-7b-hf: 6,738,415,616 (hub safetensors total). */
Test(hf_counts, llama2_7b) { ASSERT_TOTAL("Llama-2-7b-hf.json", 6738415616LL); }

/* meta-llama/Meta-Llama-3-8B: 8,030,261,248 (hub safetensors total). */
Test(hf_counts, llama3_8b) { ASSERT_TOTAL("Meta-Llama-3-8B.json", 8030261248LL); }

/* meta-llama/Llama-3.1-8B: the Llama 3 8B shape, 8,030,261,248; its config
 * adds rope_scaling (llama3), which changes no parameter. */
Test(hf_counts, llama31_8b) { ASSERT_TOTAL("Llama-3.1-8B.json", 8030261248LL); }

/* mistralai/Mistral-7B-v0.1: 7,241,732,096 (hub safetensors total). */
Test(hf_counts, mistral_7b) { ASSERT_TOTAL("Mistral-7B-v0.1.json", 7241732096LL); }

/* mistralai/Mixtral-8x7B-v0.1: 46,702,792,704 (hub safetensors total). */
Test(hf_counts, mixtral_8x7b) { ASSERT_TOTAL("Mixtral-8x7B-v0.1.json", 46702792704LL); }

/* Qwen/Qwen2.5-7B: 7,615,616,512 (model card: 7.61B, 6.53B non-embedding). */
Test(hf_counts, qwen25_7b) { ASSERT_TOTAL("Qwen2.5-7B.json", 7615616512LL); }

/* Qwen/Qwen2.5-0.5B, tied: 494,032,768 (hub safetensors total; card 0.49B). */
Test(hf_counts, qwen25_05b) { ASSERT_TOTAL("Qwen2.5-0.5B.json", 494032768LL); }

/* openai-community/gpt2: 124,439,808 (the classic "124M"). */
Test(hf_counts, gpt2) { ASSERT_TOTAL("gpt2.json", 124439808LL); }

/* EleutherAI/gpt-neox-20b: 20,554,567,680 (Black et al. 2022, arXiv:2204.06745). */
Test(hf_counts, gpt_neox_20b) { ASSERT_TOTAL("gpt-neox-20b.json", 20554567680LL); }

/* facebook/opt-125m: 125,239,296 (hub safetensors total), including the
 * 2 offset rows of the learned position table (2050 x 768). */
Test(hf_counts, opt_125m) { ASSERT_TOTAL("opt-125m.json", 125239296LL); }

/* facebook/opt-1.3b: 1,315,758,080 (hub safetensors total). */
Test(hf_counts, opt_1_3b) { ASSERT_TOTAL("opt-1.3b.json", 1315758080LL); }

/* bigscience/bloom-560m: 559,214,592 (hub safetensors total). */
Test(hf_counts, bloom_560m) { ASSERT_TOTAL("bloom-560m.json", 559214592LL); }

/* tiiuae/falcon-7b: 6,921,720,704 (hub safetensors total), in both the
 * current "falcon" config and the legacy "RefinedWebModel" one. */
Test(hf_counts, falcon_7b)
{
    ASSERT_TOTAL("falcon-7b.json", 6921720704LL);
    ASSERT_TOTAL("falcon-7b-refinedweb.json", 6921720704LL);
}

/* tiiuae/falcon-40b: 41,303,293,952 = sum of the checkpoint's tensor shapes
 * (card: "40B"): 60 x (qkv 8192x9216 + dense 8192^2 + MLP 2x8192x32768
 * + ln_attn + ln_mlp) + embedding 65024x8192 + ln_f. */
Test(hf_counts, falcon_40b)
{
    ASSERT_TOTAL("falcon-40b.json", 41303293952LL);
    ASSERT_TOTAL("falcon-40b-refinedweb.json", 41303293952LL);
}

/* deepseek-ai/DeepSeek-V3: 671B total, 37B activated (arXiv:2412.19437),
 * without the 14B multi-token-prediction module (the hub's 685B includes it).
 * parplan omits the routers' e_score_correction_bias (58 x 256). */
Test(hf_counts, deepseek_v3)
{
    pp_model m = fx_model(HF_DIR "DeepSeek-V3.json");
    pp_param_counts pc;
    pp_model_param_counts(&m, &pc);
    ASSERT_NEAR_REL(pc.total, 671.0e9, 0.005);
    ASSERT_NEAR_REL(pc.active, 37.0e9, 0.02);
}

/* deepseek-ai/DeepSeek-V2-Lite: 15.7B total, 2.4B activated (model card);
 * q_lora_rank null. Tensor shapes sum to 15,706,484,224. */
Test(hf_counts, deepseek_v2_lite)
{
    pp_model m = fx_model(HF_DIR "DeepSeek-V2-Lite.json");
    pp_param_counts pc;
    pp_model_param_counts(&m, &pc);
    ASSERT_NEAR_REL(pc.total, 15.7e9, 0.005);
    cr_expect_eq(pc.total, 15706484224.0, "got %.0f", pc.total);
}

/* Qwen/Qwen1.5-MoE-A2.7B: 14.3B (model card); tensor shapes sum to
 * 14,315,784,192. parplan does not count the per-block shared_expert_gate
 * (hidden x 1: 24 x 2048 = 49,152). */
Test(hf_counts, qwen15_moe)
{
    double t = fx_total_params(HF_DIR "Qwen1.5-MoE-A2.7B.json");
    cr_assert(t == 14315784192.0 - 24 * 2048, "got %.0f", t);
}

/* bigscience/bloom (176B) spells its keys n_embed and num_attention_heads:
 * 176,247,271,424 parameters (the BLOOM paper's count). */
Test(hf_counts, bloom_176b_aliases)
{
    const char *j = "{\"model_type\":\"bloom\",\"n_embed\":14336,\"n_layer\":70,"
                    "\"num_attention_heads\":112,\"vocab_size\":250880,\"pretraining_tp\":4}";
    pp_model m;
    pp_error e = {""};
    cr_assert_eq(pp_model_parse(j, strlen(j), "bloom/config.json", &m, &e), PP_OK, "%s", e.msg);
    pp_param_counts pc;
    pp_model_param_counts(&m, &pc);
    cr_assert(pc.total == 176247271424.0, "got %.0f", pc.total);
}

/* ------------------------------------------------------------- structure */

Test(hf_shape, llama_fields)
{
    pp_model m = fx_model(HF_DIR "Meta-Llama-3-8B.json");
    cr_expect_str_eq(m.name, "meta-llama-3-8b");
    cr_expect_str_eq(m.description, "imported from Hugging Face config.json (model_type llama)");
    cr_expect_str_eq(m.source, HF_DIR "Meta-Llama-3-8B.json");
    cr_expect_eq(m.kv_heads, 8);
    cr_expect_eq(m.seq, 8192);
    cr_expect_eq(m.norm, PP_NORM_RMSNORM);
    cr_expect_eq(m.position, PP_POS_ROPE);
    cr_expect(m.gated_mlp && !m.tied_embeddings && !m.qkv_bias);
    cr_expect_eq(m.activation, PP_ACT_SILU);
    cr_expect_eq(m.dropout, 0.0);
}

Test(hf_shape, name_from_name_or_path)
{
    cr_expect_str_eq(fx_model(HF_DIR "Llama-2-7b-hf.json").name, "llama-2-7b-hf");
}

Test(hf_shape, qwen2_bias_and_tied)
{
    pp_model m = fx_model(HF_DIR "Qwen2.5-0.5B.json");
    cr_expect(m.qkv_bias && !m.out_bias && !m.mlp_bias && m.tied_embeddings);
    cr_expect_str_eq(m.name, "qwen2.5-0.5b");
}

Test(hf_shape, mixtral_all_moe)
{
    pp_model m = fx_model(HF_DIR "Mixtral-8x7B-v0.1.json");
    cr_expect_eq(m.experts, 8);
    cr_expect_eq(m.topk, 2);
    cr_expect_eq(m.expert_ffn, 14336);
    for (int i = 0; i < m.layers; i++) cr_expect_eq(m.block_kind[i], PP_BLOCK_MOE, "block %d", i);
}

Test(hf_shape, deepseek_v3_layout)
{
    pp_model m = fx_model(HF_DIR "DeepSeek-V3.json");
    cr_expect_eq(m.mla.q_lora_rank, 1536);
    cr_expect_eq(m.mla.kv_lora_rank, 512);
    cr_expect_eq(m.experts, 256);
    cr_expect_eq(m.shared_experts, 1);
    cr_expect_eq(m.topk, 8);
    cr_expect_eq(m.seq, 163840);
    for (int i = 0; i < m.layers; i++)
        cr_expect_eq(m.block_kind[i], i < 3 ? PP_BLOCK_DENSE : PP_BLOCK_MOE, "block %d", i);
}

Test(hf_shape, deepseek_v2_null_q_lora)
{
    pp_model m = fx_model(HF_DIR "DeepSeek-V2-Lite.json");
    cr_expect_eq(m.mla.q_lora_rank, 0);
    cr_expect_eq(m.shared_experts, 2);
    cr_expect_eq(m.block_kind[0], PP_BLOCK_DENSE);
    cr_expect_eq(m.block_kind[1], PP_BLOCK_MOE);
}

Test(hf_shape, falcon_variants)
{
    pp_model a = fx_model(HF_DIR "falcon-7b.json"), b = fx_model(HF_DIR "falcon-40b.json");
    cr_expect(a.kv_heads == 1 && a.norms_per_block == 1 && a.parallel_block && a.tied_embeddings);
    cr_expect(b.kv_heads == 8 && b.norms_per_block == 2 && b.parallel_block);
    cr_expect(!a.qkv_bias && !a.mlp_bias && a.norm == PP_NORM_LAYERNORM);
}

Test(hf_shape, gpt2_opt_bloom_neox)
{
    pp_model g = fx_model(HF_DIR "gpt2.json"), o = fx_model(HF_DIR "opt-125m.json");
    pp_model b = fx_model(HF_DIR "bloom-560m.json"), n = fx_model(HF_DIR "gpt-neox-20b.json");
    cr_expect(g.position == PP_POS_LEARNED && g.max_positions == 1024 && g.seq == 1024);
    cr_expect(g.ffn == 3072 && g.qkv_bias && g.mlp_bias && g.tied_embeddings);
    cr_expect_eq(g.dropout, 0.1);
    cr_expect(o.max_positions == 2050 && o.seq == 2048 && o.activation == PP_ACT_RELU);
    cr_expect_str_eq(o.name, "opt-125m");
    cr_expect(b.position == PP_POS_ALIBI && b.embed_norm && b.ffn == 4096);
    cr_expect(n.parallel_block && !n.tied_embeddings && n.qkv_bias && n.mlp_bias);
}

static pp_status parse(const char *json, const char *where, pp_model *m, pp_error *e)
{
    *e = (pp_error){""};
    return pp_model_parse(json, strlen(json), where, m, e);
}

/* A config with the minimum llama keys, plus `extra` (", \"k\": v" ...). */
static pp_status parse_llama(const char *extra, pp_model *m, pp_error *e)
{
    char j[2048];
    snprintf(j, sizeof j,
             "{\"model_type\": \"llama\", \"num_hidden_layers\": 32, \"hidden_size\": 4096,"
             " \"num_attention_heads\": 32, \"intermediate_size\": 11008, \"vocab_size\": 32000%s}",
             extra);
    return parse(j, "hf/config.json", m, e);
}

Test(hf_shape, unknown_far_keys_ignored)
{
    pp_model m;
    pp_error e;
    cr_assert_eq(parse_llama(", \"pretraining_tp\": 1, \"torch_dtype\": \"bfloat16\","
                             " \"my_custom_flag\": true, \"n_layer\": 2", &m, &e), PP_OK, "%s", e.msg);
    cr_expect_eq(m.layers, 32);
    cr_expect_eq(m.seq, 2048); /* LlamaConfig default max_position_embeddings */
}

Test(hf_shape, name_from_directory)
{
    pp_model m;
    pp_error e;
    char j[] = "{\"model_type\":\"gpt2\",\"n_layer\":2,\"n_embd\":64,\"n_head\":4,\"vocab_size\":100}";
    cr_assert_eq(parse(j, "/models/My_GPT2 Tiny/config.json", &m, &e), PP_OK, "%s", e.msg);
    cr_expect_str_eq(m.name, "my-gpt2-tiny");
}

Test(hf_shape, seq_capped)
{
    pp_model m;
    pp_error e;
    cr_assert_eq(parse_llama(", \"max_position_embeddings\": 10485760", &m, &e), PP_OK, "%s", e.msg);
    cr_expect_eq(m.seq, 1 << 20);
}

Test(hf_shape, llama_head_dim_and_biases)
{
    pp_model m;
    pp_error e;
    cr_assert_eq(parse_llama(", \"head_dim\": 96, \"attention_bias\": true, \"mlp_bias\": true,"
                             " \"num_key_value_heads\": 8", &m, &e), PP_OK, "%s", e.msg);
    cr_expect(m.head_dim == 96 && m.qkv_bias && m.out_bias && m.mlp_bias && m.kv_heads == 8);
}

Test(hf_shape, qwen2_moe_sparse_step)
{
    const char *j = "{\"model_type\":\"qwen2_moe\",\"num_hidden_layers\":6,\"hidden_size\":256,"
                    "\"num_attention_heads\":4,\"intermediate_size\":512,\"vocab_size\":1000,"
                    "\"num_experts\":8,\"num_experts_per_tok\":2,\"moe_intermediate_size\":64,"
                    "\"shared_expert_intermediate_size\":128,\"decoder_sparse_step\":2,"
                    "\"mlp_only_layers\":[3]}";
    pp_model m;
    pp_error e;
    cr_assert_eq(parse(j, "x.json", &m, &e), PP_OK, "%s", e.msg);
    const int moe[6] = {0, 1, 0, 0, 0, 1}; /* (i+1) % 2 == 0, minus block 3 */
    for (int i = 0; i < 6; i++) cr_expect_eq(m.block_kind[i], moe[i], "block %d", i);
    cr_expect_eq(m.shared_experts, 2);
}

/* ------------------------------------------------------------- bad input */

#define EXPECT_MSG(e, s) cr_expect(strstr((e).msg, (s)) != NULL, "message lacks \"%s\": %s", (s), (e).msg)

Test(hf_bad, truncated_file)
{
    FILE *f = fopen(HF_DIR "Llama-2-7b-hf.json", "rb");
    cr_assert(f);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    pp_model m;
    pp_error e = {""};
    cr_expect_eq(pp_model_parse(buf, n / 2, "Llama-2-7b-hf.json", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "Llama-2-7b-hf.json");
    EXPECT_MSG(e, "truncated");
}

Test(hf_bad, typo_key_suggested)
{
    pp_model m;
    pp_error e;
    cr_expect_eq(parse_llama(", \"num_key_value_head\": 8", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "hf/config.json");
    EXPECT_MSG(e, "num_key_value_head:");
    EXPECT_MSG(e, "did you mean \"num_key_value_heads\"");
}

Test(hf_bad, typo_of_required_key)
{
    const char *j = "{\"model_type\": \"mistral\", \"num_hiden_layers\": 32, \"hidden_size\": 4096,"
                    " \"num_attention_heads\": 32, \"intermediate_size\": 14336, \"vocab_size\": 32000}";
    pp_model m;
    pp_error e;
    cr_expect_eq(parse(j, "mistral.json", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "mistral.json: $.num_hiden_layers");
    EXPECT_MSG(e, "did you mean \"num_hidden_layers\"");
}

Test(hf_bad, typo_swapped_letters)
{
    pp_model m;
    pp_error e;
    cr_expect_eq(parse_llama(", \"tie_word_embedidngs\": true", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "did you mean \"tie_word_embeddings\"");
}

Test(hf_bad, unknown_model_type)
{
    pp_model m;
    pp_error e;
    cr_expect_eq(parse("{\"model_type\": \"llamma\", \"hidden_size\": 8}", "c.json", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "c.json: $.model_type");
    EXPECT_MSG(e, "did you mean \"llama\"");
    EXPECT_MSG(e, "supported: llama, mistral");
    EXPECT_MSG(e, "deepseek_v3");
    cr_expect_eq(parse("{\"model_type\": \"t5\"}", "c.json", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "unsupported model_type \"t5\"");
}

Test(hf_bad, architectures_without_model_type)
{
    pp_model m;
    pp_error e;
    cr_expect_eq(parse("{\"architectures\": [\"LlamaForCausalLM\"]}", "c.json", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "$.model_type: missing required field");
}

Test(hf_bad, missing_layers)
{
    const char *j = "{\"model_type\": \"qwen2\", \"hidden_size\": 896, \"num_attention_heads\": 14,"
                    " \"intermediate_size\": 4864, \"vocab_size\": 151936}";
    pp_model m;
    pp_error e;
    cr_expect_eq(parse(j, "qwen.json", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "qwen.json: $.num_hidden_layers: missing required field");
}

Test(hf_bad, missing_alias_pair)
{
    pp_model m;
    pp_error e;
    cr_expect_eq(parse("{\"model_type\":\"bloom\",\"n_layer\":2,\"n_head\":4,\"vocab_size\":9}", "b.json",
                       &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "$.hidden_size: missing required field (or its alias \"n_embed\")");
    cr_expect_eq(parse("{\"model_type\":\"bloom\",\"n_layer\":2,\"num_hidden_layers\":2,\"n_head\":4,"
                       "\"hidden_size\":64,\"vocab_size\":9}", "b.json", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "duplicates \"n_layer\"");
}

Test(hf_bad, out_of_range_numbers)
{
    const char *j = "{\"model_type\": \"llama\", \"num_hidden_layers\": 32, \"hidden_size\": -4096,"
                    " \"num_attention_heads\": 32, \"intermediate_size\": 11008, \"vocab_size\": 32000}";
    pp_model m;
    pp_error e;
    cr_expect_eq(parse(j, "neg.json", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "neg.json: $.hidden_size: expected an integer in [1, 1048576], got -4096");
    cr_expect_eq(parse_llama(", \"num_key_value_heads\": 1e30", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "num_key_value_heads");
    cr_expect_eq(parse_llama(", \"max_position_embeddings\": 0", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "max_position_embeddings");
    cr_expect_eq(parse_llama(", \"attention_dropout\": 1.5", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "attention_dropout");
    cr_expect_eq(parse_llama(", \"head_dim\": 64.5", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "expected an integer");
}

Test(hf_bad, kv_heads_not_dividing)
{
    pp_model m;
    pp_error e;
    cr_expect_eq(parse_llama(", \"num_key_value_heads\": 5", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "hf/config.json: kv_heads: 5 does not divide heads 32");
}

Test(hf_bad, wrong_types)
{
    const char *j = "{\"model_type\": \"llama\", \"num_hidden_layers\": 32, \"hidden_size\": \"4096\","
                    " \"num_attention_heads\": 32, \"intermediate_size\": 11008, \"vocab_size\": 32000}";
    pp_model m;
    pp_error e;
    cr_expect_eq(parse(j, "t.json", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "t.json: $.hidden_size: expected an integer");
    cr_expect_eq(parse_llama(", \"tie_word_embeddings\": \"false\"", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "tie_word_embeddings: expected true or false");
    cr_expect_eq(parse("{\"model_type\": 7}", "t.json", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "model_type: expected a string");
    cr_expect_eq(parse_llama(", \"hidden_act\": \"tanh\"", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "hidden_act: expected a gelu, relu or silu/swish activation");
}

Test(hf_bad, unrepresentable_shapes)
{
    const char *opt350 = "{\"model_type\":\"opt\",\"num_hidden_layers\":24,\"hidden_size\":1024,"
                         "\"num_attention_heads\":16,\"ffn_dim\":4096,\"vocab_size\":50272,"
                         "\"word_embed_proj_dim\":512,\"do_layer_norm_before\":false}";
    pp_model m;
    pp_error e;
    cr_expect_eq(parse(opt350, "opt-350m.json", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "word_embed_proj_dim");
    const char *moe = "{\"model_type\":\"qwen2_moe\",\"num_hidden_layers\":2,\"hidden_size\":64,"
                      "\"num_attention_heads\":4,\"intermediate_size\":128,\"vocab_size\":100,"
                      "\"moe_intermediate_size\":48,\"shared_expert_intermediate_size\":100}";
    cr_expect_eq(parse(moe, "q.json", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "shared_expert_intermediate_size");
    cr_expect_eq(parse("{\"model_type\":\"qwen2_moe\",\"num_hidden_layers\":2,\"hidden_size\":64,"
                       "\"num_attention_heads\":4,\"intermediate_size\":128,\"vocab_size\":100,"
                       "\"mlp_only_layers\":[2]}", "q.json", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "mlp_only_layers: expected block indices in [0, 2)");
    /* first_k_dense_replace covering every block would make the MoE model dense */
    cr_expect_eq(parse("{\"model_type\":\"deepseek_v2\",\"num_hidden_layers\":4,\"hidden_size\":64,"
                       "\"num_attention_heads\":4,\"intermediate_size\":128,\"vocab_size\":100,"
                       "\"n_routed_experts\":8,\"first_k_dense_replace\":4}", "d.json", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "first_k_dense_replace: expected an integer in [0, 3], got 4");
}

/* Qwen/Qwen3-8B: 8.19B (model card); parplan does not count the per-head
 * q_norm and k_norm weights (36 x 2 x 128 = 9,216), which it prices as
 * activations only. Qwen/Qwen3-30B-A3B: 30.5B total, 3.3B activated (model
 * card). Both normalise q and k (Qwen3Attention q_norm, k_norm), and the
 * MoE's router weighs its balance loss 0.001 (router_aux_loss_coef). */
Test(hf_counts, qwen3_dense_and_moe)
{
    pp_model m = fx_model(HF_DIR "Qwen3-8B.json");
    pp_param_counts pc;
    pp_model_param_counts(&m, &pc);
    ASSERT_NEAR_REL(pc.total, 8.19e9, 0.001);
    cr_expect(m.qk_norm);
    pp_model q = fx_model(HF_DIR "Qwen3-30B-A3B.json");
    pp_model_param_counts(&q, &pc);
    ASSERT_NEAR_REL(pc.total, 30.5e9, 0.005);
    ASSERT_NEAR_REL(pc.active, 3.3e9, 0.02);
    cr_expect(q.qk_norm && q.experts == 128 && q.topk == 8 && q.shared_experts == 0);
    cr_expect(fabs(q.aux_loss_coeff - 0.001) < 1e-12);
}

/* DeepSeek's router values are checked as the model file checks them: an
 * unknown scoring_func or topk_method names its key, and noaux_tc's
 * balancing bias over softmax scores (which Megatron refuses, and the
 * model file does not read back) is an input error, not a model (found by
 * fuzz_hf_config: "si;gmoid" read as softmax with the bias). */
Test(hf_bad, deepseek_router_values)
{
    FILE *f = fopen(HF_DIR "DeepSeek-V3.json", "rb");
    cr_assert(f);
    static char buf[1 << 16], bad[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *cases[][3] = {{"\"sigmoid\"", "\"si;gmoid\"", "scoring_func"},
                              {"\"sigmoid\"", "\"softmax\"", "topk_method"},
                              {"\"noaux_tc\"", "\"noaux\"", "topk_method"}};
    for (int i = 0; i < 3; i++) {
        const char *at = strstr(buf, cases[i][0]);
        cr_assert(at, "fixture lacks %s", cases[i][0]);
        snprintf(bad, sizeof bad, "%.*s%s%s", (int)(at - buf), buf, cases[i][1], at + strlen(cases[i][0]));
        pp_model m;
        pp_error e = {""};
        cr_expect_eq(pp_model_parse(bad, strlen(bad), "DeepSeek-V3.json", &m, &e), PP_ERR_INPUT, "case %d", i);
        EXPECT_MSG(e, cases[i][2]);
    }
}

/* Qwen-MoE's decoder_sparse_step beyond the blocks (or mlp_only_layers
 * covering every MoE block) leaves a MoE model without a MoE block, which
 * the model file refuses: an input error naming the key (fuzz_hf_config). */
Test(hf_bad, qwen_moe_without_a_moe_block)
{
    const char *j = "{\"model_type\":\"qwen2_moe\",\"num_hidden_layers\":7,\"hidden_size\":256,"
                    "\"num_attention_heads\":4,\"intermediate_size\":512,\"vocab_size\":1000,"
                    "\"num_experts\":8,\"num_experts_per_tok\":2,\"moe_intermediate_size\":64,"
                    "\"shared_expert_intermediate_size\":128,\"decoder_sparse_step\":8}";
    pp_model m;
    pp_error e = {""};
    cr_expect_eq(parse(j, "x.json", &m, &e), PP_ERR_INPUT);
    EXPECT_MSG(e, "decoder_sparse_step");
}
