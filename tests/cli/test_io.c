/*
 * test_io.c — the built `parplan` against failing outputs and odd inputs
 * (issue 14, items 1, 3, 4, 5): stdout on /dev/full or under a file size
 * limit (ulimit -f) exits 3 with a message naming stdout and the reason;
 * files written with --emit-* / --plot are complete or absent, as a set;
 * --force replaces only regular files; a FIFO as input or output never
 * hangs. Each run is a child with stdout sent where the test says, the
 * file size limit set when asked, and a 20 s alarm (a hang is a failure).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];

static void mk(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/pp-io-XXXXXX", base && *base ? base : "/tmp");
    cr_assert(mkdtemp(dir));
}

static void rm_all(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert(system(cmd) == 0);
}

TestSuite(io_out, .init = mk, .fini = rm_all);
TestSuite(io_force, .init = mk, .fini = rm_all);
TestSuite(io_set, .init = mk, .fini = rm_all);
TestSuite(io_in, .init = mk, .fini = rm_all);
TestSuite(io_text, .init = mk, .fini = rm_all);

static void at(char *buf, const char *name) { snprintf(buf, PATH_MAX, "%s/%s", dir, name); }

typedef struct res {
    int code, sig;
    char err[16384];
    char out[16384]; /* the first 16 KiB of stdout when it went to the capture */
} res;

/* Runs parplan with args (NULL-terminated) in dir; stdout to out_path
 * (NULL: a file in dir), file size limit fsize bytes when > 0. */
