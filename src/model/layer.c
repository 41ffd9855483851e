/*
 * Training one batch-norm layer and scoring it. The last epoch's batch
 * statistics are kept so that, once the final buffers exist, each row's
 * train-mode output can be made again and set against its eval-mode
 * output, a batch at a time (or, when the layer is evaluated on rows of
 * its own, theirs).
 */
#include "model/layer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/carve.h"
#include "base/pair.h"
#include "model/batchpass.h"
#include "model/compose.h"
#include "model/keyid.h"
#include "base/num.h"
#include "model/order.h"
#include "model/score.h"
#include "model/seqlayer.h"

int layer_check(const run_config *cfg, const pop_t *pop, int *blame,
                bn_error *err)
{
    bn_field field;
    if (bn_check(&cfg->layer, &field, err) != 0) {
        static const int key_of[] = {
            [BN_FIELD_MOMENTUM] = KEY_MOMENTUM,
            [BN_FIELD_ESTIMATOR] = KEY_ESTIMATOR,
            [BN_FIELD_GAMMA] = KEY_GAMMA,
            [BN_FIELD_BETA] = KEY_BETA,
            [BN_FIELD_EPS] = KEY_EPS,
        };
        if (blame)
            blame[0] = key_of[field], blame[1] = KEY_ESTIMATOR;
        return -1;
    }
    if (cfg->initial && bn_initial_check(cfg->initial, pop, err) != 0) {
        if (blame)
            blame[0] = KEY_LAYER_INITIAL, blame[1] = -1;
        return -1;
    }
    return seq_check(cfg, pop, blame, err);
}

size_t layer_bytes(const run_config *cfg, size_t n, size_t f, size_t k)
{
    (void)k;
    /* layer_run's buffers: a batch's train output (and its guard), its
     * eval output and its inputs for an observer; the statistics of every
     * batch of an epoch and its shares of the drift; eight arrays per
     * feature and the result's six; a pass's scratch; the evaluation
     * rows' order; the addresses of the rows in order. */
    size_t b = cfg->batch_size / bn_ghosts(&cfg->layer), nb = n / b + 1;
    return (3 * b * f + 1 + 2 * nb * f + nb + 14 * f + bp_scratch(f)) *
               sizeof(double) +
           n * (sizeof(size_t) + sizeof(double *));
}

double layer_row_work(const run_config *cfg, size_t f, size_t k)
{
    (void)cfg, (void)k;
    return (double)f;
}

/* The estimators that recompute: the buffers become each feature's mean
 * and variance (divisor n, as pop_moments divides) over n rows of x, row
 * i at rows[i] (at i when rows is NULL). */
static void set_buffers(bn_layer *layer, size_t n, const double *x,
                        const size_t *rows)
{
    num_moments_cols(n, layer->f, layer->f, x, rows, layer->rm, layer->rv);
    for (size_t j = 0; j < layer->f; j++)
        layer->rv[j] /= (double)n;
}

/* The pooling estimators: after training, the buffers become the mean and
 * variance of every sample in the first k batches of the order, pooled,
 * so the spread between batch means counts as it does in the population;
 * under a drift, the mean as the stream has moved by the last update
 * (shift[j], NULL for none). */
static void recompute_pooled(bn_layer *layer, const pop_t *pop,
                             const size_t *perm, size_t b, size_t nb,
                             size_t k, const double *shift)
{
    if (k == 0)
        k = nb;
    size_t rows = k * b;
    if (rows > pop->n)
        rows = pop->n; /* the kept partial batch */
    set_buffers(layer, rows, pop->x, perm);
    for (size_t j = 0; shift && j < pop->f; j++)
        layer->rm[j] += shift[j];
}

/* What one pass over a batch needs of a feature: the buffers' sd, the
 * sums of its train outputs for the self-checks, and the sum of
 * (y_train - y_eval)^2 over the rows compared; and the pass's scratch
 * (bp_scratch). */
typedef struct {
    double *sd_run, *s1, *s2, *sq, *dd;
} batch_work;

