/*
 * megatron.c — command-line arguments for Megatron-LM (Megatron-Core
 * argument names, core_r0.10 era) and for microsoft/Megatron-DeepSpeed,
 * written as a bash file that defines MEGATRON_ARGS=( ... ). The rules
 * (what each flavor can express, what it decides implicitly) are listed
 * in docs/megatron.md; Megatron-DeepSpeed facts come from
 * tests/reference/deepspeed_config.md §11.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/emit.h"

void pp_megatron_opts_default(pp_megatron_opts *o)
{
    memset(o, 0, sizeof *o);
    o->flavor = PP_MEGATRON_LM;
    pp_hparams_default(&o->hp);
    snprintf(o->deepspeed_config, sizeof o->deepspeed_config, "ds_config.json");
}

static const char *flavor_name(pp_megatron_flavor f)
{
    return f == PP_MEGATRON_DEEPSPEED ? "Megatron-DeepSpeed" : "Megatron-LM";
}

/* ------------------------------------------------------------------ rules
 * What each flavor can express is the framework and rule tables
 * (costmodel/framework.c, costmodel/rules.c); here only the layout of
 * the arguments. */

/* Blocks per stage recomputed, if one value holds for every stage
 * (-1 = all of them); -2 when the stages differ. */
static int uniform_recompute(const pp_strategy *s)
{
    if (s->recompute != PP_RECOMPUTE_FULL) return 0;
    int all = 1, k = -3;
    for (int i = 0; i < s->pp; i++) {
        int n = s->stage_layers[i], ki = pp__recomputed_blocks(s, i, n);
        if (ki < n) all = 0;
        int want = s->per_stage_recompute ? s->stage_recompute[i] : s->recompute_layers;
        if (ki < n) {
            if (k == -3) k = want;
            else if (k != want) return -2;
        }
    }
    return all ? -1 : k;
}

static pp_framework flavor_framework(pp_megatron_flavor f)
{
    return f == PP_MEGATRON_DEEPSPEED ? PP_FW_MEGATRON_DEEPSPEED : PP_FW_MEGATRON;
}

static pp_status for_flavor(const pp_strategy *r, pp_megatron_flavor f, pp_error *err)
{
    if (r->framework == flavor_framework(f)) return PP_OK;
    return pp__fail_field(err, 0, "framework", pp_framework_name(r->framework), "%s arguments are for plans %s runs "
                          "(framework %s)", flavor_name(f), flavor_name(f), pp_framework_name(flavor_framework(f)));
}

pp_status pp_megatron_adapt(const pp_model *m, const pp_cluster *c, pp_strategy *s, pp_megatron_flavor flavor,
                            pp_notes *notes, pp_error *err)
{
    PP__C_NUMERIC;
    if ((unsigned)flavor >= PP_MEGATRON_FLAVOR_COUNT)
        return pp__fail_field(err, 0, "flavor", "?", "expected Megatron-LM or Megatron-DeepSpeed");
    pp__adapt_framework(m, c, s, flavor_framework(flavor), notes);
    pp_strategy r = *s;
    return pp_strategy_resolve(&r, m, c, err);
}

pp_status pp_megatron_check(const pp_model *m, const pp_cluster *c, const pp_strategy *s, const pp_megatron_opts *o,
                            pp_error *err)
{
    PP__C_NUMERIC;
    pp_megatron_flavor f = o ? o->flavor : PP_MEGATRON_LM;
    if ((unsigned)f >= PP_MEGATRON_FLAVOR_COUNT)
        return pp__fail_field(err, 0, "flavor", "?", "expected Megatron-LM or Megatron-DeepSpeed");
    if (o) {
        pp_status hs = pp_hparams_check(&o->hp, "Megatron hyper-parameters", err);
        if (hs != PP_OK) return hs;
    }
    pp_strategy r = *s;
    pp_status st = pp_strategy_resolve(&r, m, c, err);
    return st == PP_OK ? for_flavor(&r, f, err) : st;
}

/* ------------------------------------------------------------------ writer */

static void flag(pp__sbuf *b, const char *name) { pp__sb_printf(b, "  %s\n", name); }

static void flag_int(pp__sbuf *b, const char *name, long v) { pp__sb_printf(b, "  %s %ld\n", name, v); }

static void flag_num(pp__sbuf *b, const char *name, double v)
{
    char num[40];
    pp__fmt_num(num, sizeof num, v);
    pp__sb_printf(b, "  %s %s\n", name, num);
}

