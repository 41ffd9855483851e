/*
 * Populations read from files, end to end (the parser itself is
 * test_popfile.c's): `run`, `population` and `sweep` on a file written
 * here, whose truth is checked against long double, whose rows the run
 * trains on exactly as the library does, whose identifier names the
 * bytes, the format and the columns, and whose manifest records the file
 * and its SHA-256 (checked with sha256sum); the orders on its label and
 * group columns; the refusals (a file beside rows, seed or feature lines,
 * naming both; a column without a file); and outputs that would replace
 * an input, by any spelling of its path, refused with nothing written.
 */
#include "helpers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "study/exp.h"
#include "base/pcg32.h"
#include "pop/popid.h"

static char tmpdir[256];

static int group_setup(void **state)
{
    (void)state;
    return test_tmpdir_make(tmpdir, sizeof tmpdir, "filepop");
}

static int group_teardown(void **state)
{
    (void)state;
    return test_tmpdir_remove(tmpdir);
}

enum { N = 40, F = 3 };
static const char *const names[F] = {"x one", "y", "z"};

/* N rows: three features on scales 1e-3, 1 and 1e3 from PCG32, a class
 * (benign or malignant, the last 15 rows malignant) and a source (u0, u1,
 * u2 in turn). */
static void make_rows(double *x)
{
    pcg32_t rng;
    pcg32_seed(&rng, 12, 99);
    static const double scale[F] = {1e-3, 1.0, 1e3};
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < F; j++)
            x[i * F + j] =
                scale[j] * (1.0 + (double)pcg32_next(&rng) / 4294967296.0);
}

static const char *class_of(size_t i)
{
    return i < 25 ? "benign" : "malignant";
}

static void write_rows(const char *path, char sep, const double *x)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fprintf(fp, "%s%c%s%c%s%ccls%csrc\n", names[0], sep, names[1], sep,
            names[2], sep, sep);
    for (size_t i = 0; i < N; i++) {
        for (size_t j = 0; j < F; j++)
            fprintf(fp, "%.17g%c", x[i * F + j], sep);
        fprintf(fp, "%s%cu%zu\n", class_of(i), sep, i % 3);
    }
    assert_int_equal(fclose(fp), 0);
}

/* A fresh directory tmpdir/name holding the rows as rows.csv. */
static void rows_dir(const char *name, char *dir, size_t cap, double *x)
{
    char path[400];
    test_fresh_dir(tmpdir, dir, cap, name);
    make_rows(x);
    snprintf(path, sizeof path, "%s/rows.csv", dir);
    write_rows(path, ',', x);
}

static int column(char **head, size_t n, const char *name)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(head[k], name) == 0)
            return (int)k;
    fail_msg("no column %s", name);
    return -1;
}

static double number(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end)
        fail_msg("not a number: '%s'", s);
    return v;
}

/* The library's own run on the same bytes, for the bits to agree with. */
static void library_run(const char *path, size_t b, run_result *res,
                        pop_t *pop)
{
    unsigned char *bytes;
    size_t len;
    bn_error err;
    popfile pf;
    popfile_options opt = {.format = POPFILE_AUTO, .label = "cls",
                           .group = "src"};
    assert_int_equal(popfile_slurp(path, POPFILE_MAX_BYTES, &bytes, &len,
                                   &err),
                     0);
    assert_int_equal(popfile_parse(path, bytes, len, &opt, &pf, &err), 0);
    assert_int_equal(pop_from_file(&pf, pop, &err), 0);
    run_config cfg;
    run_default_config(&cfg);
    cfg.batch_size = b;
    if (run_execute(pop, &cfg, NULL, res, &err) != 0)
        fail_msg("%s", err.msg);
    free(bytes);
}

/* run --population on a CSV and on the same rows as TSV: the summary and
 * features.tsv (on standard output, after a blank line) carry the
 * library's numbers to the bit, the truth agrees with long double and is
 * the same bits from both files, and the identifier is the file's. */
