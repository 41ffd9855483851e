/*
 * What a run is given and what it gives back, as plain values: a
 * configuration (run_config: the layer's settings, the classifier's, the
 * order, the batches, the drift, the evaluation rows' shift), the
 * population stage's rows (run_pops), the scores (run_result) and the
 * observer a model reports its epochs to. The models (layer.h,
 * classifier.h, net.h) and the scores (score.h) work on these types; the
 * model table and the pipeline that runs them are run.h's.
 */
#ifndef BN_CONFIG_H
#define BN_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "base/common.h"
#include "model/bn.h"
#include "model/initial.h"
#include "model/nn.h"
#include "model/order.h"
#include "pop/drift.h"
#include "pop/pop.h"

typedef enum { RUN_PARTIAL_DROP, RUN_PARTIAL_KEEP } run_partial;

/* The models, rows of the table in run.c. */
typedef enum {
    RUN_MODEL_LAYER, RUN_MODEL_CLASSIFIER, RUN_MODEL_COUNT
} run_model_id;
/* Sets of models, as the key, score and file tables give them. */
#define RUN_MODEL_BIT(m) (1u << (m))
#define RUN_MODELS_ALL ((1u << RUN_MODEL_COUNT) - 1u)
/* Not a model: the bit of a set of models that says an experiment
 * declares its network beyond the default one ([model] layers, dtype,
 * optimizer, ...). A key or a score whose models have it is written (its
 * column, its manifest line) only where the experiment's set has it too,
 * so that the files of an experiment of the default network keep their
 * columns. */
#define RUN_NET_EXT (1u << RUN_MODEL_COUNT)
/* The same for an experiment that spreads batch norm over devices
 * ([layer] devices, sync): their columns only where it is set. */
#define RUN_DEV_EXT (1u << (RUN_MODEL_COUNT + 1))
/* The same for the batch-dependence scores ([sweep] compositions): their
 * key and scores are written only where an experiment sets the key, so
 * that every other experiment's files keep their columns. */
#define RUN_DEP_EXT (1u << (RUN_MODEL_COUNT + 2))
/* And for padded sequences ([sequence] length, seqlayer.h). */
#define RUN_SEQ_EXT (1u << (RUN_MODEL_COUNT + 3))
/* And for a population with a group column ([population] group, or
 * --group): with RUN_DEP_EXT, the accuracy on batches of one group. */
#define RUN_GRP_EXT (1u << (RUN_MODEL_COUNT + 4))
#define RUN_EXTS                                                           \
    (RUN_NET_EXT | RUN_DEV_EXT | RUN_DEP_EXT | RUN_SEQ_EXT | RUN_GRP_EXT)
/* Whether a key's or a score's column (models def) is in the files of an
 * experiment of the set `models`: one of its models, and every extension
 * it belongs to. */
static inline int run_models_show(unsigned def, unsigned models)
{
    return (def & models & RUN_MODELS_ALL) &&
           (def & RUN_EXTS & ~models) == 0;
}

/* The classifier's own settings (net.h); its batch norm is the layer's
 * bn_config, and the batches, epochs and order are the run's. */
typedef enum { CLF_NORM_BATCH, CLF_NORM_NONE } net_norm;
#define CLF_FREEZE_START ((unsigned long)-1)
typedef enum { NET_F64, NET_F32 } net_dtype;
/* Rows of optim.c's table. */
typedef enum {
    NET_OPT_SGD, NET_OPT_NESTEROV, NET_OPT_ADAM, NET_OPT_ADAMW, NET_OPT_COUNT
} net_optimizer;
typedef enum { NET_SCHED_CONSTANT, NET_SCHED_STEP, NET_SCHED_COSINE } net_schedule;
typedef struct {
    size_t hidden; /* H */
    net_norm norm;
    /* Epochs 1..E0 train batch norm as usual; from epoch E0 + 1 on it
     * normalises with its buffers and stops updating them. 0: never;
     * CLF_FREEZE_START: from the first step, with the buffers it was made
     * with (the fine-tuning default of many codebases). */
    unsigned long freeze_after;
    double lr, sgd_momentum, weight_decay;
    uint64_t init_seed; /* PCG32(init_seed, PCG32_INITSEQ_WEIGHTS) */
    /* The layers ([model] layers); n 0: the network of hidden, norm and
     * depth, `depth` blocks of linear:H batch relu (no batch with norm
     * none), then linear:K. */
    nn_net_spec net;
    size_t depth;
    net_dtype dtype;
    net_optimizer optimizer;
    double beta1, beta2, adam_eps;
    /* The learning rate: a warm-up over the first `warmup` steps, then
     * the schedule over the epochs (step: times step_factor every
     * step_epochs epochs; cosine: (1 + cos(pi e / E)) / 2). */
    unsigned long warmup;
    net_schedule schedule;
    unsigned long step_epochs;
    double step_factor;
} clf_settings;

