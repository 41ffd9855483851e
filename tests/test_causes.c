/*
 * The gap's other causes (issue 14) through a whole run of the layer, each
 * against a computation of its own: the initial buffers, a shifted
 * evaluation population with the precise and adaptive estimators, a
 * drifting training stream against the estimator's recursion in long
 * double, a collapsed feature moved at evaluation against
 * 1/sqrt(var + eps), and feature maps batched as whole samples.
 */
#include "helpers.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/collapse.h"
#include "pop/convpop.h"
#include "pop/drift.h"
#include "study/exp.h"
#include "model/expect.h"
#include "model/order.h"

/* Buffers never filled: 0 and 1 whatever the training saw. */
static void test_initial_keeps_zero_and_one(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    run_config cfg;
    run_default_config(&cfg);
    cfg.batch_size = 32;
    cfg.epochs = 2;
    cfg.layer.estimator = BN_EST_INITIAL;
    run_result res;
    run_or_fail(&pop, &cfg, NULL, &res);
    assert_int_equal(res.updates, 32);
    assert_true(res.init_weight == 1.0);
    long double sm = 0.0L;
    for (size_t j = 0; j < pop.f; j++) {
        assert_true(res.running_mean[j] == 0.0);
        assert_true(res.running_var[j] == 1.0);
        sm += (long double)pop.mean[j] * pop.mean[j];
    }
    assert_rel(res.mean_err, sqrtl(sm / pop.f), 1e-15);
    /* Over orderings nothing moves: the closed form is that one run's. */
    double err_sq, bias_sq;
    bn_error err;
    assert_int_equal(expect_summary(&pop, &cfg, &err_sq, &bias_sq, &err), 0);
    assert_rel(err_sq, sm / pop.f, 1e-15);
    assert_rel(bias_sq, sm / pop.f, 1e-15);
    run_result_free(&res);
    pop_free(&pop);
}

/* One batch of every row: train mode normalises with the rows' own
 * statistics, so moving a feature by c leaves it unchanged, while the
 * precise buffers (the training rows') move the eval-mode output of every
 * row by c / sqrt(var + eps). Adaptive recomputes the buffers on the
 * moved rows and the gap closes. */
static void test_shift_moves_eval_by_its_closed_form(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    static const double shifts[][2] = {{0.5, 0.0}, {1.0, 0.25}, {0.0, -2.0}};
    for (size_t s = 0; s < 3; s++) {
        run_config cfg;
        run_default_config(&cfg);
        cfg.batch_size = pop.n;
        cfg.eval.shift = shifts[s][0];
        cfg.eval.offset = shifts[s][1];
        cfg.layer.estimator = BN_EST_PRECISE;
        run_result res;
        run_or_fail(&pop, &cfg, NULL, &res);
        for (size_t j = 0; j < pop.f; j++) {
            long double sd = sqrtl(pop.var[j]);
            long double c = shifts[s][0] * sd + shifts[s][1];
            assert_rel(res.true_mean[j], pop.mean[j] + c, 1e-13);
            assert_rel(res.true_var[j], pop.var[j], 1e-12);
            assert_rel(res.running_mean[j], pop.mean[j], 1e-13);
            long double want = fabsl(c) / sqrtl(pop.var[j] + cfg.layer.eps);
            assert_close(res.train_eval[j], want, 1e-11, want + 1.0L);
        }
        run_result_free(&res);

        cfg.layer.estimator = BN_EST_ADAPTIVE;
        run_or_fail(&pop, &cfg, NULL, &res);
        assert_true(res.stats_err == 0.0);
        for (size_t j = 0; j < pop.f; j++) {
            assert_true(res.running_mean[j] == res.true_mean[j]);
            assert_true(res.running_var[j] == res.true_var[j]);
            assert_true(res.train_eval[j] < 1e-11);
        }
        run_result_free(&res);
    }
    pop_free(&pop);
}

/* Adaptive on smaller batches: what is left of the gap is the batches'
 * own noise, the same whatever the shift (batch norm does not see a
 * constant move), and the scale takes the truth's variance with it. */
