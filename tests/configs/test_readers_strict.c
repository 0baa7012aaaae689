/*
 * test_readers_strict.c — what every JSON reader refuses since issue 14:
 * a key given twice in one object (model, HF config.json, cluster, GPU
 * catalog, ds_config: the key's JSON path and both line:column positions);
 * "\u0000" inside a string (it would cut a name short); and the loaders'
 * smaller gaps: a directory or FIFO named without a slash, a FIFO that
 * would block, "./config.json" naming the model ".", a Hugging Face Hub id,
 * an argument echoed in full.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parplan.h"

#define NATIVE_HEAD "{\"name\": \"t8b\",\n \"layers\": 32, \"hidden\": 4096, \"heads\": 32, \"kv_heads\": 8,\n"
#define NATIVE_TAIL                                                                                        \
    " \"ffn\": 14336, \"gated_mlp\": true, \"activation\": \"silu\", \"vocab\": 128256, \"seq\": 8192,\n"     \
    " \"tied_embeddings\": false, \"norm\": \"rmsnorm\", \"position\": \"rope\""

static void expect_model_bad(const char *text, const char *const *needles)
{
    pp_model m;
    pp_error err = {""};
    cr_assert_eq(pp_model_parse(text, strlen(text), "m.json", &m, &err), PP_ERR_INPUT, "accepted:\n%s", text);
    for (; *needles; needles++) cr_expect(strstr(err.msg, *needles), "lacks \"%s\": %s", *needles, err.msg);
}

Test(duplicate_keys, native_model_top_level_names_key_and_both_positions)
{
    const char *text = NATIVE_HEAD NATIVE_TAIL ",\n \"layers\": 16}\n";
    /* first "layers" at line 2 column 2; the second at line 5 column 2 */
    expect_model_bad(text, (const char *[]){"m.json:5:2:", "$.layers", "duplicate key", "also at 2:2", NULL});
}

Test(duplicate_keys, native_model_nested)
{
    const char *text = NATIVE_HEAD NATIVE_TAIL ",\n \"bias\": {\"qkv\": true, \"out\": false, \"qkv\": false}}\n";
    expect_model_bad(text, (const char *[]){"m.json:5:38:", "$.bias.qkv", "also at 5:11", NULL});
}

Test(duplicate_keys, escaped_spelling_is_the_same_key)
{
    /* "l\u0061yers" decodes to "layers" */
    const char *text = NATIVE_HEAD NATIVE_TAIL ", \"l\\u0061yers\": 32}\n";
    expect_model_bad(text, (const char *[]){"$.layers", "duplicate key", "also at 2:2", NULL});
}

Test(duplicate_keys, hf_config)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = fopen(PARPLAN_DATA_DIR "/hf/Meta-Llama-3-8B.json", "rb");
    cr_assert(f);
    cr_assert(getdelim(&text, &len, '\0', f) > 0);
    fclose(f);
    char *grown = realloc(text, strlen(text) + 64); /* room for the duplicate key */
    cr_assert(grown);
    text = grown;
    char *brace = strrchr(text, '}');
    cr_assert(brace);
    strcpy(brace, ", \"num_hidden_layers\": 16}\n");
    pp_model m;
    pp_error err = {""};
    cr_assert_eq(pp_model_parse(text, strlen(text), "config.json", &m, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "$.num_hidden_layers") && strstr(err.msg, "duplicate key") && strstr(err.msg, "also at "),
              "%s", err.msg);
    free(text);
}

static const char CLUSTER[] =
    "{\"name\": \"c8\", \"gpu\": \"h100-sxm\", \"nodes\": 1, \"gpus_per_node\": 8,\n"
    " \"intra\": {\"kind\": \"nvlink\", \"gbytes_per_s_bidir\": 900, \"latency_us\": 3.4, \"latency_us\": 1},\n"
    " \"inter\": {\"kind\": \"infiniband\", \"nics\": 8, \"nic_gbit_s\": 400, \"latency_us\": 5},\n"
    " \"pcie\": {\"gen\": 5}, \"host_mem_gib\": 2048}\n";

