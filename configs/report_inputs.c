/*
 * report_inputs.c — the HTML report's input tables: the model, the cluster
 * and the strategy (or the search options) in full, so that the page says
 * exactly what was planned. Units as the rest of parplan prints them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "configs/report.h"

#define GIB 1073741824.0

static void row(pp__sbuf *b, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void row(pp__sbuf *b, const char *key, const char *fmt, ...)
{
    char v[PP_TEXT_LEN + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    pp__sb_printf(b, "<tr><th>%s</th><td>", key);
    pp__svg_esc(b, v);
    pp__sb_printf(b, "</td></tr>\n");
}

static const char *yes(int x) { return x ? "yes" : "no"; }

void pp__report_model(pp__sbuf *b, const pp_model *m)
{
    pp_param_counts pc;
    pp_model_param_counts(m, &pc);
    static const char *const act[] = {"gelu", "relu", "silu"}, *const norm[] = {"layernorm", "rmsnorm"},
                             *const pos[] = {"rope", "learned", "alibi"};
    pp__sb_printf(b, "<table class=\"kv\"><caption>Model</caption>\n");
    row(b, "name", "%s", m->name);
    row(b, "description", "%s", m->description);
    row(b, "source", "%s", m->source);
    row(b, "parameters", "%.6g B (%.0f; active per token %.6g B)%s%s", pc.total / 1e9, pc.total, pc.active / 1e9,
        m->params_reported_str[0] ? "; published " : "", m->params_reported_str);
    int moe = 0;
    for (int i = 0; i < m->layers; i++) moe += m->block_kind[i] == PP_BLOCK_MOE;
    row(b, "blocks", "%d (%d MoE)", m->layers, moe);
    row(b, "hidden / FFN", "%d / %d (%s, %s)", m->hidden, m->ffn, m->gated_mlp ? "gated" : "not gated",
        m->activation < PP_ACT_COUNT ? act[m->activation] : "?");
    row(b, "heads / KV heads / head dim", "%d / %d / %d", m->heads, m->kv_heads, m->head_dim ? m->head_dim : m->hidden / m->heads);
    row(b, "vocabulary / sequence", "%d / %d", m->vocab, m->seq);
    row(b, "embeddings", "%s; position %s (%d rows); norm after embedding %s", m->tied_embeddings ? "tied" : "untied",
        m->position < PP_POS_COUNT ? pos[m->position] : "?", m->max_positions, yes(m->embed_norm));
    row(b, "norm", "%s, %d per block; parallel attention+MLP %s", m->norm < PP_NORM_COUNT ? norm[m->norm] : "?",
        m->norms_per_block, yes(m->parallel_block));
    row(b, "biases", "qkv %s, out %s, mlp %s, lm head %s", yes(m->qkv_bias), yes(m->out_bias), yes(m->mlp_bias),
        yes(m->lm_head_bias));
    row(b, "dropout", "%g", m->dropout);
    if (m->experts > 0)
        row(b, "experts", "%d routed (top-%d) + %d shared, expert FFN %d, capacity factor %g", m->experts, m->topk,
            m->shared_experts, m->expert_ffn, m->capacity_factor);
    if (m->mla.kv_lora_rank > 0)
        row(b, "MLA", "q rank %d, kv rank %d, qk nope %d + rope %d, v %d", m->mla.q_lora_rank, m->mla.kv_lora_rank,
            m->mla.qk_nope_head_dim, m->mla.qk_rope_head_dim, m->mla.v_head_dim);
    pp__sb_printf(b, "</table>\n");
}

static void link_row(pp__sbuf *b, const char *key, const pp_link *l)
{
    row(b, key, "%s, %.4g GB/s per GPU per direction, %.3g \xc2\xb5s", pp_link_kind_name(l->kind), l->bw / 1e9,
        l->latency * 1e6);
}

void pp__report_cluster(pp__sbuf *b, const pp_cluster *c)
{
    const pp_gpu *g = &c->gpu;
    pp__sb_printf(b, "<table class=\"kv\"><caption>Cluster</caption>\n");
    row(b, "name", "%s", c->name);
    row(b, "description", "%s", c->description);
    row(b, "source", "%s", c->source);
    row(b, "size", "%d nodes x %d GPUs = %d GPUs; NVLink domain %d", c->nodes, c->gpus_per_node, pp_cluster_gpus(c),
        c->nvlink_domain);
    row(b, "GPU", "%s (%s, %s), %.4g GiB, HBM %.4g TB/s", g->name, g->full_name, g->vendor, g->mem_bytes / GIB,
        g->hbm_bw / 1e12);
    row(b, "dense peak TFLOP/s", "fp32 %.4g, tf32 %.4g, bf16 %.4g, fp16 %.4g, fp8 %.4g", g->peak_flops[PP_PREC_FP32] / 1e12,
        g->peak_flops[PP_PREC_TF32] / 1e12, g->peak_flops[PP_PREC_BF16] / 1e12, g->peak_flops[PP_PREC_FP16] / 1e12,
        g->peak_flops[PP_PREC_FP8] / 1e12);
    row(b, "efficiencies", "matmul %g, attention %g, HBM %g (0 = documented default)", g->matmul_eff, g->attn_eff,
        g->hbm_eff);
    row(b, "power / price", "%g W; $%.4g per GPU-hour (%s)", g->tdp_w, g->price_usd_per_hour,
        g->price_date[0] ? g->price_date : "no date");
    link_row(b, "intra-node link", &c->intra);
    link_row(b, "inter-node link", &c->inter);
    row(b, "NICs", "%d per node x %.4g GB/s", c->nics_per_node, c->nic_bw / 1e9);
    link_row(b, "host link (PCIe)", &c->pcie);
    row(b, "host", "%.4g GiB per node, memory bandwidth %.4g GB/s (0 = default); NVMe %.4g GB", c->host_mem_bytes / GIB,
        c->host_mem_bw / 1e9, c->nvme_bytes / 1e9);
    row(b, "NCCL", "efficiency intra %g, inter %g; overlap slowdown %g (0 = defaults)", c->nccl_eff_intra,
        c->nccl_eff_inter, c->nccl_overlap);
    row(b, "GPU source", "%s", g->source);
    pp__sb_printf(b, "</table>\n");
}

static const char *enum_name(int which, int v)
{
    int n;
    const char *const *names = pp_enum_names(which, &n);
    return names && v >= 0 && v < n ? names[v] : "?";
}

/* Stage i's fully recomputed blocks (as the plan table prints them). */
static int recomputed(const pp_strategy *s, int i)
{
    if (s->recompute != PP_RECOMPUTE_FULL) return 0;
    int k = s->per_stage_recompute ? s->stage_recompute[i] : s->recompute_layers;
    return k < 0 || k > s->stage_layers[i] ? s->stage_layers[i] : k;
}