static void test_adaptive_leaves_only_batch_noise(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    run_config cfg;
    run_default_config(&cfg);
    cfg.batch_size = 32;
    cfg.layer.estimator = BN_EST_ADAPTIVE;
    run_result base, moved, scaled;
    run_or_fail(&pop, &cfg, NULL, &base);
    cfg.eval.shift = 1.0;
    cfg.eval.offset = 0.5;
    run_or_fail(&pop, &cfg, NULL, &moved);
    cfg.eval.scale = 2.0;
    run_or_fail(&pop, &cfg, NULL, &scaled);
    assert_rel(moved.train_eval_rmse, base.train_eval_rmse, 1e-9);
    for (size_t j = 0; j < pop.f; j++) {
        assert_rel(scaled.true_var[j], 4.0L * pop.var[j], 1e-12);
        assert_true(scaled.running_var[j] == scaled.true_var[j]);
    }
    cfg.layer.estimator = BN_EST_EMA;
    run_result ema;
    run_or_fail(&pop, &cfg, NULL, &ema);
    assert_true(ema.train_eval_rmse > 2.0 * base.train_eval_rmse);
    run_result_free(&base);
    run_result_free(&moved);
    run_result_free(&scaled);
    run_result_free(&ema);
    pop_free(&pop);
}

/* A layer evaluated on rows of its own (an [evaluation] file's): one
 * batch of every such row in train mode against the buffers, each row's
 * two outputs written out in long double, and the truth those rows'. */
static void test_eval_rows_of_their_own(void **state)
{
    (void)state;
    static const pop_feature feats[2] = {{"a", 1.0, 2.0, 0.5},
                                         {"b", -0.5, 0.5, 0.0}};
    static const pop_feature moved[2] = {{"a", 2.0, 3.0, 0.5},
                                         {"b", -0.5, 0.25, 0.0}};
    pop_t pop, other;
    small_pop(&pop, 64, 3, 2, feats);
    small_pop(&other, 40, 4, 2, moved);
    static const bn_estimator ests[] = {BN_EST_PRECISE, BN_EST_ADAPTIVE};
    for (size_t e = 0; e < sizeof ests / sizeof *ests; e++) {
        run_config cfg;
        run_default_config(&cfg);
        cfg.batch_size = 40;
        cfg.partial = RUN_PARTIAL_KEEP;
        cfg.layer.estimator = ests[e];
        run_pops p = {&pop, &pop, NULL, &other};
        run_result res;
        bn_error err;
        if (run_execute_blamed(&p, &cfg, NULL, &res, NULL, &err) != 0)
            fail_msg("%s", err.msg);
        for (size_t j = 0; j < 2; j++) {
            assert_true(res.true_mean[j] == other.mean[j]);
            assert_true(res.true_var[j] == other.var[j]);
            long double m, v, sq = 0.0L;
            ld_moments(other.n, 2, other.x + j, &m, &v);
            long double rm = res.running_mean[j], rv = res.running_var[j];
            for (size_t i = 0; i < other.n; i++) {
                long double x = other.x[i * 2 + j];
                long double d = (x - m) / sqrtl(v + cfg.layer.eps) -
                                (x - rm) / sqrtl(rv + cfg.layer.eps);
                sq += d * d;
            }
            long double want = sqrtl(sq / other.n);
            assert_close(res.train_eval[j], want, 1e-12, want + 1e-3L);
            if (ests[e] == BN_EST_ADAPTIVE)
                assert_true(res.train_eval[j] < 1e-12);
            else
                assert_true(res.train_eval[j] > 0.1);
        }
        run_result_free(&res);
    }
    pop_free(&pop);
    pop_free(&other);
}

/* The classifier's first layer is linear: held-out rows moved by a
 * constant per feature move each hidden unit by a constant, which buffers
 * recomputed on the moved rows (adaptive) remove to rounding, while the
 * training rows' buffers (ema) do not. */
