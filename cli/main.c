/* main.c — `parplan COMMAND ...`: dispatch, --version and --help, and the
 * check that everything printed reached stdout. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const cli_cmd *const commands[] = {
    &cli_cmd_estimate, &cli_cmd_plan, &cli_cmd_compare, &cli_cmd_sweep, &cli_cmd_models, &cli_cmd_model, &cli_cmd_gpus, &cli_cmd_clusters, &cli_cmd_cluster, &cli_cmd_frameworks, NULL};

static void usage(FILE *f)
{
    fprintf(f, "parplan %s — plan parallel training of transformers: will it fit, how fast, what to launch\n\n"
               "Usage: parplan COMMAND [OPTIONS]    (parplan COMMAND --help for each)\n\nCommands:\n",
            pp_version());
    for (int i = 0; commands[i]; i++) fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(f, "\nExit codes: 0 ok, 1 nothing fits, 2 bad input or usage, 3 internal error.\n"
               "Examples:\n  parplan model show llama3-70b\n  parplan plan --model llama3-70b --cluster dgx-h100 --nodes 8 --global-batch 512\n");
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--version") || !strcmp(name, "version")) {
        printf("parplan %s (JSON schema %d)\n", pp_version(), PP_SCHEMA_VERSION);
        return 0;
    }
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        usage(stdout);
        return 0;
    }
    for (int i = 0; commands[i]; i++) {
        const cli_cmd *c = commands[i];
        if (strcmp(c->name, name) != 0) continue;
        for (int k = 2; k < argc; k++)
            if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
                cli_print_help(c, stdout);
                return 0;
            }
        cli_args a;
        int rc = cli_parse(c, argc - 2, argv + 2, &a);
        return rc ? rc : c->run(&a);
    }
    const char *near = NULL;
    for (int i = 0; commands[i] && !near; i++)
        if (!strncmp(commands[i]->name, name, 3) || strstr(commands[i]->name, name)) near = commands[i]->name;
    if (near) fprintf(stderr, "parplan: unknown command '%s' (did you mean '%s'?); see `parplan --help`\n", cli_q(name), near);
    else fprintf(stderr, "parplan: unknown command '%s'; see `parplan --help`\n", cli_q(name));
    return 2;
}

/* stdout is checked once, at exit: a full disk, a file size limit or a
 * closed pipe makes a write fail, and the failure is sticky (ferror), so a
 * cut-off table or JSON never exits 0. Returns the exit code to use. */
static int finish(int rc)
{
    errno = 0;
    int failed = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !failed) failed = 1, e = errno; /* NFS, quotas: close may be the first to fail */
    if (!failed) return rc;
    fprintf(stderr, "parplan: stdout: write failed: %s (the output is incomplete)\n",
            e ? strerror(e) : "an earlier write failed");
    return rc == 2 ? 2 : 3;
}

int main(int argc, char **argv)
{
    /* a file size limit (ulimit -f) makes write() fail with EFBIG instead of
     * killing the process, so the error is reported like any other */
    signal(SIGXFSZ, SIG_IGN);
    return finish(dispatch(argc, argv));
}
