/*
 * model_json.c — parplan's native model JSON (docs/formats.md), model
 * loading by preset name or path, and the model's JSON rendering.
 */
#define _GNU_SOURCE /* strcasestr */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/configs.h"
#include "configs/presets.h"

static const char *const norm_names[] = {"layernorm", "rmsnorm"};
static const char *const pos_names[] = {"rope", "learned", "alibi"};
static const char *const act_names[] = {"gelu", "relu", "silu"};

static const char *const top_keys[] = {
    "name", "description", "source", "params_reported", "layers", "hidden", "heads",
    "kv_heads", "head_dim", "ffn", "gated_mlp", "activation", "vocab", "seq",
    "tied_embeddings", "norm", "norms_per_block", "bias", "position", "max_positions",
    "embed_norm", "parallel_block", "dropout", "moe", "mla", "rope_theta", "rope_scaling", "norm_eps", "qk_norm",
    /* written by `model show --format json`; read back and ignored */
    "schema_version", "params", "fwd_flops_per_token", NULL};
static const char *const bias_keys[] = {"qkv", "out", "mlp", "lm_head", NULL};
static const char *const moe_keys[] = {"experts", "topk", "shared_experts", "expert_ffn", "groups", "topk_groups",
                                       "capacity_factor", "first_dense_layers", "every",
                                       "dense_blocks", "moe_blocks", "router_score", "expert_bias",
                                       "routed_scaling", "aux_loss_coeff", "aux_loss", NULL};
static const char *const mla_keys[] = {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                                       "qk_rope_head_dim", "v_head_dim", NULL};

void pp__model_defaults(pp_model *m)
{
    if (m->kv_heads == 0) m->kv_heads = m->heads;
    if (m->norms_per_block < 0) m->norms_per_block = 2;
    if (m->position == PP_POS_LEARNED && m->max_positions == 0) m->max_positions = m->seq;
}

/* Block i is MoE under the first_dense_layers/every pattern. */
static int moe_in_pattern(int i, int first_dense, int every)
{
    return i >= first_dense && (i - first_dense) % every == 0;
}

void pp__model_set_moe_layers(pp_model *m, int first_dense, int every)
{
    if (every < 1) every = 1;
    for (int i = 0; i < m->layers && i < PP_MAX_LAYERS; i++)
        m->block_kind[i] = m->experts > 0 && moe_in_pattern(i, first_dense, every) ? PP_BLOCK_MOE : PP_BLOCK_DENSE;
}

/* "175.0B", "671B", "1T", "760470528" -> parameters. */
static int parse_count(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v <= 0) return 0;
    double mul = 1;
    if (*end == 'K' || *end == 'k') mul = 1e3, end++;
    else if (*end == 'M') mul = 1e6, end++;
    else if (*end == 'B') mul = 1e9, end++;
    else if (*end == 'T') mul = 1e12, end++;
    if (*end) return 0;
    *out = v * mul;
    return 1;
}

/* "dense_blocks": indices of blocks that are dense although the
 * first_dense_layers/every pattern makes them MoE (any pattern can be said). */
static void read_dense_blocks(jr_ctx *c, const cJSON *moe, pp_model *m)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(moe, "dense_blocks");
    if (!d || c->st != PP_OK) return;
    if (!cJSON_IsArray(d)) {
        jr_fail(c, "$.moe", "dense_blocks", "expected an array of block indices");
        return;
    }
    for (const cJSON *it = d->child; it; it = it->next) {
        double v = cJSON_IsNumber(it) ? it->valuedouble : -1;
        if (v < 0 || v >= m->layers || v != (int)v) {
            jr_fail(c, "$.moe", "dense_blocks", "expected block indices in [0, %d)", m->layers);
            return;
        }
        m->block_kind[(int)v] = PP_BLOCK_DENSE;
    }
}

