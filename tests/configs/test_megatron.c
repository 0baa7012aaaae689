/*
 * test_megatron.c — Megatron-LM and Megatron-DeepSpeed arguments
 * (configs/megatron.c):
 *   (a) the flags of a few plans, read back through bash itself;
 *   (b) uneven stage splits in the form Megatron-LM accepts, or a refusal;
 *   (c) recompute, precision, ZeRO-1, MoE and MLA flags;
 *   (d) what each flavor refuses, with the reason;
 *   (e) a property sweep: every strategy is refused with a known reason or
 *       gives arguments from which Megatron's own rules rebuild the plan
 *       (degrees, batch, stage split, recomputed blocks).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parplan.h"
#include "tests/fixtures.h"

static pp_strategy base(const pp_model *m, const pp_cluster *c, int tp, int pp, int cp)
{
    pp_strategy s;
    pp_strategy_default(&s);
    s.tp = tp;
    s.pp = pp;
    s.cp = cp;
    s.dp = pp_cluster_gpus(c) / (tp * pp * cp);
    s.seq = m->seq > 4096 ? 4096 : m->seq;
    s.global_batch = s.dp * 8;
    return s;
}

/* Adapts, estimates and returns the arguments file (NULL + err on refusal). */
static char *args_for(const pp_model *m, const pp_cluster *c, pp_strategy *s, pp_megatron_flavor f, pp_notes *n,
                      pp_error *err)
{
    pp_megatron_opts o;
    pp_megatron_opts_default(&o);
    o.flavor = f;
    if (pp_megatron_adapt(m, c, s, f, n, err) != PP_OK) return NULL;
    pp_plan *p = malloc(sizeof *p);
    cr_assert(p);
    char *text = NULL;
    if (pp_estimate(m, c, s, p, err) == PP_OK) {
        *s = p->strategy;
        if (pp_megatron_args(m, c, p, &o, &text, n, err) != PP_OK) text = NULL;
    }
    free(p);
    return text;
}

static char *must_args(const pp_model *m, const pp_cluster *c, pp_strategy *s, pp_megatron_flavor f)
{
    pp_notes n = {0};
    pp_error err = {""};
    char *t = args_for(m, c, s, f, &n, &err);
    cr_assert(t, "refused: %s", err.msg);
    return t;
}

/* The argument vector as bash builds it from the file. */
typedef struct argv_t {
    int n;
    char *v[512];
    char *buf;
} argv_t;

static argv_t bash_args(const char *text)
{
    char path[] = "/tmp/parplan-mg-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "bash -c 'set -e; source %s; printf \"%%s\\n\" \"${MEGATRON_ARGS[@]}\"'", path);
    FILE *f = popen(cmd, "r");
    cr_assert(f);
    argv_t a = {0};
    size_t cap = 1 << 16, len = 0;
    a.buf = malloc(cap);
    size_t got;
    while ((got = fread(a.buf + len, 1, cap - len - 1, f)) > 0) len += got;
    a.buf[len] = '\0';
    cr_assert_eq(pclose(f), 0, "bash could not source the file:\n%s", text);
    unlink(path);
    for (char *p = strtok(a.buf, "\n"); p && a.n < 512; p = strtok(NULL, "\n")) a.v[a.n++] = p;
    return a;
}

/* The value after flag, or NULL; "" for a bare flag. */
static const char *val(const argv_t *a, const char *flag)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->v[i], flag)) return i + 1 < a->n && strncmp(a->v[i + 1], "--", 2) ? a->v[i + 1] : "";
    return NULL;
}

static void expect(const argv_t *a, const char *flag, const char *want)
{
    const char *v = val(a, flag);
    cr_assert(v, "missing %s", flag);
    cr_assert_str_eq(v, want, "%s: got '%s', want '%s'", flag, v, want);
}

/* ------------------------------------------------------------- (a) plans */

TestSuite(megatron_args);

Test(megatron_args, llama3_70b_megatron_lm)
{
    pp_model m = fx_model("llama3-70b");
    pp_cluster c = fx_cluster("dgx-h100", 8, 0);
    pp_strategy s = base(&m, &c, 8, 4, 1);
    s.sp = 1;
    s.zero = 1;
    s.recompute = PP_RECOMPUTE_SELECTIVE;
    s.micro_batch = 1;
    s.global_batch = 256;
    char *t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    argv_t a = bash_args(t);
    expect(&a, "--tensor-model-parallel-size", "8");
    expect(&a, "--pipeline-model-parallel-size", "4");
    expect(&a, "--sequence-parallel", "");
    expect(&a, "--micro-batch-size", "1");
    expect(&a, "--global-batch-size", "256");
    expect(&a, "--use-distributed-optimizer", "");
    expect(&a, "--overlap-grad-reduce", "");
    expect(&a, "--recompute-granularity", "selective");
    cr_expect(!val(&a, "--recompute-modules"), "core_attn is Megatron's default: no --recompute-modules");
    expect(&a, "--bf16", "");
    expect(&a, "--num-layers", "80");
    expect(&a, "--hidden-size", "8192");
    expect(&a, "--ffn-hidden-size", "28672");
    expect(&a, "--num-attention-heads", "64");
    expect(&a, "--group-query-attention", "");
    expect(&a, "--num-query-groups", "8");
    expect(&a, "--seq-length", "4096");
    expect(&a, "--position-embedding-type", "rope");
    expect(&a, "--normalization", "RMSNorm");
    expect(&a, "--swiglu", "");
    expect(&a, "--untie-embeddings-and-output-weights", "");
    expect(&a, "--disable-bias-linear", "");
    expect(&a, "--lr", "0.0003");
    expect(&a, "--train-iters", "100000");
    cr_assert(!val(&a, "--decoder-first-pipeline-num-layers"), "an even split needs no first/last flags");
    cr_assert(!val(&a, "--deepspeed"));
    cr_assert_eq(s.grad_accum_dtype, PP_GRAD_FP32, "Megatron-LM's bf16 gradients are fp32 main_grad");
    free(a.buf);
    pp_free(t);
}

