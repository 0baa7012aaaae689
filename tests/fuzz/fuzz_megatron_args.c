/* fuzz_megatron_args.c — libFuzzer harness: Megatron-LM / Megatron-DeepSpeed
 * arguments (pp_megatron_parse: bash words, the generated flag table, model
 * flags against the model, the strategy, Megatron-DeepSpeed's ds_config.json
 * through the DeepSpeed reader). Seeds: tests/fuzz/corpus/megatron.
 *
 * The input is the whole file, read as FOLDER/megatron_args.sh where FOLDER
 * (made once) holds a valid ds_config.json, so --deepspeed_config
 * ds_config.json reaches the DeepSpeed reader; the model and cluster are
 * chosen from the input's length (Llama-3-8B on one DGX H100, or Mixtral-8x7B
 * on two). Beyond fuzz_common.h's contract: a rejection is PP_ERR_INPUT (or
 * PP_ERR_IO for a --deepspeed_config file that cannot be opened) naming the
 * file, every warning is one printable line, and a file that is read gives
 * a strategy that estimates to finite numbers, identically on a second read.
 */
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char where[256];

static const char ds_config[] = "{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 1, "
                                "\"bf16\": {\"enabled\": true}, \"zero_optimization\": {\"stage\": 1}}\n";

static void setup(void)
{
    if (where[0]) return;
    char dir[] = "/tmp/parplan-fuzz-megatron-XXXXXX";
    FUZZ_CHECK(mkdtemp(dir), "mkdtemp");
    char path[300];
    snprintf(path, sizeof path, "%s/ds_config.json", dir);
    FILE *f = fopen(path, "w");
    FUZZ_CHECK(f && fputs(ds_config, f) >= 0 && fclose(f) == 0, "writing %s", path);
    snprintf(where, sizeof where, "%s/megatron_args.sh", dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pp_model llama, mixtral;
    static pp_cluster one, two;
    static int ready;
    setup();
    if (!ready) {
        pp_error e = {""};
        FUZZ_CHECK(pp_model_load("llama3-8b", &llama, &e) == PP_OK && pp_model_load("mixtral-8x7b", &mixtral, &e) == PP_OK &&
                   pp_cluster_load("dgx-h100", &one, &e) == PP_OK, "%s", e.msg);
        two = one;
        FUZZ_CHECK(pp_cluster_resize(&two, 2, 0, &e) == PP_OK, "%s", e.msg);
        ready = 1;
    }
    const pp_model *m = size % 2 ? &mixtral : &llama;
    const pp_cluster *c = size % 2 ? &two : &one;
    char *text = fuzz_copy(data, size);
    pp_strategy *s = malloc(3 * sizeof *s);
    pp_plan *p = malloc(sizeof *p);
    FUZZ_CHECK(s && p, "malloc");
    pp_strategy_default(&s[0]);
    s[1] = s[2] = s[0];
    pp_notes warn = {0};
    pp_error err = {""};
    pp_status st = pp_megatron_parse(text, size, where, m, c, &s[1], &warn, &err);
    if (st == PP_ERR_IO) FUZZ_CHECK(strstr(err.msg, "--deepspeed_config"), "I/O error not about the ds_config: %s", err.msg);
    else fuzz_check_status(st, &err, where);
    if (st == PP_OK) {
        for (int i = 0; i < warn.n; i++)
            for (const char *q = warn.line[i]; *q; q++)
                FUZZ_CHECK((unsigned char)*q >= 0x20 && *q != 0x7f, "control character in a warning: %s", warn.line[i]);
        pp_error e2 = {""};
        FUZZ_CHECK(pp_estimate(m, c, &s[1], p, &e2) == PP_OK, "a file that reads does not estimate: %s", e2.msg);
        FUZZ_CHECK(isfinite(p->time.step_s) && p->time.step_s > 0 && isfinite(p->memory.peak_bytes) &&
                       p->memory.peak_bytes > 0, "step %g peak %g", p->time.step_s, p->memory.peak_bytes);
        pp_notes w2 = {0};
        FUZZ_CHECK(pp_megatron_parse(text, size, where, m, c, &s[2], &w2, &e2) == PP_OK, "second read: %s", e2.msg);
        FUZZ_CHECK(memcmp(&s[1], &s[2], sizeof *s) == 0, "two reads of one input differ");
    }
    free(p);
    free(s);
    free(text);
    return 0;
}
