/*
 * Batch norm spread over devices ([layer] devices, sync): the layer's
 * buffers against their closed form over device 0's shares, computed in
 * long double from the rows alone (helpers' ld_buffers); every share's
 * train-mode statistics its own B / K rows'; synchronised statistics the
 * one-device run's bit for bit; and the refusals.
 */
#include "helpers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void config(run_config *cfg, size_t b, size_t k, int sync)
{
    run_default_config(cfg);
    cfg->batch_size = b;
    cfg->epochs = 2;
    cfg->layer.devices = k;
    cfg->layer.sync = sync;
    bn_set_momentum(&cfg->layer, 0.1, BN_WEIGHTS_NEW, NULL);
    cfg->layer.variance = BN_VAR_UNBIASED;
}

/* B 64 on 4 devices: 16 updates, each from rows t B .. t B + 15 of the
 * order (device 0's share), their variance with divisor 15. */
static void test_buffers_follow_device_zero(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    run_config cfg;
    config(&cfg, 64, 4, 0);
    recorder rec;
    run_observer obs = recorder_observer(&rec);
    run_result res;
    run_or_fail(&pop, &cfg, &obs, &res);
    size_t f = pop.f, nb = pop.n / 64, t_count = 2 * nb, share = 16;
    assert_int_equal(res.updates, t_count);
    /* Every ghost batch is a share of 16 rows with its own statistics. */
    assert_int_equal(rec.n, 4 * t_count);
    long double *sm = malloc(t_count * f * sizeof *sm);
    long double *sv = malloc(t_count * f * sizeof *sv);
    assert_non_null(sm);
    assert_non_null(sv);
    for (size_t i = 0; i < rec.n; i++) {
        const rec_batch *rb = &rec.batches[i];
        assert_int_equal(rb->b, share);
        for (size_t j = 0; j < f; j++) {
            long double m, v;
            ld_moments(share, f, &rb->x[j], &m, &v);
            assert_rel(rb->mean[j], m, 1e-13);
            if (i % 4 == 0) { /* device 0: an update */
                sm[(i / 4) * f + j] = m;
                sv[(i / 4) * f + j] = v * share / (share - 1);
            }
        }
    }
    long double rm[64], rv[64], scm[64], scv[64];
    ld_buffers(BN_EST_EMA, cfg.layer.p, cfg.layer.keep, t_count, f, sm, sv,
               rm, rv, scm, scv);
    for (size_t j = 0; j < f; j++) {
        assert_rel(res.running_mean[j], rm[j], 1e-13);
        assert_rel(res.running_var[j], rv[j], 1e-13);
    }
    free(sm);
    free(sv);
    recorder_free(&rec);
    run_result_free(&res);
    pop_free(&pop);
}

/* Synchronised statistics are the whole batch's: one device's run, bit
 * for bit, whatever K. */
static void test_sync_is_one_device(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    run_config one, synced, split;
    config(&one, 64, 1, 0);
    config(&synced, 64, 8, 1);
    config(&split, 64, 8, 0);
    run_result a, b, c;
    run_or_fail(&pop, &one, NULL, &a);
    run_or_fail(&pop, &synced, NULL, &b);
    run_or_fail(&pop, &split, NULL, &c);
    assert_memory_equal(a.running_mean, b.running_mean, pop.f * sizeof(double));
    assert_memory_equal(a.running_var, b.running_var, pop.f * sizeof(double));
    assert_true(a.train_eval_rmse == b.train_eval_rmse);
    assert_true(a.stats_err == b.stats_err);
    /* and unsynchronised shares are not: the comparison can fail */
    assert_true(a.train_eval_rmse != c.train_eval_rmse);
    run_result_free(&a);
    run_result_free(&b);
    run_result_free(&c);
    pop_free(&pop);
}

static void test_devices_refused(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    static const struct {
        size_t b, k;
        run_partial partial;
        const char *says;
    } bad[] = {
        {64, 3, RUN_PARTIAL_DROP, "batch size 64 does not split into 3"},
        {64, 64, RUN_PARTIAL_DROP, "shares of at least 2 rows"},
        {100, 2, RUN_PARTIAL_KEEP, "the last batch of 12 rows"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        run_config cfg;
        config(&cfg, bad[i].b, bad[i].k, 0);
        cfg.partial = bad[i].partial;
        int blame[2] = {-1, -1};
        bn_error err;
        assert_int_equal(run_check(&cfg, &pop, blame, &err), -1);
        if (!strstr(err.msg, bad[i].says))
            fail_msg("'%s' does not say '%s'", err.msg, bad[i].says);
        assert_int_equal(blame[0], KEY_DEVICES);
        /* synchronised, the same settings are one device's: allowed */
        cfg.layer.sync = 1;
        assert_int_equal(run_check(&cfg, &pop, blame, &err), 0);
    }
    pop_free(&pop);
}

int test_devices_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buffers_follow_device_zero),
        cmocka_unit_test(test_sync_is_one_device),
        cmocka_unit_test(test_devices_refused),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("devices", tests, NULL, NULL);
}
