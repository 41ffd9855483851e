/*
 * The classifier as plain loops, in the style of llm.c: each layer a
 * forward and a backward function over row-major arrays, the parameters,
 * gradients and momentum buffers carved from one allocation, every sum in
 * index order. Batch norm is bn.h's layer, used only through its public
 * functions; its backward pass is written out here.
 */
#include "model/net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/num.h"
#include "base/pair.h"
#include "pop/pop.h"

/* The only exp and log in the classifier: num.h's, correctly rounded and
 * the same bits on every platform, where libm's are neither. sqrt needs
 * no such care: IEEE 754 rounds it correctly everywhere. */
static double clf_exp(double x) { return num_exp(x); }
static double clf_log(double x) { return num_log(x); }

static const char *const norm_names[] = {"batch", "none"};

const char *net_norm_name(int n)
{
    return n >= 0 && n < 2 ? norm_names[n] : NULL;
}

int net_norm_parse(const char *s, net_norm *n)
{
    for (int i = 0; i < 2; i++)
        if (strcmp(s, norm_names[i]) == 0) {
            *n = (net_norm)i;
            return 0;
        }
    return -1;
}

static int check_data(const net_data *d, size_t f, size_t k, bn_error *err)
{
    if (d->f != f)
        return bn_fail(err, "the rows have %zu features, the classifier %zu",
                       d->f, f);
    if (d->k != k)
        return bn_fail(err, "the rows have %zu classes, the classifier %zu",
                       d->k, k);
    for (size_t i = 0; i < d->n; i++)
        if (d->label[i] < 0 || (size_t)d->label[i] >= k)
            return bn_fail(err, "row %zu: label %d is not in [0, %zu)", i,
                           d->label[i], k);
    return 0;
}

double net_uniform(pcg32_t *rng)
{
    /* 53 random bits, 27 from the first draw and 26 from the second, as an
     * integer m < 2^53 (exact in a double), then scaled by 2^-53: the one
     * rounding-free scaling. The result is k / 2^53 for a uniform k. */
    uint64_t a = pcg32_next(rng) >> 5, b = pcg32_next(rng) >> 6;
    return (double)((a << 26) | b) * 0x1p-53;
}

/* PyTorch's nn.Linear default: kaiming_uniform_(a = sqrt(5)) for the
 * weight, which is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same bound
 * for the bias. 2u - 1 is exact for u on the 2^-53 grid, so each value is
 * bound * (2u - 1) with one rounding. */
static void draw_uniform(pcg32_t *rng, size_t n, size_t fan_in, double *p)
{
    double bound = 1.0 / sqrt((double)fan_in);
    for (size_t i = 0; i < n; i++)
        p[i] = bound * (2.0 * net_uniform(rng) - 1.0);
}

size_t net_tensors(net_t *net, net_tensor *t)
{
    size_t n = 0;
    t[n++] = (net_tensor){"fc1.weight", net->h, net->f, net->w1, net->dw1,
                          net->vw1};
    t[n++] = (net_tensor){"fc1.bias", net->h, 1, net->b1, net->db1, net->vb1};
    if (net->norm == CLF_NORM_BATCH) {
        t[n++] = (net_tensor){"bn.weight", net->h, 1, net->bn.gamma,
                              net->dgamma, net->vgamma};
        t[n++] = (net_tensor){"bn.bias", net->h, 1, net->bn.beta, net->dbeta,
                              net->vbeta};
    }
    t[n++] = (net_tensor){"fc2.weight", net->k, net->h, net->w2, net->dw2,
                          net->vw2};
    t[n++] = (net_tensor){"fc2.bias", net->k, 1, net->b2, net->db2, net->vb2};
    return n;
}

/* Hand out n doubles from the block. */
static double *carve(double **next, size_t n)
{
    double *p = *next;
    *next += n;
    return p;
}

