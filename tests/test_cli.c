/*
 * The command line as a user meets it: bnstudy is run as a child process
 * in an empty temporary directory with stdout and stderr captured. Bad
 * input must exit 2 with one line on stderr naming what was wrong, nothing
 * on stdout and no file left behind; good input must print the formats of
 * docs/definitions.md, whose column lists are read from that file itself,
 * with values that read back to the library's own bits.
 */
#include "helpers.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/order.h"
#include "pop/convpop.h"
#include "model/score.h"
#include "pop/popid.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

typedef struct {
    int status; /* exit status, or 128 + signal */
    char *out, *err;
    size_t out_len, err_len;
} cli_out;

static const char *tmp_base(void) { return test_env("TMPDIR", "/tmp"); }

/* Names in dir, other than . and .., into names (each up to 255 chars);
 * returns how many there are. No assertions: teardown uses it too. */
static size_t list_dir(const char *dir, char names[][256], size_t max)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (n < max)
            snprintf(names[n], 256, "%s", e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

/* Delete the files in dir (the tests create no subdirectories). */
static void empty_dir(const char *dir)
{
    char names[64][256], path[PATH_MAX + 256];
    size_t n = list_dir(dir, names, 64);
    for (size_t k = 0; k < n && k < 64; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        unlink(path);
    }
}

/* Each test gets its own empty directory to run bnstudy in, made by the
 * setup and removed by the teardown, which cmocka runs even when the test
 * fails half-way, so no failure leaves directories behind. */
static int dir_setup(void **state)
{
    char *d = malloc(PATH_MAX);
    if (!d)
        return -1;
    snprintf(d, PATH_MAX, "%s/bnstudy-test.XXXXXX", tmp_base());
    if (!mkdtemp(d)) {
        print_error("mkdtemp %s: %s\n", d, strerror(errno));
        free(d);
        return -1;
    }
    *state = d;
    return 0;
}

static int dir_teardown(void **state)
{
    char *d = *state;
    empty_dir(d);
    int rc = rmdir(d);
    free(d);
    return rc;
}

static void bnstudy_path(char *out)
{
    /* Absolute, because the child runs in another directory. */
    const char *p = test_env("BNSTUDY", "./bnstudy");
    char cwd[PATH_MAX];
    int len = -1;
    if (p[0] == '/')
        len = snprintf(out, PATH_MAX, "%s", p);
    else if (getcwd(cwd, sizeof cwd))
        len = snprintf(out, PATH_MAX, "%s/%s", cwd, p);
    else
        fail_msg("getcwd: %s", strerror(errno));
    if (len < 0 || len >= PATH_MAX)
        fail_msg("path too long: %s", p);
    if (access(out, X_OK) != 0)
        fail_msg("cannot run bnstudy at %s (set BNSTUDY)", out);
}

/* Run bnstudy with args (NULL-terminated) in directory cwd. */
static void cli(const char *cwd, const char *const *args, cli_out *r)
{
    char exe[PATH_MAX], out_path[PATH_MAX], err_path[PATH_MAX];
    bnstudy_path(exe);
    char *argv[32];
    size_t argc = 0;
    argv[argc++] = "bnstudy";
    for (; args[argc - 1] && argc < 31; argc++)
        argv[argc] = (char *)args[argc - 1];
    argv[argc] = NULL;
    snprintf(out_path, sizeof out_path, "%s/bnstudy-out.XXXXXX", tmp_base());
    snprintf(err_path, sizeof err_path, "%s/bnstudy-err.XXXXXX", tmp_base());
    int fo = mkstemp(out_path), fe = mkstemp(err_path);
    assert_true(fo >= 0 && fe >= 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (chdir(cwd) != 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
            _exit(126);
        execv(exe, argv);
        _exit(127);
    }
    close(fo);
    close(fe);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        assert_int_equal(errno, EINTR);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r->out = test_slurp(out_path, &r->out_len);
    r->err = test_slurp(err_path, &r->err_len);
    unlink(out_path);
    unlink(err_path);
    assert_true(r->out && r->err);
}

static void cli_free(cli_out *r)
{
    test_slurp_free(r->out);
    test_slurp_free(r->err);
}

static size_t count_char(const char *s, char c)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

/* The column names docs/definitions.md lists, indented, after the line
 * naming the file (`summary.tsv` or `features.tsv`), into one buffer. */
static size_t study_columns(const char *file, char **cols, size_t max,
                            char **buf)
{
    char path[PATH_MAX], mark[64];
    snprintf(path, sizeof path, "%s/definitions.md",
             test_env("DOCS", "docs"));
    snprintf(mark, sizeof mark, "`%s`", file);
    char *text = test_slurp(path, NULL);
    if (!text)
        fail_msg("cannot read %s", path);
    char *at = strstr(text, mark);
    assert_non_null(at);
    char *line = strstr(at, "\n    ");
    assert_non_null(line);
    line += 5;
    char *end = strchr(line, '\n');
    assert_non_null(end);
    *end = '\0';
    size_t n = 0;
    for (char *tok = strtok(line, " "); tok; tok = strtok(NULL, " "))
        if (n < max)
            cols[n++] = tok;
    *buf = text;
    return n;
}

/* The layer's score rows of the score table from *i on: the next one, or
 * NULL past the last. */
static const score_def *next_layer_score(size_t *i)
{
    for (const score_def *s; (s = score_get(*i)) != NULL;)
        if (run_models_show(score_get((*i)++)->models,
                            RUN_MODEL_BIT(RUN_MODEL_LAYER)))
            return s;
    return NULL;
}

/* summary.tsv of the layer alone as the tables make it: its scores are
 * the score table's rows of the layer, in the table's order, and every
 * other column is a key column of summary.tsv that the layer has. */
static void assert_summary_from_tables(char *const *got, size_t ng)
{
    size_t next = 0;
    for (size_t k = 0; k < ng; k++) {
        const score_def *s = score_find(got[k]);
        if (s) {
            const score_def *want = next_layer_score(&next);
            if (s != want)
                fail_msg("summary.tsv's column %zu is the score %s; the score "
                         "table's next layer score is %s",
                         k + 1, got[k], want ? want->name : "none");
            continue;
        }
        int key = exp_key_column(got[k]);
        if (key < 0)
            fail_msg("summary.tsv's column %s is no key column and no score",
                     got[k]);
        const key_def *d = exp_key((key_id)key);
        if (!(d->files & COL_SUMMARY) ||
            !(d->models & RUN_MODEL_BIT(RUN_MODEL_LAYER)))
            fail_msg("summary.tsv has %s, a key column it should not have",
                     got[k]);
    }
    const score_def *left = next_layer_score(&next);
    if (left)
        fail_msg("the layer's score %s is not in summary.tsv", left->name);
}

/* A header exactly as docs/definitions.md lists the file's columns (the
 * published study's first, in its order; a new score or key column is a
 * word of that line), and for summary.tsv as the tables make it. */
static void assert_header(char *line, const char *file)
{
    char *study[64], *got[64], *buf;
    size_t ns = study_columns(file, study, 64, &buf);
    size_t ng = test_split(line, '\t', got, 64);
    for (size_t k = 0; k < ns && k < ng; k++)
        if (strcmp(got[k], study[k]) != 0)
            fail_msg("%s's column %zu is %s; docs/definitions.md says %s",
                     file, k + 1, got[k], study[k]);
    if (ng != ns)
        fail_msg("%s has %zu columns; docs/definitions.md lists %zu (%s "
                 "past them)",
                 file, ng, ns, ng > ns ? got[ns] : study[ng]);
    if (strcmp(file, "summary.tsv") == 0)
        assert_summary_from_tables(got, ng);
    test_slurp_free(buf);
}

/* strtod that must consume the whole field: %.17g reads back exactly. */
static double field_double(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0')
        fail_msg("not a number: '%s'", s);
    return v;
}

/* Every score of the layer in a summary row (header h of n columns, cells
 * v) is the library's value to the bit: %.17g reads back exactly, a
 * feature is written by its name. */
static void assert_scores_are(char *const *h, char *const *v, size_t n,
                              const run_result *res, const pop_t *pop)
{
    size_t next = 0;
    for (const score_def *s; (s = next_layer_score(&next)) != NULL;) {
        const char *cell = v[test_column(h, n, s->name, "summary.tsv")];
        double want = score_value(s, res);
        if (s->kind == SCORE_FEATURE) {
            if (strcmp(cell, pop->names[(size_t)want]) != 0)
                fail_msg("%s: %s, want %s", s->name, cell,
                         pop->names[(size_t)want]);
        } else if (field_double(cell) != want) {
            fail_msg("%s: %s, want %.17g", s->name, cell, want);
        }
    }
}

/* ---- bad input ---- */

typedef struct {
    const char *needle; /* what the one stderr line must name */
    const char *args[10];
} bad_case;

static const bad_case bad_cases[] = {
    /* --write-features first, so that "no file" is a real check: the run
     * was asked to write one. */
    {"--batch-size", {"run", "--write-features", "f", "--batch-size", "0"}},
    {"--batch-size", {"run", "--write-features", "f", "--batch-size", "1"}},
    {"--batch-size", {"run", "--write-features", "f", "--batch-size", "513"}},
    {"--batch-size", {"run", "--write-features", "f", "--batch-size", "abc"}},
    {"--batch-size", {"run", "--write-features", "f", "--batch-size", "-8"}},
    {"--batch-size", {"run", "--write-features", "f", "--batch-size"}},
    {"--momentum", {"run", "--write-features", "f", "--momentum", "0"}},
    {"--momentum", {"run", "--write-features", "f", "--momentum", "1.5"}},
    {"--momentum", {"run", "--write-features", "f", "--momentum", "nan"}},
    {"--momentum", {"run", "--write-features", "f", "--momentum", "-0.1"}},
    {"--order", {"run", "--write-features", "f", "--order", "bogus"}},
    {"--order", {"run", "--write-features", "f", "--order", "sorted:nope"}},
    {"--epochs", {"run", "--write-features", "f", "--epochs", "0"}},
    {"--momentum-weights",
     {"run", "--write-features", "f", "--momentum-weights", "sideways"}},
    {"--variance", {"run", "--write-features", "f", "--variance", "x"}},
    {"--estimator", {"run", "--write-features", "f", "--estimator", "x"}},
    {"--partial", {"run", "--write-features", "f", "--partial", "x"}},
    {"--eps", {"run", "--write-features", "f", "--eps", "0"}},
    {"--bogus-option", {"run", "--write-features", "f", "--bogus-option"}},
    {"extra", {"run", "--write-features", "f", "extra"}},
    {"frobnicate", {"frobnicate"}},
    {"--write-features",
     {"run", "--write-features", "/nonexistent-dir/f.tsv"}},
    {"--write-features", {"run", "--write-features", "sub/missing/f.tsv"}},
    /* The features file is opened, then the outputs file fails: the
     * features temporary must go too. */
    {"--write-outputs",
     {"run", "--write-features", "f", "--write-outputs",
      "sub/missing/o.tsv"}},
    /* The old names are gone: --features once overwrote a user's data. */
    {"--features", {"run", "--features", "f.tsv"}},
    {"--set population.rows=x",
     {"run", "--write-features", "f", "--set", "population.rows=x"}},
    {"--set norows", {"run", "--write-features", "f", "--set", "norows"}},
    {"'bogus' in [population]",
     {"run", "--write-features", "f", "--set", "population.bogus=1"}},
    {"name 'a' given twice",
     {"run", "--write-features", "f", "--set", "population.feature=a 0 1 1",
      "--set", "population.feature=a 0 2 1"}},
    {"--order", {"population", "--order", "bogus"}},
    {"--seed", {"population", "--seed", "x"}},
    {"--bogus-option", {"population", "--bogus-option"}},
};

static void test_bad_input_exits_2_cleanly(void **state)
{
    const char *dir = *state;
    size_t failures = 0;
    for (size_t k = 0; k < sizeof bad_cases / sizeof bad_cases[0]; k++) {
        const bad_case *c = &bad_cases[k];
        cli_out r;
        cli(dir, c->args, &r);
        char names[4][256];
        size_t left = list_dir(dir, names, 4);
        char what[256] = "";
        for (size_t a = 0; c->args[a]; a++) {
            strncat(what, " ", sizeof what - strlen(what) - 1);
            strncat(what, c->args[a], sizeof what - strlen(what) - 1);
        }
        const char *why = NULL;
        if (r.status != 2)
            why = "exit status is not 2";
        else if (r.out_len != 0)
            why = "something on stdout";
        else if (count_char(r.err, '\n') != 1 ||
                 r.err[r.err_len - 1] != '\n')
            why = "stderr is not exactly one line";
        else if (!strstr(r.err, c->needle))
            why = "stderr does not name the culprit";
        else if (left != 0)
            why = "a file was left behind";
        if (why) {
            print_error("bnstudy%s: %s (status %d, needle '%s')\n"
                        "  stdout: %s\n  stderr: %s\n  left: %s\n",
                        what, why, r.status, c->needle, r.out, r.err,
                        left ? names[0] : "-");
            failures++;
        }
        cli_free(&r);
        empty_dir(dir);
    }
    if (failures)
        fail_msg("%zu bad-input cases misbehaved", failures);
}

/* ---- good input ---- */

static void test_run_prints_the_summary(void **state)
{
    const char *dir = *state;
    cli_out r;
    const char *args[] = {"run", NULL};
    cli(dir, args, &r);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.err_len, 0);
    assert_int_equal(count_char(r.out, '\n'), 2);
    char *lines[3];
    assert_int_equal(test_split(r.out, '\n', lines, 3), 3);
    assert_string_equal(lines[2], "");
    char head[4096], *h[64], *v[64];
    snprintf(head, sizeof head, "%s", lines[0]);
    assert_header(head, "summary.tsv");
    size_t n = test_split(lines[0], '\t', h, 64);
    assert_true(n <= 64);
    assert_int_equal(test_split(lines[1], '\t', v, 64), n);
#define CELL(name) v[test_column(h, n, name, "summary.tsv")]

    /* The row carries the library's numbers to the bit. */
    pop_t pop;
    default_pop(&pop);
    run_config cfg;
    run_default_config(&cfg);
    run_result res;
    bn_error err;
    if (run_execute(&pop, &cfg, NULL, &res, &err) != 0)
        fail_msg("run_execute: %s", err.msg);
    /* The defaults docs/experiment-files.md gives. */
    assert_string_equal(CELL("order"), "shuffled");
    assert_string_equal(CELL("batch_size"), "256");
    assert_true(field_double(CELL("momentum")) == 0.9);
    assert_string_equal(CELL("momentum_weights"), "old");
    assert_true(field_double(CELL("new_weight")) == 0.1);
    assert_string_equal(CELL("variance"), "biased");
    assert_string_equal(CELL("estimator"), "ema");
    assert_string_equal(CELL("epochs"), "1");
    assert_string_equal(CELL("updates"), "2"); /* 512 rows / 256 */
    assert_string_equal(CELL("partial"), "drop");
    assert_string_equal(CELL("precise_batches"), "0");
    assert_true(field_double(CELL("eps")) == 1e-5);
    assert_true(field_double(CELL("gamma")) == 1.0);
    assert_true(field_double(CELL("beta")) == 0.0);
    assert_scores_are(h, v, n, &res, &pop);
    /* The four self-checks of every batch pass. */
    assert_string_equal(CELL("props_pass"), CELL("props_total"));
    assert_true(field_double(CELL("props_total")) ==
                (double)(4 * pop.f * res.updates));
    char id[17];
    pop_spec spec;
    assert_int_equal(pop_default_spec(&spec), 0);
    pop_id(&spec, id);
    pop_spec_free(&spec);
    assert_string_equal(CELL("population"), id);
#undef CELL
    run_result_free(&res);
    pop_free(&pop);
    cli_free(&r);
    assert_int_equal(list_dir(dir, NULL, 0), 0);
}

/* `population [--order O --seed S]`: a header, then each row once in the
 * order a run with O and S trains on, values read back exactly. */
static void check_population(const char *dir, const char *const *args,
                             const char *order, uint64_t seed)
{
    cli_out r;
    cli(dir, args, &r);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.err_len, 0);
    pop_t pop;
    default_pop(&pop);
    size_t n = pop.n, f = pop.f, perm[512];
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    if (order) {
        order_spec ord;
        assert_int_equal(order_parse(order, &pop, &ord, NULL), 0);
        assert_int_equal(order_make(&ord, &pop, seed, perm, NULL), 0);
    }
    assert_int_equal(count_char(r.out, '\n'), n + 1);
    char *line = r.out, *v[16];
    for (size_t k = 0; k <= n; k++) {
        char *nl = strchr(line, '\n');
        *nl = '\0';
        assert_int_equal(test_split(line, '\t', v, 16), f + 1);
        if (k == 0) {
            assert_string_equal(v[0], "row");
            for (size_t j = 0; j < f; j++)
                assert_string_equal(v[j + 1], pop.names[j]);
        } else {
            size_t i = perm[k - 1];
            assert_true(field_double(v[0]) == (double)i);
            for (size_t j = 0; j < f; j++)
                if (field_double(v[j + 1]) != pop.x[i * f + j])
                    fail_msg("line %zu, %s: %s, want %.17g", k,
                             pop.names[j], v[j + 1],
                             pop.x[i * f + j]);
        }
        line = nl + 1;
    }
    pop_free(&pop);
    cli_free(&r);
}