/* [evaluation]: each feature of the rows a model is evaluated on becomes
 * mu + shift sd + scale (x - mu) + offset, mu and sd its own mean and
 * standard deviation (evalpop.h): shift moves it in its own units, offset
 * in absolute ones (a constant feature moves only by offset). shift 0,
 * scale 1 and offset 0 leave the rows as they are. */
typedef struct {
    double shift, scale, offset;
} run_eval;

/* [drift]: the training stream moves while the buffers fill (drift.h):
 * update t trains on its batch with feature j moved by
 * drift_fraction(profile, t) size sd_j, sd_j the feature's standard
 * deviation over the population. The layer is then evaluated on the
 * stream as it is at the last update. */
typedef struct {
    drift_spec profile;
    char name[48]; /* drift_name's, for the files: a copy, so that a
                    * configuration outlives the experiment it came from */
    double size;
} run_drift;

typedef struct {
    char experiment[64];
    char population[17]; /* pop_id of the population it runs on */
    order_spec order;
    uint64_t seed;  /* the shuffle's initstate */
    size_t batch_size;
    unsigned long epochs;
    run_partial partial;
    size_t precise_batches; /* for the pooling estimators; 0 means all */
    run_model_id model;
    bn_config layer; /* the batch-norm settings (the classifier's too) */
    clf_settings clf; /* RUN_MODEL_CLASSIFIER's */
    run_eval eval;
    run_drift drift;  /* RUN_MODEL_LAYER's */
    /* [layer] initial: the layer's buffers before its first update
     * (RUN_MODEL_LAYER's), or NULL for 0 and 1. The experiment owns it:
     * a configuration with one lives no longer than its experiment. */
    const bn_initial *initial;
    /* The batch-dependence scores' shuffles (compose.h); 0: none made. */
    size_t compositions;
    /* [sequence]: the layer's rows as padded sequences (seqlayer.h);
     * length 0: plain rows. */
    struct {
        size_t length, min_length;
        int mask; /* seq_mask */
        /* [sequence] file's values (a row per sequence: a length, or L
         * mask values), or NULL for lengths from min_length; and its
         * name, for messages. */
        const pop_t *file;
        const char *file_name;
    } seq;
} run_config;

/* What the population stage hands a run: every row (the layer trains on
 * them), the classifier's training rows and held-out rows, and
 * [evaluation] file's rows (before [evaluation]'s shift, scale and
 * offset, which the run applies). A population without a held-out part
 * has held_out NULL, one without an evaluation file eval_file NULL. */
typedef struct {
    const pop_t *pop;
    const pop_t *train;
    const pop_t *held_out;
    const pop_t *eval_file;
} run_pops;

