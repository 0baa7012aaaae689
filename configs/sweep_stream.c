/*
 * sweep_stream.c — runs a sweep's scenarios on worker threads and hands the
 * results to one driver in index order (docs/sweep.md).
 *
 * Workers claim the next selected index (dynamic: one at a time, so a
 * scenario 100x dearer than its neighbours never idles the others) into a
 * ring of `window` slots and fill the slot when done; the driver takes the
 * head slot once it is ready. A worker waits when the ring is full, so at
 * most `window` finished results are ever held back for ordering: memory is
 * bounded whatever the sweep's size or the spread of scenario costs.
 * Indices can also be claimed and filled from outside (MPI ranks, through
 * the driver), with the same order and bound.
 *
 * Threads: `jobs` in all. The driver is the calling thread, and runs
 * scenarios itself whenever it waits for a result (pp_sweep_queue_next with
 * wait); the others are its OpenMP team (pthreads without OpenMP), so the
 * per-thread state of the libraries below (GLPK's environment) lives in the
 * runtime's reused pool, as for the search.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "configs/configs.h"

typedef struct slot {
    int index;
    int ready;
    pp_status st;
    char *line; /* owned until taken */
} slot;

struct pp_sweep_queue {
    const pp_sweep *sw;
    const pp_sweep_opts *o;
    pthread_mutex_t mu;
    pthread_cond_t space; /* a slot was freed, or stop */
    pthread_cond_t ready; /* a result came in, or a worker left */
    slot *ring;
    int window;
    long long head, tail; /* claimed slots are [head, tail); head is taken next */
    int cursor, n;        /* next index to consider; scenarios in the spec */
    int total, done;      /* selected scenarios; taken so far */
    int workers;          /* worker threads still running */
    int stop, nomem;
};

static int default_jobs(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#endif
}

/* Selected scenarios: the shard's share of n, less the distinct skipped
 * indices in it. O(skip list), not O(n). */
static int count_selected(const pp_sweep_opts *o, int n)
{
    long long total = n;
    if (o->shard_n > 0) total = n > o->shard_k - 1 ? (n - o->shard_k) / o->shard_n + 1 : 0;
    for (int i = 0; i < o->nskip; i++)
        if (o->skip[i] >= 0 && o->skip[i] < n && (i == 0 || o->skip[i] != o->skip[i - 1]) &&
            (o->shard_n <= 0 || o->skip[i] % o->shard_n == o->shard_k - 1))
            total--;
    return (int)total;
}

static void advance_locked(pp_sweep_queue *q)
{
    while (q->cursor < q->n && !pp_sweep_selected(q->o, q->cursor)) q->cursor++;
}

static int claim_locked(pp_sweep_queue *q, int *index)
{
    advance_locked(q);
    if (q->cursor >= q->n) return -1;
    if (q->tail - q->head >= q->window) return 0;
    slot *s = &q->ring[q->tail++ % q->window];
    s->index = *index = q->cursor++;
    s->ready = 0;
    s->line = NULL;
    return 1;
}

/* Claimed slots hold increasing indices: binary search for the pending one. */
static slot *find_locked(pp_sweep_queue *q, int index)
{
    long long lo = q->head, hi = q->tail - 1;
    while (lo <= hi) {
        long long mid = lo + (hi - lo) / 2;
        slot *s = &q->ring[mid % q->window];
        if (s->index == index) return s->ready ? NULL : s;
        if (s->index < index) lo = mid + 1;
        else hi = mid - 1;
    }
    return NULL;
}

static void put_locked(pp_sweep_queue *q, slot *s, char *line, pp_status st)
{
    s->line = line;
    s->st = st;
    s->ready = 1;
    pthread_cond_broadcast(&q->ready);
}

int pp_sweep_queue_claim(pp_sweep_queue *q, int *index)
{
    PP__C_NUMERIC;
    pthread_mutex_lock(&q->mu);
    int r = q->stop ? -1 : claim_locked(q, index);
    pthread_mutex_unlock(&q->mu);
    return r;
}