/* "([0]*3+[1]*58)": Megatron-Core's --moe-layer-freq pattern. */
static void moe_pattern(const pp_model *m, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < m->layers && n + 16 < cap;) {
        int kind = m->block_kind[i] == PP_BLOCK_MOE, j = i;
        while (j < m->layers && (m->block_kind[j] == PP_BLOCK_MOE) == kind) j++;
        n += (size_t)snprintf(buf + n, cap - n, "%s[%d]*%d", i ? "+" : "", kind, j - i);
        i = j;
    }
    snprintf(buf + n, cap - n, ")");
}

/* 1 when every block is an MoE block (the flags' default layout). */
static int moe_every(const pp_model *m)
{
    for (int i = 0; i < m->layers; i++)
        if (m->block_kind[i] != PP_BLOCK_MOE) return 0;
    return 1;
}

/* Rotary base and scaling (the arch rule refused what cannot be written):
 * Megatron-LM --rotary-base (int, default 10000), --use-rope-scaling
 * --rope-scaling-factor (Llama 3), --position-embedding-type yarn,
 * --rotary-seq-len-interpolation-factor (linear); Megatron-DeepSpeed
 * --rotary-position-embeddings-theta. */
static void rope_flags(pp__sbuf *b, const pp_model *m, int lm, pp_notes *notes)
{
    if (m->rope_theta > 0) flag_int(b, lm ? "--rotary-base" : "--rotary-position-embeddings-theta", (long)m->rope_theta);
    else pp__note(notes, "%s's rotary base is unknown: Megatron uses 10000; set %s to the model's", m->name,
                  lm ? "--rotary-base" : "--rotary-position-embeddings-theta");
    if (!lm || m->rope_scaling == PP_ROPE_NONE) return;
    if (m->rope_scaling == PP_ROPE_LLAMA3) {
        flag(b, "--use-rope-scaling");
        flag_num(b, "--rope-scaling-factor", m->rope_factor > 0 ? m->rope_factor : 8);
    } else if (m->rope_scaling == PP_ROPE_YARN) {
        flag_num(b, "--rotary-scaling-factor", m->rope_factor > 0 ? m->rope_factor : 1);
        if (m->rope_original_max > 0) flag_int(b, "--yarn-original-max-position-embeddings", m->rope_original_max);
        pp__note(notes, "%s: YaRN's beta_fast/beta_slow and mscale are left at Megatron's defaults; set "
                        "--yarn-beta-fast/--yarn-beta-slow/--mscale if the model's config.json gives others", m->name);
    } else if (m->rope_scaling == PP_ROPE_LINEAR) {
        flag_int(b, "--rotary-seq-len-interpolation-factor", (long)m->rope_factor);
    }
}