/* The batch of b rows from start in order (ne entries) of the rows x,
 * moved by shift, asked for early with fetch (bp_fetch), their addresses
 * read from at (in order, bp_addresses) when it is not NULL. */
static bp_rows batch_rows(size_t b, size_t f, const double *x,
                          const size_t *order, size_t ne, size_t start,
                          int fetch, const double *shift,
                          const double *const *at)
{
    bp_rows r = {b, f, ne - start - b, fetch, x, order + start, shift,
                 at ? at + start : NULL};
    return r;
}

/* The rows' move at an update that has come frac of the drift's way
 * (delta the full move of each feature): into shift, which is returned,
 * or NULL when they have not moved. */
static const double *moved(double frac, const double *delta, size_t f,
                           double *shift)
{
    if (frac == 0.0)
        return NULL;
    for (size_t j = 0; j < f; j++)
        shift[j] = frac * delta[j];
    return shift;
}

/* The order the evaluation rows are compared in when they are not the
 * rows trained on: the training order when there are as many rows (the
 * training rows moved, row for row), else a shuffled order from the run's
 * seed. */
static int eval_order(const pop_t *pop, const pop_t *eval, const size_t *perm,
                      const run_config *cfg, size_t *rows, bn_error *err)
{
    if (eval->n == pop->n) {
        memcpy(rows, perm, eval->n * sizeof *rows);
        return 0;
    }
    order_spec ord;
    if (order_parse("shuffled", eval, &ord, err) != 0 ||
        order_make(&ord, eval, cfg->seed, rows, err) != 0)
        return -1;
    return 0;
}

/* One run of the layer, as layer_run makes it. */
typedef struct {
    const pop_t *pop, *eval;
    const size_t *perm;
    const run_config *cfg;
    const run_observer *obs;
    size_t n, f, bmax, nb; /* rows, features, batch size, batches an epoch:
                            * with K devices of their own, the ghost
                            * batches' B / K and K nb */
    size_t ghosts;         /* K, each batch's devices of their own (1) */
    int drifting;          /* the rows move as training goes */
    /* Evaluated on the rows trained on, as the last epoch saw them, or on
     * rows of its own, in batches of their own. */
    int own;
    int watch, outputs;    /* an observer of the batches, of the outputs */
    int fetch, efetch;     /* the rows trained on, evaluated on: bp_fetch */
    bn_layer layer;
    int have_layer;
    /* What a pass over a batch's outputs is handed (batch_outputs), made
     * once for training's passes and once for the comparison's. */
    bp_layer bl;
    bp_sums bs;
    /* Nothing of N x F: the rows are read where they are, and the outputs
     * compared are made once the final buffers exist, batch by batch,
     * from each batch's statistics (the last epoch's, kept in stats,
     * their drift shares in fracs). A batch's outputs (y, e) are held
     * only for an observer and for the determinism check; x holds its
     * inputs for an observer of the batches. */
    double *stats, *fracs, *work, *y, *e, *x;
    size_t *erows;         /* the evaluation rows' order, when not own */
    void *block;           /* where all of these live (layer_alloc) */
    /* The rows' addresses in the order they are read (the training
     * order, then the evaluation rows'), made once where the rows are
     * not asked for early (a big population's are, as each chunk's
     * addresses are made), so that no pass makes them again; at is
     * addr or NULL. */
    const double **addr;
    const double *const *at;
    batch_work w;
    double *delta, *shift, *emean, *evar;
    double sum_dm, sum_dv; /* the last epoch's batch statistics' errors */
    double frac;           /* the drift's share at the last update */
    size_t pass;           /* self-checks passed */
    /* The comparison: the rows (ex, in order), the sum of squared gaps,
     * the rows compared, the last batch's size and move. */
    const double *ex, *last_sh;
    const size_t *order;
    bp_gap sq;
    size_t kept, b;
} layer_state;

