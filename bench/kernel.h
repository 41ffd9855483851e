/*
 * The yardstick of `make bench`: one configuration of the default study
 * (a shuffled order, one epoch, the last partial batch dropped, the ema
 * estimator with the biased variance) written as bare loops: no
 * observers, no table of estimators or models, no checks of the
 * settings. Two entry points share the loops: kernel_run computes the
 * scores alone (the buffers, train_eval_rmse, the batch errors), and
 * kernel_run_all also what bnstudy writes of the configuration beside
 * them: the self-checks (props_pass, props_total), the gap per feature
 * and the final buffers' errors. Both compute the bits bnstudy's layer computes
 * (tests/test_bench.c holds them to that), so that the time bnstudy
 * takes beyond them is what its structure costs. It is not part of the
 * program.
 */
#ifndef BN_BENCH_KERNEL_H
#define BN_BENCH_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "model/config.h"

typedef struct {
    double gamma, beta, eps;
    double keep, p; /* old-value and new-value weights (bn.h) */
} kernel_layer;

typedef struct {
    double *rm, *rv; /* F each, the caller's */
    double train_eval_rmse, batch_mean_err, batch_var_err;
    /* kernel_run_all's alone: the RMS per feature of the two modes'
     * gap (F, the caller's: features.tsv's train_eval_rmse), the
     * self-checks passed and made, and the final buffers' scores against
     * the truth (summary.tsv's, as score.h's score_buffers has them) */
    double *gap;
    size_t props_pass, props_total;
    size_t updates, worst_var_feature;
    double init_weight, stats_err, mean_err, var_err, worst_var_err;
    double stats_err_rel, worst_var_rel;
} kernel_out;

/* The bytes of scratch either entry point needs for n rows of f
 * features at batch size b. */
size_t kernel_scratch_bytes(size_t n, size_t f, size_t b);

/* Train on the n x f row-major rows x in the order PCG32 (seed, the
 * shuffle stream) shuffles them, batch size b; mu and var are the rows'
 * truth (pop.h), for the batch errors. */
void kernel_run(const double *x, size_t n, size_t f, const double *mu,
                const double *var, size_t b, uint64_t seed,
                const kernel_layer *l, void *scratch, kernel_out *out);

/* The same, and the self-checks, the gap per feature and the buffers'
 * errors. */
void kernel_run_all(const double *x, size_t n, size_t f, const double *mu,
                    const double *var, size_t b, uint64_t seed,
                    const kernel_layer *l, void *scratch, kernel_out *out);

/* NULL when out holds bnstudy's numbers of res, bit for bit (with all,
 * kernel_run_all's too); else the name of the first that differs. */
const char *kernel_differs(const kernel_out *out, size_t f, int all,
                           const run_result *res);

#endif
