/*
 * Orders and whole runs (docs/definitions.md, "Orders and batches" and
 * "Scores"): every order is a permutation that feeds the run the
 * enumerated rows, sorted orders are
 * sorted and stable, shuffles depend on the seed alone; every score of a
 * run is recomputed here in long double from the rows the run reports it
 * trained on and from a truth computed here; and the four self-checks pass
 * while the train/eval gap stays large, yet do fail on doctored output.
 */
#include "helpers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "base/carve.h"
#include "pop/drift.h"
#include "model/order.h"
#include "base/pcg32.h"
#include "model/score.h"
#include "model/seqlayer.h"
#include "pop/popfile.h"

static void make_order(const pop_t *pop, const char *name, uint64_t seed,
                       size_t *perm)
{
    order_spec ord;
    bn_error err;
    if (order_parse(name, pop, &ord, &err) != 0)
        fail_msg("order_parse(%s): %s", name, err.msg);
    if (order_make(&ord, pop, seed, perm, &err) != 0)
        fail_msg("order_make(%s): %s", name, err.msg);
}

static void assert_permutation(const size_t *perm, size_t n)
{
    unsigned char *seen = calloc(n, 1);
    assert_non_null(seen);
    for (size_t k = 0; k < n; k++) {
        if (perm[k] >= n || seen[perm[k]])
            fail_msg("position %zu: row %zu out of range or repeated", k,
                     perm[k]);
        seen[perm[k]] = 1;
    }
    free(seen);
}

static void test_orders_feed_a_permutation_of_the_rows(void **state)
{
    (void)state;
    static const char *const names[] = {"as-is", "shuffled", "sorted",
                                        "sorted:f3", "sorted-desc:f6"};
    pop_t pop;
    default_pop(&pop);
    size_t n = pop.n, f = pop.f, perm[512];
    for (size_t o = 0; o < sizeof names / sizeof names[0]; o++) {
        make_order(&pop, names[o], 5, perm);
        assert_permutation(perm, n);
        if (o == 0)
            for (size_t k = 0; k < n; k++)
                assert_int_equal(perm[k], k);
        /* The run trains on that order, batch by batch, and its inputs
         * are the enumerated rows themselves. */
        run_config cfg;
        run_default_config(&cfg);
        set_order(&cfg, names[o]);
        cfg.seed = 5;
        cfg.batch_size = 64;
        recorder rec;
        run_observer obs = recorder_observer(&rec);
        run_result res;
        run_or_fail(&pop, &cfg, &obs, &res);
        assert_int_equal(rec.n, 8);
        for (size_t t = 0; t < rec.n; t++) {
            const rec_batch *b = &rec.batches[t];
            assert_int_equal(b->index, t);
            assert_int_equal(b->b, 64);
            for (size_t i = 0; i < b->b; i++) {
                assert_int_equal(b->rows[i], perm[t * 64 + i]);
                assert_memory_equal(&b->x[i * f], &pop.x[b->rows[i] * f],
                                    f * sizeof(double));
            }
        }
        run_result_free(&res);
        recorder_free(&rec);
    }
    pop_free(&pop);
}

/* ---- every order row against a permutation made here ---- */

#define REF_N 24  /* rows: 6 samples of 4 for shuffled-samples */

/* GSL's Fisher-Yates on PCG32(seed, 2), on v[0..n-1]. */
static void gsl_shuffle(gsl_rng *r, size_t *v, size_t n)
{
    gsl_ran_shuffle(r, v, n, sizeof *v);
}

/* Stable rank of row i by feature j: rows below it, and tied rows before
 * it; descending counts those above. Counted, not sorted. */
static size_t stable_rank(const pop_t *pop, size_t j, size_t i, int desc)
{
    size_t r = 0;
    double v = pop->x[i * pop->f + j];
    for (size_t k = 0; k < pop->n; k++) {
        double w = pop->x[k * pop->f + j];
        r += (desc ? w > v : w < v) || (w == v && k < i);
    }
    return r;
}

static void by_rank(const pop_t *pop, size_t j, int desc, size_t *want)
{
    for (size_t i = 0; i < pop->n; i++)
        want[stable_rank(pop, j, i, desc)] = i;
}

/* The rows by level of fac, each level's in their order, then each
 * level's rows shuffled in turn from one stream. */
static void by_levels(const pop_factor *fac, size_t n, gsl_rng *r,
                      size_t *want)
{
    size_t t = 0;
    for (size_t g = 0; g < fac->n_levels; g++) {
        size_t lo = t;
        for (size_t i = 0; i < n; i++)
            if (fac->of_row[i] == g)
                want[t++] = i;
        gsl_shuffle(r, want + lo, t - lo);
    }
}

static void ref_order(const char *name, const pop_t *pop,
                      const order_spec *o, gsl_rng *r, size_t *want)
{
    size_t n = pop->n;
    for (size_t i = 0; i < n; i++)
        want[i] = i;
    if (strcmp(name, "shuffled") == 0) {
        gsl_shuffle(r, want, n);
    } else if (strcmp(name, "sorted") == 0) {
        by_rank(pop, o->feature, 0, want);
    } else if (strcmp(name, "sorted-desc") == 0) {
        by_rank(pop, o->feature, 1, want);
    } else if (strcmp(name, "grouped") == 0) {
        for (size_t g = 0; g < o->groups; g++)
            gsl_shuffle(r, want + g * n / o->groups,
                        (g + 1) * n / o->groups - g * n / o->groups);
    } else if (strcmp(name, "interleaved") == 0) {
        /* Batch k of nb holds ranks k, k + nb, ... of the first feature,
         * stretched over all n when a partial batch is left over; the
         * rest follow in rank order. */
        size_t b = o->batch_size, nb = n / b, m = nb * b, sorted[REF_N];
        unsigned char used[REF_N] = {0};
        by_rank(pop, 0, 0, sorted);
        for (size_t k = 0; k < nb; k++)
            for (size_t i = 0; i < b; i++) {
                size_t pos = (i * nb + k) * n / m;
                want[k * b + i] = sorted[pos];
                used[pos] = 1;
            }
        for (size_t pos = 0, t = m; pos < n; pos++)
            if (!used[pos])
                want[t++] = sorted[pos];
    } else if (strcmp(name, "by-label") == 0) {
        by_levels(&pop->label, n, r, want);
    } else if (strcmp(name, "by-group") == 0) {
        by_levels(&pop->group, n, r, want);
    } else if (strcmp(name, "shuffled-samples") == 0) {
        size_t hw = pop->sample_rows, ids[REF_N];
        for (size_t q = 0; q < n / hw; q++)
            ids[q] = q;
        gsl_shuffle(r, ids, n / hw);
        for (size_t q = 0; q < n / hw; q++)
            for (size_t i = 0; i < hw; i++)
                want[q * hw + i] = ids[q] * hw + i;
    } else if (strcmp(name, "as-is") != 0) {
        fail_msg("order %s has no reference permutation: add one to "
                 "ref_order in tests/test_run.c",
                 name);
    }
}

/* Every row of the order table makes, at two seeds, the permutation
 * ref_order makes by the order's definition (docs/definitions.md), on 24
 * rows with tied values, a label and a group column and samples of 4
 * rows; a row's name with its argument: a feature (the second, tied),
 * 5 groups, batches of 5. */
