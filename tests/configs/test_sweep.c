/*
 * test_sweep.c — sweeps: grid indexing (scenario i against nested loops
 * written out, grids far too big to expand), results in spec order for any
 * thread count, the ordered window and its bound, shards that concatenate
 * back to the whole, resume skipping, failures reported per line with the
 * field at fault, bad specs, and the estimate request against the library.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parplan.h"

/* Small, pinned scenarios so the test is quick. */
static const char *spec =
    "{\"grid\": {\"model\": [\"gpt3-125m\", \"gpt3-350m\"], \"cluster\": [\"dgx-a100-80g\"],"
    " \"gpus\": [1, 2], \"global_batch\": [8], \"seq\": [512, 1024], \"precision\": \"bf16\", \"zero\": [0],"
    " \"recompute\": \"none\", \"schedule\": \"1f1b\", \"offload\": \"none\"},"
    " \"scenarios\": [{\"model\": \"no-such-model\", \"cluster\": \"dgx-h100\", \"global_batch\": 8}]}";

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

typedef struct collect {
    char *text;
    size_t len;
    int order[64], n;
} collect;

static int emit(int index, const char *line, pp_status st, void *user)
{
    collect *c = user;
    (void)st;
    size_t l = strlen(line);
    c->text = realloc(c->text, c->len + l + 2);
    memcpy(c->text + c->len, line, l);
    c->len += l;
    c->text[c->len++] = '\n';
    c->text[c->len] = '\0';
    if (c->n < 64) c->order[c->n++] = index;
    return 0;
}

static collect run(int jobs, int k, int n, const int *skip, int nskip, pp_sweep_format f, int *failed)
{
    collect c = {NULL, 0, {0}, 0};
    pp_sweep_opts o;
    memset(&o, 0, sizeof o);
    o.jobs = jobs, o.shard_k = k, o.shard_n = n, o.skip = skip, o.nskip = nskip, o.format = f;
    o.emit = emit, o.user = &c;
    pp_error err = {""};
    cr_assert_eq(pp_sweep_run(spec, strlen(spec), "spec", &o, failed, &err), PP_OK, "%s", err.msg);
    if (!c.text) c.text = calloc(1, 1);
    return c;
}

Test(sweep, grid_expands_last_key_fastest)
{
    int n, failed;
    pp_error err = {""};
    cr_assert_eq(pp_sweep_count(spec, strlen(spec), "spec", &n, &err), PP_OK);
    cr_expect_eq(n, 2 * 2 * 2 + 1);
    collect c = run(1, 0, 0, NULL, 0, PP_SWEEP_JSONL, &failed);
    /* index 1 varies the last key (seq) first: model 125m, gpus 1, seq 1024 */
    char *l1 = strchr(c.text, '\n') + 1;
    cr_expect(strncmp(l1, "{\"index\":1,", 11) == 0, "%.40s", l1);
    cr_expect(strstr(l1, "\"gpt3-125m\"") && strstr(l1, "\"seq\":1024") && strstr(l1, "\"gpus\":1"), "%.200s", l1);
    cr_expect_eq(failed, 1, "the unknown model fails, the sweep goes on");
    cr_expect(strstr(c.text, "\"index\":8,") && strstr(c.text, "unknown model"));
    for (int i = 0; i < c.n; i++) cr_expect_eq(c.order[i], i);
    free(c.text);
}

Test(sweep, same_output_for_any_thread_count)
{
    int f1, f2;
    collect a = run(1, 0, 0, NULL, 0, PP_SWEEP_JSONL, &f1), b = run(2, 0, 0, NULL, 0, PP_SWEEP_JSONL, &f2);
    cr_expect_str_eq(a.text, b.text);
    free(a.text);
    free(b.text);
}

/* Concatenating the shards and sorting by index reproduces the whole.
 * (The shards run first: an OpenMP team that shrinks ends pool threads,
 * and a thread that ends leaks the GLPK environment the planner left on
 * it; see the report on planner/ilp_glpk.c.) */
