/*
 * Running an experiment's product and writing its files. Threads claim
 * configurations in order and format their rows; whichever thread
 * completes the configuration next in order writes the rows that are
 * ready, so rows reach the files in configuration order. A thread may run
 * at most a window of configurations ahead of the writer, which bounds
 * the memory. Everything goes into the temporary directory of resultdir.h
 * and is swapped in only when every file is complete on disk.
 */
#include "io/sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/input.h"
#include "io/digest.h"
#include "study/dist.h"
#include "study/out.h"
#include "study/outfile.h"
#include "pop/pop.h"
#include "io/provenance.h"
#include "study/resultdir.h"
#include "model/run.h"
#include "model/trained.h"
#include "io/shard.h"

/* ---- the estimate ---- */

/* The files made from the summaries across seeds (dist.h). */
#define SUMMARIES                                                           \
    ((1u << OUT_DISTRIBUTION) | (1u << OUT_EXPECTATION) | (1u << OUT_TABLE))

/* The files besides summary.tsv whose rows a shard writes and a merge
 * reads back. */
#define SHARD_ROWS                                                          \
    ((1u << OUT_FEATURES) | (1u << OUT_CURVE) | (1u << OUT_EFFECTIVE))

/* Configurations a thread may run ahead of the writer: enough that it
 * keeps working while the writer summarises a group of seeds (sorting
 * each score's values at each batch size takes 5 to 6 ms at 1000 seeds
 * here, about 150 configurations of the default study, and a window of 4
 * a thread left the others waiting through it), within WINDOW_BYTES of
 * rows a thread and never fewer than WINDOW_MIN. */
#define WINDOW_MIN 4
#define WINDOW_MAX 256
#define WINDOW_BYTES ((size_t)4 << 20)
/* A file's rows are gathered up to this many bytes before a write. */
#define FLUSH_AT 65536

/* The text one configuration's rows take, generously: a summary row and
 * a table row of at most 1 KiB each, a features row and an effective row
 * per feature, and a curve.tsv row per epoch. */
static size_t slot_text_bytes(size_t f, size_t epochs)
{
    return (2 * f + 2 + epochs) * 1024;
}

void sweep_estimate_of(const exp_t *e, unsigned jobs, int files,
                       sweep_estimate *est)
{
    size_t n = exp_count(e), rows = exp_rows(e), f = exp_features(e);
    size_t k = exp_classes(e);
    int held = exp_held_out_models(e->models);
    memset(est, 0, sizeof *est);
    est->work = exp_work(e);
    /* A held-out model's rows are the population again, split or drawn
     * a second time. */
    est->population = (held ? 2.0 : 1.0) *
                      ((double)rows * (double)f * sizeof(double) +
                       sizeof(pop_t));
    /* A run's memory depends on the population, the model, the hidden
     * units and the batch size; configurations 0 .. nb - 1 are the batch
     * sizes (the fastest axis). */
    for (size_t it = 0; it < e->n[KEY_MODEL]; it++)
        for (size_t ih = 0; ih < e->n[KEY_HIDDEN]; ih++)
            for (size_t il = 0; il < e->n[KEY_LAYERS]; il++)
                for (size_t id = 0; id < e->n[KEY_DEPTH]; id++)
                    for (size_t ib = 0; ib < e->n[KEY_BATCH_SIZE]; ib++) {
                        run_config cfg;
                        exp_config(e, ib, &cfg);
                        cfg.model = (run_model_id)e->v[KEY_MODEL][it].i;
                        cfg.clf.hidden = (size_t)e->v[KEY_HIDDEN][ih].u;
                        cfg.clf.net = e->nets[e->v[KEY_LAYERS][il].i];
                        cfg.clf.depth = (size_t)e->v[KEY_DEPTH][id].u;
                        double b = (double)run_bytes(&cfg, rows, f, k) +
                                   sizeof(run_result);
                        est->per_thread =
                            b > est->per_thread ? b : est->per_thread;
                    }
    size_t curve_epochs = 0;
    if ((e->outputs & (1u << OUT_CURVE)) &&
        (e->models & RUN_MODEL_BIT(RUN_MODEL_CLASSIFIER)))
        for (size_t i = 0; i < e->n[KEY_EPOCHS]; i++)
            if (e->v[KEY_EPOCHS][i].u > curve_epochs)
                curve_epochs = (size_t)e->v[KEY_EPOCHS][i].u;
    est->threads = jobs < 1 ? 1 : (size_t)jobs > n ? (unsigned)n : jobs;
    size_t slot = slot_text_bytes(f, curve_epochs) + sizeof(run_config) +
                  sizeof(run_result);
    size_t per = WINDOW_BYTES / slot;
    per = per < WINDOW_MIN ? WINDOW_MIN : per > WINDOW_MAX ? WINDOW_MAX : per;
    est->window = est->threads * per;
    if (est->window > n)
        est->window = n ? n : 1;
    if (files)
        est->writing = (double)est->window * (double)slot +
                       2.0 * OUT_FILE_COUNT * FLUSH_AT +
                       (e->n[KEY_SEED] > 1 && (e->outputs & SUMMARIES)
                            ? (double)dist_bytes(e)
                            : 0.0);
    est->bytes = est->population + est->threads * est->per_thread +
                 est->writing;
}

