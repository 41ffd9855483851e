/*
 * The layer table (src/model/nn.h) and what the network does with it:
 * every kind's gradients against central finite differences of the loss,
 * in networks that put each kind in each place it can take (a table of
 * cases below: a new kind is a line there and its own forward check);
 * each kind's forward pass against a long double computation of its
 * definition written again here (the convolution's padding, the
 * flattening order of a linear layer after an image, layer and group
 * normalisation, batch norm over B H W values, dropout's documented
 * draws); the batch-free normalisations giving every row the same bits
 * whatever its batch; float32 storing float32 values only; the
 * optimisers' two steps and the schedules against their formulas; the
 * training-mode batch-norm Jacobian against its closed form
 * (docs/definitions.md, "The Jacobian") and finite differences; and the
 * radial part of the weights' gradient against its exact value; and the
 * linear layer's and the convolution's paired sums bit for bit against
 * the plain loops whose order they keep.
 */
#include "helpers.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/num.h"
#include "model/net.h"
#include "model/optim.h"

/* n rows of f values on scales 1, 2, 3, ... about 0.5, labels a noisy
 * rule of them. */
static void make_rows(test_rows *r, size_t n, size_t f, size_t k,
                      uint64_t seed)
{
    pcg32_t rng;
    pcg32_seed(&rng, seed, 81);
    r->n = n, r->f = f, r->k = k;
    r->x = malloc(n * f * sizeof *r->x);
    r->label = malloc(n * sizeof *r->label);
    assert_true(r->x && r->label);
    for (size_t i = 0; i < n; i++) {
        double s = 0.0;
        for (size_t c = 0; c < f; c++) {
            r->x[i * f + c] = 0.5 + (double)(c % 5 + 1) * test_rnd(&rng);
            s += r->x[i * f + c];
        }
        long cls = (long)floor((s / (double)f + 0.3 * test_rnd(&rng) + 1.0) *
                               (double)k / 3.0);
        r->label[i] = (int)(cls < 0 ? 0 : cls >= (long)k ? (long)k - 1 : cls);
    }
    r->d = (net_data){n, f, k, r->x, r->label, NULL};
}

/* The defaults with the network `layers`, batches of b. */
static void net_config(run_config *cfg, const char *layers, size_t b)
{
    bn_error err;
    run_default_config(cfg);
    cfg->model = RUN_MODEL_CLASSIFIER;
    cfg->batch_size = b;
    if (nn_parse(layers, &cfg->clf.net, &err) != 0)
        fail_msg("'%s': %s", layers, err.msg);
}

static void make_net(net_t *net, const run_config *cfg, size_t f, size_t k)
{
    bn_error err;
    if (net_init(net, cfg, f, k, &err) != 0)
        fail_msg("net_init: %s", err.msg);
}

/* Normalisations' parameters and buffers away from 1 and 0, so that no
 * gradient is checked only at a special point. */
static void perturb(net_t *net, uint64_t seed)
{
    pcg32_t rng;
    pcg32_seed(&rng, seed, 82);
    for (size_t i = 0; i < net->nl; i++) {
        nn_layer *l = &net->l[i];
        if (!l->kind->normalises)
            continue;
        for (size_t j = 0; j < l->t[0].rows; j++) {
            l->t[0].p[j] = 1.0 + 0.5 * test_rnd(&rng);
            l->t[1].p[j] = 0.3 * test_rnd(&rng);
        }
        for (size_t j = 0; l->kind->running && j < l->in.c; j++) {
            l->bn.rm[j] = 0.2 * test_rnd(&rng);
            l->bn.rv[j] = 1.0 + 0.5 * test_rnd(&rng);
        }
    }
}

/* ------------------------------------------------ finite differences */

/* Central differences with step 1e-5: truncation (step^2 / 6 |L'''|) and
 * rounding (1e-16 |L| / step) both below 1e-9 for a loss of size 1, so
 * |analytic - numeric| <= 1e-7 + 1e-6 |numeric| leaves a margin of 100
 * while a missing term (1e-2 or more) fails. A ReLU's kink would break the
 * premise: every value entering one must be 1e-3 from 0. A pass of
 * dropout draws its masks from the net's stream, which is put back before
 * each pass, so every pass drops the same values. */
#define FD_STEP 1e-5
#define FD_ABS 1e-7
#define FD_REL 1e-6

static double loss_at(net_t *net, const pcg32_t *rng, size_t b,
                      const double *x, const int *label, nn_bn_mode mode)
{
    net->drop_rng = *rng;
    return net_forward(net, b, x, label, mode, 1);
}

/* Whether every value entering a ReLU in the last pass is 1e-3 from its
 * kink (0 itself is fine: a dropped value, or one a ReLU before made 0,
 * sits there at any step). */
static int off_kinks(const net_t *net)
{
    for (size_t li = 1; li < net->nl; li++) {
        if (net->l[li].kind != &nn_kind_relu)
            continue;
        const double *pre = net->l[li - 1].y;
        for (size_t e = 0; e < net->b * nn_size(net->l[li].in); e++)
            if (!(fabs(pre[e]) > 1e-3) && pre[e] != 0.0)
                return 0;
    }
    return 1;
}

static void check_gradients(net_t *net, size_t b, const double *x,
                            const int *label, nn_bn_mode mode,
                            const char *what)
{
    pcg32_t rng = net->drop_rng;
    loss_at(net, &rng, b, x, label, mode);
    assert_true(off_kinks(net));
    net_backward(net);
    nn_tensor *t[2 * NN_MAX_LAYERS];
    size_t nt = net_tensors(net, t), checked = 0;
    for (size_t a = 0; a < nt; a++) {
        size_t n = t[a]->rows * t[a]->cols;
        double *g = malloc(n * sizeof *g);
        assert_non_null(g);
        memcpy(g, t[a]->g, n * sizeof *g);
        for (size_t e = 0; e < n; e++) {
            double p = t[a]->p[e];
            t[a]->p[e] = p + FD_STEP;
            double lp = loss_at(net, &rng, b, x, label, mode);
            t[a]->p[e] = p - FD_STEP;
            double lm = loss_at(net, &rng, b, x, label, mode);
            t[a]->p[e] = p;
            double fd = (lp - lm) / (2.0 * FD_STEP);
            if (!(fabs(g[e] - fd) <= FD_ABS + FD_REL * fabs(fd)))
                fail_msg("%s: %s[%zu] (mode %d): backward %.10g, finite "
                         "difference %.10g",
                         what, t[a]->name, e, (int)mode, g[e], fd);
            checked++;
        }
        free(g);
    }
    assert_true(checked > 0);
}

