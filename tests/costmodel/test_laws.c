/*
 * test_laws.c — laws of the cost model that the search cannot game (issue
 * 13), over 100,000 random valid strategies (a fixed seed): 12 models (dense
 * MHA, GQA, MoE, MLA), 12 clusters from 1 GPU to 16,384 (NVLink, PCIe,
 * NVL72, xGMI, Ethernet) and all five frameworks. Only strategies the rule
 * table accepts are kept (pp_strategy_resolve). Each law is a property, not
 * a number:
 *   - every term that moves bytes over a group of size > 1 costs > 0 s;
 *   - more ranks in a ring never lower its latency term (same stride, a
 *     tier no faster; groups laid out as a job lays them);
 *   - CPU offload is never faster than none, and NVMe offload is slower
 *     than CPU offload while anything trains (it moves the optimizer states
 *     through the drives besides), all else equal;
 *   - ZeRO-3's step is never shorter than ZeRO-2's (ZeRO-1's where there is no
 *     ZeRO-2: Megatron), overlap off, all else equal;
 *   - exposed communication never exceeds total communication;
 *   - each breakdown sums to its total within 1e-9;
 *   - memory per stage is never negative and never below the model-state floor;
 *   - activation bytes scale with the activation dtype: fp32 >= 2 x bf16
 *     where every stored tensor is in that dtype;
 *   - activations per micro-batch never fall as the micro-batch grows by
 *     one (the search's skip of larger micro-batches relies on it);
 *   - expandable segments never raise a stage's memory and never change
 *     the step (they remove the caching allocator's overhead only).
 * "All else equal": a variant keeps every behaviour of the resolved strategy
 * as given and changes one field; the rule table must accept it.
 * A broken law prints the strategy as a one-line `parplan estimate` command
 * (`command_reproduces_the_strategy` runs such commands through the CLI).
 * tests/costmodel/test_law_cases.c and test_nvme.c work one case of each law
 * the model once broke by hand. PARPLAN_LAWS_CASES sets the count:
 * tests/CMakeLists.txt sets 10,000 under the sanitizers, which run about 15x
 * slower; PARPLAN_LAWS_CLI_RUNS the commands run (40).
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/costmodel.h"
#include "costmodel/framework.h"
#include "costmodel/rules.h"
#include "topologies/topologies.h"
#include "tests/fixtures.h"

#define DEFAULT_CASES 100000
#define REL 1e-9 /* relative tolerance of sums and orderings */

/* ------------------------------------------------------------ random */

static uint64_t rng_state;

