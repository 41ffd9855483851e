/*
 * The classifier's diagnosis (see clf_diag.h): fc1's outputs over the
 * training and the held-out rows, their statistics, and the fixes scored
 * on the trained network.
 */
#include "model/clf_diag.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/carve.h"
#include "model/classifier.h"
#include "model/net.h"
#include "model/order.h"
#include "pop/pop.h"

void clf_evidence_free(clf_evidence *ev)
{
    free(ev->block);
    free(ev->bunits);
    memset(ev, 0, sizeof *ev);
}

/* The layer diagnosed: the network's first batch norm. */
static nn_layer *diagnosed(net_t *net)
{
    return &net->l[net_batch_layer(net, 0)];
}

/* The rows of d in the order rows (NULL: as they are), as the diagnosed
 * layer sees them: n x h into out. */
static void hidden_rows(net_t *net, const net_data *d, const size_t *rows,
                        double *out)
{
    net_layer_inputs(net, d, rows, d->n, diagnosed(net)->index, out);
}

/* Consecutive batches of b rows of x (n x h): their means and the mean
 * of their variances (unbiased when the layer's is), which a cumulative
 * average over them settles on. */
static void batch_stats(const double *x, size_t n, size_t h, size_t b,
                        int unbiased, double *bm, double *mean, double *var)
{
    size_t nb = (n + b - 1) / b;
    for (size_t j = 0; j < h; j++)
        mean[j] = var[j] = 0.0;
    for (size_t k = 0; k < nb; k++) {
        size_t rows = n - k * b < b ? n - k * b : b;
        for (size_t j = 0; j < h; j++) {
            double m, v;
            pop_moments(rows, h, x + k * b * h + j, &m, &v);
            if (unbiased && rows > 1)
                v *= (double)rows / (double)(rows - 1);
            if (bm)
                bm[k * h + j] = m;
            mean[j] += m / (double)nb;
            var[j] += v / (double)nb;
        }
    }
}

static int shuffled(const pop_t *pop, uint64_t seed, size_t *perm,
                    bn_error *err)
{
    order_spec ord;
    return order_parse("shuffled", pop, &ord, err) != 0 ||
                   order_make(&ord, pop, seed, perm, err) != 0
               ? -1
               : 0;
}

/* The share of held-out rows whose training-mode prediction changes
 * between two shuffled orders of them. */
static int batch_dependence(net_t *net, const pop_t *eval,
                            const net_data *d, uint64_t seed, double *out,
                            bn_error *err)
{
    size_t m = d->n;
    size_t *perm = malloc(m * sizeof *perm);
    int *pred = malloc(2 * m * sizeof *pred);
    net_score s;
    int rc = -1;
    if (!perm || !pred) {
        bn_fail(err, "out of memory");
    } else if (shuffled(eval, seed, perm, err) == 0 &&
               net_score_train_mode(net, d, perm, &s, pred, NULL, err) == 0 &&
               shuffled(eval, seed + 1, perm, err) == 0 &&
               net_score_train_mode(net, d, perm, &s, pred + m, NULL, err) == 0) {
        size_t moved = 0;
        for (size_t i = 0; i < m; i++)
            moved += pred[i] != pred[m + i];
        *out = (double)moved / (double)m;
        rc = 0;
    }
    free(perm);
    free(pred);
    return rc;
}

/* The evaluation-mode accuracy with the buffers (or eps) set as a fix
 * sets them, then put back. */
static int fixed_accuracy(net_t *net, const net_data *d, const double *rm,
                          const double *rv, double eps, double *acc,
                          bn_error *err)
{
    bn_layer *bn = &diagnosed(net)->bn;
    size_t h = bn->f;
    double *keep = malloc(2 * h * sizeof *keep), keep_eps = bn->eps;
    if (!keep)
        return bn_fail(err, "out of memory");
    memcpy(keep, bn->rm, h * sizeof *keep);
    memcpy(keep + h, bn->rv, h * sizeof *keep);
    memcpy(bn->rm, rm, h * sizeof *rm);
    memcpy(bn->rv, rv, h * sizeof *rv);
    bn->eps = eps;
    net_score s;
    int rc = net_score_eval_mode(net, d, &s, NULL, NULL, err);
    *acc = s.accuracy;
    memcpy(bn->rm, keep, h * sizeof *keep);
    memcpy(bn->rv, keep + h, h * sizeof *keep);
    bn->eps = keep_eps;
    free(keep);
    return rc;
}

