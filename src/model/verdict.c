/*
 * The model's verdict (see verdict.h). An upstream layer's fault changes
 * every later layer's inputs, so the cause is the earliest faulty layer's;
 * later layers with another cause are counted as downstream of it. A
 * layer has a cause only where it is material: where the evidence is a
 * handful of features whose error its outputs barely carry, SGD's own
 * weight motion explains it as well.
 */
#include "model/verdict.h"

#include <math.h>
#include <string.h>

int verdict_closes(const verdict_model *m, diag_fix f)
{
    if (f == DIAG_FIX_NONE || isnan(m->fix_acc[f]) || isnan(m->train_acc) ||
        !(m->train_acc - m->eval_acc > DIAG_FIX_CLOSES))
        return -1;
    return m->fix_acc[f] >= m->train_acc - DIAG_FIX_CLOSES;
}

int verdict_lowers(const verdict_model *m, diag_fix f)
{
    return f != DIAG_FIX_NONE &&
           m->fix_acc[f] < m->eval_acc - DIAG_FIX_CLOSES; /* NaN: 0 */
}

int verdict_raises(const verdict_model *m, diag_fix f)
{
    return f != DIAG_FIX_NONE && !isnan(m->train_acc) &&
           !(m->train_acc > m->eval_acc) &&
           m->fix_acc[f] > m->eval_acc + DIAG_FIX_CLOSES; /* NaN: 0 */
}

int verdict_poor(const verdict_model *m)
{
    /* A share of a class is above 0: 0 (a record never filled) and NaN
     * are "not measured". */
    if (isnan(m->train_acc) || isnan(m->eval_acc) ||
        !(m->majority > 0.0 && m->majority < 1.0))
        return 0;
    double best = fmax(m->train_acc, m->eval_acc);
    return (best - m->majority) / (1.0 - m->majority) < DIAG_POOR;
}

diag_fix verdict_cause_fix(diag_cause c, const verdict_model *m)
{
    diag_fix f = diag_cause_get(c)->fix_id;
    if (c == DIAG_NEVER_FILLED && m && !isnan(m->fix_acc[DIAG_FIX_RELOAD]))
        return DIAG_FIX_RELOAD;
    return f;
}

/* The size rule estimates what a cause costs evaluation mode, and two
 * measurements say what it costs: the gap between the modes, and what
 * the cause's own fix gains. Recomputing the statistics on the training
 * data with the final weights removes a buffer error and nothing else,
 * so its gain is the error's cost; for masking-mismatch the measured fix
 * takes the real positions' statistics, which the weights of a layer
 * that normalised every position never saw, so where evaluation mode
 * already normalises as training did it lowers it, and the gap alone is
 * the mismatch's cost. With the modes within DIAG_FIX_CLOSES of each
 * other and the fix gaining no more than that, nothing measured is lost:
 * the cost is inside what the held-out count can tell (about three
 * standard deviations of an accuracy near 0.95 on 400 rows), and a fix
 * that lowers evaluation mode is no gain either. Shift is not judged so:
 * its buffers are right for the training data and its fact, data that
 * differ, stands whatever the accuracy says. */
int verdict_harmless(const verdict_model *m, diag_cause c)
{
    if (!m || c >= DIAG_HEALTHY || c == DIAG_SHIFT ||
        diag_cause_get(c)->material != DIAG_BY_EFFECT)
        return 0;
    diag_fix f = verdict_cause_fix(c, m);
    if (f == DIAG_FIX_NONE)
        return 0;
    double gain = m->fix_acc[f] - m->eval_acc;
    double gap = m->train_acc - m->eval_acc;
    return gain <= DIAG_FIX_CLOSES &&
           fabs(gap) <= DIAG_FIX_CLOSES; /* NaN: 0 */
}

/* Material: by the layer's own test, by a test that already asks for a
 * share that matters, or by the error the cause's features add to the
 * layer's outputs unless measured to cost nothing (verdict_harmless);
 * failing that, by measurement: the modes were measured to disagree and
 * the cause's own fix was measured to close the gap. */
