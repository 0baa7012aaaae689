/*
 * plan_json.c — the plan object of the JSON output (docs/schema.md): the
 * same object for `estimate`, `plan` and `sweep`. Bytes are bytes.
 */
#include <stdio.h>
#include <string.h>

#include "configs/configs.h"

static void add_strategy(cJSON *o, const pp_strategy *s)
{
    cJSON *j = cJSON_AddObjectToObject(o, "strategy");
    cJSON_AddStringToObject(j, "framework", pp_framework_name(s->framework));
    cJSON_AddStringToObject(j, "launcher", pp_strategy_launcher(s));
    cJSON_AddNumberToObject(j, "dp", s->dp);
    cJSON_AddNumberToObject(j, "tp", s->tp);
    cJSON_AddNumberToObject(j, "pp", s->pp);
    cJSON_AddNumberToObject(j, "cp", s->cp);
    cJSON_AddNumberToObject(j, "ep", s->ep);
    cJSON_AddNumberToObject(j, "etp", s->etp > 0 ? s->etp : s->tp);
    cJSON_AddBoolToObject(j, "sp", s->sp);
    cJSON_AddNumberToObject(j, "zero", s->zero);
    cJSON_AddNumberToObject(j, "shard", s->shard);
    cJSON_AddStringToObject(j, "recompute", pp_recompute_name(s->recompute));
    cJSON_AddNumberToObject(j, "recompute_layers", s->recompute_layers);
    cJSON *rcm = cJSON_AddArrayToObject(j, "recompute_modules"); /* [] = Megatron's default, core_attn */
    const char *const *rcn = pp_enum_names(PP_ENUM_RECOMPUTE_MODULES, &(int){0});
    for (int i = 0; i < PP_RC_COUNT && rcm; i++)
        if (s->recompute_modules >> i & 1) cJSON_AddItemToArray(rcm, cJSON_CreateString(rcn[i]));
    cJSON_AddNumberToObject(j, "act_offload_layers", s->act_offload_layers);
    int n;
    const char *const *prec = pp_enum_names(PP_ENUM_PRECISION, &n);
    cJSON_AddStringToObject(j, "precision", prec[s->precision]);
    cJSON_AddStringToObject(j, "optimizer", pp_optimizer_name(s->optimizer));
    const char *const *states = pp_enum_names(PP_ENUM_OPT_STATES, &n);
    cJSON_AddStringToObject(j, "opt_states", (unsigned)s->opt_states < (unsigned)n ? states[s->opt_states] : "?");
    cJSON_AddStringToObject(j, "attention", pp_attention_name(s->attention));
    cJSON_AddStringToObject(j, "cp_comm", pp_cp_comm_name(s->cp_comm));
    cJSON_AddStringToObject(j, "loss", pp_loss_name(s->loss));
    const char *const *grads = pp_enum_names(PP_ENUM_GRAD_ACCUM, &n);
    cJSON_AddStringToObject(j, "grad_accum_dtype", (unsigned)s->grad_accum_dtype < (unsigned)n ? grads[s->grad_accum_dtype] : "auto");
    cJSON_AddBoolToObject(j, "free_pipeline_outputs", s->buf.free_pipeline_outputs > 0);
    cJSON_AddBoolToObject(j, "expandable_segments", s->buf.expandable_segments > 0);
    cJSON_AddBoolToObject(j, "fp8_param_gather", s->precision == PP_PREC_FP8 && s->fp8_param_gather > 0);
    cJSON_AddBoolToObject(j, "overlap_dp", s->overlap_dp > 0);
    cJSON_AddBoolToObject(j, "overlap_tp", s->overlap_tp > 0);
    cJSON_AddBoolToObject(j, "overlap_ep", s->overlap_ep > 0);
    cJSON_AddStringToObject(j, "ep_dispatch", s->ep_dispatch ? "hierarchical" : "alltoall");
    cJSON_AddNumberToObject(j, "micro_batch", s->micro_batch);
    cJSON_AddNumberToObject(j, "grad_accum", s->grad_accum);
    cJSON_AddNumberToObject(j, "global_batch", s->global_batch);
    cJSON_AddNumberToObject(j, "seq", s->seq);
    cJSON_AddStringToObject(j, "schedule", pp_schedule_name(s->schedule));
    cJSON_AddNumberToObject(j, "virtual_stages", s->virtual_stages);
    if (s->vp_group > 0) cJSON_AddNumberToObject(j, "vp_group", s->vp_group);
    cJSON_AddStringToObject(j, "offload", pp_offload_name(s->offload));
    cJSON *sl = cJSON_AddArrayToObject(j, "stage_layers");
    for (int i = 0; i < s->pp; i++) cJSON_AddItemToArray(sl, cJSON_CreateNumber(s->stage_layers[i]));
    if (s->schedule != PP_SCHED_INTERLEAVED || s->pp < 2) return;
    cJSON *cl = cJSON_AddArrayToObject(j, "chunk_layers"); /* virtual stage k: chunk k / pp of stage k % pp */
    for (int k = 0; k < s->pp * s->virtual_stages; k++)
        cJSON_AddItemToArray(cl, cJSON_CreateNumber(pp__chunk_blocks(s, k % s->pp, k / s->pp)));
}

