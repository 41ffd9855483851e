/*
 * Drift during training (src/pop/drift.h, expect_drift in src/model/expect.h,
 * docs/expectation.md): the profiles; the expected running mean and
 * squared error over every ordering against an exact enumeration of a tiny
 * population, where no sampling noise enters; the ema lag after a step
 * against (1 - p)^(T - T0); and the real layer over 10^4 shuffles against
 * the closed form within its standard error.
 */
#include "helpers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/bn.h"
#include "pop/drift.h"
#include "model/expect.h"
#include "model/order.h"

static void test_drift_names(void **state)
{
    (void)state;
    static const char *const good[] = {"none", "step:0", "step:17",
                                       "ramp:0:1", "ramp:5:40"};
    for (size_t i = 0; i < 5; i++) {
        drift_spec d;
        char buf[64];
        assert_int_equal(drift_parse(good[i], &d, NULL), 0);
        assert_string_equal(drift_name(&d, buf, sizeof buf), good[i]);
    }
    static const char *const bad[] = {"", "step", "step:", "step:-1",
                                      "step:1x", "ramp:5", "ramp:5:5",
                                      "ramp:6:5", "ramp:1:2:3", "linear:1"};
    for (size_t i = 0; i < 10; i++) {
        drift_spec d;
        bn_error err;
        assert_int_equal(drift_parse(bad[i], &d, &err), -1);
        assert_non_null(strstr(err.msg, bad[i]));
    }
    drift_spec s = {DRIFT_STEP, 3, 0}, r = {DRIFT_RAMP, 2, 6};
    assert_true(drift_fraction(&s, 3) == 0.0 && drift_fraction(&s, 4) == 1.0);
    assert_true(drift_fraction(&r, 2) == 0.0);
    assert_true(drift_fraction(&r, 3) == 0.25);
    assert_true(drift_fraction(&r, 5) == 0.75);
    assert_true(drift_fraction(&r, 6) == 1.0 && drift_fraction(&r, 9) == 1.0);
}

static const pop_feature drift_features[] = {
    {"a", 2.0, 1.0, 0.7}, {"b", -1.0, 3.0, 0.0}, {"c", 0.5, 0.2, -0.4}};

static const double offsets[3] = {1.5, -4.0, 0.25};

static void check_enumerated(size_t n, size_t b, bn_estimator est,
                             unsigned long epochs, run_partial partial,
                             double momentum, const char *drift)
{
    pop_t pop;
    small_pop(&pop, n, 5, 3, drift_features);
    run_config cfg;
    run_default_config(&cfg);
    cfg.batch_size = b;
    cfg.epochs = epochs;
    cfg.partial = partial;
    cfg.layer.estimator = est;
    bn_set_momentum(&cfg.layer, momentum, BN_WEIGHTS_OLD, NULL);
    drift_spec d;
    assert_int_equal(drift_parse(drift, &d, NULL), 0);
    size_t t_count = epochs * run_batches_per_epoch(n, b, partial);
    size_t perm[8];
    long double sum_rm[3] = {0}, sum_sq = 0.0L, scale = 0.0L;
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    do {
        for (size_t j = 0; j < 3; j++) {
            long double rm =
                ld_running_mean(&pop, &cfg, perm, j, &d, offsets[j]);
            long double truth =
                pop.mean[j] + drift_fraction(&d, t_count) * offsets[j];
            sum_rm[j] += rm;
            sum_sq += (rm - truth) * (rm - truth) / 3.0L;
            scale += (rm * rm + truth * truth) / 3.0L;
        }
        count++;
    } while (test_next_permutation(perm, n));
    double mean[3], err_sq;
    bn_error err;
    if (expect_drift(&pop, &cfg, &d, offsets, mean, &err_sq, &err) != 0)
        fail_msg("%s", err.msg);
    /* Exact sums both ways: only rounding separates them, relative to the
     * size of the terms the squared error was computed from. */
    for (size_t j = 0; j < 3; j++)
        assert_close(mean[j], sum_rm[j] / count, 1e-14,
                     fabsl(pop.mean[j]) + fabs(offsets[j]));
    assert_close(err_sq, sum_sq / count, 1e-13, scale / count);
    pop_free(&pop);
}

