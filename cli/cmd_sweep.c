/* cmd_sweep.c — `parplan sweep`: many scenarios from a spec, in spec order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const cli_opt opts[] = {
    {"jobs", 1, "scenarios run in parallel (default: all cores)"},
    {"shard", 1, "K/N: run every N-th scenario, starting at the K-th (Slurm arrays, GNU parallel)"},
    {"format", 1, "jsonl (default) or csv"},
    {"output", 1, "write to FILE (default stdout); refuses to overwrite without --force"},
    {"resume", 1, "skip scenarios already in FILE (append to it when it is the --output)"},
    {"force", 0, "overwrite --output"},
    {"progress", 0, "force the progress bar (default: only when stderr is a terminal)"},
    {NULL, 0, NULL}};

typedef struct sink {
    FILE *out;
    int csv, header_done;
    double t0;
    int bar;
} sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void emit(int index, const char *line, pp_status st, void *user)
{
    sink *k = user;
    (void)index;
    (void)st;
    if (k->csv && !k->header_done) {
        fprintf(k->out, "%s\n", pp_sweep_csv_header());
        k->header_done = 1;
    }
    fprintf(k->out, "%s\n", line); /* each line whole, then flushed: a journal */
    fflush(k->out);
}

static void progress(int done, int total, void *user)
{
    sink *k = user;
    if (!k->bar) return;
    double el = now() - k->t0, rate = el > 0 ? done / el : 0;
    int w = 30, fill = total ? w * done / total : w;
    fprintf(stderr, "\r[%.*s%*s] %d/%d  %.1f/s  ETA %.0fs ", fill, "==============================", w - fill, "",
            done, total, rate, rate > 0 ? (total - done) / rate : 0);
    if (done == total) fprintf(stderr, "\n");
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = n > (64u << 20) ? NULL : realloc(b, cap * 2 + 1);
            if (!nb) { free(b); b = NULL; break; }
            b = nb;
            cap *= 2;
        }
    }
    if (f != stdin) fclose(f);
    if (b) b[n] = '\0';
    *len = n;
    return b;
}

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

/* Indices already present in a previous output (JSON lines or CSV rows);
 * a truncated last line is ignored, so that scenario runs again. */
