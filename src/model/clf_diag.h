/*
 * The classifier's batch-norm layer diagnosed as a real model's is
 * (diag.h, verdict.h): the evidence a dump of a PyTorch model holds,
 * taken from bnstudy's own classifier once trained. What the layer sees
 * is fc1's output, the same in both modes; its training batches are the
 * order's, cut as training cut them; the evaluation rows are the held-out
 * ones. The candidate fixes are scored on the network itself, each put
 * back after: the statistics recomputed over the training batches and
 * over the evaluation rows, and eps raised.
 */
#ifndef BN_CLF_DIAG_H
#define BN_CLF_DIAG_H

#include <stddef.h>

#include "model/config.h"
#include "model/diag.h"
#include "model/verdict.h"

typedef struct {
    size_t h, n, m, nb, batch;
    double *rm, *rv;          /* the trained layer's buffers */
    double *tm, *tv, *bv, *bm, *kurt;
    size_t *bunits;
    double *em, *ev, *eshift, *escale, *eks, *eout, *tout;
    size_t tracked, steps;
    double p, eps;
    int cumulative;
    verdict_model model;
    double *block;
} clf_evidence;

/* Train the classifier of cfg (cfg already in rows, perm its order of
 * train) and gather the evidence; free it with clf_evidence_free, also
 * after a failure. */
int clf_diag(const pop_t *train, const pop_t *eval, const size_t *perm,
             const run_config *cfg, clf_evidence *ev, bn_error *err);
void clf_evidence_free(clf_evidence *ev);
/* The evidence as diag_layer_run takes it (pointers into ev). */
void clf_evidence_layer(const clf_evidence *ev, diag_layer *in);

#endif
