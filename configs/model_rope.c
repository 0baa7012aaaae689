/*
 * model_rope.c — the fields of a model that change training but not its
 * cost, which launch files must carry: the rotary base, the RoPE scaling and
 * the norm epsilon (docs/formats.md). Read from the native model JSON and
 * from a Hugging Face config.json (transformers 4.x rope_theta/rope_scaling,
 * 5.x rope_parameters), and written back by `model show --format json`.
 */
#include <stdio.h>
#include <string.h>

#include "configs/configs.h"

#define ROPE_THETA_MAX 1e12   /* a larger rotary base is rejected as absurd */
#define ROPE_FACTOR_MAX 1024  /* context-extension factors (Llama 3.1: 8, DeepSeek-V3: 40) */
#define ROPE_FREQ_MAX 1024    /* llama3 low/high frequency factors (1, 4) */
#define NORM_EPS_MAX 0.1      /* epsilons are ~1e-5; 0.1 would change the norm itself */

const char *const pp__rope_scaling_names[PP_ROPE_COUNT] = {"none", "llama3", "yarn", "linear", "dynamic"};

/* The rotary fields of one source (top-level keys, rope_parameters). */
typedef struct rope_f {
    double theta;
    pp_rope_scaling kind;
    double factor, low, high;
    int orig;
} rope_f;

static const char *const native_scaling_keys[] = {"type", "factor", "low_freq_factor", "high_freq_factor",
                                                  "original_max_position_embeddings", NULL};

/* A number in (lo, hi]: present and valid -> 1. */
static int num_above(jr_ctx *c, const cJSON *o, const char *path, const char *key, int req, double lo,
                     double hi, const char *what, double *out)
{
    double v = 0;
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (it && cJSON_IsNumber(it) && !(it->valuedouble > lo && it->valuedouble <= hi))
        return jr_fail(c, path, key, "expected %s, a number in (%g, %g], got %g", what, lo, hi, it->valuedouble);
    if (!jr_num(c, o, path, key, req, lo, hi, &v)) return 0;
    *out = v;
    return 1;
}

static int read_theta(jr_ctx *c, const cJSON *o, const char *path, const char *key, double *out)
{
    return num_above(c, o, path, key, 0, 1, ROPE_THETA_MAX, "the rotary base (e.g. 10000)", out);
}

static int read_eps(jr_ctx *c, const cJSON *o, const char *path, const char *key, double *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (it && cJSON_IsNumber(it) && !(it->valuedouble > 0 && it->valuedouble < NORM_EPS_MAX))
        return jr_fail(c, path, key, "expected the norm epsilon, a number in (0, %g) (e.g. 1e-05), got %g",
                       NORM_EPS_MAX, it->valuedouble);
    return jr_num(c, o, path, key, 0, 0, NORM_EPS_MAX, out);
}

/* factor, and what each kind takes besides: llama3 low/high frequency factors
 * and the original context (all required, HF's rope_config_validation);
 * yarn and dynamic an optional original context. hf: keys another kind
 * does not take are ignored (transformers ignores them), else an error. */
static void read_scaling_params(jr_ctx *c, const cJSON *s, const char *path, int hf, rope_f *f)
{
    int llama3 = f->kind == PP_ROPE_LLAMA3, orig_ok = llama3 || f->kind == PP_ROPE_YARN || f->kind == PP_ROPE_DYNAMIC;
    const char *kind = pp__rope_scaling_names[f->kind];
    num_above(c, s, path, "factor", 1, 0, ROPE_FACTOR_MAX, "the scaling factor", &f->factor);
    if (!hf && !llama3 && cJSON_GetObjectItemCaseSensitive(s, "low_freq_factor"))
        jr_fail(c, path, "low_freq_factor", "only for type llama3, not %s", kind);
    if (!hf && !llama3 && cJSON_GetObjectItemCaseSensitive(s, "high_freq_factor"))
        jr_fail(c, path, "high_freq_factor", "only for type llama3, not %s", kind);
    if (!hf && !orig_ok && cJSON_GetObjectItemCaseSensitive(s, "original_max_position_embeddings"))
        jr_fail(c, path, "original_max_position_embeddings", "only for type llama3, yarn or dynamic, not %s", kind);
    if (orig_ok) jr_int(c, s, path, "original_max_position_embeddings", llama3, 1, 1 << 24, &f->orig);
    if (!llama3) return;
    num_above(c, s, path, "low_freq_factor", 1, 0, ROPE_FREQ_MAX, "the low frequency factor", &f->low);
    num_above(c, s, path, "high_freq_factor", 1, 0, ROPE_FREQ_MAX, "the high frequency factor", &f->high);
    if (c->st == PP_OK && !(f->high > f->low))
        jr_fail(c, path, "high_freq_factor", "%g must be above low_freq_factor %g (llama3 scaling divides by their "
                "difference)", f->high, f->low);
}