static void read_moe(jr_ctx *c, const cJSON *root, pp_model *m)
{
    const cJSON *moe = jr_obj(c, root, "$", "moe", 0);
    int first_dense = 0, every = 1;
    if (moe) {
        jr_check_keys(c, moe, "$.moe", moe_keys);
        jr_int(c, moe, "$.moe", "experts", 1, 1, 4096, &m->experts);
        jr_int(c, moe, "$.moe", "topk", 1, 1, 4096, &m->topk);
        jr_int(c, moe, "$.moe", "shared_experts", 0, 0, 64, &m->shared_experts);
        jr_int(c, moe, "$.moe", "groups", 0, 0, 4096, &m->expert_groups);
        jr_int(c, moe, "$.moe", "topk_groups", 0, 0, 4096, &m->topk_groups);
        jr_int(c, moe, "$.moe", "expert_ffn", 1, 1, 1 << 22, &m->expert_ffn);
        jr_num(c, moe, "$.moe", "capacity_factor", 0, 0, 64, &m->capacity_factor);
        static const char *const scores[] = {"softmax", "sigmoid"}, *const losses[] = {"batch", "sequence"};
        jr_enum(c, moe, "$.moe", "router_score", 0, scores, 2, &m->router_sigmoid);
        jr_bool(c, moe, "$.moe", "expert_bias", 0, &m->router_expert_bias);
        jr_num(c, moe, "$.moe", "routed_scaling", 0, 0, 1000, &m->router_scaling);
        jr_num(c, moe, "$.moe", "aux_loss_coeff", 0, 0, 10, &m->aux_loss_coeff);
        jr_enum(c, moe, "$.moe", "aux_loss", 0, losses, 2, &m->aux_loss_seq);
        /* Megatron's router takes the balancing bias with sigmoid scores only */
        if (c->st == PP_OK && m->router_expert_bias && !m->router_sigmoid)
            jr_fail(c, "$.moe", "expert_bias", "true needs router_score \"sigmoid\" (the aux-loss-free bias is "
                    "DeepSeek-V3's, over sigmoid scores; Megatron refuses it with softmax)");
        /* at least one MoE block: the blocks are read before (m->layers) */
        jr_int(c, moe, "$.moe", "first_dense_layers", 0, 0, m->layers > 0 ? m->layers - 1 : PP_MAX_LAYERS, &first_dense);
        jr_int(c, moe, "$.moe", "every", 0, 1, PP_MAX_LAYERS, &every);
    }
    pp__model_set_moe_layers(m, first_dense, every);
    if (moe) read_dense_blocks(c, moe, m);
}

static void read_mla(jr_ctx *c, const cJSON *root, pp_model *m)
{
    const cJSON *mla = jr_obj(c, root, "$", "mla", 0);
    if (!mla) return;
    jr_check_keys(c, mla, "$.mla", mla_keys);
    jr_int(c, mla, "$.mla", "q_lora_rank", 0, 0, 1 << 16, &m->mla.q_lora_rank);
    jr_int(c, mla, "$.mla", "kv_lora_rank", 1, 1, 1 << 16, &m->mla.kv_lora_rank);
    jr_int(c, mla, "$.mla", "qk_nope_head_dim", 1, 1, 1 << 14, &m->mla.qk_nope_head_dim);
    jr_int(c, mla, "$.mla", "qk_rope_head_dim", 1, 0, 1 << 14, &m->mla.qk_rope_head_dim);
    jr_int(c, mla, "$.mla", "v_head_dim", 1, 1, 1 << 14, &m->mla.v_head_dim);
}

static void read_bias(jr_ctx *c, const cJSON *root, pp_model *m)
{
    const cJSON *b = jr_obj(c, root, "$", "bias", 0);
    if (!b) return;
    jr_check_keys(c, b, "$.bias", bias_keys);
    jr_bool(c, b, "$.bias", "qkv", 0, &m->qkv_bias);
    jr_bool(c, b, "$.bias", "out", 0, &m->out_bias);
    jr_bool(c, b, "$.bias", "mlp", 0, &m->mlp_bias);
    jr_bool(c, b, "$.bias", "lm_head", 0, &m->lm_head_bias);
}