static void test_population_prints_the_rows(void **state)
{
    const char *dir = *state;
    const char *plain[] = {"population", NULL};
    check_population(dir, plain, NULL, 0);
    const char *desc[] = {"population", "--order", "sorted-desc:f6", NULL};
    check_population(dir, desc, "sorted-desc:f6", 1);
    const char *shuf[] = {"population", "--order", "shuffled", "--seed", "2",
                          NULL};
    check_population(dir, shuf, "shuffled", 2);
}

static void test_run_writes_the_features_file(void **state)
{
    const char *dir = *state;
    cli_out r;
    const char *args[] = {"run", "--write-features", "F.tsv",
                          "--write-outputs", "o.tsv", "--batch-size", "128",
                          NULL};
    cli(dir, args, &r);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.err_len, 0);
    assert_int_equal(count_char(r.out, '\n'), 2);

    /* Only the two files, no temporaries beside them. */
    char names[8][256];
    size_t left = list_dir(dir, names, 8);
    assert_int_equal(left, 2);
    for (size_t k = 0; k < left; k++)
        assert_true(strcmp(names[k], "F.tsv") == 0 ||
                    strcmp(names[k], "o.tsv") == 0);

    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/F.tsv", dir);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    char *text = test_slurp(path, NULL);
    assert_non_null(text);
    pop_t pop;
    default_pop(&pop);
    run_config cfg;
    run_default_config(&cfg);
    cfg.batch_size = 128;
    run_result res;
    assert_int_equal(run_execute(&pop, &cfg, NULL, &res, NULL), 0);
    size_t f = pop.f;
    assert_int_equal(count_char(text, '\n'), f + 1);
    char *line = text, *h[64], *v[64];
    size_t n = 0;
    for (size_t k = 0; k <= f; k++) {
        char *nl = strchr(line, '\n');
        *nl = '\0';
        if (k == 0) {
            char head[4096];
            snprintf(head, sizeof head, "%s", line);
            assert_header(head, "features.tsv");
            n = test_split(line, '\t', h, 64);
            assert_true(n <= 64);
        } else {
            size_t j = k - 1;
            assert_int_equal(test_split(line, '\t', v, 64), n);
#define CELL(name) v[test_column(h, n, name, "features.tsv")]
            assert_string_equal(CELL("batch_size"), "128");
            assert_string_equal(CELL("feature"), pop.names[j]);
            assert_true(field_double(CELL("true_mean")) == pop.mean[j]);
            assert_true(field_double(CELL("true_var")) == pop.var[j]);
            assert_true(field_double(CELL("running_mean")) ==
                        res.running_mean[j]);
            assert_true(field_double(CELL("running_var")) ==
                        res.running_var[j]);
            assert_true(field_double(CELL("train_eval_rmse")) ==
                        res.train_eval[j]);
#undef CELL
        }
        line = nl + 1;
    }
    test_slurp_free(text);

    /* The outputs file: a header and one line per row trained on. */
    snprintf(path, sizeof path, "%s/o.tsv", dir);
    text = test_slurp(path, NULL);
    assert_non_null(text);
    assert_int_equal(count_char(text, '\n'), pop.n + 1);
    line = strchr(text, '\n');
    *line = '\0';
    assert_int_equal(test_split(text, '\t', v, 32), 1 + 2 * f);
    test_slurp_free(text);
    run_result_free(&res);
    pop_free(&pop);
    cli_free(&r);
}

