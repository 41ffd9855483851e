/* The score table, the scores and the self-checks; definitions in
 * docs/definitions.md. */
#include "model/score.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/pair.h"
#include "model/keyid.h"
#include "model/net.h"
#include "model/selfcheck.h"

/* What puts a score out of range when it overflows: the features'
 * values, gamma and beta for the layer's outputs, the learning rate for
 * the classifier's. */
#define DATA                                                                \
    .scale = {KEY_FEATURE, KEY_POP_FILE},                                   \
    .overflow = "the features' values put it"
#define OUTPUTS                                                             \
    .scale = {KEY_GAMMA, KEY_BETA},                                         \
    .overflow = "gamma and beta put the outputs (gamma times the "          \
                "normalised value plus beta)"
#define TRAINED                                                             \
    .scale = {KEY_LR, KEY_FEATURE},                                         \
    .overflow = "the learning rate and the features' values put the "       \
                "weights"
#define L RUN_MODEL_BIT(RUN_MODEL_LAYER)
#define C RUN_MODEL_BIT(RUN_MODEL_CLASSIFIER)
#define DEP RUN_DEP_EXT
#define SEQ RUN_SEQ_EXT
#define GRP RUN_GRP_EXT
/* The value's place in run_result. */
#define AT(field) offsetof(run_result, field)
/* In the published study's order, which summary.tsv keeps. */
static const score_def scores[] = {
    {.name = "updates", .definition = "T, the buffer updates",
     .kind = SCORE_COUNT, .offset = AT(updates), .models = L | C, .buffers = 1,
     DATA},
    {.name = "init_weight",
     .definition = "the weight the initial 0 and 1 still carry, (1 - p)^T "
                   "for ema",
     .kind = SCORE_REAL, .offset = AT(init_weight), .models = L | C,
     .buffers = 1, DATA},
    {.name = "stats_err",
     .definition = "RMS over features (the classifier's hidden units) of the "
                   "running mean's and variance's errors",
     .kind = SCORE_REAL, .offset = AT(stats_err), .models = L | C,
     .summarised = 1, .buffers = 1, DATA},
    {.name = "mean_err", .definition = "RMS over features of rm - mu",
     .kind = SCORE_REAL, .offset = AT(mean_err), .models = L, .summarised = 1,
     DATA},
    {.name = "var_err", .definition = "RMS over features of rv - v",
     .kind = SCORE_REAL, .offset = AT(var_err), .models = L, .summarised = 1,
     DATA},
    {.name = "worst_var_err", .definition = "max over features of |rv - v|",
     .kind = SCORE_REAL, .offset = AT(worst_var_err), .models = L,
     .summarised = 1, DATA},
    {.name = "worst_var_feature", .definition = "the feature of worst_var_err",
     .kind = SCORE_FEATURE, .offset = AT(worst_var_feature), .models = L,
     DATA},
    {.name = "train_eval_rmse",
     .definition = "RMS of y_train - y_eval over the last epoch's rows and "
                   "features",
     .kind = SCORE_REAL, .offset = AT(train_eval_rmse), .models = L,
     .summarised = 1, OUTPUTS},
    {.name = "batch_mean_err",
     .definition = "RMS of a batch mean's error over the last epoch's batches",
     .kind = SCORE_REAL, .offset = AT(batch_mean_err), .models = L,
     .summarised = 1, DATA},
    {.name = "batch_var_err",
     .definition = "RMS of a batch variance's error over the last epoch's "
                   "batches",
     .kind = SCORE_REAL, .offset = AT(batch_var_err), .models = L,
     .summarised = 1, DATA},
    {.name = "props_pass", .definition = "self-checks passed",
     .kind = SCORE_COUNT, .offset = AT(props_pass), .models = L, DATA},
    {.name = "props_total",
     .definition = "self-checks made (4 per batch and feature)",
     .kind = SCORE_COUNT, .offset = AT(props_total), .models = L, DATA},
    /* Beyond the published layout, so it stays a prefix. */
    {.name = "stats_err_rel",
     .definition = "RMS over features of (rm - mu)/sd and (rv - v)/v: "
                   "stats_err in each feature's own scale",
     .kind = SCORE_REAL, .offset = AT(stats_err_rel), .models = L | C,
     .summarised = 1, .relative = 1, .buffers = 1, DATA},
    {.name = "worst_var_rel",
     .definition = "max over features of |rv - v| / v", .kind = SCORE_REAL,
     .offset = AT(worst_var_rel), .models = L, .summarised = 1, .relative = 1,
     DATA},
    /* The classifier's: stats_err_rel's two parts, which act differently
     * on a prediction; then on the evaluation rows, then on the training
     * rows. */
    {.name = "mean_err_rel",
     .definition = "RMS over the hidden units of (rm - mu)/sd: the offset "
                   "evaluation adds",
     .kind = SCORE_REAL, .offset = AT(mean_err_rel), .models = C,
     .summarised = 1, .relative = 1, .buffers = 1, DATA},
    {.name = "var_err_rel",
     .definition = "RMS over the hidden units of (rv - v)/v: the rescaling "
                   "evaluation makes",
     .kind = SCORE_REAL, .offset = AT(var_err_rel), .models = C,
     .summarised = 1, .relative = 1, .buffers = 1, DATA},
    {.name = "acc_train_mode",
     .definition = "accuracy with each batch's own statistics",
     .kind = SCORE_REAL, .offset = AT(acc_train_mode), .models = C,
     .summarised = 1, TRAINED},
    {.name = "acc_eval_mode",
     .definition = "accuracy with the running statistics", .kind = SCORE_REAL,
     .offset = AT(acc_eval_mode), .models = C, .summarised = 1, TRAINED},
    {.name = "loss_train_mode",
     .definition = "mean cross-entropy with each batch's own statistics",
     .kind = SCORE_REAL, .offset = AT(loss_train_mode), .models = C,
     .summarised = 1, TRAINED},
    {.name = "loss_eval_mode",
     .definition = "mean cross-entropy with the running statistics",
     .kind = SCORE_REAL, .offset = AT(loss_eval_mode), .models = C,
     .summarised = 1, TRAINED},
    {.name = "agreement",
     .definition = "the share of the rows both modes give the same class",
     .kind = SCORE_REAL, .offset = AT(agreement), .models = C, .summarised = 1,
     TRAINED},
    {.name = "fit_acc_train_mode",
     .definition = "acc_train_mode on the training rows", .kind = SCORE_REAL,
     .offset = AT(fit_acc_train_mode), .models = C, .summarised = 1, TRAINED},
    {.name = "fit_acc_eval_mode",
     .definition = "acc_eval_mode on the training rows", .kind = SCORE_REAL,
     .offset = AT(fit_acc_eval_mode), .models = C, .summarised = 1, TRAINED},
    {.name = "fit_loss_train_mode",
     .definition = "loss_train_mode on the training rows", .kind = SCORE_REAL,
     .offset = AT(fit_loss_train_mode), .models = C, .summarised = 1, TRAINED},
    {.name = "fit_loss_eval_mode",
     .definition = "loss_eval_mode on the training rows", .kind = SCORE_REAL,
     .offset = AT(fit_loss_eval_mode), .models = C, .summarised = 1, TRAINED},
    /* A declared network's (RUN_NET_EXT: only in the files of an
     * experiment that declares one, so the default network's files keep
     * their columns). */
    {.name = "logit_gap",
     .definition = "the largest |z_train - z_eval| over the evaluation rows "
                   "and classes: 0 exactly without batch dependence",
     .kind = SCORE_REAL, .offset = AT(logit_gap), .models = C | RUN_NET_EXT,
     .summarised = 1, TRAINED},
    {.name = "last_stats_err_rel",
     .definition = "stats_err_rel of the last batch-norm layer alone, "
                   "against what evaluation mode feeds it",
     .kind = SCORE_REAL, .offset = AT(last_stats_err_rel),
     .models = C | RUN_NET_EXT, .summarised = 1, .relative = 1,
     .buffers = 1, DATA},
    {.name = "radial",
     .definition = "max over training steps and units of |w.g|/(|w||g|), "
                   "the weights right before batch norm",
     .kind = SCORE_REAL, .offset = AT(radial), .models = C | RUN_NET_EXT,
     .summarised = 1, .weights_before_bn = 1, TRAINED},
    {.name = "radial_excess",
     .definition = "the same of w.g - gamma dgamma eps/(v + eps), its exact "
                   "value",
     .kind = SCORE_REAL, .offset = AT(radial_excess),
     .models = C | RUN_NET_EXT, .summarised = 1, .weights_before_bn = 1,
     TRAINED},
    {.name = "w_norm",
     .definition = "the Euclidean norm of the weights right before batch "
                   "norm",
     .kind = SCORE_REAL, .offset = AT(w_norm), .models = C | RUN_NET_EXT,
     .summarised = 1, .weights_before_bn = 1, TRAINED},
    {.name = "w_norm_ratio",
     .definition = "w_norm over its initial value", .kind = SCORE_REAL,
     .offset = AT(w_norm_ratio), .models = C | RUN_NET_EXT, .summarised = 1,
     .weights_before_bn = 1, TRAINED},
    /* Batch dependence (issue 24, compose.h): only in the files of an
     * experiment that sets [sweep] compositions (RUN_DEP_EXT). */
    {.name = "dep_batches",
     .definition = "the batches of B evaluation rows the batch-dependence "
                   "scores formed",
     .kind = SCORE_COUNT, .offset = AT(dep_batches), .models = L | C | DEP,
     DATA},
    {.name = "batch_dependence",
     .definition = "the largest range of a row's train-mode output (a "
                   "classifier's logit) over the batches it was in",
     .kind = SCORE_REAL, .offset = AT(batch_dependence),
     .models = L | C | DEP, .summarised = 1, OUTPUTS},
    {.name = "batch_dependence_mean",
     .definition = "the mean over rows of a row's largest range",
     .kind = SCORE_REAL, .offset = AT(batch_dependence_mean),
     .models = L | C | DEP, .summarised = 1, OUTPUTS},
    {.name = "batch_dependence_eval",
     .definition = "batch_dependence in evaluation mode: 0 exactly",
     .kind = SCORE_REAL, .offset = AT(batch_dependence_eval),
     .models = L | C | DEP, .summarised = 1, OUTPUTS},
    {.name = "class_flips",
     .definition = "the share of rows whose train-mode class is not the "
                   "same in every batch they were in",
     .kind = SCORE_REAL, .offset = AT(class_flips), .models = C | DEP,
     .summarised = 1, TRAINED},
    {.name = "acc_train_by_class",
     .definition = "acc_train_mode in batches cut from the rows sorted by "
                   "class",
     .kind = SCORE_REAL, .offset = AT(acc_train_by_class), .models = C | DEP,
     .summarised = 1, TRAINED},
    /* Only where the population has a group column too (RUN_GRP_EXT). */
    {.name = "acc_train_by_group",
     .definition = "acc_train_mode in batches cut from the rows sorted by "
                   "group (one user, one source, one time)",
     .kind = SCORE_REAL, .offset = AT(acc_train_by_group),
     .models = C | DEP | GRP, .summarised = 1, TRAINED},
    /* Padded sequences (issue 24, seqlayer.h): only in the files of an
     * experiment that sets a [sequence] key (RUN_SEQ_EXT). */
    {.name = "pad_fraction",
     .definition = "the share of the sequences' positions that are padding",
     .kind = SCORE_REAL, .offset = AT(pad_fraction), .models = L | SEQ,
     DATA},
    {.name = "closed_mean_err",
     .definition = "mean_err of buffers pooled over every position: RMS over "
                   "features of pad_fraction mu",
     .kind = SCORE_REAL, .offset = AT(closed_mean_err), .models = L | SEQ,
     .summarised = 1, DATA},
    {.name = "closed_var_err",
     .definition = "var_err of the same: RMS of pad_fraction ((1 - "
                   "pad_fraction) mu^2 - v)",
     .kind = SCORE_REAL, .offset = AT(closed_var_err), .models = L | SEQ,
     .summarised = 1, DATA},
};
#undef SEQ
#undef GRP
#undef DEP
#undef L
#undef C
#undef AT
#undef DATA
#undef OUTPUTS
#undef TRAINED
#define N_SCORES (sizeof scores / sizeof *scores)

