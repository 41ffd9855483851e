/*
 * The key table, values of keys as an experiment holds them, the checks
 * that need every key, and the decoding of configuration k. Reading the
 * INI file is expfile.c's job; this file knows nothing of libinih.
 */
#include "study/exp.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "model/net.h"
#include "pop/evalpop.h"
#include "model/order.h"
#include "study/outfile.h"
#include "pop/popfile.h"
#include "pop/popid.h"
#include "model/score.h"

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
static const key_def keys[KEY_COUNT] = {
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

static const char *origin(const exp_t *e, int k0, int k1);

/* ---- parsing values ---- */

/* The next token of a list into *tok (malloc'd, the caller frees it).
 * Tokens are separated by spaces and commas; a token in double quotes
 * keeps them, with "" for a quote inside (an order on a column whose name
 * has a space: "sorted:worst area"). Returns 1 for a token, 0 at the end,
 * -1 for an unclosed quote or no memory. */
static int next_token(const char **s, char **tok)
{
    const char *p = *s;
    *tok = NULL;
    while (*p && (isspace((unsigned char)*p) || *p == ','))
        p++;
    if (!*p)
        return 0;
    size_t len = strlen(p);
    char *t = malloc(len + 1), *o = t;
    if (!t)
        return -1;
    if (*p == '"') {
        for (p++;; p++) {
            if (!*p) {
                free(t);
                return -1;
            }
            if (*p == '"' && p[1] != '"')
                break;
            if (*p == '"')
                p++;
            *o++ = *p;
        }
        p++;
        if (*p && !isspace((unsigned char)*p) && *p != ',') {
            free(t);
            return -1; /* text glued to the closing quote */
        }
    } else {
        while (*p && !isspace((unsigned char)*p) && *p != ',')
            *o++ = *p++;
    }
    *o = '\0';
    *tok = t;
    *s = p;
    return 1;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)s[0]))
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno == ERANGE)
        return -1;
    *out = v;
    return 0;
}

