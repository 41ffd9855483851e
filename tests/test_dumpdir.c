/*
 * `bnstudy diagnose DIR` on dump folders written here, as
 * scripts/dump_bn_inputs.py writes them (docs/diagnose.md, "The dump"):
 * Gaussian rows drawn here, the running statistics from this file's own
 * moving average (PyTorch's rule, in long double), every fresh statistic
 * from long-double moments; one folder per cause the folder alone can
 * show, each named in the verdict's first line with the fix the folder's
 * scores support; recordings (BNRecorder's folders) whose counts alone
 * show a frozen layer; and the refusals, one line naming the file.
 */
#include "helpers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "base/pcg32.h"
#include "study/report.h"

static char tmpdir[256];

static int group_setup(void **state)
{
    (void)state;
    return test_tmpdir_make(tmpdir, sizeof tmpdir, "dumpdir");
}

static int group_teardown(void **state)
{
    (void)state;
    return test_tmpdir_remove(tmpdir);
}

enum { N = 1000, M = 400, F = 3, B = 50 };

typedef struct {
    const char *name;
    double tr[N * F], ev[M * F];
    double rm[F], rv[F];
    size_t tracked;
    const char *momentum; /* as the layer file writes it; NULL: 0.1 */
} layer_t;

static gsl_rng *rng;
/* The training batch of the dumps written: B, or N for full-batch
 * training (one batch a step). */
static size_t bsz = B;

static void draw(double *x, size_t n, const double *mean, const double *sd)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < F; j++)
            x[i * F + j] = mean[j] + sd[j] * gsl_ran_gaussian(rng, 1.0);
}

/* The batch of rows [k bsz, (k+1) bsz): its mean and unbiased
 * variance. */
static void batch_moments(const double *x, size_t k, size_t j, long double *m,
                          long double *v)
{
    ld_moments(bsz, F, x + k * bsz * F + j, m, v);
    *v *= (long double)bsz / (long double)(bsz - 1);
}

/* Three epochs of PyTorch's rule from 0 and 1 with momentum 0.1. */
static void train(layer_t *l)
{
    for (size_t j = 0; j < F; j++) {
        long double rm = 0.0L, rv = 1.0L, m, v;
        for (int e = 0; e < 3; e++)
            for (size_t k = 0; k < N / bsz; k++) {
                batch_moments(l->tr, k, j, &m, &v);
                rm = 0.9L * rm + 0.1L * m;
                rv = 0.9L * rv + 0.1L * v;
            }
        l->rm[j] = (double)rm, l->rv[j] = (double)rv;
    }
    l->tracked = 3 * N / bsz;
}

static void make_layer(layer_t *l, const char *name, double ev_scale)
{
    static const double mean[F] = {1.0, -2.0, 5.0}, sd[F] = {1.0, 0.5, 3.0};
    double evmean[F], evsd[F];
    for (size_t j = 0; j < F; j++)
        evmean[j] = mean[j] * ev_scale, evsd[j] = sd[j] * ev_scale;
    l->name = name;
    draw(l->tr, N, mean, sd);
    draw(l->ev, M, evmean, evsd);
    train(l);
}

/* A .npy from the format's definition: magic, version 1.0, the header
 * length, the dictionary padded with spaces to 64 bytes, the doubles. */
static void npy(const char *path, const double *x, size_t n, size_t f)
{
    char head[128];
    int hl = snprintf(head, sizeof head,
                      "{'descr': '<f8', 'fortran_order': False, 'shape': "
                      "(%zu, %zu), }",
                      n, f);
    size_t pad = (64 - (10 + (size_t)hl + 1) % 64) % 64, len = hl + pad + 1;
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             (unsigned char)(len & 0xff),
                             (unsigned char)(len >> 8)};
    fwrite(pre, 1, 10, fp);
    fprintf(fp, "%s%*s\n", head, (int)pad, "");
    fwrite(x, sizeof *x, n * f, fp); /* little-endian machines only */
    assert_int_equal(fclose(fp), 0);
}

static FILE *open_in(const char *dir, const char *name, const char *ext)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    return fp;
}

