/*
 * The web page's glue (web/glue.c), built natively so that its memory
 * handling runs under the sanitizers too (the browser test runs it as
 * WebAssembly). web_run must answer what the library gives for the same
 * settings built here by hand, refuse as exp_finish and exp_set do, and
 * run a product in the sweep's order; web_tables must name every key,
 * order, estimator and score; web_figures must give the figures bnstudy
 * plot draws of the same sweep's files, worded from the numbers.
 */
#include "helpers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figure/plot.h"
#include "model/estimator.h"
#include "study/exp.h"
#include "model/order.h"
#include "base/buf.h"
#include "study/out.h"
#include "pop/popid.h"
#include "model/score.h"

const char *web_tables(void);
const char *web_run(const char *sets, int tables);
const char *web_figures(const char *sets, const char *summary,
                        const char *features, const char *curve,
                        const char *effective);

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

/* A column of a TSV text's row (0 the first after the header), or NULL:
 * a static copy. */
static const char *tsv_cell(const char *text, size_t row, const char *col)
{
    static char cell[64];
    const char *line = text, *hdr = text;
    for (size_t r = 0; r <= row; r++) {
        line = strchr(line, '\n');
        if (!line || line[1] == '\0' || line[1] == '\n')
            return NULL;
        line++;
    }
    size_t i = 0, want = (size_t)-1, n = strlen(col);
    for (const char *h = hdr; *h && *h != '\n'; i++) {
        size_t len = strcspn(h, "\t\n");
        if (len == n && strncmp(h, col, n) == 0)
            want = i;
        h += len + (h[len] == '\t');
    }
    const char *c = line;
    for (i = 0; i < want && *c && *c != '\n'; i++)
        c += strcspn(c, "\t\n") + (c[strcspn(c, "\t\n")] == '\t');
    size_t len = strcspn(c, "\t\n");
    if (want == (size_t)-1 || len >= sizeof cell)
        return NULL;
    memcpy(cell, c, len);
    cell[len] = '\0';
    return cell;
}

/* The classifier with its curve: a row per epoch, the last of which is
 * the run's own accuracies (the summary's), as run --write-curve writes
 * them. */
