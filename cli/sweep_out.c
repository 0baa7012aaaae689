/*
 * sweep_out.c — where `parplan sweep` writes, and what --resume reads.
 *
 * A regular --output FILE is written as FILE.part: each result is one whole
 * line, flushed as it leaves, so after a crash (kill -9, a full disk) the
 * journal holds complete lines and at most one half line. When every line
 * is written, the journal is synced and renamed to FILE, so FILE is always a
 * finished sweep or absent. --resume FILE with --output FILE continues the
 * journal (FILE.part, or FILE itself moved back to FILE.part): a half line
 * is cut off first, and the run appends what is missing, in index order, so
 * the result is byte-identical to an uninterrupted run. stdout, character
 * devices and FIFOs are written in place; a symlink is followed to its
 * target. Every write is checked; a failure names the file and errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sweep.h"

#define SPEC_CAP (64u << 20) /* bytes read from a spec; the library rejects more than 4 MiB */

/* Opens path for reading without blocking on a FIFO, and refuses anything
 * but a regular file. Returns the fd, or -1 after printing why. */
static int open_regular(const char *path, const char *what)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st = {0};
    if (fd < 0) {
        fprintf(stderr, "%s: %s%s: cannot open: %s\n", SWEEP_ME, what, path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "%s: %s%s: %s: expected a regular file%s\n", SWEEP_ME, what, path,
                S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file (a FIFO, socket or device)",
                *what ? "" : " (or - for stdin)");
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

static int read_fd(FILE *f, char **text, size_t *len)
{
    size_t cap = 1 << 16, n = 0, got;
    char *b = malloc(cap + 1);
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap && cap < SPEC_CAP) {
            char *nb = realloc(b, cap * 2 + 1);
            if (!nb) free(b);
            b = nb;
            cap *= 2;
        } else if (n == cap) {
            break; /* the library rejects it by size */
        }
    }
    if (!b) return 3;
    if (ferror(f)) {
        free(b);
        return -1;
    }
    b[n] = '\0';
    *text = b;
    *len = n;
    return 0;
}

int sweep_read_spec(const char *path, char **text, size_t *len)
{
    if (!strcmp(path, "-")) {
        int rc = read_fd(stdin, text, len);
        if (rc < 0) fprintf(stderr, "%s: stdin: read failed: %s\n", SWEEP_ME, strerror(errno));
        return rc < 0 ? 2 : rc;
    }
    int fd = open_regular(path, "");
    FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        if (fd >= 0) close(fd);
        return 2;
    }
    int rc = read_fd(f, text, len);
    if (rc < 0) fprintf(stderr, "%s: %s: read failed: %s\n", SWEEP_ME, path, strerror(errno));
    fclose(f);
    return rc < 0 ? 2 : rc;
}

/* ---- --resume: the indices in a previous output ---- */

static int done_add(sweep_done *d, int i)
{
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 1024;
        int *v = realloc(d->idx, (size_t)cap * sizeof *v);
        if (!v) return 0;
        d->idx = v;
        d->cap = cap;
    }
    d->idx[d->n++] = i;
    return 1;
}

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

/* The index of a result line: 0 JSONL, 1 CSV row, 2 the CSV header, -1 not
 * a result line. */
static int line_index(const char *line, int *index)
{
    char *end;
    if (!strncmp(line, "{\"index\":", 9)) {
        long v = strtol(line + 9, &end, 10);
        *index = (int)v;
        return end > line + 9 && *end == ',' && v >= 0 && v <= PP_SWEEP_MAX ? 0 : -1;
    }
    if (!strncmp(line, "index,", 6)) return 2;
    long v = strtol(line, &end, 10);
    *index = (int)v;
    return end > line && *end == ',' && line[0] >= '0' && line[0] <= '9' && v <= PP_SWEEP_MAX ? 1 : -1;
}

typedef struct scan {
    long long good, lines, half; /* bytes of complete lines, lines, bytes of a half line */
    int kind;                    /* 0 JSONL, 1 CSV, -1 empty */
} scan;

/* Whether a JSON result line echoes scenario idx of this spec with these
 * options (top, framework): a journal of another spec, or of the same one
 * run with another --top or --framework, would mix plans of two sweeps.
 * CSV rows echo no scenario: only their indices are checked. */