/* The run's arrays in one block, as bn.c's layer has its own (a run is
 * short, and each allocation and free a cost it pays): the statistics
 * and drift shares, the work arrays, y and its guard, e, x for an
 * observer of the batches, the rows' addresses, and the evaluation rows'
 * order when they are not the training rows. Each is an array of its own
 * to AddressSanitizer (base/carve.h). */
static void layer_block(layer_state *s, size_t ne)
{
    size_t f = s->f, nb = s->nb, bmax = s->bmax, n = s->n;
    size_t nst = 2 * nb * f + nb, nwork = 8 * f + bp_scratch(f);
    size_t ny = bmax * f + 1, nx = s->watch ? bmax * f : 0;
    const size_t ad = _Alignof(double);
    bn_carve c = {0};
    size_t at_st = bn_carve_add(&c, nst * sizeof(double), ad);
    size_t at_work = bn_carve_add(&c, nwork * sizeof(double), ad);
    size_t at_y = bn_carve_add(&c, ny * sizeof(double), ad);
    size_t at_e = bn_carve_add(&c, bmax * f * sizeof(double), ad);
    size_t at_x = bn_carve_add(&c, nx * sizeof(double), ad);
    size_t at_addr = bn_carve_add(&c, (n ? n : 1) * sizeof(const double *),
                                  _Alignof(const double *));
    size_t at_rows = bn_carve_add(&c, s->own ? 0 : ne * sizeof(size_t),
                                  _Alignof(size_t));
    char *b = bn_carve_alloc(&c);
    if (!(s->block = b))
        return;
    s->stats = (double *)(void *)(b + at_st);
    s->work = (double *)(void *)(b + at_work);
    s->y = (double *)(void *)(b + at_y);
    s->e = (double *)(void *)(b + at_e);
    s->x = s->watch ? (double *)(void *)(b + at_x) : NULL;
    s->addr = (const double **)(void *)(b + at_addr);
    s->erows = s->own ? NULL : (size_t *)(void *)(b + at_rows);
}

static int layer_alloc(layer_state *s, const pop_t *pop, const pop_t *eval,
                       const size_t *perm, const run_config *cfg,
                       const run_observer *obs, run_result *res,
                       bn_error *err)
{
    memset(s, 0, sizeof *s);
    s->pop = pop, s->eval = eval, s->perm = perm, s->cfg = cfg, s->obs = obs;
    size_t n = pop->n, f = pop->f, g = bn_ghosts(&cfg->layer);
    size_t nb = g * run_batches_per_epoch(n, cfg->batch_size, cfg->partial);
    size_t bmax = cfg->batch_size / g;
    s->n = n, s->f = f, s->bmax = bmax, s->nb = nb, s->ghosts = g;
    s->drifting = cfg->drift.profile.kind != DRIFT_NONE &&
                  cfg->drift.size != 0.0;
    s->own = eval == pop;
    s->fetch = bp_fetch(n, f), s->efetch = bp_fetch(eval->n, f);
    s->watch = obs && obs->on_batch;
    s->outputs = obs && obs->on_outputs;
    layer_block(s, eval->n);
    s->have_layer = bn_init(&s->layer, f, &cfg->layer) == 0;
    if (s->have_layer && cfg->initial)
        bn_initial_apply(cfg->initial, pop, s->layer.rm, s->layer.rv);
    if (!s->block || !s->have_layer || run_result_arrays(res, f) != 0)
        return bn_fail(err, "out of memory");
    s->fracs = s->stats + 2 * nb * f;
    double *work = s->work;
    s->w = (batch_work){work, work + f, work + 2 * f, work + 3 * f,
                        work + 8 * f};
    s->delta = work + 4 * f, s->shift = work + 5 * f;
    s->emean = work + 6 * f, s->evar = work + 7 * f;
    for (size_t j = 0; j < f; j++) {
        /* The drift's full move of each feature, in its own units. */
        s->delta[j] = s->drifting ? cfg->drift.size * sqrt(pop->var[j]) : 0.0;
        res->batch_mean_sq[j] = 0.0;
        s->w.sq[j] = 0.0;
    }
    return 0;
}

