/*
 * A dump folder read back (see dumpdir.h): model.tsv and NAME.layer.tsv
 * are key-value files, layers.tsv names the layers in the order they ran,
 * fixes.tsv holds the scored fixes, NAME.stats.tsv a row per feature.
 */
#include "study/dumpdir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/input.h"
#include "base/tsv.h"
#include "pop/pop.h"
#include "pop/popfile.h"

/* ----------------------------------------------------------- key-value */

typedef struct {
    tsv_table t;
    int key, value;
    const char *path;
} kv_file;

/* Where a dump's files are read: its folder on disk, or the
 * files a caller holds in memory (mem), each named by its path as a folder's
 * would be ("dump/model.tsv"): the page has no filesystem. */
typedef struct {
    const char *dir;
    int mem; /* the files below, not the folder */
    const dump_file *files;
    size_t n;
} dump_src;

static int dumpdir_read_src(const dump_src *src, dump_dir *d, bn_error *err);

static const dump_file *src_find(const dump_src *src, const char *path)
{
    for (size_t i = 0; i < src->n; i++)
        if (strcmp(src->files[i].path, path) == 0)
            return &src->files[i];
    return NULL;
}

static int src_tsv(const dump_src *src, const char *path, tsv_table *t,
                   bn_error *err)
{
    if (!src->mem)
        return tsv_read(path, t, err);
    const dump_file *f = src_find(src, path);
    if (!f) {
        memset(t, 0, sizeof *t);
        return bn_fail(err, "%s: no such file among those given", path);
    }
    return tsv_parse(path, (const char *)f->bytes, f->len, t, err);
}

/* A file's bytes with a NUL after them, freed with input_free, as
 * popfile_slurp gives them (and charged to the reading budget as it
 * charges them). */
static int src_slurp(const dump_src *src, const char *path,
                     unsigned char **bytes, size_t *len, bn_error *err)
{
    if (!src->mem)
        return popfile_slurp(path, POPFILE_MAX_BYTES, bytes, len, err);
    const dump_file *f = src_find(src, path);
    if (!f)
        return bn_fail(err, "%s: no such file among those given", path);
    if (f->len > POPFILE_MAX_BYTES)
        return bn_fail(err, "%s: more than %zu bytes", path,
                       (size_t)POPFILE_MAX_BYTES);
    if (input_charge(path, f->len + 1, "its bytes", err) != 0)
        return -1;
    *bytes = malloc(f->len + 1);
    if (!*bytes) {
        input_release(f->len + 1);
        return bn_fail(err, "out of memory");
    }
    memcpy(*bytes, f->bytes, f->len);
    (*bytes)[f->len] = '\0';
    *len = f->len;
    return 0;
}

/* Every key once: a key given twice would leave one of its values
 * unread (kv_row takes the first). */
static int kv_unique(const kv_file *kv, bn_error *err)
{
    size_t n = kv->t.nrow, first = 0, again = 0;
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys)
        return bn_fail(err, "out of memory");
    for (size_t r = 0; r < n; r++)
        keys[r] = tsv_cell(&kv->t, r, (size_t)kv->key);
    int rep = bn_find_repeat(keys, n, &first, &again);
    free(keys);
    if (rep < 0)
        return bn_fail(err, "out of memory");
    if (rep == 0)
        return 0;
    return bn_fail(err, "%s:%zu: key '%s' already given on line %zu",
                   kv->path, again + 2,
                   tsv_cell(&kv->t, again, (size_t)kv->key), first + 2);
}

static int kv_open(const dump_src *src, const char *path, kv_file *kv,
                   bn_error *err)
{
    kv->path = path;
    if (src_tsv(src, path, &kv->t, err) != 0)
        return -1;
    if (tsv_need_column(&kv->t, path, "key", &kv->key, err) != 0 ||
        tsv_need_column(&kv->t, path, "value", &kv->value, err) != 0 ||
        kv_unique(kv, err) != 0) {
        tsv_free(&kv->t);
        return -1;
    }
    return 0;
}

/* The row of key, or -1 when it is absent or "-" (not measured). */
static long kv_row(const kv_file *kv, const char *key)
{
    for (size_t r = 0; r < kv->t.nrow; r++)
        if (strcmp(tsv_cell(&kv->t, r, (size_t)kv->key), key) == 0)
            return strcmp(tsv_cell(&kv->t, r, (size_t)kv->value), "-")
                       ? (long)r
                       : -1;
    return -1;
}

static const char *kv_str(const kv_file *kv, const char *key)
{
    long r = kv_row(kv, key);
    return r < 0 ? NULL : tsv_cell(&kv->t, (size_t)r, (size_t)kv->value);
}

static char *kv_dup(const kv_file *kv, const char *key)
{
    const char *s = kv_str(kv, key);
    char *d = malloc(strlen(s ? s : "-") + 1);
    if (d)
        strcpy(d, s ? s : "-");
    return d;
}

/* A real (NaN when absent), refused when it is there but not a number. */
static int kv_real(const kv_file *kv, const char *key, double *out,
                   bn_error *err)
{
    long r = kv_row(kv, key);
    *out = NAN;
    return r < 0 ? 0
                 : tsv_number(&kv->t, kv->path, (size_t)r, kv->value, out,
                              err);
}