/* Every kind in the places it takes: after an input, after a linear
 * layer, after a convolution, before and after a normalisation. */
static const struct {
    const char *layers;
    size_t f, b;
} fd_cases[] = {
    {"linear:5 batch relu linear:K", 3, 6},
    {"linear:4 batch relu linear:3 batch relu linear:K", 3, 7},
    {"linear:5 layer relu linear:K", 3, 5},
    {"linear:6 group:3 relu linear:K", 3, 5},
    {"linear:6 group:6 relu linear:K", 3, 4},
    {"linear:5 relu batch linear:K", 3, 6},
    {"batch linear:4 relu linear:K", 3, 5},
    {"layer linear:K", 4, 3},
    {"linear:6 dropout:0.4 batch relu dropout:0.3 linear:K", 3, 8},
    {"none linear:4 none batch none relu linear:K", 3, 5},
    {"image:3x3 conv:2 batch relu linear:K", 9, 4},
    {"image:2x3 conv:3 group:3 relu conv:2 layer linear:K", 12, 3},
    {"image:3x2 conv:2 relu conv:2 batch linear:K", 6, 5},
    {"linear:4 batch linear:K", 3, 2}, /* B 2: the projections' limit */
};

/* The case's rows and net, from the first seed whose values all stay
 * 1e-3 from a ReLU's kink in both modes (test data chosen, not results). */
static int kink_free_case(size_t c, test_rows *r, net_t *net)
{
    for (uint64_t s = 0; s < 50; s++) {
        make_rows(r, fd_cases[c].b, fd_cases[c].f, 3, 30 + 100 * c + s);
        run_config cfg;
        net_config(&cfg, fd_cases[c].layers, fd_cases[c].b);
        cfg.clf.init_seed = 40 + c + s;
        make_net(net, &cfg, r->f, r->k);
        perturb(net, c + s);
        pcg32_t rng = net->drop_rng;
        int ok = 1;
        for (int m = 0; m < 2 && ok; m++) {
            loss_at(net, &rng, r->n, r->x, r->label,
                    m ? NN_BN_RUNNING : NN_BN_BATCH_KEEP);
            ok = off_kinks(net);
        }
        if (ok) {
            net->drop_rng = rng; /* the masks the check saw */
            return 0;
        }
        net_free(net);
        test_rows_free(r);
    }
    return -1;
}

static void test_gradients_every_kind(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof fd_cases / sizeof *fd_cases; c++) {
        test_rows r;
        net_t net;
        if (kink_free_case(c, &r, &net) != 0)
            fail_msg("%s: no test data off ReLU's kinks", fd_cases[c].layers);
        check_gradients(&net, r.n, r.x, r.label, NN_BN_BATCH_KEEP,
                        fd_cases[c].layers);
        /* Frozen batch norm: the buffers are constants. */
        check_gradients(&net, r.n, r.x, r.label, NN_BN_RUNNING,
                        fd_cases[c].layers);
        net_free(&net);
        test_rows_free(&r);
    }
}

/* ------------------------------------------------ forward passes */

/* The scores' shared rows (net_share_rows: the layers below the first
 * batch norm made once) move no bit: each mode's score, classes and
 * logits, and every batch norm's moments, from the shared rows and from
 * the rows themselves, for every network of fd_cases (a batch norm
 * first, none at all, after a convolution, dropout) in float64 and
 * float32. */
static void test_shared_rows(void **state)
{
    (void)state;
    enum { N = 23, K = 3, MAXC = 16 };
    for (size_t c = 0; c < sizeof fd_cases / sizeof *fd_cases; c++)
        for (int f32 = 0; f32 < 2; f32++) {
            test_rows r;
            net_t net;
            run_config cfg;
            bn_error err;
            make_rows(&r, N, fd_cases[c].f, K, 500 + c);
            net_config(&cfg, fd_cases[c].layers, fd_cases[c].b);
            cfg.clf.dtype = f32 ? NET_F32 : NET_F64;
            make_net(&net, &cfg, r.f, r.k);
            perturb(&net, c);
            size_t perm[N];
            for (size_t i = 0; i < N; i++)
                perm[i] = i * 7 % N;
            net_data sh = r.d;
            assert_int_equal(net_share_rows(&net, &sh, &err), 0);
            for (int mode = 0; mode < 2; mode++) {
                net_score s[2];
                int pred[2][N];
                double z[2][N * K];
                for (int h = 0; h < 2; h++)
                    assert_int_equal(
                        mode ? net_score_eval_mode(&net, h ? &sh : &r.d,
                                                   &s[h], pred[h], z[h], &err)
                             : net_score_train_mode(&net, h ? &sh : &r.d,
                                                    perm, &s[h], pred[h], z[h],
                                                    &err),
                        0);
                assert_int_equal(s[0].correct, s[1].correct);
                assert_memory_equal(&s[0].loss, &s[1].loss, sizeof s[0].loss);
                assert_memory_equal(pred[0], pred[1], sizeof pred[0]);
                assert_memory_equal(z[0], z[1], sizeof z[0]);
            }
            for (size_t i = 0; i < net_batch_layers(&net); i++) {
                size_t li = net_batch_layer(&net, i);
                double m[2][MAXC], v[2][MAXC];
                assert_true(net.l[li].in.c <= MAXC);
                for (int h = 0; h < 2; h++)
                    assert_int_equal(net_layer_moments(&net, h ? &sh : &r.d,
                                                       NULL, N, li, m[h], v[h],
                                                       &err),
                                     0);
                assert_memory_equal(m[0], m[1], net.l[li].in.c * sizeof **m);
                assert_memory_equal(v[0], v[1], net.l[li].in.c * sizeof **v);
            }
            free(sh.shared);
            net_free(&net);
            test_rows_free(&r);
        }
}