static int parse_real(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* A real key's range as words: "in (0, 1]", "> 0", "finite". */
static const char *range_text(const key_def *d, char *buf, size_t cap)
{
    if (d->lo == -DBL_MAX && d->hi == DBL_MAX)
        snprintf(buf, cap, "a finite number");
    else if (d->hi == DBL_MAX)
        snprintf(buf, cap, "a number %s %g", d->lo_open ? ">" : ">=",
                 d->lo);
    else
        snprintf(buf, cap, "a number in %c%g, %g]", d->lo_open ? '(' : '[',
                 d->lo, d->hi);
    return buf;
}

static int in_range(const key_def *d, double x)
{
    return (d->lo_open ? x > d->lo : x >= d->lo) && x <= d->hi;
}

typedef struct {
    const char *origin, *key;
    int name_key;
    bn_error *err;
} where;

static int fail(const where *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int fail(const where *w, const char *fmt, ...)
{
    char msg[BN_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *origin = w->origin ? w->origin : "the default";
    if (w->name_key)
        return bn_fail(w->err, "%s: %s: %s", origin, w->key, msg);
    return bn_fail(w->err, "%s: %s", origin, msg);
}

/* The first byte of a value that would become structure in a TSV field
 * or a manifest line: any control character in text; in a list, any but
 * a tab between items (written back with spaces), so none inside a
 * quoted item either. NULL when there is none. */
static const char *structure_byte(const char *v, int text)
{
    int quoted = 0, start = 1;
    for (const char *c = v; *c; c++) {
        if (!quoted && start && *c == '"') {
            quoted = 1;
            start = 0;
            continue;
        }
        if (quoted && *c == '"') {
            if (c[1] == '"')
                c++;
            else
                quoted = 0;
            continue;
        }
        if (((unsigned char)*c < 0x20 || *c == 0x7f) &&
            (text || quoted || *c != '\t'))
            return c;
        start = !quoted && (isspace((unsigned char)*c) || *c == ',');
    }
    return NULL;
}

/* Grow a list by one value. */
static int push(key_value **v, size_t *n, size_t *cap, key_value x)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 8;
        key_value *nv = realloc(*v, c * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = c;
    }
    (*v)[(*n)++] = x;
    return 0;
}

/* A line of a name and three numbers (a feature, a channel): the tokens
 * into tok[0..4] (the caller frees them), the numbers into x; 1 when the
 * line is not that. */
static int name_and_three(const char *value, char *tok[5], double x[3])
{
    size_t n = 0;
    int r;
    const char *s = value;
    while (n < 5 && (r = next_token(&s, &tok[n])) == 1)
        n++;
    return r < 0 || n != 4 || parse_real(tok[1], &x[0]) ||
           parse_real(tok[2], &x[1]) || parse_real(tok[3], &x[2]);
}

static int add_feature(exp_t *e, const where *w, const char *value)
{
    pop_spec *p = &e->pop;
    char *tok[5] = {NULL};
    double x[3] = {0.0, 0.0, 0.0};
    int bad = name_and_three(value, tok, x);
    double mean = x[0], sd = x[1], rho = x[2];
    bn_error sub;
    where bare = *w; /* the message names the feature */
    bare.name_key = 0;
    if (!bad && pop_feature_index(p, tok[0]) >= 0)
        bad = 2;
    else if (!bad && pop_check_feature(&(pop_feature){tok[0], mean, sd, rho},
                                       &sub) != 0)
        bad = 3;
    else if (!bad && pop_spec_add(p, tok[0], mean, sd, rho) != 0)
        bad = 4;
    int rc = 0;
    if (bad == 1)
        rc = fail(w, "expected 'NAME MEAN SD RHO', got '%s'", value);
    else if (bad == 2)
        rc = fail(w, "name '%s' given twice", tok[0]);
    else if (bad == 3)
        rc = fail(&bare, "%s", sub.msg);
    else if (bad == 4)
        rc = fail(w, "out of memory");
    for (size_t i = 0; i < 5; i++)
        free(tok[i]);
    return rc;
}

/* A generated feature-map channel, NAME MEAN SD R (convpop.h). */
static int add_channel(exp_t *e, const where *w, const char *value)
{
    exp_maps *m = &e->maps;
    char *tok[5] = {NULL};
    double x[3] = {0.0, 0.0, 0.0};
    int bad = name_and_three(value, tok, x);
    convpop_channel ch = {.mean = x[0], .sd = x[1], .r = x[2]};
    for (size_t i = 0; !bad && i < m->n_ch; i++)
        if (strcmp(m->ch_names[i], tok[0]) == 0)
            bad = 2;
    if (!bad && (!(ch.sd >= 0.0) || !(ch.r >= -1.0 && ch.r <= 1.0) ||
                 fabs(ch.mean) + 64.0 * ch.sd > POP_MAX_SCALE))
        bad = 3;
    if (!bad && m->n_ch == m->cap_ch) {
        size_t cap = m->cap_ch ? 2 * m->cap_ch : 4;
        convpop_channel *nc = realloc(m->ch, cap * sizeof *nc);
        if (nc)
            m->ch = nc;
        char **nn = nc ? realloc(m->ch_names, cap * sizeof *nn) : NULL;
        if (nn) {
            m->ch_names = nn;
            m->cap_ch = cap;
        } else {
            bad = 4;
        }
    }
    int rc = 0;
    if (bad == 1)
        rc = fail(w, "expected 'NAME MEAN SD R', got '%s'", value);
    else if (bad == 2)
        rc = fail(w, "name '%s' given twice", tok[0]);
    else if (bad == 3)
        rc = fail(w, "channel '%s': sd must be >= 0, R in [-1, 1] and "
                     "|mean| + 64 sd at most %g",
                  tok[0], POP_MAX_SCALE);
    else if (bad == 4)
        rc = fail(w, "out of memory");
    if (!bad) {
        m->ch[m->n_ch] = ch;
        m->ch_names[m->n_ch++] = tok[0];
        tok[0] = NULL;
    }
    for (size_t i = 0; i < 5; i++)
        free(tok[i]);
    return rc;
}

/* Two integers H W, each in the key's range. */
static int set_shape(exp_t *e, key_id k, const where *w, const char *value)
{
    const key_def *d = &keys[k];
    char *tok[3] = {NULL};
    size_t n = 0;
    int r;
    uint64_t v[2] = {0, 0};
    const char *s = value;
    while (n < 3 && (r = next_token(&s, &tok[n])) == 1)
        n++;
    int bad = r < 0 || n != 2 || parse_u64(tok[0], &v[0]) ||
              parse_u64(tok[1], &v[1]) || v[0] < d->min || v[0] > d->max ||
              v[1] < d->min || v[1] > d->max;
    for (size_t i = 0; i < 3; i++)
        free(tok[i]);
    if (bad)
        return fail(w, "expected two integers H W from %llu to %llu, got "
                       "'%s'",
                    (unsigned long long)d->min, (unsigned long long)d->max,
                    value);
    size_t *hw = k == KEY_MAPS_IMAGE ? &e->maps.image_h : &e->maps.size_h;
    hw[0] = (size_t)v[0];
    hw[1] = (size_t)v[1];
    return 0;
}

/* Names of a KT_COLUMNS or KT_OUTPUTS key. */
static int set_names(exp_t *e, key_id k, const where *w, const char *value)
{
    char *tok, names[EXP_MAX_COLUMNS][64];
    size_t n = 0;
    unsigned mask = 0;
    int r;
    const char *s = value;
#define BAD(...)                                                            \
    do {                                                                    \
        int rc_ = fail(w, __VA_ARGS__);                                     \
        free(tok);                                                          \
        return rc_;                                                         \
    } while (0)
    while ((r = next_token(&s, &tok)) == 1) {
        if (n == EXP_MAX_COLUMNS)
            BAD("more than %d names", EXP_MAX_COLUMNS);
        /* Every known name is short: a long one is unknown. */
        if (k == KEY_TABLE && (strlen(tok) >= sizeof names[0] ||
                               exp_column_find(tok, NULL) != 0))
            BAD("unknown value '%s' (a column of summary.tsv)", tok);
        if (k == KEY_OUTPUTS) {
            int f = out_file_find(tok);
            if (f < 0 || strlen(tok) >= sizeof names[0]) {
                char list[256];
                BAD("unknown value '%s' (%s)", tok,
                    out_file_list(", ", list, sizeof list));
            }
            mask |= 1u << f;
        }
        strcpy(names[n++], tok);
        free(tok);
    }
#undef BAD
    if (r < 0 || n == 0)
        return fail(w, "expected a list of names, got '%s'", value);
    if (k == KEY_OUTPUTS) {
        e->outputs = mask;
    } else {
        memcpy(e->table, names, sizeof names);
        e->n_table = n;
    }
    return 0;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

/* An axis: a list of values of the key's type. */
static int set_list(exp_t *e, key_id k, const where *w, const char *value)
{
    const key_def *d = &keys[k];
    key_value *v = NULL;
    size_t n = 0, cap = 0;
    order_spec *orders = NULL;
    drift_spec *drifts = NULL;
    char **names = NULL;
    size_t n_names = 0;
    char *tok = NULL, range[64];
    int r;
    const char *s = value;
#define BAD(...)                                                            \
    do {                                                                    \
        int rc_ = fail(w, __VA_ARGS__);                                     \
        free(v);                                                            \
        free(orders);                                                       \
        free(drifts);                                                       \
        free_names(names, n_names);                                         \
        free(tok);                                                          \
        return rc_;                                                         \
    } while (0)
#define PUSH(x)                                                             \
    do {                                                                    \
        if (n == EXP_MAX_VALUES)                                            \
            BAD("more than %d values", EXP_MAX_VALUES);                     \
        if (push(&v, &n, &cap, (x)) != 0)                                   \
            BAD("out of memory");                                           \
    } while (0)
    while ((r = next_token(&s, &tok)) == 1) {
        key_value x = {0};
        switch (d->type) {
        case KT_REALS:
            if (parse_real(tok, &x.r) || !in_range(d, x.r))
                BAD("'%s' is not %s", tok, range_text(d, range, sizeof range));
            PUSH(x);
            break;
        case KT_UINTS: {
            uint64_t a, b;
            char *dots = strstr(tok, "..");
            if (dots) {
                *dots = '\0';
                if (parse_u64(tok, &a) || parse_u64(dots + 2, &b) || b < a)
                    BAD("'%s' is not a range A..B", value);
            } else if (parse_u64(tok, &a) == 0) {
                b = a;
            } else {
                BAD("'%s' is not an integer", tok);
            }
            if (a < d->min || b > d->max)
                BAD("values must be from %llu to %llu",
                    (unsigned long long)d->min, (unsigned long long)d->max);
            for (uint64_t u = a;; u++) {
                x.u = u;
                PUSH(x);
                if (u == b)
                    break;
            }
            break;
        }
        case KT_CHOICES: {
            int i = 0;
            while (d->choice(i) && strcmp(d->choice(i), tok) != 0)
                i++;
            if (!d->choice(i)) {
                char list[256];
                BAD("unknown value '%s' (%s)", tok,
                    bn_join(list, sizeof list, ", ", " or ", d->choice));
            }
            x.i = i;
            PUSH(x);
            break;
        }
        case KT_ORDERS: {
            /* Parsed against the population in exp_finish, which may come
             * later in the file; the name is kept whole here. */
            order_spec *no = realloc(orders, (n + 1) * sizeof *no);
            if (no)
                orders = no;
            char **nn = no ? realloc(names, (n + 1) * sizeof *nn) : NULL;
            if (!nn)
                BAD("out of memory");
            names = nn;
            memset(&orders[n], 0, sizeof *orders);
            names[n_names++] = tok;
            tok = NULL;
            x.i = (int)n;
            PUSH(x);
            break;
        }
        case KT_DRIFTS: {
            /* Parsed now (a profile needs nothing else); its name kept as
             * written, for the files. */
            bn_error sub;
            drift_spec dspec;
            if (drift_parse(tok, &dspec, &sub) != 0)
                BAD("%s", sub.msg);
            drift_spec *nd = realloc(drifts, (n + 1) * sizeof *nd);
            if (nd)
                drifts = nd;
            char **nn = nd ? realloc(names, (n + 1) * sizeof *nn) : NULL;
            if (!nn)
                BAD("out of memory");
            names = nn;
            drifts[n] = dspec;
            names[n_names++] = tok;
            tok = NULL;
            x.i = (int)n;
            PUSH(x);
            break;
        }
        default:
            BAD("not a list");
        }
        free(tok);
        tok = NULL;
    }
    if (r < 0 || n == 0)
        BAD("expected a list of values, got '%s'", value);
#undef PUSH
#undef BAD
    free(e->v[k]);
    e->v[k] = v;
    e->n[k] = n;
    if (d->type == KT_ORDERS) {
        free(e->orders);
        free_names(e->order_names, e->n_orders);
        e->orders = orders;
        e->order_names = names;
        e->n_orders = n;
    } else if (d->type == KT_DRIFTS) {
        free(e->drifts);
        free_names(e->drift_names, e->n_drifts);
        e->drifts = drifts;
        e->drift_names = names;
        e->n_drifts = n;
    }
    return 0;
}

/* A copy of s, or of dir/s when s is a relative path and dir is set. */
static char *join_path(const char *dir, size_t dir_len, const char *s)
{
    size_t n = strlen(s);
    int rel = dir_len > 0 && s[0] != '/';
    char *p = malloc((rel ? dir_len + 1 : 0) + n + 1);
    if (!p)
        return NULL;
    if (rel) {
        memcpy(p, dir, dir_len);
        p[dir_len] = '/';
    }
    memcpy(p + (rel ? dir_len + 1 : 0), s, n + 1);
    return p;
}

static char *copy_text(const char *s) { return join_path(NULL, 0, s); }

/* Where a key was set, kept for the whole-file checks' messages. */
static int set_from(exp_t *e, key_id k, const char *origin)
{
    char *from = copy_text(origin);
    if (!from)
        return -1;
    free(e->from[k]);
    e->from[k] = from;
    return 0;
}

/* The population file's path, relative to the experiment file's
 * directory when there is one. */
static exp_popfile *file_of(exp_t *e, key_id k)
{
    return k == KEY_EVAL_FILE ? &e->evalfile : &e->popfile;
}

static int set_path(exp_t *e, key_id k, const where *w, const char *value)
{
    if (value[0] == '\0')
        return fail(w, "an empty path names no file");
    for (const char *c = value; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return fail(w, "a control character in the path: the manifest "
                           "could not record it");
    const char *slash = e->source_is_file ? strrchr(e->source, '/') : NULL;
    char *file = copy_text(value);
    char *path = join_path(e->source, slash ? (size_t)(slash - e->source) : 0,
                           value);
    if (!file || !path) {
        free(file);
        free(path);
        return fail(w, "out of memory");
    }
    exp_popfile *pf = file_of(e, k);
    free(pf->file);
    free(pf->path);
    pf->file = file;
    pf->path = path;
    return 0;
}

/* Where the one-value keys keep their values. */
static void set_uint(exp_t *e, key_id k, uint64_t u)
{
    if (k == KEY_ROWS)
        e->pop.n_rows = (size_t)u;
    else if (k == KEY_POP_SEED)
        e->pop.seed = u;
    else if (k == KEY_POP_CLASSES)
        e->pop.classes = (size_t)u;
    else if (k == KEY_MAPS_FILTERS)
        e->maps.filters = (size_t)u;
    else if (k == KEY_MAPS_KERNEL)
        e->maps.kernel = (size_t)u;
    else if (k == KEY_MAPS_SAMPLES)
        e->maps.samples = (size_t)u;
    else if (k == KEY_MAPS_SEED)
        e->maps.seed = u;
    else
        e->holdout_seed = u;
}

static uint64_t uint_of(const exp_t *e, key_id k)
{
    return k == KEY_ROWS           ? e->pop.n_rows
           : k == KEY_POP_SEED     ? e->pop.seed
           : k == KEY_POP_CLASSES  ? e->pop.classes
           : k == KEY_MAPS_FILTERS ? e->maps.filters
           : k == KEY_MAPS_KERNEL  ? e->maps.kernel
           : k == KEY_MAPS_SAMPLES ? e->maps.samples
           : k == KEY_MAPS_SEED    ? e->maps.seed
                                   : e->holdout_seed;
}

static double *real_slot(exp_t *e, key_id k)
{
    return k == KEY_POP_LABEL_NOISE ? &e->pop.label_noise : &e->holdout;
}

static double real_of(const exp_t *e, key_id k)
{
    return k == KEY_POP_LABEL_NOISE ? e->pop.label_noise : e->holdout;
}

static int set_column(exp_t *e, key_id k, const where *w, const char *value)
{
    if (value[0] == '\0')
        return fail(w, "an empty name names no column");
    char *c = copy_text(value);
    if (!c)
        return fail(w, "out of memory");
    char **slot = k == KEY_POP_LABEL ? &e->popfile.label : &e->popfile.group;
    free(*slot);
    *slot = c;
    return 0;
}

int exp_set(exp_t *e, key_id k, const char *value, const char *origin,
            int name_key, bn_error *err)
{
    const key_def *d = &keys[k];
    where w = {origin, d->name, name_key, err};
    uint64_t u;
    int rc;
    /* Values end up in TSV fields and manifest lines, where a tab or a
     * newline would be structure. */
    const char *bad = structure_byte(value, d->type == KT_TEXT);
    if (bad) {
        char name[16];
        return fail(&w, "%s in the value", bn_control_name(*bad, name));
    }
    switch (d->type) {
    case KT_TEXT: {
        char *text = copy_text(value);
        if (!text)
            return fail(&w, "out of memory");
        free(e->description);
        e->description = text;
        rc = 0;
        break;
    }
    case KT_COLUMNS:
    case KT_OUTPUTS:
        rc = set_names(e, k, &w, value);
        break;
    case KT_UINT:
        if (parse_u64(value, &u) || u < d->min || u > d->max)
            return fail(&w, "expected an integer from %llu to %llu, got '%s'",
                        (unsigned long long)d->min,
                        (unsigned long long)d->max, value);
        set_uint(e, k, u);
        rc = 0;
        break;
    case KT_REAL: {
        double r;
        char range[64];
        if (parse_real(value, &r) || !in_range(d, r))
            return fail(&w, "'%s' is not %s", value,
                        range_text(d, range, sizeof range));
        *real_slot(e, k) = r;
        rc = 0;
        break;
    }
    case KT_FEATURE:
        rc = add_feature(e, &w, value);
        break;
    case KT_CHANNEL:
        rc = add_channel(e, &w, value);
        break;
    case KT_SHAPE:
        rc = set_shape(e, k, &w, value);
        break;
    case KT_PATH:
        rc = set_path(e, k, &w, value);
        break;
    case KT_COLUMN:
        rc = set_column(e, k, &w, value);
        break;
    case KT_DERIVED:
        return fail(&w, "not a key of an experiment file");
    default:
        rc = set_list(e, k, &w, value);
        break;
    }
    if (rc == 0 && origin && set_from(e, k, origin) != 0)
        return fail(&w, "out of memory");
    return rc;
}

int exp_set_override(exp_t *e, const char *set, int *set_features,
                     bn_error *err)
{
    size_t len = strlen(set);
    if (len > BN_LINE_MAX)
        return bn_fail(err, "--set of %zu characters, more than the limit "
                            "of %d (a line of an experiment file)",
                       len, BN_LINE_MAX);
    const char *bad = bn_control_char(set);
    if (bad) {
        char name[16];
        return bn_fail(err, "--set %s: %s (the manifest records every "
                            "--set on one line)",
                       set, bn_control_name(*bad, name));
    }
    const char *eq = strchr(set, '='), *dot = strchr(set, '.');
    if (!eq || !dot || dot > eq)
        return bn_fail(err, "--set %s: expected section.key=value", set);
    char section[BN_LINE_MAX + 1], name[BN_LINE_MAX + 1];
    snprintf(section, sizeof section, "%.*s", (int)(dot - set), set);
    snprintf(name, sizeof name, "%.*s", (int)(eq - dot - 1), dot + 1);
    char where[BN_LINE_MAX + 8];
    snprintf(where, sizeof where, "--set %s", set);
    int k = exp_key_find(section, name);
    if (k < 0)
        return bn_fail(err, "%s: unknown key '%s' in [%s]", where, name,
                       section);
    /* The first --set feature (channel) replaces the file's list, later
     * ones add to it. */
    if (k == KEY_FEATURE && !(*set_features & 1)) {
        *set_features |= 1;
        pop_spec_clear(&e->pop);
    }
    if (k == KEY_MAPS_CHANNEL && !(*set_features & 2)) {
        *set_features |= 2;
        free_names(e->maps.ch_names, e->maps.n_ch);
        e->maps.ch_names = NULL;
        e->maps.n_ch = e->maps.cap_ch = 0;
    }
    return exp_set(e, (key_id)k, eq + 1, where, 1, err);
}

int exp_set_overrides(exp_t *e, char *const *sets, size_t n, bn_error *err)
{
    /* A key set twice is refused, as a key given twice in a file is;
     * feature lines add up. */
    int set_features = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < i; j++) {
            const char *a = sets[i], *b = sets[j];
            size_t ka = strcspn(a, "="), kb = strcspn(b, "=");
            if (ka == kb && strncmp(a, b, ka) == 0 &&
                strncmp(a, "population.feature=", 19) != 0 &&
                strncmp(a, "maps.channel=", 13) != 0)
                return bn_fail(err, "--set %.*s given twice", (int)ka, a);
        }
        if (exp_set_override(e, sets[i], &set_features, err) != 0)
            return -1;
    }
    return 0;
}

int exp_set_population(exp_t *e, const char *path, const char *label,
                       const char *group, bn_error *err)
{
    int from_file = e->source_is_file;
    e->source_is_file = 0; /* the command line's path: the current dir */
    int rc = exp_set(e, KEY_POP_FILE, path, "--population", 0, err);
    e->source_is_file = from_file;
    const char *opt[2] = {"--label", "--group"}, *val[2] = {label, group};
    key_id key[2] = {KEY_POP_LABEL, KEY_POP_GROUP};
    for (int i = 0; rc == 0 && i < 2; i++) {
        char **slot = i ? &e->popfile.group : &e->popfile.label;
        free(*slot);
        *slot = NULL;
        free(e->from[key[i]]);
        e->from[key[i]] = NULL;
        if (val[i])
            rc = exp_set(e, key[i], val[i], opt[i], 0, err);
    }
    return rc;
}

int exp_init(exp_t *e, bn_error *err)
{
    memset(e, 0, sizeof *e);
    strcpy(e->stem, "run");
    if (!(e->source = copy_text("run")) || pop_default_spec(&e->pop) != 0)
        return bn_fail(err, "out of memory");
    /* Defaults are set by no one: they have no origin. */
    for (int k = 0; k < KEY_COUNT; k++)
        if (keys[k].dflt &&
            exp_set(e, (key_id)k, keys[k].dflt, NULL, 1, err) != 0)
            return -1;
    return 0;
}

void exp_free(exp_t *e)
{
    for (int k = 0; k < KEY_COUNT; k++) {
        free(e->v[k]);
        free(e->from[k]);
        e->v[k] = NULL;
        e->from[k] = NULL;
        e->n[k] = 0;
    }
    free(e->source);
    free(e->text);
    free(e->description);
    e->source = e->text = e->description = NULL;
    free(e->orders);
    free_names(e->order_names, e->n_orders);
    e->orders = NULL;
    e->order_names = NULL;
    e->n_orders = 0;
    free(e->drifts);
    free_names(e->drift_names, e->n_drifts);
    e->drifts = NULL;
    e->drift_names = NULL;
    e->n_drifts = 0;
    free(e->maps.ch);
    free_names(e->maps.ch_names, e->maps.n_ch);
    memset(&e->maps, 0, sizeof e->maps);
    pop_spec_free(&e->pop);
    exp_popfile *files[2] = {&e->popfile, &e->evalfile};
    for (int i = 0; i < 2; i++) {
        exp_popfile *pf = files[i];
        free(pf->file);
        free(pf->path);
        free(pf->label);
        free(pf->group);
        if (pf->pop) {
            pop_free(pf->pop);
            free(pf->pop);
        }
        memset(pf, 0, sizeof *pf);
    }
}

static int file_excludes(const exp_t *e, bn_error *err);

/* A file's bytes into f->pop, parsed with the label and group columns
 * given; key names the line to blame. */
static int read_bytes(exp_t *e, exp_popfile *f, key_id key,
                      const char *label, const char *group,
                      const unsigned char *bytes, size_t len,
                      const char *sha256, bn_error *err)
{
    if (f->pop) {
        pop_free(f->pop);
        free(f->pop);
        f->pop = NULL;
    }
    popfile_options opt = {POPFILE_AUTO, label, group};
    popfile pf;
    bn_error sub;
    if (popfile_parse(f->path, bytes, len, &opt, &pf, &sub) != 0)
        return bn_fail(err, "%s: %s", origin(e, key, -1), sub.msg);
    f->pop = malloc(sizeof *f->pop);
    if (!f->pop || pop_from_file(&pf, f->pop, &sub) != 0) {
        popfile_free(&pf);
        free(f->pop);
        f->pop = NULL;
        return bn_fail(err, "%s: out of memory", f->path);
    }
    /* The format as the parser told it: .npy by its magic bytes. */
    snprintf(f->format, sizeof f->format, "%s",
             popfile_format_name(popfile_detect(f->path, bytes, len)));
    snprintf(f->sha256, sizeof f->sha256, "%s", sha256);
    f->fnv = pop_fnv1a64(bytes, len);
    return 0;
}

int exp_population_bytes(exp_t *e, const unsigned char *bytes, size_t len,
                         const char *sha256, bn_error *err)
{
    exp_popfile *f = &e->popfile;
    if (file_excludes(e, err) != 0)
        return -1; /* the keys' conflict before the file's faults */
    if (read_bytes(e, f, KEY_POP_FILE, f->label, f->group, bytes, len,
                   sha256, err) != 0)
        return -1;
    pop_file_desc d = {f->fnv, f->format, f->label, f->group};
    pop_id_file(&d, e->pop_id);
    return 0;
}

int exp_evaluation_bytes(exp_t *e, const unsigned char *bytes, size_t len,
                         const char *sha256, bn_error *err)
{
    /* The evaluation rows have the population's label column: a file's,
     * or the generated classes' "label". */
    const char *label = e->popfile.file ? e->popfile.label
                        : e->pop.classes ? "label"
                                         : NULL;
    return read_bytes(e, &e->evalfile, KEY_EVAL_FILE, label,
                      e->popfile.file ? e->popfile.group : NULL, bytes, len,
                      sha256, err);
}

/* ---- the product ---- */

/* The axes, slowest first. */
static size_t axes(key_id *out)
{
    size_t n = 0;
    for (int rank = 1; rank <= KEY_COUNT; rank++)
        for (int k = 0; k < KEY_COUNT; k++)
            if (keys[k].nest == rank)
                out[n++] = (key_id)k;
    return n;
}

size_t exp_count(const exp_t *e)
{
    key_id ax[KEY_COUNT];
    size_t na = axes(ax), total = 1;
    for (size_t i = 0; i < na; i++)
        total *= e->n[ax[i]];
    return total;
}

int exp_maps_active(const exp_t *e)
{
    return e->maps.image_h > 0 || e->maps.size_h > 0;
}

/* The maps' samples, height, width and channels (a file's samples once it
 * is read); 0 where a kernel does not fit. */
static void maps_shape(const exp_t *e, size_t *m, size_t *h, size_t *w,
                       size_t *c)
{
    const exp_maps *mp = &e->maps;
    if (mp->image_h) {
        *m = e->popfile.pop ? e->popfile.pop->n : 0;
        *h = mp->kernel <= mp->image_h ? mp->image_h - mp->kernel + 1 : 0;
        *w = mp->kernel <= mp->image_w ? mp->image_w - mp->kernel + 1 : 0;
        *c = mp->filters;
    } else {
        *m = mp->samples;
        *h = mp->size_h;
        *w = mp->size_w;
        *c = mp->n_ch;
    }
}

size_t exp_rows(const exp_t *e)
{
    if (exp_maps_active(e)) {
        size_t m, h, w, c;
        maps_shape(e, &m, &h, &w, &c);
        return m * h * w;
    }
    return e->popfile.pop ? e->popfile.pop->n : e->pop.n_rows;
}

size_t exp_features(const exp_t *e)
{
    if (exp_maps_active(e)) {
        size_t m, h, w, c;
        maps_shape(e, &m, &h, &w, &c);
        return c;
    }
    return e->popfile.pop ? e->popfile.pop->f : e->pop.n_features;
}

size_t exp_classes(const exp_t *e)
{
    if (exp_maps_active(e))
        return 0;
    if (e->popfile.pop)
        return e->popfile.pop->label.column ? e->popfile.pop->label.n_levels
                                            : 0;
    return e->pop.classes;
}

double exp_work(const exp_t *e)
{
    /* The work varies with the model, its hidden units and the epochs;
     * every other axis multiplies it. */
    size_t rows = exp_rows(e), f = exp_features(e), k = exp_classes(e);
    size_t nt = e->n[KEY_MODEL], nh = e->n[KEY_HIDDEN], ne = e->n[KEY_EPOCHS];
    run_config cfg;
    exp_config(e, 0, &cfg);
    double w = 0.0;
    for (size_t it = 0; it < nt; it++)
        for (size_t ih = 0; ih < nh; ih++)
            for (size_t ie = 0; ie < ne; ie++) {
                cfg.model = (run_model_id)e->v[KEY_MODEL][it].i;
                cfg.clf.hidden = (size_t)e->v[KEY_HIDDEN][ih].u;
                cfg.epochs = (unsigned long)e->v[KEY_EPOCHS][ie].u;
                w += run_work(&cfg, rows, f, k);
            }
    return w * (double)(exp_count(e) / (nt * nh * ne));
}

size_t exp_index(const exp_t *e, size_t r, size_t is, size_t ib)
{
    return ib + e->n[KEY_BATCH_SIZE] * (is + e->n[KEY_SEED] * r);
}

/* Apply the axes' values at index pos[] to cfg. */
static void config_at(const exp_t *e, const key_id *ax, size_t na,
                      const size_t *pos, run_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    snprintf(cfg->experiment, sizeof cfg->experiment, "%s", e->stem);
    cfg->model = RUN_MODEL_LAYER;
    for (size_t i = 0; i < na; i++)
        keys[ax[i]].apply(cfg, e, e->v[ax[i]][pos[i]]);
    /* A held-out model's rows are the population and its held-out rows. */
    memcpy(cfg->population,
           run_model_get(cfg->model)->held_out ? e->held_id : e->eval_id,
           sizeof cfg->population);
    /* p and keep follow from momentum and its convention together; a
     * momentum out of range is left for run_check to name. */
    bn_set_momentum(&cfg->layer, cfg->layer.momentum, cfg->layer.weights,
                    NULL);
}

void exp_config(const exp_t *e, size_t k, run_config *cfg)
{
    key_id ax[KEY_COUNT];
    size_t na = axes(ax), pos[KEY_COUNT];
    for (size_t i = na; i-- > 0;) {
        pos[i] = k % e->n[ax[i]];
        k /= e->n[ax[i]];
    }
    config_at(e, ax, na, pos, cfg);
}

/* ---- the checks that need every key ---- */

static const char *origin(const exp_t *e, int k0, int k1)
{
    if (k0 >= 0 && e->from[k0])
        return e->from[k0];
    if (k1 >= 0 && e->from[k1])
        return e->from[k1];
    return e->source;
}

/* The blamed keys' values in cfg, "momentum 1, estimator ema-debiased: ",
 * for keys that have more than one value (which one failed is news). */
static void blamed_values(const exp_t *e, const run_config *cfg,
                          const int *blame, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < 2; i++) {
        int k = blame[i];
        if (k < 0 || !keys[k].get || e->n[k] < 2 || len >= cap)
            continue;
        key_cell c;
        memset(&c, 0, sizeof c);
        keys[k].get(cfg, &c);
        if (c.kind == CELL_TEXT)
            len += (size_t)snprintf(buf + len, cap - len, "%s %s, ",
                                    keys[k].name, c.text);
        else if (c.kind == CELL_INT)
            len += (size_t)snprintf(buf + len, cap - len, "%s %llu, ",
                                    keys[k].name, c.u);
        else
            len += (size_t)snprintf(buf + len, cap - len, "%s %g, ",
                                    keys[k].name, c.r);
    }
    if (len >= 2 && len < cap)
        buf[len - 2] = ':', buf[len - 1] = ' ';
}

/* The shapes the checks see: every row, and the rows a held-out model
 * trains on (a file's training part has fewer). Only n, f, names and the
 * label and group columns are read. */
typedef struct {
    pop_t all, train;
} shapes;

static int finish_checks(exp_t *e, const shapes *sh, bn_error *err);

static int was_set(const exp_t *e, int k) { return e->from[k] != NULL; }

/* finish_checks keeps a bit per key. */
typedef char keys_fit_in_a_mask[KEY_COUNT <= 64 ? 1 : -1];

int exp_held_out_models(unsigned models)
{
    for (int m = 0; m < RUN_MODEL_COUNT; m++)
        if ((models & RUN_MODEL_BIT(m)) && run_model_get(m)->held_out)
            return 1;
    return 0;
}

/* "the layer", "the layer and the classifier" */
static const char *model_names(unsigned models, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int m = 0; m < RUN_MODEL_COUNT && len < cap; m++)
        if (models & RUN_MODEL_BIT(m))
            len += (size_t)snprintf(buf + len, cap - len, "%sthe %s",
                                    len ? " and " : "", run_model_name(m));
    return buf;
}

