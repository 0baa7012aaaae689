/*
 * test_model_rope.c — the fields launch files must carry (configs/model_rope.c):
 * rotary base, RoPE scaling and norm epsilon.
 *   (a) presets against the published values, written out per row with the
 *       config.json (or code) they come from, and against the HF fixture of
 *       the same checkpoint where tests/data/hf has one;
 *   (b) the HF importer, per supported architecture (the fixtures are the
 *       checkpoints' config.json files; the defaults are the transformers
 *       config classes');
 *   (c) `model show --format json` reads back with the same fields, every preset;
 *   (d) bad values: an error naming the file and the field, exit 2 from the CLI.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parplan.h"
#include "tests/fixtures.h"

#define HF_DIR PARPLAN_SOURCE_DIR "/tests/data/hf/"
#define EXPECT_MSG(e, s) cr_expect(strstr((e).msg, (s)) != NULL, "message lacks \"%s\": %s", (s), (e).msg)

/* Expected fields; theta 0 = none (learned/ALiBi positions). */
typedef struct rope_row {
    const char *name;    /* preset, or file under tests/data/hf */
    double theta;
    pp_rope_scaling kind;
    double factor, low, high;
    int orig;
    double eps;
} rope_row;

static void expect_row(const pp_model *m, const rope_row *r)
{
    cr_expect_eq(m->rope_theta, r->theta, "%s: rope_theta %g, expected %g", r->name, m->rope_theta, r->theta);
    cr_expect_eq(m->rope_scaling, r->kind, "%s: rope_scaling %d, expected %d", r->name, m->rope_scaling, r->kind);
    cr_expect_eq(m->rope_factor, r->factor, "%s: factor %g, expected %g", r->name, m->rope_factor, r->factor);
    cr_expect_eq(m->rope_low_freq, r->low, "%s: low_freq_factor %g, expected %g", r->name, m->rope_low_freq, r->low);
    cr_expect_eq(m->rope_high_freq, r->high, "%s: high_freq_factor %g, expected %g", r->name, m->rope_high_freq,
                 r->high);
    cr_expect_eq(m->rope_original_max, r->orig, "%s: original %d, expected %d", r->name, m->rope_original_max,
                 r->orig);
    cr_expect_eq(m->norm_eps, r->eps, "%s: norm_eps %g, expected %g", r->name, m->norm_eps, r->eps);
}

/* ------------------------------------------------------------------ (a) */