pp_status pp__model_native_read(const cJSON *root, const char *where, pp_model *m, pp_error *err)
{
    jr_ctx c = {where, err, PP_OK};
    int e;
    *m = (pp_model){0};
    m->norms_per_block = -1;
    jr_check_keys(&c, root, "$", top_keys);
    int version = PP_SCHEMA_VERSION;
    jr_int(&c, root, "$", "schema_version", 0, PP_SCHEMA_VERSION, PP_SCHEMA_VERSION, &version);
    jr_str(&c, root, "$", "name", 1, m->name, sizeof m->name);
    jr_str(&c, root, "$", "description", 0, m->description, sizeof m->description);
    jr_str(&c, root, "$", "source", 0, m->source, sizeof m->source);
    if (jr_str(&c, root, "$", "params_reported", 0, m->params_reported_str, sizeof m->params_reported_str)
        && !parse_count(m->params_reported_str, &m->params_reported))
        jr_fail(&c, "$", "params_reported", "expected a count such as \"175B\" or \"760470528\", got \"%s\"",
                m->params_reported_str);
    jr_int(&c, root, "$", "layers", 1, 1, PP_MAX_LAYERS, &m->layers);
    jr_int(&c, root, "$", "hidden", 1, 1, 1 << 20, &m->hidden);
    jr_int(&c, root, "$", "heads", 1, 1, 1 << 16, &m->heads);
    jr_int(&c, root, "$", "kv_heads", 0, 1, 1 << 16, &m->kv_heads);
    jr_int(&c, root, "$", "head_dim", 0, 1, 1 << 14, &m->head_dim);
    jr_int(&c, root, "$", "ffn", 1, 1, 1 << 22, &m->ffn);
    jr_bool(&c, root, "$", "gated_mlp", 1, &m->gated_mlp);
    if (jr_enum(&c, root, "$", "activation", 1, act_names, PP_ACT_COUNT, &e)) m->activation = (pp_act)e;
    jr_int(&c, root, "$", "vocab", 1, 1, 1 << 24, &m->vocab);
    jr_int(&c, root, "$", "seq", 1, 1, 1 << 24, &m->seq);
    jr_bool(&c, root, "$", "tied_embeddings", 1, &m->tied_embeddings);
    if (jr_enum(&c, root, "$", "norm", 1, norm_names, PP_NORM_COUNT, &e)) m->norm = (pp_norm)e;
    jr_int(&c, root, "$", "norms_per_block", 0, 0, 4, &m->norms_per_block);
    if (jr_enum(&c, root, "$", "position", 1, pos_names, PP_POS_COUNT, &e)) m->position = (pp_pos)e;
    jr_int(&c, root, "$", "max_positions", 0, 1, 1 << 24, &m->max_positions);
    jr_bool(&c, root, "$", "embed_norm", 0, &m->embed_norm);
    jr_bool(&c, root, "$", "parallel_block", 0, &m->parallel_block);
    jr_num(&c, root, "$", "dropout", 0, 0, 0.99, &m->dropout);
    jr_bool(&c, root, "$", "qk_norm", 0, &m->qk_norm);
    pp__model_rope_read(&c, root, m);
    read_bias(&c, root, m);
    read_moe(&c, root, m);
    read_mla(&c, root, m);
    if (c.st != PP_OK) return c.st;
    pp__model_defaults(m);
    return PP_OK;
}

pp_status pp_model_parse(const char *text, size_t len, const char *where, pp_model *out, pp_error *err)
{
    PP__C_NUMERIC;
    pp_status pst;
    cJSON *root = jr_parse_ex(text, len, where, NULL, err, &pst);
    if (!root) return pst;
    pp_status st = pp__is_hf_config(root) ? pp__hf_config_read(root, where, out, err)
                                          : pp__model_native_read(root, where, out, err);
    cJSON_Delete(root);
    if (st == PP_OK) st = pp_model_validate(out, where, err);
    return st;
}

/* "org/name": a Hugging Face Hub repository id rather than a path. */
static int hub_id(const char *arg)
{
    const char *slash = strchr(arg, '/');
    size_t l = strlen(arg);
    if (!slash || slash == arg || !slash[1] || strchr(slash + 1, '/') || arg[0] == '.' || l > 200) return 0;
    if (l > 5 && !strcmp(arg + l - 5, ".json")) return 0;
    for (const char *p = arg; *p; p++)
        if (!(isalnum((unsigned char)*p) || strchr("-_./", *p))) return 0;
    return 1;
}

/* Lowercase letters and digits only: "Meta-Llama-3.1-8B" -> "metallama318b". */
static void squash(const char *s, char *out, size_t cap)
{
    size_t j = 0;
    for (; *s && j + 1 < cap; s++)
        if (isalnum((unsigned char)*s)) out[j++] = (char)tolower((unsigned char)*s);
    out[j] = '\0';
}

/* The bundled preset for a Hub id: one whose source cites the id, else the
 * longest preset name contained in the repository name (letters and digits
 * compared). NULL when none. */
static const char *hub_preset(const char *id)
{
    const char *best = NULL;
    size_t best_len = 0, idl = strlen(id);
    char repo[256], name[PP_NAME_LEN];
    squash(strchr(id, '/') + 1, repo, sizeof repo);
    for (size_t i = 0; i < pp_embedded_count; i++) {
        const pp_embedded_file *f = &pp_embedded_files[i];
        if (f->kind != PP_PRESET_MODEL) continue;
        for (const char *p = strcasestr(f->data, id); p; p = strcasestr(p + 1, id))
            if (!isalnum((unsigned char)p[idl]) && p[idl] != '.' && p[idl] != '-') return f->name;
        squash(f->name, name, sizeof name);
        size_t l = strlen(name);
        if (l > best_len && strstr(repo, name)) best = f->name, best_len = l;
    }
    return best;
}

