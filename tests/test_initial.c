/*
 * Buffers loaded from elsewhere ([layer] initial = PATH, model/initial.h):
 * the file's parsing and its refusals, and a run of the layer started from
 * a checkpoint against what the estimators' definitions say of it. The
 * moving average is linear in its start, so the buffers from a loaded start
 * differ from those from 0 and 1 by exactly keep^T times the difference of
 * the starts (computed here in long double); estimator initial keeps the
 * file's values; a feature the file does not name keeps 0 and 1. The
 * classifier's units are named LAYER.UNIT, and the same holds of them:
 * training mode never reads the buffers, so the weights, and the batch
 * statistics the buffers average, do not depend on the start.
 */
#include "helpers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/classifier.h"
#include "model/initial.h"
#include "model/net.h"
#include "model/order.h"

static const char CHECKPOINT[] = "feature\trunning_mean\trunning_var\n"
                                 "f2\t1.5\t2.25\n"
                                 "f0\t-0.75\t0.5\n"
                                 "f6\t3\t0\n";

static void parse_or_fail(const char *text, bn_initial *ini)
{
    bn_error err;
    if (bn_initial_parse("ck.tsv", text, strlen(text), ini, &err) != 0)
        fail_msg("bn_initial_parse: %s", err.msg);
}

static void run_from(const pop_t *pop, bn_estimator est,
                     const bn_initial *ini, run_result *res)
{
    run_config cfg;
    run_default_config(&cfg);
    cfg.batch_size = 32;
    cfg.epochs = 2;
    cfg.layer.estimator = est;
    cfg.initial = ini;
    run_or_fail(pop, &cfg, NULL, res);
}

/* f2, f0, f6 start at the file's values; every feature's buffers after T
 * updates of ema differ from the run from 0 and 1 by keep^T (start - 0)
 * and keep^T (start - 1). */
static void test_ema_from_a_checkpoint(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    bn_initial ini;
    parse_or_fail(CHECKPOINT, &ini);
    run_result plain, loaded;
    run_from(&pop, BN_EST_EMA, NULL, &plain);
    run_from(&pop, BN_EST_EMA, &ini, &loaded);
    assert_int_equal(loaded.updates, 32);
    run_config cfg;
    run_default_config(&cfg);
    long double kt = powl((long double)cfg.layer.keep, 32.0L);
    long double m0[8] = {-0.75L, 0, 1.5L, 0, 0, 0, 3.0L, 0};
    long double v0[8] = {0.5L, 1, 2.25L, 1, 1, 1, 0.0L, 1};
    for (size_t j = 0; j < pop.f; j++) {
        long double dm = (long double)loaded.running_mean[j] -
                         plain.running_mean[j];
        long double dv = (long double)loaded.running_var[j] -
                         plain.running_var[j];
        assert_true(fabsl(dm - kt * m0[j]) <= 1e-14L);
        assert_true(fabsl(dv - kt * (v0[j] - 1.0L)) <= 1e-14L);
        if (m0[j] == 0 && v0[j] == 1) { /* not in the file: untouched */
            assert_true(loaded.running_mean[j] == plain.running_mean[j]);
            assert_true(loaded.running_var[j] == plain.running_var[j]);
        }
    }
    run_result_free(&plain);
    run_result_free(&loaded);
    bn_initial_free(&ini);
    pop_free(&pop);
}

/* Never updated, the buffers are the file's, and the mean's error is the
 * distance of the file's means (0 where it has none) from the truth. */
static void test_initial_keeps_the_checkpoint(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    bn_initial ini;
    parse_or_fail(CHECKPOINT, &ini);
    run_result res;
    run_from(&pop, BN_EST_INITIAL, &ini, &res);
    static const double m0[8] = {-0.75, 0, 1.5, 0, 0, 0, 3, 0};
    static const double v0[8] = {0.5, 1, 2.25, 1, 1, 1, 0, 1};
    long double sm = 0.0L;
    for (size_t j = 0; j < pop.f; j++) {
        assert_true(res.running_mean[j] == m0[j]);
        assert_true(res.running_var[j] == v0[j]);
        long double d = (long double)m0[j] - pop.mean[j];
        sm += d * d;
    }
    assert_rel(res.mean_err, sqrtl(sm / pop.f), 1e-15);
    run_result_free(&res);
    bn_initial_free(&ini);
    pop_free(&pop);
}

