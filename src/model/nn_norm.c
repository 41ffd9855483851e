/*
 * The normalisations without a batch: `layer` (nn.LayerNorm over all of
 * a row's values, an affine weight and bias per value) and `group:G`
 * (nn.GroupNorm(G, C): each row's channels in G groups of C / G, each
 * group's values at every position normalised together, an affine
 * weight and bias per channel). Each row's statistics are its own, so
 * training mode and evaluation mode are one function: no buffers, no
 * batch in the arithmetic, and every row gives the same bits whatever
 * rows share its batch.
 */
#include "model/nn.h"

#include <math.h>
#include <stdlib.h>

/* ---- what both share: a set of n values normalised together ---- */

/* Mean and biased variance of the values of row x at the places at[0..n)
 * (NULL: x[0..n)), corrected two-pass in float64, then stored. */
static void group_moments(const nn_pass *ps, size_t n, const double *x,
                          const size_t *at, double *mean, double *var)
{
    double m = 0.0, s1 = 0.0, s2 = 0.0;
    for (size_t e = 0; e < n; e++)
        m += x[at ? at[e] : e];
    m /= (double)n;
    for (size_t e = 0; e < n; e++) {
        double d = x[at ? at[e] : e] - m;
        s1 += d;
        s2 += d * d;
    }
    *mean = nn_round(ps, m + s1 / (double)n);
    *var = nn_round(ps, (s2 - s1 * s1 / (double)n) / (double)n);
}

static int same_shape(const nn_spec *s, nn_shape in, size_t k, nn_shape *out,
                      bn_error *err)
{
    (void)s, (void)k, (void)err;
    *out = in;
    return 0;
}

/* The parameter a value at place q takes: layer norm's is its PyTorch
 * index (map, NULL on a row of one position), group norm's its channel. */
static size_t param_of(const nn_layer *l, size_t q)
{
    if (l->kind == &nn_kind_group)
        return q % l->in.c;
    return l->map ? l->map[q] : q;
}

/* dx over one set of n values of a row (at: their places, NULL for the
 * whole row): dxhat = dy gamma, and
 *   dx = (dxhat - mean(dxhat) - xhat mean(dxhat xhat)) / sd,
 * batch norm's two projections over the set's values. dxh is n values of
 * scratch. */
static void set_backward(const nn_layer *l, const nn_pass *ps, size_t n,
                         const size_t *at, const double *xhat,
                         const double *dy, double sd, double *dxh,
                         double *dx)
{
    const double *gamma = l->t[0].p;
    double s1 = 0.0, s2 = 0.0;
    for (size_t e = 0; e < n; e++) {
        size_t q = at ? at[e] : e;
        dxh[e] = nn_round(ps, dy[q] * gamma[param_of(l, q)]);
        s1 += dxh[e];
        s2 += dxh[e] * xhat[q];
    }
    double m1 = nn_round(ps, s1 / (double)n);
    double m2 = nn_round(ps, s2 / (double)n);
    for (size_t e = 0; e < n; e++) {
        size_t q = at ? at[e] : e;
        double d = nn_round(ps, nn_round(ps, dxh[e] - m1) -
                                    nn_round(ps, xhat[q] * m2));
        dx[q] = nn_round(ps, d / sd);
    }
}

/* y from xhat and the affine parameters, and their gradients. */
static void affine_forward(nn_layer *l, const nn_pass *ps, size_t b)
{
    size_t n = nn_size(l->in);
    const double *g = l->t[0].p, *be = l->t[1].p;
    for (size_t i = 0; i < b; i++)
        for (size_t q = 0; q < n; q++) {
            size_t j = param_of(l, q);
            l->y[i * n + q] =
                nn_round(ps, nn_round(ps, g[j] * l->save[i * n + q]) + be[j]);
        }
}

static void affine_backward(nn_layer *l, const nn_pass *ps, size_t b,
                            const double *dy)
{
    size_t n = nn_size(l->in), np = l->t[0].rows;
    double *dg = l->t[0].g, *db = l->t[1].g;
    for (size_t j = 0; j < np; j++)
        dg[j] = db[j] = 0.0;
    /* Each parameter's sums over its values in row, then place, order. */
    for (size_t i = 0; i < b; i++)
        for (size_t q = 0; q < n; q++) {
            size_t j = param_of(l, q);
            dg[j] += dy[i * n + q] * l->save[i * n + q];
            db[j] += dy[i * n + q];
        }
    for (size_t j = 0; j < np; j++) {
        dg[j] = nn_round(ps, dg[j]);
        db[j] = nn_round(ps, db[j]);
    }
}

static int norm_init(nn_layer *l, size_t cap, size_t sets, size_t params)
{
    size_t n = nn_size(l->in);
    double *g, *dg, *mg, *vg, *b, *db, *mb, *vb;
    double **arrays[] = {&g,     &dg,      &mg,      &vg,     &b,     &db,
                         &mb,    &vb,      &l->y,    &l->save, &l->mean,
                         &l->var, &l->sd};
    size_t sizes[] = {params, params, params,      params,      params,
                      params, params, params,      cap * n,     cap * n,
                      cap * sets + n, cap * sets, cap * sets};
    if (nn_alloc(l, arrays, sizes, sizeof sizes / sizeof *sizes) != 0)
        return -1;
    for (size_t j = 0; j < params; j++)
        g[j] = 1.0;
    nn_tensor_set(l, 0, "weight", params, 1, g, dg, mg, vg);
    nn_tensor_set(l, 1, "bias", params, 1, b, db, mb, vb);
    return 0;
}

