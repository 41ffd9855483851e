/*
 * Batch compositions: the batches a row could share with other rows, for
 * the batch-dependence scores (docs/definitions.md, "Batch dependence").
 * A row's training-mode output moves with the rows beside it in its
 * batch; these scores run the model on many batches of B rows and keep,
 * per row and output, the smallest and largest value it took. Where the
 * B-subsets of the n rows are few (at most the sampled plan's batches)
 * every one is formed, in lexicographic order: the scores are then exact.
 * Otherwise `samples` shuffles of the rows are drawn from PCG32(seed,
 * PCG32_INITSEQ_COMPOSE), each cut into floor(n / B) batches of B rows
 * (its last n mod B rows wait for the next shuffle). No GSL: the web
 * page shares it.
 */
#ifndef BN_COMPOSE_H
#define BN_COMPOSE_H

#include <stddef.h>
#include <stdint.h>

#include "base/common.h"

/* The batches a plan forms: C(n, b) when enumerated, else samples
 * floor(n / b). *enumerated says which. 0 when b < 2 or b > n. */
size_t compose_batches(size_t n, size_t b, size_t samples, int *enumerated);

/* Called once per batch of b rows (indices into the n rows). */
typedef int (*compose_fn)(void *ctx, size_t b, const size_t *rows,
                          bn_error *err);

/* Every batch of the plan, in order, to fn; -1 when fn fails or memory
 * runs out. */
int compose_each(size_t n, size_t b, size_t samples, uint64_t seed,
                 compose_fn fn, void *ctx, bn_error *err);

/* Per row and output (w of them), the range a value took in each mode. */
typedef struct {
    size_t n, w;
    double *lo, *hi, *elo, *ehi; /* n x w each: train mode, eval mode */
    size_t *seen;                /* batches each row was in */
} compose_spread;

int compose_spread_init(compose_spread *s, size_t n, size_t w);
void compose_spread_free(compose_spread *s);
/* Row r's outputs in one batch: train mode y, eval mode e (w each). */
void compose_spread_add(compose_spread *s, size_t r, const double *y,
                        const double *e);
/* Over the rows seen in two batches or more: the largest hi - lo over
 * rows and outputs; the mean over rows of a row's largest; the largest
 * ehi - elo. All 0 when no row was seen twice. */
void compose_spread_scores(const compose_spread *s, double *worst,
                           double *mean, double *worst_eval);

#endif
