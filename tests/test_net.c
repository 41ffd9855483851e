/*
 * The classifier (src/model/net.h): every gradient against central finite
 * differences of the loss, batch norm's training-mode backward on its own
 * (with the two projections it must remove), the forward loss against a
 * long double reimplementation, SGD against steps worked out by hand, the
 * initial weights against the documented draws, and what training and the
 * two scores must and must not touch (the buffers, the frozen epochs, the
 * precise estimator).
 */
#include "helpers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/net.h"
#include "model/optim.h"

/* n rows of f features on scales 1, 2, 3, ... with an offset, and labels
 * that depend on the features (so training has something to learn) but
 * not only on them. */
static void make_data(test_rows *ds, size_t n, size_t f, size_t k,
                      uint64_t seed)
{
    pcg32_t rng;
    pcg32_seed(&rng, seed, 77);
    ds->n = n;
    ds->f = f;
    ds->k = k;
    ds->x = malloc(n * f * sizeof *ds->x);
    ds->label = malloc(n * sizeof *ds->label);
    assert_non_null(ds->x);
    assert_non_null(ds->label);
    for (size_t i = 0; i < n; i++) {
        double s = 0.0;
        for (size_t c = 0; c < f; c++) {
            ds->x[i * f + c] = 0.5 + (double)(c + 1) * test_rnd(&rng);
            s += ds->x[i * f + c] / (double)(c + 1);
        }
        s += 0.3 * test_rnd(&rng);
        long cls = (long)floor((s / (double)f + 1.0) * 0.5 * (double)k);
        ds->label[i] = (int)(cls < 0 ? 0 : cls >= (long)k ? (long)k - 1 : cls);
    }
    ds->d = (net_data){n, f, k, ds->x, ds->label, NULL};
}

/* The default network's layers: fc1 (0), batch norm (1, when norm is
 * batch), ReLU, fc2 (the last). */
static nn_layer *fc1(net_t *net) { return &net->l[0]; }
static nn_layer *fc2(net_t *net) { return &net->l[net->nl - 1]; }
static bn_layer *bn_of(net_t *net) { return &net->l[1].bn; }
static size_t hidden_of(const net_t *net) { return net->l[0].out.c; }
static int has_bn(const net_t *net) { return net_batch_layers(net) > 0; }

/* The experiment keys' defaults (the classifier's: 16 hidden units, lr
 * 0.1, no SGD momentum or weight decay, init seed 1; batch norm at
 * momentum 0.9 old, biased, ema; one epoch, partial drop), with H, B and
 * norm. */
static void small_config(run_config *cfg, size_t h, size_t b, net_norm norm)
{
    run_default_config(cfg);
    cfg->model = RUN_MODEL_CLASSIFIER;
    cfg->clf.hidden = h;
    cfg->batch_size = b;
    cfg->clf.norm = norm;
}

static void init_or_fail(net_t *net, const run_config *cfg, size_t f,
                         size_t k)
{
    bn_error err;
    if (net_init(net, cfg, f, k, &err) != 0)
        fail_msg("net_init: %s", err.msg);
}

/* gamma and beta away from 1 and 0, and buffers away from 0 and 1, so
 * that no gradient is checked only at a special point. */
static void perturb_bn(net_t *net, uint64_t seed)
{
    pcg32_t rng;
    pcg32_seed(&rng, seed, 78);
    for (size_t j = 0; j < hidden_of(net); j++) {
        bn_of(net)->gamma[j] = 1.0 + 0.5 * test_rnd(&rng);
        bn_of(net)->beta[j] = 0.3 * test_rnd(&rng);
        bn_of(net)->rm[j] = 0.2 * test_rnd(&rng);
        bn_of(net)->rv[j] = 1.0 + 0.5 * test_rnd(&rng);
    }
}

/* ------------------------------------------------ finite differences */

/* Central differences with step 1e-5 (|p| <= ~2 here). Truncation error
 * is step^2 / 6 * |L'''| and rounding about 1e-16 * |L| / step: both
 * below 1e-9 for a loss of size 1 whose third derivatives stay below
 * 100, so |analytic - numeric| <= 1e-7 + 1e-6 |numeric| leaves a margin
 * of 100 while any missing term (order 1e-2 or more) fails. The kinks of
 * ReLU would break the premise, so the test first checks that every
 * pre-activation is at least 1e-3 from 0, far beyond what a step moves. */
#define FD_STEP 1e-5
#define FD_ABS 1e-7
#define FD_REL 1e-6

static void assert_off_kinks(const net_t *net)
{
    for (size_t li = 1; li < net->nl; li++) {
        if (net->l[li].kind != &nn_kind_relu)
            continue;
        const double *pre = net->l[li - 1].y;
        for (size_t e = 0; e < net->b * nn_size(net->l[li].in); e++)
            if (!(fabs(pre[e]) > 1e-3))
                fail_msg("value %zu before layer %zu sits at ReLU's kink "
                         "(%g): choose other test data",
                         e, li, pre[e]);
    }
}

static void check_gradients(net_t *net, size_t b, const double *x,
                            const int *label, nn_bn_mode mode)
{
    net_forward(net, b, x, label, mode, 0);
    assert_off_kinks(net);
    net_backward(net);
    nn_tensor *t[2 * NN_MAX_LAYERS];
    size_t nt = net_tensors(net, t);
    size_t checked = 0;
    for (size_t a = 0; a < nt; a++) {
        size_t n = t[a]->rows * t[a]->cols;
        double *g = malloc(n * sizeof *g);
        assert_non_null(g);
        memcpy(g, t[a]->g, n * sizeof *g);
        for (size_t e = 0; e < n; e++) {
            double p = t[a]->p[e];
            t[a]->p[e] = p + FD_STEP;
            double lp = net_forward(net, b, x, label, mode, 0);
            t[a]->p[e] = p - FD_STEP;
            double lm = net_forward(net, b, x, label, mode, 0);
            t[a]->p[e] = p;
            double fd = (lp - lm) / (2.0 * FD_STEP);
            if (!(fabs(g[e] - fd) <= FD_ABS + FD_REL * fabs(fd)))
                fail_msg("%s[%zu] (mode %d): backward %.10g, finite "
                         "difference %.10g",
                         t[a]->name, e, (int)mode, g[e], fd);
            checked++;
        }
        free(g);
    }
    assert_true(checked > 0);
}

