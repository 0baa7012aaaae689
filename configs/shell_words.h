/*
 * shell_words.h — splits a bash file or command line into words the way
 * bash does, without expanding or running anything (shell_words.c).
 */
#ifndef PARPLAN_SHELL_WORDS_H
#define PARPLAN_SHELL_WORDS_H

#include "parplan.h"

#define PP_WORDS_MAX_BYTES (4 << 20) /* larger files are refused */

typedef struct pp__word {
    int off;      /* offset of the NUL-terminated text in pp__words.buf */
    int line;     /* 1-based line where the word starts */
    int in_array; /* inside a NAME=( ... ) array */
    int cmd_start; /* first word after an unescaped line break (or of the file) */
} pp__word;

typedef struct pp__words {
    char *buf;      /* owned: the words' text */
    pp__word *word; /* owned */
    int n, cap;
    int arrays;     /* NAME=( ... ) arrays seen */
    int skipped_line; /* first line outside the arrays skipped for an expansion or operator; 0 = none */
} pp__words;

/* Splits text into words. Errors (PP_ERR_INPUT, naming where:line): binary
 * data, an unterminated quote or array, an expansion ($, `), a shell
 * operator. Free the result with pp__words_free (also after an error). */
pp_status pp__shell_words(const char *text, size_t len, const char *where, pp__words *out, pp_error *err);
void pp__words_free(pp__words *w);
static inline const char *pp__word_text(const pp__words *w, int i) { return w->buf + w->word[i].off; }

/* jr_read_file for a text file that is not JSON (the messages say so). */
pp_status pp__read_text_file(const char *path, char **out, size_t *len, pp_error *err);

#endif