static void layer_free(layer_state *s)
{
    free(s->block);
    if (s->have_layer)
        bn_free(&s->layer);
}

/* The passes' arguments: train mode alone (the buffers' mean NULL, no
 * total of gaps), or with the final buffers for the comparison. */
static void pass_setup(layer_state *s, int eval)
{
    const bn_layer *l = &s->layer;
    batch_work *w = &s->w;
    s->bl = (bp_layer){.rm = eval ? l->rm : NULL, .sd_run = w->sd_run,
                       .gamma = l->gamma, .beta = l->beta, .eps = l->eps};
    s->bs = (bp_sums){.s1 = w->s1, .s2 = w->s2, .sq = w->sq,
                      .gap = eval ? &s->sq : NULL, .dd = w->dd};
}

/* One batch's train-mode outputs from its own mean and var (the rows of
 * r, each feature moved by its shift) and, after pass_setup(s, 1), its
 * eval-mode outputs under the final buffers: the sums of y - beta and
 * (y - beta)^2 per feature and, with checks, the self-checks on them
 * (score_checks'), (y - e)^2 added to the comparison's total over the
 * rows and each row's features in order (and to w.sq per feature), and
 * the outputs into y and e when they are not NULL (batchpass.h, two
 * features at a time). One pass, so that the study's comparison costs
 * about what the two outputs do (make bench sets it against a bare
 * kernel). Returns the self-checks passed. */
static size_t batch_outputs(layer_state *s, const bp_rows *r,
                            const double *mean, const double *var,
                            double *y, double *e, int checks)
{
    size_t pass = 0;
    s->bl.mean = mean, s->bl.var = var;
    s->bs.y = y, s->bs.e = e, s->bs.pass = checks ? &pass : NULL;
    bp_outputs(r, &s->bl, 1, &s->bs);
    return pass;
}

/* A last-epoch batch's statistics against the stream's truth at its
 * update: their squared errors added to the sums dm and dv and, per
 * feature, the mean's to sq: two features at a time, the sums over the
 * features in order. */
PAIR_INLINE void errors_add(const layer_state *s, const double *mean,
                            const double *var, double *sq, int drifting,
                            double *dm2, double *dv2)
{
    const double *mu = s->pop->mean, *tv = s->pop->var, *delta = s->delta;
    double frac = drifting ? s->frac : 0.0;
    double sum_dm = *dm2, sum_dv = *dv2;
    size_t j = 0, f = s->f; /* a local: sq's stores could reach s */
    for (; j + 1 < f; j += 2) {
        pair_t truth = pair_load(mu + j);
        if (drifting)
            truth = pair_add(truth,
                             pair_mul(pair_dup(frac), pair_load(delta + j)));
        pair_t dm = pair_sub(pair_load(mean + j), truth);
        pair_t dv = pair_sub(pair_load(var + j), pair_load(tv + j));
        pair_t qm = pair_mul(dm, dm), qv = pair_mul(dv, dv);
        sum_dm += pair_lo(qm);
        sum_dm += pair_hi(qm);
        sum_dv += pair_lo(qv);
        sum_dv += pair_hi(qv);
        pair_store(sq + j, pair_add(pair_load(sq + j), qm));
    }
    for (; j < f; j++) {
        double dm = mean[j] - (drifting ? mu[j] + frac * delta[j] : mu[j]);
        double dv = var[j] - tv[j];
        sum_dm += dm * dm;
        sum_dv += dv * dv;
        sq[j] += dm * dm;
    }
    *dm2 = sum_dm, *dv2 = sum_dv;
}

/* One batch's errors into the run's sums. */
PAIR_INLINE void errors_of(layer_state *s, const double *mean,
                           const double *var, double *sq, int drifting)
{
    double sum_dm = s->sum_dm, sum_dv = s->sum_dv;
    errors_add(s, mean, var, sq, drifting, &sum_dm, &sum_dv);
    s->sum_dm = sum_dm, s->sum_dv = sum_dv;
}

