/*
 * The key table: every setting an experiment file can make, and every
 * column that identifies a row, declared once (exp.h says what a row
 * holds), with how an axis's value is applied to a run's configuration
 * and read back from it; and the defaults of a single run, which are the
 * table's. The values an experiment holds, the product of its axes, its
 * checks, its populations and its manifest are the other pieces of the
 * module (exp_parts.h).
 */
#include "study/exp.h"

#include <float.h>
#include <string.h>

#include "model/net.h"
#include "study/exp_parts.h"

/* ---- applying a value to a configuration, and reading it back ---- */

static void set_text(key_cell *c, const char *s)
{
    c->kind = CELL_TEXT;
    c->text = s;
}

static void set_int(key_cell *c, unsigned long long u)
{
    c->kind = CELL_INT;
    c->u = u;
}

static void set_real(key_cell *c, double r)
{
    c->kind = CELL_REAL;
    c->r = r;
}

#define APPLY(fn, stmt)                                                     \
    static void apply_##fn(run_config *c, const exp_t *e, key_value v)       \
    {                                                                       \
        (void)e;                                                            \
        stmt;                                                               \
    }
#define GET(fn, stmt)                                                       \
    static void get_##fn(const run_config *c, key_cell *out) { stmt; }

APPLY(gamma, c->layer.gamma = v.r)
APPLY(beta, c->layer.beta = v.r)
APPLY(eps, c->layer.eps = v.r)
APPLY(momentum, c->layer.momentum = v.r)
APPLY(weights, c->layer.weights = (bn_weights)v.i)
APPLY(variance, c->layer.variance = (bn_variance)v.i)
APPLY(estimator, c->layer.estimator = (bn_estimator)v.i)
APPLY(batch_size, c->batch_size = (size_t)v.u)
APPLY(order, c->order = e->orders[v.i])
APPLY(seed, c->seed = v.u)
APPLY(epochs, c->epochs = (unsigned long)v.u)
APPLY(partial, c->partial = (run_partial)v.i)
APPLY(precise, c->precise_batches = (size_t)v.u)
APPLY(model, c->model = (run_model_id)v.i)
APPLY(hidden, c->clf.hidden = (size_t)v.u)
APPLY(norm, c->clf.norm = (net_norm)v.i)
APPLY(freeze_after, c->clf.freeze_after = (unsigned long)v.u)
APPLY(lr, c->clf.lr = v.r)
APPLY(sgd_momentum, c->clf.sgd_momentum = v.r)
APPLY(weight_decay, c->clf.weight_decay = v.r)
APPLY(init_seed, c->clf.init_seed = v.u)
APPLY(shift, c->eval.shift = v.r)
APPLY(scale, c->eval.scale = v.r)
APPLY(offset, c->eval.offset = v.r)
APPLY(drift, c->drift.profile = e->drifts[v.i];
      drift_name(&e->drifts[v.i], c->drift.name, sizeof c->drift.name))
APPLY(drift_size, c->drift.size = v.r)

GET(gamma, set_real(out, c->layer.gamma))
GET(beta, set_real(out, c->layer.beta))
GET(eps, set_real(out, c->layer.eps))
GET(momentum, set_real(out, c->layer.momentum))
GET(weights, set_text(out, bn_weights_name((int)c->layer.weights)))
GET(variance, set_text(out, bn_variance_name((int)c->layer.variance)))
GET(estimator, set_text(out, bn_estimator_name(c->layer.estimator)))
GET(batch_size, set_int(out, c->batch_size))
GET(order, set_text(out, c->order.name))
GET(seed, set_int(out, c->seed))
GET(epochs, set_int(out, c->epochs))
GET(partial, set_text(out, run_partial_name((int)c->partial)))
GET(precise, set_int(out, c->precise_batches))
GET(experiment, set_text(out, c->experiment))
GET(population, set_text(out, c->population))
GET(new_weight, set_real(out, c->layer.p))
GET(model, set_text(out, run_model_name((int)c->model)))
GET(hidden, set_int(out, c->clf.hidden))
GET(norm, set_text(out, net_norm_name((int)c->clf.norm)))
GET(freeze_after, set_int(out, c->clf.freeze_after))
GET(lr, set_real(out, c->clf.lr))
GET(sgd_momentum, set_real(out, c->clf.sgd_momentum))
GET(weight_decay, set_real(out, c->clf.weight_decay))
GET(init_seed, set_int(out, c->clf.init_seed))
GET(shift, set_real(out, c->eval.shift))
GET(scale, set_real(out, c->eval.scale))
GET(offset, set_real(out, c->eval.offset))
GET(drift, set_text(out, c->drift.name))
GET(drift_size, set_real(out, c->drift.size))