Test(megatron_args, megatron_deepspeed_flavor)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 2, 0);
    pp_strategy s = base(&m, &c, 1, 1, 2); /* bf16, ZeRO-0 -> DeepSpeed BF16_Optimizer; Ulysses needs tp 1 */
    char *t = must_args(&m, &c, &s, PP_MEGATRON_DEEPSPEED);
    argv_t a = bash_args(t);
    expect(&a, "--deepspeed", "");
    expect(&a, "--deepspeed_config", "ds_config.json");
    expect(&a, "--zero-stage", "0");
    expect(&a, "--no-pipeline-parallel", "");
    expect(&a, "--ds-sequence-parallel-size", "2");
    expect(&a, "--num-key-value-heads", "8");
    expect(&a, "--use-rotary-position-embeddings", "");
    expect(&a, "--normalization", "rmsnorm");
    expect(&a, "--use-flash-attn-v2", "");
    cr_assert(!val(&a, "--context-parallel-size") && !val(&a, "--use-distributed-optimizer"));
    free(a.buf);
    pp_free(t);
    /* ZeRO-3 with offload: the JSON decides, the flag agrees; CPU Adam */
    s = base(&m, &c, 1, 1, 1);
    s.zero = 3;
    s.offload = PP_OFFLOAD_OPTIMIZER;
    t = must_args(&m, &c, &s, PP_MEGATRON_DEEPSPEED);
    a = bash_args(t);
    expect(&a, "--zero-stage", "3");
    expect(&a, "--cpu-optimizer", "");
    cr_expect(!strstr(t, "CUDA_DEVICE_MAX_CONNECTIONS"), "no SP, no export");
    free(a.buf);
    pp_free(t);
    /* --sequence-parallel: Megatron-DeepSpeed's validate_args raises unless
     * CUDA_DEVICE_MAX_CONNECTIONS is 1 (arguments.py f4157bea l.402-407) */
    s = base(&m, &c, 2, 1, 1);
    s.sp = 1;
    t = must_args(&m, &c, &s, PP_MEGATRON_DEEPSPEED);
    cr_expect(strstr(t, "\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\n") && strstr(t, "--sequence-parallel"), "%s", t);
    pp_free(t);
}

/* --------------------------------------------------------- (b) splits */

TestSuite(megatron_split);

static char *split_args(const char *layers, pp_notes *n, pp_error *err)
{
    pp_model m = fx_model("llama3-8b"); /* 32 blocks */
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = base(&m, &c, 2, 4, 1);
    int k = 0;
    for (const char *p = layers; *p;) {
        s.stage_layers[k++] = (int)strtol(p, (char **)&p, 10);
        if (*p == ',') p++;
    }
    return args_for(&m, &c, &s, PP_MEGATRON_LM, n, err);
}

