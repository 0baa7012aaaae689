/*
 * yaml_tree.c — a YAML document (libyaml 0.2.5, the Debian package
 * libyaml-dev) into a cJSON tree, typed the way PyYAML's safe_load types
 * it (YAML 1.1, which is what HF Accelerate reads its config with): plain
 * scalars true/false/yes/no/on/off are booleans, ~/null/empty is null,
 * decimal integers and floats with a '.' are numbers, everything else and
 * every quoted scalar is a string ('no' stays the string "no"). Refused
 * with line:column: several documents, anchors and aliases, tags,
 * non-scalar keys, a key given twice (PyYAML keeps the last silently),
 * nesting deeper than JR_MAX_DEPTH.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "configs/emit.h"
#include "configs/trees.h"

typedef struct ytree {
    const char *where;
    pp_error *err;
    pp_status st;
    cJSON *stack[JR_MAX_DEPTH + 2];
    char *key[JR_MAX_DEPTH + 2]; /* pending key per mapping level */
    int depth;
    cJSON *root;
    int docs;
} ytree;

static int yfail(ytree *y, const yaml_mark_t *mk, const char *what, const char *detail)
{
    if (y->st) return 0;
    char d[160];
    snprintf(d, sizeof d, "%.150s", detail ? detail : "");
    jr_sanitize(d);
    pp__fail(y->err, PP_ERR_INPUT, "%.200s:%zu:%zu: %s%s%s", y->where, mk->line + 1, mk->column + 1, what,
             d[0] ? ": " : "", d);
    y->st = PP_ERR_INPUT;
    return 0;
}

static int ieq(const char *a, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(a, list[i])) return 1;
    return 0;
}

/* PyYAML's implicit resolvers for a plain scalar. */
static cJSON *plain_scalar(const char *v)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", NULL};
    static const char *const falses[] = {"no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", NULL};
    if (ieq(v, nulls)) return cJSON_CreateNull();
    if (ieq(v, trues)) return cJSON_CreateTrue();
    if (ieq(v, falses)) return cJSON_CreateFalse();
    char buf[64];
    size_t n = 0, len = strlen(v);
    int dot = 0, ok = len > 0 && len < sizeof buf;
    for (size_t i = 0; ok && i < len; i++) {
        char c = v[i];
        if (c == '_') continue;
        if (c == '.') dot++;
        ok = (c >= '0' && c <= '9') || c == '.' || ((c == '-' || c == '+') && (i == 0 || v[i - 1] == 'e' || v[i - 1] == 'E')) ||
             ((c == 'e' || c == 'E') && dot);
        buf[n++] = c;
    }
    buf[n] = '\0';
    char *end;
    if (ok && n && dot <= 1) {
        double d = strtod(buf, &end);
        const char *digits = buf + (buf[0] == '-' || buf[0] == '+');
        int lead_zero = !dot && digits[0] == '0' && digits[1]; /* 010 is octal in YAML 1.1: keep as text */
        if (!*end && isfinite(d) && !lead_zero && (dot || strspn(digits, "0123456789") == strlen(digits)))
            return cJSON_CreateNumber(d);
    }
    return cJSON_CreateString(v);
}

/* Adds item to the container on top of the stack (under its pending key). */
static int attach(ytree *y, cJSON *item, const yaml_mark_t *mk)
{
    if (!item) {
        if (!y->st) pp__fail(y->err, PP_ERR_NOMEM, "%.200s: out of memory", y->where);
        y->st = PP_ERR_NOMEM;
        return 0;
    }
    if (y->depth == 0) {
        y->root = item;
        return 1;
    }
    cJSON *top = y->stack[y->depth - 1];
    if (cJSON_IsArray(top)) {
        cJSON_AddItemToArray(top, item);
        return 1;
    }
    char *k = y->key[y->depth - 1];
    if (!k) { /* this item is a key */
        if (!cJSON_IsString(item)) {
            cJSON_Delete(item);
            return yfail(y, mk, "a key that is not text", "expected key: value with a plain or quoted key");
        }
        if (cJSON_GetObjectItemCaseSensitive(top, item->valuestring)) {
            yfail(y, mk, "key given twice", item->valuestring);
            cJSON_Delete(item);
            return 0;
        }
        y->key[y->depth - 1] = strdup(item->valuestring);
        cJSON_Delete(item);
        if (!y->key[y->depth - 1]) return attach(y, NULL, mk);
        return 1;
    }
    cJSON_AddItemToObject(top, k, item);
    free(k);
    y->key[y->depth - 1] = NULL;
    return 1;
}