/* A count (0 when absent, unless required). */
static int kv_count(const kv_file *kv, const char *key, int required,
                    size_t *out, bn_error *err)
{
    long r = kv_row(kv, key);
    *out = 0;
    if (r < 0)
        return required ? bn_fail(err, "%s: no '%s' row", kv->path, key) : 0;
    return tsv_count(&kv->t, kv->path, (size_t)r, kv->value, out, err);
}

static int kv_yes(const kv_file *kv, const char *key)
{
    const char *s = kv_str(kv, key);
    return s && strcmp(s, "yes") == 0;
}

int dumpdir_settings(const char *path, dump_settings *s, bn_error *err)
{
    static const dump_src disk = {0};
    kv_file kv;
    if (kv_open(&disk, path, &kv, err) != 0)
        return -1;
    int rc = -1;
    const char *m = kv_str(&kv, "momentum"), *dt = kv_str(&kv, "dtype");
    snprintf(s->dtype, sizeof s->dtype, "%s", dt ? dt : "float64");
    s->recorded = kv_row(&kv, "recorded") >= 0;
    if (!m || kv_row(&kv, "eps") < 0) {
        bn_fail(err, "%s: no %s row", path, m ? "eps" : "momentum");
        goto done;
    }
    s->momentum = NAN;
    if (strcmp(m, "None") != 0 &&
        kv_real(&kv, "momentum", &s->momentum, err) != 0)
        goto done;
    if (kv_real(&kv, "eps", &s->eps, err) != 0)
        goto done;
    if (s->momentum == 0) {
        bn_fail(err, "%s: momentum %s: the buffers never move, so there is "
                     "nothing to replay or run (bnstudy diagnose DIR names "
                     "such a layer frozen)",
                path, m);
        goto done;
    }
    if (!isnan(s->momentum) && !(s->momentum > 0 && s->momentum <= 1)) {
        bn_fail(err, "%s: momentum %s is not in (0, 1]", path, m);
        goto done;
    }
    if (!(s->eps >= 0)) {
        bn_fail(err, "%s:%ld: eps must be >= 0, got %s", path,
                kv_row(&kv, "eps") + 2, kv_str(&kv, "eps"));
        goto done;
    }
    rc = 0;
done:
    tsv_free(&kv.t);
    return rc;
}

/* --------------------------------------------------------------- paths */

static char *path_of(const char *dir, const char *name, const char *ext)
{
    bn_buf b = {0};
    buf_printf(&b, "%s/%s%s", dir, name, ext);
    if (b.failed) {
        buf_free(&b);
        return NULL;
    }
    return b.p;
}