static void test_every_order_against_its_reference(void **state)
{
    (void)state;
    double x[REF_N * 2];
    size_t lab[REF_N], grp[REF_N];
    for (size_t i = 0; i < REF_N; i++) {
        x[i * 2] = (double)((i * 7) % 11) - 0.5 * (double)(i % 3);
        x[i * 2 + 1] = (double)((i * 5) % 4);
        lab[i] = (i * 5 + 1) % 3;
        grp[i] = (i / 3) % 4;
    }
    char *names[] = {"a", "b"}, *levels[] = {"l0", "l1", "l2", "l3"};
    char label[] = "class", group[] = "user";
    pop_t pop = {.n = REF_N, .f = 2, .x = x, .names = names,
                 .label = {.column = label, .n_levels = 3, .levels = levels,
                           .of_row = lab},
                 .group = {.column = group, .n_levels = 4, .levels = levels,
                           .of_row = grp},
                 .sample_rows = 4};
    for (size_t i = 0; order_get(i); i++) {
        const order_def *d = order_get(i);
        char name[64];
        snprintf(name, sizeof name, "%s%s", d->name,
                 d->arg == ORDER_ARG_FEATURE ? ":b"
                 : d->arg == ORDER_ARG_COUNT ? ":5"
                                             : "");
        order_spec o;
        bn_error err;
        if (order_parse(name, &pop, &o, &err) != 0)
            fail_msg("%s: %s", name, err.msg);
        o.batch_size = 5;
        for (uint64_t seed = 1; seed <= 7; seed += 6) {
            size_t got[REF_N], want[REF_N];
            for (size_t k = 0; k < REF_N; k++)
                got[k] = k;
            if (order_make(&o, &pop, seed, got, &err) != 0)
                fail_msg("%s: %s", name, err.msg);
            gsl_rng *r = pcg32_gsl_alloc(seed, PCG32_INITSEQ_SHUFFLE);
            assert_non_null(r);
            ref_order(d->name, &pop, &o, r, want);
            gsl_rng_free(r);
            for (size_t k = 0; k < REF_N; k++)
                if (got[k] != want[k])
                    fail_msg("%s, seed %llu: position %zu holds row %zu, "
                             "its reference row %zu",
                             name, (unsigned long long)seed, k, got[k],
                             want[k]);
        }
    }
}

/* grouped:K keeps each K-th of the enumerated order together and shuffles
 * inside it; interleaved gives every batch evenly spaced ranks of f0. */
static void test_grouped_and_interleaved_orders(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    size_t n = pop.n, perm[512], ref[512];

    make_order(&pop, "grouped:1", 3, perm);
    make_order(&pop, "shuffled", 3, ref);
    assert_memory_equal(perm, ref, sizeof perm);
    make_order(&pop, "grouped:512", 3, perm);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(perm[k], k);
    make_order(&pop, "grouped:8", 3, perm);
    assert_permutation(perm, n);
    size_t moved = 0;
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(perm[k] / 64, k / 64); /* stays in its group */
        moved += perm[k] != k;
    }
    assert_true(moved > n / 2); /* and is shuffled inside it */

    /* Ranks of f0, computed here by counting, not by sorting. */
    size_t rank[512];
    for (size_t i = 0; i < n; i++) {
        rank[i] = 0;
        for (size_t k = 0; k < n; k++)
            rank[i] += pop.x[k * pop.f] < pop.x[i * pop.f];
    }
    order_spec ord;
    bn_error err;
    assert_int_equal(order_parse("interleaved", &pop, &ord, &err), 0);
    ord.batch_size = 64; /* 8 batches: batch k holds ranks k, k + 8, ... */
    assert_int_equal(order_make(&ord, &pop, 1, perm, &err), 0);
    for (size_t k = 0; k < 8; k++)
        for (size_t i = 0; i < 64; i++)
            assert_int_equal(rank[perm[k * 64 + i]], i * 8 + k);
    /* B 100 leaves 12 rows for a dropped partial batch: the 500 ranks of
     * the full batches are stretched over all 512, rank r to position
     * floor(r 512 / 500), so each batch still spans the whole range and
     * the 12 left over are spread through it, not the top 12. */
    ord.batch_size = 100;
    assert_int_equal(order_make(&ord, &pop, 1, perm, &err), 0);
    assert_permutation(perm, n);
    for (size_t k = 0; k < 5; k++)
        for (size_t i = 0; i < 100; i++)
            assert_int_equal(rank[perm[k * 100 + i]], (i * 5 + k) * 512 / 500);
    size_t top_left_over = 0;
    for (size_t k = 500; k < n; k++)
        top_left_over += rank[perm[k]] >= n - 12;
    assert_true(top_left_over <= 1);
    ord.batch_size = 0; /* interleaved without a batch size is an error */
    assert_int_equal(order_make(&ord, &pop, 1, perm, &err), -1);
    pop_free(&pop);
}

static void test_sorted_orders_are_sorted(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    size_t n = pop.n, f = pop.f, perm[512];
    make_order(&pop, "sorted", 1, perm);
    for (size_t k = 1; k < n; k++) {
        double a = pop.x[perm[k - 1] * f], b = pop.x[perm[k] * f];
        assert_true(a < b || (a == b && perm[k - 1] < perm[k]));
    }
    make_order(&pop, "sorted-desc:f6", 1, perm);
    for (size_t k = 1; k < n; k++) {
        double a = pop.x[perm[k - 1] * f + 6], b = pop.x[perm[k] * f + 6];
        assert_true(a > b || (a == b && perm[k - 1] < perm[k]));
    }
    /* The default population has no ties, so stability is checked on a
     * small hand-made one: ties keep their enumerated order both ways. */
    pop_t tie;
    memset(&tie, 0, sizeof tie);
    tie.n = 8;
    tie.f = 2;
    char *names[] = {"a", "b"};
    tie.names = names;
    double x[16];
    static const double col_a[8] = {2, 1, 2, 1, 0, 2, 1, 0};
    for (size_t i = 0; i < 8; i++) {
        x[i * 2] = col_a[i];
        x[i * 2 + 1] = 3.0; /* all tied */
    }
    tie.x = x;
    static const size_t asc[8] = {4, 7, 1, 3, 6, 0, 2, 5};
    static const size_t desc[8] = {0, 2, 5, 1, 3, 6, 4, 7};
    size_t p[8];
    make_order(&tie, "sorted", 1, p);
    assert_memory_equal(p, asc, sizeof p);
    make_order(&tie, "sorted:a", 1, p);
    assert_memory_equal(p, asc, sizeof p);
    make_order(&tie, "sorted-desc:a", 1, p);
    assert_memory_equal(p, desc, sizeof p);
    for (int d = 0; d < 2; d++) {
        make_order(&tie, d ? "sorted-desc:b" : "sorted:b", 1, p);
        for (size_t i = 0; i < 8; i++)
            assert_int_equal(p[i], i);
    }
    pop_free(&pop);
}

