/* fuzz_fsdp_config.c — libFuzzer harness: an FSDP launcher file
 * (pp_fsdp_parse: HF Accelerate's FSDP2 YAML through libyaml, or a
 * torchtitan v0.2.2 job TOML through the TOML-subset reader), and HF
 * TrainingArguments JSON (pp_training_args_parse, pp_hf_strategy without
 * DeepSpeed). Seeds: tests/fuzz/corpus/fsdp.
 *
 * The input's length picks the reading: a YAML or TOML file on Llama-3-8B
 * with one DGX H100 or four, with or without fixed TrainingArguments; or the
 * input read as TrainingArguments. Beyond fuzz_common.h's contract: every
 * warning is one printable line, and a file that is read gives a strategy
 * that estimates to finite numbers, identically on a second read.
 */
#include <math.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void estimates(const pp_model *m, const pp_cluster *c, pp_strategy *s, const pp_notes *warn)
{
    for (int i = 0; i < warn->n; i++)
        for (const char *q = warn->line[i]; *q; q++)
            FUZZ_CHECK((unsigned char)*q >= 0x20 && *q != 0x7f, "control character in a warning: %s", warn->line[i]);
    pp_plan *p = malloc(sizeof *p);
    FUZZ_CHECK(p, "malloc");
    pp_error e = {""};
    FUZZ_CHECK(pp_estimate(m, c, s, p, &e) == PP_OK, "a file that reads does not estimate: %s", e.msg);
    FUZZ_CHECK(isfinite(p->time.step_s) && p->time.step_s > 0 && isfinite(p->memory.peak_bytes) && p->memory.peak_bytes > 0,
               "step %g peak %g", p->time.step_s, p->memory.peak_bytes);
    free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pp_model m;
    static pp_cluster one, four;
    static int ready;
    if (!ready) {
        pp_error e = {""};
        FUZZ_CHECK(pp_model_load("llama3-8b", &m, &e) == PP_OK && pp_cluster_load("dgx-h100", &one, &e) == PP_OK, "%s", e.msg);
        four = one;
        FUZZ_CHECK(pp_cluster_resize(&four, 4, 0, &e) == PP_OK, "%s", e.msg);
        ready = 1;
    }
    const pp_cluster *c = size % 4 >= 2 ? &four : &one;
    char *text = fuzz_copy(data, size);
    pp_strategy *s = malloc(2 * sizeof *s);
    FUZZ_CHECK(s, "malloc");
    pp_strategy_default(&s[0]);
    s[0].seq = 4096;
    s[1] = s[0];
    pp_notes warn = {0};
    pp_error err = {""};
    if (size % 4 == 3) { /* TrainingArguments */
        static const char where[] = "fuzz/training_args.json";
        pp_training_args t;
        pp_status st = pp_training_args_parse(text, size, where, &t, &warn, &err);
        fuzz_check_status(st, &err, where);
        if (st == PP_OK) {
            t.deepspeed[0] = '\0'; /* no file is opened here */
            st = pp_hf_strategy(&t, NULL, &m, c, &s[0], NULL, &warn, &err);
            fuzz_check_status(st, &err, where);
            if (st == PP_OK) estimates(&m, c, &s[0], &warn);
        }
    } else {
        static const char where[] = "fuzz/fsdp_config";
        pp_training_args t;
        pp_training_args_default(&t);
        t.micro_batch = 1, t.grad_accum = 4;
        snprintf(t.where, sizeof t.where, "fuzz/training_args.json");
        const pp_training_args *tp = size % 2 ? &t : NULL;
        pp_status st = pp_fsdp_parse(text, size, where, &m, c, tp, &s[0], &warn, &err);
        if (st == PP_ERR_INPUT && tp && strstr(err.msg, "carries the batch")) { /* a TOML: read it alone */
            tp = NULL;
            s[0] = s[1];
            st = pp_fsdp_parse(text, size, where, &m, c, NULL, &s[0], &warn, &err);
        }
        fuzz_check_status(st, &err, where);
        if (st == PP_OK) {
            estimates(&m, c, &s[0], &warn);
            pp_notes w2 = {0};
            pp_error e2 = {""};
            FUZZ_CHECK(pp_fsdp_parse(text, size, where, &m, c, tp, &s[1], &w2, &e2) == PP_OK, "second read: %s", e2.msg);
            FUZZ_CHECK(memcmp(&s[0], &s[1], sizeof *s) == 0, "two reads of one input differ");
        }
    }
    free(s);
    free(text);
    return 0;
}