static void write_stats(const char *dir, const layer_t *l)
{
    FILE *fp = open_in(dir, l->name, ".stats.tsv");
    fputs("feature\trunning_mean\trunning_var\tnum_batches_tracked\t"
          "train_mean\ttrain_var\ttrain_batch_var\ttrain_unit_var\t"
          "train_eval_mode_mean\ttrain_eval_mode_var\teval_mean\teval_var\n",
          fp);
    for (size_t j = 0; j < F; j++) {
        long double tm, tv, em, ev, m, v, bv = 0.0L;
        ld_moments(N, F, l->tr + j, &tm, &tv);
        ld_moments(M, F, l->ev + j, &em, &ev);
        for (size_t k = 0; k < N / bsz; k++) {
            batch_moments(l->tr, k, j, &m, &v);
            bv += v / (long double)(N / bsz);
        }
        fprintf(fp, "f%zu\t%.17g\t%.17g\t%zu\t%.17Lg\t%.17Lg\t%.17Lg\t"
                    "%.17Lg\t%.17Lg\t%.17Lg\t%.17Lg\t%.17Lg\n",
                j, l->rm[j], l->rv[j], l->tracked, tm, tv, bv, tv, tm, tv, em,
                ev);
    }
    assert_int_equal(fclose(fp), 0);
}

static void write_layer(const char *dir, const layer_t *l)
{
    char path[600];
    FILE *fp = open_in(dir, l->name, ".layer.tsv");
    fprintf(fp, "key\tvalue\nlayer\t%s\ntype\tBatchNorm1d\nfeatures\t%d\n"
                "momentum\t%s\neps\t1e-05\nnum_batches_tracked\t%zu\n"
                "batch_size\t%zu\nrows_per_sample\t1\ntrain_samples\t%d\n"
                "eval_samples\t%d\ndtype\tfloat32\n",
            l->name, F, l->momentum ? l->momentum : "0.1", l->tracked, bsz,
            N, M);
    assert_int_equal(fclose(fp), 0);
    write_stats(dir, l);
    fp = open_in(dir, l->name, ".batches.tsv");
    fputs("batch\trows\tsamples\n", fp);
    double means[(N / B) * F];
    for (size_t k = 0; k < N / bsz; k++) {
        fprintf(fp, "%zu\t%zu\t%zu\n", k, bsz, bsz);
        for (size_t j = 0; j < F; j++) {
            long double m, v;
            batch_moments(l->tr, k, j, &m, &v);
            means[k * F + j] = (double)m;
        }
    }
    assert_int_equal(fclose(fp), 0);
    static const char *const ext[3] = {".train.npy", ".train-eval.npy",
                                       ".eval.npy"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s%s", dir, l->name, ext[i]);
        npy(path, i < 2 ? l->tr : l->ev, i < 2 ? N : M, F);
    }
    snprintf(path, sizeof path, "%s/%s.batchmeans.npy", dir, l->name);
    npy(path, means, N / bsz, F);
}

/* The folder: the layers in order, training's steps (0: not given), the
 * accuracies and the fixes as "name accuracy" lines. */
static void write_dump(const char *name, const layer_t *const *l, size_t nl,
                       size_t steps, double tr_acc, double ev_acc,
                       const char *fixes)
{
    char dir[400];
    snprintf(dir, sizeof dir, "%s/%s", tmpdir, name);
    assert_int_equal(test_shell("mkdir -p '%s'", dir), 0);
    FILE *fp = open_in(dir, "model", ".tsv");
    fprintf(fp, "key\tvalue\nformat\tbnstudy-dump 2\nkind\tdump\nmodel\t"
                "m.pt\nloaded\ta whole pickled model\nnotes\t-\nlayers\t%zu\n"
                "batch_size\t%zu\ntrain_rows\t%d\neval_rows\t%d\n",
            nl, bsz, N, M);
    if (steps)
        fprintf(fp, "steps\t%zu\n", steps);
    fprintf(fp, "train_mode_accuracy\t%.17g\neval_mode_accuracy\t%.17g\n"
                "batch_dependence\t0\n",
            tr_acc, ev_acc);
    assert_int_equal(fclose(fp), 0);
    fp = open_in(dir, "layers", ".tsv");
    fputs("layer\ttype\tfeatures\n", fp);
    for (size_t i = 0; i < nl; i++) {
        fprintf(fp, "%s\tBatchNorm1d\t%d\n", l[i]->name, F);
        write_layer(dir, l[i]);
    }
    assert_int_equal(fclose(fp), 0);
    fp = open_in(dir, "fixes", ".tsv");
    fprintf(fp, "fix\teval_mode_accuracy\twhat\n%s", fixes);
    assert_int_equal(fclose(fp), 0);
}

/* diagnose DIR ARGS: status 0, nothing on stderr; the output. */
static char *diagnose(const char *args)
{
    char *out, *err;
    int rc = test_bnstudy(tmpdir, &out, &err, "diagnose %s", args);
    if (rc != 0 || err[0])
        fail_msg("diagnose %s: status %d: %s", args, rc, err);
    test_slurp_free(err);
    return out;
}

