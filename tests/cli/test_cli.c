/*
 * test_cli.c — black-box tests of the built `parplan` binary (PARPLAN_CLI):
 * every bad input of every reader and of the flags exits 2 with one line on
 * stderr naming the file, the JSON path or option and what was expected, and
 * nothing on stdout; help and version exit 0; every preset shows, as a table
 * and as JSON that parses; every key of the JSON outputs is in docs/schema.md.
 * Inputs are written to a fresh temporary folder per test (docs/errors.md).
 */
#define _GNU_SOURCE /* nftw */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ARGV 256
#define SCHEMA_DOC PARPLAN_SOURCE_DIR "/docs/schema.md"
#define HF_LLAMA PARPLAN_SOURCE_DIR "/tests/data/hf/Meta-Llama-3-8B.json"

/* ------------------------------------------------------------ running */

typedef struct run {
    int code;        /* exit status, or -1 when killed */
    int sig;         /* the signal that killed it, else 0 */
    char *out, *err; /* NUL-terminated captures */
    size_t out_len, err_len;
    char cmd[1024];  /* the command line, for messages */
} run;

static char tmpdir[256]; /* this test's folder under $TMPDIR or /tmp */

static void tmp_path(char *buf, const char *name)
{
    int n = snprintf(buf, PATH_MAX, "%s/%s", tmpdir, name);
    cr_assert(n > 0 && n < PATH_MAX, "path too long");
}

static char *slurp_fd(int fd, size_t *len)
{
    struct stat st;
    cr_assert(fstat(fd, &st) == 0);
    char *buf = malloc((size_t)st.st_size + 1);
    cr_assert(buf);
    ssize_t n = pread(fd, buf, (size_t)st.st_size, 0);
    cr_assert(n == st.st_size, "short read of a capture");
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

/* Runs PARPLAN_CLI with argv[0..] (NULL-terminated), stdin from /dev/null,
 * stdout and stderr captured; the child is killed after 60 s. */
static run cliv(const char *const *args)
{
    run r = {0};
    const char *argv[MAX_ARGV + 2] = {PARPLAN_CLI};
    size_t used = (size_t)snprintf(r.cmd, sizeof r.cmd, "parplan");
    int n = 0;
    for (; args[n]; n++) {
        cr_assert(n < MAX_ARGV);
        argv[n + 1] = args[n];
        if (used < sizeof r.cmd) used += (size_t)snprintf(r.cmd + used, sizeof r.cmd - used, " %.200s", args[n]);
    }
    argv[n + 1] = NULL;
    char po[PATH_MAX], pe[PATH_MAX];
    tmp_path(po, ".stdout");
    tmp_path(pe, ".stderr");
    int fo = open(po, O_RDWR | O_CREAT | O_TRUNC, 0600), fe = open(pe, O_RDWR | O_CREAT | O_TRUNC, 0600);
    cr_assert(fo >= 0 && fe >= 0, "cannot create capture files in %s", tmpdir);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork failed");
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        if (in < 0 || dup2(in, 0) < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(126);
        alarm(60);
        execv(PARPLAN_CLI, (char *const *)argv);
        _exit(127);
    }
    int status;
    cr_assert(waitpid(pid, &status, 0) == pid);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    r.out = slurp_fd(fo, &r.out_len);
    r.err = slurp_fd(fe, &r.err_len);
    close(fo);
    close(fe);
    cr_assert(r.code != 127 && r.code != 126, "could not run %s", PARPLAN_CLI);
    return r;
}

static run cli(const char *first, ...)
{
    const char *args[MAX_ARGV + 1];
    int n = 0;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *)) {
        cr_assert(n < MAX_ARGV);
        args[n++] = a;
    }
    va_end(ap);
    args[n] = NULL;
    return cliv(args);
}

