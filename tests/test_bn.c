/*
 * The layer (docs/definitions.md, "The layer"): the train-mode forward
 * pass against a long double reimplementation, the buffers against the closed forms of
 * each estimator over the statistics of real runs, the two momentum
 * conventions agreeing to the bit through the decimal complement, the
 * unbiased update being the biased one times B/(B-1), and eval mode being
 * deterministic.
 */
#include "helpers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/bn.h"
#include "model/order.h"

/* Copy rows[0..b-1] of the population into a B x F batch. */
static double *gather(const pop_t *pop, const size_t *rows, size_t b)
{
    double *x = malloc(b * pop->f * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < b; i++)
        memcpy(&x[i * pop->f], &pop->x[rows[i] * pop->f],
               pop->f * sizeof *x);
    return x;
}

static void check_train_forward(const pop_t *pop, size_t b, size_t step,
                                double gamma, double beta, double eps)
{
    size_t f = pop->f, rows[512];
    for (size_t i = 0; i < b; i++)
        rows[i] = (i * step) % pop->n;
    double *x = gather(pop, rows, b);
    double *y = malloc(b * f * sizeof *y);
    assert_non_null(y);
    bn_config cfg;
    default_layer(&cfg);
    cfg.gamma = gamma;
    cfg.beta = beta;
    cfg.eps = eps;
    bn_layer layer;
    assert_int_equal(bn_init(&layer, f, &cfg), 0);
    double mean[f], var[f];
    bn_train_forward(&layer, b, x, y, mean, var);
    bn_free(&layer);
    for (size_t j = 0; j < f; j++) {
        long double m, v;
        ld_moments(b, f, x + j, &m, &v);
        assert_close(mean[j], m, 1e-13, sqrtl(v));
        assert_rel(var[j], v, 1e-13);
        long double sd = sqrtl(v + eps);
        for (size_t i = 0; i < b; i++) {
            long double want = gamma * ((x[i * f + j] - m) / sd) + beta;
            assert_close(y[i * f + j], want, 1e-13, fabsl(want) + 1.0L);
        }
    }
    free(x);
    free(y);
}

static void test_train_forward_matches_long_double(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    check_train_forward(&pop, 32, 7, 1.0, 0.0, 1e-5);
    check_train_forward(&pop, 2, 101, 1.0, 0.0, 1e-5);
    check_train_forward(&pop, 100, 3, 1.5, -0.25, 1e-3);
    check_train_forward(&pop, 512, 1, -0.5, 2.0, 1e-5);
    pop_free(&pop);
}

static void test_decimal_complement(void **state)
{
    (void)state;
    /* The reason for the decimal step: in binary 1 - 0.9 is not 0.1. */
    volatile double nine = 0.9;
    assert_true(1.0 - nine != 0.1);

    static const double cases[][2] = {
        {0.9, 0.1},   {0.99, 0.01},  {0.1, 0.9},   {1e-5, 0.99999},
        {0.999, 0.001}, {0.5, 0.5},  {0.3, 0.7},   {0.7, 0.3},
        {0.01, 0.99}, {0.25, 0.75},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double got = bn_decimal_complement(cases[k][0]);
        if (got != cases[k][1])
            fail_msg("complement of %.17g = %.17g, want %.17g", cases[k][0],
                     got, cases[k][1]);
    }
    /* Both conventions derive the same p and keep. */
    bn_config a, b;
    default_layer(&a);
    default_layer(&b);
    assert_int_equal(bn_set_momentum(&a, 0.9, BN_WEIGHTS_OLD, NULL), 0);
    assert_int_equal(bn_set_momentum(&b, 0.1, BN_WEIGHTS_NEW, NULL), 0);
    assert_true(a.p == 0.1 && a.keep == 0.9);
    assert_true(b.p == 0.1 && b.keep == 0.9);
    assert_int_equal(bn_set_momentum(&a, 0.0, BN_WEIGHTS_OLD, NULL), -1);
    assert_int_equal(bn_set_momentum(&a, 1.5, BN_WEIGHTS_NEW, NULL), -1);
    assert_int_equal(bn_set_momentum(&a, NAN, BN_WEIGHTS_NEW, NULL), -1);
}

