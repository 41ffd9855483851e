/*
 * `bnstudy diagnose`: why a batch-norm layer's running statistics disagree
 * with the activations they should describe, feature by feature, in words
 * (diag.h, docs/diagnose.md). Two inputs:
 *
 *   a run     the options of `run` (a population, generated or --population
 *             FILE, and the layer's settings): the layer trains on the rows
 *             in the configured order and the result is diagnosed;
 *   a layer   the running statistics of a real checkpoint (--stats) and the
 *             activations it saw (--activations), in batches (--batches or
 *             --batch-size), with its settings (--layer, or the options);
 *             --dump PREFIX names the four files dump_bn_inputs.py writes.
 *             bnstudy's layer replays the batches from the initial values,
 *             so the report also says whether the checkpoint's statistics
 *             are what these activations give.
 *
 * A table for people on stdout, or with --tsv one row per feature.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/diag.h"
#include "study/exp.h"
#include "model/order.h"
#include "pop/popfile.h"
#include "model/run.h"
#include "base/input.h"
#include "base/tsv.h"

enum {
    OPT_HELP = 'h',
    OPT_TSV = 1000,
    OPT_DUMP,
    OPT_STATS,
    OPT_ACTIVATIONS,
    OPT_BATCHES,
    OPT_LAYER,
    OPT_MAX_MEMORY
};

static void usage(void)
{
    fputs("usage: bnstudy diagnose [RUN OPTIONS] [--tsv]\n"
          "       bnstudy diagnose --dump PREFIX [--tsv]\n"
          "       bnstudy diagnose --stats FILE --activations FILE\n"
          "                        [--batches FILE | --batch-size B]\n"
          "                        [--layer FILE | --momentum M "
          "--momentum-weights W\n"
          "                         --variance V --estimator E --eps E] "
          "[--tsv]\n"
          "\n"
          "Say, feature by feature, how far a batch-norm layer's running "
          "statistics\n"
          "are from the activations they should describe, and why "
          "(docs/diagnose.md):\n"
          "the statistics against the activations' own, the updates seen, "
          "the weight\n"
          "the initial values keep, and the likely cause in words.\n"
          "\n"
          "With the options of `bnstudy run` (a population and the layer's "
          "settings),\n"
          "the layer trains on the rows in that order and is diagnosed. "
          "With a\n"
          "checkpoint's statistics and the activations it saw, bnstudy's "
          "layer also\n"
          "replays the batches from the initial values and says whether it "
          "reproduces\n"
          "the checkpoint (scripts/dump_bn_inputs.py writes every file).\n"
          "\n",
          stdout);
    cli_key_help(stdout);
    cli_pop_help(stdout);
    fputs("  --dump PREFIX          PREFIX.stats.tsv, PREFIX.npy, "
          "PREFIX.batches.tsv\n"
          "                         and PREFIX.layer.tsv, as "
          "dump_bn_inputs.py names them\n"
          "  --stats FILE           per feature: running_mean, running_var, "
          "num_batches_tracked\n"
          "                         (and initial_mean, initial_var, "
          "initial_batches_tracked)\n"
          "  --activations FILE     the rows the layer saw, in order (.npy, "
          "CSV or TSV)\n"
          "  --batches FILE         the rows of each batch (columns "
          "first_row, rows)\n"
          "  --layer FILE           momentum (PyTorch's, or None) and eps, "
          "as key, value\n"
          "  --tsv                  one TSV row per feature instead of the "
          "table\n"
          CLI_MAX_MEMORY_HELP
          "  -h, --help             this text\n",
          stdout);
}

/* ------------------------------------------------------- what is read */

/* Everything diag_run and the report need, from either input. */
typedef struct {
    size_t n, f;
    double *x;           /* n x f, rows in arrival order */
    char **names;        /* f, borrowed */
    double *rm, *rv;     /* the statistics diagnosed */
    double *m0, *v0;     /* their initial values */
    double *replay_m, *replay_v; /* bnstudy's layer on the batches */
    size_t *batch_rows, n_batches, batch;
    size_t updates;
    double p, eps;
    int checkpoint;      /* 1: the statistics came from --stats */
    bn_buf what;         /* one line on what was diagnosed: it names
                          * files, so it has the length they need */
} subject;

