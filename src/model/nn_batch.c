/*
 * `batch`: batch normalisation over channels, nn.BatchNorm1d on a row of
 * values and nn.BatchNorm2d on an image row (every position of a channel
 * in the batch is one of its values: B H W of them). The statistics and
 * the buffers are the batch-norm layer's own (bn.h: bn_batch_stats, the
 * estimators' bn_update), with gamma and beta learned from 1 and 0, so
 * every setting of [layer] applies; the output is bnlayer.h's expression
 * gamma ((x - m) / sqrt(v + eps)) + beta, through xhat = (x - m) / sd.
 * On K devices of their own ([layer] devices, sync no) a batch's samples
 * are split as torch.tensor_split splits them (the first b mod K shares
 * one sample larger), each share normalised by its own statistics, and
 * the buffers follow share 0's, as data-parallel training leaves rank 0's.
 */
#include "model/nn.h"

#include <math.h>
#include <string.h>

#include "base/pair.h"

static int batch_shape(const nn_spec *s, nn_shape in, size_t k,
                       nn_shape *out, bn_error *err)
{
    (void)s, (void)k, (void)err;
    *out = in;
    return 0;
}

static int batch_init(nn_layer *l, size_t cap, const bn_config *bn)
{
    size_t c = l->in.c, n = nn_size(l->in);
    size_t gc = c * (bn->sync || bn->devices < 1 ? 1 : bn->devices);
    bn_config cfg = *bn;
    cfg.gamma = 1.0; /* learned: they start at 1 and 0 */
    cfg.beta = 0.0;
    if (bn_init(&l->bn, c, &cfg) != 0)
        return -1;
    double *dg, *mg, *vg, *db, *mb, *vb;
    /* mean, var and sd per device share; dg and db's first c are the
     * tensors' gradients, the next c a share's, added in */
    double **arrays[] = {&dg,     &mg,      &vg,     &db,     &mb,
                         &vb,     &l->y,    &l->save, &l->mean, &l->var,
                         &l->sd};
    size_t sizes[] = {2 * c, c, c, 2 * c, c, c, cap * n, cap * n, gc, gc, gc};
    if (nn_alloc(l, arrays, sizes, sizeof sizes / sizeof *sizes) != 0)
        return -1;
    nn_tensor_set(l, 0, "weight", c, 1, l->bn.gamma, dg, mg, vg);
    nn_tensor_set(l, 1, "bias", c, 1, l->bn.beta, db, mb, vb);
    return 0;
}

/* xhat and y for rows from..from + rows - 1 (B H W of them) with mean m
 * and variance v per channel (share d's); sd kept for the backward. */
static void normalise(nn_layer *l, const nn_pass *ps, size_t d, size_t from,
                      size_t rows, const double *x)
{
    size_t c = l->in.c;
    const double *g = l->bn.gamma, *be = l->bn.beta;
    const double *m = &l->mean[d * c], *v = &l->var[d * c];
    double *sd = &l->sd[d * c];
    for (size_t j = 0; j < c; j++)
        sd[j] = nn_round(ps, bn_sd(v[j], l->bn.eps));
    if (!ps->f32) {
        /* In float64 nothing is rounded between the operations: two
         * channels at a time (base/pair.h, each lane the scalar operation),
         * an odd last one alone. */
        for (size_t i = from; i < from + rows; i++) {
            const double *xi = &x[i * c];
            double *si = &l->save[i * c], *yi = &l->y[i * c];
            size_t j = 0;
            for (; j + 2 <= c; j += 2) {
                pair_t xh = pair_div(pair_sub(pair_load(xi + j),
                                              pair_load(m + j)),
                                     pair_load(sd + j));
                pair_store(si + j, xh);
                pair_store(yi + j, pair_add(pair_mul(pair_load(g + j), xh),
                                            pair_load(be + j)));
            }
            if (j < c) {
                si[j] = (xi[j] - m[j]) / sd[j];
                yi[j] = g[j] * si[j] + be[j];
            }
        }
        return;
    }
    for (size_t i = from; i < from + rows; i++)
        for (size_t j = 0; j < c; j++) {
            double xh = nn_round(ps, nn_round(ps, x[i * c + j] - m[j]) / sd[j]);
            l->save[i * c + j] = xh;
            l->y[i * c + j] = nn_round(ps, nn_round(ps, g[j] * xh) + be[j]);
        }
}

/* The devices' shares of b samples: how many, and share d's first sample
 * and count (torch.tensor_split's). */
static size_t shares(const nn_layer *l, const nn_pass *ps, size_t b)
{
    size_t k = ps->mode == NN_BN_RUNNING ? 1 : l->bn.ghosts;
    return k < 1 ? 1 : k > b ? b : k;
}
static void share(size_t b, size_t k, size_t d, size_t *first, size_t *n)
{
    size_t q = b / k, r = b % k;
    *first = d * q + (d < r ? d : r);
    *n = q + (d < r);
}

static void round_all(size_t n, double *v)
{
    for (size_t i = 0; i < n; i++)
        v[i] = nn_r32(v[i]);
}