/* --write-effective: a row per channel of generated maps, its count B H W
 * and its effective count from the definition (docs/convolution.md),
 * worked out here in long double from the maps themselves: the variance
 * of the samples' means s2 gives the batch mean's variance over orderings
 * (s2 / B) (M - B) / (M - 1), and the effective count is the channel's
 * variance over it. */
static void test_run_writes_the_effective_file(void **state)
{
    const char *dir = *state;
    cli_out r;
    const char *args[] = {"run", "--set", "maps.size=5 4", "--set",
                          "maps.samples=12", "--set",
                          "maps.channel=a 0 1 0.5", "--set",
                          "maps.channel=b 1 2 -0.3", "--batch-size", "3",
                          "--order", "shuffled-samples", "--write-effective",
                          "E.tsv", NULL};
    cli(dir, args, &r);
    assert_int_equal(r.status, 0);
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/E.tsv", dir);
    char *text = test_slurp(path, NULL);
    assert_non_null(text);
    const convpop_channel ch[2] = {{.r = 0.5, .mean = 0, .sd = 1},
                                   {.r = -0.3, .mean = 1, .sd = 2}};
    convpop_t cp;
    assert_int_equal(convpop_field(12, 5, 4, 2, ch, 1, &cp, NULL), 0);
    char *lines[4], *h[64], *v[64];
    assert_int_equal(test_split(text, '\n', lines, 4), 4);
    size_t n = test_split(lines[0], '\t', h, 64);
    for (size_t j = 0; j < 2; j++) {
        assert_int_equal(test_split(lines[j + 1], '\t', v, 64), n);
#define CELL(name) v[test_column(h, n, name, "effective.tsv")]
        assert_string_equal(CELL("feature"), j ? "b" : "a");
        assert_string_equal(CELL("count"), "60");
        long double all = 0, sq = 0, means[12];
        for (size_t s = 0; s < 12; s++) {
            means[s] = 0;
            for (size_t i = 0; i < 20; i++)
                means[s] += (long double)cp.x[(s * 20 + i) * 2 + j] / 20;
            all += means[s] / 12;
        }
        for (size_t s = 0; s < 12; s++)
            sq += (means[s] - all) * (means[s] - all) / 12;
        long double var_batch = sq / 3 * (12 - 3) / (12 - 1);
        long double n_eff = (long double)cp.var[j] / var_batch;
        double got = field_double(CELL("n_eff"));
        assert_true(fabsl(got - n_eff) <= 1e-12L * n_eff);
#undef CELL
    }
    convpop_free(&cp);
    test_slurp_free(text);
    cli_free(&r);
}

