/*
 * jsonread.h — strict JSON reading for every parplan input file.
 * Errors are sticky: the first one is kept in the context and later calls
 * do nothing, so a reader can call getters in a row and check once.
 * Messages name the file, the JSON path and what was expected.
 */
#ifndef PARPLAN_JSONREAD_H
#define PARPLAN_JSONREAD_H

#include <cjson/cJSON.h>

#include "costmodel/costmodel.h"

#define JR_MAX_BYTES (4 << 20) /* input files larger than 4 MiB are rejected */
#define JR_MAX_DEPTH 32        /* deeper nesting is rejected before parsing */

typedef struct jr_ctx {
    const char *where; /* file name or preset name, for messages */
    pp_error *err;
    pp_status st;      /* first error, PP_OK while none */
} jr_ctx;

/* Parses text (need not be NUL-terminated). On failure returns NULL with a
 * message (empty, binary, too large, too deep, or syntax error at line:col).
 * The caller owns the result (cJSON_Delete). */
cJSON *jr_parse(const char *text, size_t len, const char *where, pp_error *err);
/* jr_parse, and also rejects a key given twice in one object and "\u0000"
 * in a string, naming the JSON path with line:column (both places for a
 * duplicate); dup_hint (may be NULL) is added to the duplicate message.
 * jr_parse is jr_parse_ex with no hint: every reader rejects both.
 * *status (may be NULL) receives PP_OK, PP_ERR_INPUT or PP_ERR_NOMEM (the
 * message alone cannot tell: a key may read "out of memory"). */
cJSON *jr_parse_ex(const char *text, size_t len, const char *where, const char *dup_hint, pp_error *err,
                   pp_status *status);
/* Reads a whole regular file into a NUL-terminated buffer the caller frees.
 * Anything else (a directory, a FIFO, a device) is refused at once, without
 * blocking. */
pp_status jr_read_file(const char *path, char **out, size_t *len, pp_error *err);

/* 1 when something exists at path (any kind of file). */
int jr_exists(const char *path);

/* Replaces control characters (newlines, escapes) in msg with '?', so a
 * message quoting a key or value from the file stays one printable line. */
void jr_sanitize(char *msg);
int jr_fail(jr_ctx *c, const char *path, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Rejects keys of obj not in known (NULL-terminated), suggesting the nearest. */
void jr_check_keys(jr_ctx *c, const cJSON *obj, const char *path, const char *const *known);
/* Nearest name to s among names[0..n) (edit distance), or NULL if none close. */
const char *jr_nearest(const char *s, const char *const *names, int n);

/* Getters: return 1 when the key was present and valid, 0 otherwise. A
 * missing required key, a wrong type or an out-of-range value is an error. */
int jr_int(jr_ctx *c, const cJSON *o, const char *path, const char *key, int req, long lo,
           long hi, int *out);
int jr_num(jr_ctx *c, const cJSON *o, const char *path, const char *key, int req, double lo,
           double hi, double *out);
int jr_bool(jr_ctx *c, const cJSON *o, const char *path, const char *key, int req, int *out);
int jr_str(jr_ctx *c, const cJSON *o, const char *path, const char *key, int req, char *buf,
           size_t cap);
int jr_enum(jr_ctx *c, const cJSON *o, const char *path, const char *key, int req,
            const char *const *names, int n, int *out);
/* A child object (or NULL); a present non-object is an error. */
const cJSON *jr_obj(jr_ctx *c, const cJSON *o, const char *path, const char *key, int req);

#endif