static void expect_start(const char *args, const char *first,
                         const char *also)
{
    char *out = diagnose(args);
    if (strncmp(out, first, strlen(first)) != 0 ||
        (also && !strstr(out, also)))
        fail_msg("diagnose %s: want '%s' first%s%s, got:\n%s", args, first,
                 also ? " and " : "", also ? also : "", out);
    test_slurp_free(out);
}

static void expect_absent(const char *args, const char *needle)
{
    char *out = diagnose(args);
    if (strstr(out, needle))
        fail_msg("diagnose %s: '%s' should not be there:\n%s", args, needle,
                 out);
    test_slurp_free(out);
}

static int by_first(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static layer_t la, lb, lc;

static void test_causes(void **state)
{
    (void)state;
    rng = pcg32_gsl_alloc(11, 5);
    make_layer(&la, "a", 1.0);
    const layer_t *one[] = {&la};
    write_dump("healthy", one, 1, 0, 0.95, 0.94,
               "recompute-train\t0.95\t-\n");
    expect_start("healthy", "verdict: healthy\n",
                 "evaluation mode is within 0.03 of training mode");
    /* Dropout's variance shift: the same layer with its running
     * variances three times the fresh ones (dropout 0.5 before it adds
     * q/(1-q) E[x^2], at least the variance) reads as dropout-shift with
     * the dumper's dropout_before, and without the key (an older dump)
     * as the lag it would otherwise be; a rate of 1 is refused. The
     * modes 0.15 apart, closed by recompute-train, so that neither is
     * the error measured to cost nothing (a note, not the cause). */
    write_dump("gap", one, 1, 0, 0.95, 0.80, "recompute-train\t0.95\t-\n");
    assert_int_equal(test_shell("cp -r '%s/gap' '%s/dropout' && cd "
                                "'%s/dropout' && awk -F'\t' -v OFS='\t' "
                                "'NR > 1 { $3 = $3 * 3 } 1' a.stats.tsv > s "
                                "&& mv s a.stats.tsv && cp -r . ../nodrop && "
                                "printf 'dropout_before\t0.5\n' >> "
                                "a.layer.tsv",
                                tmpdir, tmpdir, tmpdir),
                     0);
    expect_start("dropout", "verdict: dropout-shift, in 1 of 1 layer, "
                            "first a\n", NULL);
    expect_start("nodrop", "verdict: lagging", NULL);
    assert_int_equal(test_shell("cp -r '%s/nodrop' '%s/dropout1' && "
                                "printf 'dropout_before\t1\n' >> "
                                "'%s/dropout1/a.layer.tsv'",
                                tmpdir, tmpdir, tmpdir),
                     0);
    /* The majority class's share measured: a model half-way from it to 1
     * in neither mode is poor, and the report says the gap is not the
     * main problem; a good one is not. */
    assert_int_equal(test_shell("printf 'majority_rate\\t0.4\\n' >> "
                                "'%s/healthy/model.tsv'",
                                tmpdir),
                     0);
    expect_absent("healthy", "poor");
    write_dump("poor", one, 1, 0, 0.64, 0.59, "recompute-train\t0.64\t-\n");
    assert_int_equal(test_shell("printf 'majority_rate\\t0.4\\n' >> "
                                "'%s/poor/model.tsv'",
                                tmpdir),
                     0);
    expect_start("poor", "verdict: ",
                 "  the model is poor in both modes: the better scores 0.640, "
                 "less than half-way from the majority class's share (0.400) "
                 "to 1");
    write_dump("above", one, 1, 0, 0.90, 0.95,
               "recompute-train\t0.95\t-\n");
    expect_start("above", "verdict: healthy\n",
                 "evaluation mode scores at or above training mode: keep "
                 "it as it is");
    /* Momentum 0 never moves the buffers: frozen, though every one of
     * the 60 steps was tracked; and where evaluation mode already scores
     * above training mode (the weights trained against the frozen
     * statistics), kept, the fix that would lower it said so. */
    la.momentum = "0.0";
    write_dump("momentum0", one, 1, 60, 0.95, 0.80,
               "recompute-train\t0.94\t-\n");
    expect_start("momentum0", "verdict: frozen, in 1 of 1 layer, first a\n",
                 "measured: recompute-train gives evaluation mode 0.940: "
                 "it closes the gap");
    /* Dropout before the layer: update_bn's recompute is not the one
     * measured, and the report says so where it names recomputing. */
    expect_absent("momentum0", "dropout");
    assert_int_equal(test_shell("printf 'dropout_before_bn\\t2\\n' >> "
                                "'%s/momentum0/model.tsv'",
                                tmpdir),
                     0);
    expect_start("momentum0", "verdict: frozen",
                 "\n  recompute with dropout off: this model runs 2 dropout "
                 "modules or calls before its batch-norm layers, and "
                 "torch.optim.swa_utils.update_bn puts the whole model in "
                 "training mode");
    write_dump("keep", one, 1, 60, 0.84, 0.976,
               "recompute-train\t0.85\t-\n");
    expect_start("keep", "verdict: frozen",
                 "  fix: none: keep evaluation mode as it is, since it scores "
                 "at or above training mode");
    expect_start("keep", "verdict: frozen",
                 "measured: recompute-train gives evaluation mode 0.850: it "
                 "LOWERS evaluation mode\n");
    /* Evaluation mode 0.02 under training mode: within the tolerance,
     * so no fix is named as needed, and the one measured is printed as
     * measured. */
    write_dump("within", one, 1, 60, 0.95, 0.93,
               "recompute-train\t0.91\t-\n");
    expect_start("within", "verdict: frozen",
                 "  fix: none: evaluation mode is within 0.03 of training "
                 "mode, no gap to close. The cause's usual fix, should the "
                 "gap grow: ");
    expect_start("within", "verdict: frozen",
                 "measured: recompute-train gives evaluation mode 0.910\n");
    expect_absent("within", "no gap to close\n");
    la.momentum = NULL;
    /* Frozen: tracked 60 of the 600 steps training took. */
    write_dump("frozen", one, 1, 600, 0.95, 0.80,
               "recompute-train\t0.94\t-\n");
    expect_start("frozen", "verdict: frozen, in 1 of 1 layer, first a\n",
                 "measured: recompute-train gives evaluation mode 0.940: "
                 "it closes the gap");
    /* The evaluation data at half the scale: shift, which recomputing on
     * the training data does not fix and adapting does. */
    make_layer(&lb, "b", 0.5);
    const layer_t *two[] = {&la, &lb};
    write_dump("shift", two, 2, 60, 0.95, 0.60,
               "recompute-train\t0.61\t-\nadapt-eval\t0.94\t-\n");
    expect_start("shift", "verdict: shift, in 1 of 2 layers, first b\n",
                 "measured: adapt-eval gives evaluation mode 0.940: it "
                 "closes the gap");
    write_dump("shift-above", two, 2, 60, 0.93, 0.95,
               "recompute-train\t0.61\t-\nadapt-eval\t0.94\t-\n");
    expect_start("shift-above", "verdict: shift",
                 "since it scores at or above training mode (the evaluation "
                 "data differ from the training data where the network does "
                 "not look");
    expect_absent("shift-above", "fine-tune");
    /* Never filled: the buffers 0 and 1, no batch tracked; the reload
     * scored, and preferred. */
    for (size_t j = 0; j < F; j++)
        lb.rm[j] = 0.0, lb.rv[j] = 1.0;
    lb.tracked = 0;
    const layer_t *nf[] = {&lb};
    write_dump("never", nf, 1, 0, 0.95, 0.40,
               "recompute-train\t0.93\t-\nreload\t0.95\t-\n");
    expect_start("never", "verdict: never-filled", "measured: reload gives");
    /* Evaluation mode kept for the cause's own reason, not a
     * fine-tune's: never-filled buffers that score above training mode
     * are weights trained against 0 and 1, or inputs already near them;
     * a shift that costs nothing is data the network does not look at. */
    write_dump("never-above", nf, 1, 0, 0.86, 0.97,
               "recompute-train\t0.95\t-\n");
    expect_start("never-above", "verdict: never-filled",
                 "keep evaluation mode as it is, since it scores at or above "
                 "training mode (the weights may have trained against the "
                 "initial 0 and 1");
    expect_absent("never-above", "fine-tune");
    /* A cause's own fix that does not close the gap, another that does:
     * that one first. */
    write_dump("instead", nf, 1, 0, 0.95, 0.40,
               "recompute-train\t0.70\t-\nadapt-eval\t0.95\t-\n");
    expect_start("instead", "verdict: never-filled",
                 "  fix: adapt-eval (the statistics recomputed on the "
                 "evaluation data): measured to close the gap, where "
                 "recompute-train, the cause's own, does not\n"
                 "  measured: adapt-eval gives evaluation mode 0.950: it "
                 "closes the gap\n"
                 "  measured: recompute-train gives evaluation mode 0.700: "
                 "it does NOT close the gap\n");
    /* Sorted by the first feature: its batch means spread about B = 50
     * times random batches'; no fix the dump scored closes the gap. */
    make_layer(&lc, "c", 1.0);
    qsort(lc.tr, N, F * sizeof *lc.tr, by_first);
    train(&lc);
    const layer_t *sorted[] = {&lc};
    write_dump("sorted", sorted, 1, 60, 0.95, 0.60,
               "recompute-train\t0.70\t-\nadapt-eval\t0.72\t-\n"
               "eps\t0.60\t-\n");
    /* A parabola in the batch's place explains most of a sort by the
     * feature itself (as of a drift): the batches' classes, sorted with
     * it, are what tell a grouping (docs/diagnose.md, "Not
     * exchangeable"). */
    assert_int_equal(test_shell("printf 'label_exchange\t45.5\n' >> "
                                "'%s/sorted/model.tsv'", tmpdir), 0);
    expect_start("sorted", "verdict: not-exchangeable",
                 "no measured fix closes the gap");
    gsl_rng_free(rng);
}

/* A recording of layer l (BNRecorder's files): the first `kept` batches
 * of its training rows in training-mode calls, `calls` of them in all,
 * `unmoved` leaving the buffers as they were, `grad` evaluation-mode
 * calls under autograd; the count `before` when it began and l->tracked
 * at the end, the buffers l's. */
static void write_recording(const char *name, const layer_t *l, size_t kept,
                            size_t calls, size_t unmoved, size_t grad,
                            size_t before)
{
    char dir[400], path[600];
    snprintf(dir, sizeof dir, "%s/%s", tmpdir, name);
    assert_int_equal(test_shell("mkdir -p '%s'", dir), 0);
    FILE *fp = open_in(dir, "model", ".tsv");
    fputs("key\tvalue\nformat\tbnstudy-dump 2\nkind\trecording\nlayers\t1\n"
          "weights_moved\tyes\n", fp);
    assert_int_equal(fclose(fp), 0);
    fp = open_in(dir, "layers", ".tsv");
    fprintf(fp, "layer\ttype\tfeatures\n%s\tBatchNorm1d\t%d\n", l->name, F);
    assert_int_equal(fclose(fp), 0);
    fp = open_in(dir, l->name, ".layer.tsv");
    fprintf(fp, "key\tvalue\nlayer\t%s\nfeatures\t%d\nmomentum\t0.1\n"
                "eps\t1e-05\nnum_batches_tracked\t%zu\ntraining_calls\t%zu\n"
                "training_calls_unmoved\t%zu\neval_calls_with_grad\t%zu\n"
                "eval_calls_without_grad\t0\n",
            l->name, F, l->tracked, calls, unmoved, grad);
    assert_int_equal(fclose(fp), 0);
    fp = open_in(dir, l->name, ".stats.tsv");
    fputs("feature\trunning_mean\trunning_var\tnum_batches_tracked\t"
          "initial_mean\tinitial_var\tinitial_batches_tracked\n", fp);
    for (size_t j = 0; j < F; j++)
        fprintf(fp, "f%zu\t%.17g\t%.17g\t%zu\t0\t1\t%zu\n", j, l->rm[j],
                l->rv[j], l->tracked, before);
    assert_int_equal(fclose(fp), 0);
    fp = open_in(dir, l->name, ".batches.tsv");
    fputs("batch\tfirst_row\trows\tshape\tweights\n", fp);
    for (size_t k = 0; k < kept; k++)
        fprintf(fp, "%zu\t%zu\t%d\t%dx%d\t%zu\n", k, k * B, B, B, F, k);
    assert_int_equal(fclose(fp), 0);
    snprintf(path, sizeof path, "%s/%s.npy", dir, l->name);
    npy(path, l->tr, kept * B, F);
}

/* What a recording's counts alone show: a layer frozen in evaluation
 * mode for the whole recording (no training-mode call, no row kept);
 * frozen after the first 20 of 80 steps of a fine-tune whose layers had
 * tracked 120 batches before it began (140 at the end: the lifetime count
 * would pass); frozen by momentum 0 for 40 of 60 training-mode calls,
 * set back before the end (every call counted, only 20 moved the
 * buffers); and the same 60 calls all moving the buffers, healthy. */
static void test_recordings(void **state)
{
    (void)state;
    static layer_t r;
    rng = pcg32_gsl_alloc(17, 5);
    make_layer(&r, "r", 1.0);
    gsl_rng_free(rng);
    r.tracked = 120;
    write_recording("rec-eval", &r, 0, 0, 0, 80, 120);
    expect_start("rec-eval", "verdict: frozen, in 1 of 1 layer, first r\n",
                 "  r: 0 training-mode calls (0 left the buffers as they "
                 "were), 80 in evaluation mode under autograd");
    /* A recording scores no fix, and recomputing a layer frozen while the
     * weights trained can lower evaluation mode: nothing is recommended
     * unmeasured; the report says what to measure. */
    expect_start("rec-eval", "verdict: frozen",
                 "  fix: none until measured: keep evaluation mode as it is "
                 "meanwhile, since recompute-train can lower it (a "
                 "fine-tune's weights may have learned these very "
                 "statistics");
    expect_start("rec-eval", "verdict: frozen", "--eval-labels");
    expect_absent("rec-eval", "  fix: recompute");
    r.tracked = 140;
    write_recording("rec-finetune", &r, 20, 20, 0, 60, 120);
    expect_start("rec-finetune", "verdict: frozen, in 1 of 1 layer", NULL);
    /* The buffers are three epochs of these rows' moving average, so
     * the same counts from scratch are healthy. */
    r.tracked = 60;
    write_recording("rec-healthy", &r, 20, 60, 0, 0, 0);
    expect_start("rec-healthy", "verdict: healthy\n", NULL);
    expect_absent("rec-healthy", "until measured");
    write_recording("rec-momentum0", &r, 20, 60, 40, 0, 0);
    expect_start("rec-momentum0", "verdict: frozen, in 1 of 1 layer", NULL);
}

/* Full-batch training: one batch a step, so each layer's batch means
 * are one row and the exchange test is undefined (NaN, no verdict);
 * three steps at momentum 0.1 leave the initial values 0.9^3 = 0.73 of
 * the buffers: few-updates, named, not refused. */
static void test_one_batch(void **state)
{
    (void)state;
    static layer_t l;
    rng = pcg32_gsl_alloc(19, 5);
    bsz = N;
    make_layer(&l, "a", 1.0);
    const layer_t *one[] = {&l};
    write_dump("fullbatch", one, 1, 3, 0.95, 0.60,
               "recompute-train\t0.94\t-\n");
    bsz = B;
    gsl_rng_free(rng);
    expect_start("fullbatch",
                 "verdict: few-updates, in 1 of 1 layer, first a\n",
                 "measured: recompute-train gives evaluation mode 0.940: "
                 "it closes the gap");
    char *out = diagnose("fullbatch --tsv"), *lines[8], *cells[40];
    assert_int_equal(test_split(out, '\n', lines, 8), 1 + F + 1);
    size_t nh = test_split(lines[0], '\t', cells, 40);
    size_t col = test_column(cells, nh, "exchange", "diagnose --tsv");
    for (size_t j = 0; j < F; j++) {
        assert_int_equal(test_split(lines[1 + j], '\t', cells, 40), nh);
        assert_string_equal(cells[col], "nan");
    }
    test_slurp_free(out);
}

static void test_detail(void **state)
{
    (void)state;
    /* --layer adds the layer's table; --tsv prints a row per feature of
     * the layer named, or of every layer. */
    char *out = diagnose("shift --layer b");
    assert_non_null(strstr(out, "\nlayer b (BatchNorm1d, 3 features)"));
    assert_null(strstr(out, "\nlayer a ("));
    test_slurp_free(out);
    out = diagnose("shift --tsv");
    char *lines[16];
    size_t n = test_split(out, '\n', lines, 16);
    assert_int_equal(n, 1 + 2 * F + 1); /* header, rows, the last '' */
    assert_true(strncmp(lines[0], "layer\tfeature\t", 14) == 0);
    assert_true(strncmp(lines[1 + F], "b\tf0\t", 5) == 0);
    test_slurp_free(out);
    out = diagnose("shift --layer a --tsv");
    n = test_split(out, '\n', lines, 16);
    assert_int_equal(n, 1 + F + 1);
    test_slurp_free(out);
}

static void expect_refused(const char *args, const char *needle)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "diagnose %s", args);
    test_expect_refused(tmpdir, cmd, needle);
}