/* `run --set`: the population's keys reach the run. The first feature
 * replaces the default eight, later ones add to it; the row equals the
 * library's run on the same recipe built by hand. */
static void test_run_sets_the_population(void **state)
{
    const char *dir = *state;
    cli_out r;
    const char *args[] = {"run", "--set", "population.feature=a 0.5 2 0.3",
                          "--set", "population.feature=b -1 0.25 -0.9",
                          "--set", "population.rows=300", "--set",
                          "population.seed=7", "--batch-size", "32", NULL};
    cli(dir, args, &r);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.err_len, 0);
    char *lines[3], *h[64], *v[64];
    assert_int_equal(test_split(r.out, '\n', lines, 3), 3);
    size_t n = test_split(lines[0], '\t', h, 64);
    assert_true(n <= 64);
    assert_int_equal(test_split(lines[1], '\t', v, 64), n);
#define CELL(name) v[test_column(h, n, name, "summary.tsv")]

    pop_spec spec;
    pop_spec_init(&spec);
    spec.n_rows = 300;
    spec.seed = 7;
    assert_int_equal(pop_spec_add(&spec, "a", 0.5, 2, 0.3), 0);
    assert_int_equal(pop_spec_add(&spec, "b", -1, 0.25, -0.9), 0);
    pop_t pop;
    assert_int_equal(pop_generate(&spec, &pop, NULL), 0);
    run_config cfg;
    run_default_config(&cfg);
    cfg.batch_size = 32;
    run_result res;
    assert_int_equal(run_execute(&pop, &cfg, NULL, &res, NULL), 0);
    assert_string_equal(CELL("batch_size"), "32");
    assert_string_equal(CELL("updates"), "9"); /* 300 / 32 updates */
    assert_scores_are(h, v, n, &res, &pop);
    char id[17];
    pop_id(&spec, id);
    assert_string_equal(CELL("population"), id);