Test(megatron_split, first_and_last_only)
{
    struct { const char *split, *first, *last; } ok[] = {
        {"8,8,8,8", NULL, NULL}, {"6,9,9,8", "6", "8"}, {"7,9,9,7", "7", "7"}, {"8,8,8,8", NULL, NULL},
        {"10,8,8,6", "10", "6"}, {"8,9,9,6", "8", "6"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        pp_notes n = {0};
        pp_error err = {""};
        char *t = split_args(ok[i].split, &n, &err);
        cr_assert(t, "%s: %s", ok[i].split, err.msg);
        argv_t a = bash_args(t);
        const char *f = val(&a, "--decoder-first-pipeline-num-layers"), *l = val(&a, "--decoder-last-pipeline-num-layers");
        cr_assert((!f && !ok[i].first) || (f && ok[i].first && !strcmp(f, ok[i].first)), "%s: first %s", ok[i].split, f);
        cr_assert((!l && !ok[i].last) || (l && ok[i].last && !strcmp(l, ok[i].last)), "%s: last %s", ok[i].split, l);
        free(a.buf);
        pp_free(t);
    }
    pp_notes n = {0};
    pp_error err = {""};
    /* any other split is written as --pipeline-model-parallel-layout (Megatron-LM's
     * layout string, checked by its own parser: tools README) */
    char *t = split_args("9,7,8,8", &n, &err);
    cr_assert(t, "%s", err.msg);
    argv_t a = bash_args(t);
    expect(&a, "--pipeline-model-parallel-layout", "Et*9|t*7|t*8|t*8L");
    cr_assert(!val(&a, "--decoder-first-pipeline-num-layers"));
    free(a.buf);
    pp_free(t);
}

/* Interleaved uneven splits: first/last flags with the virtual-stage count
 * when the middle is even and every count divides by v; else the layout,
 * virtual-stage major, with the one short chunk beside E or L. */
/* An interleaved split (tp x pp over the cluster, v chunks a stage) and the
 * layout string it must be written as. */
static void expect_layout(const pp_model *m, const pp_cluster *c, int tp, int pp, int v, const int *split, int gb,
                          const char *want)
{
    pp_strategy s = base(m, c, tp, pp, 1);
    s.schedule = PP_SCHED_INTERLEAVED, s.virtual_stages = v, s.global_batch = gb;
    memcpy(s.stage_layers, split, (size_t)pp * sizeof *split);
    char *t = must_args(m, c, &s, PP_MEGATRON_LM);
    argv_t a = bash_args(t);
    expect(&a, "--pipeline-model-parallel-layout", want);
    free(a.buf);
    pp_free(t);
}

Test(megatron_split, interleaved_layouts)
{
    pp_model m = fx_model("llama3-8b"); /* 32 blocks */
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = base(&m, &c, 2, 4, 1);
    s.schedule = PP_SCHED_INTERLEAVED, s.virtual_stages = 2;
    int split[4] = {6, 10, 10, 6};
    memcpy(s.stage_layers, split, sizeof split);
    char *t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    argv_t a = bash_args(t);
    expect(&a, "--decoder-first-pipeline-num-layers", "6");
    expect(&a, "--decoder-last-pipeline-num-layers", "6");
    expect(&a, "--num-virtual-stages-per-pipeline-rank", "2");
    free(a.buf);
    pp_free(t);
    int odd[4] = {7, 9, 9, 7}; /* one fewer than a multiple of 2 on each */
    /* chunk 0 of ranks 0..3, then chunk 1: rank 0's short chunk is its first, the others' their last */
    expect_layout(&m, &c, 2, 4, 2, odd, 8, "Et*3|t*5|t*5|t*4|t*4|t*4|t*4|t*3L");
    /* any count per stage (DeepSeek-V3's 61 blocks need it): 11, 11, 10 over 4
     * chunks each, written chunk by chunk. 11 is one short of 12: stage 0's
     * short chunk is its first (2,3,3,3), stage 1's its last (3,3,3,2); stage
     * 2's 10 gives its first two chunks the extra blocks (3,3,2,2) */
    pp_cluster c3 = fx_cluster("dgx-h100", 3, 0);
    int any[3] = {11, 11, 10};
    expect_layout(&m, &c3, 8, 3, 4, any, 6, "Et*2|t*3|t*3|t*3|t*3|t*3|t*3|t*3|t*2|t*3|t*2|t*2L");
}

/* An explicit uneven layout (red team rt10: 18 + 2 on rank 0 was priced as
 * 10 + 10) is written as given, and its file reads back to the same chunks
 * and the same memory. Stage 0 holds chunks of 12 and 4 blocks: with pp 2,
 * v 2, Megatron's order keeps at most 4 x 12 + 4 = 52 block-passes (warm-up
 * 2 x 12 + 2 x 4, then forward chunk 0, backward chunk 1, forward chunk 0:
 * test_memory.c traces the same order), the even 8 + 8 split 5 x 8 = 40. */
Test(megatron_split, explicit_layout_round_trip)
{
    pp_model m = fx_model("llama3-8b"); /* 32 blocks */
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = base(&m, &c, 2, 2, 1);
    s.schedule = PP_SCHED_INTERLEAVED, s.virtual_stages = 2, s.global_batch = 64;
    s.stage_layers[0] = s.stage_layers[1] = 16;
    static pp_plan even, lay, back;
    pp_error err = {""};
    cr_assert_eq(pp_estimate(&m, &c, &s, &even, &err), PP_OK, "%s", err.msg);
    unsigned short chunks[4] = {12, 4, 4, 12};
    memcpy(s.chunk_layers, chunks, sizeof chunks);
    cr_assert_eq(pp_estimate(&m, &c, &s, &lay, &err), PP_OK, "%s", err.msg);
    double ratio = lay.memory.stages[0].activations_bytes / even.memory.stages[0].activations_bytes;
    cr_expect(fabs(ratio - 52.0 / 40) < 1e-9, "stage 0 activations x%g, want 52/40", ratio);
    char *t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    argv_t a = bash_args(t);
    expect(&a, "--pipeline-model-parallel-layout", "Et*12|t*4|t*4|t*12L");
    cr_expect(!val(&a, "--num-layers-per-virtual-pipeline-stage"));
    free(a.buf);
    pp_strategy r;
    pp_strategy_default(&r);
    pp_notes w = {0};
    cr_assert_eq(pp_megatron_parse(t, strlen(t), "a.sh", &m, &c, &r, &w, &err), PP_OK, "%s", err.msg);
    cr_expect(!memcmp(r.chunk_layers, chunks, sizeof chunks) && !r.chunk_layers[4], "chunks read back");
    cr_assert_eq(pp_estimate(&m, &c, &r, &back, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(back.memory.peak_bytes, lay.memory.peak_bytes);
    cr_expect_eq(back.time.step_s, lay.time.step_s);
    pp_free(t);
    /* the micro-batch group per chunk (rt14) is written and read back: 4 of 32 */
    s.vp_group = 4;
    cr_assert_eq(pp_estimate(&m, &c, &s, &lay, &err), PP_OK, "%s", err.msg);
    t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    a = bash_args(t);
    expect(&a, "--microbatch-group-size-per-virtual-pipeline-stage", "4");
    free(a.buf);
    pp_strategy_default(&r);
    cr_assert_eq(pp_megatron_parse(t, strlen(t), "a.sh", &m, &c, &r, &w, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(r.vp_group, 4);
    cr_assert_eq(pp_estimate(&m, &c, &r, &back, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(back.memory.peak_bytes, lay.memory.peak_bytes);
    pp_free(t);
}

Test(megatron_split, default_uneven_split)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 3, 0); /* 24 GPUs */
    pp_strategy s = base(&m, &c, 8, 3, 1);
    char *t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    argv_t a = bash_args(t);
    /* parplan's default gives the remainder to the middle: 10,12,10 */
    expect(&a, "--decoder-first-pipeline-num-layers", "10");
    expect(&a, "--decoder-last-pipeline-num-layers", "10");
    free(a.buf);
    pp_free(t);
}

/* ---------------------------------------------------- (c) memory flags */

TestSuite(megatron_flags);

Test(megatron_flags, recompute_methods)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = base(&m, &c, 2, 4, 1);
    s.recompute = PP_RECOMPUTE_FULL;
    char *t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    argv_t a = bash_args(t);
    expect(&a, "--recompute-granularity", "full");
    expect(&a, "--recompute-method", "uniform");
    expect(&a, "--recompute-num-layers", "1");
    free(a.buf);
    pp_free(t);
    s = base(&m, &c, 2, 4, 1);
    s.recompute = PP_RECOMPUTE_FULL;
    s.recompute_layers = 3;
    t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    a = bash_args(t);
    expect(&a, "--recompute-method", "block");
    expect(&a, "--recompute-num-layers", "3");
    free(a.buf);
    pp_free(t);
    /* interleaved: Megatron counts per model chunk */
    s = base(&m, &c, 2, 4, 1);
    s.schedule = PP_SCHED_INTERLEAVED;
    s.virtual_stages = 2;
    s.recompute = PP_RECOMPUTE_FULL;
    s.recompute_layers = 4;
    t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    a = bash_args(t);
    expect(&a, "--num-layers-per-virtual-pipeline-stage", "4");
    expect(&a, "--recompute-num-layers", "2");
    free(a.buf);
    pp_free(t);
    s.recompute_layers = 3;
    pp_notes n = {0};
    pp_error err = {""};
    cr_assert_null(args_for(&m, &c, &s, PP_MEGATRON_LM, &n, &err));
    cr_assert(strstr(err.msg, "per model chunk"), "%s", err.msg);
    s = base(&m, &c, 2, 4, 1);
    s.recompute = PP_RECOMPUTE_FULL;
    s.per_stage_recompute = 1;
    s.stage_recompute[0] = 4;
    s.stage_recompute[1] = 2;
    s.stage_recompute[2] = 2;
    s.stage_recompute[3] = 0;
    cr_assert_null(args_for(&m, &c, &s, PP_MEGATRON_LM, &n, &err));
    cr_assert(strstr(err.msg, "differs between stages"), "%s", err.msg);
}

Test(megatron_flags, precision)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = base(&m, &c, 1, 1, 1);
    s.precision = PP_PREC_FP8;
    char *t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    argv_t a = bash_args(t);
    expect(&a, "--bf16", "");
    expect(&a, "--fp8-format", "hybrid");
    expect(&a, "--fp8-recipe", "tensorwise"); /* current scaling, as priced; Megatron's default is delayed */
    cr_assert(!val(&a, "--grad-reduce-in-bf16"), "fp32 main_grad is Megatron's default");
    free(a.buf);
    pp_free(t);
    s = base(&m, &c, 1, 1, 1);
    s.precision = PP_PREC_FP16;
    s.grad_accum_dtype = PP_GRAD_FP32;
    t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    a = bash_args(t);
    expect(&a, "--fp16", "");
    expect(&a, "--initial-loss-scale", "65536");
    expect(&a, "--accumulate-allreduce-grads-in-fp32", "");
    free(a.buf);
    pp_free(t);
    /* bf16 with 16-bit accumulation: --grad-reduce-in-bf16 (arguments.py:
     * main_grad takes the bf16 dtype; NeMo's performance recipes set it) */
    s = base(&m, &c, 1, 1, 1);
    s.framework = PP_FW_MEGATRON;
    s.grad_accum_dtype = PP_GRAD_16;
    t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    a = bash_args(t);
    expect(&a, "--bf16", "");
    expect(&a, "--grad-reduce-in-bf16", "");
    free(a.buf);
    pp_free(t);
    /* check refuses what Megatron does not do (DeepSpeed's 16bit+fp32 pair);
     * adapt hands the choice back to Megatron and says what changed */
    s = base(&m, &c, 1, 1, 1);
    s.framework = PP_FW_MEGATRON;
    s.grad_accum_dtype = PP_GRAD_16_FP32;
    pp_error err = {""};
    cr_assert_eq(pp_megatron_check(&m, &c, &s, NULL, &err), PP_ERR_INPUT);
    cr_assert(strstr(err.msg, "main_grad") && err.rule == PP_RULE_FW_GRAD_ACCUM, "%s", err.msg);
    pp_notes n = {0};
    cr_assert_eq(pp_megatron_adapt(&m, &c, &s, PP_MEGATRON_LM, &n, &err), PP_OK);
    cr_assert(n.n == 1 && strstr(n.line[0], "16bit+fp32 -> fp32"), "%s", n.n ? n.line[0] : "no note");
    cr_assert_eq(pp_megatron_check(&m, &c, &s, NULL, &err), PP_OK, "%s", err.msg);
}

Test(megatron_flags, moe_and_mla)
{
    pp_model m = fx_model("mixtral-8x7b");
    pp_cluster c = fx_cluster("dgx-h100", 2, 0);
    pp_strategy s = base(&m, &c, 2, 1, 1);
    s.ep = 8;
    s.sp = 1; /* EP with TP: Megatron-Core wants sequence parallelism */
    char *t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    argv_t a = bash_args(t);
    expect(&a, "--num-experts", "8");
    expect(&a, "--moe-router-topk", "2");
    expect(&a, "--moe-ffn-hidden-size", "14336");
    expect(&a, "--expert-model-parallel-size", "8");
    expect(&a, "--moe-token-dispatcher-type", "alltoall");
    cr_assert(!val(&a, "--moe-layer-freq"), "every block is MoE: the default");
    cr_assert(!val(&a, "--moe-router-num-groups"), "Mixtral routes freely");
    /* TP before Blackwell: validate_args asserts CUDA_DEVICE_MAX_CONNECTIONS=1 */
    cr_expect(strstr(t, "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"), "%s", t);
    {
        pp_cluster b = fx_cluster("dgx-b200", 2, 0);
        char *tb = must_args(&m, &b, &s, PP_MEGATRON_LM);
        cr_expect(!strstr(tb, "CUDA_DEVICE_MAX_CONNECTIONS"), "sm100 has no such requirement:\n%s", tb);
        pp_free(tb);
    }
    free(a.buf);
    pp_free(t);
    m = fx_model("deepseek-v3");
    c = fx_cluster("dgx-h100", 64, 0);
    s = base(&m, &c, 8, 1, 1);
    s.ep = 64;
    s.sp = 1;
    s.zero = 1;
    s.seq = 4096;
    s.global_batch = s.dp * 2;
    t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    a = bash_args(t);
    expect(&a, "--multi-latent-attention", "");
    expect(&a, "--q-lora-rank", "1536");
    expect(&a, "--kv-lora-rank", "512");
    expect(&a, "--qk-head-dim", "128");
    expect(&a, "--qk-pos-emb-head-dim", "64");
    expect(&a, "--v-head-dim", "128");
    expect(&a, "--moe-layer-freq", "([0]*3+[1]*58)");
    expect(&a, "--moe-shared-expert-intermediate-size", "2048");
    expect(&a, "--num-experts", "256");
    expect(&a, "--moe-router-topk", "8");
    /* node-limited routing (config.json n_group 8, topk_group 4), which the
     * hierarchical dispatch's price assumes; Megatron's default is none */
    expect(&a, "--moe-router-num-groups", "8");
    expect(&a, "--moe-router-group-topk", "4");
    {
        /* read back: the file prices as emitted; without the groups it
         * builds another router, and says which flag to add */
        pp_strategy back;
        pp_strategy_default(&back);
        pp_notes w = {0};
        pp_error re = {""};
        cr_expect_eq(pp_megatron_parse(t, strlen(t), "a.sh", &m, &c, &back, &w, &re), PP_OK, "%s", re.msg);
        char *cut = strstr(t, "  --moe-router-num-groups 8\n");
        cr_assert(cut);
        memmove(cut, cut + strlen("  --moe-router-num-groups 8\n"), strlen(cut + strlen("  --moe-router-num-groups 8\n")) + 1);
        cr_expect_neq(pp_megatron_parse(t, strlen(t), "a.sh", &m, &c, &back, &w, &re), PP_OK);
        cr_expect(strstr(re.msg, "--moe-router-num-groups is absent") && strstr(re.msg, "add --moe-router-num-groups 8"),
                  "%s", re.msg);
    }
    /* config.json: rope_theta 10000, rope_scaling yarn factor 40 from 4096 */
    expect(&a, "--position-embedding-type", "yarn");
    expect(&a, "--rotary-base", "10000");
    expect(&a, "--rotary-scaling-factor", "40");
    expect(&a, "--yarn-original-max-position-embeddings", "4096");
    expect(&a, "--norm-epsilon", "1e-06");
    free(a.buf);
    pp_free(t);
    pp_notes n = {0};
    pp_error err = {""};
    s = base(&m, &c, 8, 1, 1);
    cr_assert_null(args_for(&m, &c, &s, PP_MEGATRON_DEEPSPEED, &n, &err));
    cr_assert(strstr(err.msg, "multi-head latent attention"), "%s", err.msg);
}

/* What changes training, not just its cost: the model's config.json values
 * (Llama 3: rope_theta 500000, rms_norm_eps 1e-5; Llama 3.1: rope_scaling
 * llama3 factor 8; Qwen2.5: 1e6, 1e-6), and the padded vocabulary: 128256 =
 * 2^8 x 501 so with tp 8 the divisor 32 keeps it exact (32 x 8 = 256);
 * Qwen2.5-7B's 152064 = 2^9 x 297, tp 4: Megatron's 128 x 4 = 512 divides it. */
/* The allocator parplan priced is in the file: expandable segments on an
 * NVIDIA GPU by default (exported), the caching allocator when asked for
 * and on AMD (PyTorch enabled them on ROCm only in 2.11), and Megatron-
 * DeepSpeed's files never export it (the deepspeed launcher does not
 * forward it to other nodes). */
Test(megatron_flags, allocator_export)
{
    static const struct {
        const char *cluster;
        pp_megatron_flavor f;
        int given, want;
    } cases[] = {{"dgx-h100", PP_MEGATRON_LM, -1, 1}, {"dgx-h100", PP_MEGATRON_LM, 0, 0},
                 {"mi300x-8x", PP_MEGATRON_LM, -1, 0}, {"dgx-h100", PP_MEGATRON_DEEPSPEED, -1, 0}};
    pp_model m = fx_model("llama3-8b");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_cluster c = fx_cluster(cases[i].cluster, 1, 0);
        pp_strategy s = base(&m, &c, 2, 1, 1);
        s.buf.expandable_segments = cases[i].given;
        char *t = must_args(&m, &c, &s, cases[i].f);
        int has = strstr(t, "\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n") != NULL;
        cr_expect_eq(s.buf.expandable_segments, cases[i].want, "case %zu: priced %d", i, s.buf.expandable_segments);
        cr_expect_eq(has, cases[i].want, "case %zu: the file %s the export:\n%s", i, has ? "has" : "lacks", t);
        free(t);
    }
}

Test(megatron_flags, launch_essentials)
{
    static const struct {
        const char *model;
        int tp;
        pp_megatron_flavor f;
        const char *flag, *want;
    } cases[] = {
        {"llama3-8b", 8, PP_MEGATRON_LM, "--rotary-base", "500000"},
        {"llama3-8b", 8, PP_MEGATRON_LM, "--norm-epsilon", "1e-05"},
        {"llama3-8b", 8, PP_MEGATRON_LM, "--make-vocab-size-divisible-by", "32"},
        {"llama3-8b", 8, PP_MEGATRON_LM, "--untie-embeddings-and-output-weights", ""},
        {"llama3.1-8b", 8, PP_MEGATRON_LM, "--use-rope-scaling", ""},
        {"llama3.1-8b", 8, PP_MEGATRON_LM, "--rope-scaling-factor", "8"},
        {"qwen2.5-7b", 4, PP_MEGATRON_LM, "--rotary-base", "1000000"},
        {"qwen2.5-7b", 4, PP_MEGATRON_LM, "--norm-epsilon", "1e-06"},
        {"qwen2.5-7b", 4, PP_MEGATRON_LM, "--make-vocab-size-divisible-by", "128"},
        {"llama3-8b", 8, PP_MEGATRON_DEEPSPEED, "--rotary-position-embeddings-theta", "500000"},
        {"llama3-8b", 8, PP_MEGATRON_DEEPSPEED, "--layernorm-epsilon", "1e-05"},
    };
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_model m = fx_model(cases[i].model);
        pp_strategy s = base(&m, &c, cases[i].tp, 1, 1);
        char *t = must_args(&m, &c, &s, cases[i].f);
        argv_t a = bash_args(t);
        expect(&a, cases[i].flag, cases[i].want);
        cr_expect_null(val(&a, "--tokenizer-model"), "no tokenizer guess");
        free(a.buf);
        pp_free(t);
    }
    /* Megatron-DeepSpeed has no rotary scaling: Llama 3.1 is refused, by rule */
    pp_model m = fx_model("llama3.1-8b");
    pp_strategy s = base(&m, &c, 8, 1, 1);
    pp_notes n = {0};
    pp_error err = {""};
    cr_assert_null(args_for(&m, &c, &s, PP_MEGATRON_DEEPSPEED, &n, &err));
    cr_expect_eq(err.rule, PP_RULE_FW_ARCH, "%s", err.msg);
    cr_expect(strstr(err.msg, "llama3"), "%s", err.msg);
    /* dynamic NTK scaling has no Megatron argument; Llama 3 factors other
     * than Megatron's fixed 1/4/8192 are refused rather than silently changed */
    m.rope_scaling = PP_ROPE_DYNAMIC;
    s = base(&m, &c, 8, 1, 1);
    cr_assert_null(args_for(&m, &c, &s, PP_MEGATRON_LM, &n, &err));
    cr_expect(strstr(err.msg, "dynamic"), "%s", err.msg);
    m = fx_model("llama3.1-8b");
    m.rope_high_freq = 2;
    s = base(&m, &c, 8, 1, 1);
    cr_assert_null(args_for(&m, &c, &s, PP_MEGATRON_LM, &n, &err));
    cr_expect(strstr(err.msg, "1/4 and 8192"), "%s", err.msg);
}

/* ----------------------------------------------------------- (d) refusals */

TestSuite(megatron_refuse);

static void lm_refuses(const char *model_name, pp_strategy *s, const pp_model *m, const pp_cluster *c,
                       pp_megatron_flavor f, const char *needle)
{
    pp_notes n = {0};
    pp_error err = {""};
    char *t = args_for(m, c, s, f, &n, &err);
    cr_assert_null(t, "%s: expected a refusal with '%s'", model_name, needle);
    cr_assert(strstr(err.msg, needle), "%s: '%s' lacks '%s'", model_name, err.msg, needle);
}

Test(megatron_refuse, what_megatron_cannot_express)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = base(&m, &c, 1, 2, 1);
    s.zero = 3; /* Megatron-FSDP is priced without pipeline stages */
    lm_refuses("zero3 pp2", &s, &m, &c, PP_MEGATRON_LM, "[rule fw-zero");
    s = base(&m, &c, 1, 1, 1);
    s.zero = 1;
    s.offload = PP_OFFLOAD_OPTIMIZER;
    lm_refuses("offload", &s, &m, &c, PP_MEGATRON_LM, "offload");
    s = base(&m, &c, 1, 1, 1);
    s.optimizer = PP_OPT_ADAM8BIT;
    lm_refuses("adam8bit", &s, &m, &c, PP_MEGATRON_LM, "[rule fw-optimizer]");
    s = base(&m, &c, 1, 2, 1);
    s.schedule = PP_SCHED_GPIPE;
    lm_refuses("gpipe", &s, &m, &c, PP_MEGATRON_LM, "gpipe");
    s = base(&m, &c, 1, 1, 1);
    s.ft.mode = PP_MODE_LORA;
    s.ft.lora_rank = 16;
    s.ft.lora_targets = PP_LORA_Q | PP_LORA_V;
    lm_refuses("lora", &s, &m, &c, PP_MEGATRON_LM, "mode lora");
    s = base(&m, &c, 1, 2, 1);
    s.zero = 2;
    lm_refuses("ds pipeline", &s, &m, &c, PP_MEGATRON_DEEPSPEED, "incompatible with pipeline parallelism");
    pp_model bloom = fx_model("bloom-176b");
    pp_cluster big = fx_cluster("dgx-a100-80g", 48, 0);
    s = base(&bloom, &big, 4, 12, 1);
    lm_refuses("bloom", &s, &bloom, &big, PP_MEGATRON_LM, "ALiBi");
    pp_model falcon = fx_model("falcon-40b");
    s = base(&falcon, &c, 8, 1, 1);
    lm_refuses("falcon", &s, &falcon, &c, PP_MEGATRON_LM, "parallel attention");
}