static void subject_free(subject *s)
{
    free(s->x);
    free(s->rm);
    free(s->m0);
    free(s->replay_m);
    free(s->batch_rows);
    buf_free(&s->what);
    memset(s, 0, sizeof *s);
}

/* Room for f features' five arrays of statistics. */
static int alloc_stats(subject *s, size_t f)
{
    s->f = f;
    s->rm = malloc(2 * f * sizeof *s->rm);
    s->m0 = malloc(2 * f * sizeof *s->m0);
    s->replay_m = malloc(2 * f * sizeof *s->replay_m);
    if (!s->rm || !s->m0 || !s->replay_m)
        return -1;
    s->rv = s->rm + f;
    s->v0 = s->m0 + f;
    s->replay_v = s->replay_m + f;
    return 0;
}

/* The new value's weight diag needs: p for ema; for the other estimators
 * the initial values keep no weight (1). */
static double init_p(const bn_config *c)
{
    return c->estimator == BN_EST_EMA ? c->p : 1.0;
}

/* A run: train cfg on the population and keep its order's rows. */
static int from_run(const exp_t *e, const pop_t *pop, const run_config *cfg,
                    subject *s, bn_error *err)
{
    memset(s, 0, sizeof *s);
    size_t n = pop->n, f = pop->f;
    size_t *perm = malloc(n * sizeof *perm);
    s->x = malloc(n * f * sizeof *s->x);
    if (!perm || !s->x || alloc_stats(s, f) != 0) {
        free(perm);
        return bn_fail(err, "out of memory");
    }
    s->n = n;
    s->names = pop->names;
    order_spec ord = cfg->order;
    ord.batch_size = cfg->batch_size;
    run_result res;
    int rc = order_make(&ord, pop, cfg->seed, perm, err);
    if (rc == 0)
        rc = run_execute(pop, cfg, NULL, &res, err);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            memcpy(&s->x[i * f], &pop->x[perm[i] * f], f * sizeof *s->x);
        memcpy(s->rm, res.running_mean, f * sizeof *s->rm);
        memcpy(s->rv, res.running_var, f * sizeof *s->rv);
        /* The run is its own replay. */
        memcpy(s->replay_m, res.running_mean, f * sizeof *s->rm);
        memcpy(s->replay_v, res.running_var, f * sizeof *s->rv);
        for (size_t j = 0; j < f; j++)
            s->m0[j] = 0.0, s->v0[j] = 1.0;
        s->updates = res.updates;
        run_result_free(&res);
    }
    free(perm);
    s->batch = cfg->batch_size;
    s->p = init_p(&cfg->layer);
    s->eps = cfg->layer.eps;
    buf_printf(&s->what,
             "%s: %zu rows x %zu features, order %s (seed %llu), batch "
             "size %zu, %lu epoch%s, momentum %g (%s), estimator %s, eps %g",
             e->popfile.file ? e->popfile.file : "the embedded population",
             n, f, cfg->order.name, (unsigned long long)cfg->seed,
             cfg->batch_size, cfg->epochs, cfg->epochs == 1 ? "" : "s",
             cfg->layer.momentum, bn_weights_name((int)cfg->layer.weights),
             bn_estimator_name(cfg->layer.estimator), cfg->layer.eps);
    if (rc == 0 && s->what.failed)
        return bn_fail(err, "out of memory");
    return rc;
}

/* A cell of a TSV that must be a finite number. */
static int tsv_number(const tsv_table *t, const char *path, size_t row,
                      int col, double *out, bn_error *err)
{
    const char *cell = tsv_cell(t, row, (size_t)col);
    char *end;
    double v = strtod(cell, &end);
    if (end == cell || *end || !isfinite(v))
        return bn_fail(err, "%s:%zu: column %s: '%s' is not a finite number",
                       path, row + 2, t->names[col], cell);
    *out = v;
    return 0;
}

static int tsv_count(const tsv_table *t, const char *path, size_t row,
                     int col, size_t *out, bn_error *err)
{
    double v;
    if (tsv_number(t, path, row, col, &v, err) != 0)
        return -1;
    if (v < 0 || v != floor(v) || v > 1e15)
        return bn_fail(err, "%s:%zu: column %s: '%s' is not a count", path,
                       row + 2, t->names[col], tsv_cell(t, row, (size_t)col));
    *out = (size_t)v;
    return 0;
}

