/* fuzz_model_json.c — libFuzzer harness: parplan's native model JSON
 * (docs/formats.md), via pp_model_parse. Seeds: tests/fuzz/corpus/model. */
#include "fuzz_model_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_model_one(data, size, "fuzz/model.json");
}