int exp_blame(const exp_t *e, const run_config *cfg, const int *blame,
              const char *msg, bn_error *err)
{
    char values[200];
    blamed_values(e, cfg, blame, values, sizeof values);
    return bn_fail(err, "%s: %s%s", origin(e, blame[0], blame[1]), values,
                   msg);
}

/* A population read from a file has no rows, seed, feature or classes
 * lines: the first of them set is named beside the file's line. */
static int file_excludes(const exp_t *e, bn_error *err)
{
    static const key_id generated[] = {KEY_ROWS, KEY_POP_SEED, KEY_FEATURE,
                                       KEY_POP_CLASSES, KEY_POP_LABEL_NOISE};
    size_t n_generated = sizeof generated / sizeof *generated;
    for (size_t i = 0; e->popfile.file && i < n_generated; i++) {
        key_id k = generated[i];
        if (was_set(e, k))
            return bn_fail(err,
                           "%s: %s does not apply to a population read from "
                           "a file (%s: file = %s)",
                           e->from[k], keys[k].name,
                           origin(e, KEY_POP_FILE, -1), e->popfile.file);
    }
    for (key_id k = KEY_POP_LABEL; k <= KEY_POP_GROUP; k++)
        if (!e->popfile.file && was_set(e, k))
            return bn_fail(err,
                           "%s: %s names a column of a population file, "
                           "and no file is given",
                           e->from[k], keys[k].name);
    return 0;
}

