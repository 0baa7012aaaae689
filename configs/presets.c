/* presets.c — name lookup over the embedded model and cluster presets. */
#include <string.h>
#include <sys/stat.h>

#include "configs/jsonread.h"
#include "configs/presets.h"

#define MAX_NAMES 512

const pp_embedded_file *pp__preset_find(int kind, const char *name)
{
    for (size_t i = 0; i < pp_embedded_count; i++)
        if (pp_embedded_files[i].kind == kind && strcmp(pp_embedded_files[i].name, name) == 0)
            return &pp_embedded_files[i];
    return NULL;
}

const pp_embedded_file *pp__embedded_path(const char *path)
{
    for (size_t i = 0; i < pp_embedded_count; i++)
        if (strcmp(pp_embedded_files[i].path, path) == 0) return &pp_embedded_files[i];
    return NULL;
}

/* Names of a kind, sorted (the embedded table is sorted by path). */
static int names_of(int kind, const char **out, int cap)
{
    if (kind == PP_PRESET_GPU) return pp__gpu_names(out, cap);
    int n = 0;
    for (size_t i = 0; i < pp_embedded_count && n < cap; i++)
        if (pp_embedded_files[i].kind == kind) out[n++] = pp_embedded_files[i].name;
    return n;
}

int pp_preset_count(pp_preset_kind kind)
{
    const char *names[MAX_NAMES];
    return names_of(kind, names, MAX_NAMES);
}

const char *pp_preset_name(pp_preset_kind kind, int i)
{
    const char *names[MAX_NAMES];
    int n = names_of(kind, names, MAX_NAMES);
    return i >= 0 && i < n ? names[i] : NULL;
}

void pp__preset_suggest(int kind, const char *name, char *buf, size_t cap)
{
    const char *names[MAX_NAMES];
    int n = names_of(kind, names, MAX_NAMES);
    buf[0] = '\0';
    /* up to three: names that extend what was typed ("dgx-a100" ->
     * "dgx-a100-40g"), then the nearest by edit distance; each is removed
     * from the candidates once listed */
    size_t len = strlen(name);
    for (int k = 0; k < 3 && n > 0; k++) {
        const char *near = NULL;
        for (int j = 0; j < n && !near && len >= 2; j++)
            if (strncmp(names[j], name, len) == 0) near = names[j];
        if (!near) near = jr_nearest(name, names, n);
        if (!near) break;
        if (*buf) strncat(buf, ", ", cap - strlen(buf) - 1);
        strncat(buf, near, cap - strlen(buf) - 1);
        for (int j = 0; j < n; j++)
            if (names[j] == near) {
                names[j] = names[--n];
                break;
            }
    }
}

int pp__looks_like_path(const char *arg)
{
    struct stat st;
    size_t l = strlen(arg);
    if (strchr(arg, '/') || (l > 5 && strcmp(arg + l - 5, ".json") == 0)) return 1;
    return stat(arg, &st) == 0 && S_ISREG(st.st_mode);
}