static int need_column(const tsv_table *t, const char *path,
                       const char *name, int *col, bn_error *err)
{
    *col = tsv_column(t, name);
    if (*col < 0)
        return bn_fail(err, "%s: no column '%s'", path, name);
    return 0;
}

/* The statistics file: per feature (row), the running statistics, the
 * batches tracked, and optionally the values they started from. */
static int read_stats(const char *path, subject *s, size_t *t0,
                      bn_error *err)
{
    tsv_table t;
    if (tsv_read(path, &t, err) != 0)
        return -1;
    int c_rm, c_rv, c_nbt;
    int c_m0 = tsv_column(&t, "initial_mean");
    int c_v0 = tsv_column(&t, "initial_var");
    int c_t0 = tsv_column(&t, "initial_batches_tracked");
    int rc = -1;
    if (need_column(&t, path, "running_mean", &c_rm, err) != 0 ||
        need_column(&t, path, "running_var", &c_rv, err) != 0 ||
        need_column(&t, path, "num_batches_tracked", &c_nbt, err) != 0)
        goto done;
    if (t.nrow < 1) {
        bn_fail(err, "%s: no features", path);
        goto done;
    }
    if (alloc_stats(s, t.nrow) != 0) {
        bn_fail(err, "out of memory");
        goto done;
    }
    size_t nbt = 0;
    *t0 = 0;
    for (size_t j = 0; j < t.nrow; j++) {
        size_t nbt_j = 0, t0_j = 0;
        s->m0[j] = 0.0;
        s->v0[j] = 1.0;
        if (tsv_number(&t, path, j, c_rm, &s->rm[j], err) != 0 ||
            tsv_number(&t, path, j, c_rv, &s->rv[j], err) != 0 ||
            tsv_count(&t, path, j, c_nbt, &nbt_j, err) != 0 ||
            (c_m0 >= 0 && tsv_number(&t, path, j, c_m0, &s->m0[j], err)) ||
            (c_v0 >= 0 && tsv_number(&t, path, j, c_v0, &s->v0[j], err)) ||
            (c_t0 >= 0 && tsv_count(&t, path, j, c_t0, &t0_j, err)))
            goto done;
        if (s->rv[j] < 0 || s->v0[j] < 0) {
            bn_fail(err, "%s:%zu: a variance below 0", path, j + 2);
            goto done;
        }
        if (j > 0 && (nbt_j != nbt || t0_j != *t0)) {
            bn_fail(err, "%s:%zu: the batches tracked differ from line 2's: "
                         "one layer's statistics share them",
                    path, j + 2);
            goto done;
        }
        nbt = nbt_j;
        *t0 = t0_j;
    }
    if (nbt < *t0) {
        bn_fail(err, "%s: %zu batches tracked, fewer than the %zu it started "
                     "from",
                path, nbt, *t0);
        goto done;
    }
    s->updates = nbt - *t0;
    rc = 0;
done:
    tsv_free(&t);
    return rc;
}

/* The batches: consecutive rows, first_row counting up from 0. */
static int read_batches(const char *path, subject *s, bn_error *err)
{
    tsv_table t;
    if (tsv_read(path, &t, err) != 0)
        return -1;
    int c_first, c_rows, rc = -1;
    if (need_column(&t, path, "first_row", &c_first, err) != 0 ||
        need_column(&t, path, "rows", &c_rows, err) != 0)
        goto done;
    s->batch_rows = malloc((t.nrow + 1) * sizeof *s->batch_rows);
    if (!s->batch_rows) {
        bn_fail(err, "out of memory");
        goto done;
    }
    size_t next = 0;
    for (size_t k = 0; k < t.nrow; k++) {
        size_t first, rows;
        if (tsv_count(&t, path, k, c_first, &first, err) != 0 ||
            tsv_count(&t, path, k, c_rows, &rows, err) != 0)
            goto done;
        if (first != next || rows < 1) {
            bn_fail(err, "%s:%zu: batch of %zu rows from row %zu; the "
                         "batches must follow each other from row 0",
                    path, k + 2, rows, first);
            goto done;
        }
        s->batch_rows[k] = rows;
        next += rows;
    }
    s->n_batches = t.nrow;
    rc = 0;
done:
    tsv_free(&t);
    return rc;
}