static res run(const char *out_path, long fsize, ...)
{
    const char *argv[64] = {PARPLAN_CLI};
    int n = 1;
    va_list ap;
    va_start(ap, fsize);
    for (const char *a; (a = va_arg(ap, const char *)) && n < 63;) argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    char po[PATH_MAX], pe[PATH_MAX];
    at(po, ".stdout");
    at(pe, ".stderr");
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int fo = open(out_path ? out_path : po, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644), in = open("/dev/null", O_RDONLY);
        if (fo < 0 || fe < 0 || in < 0 || dup2(in, 0) < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(126);
        if (chdir(dir) != 0) _exit(126);
        signal(SIGXFSZ, SIG_DFL); /* as a shell leaves it: parplan must cope by itself */
        if (fsize > 0) {
            struct rlimit rl = {(rlim_t)fsize, (rlim_t)fsize};
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(126);
        }
        alarm(20);
        execv(PARPLAN_CLI, (char *const *)argv);
        _exit(127);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    res r = {WIFEXITED(status) ? WEXITSTATUS(status) : -1, WIFSIGNALED(status) ? WTERMSIG(status) : 0, ""};
    cr_assert(r.code != 126 && r.code != 127, "could not run parplan");
    FILE *f = fopen(pe, "r");
    cr_assert(f);
    size_t k = fread(r.err, 1, sizeof r.err - 1, f);
    r.err[k] = '\0';
    fclose(f);
    if (!out_path && (f = fopen(po, "r"))) {
        k = fread(r.out, 1, sizeof r.out - 1, f);
        r.out[k] = '\0';
        fclose(f);
    }
    return r;
}

static int exists(const char *name)
{
    char p[PATH_MAX];
    at(p, name);
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Names in dir other than the captures: temporaries would show here. */
static int entries(void)
{
    DIR *d = opendir(dir);
    cr_assert(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

#define EST0 "estimate", "--model", "llama3-8b", "--cluster", "dgx-h100"
#define EST EST0, "--zero", "1", "--seq", "4096"
#define PLAN0 "plan", "--model", "llama3-8b", "--cluster", "dgx-h100"
#define PLAN PLAN0, "--global-batch", "64", "--top", "2"
#define CMP "compare", "--model", "llama3-8b", "--clusters", "dgx-h100", "--gpus", "8", "--train-tokens", "1T"

static void expect_stdout_failure(res r, const char *why, const char *what)
{
    cr_expect_eq(r.sig, 0, "%s: killed by signal %d", what, r.sig);
    cr_expect_eq(r.code, 3, "%s: exit %d, want 3; stderr: %s", what, r.code, r.err);
    cr_expect(strstr(r.err, "stdout") && strstr(r.err, why), "%s: stderr lacks stdout/%s: %s", what, why, r.err);
}

/* ------------------------------------------------------------ item 1 */

Test(io_out, stdout_on_dev_full_exits_3_for_every_command)
{
    expect_stdout_failure(run("/dev/full", 0, PLAN, NULL), "No space left on device", "plan");
    expect_stdout_failure(run("/dev/full", 0, PLAN, "--format", "json", NULL), "No space left on device", "plan json");
    expect_stdout_failure(run("/dev/full", 0, EST, NULL), "No space left on device", "estimate");
    expect_stdout_failure(run("/dev/full", 0, CMP, NULL), "No space left on device", "compare");
    expect_stdout_failure(run("/dev/full", 0, "model", "show", "llama3-8b", NULL), "No space left", "model show");
    expect_stdout_failure(run("/dev/full", 0, "cluster", "show", "dgx-h100", NULL), "No space left", "cluster show");
    expect_stdout_failure(run("/dev/full", 0, "models", NULL), "No space left", "models");
    expect_stdout_failure(run("/dev/full", 0, "--version", NULL), "No space left", "--version");
}

Test(io_out, stdout_under_a_file_size_limit_exits_3)
{
    char p[PATH_MAX];
    at(p, "out.txt");
    /* 512 bytes: every one of these prints more (600 to 10,000) on stdout; stderr, a file
     * under the same limit, gets less (a strategy that fits: no advice) */
    expect_stdout_failure(run(p, 512, PLAN, NULL), "File too large", "plan");
    expect_stdout_failure(run(p, 512, EST0, "--seq", "4096", "--format", "json", "--zero", "3", NULL), "File too large", "estimate json");
    expect_stdout_failure(run(p, 512, "models", NULL), "File too large", "models");
    expect_stdout_failure(run(p, 512, CMP, "--format", "csv", NULL), "File too large", "compare csv");
}

Test(io_out, emitted_file_under_a_file_size_limit_is_absent)
{
    /* ds_config.json is ~400 bytes: a 100-byte limit fails its write */
    res r = run(NULL, 100, EST, "--emit-deepspeed", "ds.json", NULL);
    cr_expect_eq(r.code, 3, "exit %d; %s", r.code, r.err);
    cr_expect(strstr(r.err, "ds.json") && strstr(r.err, "File too large"), "%s", r.err);
    cr_expect(!exists("ds.json"), "a partial ds.json was left");
    cr_expect_eq(entries(), 0, "temporary files left behind");
    r = run(NULL, 100, CMP, "--plot", "cost.svg", NULL);
    cr_expect_eq(r.code, 3, "exit %d; %s", r.code, r.err);
    cr_expect(strstr(r.err, "cost.svg") && strstr(r.err, "File too large"), "%s", r.err);
    cr_expect_eq(entries(), 0, "a partial cost.svg or a temporary was left");
}

/* ------------------------------------------------------------ item 3 */

Test(io_force, dev_full_fifo_and_symlink_are_never_replaced)
{
    res r = run(NULL, 0, EST, "--emit-deepspeed", "/dev/full", "--force", NULL);
    cr_expect_eq(r.code, 2, "exit %d; %s", r.code, r.err);
    cr_expect(strstr(r.err, "/dev/full") && strstr(r.err, "character device"), "%s", r.err);
    struct stat st;
    cr_expect(lstat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode), "/dev/full is no longer a device");
    char fifo[PATH_MAX], target[PATH_MAX], link_[PATH_MAX];
    at(fifo, "out.fifo");
    cr_assert(mkfifo(fifo, 0644) == 0);
    r = run(NULL, 0, EST, "--emit-megatron", "out.fifo", "--force", NULL);
    cr_expect_eq(r.sig, 0, "killed by signal %d (a hang?)", r.sig);
    cr_expect_eq(r.code, 2, "exit %d; %s", r.code, r.err);
    cr_expect(strstr(r.err, "FIFO"), "%s", r.err);
    cr_expect(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO was replaced");
    at(target, "real.json");
    at(link_, "link.json");
    FILE *f = fopen(target, "w");
    cr_assert(f && fputs("mine\n", f) >= 0 && fclose(f) == 0);
    cr_assert(symlink(target, link_) == 0);
    r = run(NULL, 0, EST, "--emit-deepspeed", "link.json", "--force", NULL);
    cr_expect_eq(r.code, 2, "exit %d; %s", r.code, r.err);
    cr_expect(strstr(r.err, "symbolic link") && strstr(r.err, "real.json"), "%s", r.err);
    cr_expect(lstat(link_, &st) == 0 && S_ISLNK(st.st_mode), "the link was replaced");
    r = run(NULL, 0, CMP, "--plot", "link.json", "--force", NULL);
    cr_expect_eq(r.code, 2, "compare --plot: exit %d; %s", r.code, r.err);
    /* a regular file is replaced with --force, refused without */
    r = run(NULL, 0, EST, "--emit-deepspeed", "real.json", NULL);
    cr_expect(r.code == 2 && strstr(r.err, "already exists"), "exit %d; %s", r.code, r.err);
    r = run(NULL, 0, EST, "--emit-deepspeed", "real.json", "--force", NULL);
    cr_expect_eq(r.code, 0, "exit %d; %s", r.code, r.err);
    cr_expect(lstat(link_, &st) == 0 && S_ISLNK(st.st_mode));
}

/* ------------------------------------------------------------ item 4 */

Test(io_set, a_bad_second_destination_writes_neither)
{
    res r = run(NULL, 0, EST, "--emit-deepspeed", "ok.json", "--emit-megatron", "/proc/nope/x.sh", NULL);
    cr_expect_eq(r.code, 2, "exit %d; %s", r.code, r.err);
    cr_expect(strstr(r.err, "/proc/nope/x.sh"), "%s", r.err);
    cr_expect(!exists("ok.json"), "ok.json was written although the set failed");
    r = run(NULL, 0, EST, "--emit-deepspeed", "no/dir/ds.json", "--emit-megatron", "ok.sh", NULL);
    cr_expect_eq(r.code, 2, "exit %d; %s", r.code, r.err);
    cr_expect(!exists("ok.sh"));
    cr_expect_eq(entries(), 0);
}

Test(io_set, a_write_failure_in_the_set_writes_neither)
{
    /* ds_config.json (~400 bytes) fits under 1000 bytes, the Megatron
     * arguments (~1,400) do not: neither may be left */
    res r = run(NULL, 1000, EST, "--emit-deepspeed", "ds.json", "--emit-megatron", "mg.sh", NULL);
    cr_expect_eq(r.code, 3, "exit %d; %s", r.code, r.err);
    cr_expect(strstr(r.err, "mg.sh") && strstr(r.err, "File too large"), "%s", r.err);
    cr_expect(!exists("ds.json"), "ds.json was left although mg.sh failed");
    cr_expect_eq(entries(), 0, "temporaries left");
    /* the same set without a limit writes both */
    r = run(NULL, 0, EST, "--emit-deepspeed", "ds.json", "--emit-megatron", "mg.sh", NULL);
    cr_expect_eq(r.code, 0, "%s", r.err);
    cr_expect(exists("ds.json") && exists("mg.sh"));
}

Test(io_set, lora_files_land_together)
{
    /* a LoRA plan writes ds_config.json, ds_config_trainer.json and
     * adapter_config.json: an existing adapter_config.json stops all three */
    char p[PATH_MAX];
    at(p, "adapter_config.json");
    FILE *f = fopen(p, "w");
    cr_assert(f && fclose(f) == 0);
    res r = run(NULL, 0, "estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--mode", "lora", "--zero", "1",
                "--emit-deepspeed", "ds.json", NULL);
    cr_expect_eq(r.code, 2, "exit %d; %s", r.code, r.err);
    cr_expect(strstr(r.err, "adapter_config.json") && strstr(r.err, "already exists"), "%s", r.err);
    cr_expect(!exists("ds.json") && !exists("ds_config_trainer.json"));
}

/* ------------------------------------------------------------ item 5 */

Test(io_in, a_fifo_as_input_never_hangs)
{
    char fifo[PATH_MAX];
    at(fifo, "in.json");
    cr_assert(mkfifo(fifo, 0644) == 0);
    const char *cases[][8] = {
        {"model", "show", "in.json", NULL},
        {"model", "show", "./in.json", NULL},
        {"estimate", "--model", "in.json", "--cluster", "dgx-h100", NULL},
        {"estimate", "--model", "llama3-8b", "--cluster", "in.json", NULL},
        {"cluster", "show", "in.json", NULL},
        {"estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--deepspeed", "in.json", NULL},
        {"compare", "--model", "in.json", "--clusters", "dgx-h100", "--train-tokens", "1T"},
        {"estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--megatron-args", "in.json", NULL},
        {"estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--fsdp-config", "in.json", NULL},
        {"estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--training-args", "in.json", NULL},
        {"sweep", "spec.json", "--output", "o.jsonl", "--resume", "in.json", NULL},
    };
    char spec[PATH_MAX];
    at(spec, "spec.json");
    FILE *f = fopen(spec, "w");
    cr_assert(f && fputs("{\"scenarios\": [{\"model\": \"gpt3-125m\", \"cluster\": \"dgx-h100\", \"global_batch\": 8}]}",
                         f) >= 0 && fclose(f) == 0);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char **c = cases[i];
        res r = run(NULL, 0, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], NULL);
        cr_expect_eq(r.sig, 0, "%s %s %s: killed by signal %d (hung)", c[0], c[1], c[2], r.sig);
        cr_expect_eq(r.code, 2, "%s %s: exit %d; %s", c[0], c[1], r.code, r.err);
        cr_expect(strstr(r.err, "in.json") && strstr(r.err, "FIFO"), "%s", r.err);
    }
    /* a FIFO named without a slash or .json is read as a path, not a preset */
    char fifo2[PATH_MAX];
    at(fifo2, "pipe");
    cr_assert(mkfifo(fifo2, 0644) == 0);
    res r = run(NULL, 0, "model", "show", "pipe", NULL);
    cr_expect(r.code == 2 && strstr(r.err, "pipe: is a FIFO"), "exit %d; %s", r.code, r.err);
}

/* ------------------------------------------------------------ item 6 */

/* A model and a cluster whose names and descriptions hold ESC sequences,
 * a newline, BEL and a C1 CSI (U+009B): every table prints them with '?'
 * and never emits a control byte other than the line ends. */
static const char EVIL_MODEL[] =
    "{\"name\": \"ev\\u001b[31mil\\nX,y\", \"description\": \"d\\u001b]0;title\\u0007\", \"source\": \"s\\u009b2Jx\",\n"
    " \"layers\": 32, \"hidden\": 4096, \"heads\": 32, \"kv_heads\": 8, \"ffn\": 14336, \"gated_mlp\": true,\n"
    " \"activation\": \"silu\", \"vocab\": 128256, \"seq\": 8192, \"tied_embeddings\": false, \"norm\": \"rmsnorm\",\n"
    " \"position\": \"rope\"}\n";
static const char EVIL_CLUSTER[] =
    "{\"name\": \"c\\u001b[2J8\", \"description\": \"x\\ny\", \"gpu\": \"h100-sxm\", \"nodes\": 1, \"gpus_per_node\": 8,\n"
    " \"intra\": {\"kind\": \"nvlink\", \"gbytes_per_s_bidir\": 900, \"latency_us\": 3.4},\n"
    " \"inter\": {\"kind\": \"infiniband\", \"nics\": 8, \"nic_gbit_s\": 400, \"latency_us\": 5},\n"
    " \"pcie\": {\"gen\": 5}, \"host_mem_gib\": 2048}\n";

static void expect_clean(res r, const char *what, const char *needle)
{
    cr_expect_eq(r.code, 0, "%s: exit %d; %s", what, r.code, r.err);
    for (const unsigned char *p = (const unsigned char *)r.out; *p; p++) {
        cr_expect(*p >= 0x20 || *p == '\n', "%s: control byte 0x%02x in stdout: %.200s", what, *p,
                  (const char *)p - 20 > r.out ? (const char *)p - 20 : r.out);
        cr_expect(!(*p == 0xc2 && p[1] == 0x9b), "%s: C1 CSI in stdout", what);
        if (*p < 0x20 && *p != '\n') break;
    }
    cr_expect(strstr(r.out, needle), "%s: \"%s\" not in stdout: %.400s", what, needle, r.out);
    cr_expect(!strstr(r.out, "il\nX"), "%s: the name's newline was printed raw", what);
}

Test(io_text, control_characters_in_names_are_escaped)
{
    char pm[PATH_MAX], pc[PATH_MAX];
    at(pm, "evil.json");
    at(pc, "evilc.json");
    FILE *f = fopen(pm, "w");
    cr_assert(f && fputs(EVIL_MODEL, f) >= 0 && fclose(f) == 0);
    f = fopen(pc, "w");
    cr_assert(f && fputs(EVIL_CLUSTER, f) >= 0 && fclose(f) == 0);
    expect_clean(run(NULL, 0, "model", "show", "evil.json", NULL), "model show", "ev?[31mil?X,y");
    expect_clean(run(NULL, 0, "cluster", "show", "evilc.json", NULL), "cluster show", "c?[2J8");
    expect_clean(run(NULL, 0, "estimate", "--model", "evil.json", "--cluster", "evilc.json", "--zero", "1", NULL),
                 "estimate", "ev?[31mil?X,y on 8 x h100-sxm");
    expect_clean(run(NULL, 0, "plan", "--model", "evil.json", "--cluster", "evilc.json", "--global-batch", "64",
                     "--top", "1", NULL), "plan", "ev?[31mil?X,y on 8 x h100-sxm (c?[2J8)");
    expect_clean(run(NULL, 0, "plan", "--model", "evil.json", "--cluster", "evilc.json", "--global-batch", "64",
                     "--top", "1", "--format", "csv", NULL), "plan csv", ",\"ev?[31mil?X,y\",c?[2J8,");
    expect_clean(run(NULL, 0, "compare", "--model", "evil.json", "--clusters", "evilc.json", "--train-tokens", "1T",
                     NULL), "compare", "c?[2J8");
}

/* Bytes of the file dir/name other than '\n' and '\t' below 0x20, DEL, or
 * a C1 control in UTF-8 (0xc2 0x80-0x9f): -1 when the file cannot be read. */
static int control_bytes(const char *name)
{
    char p[PATH_MAX];
    at(p, name);
    FILE *f = fopen(p, "rb");
    if (!f) return -1;
    int n = 0, c, prev = 0;
    while ((c = getc(f)) != EOF) {
        n += (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || (prev == 0xc2 && c >= 0x80 && c <= 0x9f);
        prev = c;
    }
    fclose(f);
    return n;
}

/* The launcher files put the model's and cluster's names in comments (a
 * sourced shell script, TOML, YAML, README): a newline there would end the
 * comment, and `source megatron_args.sh` would run the rest of the name as
 * a command. Every text file of every framework's folder holds no control
 * byte, and sourcing the arguments runs nothing from the name. */
Test(io_text, launch_files_keep_names_in_their_comments)
{
    static const char MODEL[] =
        "{\"name\": \"m\\ntouch PWNED\\n\\u001b[31m\", \"layers\": 32, \"hidden\": 4096, \"heads\": 32, \"kv_heads\": 8,\n"
        " \"ffn\": 14336, \"gated_mlp\": true, \"activation\": \"silu\", \"vocab\": 128256, \"seq\": 8192,\n"
        " \"tied_embeddings\": false, \"norm\": \"rmsnorm\", \"position\": \"rope\"}\n";
    static const char CLUSTER[] =
        "{\"name\": \"c\\ntouch PWNED2\", \"gpu\": \"h100-sxm\", \"nodes\": 1, \"gpus_per_node\": 8,\n"
        " \"intra\": {\"kind\": \"nvlink\", \"gbytes_per_s_bidir\": 900, \"latency_us\": 3.4},\n"
        " \"inter\": {\"kind\": \"infiniband\", \"nics\": 8, \"nic_gbit_s\": 400, \"latency_us\": 5},\n"
        " \"pcie\": {\"gen\": 5}, \"host_mem_gib\": 2048}\n";
    char pm[PATH_MAX], pc[PATH_MAX];
    at(pm, "m.json");
    at(pc, "c.json");
    FILE *f = fopen(pm, "w");
    cr_assert(f && fputs(MODEL, f) >= 0 && fclose(f) == 0);
    f = fopen(pc, "w");
    cr_assert(f && fputs(CLUSTER, f) >= 0 && fclose(f) == 0);
    static const char *const fws[] = {"megatron", "megatron-deepspeed", "deepspeed", "fsdp"};
    static const char *const files[] = {"README.txt", "megatron_args.sh", "megatron_deepspeed_args.sh",
                                        "torchtitan.toml", "accelerate_fsdp.yaml", "ds_config.json",
                                        "training_args.json", "plan.json"};
    for (size_t i = 0; i < sizeof fws / sizeof *fws; i++) {
        char out[64], name[PATH_MAX];
        snprintf(out, sizeof out, "o_%s", fws[i]);
        res r = run(NULL, 0, "plan", "--model", "m.json", "--cluster", "c.json", "--global-batch", "64", "--top", "1",
                    "--framework", fws[i], "--emit", out, NULL);
        cr_expect_eq(r.code, 0, "%s: exit %d; %s", fws[i], r.code, r.err);
        int seen = 0;
        for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
            snprintf(name, sizeof name, "%s/1/%s", out, files[k]);
            int n = control_bytes(name);
            seen += n >= 0;
            cr_expect(n <= 0, "%s: %d control bytes", name, n);
        }
        cr_expect_geq(seen, 3, "%s: the folder holds %d of the files looked for", fws[i], seen);
    }
    /* the two-file emits of estimate too */
    res r = run(NULL, 0, "estimate", "--model", "m.json", "--cluster", "c.json", "--zero", "1", "--emit-megatron", "mg.sh",
                NULL);
    cr_expect_eq(r.code, 0, "%s", r.err);
    cr_expect_eq(control_bytes("mg.sh"), 0);
    char cmd[PATH_MAX + 200];
    snprintf(cmd, sizeof cmd, "cd '%s' && bash -c 'source o_megatron/1/megatron_args.sh && source mg.sh' >/dev/null 2>&1",
             dir);
    cr_expect_eq(system(cmd), 0, "sourcing the arguments failed");
    cr_expect(!exists("PWNED") && !exists("PWNED2"), "sourcing megatron_args.sh ran a command from a name");
}

/* ------------------------------------------------------------ item 8 */

Test(io_text, long_arguments_are_echoed_capped)
{
    size_t n = 100000;
    char *big = malloc(n + 1);
    cr_assert(big);
    memset(big, '7', n);
    big[n] = '\0';
    res r = run(NULL, 0, "estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--tp", big, NULL);
    cr_expect(r.code == 2 && strlen(r.err) < 300 && strstr(r.err, "(100000 characters)"), "exit %d, %zu bytes: %.300s",
              r.code, strlen(r.err), r.err);
    memset(big, 'q', n);
    r = run(NULL, 0, "model", "show", big, NULL);
    cr_expect(r.code == 2 && strlen(r.err) < 300, "exit %d, %zu bytes: %.300s", r.code, strlen(r.err), r.err);
    big[0] = '-', big[1] = '-';
    r = run(NULL, 0, "plan", big, NULL);
    cr_expect(r.code == 2 && strlen(r.err) < 300, "exit %d, %zu bytes: %.300s", r.code, strlen(r.err), r.err);
    free(big);
}

/* ------------------------------------------------------------ item 16 */

Test(io_text, one_number_parser_for_every_flag)
{
    /* --train-tokens 300B works on plan as on compare: 3e11 tokens */
    res r = run(NULL, 0, PLAN0, "--global-batch", "64", "--top", "1", "--train-tokens", "300B", NULL);
    cr_expect_eq(r.code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "3e+11 tokens"), "%s", r.out);
    r = run(NULL, 0, EST, "--train-tokens", "0.3T", NULL);
    cr_expect(r.code == 0 && strstr(r.out, "3e+11 tokens"), "%s%s", r.err, r.out);
    /* integers take suffixes too: 1Ki = 1024 sequences, 8Ki = 8192 tokens */
    r = run(NULL, 0, EST0, "--zero", "1", "--global-batch", "1Ki", "--seq", "8Ki", "--format", "json", NULL);
    cr_expect_eq(r.code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"global_batch\":\t1024") && strstr(r.out, "\"seq\":\t8192"), "%.600s", r.out);
    r = run(NULL, 0, PLAN0, "--top", "2", "--tp", "2,4,8", "--global-batch", "0.128k", NULL);
    cr_expect_eq(r.code, 0, "%s", r.err);
    /* a fraction is still not an integer, and a bad suffix is refused */
    r = run(NULL, 0, EST, "--global-batch", "1.5k5", NULL);
    cr_expect(r.code == 2 && strstr(r.err, "--global-batch"), "exit %d; %s", r.code, r.err);
    r = run(NULL, 0, EST, "--micro-batch", "0.5k", "--global-batch", "4000", NULL);
    cr_expect(r.code == 0, "0.5k = 500 is an integer: exit %d; %s", r.code, r.err);
}