static void run_free(run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

static int count_char(const char *s, char c)
{
    int n = 0;
    for (; *s; s++) n += *s == c;
    return n;
}

/* Bad input: exit 2, nothing on stdout, one line on stderr holding every
 * needle (NULL-terminated). Frees r. */
static void expect_bad_v(run *r, va_list ap)
{
    cr_expect_eq(r->sig, 0, "%s: killed by signal %d; stderr: %s", r->cmd, r->sig, r->err);
    cr_expect_eq(r->code, 2, "%s: exit %d, want 2; stderr: %s", r->cmd, r->code, r->err);
    cr_expect_eq(r->out_len, 0, "%s: stdout not empty: %.300s", r->cmd, r->out);
    cr_expect(r->err_len > 0 && r->err[r->err_len - 1] == '\n' && count_char(r->err, '\n') == 1,
              "%s: stderr is not one line: [%s]", r->cmd, r->err);
    for (const char *needle = va_arg(ap, const char *); needle; needle = va_arg(ap, const char *))
        cr_expect(strstr(r->err, needle) != NULL, "%s: stderr lacks \"%s\": %s", r->cmd, needle, r->err);
    run_free(r);
}

static void expect_bad_fn(run r, ...)
{
    va_list ap;
    va_start(ap, r);
    expect_bad_v(&r, ap);
    va_end(ap);
}

#define expect_bad(...) expect_bad_fn(__VA_ARGS__, NULL)

/* Success: exit 0, stderr empty, stdout not empty. Returns r to inspect. */
static run expect_ok(run r)
{
    cr_expect_eq(r.sig, 0, "%s: killed by signal %d", r.cmd, r.sig);
    cr_expect_eq(r.code, 0, "%s: exit %d, want 0; stderr: %s", r.cmd, r.code, r.err);
    cr_expect_eq(r.err_len, 0, "%s: stderr not empty: %s", r.cmd, r.err);
    cr_expect(r.out_len > 0, "%s: stdout empty", r.cmd);
    return r;
}

/* ------------------------------------------------------------ files */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void setup(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/parplan-cli-XXXXXX", base && *base ? base : "/tmp");
    cr_assert(mkdtemp(tmpdir), "mkdtemp %s failed", tmpdir);
}

static void teardown(void)
{
    if (tmpdir[0]) nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes len bytes to tmpdir/name and puts the path in path. */
static void write_bytes(char *path, const char *name, const void *data, size_t len)
{
    tmp_path(path, name);
    FILE *f = fopen(path, "wb");
    cr_assert(f, "cannot write %s", path);
    cr_assert(fwrite(data, 1, len, f) == len);
    cr_assert(fclose(f) == 0);
}

static void write_text(char *path, const char *name, const char *text) { write_bytes(path, name, text, strlen(text)); }

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    cr_assert(fseek(f, 0, SEEK_END) == 0);
    long n = ftell(f);
    cr_assert(n >= 0 && fseek(f, 0, SEEK_SET) == 0);
    char *buf = malloc((size_t)n + 1);
    cr_assert(buf);
    cr_assert(fread(buf, 1, (size_t)n, f) == (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* A copy of text with the only occurrence of from replaced by to. */
static char *subst(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    cr_assert(at, "fixture lacks \"%s\"", from);
    cr_assert(!strstr(at + 1, from), "fixture has \"%s\" twice", from);
    size_t pre = (size_t)(at - text), fl = strlen(from), tl = strlen(to), rest = strlen(at + fl);
    char *out = malloc(pre + tl + rest + 1);
    cr_assert(out);
    memcpy(out, text, pre);
    memcpy(out + pre, to, tl);
    memcpy(out + pre + tl, at + fl, rest + 1);
    return out;
}

/* ------------------------------------------------------------ fixtures */

/* A valid native model (Llama 3 8B's shape). */
static const char NATIVE[] =
    "{\"name\": \"t8b\", \"layers\": 32, \"hidden\": 4096, \"heads\": 32, \"kv_heads\": 8,\n"
    " \"ffn\": 14336, \"gated_mlp\": true, \"activation\": \"silu\", \"vocab\": 128256, \"seq\": 8192,\n"
    " \"tied_embeddings\": false, \"norm\": \"rmsnorm\", \"position\": \"rope\"}\n";

/* A valid cluster (one DGX H100). */
static const char CLUSTER[] =
    "{\"name\": \"c8\", \"gpu\": \"h100-sxm\", \"nodes\": 1, \"gpus_per_node\": 8,\n"
    " \"intra\": {\"kind\": \"nvlink\", \"gbytes_per_s_bidir\": 900, \"latency_us\": 3.4},\n"
    " \"inter\": {\"kind\": \"infiniband\", \"nics\": 8, \"nic_gbit_s\": 400, \"latency_us\": 5},\n"
    " \"pcie\": {\"gen\": 5}, \"host_mem_gib\": 2048}\n";

typedef enum kind { NATIVE_MODEL, HF_MODEL, CLUSTER_FILE } kind;

static char *base_text(kind k)
{
    if (k == HF_MODEL) return read_file(HF_LLAMA);
    return strdup(k == NATIVE_MODEL ? NATIVE : CLUSTER);
}

/* Runs the reader of kind k on the file both ways it is reached: `model
 * show` / `cluster show`, and `estimate --model` / `--cluster`; each must
 * be bad input with the needles (NULL-terminated). */
static void expect_file_bad(kind k, const char *path, ...)
{
    run r[2];
    if (k == CLUSTER_FILE) {
        r[0] = cli("cluster", "show", path, NULL);
        r[1] = cli("estimate", "--model", "llama3-8b", "--cluster", path, NULL);
    } else {
        r[0] = cli("model", "show", path, "--format", "json", NULL);
        r[1] = cli("estimate", "--model", path, "--cluster", "dgx-h100", NULL);
    }
    for (int i = 0; i < 2; i++) {
        va_list ap;
        va_start(ap, path);
        expect_bad_v(&r[i], ap);
        va_end(ap);
    }
}

/* Writes the base text of kind k with `from` replaced by `to` and checks
 * the reader rejects it with the needles. */
#define MUTANT_BAD(k, from, to, ...)                                    \
    do {                                                                \
        char *base_ = base_text(k), *text_ = subst(base_, from, to);    \
        char path_[PATH_MAX];                                           \
        write_text(path_, "input.json", text_);                         \
        expect_file_bad(k, path_, path_, __VA_ARGS__, NULL);            \
        free(text_);                                                    \
        free(base_);                                                    \
    } while (0)

TestSuite(cli_model, .init = setup, .fini = teardown);
TestSuite(cli_hf, .init = setup, .fini = teardown);
TestSuite(cli_cluster, .init = setup, .fini = teardown);
TestSuite(cli_file, .init = setup, .fini = teardown);
TestSuite(cli_estimate, .init = setup, .fini = teardown);
TestSuite(cli_help, .init = setup, .fini = teardown);
TestSuite(cli_presets, .init = setup, .fini = teardown);

/* The fixtures themselves are accepted: each failure below is the mutation. */
Test(cli_file, fixtures_are_valid)
{
    char p[PATH_MAX];
    write_text(p, "native.json", NATIVE);
    run r = expect_ok(cli("model", "show", p, NULL));
    cr_expect(strstr(r.out, "t8b"), "%s", r.out);
    run_free(&r);
    r = expect_ok(cli("model", "show", HF_LLAMA, NULL));
    run_free(&r);
    write_text(p, "cluster.json", CLUSTER);
    r = expect_ok(cli("cluster", "show", p, NULL));
    run_free(&r);
    r = expect_ok(cli("estimate", "--model", HF_LLAMA, "--cluster", p, NULL));
    run_free(&r);
}

/* ------------------------------------------------------------ native model */

Test(cli_model, malformed) { MUTANT_BAD(NATIVE_MODEL, "\"layers\": 32", "\"layers\" 32", ":1:", "malformed", "expected"); }
Test(cli_model, truncated)
{
    char p[PATH_MAX];
    write_bytes(p, "t.json", NATIVE, sizeof NATIVE / 2);
    expect_file_bad(NATIVE_MODEL, p, p, "truncated JSON", "expected a complete JSON object", NULL);
}
Test(cli_model, wrong_type) { MUTANT_BAD(NATIVE_MODEL, "\"layers\": 32", "\"layers\": \"32\"", "$.layers", "expected an integer", "got a string"); }
Test(cli_model, wrong_type_bool) { MUTANT_BAD(NATIVE_MODEL, "\"gated_mlp\": true", "\"gated_mlp\": 1", "$.gated_mlp", "expected true or false"); }
Test(cli_model, wrong_type_enum) { MUTANT_BAD(NATIVE_MODEL, "\"norm\": \"rmsnorm\"", "\"norm\": \"rmsnrm\"", "$.norm", "expected one of layernorm|rmsnorm", "did you mean \"rmsnorm\""); }
Test(cli_model, wrong_type_object) { MUTANT_BAD(NATIVE_MODEL, "\"name\": \"t8b\",", "\"name\": \"t8b\", \"moe\": [8],", "$.moe", "expected a JSON object"); }
Test(cli_model, fraction_for_integer) { MUTANT_BAD(NATIVE_MODEL, "\"layers\": 32", "\"layers\": 32.5", "$.layers", "expected an integer", "32.5"); }
Test(cli_model, top_level_array)
{
    char p[PATH_MAX];
    write_text(p, "a.json", "[1, 2]");
    expect_file_bad(NATIVE_MODEL, p, p, "$", "expected a JSON object at the top level", NULL);
}
Test(cli_model, missing_field) { MUTANT_BAD(NATIVE_MODEL, "\"hidden\": 4096, ", "", "$.hidden", "missing required field"); }
Test(cli_model, missing_moe_field) { MUTANT_BAD(NATIVE_MODEL, "\"name\": \"t8b\",", "\"name\": \"t8b\", \"moe\": {\"experts\": 8, \"topk\": 2},", "$.moe.expert_ffn", "missing required field"); }
Test(cli_model, unknown_key) { MUTANT_BAD(NATIVE_MODEL, "\"hidden\": 4096", "\"hiden\": 4096", "$.hiden", "unknown key", "did you mean \"hidden\""); }
Test(cli_model, unknown_nested_key) { MUTANT_BAD(NATIVE_MODEL, "\"name\": \"t8b\",", "\"name\": \"t8b\", \"bias\": {\"qvk\": true},", "$.bias.qvk", "unknown key", "did you mean \"qkv\""); }
Test(cli_model, negative) { MUTANT_BAD(NATIVE_MODEL, "\"layers\": 32", "\"layers\": -4", "$.layers", "expected an integer in [1, 1024]", "got -4"); }
Test(cli_model, zero) { MUTANT_BAD(NATIVE_MODEL, "\"hidden\": 4096", "\"hidden\": 0", "$.hidden", "expected an integer in [1, ", "got 0"); }
Test(cli_model, infinite) { MUTANT_BAD(NATIVE_MODEL, "\"layers\": 32", "\"layers\": 1e999", "$.layers", "expected an integer in [1, 1024]", "got inf"); }
Test(cli_model, negative_infinite) { MUTANT_BAD(NATIVE_MODEL, "\"seq\": 8192", "\"seq\": -1e999", "$.seq", "expected an integer", "got -inf"); }
Test(cli_model, nan_literal) { MUTANT_BAD(NATIVE_MODEL, "\"layers\": 32", "\"layers\": NaN", "malformed", "expected"); }
Test(cli_model, absurd) { MUTANT_BAD(NATIVE_MODEL, "\"layers\": 32", "\"layers\": 1e30", "$.layers", "expected an integer in [1, 1024]", "got 1e+30"); }
Test(cli_model, absurd_dropout) { MUTANT_BAD(NATIVE_MODEL, "\"seq\": 8192", "\"seq\": 8192, \"dropout\": 1.5", "$.dropout", "expected a number in [0, 0.99]", "got 1.5"); }
Test(cli_model, heads_not_dividing_hidden)
{
    MUTANT_BAD(NATIVE_MODEL, "\"heads\": 32, \"kv_heads\": 8", "\"heads\": 31, \"kv_heads\": 1", "heads", "31",
               "does not divide hidden 4096");
}
Test(cli_model, kv_heads_not_dividing_heads) { MUTANT_BAD(NATIVE_MODEL, "\"kv_heads\": 8", "\"kv_heads\": 5", "kv_heads", "5 does not divide heads 32"); }
Test(cli_model, bad_params_reported) { MUTANT_BAD(NATIVE_MODEL, "\"name\": \"t8b\",", "\"name\": \"t8b\", \"params_reported\": \"8 billion\",", "$.params_reported", "expected a count"); }
Test(cli_model, control_characters_stay_on_one_line)
{
    /* a key holding a newline and a terminal escape is quoted as '?' */
    MUTANT_BAD(NATIVE_MODEL, "\"hidden\": 4096", "\"hidden\": 4096, \"a\\nb\\u001b[31m\": 1", "$.a?b?[31m", "unknown key");
}
Test(cli_model, unknown_preset)
{
    expect_bad(cli("model", "show", "lama3-8b", NULL), "unknown model 'lama3-8b'", "did you mean llama3-8b",
               "parplan models");
    expect_bad(cli("estimate", "--model", "gpt3-175", "--cluster", "dgx-h100", NULL), "unknown model 'gpt3-175'",
               "did you mean gpt3-175b");
}

/* ------------------------------------------------------------ HF config.json */

Test(cli_hf, malformed) { MUTANT_BAD(HF_MODEL, "\"num_hidden_layers\": 32", "\"num_hidden_layers\" 32", "malformed", "expected"); }
Test(cli_hf, truncated)
{
    char *base = base_text(HF_MODEL), p[PATH_MAX];
    write_bytes(p, "config.json", base, strlen(base) * 2 / 3);
    expect_file_bad(HF_MODEL, p, p, "truncated JSON", "expected a complete JSON object", NULL);
    free(base);
}
Test(cli_hf, wrong_type) { MUTANT_BAD(HF_MODEL, "\"num_hidden_layers\": 32", "\"num_hidden_layers\": \"32\"", "$.num_hidden_layers", "expected an integer", "got a string"); }
Test(cli_hf, wrong_type_bool) { MUTANT_BAD(HF_MODEL, "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": \"no\"", "$.tie_word_embeddings", "expected true or false"); }
Test(cli_hf, missing_field) { MUTANT_BAD(HF_MODEL, "\"hidden_size\": 4096,", "", "$.hidden_size", "missing required field"); }
Test(cli_hf, unknown_key) { MUTANT_BAD(HF_MODEL, "\"num_key_value_heads\"", "\"num_key_value_head\"", "$.num_key_value_head", "did you mean \"num_key_value_heads\""); }
Test(cli_hf, unknown_model_type) { MUTANT_BAD(HF_MODEL, "\"model_type\": \"llama\"", "\"model_type\": \"lama\"", "$.model_type", "unsupported model_type \"lama\"", "did you mean \"llama\"", "supported:"); }
Test(cli_hf, negative) { MUTANT_BAD(HF_MODEL, "\"num_hidden_layers\": 32", "\"num_hidden_layers\": -4", "$.num_hidden_layers", "expected an integer in [1, 1024]", "got -4"); }
Test(cli_hf, zero) { MUTANT_BAD(HF_MODEL, "\"hidden_size\": 4096", "\"hidden_size\": 0", "$.hidden_size", "expected an integer in [1, ", "got 0"); }
Test(cli_hf, infinite) { MUTANT_BAD(HF_MODEL, "\"num_hidden_layers\": 32", "\"num_hidden_layers\": 1e999", "$.num_hidden_layers", "got inf"); }
Test(cli_hf, absurd) { MUTANT_BAD(HF_MODEL, "\"num_hidden_layers\": 32", "\"num_hidden_layers\": 1e30", "$.num_hidden_layers", "expected an integer in [1, 1024]", "got 1e+30"); }
Test(cli_hf, absurd_positions) { MUTANT_BAD(HF_MODEL, "\"max_position_embeddings\": 8192", "\"max_position_embeddings\": 1e12", "$.max_position_embeddings", "expected an integer in [1, "); }
Test(cli_hf, heads_not_dividing_hidden)
{
    MUTANT_BAD(HF_MODEL, "\"num_attention_heads\": 32", "\"num_attention_heads\": 31", "heads", "does not divide");
}
Test(cli_hf, kv_heads_not_dividing_heads) { MUTANT_BAD(HF_MODEL, "\"num_key_value_heads\": 8", "\"num_key_value_heads\": 5", "kv_heads", "5 does not divide heads 32"); }

/* ------------------------------------------------------------ cluster */

Test(cli_cluster, malformed) { MUTANT_BAD(CLUSTER_FILE, "\"nodes\": 1", "\"nodes\" 1", ":1:", "malformed", "expected"); }
Test(cli_cluster, truncated)
{
    char p[PATH_MAX];
    write_bytes(p, "t.json", CLUSTER, sizeof CLUSTER - 10);
    expect_file_bad(CLUSTER_FILE, p, p, "truncated JSON", "expected a complete JSON object", NULL);
}
Test(cli_cluster, wrong_type) { MUTANT_BAD(CLUSTER_FILE, "\"nodes\": 1", "\"nodes\": \"1\"", "$.nodes", "expected an integer", "got a string"); }
Test(cli_cluster, wrong_type_object) { MUTANT_BAD(CLUSTER_FILE, "\"pcie\": {\"gen\": 5}", "\"pcie\": 5", "$.pcie", "expected a JSON object", "got a number"); }
Test(cli_cluster, wrong_type_gpu) { MUTANT_BAD(CLUSTER_FILE, "\"gpu\": \"h100-sxm\"", "\"gpu\": 100", "$.gpu", "expected a GPU name from the catalog or a GPU object"); }
Test(cli_cluster, missing_field) { MUTANT_BAD(CLUSTER_FILE, "\"gpus_per_node\": 8,", "", "$.gpus_per_node", "missing required field"); }
Test(cli_cluster, missing_nested_field) { MUTANT_BAD(CLUSTER_FILE, ", \"latency_us\": 5}", "}", "$.inter.latency_us", "missing required field"); }
Test(cli_cluster, unknown_key) { MUTANT_BAD(CLUSTER_FILE, "\"gpus_per_node\"", "\"gpus_per_nod\"", "$.gpus_per_nod", "unknown key", "did you mean \"gpus_per_node\""); }
Test(cli_cluster, unknown_nested_key) { MUTANT_BAD(CLUSTER_FILE, "\"nic_gbit_s\"", "\"nic_gbits\"", "$.inter.nic_gbits", "unknown key", "did you mean \"nic_gbit_s\""); }
Test(cli_cluster, unknown_enum) { MUTANT_BAD(CLUSTER_FILE, "\"kind\": \"nvlink\"", "\"kind\": \"nvlnk\"", "$.intra.kind", "expected one of nvlink|pcie|xgmi|roce", "did you mean \"nvlink\""); }
Test(cli_cluster, negative) { MUTANT_BAD(CLUSTER_FILE, "\"nodes\": 1", "\"nodes\": -1", "$.nodes", "expected an integer in [1, 1000000]", "got -1"); }
Test(cli_cluster, absurd_overlap_slowdown)
{
    MUTANT_BAD(CLUSTER_FILE, "\"pcie\": {\"gen\": 5}", "\"pcie\": {\"gen\": 5}, \"nccl_efficiency\": {\"overlap_slowdown\": 2}",
               "$.nccl_efficiency.overlap_slowdown", "expected a number in [0, 0.9]", "got 2");
}
Test(cli_cluster, zero) { MUTANT_BAD(CLUSTER_FILE, "\"host_mem_gib\": 2048", "\"host_mem_gib\": 0", "$.host_mem_gib", "expected a number in [1, ", "got 0"); }
Test(cli_cluster, infinite) { MUTANT_BAD(CLUSTER_FILE, "\"nic_gbit_s\": 400", "\"nic_gbit_s\": 1e999", "$.inter.nic_gbit_s", "expected a number in [0.1, ", "got inf"); }
Test(cli_cluster, absurd) { MUTANT_BAD(CLUSTER_FILE, "\"gpus_per_node\": 8", "\"gpus_per_node\": 1e30", "$.gpus_per_node", "expected an integer in [1, 4096]", "got 1e+30"); }
Test(cli_cluster, absurd_total) { MUTANT_BAD(CLUSTER_FILE, "\"nodes\": 1", "\"nodes\": 1000000", "$.nodes", "expected nodes x gpus_per_node at most 1048576 GPUs"); }
Test(cli_cluster, unknown_gpu_in_file) { MUTANT_BAD(CLUSTER_FILE, "\"h100-sxm\"", "\"h100-sx\"", "$.gpu", "unknown GPU 'h100-sx'", "did you mean h100-sxm"); }
Test(cli_cluster, domain_not_whole_nodes) { MUTANT_BAD(CLUSTER_FILE, "\"gpus_per_node\": 8", "\"gpus_per_node\": 8, \"nvlink_domain\": 12", "$.nvlink_domain", "expected a multiple of gpus_per_node (8)"); }
Test(cli_cluster, unknown_preset)
{
    expect_bad(cli("cluster", "show", "dgx-h10", NULL), "unknown cluster 'dgx-h10'", "did you mean dgx-h100",
               "parplan clusters");
    expect_bad(cli("estimate", "--model", "llama3-8b", "--cluster", "dgx-a100", NULL), "unknown cluster 'dgx-a100'",
               "did you mean", "dgx-a100-80g");
}
Test(cli_cluster, bad_resize)
{
    expect_bad(cli("cluster", "show", "dgx-h100", "--nodes", "0", NULL), "--nodes", "expected an integer in [1, ", "'0'");
    expect_bad(cli("cluster", "show", "dgx-h100", "--gpus", "12", NULL), "--gpus 12", "multiple of the node size 8");
    expect_bad(cli("cluster", "show", "dgx-h100", "--nodes", "2", "--gpus", "16", NULL), "--nodes or --gpus, not both");
    expect_bad(cli("cluster", "show", "dgx-h100", "--nodes", "x", NULL), "--nodes", "'x'");
}

Test(cli_cluster, too_many_options)
{
    /* 96 options would fill the parser's table; the second --nodes stops it */
    const char *args[3 + 2 * 96 + 1] = {"cluster", "show", "dgx-h100"};
    for (int i = 0; i < 96; i++) args[3 + 2 * i] = "--nodes", args[4 + 2 * i] = "2";
    args[3 + 2 * 96] = NULL;
    run r = cliv(args);
    expect_bad(r, "--nodes: given twice");
}

/* ------------------------------------------------------------ any file */

/* The file-level limits apply to every reader; each case runs all three. */
static void expect_all_readers_bad(const char *path, const char *needle)
{
    expect_file_bad(NATIVE_MODEL, path, path, needle, "expected", NULL);
    expect_file_bad(CLUSTER_FILE, path, path, needle, "expected", NULL);
}

Test(cli_file, empty)
{
    char p[PATH_MAX];
    write_text(p, "empty.json", "");
    expect_all_readers_bad(p, "empty file");
    write_text(p, "blank.json", " \n\t\n");
    expect_all_readers_bad(p, "empty file");
}

Test(cli_file, binary)
{
    unsigned char bytes[1024];
    for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (unsigned char)(i * 37 + 11);
    char p[PATH_MAX];
    write_bytes(p, "binary.json", bytes, sizeof bytes);
    expect_all_readers_bad(p, "binary data");
}

Test(cli_file, binary_without_nul)
{
    unsigned char bytes[256];
    for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (unsigned char)(0x80 + i % 0x80);
    char p[PATH_MAX];
    write_bytes(p, "high.json", bytes, sizeof bytes);
    expect_all_readers_bad(p, "malformed");
}

Test(cli_file, huge)
{
    size_t n = (5u << 20) + 17; /* > 4 MiB */
    char *big = malloc(n);
    cr_assert(big);
    memset(big, ' ', n);
    memcpy(big, "{\"name\": \"", 10);
    big[n - 2] = '"';
    big[n - 1] = '}';
    char p[PATH_MAX];
    write_bytes(p, "huge.json", big, n);
    free(big);
    expect_all_readers_bad(p, "larger than 4194304 bytes");
}

Test(cli_file, deeply_nested)
{
    char text[4096] = "{\"name\": ";
    for (int i = 0; i < 200; i++) strcat(text, "[");
    for (int i = 0; i < 200; i++) strcat(text, "]");
    strcat(text, "}");
    char p[PATH_MAX];
    write_text(p, "deep.json", text);
    expect_all_readers_bad(p, "nested deeper than 32 levels");
    /* unbalanced: a million openers, never closed */
    size_t n = 1000000;
    char *open_only = malloc(n);
    cr_assert(open_only);
    memset(open_only, '[', n);
    write_bytes(p, "deep2.json", open_only, n);
    free(open_only);
    expect_all_readers_bad(p, "nested deeper than 32 levels");
}

Test(cli_file, nonexistent)
{
    char p[PATH_MAX];
    tmp_path(p, "no-such-file.json");
    expect_all_readers_bad(p, "cannot open: No such file or directory");
}

Test(cli_file, directory)
{
    char p[PATH_MAX];
    tmp_path(p, "");
    expect_all_readers_bad(p, "is a directory");
}

/* ------------------------------------------------------------ estimate */

#define EST "estimate", "--model", "llama3-8b", "--cluster", "dgx-h100"

Test(cli_estimate, degrees_not_multiplying_to_gpus)
{
    expect_bad(cli(EST, "--dp", "3", NULL), "--dp 3", "dp x tp x pp x cp = 3 x 1 x 1 x 1 = 3", "8 GPUs", "[rule gpus]");
    expect_bad(cli(EST, "--tp", "2", "--pp", "2", "--dp", "4", NULL), "dp x tp x pp x cp = 4 x 2 x 2 x 1 = 16", "8 GPUs");
    expect_bad(cli(EST, "--cp", "3", NULL), "dp x tp x pp x cp", "8 GPUs");
}

Test(cli_estimate, tp_not_dividing_heads)
{
    expect_bad(cli(EST, "--gpus", "3", "--tp", "3", NULL), "--tp 3", "32 heads", "[rule tp-heads]");
}

Test(cli_estimate, pp_beyond_layers)
{
    expect_bad(cli("estimate", "--model", "llama2-70b", "--cluster", "dgx-h100", "--gpus", "200", "--pp", "200", NULL),
               "--pp 200", "80 blocks");
    expect_bad(cli(EST, "--pp", "257", NULL), "--pp", "expected an integer in [1, 256]", "'257'");
}

Test(cli_estimate, global_batch_not_divisible)
{
    expect_bad(cli(EST, "--micro-batch", "2", "--global-batch", "7", NULL), "--global-batch 7",
               "micro_batch x dp = 2 x 8 = 16");
    expect_bad(cli(EST, "--micro-batch", "2", "--global-batch", "8", NULL), "--global-batch 8", "not divisible");
}

Test(cli_estimate, zero_stage_out_of_range)
{
    expect_bad(cli(EST, "--zero", "5", NULL), "--zero", "expected an integer in [0, 3]", "'5'");
    expect_bad(cli(EST, "--zero", "-1", NULL), "--zero", "expected an integer in [0, 3]");
}

Test(cli_estimate, fp8_on_a100)
{
    expect_bad(cli("estimate", "--model", "llama3-8b", "--cluster", "dgx-a100-80g", "--precision", "fp8", NULL),
               "--precision fp8", "a100");
}

Test(cli_estimate, bad_numbers)
{
    expect_bad(cli(EST, "--seq", "-1", NULL), "--seq", "expected an integer in [1, ", "'-1'");
    expect_bad(cli(EST, "--seq", "0", NULL), "--seq", "'0'");
    expect_bad(cli(EST, "--micro-batch", "abc", NULL), "--micro-batch", "expected an integer", "'abc'");
    expect_bad(cli(EST, "--micro-batch", "", NULL), "--micro-batch", "expected an integer");
    expect_bad(cli(EST, "--tp", "2.5", NULL), "--tp", "expected an integer", "'2.5'");
    expect_bad(cli(EST, "--tp", "8q", NULL), "--tp", "'8q'"); /* not a suffix */
    expect_bad(cli(EST, "--tp", "99999999999999999999", NULL), "--tp", "expected an integer");
    expect_bad(cli(EST, "--tp", "2x", NULL), "--tp", "'2x'");
    expect_bad(cli(EST, "--train-tokens", "nan", NULL), "--train-tokens", "expected a number", "'nan'");
    expect_bad(cli(EST, "--train-tokens", "1e999", NULL), "--train-tokens", "expected a number");
    expect_bad(cli(EST, "--fragmentation", "-0.1", NULL), "--fragmentation", "expected a number in [0, 1]");
}

Test(cli_estimate, bad_enums)
{
    expect_bad(cli(EST, "--precision", "fp9", NULL), "--precision", "expected one of", "bf16", "'fp9'");
    expect_bad(cli(EST, "--recompute", "some", NULL), "--recompute", "selective", "'some'");
    expect_bad(cli(EST, "--schedule", "zb", NULL), "--schedule", "1f1b", "'zb'");
    expect_bad(cli(EST, "--format", "yaml", NULL), "--format", "table|json", "'yaml'");
    expect_bad(cli(EST, "--cp-comm", "torus", NULL), "--cp-comm", "ring|allgather|a2a", "'torus'");
    expect_bad(cli(EST, "--framework", "jax", NULL), "--framework", "pytorch|deepspeed|megatron", "'jax'");
    expect_bad(cli(EST, "--grad-accum", "fp64", NULL), "--grad-accum", "16bit", "'fp64'");
    expect_bad(cli(EST, "--allocator", "cudaMalloc", NULL), "--allocator", "caching|expandable", "'cudaMalloc'");
}

/* What a framework cannot run: the flag, the value and the framework's rule. */
Test(cli_estimate, framework_rules)
{
    expect_bad(cli(EST, "--framework", "megatron", "--zero", "2", NULL), "--zero 2", "Megatron-FSDP",
               "expected 0, 1 or 3", "[rule fw-zero]");
    expect_bad(cli(EST, "--framework", "megatron", "--zero", "3", "--pp", "2", NULL), "--zero 3",
               "Megatron-FSDP without pipeline stages", "[rule fw-zero-pp]");
    expect_bad(cli(EST, "--framework", "deepspeed", "--tp", "2", NULL), "--tp 2", "deepspeed has no tensor "
               "parallelism", "[rule fw-tp]");
    expect_bad(cli(EST, "--framework", "pytorch", "--pp", "2", NULL), "--pp 2", "[rule fw-pp]");
    expect_bad(cli(EST, "--framework", "fsdp", "--zero", "1", NULL), "--zero 1", "[rule fw-zero]");
    expect_bad(cli(EST, "--framework", "deepspeed", "--allocator", "expandable", NULL), "--allocator expandable",
               "cannot give PYTORCH_CUDA_ALLOC_CONF to every rank", "[rule fw-allocator]");
    expect_bad(cli(EST, "--framework", "deepspeed", "--schedule", "interleaved", "--pp", "2", "--global-batch", "8", NULL),
               "--schedule interleaved", "[rule fw-schedule]");
    expect_bad(cli(EST, "--framework", "megatron", "--grad-accum", "16bit+fp32", NULL), "--grad-accum 16bit+fp32",
               "main_grad", "[rule fw-grad-accum]");
    /* Megatron-Core's CPU offloading: its own asserts, and no other framework has it */
    expect_bad(cli(EST, "--framework", "deepspeed", "--act-offload-layers", "4", NULL), "--act-offload-layers 4",
               "frameworks that do: megatron", "[rule fw-act-offload]");
    expect_bad(cli(EST, "--framework", "megatron", "--pp", "2", "--act-offload-layers", "4", NULL), "--pp 2",
               "pipeline parallelism", "[rule fw-act-offload]");
    expect_bad(cli(EST, "--framework", "megatron", "--recompute", "full", "--act-offload-layers", "4", NULL),
               "--recompute full", "recomputation", "[rule fw-act-offload]");
    expect_bad(cli(EST, "--framework", "megatron", "--act-offload-layers", "32", NULL), "--act-offload-layers 32",
               "fewer blocks than the model has (32)", "[rule fw-act-offload]");
    expect_bad(cli(EST, "--framework", "megatron", "--act-offload-layers", "-1", NULL), "--act-offload-layers");
    /* bf16 optimizer states: Megatron's precision-aware optimizer, AdamW in the distributed optimizer */
    expect_bad(cli(EST, "--framework", "deepspeed", "--zero", "1", "--optimizer-states", "bf16", NULL),
               "--optimizer-states bf16", "frameworks that do: megatron", "[rule fw-opt-states]");
    expect_bad(cli(EST, "--framework", "megatron", "--optimizer-states", "bf16", NULL), "--zero 0",
               "distributed optimizer", "[rule fw-opt-states]");
    expect_bad(cli(EST, "--framework", "megatron", "--zero", "1", "--precision", "fp16", "--optimizer-states", "bf16",
                   NULL), "--precision fp16", "[rule fw-opt-states]");
    expect_bad(cli(EST, "--framework", "megatron", "--optimizer-states", "fp16", NULL), "--optimizer-states",
               "expected one of fp32|bf16", "'fp16'");
    expect_bad(cli(EST, "--framework", "megatron", "--act-offload-layers", "x", NULL), "--act-offload-layers");
    /* FP8 primary weights: Megatron's, with fp8 and the distributed optimizer or Megatron-FSDP */
    expect_bad(cli(EST, "--framework", "deepspeed", "--zero", "1", "--fp8-param-gather", "on", NULL),
               "--fp8-param-gather on", "frameworks that do: megatron", "[rule fw-fp8-params]");
    expect_bad(cli(EST, "--framework", "megatron", "--zero", "1", "--fp8-param-gather", "on", NULL), "--precision bf16",
               "fp8 training", "[rule fw-fp8-params]");
    expect_bad(cli(EST, "--framework", "megatron", "--precision", "fp8", "--fp8-param-gather", "on", NULL), "--zero 0",
               "distributed optimizer or Megatron-FSDP", "[rule fw-fp8-params]");
    expect_bad(cli(EST, "--framework", "megatron", "--fp8-param-gather", "yes", NULL), "--fp8-param-gather",
               "expected on|off", "'yes'");
    /* Megatron's --recompute-modules: with selective recompute, megatron only, names it knows */
    expect_bad(cli(EST, "--framework", "megatron", "--recompute", "selective", "--recompute-modules", "mlp,attn", NULL),
               "--recompute-modules", "expected names among core_attn", "'mlp,attn'");
    expect_bad(cli(EST, "--framework", "megatron", "--recompute-modules", "mlp", NULL), "--recompute-modules mlp",
               "expected selective", "[rule fw-recompute-modules]");
    expect_bad(cli(EST, "--framework", "megatron", "--recompute", "selective", "--recompute-modules", "", NULL),
               "--recompute-modules", "expected names among core_attn", "got ''"); /* Megatron refuses an empty list */
    expect_bad(cli(EST, "--framework", "megatron-deepspeed", "--recompute", "selective", "--recompute-modules", "mlp", NULL),
               "--recompute-modules mlp", "frameworks that do: megatron", "[rule fw-recompute-modules]");
    expect_bad(cli(EST, "--framework", "megatron", "--recompute", "selective", "--recompute-modules", "moe_act", NULL),
               "--recompute-modules moe_act", "mixture-of-experts", "[rule fw-recompute-modules]");
    /* fsdp's selective recompute is torchtitan's per-op policy: Llama-style dense blocks, full training */
    expect_bad(cli("estimate", "--model", "mixtral-8x7b", "--cluster", "dgx-h100", "--framework", "fsdp", "--zero", "3",
                   "--recompute", "selective", NULL), "--recompute selective", "per-op policy", "has experts",
               "[rule fw-recompute]");
    expect_bad(cli(EST, "--framework", "fsdp", "--zero", "3", "--recompute", "selective", "--mode", "lora", NULL),
               "--recompute selective", "torchtitan has no LoRA", "[rule fw-recompute]");
    /* fine-tuning flags that would change nothing are refused (red team rt7) */
    expect_bad(cli(EST, "--mode", "lora", "--freeze", "embeddings", NULL), "--freeze", "needs --mode full");
    expect_bad(cli(EST, "--lora-dropout", "0.1", NULL), "--lora-dropout", "need --mode lora or qlora");
    expect_bad(cli(EST, "--lora-alpha", "16", NULL), "--lora-alpha", "need --mode lora or qlora");
}

/* plan, compare and sweep: a restriction no framework asked for can run is
 * said with the flag, what each framework runs and the rule; --emit writes
 * nothing. */
Test(cli_estimate, plan_framework_rules)
{
#define PLN "plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--global-batch", "64"
    expect_bad(cli(PLN, "--framework", "megatron", "--zero", "2", "--emit", "never", NULL), "--zero 2",
               "megatron runs 0,1,3", "[rule fw-zero]");
    cr_expect(access("never", F_OK) != 0, "--emit wrote although the plan was refused");
    expect_bad(cli(PLN, "--framework", "deepspeed", "--tp", "2,4", NULL), "--tp 2,4", "deepspeed runs 1 only",
               "[rule fw-tp]");
    expect_bad(cli(PLN, "--framework", "pytorch,megatron", "--offload", "nvme", NULL), "--offload nvme",
               "pytorch runs none", "megatron runs none", "[rule fw-offload]");
    expect_bad(cli(PLN, "--framework", "megatron-deepspeed,deepspeed", "--schedule", "interleaved", "--pp", "2", NULL),
               "--schedule interleaved", "deepspeed runs 1f1b", "[rule fw-schedule]");
    expect_bad(cli(PLN, "--framework", "jax", NULL), "--framework", "pytorch|deepspeed", "'jax'");
    /* a pinned activation offload: what stands in its way, before searching */
    expect_bad(cli(PLN, "--act-offload-layers", "32", "--emit", "never", NULL), "--act-offload-layers 32",
               "expected 1 to 31", "[rule fw-act-offload]");
    cr_expect(access("never", F_OK) != 0, "--emit wrote although the plan was refused");
    expect_bad(cli(PLN, "--framework", "deepspeed,fsdp", "--act-offload-layers", "8", NULL), "--act-offload-layers 8",
               "only megatron", "[rule fw-act-offload]");
    expect_bad(cli(PLN, "--pp", "2,4", "--act-offload-layers", "8", NULL), "--pp 2", "pipeline parallelism",
               "[rule fw-act-offload]");
    expect_bad(cli(PLN, "--recompute", "full", "--act-offload-layers", "8", NULL), "--recompute full",
               "recomputation", "[rule fw-act-offload]");
    /* pinned bf16 optimizer states: only megatron with zero 1 keeps them, said before searching */
    expect_bad(cli(PLN, "--framework", "deepspeed,fsdp", "--optimizer-states", "bf16", "--emit", "never", NULL),
               "--optimizer-states bf16", "only megatron", "[rule fw-opt-states]");
    cr_expect(access("never", F_OK) != 0, "--emit wrote although the plan was refused");
    expect_bad(cli(PLN, "--zero", "0,3", "--optimizer-states", "bf16", NULL), "--zero", "distributed optimizer",
               "[rule fw-opt-states]");
    /* pinned recompute modules: megatron's, with selective recompute, for the model's modules */
    expect_bad(cli(PLN, "--recompute-modules", "mla_up_proj", "--emit", "never", NULL), "--recompute-modules mla_up_proj",
               "multi-latent attention", "[rule fw-recompute-modules]");
    cr_expect(access("never", F_OK) != 0, "--emit wrote although the plan was refused");
    expect_bad(cli(PLN, "--recompute-modules", "mlp", "--recompute", "none,full", NULL), "--recompute none,full",
               "need selective recompute", "[rule fw-recompute-modules]");
    expect_bad(cli(PLN, "--recompute-modules", "mlp", "--framework", "deepspeed", NULL), "--recompute-modules mlp",
               "only megatron", "[rule fw-recompute-modules]");
    expect_bad(cli("compare", "--model", "llama3-8b", "--clusters", "dgx-h100", "--gpus", "8", "--train-tokens", "1T",
                   "--framework", "tensorflow", NULL), "--framework", "'tensorflow'");
#undef PLN
}

Test(cli_estimate, bad_stage_layers)
{
    expect_bad(cli(EST, "--pp", "2", "--stage-layers", "16", NULL), "--stage-layers", "expected 2 counts");
    expect_bad(cli(EST, "--pp", "2", "--stage-layers", "16,x", NULL), "--stage-layers", "'16,x'");
    expect_bad(cli(EST, "--pp", "2", "--stage-layers", "10,10", NULL), "--stage-layers", "sum to 20");
    /* (DeepSpeed v0.14.5's split gives every stage a block whenever pp <= blocks:
     * tests/planner/test_partition.c; the 2022 split could leave one empty) */
}

Test(cli_estimate, unknown_option_with_suggestion)
{
    expect_bad(cli(EST, "--zer", "2", NULL), "unknown option '--zer'", "did you mean --zero?", "parplan estimate --help");
    expect_bad(cli(EST, "--global-bach", "8", NULL), "did you mean --global-batch?");
    expect_bad(cli(EST, "--micro", "2", NULL), "did you mean --micro-batch?");
    expect_bad(cli(EST, "--recompute-layer=2", NULL), "unknown option '--recompute-layer'", "did you mean --recompute-layers?");
    expect_bad(cli(EST, "--qqqqqqq", NULL), "unknown option '--qqqqqqq'", "parplan estimate --help");
}

Test(cli_estimate, option_value_errors)
{
    expect_bad(cli(EST, "--tp", NULL), "--tp", "expected a value");
    expect_bad(cli(EST, "--sp=1", NULL), "--sp", "takes no value");
    expect_bad(cli("estimate", "--cluster", "dgx-h100", NULL), "--model", "expected a preset name or a JSON file");
    expect_bad(cli("estimate", "--model", "llama3-8b", NULL), "--cluster", "expected a preset name or a JSON file");
    expect_bad(cli(EST, "--nodes", "2", "--gpus", "16", NULL), "--nodes or --gpus");
}

/* A stray positional argument is ignored today (cmd_estimate.c does not
 * check a->npos); enable when estimate rejects it. */
Test(cli_estimate, stray_argument) { expect_bad(cli(EST, "extra", NULL), "extra"); }

Test(cli_estimate, unknown_subcommand)
{
    expect_bad(cli("estimat", NULL), "unknown command 'estimat'", "parplan --help");
    expect_bad(cli("--frobnicate", NULL), "unknown command '--frobnicate'");
    expect_bad(cli("model", "list", NULL), "usage: parplan model show");
    expect_bad(cli("cluster", NULL), "usage: parplan cluster show");
    expect_bad(cli("models", "extra", NULL), "unexpected argument 'extra'");
    expect_bad(cli("gpus", "--nodes", "2", NULL), "unknown option '--nodes'");
}

Test(cli_estimate, no_command)
{
    run r = cli(NULL);
    cr_expect_eq(r.code, 2, "exit %d", r.code);
    cr_expect_eq(r.out_len, 0);
    cr_expect(strstr(r.err, "Usage"), "%s", r.err);
    run_free(&r);
}

Test(cli_estimate, good_run_for_contrast)
{
    run r = expect_ok(cli(EST, "--zero", "1", "--micro-batch", "2", NULL));
    cr_expect(strstr(r.out, "memory per GPU"), "%s", r.out);
    run_free(&r);
}

/* ------------------------------------------------------------ help */

Test(cli_help, version)
{
    run r = expect_ok(cli("--version", NULL));
    cr_expect(strncmp(r.out, "parplan ", 8) == 0 && strstr(r.out, "schema 1"), "%s", r.out);
    run_free(&r);
}

/* Command names from `parplan --help` (the "Commands:" block). */
static int help_commands(char names[][32], int cap)
{
    run r = expect_ok(cli("--help", NULL));
    cr_expect(strstr(r.out, "Usage"), "%s", r.out);
    cr_expect(strstr(r.out, "Example"), "%s", r.out);
    int n = 0;
    const char *p = strstr(r.out, "Commands:\n");
    cr_assert(p, "no Commands: block in --help");
    p += strlen("Commands:\n");
    while (n < cap && p[0] == ' ' && p[1] == ' ' && p[2] != ' ') {
        if (sscanf(p, " %31s", names[n]) == 1) n++;
        p = strchr(p, '\n');
        if (!p) break;
        p++;
    }
    run_free(&r);
    return n;
}

Test(cli_help, top_level)
{
    char names[32][32];
    int n = help_commands(names, 32);
    cr_expect(n >= 6, "only %d commands listed", n);
    run r = expect_ok(cli("-h", NULL));
    run_free(&r);
}

Test(cli_help, every_command)
{
    char names[32][32];
    int n = help_commands(names, 32);
    for (int i = 0; i < n; i++) {
        const char *forms[][3] = {{names[i], "--help", NULL}, {names[i], "-h", NULL}};
        for (int f = 0; f < 2; f++) {
            run r = expect_ok(cliv(forms[f]));
            cr_expect(strstr(r.out, "Usage"), "%s: no Usage: %s", r.cmd, r.out);
            cr_expect(strstr(r.out, "Examples"), "%s: no Examples: %s", r.cmd, r.out);
            cr_expect(strstr(r.out, names[i]), "%s: help does not name the command", r.cmd);
            run_free(&r);
        }
    }
}

/* ------------------------------------------------------------ presets */

/* The names of `parplan LIST --format json`: a JSON array of strings. */
static cJSON *list_json(const char *list)
{
    run r = expect_ok(cli(list, "--format", "json", NULL));
    cJSON *a = cJSON_Parse(r.out);
    cr_assert(cJSON_IsArray(a) && cJSON_GetArraySize(a) > 0, "%s: not a JSON array of names: %s", r.cmd, r.out);
    for (const cJSON *it = a->child; it; it = it->next) cr_assert(cJSON_IsString(it), "%s: not all strings", r.cmd);
    run_free(&r);
    return a;
}

/* `parplan models` (table): one line per preset, name first, same order. */
static void expect_table_lists(const char *list, const cJSON *names)
{
    run r = expect_ok(cli(list, NULL));
    const char *line = r.out;
    for (const cJSON *it = names->child; it; it = it->next) {
        size_t l = strlen(it->valuestring);
        cr_expect(strncmp(line, it->valuestring, l) == 0 && line[l] == ' ', "%s: line does not start with %s: %.80s",
                  r.cmd, it->valuestring, line);
        line = strchr(line, '\n');
        cr_assert(line, "%s: fewer lines than presets", r.cmd);
        line++;
    }
    cr_expect_eq(*line, '\0', "%s: more lines than presets", r.cmd);
    run_free(&r);
}

static cJSON *show_json(const char *what, const char *name)
{
    run r = expect_ok(cli(what, "show", name, "--format", "json", NULL));
    cJSON *o = cJSON_Parse(r.out);
    cr_assert(cJSON_IsObject(o), "%s: not a JSON object: %.300s", r.cmd, r.out);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "schema_version");
    cr_expect(cJSON_IsNumber(v) && v->valuedouble == 1, "%s: schema_version", r.cmd);
    v = cJSON_GetObjectItemCaseSensitive(o, "name");
    cr_expect(cJSON_IsString(v) && strcmp(v->valuestring, name) == 0, "%s: name", r.cmd);
    run_free(&r);
    return o;
}

Test(cli_presets, every_model_shows)
{
    cJSON *names = list_json("models");
    expect_table_lists("models", names);
    for (const cJSON *it = names->child; it; it = it->next) {
        run r = expect_ok(cli("model", "show", it->valuestring, NULL));
        cr_expect(strstr(r.out, "params"), "%s: %s", r.cmd, r.out);
        run_free(&r);
        cJSON *o = show_json("model", it->valuestring);
        const cJSON *total = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "params"), "total");
        cr_expect(cJSON_IsNumber(total) && total->valuedouble > 1e6, "%s: params.total", it->valuestring);
        cJSON_Delete(o);
    }
    cJSON_Delete(names);
}

Test(cli_presets, every_cluster_shows)
{
    cJSON *names = list_json("clusters");
    expect_table_lists("clusters", names);
    for (const cJSON *it = names->child; it; it = it->next) {
        run r = expect_ok(cli("cluster", "show", it->valuestring, NULL));
        run_free(&r);
        r = expect_ok(cli("cluster", "show", it->valuestring, "--nodes", "4", NULL));
        run_free(&r);
        cJSON *o = show_json("cluster", it->valuestring);
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "gpus");
        cr_expect(cJSON_IsNumber(g) && g->valuedouble >= 1, "%s: gpus", it->valuestring);
        cJSON_Delete(o);
    }
    cJSON_Delete(names);
}

