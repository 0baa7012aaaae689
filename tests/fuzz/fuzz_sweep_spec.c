/* fuzz_sweep_spec.c — libFuzzer harness: the sweep spec reader
 * (pp_sweep_open), the scenarios it builds from their index
 * (pp_sweep_scenario: the first, a middle and the last), and the scenario
 * reader (pp_scenario_parse) on each of them and on the input itself. No
 * search runs (a fuzzed "model" could name any file). Beyond fuzz_common.h's
 * contract, every rejection is PP_ERR_INPUT (the CLI's exit 2) and names a
 * field: pp_error_field finds one, and a JSON path is in the message.
 * Seeds: tests/fuzz/corpus/sweep. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_rejection(pp_status st, const pp_error *err, const char *where)
{
    char field[PP_ERR_LEN];
    fuzz_check_status(st, err, where);
    if (st == PP_OK) return;
    FUZZ_CHECK(pp_status_exit_code(st) == 2, "exit %d: %s", pp_status_exit_code(st), err->msg);
    pp_error_field(err, field, sizeof field);
    FUZZ_CHECK(field[0] != '\0', "the rejection names no field: %s", err->msg);
    /* a JSON path is quoted in the message; "$" is the whole document
     * (empty, binary, malformed at line:column, too large, too deep) */
    FUZZ_CHECK(!strcmp(field, "$") || field[0] != '$' || strstr(err->msg, field), "field %s not in: %s", field, err->msg);
}

/* Scenario i: a JSON object (or the listed value as given), the same text
 * twice, and read by the scenario reader with its contract. */
static void check_scenario(const pp_sweep *s, const pp_sweep_opts *o, int i)
{
    static const char where[] = "fuzz/scenario";
    char *a = pp_sweep_scenario(s, o, i), *b = pp_sweep_scenario(s, o, i);
    FUZZ_CHECK(a && b, "scenario %d of %d not built", i, pp_sweep_size(s));
    FUZZ_CHECK(strcmp(a, b) == 0, "scenario %d built twice differs", i);
    cJSON *j = cJSON_Parse(a);
    FUZZ_CHECK(j != NULL, "scenario %d is not JSON: %s", i, a);
    if (o && o->top > 0 && cJSON_IsObject(j))
        FUZZ_CHECK(cJSON_GetObjectItemCaseSensitive(j, "top") != NULL, "--top not applied to scenario %d", i);
    cJSON_Delete(j);
    pp_scenario *sc = malloc(sizeof *sc);
    FUZZ_CHECK(sc != NULL, "malloc");
    pp_error err = {""};
    check_rejection(pp_scenario_parse(a, strlen(a), where, sc, &err), &err, where);
    free(sc);
    pp_free(a);
    pp_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char where[] = "fuzz/spec.json";
    char *text = fuzz_copy(data, size);
    pp_sweep *s = NULL;
    pp_error err = {""};
    pp_status st = pp_sweep_open(text, size, where, &s, &err);
    check_rejection(st, &err, where);
    if (st == PP_OK) {
        int n = pp_sweep_size(s);
        pp_sweep_opts o = {0};
        o.top = 1 + (size ? data[0] % 5 : 0);
        FUZZ_CHECK(n >= 1, "an accepted spec holds %d scenarios", n);
        check_scenario(s, NULL, 0);
        check_scenario(s, &o, n / 2);
        check_scenario(s, NULL, n - 1);
        FUZZ_CHECK(pp_sweep_scenario(s, NULL, n) == NULL, "scenario %d past the end of %d", n, n);
        pp_sweep_close(s);
    }
    pp_scenario *sc = malloc(sizeof *sc);
    FUZZ_CHECK(sc != NULL, "malloc");
    st = pp_scenario_parse(text, size, "fuzz/scenario.json", sc, &err);
    check_rejection(st, &err, "fuzz/scenario.json");
    free(sc);
    free(text);
    return 0;
}
