/*
 * test_readback.c — every plan the search returns, launched as priced:
 * for each scenario (the four of issue 12 with --framework all and each
 * framework, a one-GPU LoRA and a QLoRA fine-tune, FSDP with hybrid
 * sharding, torchtitan with pipeline stages) every plan's launch files are
 * built (pp_launch_files), written to a folder, and read back by running
 * the `parplan estimate` command its README.txt's "Check" line gives, in
 * that folder, with --format json. The peak memory and the step time read
 * back must equal the plan's within 0.5%; the worst relative error is
 * printed. A plan whose files cannot be read back fails the test, except
 * for the writer bugs listed in known_gaps (reported; each entry names the
 * file and line to fix and goes once fixed).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parplan.h"

#define TOLERANCE 0.005

/* Writer bugs the readers find (reported to the lead; remove when fixed):
 * the read-back fails with this text. */
static const struct { const char *text, *where; } known_gaps[] = {
    {NULL, NULL}, /* none left: the three writer bugs found here are fixed */
};
#define NGAPS ((int)(sizeof known_gaps / sizeof *known_gaps) - 1)

typedef struct scenario {
    const char *name, *model, *cluster;
    int nodes, gpus, global_batch, seq, top;
    int framework;        /* -1: all */
    unsigned precisions;  /* 0: the default set */
    pp_train_mode mode;
    int lora_rank;
    int act_offload;      /* blocks whose activations Megatron offloads */
} scenario;

typedef struct tally {
    int plans, read, gaps[NGAPS + 1], skipped;
    double worst_peak, worst_step;
    char worst_where[256];
} tally;

static char root[256];

static void make_root(void)
{
    if (root[0]) return;
    const char *t = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/parplan-readback-XXXXXX", t && *t ? t : "/tmp");
    cr_assert(mkdtemp(root), "cannot create a temporary folder");
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(text, f);
    cr_assert(fclose(f) == 0);
}

static void remove_dir(const char *dir, const pp_launch *l)
{
    char path[1024];
    for (int i = 0; i < l->n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, l->files[i].name);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/.out", dir), unlink(path);
    snprintf(path, sizeof path, "%s/.err", dir), unlink(path);
    rmdir(dir);
}

/* The "Check" command of README.txt split into words (single quotes as
 * launch.c writes them); argv[0] is the parplan binary. */
static int check_argv(const char *readme, char *buf, size_t cap, char **argv, int max)
{
    const char *at = strstr(readme, "\nCheck");
    cr_assert(at, "README.txt has no Check line:\n%s", readme);
    at = strstr(at, "parplan estimate ");
    cr_assert(at, "the Check paragraph has no command");
    const char *end = strchr(at, '\n');
    size_t n = 0;
    int argc = 0;
    argv[argc++] = (char *)PARPLAN_CLI;
    for (const char *p = at + strlen("parplan "); p < end;) {
        while (p < end && *p == ' ') p++;
        if (p >= end) break;
        cr_assert(argc < max - 3 && n + 1 < cap);
        argv[argc++] = buf + n;
        while (p < end && *p != ' ') {
            if (*p == '\'') {
                for (p++; p < end && *p != '\''; p++) buf[n++] = *p;
                p++;
                if (p + 2 < end && p[0] == '\\' && p[1] == '\'' && p[2] == '\'') buf[n++] = '\'', p += 3;
            } else {
                buf[n++] = *p++;
            }
        }
        buf[n++] = '\0';
    }
    argv[argc++] = "--format";
    argv[argc++] = "json";
    argv[argc] = NULL;
    return argc;
}