Test(io_text, fail_if_oom)
{
    /* Llama-3-8B without ZeRO on H100s: ~178 GiB per GPU, does not fit */
    res r = run(NULL, 0, "estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", NULL);
    cr_expect(r.code == 0 && strstr(r.out, "DOES NOT FIT"), "exit %d: a result, exit 0 by default", r.code);
    r = run(NULL, 0, "estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--fail-if-oom", NULL);
    cr_expect_eq(r.code, 1, "exit %d; %s", r.code, r.err);
    cr_expect(strstr(r.out, "DOES NOT FIT") && strstr(r.err, "does not fit") && strstr(r.err, "--fail-if-oom"),
              "%s", r.err);
    r = run(NULL, 0, "estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--zero", "3", "--seq", "4096",
            "--fail-if-oom", NULL);
    cr_expect_eq(r.code, 0, "fits with ZeRO-3: exit %d; %s", r.code, r.err);
}

/* ------------------------------------------------------------ item 14 */

Test(io_text, hf_trainer_auto_config_with_micro_batch)
{
    char p[PATH_MAX];
    at(p, "ds_hf.json");
    FILE *f = fopen(p, "w");
    cr_assert(f);
    fputs("{\"bf16\": {\"enabled\": \"auto\"}, \"zero_optimization\": {\"stage\": 3, \"reduce_bucket_size\": \"auto\"},\n"
          " \"gradient_accumulation_steps\": \"auto\", \"train_batch_size\": \"auto\",\n"
          " \"train_micro_batch_size_per_gpu\": \"auto\"}\n", f);
    cr_assert(fclose(f) == 0);
    res r = run(NULL, 0, "estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--deepspeed", "ds_hf.json",
                "--micro-batch", "2", "--global-batch", "64", NULL);
    cr_expect_eq(r.code, 0, "exit %d; %s", r.code, r.err);
    cr_expect(strstr(r.out, "micro-batch 2 x 4"), "%.300s", r.out);
    cr_expect(strstr(r.err, "\"auto\" filled in") && strstr(r.err, "train_micro_batch_size_per_gpu"), "%s", r.err);
    /* no flags: the Trainer's defaults, 8 per GPU */
    r = run(NULL, 0, "estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--deepspeed", "ds_hf.json", NULL);
    cr_expect(r.code == 0 && strstr(r.out, "micro-batch 8 x 1"), "exit %d; %s%.300s", r.code, r.err, r.out);
}

