/*
 * The batch-norm layer's state as plain values: its settings (bn_config),
 * its per-feature parameters and buffers (bn_layer), the estimators' ids
 * (each a row of estimator.c's table) and the one expression every output
 * is computed with. bn.h's operations and estimator.h's updates both work
 * on these, so neither needs the other's header for them.
 */
#ifndef BN_BNLAYER_H
#define BN_BNLAYER_H

#include <math.h>
#include <stddef.h>

#include "base/common.h"
#include "base/prefetch.h"

/* The estimators of the evaluation statistics, in estimator.c's table
 * order: a new one is a value here, before BN_EST_COUNT, and a row there. */
typedef enum {
    BN_EST_EMA,          /* the exponential moving average frameworks use */
    BN_EST_EMA_DEBIASED, /* the same from zero, divided by 1 - (1-p)^t */
    BN_EST_CUMULATIVE,   /* equal weights: factor 1/t (momentum=None) */
    BN_EST_PRECISE,      /* recomputed after training from pooled samples */
    BN_EST_INITIAL,      /* never updated: the initial 0 and 1 (buffers a
                          * checkpoint was loaded without) */
    BN_EST_ADAPTIVE,     /* recomputed after training on the evaluation
                          * rows ("adaptive" batch norm) */
    BN_EST_COUNT
} bn_estimator;

typedef enum { BN_WEIGHTS_OLD, BN_WEIGHTS_NEW } bn_weights;
typedef enum { BN_VAR_BIASED, BN_VAR_UNBIASED } bn_variance;

typedef struct bn_config {
    double momentum;    /* as the user wrote it */
    bn_weights weights; /* which convention momentum is in */
    double p;           /* weight on the new value */
    double keep;        /* weight on the old value, 1 - p in decimal */
    bn_variance variance;
    bn_estimator estimator;
    double gamma, beta, eps;
    /* Data parallel over `devices` (1: one): each normalises its share of
     * a batch by its own statistics and the buffers follow device 0's,
     * unless `sync` (SyncBatchNorm), when the statistics are the whole
     * batch's, as on one device. */
    size_t devices;
    int sync;
} bn_config;

/* Per feature, arrays of f values in one allocation (bn_init), so the
 * layer has as many features as it is given. A copy of the struct shares
 * them: use bn_copy. */
typedef struct bn_layer {
    size_t f;
    double *gamma, *beta;
    double *rm, *rv;       /* what eval uses */
    double *acc_m, *acc_v; /* debiased EMA */
    double *upd_v;         /* the variance an update takes, scratch */
    double acc_w;  /* the debiased average's total weight, 1 - keep^t */
    double eps, p, keep;
    bn_variance variance;
    bn_estimator estimator;
    size_t updates;
    size_t ghosts; /* devices with statistics of their own (bn_ghosts) */
    double *block; /* the allocation the arrays live in */
} bn_layer;

/* Every output of the layer is this expression of an input x, a mean m
 * and a variance v (the batch's in train mode, the buffers in eval mode):
 * gamma ((x - m) / sqrt(v + eps)) + beta, in that order of operations, so
 * that the same inputs give the same bits wherever it is computed. */
static inline double bn_sd(double v, double eps) { return sqrt(v + eps); }
static inline double bn_normalize_value(double x, double m, double sd,
                                        double gamma, double beta)
{
    return gamma * ((x - m) / sd) + beta;
}

#endif