/* The population's keys that apply only with others: label noise to
 * classes, the held-out split to a file, and both the split and the
 * evaluation file to a model evaluated on held-out rows. */
static int population_excludes(const exp_t *e, bn_error *err)
{
    char trained[80];
    if (!e->popfile.file && !e->pop.classes && was_set(e, KEY_POP_LABEL_NOISE))
        return bn_fail(err, "%s: label_noise applies to classes, and there "
                            "are none ([population] classes = K)",
                       e->from[KEY_POP_LABEL_NOISE]);
    for (key_id k = KEY_HOLDOUT; k <= KEY_HOLDOUT_SEED; k++) {
        if (!was_set(e, k))
            continue;
        if (!e->popfile.file)
            return bn_fail(err,
                           "%s: %s splits a population file; a generated "
                           "population's held-out rows are a second draw",
                           e->from[k], keys[k].name);
        if (e->evalfile.file)
            return bn_fail(err,
                           "%s: %s splits the population, and %s names the "
                           "rows to evaluate on instead",
                           e->from[k], keys[k].name,
                           e->from[KEY_EVAL_FILE]);
    }
    static const key_id held[] = {KEY_HOLDOUT, KEY_HOLDOUT_SEED,
                                  KEY_EVAL_FILE};
    for (size_t i = 0; i < sizeof held / sizeof *held; i++)
        if (was_set(e, held[i]) && !(keys[held[i]].models & e->models))
            return bn_fail(err,
                           "%s: %s applies to %s, and this experiment trains "
                           "only %s",
                           e->from[held[i]], keys[held[i]].name,
                           model_names(keys[held[i]].models, trained, 40),
                           model_names(e->models, trained + 40, 40));
    return 0;
}