int net_init(net_t *net, const run_config *cfg, size_t f, size_t k,
             bn_error *err)
{
    memset(net, 0, sizeof *net);
    size_t h = cfg->clf.hidden, bmax = cfg->batch_size;
    if (h < 1 || h > CLF_MAX_HIDDEN || f < 1 || k < 2 || bmax < 1)
        return bn_fail(err, "a classifier needs 1 to %d hidden units, "
                            "features, 2 classes and a batch; got %zu, %zu, "
                            "%zu, %zu",
                       CLF_MAX_HIDDEN, h, f, k, bmax);
    /* A training-mode score of an odd number of rows at B 2 has one
     * batch of three (net_score_batches). */
    size_t b = bmax == 2 ? 3 : bmax;
    size_t np = h * f + h + k * h + k; /* fc1 and fc2 */
    /* Parameters, gradients and momentum buffers (gamma and beta's two
     * live in bn_layer), then the activations of one batch. */
    size_t total = np + 2 * (np + 2 * h) + b * f + 5 * b * h + 3 * b * k +
                   b + 3 * h + (f > k ? f : k) * h;
    net->block = malloc(total * sizeof *net->block);
    net->lbuf = malloc(b * sizeof *net->lbuf);
    if (!net->block || !net->lbuf) {
        net_free(net);
        return bn_fail(err, "out of memory for a classifier of %zu x %zu x "
                            "%zu and batches of %zu",
                       f, h, k, b);
    }
    net->f = f;
    net->h = h;
    net->k = k;
    net->bmax = bmax;
    net->cap = b;
    net->norm = cfg->clf.norm;
    double *next = net->block;
    net->w1 = carve(&next, h * f);
    net->b1 = carve(&next, h);
    net->w2 = carve(&next, k * h);
    net->b2 = carve(&next, k);
    net->dw1 = carve(&next, h * f);
    net->db1 = carve(&next, h);
    net->dgamma = carve(&next, h);
    net->dbeta = carve(&next, h);
    net->dw2 = carve(&next, k * h);
    net->db2 = carve(&next, k);
    net->vw1 = carve(&next, h * f);
    net->vb1 = carve(&next, h);
    net->vgamma = carve(&next, h);
    net->vbeta = carve(&next, h);
    net->vw2 = carve(&next, k * h);
    net->vb2 = carve(&next, k);
    net->xbuf = carve(&next, b * f);
    net->hpre = carve(&next, b * h);
    net->xhat = carve(&next, b * h);
    net->act = carve(&next, b * h);
    net->dact = carve(&next, b * h);
    net->dh = carve(&next, b * h);
    net->z = carve(&next, b * k);
    net->prob = carve(&next, b * k);
    net->dz = carve(&next, b * k);
    net->loss = carve(&next, b);
    net->mean = carve(&next, h);
    net->var = carve(&next, h);
    net->sd = carve(&next, h);
    net->wt = carve(&next, h * f > k * h ? h * f : k * h);
    memset(net->block, 0, total * sizeof *net->block);

    /* gamma 1, beta 0, rm 0, rv 1 */
    bn_config bn = cfg->layer;
    bn.gamma = 1.0;
    bn.beta = 0.0;
    if (bn_init(&net->bn, h, &bn) != 0) {
        net_free(net);
        return bn_fail(err, "out of memory for a batch-norm layer of %zu", h);
    }
    pcg32_t rng;
    pcg32_seed(&rng, cfg->clf.init_seed, PCG32_INITSEQ_WEIGHTS);
    draw_uniform(&rng, h * f, f, net->w1);
    draw_uniform(&rng, h, f, net->b1);
    draw_uniform(&rng, k * h, h, net->w2);
    draw_uniform(&rng, k, h, net->b2);
    return 0;
}

void net_free(net_t *net)
{
    free(net->block);
    free(net->lbuf);
    bn_free(&net->bn);
    memset(net, 0, sizeof *net);
}

