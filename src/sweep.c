/*
 * Running an experiment's product and writing its files. Nothing reaches
 * DIR until every configuration has run; every file is then written to a
 * temporary name and all are renamed into place only once all are
 * complete, so an error leaves the old results.
 */
#include "sweep.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <nettle/sha2.h>

#include "dist.h"
#include "out.h"
#include "pop.h"
#include "provenance.h"
#include "run.h"

int sweep_sha256_file(const char *path, char hex[65], bn_error *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return bn_fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    unsigned char buf[65536], dig[SHA256_DIGEST_SIZE];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
        sha256_update(&ctx, n, buf);
    int bad = ferror(fp);
    fclose(fp);
    if (bad)
        return bn_fail(err, "%s: read error", path);
    sha256_digest(&ctx, sizeof dig, dig);
    for (size_t i = 0; i < sizeof dig; i++)
        snprintf(hex + 2 * i, 3, "%02x", dig[i]);
    return 0;
}

static int mkdir_p(const char *dir, bn_error *err)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
        return bn_fail(err, "%s: path too long", dir);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return bn_fail(err, "%s: cannot create: %s", buf,
                               strerror(errno));
            *p = c;
            if (c == '\0')
                break;
        }
    }
    struct stat st;
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
        return bn_fail(err, "%s: not a directory", buf);
    return 0;
}

/* Work shared by the threads: each claims the next index and stores its
 * result at that index, so the output does not depend on scheduling. */
typedef struct {
    const exp_t *e;
    const run_pops *pops;
    size_t n;
    run_config *cfgs;
    run_result *res;
    int curve;   /* curve.tsv is written: each classifier run's rows */
    char **curve_rows; /* by index, made by the thread that ran it */
    pthread_mutex_t lock;
    size_t next, done;
    int failed;
    bn_error err;
    int progress;
    struct timespec start;
} sweep_work;

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* curve.tsv's rows of one run, formatted as its epochs end. */
typedef struct {
    const pop_t *pop;
    const run_config *cfg;
    FILE *fp;
} curve_ctx;

static void on_epoch(void *ctx, unsigned long epoch, const run_result *r)
{
    curve_ctx *c = ctx;
    out_curve_row(c->fp, c->pop, c->cfg, epoch + 1, r);
}

static void *worker(void *arg)
{
    sweep_work *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        size_t k = w->next++;
        int stop = w->failed || k >= w->n;
        pthread_mutex_unlock(&w->lock);
        if (stop)
            return NULL;
        bn_error err;
        curve_ctx cc = {w->pops->pop, &w->cfgs[k], NULL};
        size_t len;
        run_observer obs = {NULL, NULL, on_epoch, &cc, NULL};
        int want = w->curve && w->cfgs[k].model == RUN_MODEL_CLASSIFIER;
        if (want)
            cc.fp = open_memstream(&w->curve_rows[k], &len);
        int rc = want && !cc.fp
                     ? bn_fail(&err, "out of memory for curve.tsv's rows")
                     : run_execute_on(w->pops, &w->cfgs[k],
                                      want ? &obs : NULL, &w->res[k], &err);
        if (cc.fp && fclose(cc.fp) != 0 && rc == 0)
            rc = bn_fail(&err, "out of memory for curve.tsv's rows");
        pthread_mutex_lock(&w->lock);
        if (rc != 0 && !w->failed) {
            w->failed = 1;
            w->err = err;
        }
        w->done++;
        if (w->progress && seconds_since(&w->start) > 1.0)
            fprintf(stderr, "\rbnstudy sweep %s: %zu/%zu", w->e->stem,
                    w->done, w->n);
        pthread_mutex_unlock(&w->lock);
    }
}

static void write_manifest(FILE *fp, const exp_t *e, const sweep_options *o,
                           const char *sha, size_t n)
{
    const char *base = strrchr(e->source, '/');
    fprintf(fp, "key\tvalue\n");
    provenance_print(fp);
    fprintf(fp, "experiment_file\t%s\n", base ? base + 1 : e->source);
    fprintf(fp, "experiment_sha256\t%s\n", sha);
    for (size_t i = 0; i < o->n_sets; i++)
        fprintf(fp, "set\t%s\n", o->sets[i]);
    exp_manifest(fp, e);
    fprintf(fp, "population_id\t%s\n", e->pop_id);
    if (exp_held_out_models(e->models))
        fprintf(fp, "held_out_population_id\t%s\n", e->held_id);
    fprintf(fp, "configurations\t%zu\n", n);
}