static void test_refusals(void **state)
{
    (void)state;
    expect_refused("nowhere", "nowhere/model.tsv");
    expect_refused("shift --layer c", "--layer c: no such layer");
    expect_refused("shift --batch-size 8", "give it alone");
    expect_refused("shift healthy", "unexpected argument 'healthy'");
    assert_int_equal(test_shell("cp -r '%s/shift' '%s/bad' && "
                                "sed -i '3s/^f1\\t[^\\t]*\\t[^\\t]*/f1\\t0\\t-1/' "
                                "'%s/bad/b.stats.tsv'",
                                tmpdir, tmpdir, tmpdir),
                     0);
    expect_refused("bad", "bad/b.stats.tsv:3: a variance below 0");
    assert_int_equal(test_shell("cp -r '%s/shift' '%s/dots' && "
                                "printf 'layer\\ttype\\tfeatures\\n../a\\t"
                                "BatchNorm1d\\t3\\n' > '%s/dots/layers.tsv'",
                                tmpdir, tmpdir, tmpdir),
                     0);
    expect_refused("dots", "dots/layers.tsv:2: '../a' is not a layer name");
    assert_int_equal(test_shell("cp -r '%s/shift' '%s/old' && "
                                "sed -i 's/bnstudy-dump 2/bnstudy-dump 1/' "
                                "'%s/old/model.tsv'",
                                tmpdir, tmpdir, tmpdir),
                     0);
    expect_refused("old", "old/model.tsv: not a dump");
    assert_int_equal(test_shell("cp -r '%s/shift' '%s/gone' && rm "
                                "'%s/gone/a.eval.npy'",
                                tmpdir, tmpdir, tmpdir),
                     0);
    expect_refused("gone", "gone/a.eval.npy");
    expect_refused("dropout1", "a.layer.tsv: dropout_before 1 is not in "
                               "[0, 1)");
    /* A chi-square over its mean is never below 0; a negative one would
     * read as "no grouping" and let not-exchangeable be argued away. */
    assert_int_equal(test_shell("cp -r '%s/shift' '%s/negx' && "
                                "printf 'label_exchange\\t-0.5\\n' >> "
                                "'%s/negx/model.tsv'",
                                tmpdir, tmpdir, tmpdir),
                     0);
    expect_refused("negx", "negx/model.tsv: label_exchange -0.5 is not a "
                           "ratio >= 0");
    assert_int_equal(test_shell("cp -r '%s/shift' '%s/wordx' && "
                                "printf 'label_exchange\\tmany\\n' >> "
                                "'%s/wordx/model.tsv'",
                                tmpdir, tmpdir, tmpdir),
                     0);
    expect_refused("wordx", "wordx/model.tsv:");
}

