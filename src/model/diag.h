/*
 * The diagnosis: why a batch-norm layer's running statistics, from a run or
 * from a real checkpoint, disagree with the activations they should
 * describe, feature by feature, named in words. A pure function: it reads
 * the activations in the order the batches arrived and the layer's state,
 * and fills one record per feature; printing is the caller's.
 *
 * The causes, their tests and their thresholds are one table (diag.c);
 * docs/diagnose.md gives the reasons for each number.
 */
#ifndef BN_DIAG_H
#define BN_DIAG_H

#include <stddef.h>

#include "base/common.h"

/* In the order they are tried: the first that applies is the cause. */
typedef enum {
    DIAG_FEW_UPDATES,
    DIAG_NOT_EXCHANGEABLE,
    DIAG_NEAR_CONSTANT,
    DIAG_FAR_FROM_INIT,
    DIAG_OTHER,
    DIAG_CLEAN,
    DIAG_N_CAUSES
} diag_cause;

typedef struct {
    diag_cause cause;
    const char *name;      /* one word, for machines: "few-updates" */
    const char *words;     /* the cause in a sentence */
    const char *threshold; /* the test, in words */
} diag_cause_info;

/* The thresholds (docs/diagnose.md). Statistics are "off" when evaluation
 * shifts a feature's output by more than DIAG_OFF of its spread, or
 * scales it by a factor more than DIAG_OFF from 1. */
#define DIAG_OFF 0.1
#define DIAG_INIT_WEIGHT 0.05 /* too few updates: (1-p)^T above this */
#define DIAG_EXCHANGE 4.0     /* batch means spread 4x what random would */
#define DIAG_AMPLIFY 100.0    /* near-constant: 1/sqrt(var + eps) above */

const diag_cause_info *diag_cause_get(diag_cause c);

typedef struct {
    size_t n, f;
    const double *x;     /* n x f activations, rows in arrival order */
    size_t batch;        /* B: consecutive rows per batch, the last may be
                          * partial */
    const double *running_mean, *running_var; /* f each */
    const double *init_mean, *init_var; /* f each, or NULL for 0 and 1 */
    size_t updates;      /* T: updates the running statistics have seen */
    double p;            /* the new value's weight, in (0, 1]; for a
                          * cumulative average (momentum=None) pass 1: the
                          * initial values keep no weight */
    double eps;
    /* Optional: batches of unequal sizes, the rows of each in turn,
     * n_batches of them summing to n (then batch is not read); NULL for
     * batches of `batch` rows. */
    const size_t *batch_rows;
    size_t n_batches;
} diag_input;

typedef struct {
    double true_mean, true_var; /* the activations' own (divisor n) */
    double running_mean, running_var;
    /* What evaluation does to the feature's output, against training on
     * the whole population: shifts it by `shift` of its spread and scales
     * it by `scale`.
     *   shift = (rm - mu) / sqrt(v + eps)
     *   scale = sqrt((v + eps) / (rv + eps)) */
    double shift, scale;
    size_t updates;
    double init_weight; /* (1-p)^T */
    /* The same two for running statistics that only the initial values
     * pull away from the truth: w m0 + (1-w) mu and w v0 + (1-w) v. */
    double init_shift, init_scale;
    /* The batch means' spread about mu against random batches of the
     * same sizes from these n rows: sum_k (m_k - mu)^2 over
     * sum_k v/b_k (n-b_k)/(n-1). NaN when it is undefined (one batch of
     * every row, or a constant feature). */
    double exchange;
    double amplification; /* 1/sqrt(v + eps) */
    unsigned flags;       /* bit c for every cause c that applies */
    diag_cause cause;     /* the first of them in table order */
} diag_feature;

/* Fill out[0..f-1]; refuse inconsistent input with a message. */
int diag_run(const diag_input *in, diag_feature *out, bn_error *err);

#endif