/* ------------------------------------------------------- (e) properties */

/* Tokens of the MEGATRON_ARGS array without running bash (comments and
 * single quotes, as the writer produces them). */
static int tokens(char *text, char **v, int cap)
{
    char *p = strstr(text, "MEGATRON_ARGS=(");
    cr_assert(p);
    int n = 0;
    for (char *line = strchr(p, '\n') + 1; *line && *line != ')';) {
        char *eol = strchr(line, '\n');
        cr_assert(eol, "unterminated MEGATRON_ARGS");
        *eol = '\0';
        char *q = line;
        while (*q == ' ') q++;
        while (*q && *q != '#') {
            cr_assert(n < cap);
            if (*q == '\'') {
                v[n++] = ++q;
                q = strchr(q, '\'');
                cr_assert(q, "unbalanced quote");
                *q++ = '\0';
            } else {
                v[n++] = q;
                while (*q && *q != ' ') q++;
                if (*q) *q++ = '\0';
            }
            while (*q == ' ') q++;
        }
        line = eol + 1;
    }
    return n;
}

static long ival(char **v, int n, const char *flag, long def)
{
    for (int i = 0; i + 1 < n; i++)
        if (!strcmp(v[i], flag)) return strtol(v[i + 1], NULL, 10);
    return def;
}

