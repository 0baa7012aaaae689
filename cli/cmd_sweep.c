/* cmd_sweep.c — `parplan sweep`: many scenarios from a spec, streamed in spec
 * order on threads, or across MPI ranks when started by mpirun/srun. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep.h"

static const cli_opt opts[] = {
    {"jobs", 1, "threads running scenarios (default: all cores); under MPI, rank 0's threads with its coordinator (default 2)"},
    {"shard", 1, "K/N: run every N-th scenario, starting at the K-th (Slurm arrays, GNU parallel)"},
    {"format", 1, "jsonl (default) or csv"},
    {"top", 1, "plans per scenario for scenarios that give no \"top\" (default 3)"},
    {"framework", 1, "all (default) or a list of pytorch,deepspeed,megatron,megatron-deepspeed,fsdp for scenarios "
                     "that give no \"framework\""},
    {"output", 1, "write to FILE (default stdout), as FILE.part until done; refuses to overwrite without --force"},
    {"resume", 1, "skip scenarios already in FILE (with --output FILE: continue it)"},
    {"force", 0, "overwrite --output (a regular file)"},
    {"progress", 0, "force the progress bar (default: only when stderr is a terminal)"},
    {NULL, 0, NULL}};

static int parse_shard(const char *s, pp_sweep_opts *o)
{
    char tail;
    if (!s) return 0;
    if (sscanf(s, "%d/%d%c", &o->shard_k, &o->shard_n, &tail) != 2 || o->shard_n < 1 || o->shard_k < 1 ||
        o->shard_k > o->shard_n) {
        fprintf(stderr, "%s: --shard: expected K/N with 1 <= K <= N, got '%.64s'\n", SWEEP_ME, s);
        return 2;
    }
    return 0;
}

static int read_cfg(const cli_args *a, sweep_cfg *cfg)
{
    const char *fmt = cli_get(a, "format");
    int rc;
    memset(cfg, 0, sizeof *cfg);
    if (a->npos != 1) {
        fprintf(stderr, "%s: expected one SPEC.json (or - for stdin); see `parplan sweep --help`\n", SWEEP_ME);
        return 2;
    }
    if (fmt && strcmp(fmt, "jsonl") && strcmp(fmt, "csv")) {
        fprintf(stderr, "%s: --format: expected jsonl or csv, got '%.64s'\n", SWEEP_ME, fmt);
        return 2;
    }
    cfg->o.format = fmt && !strcmp(fmt, "csv") ? PP_SWEEP_CSV : PP_SWEEP_JSONL;
    if ((rc = cli_int(a, "jobs", 1, PP_SWEEP_MAX_JOBS, 0, &cfg->o.jobs)) || (rc = cli_int(a, "top", 1, PP_TOP_MAX, 0, &cfg->o.top)) ||
        (rc = cli_enum_list(a, "framework", PP_ENUM_FRAMEWORK, &cfg->o.frameworks)) ||
        (rc = parse_shard(cli_get(a, "shard"), &cfg->o)))
        return rc;
    cfg->spec_path = a->pos[0];
    cfg->output = cli_get(a, "output");
    cfg->resume = cli_get(a, "resume");
    cfg->force = cli_has(a, "force");
    cfg->bar = isatty(2) || cli_has(a, "progress");
    return 0;
}

pp_status sweep_drive_local(pp_sweep_queue *q, void *user)
{
    sweep_tally *x = user;
    int index, got;
    char *line;
    pp_status st;
    x->total = pp_sweep_queue_total(q);
    while ((got = pp_sweep_queue_next(q, 1, &index, &line, &st)) == 1) {
        x->failed += st != PP_OK;
        x->bad += st == PP_ERR_INPUT || st == PP_ERR_IO; /* both exit 2 (pp_status_exit_code) */
        x->rc = sweep_out_line(x->out, line);
        pp_free(line);
        if (x->rc) return PP_ERR_IO;
        sweep_progress(x->bar, pp_sweep_queue_done(q), pp_sweep_queue_total(q), x->t0);
    }
    return got == -1 ? PP_OK : PP_ERR_NOMEM;
}

static int run_serial(sweep_cfg *cfg)
{
    pp_error err = {""};
    pp_sweep *sw = NULL;
    sweep_done done = {0};
    sweep_out out = {0};
    sweep_tally x = {&out, 0, 0, 0, 0, cfg->bar, sweep_now()};
    int rc = sweep_read_spec(cfg->spec_path, &cfg->spec, &cfg->len);
    pp_status st = PP_OK;
    if (!rc && (st = pp_sweep_open(cfg->spec, cfg->len, cfg->spec_path, &sw, &err)) != PP_OK) rc = cli_fail(st, &err);
    if (!rc) rc = sweep_out_open(&out, cfg, sw, &done);
    if (!rc) {
        cfg->o.skip = done.idx;
        cfg->o.nskip = done.n;
        st = pp_sweep_stream(sw, &cfg->o, sweep_drive_local, &x, &err);
        if (st == PP_ERR_IO) rc = x.rc;
        else if (st != PP_OK) rc = cli_fail(st, &err);
    }
    rc = sweep_end(&out, rc, &x);
    pp_sweep_close(sw);
    free(done.idx);
    free(cfg->spec);
    return rc;
}

int sweep_end(sweep_out *out, int rc, const sweep_tally *x)
{
    int frc = sweep_out_finish(out, !rc);
    rc = rc ? rc : frc;
    /* every scenario refused as bad input: the spec is bad input (exit 2),
     * not "nothing fits"; each line says which field */
    int all_bad = !rc && x->total > 0 && x->bad == x->total;
    if (all_bad)
        fprintf(stderr, "%s: every one of the %d scenarios is bad input (see their \"error\": field and what was "
                "expected)\n", SWEEP_ME, x->total);
    else if (!rc && x->failed)
        fprintf(stderr, "%s: %d of %d scenarios gave no plan (see their \"error\")\n", SWEEP_ME, x->failed, x->total);
    return rc ? rc : all_bad ? 2 : x->failed ? 1 : 0;
}

static int run(const cli_args *a)
{
    sweep_cfg cfg;
    int rc = read_cfg(a, &cfg);
    if (rc) return rc;
    return sweep_under_mpi() ? sweep_mpi(&cfg) : run_serial(&cfg);
}

const cli_cmd cli_cmd_sweep = {"sweep", "run many scenarios from a JSON spec; JSON lines or CSV in spec order",
    "  parplan sweep SPEC.json|- [--jobs N] [--shard K/N] [--format jsonl|csv] [--top N] [--framework F,...] [--output FILE] [--resume FILE]\n"
    "  mpirun -np N parplan sweep SPEC.json --output FILE     # across MPI ranks, the same output\n\n"
    "  SPEC: {\"grid\": {\"model\": [...], \"cluster\": [...], \"gpus\": [...], \"global_batch\": [...], ...},\n"
    "         \"scenarios\": [{\"model\": ..., \"cluster\": ..., \"gpus\": 128, \"global_batch\": 1024, \"tp\": 8}]}\n"
    "  Grid keys expand in the order written, the last fastest; every result carries its \"index\".\n"
    "  Exit: 0 all scenarios planned, 1 some gave no plan (their lines say why), 2 bad spec, options or path,\n"
    "  3 a write failed (the complete lines stay in FILE.part for --resume).",
    "  parplan sweep bench/sweep_grid.json --format csv --output results.csv\n"
    "  parplan sweep spec.json --shard 3/8 > part3.jsonl    # one of 8 Slurm array tasks\n"
    "  parplan sweep spec.json --output all.jsonl --resume all.jsonl   # continue after an interruption",
    opts, run};