/* A layer name as a file name: a module path, no folder in it. */
static int plain_name(const char *s)
{
    return s[0] && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

/* ---------------------------------------------------------- the layers */

static double *reals(size_t n)
{
    return calloc(n ? n : 1, sizeof(double));
}

/* A column of the statistics file into out (f), or NULL when absent or
 * written "-" (not measured). */
static int stats_column(const tsv_table *t, const char *path,
                        const char *name, int required, double **out,
                        bn_error *err)
{
    int c = tsv_column(t, name);
    *out = NULL;
    if (c < 0 || (t->nrow && strcmp(tsv_cell(t, 0, (size_t)c), "-") == 0))
        return required ? bn_fail(err, "%s: no column '%s'", path, name) : 0;
    if (!(*out = reals(t->nrow)))
        return bn_fail(err, "out of memory");
    for (size_t j = 0; j < t->nrow; j++)
        if (tsv_number(t, path, j, c, &(*out)[j], err) != 0)
            return -1;
    return 0;
}

static int read_stats_file(const dump_src *src, dump_layer *l, int recording,
                           int running_only, bn_error *err);

static int padding_columns(const tsv_table *t, const char *path,
                           dump_layer *l, bn_error *err);

/* A recording's statistics file: where the buffers and the count
 * started (the count is the layer's, on every line); with the batches'
 * lengths (BNRecorder.batch), the real positions' and the padding's
 * statistics as a dump's. */
static int recording_columns(const tsv_table *t, const char *path,
                             dump_layer *l, bn_error *err)
{
    if (stats_column(t, path, "initial_mean", 1, &l->m0, err) ||
        stats_column(t, path, "initial_var", 1, &l->v0, err) ||
        padding_columns(t, path, l, err))
        return -1;
    int c = tsv_column(t, "initial_batches_tracked");
    if (c >= 0 && t->nrow &&
        tsv_count(t, path, 0, c, &l->tracked_before, err) != 0)
        return -1;
    if (l->tracked_before > l->tracked)
        return bn_fail(err, "%s: initial_batches_tracked %zu is more than "
                            "the %zu batches tracked at the end",
                       path, l->tracked_before, l->tracked);
    return 0;
}

/* A dump's with --train-lengths: the real positions' and the padding's
 * statistics, all four or none. */
static int padding_columns(const tsv_table *t, const char *path,
                           dump_layer *l, bn_error *err)
{
    if (stats_column(t, path, "train_real_mean", 0, &l->real_m, err) ||
        stats_column(t, path, "train_real_var", 0, &l->real_v, err) ||
        stats_column(t, path, "train_pad_mean", 0, &l->pad_m, err) ||
        stats_column(t, path, "train_pad_var", 0, &l->pad_v, err) ||
        stats_column(t, path, "train_real_batch_var", 0, &l->real_bv, err))
        return -1;
    int have = !!l->real_m + !!l->real_v + !!l->pad_m + !!l->pad_v +
               !!l->real_bv;
    if (have != 0 && have != 5)
        return bn_fail(err, "%s: train_real_mean, train_real_var, "
                            "train_pad_mean, train_pad_var and "
                            "train_real_batch_var come together",
                       path);
    for (size_t j = 0; have && j < l->f; j++)
        if (!(l->real_v[j] >= 0) || !(l->pad_v[j] >= 0) ||
            !(l->real_bv[j] >= 0))
            return bn_fail(err, "%s:%zu: a variance below 0", path, j + 2);
    return 0;
}

/* A padded share in [0, 1], NaN when absent. */
static int pad_share(const kv_file *kv, const char *key, double *out,
                     bn_error *err)
{
    if (kv_real(kv, key, out, err) != 0)
        return -1;
    if (!isnan(*out) && !(*out >= 0.0 && *out <= 1.0))
        return bn_fail(err, "%s: %s %s is not in [0, 1]", kv->path, key,
                       kv_str(kv, key));
    return 0;
}

/* The positions training mode normalised over: "real", "all", or
 * unknown (absent or "-"). */
static int train_positions(const kv_file *kv, int *out, bn_error *err)
{
    const char *s = kv_str(kv, "train_mode_positions");
    *out = -1;
    if (!s || strcmp(s, "unknown") == 0)
        return 0;
    if (strcmp(s, "real") && strcmp(s, "all"))
        return bn_fail(err, "%s: train_mode_positions '%s' is not real, all "
                            "or unknown",
                       kv->path, s);
    *out = strcmp(s, "real") == 0;
    return 0;
}

/* A dump's: the data's fresh statistics, in both modes. */
static int dump_columns(const tsv_table *t, const char *path, dump_layer *l,
                        bn_error *err)
{
    return stats_column(t, path, "train_mean", 1, &l->tm, err) ||
           stats_column(t, path, "train_var", 1, &l->tv, err) ||
           stats_column(t, path, "train_unit_var", 1, &l->uv, err) ||
           stats_column(t, path, "train_batch_var", 1, &l->bv, err) ||
           stats_column(t, path, "train_eval_mode_mean", 1, &l->tem, err) ||
           stats_column(t, path, "train_eval_mode_var", 1, &l->tev, err) ||
           stats_column(t, path, "eval_mean", 0, &l->em, err) ||
           stats_column(t, path, "eval_var", 0, &l->ev, err) ||
           padding_columns(t, path, l, err);
}

static int read_stats(const dump_src *src, dump_layer *l, int recording,
                      bn_error *err)
{
    return read_stats_file(src, l, recording, 0, err);
}

static int read_running(const dump_src *src, dump_layer *l, bn_error *err)
{
    return read_stats_file(src, l, 0, 1, err);
}

static int read_stats_file(const dump_src *src, dump_layer *l, int recording,
                           int running_only, bn_error *err)
{
    char *path = path_of(src->dir, l->name, ".stats.tsv");
    tsv_table t;
    int rc = -1;
    if (!path)
        return bn_fail(err, "out of memory");
    if (src_tsv(src, path, &t, err) != 0) {
        free(path);
        return -1;
    }
    if (t.nrow != l->f) {
        bn_fail(err, "%s: %zu features, the layer has %zu", path, t.nrow,
                l->f);
        goto done;
    }
    if (stats_column(&t, path, "running_mean", 1, &l->rm, err) ||
        stats_column(&t, path, "running_var", 1, &l->rv, err))
        goto done;
    if (!running_only && (recording ? recording_columns(&t, path, l, err)
                                    : dump_columns(&t, path, l, err)))
        goto done;
    /* The evaluation data's mean and variance come together: the
     * comparison reads both (the fuzz target found one without the
     * other read as a null pointer). */
    if (!l->em != !l->ev) {
        bn_fail(err, "%s: %s without %s", path,
                l->em ? "eval_mean" : "eval_var",
                l->em ? "eval_var" : "eval_mean");
        goto done;
    }
    for (size_t j = 0; j < l->f; j++)
        if (l->rv[j] < 0 || (l->tv && l->tv[j] < 0) ||
            (l->ev && l->ev[j] < 0)) {
            bn_fail(err, "%s:%zu: a variance below 0", path, j + 2);
            goto done;
        }
    rc = 0;
done:
    tsv_free(&t);
    free(path);
    return rc;
}

/* NAME.EXT, of f columns and at least min_rows rows (0: a population's
 * 2). On failure *pf holds nothing, whatever part of it was read, so a
 * caller frees only what was returned whole. */
static int read_npy_rows(const dump_src *src, const char *name, const char *ext,
                         size_t f, size_t min_rows, popfile *pf,
                         bn_error *err)
{
    popfile_options opt = {.format = POPFILE_NPY, .min_rows = min_rows};
    char *path = path_of(src->dir, name, ext);
    unsigned char *bytes;
    size_t len;
    memset(pf, 0, sizeof *pf);
    if (!path)
        return bn_fail(err, "out of memory");
    int rc = src_slurp(src, path, &bytes, &len, err);
    if (rc == 0) {
        rc = popfile_parse(path, bytes, len, &opt, pf, err);
        input_free((char *)bytes, len);
    }
    if (rc == 0 && pf->f != f) {
        rc = bn_fail(err, "%s: %zu columns, the layer has %zu features",
                     path, pf->f, f);
        popfile_free(pf);
        memset(pf, 0, sizeof *pf);
    }
    free(path);
    return rc;
}

static int read_npy(const dump_src *src, const char *name, const char *ext,
                    size_t f, popfile *pf, bn_error *err)
{
    return read_npy_rows(src, name, ext, f, 0, pf, err);
}

/* The batches: a dump's rows and samples per batch with their means; a
 * recording's first_row and rows, with the rows themselves. */
static int read_batches(const dump_src *src, dump_layer *l, int recording,
                        bn_error *err)
{
    char *path = path_of(src->dir, l->name, ".batches.tsv");
    tsv_table t;
    int rc = -1, c_units;
    if (!path)
        return bn_fail(err, "out of memory");
    if (src_tsv(src, path, &t, err) != 0) {
        free(path);
        return -1;
    }
    if (tsv_need_column(&t, path, recording ? "rows" : "samples", &c_units,
                        err) != 0)
        goto done;
    l->n_batches = t.nrow;
    l->bunits = malloc((t.nrow ? t.nrow : 1) * sizeof *l->bunits);
    if (!l->bunits) {
        bn_fail(err, "out of memory");
        goto done;
    }
    /* A recording's shape column, N x C x ...: the samples of a batch. */
    int c_shape = recording ? tsv_column(&t, "shape") : -1;
    size_t samples = 0;
    for (size_t k = 0; k < t.nrow; k++) {
        if (tsv_count(&t, path, k, c_units, &l->bunits[k], err) != 0)
            goto done;
        if (c_shape >= 0)
            samples += strtoul(tsv_cell(&t, k, (size_t)c_shape), NULL, 10);
        if (l->bunits[k] < 1) {
            bn_fail(err, "%s:%zu: a batch of no rows", path, k + 2);
            goto done;
        }
        l->units += l->bunits[k];
    }
    if (recording && t.nrow)
        l->batch_size = (c_shape >= 0 ? samples : l->units) / t.nrow;
    rc = 0;
done:
    tsv_free(&t);
    free(path);
    return rc;
}

static int read_batch_means(const dump_src *src, dump_layer *l, bn_error *err)
{
    popfile pf;
    /* One row a batch: full-batch training has one (the exchange test is
     * then undefined, diag.c). */
    if (read_npy_rows(src, l->name, ".batchmeans.npy", l->f, 1, &pf, err) !=
        0)
        return -1;
    if (pf.n != l->n_batches) {
        popfile_free(&pf);
        return bn_fail(err, "%s/%s.batchmeans.npy: %zu batches, "
                            "%s.batches.tsv %zu",
                       src->dir, l->name, pf.n, l->name, l->n_batches);
    }
    l->bm = pf.x;
    pf.x = NULL;
    popfile_free(&pf);
    return 0;
}

/* A recording's evidence from its rows: the batches' means, and over
 * the last w = 3/p of them (three time constants of the moving average;
 * every batch for a cumulative average) the data as training ended,
 * their moments and mean unbiased variance, and their trend against the
 * moving average's lag for it: a trend of s per update leaves an average
 * of new-value weight p behind by s (1 - p) / p (a cumulative average
 * after T updates by s (T - 1) / 2). */
static void recent_moments(dump_layer *l, size_t k0, size_t j)
{
    size_t f = l->f, first = 0, n = 0;
    for (size_t k = 0; k < k0; k++)
        first += l->bunits[k];
    n = l->n_rows - first;
    pop_moments(n, f, l->x + first * f + j, &l->tm[j], &l->tv[j]);
    double bv = 0.0;
    for (size_t k = k0, r = first; k < l->n_batches; r += l->bunits[k], k++) {
        double m, v, b = (double)l->bunits[k];
        pop_moments(l->bunits[k], f, l->x + r * f + j, &m, &v);
        bv += (b > 1 ? v * b / (b - 1) : 0.0) / (double)(l->n_batches - k0);
    }
    l->bv[j] = bv;
}

static void trend_lag(dump_layer *l, size_t k0, size_t j)
{
    size_t f = l->f, w = l->n_batches - k0;
    double kb = (double)(w - 1) / 2.0, sxy = 0, sxx = 0, my = 0;
    for (size_t k = k0; k < l->n_batches; k++)
        my += l->bm[k * f + j] / (double)w;
    for (size_t k = k0; k < l->n_batches; k++) {
        double dx = (double)(k - k0) - kb;
        sxy += dx * (l->bm[k * f + j] - my);
        sxx += dx * dx;
    }
    double s = sxx > 0 ? sxy / sxx : 0.0;
    double p = isnan(l->momentum) ? 0.0 : l->momentum;
    double behind = p > 0 ? s * (1.0 - p) / p
                          : s * ((double)l->updates - 1.0) / 2.0;
    double sd = sqrt(l->tv[j] + l->eps);
    l->lag[j] = sd > 0 ? -behind / sd : 0.0;
}

static int recording_evidence(const dump_src *src, dump_layer *l, bn_error *err)
{
    popfile pf;
    size_t f = l->f;
    if (read_npy(src, l->name, ".npy", f, &pf, err) != 0)
        return -1;
    if (pf.n != l->units) {
        popfile_free(&pf);
        return bn_fail(err, "%s/%s.npy: %zu rows, %s.batches.tsv %zu", src->dir,
                       l->name, pf.n, l->name, l->units);
    }
    l->x = pf.x;
    l->n_rows = pf.n;
    pf.x = NULL;
    popfile_free(&pf);
    l->tm = reals(f), l->tv = reals(f), l->bv = reals(f), l->lag = reals(f);
    l->bm = reals(l->n_batches * f);
    l->batch_rows = l->bunits;
    if (!l->tm || !l->tv || !l->bv || !l->lag || !l->bm)
        return bn_fail(err, "out of memory");
    if (l->n_rows < 2 || l->n_batches < 1)
        return bn_fail(err, "%s/%s.npy: fewer than 2 rows recorded", src->dir,
                       l->name);
    for (size_t k = 0, first = 0; k < l->n_batches;
         first += l->bunits[k], k++)
        for (size_t j = 0; j < f; j++) {
            double s;
            pop_moments(l->bunits[k], f, l->x + first * f + j,
                        &l->bm[k * f + j], &s);
        }
    double p = isnan(l->momentum) ? 0.0 : l->momentum;
    size_t w = p > 0 ? (size_t)ceil(3.0 / p) : l->n_batches;
    if (w > l->n_batches)
        w = l->n_batches;
    for (size_t j = 0; j < f; j++) {
        recent_moments(l, l->n_batches - w, j);
        trend_lag(l, l->n_batches - w, j);
    }
    return 0;
}

/* dropout_before: the rate of the dropout the dumper saw run before the
 * layer; absent (older dumps, recordings) is none known. */
static int read_dropout(const kv_file *kv, dump_layer *l, bn_error *err)
{
    if (kv_real(kv, "dropout_before", &l->dropout, err) != 0)
        return -1;
    if (isnan(l->dropout) && kv_row(kv, "dropout_before") < 0) {
        l->dropout = 0.0;
        return 0;
    }
    if (!(l->dropout >= 0.0 && l->dropout < 1.0))
        return bn_fail(err, "%s: dropout_before %s is not in [0, 1)",
                       kv->path, kv_str(kv, "dropout_before"));
    return 0;
}

static int read_settings(const dump_src *src, dump_layer *l, int recording,
                         bn_error *err)
{
    char *path = path_of(src->dir, l->name, ".layer.tsv");
    kv_file kv;
    if (!path)
        return bn_fail(err, "out of memory");
    if (kv_open(src, path, &kv, err) != 0) {
        free(path);
        return -1;
    }
    int rc = -1;
    const char *m = kv_str(&kv, "momentum");
    size_t calls = 0, frozen_calls = 0, unmoved = 0;
    if (!m) {
        bn_fail(err, "%s: no 'momentum' row", path);
        goto done;
    }
    if (strcmp(m, "None") == 0)
        l->momentum = NAN;
    else if (kv_real(&kv, "momentum", &l->momentum, err) != 0)
        goto done;
    else if (!(l->momentum >= 0 && l->momentum <= 1)) {
        bn_fail(err, "%s: momentum %s is not in [0, 1]", path, m);
        goto done;
    }
    if (kv_real(&kv, "eps", &l->eps, err) != 0 ||
        kv_count(&kv, "num_batches_tracked", 1, &l->tracked, err) != 0 ||
        kv_count(&kv, "batch_size", 0, &l->batch_size, err) != 0 ||
        kv_count(&kv, "rows_per_sample", 0, &l->rows_per_sample, err) != 0 ||
        kv_count(&kv, "train_samples", 0, &l->train_samples, err) != 0 ||
        kv_count(&kv, "eval_samples", 0, &l->eval_samples, err) != 0 ||
        kv_count(&kv, "training_calls", 0, &calls, err) != 0 ||
        kv_count(&kv, "eval_calls_with_grad", 0, &frozen_calls, err) != 0 ||
        kv_count(&kv, "training_calls_unmoved", 0, &unmoved, err) != 0 ||
        kv_count(&kv, "largest_batch", 0, &l->largest_batch, err) != 0 ||
        read_dropout(&kv, l, err) != 0 ||
        pad_share(&kv, "pad_train_share", &l->pad_train, err) != 0 ||
        pad_share(&kv, "pad_eval_share", &l->pad_eval, err) != 0 ||
        train_positions(&kv, &l->norm_real, err) != 0)
        goto done;
    if (unmoved > calls) {
        bn_fail(err, "%s: training_calls_unmoved %zu is more than the %zu "
                     "training calls",
                path, unmoved, calls);
        goto done;
    }
    if (!(l->eps >= 0)) {
        bn_fail(err, "%s: no 'eps' row", path);
        goto done;
    }
    if (!(l->dtype = kv_dup(&kv, "dtype"))) {
        bn_fail(err, "out of memory");
        goto done;
    }
    l->training_as_saved = kv_yes(&kv, "training_as_saved");
    /* A recording counts the steps directly: each training-mode call is
     * one, and so is each evaluation-mode call made under autograd. */
    if (recording) {
        l->steps = calls + frozen_calls;
        l->calls = calls;
        l->unmoved = unmoved;
        l->eval_grad = frozen_calls;
        l->unmoved_known = kv_row(&kv, "training_calls_unmoved") >= 0;
        if (kv_count(&kv, "eval_calls_without_grad", 0, &l->eval_nograd,
                     err) != 0)
            goto done;
    }
    rc = 0;
done:
    tsv_free(&kv.t);
    free(path);
    return rc;
}

/* A dump's kept rows: the training rows' kurtosis, and with evaluation
 * data the comparisons of compare_eval. */
static int sample_evidence(const dump_src *src, dump_layer *l, bn_error *err)
{
    popfile tr, te, ev;
    size_t f = l->f;
    int rc = -1;
    memset(&te, 0, sizeof te);
    memset(&ev, 0, sizeof ev);
    if (read_npy(src, l->name, ".train.npy", f, &tr, err) != 0)
        return -1;
    if (!(l->kurt = reals(f))) {
        bn_fail(err, "out of memory");
        goto done;
    }
    diag_kurtosis(tr.x, tr.n, f, l->kurt);
    if (!l->em) {
        rc = 0;
        goto done;
    }
    if (read_npy(src, l->name, ".train-eval.npy", f, &te, err) != 0 ||
        read_npy(src, l->name, ".eval.npy", f, &ev, err) != 0)
        goto done;
    double *scratch = reals(te.n + ev.n);
    l->eshift = reals(f), l->escale = reals(f), l->eks = reals(f);
    l->eout = reals(f), l->tout = reals(f);
    if (!scratch || !l->eshift || !l->escale || !l->eks || !l->eout ||
        !l->tout) {
        free(scratch);
        bn_fail(err, "out of memory");
        goto done;
    }
    if (te.n < 2 || ev.n < 2) {
        free(scratch);
        bn_fail(err, "%s/%s: fewer than 2 rows kept of a data set", src->dir,
                l->name);
        goto done;
    }
    /* Samuelson's bound grows with the batch: the largest one's, when the
     * batches were of unequal sizes. */
    size_t rows_each = (l->largest_batch ? l->largest_batch : l->batch_size) *
                       (l->rows_per_sample ? l->rows_per_sample : 1);
    diag_rows rows = {.train = te.x, .n_train = te.n, .eval = ev.x,
                      .n_eval = ev.n, .f = f, .rm = l->rm, .rv = l->rv,
                      .eps = l->eps, .rows_each = rows_each,
                      .train_mean = l->tem, .train_var = l->tev,
                      .eval_mean = l->em, .eval_var = l->ev};
    diag_compare(&rows, scratch, l->eshift, l->escale, l->eks, l->eout,
                 l->tout);
    free(scratch);
    rc = 0;
done:
    popfile_free(&tr);
    popfile_free(&te);
    popfile_free(&ev);
    return rc;
}

/* A layer whose inputs were not taken (TorchScript takes no hooks): the
 * buffers are compared with themselves, so that only their own causes,
 * never filled and frozen, can show. */
static int buffers_only(dump_layer *l, bn_error *err)
{
    l->tm = reals(l->f), l->tv = reals(l->f);
    if (!l->tm || !l->tv)
        return bn_fail(err, "out of memory");
    memcpy(l->tm, l->rm, l->f * sizeof *l->tm);
    memcpy(l->tv, l->rv, l->f * sizeof *l->tv);
    l->updates = l->tracked;
    l->batch_rows = l->bunits; /* a recording's: none kept */
    return 0;
}

static int read_layer(const dump_src *src, const dump_dir *d, dump_layer *l,
                      bn_error *err)
{
    if (!d->hooked) {
        if (read_settings(src, l, 0, err) != 0)
            return -1;
        l->steps = d->steps;
        return read_running(src, l, err) || buffers_only(l, err);
    }
    if (read_settings(src, l, d->recording, err) != 0 ||
        read_stats(src, l, d->recording, err) != 0 ||
        read_batches(src, l, d->recording, err) != 0)
        return -1;
    if (!d->recording) {
        if (!d->steps)
            l->steps = 0;
        else
            l->steps = d->steps;
        l->updates = l->tracked;
        l->fresh_fixed = 1;
        return read_batch_means(src, l, err) ||
               sample_evidence(src, l, err);
    }
    l->recorded = 1;
    /* (1 - p)^T counts every batch the buffers ever tracked; the values
     * the recording began from are their origin only when it began with
     * none tracked (else the origin is PyTorch's 0 and 1). */
    l->updates = l->tracked;
    if (l->tracked_before > 0) {
        free(l->m0), free(l->v0);
        l->m0 = l->v0 = NULL;
    }
    /* No training-mode call kept (every call in evaluation mode): only
     * the buffers' own causes can show, frozen above all. */
    if (l->units == 0)
        return buffers_only(l, err);
    if (recording_evidence(src, l, err) != 0)
        return -1;
    if (!(l->kurt = reals(l->f)))
        return bn_fail(err, "out of memory");
    diag_kurtosis(l->x, l->n_rows, l->f, l->kurt);
    return 0;
}

/* ------------------------------------------------------- the whole dump */

static int read_model(const dump_src *src, dump_dir *d, bn_error *err)
{
    char *path = path_of(src->dir, "model", ".tsv");
    kv_file kv;
    if (!path)
        return bn_fail(err, "out of memory");
    if (kv_open(src, path, &kv, err) != 0) {
        free(path);
        return -1;
    }
    int rc = -1;
    const char *fmt = kv_str(&kv, "format"), *kind = kv_str(&kv, "kind");
    if (!fmt || strcmp(fmt, "bnstudy-dump 2") != 0 || !kind ||
        (strcmp(kind, "dump") && strcmp(kind, "recording"))) {
        bn_fail(err, "%s: not a dump of scripts/dump_bn_inputs.py (format "
                     "'bnstudy-dump 2', kind dump or recording)",
                path);
        goto done;
    }
    d->recording = strcmp(kind, "recording") == 0;
    d->model = kv_dup(&kv, "model");
    d->loaded = kv_dup(&kv, "loaded");
    d->notes = kv_dup(&kv, "notes");
    d->batches_file = kv_dup(&kv, "batches_file");
    if (!d->model || !d->loaded || !d->notes || !d->batches_file) {
        bn_fail(err, "out of memory");
        goto done;
    }
    d->weights_moved = kv_yes(&kv, "weights_moved");
    const char *hooked = kv_str(&kv, "inputs_hooked");
    d->hooked = !hooked || strcmp(hooked, "no") != 0;
    if (kv_count(&kv, "steps", 0, &d->steps, err) != 0 ||
        kv_count(&kv, "batch_size", 0, &d->batch_size, err) != 0 ||
        kv_count(&kv, "train_rows", 0, &d->train_rows, err) != 0 ||
        kv_count(&kv, "eval_rows", 0, &d->eval_rows, err) != 0 ||
        kv_count(&kv, "max_rows", 0, &d->max_rows, err) != 0 ||
        kv_real(&kv, "train_mode_accuracy", &d->train_acc, err) != 0 ||
        kv_real(&kv, "eval_mode_accuracy", &d->eval_acc, err) != 0 ||
        kv_real(&kv, "batch_dependence", &d->batch_dependence, err) != 0 ||
        kv_real(&kv, "majority_rate", &d->majority, err) != 0 ||
        kv_count(&kv, "devices", 0, &d->devices, err) != 0 ||
        kv_real(&kv, "sync_mode_accuracy", &d->sync_acc, err) != 0 ||
        kv_count(&kv, "dropout_before_bn", 0, &d->dropout, err) != 0 ||
        kv_real(&kv, "label_exchange", &d->label_exchange, err) != 0)
        goto done;
    if (!(isnan(d->label_exchange) || d->label_exchange >= 0.0)) {
        bn_fail(err, "%s: label_exchange %s is not a ratio >= 0", path,
                kv_str(&kv, "label_exchange"));
        goto done;
    }
    rc = 0;
done:
    tsv_free(&kv.t);
    free(path);
    return rc;
}

static int read_fixes(const dump_src *src, dump_dir *d, bn_error *err)
{
    for (int f = 0; f < DIAG_N_FIXES; f++)
        d->fix_acc[f] = NAN;
    if (d->recording)
        return 0;
    char *path = path_of(src->dir, "fixes", ".tsv");
    tsv_table t;
    int c_fix, c_acc, rc = -1;
    if (!path)
        return bn_fail(err, "out of memory");
    if (src_tsv(src, path, &t, err) != 0) {
        free(path);
        return -1;
    }
    if (tsv_need_column(&t, path, "fix", &c_fix, err) != 0 ||
        tsv_need_column(&t, path, "eval_mode_accuracy", &c_acc, err) != 0)
        goto done;
    for (size_t r = 0; r < t.nrow; r++) {
        const char *name = tsv_cell(&t, r, (size_t)c_fix);
        int f = 1;
        while (f < DIAG_N_FIXES && strcmp(diag_fix_name(f), name))
            f++;
        if (f == DIAG_N_FIXES) {
            bn_fail(err, "%s:%zu: no fix '%s'", path, r + 2, name);
            goto done;
        }
        if (strcmp(tsv_cell(&t, r, (size_t)c_acc), "-") &&
            tsv_number(&t, path, r, c_acc, &d->fix_acc[f], err) != 0)
            goto done;
    }
    rc = 0;
done:
    tsv_free(&t);
    free(path);
    return rc;
}

static int read_layers(const dump_src *src, dump_dir *d, bn_error *err)
{
    char *path = path_of(src->dir, "layers", ".tsv");
    tsv_table t;
    int c_name, c_type, c_f, rc = -1;
    if (!path)
        return bn_fail(err, "out of memory");
    if (src_tsv(src, path, &t, err) != 0) {
        free(path);
        return -1;
    }
    if (tsv_need_column(&t, path, "layer", &c_name, err) != 0 ||
        tsv_need_column(&t, path, "type", &c_type, err) != 0 ||
        tsv_need_column(&t, path, "features", &c_f, err) != 0)
        goto done;
    if (t.nrow < 1) {
        bn_fail(err, "%s: no layer", path);
        goto done;
    }
    d->layers = calloc(t.nrow, sizeof *d->layers);
    if (!d->layers) {
        bn_fail(err, "out of memory");
        goto done;
    }
    for (size_t r = 0; r < t.nrow; r++) {
        /* Counted before it is filled, so that dumpdir_free frees what a
         * refusal part way leaves (the fuzz target found the leak). */
        dump_layer *l = &d->layers[d->n++];
        const char *name = tsv_cell(&t, r, (size_t)c_name);
        const char *type = tsv_cell(&t, r, (size_t)c_type);
        if (!plain_name(name)) {
            bn_fail(err, "%s:%zu: '%s' is not a layer name", path, r + 2,
                    name);
            goto done;
        }
        l->name = malloc(strlen(name) + 1);
        l->type = malloc(strlen(type) + 1);
        if (!l->name || !l->type) {
            bn_fail(err, "out of memory");
            goto done;
        }
        strcpy(l->name, name);
        strcpy(l->type, type);
        if (tsv_count(&t, path, r, c_f, &l->f, err) != 0)
            goto done;
        if (l->f < 1) {
            bn_fail(err, "%s:%zu: a layer of no features", path, r + 2);
            goto done;
        }
    }
    rc = 0;
done:
    tsv_free(&t);
    free(path);
    return rc;
}

int dumpdir_read(const char *dir, dump_dir *d, bn_error *err)
{
    const dump_src disk = {.dir = dir};
    return dumpdir_read_src(&disk, d, err);
}

int dumpdir_read_files(const char *dir, const dump_file *files, size_t n,
                       dump_dir *d, bn_error *err)
{
    const dump_src mem = {.dir = dir, .mem = 1, .files = files, .n = n};
    return dumpdir_read_src(&mem, d, err);
}

static int dumpdir_read_src(const dump_src *src, dump_dir *d, bn_error *err)
{
    memset(d, 0, sizeof *d);
    if (read_model(src, d, err) != 0 || read_fixes(src, d, err) != 0 ||
        read_layers(src, d, err) != 0)
        return -1;
    for (size_t i = 0; i < d->n; i++)
        if (read_layer(src, d, &d->layers[i], err) != 0)
            return -1;
    return 0;
}

static void layer_free(dump_layer *l)
{
    void *p[] = {l->name, l->type, l->dtype, l->rm, l->rv, l->m0, l->v0,
                 l->tm, l->tv, l->uv, l->em, l->ev, l->bm, l->bunits,
                 l->lag, l->x, l->kurt, l->eshift, l->escale, l->eks,
                 l->eout, l->tout, l->tem, l->tev, l->bv, l->real_m,
                 l->real_v, l->pad_m, l->pad_v, l->real_bv};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++)
        free(p[i]);
}

