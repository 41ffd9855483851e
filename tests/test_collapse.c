/*
 * Collapsed channels (src/model/collapse.h, docs/collapse.md): the running
 * variance's closed form and the eval-mode gain against the layer itself
 * (src/model/bn.c) trained on constant and nearly constant batches, for eps
 * 1e-5 (PyTorch) and 1e-3 (Keras), every estimator, both conventions and
 * perturbations from 1e-6 to 100; the train-mode response of one moved
 * row against the layer's train-mode pass; and the precise estimator
 * through a whole run.
 */
#include "helpers.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/bn.h"
#include "model/collapse.h"

static void test_power_is_repeated_multiplication(void **state)
{
    (void)state;
    static const double keeps[] = {0.9, 0.99, 0.5, 0.999, 1.0, 0.0};
    for (size_t i = 0; i < 6; i++) {
        long double want = 1.0L;
        for (size_t t = 0; t <= 3000; t++) {
            if (t == 0 || t == 1 || t == 7 || t == 64 || t == 1000 ||
                t == 3000) {
                double got = collapse_power(keeps[i], t);
                /* Squaring doubles the relative error it inherits, so
                 * the bound is about t ulps, as for t multiplications;
                 * below DBL_MIN it has underflowed, far below any eps. */
                if (want < DBL_MIN)
                    assert_true(got < DBL_MIN);
                else
                    assert_close(got, want, (double)(t + 2) * DBL_EPSILON,
                                 want);
            }
            want *= keeps[i];
        }
    }
}

/* A batch of b rows of the value c, the rows alternating c + a, c - a
 * (a = 0: constant). */
static void fill_batch(double *x, size_t b, double c, double a)
{
    for (size_t i = 0; i < b; i++)
        x[i] = i % 2 ? c - a : c + a;
}

/* Train t updates on the same batch, then compare rv with the closed form
 * and the eval-mode move of an input by each delta with gain * delta. */
static void check_layer(bn_estimator est, bn_variance var, double momentum,
                        double eps, size_t t, size_t b, double c, double a)
{
    bn_config cfg;
    default_layer(&cfg);
    bn_set_momentum(&cfg, momentum, BN_WEIGHTS_OLD, NULL);
    cfg.estimator = est;
    cfg.variance = var;
    cfg.eps = eps;
    cfg.gamma = 1.7;
    cfg.beta = -0.3;
    bn_layer layer;
    assert_int_equal(bn_init(&layer, 1, &cfg), 0);
    double x[64], y[64], mean, s = 0.0;
    fill_batch(x, b, c, a);
    for (size_t i = 0; i < t; i++)
        bn_train_forward(&layer, b, x, y, &mean, &s);
    double rv = collapse_running_var(&cfg, t, b, s);
    /* The recursion rounds once or twice per update. */
    assert_close(layer.rv[0], rv, (4.0 * (double)t + 8.0) * DBL_EPSILON,
                 fabs(rv) + DBL_MIN);
    if (t == 0)
        assert_true(layer.rv[0] == 1.0);
    static const double deltas[] = {1e-6, 1e-3, 1.0, 100.0, -0.25};
    for (size_t k = 0; k < 5; k++) {
        double x0 = c, x1 = c + deltas[k], y0, y1;
        bn_eval_forward(&layer, 1, &x0, &y0);
        bn_eval_forward(&layer, 1, &x1, &y1);
        long double moved = (long double)x1 - x0; /* the delta stored */
        long double gain = collapse_gain(&cfg, rv);
        /* y = gamma (x - rm) / sd + beta rounds a few times on each side:
         * a few ulps of |y0| and |y1| and of the gain, and the gain from
         * the closed-form rv differs from the layer's by half of rv's
         * relative rounding, (2 t + 4) ulps at most. */
        long double tol = 8.0L * DBL_EPSILON *
                              (fabs(y0) + fabs(y1) + fabsl(gain * moved)) +
                          (2.0L * t + 4.0L) * DBL_EPSILON *
                              fabsl(gain * moved);
        long double d = (long double)y1 - y0 - gain * moved;
        if (!(fabsl(d) <= tol))
            fail_msg("%s/%s eps %g t %zu delta %g: moved %.17Lg, gain x "
                     "delta %.17Lg",
                     bn_estimator_name(est), bn_variance_name(var), eps, t,
                     deltas[k], (long double)y1 - y0, gain * moved);
    }
    /* At collapse the gain is gamma / sqrt(eps) to rounding. */
    if (a == 0.0 && est != BN_EST_EMA && t > 0)
        assert_close(collapse_gain(&cfg, rv), cfg.gamma / sqrtl(eps),
                     4 * DBL_EPSILON, cfg.gamma / sqrtl(eps));
    bn_free(&layer);
}