Test(duplicate_keys, cluster_and_gpu_catalog)
{
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_cluster_parse(CLUSTER, strlen(CLUSTER), "c.json", &c, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "c.json:2:76:") && strstr(err.msg, "$.intra.latency_us") && strstr(err.msg, "also at 2:57"),
              "%s", err.msg);
    const char *cat = "{\"gpus\": [{\"name\": \"g\", \"full_name\": \"G\", \"vendor\": \"v\", \"source\": \"s\",\n"
                      "  \"mem_gib\": 80, \"hbm_tb_s\": 3, \"tflops\": {\"bf16\": 900, \"bf16\": 1}, \"tdp_w\": 700}]}\n";
    pp_gpu g[2];
    int n;
    cr_assert_eq(pp_gpu_catalog_parse(cat, strlen(cat), "gpus.json", g, 2, &n, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "$.gpus[0].tflops.bf16") && strstr(err.msg, "duplicate key"), "%s", err.msg);
}

Test(duplicate_keys, deepspeed_keeps_its_own_words)
{
    pp_model m;
    pp_cluster c;
    pp_error err = {""};
    cr_assert_eq(pp_model_load("llama3-8b", &m, &err), PP_OK);
    cr_assert_eq(pp_cluster_load("dgx-h100", &c, &err), PP_OK);
    pp_strategy s;
    pp_strategy_default(&s);
    const char *ds = "{\"train_micro_batch_size_per_gpu\": 1,\n \"zero_optimization\": {\"stage\": 1, \"stage\": 2}}";
    cr_assert_eq(pp_deepspeed_parse(ds, strlen(ds), "ds.json", &m, &c, &s, NULL, NULL, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "ds.json:2:36:") && strstr(err.msg, "$.zero_optimization.stage") &&
              strstr(err.msg, "also at 2:24") && strstr(err.msg, "Duplicate keys in DeepSpeed config"), "%s", err.msg);
}

Test(duplicate_keys, equal_keys_in_different_objects_are_fine)
{
    const char *text = NATIVE_HEAD NATIVE_TAIL ",\n \"moe\": {\"experts\": 8, \"topk\": 2, \"expert_ffn\": 14336},\n"
                                               " \"bias\": {\"qkv\": false, \"out\": false, \"mlp\": false}}\n";
    pp_model m;
    pp_error err = {""};
    cr_expect_eq(pp_model_parse(text, strlen(text), "m.json", &m, &err), PP_OK, "%s", err.msg);
}

Test(nul_in_strings, a_name_is_never_cut_short)
{
    const char *text = "{\"name\": \"t8\\u0000b\",\n \"layers\": 32, \"hidden\": 4096, \"heads\": 32, \"kv_heads\": 8,\n"
        NATIVE_TAIL "}\n";
    expect_model_bad(text, (const char *[]){"m.json:1:10:", "$.name", "\\u0000", "NUL", NULL});
    /* an escaped backslash before u0000 is plain text, not a NUL */
    const char *ok = "{\"name\": \"t8\\\\u0000b\",\n \"layers\": 32, \"hidden\": 4096, \"heads\": 32, \"kv_heads\": 8,\n"
        NATIVE_TAIL "}\n";
    pp_model m;
    pp_error err = {""};
    cr_expect_eq(pp_model_parse(ok, strlen(ok), "m.json", &m, &err), PP_OK, "%s", err.msg);
    cr_expect_str_eq(m.name, "t8\\u0000b");
    /* in a key, and in a cluster file */
    expect_model_bad(NATIVE_HEAD NATIVE_TAIL ", \"a\\u0000b\": 1}", (const char *[]){"NUL", NULL});
    const char *cl = "{\"name\": \"c\\u0000\"}";
    pp_cluster c;
    cr_expect_eq(pp_cluster_parse(cl, strlen(cl), "c.json", &c, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "$.name") && strstr(err.msg, "NUL"), "%s", err.msg);
}

/* ------------------------------------------------------------ loaders */

static char dir[256], cwd[PATH_MAX];

static void mk(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/pp-readers-XXXXXX", base && *base ? base : "/tmp");
    cr_assert(mkdtemp(dir));
    cr_assert(getcwd(cwd, sizeof cwd));
    cr_assert(chdir(dir) == 0);
}

static void rm_all(void)
{
    cr_assert(chdir(cwd) == 0);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert(system(cmd) == 0);
}

TestSuite(loaders, .init = mk, .fini = rm_all);

