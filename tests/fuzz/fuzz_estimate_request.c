/* fuzz_estimate_request.c — libFuzzer harness: the estimate request
 * (pp_estimate_request, configs/request.c), one strategy as JSON in and the
 * plan object of `parplan estimate --format json` out; what the Python
 * package's estimate() sends. Its reader is its own (the estimate keys,
 * "stage_layers", the batch arithmetic), beside the scenario reader that
 * fuzz_sweep_spec covers. Contract: the answer is a JSON object with
 * schema_version and exactly one of "plan" and "error"; an error is exit
 * code 2 (PP_ERR_INPUT; a strategy out of memory is a plan, not an error),
 * names a field ("$" or a JSON path) and says why in one printable line; a
 * plan has a finite positive step time and peak; the same request answers
 * the same twice. Requests whose "model" or "cluster" is a string that is
 * not a bundled preset are skipped: a fuzzed name could open any file.
 * Seeds: tests/fuzz/corpus/request. */
#include <math.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int preset_or_absent(const cJSON *root, const char *key, pp_preset_kind kind)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!cJSON_IsString(v)) return 1; /* missing or of the wrong type: the reader says so */
    for (int i = 0, n = pp_preset_count(kind); i < n; i++)
        if (!strcmp(pp_preset_name(kind, i), v->valuestring)) return 1;
    return 0;
}

static void check_answer(const char *out, pp_status st)
{
    FUZZ_CHECK(out != NULL, "no answer (status %d)", (int)st);
    cJSON *j = cJSON_Parse(out);
    FUZZ_CHECK(cJSON_IsObject(j), "the answer is not a JSON object: %.300s", out);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "schema_version");
    FUZZ_CHECK(cJSON_IsNumber(v) && v->valuedouble == PP_SCHEMA_VERSION, "schema_version: %.300s", out);
    const cJSON *plan = cJSON_GetObjectItemCaseSensitive(j, "plan"), *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    FUZZ_CHECK(!plan != !e, "exactly one of plan and error: %.300s", out);
    FUZZ_CHECK((st == PP_OK) == (plan != NULL), "status %d with%s a plan", (int)st, plan ? "" : "out");
    if (e) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(e, "exit_code");
        const cJSON *field = cJSON_GetObjectItemCaseSensitive(e, "field");
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(e, "message");
        FUZZ_CHECK(st == PP_ERR_INPUT && cJSON_IsNumber(code) && code->valueint == 2, "status %d: %.300s", (int)st, out);
        FUZZ_CHECK(cJSON_IsString(field) && field->valuestring[0] == '$', "no field: %.300s", out);
        FUZZ_CHECK(cJSON_IsString(msg) && msg->valuestring[0], "no message: %.300s", out);
        for (const unsigned char *p = (const unsigned char *)msg->valuestring; *p; p++)
            FUZZ_CHECK(*p >= 0x20 && *p != 0x7f, "control character 0x%02x in the message: %.300s", *p, out);
    } else {
        const cJSON *time = cJSON_GetObjectItemCaseSensitive(plan, "time");
        const cJSON *step = time ? cJSON_GetObjectItemCaseSensitive(time, "step_s") : NULL;
        const cJSON *mem = cJSON_GetObjectItemCaseSensitive(plan, "memory");
        const cJSON *peak = mem ? cJSON_GetObjectItemCaseSensitive(mem, "peak_bytes") : NULL;
        FUZZ_CHECK(cJSON_IsNumber(step) && isfinite(step->valuedouble) && step->valuedouble > 0, "step: %.300s", out);
        FUZZ_CHECK(cJSON_IsNumber(peak) && isfinite(peak->valuedouble) && peak->valuedouble > 0, "peak: %.300s", out);
    }
    cJSON_Delete(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 16)) return 0;
    char *text = malloc(size + 1); /* the request is a C string */
    FUZZ_CHECK(text != NULL, "malloc");
    memcpy(text, data, size);
    text[size] = '\0';
    cJSON *root = cJSON_Parse(text);
    int safe = !cJSON_IsObject(root) || (preset_or_absent(root, "model", PP_PRESET_MODEL) &&
                                         preset_or_absent(root, "cluster", PP_PRESET_CLUSTER));
    cJSON_Delete(root);
    if (safe) {
        pp_status a = PP_ERR_INTERNAL, b = PP_ERR_INTERNAL;
        char *x = pp_estimate_request(text, &a), *y = pp_estimate_request(text, &b);
        check_answer(x, a);
        FUZZ_CHECK(a == b && x && y && !strcmp(x, y), "a second request answers differently:\n%.300s\n%.300s", x, y);
        pp_free(x);
        pp_free(y);
    }
    free(text);
    return 0;
}
