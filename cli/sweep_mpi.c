/*
 * sweep_mpi.c — `mpirun -np N parplan sweep SPEC --output FILE`: the sweep
 * across MPI ranks, with the serial run's output byte for byte.
 *
 * Rank 0 reads the spec and broadcasts its text; every rank parses it. Rank
 * 0 owns the ordered window (pp_sweep_stream), the output and --resume; its
 * main thread coordinates, and --jobs - 1 threads beside it run scenarios
 * (default --jobs 2: one). Ranks 1..N-1 are workers:
 * each keeps two requests outstanding, and gets one index per request
 * (dynamic balancing: a scenario 100x dearer than the rest holds one rank,
 * never a block of them); a result line goes back with the next request.
 * Rank 0 answers every request with WORK(index) or STOP, and writes lines
 * in index order through the same journal as the serial run. Failures
 * (bad spec, bad output path, a failed write) are decided on rank 0, said
 * once by rank 0 in the serial run's words, and every rank exits with that
 * code. A rank that dies takes the job down (mpirun's default); the
 * journal FILE.part keeps the complete lines for --resume.
 * MPI is called from the main thread only (MPI_THREAD_FUNNELED).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sweep.h"

int sweep_under_mpi(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", NULL};
    for (int i = 0; vars[i]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

#ifndef PARPLAN_HAVE_MPI

int sweep_mpi(sweep_cfg *cfg)
{
    (void)cfg;
    fprintf(stderr, "%s: started by an MPI launcher, but this parplan was built without MPI: rebuild with "
                    "libopenmpi-dev installed (docs/sweep.md), or run it without mpirun\n", SWEEP_ME);
    return 2;
}

#else
#include <mpi.h>

enum { TAG_REQ = 1, TAG_RESULT, TAG_WORK, TAG_STOP };
#define PREFETCH 2 /* requests a worker keeps outstanding */

/* ---- workers (ranks 1..N-1) ---- */

static void send_result(int index, pp_status st, const char *line)
{
    size_t len = line ? strlen(line) : 0;
    char *buf = malloc(8 + len);
    int hdr[2] = {index, (int)st};
    if (!buf) { /* report the scenario as out of memory: rank 0 stops the sweep */
        hdr[1] = PP_ERR_NOMEM;
        MPI_Send(hdr, 8, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
        return;
    }
    memcpy(buf, hdr, 8);
    if (len) memcpy(buf + 8, line, len);
    MPI_Send(buf, (int)(8 + len), MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
    free(buf);
}

static void worker(const pp_sweep *sw, const pp_sweep_opts *o)
{
    int queue[PREFETCH], nq = 0, owed = PREFETCH;
    for (int i = 0; i < PREFETCH; i++) MPI_Send(NULL, 0, MPI_INT, 0, TAG_REQ, MPI_COMM_WORLD);
    while (owed > 0 || nq > 0) {
        int flag = 0;
        MPI_Status s;
        if (owed > 0 && nq > 0) MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &s);
        if (owed > 0 && (nq == 0 || flag)) { /* a reply: WORK or STOP */
            int index = -1;
            MPI_Recv(&index, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &s);
            owed--;
            if (s.MPI_TAG == TAG_WORK) queue[nq++] = index; /* STOP: nothing more comes */
            continue;
        }
        int index = queue[0];
        memmove(queue, queue + 1, (size_t)--nq * sizeof *queue);
        pp_status st;
        char *line = pp_sweep_result(sw, o, index, &st);
        send_result(index, line ? st : PP_ERR_NOMEM, line);
        pp_free(line);
        owed++; /* every result is also the next request */
    }
}

/* ---- rank 0: the driver of pp_sweep_stream ---- */

typedef struct peer {
    long long received, work_sent; /* messages from it; indices sent to it */
    int pending;                   /* requests not yet answered */
} peer;

typedef struct coord {
    sweep_tally t;
    int size;
    peer *peers;
    int emitting_done, aborting;
    pp_status fail;                /* NOMEM from a worker or the queue */
} coord;

static int peer_done(const peer *p) { return p->received == PREFETCH + p->work_sent && p->pending == 0; }

static void take_message(coord *c, pp_sweep_queue *q, const MPI_Status *s)
{
    peer *p = &c->peers[s->MPI_SOURCE];
    int n = 0;
    MPI_Get_count(s, MPI_BYTE, &n);
    char *buf = malloc((size_t)n + 1);
    if (!buf) {
        fprintf(stderr, "%s: out of memory receiving a result from rank %d\n", SWEEP_ME, s->MPI_SOURCE);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Recv(buf, n, MPI_BYTE, s->MPI_SOURCE, s->MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    p->received++;
    p->pending++;
    if (s->MPI_TAG != TAG_RESULT) {
        free(buf);
        return;
    }
    int hdr[2] = {-1, PP_ERR_NOMEM};
    if (n >= 8) memcpy(hdr, buf, 8);
    buf[n] = '\0';
    if (n <= 8 || hdr[1] == PP_ERR_NOMEM) c->fail = PP_ERR_NOMEM;
    else if (pp_sweep_queue_put(q, hdr[0], buf + 8, (pp_status)hdr[1]) != PP_OK) c->fail = PP_ERR_INTERNAL;
    free(buf);
}

/* Answers the requests it can: WORK while indices are left and the window
 * has room, STOP when nothing is left (or the sweep is stopping). */
static int answer(coord *c, pp_sweep_queue *q)
{
    int any = 0;
    for (int r = 1; r < c->size; r++) {
        peer *p = &c->peers[r];
        while (p->pending > 0) {
            int index = -1, got = c->aborting || c->fail ? -1 : pp_sweep_queue_claim(q, &index);
            if (got == 0) break;
            MPI_Send(&index, 1, MPI_INT, r, got == 1 ? TAG_WORK : TAG_STOP, MPI_COMM_WORLD);
            p->pending--;
            p->work_sent += got == 1;
            any = 1;
        }
    }
    return any;
}

/* Writes the results that are ready, in order. */
static int emit_ready(coord *c, pp_sweep_queue *q)
{
    int index, got, any = 0;
    char *line;
    pp_status st;
    while (!c->aborting && !c->emitting_done && (got = pp_sweep_queue_next(q, 0, &index, &line, &st)) != 0) {
        if (got == -1) c->emitting_done = 1;
        if (got == -2) c->fail = PP_ERR_NOMEM;
        if (got != 1) break;
        c->t.failed += st != PP_OK;
        c->t.bad += st == PP_ERR_INPUT;
        c->t.rc = sweep_out_line(c->t.out, line);
        pp_free(line);
        if (c->t.rc) c->aborting = 1;
        sweep_progress(c->t.bar, pp_sweep_queue_done(q), pp_sweep_queue_total(q), c->t.t0);
        any = 1;
    }
    return any;
}

static pp_status coord_drive(pp_sweep_queue *q, void *user)
{
    coord *c = user;
    c->t.total = pp_sweep_queue_total(q);
    for (;;) {
        int flag, busy = 0;
        MPI_Status s;
        while (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &s) == MPI_SUCCESS && flag) {
            take_message(c, q, &s);
            busy = 1;
        }
        if (c->fail) c->aborting = 1;
        busy |= emit_ready(c, q);
        busy |= answer(c, q);
        int all = 1;
        for (int r = 1; r < c->size; r++) all &= peer_done(&c->peers[r]);
        if (all && (c->emitting_done || c->aborting)) break;
        if (!busy) nanosleep(&(struct timespec){0, 200000}, NULL); /* 0.2 ms between polls */
    }
    return c->t.rc ? PP_ERR_IO : c->fail ? c->fail : PP_OK;
}

/* ---- all ranks ---- */

/* Rank 0 reads the spec; every rank gets its text (or the exit code). */
static int share_spec(sweep_cfg *cfg, int rank)
{
    int rc = rank == 0 ? sweep_read_spec(cfg->spec_path, &cfg->spec, &cfg->len) : 0;
    long long len = (long long)cfg->len;
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc) return rc;
    MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank != 0) {
        cfg->len = (size_t)len;
        cfg->spec = malloc(cfg->len + 1);
        rc = cfg->spec ? 0 : 3;
    }
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rc) return rc;
    MPI_Bcast(cfg->spec, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
    cfg->spec[len] = '\0';
    return 0;
}