static void fd_case(net_norm norm, nn_bn_mode mode, size_t b, uint64_t seed)
{
    test_rows ds;
    make_data(&ds, b, 3, 3, seed);
    run_config cfg;
    small_config(&cfg, 5, b, norm);
    cfg.clf.init_seed = seed;
    net_t net;
    init_or_fail(&net, &cfg, ds.f, ds.k);
    if (has_bn(&net))
        perturb_bn(&net, seed);
    check_gradients(&net, b, ds.x, ds.label, mode);
    net_free(&net);
    test_rows_free(&ds);
}

static void test_gradients_batch_norm(void **state)
{
    (void)state;
    fd_case(CLF_NORM_BATCH, NN_BN_BATCH_KEEP, 6, 1);
    fd_case(CLF_NORM_BATCH, NN_BN_BATCH_KEEP, 2, 5);
    fd_case(CLF_NORM_BATCH, NN_BN_BATCH_KEEP, 9, 3);
}

/* Frozen batch norm (freeze_after): the buffers are constants. */
static void test_gradients_frozen(void **state)
{
    (void)state;
    fd_case(CLF_NORM_BATCH, NN_BN_RUNNING, 6, 2);
    fd_case(CLF_NORM_BATCH, NN_BN_RUNNING, 1, 4);
}

static void test_gradients_no_norm(void **state)
{
    (void)state;
    fd_case(CLF_NORM_NONE, NN_BN_BATCH_KEEP, 6, 1);
    fd_case(CLF_NORM_NONE, NN_BN_BATCH_KEEP, 4, 6);
}

/* Batch norm alone: L(x) = sum r * BN(x) for fixed weights r, through the
 * project's layer in training mode, so dL/dy = r. */
static double bn_objective(const bn_layer *layer, size_t b, const double *x,
                           const double *r, double *y)
{
    /* Train mode's output; the buffers' update does not enter it. */
    double mean[layer->f], var[layer->f];
    bn_batch_forward(layer, b, x, y, mean, var);
    double s = 0.0;
    for (size_t i = 0; i < b * layer->f; i++)
        s += r[i] * y[i];
    return s;
}

static void bn_backward_case(size_t b, size_t h, double eps, uint64_t seed)
{
    pcg32_t rng;
    pcg32_seed(&rng, seed, 79);
    double *x = malloc(b * h * sizeof *x), *r = malloc(b * h * sizeof *r);
    double *y = malloc(b * h * sizeof *y), *xhat = malloc(b * h * sizeof *y);
    double *dx = malloc(b * h * sizeof *dx);
    assert_true(x && r && y && xhat && dx);
    run_config rc;
    run_default_config(&rc);
    bn_config cfg = rc.layer;
    cfg.eps = eps;
    bn_layer layer;
    assert_int_equal(bn_init(&layer, h, &cfg), 0);
    for (size_t j = 0; j < h; j++) {
        layer.gamma[j] = 1.0 + 0.7 * test_rnd(&rng);
        layer.beta[j] = test_rnd(&rng);
    }
    for (size_t i = 0; i < b * h; i++) {
        x[i] = (double)(i % h + 1) * test_rnd(&rng) + 0.25;
        r[i] = test_rnd(&rng);
    }
    double mean[h], var[h], sd[h], dgamma[h], dbeta[h];
    bn_batch_stats(b, h, x, mean, var);
    for (size_t j = 0; j < h; j++) {
        sd[j] = sqrt(var[j] + eps);
        for (size_t i = 0; i < b; i++)
            xhat[i * h + j] = (x[i * h + j] - mean[j]) / sd[j];
    }
    nn_batch_train_backward(b, h, xhat, layer.gamma, sd, r, dx, dgamma,
                            dbeta);

    /* The two projections: each unit's gradient sums to zero over the
     * batch, and its component along xhat is what eps leaves of it,
     * sum dx xhat = (gamma/sd) dgamma eps / (var + eps), since
     * sum xhat^2 = B var / (var + eps) (zero when eps is). */
    for (size_t j = 0; j < h; j++) {
        double s = 0.0, sx = 0.0, scale = 0.0;
        for (size_t i = 0; i < b; i++) {
            s += dx[i * h + j];
            sx += dx[i * h + j] * xhat[i * h + j];
            /* The size of the terms dx cancels from, not of dx. */
            double terms = fabs(r[i * h + j]) + fabs(dbeta[j]) / (double)b +
                           fabs(xhat[i * h + j] * dgamma[j]) / (double)b;
            scale += fabs(layer.gamma[j] / sd[j]) * terms *
                     (1.0 + fabs(xhat[i * h + j]));
        }
        long double left = (long double)layer.gamma[j] / sd[j] * dgamma[j] *
                           eps / ((long double)var[j] + eps);
        assert_close(s, 0.0, 1e-13, scale);
        assert_close(sx, left, 1e-13, scale);
    }
    for (size_t i = 0; i < b * h; i++) {
        double v = x[i];
        x[i] = v + FD_STEP;
        double lp = bn_objective(&layer, b, x, r, y);
        x[i] = v - FD_STEP;
        double lm = bn_objective(&layer, b, x, r, y);
        x[i] = v;
        double fd = (lp - lm) / (2.0 * FD_STEP);
        if (!(fabs(dx[i] - fd) <= FD_ABS + FD_REL * fabs(fd)))
            fail_msg("dx[%zu] (B %zu, eps %g): backward %.10g, finite "
                     "difference %.10g",
                     i, b, eps, dx[i], fd);
    }
    for (size_t j = 0; j < h; j++)
        for (int which = 0; which < 2; which++) {
            double *p = which ? &layer.beta[j] : &layer.gamma[j];
            double v = *p;
            *p = v + FD_STEP;
            double lp = bn_objective(&layer, b, x, r, y);
            *p = v - FD_STEP;
            double lm = bn_objective(&layer, b, x, r, y);
            *p = v;
            double fd = (lp - lm) / (2.0 * FD_STEP);
            double g = which ? dbeta[j] : dgamma[j];
            if (!(fabs(g - fd) <= FD_ABS + FD_REL * fabs(fd)))
                fail_msg("d%s[%zu]: backward %.10g, finite difference %.10g",
                         which ? "beta" : "gamma", j, g, fd);
        }
    bn_free(&layer);
    free(x);
    free(r);
    free(y);
    free(xhat);
    free(dx);
}