/* A layer of kind `layers` (one layer) on input shape in, batches of b. */
static void one_layer(nn_layer *l, const char *text, nn_shape in, size_t b)
{
    nn_net_spec spec;
    bn_error err;
    run_config cfg;
    run_default_config(&cfg);
    if (nn_parse(text, &spec, &err) != 0 ||
        nn_layer_init(l, &spec.l[0], 0, in, 3, b, &cfg.layer, &err) != 0)
        fail_msg("'%s': %s", text, err.msg);
}

static const nn_pass F64 = {NN_BN_BATCH_KEEP, 0, 0, NULL, 0};

/* Each kind's tensors start at zero in arrays of their own (nn_alloc,
 * base/carve.h): with AddressSanitizer the byte past each tensor's
 * values, gradients and moments is poisoned, so that a loop one past a
 * weight matrix is reported rather than reading its gradient. */
static void test_layer_tensors_keep_their_bounds(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        nn_shape in;
    } kinds[] = {
        {.text = "linear:4", .in = {3, 1, 1}},
        {.text = "conv:3", .in = {2, 4, 3}},
        {.text = "batch", .in = {3, 1, 1}},
        {.text = "layer", .in = {3, 1, 1}},
        {.text = "group:2", .in = {4, 2, 2}},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        nn_layer l;
        one_layer(&l, kinds[k].text, kinds[k].in, 2);
        assert_true(l.nt > 0);
        for (size_t i = 0; i < l.nt; i++) {
            const nn_tensor *t = &l.t[i];
            size_t n = t->rows * t->cols;
            const double *arr[] = {t->p, t->g, t->m, t->v};
            for (size_t a = 0; a < 4; a++) {
                if (!arr[a])
                    continue;
                for (size_t j = 0; j < n; j++)
                    if (a > 0) /* the gradients and moments start at 0 */
                        assert_true(arr[a][j] == 0.0);
#ifdef TEST_ASAN
                /* batch's gradients hold a device share's after their
                 * own c (nn_batch.c): 2 c doubles */
                int shares = a == 1 && strcmp(kinds[k].text, "batch") == 0;
                assert_true(__asan_address_is_poisoned(arr[a] +
                                                       (shares ? 2 : 1) * n));
#endif
            }
        }
        nn_layer_free(&l);
    }
}

/* conv:C against the convolution written out: position (r, s) of output
 * channel o is bias + sum over c, ky, kx of w x(r + ky - 1, s + kx - 1),
 * zero outside the image. */
static void test_conv_forward(void **state)
{
    (void)state;
    nn_shape in = {2, 4, 3};
    size_t b = 2, np = 12;
    nn_layer l;
    one_layer(&l, "conv:3", in, b);
    pcg32_t rng;
    pcg32_seed(&rng, 5, 83);
    nn_draw_uniform(&rng, l.t[0].rows * l.t[0].cols, 18, l.t[0].p);
    nn_draw_uniform(&rng, 3, 18, l.t[1].p);
    double x[2 * 12 * 2];
    for (size_t i = 0; i < sizeof x / sizeof *x; i++)
        x[i] = test_rnd(&rng);
    l.kind->forward(&l, &F64, b, x);
    for (size_t i = 0; i < b; i++)
        for (long r = 0; r < 4; r++)
            for (long s = 0; s < 3; s++)
                for (size_t o = 0; o < 3; o++) {
                    long double want = l.t[1].p[o];
                    for (size_t c = 0; c < 2; c++)
                        for (long ky = 0; ky < 3; ky++)
                            for (long kx = 0; kx < 3; kx++) {
                                long rr = r + ky - 1, ss = s + kx - 1;
                                if (rr < 0 || ss < 0 || rr >= 4 || ss >= 3)
                                    continue;
                                want += (long double)
                                            l.t[0].p[((o * 2 + c) * 3 + ky) * 3 +
                                                     kx] *
                                        x[(i * np + rr * 3 + ss) * 2 + c];
                            }
                    double got = l.y[(i * np + r * 3 + s) * 3 + o];
                    assert_close(got, want, 1e-15, 1.0);
                }
    nn_layer_free(&l);
}

/* A linear layer after an image reads it as nn.Flatten does: column
 * c H W + p is channel c at position p, held at p C + c. */
static void test_linear_flattens(void **state)
{
    (void)state;
    nn_shape in = {3, 2, 2};
    nn_layer l;
    one_layer(&l, "linear:2", in, 1);
    double x[12];
    for (size_t q = 0; q < 12; q++)
        x[q] = (double)(q + 1); /* x at place p C + c */
    for (size_t e = 0; e < 24; e++)
        l.t[0].p[e] = 0.0;
    /* Output 0 reads PyTorch's column 1 (channel 0, position 1), output 1
     * column 4 (channel 1, position 0). */
    l.t[0].p[0 * 12 + 1] = 1.0;
    l.t[0].p[1 * 12 + 4] = 1.0;
    l.t[1].p[0] = l.t[1].p[1] = 0.0;
    l.kind->forward(&l, &F64, 1, x);
    assert_true(l.y[0] == x[1 * 3 + 0]);
    assert_true(l.y[1] == x[0 * 3 + 1]);
    nn_layer_free(&l);
    /* image:HxW reads a row the same way, channel-major. */
    one_layer(&l, "image:2x2", (nn_shape){12, 1, 1}, 1);
    l.kind->forward(&l, &F64, 1, x);
    for (size_t c = 0; c < 3; c++)
        for (size_t p = 0; p < 4; p++)
            assert_true(l.y[p * 3 + c] == x[c * 4 + p]);
    nn_layer_free(&l);
}

/* A value whose sums depend on their order: a sign, and a scale from
 * 2^-20 to 2^20, so that adding the same terms in another order gives
 * other bits. */
static double spread(pcg32_t *rng)
{
    return test_rnd(rng) * ldexp(1.0, (int)(pcg32_next(rng) % 41) - 20);
}

/* linear:N's sums, bit for bit, against the plain loops in double that
 * define their order: y[i][o] from bias[o] adding w[o][c] x[i][c] for c
 * in PyTorch's order, dw[o][c] and dbias[o] from 0 over the rows i,
 * dx[i][c] from 0 over the outputs o, each rounded to float32 once in
 * float32; for widths that take every path of the paired loops (blocks
 * of eight outputs, four, a pair, an odd last one) and an image's
 * columns. */