int sweep_check_limits(const exp_t *e, const sweep_estimate *est,
                       const sweep_limits *lim, const char *what,
                       bn_error *err)
{
    int sweep = strcmp(what, "sweep") == 0;
    const char *src = sweep ? e->source : "";
    const char *sep = sweep ? ": " : "";
    if (est->work > lim->work) {
        double epochs =
            est->work / ((double)exp_rows(e) * (double)exp_features(e));
        int clf = (e->models & RUN_MODEL_BIT(RUN_MODEL_CLASSIFIER)) != 0;
        return bn_fail(err,
                       "%s%sthe %s would take %.3g row passes (%.0f epochs "
                       "over %zu configuration%s x %zu rows x %zu "
                       "features%s), more than the limit of %.3g; "
                       "--max-work raises it",
                       src, sep, what, est->work, epochs, exp_count(e),
                       exp_count(e) == 1 ? "" : "s", exp_rows(e),
                       exp_features(e),
                       clf ? ", a classifier's row counted as its "
                             "weights, hidden x (features + classes)"
                           : "",
                       lim->work);
    }
    if (est->bytes > lim->bytes) {
        char all[32], pop[32], run[32], writing[32], limit[32];
        return bn_fail(err,
                       "%s%sthe %s would hold about %s at once (the "
                       "population %s, %u thread%s x %s of run buffers, "
                       "%s for writing), more than the limit of %s; "
                       "--max-memory raises it",
                       src, sep, what, input_size_about(est->bytes, all),
                       input_size_about(est->population, pop), est->threads,
                       est->threads == 1 ? "" : "s",
                       input_size_about(est->per_thread, run),
                       input_size_about(est->writing, writing),
                       input_size_about(lim->bytes, limit));
    }
    return 0;
}

/* ---- the files ---- */

/* An output file: its descriptor in the temporary directory and the rows
 * gathered for it. */
typedef struct {
    int fd; /* -1: not written */
    int closed; /* written, synced and closed: no row may follow */
    bn_buf pending;
    char name[BN_PATH_MAX + RESULTDIR_MAX_FILE]; /* for messages */
} sink;

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        if (bn_fault_io() != 0)
            return -1;
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int sink_flush(sink *s, bn_error *err)
{
    if (s->pending.failed)
        return bn_fail(err, "%s: out of memory", s->name);
    if (s->pending.len && write_all(s->fd, s->pending.p, s->pending.len))
        return bn_fail(err, "%s: cannot write: %s", s->name,
                       strerror(errno));
    buf_clear(&s->pending);
    return 0;
}

static int sink_put(sink *s, const bn_buf *text, bn_error *err)
{
    /* Files close as soon as their last row is in, from another thread
     * than the writer's (close_rows): a row after that is a bug that
     * would lose it, so it stops the sweep instead. */
    if (s->closed)
        return bn_fail(err, "%s: a row after the file was closed (a "
                            "bnstudy bug)",
                       s->name);
    if (s->fd < 0)
        return 0;
    if (text->failed)
        return bn_fail(err, "%s: out of memory", s->name);
    buf_add(&s->pending, text->p, text->len);
    return s->pending.len >= FLUSH_AT ? sink_flush(s, err) : 0;
}

