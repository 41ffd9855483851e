/* The bare kernel of kernel.h. */
#include "kernel.h"

#include <math.h>
#include <string.h>

#include "base/rand.h"
#include "base/pcg32.h"

size_t kernel_scratch_bytes(size_t n, size_t f, size_t b)
{
    /* the order, each batch's mean and sd, and three sums per feature */
    return n * sizeof(size_t) + (2 * (n / b) * f + 3 * f) * sizeof(double);
}

void kernel_run(const double *x, size_t n, size_t f, const double *mu,
                const double *var, size_t b, uint64_t seed,
                const kernel_layer *l, void *scratch, kernel_out *out)
{
    size_t nb = n / b, *perm = scratch;
    double *stats = (double *)(perm + n), *s = stats + 2 * nb * f;
    double *s1 = s + f, *s2 = s1 + f, *rm = out->rm, *rv = out->rv;
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    pcg32_t rng;
    pcg32_seed(&rng, seed, PCG32_INITSEQ_SHUFFLE);
    rand_shuffle(&rng, perm, n);
    for (size_t j = 0; j < f; j++)
        rm[j] = 0.0, rv[j] = 1.0;

    double dm2 = 0.0, dv2 = 0.0;
    for (size_t k = 0; k < nb; k++) {
        const size_t *rows = perm + k * b;
        double *m = stats + 2 * k * f, *sd = m + f;
        for (size_t j = 0; j < f; j++)
            s[j] = s1[j] = s2[j] = 0.0;
        for (size_t i = 0; i < b; i++)
            for (size_t j = 0; j < f; j++)
                s[j] += x[rows[i] * f + j];
        for (size_t j = 0; j < f; j++)
            m[j] = s[j] / (double)b;
        for (size_t i = 0; i < b; i++)
            for (size_t j = 0; j < f; j++) {
                double d = x[rows[i] * f + j] - m[j];
                s1[j] += d;
                s2[j] += d * d;
            }
        for (size_t j = 0; j < f; j++) {
            double mean = m[j] + s1[j] / (double)b;
            double v = (s2[j] - s1[j] * s1[j] / (double)b) / (double)b;
            m[j] = mean;
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
        const size_t *rows = perm + k * b;
        const double *m = stats + 2 * k * f, *sd = m + f;
        for (size_t i = 0; i < b; i++)
            for (size_t j = 0; j < f; j++) {
                double v = x[rows[i] * f + j];
                double t = l->gamma * ((v - m[j]) / sd[j]) + l->beta;
                double e = l->gamma * ((v - rm[j]) / s[j]) + l->beta;
                sq += (t - e) * (t - e);
            }
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