/* ------------------------------------------------------------ item 13 */

Test(io_text, estimate_out_of_memory_says_what_would_fit)
{
    res r = run(NULL, 0, "estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", NULL);
    cr_expect_eq(r.code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "Does not fit: needs ") && strstr(r.out, "the largest term is ") &&
              strstr(r.out, "What would fit (each re-estimated") && strstr(r.out, "- ZeRO-"), "%s", r.out);
    /* JSON keeps stdout a JSON object; the advice goes to stderr */
    r = run(NULL, 0, "estimate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--format", "json", NULL);
    cr_expect(r.code == 0 && r.out[0] == '{' && !strstr(r.out, "What would fit") && strstr(r.err, "What would fit"),
              "%s", r.err);
    /* from a ds_config.json: the changes name its keys */
    char p[PATH_MAX];
    at(p, "ds.json");
    FILE *f = fopen(p, "w");
    cr_assert(f && fputs("{\"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},"
                         " \"zero_optimization\": {\"stage\": 1}}", f) >= 0 && fclose(f) == 0);
    r = run(NULL, 0, "estimate", "--model", "llama3-70b", "--cluster", "dgx-h100", "--deepspeed", "ds.json", NULL);
    cr_expect_eq(r.code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "DOES NOT FIT") && strstr(r.out, "(zero_optimization.stage)"), "%s", r.out);
}

