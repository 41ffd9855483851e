/*
 * The layer as plain loops, in the style of llm.c's layernorm_forward.
 */
#include "model/bn.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/carve.h"
#include "model/batchpass.h"

static double decimal_complement(double x);

double bn_decimal_complement(double x)
{
    /* A sweep sets the momentum of every configuration, nearly always to
     * the one before's: the last answer is kept, per thread, as the
     * function has one answer per x. */
    static _Thread_local double last_x = 0.0, last = 1.0;
    if (memcmp(&x, &last_x, sizeof x) != 0) {
        last = decimal_complement(x);
        last_x = x;
    }
    return last;
}

static double decimal_complement(double x)
{
    /* A user who writes momentum 0.9 means the decimal 0.9, whose
     * complement is the decimal 0.1; in binary 1 - 0.9 is 0.0999...978,
     * one ulp-scale step away from the double 0.1. Subtracting the
     * shortest decimal that reads back as x, digit by digit, makes the two
     * conventions agree exactly. */
    char buf[64];
    int prec;
    for (prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    char digits[32];
    size_t nd = 0;
    const char *s = buf;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9')
            digits[nd++] = *s;
    long e = strtol(s + 1, NULL, 10);
    long k = e - (long)(nd - 1); /* x = digits * 10^k */
    if (!(x > 0.0 && x < 1.0) || k >= 0 || -k > 400)
        return 1.0 - x;
    size_t m = (size_t)(-k); /* 1 = 10^m * 10^k, and digits < 10^m */
    char diff[512];
    int borrow = 0;
    /* 10^m - digits, computed on m digits from the right. */
    for (size_t i = 0; i < m; i++) {
        int d = i < nd ? digits[nd - 1 - i] - '0' : 0;
        int r = 0 - d - borrow;
        borrow = r < 0;
        diff[m - 1 - i] = (char)('0' + (r + 10 * borrow));
    }
    snprintf(diff + m, sizeof diff - m, "e-%zu", m);
    return strtod(diff, NULL);
}

int bn_set_momentum(bn_config *cfg, double momentum, bn_weights w,
                    bn_error *err)
{
    if (!(momentum > 0.0 && momentum <= 1.0))
        return bn_fail(err, "momentum must be in (0, 1], got %g", momentum);
    cfg->momentum = momentum;
    cfg->weights = w;
    if (w == BN_WEIGHTS_NEW) {
        cfg->p = momentum;
        cfg->keep = bn_decimal_complement(momentum);
    } else {
        cfg->keep = momentum;
        cfg->p = bn_decimal_complement(momentum);
    }
    return 0;
}

int bn_check(const bn_config *cfg, bn_field *field, bn_error *err)
{
    bn_field f = BN_FIELD_MOMENTUM;
    int rc = -1;
    if (!(cfg->momentum > 0.0 && cfg->momentum <= 1.0))
        bn_fail(err, "momentum must be in (0, 1], got %g", cfg->momentum);
    else if ((unsigned)cfg->estimator >= BN_EST_COUNT)
        f = BN_FIELD_ESTIMATOR,
        bn_fail(err, "no estimator numbered %d", (int)cfg->estimator);
    else if (bn_estimator_get(cfg->estimator)->validate &&
             bn_estimator_get(cfg->estimator)->validate(cfg, err) != 0)
        f = BN_FIELD_MOMENTUM; /* the estimators judge the weight p */
    else if (!isfinite(cfg->gamma))
        f = BN_FIELD_GAMMA, bn_fail(err, "gamma must be finite");
    else if (!isfinite(cfg->beta))
        f = BN_FIELD_BETA, bn_fail(err, "beta must be finite");
    else if (!(isfinite(cfg->eps) && cfg->eps > 0.0))
        f = BN_FIELD_EPS,
        bn_fail(err, "eps must be finite and > 0, got %g", cfg->eps);
    else
        rc = 0;
    if (rc != 0 && field)
        *field = f;
    return rc;
}

int bn_validate(const bn_config *cfg, bn_error *err)
{
    return bn_check(cfg, NULL, err);
}

static const char *const weights_names[] = {"old", "new"};
static const char *const variance_names[] = {"biased", "unbiased"};

static int lookup(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

const char *bn_weights_name(int w)
{
    return w >= 0 && w < 2 ? weights_names[w] : NULL;
}

const char *bn_variance_name(int v)
{
    return v >= 0 && v < 2 ? variance_names[v] : NULL;
}

const char *bn_sync_name(int v)
{
    static const char *const names[] = {"no", "yes"};
    return v >= 0 && v < 2 ? names[v] : NULL;
}

int bn_weights_parse(const char *s, bn_weights *w)
{
    int i = lookup(s, weights_names, 2);
    if (i >= 0)
        *w = (bn_weights)i;
    return i >= 0 ? 0 : -1;
}

int bn_variance_parse(const char *s, bn_variance *v)
{
    int i = lookup(s, variance_names, 2);
    if (i >= 0)
        *v = (bn_variance)i;
    return i >= 0 ? 0 : -1;
}


/* The arrays of a layer of f features, carved from its block: under
 * AddressSanitizer each is followed by a poisoned gap (base/carve.h), so
 * an index past one array's end is caught rather than landing in the
 * next. */
#define BN_ARRAYS 7

/* Where a layer keeps its arrays' pointers: the one list of them that
 * carving and copying share. */
static void layer_arrays(bn_layer *layer, double **p[BN_ARRAYS])
{
    double **list[BN_ARRAYS] = {&layer->gamma, &layer->beta, &layer->rm,
                                &layer->rv,    &layer->acc_m, &layer->acc_v,
                                &layer->upd_v};
    memcpy(p, list, sizeof list);
}

/* layer's arrays of f features each, zeroed, and the block they share;
 * nothing else of layer is touched. */
static int carve_arrays(bn_layer *layer, size_t f)
{
    if (f == 0)
        return -1;
    double **arrays[BN_ARRAYS];
    size_t counts[BN_ARRAYS];
    layer_arrays(layer, arrays);
    for (size_t a = 0; a < BN_ARRAYS; a++)
        counts[a] = f;
    layer->block = bn_carve_doubles(BN_ARRAYS, arrays, counts);
    if (!layer->block)
        return -1;
    layer->f = f;
    return 0;
}

static int alloc_layer(bn_layer *layer, size_t f)
{
    memset(layer, 0, sizeof *layer);
    return carve_arrays(layer, f);
}

int bn_init(bn_layer *layer, size_t f, const bn_config *cfg)
{
    if (alloc_layer(layer, f) != 0)
        return -1;
    for (size_t j = 0; j < f; j++) {
        layer->gamma[j] = cfg->gamma;
        layer->beta[j] = cfg->beta;
        layer->rm[j] = 0.0;
        layer->rv[j] = 1.0;
    }
    layer->acc_w = 0.0;
    layer->eps = cfg->eps;
    layer->p = cfg->p;
    layer->keep = cfg->keep;
    layer->variance = cfg->variance;
    layer->estimator = cfg->estimator;
    layer->ghosts = cfg->sync || cfg->devices < 1 ? 1 : cfg->devices;
    return 0;
}

int bn_copy(bn_layer *dst, const bn_layer *src)
{
    /* src's settings, then arrays of the copy's own with src's values,
     * array by array: the gaps between them are not to be read */
    bn_layer copy = *src, from = *src;
    if (carve_arrays(&copy, src->f) != 0) {
        memset(dst, 0, sizeof *dst);
        return -1;
    }
    double **to[BN_ARRAYS], **of[BN_ARRAYS];
    layer_arrays(&copy, to);
    layer_arrays(&from, of);
    for (size_t a = 0; a < BN_ARRAYS; a++)
        memcpy(*to[a], *of[a], src->f * sizeof(double));
    *dst = copy;
    return 0;
}

void bn_free(bn_layer *layer)
{
    free(layer->block);
    memset(layer, 0, sizeof *layer);
}

/* The per-feature loops below run over a block of features at a time,
 * rows outside and features inside, so that memory is read in the order
 * it is laid out; each feature's sums still run over the rows in order,
 * so the bits are those of a loop over one column. */
#define BN_BLOCK 128

static const double *row_at(const double *x, const size_t *rows, size_t i,
                            size_t f)
{
    return x + (rows ? rows[i] : i) * f;
}

void bn_batch_stats_rows(size_t b, size_t ahead, size_t f, const double *x,
                         const size_t *rows, const double *shift,
                         double *mean, double *var)
{
    /* Corrected two-pass: the first mean's rounding (large when the mean
     * dwarfs the spread) is measured by the residuals' sum and removed
     * from both the mean and the variance (batchpass.c, two features at a
     * time). */
    bp_rows r = {b, f, ahead, rows && ahead > 0, x, rows, shift, NULL};
    bp_stats(&r, 1, mean, var);
}

void bn_batch_stats(size_t b, size_t f, const double *x, double *mean,
                    double *var)
{
    bn_batch_stats_rows(b, 0, f, x, NULL, NULL, mean, var);
}

void bn_normalize_rows(const bn_layer *layer, size_t b, const double *x,
                       const size_t *rows, const double *shift,
                       const double *mean, const double *var, double *y)
{
    size_t f = layer->f;
    double sd[BN_BLOCK];
    for (size_t j0 = 0; j0 < f; j0 += BN_BLOCK) {
        size_t nj = f - j0 < BN_BLOCK ? f - j0 : BN_BLOCK;
        const double *m = mean + j0, *g = layer->gamma + j0,
                     *be = layer->beta + j0;
        for (size_t j = 0; j < nj; j++)
            sd[j] = bn_sd(var[j0 + j], layer->eps);
        for (size_t i = 0; i < b; i++) {
            const double *r = row_at(x, rows, i, f) + j0;
            double *out = y + i * f + j0;
            if (shift)
                for (size_t j = 0; j < nj; j++)
                    out[j] = bn_normalize_value(r[j] + shift[j0 + j], m[j],
                                                sd[j], g[j], be[j]);
            else
                for (size_t j = 0; j < nj; j++)
                    out[j] = bn_normalize_value(r[j], m[j], sd[j], g[j],
                                                be[j]);
        }
    }
}

void bn_update(bn_layer *l, size_t b, const double *mean,
               const double *var)
{
    l->updates++;
    l->acc_w = l->keep * l->acc_w + l->p;
    const double *v = var;
    if (l->variance == BN_VAR_UNBIASED) {
        double *u = l->upd_v;
        for (size_t j = 0; j < l->f; j++)
            u[j] = var[j] * (double)b / (double)(b - 1);
        v = u;
    }
    bn_estimator_get(l->estimator)->update(l, mean, v);
}

void bn_update_batches(bn_layer *l, size_t b, size_t nb, size_t stride,
                       const double *mean, const double *var)
{
    const bn_estimator_def *est = bn_estimator_get(l->estimator);
    if (!est->update_batches || l->variance == BN_VAR_UNBIASED) {
        for (size_t q = 0; q < nb; q++)
            bn_update(l, b, mean + q * stride, var + q * stride);
        return;
    }
    for (size_t q = 0; q < nb; q++)
        l->acc_w = l->keep * l->acc_w + l->p;
    l->updates += nb;
    est->update_batches(l, nb, stride, mean, var);
}

void bn_batch_forward(const bn_layer *layer, size_t b, const double *x,
                      double *y, double *mean, double *var)
{
    bn_batch_stats(b, layer->f, x, mean, var);
    bn_normalize_rows(layer, b, x, NULL, NULL, mean, var, y);
}

void bn_train_forward(bn_layer *layer, size_t b, const double *x, double *y,
                      double *mean, double *var)
{
    bn_batch_forward(layer, b, x, y, mean, var);
    bn_update(layer, b, mean, var);
}

void bn_eval_forward(const bn_layer *layer, size_t b, const double *x,
                     double *y)
{
    bn_normalize_rows(layer, b, x, NULL, NULL, layer->rm, layer->rv, y);
}
