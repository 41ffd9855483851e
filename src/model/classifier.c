/*
 * The classifier model: the labels as net.h wants them, training, and
 * the scores of score.h, after training and, for curve.tsv, after every
 * epoch as if training had stopped there.
 */
#include "model/classifier.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/compose.h"
#include "model/net.h"
#include "model/keyid.h"
#include "model/optim.h"
#include "model/order.h"
#include "model/score.h"
#include "model/trained.h"

int classifier_uses(const run_config *cfg, int key)
{
    static const int batch_norm_keys[] = {
        KEY_MOMENTUM, KEY_WEIGHTS, KEY_VARIANCE, KEY_ESTIMATOR, KEY_PRECISE,
        KEY_FREEZE_AFTER, KEY_NEW_WEIGHT,
    };
    const clf_settings *s = &cfg->clf;
    const optim_def *o = optim_get(s->optimizer);
    nn_net_spec spec;
    net_spec_of(s, &spec);
    int batch = 0, norms = 0;
    for (size_t i = 0; i < spec.n; i++) {
        batch |= spec.l[i].kind->running;
        norms |= spec.l[i].kind->normalises;
    }
    for (size_t i = 0; i < sizeof batch_norm_keys / sizeof *batch_norm_keys;
         i++)
        if (key == batch_norm_keys[i] && !batch)
            return 0;
    switch (key) {
    case KEY_EPS:
        return norms;
    case KEY_PRECISE:
        return bn_estimator_get(cfg->layer.estimator)->pools;
    case KEY_HIDDEN:
    case KEY_NORM:
    case KEY_DEPTH:
        return s->net.n == 0; /* the default network's shape */
    case KEY_SGD_MOMENTUM:
        return o->momentum;
    case KEY_ADAM_BETA1:
    case KEY_ADAM_BETA2:
    case KEY_ADAM_EPS:
        return o->adam;
    case KEY_STEP_EPOCHS:
    case KEY_STEP_FACTOR:
        return s->schedule == NET_SCHED_STEP;
    default:
        return 1;
    }
}

/* A layer's parameters. */
static size_t layer_params(const nn_spec *s, nn_shape in, nn_shape out)
{
    if (s->kind == &nn_kind_conv)
        return (in.c * 9 + 1) * out.c;
    if (s->kind->weighted)
        return (nn_size(in) + 1) * out.c;
    return 2 * nn_size(in);
}

/* The layers' sizes, in doubles: parameters with their gradients and
 * optimiser states, each layer's output and saved values for a batch,
 * the per-row and per-channel arrays; and the largest row. */
static size_t net_doubles(const nn_net_spec *spec, const nn_shape *sh,
                          size_t b, size_t *largest)
{
    size_t d = 0;
    *largest = nn_size(sh[0]);
    for (size_t i = 0; i < spec->n; i++) {
        size_t in = nn_size(sh[i]), out = nn_size(sh[i + 1]);
        d += 4 * layer_params(&spec->l[i], sh[i], sh[i + 1]) +
             b * (in + out) + 4 * b + 8 * sh[i].c + 2 * in;
        if (in > *largest)
            *largest = in;
    }
    return d;
}

size_t classifier_bytes(const run_config *cfg, size_t n, size_t f, size_t k)
{
    size_t b = cfg->batch_size < 3 ? 3 : cfg->batch_size;
    nn_net_spec spec;
    nn_shape sh[NN_MAX_LAYERS + 1];
    size_t largest;
    bn_error err;
    net_spec_of(&cfg->clf, &spec);
    if (nn_shapes(&spec, f, k, sh, NULL, &err) != 0)
        return 0; /* the check refuses it */
    /* The layers, a batch's rows, logits and labels, the widest layer's
     * input twice over a batch and twice over the rows (the scores'
     * shared rows and the moments), the rows themselves, and the scores'
     * orders and classes. */
    size_t doubles = net_doubles(&spec, sh, b, &largest) + b * f + 3 * b * k +
                     b + 2 * b * largest + 2 * n * largest + n * f;
    return doubles * sizeof(double) + b * sizeof(int) +
           n * (4 * sizeof(int) + 2 * sizeof(size_t));
}