Test(cli_presets, gpus_list)
{
    cJSON *names = list_json("gpus");
    expect_table_lists("gpus", names);
    cJSON_Delete(names);
}

/* ------------------------------------------------------------ schema */

/* Every key of a JSON output appears in docs/schema.md as `key`. */
static void expect_documented(const cJSON *o, const char *doc, const char *what)
{
    for (const cJSON *it = o ? o->child : NULL; it; it = it->next) {
        if (it->string) {
            char quoted[96];
            snprintf(quoted, sizeof quoted, "`%s`", it->string);
            cr_expect(strstr(doc, quoted) != NULL, "%s: key \"%s\" is not documented in docs/schema.md", what, it->string);
        }
        if (cJSON_IsObject(it) || cJSON_IsArray(it)) expect_documented(it, doc, what);
    }
}

static void expect_output_documented(const char *doc, const char *const *args)
{
    run r = expect_ok(cliv(args));
    cJSON *o = cJSON_Parse(r.out);
    cr_assert(o, "%s: output is not JSON", r.cmd);
    expect_documented(o, doc, r.cmd);
    cJSON_Delete(o);
    run_free(&r);
}

Test(cli_presets, json_outputs_are_documented)
{
    char *doc = read_file(SCHEMA_DOC);
    const char *const est[] = {"estimate", "--model", "mixtral-8x7b", "--cluster", "dgx-h100", "--nodes", "2",
                               "--tp", "2", "--pp", "2", "--ep", "2", "--zero", "1", "--offload", "optimizer", "--seq", "4096",
                               "--train-tokens", "1e12", "--format", "json", NULL};
    const char *const model[] = {"model", "show", "deepseek-v3", "--format", "json", NULL};
    const char *const cluster[] = {"cluster", "show", "dgx-h100", "--format", "json", NULL};
    expect_output_documented(doc, est);
    expect_output_documented(doc, model);
    expect_output_documented(doc, cluster);
    free(doc);
}

