/*
 * toml_tree.c — a strict reader for the subset of TOML (v1.0.0) that
 * torchtitan job files use, into a cJSON tree: [tables] and [dotted.tables],
 * key = value with bare, quoted or dotted keys, basic and literal strings,
 * decimal integers and floats, booleans, arrays (nested, multi-line, with
 * trailing commas and comments), # comments. Everything else TOML has
 * (inline tables, arrays of tables, multi-line strings, dates, hex/octal/
 * binary integers, inf/nan) is refused with file:line:column, as are keys
 * defined twice. No TOML library is packaged for Debian bookworm.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/emit.h"
#include "configs/trees.h"

#define TOML_MAX_DEPTH 16
#define TOML_MAX_TABLES 256

typedef struct toml {
    const char *t;
    size_t len, i;
    int line;
    size_t line_start;
    const char *where;
    pp_error *err;
    pp_status st;
    cJSON *root, *table;          /* current [table] */
    char *defined[TOML_MAX_TABLES]; /* headers seen */
    int ndefined;
} toml;

static int tfail(toml *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int tfail(toml *x, const char *fmt, ...)
{
    if (x->st) return 0;
    char what[PP_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    jr_sanitize(what);
    pp__fail(x->err, PP_ERR_INPUT, "%.200s:%d:%d: %s", x->where, x->line, (int)(x->i - x->line_start) + 1, what);
    x->st = PP_ERR_INPUT;
    return 0;
}

static int oom(toml *x)
{
    if (!x->st) pp__fail(x->err, PP_ERR_NOMEM, "%.200s: out of memory", x->where);
    x->st = PP_ERR_NOMEM;
    return 0;
}

static char peek(const toml *x) { return x->i < x->len ? x->t[x->i] : '\0'; }

static int bare_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* The word w at the cursor, not followed by a key character. */
static int at_word(const toml *x, const char *w)
{
    size_t n = strlen(w);
    return x->len - x->i >= n && !memcmp(x->t + x->i, w, n) && (x->i + n >= x->len || !bare_char(x->t[x->i + n]));
}

static void skip_ws(toml *x)
{
    while (x->i < x->len && (x->t[x->i] == ' ' || x->t[x->i] == '\t')) x->i++;
}

static void newline(toml *x)
{
    x->i++;
    x->line++;
    x->line_start = x->i;
}

/* spaces, comments and (in arrays) newlines */
static void skip_ws_nl(toml *x)
{
    for (;;) {
        skip_ws(x);
        char c = peek(x);
        if (c == '#') {
            while (x->i < x->len && x->t[x->i] != '\n') x->i++;
        } else if (c == '\r' && x->i + 1 < x->len && x->t[x->i + 1] == '\n') {
            x->i++;
        } else if (c == '\n') {
            newline(x);
        } else {
            return;
        }
    }
}

/* the rest of a line after a value: spaces, a comment, the newline */
static int end_of_line(toml *x)
{
    skip_ws(x);
    if (peek(x) == '#')
        while (x->i < x->len && x->t[x->i] != '\n') x->i++;
    if (peek(x) == '\r') x->i++;
    if (x->i < x->len && x->t[x->i] != '\n')
        return tfail(x, "unexpected '%c' after the value: expected a comment or the end of the line", x->t[x->i]);
    if (x->i < x->len) newline(x);
    return 1;
}

static void put_utf8(char *out, size_t *n, unsigned long cp)
{
    if (cp < 0x80) out[(*n)++] = (char)cp;
    else if (cp < 0x800) out[(*n)++] = (char)(0xC0 | cp >> 6), out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    else if (cp < 0x10000)
        out[(*n)++] = (char)(0xE0 | cp >> 12), out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F)), out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    else
        out[(*n)++] = (char)(0xF0 | cp >> 18), out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3F)),
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F)), out[(*n)++] = (char)(0x80 | (cp & 0x3F));
}

/* "..." or '...' on one line; *out is malloc'd. */
static char *string(toml *x)
{
    char q = peek(x);
    if (x->i + 2 < x->len && x->t[x->i + 1] == q && x->t[x->i + 2] == q)
        return tfail(x, "multi-line strings (%c%c%c) are not read: write the value on one line", q, q, q), NULL;
    size_t start = ++x->i, n = 0;
    char *out = malloc(x->len - start + 1);
    if (!out) return oom(x), NULL;
    while (x->i < x->len && x->t[x->i] != q && x->t[x->i] != '\n') {
        char c = x->t[x->i++];
        if (c == '\\' && q == '"') {
            char e = peek(x);
            x->i++;
            const char *esc = strchr("btnfr\"\\", e);
            if (esc && e) {
                out[n++] = "\b\t\n\f\r\"\\"[esc - "btnfr\"\\"];
            } else if (e == 'u' || e == 'U') {
                int digits = e == 'u' ? 4 : 8;
                unsigned long cp = 0;
                for (int k = 0; k < digits; k++, x->i++) {
                    char h = peek(x);
                    int d = h >= '0' && h <= '9' ? h - '0' : (h | 32) >= 'a' && (h | 32) <= 'f' ? (h | 32) - 'a' + 10 : -1;
                    if (d < 0) return free(out), tfail(x, "\\%c escape: expected %d hex digits", e, digits), NULL;
                    cp = cp * 16 + (unsigned long)d;
                }
                if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
                    return free(out), tfail(x, "\\%c escape: not a Unicode scalar value (or NUL)", e), NULL;
                put_utf8(out, &n, cp);
            } else {
                x->i--;
                return free(out), tfail(x, "unknown escape \\%c in a string", e ? e : '?'), NULL;
            }
            continue;
        }
        if ((unsigned char)c < 0x20 && c != '\t') return free(out), tfail(x, "control character in a string"), NULL;
        out[n++] = c;
    }
    if (x->i >= x->len || x->t[x->i] != q) return free(out), tfail(x, "unterminated string: expected a closing %c", q), NULL;
    x->i++;
    out[n] = '\0';
    return out;
}


