/* emit_opts.c — launch files from the command line: the hyper-parameters
 * they carry, and --emit DIR (a plan's folder, or one per plan). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_hparams(const cli_args *a, pp_hparams *h)
{
    int rc;
    double steps = h->total_steps, warm = h->warmup_steps;
    if ((rc = cli_num(a, "lr", 1e-12, 10, h->lr, &h->lr)) || (rc = cli_num(a, "min-lr", 0, 10, h->min_lr, &h->min_lr)) ||
        (rc = cli_num(a, "warmup-steps", 0, 2e9, warm, &warm)) || (rc = cli_num(a, "train-steps", 1, 2e9, steps, &steps)) ||
        (rc = cli_num(a, "weight-decay", 0, 10, h->weight_decay, &h->weight_decay)) ||
        (rc = cli_num(a, "adam-eps", 1e-30, 1, h->eps, &h->eps)) ||
        (rc = cli_num(a, "grad-clip", 0, 1e6, h->gradient_clipping, &h->gradient_clipping)))
        return rc;
    h->warmup_steps = (int)warm;
    h->total_steps = (int)steps;
    const char *b = cli_get(a, "adam-betas");
    char tail;
    if (b && sscanf(b, "%lf,%lf%c", &h->beta1, &h->beta2, &tail) != 2) {
        fprintf(stderr, "parplan: --adam-betas: expected B1,B2 such as 0.9,0.95, got '%s'\n", cli_q(b));
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