static int material(const verdict_layer *l, diag_cause c,
                    const verdict_model *m)
{
    if (!l->count[c])
        return 0;
    if (diag_cause_get(c)->material != DIAG_BY_EFFECT)
        return 1;
    if (l->effect[c] > DIAG_MATERIAL)
        return !verdict_harmless(m, c);
    return m && verdict_closes(m, verdict_cause_fix(c, m)) == 1;
}

/* A lag beside few-updates is the layer's finding only where it is
 * material by lagging's own rule and the larger part of those features'
 * error: the initial values' weight w = (1-p)^T is also the weight the
 * average gives its earliest updates against its latest, so weights that
 * moved far in few updates leave their early activations in the buffers
 * with about the weight the initial values keep, and a lag no larger
 * than what those values explain is the same few-updates seen twice.
 * Data that changed while the average followed leave a lag that
 * outweighs the start's share (docs/diagnose.md). */
static int lags_beside(const verdict_layer *l)
{
    return l->cause == DIAG_FEW_UPDATES && l->lag_effect > DIAG_MATERIAL &&
           l->lag_effect > l->init_effect;
}

void verdict_layer_sum(verdict_layer *l, const verdict_model *m)
{
    double sq[DIAG_N_CAUSES] = {0}, lag_sq = 0.0, init_sq = 0.0;
    memset(l->count, 0, sizeof l->count);
    l->lag_count = 0;
    for (size_t j = 0; j < l->f; j++) {
        l->count[l->d[j].cause]++;
        sq[l->d[j].cause] += l->d[j].effect * l->d[j].effect;
        l->lag_count += l->d[j].lag_effect > 0.0;
        lag_sq += l->d[j].lag_effect * l->d[j].lag_effect;
        init_sq += l->d[j].init_effect * l->d[j].init_effect;
    }
    l->lag_effect = l->f ? sqrt(lag_sq / (double)l->f) : 0.0;
    l->init_effect = l->f ? sqrt(init_sq / (double)l->f) : 0.0;
    l->material = l->harmless = 0;
    l->cause = DIAG_HEALTHY;
    for (int c = 0; c < DIAG_N_CAUSES; c++) {
        l->effect[c] = l->f ? sqrt(sq[c] / (double)l->f) : 0.0;
        if (l->count[c] && l->effect[c] > DIAG_MATERIAL &&
            verdict_harmless(m, (diag_cause)c))
            l->harmless |= 1u << c;
        if (c < DIAG_HEALTHY && material(l, (diag_cause)c, m)) {
            l->material |= 1u << c;
            /* The cause most of its features share: one feature's lesser
             * cause does not outvote forty of another. */
            if (l->cause == DIAG_HEALTHY || l->count[c] > l->count[l->cause])
                l->cause = (diag_cause)c;
        }
    }
    l->lags_too = lags_beside(l);
}

int verdict_per_device(const verdict_model *m)
{
    return m->devices > 1 &&
           fabs(m->train_acc - m->eval_acc) > DIAG_FIX_CLOSES && /* NaN: 0 */
           fabs(m->sync_acc - m->eval_acc) <= DIAG_FIX_CLOSES;
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

/* Statistics that are right leave the batch as what makes the modes
 * disagree, when they were measured to (without accuracies there is no
 * disagreement to explain, however many predictions move): the cause is
 * batch-dependence either way, since training mode's predictions depend
 * on which rows share its batch and evaluation mode's do not. Which way
 * the gap goes decides the words: training mode above is a model that
 * scores only with its batch's statistics, which no statistics mend;
 * evaluation mode above (batch_drop) is a model to ship in evaluation
 * mode, whose running statistics remove the noise a batch's own adds to
 * each row. */
static void batch_verdict(const verdict_model *m, verdict *v)
{
    if (v->cause != DIAG_HEALTHY || !(m->batch_dependence > DIAG_BATCH_DEP) ||
        !(fabs(v->gap) > DIAG_FIX_CLOSES))
        return;
    v->cause = DIAG_BATCH_DEPENDENCE;
    v->batch_drop = v->gap < 0.0;
}

/* The first layer's cause measured to cost nothing, where the model's
 * verdict has no cause of its own (healthy) to report first. */
static void note_harmless(const verdict_layer *l, size_t n, verdict *v)
{
    v->note = DIAG_HEALTHY;
    v->note_root = n;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < DIAG_HEALTHY && v->note_root == n; c++)
            if (l[i].harmless & (1u << c)) {
                v->note = (diag_cause)c;
                v->note_root = i;
            }
    for (size_t i = 0; v->note != DIAG_HEALTHY && i < n; i++)
        v->note_with += (l[i].harmless & (1u << v->note)) != 0;
}

