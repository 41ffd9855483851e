/*
 * `linear:N`: y = bias + W x, PyTorch's nn.Linear, on a row's values in
 * PyTorch's flattened order (C x H x W, channel-major) whatever the
 * network holds them in, so that a linear layer after a convolution is
 * nn.Flatten then nn.Linear. Every sum starts from its first term (the
 * bias, or 0) and adds the others in index order.
 */
#include "model/nn.h"

#include <stdlib.h>

static int linear_shape(const nn_spec *s, nn_shape in, size_t k,
                        nn_shape *out, bn_error *err)
{
    (void)in, (void)err;
    *out = (nn_shape){s->n ? s->n : k, 1, 1};
    return 0;
}

/* Where input column j (PyTorch's index c H W + p) is held: p C + c. */
static int make_map(nn_layer *l)
{
    size_t c = l->in.c, np = nn_positions(l->in);
    l->map = malloc(c * np * sizeof *l->map);
    if (!l->map)
        return -1;
    for (size_t ch = 0; ch < c; ch++)
        for (size_t p = 0; p < np; p++)
            l->map[ch * np + p] = p * c + ch;
    return 0;
}

static int linear_init(nn_layer *l, size_t cap, const bn_config *bn)
{
    (void)bn;
    size_t in = nn_size(l->in), out = l->out.c;
    double *w, *dw, *mw, *vw, *b, *db, *mb, *vb;
    double **arrays[] = {&w, &dw, &mw, &vw, &b, &db, &mb, &vb, &l->y};
    size_t sizes[] = {out * in, out * in, out * in, out * in,
                      out,      out,      out,      out,      cap * out};
    if (nn_alloc(l, arrays, sizes, sizeof sizes / sizeof *sizes) != 0)
        return -1;
    if (nn_positions(l->in) > 1 && make_map(l) != 0)
        return -1;
    nn_tensor_set(l, 0, "weight", out, in, w, dw, mw, vw);
    nn_tensor_set(l, 1, "bias", out, 1, b, db, mb, vb);
    return 0;
}

static void linear_draw(nn_layer *l, pcg32_t *rng)
{
    size_t in = nn_size(l->in), out = l->out.c;
    nn_draw_uniform(rng, out * in, in, l->t[0].p);
    nn_draw_uniform(rng, out, in, l->t[1].p);
}

static void linear_forward(nn_layer *l, const nn_pass *ps, size_t b,
                           const double *x)
{
    size_t in = nn_size(l->in), out = l->out.c;
    const double *w = l->t[0].p, *bias = l->t[1].p;
    const size_t *map = l->map;
    for (size_t i = 0; i < b; i++) {
        const double *xi = &x[i * in];
        for (size_t o = 0; o < out; o++) {
            double s = bias[o];
            if (map)
                for (size_t c = 0; c < in; c++)
                    s += w[o * in + c] * xi[map[c]];
            else
                for (size_t c = 0; c < in; c++)
                    s += w[o * in + c] * xi[c];
            l->y[i * out + o] = nn_round(ps, s);
        }
    }
}

/* dw[o][c] = sum_i dy[i][o] x[i][c], dbias[o] = sum_i dy[i][o], and, when
 * dx is not NULL, dx[i][c] = sum_o dy[i][o] w[o][c]; sums in order. */
static void linear_backward(nn_layer *l, const nn_pass *ps, size_t b,
                            const double *x, const double *dy, double *dx)
{
    size_t in = nn_size(l->in), out = l->out.c;
    const double *w = l->t[0].p;
    double *dw = l->t[0].g, *dbias = l->t[1].g;
    const size_t *map = l->map;
    for (size_t o = 0; o < out; o++) {
        double sb = 0.0;
        for (size_t i = 0; i < b; i++)
            sb += dy[i * out + o];
        dbias[o] = nn_round(ps, sb);
        for (size_t c = 0; c < in; c++) {
            size_t at = map ? map[c] : c;
            double s = 0.0;
            for (size_t i = 0; i < b; i++)
                s += dy[i * out + o] * x[i * in + at];
            dw[o * in + c] = nn_round(ps, s);
        }
    }
    if (!dx)
        return;
    for (size_t i = 0; i < b; i++)
        for (size_t c = 0; c < in; c++) {
            double s = 0.0;
            for (size_t o = 0; o < out; o++)
                s += dy[i * out + o] * w[o * in + c];
            dx[i * in + (map ? map[c] : c)] = nn_round(ps, s);
        }
}

static double linear_work(const nn_layer *l)
{
    return (double)nn_size(l->in) * (double)l->out.c;
}

const nn_kind nn_kind_linear = {
    .name = "linear",
    .arg = NN_ARG_UNITS,
    .help = "fully connected, N outputs (K: the classes): nn.Linear, on the "
            "row flattened as PyTorch flattens it",
    .weighted = 1,
    .shape = linear_shape,
    .init = linear_init,
    .draw = linear_draw,
    .forward = linear_forward,
    .backward = linear_backward,
    .work = linear_work,
};