static int has(char **v, int n, const char *flag)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i], flag)) return 1;
    return 0;
}

/* A refusal comes from the one rule table: it names its rule. */
static int known_refusal(const pp_error *err) { return err->rule > 0 && strstr(err->msg, "[rule "); }

/* Blocks per pipeline rank from --pipeline-model-parallel-layout: stages
 * separated by '|', read virtual-stage major (stage j on rank j % pp). */
static int layout_blocks(const char *lay, int pp, long *per_rank)
{
    int j = 0;
    for (int i = 0; i < pp; i++) per_rank[i] = 0;
    for (const char *q = lay; *q; q++) {
        if (*q == '|') j++;
        else if (*q == 't') per_rank[j % pp] += q[1] == '*' ? strtol(q + 2, NULL, 10) : 1;
    }
    return j + 1;
}

/* Megatron's own rules rebuild the plan from the arguments. */
static void rebuild(const pp_model *m, const pp_cluster *c, const pp_strategy *s, char *text, const char *ctx)
{
    char *v[512];
    int n = tokens(text, v, 512);
    long tp = ival(v, n, "--tensor-model-parallel-size", 0), pp = ival(v, n, "--pipeline-model-parallel-size", 0);
    long cp = ival(v, n, "--context-parallel-size", ival(v, n, "--ds-sequence-parallel-size", 1));
    long gpus = pp_cluster_gpus(c), dp = gpus / (tp * pp * cp);
    cr_assert_eq(tp, s->tp, "%s", ctx);
    cr_assert_eq(pp, s->pp, "%s", ctx);
    cr_assert_eq(cp, s->cp, "%s", ctx);
    cr_assert_eq(dp, s->dp, "%s", ctx);
    long mb = ival(v, n, "--micro-batch-size", 0), gb = ival(v, n, "--global-batch-size", 0);
    cr_assert(gb % (mb * dp) == 0 && gb / (mb * dp) == s->grad_accum, "%s: batch", ctx);
    cr_assert_eq(ival(v, n, "--num-layers", 0), m->layers, "%s", ctx);
    /* Megatron-LM's split: the layout string, or first/last given and the rest even */
    int lm = !has(v, n, "--deepspeed");
    const char *lay = NULL;
    for (int i = 0; i + 1 < n; i++)
        if (!strcmp(v[i], "--pipeline-model-parallel-layout")) lay = v[i + 1];
    if (lay) {
        long per[PP_MAX_STAGES];
        int stages = layout_blocks(lay, (int)pp, per);
        cr_assert_eq(stages % pp, 0, "%s: %d layout stages over pp %ld", ctx, stages, pp);
        for (int i = 0; i < pp; i++) cr_assert_eq(per[i], s->stage_layers[i], "%s: layout stage %d", ctx, i);
    } else if (lm && pp > 1) {
        long first = ival(v, n, "--decoder-first-pipeline-num-layers", -1);
        long last = ival(v, n, "--decoder-last-pipeline-num-layers", -1);
        long rest = m->layers - (first > 0 ? first : 0) - (last > 0 ? last : 0);
        long mids = pp - (first > 0) - (last > 0);
        cr_assert(mids == 0 ? rest == 0 : rest % mids == 0, "%s: Megatron cannot split the rest evenly", ctx);
        for (int i = 0; i < pp; i++) {
            long want = i == 0 && first > 0 ? first : i == pp - 1 && last > 0 ? last : rest / mids;
            cr_assert_eq(want, s->stage_layers[i], "%s: stage %d", ctx, i);
        }
    }
    if (s->recompute == PP_RECOMPUTE_FULL) {
        long k = ival(v, n, "--recompute-num-layers", 0);
        long v_stages = s->virtual_stages > 1 ? s->virtual_stages : 1;
        int uniform = 0;
        for (int i = 0; i < n; i++) uniform |= !strcmp(v[i], "uniform");
        for (int i = 0; i < s->pp; i++) {
            long nl = s->stage_layers[i];
            long want = s->per_stage_recompute ? s->stage_recompute[i] : s->recompute_layers;
            if (want < 0 || want > nl) want = nl;
            long got = uniform ? nl : (k * v_stages > nl ? nl : k * v_stages);
            cr_assert_eq(got, want, "%s: recomputed blocks on stage %d", ctx, i);
        }
    }
    cr_assert_eq(has(v, n, "--use-distributed-optimizer"), lm && s->zero >= 1, "%s", ctx);
    cr_assert_eq(has(v, n, "--use-megatron-fsdp"), lm && s->zero == 3, "%s: ZeRO-3 is Megatron-FSDP", ctx);
    cr_assert_eq(has(v, n, "--sequence-parallel"), s->sp, "%s", ctx);
}