static void test_shuffle_depends_on_the_seed(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    size_t n = pop.n, a[512], b[512], c[512], ref[512];
    make_order(&pop, "shuffled", 1, a);
    make_order(&pop, "shuffled", 2, b);
    make_order(&pop, "shuffled", 1, c);
    assert_memory_not_equal(a, b, n * sizeof *a);
    assert_memory_equal(a, c, n * sizeof *a);
    /* docs/definitions.md: Fisher-Yates (GSL's) on PCG32 with initseq 2. */
    for (size_t i = 0; i < n; i++)
        ref[i] = i;
    gsl_rng *r = pcg32_gsl_alloc(1, 2);
    assert_non_null(r);
    gsl_ran_shuffle(r, ref, n, sizeof *ref);
    gsl_rng_free(r);
    assert_memory_equal(a, ref, n * sizeof *a);
    /* Only the shuffle reads the seed. */
    order_spec ord;
    static const char *const fixed[] = {"as-is", "sorted", "sorted-desc:f6"};
    for (size_t o = 0; o < 3; o++) {
        assert_int_equal(order_parse(fixed[o], &pop, &ord, NULL), 0);
        make_order(&pop, fixed[o], 1, a);
        make_order(&pop, fixed[o], 2, b);
        assert_memory_equal(a, b, n * sizeof *a);
    }
    assert_int_equal(order_parse("sorted:nope", &pop, &ord, NULL), -1);
    assert_int_equal(order_parse("bogus", &pop, &ord, NULL), -1);
    pop_free(&pop);
}

/* The study's point: every self-check passes on both orders and at every
 * batch size while train and eval outputs stay far apart. */
static void test_self_checks_pass_but_the_gap_remains(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    static const size_t bs[] = {8, 16, 32, 64, 128, 256};
    static const char *const orders[] = {"shuffled", "sorted"};
    for (size_t k = 0; k < 6; k++)
        for (size_t o = 0; o < 2; o++) {
            run_config cfg;
            run_default_config(&cfg);
            set_order(&cfg, orders[o]);
            cfg.batch_size = bs[k];
            run_result res;
            run_or_fail(&pop, &cfg, NULL, &res);
            assert_int_equal(res.props_total, 4 * pop.f * (pop.n / bs[k]));
            if (res.props_pass != res.props_total)
                fail_msg("%s B %zu: %zu of %zu self-checks", orders[o],
                         bs[k], res.props_pass, res.props_total);
            if (!(res.train_eval_rmse > 0.1))
                fail_msg("%s B %zu: train/eval rmse only %g", orders[o],
                         bs[k], res.train_eval_rmse);
            run_result_free(&res);
        }
    pop_free(&pop);
}

static void test_default_run(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    run_config cfg;
    run_default_config(&cfg);
    assert_string_equal(cfg.order.name, "shuffled");
    assert_int_equal(cfg.seed, 1);
    assert_int_equal(cfg.batch_size, 256);
    assert_int_equal(cfg.epochs, 1);
    assert_true(cfg.layer.momentum == 0.9);
    assert_int_equal(cfg.layer.weights, BN_WEIGHTS_OLD);
    assert_int_equal(cfg.layer.variance, BN_VAR_BIASED);
    assert_int_equal(cfg.layer.estimator, BN_EST_EMA);
    run_result res;
    run_or_fail(&pop, &cfg, NULL, &res);
    assert_int_equal(res.updates, 2);
    assert_true(fabs(res.init_weight - 0.81) <= 1e-15);
    /* The worst running variance is on the feature whose true variance is
     * farthest from the initial 1 (experiments/claims.ini, worst-feature). */
    size_t far = 0;
    for (size_t j = 1; j < pop.f; j++)
        if (fabs(pop.var[j] - 1.0) > fabs(pop.var[far] - 1.0))
            far = j;
    assert_int_equal(res.worst_var_feature, far);
    run_result_free(&res);
    pop_free(&pop);
}

/* A score to 1e-12 relative, except where the score itself is at the
 * rounding level of what it is a difference of (the cumulative estimator
 * over whole epochs has rm = mu, so mean_err is ~1e-17): there the floor
 * is 1e-15 of that magnitude, a few ulps. */
#define assert_score(got, want, magnitude)                                   \
    do {                                                                     \
        long double w3_ = (want);                                            \
        assert_close(got, w3_, 1e-12, w3_ + 1e-3L * (magnitude));            \
    } while (0)

/* Every score of docs/definitions.md, from scratch: batch statistics from
 * the rows each batch reports, the truth from the population's values,
 * the buffers from their closed form, all in long double, and outputs
 * from the layer's formulas. */
