/*
 * The diagnosis: why a batch-norm layer's running statistics, from a run,
 * a real checkpoint or a recording over training, disagree with the
 * activations they should describe, feature by feature, named in words.
 * A pure function: it reads one layer's evidence and fills one record per
 * feature; the model's verdict (verdict.h) and printing are the callers'.
 *
 * The causes, their tests, thresholds, words and fixes are one table
 * (diag.c); docs/diagnose.md gives the reasons for each number.
 */
#ifndef BN_DIAG_H
#define BN_DIAG_H

#include <stddef.h>

#include "base/common.h"

/* In the order they are tried: the first that applies is the cause. */
typedef enum {
    DIAG_NEVER_FILLED,
    DIAG_FROZEN,
    DIAG_FEW_UPDATES,
    DIAG_NOT_EXCHANGEABLE,
    DIAG_NEAR_CONSTANT,
    DIAG_FAR_FROM_INIT,
    DIAG_DROPOUT_SHIFT,
    DIAG_MASKING, /* padded sequences: before what its evidence mimics */
    DIAG_LAGGING,
    DIAG_SHIFT,
    DIAG_OTHER,
    DIAG_BATCH_DEPENDENCE, /* the model's: verdict.c tests it */
    DIAG_DEVICES,          /* the model's: verdict.c tests it */
    DIAG_HEALTHY,
    DIAG_N_CAUSES
} diag_cause;

/* The fixes the dump scores on copies of the model (fixes.tsv). */
typedef enum {
    DIAG_FIX_NONE,
    DIAG_FIX_RECOMPUTE_TRAIN,
    DIAG_FIX_ADAPT_EVAL,
    DIAG_FIX_RELOAD,
    DIAG_FIX_EPS,
    DIAG_FIX_RECOMPUTE_REAL,
    DIAG_N_FIXES
} diag_fix;

/* What makes a layer's features with a cause enough for the layer to
 * have it (docs/diagnose.md, "A layer's cause"): the test is the
 * layer's own (every feature shares it); the test already asks for a
 * share of rows that matters (the evaluation rows a near-constant
 * feature throws out of range, batches spread beyond chance under fixed
 * weights); or the error evaluation mode adds to the layer's outputs
 * through those features must exceed DIAG_MATERIAL of their spread. */
typedef enum {
    DIAG_BY_LAYER,
    DIAG_BY_TEST,
    DIAG_BY_EFFECT
} diag_material;

typedef struct {
    diag_cause cause;
    const char *name;      /* one word, for machines: "few-updates" */
    const char *words;     /* the cause in a sentence */
    const char *threshold; /* the test, in words */
    const char *fix;       /* what to do, in words */
    diag_fix fix_id;       /* the measured fix that does it, if one */
    diag_material material;
    /* What else leaves the same evidence in a checkpoint, in words, or
     * NULL: the report says so when the evidence is a checkpoint's. */
    const char *alike;
    /* Why evaluation mode can score at or above training mode with this
     * cause, in words: the report's reason for keeping it as it is (NULL:
     * the report gives none). */
    const char *keep;
    /* The cause's fix can lower evaluation mode (the weights may have
     * trained against the statistics it replaces), so it is not
     * recommended unmeasured; for a cause with `alike`, only where the
     * evidence is a checkpoint's, which cannot tell it from that. */
    int risky;
} diag_cause_info;

/* A fix the dump scores, in words. */
typedef struct {
    diag_fix fix;
    const char *name;  /* "recompute-train" */
    const char *words; /* what was done to the copy */
} diag_fix_info;

/* The thresholds (docs/diagnose.md). Statistics are "off" when evaluation
 * shifts a feature's output by more than DIAG_OFF of its spread, or
 * scales it by a factor more than DIAG_OFF from 1, and by more than
 * DIAG_NOISE_SD standard deviations of what noise alone gives. */
#define DIAG_OFF 0.1
#define DIAG_NOISE_SD 4.0
#define DIAG_INIT_WEIGHT 0.05 /* too few updates: (1-p)^T above this */
/* not-exchangeable: batch means spread 4x what random batches would,
 * whichever one batch is left out (diag.c's spread_ratio); and that
 * spread is grouping, not a drift: either the batches' classes are
 * grouped (label_exchange, the same kind of ratio, its mean 1 under
 * random batches, beyond the same 4), or the spread a smooth trend over
 * the epoch does not explain, exchange_robust (1 - exchange_trend), is
 * still beyond 4 (docs/diagnose.md, "Not exchangeable") */
