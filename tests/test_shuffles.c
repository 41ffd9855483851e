/*
 * Many shuffles (docs/expectation.md, src/study/dist.h): the closed-form expected
 * running-mean error against an exact enumeration of every ordering of a
 * tiny population, and against 10^4 shuffles of the real one; and the
 * across-seed summaries a sweep writes against the per-seed rows it wrote
 * beside them.
 */
#include "helpers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/estimator.h"
#include "model/expect.h"
#include "model/order.h"
#include "base/tsv.h"

/* A population small enough to enumerate every ordering of. */
static void tiny_pop(pop_t *pop, size_t n)
{
    static const pop_feature ft[] = {{"a", 1.0, 2.0, 0.5},
                                     {"b", -3.0, 0.5, 0.0}};
    small_pop(pop, n, 11, 2, ft);
}

/* mean_err^2 of one ordering. */
static long double one_ordering(const pop_t *pop, const run_config *cfg,
                                const size_t *perm)
{
    long double err2 = 0.0L;
    for (size_t j = 0; j < pop->f; j++) {
        long double d =
            ld_running_mean(pop, cfg, perm, j, NULL, 0.0) - pop->mean[j];
        err2 += d * d;
    }
    return err2 / (long double)pop->f;
}

static void check_enumerated(size_t n, size_t b, bn_estimator est,
                             unsigned long epochs, run_partial partial,
                             size_t precise_batches, double momentum)
{
    pop_t pop;
    tiny_pop(&pop, n);
    run_config cfg;
    run_default_config(&cfg);
    cfg.batch_size = b;
    cfg.epochs = epochs;
    cfg.partial = partial;
    cfg.precise_batches = precise_batches;
    cfg.layer.estimator = est;
    bn_set_momentum(&cfg.layer, momentum, BN_WEIGHTS_OLD, NULL);
    size_t perm[16];
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    long double sum = 0.0L;
    size_t count = 0;
    do {
        sum += one_ordering(&pop, &cfg, perm);
        count++;
    } while (test_next_permutation(perm, n));
    double got;
    bn_error err;
    if (expect_mean_err_sq(&pop, &cfg, &got, &err) != 0)
        fail_msg("%s", err.msg);
    long double want = sum / (long double)count;
    /* Exact sums both ways; only rounding separates them. */
    assert_close(got, want, 1e-12, want + 1e-12L);
    pop_free(&pop);
}

static void test_closed_form_equals_enumeration(void **state)
{
    (void)state;
    check_enumerated(6, 2, BN_EST_EMA, 1, RUN_PARTIAL_DROP, 0, 0.9);
    check_enumerated(6, 2, BN_EST_EMA, 3, RUN_PARTIAL_DROP, 0, 0.7);
    check_enumerated(6, 3, BN_EST_EMA_DEBIASED, 2, RUN_PARTIAL_DROP, 0, 0.9);
    check_enumerated(7, 2, BN_EST_EMA, 2, RUN_PARTIAL_DROP, 0, 0.5);
    check_enumerated(7, 2, BN_EST_CUMULATIVE, 1, RUN_PARTIAL_DROP, 0, 0.9);
    check_enumerated(8, 3, BN_EST_EMA, 2, RUN_PARTIAL_KEEP, 0, 0.8);
    check_enumerated(8, 3, BN_EST_EMA_DEBIASED, 1, RUN_PARTIAL_KEEP, 0, 0.9);
    check_enumerated(8, 3, BN_EST_CUMULATIVE, 2, RUN_PARTIAL_KEEP, 0, 0.9);
    check_enumerated(7, 2, BN_EST_PRECISE, 1, RUN_PARTIAL_DROP, 2, 0.9);
    check_enumerated(8, 2, BN_EST_PRECISE, 1, RUN_PARTIAL_DROP, 1, 0.9);
}

/* Every row of the estimator table, whatever rows it gains: the layer's
 * running means after two orderings of a tiny population against
 * ld_running_mean's long-double reference (tests/helpers.c, one case per
 * estimator, which fails naming a row it has no case for); and the
 * row's closed form, when it has one, against every ordering, else
 * expect.c refusing it by name. */