static const rope_row published[] = {
    /* meta-llama/Llama-2-7b-hf config.json: rms_norm_eps 1e-05, no rope_theta
     * (meta-llama/llama model.py precompute_freqs_cis theta=10000.0) */
    {"llama2-7b", 10000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    {"llama2-70b", 10000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    /* LLaMA 65B params.json: "norm_eps": 1e-05 (7B-33B: 1e-06) */
    {"llama-65b", 10000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    /* meta-llama/Meta-Llama-3-8B config.json: rope_theta 500000.0, rms_norm_eps 1e-05 */
    {"llama3-8b", 500000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    {"llama3-70b", 500000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    /* meta-llama/Llama-3.1-*: rope_scaling {factor 8.0, low_freq_factor 1.0,
     * high_freq_factor 4.0, original_max_position_embeddings 8192, rope_type llama3} */
    {"llama3.1-8b", 500000, PP_ROPE_LLAMA3, 8, 1, 4, 8192, 1e-5},
    {"llama3.1-70b", 500000, PP_ROPE_LLAMA3, 8, 1, 4, 8192, 1e-5},
    {"llama3.1-405b", 500000, PP_ROPE_LLAMA3, 8, 1, 4, 8192, 1e-5},
    /* mistralai/Mistral-7B-v0.1: rope_theta 10000.0, rms_norm_eps 1e-05 */
    {"mistral-7b", 10000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    /* mistralai/Mixtral-8x7B-v0.1 and 8x22B: rope_theta 1e6, rms_norm_eps 1e-05 */
    {"mixtral-8x7b", 1e6, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    {"mixtral-8x22b", 1e6, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    /* Qwen/Qwen2.5-*: rope_theta 1000000.0, rms_norm_eps 1e-06 */
    {"qwen2.5-0.5b", 1e6, PP_ROPE_NONE, 0, 0, 0, 0, 1e-6},
    {"qwen2.5-7b", 1e6, PP_ROPE_NONE, 0, 0, 0, 0, 1e-6},
    {"qwen3-235b-a22b", 1e6, PP_ROPE_NONE, 0, 0, 0, 0, 1e-6},
    /* deepseek-ai/DeepSeek-V3: rope_theta 10000, rope_scaling {type yarn,
     * factor 40, original_max_position_embeddings 4096}, rms_norm_eps 1e-06 */
    {"deepseek-v3", 10000, PP_ROPE_YARN, 40, 0, 0, 4096, 1e-6},
    /* EleutherAI/gpt-neox-20b: rotary_emb_base 10000, layer_norm_eps 1e-05 */
    {"gpt-neox-20b", 10000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    /* tiiuae/falcon-40b: layer_norm_epsilon 1e-05; rotary base 10000 (FalconRotaryEmbedding) */
    {"falcon-40b", 10000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    {"falcon-180b", 10000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    /* bigscience/bloom: ALiBi, layer_norm_epsilon 1e-05 */
    {"bloom-176b", 0, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    /* OPT: learned positions, nn.LayerNorm default eps 1e-5 */
    {"opt-175b", 0, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    /* GPT-3 = GPT-2's architecture (openai/gpt-2 norm epsilon=1e-5), learned positions */
    {"gpt3-175b", 0, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    /* Megatron-LM --layernorm-epsilon default 1e-5; MPTConfig norm_eps 1e-05 */
    {"megatron-1t", 0, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    {"mpt-7b", 0, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
};

Test(rope_presets, published_values)
{
    for (size_t i = 0; i < sizeof published / sizeof published[0]; i++) {
        pp_model m = fx_model(published[i].name);
        expect_row(&m, &published[i]);
    }
}

/* A preset and the config.json of the same checkpoint give the same fields. */
Test(rope_presets, agree_with_the_checkpoint_config)
{
    static const char *const pairs[][2] = {
        {"llama2-7b", "Llama-2-7b-hf.json"},      {"llama3-8b", "Meta-Llama-3-8B.json"},
        {"llama3.1-8b", "Llama-3.1-8B.json"},     {"mistral-7b", "Mistral-7B-v0.1.json"},
        {"mixtral-8x7b", "Mixtral-8x7B-v0.1.json"}, {"qwen2.5-0.5b", "Qwen2.5-0.5B.json"},
        {"qwen2.5-7b", "Qwen2.5-7B.json"},        {"deepseek-v3", "DeepSeek-V3.json"},
        {"gpt-neox-20b", "gpt-neox-20b.json"},    {"falcon-40b", "falcon-40b.json"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, HF_DIR "%s", pairs[i][1]);
        pp_model p = fx_model(pairs[i][0]), h = fx_model(path);
        rope_row r = {pairs[i][0], h.rope_theta, h.rope_scaling, h.rope_factor, h.rope_low_freq, h.rope_high_freq,
                      h.rope_original_max, h.norm_eps};
        expect_row(&p, &r);
    }
}

/* Every preset knows its epsilon; RoPE presets their base, others none. */
Test(rope_presets, every_preset_is_complete)
{
    int n = pp_preset_count(PP_PRESET_MODEL);
    for (int i = 0; i < n; i++) {
        const char *name = pp_preset_name(PP_PRESET_MODEL, i);
        pp_model m = fx_model(name);
        cr_expect(m.norm_eps > 0 && m.norm_eps <= 1e-5, "%s: norm_eps %g", name, m.norm_eps);
        if (m.position == PP_POS_ROPE)
            cr_expect(m.rope_theta >= 1e4, "%s: rope_theta %g", name, m.rope_theta);
        else
            cr_expect(m.rope_theta == 0 && m.rope_scaling == PP_ROPE_NONE, "%s: rotary fields without RoPE", name);
        cr_expect(strstr(m.source, "eps") != NULL, "%s: source does not say where norm_eps comes from", name);
    }
}

/* ------------------------------------------------------------------ (b) */

static const rope_row hf_fixtures[] = {
    {"Llama-2-7b-hf.json", 10000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},  /* no rope_theta: LlamaConfig's 10000 */
    {"Meta-Llama-3-8B.json", 500000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5}, /* "rope_scaling": null */
    {"Llama-3.1-8B.json", 500000, PP_ROPE_LLAMA3, 8, 1, 4, 8192, 1e-5},
    {"Mistral-7B-v0.1.json", 10000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    {"Mixtral-8x7B-v0.1.json", 1e6, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    {"Qwen2.5-0.5B.json", 1e6, PP_ROPE_NONE, 0, 0, 0, 0, 1e-6},
    {"Qwen2.5-7B.json", 1e6, PP_ROPE_NONE, 0, 0, 0, 0, 1e-6},
    {"Qwen1.5-MoE-A2.7B.json", 1e6, PP_ROPE_NONE, 0, 0, 0, 0, 1e-6},      /* qwen2_moe */
    {"gpt2.json", 0, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},                     /* learned positions */
    {"gpt-neox-20b.json", 10000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},         /* rotary_emb_base, layer_norm_eps */
    {"opt-125m.json", 0, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},                 /* no key: nn.LayerNorm's 1e-5 */
    {"bloom-560m.json", 0, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},               /* ALiBi */
    {"falcon-7b.json", 10000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},            /* no rope_theta: FalconConfig's */
    {"falcon-40b.json", 10000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    {"falcon-7b-refinedweb.json", 10000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5}, /* legacy RWConfig */
    {"falcon-40b-refinedweb.json", 10000, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
    {"DeepSeek-V3.json", 10000, PP_ROPE_YARN, 40, 0, 0, 4096, 1e-6},      /* "type": "yarn" */
    {"DeepSeek-V2-Lite.json", 10000, PP_ROPE_YARN, 40, 0, 0, 4096, 1e-6},
};

Test(rope_hf, every_architecture_carries_them)
{
    for (size_t i = 0; i < sizeof hf_fixtures / sizeof hf_fixtures[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, HF_DIR "%s", hf_fixtures[i].name);
        pp_model m = fx_model(path);
        expect_row(&m, &hf_fixtures[i]);
    }
}

static pp_status parse(const char *json, pp_model *m, pp_error *e)
{
    *e = (pp_error){""};
    return pp_model_parse(json, strlen(json), "cfg/config.json", m, e);
}

/* A minimal config of model_type `type` (llama-like keys) plus `extra`. */
static pp_status parse_hf(const char *type, const char *extra, pp_model *m, pp_error *e)
{
    char j[2048];
    snprintf(j, sizeof j,
             "{\"model_type\": \"%s\", \"num_hidden_layers\": 2, \"hidden_size\": 256, \"num_attention_heads\": 4,"
             " \"intermediate_size\": 512, \"vocab_size\": 1000%s}", type, extra);
    return parse(j, m, e);
}

/* Absent keys take the transformers config class defaults. */
Test(rope_hf, defaults_per_architecture)
{
    static const rope_row dflt[] = {
        {"llama", 1e4, PP_ROPE_NONE, 0, 0, 0, 0, 1e-6},   {"mistral", 1e4, PP_ROPE_NONE, 0, 0, 0, 0, 1e-6},
        {"mixtral", 1e6, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5}, {"qwen2", 1e4, PP_ROPE_NONE, 0, 0, 0, 0, 1e-6},
        {"qwen2_moe", 1e4, PP_ROPE_NONE, 0, 0, 0, 0, 1e-6}, {"gpt_neox", 1e4, PP_ROPE_NONE, 0, 0, 0, 0, 1e-5},
        {"deepseek_v3", 1e4, PP_ROPE_NONE, 0, 0, 0, 0, 1e-6}, {"deepseek_v2", 1e4, PP_ROPE_NONE, 0, 0, 0, 0, 1e-6},
    };
    for (size_t i = 0; i < sizeof dflt / sizeof dflt[0]; i++) {
        pp_model m;
        pp_error e;
        const char *extra = strncmp(dflt[i].name, "deepseek", 8) ? "" : ", \"n_routed_experts\": null";
        cr_assert_eq(parse_hf(dflt[i].name, extra, &m, &e), PP_OK, "%s: %s", dflt[i].name, e.msg);
        expect_row(&m, &dflt[i]);
    }
    pp_model m;
    pp_error e;
    /* Falcon with ALiBi has no rotary base, whatever rope_theta says */
    cr_assert_eq(parse("{\"model_type\": \"falcon\", \"num_hidden_layers\": 2, \"hidden_size\": 256,"
                       " \"num_attention_heads\": 4, \"vocab_size\": 1000, \"alibi\": true, \"rope_theta\": 5e5}",
                       &m, &e), PP_OK, "%s", e.msg);
    cr_expect(m.position == PP_POS_ALIBI && m.rope_theta == 0 && m.norm_eps == 1e-5);
}

/* transformers 5 saves rope_parameters (rope_type, rope_theta, factor, ...). */
Test(rope_hf, rope_parameters_and_legacy_spellings)
{
    pp_model m;
    pp_error e;
    cr_assert_eq(parse_hf("llama", ", \"rope_parameters\": {\"rope_type\": \"llama3\", \"rope_theta\": 500000.0,"
                          " \"factor\": 32.0, \"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0,"
                          " \"original_max_position_embeddings\": 8192}", &m, &e), PP_OK, "%s", e.msg);
    rope_row l32 = {"rope_parameters llama3", 5e5, PP_ROPE_LLAMA3, 32, 1, 4, 8192, 1e-6};
    expect_row(&m, &l32);
    /* "default" is no scaling; rope_theta only inside rope_parameters */
    cr_assert_eq(parse_hf("qwen2", ", \"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": 1e6}",
                          &m, &e), PP_OK, "%s", e.msg);
    cr_expect(m.rope_theta == 1e6 && m.rope_scaling == PP_ROPE_NONE);
    /* both spellings of the kind, agreeing; an empty object is none */
    cr_assert_eq(parse_hf("llama", ", \"rope_scaling\": {\"type\": \"linear\", \"rope_type\": \"linear\", \"factor\": 2}",
                          &m, &e), PP_OK, "%s", e.msg);
    cr_expect(m.rope_scaling == PP_ROPE_LINEAR && m.rope_factor == 2 && m.rope_original_max == 0);
    cr_assert_eq(parse_hf("llama", ", \"rope_scaling\": {}", &m, &e), PP_OK, "%s", e.msg);
    cr_expect_eq(m.rope_scaling, PP_ROPE_NONE);
    cr_assert_eq(parse_hf("mistral", ", \"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2.0}", &m, &e), PP_OK,
                 "%s", e.msg);
    cr_expect(m.rope_scaling == PP_ROPE_DYNAMIC && m.rope_factor == 2);
    /* the same scaling in both places is fine; GPT-NeoX may say rope_theta */
    cr_assert_eq(parse_hf("llama", ", \"rope_theta\": 1e6, \"rope_scaling\": {\"type\": \"linear\", \"factor\": 4},"
                          " \"rope_parameters\": {\"rope_type\": \"linear\", \"factor\": 4, \"rope_theta\": 1e6}",
                          &m, &e), PP_OK, "%s", e.msg);
    cr_expect(m.rope_theta == 1e6 && m.rope_factor == 4);
    cr_assert_eq(parse_hf("gpt_neox", ", \"rope_theta\": 25000", &m, &e), PP_OK, "%s", e.msg);
    cr_expect_eq(m.rope_theta, 25000);
}

Test(rope_hf, bad_values_name_the_key)
{
    static const struct { const char *type, *extra, *msg; } bad[] = {
        {"llama", ", \"rope_theta\": -10000", "cfg/config.json: $.rope_theta: expected the rotary base"},
        {"llama", ", \"rms_norm_eps\": 0", "cfg/config.json: $.rms_norm_eps: expected the norm epsilon"},
        {"llama", ", \"rms_norm_eps\": 0.5", "$.rms_norm_eps: expected the norm epsilon, a number in (0, 0.1)"},
        {"gpt_neox", ", \"layer_norm_eps\": -1e-5", "$.layer_norm_eps"},
        {"llama", ", \"rope_scaling\": {\"rope_type\": \"longrope\", \"factor\": 4}",
         "$.rope_scaling.rope_type: unsupported RoPE scaling \"longrope\""},
        {"llama", ", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 0}", "$.rope_scaling.factor"},
        {"llama", ", \"rope_scaling\": {\"type\": \"yarn\", \"factor\": -2}", "$.rope_scaling.factor"},
        {"llama", ", \"rope_scaling\": {\"factor\": 4}", "$.rope_scaling.rope_type: missing required field"},
        {"llama", ", \"rope_scaling\": {\"type\": \"linear\", \"rope_type\": \"yarn\", \"factor\": 4}",
         "$.rope_scaling.type: \"linear\" differs from rope_type \"yarn\""},
        {"llama", ", \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8, \"high_freq_factor\": 4,"
                  " \"original_max_position_embeddings\": 8192}", "$.rope_scaling.low_freq_factor: missing"},
        {"llama", ", \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8, \"low_freq_factor\": 4,"
                  " \"high_freq_factor\": 4, \"original_max_position_embeddings\": 8192}",
         "$.rope_scaling.high_freq_factor: 4 must be above low_freq_factor 4"},
        {"llama", ", \"rope_scaling\": \"linear\"", "$.rope_scaling"},
        {"llama", ", \"rope_theta\": 1e6, \"rope_parameters\": {\"rope_theta\": 5e5}",
         "$.rope_theta: 1e+06 differs from rope_parameters' 500000"},
        {"llama", ", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 4}, \"rope_parameters\": {\"rope_type\":"
                  " \"linear\", \"factor\": 8}", "$.rope_scaling: differs from rope_parameters"},
        {"gpt_neox", ", \"rope_theta\": 1e4, \"rotary_emb_base\": 1e4", "$.rope_theta: duplicates \"rotary_emb_base\""},
        {"llama", ", \"rope_thetta\": 1e6", "did you mean \"rope_theta\""},
        {"llama", ", \"rms_norm_esp\": 1e-5", "did you mean \"rms_norm_eps\""},
        {"falcon", ", \"layer_norm_epsilom\": 1e-5", "did you mean \"layer_norm_epsilon\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pp_model m;
        pp_error e;
        cr_expect_eq(parse_hf(bad[i].type, bad[i].extra, &m, &e), PP_ERR_INPUT, "accepted: %s", bad[i].extra);
        EXPECT_MSG(e, bad[i].msg);
    }
}

/* ------------------------------------------------------------------ (c) */

/* `model show --format json` of every preset reads back with the same
 * fields (and writes nothing for an unknown 0). */
Test(rope_round_trip, every_preset)
{
    int n = pp_preset_count(PP_PRESET_MODEL);
    for (int i = 0; i < n; i++) {
        const char *name = pp_preset_name(PP_PRESET_MODEL, i);
        pp_model a = fx_model(name), b;
        pp_error e = {""};
        char *js = pp_model_to_json(&a);
        cr_assert_not_null(js);
        pp_status st = pp_model_parse(js, strlen(js), "round-trip", &b, &e);
        pp_free(js);
        cr_assert_eq(st, PP_OK, "%s: %s", name, e.msg);
        rope_row r = {name, a.rope_theta, a.rope_scaling, a.rope_factor, a.rope_low_freq, a.rope_high_freq,
                      a.rope_original_max, a.norm_eps};
        expect_row(&b, &r);
    }
}

/* The same for HF imports (yarn without original context, linear, dynamic),
 * and a model with none of them known stays unknown. */
Test(rope_round_trip, hf_imports_and_unknowns)
{
    const char *cases[] = {
        ", \"rope_scaling\": {\"type\": \"yarn\", \"factor\": 4}",
        ", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.5}, \"rope_theta\": 12345.5",
        ", \"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2, \"original_max_position_embeddings\": 4096}",
        ", \"rms_norm_eps\": 3.3e-7",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pp_model a, b;
        pp_error e;
        cr_assert_eq(parse_hf("llama", cases[i], &a, &e), PP_OK, "%s", e.msg);
        char *js = pp_model_to_json(&a);
        cr_assert_eq(parse(js, &b, &e), PP_OK, "%s: %s", cases[i], e.msg);
        pp_free(js);
        rope_row r = {cases[i], a.rope_theta, a.rope_scaling, a.rope_factor, a.rope_low_freq, a.rope_high_freq,
                      a.rope_original_max, a.norm_eps};
        expect_row(&b, &r);
    }
    pp_model a, b;
    pp_error e;
    const char *bare = "{\"name\": \"bare\", \"layers\": 2, \"hidden\": 64, \"heads\": 4, \"ffn\": 128,"
                       " \"gated_mlp\": false, \"activation\": \"gelu\", \"vocab\": 100, \"seq\": 64,"
                       " \"tied_embeddings\": true, \"norm\": \"layernorm\", \"position\": \"rope\"}";
    cr_assert_eq(parse(bare, &a, &e), PP_OK, "%s", e.msg);
    char *js = pp_model_to_json(&a);
    cr_expect(strstr(js, "rope_theta") == NULL && strstr(js, "norm_eps") == NULL, "unknowns written: %s", js);
    cr_assert_eq(parse(js, &b, &e), PP_OK, "%s", e.msg);
    pp_free(js);
    cr_expect(b.rope_theta == 0 && b.norm_eps == 0 && b.rope_scaling == PP_ROPE_NONE);
}

/* ------------------------------------------------------------------ (d) */

/* A native model with `extra` keys (after "position": "rope" unless the
 * extra text sets its own position). */
static pp_status parse_native(const char *pos, const char *extra, pp_model *m, pp_error *e)
{
    char j[2048];
    snprintf(j, sizeof j,
             "{\"name\": \"n\", \"layers\": 2, \"hidden\": 64, \"heads\": 4, \"ffn\": 128, \"gated_mlp\": true,"
             " \"activation\": \"silu\", \"vocab\": 100, \"seq\": 64, \"tied_embeddings\": false,"
             " \"norm\": \"rmsnorm\", \"position\": \"%s\"%s}", pos, extra);
    *e = (pp_error){""};
    return pp_model_parse(j, strlen(j), "models/n.json", m, e);
}

Test(rope_native, bad_values_name_the_file_and_field)
{
    static const struct { const char *pos, *extra, *msg; } bad[] = {
        {"rope", ", \"rope_theta\": -1", "models/n.json: $.rope_theta: expected the rotary base (e.g. 10000), a "
                                         "number in (1, 1e+12], got -1"},
        {"rope", ", \"rope_theta\": 0", "models/n.json: $.rope_theta: expected the rotary base"},
        {"rope", ", \"rope_theta\": \"10000\"", "models/n.json: $.rope_theta: expected a number"},
        {"rope", ", \"norm_eps\": 0", "models/n.json: $.norm_eps: expected the norm epsilon, a number in (0, 0.1)"},
        {"rope", ", \"norm_eps\": -1e-5", "models/n.json: $.norm_eps: expected the norm epsilon"},
        {"rope", ", \"norm_eps\": 0.1", "models/n.json: $.norm_eps: expected the norm epsilon"},
        {"rope", ", \"norm_eps\": 0.5", "got 0.5"},
        {"rope", ", \"rope_scaling\": {\"type\": \"ntk\", \"factor\": 2}",
         "models/n.json: $.rope_scaling.type: expected one of llama3|yarn|linear|dynamic, got \"ntk\""},
        {"rope", ", \"rope_scaling\": {\"type\": \"none\"}", "$.rope_scaling.type: expected one of llama3|yarn"},
        {"rope", ", \"rope_scaling\": {\"factor\": 2}", "$.rope_scaling.type: missing required field"},
        {"rope", ", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 0}",
         "models/n.json: $.rope_scaling.factor: expected the scaling factor, a number in (0, 1024], got 0"},
        {"rope", ", \"rope_scaling\": {\"type\": \"linear\", \"factor\": -8}", "$.rope_scaling.factor"},
        {"rope", ", \"rope_scaling\": {\"type\": \"linear\"}", "$.rope_scaling.factor: missing required field"},
        {"rope", ", \"rope_scaling\": {\"type\": \"llama3\", \"factor\": 8, \"low_freq_factor\": 1,"
                 " \"high_freq_factor\": 4}", "$.rope_scaling.original_max_position_embeddings: missing required"},
        {"rope", ", \"rope_scaling\": {\"type\": \"llama3\", \"factor\": 8, \"low_freq_factor\": 0,"
                 " \"high_freq_factor\": 4, \"original_max_position_embeddings\": 8192}",
         "$.rope_scaling.low_freq_factor: expected the low frequency factor"},
        {"rope", ", \"rope_scaling\": {\"type\": \"yarn\", \"factor\": 40, \"low_freq_factor\": 1}",
         "$.rope_scaling.low_freq_factor: only for type llama3, not yarn"},
        {"rope", ", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2, \"original_max_position_embeddings\": 4096}",
         "$.rope_scaling.original_max_position_embeddings: only for type llama3, yarn or dynamic, not linear"},
        {"rope", ", \"rope_scaling\": {\"type\": \"yarn\", \"factor\": 40, \"beta_fast\": 32}",
         "$.rope_scaling.beta_fast: unknown key"},
        {"rope", ", \"rope_scaling\": 8", "$.rope_scaling"},
        {"learned", ", \"rope_theta\": 10000", "models/n.json: $.rope_theta: only for position \"rope\", not \"learned\""},
        {"alibi", ", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2}",
         "$.rope_scaling: only for position \"rope\", not \"alibi\""},
        {"rope", ", \"rope_thetaa\": 10000", "$.rope_thetaa: unknown key (did you mean \"rope_theta\"?)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pp_model m;
        pp_error e;
        cr_expect_eq(parse_native(bad[i].pos, bad[i].extra, &m, &e), PP_ERR_INPUT, "accepted: %s", bad[i].extra);
        EXPECT_MSG(e, bad[i].msg);
    }
    /* the limits themselves are accepted */
    pp_model m;
    pp_error e;
    cr_assert_eq(parse_native("rope", ", \"rope_theta\": 1e12, \"norm_eps\": 0.0999,"
                              " \"rope_scaling\": {\"type\": \"linear\", \"factor\": 1024}", &m, &e), PP_OK, "%s", e.msg);
    cr_expect(m.rope_theta == 1e12 && m.norm_eps == 0.0999 && m.rope_factor == 1024);
    cr_assert_eq(parse_native("learned", ", \"norm_eps\": 1e-12", &m, &e), PP_OK, "%s", e.msg);
}

/* The CLI: exit 2, the file and the field on stderr, nothing on stdout. */
Test(rope_native, cli_exit_code)
{
    char dir[] = "/tmp/pp-rope-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char file[256], out[256], err[256], cmd[1024];
    snprintf(file, sizeof file, "%s/bad.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    fputs("{\"name\": \"bad\", \"layers\": 2, \"hidden\": 64, \"heads\": 4, \"ffn\": 128, \"gated_mlp\": true,"
          " \"activation\": \"silu\", \"vocab\": 100, \"seq\": 64, \"tied_embeddings\": false, \"norm\": \"rmsnorm\","
          " \"position\": \"rope\", \"rope_scaling\": {\"type\": \"yarn\", \"factor\": -1}}\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s model show %s --format json >%s 2>%s", PARPLAN_CLI, file, out, err);
    int rc = system(cmd);
    cr_assert(WIFEXITED(rc));
    cr_expect_eq(WEXITSTATUS(rc), 2);
    char msg[1024] = "";
    f = fopen(err, "r");
    cr_assert_not_null(f);
    size_t n = fread(msg, 1, sizeof msg - 1, f);
    msg[n] = '\0';
    fclose(f);
    cr_expect(strstr(msg, "bad.json: $.rope_scaling.factor") != NULL, "stderr: %s", msg);
    f = fopen(out, "r");
    cr_assert_not_null(f);
    cr_expect_eq(fgetc(f), EOF, "stdout is not empty");
    fclose(f);
    unlink(file);
    unlink(out);
    unlink(err);
    rmdir(dir);
}