/* A dump's layer settings: PyTorch's momentum (the new value's weight) or
 * None (the cumulative average), and eps; PyTorch's running variance is
 * the unbiased one. */
static int read_layer(const char *path, bn_config *c, bn_error *err)
{
    tsv_table t;
    if (tsv_read(path, &t, err) != 0)
        return -1;
    int c_key, c_val, rc = -1;
    size_t have_m = 0, have_eps = 0; /* the line each was given on */
    if (need_column(&t, path, "key", &c_key, err) != 0 ||
        need_column(&t, path, "value", &c_val, err) != 0)
        goto done;
    c->variance = BN_VAR_UNBIASED;
    c->estimator = BN_EST_EMA;
    for (size_t r = 0; r < t.nrow; r++) {
        const char *k = tsv_cell(&t, r, (size_t)c_key);
        const char *v = tsv_cell(&t, r, (size_t)c_val);
        /* A key given twice would leave one of its values unread. */
        size_t *seen = strcmp(k, "momentum") == 0 ? &have_m
                       : strcmp(k, "eps") == 0    ? &have_eps
                                                  : NULL;
        if (seen && *seen) {
            bn_fail(err, "%s:%zu: key '%s' already given on line %zu", path,
                    r + 2, k, *seen);
            goto done;
        }
        if (seen)
            *seen = r + 2;
        if (strcmp(k, "momentum") == 0) {
            if (strcmp(v, "None") == 0) {
                c->estimator = BN_EST_CUMULATIVE;
                bn_set_momentum(c, 1.0, BN_WEIGHTS_NEW, NULL);
                continue;
            }
            double m;
            if (tsv_number(&t, path, r, c_val, &m, err) != 0)
                goto done;
            if (bn_set_momentum(c, m, BN_WEIGHTS_NEW, err) != 0) {
                bn_error sub = *err;
                bn_fail(err, "%s:%zu: %s", path, r + 2, sub.msg);
                goto done;
            }
        } else if (strcmp(k, "eps") == 0) {
            if (tsv_number(&t, path, r, c_val, &c->eps, err) != 0)
                goto done;
            if (!(c->eps > 0)) {
                bn_fail(err, "%s:%zu: eps must be > 0, got %s", path, r + 2,
                        v);
                goto done;
            }
        }
    }
    if (!have_m || !have_eps) {
        bn_fail(err, "%s: no %s row", path, have_m ? "eps" : "momentum");
        goto done;
    }
    rc = 0;
done:
    tsv_free(&t);
    return rc;
}

/* bnstudy's layer on the batches, from the checkpoint's initial values
 * and batches tracked. */
static int replay(subject *s, const bn_config *c, size_t t0, bn_error *err)
{
    size_t f = s->f, bmax = 0;
    for (size_t k = 0; k < s->n_batches; k++) {
        if (s->batch_rows[k] < 2 && c->variance == BN_VAR_UNBIASED)
            return bn_fail(err, "batch %zu has one row: its unbiased "
                                "variance is undefined",
                           k + 1);
        if (s->batch_rows[k] > bmax)
            bmax = s->batch_rows[k];
    }
    bn_layer layer;
    double *y = malloc(bmax * f * sizeof *y);
    double *mean = malloc(2 * f * sizeof *mean);
    if (!y || !mean || bn_init(&layer, f, c) != 0) {
        free(y);
        free(mean);
        return bn_fail(err, "out of memory");
    }
    memcpy(layer.rm, s->m0, f * sizeof *layer.rm);
    memcpy(layer.rv, s->v0, f * sizeof *layer.rv);
    layer.updates = t0; /* the cumulative average's 1/t counts on */
    for (size_t k = 0, first = 0; k < s->n_batches; first += s->batch_rows[k],
                                  k++)
        bn_train_forward(&layer, s->batch_rows[k], s->x + first * f, y, mean,
                         mean + f);
    memcpy(s->replay_m, layer.rm, f * sizeof *layer.rm);
    memcpy(s->replay_v, layer.rv, f * sizeof *layer.rv);
    bn_free(&layer);
    free(y);
    free(mean);
    return 0;
}