/* docs/frameworks.md shows `parplan frameworks --format markdown` between
 * its markers: the doc says what the framework table says. */
Test(cli_presets, frameworks_doc_matches_the_table)
{
    run r = expect_ok(cli("frameworks", "--format", "markdown", NULL));
    char *doc = read_file(PARPLAN_SOURCE_DIR "/docs/frameworks.md");
    const char *b = strstr(doc, "<!-- frameworks table: begin -->\n"), *e = strstr(doc, "<!-- frameworks table: end -->");
    cr_assert(b && e && e > b, "docs/frameworks.md lacks the table markers");
    b += strlen("<!-- frameworks table: begin -->\n");
    cr_expect_eq((size_t)(e - b), r.out_len, "docs/frameworks.md's table differs from `parplan frameworks --format "
                 "markdown` (paste its output between the markers)");
    cr_expect(!strncmp(b, r.out, r.out_len), "docs/frameworks.md's table differs:\n%s", r.out);
    run j = expect_ok(cli("frameworks", "--format", "json", NULL));
    cr_expect(strstr(j.out, "\"name\": \"megatron-deepspeed\"") && strstr(j.out, "\"ZeRO stages\": \"0 1 3\""), "%s", j.out);
    free(doc);
    run_free(&r);
    run_free(&j);
    expect_bad(cli("frameworks", "--format", "yaml", NULL), "--format", "'yaml'");
}

