/*
 * test_report.c — the HTML report (configs/report.c and its charts) from the
 * library, without a browser (tests/report/check_report.py renders it):
 *  - self-contained: a Content-Security-Policy forbidding every request, no
 *    external reference, the JSON block unbreakable by a name;
 *  - the same inputs give the same bytes; names from files are escaped;
 *  - the pipeline schedule runs every operation of 1F1B, GPipe and the
 *    interleaved order (counted by hand), stays within 1..128 stages and
 *    1..10,000 micro-batches, and elides the steady state saying how much.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parplan.h"
#include "tests/fixtures.h"

static const pp_report_meta META = {"parplan estimate --model x", 1700000000LL};

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* An estimate on a toy cluster of `gpus`: pp stages, m micro-batches. */
static void plan_of(pp_plan *p, pp_model *m, pp_cluster *c, int pp, int mb_count, pp_schedule sched, int v)
{
    *m = fx_model("gpt3-1.3b");
    *c = fx_cluster("dgx-a100-80g", 0, pp);
    pp_strategy s;
    pp_strategy_default(&s);
    s.pp = pp;
    s.dp = 1;
    s.schedule = sched;
    s.virtual_stages = v;
    s.global_batch = mb_count;
    s.seq = 2048;
    if (sched == PP_SCHED_GPIPE) /* FSDP's torch.distributed.pipelining runs GPipe, with ZeRO-2-like sharding */
        s.framework = PP_FW_FSDP, s.zero = 2;
    pp_error err = {""};
    cr_assert_eq(pp_estimate(m, c, &s, p, &err), PP_OK, "%s", err.msg);
}

/* The text of the element with id, up to its closing tag. */
static char *element(const char *html, const char *id, const char *close)
{
    char key[96];
    snprintf(key, sizeof key, "id=\"%s\"", id);
    const char *a = strstr(html, key);
    cr_assert(a, "no element %s", id);
    const char *z = strstr(a, close);
    cr_assert(z);
    return strndup(a, (size_t)(z - a));
}

