/* The bare kernel of kernel.h, two features at a time (base/pair.h) as
 * bnstudy's layer is, every sum in the order bnstudy keeps. */
#include "kernel.h"

#include <math.h>
#include <string.h>

#include "base/pair.h"
#include "base/rand.h"
#include "base/pcg32.h"

size_t kernel_scratch_bytes(size_t n, size_t f, size_t b)
{
    /* the order, each batch's mean and sd, and three sums per feature */
    return n * sizeof(size_t) + (2 * (n / b) * f + 3 * f) * sizeof(double);
}

/* One batch's statistics, feature pair by pair over the rows (the last
 * odd feature alone): the mean and biased variance by the corrected two
 * pass formula, as bnstudy's layer has them, into m and v. */
static void batch_stats(const double *x, const size_t *rows, size_t b,
                        size_t f, double *m, double *v)
{
    pair_t nb = pair_dup((double)b);
    size_t j = 0;
    for (; j + 1 < f; j += 2) {
        pair_t s = pair_dup(0.0), s1 = s, s2 = s;
        PAIR_UNROLL2
        for (size_t i = 0; i < b; i++)
            s = pair_add(s, pair_load(&x[rows[i] * f + j]));
        pair_t mm = pair_div(s, nb);
        PAIR_UNROLL2
        for (size_t i = 0; i < b; i++) {
            pair_t d = pair_sub(pair_load(&x[rows[i] * f + j]), mm);
            s1 = pair_add(s1, d);
            s2 = pair_add(s2, pair_mul(d, d));
        }
        pair_store(m + j, pair_add(mm, pair_div(s1, nb)));
        pair_store(v + j, pair_div(pair_sub(s2, pair_div(pair_mul(s1, s1),
                                                         nb)),
                                   nb));
    }
    for (; j < f; j++) {
        double s = 0.0, s1 = 0.0, s2 = 0.0;
        for (size_t i = 0; i < b; i++)
            s += x[rows[i] * f + j];
        double mm = s / (double)b;
        for (size_t i = 0; i < b; i++) {
            double d = x[rows[i] * f + j] - mm;
            s1 += d;
            s2 += d * d;
        }
        m[j] = mm + s1 / (double)b;
        v[j] = (s2 - s1 * s1 / (double)b) / (double)b;
    }
}

/* The squared gaps between the two modes' outputs of one batch, added
 * to sq row by row, each row's features in order. */
static double batch_gaps(const double *x, const size_t *rows, size_t b,
                         size_t f, const double *m, const double *sd,
                         const double *rm, const double *s,
                         const kernel_layer *l, double sq)
{
    pair_t g = pair_dup(l->gamma), be = pair_dup(l->beta);
    for (size_t i = 0; i < b; i++) {
        const double *r = &x[rows[i] * f];
        size_t j = 0;
        PAIR_UNROLL2
        for (; j + 1 < f; j += 2) {
            pair_t v = pair_load(r + j);
            pair_t t = pair_add(
                pair_mul(g, pair_div(pair_sub(v, pair_load(m + j)),
                                     pair_load(sd + j))),
                be);
            pair_t e = pair_add(
                pair_mul(g, pair_div(pair_sub(v, pair_load(rm + j)),
                                     pair_load(s + j))),
                be);
            pair_t d = pair_sub(t, e), q = pair_mul(d, d);
            sq += pair_lo(q);
            sq += pair_hi(q);
        }
        for (; j < f; j++) {
            double t = l->gamma * ((r[j] - m[j]) / sd[j]) + l->beta;
            double e = l->gamma * ((r[j] - rm[j]) / s[j]) + l->beta;
            sq += (t - e) * (t - e);
        }
    }
    return sq;
}

void kernel_run(const double *x, size_t n, size_t f, const double *mu,
                const double *var, size_t b, uint64_t seed,
                const kernel_layer *l, void *scratch, kernel_out *out)
{
    size_t nb = n / b, *perm = scratch;
    double *stats = (double *)(perm + n), *s = stats + 2 * nb * f;
    double *vs = s + f, *rm = out->rm, *rv = out->rv;
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    pcg32_t rng;
    pcg32_seed(&rng, seed, PCG32_INITSEQ_SHUFFLE);
    rand_shuffle(&rng, perm, n);
    for (size_t j = 0; j < f; j++)
        rm[j] = 0.0, rv[j] = 1.0;

    double dm2 = 0.0, dv2 = 0.0;
    for (size_t k = 0; k < nb; k++) {
        double *m = stats + 2 * k * f, *sd = m + f;
        batch_stats(x, perm + k * b, b, f, m, vs);
        for (size_t j = 0; j < f; j++) {
            double mean = m[j], v = vs[j];
            sd[j] = sqrt(v + l->eps);
            rm[j] = l->keep * rm[j] + l->p * mean;
            rv[j] = l->keep * rv[j] + l->p * v;
            dm2 += (mean - mu[j]) * (mean - mu[j]);
            dv2 += (v - var[j]) * (v - var[j]);
        }
    }

    for (size_t j = 0; j < f; j++)
        s[j] = sqrt(rv[j] + l->eps);
    double sq = 0.0;
    for (size_t k = 0; k < nb; k++) {
        const double *m = stats + 2 * k * f, *sd = m + f;
        sq = batch_gaps(x, perm + k * b, b, f, m, sd, rm, s, l, sq);
    }
    out->train_eval_rmse = sqrt(sq / (double)(nb * b * f));
    out->batch_mean_err = sqrt(dm2 / (double)(nb * f));
    out->batch_var_err = sqrt(dv2 / (double)(nb * f));
}

const char *kernel_differs(const kernel_out *out, size_t f, const double *rm,
                           const double *rv, double train_eval_rmse,
                           double batch_mean_err, double batch_var_err)
{
    size_t bytes = f * sizeof(double);
    return memcmp(out->rm, rm, bytes) ? "running_mean"
           : memcmp(out->rv, rv, bytes) ? "running_var"
           : out->train_eval_rmse != train_eval_rmse ? "train_eval_rmse"
           : out->batch_mean_err != batch_mean_err ? "batch_mean_err"
           : out->batch_var_err != batch_var_err ? "batch_var_err"
                                                 : NULL;
}