static void check_scores(const pop_t *pop, const run_config *cfg)
{
    recorder rec;
    run_observer obs = recorder_observer(&rec);
    run_result res;
    run_or_fail(pop, cfg, &obs, &res);
    score_refs ck = {0};
    const bn_config *l = &cfg->layer;
    size_t n = pop->n, f = pop->f, t_count = rec.n;
    size_t per_epoch = n / cfg->batch_size +
                       (cfg->partial == RUN_PARTIAL_KEEP &&
                        n % cfg->batch_size != 0);
    assert_int_equal(t_count, cfg->epochs * per_epoch);
    size_t last_b = cfg->partial == RUN_PARTIAL_KEEP && n % cfg->batch_size
                        ? n % cfg->batch_size
                        : cfg->batch_size;
    assert_int_equal(rec.batches[t_count - 1].b, last_b);
    long double mu[f], v[f];
    for (size_t j = 0; j < f; j++)
        ld_moments(n, f, pop->x + j, &mu[j], &v[j]);

    long double *bm = malloc(t_count * f * sizeof *bm);
    long double *bv = malloc(t_count * f * sizeof *bv);
    long double *bu = malloc(t_count * f * sizeof *bu);
    double *col = malloc(n * sizeof *col);
    assert_true(bm && bv && bu && col);
    for (size_t t = 0; t < t_count; t++) {
        const rec_batch *rb = &rec.batches[t];
        for (size_t j = 0; j < f; j++) {
            for (size_t i = 0; i < rb->b; i++)
                col[i] = pop->x[rb->rows[i] * f + j];
            ld_moments(rb->b, 1, col, &bm[t * f + j], &bv[t * f + j]);
            bu[t * f + j] = bv[t * f + j];
            if (l->variance == BN_VAR_UNBIASED)
                bu[t * f + j] *= (long double)rb->b / (long double)(rb->b - 1);
        }
    }
    long double rm[f], rv[f], am[f], av[f];
    ld_buffers(l->estimator, l->p, l->keep, t_count, f, bm, bu, rm, rv, am,
               av);

    long double sm = 0.0L, sv = 0.0L, worst = -1.0L;
    long double mag_m = 0.0L, mag_v = 0.0L;
    /* The relative errors: each feature's in its own units, the mean's
     * by the true standard deviation, the variance's by the variance. */
    long double srel = 0.0L, worst_rel = 0.0L, mag_rel = 0.0L;
    size_t worst_j = 0;
    for (size_t j = 0; j < f; j++) {
        mag_m = fmaxl(mag_m, fabsl(mu[j]) + am[j]);
        mag_v = fmaxl(mag_v, fabsl(v[j]) + av[j]);
        sm += (rm[j] - mu[j]) * (rm[j] - mu[j]);
        sv += (rv[j] - v[j]) * (rv[j] - v[j]);
        if (fabsl(rv[j] - v[j]) > worst) {
            worst = fabsl(rv[j] - v[j]);
            worst_j = j;
        }
        long double em = (rm[j] - mu[j]) / sqrtl(v[j]);
        long double ev = (rv[j] - v[j]) / v[j];
        srel += em * em + ev * ev;
        worst_rel = fmaxl(worst_rel, fabsl(ev));
        mag_rel = fmaxl(mag_rel, (fabsl(mu[j]) + am[j]) / sqrtl(v[j]) +
                                     (v[j] + av[j]) / v[j]);
    }

    /* The last epoch: batch errors, and each row's two outputs. */
    size_t last = cfg->epochs - 1, nb = 0, kept = 0;
    long double dm2 = 0.0L, dv2 = 0.0L, dy2 = 0.0L;
    for (size_t t = 0; t < t_count; t++) {
        const rec_batch *rb = &rec.batches[t];
        if (rb->epoch != last)
            continue;
        nb++;
        for (size_t j = 0; j < f; j++) {
            dm2 += (bm[t * f + j] - mu[j]) * (bm[t * f + j] - mu[j]);
            dv2 += (bv[t * f + j] - v[j]) * (bv[t * f + j] - v[j]);
        }
        for (size_t i = 0; i < rb->b; i++, kept++) {
            assert_true(kept < rec.out_n);
            assert_int_equal(rec.out_rows[kept], rb->rows[i]);
            for (size_t j = 0; j < f; j++) {
                long double x = pop->x[rb->rows[i] * f + j];
                long double ytr =
                    l->gamma * ((x - bm[t * f + j]) /
                                sqrtl(bv[t * f + j] + l->eps)) +
                    l->beta;
                long double yev =
                    l->gamma * ((x - rm[j]) / sqrtl(rv[j] + l->eps)) +
                    l->beta;
                dy2 += (ytr - yev) * (ytr - yev);
                assert_close(rec.out_train[kept * f + j], ytr, 1e-12,
                             fabsl(ytr) + 1.0L);
                assert_close(rec.out_eval[kept * f + j], yev, 1e-12,
                             fabsl(yev) + 1.0L);
            }
        }
    }
    assert_int_equal(kept, rec.out_n);

    /* Each score read by its name through the score table. */
#define REF(name) score_ref(&ck, &res, name)
    assert_true(REF("updates") == (double)t_count);
    if (l->estimator == BN_EST_EMA)
        assert_rel(REF("init_weight"), powl(l->keep, (long double)t_count),
                   1e-12);
    else /* the initial values take no part in the other estimators */
        assert_true(REF("init_weight") == 0.0);
    assert_score(REF("stats_err"), sqrtl((sm + sv) / (2.0L * f)), mag_v);
    assert_score(REF("mean_err"), sqrtl(sm / f), mag_m);
    assert_score(REF("var_err"), sqrtl(sv / f), mag_v);
    assert_score(REF("worst_var_err"), worst, mag_v);
    assert_true(REF("worst_var_feature") == (double)worst_j);
    assert_score(REF("stats_err_rel"), sqrtl(srel / (2.0L * f)), mag_rel);
    assert_score(REF("worst_var_rel"), worst_rel, mag_rel);
    assert_score(REF("train_eval_rmse"), sqrtl(dy2 / (long double)(kept * f)),
                 fabsl(l->gamma) + fabsl(l->beta));
    assert_score(REF("batch_mean_err"), sqrtl(dm2 / (long double)(nb * f)),
                 mag_m);
    assert_score(REF("batch_var_err"), sqrtl(dv2 / (long double)(nb * f)),
                 mag_v);
    assert_true(REF("props_total") == (double)(4 * f * t_count));
    assert_true(REF("props_pass") == (double)(4 * f * t_count));
    /* Batch dependence, from batches made apart (helpers.c), in long
     * double; in evaluation mode every output is one value exactly. */
    ref_dependence dep = {0, 0, 0, 0};
    if (cfg->compositions > 0)
        ref_layer_dependence(pop->x, n, f, cfg->batch_size,
                             cfg->compositions, cfg->seed, l,
                             res.running_mean, res.running_var, &dep);
    long double out_mag = fabsl(l->gamma) * 8.0L + fabsl(l->beta);
    assert_true(REF("dep_batches") == (double)dep.batches);
    assert_score(REF("batch_dependence"), dep.worst, out_mag);
    assert_score(REF("batch_dependence_mean"), dep.mean, out_mag);
    assert_true(REF("batch_dependence_eval") == 0.0);
    /* Plain rows: no padding (seq_reference has the sequences'). */
    assert_true(REF("pad_fraction") == 0.0);
    assert_true(REF("closed_mean_err") == 0.0);
    assert_true(REF("closed_var_err") == 0.0);
#undef REF
    score_refs_all(&ck, cfg, "check_scores in tests/test_run.c");
    run_result_free(&res);
    free(bm);
    free(bv);
    free(bu);
    free(col);
    recorder_free(&rec);
}

/* Under a drift the rows compared are the ones evaluation sees: with
 * [evaluation] shift undoing the drift's end (so the layer is evaluated
 * on the rows it trained on), the last epoch's batches as the drift
 * moved each at its update; without, the population moved by the drift's
 * end, in the training order, in batches of their own. Each output from
 * those rows in long double, against the run's final buffers. */
static void test_drift_outputs(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    const size_t f = pop.f;
    for (int own = 0; own < 2; own++) {
        run_config cfg;
        run_default_config(&cfg);
        cfg.batch_size = 48; /* 10 batches and a kept one of 32 rows */
        cfg.partial = RUN_PARTIAL_KEEP;
        cfg.epochs = 2;
        cfg.seed = 5;
        bn_error err;
        /* Updates 12 to 22 are the last epoch's: the ramp moves within it
         * and ends at 1 before its last update. */
        assert_int_equal(drift_parse("ramp:8:20", &cfg.drift.profile, &err),
                         0);
        cfg.drift.size = 0.75;
        cfg.eval.shift = own ? -0.75 : 0.0;
        recorder rec;
        run_observer obs = recorder_observer(&rec);
        run_result res;
        run_or_fail(&pop, &cfg, &obs, &res);
        const bn_config *l = &cfg.layer;
        size_t kept = 0;
        long double dy2 = 0.0L;
        long double *x = malloc(cfg.batch_size * sizeof *x);
        assert_non_null(x);
        for (size_t t = 0; t < rec.n; t++) {
            const rec_batch *rb = &rec.batches[t];
            if (rb->epoch + 1 != cfg.epochs)
                continue;
            long double frac =
                own ? drift_fraction(&cfg.drift.profile, t + 1) : 1.0L;
            assert_true(kept + rb->b <= rec.out_n);
            for (size_t j = 0; j < f; j++) {
                long double sd = sqrtl(pop.var[j]), m = 0.0L, v = 0.0L;
                for (size_t i = 0; i < rb->b; i++) {
                    x[i] = pop.x[rb->rows[i] * f + j] + frac * 0.75L * sd;
                    m += x[i];
                }
                m /= rb->b;
                for (size_t i = 0; i < rb->b; i++)
                    v += (x[i] - m) * (x[i] - m);
                v /= rb->b;
                for (size_t i = 0; i < rb->b; i++) {
                    size_t k = (kept + i) * f + j;
                    assert_int_equal(rec.out_rows[kept + i], rb->rows[i]);
                    long double ytr =
                        l->gamma * ((x[i] - m) / sqrtl(v + l->eps)) + l->beta;
                    long double yev =
                        l->gamma * ((x[i] - res.running_mean[j]) /
                                    sqrtl(res.running_var[j] + l->eps)) +
                        l->beta;
                    assert_close(rec.out_train[k], ytr, 1e-12,
                                 fabsl(ytr) + 1.0L);
                    assert_close(rec.out_eval[k], yev, 1e-12,
                                 fabsl(yev) + 1.0L);
                    dy2 += (ytr - yev) * (ytr - yev);
                }
            }
            kept += rb->b;
        }
        assert_int_equal(kept, pop.n);
        assert_int_equal(rec.out_n, kept);
        assert_close(res.train_eval_rmse, sqrtl(dy2 / (long double)(kept * f)),
                     1e-10, 1.0L);
        assert_int_equal(res.props_pass, res.props_total);
        free(x);
        run_result_free(&res);
        recorder_free(&rec);
    }
    pop_free(&pop);
}