double classifier_row_work(const run_config *cfg, size_t f, size_t k)
{
    /* A row's pass through a weight takes about what the layer's pass
     * over a feature does (both measured: training, the scores after each
     * epoch and the moments together are about eight multiply-adds a
     * weight): the linear and conv layers' multiply-adds count one each,
     * and each value of the other layers an eighth. */
    nn_net_spec spec;
    nn_shape sh[NN_MAX_LAYERS + 1];
    bn_error err;
    net_spec_of(&cfg->clf, &spec);
    if (nn_shapes(&spec, f, k, sh, NULL, &err) != 0)
        return 0.0;
    double w = 0.0;
    for (size_t i = 0; i < spec.n; i++) {
        const nn_kind *kd = spec.l[i].kind;
        if (kd == &nn_kind_conv)
            w += 9.0 * (double)sh[i].c * (double)nn_size(sh[i + 1]);
        else if (kd->weighted)
            w += (double)nn_size(sh[i]) * (double)sh[i + 1].c;
        else
            w += (double)nn_size(sh[i]) / 8.0;
    }
    return w;
}

static int blamed(int *blame, int k0, int k1)
{
    if (blame)
        blame[0] = k0, blame[1] = k1;
    return -1;
}

/* The network of cfg on rows of f features and k classes. */
static int check_net(const run_config *cfg, size_t f, size_t k, int *blame,
                     bn_error *err)
{
    nn_net_spec spec;
    net_spec_of(&cfg->clf, &spec);
    if (nn_shapes(&spec, f, k, NULL, NULL, err) != 0)
        return blamed(blame, cfg->clf.net.n ? KEY_LAYERS : KEY_HIDDEN, -1);
    return 0;
}

/* The optimiser's and the schedule's settings. */
static int check_optimiser(const clf_settings *s, int *blame, bn_error *err)
{
    if (!(isfinite(s->lr) && s->lr >= 0.0))
        return bn_fail(err, "lr must be finite and >= 0, got %g", s->lr),
               blamed(blame, KEY_LR, -1);
    if (!(s->sgd_momentum >= 0.0 && s->sgd_momentum < 1.0))
        return bn_fail(err, "sgd_momentum must be in [0, 1), got %g",
                       s->sgd_momentum),
               blamed(blame, KEY_SGD_MOMENTUM, -1);
    if (s->optimizer == NET_OPT_NESTEROV && !(s->sgd_momentum > 0.0))
        return bn_fail(err, "nesterov needs sgd_momentum above 0 (PyTorch "
                            "refuses Nesterov momentum without momentum)"),
               blamed(blame, KEY_SGD_MOMENTUM, KEY_OPTIMIZER);
    if (!(isfinite(s->weight_decay) && s->weight_decay >= 0.0))
        return bn_fail(err, "weight_decay must be finite and >= 0, got %g",
                       s->weight_decay),
               blamed(blame, KEY_WEIGHT_DECAY, -1);
    if (!(s->beta1 >= 0.0 && s->beta1 < 1.0))
        return bn_fail(err, "adam_beta1 must be in [0, 1), got %g", s->beta1),
               blamed(blame, KEY_ADAM_BETA1, -1);
    if (!(s->beta2 >= 0.0 && s->beta2 < 1.0))
        return bn_fail(err, "adam_beta2 must be in [0, 1), got %g", s->beta2),
               blamed(blame, KEY_ADAM_BETA2, -1);
    if (!(isfinite(s->adam_eps) && s->adam_eps > 0.0))
        return bn_fail(err, "adam_eps must be finite and > 0, got %g",
                       s->adam_eps),
               blamed(blame, KEY_ADAM_EPS, -1);
    if (s->schedule == NET_SCHED_STEP && s->step_epochs < 1)
        return bn_fail(err, "step_epochs must be 1 or more"),
               blamed(blame, KEY_STEP_EPOCHS, -1);
    if (!(isfinite(s->step_factor) && s->step_factor >= 0.0))
        return bn_fail(err, "step_factor must be finite and >= 0, got %g",
                       s->step_factor),
               blamed(blame, KEY_STEP_FACTOR, -1);
    return 0;
}

/* A batch-norm unit's name in a checkpoint ([layer] initial):
 * LAYER.UNIT, the layer's index as the weights file names its buffers
 * (LAYER.running_mean, row UNIT) and PyTorch's state_dict does. */
static void unit_name(char *buf, size_t n, const nn_layer *l, size_t unit)
{
    snprintf(buf, n, "%zu.%zu", l->index, unit);
}