static void test_classifier_adaptive_removes_a_shift(void **state)
{
    (void)state;
    char dir[300], path[400];
    assert_int_equal(test_tmpdir_make(dir, sizeof dir, "causes"), 0);
    snprintf(path, sizeof path, "%s/a.ini", dir);
    test_write_file(path, "[population]\nrows = 200\nclasses = 3\n"
                          "[evaluation]\nshift = 0 1\n"
                          "[model]\ntype = classifier\nhidden = 6\n"
                          "[layer]\nestimator = adaptive ema\n"
                          "[sweep]\nbatch_size = 16\nepochs = 3\n");
    exp_t *e = malloc(sizeof *e);
    assert_non_null(e);
    bn_error err;
    if (exp_load(e, path, NULL, &err) != 0)
        fail_msg("%s", err.msg);
    exp_pops pops;
    assert_int_equal(exp_populations(e, 1, &pops, &err), 0);
    run_result res[4];
    run_config cfg[4];
    assert_int_equal(exp_count(e), 4);
    for (size_t k = 0; k < 4; k++) {
        exp_config(e, k, &cfg[k]);
        if (run_execute_on(&pops.p, &cfg[k], NULL, &res[k], &err) != 0)
            fail_msg("%s", err.msg);
    }
    for (size_t k = 0; k < 4; k++)
        for (size_t l = 0; l < 4; l++) {
            if (cfg[k].layer.estimator != cfg[l].layer.estimator ||
                cfg[k].eval.shift != 0.0 || cfg[l].eval.shift != 1.0)
                continue;
            if (cfg[k].layer.estimator == BN_EST_ADAPTIVE) {
                assert_rel(res[l].loss_eval_mode, res[k].loss_eval_mode,
                           1e-9);
                assert_true(res[l].acc_eval_mode == res[k].acc_eval_mode);
            } else {
                assert_true(res[l].loss_eval_mode >
                            res[k].loss_eval_mode * 1.01);
            }
        }
    for (size_t k = 0; k < 4; k++)
        run_result_free(&res[k]);
    exp_pops_free(&pops);
    exp_free(e);
    free(e);
    test_tmpdir_remove(dir);
}

/* A drifting stream: the run's running mean against the estimator's
 * recursion over the same order in long double, each batch mean moved by
 * drift_fraction(t) size sd; the truth is the stream at the last update.
 * One batch of every row is noise-free, so there the closed form over
 * orderings is the run itself. */
static void test_drift_through_a_run(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    static const char *const drifts[] = {"step:5", "ramp:3:20", "step:0"};
    static const size_t bs[] = {32, 48, 512};
    for (size_t d = 0; d < 3; d++)
        for (size_t bi = 0; bi < 3; bi++) {
            run_config cfg;
            run_default_config(&cfg);
            cfg.batch_size = bs[bi];
            cfg.epochs = bs[bi] == 512 ? 12 : 2;
            cfg.seed = 7;
            bn_error err;
            assert_int_equal(
                drift_parse(drifts[d], &cfg.drift.profile, &err), 0);
            cfg.drift.size = -1.5;
            run_result res;
            run_or_fail(&pop, &cfg, NULL, &res);
            size_t *perm = malloc(pop.n * sizeof *perm);
            order_spec ord = cfg.order;
            ord.batch_size = cfg.batch_size;
            assert_int_equal(order_make(&ord, &pop, cfg.seed, perm, &err),
                             0);
            double last = drift_fraction(&cfg.drift.profile, res.updates);
            for (size_t j = 0; j < pop.f; j++) {
                double delta = cfg.drift.size * sqrt(pop.var[j]);
                long double want = ld_running_mean(
                    &pop, &cfg, perm, j, &cfg.drift.profile, delta);
                assert_close(res.running_mean[j], want, 1e-13,
                             fabsl(want) + 1.0L);
                assert_close(res.true_mean[j], pop.mean[j] + last * delta,
                             1e-13, fabs(pop.mean[j]) + 1.0);
            }
            if (bs[bi] == 512) {
                double err_sq, bias_sq;
                assert_int_equal(
                    expect_summary(&pop, &cfg, &err_sq, &bias_sq, &err), 0);
                assert_rel(err_sq, bias_sq, 1e-12);
                assert_rel(sqrt(err_sq), res.mean_err, 1e-9);
            }
            free(perm);
            run_result_free(&res);
        }
    pop_free(&pop);
}

/* A feature constant in training moved by an offset at evaluation: train
 * mode renormalises the still constant batches to beta, eval mode
 * multiplies the offset by gamma / sqrt(rv + eps), 1/sqrt(eps) once the
 * precise buffers hold the variance 0. */
static void test_collapsed_feature_amplifies_its_offset(void **state)
{
    (void)state;
    pop_spec spec;
    assert_int_equal(pop_default_spec(&spec), 0);
    spec.features[2].sd = 0.0;
    pop_t pop;
    bn_error err;
    assert_int_equal(pop_generate(&spec, &pop, &err), 0);
    pop_spec_free(&spec);
    static const double epss[] = {1e-5, 1e-3};
    static const double offs[] = {1e-4, 0.01, 1.0};
    for (size_t e = 0; e < 2; e++)
        for (size_t o = 0; o < 3; o++) {
            run_config cfg;
            run_default_config(&cfg);
            cfg.batch_size = 64;
            cfg.layer.eps = epss[e];
            cfg.layer.gamma = 0.5;
            cfg.layer.estimator = BN_EST_PRECISE;
            cfg.eval.offset = offs[o];
            run_result res;
            run_or_fail(&pop, &cfg, NULL, &res);
            assert_true(res.running_var[2] == 0.0);
            double want = collapse_gain(&cfg.layer, 0.0) * offs[o];
            assert_rel(want, 0.5 * offs[o] / sqrt(epss[e]), 1e-15);
            assert_rel(res.train_eval[2], want, 1e-9);
            run_result_free(&res);
        }
    pop_free(&pop);
}