/* One key part, bare or quoted; *out malloc'd. */
static char *key_part(toml *x)
{
    char c = peek(x);
    if (c == '"' || c == '\'') return string(x);
    size_t s = x->i;
    while (x->i < x->len && bare_char(x->t[x->i])) x->i++;
    if (x->i == s) return tfail(x, "expected a key (letters, digits, _ or -, or a quoted string)"), NULL;
    char *k = malloc(x->i - s + 1);
    if (!k) return oom(x), NULL;
    memcpy(k, x->t + s, x->i - s);
    k[x->i - s] = '\0';
    return k;
}

static void free_parts(char **parts, int n);

/* A dotted key a.b.c: up to 16 parts (freed by the caller on success, here
 * on failure). */
static int dotted_key(toml *x, char **parts, int *n)
{
    *n = 0;
    for (;;) {
        skip_ws(x);
        if (*n == TOML_MAX_DEPTH) return free_parts(parts, *n), tfail(x, "key nested deeper than %d levels", TOML_MAX_DEPTH);
        char *p = key_part(x);
        if (!p) return free_parts(parts, *n), 0;
        parts[(*n)++] = p;
        skip_ws(x);
        if (peek(x) != '.') return 1;
        x->i++;
    }
}

static void free_parts(char **parts, int n)
{
    for (int k = 0; k < n; k++) free(parts[k]);
}

/* The child table `name` of t, created when absent; NULL (and a failure)
 * when name holds a value. */
static cJSON *sub_table(toml *x, cJSON *t, const char *name)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(t, name);
    if (c && !cJSON_IsObject(c)) return tfail(x, "'%.64s' is a value, not a table", name), NULL;
    if (c) return c;
    c = cJSON_AddObjectToObject(t, name);
    if (!c) oom(x);
    return c;
}

static cJSON *value(toml *x, int depth);

static cJSON *array(toml *x, int depth)
{
    if (depth > TOML_MAX_DEPTH) return tfail(x, "arrays nested deeper than %d levels", TOML_MAX_DEPTH), NULL;
    cJSON *a = cJSON_CreateArray();
    if (!a) return oom(x), NULL;
    x->i++;
    for (;;) {
        skip_ws_nl(x);
        if (peek(x) == ']') {
            x->i++;
            return a;
        }
        cJSON *v = value(x, depth + 1);
        if (!v) return cJSON_Delete(a), NULL;
        cJSON_AddItemToArray(a, v);
        skip_ws_nl(x);
        if (peek(x) == ',') {
            x->i++;
            continue;
        }
        if (peek(x) == ']') continue;
        cJSON_Delete(a);
        return tfail(x, "expected ',' or ']' in an array"), NULL;
    }
}

/* A decimal integer or float: [+-] digits with single underscores between
 * digits, optional fraction and exponent. */
static cJSON *number(toml *x)
{
    size_t s = x->i;
    char buf[64];
    size_t n = 0;
    int is_float = 0, prev_digit = 0;
    if (peek(x) == '+' || peek(x) == '-') buf[n++] = x->t[x->i++];
    if (peek(x) == '0' && x->i + 1 < x->len && strchr("xob", x->t[x->i + 1]))
        return tfail(x, "hexadecimal, octal and binary integers are not read: write it in decimal"), NULL;
    if (at_word(x, "inf") || at_word(x, "nan"))
        return tfail(x, "inf and nan are not accepted: expected a finite number"), NULL;
    while (x->i < x->len && n + 1 < sizeof buf) {
        char c = x->t[x->i];
        if (c >= '0' && c <= '9') buf[n++] = c, prev_digit = 1;
        else if (c == '_' && prev_digit && x->i + 1 < x->len && x->t[x->i + 1] >= '0' && x->t[x->i + 1] <= '9') prev_digit = 0;
        else if (c == '.' || c == 'e' || c == 'E') buf[n++] = c, is_float = 1, prev_digit = 0;
        else if ((c == '+' || c == '-') && (buf[n - 1] == 'e' || buf[n - 1] == 'E')) buf[n++] = c;
        else break;
        x->i++;
    }
    buf[n] = '\0';
    if (peek(x) == ':' || (peek(x) == '-' && !is_float && n >= 4))
        return tfail(x, "dates and times are not read: write the value as a string"), NULL;
    char *end;
    double v = strtod(buf, &end);
    if (n == 0 || *end || end == buf || !isfinite(v) || (buf[0] == '0' && n > 1 && buf[1] >= '0' && buf[1] <= '9') ||
        (is_float && strchr(buf, '.') && !(strchr(buf, '.')[1] >= '0' && strchr(buf, '.')[1] <= '9'))) {
        x->i = s;
        return tfail(x, "expected a value: a \"string\", a number, true, false or an [array] (dates and inline "
                        "tables are not read)"), NULL;
    }
    if (!is_float && fabs(v) > 9007199254740992.0) return tfail(x, "integer too large"), NULL;
    cJSON *j = cJSON_CreateNumber(v);
    if (!j) oom(x);
    return j;
}

