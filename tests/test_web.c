/*
 * The web page's glue (web/glue.c), built natively so that its memory
 * handling runs under the sanitizers too (the browser test runs it as
 * WebAssembly). web_run must answer what the library gives for the same
 * settings built here by hand, refuse as exp_finish and exp_set do, and
 * run a product in the sweep's order; web_tables must name every key,
 * order, estimator and score.
 */
#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/estimator.h"
#include "study/exp.h"
#include "model/order.h"
#include "base/buf.h"
#include "study/out.h"
#include "pop/popid.h"
#include "model/score.h"

const char *web_tables(void);
const char *web_run(const char *sets, int with_features);

/* What `bnstudy run --write-features -` prints for cfg on pop. */
static char *expected(const pop_t *pop, const run_config *cfg)
{
    bn_buf b = {0};
    run_result res;
    assert_int_equal(run_execute(pop, cfg, NULL, &res, NULL), 0);
    out_summary_header(&b, 1u);
    out_summary_row(&b, 1u, pop, cfg, &res);
    buf_putc(&b, '\n');
    out_features_header(&b, 1u);
    out_features_rows(&b, 1u, pop, cfg, &res);
    run_result_free(&res);
    assert_false(b.failed);
    return b.p;
}

static void test_web_run_is_the_run(void **state)
{
    (void)state;
    const char *got = web_run("sweep.batch_size=64\n"
                              "layer.momentum=0.3\n"
                              "layer.momentum_weights=new\n"
                              "sweep.order=sorted-desc:b\n"
                              "population.feature=a 0 2 0.5\n"
                              "population.feature=b 1 1 -0.3\n"
                              "population.rows=200\n",
                              1);
    pop_spec spec;
    pop_spec_init(&spec);
    spec.n_rows = 200;
    spec.seed = 1;
    assert_int_equal(pop_spec_add(&spec, "a", 0, 2, 0.5), 0);
    assert_int_equal(pop_spec_add(&spec, "b", 1, 1, -0.3), 0);
    pop_t pop;
    assert_int_equal(pop_generate(&spec, &pop, NULL), 0);
    run_config cfg;
    run_default_config(&cfg);
    cfg.batch_size = 64;
    assert_int_equal(bn_set_momentum(&cfg.layer, 0.3, BN_WEIGHTS_NEW, NULL),
                     0);
    assert_int_equal(order_parse("sorted-desc:b", &pop, &cfg.order, NULL), 0);
    pop_id(&spec, cfg.population);
    char *want = expected(&pop, &cfg);
    assert_string_equal(got, want);
    free(want);
    pop_free(&pop);
    pop_spec_free(&spec);
}

static void test_web_run_refuses(void **state)
{
    (void)state;
    static const struct {
        const char *sets, *message;
    } cases[] = {
        {"sweep.batch_size=600",
         "!--set sweep.batch_size=600: batch size must be from 2 to the "
         "population's 512 rows, got 600"},
        {"layer.momentum=0", "!--set layer.momentum=0: momentum: '0' is not "
                             "a number in (0, 1]"},
        {"nodot", "!--set nodot: expected section.key=value"},
        {"sweep.order=sorted:nope", NULL},
        {"population.feature=a 0 -1 0", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = web_run(cases[i].sets, 1);
        if (cases[i].message)
            assert_string_equal(got, cases[i].message);
        else if (got[0] != '!' || strchr(got, '\n'))
            fail_msg("%s: not one refusal: %s", cases[i].sets, got);
    }
    /* A refusal leaves nothing behind: the next run answers in full. */
    assert_int_equal(web_run("", 0)[0], 'e');
}

/* A product runs in the sweep's order: the batch size fastest. */
static void test_web_run_runs_a_product(void **state)
{
    (void)state;
    char *text = strdup(web_run("sweep.batch_size=8 16\n"
                                "sweep.order=shuffled sorted",
                                0));
    assert_non_null(text);
    char *lines[8], *v[40];
    assert_int_equal(test_split(text, '\n', lines, 8), 6);
    assert_string_equal(lines[5], "");
    static const char *const order[] = {"shuffled", "shuffled", "sorted",
                                        "sorted"};
    static const char *const batch[] = {"8", "16", "8", "16"};
    for (size_t i = 0; i < 4; i++) {
        assert_true(test_split(lines[i + 1], '\t', v, 40) > 4);
        assert_string_equal(v[1], order[i]);
        assert_string_equal(v[3], batch[i]);
    }
    free(text);
}

/* t has an object named name: "name":"NAME". */
static void assert_named(const char *t, const char *name)
{
    char needle[128];
    snprintf(needle, sizeof needle, "\"name\":\"%s\"", name);
    assert_non_null(strstr(t, needle));
}

/* Every row of every table the page builds its controls from is named. */
static void test_web_tables_name_every_row(void **state)
{
    (void)state;
    const char *t = web_tables();
    assert_int_equal(t[0], '{');
    for (int k = 0; k < KEY_COUNT; k++)
        assert_named(t, exp_key((key_id)k)->name);
    for (size_t i = 0; order_get(i); i++)
        assert_named(t, order_get(i)->name);
    for (int i = 0; bn_estimator_name_at(i); i++)
        assert_named(t, bn_estimator_name_at(i));
    for (size_t i = 0; score_get(i); i++)
        assert_named(t, score_get(i)->name);
    /* Balanced outside strings, and no raw control character. */
    int depth = 0, in_string = 0;
    for (const char *c = t; *c; c++) {
        assert_true((unsigned char)*c >= 0x20);
        if (in_string && *c == '\\')
            c++;
        else if (*c == '"')
            in_string = !in_string;
        else if (!in_string)
            depth += (*c == '{' || *c == '[') - (*c == '}' || *c == ']');
    }
    assert_false(in_string);
    assert_int_equal(depth, 0);
}

int test_web_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_web_run_is_the_run),
        cmocka_unit_test(test_web_run_refuses),
        cmocka_unit_test(test_web_run_runs_a_product),
        cmocka_unit_test(test_web_tables_name_every_row),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("web", tests, NULL, NULL);
}
