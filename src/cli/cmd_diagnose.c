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
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/diag_report.h"
#include "study/dumpdir.h"
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
    OPT_SET,
    OPT_MAX_MEMORY
};

static void usage(void)
{
    fputs("usage: bnstudy diagnose DIR [--layer NAME] [--tsv]\n"
          "       bnstudy diagnose [RUN OPTIONS] [--set SECTION.KEY=VALUE] "
          "[--tsv]\n"
          "       bnstudy diagnose --dump PREFIX [--tsv]\n"
          "       bnstudy diagnose --stats FILE --activations FILE\n"
          "                        [--batches FILE | --batch-size B]\n"
          "                        [--layer FILE | --momentum M "
          "--momentum-weights W\n"
          "                         --variance V --estimator E --eps E] "
          "[--tsv]\n"
          "\n"
          "Say why a model's evaluation mode disagrees with its training "
          "mode, and what\nfixes it (docs/diagnose.md). The first lines are "
          "the verdict: the cause, the\nlayers it is in, the fix and the "
          "accuracy the fix was measured to give.\n"
          "\n"
          "DIR is a folder scripts/dump_bn_inputs.py wrote from a PyTorch "
          "model (or\nBNRecorder from a training run): every batch-norm "
          "layer is diagnosed, a line\neach; --layer NAME adds that layer's "
          "table of features, --tsv prints a row\nper feature instead.\n"
          "\n"
          "With the options of `bnstudy run`, the run is trained and "
          "diagnosed: the\nlayer, feature by feature; the classifier "
          "(--type classifier, on a\npopulation with classes and held-out "
          "rows) with the model's verdict, as DIR.\n"
          "\n"
          "--dump PREFIX names one layer of a recording; with --stats and "
          "--activations\nthe files are given one by one. bnstudy's layer "
          "then also replays the\nbatches from the initial values and says "
          "whether that reproduces the\ncheckpoint's statistics.\n"
          "\n",
          stdout);
    cli_key_help(stdout);
    cli_pop_help(stdout);
    fputs("  --set SECTION.KEY=VALUE  any experiment key, as `run` takes "
          "it\n"
          "  --dump PREFIX          PREFIX.stats.tsv, PREFIX.npy, "
          "PREFIX.batches.tsv\n"
          "                         and PREFIX.layer.tsv, as BNRecorder "
          "names them\n"
          "  --stats FILE           per feature: running_mean, running_var, "
          "num_batches_tracked\n"
          "                         (and initial_mean, initial_var, "
          "initial_batches_tracked)\n"
          "  --activations FILE     the rows the layer saw, in order (.npy, "
          "CSV or TSV)\n"
          "  --batches FILE         the rows of each batch (columns "
          "first_row, rows)\n"
          "  --layer FILE | NAME    momentum (PyTorch's, or None), eps and "
          "dtype, as key,\n"
          "                         value; with DIR, the name of a layer\n"
          "  --tsv                  one TSV row per feature instead of the "
          "report\n"
          CLI_MAX_MEMORY_HELP
          "  -h, --help             this text\n",
          stdout);
}

/* ------------------------------------------------------- what is read */

/* How closely a replay in doubles must give a checkpoint's statistics to
 * reproduce them, by the dtype of its buffers (a layer file's `dtype`;
 * float64 when none is given). A float32 buffer rounds every update to
 * 2^-24 relative, and the moving average carries about 1/p of those
 * roundings: a few 1e-7 at p = 0.1, far under 1e-5, while statistics
 * from other data or settings miss by 1e-3 or more. Below the dtype's
 * smallest normal number a value is rounding too: a denormal running
 * variance against a replay of 0 is no mismatch. */
typedef struct {
    const char *dtype, *words;
    double agrees, tiny;
} replay_precision;