pp_status pp_sweep_queue_put(pp_sweep_queue *q, int index, const char *line, pp_status st)
{
    PP__C_NUMERIC;
    size_t len = strlen(line);
    char *copy = malloc(len + 1);
    if (!copy) return PP_ERR_NOMEM;
    memcpy(copy, line, len + 1);
    pthread_mutex_lock(&q->mu);
    slot *s = find_locked(q, index);
    if (s) put_locked(q, s, copy, st);
    pthread_mutex_unlock(&q->mu);
    if (!s) free(copy);
    return s ? PP_OK : PP_ERR_INPUT;
}

/* Runs one claimed index with the lock released; 0 when out of memory. */
static int run_claimed_locked(pp_sweep_queue *q, int index)
{
    pp_status st;
    pthread_mutex_unlock(&q->mu);
    char *line = pp_sweep_result(q->sw, q->o, index, &st);
    pthread_mutex_lock(&q->mu);
    slot *s = find_locked(q, index);
    if (!line || !s) {
        pp_free(line);
        q->nomem = 1;
        pthread_cond_broadcast(&q->ready);
        return 0;
    }
    put_locked(q, s, line, st);
    return 1;
}

int pp_sweep_queue_next(pp_sweep_queue *q, int wait, int *index, char **line, pp_status *st)
{
    PP__C_NUMERIC;
    pthread_mutex_lock(&q->mu);
    int r;
    for (;;) {
        slot *h = &q->ring[q->head % q->window];
        if (q->nomem) {
            r = -2;
            break;
        }
        if (q->head < q->tail && h->ready) {
            *index = h->index, *line = h->line, *st = h->st;
            h->line = NULL;
            q->head++;
            q->done++;
            pthread_cond_broadcast(&q->space);
            r = 1;
            break;
        }
        advance_locked(q);
        if (q->head == q->tail && q->cursor >= q->n) {
            r = -1;
            break;
        }
        if (!wait) {
            r = 0;
            break;
        }
        int i;
        if (claim_locked(q, &i) == 1) { /* help while waiting: one more worker */
            run_claimed_locked(q, i);
            continue;
        }
        pthread_cond_wait(&q->ready, &q->mu);
    }
    pthread_mutex_unlock(&q->mu);
    return r;
}

int pp_sweep_queue_total(const pp_sweep_queue *q) { return q->total; }
int pp_sweep_queue_done(const pp_sweep_queue *q) { return q->done; }

static void worker(pp_sweep_queue *q)
{
    pthread_mutex_lock(&q->mu);
    while (!q->stop && !q->nomem) {
        int i, r = claim_locked(q, &i);
        if (r < 0) break;
        if (r == 0) pthread_cond_wait(&q->space, &q->mu);
        else if (!run_claimed_locked(q, i)) break;
    }
    q->workers--;
    pthread_cond_broadcast(&q->ready);
    pthread_mutex_unlock(&q->mu);
}

typedef struct team {
    pp_sweep_queue *q;
    pp_status (*drive)(pp_sweep_queue *, void *);
    void *user;
    pp_status st;
} team;

static void drive_then_stop(team *t)
{
    t->st = t->drive(t->q, t->user);
    pthread_mutex_lock(&t->q->mu);
    t->q->stop = 1;
    pthread_cond_broadcast(&t->q->space);
    pthread_mutex_unlock(&t->q->mu);
}

#ifndef _OPENMP
static void *worker_main(void *q)
{
    worker(q);
    return NULL;
}
#endif

/* The driver on the calling thread, jobs - 1 workers beside it. */
static void run_team(team *t, int jobs)
{
#ifdef _OPENMP
#pragma omp parallel num_threads(jobs)
    {
#pragma omp master
        t->q->workers = omp_get_num_threads() - 1; /* the runtime may give fewer */
#pragma omp barrier
        if (omp_get_thread_num() == 0) drive_then_stop(t);
        else worker(t->q);
    }
#else
    pthread_t *th = calloc((size_t)jobs, sizeof *th);
    int started = 0;
    pthread_mutex_lock(&t->q->mu);
    for (; th && started < jobs - 1; started++)
        if (pthread_create(&th[started], NULL, worker_main, t->q) != 0) break;
    t->q->workers = started;
    pthread_mutex_unlock(&t->q->mu);
    drive_then_stop(t);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    free(th);
#endif
}