static void test_run_on_a_file(void **state)
{
    (void)state;
    char dir[300], path[400];
    test_fresh_dir(tmpdir, dir, sizeof dir, "run");
    double x[N * F];
    make_rows(x);
    double truth[2][2 * F];
    for (int fmt = 0; fmt < 2; fmt++) {
        snprintf(path, sizeof path, "%s/rows.%s", dir, fmt ? "tsv" : "csv");
        write_rows(path, fmt ? '\t' : ',', x);
        char *out, *err;
        int rc = test_bnstudy(dir, &out, &err,
                              "run --population rows.%s --label cls --group "
                              "src --batch-size 8 --write-features -",
                              fmt ? "tsv" : "csv");
        if (rc != 0)
            fail_msg("status %d: %s", rc, err);
        assert_string_equal(err, "");
        run_result res;
        pop_t pop;
        library_run(path, 8, &res, &pop);

        /* The summary, a blank line, then features.tsv. */
        char *lines[64];
        size_t nl = test_split(out, '\n', lines, 64);
        assert_int_equal(nl, 2 + 1 + 1 + F + 1);
        assert_string_equal(lines[2], "");
        char *head[64], *row[64];
        size_t nh = test_split(lines[0], '\t', head, 64);
        assert_int_equal(test_split(lines[1], '\t', row, 64), nh);
        assert_true(number(row[column(head, nh, "stats_err")]) ==
                    res.stats_err);
        assert_true(number(row[column(head, nh, "stats_err_rel")]) ==
                    res.stats_err_rel);
        assert_true(number(row[column(head, nh, "worst_var_rel")]) ==
                    res.worst_var_rel);
        unsigned char *bytes;
        size_t len;
        assert_int_equal(
            popfile_slurp(path, POPFILE_MAX_BYTES, &bytes, &len, NULL), 0);
        pop_file_desc d = {pop_fnv1a64(bytes, len), fmt ? "tsv" : "csv",
                           "cls", "src"};
        free(bytes);
        char id[17];
        pop_id_file(&d, id);
        assert_string_equal(row[column(head, nh, "population")], id);

        nh = test_split(lines[3], '\t', head, 64);
        int c_f = column(head, nh, "feature"), c_m = column(head, nh,
                                                              "true_mean");
        int c_v = column(head, nh, "true_var"), c_rm = column(head, nh,
                                                               "running_mean");
        for (size_t j = 0; j < F; j++) {
            assert_int_equal(test_split(lines[4 + j], '\t', row, 64), nh);
            assert_string_equal(row[c_f], names[j]);
            long double m, v;
            ld_moments(N, F, x + j, &m, &v);
            double gm = number(row[c_m]), gv = number(row[c_v]);
            assert_close(gm, m, 1e-15, sqrtl(v));
            assert_rel(gv, v, 1e-14);
            assert_true(gm == pop.mean[j] && gv == pop.var[j]);
            assert_true(number(row[c_rm]) == res.running_mean[j]);
            truth[fmt][j] = gm;
            truth[fmt][F + j] = gv;
        }
        run_result_free(&res);
        pop_free(&pop);
        test_slurp_free(out);
        test_slurp_free(err);
    }
    assert_memory_equal(truth[0], truth[1], sizeof truth[0]);
}

/* by-label: the classes in their order (benign, malignant), each a
 * shuffle of its own rows; by-group likewise on src; quoted names with a
 * space in an experiment file's list. */