/* The label column of the generated classes, for the shapes. */
static int generated_labels(size_t k, pop_factor *fac)
{
    memset(fac, 0, sizeof *fac);
    return k ? pop_class_levels(k, fac) : 0;
}

/* [evaluation] file made comparable to the population, and the
 * identifier of the layer's rows, which it is evaluated on. */
static int eval_file_shape(exp_t *e, shapes *sh, bn_error *err)
{
    bn_error sub;
    if (!e->evalfile.pop)
        return bn_fail(err, "%s: the evaluation file %s was not read",
                       origin(e, KEY_EVAL_FILE, -1), e->evalfile.file);
    if (evalpop_match(&sh->all, e->evalfile.pop, e->evalfile.file, &sub) !=
        0)
        return bn_fail(err, "%s: %s", origin(e, KEY_EVAL_FILE, -1),
                       sub.msg);
    pop_file_desc fd = {e->popfile.fnv, e->popfile.format, e->popfile.label,
                        e->popfile.group};
    pop_held_desc h = {POP_HELD_FILE, 0.0, 0, e->evalfile.fnv,
                       e->evalfile.format};
    pop_id_held(e->popfile.file ? NULL : &e->pop,
                e->popfile.file ? &fd : NULL, &h, e->eval_id);
    return 0;
}

/* The held-out rows: how many a file's split holds out (without making
 * it), and their identifier. */
static int held_out_shape(exp_t *e, shapes *sh, bn_error *err)
{
    pop_file_desc fd = {e->popfile.fnv, e->popfile.format, e->popfile.label,
                        e->popfile.group};
    const pop_spec *spec = e->popfile.file ? NULL : &e->pop;
    pop_held_desc h = {POP_HELD_DRAW, 0.0, 0, 0, NULL};
    size_t n_held = sh->all.n;
    if (e->evalfile.file) {
        n_held = e->evalfile.pop->n;
        h = (pop_held_desc){POP_HELD_FILE, 0.0, 0, e->evalfile.fnv,
                            e->evalfile.format};
    } else if (e->popfile.file) {
        const pop_t *p = e->popfile.pop;
        size_t k = p->label.column ? p->label.n_levels : 1;
        size_t *count = calloc(k, sizeof *count);
        if (!count)
            return bn_fail(err, "out of memory");
        for (size_t i = 0; i < p->n; i++)
            count[p->label.column ? p->label.of_row[i] : 0]++;
        n_held = 0;
        for (size_t c = 0; c < k; c++)
            n_held += evalpop_held_count(count[c], e->holdout);
        free(count);
        if (n_held < 2 || p->n - n_held < 2)
            return bn_fail(err,
                           "%s: holdout %g of %zu rows holds out %zu, "
                           "leaving %zu to train on: each part needs at "
                           "least two",
                           origin(e, KEY_HOLDOUT, KEY_POP_FILE), e->holdout,
                           p->n, n_held, p->n - n_held);
        sh->train.n = p->n - n_held;
        h = (pop_held_desc){POP_HELD_SPLIT, e->holdout, e->holdout_seed, 0,
                            NULL};
    }
    if (n_held < 2)
        return bn_fail(err, "%s: %zu rows to evaluate on; training mode "
                            "needs at least two",
                       origin(e, KEY_EVAL_FILE, -1), n_held);
    pop_id_held(spec, spec ? NULL : &fd, &h, e->held_id);
    e->train_rows = sh->train.n;
    e->held_rows = n_held;
    return 0;
}