static void linear_order_case(size_t n, nn_shape in, size_t b, int f32)
{
    nn_layer l;
    char text[32];
    snprintf(text, sizeof text, "linear:%zu", n);
    one_layer(&l, text, in, b);
    size_t m = nn_size(in), c = in.c, np = nn_positions(in);
    nn_pass ps = {NN_BN_BATCH_KEEP, f32, 0, NULL, 0};
    pcg32_t rng;
    pcg32_seed(&rng, n * 131 + m, 7);
    double *x = malloc(b * m * sizeof *x), *dy = malloc(b * n * sizeof *dy),
           *dx = malloc(b * m * sizeof *dx);
    assert_non_null(x), assert_non_null(dy), assert_non_null(dx);
    for (size_t e = 0; e < n * m; e++)
        l.t[0].p[e] = spread(&rng);
    for (size_t o = 0; o < n; o++)
        l.t[1].p[o] = spread(&rng);
    for (size_t e = 0; e < b * m; e++)
        x[e] = spread(&rng);
    for (size_t e = 0; e < b * n; e++)
        dy[e] = spread(&rng);
    l.kind->forward(&l, &ps, b, x);
    l.kind->backward(&l, &ps, b, x, dy, dx);
    /* PyTorch's column j (channel j / np, position j % np) is held at
     * place (j % np) c + j / np. */
    const double *w = l.t[0].p;
    for (size_t i = 0; i < b; i++)
        for (size_t o = 0; o < n; o++) {
            double s = l.t[1].p[o];
            for (size_t j = 0; j < m; j++)
                s += w[o * m + j] * x[i * m + (j % np) * c + j / np];
            assert_true(l.y[i * n + o] == nn_round(&ps, s));
        }
    for (size_t o = 0; o < n; o++) {
        double sb = 0.0;
        for (size_t i = 0; i < b; i++)
            sb += dy[i * n + o];
        assert_true(l.t[1].g[o] == nn_round(&ps, sb));
        for (size_t j = 0; j < m; j++) {
            double s = 0.0;
            for (size_t i = 0; i < b; i++)
                s += dy[i * n + o] * x[i * m + (j % np) * c + j / np];
            assert_true(l.t[0].g[o * m + j] == nn_round(&ps, s));
        }
    }
    for (size_t i = 0; i < b; i++)
        for (size_t j = 0; j < m; j++) {
            double s = 0.0;
            for (size_t o = 0; o < n; o++)
                s += dy[i * n + o] * w[o * m + j];
            assert_true(dx[i * m + (j % np) * c + j / np] == nn_round(&ps, s));
        }
    free(x), free(dy), free(dx);
    nn_layer_free(&l);
}

static void test_linear_order(void **state)
{
    (void)state;
    static const size_t widths[] = {1, 2, 3, 4, 7, 8, 11, 14, 16, 19};
    for (size_t a = 0; a < sizeof widths / sizeof *widths; a++)
        for (int f32 = 0; f32 < 2; f32++) {
            linear_order_case(widths[a], (nn_shape){widths[a] + 4, 1, 1}, 5,
                              f32);
            linear_order_case(widths[a], (nn_shape){3, 2, 3}, 4, f32);
        }
}

/* conv:N's forward pass and weight gradients, bit for bit, against the
 * plain loops in double that define their order: y from the bias adding
 * w x over input channel, kernel row, kernel column; dbias and dw from 0
 * over the batch's rows and positions; terms outside the image left out;
 * each rounded to float32 once in float32. */
static void conv_order_case(size_t n, nn_shape in, size_t b, int f32)
{
    nn_layer l;
    char text[32];
    snprintf(text, sizeof text, "conv:%zu", n);
    one_layer(&l, text, in, b);
    size_t ci = in.c, h = in.h, w = in.w, np = h * w;
    nn_pass ps = {NN_BN_BATCH_KEEP, f32, 0, NULL, 0};
    pcg32_t rng;
    pcg32_seed(&rng, n * 17 + np, 9);
    double *x = malloc(b * np * ci * sizeof *x),
           *dy = malloc(b * np * n * sizeof *dy);
    assert_non_null(x), assert_non_null(dy);
    for (size_t e = 0; e < n * ci * 9; e++)
        l.t[0].p[e] = spread(&rng);
    for (size_t o = 0; o < n; o++)
        l.t[1].p[o] = spread(&rng);
    for (size_t e = 0; e < b * np * ci; e++)
        x[e] = spread(&rng);
    for (size_t e = 0; e < b * np * n; e++)
        dy[e] = spread(&rng);
    l.kind->forward(&l, &ps, b, x);
    l.kind->backward(&l, &ps, b, x, dy, NULL);
    const double *wt = l.t[0].p;
    for (size_t i = 0; i < b; i++)
        for (long r = 0; r < (long)h; r++)
            for (long s = 0; s < (long)w; s++)
                for (size_t o = 0; o < n; o++) {
                    double sum = l.t[1].p[o];
                    for (size_t c = 0; c < ci; c++)
                        for (long ky = 0; ky < 3; ky++)
                            for (long kx = 0; kx < 3; kx++) {
                                long rr = r + ky - 1, ss = s + kx - 1;
                                if (rr < 0 || ss < 0 || rr >= (long)h ||
                                    ss >= (long)w)
                                    continue;
                                sum += wt[((o * ci + c) * 3 + ky) * 3 + kx] *
                                       x[(i * np + rr * w + ss) * ci + c];
                            }
                    assert_true(l.y[(i * np + r * w + s) * n + o] ==
                                nn_round(&ps, sum));
                }
    for (size_t o = 0; o < n; o++) {
        double sb = 0.0;
        for (size_t e = 0; e < b * np; e++)
            sb += dy[e * n + o];
        assert_true(l.t[1].g[o] == nn_round(&ps, sb));
        for (size_t c = 0; c < ci; c++)
            for (long ky = 0; ky < 3; ky++)
                for (long kx = 0; kx < 3; kx++) {
                    double sum = 0.0;
                    for (size_t i = 0; i < b; i++)
                        for (long r = 0; r < (long)h; r++)
                            for (long s = 0; s < (long)w; s++) {
                                long rr = r + ky - 1, ss = s + kx - 1;
                                if (rr < 0 || ss < 0 || rr >= (long)h ||
                                    ss >= (long)w)
                                    continue;
                                sum += dy[(i * np + r * w + s) * n + o] *
                                       x[(i * np + rr * w + ss) * ci + c];
                            }
                    assert_true(l.t[0].g[((o * ci + c) * 3 + ky) * 3 + kx] ==
                                nn_round(&ps, sum));
                }
    }
    free(x), free(dy);
    nn_layer_free(&l);
}

