/* fuzz_hf_config.c — libFuzzer harness: Hugging Face config.json import
 * (configs/hf_config.c), via pp_model_parse, which picks the HF reader when
 * model_type or architectures is present. Seeds: tests/fuzz/corpus/hf. The
 * name "config.json" exercises the directory-name rule of the model name. */
#include "fuzz_model_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_model_one(data, size, "fuzz/My-Model_v2/config.json");
}