typedef struct {
    size_t updates;
    double init_weight;
    double stats_err, mean_err, var_err, worst_var_err;
    size_t worst_var_feature;
    double train_eval_rmse, batch_mean_err, batch_var_err;
    size_t props_pass, props_total;
    double stats_err_rel, worst_var_rel;
    /* The classifier's, on the evaluation rows and on the training rows
     * (fit_); accuracies are correct rows / rows. */
    double mean_err_rel, var_err_rel;
    double acc_train_mode, acc_eval_mode, loss_train_mode, loss_eval_mode;
    double agreement; /* rows both modes predict alike / rows */
    double fit_acc_train_mode, fit_acc_eval_mode;
    double fit_loss_train_mode, fit_loss_eval_mode;
    /* A declared network's: the last batch norm's stats_err_rel; the
     * radial part of the gradient of the weights before a batch norm,
     * measured and against its exact value; those weights' norm. */
    double last_stats_err_rel, radial, radial_excess, w_norm, w_norm_ratio;
    double logit_gap; /* max |z_train - z_eval| over the rows and classes */
    /* Batch dependence (compose.h), on the evaluation rows: the batches
     * formed; the largest and the mean over rows of a row's largest
     * range of a train-mode output (the layer's outputs, the
     * classifier's logits) over them, and the largest in eval mode; the
     * classifier's share of rows whose class moves, and its train-mode
     * accuracy in batches cut from the rows sorted by class, and by
     * group where the population has a group column (RUN_GRP_EXT). */
    size_t dep_batches;
    double batch_dependence, batch_dependence_mean, batch_dependence_eval;
    double class_flips, acc_train_by_class, acc_train_by_group;
    /* Padded sequences (seqlayer.h): the share of padded positions, and
     * the closed form of what padding does to buffers that pool every
     * position (RMS over features of pad_fraction mu and of pad_fraction
     * ((1 - pad_fraction) mu^2 - v)). */
    double pad_fraction, closed_mean_err, closed_var_err;
    /* Per feature, F values each, in one allocation the result owns
     * (run_result_free); NULL for a model without them: the final
     * buffers; the truth they are scored against (the evaluation rows');
     * the RMS over the evaluation rows of y_train - y_eval; and the mean
     * over the last epoch's batches of (batch mean - the stream's
     * mean)^2. */
    double *running_mean, *running_var, *true_mean, *true_var;
    double *train_eval, *batch_mean_sq;
} run_result;

/* One training batch as the run saw it, after the buffers' update. */
typedef struct {
    size_t epoch, index, b, f;
    const size_t *rows;  /* population row indices */
    const double *x;     /* B x F inputs */
    const double *y;     /* B x F train-mode outputs */
    const double *mean;  /* the batch's mean */
    const double *var;   /* the batch's biased variance */
    const bn_layer *layer;
} run_batch;

/* Optional hooks, for tests and for writing per-row outputs. */
typedef struct {
    void (*on_batch)(void *ctx, const run_batch *batch);
    /* After training: the rows evaluated (the last epoch's, in training
     * order, or the evaluation rows' of their own), with their train-mode
     * and eval-mode outputs, a batch at a time: rows first .. first + n - 1
     * (n x F outputs). A run with no row to show calls it once with n 0. */
    void (*on_outputs)(void *ctx, size_t first, size_t n, size_t f,
                       const size_t *rows, const double *y_train,
                       const double *y_eval);
    /* The classifier: after epoch `epoch` (from 0), the scores it would
     * have if training stopped there (the estimator's recompute made on a
     * copy of the buffers); the last epoch's are the run's. res holds no
     * buffers. */
    void (*on_epoch)(void *ctx, unsigned long epoch, const run_result *res);
    void *ctx;
    /* The classifier writes its tensors here (--write-weights), or NULL. */
    FILE *weights;
    /* The classifier's trainings kept for configurations that differ
     * only in [evaluation] (trained.h), or NULL. */
    struct trained_cache *trained;
} run_observer;

/* Batches in one epoch: N / B, plus the partial one when it is kept. */
size_t run_batches_per_epoch(size_t n, size_t b, run_partial partial);
/* The per-feature arrays of a result for f features, zeroed, in the one
 * allocation run_result_free frees; -1 when out of memory. */
int run_result_arrays(run_result *res, size_t f);
/* Free what a run's result owns (also after a failed run, when it holds
 * nothing). */
void run_result_free(run_result *res);
/* "drop" and "keep" by value, NULL past the last. */
const char *run_partial_name(int p);
int run_partial_parse(const char *s, run_partial *p);

#endif
