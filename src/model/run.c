/*
 * A run as a pipeline: check the configuration, take the rows it trains
 * and is evaluated on (the population stage: the classifier's evaluation
 * rows shifted as [evaluation] says), make the order's permutation, hand
 * it to the model, and refuse scores that overflowed. The models are the
 * rows of the table below; layer.c is the batch-norm layer's,
 * classifier.c the classifier's.
 */
#include "model/run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/classifier.h"
#include "pop/evalpop.h"
#include "model/keyid.h"
#include "model/layer.h"
#include "model/score.h"

static const run_model models[RUN_MODEL_COUNT] = {
    [RUN_MODEL_LAYER] = {.name = "layer",
                         .help = "one batch-norm layer and its running "
                                 "statistics",
                         .run = layer_run, .check = layer_check,
                         .table = "order batch_size updates stats_err "
                                  "train_eval_rmse batch_mean_err init_weight",
                         .bytes = layer_bytes, .row_work = layer_row_work},
    [RUN_MODEL_CLASSIFIER] = {.name = "classifier",
                              .help = "Linear, batch norm, ReLU, Linear, "
                                      "trained by SGD and scored in both "
                                      "modes",
                              .run = classifier_run, .check = classifier_check,
                              .held_out = 1,
                              .table = "order batch_size epochs "
                                       "acc_train_mode acc_eval_mode "
                                       "stats_err_rel",
                              .uses = classifier_uses,
                              .bytes = classifier_bytes,
                              .row_work = classifier_row_work},
};

const run_model *run_model_get(run_model_id m) { return &models[m]; }

const char *run_model_name(int i)
{
    return i >= 0 && i < RUN_MODEL_COUNT ? models[i].name : NULL;
}

const pop_t *run_train_pop(const run_pops *p, const run_config *cfg)
{
    return models[cfg->model].held_out ? p->train : p->pop;
}

run_config run_in_rows(const run_config *cfg, const pop_t *pop)
{
    run_config c = *cfg;
    if (pop->sample_rows > 1)
        c.batch_size *= pop->sample_rows;
    return c;
}

int run_eval_pop(const run_pops *p, const run_config *cfg, pop_t *made,
                 const pop_t **eval, bn_error *err)
{
    memset(made, 0, sizeof *made);
    const pop_t *train = run_train_pop(p, cfg), *base = train;
    double shift = cfg->eval.shift;
    if (models[cfg->model].held_out) {
        if (!p->held_out)
            return bn_fail(err, "the %s needs held-out rows to be evaluated "
                                "on, and the population has none",
                           models[cfg->model].name);
        base = p->held_out;
    } else if (p->eval_file) {
        base = p->eval_file;
    } else if (cfg->drift.profile.kind != DRIFT_NONE) {
        /* The stream at the last update: the training rows moved by that
         * update's share of the drift, in the same units as shift. */
        run_config rows = run_in_rows(cfg, train);
        size_t t = cfg->epochs * run_batches_per_epoch(
                                     train->n, rows.batch_size, cfg->partial);
        shift += drift_fraction(&cfg->drift.profile, t) * cfg->drift.size;
    }
    *eval = base;
    if (shift == 0.0 && cfg->eval.scale == 1.0 && cfg->eval.offset == 0.0)
        return 0;
    if (evalpop_shift(base, shift, cfg->eval.scale, cfg->eval.offset, made,
                      err) != 0)
        return -1;
    *eval = made;
    return 0;
}

/* ---- the rows' range ---- */

/* The farthest pop's values of feature j are from its mean. */
static double spread(const pop_t *pop, size_t j)
{
    double r = 0.0;
    for (size_t i = 0; i < pop->n; i++) {
        double d = fabs(pop->x[i * pop->f + j] - pop->mean[j]);
        r = d > r ? d : r;
    }
    return r;
}

/* A setting that moves or scales rows (key, its value v) puts feature j
 * of pop at about `at`: past POP_MAX_SCALE, the most a population's value
 * may be (pop.h), it is refused, naming the setting. */