Test(sweep, shards_concatenate_to_the_whole)
{
    int failed;
    char *lines[64] = {0};
    int total = 0;
    for (int k = 1; k <= 3; k++) {
        collect part = run(1, k, 3, NULL, 0, PP_SWEEP_CSV, &failed);
        for (char *line = strtok(part.text, "\n"); line; line = strtok(NULL, "\n")) {
            int idx = atoi(line);
            cr_assert(idx >= 0 && idx < 64);
            cr_expect_eq(idx % 3, k - 1, "shard %d/3 ran index %d", k, idx);
            lines[idx] = strdup(line);
            total++;
        }
        free(part.text);
    }
    collect whole = run(2, 0, 0, NULL, 0, PP_SWEEP_CSV, &failed);
    size_t cap = whole.len + 1, len = 0;
    char *joined = calloc(cap, 1);
    for (int i = 0; i < total; i++) {
        cr_assert(lines[i], "index %d missing", i);
        len += (size_t)snprintf(joined + len, cap - len, "%s\n", lines[i]);
        free(lines[i]);
    }
    cr_expect_str_eq(joined, whole.text);
    free(joined);
    free(whole.text);
}

Test(sweep, resume_skips_done_indices)
{
    int failed, skip[] = {0, 1, 2, 5};
    collect c = run(1, 0, 0, skip, 4, PP_SWEEP_JSONL, &failed);
    cr_expect_eq(c.n, 5);
    cr_expect_eq(c.order[0], 3);
    cr_expect_eq(c.order[2], 6);
    free(c.text);
}

Test(sweep, csv_has_the_documented_header)
{
    const char *h = pp_sweep_csv_header();
    cr_expect(strncmp(h, "index,status,model,cluster,gpus,global_batch,seq,", 49) == 0);
    int commas = 0;
    for (const char *p = h; *p; p++) commas += *p == ',';
    cr_expect_eq(commas, 39, "40 fixed columns");
    cr_expect(strstr(h, ",cost_usd,error,etp,ep_dispatch,overlap_ep,expandable_segments,opt_states,recompute_modules,"
                        "fp8_param_gather") != NULL,
              "the columns added last follow the message: %s", h);
    /* the column positions of the first release: precision is the 18th */
    cr_expect(strstr(h, ",recompute,precision,") != NULL, "%s", h);
    cr_expect(strstr(h, ",fp8_param_gather,act_offload_layers,launcher") != NULL && h[strlen(h) - 1] == 'r',
              "added last: %s", h);
    cr_expect(strstr(h, ",seq,framework,dp,") != NULL, "%s", h);
}

/* --framework: scenarios without "framework" get the list; a scenario's own wins. */
Test(sweep, frameworks_fill_scenarios_that_give_none)
{
    const char *two = "{\"scenarios\": [{\"model\": \"gpt3-125m\", \"cluster\": \"dgx-a100-80g\", \"gpus\": 2,"
                      " \"global_batch\": 8, \"seq\": 512},"
                      " {\"model\": \"gpt3-125m\", \"cluster\": \"dgx-a100-80g\", \"gpus\": 2,"
                      " \"global_batch\": 8, \"seq\": 512, \"framework\": \"deepspeed\"}]}";
    pp_sweep *sw;
    pp_error err = {""};
    cr_assert_eq(pp_sweep_open(two, strlen(two), "spec", &sw, &err), PP_OK, "%s", err.msg);
    pp_sweep_opts o;
    memset(&o, 0, sizeof o);
    o.frameworks = 1u << PP_FW_MEGATRON | 1u << PP_FW_FSDP;
    char *a = pp_sweep_scenario(sw, &o, 0), *b = pp_sweep_scenario(sw, &o, 1);
    cr_expect(strstr(a, "\"framework\":[\"megatron\",\"fsdp\"]"), "%s", a);
    cr_expect(strstr(b, "\"framework\":\"deepspeed\"") && !strstr(b, "megatron"), "%s", b);
    pp_status st;
    char *line = pp_sweep_result(sw, &o, 0, &st);
    cr_expect_eq(st, PP_OK, "%s", line);
    cr_expect(strstr(line, "\"framework\":\"megatron\"") || strstr(line, "\"framework\":\"fsdp\""), "%.300s", line);
    cr_expect(!strstr(line, "\"framework\":\"deepspeed\"") && !strstr(line, "\"framework\":\"pytorch\""));
    free(a), free(b), free(line);
    pp_sweep_close(sw);
}