static void test_drift_equals_enumeration(void **state)
{
    (void)state;
    check_enumerated(6, 2, BN_EST_EMA, 1, RUN_PARTIAL_DROP, 0.9, "step:1");
    check_enumerated(6, 2, BN_EST_EMA, 3, RUN_PARTIAL_DROP, 0.7, "step:4");
    check_enumerated(6, 2, BN_EST_EMA, 3, RUN_PARTIAL_DROP, 0.5,
                     "ramp:2:7");
    check_enumerated(7, 2, BN_EST_EMA_DEBIASED, 2, RUN_PARTIAL_DROP, 0.9,
                     "step:3");
    check_enumerated(7, 3, BN_EST_CUMULATIVE, 3, RUN_PARTIAL_DROP, 0.9,
                     "ramp:1:4");
    check_enumerated(8, 3, BN_EST_EMA, 2, RUN_PARTIAL_KEEP, 0.8, "ramp:0:5");
    check_enumerated(8, 3, BN_EST_EMA_DEBIASED, 2, RUN_PARTIAL_KEEP, 0.6,
                     "step:2");
    check_enumerated(7, 2, BN_EST_EMA, 2, RUN_PARTIAL_DROP, 0.9, "none");
    /* A change after the last update moves nothing. */
    check_enumerated(6, 2, BN_EST_EMA, 1, RUN_PARTIAL_DROP, 0.9, "step:3");
}

/* Without drift it is expect_mean_err_sq, to the bit. */
static void test_no_drift_is_the_old_closed_form(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    static const bn_estimator ests[] = {BN_EST_EMA, BN_EST_EMA_DEBIASED,
                                        BN_EST_CUMULATIVE};
    drift_spec none = {DRIFT_NONE, 0, 0};
    double delta[pop.f];
    memset(delta, 0, sizeof delta);
    for (size_t e = 0; e < sizeof ests / sizeof *ests; e++)
        for (size_t b = 8; b <= 256; b *= 4) {
            run_config cfg;
            run_default_config(&cfg);
            cfg.batch_size = b;
            cfg.epochs = 2;
            cfg.layer.estimator = ests[e];
            double mean[pop.f], got, want;
            assert_int_equal(
                expect_drift(&pop, &cfg, &none, delta, mean, &got, NULL), 0);
            assert_int_equal(expect_mean_err_sq(&pop, &cfg, &want, NULL), 0);
            assert_true(got == want);
        }
    pop_free(&pop);
}

/* The ema's expected lag, noise-free: after a step of delta at T0,
 *     E[rm_T] - (mu + delta) = -keep^T mu - keep^(T - T0) delta.
 * keep^k by repeated multiplication in long double. */
static void test_ema_lag_decays_geometrically(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    double delta[pop.f];
    for (size_t j = 0; j < pop.f; j++)
        delta[j] = 0.5 + (double)j;
    static const double momenta[] = {0.9, 0.99, 0.5};
    static const size_t t0s[] = {0, 10, 64, 127};
    for (size_t mi = 0; mi < 3; mi++)
        for (size_t ti = 0; ti < 4; ti++) {
            run_config cfg;
            run_default_config(&cfg);
            cfg.batch_size = 8;
            cfg.epochs = 2; /* T = 128 updates */
            bn_set_momentum(&cfg.layer, momenta[mi], BN_WEIGHTS_OLD, NULL);
            drift_spec d = {DRIFT_STEP, t0s[ti], 0};
            double mean[pop.f], err_sq;
            assert_int_equal(
                expect_drift(&pop, &cfg, &d, delta, mean, &err_sq, NULL), 0);
            long double keep = cfg.layer.keep, k_t = 1.0L, k_lag = 1.0L;
            for (size_t t = 0; t < 128; t++)
                k_t *= keep;
            for (size_t t = t0s[ti]; t < 128; t++)
                k_lag *= keep;
            for (size_t j = 0; j < pop.f; j++) {
                long double lag = -k_t * pop.mean[j] - k_lag * delta[j];
                assert_close(mean[j] - (pop.mean[j] + delta[j]), lag, 1e-14,
                             fabs(pop.mean[j]) + delta[j]);
            }
        }
    pop_free(&pop);
}

