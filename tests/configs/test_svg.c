/*
 * test_svg.c — the compare chart (configs/svg.c) on hand-made results, no
 * search: the file is well-formed XML (a small structural checker: one
 * root, balanced tags, quoted attributes, known entities, valid UTF-8, no
 * control characters), has one marker per plotted option and one ring per
 * Pareto point joined by one line, escapes names from files, turns an axis
 * logarithmic only when the data spans a factor of 10, is the same bytes
 * every time, and is written atomically (no overwrite without force).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parplan.h"

/* ------------------------------------------------------------ XML checker */

static int name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == ':' || c == '_' || c == '.'; }

/* Text or attribute value: '&' only as &amp; &lt; &gt; &quot; &apos; &#N;,
 * no '<', no control characters, valid UTF-8. NULL when fine. */
static const char *check_text(const char *p, const char *end)
{
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (c == '<') return "'<' in text";
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') return "control character";
        if (c == '&') {
            const char *semi = memchr(p, ';', (size_t)(end - p));
            if (!semi || semi - p > 8) return "bare '&'";
            if (strncmp(p, "&amp;", 5) && strncmp(p, "&lt;", 4) && strncmp(p, "&gt;", 4) && strncmp(p, "&quot;", 6) &&
                strncmp(p, "&apos;", 6) && strncmp(p, "&#", 2))
                return "unknown entity";
            p = semi + 1;
            continue;
        }
        if (c >= 0x80) {
            int n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
            if (n == 0 || end - p < n) return "invalid UTF-8";
            for (int i = 1; i < n; i++)
                if (((unsigned char)p[i] & 0xc0) != 0x80) return "invalid UTF-8";
            p += n;
            continue;
        }
        p++;
    }
    return NULL;
}

/* Well-formedness of the subset of XML an SVG writer produces. Returns
 * NULL or what is wrong (with *at the offset). */
static const char *xml_check(const char *s, long *at)
{
    const char *stack[256];
    size_t len[256];
    int depth = 0, roots = 0;
    const char *p = s;
    if (!strncmp(p, "<?xml", 5)) {
        p = strstr(p, "?>");
        if (!p) return "unterminated declaration";
        p += 2;
    }
    while (*p) {
        const char *lt = strchr(p, '<');
        const char *tend = lt ? lt : p + strlen(p);
        const char *why = check_text(p, tend);
        *at = p - s;
        if (why) return why;
        if (!depth)
            for (const char *q = p; q < tend; q++)
                if (*q != ' ' && *q != '\n' && *q != '\t' && *q != '\r') return "text outside the root";
        if (!lt) break;
        p = lt + 1;
        *at = lt - s;
        if (*p == '/') { /* end tag */
            p++;
            const char *n0 = p;
            while (name_char(*p)) p++;
            if (*p != '>') return "malformed end tag";
            if (!depth) return "end tag without start";
            depth--;
            if ((size_t)(p - n0) != len[depth] || strncmp(n0, stack[depth], len[depth])) return "mismatched end tag";
            p++;
            continue;
        }
        const char *n0 = p;
        while (name_char(*p)) p++;
        if (p == n0) return "tag without a name";
        size_t nl = (size_t)(p - n0);
        while (1) { /* attributes */
            while (*p == ' ' || *p == '\n') p++;
            if (*p == '/' && p[1] == '>') {
                p += 2;
                if (!depth) roots++;
                break;
            }
            if (*p == '>') {
                p++;
                if (!depth) roots++;
                if (depth >= 256) return "too deep";
                stack[depth] = n0;
                len[depth++] = nl;
                break;
            }
            const char *a0 = p;
            while (name_char(*p)) p++;
            if (p == a0) return "malformed attribute";
            if (*p++ != '=') return "attribute without '='";
            char q = *p++;
            if (q != '"' && q != '\'') return "unquoted attribute";
            const char *v0 = p;
            while (*p && *p != q) p++;
            if (!*p) return "unterminated attribute";
            if ((why = check_text(v0, p))) return why;
            p++;
        }
    }
    if (depth) return "unclosed element";
    if (roots != 1) return "not exactly one root element";
    return NULL;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++) n++;
    return n;
}

Test(svg_checker, catches_breakage)
{
    long at;
    cr_expect_null(xml_check("<svg a=\"1\"><g><t>x &amp; y</t></g></svg>\n", &at));
    cr_expect_not_null(xml_check("<svg><g></svg>", &at));
    cr_expect_not_null(xml_check("<svg a=1></svg>", &at));
    cr_expect_not_null(xml_check("<svg>a & b</svg>", &at));
    cr_expect_not_null(xml_check("<svg></svg><svg></svg>", &at));
    cr_expect_not_null(xml_check("<svg>\x01</svg>", &at));
    cr_expect_not_null(xml_check("<svg>\xff</svg>", &at));
}

