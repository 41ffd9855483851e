/*
 * The bare kernel `make bench` measures bnstudy against (bench/kernel.h)
 * is only a yardstick while it computes the same bits as bnstudy's layer:
 * here, on the default population and on wider and odd-sized ones (more
 * features than a block of bn.c's loops, a partial batch dropped), at
 * several batch sizes, seeds and layer settings.
 */
#include "helpers.h"

#include "kernel.h"

static void pop_of(size_t n, size_t f, pop_t *pop)
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
            pop_spec_add(&spec, name, d->mean + (double)j, d->sd, d->rho), 0);
    }
    assert_int_equal(pop_generate(&spec, pop, &err), 0);
    pop_spec_free(&def);
    pop_spec_free(&spec);
}

static void expect_same(const pop_t *pop, size_t b, uint64_t seed,
                        double gamma, double beta, double eps)
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
    double *buf = malloc(2 * f * sizeof *buf);
    assert_non_null(scratch);
    assert_non_null(buf);
    kernel_layer l = {gamma, beta, eps, cfg.layer.keep, cfg.layer.p};
    kernel_out out = {buf, buf + f, 0, 0, 0};
    kernel_run(pop->x, pop->n, f, pop->mean, pop->var, b, seed, &l, scratch,
               &out);
    const char *what = kernel_differs(
        &out, f, res.running_mean, res.running_var, res.train_eval_rmse,
        res.batch_mean_err, res.batch_var_err);
    if (what)
        fail_msg("%zu x %zu, B %zu, seed %llu: the kernel's %s is not "
                 "bnstudy's (train_eval_rmse %.17g against %.17g)",
                 pop->n, f, b, (unsigned long long)seed, what,
                 out.train_eval_rmse, res.train_eval_rmse);
    run_result_free(&res);
    free(scratch);
    free(buf);
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
    pop_of(301, 300, &pop); /* 300 features: bn.c's loops go in blocks */
    expect_same(&pop, 8, 1, 1.0, 0.0, 1e-5);
    expect_same(&pop, 64, 2, 2.0, 0.5, 1e-5); /* 45 rows dropped */
    pop_free(&pop);
}

int test_bench_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_is_bnstudy_to_the_bit),
        cmocka_unit_test(test_kernel_wide_and_odd),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("bench kernel", tests, NULL, NULL);
}