static void test_conv_order(void **state)
{
    (void)state;
    static const size_t widths[] = {1, 2, 3, 4, 5, 8, 11, 14};
    for (size_t a = 0; a < sizeof widths / sizeof *widths; a++)
        for (int f32 = 0; f32 < 2; f32++) {
            conv_order_case(widths[a], (nn_shape){2, 3, 4}, 2, f32);
            conv_order_case(widths[a], (nn_shape){1, 1, 3}, 3, f32);
        }
}

/* Whether the value at row i2, place q2 is normalised with the one at row
 * i, place q: batch norm's channel over the batch, layer norm's row,
 * group norm's row and group of channels. */
static int same_set(const nn_layer *l, size_t i, size_t q, size_t i2,
                    size_t q2)
{
    size_t c = l->in.c, g = l->kind == &nn_kind_group ? l->spec.n : 1;
    if (l->kind == &nn_kind_batch)
        return q2 % c == q % c;
    return i2 == i && (l->kind == &nn_kind_layer ||
                       q2 % c / (c / g) == q % c / (c / g));
}

/* The normalisations against their definitions in long double: each set
 * of values (a row for layer, a group of channels for group:G, a
 * channel over B H W for batch) gets (x - mean) / sqrt(var + eps), var
 * with divisor the set's size, then the affine step. */
static void check_norm(const char *text, nn_shape in, size_t b)
{
    nn_layer l;
    one_layer(&l, text, in, b);
    size_t c = in.c, np = nn_positions(in), n = c * np;
    pcg32_t rng;
    pcg32_seed(&rng, 9, 84);
    double *x = malloc(b * n * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < b * n; i++)
        x[i] = 3.0 + 2.0 * test_rnd(&rng);
    for (size_t j = 0; j < l.t[0].rows; j++) {
        l.t[0].p[j] = 1.0 + 0.5 * test_rnd(&rng);
        l.t[1].p[j] = test_rnd(&rng);
    }
    l.kind->forward(&l, &F64, b, x);
    double eps = l.bn.eps;
    for (size_t i = 0; i < b; i++)
        for (size_t q = 0; q < n; q++) {
            size_t ch = q % c, p = q / c;
            /* The set the value at row i, place q belongs to. */
            long double s = 0, ss = 0;
            size_t count = 0;
            for (size_t i2 = 0; i2 < b; i2++)
                for (size_t q2 = 0; q2 < n; q2++)
                    if (same_set(&l, i, q, i2, q2))
                        s += x[i2 * n + q2], count++;
            long double m = s / count;
            for (size_t i2 = 0; i2 < b; i2++)
                for (size_t q2 = 0; q2 < n; q2++)
                    if (same_set(&l, i, q, i2, q2))
                        ss += (x[i2 * n + q2] - m) * (x[i2 * n + q2] - m);
            size_t j = l.kind == &nn_kind_layer ? ch * np + p : ch;
            long double want = l.t[0].p[j] * (x[i * n + q] - m) /
                                   sqrtl(ss / count + eps) +
                               l.t[1].p[j];
            assert_close(l.y[i * n + q], want, 1e-14, 1.0);
            /* Batch norm's float64 pass makes two channels at a time the
             * bits of the scalar expression on its own statistics. */
            if (l.kind == &nn_kind_batch) {
                double xh = (x[i * n + q] - l.mean[ch]) / l.sd[ch];
                assert_true(l.save[i * n + q] == xh);
                assert_true(l.y[i * n + q] == l.t[0].p[ch] * xh + l.t[1].p[ch]);
            }
        }
    free(x);
    nn_layer_free(&l);
}

static void test_norm_forward(void **state)
{
    (void)state;
    check_norm("batch", (nn_shape){3, 1, 1}, 5);
    check_norm("batch", (nn_shape){6, 1, 1}, 4);
    check_norm("batch", (nn_shape){2, 3, 2}, 3); /* BatchNorm2d */
    check_norm("layer", (nn_shape){5, 1, 1}, 3);
    check_norm("layer", (nn_shape){2, 2, 3}, 2);
    check_norm("group:2", (nn_shape){4, 1, 1}, 3);
    check_norm("group:2", (nn_shape){4, 3, 1}, 2);
    check_norm("group:1", (nn_shape){3, 2, 2}, 2);
}

/* Without a running statistic nothing depends on the batch: a row alone,
 * in another batch and in evaluation mode gives the same bits, so the two
 * scores are one function (their gap is 0 exactly). Batch norm, for
 * contrast, does not. */
static void test_batch_free(void **state)
{
    (void)state;
    static const char *const nets[] = {
        "linear:6 layer relu linear:6 group:3 relu linear:K",
        "image:2x2 conv:4 group:2 relu layer dropout:0.5 linear:K",
        "linear:6 batch relu linear:K",
    };
    test_rows r;
    make_rows(&r, 12, 4, 3, 60);
    for (size_t t = 0; t < 3; t++) {
        run_config cfg;
        net_config(&cfg, nets[t], 6);
        net_t net;
        make_net(&net, &cfg, 4, 3);
        perturb(&net, t);
        size_t k = net.k;
        double alone[3], in6[3 * 6], ev[3];
        net_forward(&net, 1, r.x, r.label, NN_BN_BATCH_KEEP, 0);
        memcpy(alone, net_logits(&net), k * sizeof *alone);
        net_forward(&net, 6, r.x, r.label, NN_BN_BATCH_KEEP, 0);
        memcpy(in6, net_logits(&net), 6 * k * sizeof *in6);
        net_forward(&net, 1, r.x, r.label, NN_BN_RUNNING, 0);
        memcpy(ev, net_logits(&net), k * sizeof *ev);
        int same = memcmp(alone, in6, k * sizeof *alone) == 0 &&
                   memcmp(alone, ev, k * sizeof *ev) == 0;
        assert_int_equal(same, t < 2);
        net_free(&net);
    }
    test_rows_free(&r);
}