static const replay_precision precisions[] = {
    {.dtype = "float64", .words = "rounding", .agrees = 1e-9,
     .tiny = DBL_MIN},
    {.dtype = "float32", .words = "float32 rounding", .agrees = 1e-5,
     .tiny = FLT_MIN},
    {.dtype = "float16", .words = "float16 rounding", .agrees = 1e-2,
     .tiny = 6.103515625e-05},
    {.dtype = "bfloat16", .words = "bfloat16 rounding", .agrees = 1e-1,
     .tiny = FLT_MIN},
};

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
    int recorded;        /* the layer file is a recording's */
    const replay_precision *prec; /* the checkpoint's dtype */
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
    if (tsv_need_column(&t, path, "running_mean", &c_rm, err) != 0 ||
        tsv_need_column(&t, path, "running_var", &c_rv, err) != 0 ||
        tsv_need_column(&t, path, "num_batches_tracked", &c_nbt, err) != 0)
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
    if (tsv_need_column(&t, path, "first_row", &c_first, err) != 0 ||
        tsv_need_column(&t, path, "rows", &c_rows, err) != 0)
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

/* A dump's layer settings (dumpdir_settings) as the layer's config:
 * PyTorch's momentum is the new value's weight, None the cumulative
 * average, and the running variance the unbiased one. */
static int read_layer(const char *path, bn_config *c,
                      const replay_precision **prec, int *recorded,
                      bn_error *err)
{
    dump_settings ds;
    if (dumpdir_settings(path, &ds, err) != 0)
        return -1;
    *recorded = ds.recorded;
    size_t i = 0, n = sizeof precisions / sizeof *precisions;
    while (i < n && strcmp(precisions[i].dtype, ds.dtype) != 0)
        i++;
    if (i == n)
        return bn_fail(err, "%s: dtype '%s' is none of float64, float32, "
                            "float16, bfloat16",
                       path, ds.dtype);
    *prec = &precisions[i];
    c->variance = BN_VAR_UNBIASED;
    c->estimator = isnan(ds.momentum) ? BN_EST_CUMULATIVE : BN_EST_EMA;
    c->eps = ds.eps;
    return bn_set_momentum(c, isnan(ds.momentum) ? 1.0 : ds.momentum,
                           BN_WEIGHTS_NEW, err);
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
    s->prec = &precisions[0];
    if (cf->layer && read_layer(cf->layer, c, &s->prec, &s->recorded, err) != 0)
        return -1;
    /* What the layer file gave is its file's to answer for. */
    if (bn_validate(c, err) != 0) {
        if (cf->layer) {
            bn_error sub = *err;
            return bn_fail(err, "%s: %s", cf->layer, sub.msg);
        }
        return -1;
    }
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
    double tiny = s->prec ? s->prec->tiny : DBL_MIN;
    double sd = sqrt(s->rv[j]);
    double dm = fabs(s->replay_m[j] - s->rm[j]);
    double dv = fabs(s->replay_v[j] - s->rv[j]);
    if (fabs(s->rv[j]) < tiny && fabs(s->replay_v[j]) < tiny)
        dv = 0.0;
    double a = sd > 0 ? dm / sd : dm == 0 ? 0.0 : INFINITY;
    double b = s->rv[j] > 0 ? dv / s->rv[j] : dv == 0 ? 0.0 : INFINITY;
    return a > b ? a : b;
}

/* The replay reproduces feature j to the dtype's rounding: the mean to
 * `agrees` of its spread plus its own size, since a stored number rounds
 * relative to itself (a mean of 1000 with a spread of 1 carries float32
 * rounding of 6e-5 of that spread), the variance to `agrees` of itself. */
static int replay_agrees(const subject *s, size_t j)
{
    double tiny = s->prec->tiny, agrees = s->prec->agrees;
    double dm = fabs(s->replay_m[j] - s->rm[j]);
    double dv = fabs(s->replay_v[j] - s->rv[j]);
    if (fabs(s->rv[j]) < tiny && fabs(s->replay_v[j]) < tiny)
        dv = 0.0;
    return dm <= agrees * (sqrt(s->rv[j]) + fabs(s->rm[j])) &&
           dv <= agrees * s->rv[j];
}

