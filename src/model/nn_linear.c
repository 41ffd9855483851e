/*
 * `linear:N`: y = bias + W x, PyTorch's nn.Linear, on a row's values in
 * PyTorch's flattened order (C x H x W, channel-major) whatever the
 * network holds them in, so that a linear layer after a convolution is
 * nn.Flatten then nn.Linear. Every sum starts from its first term (the
 * bias, or 0) and adds the others in index order.
 */
#include "model/nn.h"

#include <stdlib.h>

#include "base/pair.h"

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
    double **arrays[] = {&w,  &dw, &mw, &vw,    &b,     &db,
                         &mb, &vb, &l->y, &l->wt, &l->save};
    size_t sizes[] = {out * in, out * in, out * in, out * in,
                      out,      out,      out,      out,
                      cap * out, out * in, cap * in};
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

/* acc[j] = init[j] + a[0] v[j] + a[as] v[vs + j] + ... + a[(m - 1) as]
 * v[(m - 1) vs + j] for j in [j0, j0 + 2 np), each sum's terms added in
 * that order (init NULL: from 0). The np pairs of sums (base/pair.h: each
 * lane the scalar multiply and add) stay in registers while every term t
 * goes into each of them; pairing sums that each keep their own order
 * moves no bit. */
PAIR_INLINE void sums_block(size_t np, size_t j0, size_t m, const double *a,
                            size_t as, const double *v, size_t vs,
                            const double *init, double *acc)
{
    pair_t s[4];
    pair_block_start(np, s, init ? init + j0 : NULL);
    for (size_t t = 0; t < m; t++)
        pair_add_products(np, s, pair_dup(a[t * as]), v + t * vs + j0);
    pair_block_store(np, acc + j0, s);
}

/* The n sums of sums_block for j < n: eight at a time, then four (a
 * classifier's head of 4 classes), then two, then an odd last one
 * alone, each in the same order. */
static void sums(size_t n, size_t m, const double *a, size_t as,
                 const double *v, size_t vs, const double *init, double *acc)
{
    size_t j = 0;
    for (; j + 8 <= n; j += 8)
        sums_block(4, j, m, a, as, v, vs, init, acc);
    for (; j + 4 <= n; j += 4)
        sums_block(2, j, m, a, as, v, vs, init, acc);
    for (; j + 2 <= n; j += 2)
        sums_block(1, j, m, a, as, v, vs, init, acc);
    if (j < n) {
        double s = init ? init[j] : 0.0;
        for (size_t t = 0; t < m; t++)
            s += a[t * as] * v[t * vs + j];
        acc[j] = s;
    }
}

static void round_row(const nn_pass *ps, size_t n, double *v)
{
    for (size_t j = 0; ps->f32 && j < n; j++)
        v[j] = nn_r32(v[j]);
}

/* Row i of x in PyTorch's order (on an image, gathered into save). */
static const double *torch_row(nn_layer *l, const double *x, size_t i)
{
    size_t in = nn_size(l->in);
    if (!l->map)
        return &x[i * in];
    for (size_t c = 0; c < in; c++)
        l->save[i * in + c] = x[i * in + l->map[c]];
    return &l->save[i * in];
}

/* y[i][o] = bias[o] + sum_c w[o][c] x[i][c], c in order: row i's sums
 * side by side (sums), over the weights transposed (wt[c][o] = w[o][c],
 * so that input c's weights for every output are next to each other;
 * made again unless the weights are the last pass's). */
static void linear_forward(nn_layer *l, const nn_pass *ps, size_t b,
                           const double *x)
{
    size_t in = nn_size(l->in), out = l->out.c;
    const double *w = l->t[0].p, *bias = l->t[1].p;
    for (size_t o = 0; !ps->same_weights && o < out; o++)
        for (size_t c = 0; c < in; c++)
            l->wt[c * out + o] = w[o * in + c];
    for (size_t i = 0; i < b; i++) {
        double *yi = &l->y[i * out];
        sums(out, in, torch_row(l, x, i), 1, l->wt, out, bias, yi);
        round_row(ps, out, yi);
    }
}

/* dw[o][c] = sum_i dy[i][o] x[i][c], dbias[o] = sum_i dy[i][o], and, when
 * dx is not NULL, dx[i][c] = sum_o dy[i][o] w[o][c]; each sum from 0, its
 * terms in index order (i, or o), a row of them side by side (sums). On
 * an image the rows are put in PyTorch's order first (save), and dx back
 * in ours. */
static void linear_backward(nn_layer *l, const nn_pass *ps, size_t b,
                            const double *x, const double *dy, double *dx)
{
    size_t in = nn_size(l->in), out = l->out.c;
    const double *w = l->t[0].p;
    double *dw = l->t[0].g, *dbias = l->t[1].g;
    if (l->map) {
        for (size_t i = 0; i < b; i++)
            torch_row(l, x, i);
        x = l->save;
    }
    for (size_t o = 0; o < out; o++) {
        double sb = 0.0;
        for (size_t i = 0; i < b; i++)
            sb += dy[i * out + o];
        dbias[o] = nn_round(ps, sb);
        sums(in, b, &dy[o], out, x, in, NULL, &dw[o * in]);
        round_row(ps, in, &dw[o * in]);
    }
    if (!dx)
        return;
    for (size_t i = 0; i < b; i++) {
        /* On an image, row i's sums go to save's row i (read above), then
         * each to its place. */
        double *s = l->map ? &l->save[i * in] : &dx[i * in];
        sums(in, out, &dy[i * out], 1, w, in, NULL, s);
        round_row(ps, in, s);
        for (size_t c = 0; l->map && c < in; c++)
            dx[i * in + l->map[c]] = s[c];
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
