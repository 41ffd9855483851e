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
    double train_acc, eval_acc;     /* NaN when not measured */
    double batch_dependence;        /* NaN when not measured */
    double fix_acc[DIAG_N_FIXES];   /* NaN when not scored */
    /* The share of the evaluation data's most common class: what always
     * naming it scores; NaN when not measured. */
    double majority;
    /* Data-parallel training without synchronised statistics (a dump's
     * --devices K): K (0 or 1: one device's), and training mode's
     * accuracy over whole batches of B rows, what synchronised statistics
     * give (train_acc is then at B/K rows, a device's); NaN when not
     * measured. */
    size_t devices;
    double sync_acc;
    /* Dropout modules that run before a batch-norm layer (0: none, or
     * not known): what update_bn's recompute keeps and recompute-train's
     * does not, for the report's words. */
    size_t dropout;
    /* The training batches' classes against random batches' (diag.h's
     * label_exchange): grouping shown beyond DIAG_LABEL_EXCHANGE; NaN or
     * 0 without labels. */
    double label_exchange;
    /* The rows' order is bnstudy's own (a run's): the population does
     * not move, so a not-exchangeable layer's spread is the order's
     * grouping itself, shown as surely as by the classes. */
    int order_made;
} verdict_model;

typedef struct {
    const char *name;
    size_t f;
    const diag_feature *d;          /* f */
    diag_cause cause;               /* verdict_layer_sum's */
    size_t count[DIAG_N_CAUSES];    /* features whose cause it is */
    /* The root mean square error evaluation mode adds to the layer's
     * outputs through each cause's features: sqrt(sum effect^2 / f). */
    double effect[DIAG_N_CAUSES];
    unsigned material;              /* bit c: cause c is material here */
    /* bit c: cause c would be material by its size, and the dump measured
     * it to cost nothing (verdict_harmless): a note, not the cause. */
    unsigned harmless;
    /* Few-updates features off beyond what the initial values explain
     * (diag.h's lag_effect): how many, their root mean square effect over
     * the layer, and whether that is material (DIAG_MATERIAL) and the
     * larger part: the layer lags as well. init_effect is what the initial
     * values alone make of the same features, by the same measure. */
    size_t lag_count;
    double lag_effect, init_effect;
    int lags_too;
} verdict_layer;

typedef struct {
    diag_cause cause;
    size_t root;        /* the first layer with the cause (n when none) */
    size_t with;        /* layers whose cause it is */
    size_t downstream;  /* later layers with another cause */
    diag_fix fix;       /* the cause's fix, measured or not */
    int fix_closes;     /* verdict_closes of it */
    diag_fix best;      /* the best measured fix (DIAG_FIX_NONE: none) */
    int best_closes;
    /* The fix to apply: the cause's own where it was measured to close
     * the gap, else the measured fix that closes it best; where
     * evaluation mode is at or above training mode and the cause's fix
     * is to the statistics, the cause's own where it was measured to
     * raise evaluation mode (verdict_raises), else the best that does;
     * DIAG_FIX_NONE when none does, or there is no gap. */
    diag_fix recommended;
    /* Not-exchangeable: the measured fix that closes the gap between the
     * modes until the model is retrained (DIAG_FIX_NONE when none does):
     * never recommended where the batches' classes show the grouping,
     * since both modes are then the grouped network's. */
    diag_fix stopgap;
    /* Not-exchangeable without that evidence: `recommended` is a measured
     * statistics fix, and retraining shuffled comes after it. */
    int retrain_after;
    double gap;         /* training mode's accuracy less evaluation's */
    /* Layers whose cause is the verdict's (few-updates) that lag as well,
     * and the first of them (n when none). */
    size_t lags_too, lags_first;
    /* Healthy, and training mode trails evaluation mode by more than
     * DIAG_FIX_CLOSES with more than DIAG_BATCH_DEP of its predictions
     * moving with the batch: the batch dependence evaluation mode
     * removes, a report's line beside the healthy verdict. */
    int batch_drop;
    /* The first layer's cause measured to cost nothing (DIAG_HEALTHY when
     * none), that layer (n when none) and how many layers share it. */
    diag_cause note;
    size_t note_root, note_with;
} verdict;

/* A layer's cause: of the causes material in it (m, NULL when nothing
 * was measured, for the measured leg), the one most of its features
 * have, the first in table order on a tie; healthy when none is. */
void verdict_layer_sum(verdict_layer *l, const verdict_model *m);
void verdict_make(const verdict_layer *l, size_t n, const verdict_model *m,
                  verdict *v);
/* Per-device statistics explain the modes' disagreement: K above 1,
 * training mode at B/K more than DIAG_FIX_CLOSES from evaluation mode,
 * and at B within it. */
int verdict_per_device(const verdict_model *m);
/* A fix closes the gap: evaluation mode trailed training mode by more
 * than DIAG_FIX_CLOSES, and the fix leaves it within DIAG_FIX_CLOSES of
 * training mode or above. 1, 0, or -1 when the fix was not measured or
 * there was no gap to close. */
int verdict_closes(const verdict_model *m, diag_fix f);
/* The fix was measured to leave evaluation mode more than
 * DIAG_FIX_CLOSES below where it is. */
int verdict_lowers(const verdict_model *m, diag_fix f);
/* Evaluation mode scores at or above training mode, and the fix was
 * measured to raise it by more than DIAG_FIX_CLOSES all the same. */
int verdict_raises(const verdict_model *m, diag_fix f);
/* The model is poor in both modes: the better one gets less than
 * DIAG_POOR of the way from the majority class's share to 1, so closing
 * the gap between them leaves a poor model. 0 when not measured (a
 * majority of NaN, or 0). */
int verdict_poor(const verdict_model *m);
/* A cause found by its size (DIAG_BY_EFFECT), shift apart, where the
 * dump measured the two modes to agree within DIAG_FIX_CLOSES and the
 * cause's own fix to raise evaluation mode by no more than that (a fix
 * that lowers it gains nothing): what the size rule estimates was
 * measured to be nothing. 0 when not measured. */
int verdict_harmless(const verdict_model *m, diag_cause c);
/* The cause's own fix: for never-filled the checkpoint's buffers where
 * the dump scored them, recomputing where it could not. */
diag_fix verdict_cause_fix(diag_cause c, const verdict_model *m);

#endif