/* ------------------------------------------------------------ layers */

/* w (out x in) with its rows in pairs, for linear_forward: pair q's
 * values of input c side by side at wt[2 (q in + c)]. */
static void pair_rows(size_t in, size_t out, const double *w, double *wt)
{
    for (size_t q = 0; q < out / 2; q++)
        for (size_t c = 0; c < in; c++) {
            wt[2 * (q * in + c)] = w[2 * q * in + c];
            wt[2 * (q * in + c) + 1] = w[(2 * q + 1) * in + c];
        }
}

/* y[i][o] = bias[o] + sum_c w[o][c] x[i][c], c in order, for row i of x
 * at x + rows[i] in (x + i in when rows is NULL): two outputs at a time
 * (base/pair.h) from wt, w as pair_rows lays it out; an odd last output
 * alone. Each sum is the same whether its row comes alone or in a batch. */
static void linear_forward(size_t b, size_t in, size_t out, const double *x,
                           const size_t *rows, const double *w,
                           const double *wt, const double *bias, double *y)
{
    for (size_t i = 0; i < b; i++) {
        const double *xi = x + (rows ? rows[i] : i) * in;
        double *yi = y + i * out;
        for (size_t q = 0; q < out / 2; q++) {
            const double *wq = wt + 2 * q * in;
            pair_t s = pair_load(bias + 2 * q);
            size_t c = 0;
            for (; c + 1 < in; c += 2) { /* two turns a loop, in order */
                s = pair_add(s, pair_mul(pair_load(wq + 2 * c),
                                         pair_load_dup(xi + c)));
                s = pair_add(s, pair_mul(pair_load(wq + 2 * c + 2),
                                         pair_load_dup(xi + c + 1)));
            }
            if (c < in)
                s = pair_add(s, pair_mul(pair_load(wq + 2 * c),
                                         pair_load_dup(xi + c)));
            pair_store(yi + 2 * q, s);
        }
        if (out % 2) {
            size_t o = out - 1;
            double s = bias[o];
            for (size_t c = 0; c < in; c++)
                s += w[o * in + c] * xi[c];
            yi[o] = s;
        }
    }
}

/* dw[o][c] = sum_i dy[i][o] x[i][c], dbias[o] = sum_i dy[i][o], and, when
 * dx is not NULL, dx[i][c] = sum_o dy[i][o] w[o][c]; sums in order, two
 * inputs c at a time. */
static void linear_backward(size_t b, size_t in, size_t out, const double *x,
                            const double *w, const double *dy, double *dw,
                            double *dbias, double *dx)
{
    for (size_t o = 0; o < out; o++) {
        double sb = 0.0;
        for (size_t i = 0; i < b; i++)
            sb += dy[i * out + o];
        dbias[o] = sb;
        size_t c = 0;
        for (; c + 1 < in; c += 2) {
            pair_t s = pair_dup(0.0);
            for (size_t i = 0; i < b; i++)
                s = pair_add(s, pair_mul(pair_load_dup(dy + i * out + o),
                                         pair_load(x + i * in + c)));
            pair_store(dw + o * in + c, s);
        }
        for (; c < in; c++) {
            double s = 0.0;
            for (size_t i = 0; i < b; i++)
                s += dy[i * out + o] * x[i * in + c];
            dw[o * in + c] = s;
        }
    }
    if (!dx)
        return;
    for (size_t i = 0; i < b; i++) {
        size_t c = 0;
        for (; c + 1 < in; c += 2) {
            pair_t s = pair_dup(0.0);
            for (size_t o = 0; o < out; o++)
                s = pair_add(s, pair_mul(pair_load_dup(dy + i * out + o),
                                         pair_load(w + o * in + c)));
            pair_store(dx + i * in + c, s);
        }
        for (; c < in; c++) {
            double s = 0.0;
            for (size_t o = 0; o < out; o++)
                s += dy[i * out + o] * w[o * in + c];
            dx[i * in + c] = s;
        }
    }
}