/* Everything on disk before the set is swapped in. */
static int sink_close(sink *s, bn_error *err)
{
    if (s->fd < 0)
        return 0;
    int rc = sink_flush(s, err);
    if (rc == 0 && (bn_fault_io() != 0 || fsync(s->fd) != 0))
        rc = bn_fail(err, "%s: cannot write: %s", s->name, strerror(errno));
    if (close(s->fd) != 0 && rc == 0)
        rc = bn_fail(err, "%s: cannot write: %s", s->name, strerror(errno));
    s->fd = -1;
    s->closed = 1;
    return rc;
}

static int sink_open(sink *s, const resultdir *rd, const char *file,
                     bn_error *err)
{
    char path[BN_PATH_MAX + RESULTDIR_MAX_FILE];
    snprintf(s->name, sizeof s->name, "%s/%s", rd->target, file);
    if (resultdir_path(rd, file, path, sizeof path, err) != 0)
        return -1;
    if (bn_fault_io() == 0)
        s->fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (s->fd < 0)
        return bn_fail(err, "%s: cannot write: %s", s->name,
                       strerror(errno));
    return 0;
}

/* ---- the window ---- */

/* A shard's digests of its rows (shard.h): for each file of rows, the
 * SHA-256 of each block of configurations' rows, of the very bytes handed
 * to the file, for the manifest to record and the merge to hold the rows
 * to. */
typedef struct {
    size_t block;        /* configurations a block; 0: not a shard */
    digest_sha256 sha[OUT_FILE_COUNT];
    char hex[OUT_FILE_COUNT][SHARD_BLOCKS][65];
    size_t n;            /* blocks done */
} row_digests;

enum { SLOT_FREE, SLOT_RUNNING, SLOT_DONE };
enum {
    TEXT_SUMMARY, TEXT_FEATURES, TEXT_TABLE, TEXT_CURVE, TEXT_EFFECTIVE,
    TEXTS
};

typedef struct {
    int state;
    run_config cfg;
    run_result res;
    bn_buf text[TEXTS];
} slot;

typedef struct {
    const exp_t *e;
    const pop_t *pop;      /* every row */
    const run_pops *pops; /* and the held-out models' rows */
    size_t n;        /* configurations this sweep writes */
    size_t first, stride; /* the j-th of them is first + j x stride */
    unsigned models;
    unsigned wanted; /* the files to write, bit out_file_id */
    int many; /* many seeds: the table comes from dist */
    shard_set *shards; /* a merge's, or NULL */
    row_digests digests; /* a shard's */
    exp_column cols[EXP_MAX_COLUMNS];
    sink files[OUT_FILE_COUNT];
    dist_acc *dist;
    bn_buf dist_text[3]; /* distribution, expectation, table */
    slot *slots;
    size_t window;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* The classifier's trainings, kept when configurations differ only in
     * [evaluation] (trained.h), under a lock of their own. */
    trained_cache *trained;
    pthread_mutex_t trained_lock;
    size_t next;    /* the next configuration to claim */
    size_t written; /* configurations written */
    int writing;    /* a thread is writing */
    int rows_done;  /* every configuration's rows are in their files */
    int closer;     /* a thread has taken the closing of those files */
    int failed;
    bn_error err;
    int progress, shown;
    struct timespec start;
    double last;
} sweep_work;

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) +
           1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* Progress on stderr once the sweep has run two seconds, twice a second
 * at most; only the writer calls it. */
static void progress(sweep_work *w, size_t done)
{
    if (!w->progress)
        return;
    double t = seconds_since(&w->start);
    if (t < 2.0 || (t - w->last < 0.5 && done < w->n))
        return;
    w->last = t;
    double rate = (double)done / t;
    fprintf(stderr,
            "\rbnstudy sweep %s: %zu/%zu configurations, %.0f/s, %.0f s "
            "left ",
            w->e->stem, done, w->n, rate, (double)(w->n - done) / rate);
    w->shown = 1;
}

/* Record the first failure and wake everyone to stop. Lock held. */
static void fail_locked(sweep_work *w, const bn_error *err)
{
    if (!w->failed) {
        w->failed = 1;
        w->err = *err;
    }
    pthread_cond_broadcast(&w->cond);
}