/* The errors of nb batches where nothing moves the rows, batch k's
 * statistics k stride further, in order: the run's sums held in
 * registers from batch to batch rather than loaded and stored at each. */
static void errors_batches(layer_state *s, size_t nb, size_t stride,
                           const double *mean, const double *var, double *sq)
{
    double sum_dm = s->sum_dm, sum_dv = s->sum_dv;
    for (size_t k = 0; k < nb; k++, mean += stride, var += stride)
        errors_add(s, mean, var, sq, 0, &sum_dm, &sum_dv);
    s->sum_dm = sum_dm, s->sum_dv = sum_dv;
}

static void batch_errors(layer_state *s, const double *mean,
                         const double *var, double *sq)
{
    if (s->drifting)
        errors_of(s, mean, var, sq, 1);
    else
        errors_of(s, mean, var, sq, 0);
}

/* Batch k of epoch ep, update t: its statistics (those of the last
 * epoch kept, and their errors against the stream's truth at this
 * update), the buffers' update, the self-checks of its outputs (the last
 * epoch's are checked as they are compared, when they are) and what an
 * observer of the batches sees. */
static void train_batch(layer_state *s, size_t ep, size_t k, size_t t,
                        run_result *res)
{
    const pop_t *pop = s->pop;
    size_t n = s->n, f = s->f, start = k * s->bmax;
    size_t b = start + s->bmax <= n ? s->bmax : n - start;
    int last = ep + 1 == s->cfg->epochs;
    const size_t *rows = &s->perm[start];
    double *mean = s->stats + 2 * k * f, *var = mean + f;
    const double *sh = NULL; /* this update's move of the rows */
    if (s->drifting) {
        s->frac = drift_fraction(&s->cfg->drift.profile, t);
        sh = moved(s->frac, s->delta, f, s->shift);
    }
    bp_rows r =
        batch_rows(b, f, pop->x, s->perm, n, start, s->fetch, sh, s->at);
    bp_stats(&r, 1, mean, var);
    /* The buffers follow device 0's share of each batch. */
    if (k % s->ghosts == 0)
        bn_update(&s->layer, b, mean, var);
    if (last) {
        s->fracs[k] = sh ? s->frac : 0.0;
        batch_errors(s, mean, var, res->batch_mean_sq);
    }
    if (!last || !s->own) {
        s->pass += batch_outputs(s, &r, mean, var, NULL, NULL, 1);
    }
    if (s->watch) {
        double *x = s->x;
        for (size_t i = 0; i < b; i++)
            for (size_t j = 0; j < f; j++)
                x[i * f + j] = sh ? pop->x[rows[i] * f + j] + sh[j]
                                  : pop->x[rows[i] * f + j];
        bn_normalize_rows(&s->layer, b, x, NULL, NULL, mean, var, s->y);
        run_batch rb = {ep, k, b, f, rows, x, s->y, mean, var, &s->layer};
        s->obs->on_batch(s->obs->ctx, &rb);
    }
}

/* An epoch's first nfull batches (all of bmax rows) when nothing moves
 * the rows and no observer watches: every batch's statistics in one
 * pass, then the buffers' updates in the batches' order, then the
 * batches' errors in order, then every batch's outputs in one pass (the
 * last epoch's are checked as they are compared, when they are), as
 * train_batch makes them one batch at a time, with the same bits: a
 * batch's statistics, errors and train outputs read nothing the updates
 * write. */
