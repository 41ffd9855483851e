/*
 * Experiment files, the sweep and the claims verifier (the study as one
 * command): good and bad INI files, a sweep's rows against single `run`
 * invocations of the same configurations, `make study-results` into a
 * temporary directory against the committed results/, and the verifier
 * failing on doctored results.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "study/exp.h"
#include "groups.h"
#include "helpers.h"

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    return test_tmpdir_make(tmpdir, sizeof tmpdir, "study");
}

static int teardown(void **state)
{
    (void)state;
    return test_tmpdir_remove(tmpdir);
}

#define write_file test_write_file
#define shell test_shell

static void ini_good(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/good.ini", tmpdir);
    write_file(path,
               "; every section, lists with spaces, commas and ranges\n"
               "[experiment]\n"
               "description = a test\n"
               "table = order batch_size stats_err\n"
               "[population]\n"
               "rows = 100\n"
               "seed = 7\n"
               "feature = a 1 2 0.5\n"
               "feature = b -1 0.5 0\n"
               "[layer]\n"
               "gamma = 2\n"
               "beta = -1 ; inline comment\n"
               "eps = 1e-3\n"
               "momentum = 0.9, 0.99\n"
               "momentum_weights = old new\n"
               "variance = unbiased\n"
               "estimator = ema cumulative\n"
               "[sweep]\n"
               "batch_size = 10 20\n"
               "order = shuffled sorted:b sorted-desc:a\n"
               "seed = 3..5\n"
               "epochs = 2\n"
               "partial = keep\n"
               "precise_batches = 0\n");
    exp_t *e = malloc(sizeof *e);
    bn_error err;
    char *sets[] = {"layer.eps=0.5", "sweep.epochs=1 3"};
    exp_overrides ov = {sets, 2, NULL, NULL, NULL};
    int rc = exp_load(e, path, &ov, &err);
    if (rc != 0)
        fail_msg("%s", err.msg);
    assert_string_equal(e->stem, "good");
    assert_int_equal(e->pop.n_rows, 100);
    assert_int_equal(e->pop.n_features, 2);
    assert_string_equal(e->pop.features[1].name, "b");
    assert_true(e->pop.features[0].sd == 2.0);
    assert_true(e->n[KEY_EPS] == 1 && e->v[KEY_EPS][0].r == 0.5); /* the override won */
    assert_int_equal(e->n[KEY_SEED], 3);
    assert_int_equal(e->v[KEY_SEED][2].u, 5);
    /* 2 momenta x 2 conventions x 1 x 2 estimators x 2 B x 3 orders x 3
     * seeds x 2 epochs x 1 x 1 */
    assert_int_equal(exp_count(e), 2 * 2 * 2 * 2 * 3 * 3 * 2);
    run_config cfg;
    exp_config(e, 0, &cfg);
    assert_int_equal(cfg.batch_size, 10);
    assert_string_equal(cfg.order.name, "shuffled");
    assert_int_equal(cfg.seed, 3);
    assert_true(cfg.layer.gamma == 2.0 && cfg.layer.beta == -1.0);
    assert_int_equal(cfg.partial, RUN_PARTIAL_KEEP);
    exp_config(e, 1, &cfg); /* batch size varies fastest */
    assert_int_equal(cfg.batch_size, 20);
    exp_config(e, exp_count(e) - 1, &cfg);
    assert_int_equal(cfg.layer.estimator, BN_EST_CUMULATIVE);
    assert_string_equal(cfg.order.name, "sorted-desc:a");
    exp_free(e);
    free(e);
}

/* The complete example docs/experiment-files.md documents the format
 * with must load. */
static void readme_example_loads(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/readme-example.ini", tmpdir);
    assert_int_equal(shell("awk '/^```ini$/{f=1;next} /^```$/{f=0} f' "
                           "docs/experiment-files.md > %s && test -s %s",
                           path, path),
                     0);
    exp_t *e = malloc(sizeof *e);
    bn_error err;
    if (exp_load(e, path, NULL, &err) != 0)
        fail_msg("docs/experiment-files.md's example: %s", err.msg);
    assert_true(exp_count(e) > 1);
    exp_free(e);
    free(e);
}