Test(sweep, bad_specs_are_rejected)
{
    pp_error err = {""};
    int n;
    const char *bad[] = {"{", "{\"grid\": {\"model\": []}}", "{\"gird\": {}}", "{\"scenarios\": 3}", "[]", "{}"};
    const char *want[] = {"malformed", "non-empty", "did you mean \"grid\"", "expected a list", "JSON object",
                          "expected \"grid\" or \"scenarios\""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_eq(pp_sweep_count(bad[i], strlen(bad[i]), "spec.json", &n, &err), PP_ERR_INPUT, "%s", bad[i]);
        cr_expect(strstr(err.msg, want[i]) && strstr(err.msg, "spec.json"), "%s -> %s", bad[i], err.msg);
    }
}

Test(sweep, library_request_round_trip)
{
    pp_status st;
    char *out = pp_plan_request("{\"model\": \"gpt3-125m\", \"cluster\": \"dgx-a100-80g\", \"gpus\": 1,"
                                " \"global_batch\": 4, \"seq\": 512, \"top\": 2}", &st);
    cr_assert(out);
    cr_expect_eq(st, PP_OK, "%s", out);
    cr_expect(strstr(out, "\"plans\":[") != NULL);
    pp_free(out);
    out = pp_plan_request("{\"model\": \"gpt3-125m\", \"cluster\": \"dgx-a100-80g\", \"global_batch\": 4, \"tpp\": 2}", &st);
    cr_expect_eq(st, PP_ERR_INPUT);
    cr_expect(strstr(out, "did you mean") != NULL, "%s", out);
    pp_free(out);
}

/* The strategy choices a scenario may fix: good values read back, bad ones
 * are refused with the key's path and what was expected. */
