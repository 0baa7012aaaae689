/*
 * test_sweep.c — sweeps: grid expansion order (last key fastest), results
 * in spec order for any thread count, shards that concatenate back to the
 * whole, resume skipping, failures reported per line, and bad specs.
 */
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

/* Concatenating the shards and sorting by index reproduces the whole. */
Test(sweep, shards_concatenate_to_the_whole)
{
    int failed;
    collect whole = run(2, 0, 0, NULL, 0, PP_SWEEP_CSV, &failed);
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
    cr_expect_eq(commas, 30, "31 fixed columns");
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
                     " \"cp_comm\": \"allgather\", \"grad_accum_dtype\": \"fp32\", \"free_pipeline_outputs\": true}";
    cr_assert_eq(pp_scenario_parse(ok, strlen(ok), "t.json", &sc, &err), PP_OK, "%s", err.msg);
    cr_expect_eq(sc.opts.base.loss, PP_LOSS_CHUNKED);
    cr_expect_eq(sc.opts.base.cp_comm, PP_CP_ALLGATHER);
    cr_expect_eq(sc.opts.base.grad_accum_dtype, PP_GRAD_FP32);
    cr_expect_eq(sc.opts.base.buf.free_pipeline_outputs, 1);
    static const struct { const char *json, *path, *want; } bad[] = {
        {"\"loss\": \"fp16\"", "$.loss", "fp32|fused|chunked"},
        {"\"cp_comm\": \"torus\"", "$.cp_comm", "ring|allgather|a2a"},
        {"\"framework\": \"jax\"", "$.framework", "pytorch|deepspeed|megatron|megatron-deepspeed|fsdp"},
        {"\"free_pipeline_outputs\": 1", "$.free_pipeline_outputs", "true or false"},
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