/* Folder `to`, a copy of `from`, its layer `name` given real positions
 * and padding whose closed form at a padded share of 0.5 is its buffers
 * (the real mean half a spread above, the padding's half below, both of
 * variance 3/4 of the buffers': 0.5 (3/4) rv + 0.5 (3/4) rv + 0.25 rv =
 * rv), both data sets at that share, training mode over the real
 * positions only. */
static void add_padding(const char *from, const char *to, const char *name)
{
    const char *cols =
        "awk -F'\\t' -v OFS='\\t' 'NR == 1 { print $0, \"train_real_mean\", "
        "\"train_real_var\", \"train_pad_mean\", \"train_pad_var\", "
        "\"train_real_batch_var\"; next } { s = sqrt($3); print $0, "
        "$2 + 0.5 * s, 0.75 * $3, $2 - 0.5 * s, 0.75 * $3, 0.75 * $3 }' "
        "'%s/%s/%s.stats.tsv' > '%s/t' && mv '%s/t' "
        "'%s/%s/%s.stats.tsv'";
    assert_int_equal(test_shell("rm -rf '%s/%s' && cp -r '%s/%s' '%s/%s'",
                                tmpdir, to, tmpdir, from, tmpdir, to),
                     0);
    assert_int_equal(test_shell(cols, tmpdir, to, name, tmpdir, tmpdir,
                                tmpdir, to, name),
                     0);
    assert_int_equal(test_shell("printf 'pad_train_share\\t0.5\\n"
                                "pad_eval_share\\t0.5\\n"
                                "train_mode_positions\\treal\\n' >> "
                                "'%s/%s/%s.layer.tsv'",
                                tmpdir, to, name),
                     0);
}