static void config(run_config *cfg, const char *order, size_t b,
                   unsigned long epochs, bn_variance var, double momentum,
                   bn_weights w)
{
    run_default_config(cfg);
    set_order(cfg, order);
    cfg->batch_size = b;
    cfg->epochs = epochs;
    cfg->layer.variance = var;
    assert_int_equal(bn_set_momentum(&cfg->layer, momentum, w, NULL), 0);
}

static void test_conventions_are_the_same_layer(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    static const double pairs[][2] = {{0.9, 0.1}, {0.99, 0.01}, {0.7, 0.3}};
    static const size_t bs[] = {8, 64, 256};
    static const char *const orders[] = {"shuffled", "sorted"};
    size_t f = pop.f;
    for (size_t q = 0; q < 3; q++)
        for (size_t k = 0; k < 3; k++)
            for (size_t o = 0; o < 2; o++) {
                run_config a, b;
                run_result ra, rb;
                config(&a, orders[o], bs[k], 2, BN_VAR_UNBIASED, pairs[q][0],
                       BN_WEIGHTS_OLD);
                config(&b, orders[o], bs[k], 2, BN_VAR_UNBIASED, pairs[q][1],
                       BN_WEIGHTS_NEW);
                run_or_fail(&pop, &a, NULL, &ra);
                run_or_fail(&pop, &b, NULL, &rb);
                if (memcmp(ra.running_mean, rb.running_mean,
                           f * sizeof(double)) != 0 ||
                    memcmp(ra.running_var, rb.running_var,
                           f * sizeof(double)) != 0)
                    fail_msg("momentum %g old and %g new differ (B %zu, %s)",
                             pairs[q][0], pairs[q][1], bs[k], orders[o]);
                assert_true(ra.train_eval_rmse == rb.train_eval_rmse);
                run_result_free(&ra);
                run_result_free(&rb);
            }
    /* And the bits would differ with the binary complement, so the
     * comparison above can fail. */
    run_config a, b;
    run_result ra, rb;
    config(&a, "shuffled", 64, 1, BN_VAR_BIASED, 0.9, BN_WEIGHTS_OLD);
    b = a;
    b.layer.p = 1.0 - b.layer.keep;
    run_or_fail(&pop, &a, NULL, &ra);
    run_or_fail(&pop, &b, NULL, &rb);
    assert_true(memcmp(ra.running_mean, rb.running_mean,
                       f * sizeof(double)) != 0 ||
                memcmp(ra.running_var, rb.running_var, f * sizeof(double)) !=
                    0);
    run_result_free(&ra);
    run_result_free(&rb);
    pop_free(&pop);
}

/* With new-value weight 1 the buffer is exactly the update's statistic
 * (keep is 0), so two layers that differ only in the variance convention
 * expose the factor itself. */
static void test_unbiased_is_biased_times_b_over_b_minus_1(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    static const size_t bs[] = {2, 3, 12, 100, 256, 512};
    size_t f = pop.f;
    for (size_t k = 0; k < sizeof bs / sizeof bs[0]; k++) {
        size_t b = bs[k], rows[512];
        for (size_t i = 0; i < b; i++)
            rows[i] = (i * 5 + k) % pop.n;
        double *x = gather(&pop, rows, b);
        double *y = malloc(b * f * sizeof *y);
        assert_non_null(y);
        bn_config cb, cu;
        default_layer(&cb);
        assert_int_equal(bn_set_momentum(&cb, 1.0, BN_WEIGHTS_NEW, NULL), 0);
        assert_true(cb.p == 1.0 && cb.keep == 0.0);
        cu = cb;
        cu.variance = BN_VAR_UNBIASED;
        bn_layer lb, lu;
        assert_int_equal(bn_init(&lb, f, &cb), 0);
        assert_int_equal(bn_init(&lu, f, &cu), 0);
        double mb[f], vb[f], mu[f], vu[f];
        bn_train_forward(&lb, b, x, y, mb, vb);
        bn_train_forward(&lu, b, x, y, mu, vu);
        for (size_t j = 0; j < f; j++) {
            assert_true(lb.rm[j] == mb[j] && lu.rm[j] == lb.rm[j]);
            assert_true(lb.rv[j] == vb[j] && vu[j] == vb[j]);
            double want = lb.rv[j] * (double)b / (double)(b - 1);
            if (lu.rv[j] != want)
                fail_msg("B %zu feature %zu: unbiased %.17g, want %.17g", b,
                         j, lu.rv[j], want);
            assert_true(lu.rv[j] != lb.rv[j]);
            assert_rel((long double)lu.rv[j] / lb.rv[j],
                       (long double)b / (long double)(b - 1), 1e-15);
        }
        bn_free(&lb);
        bn_free(&lu);
        free(x);
        free(y);
    }
    pop_free(&pop);
}