static int scalar(ytree *y, const yaml_event_t *ev)
{
    const char *v = (const char *)ev->data.scalar.value;
    int in_key = y->depth > 0 && cJSON_IsObject(y->stack[y->depth - 1]) && !y->key[y->depth - 1];
    if (ev->data.scalar.tag && !ev->data.scalar.plain_implicit && !ev->data.scalar.quoted_implicit)
        return yfail(y, &ev->start_mark, "tags (!!type) are not read", (const char *)ev->data.scalar.tag);
    if (ev->data.scalar.anchor) return yfail(y, &ev->start_mark, "anchors (&name) are not read", NULL);
    if (memchr(v, '\0', ev->data.scalar.length)) return yfail(y, &ev->start_mark, "NUL in a value", NULL);
    cJSON *item = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !in_key ? plain_scalar(v) : cJSON_CreateString(v);
    return attach(y, item, &ev->start_mark);
}

static int open_node(ytree *y, const yaml_event_t *ev, int mapping)
{
    const yaml_char_t *anchor = mapping ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    if (anchor) return yfail(y, &ev->start_mark, "anchors (&name) are not read", NULL);
    if (y->depth > 0 && cJSON_IsObject(y->stack[y->depth - 1]) && !y->key[y->depth - 1])
        return yfail(y, &ev->start_mark, "a key that is not text", "expected key: value with a plain or quoted key");
    if (y->depth >= JR_MAX_DEPTH) return yfail(y, &ev->start_mark, "nested deeper than 32 levels", NULL);
    cJSON *c = mapping ? cJSON_CreateObject() : cJSON_CreateArray();
    if (!attach(y, c, &ev->start_mark)) return 0;
    y->stack[y->depth] = c;
    y->key[y->depth] = NULL;
    y->depth++;
    return 1;
}

static int step(ytree *y, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++y->docs > 1) return yfail(y, &ev->start_mark, "a second document (---)", "expected one document");
        return 1;
    case YAML_ALIAS_EVENT: return yfail(y, &ev->start_mark, "aliases (*name) are not read", NULL);
    case YAML_SCALAR_EVENT: return scalar(y, ev);
    case YAML_SEQUENCE_START_EVENT: return open_node(y, ev, 0);
    case YAML_MAPPING_START_EVENT: return open_node(y, ev, 1);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        y->depth--;
        free(y->key[y->depth]);
        y->key[y->depth] = NULL;
        return 1;
    default: return 1;
    }
}

cJSON *pp__yaml_parse(const char *text, size_t len, const char *where, pp_error *err, pp_status *status)
{
    *status = PP_ERR_INPUT;
    if (len > JR_MAX_BYTES) return pp__fail(err, PP_ERR_INPUT, "%.200s: file is %zu bytes: expected at most %d", where, len, JR_MAX_BYTES), NULL;
    if (memchr(text, '\0', len)) return pp__fail(err, PP_ERR_INPUT, "%.200s: binary data (NUL byte): expected a YAML text file", where), NULL;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) return *status = pp__fail(err, PP_ERR_NOMEM, "%.200s: out of memory", where), NULL;
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    ytree y = {where, err, PP_OK, {NULL}, {NULL}, 0, NULL, 0};
    for (int done = 0; !done && y.st == PP_OK;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            const yaml_mark_t *mk = &p.problem_mark;
            char what[200];
            snprintf(what, sizeof what, "malformed or truncated YAML (%s%s%s)", p.problem ? p.problem : "error",
                     p.context ? " " : "", p.context ? p.context : "");
            yfail(&y, mk, what, "expected a complete YAML mapping");
            break;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        step(&y, &ev);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    for (int i = 0; i < y.depth; i++) free(y.key[i]);
    if (y.st == PP_OK && !y.root) y.st = pp__fail(err, PP_ERR_INPUT, "%.200s: empty file: expected a YAML mapping", where);
    if (y.st == PP_OK && !cJSON_IsObject(y.root))
        y.st = pp__fail(err, PP_ERR_INPUT, "%.200s: expected a mapping (key: value lines) at the top", where);
    if (y.st != PP_OK) {
        cJSON_Delete(y.root);
        *status = y.st;
        return NULL;
    }
    *status = PP_OK;
    return y.root;
}