static void refused(const char *text, const char *want)
{
    bn_initial ini;
    bn_error err;
    assert_int_equal(
        bn_initial_parse("ck.tsv", text, strlen(text), &ini, &err), -1);
    if (!strstr(err.msg, want))
        fail_msg("'%s' does not say '%s'", err.msg, want);
}

static void test_bad_checkpoints(void **state)
{
    (void)state;
    refused("feature\trunning_mean\nf0\t1\n", "running_var");
    refused("feature\trunning_mean\trunning_var\n", "rows");
    refused("feature\trunning_mean\trunning_var\nf0\t1\t1\nf0\t2\t1\n",
            "ck.tsv:3: feature 'f0' is named twice");
    refused("feature\trunning_mean\trunning_var\nf0\t1\t-1\n",
            "ck.tsv:2: column running_var");
    refused("feature\trunning_mean\trunning_var\nf0\tnan\t1\n",
            "ck.tsv:2: column running_mean");
    /* A feature the population lacks: the run's check names it. */
    pop_t pop;
    default_pop(&pop);
    bn_initial ini;
    parse_or_fail("feature\trunning_mean\trunning_var\nf0\t0\t1\nx9\t0\t1\n",
                  &ini);
    run_config cfg;
    run_default_config(&cfg);
    cfg.initial = &ini;
    int blame[2] = {-1, -1};
    bn_error err;
    assert_int_equal(run_check(&cfg, &pop, blame, &err), -1);
    assert_non_null(strstr(err.msg, "ck.tsv:3: feature 'x9'"));
    assert_int_equal(blame[0], KEY_LAYER_INITIAL);
    bn_initial_free(&ini);
    pop_free(&pop);
}

/* The classifier of the default network (linear:16 batch relu linear:K,
 * its batch norm layer 1) on the generated 4 classes, trained from ck
 * (NULL: 0 and 1) with est; the net is the caller's to free. */
static const char CLF_CHECKPOINT[] = "feature\trunning_mean\trunning_var\n"
                                     "1.3\t0.25\t4\n"
                                     "1.0\t-2\t0.5\n";

static void clf_from(bn_estimator est, const bn_initial *ini, net_t *net,
                     run_result *res)
{
    pop_spec spec;
    assert_int_equal(pop_default_spec(&spec), 0);
    spec.classes = 4;
    pop_t train, held;
    bn_error err;
    assert_int_equal(pop_generate(&spec, &train, &err), 0);
    assert_int_equal(pop_generate_held_out(&spec, &held, &err), 0);
    run_config cfg;
    run_default_config(&cfg);
    cfg.model = RUN_MODEL_CLASSIFIER;
    cfg.batch_size = 64;
    cfg.epochs = 2;
    cfg.layer.estimator = est;
    cfg.initial = ini;
    int blame[2] = {-1, -1};
    if (run_check(&cfg, &train, blame, &err) != 0)
        fail_msg("run_check: %s", err.msg);
    size_t *perm = malloc(train.n * sizeof *perm);
    assert_non_null(perm);
    order_spec ord;
    assert_int_equal(order_parse("shuffled", &train, &ord, &err), 0);
    assert_int_equal(order_make(&ord, &train, cfg.seed, perm, &err), 0);
    if (classifier_train(&train, &held, perm, &cfg, NULL, net, res, &err))
        fail_msg("classifier_train: %s", err.msg);
    free(perm);
    pop_free(&train);
    pop_free(&held);
    pop_spec_free(&spec);
}