static int echoes_scenario(const char *line, const pp_sweep *sw, const pp_sweep_opts *o, int idx)
{
    const char *at = strstr(line, ",\"scenario\":");
    if (!at) return 1; /* a line without an echo: nothing to compare */
    char *want = pp_sweep_scenario(sw, o, idx);
    if (!want) return 1; /* out of memory: the index check stands */
    size_t n = strlen(want);
    at += strlen(",\"scenario\":");
    int same = !strncmp(at, want, n) && at[n] == ',';
    pp_free(want);
    return same;
}

/* Reads path line by line (any size, constant memory) into d. */
static int scan_file(const char *path, const pp_sweep *sw, const pp_sweep_opts *o, sweep_done *d, scan *sc)
{
    int n = pp_sweep_size(sw);
    int fd = open_regular(path, "--resume ");
    FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
    if (!f) return fd >= 0 ? (close(fd), 3) : 2;
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int rc = 0;
    memset(sc, 0, sizeof *sc);
    sc->kind = -1;
    while (!rc && (got = getline(&line, &cap, f)) > 0) {
        int idx = 0, k;
        if (line[got - 1] != '\n') {
            sc->half = got;
            break;
        }
        line[got - 1] = '\0';
        sc->lines++;
        k = line_index(line, &idx);
        if (k < 0 || (sc->kind >= 0 && (k == 2 ? 1 : k) != sc->kind)) {
            fprintf(stderr, "%s: --resume %s: line %lld: expected a result line of one format ({\"index\": ...} or index,status,... rows)\n",
                    SWEEP_ME, path, sc->lines);
            rc = 2;
        } else if (k != 2 && idx >= n) {
            fprintf(stderr, "%s: --resume %s: line %lld has index %d but the spec holds %d scenarios: is it from another spec?\n",
                    SWEEP_ME, path, sc->lines, idx, n);
            rc = 2;
        } else if (k == 0 && !echoes_scenario(line, sw, o, idx)) {
            fprintf(stderr, "%s: --resume %s: line %lld (index %d) is not scenario %d of this spec with these options "
                            "(--top, --framework): is it from another sweep?\n", SWEEP_ME, path, sc->lines, idx, idx);
            rc = 2;
        } else if (k != 2 && !done_add(d, idx)) {
            rc = 3;
        }
        sc->kind = k == 2 ? 1 : k;
        sc->good += got;
    }
    if (!rc && ferror(f)) {
        fprintf(stderr, "%s: --resume %s: read failed: %s\n", SWEEP_ME, path, strerror(errno));
        rc = 2;
    }
    free(line);
    fclose(f);
    if (!rc && d->n) qsort(d->idx, (size_t)d->n, sizeof *d->idx, cmp_int);
    return rc;
}

/* --resume R with another output: R is only read (R.part when R is
 * missing: the journal of an interrupted run); a half line is ignored. */
static int scan_resume(const char *path, const pp_sweep *sw, const pp_sweep_opts *o, sweep_done *d)
{
    char part[PATH_MAX + 8];
    scan sc;
    snprintf(part, sizeof part, "%s.part", path);
    if (access(path, F_OK) != 0 && access(part, F_OK) == 0) path = part;
    int rc = scan_file(path, sw, o, d, &sc);
    if (!rc && sc.half) fprintf(stderr, "%s: --resume %s: ignored a half-written last line\n", SWEEP_ME, path);
    return rc;
}

/* ---- the output ---- */

static int exists(const char *path) { return access(path, F_OK) == 0; }