static int out_of_range(const pop_t *pop, size_t j, int key, const char *name,
                        double v, const char *rows, double at, int *blame,
                        bn_error *err)
{
    if (!(at > POP_MAX_SCALE))
        return 0;
    if (blame)
        blame[0] = key, blame[1] = -1;
    return bn_fail(err, "%s %g puts feature %s's %s rows at about %.3g, "
                        "beyond %g, the most a population's value may be "
                        "(their variances and squared errors would "
                        "overflow)",
                   name, v, pop->names[j], rows, at, POP_MAX_SCALE);
}

/* The rows a run computes with stay within POP_MAX_SCALE, as the
 * population's own do: the training rows moved by the drift (by up to
 * drift_size sd) and the evaluation rows moved and scaled by
 * [evaluation] (mu + shift sd + scale (x - mu) + offset), each bounded
 * from the rows' own mean, sd and spread before anything runs, so an
 * overflow is blamed on the setting that makes it and not on the
 * features. */
static int check_range(const run_pops *p, const run_config *cfg,
                       int *blame, bn_error *err)
{
    const pop_t *train = run_train_pop(p, cfg);
    const pop_t *base = models[cfg->model].held_out ? p->held_out
                        : p->eval_file              ? p->eval_file
                                                    : train;
    int drift = cfg->drift.profile.kind != DRIFT_NONE &&
                cfg->drift.size != 0.0;
    int moved = cfg->eval.shift != 0.0 || cfg->eval.scale != 1.0 ||
                cfg->eval.offset != 0.0;
    for (size_t j = 0; drift && j < train->f; j++) {
        double sd = sqrt(train->var[j]);
        double at = fabs(train->mean[j]) + fabs(cfg->drift.size) * sd +
                    spread(train, j);
        if (out_of_range(train, j, KEY_DRIFT_SIZE, "drift_size",
                         cfg->drift.size, "training", at, blame, err))
            return -1;
    }
    for (size_t j = 0; base && moved && j < base->f; j++) {
        double sd = sqrt(base->var[j]), r = spread(base, j);
        double mu = fabs(base->mean[j]);
        const struct {
            int key;
            const char *name;
            double v, at;
        } term[] = {
            {KEY_EVAL_SHIFT, "shift", cfg->eval.shift,
             mu + fabs(cfg->eval.shift) * sd + r},
            {KEY_EVAL_SCALE, "scale", cfg->eval.scale,
             mu + cfg->eval.scale * r},
            {KEY_EVAL_OFFSET, "offset", cfg->eval.offset,
             mu + fabs(cfg->eval.offset) + r},
        };
        for (size_t t = 0; t < sizeof term / sizeof *term; t++)
            if (out_of_range(base, j, term[t].key, term[t].name, term[t].v,
                             "evaluation", term[t].at, blame, err))
                return -1;
    }
    return 0;
}

static int blamed(int *blame, int k0, int k1)
{
    if (blame) {
        blame[0] = k0;
        blame[1] = k1;
    }
    return -1;
}

/* A feature-map population's own checks: the batch size counts whole
 * samples, and the order must keep each sample's rows together. */
static int check_maps(const run_config *cfg, const pop_t *pop, int *blame,
                      bn_error *err)
{
    size_t hw = pop->sample_rows, m = pop->n / hw;
    if (cfg->batch_size < 1 || cfg->batch_size > m ||
        cfg->batch_size * hw < 2)
        return bn_fail(err,
                       "batch size counts whole feature maps here: it must "
                       "be from %d to the population's %zu samples, got %zu",
                       hw < 2 ? 2 : 1, m, cfg->batch_size),
               blamed(blame, KEY_BATCH_SIZE, KEY_MAPS_SAMPLES);
    if (cfg->partial == RUN_PARTIAL_KEEP && hw == 1 &&
        m % cfg->batch_size == 1)
        return bn_fail(err,
                       "partial keep with batch size %zu leaves a last "
                       "batch of one value, whose variance is undefined",
                       cfg->batch_size),
               blamed(blame, KEY_PARTIAL, KEY_BATCH_SIZE);
    if (cfg->order.def && !cfg->order.def->whole_samples)
        return bn_fail(err,
                       "order '%s' would cut feature maps apart: a batch of "
                       "feature maps holds whole samples (as-is or "
                       "shuffled-samples)",
                       cfg->order.name),
               blamed(blame, KEY_ORDER, -1);
    if (cfg->model != RUN_MODEL_LAYER)
        return bn_fail(err, "a population of feature maps is the layer's "
                            "(BatchNorm2d); the %s takes plain rows",
                       models[cfg->model].name),
               blamed(blame, KEY_MODEL, KEY_MAPS_IMAGE);
    return 0;
}