TestSuite(megatron_property, .timeout = 600);

Test(megatron_property, every_plan_emits_or_refuses)
{
    static const char *const models[] = {"llama3-8b", "mixtral-8x7b", "gpt3-1.3b", NULL};
    static const char *const clusters[] = {"dgx-h100", "dgx-h100", "dgx-a100-80g"};
    int emitted[2] = {0, 0}, refused = 0, invalid = 0;
    unsigned seed = 777;
    for (int mi = 0; models[mi]; mi++) {
        pp_model m = fx_model(models[mi]);
        pp_cluster c = fx_cluster(clusters[mi], 2, 0);
        for (int f = 0; f < PP_MEGATRON_FLAVOR_COUNT; f++)
            for (int tp = 1; tp <= 8; tp *= 2)
                for (int pp = 1; pp <= 4; pp++)
                    for (int z = 0; z <= 3; z++)
                        for (int rec = 0; rec < 4; rec++)
                            for (int rep = 0; rep < 3; rep++) {
                                if (tp * pp > 16) continue;
                                seed = seed * 1103515245u + 12345u;
                                unsigned r = seed >> 8;
                                int cp = (r & 3) == 0 ? 2 : 1;
                                if (tp * pp * cp > 16) cp = 1;
                                pp_strategy s = base(&m, &c, tp, pp, cp);
                                s.zero = z;
                                s.recompute = rec == 3 ? PP_RECOMPUTE_FULL : rec;
                                if (rec == 3) s.recompute_layers = 1 + (r >> 2) % 3;
                                s.sp = tp > 1 && ((r >> 4) & 1);
                                s.precision = ((r >> 5) & 3) == 0 ? PP_PREC_FP16 : PP_PREC_BF16;
                                s.micro_batch = 1 + ((r >> 7) & 1);
                                s.global_batch = s.dp * s.micro_batch * 4;
                                if (m.experts) s.ep = 2;
                                if (pp > 1 && ((r >> 8) & 3) == 0) {
                                    s.schedule = PP_SCHED_INTERLEAVED;
                                    s.virtual_stages = 2;
                                }
                                if (((r >> 10) & 3) == 0) s.offload = PP_OFFLOAD_OPTIMIZER;
                                pp_plan *p = malloc(sizeof *p);
                                pp_error err = {""};
                                if (pp_estimate(&m, &c, &s, p, &err) != PP_OK) {
                                    invalid++;
                                    free(p);
                                    continue;
                                }
                                char ctx[200];
                                snprintf(ctx, sizeof ctx, "%s %s tp%d pp%d cp%d z%d rec %d/%d sch %d", models[mi],
                                         f ? "ds" : "lm", tp, pp, cp, z, rec, s.recompute_layers, s.schedule);
                                pp_notes n = {0};
                                char *t = args_for(&m, &c, &s, (pp_megatron_flavor)f, &n, &err);
                                if (!t) {
                                    cr_assert(known_refusal(&err), "%s: refusal outside the rule table '%s'", ctx,
                                              err.msg);
                                    refused++;
                                } else {
                                    rebuild(&m, &c, &s, t, ctx);
                                    emitted[f]++;
                                    pp_free(t);
                                }
                                free(p);
                            }
    }
    cr_log_info("megatron sweep: %d emitted (LM), %d emitted (DeepSpeed), %d refused, %d invalid", emitted[0],
                emitted[1], refused, invalid);
    cr_assert_gt(emitted[0], 200);
    cr_assert_gt(emitted[1], 100);
    cr_assert_gt(refused, 50);
}