static void model_flags(pp__sbuf *b, const pp_model *m, const pp_strategy *s, pp_megatron_flavor f, pp_notes *notes)
{
    int lm = f == PP_MEGATRON_LM, hd = pp__head_dim(m);
    char nm[PP_NAME_LEN];
    pp__sb_printf(b, "  # model: %s\n", pp__safe(m->name, nm, sizeof nm));
    flag_int(b, "--num-layers", m->layers);
    flag_int(b, "--hidden-size", m->hidden);
    flag_int(b, "--ffn-hidden-size", m->ffn);
    flag_int(b, "--num-attention-heads", m->heads);
    if (m->kv_heads != m->heads) {
        if (lm) {
            flag(b, "--group-query-attention");
            flag_int(b, "--num-query-groups", m->kv_heads);
        } else {
            flag_int(b, "--num-key-value-heads", m->kv_heads);
        }
    }
    if (m->mla.kv_lora_rank == 0 && hd * m->heads != m->hidden) flag_int(b, "--kv-channels", hd);
    flag_int(b, "--seq-length", s->seq);
    int maxpos = m->max_positions > s->seq ? m->max_positions : s->seq;
    flag_int(b, "--max-position-embeddings", maxpos);
    if (m->position == PP_POS_ROPE) {
        if (lm) pp__sb_printf(b, "  --position-embedding-type %s\n", m->rope_scaling == PP_ROPE_YARN ? "yarn" : "rope");
        else flag(b, "--use-rotary-position-embeddings");
    } else if (lm) {
        pp__sb_printf(b, "  --position-embedding-type learned_absolute\n");
    }
    if (m->position == PP_POS_ROPE) rope_flags(b, m, lm, notes);
    if (m->norm == PP_NORM_RMSNORM) pp__sb_printf(b, "  --normalization %s\n", lm ? "RMSNorm" : "rmsnorm");
    if (m->norm_eps > 0) flag_num(b, lm ? "--norm-epsilon" : "--layernorm-epsilon", m->norm_eps);
    else pp__note(notes, "%s's norm epsilon is unknown: Megatron uses 1e-5; set --norm-epsilon to the model's", m->name);
    if (m->gated_mlp) flag(b, "--swiglu");
    /* Qwen3's per-head q/k RMSNorm, MLA's latent norms (gpt_layer_specs.py
     * builds them only with qk_layernorm; Megatron's default is off) */
    if (m->qk_norm && lm) flag(b, "--qk-layernorm");
    else if (m->qk_norm)
        pp__note(notes, "%s normalises q and k (qk_norm): Megatron-DeepSpeed has no such flag; its model leaves them "
                        "out (the memory priced keeps their inputs)", m->name);
    if (!m->tied_embeddings) flag(b, "--untie-embeddings-and-output-weights");
    if (!m->qkv_bias && !m->out_bias && !m->mlp_bias) {
        flag(b, "--disable-bias-linear");
    } else if (m->qkv_bias && !m->out_bias && !m->mlp_bias) {
        flag(b, "--disable-bias-linear");
        flag(b, "--add-qkv-bias");
    }
    flag_num(b, "--attention-dropout", m->dropout);
    flag_num(b, "--hidden-dropout", m->dropout);
    if (!m->gated_mlp && m->activation == PP_ACT_RELU)
        pp__note(notes, "%s uses ReLU: Megatron has no plain-ReLU flag (its default is GELU); the shapes, memory and "
                        "time are the same, set activation_func in your model provider", m->name);
    if (lm && m->mla.kv_lora_rank > 0) {
        flag(b, "--multi-latent-attention");
        if (m->mla.q_lora_rank > 0) flag_int(b, "--q-lora-rank", m->mla.q_lora_rank);
        flag_int(b, "--kv-lora-rank", m->mla.kv_lora_rank);
        flag_int(b, "--qk-head-dim", m->mla.qk_nope_head_dim);
        flag_int(b, "--qk-pos-emb-head-dim", m->mla.qk_rope_head_dim);
        flag_int(b, "--v-head-dim", m->mla.v_head_dim);
    }
    if (m->experts > 0) {
        if (lm) {
            flag_int(b, "--num-experts", m->experts);
            flag_int(b, "--moe-router-topk", m->topk);
            if (m->expert_groups > 0) { /* group-limited routing; Megatron's default is none */
                flag_int(b, "--moe-router-num-groups", m->expert_groups);
                flag_int(b, "--moe-router-group-topk", m->topk_groups);
            }
            flag_int(b, "--moe-ffn-hidden-size", m->expert_ffn);
            if (m->shared_experts) flag_int(b, "--moe-shared-expert-intermediate-size", (long)m->shared_experts * m->expert_ffn);
            /* TE's grouped GEMM over the local experts, as Megatron-Bridge's
             * MoE recipes run them (moe_act recompute needs it) */
            flag(b, "--moe-grouped-gemm");
            if (!moe_every(m)) {
                char pat[512];
                moe_pattern(m, pat, sizeof pat);
                pp__sb_printf(b, "  --moe-layer-freq '%s'\n", pat);
            }
            if (m->capacity_factor > 0) flag_num(b, "--moe-expert-capacity-factor", m->capacity_factor);
            /* balanced routing is what is priced: Megatron's aux-loss
             * coefficient defaults to 0, and the router then balances
             * nothing (transformer_config.py, router.py): the model's, else
             * 1e-2 as NVIDIA's MoE recipes; and the model's router (DeepSeek-
             * V3: sigmoid scores, the balancing bias, the scaling factor, a
             * per-sequence loss; red team rt10) */
            if (m->aux_loss_coeff > 0) flag_num(b, "--moe-aux-loss-coeff", m->aux_loss_coeff);
            else pp__sb_printf(b, "  --moe-aux-loss-coeff 1e-2\n");
            if (m->aux_loss_seq) pp__sb_printf(b, "  --moe-router-load-balancing-type seq_aux_loss\n");
            if (m->router_sigmoid) pp__sb_printf(b, "  --moe-router-score-function sigmoid\n");
            if (m->router_expert_bias) flag(b, "--moe-router-enable-expert-bias");
            if (m->router_scaling > 0) flag_num(b, "--moe-router-topk-scaling-factor", m->router_scaling);
            if (s->ep > 1 && s->ep_dispatch) /* HybridEP: hosts and multi-node NVLink alike */
                pp__sb_printf(b, "  --moe-token-dispatcher-type flex\n  --moe-flex-dispatcher-backend hybridep\n");
            else if (s->ep > 1) pp__sb_printf(b, "  --moe-token-dispatcher-type alltoall\n");
        } else {
            flag_int(b, "--num-experts", m->experts);
            /* Megatron-DeepSpeed builds MoE every --expert-interval blocks,
             * default 2 (megatron/model/transformer.py) */
            if (moe_every(m)) flag_int(b, "--expert-interval", 1);
            flag_int(b, "--topk", m->topk);
            /* experts split over TP as priced: Megatron-DeepSpeed keeps each
             * expert whole on every TP rank unless asked (arguments.py
             * --enable-expert-tensor-parallelism, default False) */
            if (s->tp > 1) flag(b, "--enable-expert-tensor-parallelism");
            if (m->capacity_factor > 0) flag_num(b, "--moe-train-capacity-factor", m->capacity_factor);
            else flag(b, "--disable-moe-token-dropping");
            if (!moe_every(m))
                pp__note(notes, "%s mixes dense and MoE blocks: set Megatron-DeepSpeed's --expert-interval to match "
                                "(parplan cannot confirm how your version counts it)", m->name);
        }
    }
    /* Megatron pads the tokenizer's vocabulary to a multiple of
     * divisor x tp (build_tokenizer.py): the largest divisor keeping it exact */
    int d = pp__megatron_divisor(m->vocab, s->tp);
    flag_int(b, "--make-vocab-size-divisible-by", d);
    if (m->vocab % ((long)d * s->tp))
        pp__note(notes, "vocabulary: Megatron pads %d to %.0f rows (a multiple of --make-vocab-size-divisible-by %d x "
                        "tp %d); parplan prices the padded rows", m->vocab, pp__vocab(m, s), d, s->tp);
}