/* Whether every row of the checkpoint names a unit of net's batch norms;
 * the message lists them. */
static int initial_check_units(const bn_initial *ini, const net_t *net,
                               bn_error *err)
{
    char name[48], units[160] = "";
    size_t nb = net_batch_layers(net);
    for (size_t i = 0, at = 0; i < nb && at < sizeof units; i++) {
        const nn_layer *l = &net->l[net_batch_layer(net, i)];
        at += (size_t)snprintf(units + at, sizeof units - at,
                               "%s%zu.0 to %zu.%zu", i ? ", " : "",
                               l->index, l->index, l->in.c - 1);
    }
    for (size_t r = 0; r < ini->n; r++) {
        int found = 0;
        for (size_t i = 0; i < nb && !found; i++) {
            const nn_layer *l = &net->l[net_batch_layer(net, i)];
            for (size_t u = 0; u < l->in.c && !found; u++) {
                unit_name(name, sizeof name, l, u);
                found = strcmp(name, ini->names[r]) == 0;
            }
        }
        if (!found)
            return nb ? bn_fail(err, "%s:%zu: '%s' is not one of the "
                                     "classifier's batch-norm units "
                                     "(LAYER.UNIT: %s)",
                                ini->file, r + 2, ini->names[r], units)
                      : bn_fail(err, "%s: the classifier has no batch norm "
                                     "whose buffers it could load",
                                ini->file);
    }
    return 0;
}

/* The buffers before the first update: the checkpoint's where it names
 * the unit, net_init's 0 and 1 elsewhere. */
static void initial_apply_units(const bn_initial *ini, net_t *net)
{
    char name[48];
    for (size_t i = 0; i < net_batch_layers(net); i++) {
        nn_layer *l = &net->l[net_batch_layer(net, i)];
        for (size_t u = 0; u < l->in.c; u++) {
            unit_name(name, sizeof name, l, u);
            size_t r = bn_initial_find(ini, name);
            if (r < ini->n)
                l->bn.rm[u] = ini->mean[r], l->bn.rv[u] = ini->var[r];
        }
    }
}

/* The checkpoint against the network the run would build. */
static int check_initial(const run_config *cfg, const pop_t *pop, int *blame,
                         bn_error *err)
{
    if (!cfg->initial)
        return 0;
    net_t net;
    if (net_init(&net, cfg, pop->f, pop->label.n_levels, err) != 0)
        return -1;
    int rc = initial_check_units(cfg->initial, &net, err);
    net_free(&net);
    if (rc != 0 && blame)
        blame[0] = KEY_LAYER_INITIAL, blame[1] = -1;
    return rc;
}

int classifier_check(const run_config *cfg, const pop_t *pop, int *blame,
                     bn_error *err)
{
    if (!pop->label.column)
        return bn_fail(err, "the classifier needs class labels: "
                            "[population] classes = K for the generated "
                            "population, or label = COLUMN for a file"),
               blamed(blame, KEY_MODEL, KEY_POP_CLASSES);
    if (pop->label.n_levels < 2)
        return bn_fail(err, "the classifier needs at least two classes; "
                            "column '%s' has %zu",
                       pop->label.column, pop->label.n_levels),
               blamed(blame, KEY_POP_LABEL, KEY_MODEL);
    if (cfg->clf.hidden < 1 || cfg->clf.hidden > CLF_MAX_HIDDEN)
        return bn_fail(err, "hidden must be from 1 to %d, got %zu",
                       CLF_MAX_HIDDEN, cfg->clf.hidden),
               blamed(blame, KEY_HIDDEN, -1);
    if (check_optimiser(&cfg->clf, blame, err) != 0 ||
        check_net(cfg, pop->f, pop->label.n_levels, blame, err) != 0 ||
        check_initial(cfg, pop, blame, err) != 0)
        return -1;
    nn_net_spec spec;
    net_spec_of(&cfg->clf, &spec);
    int norms = 0;
    for (size_t i = 0; i < spec.n; i++)
        norms |= spec.l[i].kind->normalises;
    if (!norms)
        return 0;
    /* Batch norm's settings as the layer checks them (eps is every
     * normalisation's); gamma and beta are learned from 1 and 0. */
    bn_config bn = cfg->layer;
    bn.gamma = 1.0;
    bn.beta = 0.0;
    bn_field field;
    if (bn_check(&bn, &field, err) != 0) {
        static const int key_of[] = {
            [BN_FIELD_MOMENTUM] = KEY_MOMENTUM,
            [BN_FIELD_ESTIMATOR] = KEY_ESTIMATOR,
            [BN_FIELD_GAMMA] = KEY_MODEL,
            [BN_FIELD_BETA] = KEY_MODEL,
            [BN_FIELD_EPS] = KEY_EPS,
        };
        return blamed(blame, key_of[field], KEY_ESTIMATOR);
    }
    return 0;
}

