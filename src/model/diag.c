/*
 * The diagnosis (see diag.h): per feature, the truth of the activations,
 * what the running statistics do to the evaluation output, what the
 * initial values alone would do, how exchangeable the batches were, and
 * the first cause in the table below that applies.
 */
#include "model/diag.h"

#include <math.h>
#include <string.h>

#include "pop/pop.h"

/* Evaluation moves the output by more than DIAG_OFF of its spread. */
static int off(double shift, double scale)
{
    return !(fabs(shift) <= DIAG_OFF && fabs(scale - 1.0) <= DIAG_OFF);
}

static int stats_off(const diag_feature *d)
{
    return off(d->shift, d->scale);
}

/* The initial values alone would put the statistics off, and they are. */
static int init_explains(const diag_feature *d)
{
    return stats_off(d) && off(d->init_shift, d->init_scale);
}

static int few_updates(const diag_feature *d)
{
    return init_explains(d) && d->init_weight > DIAG_INIT_WEIGHT;
}

static int not_exchangeable(const diag_feature *d)
{
    return d->exchange > DIAG_EXCHANGE; /* false for NaN */
}

static int near_constant(const diag_feature *d)
{
    return d->amplification > DIAG_AMPLIFY;
}

static int far_from_init(const diag_feature *d)
{
    return init_explains(d) && d->init_weight <= DIAG_INIT_WEIGHT;
}

/* Only when nothing before applies: flags holds the earlier causes. */
static int other(const diag_feature *d)
{
    return d->flags == 0 && stats_off(d);
}

static int clean(const diag_feature *d)
{
    return d->flags == 0;
}

static const struct {
    diag_cause_info info;
    int (*applies)(const diag_feature *d);
} causes[DIAG_N_CAUSES] = {
    {{DIAG_FEW_UPDATES, "few-updates",
      "too few updates for the momentum: the initial running values still "
      "carry weight (1-p)^T and hold the statistics off",
      "statistics off, the initial values alone would put them off, and "
      "(1-p)^T > 0.05"},
     few_updates},
    {{DIAG_NOT_EXCHANGEABLE, "not-exchangeable",
      "batches that are not exchangeable (sorted or grouped): their means "
      "spread far more than random batches' would",
      "batch means spread more than 4 times that of random batches"},
     not_exchangeable},
    {{DIAG_NEAR_CONSTANT, "near-constant",
      "a near-constant feature: evaluation amplifies any difference by "
      "1/sqrt(var + eps)",
      "1/sqrt(var + eps) > 100"},
     near_constant},
    {{DIAG_FAR_FROM_INIT, "far-from-init",
      "a scale far from the initial 1 (or a mean far from the initial 0): "
      "even the little weight the initial values keep holds the "
      "statistics off",
      "statistics off, the initial values alone would put them off, and "
      "(1-p)^T <= 0.05"},
     far_from_init},
    {{DIAG_OTHER, "other",
      "off for a reason not in this table: the noise of small batches, "
      "drift during training, or statistics taken on other data",
      "statistics off and none of the causes above"},
     other},
    {{DIAG_CLEAN, "clean",
      "clean: the running statistics describe the activations",
      "none of the causes above"},
     clean},
};

const diag_cause_info *diag_cause_get(diag_cause c)
{
    return c < DIAG_N_CAUSES ? &causes[c].info : NULL;
}

