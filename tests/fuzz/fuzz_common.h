/*
 * fuzz_common.h — shared checks of the libFuzzer harnesses. Each harness
 * hands the reader an exact-size heap copy of the input (no NUL after it),
 * so ASan catches a reader that reads past `len`. Beyond "no crash", every
 * harness checks the reader's contract (include/parplan.h, docs/errors.md):
 *   - the status is PP_OK or PP_ERR_INPUT (never internal, never NOMEM);
 *   - an error message is one printable line that starts with the file name;
 *   - a success renders to JSON that parses back, identically on a second
 *     parse (the readers keep no state between calls).
 * A broken contract aborts, which libFuzzer reports as a crash.
 */
#ifndef PARPLAN_FUZZ_COMMON_H
#define PARPLAN_FUZZ_COMMON_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parplan.h"

#define FUZZ_CHECK(cond, ...)                                                   \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "fuzz contract broken: %s: ", #cond);               \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            abort();                                                            \
        }                                                                       \
    } while (0)

/* An exact-size copy of the input: reading text[size] is a heap overflow. */
static inline char *fuzz_copy(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1);
    FUZZ_CHECK(text != NULL, "malloc(%zu)", size);
    if (size) memcpy(text, data, size);
    return text;
}

static inline void fuzz_check_status(pp_status st, const pp_error *err, const char *where)
{
    FUZZ_CHECK(st == PP_OK || st == PP_ERR_INPUT, "status %d (%s): %s", (int)st, pp_status_str(st), err->msg);
    if (st == PP_OK) return;
    size_t n = strnlen(err->msg, sizeof err->msg);
    FUZZ_CHECK(n > 0 && n < sizeof err->msg, "empty or unterminated message");
    for (size_t i = 0; i < n; i++)
        FUZZ_CHECK((unsigned char)err->msg[i] >= 0x20 && err->msg[i] != 0x7f,
                   "control character 0x%02x at %zu in message: %s", (unsigned char)err->msg[i], i, err->msg);
    FUZZ_CHECK(strncmp(err->msg, where, strlen(where)) == 0, "message does not name the file: %s", err->msg);
}

/* Renders with to_json, checks it is a JSON object, and returns the text
 * (caller frees with pp_free). */
static inline char *fuzz_json_ok(char *json, const char *what)
{
    FUZZ_CHECK(json != NULL, "%s: to_json returned NULL", what);
    cJSON *back = cJSON_Parse(json);
    FUZZ_CHECK(back != NULL && cJSON_IsObject(back), "%s: rendering is not a JSON object:\n%s", what, json);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(back, "schema_version");
    FUZZ_CHECK(cJSON_IsNumber(v) && v->valuedouble == PP_SCHEMA_VERSION, "%s: schema_version", what);
    cJSON_Delete(back);
    return json;
}

#endif