void pp__report_strategy(pp__sbuf *b, const pp_strategy *s, const char *caption)
{
    const pp_buffers *u = &s->buf;
    pp__sb_printf(b, "<table class=\"kv\"><caption>");
    pp__svg_esc(b, caption);
    pp__sb_printf(b, "</caption>\n");
    row(b, "framework", "%s", pp_framework_name(s->framework));
    row(b, "degrees", "dp %d, tp %d, pp %d, cp %d, ep %d; sequence parallel %s; rank order %s", s->dp, s->tp, s->pp,
        s->cp, s->ep, yes(s->sp), s->order);
    row(b, "ZeRO / offload", "stage %d; offload %s; activations of %d blocks offloaded", s->zero,
        pp_offload_name(s->offload), s->act_offload_layers);
    row(b, "precision / optimizer", "%s%s; %s with %s states; gradients accumulate as %s",
        enum_name(PP_ENUM_PRECISION, s->precision),
        s->precision == PP_PREC_FP8 ? (s->fp8_param_gather > 0 ? " with FP8 primary weights" : " with bf16 weights") : "",
        pp_optimizer_name(s->optimizer), enum_name(PP_ENUM_OPT_STATES, s->opt_states),
        enum_name(PP_ENUM_GRAD_ACCUM, s->grad_accum_dtype));
    char mods[96] = "";
    if (s->recompute == PP_RECOMPUTE_SELECTIVE && pp_framework_supports(s->framework, "recompute_modules", 1)) {
        size_t k = (size_t)snprintf(mods, sizeof mods, " (");
        pp_rc_modules_format(s->recompute_modules ? s->recompute_modules : PP_RC_CORE_ATTN, ',', mods + k, sizeof mods - k - 1);
        strcat(mods, ")");
    }
    row(b, "recompute", "%s%s%s", pp_recompute_name(s->recompute),
        s->recompute == PP_RECOMPUTE_FULL ? (s->per_stage_recompute ? " (blocks per stage below)" : "") : "", mods);
    row(b, "batch", "micro-batch %d x %d accumulation x dp %d = global batch %d sequences of %d tokens", s->micro_batch,
        s->grad_accum, s->dp, s->global_batch, s->seq);
    row(b, "schedule", "%s, %d virtual stage%s", pp_schedule_name(s->schedule), s->virtual_stages,
        s->virtual_stages == 1 ? "" : "s");
    char split[8 * PP_MAX_STAGES + 16] = "", rc[8 * PP_MAX_STAGES + 16] = "";
    size_t k = 0, r = 0;
    for (int i = 0; i < s->pp && k + 16 < sizeof split; i++) {
        k += (size_t)snprintf(split + k, sizeof split - k, "%s%d", i ? "," : "", s->stage_layers[i]);
        r += (size_t)snprintf(rc + r, sizeof rc - r, "%s%d", i ? "," : "", recomputed(s, i));
    }
    row(b, "blocks per stage", "%s", split);
    if (s->recompute == PP_RECOMPUTE_FULL) row(b, "recomputed blocks per stage", "%s", rc);
    row(b, "attention / loss / CP", "%s; loss kernel %s; context parallel K/V %s", pp_attention_name(s->attention),
        pp_loss_name(s->loss), pp_cp_comm_name(s->cp_comm));
    row(b, "overlap", "DP/ZeRO with backward %s; TP with GEMMs %s; pipeline outputs freed once sent %s",
        yes(s->overlap_dp), yes(s->overlap_tp), yes(u->free_pipeline_outputs));
    row(b, "buffers", "reduce bucket %.4g, all-gather bucket %.4g, prefetch %.4g, max live %.4g, persistence %.4g "
        "elements", u->reduce_bucket, u->allgather_bucket, u->prefetch_bucket, u->max_live_params, u->param_persistence);
    row(b, "memory overheads", "CUDA context %.3g GiB, %s, reserve %.3g GiB, host reserve %g", u->cuda_context / GIB,
        u->expandable_segments > 0 ? "expandable segments (no fragmentation overhead)" : "caching allocator", u->reserve / GIB,
        u->host_reserve);
    if (u->expandable_segments <= 0) row(b, "fragmentation", "%g of the memory allocated while training runs", u->fragmentation);
    if (s->ep > 1)
        row(b, "experts", "ep %d, experts' tp %d, dispatch %s, all-to-all overlap %s", s->ep, s->etp > 0 ? s->etp : s->tp,
            s->ep_dispatch ? "hierarchical" : "alltoall", yes(s->overlap_ep));
    const pp_finetune *f = &s->ft;
    if (f->mode != PP_MODE_FULL)
        row(b, "fine-tuning", "%s, rank %d, alpha %g, dropout %g, targets mask 0x%x", enum_name(PP_ENUM_MODE, f->mode),
            f->lora_rank, f->lora_alpha, f->lora_dropout, f->lora_targets);
    else
        row(b, "training", "full; embeddings frozen %s; first %d blocks frozen", yes(f->freeze_embeddings),
            f->freeze_layers);
    pp__sb_printf(b, "</table>\n");
}

