/*
 * The diagnosis of a layer's evidence (diag_layer_run) and the model's
 * verdict (verdict.c): each cause's test at the edge of its threshold,
 * with the thresholds computed here from their closed forms in long
 * double (the moving average's noise, the Kolmogorov bound); the
 * Kolmogorov-Smirnov distance against a brute-force count; the error a
 * feature's cause adds, against its closed form; and the verdict's
 * choice of cause (material or not), layer and fix.
 */
#include "helpers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "base/pcg32.h"
#include "model/diag.h"
#include "model/verdict.h"

/* One feature whose running statistics match its training data, mean 2
 * and target variance 4, after enough updates that the initial values
 * keep nothing; batches of 10 samples, p = 0.1. */
typedef struct {
    double rm, rv, tm, tv, es, ec, eks, eout, kurt;
    diag_layer in;
} one;

static void one_init(one *o)
{
    memset(o, 0, sizeof *o);
    o->rm = o->tm = 2.0;
    o->rv = o->tv = 4.0;
    o->kurt = 3.0;
    o->es = 0.0, o->ec = 1.0, o->eks = 0.0, o->eout = 0.0;
    o->in = (diag_layer){.f = 1,
                         .running_mean = &o->rm,
                         .running_var = &o->rv,
                         .train_mean = &o->tm,
                         .train_var = &o->tv,
                         .updates = 500,
                         .tracked = 500,
                         .fresh_fixed = 1,
                         .p = 0.1,
                         .eps = 1e-5,
                         .batch_samples = 10,
                         .train_samples = 1000,
                         .eval_samples = 400,
                         .kurtosis = &o->kurt,
                         .eval_shift = &o->es,
                         .eval_scale = &o->ec,
                         .eval_ks = &o->eks,
                         .eval_out = &o->eout};
}

static diag_cause cause_of(one *o)
{
    diag_feature d;
    bn_error err;
    if (diag_layer_run(&o->in, &d, &err) != 0)
        fail_msg("%s", err.msg);
    return d.cause;
}

static void expect(one *o, diag_cause want, const char *what)
{
    diag_cause got = cause_of(o);
    if (got != want)
        fail_msg("%s: %s, want %s", what, diag_cause_get(got)->name,
                 diag_cause_get(want)->name);
}

/* The moving average's noise at p = 0.1 and B = 10, in closed form. */
static long double q_noise(void)
{
    return 0.1L / ((2.0L - 0.1L) * 10.0L);
}

static void test_mean_limit(void **state)
{
    (void)state;
    one o;
    one_init(&o);
    expect(&o, DIAG_HEALTHY, "matching statistics");
    /* DIAG_NOISE_SD = 4 standard deviations of the average's noise. */
    long double lim = 4.0L * sqrtl(q_noise());
    long double sd = sqrtl(4.0L + 1e-5L);
    o.rm = (double)(2.0L + lim * sd * (1.0L - 1e-9L));
    expect(&o, DIAG_HEALTHY, "a mean inside the noise");
    o.rm = (double)(2.0L + lim * sd * (1.0L + 1e-9L));
    expect(&o, DIAG_LAGGING, "a mean beyond the noise, final weights");
    o.in.fresh_fixed = 0;
    expect(&o, DIAG_OTHER, "a mean beyond the noise, moving weights");
    /* With a cumulative average there is no average's noise: DIAG_OFF. */
    one_init(&o);
    o.in.cumulative = 1;
    o.rm = 2.0 + 0.1000001 * (double)sd;
    expect(&o, DIAG_LAGGING, "cumulative: beyond 0.1");
    o.rm = 2.0 + 0.0999999 * (double)sd;
    expect(&o, DIAG_HEALTHY, "cumulative: within 0.1");
}

static void test_variance_limit(void **state)
{
    (void)state;
    one o;
    one_init(&o);
    /* sqrt((kurtosis - 1) q) relative, 4 times: log above, linear below. */
    long double lim = 4.0L * sqrtl(2.0L * q_noise());
    o.rv = (double)(4.0L * expl(lim * (1.0L - 1e-9L)));
    expect(&o, DIAG_HEALTHY, "above, inside the noise (log)");
    o.rv = (double)(4.0L * expl(lim * (1.0L + 1e-9L)));
    expect(&o, DIAG_LAGGING, "above, beyond the noise (log)");
    o.rv = (double)(4.0L * (1.0L - lim * (1.0L - 1e-9L)));
    expect(&o, DIAG_HEALTHY, "below, inside the noise (linear)");
    o.rv = (double)(4.0L * (1.0L - lim * (1.0L + 1e-9L)));
    expect(&o, DIAG_LAGGING, "below, beyond the noise (linear)");
    /* A heavier tail widens the limit: kurtosis 9 is twice kurtosis 3's
     * sqrt(kurtosis - 1). */
    o.kurt = 9.0;
    expect(&o, DIAG_HEALTHY, "kurtosis 9");
    /* A variance near 0 far below its target stays inside a sparse
     * feature's noise, however large the scale. */
    o.kurt = 700.0;
    o.rv = 4e-9;
    expect(&o, DIAG_HEALTHY, "sparse, variance near 0");
    /* A feature constant in training has no scale to be off. */
    one_init(&o);
    o.tv = 0.0;
    o.rv = 1e-4;
    o.es = 0.0;
    o.eout = 0.0;
    expect(&o, DIAG_HEALTHY, "constant feature, buffer residue");
}