/* Not-exchangeable: the weights learned from grouped batches'
 * statistics, which no buffers give in evaluation, so where the batches'
 * classes show the grouping a statistics fix that closes the gap brings
 * evaluation mode only to training mode's score, itself the grouped
 * network's (a per-class sampler's: 0.479 against training mode's 0.492,
 * where retraining shuffled gives 0.989): retraining shuffled is the
 * fix, a statistics fix a stopgap; so too in a run, whose order is its
 * own (verdict_model's order_made). Without that evidence (no labels, or
 * classes as random batches' while the means spread beyond a trend:
 * a drift the parabola fits badly, an order by something else) a
 * measured statistics fix that closes the gap is recommended first, and
 * retraining shuffled after it (the report's "then"): it was measured
 * to mend the gap, and the grouping it would not mend was not shown. */
static void retrain_first(const verdict_model *m, verdict *v)
{
    v->stopgap = DIAG_FIX_NONE;
    if (v->cause != DIAG_NOT_EXCHANGEABLE)
        return;
    if (!m->order_made && !diag_labels_grouped(m->label_exchange) &&
        v->recommended != DIAG_FIX_NONE) {
        v->retrain_after = 1;
        return;
    }
    v->stopgap = v->recommended;
    v->recommended = DIAG_FIX_NONE;
}

/* Evaluation mode at or above training mode has no gap to close, and is
 * kept as it is unless a measured fix raises it beyond the tolerance:
 * training mode's score is then no ceiling, but the statistics still
 * cost evaluation mode what the fix gains (the scenario suite's
 * nn.BatchNorm1d over sequences padded to 512 for evaluation: training
 * mode 0.845, evaluation mode 0.882, its lagging buffers recomputed
 * 0.927). Only for a cause whose fix is to the statistics: where it is
 * to retrain or to ship as it is, no statistics fix is the answer. */
static void raise_eval(const verdict_model *m, verdict *v)
{
    if (v->recommended != DIAG_FIX_NONE ||
        diag_cause_get(v->cause)->fix_id == DIAG_FIX_NONE)
        return;
    v->recommended = verdict_raises(m, v->fix)    ? v->fix
                     : verdict_raises(m, v->best) ? v->best
                                                  : DIAG_FIX_NONE;
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
    v->lags_first = n;
    for (size_t i = 0; i < n; i++) {
        if (l[i].cause == v->cause && l[i].lags_too) {
            v->lags_too++;
            if (v->lags_first == n)
                v->lags_first = i;
        }
        v->with += l[i].cause == v->cause && v->cause != DIAG_HEALTHY;
        v->downstream += i > v->root && l[i].cause != v->cause &&
                         l[i].cause != DIAG_HEALTHY;
    }
    note_harmless(l, n, v);
    v->gap = m->train_acc - m->eval_acc;
    batch_verdict(m, v);
    /* The batch a device normalised, where the whole batch agrees with
     * evaluation mode: what makes the modes disagree is the split. */
    if ((v->cause == DIAG_HEALTHY || v->cause == DIAG_BATCH_DEPENDENCE) &&
        verdict_per_device(m)) {
        v->cause = DIAG_DEVICES;
        v->batch_drop = 0;
    }
    v->fix = verdict_cause_fix(v->cause, m);
    v->fix_closes = verdict_closes(m, v->fix);
    v->best = best_fix(m);
    v->best_closes = verdict_closes(m, v->best);
    v->recommended = v->fix_closes == 1   ? v->fix
                     : v->best_closes == 1 ? v->best
                                          : DIAG_FIX_NONE;
    raise_eval(m, v);
    retrain_first(m, v);
}