#undef CELL
    run_result_free(&res);
    pop_free(&pop);
    pop_spec_free(&spec);
    cli_free(&r);
    assert_int_equal(list_dir(dir, NULL, 0), 0);
}

static void expect_usage(const char *dir, const char *const *args)
{
    cli_out r;
    cli(dir, args, &r);
    if (r.status != 0 || r.err_len != 0 ||
        strncmp(r.out, "usage: bnstudy", 14) != 0)
        fail_msg("bnstudy %s %s: status %d, stdout '%.40s', stderr '%s'",
                 args[0], args[1] ? args[1] : "", r.status, r.out, r.err);
    cli_free(&r);
    assert_int_equal(list_dir(dir, NULL, 0), 0);
}

static void test_help_and_version(void **state)
{
    const char *dir = *state;
    const char *h1[] = {"--help", NULL}, *h2[] = {"-h", NULL};
    const char *h3[] = {"run", "--help", NULL};
    const char *h4[] = {"population", "--help", NULL};
    expect_usage(dir, h1);
    expect_usage(dir, h2);
    expect_usage(dir, h3);
    expect_usage(dir, h4);

    cli_out r;
    const char *ver[] = {"--version", NULL};
    cli(dir, ver, &r);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.err_len, 0);
    /* The version first; the build rows follow (test_provenance.c). */
    assert_memory_equal(r.out, "bnstudy " BNSTUDY_VERSION "\n",
                        strlen("bnstudy " BNSTUDY_VERSION "\n"));
    cli_free(&r);

    /* No command at all is a usage error: the text goes to stderr. */
    const char *none[] = {NULL};
    cli(dir, none, &r);
    assert_int_equal(r.status, 2);
    assert_int_equal(r.out_len, 0);
    assert_non_null(strstr(r.err, "usage:"));
    cli_free(&r);
    assert_int_equal(list_dir(dir, NULL, 0), 0);
}

#define DIR_TEST(fn) cmocka_unit_test_setup_teardown(fn, dir_setup, dir_teardown)

int test_cli_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        DIR_TEST(test_bad_input_exits_2_cleanly),
        DIR_TEST(test_run_prints_the_summary),
        DIR_TEST(test_population_prints_the_rows),
        DIR_TEST(test_run_writes_the_features_file),
        DIR_TEST(test_run_writes_the_effective_file),
        DIR_TEST(test_run_sets_the_population),
        DIR_TEST(test_help_and_version),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