/* What the scores need: the rows as net.h takes them and the orders the
 * training-mode scores cut their batches from; and what the steps
 * measured of the weights before batch norm. */
typedef struct {
    const run_config *cfg;
    net_data train, eval;
    const size_t *train_perm; /* the order trained on */
    size_t *fit_perm, *eval_perm;
    const pop_factor *eval_group; /* the evaluation rows' groups, or NULL */
    const run_observer *obs;
    bn_error *err;
    int failed;
    double radial, radial_excess, w_norm0;
    /* The scores after the last epoch, for an observer of the epochs:
     * the run's own, which are then not made a second time. */
    run_result last;
    int have_last;
    trained_run *rec; /* the epochs kept for other evaluation rows */
} scoring;

static int *labels_of(const pop_t *pop)
{
    int *l = malloc((pop->n ? pop->n : 1) * sizeof *l);
    for (size_t i = 0; l && i < pop->n; i++)
        l[i] = (int)pop->label.of_row[i];
    return l;
}

static int shuffled(const pop_t *pop, uint64_t seed, size_t **perm,
                    bn_error *err)
{
    order_spec ord;
    *perm = malloc((pop->n ? pop->n : 1) * sizeof **perm);
    if (!*perm)
        return bn_fail(err, "out of memory");
    return order_parse("shuffled", pop, &ord, err) != 0 ||
                   order_make(&ord, pop, seed, *perm, err) != 0
               ? -1
               : 0;
}

/* The buffers of every batch-norm layer against the moments of what it
 * sees in evaluation mode over the training rows, under the weights as
 * they now are: all the layers' units together, and the last layer's. */
static int score_stats(net_t *net, const scoring *s, const net_data *train,
                       run_result *res, bn_error *err)
{
    size_t nb = net_batch_layers(net), units = 0;
    for (size_t i = 0; i < nb; i++)
        units += net->l[net_batch_layer(net, i)].in.c;
    double *a = malloc(4 * units * sizeof *a);
    if (!a)
        return bn_fail(err, "out of memory");
    double *mu = a, *v = a + units, *rm = a + 2 * units, *rv = a + 3 * units;
    size_t at = 0, last = 0;
    int rc = 0;
    for (size_t i = 0; i < nb && rc == 0; i++) {
        nn_layer *l = &net->l[net_batch_layer(net, i)];
        size_t c = l->in.c;
        rc = net_layer_moments(net, train, NULL, train->n, l->index,
                               mu + at, v + at, err);
        memcpy(rm + at, l->bn.rm, c * sizeof *rm);
        memcpy(rv + at, l->bn.rv, c * sizeof *rv);
        last = at;
        at += c;
    }
    if (rc == 0) {
        score_buffers_t sb, lb;
        score_buffers_of(units, mu, v, rm, rv, &sb);
        score_buffers_of(units - last, mu + last, v + last, rm + last,
                         rv + last, &lb);
        const bn_layer *first = &net->l[net_batch_layer(net, 0)].bn;
        res->stats_err = sb.stats_err;
        res->stats_err_rel = sb.stats_err_rel;
        res->mean_err_rel = sb.mean_err_rel;
        res->var_err_rel = sb.var_err_rel;
        res->last_stats_err_rel = lb.stats_err_rel;
        res->updates = first->updates;
        const bn_estimator_def *est =
            bn_estimator_get(s->cfg->layer.estimator);
        res->init_weight =
            est->init_weight
                ? est->init_weight(s->cfg->layer.keep, first->updates)
                : 0.0;
    }
    free(a);
    return rc;
}

/* The Euclidean norm of the weights right before a batch norm. */
static double weights_norm(const net_t *net)
{
    double s = 0.0;
    for (size_t i = 0; i < net->nl; i++) {
        if (!net_spec_scale_invariant(&net->spec, i))
            continue;
        const nn_tensor *w = &net->l[net_weighted_before(&net->spec, i)].t[0];
        for (size_t e = 0; e < w->rows * w->cols; e++)
            s += w->p[e] * w->p[e];
    }
    return sqrt(s);
}

