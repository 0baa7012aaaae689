/*
 * test_readers_launch.c — bad input to the launcher-file readers
 * (--megatron-args, --fsdp-config, --training-args): each case is a file
 * written to a fresh folder and `parplan estimate` run on it with --emit
 * into that folder: exit 2, one line on stderr naming the file, the flag or
 * key (and the rule when one failed), nothing on stdout, no folder written,
 * within the time limit. Then the pieces: shell words, the TOML subset and
 * the YAML typing, and the generated flag table.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parplan.h"
#include "configs/emit.h"
#include "configs/shell_words.h"
#include "configs/trees.h"

static char dir[256];

static void fresh_dir(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/parplan-launchbad-XXXXXX", t && *t ? t : "/tmp");
    cr_assert(mkdtemp(dir));
}

/* Frees an estimate's output and removes the scratch directory. */
static void drop_dir(char *out, char *err)
{
    free(out);
    free(err);
    char p[512];
    snprintf(p, sizeof p, "rm -rf '%s'", dir);
    cr_assert(system(p) == 0);
}

static void put(const char *name, const char *text, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    cr_assert(fwrite(text, 1, len, f) == len);
    fclose(f);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *b = calloc((size_t)n + 1, 1);
    cr_assert(b && fread(b, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    return b;
}

/* The text of a file the last estimate's --emit wrote (freed by the caller). */
static char *emitted(const char *name)
{
    char p[700];
    snprintf(p, sizeof p, "%s/emitted/%s", dir, name);
    return slurp(p);
}

/* Runs parplan estimate with argv in dir; returns the exit code, stderr in *err. */
static int estimate(const char *const *args, char **out, char **err)
{
    const char *argv[40] = {PARPLAN_CLI, "estimate"};
    int n = 2;
    for (int i = 0; args[i]; i++) argv[n++] = args[i];
    argv[n++] = "--emit";
    argv[n++] = "emitted";
    argv[n] = NULL;
    char po[512], pe[512];
    snprintf(po, sizeof po, "%s/.out", dir);
    snprintf(pe, sizeof pe, "%s/.err", dir);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int in = open("/dev/null", O_RDONLY);
        if (fo < 0 || fe < 0 || in < 0 || chdir(dir) || dup2(in, 0) < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(126);
        alarm(60);
        execv(PARPLAN_CLI, (char *const *)argv);
        _exit(127);
    }
    int status;
    cr_assert(waitpid(pid, &status, 0) == pid);
    *out = slurp(po);
    *err = slurp(pe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* file name, its text, extra flags; the expected fragments of the message */
static const char *extra_name, *extra_text; /* a second file for the next bad() */

static void bad(const char *name, const char *text, size_t len, const char *const *flags, const char *const *want)
{
    fresh_dir();
    put(name, text, len);
    if (extra_name) put(extra_name, extra_text, strlen(extra_text));
    extra_name = NULL;
    const char *args[30];
    int n = 0;
    for (int i = 0; flags[i]; i++) args[n++] = flags[i];
    args[n] = NULL;
    char *out, *err;
    int rc = estimate(args, &out, &err);
    cr_expect_eq(rc, 2, "exit %d, expected 2; stderr: %s", rc, err);
    cr_expect_str_empty(out, "stdout should be empty, got: %s", out);
    cr_expect(strchr(err, '\n') == err + strlen(err) - 1, "expected one line on stderr, got: %s", err);
    cr_expect(!strncmp(err, "parplan: ", 9), "%s", err);
    for (int i = 0; want[i]; i++) cr_expect(strstr(err, want[i]), "expected \"%s\" in: %s", want[i], err);
    char em[512];
    snprintf(em, sizeof em, "%s/emitted", dir);
    struct stat sb;
    cr_expect(stat(em, &sb) != 0, "a failed read must not write the --emit folder");
    free(out);
    free(err);
    char p[600];
    const char *files[] = {name, ".out", ".err", "t.json", "ds_config.json"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) snprintf(p, sizeof p, "%s/%s", dir, files[i]), unlink(p);
    rmdir(dir);
}

#define S(x) x, sizeof(x) - 1
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A Megatron-LM file for llama3-8b on one DGX H100 that reads back; the
 * cases below break it one way at a time. */
#define MG_HEAD "MEGATRON_ARGS=(\n  --tensor-model-parallel-size 2\n  --micro-batch-size 1\n  --global-batch-size 64\n" \
                "  --seq-length 8192\n  --num-layers 32\n  --hidden-size 4096\n  --ffn-hidden-size 14336\n"             \
                "  --num-attention-heads 32\n  --group-query-attention\n  --num-query-groups 8\n"                       \
                "  --max-position-embeddings 8192\n  --position-embedding-type rope\n  --rotary-base 500000\n"          \
                "  --normalization RMSNorm\n  --norm-epsilon 1e-05\n  --swiglu\n"                                       \
                "  --untie-embeddings-and-output-weights\n  --disable-bias-linear\n  --attention-dropout 0\n"           \
                "  --hidden-dropout 0\n  --bf16\n"
#define MG_MODEL "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "8"

Test(megatron_args, the_base_file_reads)
{
    fresh_dir();
    put("a.sh", S(MG_HEAD ")\n"));
    char *out, *err;
    int rc = estimate(ARGS(MG_MODEL, "--megatron-args", "a.sh"), &out, &err);
    cr_expect_eq(rc, 0, "%s", err);
    cr_expect(strstr(out, "megatron (megatron-lm): dp 4, tp 2"), "%s", out);
    drop_dir(out, err);
}

/* The estimate of a Megatron file (as a.sh in a fresh directory): stdout. */
static char *file_estimate(const char *text, size_t len)
{
    fresh_dir();
    put("a.sh", text, len);
    char *out, *err;
    int rc = estimate(ARGS(MG_MODEL, "--megatron-args", "a.sh"), &out, &err);
    cr_assert_eq(rc, 0, "%s", err);
    free(err);
    return out;
}

/* Column k (0 params, 1 grads, 2 optimizer, 3 activations) of stage 0 in
 * a Megatron file's estimate, GiB. */
static double file_column_gib(const char *text, size_t len, int k)
{
    char *out = file_estimate(text, len);
    const char *r = strstr(out, "\n     0  ");
    double v[4] = {0, 0, 0, 0};
    char layers[64];
    cr_assert(r && sscanf(r, " 0 %63s %lf %lf %lf %lf", layers, &v[0], &v[1], &v[2], &v[3]) >= k + 2, "%s", out);
    free(out);
    return v[k];
}

/* The grads column of a Megatron file's estimate, GiB. */
static double file_grads_gib(const char *text, size_t len) { return file_column_gib(text, len, 1); }

Test(megatron_args, grad_reduce_in_bf16_halves_main_grad)
{
    /* --grad-reduce-in-bf16 makes main_grad bf16 (arguments.py), as NeMo's
     * performance recipes run it: half the fp32 main_grad's bytes */
    double g[2] = {file_grads_gib(S(MG_HEAD ")\n")), file_grads_gib(S(MG_HEAD "  --grad-reduce-in-bf16\n)\n"))};
    cr_expect(fabs(g[1] - g[0] / 2) < 0.01 && g[1] > 0, "bf16 %.2f GiB, fp32 %.2f GiB", g[1], g[0]);
    char p[512];
    snprintf(p, sizeof p, "rm -rf '%s'", dir);
    cr_assert(system(p) == 0);
}

/* The allocator is the environment the file gives the launch: export,
 * unset, or NAME=value before the command on its line (continued lines
 * too); PYTORCH_ALLOC_CONF wins over PYTORCH_CUDA_ALLOC_CONF, blanks in the
 * value do not matter (c10 CUDAAllocatorConfig). Without it PyTorch's
 * caching allocator, whose 10% overhead is what the two peaks differ by. */
static void allocator_case(const char *text, int want, double *peak, double *frag)
{
    fresh_dir();
    put("a.sh", text, strlen(text));
    char *out, *err;
    int rc = estimate(ARGS(MG_MODEL, "--megatron-args", "a.sh", "--format", "json"), &out, &err);
    cr_assert_eq(rc, 0, "%s\n%s", err, text);
    cr_expect(strstr(out, want ? "\"expandable_segments\":\ttrue" : "\"expandable_segments\":\tfalse"),
              "expected %s: %s", want ? "expandable" : "caching", text);
    const char *p = strstr(out, "\"peak_bytes\":"), *f = strstr(out, "\"fragmentation_bytes\":");
    cr_assert(p && f && sscanf(p, "\"peak_bytes\": %lf", peak) == 1 && sscanf(f, "\"fragmentation_bytes\": %lf", frag) == 1,
              "%s", out);
    free(out);
    free(err);
    char c[512];
    snprintf(c, sizeof c, "rm -rf '%s'", dir);
    cr_assert(system(c) == 0);
}

#define MG_FLAGS (MG_HEAD + sizeof "MEGATRON_ARGS=(\n" - 1) /* the flags without the array */

Test(megatron_args, allocator_environment_reads)
{
    static const struct { const char *env; int want; } arr[] = {
        {"", 0},
        {"export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n", 1},
        {"export PYTORCH_ALLOC_CONF=\"garbage_collection_threshold:0.6, expandable_segments: True\"\n", 1},
        {"export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False\n", 0},
        {"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n", 0},                     /* not exported */
        {"echo PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n", 0},                /* an argument */
        {"export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nunset PYTORCH_CUDA_ALLOC_CONF\n", 0},
        {"export PYTORCH_ALLOC_CONF=expandable_segments:False PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n", 0},
        {"export A=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n", 1},
        /* the second review's cases */
        {"PYTORCH_ALLOC_CONF=expandable_segments:True python tools/preprocess_data.py\n", 0}, /* not the launch */
        {"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nexport PYTORCH_CUDA_ALLOC_CONF\n", 1},
        {"declare -x PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n", 1},
        {"export -n PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n", 0},
        {"export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:False\n", 0},
        {"export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nunset -f PYTORCH_CUDA_ALLOC_CONF\n", 1},
        {"export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync,expandable_segments:True\n", 0},
        {"# launch settings\nexport \\\n  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True # on\n", 1}};
    double peak[2] = {0}, frag[2] = {0}, pk, fr;
    char text[4096];
    for (size_t i = 0; i < sizeof arr / sizeof *arr; i++) {
        snprintf(text, sizeof text, "%s%s)\n", arr[i].env, MG_HEAD);
        allocator_case(text, arr[i].want, &pk, &fr);
        if (i < 2) peak[i] = pk, frag[i] = fr;
    }
    /* a command line: the assignments before torchrun, continued or not */
    snprintf(text, sizeof text, "PYTORCH_ALLOC_CONF=expandable_segments:True \\\n  torchrun --nproc_per_node 8 pretrain_gpt.py\n%s",
             MG_FLAGS);
    allocator_case(text, 1, &pk, &fr);
    snprintf(text, sizeof text, "torchrun --nproc_per_node 8 pretrain_gpt.py PYTORCH_ALLOC_CONF=expandable_segments:True\n%s",
             MG_FLAGS);
    allocator_case(text, 0, &pk, &fr);
    snprintf(text, sizeof text, "env PYTORCH_ALLOC_CONF=expandable_segments:True torchrun pretrain_gpt.py\n%s", MG_FLAGS);
    allocator_case(text, 1, &pk, &fr);
    int n = 0; /* more prefix assignments than a fixed list would hold */
    for (int i = 0; i < 20; i++) n += snprintf(text + n, sizeof text - (size_t)n, "A%d=1 ", i);
    snprintf(text + n, sizeof text - (size_t)n, "PYTORCH_ALLOC_CONF=expandable_segments:True torchrun pretrain_gpt.py\n%s",
             MG_FLAGS);
    allocator_case(text, 1, &pk, &fr);
    cr_expect(frag[1] == 0 && frag[0] > 0, "fragmentation %g %g", frag[0], frag[1]);
    cr_expect(fabs(peak[0] - peak[1] - frag[0]) < 1e-6 * peak[0], "peaks %.0f - %.0f != %.0f", peak[0], peak[1], frag[0]);
}

/* A Megatron-DeepSpeed file is priced with the caching allocator whatever
 * it exports (the deepspeed launcher forwards only MLFLOW, PYTHON, MV2 and
 * UCX variables to other nodes), with a warning that says so; the allocator
 * comes from the file, so --allocator beside it is refused. */
Test(megatron_args, megatron_deepspeed_allocator_and_refusal)
{
    fresh_dir();
    char *out, *err;
    int rc = estimate(ARGS(MG_MODEL, "--framework", "megatron-deepspeed", "--tp", "2", "--zero", "1", "--global-batch", "64"),
                      &out, &err);
    cr_assert_eq(rc, 0, "%s", err);
    free(out);
    free(err);
    char p[700], q[700];
    snprintf(p, sizeof p, "%s/emitted", dir);
    snprintf(q, sizeof q, "%s/first", dir);
    cr_assert(rename(p, q) == 0);
    snprintf(p, sizeof p, "%s/first/megatron_deepspeed_args.sh", dir);
    char *args = slurp(p);
    cr_expect(!strstr(args, "PYTORCH_CUDA_ALLOC_CONF"), "%s", args);
    size_t n = strlen(args) + 128;
    char *with = malloc(n);
    cr_assert(with);
    snprintf(with, n, "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n%s", args);
    put("first/megatron_deepspeed_args.sh", with, strlen(with));
    rc = estimate(ARGS(MG_MODEL, "--megatron-args", "first/megatron_deepspeed_args.sh", "--format", "json"), &out, &err);
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect(strstr(out, "\"expandable_segments\":\tfalse"), "%s", out);
    cr_expect(strstr(err, "caching allocator") && strstr(err, "deepspeed launcher"), "%s", err);
    free(out);
    free(err);
    rc = estimate(ARGS(MG_MODEL, "--megatron-args", "first/megatron_deepspeed_args.sh", "--allocator", "caching"), &out, &err);
    cr_expect_eq(rc, 2);
    cr_expect(strstr(err, "--allocator") && strstr(err, "comes from the file"), "%s", err);
    free(out);
    free(err);
    free(args);
    free(with);
    snprintf(p, sizeof p, "rm -rf '%s'", dir);
    cr_assert(system(p) == 0);
}

Test(megatron_args, cpu_offloading_reads_and_follows_megatrons_asserts)
{
    /* --cpu-offloading-num-layers: Megatron-Core's activation offload */
    fresh_dir();
    put("a.sh", S(MG_HEAD "  --cpu-offloading-num-layers 8\n)\n"));
    char *out, *err;
    int rc = estimate(ARGS(MG_MODEL, "--megatron-args", "a.sh"), &out, &err);
    cr_expect_eq(rc, 0, "%s", err);
    cr_expect(strstr(out, "activations of 8 blocks offloaded") && strstr(out, "host: "), "%s", out);
    cr_expect(!strstr(err, "not priced"), "%s", err);
    free(out);
    free(err);
    /* Megatron refuses it with pipeline parallelism and with recomputation */
    bad("a.sh", S(MG_HEAD "  --cpu-offloading-num-layers 8\n  --pipeline-model-parallel-size 2\n)\n"),
        ARGS(MG_MODEL, "--megatron-args", "a.sh"), ARGS("pipeline parallelism", "[rule fw-act-offload]"));
    bad("a.sh", S(MG_HEAD "  --cpu-offloading-num-layers 8\n  --recompute-activations\n)\n"),
        ARGS(MG_MODEL, "--megatron-args", "a.sh"), ARGS("recomputation", "[rule fw-act-offload]"));
    /* transformer_config.py: per-layer CUDA graphs and per-module offload refuse it */
    bad("a.sh", S(MG_HEAD "  --cpu-offloading-num-layers 8\n  --cuda-graph-impl local\n)\n"),
        ARGS(MG_MODEL, "--megatron-args", "a.sh"), ARGS("a.sh:", "--cuda-graph-impl local", "CUDA graphs not supported"));
    bad("a.sh", S(MG_HEAD "  --cpu-offloading-num-layers 8\n  --fine-grained-activation-offloading\n)\n"),
        ARGS(MG_MODEL, "--megatron-args", "a.sh"), ARGS("a.sh:", "--fine-grained-activation-offloading"));
}

/* --use-precision-aware-optimizer with bf16 moments reads as bf16 optimizer
 * states (half the optimizer column: 6 of 12 bytes a weight); the other
 * dtypes are refused as not priced, lowered dtypes without the switch as
 * Megatron asserts, and without the distributed optimizer by the rule. */
#define MG_PA "  --use-distributed-optimizer\n  --use-precision-aware-optimizer\n"
Test(megatron_args, precision_aware_optimizer_reads)
{
    double opt[2];
    for (int i = 0; i < 2; i++) {
        fresh_dir();
        if (i) put("a.sh", S(MG_HEAD MG_PA "  --exp-avg-dtype bf16\n  --exp-avg-sq-dtype bf16\n)\n"));
        else put("a.sh", S(MG_HEAD "  --use-distributed-optimizer\n)\n"));
        char *out, *err;
        int rc = estimate(ARGS(MG_MODEL, "--megatron-args", "a.sh"), &out, &err);
        cr_assert_eq(rc, 0, "%s", err);
        cr_expect(!i || strstr(out, "bf16 optimizer states"), "%s", out);
        const char *r = strstr(out, "\n     0  ");
        double params = 0, grads = 0;
        char layers[64];
        cr_assert(r && sscanf(r, " 0 %63s %lf %lf %lf", layers, &params, &grads, &opt[i]) == 4, "%s", out);
        free(out);
        free(err);
    }
    cr_expect(fabs(opt[1] - opt[0] / 2) < 0.01 && opt[1] > 0, "bf16 %.2f GiB, fp32 %.2f GiB", opt[1], opt[0]);
    bad("a.sh", S(MG_HEAD MG_PA ")\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "--use-precision-aware-optimizer", "--exp-avg-dtype is fp32"));
    bad("a.sh", S(MG_HEAD MG_PA "  --exp-avg-dtype bf16\n  --exp-avg-sq-dtype fp8\n)\n"),
        ARGS(MG_MODEL, "--megatron-args", "a.sh"), ARGS("a.sh:", "--exp-avg-sq-dtype is fp8"));
    bad("a.sh", S(MG_HEAD MG_PA "  --exp-avg-dtype bf16\n  --exp-avg-sq-dtype bf16\n  --main-params-dtype fp16\n)\n"),
        ARGS(MG_MODEL, "--megatron-args", "a.sh"), ARGS("a.sh:", "--main-params-dtype is fp16"));
    bad("a.sh", S(MG_HEAD MG_PA "  --exp-avg-dtype bf16\n  --exp-avg-sq-dtype bf16\n  --main-grads-dtype bf16\n"
                  "  --accumulate-allreduce-grads-in-fp32\n)\n"),
        ARGS(MG_MODEL, "--megatron-args", "a.sh"), ARGS("a.sh:", "Megatron asserts"));
    /* bf16 main grads: the bf16 gradient buffer of --grad-reduce-in-bf16 (half the grads column) */
    double g[2] = {file_grads_gib(S(MG_HEAD MG_PA "  --exp-avg-dtype bf16\n  --exp-avg-sq-dtype bf16\n)\n")),
                   file_grads_gib(S(MG_HEAD MG_PA "  --exp-avg-dtype bf16\n  --exp-avg-sq-dtype bf16\n"
                                    "  --main-grads-dtype bf16\n)\n"))};
    cr_expect(fabs(g[1] - g[0] / 2) < 0.01 && g[1] > 0, "bf16 main grads %.2f GiB, fp32 %.2f GiB", g[1], g[0]);
    bad("a.sh", S(MG_HEAD "  --exp-avg-dtype bf16\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "--exp-avg-dtype", "needs --use-precision-aware-optimizer"));
    /* Megatron reads --fp8-recipe without --fp8-format too: a recipe other
     * than delayed then keeps an fp32 master (8 bytes) in bf16 training */
    bad("a.sh", S(MG_HEAD MG_PA "  --exp-avg-dtype bf16\n  --exp-avg-sq-dtype bf16\n  --fp8-recipe tensorwise\n)\n"),
        ARGS(MG_MODEL, "--megatron-args", "a.sh"), ARGS("a.sh:", "--fp8-recipe tensorwise with", "8 bytes a weight"));
    /* fp8 (tensorwise): bf16 moments and an fp32 master, 8 of 12 bytes a weight */
    double f8[2] = {file_column_gib(S(MG_HEAD "  --use-distributed-optimizer\n  --fp8-format hybrid\n  --fp8-recipe tensorwise\n)\n"), 2),
                    file_column_gib(S(MG_HEAD MG_PA "  --exp-avg-dtype bf16\n  --exp-avg-sq-dtype bf16\n  --fp8-format hybrid\n"
                                      "  --fp8-recipe tensorwise\n)\n"), 2)};
    cr_expect(fabs(f8[1] - f8[0] * 8 / 12) < 0.01 && f8[1] > 0, "fp8 bf16 %.2f GiB, fp32 %.2f GiB", f8[1], f8[0]);
    bad("a.sh", S(MG_HEAD MG_PA "  --exp-avg-dtype bf17\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "'bf17'", "expected one of fp32, fp16, bf16, fp8"));
    bad("a.sh", S(MG_HEAD "  --use-precision-aware-optimizer\n  --exp-avg-dtype bf16\n  --exp-avg-sq-dtype bf16\n)\n"),
        ARGS(MG_MODEL, "--megatron-args", "a.sh"), ARGS("[rule fw-opt-states]"));
}

/* --fp8-param-gather reads as FP8 primary weights, as given: a file without
 * it keeps bf16 weights and the FP8 cache. Llama-3-8B at tp 2 on H100, by
 * hand: each GPU's block GEMM weights are 32 x 4096 x (4096 + 2 x 1024 +
 * 4096 + 3 x 14336) / 2 = 3,489,660,928; they go from 2 + 2 bytes (bf16 and
 * the FP8 copy with Hopper's transpose) to 2, i.e. 2 x 3,489,660,928 B =
 * 6.50 GiB less. Without --fp8-format, or without the distributed
 * optimizer or Megatron-FSDP, Megatron asserts and the reader refuses. */
#define MG_FP8 "  --fp8-format hybrid\n  --fp8-recipe tensorwise\n"
Test(megatron_args, fp8_param_gather_reads)
{
    double w[2] = {file_column_gib(S(MG_HEAD "  --use-distributed-optimizer\n" MG_FP8 ")\n"), 0),
                   file_column_gib(S(MG_HEAD "  --use-distributed-optimizer\n" MG_FP8 "  --fp8-param-gather\n)\n"), 0)};
    double by_hand = 2.0 * 3489660928.0 / 1073741824.0;
    cr_expect(fabs(w[0] - w[1] - by_hand) < 0.01, "params %.3f -> %.3f GiB, by hand %.3f less", w[0], w[1], by_hand);
    bad("a.sh", S(MG_HEAD "  --use-distributed-optimizer\n  --fp8-param-gather\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "--fp8-param-gather without --fp8-format"));
    bad("a.sh", S(MG_HEAD MG_FP8 "  --fp8-param-gather\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "--fp8-param-gather needs --use-distributed-optimizer or --use-megatron-fsdp"));
}

/* --ddp-bucket-size: elements a gradient bucket holds. Megatron's default
 * at dp 4 is 4e7: Llama-3-8B at tp 2 makes about 100 buckets, each a
 * reduce-scatter and an all-gather paying its ring latency; one bucket of
 * 1e12 makes one of each, so the DP traffic line is shorter. A bad value is
 * refused, naming the flag. */
static double dp_traffic_s(char *out) /* frees out */
{
    const char *r = strstr(out, "(DP/ZeRO traffic ");
    double v = 0;
    cr_assert(r && sscanf(r, "(DP/ZeRO traffic %lf", &v) == 1, "%s", out);
    free(out);
    return v;
}

static double file_dp_traffic_s(const char *text, size_t len) { return dp_traffic_s(file_estimate(text, len)); }

#define MG_DO "  --use-distributed-optimizer\n  --overlap-grad-reduce\n  --overlap-param-gather\n"
Test(megatron_args, ddp_bucket_size_reads)
{
    double dflt = file_dp_traffic_s(S(MG_HEAD MG_DO ")\n"));
    double one = file_dp_traffic_s(S(MG_HEAD MG_DO "  --ddp-bucket-size 1000000000000\n)\n"));
    cr_expect(one < dflt && one > 0, "one bucket %.4f s, Megatron's buckets %.4f s", one, dflt);
    bad("a.sh", S(MG_HEAD MG_DO "  --ddp-bucket-size lots\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "--ddp-bucket-size 'lots'", "expected an integer"));
    bad("a.sh", S(MG_HEAD MG_DO "  --ddp-bucket-size 1e8\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "--ddp-bucket-size '1e8'", "expected an integer")); /* Megatron's type=int */
    bad("a.sh", S(MG_HEAD MG_DO "  --ddp-num-buckets 8\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "--ddp-num-buckets", "not priced"));
    /* a bucket given to estimate is launched: the file says it, and reads back to the same traffic */
    fresh_dir();
    char *out, *err;
    cr_assert_eq(estimate(ARGS(MG_MODEL, "--framework", "megatron", "--zero", "1", "--reduce-bucket", "100000000"),
                          &out, &err), 0, "%s", err);
    free(err);
    double given = dp_traffic_s(out);
    char *f = emitted("megatron_args.sh");
    cr_assert(f && strstr(f, "  --ddp-bucket-size 100000000\n"), "%s", f ? f : "(no file)");
    double back = file_dp_traffic_s(f, strlen(f)); /* a fresh directory: estimate emits again */
    cr_expect(back == given && given > 0, "read back %.4f s, emitted from %.4f s", back, given);
    free(f);
}

/* --use-megatron-fsdp: ZeRO-3 (optim_grads_params, v1, fsdp_dtensor
 * checkpoints, as arguments.py asserts); the other sharding strategies and
 * version 2 are refused as not priced, never read as something else. */
#define MG_FSDP "  --use-megatron-fsdp\n  --use-distributed-optimizer\n  --ckpt-format fsdp_dtensor\n"
Test(megatron_args, megatron_fsdp_reads_as_zero3)
{
    fresh_dir();
    put("a.sh", S(MG_HEAD MG_FSDP "  --fsdp-double-buffer\n)\n"));
    char *out, *err;
    int rc = estimate(ARGS(MG_MODEL, "--megatron-args", "a.sh"), &out, &err);
    cr_expect_eq(rc, 0, "%s", err);
    cr_expect(strstr(out, "ZeRO-3"), "%s", out);
    cr_expect(!strstr(err, "not priced"), "%s", err);
    free(out);
    free(err);
    bad("a.sh", S(MG_HEAD "  --use-megatron-fsdp\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "--ckpt-format fsdp_dtensor", "Megatron asserts"));
    bad("a.sh", S(MG_HEAD MG_FSDP "  --data-parallel-sharding-strategy optim_grads\n)\n"),
        ARGS(MG_MODEL, "--megatron-args", "a.sh"), ARGS("a.sh:", "optim_grads: not priced", "optim_grads_params"));
    bad("a.sh", S(MG_HEAD MG_FSDP "  --megatron-fsdp-version 2\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "--megatron-fsdp-version 2: not priced"));
    bad("a.sh", S(MG_HEAD MG_FSDP "  --pipeline-model-parallel-size 2\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("Megatron-FSDP without pipeline stages", "[rule fw-zero-pp]"));
}

/* MoE as Megatron-Bridge runs it: folded experts (--expert-tensor-parallel-size
 * 1 under tp 2), HybridEP dispatch and the EP all-to-all overlap read back as
 * such; the NCCL-EP backend is refused as not priced. Mixtral-8x7B on two
 * DGX H100: tp 2, pp 2, ep 8 > dp 4 exists only folded. */
#define MX_HEAD "MEGATRON_ARGS=(\n  --tensor-model-parallel-size 2\n  --pipeline-model-parallel-size 2\n"   \
                "  --sequence-parallel\n"                                                                        \
                "  --expert-model-parallel-size 8\n  --micro-batch-size 1\n  --global-batch-size 64\n"         \
                "  --seq-length 4096\n  --num-layers 32\n  --hidden-size 4096\n  --ffn-hidden-size 14336\n"  \
                "  --num-attention-heads 32\n  --group-query-attention\n  --num-query-groups 8\n"              \
                "  --max-position-embeddings 32768\n  --position-embedding-type rope\n  --rotary-base 1000000\n" \
                "  --normalization RMSNorm\n  --norm-epsilon 1e-05\n  --swiglu\n"                               \
                "  --untie-embeddings-and-output-weights\n  --disable-bias-linear\n  --attention-dropout 0\n"   \
                "  --hidden-dropout 0\n  --bf16\n  --num-experts 8\n  --moe-router-topk 2\n"                  \
                "  --moe-ffn-hidden-size 14336\n"
#define MX_MODEL "--model", "mixtral-8x7b", "--cluster", "dgx-h100", "--gpus", "16"
Test(megatron_args, moe_folding_dispatch_and_overlap_read)
{
    fresh_dir();
    put("a.sh", S(MX_HEAD "  --expert-tensor-parallel-size 1\n  --moe-token-dispatcher-type flex\n"
                  "  --moe-flex-dispatcher-backend hybridep\n  --overlap-moe-expert-parallel-comm\n"
                  "  --num-virtual-stages-per-pipeline-rank 2\n)\n"));
    char *out, *err;
    int rc = estimate(ARGS(MX_MODEL, "--megatron-args", "a.sh", "--format", "json"), &out, &err);
    cr_expect_eq(rc, 0, "%s", err);
    cr_expect(strstr(out, "\"etp\":\t1") && strstr(out, "\"overlap_ep\":\ttrue") &&
              strstr(out, "\"ep_dispatch\":\t\"hierarchical\""), "%s", out);
    cr_expect(!strstr(err, "not priced"), "%s", err);
    free(out);
    free(err);
    bad("a.sh", S(MX_HEAD ")\n"), ARGS(MX_MODEL, "--megatron-args", "a.sh"), ARGS("ep", "[rule ep-group]"));
    bad("a.sh", S(MX_HEAD "  --expert-tensor-parallel-size 1\n  --moe-token-dispatcher-type flex\n"
                  "  --moe-flex-dispatcher-backend ncclep\n)\n"), ARGS(MX_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "ncclep: not priced"));
}

Test(megatron_args, truncated) { bad("a.sh", S(MG_HEAD), ARGS(MG_MODEL, "--megatron-args", "a.sh"), ARGS("a.sh", "is not closed")); }

Test(megatron_args, binary)
{
    bad("a.sh", S("MEGATRON_ARGS=(\n\x01\x02\0\xff)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh", "binary data"));
}

Test(megatron_args, empty) { bad("a.sh", S("  \n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"), ARGS("a.sh", "empty file")); }

Test(megatron_args, unknown_flag_with_suggestion)
{
    bad("a.sh", S(MG_HEAD "  --sequence-paralel\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:23:", "--sequence-paralel", "unknown flag", "did you mean --sequence-parallel?"));
}

Test(megatron_args, other_flavor_flag)
{
    bad("a.sh", S(MG_HEAD "  --zero-stage 1\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:23:", "--zero-stage is a Megatron-DeepSpeed flag", "Megatron-LM"));
}

Test(megatron_args, missing_value)
{
    bad("a.sh", S(MG_HEAD "  --recompute-num-layers\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:23:", "--recompute-num-layers", "expected 1 value"));
}

Test(megatron_args, value_on_a_switch)
{
    bad("a.sh", S(MG_HEAD "  --sequence-parallel true\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("--sequence-parallel takes no value", "'true'"));
}

Test(megatron_args, non_numeric_value)
{
    bad("a.sh", S(MG_HEAD "  --pipeline-model-parallel-size two\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:23:", "--pipeline-model-parallel-size 'two'", "expected an integer"));
}

Test(megatron_args, contradicts_the_model)
{
    bad("a.sh", S(MG_HEAD "  --num-layers 40\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("--num-layers 40 contradicts llama3-8b's layers 32"));
    bad("a.sh", S(MG_HEAD "  --rotary-base 10000\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("--rotary-base 10000 contradicts llama3-8b's rotary base 500000"));
}

Test(megatron_args, default_contradicts_the_model)
{
    /* without --swiglu Megatron builds a GELU MLP of 4h; Llama's is SwiGLU */
    static const char f[] = "--tensor-model-parallel-size 1 --micro-batch-size 1 --seq-length 8192 --num-layers 32 "
                            "--hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 --bf16\n";
    bad("a.sh", S(f), ARGS(MG_MODEL, "--megatron-args", "a.sh"), ARGS("--group-query-attention is absent"));
}

Test(megatron_args, rule_of_the_framework)
{
    /* an fp8 file on A100s: the precision-gpu rule, worded with --fp8-format */
    bad("a.sh", S(MG_HEAD "  --fp8-format hybrid\n  --fp8-recipe tensorwise\n)\n"),
        ARGS("--model", "llama3-8b", "--cluster", "dgx-a100-80g", "--gpus", "8", "--megatron-args", "a.sh"),
        ARGS("--fp8-format (precision fp8)", "[rule precision-gpu]"));
}

/* fp8 is priced with current per-tensor scaling (--fp8-recipe tensorwise,
 * which the emitter writes); Megatron's default delayed scaling and the
 * block-scaled recipes quantise and keep states otherwise: refused. */
Test(megatron_args, fp8_recipe_read_as_priced)
{
    bad("a.sh", S(MG_HEAD "  --fp8-format hybrid\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "--fp8-recipe absent (Megatron's default, delayed)", "the delayed recipe is not priced"));
    bad("a.sh", S(MG_HEAD "  --fp8-format hybrid\n  --fp8-recipe mxfp8\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "--fp8-recipe mxfp8", "the mxfp8 recipe is not priced"));
    bad("a.sh", S(MG_HEAD "  --fp8-format hybrid\n  --fp8-recipe fp4\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "--fp8-recipe 'fp4': expected one of tensorwise, delayed"));
    fresh_dir();
    put("a.sh", S(MG_HEAD "  --fp8-format hybrid\n  --fp8-recipe tensorwise\n)\n"));
    char *out, *err;
    int rc = estimate(ARGS(MG_MODEL, "--megatron-args", "a.sh"), &out, &err);
    cr_expect_eq(rc, 0, "%s", err);
    cr_expect(strstr(out, "fp8"), "%s", out);
    free(out);
    free(err);
}

Test(megatron_args, megatron_asserts)
{
    bad("a.sh", S(MG_HEAD "  --tp-comm-overlap\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("--tp-comm-overlap without --sequence-parallel"));
    bad("a.sh", S(MG_HEAD "  --recompute-granularity full\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("full recompute needs --recompute-method"));
    bad("a.sh", S(MG_HEAD "  --pipeline-model-parallel-size 2\n  --pipeline-model-parallel-layout 'Et*16|t*15L'\n)\n"),
        ARGS(MG_MODEL, "--megatron-args", "a.sh"), ARGS("blocks sum to 31"));
}

Test(megatron_args, expansion_and_operators)
{
    bad("a.sh", S(MG_HEAD "  --seq-length $SEQ\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:23:", "'$'", "does not expand"));
    bad("a.sh", S("--num-layers 32; rm -rf /\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:1:", "shell operator ';'"));
}

Test(megatron_args, flag_given_beside_the_file)
{
    bad("a.sh", S(MG_HEAD ")\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh", "--tp", "4"),
        ARGS("--tp", "comes from the file"));
}

Test(megatron_args, megatron_lm_flag_in_a_megatron_deepspeed_file)
{
    bad("a.sh", S(MG_HEAD "  --deepspeed\n  --deepspeed_config ds_config.json\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:10:", "--group-query-attention is a Megatron-LM flag", "Megatron-DeepSpeed rejects it"));
}

Test(megatron_args, megatron_deepspeed_config_missing)
{
    static const char f[] = "--deepspeed --deepspeed_config nope.json --micro-batch-size 1 --seq-length 8192 "
                            "--num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 "
                            "--num-key-value-heads 8 --max-position-embeddings 8192 --use-rotary-position-embeddings "
                            "--rotary-position-embeddings-theta 500000 --normalization rmsnorm --layernorm-epsilon 1e-5 "
                            "--swiglu --untie-embeddings-and-output-weights --disable-bias-linear --attention-dropout 0 "
                            "--hidden-dropout 0 --bf16\n";
    bad("a.sh", S(f), ARGS(MG_MODEL, "--megatron-args", "a.sh"), ARGS("--deepspeed_config nope.json", "cannot open"));
}

/* ------------------------------------------------------------ FSDP */

#define ACC "distributed_type: FSDP\nmixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\nfsdp_config:\n" \
            "  fsdp_version: 2\n  fsdp_reshard_after_forward: true\n"
#define TA "{\"per_device_train_batch_size\": 1, \"gradient_accumulation_steps\": 8, \"bf16\": true}"

Test(fsdp_config, accelerate_reads)
{
    fresh_dir();
    put("f.yaml", S(ACC));
    put("t.json", S(TA));
    char *out, *err;
    int rc = estimate(ARGS(MG_MODEL, "--fsdp-config", "f.yaml", "--training-args", "t.json"), &out, &err);
    cr_expect_eq(rc, 0, "%s", err);
    cr_expect(strstr(out, "fsdp (hf-accelerate): dp 8, tp 1") && strstr(out, "ZeRO-3"), "%s", out);
    drop_dir(out, err);
}

Test(fsdp_config, truncated_and_binary)
{
    bad("f.yaml", S("distributed_type: FSDP\nfsdp_config:\n  fsdp_version: [2\n"), ARGS(MG_MODEL, "--fsdp-config", "f.yaml"),
        ARGS("f.yaml:", "malformed or truncated YAML"));
    bad("f.yaml", "a: \x01\0\x02\n", 7, ARGS(MG_MODEL, "--fsdp-config", "f.yaml"), ARGS("f.yaml", "binary data"));
}

Test(fsdp_config, unknown_key_with_suggestion)
{
    bad("f.yaml", S(ACC "  fsdp_ofload_params: true\n"), ARGS(MG_MODEL, "--fsdp-config", "f.yaml"),
        ARGS("$.fsdp_config.fsdp_ofload_params", "did you mean \"fsdp_offload_params\""));
    bad("f.yaml", S(ACC "parallelism_config:\n  parallelism_config_tp_sise: 2\n"), ARGS(MG_MODEL, "--fsdp-config", "f.yaml"),
        ARGS("parallelism_config_tp_sise", "did you mean \"parallelism_config_tp_size\""));
}

Test(fsdp_config, unsupported_combination)
{
    /* fp16: FSDP is priced in fp32 or bf16 (rule fw-precision), worded with the key */
    bad("f.yaml", S("distributed_type: FSDP\nmixed_precision: fp16\nnum_machines: 1\nnum_processes: 8\nfsdp_config:\n"
                    "  fsdp_version: 2\n"), ARGS(MG_MODEL, "--fsdp-config", "f.yaml"),
        ARGS("$.mixed_precision (precision fp16)", "[rule fw-precision]"));
    bad("f.yaml", S(ACC), ARGS(MG_MODEL, "--fsdp-config", "f.yaml", "--zero", "1"), ARGS("--zero", "comes from the file"));
}

Test(fsdp_config, accelerate_refusals)
{
    bad("f.yaml", S("distributed_type: FSDP\nnum_machines: 1\nnum_processes: 16\nfsdp_config:\n  fsdp_version: 2\n"),
        ARGS(MG_MODEL, "--fsdp-config", "f.yaml"), ARGS("num_processes", "16 processes"));
    bad("f.yaml", S("distributed_type: FSDP\nnum_machines: 1\nnum_processes: 8\nfsdp_config:\n  fsdp_version: 1\n"),
        ARGS(MG_MODEL, "--fsdp-config", "f.yaml"), ARGS("fsdp_version", "FSDP2"));
    /* transformers' TP plans under Accelerate are not the DTensor TP parplan prices */
    bad("f.yaml", S(ACC "parallelism_config:\n  parallelism_config_dp_shard_size: 4\n  parallelism_config_tp_size: 2\n"),
        ARGS(MG_MODEL, "--fsdp-config", "f.yaml"), ARGS("$.parallelism_config.parallelism_config_tp_size", "not priced"));
    extra_name = "t.json", extra_text = "{\"gradient_checkpointing\": true, \"bf16\": true}";
    bad("f.yaml", S(ACC "  fsdp_activation_checkpointing: true\n"), ARGS(MG_MODEL, "--fsdp-config", "f.yaml", "--training-args", "t.json"),
        ARGS("fsdp_activation_checkpointing", "can't be set to True simultaneously"));
}

#define TT "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 1\nglobal_batch_size = 64\n" \
           "seq_len = 8192\n[activation_checkpoint]\nmode = \"full\"\n"

Test(fsdp_config, torchtitan_reads)
{
    fresh_dir();
    put("t.toml", S(TT "[parallelism]\ntensor_parallel_degree = 2\n"));
    char *out, *err;
    int rc = estimate(ARGS(MG_MODEL, "--fsdp-config", "t.toml"), &out, &err);
    cr_expect_eq(rc, 0, "%s", err);
    cr_expect(strstr(out, "fsdp (torchtitan): dp 4, tp 2") && strstr(out, "+sp"), "%s", out);
    drop_dir(out, err);
}

Test(fsdp_config, torchtitan_per_op_sac_reads)
{
    /* selective_ac_option "op": torchtitan's per-op policy, fsdp's selective */
    fresh_dir();
    put("t.toml", S("[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 2\n"
                    "global_batch_size = 16\nseq_len = 8192\n[activation_checkpoint]\nmode = \"selective\"\n"
                    "selective_ac_option = \"op\"\n"));
    char *out, *err;
    int rc = estimate(ARGS(MG_MODEL, "--fsdp-config", "t.toml"), &out, &err);
    cr_expect_eq(rc, 0, "%s", err);
    cr_expect(strstr(out, "with fsdp") && strstr(out, "recompute selective"), "%s", out);
    drop_dir(out, err);
}

/* [compile] (torchtitan v0.2.2 Compile: components default ["model",
 * "loss"]): a compiled loss is the fused loss; compiled blocks are not
 * priced, and the reader says so */
Test(fsdp_config, torchtitan_compile_reads)
{
    static const struct { const char *compile, *loss; int warns; } cases[] = {
        {"[compile]\nenable = true\ncomponents = [\"loss\"]\n", "\"loss\":\t\"fused\"", 0},
        {"[compile]\nenable = true\n", "\"loss\":\t\"fused\"", 1},
        {"[compile]\nenable = true\ncomponents = [\"model\"]\n", "\"loss\":\t\"fp32\"", 1},
        {"[compile]\nenable = false\ncomponents = [\"loss\"]\n", "\"loss\":\t\"fp32\"", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fresh_dir();
        char text[1024];
        snprintf(text, sizeof text, "%s%s", TT, cases[i].compile);
        put("t.toml", text, strlen(text));
        char *out, *err;
        int rc = estimate(ARGS(MG_MODEL, "--fsdp-config", "t.toml", "--format", "json"), &out, &err);
        cr_expect_eq(rc, 0, "%s", err);
        cr_expect(strstr(out, cases[i].loss), "case %zu: want %s", i, cases[i].loss);
        cr_expect_eq(strstr(err, "compile of the model's blocks is not priced") != NULL, cases[i].warns, "case %zu: %s", i, err);
        drop_dir(out, err);
    }
    bad("t.toml", S(TT "[compile]\nenable = true\ncomponents = \"loss\"\n"), ARGS(MG_MODEL, "--fsdp-config", "t.toml"),
        ARGS("$.compile.components", "expected a list of names"));
    bad("t.toml", S(TT "[compile]\nenable = true\ncomponents = [\"los\"]\n"), ARGS(MG_MODEL, "--fsdp-config", "t.toml"),
        ARGS("$.compile.components", "\"los\": expected \"model\" or \"loss\""));
    bad("t.toml", S(TT "[compile]\nenable = true\ncomponents = [\"loss\", 3]\n"), ARGS(MG_MODEL, "--fsdp-config", "t.toml"),
        ARGS("$.compile.components", "expected a list of names"));
    /* a wrong type is wrong whether or not compile is on (the config parser types it) */
    bad("t.toml", S(TT "[compile]\nenable = false\ncomponents = 7\n"), ARGS(MG_MODEL, "--fsdp-config", "t.toml"),
        ARGS("$.compile.components", "expected a list of names"));
    bad("t.toml", S(TT "[compile]\nenable = true\nbackend = 5\n"), ARGS(MG_MODEL, "--fsdp-config", "t.toml"),
        ARGS("$.compile.backend"));
    /* the loss comes from the file */
    bad("t.toml", S(TT), ARGS(MG_MODEL, "--fsdp-config", "t.toml", "--loss", "fused"), ARGS("--loss", "comes from the file"));
    /* another backend than Inductor fuses nothing: the eager loss, and a warning */
    fresh_dir();
    put("t.toml", S(TT "[compile]\nenable = true\nbackend = \"aot_eager\"\n"));
    char *out, *err;
    cr_expect_eq(estimate(ARGS(MG_MODEL, "--fsdp-config", "t.toml", "--format", "json"), &out, &err), 0, "%s", err);
    cr_expect(strstr(out, "\"loss\":\t\"fp32\"") && strstr(err, "$.compile.backend"), "%s", err);
    drop_dir(out, err);
}

Test(fsdp_config, torchtitan_bad)
{
    bad("t.toml", S(TT "[parallelism]\ntensor_paralel_degree = 2\n"), ARGS(MG_MODEL, "--fsdp-config", "t.toml"),
        ARGS("$.parallelism.tensor_paralel_degree", "did you mean \"tensor_parallel_degree\""));
    bad("t.toml", S(TT "[parallelism\n"), ARGS(MG_MODEL, "--fsdp-config", "t.toml"), ARGS("t.toml:10:", "expected ']'"));
    bad("t.toml", S(TT "[parallelism]\ntensor_parallel_degree = \"two\"\n"), ARGS(MG_MODEL, "--fsdp-config", "t.toml"),
        ARGS("$.parallelism.tensor_parallel_degree", "expected"));
    bad("t.toml", S(TT "[parallelism]\nx = {a = 1}\n"), ARGS(MG_MODEL, "--fsdp-config", "t.toml"), ARGS("inline tables"));
    bad("t.toml", S("[model]\nname = \"llama3\"\nflavor = \"70B\"\n"), ARGS(MG_MODEL, "--fsdp-config", "t.toml"),
        ARGS("$.model.flavor", "\"70B\" contradicts llama3-8b"));
    /* torchtitan's default: selective, one block in 2 checkpointed whole */
    bad("t.toml", S("[model]\nflavor = \"8B\"\n"), ARGS(MG_MODEL, "--fsdp-config", "t.toml"),
        ARGS("$.activation_checkpoint.selective_ac_option", "absent: torchtitan's default", "not priced"));
    bad("t.toml", S("[model]\nflavor = \"8B\"\n[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"opp\"\n"),
        ARGS(MG_MODEL, "--fsdp-config", "t.toml"), ARGS("$.activation_checkpoint.selective_ac_option", "\"opp\""));
    bad("t.toml", S(TT "[parallelism]\ncontext_parallel_degree = 3\n"), ARGS(MG_MODEL, "--fsdp-config", "t.toml"),
        ARGS("data_parallel_shard_degree", "does not make the 8 GPUs"));
    /* replicas of one rank beside TP: torchtitan runs DDP, which raises */
    bad("t.toml", S(TT "[parallelism]\ndata_parallel_replicate_degree = 4\ndata_parallel_shard_degree = 1\n"
                    "tensor_parallel_degree = 2\n"), ARGS(MG_MODEL, "--fsdp-config", "t.toml"),
        ARGS("$.parallelism.data_parallel_shard_degree", "DDP has not supported > 1D parallelism"));
    /* gathered logits beside TP: not what parplan prices */
    bad("t.toml", S(TT "[parallelism]\ntensor_parallel_degree = 2\ndisable_loss_parallel = true\n"),
        ARGS(MG_MODEL, "--fsdp-config", "t.toml"), ARGS("$.parallelism.disable_loss_parallel", "loss_parallel"));
}

Test(training_args, bad)
{
    bad("t.json", S("{\"per_device_train_batchsize\": 2}"), ARGS(MG_MODEL, "--training-args", "t.json"),
        ARGS("$.per_device_train_batchsize", "did you mean \"per_device_train_batch_size\""));
    bad("t.json", S("{\"bf16\": true, \"fp16\": true}"), ARGS(MG_MODEL, "--training-args", "t.json"), ARGS("$.fp16", "At most one"));
    bad("t.json", S("{\"per_device_train_batch_size\": \"two\"}"), ARGS(MG_MODEL, "--training-args", "t.json"),
        ARGS("$.per_device_train_batch_size"));
    bad("t.json", S("{\"per_device_train_batch_size\": 1"), ARGS(MG_MODEL, "--training-args", "t.json"),
        ARGS("t.json:1:", "malformed or truncated JSON"));
    /* QLoRA in fp32 (neither bf16 nor fp16): the rule qlora-precision, worded with the keys */
    bad("t.json", S("{\"per_device_train_batch_size\": 1}"),
        ARGS("--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "1", "--training-args", "t.json", "--mode", "qlora"),
        ARGS("bf16/fp16 (precision fp32)", "[rule qlora-precision]"));
    bad("t.json", S("{\"deepspeed\": \"nope.json\"}"), ARGS(MG_MODEL, "--training-args", "t.json"), ARGS("nope.json", "cannot open"));
    bad("t.json", S("{\"gradient_checkpointing\": true, \"gradient_checkpointing_kwargs\": 1}"),
        ARGS(MG_MODEL, "--training-args", "t.json"), ARGS("$.gradient_checkpointing_kwargs", "expected an object"));
    bad("t.json", S("{\"gradient_checkpointing\": true, \"gradient_checkpointing_kwargs\": {\"use_reentrant\": \"no\"}}"),
        ARGS(MG_MODEL, "--training-args", "t.json"), ARGS("$.gradient_checkpointing_kwargs.use_reentrant"));
}

/* parplan prices the reentrant checkpoint (the whole forward again) and
 * writes use_reentrant true; a non-reentrant one, or torchtitan's early
 * stop, is read with a warning naming the key */
Test(training_args, checkpoint_kwargs_and_early_stop)
{
    fresh_dir();
    put("t.json", S("{\"gradient_checkpointing\": true, \"gradient_checkpointing_kwargs\": {\"use_reentrant\": false}}"));
    char *out, *err;
    cr_expect_eq(estimate(ARGS(MG_MODEL, "--training-args", "t.json"), &out, &err), 0, "%s", err);
    cr_expect(strstr(err, "use_reentrant false: priced as the reentrant checkpoint"), "%s", err);
    drop_dir(out, err);
    fresh_dir();
    put("t.toml", S(TT "early_stop = true\n")); /* TT ends in [activation_checkpoint] */
    cr_expect_eq(estimate(ARGS(MG_MODEL, "--fsdp-config", "t.toml"), &out, &err), 0, "%s", err);
    cr_expect(strstr(err, "$.activation_checkpoint.early_stop") && strstr(err, "priced without it"), "%s", err);
    drop_dir(out, err);
    /* float8 with block modules kept in BF16: priced as FP8, and said so;
     * the output layer alone filtered is what parplan prices and writes */
    fresh_dir();
    put("t.toml", S("[model]\nname = \"llama3\"\nflavor = \"8B\"\nconverters = [\"quantize.linear.float8\"]\n"
                    "[training]\nlocal_batch_size = 1\nglobal_batch_size = 64\nseq_len = 8192\n"
                    "[activation_checkpoint]\nmode = \"full\"\n[quantize.linear.float8]\nfilter_fqns = [\"output\", \"layers.0.attention.wq\"]\n"));
    cr_expect_eq(estimate(ARGS(MG_MODEL, "--fsdp-config", "t.toml"), &out, &err), 0, "%s", err);
    cr_expect(strstr(err, "$.quantize.linear.float8.filter_fqns: the block modules"), "%s", err);
    /* eager float8: torchao's casts are priced as Inductor fuses them */
    cr_expect(strstr(err, "float8 without compiling the model"), "%s", err);
    drop_dir(out, err);
    /* what an fp8 torchtitan plan writes: the compiled model */
    fresh_dir();
    cr_expect_eq(estimate(ARGS(MG_MODEL, "--framework", "fsdp", "--pp", "2", "--dp", "4", "--zero", "2", "--precision",
                               "fp8", "--global-batch", "64"), &out, &err), 0, "%s", err);
    char *tt = emitted("torchtitan.toml");
    cr_expect(strstr(tt, "[compile]\nenable = true\ncomponents = [\"model\""), "%s", tt);
    cr_expect(strstr(tt, "[quantize.linear.float8]\nfilter_fqns = [\"output\"]"), "the head as priced, bf16: %s", tt);
    free(tt);
    drop_dir(out, err);
    /* what the HF Trainer plan writes: the reentrant checkpoint it is priced with */
    fresh_dir();
    cr_expect_eq(estimate(ARGS(MG_MODEL, "--framework", "pytorch", "--recompute", "full", "--global-batch", "64"), &out, &err),
                 0, "%s", err);
    char *ta = emitted("training_args.json");
    cr_expect(strstr(ta, "\"gradient_checkpointing_kwargs\"") && strstr(ta, "\"use_reentrant\":  true"), "%s", ta);
    free(ta);
    drop_dir(out, err);
}

/* ------------------------------------------------------------ the pieces */

Test(shell_words, quotes_continuations_arrays)
{
    static const char t[] = "# comment\nX=1 A=( --a 'b c' \\\n  \"d\\\"e\" --f=g # tail\n )\nexport Y=2\n";
    pp__words w;
    pp_error err = {""};
    cr_assert_eq(pp__shell_words(t, sizeof t - 1, "t", &w, &err), PP_OK, "%s", err.msg);
    const char *want[] = {"X=1", "--a", "b c", "d\"e", "--f=g", "export", "Y=2"};
    cr_assert_eq(w.n, 7);
    for (int i = 0; i < 7; i++) cr_expect_str_eq(pp__word_text(&w, i), want[i]);
    cr_expect(!w.word[0].in_array && w.word[1].in_array && w.word[4].in_array && !w.word[5].in_array);
    cr_expect_eq(w.word[3].line, 3);
    cr_expect_eq(w.arrays, 1);
    pp__words_free(&w);
    static const char u[] = "A=( --a 'b\n";
    cr_expect_eq(pp__shell_words(u, sizeof u - 1, "u", &w, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "u:1: unterminated single quote"), "%s", err.msg);
    pp__words_free(&w);
    /* a launcher line beside the arrays is skipped, not an error */
    static const char v[] = "A=( --a 1 )\ntorchrun x.py \"${A[@]}\"\n";
    cr_expect_eq(pp__shell_words(v, sizeof v - 1, "v", &w, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(w.skipped_line, 2);
    pp__words_free(&w);
}

Test(toml_tree, subset)
{
    static const char t[] = "# c\n[a]\nx = 1_000 # n\ny = -2.5e3\nz = 'lit\\'\n[a.b]\nl = [[\"p\", 'q'],\n  [], ]\nt = true\n"
                            "\"q k\".d = \"\\u00e9\\n\"\n";
    pp_error err = {""};
    pp_status st;
    cJSON *r = pp__toml_parse(t, sizeof t - 1, "t", &err, &st);
    cr_assert(r, "%s", err.msg);
    char *j = cJSON_PrintUnformatted(r);
    cr_expect_str_eq(j, "{\"a\":{\"x\":1000,\"y\":-2500,\"z\":\"lit\\\\\",\"b\":{\"l\":[[\"p\",\"q\"],[]],\"t\":true,"
                        "\"q k\":{\"d\":\"é\\n\"}}}}");
    free(j);
    cJSON_Delete(r);
    static const struct { const char *text, *want; } bad_toml[] = {
        {"a = 1\na = 2\n", "t:2:5: key 'a' defined twice"}, {"[a]\n[a]\n", "table [a] defined twice"},
        {"a = 0x10\n", "hexadecimal"}, {"a = inf\n", "inf and nan"}, {"a = \"\"\"x\"\"\"\n", "multi-line strings"},
        {"[[a]]\n", "arrays of tables"}, {"a = 1 2\n", "after the value"}, {"a = [1,\n", "expected"},
        {"a = 1979-05-27\n", "dates and times are not read"}, {"a.b = 1\na = 2\n", "defined twice"}, {"a = 1\na.b = 2\n", "is a value"},
    };
    for (size_t i = 0; i < sizeof bad_toml / sizeof *bad_toml; i++) {
        cJSON *b = pp__toml_parse(bad_toml[i].text, strlen(bad_toml[i].text), "t", &err, &st);
        cr_expect(!b && st == PP_ERR_INPUT && strstr(err.msg, bad_toml[i].want), "%s: %s", bad_toml[i].text, err.msg);
        cJSON_Delete(b);
    }
}

Test(yaml_tree, pyyaml_typing)
{
    static const char t[] = "a: no\nb: 'no'\nc: 8\nd: 1.5\ne: ~\nf: 1e5\ng: [x, 010]\nh:\n  i: On\n";
    pp_error err = {""};
    pp_status st;
    cJSON *r = pp__yaml_parse(t, sizeof t - 1, "y", &err, &st);
    cr_assert(r, "%s", err.msg);
    char *j = cJSON_PrintUnformatted(r);
    cr_expect_str_eq(j, "{\"a\":false,\"b\":\"no\",\"c\":8,\"d\":1.5,\"e\":null,\"f\":\"1e5\",\"g\":[\"x\",\"010\"],"
                        "\"h\":{\"i\":true}}");
    free(j);
    cJSON_Delete(r);
    static const struct { const char *text, *want; } bad_yaml[] = {
        {"a: 1\na: 2\n", "y:2:1: key given twice"}, {"a: &x 1\nb: *x\n", "anchors"}, {"a: 1\n---\nb: 2\n", "second document"},
        {"? [a]\n: 1\n", "a key that is not text"}, {"- 1\n- 2\n", "expected a mapping"}, {"a: [1\n", "malformed"},
        {"a: !!str 1\n", "tags"},
    };
    for (size_t i = 0; i < sizeof bad_yaml / sizeof *bad_yaml; i++) {
        cJSON *b = pp__yaml_parse(bad_yaml[i].text, strlen(bad_yaml[i].text), "y", &err, &st);
        cr_expect(!b && st == PP_ERR_INPUT && strstr(err.msg, bad_yaml[i].want), "%s: %s", bad_yaml[i].text, err.msg);
        cJSON_Delete(b);
    }
}

Test(megatron_flags, table_sorted_and_flavored)
{
    cr_expect(pp__megatron_flags_sorted(), "configs/megatron_flags.inc must stay sorted (bsearch)");
    int ar, lm, mds;
    cr_expect(pp__megatron_flag_known("--tensor-model-parallel-size", &ar, &lm, &mds) && ar == 1 && lm && mds);
    cr_expect(pp__megatron_flag_known("--use-distributed-optimizer", &ar, &lm, &mds) && ar == 0);
    cr_expect(pp__megatron_flag_known("--zero-stage", &ar, &lm, &mds) && !lm && mds);
    cr_expect(pp__megatron_flag_known("--context-parallel-size", &ar, &lm, &mds) && lm && !mds);
    cr_expect(pp__megatron_flag_known("--cp-comm-type", &ar, &lm, &mds) && ar == -1);
    cr_expect(!pp__megatron_flag_known("--tensor-parallel-size", NULL, NULL, NULL));
}

/* The activations column of a Megatron file's estimate, GiB. */
static double file_act_gib(const char *text, size_t len) { return file_column_gib(text, len, 3); }

/* --recompute-modules under selective recompute: mlp reads as priced (less
 * activation memory than core_attn alone, the default, which reads the same
 * as no list); Megatron's other modules are refused as not priced, unknown
 * names as Megatron asserts, mla_up_proj on a model without MLA by the rule. */
#define MG_SEL "  --recompute-granularity selective\n"
Test(megatron_args, recompute_modules_read)
{
    double a0 = file_act_gib(S(MG_HEAD MG_SEL ")\n")), a1 = file_act_gib(S(MG_HEAD MG_SEL "  --recompute-modules core_attn\n)\n"));
    double a2 = file_act_gib(S(MG_HEAD MG_SEL "  --recompute-modules core_attn mlp\n)\n"));
    cr_expect(a0 == a1, "core_attn is the default: %.2f vs %.2f GiB", a0, a1);
    cr_expect(a2 < a0 * 0.5 && a2 > 0, "mlp: %.2f GiB, core_attn %.2f GiB", a2, a0);
    bad("a.sh", S(MG_HEAD MG_SEL "  --recompute-modules moe\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "--recompute-modules moe: not priced"));
    bad("a.sh", S(MG_HEAD MG_SEL "  --recompute-modules attn\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "--recompute-modules 'attn': expected one of core_attn, mlp"));
    /* Megatron takes each value whole: "core_attn,mlp" is one invalid name */
    bad("a.sh", S(MG_HEAD MG_SEL "  --recompute-modules core_attn,mlp\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("a.sh:", "--recompute-modules 'core_attn,mlp': expected one of core_attn"));
    bad("a.sh", S(MG_HEAD MG_SEL "  --recompute-modules mla_up_proj\n)\n"), ARGS(MG_MODEL, "--megatron-args", "a.sh"),
        ARGS("mla_up_proj needs multi-latent attention", "[rule fw-recompute-modules]"));
}

/* moe_act recompute: the emitted Mixtral file carries --moe-grouped-gemm
 * and reads back; without it Megatron asserts, and so does the reader. */
Test(megatron_args, moe_act_needs_the_grouped_gemm)
{
    fresh_dir();
    char *out, *err;
    int rc = estimate(ARGS("--model", "mixtral-8x7b", "--cluster", "dgx-h100", "--gpus", "8", "--framework", "megatron",
                           "--ep", "8", "--dp", "8", "--recompute", "selective", "--recompute-modules", "moe_act,layernorm"),
                      &out, &err);
    cr_assert_eq(rc, 0, "%s", err);
    free(out);
    free(err);
    char *t = emitted("megatron_args.sh"), p[512];
    cr_assert(strstr(t, "  --moe-grouped-gemm\n") && strstr(t, "  --recompute-modules moe_act layernorm\n"), "%s", t);
    put("a.sh", t, strlen(t));
    snprintf(p, sizeof p, "rm -rf '%s/emitted'", dir);
    cr_assert(system(p) == 0);
    const char *const mx[] = {"--model", "mixtral-8x7b", "--cluster", "dgx-h100", "--gpus", "8", "--megatron-args", "a.sh", NULL};
    rc = estimate(mx, &out, &err);
    cr_expect_eq(rc, 0, "the emitted file reads back: %s", err);
    free(out);
    free(err);
    char *g = strstr(t, "  --moe-grouped-gemm\n");
    memmove(g, g + strlen("  --moe-grouped-gemm\n"), strlen(g + strlen("  --moe-grouped-gemm\n")) + 1);
    put("a.sh", t, strlen(t));
    cr_assert(system(p) == 0);
    rc = estimate(mx, &out, &err);
    cr_expect_eq(rc, 2, "%s", err);
    cr_expect(strstr(err, "a.sh:") && strstr(err, "moe_act without --moe-grouped-gemm"), "%s", err);
    free(t);
    drop_dir(out, err);
}

/* An emitted file's text into a fresh folder as t.json, to be read back
 * (frees the text and the last run's captures). */
static void restage(char *ta, char *out, char *err)
{
    drop_dir(out, err);
    fresh_dir();
    put("t.json", ta, strlen(ta));
    free(ta);
}

/* LoRA and QLoRA launch under TRL's `trl sft --config training_args.json`
 * (red team rt7: the README pointed at run_clm.py, which trains the whole
 * model, and TRL loads the base in float32 and cuts sequences to 1024 unless
 * told). The file carries the adapter, the 4-bit base, dtype and max_length;
 * it is YAML too (no tabs, exponents with a point); reading back a file with
 * TRL's defaults is refused, naming the key. */
Test(training_args, lora_and_qlora_launch_under_trl_as_priced)
{
    char *out, *err;
    const char *modes[] = {"lora", "qlora"};
    for (int k = 0; k < 2; k++) {
        fresh_dir();
        cr_expect_eq(estimate(ARGS("--model", "llama3-8b", "--cluster", "l40s-8x-eth", "--gpus", "1", "--mode", modes[k],
                                   "--seq", "2048", "--global-batch", "4", "--lr", "3e-5"), &out, &err), 0, "%s", err);
        char *ta = emitted("training_args.json");
        cr_expect(strstr(ta, "\"use_peft\":  true") && strstr(ta, "\"lora_r\":  16") && strstr(ta, "\"dtype\":  \"bfloat16\"") &&
                      strstr(ta, "\"max_length\":  2048") && strstr(ta, "\"lora_target_modules\":  [\"q_proj\", \"v_proj\"]"),
                  "%s", ta);
        cr_expect((strstr(ta, "\"load_in_4bit\":  true") != NULL) == (k == 1), "%s", ta);
        cr_expect(!strchr(ta, '\t') && strstr(ta, "3.0e-05"), "YAML 1.1 reads it as written: %s", ta);
        char *rd = emitted("README.txt");
        cr_expect(strstr(rd, "trl sft --config training_args.json") && !strstr(rd, "run_clm"), "%s", rd);
        free(rd);
        /* TRL's defaults where the keys are absent */
        char *cut = strstr(ta, "  \"dtype\"");
        cr_assert(cut);
        memmove(cut, strchr(cut, '\n') + 1, strlen(strchr(cut, '\n') + 1) + 1);
        restage(ta, out, err);
        cr_expect_eq(estimate(ARGS("--model", "llama3-8b", "--cluster", "l40s-8x-eth", "--gpus", "1", "--mode", modes[k],
                                   "--seq", "2048", "--training-args", "t.json"), &out, &err), 2, "%s", err);
        cr_expect(strstr(err, "t.json: dtype absent (TRL's default float32)"), "%s", err);
        drop_dir(out, err);
    }
}

/* A full fine-tune's training_args.json names run_clm.py's block_size, the
 * sequence priced (its default is the tokenizer's limit capped at 1024; red
 * team rt7), and reading it back against another --seq is refused. */
Test(training_args, full_mode_carries_the_sequence_length)
{
    char *out, *err;
    fresh_dir();
    cr_expect_eq(estimate(ARGS("--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "8", "--framework", "pytorch",
                               "--seq", "2048", "--global-batch", "8", "--recompute", "full"), &out, &err), 0, "%s", err);
    char *ta = emitted("training_args.json");
    cr_expect(strstr(ta, "\"block_size\":  2048"), "%s", ta);
    restage(ta, out, err);
    cr_expect_eq(estimate(ARGS("--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "8", "--seq", "4096",
                               "--training-args", "t.json"), &out, &err), 2, "%s", err);
    cr_expect(strstr(err, "t.json: block_size 2048"), "%s", err);
    drop_dir(out, err);
}

/* DeepSpeed's runner as the README launches it (red team rt9): several
 * nodes each with --hostfile --no_ssh --node_rank (not "deepspeed
 * --num_nodes N" on each, which refuses without a hostfile and starts N jobs
 * with one); the HF Trainer's lone JSON argument behind --no_local_rank. */
Test(training_args, deepspeed_launch_lines_run_as_written)
{
    char *out, *err;
    fresh_dir();
    cr_expect_eq(estimate(ARGS("--model", "llama3-8b", "--cluster", "dgx-h100", "--nodes", "2", "--framework", "deepspeed",
                               "--zero", "1", "--global-batch", "64", "--seq", "2048"), &out, &err), 0, "%s", err);
    char *rd = emitted("README.txt");
    cr_expect(strstr(rd, "deepspeed --hostfile hostfile --no_ssh --node_rank $NODE_RANK --master_addr $MASTER_ADDR") &&
                  strstr(rd, "--no_local_rank train.py training_args.json") && strstr(rd, "slots=8"),
              "%s", rd);
    free(rd);
    drop_dir(out, err);
}

/* DeepSpeed keys read back that the estimate does not price are said (red
 * team rt9): pageable offload copies, a non-contiguous gradient layout. */
Test(training_args, deepspeed_unpriced_keys_warn)
{
    char *out, *err;
    fresh_dir();
    static const char ds[] = "{\"train_batch_size\": 8, \"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
                             " \"zero_optimization\": {\"stage\": 3, \"contiguous_gradients\": false, "
                             "\"offload_optimizer\": {\"device\": \"cpu\", \"pin_memory\": false}}}";
    put("ds.json", ds, sizeof ds - 1);
    cr_expect_eq(estimate(ARGS("--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "8", "--deepspeed", "ds.json"),
                          &out, &err), 0, "%s", err);
    cr_expect(strstr(err, "contiguous_gradients") && strstr(err, "pin_memory") && strstr(err, "not priced"), "%s", err);
    drop_dir(out, err);
}

/* A fused-QKV model's LoRA on q and v is one adapter on query_key_value:
 * TRL's ModelConfig turns a one-name list into a regex string that matches
 * no module path, so the name is written twice, and reading the file back
 * takes query_key_value for the q, v priced (review). */
Test(training_args, fused_qkv_lora_launches_and_reads_back)
{
    char *out, *err;
    fresh_dir();
    cr_expect_eq(estimate(ARGS("--model", "gpt-neox-20b", "--cluster", "dgx-h100", "--gpus", "8", "--mode", "lora",
                               "--framework", "pytorch", "--seq", "2048", "--global-batch", "8"), &out, &err), 0, "%s", err);
    char *ta = emitted("training_args.json");
    cr_expect(strstr(ta, "\"lora_target_modules\":  [\"query_key_value\", \"query_key_value\"]"), "%s", ta);
    restage(ta, out, err);
    cr_expect_eq(estimate(ARGS("--model", "gpt-neox-20b", "--cluster", "dgx-h100", "--gpus", "8", "--mode", "lora",
                               "--seq", "2048", "--training-args", "t.json"), &out, &err), 0, "%s", err);
    drop_dir(out, err);
}

/* Megatron refuses the balancing bias with softmax scores
 * (transformer_config.py): a model that asks for it is refused. */
Test(training_args, model_expert_bias_needs_sigmoid)
{
    char *out, *err;
    fresh_dir();
    static const char mj[] = "{\"name\": \"x\", \"layers\": 2, \"hidden\": 512, \"heads\": 8, \"ffn\": 1024, \"vocab\": 1000, "
                             "\"seq\": 512, \"gated_mlp\": true, \"activation\": \"silu\", \"tied_embeddings\": false, "
                             "\"norm\": \"rmsnorm\", \"position\": \"rope\", "
                             "\"moe\": {\"experts\": 8, \"topk\": 2, \"expert_ffn\": 256, \"expert_bias\": true}}";
    put("m.json", mj, sizeof mj - 1);
    cr_expect_eq(estimate(ARGS("--model", "m.json", "--cluster", "dgx-h100", "--gpus", "8"), &out, &err), 2, "%s", err);
    cr_expect(strstr(err, "m.json") && strstr(err, "expert_bias") && strstr(err, "sigmoid"), "%s", err);
    drop_dir(out, err);
}

/* The optimizer's betas and the floor of the decay reach every FSDP
 * launcher (red team rt11: torchtitan's TOML dropped both, the Trainer's
 * file the floor): torchtitan v0.2.2 Optimizer beta1/beta2 and LRScheduler
 * min_lr_factor (lr x factor); transformers' warmup_stable_decay with no
 * stable phase and a linear decay to min_lr_ratio. */
Test(fsdp_files, betas_and_min_lr_are_written)
{
    const char *tt[] = {"fp8", "bf16"}; /* fp8 needs torchtitan; bf16 goes through Accelerate */
    for (int k = 0; k < 2; k++) {
        fresh_dir();
        char *out, *err;
        int rc = estimate(ARGS("--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "8", "--framework", "fsdp",
                               "--zero", "3", "--precision", tt[k], "--global-batch", "64", "--seq", "4096",
                               "--adam-betas", "0.9,0.999", "--min-lr", "3e-5"),
                          &out, &err);
        cr_assert_eq(rc, 0, "%s", err);
        if (k == 0) {
            char *t = emitted("torchtitan.toml");
            cr_expect(strstr(t, "\nbeta1 = 0.9\nbeta2 = 0.999\n") && strstr(t, "\nmin_lr_factor = 0.1\n"), "%s", t);
            free(t);
        } else {
            char *t = emitted("training_args.json");
            cr_expect(strstr(t, "\"adam_beta2\":  0.999") && strstr(t, "\"warmup_stable_decay\"") &&
                      strstr(t, "\"min_lr_ratio\":  0.1") && strstr(t, "\"decay_type\":  \"linear\""), "%s", t);
            free(t);
        }
        drop_dir(out, err);
    }
}
