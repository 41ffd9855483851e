/*
 * The bare kernels `make bench` measures bnstudy against (bench/kernel.h:
 * the scores alone, and everything bnstudy writes of the configuration)
 * are only yardsticks while they compute the same bits as bnstudy's
 * layer, and the complete one the same self-checks passed: here, on the
 * default population and on wider and odd-sized ones (more features than
 * a block of bn.c's loops, a partial batch dropped, means that dwarf
 * their spread so that some checks fail), at several batch sizes, seeds
 * and layer settings.
 */
#include "helpers.h"

#include "kernel.h"

/* n rows of f features cycled from the default ones, feature j's mean
 * moved by j + offset. */
static void pop_of(size_t n, size_t f, double offset, pop_t *pop)
{
    pop_spec def, spec;
    bn_error err;
    assert_int_equal(pop_default_spec(&def), 0);
    pop_spec_init(&spec);
    spec.n_rows = n;
    spec.seed = 3;
    for (size_t j = 0; j < f; j++) {
        const pop_feature *d = &def.features[j % def.n_features];
        char name[32];
        snprintf(name, sizeof name, "g%zu", j);
        assert_int_equal(
            pop_spec_add(&spec, name, d->mean + (double)j + offset, d->sd,
                         d->rho),
            0);
    }
    assert_int_equal(pop_generate(&spec, pop, &err), 0);
    pop_spec_free(&def);
    pop_spec_free(&spec);
}

/* The kernel (all: the complete one) against bnstudy's run of the same
 * configuration; returns bnstudy's share of self-checks failed. */
static double expect_same_of(const pop_t *pop, size_t b, uint64_t seed,
                             double gamma, double beta, double eps, int all)
{
    run_config cfg;
    run_default_config(&cfg);
    cfg.batch_size = b;
    cfg.seed = seed;
    cfg.layer.gamma = gamma;
    cfg.layer.beta = beta;
    cfg.layer.eps = eps;
    run_result res;
    bn_error err;
    assert_int_equal(run_execute(pop, &cfg, NULL, &res, &err), 0);

    size_t f = pop->f;
    void *scratch = malloc(kernel_scratch_bytes(pop->n, f, b));
    double *buf = malloc(3 * f * sizeof *buf);
    assert_non_null(scratch);
    assert_non_null(buf);
    kernel_layer l = {gamma, beta, eps, cfg.layer.keep, cfg.layer.p};
    kernel_out out = {.rm = buf, .rv = buf + f, .gap = buf + 2 * f};
    (all ? kernel_run_all : kernel_run)(pop->x, pop->n, f, pop->mean,
                                        pop->var, b, seed, &l, scratch,
                                        &out);
    const char *what = kernel_differs(&out, f, all, &res);
    if (what)
        fail_msg("%zu x %zu, B %zu, seed %llu: the %s kernel's %s is not "
                 "bnstudy's (train_eval_rmse %.17g against %.17g, "
                 "props_pass %zu against %zu)",
                 pop->n, f, b, (unsigned long long)seed,
                 all ? "complete" : "scores-only", what, out.train_eval_rmse,
                 res.train_eval_rmse, out.props_pass, res.props_pass);
    double failed =
        1.0 - (double)res.props_pass / (double)res.props_total;
    run_result_free(&res);
    free(scratch);
    free(buf);
    return failed;
}

/* Both kernels: the scores alone, and everything. */
static double expect_same(const pop_t *pop, size_t b, uint64_t seed,
                          double gamma, double beta, double eps)
{
    expect_same_of(pop, b, seed, gamma, beta, eps, 0);
    return expect_same_of(pop, b, seed, gamma, beta, eps, 1);
}

static void test_kernel_is_bnstudy_to_the_bit(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    static const size_t bs[] = {2, 8, 16, 64, 256, 512};
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++)
        for (uint64_t seed = 1; seed <= 3; seed++)
            expect_same(&pop, bs[i], seed, 1.0, 0.0, 1e-5);
    expect_same(&pop, 32, 7, 1.5, -0.25, 1e-3);
    pop_free(&pop);
}

static void test_kernel_wide_and_odd(void **state)
{
    (void)state;
    pop_t pop;
    pop_of(301, 300, 0.0, &pop); /* 300 features: bn.c's loops go in blocks */
    expect_same(&pop, 8, 1, 1.0, 0.0, 1e-5);
    expect_same(&pop, 64, 2, 2.0, 0.5, 1e-5); /* 45 rows dropped */
    pop_free(&pop);
}

/* Means that dwarf their spread: some of the self-checks fail, and the
 * complete kernel counts the same ones. */
static void test_kernel_checks_that_fail(void **state)
{
    (void)state;
    pop_t pop;
    pop_of(203, 7, 1e9, &pop);
    double failed = 0.0;
    static const size_t bs[] = {2, 8, 64};
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++)
        failed += expect_same(&pop, bs[i], 1, 1.0, 0.0, 1e-5);
    failed += expect_same(&pop, 16, 2, 0.5, 3.0, 1e-3);
    assert_true(failed > 0.0);
    pop_free(&pop);
}

int test_bench_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_is_bnstudy_to_the_bit),
        cmocka_unit_test(test_kernel_wide_and_odd),
        cmocka_unit_test(test_kernel_checks_that_fail),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("bench kernel", tests, NULL, NULL);
}