static cJSON *value(toml *x, int depth)
{
    char c = peek(x);
    cJSON *v = NULL;
    if (c == '"' || c == '\'') {
        char *s = string(x);
        if (!s) return NULL;
        v = cJSON_CreateString(s);
        free(s);
    } else if (c == '[') {
        return array(x, depth);
    } else if (c == '{') {
        return tfail(x, "inline tables { ... } are not read: write a [table] with one key per line"), NULL;
    } else if (at_word(x, "true")) {
        x->i += 4;
        v = cJSON_CreateTrue();
    } else if (at_word(x, "false")) {
        x->i += 5;
        v = cJSON_CreateFalse();
    } else {
        return number(x);
    }
    if (!v) oom(x);
    return v;
}

static int header(toml *x)
{
    x->i++;
    if (peek(x) == '[') return tfail(x, "arrays of tables [[...]] are not read");
    char *parts[TOML_MAX_DEPTH];
    int n;
    if (!dotted_key(x, parts, &n)) return 0;
    skip_ws(x);
    if (peek(x) != ']') return free_parts(parts, n), tfail(x, "expected ']' closing the table header");
    x->i++;
    char path[512] = "";
    size_t used = 0;
    cJSON *t = x->root;
    for (int k = 0; k < n && t; k++) {
        used += (size_t)snprintf(path + used, used < sizeof path ? sizeof path - used : 0, "%s%s", k ? "." : "", parts[k]);
        t = sub_table(x, t, parts[k]);
    }
    free_parts(parts, n);
    if (!t) return 0;
    for (int k = 0; k < x->ndefined; k++)
        if (!strcmp(x->defined[k], path)) return tfail(x, "table [%.200s] defined twice", path);
    if (x->ndefined == TOML_MAX_TABLES) return tfail(x, "more than %d tables", TOML_MAX_TABLES);
    if (!(x->defined[x->ndefined] = strdup(path))) return oom(x);
    x->ndefined++;
    x->table = t;
    return end_of_line(x);
}

static int assignment(toml *x)
{
    char *parts[TOML_MAX_DEPTH];
    int n;
    if (!dotted_key(x, parts, &n)) return 0;
    skip_ws(x);
    if (peek(x) != '=') return free_parts(parts, n), tfail(x, "expected '=' after the key");
    x->i++;
    skip_ws(x);
    cJSON *t = x->table;
    for (int k = 0; k + 1 < n && t; k++) t = sub_table(x, t, parts[k]);
    const char *key = parts[n - 1];
    if (t && cJSON_GetObjectItemCaseSensitive(t, key)) {
        tfail(x, "key '%.64s' defined twice", key);
        t = NULL;
    }
    cJSON *v = t ? value(x, 0) : NULL;
    if (v) cJSON_AddItemToObject(t, key, v);
    free_parts(parts, n);
    return v ? end_of_line(x) : 0;
}

cJSON *pp__toml_parse(const char *text, size_t len, const char *where, pp_error *err, pp_status *status)
{
    toml x = {text, len, 0, 1, 0, where, err, PP_OK, NULL, NULL, {NULL}, 0};
    *status = PP_ERR_INPUT;
    if (len > JR_MAX_BYTES) return pp__fail(err, PP_ERR_INPUT, "%.200s: file is %zu bytes: expected at most %d", where, len, JR_MAX_BYTES), NULL;
    if (memchr(text, '\0', len)) return pp__fail(err, PP_ERR_INPUT, "%.200s: binary data (NUL byte): expected a TOML text file", where), NULL;
    x.root = x.table = cJSON_CreateObject();
    if (!x.root) return *status = pp__fail(err, PP_ERR_NOMEM, "%.200s: out of memory", where), NULL;
    while (x.st == PP_OK) {
        skip_ws_nl(&x);
        if (x.i >= len) break;
        if (peek(&x) == '[') header(&x);
        else assignment(&x);
    }
    for (int k = 0; k < x.ndefined; k++) free(x.defined[k]);
    if (x.st != PP_OK) {
        *status = x.st;
        cJSON_Delete(x.root);
        return NULL;
    }
    *status = PP_OK;
    return x.root;
}