static void test_every_estimator_against_its_reference(void **state)
{
    (void)state;
    pop_t pop;
    tiny_pop(&pop, 8);
    static const char *const orders[] = {"as-is", "sorted-desc:a"};
    for (int e = 0; e < BN_EST_COUNT; e++) {
        const bn_estimator_def *d = bn_estimator_get((bn_estimator)e);
        for (size_t o = 0; o < 2; o++) {
            run_config cfg;
            run_default_config(&cfg);
            cfg.batch_size = 3;
            cfg.epochs = 2;
            cfg.partial = RUN_PARTIAL_KEEP;
            cfg.precise_batches = 2;
            cfg.layer.estimator = (bn_estimator)e;
            bn_set_momentum(&cfg.layer, 0.8, BN_WEIGHTS_OLD, NULL);
            bn_error err;
            if (order_parse(orders[o], &pop, &cfg.order, &err) != 0)
                fail_msg("%s", err.msg);
            size_t perm[8];
            assert_int_equal(order_make(&cfg.order, &pop, cfg.seed, perm,
                                        NULL),
                             0);
            run_result res;
            if (run_execute(&pop, &cfg, NULL, &res, &err) != 0)
                fail_msg("%s: %s", d->name, err.msg);
            for (size_t j = 0; j < pop.f; j++) {
                long double want =
                    ld_running_mean(&pop, &cfg, perm, j, NULL, 0.0);
                if (!(fabsl(res.running_mean[j] - want) <=
                      1e-14L * (fabsl(want) + 1.0L)))
                    fail_msg("%s, %s: running mean of %s %.17g, its "
                             "reference %.17Lg",
                             d->name, orders[o], pop.names[j],
                             res.running_mean[j], want);
            }
            run_result_free(&res);
        }
        if (bn_estimator_closed_form(d)) {
            check_enumerated(8, 3, (bn_estimator)e, 2, RUN_PARTIAL_KEEP, 2,
                             0.8);
            continue;
        }
        run_config cfg;
        run_default_config(&cfg);
        cfg.batch_size = 3;
        cfg.layer.estimator = (bn_estimator)e;
        double got;
        bn_error err;
        assert_int_equal(expect_mean_err_sq(&pop, &cfg, &got, &err), -1);
        assert_non_null(strstr(err.msg, d->name));
    }
    pop_free(&pop);
}

/* 10^4 shuffles of the real population, run by the real code: their mean
 * of mean_err^2 must be within 3.29 standard errors (two-sided 99.9 %) of
 * the closed form, for every batch size and both estimators it covers. */
static void test_closed_form_matches_ten_thousand_shuffles(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    static const size_t sizes[] = {8, 16, 32, 64, 128, 256};
    static const bn_estimator ests[] = {BN_EST_EMA, BN_EST_EMA_DEBIASED};
    const size_t seeds = 10000;
    for (size_t e = 0; e < sizeof ests / sizeof *ests; e++)
        for (size_t s = 0; s < 6; s++) {
            run_config cfg;
            run_default_config(&cfg);
            cfg.batch_size = sizes[s];
            cfg.layer.estimator = ests[e];
            long double sum = 0.0L, sum2 = 0.0L;
            for (size_t seed = 1; seed <= seeds; seed++) {
                cfg.seed = seed;
                run_result res;
                bn_error err;
                if (run_execute(&pop, &cfg, NULL, &res, &err) != 0)
                    fail_msg("%s", err.msg);
                long double x = (long double)res.mean_err * res.mean_err;
                run_result_free(&res);
                sum += x;
                sum2 += x * x;
            }
            long double mean = sum / seeds;
            long double var = (sum2 - sum * mean) / (seeds - 1);
            long double se = sqrtl(var / seeds);
            double want;
            assert_int_equal(expect_mean_err_sq(&pop, &cfg, &want, NULL), 0);
            long double z = (mean - want) / se;
            if (!(fabsl(z) <= 3.29L))
                fail_msg("%s B %zu: Monte Carlo %.6Lg, closed form %.6g, "
                         "z = %.3Lg",
                         bn_estimator_name(ests[e]), sizes[s], mean, want, z);
        }
    pop_free(&pop);
}

/* distribution.tsv against the summary.tsv rows of the same sweep, and
 * the verifier's fraction test counting seeds on them, both recomputed
 * here. */
