/*
 * The diagnosis (see diag.h): per feature, the running statistics against
 * the training data's own and the evaluation data's, what the initial
 * values alone would do, how exchangeable the batches were, and the first
 * cause in the table below that applies.
 */
#include "model/diag.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pop/pop.h"

/* A mean beyond its limit, or a scale beyond DIAG_OFF whose variance v
 * is also off the target by more than the noise allows: judged on
 * log(v / target) above the target, on (target - v) / target below it.
 * A moving average of positive batch variances has a long upper tail,
 * which the logarithm evens out, and a lower side bounded by 0, which
 * the logarithm would stretch without end (a sparse feature's average
 * between its rare values). A feature constant in training has no scale
 * to be off: evaluation's output x - rm is 0 whatever it divides by. */
static int off(const diag_feature *d, double shift, double scale, double v)
{
    if (!(fabs(shift) <= d->off_mean))
        return 1;
    if (fabs(scale - 1.0) <= DIAG_OFF || d->target_var == 0.0)
        return 0;
    double t = fmax(d->target_var, DBL_MIN);
    double dev = v > t ? log(v / t) : (t - v) / t;
    return !(dev <= d->off_var);
}

static int off_train(const diag_feature *d)
{
    return off(d, d->shift, d->scale, d->running_var);
}

static int off_eval(const diag_feature *d)
{
    return d->eval_ks > d->off_ks; /* false for NaN */
}

/* The initial values alone would put the statistics off, and they are. */
static int init_explains(const diag_feature *d)
{
    double w = d->init_weight;
    return off_train(d) &&
           off(d, d->init_shift, d->init_scale,
               w * d->init_var + (1.0 - w) * d->target_var);
}

static int never_filled(const diag_feature *d)
{
    return d->never_filled;
}

static int frozen(const diag_feature *d)
{
    return d->frozen;
}

static int few_updates(const diag_feature *d)
{
    return init_explains(d) && d->init_weight > DIAG_INIT_WEIGHT;
}

static int far_from_init(const diag_feature *d)
{
    return init_explains(d) && d->init_weight <= DIAG_INIT_WEIGHT;
}

int diag_labels_grouped(double label_exchange)
{
    return label_exchange > DIAG_LABEL_EXCHANGE; /* false for NaN */
}

const double *diag_exchange_means(const double *batch_means, int recorded)
{
    return recorded ? NULL : batch_means;
}

/* The ratio no single batch carries (spread_ratio says why), and a
 * grouping, not a drift, behind it: a smooth drift under shuffled batches
 * spreads the means in the dump's order far beyond chance too (a stream
 * whose contrast rose over the last epoch: exchange_robust 30 and more),
 * but a trend over the epoch explains that spread, and random batches'
 * classes stay random. Grouped batches show it in their classes, where
 * labels were given; a sort or grouping by anything else leaves spread
 * the trend does not explain. */
static int not_exchangeable(const diag_feature *d)
{
    if (!(d->exchange_robust > DIAG_EXCHANGE)) /* false for NaN */
        return 0;
    if (diag_labels_grouped(d->label_exchange))
        return 1;
    double unexplained = isnan(d->exchange_trend)
                             ? d->exchange_robust
                             : d->exchange_robust * (1.0 - d->exchange_trend);
    return unexplained > DIAG_EXCHANGE;
}

/* eps, not the data, sets the feature's scale. With the buffers at the
 * truth, evaluation's output is z sqrt(v / (v + eps)) for the data's own
 * standard score z: the feature's unit enters only through eps / (v +
 * eps). Where the data's variance dominates, an output far out is the
 * evaluation data's own difference, in any unit (shift's test); where
 * eps holds DIAG_EPS_SHARE of the denominator or more (eps >= v), eps's
 * arbitrary scale is what any evaluation difference is divided by. */
static int eps_scaled(const diag_feature *d)
{
    return d->eps_share >= DIAG_EPS_SHARE;
}

/* The evaluation rows beyond anything a training batch gives, beyond
 * what the training rows themselves put there in evaluation mode, by
 * more than DIAG_ROWS: at a small batch Samuelson's bound sqrt(B - 1)
 * lies inside an ordinary feature's range (1.73 at B 4, beyond which a
 * normal feature puts 0.083 of its rows), so only the excess is the
 * evaluation data's. */
static int rows_out(const diag_feature *d)
{
    return d->eval_out - d->train_out > DIAG_ROWS; /* false for NaN */
}

/* eps-scaled, and rows out; without evaluation data, a feature that
 * varies at all: one exactly constant in training harms nothing while it
 * stays so, which only evaluation data can deny. */
static int near_constant(const diag_feature *d)
{
    if (!eps_scaled(d))
        return 0;
    return isnan(d->eval_out) ? d->true_var > 0.0 : rows_out(d);
}

/* Dropout's variance shift: inverted dropout of rate q keeps each input's
 * mean and adds q/(1-q) of its mean square to its variance, so a layer
 * after dropout tracks a running variance above what the same inputs
 * give with dropout off (evaluation mode's, and the dump's fresh ones)
 * while its running mean is right. Nothing before applies, dropout runs
 * before the layer, the mean is within its limit, and the variance is
 * off above its target. */
static int dropout_shift(const diag_feature *d)
{
    return d->flags == 0 && d->dropout > 0.0 &&
           fabs(d->shift) <= d->off_mean && d->scale < 1.0 &&
           off_train(d);
}

/* Off by what the initial values do not explain: the buffers with the
 * initial values' part, w (m0 - mu) and w (v0 - t), taken out are still
 * off, so the activations moved while the average followed them. */
