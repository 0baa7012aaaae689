/*
 * shell_words.c — the words of a bash file or command line, as bash would
 * split them, without running anything: `#` comments, single and double
 * quotes, backslash escapes and continuations, and NAME=( ... ) arrays.
 * Expansions ($x, `cmd`) and operators (; | & < >) are refused with the
 * line they are on: a file parplan reads is data, never a script it runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/emit.h"
#include "configs/shell_words.h"

void pp__words_free(pp__words *w)
{
    if (!w) return;
    free(w->buf);
    free(w->word);
    memset(w, 0, sizeof *w);
}

typedef struct lexer {
    const char *t;
    size_t len, i;
    int line;
    const char *where;
    pp_error *err;
    pp__words *out;
    size_t used;   /* bytes of out->buf used */
    int in_word;   /* a word is being built */
    int word_line;
    int in_array;  /* inside NAME=( ... ) */
    int word_start;
    int at_cmd;    /* no word since the last unescaped line break */
    int word_cmd;  /* the current word starts a command line */
    int pending;   /* line of a problem outside the arrays; 0 = none */
    char pending_msg[PP_ERR_LEN];
} lexer;

static int lex_fail(lexer *x, const char *fmt, const char *what)
{
    pp__fail(x->err, PP_ERR_INPUT, fmt, x->where, x->line, what);
    return -1;
}

/* An expansion or operator: inside an array an error; outside, the rest of
 * the line is skipped and the problem kept, an error only if the file has
 * no array (a launcher line beside the arrays is not read). */
static int lex_problem(lexer *x, const char *fmt, const char *what)
{
    if (x->in_array) return lex_fail(x, fmt, what);
    if (!x->pending) {
        snprintf(x->pending_msg, sizeof x->pending_msg, fmt, x->where, x->line, what);
        x->pending = x->line;
    }
    if (x->in_word) x->in_word = 0, x->used = (size_t)x->word_start;
    while (x->i < x->len && x->t[x->i] != '\n') x->i++;
    return 0;
}

static void put(lexer *x, char c)
{
    if (!x->in_word) {
        x->in_word = 1;
        x->word_line = x->line;
        x->word_start = (int)x->used;
        x->word_cmd = x->at_cmd;
        x->at_cmd = 0;
    }
    x->out->buf[x->used++] = c;
}

static int end_word(lexer *x)
{
    if (!x->in_word) return 0;
    x->out->buf[x->used++] = '\0';
    x->in_word = 0;
    pp__words *w = x->out;
    if (w->n == w->cap) {
        int cap = w->cap ? w->cap * 2 : 64;
        pp__word *nw = realloc(w->word, (size_t)cap * sizeof *nw);
        if (!nw) return pp__fail(x->err, PP_ERR_NOMEM, "%.200s: out of memory", x->where), -2;
        w->word = nw, w->cap = cap;
    }
    w->word[w->n++] = (pp__word){x->word_start, x->word_line, x->in_array, x->word_cmd};
    return 0;
}

/* "NAME=" so far in the current word: an array assignment follows "(". */
static int is_assign_prefix(const lexer *x)
{
    if (!x->in_word) return 0;
    const char *s = x->out->buf + x->word_start;
    size_t n = x->used - (size_t)x->word_start;
    if (n < 2 || s[n - 1] != '=' || !(s[0] == '_' || ((s[0] | 32) >= 'a' && (s[0] | 32) <= 'z'))) return 0;
    for (size_t k = 1; k + 1 < n; k++)
        if (!(s[k] == '_' || (s[k] >= '0' && s[k] <= '9') || ((s[k] | 32) >= 'a' && (s[k] | 32) <= 'z'))) return 0;
    return 1;
}

static int single_quoted(lexer *x)
{
    int start = x->line;
    for (x->i++; x->i < x->len && x->t[x->i] != '\''; x->i++) {
        if (x->t[x->i] == '\n') x->line++;
        put(x, x->t[x->i]);
    }
    if (x->i >= x->len) {
        x->line = start;
        return lex_fail(x, "%.200s:%d: unterminated single quote%s: expected a closing '", "");
    }
    if (!x->in_word) put(x, 'x'), x->used--; /* '' is an empty word */
    x->i++;
    return 0;
}

static int double_quoted(lexer *x)
{
    int start = x->line;
    if (!x->in_word) put(x, 'x'), x->used--;
    for (x->i++; x->i < x->len && x->t[x->i] != '"'; x->i++) {
        char c = x->t[x->i];
        if (c == '$' || c == '`')
            return lex_problem(x, "%.200s:%d: %s inside double quotes: parplan reads the words, it does not expand "
                               "variables or run commands; write the value itself", c == '$' ? "'$'" : "'`'");
        if (c == '\\' && x->i + 1 < x->len && strchr("$`\"\\\n", x->t[x->i + 1])) {
            c = x->t[++x->i];
            if (c == '\n') {
                x->line++;
                continue;
            }
        }
        if (c == '\n') x->line++;
        put(x, c);
    }
    if (x->i >= x->len) {
        x->line = start;
        return lex_fail(x, "%.200s:%d: unterminated double quote%s: expected a closing \"", "");
    }
    x->i++;
    return 0;
}