/* Padded sequences: the healthy folder's layer with add_padding's
 * positions: masking-mismatch. The same layer normalised over every
 * position is healthy; and the refusals of what does not fit. */
static void test_padded(void **state)
{
    (void)state;
    add_padding("healthy", "padded", "a");
    expect_start("padded", "verdict: masking-mismatch, in 1 of 1 layer",
                 NULL);
    assert_int_equal(test_shell("sed -i 's/positions\\treal/positions\\tall/' "
                                "'%s/padded/a.layer.tsv'",
                                tmpdir),
                     0);
    expect_start("padded", "verdict: healthy\n", NULL);
    assert_int_equal(test_shell("cp -r '%s/padded' '%s/share' && sed -i "
                                "'s/pad_eval_share\\t0.5/pad_eval_share\\t1.5/' "
                                "'%s/share/a.layer.tsv'",
                                tmpdir, tmpdir, tmpdir),
                     0);
    expect_refused("share", "share/a.layer.tsv: pad_eval_share 1.5 is not "
                            "in [0, 1]");
    assert_int_equal(test_shell("cp -r '%s/padded' '%s/where' && sed -i "
                                "'s/positions\\tall/positions\\tsome/' "
                                "'%s/where/a.layer.tsv'",
                                tmpdir, tmpdir, tmpdir),
                     0);
    expect_refused("where", "where/a.layer.tsv: train_mode_positions 'some' "
                            "is not real, all or unknown");
    assert_int_equal(test_shell("cp -r '%s/padded' '%s/half' && cut -f1-13 "
                                "'%s/half/a.stats.tsv' > '%s/t' && mv '%s/t' "
                                "'%s/half/a.stats.tsv'",
                                tmpdir, tmpdir, tmpdir, tmpdir, tmpdir,
                                tmpdir),
                     0);
    expect_refused("half", "half/a.stats.tsv: train_real_mean, "
                           "train_real_var, train_pad_mean, train_pad_var "
                           "and train_real_batch_var come together");
}