static void ini_bad(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int line;
        const char *says;
    } cases[] = {
        {"[sweep]\nbatch_size = 8 x16\n", 2, "not an integer"},
        {"[layer]\nmomentum = 0.9 abc\n", 2, "momentum"},
        {"[layer]\nmomentun = 0.9\n", 2, "unknown key 'momentun'"},
        {"[layer\nmomentum = 0.9\n", 1, "section header"},
        {"\n[sweeps]\n", 2, "unknown section [sweeps]"},
        {"[sweep]\nseed = 1\nseed = 2\n", 3, "already given on line 2"},
        {"[sweep]\nbatch_size = 8 600\n", 2, "batch_size 600: batch size must be from 2 to the population's 512 rows"},
        {"[sweep]\nbatch_size = 0\n", 2, "values must be from 1"},
        {"[sweep]\nbatch_size = 1\n", 2, "batch size must be from 2 to the population's 512 rows, got 1"},
        {"[layer]\nmomentum = 1.5\n", 2, "(0, 1]"},
        {"[layer]\nmomentum = nan\n", 2, "(0, 1]"},
        {"[sweep]\norder = sorted:nope\n", 2, "nope"},
        {"[population]\nfeature = a 1 2\n", 2, "NAME MEAN SD RHO"},
        {"[population]\nrows = 1\n", 2, "rows"},
        {"[sweep]\nepochs = 0\n", 2, "epochs"},
        {"[layer]\nvariance = sideways\n", 2, "sideways"},
        {"[experiment]\ntable = batch_size nosuch\n", 2, "nosuch"},
        {"momentum = 0.9\n", 1, "outside any section"},
        {"[sweep]\nseed = 5..2\n", 2, "range"},
        {"[layer]\nmomentum = 0.9 1\nestimator = ema ema-debiased\n", 2,
         "ema-debiased needs"},
        {"[sweep]\ndrift = step\n", 2, "step:T0 or ramp:T0:T1 with T0 < T1"},
        {"[sweep]\ndrift = ramp:5:3\n", 2, "'ramp:5:3'"},
        {"[maps]\nsize = 7 7\nimage = 8 8\n", 2, "one or the other"},
        {"[maps]\nsize = 7\n", 2, "expected two integers H W"},
        {"[maps]\nsize = 3 3\n", 2, "needs at least one channel line"},
        {"[maps]\nsize = 3 3\nchannel = a 0 1 2\n", 3, "R in [-1, 1]"},
        {"[maps]\nsize = 3 3\nchannel = a 0 1 0\nchannel = a 0 1 0\n", 4,
         "name 'a' given twice"},
        {"[maps]\nfilters = 3\n", 2, "filters applies to [maps] image"},
        {"[maps]\nsize = 3 3\nsamples = 4\nchannel = a 0 1 0\n"
         "[sweep]\norder = shuffled\nbatch_size = 2\n",
         6, "would cut feature maps apart"},
        {"[maps]\nsize = 3 3\nsamples = 4\nchannel = a 0 1 0\n"
         "[sweep]\norder = shuffled-samples\nbatch_size = 5\n",
         7, "population's 4 samples, got 5"},
        {"[evaluation]\noffset = x\n", 2, "not a finite number"},
    };
    char path[300], out[300];
    snprintf(path, sizeof path, "%s/bad.ini", tmpdir);
    snprintf(out, sizeof out, "%s/bad-out", tmpdir);
    const char *bn = test_env("BNSTUDY", "./bnstudy");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_file(path, cases[i].text);
        exp_t *e = malloc(sizeof *e);
        bn_error err;
        assert_int_equal(exp_load(e, path, NULL, &err), -1);
        exp_free(e);
    free(e);
        char want[400];
        snprintf(want, sizeof want, "%s:%d: ", path, cases[i].line);
        if (strncmp(err.msg, want, strlen(want)) != 0 ||
            !strstr(err.msg, cases[i].says))
            fail_msg("case %zu: got '%s', want '%s...%s'", i, err.msg, want,
                     cases[i].says);
        /* Through the command: exit 2, one line on stderr, no output. */
        char errf[320];
        snprintf(errf, sizeof errf, "%s/stderr", tmpdir);
        assert_int_equal(shell("%s sweep %s --out %s >%s/stdout 2>%s", bn,
                               path, out, tmpdir, errf),
                         2);
        char *msg = test_slurp(errf, NULL);
        assert_non_null(msg);
        assert_non_null(strstr(msg, want));
        size_t lines = 0;
        for (const char *c = msg; *c; c++)
            lines += *c == '\n';
        assert_int_equal(lines, 1);
        test_slurp_free(msg);
        struct stat st;
        assert_int_not_equal(stat(out, &st), 0); /* nothing in --out */
    }
    /* A missing file, and an override that does not parse. */
    exp_t *e = malloc(sizeof *e);
    bn_error err;
    snprintf(path, sizeof path, "%s/missing.ini", tmpdir);
    assert_int_equal(exp_load(e, path, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "missing.ini: cannot open"));
    exp_free(e);
    char *sets[] = {"layer.momentum=2"};
    exp_overrides ov = {sets, 1, NULL, NULL, NULL};
    assert_int_equal(exp_load(e, "experiments/headline.ini", &ov, &err), -1);
    assert_non_null(strstr(err.msg, "--set layer.momentum=2"));
    exp_free(e);
    free(e);
    assert_int_equal(shell("%s sweep %s --out %s 2>/dev/null", bn, path, out),
                     2);
}