static void test_orders_on_columns(void **state)
{
    (void)state;
    char dir[300], path[400];
    double x[N * F];
    rows_dir("orders", dir, sizeof dir, x);
    size_t first[2][N];
    for (int seed = 1; seed <= 2; seed++) {
        char *out, *err;
        assert_int_equal(test_bnstudy(dir, &out, &err,
                                      "population --population rows.csv "
                                      "--label cls --group src --order "
                                      "by-label --seed %d",
                                      seed),
                         0);
        char *lines[64], *f[16];
        assert_int_equal(test_split(out, '\n', lines, 64), N + 2);
        assert_int_equal(test_split(lines[0], '\t', f, 16), 1 + F + 2);
        assert_string_equal(f[F + 1], "cls");
        assert_string_equal(f[F + 2], "src");
        int seen[N] = {0};
        for (size_t k = 0; k < N; k++) {
            assert_int_equal(test_split(lines[k + 1], '\t', f, 16), 1 + F + 2);
            size_t i = (size_t)number(f[0]);
            assert_true(i < N && !seen[i]);
            seen[i] = 1;
            first[seed - 1][k] = i;
            /* 25 benign rows first: the class column says so too. */
            assert_int_equal(i < 25, k < 25);
            assert_string_equal(f[F + 1], class_of(i));
            for (size_t j = 0; j < F; j++)
                assert_true(number(f[1 + j]) == x[i * F + j]);
        }
        test_slurp_free(out);
        test_slurp_free(err);
    }
    /* Shuffled inside the classes: the seed moves rows. */
    assert_memory_not_equal(first[0], first[1], sizeof first[0]);

    char *out, *err;
    assert_int_equal(test_bnstudy(dir, &out, &err,
                                  "population --population rows.csv "
                                  "--label cls --group src --order "
                                  "by-group"),
                     0);
    char *lines[64], *f[16];
    assert_int_equal(test_split(out, '\n', lines, 64), N + 2);
    for (size_t k = 0; k < N; k++) {
        test_split(lines[k + 1], '\t', f, 16);
        size_t i = (size_t)number(f[0]);
        /* u0 has rows 0, 3, ..., 39 (14), u1 13, u2 13. */
        size_t want = k < 14 ? 0 : k < 27 ? 1 : 2;
        assert_int_equal(i % 3, want);
    }
    test_slurp_free(out);
    test_slurp_free(err);

    /* An experiment file: the file relative to it, an order on a feature
     * whose name has a space, quoted. */
    snprintf(path, sizeof path, "%s/sub", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/sub/e.ini", dir);
    test_write_file(path, "[population]\nfile = ../rows.csv\nlabel = cls\n"
                          "group = src\n"
                          "[sweep]\nbatch_size = 8\n"
                          "order = \"sorted:x one\" by-label, shuffled\n");
    int rc = test_bnstudy(dir, &out, &err,
                          "sweep sub/e.ini --out res --jobs 1");
    if (rc != 0)
        fail_msg("status %d: %s", rc, err);
    test_slurp_free(out);
    test_slurp_free(err);
    snprintf(path, sizeof path, "%s/res/e/summary.tsv", dir);
    char *text = test_slurp(path, NULL);
    assert_non_null(text);
    assert_int_equal(test_split(text, '\n', lines, 64), 5);
    char *head[64];
    size_t nh = test_split(lines[0], '\t', head, 64);
    int c_o = column(head, nh, "order");
    static const char *const want[3] = {"sorted:x one", "by-label",
                                        "shuffled"};
    for (int r = 0; r < 3; r++) {
        test_split(lines[r + 1], '\t', f, 16);
        assert_string_equal(f[c_o], want[r]);
    }
    test_slurp_free(text);

    /* The manifest names the file as written, its SHA-256, as
     * sha256sum computes it, and the rows it held (N); no rows, seed or
     * feature lines of a generated population. */
    snprintf(path, sizeof path, "%s/res/e/manifest.tsv", dir);
    text = test_slurp(path, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "\npopulation.file\t../rows.csv\n"));
    assert_non_null(strstr(text, "\npopulation.label\tcls\n"));
    assert_non_null(strstr(text, "\npopulation.group\tsrc\n"));
    assert_null(strstr(text, "population.rows"));
    assert_non_null(strstr(text, "\npopulation.file_rows\t40\n"));
    assert_null(strstr(text, "population.feature"));
    char cmd_out[400];
    snprintf(cmd_out, sizeof cmd_out, "%s/sha", dir);
    assert_int_equal(test_shell("cd '%s' && sha256sum rows.csv | cut -c1-64 "
                                ">'%s'",
                                dir, cmd_out),
                     0);
    char *sha = test_slurp(cmd_out, NULL);
    assert_non_null(sha);
    sha[64] = '\0';
    char want_line[200];
    snprintf(want_line, sizeof want_line, "\npopulation.file_sha256\t%s\n",
             sha);
    assert_non_null(strstr(text, want_line));
    free(sha);
    test_slurp_free(text);
}