/* A recording's padded sequences (BNRecorder.batch) read as a dump's:
 * the healthy recording's layer with add_padding's positions is
 * masking-mismatch. */
static void test_padded_recording(void **state)
{
    (void)state;
    add_padding("rec-healthy", "rec-padded", "r");
    expect_start("rec-padded", "verdict: masking-mismatch, in 1 of 1 layer",
                 NULL);
}

/* The verdict's lines for one layer of one cause, the model measured as
 * given: what diag_print_verdict writes, in a string to free. */
static char *verdict_text(diag_cause cause, const verdict_model *m)
{
    diag_feature d[1];
    memset(d, 0, sizeof d);
    d[0].cause = cause;
    d[0].effect = 1.0;
    verdict_layer l = {.name = "a", .f = 1, .d = d};
    verdict_layer_sum(&l, m);
    verdict v;
    verdict_make(&l, 1, m, &v);
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    assert_non_null(fp);
    diag_print_verdict(fp, &v, &l, 1, m, NULL);
    assert_int_equal(fclose(fp), 0);
    return text;
}

static verdict_model measured(double train, double eval)
{
    verdict_model m = {.train_acc = train, .eval_acc = eval,
                       .batch_dependence = 0.2, .majority = NAN};
    for (int f = 0; f < DIAG_N_FIXES; f++)
        m.fix_acc[f] = NAN;
    return m;
}