static uint64_t rnd(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int pick(int n) { return (int)(rnd() % (uint64_t)n); }
static int chance(int percent) { return pick(100) < percent; }
static int pow2_upto(int max) /* 1, 2, 4, ... <= max, uniform in the exponent */
{
    int k = 0;
    while ((2 << k) <= max) k++;
    return 1 << pick(k + 1);
}

/* ------------------------------------------------------------ the world */

static const char *const model_names[] = {
    "gpt3-1.3b", "gpt3-175b", "bloom-176b", "gpt-neox-20b",               /* dense MHA */
    "qwen2.5-0.5b", "llama3-8b", "mistral-7b", "llama3-70b", "llama3.1-405b", /* GQA */
    "mixtral-8x7b", "qwen3-235b-a22b",                                    /* MoE */
    "deepseek-v3"};                                                       /* MLA + MoE */
#define NMODELS ((int)(sizeof model_names / sizeof *model_names))

static const char *const cluster_names[] = {
    "workstation-1x-4090", "pcie-4x-4090", "a100-pcie-8x", "l40s-8x-eth", "dgx-a100-40g", "dgx-a100-80g",
    "dgx-h100", "aws-p5", "dgx-b200", "gb200-nvl72", "mi300x-8x", "aws-p4d"};
#define NCLUSTERS ((int)(sizeof cluster_names / sizeof *cluster_names))
#define MAX_GPUS 16384

static const char *const orders[] = {"tp-cp-dp-pp", "tp-dp-cp-pp", "tp-cp-pp-dp", "cp-tp-dp-pp", "tp-pp-cp-dp"};

typedef struct world {
    pp_model models[NMODELS];
    pp_cluster clusters[NCLUSTERS];
} world;

static world *W;

static void load_world(void)
{
    W = malloc(sizeof *W);
    cr_assert(W);
    for (int i = 0; i < NMODELS; i++) W->models[i] = fx_model(model_names[i]);
    for (int i = 0; i < NCLUSTERS; i++) W->clusters[i] = fx_cluster(cluster_names[i], 0, 0);
}

/* One random case: a model, a cluster at some size, a strategy. */
typedef struct kase {
    int model, cluster;
    pp_cluster c;        /* resized */
    pp_strategy s;       /* as generated (before resolve) */
} kase;

static void gen_cluster(kase *k)
{
    k->cluster = pick(NCLUSTERS);
    k->c = W->clusters[k->cluster];
    int gpn = k->c.gpus_per_node, nodes = pow2_upto(MAX_GPUS / gpn);
    if (gpn == 72 && chance(10)) nodes = MAX_GPUS / 72; /* 227 racks */
    pp_error err = {""};
    if (gpn > 1 && nodes == 1 && chance(20)) { /* a partial node */
        cr_assert_eq(pp_cluster_resize(&k->c, 0, pow2_upto(gpn / 2), &err), PP_OK, "%s", err.msg);
        return;
    }
    cr_assert_eq(pp_cluster_resize(&k->c, nodes, 0, &err), PP_OK, "%s", err.msg);
}

/* A random value of dim that framework f supports among n candidates
 * (the first when none is). */
static int fw_pick(pp_framework f, const char *dim, const int *cand, int n)
{
    int ok[16], m = 0;
    for (int i = 0; i < n && m < 16; i++)
        if (pp_framework_supports(f, dim, cand[i])) ok[m++] = cand[i];
    return m ? ok[pick(m)] : cand[0];
}

/* The largest power of two <= v that divides both heads and KV heads. */
static int tp_for(const pp_model *m, int v)
{
    while (v > 1 && (m->heads % v || m->kv_heads % v)) v /= 2;
    return v;
}

static void gen_degrees(kase *k, const pp_model *m, pp_strategy *s)
{
    pp_framework f = s->framework;
    int gpus = pp_cluster_gpus(&k->c), left = gpus, dom = k->c.nvlink_domain;
    s->tp = pp_framework_supports(f, "tp", 2) ? tp_for(m, pow2_upto(left < dom ? left : dom)) : 1;
    left /= s->tp;
    int pmax = left < m->layers / 2 ? left : m->layers / 2;
    s->pp = chance(50) || !pp_framework_supports(f, "pp", 2) || pmax < 2 ? 1 : pow2_upto(pmax < 64 ? pmax : 64);
    left /= s->pp;
    s->cp = chance(m->experts > 0 ? 40 : 70) || !pp_framework_supports(f, "cp", 2) ? 1 : pow2_upto(left < 16 ? left : 16);
    left /= s->cp;
    s->dp = left;
    int nd = s->dp * s->cp, emax = nd < m->experts ? nd : m->experts;
    /* expert groups up to dp x cp: beyond dp they span context ranks */
    s->ep = m->experts > 0 && chance(80) && pp_framework_supports(f, "ep", 2) ? (chance(40) ? emax : pow2_upto(emax)) : 1;
    s->sp = s->tp > 1 && pp_framework_supports(f, "sp", 1) && (chance(50) || !pp_framework_supports(f, "sp", 0));
}

static void gen_zero(kase *k, pp_strategy *s)
{
    pp_framework f = s->framework;
    static const int zeros[] = {0, 1, 2, 3}, offs[] = {1, 2, 3};
    s->zero = fw_pick(f, "zero", zeros, 4);
    s->offload = chance(60) ? PP_OFFLOAD_NONE : (pp_offload)fw_pick(f, "offload", offs, 3);
    if (s->offload >= PP_OFFLOAD_OPT_PARAMS && pp_framework_supports(f, "zero", 3)) s->zero = 3;
    if (s->offload == PP_OFFLOAD_NVME && k->c.nvme_bytes <= 0) s->offload = PP_OFFLOAD_NONE;
    int nd = s->dp * s->cp;
    if (s->zero >= 1 && nd > 1 && chance(20)) s->shard = pow2_upto(nd);
}

static void gen_training(kase *k, const pp_model *m, pp_strategy *s)
{
    pp_framework f = s->framework;
    static const int seqs[] = {512, 1024, 2048, 4096, 8192};
    s->seq = chance(30) ? m->seq : seqs[pick(5)];
    s->micro_batch = pow2_upto(8);
    int accum = chance(30) ? 1 : 1 + pick(s->pp > 1 ? 4 * s->pp : 16);
    if (s->pp > 1 && chance(60)) accum = s->pp * (1 + pick(4));
    s->global_batch = s->micro_batch * s->dp * accum;
    gen_zero(k, s);
    static const int rcs[] = {PP_RECOMPUTE_NONE, PP_RECOMPUTE_SELECTIVE, PP_RECOMPUTE_FULL};
    s->recompute = (pp_recompute)fw_pick(f, "recompute", rcs, 3);
    if (s->recompute == PP_RECOMPUTE_FULL && chance(30)) s->recompute_layers = pick(4);
    if (pp_framework_supports(f, "act_offload", 1) && s->pp == 1 && s->recompute == PP_RECOMPUTE_NONE && chance(20))
        s->act_offload_layers = 1 + pick(m->layers - 1);
    static const int precs[] = {PP_PREC_BF16, PP_PREC_BF16, PP_PREC_FP16, PP_PREC_FP32, PP_PREC_FP8};
    s->precision = (pp_precision)fw_pick(f, "precision", precs, 5);
    if (!(k->c.gpu.peak_flops[s->precision] > 0)) s->precision = PP_PREC_FP16;
    if (s->pp > 1) {
        static const int scheds[] = {PP_SCHED_1F1B, PP_SCHED_INTERLEAVED, PP_SCHED_GPIPE};
        s->schedule = (pp_schedule)fw_pick(f, "schedule", scheds, 3);
        s->virtual_stages = 1;
        if (s->schedule == PP_SCHED_INTERLEAVED) {
            s->virtual_stages = 2 + pick(3);
            while (s->virtual_stages > 1 && m->layers % (s->pp * s->virtual_stages)) s->virtual_stages--;
            if (s->virtual_stages == 1) s->schedule = PP_SCHED_1F1B;
        }
    }
    if (chance(10)) s->attention = PP_ATTN_MATERIALISED;
    static const int opts[] = {PP_OPT_ADAMW, PP_OPT_ADAMW, PP_OPT_ADAMW, PP_OPT_ADAM8BIT, PP_OPT_ADAFACTOR,
                               PP_OPT_SGD, PP_OPT_LION};
    s->optimizer = (pp_optimizer)fw_pick(f, "optimizer", opts, 7);
    if (chance(15) && !pp__fw_get(f)->fixed_order) memcpy(s->order, orders[pick(5)], 12);
    if (chance(15)) s->overlap_dp = 0;
    if (chance(10) && s->sp) s->overlap_tp = 1;
    static const int cps[] = {PP_CP_RING, PP_CP_ALLGATHER, PP_CP_A2A};
    if (s->cp > 1 && chance(30)) s->cp_comm = (pp_cp_comm)fw_pick(f, "cp_comm", cps, 3);
    static const int losses[] = {PP_LOSS_FP32, PP_LOSS_FUSED, PP_LOSS_CHUNKED};
    if (chance(10)) s->loss = (pp_loss)fw_pick(f, "loss", losses, 3);
    if (chance(10)) s->grad_accum_dtype = (pp_grad_accum)pick(PP_GRAD_COUNT);
    int mode = pick(100);
    if (mode >= 85) {
        static const int modes[] = {PP_MODE_LORA, PP_MODE_QLORA};
        s->ft.mode = (pp_train_mode)fw_pick(f, "mode", modes + (mode >= 95), 1);
        if (!pp_framework_supports(f, "mode", s->ft.mode)) s->ft.mode = PP_MODE_FULL;
        s->ft.lora_rank = 8 << pick(4);
    }
    if (pp_framework_supports(f, "opt_states", PP_OPT_STATES_BF16) && chance(15)) s->opt_states = PP_OPT_STATES_BF16;
}

/* A random valid case: tries until the rule table accepts one. *tries
 * counts every attempt. */
static void gen_valid(kase *k, pp_strategy *resolved, long *tries)
{
    for (;;) {
        ++*tries;
        k->model = pick(NMODELS);
        const pp_model *m = &W->models[k->model];
        gen_cluster(k);
        pp_strategy_default(&k->s);
        k->s.framework = (pp_framework)pick(PP_FW_COUNT);
        if (pp_cluster_gpus(&k->c) > 1 && k->s.framework == PP_FW_PYTORCH && chance(50))
            k->s.framework = (pp_framework)(1 + pick(PP_FW_COUNT - 1));
        gen_degrees(k, m, &k->s);
        gen_training(k, m, &k->s);
        *resolved = k->s;
        pp_error err = {""};
        if (pp_strategy_resolve(resolved, m, &k->c, &err) == PP_OK) return;
    }
}

/* ------------------------------------------------------------ the command */

static const char *ename(int which, int v)
{
    int n;
    const char *const *names = pp_enum_names(which, &n);
    return v >= 0 && v < n ? names[v] : "?";
}

/* The strategy as a `parplan estimate` command: every field given, and
 * every behaviour the strategy has as given (not derived by resolve). */
static void command(const kase *k, const pp_strategy *s, char *buf, size_t cap)
{
    const pp_cluster *c = &k->c;
    int n = 0;
#define ADD(...) n += snprintf(buf + n, n < (int)cap ? cap - (size_t)n : 0, __VA_ARGS__)
    ADD("parplan estimate --model %s --cluster %s", model_names[k->model], cluster_names[k->cluster]);
    if (c->nodes == 1 && c->gpus_per_node < W->clusters[k->cluster].gpus_per_node)
        ADD(" --gpus %d", c->gpus_per_node);
    else
        ADD(" --nodes %d", c->nodes);
    ADD(" --framework %s --dp %d --tp %d --pp %d --cp %d --ep %d%s --zero %d", pp_framework_name(s->framework), s->dp,
        s->tp, s->pp, s->cp, s->ep, s->sp ? " --sp" : "", s->zero);
    if (s->shard > 0) ADD(" --shard %d", s->shard);
    ADD(" --offload %s --recompute %s", ename(PP_ENUM_OFFLOAD, s->offload), ename(PP_ENUM_RECOMPUTE, s->recompute));
    if (s->recompute_layers >= 0) ADD(" --recompute-layers %d", s->recompute_layers);
    if (s->act_offload_layers > 0) ADD(" --act-offload-layers %d", s->act_offload_layers);
    ADD(" --precision %s --optimizer %s --attention %s --micro-batch %d --global-batch %d --seq %d",
        ename(PP_ENUM_PRECISION, s->precision), ename(PP_ENUM_OPTIMIZER, s->optimizer),
        ename(PP_ENUM_ATTENTION, s->attention), s->micro_batch, s->global_batch, s->seq);
    ADD(" --schedule %s --virtual-stages %d --order %s", ename(PP_ENUM_SCHEDULE, s->schedule), s->virtual_stages,
        s->order);
    unsigned f = s->filled;
    if (s->overlap_dp == 0 && !(f & PP_FILLED_OVERLAP_DP)) ADD(" --no-dp-overlap");
    if (s->overlap_tp == 1 && !(f & PP_FILLED_OVERLAP_TP)) ADD(" --tp-overlap");
    if (s->cp_comm >= 0 && !(f & PP_FILLED_CP_COMM)) ADD(" --cp-comm %s", ename(PP_ENUM_CP_COMM, s->cp_comm));
    if (s->loss >= 0 && !(f & PP_FILLED_LOSS)) ADD(" --loss %s", ename(PP_ENUM_LOSS, s->loss));
    if (s->grad_accum_dtype >= 0 && !(f & PP_FILLED_GRAD_DTYPE))
        ADD(" --grad-accum %s", ename(PP_ENUM_GRAD_ACCUM, s->grad_accum_dtype));
    if (s->buf.free_pipeline_outputs == 1 && !(f & PP_FILLED_OUTPUTS)) ADD(" --free-pipeline-outputs");
    if (s->buf.expandable_segments >= 0 && !(f & PP_FILLED_ALLOCATOR))
        ADD(" --allocator %s", s->buf.expandable_segments ? "expandable" : "caching");
    if (s->ft.mode != PP_MODE_FULL)
        ADD(" --mode %s --lora-rank %d", ename(PP_ENUM_MODE, s->ft.mode), s->ft.lora_rank);
    if (s->opt_states == PP_OPT_STATES_BF16) ADD(" --optimizer-states bf16");
    if (s->precision == PP_PREC_FP8 && s->fp8_param_gather >= 0 && !(f & PP_FILLED_FP8_PARAMS))
        ADD(" --fp8-param-gather %s", s->fp8_param_gather ? "on" : "off");
    if (s->recompute_modules) {
        char mods[96];
        ADD(" --recompute-modules %s", pp_rc_modules_format(s->recompute_modules, ',', mods, sizeof mods));
    }
#undef ADD
}

/* ------------------------------------------------------------ laws */

enum { L_BYTES, L_RING, L_OFFLOAD, L_ZERO, L_EXPOSED, L_SUM, L_MEMORY, L_DTYPE, L_MB, L_ALLOC, L_DEPS, L_STATES, L_RCMOD,
       L_FP8P, L_VP, L_EXPERTS, L_COPYOUT, L_COUNT };

typedef struct tally {
    long cases, tries, checks[L_COUNT];
    int failures;
} tally;

static const char *const law_names[] = {"moving bytes costs time", "ring latency grows with ranks",
                                        "offload is never faster", "ZeRO-3 is never faster than ZeRO-2",
                                        "exposed <= total", "breakdowns sum", "memory floor", "fp32 >= 2 x bf16",
                                        "activations grow with the micro-batch",
                                        "expandable segments: no more memory, same step",
                                        "a rule reads only the dimensions it declares",
                                        "bf16 optimizer states: less memory, no slower",
                                        "one more recompute module: no more memory, no faster",
                                        "FP8 primary weights: less weight memory, slower only by DP",
                                        "more chunks per stage: more pipeline communication",
                                        "graphed experts: no host wait, and only it removed",
                                        "FSDP2's copy-out: more compute, never a shorter step"};

#define MAX_REPORTS 12

static void broken(tally *t, int law, const kase *k, const pp_strategy *s, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void broken(tally *t, int law, const kase *k, const pp_strategy *s, const char *fmt, ...)
{
    if (++t->failures > MAX_REPORTS) return;
    char what[512], cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    command(k, s, cmd, sizeof cmd);
    cr_log_error("law \"%s\" broken: %s\n  %s", law_names[law], what, cmd);
}

static int estimate(const kase *k, pp_strategy *s, pp_plan *p)
{
    pp_error err = {""};
    return pp_estimate(&W->models[k->model], &k->c, s, p, &err) == PP_OK;
}

/* A variant of a resolved strategy: one field changed, every behaviour kept
 * as it was (given, not derived), resolved again. 0 when the rule table
 * refuses it. */
static int variant(const kase *k, const pp_strategy *base, void (*change)(pp_strategy *, int), int v,
                   pp_strategy *out, pp_plan *p)
{
    *out = *base;
    out->filled &= PP_FILLED_GRAD_ACCUM | PP_FILLED_SPLIT;
    change(out, v);
    pp_strategy keep = *out;
    if (!estimate(k, out, p)) return 0;
    *out = keep;
    return 1;
}

/* Bytes over a group of more than one rank take time (the EP group of
 * issue 13 ran off the cluster when ep > dp and cost 0 s). */
static void law_bytes(tally *t, const kase *k, const pp_strategy *s, const pp_plan *p)
{
    const pp_model *m = &W->models[k->model];
    const pp_time *tm = &p->time;
    t->checks[L_BYTES]++;
    int first = 0, i = tm->slowest_stage, moe = 0, blk[PP_MAX_LAYERS];
    for (int j = 0; j < i; j++) first += s->stage_layers[j];
    int nb = pp__stage_blocks(m, &p->strategy, i, first, first + s->stage_layers[i] - 1, blk); /* interleaved: its chunks */
    for (int b = 0; b < nb; b++) moe |= m->block_kind[blk[b]] == PP_BLOCK_MOE;
    if (s->tp > 1 && !(tm->tp_comm_s > 0)) broken(t, L_BYTES, k, s, "tp %d: TP comm %g s", s->tp, tm->tp_comm_s);
    if (s->cp > 1 && s->stage_layers[i] > 0 && !(tm->cp_comm_s > 0))
        broken(t, L_BYTES, k, s, "cp %d: CP comm %g s", s->cp, tm->cp_comm_s);
    if (s->ep > 1 && moe && !(tm->ep_comm_s > 0))
        broken(t, L_BYTES, k, s, "ep %d, MoE blocks on stage %d: EP comm %g s", s->ep, i, tm->ep_comm_s);
    if (s->pp > 1 && !(tm->pp_comm_s > 0)) broken(t, L_BYTES, k, s, "pp %d: PP comm %g s", s->pp, tm->pp_comm_s);
    if (s->dp * s->cp > 1 && p->params_trainable > 0 && !(tm->dp_comm_s > 0 && tm->dp_comm_exposed_s > 0))
        broken(t, L_BYTES, k, s, "dp x cp %d: DP/ZeRO comm %g s, exposed %g s", s->dp * s->cp, tm->dp_comm_s,
               tm->dp_comm_exposed_s);
    if (s->offload != PP_OFFLOAD_NONE && p->params_trainable > 0 && !(tm->offload_s > 0))
        broken(t, L_BYTES, k, s, "offload %s: %g s", ename(PP_ENUM_OFFLOAD, s->offload), tm->offload_s);
}

static void law_exposed(tally *t, const kase *k, const pp_strategy *s, const pp_plan *p)
{
    t->checks[L_EXPOSED]++;
    if (p->time.dp_comm_exposed_s > p->time.dp_comm_s * (1 + REL))
        broken(t, L_EXPOSED, k, s, "DP/ZeRO exposed %.9g s > total %.9g s", p->time.dp_comm_exposed_s, p->time.dp_comm_s);
}

static int close_to(double a, double b) { return fabs(a - b) <= REL * fmax(fabs(a), fabs(b)) + 1e-300; }

static void law_sums(tally *t, const kase *k, const pp_strategy *s, const pp_plan *p)
{
    const pp_time *tm = &p->time;
    t->checks[L_SUM]++;
    double sum = tm->compute_s + tm->recompute_s + tm->tp_comm_s + tm->cp_comm_s + tm->ep_comm_s + tm->pp_comm_s +
                 tm->dp_comm_exposed_s + tm->bubble_s + tm->optimizer_s + tm->offload_s;
    if (!close_to(sum, tm->step_s)) broken(t, L_SUM, k, s, "time terms %.12g s, step %.12g s", sum, tm->step_s);
    for (int i = 0; i < p->memory.nstages; i++) {
        const pp_stage_mem *st = &p->memory.stages[i];
        double parts = st->params_bytes + st->grads_bytes + st->optimizer_bytes + st->activations_bytes +
                       st->buffers_bytes;
        if (!close_to(parts, st->total_bytes) || !close_to(st->phase_bytes[st->peak_phase], st->total_bytes) ||
            st->total_bytes < fmax(st->phase_bytes[0], st->phase_bytes[1]) * (1 - REL))
            broken(t, L_SUM, k, s, "stage %d: parts %.12g B, total %.12g B, phases %.12g/%.12g B", i, parts,
                   st->total_bytes, st->phase_bytes[0], st->phase_bytes[1]);
    }
}

/* Every byte count is finite and >= 0, and a stage holds at least its
 * share of the weights and the optimizer states that stay on the GPU, plus
 * the CUDA context: 16-bit (NF4: half a byte) weights not offloaded, sharded
 * over at most dp x cp ranks under ZeRO-3; moments (no master copy) of the
 * trained weights, sharded over at most dp x cp under ZeRO-1+. */
static void law_memory(tally *t, const kase *k, const pp_strategy *s, const pp_plan *p)
{
    const pp_model *m = &W->models[k->model];
    t->checks[L_MEMORY]++;
    int zs = pp__zero_states(s), first = 0;
    double nd = (double)s->dp * s->cp, wmin = s->ft.mode == PP_MODE_QLORA ? 0.5 : 2;
    double kmin = pp__optimizer_bytes_per_param(m, s->optimizer, PP_PREC_FP32);
    int params_off = s->offload == PP_OFFLOAD_OPT_PARAMS || s->offload == PP_OFFLOAD_NVME;
    for (int i = 0; i < p->memory.nstages; i++) {
        const pp_stage_mem *st = &p->memory.stages[i];
        int last = first + s->stage_layers[i] - 1;
        const double v[] = {st->params_bytes, st->grads_bytes, st->optimizer_bytes, st->activations_bytes,
                            st->buffers_bytes, st->total_bytes, st->phase_bytes[0], st->phase_bytes[1],
                            st->act_per_microbatch, st->logits_bytes, st->zero_gather_bytes, st->bucket_bytes,
                            st->p2p_bytes, st->recompute_bytes, st->context_bytes, st->fragmentation_bytes,
                            st->host_bytes, st->nvme_bytes, st->grads_total_bytes, st->cast_bytes, st->opt_temp_bytes,
                            st->act_offload_bytes};
        for (size_t j = 0; j < sizeof v / sizeof *v; j++)
            if (!(v[j] >= 0) || !isfinite(v[j])) broken(t, L_MEMORY, k, s, "stage %d: term %zu is %g bytes", i, j, v[j]);
        double dense, expert, trained, nf4;
        pp__stage_params(m, s, i, first, last, &dense, &expert);
        pp__stage_trainable(m, s, i, first, last, &trained, &nf4);
        double weights = params_off ? 0 : (dense + expert) * wmin / (zs >= 3 ? nd : 1);
        double opt = s->offload != PP_OFFLOAD_NONE ? 0 : trained * kmin / (zs >= 1 ? nd : 1);
        double floor = weights + opt + s->buf.cuda_context;
        if (st->total_bytes < floor * (1 - REL))
            broken(t, L_MEMORY, k, s, "stage %d: %.6g B below the floor %.6g B (weights %.4g, optimizer %.4g)", i,
                   st->total_bytes, floor, weights, opt);
        first = last + 1;
    }
}

static void set_offload(pp_strategy *s, int v) { s->offload = (pp_offload)v; }

/* none <= optimizer <= optimizer+params < nvme, where valid: NVMe moves
 * the optimizer states through the drives on top of what CPU offload
 * moves, so it is strictly slower while anything trains (issue 13: NVMe
 * offload cost exactly what CPU offload cost). */
static void law_offload(tally *t, const kase *k, const pp_strategy *s, pp_plan *p)
{
    double step[PP_OFFLOAD_COUNT], trained = 0;
    pp_strategy v[PP_OFFLOAD_COUNT];
    int ok[PP_OFFLOAD_COUNT], wrap[PP_OFFLOAD_COUNT];
    for (int o = 0; o < PP_OFFLOAD_COUNT; o++) {
        ok[o] = variant(k, s, set_offload, o, &v[o], p);
        step[o] = ok[o] ? p->time.step_s : 0;
        wrap[o] = ok[o] ? (int)pp__ds_wrapper_of(&p->strategy) : -1;
        if (ok[o]) trained = p->params_trainable;
    }
    static const int pairs[][3] = {{PP_OFFLOAD_NONE, PP_OFFLOAD_OPTIMIZER, 0},
                                   {PP_OFFLOAD_NONE, PP_OFFLOAD_OPT_PARAMS, 0},
                                   {PP_OFFLOAD_OPTIMIZER, PP_OFFLOAD_OPT_PARAMS, 0},
                                   {PP_OFFLOAD_OPT_PARAMS, PP_OFFLOAD_NVME, 1}};
    for (int i = 0; i < 4; i++) {
        int a = pairs[i][0], b = pairs[i][1], strict = pairs[i][2] && trained > 0;
        if (!ok[a] || !ok[b]) continue;
        /* not all else equal: without offload DeepSpeed runs bf16 with fp32
         * accumulation in BF16_Optimizer, which partitions and all-gathers
         * after the step; with it (QLoRA at ZeRO-0) another wrapper */
        const pp__fw *f = pp__fw_get(s->framework);
        if (f && f->buckets == PP_BUCKETS_DEEPSPEED && wrap[a] != wrap[b]) continue;
        t->checks[L_OFFLOAD]++;
        if (strict ? !(step[b] > step[a]) : step[b] < step[a] * (1 - REL)) {
            char ca[2048];
            command(k, &v[a], ca, sizeof ca);
            broken(t, L_OFFLOAD, k, &v[b], "offload %s %.9g s %s %s %.9g s (%s)", ename(PP_ENUM_OFFLOAD, b), step[b],
                   strict ? "<=" : "<", ename(PP_ENUM_OFFLOAD, a), step[a], ca);
        }
    }
}

static void set_zero_no_overlap(pp_strategy *s, int v)
{
    s->zero = v;
    s->overlap_dp = 0;
}

static void set_per_tensor(pp_strategy *s, int v) { s->buf.zero3_per_tensor = v; }

/* ZeRO-3 against ZeRO-2, or ZeRO-1 where the framework has no ZeRO-2
 * (Megatron: the distributed optimizer against Megatron-FSDP). */
static void law_zero(tally *t, const kase *k, const pp_strategy *s, pp_plan *p)
{
    pp_strategy z2, z3;
    int lower = 2;
    if (!variant(k, s, set_zero_no_overlap, lower, &z2, p) && !variant(k, s, set_zero_no_overlap, --lower, &z2, p))
        return;
    double t2 = p->time.step_s;
    if (!variant(k, s, set_zero_no_overlap, 3, &z3, p)) return;
    t->checks[L_ZERO]++;
    double t3 = p->time.step_s;
    /* DeepSpeed's ZeRO-1/2 all-reduce in fp32 under Ulysses where ZeRO-3
     * reduce-scatters in 16 bits (stage_1_and_2.py and stage3.py
     * allreduce_bucket / __avg_scatter_grads, v0.14.5): more bytes, so the
     * law holds only at equal gradient bytes */
    const pp__fw *f = pp__fw_get(z2.framework);
    int ulysses = f && f->buckets == PP_BUCKETS_DEEPSPEED && z2.cp > 1;
    if (t3 < t2 * (1 - REL) && !ulysses) {
        char c2[2048];
        command(k, &z2, c2, sizeof c2);
        broken(t, L_ZERO, k, &z3, "ZeRO-3 %.9g s < ZeRO-%d %.9g s (%s)", t3, lower, t2, c2);
    }
    /* DeepSpeed's 2021 ZeRO-3 (a call per tensor) is never faster, but for
     * the copy coalesced fetches make (into compute), which it has not */
    pp_strategy old;
    double c3 = p->time.compute_s;
    if (!variant(k, &z3, set_per_tensor, 1, &old, p)) return;
    t->checks[L_ZERO]++;
    double copy = fmax(0, c3 - p->time.compute_s);
    if (p->time.step_s < (t3 - copy) * (1 - REL))
        broken(t, L_ZERO, k, &old, "per-tensor ZeRO-3 %.9g s < coalesced %.9g s less its copy %.9g s", p->time.step_s,
               t3, copy);
}

static void set_precision(pp_strategy *s, int v) { s->precision = (pp_precision)v; }

/* Activations stored per micro-batch double from bf16 to fp32 where every
 * stored tensor is in the activation dtype: no dropout masks (1 byte), no
 * fp32 softmax statistics (flash attention's log-sum-exp, kept unless the
 * block is recomputed), no fp32 router logits, no HF RMSNorm fp32 copies,
 * no adapters. */
static int all_in_act_dtype(const pp_model *m, const pp_strategy *s)
{
    if (m->dropout > 0 || s->ft.mode != PP_MODE_FULL) return 0;
    if (s->recompute == PP_RECOMPUTE_FULL && s->recompute_layers < 0) return 1;
    /* HF's RMSNorm keeps an fp32 copy of its input (and fp32 output under AMP) */
    if (m->norm == PP_NORM_RMSNORM && pp__hf_modeling(s)) return 0;
    return s->attention == PP_ATTN_MATERIALISED && m->experts == 0;
}

static void law_dtype(tally *t, const kase *k, const pp_strategy *s, pp_plan *p)
{
    const pp_model *m = &W->models[k->model];
    if (!all_in_act_dtype(m, s)) return;
    pp_strategy b16, f32;
    static double act16[PP_MAX_STAGES];
    if (!variant(k, s, set_precision, PP_PREC_BF16, &b16, p)) return;
    int n = p->memory.nstages;
    for (int i = 0; i < n; i++) act16[i] = p->memory.stages[i].act_per_microbatch;
    if (!variant(k, s, set_precision, PP_PREC_FP32, &f32, p)) return;
    /* an fp8 FSDP plan is torchtitan's; in bf16 and fp32 HF Accelerate runs it */
    if (!all_in_act_dtype(m, &b16) || !all_in_act_dtype(m, &f32)) return;
    t->checks[L_DTYPE]++;
    for (int i = 0; i < n; i++)
        if (p->memory.stages[i].act_per_microbatch < 2 * act16[i] * (1 - REL)) {
            broken(t, L_DTYPE, k, &f32, "stage %d: fp32 %.6g B < 2 x bf16 %.6g B", i,
                   p->memory.stages[i].act_per_microbatch, act16[i]);
            break;
        }
}

/* One sequence more per micro-batch (the same accumulation) never stores
 * fewer activations per micro-batch on any stage, so no larger micro-batch
 * does. The search relies on it: a shape over memory at one micro-batch is
 * not examined at larger ones (planner/space.c enum_mbs). */
static void set_more_mb(pp_strategy *s, int v)
{
    int accum = s->global_batch / (s->micro_batch * s->dp);
    s->micro_batch += v;
    s->global_batch = s->micro_batch * s->dp * accum;
}

static void law_mb(tally *t, const kase *k, const pp_strategy *s, pp_plan *p)
{
    static double act1[PP_MAX_STAGES];
    pp_strategy one, two;
    if (!variant(k, s, set_more_mb, 0, &one, p)) return;
    int n = p->memory.nstages;
    for (int i = 0; i < n; i++) act1[i] = p->memory.stages[i].act_per_microbatch;
    if (!variant(k, s, set_more_mb, 1, &two, p)) return;
    t->checks[L_MB]++;
    for (int i = 0; i < n && i < p->memory.nstages; i++)
        if (p->memory.stages[i].act_per_microbatch < act1[i] * (1 - REL)) {
            char c1[2048];
            command(k, &one, c1, sizeof c1);
            broken(t, L_MB, k, &two, "stage %d: %.6g B at micro-batch %d < %.6g B at %d (%s)", i,
                   p->memory.stages[i].act_per_microbatch, two.micro_batch, act1[i], one.micro_batch, c1);
            break;
        }
}

/* Interleaving sends every chunk's output on (Narayanan et al. 2021 Sec.
 * 2.2.2: v times the communication): with twice the chunks a stage's
 * pipeline transfers cost more (rt11, rt14: they cost the same
 * whatever v, and plan picked the largest v it could). */
static void set_chunks(pp_strategy *s, int v)
{
    s->schedule = PP_SCHED_INTERLEAVED, s->virtual_stages = v;
    memset(s->chunk_layers, 0, sizeof s->chunk_layers);
    s->vp_group = 0;
}

static void law_vp(tally *t, const kase *k, const pp_strategy *s, pp_plan *p)
{
    pp_strategy a, b;
    if (s->pp < 2 || !variant(k, s, set_chunks, 2, &a, p)) return;
    double two = p->time.pp_comm_s;
    if (!variant(k, s, set_chunks, 4, &b, p)) return;
    t->checks[L_VP]++;
    if (!(p->time.pp_comm_s > two * (1 + REL))) {
        char c1[2048];
        command(k, &a, c1, sizeof c1);
        broken(t, L_VP, k, &b, "v 4: PP comm %.9g s, not more than %.9g s at v 2 (%s)", p->time.pp_comm_s, two, c1);
    }
}

/* Expert launches (compute.c expert_host) are a part of compute and
 * recompute, >= 0; CUDA graphs over the experts remove exactly that part:
 * none left, compute plus recompute lower by what the eager run reported
 * (on the same slowest stage), no overlapped term less exposed (less
 * compute hides no more), and never a longer step. The last held but for 5
 * strategies until ZeRO-3's gathers and the offloaded parameters' copies
 * shared one hiding budget; it still fails beside Megatron's activation
 * offload, whose copies hide apart from the other streams (docs/time.md,
 * "Overlap"), which the law leaves out. */
static void set_graphs(pp_strategy *s, int v) { s->buf.expert_graphs = v; }

static void law_experts(tally *t, const kase *k, const pp_strategy *s, pp_plan *eager, pp_plan *p)
{
    if (W->models[k->model].experts <= 0) return;
    pp_strategy g;
    if (!variant(k, s, set_graphs, 0, &g, eager) || !variant(k, s, set_graphs, 1, &g, p)) return;
    const pp_time *e = &eager->time, *q = &p->time;
    if (e->expert_host_s != 0) t->checks[L_EXPERTS]++; /* counted where there is a wait to remove */
    double work = e->compute_s + e->recompute_s, graphed = q->compute_s + q->recompute_s;
    if (!(e->expert_host_s >= 0) || e->expert_host_s > work * (1 + REL))
        broken(t, L_EXPERTS, k, s, "expert launches %.9g s of compute + recompute %.9g s", e->expert_host_s, work);
    if (q->expert_host_s != 0) broken(t, L_EXPERTS, k, &g, "graphed: expert launches %.9g s", q->expert_host_s);
    /* never a longer step, but beside Megatron's activation offload, whose
     * copies hide behind the forward and backward apart from the other
     * streams (docs/time.md, "Overlap") */
    if (!s->act_offload_layers && q->step_s > e->step_s * (1 + REL))
        broken(t, L_EXPERTS, k, &g, "graphed step %.9g s > eager %.9g s", q->step_s, e->step_s);
    if (q->slowest_stage != e->slowest_stage) return;
    if (!close_to(work - graphed + 1, e->expert_host_s + 1))
        broken(t, L_EXPERTS, k, &g, "graphed: compute + recompute %.12g s, eager %.12g s, launches %.12g s", graphed,
               work, e->expert_host_s);
    double te[] = {e->tp_comm_s, e->cp_comm_s, e->ep_comm_s, e->dp_comm_exposed_s, e->offload_s};
    double tg[] = {q->tp_comm_s, q->cp_comm_s, q->ep_comm_s, q->dp_comm_exposed_s, q->offload_s};
    for (int i = 0; i < 5; i++)
        if (tg[i] < te[i] * (1 - REL) - 1e-12)
            broken(t, L_EXPERTS, k, &g, "graphed: exposed term %d %.12g s < eager %.12g s", i, tg[i], te[i]);
}

/* FSDP2 copies each gathered unit out on the compute stream, FSDP1 gathers
 * into its flat parameter: the same plan as FSDP1 never takes longer, its
 * compute is shorter wherever units are gathered every micro-batch (one
 * stage), and its memory is the same. */
static void set_fsdp1(pp_strategy *s, int v) { s->buf.fsdp1 = v; }

static void law_copyout(tally *t, const kase *k, const pp_strategy *s, pp_plan *two, pp_plan *p)
{
    pp_strategy c;
    if (s->framework != PP_FW_FSDP || !variant(k, s, set_fsdp1, 0, &c, two) || !variant(k, s, set_fsdp1, 1, &c, p))
        return;
    t->checks[L_COPYOUT]++;
    const pp_time *a = &two->time, *b = &p->time;
    if (a->step_s < b->step_s * (1 - REL))
        broken(t, L_COPYOUT, k, s, "FSDP2 step %.9g s < FSDP1 %.9g s", a->step_s, b->step_s);
    if (s->pp == 1 && !(a->compute_s > b->compute_s))
        broken(t, L_COPYOUT, k, s, "FSDP2 compute %.12g s, FSDP1 %.12g s: the copy-out costs nothing", a->compute_s,
               b->compute_s);
    if (!close_to(two->memory.peak_bytes, p->memory.peak_bytes))
        broken(t, L_COPYOUT, k, s, "peak %.9g B, %.9g B as FSDP1", two->memory.peak_bytes, p->memory.peak_bytes);
}

/* Expandable segments only remove the caching allocator's overhead: never
 * a larger peak on any stage, never a different step. */
static void set_alloc(pp_strategy *s, int v) { s->buf.expandable_segments = v; }

static void law_alloc(tally *t, const kase *k, const pp_strategy *s, pp_plan *p)
{
    static double peak0[PP_MAX_STAGES];
    pp_strategy c0, c1;
    if (!pp__fw_get(s->framework)->alloc_env || !variant(k, s, set_alloc, 0, &c0, p)) return;
    int n = p->memory.nstages;
    double step0 = p->time.step_s;
    for (int i = 0; i < n; i++) peak0[i] = p->memory.stages[i].total_bytes;
    if (!variant(k, s, set_alloc, 1, &c1, p)) return;
    t->checks[L_ALLOC]++;
    if (fabs(p->time.step_s - step0) > REL * step0)
        broken(t, L_ALLOC, k, &c1, "step %.9g s, %.9g s with the caching allocator", p->time.step_s, step0);
    for (int i = 0; i < n && i < p->memory.nstages; i++)
        if (p->memory.stages[i].total_bytes > peak0[i] * (1 + REL)) {
            broken(t, L_ALLOC, k, &c1, "stage %d: %.6g B > %.6g B with the caching allocator", i,
                   p->memory.stages[i].total_bytes, peak0[i]);
            break;
        }
}

/* bf16 optimizer states (6 bytes a trained weight instead of 12) only
 * shrink the optimizer's memory and its update's traffic: no stage's peak
 * grows, the optimizer column shrinks wherever weights train, and the step
 * is never longer. */
static void set_states(pp_strategy *s, int v) { s->opt_states = v; }

static void law_states(tally *t, const kase *k, const pp_strategy *s, pp_plan *p)
{
    static double peak0[PP_MAX_STAGES], opt0[PP_MAX_STAGES];
    pp_strategy c0, c1;
    if (!variant(k, s, set_states, PP_OPT_STATES_FP32, &c0, p)) return;
    int n = p->memory.nstages;
    double step0 = p->time.step_s;
    for (int i = 0; i < n; i++) peak0[i] = p->memory.stages[i].total_bytes, opt0[i] = p->memory.stages[i].optimizer_bytes;
    if (!variant(k, s, set_states, PP_OPT_STATES_BF16, &c1, p)) return;
    t->checks[L_STATES]++;
    if (p->time.step_s > step0 * (1 + REL))
        broken(t, L_STATES, k, &c1, "step %.9g s > %.9g s with fp32 states", p->time.step_s, step0);
    for (int i = 0; i < n && i < p->memory.nstages; i++) {
        const pp_stage_mem *g = &p->memory.stages[i];
        if (g->total_bytes > peak0[i] * (1 + REL) || (opt0[i] > 0 && !(g->optimizer_bytes < opt0[i]))) {
            broken(t, L_STATES, k, &c1, "stage %d: peak %.6g B (fp32 states %.6g B), optimizer %.6g B (%.6g B)", i,
                   g->total_bytes, peak0[i], g->optimizer_bytes, opt0[i]);
            break;
        }
    }
}

/* Megatron's selective recompute of one module more (--recompute-modules)
 * keeps fewer activations and redoes more work: no stage's peak grows, no
 * stage's activations grow, and the step is never shorter. */
static void set_rcmods(pp_strategy *s, int v) { s->recompute = PP_RECOMPUTE_SELECTIVE, s->recompute_layers = -1, s->recompute_modules = (unsigned)v; }

static void law_rcmods(tally *t, const kase *k, const pp_strategy *s, pp_plan *p)
{
    static double peak0[PP_MAX_STAGES], act0[PP_MAX_STAGES];
    if (!pp_framework_supports(s->framework, "recompute_modules", 1)) return;
    unsigned m0 = (unsigned)pick(1 << PP_RC_COUNT), bit = 1u << pick(PP_RC_COUNT);
    if (m0 & bit) return;
    pp_strategy c0, c1;
    if (!variant(k, s, set_rcmods, (int)m0, &c0, p)) return;
    int n = p->memory.nstages;
    double step0 = p->time.step_s;
    for (int i = 0; i < n; i++) peak0[i] = p->memory.stages[i].total_bytes, act0[i] = p->memory.stages[i].activations_bytes;
    /* 0 is core_attn: one more over the default adds to core_attn */
    if (!variant(k, s, set_rcmods, (int)((m0 ? m0 : PP_RC_CORE_ATTN) | bit), &c1, p)) return;
    t->checks[L_RCMOD]++;
    if (p->time.step_s < step0 * (1 - REL))
        broken(t, L_RCMOD, k, &c1, "step %.9g s < %.9g s without the module", p->time.step_s, step0);
    for (int i = 0; i < n && i < p->memory.nstages; i++) {
        const pp_stage_mem *g = &p->memory.stages[i];
        if (g->total_bytes > peak0[i] * (1 + REL) || g->activations_bytes > act0[i] * (1 + REL)) {
            broken(t, L_RCMOD, k, &c1, "stage %d: peak %.6g B (without %.6g B), activations %.6g B (%.6g B)", i,
                   g->total_bytes, peak0[i], g->activations_bytes, act0[i]);
            break;
        }
    }
}

/* FP8 primary weights (--fp8-param-gather) drop the bf16 copy of every
 * FP8 weight and halve the parameter gathers, for the same arithmetic: on
 * an fp8 Megatron strategy with the distributed optimizer or Megatron-FSDP,
 * every stage keeps fewer weight bytes and no stage's peak grows; the step
 * grows only by exposed DP traffic (Megatron then reduces the 16-bit tables
 * with the first layers, last: param_and_grad_buffer.py partition_buckets). */
static void set_fp8p(pp_strategy *s, int v)
{
    s->precision = PP_PREC_FP8, s->fp8_param_gather = v;
    if (s->zero != 1 && s->zero != 3) s->zero = 1;
}

static void law_fp8params(tally *t, const kase *k, const pp_strategy *s, pp_plan *p)
{
    static double peak0[PP_MAX_STAGES], w0[PP_MAX_STAGES];
    if (!pp_framework_supports(s->framework, "fp8_param_gather", 1)) return;
    pp_strategy c0, c1;
    if (!variant(k, s, set_fp8p, 0, &c0, p)) return;
    int n = p->memory.nstages;
    double step0 = p->time.step_s, dp0 = p->time.dp_comm_exposed_s, cmp0 = p->time.compute_s;
    for (int i = 0; i < n; i++) peak0[i] = p->memory.stages[i].total_bytes, w0[i] = p->memory.stages[i].params_bytes;
    if (!variant(k, s, set_fp8p, 1, &c1, p)) return;
    t->checks[L_FP8P]++;
    double more_dp = fmax(0, p->time.dp_comm_exposed_s - dp0);
    if (p->time.step_s > (step0 + more_dp) * (1 + REL) || fabs(p->time.compute_s - cmp0) > REL * cmp0)
        broken(t, L_FP8P, k, &c1, "step %.9g s > %.9g s with bf16 weights + %.9g s more exposed DP, compute %.9g vs %.9g s",
               p->time.step_s, step0, more_dp, p->time.compute_s, cmp0);
    for (int i = 0; i < n && i < p->memory.nstages; i++) {
        const pp_stage_mem *g = &p->memory.stages[i];
        if (g->total_bytes > peak0[i] * (1 + REL) || (w0[i] > 0 && !(g->params_bytes < w0[i]))) {
            broken(t, L_FP8P, k, &c1, "stage %d: peak %.6g B (bf16 weights %.6g B), weights %.6g B (%.6g B)", i,
                   g->total_bytes, peak0[i], g->params_bytes, w0[i]);
            break;
        }
    }
}

/* The search checks a rule once every dimension it declares has been
 * chosen (planner/space.c level_rules, in the order below): a rule that
 * reads a dimension chosen after its declared ones is checked before that
 * dimension takes its value, and lets through plans the rule refuses
 * (fw-launcher read recompute without declaring it). So: changing a
 * dimension chosen after all of a rule's declared ones never changes the
 * rule's verdict. */
static int dim_level(unsigned d)
{
    static const unsigned order[] = {PP_DIM_FW | PP_DIM_BASE | PP_DIM_LAUNCH, PP_DIM_DEG, PP_DIM_EP, PP_DIM_ZERO,
                                     PP_DIM_OFFLOAD, PP_DIM_PREC, PP_DIM_SP, PP_DIM_RC, PP_DIM_SCHED, PP_DIM_MB,
                                     PP_DIM_BEHAV, PP_DIM_SPLIT};
    int last = -1;
    for (int l = 0; l < (int)(sizeof order / sizeof *order); l++)
        if (d & order[l]) last = l;
    return last;
}

typedef struct dim_change {
    unsigned dim;
    int values;
    void (*set)(pp_strategy *, int);
} dim_change;

/* recompute, and past its values selective with one module mask */
static void set_rc(pp_strategy *s, int v)
{
    s->recompute = (pp_recompute)(v < PP_RECOMPUTE_COUNT ? v : PP_RECOMPUTE_SELECTIVE), s->recompute_layers = -1;
    s->recompute_modules = v < PP_RECOMPUTE_COUNT ? 0 : (unsigned)(v - PP_RECOMPUTE_COUNT);
}
static void set_prec_dim(pp_strategy *s, int v) { s->precision = (pp_precision)v; }
static void set_off(pp_strategy *s, int v) { s->offload = (pp_offload)v; }
static void set_zero_dim(pp_strategy *s, int v) { s->zero = v; }
static void set_sp(pp_strategy *s, int v) { s->sp = v; }
static void set_sched(pp_strategy *s, int v) { s->schedule = (pp_schedule)(v % PP_SCHED_COUNT), s->virtual_stages = 1 + v / PP_SCHED_COUNT; }
static void set_mb(pp_strategy *s, int v)
{
    if (s->grad_accum % 2 == 0 && v) s->micro_batch *= 2, s->grad_accum /= 2;
}
/* behaviours the framework fills (the loss is not one the search varies:
 * the fill gives fp32, any other is the user's, fixed for the search) */
static void set_behav(pp_strategy *s, int v)
{
    if (v == 0) s->overlap_dp = !s->overlap_dp;
    if (v == 1) s->buf.free_pipeline_outputs = !s->buf.free_pipeline_outputs;
    if (v == 2) s->buf.expandable_segments = !s->buf.expandable_segments;
}

static const dim_change dim_changes[] = {
    {PP_DIM_RC, PP_RECOMPUTE_COUNT + (1 << PP_RC_COUNT), set_rc},   {PP_DIM_PREC, PP_PREC_COUNT, set_prec_dim},
    {PP_DIM_OFFLOAD, PP_OFFLOAD_COUNT, set_off}, {PP_DIM_ZERO, 4, set_zero_dim},
    {PP_DIM_SP, 2, set_sp},                    {PP_DIM_SCHED, 2 * PP_SCHED_COUNT, set_sched},
    {PP_DIM_MB, 2, set_mb},                    {PP_DIM_BEHAV, 3, set_behav},
};

static void law_deps(tally *t, const kase *k, const pp_strategy *s)
{
    pp__rule_ctx x0 = {&W->models[k->model], &k->c, s, 0};
    unsigned char verdict[PP_RULE_COUNT];
    for (int r = 1; r < PP_RULE_COUNT; r++) verdict[r] = (unsigned char)pp__rule_eval(&x0, (pp_rule)r, NULL);
    const dim_change *d = &dim_changes[pick((int)(sizeof dim_changes / sizeof *dim_changes))];
    pp_strategy v = *s;
    d->set(&v, pick(d->values));
    pp__rule_ctx x1 = {&W->models[k->model], &k->c, &v, 0};
    for (int r = 1; r < PP_RULE_COUNT; r++) {
        if (dim_level(d->dim) <= dim_level(pp__rule_deps((pp_rule)r))) continue;
        t->checks[L_DEPS]++;
        if (pp__rule_eval(&x1, (pp_rule)r, NULL) != verdict[r])
            broken(t, L_DEPS, k, &v, "rule %s changed its verdict when dimension 0x%x, chosen after its own, changed",
                   pp_rule_get((pp_rule)r)->id, d->dim);
    }
}

/* Ring collectives over n ranks pay (n-1) latency steps (and all-reduce
 * 2(n-1), or a tree's where NCCL picks one): a group with more ranks at
 * the same stride, over a tier no faster, never has a smaller latency term. */
typedef double (*coll_fn)(const pp__comm_group *, double);
static const coll_fn colls[] = {pp__allreduce_s, pp__allgather_s, pp__reducescatter_s, pp__alltoall_s};
static const char *const coll_names[] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all"};

static void law_ring(tally *t, const pp_cluster *c, int n1, int n2, int stride)
{
    pp__comm_group g1, g2;
    pp_group_link l1, l2;
    /* a family whose blocks straddle NVLink domains crosses the network
     * where a larger, aligned one need not: compared only when the larger
     * family's tier is no faster */
    if (pp_topo_group_link(c, n1, stride, &l1) || pp_topo_group_link(c, n2, stride, &l2) || l1.tier > l2.tier) return;
    pp__group(c, n1, stride, &g1);
    pp__group(c, n2, stride, &g2);
    for (int i = 0; i < 4; i++) {
        /* t(b) = latency + b x slope: the latency term is 2 t(1) - t(2) */
        double a = 2 * colls[i](&g1, 1) - colls[i](&g1, 2), b = 2 * colls[i](&g2, 1) - colls[i](&g2, 2);
        t->checks[L_RING]++;
        if (b < a * (1 - REL) && ++t->failures <= MAX_REPORTS)
            cr_log_error("law \"%s\" broken: %s on %s (%d nodes x %d): %d ranks at stride %d %.4g us, %d ranks %.4g us",
                         law_names[L_RING], coll_names[i], c->name, c->nodes, c->gpus_per_node, n1, stride, a * 1e6,
                         n2, b * 1e6);
    }
}

static long n_cases(void)
{
    const char *e = getenv("PARPLAN_LAWS_CASES");
    long n = e ? strtol(e, NULL, 10) : DEFAULT_CASES;
    return n > 0 ? n : DEFAULT_CASES;
}

Test(laws, random_valid_strategies, .timeout = 1200)
{
    load_world();
    rng_state = 13;
    tally t = {0};
    kase k;
    pp_strategy s;
    pp_plan *p = malloc(sizeof *p), *q = malloc(sizeof *q), *r2 = malloc(sizeof *r2);
    cr_assert(p && q && r2);
    long want = n_cases();
    for (t.cases = 0; t.cases < want; t.cases++) {
        gen_valid(&k, &s, &t.tries);
        pp_strategy r = s;
        cr_assert(estimate(&k, &r, p), "a resolved strategy estimates");
        law_bytes(&t, &k, &s, p);
        law_exposed(&t, &k, &s, p);
        law_sums(&t, &k, &s, p);
        law_memory(&t, &k, &s, p);
        if (pp__fw_get(s.framework)->offload != 1u) law_offload(&t, &k, &s, q);
        law_zero(&t, &k, &s, q);
        law_dtype(&t, &k, &s, q);
        law_mb(&t, &k, &s, q);
        law_vp(&t, &k, &s, q);
        law_experts(&t, &k, &s, r2, q);
        law_copyout(&t, &k, &s, r2, q);
        law_alloc(&t, &k, &s, q);
        law_states(&t, &k, &s, q);
        law_rcmods(&t, &k, &s, q);
        law_fp8params(&t, &k, &s, q);
        law_deps(&t, &k, &s);
    }
    cr_log_info("%ld valid strategies of %ld generated; checks:", t.cases, t.tries);
    for (int i = 0; i < L_COUNT; i++) cr_log_info("  %-36s %ld", law_names[i], t.checks[i]);
    for (int i = 0; i < L_COUNT; i++)
        if (i != L_RING) cr_expect(t.checks[i] > want / 100, "law \"%s\" checked only %ld times", law_names[i], t.checks[i]);
    cr_expect_eq(t.failures, 0, "%d law violations (the first %d printed above)", t.failures, MAX_REPORTS);
    free(p);
    free(q);
    free(r2);
    free(W);
}

Test(laws, ring_latency_grows_with_ranks)
{
    load_world();
    rng_state = 7;
    tally t = {0};
    long want = n_cases();
    for (long i = 0; i < want; i++) {
        kase k;
        gen_cluster(&k);
        /* groups as a job lays them out: blocks of size x stride ranks tile
         * the cluster (topologies.h), so both divide the GPU count */
        int gpus = pp_cluster_gpus(&k.c), div[64], nd = 0;
        for (int d = 1; d <= gpus && nd < 64; d++)
            if (gpus % d == 0) div[nd++] = d;
        int stride = div[pick(nd)], most = gpus / stride, n[2];
        for (int j = 0; j < 2; j++) {
            do n[j] = div[pick(nd)];
            while (most % n[j]);
        }
        if (n[0] == n[1]) continue;
        law_ring(&t, &k.c, n[0] < n[1] ? n[0] : n[1], n[0] < n[1] ? n[1] : n[0], stride);
    }
    cr_log_info("%ld ring comparisons", t.checks[L_RING]);
    cr_expect(t.checks[L_RING] > want, "checked only %ld", t.checks[L_RING]);
    cr_expect_eq(t.failures, 0, "%d law violations (the first %d printed above)", t.failures, MAX_REPORTS);
    free(W);
}

/* The printed command is the strategy: the CLI run with it (`parplan
 * estimate ... --format json`) gives the same step and peak memory as the
 * library, for random valid cases of every framework. */
static char *run_cli(const char *cmd)
{
    char line[4096];
    snprintf(line, sizeof line, "%s%s --format json 2>/dev/null", PARPLAN_CLI, cmd + strlen("parplan"));
    FILE *f = popen(line, "r");
    cr_assert(f, "cannot run %s", line);
    size_t cap = 1 << 16, n = 0, r;
    char *buf = malloc(cap);
    cr_assert(buf);
    while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap) {
            buf = realloc(buf, cap *= 2);
            cr_assert(buf);
        }
    }
    buf[n] = '\0';
    int rc = pclose(f);
    cr_expect_eq(rc, 0, "%s: status %d after %zu bytes", line, rc, n);
    return buf;
}

