/* fuzz_deepspeed.c — libFuzzer harness: a user's ds_config.json
 * (pp_deepspeed_parse_hf: DeepSpeed v0.14.5's rules, "auto" filled in as
 * the Hugging Face Trainer does). Seeds: tests/fuzz/corpus/deepspeed.
 *
 * The input is the whole file; the setting it is read in is chosen from
 * the input's length, so seeds stay plain JSON: Llama-3-8B on one or two
 * DGX H100 nodes with tp/pp of 1x1, 2x2, 8x1 or 1x4, and the Trainer's
 * arguments (--micro-batch, --global-batch, --precision) none or some.
 * Beyond fuzz_common.h's contract (status bad input or ok, one printable
 * line starting with the file name), every rejection names where: a JSON
 * path ("$..."), a line:column, or a file-level reason; and a file that is
 * read gives a strategy that estimates to finite numbers, identically on a
 * second read.
 */
#include <math.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char where[] = "fuzz/ds_config.json";

/* A rejection names the field: "$", a line:column, or a file-level reason. */
static void check_names_field(const char *msg)
{
    const char *rest = msg + strlen(where);
    int pos = rest[0] == ':' && rest[1] >= '0' && rest[1] <= '9';
    int path = strstr(rest, ": $") != NULL;
    static const char *const file_level[] = {"empty file", "binary data", "nested deeper", "bytes: expected at most"};
    int file = 0;
    for (size_t i = 0; i < sizeof file_level / sizeof *file_level; i++) file |= strstr(rest, file_level[i]) != NULL;
    FUZZ_CHECK(pos || path || file, "rejection names no field: %s", msg);
}

static void setting(size_t size, const pp_model **m, const pp_cluster **c, pp_strategy *s, pp_hf_trainer_args *hf)
{
    static pp_model model;
    static pp_cluster one, two;
    static int ready;
    if (!ready) {
        pp_error err = {""};
        FUZZ_CHECK(pp_model_load("llama3-8b", &model, &err) == PP_OK, "%s", err.msg);
        FUZZ_CHECK(pp_cluster_load("dgx-h100", &one, &err) == PP_OK, "%s", err.msg);
        two = one;
        FUZZ_CHECK(pp_cluster_resize(&two, 2, 0, &err) == PP_OK, "%s", err.msg);
        ready = 1;
    }
    static const int degrees[4][2] = {{1, 1}, {2, 2}, {8, 1}, {1, 4}};
    int k = (int)(size % 8);
    *m = &model;
    *c = k < 4 ? &one : &two;
    pp_strategy_default(s);
    s->tp = degrees[k % 4][0];
    s->pp = degrees[k % 4][1];
    s->seq = 4096;
    static const int mbs[4] = {0, 1, 2, 4}, gbs[4] = {0, 64, 128, 96}, precs[4] = {-1, PP_PREC_BF16, PP_PREC_FP16,
                                                                                    PP_PREC_FP8};
    size_t h = size / 8;
    *hf = (pp_hf_trainer_args){mbs[h % 4], gbs[h / 4 % 4], precs[h / 16 % 4]};
    if (hf->precision >= 0) s->precision = (pp_precision)hf->precision;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_copy(data, size);
    const pp_model *m;
    const pp_cluster *c;
    pp_strategy *s = malloc(3 * sizeof *s);
    pp_plan *p = malloc(sizeof *p);
    FUZZ_CHECK(s && p, "malloc");
    pp_hf_trainer_args hf;
    setting(size, &m, &c, &s[0], &hf);
    s[1] = s[2] = s[0];
    pp_deepspeed_opts o;
    pp_notes warn = {0};
    pp_error err = {""};
    pp_status st = pp_deepspeed_parse_hf(text, size, where, m, c, &hf, &s[1], &o, &warn, &err);
    fuzz_check_status(st, &err, where);
    if (st != PP_OK) {
        check_names_field(err.msg);
    } else {
        for (int i = 0; i < warn.n; i++)
            for (const char *q = warn.line[i]; *q; q++)
                FUZZ_CHECK((unsigned char)*q >= 0x20 && *q != 0x7f, "control character in a warning: %s", warn.line[i]);
        FUZZ_CHECK(s[1].micro_batch >= 1 && s[1].global_batch >= 1 && s[1].zero >= 0 && s[1].zero <= 3,
                   "strategy micro %d global %d zero %d", s[1].micro_batch, s[1].global_batch, s[1].zero);
        pp_error e2 = {""};
        FUZZ_CHECK(pp_estimate(m, c, &s[1], p, &e2) == PP_OK, "a file that reads does not estimate: %s", e2.msg);
        FUZZ_CHECK(isfinite(p->time.step_s) && p->time.step_s > 0 && isfinite(p->memory.peak_bytes) &&
                       p->memory.peak_bytes > 0, "step %g peak %g", p->time.step_s, p->memory.peak_bytes);
        pp_notes w2 = {0};
        FUZZ_CHECK(pp_deepspeed_parse_hf(text, size, where, m, c, &hf, &s[2], NULL, &w2, &e2) == PP_OK,
                   "second read: %s", e2.msg);
        FUZZ_CHECK(memcmp(&s[1], &s[2], sizeof *s) == 0, "two reads of one input differ");
    }
    free(p);
    free(s);
    free(text);
    return 0;
}