/* Rank 0: the output, then the sweep; every rank learns both outcomes. */
static int run_rank0(sweep_cfg *cfg, pp_sweep *sw, int size)
{
    sweep_done done = {0};
    sweep_out out = {0};
    coord c = {{&out, 0, 0, 0, cfg->bar, sweep_now()}, size, calloc((size_t)size, sizeof(peer)), 0, 0, PP_OK};
    pp_error err = {""};
    int rc = c.peers ? sweep_out_open(&out, cfg, sw, &done) : 3, opened = !rc;
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!rc) {
        cfg->o.skip = done.idx;
        cfg->o.nskip = done.n;
        if (cfg->o.jobs == 0 && size > 1) cfg->o.jobs = 2; /* the coordinator and one worker thread */
        if (cfg->o.window == 0 && size > 1) cfg->o.window = 64 + 64 * (size * PREFETCH + cfg->o.jobs);
        pp_status st = size > 1 ? pp_sweep_stream(sw, &cfg->o, coord_drive, &c, &err)
                                : pp_sweep_stream(sw, &cfg->o, sweep_drive_local, &c.t, &err);
        if (st == PP_ERR_IO) rc = c.t.rc;
        else if (st != PP_OK) rc = cli_fail(st, &err);
    }
    rc = sweep_end(&out, rc, &c.t);
    if (opened) MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(c.peers);
    free(done.idx);
    return rc;
}

static int run_worker(sweep_cfg *cfg, pp_sweep *sw)
{
    int rc;
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD); /* did rank 0 open the output? */
    if (rc) return rc;
    worker(sw, &cfg->o);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD); /* rank 0's exit code */
    return rc;
}

int sweep_mpi(sweep_cfg *cfg)
{
    int provided, rank, size;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank != 0) cfg->bar = 0;
    pp_sweep *sw = NULL;
    int rc = share_spec(cfg, rank);
    if (!rc) {
        pp_error err = {""};
        pp_status st = pp_sweep_open(cfg->spec, cfg->len, cfg->spec_path, &sw, &err);
        rc = st == PP_OK ? 0 : rank == 0 ? cli_fail(st, &err) : pp_status_exit_code(st);
        MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); /* the same on every rank */
    }
    if (!rc) rc = rank == 0 ? run_rank0(cfg, sw, size) : run_worker(cfg, sw);
    pp_sweep_close(sw);
    free(cfg->spec);
    MPI_Finalize();
    return rc;
}
#endif