static void test_bn_train_backward(void **state)
{
    (void)state;
    bn_backward_case(7, 4, 1e-5, 1);
    bn_backward_case(2, 3, 1e-5, 2);
    bn_backward_case(32, 5, 1e-5, 3);
    bn_backward_case(5, 2, 0.5, 4); /* eps large enough to matter */
}

/* ------------------------------------------------ the forward pass */

/* The train-mode mean loss of one batch, written out in long double. */
static long double ld_train_loss(net_t *net, size_t b, const double *x,
                                 const int *label)
{
    size_t f = net->f, h = hidden_of(net), k = net->k;
    const double *w1 = fc1(net)->t[0].p, *b1 = fc1(net)->t[1].p;
    const double *w2 = fc2(net)->t[0].p, *b2 = fc2(net)->t[1].p;
    const bn_layer *bn = bn_of(net);
    long double *hp = malloc(b * h * sizeof *hp);
    assert_non_null(hp);
    for (size_t i = 0; i < b; i++)
        for (size_t j = 0; j < h; j++) {
            long double s = b1[j];
            for (size_t c = 0; c < f; c++)
                s += (long double)w1[j * f + c] * x[i * f + c];
            hp[i * h + j] = s;
        }
    for (size_t j = 0; j < h; j++) {
        long double m = 0.0L, v = 0.0L;
        for (size_t i = 0; i < b; i++)
            m += hp[i * h + j];
        m /= (long double)b;
        for (size_t i = 0; i < b; i++)
            v += (hp[i * h + j] - m) * (hp[i * h + j] - m);
        v /= (long double)b;
        for (size_t i = 0; i < b; i++) {
            long double y = bn->gamma[j] * (hp[i * h + j] - m) /
                                sqrtl(v + bn->eps) +
                            bn->beta[j];
            hp[i * h + j] = y > 0.0L ? y : 0.0L;
        }
    }
    long double total = 0.0L;
    for (size_t i = 0; i < b; i++) {
        long double z[16], se = 0.0L;
        assert_true(k <= 16);
        for (size_t c = 0; c < k; c++) {
            z[c] = b2[c];
            for (size_t j = 0; j < h; j++)
                z[c] += (long double)w2[c * h + j] * hp[i * h + j];
            se += expl(z[c]);
        }
        total += logl(se) - z[label[i]];
    }
    free(hp);
    return total / (long double)b;
}

static void test_forward_loss_matches_long_double(void **state)
{
    (void)state;
    test_rows ds;
    make_data(&ds, 20, 4, 3, 11);
    run_config cfg;
    small_config(&cfg, 6, 20, CLF_NORM_BATCH);
    net_t net;
    init_or_fail(&net, &cfg, ds.f, ds.k);
    perturb_bn(&net, 11);
    /* Larger output weights, so that the max-subtracted log-sum-exp is
     * exercised away from logits near 0. */
    for (size_t e = 0; e < net.k * hidden_of(&net); e++)
        fc2(&net)->t[0].p[e] *= 8.0;
    long double want = ld_train_loss(&net, 20, ds.x, ds.label);
    double got = net_forward(&net, 20, ds.x, ds.label, NN_BN_BATCH_KEEP, 0);
    assert_rel(got, want, 1e-13);
    net_free(&net);
    test_rows_free(&ds);
}

/* ------------------------------------------------ SGD */

/* Every parameter 1, every gradient 0.5, lr 0.1, two steps. By hand:
 *   wd 0.01, momentum 0.9: g1 = 0.5 + 0.01 = 0.51, buf = 0.51,
 *     p1 = 1 - 0.051 = 0.949; g2 = 0.5 + 0.00949 = 0.50949,
 *     buf = 0.459 + 0.50949 = 0.96849, p2 = 0.949 - 0.096849 = 0.852151
 *   wd 0.01, momentum 0: p1 = 0.949, p2 = 0.949 - 0.050949 = 0.898051
 *   wd 0, momentum 0.9: p1 = 0.95, buf = 0.45 + 0.5 = 0.95, p2 = 0.855 */