static void test_buffer_causes(void **state)
{
    (void)state;
    one o;
    one_init(&o);
    o.in.tracked = 0;
    expect(&o, DIAG_NEVER_FILLED, "no batch tracked");
    one_init(&o);
    o.rm = 0.0, o.rv = 1.0;
    expect(&o, DIAG_NEVER_FILLED, "buffers exactly 0 and 1");
    o.rv = 1.0000000000000002;
    expect(&o, DIAG_LAGGING, "buffers one ulp from 1");
    one_init(&o);
    o.in.steps = 1000;
    o.in.tracked = 499;
    expect(&o, DIAG_FROZEN, "tracked under half the steps");
    o.in.tracked = 500;
    expect(&o, DIAG_HEALTHY, "tracked half the steps");
    /* Momentum 0 never moves the buffers: frozen, whatever the count. */
    o.in.p = 0.0;
    expect(&o, DIAG_FROZEN, "momentum 0, every step tracked");
    o.in.steps = 0;
    expect(&o, DIAG_FROZEN, "momentum 0, no steps given");
    /* A recording counts only what it saw: 140 tracked, 120 of them
     * before it began, against 80 steps (20 training-mode calls and 60
     * in evaluation mode under autograd): 20 < 40. */
    one_init(&o);
    o.in.tracked = o.in.updates = 140;
    o.in.steps = 80;
    expect(&o, DIAG_HEALTHY, "140 tracked of 80 steps, none before");
    o.in.tracked_before = 120;
    expect(&o, DIAG_FROZEN, "20 of 80 steps tracked");
    o.in.tracked_before = 100;
    expect(&o, DIAG_HEALTHY, "40 of 80 steps tracked");
    o.in.tracked_before = 101;
    expect(&o, DIAG_FROZEN, "39 of 80 steps tracked");
    /* Few updates: (1 - 0.1)^T above 0.05 at T = 28, below at T = 29,
     * for a mean of 20 that the initial 0 pulls down by half a standard
     * deviation, beyond the noise (0.29). */
    one_init(&o);
    o.in.updates = o.in.tracked = 28;
    long double w = powl(0.9L, 28.0L);
    o.tm = 20.0;
    o.rm = (double)((1.0L - w) * 20.0L);
    o.rv = (double)(w + (1.0L - w) * 4.0L);
    expect(&o, DIAG_FEW_UPDATES, "0.9^28 = 0.052");
    o.in.updates = o.in.tracked = 29;
    expect(&o, DIAG_FAR_FROM_INIT, "0.9^29 = 0.047");
}

/* Dropout's variance shift: inverted dropout of rate q on a feature of
 * mean 2 and variance 4 keeps the mean and adds q/(1-q) E[x^2] = q/(1-q)
 * 8 to the variance, so at q = 0.5 the buffers hold 12 where the fresh
 * statistics with dropout off give 4. The variance limit's edge
 * (test_variance_limit's closed form) holds for it too; a variance below
 * the target, a mean off, or no dropout before the layer is not it. */
static void test_dropout_shift(void **state)
{
    (void)state;
    one o;
    one_init(&o);
    o.in.dropout = 0.5;
    expect(&o, DIAG_HEALTHY, "dropout before, statistics right");
    long double q = 0.5L;
    o.rv = (double)(4.0L + q / (1.0L - q) * (4.0L + 2.0L * 2.0L));
    expect(&o, DIAG_DROPOUT_SHIFT, "q = 0.5: 12 against 4");
    o.in.dropout = 0.0;
    expect(&o, DIAG_LAGGING, "the same buffers, no dropout before");
    o.in.dropout = 0.1;
    long double lim = 4.0L * sqrtl(2.0L * q_noise());
    o.rv = (double)(4.0L * expl(lim * (1.0L - 1e-9L)));
    expect(&o, DIAG_HEALTHY, "above, inside the noise");
    o.rv = (double)(4.0L * expl(lim * (1.0L + 1e-9L)));
    expect(&o, DIAG_DROPOUT_SHIFT, "above, beyond the noise");
    o.rv = (double)(4.0L * (1.0L - lim * (1.0L + 1e-9L)));
    expect(&o, DIAG_LAGGING, "below: dropout adds, never removes");
    o.rv = 12.0;
    o.rm = 3.0;
    expect(&o, DIAG_LAGGING, "the mean off: dropout keeps the mean");
    o.in.dropout = 1.0;
    diag_feature d;
    bn_error err;
    assert_int_equal(diag_layer_run(&o.in, &d, &err), -1);
    assert_non_null(strstr(err.msg, "dropout"));
}

static void test_eval_causes(void **state)
{
    (void)state;
    one o;
    one_init(&o);
    /* 2.27 sqrt(1/1000 + 1/400), computed here. */
    long double lim = 2.27L * sqrtl(1.0L / 1000.0L + 1.0L / 400.0L);
    o.eks = (double)(lim * (1.0L - 1e-9L));
    expect(&o, DIAG_HEALTHY, "distance inside the bound");
    o.eks = (double)(lim * (1.0L + 1e-9L));
    expect(&o, DIAG_SHIFT, "distance beyond the bound");
    /* Off against the training data too: not the data's alone. */
    o.rm = 3.0;
    expect(&o, DIAG_LAGGING, "off against training as well");
    /* The floor: 0.03 of the rows, with many samples. */
    one_init(&o);
    o.in.train_samples = o.in.eval_samples = 10000000;
    o.eks = 0.0299;
    expect(&o, DIAG_HEALTHY, "0.0299 of the rows");
    o.eks = 0.0301;
    expect(&o, DIAG_SHIFT, "0.0301 of the rows");
    /* Near-constant: eps at least the variance, and more than 0.03 of the
     * rows out of range beyond the training rows' own share. */
    one_init(&o);
    o.tv = o.rv = 1e-6;
    o.eout = 0.03;
    expect(&o, DIAG_HEALTHY, "0.03 of the rows amplified");
    o.eout = 0.0301;
    expect(&o, DIAG_NEAR_CONSTANT, "0.0301 of the rows amplified");
    double tout = 0.05;
    o.in.train_out = &tout;
    o.eout = 0.08;
    expect(&o, DIAG_HEALTHY, "0.08 of the rows out, 0.05 in training");
    o.eout = 0.0801;
    expect(&o, DIAG_NEAR_CONSTANT, "0.0801 of the rows out, 0.05 in training");
    o.in.train_out = NULL;
    o.tv = o.rv = 1.0001e-5;
    expect(&o, DIAG_HEALTHY, "the variance just above eps");
    o.tv = o.rv = 1e-6;
    o.in.eval_out = NULL;
    o.in.eval_shift = o.in.eval_scale = o.in.eval_ks = NULL;
    expect(&o, DIAG_NEAR_CONSTANT, "no evaluation data, varies");
    o.tv = 0.0;
    expect(&o, DIAG_HEALTHY, "no evaluation data, constant");
}

/* The distance by counting, for every value of either sample, the
 * share of each at or below it. */