/* The scores of the evaluation rows into res: each mode's accuracy and
 * loss, the share of rows both modes predict alike, the largest
 * difference the modes make to a logit. */
static int score_eval(net_t *net, const scoring *s, run_result *res,
                      bn_error *err)
{
    net_score tr, ev;
    size_t n = s->eval.n, k = net->k, same = 0;
    net_data d = s->eval;
    int *pred = malloc(2 * n * sizeof *pred);
    double *z = malloc(2 * n * k * sizeof *z);
    if (!pred || !z) {
        free(pred);
        free(z);
        return bn_fail(err, "out of memory");
    }
    int rc = net_share_rows(net, &d, err) != 0 ||
                     net_score_train_mode(net, &d, s->eval_perm, &tr, pred, z,
                                          err) != 0 ||
                     net_score_eval_mode(net, &d, &ev, pred + n, z + n * k,
                                         err) != 0
                 ? -1
                 : 0;
    free(d.shared);
    /* The largest difference the two modes make to a logit: 0 exactly
     * where nothing in the network depends on the batch. */
    double gap = 0.0;
    for (size_t i = 0; i < n; i++) {
        same += pred[i] == pred[n + i];
        for (size_t c = 0; c < k; c++) {
            double d = fabs(z[i * k + c] - z[(n + i) * k + c]);
            gap = d > gap || d != d ? d : gap;
        }
    }
    free(pred);
    free(z);
    if (rc != 0)
        return -1;
    res->logit_gap = gap;
    res->agreement = (double)same / (double)n;
    res->acc_train_mode = tr.accuracy;
    res->acc_eval_mode = ev.accuracy;
    res->loss_train_mode = tr.loss;
    res->loss_eval_mode = ev.loss;
    return 0;
}

/* Every classifier score of net into res (which holds no buffers): the
 * evaluation rows', then those that read only the training rows and the
 * weights. */
static int score(net_t *net, const scoring *s, run_result *res,
                 bn_error *err)
{
    net_score ftr, fev;
    net_data d = s->train;
    if (score_eval(net, s, res, err) != 0 ||
        net_share_rows(net, &d, err) != 0)
        return -1;
    int rc = net_score_train_mode(net, &d, s->fit_perm, &ftr, NULL, NULL,
                                  err) != 0 ||
                     net_score_eval_mode(net, &d, &fev, NULL, NULL, err) != 0 ||
                     (net_batch_layers(net) > 0 &&
                      score_stats(net, s, &d, res, err) != 0)
                 ? -1
                 : 0;
    free(d.shared);
    if (rc != 0)
        return -1;
    res->fit_acc_train_mode = ftr.accuracy;
    res->fit_acc_eval_mode = fev.accuracy;
    res->fit_loss_train_mode = ftr.loss;
    res->fit_loss_eval_mode = fev.loss;
    res->radial = s->radial;
    res->radial_excess = s->radial_excess;
    res->w_norm = weights_norm(net);
    res->w_norm_ratio = s->w_norm0 > 0.0 ? res->w_norm / s->w_norm0 : 0.0;
    return 0;
}

/* Adaptive batch norm: each layer's buffers become the moments of what it
 * sees over the evaluation rows, under the weights as they are, layer by
 * layer. */
static int adapt(net_t *net, const scoring *s, bn_error *err)
{
    if (!bn_estimator_get(s->cfg->layer.estimator)->adapts)
        return 0;
    for (size_t i = 0; i < net_batch_layers(net); i++) {
        nn_layer *l = &net->l[net_batch_layer(net, i)];
        if (net_layer_moments(net, &s->eval, NULL, s->eval.n, l->index,
                              l->bn.rm, l->bn.rv, err) != 0)
            return -1;
        for (size_t j = 0; net->f32 && j < l->in.c; j++) {
            l->bn.rm[j] = nn_r32(l->bn.rm[j]);
            l->bn.rv[j] = nn_r32(l->bn.rv[j]);
        }
    }
    return 0;
}

/* Unit j's weights (row j of a linear weight, filter j of a conv's) and
 * their gradient: w.g against its exact value gamma dgamma eps / (v +
 * eps), relative to |w| |g| (docs/definitions.md, "The radial part"). */
