/* The score table, the scores and the self-checks; definitions in
 * docs/definitions.md. */
#include "model/score.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/keyid.h"

/* What puts a score out of range when it overflows: the features'
 * values, gamma and beta for the layer's outputs, the learning rate for
 * the classifier's. */
#define DATA {KEY_FEATURE, KEY_POP_FILE}, "the features' values put it"
#define OUTPUTS                                                             \
    {KEY_GAMMA, KEY_BETA}, "gamma and beta put the outputs (gamma times "   \
                           "the normalised value plus beta)"
#define TRAINED                                                             \
    {KEY_LR, KEY_FEATURE}, "the learning rate and the features' values "    \
                           "put the weights"
#define L RUN_MODEL_BIT(RUN_MODEL_LAYER)
#define C RUN_MODEL_BIT(RUN_MODEL_CLASSIFIER)
#define LAYER(name, kind, summarised, def)                                  \
    {#name, def, kind, offsetof(run_result, name), L, summarised, 0, 0, DATA}
#define LAYER_OUT(name, kind, summarised, def)                              \
    {#name, def, kind, offsetof(run_result, name), L, summarised, 0, 0,      \
     OUTPUTS}
/* A score of the buffers that the classifier's batch norm has too. */
#define BUFFERS(name, kind, summarised, rel, def)                           \
    {#name, def, kind, offsetof(run_result, name), L | C, summarised, rel, 1, \
     DATA}
#define CLF(name, def)                                                      \
    {#name, def, SCORE_REAL, offsetof(run_result, name), C, 1, 0, 0, TRAINED}
/* In the published study's order, which summary.tsv keeps. */
static const score_def scores[] = {
    BUFFERS(updates, SCORE_COUNT, 0, 0, "T, the buffer updates"),
    BUFFERS(init_weight, SCORE_REAL, 0, 0,
            "the weight the initial 0 and 1 still carry, (1 - p)^T for "
            "ema"),
    BUFFERS(stats_err, SCORE_REAL, 1, 0,
            "RMS over features (the classifier's hidden units) of the "
            "running mean's and variance's errors"),
    LAYER(mean_err, SCORE_REAL, 1, "RMS over features of rm - mu"),
    LAYER(var_err, SCORE_REAL, 1, "RMS over features of rv - v"),
    LAYER(worst_var_err, SCORE_REAL, 1, "max over features of |rv - v|"),
    LAYER(worst_var_feature, SCORE_FEATURE, 0,
          "the feature of worst_var_err"),
    LAYER_OUT(train_eval_rmse, SCORE_REAL, 1,
          "RMS of y_train - y_eval over the last epoch's rows and features"),
    LAYER(batch_mean_err, SCORE_REAL, 1,
          "RMS of a batch mean's error over the last epoch's batches"),
    LAYER(batch_var_err, SCORE_REAL, 1,
          "RMS of a batch variance's error over the last epoch's batches"),
    LAYER(props_pass, SCORE_COUNT, 0, "self-checks passed"),
    LAYER(props_total, SCORE_COUNT, 0, "self-checks made (4 per batch and "
                                       "feature)"),
    /* Beyond the published layout, so it stays a prefix. */
    BUFFERS(stats_err_rel, SCORE_REAL, 1, 1,
            "RMS over features of (rm - mu)/sd and (rv - v)/v: stats_err "
            "in each feature's own scale"),
    {"worst_var_rel", "max over features of |rv - v| / v", SCORE_REAL,
     offsetof(run_result, worst_var_rel), L, 1, 1, 0, DATA},
    /* The classifier's: stats_err_rel's two parts, which act differently
     * on a prediction; then on the evaluation rows, then on the training
     * rows. */
    {"mean_err_rel",
     "RMS over the hidden units of (rm - mu)/sd: the offset evaluation "
     "adds",
     SCORE_REAL, offsetof(run_result, mean_err_rel), C, 1, 1, 1, DATA},
    {"var_err_rel",
     "RMS over the hidden units of (rv - v)/v: the rescaling evaluation "
     "makes",
     SCORE_REAL, offsetof(run_result, var_err_rel), C, 1, 1, 1, DATA},
    CLF(acc_train_mode, "accuracy with each batch's own statistics"),
    CLF(acc_eval_mode, "accuracy with the running statistics"),
    CLF(loss_train_mode, "mean cross-entropy with each batch's own "
                         "statistics"),
    CLF(loss_eval_mode, "mean cross-entropy with the running statistics"),
    CLF(agreement, "the share of the rows both modes give the same class"),
    CLF(fit_acc_train_mode, "acc_train_mode on the training rows"),
    CLF(fit_acc_eval_mode, "acc_eval_mode on the training rows"),
    CLF(fit_loss_train_mode, "loss_train_mode on the training rows"),
    CLF(fit_loss_eval_mode, "loss_eval_mode on the training rows"),
};
#undef L
#undef C
#undef LAYER
#undef BUFFERS
#undef CLF
#undef LAYER_OUT
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
    return !s->buffers || cfg->model != RUN_MODEL_CLASSIFIER ||
           cfg->clf.norm == CLF_NORM_BATCH;
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
    size_t pass = 0;
    double inv_b = 1.0 / (double)b; /* a check, not a result: no bits */
    for (size_t j = 0; j < layer->f; j++) {
        double g = layer->gamma[j], be = layer->beta[j], sv = var[j];
        /* About beta, the mean the output should have: where it has it
         * these are the two-pass formula's, and where it misses the mean
         * check fails anyway. */
        double m = be + s1[j] * inv_b;
        double v = (s2[j] - s1[j] * s1[j] * inv_b) * inv_b;
        double want_v = g * g * sv / (sv + layer->eps);
        pass += fabs(m - be) <= 1e-9 * (fabs(g) + fabs(be));
        pass += fabs(v - want_v) <= 1e-9 * want_v + 1e-12;
    }
    return pass;
}