/* Batch norm's backward pass, per unit j. With the batch's own statistics
 * (project set) the mean and the scale depend on every row, so each row's
 * gradient loses its projection onto the constant direction (the mean of
 * dy) and onto xhat (the mean of dy * xhat): the normalised output cannot
 * move its batch mean or its batch scale. With the buffers they are
 * constants and each row passes on its own. */
static void bn_backward(size_t b, size_t h, const double *xhat,
                        const double *gamma, const double *sd,
                        const double *dy, double *dx, double *dgamma,
                        double *dbeta, int project)
{
    for (size_t j = 0; j < h; j++) {
        double s = 0.0, sx = 0.0;
        for (size_t i = 0; i < b; i++) {
            s += dy[i * h + j];
            sx += dy[i * h + j] * xhat[i * h + j];
        }
        dbeta[j] = s;
        dgamma[j] = sx;
        double mean_dy = s / (double)b, mean_dy_xhat = sx / (double)b;
        double scale = gamma[j] / sd[j];
        for (size_t i = 0; i < b; i++)
            dx[i * h + j] =
                project ? scale * (dy[i * h + j] - mean_dy -
                                   xhat[i * h + j] * mean_dy_xhat)
                        : scale * dy[i * h + j];
    }
}

void net_bn_train_backward(size_t b, size_t h, const double *xhat,
                           const double *gamma, const double *sd,
                           const double *dy, double *dx, double *dgamma,
                           double *dbeta)
{
    bn_backward(b, h, xhat, gamma, sd, dy, dx, dgamma, dbeta, 1);
}

/* Per row: loss = log(sum_c exp(z_c - m)) - (z_y - m) with m = max_c z_c,
 * and, with grads (a backward pass to follow), the softmax
 * exp(z_c - m) / sum. */
static void softmax_xent_forward(size_t b, size_t k, const double *z,
                                 const int *label, double *prob, double *loss,
                                 int grads)
{
    for (size_t i = 0; i < b; i++) {
        const double *zi = &z[i * k];
        double m = zi[0];
        for (size_t c = 1; c < k; c++)
            if (zi[c] > m)
                m = zi[c];
        double s = 0.0;
        for (size_t c = 0; c < k; c++) {
            prob[i * k + c] = clf_exp(zi[c] - m);
            s += prob[i * k + c];
        }
        for (size_t c = 0; grads && c < k; c++)
            prob[i * k + c] /= s;
        loss[i] = clf_log(s) - (zi[label[i]] - m);
    }
}

/* ------------------------------------------------------------ the net */

/* net_forward, and with grads 0 (a score, no backward pass to follow)
 * without what only the backward pass reads: xhat and the softmax. */
static double forward(net_t *net, size_t b, const double *x,
                      const int *label, net_bn_mode mode, int grads)
{
    size_t f = net->f, h = net->h, k = net->k;
    net->b = b;
    net->mode = mode;
    net->x = x;
    net->label = label;
    pair_rows(f, h, net->w1, net->wt);
    linear_forward(b, f, h, x, NULL, net->w1, net->wt, net->b1, net->hpre);

    if (net->norm == CLF_NORM_NONE) {
        memcpy(net->act, net->hpre, b * h * sizeof *net->act);
    } else {
        if (mode == CLF_BN_RUNNING) {
            bn_eval_forward(&net->bn, b, net->hpre, net->act);
            memcpy(net->mean, net->bn.rm, h * sizeof *net->mean);
            memcpy(net->var, net->bn.rv, h * sizeof *net->var);
        } else if (mode == CLF_BN_BATCH) {
            bn_train_forward(&net->bn, b, net->hpre, net->act, net->mean,
                             net->var);
        } else {
            /* Batch statistics, the buffers left as they are. */
            bn_batch_forward(&net->bn, b, net->hpre, net->act, net->mean,
                             net->var);
        }
        /* xhat as the layer computes it, for the backward pass. */
        for (size_t j = 0; grads && j < h; j++) {
            net->sd[j] = sqrt(net->var[j] + net->bn.eps);
            for (size_t i = 0; i < b; i++)
                net->xhat[i * h + j] =
                    (net->hpre[i * h + j] - net->mean[j]) / net->sd[j];
        }
    }
    /* ReLU; a NaN passes, so that divergence shows in the loss. */
    for (size_t i = 0; i < b * h; i++)
        if (net->act[i] < 0.0)
            net->act[i] = 0.0;

    pair_rows(h, k, net->w2, net->wt);
    linear_forward(b, h, k, net->act, NULL, net->w2, net->wt, net->b2,
                   net->z);
    softmax_xent_forward(b, k, net->z, label, net->prob, net->loss, grads);
    double s = 0.0;
    for (size_t i = 0; i < b; i++)
        s += net->loss[i];
    return s / (double)b;
}

