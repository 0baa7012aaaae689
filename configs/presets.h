/*
 * presets.h — the JSON presets compiled into the library by
 * cmake/embed.cmake (configs/models/NAME.json, topologies/clusters/NAME.json,
 * topologies/gpus.json), looked up by name.
 */
#ifndef PARPLAN_PRESETS_H
#define PARPLAN_PRESETS_H

#include <stddef.h>

typedef struct pp_embedded_file {
    const char *path; /* relative to the source root */
    const char *name; /* file stem: the preset name */
    int kind;         /* pp_preset_kind: model, cluster, or other data */
    const char *data; /* NUL-terminated */
    size_t len;       /* bytes, without the NUL */
} pp_embedded_file;

extern const pp_embedded_file pp_embedded_files[];
extern const size_t pp_embedded_count;

/* The embedded file for a model or cluster preset name, or NULL. */
const pp_embedded_file *pp__preset_find(int kind, const char *name);
/* The embedded file at a source-relative path, or NULL. */
const pp_embedded_file *pp__embedded_path(const char *path);
/* Writes up to 3 nearest preset names (comma separated) for messages. */
void pp__preset_suggest(int kind, const char *name, char *buf, size_t cap);
/* 1 if arg should be read as a file path rather than a preset name. */
int pp__looks_like_path(const char *arg);
/* GPU catalog names (sorted, static storage after first use); returns count. */
int pp__gpu_names(const char **out, int cap);

#endif