#define DIAG_EXCHANGE 4.0
#define DIAG_LABEL_EXCHANGE DIAG_EXCHANGE
/* near-constant: eps holds at least this share of the variance's
 * denominator, eps / (var + eps), so eps and not the data sets the
 * feature's scale in evaluation mode (docs/diagnose.md) */
#define DIAG_EPS_SHARE 0.5
#define DIAG_FROZEN_SHARE 0.5 /* frozen: tracked under half the steps */
#define DIAG_BATCH_DEP 0.03   /* batch-dependence: predictions changed */
#define DIAG_FIX_CLOSES 0.03  /* a fix within this of training mode */
/* A model poor in both modes: the better gets less than half-way from
 * always naming the majority class to every row right (its accuracy
 * less the majority's share, over 1 less it). Half-way is where the
 * errors the model makes outnumber the ones it avoids beyond guessing,
 * whatever the gap between its modes. */
#define DIAG_POOR 0.5
/* A layer's cause found by its features' size: the root mean square
 * error evaluation mode adds through them to the layer's outputs, in
 * units of their spread, beyond this (DIAG_OFF's reason, for the layer's
 * outputs as a whole). */
#define DIAG_MATERIAL DIAG_OFF
/* What moves a share of rows below the accuracy tolerance cannot explain
 * a gap beyond it: a near-constant feature must carry more evaluation
 * rows than this out of range, and the evaluation data's distribution
 * must differ from the training data's by more than this share. */
#define DIAG_ROWS DIAG_FIX_CLOSES
/* The two-sample Kolmogorov-Smirnov bound at the tail probability of
 * DIAG_NOISE_SD standard deviations (6.3e-5): 2 exp(-2 c^2) = 6.3e-5. */
#define DIAG_KS_C 2.27

const diag_cause_info *diag_cause_get(diag_cause c);
/* The batches' classes are grouped beyond chance: a dump's
 * label_exchange above DIAG_LABEL_EXCHANGE (false for NaN: no labels). */
int diag_labels_grouped(double label_exchange);
/* The batch means the exchange test may read: measured batches of the
 * same rows under fixed weights (a dump's, under the final weights; a
 * run's, whose rows no weight moves; rows given by hand), never a
 * recording's (recorded nonzero), whose batches came while training
 * moved the weights and whose fresh statistics are its last batches'.
 * The one rule the folder form (dumpdir.c) and the one-layer form
 * (diag_run, `--dump`) both follow; NULL for no test. */
const double *diag_exchange_means(const double *batch_means, int recorded);
const diag_fix_info *diag_fix_get(diag_fix f); /* NULL past the last */
const char *diag_fix_name(diag_fix f); /* "recompute-train"; NULL past */

/* One layer's evidence. Fresh statistics are the activations' own
 * (divisor n); NULL where there are none. */