/* ------------------------------------------------------------ results */

typedef struct fake {
    pp_compare_result r;
    pp_compare_cluster cl[3];
    pp_compare_option opt[12];
    int front[12];
} fake;

/* n options over three cluster types at the given (days, cost); NaN cost
 * = no price; days < 0 = no plan. Front and selection computed. */
static fake *make(int n, const double *days, const double *cost, double deadline, double budget)
{
    fake *f = calloc(1, sizeof *f);
    cr_assert(f);
    const char *names[3] = {"dgx-h100", "dgx-a100-80g", "l40s-8x-eth"};
    pp_error err = {""};
    for (int i = 0; i < 3; i++) cr_assert_eq(pp_cluster_load(names[i], &f->cl[i].cluster, &err), PP_OK, "%s", err.msg);
    snprintf(f->r.model, sizeof f->r.model, "llama3-8b");
    pp_compare_opts_default(&f->r.opts);
    f->r.opts.train_tokens = 1e12;
    f->r.opts.search.global_batch = 512;
    f->r.opts.search.seq = 8192;
    f->r.opts.deadline_days = deadline;
    f->r.opts.budget_usd = budget;
    f->r.nclusters = 3;
    f->r.clusters = f->cl;
    f->r.options = f->opt;
    f->r.front = f->front;
    f->r.n = n;
    double x[12], y[12];
    int on[12];
    for (int i = 0; i < n; i++) {
        pp_compare_option *e = &f->opt[i];
        e->cluster = i % 3;
        e->gpus = 8 << (i / 3);
        e->nodes = e->gpus / 8;
        pp_strategy_default(&e->plan.strategy);
        e->plan.strategy.dp = e->gpus;
        e->status = days[i] < 0 ? PP_ERR_INFEASIBLE : PP_OK;
        e->days = days[i] < 0 ? NAN : days[i];
        e->cost_usd = days[i] < 0 ? NAN : cost[i];
        e->price_kind = isnan(cost[i]) ? PP_PRICE_NONE : PP_PRICE_CATALOG;
        e->usd_per_gpu_hour = isnan(cost[i]) ? NAN : 2.5;
        snprintf(e->price_date, sizeof e->price_date, "2026-11-09");
        e->energy_kwh = 1000 * (i + 1);
        x[i] = e->days;
        y[i] = e->cost_usd;
    }
    cr_assert_eq(pp_pareto_front(x, y, n, on), 0);
    f->r.cheapest = -1;
    for (int i = 0; i < n; i++) {
        f->opt[i].pareto = on[i];
        if (on[i]) f->front[f->r.nfront++] = i;
        if (f->opt[i].status == PP_OK && !isnan(cost[i]) && (!(deadline > 0) || days[i] <= deadline) &&
            (f->r.cheapest < 0 || cost[i] < cost[f->r.cheapest]))
            f->r.cheapest = i;
    }
    for (int a = 1; a < f->r.nfront; a++) /* by days */
        for (int b = a; b > 0 && f->opt[f->front[b]].days < f->opt[f->front[b - 1]].days; b--) {
            int t = f->front[b];
            f->front[b] = f->front[b - 1];
            f->front[b - 1] = t;
        }
    return f;
}

static char *render_ok(const fake *f)
{
    char *s = pp_compare_to_svg(&f->r);
    cr_assert(s);
    long at = 0;
    const char *why = xml_check(s, &at);
    cr_assert_null(why, "not well-formed: %s at %ld: %.80s", why, at, s + at);
    cr_expect(strstr(s, "xmlns=\"http://www.w3.org/2000/svg\""));
    cr_expect(strstr(s, "viewBox="));
    return s;
}