const score_def *score_get(size_t i) { return i < N_SCORES ? &scores[i] : NULL; }

const score_def *score_find(const char *name)
{
    for (size_t i = 0; i < N_SCORES; i++)
        if (strcmp(scores[i].name, name) == 0)
            return &scores[i];
    return NULL;
}

double score_value(const score_def *s, const run_result *r)
{
    const char *at = (const char *)r + s->offset;
    if (s->kind == SCORE_REAL) {
        double v;
        memcpy(&v, at, sizeof v);
        return v;
    }
    size_t u;
    memcpy(&u, at, sizeof u);
    return (double)u;
}

int score_applies(const score_def *s, const run_config *cfg)
{
    if (!(s->models & RUN_MODEL_BIT(cfg->model)))
        return 0;
    if (cfg->model != RUN_MODEL_CLASSIFIER)
        return 1;
    if (s->buffers && !net_has_batch(&cfg->clf))
        return 0;
    return !s->weights_before_bn || net_has_weights_before_bn(&cfg->clf);
}

const score_def *score_first_not_finite(const run_config *cfg,
                                        const run_result *r,
                                        const pop_t *pop)
{
    int constant = pop_constant_feature(pop) >= 0;
    for (size_t i = 0; i < N_SCORES; i++) {
        if (!score_applies(&scores[i], cfg) || scores[i].kind != SCORE_REAL)
            continue;
        double v = score_value(&scores[i], r);
        if (!isfinite(v) && !(v == INFINITY && scores[i].relative && constant))
            return &scores[i];
    }
    return NULL;
}