static int lag_beyond_init(const diag_feature *d)
{
    return off(d, d->rest_shift, d->rest_scale, d->rest_var);
}

/* Nothing before applies (flags holds the earlier causes), or only
 * few-updates and the buffers are off beyond what the initial values
 * explain; and the statistics trail what the final weights give: off
 * against the training data measured under them, or a recording's trend
 * the average lags. */
static int lagging(const diag_feature *d)
{
    int alone = d->flags == 0 ||
                (d->flags == 1u << DIAG_FEW_UPDATES && lag_beyond_init(d));
    return alone &&
           ((!isnan(d->trend_lag) && fabs(d->trend_lag) > d->off_mean) ||
            (isnan(d->trend_lag) && d->fresh_fixed && off_train(d)));
}

/* Padded sequences: nothing before applies, the buffers are what the
 * closed form gives at the training rows' padded share (the padding's
 * effect explains them), and they are off against the statistics
 * training mode normalises the real positions with. */
static int masking(const diag_feature *d)
{
    if (d->flags != 0 || isnan(d->pad_shift) || isnan(d->pad_explained))
        return 0;
    int explained = fabs(d->pad_explained) <= d->off_mean;
    int mismatch = !(fabs(d->pad_shift) <= d->off_mean) ||
                   !(fabs(d->pad_scale - 1.0) <= DIAG_OFF);
    return explained && mismatch;
}

static int shift(const diag_feature *d)
{
    return d->flags == 0 && !off_train(d) && off_eval(d);
}

static int other(const diag_feature *d)
{
    return d->flags == 0 && (off_train(d) || off_eval(d));
}

static int model_only(const diag_feature *d)
{
    (void)d;
    return 0;
}

static int healthy(const diag_feature *d)
{
    return d->flags == 0;
}