static void train_batches(layer_state *s, size_t ep, size_t nfull,
                          run_result *res)
{
    size_t f = s->f, bmax = s->bmax;
    int last = ep + 1 == s->cfg->epochs;
    bp_rows r = batch_rows(nfull * bmax, f, s->pop->x, s->perm, s->n, 0,
                           s->fetch, NULL, s->at);
    bp_stats_batches(&r, bmax, 2 * f, 1, s->stats, s->stats + f);
    /* The buffers follow device 0's share of each batch. */
    size_t g = s->ghosts;
    bn_update_batches(&s->layer, bmax, (nfull + g - 1) / g, 2 * f * g,
                      s->stats, s->stats + f);
    if (last) {
        for (size_t k = 0; k < nfull; k++)
            s->fracs[k] = 0.0;
        errors_batches(s, nfull, 2 * f, s->stats, s->stats + f,
                       res->batch_mean_sq);
    }
    if (!last || !s->own) {
        size_t pass = 0;
        s->bl.mean = s->stats, s->bl.var = s->stats + f;
        s->bs.y = s->bs.e = NULL, s->bs.pass = &pass;
        bp_outputs_batches(&r, bmax, 2 * f, &s->bl, 1, &s->bs);
        s->pass += pass;
    }
}

/* Every epoch's batches, then the estimator's recompute after training:
 * a pooling one's pooled statistics, and adaptive batch norm's, the
 * statistics of the rows evaluation sees. */
static void train(layer_state *s, run_result *res)
{
    size_t t = 0;
    pass_setup(s, 0);
    if (!s->fetch) {
        bp_addresses(s->pop->x, s->perm, s->n, s->f, s->addr);
        s->at = s->addr;
    }
    /* the batches of bmax rows, all but a kept partial last one */
    size_t nfull = s->n / s->bmax < s->nb ? s->n / s->bmax : s->nb;
    for (size_t ep = 0; ep < s->cfg->epochs; ep++) {
        size_t k = 0;
        if (!s->drifting && !s->watch && nfull > 0) {
            train_batches(s, ep, nfull, res);
            k = nfull;
        }
        for (; k < s->nb; k++) {
            /* t counts updates: every device's share of a batch moves
             * with the batch */
            if (s->drifting && k % s->ghosts == 0)
                t++;
            train_batch(s, ep, k, t, res);
        }
    }
    const bn_estimator_def *est = bn_estimator_get(s->cfg->layer.estimator);
    if (est->pools) {
        for (size_t j = 0; j < s->f; j++)
            s->shift[j] = s->delta[j] * s->frac; /* the last update's */
        recompute_pooled(&s->layer, s->pop, s->perm,
                         s->bmax * s->ghosts, s->nb / s->ghosts,
                         s->cfg->precise_batches,
                         s->drifting ? s->shift : NULL);
    }
    if (est->adapts)
        set_buffers(&s->layer, s->eval->n, s->eval->x, NULL);
}

/* Each row's train-mode output against its eval-mode output under the
 * final buffers: the last epoch's batches in training order, each as the
 * drift moved it, or the evaluation rows in batches of their own (a kept
 * partial batch of one row has no variance and is left out). */