/* The peak and step of a plan JSON text, by key (enough for these tests). */
static void figures(const char *json, double *peak, double *step)
{
    const char *p = strstr(json, "\"peak_bytes\":"), *t = strstr(json, "\"step_s\":");
    cr_assert(p && t, "no figures in %.200s", json);
    *peak = strtod(p + strlen("\"peak_bytes\":"), NULL);
    *step = strtod(t + strlen("\"step_s\":"), NULL);
}

/* `estimate --deepspeed FILE` alone reads an emitted DeepSpeed folder back
 * to the plan's numbers: the Trainer's training_args.json beside it (whose
 * "deepspeed" names FILE) gives batch and gradient checkpointing, and says
 * so; Trainer flags on the command line turn that off. */
Test(cli_estimate, deepspeed_folder_reads_back_whole)
{
    char dir[512], ds[PATH_MAX], plan[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/ds", tmpdir);
    run r = cli("estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--framework", "deepspeed", "--zero", "3",
                "--recompute", "full", "--micro-batch", "2", "--global-batch", "64", "--emit", dir, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    run_free(&r);
    snprintf(ds, sizeof ds, "%s/ds_config.json", dir);
    snprintf(plan, sizeof plan, "%s/plan.json", dir);
    char *want = read_file(plan);
    run b = cli("estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--deepspeed", ds, "--format", "json", NULL);
    cr_assert_eq(b.code, 0, "%s", b.err);
    cr_expect(strstr(b.err, "training_args.json: read beside --deepspeed"), "%s", b.err);
    double p0, s0, p1, s1;
    figures(want, &p0, &s0);
    figures(b.out, &p1, &s1);
    cr_expect(fabs(p1 / p0 - 1) < 1e-9 && fabs(s1 / s0 - 1) < 1e-9, "read back %g B %g s, plan %g B %g s", p1, s1, p0, s0);
    run_free(&b);
    /* a Trainer flag given: the file beside it is not read */
    run c = cli("estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--deepspeed", ds, "--micro-batch", "2",
                "--format", "json", NULL);
    cr_expect_eq(c.code, 0, "%s", c.err);
    cr_expect(!strstr(c.err, "read beside"), "%s", c.err);
    run_free(&c);
    free(want);
}

/* Scripts build command lines by concatenation: a flag given twice is an
 * error, not "the last wins" (red team rt12); a measurement no efficiency
 * explains is bad input naming its flag, exit 2, not "does not fit". */
Test(cli_estimate, flag_twice_and_impossible_measurements_are_bad_input)
{
    expect_bad(cli("estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--tp", "2", "--tp", "4", NULL),
               "--tp: given twice ('2', then '4')");
    expect_bad(cli("estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--model", "llama3-70b", NULL),
               "--model: given twice");
    expect_bad(cli("plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--global-batch", "64", "--format", "json",
                   "--format", "csv", NULL),
               "--format: given twice");
    expect_bad(cli("estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--zero", "3", "--measured-step-s",
                   "0.001", NULL),
               "--measured-step-s:", "faster than the model allows");
    expect_bad(cli("estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--zero", "3", "--measured-tflops", "8",
                   NULL),
               "--measured-tflops:", "slower than compute");
}

/* Physical floors on hardware numbers and prices (red team rt12: a link of
 * 1e-300 GB/s passed as "positive" and printed 10^300-second steps and
 * null days); integer flags refuse fractions; each cross-check names its
 * flag. */
Test(cli_cluster, absurd_small_values_are_refused)
{
    MUTANT_BAD(CLUSTER_FILE, "\"nic_gbit_s\": 400", "\"nic_gbit_s\": 1e-300", "$.inter.nic_gbit_s", "[0.1, ", "got 1e-300");
}

Test(cli_estimate, fractional_steps_and_crossed_schedules_name_their_flag)
{
    expect_bad(cli("estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--zero", "3", "--warmup-steps", "2.5",
                   "--emit-deepspeed", "d.json", NULL),
               "--warmup-steps", "integer", "2.5");
    expect_bad(cli("estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--zero", "3", "--train-steps", "100",
                   "--emit-deepspeed", "d.json", NULL),
               "--warmup-steps 2000", "--train-steps 100");
    expect_bad(cli("compare", "--model", "llama3-8b", "--train-tokens", "1T", "--clusters", "dgx-h100", "--gpus", "8",
                   "--purchase-usd-per-gpu", "30000", "--amortize-years", "1e-300", NULL),
               "--amortize-years", "[0.1, 50]");
}