static void print_tsv(const subject *s, const diag_feature *d)
{
    fputs("feature\ttrue_mean\ttrue_var\trunning_mean\trunning_var\t"
          "replay_mean\treplay_var\treplay_diff\tshift\tscale\tupdates\t"
          "init_weight\tinit_shift\tinit_scale\texchange\tamplification\t"
          "cause\tcauses\texchange_robust\n",
          stdout);
    for (size_t j = 0; j < s->f; j++) {
        char all[200];
        diag_causes_of(d[j].flags, all, sizeof all);
        printf("%s\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t"
               "%.17g\t%zu\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%s\t%s\t"
               "%.17g\n",
               s->names[j], d[j].true_mean, d[j].true_var, d[j].running_mean,
               d[j].running_var, s->replay_m[j], s->replay_v[j],
               replay_diff(s, j), d[j].shift, d[j].scale, d[j].updates,
               d[j].init_weight, d[j].init_shift, d[j].init_scale,
               d[j].exchange, d[j].amplification,
               diag_cause_get(d[j].cause)->name, all, d[j].exchange_robust);
    }
}

static void print_table(const subject *s, const diag_feature *d)
{
    printf("%s\n", s->what.p ? s->what.p : "");
    if (s->checkpoint) {
        double worst = 0.0;
        int agrees = 1;
        for (size_t j = 0; j < s->f; j++) {
            if (!(replay_diff(s, j) <= worst))
                worst = replay_diff(s, j);
            agrees &= replay_agrees(s, j);
        }
        if (agrees)
            printf("replay: bnstudy's layer on these batches, from the "
                   "initial values, gives\nthe checkpoint's own statistics: "
                   "it reproduces them to %s (largest difference\n%.2g of "
                   "their scale, %s buffers)\n",
                   s->prec->words, worst, s->prec->dtype);
        else
            printf("replay: bnstudy's layer on these batches, from the "
                   "initial values, does NOT\ngive the checkpoint's "
                   "statistics (largest difference %.3g of their scale, "
                   "beyond\n%s): they were not computed from these "
                   "activations with these settings\n",
                   worst, s->prec->words);
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

static int any_key(const exp_t *e)
{
    for (int k = 0; k < KEY_COUNT; k++)
        if (e->from[k])
            return 1;
    return 0;
}

/* DIR: a dump folder, whose layers carry their own settings; --layer is
 * then one of its layers' names. */
static int dump_folder(const char *cmd, const char *dir, const char *layer,
                       int others, int tsv)
{
    if (others)
        return cli_error(cmd, "%s: a dump folder carries its layers' "
                              "settings and data: give it alone, with "
                              "--layer NAME and --tsv",
                         dir);
    return diagnose_dir(cmd, dir, layer, tsv);
}

/* The checkpoint's settings the options may give: the rest of the keys
 * describe a run. */
static const key_id layer_keys[] = {KEY_MOMENTUM, KEY_WEIGHTS, KEY_VARIANCE,
                                    KEY_ESTIMATOR, KEY_EPS, KEY_BATCH_SIZE};
#define N_LAYER_KEYS (sizeof layer_keys / sizeof *layer_keys)

/* What the command line says, once parsed. */
typedef struct {
    exp_t *e;
    checkpoint_files cf;
    cli_pop_options po;
    const char *dump;     /* --dump STEM */
    const char *run_only; /* an option that only a run has, or NULL */
    char run_only_name[48]; /* its name, kept past the option table */
    const char *folder;   /* DIR, or NULL */
    char **sets;          /* the --set values */
    size_t n_sets;
    int tsv, help;
} diag_args;

static int is_layer_key(key_id k)
{
    for (size_t i = 0; i < N_LAYER_KEYS; i++)
        if (layer_keys[i] == k)
            return 1;
    return 0;
}

/* An option's name, copied: the option table is parse_args's own. */
static const char *keep_name(diag_args *a, const char *name)
{
    snprintf(a->run_only_name, sizeof a->run_only_name, "%s", name);
    return a->run_only_name;
}

/* The options: every key of the key table as run has them, the
 * population's, and diagnose's own. 0, or a message printed and -1. */
static int parse_args(const char *cmd, int argc, char **argv, diag_args *a)
{
    struct option opts[KEY_COUNT + CLI_POP_OPTIONS + 11];
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
        {"set", required_argument, NULL, OPT_SET},
        {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
        {"help", no_argument, NULL, OPT_HELP},
    };
    for (size_t i = 0; i < sizeof extra / sizeof *extra; i++)
        opts[no++] = extra[i];
    opts[no] = (struct option){NULL, 0, NULL, 0};
    if (!(a->sets = calloc((size_t)argc + 1, sizeof *a->sets)))
        return cli_error(cmd, "out of memory"), -1;
    static const char *const repeatable[] = {"set", NULL};
    cli_parser p = {cmd, argc, argv, opts, "h", repeatable, 0};
    bn_error err;
    int c, idx;
    while ((c = cli_next(&p, &idx)) != -1) {
        const char **file = c == OPT_DUMP          ? &a->dump
                            : c == OPT_STATS       ? &a->cf.stats
                            : c == OPT_ACTIVATIONS ? &a->cf.activations
                            : c == OPT_BATCHES     ? &a->cf.batches
                            : c == OPT_LAYER       ? &a->cf.layer
                                                   : NULL;
        if (c == OPT_HELP) {
            a->help = 1;
            return 0;
        } else if (c == OPT_TSV) {
            a->tsv = 1;
        } else if (c == OPT_SET) {
            a->sets[a->n_sets++] = optarg;
            a->run_only = "set";
        } else if (c == OPT_MAX_MEMORY) {
            if (cli_max_memory(cmd, optarg, NULL) != 0)
                return -1;
        } else if (file) {
            *file = optarg;
        } else if (cli_take_pop_option(c, optarg, &a->po)) {
            a->run_only = keep_name(a, opts[idx].name);
        } else if (c >= CLI_KEY_BASE && c < CLI_KEY_BASE + KEY_COUNT) {
            key_id k = (key_id)(c - CLI_KEY_BASE);
            char origin[64];
            snprintf(origin, sizeof origin, "--%s", opts[idx].name);
            if (exp_set(a->e, k, optarg, origin, 0, &err) != 0)
                return cli_error(cmd, "%s", err.msg), -1;
            if (!is_layer_key(k))
                a->run_only = keep_name(a, opts[idx].name);
        } else {
            return -1; /* cli_next said why */
        }
    }
    if (optind < argc) {
        if (optind + 1 < argc)
            return cli_error(cmd, "unexpected argument '%s'",
                             argv[optind + 1]),
                   -1;
        a->folder = argv[optind];
    }
    return 0;
}

static int can_open(const char *dir, const char *name, const char *ext)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s%s%s%s", dir, *dir ? "/" : "", name,
                 ext) >= (int)sizeof path)
        return 0;
    return cli_exists(path, 0);
}