double net_forward(net_t *net, size_t b, const double *x, const int *label,
                   net_bn_mode mode)
{
    return forward(net, b, x, label, mode, 1);
}

void net_backward(net_t *net)
{
    size_t b = net->b, f = net->f, h = net->h, k = net->k;
    /* The mean loss: d/dz = (softmax - onehot) / b. */
    for (size_t i = 0; i < b; i++)
        for (size_t c = 0; c < k; c++)
            net->dz[i * k + c] =
                (net->prob[i * k + c] - (c == (size_t)net->label[i])) /
                (double)b;
    linear_backward(b, h, k, net->act, net->w2, net->dz, net->dw2, net->db2,
                    net->dact);
    /* ReLU passes the gradient where its output is positive. */
    for (size_t i = 0; i < b * h; i++)
        if (!(net->act[i] > 0.0))
            net->dact[i] = 0.0;

    if (net->norm == CLF_NORM_NONE)
        memcpy(net->dh, net->dact, b * h * sizeof *net->dh);
    else
        bn_backward(b, h, net->xhat, net->bn.gamma, net->sd, net->dact,
                    net->dh, net->dgamma, net->dbeta,
                    net->mode != CLF_BN_RUNNING);
    linear_backward(b, f, h, net->x, net->w1, net->dh, net->dw1, net->db1,
                    NULL);
}

void net_sgd_step(net_t *net, const run_config *cfg)
{
    /* torch.optim.SGD with dampening 0 and no Nesterov: weight decay adds
     * wd * p to every parameter's gradient (biases, gamma and beta too,
     * as PyTorch does unless told otherwise); the momentum buffer starts
     * as the first gradient and is then momentum * buf + g. */
    net_tensor t[CLF_MAX_TENSORS];
    size_t nt = net_tensors(net, t);
    double lr = cfg->clf.lr, mom = cfg->clf.sgd_momentum;
    double wd = cfg->clf.weight_decay;
    for (size_t a = 0; a < nt; a++)
        for (size_t e = 0; e < t[a].rows * t[a].cols; e++) {
            double g = t[a].g[e];
            if (wd != 0.0)
                g += wd * t[a].p[e];
            if (mom != 0.0) {
                t[a].v[e] = net->steps == 0 ? g : mom * t[a].v[e] + g;
                g = t[a].v[e];
            }
            t[a].p[e] -= lr * g;
        }
    net->steps++;
}

/* ------------------------------------------------------------ training */

/* Gather rows perm[0..b-1] (b <= cap) into the net's batch buffers. */
static void gather(net_t *net, const net_data *d, const size_t *perm,
                   size_t b)
{
    for (size_t i = 0; i < b; i++) {
        memcpy(&net->xbuf[i * d->f], &d->x[perm[i] * d->f],
               d->f * sizeof *net->xbuf);
        net->lbuf[i] = d->label[perm[i]];
    }
}

