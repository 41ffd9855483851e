/*
 * The yardstick of `make bench`: one configuration of the default study
 * (a shuffled order, one epoch, the last partial batch dropped, the ema
 * estimator with the biased variance) written as bare loops, with nothing
 * but what the scores need: no self-checks, no observers, no table of
 * estimators or models, no checks of the settings. It computes the bits
 * bnstudy's layer computes (tests/test_bench.c holds it to that), so that
 * the time bnstudy takes beyond it is what its structure costs. It is not
 * part of the program.
 */
#ifndef BN_BENCH_KERNEL_H
#define BN_BENCH_KERNEL_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    double gamma, beta, eps;
    double keep, p; /* old-value and new-value weights (bn.h) */
} kernel_layer;

typedef struct {
    double *rm, *rv; /* F each, the caller's */
    double train_eval_rmse, batch_mean_err, batch_var_err;
} kernel_out;

/* The bytes of scratch kernel_run needs for n rows of f features at
 * batch size b. */
size_t kernel_scratch_bytes(size_t n, size_t f, size_t b);

/* Train on the n x f row-major rows x in the order PCG32 (seed, the
 * shuffle stream) shuffles them, batch size b; mu and var are the rows'
 * truth (pop.h), for the batch errors. */
void kernel_run(const double *x, size_t n, size_t f, const double *mu,
                const double *var, size_t b, uint64_t seed,
                const kernel_layer *l, void *scratch, kernel_out *out);

/* NULL when out holds these numbers, bit for bit; else the name of the
 * first that differs. */
const char *kernel_differs(const kernel_out *out, size_t f, const double *rm,
                           const double *rv, double train_eval_rmse,
                           double batch_mean_err, double batch_var_err);

#endif