typedef struct {
    const char *stats, *activations, *batches, *layer;
    uint64_t batch_size; /* 0: not given */
} checkpoint_files;

static int from_checkpoint(const checkpoint_files *cf, bn_config *c,
                           subject *s, popfile *pf, bn_error *err)
{
    memset(s, 0, sizeof *s);
    size_t t0;
    if (read_stats(cf->stats, s, &t0, err) != 0)
        return -1;
    unsigned char *bytes;
    size_t len;
    if (popfile_slurp(cf->activations, POPFILE_MAX_BYTES, &bytes, &len,
                      err) != 0)
        return -1;
    int rc = popfile_parse(cf->activations, bytes, len, NULL, pf, err);
    input_free((char *)bytes, len);
    if (rc != 0)
        return -1;
    if (pf->f != s->f)
        return bn_fail(err,
                       "%s has %zu features, %s the statistics of %zu "
                       "features",
                       cf->activations, pf->f, cf->stats, s->f);
    s->n = pf->n;
    s->x = pf->x;
    pf->x = NULL;
    s->names = pf->names;
    if (cf->layer && read_layer(cf->layer, c, err) != 0)
        return -1;
    if (bn_validate(c, err) != 0)
        return -1;
    if (bn_estimator_get(c->estimator)->pools)
        return bn_fail(err, "estimator %s recomputes the statistics after "
                            "training: a checkpoint's follow its batches",
                       bn_estimator_name(c->estimator));
    if (cf->batches) {
        if (read_batches(cf->batches, s, err) != 0)
            return -1;
    } else {
        size_t b = (size_t)cf->batch_size, nb = (s->n + b - 1) / b;
        /* More than the rows would be one batch of all of them: not the
         * batching asked for. */
        if (b > s->n)
            return bn_fail(err, "--batch-size: %zu is more than the %zu rows "
                                "of %s",
                           b, s->n, cf->activations);
        s->batch_rows = malloc(nb * sizeof *s->batch_rows);
        if (!s->batch_rows)
            return bn_fail(err, "out of memory");
        for (size_t k = 0; k < nb; k++)
            s->batch_rows[k] = s->n - k * b < b ? s->n - k * b : b;
        s->n_batches = nb;
    }
    size_t rows = 0;
    for (size_t k = 0; k < s->n_batches; k++)
        rows += s->batch_rows[k];
    if (rows != s->n)
        return bn_fail(err, "%s: the batches hold %zu rows, %s has %zu",
                       cf->batches, rows, cf->activations, s->n);
    if (replay(s, c, t0, err) != 0)
        return -1;
    s->checkpoint = 1;
    s->eps = c->eps;
    /* A cumulative average that resumed after t0 batches keeps t0 / (t0 +
     * T) on its start: the p with (1 - p)^T equal to that. */
    s->p = init_p(c);
    if (c->estimator == BN_EST_CUMULATIVE && t0 > 0 && s->updates > 0)
        s->p = 1.0 - pow((double)t0 / (double)(t0 + s->updates),
                         1.0 / (double)s->updates);
    char mom[80];
    if (c->estimator == BN_EST_CUMULATIVE)
        snprintf(mom, sizeof mom, "None (the cumulative average)");
    else
        snprintf(mom, sizeof mom, "%g (%s), estimator %s", c->momentum,
                 bn_weights_name((int)c->weights),
                 bn_estimator_name(c->estimator));
    buf_printf(&s->what,
             "%s: %zu rows x %zu features in %zu batches; %s: %zu updates; "
             "momentum %s, %s variance, eps %g",
             cf->activations, s->n, s->f, s->n_batches, cf->stats,
             s->updates, mom, bn_variance_name((int)c->variance), c->eps);
    if (s->what.failed)
        return bn_fail(err, "out of memory");
    return 0;
}

/* ------------------------------------------------------------- report */

/* How far the replay is from the checkpoint: the mean in units of the
 * checkpoint's spread, the variance relative to itself. */