static int *resume_indices(const char *path, int *n)
{
    size_t len;
    *n = 0;
    char *text = read_all(path, &len);
    if (!text) return NULL;
    int cap = 1024, *v = malloc(cap * sizeof *v);
    for (char *line = text, *nl; v && (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = '\0';
        const char *p = strstr(line, "\"index\":");
        int idx;
        if ((p && sscanf(p + 8, "%d", &idx) == 1) || (!p && line[0] >= '0' && line[0] <= '9' && sscanf(line, "%d,", &idx) == 1)) {
            if (*n == cap) {
                int *nv = realloc(v, (size_t)(cap *= 2) * sizeof *nv);
                if (!nv) break;
                v = nv;
            }
            v[(*n)++] = idx;
        }
    }
    free(text);
    if (v) qsort(v, (size_t)*n, sizeof *v, cmp_int);
    return v;
}

static int parse_shard(const char *s, pp_sweep_opts *o)
{
    if (!s) return 0;
    if (sscanf(s, "%d/%d", &o->shard_k, &o->shard_n) != 2 || o->shard_n < 1 || o->shard_k < 1 || o->shard_k > o->shard_n) {
        fprintf(stderr, "parplan sweep: --shard: expected K/N with 1 <= K <= N, got '%s'\n", s);
        return 2;
    }
    return 0;
}

static int open_output(const cli_args *a, const char *resume, sink *k)
{
    const char *out = cli_get(a, "output");
    struct stat st;
    k->out = stdout;
    if (!out) return 0;
    int appending = resume && !strcmp(resume, out);
    if (!appending && !cli_has(a, "force") && stat(out, &st) == 0) {
        fprintf(stderr, "parplan sweep: --output %s exists: pass --force to overwrite, or --resume %s to continue it\n", out, out);
        return 2;
    }
    k->out = fopen(out, appending ? "a" : "w");
    if (!k->out) {
        fprintf(stderr, "parplan sweep: --output %s: %s\n", out, strerror(errno));
        return 2;
    }
    if (appending && k->csv && ftell(k->out) > 0) k->header_done = 1;
    return 0;
}

static int run(const cli_args *a)
{
    pp_sweep_opts o;
    sink k = {stdout, 0, 0, now(), 0};
    const char *fmt = cli_get(a, "format");
    int rc, failed = 0, nskip = 0;
    memset(&o, 0, sizeof o);
    if (a->npos != 1) {
        fprintf(stderr, "parplan sweep: expected one SPEC.json (or - for stdin); see `parplan sweep --help`\n");
        return 2;
    }
    if (fmt && strcmp(fmt, "jsonl") && strcmp(fmt, "csv")) {
        fprintf(stderr, "parplan sweep: --format: expected jsonl or csv, got '%s'\n", fmt);
        return 2;
    }
    k.csv = fmt && !strcmp(fmt, "csv");
    o.format = k.csv ? PP_SWEEP_CSV : PP_SWEEP_JSONL;
    if ((rc = cli_int(a, "jobs", 1, 1024, 0, &o.jobs)) || (rc = parse_shard(cli_get(a, "shard"), &o))) return rc;
    size_t len;
    char *spec = read_all(a->pos[0], &len);
    if (!spec) {
        fprintf(stderr, "parplan sweep: %s: cannot read: %s\n", a->pos[0], strerror(errno));
        return 2;
    }
    pp_error err = {""};
    int total;
    pp_status st = pp_sweep_count(spec, len, a->pos[0], &total, &err);
    const char *resume = cli_get(a, "resume");
    int *skip = resume ? resume_indices(resume, &nskip) : NULL;
    if (st == PP_OK && (rc = open_output(a, resume, &k))) st = PP_ERR_INPUT;
    if (st == PP_OK) {
        o.skip = skip;
        o.nskip = nskip;
        o.emit = emit;
        o.progress = progress;
        o.user = &k;
        k.bar = isatty(2) || cli_has(a, "progress");
        st = pp_sweep_run(spec, len, a->pos[0], &o, &failed, &err);
    }
    if (k.out && k.out != stdout) fclose(k.out);
    free(skip);
    free(spec);
    if (rc) return rc;
    if (st != PP_OK) return cli_fail(st, &err);
    if (failed) fprintf(stderr, "parplan sweep: %d of %d scenarios gave no plan (see their \"error\")\n", failed, total);
    return failed ? 1 : 0;
}

const cli_cmd cli_cmd_sweep = {"sweep", "run many scenarios from a JSON spec; JSON lines or CSV in spec order",
    "  parplan sweep SPEC.json|- [--jobs N] [--shard K/N] [--format jsonl|csv] [--output FILE] [--resume FILE]\n\n"
    "  SPEC: {\"grid\": {\"model\": [...], \"cluster\": [...], \"gpus\": [...], \"global_batch\": [...], ...},\n"
    "         \"scenarios\": [{\"model\": ..., \"cluster\": ..., \"gpus\": 128, \"global_batch\": 1024, \"tp\": 8}]}\n"
    "  Grid keys expand in the order written, the last fastest; every result carries its \"index\".\n"
    "  Exit: 0 all scenarios planned, 1 some gave no plan (their lines say why), 2 bad spec or options.",
    "  parplan sweep bench/sweep_grid.json --format csv --output results.csv\n"
    "  parplan sweep spec.json --shard 3/8 > part3.jsonl    # one of 8 Slurm array tasks\n"
    "  parplan sweep spec.json --output all.jsonl --resume all.jsonl   # continue after an interruption",
    opts, run};