/* First/last stage sizes when the middle stages are equal (each divisible
 * by v): Megatron-LM's --decoder-first/last-pipeline-num-layers
 * (transformer_config.py's rules); -1 when they cannot say the split. */
static int first_last(const pp_strategy *s, int *first, int *last)
{
    int p = s->pp, v = s->virtual_stages, f = s->stage_layers[0], l = s->stage_layers[p - 1];
    if (p == 2) {
        *first = f, *last = l;
        return f % v || l % v ? -1 : 0;
    }
    int mid = s->stage_layers[1];
    for (int i = 1; i < p - 1; i++)
        if (s->stage_layers[i] != mid) return -1;
    *first = f != mid ? f : 0;
    *last = l != mid ? l : 0;
    return mid % v || f % v || l % v ? -1 : 0;
}

/* --pipeline-model-parallel-layout: stages read virtual-stage-major (stage
 * j is pp rank j % pp, chunk j / pp), E the embedding, t a block, L the
 * loss. A stage's blocks fill its v chunks evenly; the one short chunk is
 * the first on the first rank (beside E), the last elsewhere (beside L). */
static void layout_flag(pp__sbuf *b, const pp_strategy *s)
{
    int p = s->pp, v = s->virtual_stages;
    pp__sb_printf(b, "  --pipeline-model-parallel-layout '");
    for (int k = 0; k < v; k++)
        for (int i = 0; i < p; i++) {
            int len = pp__chunk_blocks(s, i, k);
            if (k || i) pp__sb_printf(b, "|");
            if (!k && !i) pp__sb_printf(b, "E");
            if (len) pp__sb_printf(b, "t*%d", len);
            if (k == v - 1 && i == p - 1) pp__sb_printf(b, "L");
        }
    pp__sb_printf(b, "'\n");
}

/* The stage split as Megatron-LM writes it: nothing for an even split, the
 * virtual-stage size for an even interleaved one, first/last sizes when only
 * they differ, else (and for an explicit chunk layout) the layout string. Megatron-DeepSpeed's split is
 * DeepSpeed's partition_method (the framework's only split). */