/* Devices with statistics of their own split each batch of B into K
 * shares of B / K consecutive rows: B must split evenly, into at least
 * two rows each, and so must every batch (no kept partial one), so that
 * the mean loss over the batch is the devices' mean of their means, as
 * data-parallel training averages them. */
static int devices_check(const run_config *cfg, const pop_t *pop,
                         bn_error *err)
{
    size_t k = bn_ghosts(&cfg->layer), b = cfg->batch_size;
    if (k == 1)
        return 0;
    if (pop->sample_rows > 1)
        return bn_fail(err, "feature maps are not split across %zu devices "
                            "(devices = 1, or sync = yes)", k);
    if (b % k != 0 || b / k < 2)
        return bn_fail(err, "batch size %zu does not split into %zu equal "
                            "shares of at least 2 rows",
                       b, k);
    if (cfg->partial == RUN_PARTIAL_KEEP && pop->n % b != 0)
        return bn_fail(err, "with partial keep the last batch of %zu rows "
                            "does not split into %zu equal shares",
                       pop->n % b, k);
    return 0;
}

int run_check(const run_config *cfg, const pop_t *pop, int *blame,
              bn_error *err)
{
    if (pop->sample_rows > 1) {
        if (check_maps(cfg, pop, blame, err) != 0)
            return -1;
    } else if (cfg->batch_size < 2 || cfg->batch_size > pop->n) {
        return bn_fail(err,
                       "batch size must be from 2 to the population's %zu "
                       "rows, got %zu",
                       pop->n, cfg->batch_size),
               blamed(blame, KEY_BATCH_SIZE, KEY_ROWS);
    } else if (cfg->partial == RUN_PARTIAL_KEEP &&
               pop->n % cfg->batch_size == 1) {
        return bn_fail(err,
                       "partial keep with batch size %zu leaves a last "
                       "batch of one row, whose variance is undefined",
                       cfg->batch_size),
               blamed(blame, KEY_PARTIAL, KEY_BATCH_SIZE);
    }
    if (cfg->epochs < 1)
        return bn_fail(err, "epochs must be at least 1"),
               blamed(blame, KEY_EPOCHS, -1);
    if (cfg->epochs > 1000000)
        return bn_fail(err, "epochs must be at most 1000000"),
               blamed(blame, KEY_EPOCHS, -1);
    if (!cfg->order.def)
        return bn_fail(err, "no order given"), blamed(blame, KEY_ORDER, -1);
    /* The order was parsed against every row; a model may train on
     * fewer (a held-out split). */
    if (cfg->order.def->arg == ORDER_ARG_COUNT && cfg->order.groups > pop->n)
        return bn_fail(err,
                       "order '%s': K must be an integer from 1 to the %zu "
                       "rows trained on",
                       cfg->order.name, pop->n),
               blamed(blame, KEY_ORDER, -1);
    size_t nb = run_batches_per_epoch(
        pop->n, run_in_rows(cfg, pop).batch_size, cfg->partial);
    if (cfg->precise_batches > nb)
        return bn_fail(err,
                       "precise batches %zu is more than the %zu batches "
                       "of an epoch",
                       cfg->precise_batches, nb),
               blamed(blame, KEY_PRECISE, KEY_BATCH_SIZE);
    if ((unsigned)cfg->model >= RUN_MODEL_COUNT)
        return bn_fail(err, "no model numbered %d", (int)cfg->model),
               blamed(blame, -1, -1);
    if (!(cfg->eval.scale > 0.0))
        return bn_fail(err, "scale must be > 0, got %g", cfg->eval.scale),
               blamed(blame, KEY_EVAL_SCALE, -1);
    if (devices_check(cfg, pop, err) != 0)
        return blamed(blame, KEY_DEVICES, KEY_BATCH_SIZE);
    return models[cfg->model].check(cfg, pop, blame, err);
}