/* Priced = launched: every plan a search for the Megatron frameworks
 * returns is emitted for its own framework, never refused, and Megatron's
 * own rules rebuild the plan from the arguments. */
Test(megatron_property, every_searched_plan_emits, .timeout = 1200)
{
    static const struct { const char *model, *cluster; int nodes, batch; } sc[] = {
        {"llama3-8b", "dgx-h100", 2, 256}, {"llama3-70b", "dgx-h100", 8, 512}, {"mixtral-8x7b", "dgx-h100", 4, 256}};
    int emitted[2] = {0, 0};
    for (size_t k = 0; k < sizeof sc / sizeof *sc; k++) {
        pp_model m = fx_model(sc[k].model);
        pp_cluster c = fx_cluster(sc[k].cluster, sc[k].nodes, 0);
        pp_search_opts so;
        pp_search_opts_default(&so);
        so.global_batch = sc[k].batch;
        so.seq = m.seq > 4096 ? 4096 : 0;
        so.top_k = 25;
        so.threads = 1;
        so.frameworks = 1u << PP_FW_MEGATRON | 1u << PP_FW_MEGATRON_DEEPSPEED;
        pp_plan_list list = {0};
        pp_error err = {""};
        pp_status st = pp_plan_search(&m, &c, &so, &list, &err);
        cr_assert(st == PP_OK, "%s", err.msg);
        for (int i = 0; i < list.n; i++) {
            const pp_plan *p = &list.plans[i];
            pp_megatron_opts o;
            pp_megatron_opts_default(&o);
            o.flavor = p->strategy.framework == PP_FW_MEGATRON ? PP_MEGATRON_LM : PP_MEGATRON_DEEPSPEED;
            pp_notes n = {0};
            char *t = NULL, ctx[128];
            snprintf(ctx, sizeof ctx, "%s plan %d (%s)", sc[k].model, i + 1, pp_framework_name(p->strategy.framework));
            cr_assert_eq(pp_megatron_args(&m, &c, p, &o, &t, &n, &err), PP_OK, "%s: refused: %s", ctx, err.msg);
            rebuild(&m, &c, &p->strategy, t, ctx);
            pp_free(t);
            emitted[o.flavor]++;
        }
        pp_plan_list_free(&list);
    }
    cr_log_info("megatron over searched plans: %d Megatron-LM, %d Megatron-DeepSpeed", emitted[0], emitted[1]);
    cr_assert_geq(emitted[0] + emitted[1], 75);
}

/* Selective recompute of chosen modules: --recompute-modules with the names
 * space-separated (nargs *), after --recompute-granularity selective. */
Test(megatron_flags, recompute_modules)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = base(&m, &c, 1, 1, 1);
    s.recompute = PP_RECOMPUTE_SELECTIVE;
    s.recompute_modules = PP_RC_MLP | PP_RC_LAYERNORM;
    char *t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    cr_expect(strstr(t, "  --recompute-granularity selective\n  --recompute-modules mlp layernorm\n"), "%s", t);
    pp_free(t);
}

/* The file says what was priced: each CP exchange as Megatron names it
 * (--cp-comm-type p2p | all_gather | a2a), and TE's TP overlap on a GPU
 * without CUDA multicast (before compute capability 9.0) with UB_SKIPMC=1,
 * which TE's initialize_ub otherwise asserts. */
Test(megatron_flags, cp_exchange_and_userbuffers_environment)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 2, 0);
    static const char *const want[PP_CP_COUNT] = {"p2p", "all_gather", "a2a"};
    for (int k = 0; k < PP_CP_COUNT; k++) {
        pp_strategy s = base(&m, &c, 2, 1, 4);
        s.sp = 1, s.cp_comm = (pp_cp_comm)k;
        char *t = must_args(&m, &c, &s, PP_MEGATRON_LM);
        argv_t a = bash_args(t);
        expect(&a, "--cp-comm-type", want[k]);
        cr_expect(!strstr(t, "UB_SKIPMC"), "H100 has multicast:\n%s", t);
        free(a.buf);
        pp_free(t);
    }
    pp_cluster a100 = fx_cluster("dgx-a100-80g", 2, 0);
    pp_strategy s = base(&m, &a100, 8, 1, 1);
    s.sp = 1, s.overlap_tp = 1;
    char *t = must_args(&m, &a100, &s, PP_MEGATRON_LM);
    cr_expect(strstr(t, "--tp-comm-overlap") && strstr(t, "export UB_SKIPMC=1\n"), "%s", t);
    pp_free(t);
}