static double brute_ks(const double *a, size_t n, const double *b, size_t m)
{
    double d = 0.0;
    for (size_t k = 0; k < n + m; k++) {
        double v = k < n ? a[k] : b[k - n];
        size_t ca = 0, cb = 0;
        for (size_t i = 0; i < n; i++)
            ca += a[i] <= v;
        for (size_t i = 0; i < m; i++)
            cb += b[i] <= v;
        d = fmax(d, fabs((double)ca / (double)n - (double)cb / (double)m));
    }
    return d;
}

static void test_ks(void **state)
{
    (void)state;
    enum { N = 300, M = 170 };
    double a[N], b[M], scratch[N + M];
    gsl_rng *rng = pcg32_gsl_alloc(5, 3);
    for (int round = 0; round < 4; round++) {
        for (size_t i = 0; i < N; i++)
            a[i] = gsl_ran_gaussian(rng, 1.0);
        for (size_t i = 0; i < M; i++)
            b[i] = 0.3 * round + gsl_ran_gaussian(rng, 1.0 + 0.2 * round);
        /* Rounded to whole numbers on the odd rounds: ties across both. */
        for (size_t i = 0; round % 2 && i < N + M; i++) {
            double *v = i < N ? &a[i] : &b[i - N];
            *v = round * 0.0 + floor(*v * 2.0);
        }
        double want = brute_ks(a, N, b, M);
        assert_true(diag_ks(a, N, b, M, 1, 0, scratch) == want);
    }
    gsl_rng_free(rng);
    double lo[3] = {0, 1, 2}, hi[2] = {5, 6};
    assert_true(diag_ks(lo, 3, hi, 2, 1, 0, scratch) == 1.0);
    assert_true(diag_ks(lo, 3, lo, 3, 1, 0, scratch) == 0.0);
}

/* The error through a feature's cause, against its closed form in long
 * double: the buffers 0.3 spreads off and 1.2 times too narrow, against
 * the training data; the evaluation data 0.5 spreads off and 0.8 times
 * as wide, against their own. */
static void test_effect(void **state)
{
    (void)state;
    one o;
    diag_feature d;
    bn_error err;
    one_init(&o);
    long double sd = sqrtl(4.0L + 1e-5L);
    o.rm = (double)(2.0L + 0.3L * sd);
    o.rv = (double)((4.0L + 1e-5L) / (1.2L * 1.2L) - 1e-5L);
    assert_int_equal(diag_layer_run(&o.in, &d, &err), 0);
    assert_int_equal(d.cause, DIAG_LAGGING);
    long double want = sqrtl(0.2L * 0.2L + (1.2L * 0.3L) * (1.2L * 0.3L));
    assert_true(fabsl((long double)d.effect - want) < 1e-12L);
    /* A constant feature's scale stretches nothing: the lag alone. */
    one_init(&o);
    o.tv = 0.0, o.rv = 3e-5, o.rm = 2.0 + 0.01;
    assert_int_equal(diag_layer_run(&o.in, &d, &err), 0);
    want = 0.01L / sqrtl(3e-5L + 1e-5L);
    assert_true(fabsl((long double)d.effect - want) < 1e-9L * want);
    one_init(&o);
    o.es = 0.5, o.ec = 0.8, o.eks = 0.5;
    assert_int_equal(diag_layer_run(&o.in, &d, &err), 0);
    assert_int_equal(d.cause, DIAG_SHIFT);
    want = sqrtl(0.25L + 0.04L);
    assert_true(fabsl((long double)d.effect - want) < 1e-15L);
}

/* ------------------------------------------------------------ verdict */

enum { MAXF = 64 };
static diag_feature feats[4][MAXF];

/* A layer of f features, the first causes c[0..k-1] with effects e (NULL:
 * 1, material by any measure), the rest healthy. */
static verdict_layer layer_with(const char *name, size_t slot,
                                const diag_cause *c, const double *e,
                                size_t k, size_t f, const verdict_model *m)
{
    for (size_t j = 0; j < f; j++) {
        memset(&feats[slot][j], 0, sizeof feats[slot][j]);
        feats[slot][j].cause = j < k ? c[j] : DIAG_HEALTHY;
        feats[slot][j].effect = j < k && e ? e[j] : 1.0;
    }
    verdict_layer l = {.name = name, .f = f, .d = feats[slot]};
    verdict_layer_sum(&l, m);
    return l;
}

static verdict_layer layer_of(const char *name, size_t slot,
                              const diag_cause *c, size_t f)
{
    return layer_with(name, slot, c, NULL, f, f, NULL);
}

static verdict_model model_of(double train, double eval, double dep)
{
    verdict_model m = {.train_acc = train, .eval_acc = eval,
                       .batch_dependence = dep};
    for (int f = 0; f < DIAG_N_FIXES; f++)
        m.fix_acc[f] = NAN;
    return m;
}