static void add_params(cJSON *o, const pp_plan *p)
{
    const pp_finetune *f = &p->strategy.ft;
    int n;
    cJSON *j = cJSON_AddObjectToObject(o, "training");
    cJSON_AddStringToObject(j, "mode", pp_enum_names(PP_ENUM_MODE, &n)[f->mode]);
    cJSON_AddNumberToObject(j, "params_total", p->params_total);
    cJSON_AddNumberToObject(j, "params_trainable", p->params_trainable);
    cJSON_AddNumberToObject(j, "trainable_fraction", p->params_total > 0 ? p->params_trainable / p->params_total : 0);
    if (f->mode != PP_MODE_FULL) {
        static const char *const tn[] = {"q", "k", "v", "o", "gate", "up", "down", "lm_head"};
        cJSON_AddNumberToObject(j, "lora_rank", f->lora_rank);
        cJSON_AddNumberToObject(j, "lora_alpha", f->lora_alpha);
        cJSON_AddNumberToObject(j, "lora_dropout", f->lora_dropout);
        cJSON *t = cJSON_AddArrayToObject(j, "lora_targets");
        for (int i = 0; i < 8; i++)
            if (f->lora_targets & (1u << i)) cJSON_AddItemToArray(t, cJSON_CreateString(tn[i]));
    } else {
        cJSON_AddBoolToObject(j, "freeze_embeddings", f->freeze_embeddings);
        cJSON_AddNumberToObject(j, "freeze_layers", f->freeze_layers);
    }
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
    cJSON_AddNumberToObject(d, "nvme_bytes", st->nvme_bytes);
    cJSON_AddNumberToObject(d, "act_offload_bytes", st->act_offload_bytes);
    cJSON_AddNumberToObject(d, "grads_total_bytes", st->grads_total_bytes);
    cJSON_AddNumberToObject(d, "grads_persistent_bytes", st->grads_persistent_bytes);
    cJSON_AddNumberToObject(d, "cast_bytes", st->cast_bytes);
    cJSON_AddNumberToObject(d, "opt_temp_bytes", st->opt_temp_bytes);
    cJSON_AddNumberToObject(d, "live_bytes", st->live_bytes);
}

static void add_memory(cJSON *o, const pp_memory *mem, pp_fit fit)
{
    cJSON *j = cJSON_AddObjectToObject(o, "memory");
    cJSON_AddNumberToObject(j, "peak_bytes", mem->peak_bytes);
    cJSON_AddNumberToObject(j, "peak_stage", mem->peak_stage);
    cJSON_AddNumberToObject(j, "gpu_bytes", mem->gpu_bytes);
    cJSON_AddBoolToObject(j, "fits", mem->fits);
    cJSON_AddStringToObject(j, "fit", pp_fit_name(fit)); /* the verdict with the error bar */
    cJSON_AddNumberToObject(j, "live_peak_bytes", mem->live_peak_bytes);
    cJSON_AddNumberToObject(j, "load_bytes", mem->load_bytes);
    cJSON_AddBoolToObject(j, "live_fits", mem->live_fits);
    cJSON_AddNumberToObject(j, "host_bytes_per_node", mem->host_bytes_per_node);
    cJSON_AddNumberToObject(j, "host_usable_bytes", mem->host_usable_bytes);
    cJSON_AddBoolToObject(j, "host_fits", mem->host_fits);
    cJSON_AddNumberToObject(j, "nvme_bytes_per_node", mem->nvme_bytes_per_node);
    cJSON_AddNumberToObject(j, "nvme_usable_bytes", mem->nvme_usable_bytes);
    cJSON_AddBoolToObject(j, "nvme_fits", mem->nvme_fits);
    cJSON *arr = cJSON_AddArrayToObject(j, "stages");
    for (int i = 0; i < mem->nstages; i++) add_stage(arr, &mem->stages[i]);
}

