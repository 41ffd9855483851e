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
#include "model/optim.h"
#include "model/seqlayer.h"
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

/* drift_name's text (an snprintf) for every configuration a sweep makes:
 * the last one kept, per thread, by the fields it shows; the bytes after
 * its NUL zero, as in a configuration cleared and then named. */
static void drift_text(const drift_spec *d, run_drift *out)
{
    static _Thread_local struct {
        int valid;
        drift_spec d;
        char name[sizeof out->name];
    } last;
    if (!last.valid || last.d.kind != d->kind || last.d.t0 != d->t0 ||
        last.d.t1 != d->t1) {
        memset(last.name, 0, sizeof last.name);
        drift_name(d, last.name, sizeof last.name);
        last.d = *d, last.valid = 1;
    }
    memcpy(out->name, last.name, sizeof out->name);
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
APPLY(devices, c->layer.devices = (size_t)v.u)
APPLY(sync, c->layer.sync = v.i)
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
APPLY(layers, c->clf.net = e->nets[v.i])
APPLY(depth, c->clf.depth = (size_t)v.u)
APPLY(dtype, c->clf.dtype = (net_dtype)v.i)
APPLY(optimizer, c->clf.optimizer = (net_optimizer)v.i)
APPLY(adam_beta1, c->clf.beta1 = v.r)
APPLY(adam_beta2, c->clf.beta2 = v.r)
APPLY(adam_eps, c->clf.adam_eps = v.r)
APPLY(warmup, c->clf.warmup = (unsigned long)v.u)
APPLY(schedule, c->clf.schedule = (net_schedule)v.i)
APPLY(step_epochs, c->clf.step_epochs = (unsigned long)v.u)
APPLY(step_factor, c->clf.step_factor = v.r)
APPLY(shift, c->eval.shift = v.r)
APPLY(scale, c->eval.scale = v.r)
APPLY(offset, c->eval.offset = v.r)
APPLY(drift, c->drift.profile = e->drifts[v.i];
      drift_text(&e->drifts[v.i], &c->drift))
APPLY(drift_size, c->drift.size = v.r)
APPLY(compositions, c->compositions = (size_t)v.u)
APPLY(seq_length, c->seq.length = (size_t)v.u)
APPLY(seq_min_length, c->seq.min_length = (size_t)v.u)
APPLY(seq_mask, c->seq.mask = v.i)

GET(gamma, set_real(out, c->layer.gamma))
GET(beta, set_real(out, c->layer.beta))
GET(eps, set_real(out, c->layer.eps))
GET(momentum, set_real(out, c->layer.momentum))
GET(weights, set_text(out, bn_weights_name((int)c->layer.weights)))
GET(variance, set_text(out, bn_variance_name((int)c->layer.variance)))
GET(estimator, set_text(out, bn_estimator_name(c->layer.estimator)))
GET(devices, set_int(out, c->layer.devices))
GET(sync, set_text(out, bn_sync_name(c->layer.sync)))
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
/* hidden and norm shape the default network only: "-" beside declared
 * layers. */
static void get_hidden(const run_config *c, key_cell *out)
{
    if (c->clf.net.n)
        set_text(out, "-");
    else
        set_int(out, c->clf.hidden);
}
GET(norm, set_text(out, c->clf.net.n ? "-"
                                      : net_norm_name((int)c->clf.norm)))
static void freeze_cell(key_cell *out, unsigned long e0)
{
    if (e0 == CLF_FREEZE_START)
        set_text(out, "start");
    else
        set_int(out, e0);
}
GET(freeze_after, freeze_cell(out, c->clf.freeze_after))
GET(lr, set_real(out, c->clf.lr))
GET(sgd_momentum, set_real(out, c->clf.sgd_momentum))
GET(weight_decay, set_real(out, c->clf.weight_decay))
GET(init_seed, set_int(out, c->clf.init_seed))
GET(depth, if (c->clf.net.n) set_text(out, "-");
    else set_int(out, c->clf.depth))
GET(dtype, set_text(out, net_dtype_name((int)c->clf.dtype)))
GET(optimizer, set_text(out, optim_name((int)c->clf.optimizer)))
GET(adam_beta1, set_real(out, c->clf.beta1))
GET(adam_beta2, set_real(out, c->clf.beta2))
GET(adam_eps, set_real(out, c->clf.adam_eps))
GET(warmup, set_int(out, c->clf.warmup))
GET(schedule, set_text(out, optim_schedule_name((int)c->clf.schedule)))
GET(step_epochs, set_int(out, c->clf.step_epochs))
GET(step_factor, set_real(out, c->clf.step_factor))

/* The declared network as its canonical text; "-" for the one hidden,
 * norm and depth describe (their columns say it, and a figure takes no
 * column that follows another for an axis of its own). */
static void get_layers(const run_config *c, key_cell *out)
{
    out->kind = CELL_TEXT;
    out->text = c->clf.net.n ? NULL : "-";
    if (c->clf.net.n)
        nn_format(&c->clf.net, out->buf, sizeof out->buf);
}
GET(shift, set_real(out, c->eval.shift))
GET(scale, set_real(out, c->eval.scale))
GET(offset, set_real(out, c->eval.offset))
GET(drift, set_text(out, c->drift.name))
GET(drift_size, set_real(out, c->drift.size))
GET(compositions, set_int(out, c->compositions))
GET(seq_length, set_int(out, c->seq.length))
GET(seq_min_length, set_int(out, c->seq.min_length))
GET(seq_mask, set_text(out, seq_mask_name(c->seq.mask)))

#define ALL (COL_SUMMARY | COL_FEATURES | COL_SEEDS)
/* The classifier's files are summary.tsv's and the many-seed ones. */
#define CLF_FILES (COL_SUMMARY | COL_SEEDS)
#define ANY RUN_MODELS_ALL
#define M_LAYER RUN_MODEL_BIT(RUN_MODEL_LAYER)
#define M_CLF RUN_MODEL_BIT(RUN_MODEL_CLASSIFIER)
#define M_BN (M_LAYER | M_CLF)
/* A declared network's keys: in the files only of an experiment that sets
 * one (RUN_NET_EXT). */
#define M_NET (M_CLF | RUN_NET_EXT)

/* In section order, which the manifest keeps. The column numbers 1..10
 * are the published study's; nest orders the product (the model and its
 * settings vary slowest; batch size varies fastest, then the seed:
 * exp_index and the many-seed files rely on both). */
const key_def keys[KEY_COUNT] = {
    [KEY_DESCRIPTION] = {.section = "experiment", .name = "description",
                         .type = KT_TEXT, .dflt = "", .arg = "TEXT",
                         .help = "what the experiment shows, copied into the "
                                 "manifest",
                         .models = ANY},
    [KEY_TABLE] = {.section = "experiment", .name = "table",
                   .type = KT_COLUMNS,
                   .dflt = "order batch_size updates stats_err "
                           "train_eval_rmse batch_mean_err init_weight",
                   .arg = "COLUMN ...",
                   .help = "the reading table's columns (summary.tsv's; the "
                           "default is the model's)",
                   .models = ANY},
    [KEY_OUTPUTS] = {.section = "experiment", .name = "outputs",
                     .type = KT_OUTPUTS,
                     .dflt = "summary features table manifest distribution "
                             "expectation curve",
                     .arg = "FILE ...",
                     .help = "the files a sweep writes (the many-seed ones "
                             "only with many seeds, a model's only when it "
                             "trains)",
                     .models = ANY},
    [KEY_ROWS] = {.section = "population", .name = "rows", .type = KT_UINT,
                  .dflt = "512", .min = 2, .max = 100000000, .arg = "N",
                  .help = "rows of the population", .models = ANY},
    [KEY_POP_SEED] = {.section = "population", .name = "seed", .type = KT_UINT,
                      .dflt = "1", .max = UINT64_MAX, .arg = "S",
                      .help = "PCG32 initstate of the population noise",
                      .models = ANY},
    [KEY_FEATURE] = {.section = "population", .name = "feature",
                     .type = KT_FEATURE, .arg = "NAME MEAN SD RHO",
                     .help = "one feature per line; any replaces the default "
                             "eight",
                     .models = ANY},
    [KEY_POP_CLASSES] = {.section = "population", .name = "classes",
                         .type = KT_UINT, .dflt = "0", .max = 100000000,
                         .arg = "K",
                         .help = "K equal classes by quantiles of the "
                                 "latent, with label noise (0: no labels)",
                         .models = ANY},
    [KEY_POP_LABEL_NOISE] = {.section = "population", .name = "label_noise",
                             .type = KT_REAL, .dflt = "0.25", .hi = DBL_MAX,
                             .arg = "S",
                             .help = "a row's class is the quantile of its "
                                     "latent plus S times standard normal "
                                     "noise",
                             .models = ANY},
    [KEY_POP_FILE] = {.section = "population", .name = "file", .type = KT_PATH,
                      .arg = "PATH",
                      .help = "rows read from a CSV, TSV or .npy file "
                              "instead (relative to the experiment file)",
                      .models = ANY},
    [KEY_POP_LABEL] = {.section = "population", .name = "label",
                       .type = KT_COLUMN, .arg = "COLUMN",
                       .help = "the file's column of class labels, kept out "
                               "of the features",
                       .models = ANY},
    [KEY_POP_GROUP] = {.section = "population", .name = "group",
                       .type = KT_COLUMN, .arg = "COLUMN",
                       .help = "the file's column of groups (user, source, "
                               "time), kept out of the features",
                       .models = ANY},
    [KEY_HOLDOUT] = {.section = "population", .name = "holdout",
                     .type = KT_REAL, .dflt = "0.25", .hi = 1, .lo_open = 1,
                     .arg = "FRACTION",
                     .help = "the share of each class of a file held out to "
                             "evaluate the classifier on",
                     .models = M_CLF},
    [KEY_HOLDOUT_SEED] = {.section = "population", .name = "holdout_seed",
                          .type = KT_UINT, .dflt = "1", .max = UINT64_MAX,
                          .arg = "S",
                          .help = "PCG32 initstate of the held-out split's "
                                  "shuffles",
                          .models = M_CLF},
    [KEY_MAPS_IMAGE] = {.section = "maps", .name = "image", .type = KT_SHAPE,
                        .min = 1, .max = CONVPOP_MAX_SIDE, .arg = "H W",
                        .help = "read each row of the population file as an "
                                "image of H x W pixels and pass it through "
                                "the filters: feature maps, a row per image "
                                "and position",
                        .models = M_LAYER},
    [KEY_MAPS_FILTERS] = {.section = "maps", .name = "filters",
                          .type = KT_UINT, .dflt = "4", .min = 1, .max = 256,
                          .arg = "C",
                          .help = "the images' filters, each a channel of "
                                  "the maps",
                          .models = M_LAYER},
    [KEY_MAPS_KERNEL] = {.section = "maps", .name = "kernel", .type = KT_UINT,
                         .dflt = "3", .min = 1, .max = CONVPOP_MAX_KERNEL,
                         .arg = "K",
                         .help = "each filter K x K, weights uniform on "
                                 "(-1/K, 1/K) from PCG32(seed, 14); maps "
                                 "H-K+1 x W-K+1",
                         .models = M_LAYER},
    [KEY_MAPS_SIZE] = {.section = "maps", .name = "size", .type = KT_SHAPE,
                       .min = 1, .max = CONVPOP_MAX_SIDE, .arg = "H W",
                       .help = "generate feature maps of H x W instead, "
                               "channels from channel lines",
                       .models = M_LAYER},
    [KEY_MAPS_SAMPLES] = {.section = "maps", .name = "samples",
                          .type = KT_UINT, .dflt = "256", .min = 2,
                          .max = 100000000, .arg = "M",
                          .help = "the generated maps", .models = M_LAYER},
    [KEY_MAPS_CHANNEL] = {.section = "maps", .name = "channel",
                          .type = KT_CHANNEL, .arg = "NAME MEAN SD R",
                          .help = "one generated channel per line: its mean, "
                                  "sd and the correlation R between "
                                  "neighbours",
                          .models = M_LAYER},
    [KEY_MAPS_SEED] = {.section = "maps", .name = "seed", .type = KT_UINT,
                       .dflt = "1", .max = UINT64_MAX, .arg = "S",
                       .help = "PCG32 initstate of the filters, or of the "
                               "generated maps",
                       .models = M_LAYER},
    [KEY_EVAL_SHIFT] = {.section = "evaluation", .name = "shift",
                        .type = KT_REALS, .dflt = "0", .lo = -DBL_MAX,
                        .hi = DBL_MAX, .arg = "D",
                        .help = "each feature's mean moved by D of its "
                                "standard deviations",
                        .col = 25, .files = ALL, .nest = 20, .models = M_BN,
                        .apply = apply_shift, .get = get_shift},
    [KEY_EVAL_SCALE] = {.section = "evaluation", .name = "scale",
                        .type = KT_REALS, .dflt = "1", .hi = DBL_MAX,
                        .lo_open = 1, .arg = "S",
                        .help = "each feature's spread about its mean "
                                "multiplied by S",
                        .col = 26, .files = ALL, .nest = 21, .models = M_BN,
                        .apply = apply_scale, .get = get_scale},
    [KEY_EVAL_OFFSET] = {.section = "evaluation", .name = "offset",
                         .type = KT_REALS, .dflt = "0", .lo = -DBL_MAX,
                         .hi = DBL_MAX, .arg = "A",
                         .help = "each feature moved by A in its own units "
                                 "(a constant feature moves too)",
                         .col = 27, .files = ALL, .nest = 22, .models = M_BN,
                         .apply = apply_offset, .get = get_offset},
    [KEY_EVAL_FILE] = {.section = "evaluation", .name = "file",
                       .type = KT_PATH, .arg = "PATH",
                       .help = "rows to evaluate on instead (the "
                               "classifier's in place of held-out ones; the "
                               "population's features and label column)",
                       .models = M_BN},
    [KEY_MODEL] = {.section = "model", .name = "type", .type = KT_CHOICES,
                   .dflt = "layer", .choice = run_model_name, .arg = "MODEL",
                   .help = "the model trained", .col = 17, .files = CLF_FILES,
                   .nest = 1, .models = ANY, .apply = apply_model,
                   .get = get_model},
    [KEY_HIDDEN] = {.section = "model", .name = "hidden", .type = KT_UINTS,
                    .dflt = "16", .min = 1, .max = CLF_MAX_HIDDEN, .arg = "H",
                    .help = "the classifier's hidden units", .col = 18,
                    .files = CLF_FILES, .nest = 13, .models = M_CLF,
                    .apply = apply_hidden, .get = get_hidden},
    [KEY_NORM] = {.section = "model", .name = "norm", .type = KT_CHOICES,
                  .dflt = "batch", .choice = net_norm_name, .arg = "N",
                  .help = "batch norm over the hidden units, or none",
                  .col = 19, .files = CLF_FILES, .nest = 14, .models = M_CLF,
                  .apply = apply_norm, .get = get_norm},
    [KEY_FREEZE_AFTER] = {.section = "model", .name = "freeze_after",
                          .type = KT_UINTS, .dflt = "0", .max = 1000000,
                          .word = "start", .word_value = CLF_FREEZE_START,
                          .arg = "E0",
                          .help = "from epoch E0 + 1 on, batch norm uses its "
                                  "buffers and keeps them (0: never; start: "
                                  "from the first step)",
                          .col = 24, .files = CLF_FILES, .nest = 19,
                          .models = M_CLF, .apply = apply_freeze_after,
                          .get = get_freeze_after},
    [KEY_LR] = {.section = "model", .name = "lr", .type = KT_REALS,
                .dflt = "0.1", .hi = DBL_MAX, .arg = "LR",
                .help = "SGD's learning rate", .col = 20, .files = CLF_FILES,
                .nest = 15, .models = M_CLF, .apply = apply_lr, .get = get_lr},
    [KEY_SGD_MOMENTUM] = {.section = "model", .name = "sgd_momentum",
                          .type = KT_REALS, .dflt = "0", .hi = 1, .arg = "M",
                          .help = "SGD's momentum, below 1 (not batch norm's)",
                          .col = 21, .files = CLF_FILES, .nest = 16,
                          .models = M_CLF, .apply = apply_sgd_momentum,
                          .get = get_sgd_momentum},
    [KEY_WEIGHT_DECAY] = {.section = "model", .name = "weight_decay",
                          .type = KT_REALS, .dflt = "0", .hi = DBL_MAX,
                          .arg = "WD", .help = "SGD's weight decay", .col = 22,
                          .files = CLF_FILES, .nest = 17, .models = M_CLF,
                          .apply = apply_weight_decay,
                          .get = get_weight_decay},
    [KEY_INIT_SEED] = {.section = "model", .name = "init_seed",
                       .type = KT_UINTS, .dflt = "1", .max = UINT64_MAX,
                       .arg = "S",
                       .help = "PCG32 initstate of the initial weights",
                       .col = 23, .files = CLF_FILES, .nest = 18,
                       .models = M_CLF, .apply = apply_init_seed,
                       .get = get_init_seed},
    [KEY_LAYERS] = {.section = "model", .name = "layers", .type = KT_NETS,
                    .dflt = "", .arg = "LAYERS",
                    .help = "the network, layers separated by spaces and "
                            "networks by commas (linear:16 batch relu "
                            "linear:K); empty: linear:H, batch norm (unless "
                            "norm is none), relu, linear:K",
                    .col = 30, .files = CLF_FILES, .nest = 2, .models = M_NET,
                    .apply = apply_layers, .get = get_layers},
    [KEY_DEPTH] = {.section = "model", .name = "depth", .type = KT_UINTS,
                   .dflt = "1", .min = 1, .max = CLF_MAX_DEPTH, .arg = "D",
                   .help = "the default network's hidden blocks (linear:H, "
                           "batch norm unless norm is none, relu), before "
                           "linear:K",
                   .col = 31, .files = CLF_FILES, .nest = 3, .models = M_NET,
                   .apply = apply_depth, .get = get_depth},
    [KEY_DTYPE] = {.section = "model", .name = "dtype", .type = KT_CHOICES,
                   .dflt = "float64", .choice = net_dtype_name, .arg = "T",
                   .help = "the arithmetic: float64, or float32 (every "
                           "stored value rounded, sums in float64)",
                   .col = 32, .files = CLF_FILES, .nest = 4, .models = M_NET,
                   .apply = apply_dtype, .get = get_dtype},
    [KEY_OPTIMIZER] = {.section = "model", .name = "optimizer",
                       .type = KT_CHOICES, .dflt = "sgd",
                       .choice = optim_name, .arg = "O",
                       .help = "the optimiser, torch.optim's update",
                       .col = 33, .files = CLF_FILES, .nest = 5,
                       .models = M_NET, .apply = apply_optimizer,
                       .get = get_optimizer},
    [KEY_ADAM_BETA1] = {.section = "model", .name = "adam_beta1",
                        .type = KT_REALS, .dflt = "0.9", .hi = 1,
                        .arg = "B1",
                        .help = "Adam's first-moment decay, below 1",
                        .col = 34, .files = CLF_FILES, .nest = 6,
                        .models = M_NET, .apply = apply_adam_beta1,
                        .get = get_adam_beta1},
    [KEY_ADAM_BETA2] = {.section = "model", .name = "adam_beta2",
                        .type = KT_REALS, .dflt = "0.999", .hi = 1,
                        .arg = "B2",
                        .help = "Adam's second-moment decay, below 1",
                        .col = 35, .files = CLF_FILES, .nest = 7,
                        .models = M_NET, .apply = apply_adam_beta2,
                        .get = get_adam_beta2},
    [KEY_ADAM_EPS] = {.section = "model", .name = "adam_eps",
                      .type = KT_REALS, .dflt = "1e-08", .hi = DBL_MAX,
                      .lo_open = 1, .arg = "E",
                      .help = "added to Adam's denominator", .col = 36,
                      .files = CLF_FILES, .nest = 8, .models = M_NET,
                      .apply = apply_adam_eps, .get = get_adam_eps},
    [KEY_WARMUP] = {.section = "model", .name = "warmup", .type = KT_UINTS,
                    .dflt = "0", .max = 100000000, .arg = "W",
                    .help = "learning-rate warm-up: step t (from 0) of the "
                            "first W takes lr (t + 1) / W",
                    .col = 37, .files = CLF_FILES, .nest = 9, .models = M_NET,
                    .apply = apply_warmup, .get = get_warmup},
    [KEY_SCHEDULE] = {.section = "model", .name = "schedule",
                      .type = KT_CHOICES, .dflt = "constant",
                      .choice = optim_schedule_name, .arg = "S",
                      .help = "the learning rate over the epochs: constant, "
                              "step (times step_factor every step_epochs) "
                              "or cosine to 0",
                      .col = 38, .files = CLF_FILES, .nest = 10,
                      .models = M_NET, .apply = apply_schedule,
                      .get = get_schedule},
    [KEY_STEP_EPOCHS] = {.section = "model", .name = "step_epochs",
                         .type = KT_UINTS, .dflt = "10", .min = 1,
                         .max = 1000000, .arg = "N",
                         .help = "the step schedule's epochs between steps",
                         .col = 39, .files = CLF_FILES, .nest = 11,
                         .models = M_NET, .apply = apply_step_epochs,
                         .get = get_step_epochs},
    [KEY_STEP_FACTOR] = {.section = "model", .name = "step_factor",
                         .type = KT_REALS, .dflt = "0.1", .hi = DBL_MAX,
                         .arg = "G",
                         .help = "the step schedule's factor", .col = 40,
                         .files = CLF_FILES, .nest = 12, .models = M_NET,
                         .apply = apply_step_factor,
                         .get = get_step_factor},
    [KEY_GAMMA] = {.section = "layer", .name = "gamma", .type = KT_REALS,
                   .dflt = "1", .lo = -DBL_MAX, .hi = DBL_MAX, .arg = "G",
                   .help = "the affine scale", .col = 14, .files = ALL,
                   .nest = 26, .models = M_LAYER, .apply = apply_gamma,
                   .get = get_gamma},
    [KEY_BETA] = {.section = "layer", .name = "beta", .type = KT_REALS,
                  .dflt = "0", .lo = -DBL_MAX, .hi = DBL_MAX, .arg = "B0",
                  .help = "the affine shift", .col = 15, .files = ALL,
                  .nest = 27, .models = M_LAYER, .apply = apply_beta,
                  .get = get_beta},
    [KEY_EPS] = {.section = "layer", .name = "eps", .type = KT_REALS,
                 .dflt = "1e-05", .hi = DBL_MAX, .lo_open = 1, .arg = "E",
                 .help = "added to the variance", .col = 13, .files = ALL,
                 .nest = 25, .models = M_BN, .apply = apply_eps,
                 .get = get_eps},
    [KEY_MOMENTUM] = {.section = "layer", .name = "momentum", .type = KT_REALS,
                      .dflt = "0.9", .hi = 1, .lo_open = 1, .arg = "M",
                      .help = "the moving average's momentum", .col = 5,
                      .files = ALL, .nest = 32, .models = M_BN,
                      .apply = apply_momentum, .get = get_momentum},
    [KEY_WEIGHTS] = {.section = "layer", .name = "momentum_weights",
                     .type = KT_CHOICES, .dflt = "old",
                     .choice = bn_weights_name, .arg = "W",
                     .help = "the value M weighs (old: Keras, the study; "
                             "new: PyTorch)",
                     .col = 6, .files = ALL, .nest = 31, .models = M_BN,
                     .apply = apply_weights, .get = get_weights},
    [KEY_VARIANCE] = {.section = "layer", .name = "variance",
                      .type = KT_CHOICES, .dflt = "biased",
                      .choice = bn_variance_name, .arg = "V",
                      .help = "the variance the buffer update takes", .col = 8,
                      .files = ALL, .nest = 30, .models = M_BN,
                      .apply = apply_variance, .get = get_variance},
    [KEY_ESTIMATOR] = {.section = "layer", .name = "estimator",
                       .type = KT_CHOICES, .dflt = "ema",
                       .choice = bn_estimator_name_at, .arg = "E",
                       .help = "the running statistics' estimator", .col = 10,
                       .files = ALL, .nest = 28, .models = M_BN,
                       .apply = apply_estimator, .get = get_estimator},
    [KEY_LAYER_INITIAL] = {.section = "layer", .name = "initial",
                           .type = KT_PATH, .arg = "PATH",
                           .help = "the buffers before the first update, from "
                                   "a TSV of feature, running_mean, "
                                   "running_var (features it lacks: 0 and 1; "
                                   "the classifier's units LAYER.UNIT)",
                           .models = M_BN},
    /* Beyond the default setting (RUN_DEV_EXT): a column only where an
     * experiment sets them. The devices vary fastest after the seed and
     * the batch size, so that a figure against them reads each series'
     * rows in a run. */
    [KEY_DEVICES] = {.section = "layer", .name = "devices", .type = KT_UINTS,
                     .dflt = "1", .min = 1, .max = 1024, .arg = "K",
                     .help = "data-parallel devices, each normalising its "
                             "B/K rows of a batch; the buffers device 0's",
                     .col = 41, .files = ALL, .nest = 37,
                     .models = M_BN | RUN_DEV_EXT, .apply = apply_devices,
                     .get = get_devices},
    [KEY_SYNC] = {.section = "layer", .name = "sync", .type = KT_CHOICES,
                  .dflt = "no", .choice = bn_sync_name, .arg = "Y",
                  .help = "synchronised statistics across the devices "
                          "(SyncBatchNorm): the whole batch's",
                  .col = 42, .files = ALL, .nest = 36,
                  .models = M_BN | RUN_DEV_EXT, .apply = apply_sync,
                  .get = get_sync},
    [KEY_BATCH_SIZE] = {.section = "sweep", .name = "batch_size",
                        .type = KT_UINTS, .dflt = "256", .min = 1,
                        .max = 100000000, .arg = "B",
                        .help = "rows per batch, up to the population's "
                                "(whole samples of feature maps)",
                        .col = 4, .files = ALL, .nest = 43, .models = ANY,
                        .apply = apply_batch_size, .get = get_batch_size},
    [KEY_ORDER] = {.section = "sweep", .name = "order", .type = KT_ORDERS,
                   .dflt = "shuffled", .arg = "ORDER",
                   .help = "the order the batches are cut from", .col = 2,
                   .files = ALL, .nest = 29, .models = ANY,
                   .apply = apply_order, .get = get_order},
    [KEY_SEED] = {.section = "sweep", .name = "seed", .type = KT_UINTS,
                  .dflt = "1", .max = UINT64_MAX, .arg = "S",
                  .help = "the shuffle's seed, PCG32 initstate", .col = 3,
                  .files = COL_SUMMARY | COL_FEATURES, .nest = 42,
                  .models = ANY, .apply = apply_seed, .get = get_seed},
    [KEY_EPOCHS] = {.section = "sweep", .name = "epochs", .type = KT_UINTS,
                    .dflt = "1", .min = 1, .max = 1000000, .arg = "E",
                    .help = "passes over the same order", .col = 9,
                    .files = ALL, .nest = 33, .models = ANY,
                    .apply = apply_epochs, .get = get_epochs},
    [KEY_PARTIAL] = {.section = "sweep", .name = "partial", .type = KT_CHOICES,
                     .dflt = "drop", .choice = run_partial_name, .arg = "P",
                     .help = "drop or keep a last partial batch", .col = 11,
                     .files = ALL, .nest = 34, .models = ANY,
                     .apply = apply_partial, .get = get_partial},
    [KEY_PRECISE] = {.section = "sweep", .name = "precise_batches",
                     .type = KT_UINTS, .dflt = "0", .max = 100000000,
                     .arg = "K",
                     .help = "batches the precise estimator pools, 0 all",
                     .col = 12, .files = ALL, .nest = 35, .models = M_BN,
                     .apply = apply_precise, .get = get_precise},
    [KEY_DRIFT] = {.section = "sweep", .name = "drift", .type = KT_DRIFTS,
                   .dflt = "none", .arg = "PROFILE",
                   .help = "the training stream's drift: none, step:T0 "
                           "(after update T0) or ramp:T0:T1 (from T0 to T1)",
                   .col = 28, .files = ALL, .nest = 23, .models = M_LAYER,
                   .apply = apply_drift, .get = get_drift},
    [KEY_DRIFT_SIZE] = {.section = "sweep", .name = "drift_size",
                        .type = KT_REALS, .dflt = "0", .lo = -DBL_MAX,
                        .hi = DBL_MAX, .arg = "D",
                        .help = "the drift's full move of each feature, in "
                                "its standard deviations",
                        .col = 29, .files = ALL, .nest = 24, .models = M_LAYER,
                        .apply = apply_drift_size, .get = get_drift_size},
    /* Batch dependence (issue 24): its key and scores only in the files
     * of an experiment that sets it (RUN_DEP_EXT). */
    [KEY_COMPOSITIONS] = {.section = "sweep", .name = "compositions",
                          .type = KT_UINTS, .dflt = "0", .max = 100000,
                          .arg = "M",
                          .help = "shuffles of the evaluation rows cut into "
                                  "batches for the batch-dependence scores "
                                  "(every B-subset when there are no more); "
                                  "0 none",
                          .col = 43, .files = COL_SUMMARY | COL_SEEDS,
                          .nest = 38, .models = M_BN | RUN_DEP_EXT,
                          .apply = apply_compositions,
                          .get = get_compositions},
    /* Padded sequences (issue 24): in the files only of an experiment
     * that sets one of them (RUN_SEQ_EXT). */
    [KEY_SEQ_LENGTH] = {.section = "sequence", .name = "length",
                        .type = KT_UINTS, .dflt = "0", .max = 100000,
                        .arg = "L",
                        .help = "the layer's rows as sequences padded to L "
                                "positions (L consecutive rows each; the "
                                "batch size counts sequences); 0 plain rows",
                        .col = 44, .files = ALL, .nest = 39,
                        .models = M_LAYER | RUN_SEQ_EXT,
                        .apply = apply_seq_length, .get = get_seq_length},
    [KEY_SEQ_MIN_LENGTH] = {.section = "sequence", .name = "min_length",
                            .type = KT_UINTS, .dflt = "1", .min = 1,
                            .max = 100000, .arg = "L0",
                            .help = "the shortest sequence: each one's "
                                    "length is uniform on L0..L (PCG32 "
                                    "stream 25 from the run's seed), the "
                                    "rest padding (0)",
                            .col = 45, .files = ALL, .nest = 40,
                            .models = M_LAYER | RUN_SEQ_EXT,
                            .apply = apply_seq_min_length,
                            .get = get_seq_min_length},
    [KEY_SEQ_MASK] = {.section = "sequence", .name = "mask",
                      .type = KT_CHOICES, .dflt = "real",
                      .choice = seq_mask_name, .arg = "POLICY",
                      .help = "the positions batch statistics are taken "
                              "over: real ones only, every one padding "
                              "included, or mismatch (training normalises "
                              "over the real ones, the buffers average "
                              "every one)",
                      .col = 46, .files = ALL, .nest = 41,
                      .models = M_LAYER | RUN_SEQ_EXT,
                      .apply = apply_seq_mask, .get = get_seq_mask},
    [KEY_SEQ_FILE] = {.section = "sequence", .name = "file",
                      .type = KT_PATH, .arg = "PATH",
                      .help = "the sequences' real positions from a CSV, "
                              "TSV or .npy file, a row per sequence: one "
                              "column of lengths (1..L), or L columns of a "
                              "0/1 mask (1 real); instead of min_length's",
                      .models = M_LAYER | RUN_SEQ_EXT},
    [KEY_EXPERIMENT] = {.name = "experiment", .type = KT_DERIVED,
                        .help = "the experiment file's stem", .col = 1,
                        .files = ALL, .models = ANY, .get = get_experiment},
    [KEY_POPULATION] = {.name = "population", .type = KT_DERIVED,
                        .help = "the population's identifier (popid.h)",
                        .col = 16, .files = ALL, .models = ANY,
                        .get = get_population},
    [KEY_NEW_WEIGHT] = {.name = "new_weight", .type = KT_DERIVED,
                        .help = "p, the new value's weight, from momentum "
                                "and momentum_weights",
                        .col = 7, .files = COL_SUMMARY | COL_SEEDS,
                        .models = M_BN, .get = get_new_weight},
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
