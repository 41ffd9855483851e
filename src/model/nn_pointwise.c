/*
 * The layers without a sum: `relu`, `dropout:P` (seeded: its masks are
 * drawn from the network's own PCG32 stream, docs/definitions.md), `none`
 * (the identity, so that a list of networks can leave a place empty) and
 * `image:HxW` (a row of C H W values read as C channels of H x W in
 * PyTorch's order, channel-major, the input of a convolution).
 */
#include "model/nn.h"

#include <string.h>

static int same_shape(const nn_spec *s, nn_shape in, size_t k, nn_shape *out,
                      bn_error *err)
{
    (void)s, (void)k, (void)err;
    *out = in;
    return 0;
}

static int output_init(nn_layer *l, size_t cap, const bn_config *bn)
{
    (void)bn;
    double **arrays[] = {&l->y, &l->save};
    size_t sizes[] = {cap * nn_size(l->out), cap * nn_size(l->in)};
    return nn_alloc(l, arrays, sizes, 2);
}

static double no_work(const nn_layer *l)
{
    return (double)nn_size(l->in);
}

/* ---- relu ---- */

static void relu_forward(nn_layer *l, const nn_pass *ps, size_t b,
                         const double *x)
{
    (void)ps;
    /* A NaN passes, so that divergence shows in the loss. */
    size_t n = b * nn_size(l->in);
    for (size_t i = 0; i < n; i++)
        l->y[i] = x[i] < 0.0 ? 0.0 : x[i];
}

/* The gradient passes where the output is positive. */
static void relu_backward(nn_layer *l, const nn_pass *ps, size_t b,
                          const double *x, const double *dy, double *dx)
{
    (void)ps, (void)x;
    if (!dx)
        return;
    size_t n = b * nn_size(l->in);
    for (size_t i = 0; i < n; i++)
        dx[i] = l->y[i] > 0.0 ? dy[i] : 0.0;
}

const nn_kind nn_kind_relu = {
    .name = "relu",
    .arg = NN_ARG_NONE,
    .help = "max(x, 0)",
    .shape = same_shape,
    .init = output_init,
    .forward = relu_forward,
    .backward = relu_backward,
    .work = no_work,
};

/* ---- dropout:P ---- */

/* In a training step each value is kept with probability 1 - P and then
 * scaled by 1 / (1 - P), as torch.nn.functional.dropout does (its mask
 * times the scale, then the input times that); a uniform u from two draws
 * (nn_uniform) per value, in the row's PyTorch order, keeps it when
 * u >= P. Outside training it is the identity: the scores never drop. */
static void dropout_forward(nn_layer *l, const nn_pass *ps, size_t b,
                            const double *x)
{
    size_t c = l->in.c, np = nn_positions(l->in), n = c * np;
    if (!ps->train || l->spec.p == 0.0) {
        memcpy(l->y, x, b * n * sizeof *l->y);
        for (size_t i = 0; i < b * n; i++)
            l->save[i] = 1.0;
        return;
    }
    double scale = nn_round(ps, 1.0 / nn_round(ps, 1.0 - l->spec.p));
    for (size_t i = 0; i < b; i++)
        for (size_t ch = 0; ch < c; ch++)
            for (size_t p = 0; p < np; p++) {
                size_t q = i * n + p * c + ch;
                double m = nn_uniform(ps->rng) >= l->spec.p ? scale : 0.0;
                l->save[q] = m;
                l->y[q] = nn_round(ps, x[q] * m);
            }
}

static void dropout_backward(nn_layer *l, const nn_pass *ps, size_t b,
                             const double *x, const double *dy, double *dx)
{
    (void)x;
    if (!dx)
        return;
    size_t n = b * nn_size(l->in);
    for (size_t i = 0; i < n; i++)
        dx[i] = nn_round(ps, dy[i] * l->save[i]);
}

const nn_kind nn_kind_dropout = {
    .name = "dropout",
    .arg = NN_ARG_SHARE,
    .help = "in training steps each value dropped with probability P, the "
            "rest scaled by 1/(1-P); the identity in both scores",
    .shape = same_shape,
    .init = output_init,
    .forward = dropout_forward,
    .backward = dropout_backward,
    .work = no_work,
};

/* ---- none ---- */

static void none_forward(nn_layer *l, const nn_pass *ps, size_t b,
                         const double *x)
{
    (void)ps;
    memcpy(l->y, x, b * nn_size(l->in) * sizeof *l->y);
}

static void none_backward(nn_layer *l, const nn_pass *ps, size_t b,
                          const double *x, const double *dy, double *dx)
{
    (void)ps, (void)x;
    if (dx)
        memcpy(dx, dy, b * nn_size(l->in) * sizeof *dx);
}

const nn_kind nn_kind_none = {
    .name = "none",
    .arg = NN_ARG_NONE,
    .help = "the identity",
    .identity = 1,
    .shape = same_shape,
    .init = output_init,
    .forward = none_forward,
    .backward = none_backward,
    .work = no_work,
};

/* ---- image:HxW ---- */

static int image_shape(const nn_spec *s, nn_shape in, size_t k,
                       nn_shape *out, bn_error *err)
{
    (void)k;
    size_t hw = s->n * s->n2, n = nn_size(in);
    if (in.h != 1 || in.w != 1 || n % hw != 0)
        return bn_fail(err, "image:%zux%zu needs rows of C x %zu values; "
                            "they have %zu x %zu x %zu",
                       s->n, s->n2, hw, in.c, in.h, in.w);
    *out = (nn_shape){n / hw, s->n, s->n2};
    return 0;
}

/* Row value c H W + p (PyTorch's) is channel c at position p. */
static void image_forward(nn_layer *l, const nn_pass *ps, size_t b,
                          const double *x)
{
    (void)ps;
    size_t c = l->out.c, np = nn_positions(l->out), n = c * np;
    for (size_t i = 0; i < b; i++)
        for (size_t ch = 0; ch < c; ch++)
            for (size_t p = 0; p < np; p++)
                l->y[i * n + p * c + ch] = x[i * n + ch * np + p];
}

static void image_backward(nn_layer *l, const nn_pass *ps, size_t b,
                           const double *x, const double *dy, double *dx)
{
    (void)ps, (void)x;
    if (!dx)
        return;
    size_t c = l->out.c, np = nn_positions(l->out), n = c * np;
    for (size_t i = 0; i < b; i++)
        for (size_t ch = 0; ch < c; ch++)
            for (size_t p = 0; p < np; p++)
                dx[i * n + ch * np + p] = dy[i * n + p * c + ch];
}

const nn_kind nn_kind_image = {
    .name = "image",
    .arg = NN_ARG_SHAPE,
    .help = "the row's C H W values as C channels of H x W (first, before "
            "a convolution)",
    .shape = image_shape,
    .init = output_init,
    .forward = image_forward,
    .backward = image_backward,
    .work = no_work,
};