static double replay_diff(const subject *s, size_t j)
{
    double sd = sqrt(s->rv[j]);
    double dm = fabs(s->replay_m[j] - s->rm[j]);
    double dv = fabs(s->replay_v[j] - s->rv[j]);
    double a = sd > 0 ? dm / sd : dm == 0 ? 0.0 : INFINITY;
    double b = s->rv[j] > 0 ? dv / s->rv[j] : dv == 0 ? 0.0 : INFINITY;
    return a > b ? a : b;
}

/* Agreement to this is rounding: the replay and the checkpoint sum the
 * same batches in different orders, a few ulps per update. */
#define REPLAY_AGREES 1e-9

static void causes_of(unsigned flags, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int c = 0; c < DIAG_N_CAUSES && len < cap; c++)
        if (flags & (1u << c))
            len += (size_t)snprintf(buf + len, cap - len, "%s%s",
                                    len ? "," : "", diag_cause_get(c)->name);
    if (!len)
        snprintf(buf, cap, "-");
}

static void print_tsv(const subject *s, const diag_feature *d)
{
    fputs("feature\ttrue_mean\ttrue_var\trunning_mean\trunning_var\t"
          "replay_mean\treplay_var\treplay_diff\tshift\tscale\tupdates\t"
          "init_weight\tinit_shift\tinit_scale\texchange\tamplification\t"
          "cause\tcauses\n",
          stdout);
    for (size_t j = 0; j < s->f; j++) {
        char all[200];
        causes_of(d[j].flags, all, sizeof all);
        printf("%s\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t"
               "%.17g\t%zu\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%s\t%s\n",
               s->names[j], d[j].true_mean, d[j].true_var, d[j].running_mean,
               d[j].running_var, s->replay_m[j], s->replay_v[j],
               replay_diff(s, j), d[j].shift, d[j].scale, d[j].updates,
               d[j].init_weight, d[j].init_shift, d[j].init_scale,
               d[j].exchange, d[j].amplification,
               diag_cause_get(d[j].cause)->name, all);
    }
}

static void print_table(const subject *s, const diag_feature *d)
{
    printf("%s\n", s->what.p ? s->what.p : "");
    if (s->checkpoint) {
        double worst = 0.0;
        for (size_t j = 0; j < s->f; j++)
            if (!(replay_diff(s, j) <= worst))
                worst = replay_diff(s, j);
        if (worst <= REPLAY_AGREES)
            printf("replay: bnstudy's layer on these batches, from the "
                   "initial values, gives\nthe checkpoint's statistics "
                   "(largest difference %.2g of their scale)\n",
                   worst);
        else
            printf("replay: bnstudy's layer on these batches, from the "
                   "initial values, does NOT\ngive the checkpoint's "
                   "statistics (largest difference %.3g of their scale):\n"
                   "they were not computed from these activations with "
                   "these settings\n",
                   worst);
    }
    putchar('\n');
    int w = (int)strlen("feature");
    for (size_t j = 0; j < s->f; j++)
        if ((int)strlen(s->names[j]) > w)
            w = (int)strlen(s->names[j]);
    printf("%-*s  %11s %11s  %11s %11s  %7s %6s  %7s %7s  %s\n", w,
           "feature", "mean", "running", "var", "running", "shift", "scale",
           "updates", "init wt", "cause (and others that apply)");
    unsigned seen = 0;
    for (size_t j = 0; j < s->f; j++) {
        printf("%-*s  %11.4g %11.4g  %11.4g %11.4g  %7.3g %6.3g  %7zu %7.3g "
               " %s",
               w, s->names[j], d[j].true_mean, d[j].running_mean,
               d[j].true_var, d[j].running_var, d[j].shift, d[j].scale,
               d[j].updates, d[j].init_weight,
               diag_cause_get(d[j].cause)->name);
        for (int c = d[j].cause + 1; c < DIAG_N_CAUSES; c++)
            if (d[j].flags & (1u << c))
                printf(" +%s", diag_cause_get(c)->name);
        putchar('\n');
        seen |= 1u << d[j].cause;
    }
    printf("\nshift: (running mean - mean) / sqrt(var + eps); scale: "
           "sqrt((var + eps) / (running + eps));\ninit wt: the weight the "
           "initial values keep. Off: |shift| or |scale - 1| > %g.\n",
           DIAG_OFF);
    for (int c = 0; c < DIAG_N_CAUSES; c++)
        if (seen & (1u << c)) {
            size_t k = 0;
            for (size_t j = 0; j < s->f; j++)
                k += d[j].cause == (diag_cause)c;
            printf("\n%s (%zu feature%s)\n  %s.\n  test: %s\n",
                   diag_cause_get(c)->name, k, k == 1 ? "" : "s",
                   diag_cause_get(c)->words, diag_cause_get(c)->threshold);
        }
}