/* A configuration's rows, made by the thread that ran it. */
static int format_rows(sweep_work *w, slot *s, bn_error *err)
{
    for (int t = 0; t < TEXTS; t++)
        if (t != TEXT_CURVE) /* made as the run's epochs ended */
            buf_clear(&s->text[t]);
    if (w->files[OUT_SUMMARY].fd >= 0)
        out_summary_row(&s->text[TEXT_SUMMARY], w->models, w->pop, &s->cfg,
                        &s->res);
    if (w->files[OUT_FEATURES].fd >= 0 && s->cfg.model == RUN_MODEL_LAYER)
        out_features_rows(&s->text[TEXT_FEATURES], w->models, w->pop,
                          &s->cfg, &s->res);
    if (w->files[OUT_EFFECTIVE].fd >= 0 && s->cfg.model == RUN_MODEL_LAYER)
        out_effective_rows(&s->text[TEXT_EFFECTIVE], w->models, w->pop,
                           &s->cfg, &s->res);
    if (w->files[OUT_TABLE].fd >= 0 && !w->many)
        out_table_row(&s->text[TEXT_TABLE], w->e->n_table, w->cols, w->pop,
                      &s->cfg, &s->res);
    for (int t = 0; t < TEXTS; t++)
        if (s->text[t].failed)
            return bn_fail(err, "out of memory for the rows of a "
                                "configuration");
    return 0;
}

/* The files made across seeds, once a group's last seed is in, in the
 * order dist_add fills them; the others take rows configuration by
 * configuration. */
static const int seed_files[3] = {OUT_DISTRIBUTION, OUT_EXPECTATION,
                                  OUT_TABLE};

static int across_seeds(const sweep_work *w, int file)
{
    for (int i = 0; w->dist && i < 3; i++)
        if (file == seed_files[i])
            return 1;
    return 0;
}

/* The files whose rows a shard's manifest records digests of, and the
 * text of a configuration's rows of each. */
static const struct {
    int file, text;
} digested[] = {
    {.file = OUT_SUMMARY, .text = TEXT_SUMMARY},
    {.file = OUT_FEATURES, .text = TEXT_FEATURES},
    {.file = OUT_CURVE, .text = TEXT_CURVE},
    {.file = OUT_EFFECTIVE, .text = TEXT_EFFECTIVE},
};
#define N_DIGESTED (sizeof digested / sizeof *digested)

/* The k-th configuration's rows of a shard into their files' digests,
 * and a block's digests taken once its last configuration is in. */
static void digest_rows(sweep_work *w, size_t k, const slot *s)
{
    row_digests *d = &w->digests;
    for (size_t i = 0; i < N_DIGESTED; i++) {
        const bn_buf *t = &s->text[digested[i].text];
        if (w->files[digested[i].file].fd >= 0 && t->len)
            digest_add(&d->sha[i], t->p, t->len);
    }
    if ((k + 1) % d->block != 0 && k + 1 != w->n)
        return;
    for (size_t i = 0; i < N_DIGESTED; i++)
        digest_end(&d->sha[i], d->hex[i][d->n]);
    d->n++;
}

/* A shard's digest lines, for its manifest. */
static void digest_lines(const sweep_work *w, bn_buf *b)
{
    const row_digests *d = &w->digests;
    for (size_t i = 0; i < N_DIGESTED; i++) {
        if (w->files[digested[i].file].fd < 0)
            continue;
        for (size_t j = 0; j < d->n; j++) {
            size_t lo = j * d->block, hi = (j + 1) * d->block;
            hi = (hi < w->n ? hi : w->n) - 1;
            buf_printf(b, "%s\t%s %zu %zu %s\n", SHARD_DIGEST_KEY,
                       out_file_get(digested[i].file)->file,
                       w->first + lo * w->stride, w->first + hi * w->stride,
                       d->hex[i][j]);
        }
    }
}

/* Configuration k's rows into the files that take a row per
 * configuration. Called in configuration order. */
static int put_rows(sweep_work *w, size_t k, slot *s, bn_error *err)
{
    if (sink_put(&w->files[OUT_SUMMARY], &s->text[TEXT_SUMMARY], err) ||
        sink_put(&w->files[OUT_FEATURES], &s->text[TEXT_FEATURES], err) ||
        sink_put(&w->files[OUT_CURVE], &s->text[TEXT_CURVE], err) ||
        sink_put(&w->files[OUT_EFFECTIVE], &s->text[TEXT_EFFECTIVE], err) ||
        (!w->many &&
         sink_put(&w->files[OUT_TABLE], &s->text[TEXT_TABLE], err)))
        return -1;
    if (w->digests.block)
        digest_rows(w, k, s);
    return 0;
}

/* Configuration k into the summaries across seeds, and a group's rows
 * into their files once its last seed is in. Called in configuration
 * order, after put_rows. */