static void batch_forward(nn_layer *l, const nn_pass *ps, size_t b,
                          const double *x)
{
    size_t c = l->in.c, pos = nn_positions(l->in), rows = b * pos;
    l->mode = ps->mode;
    if (ps->mode == NN_BN_RUNNING) {
        memcpy(l->mean, l->bn.rm, c * sizeof *l->mean);
        memcpy(l->var, l->bn.rv, c * sizeof *l->var);
        normalise(l, ps, 0, 0, rows, x);
        return;
    }
    /* Each share's mean and biased variance, summed in float64 (in
     * float32 too: the float32 values' sums), then stored. */
    size_t k = shares(l, ps, b), n0 = b;
    for (size_t d = 0; d < k; d++) {
        size_t first, n;
        share(b, k, d, &first, &n);
        if (d == 0)
            n0 = n;
        bn_batch_stats(n * pos, c, &x[first * pos * c], &l->mean[d * c],
                       &l->var[d * c]);
        if (ps->f32) {
            round_all(c, &l->mean[d * c]);
            round_all(c, &l->var[d * c]);
        }
        normalise(l, ps, d, first * pos, n * pos, x);
    }
    if (ps->mode == NN_BN_BATCH) {
        bn_update(&l->bn, n0 * pos, l->mean, l->var);
        if (ps->f32) {
            round_all(c, l->bn.rm);
            round_all(c, l->bn.rv);
        }
    }
}

/* Per channel j. With the batch's own statistics the mean and the scale
 * depend on every value, so each value's gradient loses its projection
 * onto the constant direction (the mean of dy) and onto xhat (the mean of
 * dy xhat): the normalised output cannot move its batch mean or its batch
 * scale. With the buffers they are constants and each value passes on
 * its own. */
static void channels_backward(const nn_pass *ps, size_t rows, size_t c,
                              const double *xhat, const double *gamma,
                              const double *sd, const double *dy, double *dx,
                              double *dgamma, double *dbeta, int project)
{
    for (size_t j = 0; j < c; j++) {
        double s = 0.0, sx = 0.0;
        for (size_t i = 0; i < rows; i++) {
            s += dy[i * c + j];
            sx += dy[i * c + j] * xhat[i * c + j];
        }
        dbeta[j] = nn_round(ps, s);
        dgamma[j] = nn_round(ps, sx);
        if (!dx)
            continue;
        double mean_dy = nn_round(ps, s / (double)rows);
        double mean_dy_xhat = nn_round(ps, sx / (double)rows);
        double scale = nn_round(ps, gamma[j] / sd[j]);
        for (size_t i = 0; i < rows; i++) {
            double d = dy[i * c + j];
            if (project)
                d = nn_round(ps, nn_round(ps, d - mean_dy) -
                                     nn_round(ps, xhat[i * c + j] *
                                                      mean_dy_xhat));
            dx[i * c + j] = nn_round(ps, scale * d);
        }
    }
}

void nn_batch_train_backward(size_t b, size_t h, const double *xhat,
                             const double *gamma, const double *sd,
                             const double *dy, double *dx, double *dgamma,
                             double *dbeta)
{
    nn_pass ps = {NN_BN_BATCH, 0, 0, NULL, 0};
    channels_backward(&ps, b, h, xhat, gamma, sd, dy, dx, dgamma, dbeta, 1);
}

/* Each share's gradient through its own statistics; gamma's and beta's
 * are the shares' sums, added share by share (autograd's order over the
 * devices' slices). */
static void batch_backward(nn_layer *l, const nn_pass *ps, size_t b,
                           const double *x, const double *dy, double *dx)
{
    (void)x;
    size_t c = l->in.c, pos = nn_positions(l->in);
    nn_pass as = *ps;
    as.mode = l->mode;
    size_t k = shares(l, &as, b);
    double *dg = l->t[0].g, *db = l->t[1].g;
    if (k == 1) {
        channels_backward(ps, b * pos, c, l->save, l->bn.gamma, l->sd, dy,
                          dx, dg, db, l->mode != NN_BN_RUNNING);
        return;
    }
    for (size_t d = 0; d < k; d++) {
        size_t first, n, o;
        share(b, k, d, &first, &n);
        o = first * pos * c;
        channels_backward(ps, n * pos, c, &l->save[o], l->bn.gamma,
                          &l->sd[d * c], &dy[o], dx ? &dx[o] : NULL,
                          d ? dg + c : dg, d ? db + c : db, 1);
        for (size_t j = 0; d && j < c; j++) {
            dg[j] = nn_round(ps, dg[j] + dg[c + j]);
            db[j] = nn_round(ps, db[j] + db[c + j]);
        }
    }
}

static double batch_work(const nn_layer *l)
{
    return 4.0 * (double)nn_size(l->in);
}

const nn_kind nn_kind_batch = {
    .name = "batch",
    .arg = NN_ARG_NONE,
    .help = "batch normalisation over channels (BatchNorm1d, BatchNorm2d "
            "after a convolution), [layer]'s settings, gamma and beta learned",
    .normalises = 1,
    .running = 1,
    .shape = batch_shape,
    .init = batch_init,
    .forward = batch_forward,
    .backward = batch_backward,
    .work = batch_work,
};