/* Each sweep row must be the row `bnstudy run` prints for the same
 * settings, rebuilt from the row's own columns. */
static void sweep_equals_run(void **state)
{
    (void)state;
    char ini[300];
    snprintf(ini, sizeof ini, "%s/mix.ini", tmpdir);
    write_file(ini, "[layer]\nmomentum = 0.9 0.99\nmomentum_weights = old new\n"
                    "variance = biased unbiased\n"
                    "estimator = ema ema-debiased cumulative precise\n"
                    "[sweep]\nbatch_size = 8 100 256\n"
                    "order = shuffled sorted sorted-desc:f6\nseed = 1 9\n"
                    "epochs = 1 2\npartial = keep\n");
    const char *bn = test_env("BNSTUDY", "./bnstudy");
    assert_int_equal(shell("%s sweep %s --out %s/mix-out --jobs 2", bn, ini,
                           tmpdir),
                     0);
    char path[400];
    snprintf(path, sizeof path, "%s/mix-out/mix/summary.tsv", tmpdir);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char head[4096], line[4096], cmd[1024], got[4096], *h[64];
    assert_non_null(fgets(head, sizeof head, fp));
    *strchr(head, '\n') = '\0';
    size_t nh = test_split(head, '\t', h, 64);
    assert_true(nh <= 64);
    size_t rows = 0;
    while (fgets(line, sizeof line, fp)) {
        char copy[4096], *f[64];
        strcpy(copy, line);
        *strchr(copy, '\n') = '\0';
        assert_int_equal(test_split(copy, '\t', f, 64), nh);
#define CELL(name) f[test_column(h, nh, name, "summary.tsv")]
        snprintf(cmd, sizeof cmd,
                 "%s run --order %s --seed %s --batch-size %s --momentum %s "
                 "--momentum-weights %s --variance %s --epochs %s "
                 "--estimator %s --partial keep | tail -n 1",
                 bn, CELL("order"), CELL("seed"), CELL("batch_size"),
                 CELL("momentum"), CELL("momentum_weights"),
                 CELL("variance"), CELL("epochs"), CELL("estimator"));
#undef CELL
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        assert_non_null(fgets(got, sizeof got, p));
        assert_int_equal(pclose(p), 0);
        /* Everything after the experiment column must be the same bytes. */
        if (strcmp(strchr(got, '\t'), strchr(line, '\t')) != 0)
            fail_msg("sweep row %zu differs from run:\n%s%s", rows, line, got);
        rows++;
    }
    fclose(fp);
    assert_int_equal(rows, 2 * 2 * 2 * 4 * 3 * 3 * 2 * 2);
}

/* The build row of a manifest of dir, in buf ("" when absent). */
static void src_tree_of(const char *dir, char *buf, size_t cap)
{
    char path[400], line[512];
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    buf[0] = '\0';
    while (fgets(line, sizeof line, fp))
        if (strncmp(line, "build.src_tree\t", 15) == 0)
            snprintf(buf, cap, "%s", line + 15);
    fclose(fp);
}

/* A sweep whose set is the target's, byte for byte but for the manifest's
 * build rows, keeps the target, manifest and all; any other difference
 * replaces it. */
static void unchanged_set_is_kept(void **state)
{
    (void)state;
    const char *bn = test_env("BNSTUDY", "./bnstudy");
    char dir[300], row[512];
    snprintf(dir, sizeof dir, "%s/kept/headline", tmpdir);
    assert_int_equal(shell("%s sweep experiments/headline.ini --out %s/kept",
                           bn, tmpdir),
                     0);
    /* As if an older build, or another compiler, had written it. */
    assert_int_equal(shell("sed -i 's/^build\\.src_tree\t.*/build.src_tree"
                           "\tolder/' %s/manifest.tsv",
                           dir),
                     0);
    assert_int_equal(shell("%s sweep experiments/headline.ini --out %s/kept",
                           bn, tmpdir),
                     0);
    src_tree_of(dir, row, sizeof row);
    assert_string_equal(row, "older\n");
    /* A result that differs in one byte is no longer the same set. */
    assert_int_equal(shell("sed -i 's/0\\.8100/0.8101/' %s/table.md", dir),
                     0);
    assert_int_equal(shell("%s sweep experiments/headline.ini --out %s/kept",
                           bn, tmpdir),
                     0);
    src_tree_of(dir, row, sizeof row);
    assert_string_not_equal(row, "older\n");
    assert_int_equal(shell("grep -q '0\\.8101' %s/table.md", dir), 1);
    /* Nor is a set missing a file. */
    assert_int_equal(shell("sed -i 's/^build\\.src_tree\t.*/build.src_tree"
                           "\tolder/' %s/manifest.tsv && rm %s/features.tsv",
                           dir, dir),
                     0);
    assert_int_equal(shell("%s sweep experiments/headline.ini --out %s/kept",
                           bn, tmpdir),
                     0);
    src_tree_of(dir, row, sizeof row);
    assert_string_not_equal(row, "older\n");
}

