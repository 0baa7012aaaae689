/*
 * configs.h — private interface of the configs/ room: the readers and
 * writers of every file format. The only room that touches cJSON.
 */
#ifndef PARPLAN_CONFIGS_H
#define PARPLAN_CONFIGS_H

#include "configs/jsonread.h"

/* 1 if root looks like a Hugging Face config.json (model_type/architectures). */
int pp__is_hf_config(const cJSON *root);
/* Reads a parsed HF config.json into m (then validated by the caller). */
pp_status pp__hf_config_read(const cJSON *root, const char *where, pp_model *m, pp_error *err);
/* Reads parplan's native model JSON. */
pp_status pp__model_native_read(const cJSON *root, const char *where, pp_model *m, pp_error *err);
/* Fills defaults common to both readers (kv_heads = heads, 2 norms, ...). */
void pp__model_defaults(pp_model *m);
/* The rotary/norm fields (model_rope.c): names of pp_rope_scaling values,
 * the native keys rope_theta, rope_scaling, norm_eps (read after position),
 * and their JSON rendering (only the known ones: 0 = unknown is left out). */
extern const char *const pp__rope_scaling_names[PP_ROPE_COUNT];
void pp__model_rope_read(jr_ctx *c, const cJSON *root, pp_model *m);
void pp__model_rope_json(cJSON *o, const pp_model *m);
/* Where a HF architecture keeps them, and the transformers defaults. */
typedef struct pp__hf_rope_spec {
    const char *theta_key;   /* rope_theta (gpt_neox: rotary_emb_base) */
    const char *theta_alias; /* another accepted name, or NULL */
    double theta;            /* default rotary base */
    const char *eps_key;     /* rms_norm_eps, layer_norm_eps, ...; NULL = fixed */
    double eps;              /* default (or fixed) epsilon */
} pp__hf_rope_spec;
/* Reads them from a HF config.json after the architecture's reader set
 * m->position: theta/scaling only for RoPE models. */
void pp__hf_rope_read(jr_ctx *c, const cJSON *r, const pp__hf_rope_spec *spec, pp_model *m);
/* Marks blocks as MoE: the first `first_dense` stay dense, then every
 * `every`-th block is MoE (every = 1: all of them). */
void pp__model_set_moe_layers(pp_model *m, int first_dense, int every);

/* The plan object of the JSON output (docs/schema.md); caller deletes. */
cJSON *pp__plan_json(const pp_model *m, const pp_cluster *c, const pp_plan *p);

/* Reads one scenario object (docs/sweep.md) at JSON path `path`. */
pp_status pp__scenario_read(const cJSON *o, const char *where, const char *path, pp_scenario *sc, pp_error *err);
/* The result object of one scenario: {"index", "scenario", "plan"|"error"};
 * caller deletes. status receives the scenario's pp_status. */
cJSON *pp__scenario_result(int index, const cJSON *scenario, const char *where, pp_status *status);
/* The keys a scenario and an estimate request share (optimizer, attention,
 * loss, fine-tuning, ...) into b. */
void pp__scenario_read_base(jr_ctx *c, const cJSON *o, const char *path, pp_strategy *b);
/* {"exit_code", "status", "field", "message"} of a failed request; field is
 * the JSON path of the request at fault, NULL to read it from the message
 * (pp_error_field; a flag --x-y becomes "$.x_y"), "" for none. */
cJSON *pp__error_object(pp_status st, const pp_error *err, const char *field);

/* pp_write_files with a hook called before installing file i (tests make a
 * later install fail there to check the roll-back). */
pp_status pp__write_files_ex(const pp_out_file *files, int n, unsigned flags, pp_error *err,
                             void (*before_install)(int i, void *user), void *user);

#endif