static void test_eval_twice_is_bit_identical(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    size_t n = pop.n, f = pop.f;
    bn_config cfg;
    default_layer(&cfg);
    cfg.gamma = 0.75;
    cfg.beta = 0.5;
    bn_layer layer, before;
    assert_int_equal(bn_init(&layer, f, &cfg), 0);
    double *y = malloc(n * f * sizeof *y), *e1 = malloc(n * f * sizeof *e1),
           *e2 = malloc(n * f * sizeof *e2);
    assert_true(y && e1 && e2);
    double mean[f], var[f];
    for (size_t k = 0; k < 4; k++)
        bn_train_forward(&layer, 128, pop.x + k * 128 * f, y + k * 128 * f,
                         mean, var);
    assert_int_equal(bn_copy(&before, &layer), 0);
    bn_eval_forward(&layer, n, pop.x, e1);
    bn_eval_forward(&layer, n, pop.x, e2);
    assert_memory_equal(e1, e2, n * f * sizeof *e1);
    /* Eval leaves the buffers alone and follows its formula. */
    assert_memory_equal(before.rm, layer.rm, f * sizeof *layer.rm);
    assert_memory_equal(before.rv, layer.rv, f * sizeof *layer.rv);
    assert_int_equal(before.updates, layer.updates);
    bn_free(&before);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < f; j++) {
            long double want = 0.75L * ((pop.x[i * f + j] -
                                         (long double)layer.rm[j]) /
                                        sqrtl((long double)layer.rv[j] +
                                              1e-5L)) +
                               0.5L;
            assert_close(e1[i * f + j], want, 1e-13, fabsl(want) + 1.0L);
        }
    bn_free(&layer);
    free(y);
    free(e1);
    free(e2);
    pop_free(&pop);
}

/* The closed form of the configured estimator over a run's recorded batch
 * statistics, against the buffers the run ended with. */
static void check_closed_form(const pop_t *pop, const run_config *cfg)
{
    recorder rec;
    run_observer obs = recorder_observer(&rec);
    run_result res;
    run_or_fail(pop, cfg, &obs, &res);
    size_t f = pop->f, t_count = rec.n, n = pop->n, b = cfg->batch_size;
    size_t per_epoch =
        n / b + (cfg->partial == RUN_PARTIAL_KEEP && n % b != 0);
    assert_int_equal(t_count, cfg->epochs * per_epoch);
    assert_int_equal(res.updates, t_count);
    long double *sm = malloc(t_count * f * sizeof *sm);
    long double *sv = malloc(t_count * f * sizeof *sv);
    assert_true(sm && sv);
    for (size_t t = 0; t < t_count; t++) {
        const rec_batch *rb = &rec.batches[t];
        for (size_t j = 0; j < f; j++) {
            sm[t * f + j] = rb->mean[j];
            sv[t * f + j] = rb->var[j];
            if (cfg->layer.variance == BN_VAR_UNBIASED)
                sv[t * f + j] *=
                    (long double)rb->b / (long double)(rb->b - 1);
        }
    }
    long double rm[f], rv[f], am[f], av[f];
    ld_buffers(cfg->layer.estimator, cfg->layer.p, cfg->layer.keep, t_count,
               f, sm, sv, rm, rv, am, av);
    for (size_t j = 0; j < f; j++) {
        assert_close(res.running_mean[j], rm[j], 1e-12, am[j]);
        assert_close(res.running_var[j], rv[j], 1e-12, av[j]);
    }
    run_result_free(&res);
    free(sm);
    free(sv);
    recorder_free(&rec);
}