/* err / scale where scale is 0 exactly: an exact statistic is right in
 * any units, any other is infinitely far off. */
static double relative(double err, double scale)
{
    if (scale == 0.0)
        return err == 0.0 ? 0.0 : INFINITY;
    return err / scale;
}

void score_buffers(const pop_t *pop, const double *rm, const double *rv,
                   score_buffers_t *out)
{
    score_buffers_of(pop->f, pop->mean, pop->var, rm, rv, out);
}

void score_buffers_of(size_t nf, const double *mu, const double *var,
                      const double *rm, const double *rv,
                      score_buffers_t *out)
{
    double sm = 0.0, sv = 0.0, worst = -1.0;
    double rel = 0.0, rel_m = 0.0, rel_v = 0.0, worst_rel = 0.0;
    size_t wj = 0;
    for (size_t j = 0; j < nf; j++) {
        double dm = rm[j] - mu[j], dv = rv[j] - var[j];
        sm += dm * dm;
        sv += dv * dv;
        if (fabs(dv) > worst) {
            worst = fabs(dv);
            wj = j;
        }
        double am = relative(dm, sqrt(var[j]));
        double av = relative(dv, var[j]);
        rel += am * am + av * av; /* in this order: the study's bits */
        rel_m += am * am;
        rel_v += av * av;
        if (fabs(av) > worst_rel)
            worst_rel = fabs(av);
    }
    double f = (double)nf;
    out->stats_err = sqrt((sm + sv) / (2.0 * f));
    out->mean_err = sqrt(sm / f);
    out->var_err = sqrt(sv / f);
    out->worst_var_err = worst;
    out->worst_var_feature = wj;
    out->stats_err_rel = sqrt(rel / (2.0 * f));
    out->mean_err_rel = sqrt(rel_m / f);
    out->var_err_rel = sqrt(rel_v / f);
    out->worst_var_rel = worst_rel;
}