static void radial_of(const nn_layer *w, const nn_layer *bn, double *worst,
                      double *worst_excess)
{
    const nn_tensor *t = &w->t[0];
    for (size_t j = 0; j < t->rows; j++) {
        double dot = 0.0, ww = 0.0, gg = 0.0;
        for (size_t c = 0; c < t->cols; c++) {
            double p = t->p[j * t->cols + c], g = t->g[j * t->cols + c];
            dot += p * g;
            ww += p * p;
            gg += g * g;
        }
        double scale = sqrt(ww) * sqrt(gg);
        if (!(scale > 0.0))
            continue;
        double v = bn->var[j], eps = bn->bn.eps;
        double exact = bn->bn.gamma[j] * bn->t[0].g[j] * (eps / (v + eps));
        double r = fabs(dot) / scale, x = fabs(dot - exact) / scale;
        if (r > *worst)
            *worst = r;
        if (x > *worst_excess)
            *worst_excess = x;
    }
}

static void on_step(void *ctx, const net_step *st)
{
    scoring *s = ctx;
    if (st->epoch == 0 && st->index == 0 && s->obs->weights)
        net_write_grads(s->obs->weights, "grad", (net_t *)st->net);
    const net_t *net = st->net;
    /* Batch statistics only: a frozen layer is not scale invariant. */
    for (size_t i = 0; i < net->nl; i++)
        if (net_spec_scale_invariant(&net->spec, i) &&
            net->l[i].mode != NN_BN_RUNNING)
            radial_of(&net->l[net_weighted_before(&net->spec, i)],
                      &net->l[i], &s->radial, &s->radial_excess);
}

/* Every batch-norm layer's buffers into (or, back, from) keep. */
static void buffers_copy(net_t *net, double *keep, int back)
{
    for (size_t i = 0, at = 0; i < net_batch_layers(net); i++) {
        bn_layer *b = &net->l[net_batch_layer(net, i)].bn;
        double *arrays[2] = {b->rm, b->rv};
        for (int a = 0; a < 2; a++, at += b->f)
            if (back)
                memcpy(arrays[a], keep + at, b->f * sizeof *keep);
            else
                memcpy(keep + at, arrays[a], b->f * sizeof *keep);
    }
}

/* The scores the run would have if it stopped after this epoch: the
 * estimator's recompute on the buffers, which are then put back. */
static void on_epoch(void *ctx, unsigned long epoch, net_t *net)
{
    scoring *s = ctx;
    if (s->failed || !s->obs->on_epoch)
        return;
    size_t units = 0;
    for (size_t i = 0; i < net_batch_layers(net); i++)
        units += net->l[net_batch_layer(net, i)].in.c;
    double *keep = malloc((2 * units + 1) * sizeof *keep);
    run_result r;
    memset(&r, 0, sizeof r);
    if (!keep) {
        s->failed = bn_fail(s->err, "out of memory");
        return;
    }
    buffers_copy(net, keep, 0);
    if (net_finish(net, s->cfg, &s->train, s->train_perm, s->err) != 0 ||
        adapt(net, s, s->err) != 0 || score(net, s, &r, s->err) != 0)
        s->failed = -1;
    else
        trained_epoch(s->rec, epoch, net, &r);
    buffers_copy(net, keep, 1);
    free(keep);
    if (s->failed)
        return;
    s->obs->on_epoch(s->obs->ctx, epoch, &r);
    /* After the last epoch training ends, and net_train's own net_finish
     * and the run's adapt leave the net as this did: these are the run's
     * scores (score fills a zeroed result, as the run's is). */
    if (epoch + 1 == s->cfg->epochs)
        s->last = r, s->have_last = 1;
}

/* Batch dependence (compose.h): each evaluation row's logits in every
 * batch the plan forms, in training mode and in evaluation mode on the
 * same batch, and whether its train-mode class moved. */
typedef struct {
    net_t *net;
    const net_data *d;
    compose_spread spread;
    double *x, *z;
    int *lab, *cls, *moved;
} clf_dep;

