/*
 * fuzz_model_reader.h — the body of fuzz_model_json and fuzz_hf_config:
 * both go through pp_model_parse (native JSON or HF config.json, chosen by
 * the keys). They differ in seed corpus and file name only.
 */
#ifndef PARPLAN_FUZZ_MODEL_READER_H
#define PARPLAN_FUZZ_MODEL_READER_H

#include <math.h>

#include "fuzz_common.h"

static void fuzz_model_checks(const pp_model *m, const char *where)
{
    pp_param_counts pc;
    pp_error err = {""};
    FUZZ_CHECK(pp_model_validate(m, where, &err) == PP_OK, "parsed model fails validation: %s", err.msg);
    pp_model_param_counts(m, &pc);
    FUZZ_CHECK(isfinite(pc.total) && pc.total > 0 && pc.active > 0 && pc.active <= pc.total,
               "param counts total %g active %g", pc.total, pc.active);
    double f = pp_model_fwd_flops_per_token(m, m->seq);
    FUZZ_CHECK(isfinite(f) && f > 0, "fwd flops %g", f);
}

static int fuzz_model_one(const uint8_t *data, size_t size, const char *where)
{
    char *text = fuzz_copy(data, size);
    pp_model *m = malloc(2 * sizeof *m);
    FUZZ_CHECK(m != NULL, "malloc");
    pp_error err = {""};
    pp_status st = pp_model_parse(text, size, where, &m[0], &err);
    fuzz_check_status(st, &err, where);
    if (st == PP_OK) {
        fuzz_model_checks(&m[0], where);
        char *a = fuzz_json_ok(pp_model_to_json(&m[0]), "model");
        pp_error err2 = {""};
        FUZZ_CHECK(pp_model_parse(text, size, where, &m[1], &err2) == PP_OK, "second parse failed: %s", err2.msg);
        char *b = fuzz_json_ok(pp_model_to_json(&m[1]), "model");
        FUZZ_CHECK(strcmp(a, b) == 0, "two parses of one input differ");
        /* `model show --format json` is a native model file: it reads back as
         * the same model and renders to the same text */
        FUZZ_CHECK(pp_model_parse(a, strlen(a), "round-trip", &m[1], &err2) == PP_OK, "rendering does not read back: %s",
                   err2.msg);
        char *c2 = fuzz_json_ok(pp_model_to_json(&m[1]), "model");
        FUZZ_CHECK(strcmp(a, c2) == 0, "rendering changes after a round trip");
        FUZZ_CHECK(memcmp(m[0].block_kind, m[1].block_kind, sizeof m[0].block_kind) == 0, "block kinds change");
        pp_free(c2);
        pp_free(a);
        pp_free(b);
    }
    free(m);
    free(text);
    return 0;
}

#endif