static void set_text(char *out, size_t cap, const pp_int_set *s)
{
    size_t k = 0;
    out[0] = '\0';
    if (s->n == 0) {
        snprintf(out, cap, "any");
        return;
    }
    for (int i = 0; i < s->n && k + 12 < cap; i++) k += (size_t)snprintf(out + k, cap - k, "%s%d", i ? "," : "", s->v[i]);
}

static void mask_text(char *out, size_t cap, unsigned mask, int which)
{
    int n;
    const char *const *names = pp_enum_names(which, &n);
    size_t k = 0;
    out[0] = '\0';
    if (!mask) {
        snprintf(out, cap, "default");
        return;
    }
    for (int i = 0; i < n && k + 24 < cap; i++)
        if (mask & (1u << i)) k += (size_t)snprintf(out + k, cap - k, "%s%s", k ? "," : "", names[i]);
}

void pp__report_search(pp__sbuf *b, const pp_search_opts *o)
{
    static const char *const obj[PP_OBJ_COUNT] = {"throughput", "cost", "memory"};
    char t[9][200];
    const pp_int_set *sets[9] = {&o->dp, &o->tp, &o->pp, &o->cp, &o->ep, &o->sp, &o->zero, &o->micro_batch,
                                 &o->virtual_stages};
    for (int i = 0; i < 9; i++) set_text(t[i], sizeof t[i], sets[i]);
    pp__sb_printf(b, "<table class=\"kv\"><caption>Search</caption>\n");
    row(b, "global batch / sequence", "%d sequences of %d tokens", o->global_batch, o->seq);
    row(b, "objective / top", "%s; top %d", o->objective < PP_OBJ_COUNT ? obj[o->objective] : "?", o->top_k);
    row(b, "restrictions", "dp %s; tp %s; pp %s; cp %s; ep %s; sp %s; ZeRO %s; micro-batch %s; virtual stages %s",
        t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]);
    char pr[120], of[120], rc[120], sc[120];
    mask_text(pr, sizeof pr, o->precisions, PP_ENUM_PRECISION);
    mask_text(of, sizeof of, o->offloads, PP_ENUM_OFFLOAD);
    mask_text(rc, sizeof rc, o->recomputes, PP_ENUM_RECOMPUTE);
    mask_text(sc, sizeof sc, o->schedules, PP_ENUM_SCHEDULE);
    row(b, "dimensions", "precision %s; offload %s; recompute %s; schedule %s", pr, of, rc, sc);
    row(b, "stage split", "ILP %s; per-stage recompute %s; ILP time limit %g s, budget %g s; max TP per node %d "
        "(0 = NVLink domain)", yes(o->stage_partition), yes(o->stage_recompute), o->ilp_time_limit_s, o->ilp_budget_s,
        o->max_tp_per_node);
    if (o->price_usd_per_gpu_hour > 0) row(b, "price", "$%g per GPU-hour (given)", o->price_usd_per_gpu_hour);
    pp__sb_printf(b, "</table>\n");
    pp__report_strategy(b, &o->base, "Fixed for every candidate (optimizer, buffers, overlap, fine-tuning)");
}