/* The committed results are what the code makes of experiments/: every
 * experiment, or those BN_STUDY_EXPERIMENTS names (the sanitizer pass
 * runs the quick ones), each compared with its committed set. */
static void study_reproduces_results(void **state)
{
    (void)state;
    char out[300];
    const char *only = test_env("BN_STUDY_EXPERIMENTS", "");
    const char *bn = test_env("BNSTUDY", "./bnstudy");
    snprintf(out, sizeof out, "%s/study", tmpdir);
    int rc;
    if (!only[0]) {
        /* Under make sanitize, MAKEFLAGS names the sanitized build. */
        assert_int_equal(shell("make --no-print-directory -s study-numbers "
                               "RESULTS=%s >%s.log 2>&1",
                               out, out),
                         0);
        rc = shell("bash scripts/compare-results.sh results %s", out);
    } else {
        /* A part of the study has no claims.txt: its claims read the
         * other experiments too. */
        rc = shell("for e in %s; do %s sweep experiments/$e.ini --out %s "
                   ">>%s.log 2>&1 && bash scripts/compare-results.sh "
                   "results/$e %s/$e || exit 1; done",
                   only, bn, out, out, out);
    }
    if (rc != 0)
        fail_msg("results/ differs from a fresh `make study-numbers` "
                 "(see the diff above)");
}

static void verify_fails_on_doctored_results(void **state)
{
    (void)state;
    const char *bn = test_env("BNSTUDY", "./bnstudy");
    char dir[300];
    snprintf(dir, sizeof dir, "%s/doctored", tmpdir);
    assert_int_equal(shell("rm -rf %s && cp -r results %s", dir, dir), 0);
    assert_int_equal(shell("%s verify %s >/dev/null", bn, dir), 0);
    /* Make the running statistics at B 256 as good as at B 8, written as
     * bnstudy writes a number: any other text is no result of its. */
    assert_int_equal(
        shell("awk 'BEGIN{FS=OFS=\"\\t\"} NR>1 && $4==256 "
              "{$13=sprintf(\"%%.17g\", 0.2)} {print}' "
              "%s/batch-size/summary.tsv > %s/s && mv %s/s "
              "%s/batch-size/summary.tsv",
              dir, dir, dir, dir),
        0);
    /* And nudge one running variance of the momentum sweep's p = 0.1 run:
     * the conventions must agree to the bit. */
    assert_int_equal(
        shell("awk 'BEGIN{FS=OFS=\"\\t\"} NR>1 && $4==256 && $5==0.1 && "
              "$10==\"f6\" {$14=sprintf(\"%%.17g\", $14+1e-12)} {print}' "
              "%s/momentum/features.tsv > %s/f && mv %s/f "
              "%s/momentum/features.tsv",
              dir, dir, dir, dir),
        0);
    assert_int_equal(shell("%s verify %s > %s/verify.txt", bn, dir, dir), 1);
    char path[400];
    snprintf(path, sizeof path, "%s/verify.txt", dir);
    char *text = test_slurp(path, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "FAIL ratio-256-8"));
    assert_non_null(strstr(text, "FAIL stats-err-grows"));
    assert_non_null(strstr(text, "PASS conventions-agree-mean"));
    assert_non_null(strstr(text, "FAIL conventions-agree-var"));
    assert_non_null(strstr(text, "PASS init-weight"));
    assert_non_null(strstr(text, " passed, 3 failed\n"));
    test_slurp_free(text);
    /* Missing results are an error, not a failed claim. */
    assert_int_equal(shell("rm -rf %s/headline && %s verify %s >/dev/null "
                           "2>&1",
                           dir, bn, dir),
                     2);
}

int test_study_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ini_good),
        cmocka_unit_test(readme_example_loads),
        cmocka_unit_test(ini_bad),
        cmocka_unit_test(sweep_equals_run),
        cmocka_unit_test(verify_fails_on_doctored_results),
        cmocka_unit_test(unchanged_set_is_kept),
        cmocka_unit_test(study_reproduces_results),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("study", tests, setup, teardown);
}
