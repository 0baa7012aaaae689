/*
 * sweep.h — the parts of `parplan sweep` (docs/sweep.md): the output journal
 * and --resume (sweep_out.c), the serial and MPI drivers (cmd_sweep.c,
 * sweep_mpi.c). Every function that can fail prints one line naming the
 * file and returns the exit code (0 ok, 2 bad path or input, 3 write
 * failure); nothing is left under the final name unless the sweep finished.
 */
#ifndef PARPLAN_CLI_SWEEP_H
#define PARPLAN_CLI_SWEEP_H

#include <limits.h>
#include <stdio.h>

#include "cli.h"

/* What the user asked for. */
typedef struct sweep_cfg {
    const char *spec_path;  /* as given, "-" for stdin */
    char *spec;             /* its text, owned */
    size_t len;
    const char *output;     /* --output, NULL for stdout */
    const char *resume;     /* --resume, NULL for none */
    int force, bar;
    pp_sweep_opts o;        /* jobs, shard, format, top; skip from resume */
} sweep_cfg;

/* Indices already done (--resume), sorted. */
typedef struct sweep_done {
    int *idx;
    int n, cap;
} sweep_done;

/* Where results go. A regular file is written as FILE.part (a journal, one
 * whole line per result, flushed) and renamed to FILE when the sweep ends;
 * stdout, a character device or a FIFO is written in place. */
typedef struct sweep_out {
    FILE *f;
    const char *shown;      /* name in messages: the --output as given, or "stdout" */
    char final[PATH_MAX];   /* "" when written in place */
    char part[PATH_MAX + 8];
    int csv, header_done;
    long long good;         /* bytes of complete lines in the file */
    long long lines;        /* lines in the file (this run and resumed) */
} sweep_out;

#define SWEEP_ME "parplan sweep"

/* Reads the spec (a regular file or stdin; never blocks on a FIFO). */
int sweep_read_spec(const char *path, char **text, size_t *len);
/* Opens the output and reads the --resume file into done (its lines must
 * be scenarios of sw with cfg's options); with --resume FILE --output FILE
 * it continues FILE's journal, cutting a half-written last line. */
int sweep_out_open(sweep_out *w, const sweep_cfg *cfg, const pp_sweep *sw, sweep_done *done);
/* Appends one result line; on failure keeps the complete lines and says so. */
int sweep_out_line(sweep_out *w, const char *line);
/* ok = 1: flushes, syncs and renames the journal into place. ok = 0 (the
 * sweep stopped): closes, keeping the journal for --resume. */
int sweep_out_finish(sweep_out *w, int ok);

/* What a driver counts, and where it writes. */
typedef struct sweep_tally {
    sweep_out *out;
    int failed, total; /* scenarios without a plan; scenarios run */
    int bad;           /* of the failed, those refused as bad input */
    int rc;            /* exit code of a failed write */
    int bar;
    double t0;
} sweep_tally;

/* Takes results in order (waiting for them) and writes them: the driver of
 * a sweep on this process alone. */
pp_status sweep_drive_local(pp_sweep_queue *q, void *user);
/* Finishes the output (renamed into place when rc is 0) and returns the
 * exit code, saying how many scenarios gave no plan. */
int sweep_end(sweep_out *out, int rc, const sweep_tally *x);

/* The progress bar on stderr. */
void sweep_progress(int bar, int done, int total, double t0);
double sweep_now(void);

/* 1 when started by mpirun/srun (an MPI launcher's environment). */
int sweep_under_mpi(void);
/* The sweep across MPI ranks (sweep_mpi.c); every rank returns the exit code. */
int sweep_mpi(sweep_cfg *cfg);

#endif
