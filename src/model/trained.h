/*
 * Classifiers trained once for several configurations: configurations
 * that differ only in [evaluation] (the held-out rows' shift, scale and
 * offset) train the same network on the same rows in the same order, so
 * a sweep keeps what each training left after every epoch (the
 * parameters and buffers the scores read, and the scores that do not
 * read the evaluation rows) and the next such configuration scores its
 * own evaluation rows on them instead of training again
 * (classifier.c). The bytes are those of training again: the same
 * parameters, scored by the same code.
 */
#ifndef BN_TRAINED_H
#define BN_TRAINED_H

#include <stddef.h>

#include "model/config.h"
#include "model/net.h"
#include "pop/pop.h"

/* One training: after each epoch it was scored at, the parameters and
 * buffers as the scores saw them and those scores. */
typedef struct trained_run trained_run;

/* The trainings a sweep keeps, up to a budget of bytes. A sweep's
 * threads share it through lock and unlock (NULL for one thread). */
typedef struct trained_cache trained_cache;

trained_cache *trained_new(size_t max_bytes, void (*lock)(void *),
                           void (*unlock)(void *), void *lock_ctx);
void trained_free(trained_cache *c);

/* The training of cfg on the rows of train, kept, or NULL. A kept run is
 * not changed or freed before the cache is. */
const trained_run *trained_find(trained_cache *c, const run_config *cfg,
                                const pop_t *train);

/* A run being recorded for cfg on train, the epochs it will be scored at
 * (net's parameters and buffers sized as net has them); NULL when out of
 * memory or past the budget (nothing is then kept). */
trained_run *trained_begin(trained_cache *c, const run_config *cfg,
                           const pop_t *train, const net_t *net);
/* Epoch epoch's parameters and buffers from net and its scores r. */
void trained_epoch(trained_run *t, unsigned long epoch, const net_t *net,
                   const run_result *r);
/* Keep t (when every epoch was recorded and ok) or drop it. */
void trained_end(trained_cache *c, trained_run *t, int ok);

/* The epochs t recorded; epoch i's number, its scores, and its
 * parameters and buffers put into net (a net of the same shape). */
size_t trained_epochs(const trained_run *t);
unsigned long trained_epoch_at(const trained_run *t, size_t i,
                               run_result *r, net_t *net);

#endif