/* ------------------------------------------------------------ command */

int cmd_diagnose(int argc, char **argv)
{
    const char *cmd = "diagnose";
    struct option opts[KEY_COUNT + CLI_POP_OPTIONS + 10];
    char names[KEY_COUNT][40];
    size_t no = cli_key_options(opts, names);
    no += cli_pop_option_table(opts + no);
    static const struct option extra[] = {
        {"tsv", no_argument, NULL, OPT_TSV},
        {"dump", required_argument, NULL, OPT_DUMP},
        {"stats", required_argument, NULL, OPT_STATS},
        {"activations", required_argument, NULL, OPT_ACTIVATIONS},
        {"batches", required_argument, NULL, OPT_BATCHES},
        {"layer", required_argument, NULL, OPT_LAYER},
        {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
        {"help", no_argument, NULL, OPT_HELP},
    };
    for (size_t i = 0; i < sizeof extra / sizeof *extra; i++)
        opts[no++] = extra[i];
    opts[no] = (struct option){NULL, 0, NULL, 0};

    exp_t *e = malloc(sizeof *e);
    if (!e)
        return cli_error(cmd, "out of memory");
    bn_error err;
    int c, idx, rc = CLI_EXIT_USAGE, tsv = 0;
    const char *dump = NULL;
    checkpoint_files cf = {NULL, NULL, NULL, NULL, 0};
    cli_pop_options po = {NULL, NULL, NULL};
    char *dump_paths[4] = {NULL};
    subject s;
    popfile pf;
    pop_t tmp;
    diag_feature *d = NULL;
    memset(&s, 0, sizeof s);
    memset(&pf, 0, sizeof pf);
    memset(&tmp, 0, sizeof tmp);
    if (exp_init(e, &err) != 0) {
        cli_error(cmd, "%s", err.msg);
        goto done;
    }
    /* The checkpoint's settings the options may give: the rest of the
     * keys describe a run. */
    static const key_id layer_keys[] = {KEY_MOMENTUM, KEY_WEIGHTS,
                                        KEY_VARIANCE, KEY_ESTIMATOR,
                                        KEY_EPS, KEY_BATCH_SIZE};
    const char *run_only = NULL;
    cli_parser p = {cmd, argc, argv, opts, "h", NULL, 0};
    while ((c = cli_next(&p, &idx)) != -1) {
        const char **file = c == OPT_DUMP          ? &dump
                            : c == OPT_STATS       ? &cf.stats
                            : c == OPT_ACTIVATIONS ? &cf.activations
                            : c == OPT_BATCHES     ? &cf.batches
                            : c == OPT_LAYER       ? &cf.layer
                                                   : NULL;
        if (c == OPT_HELP) {
            usage();
            rc = 0;
            goto done;
        } else if (c == OPT_TSV) {
            tsv = 1;
        } else if (c == OPT_MAX_MEMORY) {
            if (cli_max_memory(cmd, optarg, NULL) != 0)
                goto done;
        } else if (file) {
            *file = optarg;
        } else if (cli_take_pop_option(c, optarg, &po)) {
            run_only = opts[idx].name;
        } else if (c >= CLI_KEY_BASE && c < CLI_KEY_BASE + KEY_COUNT) {
            key_id k = (key_id)(c - CLI_KEY_BASE);
            char origin[64];
            snprintf(origin, sizeof origin, "--%s", opts[idx].name);
            if (exp_set(e, k, optarg, origin, 0, &err) != 0) {
                cli_error(cmd, "%s", err.msg);
                goto done;
            }
            int layer_key = 0;
            for (size_t i = 0; i < sizeof layer_keys / sizeof *layer_keys;
                 i++)
                layer_key |= layer_keys[i] == k;
            if (!layer_key)
                run_only = opts[idx].name;
        } else {
            goto done;
        }
    }
    if (optind < argc) {
        cli_error(cmd, "unexpected argument '%s'", argv[optind]);
        goto done;
    }
    for (int k = 0; k < KEY_COUNT; k++)
        if (e->n[k] > 1) {
            cli_error(cmd, "%s: one value at a time", e->from[k]);
            goto done;
        }
    int checkpoint = dump || cf.stats || cf.activations || cf.batches ||
                     cf.layer;
    if (checkpoint) {
        if (dump && (cf.stats || cf.activations || cf.batches || cf.layer)) {
            cli_error(cmd, "--dump names all four files: give it alone or "
                           "give --stats and --activations");
            goto done;
        }
        if (run_only) {
            cli_error(cmd, "--%s describes a run, not a checkpoint's "
                           "statistics",
                      run_only);
            goto done;
        }
        if (dump) {
            static const char *const ext[4] = {".stats.tsv", ".npy",
                                               ".batches.tsv", ".layer.tsv"};
            const char **dst[4] = {&cf.stats, &cf.activations, &cf.batches,
                                   &cf.layer};
            for (int i = 0; i < 4; i++) {
                dump_paths[i] = malloc(strlen(dump) + strlen(ext[i]) + 1);
                if (!dump_paths[i]) {
                    cli_error(cmd, "out of memory");
                    goto done;
                }
                strcat(strcpy(dump_paths[i], dump), ext[i]);
                *dst[i] = dump_paths[i];
            }
        }
        if (!cf.stats || !cf.activations) {
            cli_error(cmd, "%s: a checkpoint needs --stats and --activations",
                      cf.stats ? "--stats" : "--activations");
            goto done;
        }
        if (cf.batches && e->from[KEY_BATCH_SIZE]) {
            cli_error(cmd, "--batch-size: the batches are in %s", cf.batches);
            goto done;
        }
        if (!cf.batches && !e->from[KEY_BATCH_SIZE]) {
            cli_error(cmd, "--activations: give --batches or --batch-size "
                           "to say how the rows were batched");
            goto done;
        }
        if (cf.layer)
            for (size_t i = 0; i + 1 < sizeof layer_keys / sizeof *layer_keys;
                 i++)
                if (e->from[layer_keys[i]]) {
                    cli_error(cmd, "%s: the layer's settings are in %s",
                              e->from[layer_keys[i]], cf.layer);
                    goto done;
                }
    } else if (cli_apply_pop_options(cmd, e, &po) != 0) {
        goto done;
    }
    /* A checkpoint has no population to check a run against: only the
     * layer's own settings are checked. */
    run_config cfg;
    if (!checkpoint && exp_finish(e, &err) != 0) {
        cli_error(cmd, "%s", err.msg);
        goto done;
    }
    exp_config(e, 0, &cfg);
    if (checkpoint) {
        cf.batch_size = cfg.batch_size;
        rc = from_checkpoint(&cf, &cfg.layer, &s, &pf, &err);
    } else {
        const pop_t *pop = exp_population(e, &tmp, &err);
        rc = pop ? from_run(e, pop, &cfg, &s, &err) : -1;
    }
    if (rc != 0) {
        rc = cli_error(cmd, "%s", err.msg);
        goto done;
    }
    rc = CLI_EXIT_USAGE;
    d = malloc(s.f * sizeof *d);
    diag_input in = {s.n,      s.f,   s.x,   s.batch,        s.rm,
                     s.rv,     s.m0,  s.v0,  s.updates,      s.p,
                     s.eps,    s.batch_rows, s.n_batches};
    if (!d || diag_run(&in, d, &err) != 0) {
        cli_error(cmd, "%s", d ? err.msg : "out of memory");
        goto done;
    }
    if (tsv)
        print_tsv(&s, d);
    else
        print_table(&s, d);
    rc = 0;
done:
    free(d);
    subject_free(&s);
    popfile_free(&pf);
    pop_free(&tmp);
    for (int i = 0; i < 4; i++)
        free(dump_paths[i]);
    exp_free(e);
    free(e);
    return rc;
}