void ref_layer_scores(const char *root)
{
    (void)root; /* it writes nothing */
    pop_t pop;
    default_pop(&pop);
    run_config cfg;
    run_default_config(&cfg);
    check_scores(&pop, &cfg);
    pop_free(&pop);
}

static void test_scores_recomputed(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    run_config cfg;

    run_default_config(&cfg);
    check_scores(&pop, &cfg);

    /* B = 100 on 512 rows: the kept last batch has 12 rows. */
    cfg.batch_size = 100;
    cfg.partial = RUN_PARTIAL_KEEP;
    check_scores(&pop, &cfg);

    cfg.seed = 7;
    cfg.epochs = 2;
    cfg.layer.gamma = 1.5;
    cfg.layer.beta = -0.25;
    cfg.layer.eps = 1e-3;
    cfg.compositions = 3; /* sampled: C(512, 100) is far more */
    check_scores(&pop, &cfg);

    run_default_config(&cfg);
    set_order(&cfg, "sorted");
    cfg.batch_size = 64;
    cfg.epochs = 3;
    cfg.layer.variance = BN_VAR_UNBIASED;
    assert_int_equal(
        bn_set_momentum(&cfg.layer, 0.1, BN_WEIGHTS_NEW, NULL), 0);
    check_scores(&pop, &cfg);

    run_default_config(&cfg);
    set_order(&cfg, "sorted-desc:f6");
    cfg.batch_size = 32;
    cfg.layer.estimator = BN_EST_EMA_DEBIASED;
    check_scores(&pop, &cfg);

    run_default_config(&cfg);
    set_order(&cfg, "as-is");
    cfg.batch_size = 16;
    cfg.epochs = 2;
    cfg.layer.variance = BN_VAR_UNBIASED;
    cfg.layer.estimator = BN_EST_CUMULATIVE;
    check_scores(&pop, &cfg);
    pop_free(&pop);

    /* Batch dependence on 10 rows: at B 3 and 40 shuffles' worth (120
     * batches) every one of the C(10, 3) = 120 subsets, at B 4 (210 >
     * 80) shuffles. */
    static const pop_feature two[] = {{(char *)"a", 1.0, 2.0, 0.5},
                                      {(char *)"b", -3.0, 0.5, -0.8}};
    small_pop(&pop, 10, 3, 2, two);
    run_default_config(&cfg);
    cfg.compositions = 40;
    for (size_t b = 3; b <= 4; b++) {
        cfg.batch_size = b;
        check_scores(&pop, &cfg);
    }
    pop_free(&pop);
}

/* Mean and variance (divisor: the positions) of feature j over the
 * real positions rows[0..r-1] and pads zeros, in long double. */
static void ld_masked(const pop_t *pop, const size_t *rows, size_t r,
                      size_t pads, size_t j, long double *m, long double *v)
{
    long double s = 0.0L, q = 0.0L, n = (long double)(r + pads);
    for (size_t i = 0; i < r; i++)
        s += pop->x[rows[i] * pop->f + j];
    *m = s / n;
    for (size_t i = 0; i < r; i++) {
        long double d = pop->x[rows[i] * pop->f + j] - *m;
        q += d * d;
    }
    *v = (q + (long double)pads * *m * *m) / n;
}

/* The sequence layer's scores from scratch (docs/definitions.md, "Padded
 * sequences"): the lengths and the shuffle by GSL on the same PCG32
 * streams, every batch's statistics in long double, the buffers from
 * their closed form (ld_buffers) or pooled, the outputs from the
 * layer's formula. */