pp_status pp_sweep_stream(const pp_sweep *s, const pp_sweep_opts *o, pp_status (*drive)(pp_sweep_queue *q, void *user),
                          void *user, pp_error *err)
{
    PP__C_NUMERIC;
    if (o->shard_n < 0 || (o->shard_n > 0 && (o->shard_k < 1 || o->shard_k > o->shard_n)))
        return pp__fail(err, PP_ERR_INPUT, "--shard K/N: expected 1 <= K <= N, got %d/%d", o->shard_k, o->shard_n);
    if (o->window < 0 || o->nskip < 0 || (o->nskip > 0 && !o->skip) || o->format < 0 || o->format >= PP_SWEEP_FORMAT_COUNT)
        return pp__fail(err, PP_ERR_INPUT, "sweep options: expected window, nskip >= 0, a skip list when nskip > 0, a known format");
    /* the CLI's bounds (--jobs 1..1024, --top 1..PP_TOP_MAX), 0 = default */
    if (o->jobs < 0 || o->jobs > PP_SWEEP_MAX_JOBS)
        return pp__fail(err, PP_ERR_INPUT, "sweep options: jobs: expected 0 (default) or 1 to %d threads, got %d",
                        PP_SWEEP_MAX_JOBS, o->jobs);
    if (o->top < 0 || o->top > PP_TOP_MAX)
        return pp__fail(err, PP_ERR_INPUT, "sweep options: top: expected 0 (each scenario's) or 1 to %d plans, got %d",
                        PP_TOP_MAX, o->top);
    int jobs = o->jobs > 0 ? o->jobs : default_jobs();
    pp_sweep_queue q = {.sw = s, .o = o, .n = pp_sweep_size(s)};
    q.window = o->window > 0 ? o->window : 64 + 32 * jobs;
    q.total = count_selected(o, q.n);
    q.ring = calloc((size_t)q.window, sizeof *q.ring);
    if (!q.ring) return pp__fail(err, PP_ERR_NOMEM, "out of memory for a window of %d results", q.window);
    pthread_mutex_init(&q.mu, NULL);
    pthread_cond_init(&q.space, NULL);
    pthread_cond_init(&q.ready, NULL);
    team t = {&q, drive, user, PP_OK};
    run_team(&t, jobs);
    for (long long i = q.head; i < q.tail; i++) pp_free(q.ring[i % q.window].line);
    free(q.ring);
    pthread_cond_destroy(&q.ready);
    pthread_cond_destroy(&q.space);
    pthread_mutex_destroy(&q.mu);
    if (t.st == PP_ERR_NOMEM) pp__fail(err, PP_ERR_NOMEM, "out of memory running a scenario");
    return t.st;
}

/* ---- pp_sweep_run: the stream with a callback per line ---- */

typedef struct run_ctx {
    const pp_sweep_opts *o;
    int failed;
} run_ctx;

static pp_status run_drive(pp_sweep_queue *q, void *user)
{
    run_ctx *r = user;
    int index, got;
    char *line;
    pp_status st;
    while ((got = pp_sweep_queue_next(q, 1, &index, &line, &st)) == 1) {
        r->failed += st != PP_OK;
        int stop = r->o->emit ? r->o->emit(index, line, st, r->o->user) : 0;
        pp_free(line);
        if (r->o->progress) r->o->progress(pp_sweep_queue_done(q), pp_sweep_queue_total(q), r->o->user);
        if (stop) return PP_ERR_IO;
    }
    return got == -1 ? PP_OK : PP_ERR_NOMEM;
}

pp_status pp_sweep_run(const char *spec, size_t len, const char *where, const pp_sweep_opts *o, int *failed,
                       pp_error *err)
{
    PP__C_NUMERIC;
    pp_sweep *s;
    *failed = 0;
    pp_status st = pp_sweep_open(spec, len, where, &s, err);
    if (st != PP_OK) return st;
    run_ctx r = {o, 0};
    st = pp_sweep_stream(s, o, run_drive, &r, err);
    if (st == PP_ERR_IO) pp__fail(err, PP_ERR_IO, "%s: the sweep was stopped by its emit callback", where);
    *failed = r.failed;
    pp_sweep_close(s);
    return st;
}