static const struct {
    diag_cause_info info;
    int (*applies)(const diag_feature *d);
} causes[DIAG_N_CAUSES] = {
    {{.cause = DIAG_NEVER_FILLED,
      .name = "never-filled",
      .words = "buffers never filled or never loaded: the running "
               "statistics are the initial 0 and 1 (or no batch was "
               "tracked), whatever the data",
      .threshold = "num_batches_tracked 0, or every running mean exactly 0 "
                   "and every running variance exactly 1",
      .fix = "load the running statistics with the weights (the "
             "checkpoint's buffers), or recompute them on the training "
             "data (update_bn)",
      .fix_id = DIAG_FIX_RECOMPUTE_TRAIN,
      .material = DIAG_BY_LAYER,
      .keep = "the weights may have trained against the initial 0 and 1, "
              "in a model kept in evaluation mode while it trained, or the "
              "layer's inputs are near mean 0 and variance 1 already"},
     never_filled},
    {{.cause = DIAG_FROZEN,
      .name = "frozen",
      .words = "statistics frozen while the weights trained: a momentum "
               "of 0, which never moves the buffers whatever "
               "num_batches_tracked counts, or a layer that tracked far "
               "fewer batches than training took (left in evaluation mode, "
               "or its tracking switched off)",
      .threshold = "momentum 0; num_batches_tracked below 0.5 of training's "
                   "steps; in a recording, fewer than 0.5 of its steps "
                   "(training-mode calls and evaluation-mode calls under "
                   "autograd) tracked a batch that moved the buffers",
      .fix = "recompute the statistics on the training data with the final "
             "weights (update_bn), and train with the layers in training "
             "mode",
      .fix_id = DIAG_FIX_RECOMPUTE_TRAIN,
      .material = DIAG_BY_LAYER,
      .keep = "a fine-tune's weights may have learned these very "
              "statistics, which recomputing them would undo",
      .risky = 1},
     frozen},
    {{.cause = DIAG_FEW_UPDATES,
      .name = "few-updates",
      .words = "too few updates for the momentum: the initial running "
               "values still carry weight (1-p)^T and hold the statistics "
               "off",
      .threshold = "statistics off, the initial values alone would put "
                   "them off, and (1-p)^T > 0.05",
      .fix = "recompute the statistics on the training data (update_bn, "
             "PreciseBN), or train longer or with a larger momentum",
      .fix_id = DIAG_FIX_RECOMPUTE_TRAIN,
      .material = DIAG_BY_EFFECT,
      .keep = "the statistics' error costs evaluation mode nothing measured "
              "here, so a fix to them has nothing to gain"},
     few_updates},
    {{.cause = DIAG_NOT_EXCHANGEABLE,
      .name = "not-exchangeable",
      .words = "batches that are not exchangeable (sorted or grouped): "
               "their means spread far more than random batches' would, "
               "and the network learned from batch statistics that "
               "evaluation never gives",
      .threshold = "batch means, under fixed weights, spread more than 4 "
                   "times that of random batches of the same sizes, "
                   "whichever one batch is left out (so no single batch, a "
                   "small one holding a rare value of a heavy-tailed "
                   "feature, carries it); and the batches' classes grouped "
                   "(their chi-square more than 4 times random batches'), "
                   "or the spread a smooth trend over the epoch (a "
                   "parabola in the batch's place) leaves unexplained "
                   "still more than 4 times random batches' (a drift "
                   "under shuffled batches is no grouping)",
      .fix = "retrain with shuffled batches: no statistics mend a network "
             "that learned from grouped ones",
      .fix_id = DIAG_FIX_NONE,
      .material = DIAG_BY_TEST,
      .keep = "the grouped batches' statistics cost evaluation mode nothing "
              "measured here; a network retrained with shuffled batches may "
              "still score better in both modes"},
     not_exchangeable},
    {{.cause = DIAG_NEAR_CONSTANT,
      .name = "near-constant",
      .words = "a near-constant feature: evaluation amplifies any "
               "difference by 1/sqrt(var + eps)",
      .threshold = "eps at least the training variance (eps / (var + "
                   "eps) >= 0.5), and more of the evaluation rows "
                   "normalised beyond sqrt(B - 1), which no training batch "
                   "of B rows can give, than of the training rows, by more "
                   "than 0.03",
      .fix = "raise eps (1e-3 amplifies at most 32 times), adapt the "
             "statistics to the evaluation data, or drop or fix the "
             "constant input",
      .fix_id = DIAG_FIX_EPS,
      .material = DIAG_BY_TEST,
      .keep = "the evaluation rows the feature throws out of range cost "
              "evaluation mode nothing measured here"},
     near_constant},
    {{.cause = DIAG_FAR_FROM_INIT,
      .name = "far-from-init",
      .words = "a scale far from the initial 1 (or a mean far from the "
               "initial 0): even the little weight the initial values "
               "keep holds the statistics off",
      .threshold = "statistics off, the initial values alone would put "
                   "them off, and (1-p)^T <= 0.05",
      .fix = "recompute the statistics on the training data (update_bn), "
             "or start the buffers from the data's own statistics",
      .fix_id = DIAG_FIX_RECOMPUTE_TRAIN,
      .material = DIAG_BY_EFFECT,
      .keep = "the statistics' error costs evaluation mode nothing measured "
              "here, so a fix to them has nothing to gain"},
     far_from_init},
    {{.cause = DIAG_DROPOUT_SHIFT,
      .name = "dropout-shift",
      .words = "dropout's variance shift: the running variance was "
               "accumulated with dropout on before the layer, and holds "
               "dropout's noise, which evaluation mode's inputs (dropout "
               "off) do not have, so evaluation mode shrinks the outputs",
      .threshold = "a dropout before the layer (the dump's dropout_before), "
                   "the mean within its limit, and the running variance "
                   "above the fresh one with dropout off beyond the "
                   "variance limit (scale below 1 - 0.1)",
      .fix = "recompute the statistics with dropout off (update_bn with "
             "only the batch-norm layers in training mode), or put the "
             "dropout after the last batch-norm layer",
      .fix_id = DIAG_FIX_RECOMPUTE_TRAIN,
      .material = DIAG_BY_EFFECT,
      .keep = "the statistics' error costs evaluation mode nothing measured "
              "here, so a fix to them has nothing to gain"},
     dropout_shift},
    {{.cause = DIAG_MASKING,
      .name = "masking-mismatch",
      .words = "padded sequences normalised over other positions in each "
               "mode: the running statistics average every position, "
               "padding included, at the training batches' padded share, "
               "while training mode normalises the real positions only, "
               "or the evaluation batches at another padded share",
      .threshold = "the buffers within the mean's limit of the closed form "
                   "(1 - pi) m_real + pi m_pad at the training rows' padded "
                   "share pi, and off (the mean's limit, or a scale beyond "
                   "0.1) against the statistics training mode normalises "
                   "the real positions with: theirs, or the closed form at "
                   "the evaluation rows' share",
      .fix = "take the statistics over the real positions only (a masked "
             "batch norm, its buffers too), or pad the same share in both "
             "modes",
      .fix_id = DIAG_FIX_RECOMPUTE_REAL,
      .material = DIAG_BY_EFFECT,
      .keep = "the weights learned the padded statistics (training mode "
              "normalised every position too), so evaluation mode, which "
              "normalises real positions whatever the padding, is the one "
              "that matches them"},
     masking},
    {{.cause = DIAG_LAGGING,
      .name = "lagging",
      .words = "statistics lagging the weights: the activations moved "
               "during training faster than the momentum follows, so the "
               "buffers describe earlier weights",
      .threshold = "off against the training data under the final weights "
                   "with none of the above, or a recording whose trend the "
                   "average lags by more than the off threshold "
                   "(s (1-p)/p for a trend s per update)",
      .fix = "recompute the statistics with the final weights (update_bn, "
             "PreciseBN), or a larger momentum",
      .fix_id = DIAG_FIX_RECOMPUTE_TRAIN,
      .material = DIAG_BY_EFFECT,
      .keep = "the lag costs evaluation mode nothing measured; or, where "
              "the checkpoint cannot tell lagging from frozen, a "
              "fine-tune's weights learned these statistics with the layer "
              "frozen",
      .risky = 1,
      .alike = "frozen or lagging: the checkpoint cannot tell; a recording "
               "can. A layer frozen for part of training (momentum 0, "
               "evaluation mode, tracking switched off) and set back "
               "before saving leaves buffers like these"},
     lagging},
    {{.cause = DIAG_SHIFT,
      .name = "shift",
      .words = "evaluation data that differ from the training data: the "
               "running statistics match the training inputs but not the "
               "evaluation inputs; the data differ, not the buffers",
      .threshold = "not off against the training data; the evaluation "
                   "data's distribution apart from the training data's by "
                   "a Kolmogorov-Smirnov distance above 0.03 and above "
                   "2.27 sqrt(1/n + 1/m)",
      .fix = "adapt the statistics to the evaluation data (recompute them "
             "there), or fix the data",
      .fix_id = DIAG_FIX_ADAPT_EVAL,
      .material = DIAG_BY_EFFECT,
      .keep = "the evaluation data differ from the training data where "
              "the network does not look, or by too little to cost "
              "evaluation mode anything measured"},
     shift},
    {{.cause = DIAG_OTHER,
      .name = "other",
      .words = "off for a reason not in this table: the noise of small "
               "batches, drift during training, or statistics taken on "
               "other data",
      .threshold = "statistics off and none of the causes above",
      .fix = "recompute the statistics on the training data (update_bn) "
             "and compare again",
      .fix_id = DIAG_FIX_RECOMPUTE_TRAIN,
      .material = DIAG_BY_EFFECT,
      .keep = "the statistics' error costs evaluation mode nothing measured "
              "here, so a fix to them has nothing to gain"},
     other},
    {{.cause = DIAG_BATCH_DEPENDENCE,
      .name = "batch-dependence",
      .words = "training-mode outputs that depend on the batch: a row's "
               "prediction moves with its batch neighbours, so training "
               "mode's score belongs to the batching, not the model",
      .threshold = "the statistics are right, training mode's accuracy "
                   "above evaluation mode's by more than 0.03, and more "
                   "than 0.03 of the evaluation rows change their "
                   "training-mode prediction when batched in another order "
                   "(evaluation mode above is healthy: the drop is the "
                   "batch dependence it removes)",
      .fix = "ship and score in evaluation mode; training mode's number is "
             "not one to reach",
      .fix_id = DIAG_FIX_NONE,
      .material = DIAG_BY_LAYER,
      .keep = "training mode's score is its batching's, below what the "
              "network gives a row on its own"},
     model_only},
    {{.cause = DIAG_DEVICES,
      .name = "per-device",
      .words = "statistics per device: trained data-parallel on K devices "
               "without synchronised batch norm, each normalised by its own "
               "B/K rows, so training mode's score is a device batch's and "
               "evaluation mode differs from it by those small batches' "
               "noise",
      .threshold = "the dump's --devices K above 1, the statistics right, "
                   "training mode at B/K rows more than 0.03 from evaluation "
                   "mode, and training mode at B rows (what synchronised "
                   "statistics give) within 0.03 of it",
      .fix = "train with SyncBatchNorm (statistics over all B rows), or "
             "ship and score in evaluation mode as it is; training mode's "
             "number at B/K rows is not one to reach",
      .fix_id = DIAG_FIX_NONE,
      .material = DIAG_BY_LAYER},
     model_only},
    {{.cause = DIAG_HEALTHY,
      .name = "healthy",
      .words = "healthy: the running statistics describe the activations",
      .threshold = "none of the causes above",
      .fix = "nothing to fix",
      .fix_id = DIAG_FIX_NONE,
      .material = DIAG_BY_LAYER},
     healthy},
};