/* --dump given what the folder form reads: a dump's folder, or one layer
 * of a dump (the dumper writes NAME.train.npy, a recording NAME.npy).
 * Said with the command that reads it, rather than a file that is
 * missing. -1 and a message, or 0. */
static int dump_misread(const char *cmd, const char *stem)
{
    if (can_open(stem, "model.tsv", ""))
        return cli_error(cmd, "--dump %s: a folder, which `bnstudy diagnose "
                              "%s` reads whole (--dump takes one layer of a "
                              "BNRecorder recording, DIR/NAME)",
                         stem, stem),
               -1;
    if (can_open("", stem, ".npy") || !can_open("", stem, ".train.npy"))
        return 0;
    const char *slash = strrchr(stem, '/');
    const char *name = slash ? slash + 1 : stem;
    int dir_len = slash ? (int)(slash - stem) : 1;
    return cli_error(cmd, "--dump %s: a layer of a dump_bn_inputs.py dump "
                          "(%s.train.npy, no %s.npy); --dump takes one "
                          "layer of a BNRecorder recording: run `bnstudy "
                          "diagnose %.*s --layer %s`",
                     stem, name, name, dir_len, slash ? stem : ".", name),
           -1;
}

/* A checkpoint's files: --dump STEM names all four, else --stats and
 * --activations with --batches or --batch-size, and --layer or the
 * layer's settings as options. paths receives what --dump made. */