void dumpdir_free(dump_dir *d)
{
    for (size_t i = 0; i < d->n; i++)
        layer_free(&d->layers[i]);
    free(d->layers);
    free(d->model);
    free(d->loaded);
    free(d->notes);
    free(d->batches_file);
    memset(d, 0, sizeof *d);
}

const dump_layer *dumpdir_find(const dump_dir *d, const char *name)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->layers[i].name, name) == 0)
            return &d->layers[i];
    return NULL;
}

void dumpdir_evidence(const dump_layer *l, diag_layer *in)
{
    int cumulative = isnan(l->momentum);
    memset(in, 0, sizeof *in);
    in->f = l->f;
    in->running_mean = l->rm;
    in->running_var = l->rv;
    in->init_mean = l->m0;
    in->init_var = l->v0;
    in->train_mean = l->tm;
    in->train_var = l->tv;
    in->target_var = l->bv;
    in->batch_means = diag_exchange_means(l->bm, l->recorded);
    in->batch_units = l->bunits;
    in->n_batches = l->n_batches;
    in->units = l->units;
    in->unit_var = l->uv;
    in->updates = l->updates;
    in->tracked = l->tracked;
    in->steps = l->steps;
    /* A recording's steps tracked a batch where its count moved and the
     * buffers did: the rest of the count is not the steps'. */
    if (l->recorded) {
        size_t counted = l->tracked - l->tracked_before;
        size_t moved = l->calls - l->unmoved;
        in->tracked_before = l->tracked - (moved < counted ? moved : counted);
    }
    in->fresh_fixed = l->fresh_fixed;
    in->p = cumulative ? 1.0 : l->momentum;
    in->cumulative = cumulative;
    in->eps = l->eps;
    in->trend_lag = l->lag;
    in->dropout = l->dropout;
    in->batch_samples = l->batch_size;
    in->train_samples = l->train_samples;
    in->eval_samples = l->eval_samples;
    in->kurtosis = l->kurt;
    in->eval_shift = l->eshift;
    in->eval_scale = l->escale;
    in->eval_ks = l->eks;
    in->eval_out = l->eout;
    in->real_mean = l->real_m;
    in->real_var = l->real_v;
    in->pad_mean = l->pad_m;
    in->pad_var = l->pad_v;
    in->pad_train = l->pad_train;
    in->pad_eval = l->pad_eval;
    in->real_target = l->real_bv;
    in->norm_real = l->real_m ? l->norm_real : -1;
    in->train_out = l->tout;
}