/* plan --emit DIR: one folder per plan, DIR/1 even for a single plan, parents
 * made as mkdir -p; a failed set leaves no folder behind. */
Test(io_set, plan_emit_numbers_its_folders_and_makes_parents)
{
    res r = run(NULL, 0, "plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--global-batch", "64", "--top", "1",
                "--emit", "a/b", NULL);
    cr_expect_eq(r.code, 0, "exit %d; %s", r.code, r.err);
    cr_expect(exists("a/b/1/plan.json") && exists("a/b/1/README.txt"), "%s", r.err);
    r = run(NULL, 0, PLAN, "--emit", "c/d", NULL);
    cr_expect_eq(r.code, 0, "exit %d; %s", r.code, r.err);
    cr_expect(exists("c/d/1/plan.json") && exists("c/d/2/plan.json"));
    /* under a file size limit the set fails: neither c2 nor its folders stay */
    r = run(NULL, 200, PLAN, "--emit", "e/f", NULL);
    cr_expect_eq(r.code, 3, "exit %d; %s", r.code, r.err);
    cr_expect(!exists("e"), "a failed set left its folders");
}

/* An emit over an earlier one never leaves a folder mixing two plans' files
 * or old plans numbered past the new ones: without --force it is refused
 * naming the old file (nothing written); with --force the old launch files
 * go once the new set is written. A folder without a plan.json is not an
 * emit's: its files are left alone. */