/* A refusal: status 2, one line on stderr with every needle, nothing on
 * stdout, and the directory as it was. */
static void expect_refused(const char *dir, const char *args,
                           const char *const *needles)
{
    char before[400], after[400];
    snprintf(before, sizeof before, "%s.before", dir);
    snprintf(after, sizeof after, "%s.after", dir);
    assert_int_equal(test_shell("cd '%s' && find . -type f | sort | xargs "
                                "sha256sum >'%s'",
                                dir, before),
                     0);
    char *out, *err;
    int rc = test_bnstudy(dir, &out, &err, "%s", args);
    const char *why = NULL;
    size_t lines = 0;
    for (const char *c = err; *c; c++)
        lines += *c == '\n';
    if (rc != 2)
        why = "status is not 2";
    else if (out[0])
        why = "something on stdout";
    else if (lines != 1)
        why = "stderr is not one line";
    for (size_t k = 0; !why && needles[k]; k++)
        if (!strstr(err, needles[k]))
            why = needles[k];
    assert_int_equal(test_shell("cd '%s' && find . -type f | sort | xargs "
                                "sha256sum >'%s'",
                                dir, after),
                     0);
    if (!why && test_shell("cmp -s '%s' '%s'", before, after) != 0)
        why = "the directory changed";
    if (why)
        fail_msg("bnstudy %s: %s (status %d)\n  stderr: %s", args, why, rc,
                 err);
    test_slurp_free(out);
    test_slurp_free(err);
}