static int alloc_evidence(clf_evidence *ev, size_t h, size_t n, size_t m,
                          size_t nb)
{
    (void)n, (void)m;
    double **arrays[] = {&ev->rm,  &ev->rv,     &ev->tm,     &ev->tv,
                         &ev->bv,  &ev->kurt,   &ev->em,     &ev->ev,
                         &ev->eshift, &ev->escale, &ev->eks, &ev->eout,
                         &ev->tout, &ev->bm};
    enum { A = sizeof arrays / sizeof *arrays };
    size_t counts[A];
    for (size_t i = 0; i < A; i++)
        counts[i] = h;
    counts[A - 1] = nb * h; /* bm: each batch's h means */
    ev->block = bn_carve_doubles(A, arrays, counts);
    ev->bunits = malloc(nb * sizeof *ev->bunits);
    if (!ev->block || !ev->bunits)
        return -1;
    return 0;
}

/* fc1's outputs and everything measured of them, the net as trained. */
static int gather(net_t *net, const net_data *tr, const net_data *te,
                  const size_t *perm, const run_config *cfg,
                  clf_evidence *ev, double *xt, double *xe, bn_error *err)
{
    size_t h = ev->h, n = ev->n, m = ev->m, b = ev->batch;
    int unbiased = cfg->layer.variance == BN_VAR_UNBIASED;
    hidden_rows(net, tr, perm, xt);
    hidden_rows(net, te, NULL, xe);
    for (size_t k = 0; k < ev->nb; k++)
        ev->bunits[k] = n - k * b < b ? n - k * b : b;
    for (size_t j = 0; j < h; j++) {
        pop_moments(n, h, xt + j, &ev->tm[j], &ev->tv[j]);
        pop_moments(m, h, xe + j, &ev->em[j], &ev->ev[j]);
    }
    double *mean = ev->eshift; /* scratch until diag_compare fills it */
    batch_stats(xt, n, h, b, unbiased, ev->bm, mean, ev->bv);
    diag_kurtosis(xt, n, h, ev->kurt);
    double *scratch = malloc((n + m > 2 * h ? n + m : 2 * h) *
                             sizeof *scratch);
    if (!scratch)
        return bn_fail(err, "out of memory");
    /* The fixes: PreciseBN's cumulative average over the training
     * batches and over the held-out rows in batches alike, eps raised. */
    double *fm = scratch, *fv = scratch + h;
    const bn_layer *bn = &diagnosed(net)->bn;
    double eps_fix = fmax(bn->eps, 1e-3);
    double *acc = ev->model.fix_acc;
    int rc = fixed_accuracy(net, te, mean, ev->bv, bn->eps,
                            &acc[DIAG_FIX_RECOMPUTE_TRAIN], err);
    if (rc == 0) {
        batch_stats(xe, m, h, b, unbiased, NULL, fm, fv);
        rc = fixed_accuracy(net, te, fm, fv, bn->eps,
                            &acc[DIAG_FIX_ADAPT_EVAL], err);
    }
    if (rc == 0)
        rc = fixed_accuracy(net, te, ev->rm, ev->rv, eps_fix,
                            &acc[DIAG_FIX_EPS], err);
    diag_rows rows = {.train = xt, .eval = xe, .n_train = n, .n_eval = m,
                      .f = h, .rm = ev->rm, .rv = ev->rv, .eps = ev->eps,
                      .rows_each = b, .train_mean = ev->tm,
                      .train_var = ev->tv, .eval_mean = ev->em,
                      .eval_var = ev->ev};
    if (rc == 0)
        diag_compare(&rows, scratch, ev->eshift, ev->escale, ev->eks,
                     ev->eout, ev->tout);
    free(scratch);
    return rc;
}