/* Evaluation mode at or above training mode: one fix line, "none: keep
 * evaluation mode as it is", for a cause whose fix is to retrain or to
 * ship as it is too, and no second line saying it again. Not
 * exchangeable with a gap: retraining is the fix, a statistics fix that
 * closes the gap only a stopgap, with no "measured: ... closes" line. */
static void test_fix_lines(void **state)
{
    (void)state;
    /* Healthy layers, modes 0.05 apart, 0.2 of the predictions moving:
     * batch-dependence. */
    const diag_cause keep[] = {DIAG_NOT_EXCHANGEABLE, DIAG_HEALTHY,
                               DIAG_FROZEN};
    const char *want[] = {"verdict: not-exchangeable",
                          "verdict: batch-dependence", "verdict: frozen"};
    for (size_t k = 0; k < sizeof keep / sizeof *keep; k++) {
        verdict_model m = measured(0.90, 0.95);
        char *t = verdict_text(keep[k], &m);
        if (strncmp(t, want[k], strlen(want[k])) ||
            !strstr(t, "\n  fix: none: keep evaluation mode as it is, "
                       "since it scores at or above training mode (") ||
            strstr(t, "no gap to close") || !strstr(t, "usual fix: "))
            fail_msg("%s:\n%s", want[k], t);
        free(t);
    }
    verdict_model m = measured(0.492, 0.332);
    m.fix_acc[DIAG_FIX_ADAPT_EVAL] = 0.479;
    m.label_exchange = 45.5; /* the batches' classes grouped */
    char *t = verdict_text(DIAG_NOT_EXCHANGEABLE, &m);
    const char *fix = strstr(t, "\n  fix: retrain with shuffled batches");
    const char *stop = strstr(t, "\n  stopgap until retrained: adapt-eval");
    if (!fix || !stop || stop < fix || strstr(t, "  measured: "))
        fail_msg("grouped:\n%s", t);
    free(t);
    /* Without labels: the measured fix first, retraining then. */
    m.label_exchange = NAN;
    t = verdict_text(DIAG_NOT_EXCHANGEABLE, &m);
    fix = strstr(t, "\n  fix: adapt-eval (");
    const char *then = strstr(t, "\n  then, the cause's own fix: retrain "
                                 "with shuffled batches");
    if (!fix || !then || then < fix || strstr(t, "stopgap") ||
        !strstr(t, "\n  measured: adapt-eval gives evaluation mode 0.479: "
                   "it closes the gap\n"))
        fail_msg("not grouped by class:\n%s", t);
    free(t);
}

int test_dumpdir_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_causes),
        cmocka_unit_test(test_recordings),
        cmocka_unit_test(test_one_batch),
        cmocka_unit_test(test_detail),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_padded),
        cmocka_unit_test(test_padded_recording),
        cmocka_unit_test(test_fix_lines),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("dumpdir", tests, group_setup,
                                       group_teardown);
}