static int clf_dep_batch(void *ctx, size_t b, const size_t *rows,
                         bn_error *err)
{
    (void)err;
    clf_dep *c = ctx;
    const net_data *d = c->d;
    size_t f = d->f, k = d->k;
    for (size_t i = 0; i < b; i++) {
        memcpy(&c->x[i * f], &d->x[rows[i] * f], f * sizeof *c->x);
        c->lab[i] = d->label[rows[i]];
    }
    net_forward(c->net, b, c->x, c->lab, NN_BN_BATCH_KEEP, 0);
    memcpy(c->z, net_logits(c->net), b * k * sizeof *c->z);
    net_forward(c->net, b, c->x, c->lab, NN_BN_RUNNING, 0);
    const double *ze = net_logits(c->net);
    for (size_t i = 0; i < b; i++) {
        const double *zi = &c->z[i * k];
        int best = 0; /* the first on a tie, as tally's */
        for (size_t j = 1; j < k; j++)
            best = zi[j] > zi[best] ? (int)j : best;
        size_t r = rows[i];
        if (c->spread.seen[r] > 0 && c->cls[r] != best)
            c->moved[r] = 1;
        c->cls[r] = best;
        compose_spread_add(&c->spread, r, zi, &ze[i * k]);
    }
    return 0;
}

/* Training-mode accuracy in batches cut from the evaluation rows in the
 * shuffled order, stably sorted by a level of each row (its class, its
 * group): batches of one level but where two levels meet. level(ctx, r)
 * is row r's, below levels. */
typedef size_t (*row_level)(const void *ctx, size_t r);

static size_t class_of(const void *ctx, size_t r)
{
    return (size_t)((const net_data *)ctx)->label[r];
}

static size_t group_of(const void *ctx, size_t r)
{
    return ((const pop_factor *)ctx)->of_row[r];
}

static int sorted_accuracy(net_t *net, const scoring *s, row_level level,
                           const void *ctx, size_t levels, double *acc,
                           bn_error *err)
{
    const net_data *d = &s->eval;
    size_t *sorted = malloc((d->n ? d->n : 1) * sizeof *sorted), at = 0;
    if (!sorted)
        return bn_fail(err, "out of memory");
    for (size_t c = 0; c < levels; c++)
        for (size_t i = 0; i < d->n; i++)
            if (level(ctx, s->eval_perm[i]) == c)
                sorted[at++] = s->eval_perm[i];
    net_score sc;
    int rc = net_score_train_mode(net, d, sorted, &sc, NULL, NULL, err);
    free(sorted);
    *acc = sc.accuracy;
    return rc;
}

/* The same by class, and by group where the evaluation rows have one. */
static int one_level_accuracy(net_t *net, const scoring *s, run_result *res,
                              bn_error *err)
{
    if (sorted_accuracy(net, s, class_of, &s->eval, s->eval.k,
                        &res->acc_train_by_class, err) != 0)
        return -1;
    const pop_factor *g = s->eval_group;
    if (!g)
        return 0;
    return sorted_accuracy(net, s, group_of, g, g->n_levels,
                           &res->acc_train_by_group, err);
}

static int clf_dependence(net_t *net, const scoring *s, run_result *res,
                          bn_error *err)
{
    const net_data *d = &s->eval;
    size_t n = d->n, b = s->cfg->batch_size, m = s->cfg->compositions;
    int enumerated;
    res->dep_batches = compose_batches(n, b, m, &enumerated);
    if (m == 0)
        return 0;
    if (one_level_accuracy(net, s, res, err) != 0)
        return -1;
    if (res->dep_batches == 0)
        return 0;
    clf_dep c = {.net = net, .d = d};
    c.x = malloc(b * (d->f + d->k) * sizeof *c.x);
    c.lab = malloc((b + 2 * n) * sizeof *c.lab);
    if (!c.x || !c.lab || compose_spread_init(&c.spread, n, d->k) != 0) {
        free(c.x);
        free(c.lab);
        return bn_fail(err, "out of memory");
    }
    c.z = c.x + b * d->f, c.cls = c.lab + b, c.moved = c.cls + n;
    memset(c.moved, 0, n * sizeof *c.moved);
    int rc = compose_each(n, b, m, s->cfg->seed, clf_dep_batch, &c, err);
    if (rc == 0) {
        size_t flips = 0;
        for (size_t i = 0; i < n; i++)
            flips += c.moved[i] != 0;
        res->class_flips = (double)flips / (double)n;
        compose_spread_scores(&c.spread, &res->batch_dependence,
                              &res->batch_dependence_mean,
                              &res->batch_dependence_eval);
    }
    compose_spread_free(&c.spread);
    free(c.x);
    free(c.lab);
    return rc;
}