static void add_time(cJSON *o, const pp_plan *p)
{
    const pp_time *t = &p->time;
    cJSON *j = cJSON_AddObjectToObject(o, "time");
    cJSON_AddNumberToObject(j, "step_s", t->step_s);
    cJSON_AddNumberToObject(j, "compute_s", t->compute_s);
    cJSON_AddNumberToObject(j, "recompute_s", t->recompute_s);
    cJSON_AddNumberToObject(j, "tp_comm_s", t->tp_comm_s);
    cJSON_AddNumberToObject(j, "cp_comm_s", t->cp_comm_s);
    cJSON_AddNumberToObject(j, "ep_comm_s", t->ep_comm_s);
    cJSON_AddNumberToObject(j, "pp_comm_s", t->pp_comm_s);
    cJSON_AddNumberToObject(j, "dp_comm_s", t->dp_comm_s);
    cJSON_AddNumberToObject(j, "dp_comm_exposed_s", t->dp_comm_exposed_s);
    cJSON_AddNumberToObject(j, "bubble_s", t->bubble_s);
    cJSON_AddNumberToObject(j, "optimizer_s", t->optimizer_s);
    cJSON_AddNumberToObject(j, "offload_s", t->offload_s);
    cJSON_AddNumberToObject(j, "expert_host_s", t->expert_host_s);
    cJSON_AddNumberToObject(j, "slowest_stage", t->slowest_stage);
    const pp_throughput *q = &p->throughput;
    j = cJSON_AddObjectToObject(o, "throughput");
    cJSON_AddNumberToObject(j, "tokens_per_s", q->tokens_per_s);
    cJSON_AddNumberToObject(j, "samples_per_s", q->samples_per_s);
    cJSON_AddNumberToObject(j, "model_tflops_per_gpu", q->model_tflops_per_gpu);
    cJSON_AddNumberToObject(j, "hardware_tflops_per_gpu", q->hardware_tflops_per_gpu);
    cJSON_AddNumberToObject(j, "mfu", q->mfu);
    cJSON_AddNumberToObject(j, "hfu", q->hfu);
    if (p->train.tokens > 0) {
        j = cJSON_AddObjectToObject(o, "train");
        cJSON_AddNumberToObject(j, "tokens", p->train.tokens);
        cJSON_AddNumberToObject(j, "days", p->train.days);
        cJSON_AddNumberToObject(j, "gpu_hours", p->train.gpu_hours);
        cJSON_AddNumberToObject(j, "cost_usd", p->train.cost_usd);
        cJSON_AddNumberToObject(j, "energy_kwh", p->train.energy_kwh);
    }
}

/* Error bars (costmodel/uncertainty.c): the intervals, their groups, the
 * mechanisms no validated run covers. */
static void add_uncertainty(cJSON *o, const pp_uncertainty *u)
{
    cJSON *j = cJSON_AddObjectToObject(o, "uncertainty");
    cJSON_AddNumberToObject(j, "level", u->level);
    cJSON_AddNumberToObject(j, "step_lo_s", u->step_s.lo);
    cJSON_AddNumberToObject(j, "step_hi_s", u->step_s.hi);
    cJSON_AddNumberToObject(j, "step_rows", u->step_s.rows);
    cJSON_AddStringToObject(j, "step_group", u->step_s.group);
    cJSON_AddNumberToObject(j, "peak_lo_bytes", u->peak_bytes.lo);
    cJSON_AddNumberToObject(j, "peak_hi_bytes", u->peak_bytes.hi);
    cJSON_AddNumberToObject(j, "peak_rows", u->peak_bytes.rows);
    cJSON_AddStringToObject(j, "peak_group", u->peak_bytes.group);
    cJSON *n = cJSON_AddArrayToObject(j, "notes");
    char buf[sizeof u->notes];
    snprintf(buf, sizeof buf, "%s", u->notes);
    for (char *p = buf, *e; *p; p = e) {
        e = strstr(p, "; ");
        if (e) *e = '\0', e += 2;
        else e = p + strlen(p);
        cJSON_AddItemToArray(n, cJSON_CreateString(p));
    }
}

cJSON *pp__plan_json(const pp_model *m, const pp_cluster *c, const pp_plan *p)
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
    add_params(o, p);
    add_memory(o, &p->memory, p->uncertainty.fit);
    add_time(o, p);
    add_uncertainty(o, &p->uncertainty);
    return o;
}

char *pp_plan_to_json(const pp_model *m, const pp_cluster *c, const pp_plan *p)
{
    PP__C_NUMERIC;
    cJSON *o = pp__plan_json(m, c, p);
    if (!o) return NULL;
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    return s;
}
