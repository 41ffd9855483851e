/*
 * How much one shuffle can be trusted: when an experiment sweeps many
 * seeds, its configurations are summarised across the seeds, per
 * configuration (everything but the seed):
 *   distribution.tsv  mean, sd, 5th, 50th and 95th percentiles of every
 *                     score the score table marks as summarised
 *   expectation.tsv   for orders under which every permutation is equally
 *                     likely, the closed-form E[mean_err^2] (expect.h)
 *                     beside its Monte Carlo estimate over the seeds, with
 *                     the standard error and z
 * and table.md shows mean [p5, p95] in place of single values. What
 * fraction of the seeds a claim holds in is the verifier's `fraction`
 * test (verify.h), read from summary.tsv.
 */
#ifndef BN_DIST_H
#define BN_DIST_H

#include <stdio.h>

#include "base/buf.h"
#include "base/common.h"
#include "study/exp.h"
#include "pop/pop.h"
#include "model/run.h"

typedef struct {
    double mean, sd, p05, p50, p95;
} dist_summary;

/* Summarise v[0..n-1]: the mean, the sd (divisor n - 1, 0 for one
 * value) and GSL's quantiles (linear between order statistics). v may
 * come back in another order. */
dist_summary dist_summarise(double *v, size_t n);

/* The summaries of a sweep's configurations, taken in their order (a
 * group of every batch size and seed of one setting of the other axes is
 * contiguous: exp_index), so that only one group is held at a time.
 * models is the mask of the models trained (out.h). */
typedef struct dist_acc_s dist_acc;
dist_acc *dist_new(const exp_t *e, unsigned models, const pop_t *pop);
void dist_free(dist_acc *a);
/* The bytes dist_new holds, for the sweep's memory estimate. */
size_t dist_bytes(const exp_t *e);
/* The header lines of the wanted files (NULL: not wanted). */
void dist_headers(const dist_acc *a, bn_buf *dist, bn_buf *expect,
                  bn_buf *table);
/* Configuration k, the next in order, and its result; when k completes
 * its group, the group's rows are appended to the wanted files. */
int dist_add(dist_acc *a, size_t k, const run_config *cfg,
             const run_result *res, bn_buf *dist, bn_buf *expect,
             bn_buf *table, bn_error *err);

#endif