int run_validate(const run_config *cfg, const pop_t *pop, bn_error *err)
{
    return run_check(cfg, pop, NULL, err);
}

size_t run_bytes(const run_config *cfg, size_t n, size_t f, size_t k)
{
    return n * sizeof(size_t) + models[cfg->model].bytes(cfg, n, f, k);
}

double run_work(const run_config *cfg, size_t n, size_t f, size_t k)
{
    return (double)cfg->epochs * (double)n *
           models[cfg->model].row_work(cfg, f, k);
}

int run_execute(const pop_t *pop, const run_config *cfg,
                const run_observer *obs, run_result *res, bn_error *err)
{
    run_pops p = {pop, pop, NULL, NULL};
    return run_execute_blamed(&p, cfg, obs, res, NULL, err);
}

int run_execute_on(const run_pops *p, const run_config *cfg,
                   const run_observer *obs, run_result *res, bn_error *err)
{
    return run_execute_blamed(p, cfg, obs, res, NULL, err);
}

int run_setup_make(const run_pops *p, const run_config *cfg, int *blame,
                   run_setup *s, bn_error *err)
{
    memset(s, 0, sizeof *s);
    if ((unsigned)cfg->model >= RUN_MODEL_COUNT)
        return bn_fail(err, "no model numbered %d", (int)cfg->model);
    s->train = run_train_pop(p, cfg);
    if (run_check(cfg, s->train, blame, err) != 0 ||
        check_range(p, cfg, blame, err) != 0)
        return -1;
    if (run_eval_pop(p, cfg, &s->shifted, &s->eval, err) != 0)
        return -1;
    /* From here on a batch is rows, whatever the population counts. */
    s->rows = run_in_rows(cfg, s->train);
    order_spec ord = s->rows.order;
    ord.batch_size = s->rows.batch_size;
    s->perm = bn_alloc_large(s->train->n * sizeof *s->perm);
    if (!s->perm || order_make(&ord, s->train, cfg->seed, s->perm, err)) {
        if (!s->perm)
            bn_fail(err, "out of memory");
        run_setup_free(s);
        return -1;
    }
    return 0;
}

void run_setup_free(run_setup *s)
{
    free(s->perm);
    pop_free(&s->shifted);
    memset(s, 0, sizeof *s);
}

int run_execute_blamed(const run_pops *p, const run_config *cfg,
                       const run_observer *obs, run_result *res, int *blame,
                       bn_error *err)
{
    memset(res, 0, sizeof *res);
    run_setup s;
    if (run_setup_make(p, cfg, blame, &s, err) != 0)
        return -1;
    const pop_t *eval = s.eval;
    int rc = models[cfg->model].run(s.train, eval, s.perm, &s.rows, obs, res,
                                    err);
    if (rc != 0) {
        run_setup_free(&s);
        run_result_free(res);
        return -1;
    }
    /* Overflow (gamma 1e300, say) must not pass for a measurement: the
     * message names the settings that scale the score. */
    const score_def *bad = score_first_not_finite(cfg, res, eval);
    run_setup_free(&s);
    if (!bad)
        return 0;
    run_result_free(res);
    if (blame)
        blame[0] = bad->scale[0], blame[1] = bad->scale[1];
    return bn_fail(err, "the scores overflowed (%s is not finite): %s "
                        "out of double range",
                   bad->name, bad->overflow);
}