static void sweep_closed_forms(bn_estimator est)
{
    pop_t pop;
    default_pop(&pop);
    static const size_t bs[] = {8, 64, 100, 256};
    static const char *const orders[] = {"shuffled", "sorted"};
    static const unsigned long epochs[] = {1, 3};
    for (size_t k = 0; k < 4; k++)
        for (size_t o = 0; o < 2; o++)
            for (size_t e = 0; e < 2; e++)
                for (int v = 0; v < 2; v++) {
                    run_config cfg;
                    config(&cfg, orders[o], bs[k], epochs[e],
                           v ? BN_VAR_UNBIASED : BN_VAR_BIASED, 0.9,
                           BN_WEIGHTS_OLD);
                    cfg.layer.estimator = est;
                    /* B = 100 leaves 12 rows, which keep trains on. */
                    if (bs[k] == 100)
                        cfg.partial = RUN_PARTIAL_KEEP;
                    check_closed_form(&pop, &cfg);
                }
    /* Other weights, so that p and keep are not only 0.1 and 0.9. */
    run_config cfg;
    config(&cfg, "shuffled", 32, 2, BN_VAR_BIASED, 0.3, BN_WEIGHTS_NEW);
    cfg.layer.estimator = est;
    check_closed_form(&pop, &cfg);
    config(&cfg, "sorted", 16, 1, BN_VAR_UNBIASED, 0.99, BN_WEIGHTS_OLD);
    cfg.layer.estimator = est;
    check_closed_form(&pop, &cfg);
    pop_free(&pop);
}

static void test_ema_buffers_closed_form(void **state)
{
    (void)state;
    sweep_closed_forms(BN_EST_EMA);
}

static void test_debiased_buffers_closed_form(void **state)
{
    (void)state;
    sweep_closed_forms(BN_EST_EMA_DEBIASED);
}

static void test_cumulative_buffers_closed_form(void **state)
{
    (void)state;
    sweep_closed_forms(BN_EST_CUMULATIVE);
}

/* The precise estimator's buffers are the pooled moments of the rows of
 * the first K batches of the order: all rows when K is 0. */
static void check_precise(const pop_t *pop, size_t b, run_partial partial,
                          size_t k)
{
    run_config cfg;
    config(&cfg, "shuffled", b, 1, BN_VAR_BIASED, 0.9, BN_WEIGHTS_OLD);
    cfg.layer.estimator = BN_EST_PRECISE;
    cfg.partial = partial;
    cfg.precise_batches = k;
    recorder rec;
    run_observer obs = recorder_observer(&rec);
    run_result res;
    run_or_fail(pop, &cfg, &obs, &res);
    size_t f = pop->f, used = 0, rows[512];
    for (size_t t = 0; t < rec.n && (k == 0 || t < k); t++)
        for (size_t i = 0; i < rec.batches[t].b; i++)
            rows[used++] = rec.batches[t].rows[i];
    double *x = gather(pop, rows, used);
    for (size_t j = 0; j < f; j++) {
        long double m, v;
        ld_moments(used, f, x + j, &m, &v);
        assert_close(res.running_mean[j], m, 1e-14, sqrtl(v));
        assert_rel(res.running_var[j], v, 1e-14);
        if (used == pop->n)
            assert_rel(res.running_var[j], pop->var[j], 1e-14);
    }
    run_result_free(&res);
    free(x);
    recorder_free(&rec);
}

static void test_precise_buffers_are_pooled_moments(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    check_precise(&pop, 256, RUN_PARTIAL_DROP, 0);
    check_precise(&pop, 64, RUN_PARTIAL_DROP, 1);
    check_precise(&pop, 64, RUN_PARTIAL_DROP, 3);
    check_precise(&pop, 100, RUN_PARTIAL_KEEP, 0);
    check_precise(&pop, 100, RUN_PARTIAL_DROP, 0);
    pop_free(&pop);
}

/* bn_update_batches is nb calls of bn_update, to the bit: every
 * estimator, both variance conventions, an odd feature, batches apart by
 * a stride that is not theirs. */
