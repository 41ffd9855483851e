/*
 * `conv:C`: a 3 x 3 convolution, stride 1, zero padding 1 (the output has
 * the input's H x W), C output channels: nn.Conv2d(C_in, C, 3,
 * padding=1). The weight is [C][C_in][3][3] as PyTorch holds it; every
 * sum starts from the bias (or 0) and adds the terms inside the image in
 * the order input channel, kernel row, kernel column (a padded position
 * adds nothing, not a zero).
 */
#include "model/nn.h"

#include "base/pair.h"

static int conv_shape(const nn_spec *s, nn_shape in, size_t k, nn_shape *out,
                      bn_error *err)
{
    (void)k, (void)err;
    *out = (nn_shape){s->n, in.h, in.w};
    return 0;
}

static int conv_init(nn_layer *l, size_t cap, const bn_config *bn)
{
    (void)bn;
    size_t ci = l->in.c, co = l->out.c, nw = co * ci * 9;
    double *w, *dw, *mw, *vw, *b, *db, *mb, *vb;
    /* wt and save: the weights and their gradient with the output channel
     * last, for the paired loops. */
    double **arrays[] = {&w,  &dw, &mw,   &vw,    &b,      &db,
                         &mb, &vb, &l->y, &l->wt, &l->save};
    size_t sizes[] = {nw, nw, nw, nw, co, co, co, co, cap * nn_size(l->out),
                      nw, nw};
    if (nn_alloc(l, arrays, sizes, sizeof sizes / sizeof *sizes) != 0)
        return -1;
    nn_tensor_set(l, 0, "weight", co, ci * 9, w, dw, mw, vw);
    nn_tensor_set(l, 1, "bias", co, 1, b, db, mb, vb);
    return 0;
}

static void conv_draw(nn_layer *l, pcg32_t *rng)
{
    size_t ci = l->in.c, co = l->out.c;
    nn_draw_uniform(rng, co * ci * 9, ci * 9, l->t[0].p);
    nn_draw_uniform(rng, co, ci * 9, l->t[1].p);
}

/* Whether position (r + d, s + e) is inside an H x W image. */
static int inside(size_t r, size_t s, int d, int e, size_t h, size_t w)
{
    long rr = (long)r + d, ss = (long)s + e;
    return rr >= 0 && ss >= 0 && rr < (long)h && ss < (long)w;
}

/* The kernel rows (or columns) [*k0, *k1) that stay inside an image of
 * n rows at row r. */
static void kernel_span(size_t r, size_t n, int *k0, int *k1)
{
    *k0 = r == 0;
    *k1 = r + 1 < n ? 3 : 2;
}

/* Output channels o0 .. o0 + 2 np - 1 at position (r, s) of one image
 * xi: np pairs of sums (base/pair.h) in registers, each from its bias
 * adding its terms inside the image in the order input channel, kernel
 * row, kernel column, from wt (the weights with the output channel last,
 * so that a term's weights for every output channel are side by side).
 * Each sum keeps its own order, so pairing them moves no bit. */
PAIR_INLINE void conv_block(size_t np, size_t o0, const nn_layer *l,
                            const double *xi, size_t r, size_t s, double *yo)
{
    size_t ci = l->in.c, co = l->out.c, w = l->in.w;
    int ky0, ky1, kx0, kx1;
    kernel_span(r, l->in.h, &ky0, &ky1);
    kernel_span(s, w, &kx0, &kx1);
    pair_t sum[4];
    pair_block_start(np, sum, l->t[1].p + o0);
    for (size_t c = 0; c < ci; c++)
        for (int ky = ky0; ky < ky1; ky++)
            for (int kx = kx0; kx < kx1; kx++) {
                size_t p = (r + ky - 1) * w + (s + kx - 1);
                pair_add_products(np, sum, pair_dup(xi[p * ci + c]),
                                  &l->wt[((c * 3 + ky) * 3 + kx) * co + o0]);
            }
    pair_block_store(np, yo + o0, sum);
}