static void sgd_case(double mom, double wd, double p1, double p2)
{
    run_config cfg;
    small_config(&cfg, 3, 4, CLF_NORM_BATCH);
    cfg.clf.lr = 0.1;
    cfg.clf.sgd_momentum = mom;
    cfg.clf.weight_decay = wd;
    net_t net;
    init_or_fail(&net, &cfg, 2, 2);
    nn_tensor *t[2 * NN_MAX_LAYERS];
    size_t nt = net_tensors(&net, t);
    assert_int_equal(nt, 6);
    for (int step = 0; step < 2; step++) {
        for (size_t a = 0; a < nt; a++)
            for (size_t e = 0; e < t[a]->rows * t[a]->cols; e++) {
                if (step == 0)
                    t[a]->p[e] = 1.0;
                t[a]->g[e] = 0.5;
            }
        net_optim_step(&net, &cfg);
        for (size_t a = 0; a < nt; a++)
            for (size_t e = 0; e < t[a]->rows * t[a]->cols; e++)
                assert_rel(t[a]->p[e], step == 0 ? p1 : p2, 4e-16);
    }
    net_free(&net);
}

static void test_sgd_steps_by_hand(void **state)
{
    (void)state;
    sgd_case(0.9, 0.01, 0.949, 0.852151);
    sgd_case(0.0, 0.01, 0.949, 0.898051);
    sgd_case(0.9, 0.0, 0.95, 0.855);
}

/* ------------------------------------------------ initial weights */

/* The documented draw, written again: u = (a >> 5, b >> 6 as 27 and 26
 * bits) / 2^53, value = bound * (2u - 1). */
static double documented_draw(pcg32_t *rng, double bound)
{
    double a = (double)(pcg32_next(rng) >> 5);
    double b = (double)(pcg32_next(rng) >> 6);
    double u = (a * 67108864.0 + b) / 9007199254740992.0;
    return bound * (2.0 * u - 1.0);
}

static void test_initial_weights(void **state)
{
    (void)state;
    size_t f = 64, h = 64, k = 10;
    run_config cfg;
    small_config(&cfg, h, 8, CLF_NORM_BATCH);
    cfg.clf.init_seed = 42;
    net_t a, b, c;
    init_or_fail(&a, &cfg, f, k);
    init_or_fail(&b, &cfg, f, k);
    cfg.clf.init_seed = 43;
    init_or_fail(&c, &cfg, f, k);

    /* The documented order: fc1.weight row by row, fc1.bias, fc2.weight,
     * fc2.bias, from PCG32(init_seed, 3). */
    pcg32_t rng;
    pcg32_seed(&rng, 42, 3);
    double b1 = 1.0 / sqrt((double)f), b2 = 1.0 / sqrt((double)h);
    const double *want[] = {fc1(&a)->t[0].p, fc1(&a)->t[1].p,
                            fc2(&a)->t[0].p, fc2(&a)->t[1].p};
    const size_t len[] = {h * f, h, k * h, k};
    const double bound[] = {b1, b1, b2, b2};
    for (int t = 0; t < 4; t++) {
        double lo = INFINITY, hi = -INFINITY, sum = 0.0;
        for (size_t e = 0; e < len[t]; e++) {
            double v = documented_draw(&rng, bound[t]);
            if (v != want[t][e])
                fail_msg("tensor %d value %zu: %.17g, documented %.17g", t,
                         e, want[t][e], v);
            assert_true(v >= -bound[t] && v < bound[t]);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            sum += v;
        }
        /* The whole interval, both signs: with 4096 draws the extremes
         * lie within 1% of the bounds but for a chance of 1e-8. */
        if (t == 0) {
            assert_true(lo < -0.99 * bound[t] && hi > 0.99 * bound[t]);
            assert_close(sum / (double)len[t], 0.0, 0.05, bound[t]);
        }
    }
    nn_tensor *ta[2 * NN_MAX_LAYERS], *tb[2 * NN_MAX_LAYERS];
    size_t nt = net_tensors(&a, ta);
    assert_int_equal(net_tensors(&b, tb), nt);
    for (size_t i = 0; i < nt; i++)
        assert_memory_equal(ta[i]->p, tb[i]->p,
                            ta[i]->rows * ta[i]->cols * sizeof(double));
    assert_memory_not_equal(fc1(&a)->t[0].p, fc1(&c)->t[0].p,
                            h * f * sizeof(double));
    for (size_t j = 0; j < h; j++)
        assert_true(bn_of(&a)->gamma[j] == 1.0 && bn_of(&a)->beta[j] == 0.0 &&
                    bn_of(&a)->rm[j] == 0.0 && bn_of(&a)->rv[j] == 1.0);
    net_free(&a);
    net_free(&b);
    net_free(&c);
}

/* ------------------------------------------------ training and scores */

static size_t *identity(size_t n)
{
    size_t *p = malloc(n * sizeof *p);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = i;
    return p;
}

/* A shuffled order (Fisher-Yates on a stream of the test's own). */
static size_t *shuffled(size_t n, uint64_t seed)
{
    size_t *p = identity(n);
    pcg32_t rng;
    pcg32_seed(&rng, seed, 80);
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = pcg32_bounded(&rng, (uint32_t)(i + 1));
        size_t t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    return p;
}

static void train_or_fail(net_t *net, const run_config *cfg,
                          const net_data *d, const size_t *perm,
                          const net_observer *obs)
{
    bn_error err;
    if (net_train(net, cfg, d, perm, obs, &err) != 0)
        fail_msg("net_train: %s", err.msg);
}

static void score_both(net_t *net, const net_data *d, const size_t *perm,
                       net_score *tr, net_score *ev)
{
    bn_error err;
    if (net_score_train_mode(net, d, perm, tr, NULL, NULL, &err) != 0)
        fail_msg("net_score_train_mode: %s", err.msg);
    if (net_score_eval_mode(net, d, ev, NULL, NULL, &err) != 0)
        fail_msg("net_score_eval_mode: %s", err.msg);
}