/* The causal mask comes from the attention kernel: Megatron-LM's dataloader
 * would otherwise build an s x s mask a sample (16 GiB at 128k tokens). */
Test(megatron_flags, no_attention_mask_from_the_dataloader)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = base(&m, &c, 1, 1, 1);
    char *t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    cr_expect(strstr(t, "--no-create-attention-mask-in-dataloader\n"), "%s", t);
    pp_free(t);
}

/* MoE files launch what is priced: Megatron-LM balances routing only with
 * an aux-loss weight (default 0); Megatron-DeepSpeed splits experts over TP
 * only with --enable-expert-tensor-parallelism (default False), and reading
 * a file without it is refused (red team, session 28: the #1 Mixtral plan
 * would have held each expert whole on both TP ranks, about 103 GiB). */
Test(megatron_flags, moe_files_balance_and_split_experts_as_priced)
{
    pp_model m = fx_model("mixtral-8x7b");
    pp_cluster c = fx_cluster("dgx-h100", 4, 0);
    pp_strategy s = base(&m, &c, 2, 1, 1);
    s.ep = 4, s.sp = 1, s.zero = 1;
    char *t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    argv_t a = bash_args(t);
    expect(&a, "--moe-aux-loss-coeff", "0.02"); /* Mixtral's config.json router_aux_loss_coef */
    free(a.buf);
    pp_free(t);
    s.sp = 0; /* DeepSpeed-MoE takes the TP ranks' tokens to be the same: no SP (rule fw-sp) */
    t = must_args(&m, &c, &s, PP_MEGATRON_DEEPSPEED);
    cr_expect(strstr(t, "--enable-expert-tensor-parallelism\n"), "%s", t);
    /* read back without it: refused, naming the flag */
    char *cut = strstr(t, "  --enable-expert-tensor-parallelism\n");
    cr_assert_not_null(cut);
    memmove(cut, cut + strlen("  --enable-expert-tensor-parallelism\n"), strlen(cut + strlen("  --enable-expert-tensor-parallelism\n")) + 1);
    pp_strategy r;
    pp_notes w = {0};
    pp_error e = {""};
    cr_expect_eq(pp_megatron_parse(t, strlen(t), "mds.sh", &m, &c, &r, &w, &e), PP_ERR_INPUT);
    cr_expect(strstr(e.msg, "--enable-expert-tensor-parallelism is absent"), "%s", e.msg);
    pp_free(t);
}

/* The model that trains is the model named (red team rt10): Qwen3's per-head
 * q/k norms and DeepSeek-V3's latent norms are --qk-layernorm (Megatron's
 * default leaves them out), and DeepSeek-V3's router is sigmoid-scored with
 * the balancing bias, a 2.5 scale and a per-sequence loss of weight 1e-4
 * (its config.json; the report, Sec. 2.1.2). */
Test(megatron_flags, the_model_trains_as_named)
{
    pp_model m = fx_model("deepseek-v3");
    pp_cluster c = fx_cluster("dgx-h100", 32, 0);
    pp_strategy s = base(&m, &c, 1, 8, 1);
    s.ep = 8, s.zero = 1;
    char *t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    argv_t a = bash_args(t);
    cr_expect(val(&a, "--qk-layernorm") != NULL, "%s", t);
    expect(&a, "--moe-router-score-function", "sigmoid");
    cr_expect(val(&a, "--moe-router-enable-expert-bias") != NULL);
    expect(&a, "--moe-router-topk-scaling-factor", "2.5");
    expect(&a, "--moe-router-load-balancing-type", "seq_aux_loss");
    expect(&a, "--moe-aux-loss-coeff", "0.0001");
    free(a.buf);
    free(t);
    pp_model q = fx_model("qwen3-235b-a22b");
    s = base(&q, &c, 1, 4, 1);
    s.ep = 8, s.zero = 1;
    t = must_args(&q, &c, &s, PP_MEGATRON_LM);
    a = bash_args(t);
    cr_expect(val(&a, "--qk-layernorm") != NULL, "%s", t);
    expect(&a, "--moe-aux-loss-coeff", "0.001");
    cr_expect(val(&a, "--moe-router-score-function") == NULL, "softmax, Megatron's default");
    free(a.buf);
    free(t);
}

static int notes_have(const pp_notes *w, const char *a, const char *b)
{
    for (int i = 0; i < w->n; i++)
        if (strstr(w->line[i], a) && (!b || strstr(w->line[i], b))) return 1;
    return 0;
}

/* Full-iteration CUDA graphs in a user's arguments replay the MoE experts:
 * the reader sets buf.expert_graphs and the estimate charges no launch wait
 * (docs/time.md, "Expert launches"); per-layer graphs keep the wait and are
 * named as not priced. */
Test(megatron_args, full_iteration_cuda_graphs_remove_the_expert_launch_wait)
{
    pp_model m = fx_model("mixtral-8x7b");
    m.experts = 64;
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    pp_strategy s = base(&m, &c, 1, 1, 1);
    s.framework = PP_FW_MEGATRON, s.ep = 8, s.seq = 256, s.global_batch = 8;
    static pp_plan eager, back;
    pp_error err = {""};
    cr_assert_eq(pp_estimate(&m, &c, &s, &eager, &err), PP_OK, "%s", err.msg);
    cr_assert_gt(eager.time.expert_host_s, 0);
    char *t = must_args(&m, &c, &s, PP_MEGATRON_LM);
    const char *add[] = {"  --cuda-graph-impl full_iteration\n", "  --cuda-graph-impl local\n  --cuda-graph-scope full_iteration\n",
                         "  --cuda-graph-impl transformer_engine\n"};
    for (int i = 0; i < 3; i++) {
        char *end = strrchr(t, ')'), *u = malloc(strlen(t) + 128);
        cr_assert(end && u);
        snprintf(u, strlen(t) + 128, "%.*s%s%s", (int)(end - t), t, add[i], end);
        pp_strategy r;
        pp_strategy_default(&r);
        pp_notes w = {0};
        cr_assert_eq(pp_megatron_parse(u, strlen(u), "a.sh", &m, &c, &r, &w, &err), PP_OK, "%s", err.msg);
        cr_assert_eq(pp_estimate(&m, &c, &r, &back, &err), PP_OK, "%s", err.msg);
        if (i < 2) {
            cr_expect_eq(back.time.expert_host_s, 0, "%s", add[i]);
            cr_expect(!notes_have(&w, "--cuda-graph", NULL), "%s", add[i]);
        } else {
            cr_expect_eq(back.time.expert_host_s, eager.time.expert_host_s);
            cr_expect(notes_have(&w, "not priced", "--cuda-graph-impl"), "per-layer graphs named as not priced");
        }
        free(u);
    }
    pp_free(t);
}