/* Output channel o alone, the same sum. */
static double conv_one(const nn_layer *l, size_t o, const double *xi,
                       size_t r, size_t s)
{
    size_t ci = l->in.c, w = l->in.w;
    int ky0, ky1, kx0, kx1;
    kernel_span(r, l->in.h, &ky0, &ky1);
    kernel_span(s, w, &kx0, &kx1);
    double sum = l->t[1].p[o];
    for (size_t c = 0; c < ci; c++)
        for (int ky = ky0; ky < ky1; ky++)
            for (int kx = kx0; kx < kx1; kx++) {
                size_t p = (r + ky - 1) * w + (s + kx - 1);
                sum += l->t[0].p[((o * ci + c) * 3 + ky) * 3 + kx] *
                       xi[p * ci + c];
            }
    return sum;
}

/* Every output channel at every position: eight channels at a time, then
 * four, then two, then an odd last one alone (wt made again unless the
 * weights are the last pass's). */
static void conv_forward(nn_layer *l, const nn_pass *ps, size_t b,
                         const double *x)
{
    size_t ci = l->in.c, co = l->out.c, h = l->in.h, w = l->in.w;
    size_t np = h * w;
    for (size_t o = 0; !ps->same_weights && o < co; o++)
        for (size_t k = 0; k < ci * 9; k++)
            l->wt[k * co + o] = l->t[0].p[o * ci * 9 + k];
    for (size_t i = 0; i < b; i++)
        for (size_t r = 0; r < h; r++)
            for (size_t s = 0; s < w; s++) {
                const double *xi = &x[i * np * ci];
                double *yo = &l->y[(i * np + r * w + s) * co];
                size_t o = 0;
                for (; o + 8 <= co; o += 8)
                    conv_block(4, o, l, xi, r, s, yo);
                for (; o + 4 <= co; o += 4)
                    conv_block(2, o, l, xi, r, s, yo);
                for (; o + 2 <= co; o += 2)
                    conv_block(1, o, l, xi, r, s, yo);
                if (o < co)
                    yo[o] = conv_one(l, o, xi, r, s);
                for (o = 0; ps->f32 && o < co; o++)
                    yo[o] = nn_r32(yo[o]);
            }
}

/* The gradient of the weights of output channels o0 .. o0 + 2 np - 1 at
 * kernel place (c, ky, kx), into g (save, the output channel last): np
 * pairs of sums from 0 over the batch's positions i, r, s (in that order)
 * whose neighbour (r + ky - 1, s + kx - 1) is inside the image. */
PAIR_INLINE void grad_block(size_t np, size_t o0, const nn_layer *l,
                            size_t b, const double *x, const double *dy,
                            size_t c, int ky, int kx, double *g)
{
    size_t ci = l->in.c, co = l->out.c, h = l->in.h, w = l->in.w;
    size_t np_img = h * w;
    size_t r0 = ky == 0, r1 = ky == 2 ? h - 1 : h;
    size_t s0 = kx == 0, s1 = kx == 2 ? w - 1 : w;
    pair_t sum[4];
    pair_block_start(np, sum, NULL);
    for (size_t i = 0; i < b; i++)
        for (size_t r = r0; r < r1; r++)
            for (size_t s = s0; s < s1; s++) {
                size_t p = (r + ky - 1) * w + (s + kx - 1);
                pair_add_products(np, sum,
                                  pair_dup(x[(i * np_img + p) * ci + c]),
                                  &dy[(i * np_img + r * w + s) * co + o0]);
            }
    pair_block_store(np, &g[((c * 3 + ky) * 3 + kx) * co + o0], sum);
}

