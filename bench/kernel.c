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
    /* the order, each batch's mean, variance and sd, the buffers' sd,
     * the rows' addresses in order */
    return n * sizeof(size_t) + (3 * (n / b) * f + f) * sizeof(double) +
           n * sizeof(const double *);
}

/* One batch's statistics, feature pair by pair over the rows (the last
 * odd feature alone): the mean and biased variance by the corrected two
 * pass formula, as bnstudy's layer has them, into m and v. */
static void batch_stats(const double *const *at, size_t b, size_t f,
                        double *m, double *v)
{
    pair_t nb = pair_dup((double)b);
    size_t j = 0;
    for (; j + 1 < f; j += 2) {
        pair_t s = pair_dup(0.0), s1 = s, s2 = s;
        PAIR_UNROLL2
        for (size_t i = 0; i < b; i++)
            s = pair_add(s, pair_load(at[i] + j));
        pair_t mm = pair_div(s, nb);
        PAIR_UNROLL2
        for (size_t i = 0; i < b; i++) {
            pair_t d = pair_sub(pair_load(at[i] + j), mm);
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
            s += at[i][j];
        double mm = s / (double)b;
        for (size_t i = 0; i < b; i++) {
            double d = at[i][j] - mm;
            s1 += d;
            s2 += d * d;
        }
        m[j] = mm + s1 / (double)b;
        v[j] = (s2 - s1 * s1 / (double)b) / (double)b;
    }
}

/* The squared gaps between the two modes' outputs of one batch, added
 * to sq row by row, each row's features in order. */
static double batch_gaps(const double *const *at, size_t b, size_t f,
                          const double *m, const double *sd,
                         const double *rm, const double *s,
                         const kernel_layer *l, double sq)
{
    pair_t g = pair_dup(l->gamma), be = pair_dup(l->beta);
    for (size_t i = 0; i < b; i++) {
        const double *r = at[i];
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

/* What each of nb batches leaves once its statistics are made (batch
 * k's mean, variance and sd k stride further), batch by batch and
 * feature pair by pair (the last odd feature alone): its sd beside the
 * statistics, the buffers' ema update, and the squared errors of its
 * statistics against the truth, added to dm2 and dv2 in the batches'
 * and the features' order. */
static void updates(const kernel_layer *l, size_t f, size_t nb,
                    size_t stride, double *m, const double *mu,
                    const double *var, double *restrict rm,
                    double *restrict rv, double *dm2, double *dv2)
{
    double sm = *dm2, sv = *dv2;
    pair_t k2 = pair_dup(l->keep), p2 = pair_dup(l->p), e2 = pair_dup(l->eps);
    for (size_t k = 0; k < nb; k++, m += stride) {
        const double *v = m + f;
        double *sd = m + 2 * f;
        size_t j = 0;
        for (; j + 1 < f; j += 2) {
            pair_t mm = pair_load(m + j), vv = pair_load(v + j);
            pair_store(sd + j, pair_sqrt(pair_add(vv, e2)));
            pair_store(rm + j, pair_add(pair_mul(k2, pair_load(rm + j)),
                                        pair_mul(p2, mm)));
            pair_store(rv + j, pair_add(pair_mul(k2, pair_load(rv + j)),
                                        pair_mul(p2, vv)));
            pair_t dm = pair_sub(mm, pair_load(mu + j));
            pair_t dv = pair_sub(vv, pair_load(var + j));
            pair_t qm = pair_mul(dm, dm), qv = pair_mul(dv, dv);
            sm += pair_lo(qm);
            sm += pair_hi(qm);
            sv += pair_lo(qv);
            sv += pair_hi(qv);
        }
        for (; j < f; j++) {
            sd[j] = sqrt(v[j] + l->eps);
            rm[j] = l->keep * rm[j] + l->p * m[j];
            rv[j] = l->keep * rv[j] + l->p * v[j];
            sm += (m[j] - mu[j]) * (m[j] - mu[j]);
            sv += (v[j] - var[j]) * (v[j] - var[j]);
        }
    }
    *dm2 = sm, *dv2 = sv;
}

void kernel_run(const double *x, size_t n, size_t f, const double *mu,
                const double *var, size_t b, uint64_t seed,
                const kernel_layer *l, void *scratch, kernel_out *out)
{
    /* each batch's mean, variance and sd, side by side */
    size_t nb = n / b, *perm = scratch, stride = 3 * f;
    double *stats = (double *)(perm + n), *s = stats + nb * stride;
    double *rm = out->rm, *rv = out->rv;
    const double **at = (const double **)(void *)(s + f);
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    pcg32_t rng;
    pcg32_seed(&rng, seed, PCG32_INITSEQ_SHUFFLE);
    rand_shuffle(&rng, perm, n);
    for (size_t i = 0; i < n; i++)
        at[i] = x + perm[i] * f;
    for (size_t j = 0; j < f; j++)
        rm[j] = 0.0, rv[j] = 1.0;

    for (size_t k = 0; k < nb; k++) {
        double *m = stats + k * stride;
        batch_stats(at + k * b, b, f, m, m + f);
    }
    /* then every batch's update, in order: a batch's statistics read
     * nothing the updates write */
    double dm2 = 0.0, dv2 = 0.0;
    updates(l, f, nb, stride, stats, mu, var, rm, rv, &dm2, &dv2);

    for (size_t j = 0; j < f; j++)
        s[j] = sqrt(rv[j] + l->eps);
    double sq = 0.0;
    for (size_t k = 0; k < nb; k++) {
        const double *m = stats + k * stride, *sd = m + 2 * f;
        sq = batch_gaps(at + k * b, b, f, m, sd, rm, s, l, sq);
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