Test(loaders, a_directory_or_fifo_without_a_slash_is_named_for_what_it_is)
{
    cr_assert(mkdir("adir", 0755) == 0);
    cr_assert(mkfifo("apipe", 0644) == 0);
    pp_model m;
    pp_cluster c;
    pp_error err = {""};
    cr_expect_eq(pp_model_load("adir", &m, &err), PP_ERR_IO);
    cr_expect(strstr(err.msg, "adir: is a directory"), "%s", err.msg);
    cr_expect_eq(pp_cluster_load("adir", &c, &err), PP_ERR_IO);
    cr_expect(strstr(err.msg, "adir: is a directory"), "%s", err.msg);
    /* a FIFO with no writer: refused at once (a blocking open would hang) */
    cr_expect_eq(pp_model_load("apipe", &m, &err), PP_ERR_IO);
    cr_expect(strstr(err.msg, "apipe: is a FIFO"), "%s", err.msg);
    cr_expect_eq(pp_cluster_load("./apipe", &c, &err), PP_ERR_IO);
    cr_expect(strstr(err.msg, "FIFO"), "%s", err.msg);
    pp_strategy s;
    pp_strategy_default(&s);
    cr_assert_eq(pp_model_load("llama3-8b", &m, &err), PP_OK);
    cr_assert_eq(pp_cluster_load("dgx-h100", &c, &err), PP_OK);
    cr_expect_eq(pp_deepspeed_read("apipe", &m, &c, &s, NULL, NULL, &err), PP_ERR_IO);
    cr_expect(strstr(err.msg, "FIFO"), "%s", err.msg);
    /* a preset name still wins over a same-named directory */
    cr_assert(mkdir("llama3-8b", 0755) == 0);
    cr_expect_eq(pp_model_load("llama3-8b", &m, &err), PP_OK, "%s", err.msg);
}

Test(loaders, config_json_in_the_working_directory_takes_its_name)
{
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/Meta-Llama-3-8B", dir);
    cr_assert(mkdir(sub, 0755) == 0);
    cr_assert(chdir(sub) == 0);
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "cp '%s/hf/Meta-Llama-3-8B.json' config.json", PARPLAN_DATA_DIR);
    cr_assert(system(cmd) == 0);
    pp_model m;
    pp_error err = {""};
    const char *ways[] = {"./config.json", "config.json", "../Meta-Llama-3-8B/config.json"};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(pp_model_load(ways[i], &m, &err), PP_OK, "%s: %s", ways[i], err.msg);
        cr_expect_str_eq(m.name, "meta-llama-3-8b", "%s names the model \"%s\"", ways[i], m.name);
    }
}

Test(loaders, hub_ids_say_what_to_download_and_the_matching_preset)
{
    pp_model m;
    pp_error err = {""};
    cr_expect_eq(pp_model_load("meta-llama/Meta-Llama-3-8B", &m, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "Hugging Face Hub id") && strstr(err.msg, "config.json") &&
              strstr(err.msg, "preset llama3-8b"), "%s", err.msg);
    cr_expect_eq(pp_model_load("meta-llama/Llama-3.1-70B-Instruct", &m, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "preset llama3.1-70b"), "%s", err.msg);
    cr_expect_eq(pp_model_load("mistralai/Mistral-7B-v0.1", &m, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "preset mistral-7b"), "%s", err.msg);
    cr_expect_eq(pp_model_load("someone/unknown-model", &m, &err), PP_ERR_INPUT);
    cr_expect(strstr(err.msg, "Hub id") && !strstr(err.msg, "preset"), "%s", err.msg);
    /* a path with a directory part stays a missing file */
    cr_expect_eq(pp_model_load("./nodir/model.json", &m, &err), PP_ERR_IO);
    cr_expect(strstr(err.msg, "No such file"), "%s", err.msg);
}

Test(loaders, long_arguments_are_not_echoed_in_full)
{
    size_t n = 100000;
    char *big = malloc(n + 1);
    cr_assert(big);
    memset(big, 'x', n);
    big[n] = '\0';
    pp_model m;
    pp_cluster c;
    pp_error err = {""};
    cr_expect_eq(pp_model_load(big, &m, &err), PP_ERR_INPUT);
    cr_expect(strlen(err.msg) < 400 && strstr(err.msg, "unknown model"), "%zu: %s", strlen(err.msg), err.msg);
    cr_expect_eq(pp_cluster_load(big, &c, &err), PP_ERR_INPUT);
    cr_expect(strlen(err.msg) < 400, "%s", err.msg);
    big[10] = '/';
    cr_expect_neq(pp_model_load(big, &m, &err), PP_OK);
    cr_expect(strlen(err.msg) < 400, "%s", err.msg);
    free(big);
}
