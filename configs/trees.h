/*
 * trees.h — YAML and TOML files read into cJSON trees, so that every
 * launcher-file reader walks JSON (configs/jsonread.h getters and paths).
 * Both return NULL with a message naming file:line:column on bad input;
 * *status says PP_ERR_INPUT or PP_ERR_NOMEM. The caller deletes the tree.
 */
#ifndef PARPLAN_TREES_H
#define PARPLAN_TREES_H

#include "configs/jsonread.h"

/* One YAML document (libyaml), typed as PyYAML's safe_load types it. */
cJSON *pp__yaml_parse(const char *text, size_t len, const char *where, pp_error *err, pp_status *status);
/* The TOML subset torchtitan job files use (toml_tree.c). */
cJSON *pp__toml_parse(const char *text, size_t len, const char *where, pp_error *err, pp_status *status);

#endif
