/*
 * The model's verdict: from each layer's diagnosis (diag.h), in the order
 * the layers run, and what the dump measured of the whole model (the
 * accuracies in both modes, how much training mode depends on the batch,
 * the candidate fixes' accuracies), which cause explains the train/eval
 * disagreement, in which layers, and which fix closes it. A pure
 * function; printing is the caller's.
 */
#ifndef BN_VERDICT_H
#define BN_VERDICT_H

#include <stddef.h>

#include "model/diag.h"

typedef struct {
    const char *name;
    size_t f;
    const diag_feature *d;          /* f */
    diag_cause cause;               /* verdict_layer_sum's */
    size_t count[DIAG_N_CAUSES];    /* features whose cause it is */
} verdict_layer;

typedef struct {
    double train_acc, eval_acc;     /* NaN when not measured */
    double batch_dependence;        /* NaN when not measured */
    double fix_acc[DIAG_N_FIXES];   /* NaN when not scored */
} verdict_model;

typedef struct {
    diag_cause cause;
    size_t root;        /* the first layer with the cause (n when none) */
    size_t with;        /* layers whose cause it is */
    size_t downstream;  /* later layers with another cause */
    diag_fix fix;       /* the cause's fix, measured or not */
    int fix_closes;     /* 1, 0, or -1 when not measured */
    diag_fix best;      /* the best measured fix (DIAG_FIX_NONE: none) */
    int best_closes;
    double gap;         /* training mode's accuracy less evaluation's */
} verdict;

/* A layer's cause: the one most of its unhealthy features have. */
void verdict_layer_sum(verdict_layer *l);
void verdict_make(const verdict_layer *l, size_t n, const verdict_model *m,
                  verdict *v);
/* A fix closes the gap: within DIAG_FIX_CLOSES of training mode. */
int verdict_closes(const verdict_model *m, diag_fix f);

#endif
