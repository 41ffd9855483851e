/*
 * Drift during training (issue 14, docs/expectation.md): the statistics of
 * the training stream move while the buffers are being filled. Update t
 * (t = 1 for the first) trains on its batch shifted by drift_fraction(t)
 * times a per-feature offset delta_j:
 *   none         0 throughout
 *   step:T0      0 for t <= T0, then 1: a new source arrives at once
 *   ramp:T0:T1   0 for t <= T0, (t - T0) / (T1 - T0) up to T1, then 1
 * The truth a run is scored against after training is the stream as it is
 * at the last update: the population shifted by that update's fraction.
 */
#ifndef BN_DRIFT_H
#define BN_DRIFT_H

#include <stddef.h>

#include "base/common.h"

typedef enum { DRIFT_NONE, DRIFT_STEP, DRIFT_RAMP } drift_kind;

typedef struct {
    drift_kind kind;
    size_t t0, t1; /* t1 for ramp only */
} drift_spec;

/* "none", "step:T0" or "ramp:T0:T1" with T0 < T1. */
int drift_parse(const char *s, drift_spec *d, bn_error *err);
/* The name drift_parse reads back. */
const char *drift_name(const drift_spec *d, char *buf, size_t cap);
/* The fraction of delta update t (>= 1) sees, in [0, 1]: a quotient of
 * two integers, rounded once. */
double drift_fraction(const drift_spec *d, size_t t);

#endif