static void test_distribution_matches_rows(void **state)
{
    (void)state;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/bnstudy-test-dist.XXXXXX",
             test_env("TMPDIR", "/tmp"));
    assert_non_null(mkdtemp(dir));
    char ini[600], cmd[2200];
    snprintf(ini, sizeof ini, "%s/d.ini", dir);
    FILE *fp = fopen(ini, "w");
    assert_non_null(fp);
    fputs("[sweep]\nbatch_size = 8 32 64 256\nseed = 1..40\n", fp);
    fclose(fp);
    snprintf(cmd, sizeof cmd, "%s sweep %s --out %s",
             test_env("BNSTUDY", "./bnstudy"), ini, dir);
    assert_int_equal(system(cmd), 0);
    tsv_table sum, dist;
    bn_error err;
    char path[700];
    snprintf(path, sizeof path, "%s/d/summary.tsv", dir);
    assert_int_equal(tsv_read(path, &sum, &err), 0);
    snprintf(path, sizeof path, "%s/d/distribution.tsv", dir);
    assert_int_equal(tsv_read(path, &dist, &err), 0);
    assert_int_equal(sum.nrow, 4 * 40);
    int cb = tsv_column(&sum, "batch_size"), cs = tsv_column(&sum, "stats_err");
    int db = tsv_column(&dist, "batch_size"), dsc = tsv_column(&dist, "score");
    int dm = tsv_column(&dist, "mean"), dmed = tsv_column(&dist, "p50");
    int dsd = tsv_column(&dist, "sd");
    static const char *const bs[] = {"8", "32", "64", "256"};
    double v[4][40];
    for (size_t k = 0; k < 4; k++) {
        size_t m = 0;
        for (size_t r = 0; r < sum.nrow; r++)
            if (!strcmp(tsv_cell(&sum, r, (size_t)cb), bs[k]))
                v[k][m++] = strtod(tsv_cell(&sum, r, (size_t)cs), NULL);
        assert_int_equal(m, 40);
        long double s = 0.0L;
        for (size_t i = 0; i < 40; i++)
            s += v[k][i];
        long double mean = s / 40.0L, ss = 0.0L;
        for (size_t i = 0; i < 40; i++)
            ss += (v[k][i] - mean) * (v[k][i] - mean);
        /* The median of 40: the mean of the 20th and 21st smallest. */
        double lo20 = 0, lo21 = 0;
        for (size_t i = 0; i < 40; i++) {
            size_t below = 0;
            for (size_t l = 0; l < 40; l++)
                below += v[k][l] < v[k][i] || (v[k][l] == v[k][i] && l < i);
            if (below == 19)
                lo20 = v[k][i];
            if (below == 20)
                lo21 = v[k][i];
        }
        size_t r;
        for (r = 0; r < dist.nrow; r++)
            if (!strcmp(tsv_cell(&dist, r, (size_t)db), bs[k]) &&
                !strcmp(tsv_cell(&dist, r, (size_t)dsc), "stats_err"))
                break;
        assert_true(r < dist.nrow);
        assert_rel(strtod(tsv_cell(&dist, r, (size_t)dm), NULL), mean, 1e-14);
        assert_rel(strtod(tsv_cell(&dist, r, (size_t)dsd), NULL),
                   sqrtl(ss / 39.0L), 1e-12);
        assert_rel(strtod(tsv_cell(&dist, r, (size_t)dmed), NULL),
                   (lo20 + lo21) / 2.0L, 1e-15);
    }
    /* In how many seeds is B 256 worse than B 8, tenfold worse, and does
     * stats_err rise over all four? The summary rows come in seed order
     * for each batch size. */
    size_t worse = 0, tenfold = 0, rises = 0;
    for (size_t i = 0; i < 40; i++) {
        worse += v[3][i] > v[0][i];
        tenfold += v[3][i] >= 10.0 * v[0][i];
        rises += v[0][i] < v[1][i] && v[1][i] < v[2][i] && v[2][i] < v[3][i];
    }
    /* Bounds every count meets: the test is of the counts printed. */
    snprintf(path, sizeof path, "%s/c.ini", dir);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("[worse]\ntest = fraction\na = d: stats_err @ batch_size=256\n"
          "b = d: stats_err @ batch_size=8\neach = >\nop = >=\nvalue = 0\n"
          "[tenfold]\ntest = fraction\na = d: stats_err @ batch_size=256\n"
          "b = d: stats_err @ batch_size=8\neach = >=\nfactor = 10\n"
          "op = >=\nvalue = 0\n"
          "[rises]\ntest = fraction\na = d: stats_err\neach = increasing\n"
          "op = >=\nvalue = 0\n",
          fp);
    fclose(fp);
    snprintf(cmd, sizeof cmd, "%s verify %s --claims %s/c.ini > %s/v.txt",
             test_env("BNSTUDY", "./bnstudy"), dir, dir, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/v.txt", dir);
    char *text = test_slurp(path, NULL);
    assert_non_null(text);
    char want[3][64];
    snprintf(want[0], 64, " in %zu of 40 seeds", worse);
    snprintf(want[1], 64, " in %zu of 40 seeds", tenfold);
    snprintf(want[2], 64, " in %zu of 40 seeds", rises);
    const char *at = text;
    for (size_t k = 0; k < 3; k++) {
        at = strstr(at, want[k]);
        if (!at)
            fail_msg("verify did not count '%s':\n%s", want[k], text);
    }
    test_slurp_free(text);
    tsv_free(&sum);
    tsv_free(&dist);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int test_shuffles_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closed_form_equals_enumeration),
        cmocka_unit_test(test_every_estimator_against_its_reference),
        cmocka_unit_test(test_closed_form_matches_ten_thousand_shuffles),
        cmocka_unit_test(test_distribution_matches_rows),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("shuffles", tests, NULL, NULL);
}