static void split_flags(pp__sbuf *b, const pp_model *m, const pp_strategy *s, int lm)
{
    int p = s->pp, v = s->virtual_stages, even = 1, first, last;
    for (int i = 1; i < p; i++) even &= s->stage_layers[i] == s->stage_layers[0];
    if (!lm || p == 1) return;
    if (pp__chunks_explicit(s)) return layout_flag(b, s); /* chunks as given */
    if (even && m->layers % (p * v) == 0) {
        if (v > 1) flag_int(b, "--num-layers-per-virtual-pipeline-stage", m->layers / (p * v));
        return;
    }
    if (first_last(s, &first, &last) == 0) {
        if (first) flag_int(b, "--decoder-first-pipeline-num-layers", first);
        if (last) flag_int(b, "--decoder-last-pipeline-num-layers", last);
        if (v > 1) flag_int(b, "--num-virtual-stages-per-pipeline-rank", v);
        return;
    }
    layout_flag(b, s);
}

static void parallel_flags(pp__sbuf *b, const pp_model *m, const pp_strategy *s, pp_megatron_flavor f)
{
    int lm = f == PP_MEGATRON_LM;
    pp__sb_printf(b, "  # parallelism: %d GPUs = dp %d x tp %d x pp %d x cp %d\n", s->dp * s->tp * s->pp * s->cp, s->dp,
                  s->tp, s->pp, s->cp);
    flag_int(b, "--tensor-model-parallel-size", s->tp);
    flag_int(b, "--pipeline-model-parallel-size", s->pp);
    if (!lm && s->pp == 1) flag(b, "--no-pipeline-parallel");
    split_flags(b, m, s, lm);
    if (lm && s->vp_group > 0 && s->schedule == PP_SCHED_INTERLEAVED)
        flag_int(b, "--microbatch-group-size-per-virtual-pipeline-stage", s->vp_group);
    if (s->sp) flag(b, "--sequence-parallel");
    if (s->cp > 1) flag_int(b, lm ? "--context-parallel-size" : "--ds-sequence-parallel-size", s->cp);
    /* Megatron passes the value to Transformer Engine: "p2p", "all_gather", "a2a" */
    static const char *const cp_type[PP_CP_COUNT] = {"p2p", "all_gather", "a2a"};
    if (lm && s->cp > 1) pp__sb_printf(b, "  --cp-comm-type %s\n", cp_type[(unsigned)s->cp_comm < PP_CP_COUNT ? s->cp_comm : 0]);
    if (s->ep > 1) flag_int(b, lm ? "--expert-model-parallel-size" : "--moe-expert-parallel-size", s->ep);
    if (lm && s->etp > 0 && s->etp != s->tp) flag_int(b, "--expert-tensor-parallel-size", s->etp);
    if (lm && s->zero >= 1) flag(b, "--use-distributed-optimizer");
    if (lm && s->opt_states == PP_OPT_STATES_BF16) {
        /* Transformer Engine's FusedAdam: bf16 moments, the fp32 master as
         * the low 16 bits of the bf16 weights */
        flag(b, "--use-precision-aware-optimizer");
        pp__sb_printf(b, "  --exp-avg-dtype bf16\n");
        pp__sb_printf(b, "  --exp-avg-sq-dtype bf16\n");
    }
    if (lm && s->zero == 3) {
        /* Megatron-FSDP v1 (arguments.py: needs the distributed optimizer
         * and the fsdp_dtensor checkpoint format; layer-wise double buffer) */
        flag(b, "--use-megatron-fsdp");
        pp__sb_printf(b, "  --data-parallel-sharding-strategy optim_grads_params\n");
        flag(b, "--fsdp-double-buffer");
        pp__sb_printf(b, "  --ckpt-format fsdp_dtensor\n");
    }
    if (lm && s->overlap_dp && s->dp * s->cp > 1) {
        flag(b, "--overlap-grad-reduce");
        if (s->zero >= 1) flag(b, "--overlap-param-gather");
        /* a bucket other than Megatron's default, max(4e7, 1e6 x dp): as priced */
        if (!(s->filled & PP_FILLED_REDUCE_BUCKET) && s->buf.reduce_bucket >= 1)
            pp__sb_printf(b, "  --ddp-bucket-size %.0f\n", s->buf.reduce_bucket);
    }
    if (lm && s->overlap_tp) flag(b, "--tp-comm-overlap");
    if (lm && s->overlap_ep) flag(b, "--overlap-moe-expert-parallel-comm");
    if (lm && s->loss == PP_LOSS_FUSED) flag(b, "--cross-entropy-loss-fusion");
    pp__sb_printf(b, "  # batch: %d sequences per step = micro-batch %d x %d micro-batches x dp %d\n", s->global_batch,
                  s->micro_batch, s->grad_accum, s->dp);
    flag_int(b, "--micro-batch-size", s->micro_batch);
    flag_int(b, "--global-batch-size", s->global_batch);
}