typedef struct {
    size_t f;
    const double *running_mean, *running_var; /* f each: the checkpoint's */
    const double *init_mean, *init_var; /* f each, or NULL for 0 and 1 */
    /* The training data's, fresh, as training mode feeds the layer; and
     * what a moving average of the batches' unbiased variances settles
     * on, their mean, which the running variance is held to (NULL for
     * train_var: batches of independent rows). */
    const double *train_mean, *train_var, *target_var;
    /* The training batches: n_batches means (n_batches x f) and how many
     * units each holds; NULL when not measured under fixed weights (a
     * recording over training). A unit is what is drawn at random: a row
     * of an (N, C) input, a whole sample of a feature map, whose rows
     * are not independent. unit_var (f) is the variance of the units'
     * means (divisor units), NULL for train_var. */
    const double *batch_means;
    const size_t *batch_units;
    size_t n_batches, units;
    const double *unit_var;
    /* The training batches' class counts against random batches' (the
     * dumper's label_exchange: their chi-square over its mean under
     * random batches of the same sizes); NaN or 0 without labels. */
    double label_exchange;
    /* The rows' order is bnstudy's own (a run's): the population does
     * not move, so a trend in the batch means is the order's, never a
     * drift, and exchange_trend is not measured. */
    int order_made;
    size_t updates;  /* T: updates the running statistics have seen */
    size_t tracked;  /* num_batches_tracked as saved */
    size_t steps;    /* training's steps, 0 when unknown */
    /* Of `tracked`, the batches that were not tracked during those
     * steps, as far as the evidence says: a recording's count when it
     * began, and its training-mode calls that left the buffers as they
     * were (momentum 0); 0 for a checkpoint, whose count covers its whole
     * life. */
    size_t tracked_before;
    int fresh_fixed; /* train_mean/var measured under the final weights */
    double p;        /* the new value's weight, in [0, 1]: 0 freezes the
                      * buffers (PyTorch's momentum 0); 1 for a
                      * cumulative average that started from scratch */
    int cumulative;  /* momentum None: no moving average's noise */
    double eps;
    /* For the noise floors: the samples of a training batch, of the
     * training and the evaluation data (0: unknown, no floor), and the
     * rows of a training batch (a feature map's positions included). */
    size_t batch_samples, train_samples, eval_samples, batch_rows_each;
    const double *kurtosis; /* f: the training rows', NULL for 3 */
    /* The evaluation data against the training data, both as evaluation
     * mode feeds the layer: (m_eval - m_train) / sd_train and sd_eval /
     * sd_train, for the report; the Kolmogorov-Smirnov distance of their
     * distributions (the largest share of rows on which they disagree),
     * the test; and the share of evaluation rows whose evaluation-mode
     * output |x - rm| / sqrt(rv + eps) exceeds sqrt(rows_each - 1), more
     * than any training batch of rows_each rows can give. NULL without
     * evaluation data. */
    const double *eval_shift, *eval_scale, *eval_ks, *eval_out;
    /* The share of the training rows, fed as evaluation mode feeds them,
     * beyond the same bound: what the network's own data give there at
     * this batch size (at 4 rows a normal feature puts 0.083 beyond
     * sqrt(3)); NULL for 0. */
    const double *train_out;
    /* A recording's trend: the lag the moving average's closed form gives
     * for the batch means' trend, in units of the spread (f), or NULL. */
    const double *trend_lag;
    /* The rate of the dropout that runs before the layer in training
     * (since the batch-norm layer before it), 0 for none or unknown: its
     * buffers then hold dropout's noise, which evaluation mode's inputs
     * and the dump's fresh statistics (dropout off) do not. */
    double dropout;
    /* Padded sequences (a dump's --train-lengths): the training rows'
     * real positions' mean and variance and the padding's (divisor n, f
     * each; NULL real_mean without lengths), the padded shares of the
     * training and evaluation rows (NaN: unknown), and which positions
     * training mode normalised over: 1 the real ones only, 0 every one
     * (nn.BatchNorm1d on the padded tensor), -1 unknown. Where it
     * normalised the real ones, theirs are the statistics the buffers
     * are held to (real_target the batches' mean unbiased variance); the
     * exchange test keeps every row's. */
    const double *real_mean, *real_var, *pad_mean, *pad_var, *real_target;
    double pad_train, pad_eval;
    int norm_real;
} diag_layer;

/* Padding's effect in closed form: the mean and variance (divisor n) of
 * rows of which a share pi is padding (mean mp, variance vp) and the
 * rest real (mr, vr): (1 - pi) mr + pi mp and (1 - pi) vr + pi vp +
 * pi (1 - pi) (mr - mp)^2. */
void diag_padded_moments(double pi, double mr, double vr, double mp,
                         double vp, double *mean, double *var);

/* The two-sample Kolmogorov-Smirnov distance between column j of an
 * n x f array and of an m x f array: the largest difference of their
 * empirical distribution functions. scratch holds n + m doubles. */
double diag_ks(const double *a, size_t n, const double *b, size_t m,
               size_t f, size_t j, double *scratch);

/* The kurtosis of each feature of n x f rows (3 for a constant one). */
void diag_kurtosis(const double *x, size_t n, size_t f, double *kurtosis);

/* The evaluation rows against the training rows, both as evaluation mode
 * feeds the layer, with their moments (divisor n) and the layer's
 * buffers: diag_layer's eval_shift, eval_scale, eval_ks, eval_out and
 * train_out, rows_each being the rows of a training batch. scratch holds
 * n_train + n_eval doubles. */
typedef struct {
    const double *train, *eval;
    size_t n_train, n_eval, f;
    const double *rm, *rv;
    double eps;
    size_t rows_each;
    const double *train_mean, *train_var, *eval_mean, *eval_var;
} diag_rows;
void diag_compare(const diag_rows *r, double *scratch, double *eval_shift,
                  double *eval_scale, double *eval_ks, double *eval_out,
                  double *train_out);

/* The activations as a run or a checkpoint recorded them, rows in the
 * order the batches arrived (the checkpoint and run form). */
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
    int order_made; /* diag_layer's: a run's order, not a drift */
    /* The rows are a recording's (BNRecorder's NAME.npy): no exchange
     * test (diag_exchange_means). */
    int recorded;
} diag_input;