Test(report, self_contained_and_deterministic)
{
    pp_plan *p = malloc(sizeof *p);
    pp_model m;
    pp_cluster c;
    plan_of(p, &m, &c, 4, 16, PP_SCHED_1F1B, 1);
    char *a = pp_report_estimate(&m, &c, p, &META), *b = pp_report_estimate(&m, &c, p, &META);
    cr_assert(a && b);
    cr_expect_str_eq(a, b, "the same inputs give the same bytes");
    cr_expect(strstr(a, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"));
    cr_expect(strncmp(a, "<!DOCTYPE html>", 15) == 0);
    cr_expect_eq(count(a, "src=\""), 0, "nothing is loaded");
    cr_expect_eq(count(a, "href=\"http"), 0);
    cr_expect_eq(count(a, "https://"), 0);
    /* http:// only as the SVG namespace name, never fetched */
    cr_expect_eq(count(a, "http://"), count(a, "xmlns=\"http://www.w3.org/2000/svg\""));
    cr_expect_eq(count(a, "<script type=\"application/json\" id=\"parplan-data\">"), 1);
    cr_expect(strstr(a, "<time datetime=\"1700000000\">2023-11-14 22:13 UTC</time>"), "the date as given");
    cr_expect(strstr(a, "@media print{@page{size:A4"), "a print stylesheet for A4");
    cr_expect_eq(count(a, "class=\"chart memory-timeline"), 4, "one timeline per stage (4 stages)");
    cr_expect_eq(count(a, "class=\"chart stage-bars"), 1);
    cr_expect_eq(count(a, "class=\"chart schedule"), 1);
    cr_expect_eq(count(a, "class=\"chart waterfall"), 1);
    pp_free(a);
    pp_free(b);
    free(p);
}

Test(report, names_are_escaped_and_json_cannot_close_its_block)
{
    pp_plan *p = malloc(sizeof *p);
    pp_model m;
    pp_cluster c;
    plan_of(p, &m, &c, 1, 2, PP_SCHED_1F1B, 1);
    snprintf(m.name, sizeof m.name, "</script><b x='1'>&");
    snprintf(c.name, sizeof c.name, "<img src=x>");
    char *h = pp_report_estimate(&m, &c, p, &(pp_report_meta){"parplan estimate --model '</script>'", 0});
    cr_assert(h);
    cr_expect_eq(count(h, "</script><b"), 0, "the name is escaped in the page and in the JSON block");
    cr_expect_eq(count(h, "<img"), 0);
    cr_expect(strstr(h, "&lt;/script&gt;&lt;b x=&#39;1&#39;&gt;&amp;"));
    cr_expect(strstr(h, "\\u003c/script>\\u003cb x='1'>&"), "JSON escapes '<'");
    cr_expect_eq(count(h, "<script"), 2, "the JSON block and the script, nothing injected");
    pp_free(h);
    free(p);
}

/* Operations of a schedule drawn one by one (wide enough not to merge). */
static int ops_drawn(int pp, int m, pp_schedule sched, int v, char **svg)
{
    pp_plan *p = malloc(sizeof *p);
    pp_model mo;
    pp_cluster c;
    plan_of(p, &mo, &c, pp, m, sched, v);
    char *h = pp_report_estimate(&mo, &c, p, &META);
    cr_assert(h);
    *svg = element(h, "plan-1-schedule", "</svg>");
    int n = count(*svg, "<rect class=\"op ");
    pp_free(h);
    free(p);
    return n;
}

Test(report, schedules_run_every_operation)
{
    char *svg;
    /* 1F1B, 4 stages x 4 micro-batches: 2 x 4 x 4 = 32 operations, each
     * wide enough to stand alone, none merged */
    cr_expect_eq(ops_drawn(4, 4, PP_SCHED_1F1B, 1, &svg), 32);
    cr_expect_eq(count(svg, "class=\"op fb\""), 0);
    cr_expect_eq(count(svg, "class=\"idle\""), 4, "one row per stage");
    free(svg);
    cr_expect_eq(ops_drawn(4, 4, PP_SCHED_GPIPE, 1, &svg), 32);
    free(svg);
    /* interleaved, 2 chunks: 2 x 4 stages x 4 micro-batches x 2 chunks */
    cr_expect_eq(ops_drawn(4, 4, PP_SCHED_INTERLEAVED, 2, &svg), 64);
    cr_expect(strstr(svg, "2 chunks per stage"));
    free(svg);
}

Test(report, bubble_is_where_the_cost_model_says)
{
    /* 1F1B, uniform stages: the last stage's first forward starts after the
     * (p-1) forwards ahead of it; 8 stages, 8 micro-batches */
    char *svg;
    ops_drawn(8, 8, PP_SCHED_1F1B, 1, &svg);
    cr_expect(strstr(svg, "data-stages=\"8\" data-microbatches=\"8\""));
    cr_expect_eq(count(svg, "class=\"elided\""), 0, "8 micro-batches need no elision");
    free(svg);
}

Test(report, many_stages_and_micro_batches_stay_bounded)
{
    /* 128 stages, 10,000 micro-batches: the steady state is cut out, said so,
     * and the chart stays small */
    pp_model m = fx_model("megatron-1t"); /* 128 blocks */
    pp_cluster c = fx_cluster("dgx-h100", 16, 0);
    pp_strategy s;
    pp_strategy_default(&s);
    s.pp = 128;
    s.dp = 1;
    s.global_batch = 10000;
    s.seq = 2048;
    pp_plan *p = malloc(sizeof *p);
    pp_error err = {""};
    cr_assert_eq(pp_estimate(&m, &c, &s, p, &err), PP_OK, "%s", err.msg);
    char *h = pp_report_estimate(&m, &c, p, &META);
    cr_assert(h);
    char *svg = element(h, "plan-1-schedule", "</svg>");
    cr_expect(strstr(svg, "data-stages=\"128\" data-microbatches=\"10000\""));
    cr_expect_eq(count(svg, "class=\"stage-row\""), 128);
    cr_expect_geq(count(svg, "<g class=\"elided\" data-microbatches=\""), 1, "the steady state is elided");
    cr_expect(strstr(svg, "steady state elided"));
    cr_expect_lt(strlen(svg), 400000, "schedule of %zu bytes", strlen(svg));
    char *bars = element(h, "plan-1-stages", "</svg>");
    cr_expect_eq(count(bars, "<g class=\"bar "), 128);
    cr_expect_lt(strlen(h), 2000000, "report of %zu bytes", strlen(h));
    cr_expect_eq(count(h, "class=\"chart memory-timeline"), 8, "a selection of 8 stages' timelines");
    free(svg);
    free(bars);
    pp_free(h);
    free(p);
}

Test(report, plan_and_compare_pages)
{
    pp_model m = fx_model("gpt3-1.3b");
    pp_cluster c = fx_cluster("dgx-a100-80g", 1, 0);
    pp_search_opts o;
    pp_search_opts_default(&o);
    o.global_batch = 64;
    o.top_k = 3;
    pp_plan_list l;
    pp_error err = {""};
    cr_assert_eq(pp_plan_search(&m, &c, &o, &l, &err), PP_OK, "%s", err.msg);
    char *h = pp_report_plan(&m, &c, &o, &l, "why text <here>", &META);
    cr_assert(h);
    cr_expect_eq(count(h, "<section class=\"plan\" id=\"plan-"), l.n);
    cr_expect_eq(count(h, "<tr data-plan=\""), l.n, "the top-K table");
    cr_expect(strstr(h, "<table class=\"plans sortable\" id=\"topk\">"));
    cr_expect(strstr(h, "why text &lt;here&gt;"), "the explain text, escaped");
    if (l.n >= 2) cr_expect(strstr(h, "id=\"runner-up\""), "why the runner-up loses");
    pp_free(h);
    pp_plan_list_free(&l);

    pp_compare_cluster cc[2];
    memset(cc, 0, sizeof cc);
    cc[0].cluster = fx_cluster("dgx-a100-80g", 1, 0);
    cc[1].cluster = fx_cluster("dgx-h100", 1, 0);
    pp_compare_opts co;
    pp_compare_opts_default(&co);
    co.search.global_batch = 64;
    co.train_tokens = 1e10;
    pp_compare_result r;
    cr_assert_eq(pp_compare_run(&m, cc, 2, &co, &r, &err), PP_OK, "%s", err.msg);
    h = pp_report_compare(&m, &r, &META);
    cr_assert(h);
    cr_expect_eq(count(h, "class=\"chart pareto\""), 1);
    for (int i = 0; i < r.n; i++) {
        char a[64], sec[64];
        snprintf(a, sizeof a, "<a href=\"#opt-%d\"><g class=\"option\"", i);
        snprintf(sec, sizeof sec, "<section class=\"plan\" id=\"opt-%d\">", i);
        cr_expect(strstr(h, a), "point %d links to its plan", i);
        cr_expect(strstr(h, sec), "option %d has its charts", i);
    }
    pp_free(h);
    pp_compare_free(&r);
}

/* The waterfall names the expert-launch wait inside compute and recompute
 * with the estimate's own number, and only where there is one (review9). */
Test(report, waterfall_names_the_expert_launch_wait)
{
    pp_plan *p = malloc(sizeof *p);
    pp_model m;
    pp_cluster c;
    pp_strategy s;
    fx_moe64_megatron(&m, &c, &s);
    pp_error err = {""};
    cr_assert_eq(pp_estimate(&m, &c, &s, p, &err), PP_OK, "%s", err.msg);
    cr_assert(p->time.expert_host_s > 0);
    char *a = pp_report_estimate(&m, &c, p, &META), want[64];
    cr_assert(a);
    snprintf(want, sizeof want, "data-key=\"expert_host_s\" data-s=\"%.17g\"", p->time.expert_host_s);
    cr_expect(strstr(a, want), "%s", want);
    pp_free(a);
    s.framework = PP_FW_MEGATRON_DEEPSPEED; /* GShard einsums: no wait */
    cr_assert_eq(pp_estimate(&m, &c, &s, p, &err), PP_OK, "%s", err.msg);
    a = pp_report_estimate(&m, &c, p, &META);
    cr_expect_eq(count(a, "expert_host_s\" data-s"), 0);
    pp_free(a);
    free(p);
}