static int put_summaries(sweep_work *w, size_t k, slot *s, bn_error *err)
{
    if (!w->dist)
        return 0;
    bn_buf *b[3];
    for (int i = 0; i < 3; i++) {
        buf_clear(&w->dist_text[i]);
        b[i] = w->files[seed_files[i]].fd >= 0 ? &w->dist_text[i] : NULL;
    }
    if (dist_add(w->dist, k, &s->cfg, &s->res, b[0], b[1], b[2], err) != 0)
        return -1;
    for (int i = 0; i < 3; i++)
        if (sink_put(&w->files[seed_files[i]], &w->dist_text[i], err))
            return -1;
    return 0;
}

static int write_rows(sweep_work *w, size_t k, slot *s, bn_error *err)
{
    return put_rows(w, k, s, err) || put_summaries(w, k, s, err) ? -1 : 0;
}

/* Every file but those made across seeds, written and synced; a shard's
 * manifest ends with its rows' digests, now that the rows are all in. */
static int close_rows(sweep_work *w, bn_error *err)
{
    if (w->digests.block) {
        bn_buf b = {0};
        digest_lines(w, &b);
        int rc = sink_put(&w->files[OUT_MANIFEST], &b, err);
        buf_free(&b);
        if (rc != 0)
            return -1;
    }
    for (int i = 0; i < OUT_FILE_COUNT; i++)
        if (!across_seeds(w, i) && sink_close(&w->files[i], err) != 0)
            return -1;
    return 0;
}

/* Write every configuration that is done, in order, from the first not
 * yet written. Lock held on entry and exit, released while writing. */
static void drain(sweep_work *w)
{
    w->writing = 1;
    while (!w->failed && w->written < w->n) {
        slot *s = &w->slots[w->written % w->window];
        if (s->state != SLOT_DONE)
            break;
        size_t k = w->written;
        pthread_mutex_unlock(&w->lock);
        bn_error err;
        int rc = put_rows(w, k, s, &err);
        if (rc == 0 && k + 1 == w->n) {
            /* The last rows are in: a thread out of work may close their
             * files while this one summarises the last group of seeds. */
            pthread_mutex_lock(&w->lock);
            w->rows_done = 1;
            pthread_cond_broadcast(&w->cond);
            pthread_mutex_unlock(&w->lock);
        }
        if (rc == 0)
            rc = put_summaries(w, k, s, &err);
        if (rc == 0)
            progress(w, k + 1);
        pthread_mutex_lock(&w->lock);
        if (rc != 0) {
            fail_locked(w, &err);
            break;
        }
        s->state = SLOT_FREE;
        w->written++;
        pthread_cond_broadcast(&w->cond);
    }
    w->writing = 0;
}

/* curve.tsv's rows of one run. */
typedef struct {
    const pop_t *pop;
    const run_config *cfg;
    bn_buf *rows;
    unsigned models;
} curve_ctx;

static void on_epoch(void *ctx, unsigned long epoch, const run_result *r)
{
    curve_ctx *c = ctx;
    out_curve_row(c->rows, c->models, c->pop, c->cfg, epoch + 1, r);
}