static void test_training_learns_and_repeats(void **state)
{
    (void)state;
    test_rows ds;
    make_data(&ds, 300, 4, 2, 21);
    size_t *perm = shuffled(ds.n, 1);
    run_config cfg;
    small_config(&cfg, 8, 20, CLF_NORM_BATCH);
    cfg.epochs = 20;
    cfg.clf.sgd_momentum = 0.9;
    cfg.clf.lr = 0.05;
    net_t a, b;
    init_or_fail(&a, &cfg, ds.f, ds.k);
    init_or_fail(&b, &cfg, ds.f, ds.k);
    net_score before;
    bn_error err;
    assert_int_equal(net_score_eval_mode(&a, &ds.d, &before, NULL, NULL, &err), 0);
    train_or_fail(&a, &cfg, &ds.d, perm, NULL);
    train_or_fail(&b, &cfg, &ds.d, perm, NULL);
    /* The same run twice is the same bits. */
    assert_memory_equal(fc1(&a)->t[0].p, fc1(&b)->t[0].p,
                        hidden_of(&a) * a.f * sizeof(double));
    assert_memory_equal(bn_of(&a)->rv, bn_of(&b)->rv,
                        hidden_of(&a) * sizeof(double));
    assert_int_equal(bn_of(&a)->updates, 20 * (300 / 20));
    /* The labels are a noisy linear rule of the features: 20 epochs
     * bring the loss well down and the accuracy near the rule's. */
    net_score tr, ev;
    score_both(&a, &ds.d, perm, &tr, &ev);
    assert_true(tr.loss < 0.6 * before.loss);
    assert_true(ev.accuracy > 0.85 && tr.accuracy > 0.85);
    assert_int_equal(ev.rows, 300);
    net_free(&a);
    net_free(&b);
    free(perm);
    test_rows_free(&ds);
}

static void test_scores(void **state)
{
    (void)state;
    test_rows ds;
    make_data(&ds, 103, 3, 3, 22);
    size_t *perm = shuffled(ds.n, 2);
    run_config cfg;
    small_config(&cfg, 6, 10, CLF_NORM_BATCH);
    cfg.epochs = 2;
    net_t net;
    init_or_fail(&net, &cfg, ds.f, ds.k);
    train_or_fail(&net, &cfg, &ds.d, perm, NULL);
    bn_layer before;
    assert_int_equal(bn_copy(&before, bn_of(&net)), 0);

    /* Training-mode scores score every row and leave the buffers
     * alone. */
    net_score tr, ev;
    score_both(&net, &ds.d, perm, &tr, &ev);
    assert_int_equal(tr.rows, 103);
    size_t bytes = bn_of(&net)->f * sizeof(double);
    assert_memory_equal(before.rm, bn_of(&net)->rm, bytes);
    assert_memory_equal(before.rv, bn_of(&net)->rv, bytes);
    assert_memory_equal(before.gamma, bn_of(&net)->gamma, bytes);
    assert_memory_equal(before.beta, bn_of(&net)->beta, bytes);
    assert_int_equal(before.updates, bn_of(&net)->updates);
    bn_free(&before);

    /* Evaluation mode is each row alone: one row at a time gives the same
     * bits as the chunks the score uses. */
    double sum = 0.0;
    size_t correct = 0;
    int want_ev[103], want_tr[103], pred[103];
    for (size_t i = 0; i < ds.n; i++) {
        sum += net_forward(&net, 1, &ds.x[i * ds.f], &ds.label[i],
                           NN_BN_RUNNING, 0);
        const double *z = net_logits(&net);
        size_t best = 0;
        for (size_t c = 1; c < ds.k; c++)
            if (z[c] > z[best])
                best = c;
        correct += best == (size_t)ds.label[i];
        want_ev[i] = (int)best;
    }
    assert_int_equal(ev.correct, correct);
    /* Each row's class, where the score puts it. */
    net_score again;
    bn_error err;
    assert_int_equal(net_score_eval_mode(&net, &ds.d, &again, pred, NULL, &err), 0);
    assert_memory_equal(pred, want_ev, sizeof pred);
    assert_true(ev.loss == sum / (double)ds.n);
    assert_true(ev.accuracy == (double)correct / (double)ds.n);

    /* Training mode by hand: 103 rows at B 10 are 11 batches, the first
     * 103 - 11 x 9 = 4 of 10 rows and seven of 9, each normalised by
     * itself. */
    double tsum = 0.0;
    size_t at = 0;
    for (size_t k = 0; k < 11; k++) {
        size_t b = k < 4 ? 10 : 9;
        double xb[30];
        int lb[10];
        for (size_t i = 0; i < b; i++) {
            memcpy(&xb[i * 3], &ds.x[perm[at + i] * 3], 3 * sizeof *xb);
            lb[i] = ds.label[perm[at + i]];
        }
        net_forward(&net, b, xb, lb, NN_BN_BATCH_KEEP, 0);
        const double *z = net_logits(&net);
        for (size_t i = 0; i < b; i++) {
            tsum += net.loss[i];
            size_t best = 0;
            for (size_t c = 1; c < ds.k; c++)
                if (z[i * ds.k + c] > z[i * ds.k + best])
                    best = c;
            want_tr[perm[at + i]] = (int)best;
        }
        at += b;
    }
    assert_true(tr.loss == tsum / 103.0);
    assert_int_equal(
        net_score_train_mode(&net, &ds.d, perm, &again, pred, NULL, &err), 0);
    assert_memory_equal(pred, want_tr, sizeof pred);
    /* The two modes really differ here, so the comparison means
     * something. */
    assert_true(tr.loss != ev.loss);

    /* Without batch norm the two modes are the same function. */
    small_config(&cfg, 6, 10, CLF_NORM_NONE);
    net_t plain;
    init_or_fail(&plain, &cfg, ds.f, ds.k);
    train_or_fail(&plain, &cfg, &ds.d, perm, NULL);
    score_both(&plain, &ds.d, perm, &tr, &ev);
    assert_int_equal(tr.correct, ev.correct);
    assert_close(tr.loss, ev.loss, 1e-15, ev.loss);
    net_free(&plain);
    net_free(&net);
    free(perm);
    test_rows_free(&ds);
}

