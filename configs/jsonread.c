/* jsonread.c — strict, path-naming JSON getters over cJSON. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configs/jsonread.h"

void jr_sanitize(char *msg)
{
    for (; *msg; msg++)
        if ((unsigned char)*msg < 0x20 || *msg == 0x7f) *msg = '?';
}

/* What a JSON value is, for "expected X, got Y" messages. */
static const char *type_name(const cJSON *v)
{
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    return "null";
}

static void line_col(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* Depth of [ and { nesting outside strings; stops early past the limit. */
static int max_depth(const char *t, size_t len)
{
    int d = 0, best = 0, in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = t[i];
        if (in_str) {
            if (ch == '\\') i++;
            else if (ch == '"') in_str = 0;
        } else if (ch == '"') {
            in_str = 1;
        } else if (ch == '[' || ch == '{') {
            if (++d > best) best = d;
            if (best > JR_MAX_DEPTH) return best;
        } else if (ch == ']' || ch == '}') {
            d--;
        }
    }
    return best;
}

/* ------------------------------------------------------------ the scan
 * cJSON keeps the first of two equal keys silently and cuts a string at
 * "\u0000". A second pass over the text, in step with the parsed tree (the
 * text is valid JSON by then, and cJSON keeps members in text order), finds
 * both and gives their line and column. */

typedef struct scan {
    const char *text;  /* the NUL-terminated copy cJSON parsed */
    const char *where, *dup_hint;
    pp_error *err;
    pp_status st;
} scan;

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    return p;
}

static int scan_fail(scan *s, const char *at, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int scan_fail(scan *s, const char *at, const char *path, const char *fmt, ...)
{
    if (s->st != PP_OK) return 0;
    char what[PP_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int line, col;
    line_col(s->text, (size_t)(at - s->text), &line, &col);
    pp__fail(s->err, PP_ERR_INPUT, "%.200s:%d:%d: %s: %s", s->where, line, col, path, what);
    if (s->err) jr_sanitize(s->err->msg);
    s->st = PP_ERR_INPUT;
    return 0;
}

/* p at the opening quote; returns past the closing one. "\u0000" fails. */
static const char *scan_string(scan *s, const char *p, const char *path)
{
    const char *start = p++;
    while (*p && *p != '"') {
        if (*p != '\\') {
            p++;
            continue;
        }
        if (p[1] == 'u' && strncmp(p + 2, "0000", 4) == 0)
            scan_fail(s, start, path, "\\u0000 (a NUL character) in a string: expected text without NUL "
                      "(it would cut the string short)");
        p += p[1] ? 2 : 1;
    }
    return *p ? p + 1 : p;
}

typedef struct member {
    const char *key; /* as cJSON decoded it */
    const char *at;  /* the key's opening quote in the text */
} member;

static int cmp_member(const void *a, const void *b)
{
    const member *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* The duplicate whose second occurrence comes first in the text. */
static void check_duplicates(scan *s, member *m, int n, const char *path)
{
    if (n < 2 || s->st != PP_OK) return;
    qsort(m, (size_t)n, sizeof *m, cmp_member);
    const member *first = NULL, *second = NULL;
    for (int i = 1; i < n; i++)
        if (!strcmp(m[i].key, m[i - 1].key) && (i < 2 || strcmp(m[i].key, m[i - 2].key)) &&
            (!second || m[i].at < second->at))
            first = &m[i - 1], second = &m[i];
    if (!second) return;
    int line, col;
    line_col(s->text, (size_t)(first->at - s->text), &line, &col);
    char sub[160];
    snprintf(sub, sizeof sub, "%s.%.60s", path, second->key);
    scan_fail(s, second->at, sub, "duplicate key, also at %d:%d: expected each key once%s%s", line, col,
              s->dup_hint ? "; " : " (a JSON reader would silently keep one of them)",
              s->dup_hint ? s->dup_hint : "");
}

static const char *scan_value(scan *s, const char *p, const cJSON *node, const char *path, int depth);

static const char *scan_object(scan *s, const char *p, const cJSON *node, const char *path, int depth)
{
    int n = 0;
    for (const cJSON *c = node->child; c; c = c->next) n++;
    member *m = n ? malloc(sizeof *m * (size_t)n) : NULL;
    if (n && !m) {
        s->st = pp__fail(s->err, PP_ERR_NOMEM, "%.200s: out of memory reading JSON", s->where);
        return p;
    }
    const cJSON *c = node->child;
    int i = 0;
    p = skip_ws(p + 1);
    while (*p == '"' && c && s->st == PP_OK) {
        char sub[160];
        snprintf(sub, sizeof sub, "%s.%.60s", path, c->string ? c->string : "");
        m[i++] = (member){c->string ? c->string : "", p};
        p = skip_ws(scan_string(s, p, sub));
        p = scan_value(s, skip_ws(p + 1), c, sub, depth + 1); /* past ':' */
        p = skip_ws(p);
        if (*p == ',') p = skip_ws(p + 1);
        c = c->next;
    }
    check_duplicates(s, m, i, path);
    free(m);
    return *p == '}' ? p + 1 : p;
}

static const char *scan_value(scan *s, const char *p, const cJSON *node, const char *path, int depth)
{
    if (s->st != PP_OK || !node || depth > JR_MAX_DEPTH + 1) return p;
    if (*p == '{') return scan_object(s, p, node, path, depth);
    if (*p == '[') {
        int i = 0;
        p = skip_ws(p + 1);
        for (const cJSON *c = node->child; c && *p != ']' && s->st == PP_OK; c = c->next, i++) {
            char sub[160];
            snprintf(sub, sizeof sub, "%s[%d]", path, i);
            p = skip_ws(scan_value(s, p, c, sub, depth + 1));
            if (*p == ',') p = skip_ws(p + 1);
        }
        return *p == ']' ? p + 1 : p;
    }
    if (*p == '"') return scan_string(s, p, path);
    while (*p && !strchr(",]} \t\r\n", *p)) p++;
    return p;
}

cJSON *jr_parse_ex(const char *text, size_t len, const char *where, const char *dup_hint, pp_error *err,
                   pp_status *status)
{
    pp_status dummy;
    pp_status *st = status ? status : &dummy;
    *st = PP_ERR_INPUT;
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t')) i++;
    if (i == len) {
        pp__fail(err, PP_ERR_INPUT, "%.200s: empty file: expected a JSON object", where);
        return NULL;
    }
    if (len > JR_MAX_BYTES) {
        pp__fail(err, PP_ERR_INPUT, "%.200s: file is %zu bytes: expected at most %d", where, len, JR_MAX_BYTES);
        return NULL;
    }
    if (memchr(text, '\0', len)) {
        pp__fail(err, PP_ERR_INPUT, "%.200s: binary data (NUL byte): expected a JSON text file", where);
        return NULL;
    }
    if (max_depth(text, len) > JR_MAX_DEPTH) {
        pp__fail(err, PP_ERR_INPUT, "%.200s: nested deeper than %d levels: expected a flat config", where, JR_MAX_DEPTH);
        return NULL;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        *st = pp__fail(err, PP_ERR_NOMEM, "%.200s: out of memory reading JSON", where);
        return NULL;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(copy, &end, 1);
    if (!root) {
        int line, col;
        size_t off = end && end >= copy ? (size_t)(end - copy) : 0;
        if (off > len) off = len;
        line_col(copy, off, &line, &col);
        pp__fail(err, PP_ERR_INPUT, "%.200s:%d:%d: malformed or truncated JSON: expected a complete JSON object",
                 where, line, col);
        if (err) jr_sanitize(err->msg);
    } else if (!cJSON_IsObject(root)) {
        pp__fail(err, PP_ERR_INPUT, "%.200s: $: expected a JSON object at the top level, got %s", where,
                 type_name(root));
        cJSON_Delete(root);
        root = NULL;
    } else {
        scan s = {copy, where, dup_hint, err, PP_OK};
        scan_value(&s, skip_ws(copy), root, "$", 0);
        if (s.st != PP_OK) {
            cJSON_Delete(root);
            root = NULL;
            *st = s.st;
        }
    }
    free(copy);
    if (root) *st = PP_OK;
    return root;
}

cJSON *jr_parse(const char *text, size_t len, const char *where, pp_error *err)
{
    return jr_parse_ex(text, len, where, NULL, err, NULL);
}

int jr_exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

static const char *file_kind(mode_t m)
{
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

/* Opens without blocking (a FIFO with no writer would block open and read
 * forever) and reads only regular files, at most JR_MAX_BYTES + 1 bytes. */
pp_status jr_read_file(const char *path, char **out, size_t *len, pp_error *err)
{
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return pp__fail(err, PP_ERR_IO, "%.200s: cannot open: %s: expected a readable JSON file", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        int isdir = S_ISDIR(sb.st_mode);
        const char *kind = file_kind(sb.st_mode);
        close(fd);
        if (isdir) return pp__fail(err, PP_ERR_IO, "%.200s: is a directory: expected a JSON file", path);
        return pp__fail(err, PP_ERR_IO, "%.200s: is %s: expected a regular JSON file (parplan reads only regular "
                        "files, so it never waits on a pipe)", path, kind);
    }
    if (sb.st_size > JR_MAX_BYTES) {
        close(fd);
        return pp__fail(err, PP_ERR_INPUT, "%.200s: file larger than %d bytes: expected a small JSON config", path,
                        JR_MAX_BYTES);
    }
    size_t cap = (size_t)sb.st_size + 1, n = 0;
    char *buf = malloc(cap + 1);
    int e = 0;
    while (buf) {
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) e = errno;
        if (got <= 0) break;
        n += (size_t)got;
        if (n > JR_MAX_BYTES) break;
        if (n == cap) { /* the file grew while being read */
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
            cap *= 2;
        }
    }
    close(fd);
    if (!buf) return pp__fail(err, PP_ERR_NOMEM, "%.200s: out of memory", path);
    if (e) {
        free(buf);
        return pp__fail(err, PP_ERR_IO, "%.200s: read error: %s", path, strerror(e));
    }
    if (n > JR_MAX_BYTES) {
        free(buf);
        return pp__fail(err, PP_ERR_INPUT, "%.200s: file larger than %d bytes: expected a small JSON config", path, JR_MAX_BYTES);
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return PP_OK;
}

int jr_fail(jr_ctx *c, const char *path, const char *key, const char *fmt, ...)
{
    if (c->st != PP_OK) return 0;
    char what[PP_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    pp__fail(c->err, PP_ERR_INPUT, "%s: %s%s%s: %s", c->where, path && *path ? path : "$",
             key ? "." : "", key ? key : "", what);
    if (c->err) jr_sanitize(c->err->msg); /* keys and values may hold newlines or escapes */
    c->st = PP_ERR_INPUT;
    return 0;
}

/* Levenshtein distance of a and b (99 if either is longer than 63), or
 * bound itself as soon as it cannot come out below bound: |la - lb| is a
 * lower bound, and a row's minimum never decreases down the table. */
static int edit_distance(const char *a, const char *b, int bound)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > 63 || lb > 63) return 99;
    if (la - lb >= bound || lb - la >= bound) return bound;
    int prev[64], cur[64];
    for (int j = 0; j <= lb; j++) prev[j] = j;
    for (int i = 1; i <= la; i++) {
        cur[0] = i;
        int row_min = i;
        for (int j = 1; j <= lb; j++) {
            int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            int del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
            if (cur[j] < row_min) row_min = cur[j];
        }
        if (row_min >= bound) return bound;
        memcpy(prev, cur, sizeof(int) * (size_t)(lb + 1));
    }
    return prev[lb];
}

/* Bag distance of s (its byte counts in cnt) and b: the larger number of
 * bytes either has beyond the other's; a lower bound on their edit distance
 * (each edit changes it by at most one). cnt comes back unchanged. */
static int bag_distance(int cnt[256], int ls, const char *b)
{
    int lb = 0, extra_b = 0;
    for (; b[lb]; lb++)
        if (--cnt[(unsigned char)b[lb]] < 0) extra_b++;
    for (int j = 0; j < lb; j++) cnt[(unsigned char)b[j]]++;
    int extra_s = ls - (lb - extra_b);
    return extra_s > extra_b ? extra_s : extra_b;
}

/* The first of names nearest to s, returned when within a third of s's
 * length or when one holds the other (their distance is then the length
 * difference). Only a strictly nearer name replaces the best, so the search
 * starts at the bound past which nothing would be returned, and measures a
 * name only while a lower bound says it can still win. */
const char *jr_nearest(const char *s, const char *const *names, int n)
{
    int ls = (int)strlen(s), limit = ls / 3 + 1;
    if (limit < 2) limit = 2;
    int held = 1 << 30; /* the nearest name that holds s or that s holds */
    for (int i = 0; i < n; i++) {
        int lb = (int)strlen(names[i]);
        if (lb >= ls ? strstr(names[i], s) != NULL : strstr(s, names[i]) != NULL) {
            int d = ls > 63 || lb > 63 ? 99 : abs(ls - lb);
            if (d < held) held = d;
        }
    }
    const char *best = NULL;
    int bd = (held < (1 << 30) && held > limit ? held : limit) + 1, cnt[256] = {0};
    for (int j = 0; j < ls; j++) cnt[(unsigned char)s[j]]++;
    for (int i = 0; i < n; i++) {
        if (ls <= 63 && strlen(names[i]) <= 63 && bag_distance(cnt, ls, names[i]) >= bd) continue;
        int d = edit_distance(s, names[i], bd);
        if (d < bd) {
            bd = d;
            best = names[i];
        }
    }
    if (best && (bd <= limit || strstr(best, s) || strstr(s, best))) return best;
    return NULL;
}

void jr_check_keys(jr_ctx *c, const cJSON *obj, const char *path, const char *const *known)
{
    int n = 0;
    while (known[n]) n++;
    for (const cJSON *it = obj ? obj->child : NULL; it && c->st == PP_OK; it = it->next) {
        int ok = 0;
        for (int i = 0; i < n && !ok; i++) ok = strcmp(it->string, known[i]) == 0;
        if (ok) continue;
        const char *near = jr_nearest(it->string, known, n);
        if (near)
            jr_fail(c, path, it->string, "unknown key (did you mean \"%s\"?)", near);
        else
            jr_fail(c, path, it->string, "unknown key (expected one of the documented keys, see docs/formats.md)");
    }
}

static const cJSON *get(jr_ctx *c, const cJSON *o, const char *path, const char *key, int req)
{
    if (c->st != PP_OK) return NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (v && cJSON_IsNull(v)) v = NULL;
    if (!v && req) jr_fail(c, path, key, "missing required field");
    return v;
}

int jr_num(jr_ctx *c, const cJSON *o, const char *path, const char *key, int req, double lo,
           double hi, double *out)
{
    const cJSON *v = get(c, o, path, key, req);
    if (!v) return 0;
    if (!cJSON_IsNumber(v)) return jr_fail(c, path, key, "expected a number in [%g, %g], got %s", lo, hi, type_name(v));
    double d = v->valuedouble;
    if (!isfinite(d) || d < lo || d > hi)
        return jr_fail(c, path, key, "expected a number in [%g, %g], got %g", lo, hi, d);
    *out = d;
    return 1;
}

int jr_int(jr_ctx *c, const cJSON *o, const char *path, const char *key, int req, long lo,
           long hi, int *out)
{
    const cJSON *v = get(c, o, path, key, req);
    if (!v) return 0;
    if (!cJSON_IsNumber(v))
        return jr_fail(c, path, key, "expected an integer in [%ld, %ld], got %s", lo, hi, type_name(v));
    double d = v->valuedouble;
    if (!isfinite(d) || d < (double)lo || d > (double)hi)
        return jr_fail(c, path, key, "expected an integer in [%ld, %ld], got %g", lo, hi, d);
    if (d != floor(d)) return jr_fail(c, path, key, "expected an integer, got %g", d);
    *out = (int)d;
    return 1;
}

int jr_bool(jr_ctx *c, const cJSON *o, const char *path, const char *key, int req, int *out)
{
    const cJSON *v = get(c, o, path, key, req);
    if (!v) return 0;
    if (!cJSON_IsBool(v)) return jr_fail(c, path, key, "expected true or false, got %s", type_name(v));
    *out = cJSON_IsTrue(v) ? 1 : 0;
    return 1;
}

int jr_str(jr_ctx *c, const cJSON *o, const char *path, const char *key, int req, char *buf,
           size_t cap)
{
    const cJSON *v = get(c, o, path, key, req);
    if (!v) return 0;
    if (!cJSON_IsString(v)) return jr_fail(c, path, key, "expected a string, got %s", type_name(v));
    if (strlen(v->valuestring) >= cap)
        return jr_fail(c, path, key, "expected a string shorter than %zu characters", cap);
    memcpy(buf, v->valuestring, strlen(v->valuestring) + 1);
    return 1;
}

int jr_enum(jr_ctx *c, const cJSON *o, const char *path, const char *key, int req,
            const char *const *names, int n, int *out)
{
    const cJSON *v = get(c, o, path, key, req);
    if (!v) return 0;
    char list[256] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, names[i], sizeof list - strlen(list) - 1);
        if (i + 1 < n) strncat(list, "|", sizeof list - strlen(list) - 1);
    }
    if (!cJSON_IsString(v)) return jr_fail(c, path, key, "expected one of %s, got %s", list, type_name(v));
    for (int i = 0; i < n; i++)
        if (strcmp(v->valuestring, names[i]) == 0) {
            *out = i;
            return 1;
        }
    const char *near = jr_nearest(v->valuestring, names, n);
    if (near) return jr_fail(c, path, key, "expected one of %s, got \"%.40s\" (did you mean \"%s\"?)", list, v->valuestring, near);
    return jr_fail(c, path, key, "expected one of %s, got \"%.40s\"", list, v->valuestring);
}

const cJSON *jr_obj(jr_ctx *c, const cJSON *o, const char *path, const char *key, int req)
{
    const cJSON *v = get(c, o, path, key, req);
    if (!v) return NULL;
    if (!cJSON_IsObject(v)) {
        jr_fail(c, path, key, "expected a JSON object, got %s", type_name(v));
        return NULL;
    }
    return v;
}