static void check_sequences(const pop_t *pop, const run_config *cfg)
{
    run_result res;
    run_or_fail(pop, cfg, NULL, &res);
    const bn_config *l = &cfg->layer;
    size_t len = cfg->seq.length, ns = pop->n / len, f = pop->f;
    size_t b = cfg->batch_size, nb = ns / b, bl = b * len;
    size_t *lens = malloc(ns * sizeof *lens), *ord = malloc(ns * sizeof *ord);
    size_t *rows = malloc(pop->n * sizeof *rows);
    gsl_rng *g = pcg32_gsl_alloc(cfg->seed, PCG32_INITSEQ_SEQ_LENGTHS);
    gsl_rng *h = pcg32_gsl_alloc(cfg->seed, PCG32_INITSEQ_SHUFFLE);
    assert_true(lens && ord && rows && g && h);
    size_t real = 0;
    for (size_t i = 0; i < ns; i++) {
        lens[i] = cfg->seq.min_length +
                  gsl_rng_uniform_int(g, len - cfg->seq.min_length + 1);
        ord[i] = i;
        for (size_t t = 0; t < lens[i]; t++)
            rows[real++] = i * len + t;
    }
    gsl_ran_shuffle(h, ord, ns, sizeof *ord);
    long double mu[f], v[f];
    for (size_t j = 0; j < f; j++)
        ld_masked(pop, rows, real, 0, j, &mu[j], &v[j]);
    int n_all = cfg->seq.mask == SEQ_MASK_PADDED;
    int u_all = cfg->seq.mask != SEQ_MASK_REAL;
    size_t t_count = cfg->epochs * nb;
    long double *um = malloc(2 * t_count * f * sizeof *um), *uv = um + t_count * f;
    long double *nm = malloc(2 * nb * f * sizeof *nm), *nv = nm + nb * f;
    size_t *cnt = malloc(nb * sizeof *cnt);
    assert_true(um && nm && cnt);
    long double dm2 = 0.0L, dv2 = 0.0L;
    for (size_t t = 0; t < t_count; t++) {
        size_t k = t % nb, r = 0;
        for (size_t i = 0; i < b; i++)
            for (size_t p = 0; p < lens[ord[k * b + i]]; p++)
                rows[r++] = ord[k * b + i] * len + p;
        cnt[k] = r;
        for (size_t j = 0; j < f; j++) {
            long double mr, vr, ma, va;
            ld_masked(pop, rows, r, 0, j, &mr, &vr);
            ld_masked(pop, rows, r, bl - r, j, &ma, &va);
            long double n = u_all ? (long double)bl : (long double)r;
            um[t * f + j] = u_all ? ma : mr;
            uv[t * f + j] = (u_all ? va : vr) *
                            (l->variance == BN_VAR_UNBIASED ? n / (n - 1) : 1);
            nm[k * f + j] = n_all ? ma : mr;
            nv[k * f + j] = n_all ? va : vr;
            if (t / nb + 1 == cfg->epochs) {
                dm2 += (nm[k * f + j] - mu[j]) * (nm[k * f + j] - mu[j]);
                dv2 += (nv[k * f + j] - v[j]) * (nv[k * f + j] - v[j]);
            }
        }
    }
    long double rm[f], rv[f], am[f], av[f];
    if (l->estimator == BN_EST_PRECISE) {
        size_t kb = cfg->precise_batches ? cfg->precise_batches : nb, r = 0;
        for (size_t i = 0; i < kb * b; i++)
            for (size_t p = 0; p < lens[ord[i]]; p++)
                rows[r++] = ord[i] * len + p;
        for (size_t j = 0; j < f; j++)
            ld_masked(pop, rows, r, u_all ? kb * bl - r : 0, j, &rm[j], &rv[j]);
    } else {
        ld_buffers(l->estimator, l->p, l->keep, t_count, f, um, uv, rm, rv,
                   am, av);
    }
    long double sm = 0, sv = 0, dy2 = 0, pad = 1.0L - (long double)real / pop->n;
    long double cm = 0, cv = 0;
    size_t kept = 0;
    for (size_t j = 0; j < f; j++) {
        assert_close(res.running_mean[j], rm[j], 1e-12, fabsl(rm[j]) + 1.0L);
        assert_close(res.running_var[j], rv[j], 1e-12, rv[j] + 1.0L);
        sm += (rm[j] - mu[j]) * (rm[j] - mu[j]);
        sv += (rv[j] - v[j]) * (rv[j] - v[j]);
        cm += pad * mu[j] * pad * mu[j];
        long double c = pad * ((1 - pad) * mu[j] * mu[j] - v[j]);
        cv += c * c;
    }
    for (size_t k = 0; k < nb; k++)
        for (size_t i = 0; i < b; i++)
            for (size_t p = 0; p < lens[ord[k * b + i]]; p++, kept++)
                for (size_t j = 0; j < f; j++) {
                    long double x = pop->x[(ord[k * b + i] * len + p) * f + j];
                    long double yt = l->gamma * (x - nm[k * f + j]) /
                                         sqrtl(nv[k * f + j] + l->eps) + l->beta;
                    long double ye = l->gamma * (x - rm[j]) /
                                         sqrtl(rv[j] + l->eps) + l->beta;
                    dy2 += (yt - ye) * (yt - ye);
                }
    assert_true(res.updates == t_count);
    assert_close(res.pad_fraction, pad, 1e-15, 1.0L);
    /* Exact buffers (real, precise) are rounding: against the truth's
     * size, as check_scores' floors are. */
    long double mag_m = 0.0L, mag_v = 0.0L;
    for (size_t j = 0; j < f; j++)
        mag_m = fmaxl(mag_m, fabsl(mu[j])), mag_v = fmaxl(mag_v, v[j]);
    assert_score(res.mean_err, sqrtl(sm / f), mag_m);
    assert_score(res.var_err, sqrtl(sv / f), mag_v);
    assert_close(res.closed_mean_err, sqrtl(cm / f), 1e-12, 1.0L);
    assert_close(res.closed_var_err, sqrtl(cv / f), 1e-12, 1.0L);
    assert_close(res.train_eval_rmse, sqrtl(dy2 / (long double)(kept * f)),
                 1e-10, 1.0L);
    assert_close(res.batch_mean_err, sqrtl(dm2 / (long double)(nb * f)),
                 1e-12, 1.0L);
    assert_close(res.batch_var_err, sqrtl(dv2 / (long double)(nb * f)),
                 1e-12, 1.0L);
    free(lens);
    free(ord);
    free(rows);
    free(um);
    free(nm);
    free(cnt);
    gsl_rng_free(g);
    gsl_rng_free(h);
    run_result_free(&res);
}

/* The default population as 32 sequences of 16, lengths 3..16, B 8. */
static void seq_setup_default(pop_t *pop, run_config *cfg)
{
    default_pop(pop); /* 512 rows: 32 sequences of 16 */
    run_default_config(cfg);
    cfg->seq.length = 16;
    cfg->seq.min_length = 3;
    cfg->batch_size = 8;
}

static void test_sequences_recomputed(void **state)
{
    (void)state;
    pop_t pop;
    run_config cfg;
    seq_setup_default(&pop, &cfg);
    for (int m = 0; seq_mask_name(m); m++) {
        cfg.seq.mask = m;
        cfg.layer.estimator = BN_EST_EMA;
        cfg.epochs = 2;
        check_sequences(&pop, &cfg);
        cfg.layer.estimator = BN_EST_PRECISE;
        cfg.epochs = 1;
        check_sequences(&pop, &cfg);
    }
    /* PyTorch's conventions, a precise subset, another seed. */
    cfg.seed = 5;
    cfg.layer.variance = BN_VAR_UNBIASED;
    assert_int_equal(bn_set_momentum(&cfg.layer, 0.1, BN_WEIGHTS_NEW, NULL),
                     0);
    cfg.precise_batches = 2;
    check_sequences(&pop, &cfg);
    cfg.layer.estimator = BN_EST_CUMULATIVE;
    cfg.seq.mask = SEQ_MASK_PADDED;
    check_sequences(&pop, &cfg);
    pop_free(&pop);
}

/* text, a sequence file's bytes, read as a run reads [sequence] file. */
static void seq_file(const char *name, const char *text, pop_t *out)
{
    popfile pf;
    bn_error err;
    if (popfile_parse(name, (const unsigned char *)text, strlen(text), NULL,
                      &pf, &err) != 0 ||
        pop_from_file(&pf, out, &err) != 0)
        fail_msg("%s: %s", name, err.msg);
    popfile_free(&pf);
}

/* Every score of the layer's, bit for bit. */
static void assert_same_scores(const run_config *cfg, const run_result *a,
                               const run_result *b)
{
    size_t seen = 0;
    for (size_t i = 0; score_get(i); i++) {
        const score_def *s = score_get(i);
        if (!score_applies(s, cfg))
            continue;
        double x = score_value(s, a), y = score_value(s, b);
        if (memcmp(&x, &y, sizeof x) != 0)
            fail_msg("%s: %.17g from the file, %.17g generated", s->name, y,
                     x);
        seen++;
    }
    assert_true(seen > 10);
    for (size_t j = 0; j < 8; j++)
        assert_true(a->running_mean[j] == b->running_mean[j] &&
                    a->running_var[j] == b->running_var[j]);
}

/* [sequence] file: the generated lengths written out, as a column of
 * lengths (TSV) and as the L columns of their mask (CSV), give the
 * generated run's scores to the bit under every policy; a mask that is
 * not a prefix is its own sequences (checked against PyTorch in
 * peer_sequences.py). */