/* One character outside quotes; returns -1 on error. */
static int plain(lexer *x)
{
    char c = x->t[x->i];
    if (c == '\n' || c == ' ' || c == '\t' || c == '\r') {
        if (c == '\n') x->line++;
        x->i++;
        int rc = end_word(x);
        if (c == '\n') x->at_cmd = 1;
        return rc;
    }
    if (c == '#' && !x->in_word) {
        while (x->i < x->len && x->t[x->i] != '\n') x->i++;
        return 0;
    }
    if (c == '\\') {
        if (x->i + 1 >= x->len) return lex_fail(x, "%.200s:%d: the file ends with a backslash%s: expected a character "
                                                   "after it", "");
        if (x->t[x->i + 1] == '\n') x->line++;
        else put(x, x->t[x->i + 1]);
        x->i += 2;
        return 0;
    }
    if (c == '\'') return single_quoted(x);
    if (c == '"') return double_quoted(x);
    if (c == '(' && is_assign_prefix(x) && !x->in_array) {
        x->in_word = 0; /* the array's name is not an argument */
        x->used = (size_t)x->word_start;
        x->in_array = 1;
        x->out->arrays++;
        x->i++;
        return 0;
    }
    if (c == ')' && x->in_array) {
        if (end_word(x)) return -1;
        x->in_array = 0;
        x->i++;
        return 0;
    }
    if (c == '$' || c == '`')
        return lex_problem(x, "%.200s:%d: %s: parplan reads the words, it does not expand variables or run commands; "
                           "write the value itself (or flatten the file: bash -c 'source FILE; printf \"%%s\\n\" "
                           "\"${MEGATRON_ARGS[@]}\"')", c == '$' ? "'$'" : "'`'");
    if (strchr(";|&<>(){}", c)) {
        char what[4] = {'\'', c, '\'', '\0'};
        return lex_problem(x, "%.200s:%d: shell operator %s: expected arguments only (a NAME=( ... ) array, one flag "
                           "per line, or one command line)", what);
    }
    put(x, c);
    x->i++;
    return 0;
}

pp_status pp__shell_words(const char *text, size_t len, const char *where, pp__words *out, pp_error *err)
{
    memset(out, 0, sizeof *out);
    if (len > PP_WORDS_MAX_BYTES)
        return pp__fail(err, PP_ERR_INPUT, "%.200s: file is %zu bytes: expected at most %d", where, len,
                        PP_WORDS_MAX_BYTES);
    if (memchr(text, '\0', len))
        return pp__fail(err, PP_ERR_INPUT, "%.200s: binary data (NUL byte): expected a text file of arguments", where);
    out->buf = malloc(len * 2 + 2); /* each byte, a NUL per word at most */
    if (!out->buf) return pp__fail(err, PP_ERR_NOMEM, "%.200s: out of memory", where);
    lexer x = {.t = text, .len = len, .line = 1, .where = where, .err = err, .out = out, .at_cmd = 1};
    while (x.i < len)
        if (plain(&x)) {
            pp__words_free(out);
            return err && strstr(err->msg, "out of memory") ? PP_ERR_NOMEM : PP_ERR_INPUT;
        }
    if (end_word(&x)) {
        pp__words_free(out);
        return PP_ERR_NOMEM;
    }
    if (x.in_array) {
        pp__words_free(out);
        return pp__fail(err, PP_ERR_INPUT, "%.200s: the array NAME=( ... ) is not closed: expected ')' (is the file "
                        "truncated?)", where);
    }
    if (x.pending && !out->arrays) {
        pp__words_free(out);
        return pp__fail(err, PP_ERR_INPUT, "%s", x.pending_msg);
    }
    out->skipped_line = x.pending;
    return PP_OK;
}

pp_status pp__read_text_file(const char *path, char **out, size_t *len, pp_error *err)
{
    pp_status st = jr_read_file(path, out, len, err);
    if (st == PP_OK || !err) return st;
    /* jr_read_file's messages are about JSON; these files are not */
    static const char *const from[] = {" a readable JSON file", " a regular JSON file", " a JSON file",
                                       " a small JSON config"};
    for (size_t i = 0; i < sizeof from / sizeof *from; i++) {
        char *at = strstr(err->msg, from[i]);
        if (at) {
            const char *to = " a text file";
            size_t tail = strlen(at + strlen(from[i]));
            memmove(at + strlen(to), at + strlen(from[i]), tail + 1);
            memcpy(at, to, strlen(to));
        }
    }
    return st;
}