/* [maps]'s keys: one source, each key with the source it applies to,
 * none of the generated population's keys, and what the maps need to
 * exist. */
static int maps_excludes(const exp_t *e, bn_error *err)
{
    const exp_maps *m = &e->maps;
    int image = m->image_h > 0, field = m->size_h > 0;
    if (image && field)
        return bn_fail(err, "%s: image reads a file's rows as images and "
                            "size generates maps: one or the other (%s)",
                       e->from[KEY_MAPS_SIZE], e->from[KEY_MAPS_IMAGE]);
    if (image && !e->popfile.file)
        return bn_fail(err, "%s: image reads the rows of a population file "
                            "as images, and no file is given ([population] "
                            "file = PATH)",
                       e->from[KEY_MAPS_IMAGE]);
    if (field && e->popfile.file)
        return bn_fail(err, "%s: size generates the maps, and %s names a "
                            "population file (image reads its rows as "
                            "images)",
                       e->from[KEY_MAPS_SIZE], e->from[KEY_POP_FILE]);
    static const struct {
        key_id k;
        int needs; /* 1 image, 2 size, 3 either */
    } applies[] = {{KEY_MAPS_FILTERS, 1}, {KEY_MAPS_KERNEL, 1},
                   {KEY_MAPS_SAMPLES, 2}, {KEY_MAPS_CHANNEL, 2},
                   {KEY_MAPS_SEED, 3}};
    static const char *const what[] = {
        "", "image (a file's rows through filters)",
        "size (generated maps)", "image or size (feature maps)"};
    for (size_t i = 0; i < sizeof applies / sizeof *applies; i++) {
        int need = applies[i].needs;
        if (was_set(e, applies[i].k) &&
            !((need & 1 && image) || (need & 2 && field)))
            return bn_fail(err, "%s: %s applies to [maps] %s",
                           e->from[applies[i].k], keys[applies[i].k].name,
                           what[need]);
    }
    if (!image && !field)
        return 0;
    if (field && m->n_ch == 0)
        return bn_fail(err, "%s: size needs at least one channel line "
                            "(channel = NAME MEAN SD R)",
                       e->from[KEY_MAPS_SIZE]);
    static const key_id generated[] = {KEY_ROWS, KEY_FEATURE,
                                       KEY_POP_CLASSES, KEY_POP_LABEL_NOISE};
    for (size_t i = 0; i < sizeof generated / sizeof *generated; i++)
        if (was_set(e, generated[i]))
            return bn_fail(err, "%s: %s does not apply to feature maps "
                                "([maps] says what they are)",
                           e->from[generated[i]], keys[generated[i]].name);
    key_id src = image ? KEY_MAPS_IMAGE : KEY_MAPS_SIZE;
    if (e->evalfile.file)
        return bn_fail(err, "%s: an evaluation file's rows are not feature "
                            "maps (%s)",
                       e->from[KEY_EVAL_FILE], e->from[src]);
    if (e->models != RUN_MODEL_BIT(RUN_MODEL_LAYER))
        return bn_fail(err, "%s: feature maps are the layer's (BatchNorm2d); "
                            "the classifier takes plain rows (%s)",
                       origin(e, KEY_MODEL, -1), e->from[src]);
    size_t mm, h, w, c;
    maps_shape(e, &mm, &h, &w, &c);
    if (image) {
        if (h == 0 || w == 0)
            return bn_fail(err, "%s: filters of %zu x %zu do not fit images "
                                "of %zu x %zu",
                           origin(e, KEY_MAPS_KERNEL, KEY_MAPS_IMAGE),
                           m->kernel, m->kernel, m->image_h, m->image_w);
        if (e->popfile.pop && e->popfile.pop->f != m->image_h * m->image_w)
            return bn_fail(err, "%s: images of %zu x %zu are %zu values, and "
                                "the rows of %s have %zu (the label and "
                                "group columns aside)",
                           e->from[KEY_MAPS_IMAGE], m->image_h, m->image_w,
                           m->image_h * m->image_w, e->popfile.file,
                           e->popfile.pop->f);
    }
    if (mm < 2)
        return bn_fail(err, "%s: feature maps need at least 2 samples",
                       origin(e, KEY_MAPS_SAMPLES, KEY_POP_FILE));
    if (mm > 100000000u / (h * w))
        return bn_fail(err, "%s: %zu samples of %zu x %zu make more than "
                            "100000000 rows",
                       origin(e, src, KEY_MAPS_SAMPLES), mm, h, w);
    return 0;
}

/* The maps' channel names: the generated channels', or c0, c1, ... for
 * the filters (freed by the caller with maps_names_free). */
static char **maps_names(const exp_t *e, size_t c)
{
    char **names = calloc(c ? c : 1, sizeof *names);
    for (size_t j = 0; names && j < c; j++) {
        char buf[32];
        const char *name = e->maps.size_h ? e->maps.ch_names[j] : buf;
        snprintf(buf, sizeof buf, "c%zu", j);
        if (!(names[j] = copy_text(name))) {
            free_names(names, c);
            return NULL;
        }
    }
    return names;
}

/* The population identifier of the maps (popid.h). */
static void maps_id(exp_t *e)
{
    const exp_maps *m = &e->maps;
    pop_maps_desc d = {m->image_h, m->image_w, m->filters, m->kernel,
                       m->size_h,  m->size_w,  m->samples, m->seed,
                       m->n_ch,    m->ch,      m->ch_names};
    pop_file_desc fd = {e->popfile.fnv, e->popfile.format, e->popfile.label,
                        e->popfile.group};
    pop_id_maps(m->image_h ? &fd : NULL, &d, e->pop_id);
}

int exp_finish(exp_t *e, bn_error *err)
{
    bn_error sub;
    e->models = 0;
    if (file_excludes(e, err) != 0)
        return -1;
    e->models = 0;
    for (size_t i = 0; i < e->n[KEY_MODEL]; i++)
        e->models |= RUN_MODEL_BIT(e->v[KEY_MODEL][i].i);
    if (population_excludes(e, err) != 0 || maps_excludes(e, err) != 0)
        return -1;
    /* The shape the orders and the checks see: the file's rows, or the
     * spec's names and classes without any rows, or the maps'. */
    shapes sh;
    memset(&sh, 0, sizeof sh);
    char **names = NULL, **map_names = NULL;
    size_t n_maps = 0;
    int rc = -1;
    if (exp_maps_active(e)) {
        size_t m, h, w;
        maps_shape(e, &m, &h, &w, &n_maps);
        if (!(map_names = maps_names(e, n_maps))) {
            bn_fail(err, "out of memory");
            goto done;
        }
        sh.all.n = m * h * w;
        sh.all.f = n_maps;
        sh.all.names = map_names;
        sh.all.sample_rows = h * w;
        maps_id(e);
    } else if (e->popfile.file) {
        if (!e->popfile.pop)
            return bn_fail(err, "%s: the population file %s was not read",
                           origin(e, KEY_POP_FILE, -1), e->popfile.file);
        sh.all = *e->popfile.pop;
    } else {
        if (pop_validate(&e->pop, &sub) != 0) {
            int classes = e->pop.classes == 1 ||
                          e->pop.classes > e->pop.n_rows;
            return bn_fail(err, "%s: %s",
                           classes ? origin(e, KEY_POP_CLASSES, KEY_ROWS)
                                   : origin(e, KEY_FEATURE, KEY_ROWS),
                           sub.msg);
        }
        names = malloc(e->pop.n_features * sizeof *names);
        if (!names || generated_labels(e->pop.classes, &sh.all.label) != 0) {
            bn_fail(err, "out of memory");
            goto done;
        }
        for (size_t j = 0; j < e->pop.n_features; j++)
            names[j] = e->pop.features[j].name;
        sh.all.n = e->pop.n_rows;
        sh.all.f = e->pop.n_features;
        sh.all.names = names;
        pop_id(&e->pop, e->pop_id);
    }
    sh.train = sh.all;
    memcpy(e->held_id, e->pop_id, sizeof e->held_id);
    memcpy(e->eval_id, e->pop_id, sizeof e->eval_id);
    if (e->evalfile.file && eval_file_shape(e, &sh, err) != 0)
        goto done;
    if (exp_held_out_models(e->models) && held_out_shape(e, &sh, err) != 0)
        goto done;
    rc = finish_checks(e, &sh, err);
done:
    free(names);
    free_names(map_names, n_maps);
    if (!e->popfile.file)
        pop_factor_free(&sh.all.label);
    return rc;
}