typedef struct {
    size_t steps, epochs;
    size_t updates_at_epoch[8];
    double first_loss;
} watch;

static void on_step(void *ctx, const net_step *s)
{
    watch *w = ctx;
    if (w->steps++ == 0)
        w->first_loss = s->loss;
}

static void on_epoch(void *ctx, unsigned long epoch, net_t *net)
{
    watch *w = ctx;
    assert_true(epoch < 8);
    w->updates_at_epoch[epoch] = bn_of(net)->updates;
    w->epochs++;
}

/* freeze_after = 1: the buffers after three epochs are the ones after the
 * first, bit for bit, while the weights go on learning. */
static void test_freeze_after(void **state)
{
    (void)state;
    test_rows ds;
    make_data(&ds, 64, 3, 2, 23);
    size_t *perm = shuffled(ds.n, 3);
    run_config cfg;
    small_config(&cfg, 5, 16, CLF_NORM_BATCH);
    net_t one, frozen;
    init_or_fail(&one, &cfg, ds.f, ds.k);
    train_or_fail(&one, &cfg, &ds.d, perm, NULL);
    cfg.epochs = 3;
    cfg.clf.freeze_after = 1;
    init_or_fail(&frozen, &cfg, ds.f, ds.k);
    watch w = {0};
    net_observer obs = {on_step, on_epoch, &w};
    train_or_fail(&frozen, &cfg, &ds.d, perm, &obs);
    assert_int_equal(w.steps, 12);
    assert_int_equal(w.epochs, 3);
    assert_int_equal(w.updates_at_epoch[0], 4);
    assert_int_equal(w.updates_at_epoch[2], 4);
    assert_memory_equal(bn_of(&one)->rm, bn_of(&frozen)->rm,
                        5 * sizeof(double));
    assert_memory_equal(bn_of(&one)->rv, bn_of(&frozen)->rv,
                        5 * sizeof(double));
    assert_memory_not_equal(fc1(&one)->t[0].p, fc1(&frozen)->t[0].p,
                            15 * sizeof(double));
    net_free(&one);
    net_free(&frozen);
    free(perm);
    test_rows_free(&ds);
}