static void test_refusals(void **state)
{
    (void)state;
    char dir[300], path[400];
    double x[N * F];
    rows_dir("refusals", dir, sizeof dir, x);
    snprintf(path, sizeof path, "%s/rows-link.csv", dir);
    char src[400];
    snprintf(src, sizeof src, "%s/rows.csv", dir);
    assert_int_equal(link(src, path), 0);
    static const struct {
        const char *name, *text;
    } inis[] = {
        {"rows.ini", "[population]\nfile = rows.csv\nlabel = cls\n"
                     "rows = 100\ngroup = src\n"},
        {"feature.ini", "[population]\nfeature = a 0 1 0\nfile = rows.csv\n"
                        "label = cls\ngroup = src\n"},
        {"label.ini", "[population]\nlabel = cls\n"},
        {"missing.ini", "[population]\nfile = nowhere.csv\n"},
        {"byl.ini", "[population]\nfile = lab.csv\nlabel = cls\n"
                    "[sweep]\norder = by-group\nbatch_size = 8\n"},
        {"src.ini", "[population]\nfile = rows.csv\nlabel = cls\n"},
        {"cell.ini", "[population]\nfile = rows.csv\n"},
        {"e.ini", "[population]\nfile = rows.csv\nlabel = cls\n"
                  "group = src\n[sweep]\nbatch_size = 8\n"},
        {"x.ini", "[sweep]\nbatch_size = 8\n"},
    };
    for (size_t i = 0; i < sizeof inis / sizeof *inis; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, inis[i].name);
        test_write_file(path, inis[i].text);
    }
    static const struct {
        const char *args, *needles[5];
    } cases[] = {
        /* Both lines named. */
        {"sweep rows.ini --out res",
         {"rows.ini:4", "rows does not apply", "rows.ini:2", NULL}},
        {"sweep feature.ini --out res",
         {"feature.ini:2", "feature does not apply", "feature.ini:3", NULL}},
        {"sweep label.ini --out res", {"label.ini:2", "no file", NULL}},
        {"sweep missing.ini --out res",
         {"missing.ini:2", "nowhere.csv", "cannot open", NULL}},
        {"sweep byl.ini --out res", {"by-group", "group column", NULL}},
        {"sweep src.ini --out res",
         {"src.ini:2", "rows.csv:2:5", "'src'", "not a number", NULL}},
        /* The label column is not a number and is no feature. */
        {"sweep cell.ini --out res", {"cell.ini:2", "rows.csv:2:4", NULL}},
        {"run --label cls", {"--label", "no --population", NULL}},
        {"run --population rows.csv --label cls --group src --order "
         "sorted:nope",
         {"--order", "nope", NULL}},
        {"run --population rows.csv --label cls --group src --batch-size 41",
         {"--batch-size", "40 rows", NULL}},
        /* An output is never an input, whatever the path's spelling. */
        {"run --population rows.csv --label cls --group src --batch-size 8 "
         "--write-features rows.csv",
         {"--write-features", "input file rows.csv", NULL}},
        {"run --population rows.csv --label cls --group src --batch-size 8 "
         "--write-outputs ./rows-link.csv",
         {"--write-outputs", "input file rows.csv", NULL}},
        {"run --population ./rows.csv --label cls --group src --batch-size 8 "
         "--write-features o.tsv --write-outputs rows.csv",
         {"--write-outputs", "input", NULL}},
        /* sweep's outputs: summary.tsv where the population is, the
         * reading table where (a hard link to) the experiment file is. */
        {"sweep x.ini --out res --population res/x/summary.tsv --label cls "
         "--group src",
         {"res/x/summary.tsv is the input file", NULL}},
        {"sweep e.ini --out res", {"res/e/table.md is the input file e.ini",
                                   NULL}},
    };
    assert_int_equal(test_shell("cd '%s' && cut -d, -f1-4 rows.csv >lab.csv "
                                "&& mkdir -p res/x res/e && "
                                "tr , '\\t' <rows.csv >res/x/summary.tsv && "
                                "ln e.ini res/e/table.md",
                                dir),
                     0);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        expect_refused(dir, cases[k].args, cases[k].needles);
}

/* A constant column: the run says so on stderr and the relative scores
 * are inf, not NaN; a run then still succeeds. */
static void test_constant_feature(void **state)
{
    (void)state;
    char dir[300], path[400];
    test_fresh_dir(tmpdir, dir, sizeof dir, "constant");
    snprintf(path, sizeof path, "%s/c.csv", dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("a,flat\n", fp);
    for (int i = 0; i < 16; i++)
        fprintf(fp, "%d,3\n", i);
    assert_int_equal(fclose(fp), 0);
    char *out, *err;
    assert_int_equal(test_bnstudy(dir, &out, &err,
                                  "run --population c.csv --batch-size 4"),
                     0);
    assert_non_null(strstr(err, "feature 'flat' has zero variance"));
    char *lines[4], *head[64], *row[64];
    assert_int_equal(test_split(out, '\n', lines, 4), 3);
    size_t nh = test_split(lines[0], '\t', head, 64);
    test_split(lines[1], '\t', row, 64);
    assert_string_equal(row[column(head, nh, "stats_err_rel")], "inf");
    assert_string_equal(row[column(head, nh, "worst_var_rel")], "inf");
    test_slurp_free(out);
    test_slurp_free(err);
}

int test_filepop_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_on_a_file),
        cmocka_unit_test(test_orders_on_columns),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_constant_feature),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("filepop", tests, group_setup,
                                       group_teardown);
}
