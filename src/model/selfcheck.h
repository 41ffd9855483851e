/*
 * The arithmetic of the self-checks that depend on a training batch's
 * values (score.h's score_checks says what they check), for two features
 * and for one: score_checks runs them on sums it is handed, and the
 * layer's pass over a batch (batchpass.c) on the sums it holds in
 * registers as the batch's last rows are added, where the batch's
 * variance plus eps is at hand already (the outputs' sd is its square
 * root). One definition, so that both count alike.
 */
#ifndef BN_SELFCHECK_H
#define BN_SELFCHECK_H

#include <math.h>

#include "base/pair.h"

/* What the checks of features j, j + 1 take of their gamma (g) and
 * beta (be) alone, the same for every batch: g^2 and the mean's
 * tolerance. */
typedef struct {
    pair_t gg, tol_m;
} selfcheck_consts;

static inline selfcheck_consts selfcheck_pair_consts(pair_t g, pair_t be)
{
    selfcheck_consts k = {
        pair_mul(g, g),
        pair_mul(pair_dup(1e-9), pair_add(pair_abs(g), pair_abs(be)))};
    return k;
}

/* Features j, j + 1: k their constants (selfcheck_pair_consts), be their
 * beta, sv the batch's biased variance and ve sv + eps, a1 and a2 the
 * sums of y - beta and (y - beta)^2 over the batch's rows, inv_b 1/b.
 * About beta, the mean the output should have: where it has it these
 * are the two-pass formula's, and where it misses the mean check fails
 * anyway. inv_b is a check's, not a result's: no result's bits depend on
 * it. Returns t with each lane's passed checks added (pair_tally_sum
 * counts them). */
static inline pair_tally_t selfcheck_pair_with(pair_tally_t t,
                                               selfcheck_consts k, pair_t be,
                                               pair_t sv, pair_t ve,
                                               pair_t a1, pair_t a2,
                                               pair_t inv_b)
{
    pair_t m = pair_add(be, pair_mul(a1, inv_b));
    pair_t v =
        pair_mul(pair_sub(a2, pair_mul(pair_mul(a1, a1), inv_b)), inv_b);
    pair_t want_v = pair_div(pair_mul(k.gg, sv), ve);
    pair_t tol_v =
        pair_add(pair_mul(pair_dup(1e-9), want_v), pair_dup(1e-12));
    t = pair_tally_le(t, pair_abs(pair_sub(m, be)), k.tol_m);
    return pair_tally_le(t, pair_abs(pair_sub(v, want_v)), tol_v);
}

/* The same with g and be (their constants made here). */
static inline pair_tally_t selfcheck_pair(pair_tally_t t, pair_t g,
                                          pair_t be, pair_t sv, pair_t ve,
                                          pair_t a1, pair_t a2, pair_t inv_b)
{
    return selfcheck_pair_with(t, selfcheck_pair_consts(g, be), be, sv, ve,
                               a1, a2, inv_b);
}

/* The same for one feature: how many of its two checks pass. */
static inline int selfcheck_one(double g, double be, double sv, double ve,
                                double a1, double a2, double inv_b)
{
    double m = be + a1 * inv_b;
    double v = (a2 - a1 * a1 * inv_b) * inv_b;
    double want_v = g * g * sv / ve;
    return (fabs(m - be) <= 1e-9 * (fabs(g) + fabs(be))) +
           (fabs(v - want_v) <= 1e-9 * want_v + 1e-12);
}

#endif