/* The fixes the dump scores (scripts/bndump/fixes.py), each on a copy. */
static const diag_fix_info fixes[DIAG_N_FIXES] = {
    {.fix = DIAG_FIX_NONE, .name = "none", .words = "nothing done"},
    {.fix = DIAG_FIX_RECOMPUTE_TRAIN,
     .name = "recompute-train",
     .words = "the statistics recomputed on the training data with the "
              "final weights (update_bn)"},
    {.fix = DIAG_FIX_ADAPT_EVAL,
     .name = "adapt-eval",
     .words = "the statistics recomputed on the evaluation data"},
    {.fix = DIAG_FIX_RELOAD,
     .name = "reload",
     .words = "the batch-norm buffers loaded from the checkpoint that has "
              "them (--reload)"},
    {.fix = DIAG_FIX_EPS,
     .name = "eps",
     .words = "eps raised to 1e-3 in every layer"},
    {.fix = DIAG_FIX_RECOMPUTE_REAL,
     .name = "recompute-real",
     .words = "the statistics recomputed on the training data over the "
              "real positions only (--train-lengths)"},
};

const diag_cause_info *diag_cause_get(diag_cause c)
{
    return c < DIAG_N_CAUSES ? &causes[c].info : NULL;
}

const diag_fix_info *diag_fix_get(diag_fix f)
{
    return f < DIAG_N_FIXES ? &fixes[f] : NULL;
}

const char *diag_fix_name(diag_fix f)
{
    return f < DIAG_N_FIXES ? fixes[f].name : NULL;
}

/* DIAG_NOISE_SD standard deviations of the moving average's own noise:
 * sqrt(p / ((2 - p) B)) of the spread for the mean over batches of B
 * samples, sqrt((kurtosis - 1) p / ((2 - p) B)) of itself for the
 * variance. */
static void train_limits(const diag_layer *in, double kurt, diag_feature *d)
{
    d->off_mean = DIAG_OFF;
    d->off_var = 0.0;
    if (in->cumulative || !in->batch_samples)
        return;
    double q = in->p / ((2.0 - in->p) * (double)in->batch_samples);
    d->off_mean = fmax(DIAG_OFF, DIAG_NOISE_SD * sqrt(q));
    d->off_var = DIAG_NOISE_SD * sqrt(fmax(kurt - 1.0, 0.0) * q);
}

/* The Kolmogorov-Smirnov distance must exceed DIAG_ROWS and what two
 * samples of n and m give by chance with probability 6.3e-5. */
