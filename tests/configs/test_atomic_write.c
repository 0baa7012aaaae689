/*
 * test_atomic_write.c — pp_write_files / pp_write_check (configs/atomic_write.c):
 * a set of files lands whole or not at all (a bad destination found before
 * anything is written; a write failure under a file size limit; an install
 * that fails after earlier files were renamed in, undone); --force replaces
 * regular files only (never a symbolic link, a device, a FIFO or a
 * directory); the status says bad path (exit 2) or failed write (exit 3).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "configs/configs.h"
#include "parplan.h"

static char dir[256];

static void mk(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/pp-atomic-XXXXXX", base && *base ? base : "/tmp");
    cr_assert(mkdtemp(dir));
}

static void rm_all(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert(system(cmd) == 0);
}

TestSuite(atomic_write, .init = mk, .fini = rm_all);

static void at(char *buf, const char *name) { snprintf(buf, PATH_MAX, "%s/%s", dir, name); }

static int exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

static char *slurp(const char *p)
{
    FILE *f = fopen(p, "rb");
    cr_assert(f, "cannot open %s", p);
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void put(const char *p, const char *text)
{
    FILE *f = fopen(p, "wb");
    cr_assert(f);
    fputs(text, f);
    cr_assert(fclose(f) == 0);
}

/* Entries of dir whose name contains "tmp-" or "old-": leftovers. */
static int leftovers(void)
{
    DIR *d = opendir(dir);
    cr_assert(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strstr(e->d_name, ".tmp-") || strstr(e->d_name, ".old-");
    closedir(d);
    return n;
}

Test(atomic_write, a_set_with_a_bad_destination_writes_nothing)
{
    char a[PATH_MAX], b[PATH_MAX];
    at(a, "ds_config.json");
    at(b, "no/such/dir/args.sh");
    pp_out_file f[2] = {{a, "{}\n", 3}, {b, "x\n", 2}};
    pp_error err = {""};
    cr_assert_eq(pp_write_files(f, 2, 0, &err), PP_ERR_IO);
    cr_expect(strstr(err.msg, "args.sh") && strstr(err.msg, "No such file or directory"), "%s", err.msg);
    cr_expect(!exists(a), "the first file of the set was written although the second cannot be");
    cr_expect_eq(leftovers(), 0);
    /* /proc/nope: the example */
    f[1].path = "/proc/nope/x.sh";
    cr_assert_eq(pp_write_files(f, 2, 1, &err), PP_ERR_IO);
    cr_expect(!exists(a));
    cr_expect_eq(pp_status_exit_code(PP_ERR_IO), 2, "a bad path exits 2");
}

Test(atomic_write, the_same_file_twice_is_refused)
{
    char a[PATH_MAX], b[PATH_MAX];
    at(a, "x.json");
    snprintf(b, sizeof b, "%s/./x.json", dir);
    pp_out_file f[2] = {{a, "1", 1}, {b, "2", 1}};
    pp_error err = {""};
    cr_assert_eq(pp_write_files(f, 2, 1, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "given twice"), "%s", err.msg);
    cr_expect(!exists(a));
}

/* In a child with a 4 KiB file size limit (ulimit -f), the second file of a
 * set is too large: the write fails with EFBIG, exit 3, and the first file
 * (which fit) is not left behind. */
Test(atomic_write, a_write_failure_under_a_file_size_limit_writes_nothing)
{
    char a[PATH_MAX], b[PATH_MAX];
    at(a, "small.json");
    at(b, "big.json");
    static char big[65536];
    memset(big, 'x', sizeof big);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        struct rlimit rl = {4096, 4096};
        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(10);
        pp_out_file f[2] = {{a, "{}\n", 3}, {b, big, sizeof big}};
        pp_error err = {""};
        pp_status st = pp_write_files(f, 2, 0, &err);
        if (st != PP_ERR_INTERNAL) _exit(11);
        if (!strstr(err.msg, "big.json") || !strstr(err.msg, "File too large")) _exit(12);
        _exit(0);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "killed by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    cr_expect_eq(WEXITSTATUS(status), 0, "child check %d failed (11: status, 12: message)", WEXITSTATUS(status));
    cr_expect(!exists(a), "small.json was installed although big.json failed");
    cr_expect(!exists(b));
    cr_expect_eq(leftovers(), 0, "temporary files left behind");
    cr_expect_eq(pp_status_exit_code(PP_ERR_INTERNAL), 3, "a failed write exits 3");
}

/* Before installing file 1, something takes its name: the install of file
 * 1 fails after file 0 was renamed in, and file 0 is removed again. */
static void take_name(int i, void *user)
{
    if (i == 1) put((const char *)user, "someone else's\n");
}

Test(atomic_write, a_failed_install_removes_the_files_already_in_place)
{
    char a[PATH_MAX], b[PATH_MAX];
    at(a, "first.json");
    at(b, "second.sh");
    pp_out_file f[2] = {{a, "{}\n", 3}, {b, "x\n", 2}};
    pp_error err = {""};
    cr_assert_eq(pp__write_files_ex(f, 2, 0, &err, take_name, b), PP_ERR_IO);
    cr_expect(strstr(err.msg, "second.sh") && strstr(err.msg, "already exists") && strstr(err.msg, "removed again"),
              "%s", err.msg);
    cr_expect(!exists(a), "first.json stayed although the set failed");
    cr_expect_str_eq(slurp(b), "someone else's\n", "the other writer's file is untouched");
    cr_expect_eq(leftovers(), 0);
}

/* With --force, an old file replaced earlier in the set is put back. */
static void make_dir(int i, void *user)
{
    if (i == 1) {
        unlink((const char *)user);
        cr_assert(mkdir((const char *)user, 0755) == 0);
    }
}

Test(atomic_write, a_failed_forced_install_restores_the_old_files)
{
    char a[PATH_MAX], b[PATH_MAX];
    at(a, "first.json");
    at(b, "second.sh");
    put(a, "OLD first\n");
    put(b, "OLD second\n");
    pp_out_file f[2] = {{a, "NEW first\n", 10}, {b, "NEW second\n", 11}};
    pp_error err = {""};
    pp_status st = pp__write_files_ex(f, 2, 1, &err, make_dir, b);
    cr_assert_neq(st, PP_OK);
    cr_expect(strstr(err.msg, "second.sh") && strstr(err.msg, "removed again"), "%s", err.msg);
    cr_expect_str_eq(slurp(a), "OLD first\n", "the first file is the old one again");
    cr_expect_eq(leftovers(), 0);
    /* and when nothing interferes, both are replaced */
    rmdir(b);
    put(b, "OLD second\n");
    cr_assert_eq(pp_write_files(f, 2, 1, &err), PP_OK, "%s", err.msg);
    cr_expect_str_eq(slurp(a), "NEW first\n");
    cr_expect_str_eq(slurp(b), "NEW second\n");
    cr_expect_eq(leftovers(), 0);
}

Test(atomic_write, force_replaces_only_regular_files)
{
    char reg[PATH_MAX], link_[PATH_MAX], target[PATH_MAX], fifo[PATH_MAX], sub[PATH_MAX];
    at(reg, "plain.json");
    at(target, "target.json");
    at(link_, "link.json");
    at(fifo, "fifo.json");
    at(sub, "subdir");
    put(reg, "old\n");
    put(target, "target\n");
    cr_assert(symlink(target, link_) == 0);
    cr_assert(mkfifo(fifo, 0644) == 0);
    cr_assert(mkdir(sub, 0755) == 0);
    pp_error err = {""};
    /* a regular file: refused without force, replaced with it */
    cr_expect_eq(pp_write_file(reg, "new\n", 4, 0, &err), PP_ERR_IO);
    cr_expect(strstr(err.msg, "already exists") && strstr(err.msg, "--force"), "%s", err.msg);
    cr_expect_eq(pp_write_file(reg, "new\n", 4, 1, &err), PP_OK, "%s", err.msg);
    cr_expect_str_eq(slurp(reg), "new\n");
    /* a symbolic link: refused even with force, naming its target; the
     * link and its target stay as they were */
    cr_expect_eq(pp_write_file(link_, "new\n", 4, 1, &err), PP_ERR_IO);
    cr_expect(strstr(err.msg, "symbolic link") && strstr(err.msg, "target.json"), "%s", err.msg);
    struct stat st;
    cr_expect(lstat(link_, &st) == 0 && S_ISLNK(st.st_mode), "the link was replaced");
    cr_expect_str_eq(slurp(target), "target\n");
    /* a FIFO: refused at once (no open, so no hang) */
    cr_expect_eq(pp_write_file(fifo, "new\n", 4, 1, &err), PP_ERR_IO);
    cr_expect(strstr(err.msg, "FIFO"), "%s", err.msg);
    cr_expect(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    /* a character device (/dev/full, /dev/null): refused, never replaced */
    cr_expect_eq(pp_write_file("/dev/full", "new\n", 4, 1, &err), PP_ERR_IO);
    cr_expect(strstr(err.msg, "/dev/full") && strstr(err.msg, "character device"), "%s", err.msg);
    cr_expect(lstat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode), "/dev/full was replaced");
    /* a directory */
    cr_expect_eq(pp_write_file(sub, "new\n", 4, 1, &err), PP_ERR_IO);
    cr_expect(strstr(err.msg, "a directory"), "%s", err.msg);
    cr_expect_eq(leftovers(), 0);
}

Test(atomic_write, check_names_the_reason_without_creating_anything)
{
    char p[PATH_MAX], f[PATH_MAX];
    pp_error err = {""};
    at(p, "new.json");
    cr_expect_eq(pp_write_check(p, 0, &err), PP_OK, "%s", err.msg);
    cr_expect(!exists(p));
    cr_expect_eq(pp_write_check("", 0, &err), PP_ERR_INPUT);
    at(f, "file.json");
    put(f, "");
    at(p, "file.json/x.json");
    cr_expect_eq(pp_write_check(p, 1, &err), PP_ERR_IO);
    cr_expect(strstr(err.msg, "is not a directory"), "%s", err.msg);
    cr_expect_eq(leftovers(), 0);
}

/* One folder per plan (plan --emit DIR): missing directories are made,
 * and removed again when the set fails. */
Test(atomic_write, mkdirs_makes_folders_and_removes_them_on_failure)
{
    char a[PATH_MAX], b[PATH_MAX], d1[PATH_MAX], d2[PATH_MAX];
    at(a, "out/plan-1/ds_config.json");
    at(b, "out/plan-2/ds_config.json");
    at(d1, "out");
    pp_out_file f[2] = {{a, "{}\n", 3}, {b, "{}\n", 3}};
    pp_error err = {""};
    cr_expect_eq(pp_write_files(f, 2, 0, &err), PP_ERR_IO, "without PP_WRITE_MKDIRS a missing folder is an error");
    cr_expect(!exists(d1));
    cr_assert_eq(pp_write_files(f, 2, PP_WRITE_MKDIRS, &err), PP_OK, "%s", err.msg);
    cr_expect_str_eq(slurp(a), "{}\n");
    cr_expect_str_eq(slurp(b), "{}\n");
    /* a set that fails after making out2/plan-1 and out2/plan-2 (the second
     * file is over a 4 KiB file size limit): both folders and out2 go */
    at(d2, "out2");
    at(a, "out2/plan-1/args.sh");
    at(b, "out2/plan-2/args.sh");
    static char big[65536];
    memset(big, 'x', sizeof big);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        struct rlimit rl = {4096, 4096};
        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(10);
        pp_out_file g[2] = {{a, "x\n", 2}, {b, big, sizeof big}};
        _exit(pp_write_files(g, 2, PP_WRITE_MKDIRS, &err) == PP_ERR_INTERNAL ? 0 : 11);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    cr_expect(!exists(d2), "a folder made for a failed set was left");
    /* a regular file in the way of a folder */
    at(a, "file");
    put(a, "");
    at(a, "file/plan-1/x.json");
    pp_out_file h[1] = {{a, "x", 1}};
    cr_expect_eq(pp_write_files(h, 1, PP_WRITE_MKDIRS, &err), PP_ERR_IO);
    cr_expect(strstr(err.msg, "Not a directory") || strstr(err.msg, "not a directory"), "%s", err.msg);
}