/* --resume names the output (as given, through a link, or its journal). */
static int same_file(const char *resume, const char *final, const char *part)
{
    struct stat a, b;
    if (!strcmp(resume, final) || !strcmp(resume, part)) return 1;
    if (stat(resume, &a) != 0) return 0;
    return (stat(final, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) ||
           (stat(part, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

/* A symlink is followed: the journal and the rename go next to its target. */
static int resolve(const char *path, char *out, size_t cap)
{
    struct stat st;
    char real[PATH_MAX];
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        if (!realpath(path, real)) {
            fprintf(stderr, "%s: --output %s: a symbolic link whose target cannot be resolved: %s\n", SWEEP_ME, path,
                    strerror(errno));
            return 2;
        }
        path = real;
    }
    if ((size_t)snprintf(out, cap, "%s", path) >= cap - 8) {
        fprintf(stderr, "%s: --output %s: path too long\n", SWEEP_ME, path);
        return 2;
    }
    return 0;
}

/* stdout, a character device or a FIFO (with a reader: never blocks). */
static int open_in_place(sweep_out *w, const char *path)
{
    if (!path) {
        w->f = stdout;
        return 0;
    }
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "%s: --output %s: cannot open: %s\n", SWEEP_ME, path,
                errno == ENXIO ? "no process is reading the FIFO" : strerror(errno));
        return 2;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    w->f = fdopen(fd, "w");
    if (!w->f) close(fd);
    return w->f ? 0 : 3;
}

/* --resume FILE --output FILE: the journal to continue (FILE.part, or the
 * finished FILE, moved to FILE.part once it has been read and accepted),
 * its half line cut off. */
static int continue_journal(sweep_out *w, const pp_sweep *sw, const pp_sweep_opts *o, sweep_done *d)
{
    scan sc;
    int rc;
    const char *src = exists(w->part) ? w->part : exists(w->final) ? w->final : NULL;
    if (!src) {
        fprintf(stderr, "%s: --resume %s: nothing to resume (no %s or %s): starting the sweep\n", SWEEP_ME, w->shown,
                w->shown, w->part);
        return 0;
    }
    if ((rc = scan_file(src, sw, o, d, &sc))) return rc;
    if (sc.kind >= 0 && sc.kind != w->csv) {
        fprintf(stderr, "%s: --resume %s: holds %s but --format is %s: give the same --format\n", SWEEP_ME, w->shown,
                sc.kind ? "CSV rows" : "JSON lines", w->csv ? "csv" : "jsonl");
        return 2;
    }
    if (src == w->final && rename(w->final, w->part) != 0) {
        fprintf(stderr, "%s: --resume %s: cannot move it to %s to continue it: %s\n", SWEEP_ME, w->shown, w->part,
                strerror(errno));
        return 2;
    }
    if (sc.half) {
        if (truncate(w->part, sc.good) != 0) {
            fprintf(stderr, "%s: --resume %s: cannot cut the half-written last line: %s\n", SWEEP_ME, w->part,
                    strerror(errno));
            return 3;
        }
        fprintf(stderr, "%s: --resume %s: cut a half-written last line (%lld bytes) back to the last complete line; "
                        "that scenario runs again\n", SWEEP_ME, w->part, sc.half);
    }
    w->good = sc.good;
    w->lines = sc.lines;
    w->header_done = w->csv && sc.lines > 0;
    return 0;
}

static int open_journal(sweep_out *w, int append)
{
    int fd = open(w->part, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0666);
    if (fd < 0) {
        fprintf(stderr, "%s: --output %s: cannot create %s: %s\n", SWEEP_ME, w->shown, w->part, strerror(errno));
        return 2;
    }
    w->f = fdopen(fd, append ? "a" : "w");
    if (!w->f) close(fd);
    return w->f ? 0 : 3;
}

int sweep_out_open(sweep_out *w, const sweep_cfg *cfg, const pp_sweep *sw, sweep_done *d)
{
    struct stat st;
    int rc;
    memset(w, 0, sizeof *w);
    w->csv = cfg->o.format == PP_SWEEP_CSV;
    w->shown = cfg->output ? cfg->output : "stdout";
    if (cfg->output && (rc = resolve(cfg->output, w->final, sizeof w->final))) return rc;
    if (cfg->output && stat(w->final, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            fprintf(stderr, "%s: --output %s: is a directory: expected a file name\n", SWEEP_ME, cfg->output);
            return 2;
        }
        if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
            fprintf(stderr, "%s: --output %s: is not a regular file, a character device or a FIFO\n", SWEEP_ME, cfg->output);
            return 2;
        }
        w->final[0] = '\0'; /* a device or FIFO: written in place */
    }
    if (!cfg->output || !w->final[0]) {
        if (cfg->resume && (rc = scan_resume(cfg->resume, sw, &cfg->o, d))) return rc;
        return open_in_place(w, cfg->output);
    }
    snprintf(w->part, sizeof w->part, "%s.part", w->final);
    if (cfg->resume && same_file(cfg->resume, w->final, w->part)) return (rc = continue_journal(w, sw, &cfg->o, d)) ? rc : open_journal(w, 1);
    if (!cfg->force && exists(w->final)) {
        fprintf(stderr, "%s: --output %s exists: pass --force to overwrite, or --resume %s to continue it\n", SWEEP_ME,
                cfg->output, cfg->output);
        return 2;
    }
    if (!cfg->force && exists(w->part)) {
        fprintf(stderr, "%s: --output %s: %s holds an interrupted sweep: --resume %s continues it, --force starts over\n",
                SWEEP_ME, cfg->output, w->part, cfg->output);
        return 2;
    }
    if (cfg->resume && (rc = scan_resume(cfg->resume, sw, &cfg->o, d))) return rc;
    return open_journal(w, 0);
}

/* A failed write: keep the complete lines (cut what was half written), or
 * nothing when there are none; name the file and errno. */
static int write_failed(sweep_out *w, int e)
{
    FILE *f = w->f;
    w->f = NULL; /* said once; nothing more is written */
    if (!w->final[0]) {
        fprintf(stderr, "%s: %s: write failed: %s\n", SWEEP_ME, w->shown, strerror(e));
        if (f != stdout) fclose(f);
        else __fpurge(stdout), clearerr(stdout); /* said here, once: main's check at exit finds nothing left */
        return 3;
    }
    fclose(f);
    if (w->lines == 0) {
        unlink(w->part);
        fprintf(stderr, "%s: --output %s: write failed: %s; nothing was kept\n", SWEEP_ME, w->shown, strerror(e));
    } else if (truncate(w->part, w->good) == 0) {
        fprintf(stderr, "%s: --output %s: write failed: %s; the %lld complete lines are kept in %s (--resume %s continues)\n",
                SWEEP_ME, w->shown, strerror(e), w->lines, w->part, w->shown);
    } else {
        fprintf(stderr, "%s: --output %s: write failed: %s; %s holds the complete lines and maybe a half one "
                        "(--resume %s cuts it)\n", SWEEP_ME, w->shown, strerror(e), w->part, w->shown);
    }
    return 3;
}

static int put(sweep_out *w, const char *line)
{
    errno = 0;
    if (fputs(line, w->f) == EOF || fputc('\n', w->f) == EOF || fflush(w->f) != 0)
        return write_failed(w, errno ? errno : EIO);
    w->good += (long long)strlen(line) + 1;
    w->lines++;
    return 0;
}

int sweep_out_line(sweep_out *w, const char *line)
{
    int rc;
    if (w->csv && !w->header_done) {
        if ((rc = put(w, pp_sweep_csv_header()))) return rc;
        w->header_done = 1;
    }
    return put(w, line);
}

int sweep_out_finish(sweep_out *w, int ok)
{
    if (!w->f) return 0;
    if (ok && w->csv && !w->header_done && put(w, pp_sweep_csv_header())) return 3;
    errno = 0;
    if (w->f == stdout) {
        if (fflush(stdout) != 0 || ferror(stdout)) return write_failed(w, errno ? errno : EIO);
        return 0;
    }
    int e = fflush(w->f) != 0 ? errno : 0;
    if (!e && w->final[0] && ok && fsync(fileno(w->f)) != 0) e = errno;
    if (!e && ferror(w->f)) e = EIO;
    if (e) return write_failed(w, e);
    FILE *f = w->f;
    w->f = NULL;
    if (fclose(f) != 0) {
        w->f = NULL;
        fprintf(stderr, "%s: --output %s: close failed: %s\n", SWEEP_ME, w->shown, strerror(errno));
        return 3;
    }
    if (!ok || !w->final[0]) return 0;
    if (rename(w->part, w->final) != 0) {
        fprintf(stderr, "%s: --output %s: cannot rename %s into place: %s\n", SWEEP_ME, w->shown, w->part, strerror(errno));
        return 3;
    }
    return 0;
}

/* ---- progress ---- */

double sweep_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void sweep_progress(int bar, int done, int total, double t0)
{
    if (!bar) return;
    double el = sweep_now() - t0, rate = el > 0 ? done / el : 0;
    int w = 30, fill = total ? (int)((long long)w * done / total) : w;
    fprintf(stderr, "\r[%.*s%*s] %d/%d  %.1f/s  ETA %.0fs ", fill, "==============================", w - fill, "", done,
            total, rate, rate > 0 ? (total - done) / rate : 0);
    if (done == total) fprintf(stderr, "\n");
}
