/*
 * `conv:C`: a 3 x 3 convolution, stride 1, zero padding 1 (the output has
 * the input's H x W), C output channels: nn.Conv2d(C_in, C, 3,
 * padding=1). The weight is [C][C_in][3][3] as PyTorch holds it; every
 * sum starts from the bias (or 0) and adds the terms inside the image in
 * the order input channel, kernel row, kernel column (a padded position
 * adds nothing, not a zero).
 */
#include "model/nn.h"

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
    double **arrays[] = {&w, &dw, &mw, &vw, &b, &db, &mb, &vb, &l->y};
    size_t sizes[] = {nw, nw, nw, nw, co, co, co, co, cap * nn_size(l->out)};
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

static void conv_forward(nn_layer *l, const nn_pass *ps, size_t b,
                         const double *x)
{
    size_t ci = l->in.c, co = l->out.c, h = l->in.h, w = l->in.w;
    size_t np = h * w;
    const double *wt = l->t[0].p, *bias = l->t[1].p;
    for (size_t i = 0; i < b; i++)
        for (size_t r = 0; r < h; r++)
            for (size_t s = 0; s < w; s++)
                for (size_t o = 0; o < co; o++) {
                    double sum = bias[o];
                    for (size_t c = 0; c < ci; c++)
                        for (int ky = 0; ky < 3; ky++)
                            for (int kx = 0; kx < 3; kx++) {
                                if (!inside(r, s, ky - 1, kx - 1, h, w))
                                    continue;
                                size_t q = (r + ky - 1) * w + (s + kx - 1);
                                sum += wt[((o * ci + c) * 3 + ky) * 3 + kx] *
                                       x[(i * np + q) * ci + c];
                            }
                    l->y[(i * np + r * w + s) * co + o] = nn_round(ps, sum);
                }
}

static void conv_grads(nn_layer *l, const nn_pass *ps, size_t b,
                       const double *x, const double *dy)
{
    size_t ci = l->in.c, co = l->out.c, h = l->in.h, w = l->in.w;
    size_t np = h * w;
    double *dw = l->t[0].g, *db = l->t[1].g;
    for (size_t o = 0; o < co; o++) {
        double sb = 0.0;
        for (size_t i = 0; i < b; i++)
            for (size_t p = 0; p < np; p++)
                sb += dy[(i * np + p) * co + o];
        db[o] = nn_round(ps, sb);
        for (size_t c = 0; c < ci; c++)
            for (int ky = 0; ky < 3; ky++)
                for (int kx = 0; kx < 3; kx++) {
                    double sum = 0.0;
                    for (size_t i = 0; i < b; i++)
                        for (size_t r = 0; r < h; r++)
                            for (size_t s = 0; s < w; s++) {
                                if (!inside(r, s, ky - 1, kx - 1, h, w))
                                    continue;
                                size_t q = (r + ky - 1) * w + (s + kx - 1);
                                sum += dy[(i * np + r * w + s) * co + o] *
                                       x[(i * np + q) * ci + c];
                            }
                    dw[((o * ci + c) * 3 + ky) * 3 + kx] = nn_round(ps, sum);
                }
    }
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