/* Output channel o alone, the same sum. */
static double grad_one(const nn_layer *l, size_t o, size_t b, const double *x,
                       const double *dy, size_t c, int ky, int kx)
{
    size_t ci = l->in.c, co = l->out.c, h = l->in.h, w = l->in.w;
    size_t np_img = h * w;
    double sum = 0.0;
    for (size_t i = 0; i < b; i++)
        for (size_t r = ky == 0; r < (ky == 2 ? h - 1 : h); r++)
            for (size_t s = kx == 0; s < (kx == 2 ? w - 1 : w); s++) {
                size_t p = (r + ky - 1) * w + (s + kx - 1);
                sum += dy[(i * np_img + r * w + s) * co + o] *
                       x[(i * np_img + p) * ci + c];
            }
    return sum;
}

/* dbias[o] = sum of dy over the batch's positions, and dw[o][c][ky][kx] =
 * sum over them of dy x at the neighbour (terms outside the image left
 * out), eight output channels at a time, then four, two and one. */
static void conv_grads(nn_layer *l, const nn_pass *ps, size_t b,
                       const double *x, const double *dy)
{
    size_t ci = l->in.c, co = l->out.c;
    size_t np = l->in.h * l->in.w;
    double *dw = l->t[0].g, *db = l->t[1].g, *g = l->save;
    for (size_t o = 0; o < co; o++) {
        double sb = 0.0;
        for (size_t i = 0; i < b; i++)
            for (size_t p = 0; p < np; p++)
                sb += dy[(i * np + p) * co + o];
        db[o] = nn_round(ps, sb);
    }
    for (size_t c = 0; c < ci; c++)
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
                size_t o = 0;
                for (; o + 8 <= co; o += 8)
                    grad_block(4, o, l, b, x, dy, c, ky, kx, g);
                for (; o + 4 <= co; o += 4)
                    grad_block(2, o, l, b, x, dy, c, ky, kx, g);
                for (; o + 2 <= co; o += 2)
                    grad_block(1, o, l, b, x, dy, c, ky, kx, g);
                if (o < co)
                    g[((c * 3 + ky) * 3 + kx) * co + o] =
                        grad_one(l, o, b, x, dy, c, ky, kx);
            }
    for (size_t o = 0; o < co; o++)
        for (size_t k = 0; k < ci * 9; k++)
            dw[o * ci * 9 + k] = nn_round(ps, g[k * co + o]);
}

/* dx at position (r, s), channel c: the outputs at (r - ky + 1,
 * s - kx + 1) that read it, over output channel, kernel row, column. */
static void conv_backward(nn_layer *l, const nn_pass *ps, size_t b,
                          const double *x, const double *dy, double *dx)
{
    conv_grads(l, ps, b, x, dy);
    if (!dx)
        return;
    size_t ci = l->in.c, co = l->out.c, h = l->in.h, w = l->in.w;
    size_t np = h * w;
    const double *wt = l->t[0].p;
    for (size_t i = 0; i < b; i++)
        for (size_t r = 0; r < h; r++)
            for (size_t s = 0; s < w; s++)
                for (size_t c = 0; c < ci; c++) {
                    double sum = 0.0;
                    for (size_t o = 0; o < co; o++)
                        for (int ky = 0; ky < 3; ky++)
                            for (int kx = 0; kx < 3; kx++) {
                                if (!inside(r, s, 1 - ky, 1 - kx, h, w))
                                    continue;
                                size_t p = (r + 1 - ky) * w + (s + 1 - kx);
                                sum += dy[(i * np + p) * co + o] *
                                       wt[((o * ci + c) * 3 + ky) * 3 + kx];
                            }
                    dx[(i * np + r * w + s) * ci + c] = nn_round(ps, sum);
                }
}

static double conv_work(const nn_layer *l)
{
    return 9.0 * (double)l->in.c * (double)nn_size(l->out);
}

const nn_kind nn_kind_conv = {
    .name = "conv",
    .arg = NN_ARG_COUNT,
    .help = "3 x 3 convolution, stride 1, zero padding 1, N output channels "
            "(nn.Conv2d(C_in, N, 3, padding=1))",
    .weighted = 1,
    .shape = conv_shape,
    .init = conv_init,
    .draw = conv_draw,
    .forward = conv_forward,
    .backward = conv_backward,
    .work = conv_work,
};
