/*
 * test_locale.c — the library's text keeps the "C" decimal point whatever
 * locale the host program set (red team rt12: under de_DE it wrote
 * "lr": 0,0003 into ds_config.json and refused its own torchtitan.toml).
 * The German locale is compiled into a temporary folder with localedef
 * (Debian's `locales` package, a project dependency) and found through
 * LOCPATH, so the test needs no locale installed system-wide.
 */
#include <criterion/criterion.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parplan.h"
#include "tests/fixtures.h"

static char dir[64];

static void german(void)
{
    snprintf(dir, sizeof dir, "/tmp/parplan_locale_XXXXXX");
    cr_assert(mkdtemp(dir), "mkdtemp");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", dir);
    (void)!system(cmd); /* warnings exit 1; the folder is what counts */
    setenv("LOCPATH", dir, 1);
    cr_assert(setlocale(LC_ALL, "de_DE.UTF-8"), "localedef did not build de_DE.UTF-8 in %s (package locales)", dir);
    char b[16];
    snprintf(b, sizeof b, "%.1f", 0.5);
    cr_assert_str_eq(b, "0,5", "the test locale writes a decimal comma");
}

static void back_to_c(void)
{
    setlocale(LC_ALL, "C");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    (void)!system(cmd);
}

/* Every launch file of every framework's #1 plan, written and read back
 * under de_DE: dots, and the same plan. */
Test(locale, launch_files_keep_the_decimal_point, .init = german, .fini = back_to_c, .timeout = 600)
{
    pp_model m = fx_model("llama3-8b");
    pp_cluster c = fx_cluster("dgx-h100", 1, 0);
    const pp_framework fws[] = {PP_FW_DEEPSPEED, PP_FW_MEGATRON, PP_FW_FSDP};
    for (size_t f = 0; f < sizeof fws / sizeof *fws; f++) {
        pp_search_opts o;
        pp_search_opts_default(&o);
        o.global_batch = 64, o.top_k = 1, o.frameworks = 1u << fws[f], o.threads = 1;
        pp_plan_list l;
        memset(&l, 0, sizeof l);
        pp_error e = {""};
        cr_assert_eq(pp_plan_search(&m, &c, &o, &l, &e), PP_OK, "%s", e.msg);
        char *mg = NULL;
        if (fws[f] == PP_FW_MEGATRON) {
            pp_megatron_opts mo;
            pp_megatron_opts_default(&mo);
            cr_assert_eq(pp_megatron_args(&m, &c, &l.plans[0], &mo, &mg, NULL, &e), PP_OK, "%s", e.msg);
            cr_expect(strstr(mg, "--adam-beta1 0.9\n") && !strstr(mg, "0,9"), "%s", mg);
            pp_strategy back;
            pp_strategy_default(&back);
            cr_expect_eq(pp_megatron_parse(mg, strlen(mg), "a.sh", &m, &c, &back, NULL, &e), PP_OK, "%s", e.msg);
            pp_free(mg);
        }
        char out[128];
        snprintf(out, sizeof out, "%s/emit%d", dir, (int)f);
        pp_launch_opts lo;
        pp_launch_opts_default(&lo);
        cr_assert_eq(pp_plan_emit(&m, &c, l.plans, 1, &lo, out, 0, NULL, &e), PP_OK, "%s", e.msg);
        char cmd[512];
        /* a digit, a comma and a digit inside a number: none in any file */
        snprintf(cmd, sizeof cmd, "grep -rlE '(^|[ =:\\[])[0-9]+,[0-9]+' %s", out);
        cr_expect_neq(system(cmd), 0, "a decimal comma in %s", out);
        if (fws[f] == PP_FW_FSDP) { /* the torchtitan job file reads back */
            snprintf(cmd, sizeof cmd, "%s/torchtitan.toml", out);
            if (access(cmd, R_OK) == 0) {
                pp_strategy back;
                pp_strategy_default(&back);
                cr_expect_eq(pp_fsdp_read(cmd, &m, &c, NULL, &back, NULL, &e), PP_OK, "%s", e.msg);
            }
        }
        pp_plan_list_free(&l);
    }
}