static void test_running_var_and_gain_match_the_layer(void **state)
{
    (void)state;
    static const bn_estimator ests[] = {BN_EST_EMA, BN_EST_EMA_DEBIASED,
                                        BN_EST_CUMULATIVE};
    static const double epss[] = {1e-5, 1e-3};
    static const size_t ts[] = {0, 1, 10, 100, 1000};
    for (size_t e = 0; e < sizeof ests / sizeof *ests; e++)
        for (size_t v = 0; v < 2; v++)
            for (size_t k = 0; k < 2; k++)
                for (size_t ti = 0; ti < 5; ti++) {
                    /* constant, at 0 and away from it */
                    check_layer(ests[e], (bn_variance)v, 0.9, epss[k],
                                ts[ti], 16, 0.0, 0.0);
                    check_layer(ests[e], (bn_variance)v, 0.99, epss[k],
                                ts[ti], 32, 3.25, 0.0);
                    /* nearly constant: batch variance 1e-8 and 1e-4 */
                    check_layer(ests[e], (bn_variance)v, 0.9, epss[k],
                                ts[ti], 8, -1.5, 1e-4);
                    check_layer(ests[e], (bn_variance)v, 0.7, epss[k],
                                ts[ti], 64, 0.5, 1e-2);
                }
}

/* The ema's stored variance falls as keep^T from the initial 1: the gain
 * climbs from gamma / sqrt(1 + eps) to gamma / sqrt(eps). */
static void test_ema_gain_climbs_to_the_floor(void **state)
{
    (void)state;
    bn_config cfg;
    default_layer(&cfg);
    double prev = 0.0;
    for (size_t t = 0; t <= 400; t += 10) {
        double g = collapse_gain(&cfg, collapse_running_var(&cfg, t, 8, 0.0));
        assert_true(g > prev);
        assert_true(g < 1.0 / sqrt(cfg.eps));
        prev = g;
    }
    assert_close(collapse_gain(&cfg, collapse_running_var(&cfg, 0, 8, 0.0)),
                 1.0L / sqrtl(1.0L + 1e-5L), 4 * DBL_EPSILON, 1.0);
    /* 0.9^400 = 5e-19 is far below eps: the floor, to 1e-13. */
    assert_close(prev, 1.0L / sqrtl(1e-5L), 1e-13, 1.0L / sqrtl(1e-5L));
}

/* Train mode: one row of a constant batch moved by delta. */
static void test_train_response_matches_the_layer(void **state)
{
    (void)state;
    static const double deltas[] = {1e-6, 1e-3, 0.1, 1.0, 100.0, -3.0};
    static const size_t sizes[] = {2, 8, 64};
    static const double epss[] = {1e-5, 1e-3};
    for (size_t k = 0; k < 2; k++)
        for (size_t si = 0; si < 3; si++)
            for (size_t di = 0; di < 6; di++) {
                bn_config cfg;
    default_layer(&cfg);
                cfg.eps = epss[k];
                cfg.gamma = 0.8;
                cfg.beta = 0.1;
                bn_layer layer;
                assert_int_equal(bn_init(&layer, 1, &cfg), 0);
                size_t b = sizes[si];
                double x[64], y[64], mean, var;
                fill_batch(x, b, 0.0, 0.0);
                x[0] = deltas[di];
                bn_train_forward(&layer, b, x, y, &mean, &var);
                double want = collapse_train_response(&cfg, b, deltas[di]);
                assert_close(y[0] - cfg.beta, want, 16 * DBL_EPSILON,
                             fabs(want) + fabs(cfg.beta));
                /* Bounded by |gamma| sqrt(B - 1), whatever delta. */
                assert_true(fabs(want) <= 0.8 * sqrt((double)(b - 1)));
                bn_free(&layer);
            }
}

/* The precise estimator through a whole run: a population whose feature
 * f1 is constant stores rv 0, and every running estimator what the closed
 * form says. */
static void test_whole_run_on_a_constant_feature(void **state)
{
    (void)state;
    pop_spec spec;
    assert_int_equal(pop_default_spec(&spec), 0);
    spec.features[1].sd = 0.0;
    pop_t pop;
    bn_error err;
    int rc = pop_generate(&spec, &pop, &err);
    pop_spec_free(&spec);
    if (rc != 0)
        fail_msg("%s", err.msg);
    assert_true(pop.var[1] == 0.0);
    static const bn_estimator ests[] = {BN_EST_EMA, BN_EST_EMA_DEBIASED,
                                        BN_EST_CUMULATIVE, BN_EST_PRECISE};
    for (size_t e = 0; e < sizeof ests / sizeof *ests; e++) {
        run_config cfg;
        run_default_config(&cfg);
        cfg.batch_size = 32;
        cfg.epochs = 3;
        cfg.layer.estimator = ests[e];
        run_result res;
        if (run_execute(&pop, &cfg, NULL, &res, &err) != 0)
            fail_msg("%s", err.msg);
        double rv = collapse_running_var(&cfg.layer, res.updates, 32, 0.0);
        assert_close(res.running_var[1], rv, 256 * DBL_EPSILON,
                     rv + DBL_MIN);
        /* The relative scores: infinite while rv stays above the zero
         * variance, finite (and not NaN) once it is exactly 0. */
        if (res.running_var[1] != 0.0)
            assert_true(res.worst_var_rel == INFINITY &&
                        res.stats_err_rel == INFINITY);
        else
            assert_true(isfinite(res.worst_var_rel) &&
                        isfinite(res.stats_err_rel));
        run_result_free(&res);
    }
    pop_free(&pop);
}

int test_collapse_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_power_is_repeated_multiplication),
        cmocka_unit_test(test_running_var_and_gain_match_the_layer),
        cmocka_unit_test(test_ema_gain_climbs_to_the_floor),
        cmocka_unit_test(test_train_response_matches_the_layer),
        cmocka_unit_test(test_whole_run_on_a_constant_feature),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("collapse", tests, NULL, NULL);
}