static int compare(layer_state *s, bn_error *err)
{
    size_t f = s->f, bmax = s->bmax, ne = s->n, nbe = s->nb;
    s->ex = s->pop->x;
    s->order = s->perm;
    if (!s->own) {
        if (eval_order(s->pop, s->eval, s->perm, s->cfg, s->erows, err) != 0)
            return -1;
        s->ex = s->eval->x, s->order = s->erows, ne = s->eval->n;
        s->at = NULL;
        if (!s->efetch && ne <= s->n) {
            bp_addresses(s->ex, s->order, ne, f, s->addr);
            s->at = s->addr;
        }
        nbe = run_batches_per_epoch(ne, bmax, s->cfg->partial);
    }
    for (size_t j = 0; j < f; j++)
        s->w.sd_run[j] = bn_sd(s->layer.rv[j], s->layer.eps);
    pass_setup(s, 1);
    /* Batches compared: all of them, but that rows of their own stop at
     * the first batch of fewer than two (the last, or every one at B 1). */
    size_t ncmp = nbe, k = 0;
    if (!s->own && nbe > 0 && (bmax < 2 || ne - (nbe - 1) * bmax < 2))
        ncmp = bmax < 2 ? 0 : nbe - 1;
    if (s->own && !s->drifting && !s->outputs && nbe > 1) {
        /* Every batch but the last (whose outputs are kept) in one pass,
         * each from its own statistics: what a batch costs beyond its
         * values is paid once for several small ones. */
        k = nbe - 1;
        bp_rows r = batch_rows(k * bmax, f, s->ex, s->order, ne, 0,
                               s->efetch, NULL, s->at);
        size_t pass = 0;
        s->bl.mean = s->stats, s->bl.var = s->stats + f;
        s->bs.y = s->bs.e = NULL, s->bs.pass = &pass;
        bp_outputs_batches(&r, bmax, 2 * f, &s->bl, 1, &s->bs);
        s->pass += pass;
    }
    for (; k < nbe; k++) {
        size_t start = k * bmax;
        size_t bk = start + bmax <= ne ? bmax : ne - start;
        const size_t *rows = &s->order[start];
        const double *sh = NULL, *mean = s->emean, *var = s->evar;
        if (s->own) {
            mean = s->stats + 2 * k * f, var = mean + f;
            sh = moved(s->fracs[k], s->delta, f, s->shift);
        } else if (bk < 2) {
            break;
        }
        bp_rows r = batch_rows(bk, f, s->ex, s->order, ne, start, s->efetch,
                               sh, s->at);
        if (!s->own)
            bp_stats(&r, 1, s->emean, s->evar);
        /* The eval outputs are kept where an observer or the determinism
         * check reads them: the last batch compared. */
        int keep = s->outputs || k + 1 == ncmp;
        s->pass += batch_outputs(s, &r, mean, var, keep ? s->y : NULL,
                                 keep ? s->e : NULL, s->own);
        if (s->outputs)
            s->obs->on_outputs(s->obs->ctx, start, bk, f, rows, s->y, s->e);
        s->kept = start + bk, s->b = bk, s->last_sh = sh;
    }
    bp_gap_flush(&s->sq, s->w.dd, f);
    if (s->outputs && s->kept == 0)
        s->obs->on_outputs(s->obs->ctx, 0, 0, f, s->order, s->y, s->e);
    return 0;
}

/* The two self-checks that are properties of the code rather than of a
 * batch's values, made once and counted for every batch and feature as
 * the others are: the last row compared, evaluated again on its own,
 * fills exactly its F outputs, with the bits the pass above gave it.
 * With no row compared they are not made, and so not passed. */
static void code_checks(layer_state *s, run_result *res)
{
    size_t f = s->f, counted = s->cfg->epochs * s->nb * f;
    if (s->kept > 0) {
        score_mark(s->y, f);
        bn_normalize_rows(&s->layer, 1, s->ex, &s->order[s->kept - 1],
                          s->last_sh, s->layer.rm, s->layer.rv, s->y);
        if (score_written(s->y, f))
            s->pass += counted;
        if (memcmp(s->y, &s->e[(s->b - 1) * f], f * sizeof *s->y) == 0)
            s->pass += counted;
    }
    res->props_pass = s->pass;
    res->props_total = 4 * counted;
}

/* The scores of the final buffers against the evaluation rows' truth,
 * of the comparison and of the last epoch's batch statistics. */