static void test_classifier_from_a_checkpoint(void **state)
{
    (void)state;
    bn_initial ini;
    parse_or_fail(CLF_CHECKPOINT, &ini);
    static const long double m0[16] = {-2.0L, 0, 0, 0.25L};
    long double v0[16];
    for (size_t u = 0; u < 16; u++)
        v0[u] = u == 0 ? 0.5L : u == 3 ? 4.0L : 1.0L;
    /* initial: the file's values where it names the unit, 0 and 1
     * elsewhere, exactly. */
    net_t net, plain;
    run_result res, res0;
    clf_from(BN_EST_INITIAL, &ini, &net, &res);
    const nn_layer *l = &net.l[net_batch_layer(&net, 0)];
    assert_int_equal(net_batch_layers(&net), 1);
    assert_int_equal(l->index, 1);
    assert_int_equal(l->in.c, 16);
    for (size_t u = 0; u < 16; u++) {
        assert_true(l->bn.rm[u] == (double)m0[u]);
        assert_true(l->bn.rv[u] == (double)v0[u]);
    }
    net_free(&net);
    run_result_free(&res);
    /* ema: the buffers from the file differ from those from 0 and 1 by
     * keep^T times the starts' difference, the weights not at all. */
    clf_from(BN_EST_EMA, &ini, &net, &res);
    clf_from(BN_EST_EMA, NULL, &plain, &res0);
    l = &net.l[net_batch_layer(&net, 0)];
    const nn_layer *l0 = &plain.l[net_batch_layer(&plain, 0)];
    assert_memory_equal(net.l[0].t[0].p, plain.l[0].t[0].p,
                        net.l[0].t[0].rows * net.l[0].t[0].cols *
                            sizeof(double));
    assert_true(l->bn.updates == l0->bn.updates && l->bn.updates > 0);
    run_config cfg;
    run_default_config(&cfg);
    long double kt = powl((long double)cfg.layer.keep,
                          (long double)l->bn.updates);
    for (size_t u = 0; u < 16; u++) {
        long double dm = (long double)l->bn.rm[u] - l0->bn.rm[u];
        long double dv = (long double)l->bn.rv[u] - l0->bn.rv[u];
        assert_true(fabsl(dm - kt * m0[u]) <= 1e-13L);
        assert_true(fabsl(dv - kt * (v0[u] - 1.0L)) <= 1e-13L);
    }
    net_free(&net);
    net_free(&plain);
    run_result_free(&res);
    run_result_free(&res0);
    bn_initial_free(&ini);
}

/* A checkpoint naming no unit of the network is refused, naming the
 * file, the line and the units there are. */
static void clf_refused(const char *text, int none, const char *want)
{
    pop_spec spec;
    assert_int_equal(pop_default_spec(&spec), 0);
    spec.classes = 4;
    pop_t pop;
    bn_error err;
    assert_int_equal(pop_generate(&spec, &pop, &err), 0);
    bn_initial ini;
    parse_or_fail(text, &ini);
    run_config cfg;
    run_default_config(&cfg);
    cfg.model = RUN_MODEL_CLASSIFIER;
    cfg.initial = &ini;
    if (none)
        cfg.clf.norm = CLF_NORM_NONE;
    int blame[2] = {-1, -1};
    assert_int_equal(run_check(&cfg, &pop, blame, &err), -1);
    if (!strstr(err.msg, want))
        fail_msg("'%s' does not say '%s'", err.msg, want);
    assert_int_equal(blame[0], KEY_LAYER_INITIAL);
    bn_initial_free(&ini);
    pop_free(&pop);
    pop_spec_free(&spec);
}

static void test_classifier_bad_checkpoints(void **state)
{
    (void)state;
    static const char H[] = "feature\trunning_mean\trunning_var\n";
    char text[200];
    snprintf(text, sizeof text, "%s1.0\t0\t1\n1.16\t0\t1\n", H);
    clf_refused(text, 0,
                "ck.tsv:3: '1.16' is not one of the classifier's batch-norm "
                "units (LAYER.UNIT: 1.0 to 1.15)");
    snprintf(text, sizeof text, "%sf0\t0\t1\n", H);
    clf_refused(text, 0, "ck.tsv:2: 'f0' is not one");
    snprintf(text, sizeof text, "%s0.0\t0\t1\n", H);
    clf_refused(text, 0, "ck.tsv:2: '0.0' is not one");
}

int test_initial_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ema_from_a_checkpoint),
        cmocka_unit_test(test_initial_keeps_the_checkpoint),
        cmocka_unit_test(test_bad_checkpoints),
        cmocka_unit_test(test_classifier_from_a_checkpoint),
        cmocka_unit_test(test_classifier_bad_checkpoints),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("initial", tests, NULL, NULL);
}
