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

#include "common.h"
#include "exp.h"
#include "pop.h"
#include "run.h"

typedef struct {
    double mean, sd, p05, p50, p95;
} dist_summary;

/* Sort v[0..n-1] and summarise it: the mean, the sd (divisor n - 1, 0 for
 * one value) and GSL's quantiles (linear between order statistics). */
dist_summary dist_summarise(double *v, size_t n);

/* res[k] is the result of exp_config(e, k); models the mask of the
 * models trained (out.h). Any of the files may be NULL (not wanted). */
int dist_write(const exp_t *e, unsigned models, const pop_t *pop,
               const run_config *cfgs,
               const run_result *res, FILE *dist, FILE *expect,
               FILE *table, bn_error *err);

#endif