static void test_verdict(void **state)
{
    (void)state;
    const diag_cause h4[] = {DIAG_HEALTHY, DIAG_HEALTHY, DIAG_HEALTHY,
                             DIAG_HEALTHY};
    const diag_cause mixed[] = {DIAG_NEAR_CONSTANT, DIAG_SHIFT, DIAG_SHIFT,
                                DIAG_HEALTHY};
    const diag_cause lag[] = {DIAG_LAGGING, DIAG_HEALTHY, DIAG_HEALTHY,
                              DIAG_HEALTHY};
    verdict_layer l[3] = {layer_of("a", 0, h4, 4), layer_of("b", 1, mixed, 4),
                          layer_of("c", 2, lag, 4)};
    /* A layer's cause is its features' most common. */
    assert_int_equal(l[1].cause, DIAG_SHIFT);
    assert_int_equal(l[1].count[DIAG_NEAR_CONSTANT], 1);
    verdict_model m = model_of(0.95, 0.60, NAN);
    m.fix_acc[DIAG_FIX_ADAPT_EVAL] = 0.921;
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.65;
    verdict v;
    verdict_make(l, 3, &m, &v);
    /* The earliest faulty layer's cause; the later one is downstream. */
    assert_int_equal(v.cause, DIAG_SHIFT);
    assert_int_equal(v.root, 1);
    assert_int_equal(v.with, 1);
    assert_int_equal(v.downstream, 1);
    assert_int_equal(v.fix, DIAG_FIX_ADAPT_EVAL);
    assert_int_equal(v.fix_closes, 1); /* 0.921 >= 0.95 - 0.03 */
    m.fix_acc[DIAG_FIX_ADAPT_EVAL] = 0.919;
    verdict_make(l, 3, &m, &v);
    assert_int_equal(v.fix_closes, 0);
    assert_int_equal(v.best, DIAG_FIX_ADAPT_EVAL);
    assert_int_equal(v.best_closes, 0);
    /* Never filled: the checkpoint's buffers when the dump scored them. */
    const diag_cause nf[] = {DIAG_NEVER_FILLED, DIAG_NEVER_FILLED,
                             DIAG_NEVER_FILLED, DIAG_NEVER_FILLED};
    l[0] = layer_of("a", 0, nf, 4);
    verdict_make(l, 1, &m, &v);
    assert_int_equal(v.fix, DIAG_FIX_RECOMPUTE_TRAIN);
    m.fix_acc[DIAG_FIX_RELOAD] = 0.95;
    verdict_make(l, 1, &m, &v);
    assert_int_equal(v.fix, DIAG_FIX_RELOAD);
    /* Healthy layers: the batch, when the modes were measured to disagree
     * beyond 0.03 and more than 0.03 of the predictions move; training
     * mode above is batch-dependence, evaluation mode above is healthy
     * with the drop beside it (the round-two MLP with dropout: 0.932 and
     * 1.000). */
    l[0] = layer_of("a", 0, h4, 4);
    static const struct {
        double train, eval, dep;
        diag_cause cause;
        int drop;
    } bd[] = {{0.93, 0.80, 0.0301, DIAG_BATCH_DEPENDENCE, 0},
              {0.80, 0.93, 0.0301, DIAG_BATCH_DEPENDENCE, 1},
              {0.932, 1.0, 0.091, DIAG_BATCH_DEPENDENCE, 1},
              {0.93, 0.80, 0.03, DIAG_HEALTHY, 0},
              {0.80, 0.93, 0.03, DIAG_HEALTHY, 0}};
    verdict_model b;
    for (size_t k = 0; k < sizeof bd / sizeof bd[0]; k++) {
        b = model_of(bd[k].train, bd[k].eval, bd[k].dep);
        verdict_make(l, 1, &b, &v);
        assert_int_equal(v.cause, bd[k].cause);
        assert_int_equal(v.batch_drop, bd[k].drop);
    }
    b = model_of(0.93, 0.91, 0.2);
    verdict_make(l, 1, &b, &v);
    assert_int_equal(v.cause, DIAG_HEALTHY); /* within 0.03 */
    b = model_of(NAN, NAN, 0.2);
    verdict_make(l, 1, &b, &v);
    assert_int_equal(v.cause, DIAG_HEALTHY); /* nothing measured to explain */
}

static verdict_model model_of(double train, double eval, double dep);

/* A cause found by its features' size is material when the error they
 * add to the layer's outputs, sqrt(sum e^2 / f), exceeds DIAG_MATERIAL:
 * one lagging feature of f = 32 at e = 0.1 sqrt(32) (computed here in
 * long double) on either side; or when the dump measured the gap and
 * the cause's own fix closing it. A layer's or test's own cause needs
 * no size. */
static void test_material(void **state)
{
    (void)state;
    const diag_cause lag[2] = {DIAG_LAGGING, DIAG_LAGGING};
    long double edge = 0.1L * sqrtl(32.0L);
    double e[2] = {(double)(edge * (1.0L + 1e-9L)), 0.0};
    verdict_layer l = layer_with("a", 0, lag, e, 1, 32, NULL);
    assert_int_equal(l.cause, DIAG_LAGGING);
    e[0] = (double)(edge * (1.0L - 1e-9L));
    l = layer_with("a", 0, lag, e, 1, 32, NULL);
    assert_int_equal(l.cause, DIAG_HEALTHY);
    assert_int_equal(l.count[DIAG_LAGGING], 1);
    assert_false(l.material & (1u << DIAG_LAGGING));
    /* Two features: their squares add. */
    e[0] = e[1] = (double)(edge / sqrtl(2.0L) * (1.0L + 1e-9L));
    l = layer_with("a", 0, lag, e, 2, 32, NULL);
    assert_int_equal(l.cause, DIAG_LAGGING);
    /* Measured: evaluation mode 0.05 behind, recomputing measured to
     * close it; not when it does not, nor without a gap. */
    e[0] = e[1] = 0.01;
    verdict_model m = model_of(0.95, 0.90, 0.0);
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.94;
    l = layer_with("a", 0, lag, e, 2, 32, &m);
    assert_int_equal(l.cause, DIAG_LAGGING);
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.90;
    l = layer_with("a", 0, lag, e, 2, 32, &m);
    assert_int_equal(l.cause, DIAG_HEALTHY);
    m = model_of(0.95, 0.93, 0.0);
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.95;
    l = layer_with("a", 0, lag, e, 2, 32, &m);
    assert_int_equal(l.cause, DIAG_HEALTHY);
    /* Material by size, measured to cost nothing: recompute-train
     * raises evaluation mode by 0.03 or less and the modes agree within
     * 0.03: a note, not the cause. Each side of the edge; a fix that
     * lowers evaluation mode, by a little or by much, gains nothing. */
    e[0] = e[1] = 1.0;
    const double moved[] = {0.929, 0.871, 0.869, 0.5, 0.931};
    for (size_t k = 0; k < 5; k++) {
        m = model_of(0.92, 0.90, 0.0);
        m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = moved[k];
        l = layer_with("a", 0, lag, e, 2, 32, &m);
        assert_int_equal(l.cause, k < 4 ? DIAG_HEALTHY : DIAG_LAGGING);
        assert_int_equal(l.harmless, k < 4 ? 1u << DIAG_LAGGING : 0u);
    }
    const double train[] = {0.929, 0.871, 0.931, 0.869};
    for (size_t k = 0; k < 4; k++) {
        m = model_of(train[k], 0.90, 0.0);
        m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.90;
        l = layer_with("a", 0, lag, e, 2, 32, &m);
        assert_int_equal(l.cause, k < 2 ? DIAG_HEALTHY : DIAG_LAGGING);
    }
    /* Not measured: the size rule stands. */
    m = model_of(0.92, 0.90, 0.0);
    l = layer_with("a", 0, lag, e, 2, 32, &m);
    assert_int_equal(l.cause, DIAG_LAGGING);
    /* The verdict notes it; shift, whose fact is the data's, and the
     * layer's own causes are not judged so. */
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.91;
    verdict_layer two[2] = {layer_of("a", 0, (const diag_cause[]){
                                DIAG_HEALTHY}, 1),
                            layer_with("b", 1, lag, e, 2, 32, &m)};
    verdict v;
    verdict_make(two, 2, &m, &v);
    assert_int_equal(v.cause, DIAG_HEALTHY);
    assert_int_equal(v.note, DIAG_LAGGING);
    assert_int_equal(v.note_root, 1);
    assert_int_equal(v.note_with, 1);
    const diag_cause sh[2] = {DIAG_SHIFT, DIAG_SHIFT};
    m.fix_acc[DIAG_FIX_ADAPT_EVAL] = 0.91;
    l = layer_with("a", 0, sh, e, 2, 32, &m);
    assert_int_equal(l.cause, DIAG_SHIFT);
    const diag_cause fr[2] = {DIAG_FROZEN, DIAG_FROZEN};
    l = layer_with("a", 0, fr, e, 2, 32, &m);
    assert_int_equal(l.cause, DIAG_FROZEN);
    /* Masking-mismatch is judged by its own fix, recompute-real: the
     * scenario suite's nn.BatchNorm1d over sequences padded twice as
     * long for evaluation (0.890 in training mode, 0.882 in evaluation
     * mode, 0.265 with the real positions' statistics, which its weights
     * never saw) costs nothing measured; the same modes with the fix
     * unscored, or 0.04 apart, name it. */
    const diag_cause mk[2] = {DIAG_MASKING, DIAG_MASKING};
    static const struct {
        double train, real;
        diag_cause want;
    } mc[] = {{0.890, 0.265, DIAG_HEALTHY},
              {0.890, NAN, DIAG_MASKING},
              {0.842, 0.265, DIAG_MASKING}};
    for (size_t k = 0; k < sizeof mc / sizeof mc[0]; k++) {
        m = model_of(mc[k].train, 0.882, 0.0);
        m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.927; /* not masking's */
        m.fix_acc[DIAG_FIX_RECOMPUTE_REAL] = mc[k].real;
        l = layer_with("a", 0, mk, e, 2, 32, &m);
        assert_int_equal(l.cause, mc[k].want);
        assert_int_equal(l.harmless,
                         mc[k].want == DIAG_HEALTHY ? 1u << DIAG_MASKING : 0u);
    }
    /* One near-constant feature of 64, with no error on the training
     * data, is the layer's: its test counts evaluation rows. */
    const diag_cause nc[1] = {DIAG_NEAR_CONSTANT};
    double zero[1] = {0.0};
    l = layer_with("a", 0, nc, zero, 1, 64, NULL);
    assert_int_equal(l.cause, DIAG_NEAR_CONSTANT);
    const diag_cause ne[1] = {DIAG_NOT_EXCHANGEABLE};
    l = layer_with("a", 0, ne, zero, 1, 64, NULL);
    assert_int_equal(l.cause, DIAG_NOT_EXCHANGEABLE);
    /* A material minority outvotes an immaterial majority. */
    const diag_cause mix[3] = {DIAG_FEW_UPDATES, DIAG_LAGGING,
                               DIAG_LAGGING};
    double em[3] = {1.0, 0.01, 0.01};
    l = layer_with("a", 0, mix, em, 3, 16, NULL);
    assert_int_equal(l.cause, DIAG_FEW_UPDATES);
}