static void test_web_run_classifier_curve(void **state)
{
    (void)state;
    char *text = strdup(web_run("model.type=classifier\npopulation.classes=2\n"
                                "sweep.epochs=3\n", 2));
    assert_non_null(text);
    assert_int_not_equal(text[0], '!');
    char *curve = strstr(text, "\n\n");
    assert_non_null(curve);
    *curve = '\0';
    curve += 2;
    assert_non_null(tsv_cell(curve, 2, "epoch"));
    assert_string_equal(tsv_cell(curve, 2, "epoch"), "3");
    assert_null(tsv_cell(curve, 3, "epoch"));
    for (const char *const *c = (const char *const[]){"acc_train_mode",
                                                       "acc_eval_mode", NULL};
         *c; c++) {
        char want[64];
        assert_non_null(tsv_cell(text, 0, *c));
        snprintf(want, sizeof want, "%s", tsv_cell(text, 0, *c));
        assert_string_equal(tsv_cell(curve, 2, *c), want);
    }
    free(text);
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
    char *lines[8], *h[64], *v[64];
    assert_int_equal(test_split(text, '\n', lines, 8), 6);
    assert_string_equal(lines[5], "");
    size_t nh = test_split(lines[0], '\t', h, 64);
    size_t co = test_column(h, nh, "order", "summary.tsv");
    size_t cb = test_column(h, nh, "batch_size", "summary.tsv");
    static const char *const order[] = {"shuffled", "shuffled", "sorted",
                                        "sorted"};
    static const char *const batch[] = {"8", "16", "8", "16"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(test_split(lines[i + 1], '\t', v, 64), nh);
        assert_string_equal(v[co], order[i]);
        assert_string_equal(v[cb], batch[i]);
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

/* The batch sizes and orders of the figures' tests. */
static const char figure_sets[] = "sweep.batch_size=8 16 32 64 128 256\n"
                                  "sweep.order=shuffled sorted";

/* The figures of a sweep's directory (bnstudy sweep's files) as
 * web_figures words them of web_run's texts: the same, but for the
 * files' names, which are the directory's there. */
static void test_web_figures_are_the_sweeps(void **state)
{
    const char *root = *state;
    char dir[4200], ini[4300], files[4400];
    test_fresh_dir(root, dir, sizeof dir, "figures");
    snprintf(ini, sizeof ini, "%s/page.ini", dir);
    test_write_file(ini, "[experiment]\noutputs = summary manifest\n"
                         "[sweep]\nbatch_size = 8 16 32 64 128 256\n"
                         "order = shuffled sorted\n");
    char *out, *err;
    int st = test_bnstudy(dir, &out, &err, "sweep page.ini --out res");
    if (st != 0)
        fail_msg("bnstudy sweep: %s", err);
    free(out);
    free(err);
    snprintf(files, sizeof files, "%s/res/page", dir);
    plot_list l = {0};
    bn_error e;
    assert_true(plot_experiment(files, "page", &l, &e) > 0);
    bn_buf want = {0};
    buf_putc(&want, '[');
    for (size_t i = 0; i < l.n; i++) {
        buf_printf(&want, i ? "," : "");
        assert_int_equal(plot_json(&l.fig[i], &want), 0);
    }
    buf_putc(&want, ']');
    plot_list_free(&l);
    /* "DIR/summary.tsv" is "summary.tsv" in memory. */
    char prefix[4500];
    snprintf(prefix, sizeof prefix, "\"%s/", files);
    bn_buf w = {0};
    for (const char *c = want.p; *c;) {
        const char *at = strstr(c, prefix);
        size_t n = at ? (size_t)(at - c) : strlen(c);
        buf_add(&w, c, n);
        if (!at)
            break;
        buf_putc(&w, '"');
        c = at + strlen(prefix);
    }
    char *summary = strdup(web_run(figure_sets, 0));
    assert_non_null(summary);
    const char *got = web_figures(figure_sets, summary, "", NULL, NULL);
    assert_string_equal(got, w.p);
    free(summary);
    buf_free(&want);
    buf_free(&w);
}

/* The column col of the row of batch size b in summary text t. */
static double cell_at(char *t, const char *col, const char *b)
{
    char *copy = strdup(t), *lines[16], *head[64], *v[64];
    assert_non_null(copy);
    size_t nl = test_split(copy, '\n', lines, 16);
    size_t nh = test_split(lines[0], '\t', head, 64);
    size_t c = test_column(head, nh, col, "summary.tsv");
    size_t cb = test_column(head, nh, "batch_size", "summary.tsv");
    double x = NAN;
    for (size_t r = 1; r < nl && r < 16; r++)
        if (test_split(lines[r], '\t', v, 64) == nh && !strcmp(v[cb], b))
            x = strtod(v[c], NULL);
    free(copy);
    return x;
}

/* The stats-err figure's title and note of one order's sweep, worded as
 * the numbers read here say: the published finding when batch_mean_err
 * falls and stats_err rises from B = 8 to 256, else the description; the
 * ratio of stats_err's two ends in the note. The rows doctored so that
 * stats_err falls make the title neutral. */
static void test_web_figures_word_the_numbers(void **state)
{
    (void)state;
    static const char sets[] = "sweep.batch_size=8 16 32 64 128 256";
    for (int doctored = 0; doctored < 2; doctored++) {
        char *t = strdup(web_run(sets, 0));
        assert_non_null(t);
        double m0 = cell_at(t, "batch_mean_err", "8"),
               m1 = cell_at(t, "batch_mean_err", "256"),
               s0 = cell_at(t, "stats_err", "8"),
               s1 = cell_at(t, "stats_err", "256");
        assert_false(isnan(m0) || isnan(m1) || isnan(s0) || isnan(s1));
        if (doctored) { /* every stats_err divided by its batch size */
            char *lines[16], *v[64], *head[64];
            bn_buf d = {0};
            size_t nl = test_split(t, '\n', lines, 16);
            size_t nh = test_split(lines[0], '\t', head, 64);
            size_t c = test_column(head, nh, "stats_err", "summary.tsv");
            size_t cb = test_column(head, nh, "batch_size", "summary.tsv");
            for (size_t i = 0; i < nh; i++)
                buf_printf(&d, "%s%s", i ? "\t" : "", head[i]);
            for (size_t r = 1; r < nl && lines[r][0]; r++) {
                assert_int_equal(test_split(lines[r], '\t', v, 64), nh);
                buf_putc(&d, '\n');
                for (size_t i = 0; i < nh; i++)
                    if (i == c)
                        buf_printf(&d, "\t%.17g",
                                   strtod(v[i], NULL) / strtod(v[cb], NULL));
                    else
                        buf_printf(&d, "%s%s", i ? "\t" : "", v[i]);
            }
            buf_putc(&d, '\n');
            free(t);
            t = d.p;
            s0 = cell_at(t, "stats_err", "8");
            s1 = cell_at(t, "stats_err", "256");
        }
        const char *got = web_figures(sets, t, NULL, NULL, NULL);
        assert_int_equal(got[0], '[');
        char title[200], note[200];
        snprintf(title, sizeof title, "\"title\":\"%s\"",
                 m1 < m0 && s1 > s0
                     ? "Bigger batches estimate better, yet eval-mode "
                       "statistics get worse"
                     : "stats\\\\_err and batch\\\\_mean\\\\_err against "
                       "batch size");
        snprintf(note, sizeof note,
                 "\"note\":\"stats\\\\_err %.1f× %s\\u000aat B = 256 than at B = 8\"",
                 s1 > s0 ? s1 / s0 : s0 / s1, s1 > s0 ? "higher" : "lower");
        if (!strstr(got, title) || !strstr(got, note))
            fail_msg("want %s and %s in %s", title, note, got);
        free(t);
    }
}

/* Settings the page could not run, and tables that are not bnstudy's,
 * are one refusal each. */
static void test_web_figures_refuse(void **state)
{
    (void)state;
    const char *got = web_figures("layer.momentum=2", "a\tb\n1\t2\n", "", NULL, NULL);
    assert_string_equal(got, "!--set layer.momentum=2: momentum: '2' is "
                             "not a number in (0, 1]");
    got = web_figures("", "batch_size\tstats_err\n8", "", NULL, NULL);
    assert_string_equal(got, "!summary.tsv: not a TSV file with a header "
                             "line");
    got = web_figures("", "batch_size\tstats_err\nx\t1\n", "", NULL, NULL);
    assert_string_equal(got, "!summary.tsv:2: column batch_size: 'x' is not "
                             "a number as bnstudy writes one");
    /* Nothing to draw is no figure. */
    assert_string_equal(web_figures("", "a\tb\n1\t2\n", "", NULL, NULL), "[]");
}

int test_web_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_web_run_is_the_run),
        cmocka_unit_test(test_web_run_refuses),
        cmocka_unit_test(test_web_run_runs_a_product),
        cmocka_unit_test(test_web_tables_name_every_row),
        cmocka_unit_test(test_web_run_classifier_curve),
        cmocka_unit_test(test_web_figures_are_the_sweeps),
        cmocka_unit_test(test_web_figures_word_the_numbers),
        cmocka_unit_test(test_web_figures_refuse),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("web", tests, test_tmpdir_setup,
                                       test_tmpdir_teardown);
}