static void *worker(void *arg)
{
    sweep_work *w = arg;
    bn_error err, sub;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->failed && w->next < w->n &&
               w->next >= w->written + w->window)
            pthread_cond_wait(&w->cond, &w->lock);
        if (w->failed || w->next >= w->n)
            break;
        size_t k = w->next++;
        slot *s = &w->slots[k % w->window];
        s->state = SLOT_RUNNING;
        pthread_mutex_unlock(&w->lock);
        int blame[2] = {-1, -1}, rc;
        run_result_free(&s->res); /* the configuration written before */
        exp_config(w->e, w->first + k * w->stride, &s->cfg);
        /* A classifier's curve.tsv rows, formatted as its epochs end. */
        buf_clear(&s->text[TEXT_CURVE]);
        curve_ctx cc = {w->pop, &s->cfg, &s->text[TEXT_CURVE], w->models};
        run_observer obs = {NULL, NULL, on_epoch, &cc, NULL, w->trained};
        int curve = w->files[OUT_CURVE].fd >= 0 &&
                    s->cfg.model == RUN_MODEL_CLASSIFIER;
        rc = run_execute_blamed(w->pops, &s->cfg, curve ? &obs : NULL,
                                &s->res, blame, &sub);
        if (rc != 0)
            exp_blame(w->e, &s->cfg, blame, sub.msg, &err);
        else
            rc = format_rows(w, s, &err);
        pthread_mutex_lock(&w->lock);
        if (rc != 0) {
            fail_locked(w, &err);
            break;
        }
        s->state = SLOT_DONE;
        if (!w->writing)
            drain(w);
    }
    /* The first thread out of configurations closes (and syncs) the files
     * that take a row per configuration once the last row is in, while
     * the writer may still be summarising the last group of seeds: a few
     * milliseconds each that would otherwise follow one another. */
    if (!w->failed && !w->closer) {
        w->closer = 1;
        while (!w->failed && !w->rows_done)
            pthread_cond_wait(&w->cond, &w->lock);
        if (!w->failed) {
            pthread_mutex_unlock(&w->lock);
            int rc = close_rows(w, &err);
            pthread_mutex_lock(&w->lock);
            if (rc != 0)
                fail_locked(w, &err);
        }
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* A merge: every configuration in order from its shard, through the
 * writers a sweep's runs go through. */
static int merge_rows(sweep_work *w, bn_error *err)
{
    slot *s = &w->slots[0];
    for (size_t k = 0; k < w->n; k++) {
        run_result_free(&s->res);
        exp_config(w->e, k, &s->cfg);
        buf_clear(&s->text[TEXT_CURVE]);
        if (shard_next(w->shards, k, w->pop, &s->cfg, &s->res,
                       &s->text[TEXT_CURVE], err) != 0 ||
            format_rows(w, s, err) != 0 || write_rows(w, k, s, err) != 0)
            return -1;
        progress(w, k + 1);
    }
    return shard_finish(w->shards, err);
}

/* ---- the sweep ---- */

static void manifest(bn_buf *b, const exp_t *e, const sweep_options *o,
                     size_t n)
{
    char sha[65];
    const char *base = strrchr(e->source, '/');
    size_t n_rows;
    const provenance_row *rows = provenance_rows(&n_rows);
    digest_sha256_hex((const unsigned char *)(e->text ? e->text : ""),
                      e->text_len, sha);
    buf_puts(b, "key\tvalue\n");
    for (size_t i = 0; i < n_rows; i++)
        buf_printf(b, "%s\t%s\n", rows[i].key, rows[i].value);
    buf_printf(b, "experiment_file\t%s\n", base ? base + 1 : e->source);
    buf_printf(b, "experiment_sha256\t%s\n", sha);
    for (size_t i = 0; i < o->n_sets; i++)
        buf_printf(b, "set\t%s\n", o->sets[i]);
    exp_manifest(b, e);
    buf_printf(b, "population_id\t%s\n", e->pop_id);
    if (exp_held_out_models(e->models)) {
        buf_printf(b, "held_out_population_id\t%s\n", e->held_id);
        buf_printf(b, "train_rows\t%zu\nheld_out_rows\t%zu\n",
                   e->train_rows, e->held_rows);
    }
    buf_printf(b, "configurations\t%zu\n", n);
    if (o->shards)
        buf_printf(b, "shard\t%u/%u\n", o->shard, o->shards);
}

/* Whether the sweep writes file i: wanted, and with rows to hold. */
static int writes(const sweep_work *w, int i)
{
    const out_file_def *d = out_file_get(i);
    return (w->wanted & (1u << i)) && (!d->many_seeds || w->many) &&
           (d->model < 0 || (w->models & (1u << d->model)));
}

/* Open the wanted files and put their first lines in. */
static int open_files(sweep_work *w, const resultdir *rd,
                      const sweep_options *opt, bn_error *err)
{
    const exp_t *e = w->e;
    for (int i = 0; i < OUT_FILE_COUNT; i++) {
        if (!writes(w, i))
            continue;
        if (sink_open(&w->files[i], rd, out_file_get(i)->file, err) != 0)
            return -1;
    }
    bn_buf head[OUT_FILE_COUNT];
    memset(head, 0, sizeof head);
    for (int i = 0; i < OUT_FILE_COUNT; i++)
        if (w->files[i].fd >= 0)
            out_rows_header(&head[i], i, w->models);
    if (w->files[OUT_MANIFEST].fd >= 0)
        manifest(&head[OUT_MANIFEST], e, opt, exp_count(e));
    if (w->dist) {
        dist_headers(w->dist,
                     w->files[OUT_DISTRIBUTION].fd >= 0
                         ? &head[OUT_DISTRIBUTION] : NULL,
                     w->files[OUT_EXPECTATION].fd >= 0
                         ? &head[OUT_EXPECTATION] : NULL,
                     w->files[OUT_TABLE].fd >= 0 ? &head[OUT_TABLE] : NULL);
    } else if (w->files[OUT_TABLE].fd >= 0) {
        out_table_header(&head[OUT_TABLE], e->n_table, w->cols);
    }
    int rc = 0;
    for (int i = 0; i < OUT_FILE_COUNT; i++) {
        if (rc == 0)
            rc = sink_put(&w->files[i], &head[i], err);
        buf_free(&head[i]);
    }
    return rc;
}

/* What the kept trainings may take: a few MiB for the study's largest
 * (30 epochs of a small network, a configuration per estimator and
 * freeze), a bound for any other. */
#define TRAINED_BYTES ((size_t)64 << 20)

static void trained_lock(void *m) { pthread_mutex_lock(m); }
static void trained_unlock(void *m) { pthread_mutex_unlock(m); }

/* The sweep's state before anything runs: the configurations it makes
 * (a shard's every opt->shards-th, and only the rows merge reads back
 * and the manifest that names the shard: what is made across
 * configurations is the merge's), the files it writes, and stem, the
 * result set's name (cap bytes). */
static void work_init(sweep_work *w, const exp_t *e, const sweep_options *opt,
                      const sweep_estimate *est, char *stem, size_t cap)
{
    memset(w, 0, sizeof *w);
    w->e = e;
    w->n = exp_count(e);
    w->stride = 1;
    w->models = e->models;
    w->many = e->n[KEY_SEED] > 1;
    w->wanted = e->outputs;
    snprintf(stem, cap, "%s", e->stem);
    if (opt->shards) {
        w->first = opt->shard - 1;
        w->stride = opt->shards;
        w->n = w->n > w->first ? (w->n - w->first - 1) / w->stride + 1 : 0;
        w->wanted = (e->outputs & SHARD_ROWS) | (1u << OUT_SUMMARY) |
                    (1u << OUT_MANIFEST);
        w->many = 0;
        snprintf(stem, cap, "%s.shard-%u-of-%u", e->stem, opt->shard,
                 opt->shards);
        w->digests.block = shard_block_size(w->n);
        for (size_t i = 0; i < N_DIGESTED; i++)
            digest_begin(&w->digests.sha[i]);
    }
    w->rows_done = w->n == 0; /* a shard past the last configuration */
    w->progress = opt->progress;
    w->window = est->window;
    for (int i = 0; i < OUT_FILE_COUNT; i++)
        w->files[i].fd = -1;
    for (size_t c = 0; c < e->n_table; c++)
        exp_column_find(e->table[c], &w->cols[c]);
    clock_gettime(CLOCK_MONOTONIC, &w->start);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    pthread_mutex_init(&w->trained_lock, NULL);
    /* The kept trainings are no part of the estimate: they take only what
     * --max-memory leaves beside it, so the limit holds either way. */
    size_t spare = opt->limits.bytes > est->bytes
                       ? (size_t)(opt->limits.bytes - est->bytes) : 0;
    if ((e->models & (1u << RUN_MODEL_CLASSIFIER)) &&
        (e->n[KEY_EVAL_SHIFT] > 1 || e->n[KEY_EVAL_SCALE] > 1 ||
         e->n[KEY_EVAL_OFFSET] > 1) && spare > 0)
        w->trained = trained_new(spare < TRAINED_BYTES ? spare : TRAINED_BYTES,
                                 trained_lock, trained_unlock,
                                 &w->trained_lock);
}

/* A merge's shards, opened and checked against the experiment before
 * anything is made: which shards belong is settled first. */
static int open_shards(sweep_work *w, const sweep_options *opt,
                       bn_error *err)
{
    bn_buf want = {0};
    manifest(&want, w->e, opt, exp_count(w->e));
    unsigned rows = 0;
    for (int i = 0; i < OUT_FILE_COUNT; i++)
        if ((SHARD_ROWS >> i & 1) && writes(w, i))
            rows |= 1u << i;
    int rc = want.failed ? bn_fail(err, "out of memory")
                         : shard_open(&w->shards, opt->merge, opt->n_merge,
                                      &want, rows, w->models, err);
    buf_free(&want);
    return rc;
}

/* The rows, from the shards or run on threads (this one among them). */
static void make_rows(sweep_work *w, unsigned threads)
{
    if (w->shards) {
        if (merge_rows(w, &w->err) != 0)
            w->failed = 1;
        return;
    }
    pthread_t th[64];
    unsigned started = 0;
    for (; started + 1 < threads; started++)
        if (pthread_create(&th[started], NULL, worker, w) != 0)
            break;
    worker(w);
    for (unsigned t = 0; t < started; t++)
        pthread_join(th[t], NULL);
}

static void work_free(sweep_work *w)
{
    for (int i = 0; i < OUT_FILE_COUNT; i++) {
        if (w->files[i].fd >= 0)
            close(w->files[i].fd);
        buf_free(&w->files[i].pending);
    }
    for (size_t i = 0; w->slots && i < w->window; i++) {
        run_result_free(&w->slots[i].res);
        for (int t = 0; t < TEXTS; t++)
            buf_free(&w->slots[i].text[t]);
    }
    for (int i = 0; i < 3; i++)
        buf_free(&w->dist_text[i]);
    free(w->slots);
    dist_free(w->dist);
    shard_close(w->shards);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    trained_free(w->trained);
    pthread_mutex_destroy(&w->trained_lock);
}

/* The populations, the window's slots, the many-seed summaries (held
 * only for the files that show them) and the files, opened. */
static int work_begin(sweep_work *w, const resultdir *rd, exp_pops *pops,
                      const sweep_options *opt, bn_error *err)
{
    const exp_t *e = w->e;
    if (exp_populations(e, exp_held_out_models(e->models), pops, err) != 0)
        return -1;
    w->pop = pops->p.pop;
    w->pops = &pops->p;
    if (opt->on_population)
        opt->on_population(w->pop);
    int summaries = w->many && (w->wanted & SUMMARIES);
    w->slots = calloc(w->window, sizeof *w->slots);
    if (!w->slots || (summaries && !(w->dist = dist_new(e, w->models, w->pop))))
        return bn_fail(err, "out of memory");
    return open_files(w, rd, opt, err);
}

int sweep_run(const exp_t *e, const sweep_options *opt, bn_error *err)
{
    unsigned jobs = opt->jobs < 1 ? 1 : opt->jobs > 64 ? 64 : opt->jobs;
    sweep_estimate est;
    sweep_estimate_of(e, opt->n_merge ? 1 : jobs, 1, &est);
    if (opt->shards)
        est.work /= opt->shards;
    if (opt->n_merge)
        est.work = 0; /* nothing runs */
    if (sweep_check_limits(e, &est, &opt->limits, "sweep", err) != 0)
        return -1;

    sweep_work w;
    char stem[sizeof e->stem + 32];
    work_init(&w, e, opt, &est, stem, sizeof stem);
    resultdir rd;
    exp_pops pops;
    memset(&pops, 0, sizeof pops);
    int rc = -1, begun = 0;
    if (strlen(stem) >= sizeof rd.stem) {
        bn_fail(err, "%s: the shard's directory name %s is longer than "
                     "%zu bytes; a shorter file name makes it fit",
                e->source, stem, sizeof rd.stem - 1);
        goto done;
    }
    if (opt->n_merge && open_shards(&w, opt, err) != 0)
        goto done;
    if (resultdir_begin(&rd, opt->out_dir, stem, opt->inputs, err) != 0)
        goto done;
    begun = 1;
    if (work_begin(&w, &rd, &pops, opt, err) != 0)
        goto done;
    make_rows(&w, est.threads);
    if (w.shown)
        fputs("\r\033[K", stderr);
    if (w.failed) {
        *err = w.err;
        goto done;
    }
    for (int i = 0; i < OUT_FILE_COUNT; i++)
        if (sink_close(&w.files[i], err) != 0)
            goto done;
    if (resultdir_commit(&rd, err) != 0)
        goto done;
    rc = 0;
done:
    /* The files closed before the set they were in is removed. */
    for (int i = 0; i < OUT_FILE_COUNT; i++)
        if (w.files[i].fd >= 0) {
            close(w.files[i].fd);
            w.files[i].fd = -1;
        }
    if (rc != 0 && begun)
        resultdir_abort(&rd);
    work_free(&w);
    exp_pops_free(&pops);
    return rc;
}
