/*
 * The rows a model is evaluated on, made from the population it trains
 * on: the population stage of the run pipeline (run.h). Three steps, each
 * a plain function of its inputs, so a sweep makes them once and every
 * run sees the same rows:
 *
 *   split   a population file's held-out rows: per class, a seeded
 *           shuffle of the class's rows, of which the first
 *           floor(holdout n_c + 1/2) are held out; the rest train. Both
 *           parts keep the file's row order and know each row's origin.
 *   match   a second file's rows (`[evaluation] file`) made comparable to
 *           the training rows: the same features in the same order, its
 *           classes numbered as the training rows number them.
 *   shift   each feature moved by shift standard deviations and by an
 *           absolute offset, and its spread scaled:
 *           x' = mu + shift sd + scale (x - mu) + offset, with mu and sd
 *           the rows' own mean and standard deviation (divisor n).
 *
 * A generated population's held-out rows are a second draw of its recipe
 * (pop.h). docs/definitions.md defines each step to the letter.
 */
#ifndef BN_EVALPOP_H
#define BN_EVALPOP_H

#include <stdint.h>

#include "base/common.h"
#include "pop/pop.h"

/* The held-out count of a class of n rows: floor(holdout n + 1/2). */
size_t evalpop_held_count(size_t n, double holdout);
/* Split pop into train and held (both freed by the caller with pop_free,
 * also on failure): stratified by its label column when it has one, else
 * one stratum; the shuffles draw from PCG32(seed, PCG32_INITSEQ_SPLIT),
 * class by class in index order. Refused when either part would have
 * fewer than two rows. */
int evalpop_split(const pop_t *pop, double holdout, uint64_t seed,
                  pop_t *train, pop_t *held, bn_error *err);
/* Make eval comparable to train: the same feature names in the same
 * order, and eval's label levels renumbered to train's (a level train
 * does not have is refused). name is eval's file, for messages. */
int evalpop_match(const pop_t *train, pop_t *eval, const char *name,
                  bn_error *err);
/* out = base with every feature shifted and scaled (scale > 0), its
 * labels, groups, origins and samples kept; its truth is recomputed from
 * its rows. */
int evalpop_shift(const pop_t *base, double shift, double scale,
                  double offset, pop_t *out, bn_error *err);

#endif
