/*
 * `bnstudy diagnose` as a user meets it: every cause of diag.c's table
 * planted in a population file built here and named by the command (a
 * run on the file, or a checkpoint's statistics with the activations);
 * the replay of a checkpoint against the moving average written out here
 * in long double (PyTorch's rule: the new value's weight, the unbiased
 * batch variance, from the checkpoint's initial values); and its
 * refusals.
 */
#include "helpers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_sort.h>

#include "model/diag.h"
#include "base/pcg32.h"

static char tmpdir[256];

static int group_setup(void **state)
{
    (void)state;
    return test_tmpdir_make(tmpdir, sizeof tmpdir, "diagnose");
}

static int group_teardown(void **state)
{
    (void)state;
    return test_tmpdir_remove(tmpdir);
}

enum { N = 512, F = 5 };
/* m3: mean 3, which the initial 0 pulls at when few updates are left;
 * s: the sort key; tiny: sd 1e-3, which evaluation amplifies; far: mean
 * 1000, which even a small weight on the initial 0 moves; ok: mean 0 and
 * variance 1, like the initial values. */
static const char *const names[F] = {"m3", "s", "tiny", "far", "ok"};
static const double means[F] = {3.0, 0.0, 0.0, 1000.0, 0.0};
static const double sds[F] = {1.0, 1.0, 1e-3, 1.0, 1.0};

static void make_rows(double *x)
{
    gsl_rng *rng = pcg32_gsl_alloc(21, 7);
    assert_non_null(rng);
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < F; j++)
            x[i * F + j] = means[j] + sds[j] * gsl_ran_gaussian(rng, 1.0);
    gsl_rng_free(rng);
}

static void write_csv(const char *path, const double *x);

/* The rows into x and into tmpdir/name. */
static void rows_file(const char *name, double *x)
{
    char path[400];
    make_rows(x);
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    write_csv(path, x);
}

static void write_csv(const char *path, const double *x)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    for (size_t j = 0; j < F; j++)
        fprintf(fp, "%s%s", j ? "," : "", names[j]);
    fputc('\n', fp);
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < F; j++)
            fprintf(fp, "%.17g%c", x[i * F + j], j + 1 < F ? ',' : '\n');
    assert_int_equal(fclose(fp), 0);
}

/* diagnose --tsv with args: the row of each feature, its cells split. */
typedef struct {
    char *text;
    size_t nrow, ncol;
    char *head[32];
    char *cell[16][32];
} report;

static void diagnose(const char *dir, const char *args, report *r)
{
    char *err;
    int rc = test_bnstudy(dir, &r->text, &err, "diagnose --tsv %s", args);
    if (rc != 0)
        fail_msg("diagnose %s: status %d: %s", args, rc, err);
    assert_string_equal(err, "");
    test_slurp_free(err);
    char *lines[18];
    size_t nl = test_split(r->text, '\n', lines, 18);
    assert_true(nl >= 3 && nl <= 18);
    r->ncol = test_split(lines[0], '\t', r->head, 32);
    r->nrow = nl - 2;
    for (size_t k = 0; k < r->nrow; k++)
        assert_int_equal(test_split(lines[k + 1], '\t', r->cell[k], 32),
                         r->ncol);
}

static const char *cell(const report *r, const char *feature,
                        const char *col)
{
    int c = -1;
    for (size_t k = 0; k < r->ncol; k++)
        if (strcmp(r->head[k], col) == 0)
            c = (int)k;
    assert_true(c >= 0);
    for (size_t k = 0; k < r->nrow; k++)
        if (strcmp(r->cell[k][0], feature) == 0)
            return r->cell[k][c];
    fail_msg("no feature %s", feature);
    return NULL;
}

static double number(const report *r, const char *feature, const char *col)
{
    const char *s = cell(r, feature, col);
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end)
        fail_msg("%s %s: not a number: '%s'", feature, col, s);
    return v;
}

static void expect_cause(const report *r, const char *feature,
                         const char *want)
{
    const char *got = cell(r, feature, "cause");
    if (strcmp(got, want) != 0)
        fail_msg("%s: cause %s, want %s (causes %s)", feature, got, want,
                 cell(r, feature, "causes"));
}

