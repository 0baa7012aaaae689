/* emit_opts.c — launch files from the command line: the hyper-parameters
 * they carry, and --emit DIR (a plan's folder, or one per plan). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_hparams(const cli_args *a, pp_hparams *h)
{
    int rc;
    if ((rc = cli_num(a, "lr", 1e-12, 10, h->lr, &h->lr)) || (rc = cli_num(a, "min-lr", 0, 10, h->min_lr, &h->min_lr)) ||
        (rc = cli_int(a, "warmup-steps", 0, 2000000000, h->warmup_steps, &h->warmup_steps)) ||
        (rc = cli_int(a, "train-steps", 1, 2000000000, h->total_steps, &h->total_steps)) ||
        (rc = cli_num(a, "weight-decay", 0, 10, h->weight_decay, &h->weight_decay)) ||
        (rc = cli_num(a, "adam-eps", 1e-30, 1, h->eps, &h->eps)) ||
        (rc = cli_num(a, "grad-clip", 0, 1e6, h->gradient_clipping, &h->gradient_clipping)))
        return rc;
    /* the cross-checks of pp_hparams_check, each naming its flag */
    if (h->min_lr > h->lr) {
        fprintf(stderr, "parplan: --min-lr %g: expected at most the peak learning rate (--lr %g)\n", h->min_lr, h->lr);
        return 2;
    }
    if (h->warmup_steps > h->total_steps) {
        fprintf(stderr, "parplan: --warmup-steps %d: expected at most the steps of the run (--train-steps %d)\n",
                h->warmup_steps, h->total_steps);
        return 2;
    }
    const char *b = cli_get(a, "adam-betas");
    char tail;
    if (b && (sscanf(b, "%lf,%lf%c", &h->beta1, &h->beta2, &tail) != 2 || !(h->beta1 >= 0 && h->beta1 < 1) ||
              !(h->beta2 >= 0 && h->beta2 < 1))) {
        fprintf(stderr, "parplan: --adam-betas: expected B1,B2 each in [0, 1), such as 0.9,0.95, got '%s'\n", cli_q(b));
        return 2;
    }
    return 0;
}

int cli_emit_plans(const cli_args *a, const pp_model *m, const pp_cluster *c, const pp_plan *plans, int n, int numbered)
{
    const char *dir = cli_get(a, "emit");
    if (!dir) return 0;
    pp_launch_opts o;
    pp_launch_opts_default(&o);
    int rc = cli_hparams(a, &o.hp);
    if (rc) return rc;
    const char *nv = cli_get(a, "nvme-path");
    if (nv) snprintf(o.nvme_path, sizeof o.nvme_path, "%s", nv);
    pp_notes *notes = calloc(1, sizeof *notes);
    if (!notes) return 3;
    pp_error err = {""};
    pp_status st = pp_plan_emit(m, c, plans, n, &o, dir,
                                 (cli_has(a, "force") ? PP_WRITE_FORCE : 0) | (numbered ? PP_EMIT_NUMBERED : 0), notes, &err);
    if (st == PP_OK) {
        for (int i = 0; i < notes->n; i++) fprintf(stderr, "parplan: note: %s\n", cli_safe(notes->line[i]));
        if (n > 1) fprintf(stderr, "parplan: wrote %d plans' launch files under %s/1 .. %s/%d\n", n, cli_safe(dir),
                           cli_safe(dir), n);
        else if (numbered) fprintf(stderr, "parplan: wrote the plan's launch files in %s/1\n", cli_safe(dir));
        else fprintf(stderr, "parplan: wrote the plan's launch files in %s\n", cli_safe(dir));
    }
    free(notes);
    return st == PP_OK ? 0 : cli_fail(st, &err);
}
