/*
 * The model's verdict (see verdict.h). An upstream layer's fault changes
 * every later layer's inputs, so the cause is the earliest faulty layer's;
 * later layers with another cause are counted as downstream of it.
 */
#include "model/verdict.h"

#include <math.h>
#include <string.h>

void verdict_layer_sum(verdict_layer *l)
{
    memset(l->count, 0, sizeof l->count);
    for (size_t j = 0; j < l->f; j++)
        l->count[l->d[j].cause]++;
    /* The cause most of its unhealthy features share (the first in table
     * order on a tie): one feature's lesser cause does not outvote it. */
    l->cause = DIAG_HEALTHY;
    for (int c = 0; c < DIAG_HEALTHY; c++)
        if (l->count[c] &&
            (l->cause == DIAG_HEALTHY || l->count[c] > l->count[l->cause]))
            l->cause = (diag_cause)c;
}

int verdict_closes(const verdict_model *m, diag_fix f)
{
    if (f == DIAG_FIX_NONE || isnan(m->fix_acc[f]) || isnan(m->train_acc))
        return -1;
    return m->fix_acc[f] >= m->train_acc - DIAG_FIX_CLOSES;
}

static diag_fix best_fix(const verdict_model *m)
{
    diag_fix best = DIAG_FIX_NONE;
    for (int f = DIAG_FIX_NONE + 1; f < DIAG_N_FIXES; f++)
        if (!isnan(m->fix_acc[f]) &&
            (best == DIAG_FIX_NONE || m->fix_acc[f] > m->fix_acc[best]))
            best = (diag_fix)f;
    return best;
}

/* The cause's own fix; for never-filled the checkpoint's buffers where
 * the dump scored them, recomputing where it could not. */
static diag_fix cause_fix(diag_cause c, const verdict_model *m)
{
    diag_fix f = diag_cause_get(c)->fix_id;
    if (c == DIAG_NEVER_FILLED && !isnan(m->fix_acc[DIAG_FIX_RELOAD]))
        return DIAG_FIX_RELOAD;
    return f;
}

void verdict_make(const verdict_layer *l, size_t n, const verdict_model *m,
                  verdict *v)
{
    memset(v, 0, sizeof *v);
    v->cause = DIAG_HEALTHY;
    v->root = n;
    for (size_t i = 0; i < n; i++)
        if (l[i].cause != DIAG_HEALTHY && v->root == n) {
            v->root = i;
            v->cause = l[i].cause;
        }
    for (size_t i = 0; i < n; i++) {
        v->with += l[i].cause == v->cause && v->cause != DIAG_HEALTHY;
        v->downstream += i > v->root && l[i].cause != v->cause &&
                         l[i].cause != DIAG_HEALTHY;
    }
    v->gap = m->train_acc - m->eval_acc;
    /* Statistics that are right leave the batch as what makes the modes
     * disagree, when they were measured to: without accuracies there is
     * no disagreement to explain, however many predictions move. */
    if (v->cause == DIAG_HEALTHY && m->batch_dependence > DIAG_BATCH_DEP &&
        fabs(v->gap) > DIAG_FIX_CLOSES)
        v->cause = DIAG_BATCH_DEPENDENCE;
    v->fix = cause_fix(v->cause, m);
    v->fix_closes = verdict_closes(m, v->fix);
    v->best = best_fix(m);
    v->best_closes = verdict_closes(m, v->best);
}