static void memory_flags(pp__sbuf *b, const pp_strategy *s, const pp_megatron_opts *o, pp_notes *notes)
{
    int lm = o->flavor == PP_MEGATRON_LM;
    const pp_hparams *hp = &o->hp;
    pp__sb_printf(b, "  # precision and memory\n");
    /* the causal mask comes from the attention kernel (AttnMaskType.causal):
     * without this Megatron-LM's GPTDataset builds an s x s bool mask a
     * sample and the first and last stages move it to the GPU every
     * micro-batch (arguments.py create_attention_mask_in_dataloader,
     * default True; NVIDIA's Llama 3 recipes pass it): 16 GiB at 128k,
     * never priced (red team, session 28) */
    if (lm) flag(b, "--no-create-attention-mask-in-dataloader");
    if (s->precision == PP_PREC_BF16 || s->precision == PP_PREC_FP8) flag(b, "--bf16");
    if (s->precision == PP_PREC_FP8) {
        /* current per-tensor scaling, as compute.c prices the casts and
         * memory.c the fp32 master of bf16 states (Megatron's default is delayed) */
        if (lm) {
            pp__sb_printf(b, "  # fp8: priced with Transformer Engine >= 2.6 (the output projection keeps its 16-bit input)\n"
                             "  --fp8-format hybrid\n  --fp8-recipe tensorwise\n");
            pp__note(notes, "fp8: priced with Transformer Engine >= 2.6, where the attention output projection keeps its "
                            "16-bit input rather than an FP8 copy (older releases keep both: 1 byte an element more)%s",
                     s->recompute_modules & (PP_RC_MOE_ACT | PP_RC_LAYERNORM)
                         ? "; its moe_act and layernorm recompute need it too (transformer_config.py checks)" : "");
            /* FP8 primary weights: no bf16 copy, 1-byte parameter gathers
             * (memory.c pp__weight_bytes_on, steptime.c dp_comm) */
            if (s->fp8_param_gather > 0) flag(b, "--fp8-param-gather");
        }
        else pp__note(notes, "fp8: Megatron-DeepSpeed runs --bf16; the fp8 GEMMs come from Transformer Engine layers "
                             "in the model code");
    }
    /* --bf16 makes main_grad fp32 unless --grad-reduce-in-bf16 (arguments.py) */
    if (lm && pp__ds_is_bf16(s) && s->grad_accum_dtype == PP_GRAD_16) flag(b, "--grad-reduce-in-bf16");
    if (s->precision == PP_PREC_FP16) {
        flag(b, "--fp16");
        flag_num(b, "--initial-loss-scale", ldexp(1.0, hp->initial_scale_power));
        flag_num(b, "--min-loss-scale", hp->min_loss_scale);
        flag_int(b, "--loss-scale-window", hp->loss_scale_window);
        flag_int(b, "--hysteresis", hp->hysteresis);
        if (lm && s->grad_accum_dtype == PP_GRAD_FP32) flag(b, "--accumulate-allreduce-grads-in-fp32");
    }
    if (s->recompute == PP_RECOMPUTE_SELECTIVE) {
        pp__sb_printf(b, "  --recompute-granularity selective\n");
        if (lm && s->recompute_modules) { /* Megatron's default is core_attn alone */
            char mods[96];
            pp_rc_modules_format(s->recompute_modules, ' ', mods, sizeof mods);
            pp__sb_printf(b, "  --recompute-modules %s\n", mods);
        }
    } else if (s->recompute == PP_RECOMPUTE_FULL) {
        int k = uniform_recompute(s);
        pp__sb_printf(b, "  --recompute-granularity full\n");
        if (k < 0) {
            pp__sb_printf(b, "  --recompute-method uniform\n");
            flag_int(b, "--recompute-num-layers", 1);
        } else {
            pp__sb_printf(b, "  --recompute-method block\n");
            flag_int(b, "--recompute-num-layers", k / (s->virtual_stages > 1 ? s->virtual_stages : 1));
        }
        if (!lm) flag(b, "--deepspeed-activation-checkpointing");
    }
    /* Megatron-Core's CPU offloading (validate_args sets cpu_offloading) */
    if (lm && s->act_offload_layers > 0) flag_int(b, "--cpu-offloading-num-layers", s->act_offload_layers);
    if (!lm && s->attention == PP_ATTN_FLASH) flag(b, "--use-flash-attn-v2");
    if (lm && s->attention == PP_ATTN_MATERIALISED) pp__sb_printf(b, "  --attention-backend unfused\n");
    if (!lm && s->offload != PP_OFFLOAD_NONE) flag(b, "--cpu-optimizer");
}