static void test_every_cause_from_a_run(void **state)
{
    (void)state;
    double x[N * F];
    rows_file("rows.csv", x);
    report r;

    /* Two updates: the initial 0 keeps 0.81 and holds m3's mean at ~0.6. */
    diagnose(tmpdir, "--population rows.csv --batch-size 256", &r);
    assert_int_equal(r.nrow, F);
    expect_cause(&r, "m3", "few-updates");
    assert_true(number(&r, "m3", "init_weight") == 0.81000000000000005);
    assert_int_equal((int)number(&r, "m3", "updates"), 2);
    test_slurp_free(r.text);

    /* Sorted by s, 64 updates: s's batch means spread about B = 8 times
     * as much as random batches' would. */
    diagnose(tmpdir, "--population rows.csv --batch-size 8 --order sorted:s",
             &r);
    expect_cause(&r, "s", "not-exchangeable");
    assert_true(number(&r, "s", "exchange") > 6.0);
    test_slurp_free(r.text);

    /* Shuffled, 64 updates: tiny is amplified 300 times, far's mean is
     * moved by 0.9^64 x 1000 = 1.2 standard deviations. */
    diagnose(tmpdir, "--population rows.csv --batch-size 8", &r);
    expect_cause(&r, "tiny", "near-constant");
    assert_true(number(&r, "tiny", "amplification") > 100.0);
    expect_cause(&r, "far", "far-from-init");
    /* The run's own buffers are diagnosed: running = replay. */
    assert_string_equal(cell(&r, "far", "running_mean"),
                         cell(&r, "far", "replay_mean"));
    test_slurp_free(r.text);

    /* 48 updates of 32 shuffled rows on a feature like the initial
     * values: nothing is off. */
    diagnose(tmpdir,
             "--population rows.csv --batch-size 32 --epochs 3", &r);
    expect_cause(&r, "ok", "healthy");
    test_slurp_free(r.text);
}

/* The checkpoint's batches: unequal sizes, t0 updates before them. */
static const size_t batch_rows[] = {100, 100, 64, 64, 64, 64, 56};
#define NB (sizeof batch_rows / sizeof *batch_rows)
enum { T0 = 5 };

/* PyTorch's rule over the batches, in long double, from m0 and v0: the
 * new value's weight p, or 1 / (T0 + t) at update t when p is 0
 * (momentum=None); the batch variance unbiased. */
static void ld_torch(const double *x, long double p, const long double *m0,
                     const long double *v0, long double *rm, long double *rv)
{
    for (size_t j = 0; j < F; j++)
        rm[j] = m0[j], rv[j] = v0[j];
    for (size_t k = 0, first = 0; k < NB; first += batch_rows[k], k++)
        for (size_t j = 0; j < F; j++) {
            size_t b = batch_rows[k];
            long double m, v, a = p > 0 ? p : 1.0L / (long double)(T0 + k + 1);
            ld_moments(b, F, x + first * F + j, &m, &v);
            rm[j] = (1.0L - a) * rm[j] + a * m;
            rv[j] = (1.0L - a) * rv[j] + a * v * b / (long double)(b - 1);
        }
}

/* A statistics file as dump_bn_inputs.py writes one, the running means
 * moved by shift standard deviations. */
static void write_stats(const char *name, const long double *rm,
                        const long double *rv, const long double *m0,
                        const long double *v0, long double shift)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("feature\trunning_mean\trunning_var\tnum_batches_tracked\t"
          "initial_mean\tinitial_var\tinitial_batches_tracked\n",
          fp);
    for (size_t j = 0; j < F; j++)
        fprintf(fp, "%s\t%.17Lg\t%.17Lg\t%zu\t%.17Lg\t%.17Lg\t%d\n",
                names[j], rm[j] + shift * sds[j], rv[j], T0 + NB, m0[j],
                v0[j], T0);
    assert_int_equal(fclose(fp), 0);
}

/* The report's replay against rm and rv, and its initial values' weight
 * against w. */
static void check_replay(const report *r, const long double *rm,
                         const long double *rv, long double w)
{
    for (size_t j = 0; j < F; j++) {
        assert_close(number(r, names[j], "replay_mean"), rm[j], 1e-12,
                     fabsl(rm[j]) + sds[j]);
        assert_rel(number(r, names[j], "replay_var"), rv[j], 1e-12);
        assert_int_equal((int)number(r, names[j], "updates"), NB);
        assert_close(number(r, names[j], "init_weight"), w, 1e-14, 1.0);
    }
}