/* The loss of the first batch of perm on a fresh network, in mode. */
static double first_batch_loss(const run_config *cfg, const test_rows *ds,
                               const size_t *perm, nn_bn_mode mode)
{
    net_t net;
    init_or_fail(&net, cfg, ds->f, ds->k);
    size_t b = cfg->batch_size;
    double *x = malloc(b * ds->f * sizeof *x);
    int *y = malloc(b * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    for (size_t i = 0; i < b; i++) {
        memcpy(&x[i * ds->f], &ds->x[perm[i] * ds->f], ds->f * sizeof *x);
        y[i] = ds->label[perm[i]];
    }
    double loss = net_forward(&net, b, x, y, mode, 1);
    free(x);
    free(y);
    net_free(&net);
    return loss;
}

/* freeze_after = start: the very first step normalises with the buffers
 * the network was made with (its loss that of a forward in running mode,
 * not batch mode), and no step ever updates them: after three epochs they
 * are still 0 and 1, bit for bit. */
static void test_freeze_from_start(void **state)
{
    (void)state;
    test_rows ds;
    make_data(&ds, 64, 3, 2, 23);
    size_t *perm = shuffled(ds.n, 3);
    run_config cfg;
    small_config(&cfg, 5, 16, CLF_NORM_BATCH);
    cfg.epochs = 3;
    cfg.clf.freeze_after = CLF_FREEZE_START;
    double running = first_batch_loss(&cfg, &ds, perm, NN_BN_RUNNING);
    double batch = first_batch_loss(&cfg, &ds, perm, NN_BN_BATCH);
    assert_true(running != batch); /* so the comparison tells them apart */
    net_t net;
    init_or_fail(&net, &cfg, ds.f, ds.k);
    watch w = {0};
    net_observer obs = {on_step, on_epoch, &w};
    train_or_fail(&net, &cfg, &ds.d, perm, &obs);
    assert_int_equal(w.steps, 12);
    assert_true(w.first_loss == running);
    for (size_t e = 0; e < 3; e++)
        assert_int_equal(w.updates_at_epoch[e], 0);
    for (size_t j = 0; j < 5; j++) {
        assert_true(bn_of(&net)->rm[j] == 0.0);
        assert_true(bn_of(&net)->rv[j] == 1.0);
    }
    net_free(&net);
    /* Never frozen, the first step is batch mode's. */
    cfg.clf.freeze_after = 0;
    init_or_fail(&net, &cfg, ds.f, ds.k);
    memset(&w, 0, sizeof w);
    train_or_fail(&net, &cfg, &ds.d, perm, &obs);
    assert_true(w.first_loss == batch);
    net_free(&net);
    free(perm);
    test_rows_free(&ds);
}

typedef struct {
    int seen;
    double rm[8], rv[8];
    double loss;
} first_step;

static void keep_first(void *ctx, const net_step *s)
{
    first_step *f = ctx;
    if (f->seen++)
        return;
    const bn_layer *bn = &s->net->l[1].bn;
    memcpy(f->rm, bn->rm, 5 * sizeof(double));
    memcpy(f->rv, bn->rv, 5 * sizeof(double));
    f->loss = s->loss;
}

/* A fresh network trained on ds in the order perm: its first step. */
static first_step first_step_of(const run_config *cfg, const test_rows *ds,
                                const size_t *perm)
{
    first_step f = {0};
    net_observer obs = {keep_first, NULL, &f};
    net_t net;
    init_or_fail(&net, cfg, ds->f, ds->k);
    train_or_fail(&net, cfg, &ds->d, perm, &obs);
    net_free(&net);
    return f;
}

/* On two devices of their own, B 16 is two shares of 8: the first step's
 * loss is the mean of the two shares' losses, each normalised by its own
 * statistics (a fresh network's batch-mode forward on those 8 rows), and
 * the buffers after it are those of a step on share 0 alone, bit for bit.
 * Synchronised, the run is one device's, bit for bit. */
static void test_devices_split_the_batch(void **state)
{
    (void)state;
    test_rows ds;
    make_data(&ds, 64, 3, 2, 23);
    size_t *perm = shuffled(ds.n, 3);
    run_config cfg;
    small_config(&cfg, 5, 8, CLF_NORM_BATCH);
    double l0 = first_batch_loss(&cfg, &ds, perm, NN_BN_BATCH_KEEP);
    double l1 = first_batch_loss(&cfg, &ds, perm + 8, NN_BN_BATCH_KEEP);
    first_step alone = first_step_of(&cfg, &ds, perm);
    small_config(&cfg, 5, 16, CLF_NORM_BATCH);
    cfg.layer.devices = 2;
    first_step two = first_step_of(&cfg, &ds, perm);
    assert_close(two.loss, ((long double)l0 + l1) / 2, 1e-15, two.loss);
    assert_memory_equal(two.rm, alone.rm, 5 * sizeof(double));
    assert_memory_equal(two.rv, alone.rv, 5 * sizeof(double));
    cfg.layer.sync = 1;
    first_step synced = first_step_of(&cfg, &ds, perm);
    cfg.layer.devices = 1, cfg.layer.sync = 0;
    first_step one = first_step_of(&cfg, &ds, perm);
    assert_true(synced.loss == one.loss);
    assert_memory_equal(synced.rm, one.rm, 5 * sizeof(double));
    assert_true(two.loss != one.loss); /* the shares do differ */
    free(perm);
    test_rows_free(&ds);
}

/* mean and var against the moments of fc1's outputs over rows[0..n-1]
 * (NULL: the first n rows), computed in long double. */
static void check_hidden_moments(net_t *net, const test_rows *ds,
                                 const size_t *rows, size_t n,
                                 const double *mean, const double *var)
{
    size_t f = ds->f;
    double *hs = malloc(n * sizeof *hs);
    assert_non_null(hs);
    const double *w1 = fc1(net)->t[0].p, *b1 = fc1(net)->t[1].p;
    for (size_t j = 0; j < hidden_of(net); j++) {
        for (size_t r = 0; r < n; r++) {
            const double *x = &ds->x[(rows ? rows[r] : r) * f];
            long double s = b1[j];
            for (size_t c = 0; c < f; c++)
                s += (long double)w1[j * f + c] * x[c];
            hs[r] = (double)s;
        }
        long double m, v;
        ld_moments(n, 1, hs, &m, &v);
        assert_close(mean[j], m, 1e-13, sqrtl(v) + fabsl(m));
        assert_rel(var[j], v, 1e-12);
    }
    free(hs);
}

/* The precise estimator: the buffers become the pooled moments of fc1's
 * outputs over the first K batches, under the final weights. */
static void precise_case(size_t b, run_partial partial, size_t kb)
{
    test_rows ds;
    make_data(&ds, 70, 3, 2, 24);
    size_t *perm = shuffled(ds.n, 4);
    run_config cfg;
    small_config(&cfg, 4, b, CLF_NORM_BATCH);
    cfg.epochs = 2;
    cfg.partial = partial;
    cfg.precise_batches = kb;
    cfg.layer.estimator = BN_EST_PRECISE;
    net_t net;
    init_or_fail(&net, &cfg, ds.f, ds.k);
    train_or_fail(&net, &cfg, &ds.d, perm, NULL);
    size_t nb = run_batches_per_epoch(ds.n, b, partial);
    size_t rows = (kb ? kb : nb) * b;
    check_hidden_moments(&net, &ds, perm, rows < ds.n ? rows : ds.n,
                         bn_of(&net)->rm, bn_of(&net)->rv);
    net_free(&net);
    free(perm);
    test_rows_free(&ds);
}

static void test_precise(void **state)
{
    (void)state;
    precise_case(16, RUN_PARTIAL_DROP, 0);
    precise_case(16, RUN_PARTIAL_KEEP, 0);
    precise_case(16, RUN_PARTIAL_DROP, 2);
}

/* The moments of what batch norm sees, over a whole population in its
 * own order (rows NULL), against long double. */
static void test_hidden_moments(void **state)
{
    (void)state;
    test_rows ds;
    make_data(&ds, 50, 3, 2, 26);
    run_config cfg;
    small_config(&cfg, 4, 8, CLF_NORM_BATCH);
    net_t net;
    init_or_fail(&net, &cfg, ds.f, ds.k);
    double mean[4], var[4];
    bn_error err;
    assert_int_equal(
        net_layer_moments(&net, &ds.d, NULL, ds.n, 1, mean, var, &err), 0);
    check_hidden_moments(&net, &ds, NULL, ds.n, mean, var);
    net_free(&net);
    test_rows_free(&ds);
}

/* The validator runs use (run_check, with the classifier's own check
 * behind it) on a shape of 33 rows, 3 features and k classes. */
static void expect_invalid(const run_config *cfg, size_t k, const char *words)
{
    char *names[3] = {"a", "b", "c"};
    pop_t shape;
    memset(&shape, 0, sizeof shape);
    shape.n = 33;
    shape.f = 3;
    shape.names = names;
    shape.label.column = k ? "label" : NULL;
    shape.label.n_levels = k;
    bn_error err;
    err.msg[0] = '\0';
    int rc = run_check(cfg, &shape, NULL, &err);
    if (!words) {
        if (rc != 0)
            fail_msg("refused: %s", err.msg);
        return;
    }
    assert_int_equal(rc, -1);
    if (!strstr(err.msg, words))
        fail_msg("message '%s' does not say '%s'", err.msg, words);
}

static void test_validation(void **state)
{
    (void)state;
    run_config ok, cfg;
    small_config(&ok, 4, 8, CLF_NORM_BATCH);
    expect_invalid(&ok, 3, NULL);
    expect_invalid(&ok, 0, "needs class labels");
    expect_invalid(&ok, 1, "at least two classes");
    cfg = ok;
    cfg.clf.hidden = CLF_MAX_HIDDEN;
    expect_invalid(&cfg, 3, NULL);
    cfg.clf.hidden = CLF_MAX_HIDDEN + 1;
    expect_invalid(&cfg, 3, "hidden");
    cfg.clf.hidden = 0;
    expect_invalid(&cfg, 3, "hidden");
    /* gamma and beta are learned: the layer's setting is not read. */
    cfg = ok;
    cfg.layer.gamma = 2.0;
    expect_invalid(&cfg, 3, NULL);
    cfg = ok;
    cfg.clf.sgd_momentum = 1.0;
    expect_invalid(&cfg, 3, "sgd_momentum");
    cfg = ok;
    cfg.clf.weight_decay = -1.0;
    expect_invalid(&cfg, 3, "weight_decay");
    cfg = ok;
    cfg.clf.lr = NAN;
    expect_invalid(&cfg, 3, "lr");
    cfg = ok;
    cfg.layer.eps = 0.0;
    expect_invalid(&cfg, 3, "eps");
    cfg.clf.norm = CLF_NORM_NONE; /* no batch norm: eps is not read */
    expect_invalid(&cfg, 3, NULL);
    /* The run's checks are the layer's: one validator. */
    cfg = ok;
    cfg.batch_size = 16;
    cfg.partial = RUN_PARTIAL_KEEP; /* 33 = 2 x 16 + 1 */
    expect_invalid(&cfg, 3, "one row");
    cfg = ok;
    cfg.precise_batches = 5;
    expect_invalid(&cfg, 3, "precise batches");
    /* net_init checks what its memory depends on by itself, and training
     * the labels it is given. */
    bn_error err;
    cfg = ok;
    cfg.clf.hidden = CLF_MAX_HIDDEN + 1;
    net_t net;
    assert_int_equal(net_init(&net, &cfg, 3, 3, &err), -1);
    test_rows ds;
    make_data(&ds, 33, 3, 3, 25);
    ds.label[7] = 3;
    init_or_fail(&net, &ok, 3, 3);
    size_t *perm = shuffled(ds.n, 5);
    assert_int_equal(net_train(&net, &ok, &ds.d, perm, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "row 7: label 3"));
    net_free(&net);
    free(perm);
    test_rows_free(&ds);
}

/* A training-mode score cuts n rows into the fewest batches of at most B
 * rows (B 2 and n odd: one of 3), as equal as they can be, larger ones
 * first, none of one row. */
static void test_score_batches(void **state)
{
    (void)state;
    for (size_t b = 2; b <= 40; b++)
        for (size_t n = 2; n <= 300; n++) {
            size_t nb = net_score_batches(n, b);
            size_t want = (n + b - 1) / b;
            if (b == 2 && n % 2)
                want = n / 2;
            assert_int_equal(nb, want);
            assert_int_equal(net_score_batch_start(n, nb, 0), 0);
            assert_int_equal(net_score_batch_start(n, nb, nb), n);
            size_t prev = n;
            for (size_t k = 0; k < nb; k++) {
                size_t sz = net_score_batch_start(n, nb, k + 1) -
                            net_score_batch_start(n, nb, k);
                assert_true(sz >= 2 && sz <= prev && prev - sz <= 1 + n);
                assert_true(sz <= b || (b == 2 && sz == 3));
                if (k)
                    assert_true(prev - sz <= 1);
                prev = sz;
            }
        }
    /* B 2 and 7 rows: batches of 3, 2 and 2 through a net sized for 2. */
    test_rows ds;
    make_data(&ds, 7, 3, 2, 27);
    run_config cfg;
    small_config(&cfg, 4, 2, CLF_NORM_BATCH);
    net_t net;
    init_or_fail(&net, &cfg, ds.f, ds.k);
    size_t *perm = shuffled(ds.n, 6);
    net_score tr;
    bn_error err;
    assert_int_equal(net_score_train_mode(&net, &ds.d, perm, &tr, NULL, NULL, &err),
                     0);
    assert_int_equal(tr.rows, 7);
    net_free(&net);
    free(perm);
    test_rows_free(&ds);
}

int test_net_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradients_batch_norm),
        cmocka_unit_test(test_gradients_frozen),
        cmocka_unit_test(test_gradients_no_norm),
        cmocka_unit_test(test_bn_train_backward),
        cmocka_unit_test(test_forward_loss_matches_long_double),
        cmocka_unit_test(test_sgd_steps_by_hand),
        cmocka_unit_test(test_initial_weights),
        cmocka_unit_test(test_training_learns_and_repeats),
        cmocka_unit_test(test_scores),
        cmocka_unit_test(test_freeze_after),
        cmocka_unit_test(test_freeze_from_start),
        cmocka_unit_test(test_devices_split_the_batch),
        cmocka_unit_test(test_precise),
        cmocka_unit_test(test_hidden_moments),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_score_batches),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("net", tests, NULL, NULL);
}