/* The real layer (bn.c) on 10^4 shuffles with the drift added to each
 * batch: the average final running mean of every feature, and the average
 * mean_err^2 against the drifted truth, each within 3.29 standard errors
 * (two-sided 99.9 %) of the closed form. */
static void check_shuffles(const char *drift, bn_estimator est,
                           double momentum, size_t b, unsigned long epochs)
{
    pop_t pop;
    default_pop(&pop);
    size_t n = pop.n, f = pop.f, nb = n / b;
    run_config cfg;
    run_default_config(&cfg);
    cfg.batch_size = b;
    cfg.epochs = epochs;
    cfg.layer.estimator = est;
    bn_set_momentum(&cfg.layer, momentum, BN_WEIGHTS_OLD, NULL);
    drift_spec d;
    assert_int_equal(drift_parse(drift, &d, NULL), 0);
    double delta[f];
    for (size_t j = 0; j < f; j++)
        delta[j] = (j % 2 ? -1.0 : 1.0) * (0.5 + 0.25 * (double)j);
    double want_mean[f], want_sq;
    assert_int_equal(
        expect_drift(&pop, &cfg, &d, delta, want_mean, &want_sq, NULL), 0);
    double last = drift_fraction(&d, epochs * nb);
    order_spec ord;
    assert_int_equal(order_parse("shuffled", &pop, &ord, NULL), 0);
    size_t *perm = malloc(n * sizeof *perm);
    double *x = malloc(b * f * sizeof *x), *y = malloc(b * f * sizeof *y);
    assert_true(perm && x && y);
    const size_t seeds = 10000;
    long double s1[f], s2[f];
    memset(s1, 0, sizeof s1);
    memset(s2, 0, sizeof s2);
    long double q1 = 0.0L, q2 = 0.0L;
    for (size_t seed = 1; seed <= seeds; seed++) {
        assert_int_equal(order_make(&ord, &pop, seed, perm, NULL), 0);
        bn_layer layer;
        assert_int_equal(bn_init(&layer, f, &cfg.layer), 0);
        double mean[f], var[f];
        size_t t = 0;
        for (unsigned long e = 0; e < epochs; e++)
            for (size_t k = 0; k < nb; k++) {
                double frac = drift_fraction(&d, ++t);
                for (size_t i = 0; i < b; i++)
                    for (size_t j = 0; j < f; j++)
                        x[i * f + j] =
                            pop.x[perm[k * b + i] * f + j] + frac * delta[j];
                bn_train_forward(&layer, b, x, y, mean, var);
            }
        long double sq = 0.0L;
        for (size_t j = 0; j < f; j++) {
            long double rm = layer.rm[j];
            s1[j] += rm;
            s2[j] += rm * rm;
            long double dv = rm - (pop.mean[j] + last * delta[j]);
            sq += dv * dv / (long double)f;
        }
        bn_free(&layer);
        q1 += sq;
        q2 += sq * sq;
    }
    for (size_t j = 0; j < f; j++) {
        long double m = s1[j] / seeds;
        long double se = sqrtl((s2[j] - s1[j] * m) / (seeds - 1) / seeds);
        long double z = (m - want_mean[j]) / se;
        if (!(fabsl(z) <= 3.29L))
            fail_msg("%s %s feature %zu: shuffles %.9Lg, closed form %.9g, "
                     "z = %.3Lg",
                     drift, bn_estimator_name(est), j, m, want_mean[j], z);
    }
    long double m = q1 / seeds;
    long double se = sqrtl((q2 - q1 * m) / (seeds - 1) / seeds);
    long double z = (m - want_sq) / se;
    if (!(fabsl(z) <= 3.29L))
        fail_msg("%s %s mean_err^2: shuffles %.9Lg, closed form %.9g, "
                 "z = %.3Lg",
                 drift, bn_estimator_name(est), m, want_sq, z);
    free(perm);
    free(x);
    free(y);
    pop_free(&pop);
}