/* A checkpoint: the activations in batches of unequal size and the
 * statistics PyTorch's rule gives from non-default initial values, in
 * long double; then the same statistics moved by half a standard
 * deviation, which no cause of the table explains; then momentum=None
 * resumed, read from a layer file. */
static void test_checkpoint_replay_and_other(void **state)
{
    (void)state;
    char path[400];
    double x[N * F];
    rows_file("act.csv", x);
    long double rm[F], rv[F], m0[F], v0[F];
    /* Initial values of the data's own scale, so that they explain
     * nothing: what is off below is off for no reason of the table. */
    for (size_t j = 0; j < F; j++) {
        m0[j] = means[j];
        v0[j] = sds[j] * sds[j];
    }
    snprintf(path, sizeof path, "%s/act.batches.tsv", tmpdir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("batch\tfirst_row\trows\n", fp);
    for (size_t k = 0, first = 0; k < NB; first += batch_rows[k], k++)
        fprintf(fp, "%zu\t%zu\t%zu\n", k, first, batch_rows[k]);
    assert_int_equal(fclose(fp), 0);

    ld_torch(x, 0.1L, m0, v0, rm, rv);
    for (int shifted = 0; shifted < 2; shifted++) {
        char name[40], args[300];
        snprintf(name, sizeof name, "act%d.stats.tsv", shifted);
        write_stats(name, rm, rv, m0, v0, shifted ? 0.5L : 0.0L);
        snprintf(args, sizeof args,
                 "--stats %s --activations act.csv --batches "
                 "act.batches.tsv --momentum 0.1 --momentum-weights new "
                 "--variance unbiased",
                 name);
        report r;
        diagnose(tmpdir, args, &r);
        check_replay(&r, rm, rv, powl(0.9L, (long double)NB));
        for (size_t j = 0; j < F; j++) {
            double diff = number(&r, names[j], "replay_diff");
            assert_true(shifted ? diff > 0.4 : diff < 1e-12);
        }
        if (shifted)
            expect_cause(&r, "ok", "other");
        test_slurp_free(r.text);
    }

    /* momentum=None resumed after T0 batches: the initial values keep
     * T0 / (T0 + T). */
    ld_torch(x, 0.0L, m0, v0, rm, rv);
    write_stats("cum.stats.tsv", rm, rv, m0, v0, 0.0L);
    snprintf(path, sizeof path, "%s/cum.layer.tsv", tmpdir);
    test_write_file(path, "key\tvalue\nmomentum\tNone\neps\t1e-05\n");
    report r;
    diagnose(tmpdir, "--stats cum.stats.tsv --activations act.csv --batches "
                     "act.batches.tsv --layer cum.layer.tsv", &r);
    check_replay(&r, rm, rv, (long double)T0 / (long double)(T0 + NB));
    test_slurp_free(r.text);

    /* The table for people says whether the replay agrees. */
    char *out, *err;
    assert_int_equal(test_bnstudy(tmpdir, &out, &err,
                                  "diagnose --stats act1.stats.tsv "
                                  "--activations act.csv --batches "
                                  "act.batches.tsv --momentum 0.1 "
                                  "--momentum-weights new --variance "
                                  "unbiased"),
                     0);
    assert_non_null(strstr(out, "does NOT"));
    assert_non_null(strstr(out, "\nother ("));
    assert_non_null(strstr(out, diag_cause_get(DIAG_OTHER)->words));
    test_slurp_free(out);
    test_slurp_free(err);
}

/* One rule for a recording's batches (diag_exchange_means): rows grouped
 * by s, batch by batch in a zigzag of s's blocks (no smooth trend to
 * explain them), are not-exchangeable as a checkpoint's activations, but
 * the same rows with a recording's layer file (BNRecorder's `recorded`
 * row) were taken under weights training moved: no exchange test, as
 * the folder form runs none on a recording. */
static void test_recording_runs_no_exchange_test(void **state)
{
    (void)state;
    enum { B = 64, NBZ = N / B };
    static const size_t zigzag[NBZ] = {0, 7, 1, 6, 2, 5, 3, 4};
    double x[N * F], grouped[N * F];
    size_t order[N];
    make_rows(x);
    /* The rows by s, then s's blocks of B in the zigzag's order. */
    gsl_sort_index(order, x + 1, F, N);
    for (size_t k = 0; k < NBZ; k++)
        for (size_t i = 0; i < B; i++)
            memcpy(grouped + (k * B + i) * F,
                   x + order[zigzag[k] * B + i] * F, F * sizeof *x);
    char path[400];
    snprintf(path, sizeof path, "%s/zigzag.csv", tmpdir);
    write_csv(path, grouped);
    snprintf(path, sizeof path, "%s/zigzag.stats.tsv", tmpdir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("running_mean\trunning_var\tnum_batches_tracked\n", fp);
    for (size_t j = 0; j < F; j++)
        fprintf(fp, "%.17g\t%.17g\t%d\n", means[j], sds[j] * sds[j], NBZ);
    assert_int_equal(fclose(fp), 0);
    static const char *const files[2] = {"dumped", "recorded"};
    for (int rec = 0; rec < 2; rec++) {
        snprintf(path, sizeof path, "%s/%s.layer.tsv", tmpdir, files[rec]);
        test_write_file(path, rec ? "key\tvalue\nmomentum\t0.1\neps\t1e-05\n"
                                    "recorded\ttraining-mode calls, which "
                                    "update the running statistics\n"
                                  : "key\tvalue\nmomentum\t0.1\n"
                                    "eps\t1e-05\n");
        char args[300];
        snprintf(args, sizeof args,
                 "--stats zigzag.stats.tsv --activations zigzag.csv "
                 "--batch-size %d --layer %s.layer.tsv",
                 B, files[rec]);
        report r;
        diagnose(tmpdir, args, &r);
        if (rec) {
            assert_string_equal(cell(&r, "s", "exchange"), "nan");
            assert_string_not_equal(cell(&r, "s", "cause"),
                                    "not-exchangeable");
        } else {
            expect_cause(&r, "s", "not-exchangeable");
        }
        test_slurp_free(r.text);
    }
}

/* A refusal: status 2, one line naming what is wrong, nothing on stdout. */
static void expect_refused(const char *args, const char *needle)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "diagnose %s", args);
    test_expect_refused(tmpdir, cmd, needle);
}