/* A kept training's epochs scored on this run's evaluation rows, as
 * on_epoch would score them had it trained: the scores that read only the
 * training rows and the weights are the kept ones. net is left as the
 * last epoch left it. */
static int replay(net_t *net, scoring *s, const trained_run *t,
                  run_result *res, bn_error *err)
{
    for (size_t i = 0; i < trained_epochs(t); i++) {
        run_result r;
        unsigned long epoch = trained_epoch_at(t, i, &r, net);
        if (score_eval(net, s, &r, err) != 0)
            return -1;
        s->obs->on_epoch(s->obs->ctx, epoch, &r);
        if (epoch + 1 == s->cfg->epochs)
            s->last = r, s->have_last = 1;
    }
    if (!s->have_last)
        return bn_fail(err, "a kept training has no last epoch");
    *res = s->last;
    return 0;
}

/* Whether this run's training may be kept for, or taken from, others
 * that differ only in their evaluation rows: its scores after every
 * epoch are wanted, no tensors are written, and the buffers are not the
 * evaluation rows' own (adaptive). */
static int keepable(const scoring *s)
{
    return s->obs->trained && s->obs->on_epoch && !s->obs->weights &&
           !bn_estimator_get(s->cfg->layer.estimator)->adapts;
}

int classifier_train(const pop_t *train, const pop_t *eval,
                     const size_t *perm, const run_config *cfg,
                     const run_observer *obs, net_t *net, run_result *res,
                     bn_error *err)
{
    static const run_observer none = {NULL, NULL, NULL, NULL, NULL, NULL};
    size_t f = train->f, k = train->label.n_levels;
    int *ltrain = labels_of(train), *leval = labels_of(eval);
    scoring s = {.cfg = cfg,
                 .train = {train->n, f, k, train->x, ltrain, NULL},
                 .eval = {eval->n, f, k, eval->x, leval, NULL},
                 .train_perm = perm,
                 .eval_group = eval->group.of_row ? &eval->group : NULL,
                 .obs = obs ? obs : &none,
                 .err = err};
    memset(net, 0, sizeof *net);
    memset(res, 0, sizeof *res); /* the scores fill it from zero, whichever
                                  * of the two ways they are made */
    int rc = -1;
    if (!ltrain || !leval) {
        bn_fail(err, "out of memory");
        goto done;
    }
    if (shuffled(train, cfg->seed, &s.fit_perm, err) != 0 ||
        shuffled(eval, cfg->seed, &s.eval_perm, err) != 0 ||
        net_init(net, cfg, f, k, err) != 0)
        goto done;
    if (cfg->initial)
        initial_apply_units(cfg->initial, net);
    const trained_run *kept =
        keepable(&s) ? trained_find(s.obs->trained, cfg, train) : NULL;
    if (kept) {
        if (replay(net, &s, kept, res, err) != 0)
            goto done;
    } else {
        if (keepable(&s))
            s.rec = trained_begin(s.obs->trained, cfg, train, net);
        s.w_norm0 = weights_norm(net);
        if (s.obs->weights)
            net_write_weights(s.obs->weights, "initial", net);
        net_observer co = {on_step, on_epoch, &s};
        int trained_ok = net_train(net, cfg, &s.train, perm, &co, err) == 0 &&
                         !s.failed && adapt(net, &s, err) == 0;
        trained_end(s.obs->trained, s.rec, trained_ok && s.have_last);
        if (!trained_ok)
            goto done;
        if (s.have_last)
            *res = s.last;
        else if (score(net, &s, res, err) != 0)
            goto done;
    }
    if (clf_dependence(net, &s, res, err) != 0)
        goto done;
    if (s.obs->weights)
        net_write_weights(s.obs->weights, "final", net);
    rc = 0;
done:
    if (rc != 0)
        net_free(net);
    free(ltrain);
    free(leval);
    free(s.fit_perm);
    free(s.eval_perm);
    return rc;
}

int classifier_run(const pop_t *train, const pop_t *eval, const size_t *perm,
                   const run_config *cfg, const run_observer *obs,
                   run_result *res, bn_error *err)
{
    net_t net;
    int rc = classifier_train(train, eval, perm, cfg, obs, &net, res, err);
    if (rc == 0)
        net_free(&net);
    return rc;
}