/* ---- layer: the row's values together ---- */

static int layer_init(nn_layer *l, size_t cap, const bn_config *bn)
{
    l->bn.eps = bn->eps;
    size_t n = nn_size(l->in), c = l->in.c, np = nn_positions(l->in);
    if (np > 1) {
        /* The value at place p C + c has PyTorch's index c H W + p. */
        l->map = malloc(n * sizeof *l->map);
        if (!l->map)
            return -1;
        for (size_t p = 0; p < np; p++)
            for (size_t ch = 0; ch < c; ch++)
                l->map[p * c + ch] = ch * np + p;
    }
    return norm_init(l, cap, 1, n);
}

static void layer_forward(nn_layer *l, const nn_pass *ps, size_t b,
                          const double *x)
{
    size_t n = nn_size(l->in);
    l->mode = ps->mode;
    for (size_t i = 0; i < b; i++) {
        const double *xi = &x[i * n];
        group_moments(ps, n, xi, NULL, &l->mean[i], &l->var[i]);
        l->sd[i] = nn_round(ps, sqrt(l->var[i] + l->bn.eps));
        for (size_t q = 0; q < n; q++)
            l->save[i * n + q] =
                nn_round(ps, nn_round(ps, xi[q] - l->mean[i]) / l->sd[i]);
    }
    affine_forward(l, ps, b);
}

static void layer_backward(nn_layer *l, const nn_pass *ps, size_t b,
                           const double *x, const double *dy, double *dx)
{
    (void)x;
    size_t n = nn_size(l->in);
    affine_backward(l, ps, b, dy);
    if (!dx)
        return;
    /* dxhat's scratch: the mean array's spare n values. */
    double *dxh = l->mean + b;
    for (size_t i = 0; i < b; i++)
        set_backward(l, ps, n, NULL, &l->save[i * n], &dy[i * n], l->sd[i],
                     dxh, &dx[i * n]);
}

static double norm_work(const nn_layer *l)
{
    return 6.0 * (double)nn_size(l->in);
}

const nn_kind nn_kind_layer = {
    .name = "layer",
    .arg = NN_ARG_NONE,
    .help = "layer normalisation of each row's values (nn.LayerNorm over "
            "C, or C x H x W), a weight and bias per value; no running "
            "statistics",
    .normalises = 1,
    .shape = same_shape,
    .init = layer_init,
    .forward = layer_forward,
    .backward = layer_backward,
    .work = norm_work,
};

/* ---- group:G: the channels in G groups ---- */

static int group_shape(const nn_spec *s, nn_shape in, size_t k,
                       nn_shape *out, bn_error *err)
{
    (void)k;
    if (in.c % s->n != 0)
        return bn_fail(err, "group:%zu needs channels divisible by %zu; "
                            "the layer before gives %zu",
                       s->n, s->n, in.c);
    *out = in;
    return 0;
}

static int group_init(nn_layer *l, size_t cap, const bn_config *bn)
{
    l->bn.eps = bn->eps;
    size_t c = l->in.c, np = nn_positions(l->in), g = l->spec.n;
    /* The places of each group's values, group by group, in the order
     * the row holds them (position, then channel). */
    l->map = malloc(c * np * sizeof *l->map);
    if (!l->map)
        return -1;
    for (size_t gr = 0, at = 0; gr < g; gr++)
        for (size_t p = 0; p < np; p++)
            for (size_t ch = gr * (c / g); ch < (gr + 1) * (c / g); ch++)
                l->map[at++] = p * c + ch;
    return norm_init(l, cap, g, c);
}

static void group_forward(nn_layer *l, const nn_pass *ps, size_t b,
                          const double *x)
{
    size_t n = nn_size(l->in), g = l->spec.n, per = n / g;
    l->mode = ps->mode;
    for (size_t i = 0; i < b; i++)
        for (size_t gr = 0; gr < g; gr++) {
            const size_t *at = &l->map[gr * per];
            size_t s = i * g + gr;
            group_moments(ps, per, &x[i * n], at, &l->mean[s], &l->var[s]);
            l->sd[s] = nn_round(ps, sqrt(l->var[s] + l->bn.eps));
            for (size_t e = 0; e < per; e++) {
                size_t q = at[e];
                l->save[i * n + q] = nn_round(
                    ps, nn_round(ps, x[i * n + q] - l->mean[s]) / l->sd[s]);
            }
        }
    affine_forward(l, ps, b);
}

static void group_backward(nn_layer *l, const nn_pass *ps, size_t b,
                           const double *x, const double *dy, double *dx)
{
    (void)x;
    size_t n = nn_size(l->in), g = l->spec.n, per = n / g;
    affine_backward(l, ps, b, dy);
    if (!dx)
        return;
    double *dxh = l->mean + b * g;
    for (size_t i = 0; i < b; i++)
        for (size_t gr = 0; gr < g; gr++)
            set_backward(l, ps, per, &l->map[gr * per], &l->save[i * n],
                         &dy[i * n], l->sd[i * g + gr], dxh, &dx[i * n]);
}

const nn_kind nn_kind_group = {
    .name = "group",
    .arg = NN_ARG_COUNT,
    .help = "group normalisation, G groups of channels (nn.GroupNorm(G, "
            "C)), a weight and bias per channel; no running statistics",
    .normalises = 1,
    .shape = group_shape,
    .init = group_init,
    .forward = group_forward,
    .backward = group_backward,
    .work = norm_work,
};
