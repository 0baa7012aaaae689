/*
 * test_report_cli.c — `--report FILE.html` on estimate, plan and compare, from
 * the built binary: the file is written whole, an existing one is kept
 * unless --force, a write that fails exits 2 naming the file and leaves
 * nothing behind, a bad SOURCE_DATE_EPOCH exits 2, and the header's date is
 * SOURCE_DATE_EPOCH's (so two runs give the same bytes).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[PATH_MAX / 2]; /* short enough for a file name after it */
static char err_text[4096];

static void setup(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/parplan-report-XXXXXX", t && *t ? t : "/tmp");
    cr_assert(mkdtemp(dir), "mkdtemp");
}

static void teardown(void)
{
    char cmd[PATH_MAX + 16];
    chmod(dir, 0700);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* Runs the CLI with args (NULL-terminated); stdout to /dev/null, stderr
 * into err_text; epoch sets SOURCE_DATE_EPOCH (NULL: unset). Exit status. */
static int cli(const char *epoch, const char *const *args)
{
    char ep[PATH_MAX];
    snprintf(ep, sizeof ep, "%s/.stderr", dir);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR), e = open(ep, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(null, 0);
        dup2(null, 1);
        dup2(e, 2);
        if (epoch) setenv("SOURCE_DATE_EPOCH", epoch, 1);
        else unsetenv("SOURCE_DATE_EPOCH");
        const char *argv[64] = {PARPLAN_CLI};
        for (int i = 0; args[i] && i < 62; i++) argv[i + 1] = args[i];
        execv(PARPLAN_CLI, (char *const *)argv);
        _exit(127);
    }
    int status;
    cr_assert(waitpid(pid, &status, 0) == pid);
    FILE *f = fopen(ep, "r");
    size_t n = f ? fread(err_text, 1, sizeof err_text - 1, f) : 0;
    err_text[n] = '\0';
    if (f) fclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert(s);
    s[fread(s, 1, (size_t)n, f)] = '\0';
    fclose(f);
    return s;
}

/* Files in dir other than the captures (a temporary left behind shows). */
static int files_in_dir(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    if (d) closedir(d);
    return n;
}

#define EST(path, ...)                                                                                             \
    (const char *[]){"estimate", "--model", "gpt3-125m", "--cluster", "dgx-h100", "--gpus", "2", "--pp", "2",     \
                     "--global-batch", "8", "--report", path, __VA_ARGS__, NULL}

TestSuite(report_cli, .init = setup, .fini = teardown);

Test(report_cli, estimate_writes_a_reproducible_page)
{
    char a[PATH_MAX], b[PATH_MAX];
    snprintf(a, sizeof a, "%s/a.html", dir);
    snprintf(b, sizeof b, "%s/b.html", dir);
    cr_assert_eq(cli("1700000000", EST(a, "--seq", "1024")), 0, "%s", err_text);
    cr_assert_eq(cli("1700000000", EST(b, "--seq", "1024")), 0, "%s", err_text);
    cr_expect(strstr(err_text, "wrote "), "says what it wrote: %s", err_text);
    char *x = slurp(a), *y = slurp(b);
    cr_assert(x && y);
    cr_expect(strstr(x, "2023-11-14 22:13 UTC"), "the date is SOURCE_DATE_EPOCH's");
    cr_expect(strstr(x, "parplan estimate --model gpt3-125m --cluster dgx-h100 --gpus 2 --pp 2"), "the command line");
    /* the same run gives the same bytes but for the file name in the command line */
    char *ax = strstr(x, "a.html"), *by = strstr(y, "b.html");
    cr_assert(ax && by);
    *ax = *by = 'z';
    cr_expect_str_eq(x, y);
    cr_expect(strstr(x, "</html>\n"), "complete");
    free(x);
    free(y);
}