/* A fix closes the gap two-sidedly: evaluation mode was more than 0.03
 * behind, and the fix leaves it within 0.03 of training mode or above;
 * with evaluation mode at or above training mode nothing closes, and a
 * fix that leaves it more than 0.03 below itself lowers it. The fix
 * recommended is the cause's own where it closes, else the best one that
 * does. */
static void test_closes(void **state)
{
    (void)state;
    verdict_model m = model_of(0.95, 0.60, NAN);
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.921;
    assert_int_equal(verdict_closes(&m, DIAG_FIX_RECOMPUTE_TRAIN), 1);
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.919;
    assert_int_equal(verdict_closes(&m, DIAG_FIX_RECOMPUTE_TRAIN), 0);
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 1.0; /* above: closed */
    assert_int_equal(verdict_closes(&m, DIAG_FIX_RECOMPUTE_TRAIN), 1);
    assert_int_equal(verdict_closes(&m, DIAG_FIX_EPS), -1); /* unscored */
    /* A frozen fine-tune: evaluation mode 0.976 above training's 0.842;
     * recomputing gives 0.850: it closes nothing and lowers it. */
    m = model_of(0.842, 0.976, NAN);
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.850;
    m.fix_acc[DIAG_FIX_EPS] = 0.9465;
    assert_int_equal(verdict_closes(&m, DIAG_FIX_RECOMPUTE_TRAIN), -1);
    assert_true(verdict_lowers(&m, DIAG_FIX_RECOMPUTE_TRAIN));
    assert_false(verdict_lowers(&m, DIAG_FIX_EPS)); /* within 0.03 */
    const diag_cause fr[1] = {DIAG_FROZEN};
    verdict_layer l = layer_of("a", 0, fr, 1);
    verdict v;
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.cause, DIAG_FROZEN);
    assert_int_equal(v.recommended, DIAG_FIX_NONE);
    /* Not-exchangeable, a per-class sampler's, its classes grouped
     * (label_exchange past DIAG_LABEL_EXCHANGE): adapt-eval measured to
     * bring evaluation mode within 0.03 of a poor training mode is a
     * stopgap, never the fix (retraining shuffled is); without that
     * evidence (no labels, or classes as random batches', its edge) the
     * measured fix is recommended first, retraining after it; for shift,
     * the same numbers recommend it. */
    const diag_cause ne[1] = {DIAG_NOT_EXCHANGEABLE};
    l = layer_of("a", 0, ne, 1);
    m = model_of(0.492, 0.332, NAN);
    m.fix_acc[DIAG_FIX_ADAPT_EVAL] = 0.479;
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.445;
    m.label_exchange = nextafter(DIAG_LABEL_EXCHANGE, INFINITY);
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.cause, DIAG_NOT_EXCHANGEABLE);
    assert_int_equal(v.best_closes, 1);
    assert_int_equal(v.recommended, DIAG_FIX_NONE);
    assert_int_equal(v.stopgap, DIAG_FIX_ADAPT_EVAL);
    assert_int_equal(v.retrain_after, 0);
    const double ungrouped[] = {NAN, DIAG_LABEL_EXCHANGE, 1.0};
    for (size_t k = 0; k < 3; k++) {
        m.label_exchange = ungrouped[k];
        verdict_make(&l, 1, &m, &v);
        assert_int_equal(v.recommended, DIAG_FIX_ADAPT_EVAL);
        assert_int_equal(v.stopgap, DIAG_FIX_NONE);
        assert_int_equal(v.retrain_after, 1);
    }
    /* A run's own order (bnstudy's classifier) measures no labels' ratio,
     * and needs none: the population does not move, so the spread is the
     * order's grouping, and the measured fix is a stopgap again. */
    m.label_exchange = NAN;
    m.order_made = 1;
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.recommended, DIAG_FIX_NONE);
    assert_int_equal(v.stopgap, DIAG_FIX_ADAPT_EVAL);
    assert_int_equal(v.retrain_after, 0);
    m.order_made = 0;
    const diag_cause sh[1] = {DIAG_SHIFT};
    l = layer_of("a", 0, sh, 1);
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.recommended, DIAG_FIX_ADAPT_EVAL);
    assert_int_equal(v.stopgap, DIAG_FIX_NONE);
    /* Near-constant: eps measured not to close, adapt-eval to: that one
     * is recommended. */
    const diag_cause nc[1] = {DIAG_NEAR_CONSTANT};
    l = layer_of("a", 0, nc, 1);
    m = model_of(0.968, 0.147, NAN);
    m.fix_acc[DIAG_FIX_EPS] = 0.393;
    m.fix_acc[DIAG_FIX_ADAPT_EVAL] = 0.976;
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.147;
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.fix, DIAG_FIX_EPS);
    assert_int_equal(v.fix_closes, 0);
    assert_int_equal(v.recommended, DIAG_FIX_ADAPT_EVAL);
    m.fix_acc[DIAG_FIX_EPS] = 0.95;
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.recommended, DIAG_FIX_EPS); /* its own, closing */
    m.fix_acc[DIAG_FIX_EPS] = m.fix_acc[DIAG_FIX_ADAPT_EVAL] = 0.5;
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.recommended, DIAG_FIX_NONE);
    /* Evaluation mode at or above training mode: a fix measured more
     * than 0.03 above it raises it (each side of the edge), and is
     * recommended, the cause's own first, else the best that does; not
     * for a cause whose fix is to retrain. */
    m = model_of(0.845, 0.882, NAN);
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.9125;
    m.fix_acc[DIAG_FIX_RECOMPUTE_REAL] = 0.265;
    assert_true(verdict_raises(&m, DIAG_FIX_RECOMPUTE_TRAIN));
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.9115;
    assert_false(verdict_raises(&m, DIAG_FIX_RECOMPUTE_TRAIN));
    assert_false(verdict_raises(&m, DIAG_FIX_EPS)); /* unscored */
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.927;
    const diag_cause mk[1] = {DIAG_MASKING};
    l = layer_of("a", 0, mk, 1);
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.recommended, DIAG_FIX_RECOMPUTE_TRAIN);
    m.fix_acc[DIAG_FIX_RECOMPUTE_REAL] = 0.95;
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.recommended, DIAG_FIX_RECOMPUTE_REAL);
    m.fix_acc[DIAG_FIX_RECOMPUTE_REAL] = 0.265;
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.90;
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.recommended, DIAG_FIX_NONE); /* kept */
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.927;
    l = layer_of("a", 0, ne, 1);
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.recommended, DIAG_FIX_NONE);
    assert_int_equal(v.stopgap, DIAG_FIX_NONE);
    m = model_of(0.95, 0.90, NAN); /* a gap: closing, not raising */
    m.fix_acc[DIAG_FIX_RECOMPUTE_TRAIN] = 0.99;
    assert_false(verdict_raises(&m, DIAG_FIX_RECOMPUTE_TRAIN));
}