/* HF names the kind rope_type (4.43+) or type (earlier; both are saved by
 * some versions). "default" is no scaling, and so is a rope_parameters
 * without a kind (transformers 5 fills in "default"). 1 when a kind was read. */
static int hf_scaling_kind(jr_ctx *c, const cJSON *s, const char *path, int params, rope_f *f)
{
    char a[32] = "", b[32] = "";
    int has_a = jr_str(c, s, path, "rope_type", 0, a, sizeof a), has_b = jr_str(c, s, path, "type", 0, b, sizeof b);
    if (has_a && has_b && strcmp(a, b))
        return jr_fail(c, path, "type", "\"%s\" differs from rope_type \"%s\"", b, a);
    const char *t = has_a ? a : b;
    if (!has_a && !has_b) {
        if (s->child && !params) jr_fail(c, path, "rope_type", "missing required field (the scaling kind)");
        return 0;
    }
    f->kind = PP_ROPE_NONE;
    if (!strcmp(t, "default")) return 1;
    for (int k = 1; k < PP_ROPE_COUNT; k++)
        if (!strcmp(t, pp__rope_scaling_names[k])) f->kind = (pp_rope_scaling)k;
    if (f->kind == PP_ROPE_NONE)
        return jr_fail(c, path, has_a ? "rope_type" : "type", "unsupported RoPE scaling \"%s\": parplan carries "
                       "default, llama3, yarn, linear and dynamic", t);
    return 1;
}

/* rope_scaling or rope_parameters of a HF config; null or {} = none. */
static void hf_scaling(jr_ctx *c, const cJSON *r, const char *key, rope_f *f)
{
    char path[48];
    const cJSON *s = jr_obj(c, r, "$", key, 0);
    if (!s) return;
    snprintf(path, sizeof path, "$.%s", key);
    int params = !strcmp(key, "rope_parameters");
    if (params) read_theta(c, s, path, "rope_theta", &f->theta);
    if (hf_scaling_kind(c, s, path, params, f) && f->kind != PP_ROPE_NONE) read_scaling_params(c, s, path, 1, f);
}

/* Two sources of one field must agree (a config saved with both). */
static int agree(jr_ctx *c, const char *key, double a, double b)
{
    if (a != 0 && b != 0 && a != b)
        return jr_fail(c, "$", key, "%g differs from rope_parameters' %g: give one of them", a, b);
    return 1;
}