int net_hidden_moments(const net_t *net, const net_data *d,
                       const size_t *rows, size_t n, double *mean,
                       double *var, bn_error *err)
{
    size_t h = net->h, f = net->f;
    double *hs = malloc((n * h + h * f) * sizeof *hs), *wt = hs + n * h;
    if (!hs)
        return bn_fail(err, "out of memory");
    pair_rows(f, h, net->w1, wt);
    linear_forward(n, f, h, d->x, rows, net->w1, wt, net->b1, hs);
    for (size_t j = 0; j < h; j++)
        pop_moments(n, h, hs + j, &mean[j], &var[j]);
    free(hs);
    return 0;
}

int net_finish(net_t *net, const run_config *cfg, const net_data *d,
               const size_t *perm, bn_error *err)
{
    if (net->norm != CLF_NORM_BATCH ||
        !bn_estimator_get(cfg->layer.estimator)->pools)
        return 0;
    size_t b = cfg->batch_size, k = cfg->precise_batches;
    if (k == 0)
        k = run_batches_per_epoch(d->n, b, cfg->partial);
    size_t rows = k * b < d->n ? k * b : d->n; /* the kept partial batch */
    return net_hidden_moments(net, d, perm, rows, net->bn.rm, net->bn.rv,
                              err);
}

int net_train(net_t *net, const run_config *cfg, const net_data *d,
              const size_t *perm, const net_observer *obs, bn_error *err)
{
    if (check_data(d, net->f, net->k, err) != 0)
        return -1;
    if (cfg->batch_size != net->bmax || cfg->clf.hidden != net->h ||
        cfg->clf.norm != net->norm || d->n < net->bmax)
        return bn_fail(err, "the configuration is not the one the "
                            "classifier was made with, or there are fewer "
                            "rows than a batch");
    size_t bmax = cfg->batch_size;
    size_t nb = run_batches_per_epoch(d->n, bmax, cfg->partial);
    unsigned long e0 = cfg->clf.freeze_after;
    for (unsigned long ep = 0; ep < cfg->epochs; ep++) {
        int frozen = e0 > 0 && ep >= e0;
        net_bn_mode mode = frozen ? CLF_BN_RUNNING : CLF_BN_BATCH;
        for (size_t k = 0; k < nb; k++) {
            size_t start = k * bmax;
            size_t b = start + bmax <= d->n ? bmax : d->n - start;
            gather(net, d, &perm[start], b);
            double loss = net_forward(net, b, net->xbuf, net->lbuf, mode);
            if (!isfinite(loss))
                return bn_fail(err, "training diverged: the loss of epoch "
                                    "%lu, batch %zu is not finite (lr too "
                                    "large?)",
                               ep + 1, k + 1);
            net_backward(net);
            if (obs && obs->on_step) {
                net_step s = {ep, k, b, &perm[start], loss, net};
                obs->on_step(obs->ctx, &s);
            }
            net_sgd_step(net, cfg);
        }
        if (obs && obs->on_epoch)
            obs->on_epoch(obs->ctx, ep, net);
    }
    return net_finish(net, cfg, d, perm, err);
}

/* ------------------------------------------------------------ scores */

/* Count the rows of the last forward pass whose largest logit (the first
 * one on a tie, as torch.argmax) is their label, and add their losses;
 * with pred, each row's class goes to pred[rows[i]] (rows NULL: to
 * pred[first + i]). */
static void tally(const net_t *net, net_score *s, double *loss_sum,
                  int *pred, const size_t *rows, size_t first)
{
    for (size_t i = 0; i < net->b; i++) {
        const double *zi = &net->z[i * net->k];
        size_t best = 0;
        for (size_t c = 1; c < net->k; c++)
            if (zi[c] > zi[best])
                best = c;
        s->correct += best == (size_t)net->label[i];
        *loss_sum += net->loss[i];
        if (pred)
            pred[rows ? rows[i] : first + i] = (int)best;
    }
    s->rows += net->b;
}