static void layer_scores(const layer_state *s, run_result *res)
{
    const bn_layer *l = &s->layer;
    const bn_estimator_def *est = bn_estimator_get(s->cfg->layer.estimator);
    size_t f = s->f, nb = s->nb;
    score_buffers_t sb;
    score_buffers(s->eval, l->rm, l->rv, &sb);
    res->updates = l->updates;
    res->init_weight = est->init_weight
                           ? est->init_weight(s->cfg->layer.keep, l->updates)
                           : 0.0;
    res->stats_err = sb.stats_err;
    res->mean_err = sb.mean_err;
    res->var_err = sb.var_err;
    res->worst_var_err = sb.worst_var_err;
    res->worst_var_feature = sb.worst_var_feature;
    res->stats_err_rel = sb.stats_err_rel;
    res->worst_var_rel = sb.worst_var_rel;
    res->train_eval_rmse = sqrt(s->sq.sum / (double)(s->kept * f));
    res->batch_mean_err = sqrt(s->sum_dm / (double)(nb * f));
    res->batch_var_err = sqrt(s->sum_dv / (double)(nb * f));
    memcpy(res->running_mean, l->rm, f * sizeof(double));
    memcpy(res->running_var, l->rv, f * sizeof(double));
    memcpy(res->true_mean, s->eval->mean, f * sizeof(double));
    memcpy(res->true_var, s->eval->var, f * sizeof(double));
    for (size_t j = 0; j < f; j++) {
        res->train_eval[j] = sqrt(s->w.sq[j] / (double)s->kept);
        res->batch_mean_sq[j] /= (double)nb;
    }
}

/* Batch dependence: each evaluation row's outputs in every batch the
 * plan forms (compose.h), normalised by the batch's own statistics and
 * by the final buffers. */
typedef struct {
    const bn_layer *layer;
    const pop_t *eval;
    compose_spread spread;
    double *x, *y, *e, *mean, *var;
} dep_state;

static int dep_batch(void *ctx, size_t b, const size_t *rows, bn_error *err)
{
    (void)err;
    dep_state *d = ctx;
    size_t f = d->eval->f;
    for (size_t i = 0; i < b; i++)
        memcpy(&d->x[i * f], &d->eval->x[rows[i] * f], f * sizeof *d->x);
    bn_batch_stats(b, f, d->x, d->mean, d->var);
    bn_normalize_rows(d->layer, b, d->x, NULL, NULL, d->mean, d->var, d->y);
    bn_normalize_rows(d->layer, b, d->x, NULL, NULL, d->layer->rm,
                      d->layer->rv, d->e);
    for (size_t i = 0; i < b; i++)
        compose_spread_add(&d->spread, rows[i], &d->y[i * f], &d->e[i * f]);
    return 0;
}

static int layer_dependence(const layer_state *s, run_result *res,
                            bn_error *err)
{
    const pop_t *ev = s->eval;
    size_t f = s->f, b = s->bmax;
    int enumerated;
    res->dep_batches =
        compose_batches(ev->n, b, s->cfg->compositions, &enumerated);
    if (s->cfg->compositions == 0 || res->dep_batches == 0)
        return 0;
    dep_state d = {.layer = &s->layer, .eval = ev};
    d.x = malloc((3 * b * f + 2 * f) * sizeof *d.x);
    if (!d.x || compose_spread_init(&d.spread, ev->n, f) != 0) {
        free(d.x);
        return bn_fail(err, "out of memory");
    }
    d.y = d.x + b * f, d.e = d.y + b * f, d.mean = d.e + b * f;
    d.var = d.mean + f;
    int rc = compose_each(ev->n, b, s->cfg->compositions, s->cfg->seed,
                          dep_batch, &d, err);
    if (rc == 0)
        compose_spread_scores(&d.spread, &res->batch_dependence,
                              &res->batch_dependence_mean,
                              &res->batch_dependence_eval);
    compose_spread_free(&d.spread);
    free(d.x);
    return rc;
}

int layer_run(const pop_t *pop, const pop_t *eval, const size_t *perm,
              const run_config *cfg, const run_observer *obs,
              run_result *res, bn_error *err)
{
    if (cfg->seq.length > 0) {
        if (eval != pop)
            return bn_fail(err, "sequences are evaluated on their own "
                                "rows: no [evaluation] file");
        return seq_run(pop, cfg, res, err);
    }
    layer_state s;
    int rc = layer_alloc(&s, pop, eval, perm, cfg, obs, res, err);
    if (rc == 0) {
        train(&s, res);
        rc = compare(&s, err);
    }
    if (rc == 0) {
        code_checks(&s, res);
        layer_scores(&s, res);
        rc = layer_dependence(&s, res, err);
    }
    layer_free(&s);
    return rc;
}
