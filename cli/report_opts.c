/*
 * report_opts.c — `--report FILE.html` on estimate, plan and compare
 * (docs/report.md): builds the page with the library and writes it
 * atomically (pp_write_file), replacing an existing file only with --force.
 * The header's date is now, or SOURCE_DATE_EPOCH when set (reproducible
 * files, https://reproducible-builds.org/specs/source-date-epoch/).
 * Exit codes: 0 written (or not asked), 2 bad SOURCE_DATE_EPOCH or the file
 * cannot be written, 3 out of memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* The date for the header; 2 after printing the error. */
static int report_date(long long *out)
{
    const char *v = getenv("SOURCE_DATE_EPOCH");
    if (!v) {
        *out = (long long)time(NULL);
        return 0;
    }
    char *end;
    errno = 0;
    long long d = strtoll(v, &end, 10);
    if (end == v || *end || errno || d < 0 || d > 253402300799LL) {
        fprintf(stderr, "parplan: SOURCE_DATE_EPOCH: expected seconds since 1970-01-01 (a non-negative integer), "
                        "got '%s'\n", v);
        return 2;
    }
    *out = d;
    return 0;
}

/* A value as a shell would need it: bare when safe, else single-quoted. */
static size_t put_word(char *out, size_t cap, size_t k, const char *w)
{
    int bare = *w != '\0';
    for (const char *p = w; *p; p++)
        bare &= (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("._,:/=+-@%", *p);
    if (bare) return k + (size_t)snprintf(out + k, k < cap ? cap - k : 0, " %s", w);
    k += (size_t)snprintf(out + k, k < cap ? cap - k : 0, " '");
    for (const char *p = w; *p; p++)
        k += (size_t)snprintf(out + k, k < cap ? cap - k : 0, *p == '\'' ? "'\\''" : "%c", *p);
    return k + (size_t)snprintf(out + k, k < cap ? cap - k : 0, "'");
}

static void command_line(const cli_args *a, const char *cmd, char *out, size_t cap)
{
    size_t k = (size_t)snprintf(out, cap, "parplan %s", cmd);
    for (int i = 0; i < a->n; i++) {
        k += (size_t)snprintf(out + k, k < cap ? cap - k : 0, " --%s", a->keys[i]);
        if (a->vals[i]) k = put_word(out, cap, k, a->vals[i]);
    }
    if (k >= cap && cap > 4) memcpy(out + cap - 4, "...", 4);
}

/* Writes html (taken, freed here) to --report's file. */
static int write_report(const cli_args *a, char *html)
{
    const char *path = cli_get(a, "report");
    if (!html) {
        fprintf(stderr, "parplan: %s: out of memory while building the report\n", path);
        return 3;
    }
    pp_error err = {""};
    pp_status st = pp_write_file(path, html, strlen(html), cli_has(a, "force"), &err);
    pp_free(html);
    if (st != PP_OK) return cli_fail(st, &err);
    fprintf(stderr, "parplan: wrote %s\n", path);
    return 0;
}

/* The page's meta; the command line lives in buf. 0, or 2. */
static int meta(const cli_args *a, const char *cmd, pp_report_meta *m, char *buf, size_t cap)
{
    const char *path = cli_get(a, "report");
    if (!*path) {
        fprintf(stderr, "parplan: --report: expected a file name for the HTML report\n");
        return 2;
    }
    command_line(a, cmd, buf, cap);
    m->command = buf;
    return report_date(&m->date);
}

int cli_report_estimate(const cli_args *a, const pp_model *m, const pp_cluster *c, const pp_plan *p)
{
    if (!cli_has(a, "report")) return 0;
    char line[4096];
    pp_report_meta mt;
    int rc = meta(a, "estimate", &mt, line, sizeof line);
    return rc ? rc : write_report(a, pp_report_estimate(m, c, p, &mt));
}

int cli_report_plan(const cli_args *a, const pp_model *m, const pp_cluster *c, const pp_search_opts *o,
                    const pp_plan_list *l, const char *explain)
{
    if (!cli_has(a, "report")) return 0;
    char line[4096];
    pp_report_meta mt;
    int rc = meta(a, "plan", &mt, line, sizeof line);
    if (rc) return rc;
    char *why = NULL;
    if (!explain) { /* the report always says why #1 wins */
        pp_error err = {""};
        pp_status st = pp_plan_explain(m, c, o, l, &why, &err);
        if (st != PP_OK) return cli_fail(st, &err);
    }
    rc = write_report(a, pp_report_plan(m, c, o, l, explain ? explain : why, &mt));
    pp_free(why);
    return rc;
}

int cli_report_compare(const cli_args *a, const pp_model *m, const pp_compare_result *r)
{
    if (!cli_has(a, "report")) return 0;
    char line[4096];
    pp_report_meta mt;
    int rc = meta(a, "compare", &mt, line, sizeof line);
    return rc ? rc : write_report(a, pp_report_compare(m, r, &mt));
}
