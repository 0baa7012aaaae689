/* hw_json.c — GPU catalog and cluster JSON (stub; being written). */
#include "configs/configs.h"
#include "configs/presets.h"

int pp__gpu_names(const char **out, int cap) { (void)out; (void)cap; return 0; }
pp_status pp_gpu_load(const char *name, pp_gpu *out, pp_error *err) { (void)out; return pp__fail(err, PP_ERR_INPUT, "unknown GPU '%s'", name); }
pp_status pp_cluster_load(const char *name, pp_cluster *out, pp_error *err) { (void)out; return pp__fail(err, PP_ERR_INPUT, "unknown cluster '%s'", name); }
pp_status pp_cluster_resize(pp_cluster *c, int nodes, int gpus, pp_error *err) { (void)c; (void)nodes; (void)gpus; (void)err; return PP_OK; }
char *pp_cluster_to_json(const pp_cluster *c) { (void)c; return NULL; }
const char *pp_link_kind_name(pp_link_kind k) { (void)k; return "?"; }
