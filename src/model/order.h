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
 *   by-label          the rows of a population read from a file grouped
 *   by-group          by its label (or group) column: the classes in their
 *                     index order (popfile.h), each shuffled inside
 *   shuffled-samples  whole samples of a feature-map population (pop.h's
 *                     sample_rows) shuffled, each sample's rows together
 *                     in their own order (convpop_order_groups); on plain
 *                     rows, one row a sample, it is shuffled
 * Stable means ties keep their enumerated order. Shuffles draw from
 * PCG32(seed, 2), group by group for grouped:K, by-label and by-group, so
 * grouped:1 is shuffled.
 */
#ifndef BN_ORDER_H
#define BN_ORDER_H

#include <stdint.h>

#include "base/common.h"
#include "pop/pop.h"

/* What follows the colon of a name, or what the name needs. */
typedef enum {
    ORDER_ARG_NONE,    /* "shuffled" */
    ORDER_ARG_LABEL,   /* "by-label": the population's label column */
    ORDER_ARG_GROUP,   /* "by-group": the population's group column */
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
    /* Keeps each sample of a feature-map population whole, its rows
     * consecutive and in their own order: a batch of B samples is B H W
     * consecutive rows. */
    int whole_samples;
    /* perm[0..n-1] starts as the identity; rearrange it. */
    int (*make)(const struct order_spec *o, const pop_t *pop, uint64_t seed,
                size_t *perm, bn_error *err);
    /* The batches it makes, in a sentence (figure titles and keys): a
     * plural noun phrase, %s the argument (a feature's name, "the first
     * feature" when the optional one is left out, or K). */
    const char *phrase;
} order_def;

typedef struct order_spec {
    const order_def *def;
    size_t feature;    /* ORDER_ARG_FEATURE */
    size_t groups;     /* ORDER_ARG_COUNT */
    size_t batch_size; /* interleaved needs it; the caller sets it */
    const char *name;  /* as written, for the files: the table's own
                        * string for a name without an argument, else the
                        * string given to order_parse, which must then
                        * outlive the spec */
} order_spec;

/* Parse an order name against the population's features and columns
 * (only its n, f, names, label and group columns are read, so a shape
 * without rows will do). */
int order_parse(const char *name, const pop_t *pop, order_spec *order,
                bn_error *err);
/* Fill perm[0..n-1] with the order's permutation of the rows. */
int order_make(const order_spec *order, const pop_t *pop, uint64_t seed,
               size_t *perm, bn_error *err);
/* The names an order can have, "as-is, shuffled, sorted, sorted:NAME, ..."
 * with sep between them, for help texts and messages. */
const char *order_list(const char *sep, char *buf, size_t cap);
/* The table, for whoever builds controls from it: row i, NULL past it. */
const order_def *order_get(size_t i);
/* An order's name as a results file writes it ("sorted:worst area"), in
 * the words of its row's phrase ("batches sorted by worst area"), into
 * buf; a name of no row is copied as it is. Needs no population. */
const char *order_phrase(const char *name, char *buf, size_t cap);

#endif