typedef struct {
    double true_mean, true_var; /* the training activations' own */
    double running_mean, running_var;
    /* What evaluation does to the feature's output, against training on
     * the whole population: shifts it by `shift` of its spread and scales
     * it by `scale`.
     *   shift = (rm - mu) / sqrt(v + eps)
     *   scale = sqrt((v + eps) / (rv + eps)) */
    double shift, scale;
    /* diag_layer's comparisons of the evaluation data (NaN without), and
     * the training rows' share beyond the bound (0 without). */
    double eval_shift, eval_scale, eval_ks, eval_out, train_out;
    size_t updates;
    double init_weight; /* (1-p)^T */
    /* The same two for running statistics that only the initial values
     * pull away from the truth: w m0 + (1-w) mu and w v0 + (1-w) v. */
    double init_shift, init_scale, init_var;
    /* The buffers with the initial values' part taken out, rm + w (mu -
     * m0) and rv + w (t - v0), against the same truth: what the initial
     * values do not explain (a lag behind moving activations). */
    double rest_shift, rest_scale, rest_var;
    /* The batch means' spread about mu against random batches of the
     * same sizes from these n rows: sum_k (m_k - mu)^2 over
     * sum_k v/b_k (n-b_k)/(n-1). NaN when it is undefined (one batch of
     * every row, a constant feature, or batches under moving weights). */
    double exchange;
    /* The same ratio with one batch left out, the one whose leaving
     * lowers it most: what no single batch carries. The test's. NaN
     * where exchange is, or with one batch. */
    double exchange_robust;
    /* The share of the batch means' spread a smooth trend over the epoch
     * explains: 1 - RSS/TSS of a least-squares parabola of the batch
     * means against the batch's place in the dump, weighted by the
     * batches' units. A drift under shuffled batches moves the means
     * smoothly, which sorted or grouped batches need not. NaN where
     * exchange is, with fewer than 4 batches (a parabola fits 3), or
     * in a run (diag_layer's order_made). */
    double exchange_trend;
    double label_exchange; /* diag_layer's, copied to each */
    double amplification; /* 1/sqrt(v + eps) */
    double eps_share;     /* eps / (v + eps); 1 for v = eps = 0 */
    double trend_lag;     /* a recording's, NaN otherwise */
    /* Padded sequences: the buffers against the statistics training mode
     * normalises an evaluation batch's real positions with (the real
     * positions' own; or, over every position, the closed form at the
     * evaluation rows' padded share), as shift and scale are; and the
     * closed form's shift between the training and evaluation shares
     * (pad_explained: the buffers' shift it does not explain). NaN
     * without lengths. */
    double pad_shift, pad_scale, pad_explained;
    /* The root mean square error evaluation mode adds to the feature's
     * outputs through its cause, in units of their spread: against the
     * evaluation rows' own statistics for shift, sqrt(eval_shift^2 +
     * (eval_scale - 1)^2); else against the training data's,
     * sqrt((scale - 1)^2 + (scale lag)^2), lag the shift (or a
     * recording's trend lag, when larger). What verdict.c sums over a
     * layer to judge whether its cause is material. */
    double effect;
    /* For a few-updates feature that lags too (both flags): the effect of
     * what the initial values do not explain; 0 otherwise. */
    double lag_effect;
    /* The same feature's effect had only the initial values pulled the
     * buffers off (init_shift, init_scale); 0 where lag_effect is 0. The
     * layer lags beside few-updates only where the lag is the larger part
     * (verdict.h). */
    double init_effect;
    /* The "off" thresholds (docs/diagnose.md): a mean beyond off_mean
     * (DIAG_OFF, or DIAG_NOISE_SD standard deviations of the moving
     * average's noise, whichever is larger); a scale beyond DIAG_OFF whose
     * variance is also off its target by more than off_var of it
     * (DIAG_NOISE_SD standard deviations of the noise, 0 when unknown);
     * the evaluation data beyond a distance off_ks. */
    double target_var, off_mean, off_var, off_ks;
    int never_filled, frozen; /* the layer's tests, copied to each */
    double dropout;           /* diag_layer's, copied to each */
    int fresh_fixed;
    unsigned flags;       /* bit c for every cause c that applies */
    diag_cause cause;     /* the first of them in table order */
} diag_feature;

/* Fill out[0..f-1]; refuse inconsistent input with a message. */
int diag_layer_run(const diag_layer *in, diag_feature *out, bn_error *err);
/* The run and checkpoint form: the activations' own moments and batch
 * means are the training data's; there are no evaluation data. */
int diag_run(const diag_input *in, diag_feature *out, bn_error *err);

#endif