static int checkpoint_args(const char *cmd, diag_args *a, char *paths[4])
{
    checkpoint_files *cf = &a->cf;
    const exp_t *e = a->e;
    if (a->dump && (cf->stats || cf->activations || cf->batches || cf->layer))
        return cli_error(cmd, "--dump names all four files: give it alone "
                              "or give --stats and --activations"),
               -1;
    if (a->run_only)
        return cli_error(cmd, "--%s describes a run, not a checkpoint's "
                              "statistics",
                         a->run_only),
               -1;
    if (a->dump && dump_misread(cmd, a->dump) != 0)
        return -1;
    if (a->dump) {
        static const char *const ext[4] = {".stats.tsv", ".npy",
                                           ".batches.tsv", ".layer.tsv"};
        const char **dst[4] = {&cf->stats, &cf->activations, &cf->batches,
                               &cf->layer};
        for (int i = 0; i < 4; i++) {
            paths[i] = malloc(strlen(a->dump) + strlen(ext[i]) + 1);
            if (!paths[i])
                return cli_error(cmd, "out of memory"), -1;
            strcat(strcpy(paths[i], a->dump), ext[i]);
            *dst[i] = paths[i];
        }
    }
    if (!cf->stats || !cf->activations)
        return cli_error(cmd, "%s: a checkpoint needs --stats and "
                              "--activations",
                         cf->stats ? "--stats" : "--activations"),
               -1;
    if (cf->batches && e->from[KEY_BATCH_SIZE])
        return cli_error(cmd, "--batch-size: the batches are in %s",
                         cf->batches),
               -1;
    if (!cf->batches && !e->from[KEY_BATCH_SIZE])
        return cli_error(cmd, "--activations: give --batches or "
                              "--batch-size to say how the rows were "
                              "batched"),
               -1;
    /* The batch size is the last of layer_keys: a --layer file does not
     * hold it. */
    for (size_t i = 0; cf->layer && i + 1 < N_LAYER_KEYS; i++)
        if (e->from[layer_keys[i]])
            return cli_error(cmd, "%s: the layer's settings are in %s",
                             e->from[layer_keys[i]], cf->layer),
                   -1;
    return 0;
}

/* The diagnosis of one layer: a checkpoint's, or a run's of the
 * options' population; the classifier's through its own report. */
static int diagnose_one(const char *cmd, diag_args *a, int checkpoint)
{
    exp_t *e = a->e;
    bn_error err;
    subject s;
    popfile pf;
    pop_t tmp;
    diag_feature *d = NULL;
    memset(&s, 0, sizeof s);
    memset(&pf, 0, sizeof pf);
    memset(&tmp, 0, sizeof tmp);
    /* A checkpoint has no population to check a run against: only the
     * layer's own settings are checked. */
    run_config cfg;
    if (!checkpoint && exp_finish(e, &err) != 0)
        return cli_error(cmd, "%s", err.msg);
    exp_config(e, 0, &cfg);
    if (!checkpoint && cfg.model == RUN_MODEL_CLASSIFIER)
        return diagnose_classifier(cmd, e, &cfg, a->tsv);
    int rc;
    if (checkpoint) {
        a->cf.batch_size = cfg.batch_size;
        rc = from_checkpoint(&a->cf, &cfg.layer, &s, &pf, &err);
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
                     s.eps,    s.batch_rows, s.n_batches,
                     !checkpoint, s.recorded};
    if (!d || diag_run(&in, d, &err) != 0) {
        cli_error(cmd, "%s", d ? err.msg : "out of memory");
        goto done;
    }
    if (a->tsv)
        print_tsv(&s, d);
    else
        print_table(&s, d);
    rc = 0;
done:
    free(d);
    subject_free(&s);
    popfile_free(&pf);
    pop_free(&tmp);
    return rc;
}