/* Feature maps: the batch size counts whole samples, an order that cuts
 * them apart is refused, and effective.tsv's numbers are convpop's. */
static void test_maps_batch_whole_samples(void **state)
{
    (void)state;
    convpop_channel ch[2] = {{0.6, 1.0, 2.0}, {-0.4, 0.0, 1.0}};
    convpop_t cp, copy;
    bn_error err;
    assert_int_equal(convpop_field(12, 3, 4, 2, ch, 5, &cp, &err), 0);
    assert_int_equal(convpop_field(12, 3, 4, 2, ch, 5, &copy, &err), 0);
    const char *const names[] = {"pos", "neg"};
    pop_t pop;
    assert_int_equal(convpop_take(&cp, names, &pop, &err), 0);
    assert_int_equal(pop.sample_rows, 12);
    assert_int_equal(pop.n, 144);
    for (size_t j = 0; j < 2; j++) {
        convpop_neff a, b;
        assert_int_equal(convpop_effective(&copy, 3, j, &a, &err), 0);
        assert_int_equal(convpop_effective_rows(pop.x, pop.n, pop.f, 12, j,
                                                pop.var[j], 3, &b, &err),
                         0);
        assert_memory_equal(&a, &b, sizeof a);
    }
    convpop_free(&copy);

    run_config cfg;
    run_default_config(&cfg);
    cfg.batch_size = 3;
    assert_int_equal(order_parse("shuffled-samples", &pop, &cfg.order, &err),
                     0);
    cfg.seed = 9;
    cfg.epochs = 2;
    run_result res;
    run_or_fail(&pop, &cfg, NULL, &res);
    assert_int_equal(res.updates, 8);
    /* The order is the BatchNorm2d peer's (tests/peer/bn2d_driver.c):
     * convpop_order_groups over the samples; the buffers are the
     * recursion over batches of 3 x 12 consecutive rows of it. */
    size_t perm[144], want[144], group[144];
    for (size_t i = 0; i < 144; i++)
        group[i] = i / 12;
    assert_int_equal(convpop_order_groups(144, group, 12, 9, want, &err), 0);
    run_config rows = run_in_rows(&cfg, &pop);
    assert_int_equal(rows.batch_size, 36);
    order_spec ord = rows.order;
    ord.batch_size = rows.batch_size;
    assert_int_equal(order_make(&ord, &pop, 9, perm, &err), 0);
    assert_memory_equal(perm, want, sizeof perm);
    for (size_t j = 0; j < 2; j++) {
        long double rm = ld_running_mean(&pop, &rows, perm, j, NULL, 0.0);
        assert_close(res.running_mean[j], rm, 1e-14, fabsl(rm) + 1.0L);
    }
    run_result_free(&res);
    assert_int_equal(order_parse("shuffled", &pop, &cfg.order, &err), 0);
    assert_int_equal(run_execute(&pop, &cfg, NULL, &res, &err), -1);
    assert_non_null(strstr(err.msg, "would cut feature maps apart"));
    cfg.batch_size = 13;
    assert_int_equal(order_parse("shuffled-samples", &pop, &cfg.order, &err),
                     0);
    assert_int_equal(run_execute(&pop, &cfg, NULL, &res, &err), -1);
    assert_non_null(strstr(err.msg, "12 samples, got 13"));
    pop_free(&pop);
}

int test_causes_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_initial_keeps_zero_and_one),
        cmocka_unit_test(test_shift_moves_eval_by_its_closed_form),
        cmocka_unit_test(test_adaptive_leaves_only_batch_noise),
        cmocka_unit_test(test_eval_rows_of_their_own),
        cmocka_unit_test(test_classifier_adaptive_removes_a_shift),
        cmocka_unit_test(test_drift_through_a_run),
        cmocka_unit_test(test_collapsed_feature_amplifies_its_offset),
        cmocka_unit_test(test_maps_batch_whole_samples),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("causes", tests, NULL, NULL);
}