int clf_diag(const pop_t *train, const pop_t *eval, const size_t *perm,
             const run_config *cfg, clf_evidence *ev, bn_error *err)
{
    memset(ev, 0, sizeof *ev);
    if (!net_has_batch(&cfg->clf))
        return bn_fail(err, "the classifier has no batch norm (norm = "
                            "none, or no batch layer): nothing to diagnose");
    net_t net;
    run_result res;
    memset(&res, 0, sizeof res);
    if (classifier_train(train, eval, perm, cfg, NULL, &net, &res, err))
        return -1;
    const nn_layer *dl = diagnosed(&net);
    if (nn_positions(dl->in) != 1) {
        run_result_free(&res);
        net_free(&net);
        return bn_fail(err, "the classifier's first batch norm is over "
                            "feature maps; diagnose --type classifier "
                            "diagnoses one over a row's units");
    }
    size_t hh = dl->in.c;
    size_t b = cfg->batch_size;
    size_t nb = run_batches_per_epoch(train->n, b, cfg->partial);
    ev->h = hh, ev->m = eval->n, ev->nb = nb, ev->batch = b;
    ev->n = nb * b < train->n ? nb * b : train->n; /* the rows trained */
    double *xt = malloc(train->n * hh * sizeof *xt);
    double *xe = malloc(eval->n * hh * sizeof *xe);
    int rc = -1;
    int *lt = malloc(train->n * sizeof *lt), *le = malloc(eval->n * sizeof *le);
    if (!xt || !xe || !lt || !le || alloc_evidence(ev, hh, ev->n, ev->m,
                                                   nb) != 0) {
        bn_fail(err, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < train->n; i++)
        lt[i] = (int)train->label.of_row[i];
    for (size_t i = 0; i < eval->n; i++)
        le[i] = (int)eval->label.of_row[i];
    net_data tr = {ev->n, train->f, net.k, train->x, lt, NULL};
    net_data te = {eval->n, eval->f, net.k, eval->x, le, NULL};
    memcpy(ev->rm, dl->bn.rm, hh * sizeof *ev->rm);
    memcpy(ev->rv, dl->bn.rv, hh * sizeof *ev->rv);
    ev->eps = dl->bn.eps;
    ev->tracked = dl->bn.updates;
    ev->steps = cfg->epochs * nb;
    ev->cumulative = cfg->layer.estimator != BN_EST_EMA;
    ev->p = ev->cumulative ? 1.0 : cfg->layer.p;
    ev->model.train_acc = res.acc_train_mode;
    ev->model.eval_acc = res.acc_eval_mode;
    ev->model.majority = NAN; /* not measured here */
    ev->model.devices = 0;    /* refused before: cmd_diagnose.c */
    ev->model.sync_acc = NAN;
    ev->model.label_exchange = NAN; /* not measured: the order is the */
    ev->model.order_made = 1;       /* run's own, and so its grouping */
    for (int f = 0; f < DIAG_N_FIXES; f++)
        ev->model.fix_acc[f] = NAN;
    tr.n = train->n; /* hidden_rows goes through every row of perm */
    if (gather(&net, &tr, &te, perm, cfg, ev, xt, xe, err) == 0 &&
        batch_dependence(&net, eval, &te, cfg->seed,
                         &ev->model.batch_dependence, err) == 0)
        rc = 0;
done:
    run_result_free(&res);
    net_free(&net);
    free(xt);
    free(xe);
    free(lt);
    free(le);
    return rc;
}

void clf_evidence_layer(const clf_evidence *ev, diag_layer *in)
{
    *in = (diag_layer){
        .f = ev->h,
        .running_mean = ev->rm,
        .running_var = ev->rv,
        .train_mean = ev->tm,
        .train_var = ev->tv,
        .target_var = ev->bv,
        .batch_means = ev->bm,
        .batch_units = ev->bunits,
        .n_batches = ev->nb,
        .units = ev->n,
        .updates = ev->tracked,
        .tracked = ev->tracked,
        .steps = ev->steps,
        .fresh_fixed = 1,
        .order_made = 1, /* a run's order: the population does not move */
        .label_exchange = NAN,
        .p = ev->p,
        .cumulative = ev->cumulative,
        .eps = ev->eps,
        .batch_samples = ev->batch,
        .train_samples = ev->n,
        .eval_samples = ev->m,
        .batch_rows_each = ev->batch,
        .kurtosis = ev->kurt,
        .eval_shift = ev->eshift,
        .eval_scale = ev->escale,
        .eval_ks = ev->eks,
        .eval_out = ev->eout,
        .train_out = ev->tout,
    };
}