static void test_refusals(void **state)
{
    (void)state;
    char path[400];
    double x[N * F];
    rows_file("act.csv", x);
    snprintf(path, sizeof path, "%s/two.stats.tsv", tmpdir);
    test_write_file(path, "running_mean\trunning_var\tnum_batches_tracked\n"
                          "0\t1\t3\n0\t1\t3\n");
    snprintf(path, sizeof path, "%s/bad.stats.tsv", tmpdir);
    test_write_file(path, "running_mean\trunning_var\tnum_batches_tracked\n"
                          "0\t1\t3\n0\tnan\t3\n0\t1\t3\n0\t1\t3\n0\t1\t3\n");
    snprintf(path, sizeof path, "%s/five.stats.tsv", tmpdir);
    test_write_file(path, "running_mean\trunning_var\tnum_batches_tracked\n"
                          "0\t1\t3\n0\t1\t3\n0\t1\t3\n0\t1\t3\n0\t1\t3\n");
    snprintf(path, sizeof path, "%s/gap.batches.tsv", tmpdir);
    test_write_file(path, "first_row\trows\n0\t100\n101\t411\n");
    snprintf(path, sizeof path, "%s/x.layer.tsv", tmpdir);
    test_write_file(path, "key\tvalue\nmomentum\t0.1\neps\t1e-05\n");
    snprintf(path, sizeof path, "%s/zero.layer.tsv", tmpdir);
    test_write_file(path, "key\tvalue\nmomentum\t0.0\neps\t1e-05\n");
    /* Momentum 0: nothing moves, so nothing to replay; a folder names
     * such a layer frozen. */
    expect_refused("--stats five.stats.tsv --activations act.csv "
                   "--batch-size 8 --layer zero.layer.tsv",
                   "zero.layer.tsv: momentum 0.0: the buffers never move");
    expect_refused("--stats five.stats.tsv", "--activations");
    expect_refused("--stats five.stats.tsv --activations act.csv",
                   "--batches or --batch-size");
    expect_refused("--stats two.stats.tsv --activations act.csv "
                   "--batch-size 8",
                   "2 features");
    expect_refused("--stats bad.stats.tsv --activations act.csv "
                   "--batch-size 8",
                   "bad.stats.tsv:3: column running_var");
    expect_refused("--stats five.stats.tsv --activations act.csv "
                   "--batches gap.batches.tsv",
                   "gap.batches.tsv:3");
    expect_refused("--stats five.stats.tsv --activations act.csv "
                   "--batch-size 8 --order sorted",
                   "--order describes a run");
    expect_refused("--stats five.stats.tsv --activations act.csv "
                   "--batch-size 8 --layer x.layer.tsv --momentum 0.5",
                   "--momentum: the layer's settings are in x.layer.tsv");
    expect_refused("--stats five.stats.tsv --activations act.csv "
                   "--batch-size 8 --estimator precise",
                   "precise");
    expect_refused("--dump x --stats five.stats.tsv", "--dump");
    expect_refused("--dump nowhere", "nowhere.stats.tsv");
    expect_refused("--population act.csv --batch-size 600", "512 rows");
}