Test(laws, command_reproduces_the_strategy)
{
    load_world();
    rng_state = 42;
    long tries = 0;
    int seen[PP_FW_COUNT] = {0};
    int runs = getenv("PARPLAN_LAWS_CLI_RUNS") ? atoi(getenv("PARPLAN_LAWS_CLI_RUNS")) : 40;
    for (int i = 0; i < runs; i++) {
        kase k;
        pp_strategy s;
        gen_valid(&k, &s, &tries);
        static pp_plan plan;
        pp_plan *p = &plan;
        pp_strategy r = s;
        cr_assert(estimate(&k, &r, p));
        char cmd[2048];
        command(&k, &s, cmd, sizeof cmd);
        char *out = run_cli(cmd);
        cJSON *j = cJSON_Parse(out);
        cr_assert(j, "no JSON from: %s\n[%.200s]", cmd, out);
        double step = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "time"), "step_s")->valuedouble;
        double peak = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "memory"), "peak_bytes")->valuedouble;
        cr_expect(close_to(step, p->time.step_s) && close_to(peak, p->memory.peak_bytes),
                  "%s\n  CLI step %.12g s, peak %.12g B; library %.12g s, %.12g B", cmd, step, peak, p->time.step_s,
                  p->memory.peak_bytes);
        seen[s.framework]++;
        cJSON_Delete(j);
        free(out);
    }
    for (int f = 0; f < PP_FW_COUNT; f++) cr_expect(seen[f] > 0, "no case of %s", pp_framework_name((pp_framework)f));
    free(W);
}