/* Runs argv in dir; stdout and stderr into dir/.out and dir/.err. */
static int run_in(const char *dir, char **argv, char **out, char **err)
{
    char po[1024], pe[1024];
    snprintf(po, sizeof po, "%s/.out", dir);
    snprintf(pe, sizeof pe, "%s/.err", dir);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int in = open("/dev/null", O_RDONLY);
        if (fo < 0 || fe < 0 || in < 0 || chdir(dir) || dup2(in, 0) < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(126);
        alarm(120);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    cr_assert(waitpid(pid, &status, 0) == pid);
    FILE *f;
    char **dst[2] = {out, err};
    const char *src[2] = {po, pe};
    for (int k = 0; k < 2; k++) {
        cr_assert((f = fopen(src[k], "r")));
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        rewind(f);
        *dst[k] = calloc((size_t)len + 1, 1);
        cr_assert(*dst[k] && fread(*dst[k], 1, (size_t)len, f) == (size_t)len);
        fclose(f);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static double rel(double got, double want) { return want != 0 ? fabs(got / want - 1) : fabs(got); }

/* One plan: its files written, the Check command run, the numbers compared. */
static void read_back(const pp_model *m, const pp_cluster *c, const pp_plan *p, const char *dir, tally *t)
{
    pp_launch l;
    pp_error err = {""};
    cr_assert_eq(pp_launch_files(m, c, p, NULL, &l, &err), PP_OK, "%s: pp_launch_files: %s", dir, err.msg);
    cr_assert(mkdir(dir, 0700) == 0, "mkdir %s", dir);
    const char *readme = NULL;
    for (int i = 0; i < l.n; i++) {
        write_file(dir, l.files[i].name, l.files[i].text);
        if (!strcmp(l.files[i].name, "README.txt")) readme = l.files[i].text;
    }
    cr_assert(readme);
    char buf[4096], *argv[64], *out = NULL, *errs = NULL;
    check_argv(readme, buf, sizeof buf, argv, 64);
    int rc = run_in(dir, argv, &out, &errs);
    t->plans++;
    int gap = -1;
    for (int g = 0; rc == 2 && g < NGAPS && gap < 0; g++)
        if (strstr(errs, known_gaps[g].text)) gap = g;
    if (gap >= 0) {
        t->gaps[gap]++;
    } else {
        cr_expect_eq(rc, 0, "%s: the Check command failed (exit %d): %s\n%s", dir, rc, errs, readme);
        cJSON *j = rc == 0 ? cJSON_Parse(out) : NULL;
        cJSON *mem = cJSON_GetObjectItemCaseSensitive(j, "memory"), *tm = cJSON_GetObjectItemCaseSensitive(j, "time");
        cJSON *peak = cJSON_GetObjectItemCaseSensitive(mem, "peak_bytes"), *step = cJSON_GetObjectItemCaseSensitive(tm, "step_s");
        if (rc == 0) cr_expect(cJSON_IsNumber(peak) && cJSON_IsNumber(step), "%s: no memory.peak_bytes/time.step_s in %s", dir, out);
        if (cJSON_IsNumber(peak) && cJSON_IsNumber(step)) {
            double ep = rel(peak->valuedouble, p->memory.peak_bytes), es = rel(step->valuedouble, p->time.step_s);
            t->read++;
            if (ep + es > t->worst_peak + t->worst_step) snprintf(t->worst_where, sizeof t->worst_where, "%s", dir);
            if (ep > t->worst_peak) t->worst_peak = ep;
            if (es > t->worst_step) t->worst_step = es;
            cr_expect(ep <= TOLERANCE && es <= TOLERANCE, "%s (%s): read back peak %.6g vs %.6g bytes (%.3f%%), step "
                      "%.6g vs %.6g s (%.3f%%)\n%s\n%s", dir, pp_framework_name(p->strategy.framework), peak->valuedouble,
                      p->memory.peak_bytes, 100 * ep, step->valuedouble, p->time.step_s, 100 * es, readme, errs);
        }
        cJSON_Delete(j);
    }
    free(out);
    free(errs);
    remove_dir(dir, &l);
    pp_launch_free(&l);
}

static void run_scenario(const scenario *sc, tally *t)
{
    pp_model m;
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_model_load(sc->model, &m, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(pp_cluster_load(sc->cluster, &c, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(pp_cluster_resize(&c, sc->nodes, sc->gpus, &err), PP_OK, "%s", err.msg);
    pp_search_opts o;
    pp_search_opts_default(&o);
    o.global_batch = sc->global_batch;
    o.seq = sc->seq;
    o.top_k = sc->top;
    o.precisions = sc->precisions;
    if (sc->framework >= 0) o.frameworks = 1u << sc->framework;
    o.base.ft.mode = sc->mode;
    if (sc->lora_rank) o.base.ft.lora_rank = sc->lora_rank;
    o.base.act_offload_layers = sc->act_offload;
    pp_plan_list l = {0};
    pp_status st = pp_plan_search(&m, &c, &o, &l, &err);
    if (st == PP_ERR_INFEASIBLE || (st == PP_ERR_INPUT && sc->framework >= 0)) {
        /* nothing fits, or no strategy of this framework is valid (plain PyTorch on GPT-3): nothing to launch */
        t->skipped++;
        pp_plan_list_free(&l);
        return;
    }
    cr_assert_eq(st, PP_OK, "%s: %s", sc->name, err.msg);
    for (int i = 0; i < l.n; i++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/%s-%s-%d", root, sc->name, sc->framework < 0 ? "all" : pp_framework_name(sc->framework), i + 1);
        read_back(&m, &c, &l.plans[i], dir, t);
    }
    pp_plan_list_free(&l);
}

static void report(const char *what, const tally *t)
{
    fprintf(stderr, "readback %s: %d plans, %d read back, worst relative error: peak %.3g%%, step %.3g%% (%s); "
            "%d searches with nothing to launch\n", what, t->plans, t->read, 100 * t->worst_peak, 100 * t->worst_step,
            t->worst_where[0] ? t->worst_where : "-", t->skipped);
    for (int g = 0; g < NGAPS; g++)
        if (t->gaps[g]) fprintf(stderr, "  %d plans not read back because of a known writer bug: %s\n", t->gaps[g],
                                known_gaps[g].where);
}

static const scenario issue[] = {
    {"llama3-8b", "llama3-8b", "dgx-h100", 1, 0, 512, 8192, 5, -1, 0, PP_MODE_FULL, 0},
    {"gpt3-175b", "gpt3-175b", "dgx-a100-80g", 128, 0, 1536, 0, 5, -1, 0, PP_MODE_FULL, 0},
    {"llama2-70b", "llama2-70b", "dgx-a100-80g", 8, 0, 512, 0, 5, -1, 0, PP_MODE_FULL, 0},
    {"mixtral-8x7b", "mixtral-8x7b", "dgx-h100", 4, 0, 512, 0, 5, -1, 0, PP_MODE_FULL, 0},
};

static void issue_scenarios(tally *t)
{
    for (size_t i = 0; i < sizeof issue / sizeof *issue; i++) {
        for (int fw = -1; fw < PP_FW_COUNT; fw++) {
            scenario sc = issue[i];
            sc.framework = fw;
            run_scenario(&sc, t);
        }
    }
}

Test(readback, issue_scenarios_every_framework, .timeout = 900)
{
    make_root();
    tally t = {0};
    issue_scenarios(&t);
    report("issue 12 scenarios x (all + each framework)", &t);
    cr_expect(t.read > 0);
    rmdir(root);
}

Test(readback, finetune_hsdp_torchtitan, .timeout = 900)
{
    make_root();
    static const scenario more[] = {
        /* a single-GPU fine-tune: plain PyTorch with PEFT (LoRA) and bitsandbytes (QLoRA) */
        {"lora-1gpu", "llama3-8b", "dgx-h100", 0, 1, 16, 4096, 5, PP_FW_PYTORCH, 0, PP_MODE_LORA, 16},
        {"qlora-4090", "mistral-7b", "workstation-1x-4090", 0, 1, 8, 2048, 5, PP_FW_PYTORCH, 0, PP_MODE_QLORA, 16},
        /* FSDP on 4 nodes in bf16 (Accelerate, and torchtitan for pipelines), hybrid sharding among the plans */
        {"fsdp-hsdp", "llama3-8b", "dgx-h100", 4, 0, 512, 8192, 8, PP_FW_FSDP, 1u << PP_PREC_BF16, PP_MODE_FULL, 0},
        /* torchtitan with pipeline stages */
        {"torchtitan-pp", "llama3-70b", "dgx-h100", 8, 0, 512, 8192, 5, PP_FW_FSDP, 0, PP_MODE_FULL, 0},
        {"torchtitan-pp-bf16", "llama3-70b", "dgx-h100", 8, 0, 512, 8192, 5, PP_FW_FSDP, 1u << PP_PREC_BF16, PP_MODE_FULL, 0},
        /* Megatron-Core's CPU offloading of 16 blocks' activations (--cpu-offloading-num-layers) */
        {"megatron-act-offload", "llama3-8b", "dgx-h100", 1, 0, 64, 8192, 3, PP_FW_MEGATRON, 0, PP_MODE_FULL, 0, 16},
        /* Megatron-FSDP (ZeRO-3) with offloaded activations, as Megatron-Bridge's GB200 recipe for 70B */
        {"megatron-fsdp", "llama3-70b", "gb200-nvl72", 0, 64, 256, 8192, 3, PP_FW_MEGATRON, 0, PP_MODE_FULL, 0, 40},
        /* DeepSeek-V3 (MLA, experts, dense blocks): fp8 with --fp8-recipe tensorwise, recompute modules */
        {"megatron-deepseek", "deepseek-v3", "dgx-h100", 32, 0, 4096, 4096, 3, PP_FW_MEGATRON, 0, PP_MODE_FULL, 0},
    };
    tally t = {0};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++)
        run_scenario(&more[i], &t);
    report("fine-tuning, FSDP HSDP, torchtitan, Megatron activation offload, Megatron-FSDP, DeepSeek-V3", &t);
    cr_expect(t.read > 0);
    rmdir(root);
}

/* Hybrid sharding through Accelerate's YAML, given (the search ranks it
 * below pipelined torchtitan plans): dp 32 = 4 replicas x 8, ZeRO-3. */
Test(readback, accelerate_hsdp_estimate)
{
    make_root();
    pp_model m;
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_model_load("llama3-8b", &m, &err), PP_OK);
    cr_assert_eq(pp_cluster_load("dgx-h100", &c, &err), PP_OK);
    cr_assert_eq(pp_cluster_resize(&c, 4, 0, &err), PP_OK);
    pp_strategy s;
    pp_strategy_default(&s);
    s.framework = PP_FW_FSDP;
    s.dp = 32, s.zero = 3, s.shard = 8, s.micro_batch = 1, s.global_batch = 256, s.seq = 4096;
    s.recompute = PP_RECOMPUTE_NONE;
    pp_plan p;
    cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "%s", err.msg);
    tally t = {0};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/accelerate-hsdp", root);
    read_back(&m, &c, &p, dir, &t);
    report("Accelerate HSDP (estimate)", &t);
    cr_expect_eq(t.read, 1);
    rmdir(root);
}

/* The files say what the price assumed (red team, session 27): QLoRA's
 * 4-bit weights sharded by ZeRO-3 need bnb_4bit_quant_storage in
 * 16 bits; FSDP's CPU offload runs the optimizer on the CPU, where only
 * the fused AdamW is one pass (adamw_torch would loop per tensor). */
Test(readback, launch_files_carry_what_was_priced)
{
    pp_model m;
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_model_load("llama3-8b", &m, &err), PP_OK);
    cr_assert_eq(pp_cluster_load("pcie-4x-4090", &c, &err), PP_OK);
    const struct { pp_framework fw; int zero; pp_offload off; pp_train_mode mode; const char *file, *want; } cases[] = {
        {PP_FW_DEEPSPEED, 3, PP_OFFLOAD_OPT_PARAMS, PP_MODE_QLORA, "bnb_config.json", "\"bnb_4bit_quant_storage\":\t\"bfloat16\""},
        {PP_FW_FSDP, 3, PP_OFFLOAD_OPT_PARAMS, PP_MODE_FULL, "training_args.json", "\"optim\":  \"adamw_torch_fused\""},
        {PP_FW_FSDP, 3, PP_OFFLOAD_NONE, PP_MODE_FULL, "training_args.json", "\"optim\":  \"adamw_torch\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_strategy s;
        pp_strategy_default(&s);
        s.framework = cases[i].fw, s.zero = cases[i].zero, s.offload = cases[i].off, s.ft.mode = cases[i].mode;
        s.dp = 4, s.micro_batch = 1, s.global_batch = 8, s.seq = 2048, s.recompute = PP_RECOMPUTE_FULL;
        pp_plan p;
        cr_assert_eq(pp_estimate(&m, &c, &s, &p, &err), PP_OK, "case %zu: %s", i, err.msg);
        pp_launch l;
        cr_assert_eq(pp_launch_files(&m, &c, &p, NULL, &l, &err), PP_OK, "case %zu: %s", i, err.msg);
        const char *text = NULL;
        for (int k = 0; k < l.n; k++)
            if (!strcmp(l.files[k].name, cases[i].file)) text = l.files[k].text;
        cr_expect(text && strstr(text, cases[i].want), "case %zu: %s lacks %s:\n%s", i, cases[i].file, cases[i].want,
                  text ? text : "(no file)");
        pp_launch_free(&l);
    }
}