/* dropout:P: each value of a training pass kept when the documented
 * uniform (two draws of PCG32(init_seed, 16), in the row's PyTorch order)
 * is >= P, and then scaled by 1 / (1 - P); outside training the identity. */
static void test_dropout(void **state)
{
    (void)state;
    nn_shape in = {2, 2, 2};
    size_t b = 300, n = 8;
    nn_layer l;
    one_layer(&l, "dropout:0.3", in, b);
    double *x = malloc(b * n * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < b * n; i++)
        x[i] = 1.0 + (double)(i % 7);
    pcg32_t rng, mine;
    pcg32_seed(&rng, 7, PCG32_INITSEQ_DROPOUT);
    pcg32_seed(&mine, 7, 16);
    nn_pass ps = {NN_BN_BATCH, 0, 1, &rng, 0};
    l.kind->forward(&l, &ps, b, x);
    size_t kept = 0;
    double scale = 1.0 / (1.0 - 0.3);
    for (size_t i = 0; i < b; i++)
        for (size_t c = 0; c < 2; c++)
            for (size_t p = 0; p < 4; p++) {
                double a = (double)(pcg32_next(&mine) >> 5);
                double bb = (double)(pcg32_next(&mine) >> 6);
                double u = (a * 67108864.0 + bb) / 9007199254740992.0;
                size_t q = i * n + p * 2 + c;
                double want = u >= 0.3 ? x[q] * scale : 0.0;
                assert_true(l.y[q] == want);
                kept += u >= 0.3;
            }
    /* 2400 values kept with probability 0.7: 1680 +- 22.4 (1 sd). */
    assert_true(kept > 1680 - 5 * 23 && kept < 1680 + 5 * 23);
    nn_pass off = {NN_BN_RUNNING, 0, 0, &rng, 0};
    l.kind->forward(&l, &off, b, x);
    assert_memory_equal(l.y, x, b * n * sizeof *x);
    free(x);
    nn_layer_free(&l);
}

/* ------------------------------------------------ float32 */

static int all_f32(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((double)(float)v[i] != v[i])
            return 0;
    return 1;
}

/* In float32 every value the network keeps is a float32 value: the
 * parameters, their gradients, the optimisers' states, each layer's
 * outputs and saved values, the buffers; and it is float64's network to
 * float32's rounding, not to float64's. */
static void test_float32_holds_float32(void **state)
{
    (void)state;
    static const char *const nets[] = {
        "linear:8 batch relu dropout:0.2 linear:6 layer relu linear:K",
        "image:2x3 conv:4 batch relu group:2 linear:K",
    };
    static const net_optimizer opts[] = {NET_OPT_NESTEROV, NET_OPT_ADAMW};
    test_rows r;
    make_rows(&r, 40, 6, 3, 70);
    size_t *perm = malloc(r.n * sizeof *perm);
    assert_non_null(perm);
    for (size_t i = 0; i < r.n; i++)
        perm[i] = (i * 7) % r.n;
    for (size_t t = 0; t < 2; t++) {
        run_config cfg;
        net_config(&cfg, nets[t], 8);
        cfg.epochs = 2;
        cfg.clf.optimizer = opts[t];
        cfg.clf.sgd_momentum = 0.9;
        cfg.clf.weight_decay = 0.01;
        cfg.clf.lr = 0.05;
        cfg.clf.dtype = NET_F32;
        net_t a, d;
        make_net(&a, &cfg, r.f, r.k);
        bn_error err;
        assert_int_equal(net_train(&a, &cfg, &r.d, perm, NULL, &err), 0);
        for (size_t i = 0; i < a.nl; i++) {
            const nn_layer *l = &a.l[i];
            assert_true(all_f32(l->y, a.b * nn_size(l->out)));
            for (size_t e = 0; e < l->nt; e++) {
                size_t m = l->t[e].rows * l->t[e].cols;
                assert_true(all_f32(l->t[e].p, m) && all_f32(l->t[e].g, m) &&
                            all_f32(l->t[e].m, m) && all_f32(l->t[e].v, m));
            }
            if (l->kind->running)
                assert_true(all_f32(l->bn.rm, l->in.c) &&
                            all_f32(l->bn.rv, l->in.c) &&
                            all_f32(l->save, a.b * nn_size(l->in)));
        }
        /* The loss of one pass from the same weights: float32's rounding
         * apart (a few 2^-24 of it, through four layers), not float64's
         * and not more. */
        cfg.clf.dtype = NET_F64;
        make_net(&d, &cfg, r.f, r.k);
        nn_tensor *ta[2 * NN_MAX_LAYERS], *td[2 * NN_MAX_LAYERS];
        size_t nt = net_tensors(&a, ta);
        net_tensors(&d, td);
        for (size_t e = 0; e < nt; e++)
            memcpy(td[e]->p, ta[e]->p,
                   ta[e]->rows * ta[e]->cols * sizeof(double));
        for (size_t i = 0; i < a.nl; i++)
            if (a.l[i].kind->running) {
                memcpy(d.l[i].bn.rm, a.l[i].bn.rm, a.l[i].in.c * sizeof(double));
                memcpy(d.l[i].bn.rv, a.l[i].bn.rv, a.l[i].in.c * sizeof(double));
            }
        double l32 = net_forward(&a, 8, r.x, r.label, NN_BN_RUNNING, 0);
        double l64 = net_forward(&d, 8, r.x, r.label, NN_BN_RUNNING, 0);
        double rel = fabs(l32 - l64) / l64;
        assert_true(rel > 1e-12 && rel < 1e-5);
        net_free(&a);
        net_free(&d);
    }
    free(perm);
    test_rows_free(&r);
}

/* ------------------------------------------------ optimisers */

/* Every parameter 1, every gradient 0.5 then -0.25, lr 0.1, two steps,
 * against the update formulas of docs/definitions.md worked out in long
 * double. */