static void eval_limits(const diag_layer *in, diag_feature *d)
{
    double q = in->train_samples && in->eval_samples
                   ? 1.0 / (double)in->train_samples +
                         1.0 / (double)in->eval_samples
                   : 0.0;
    d->off_ks = fmax(DIAG_ROWS, DIAG_KS_C * sqrt(q));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double diag_ks(const double *a, size_t n, const double *b, size_t m,
               size_t f, size_t j, double *scratch)
{
    double *sa = scratch, *sb = scratch + n, d = 0.0;
    for (size_t i = 0; i < n; i++)
        sa[i] = a[i * f + j];
    for (size_t i = 0; i < m; i++)
        sb[i] = b[i * f + j];
    qsort(sa, n, sizeof *sa, cmp_double);
    qsort(sb, m, sizeof *sb, cmp_double);
    /* Walk both in order; at every value passed, ties included, compare
     * the shares of each at or below it. */
    for (size_t i = 0, k = 0; i < n || k < m;) {
        double v = i < n && (k == m || sa[i] <= sb[k]) ? sa[i] : sb[k];
        while (i < n && sa[i] == v)
            i++;
        while (k < m && sb[k] == v)
            k++;
        double gap = fabs((double)i / (double)n - (double)k / (double)m);
        if (gap > d)
            d = gap;
    }
    return d;
}

static double in_units(double a, double b, double sd);

void diag_kurtosis(const double *x, size_t n, size_t f, double *kurtosis)
{
    for (size_t j = 0; j < f; j++) {
        double m, v, m4 = 0.0;
        pop_moments(n, f, x + j, &m, &v);
        for (size_t i = 0; i < n; i++) {
            double d = x[i * f + j] - m;
            m4 += d * d * d * d / (double)n;
        }
        kurtosis[j] = v > 0.0 ? m4 / (v * v) : 3.0;
    }
}

/* The share of n rows of column j beyond bound * sqrt(rv + eps) of rm. */
static double share_beyond(const double *x, size_t n, size_t f, size_t j,
                           double rm, double lim)
{
    size_t beyond = 0;
    for (size_t i = 0; i < n; i++)
        beyond += fabs(x[i * f + j] - rm) > lim;
    return (double)beyond / (double)n;
}

/* Samuelson's inequality: in a batch of b rows normalised by its own
 * mean and biased variance no value lies beyond sqrt(b - 1). */
void diag_compare(const diag_rows *r, double *scratch, double *eval_shift,
                  double *eval_scale, double *eval_ks, double *eval_out,
                  double *train_out)
{
    double bound = r->rows_each > 1 ? sqrt((double)(r->rows_each - 1)) : 0.0;
    for (size_t j = 0; j < r->f; j++) {
        double st = sqrt(r->train_var[j]), se = sqrt(r->eval_var[j]);
        eval_shift[j] = in_units(r->eval_mean[j], r->train_mean[j], st);
        eval_scale[j] = st > 0 ? se / st : se == 0 ? 1.0 : INFINITY;
        eval_ks[j] = diag_ks(r->train, r->n_train, r->eval, r->n_eval, r->f, j,
                             scratch);
        double lim = bound * sqrt(r->rv[j] + r->eps);
        eval_out[j] = share_beyond(r->eval, r->n_eval, r->f, j, r->rm[j], lim);
        train_out[j] = share_beyond(r->train, r->n_train, r->f, j, r->rm[j],
                                    lim);
    }
}

static int finite_stats(const double *m, const double *v, size_t f)
{
    for (size_t j = 0; m && j < f; j++)
        if (!isfinite(m[j]) || !isfinite(v[j]) || v[j] < 0.0)
            return 0;
    return 1;
}

static int validate_layer(const diag_layer *in, bn_error *err)
{
    if (in->f < 1)
        return bn_fail(err, "diagnose: no features");
    if (!(in->p >= 0.0 && in->p <= 1.0))
        return bn_fail(err,
                       "diagnose: the new value's weight p must be in [0, "
                       "1], got %.17g",
                       in->p);
    if (!(in->eps >= 0.0 && isfinite(in->eps)))
        return bn_fail(err, "diagnose: eps must be finite and >= 0, got %.17g",
                       in->eps);
    if (!(in->dropout >= 0.0 && in->dropout < 1.0))
        return bn_fail(err, "diagnose: the dropout rate before the layer "
                            "must be in [0, 1), got %.17g",
                       in->dropout);
    if (!finite_stats(in->running_mean, in->running_var, in->f))
        return bn_fail(err, "diagnose: the running mean and variance must "
                            "be finite and the variance >= 0");
    if (!finite_stats(in->init_mean, in->init_var, in->f))
        return bn_fail(err, "diagnose: the initial mean and variance must "
                            "be finite and the variance >= 0");
    if (!in->train_mean ||
        !finite_stats(in->train_mean, in->train_var, in->f))
        return bn_fail(err, "diagnose: the data's mean and variance must be "
                            "finite and the variance >= 0");
    size_t total = 0;
    for (size_t k = 0; in->batch_means && k < in->n_batches; k++) {
        if (in->batch_units[k] < 1)
            return bn_fail(err, "diagnose: batch %zu has no rows", k + 1);
        total += in->batch_units[k];
    }
    if (in->batch_means && total != in->units)
        return bn_fail(err, "diagnose: the batches hold %zu, the data %zu",
                       total, in->units);
    return 0;
}

/* sqrt(a / b) for a, b >= 0, with 0/0 read as 1 (both exactly zero: the
 * statistics agree). */
static double root_ratio(double a, double b)
{
    if (b == 0.0)
        return a == 0.0 ? 1.0 : INFINITY;
    return sqrt(a / b);
}

/* (a - b) / sd, with 0/0 read as 0. */
static double in_units(double a, double b, double sd)
{
    if (sd > 0.0)
        return (a - b) / sd;
    return a == b ? 0.0 : copysign(INFINITY, a - b);
}

/* Batch k's squared deviation from mu, and what a batch of its size
 * drawn at random without replacement from the n units would give. */
static double batch_seen(const diag_layer *in, size_t j, size_t k, double mu)
{
    double m = in->batch_means[k * in->f + j];
    return (m - mu) * (m - mu);
}

static double batch_random(const diag_layer *in, size_t k, double v)
{
    double n = (double)in->units, b = (double)in->batch_units[k];
    return n > 1 ? v / b * (n - b) / (n - 1) : 0.0;
}

/* sum_k seen / sum_k random, batch `skip` left out (none: n_batches). */
static double ratio_without(const diag_layer *in, size_t j, double mu,
                            double v, size_t skip)
{
    double seen = 0.0, random = 0.0;
    for (size_t k = 0; k < in->n_batches; k++)
        if (k != skip) {
            seen += batch_seen(in, j, k, mu);
            random += batch_random(in, k, v);
        }
    return random > 0.0 ? seen / random : NAN;
}

/* The exchange ratio (diag.h's exchange), and in *robust the same with
 * the batch left out whose leaving lowers it most. The ratio's mean is 1
 * under random batches whatever the feature, but not its spread: a
 * batch of b rows' squared deviation has variance 2 s^4/b^2 + (kurt - 3)
 * s^4/b^3, so a heavy-tailed feature (mostly zero after a ReLU, with
 * rare large values) in a small batch (a training set's remainder)
 * carries the whole ratio whenever one rare row lands there. A healthy
 * model's feature nonzero in 50 of 1353 rows (kurtosis 77), in 27
 * batches of 50 and one of 3, gave 6.3, 5.5 of it from the batch of 3
 * (1.4 without it); a feature nonzero in one row gives 176 whenever that
 * row is in the batch of 3 (probability 3/1353), 1 otherwise. Sorted or
 * grouped batches put every batch's mean off, so their ratio stands
 * without any one of them. Leaving one out only lowers the ratio (the
 * ratio is the left-out ratios' mean weighted by their denominators),
 * so chance takes a feature past 4 no more often than before. The
 * batch is found from the sums less its terms, and the ratio then summed
 * again without it, in order, so no cancellation enters the value. */
static double spread_ratio(const diag_layer *in, size_t j, double mu,
                           double v, double *robust)
{
    *robust = NAN;
    if (!in->batch_means)
        return NAN;
    size_t nb = in->n_batches, skip = nb;
    double seen = 0.0, random = 0.0, low = INFINITY;
    for (size_t k = 0; k < nb; k++) {
        seen += batch_seen(in, j, k, mu);
        random += batch_random(in, k, v);
    }
    for (size_t k = 0; k < nb; k++) {
        double rest = random - batch_random(in, k, v);
        double r = rest > 0.0 ? (seen - batch_seen(in, j, k, mu)) / rest
                              : NAN;
        if (r < low) { /* false for NaN */
            low = r;
            skip = k;
        }
    }
    if (skip < nb)
        *robust = ratio_without(in, j, mu, v, skip);
    return random > 0.0 ? seen / random : NAN;
}

/* The share of feature j's batch means' spread a parabola in the batch's
 * place explains (diag.h's exchange_trend): a weighted least-squares fit
 * on polynomials made orthogonal under the weights (the batches' units),
 * so each coefficient is one ratio of sums, and the residual summed
 * directly rather than as the total less the fit, which would cancel. A
 * batch's place is its middle unit's share of the dump. */
static double trend_share(const diag_layer *in, size_t j)
{
    size_t nb = in->n_batches;
    if (!in->batch_means || nb < 4 || in->order_made)
        return NAN;
    double *x = malloc(3 * nb * sizeof *x);
    if (!x)
        return NAN; /* no trend measured: the test falls back to the ratio */
    double *p1 = x + nb, *p2 = x + 2 * nb;
    double sw = 0.0, swx = 0.0, swm = 0.0, start = 0.0;
    for (size_t k = 0; k < nb; k++) {
        double w = (double)in->batch_units[k];
        x[k] = (start + 0.5 * w) / (double)in->units;
        start += w;
        sw += w;
        swx += w * x[k];
        swm += w * in->batch_means[k * in->f + j];
    }
    double xbar = swx / sw, mbar = swm / sw, s11 = 0.0, s111 = 0.0;
    for (size_t k = 0; k < nb; k++) {
        double w = (double)in->batch_units[k];
        p1[k] = x[k] - xbar;
        s11 += w * p1[k] * p1[k];
        s111 += w * p1[k] * p1[k] * p1[k];
    }
    double tss = 0.0, s1r = 0.0, s2r = 0.0, s22 = 0.0;
    for (size_t k = 0; k < nb; k++) {
        double w = (double)in->batch_units[k];
        double r = in->batch_means[k * in->f + j] - mbar;
        p2[k] = p1[k] * p1[k] - s111 / s11 * p1[k] - s11 / sw;
        tss += w * r * r;
        s1r += w * p1[k] * r;
        s2r += w * p2[k] * r;
        s22 += w * p2[k] * p2[k];
    }
    double share = NAN;
    if (tss > 0.0 && s11 > 0.0 && s22 > 0.0) {
        double c1 = s1r / s11, c2 = s2r / s22, rss = 0.0;
        for (size_t k = 0; k < nb; k++) {
            double w = (double)in->batch_units[k];
            double e = in->batch_means[k * in->f + j] - mbar - c1 * p1[k] -
                       c2 * p2[k];
            rss += w * e * e;
        }
        share = 1.0 - rss / tss;
    }
    free(x);
    return share;
}

static int buffers_initial(const diag_layer *in)
{
    for (size_t j = 0; j < in->f; j++)
        if (in->running_mean[j] != 0.0 || in->running_var[j] != 1.0)
            return 0;
    return 1;
}

void diag_padded_moments(double pi, double mr, double vr, double mp,
                         double vp, double *mean, double *var)
{
    double gap = mr - mp;
    *mean = (1.0 - pi) * mr + pi * mp;
    *var = (1.0 - pi) * vr + pi * vp + pi * (1.0 - pi) * gap * gap;
}

/* The buffers against what training mode normalises an evaluation
 * batch's real positions with, and against the closed form at the
 * training share (diag.h's pad_shift, pad_scale, pad_explained). */
static void measure_padding(const diag_layer *in, size_t j, diag_feature *d)
{
    d->pad_shift = d->pad_scale = d->pad_explained = NAN;
    if (!in->real_mean || in->norm_real < 0 || isnan(in->pad_train))
        return;
    double mr = in->real_mean[j], vr = in->real_var[j];
    double mp = in->pad_mean[j], vp = in->pad_var[j];
    double sm = mr, sv = vr, tm, tv;
    if (!in->norm_real) {
        if (isnan(in->pad_eval))
            return;
        diag_padded_moments(in->pad_eval, mr, vr, mp, vp, &sm, &sv);
    }
    diag_padded_moments(in->pad_train, mr, vr, mp, vp, &tm, &tv);
    double rm = in->running_mean[j], rv = in->running_var[j];
    d->pad_shift = in_units(rm, sm, sqrt(sv + in->eps));
    d->pad_scale = root_ratio(sv + in->eps, rv + in->eps);
    d->pad_explained = in_units(rm, tm, sqrt(tv + in->eps));
}

static void measure(const diag_layer *in, size_t j, double w,
                    diag_feature *d)
{
    double mu = in->train_mean[j], v = in->train_var[j];
    double tv = in->target_var ? in->target_var[j] : v;
    if (in->real_mean && in->norm_real == 1) {
        mu = in->real_mean[j], v = in->real_var[j];
        tv = in->real_target ? in->real_target[j] : v;
    }
    double rm = in->running_mean[j], rv = in->running_var[j];
    double m0 = in->init_mean ? in->init_mean[j] : 0.0;
    double v0 = in->init_var ? in->init_var[j] : 1.0;
    double den = v + in->eps, sd = sqrt(den);
    d->true_mean = mu;
    d->true_var = v;
    d->running_mean = rm;
    d->running_var = rv;
    d->updates = in->updates;
    d->init_weight = w;
    d->shift = in_units(rm, mu, sd);
    d->init_shift = in_units(w * m0, w * mu, sd);
    d->target_var = tv;
    d->init_var = v0;
    d->scale = root_ratio(tv + in->eps, rv + in->eps);
    d->init_scale = root_ratio(tv + in->eps, w * v0 + (1.0 - w) * tv +
                                                 in->eps);
    d->rest_var = rv + w * (tv - v0);
    d->rest_shift = in_units(rm + w * (mu - m0), mu, sd);
    d->rest_scale = d->rest_var >= 0.0
                        ? root_ratio(tv + in->eps, d->rest_var + in->eps)
                        : INFINITY;
    d->amplification = sd > 0.0 ? 1.0 / sd : INFINITY;
    d->eps_share = den > 0.0 ? in->eps / den : 1.0;
    d->eval_shift = d->eval_scale = d->eval_ks = d->eval_out = NAN;
    if (in->eval_shift) {
        d->eval_shift = in->eval_shift[j];
        d->eval_scale = in->eval_scale[j];
        d->eval_ks = in->eval_ks[j];
        d->eval_out = in->eval_out[j];
    }
    d->train_out = in->train_out ? in->train_out[j] : 0.0;
    train_limits(in, in->kurtosis ? in->kurtosis[j] : 3.0, d);
    eval_limits(in, d);
    d->exchange = spread_ratio(in, j, in->train_mean[j],
                               in->unit_var ? in->unit_var[j]
                                            : in->train_var[j],
                               &d->exchange_robust);
    d->exchange_trend = isnan(d->exchange) ? NAN : trend_share(in, j);
    d->label_exchange = in->label_exchange;
    d->trend_lag = in->trend_lag ? in->trend_lag[j] : NAN;
    measure_padding(in, j, d);
}

/* The error evaluation mode adds through the feature's cause (diag.h):
 * a shift of the evaluation data against their own statistics, or the
 * buffers against the training data's, where a lag of `lag` spreads
 * scaled by `scale` leaves scale * lag, and the scale itself scale - 1
 * (none for a feature constant in training, whose output x - rm is the
 * same whatever it is divided by). */
static double root_sum_sq(double a, double b)
{
    return sqrt(a * a + b * b); /* sqrt rounds correctly, hypot need not */
}

/* The measure of every effect: statistics off by a shift (in units of
 * the spread) and a scale move the outputs by the shift stretched by the
 * scale, beside the stretch itself; a feature whose target variance is 0
 * (stretches 0) has no stretch to count. */
static double off_effect(double shift, double scale, int stretches)
{
    return root_sum_sq(scale * fabs(shift), stretches ? scale - 1.0 : 0.0);
}

/* What the initial values do not explain of a few-updates feature's
 * error, by effect_of's measure; 0 where it is not off. */
static double lag_effect_of(const diag_feature *d)
{
    if (!(d->flags & 1u << DIAG_LAGGING) || d->cause == DIAG_LAGGING)
        return 0.0;
    return off_effect(d->rest_shift, d->rest_scale, d->target_var != 0.0);
}

/* What the initial values alone would make of the same feature, beside
 * a lag: effect_of's measure on init_shift and init_scale. */
static double init_effect_of(const diag_feature *d)
{
    if (d->lag_effect == 0.0)
        return 0.0;
    return off_effect(d->init_shift, d->init_scale, d->target_var != 0.0);
}

static double effect_of(const diag_feature *d)
{
    if (d->cause == DIAG_MASKING)
        return off_effect(d->pad_shift, d->pad_scale, 1);
    if (d->cause == DIAG_SHIFT)
        return root_sum_sq(d->eval_shift, d->eval_scale - 1.0);
    double lag = fabs(d->shift);
    if (fabs(d->trend_lag) > lag) /* false for NaN */
        lag = fabs(d->trend_lag);
    return off_effect(lag, d->scale, d->target_var != 0.0);
}

/* Frozen: a momentum of 0 never moves the buffers, whatever the count
 * says; otherwise fewer of training's steps tracked a batch than
 * DIAG_FROZEN_SHARE of them, counting only the batches tracked during
 * those steps. */
static int frozen_layer(const diag_layer *in)
{
    if (in->p == 0.0)
        return 1;
    size_t before = in->tracked_before < in->tracked ? in->tracked_before
                                                      : in->tracked;
    return in->steps > 0 && (double)(in->tracked - before) <
                                DIAG_FROZEN_SHARE * (double)in->steps;
}

int diag_layer_run(const diag_layer *in, diag_feature *out, bn_error *err)
{
    if (validate_layer(in, err) != 0)
        return -1;
    /* (1 - p)^T by T multiplications, as the updates apply it. */
    double w = 1.0;
    for (size_t t = 0; in->p > 0.0 && w != 0.0 && t < in->updates; t++)
        w *= 1.0 - in->p;
    int never = in->tracked == 0 || buffers_initial(in);
    int froze = frozen_layer(in);
    for (size_t j = 0; j < in->f; j++) {
        diag_feature *d = &out[j];
        memset(d, 0, sizeof *d);
        measure(in, j, w, d);
        d->never_filled = never;
        d->dropout = in->dropout;
        d->fresh_fixed = in->fresh_fixed;
        d->frozen = froze;
        d->cause = DIAG_N_CAUSES;
        for (int c = 0; c < DIAG_N_CAUSES; c++)
            if (causes[c].applies(d)) {
                d->flags |= 1u << c;
                if (d->cause == DIAG_N_CAUSES)
                    d->cause = (diag_cause)c;
            }
        d->effect = effect_of(d);
        d->lag_effect = lag_effect_of(d);
        d->init_effect = init_effect_of(d);
    }
    return 0;
}

static int validate_rows(const diag_input *in, bn_error *err)
{
    if (in->n < 2)
        return bn_fail(err, "diagnose: %zu rows; at least 2 are needed",
                       in->n);
    if (in->f < 1)
        return bn_fail(err, "diagnose: no features");
    if (!in->batch_rows && in->batch < 1)
        return bn_fail(err, "diagnose: the batch size must be at least 1");
    size_t total = 0;
    for (size_t k = 0; in->batch_rows && k < in->n_batches; k++) {
        if (in->batch_rows[k] < 1)
            return bn_fail(err, "diagnose: batch %zu has no rows", k + 1);
        total += in->batch_rows[k];
    }
    if (in->batch_rows && total != in->n)
        return bn_fail(err,
                       "diagnose: the batches hold %zu rows, the "
                       "activations %zu",
                       total, in->n);
    for (size_t k = 0; k < in->n * in->f; k++)
        if (!isfinite(in->x[k]))
            return bn_fail(err,
                           "diagnose: row %zu, feature %zu is not finite",
                           k / in->f + 1, k % in->f + 1);
    return 0;
}

/* The rows' own moments and the batches' means and sizes. */
static int rows_evidence(const diag_input *in, double *mv, double *bm,
                         size_t *units)
{
    size_t n = in->n, f = in->f, nb = 0;
    for (size_t j = 0; j < f; j++)
        pop_moments(n, f, in->x + j, &mv[j], &mv[f + j]);
    for (size_t start = 0; start < n; nb++) {
        size_t b = in->batch_rows ? in->batch_rows[nb]
                   : n - start < in->batch ? n - start
                                           : in->batch;
        for (size_t j = 0; j < f; j++) {
            double s;
            pop_moments(b, f, in->x + start * f + j, &bm[nb * f + j], &s);
        }
        units[nb] = b;
        start += b;
    }
    return (int)nb;
}

int diag_run(const diag_input *in, diag_feature *out, bn_error *err)
{
    if (validate_rows(in, err) != 0)
        return -1;
    size_t f = in->f;
    size_t nb = in->batch_rows ? in->n_batches
                               : (in->n + in->batch - 1) / in->batch;
    double *mv = malloc(2 * f * sizeof *mv);
    double *bm = malloc(nb * f * sizeof *bm);
    size_t *units = malloc(nb * sizeof *units);
    int rc = -1;
    if (!mv || !bm || !units) {
        bn_fail(err, "out of memory");
        goto done;
    }
    rows_evidence(in, mv, bm, units);
    diag_layer l = {
        .f = f,
        .running_mean = in->running_mean,
        .running_var = in->running_var,
        .init_mean = in->init_mean,
        .init_var = in->init_var,
        .train_mean = mv,
        .train_var = mv + f,
        .batch_means = nb > 1 ? diag_exchange_means(bm, in->recorded)
                              : NULL,
        .batch_units = units,
        .n_batches = nb,
        .units = in->n,
        .updates = in->updates,
        /* The run and checkpoint forms start counting at the initial
         * values: a layer that has seen updates was filled. */
        .tracked = in->updates ? in->updates : 1,
        .p = in->p,
        .eps = in->eps,
        .order_made = in->order_made,
        .label_exchange = NAN, /* a dump's, from its labels */
    };
    rc = diag_layer_run(&l, out, err);
done:
    free(mv);
    free(bm);
    free(units);
    return rc;
}
