/* fuzz_sweep_resume.c — libFuzzer harness: the `sweep --resume FILE`
 * scanner (cli/sweep_out.c scan_file, compiled in here: it lives in the
 * CLI, outside the library the other harnesses link), which reads a user's
 * half-finished JSONL or CSV output line by line. The input is written to a
 * temporary file and scanned for a spec of 1,000 scenarios (a grid of
 * 1,000 global batches; a JSON line must echo its index's scenario). Contract: the
 * scanner returns 0 (read) or 2 (bad input), never crashes or leaks; a
 * rejection is one printable line on stderr naming the file; a file it reads
 * gives sorted indices below 1,000, one per complete result line, and the
 * bytes of complete lines plus a half-written last line are the file's.
 * Seeds: tests/fuzz/corpus/resume. */
#include <stdint.h>

#include "../../cli/sweep_out.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SPEC_N 1000

static char path[64];
static pp_sweep *sw;
static const pp_sweep_opts opts;

static void fail_contract(const char *what, const char *err)
{
    fprintf(stdout, "fuzz_sweep_resume: contract broken: %s\nstderr: %s\n", what, err ? err : "");
    fflush(stdout);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/fuzz-resume-%d.jsonl", (int)getpid());
        /* 1,000 scenarios: global_batch 1..1000 */
        static char spec[16 * SPEC_N + 128];
        size_t k = (size_t)snprintf(spec, sizeof spec, "{\"grid\": {\"model\": [\"llama3-8b\"], \"cluster\": [\"dgx-h100\"], "
                                                       "\"global_batch\": [");
        for (int i = 1; i <= SPEC_N; i++) k += (size_t)snprintf(spec + k, sizeof spec - k, "%s%d", i > 1 ? ", " : "", i);
        snprintf(spec + k, sizeof spec - k, "]}}");
        pp_error err = {""};
        if (pp_sweep_open(spec, strlen(spec), "spec.json", &sw, &err) != PP_OK || pp_sweep_size(sw) != SPEC_N)
            fail_contract("the harness's spec", err.msg);
    }
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    if (size && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return 0;
    }
    fclose(f);
    char *msg = NULL;
    size_t mlen = 0;
    FILE *saved = stderr, *mem = open_memstream(&msg, &mlen);
    if (!mem) return 0;
    stderr = mem;
    sweep_done d = {0};
    scan sc;
    int rc = scan_file(path, sw, &opts, &d, &sc);
    stderr = saved;
    fclose(mem);
    if (rc != 0 && rc != 2) fail_contract("status is neither 0 nor 2", msg);
    if (rc == 2) {
        if (!mlen || msg[mlen - 1] != '\n' || memchr(msg, '\n', mlen) != msg + mlen - 1) fail_contract("not one line", msg);
        if (strncmp(msg, SWEEP_ME ": --resume ", strlen(SWEEP_ME ": --resume ")) || !strstr(msg, path))
            fail_contract("the message does not name the file", msg);
    } else {
        if (mlen) fail_contract("a file read without complaint printed something", msg);
        for (int i = 0; i < d.n; i++) {
            if (d.idx[i] < 0 || d.idx[i] >= SPEC_N) fail_contract("an index outside the spec", msg);
            if (i && d.idx[i] < d.idx[i - 1]) fail_contract("indices not sorted", msg);
        }
        if (d.n > sc.lines) fail_contract("more indices than lines", msg);
        if (sc.good + sc.half != (long long)size) fail_contract("complete and half-written bytes do not make the file", msg);
    }
    free(d.idx);
    free(msg);
    return 0;
}