static long double ld_step(net_optimizer o, long double p, const double *g,
                           int steps, const clf_settings *s)
{
    long double m = 0, v = 0, lr = s->lr, wd = s->weight_decay;
    for (int t = 1; t <= steps; t++) {
        long double gt = g[t - 1];
        if (o == NET_OPT_SGD || o == NET_OPT_NESTEROV) {
            gt += wd * p;
            m = t == 1 ? gt : s->sgd_momentum * m + gt;
            p -= lr * (o == NET_OPT_NESTEROV ? gt + s->sgd_momentum * m : m);
            continue;
        }
        if (o == NET_OPT_ADAMW)
            p *= 1.0L - lr * wd;
        else
            gt += wd * p;
        m = s->beta1 * m + (1.0L - s->beta1) * gt;
        v = s->beta2 * v + (1.0L - s->beta2) * gt * gt;
        long double mh = m / (1.0L - powl(s->beta1, t));
        long double vh = sqrtl(v) / sqrtl(1.0L - powl(s->beta2, t));
        p -= lr * mh / (vh + s->adam_eps);
    }
    return p;
}

static void test_optimisers(void **state)
{
    (void)state;
    static const double g[2] = {0.5, -0.25};
    for (int o = 0; o < NET_OPT_COUNT; o++) {
        run_config cfg;
        net_config(&cfg, "linear:2 batch relu linear:K", 4);
        cfg.clf.optimizer = (net_optimizer)o;
        cfg.clf.lr = 0.1;
        cfg.clf.sgd_momentum = 0.9;
        cfg.clf.weight_decay = 0.01;
        cfg.clf.beta1 = 0.8;
        cfg.clf.beta2 = 0.99;
        cfg.clf.adam_eps = 1e-3; /* large enough to count */
        net_t net;
        make_net(&net, &cfg, 2, 2);
        nn_tensor *t[2 * NN_MAX_LAYERS];
        size_t nt = net_tensors(&net, t);
        for (int step = 0; step < 2; step++) {
            for (size_t a = 0; a < nt; a++)
                for (size_t e = 0; e < t[a]->rows * t[a]->cols; e++) {
                    if (step == 0)
                        t[a]->p[e] = 1.0;
                    t[a]->g[e] = g[step];
                }
            net_optim_step(&net, &cfg);
            long double want =
                ld_step((net_optimizer)o, 1.0L, g, step + 1, &cfg.clf);
            for (size_t a = 0; a < nt; a++)
                for (size_t e = 0; e < t[a]->rows * t[a]->cols; e++)
                    if (fabsl(t[a]->p[e] - want) > 1e-15L)
                        fail_msg("%s step %d: %.17g, formula %.17Lg",
                                 optim_name(o), step + 1, t[a]->p[e], want);
        }
        net_free(&net);
    }
}

/* The learning rate: warm-up (t + 1) / W over the first W steps, then
 * the schedule of the epoch: step_factor^floor(e / step_epochs), or
 * (1 + cos(pi e / E)) / 2. */
static void test_schedules(void **state)
{
    (void)state;
    clf_settings s;
    memset(&s, 0, sizeof s);
    s.lr = 0.3;
    assert_true(optim_lr(&s, 5, 2, 10) == 0.3);
    s.warmup = 4;
    for (size_t t = 0; t < 8; t++)
        assert_rel(optim_lr(&s, t, 0, 10),
                   0.3L * (t < 4 ? (long double)(t + 1) / 4 : 1.0L), 1e-15);
    s.warmup = 0;
    s.schedule = NET_SCHED_STEP;
    s.step_epochs = 3;
    s.step_factor = 0.5;
    for (unsigned long e = 0; e < 10; e++)
        assert_rel(optim_lr(&s, 0, e, 10), 0.3L * powl(0.5L, e / 3), 1e-15);
    s.schedule = NET_SCHED_COSINE;
    for (unsigned long e = 0; e < 10; e++)
        assert_close(optim_lr(&s, 0, e, 10),
                     0.3L * (1.0L + cosl(3.14159265358979323846264338L *
                                         (long double)e / 10)) /
                         2,
                     1e-15, 0.3);
}

/* ------------------------------------------------ the Jacobian */

/* Training-mode batch norm of one channel, B values x: y = gamma xhat +
 * beta with xhat = (x - m) / sqrt(v + eps), m and v the batch's (divisor
 * B). Its Jacobian (docs/definitions.md) is
 *   dy_i / dx_k = (gamma / sd) (delta_ik - 1/B - xhat_i xhat_k / B),
 * sd = sqrt(v + eps), exactly: eps enters through sd and xhat only. The
 * layer's backward, fed the unit vector e_i as dy, gives row i; the
 * formula in long double and central differences of the forward pass
 * must agree with it. */
static void jacobian_case(size_t b, double eps, double gamma, uint64_t seed)
{
    pcg32_t rng;
    pcg32_seed(&rng, seed, 85);
    double x[16], xhat[16], dy[16], dx[16], g = gamma, sd, dg, dbe;
    assert_true(b <= 16);
    for (size_t i = 0; i < b; i++)
        x[i] = 2.0 + test_rnd(&rng) * (double)(i % 3 + 1);
    long double m = 0, v = 0;
    for (size_t i = 0; i < b; i++)
        m += x[i];
    m /= b;
    for (size_t i = 0; i < b; i++)
        v += (x[i] - m) * (x[i] - m);
    v /= b;
    long double lsd = sqrtl(v + eps);
    sd = (double)lsd;
    for (size_t i = 0; i < b; i++)
        xhat[i] = (double)((x[i] - m) / lsd);
    bn_config cfg;
    run_config rc;
    run_default_config(&rc);
    cfg = rc.layer;
    cfg.eps = eps;
    cfg.gamma = gamma;
    bn_layer layer;
    assert_int_equal(bn_init(&layer, 1, &cfg), 0);
    for (size_t i = 0; i < b; i++) {
        for (size_t k = 0; k < b; k++)
            dy[k] = k == i;
        nn_batch_train_backward(b, 1, xhat, &g, &sd, dy, dx, &dg, &dbe);
        for (size_t k = 0; k < b; k++) {
            long double want = (long double)gamma / lsd *
                               ((i == k) - 1.0L / b -
                                (long double)xhat[i] * xhat[k] / b);
            assert_close(dx[k], want, 1e-14, fabsl(gamma / lsd));
            /* dy_i / dx_k by central differences of the forward pass. */
            double keep = x[k], y[16], mean, var;
            x[k] = keep + FD_STEP;
            bn_batch_forward(&layer, b, x, y, &mean, &var);
            double yp = y[i];
            x[k] = keep - FD_STEP;
            bn_batch_forward(&layer, b, x, y, &mean, &var);
            double ym = y[i];
            x[k] = keep;
            double fd = (yp - ym) / (2.0 * FD_STEP);
            assert_close(dx[k], fd, 1e-6, fabsl(gamma / lsd));
        }
    }
    bn_free(&layer);
}

