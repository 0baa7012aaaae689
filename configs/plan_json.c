/*
 * plan_json.c — the plan object of the JSON output (docs/schema.md): the
 * same object for `estimate`, `plan` and `sweep`. Bytes are bytes.
 */
#include "configs/configs.h"

static void add_strategy(cJSON *o, const pp_strategy *s)
{
    cJSON *j = cJSON_AddObjectToObject(o, "strategy");
    cJSON_AddNumberToObject(j, "dp", s->dp);
    cJSON_AddNumberToObject(j, "tp", s->tp);
    cJSON_AddNumberToObject(j, "pp", s->pp);
    cJSON_AddNumberToObject(j, "cp", s->cp);
    cJSON_AddNumberToObject(j, "ep", s->ep);
    cJSON_AddBoolToObject(j, "sp", s->sp);
    cJSON_AddNumberToObject(j, "zero", s->zero);
    cJSON_AddStringToObject(j, "recompute", pp_recompute_name(s->recompute));
    cJSON_AddNumberToObject(j, "recompute_layers", s->recompute_layers);
    int n;
    const char *const *prec = pp_enum_names(PP_ENUM_PRECISION, &n);
    cJSON_AddStringToObject(j, "precision", prec[s->precision]);
    cJSON_AddStringToObject(j, "optimizer", pp_optimizer_name(s->optimizer));
    cJSON_AddStringToObject(j, "attention", pp_attention_name(s->attention));
    cJSON_AddNumberToObject(j, "micro_batch", s->micro_batch);
    cJSON_AddNumberToObject(j, "grad_accum", s->grad_accum);
    cJSON_AddNumberToObject(j, "global_batch", s->global_batch);
    cJSON_AddNumberToObject(j, "seq", s->seq);
    cJSON_AddStringToObject(j, "schedule", pp_schedule_name(s->schedule));
    cJSON_AddNumberToObject(j, "virtual_stages", s->virtual_stages);
    cJSON_AddStringToObject(j, "offload", pp_offload_name(s->offload));
    cJSON *sl = cJSON_AddArrayToObject(j, "stage_layers");
    for (int i = 0; i < s->pp; i++) cJSON_AddItemToArray(sl, cJSON_CreateNumber(s->stage_layers[i]));
}

static void add_stage(cJSON *arr, const pp_stage_mem *st)
{
    static const char *const phase[] = {"forward_backward", "optimizer_step"};
    cJSON *j = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, j);
    cJSON_AddNumberToObject(j, "stage", st->stage);
    cJSON_AddNumberToObject(j, "first_layer", st->first_layer);
    cJSON_AddNumberToObject(j, "last_layer", st->last_layer);
    cJSON_AddBoolToObject(j, "embedding", st->has_embedding);
    cJSON_AddBoolToObject(j, "lm_head", st->has_lm_head);
    cJSON_AddNumberToObject(j, "params_bytes", st->params_bytes);
    cJSON_AddNumberToObject(j, "grads_bytes", st->grads_bytes);
    cJSON_AddNumberToObject(j, "optimizer_bytes", st->optimizer_bytes);
    cJSON_AddNumberToObject(j, "activations_bytes", st->activations_bytes);
    cJSON_AddNumberToObject(j, "buffers_bytes", st->buffers_bytes);
    cJSON_AddNumberToObject(j, "total_bytes", st->total_bytes);
    cJSON_AddStringToObject(j, "peak_phase", phase[st->peak_phase]);
    cJSON *d = cJSON_AddObjectToObject(j, "detail");
    cJSON_AddNumberToObject(d, "forward_backward_bytes", st->phase_bytes[PP_PHASE_FWD_BWD]);
    cJSON_AddNumberToObject(d, "optimizer_step_bytes", st->phase_bytes[PP_PHASE_OPTIMIZER]);
    cJSON_AddNumberToObject(d, "inflight_microbatches", st->inflight);
    cJSON_AddNumberToObject(d, "activations_per_microbatch_bytes", st->act_per_microbatch);
    cJSON_AddNumberToObject(d, "logits_bytes", st->logits_bytes);
    cJSON_AddNumberToObject(d, "recompute_bytes", st->recompute_bytes);
    cJSON_AddNumberToObject(d, "zero_gather_bytes", st->zero_gather_bytes);
    cJSON_AddNumberToObject(d, "bucket_bytes", st->bucket_bytes);
    cJSON_AddNumberToObject(d, "p2p_bytes", st->p2p_bytes);
    cJSON_AddNumberToObject(d, "context_bytes", st->context_bytes);
    cJSON_AddNumberToObject(d, "fragmentation_bytes", st->fragmentation_bytes);
    cJSON_AddNumberToObject(d, "host_bytes", st->host_bytes);
}

static void add_memory(cJSON *o, const pp_memory *mem)
{
    cJSON *j = cJSON_AddObjectToObject(o, "memory");
    cJSON_AddNumberToObject(j, "peak_bytes", mem->peak_bytes);
    cJSON_AddNumberToObject(j, "peak_stage", mem->peak_stage);
    cJSON_AddNumberToObject(j, "gpu_bytes", mem->gpu_bytes);
    cJSON_AddBoolToObject(j, "fits", mem->fits);
    cJSON_AddNumberToObject(j, "host_bytes_per_node", mem->host_bytes_per_node);
    cJSON_AddNumberToObject(j, "host_usable_bytes", mem->host_usable_bytes);
    cJSON_AddBoolToObject(j, "host_fits", mem->host_fits);
    cJSON *arr = cJSON_AddArrayToObject(j, "stages");
    for (int i = 0; i < mem->nstages; i++) add_stage(arr, &mem->stages[i]);
}

char *pp_plan_to_json(const pp_model *m, const pp_cluster *c, const pp_plan *p)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddNumberToObject(o, "schema_version", PP_SCHEMA_VERSION);
    cJSON_AddStringToObject(o, "model", m->name);
    cJSON_AddStringToObject(o, "cluster", c->name);
    cJSON_AddStringToObject(o, "gpu", c->gpu.name);
    cJSON_AddNumberToObject(o, "nodes", c->nodes);
    cJSON_AddNumberToObject(o, "gpus", pp_cluster_gpus(c));
    add_strategy(o, &p->strategy);
    add_memory(o, &p->memory);
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    return s;
}