/* Whether a run of cfg reads key k: a setting of its model that the
 * model does not declare unused (run.h). */
static int key_used(const run_config *cfg, int k)
{
    const run_model *m = run_model_get(cfg->model);
    return (keys[k].models & RUN_MODEL_BIT(cfg->model)) &&
           (!m->uses || m->uses(cfg, k));
}

/* A setting given (not a default) that no configuration reads is refused
 * rather than ignored: the first such, with why. */
static int unused_key(const exp_t *e, uint64_t used, bn_error *err)
{
    char a[80], b[80];
    for (int k = 0; k < KEY_COUNT; k++) {
        if (!keys[k].nest || !was_set(e, k) || (used >> k & 1))
            continue;
        if (!(keys[k].models & e->models))
            return bn_fail(err, "%s: %s is a setting of %s, and this "
                                "experiment trains only %s%s",
                           e->from[k], keys[k].name,
                           model_names(keys[k].models, a, sizeof a),
                           model_names(e->models, b, sizeof b),
                           k == KEY_GAMMA || k == KEY_BETA
                               ? " (the classifier learns gamma and beta, "
                                 "from 1 and 0)"
                               : "");
        return bn_fail(err, "%s: %s is used by no configuration: %s",
                       e->from[k], keys[k].name,
                       k == KEY_PRECISE
                           ? "precise_batches applies to the estimator "
                             "precise"
                           : "the classifier without batch norm (norm = "
                             "none) has no batch-norm settings");
    }
    return 0;
}

/* Files and reading-table columns of models the experiment does not
 * train are refused when named; the reading table's default is the
 * first trained model's. */
static int model_outputs(exp_t *e, bn_error *err)
{
    char a[80], b[80];
    for (int f = 0; out_file_get(f); f++) {
        const out_file_def *d = out_file_get(f);
        if (was_set(e, KEY_OUTPUTS) && (e->outputs & (1u << f)) &&
            d->model >= 0 && !(e->models & RUN_MODEL_BIT(d->model)))
            return bn_fail(err, "%s: outputs: %s is a file of %s, and this "
                                "experiment trains only %s",
                           e->from[KEY_OUTPUTS], d->name,
                           model_names(RUN_MODEL_BIT(d->model), a, sizeof a),
                           model_names(e->models, b, sizeof b));
    }
    if (!was_set(e, KEY_TABLE)) {
        int m = 0;
        while (!(e->models & RUN_MODEL_BIT(m)))
            m++;
        where w = {"the default", keys[KEY_TABLE].name, 1, err};
        return set_names(e, KEY_TABLE, &w, run_model_get(m)->table);
    }
    for (size_t i = 0; i < e->n_table; i++) {
        exp_column c;
        exp_column_find(e->table[i], &c);
        unsigned m = c.score ? c.score->models : keys[c.key].models;
        if (!(m & e->models))
            return bn_fail(err, "%s: table: %s is a column of %s, and this "
                                "experiment trains only %s",
                           e->from[KEY_TABLE], e->table[i],
                           model_names(m, a, sizeof a),
                           model_names(e->models, b, sizeof b));
    }
    return 0;
}

/* The orders against the population, every combination of the axes
 * against run_check (each against the rows its model trains on), and
 * the settings no combination uses. */
static int finish_checks(exp_t *e, const shapes *sh, bn_error *err)
{
    bn_error sub;
    for (size_t i = 0; i < e->n_orders; i++)
        if (order_parse(e->order_names[i], &sh->all, &e->orders[i], &sub) !=
            0)
            return bn_fail(err, "%s: %s", origin(e, KEY_ORDER, -1), sub.msg);
    if (model_outputs(e, err) != 0)
        return -1;

    key_id ax[KEY_COUNT];
    size_t na = axes(ax), total = 1;
    for (size_t i = 0; i < na; i++) {
        if (total > EXP_MAX_CONFIGS / e->n[ax[i]])
            return bn_fail(err, "%s: more than %d configurations", e->source,
                           EXP_MAX_CONFIGS);
        total *= e->n[ax[i]];
    }

    /* Every combination through the validator `run` uses, with the seed
     * at its first value: no check depends on the seed. */
    size_t pos[KEY_COUNT] = {0};
    uint64_t used = 0; /* bit k: a combination reads key k */
    for (;;) {
        run_config cfg;
        config_at(e, ax, na, pos, &cfg);
        for (int k = 0; k < KEY_COUNT; k++)
            if (key_used(&cfg, k))
                used |= (uint64_t)1 << k;
        int blame[2] = {-1, -1};
        const pop_t *shape =
            run_model_get(cfg.model)->held_out ? &sh->train : &sh->all;
        if (run_check(&cfg, shape, blame, &sub) != 0)
            return exp_blame(e, &cfg, blame, sub.msg, err);
        size_t i = na;
        while (i-- > 0) {
            if (ax[i] == KEY_SEED)
                continue;
            if (++pos[i] < e->n[ax[i]])
                break;
            pos[i] = 0;
        }
        if (i == (size_t)-1)
            break;
    }
    return unused_key(e, used, err);
}

/* The feature maps into *out: the file's rows through the filter bank, or
 * generated (convpop.h). */
static int maps_population(const exp_t *e, pop_t *out, bn_error *err)
{
    const exp_maps *m = &e->maps;
    convpop_t cp;
    size_t mm, h, w, c;
    maps_shape(e, &mm, &h, &w, &c);
    int rc = m->image_h
                 ? convpop_from_images(e->popfile.pop->x, mm, m->image_h,
                                       m->image_w, m->filters, m->kernel,
                                       m->seed, &cp, NULL, err)
                 : convpop_field(mm, h, w, c, m->ch, m->seed, &cp, err);
    if (rc != 0)
        return -1;
    char **names = maps_names(e, c);
    if (!names) {
        convpop_free(&cp);
        return bn_fail(err, "out of memory");
    }
    rc = convpop_take(&cp, (const char *const *)names, out, err);
    free_names(names, c);
    return rc;
}

const pop_t *exp_population(const exp_t *e, pop_t *tmp, bn_error *err)
{
    memset(tmp, 0, sizeof *tmp);
    if (exp_maps_active(e))
        return maps_population(e, tmp, err) == 0 ? tmp : NULL;
    if (e->popfile.file)
        return e->popfile.pop;
    return pop_generate(&e->pop, tmp, err) == 0 ? tmp : NULL;
}

int exp_populations(const exp_t *e, int held_out, exp_pops *out,
                    bn_error *err)
{
    memset(out, 0, sizeof *out);
    const pop_t *pop = exp_population(e, &out->made[0], err);
    if (!pop)
        return -1;
    out->p.pop = out->p.train = pop;
    out->p.eval_file = e->evalfile.file ? e->evalfile.pop : NULL;
    if (!held_out)
        return 0;
    if (e->evalfile.file) {
        out->p.held_out = e->evalfile.pop;
    } else if (e->popfile.file) {
        if (evalpop_split(pop, e->holdout, e->holdout_seed, &out->made[1],
                          &out->made[2], err) != 0)
            return -1;
        out->p.train = &out->made[1];
        out->p.held_out = &out->made[2];
    } else {
        if (pop_generate_held_out(&e->pop, &out->made[2], err) != 0)
            return -1;
        out->p.held_out = &out->made[2];
    }
    return 0;
}

void exp_pops_free(exp_pops *p)
{
    for (int i = 0; i < 3; i++)
        pop_free(&p->made[i]);
    memset(&p->p, 0, sizeof p->p);
}

/* ---- the manifest and the key columns ---- */

static void print_ints(bn_buf *fp, const key_value *v, size_t n)
{
    /* Runs of consecutive values print as A..B, as they may be written. */
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && v[j].u != UINT64_MAX && v[j + 1].u == v[j].u + 1)
            j++;
        buf_printf(fp, "%s%llu", i ? " " : "", (unsigned long long)v[i].u);
        if (j > i + 1)
            buf_printf(fp, "..%llu", (unsigned long long)v[j].u);
        else if (j == i + 1)
            buf_printf(fp, " %llu", (unsigned long long)v[j].u);
        i = j + 1;
    }
}

/* Whether the manifest has a line for key k: the keys of a generated
 * population or of a file, never both; a model's keys when it trains;
 * the classes' and the held-out split's only when they make rows. */
