/*
 * A run as a pipeline: check the configuration, take the rows it trains
 * and is evaluated on (the population stage: the classifier's evaluation
 * rows shifted as [evaluation] says), make the order's permutation, hand
 * it to the model, and refuse scores that overflowed. The models are the
 * rows of the table below; layer.c is the batch-norm layer's,
 * classifier.c the classifier's.
 */
#include "run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classifier.h"
#include "evalpop.h"
#include "exp.h"
#include "layer.h"
#include "score.h"

static const run_model models[RUN_MODEL_COUNT] = {
    [RUN_MODEL_LAYER] = {"layer",
                         "one batch-norm layer and its running statistics",
                         layer_run, layer_check, 0,
                         "order batch_size updates stats_err "
                         "train_eval_rmse batch_mean_err init_weight",
                         NULL, layer_bytes, layer_row_work},
    [RUN_MODEL_CLASSIFIER] = {"classifier",
                              "Linear, batch norm, ReLU, Linear, trained by "
                              "SGD and scored in both modes",
                              classifier_run, classifier_check, 1,
                              "order batch_size epochs acc_train_mode "
                              "acc_eval_mode stats_err_rel",
                              classifier_uses, classifier_bytes,
                              classifier_row_work},
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

const char *run_partial_name(int p)
{
    static const char *const names[] = {"drop", "keep"};
    return p >= 0 && p < 2 ? names[p] : NULL;
}

int run_partial_parse(const char *s, run_partial *p)
{
    for (int i = 0; run_partial_name(i); i++)
        if (strcmp(s, run_partial_name(i)) == 0) {
            *p = (run_partial)i;
            return 0;
        }
    return -1;
}

size_t run_batches_per_epoch(size_t n, size_t b, run_partial partial)
{
    return n / b + (partial == RUN_PARTIAL_KEEP && n % b != 0);
}

static int blamed(int *blame, int k0, int k1)
{
    if (blame) {
        blame[0] = k0;
        blame[1] = k1;
    }
    return -1;
}

int run_check(const run_config *cfg, const pop_t *pop, int *blame,
              bn_error *err)
{
    if (cfg->batch_size < 2 || cfg->batch_size > pop->n)
        return bn_fail(err,
                       "batch size must be from 2 to the population's %zu "
                       "rows, got %zu",
                       pop->n, cfg->batch_size),
               blamed(blame, KEY_BATCH_SIZE, KEY_ROWS);
    if (cfg->partial == RUN_PARTIAL_KEEP && pop->n % cfg->batch_size == 1)
        return bn_fail(err,
                       "partial keep with batch size %zu leaves a last "
                       "batch of one row, whose variance is undefined",
                       cfg->batch_size),
               blamed(blame, KEY_PARTIAL, KEY_BATCH_SIZE);
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
    size_t nb = run_batches_per_epoch(pop->n, cfg->batch_size, cfg->partial);
    if (cfg->precise_batches > nb)
        return bn_fail(err,
                       "precise batches %zu is more than the %zu batches "
                       "of an epoch",
                       cfg->precise_batches, nb),
               blamed(blame, KEY_PRECISE, KEY_BATCH_SIZE);
    if ((unsigned)cfg->model >= RUN_MODEL_COUNT)
        return bn_fail(err, "no model numbered %d", (int)cfg->model),
               blamed(blame, -1, -1);
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
    run_pops p = {pop, pop, NULL};
    return run_execute_blamed(&p, cfg, obs, res, NULL, err);
}

int run_execute_on(const run_pops *p, const run_config *cfg,
                   const run_observer *obs, run_result *res, bn_error *err)
{
    return run_execute_blamed(p, cfg, obs, res, NULL, err);
}

int run_execute_blamed(const run_pops *p, const run_config *cfg,
                       const run_observer *obs, run_result *res, int *blame,
                       bn_error *err)
{
    memset(res, 0, sizeof *res);
    if ((unsigned)cfg->model >= RUN_MODEL_COUNT)
        return bn_fail(err, "no model numbered %d", (int)cfg->model);
    const pop_t *pop = run_train_pop(p, cfg), *eval = p->pop;
    if (run_check(cfg, pop, blame, err) != 0)
        return -1;
    pop_t shifted;
    memset(&shifted, 0, sizeof shifted);
    if (models[cfg->model].held_out) {
        if (!p->held_out)
            return bn_fail(err, "the %s needs held-out rows to be evaluated "
                                "on, and the population has none",
                           models[cfg->model].name);
        eval = p->held_out;
        if (cfg->eval.shift != 0.0 || cfg->eval.scale != 1.0) {
            if (evalpop_shift(eval, cfg->eval.shift, cfg->eval.scale,
                              &shifted, err) != 0)
                return -1;
            eval = &shifted;
        }
    }
    order_spec ord = cfg->order;
    ord.batch_size = cfg->batch_size;
    size_t *perm = malloc(pop->n * sizeof *perm);
    int rc = perm ? order_make(&ord, pop, cfg->seed, perm, err)
                  : bn_fail(err, "out of memory");
    if (rc == 0)
        rc = models[cfg->model].run(pop, eval, perm, cfg, obs, res, err);
    free(perm);
    pop_free(&shifted);
    if (rc != 0) {
        run_result_free(res);
        return -1;
    }
    /* Overflow (gamma 1e300, say) must not pass for a measurement: the
     * message names the settings that scale the score. */
    const score_def *bad = score_first_not_finite(cfg, res, pop);
    if (!bad)
        return 0;
    run_result_free(res);
    if (blame)
        blame[0] = bad->scale[0], blame[1] = bad->scale[1];
    return bn_fail(err, "the scores overflowed (%s is not finite): %s "
                        "out of double range",
                   bad->name, bad->overflow);
}

void run_result_free(run_result *res)
{
    free(res->running_mean);
    res->running_mean = res->running_var = NULL;
}