static void test_sequences_from_a_file(void **state)
{
    (void)state;
    pop_t pop;
    run_config cfg;
    seq_setup_default(&pop, &cfg);
    size_t lens[32];
    seq_lengths(cfg.seed, 32, 16, 3, lens);
    char *lt = malloc(32 * 8 + 16), *mt = malloc(33 * 16 * 4 + 16);
    assert_true(lt && mt);
    size_t a = (size_t)sprintf(lt, "length\n"), b = 0;
    for (size_t t = 0; t < 16; t++)
        b += (size_t)sprintf(mt + b, "%sp%zu", t ? "," : "", t);
    b += (size_t)sprintf(mt + b, "\n");
    for (size_t i = 0; i < 32; i++) {
        a += (size_t)sprintf(lt + a, "%zu\n", lens[i]);
        for (size_t t = 0; t < 16; t++)
            b += (size_t)sprintf(mt + b, "%s%d", t ? "," : "",
                                 t < lens[i]);
        b += (size_t)sprintf(mt + b, "\n");
    }
    pop_t by_len, by_mask;
    seq_file("lengths.tsv", lt, &by_len);
    seq_file("mask.csv", mt, &by_mask);
    free(lt);
    free(mt);
    for (int m = 0; seq_mask_name(m); m++) {
        for (int est = 0; est < 2; est++) {
            cfg.seq.mask = m;
            cfg.seq.min_length = 3;
            cfg.seq.file = NULL;
            cfg.layer.estimator = est ? BN_EST_PRECISE : BN_EST_EMA;
            run_result gen, lf, mf;
            run_or_fail(&pop, &cfg, NULL, &gen);
            cfg.seq.min_length = 1;
            cfg.seq.file = &by_len, cfg.seq.file_name = "lengths.tsv";
            run_or_fail(&pop, &cfg, NULL, &lf);
            cfg.seq.file = &by_mask, cfg.seq.file_name = "mask.csv";
            run_or_fail(&pop, &cfg, NULL, &mf);
            assert_same_scores(&cfg, &gen, &lf);
            assert_same_scores(&cfg, &gen, &mf);
            run_result_free(&gen);
            run_result_free(&lf);
            run_result_free(&mf);
        }
    }
    pop_free(&by_len);
    pop_free(&by_mask);
    pop_free(&pop);
}

/* Bad sequence files: one message naming the file and what is wrong. */
static void seq_refused(const char *name, const char *text, const char *want)
{
    pop_t pop, m;
    default_pop(&pop);
    seq_file(name, text, &m);
    run_config cfg;
    run_default_config(&cfg);
    cfg.seq.length = 4, cfg.batch_size = 8; /* 128 sequences of 4 */
    cfg.seq.file = &m, cfg.seq.file_name = name;
    int blame[2] = {-1, -1};
    bn_error err;
    assert_int_equal(run_check(&cfg, &pop, blame, &err), -1);
    if (!strstr(err.msg, want))
        fail_msg("'%s' does not say '%s'", err.msg, want);
    assert_int_equal(blame[0], KEY_SEQ_FILE);
    pop_free(&m);
    pop_free(&pop);
}

static void test_bad_sequence_files(void **state)
{
    (void)state;
    char text[128 * 12 + 32];
    size_t at = (size_t)sprintf(text, "length\n");
    for (int i = 0; i < 128; i++)
        at += (size_t)sprintf(text + at, "%d\n", i == 6 ? 5 : 1 + i % 4);
    seq_refused("l.tsv", text, "l.tsv: sequence 7: length 5: a length is a "
                               "whole number from 1 to length = 4");
    text[0] = '\0';
    at = (size_t)sprintf(text, "length\n");
    for (int i = 0; i < 128; i++)
        at += (size_t)sprintf(text + at, "%s\n", i == 2 ? "1.5" : "2");
    seq_refused("l.tsv", text, "l.tsv: sequence 3: length 1.5");
    seq_refused("l.tsv", "length\n1\n2\n", "l.tsv: 2 rows for 128 "
                                            "sequences");
    seq_refused("m.csv", "a,b,c\n1,0,0\n1,1,0\n",
                "m.csv: 3 columns: a sequence file holds one column of "
                "lengths or length = 4 columns");
    at = (size_t)sprintf(text, "a,b,c,d\n");
    for (int i = 0; i < 128; i++)
        at += (size_t)sprintf(text + at, "%s\n",
                              i == 9 ? "1,1,2,0" : "1,1,0,0");
    seq_refused("m.csv", text, "m.csv: sequence 10, position 3: mask value "
                               "2: a mask is 0 (padding) or 1 (real)");
    at = (size_t)sprintf(text, "a,b,c,d\n");
    for (int i = 0; i < 128; i++)
        at += (size_t)sprintf(text + at, "%s\n",
                              i == 0 ? "0,0,0,0" : "1,1,0,0");
    seq_refused("m.csv", text, "m.csv: sequence 1: no real position");
}

/* The self-checks are only worth their passing if they can fail: doctor
 * one batch's output in each way a layer could get it wrong. */
static void test_self_checks_can_fail(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    const size_t b = 32, f = pop.f;
    bn_config cfg;
    default_layer(&cfg);
    cfg.beta = 0.5; /* the sums are about beta */
    bn_layer layer;
    assert_int_equal(bn_init(&layer, f, &cfg), 0);
    double y[b * f + 1], bad[b * f + 1];
    double mean[f], var[f], wrong_var[f];
    const double *x = pop.x + 64 * f;
    score_mark(y, b * f);
    bn_train_forward(&layer, b, x, y, mean, var);
    assert_int_equal(checks_of(&layer, b, y, var), 2 * f);
    assert_true(score_written(y, b * f));

    /* One value off by 0.1: that feature's mean and variance. */
    memcpy(bad, y, sizeof y);
    bad[5 * f + 2] += 0.1;
    assert_int_equal(checks_of(&layer, b, bad, var), 2 * f - 2);

    /* One value never written: it is still the sentinel, a NaN, so that
     * feature's mean and variance fail, and so does the shape. */
    memcpy(bad, y, sizeof y);
    score_mark(&bad[7 * f + 4], 0);
    assert_int_equal(checks_of(&layer, b, bad, var), 2 * f - 2);
    assert_false(score_written(bad, b * f));

    /* A write past the end: the shape. */
    memcpy(bad, y, sizeof y);
    bad[b * f] = 0.0;
    assert_false(score_written(bad, b * f));

    /* Output scaled with the wrong variance: every variance check. */
    for (size_t j = 0; j < f; j++)
        wrong_var[j] = 2.0 * var[j];
    assert_int_equal(checks_of(&layer, b, y, wrong_var), f);
    bn_free(&layer);
    pop_free(&pop);
}

static void expect_invalid(const pop_t *pop, const run_config *cfg,
                           const char *what)
{
    bn_error err;
    err.msg[0] = '\0';
    if (run_validate(cfg, pop, &err) == 0)
        fail_msg("run_validate accepted %s", what);
    assert_true(err.msg[0] != '\0');
    run_result res;
    assert_int_equal(run_execute(pop, cfg, NULL, &res, &err), -1);
    assert_null(res.running_mean); /* nothing left to free */
}

static void test_run_validate_rejects_bad_configs(void **state)
{
    (void)state;
    pop_t pop;
    default_pop(&pop);
    run_config good, c;
    run_default_config(&good);
    assert_int_equal(run_validate(&good, &pop, NULL), 0);

    c = good;
    c.batch_size = 1;
    expect_invalid(&pop, &c, "batch size 1");
    c.batch_size = 513;
    expect_invalid(&pop, &c, "batch size 513");
    /* 512 = 511 + 1: keep would train on a one-row batch. */
    c = good;
    c.batch_size = 511;
    c.partial = RUN_PARTIAL_KEEP;
    expect_invalid(&pop, &c, "keep with a last batch of one row");
    c.partial = RUN_PARTIAL_DROP;
    assert_int_equal(run_validate(&c, &pop, NULL), 0);
    c = good;
    c.epochs = 0;
    expect_invalid(&pop, &c, "0 epochs");
    c = good;
    order_spec o;
    assert_int_equal(order_parse("bogus", &pop, &o, NULL), -1);
    assert_int_equal(order_parse("sorted:nope", &pop, &o, NULL), -1);
    assert_int_equal(order_parse("shuffled:f0", &pop, &o, NULL), -1);
    assert_int_equal(order_parse("sorted-desc", &pop, &o, NULL), -1);
    assert_int_equal(order_parse("grouped:0", &pop, &o, NULL), -1);
    assert_int_equal(order_parse("grouped:513", &pop, &o, NULL), -1);
    assert_int_equal(order_parse("grouped:512", &pop, &o, NULL), 0);
    memset(&c.order, 0, sizeof c.order);
    expect_invalid(&pop, &c, "no order");
    c = good;
    c.layer.momentum = 0.0;
    expect_invalid(&pop, &c, "momentum 0");
    c = good;
    c.layer.eps = 0.0;
    expect_invalid(&pop, &c, "eps 0");
    c = good;
    c.layer.gamma = NAN;
    expect_invalid(&pop, &c, "gamma nan");
    pop_free(&pop);
}