static int in_manifest(const exp_t *e, int k)
{
    const key_def *d = &keys[k];
    int file = e->popfile.file != NULL;
    if (!d->section || !(d->models & e->models))
        return 0;
    switch (k) {
    case KEY_ROWS:
    case KEY_POP_SEED:
    case KEY_FEATURE:
        return !file && !e->maps.size_h;
    case KEY_MAPS_IMAGE:
    case KEY_MAPS_FILTERS:
    case KEY_MAPS_KERNEL:
        return e->maps.image_h > 0;
    case KEY_MAPS_SIZE:
    case KEY_MAPS_SAMPLES:
    case KEY_MAPS_CHANNEL:
        return e->maps.size_h > 0;
    case KEY_MAPS_SEED:
        return exp_maps_active(e);
    case KEY_POP_CLASSES:
    case KEY_POP_LABEL_NOISE:
        return !file && e->pop.classes;
    case KEY_POP_FILE:
    case KEY_POP_LABEL:
    case KEY_POP_GROUP:
        return file;
    case KEY_HOLDOUT:
    case KEY_HOLDOUT_SEED:
        return file && !e->evalfile.file;
    case KEY_EVAL_FILE:
        return e->evalfile.file != NULL;
    case KEY_MODEL: /* the study's files are the layer's alone */
        return e->models != RUN_MODEL_BIT(RUN_MODEL_LAYER);
    default:
        return 1;
    }
}

void exp_manifest(bn_buf *fp, const exp_t *e)
{
    for (int k = 0; k < KEY_COUNT; k++) {
        const key_def *d = &keys[k];
        if (!in_manifest(e, k))
            continue;
        if (d->type == KT_PATH) {
            const exp_popfile *pf =
                k == KEY_EVAL_FILE ? &e->evalfile : &e->popfile;
            buf_printf(fp, "%s.%s\t%s\n", d->section, d->name, pf->file);
            buf_printf(fp, "%s.%s_sha256\t%s\n", d->section, d->name,
                       pf->sha256);
            /* What the file held, which the experiment does not say:
             * figures give the rows in their axis labels. */
            if (pf->pop)
                buf_printf(fp, "%s.%s_rows\t%zu\n", d->section, d->name,
                           pf->pop->n);
            continue;
        }
        if (d->type == KT_COLUMN) {
            const char *c = k == KEY_POP_LABEL ? e->popfile.label
                                               : e->popfile.group;
            if (c)
                buf_printf(fp, "%s.%s\t%s\n", d->section, d->name, c);
            continue;
        }
        if (d->type == KT_CHANNEL) {
            for (size_t j = 0; j < e->maps.n_ch; j++) {
                const convpop_channel *c = &e->maps.ch[j];
                buf_printf(fp, "%s.%s\t%s %.17g %.17g %.17g\n", d->section,
                           d->name, e->maps.ch_names[j], c->mean, c->sd,
                           c->r);
            }
            continue;
        }
        if (d->type == KT_SHAPE) {
            const size_t *hw =
                k == KEY_MAPS_IMAGE ? &e->maps.image_h : &e->maps.size_h;
            buf_printf(fp, "%s.%s\t%zu %zu\n", d->section, d->name, hw[0],
                       hw[1]);
            continue;
        }
        if (d->type == KT_FEATURE) {
            for (size_t j = 0; j < e->pop.n_features; j++) {
                const pop_feature *f = &e->pop.features[j];
                buf_printf(fp, "%s.%s\t%s %.17g %.17g %.17g\n", d->section,
                        d->name, f->name, f->mean, f->sd, f->rho);
            }
            continue;
        }
        buf_printf(fp, "%s.%s\t", d->section, d->name);
        switch (d->type) {
        case KT_TEXT:
            buf_puts(fp, e->description ? e->description : "");
            break;
        case KT_COLUMNS:
            for (size_t i = 0; i < e->n_table; i++)
                buf_printf(fp, "%s%s", i ? " " : "", e->table[i]);
            break;
        case KT_OUTPUTS:
            /* The files of the models trained: the rest are never made. */
            for (int f = 0, first = 1; out_file_get(f); f++)
                if ((e->outputs & (1u << f)) &&
                    (out_file_get(f)->model < 0 ||
                     (e->models & RUN_MODEL_BIT(out_file_get(f)->model)))) {
                    buf_printf(fp, "%s%s", first ? "" : " ",
                            out_file_get(f)->name);
                    first = 0;
                }
            break;
        case KT_UINT:
            buf_printf(fp, "%llu", (unsigned long long)uint_of(e, (key_id)k));
            break;
        case KT_REAL:
            buf_printf(fp, "%.17g", real_of(e, (key_id)k));
            break;
        case KT_REALS:
            for (size_t i = 0; i < e->n[k]; i++)
                buf_printf(fp, "%s%.17g", i ? " " : "", e->v[k][i].r);
            break;
        case KT_UINTS:
            print_ints(fp, e->v[k], e->n[k]);
            break;
        case KT_CHOICES:
            for (size_t i = 0; i < e->n[k]; i++)
                buf_printf(fp, "%s%s", i ? " " : "", d->choice(e->v[k][i].i));
            break;
        case KT_ORDERS:
            for (size_t i = 0; i < e->n[k]; i++)
                buf_printf(fp, "%s%s", i ? " " : "",
                        e->orders[e->v[k][i].i].name);
            break;
        case KT_DRIFTS:
            for (size_t i = 0; i < e->n[k]; i++)
                buf_printf(fp, "%s%s", i ? " " : "",
                           e->drift_names[e->v[k][i].i]);
            break;
        default:
            break;
        }
        buf_putc(fp, '\n');
    }
}

/* The key columns of file, lead or trail, of the models trained, in
 * column order (keys of one column in table order). Called for every row
 * a sweep writes, so one pass over the table and an insertion sort of
 * the few columns found, not a pass per column number. */
static size_t columns(unsigned file, int lead, unsigned models, key_id *out)
{
    size_t n = 0;
    for (int k = 0; k < KEY_COUNT; k++) {
        int col = keys[k].col;
        if (col >= 1 && (keys[k].files & file) &&
            (col <= KEY_LEAD_COLUMNS) == (lead != 0) &&
            (keys[k].models & models) &&
            /* the study's files are the layer's alone */
            !(k == KEY_MODEL && models == RUN_MODEL_BIT(RUN_MODEL_LAYER))) {
            size_t i = n++;
            for (; i > 0 && keys[out[i - 1]].col > col; i--)
                out[i] = out[i - 1];
            out[i] = (key_id)k;
        }
    }
    return n;
}

int exp_key_column(const char *name)
{
    for (int k = 0; k < KEY_COUNT; k++)
        if (keys[k].col && strcmp(keys[k].name, name) == 0)
            return k;
    return -1;
}

int exp_column_find(const char *name, exp_column *col)
{
    exp_column c = {exp_key_column(name), NULL};
    if (c.key < 0 || !(exp_key((key_id)c.key)->files & COL_SUMMARY)) {
        c.key = -1;
        c.score = score_find(name);
        if (!c.score)
            return -1;
    }
    if (col)
        *col = c;
    return 0;
}

const char *exp_column_name(const exp_column *col)
{
    return col->score ? col->score->name : exp_key((key_id)col->key)->name;
}

void exp_cell_print(bn_buf *fp, const key_cell *c, const char *real_fmt)
{
    if (c->kind == CELL_TEXT)
        buf_puts(fp, c->text ? c->text : c->buf);
    else if (c->kind == CELL_INT)
        buf_printf(fp, "%llu", c->u);
    else
        buf_printf(fp, real_fmt, c->r);
}

void exp_key_header(bn_buf *fp, unsigned file, int lead, int first,
                    unsigned models)
{
    key_id col[KEY_COUNT];
    size_t n = columns(file, lead, models, col);
    for (size_t i = 0; i < n; i++)
        buf_printf(fp, "%s%s", i == 0 && first ? "" : "\t", keys[col[i]].name);
}

void exp_key_cells(bn_buf *fp, const run_config *cfg, unsigned file, int lead,
                   int first, const char *real_fmt, unsigned models)
{
    key_id col[KEY_COUNT];
    size_t n = columns(file, lead, models, col);
    for (size_t i = 0; i < n; i++) {
        key_cell c;
        memset(&c, 0, sizeof c);
        /* Another model's setting. One the model does not use (momentum
         * without batch norm) still shows its value: two runs that differ
         * only there are two rows, and each is named by its values. */
        if (!(keys[col[i]].models & RUN_MODEL_BIT(cfg->model)))
            c.text = "-";
        else
            keys[col[i]].get(cfg, &c);
        if (i > 0 || !first)
            buf_putc(fp, '\t');
        exp_cell_print(fp, &c, real_fmt);
    }
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