static void test_drift_matches_shuffles(void **state)
{
    (void)state;
    check_shuffles("step:20", BN_EST_EMA, 0.9, 32, 2);
    check_shuffles("ramp:4:28", BN_EST_EMA, 0.7, 32, 2);
    check_shuffles("step:10", BN_EST_EMA_DEBIASED, 0.9, 64, 3);
    /* 48 does not divide 512: the dropped rows leave a spread. */
    check_shuffles("ramp:0:8", BN_EST_CUMULATIVE, 0.9, 48, 1);
}

static void test_drift_refuses(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    run_config cfg;
    run_default_config(&cfg);
    drift_spec d = {DRIFT_STEP, 1, 0};
    double delta[pop.f], mean[pop.f], sq;
    memset(delta, 0, sizeof delta);
    bn_error err;
    cfg.layer.estimator = BN_EST_PRECISE;
    assert_int_equal(expect_drift(&pop, &cfg, &d, delta, mean, &sq, &err),
                     -1);
    assert_non_null(strstr(err.msg, "not precise"));
    cfg.layer.estimator = BN_EST_EMA;
    assert_int_equal(order_parse("sorted", &pop, &cfg.order, NULL), 0);
    assert_int_equal(expect_drift(&pop, &cfg, &d, delta, mean, &sq, &err),
                     -1);
    assert_non_null(strstr(err.msg, "every order equally"));
    assert_int_equal(order_parse("shuffled", &pop, &cfg.order, NULL), 0);
    delta[3] = INFINITY;
    assert_int_equal(expect_drift(&pop, &cfg, &d, delta, mean, &sq, &err),
                     -1);
    assert_non_null(strstr(err.msg, "feature 3"));
    pop_free(&pop);
}

/* A sweep names each configuration's drift by all it shows: drifts of
 * one kind that differ only in their updates (a step's, a ramp's ends)
 * are named apart, whatever the sweep keeps from one configuration to
 * the next. */
static void test_sweep_names_each_drift(void **state)
{
    (void)state;
    char dir[300], path[400];
    assert_int_equal(test_tmpdir_make(dir, sizeof dir, "drift"), 0);
    snprintf(path, sizeof path, "%s/d.ini", dir);
    test_write_file(path, "[sweep]\nbatch_size = 16\nepochs = 2\n"
                          "drift = step:16 step:40 ramp:1:5 ramp:1:9 "
                          "ramp:2:9\nseed = 1 2\n");
    char *out, *err;
    if (test_bnstudy(dir, &out, &err, "sweep d.ini --out r") != 0)
        fail_msg("sweep: %s", err);
    free(out);
    free(err);
    snprintf(path, sizeof path, "%s/r/d/summary.tsv", dir);
    char *tsv = test_slurp(path, NULL);
    assert_non_null(tsv);
    static const char *const names[] = {"step:16", "step:40", "ramp:1:5",
                                        "ramp:1:9", "ramp:2:9"};
    for (size_t i = 0; i < 5; i++) {
        char cell[32];
        size_t rows = 0;
        snprintf(cell, sizeof cell, "\t%s\t", names[i]);
        for (const char *c = tsv; (c = strstr(c, cell)) != NULL; c++)
            rows++;
        if (rows != 2) /* one row a seed */
            fail_msg("%s: %zu rows, want 2", names[i], rows);
    }
    free(tsv);
    assert_int_equal(test_tmpdir_remove(dir), 0);
}

int test_drift_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drift_names),
        cmocka_unit_test(test_drift_equals_enumeration),
        cmocka_unit_test(test_no_drift_is_the_old_closed_form),
        cmocka_unit_test(test_ema_lag_decays_geometrically),
        cmocka_unit_test(test_drift_matches_shuffles),
        cmocka_unit_test(test_drift_refuses),
        cmocka_unit_test(test_sweep_names_each_drift),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("drift", tests, NULL, NULL);
}