/* The run's arrays share one block (base/carve.h): each where its
 * alignment puts it, none overlapping the next, every byte of each
 * usable, and, in a build with AddressSanitizer, the bytes just past each
 * poisoned, so that an overrun from one array into the next is reported
 * as it would be between two mallocs. */
static void test_carved_arrays_keep_their_bounds(void **state)
{
    (void)state;
    static const struct {
        size_t bytes, align;
    } want[] = {
        {.bytes = 3 * sizeof(double), .align = _Alignof(double)},
        {.bytes = 5, .align = 1},
        {.bytes = 0, .align = _Alignof(double)},
        {.bytes = 7 * sizeof(size_t), .align = _Alignof(size_t)},
        {.bytes = 2 * sizeof(double), .align = _Alignof(double)},
    };
    enum { N = sizeof want / sizeof want[0] };
    bn_carve c = {0};
    size_t at[N];
    for (size_t i = 0; i < N; i++) {
        at[i] = bn_carve_add(&c, want[i].bytes, want[i].align);
        assert_int_equal(at[i] % want[i].align, 0);
        if (i)
            assert_true(at[i] >= at[i - 1] + want[i - 1].bytes +
                                     bn_carve_gap());
    }
    assert_true(c.at >= at[N - 1] + want[N - 1].bytes + bn_carve_gap());
    unsigned char *b = bn_carve_alloc(&c);
    assert_non_null(b);
    for (size_t i = 0; i < N; i++) {
        memset(b + at[i], 0xa5, want[i].bytes);
#ifdef TEST_ASAN
        if (want[i].bytes)
            assert_false(__asan_address_is_poisoned(b + at[i] +
                                                    want[i].bytes - 1));
        /* The first granule edge at or past the array's end. */
        size_t edge = (at[i] + want[i].bytes + 7) / 8 * 8;
        assert_true(__asan_address_is_poisoned(b + edge));
        assert_true(__asan_address_is_poisoned(b + edge + bn_carve_gap() - 1));
#endif
    }
#ifdef TEST_ASAN
    assert_true(bn_carve_gap() > 0);
#else
    assert_int_equal(bn_carve_gap(), 0);
#endif
    free(b);
}

/* bn_carve_doubles: every array zeroed and its own, in the order given,
 * each aligned for doubles, the bytes past each poisoned under ASan;
 * sizes that would overflow a size_t refused, and more arrays than
 * BN_CARVE_MAX. */
static void test_carved_doubles_are_zeroed_and_bounded(void **state)
{
    (void)state;
    double *a, *b, *c, *d;
    double **arrays[] = {&a, &b, &c, &d};
    const size_t counts[] = {3, 0, 5, 1};
    double *block = bn_carve_doubles(4, arrays, counts);
    assert_non_null(block);
    assert_ptr_equal(a, block);
    double *all[] = {a, b, c, d};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal((uintptr_t)all[i] % _Alignof(double), 0);
        if (i)
            assert_true(all[i] >= all[i - 1] + counts[i - 1]);
        for (size_t j = 0; j < counts[i]; j++)
            assert_true(all[i][j] == 0.0 && !signbit(all[i][j]));
#ifdef TEST_ASAN
        if (counts[i])
            assert_false(__asan_address_is_poisoned(all[i] + counts[i] - 1));
        assert_true(__asan_address_is_poisoned(all[i] + counts[i]));
#endif
    }
    free(block);
    /* a block past a page, which calloc zeroes (carve.c) */
    const size_t big[] = {1000, 1};
    block = bn_carve_doubles(2, (double **[]){&a, &b}, big);
    assert_non_null(block);
    for (size_t j = 0; j < big[0]; j++)
        assert_true(a[j] == 0.0 && !signbit(a[j]));
    assert_true(b >= a + big[0] && b[0] == 0.0);
#ifdef TEST_ASAN
    assert_true(__asan_address_is_poisoned(a + big[0]));
    assert_true(__asan_address_is_poisoned(b + 1));
#endif
    free(block);
    /* b's bytes wrap to 0: unchecked, the block would be a few bytes and
     * b claim 2^61 doubles (2^29 where size_t has 32 bits) */
    const size_t wraps[] = {1, SIZE_MAX / sizeof(double) + 1, 1};
    assert_null(bn_carve_doubles(3, (double **[]){&a, &b, &c}, wraps));
    /* each array's bytes fit, their sum wraps */
    const size_t sum_wraps[] = {SIZE_MAX / 16 + 1, SIZE_MAX / 16 + 1, 1};
    assert_null(bn_carve_doubles(3, (double **[]){&a, &b, &c}, sum_wraps));
    /* past a quarter of the range without wrapping: the check's own
     * limit (malloc would refuse these as well) */
    const size_t huge[] = {1, SIZE_MAX / sizeof(double) / 2, 1};
    assert_null(bn_carve_doubles(3, (double **[]){&a, &b, &c}, huge));
    const size_t sum[] = {SIZE_MAX / 32, SIZE_MAX / 32, SIZE_MAX / 32};
    assert_null(bn_carve_doubles(3, (double **[]){&a, &b, &c}, sum));
    /* more arrays than the block holds */
    double *many[BN_CARVE_MAX + 1];
    double **to[BN_CARVE_MAX + 1];
    size_t ones[BN_CARVE_MAX + 1];
    for (size_t i = 0; i <= BN_CARVE_MAX; i++)
        to[i] = &many[i], ones[i] = 1;
    assert_null(bn_carve_doubles(BN_CARVE_MAX + 1, to, ones));
}

int test_run_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_orders_feed_a_permutation_of_the_rows),
        cmocka_unit_test(test_carved_arrays_keep_their_bounds),
        cmocka_unit_test(test_carved_doubles_are_zeroed_and_bounded),
        cmocka_unit_test(test_every_order_against_its_reference),
        cmocka_unit_test(test_sorted_orders_are_sorted),
        cmocka_unit_test(test_grouped_and_interleaved_orders),
        cmocka_unit_test(test_shuffle_depends_on_the_seed),
        cmocka_unit_test(test_self_checks_pass_but_the_gap_remains),
        cmocka_unit_test(test_default_run),
        cmocka_unit_test(test_scores_recomputed),
        cmocka_unit_test(test_sequences_recomputed),
        cmocka_unit_test(test_sequences_from_a_file),
        cmocka_unit_test(test_bad_sequence_files),
        cmocka_unit_test(test_drift_outputs),
        cmocka_unit_test(test_self_checks_can_fail),
        cmocka_unit_test(test_run_validate_rejects_bad_configs),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("run", tests, NULL, NULL);
}