static void finish(net_score *s, double loss_sum)
{
    s->accuracy = (double)s->correct / (double)s->rows;
    s->loss = loss_sum / (double)s->rows;
}

size_t net_score_batches(size_t n, size_t b)
{
    size_t nb = n / b + (n % b != 0);
    return nb <= n / 2 ? nb : n / 2; /* B 2, n odd: one batch of 3 */
}

size_t net_score_batch_start(size_t n, size_t nb, size_t k)
{
    size_t q = n / nb, r = n % nb;
    return k * q + (k < r ? k : r);
}

int net_score_train_mode(net_t *net, const net_data *d, const size_t *perm,
                         net_score *s, int *pred, bn_error *err)
{
    memset(s, 0, sizeof *s);
    if (check_data(d, net->f, net->k, err) != 0)
        return -1;
    if (d->n < 2)
        return bn_fail(err, "%zu rows: training mode needs at least two",
                       d->n);
    size_t nb = net_score_batches(d->n, net->bmax);
    double loss_sum = 0.0;
    for (size_t k = 0; k < nb; k++) {
        size_t start = net_score_batch_start(d->n, nb, k);
        size_t b = net_score_batch_start(d->n, nb, k + 1) - start;
        gather(net, d, &perm[start], b);
        forward(net, b, net->xbuf, net->lbuf, CLF_BN_BATCH_KEEP, 0);
        tally(net, s, &loss_sum, pred, &perm[start], 0);
    }
    finish(s, loss_sum);
    return 0;
}

int net_score_eval_mode(net_t *net, const net_data *d, net_score *s,
                        int *pred, bn_error *err)
{
    memset(s, 0, sizeof *s);
    if (check_data(d, net->f, net->k, err) != 0)
        return -1;
    if (d->n == 0)
        return bn_fail(err, "no rows to score");
    /* Rows go through in chunks only to share the loops: in evaluation
     * mode every row's arithmetic is its own, whatever the chunk. */
    double loss_sum = 0.0;
    for (size_t start = 0; start < d->n; start += net->cap) {
        size_t b = d->n - start < net->cap ? d->n - start : net->cap;
        forward(net, b, &d->x[start * d->f], &d->label[start],
                CLF_BN_RUNNING, 0);
        tally(net, s, &loss_sum, pred, NULL, start);
    }
    finish(s, loss_sum);
    return 0;
}

/* ------------------------------------------------------------ files */

static void write_rows(FILE *fp, const char *stage, const char *name,
                       size_t rows, size_t cols, const double *v)
{
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            fprintf(fp, "%s\t%s\t%zu\t%zu\t%.17g\n", stage, name, i, j,
                    v[i * cols + j]);
}

int net_write_weights(FILE *fp, const char *stage, net_t *net)
{
    net_tensor t[CLF_MAX_TENSORS];
    size_t nt = net_tensors(net, t);
    for (size_t a = 0; a < nt; a++)
        write_rows(fp, stage, t[a].name, t[a].rows, t[a].cols, t[a].p);
    if (net->norm == CLF_NORM_BATCH) {
        double tracked = (double)net->bn.updates;
        write_rows(fp, stage, "bn.running_mean", net->h, 1, net->bn.rm);
        write_rows(fp, stage, "bn.running_var", net->h, 1, net->bn.rv);
        write_rows(fp, stage, "bn.num_batches_tracked", 1, 1, &tracked);
    }
    return ferror(fp) ? -1 : 0;
}

int net_write_grads(FILE *fp, const char *stage, net_t *net)
{
    net_tensor t[CLF_MAX_TENSORS];
    size_t nt = net_tensors(net, t);
    for (size_t a = 0; a < nt; a++)
        write_rows(fp, stage, t[a].name, t[a].rows, t[a].cols, t[a].g);
    return ferror(fp) ? -1 : 0;
}