void pp__hf_rope_read(jr_ctx *c, const cJSON *r, const pp__hf_rope_spec *spec, pp_model *m)
{
    rope_f a = {0}, b = {0};
    if (spec->eps_key) {
        m->norm_eps = spec->eps;
        read_eps(c, r, "$", spec->eps_key, &m->norm_eps);
    } else {
        m->norm_eps = spec->eps; /* not configurable: the architecture's constant */
    }
    if (m->position != PP_POS_ROPE || !spec->theta_key) return;
    const char *key = spec->theta_key;
    if (spec->theta_alias && cJSON_GetObjectItemCaseSensitive(r, spec->theta_alias)) {
        if (cJSON_GetObjectItemCaseSensitive(r, key))
            jr_fail(c, "$", spec->theta_alias, "duplicates \"%s\": give only one of them", key);
        key = spec->theta_alias;
    }
    read_theta(c, r, "$", key, &a.theta);
    hf_scaling(c, r, "rope_scaling", &a);
    hf_scaling(c, r, "rope_parameters", &b);
    if (c->st != PP_OK || !agree(c, key, a.theta, b.theta)) return;
    if (a.kind != PP_ROPE_NONE && b.kind != PP_ROPE_NONE
        && (a.kind != b.kind || a.factor != b.factor || a.low != b.low || a.high != b.high || a.orig != b.orig)) {
        jr_fail(c, "$", "rope_scaling", "differs from rope_parameters: give one of them");
        return;
    }
    rope_f *s = b.kind != PP_ROPE_NONE ? &b : &a;
    m->rope_theta = a.theta ? a.theta : b.theta ? b.theta : spec->theta;
    m->rope_scaling = s->kind;
    m->rope_factor = s->factor;
    m->rope_low_freq = s->low;
    m->rope_high_freq = s->high;
    m->rope_original_max = s->orig;
}

/* ------------------------------------------------------------ native JSON */

static void native_scaling(jr_ctx *c, const cJSON *root, pp_model *m)
{
    const cJSON *s = jr_obj(c, root, "$", "rope_scaling", 0);
    rope_f f = {0};
    int kind;
    if (!s) return;
    jr_check_keys(c, s, "$.rope_scaling", native_scaling_keys);
    /* "none" is spelled by leaving rope_scaling out */
    if (!jr_enum(c, s, "$.rope_scaling", "type", 1, pp__rope_scaling_names + 1, PP_ROPE_COUNT - 1, &kind)) return;
    f.kind = (pp_rope_scaling)(kind + 1);
    read_scaling_params(c, s, "$.rope_scaling", 0, &f);
    m->rope_scaling = f.kind;
    m->rope_factor = f.factor;
    m->rope_low_freq = f.low;
    m->rope_high_freq = f.high;
    m->rope_original_max = f.orig;
}

void pp__model_rope_read(jr_ctx *c, const cJSON *root, pp_model *m)
{
    read_eps(c, root, "$", "norm_eps", &m->norm_eps);
    int rope_keys = cJSON_GetObjectItemCaseSensitive(root, "rope_theta") != NULL;
    rope_keys += 2 * (cJSON_GetObjectItemCaseSensitive(root, "rope_scaling") != NULL);
    if (rope_keys && m->position != PP_POS_ROPE && c->st == PP_OK) {
        jr_fail(c, "$", rope_keys & 1 ? "rope_theta" : "rope_scaling", "only for position \"rope\", not \"%s\"",
                m->position == PP_POS_ALIBI ? "alibi" : "learned");
        return;
    }
    read_theta(c, root, "$", "rope_theta", &m->rope_theta);
    native_scaling(c, root, m);
}

void pp__model_rope_json(cJSON *o, const pp_model *m)
{
    if (m->rope_theta > 0) cJSON_AddNumberToObject(o, "rope_theta", m->rope_theta);
    if (m->rope_scaling != PP_ROPE_NONE && m->rope_scaling < PP_ROPE_COUNT) {
        cJSON *s = cJSON_AddObjectToObject(o, "rope_scaling");
        cJSON_AddStringToObject(s, "type", pp__rope_scaling_names[m->rope_scaling]);
        cJSON_AddNumberToObject(s, "factor", m->rope_factor);
        if (m->rope_scaling == PP_ROPE_LLAMA3) {
            cJSON_AddNumberToObject(s, "low_freq_factor", m->rope_low_freq);
            cJSON_AddNumberToObject(s, "high_freq_factor", m->rope_high_freq);
        }
        if (m->rope_original_max > 0)
            cJSON_AddNumberToObject(s, "original_max_position_embeddings", m->rope_original_max);
    }
    if (m->norm_eps > 0) cJSON_AddNumberToObject(o, "norm_eps", m->norm_eps);
}