static void optimizer_flags(pp__sbuf *b, const pp_strategy *s, const pp_megatron_opts *o)
{
    const pp_hparams *hp = &o->hp;
    pp__sb_printf(b, "  # optimizer and schedule\n");
    if (s->optimizer == PP_OPT_SGD) {
        pp__sb_printf(b, "  --optimizer sgd\n");
        flag_num(b, "--sgd-momentum", hp->momentum);
    } else {
        pp__sb_printf(b, "  --optimizer adam\n");
        flag_num(b, "--adam-beta1", hp->beta1);
        flag_num(b, "--adam-beta2", hp->beta2);
        flag_num(b, "--adam-eps", hp->eps);
    }
    flag_num(b, "--weight-decay", hp->weight_decay);
    flag_num(b, "--clip-grad", hp->gradient_clipping);
    flag_num(b, "--lr", hp->lr);
    flag_num(b, "--min-lr", hp->min_lr);
    if (o->flavor == PP_MEGATRON_LM && hp->min_lr > 0) flag_num(b, "--lr-warmup-init", hp->min_lr);
    pp__sb_printf(b, "  --lr-decay-style linear\n");
    flag_int(b, "--lr-warmup-iters", hp->warmup_steps);
    flag_int(b, "--train-iters", hp->total_steps);
}

static void deepspeed_flags(pp__sbuf *b, const pp_strategy *s, const pp_megatron_opts *o)
{
    if (o->flavor != PP_MEGATRON_DEEPSPEED) return;
    pp__sb_printf(b, "  # DeepSpeed (the JSON decides the ZeRO stage; keep the flag equal)\n");
    flag(b, "--deepspeed");
    pp__sb_printf(b, "  --deepspeed_config '%s'\n", o->deepspeed_config);
    flag_int(b, "--zero-stage", pp__ds_wrapper_of(s) == PP_DS_ZERO ? s->zero : 0);
}

