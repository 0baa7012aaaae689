/*
 * test_nearest.c — jr_nearest, the "did you mean" search of every reader:
 *   (a) hand-worked cases (distances written out);
 *   (b) against brute force: the full Levenshtein table for every name, no
 *       pruning, over many random strings and name lists. jr_nearest skips
 *       names by lower bounds (length difference, bag distance, a table row
 *       already at the best so far) and starts at the farthest distance it
 *       could return (a third of the length, or a name holding s or held by
 *       it); the answer must not change.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "configs/jsonread.h"

/* ------------------------------------------------------------------ (a) */

Test(nearest, hand_cases)
{
    /* kitten: sitting 3 (k->s, e->i, +g), mitten 1 (k->m), kitchen 2 (t->c, +h) */
    const char *const a[] = {"sitting", "mitten", "kitchen"};
    cr_assert_str_eq(jr_nearest("kitten", a, 3), "mitten");
    /* hat: bat 1, cat 1: the first of equals */
    const char *const b[] = {"bat", "cat"};
    cr_assert_str_eq(jr_nearest("hat", b, 2), "bat");
    /* tensor: 20 insertions away (limit 6/3+1 = 3) but a part of the name */
    const char *const c[] = {"pipeline-model-parallel-size", "tensor-model-parallel-size"};
    cr_assert_str_eq(jr_nearest("tensor", c, 2), "tensor-model-parallel-size");
    /* zzzz: abcdefgh is 8 away (limit max(4/3+1, 2) = 2) and no part of it */
    const char *const d[] = {"abcdefgh"};
    cr_assert_null(jr_nearest("zzzz", d, 1));
    cr_assert_null(jr_nearest("x", d, 0));
}

/* ------------------------------------------------------------------ (b) */

/* Levenshtein distance by the full table; 99 past 63 bytes, as documented. */
static int full_distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > 63 || lb > 63) return 99;
    static int t[64][64];
    for (int i = 0; i <= la; i++)
        for (int j = 0; j <= lb; j++) {
            if (!i || !j) {
                t[i][j] = i + j;
                continue;
            }
            int v = t[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (t[i - 1][j] + 1 < v) v = t[i - 1][j] + 1;
            if (t[i][j - 1] + 1 < v) v = t[i][j - 1] + 1;
            t[i][j] = v;
        }
    return t[la][lb];
}

static const char *brute_nearest(const char *s, const char *const *names, int n)
{
    const char *best = NULL;
    int bd = 1 << 30;
    for (int i = 0; i < n; i++) {
        int d = full_distance(s, names[i]);
        if (d < bd) bd = d, best = names[i];
    }
    int limit = (int)strlen(s) / 3 + 1;
    if (limit < 2) limit = 2;
    return best && (bd <= limit || strstr(best, s) || strstr(s, best)) ? best : NULL;
}

/* A random string over a small alphabet (so near misses are common);
 * now and then longer than 63 bytes. */
static void random_string(char *buf, unsigned *seed)
{
    static const char alphabet[] = "abc-_";
    int len = rand_r(seed) % 50 == 0 ? 60 + rand_r(seed) % 10 : rand_r(seed) % 16;
    for (int i = 0; i < len; i++) buf[i] = alphabet[rand_r(seed) % 5];
    buf[len] = '\0';
}

Test(nearest, equals_brute_force)
{
    unsigned seed = 20261124;
    static char s[80], pool[24][160];
    const char *names[24];
    for (int trial = 0; trial < 30000; trial++) {
        random_string(s, &seed);
        int n = rand_r(&seed) % 24;
        for (int i = 0; i < n; i++) {
            random_string(pool[i], &seed);
            size_t ls = strlen(s), k = rand_r(&seed) % 6;
            if (k == 0 && ls > 1) { /* a near miss: s with one byte changed */
                strcpy(pool[i], s);
                pool[i][rand_r(&seed) % ls] = 'x';
            } else if (k == 1 && strlen(pool[i]) + ls < 160) { /* a name holding s */
                strcat(pool[i], s);
            } else if (k == 2 && ls > 0) { /* a piece of s */
                size_t from = rand_r(&seed) % ls, len = rand_r(&seed) % (ls - from + 1);
                memcpy(pool[i], s + from, len);
                pool[i][len] = '\0';
            }
            names[i] = pool[i];
        }
        const char *want = brute_nearest(s, names, n), *got = jr_nearest(s, names, n);
        cr_assert(want == got, "trial %d: \"%s\": brute force %s, jr_nearest %s", trial, s, want ? want : "(none)",
                  got ? got : "(none)");
    }
}