pp_status pp_model_load(const char *arg, pp_model *out, pp_error *err)
{
    PP__C_NUMERIC;
    if (!arg || !*arg) return pp__fail(err, PP_ERR_INPUT, "--model: expected a preset name or a JSON file");
    if (!pp__looks_like_path(arg)) {
        const pp_embedded_file *f = pp__preset_find(PP_PRESET_MODEL, arg);
        if (f) return pp_model_parse(f->data, f->len, f->path, out, err);
        if (!jr_exists(arg)) { /* else read it as a path: "is a directory", "is a FIFO" */
            char near[256];
            pp__preset_suggest(PP_PRESET_MODEL, arg, near, sizeof near);
            pp__fail(err, PP_ERR_INPUT, "unknown model '%.64s'%s%s%s (see `parplan models`)", arg,
                     *near ? ": did you mean " : "", near, *near ? "?" : "");
            if (err) jr_sanitize(err->msg);
            return PP_ERR_INPUT;
        }
    }
    if (hub_id(arg) && !jr_exists(arg)) {
        const char *p = hub_preset(arg);
        pp__fail(err, PP_ERR_INPUT, "%s: no such file; a Hugging Face Hub id is not downloaded by parplan: give the "
                 "repository's config.json (huggingface-cli download %s config.json)%s%s%s", arg, arg,
                 p ? ", or the bundled preset " : "", p ? p : "", p ? " of the same shape" : "");
        return PP_ERR_INPUT;
    }
    char *text;
    size_t len;
    pp_status st = jr_read_file(arg, &text, &len, err);
    if (st != PP_OK) return st;
    st = pp_model_parse(text, len, arg, out, err);
    free(text);
    return st;
}

static void add_counts(cJSON *o, const pp_model *m)
{
    pp_param_counts pc;
    pp_model_param_counts(m, &pc);
    cJSON *p = cJSON_AddObjectToObject(o, "params");
    cJSON_AddNumberToObject(p, "total", pc.total);
    cJSON_AddNumberToObject(p, "active", pc.active);
    cJSON_AddNumberToObject(p, "embedding", pc.embedding);
    cJSON_AddNumberToObject(p, "lm_head", pc.lm_head);
    cJSON_AddNumberToObject(p, "attention", pc.attention);
    cJSON_AddNumberToObject(p, "mlp", pc.mlp);
    cJSON_AddNumberToObject(p, "experts", pc.experts);
    cJSON_AddNumberToObject(p, "norms", pc.norms + pc.final_norm);
    if (m->params_reported > 0) {
        cJSON_AddNumberToObject(p, "reported", m->params_reported);
        cJSON_AddStringToObject(p, "reported_as", m->params_reported_str);
    }
    cJSON_AddNumberToObject(o, "fwd_flops_per_token", pp_model_fwd_flops_per_token(m, m->seq));
}

/* The native keys beyond the basic shape, so that `model show --format json`
 * reads back as the same model. */
static void add_shape_details(cJSON *o, const pp_model *m)
{
    cJSON_AddNumberToObject(o, "norms_per_block", m->norms_per_block);
    if (m->position == PP_POS_LEARNED) cJSON_AddNumberToObject(o, "max_positions", m->max_positions);
    cJSON_AddBoolToObject(o, "embed_norm", m->embed_norm);
    cJSON_AddBoolToObject(o, "parallel_block", m->parallel_block);
    cJSON_AddNumberToObject(o, "dropout", m->dropout);
    if (m->qk_norm) cJSON_AddBoolToObject(o, "qk_norm", 1);
    cJSON *b = cJSON_AddObjectToObject(o, "bias");
    cJSON_AddBoolToObject(b, "qkv", m->qkv_bias);
    cJSON_AddBoolToObject(b, "out", m->out_bias);
    cJSON_AddBoolToObject(b, "mlp", m->mlp_bias);
    cJSON_AddBoolToObject(b, "lm_head", m->lm_head_bias);
}

static int moe_pattern_is(const pp_model *m, int first, int every)
{
    for (int i = 0; i < m->layers; i++)
        if ((m->block_kind[i] == PP_BLOCK_MOE) != moe_in_pattern(i, first, every)) return 0;
    return 1;
}

/* MoE blocks as first_dense_layers + every (+ dense_blocks): what the reader
 * expands. */