#define ALL (COL_SUMMARY | COL_FEATURES | COL_SEEDS)
/* The classifier's files are summary.tsv's and the many-seed ones. */
#define CLF_FILES (COL_SUMMARY | COL_SEEDS)
#define ANY RUN_MODELS_ALL
#define M_LAYER RUN_MODEL_BIT(RUN_MODEL_LAYER)
#define M_CLF RUN_MODEL_BIT(RUN_MODEL_CLASSIFIER)
#define M_BN (M_LAYER | M_CLF)

/* In section order, which the manifest keeps. The column numbers 1..10
 * are the published study's; nest orders the product (the model and its
 * settings vary slowest; batch size varies fastest, then the seed:
 * exp_index and the many-seed files rely on both). */
const key_def keys[KEY_COUNT] = {
    [KEY_DESCRIPTION] = {"experiment", "description", KT_TEXT, "", 0, 0, 0,
                         0, 0, NULL, "TEXT",
                         "what the experiment shows, copied into the "
                         "manifest", 0, 0, 0, ANY, NULL, NULL},
    [KEY_TABLE] = {"experiment", "table", KT_COLUMNS,
                   "order batch_size updates stats_err train_eval_rmse "
                   "batch_mean_err init_weight",
                   0, 0, 0, 0, 0, NULL, "COLUMN ...",
                   "the reading table's columns (summary.tsv's; the "
                   "default is the model's)", 0, 0, 0, ANY, NULL, NULL},
    [KEY_OUTPUTS] = {"experiment", "outputs", KT_OUTPUTS,
                     "summary features table manifest distribution "
                     "expectation curve",
                     0, 0, 0, 0, 0, NULL, "FILE ...",
                     "the files a sweep writes (the many-seed ones only "
                     "with many seeds, a model's only when it trains)",
                     0, 0, 0, ANY, NULL, NULL},
    [KEY_ROWS] = {"population", "rows", KT_UINT, "512", 0, 0, 0, 2,
                  100000000, NULL, "N", "rows of the population", 0, 0, 0,
                  ANY, NULL, NULL},
    [KEY_POP_SEED] = {"population", "seed", KT_UINT, "1", 0, 0, 0, 0,
                      UINT64_MAX, NULL, "S",
                      "PCG32 initstate of the population noise", 0, 0, 0,
                      ANY, NULL, NULL},
    [KEY_FEATURE] = {"population", "feature", KT_FEATURE, NULL, 0, 0, 0, 0,
                     0, NULL, "NAME MEAN SD RHO",
                     "one feature per line; any replaces the default eight",
                     0, 0, 0, ANY, NULL, NULL},
    [KEY_POP_CLASSES] = {"population", "classes", KT_UINT, "0", 0, 0, 0, 0,
                         100000000, NULL, "K",
                         "K equal classes by quantiles of the latent, with "
                         "label noise (0: no labels)",
                         0, 0, 0, ANY, NULL, NULL},
    [KEY_POP_LABEL_NOISE] = {"population", "label_noise", KT_REAL, "0.25",
                             0, DBL_MAX, 0, 0, 0, NULL, "S",
                             "a row's class is the quantile of its latent "
                             "plus S times standard normal noise",
                             0, 0, 0, ANY, NULL, NULL},
    [KEY_POP_FILE] = {"population", "file", KT_PATH, NULL, 0, 0, 0, 0, 0,
                      NULL, "PATH",
                      "rows read from a CSV, TSV or .npy file instead "
                      "(relative to the experiment file)",
                      0, 0, 0, ANY, NULL, NULL},
    [KEY_POP_LABEL] = {"population", "label", KT_COLUMN, NULL, 0, 0, 0, 0,
                       0, NULL, "COLUMN",
                       "the file's column of class labels, kept out of the "
                       "features",
                       0, 0, 0, ANY, NULL, NULL},
    [KEY_POP_GROUP] = {"population", "group", KT_COLUMN, NULL, 0, 0, 0, 0,
                       0, NULL, "COLUMN",
                       "the file's column of groups (user, source, time), "
                       "kept out of the features",
                       0, 0, 0, ANY, NULL, NULL},
    [KEY_HOLDOUT] = {"population", "holdout", KT_REAL, "0.25", 0, 1, 1, 0,
                     0, NULL, "FRACTION",
                     "the share of each class of a file held out to "
                     "evaluate the classifier on",
                     0, 0, 0, M_CLF, NULL, NULL},
    [KEY_HOLDOUT_SEED] = {"population", "holdout_seed", KT_UINT, "1", 0, 0,
                          0, 0, UINT64_MAX, NULL, "S",
                          "PCG32 initstate of the held-out split's "
                          "shuffles",
                          0, 0, 0, M_CLF, NULL, NULL},
    [KEY_MAPS_IMAGE] = {"maps", "image", KT_SHAPE, NULL, 0, 0, 0, 1,
                        CONVPOP_MAX_SIDE, NULL, "H W",
                        "read each row of the population file as an image "
                        "of H x W pixels and pass it through the filters: "
                        "feature maps, a row per image and position",
                        0, 0, 0, M_LAYER, NULL, NULL},
    [KEY_MAPS_FILTERS] = {"maps", "filters", KT_UINT, "4", 0, 0, 0, 1, 256,
                          NULL, "C",
                          "the images' filters, each a channel of the maps",
                          0, 0, 0, M_LAYER, NULL, NULL},
    [KEY_MAPS_KERNEL] = {"maps", "kernel", KT_UINT, "3", 0, 0, 0, 1,
                         CONVPOP_MAX_KERNEL, NULL, "K",
                         "each filter K x K, weights uniform on (-1/K, 1/K) "
                         "from PCG32(seed, 14); maps H-K+1 x W-K+1",
                         0, 0, 0, M_LAYER, NULL, NULL},
    [KEY_MAPS_SIZE] = {"maps", "size", KT_SHAPE, NULL, 0, 0, 0, 1,
                       CONVPOP_MAX_SIDE, NULL, "H W",
                       "generate feature maps of H x W instead, channels "
                       "from channel lines",
                       0, 0, 0, M_LAYER, NULL, NULL},
    [KEY_MAPS_SAMPLES] = {"maps", "samples", KT_UINT, "256", 0, 0, 0, 2,
                          100000000, NULL, "M", "the generated maps",
                          0, 0, 0, M_LAYER, NULL, NULL},
    [KEY_MAPS_CHANNEL] = {"maps", "channel", KT_CHANNEL, NULL, 0, 0, 0, 0, 0,
                          NULL, "NAME MEAN SD R",
                          "one generated channel per line: its mean, sd "
                          "and the correlation R between neighbours",
                          0, 0, 0, M_LAYER, NULL, NULL},
    [KEY_MAPS_SEED] = {"maps", "seed", KT_UINT, "1", 0, 0, 0, 0, UINT64_MAX,
                       NULL, "S",
                       "PCG32 initstate of the filters, or of the generated "
                       "maps",
                       0, 0, 0, M_LAYER, NULL, NULL},
    [KEY_EVAL_SHIFT] = {"evaluation", "shift", KT_REALS, "0", -DBL_MAX,
                        DBL_MAX, 0, 0, 0, NULL, "D",
                        "each feature's mean moved by D of its standard "
                        "deviations",
                        25, ALL, 9, M_BN, apply_shift, get_shift},
    [KEY_EVAL_SCALE] = {"evaluation", "scale", KT_REALS, "1", 0, DBL_MAX, 1,
                        0, 0, NULL, "S",
                        "each feature's spread about its mean multiplied by "
                        "S",
                        26, ALL, 10, M_BN, apply_scale, get_scale},
    [KEY_EVAL_OFFSET] = {"evaluation", "offset", KT_REALS, "0", -DBL_MAX,
                         DBL_MAX, 0, 0, 0, NULL, "A",
                         "each feature moved by A in its own units (a "
                         "constant feature moves too)",
                         27, ALL, 11, M_BN, apply_offset, get_offset},
    [KEY_EVAL_FILE] = {"evaluation", "file", KT_PATH, NULL, 0, 0, 0, 0, 0,
                       NULL, "PATH",
                       "rows to evaluate on instead (the classifier's in "
                       "place of held-out ones; the population's features "
                       "and label column)",
                       0, 0, 0, M_BN, NULL, NULL},
    [KEY_MODEL] = {"model", "type", KT_CHOICES, "layer", 0, 0, 0, 0, 0,
                   run_model_name, "MODEL", "the model trained", 17,
                   CLF_FILES, 1, ANY, apply_model, get_model},
    [KEY_HIDDEN] = {"model", "hidden", KT_UINTS, "16", 0, 0, 0, 1,
                    CLF_MAX_HIDDEN, NULL, "H",
                    "the classifier's hidden units", 18, CLF_FILES, 2,
                    M_CLF, apply_hidden, get_hidden},
    [KEY_NORM] = {"model", "norm", KT_CHOICES, "batch", 0, 0, 0, 0, 0,
                  net_norm_name, "N",
                  "batch norm over the hidden units, or none", 19,
                  CLF_FILES, 3, M_CLF, apply_norm, get_norm},
    [KEY_FREEZE_AFTER] = {"model", "freeze_after", KT_UINTS, "0", 0, 0, 0, 0,
                          1000000, NULL, "E0",
                          "from epoch E0 + 1 on, batch norm uses its "
                          "buffers and keeps them (0: never)",
                          24, CLF_FILES, 8, M_CLF, apply_freeze_after,
                          get_freeze_after},
    [KEY_LR] = {"model", "lr", KT_REALS, "0.1", 0, DBL_MAX, 0, 0, 0, NULL,
                "LR", "SGD's learning rate", 20, CLF_FILES, 4, M_CLF,
                apply_lr, get_lr},
    [KEY_SGD_MOMENTUM] = {"model", "sgd_momentum", KT_REALS, "0", 0, 1, 0,
                          0, 0, NULL, "M",
                          "SGD's momentum, below 1 (not batch norm's)", 21,
                          CLF_FILES, 5, M_CLF, apply_sgd_momentum,
                          get_sgd_momentum},
    [KEY_WEIGHT_DECAY] = {"model", "weight_decay", KT_REALS, "0", 0, DBL_MAX,
                          0, 0, 0, NULL, "WD", "SGD's weight decay", 22,
                          CLF_FILES, 6, M_CLF, apply_weight_decay,
                          get_weight_decay},
    [KEY_INIT_SEED] = {"model", "init_seed", KT_UINTS, "1", 0, 0, 0, 0,
                       UINT64_MAX, NULL, "S",
                       "PCG32 initstate of the initial weights", 23,
                       CLF_FILES, 7, M_CLF, apply_init_seed, get_init_seed},
    [KEY_GAMMA] = {"layer", "gamma", KT_REALS, "1", -DBL_MAX, DBL_MAX, 0, 0,
                   0, NULL, "G", "the affine scale", 14, ALL, 15, M_LAYER,
                   apply_gamma, get_gamma},
    [KEY_BETA] = {"layer", "beta", KT_REALS, "0", -DBL_MAX, DBL_MAX, 0, 0,
                  0, NULL, "B0", "the affine shift", 15, ALL, 16, M_LAYER,
                  apply_beta, get_beta},
    [KEY_EPS] = {"layer", "eps", KT_REALS, "1e-05", 0, DBL_MAX, 1, 0, 0,
                 NULL, "E", "added to the variance", 13, ALL, 14, M_BN,
                 apply_eps, get_eps},
    [KEY_MOMENTUM] = {"layer", "momentum", KT_REALS, "0.9", 0, 1, 1, 0, 0,
                      NULL, "M", "the moving average's momentum", 5, ALL, 21,
                      M_BN, apply_momentum, get_momentum},
    [KEY_WEIGHTS] = {"layer", "momentum_weights", KT_CHOICES, "old", 0, 0,
                     0, 0, 0, bn_weights_name, "W",
                     "the value M weighs (old: Keras, the study; new: "
                     "PyTorch)",
                     6, ALL, 20, M_BN, apply_weights, get_weights},
    [KEY_VARIANCE] = {"layer", "variance", KT_CHOICES, "biased", 0, 0, 0, 0,
                      0, bn_variance_name, "V",
                      "the variance the buffer update takes", 8, ALL, 19,
                      M_BN, apply_variance, get_variance},
    [KEY_ESTIMATOR] = {"layer", "estimator", KT_CHOICES, "ema", 0, 0, 0, 0,
                       0, bn_estimator_name_at, "E",
                       "the running statistics' estimator", 10, ALL, 17,
                       M_BN, apply_estimator, get_estimator},
    [KEY_BATCH_SIZE] = {"sweep", "batch_size", KT_UINTS, "256", 0, 0, 0, 1,
                        100000000, NULL, "B",
                        "rows per batch, up to the population's (whole "
                        "samples of feature maps)", 4, ALL,
                        26, ANY, apply_batch_size, get_batch_size},
    [KEY_ORDER] = {"sweep", "order", KT_ORDERS, "shuffled", 0, 0, 0, 0, 0,
                   NULL, "ORDER", "the order the batches are cut from", 2,
                   ALL, 18, ANY, apply_order, get_order},
    [KEY_SEED] = {"sweep", "seed", KT_UINTS, "1", 0, 0, 0, 0, UINT64_MAX,
                  NULL, "S", "the shuffle's seed, PCG32 initstate", 3,
                  COL_SUMMARY | COL_FEATURES, 25, ANY, apply_seed, get_seed},
    [KEY_EPOCHS] = {"sweep", "epochs", KT_UINTS, "1", 0, 0, 0, 1, 1000000,
                    NULL, "E", "passes over the same order", 9, ALL, 22,
                    ANY, apply_epochs, get_epochs},
    [KEY_PARTIAL] = {"sweep", "partial", KT_CHOICES, "drop", 0, 0, 0, 0, 0,
                     run_partial_name, "P",
                     "drop or keep a last partial batch", 11, ALL, 23, ANY,
                     apply_partial, get_partial},
    [KEY_PRECISE] = {"sweep", "precise_batches", KT_UINTS, "0", 0, 0, 0, 0,
                     100000000, NULL, "K",
                     "batches the precise estimator pools, 0 all", 12, ALL,
                     24, M_BN, apply_precise, get_precise},
    [KEY_DRIFT] = {"sweep", "drift", KT_DRIFTS, "none", 0, 0, 0, 0, 0, NULL,
                   "PROFILE",
                   "the training stream's drift: none, step:T0 (after "
                   "update T0) or ramp:T0:T1 (from T0 to T1)",
                   28, ALL, 12, M_LAYER, apply_drift, get_drift},
    [KEY_DRIFT_SIZE] = {"sweep", "drift_size", KT_REALS, "0", -DBL_MAX,
                        DBL_MAX, 0, 0, 0, NULL, "D",
                        "the drift's full move of each feature, in its "
                        "standard deviations",
                        29, ALL, 13, M_LAYER, apply_drift_size,
                        get_drift_size},
    [KEY_EXPERIMENT] = {NULL, "experiment", KT_DERIVED, NULL, 0, 0, 0, 0, 0,
                        NULL, NULL, "the experiment file's stem", 1, ALL, 0,
                        ANY, NULL, get_experiment},
    [KEY_POPULATION] = {NULL, "population", KT_DERIVED, NULL, 0, 0, 0, 0, 0,
                        NULL, NULL,
                        "the population's identifier (popid.h)", 16, ALL,
                        0, ANY, NULL, get_population},
    [KEY_NEW_WEIGHT] = {NULL, "new_weight", KT_DERIVED, NULL, 0, 0, 0, 0, 0,
                        NULL, NULL,
                        "p, the new value's weight, from momentum and "
                        "momentum_weights",
                        7, COL_SUMMARY | COL_SEEDS, 0, M_BN, NULL,
                        get_new_weight},
};

const key_def *exp_key(key_id k) { return &keys[k]; }

int exp_key_find(const char *section, const char *name)
{
    for (int k = 0; k < KEY_COUNT; k++)
        if (keys[k].section && strcmp(keys[k].section, section) == 0 &&
            strcmp(keys[k].name, name) == 0)
            return k;
    return -1;
}

/* ---- the defaults of a single run ---- */

void run_default_config(run_config *cfg)
{
    exp_t e;
    bn_error err;
    /* The defaults are the table's, which a unit test checks are valid. */
    if (exp_init(&e, &err) != 0 || exp_finish(&e, &err) != 0) {
        memset(cfg, 0, sizeof *cfg);
        exp_free(&e);
        return;
    }
    exp_config(&e, 0, cfg);
    exp_free(&e);
}