static void test_jacobian(void **state)
{
    (void)state;
    jacobian_case(2, 1e-5, 1.0, 1);
    jacobian_case(5, 1e-5, 1.3, 2);
    jacobian_case(16, 1e-5, -0.7, 3);
    jacobian_case(4, 0.5, 1.0, 4); /* eps that matters: still exact */
}

/* ------------------------------------------------ the radial part */

/* For weights w_j right before a training-mode batch norm (unit j of a
 * linear or conv layer), w_j . dL/dw_j = gamma_j dgamma_j eps / (v_j +
 * eps) exactly (docs/definitions.md, "The radial part"): 0 only as eps
 * is. Both against the backward pass, for eps 1e-5 and 0.5. */
static void radial_case(const char *layers, size_t f, double eps)
{
    test_rows r;
    make_rows(&r, 9, f, 3, 90);
    run_config cfg;
    net_config(&cfg, layers, 9);
    cfg.layer.eps = eps;
    net_t net;
    make_net(&net, &cfg, f, 3);
    perturb(&net, 3);
    net_forward(&net, 9, r.x, r.label, NN_BN_BATCH, 0);
    net_backward(&net);
    size_t checked = 0;
    for (size_t i = 0; i < net.nl; i++) {
        if (!net_spec_scale_invariant(&net.spec, i))
            continue;
        const nn_tensor *w = &net.l[net_weighted_before(&net.spec, i)].t[0];
        const nn_layer *bn = &net.l[i];
        for (size_t j = 0; j < w->rows; j++) {
            long double dot = 0, ww = 0, gg = 0;
            for (size_t c = 0; c < w->cols; c++) {
                dot += (long double)w->p[j * w->cols + c] * w->g[j * w->cols + c];
                ww += (long double)w->p[j * w->cols + c] * w->p[j * w->cols + c];
                gg += (long double)w->g[j * w->cols + c] * w->g[j * w->cols + c];
            }
            long double v = bn->var[j];
            long double exact = (long double)bn->bn.gamma[j] * bn->t[0].g[j] *
                                eps / (v + eps);
            assert_close(dot, exact, 1e-13, sqrtl(ww) * sqrtl(gg));
            /* Not 0 up to rounding: eps's part is there. */
            assert_true(fabsl(exact) > 1e-9L * sqrtl(ww) * sqrtl(gg) ||
                        eps < 1e-4);
            checked++;
        }
    }
    assert_true(checked > 0);
    net_free(&net);
    test_rows_free(&r);
}

static void test_radial(void **state)
{
    (void)state;
    radial_case("linear:4 batch relu linear:K", 3, 1e-5);
    radial_case("linear:4 batch relu linear:K", 3, 0.5);
    radial_case("linear:5 none batch relu linear:3 batch linear:K", 4, 0.3);
    radial_case("image:2x2 conv:3 batch relu linear:K", 8, 0.2);
}

/* ------------------------------------------------ declared networks */

static void expect_spec(const char *text, size_t f, size_t k,
                        const char *words)
{
    nn_net_spec spec;
    bn_error err;
    err.msg[0] = '\0';
    int rc = nn_parse(text, &spec, &err);
    if (rc == 0)
        rc = nn_shapes(&spec, f, k, NULL, NULL, &err);
    if (!words) {
        if (rc != 0)
            fail_msg("'%s' refused: %s", text, err.msg);
        char back[512];
        nn_format(&spec, back, sizeof back);
        if (strcmp(back, text) != 0)
            fail_msg("'%s' reads back as '%s'", text, back);
        return;
    }
    if (rc == 0)
        fail_msg("'%s' accepted", text);
    if (!strstr(err.msg, words))
        fail_msg("'%s': message '%s' does not say '%s'", text, err.msg, words);
}

static void test_declared_networks(void **state)
{
    (void)state;
    expect_spec("linear:16 batch relu linear:K", 8, 4, NULL);
    expect_spec("image:8x8 conv:4 batch relu linear:K", 64, 10, NULL);
    expect_spec("linear:8 dropout:0.25 group:4 relu layer linear:3", 5, 3,
                NULL);
    expect_spec("linear:16 batch relu", 8, 4, "must end with");
    expect_spec("linear:16 batch relu linear:5", 8, 4, "must end with");
    expect_spec("linear:6 group:4 relu linear:K", 8, 4, "divisible");
    expect_spec("image:3x3 conv:2 linear:K", 8, 4, "image:3x3 needs");
    expect_spec("linear:16 batchnorm linear:K", 8, 4, "unknown layer");
    expect_spec("linear:0 linear:K", 8, 4, "count from 1");
    expect_spec("linear linear:K", 8, 4, "count");
    expect_spec("dropout:1 linear:K", 8, 4, "share in [0, 1)");
    expect_spec("relu:2 linear:K", 8, 4, "no argument");
    expect_spec("", 8, 4, "at least one layer");
}

int test_layers_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradients_every_kind),
        cmocka_unit_test(test_shared_rows),
        cmocka_unit_test(test_conv_forward),
        cmocka_unit_test(test_linear_flattens),
        cmocka_unit_test(test_linear_order),
        cmocka_unit_test(test_conv_order),
        cmocka_unit_test(test_norm_forward),
        cmocka_unit_test(test_batch_free),
        cmocka_unit_test(test_dropout),
        cmocka_unit_test(test_float32_holds_float32),
        cmocka_unit_test(test_optimisers),
        cmocka_unit_test(test_schedules),
        cmocka_unit_test(test_jacobian),
        cmocka_unit_test(test_radial),
        cmocka_unit_test(test_declared_networks),
        cmocka_unit_test(test_layer_tensors_keep_their_bounds),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("layers", tests, NULL, NULL);
}