static int validate(const diag_input *in, bn_error *err)
{
    if (in->n < 2)
        return bn_fail(err, "diagnose: %zu rows; at least 2 are needed",
                       in->n);
    if (in->f < 1)
        return bn_fail(err, "diagnose: no features");
    if (in->batch_rows) {
        size_t total = 0;
        for (size_t k = 0; k < in->n_batches; k++) {
            if (in->batch_rows[k] < 1)
                return bn_fail(err, "diagnose: batch %zu has no rows", k + 1);
            total += in->batch_rows[k];
        }
        if (total != in->n)
            return bn_fail(err,
                           "diagnose: the batches hold %zu rows, the "
                           "activations %zu",
                           total, in->n);
    } else if (in->batch < 1)
        return bn_fail(err, "diagnose: the batch size must be at least 1");
    if (!(in->p > 0.0 && in->p <= 1.0))
        return bn_fail(err,
                       "diagnose: the new value's weight p must be in (0, "
                       "1], got %.17g",
                       in->p);
    if (!(in->eps >= 0.0 && isfinite(in->eps)))
        return bn_fail(err, "diagnose: eps must be finite and >= 0, got %.17g",
                       in->eps);
    for (size_t j = 0; j < in->f; j++) {
        double v0 = in->init_var ? in->init_var[j] : 1.0;
        double m0 = in->init_mean ? in->init_mean[j] : 0.0;
        if (!isfinite(in->running_mean[j]) || !isfinite(in->running_var[j]) ||
            in->running_var[j] < 0.0)
            return bn_fail(err,
                           "diagnose: feature %zu: the running mean and "
                           "variance must be finite and the variance >= 0",
                           j + 1);
        if (!isfinite(m0) || !isfinite(v0) || v0 < 0.0)
            return bn_fail(err,
                           "diagnose: feature %zu: the initial mean and "
                           "variance must be finite and the variance >= 0",
                           j + 1);
    }
    for (size_t k = 0; k < in->n * in->f; k++)
        if (!isfinite(in->x[k]))
            return bn_fail(err,
                           "diagnose: row %zu, feature %zu is not finite",
                           k / in->f + 1, k % in->f + 1);
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

static double spread_ratio(const diag_input *in, size_t j, double mu,
                           double v)
{
    size_t n = in->n, f = in->f;
    double seen = 0.0, random = 0.0;
    for (size_t start = 0, k = 0; start < n; start += in->batch_rows
                                                      ? in->batch_rows[k++]
                                                      : in->batch) {
        size_t b = in->batch_rows ? in->batch_rows[k]
                   : n - start < in->batch ? n - start
                                           : in->batch;
        double m, s;
        pop_moments(b, f, in->x + start * f + j, &m, &s);
        seen += (m - mu) * (m - mu);
        /* A batch of b rows drawn without replacement from the n. */
        random += v / (double)b * (double)(n - b) / (double)(n - 1);
    }
    return random > 0.0 ? seen / random : NAN;
}

int diag_run(const diag_input *in, diag_feature *out, bn_error *err)
{
    if (validate(in, err) != 0)
        return -1;
    /* (1 - p)^T by T multiplications, as the updates apply it. */
    double w = 1.0;
    for (size_t t = 0; w != 0.0 && t < in->updates; t++)
        w *= 1.0 - in->p;
    for (size_t j = 0; j < in->f; j++) {
        diag_feature *d = &out[j];
        memset(d, 0, sizeof *d);
        double mu, v;
        pop_moments(in->n, in->f, in->x + j, &mu, &v);
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
        if (sd > 0.0) {
            d->shift = (rm - mu) / sd;
            d->init_shift = w * (m0 - mu) / sd;
        } else {
            d->shift = rm == mu ? 0.0 : copysign(INFINITY, rm - mu);
            d->init_shift =
                w * (m0 - mu) == 0.0 ? 0.0 : copysign(INFINITY, m0 - mu);
        }
        d->scale = root_ratio(den, rv + in->eps);
        d->init_scale = root_ratio(den, w * v0 + (1.0 - w) * v + in->eps);
        d->amplification = sd > 0.0 ? 1.0 / sd : INFINITY;
        d->exchange = spread_ratio(in, j, mu, v);
        d->cause = DIAG_N_CAUSES;
        for (int c = 0; c < DIAG_N_CAUSES; c++)
            if (causes[c].applies(d)) {
                d->flags |= 1u << c;
                if (d->cause == DIAG_N_CAUSES)
                    d->cause = (diag_cause)c;
            }
    }
    return 0;
}
