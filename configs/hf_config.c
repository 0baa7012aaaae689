/* hf_config.c — Hugging Face config.json import (stub; being written). */
#include "configs/configs.h"

int pp__is_hf_config(const cJSON *root)
{
    return cJSON_GetObjectItemCaseSensitive(root, "model_type") != NULL
        || cJSON_GetObjectItemCaseSensitive(root, "architectures") != NULL;
}

pp_status pp__hf_config_read(const cJSON *root, const char *where, pp_model *m, pp_error *err)
{
    (void)root;
    (void)m;
    return pp__fail(err, PP_ERR_INPUT, "%s: Hugging Face configs are not supported yet", where);
}