Test(svg, markers_front_ticks_legend)
{
    double days[] = {120, 60, 300, 30, 15, 150, 8, 7.5, 75}, cost[] = {1e5, 2e5, 5e4, 2.1e5, 2.2e5, 5.2e4, 2.4e5, 2.5e5, 6e4};
    fake *f = make(9, days, cost, 20, 2.3e5);
    char *s = render_ok(f);
    cr_expect_eq(count(s, "class=\"option\""), 9);
    cr_expect_eq(count(s, "class=\"front-point\""), f->r.nfront);
    cr_expect_geq(f->r.nfront, 3);
    cr_expect_eq(count(s, "class=\"front-line\""), 1);
    /* the front line has one vertex per front point */
    const char *pl = strstr(s, "class=\"front-line\"");
    const char *pts = strstr(pl, "points=\"") + 8;
    int commas = 0;
    for (const char *q = pts; *q != '"'; q++) commas += *q == ',';
    cr_expect_eq(commas, f->r.nfront);
    cr_expect_eq(count(s, "class=\"legend-entry\""), 3);
    cr_expect(strstr(s, "class=\"deadline\"") && strstr(s, "class=\"budget\""));
    cr_expect_eq(count(s, "class=\"chosen\""), 1);
    cr_expect(strstr(s, "time to train (days, log scale)"), "x spans 40x: log");
    cr_expect(strstr(s, "cost (US$)") && !strstr(s, "cost (US$, log scale)"), "y spans 5x: linear");
    cr_expect(strstr(s, "2026-11-09"), "the price date is in the legend");
    cr_expect(strstr(s, ">$100k<") || strstr(s, ">$150k<"), "dollar ticks");
    cr_expect_geq(count(s, "class=\"label\""), 9);
    cr_expect(strstr(s, "<title>"), "tooltips");
    char *again = pp_compare_to_svg(&f->r);
    cr_expect_str_eq(s, again, "the same bytes every time");
    pp_free(again);
    pp_free(s);
    free(f);
}

Test(svg, log_y_when_cost_spans_decades)
{
    double days[] = {10, 12, 14}, cost[] = {1e3, 5e4, 2e6};
    fake *f = make(3, days, cost, 0, 0);
    char *s = render_ok(f);
    cr_expect(strstr(s, "cost (US$, log scale)"));
    cr_expect(strstr(s, "time to train (days)<"), "x spans 1.4x: linear");
    cr_expect(!strstr(s, "class=\"deadline\"") && !strstr(s, "class=\"budget\""));
    pp_free(s);
    free(f);
}

Test(svg, unplotted_options_and_empty)
{
    double days[] = {10, -1, 20, 30}, cost[] = {1e5, 1e5, NAN, 5e4};
    fake *f = make(4, days, cost, 0, 0);
    char *s = render_ok(f);
    cr_expect_eq(count(s, "class=\"option\""), 2, "no plan or no price: not plotted");
    cr_expect(strstr(s, "2 options without a plan or a price"), "the legend says so");
    pp_free(s);
    free(f);
    double d2[] = {-1}, c2[] = {1};
    f = make(1, d2, c2, 5, 0);
    s = render_ok(f);
    cr_expect_eq(count(s, "class=\"option\""), 0);
    cr_expect(strstr(s, "no option with a plan and a price"));
    pp_free(s);
    free(f);
}

Test(svg, names_from_files_are_escaped)
{
    double days[] = {10, 20, 30}, cost[] = {3e5, 2e5, 1e5};
    fake *f = make(3, days, cost, 0, 0);
    snprintf(f->cl[0].cluster.name, sizeof f->cl[0].cluster.name, "a<b>&\"c'\x01\xff");
    snprintf(f->r.model, sizeof f->r.model, "m&<x>");
    char *s = render_ok(f);
    cr_expect(strstr(s, "a&lt;b&gt;&amp;&quot;c&#39;??"), "escaped name");
    cr_expect(strstr(s, "m&amp;&lt;x&gt;"));
    pp_free(s);
    free(f);
}

Test(svg, single_point_and_equal_points)
{
    double days[] = {10, 10}, cost[] = {1e5, 1e5};
    fake *f = make(2, days, cost, 0, 0);
    char *s = render_ok(f);
    cr_expect_eq(count(s, "class=\"option\""), 2);
    cr_expect_eq(count(s, "class=\"front-point\""), 2, "equal points are both on the front");
    pp_free(s);
    free(f);
}

Test(svg, written_atomically_no_overwrite)
{
    double days[] = {10, 20, 30}, cost[] = {3e5, 2e5, 1e5};
    fake *f = make(3, days, cost, 0, 0);
    char dir[] = "/tmp/pp_svgXXXXXX";
    cr_assert(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/chart.svg", dir);
    pp_error err = {""};
    cr_assert_eq(pp_compare_write_svg(&f->r, path, 0, &err), PP_OK, "%s", err.msg);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    off_t size = st.st_size;
    cr_expect_eq(pp_compare_write_svg(&f->r, path, 0, &err), PP_ERR_IO, "no overwrite without force");
    cr_expect(strstr(err.msg, path), "%s", err.msg);
    cr_expect_eq(pp_compare_write_svg(&f->r, path, 1, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_size, size);
    unlink(path);
    rmdir(dir);
    free(f);
}
