/*
 * test_doc_commands.c — every command the reader documentation shows runs:
 * each ```sh block of the listed docs is run by bash -e in a fresh folder,
 * with the built parplan first on PATH, and must exit 0 (a line ending in
 * "# exit N" must exit N instead). Add a doc to the list when its commands
 * are meant to be run as shown.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const docs[] = {"docs/fsdp.md", "docs/megatron.md"};

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *b = calloc((size_t)n + 1, 1);
    cr_assert(b && fread(b, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    return b;
}

/* The script for one block: continuation lines kept, "# exit N" lines
 * checked for status N. */
static void script(const char *block, size_t len, FILE *out)
{
    fprintf(out, "set -e\n");
    char *text = strndup(block, len);
    char *save = NULL, *cmd = calloc(1, len + 1);
    cr_assert(text && cmd);
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        strcat(cmd, line);
        size_t n = strlen(cmd);
        if (n && cmd[n - 1] == '\\') {
            cmd[n - 1] = ' ';
            continue;
        }
        char *mark = strstr(cmd, "# exit ");
        if (mark) {
            int want = atoi(mark + 7);
            *mark = '\0';
            fprintf(out, "set +e\n%s\nrc=$?\nset -e\n[ $rc -eq %d ] || { echo \"expected exit %d, got $rc: %s\" >&2; exit 1; }\n",
                    cmd, want, want, "see the doc");
        } else {
            fprintf(out, "%s\n", cmd);
        }
        cmd[0] = '\0';
    }
    free(cmd);
    free(text);
}

static int run_block(const char *doc, int k, const char *block, size_t len)
{
    const char *t = getenv("TMPDIR");
    char dir[256], path[512], bin[512], cmd[2048];
    snprintf(dir, sizeof dir, "%s/parplan-doc-XXXXXX", t && *t ? t : "/tmp");
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/block.sh", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    script(block, len, f);
    fclose(f);
    snprintf(bin, sizeof bin, "%s", PARPLAN_CLI);
    snprintf(cmd, sizeof cmd, "cd '%s' && PATH='%s':\"$PATH\" bash block.sh >out.txt 2>err.txt", dir, dirname(bin));
    int st = system(cmd);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (rc != 0) {
        snprintf(path, sizeof path, "%s/err.txt", dir);
        char *err = slurp(path);
        cr_expect_eq(rc, 0, "%s, block %d failed (exit %d):\n%.*s\nstderr: %s", doc, k, rc, (int)len, block, err);
        free(err);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert(system(cmd) == 0);
    return rc;
}

Test(doc_commands, every_sh_block_runs, .timeout = 600)
{
    int blocks = 0;
    for (size_t d = 0; d < sizeof docs / sizeof *docs; d++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", PARPLAN_SOURCE_DIR, docs[d]);
        char *text = slurp(path), *p = text;
        int k = 0;
        while ((p = strstr(p, "\n```sh\n"))) {
            p += 7;
            char *end = strstr(p, "\n```");
            cr_assert(end, "%s: unterminated ```sh block", docs[d]);
            run_block(docs[d], ++k, p, (size_t)(end - p) + 1);
            blocks++;
            p = end + 4;
        }
        free(text);
    }
    cr_expect(blocks >= 4, "expected the docs' command blocks, found %d", blocks);
}