int sweep_run(const exp_t *e, const sweep_options *opt, bn_error *err)
{
    char sha[65];
    if (sweep_sha256_file(e->source, sha, err) != 0)
        return -1;
    exp_pops pops;
    if (exp_populations(e, exp_held_out_models(e->models), &pops, err) !=
        0) {
        exp_pops_free(&pops);
        return -1;
    }
    const pop_t *pop = pops.p.pop;
    if (opt->on_population)
        opt->on_population(pop);
    size_t n = exp_count(e);
    sweep_work w;
    memset(&w, 0, sizeof w);
    w.e = e;
    w.pops = &pops.p;
    w.n = n;
    w.progress = opt->progress;
    w.curve = (e->outputs & (1u << OUT_CURVE)) &&
              (e->models & RUN_MODEL_BIT(RUN_MODEL_CLASSIFIER));
    w.cfgs = malloc(n * sizeof *w.cfgs);
    w.res = calloc(n, sizeof *w.res);
    w.curve_rows = calloc(n, sizeof *w.curve_rows);
    clock_gettime(CLOCK_MONOTONIC, &w.start);
    pthread_mutex_init(&w.lock, NULL);
    int rc = -1;
    out_file files[OUT_FILE_COUNT];
    memset(files, 0, sizeof files);
    if (!w.cfgs || !w.res || !w.curve_rows) {
        bn_fail(err, "out of memory for %zu configurations", n);
        goto done;
    }
    for (size_t k = 0; k < n; k++)
        exp_config(e, k, &w.cfgs[k]);

    unsigned jobs = opt->jobs > 1 ? opt->jobs : 1;
    if (jobs > 64)
        jobs = 64;
    pthread_t th[64];
    unsigned started = 0;
    for (; started + 1 < jobs; started++)
        if (pthread_create(&th[started], NULL, worker, &w) != 0)
            break;
    worker(&w);
    for (unsigned t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    if (w.progress && seconds_since(&w.start) > 1.0)
        fputc('\n', stderr);
    if (w.failed) {
        bn_fail(err, "%s", w.err.msg);
        goto done;
    }

    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/%s", opt->out_dir, e->stem);
    if (mkdir_p(dir, err) != 0)
        goto done;
    /* The files the experiment asks for; the many-seed ones only with many
     * seeds, and the reading table then shows each configuration once,
     * across its seeds. */
    int many = e->n[KEY_SEED] > 1;
    unsigned models = 0; /* bit m: some configuration trains model m */
    for (size_t k = 0; k < n; k++)
        models |= 1u << w.cfgs[k].model;
    FILE *fp[OUT_FILE_COUNT] = {NULL};
    for (int i = 0; i < OUT_FILE_COUNT; i++) {
        const out_file_def *d = out_file_get(i);
        if (!(e->outputs & (1u << i)) || (d->many_seeds && !many) ||
            (d->model >= 0 && !(models & (1u << d->model))))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, out_file_get(i)->file);
        if (out_check_not_input(opt->inputs, path, err) != 0 ||
            out_open(&files[i], path, err) != 0)
            goto done;
        fp[i] = files[i].fp;
    }
    out_column cols[EXP_MAX_COLUMNS];
    for (size_t c = 0; c < e->n_table; c++)
        out_column_find(e->table[c], &cols[c]);
    FILE *table_row = many ? NULL : fp[OUT_TABLE];
    if (fp[OUT_SUMMARY])
        out_summary_header(fp[OUT_SUMMARY], models);
    if (fp[OUT_FEATURES])
        out_features_header(fp[OUT_FEATURES], models);
    if (fp[OUT_CURVE])
        out_curve_header(fp[OUT_CURVE]);
    if (table_row)
        out_table_header(table_row, e->n_table, cols);
    for (size_t k = 0; k < n; k++) {
        if (fp[OUT_SUMMARY])
            out_summary_row(fp[OUT_SUMMARY], models, pop, &w.cfgs[k],
                            &w.res[k]);
        if (fp[OUT_FEATURES] && w.cfgs[k].model == RUN_MODEL_LAYER)
            out_features_rows(fp[OUT_FEATURES], models, pop, &w.cfgs[k],
                              &w.res[k]);
        if (table_row)
            out_table_row(table_row, e->n_table, cols, pop, &w.cfgs[k],
                          &w.res[k]);
        if (fp[OUT_CURVE] && w.curve_rows[k])
            fputs(w.curve_rows[k], fp[OUT_CURVE]);
    }
    if (fp[OUT_MANIFEST])
        write_manifest(fp[OUT_MANIFEST], e, opt, sha, n);
    if (many && (fp[OUT_DISTRIBUTION] || fp[OUT_EXPECTATION] ||
                 fp[OUT_TABLE]) &&
        dist_write(e, models, pop, w.cfgs, w.res, fp[OUT_DISTRIBUTION],
                   fp[OUT_EXPECTATION], fp[OUT_TABLE], err) != 0)
        goto done;
    if (out_commit_all(files, OUT_FILE_COUNT, err) != 0)
        goto done;
    rc = 0;
done:
    for (int i = 0; i < OUT_FILE_COUNT; i++)
        out_abort(&files[i]);
    pthread_mutex_destroy(&w.lock);
    for (size_t k = 0; w.res && k < n; k++)
        run_result_free(&w.res[k]);
    for (size_t k = 0; w.curve_rows && k < n; k++)
        free(w.curve_rows[k]);
    free(w.curve_rows);
    free(w.cfgs);
    free(w.res);
    exp_pops_free(&pops);
    return rc;
}