/* Settings whose runs the causes' tests do not describe: they replay the
 * buffers from 0 and 1, read every recorded batch as one update's, and
 * every row as a row of its own. A message naming the setting, not a
 * diagnosis that would mislead. */
static int undiagnosed(const char *cmd, const exp_t *e)
{
    if (e->initfile.file) {
        cli_error(cmd, "%s: the diagnosis starts the buffers at 0 and 1, "
                       "not at a checkpoint's",
                  e->from[KEY_LAYER_INITIAL]);
        return -1;
    }
    if (e->v[KEY_DEVICES][0].u > 1 && !e->v[KEY_SYNC][0].i) {
        cli_error(cmd, "%s: a run's diagnosis reads each batch as one "
                       "update's; devices with statistics of their own are "
                       "not diagnosed from a run (sync = yes is one "
                       "device's run), only from a dump of a model trained "
                       "so (dump_bn_inputs.py --devices K)",
                  e->from[KEY_DEVICES]);
        return -1;
    }
    if (e->v[KEY_SEQ_LENGTH][0].u > 0) {
        cli_error(cmd, "%s: a run's diagnosis replays rows, not padded "
                       "sequences: its tests know no mask, so padded "
                       "sequences are not diagnosed from a run, only from a "
                       "dump with their lengths (dump_bn_inputs.py "
                       "--train-lengths, --eval-lengths)",
                  e->from[KEY_SEQ_LENGTH]);
        return -1;
    }
    return 0;
}

int cmd_diagnose(int argc, char **argv)
{
    const char *cmd = "diagnose";
    diag_args a;
    memset(&a, 0, sizeof a);
    char *dump_paths[4] = {NULL};
    bn_error err;
    int rc = CLI_EXIT_USAGE;
    if (!(a.e = malloc(sizeof *a.e)))
        return cli_error(cmd, "out of memory");
    if (exp_init(a.e, &err) != 0) {
        cli_error(cmd, "%s", err.msg);
        free(a.e);
        return CLI_EXIT_USAGE;
    }
    if (parse_args(cmd, argc, argv, &a) != 0)
        goto done;
    if (a.help) {
        usage();
        rc = 0;
        goto done;
    }
    const checkpoint_files *cf = &a.cf;
    if (a.folder) {
        rc = dump_folder(cmd, a.folder, cf->layer,
                         a.dump || cf->stats || cf->activations ||
                             cf->batches || a.run_only || a.po.population ||
                             any_key(a.e),
                         a.tsv);
        goto done;
    }
    if (exp_set_overrides(a.e, a.sets, a.n_sets, &err) != 0) {
        cli_error(cmd, "%s", err.msg);
        goto done;
    }
    for (int k = 0; k < KEY_COUNT; k++)
        if (a.e->n[k] > 1) {
            cli_error(cmd, "%s: one value at a time", a.e->from[k]);
            goto done;
        }
    if (undiagnosed(cmd, a.e) != 0)
        goto done;
    int checkpoint = a.dump || cf->stats || cf->activations || cf->batches ||
                     cf->layer;
    if (checkpoint) {
        if (checkpoint_args(cmd, &a, dump_paths) != 0)
            goto done;
    } else if (cli_apply_pop_options(cmd, a.e, &a.po) != 0) {
        goto done;
    } else if (!a.e->popfile.pop && exp_read_population(a.e, &err) != 0) {
        /* A file --set population.file names is read as --population's. */
        cli_error(cmd, "%s", err.msg);
        goto done;
    }
    rc = diagnose_one(cmd, &a, checkpoint);
done:
    for (int i = 0; i < 4; i++)
        free(dump_paths[i]);
    exp_free(a.e);
    free(a.e);
    free(a.sets);
    return rc;
}