/* The replay's tolerance follows the buffers' dtype: a feature constant
 * at 0 whose running variance is a float32 denormal while the replay
 * gives exactly 0, and a feature of mean 1000 whose running mean carries
 * one float32 rounding (2^-24 of itself, 6e-5 of its spread), reproduce
 * the checkpoint to float32 rounding, not to float64's. The replay is
 * written out here in long double, from initial values 0, 0 and 1000, 1. */
static void test_replay_precision(void **state)
{
    (void)state;
    enum { R = 256, B = 64 };
    char path[400];
    gsl_rng *rng = pcg32_gsl_alloc(4, 1);
    snprintf(path, sizeof path, "%s/p.csv", tmpdir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("z,big\n", fp);
    long double xs[R];
    for (size_t i = 0; i < R; i++) {
        xs[i] = 1000.0L + (long double)gsl_ran_gaussian(rng, 1.0);
        fprintf(fp, "0,%.17Lg\n", xs[i]);
    }
    assert_int_equal(fclose(fp), 0);
    gsl_rng_free(rng);
    /* Read back as the program reads them: doubles. */
    long double rm = 1000.0L, rv = 1.0L;
    for (size_t k = 0; k < R / B; k++) {
        long double m = 0.0L, v = 0.0L;
        for (size_t i = k * B; i < (k + 1) * B; i++)
            m += (long double)(double)xs[i] / B;
        for (size_t i = k * B; i < (k + 1) * B; i++)
            v += ((double)xs[i] - m) * ((double)xs[i] - m) / (B - 1);
        rm = 0.9L * rm + 0.1L * m;
        rv = 0.9L * rv + 0.1L * v;
    }
    snprintf(path, sizeof path, "%s/p.stats.tsv", tmpdir);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fprintf(fp, "feature\trunning_mean\trunning_var\tnum_batches_tracked\t"
                "initial_mean\tinitial_var\tinitial_batches_tracked\n"
                "z\t0\t1e-45\t%d\t0\t0\t0\nbig\t%.17Lg\t%.17Lg\t%d\t1000\t"
                "1\t0\n",
            R / B, rm * (1.0L + 0x1p-24L), rv, R / B);
    assert_int_equal(fclose(fp), 0);
    static const char *const dtypes[2] = {"float32", "float64"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s.layer.tsv", tmpdir, dtypes[k]);
        char text[200];
        snprintf(text, sizeof text,
                 "key\tvalue\nmomentum\t0.1\neps\t1e-05\ndtype\t%s\n",
                 dtypes[k]);
        test_write_file(path, text);
        char *out, *err;
        assert_int_equal(test_bnstudy(tmpdir, &out, &err,
                                      "diagnose --stats p.stats.tsv "
                                      "--activations p.csv --batch-size %d "
                                      "--layer %s.layer.tsv",
                                      B, dtypes[k]),
                         0);
        if (k == 0)
            assert_non_null(strstr(out, "reproduces them to float32 "
                                        "rounding"));
        else
            assert_non_null(strstr(out, "does NOT"));
        test_slurp_free(out);
        test_slurp_free(err);
    }
}

/* The first line of diagnose ARGS. */
static void expect_verdict(const char *args, const char *want)
{
    char *out, *err;
    int rc = test_bnstudy(tmpdir, &out, &err, "diagnose %s", args);
    if (rc != 0 || strncmp(out, want, strlen(want)) != 0)
        fail_msg("diagnose %s: status %d, want '%s' first, got '%.120s' "
                 "(%s)",
                 args, rc, want, out, err);
    test_slurp_free(out);
    test_slurp_free(err);
}

/* A classifier run diagnosed with the same table: one epoch of 16
 * batches leaves the initial values 0.99^16 = 0.85 (the default momentum
 * 0.99, Keras's), which on raw features far from 0 and 1 hold the
 * hidden layer's statistics off (few-updates), and on the embedded
 * standardised ones, whose hidden activations sit near 0 and 1, move a
 * few features a little and no accuracy (immaterial: healthy); frozen
 * after 2 of 20 epochs it tracked 32 of the 320 steps; 40 epochs of
 * batches of 128 leave nothing to name. */
static void test_classifier(void **state)
{
    (void)state;
    const char *clf = "--type classifier --set population.classes=3 ";
    char args[300];
    snprintf(args, sizeof args, "%s--set 'population.feature=a 20 4 0' "
             "--set 'population.feature=b 30 6 0.2' --batch-size 32 "
             "--epochs 1", clf);
    expect_verdict(args, "verdict: few-updates, in 1 of 1 layer, first bn\n");
    snprintf(args, sizeof args, "%s--batch-size 32 --epochs 1", clf);
    expect_verdict(args, "verdict: healthy\n");
    snprintf(args, sizeof args, "%s--batch-size 32 --epochs 20 "
                                "--freeze-after 2", clf);
    expect_verdict(args, "verdict: frozen, in 1 of 1 layer, first bn\n");
    char *out, *err;
    assert_int_equal(test_bnstudy(tmpdir, &out, &err, "diagnose %s", args), 0);
    assert_non_null(strstr(out, "\nbn     classifier         16       32  "
                                "frozen"));
    test_slurp_free(out);
    test_slurp_free(err);
    snprintf(args, sizeof args, "%s--batch-size 128 --epochs 40", clf);
    expect_verdict(args, "verdict: healthy\n");
}

/* run --layer FILE is the run with the file's settings written out. */
static void test_run_layer(void **state)
{
    (void)state;
    char path[400];
    double x[N * F];
    rows_file("act.csv", x);
    snprintf(path, sizeof path, "%s/m.layer.tsv", tmpdir);
    test_write_file(path, "key\tvalue\nmomentum\t0.3\neps\t0.001\n"
                          "dtype\tfloat32\n");
    snprintf(path, sizeof path, "%s/none.layer.tsv", tmpdir);
    test_write_file(path, "key\tvalue\nmomentum\tNone\neps\t1e-05\n");
    snprintf(path, sizeof path, "%s/noeps.layer.tsv", tmpdir);
    test_write_file(path, "key\tvalue\nmomentum\t0.3\n");
    static const char *const pairs[][2] = {
        {"--layer m.layer.tsv",
         "--momentum 0.3 --momentum-weights new --variance unbiased "
         "--eps 0.001"},
        {"--layer none.layer.tsv",
         "--estimator cumulative --variance unbiased --eps 1e-05"},
    };
    for (size_t k = 0; k < 2; k++) {
        char *a, *b, *ea, *eb;
        assert_int_equal(test_bnstudy(tmpdir, &a, &ea,
                                      "run --population act.csv "
                                      "--batch-size 32 %s",
                                      pairs[k][0]),
                         0);
        assert_int_equal(test_bnstudy(tmpdir, &b, &eb,
                                      "run --population act.csv "
                                      "--batch-size 32 %s",
                                      pairs[k][1]),
                         0);
        assert_string_equal(a, b);
        test_slurp_free(a);
        test_slurp_free(b);
        test_slurp_free(ea);
        test_slurp_free(eb);
    }
    char *out, *err;
    assert_int_equal(test_bnstudy(tmpdir, &out, &err,
                                  "run --population act.csv --layer "
                                  "m.layer.tsv --momentum 0.5"),
                     2);
    assert_non_null(strstr(err, "--momentum: the layer's settings are in "
                                "m.layer.tsv"));
    test_slurp_free(out);
    test_slurp_free(err);
    assert_int_equal(test_bnstudy(tmpdir, &out, &err,
                                  "run --population act.csv --layer "
                                  "noeps.layer.tsv"),
                     2);
    assert_non_null(strstr(err, "noeps.layer.tsv: no eps row"));
    assert_string_equal(out, "");
    test_slurp_free(out);
    test_slurp_free(err);
}

int test_diagnose_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_cause_from_a_run),
        cmocka_unit_test(test_checkpoint_replay_and_other),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_classifier),
        cmocka_unit_test(test_run_layer),
        cmocka_unit_test(test_replay_precision),
        cmocka_unit_test(test_recording_runs_no_exchange_test),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("diagnose", tests, group_setup,
                                       group_teardown);
}