static void add_moe(cJSON *o, const pp_model *m, int moe_blocks)
{
    if (m->experts <= 0) return;
    int first = -1, second = -1;
    for (int i = 0; i < m->layers && second < 0; i++)
        if (m->block_kind[i] == PP_BLOCK_MOE) {
            if (first < 0) first = i;
            else second = i;
        }
    cJSON *e = cJSON_AddObjectToObject(o, "moe");
    cJSON_AddNumberToObject(e, "experts", m->experts);
    cJSON_AddNumberToObject(e, "topk", m->topk);
    cJSON_AddNumberToObject(e, "shared_experts", m->shared_experts);
    if (m->expert_groups > 0) {
        cJSON_AddNumberToObject(e, "groups", m->expert_groups);
        cJSON_AddNumberToObject(e, "topk_groups", m->topk_groups);
    }
    cJSON_AddNumberToObject(e, "expert_ffn", m->expert_ffn);
    cJSON_AddNumberToObject(e, "capacity_factor", m->capacity_factor);
    if (m->router_sigmoid) cJSON_AddStringToObject(e, "router_score", "sigmoid");
    if (m->router_expert_bias) cJSON_AddBoolToObject(e, "expert_bias", 1);
    if (m->router_scaling > 0) cJSON_AddNumberToObject(e, "routed_scaling", m->router_scaling);
    if (m->aux_loss_coeff > 0) cJSON_AddNumberToObject(e, "aux_loss_coeff", m->aux_loss_coeff);
    if (m->aux_loss_seq) cJSON_AddStringToObject(e, "aux_loss", "sequence");
    int f = first < 0 ? m->layers : first, every = second > first && first >= 0 ? second - first : 1;
    if (!moe_pattern_is(m, f, every)) every = 1; /* all from f, minus dense_blocks */
    cJSON_AddNumberToObject(e, "first_dense_layers", f);
    cJSON_AddNumberToObject(e, "every", every);
    if (!moe_pattern_is(m, f, every)) {
        cJSON *d = cJSON_AddArrayToObject(e, "dense_blocks");
        for (int i = f; i < m->layers; i++)
            if (m->block_kind[i] == PP_BLOCK_DENSE) cJSON_AddItemToArray(d, cJSON_CreateNumber(i));
    }
    cJSON_AddNumberToObject(e, "moe_blocks", moe_blocks);
}

static void add_mla(cJSON *o, const pp_mla *a)
{
    if (a->kv_lora_rank <= 0) return;
    cJSON *e = cJSON_AddObjectToObject(o, "mla");
    cJSON_AddNumberToObject(e, "q_lora_rank", a->q_lora_rank);
    cJSON_AddNumberToObject(e, "kv_lora_rank", a->kv_lora_rank);
    cJSON_AddNumberToObject(e, "qk_nope_head_dim", a->qk_nope_head_dim);
    cJSON_AddNumberToObject(e, "qk_rope_head_dim", a->qk_rope_head_dim);
    cJSON_AddNumberToObject(e, "v_head_dim", a->v_head_dim);
}

char *pp_model_to_json(const pp_model *m)
{
    PP__C_NUMERIC;
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    int moe_blocks = 0;
    for (int i = 0; i < m->layers; i++) moe_blocks += m->block_kind[i] == PP_BLOCK_MOE;
    cJSON_AddNumberToObject(o, "schema_version", PP_SCHEMA_VERSION);
    cJSON_AddStringToObject(o, "name", m->name);
    cJSON_AddStringToObject(o, "description", m->description);
    cJSON_AddStringToObject(o, "source", m->source);
    if (m->params_reported > 0) cJSON_AddStringToObject(o, "params_reported", m->params_reported_str);
    cJSON_AddNumberToObject(o, "layers", m->layers);
    cJSON_AddNumberToObject(o, "hidden", m->hidden);
    cJSON_AddNumberToObject(o, "heads", m->heads);
    cJSON_AddNumberToObject(o, "kv_heads", m->kv_heads);
    cJSON_AddNumberToObject(o, "head_dim", pp__head_dim(m));
    cJSON_AddNumberToObject(o, "ffn", m->ffn);
    cJSON_AddBoolToObject(o, "gated_mlp", m->gated_mlp);
    cJSON_AddStringToObject(o, "activation", act_names[m->activation]);
    cJSON_AddNumberToObject(o, "vocab", m->vocab);
    cJSON_AddNumberToObject(o, "seq", m->seq);
    cJSON_AddBoolToObject(o, "tied_embeddings", m->tied_embeddings);
    cJSON_AddStringToObject(o, "norm", norm_names[m->norm]);
    cJSON_AddStringToObject(o, "position", pos_names[m->position]);
    add_shape_details(o, m);
    pp__model_rope_json(o, m);
    add_moe(o, m, moe_blocks);
    add_mla(o, &m->mla);
    add_counts(o, m);
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    return s;
}

void pp_free(void *p) { cJSON_free(p); }
