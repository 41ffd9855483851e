/*
 * Orders: the permutation of the population's rows a run trains on, whose
 * consecutive chunks of B rows are the batches.
 *   as-is             the enumerated order 0..N-1
 *   shuffled          Fisher-Yates (gsl_ran_shuffle) from PCG32(seed, 2)
 *   sorted            stable ascending by the first feature
 *   sorted:NAME       stable ascending by feature NAME
 *   sorted-desc:NAME  stable descending by feature NAME
 *   grouped:K         K contiguous groups of the enumerated (latent) order,
 *                     in that order, each shuffled inside: rows that arrive
 *                     grouped by class, user or time
 *   interleaved       stratified: batch k of B rows takes the rows at
 *                     evenly spaced ranks k, k + nb, k + 2 nb, ... of the
 *                     order sorted by the first feature (nb batches)
 * Stable means ties keep their enumerated order. Shuffles draw from
 * PCG32(seed, 2), group by group for grouped:K, so grouped:1 is shuffled.
 */
#ifndef BN_ORDER_H
#define BN_ORDER_H

#include <stdint.h>

#include "common.h"
#include "pop.h"

typedef enum {
    ORDER_AS_IS,
    ORDER_SHUFFLED,
    ORDER_SORTED,
    ORDER_GROUPED,
    ORDER_INTERLEAVED,
} order_kind;

typedef struct {
    order_kind kind;
    int descending;
    size_t feature;
    size_t groups;     /* grouped:K */
    size_t batch_size; /* interleaved needs it; the caller sets it */
} order_spec;

/* Parse an order name against the population's features. */
int order_parse(const char *name, const pop_spec *pop, order_spec *order,
                bn_error *err);
/* Fill perm[0..n-1] with the order's permutation of the rows. */
int order_make(const order_spec *order, const pop_t *pop, uint64_t seed,
               size_t *perm, bn_error *err);

#endif