/* Few-updates and lagging at once: after 5 updates the initial 0 and 1
 * weigh w = 0.9^5 = 0.59; buffers pulled off by them alone, w m0 + (1 - w) mu
 * and w v0 + (1 - w) t, are few-updates and nothing else; moved a further
 * 0.5 or 1 of the spread (beyond the mean's limit, 4 sqrt(0.1 / 19) =
 * 0.29), they lag as well, by an effect of that times the scale; moved
 * 0.25 (inside it), they do not. The layer lags beside few-updates only
 * where the lag outweighs what the initial values alone make of the
 * feature, sqrt((s0 - 1)^2 + (s0 w mu / sd)^2) with s0 = sqrt(t / (w v0
 * + (1 - w) t), eps in both): 0.86 here, so 1 does and 0.5 does not. */
static void test_few_updates_and_lagging(void **state)
{
    (void)state;
    one o;
    one_init(&o);
    o.in.updates = o.in.tracked = 5;
    long double w = powl(0.9L, 5.0L), sd = sqrtl(4.0L + 1e-5L);
    long double rv = w + (1.0L - w) * 4.0L;
    o.rv = (double)rv;
    /* What the initial values do not explain of the variance: none, so
     * the rest's scale is 1. */
    long double scale = 1.0L;
    long double s0 = sqrtl((4.0L + 1e-5L) / (w + (1.0L - w) * 4.0L + 1e-5L));
    long double init = sqrtl((s0 - 1.0L) * (s0 - 1.0L) +
                             s0 * s0 * w * w * 4.0L / (sd * sd));
    static const struct {
        double lag;
        int flag, lags;
    } cases[] = {{0.0, 0, 0}, {0.25, 0, 0}, {0.5, 1, 0}, {1.0, 1, 1}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        o.rm = (double)((1.0L - w) * 2.0L - cases[k].lag * sd);
        diag_feature d;
        assert_int_equal(diag_layer_run(&o.in, &d, NULL), 0);
        assert_int_equal(d.cause, DIAG_FEW_UPDATES);
        assert_int_equal(!!(d.flags & 1u << DIAG_LAGGING), cases[k].flag);
        assert_close(d.rest_shift, -cases[k].lag, 1e-9, 1.0);
        assert_close(d.lag_effect,
                     cases[k].flag ? (double)(cases[k].lag * scale) : 0.0,
                     1e-9, 1.0);
        assert_close(d.init_effect, cases[k].flag ? (double)init : 0.0, 1e-9,
                     1.0);
        verdict_layer l = {.name = "a", .f = 1, .d = &d};
        verdict_layer_sum(&l, NULL);
        verdict v;
        verdict_model m = {.train_acc = NAN, .eval_acc = NAN,
                           .batch_dependence = NAN,
                           .fix_acc = {NAN, NAN, NAN, NAN, NAN}};
        verdict_make(&l, 1, &m, &v);
        assert_int_equal(v.cause, DIAG_FEW_UPDATES);
        assert_int_equal(v.lags_too, (size_t)cases[k].lags);
    }
}