static void test_update_batches_is_one_at_a_time(void **state)
{
    (void)state;
    static const size_t fs[] = {1, 5, 8}, nbs[] = {1, 3, 17};
    double stats[17 * 20];
    for (size_t i = 0; i < sizeof stats / sizeof stats[0]; i++)
        stats[i] = 0.25 + (double)((i * 7919) % 101) / 37.0;
    for (int e = 0; e < BN_EST_COUNT; e++)
        for (int unb = 0; unb < 2; unb++)
            for (size_t a = 0; a < 3; a++)
                for (size_t c = 0; c < 3; c++) {
                    size_t f = fs[a], nb = nbs[c], stride = 2 * f + 3;
                    bn_config cfg;
                    default_layer(&cfg);
                    cfg.estimator = (bn_estimator)e;
                    cfg.variance = unb ? BN_VAR_UNBIASED : BN_VAR_BIASED;
                    bn_layer one, many;
                    assert_int_equal(bn_init(&one, f, &cfg), 0);
                    assert_int_equal(bn_init(&many, f, &cfg), 0);
                    /* buffers of their own before the batches */
                    bn_update(&one, 7, stats + 5, stats + 9);
                    bn_update(&many, 7, stats + 5, stats + 9);
                    for (size_t q = 0; q < nb; q++)
                        bn_update(&one, 7, stats + q * stride,
                                  stats + q * stride + f);
                    bn_update_batches(&many, 7, nb, stride, stats,
                                      stats + f);
                    assert_memory_equal(one.rm, many.rm, f * sizeof(double));
                    assert_memory_equal(one.rv, many.rv, f * sizeof(double));
                    assert_memory_equal(&one.acc_w, &many.acc_w,
                                        sizeof(double));
                    assert_int_equal(one.updates, many.updates);
                    bn_free(&one);
                    bn_free(&many);
                }
}

/* The layer's seven arrays share one block (base/carve.h): a copy has
 * every value of each, in arrays of its own, and in a build with
 * AddressSanitizer the bytes just past each array are poisoned, so that
 * an index one past gamma's end is reported, not read from beta. */
static void test_layer_arrays_keep_their_bounds(void **state)
{
    (void)state;
    enum { F = 5 };
    bn_config cfg;
    default_layer(&cfg);
    bn_layer layer, copy;
    assert_int_equal(bn_init(&layer, F, &cfg), 0);
    double *arrays[] = {layer.gamma, layer.beta,  layer.rm,   layer.rv,
                        layer.acc_m, layer.acc_v, layer.upd_v};
    enum { A = sizeof arrays / sizeof arrays[0] };
    for (size_t a = 0; a < A; a++)
        for (size_t j = 0; j < F; j++)
            arrays[a][j] = (double)(10 * a + j) + 0.25;
    assert_int_equal(bn_copy(&copy, &layer), 0);
    double *copies[A] = {copy.gamma, copy.beta,  copy.rm,   copy.rv,
                         copy.acc_m, copy.acc_v, copy.upd_v};
    for (size_t a = 0; a < A; a++) {
        assert_ptr_not_equal(copies[a], arrays[a]);
        for (size_t j = 0; j < F; j++)
            assert_true(copies[a][j] == (double)(10 * a + j) + 0.25);
#ifdef TEST_ASAN
        assert_false(__asan_address_is_poisoned(arrays[a] + F - 1));
        assert_true(__asan_address_is_poisoned(arrays[a] + F));
        assert_true(__asan_address_is_poisoned(copies[a] + F));
#endif
    }
    bn_free(&copy);
    bn_free(&layer);
}

int test_bn_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_train_forward_matches_long_double),
        cmocka_unit_test(test_decimal_complement),
        cmocka_unit_test(test_conventions_are_the_same_layer),
        cmocka_unit_test(test_unbiased_is_biased_times_b_over_b_minus_1),
        cmocka_unit_test(test_eval_twice_is_bit_identical),
        cmocka_unit_test(test_ema_buffers_closed_form),
        cmocka_unit_test(test_debiased_buffers_closed_form),
        cmocka_unit_test(test_cumulative_buffers_closed_form),
        cmocka_unit_test(test_precise_buffers_are_pooled_moments),
        cmocka_unit_test(test_update_batches_is_one_at_a_time),
        cmocka_unit_test(test_layer_arrays_keep_their_bounds),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("bn", tests, NULL, NULL);
}
