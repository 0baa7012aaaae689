/*
 * test_glpk_guest.c — parplan as a guest in a program that uses GLPK
 * itself (issue 14 item 12, include/parplan.h "GLPK"): after searches that
 * solve stage-split ILPs on the caller's thread count of one, the caller's
 * GLPK terminal output setting, error hook and problem objects are exactly
 * as it left them.
 */
#include <criterion/criterion.h>
#include <glpk.h>
#include <setjmp.h>
#include <string.h>

#include "parplan.h"
#include "tests/fixtures.h"

static jmp_buf host_jb;
static int host_hook_calls;

static void host_hook(void *info)
{
    (void)info;
    host_hook_calls++;
    longjmp(host_jb, 1);
}

/* A search that solves ILPs, all on this thread (threads = 1). */
static void search_with_ilps(void)
{
    pp_model m = fx_model("llama3-70b");
    pp_cluster c = fx_cluster("dgx-h100", 4, 0);
    pp_error err = {""};
    pp_search_opts o;
    pp_search_opts_default(&o);
    o.global_batch = 256;
    o.threads = 1;
    o.pp.n = 1;
    o.pp.v[0] = 4;
    pp_plan_list l;
    cr_assert_eq(pp_plan_search(&m, &c, &o, &l, &err), PP_OK, "%s", err.msg);
    cr_assert_gt(l.stats.ilp_solved, 0, "the search solved no ILP: the test proves nothing");
    pp_plan_list_free(&l);
}

Test(glpk_guest, terminal_output_setting_is_left_as_the_host_set_it)
{
    glp_term_out(GLP_ON);
    search_with_ilps();
    cr_expect_eq(glp_term_out(GLP_ON), GLP_ON, "parplan left GLPK's terminal output switched off");
    glp_term_out(GLP_OFF);
    search_with_ilps();
    cr_expect_eq(glp_term_out(GLP_OFF), GLP_OFF, "parplan switched GLPK's terminal output on");
    glp_free_env();
}

Test(glpk_guest, host_objects_and_error_hook_survive)
{
    glp_term_out(GLP_OFF);
    glp_prob *host = glp_create_prob();
    glp_set_prob_name(host, "host");
    glp_add_rows(host, 3);
    glp_add_cols(host, 2);
    glp_error_hook(host_hook, NULL);
    search_with_ilps();
    cr_expect_str_eq(glp_get_prob_name(host), "host");
    cr_expect_eq(glp_get_num_rows(host), 3);
    cr_expect_eq(glp_get_num_cols(host), 2);
    /* a GLPK error on the host's thread still reaches the host's hook (a
     * hook reset to NULL would make GLPK abort the process here) */
    if (setjmp(host_jb) == 0) {
        glp_set_col_bnds(host, 99, GLP_FX, 0, 0); /* no column 99: a GLPK error */
        cr_assert_fail("GLPK did not report the bad column");
    }
    cr_expect_eq(host_hook_calls, 1, "the host's error hook was not called");
    glp_error_hook(NULL, NULL);
    glp_free_env(); /* required after an error */
}

Test(glpk_guest, many_searches_keep_no_glpk_memory_on_the_host_thread)
{
    /* each solve frees its own thread's environment: the host thread has
     * no GLPK environment afterwards unless it made one (glp_free_env
     * returns 1 when there is none) */
    search_with_ilps();
    search_with_ilps();
    cr_expect_eq(glp_free_env(), 1, "parplan left a GLPK environment on the caller's thread");
}
