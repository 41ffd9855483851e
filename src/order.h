/*
 * Orders: the permutation of the population's rows a run trains on, whose
 * consecutive chunks of B rows are the batches. Each order is one row of
 * the table in order.c (name, argument, help text, how it is made and
 * whether every permutation is equally likely under it, which the closed
 * form of expect.h needs). A name is parsed once, when an experiment file
 * or an option is read, into an order_spec that runs carry.
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

/* What follows the colon of a name. */
typedef enum {
    ORDER_ARG_NONE,    /* "shuffled" */
    ORDER_ARG_FEATURE, /* "sorted:NAME", a feature of the population */
    ORDER_ARG_COUNT,   /* "grouped:K", an integer from 1 to the rows */
} order_arg;

struct order_spec;

typedef struct {
    const char *name;
    order_arg arg;
    int arg_optional; /* the name alone is allowed too (first feature) */
    const char *help;
    /* Every permutation equally likely: the closed form applies. */
    int uniform;
    /* perm[0..n-1] starts as the identity; rearrange it. */
    int (*make)(const struct order_spec *o, const pop_t *pop, uint64_t seed,
                size_t *perm, bn_error *err);
} order_def;

typedef struct order_spec {
    const order_def *def;
    size_t feature;    /* ORDER_ARG_FEATURE */
    size_t groups;     /* ORDER_ARG_COUNT */
    size_t batch_size; /* interleaved needs it; the caller sets it */
    char name[64];     /* as written, for the files */
} order_spec;

/* Parse an order name against the population's features. */
int order_parse(const char *name, const pop_spec *pop, order_spec *order,
                bn_error *err);
/* Fill perm[0..n-1] with the order's permutation of the rows. */
int order_make(const order_spec *order, const pop_t *pop, uint64_t seed,
               size_t *perm, bn_error *err);
/* The names an order can have, "as-is, shuffled, sorted, sorted:NAME, ..."
 * with sep between them, for help texts and messages. */
const char *order_list(const char *sep, char *buf, size_t cap);
/* The table, for whoever builds controls from it: row i, NULL past it. */
const order_def *order_get(size_t i);

#endif