/* Poor in both modes: the better less than half-way from the majority
 * class's share to 1, (a - r) / (1 - r) < 0.5, i.e. a < (1 + r) / 2: at
 * r = 0.4 the edge is 0.7, tried a hair either side; with the share not
 * measured (NaN, or a record's 0) nothing is said. */
static void test_poor(void **state)
{
    (void)state;
    verdict_model m = {.train_acc = 0.6999, .eval_acc = 0.5,
                       .batch_dependence = NAN, .majority = 0.4};
    assert_true(verdict_poor(&m));
    m.train_acc = 0.7001;
    assert_false(verdict_poor(&m));
    m.train_acc = 0.5, m.eval_acc = 0.6999; /* the better of the two */
    assert_true(verdict_poor(&m));
    m.eval_acc = 0.7001;
    assert_false(verdict_poor(&m));
    m.eval_acc = 0.3, m.majority = NAN;
    assert_false(verdict_poor(&m));
    m.majority = 0.0;
    assert_false(verdict_poor(&m));
    m.majority = 0.4, m.train_acc = NAN;
    assert_false(verdict_poor(&m));
}

/* Every cause's row is filled, named once, and says its fix (and, with
 * one, its reason for keeping evaluation mode). */
static void test_table(void **state)
{
    (void)state;
    for (int c = 0; c < DIAG_N_CAUSES; c++) {
        const diag_cause_info *i = diag_cause_get((diag_cause)c);
        assert_int_equal(i->cause, c);
        assert_true(i->name && i->words && i->threshold && i->fix);
        assert_true(i->material <= DIAG_BY_EFFECT);
        /* A cause with a fix says why evaluation mode may be kept. */
        assert_true(i->fix_id == DIAG_FIX_NONE || i->keep);
        for (int k = 0; k < c; k++)
            assert_string_not_equal(diag_cause_get((diag_cause)k)->name,
                                    i->name);
    }
    assert_null(diag_cause_get(DIAG_N_CAUSES));
    assert_null(diag_fix_name(DIAG_N_FIXES));
    for (int f = 0; f < DIAG_N_FIXES; f++) {
        const diag_fix_info *x = diag_fix_get((diag_fix)f);
        assert_int_equal(x->fix, f);
        assert_true(x->name && x->words);
    }
}

/* Padding's effect against the rows themselves: 7 real rows and 3 of
 * padding (values of their own), pooled by brute force in long double,
 * against diag_padded_moments' closed form at pi = 3/10. */
static void test_padded_moments(void **state)
{
    (void)state;
    const double real[7] = {1.5, 2.25, -0.5, 3.0, 2.0, 0.75, 4.5};
    const double pad[3] = {0.0, 0.25, -0.125};
    long double all[10], sum = 0.0L, ss = 0.0L;
    for (int i = 0; i < 10; i++) {
        all[i] = i < 7 ? real[i] : pad[i - 7];
        sum += all[i];
    }
    long double mean = sum / 10.0L;
    for (int i = 0; i < 10; i++)
        ss += (all[i] - mean) * (all[i] - mean);
    double mr = 0, vr = 0, mp = 0, vp = 0, m, v;
    for (int i = 0; i < 7; i++)
        mr += real[i] / 7.0;
    for (int i = 0; i < 7; i++)
        vr += (real[i] - mr) * (real[i] - mr) / 7.0;
    for (int i = 0; i < 3; i++)
        mp += pad[i] / 3.0;
    for (int i = 0; i < 3; i++)
        vp += (pad[i] - mp) * (pad[i] - mp) / 3.0;
    diag_padded_moments(0.3, mr, vr, mp, vp, &m, &v);
    assert_close(m, (double)mean, 1e-15, 1.0);
    assert_close(v, (double)(ss / 10.0L), 1e-14, 1.0);
}

/* One feature over padded sequences: real positions of mean 4 and
 * variance 4, padding of zeros, the training rows padded at pi = 0.4.
 * The closed form for buffers that average every position, computed
 * here in long double: (1 - pi) 4 and (1 - pi) 4 + pi (1 - pi) 16. */
typedef struct {
    one o;
    double rmean, rvar, pmean, pvar;
} padded_one;

static long double mix_mean(long double pi)
{
    return (1.0L - pi) * 4.0L;
}

static long double mix_var(long double pi)
{
    return (1.0L - pi) * 4.0L + pi * (1.0L - pi) * 16.0L;
}

static void padded_init(padded_one *p, int norm_real, double pad_eval)
{
    one_init(&p->o);
    p->rmean = 4.0, p->rvar = 4.0, p->pmean = 0.0, p->pvar = 0.0;
    p->o.in.real_mean = &p->rmean;
    p->o.in.real_var = &p->rvar;
    p->o.in.pad_mean = &p->pmean;
    p->o.in.pad_var = &p->pvar;
    p->o.in.pad_train = 0.4;
    p->o.in.pad_eval = pad_eval;
    p->o.in.norm_real = norm_real;
    /* The buffers average every position at the training share. */
    p->o.rm = (double)mix_mean(0.4L);
    p->o.rv = (double)mix_var(0.4L);
    if (!norm_real) { /* nn.BatchNorm1d: the padded rows are the data */
        p->o.tm = p->o.rm;
        p->o.tv = p->o.rv;
    }
}

/* The hand-written masked layer whose buffers take the padding in:
 * masking-mismatch, the buffers within the mean's limit of the closed
 * form at the training share (the edge held here on both sides), and
 * healthy once the buffers are the real positions' own. */