Test(sweep, scenario_strategy_choices)
{
    pp_scenario sc;
    pp_error err = {""};
    const char *ok = "{\"model\": \"llama3-8b\", \"cluster\": \"dgx-h100\", \"global_batch\": 8, \"loss\": \"chunked\","
                     " \"cp_comm\": \"allgather\", \"grad_accum_dtype\": \"fp32\", \"free_pipeline_outputs\": true,"
                     " \"expandable_segments\": false}";
    cr_assert_eq(pp_scenario_parse(ok, strlen(ok), "t.json", &sc, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(sc.opts.base.loss, PP_LOSS_CHUNKED);
    cr_expect_eq(sc.opts.base.cp_comm, PP_CP_ALLGATHER);
    cr_expect_eq(sc.opts.base.grad_accum_dtype, PP_GRAD_FP32);
    cr_expect_eq(sc.opts.base.buf.free_pipeline_outputs, 1);
    cr_expect_eq(sc.opts.base.buf.expandable_segments, 0, "the caching allocator, pinned");
    static const struct { const char *json, *path, *want; } bad[] = {
        {"\"loss\": \"fp16\"", "$.loss", "fp32|fused|chunked"},
        {"\"cp_comm\": \"torus\"", "$.cp_comm", "ring|allgather|a2a"},
        {"\"framework\": \"jax\"", "$.framework", "pytorch|deepspeed|megatron|megatron-deepspeed|fsdp"},
        {"\"free_pipeline_outputs\": 1", "$.free_pipeline_outputs", "true or false"},
        {"\"expandable_segments\": \"yes\"", "$.expandable_segments", "true or false"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char json[256];
        snprintf(json, sizeof json, "{\"model\": \"llama3-8b\", \"cluster\": \"dgx-h100\", \"global_batch\": 8, %s}",
                 bad[i].json);
        err.msg[0] = '\0';
        cr_expect_eq(pp_scenario_parse(json, strlen(json), "t.json", &sc, &err), PP_ERR_INPUT, "%s", json);
        cr_expect(strstr(err.msg, bad[i].path) && strstr(err.msg, bad[i].want), "%s: %s", json, err.msg);
    }
}

/* ------------------------------------------------------------ lazy indexing */

/* Scenario i of a grid is the i-th tuple of nested loops, the last key
 * innermost, then the listed scenarios: checked against the loops written
 * out, for every index. */
Test(sweep, scenario_i_is_the_ith_tuple_of_the_nested_loops)
{
    const char *g = "{\"grid\": {\"model\": [\"a\", \"b\", \"c\"], \"gpus\": [1, 2, 4, 8], \"tp\": 2,"
                    " \"seq\": [128, 256, 512, 1024, 2048]}, \"scenarios\": [{\"model\": \"x\"}, {\"model\": \"y\"}]}";
    static const char *const models[] = {"a", "b", "c"};
    static const int gpus[] = {1, 2, 4, 8}, seqs[] = {128, 256, 512, 1024, 2048};
    pp_sweep *s;
    pp_error err = {""};
    cr_assert_eq(pp_sweep_open(g, strlen(g), "g.json", &s, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(pp_sweep_size(s), 3 * 4 * 5 + 2);
    int i = 0;
    char want[256];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 5; c++, i++) {
                snprintf(want, sizeof want, "{\"model\":\"%s\",\"gpus\":%d,\"tp\":2,\"seq\":%d}", models[a], gpus[b], seqs[c]);
                char *got = pp_sweep_scenario(s, NULL, i);
                cr_expect_str_eq(got, want, "index %d", i);
                pp_free(got);
            }
    char *x = pp_sweep_scenario(s, NULL, 60), *y = pp_sweep_scenario(s, NULL, 61);
    cr_expect_str_eq(x, "{\"model\":\"x\"}");
    cr_expect_str_eq(y, "{\"model\":\"y\"}");
    cr_expect_null(pp_sweep_scenario(s, NULL, 62), "past the end");
    cr_expect_null(pp_sweep_scenario(s, NULL, -1));
    pp_free(x);
    pp_free(y);
    pp_sweep_close(s);
}

/* A grid of 2,000,000,000 scenarios opens, and any of them is built on
 * its own: expanding it (the old way) would need hundreds of GB. */
Test(sweep, a_two_billion_scenario_grid_opens_and_indexes)
{
    char big[8192], *p = big;
    p += sprintf(p, "{\"grid\": {\"a\": [");
    for (int i = 0; i < 1000; i++) p += sprintf(p, "%s%d", i ? "," : "", i);
    p += sprintf(p, "], \"b\": [");
    for (int i = 0; i < 2; i++) p += sprintf(p, "%s%d", i ? "," : "", i);
    p += sprintf(p, "], \"c\": [0,1,2,3,4,5,6,7,8,9], \"d\": [0,1,2,3,4,5,6,7,8,9], \"e\": [0,1,2,3,4,5,6,7,8,9],"
                    " \"f\": [0,1,2,3,4,5,6,7,8,9], \"g\": [0,1,2,3,4,5,6,7,8,9], \"h\": [0,1,2,3,4,5,6,7,8,9]}}");
    pp_sweep *s;
    pp_error err = {""};
    cr_assert_eq(pp_sweep_open(big, strlen(big), "big.json", &s, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(pp_sweep_size(s), 2000000000);
    /* 1,234,567,891 = a 617, b 0 (617 * 2e6 = 1,234,000,000; rest 567,891 < 1e6) -> c..h = 5,6,7,8,9,1 */
    char *t = pp_sweep_scenario(s, NULL, 1234567891);
    cr_expect_str_eq(t, "{\"a\":617,\"b\":0,\"c\":5,\"d\":6,\"e\":7,\"f\":8,\"g\":9,\"h\":1}");
    pp_free(t);
    t = pp_sweep_scenario(s, NULL, 1999999999);
    cr_expect_str_eq(t, "{\"a\":999,\"b\":1,\"c\":9,\"d\":9,\"e\":9,\"f\":9,\"g\":9,\"h\":9}");
    pp_free(t);
    pp_sweep_close(s);
    /* one more key of 2 values passes INT_MAX: refused, with the count */
    strcpy(strstr(big, "}}"), ", \"i\": [0, 1]}}");
    cr_expect_eq(pp_sweep_open(big, strlen(big), "big.json", &s, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "big.json: $.grid: expands to 4000000000 scenarios"), "%s", err.msg);
}

/* A 100,000-value list: the last value is scenario 99,999 (each is found
 * through the key's pointer array, not by walking the list). */
Test(sweep, a_long_list_indexes_its_last_value)
{
    size_t cap = 1 << 20, l = 0;
    char *big = malloc(cap);
    l += (size_t)snprintf(big + l, cap - l, "{\"grid\": {\"model\": \"m\", \"global_batch\": [");
    for (int i = 1; i <= 100000; i++) l += (size_t)snprintf(big + l, cap - l, "%s%d", i > 1 ? "," : "", i);
    snprintf(big + l, cap - l, "]}}");
    pp_sweep *s;
    pp_error err = {""};
    cr_assert_eq(pp_sweep_open(big, strlen(big), "long.json", &s, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(pp_sweep_size(s), 100000);
    char *t = pp_sweep_scenario(s, NULL, 99999);
    cr_expect_str_eq(t, "{\"model\":\"m\",\"global_batch\":100000}");
    pp_free(t);
    pp_sweep_close(s);
    free(big);
}

/* Selection law over random shards and skip lists: pp_sweep_selected agrees
 * with "i mod N == K-1 and i not skipped", and a sweep runs exactly the
 * selected indices, in order. */
Test(sweep, shards_and_skips_select_by_the_rule)
{
    srand(7);
    for (int trial = 0; trial < 200; trial++) {
        int skip[40], nskip = rand() % 40, n = 1 + rand() % 300;
        for (int i = 0; i < nskip; i++) skip[i] = rand() % (n + 5);
        qsort(skip, (size_t)nskip, sizeof *skip, cmp_int);
        pp_sweep_opts o = {0};
        o.shard_n = rand() % 4;
        o.shard_k = o.shard_n ? 1 + rand() % o.shard_n : 0;
        o.skip = skip, o.nskip = nskip;
        for (int i = 0; i < n; i++) {
            int in_skip = 0;
            for (int k = 0; k < nskip; k++) in_skip |= skip[k] == i;
            int want = !in_skip && (o.shard_n == 0 || i % o.shard_n == o.shard_k - 1);
            cr_assert_eq(pp_sweep_selected(&o, i), want, "trial %d: i %d of %d, shard %d/%d", trial, i, n, o.shard_k,
                         o.shard_n);
        }
    }
}

/* ------------------------------------------------------------ the ordered window */

typedef struct window_case {
    int claimed[8], n;
    int order[8], got;
    int full_after;  /* claims before the window said "full" */
} window_case;

/* The driver claims every index itself (no worker thread), hands the
 * results back in reverse order, and must take them out in index order;
 * the window (4) refuses a 5th claim until the head is taken. */
static pp_status window_drive(pp_sweep_queue *q, void *user)
{
    window_case *w = user;
    int i, index, r;
    char *line;
    pp_status st;
    while ((r = pp_sweep_queue_claim(q, &i)) == 1) w->claimed[w->n++] = i;
    w->full_after = r == 0 ? w->n : -1;
    cr_expect_eq(pp_sweep_queue_next(q, 0, &index, &line, &st), 0, "nothing is ready yet");
    for (int k = w->n - 1; k >= 0; k--) {
        char text[32];
        snprintf(text, sizeof text, "line %d", w->claimed[k]);
        cr_assert_eq(pp_sweep_queue_put(q, w->claimed[k], text, PP_OK), PP_OK);
        if (k > 0) cr_expect_eq(pp_sweep_queue_next(q, 0, &index, &line, &st), 0, "head %d not in yet", w->claimed[0]);
    }
    cr_expect_eq(pp_sweep_queue_put(q, 99, "x", PP_OK), PP_ERR_INPUT, "an index never claimed");
    while ((r = pp_sweep_queue_next(q, 0, &index, &line, &st)) == 1) {
        w->order[w->got++] = index;
        pp_free(line);
    }
    /* the rest of the sweep (indices 4, 5) runs on this thread */
    while ((r = pp_sweep_queue_next(q, 1, &index, &line, &st)) == 1) {
        w->order[w->got++] = index;
        pp_free(line);
    }
    cr_expect_eq(r, -1);
    return PP_OK;
}

Test(sweep, window_releases_in_index_order_and_bounds_what_is_held)
{
    const char *g = "{\"scenarios\": [{\"model\": \"m0\"}, {\"model\": \"m1\"}, {\"model\": \"m2\"}, {\"model\": \"m3\"},"
                    " {\"model\": \"m4\"}, {\"model\": \"m5\"}]}";
    pp_sweep *s;
    pp_error err = {""};
    cr_assert_eq(pp_sweep_open(g, strlen(g), "w.json", &s, &err), PP_OK, "%s", err.msg);
    pp_sweep_opts o = {0};
    o.jobs = 1, o.window = 4; /* no worker thread: only the driver claims */
    window_case w = {{0}, 0, {0}, 0, 0};
    cr_assert_eq(pp_sweep_stream(s, &o, window_drive, &w, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(w.full_after, 4, "the window holds 4");
    cr_expect_eq(w.got, 6);
    for (int i = 0; i < w.got; i++) cr_expect_eq(w.order[i], i);
    pp_sweep_close(s);
}

static int stop_at_three(int index, const char *line, pp_status st, void *user)
{
    (void)line, (void)st;
    int *n = user;
    (*n)++;
    return index == 2;
}

Test(sweep, an_emit_callback_stops_the_sweep)
{
    pp_sweep_opts o = {0};
    int n = 0, failed;
    pp_error err = {""};
    o.jobs = 2, o.emit = stop_at_three, o.user = &n;
    cr_expect_eq(pp_sweep_run(spec, strlen(spec), "spec", &o, &failed, &err), PP_ERR_IO);
    cr_expect_eq(n, 3, "no line after the stop");
    cr_expect(strstr(err.msg, "stopped") != NULL, "%s", err.msg);
}

/* The library keeps the CLI's bounds: --jobs 1..1024 (0 = default), --top
 * 1..PP_TOP_MAX (0 = each scenario's); a caller passing 100000 threads got
 * libgomp's abort or a segfault, and -1 was taken as the default. */
Test(sweep, options_out_of_range_are_bad_input)
{
    static const struct { int jobs, top; const char *says; } bad[] = {
        {-1, 0, "jobs"}, {PP_SWEEP_MAX_JOBS + 1, 0, "jobs"}, {100000, 0, "jobs"}, {1, -1, "top"}, {1, PP_TOP_MAX + 1, "top"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pp_sweep_opts o = {0};
        int n = 0, failed = 0;
        pp_error err = {""};
        o.jobs = bad[i].jobs, o.top = bad[i].top, o.emit = stop_at_three, o.user = &n;
        cr_expect_eq(pp_sweep_run(spec, strlen(spec), "spec", &o, &failed, &err), PP_ERR_INPUT, "case %zu", i);
        cr_expect(strstr(err.msg, bad[i].says) != NULL, "case %zu: %s", i, err.msg);
        cr_expect_eq(n, 0, "case %zu: nothing run", i);
    }
}

/* ------------------------------------------------------------ lines */

Test(sweep, top_fills_scenarios_without_one)
{
    const char *g = "{\"scenarios\": [{\"model\": \"gpt3-125m\", \"cluster\": \"dgx-a100-80g\", \"gpus\": 2, \"global_batch\": 8,"
                    " \"seq\": 512},"
                    " {\"model\": \"gpt3-125m\", \"cluster\": \"dgx-a100-80g\", \"gpus\": 2, \"global_batch\": 8, \"seq\": 512,"
                    " \"top\": 2}]}";
    pp_sweep *s;
    pp_error err = {""};
    pp_status st;
    cr_assert_eq(pp_sweep_open(g, strlen(g), "t.json", &s, &err), PP_OK, "%s", err.msg);
    pp_sweep_opts o = {0};
    o.top = 1;
    for (int i = 0; i < 2; i++) {
        char *line = pp_sweep_result(s, &o, i, &st);
        cJSON *r = cJSON_Parse(line);
        cr_assert(r, "%s", line);
        int top = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "scenario"), "top")->valueint;
        cr_expect_eq(top, i == 0 ? 1 : 2, "scenario %d echoes top %d", i, top);
        cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r, "plans")), top);
        cJSON_Delete(r);
        pp_free(line);
    }
    pp_sweep_close(s);
}

/* A string with a comma, a quote or a newline is one quoted CSV field. */
Test(sweep, csv_quotes_strings_that_need_it)
{
    const char *g = "{\"scenarios\": [{\"model\": \"a,b \\\"c\\\"\\nd\", \"cluster\": \"dgx-h100\", \"global_batch\": 8}]}";
    pp_sweep *s;
    pp_error err = {""};
    pp_status st;
    cr_assert_eq(pp_sweep_open(g, strlen(g), "q.json", &s, &err), PP_OK, "%s", err.msg);
    pp_sweep_opts o = {0};
    o.format = PP_SWEEP_CSV;
    char *line = pp_sweep_result(s, &o, 0, &st);
    cr_expect_eq(st, PP_ERR_INPUT);
    cr_expect(strncmp(line, "0,bad input,\"a,b \"\"c\"\" d\",dgx-h100,", 35) == 0, "%s", line);
    cr_expect(strchr(line, '\n') == NULL, "one line");
    pp_free(line);
    pp_sweep_close(s);
}

/* Each failure names the scenario key at fault. */
Test(sweep, errors_name_the_field)
{
    static const struct { const char *sc, *field; int code; } cases[] = {
        {"{\"model\": \"gpt3-125m\", \"cluster\": \"dgx-h100\", \"global_batch\": 8, \"tpp\": 2}", "$.tpp", 2},
        {"{\"model\": \"no-such\", \"cluster\": \"dgx-h100\", \"global_batch\": 8}", "$.model", 2},
        {"{\"model\": \"gpt3-125m\", \"cluster\": \"no-such\", \"global_batch\": 8}", "$.cluster", 2},
        {"{\"model\": \"gpt3-125m\", \"cluster\": \"dgx-h100\", \"gpus\": 12, \"global_batch\": 8}", "$.gpus", 2},
        {"{\"model\": \"gpt3-125m\", \"cluster\": \"dgx-h100\", \"gpus\": 8, \"global_batch\": 8, \"tp\": 3}", "$.tp", 2},
        {"{\"model\": \"gpt3-175b\", \"cluster\": \"dgx-h100\", \"gpus\": 1, \"global_batch\": 8, \"offload\": \"none\"}", "", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_status st;
        char *out = pp_plan_request(cases[i].sc, &st);
        cJSON *r = cJSON_Parse(out), *e = cJSON_GetObjectItem(r, "error");
        cr_assert(e, "%s", out);
        cr_expect_str_eq(cJSON_GetObjectItem(e, "field")->valuestring, cases[i].field, "%s", out);
        cr_expect_eq(cJSON_GetObjectItem(e, "exit_code")->valueint, cases[i].code, "%s", out);
        cJSON_Delete(r);
        pp_free(out);
    }
}

Test(sweep, error_field_reads_every_message_form)
{
    static const struct { const char *msg, *field; } cases[] = {
        {"spec.json: $.grid.gpus: expected a non-empty list", "$.grid.gpus"},
        {"spec.json: $.scenarios[3].tp: expected an integer", "$.scenarios[3].tp"},
        {"spec.json: $: expected a JSON object at the top level, got an array", "$"},
        {"--tp 3: must divide the 8 GPUs", "tp"},
        {"--global-batch: expected an integer >= 1, got 0", "global-batch"},
        {"spec.json:1:7: malformed or truncated JSON: expected a complete JSON object", "$"},
        {"spec.json: empty file: expected a JSON object", "$"},
        {"unknown model 'x' (see `parplan models`)", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_error err = {""};
        char buf[64];
        snprintf(err.msg, sizeof err.msg, "%s", cases[i].msg);
        cr_expect_str_eq(pp_error_field(&err, buf, sizeof buf), cases[i].field, "%s", cases[i].msg);
    }
}

/* ------------------------------------------------------------ estimate request */

/* The request gives the plan pp_estimate gives for the strategy built by
 * hand with the CLI's defaults (dp = GPUs / (tp pp cp), global batch =
 * micro-batch x dp), rendered by pp_plan_to_json. */
/* A library request's status and two texts its answer must hold (b may be
 * NULL). */
static void request_says(const char *json, pp_status want, const char *a, const char *b)
{
    pp_status st;
    char *out = pp_estimate_request(json, &st);
    cr_expect_eq(st, want, "%s", out);
    cr_expect(strstr(out, a) && (!b || strstr(out, b)), "%s", out);
    pp_free(out);
}

Test(sweep, estimate_request_equals_the_library_estimate)
{
    pp_status st;
    char *out = pp_estimate_request("{\"model\": \"llama3-8b\", \"cluster\": \"dgx-h100\", \"gpus\": 16, \"tp\": 2, \"pp\": 2,"
                                    " \"zero\": 1, \"micro_batch\": 2, \"recompute\": \"selective\", \"seq\": 4096,"
                                    " \"train_tokens\": 1e11}", &st);
    cr_assert_eq(st, PP_OK, "%s", out);
    pp_model m;
    pp_cluster c;
    pp_strategy s;
    pp_plan p;
    pp_error err = {""};
    cr_assert_eq(pp_model_load("llama3-8b", &m, &err), PP_OK);
    cr_assert_eq(pp_cluster_load("dgx-h100", &c, &err), PP_OK);
    cr_assert_eq(pp_cluster_resize(&c, 0, 16, &err), PP_OK);
    pp_strategy_default(&s);
    s.tp = 2, s.pp = 2, s.zero = 1, s.micro_batch = 2, s.recompute = PP_RECOMPUTE_SELECTIVE, s.seq = 4096;
    s.dp = 16 / 4;
    s.global_batch = 2 * 4;
    cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
    pp_plan_train(&c, &p, 1e11, 0, 0);
    char *want = pp_plan_to_json(&m, &c, &p);
    cJSON *r = cJSON_Parse(out), *w = cJSON_Parse(want);
    cr_expect(cJSON_Compare(cJSON_GetObjectItem(r, "plan"), w, 1), "request:\n%s\nlibrary:\n%s", out, want);
    cJSON_Delete(r);
    cJSON_Delete(w);
    pp_free(want);
    pp_free(out);
#define REQ "{\"model\": \"llama3-8b\", \"cluster\": \"dgx-h100\", "
#define MEG REQ "\"framework\": \"megatron\", "
    request_says(REQ "\"tp\": 0}", PP_ERR_INPUT, "\"field\":\"$.tp\"", NULL);
    request_says(REQ "\"lora_rank\": 8}", PP_ERR_INPUT, "\"field\":\"$.lora_rank\"", NULL);
    /* a rule on the strategy's overlap_tp is the request's key tp_overlap (found by fuzz_estimate_request's seeds) */
    request_says(REQ "\"tp\": 2, \"sp\": true, \"tp_overlap\": true, \"framework\": \"megatron-deepspeed\"}",
                 PP_ERR_INPUT, "\"field\":\"$.tp_overlap\"", "\"message\":\"$.tp_overlap = on: ");
    /* recompute_modules: a list of names read into the plan's strategy; an unknown name names the key */
    request_says(MEG "\"recompute\": \"selective\", \"recompute_modules\": [\"core_attn\", \"mlp\"]}", PP_OK,
                 "\"recompute_modules\":[\"core_attn\",\"mlp\"]", NULL);
    request_says(MEG "\"recompute\": \"selective\", \"recompute_modules\": [\"attn\"]}", PP_ERR_INPUT,
                 "recompute_modules", NULL);
    /* fp8_param_gather: a bool, read into the plan; anything else names the key */
    request_says(MEG "\"zero\": 1, \"precision\": \"fp8\", \"fp8_param_gather\": false}", PP_OK,
                 "\"fp8_param_gather\":false", NULL);
    request_says(MEG "\"zero\": 1, \"precision\": \"fp8\", \"fp8_param_gather\": \"yes\"}", PP_ERR_INPUT,
                 "fp8_param_gather", NULL);
#undef MEG
#undef REQ
}