pp_status pp_megatron_args(const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_megatron_opts *o,
                           char **out, pp_notes *notes, pp_error *err)
{
    PP__C_NUMERIC;
    *out = NULL;
    pp_megatron_opts def;
    if (!o) {
        pp_megatron_opts_default(&def);
        o = &def;
    }
    if (strchr(o->deepspeed_config, '\'') || strchr(o->deepspeed_config, '\n'))
        return pp__fail(err, PP_ERR_INPUT, "--deepspeed_config path '%s': quotes and newlines are not allowed",
                        o->deepspeed_config);
    if ((unsigned)o->flavor >= PP_MEGATRON_FLAVOR_COUNT)
        return pp__fail_field(err, 0, "flavor", "?", "expected Megatron-LM or Megatron-DeepSpeed");
    pp_status st = pp_hparams_check(&o->hp, "Megatron hyper-parameters", err);
    if (st != PP_OK) return st;
    /* the plan's strategy is resolved (pp_estimate): trusted as it is */
    const pp_strategy s = p->strategy;
    if ((st = for_flavor(&s, o->flavor, err)) != PP_OK) return st;
    pp_notes local = {0};
    pp__sbuf b = {0};
    char nm[3][PP_NAME_LEN]; /* names from users' files: one comment line each (pp__safe) */
    pp__sb_printf(&b, "# %s arguments for %s on %d x %s (%s), written by parplan %s.\n", flavor_name(o->flavor),
                  pp__safe(m->name, nm[0], sizeof nm[0]), pp_cluster_gpus(c), pp__safe(c->gpu.name, nm[1], sizeof nm[1]),
                  pp__safe(c->name, nm[2], sizeof nm[2]), pp_version());
    pp__sb_printf(&b, "# Predicted: peak %.1f GiB per GPU (%s), %.0f tokens/s, MFU %.1f%%.\n",
                  p->memory.peak_bytes / 1073741824.0, p->uncertainty.fit == PP_FIT_NO ? "DOES NOT FIT" : pp_fit_name(p->uncertainty.fit),
                  p->throughput.tokens_per_s, 100 * p->throughput.mfu);
    pp__sb_printf(&b, "# Use: source this file, then\n#   torchrun ... pretrain_gpt.py \"${MEGATRON_ARGS[@]}\" "
                      "--data-path ... --tokenizer-type ... --save ... --load ...\n");
    /* validate_args: "FSDP requires CUDA_DEVICE_MAX_CONNECTIONS > 1 or unset";
     * Megatron-Bridge's FSDP recipes set 32 (perf_recipes/llama/gb200/llama3.py) */
    if (o->flavor == PP_MEGATRON_LM && s.zero == 3) pp__sb_printf(&b, "export CUDA_DEVICE_MAX_CONNECTIONS=32\n");
    /* and before Blackwell (sm100: FP8 without Hopper's TN-only layout),
     * TP or CP asserts it is 1, unless the EP overlap asks for more
     * (validate_args, arguments.py d98e8a64dd l.1453-1478) */
    int sm100 = !strcmp(c->gpu.vendor, "NVIDIA") && !c->gpu.fp8_transpose && c->gpu.peak_flops[PP_PREC_FP8] > 0;
    if (o->flavor == PP_MEGATRON_LM && s.zero != 3 && (s.tp > 1 || s.cp > 1) && !sm100 && !s.overlap_ep)
        pp__sb_printf(&b, "export CUDA_DEVICE_MAX_CONNECTIONS=1\n");
    /* Megatron-DeepSpeed raises without it under --sequence-parallel
     * (megatron/arguments.py f4157bea l.402-407; red team rt16) */
    if (o->flavor == PP_MEGATRON_DEEPSPEED && s.sp) pp__sb_printf(&b, "export CUDA_DEVICE_MAX_CONNECTIONS=1\n");
    /* TE's userbuffers need CUDA multicast, or UB_SKIPMC=1 "on devices older
     * than compute capability 9.0" (TE comm_gemm_overlap README; base.py
     * initialize_ub asserts otherwise): NVIDIA GPUs without FP8 */
    if (s.overlap_tp && !strcmp(c->gpu.vendor, "NVIDIA") && c->gpu.peak_flops[PP_PREC_FP8] <= 0)
        pp__sb_printf(&b, "export UB_SKIPMC=1\n");
    /* the allocator parplan priced (docs/memory.md, "Allocator") */
    if (s.buf.expandable_segments > 0) pp__sb_printf(&b, "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n");
    pp__sb_printf(&b, "MEGATRON_ARGS=(\n");
    parallel_flags(&b, m, &s, o->flavor);
    model_flags(&b, m, &s, o->flavor, &local);
    memory_flags(&b, &s, o, &local);
    optimizer_flags(&b, &s, o);
    deepspeed_flags(&b, &s, o);
    pp__sb_printf(&b, ")\n");
    if (o->flavor == PP_MEGATRON_LM && s.ep > 1 && s.ep_dispatch)
        pp__note(&local, "hierarchical expert dispatch: Megatron's flex dispatcher needs DeepEP's HybridEP kernels "
                         "installed (--moe-flex-dispatcher-backend hybridep)");
    if (o->flavor == PP_MEGATRON_LM && s.ep > 1 && s.overlap_ep)
        pp__note(&local, "EP all-to-all overlap: Megatron asserts PyTorch >= 2.6 for --overlap-moe-expert-parallel-comm");
    if (!p->memory.fits) pp__note_unfit(&local, &p->memory, p->uncertainty.fit);
    *out = pp__sb_take(&b);
    if (!*out) return pp__fail(err, PP_ERR_NOMEM, "out of memory writing Megatron arguments");
    for (int i = 0; i < local.n; i++) pp__note(notes, "%s", local.line[i]);
    return PP_OK;
}

pp_status pp_megatron_write(const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_megatron_opts *o,
                            const char *path, int force, pp_notes *notes, pp_error *err)
{
    PP__C_NUMERIC;
    char *text = NULL;
    pp_notes local = {0};
    pp_status st = pp_megatron_args(m, c, p, o, &text, &local, err);
    if (st != PP_OK) return st;
    st = pp_write_file(path, text, strlen(text), force, err);
    pp_free(text);
    if (st == PP_OK)
        for (int i = 0; i < local.n; i++) pp__note(notes, "%s", local.line[i]);
    return st;
}