static void test_masking_real(void **state)
{
    (void)state;
    padded_one p;
    padded_init(&p, 1, 0.4);
    expect(&p.o, DIAG_MASKING, "padded buffers, masked training");
    diag_feature d;
    bn_error err;
    assert_int_equal(diag_layer_run(&p.o.in, &d, &err), 0);
    long double sd = sqrtl(4.0L + 1e-5L);
    assert_close(d.pad_shift, (double)((mix_mean(0.4L) - 4.0L) / sd), 1e-14,
                 1.0);
    assert_close(d.pad_scale,
                 (double)sqrtl((4.0L + 1e-5L) / (mix_var(0.4L) + 1e-5L)),
                 1e-14, 1.0);
    /* The mean's limit here: 4 sqrt(p / ((2 - p) B)), above 0.1. */
    long double lim = 4.0L * sqrtl(q_noise());
    long double msd = sqrtl(mix_var(0.4L) + 1e-5L);
    p.o.rm = (double)(mix_mean(0.4L) + lim * msd * (1.0L - 1e-9L));
    expect(&p.o, DIAG_MASKING, "just within the closed form's limit");
    p.o.rm = (double)(mix_mean(0.4L) + lim * msd * (1.0L + 1e-9L));
    expect(&p.o, DIAG_LAGGING, "beyond what the padding explains");
    p.o.rm = 4.0, p.o.rv = 4.0;
    expect(&p.o, DIAG_HEALTHY, "the real positions' own buffers");
    p.o.in.norm_real = -1;
    p.o.rm = (double)mix_mean(0.4L), p.o.rv = (double)mix_var(0.4L);
    p.o.tm = p.o.rm, p.o.tv = p.o.rv;
    expect(&p.o, DIAG_HEALTHY, "positions unknown: no masking test");
}

/* nn.BatchNorm1d on the padded tensor in both modes: consistent while
 * the evaluation batches pad the training share; masking-mismatch once
 * training mode, at the evaluation share, normalises with a closed form
 * the buffers are off from by more than the mean's limit (the edge in
 * pi found here from the closed form in long double: the shift
 * (m(0.4) - m(pi)) / sqrt(v(pi) + eps) at the limit). */
static void test_masking_padded(void **state)
{
    (void)state;
    padded_one p;
    padded_init(&p, 0, 0.4);
    expect(&p.o, DIAG_HEALTHY, "the same padded share in both modes");
    long double lim = 4.0L * sqrtl(q_noise()), lo = 0.4L, hi = 0.99L;
    for (int k = 0; k < 200; k++) {
        long double mid = (lo + hi) / 2.0L;
        long double sh = (mix_mean(0.4L) - mix_mean(mid)) /
                         sqrtl(mix_var(mid) + 1e-5L);
        if (sh > lim)
            hi = mid;
        else
            lo = mid;
    }
    /* The scale stays within 0.1 at this edge: the mean decides. */
    assert_true(fabsl(sqrtl((mix_var(lo) + 1e-5L) /
                            (mix_var(0.4L) + 1e-5L)) - 1.0L) < 0.1L);
    padded_init(&p, 0, (double)(lo * (1.0L - 1e-9L)));
    expect(&p.o, DIAG_HEALTHY, "just within");
    padded_init(&p, 0, (double)(lo * (1.0L + 1e-9L)));
    expect(&p.o, DIAG_MASKING, "just beyond");
    padded_init(&p, 0, NAN);
    expect(&p.o, DIAG_HEALTHY, "the evaluation share unknown");
}

/* Per-device statistics: the model's, where every layer is healthy (or
 * only the batch is blamed), K > 1, training mode at B/K more than 0.03
 * from evaluation mode and training mode at B within 0.03 of it. */
static void test_per_device(void **state)
{
    (void)state;
    const diag_cause h4[] = {DIAG_HEALTHY, DIAG_HEALTHY, DIAG_HEALTHY,
                             DIAG_HEALTHY};
    verdict_layer l = layer_of("a", 0, h4, 4);
    verdict_model m = model_of(0.80, 0.93, 0.2);
    m.devices = 8;
    m.sync_acc = 0.91;
    verdict v;
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.cause, DIAG_DEVICES);
    assert_int_equal(v.recommended, DIAG_FIX_NONE);
    /* Otherwise evaluation mode above training mode is batch-dependence,
     * the training-mode drop said beside it (batch_verdict). */
    m.sync_acc = 0.8999; /* 0.0301 from evaluation mode */
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.cause, DIAG_BATCH_DEPENDENCE);
    assert_true(v.batch_drop);
    m.sync_acc = 0.91, m.devices = 1;
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.cause, DIAG_BATCH_DEPENDENCE);
    assert_true(v.batch_drop);
    m.devices = 8, m.train_acc = 0.91; /* within 0.03: no gap */
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.cause, DIAG_HEALTHY);
    assert_false(v.batch_drop);
    m.train_acc = 0.80, m.sync_acc = NAN; /* not measured */
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.cause, DIAG_BATCH_DEPENDENCE);
    assert_true(v.batch_drop);
    /* Training mode above evaluation mode at B/K: still the devices. */
    m.train_acc = 0.97, m.sync_acc = 0.92;
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.cause, DIAG_DEVICES);
    m.devices = 1;
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.cause, DIAG_BATCH_DEPENDENCE);
    m.devices = 8, m.train_acc = 0.80;
    /* A layer's own cause stands. */
    const diag_cause sh[] = {DIAG_SHIFT, DIAG_SHIFT, DIAG_SHIFT, DIAG_SHIFT};
    l = layer_of("a", 0, sh, 4);
    m.sync_acc = 0.91;
    verdict_make(&l, 1, &m, &v);
    assert_int_equal(v.cause, DIAG_SHIFT);
}

int test_verdict_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mean_limit),
        cmocka_unit_test(test_few_updates_and_lagging),
        cmocka_unit_test(test_dropout_shift),
        cmocka_unit_test(test_poor),
        cmocka_unit_test(test_variance_limit),
        cmocka_unit_test(test_buffer_causes),
        cmocka_unit_test(test_eval_causes),
        cmocka_unit_test(test_ks),
        cmocka_unit_test(test_effect),
        cmocka_unit_test(test_verdict),
        cmocka_unit_test(test_material),
        cmocka_unit_test(test_closes),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_padded_moments),
        cmocka_unit_test(test_masking_real),
        cmocka_unit_test(test_masking_padded),
        cmocka_unit_test(test_per_device),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("verdict", tests, NULL, NULL);
}