/* A NaN with a payload no arithmetic produces. */
static const uint64_t sentinel_bits = 0x7ff4a5a5a5a5a5a5ULL;

void score_mark(double *y, size_t n)
{
    for (size_t i = 0; i <= n; i++)
        memcpy(&y[i], &sentinel_bits, sizeof sentinel_bits);
}

static int is_sentinel(const double *v)
{
    return memcmp(v, &sentinel_bits, sizeof sentinel_bits) == 0;
}

int score_written(const double *y, size_t n)
{
    for (size_t i = 0; i <= n; i++)
        if (is_sentinel(&y[i]) != (i == n))
            return 0;
    return 1;
}

size_t score_checks(const bn_layer *layer, size_t b, const double *s1,
                    const double *s2, const double *var)
{
    size_t pass = 0, j = 0;
    double inv_b = 1.0 / (double)b, eps = layer->eps;
    const double *g = layer->gamma, *be = layer->beta;
    pair_tally_t t = pair_tally_zero();
    for (; j + 1 < layer->f; j += 2) {
        pair_t sv = pair_load(var + j);
        t = selfcheck_pair(t, pair_load(g + j), pair_load(be + j), sv,
                           pair_add(sv, pair_dup(eps)), pair_load(s1 + j),
                           pair_load(s2 + j), pair_dup(inv_b));
    }
    for (; j < layer->f; j++)
        pass += (size_t)selfcheck_one(g[j], be[j], var[j], var[j] + eps,
                                      s1[j], s2[j], inv_b);
    return pass + pair_tally_sum(t);
}
