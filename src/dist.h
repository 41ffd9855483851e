/*
 * How much one shuffle can be trusted: when an experiment sweeps many
 * seeds, its configurations are summarised across the seeds, per
 * configuration (everything but the seed):
 *   distribution.tsv  mean, sd, 5th, 50th and 95th percentiles of each score
 *   expectation.tsv   for shuffled order, the closed-form E[mean_err^2]
 *                     (expect.h) beside its Monte Carlo estimate over the
 *                     seeds, with the standard error and z
 *   seed-claims.tsv   in what fraction of the seeds each batch-size claim
 *                     holds (is 256 worse than 8 in every shuffle, or only
 *                     on average?)
 * and table.md shows mean [p5, p95] in place of single values, followed by
 * the seed claims' table.
 */
#ifndef BN_DIST_H
#define BN_DIST_H

#include <stdio.h>

#include "common.h"
#include "exp.h"
#include "pop.h"
#include "run.h"

/* res[k] is the result of exp_config(e, k). */
int dist_write(const exp_t *e, const pop_t *pop, const run_config *cfgs,
               const run_result *res, FILE *dist, FILE *expect,
               FILE *claims, FILE *table, bn_error *err);

#endif