Test(report_cli, existing_file_kept_unless_force)
{
    char a[PATH_MAX];
    snprintf(a, sizeof a, "%s/a.html", dir);
    FILE *f = fopen(a, "w");
    fputs("mine", f);
    fclose(f);
    cr_expect_eq(cli("0", EST(a, "--seq", "1024")), 2);
    cr_expect(strstr(err_text, "a.html: already exists; not overwritten (use --force to replace it)"), "%s", err_text);
    char *s = slurp(a);
    cr_expect_str_eq(s, "mine");
    free(s);
    cr_expect_eq(cli("0", EST(a, "--seq", "1024", "--force")), 0, "%s", err_text);
    s = slurp(a);
    cr_expect(strncmp(s, "<!DOCTYPE html>", 15) == 0);
    free(s);
    cr_expect_eq(files_in_dir(), 1, "no temporary left behind");
}

Test(report_cli, failed_write_exits_2_and_leaves_nothing)
{
    if (geteuid() == 0) {
        /* root writes anywhere: a path through a regular file fails for anyone */
        char file[PATH_MAX], bad[PATH_MAX];
        snprintf(file, sizeof file, "%s/plain", dir);
        fclose(fopen(file, "w"));
        snprintf(bad, sizeof bad, "%s/plain/r.html", dir);
        cr_expect_eq(cli("0", EST(bad, "--seq", "1024")), 2);
        cr_expect(strstr(err_text, "plain/r.html: ") && strstr(err_text, "not a directory"), "%s", err_text);
    } else {
        char sub[PATH_MAX], bad[PATH_MAX];
        snprintf(sub, sizeof sub, "%s/ro", dir);
        cr_assert(mkdir(sub, 0500) == 0);
        snprintf(bad, sizeof bad, "%s/ro/r.html", dir);
        cr_expect_eq(cli("0", EST(bad, "--seq", "1024")), 2);
        cr_expect(strstr(err_text, "ro/r.html: cannot create"), "%s", err_text);
    }
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s/adir", dir);
    cr_assert(mkdir(d, 0700) == 0);
    cr_expect_eq(cli("0", EST(d, "--seq", "1024")), 2, "a directory");
    cr_expect(strstr(err_text, "adir: is a directory"), "%s", err_text);
    cr_expect_eq(cli("0", EST("", "--seq", "1024")), 2);
    cr_expect(strstr(err_text, "--report: expected a file name"), "%s", err_text);
}

Test(report_cli, bad_source_date_epoch_exits_2)
{
    char a[PATH_MAX];
    snprintf(a, sizeof a, "%s/a.html", dir);
    cr_expect_eq(cli("yesterday", EST(a, "--seq", "1024")), 2);
    cr_expect(strstr(err_text, "SOURCE_DATE_EPOCH: expected seconds since 1970-01-01"), "%s", err_text);
    cr_expect_eq(access(a, F_OK), -1, "nothing written");
}

Test(report_cli, plan_and_compare_write_pages)
{
    char a[PATH_MAX], b[PATH_MAX];
    snprintf(a, sizeof a, "%s/plan.html", dir);
    snprintf(b, sizeof b, "%s/cmp.html", dir);
    cr_assert_eq(cli("0", (const char *[]){"plan", "--model", "gpt3-125m", "--cluster", "dgx-h100", "--gpus", "8",
                                          "--global-batch", "64", "--seq", "1024", "--top", "2", "--report", a, NULL}),
                 0, "%s", err_text);
    char *s = slurp(a);
    cr_assert(s);
    cr_expect(strstr(s, "<pre class=\"explain\">"), "the report says why #1 wins even without --explain");
    cr_expect(strstr(s, "id=\"topk\""));
    free(s);
    cr_expect_eq(cli("0", (const char *[]){"plan", "--model", "gpt3-125m", "--cluster", "dgx-h100", "--gpus", "8",
                                          "--global-batch", "64", "--seq", "1024", "--report", a, NULL}),
                 2, "plan keeps an existing report without --force");
    cr_assert_eq(cli("0", (const char *[]){"compare", "--model", "gpt3-125m", "--clusters", "dgx-h100,dgx-a100-80g",
                                          "--gpus", "8", "--global-batch", "64", "--seq", "1024", "--train-tokens",
                                          "1B", "--report", b, NULL}),
                 0, "%s", err_text);
    s = slurp(b);
    cr_assert(s);
    cr_expect(strstr(s, "class=\"chart pareto\""));
    free(s);
}