Test(io_set, emit_over_an_earlier_emit_leaves_no_stale_plan)
{
    res r = run(NULL, 0, "plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--nodes", "2", "--global-batch", "512",
                "--top", "3", "--framework", "megatron", "--emit", "st", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(exists("st/3/megatron_args.sh"));
    r = run(NULL, 0, "plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--nodes", "2", "--global-batch", "512",
            "--top", "2", "--framework", "deepspeed", "--emit", "st", NULL);
    cr_expect_eq(r.code, 2, "exit %d; %s", r.code, r.err);
    cr_expect(strstr(r.err, "st/1/megatron_args.sh: left by an earlier emit"), "%s", r.err);
    cr_expect(!exists("st/1/ds_config.json"), "nothing written");
    r = run(NULL, 0, "plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--nodes", "2", "--global-batch", "512",
            "--top", "2", "--framework", "deepspeed", "--emit", "st", "--force", NULL);
    cr_expect_eq(r.code, 0, "exit %d; %s", r.code, r.err);
    cr_expect(exists("st/1/ds_config.json") && exists("st/2/ds_config.json"));
    cr_expect(!exists("st/1/megatron_args.sh") && !exists("st/2/megatron_args.sh"), "stale launch files");
    cr_expect(!exists("st/3"), "an old plan numbered past the new ones");
    /* a user's files of the same names (even a plan.json parplan printed),
     * in the folder and in a plan folder no emit's manifest lists: kept */
    char p[PATH_MAX];
    static const char *const mine[] = {"u", "u/2", "u/training_args.json", "u/plan.json", "u/2/ds_config.json",
                                       "u/2/plan.json"};
    for (size_t i = 0; i < sizeof mine / sizeof *mine; i++) {
        at(p, mine[i]);
        if (!strchr(mine[i], '.')) {
            cr_assert_eq(mkdir(p, 0777), 0);
            continue;
        }
        FILE *f = fopen(p, "w");
        cr_assert(f && fputs("{}", f) >= 0 && fclose(f) == 0);
    }
    r = run(NULL, 0, "plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--global-batch", "64", "--top", "1",
            "--framework", "megatron", "--emit", "u", "--force", NULL);
    cr_expect_eq(r.code, 0, "exit %d; %s", r.code, r.err);
    for (size_t i = 2; i < sizeof mine / sizeof *mine; i++) cr_expect(exists(mine[i]), "%s was removed", mine[i]);
    /* a plan folder that is a link to a directory is not entered */
    at(p, "v");
    cr_assert_eq(mkdir(p, 0777), 0);
    r = run(NULL, 0, "plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--global-batch", "64", "--top", "2",
            "--framework", "megatron", "--emit", "w", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    char q[PATH_MAX];
    at(p, "w/2"), at(q, "v/2");
    cr_assert_eq(rename(p, q), 0);
    cr_assert_eq(symlink(q, p), 0);
    r = run(NULL, 0, "plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--global-batch", "64", "--top", "1",
            "--framework", "megatron", "--emit", "w", "--force", NULL);
    cr_expect_eq(r.code, 0, "exit %d; %s", r.code, r.err);
    cr_expect(exists("v/2/megatron_args.sh") && exists("v/2/plan.json"), "files behind a link were removed");
}
