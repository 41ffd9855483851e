/*
 * Feature-map populations (src/pop/convpop.h, docs/convolution.md): the
 * uniform draws and the filter bank against the PCG32 words they come
 * from, the convolution and the layout against a direct long double
 * computation, the generated field's correlation against r, the order of
 * whole samples, and the effective count's closed form against an exact
 * enumeration of every ordering and against 10^4 shuffles, with the
 * direction of the effect for r > 0 and r < 0 computed on real draws.
 */
#include "helpers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "pop/convpop.h"

static void field_or_fail(size_t m, size_t h, size_t w, size_t c,
                          const convpop_channel *ch, uint64_t seed,
                          convpop_t *pop)
{
    bn_error err;
    if (convpop_field(m, h, w, c, ch, seed, pop, &err) != 0)
        fail_msg("%s", err.msg);
}

static void test_uniform_is_exact_odd_multiple(void **state)
{
    (void)state;
    pcg32_t a, b;
    pcg32_seed(&a, 42, PCG32_INITSEQ_CONV_FIELD);
    b = a;
    long double sum = 0.0L;
    for (int i = 0; i < 100000; i++) {
        uint32_t u = pcg32_next(&b);
        double got = convpop_uniform(&a);
        long double want = ((long double)u * 2.0L + 1.0L - 4294967296.0L) /
                           4294967296.0L;
        if ((long double)got != want)
            fail_msg("draw %d: u = %u gave %.17g, want %.21Lg", i, u, got,
                     want);
        assert_true(got > -1.0 && got < 1.0);
        sum += got;
    }
    /* Mean 0, sd 1/sqrt(3): 10^5 draws put the mean within 3.29 se. */
    assert_true(fabsl(sum / 100000.0L) <= 3.29L * 0.57735L / sqrtl(1e5L));
}

static void test_filters_are_the_stream_scaled(void **state)
{
    (void)state;
    double w[4 * 5 * 5], w2[4 * 5 * 5];
    convpop_filters(4, 5, 7, w);
    pcg32_t rng;
    pcg32_seed(&rng, 7, PCG32_INITSEQ_CONV_FILTERS);
    for (size_t i = 0; i < 4 * 5 * 5; i++) {
        double u = convpop_uniform(&rng);
        assert_true(w[i] == u / 5.0);
        assert_true(fabs(w[i]) < 0.2);
    }
    /* Another seed is another bank. */
    convpop_filters(4, 5, 8, w2);
    size_t same = 0;
    for (size_t i = 0; i < 4 * 5 * 5; i++)
        same += w[i] == w2[i];
    assert_true(same == 0);
}

/* The layout and the convolution against a direct long double sum. */
static void check_conv(size_t m, size_t ih, size_t iw, size_t c, size_t k)
{
    double *img = malloc(m * ih * iw * sizeof *img);
    assert_non_null(img);
    pcg32_t rng;
    pcg32_seed(&rng, 3, 99);
    for (size_t i = 0; i < m * ih * iw; i++)
        img[i] = (double)pcg32_bounded(&rng, 17); /* 0..16 like Digits */
    convpop_t pop;
    double filt[8 * 9];
    bn_error err;
    if (convpop_from_images(img, m, ih, iw, c, k, 5, &pop, filt, &err) != 0)
        fail_msg("%s", err.msg);
    size_t h = ih - k + 1, w = iw - k + 1;
    assert_int_equal(pop.m, m);
    assert_int_equal(pop.h, h);
    assert_int_equal(pop.w, w);
    assert_int_equal(pop.c, c);
    assert_int_equal(pop.n, m * h * w);
    double bank[8 * 9];
    convpop_filters(c, k, 5, bank);
    assert_memory_equal(filt, bank, c * k * k * sizeof *bank);
    for (size_t s = 0; s < m; s++)
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++) {
                size_t row = (s * h + y) * w + x;
                assert_int_equal(pop.group[row], s);
                for (size_t f = 0; f < c; f++) {
                    long double want = 0.0L, mag = 0.0L;
                    for (size_t u = 0; u < k; u++)
                        for (size_t v = 0; v < k; v++) {
                            long double t =
                                (long double)bank[(f * k + u) * k + v] *
                                img[(s * ih + y + u) * iw + x + v];
                            want += t;
                            mag += fabsl(t);
                        }
                    assert_close(pop.x[row * c + f], want, 1e-15, mag);
                }
            }
    for (size_t f = 0; f < c; f++) {
        long double mu, v;
        ld_moments(pop.n, c, pop.x + f, &mu, &v);
        assert_close(pop.mean[f], mu, 1e-14, sqrtl(v) + fabsl(mu));
        assert_rel(pop.var[f], v, 1e-13);
    }
    convpop_free(&pop);
    free(img);
}

static void test_convolution_and_layout(void **state)
{
    (void)state;
    check_conv(3, 5, 4, 2, 3);
    check_conv(4, 8, 8, 8, 3);
    check_conv(2, 3, 3, 1, 3); /* one position per sample */
    check_conv(2, 4, 6, 3, 1); /* 1 x 1: each map is the image scaled */
    check_conv(3, 6, 5, 2, 2);
}

static void test_bad_input_is_refused(void **state)
{
    (void)state;
    double img[2 * 4 * 4] = {0};
    convpop_t pop;
    bn_error err;
    assert_int_equal(convpop_from_images(img, 2, 4, 4, 2, 5, 1, &pop, NULL,
                                         &err),
                     -1);
    assert_non_null(strstr(err.msg, "do not fit"));
    assert_int_equal(convpop_from_images(img, 1, 4, 4, 2, 3, 1, &pop, NULL,
                                         &err),
                     -1);
    assert_non_null(strstr(err.msg, "at least 2 samples"));
    assert_int_equal(convpop_from_images(img, 2, 4, 4, 0, 3, 1, &pop, NULL,
                                         &err),
                     -1);
    assert_non_null(strstr(err.msg, "at least one channel"));
    /* More channels than the layer's old fixed arrays held are fine. */
    double *filters = malloc(65 * 9 * sizeof *filters);
    assert_non_null(filters);
    assert_int_equal(convpop_from_images(img, 2, 4, 4, 65, 3, 1, &pop,
                                         filters, &err),
                     0);
    assert_int_equal(pop.c, 65);
    free(filters);
    convpop_free(&pop);
    img[21] = NAN;
    assert_int_equal(convpop_from_images(img, 2, 4, 4, 2, 3, 1, &pop, NULL,
                                         &err),
                     -1);
    assert_non_null(strstr(err.msg, "image 1, pixel 5"));
    convpop_channel bad = {1.5, 0.0, 1.0};
    assert_int_equal(convpop_field(4, 3, 3, 1, &bad, 1, &pop, &err), -1);
    assert_non_null(strstr(err.msg, "r must be in [-1, 1]"));
    convpop_channel ok = {0.5, 0.0, 1.0};
    field_or_fail(4, 3, 3, 1, &ok, 1, &pop);
    convpop_neff ne;
    assert_int_equal(convpop_effective(&pop, 4, 0, &ne, &err), -1);
    assert_int_equal(convpop_effective(&pop, 0, 0, &ne, &err), -1);
    assert_int_equal(convpop_effective(&pop, 2, 1, &ne, &err), -1);
    size_t perm[36], group[36];
    memcpy(group, pop.group, sizeof group);
    assert_int_equal(convpop_order_groups(36, group, 3, 1, perm, &err), -1);
    assert_non_null(strstr(err.msg, "group 3 is not below 3"));
    assert_int_equal(convpop_order_groups(36, group, 5, 1, perm, &err), -1);
    assert_non_null(strstr(err.msg, "group 4 has no rows"));
    convpop_free(&pop);
}

/* S_L(r) = sum_{i, j < L} r^|i - j|: L^2 times the variance of the mean of
 * L consecutive values of a unit AR(1) series. */
static long double ar_sum(size_t l, long double r)
{
    long double s = (long double)l, rd = 1.0L;
    for (size_t d = 1; d < l; d++) {
        rd *= r;
        s += 2.0L * (long double)(l - d) * rd;
    }
    return s;
}

/* The field has the correlation it claims: the lag-(1,0), (0,1) and (1,1)
 * correlations over every sample, and the variance of the per-sample mean
 * relative to v / (H W), the design effect S_H(r) S_W(r) / (H W). With
 * M = 3000 samples the correlations' standard errors are below 0.006 and
 * the variance ratio's relative one about sqrt(2 / M) = 0.026: the bounds
 * are 0.03 and 5 sqrt(2 / M). */
static void test_field_has_its_correlation(void **state)
{
    (void)state;
    static const convpop_channel ch[] = {
        {0.5, 1.0, 2.0}, {-0.5, -3.0, 0.5}, {0.0, 0.0, 1.0}, {0.9, 0.0, 1.0}};
    const size_t m = 3000, h = 6, w = 5, c = 4;
    convpop_t pop;
    field_or_fail(m, h, w, c, ch, 21, &pop);
    for (size_t f = 0; f < c; f++) {
        long double r = ch[f].r, mu = pop.mean[f], v = pop.var[f];
        assert_close(mu, ch[f].mean, 0.05, ch[f].sd);
        assert_close(v, ch[f].sd * ch[f].sd, 0.1, ch[f].sd * ch[f].sd);
        long double cx = 0.0L, cy = 0.0L, cxy = 0.0L;
        size_t nx = 0, ny = 0, nxy = 0;
        for (size_t s = 0; s < m; s++)
            for (size_t y = 0; y < h; y++)
                for (size_t x = 0; x < w; x++) {
                    const double *p = pop.x + ((s * h + y) * w + x) * c + f;
                    long double d = *p - mu;
                    if (x + 1 < w) {
                        cx += d * (p[c] - mu);
                        nx++;
                    }
                    if (y + 1 < h) {
                        cy += d * (p[w * c] - mu);
                        ny++;
                    }
                    if (x + 1 < w && y + 1 < h) {
                        cxy += d * (p[(w + 1) * c] - mu);
                        nxy++;
                    }
                }
        assert_close(cx / nx / v, r, 0.03, 1.0L);
        assert_close(cy / ny / v, r, 0.03, 1.0L);
        assert_close(cxy / nxy / v, r * r, 0.03, 1.0L);
        convpop_neff ne;
        assert_int_equal(convpop_effective(&pop, 1, f, &ne, NULL), 0);
        long double deff = ne.s2 / (ne.v / (long double)(h * w));
        long double want = ar_sum(h, r) * ar_sum(w, r) / (long double)(h * w);
        assert_close(deff, want, 5.0L * sqrtl(2.0L / m), want);
    }
    convpop_free(&pop);
}

/* A population of m samples is the first m samples of a larger one. */
static void test_field_prefix(void **state)
{
    (void)state;
    static const convpop_channel ch[] = {{0.3, 0.0, 1.0}, {-0.7, 1.0, 2.0}};
    convpop_t a, b;
    field_or_fail(5, 3, 4, 2, ch, 9, &a);
    field_or_fail(8, 3, 4, 2, ch, 9, &b);
    assert_memory_equal(a.x, b.x, a.n * a.c * sizeof *a.x);
    convpop_free(&a);
    convpop_free(&b);
}

/* Whole groups, each in its enumerated order, the groups a permutation;
 * with one row per group the same permutation as `shuffled`'s
 * gsl_ran_shuffle of 0..n-1 on the same stream. */
static void test_order_keeps_groups_whole(void **state)
{
    (void)state;
    const size_t g = 7, n = 30;
    size_t group[30], perm[50], seen[7] = {0};
    /* Groups of uneven sizes, interleaved in the enumeration. */
    for (size_t i = 0; i < n; i++)
        group[i] = (i * 5 + i / 7) % g;
    assert_int_equal(convpop_order_groups(n, group, g, 3, perm, NULL), 0);
    size_t i = 0, order_seen = 0;
    while (i < n) {
        size_t q = group[perm[i]];
        assert_int_equal(seen[q], 0);
        seen[q] = 1;
        order_seen++;
        size_t prev = perm[i++];
        while (i < n && group[perm[i]] == q) {
            assert_true(perm[i] > prev);
            prev = perm[i++];
        }
    }
    assert_int_equal(order_seen, g);
    size_t ids[50], want[50];
    for (size_t k = 0; k < 50; k++)
        ids[k] = want[k] = k;
    assert_int_equal(convpop_order_groups(50, ids, 50, 11, perm, NULL), 0);
    gsl_rng *rng = pcg32_gsl_alloc(11, PCG32_INITSEQ_SHUFFLE);
    assert_non_null(rng);
    gsl_ran_shuffle(rng, want, 50, sizeof *want);
    gsl_rng_free(rng);
    assert_memory_equal(perm, want, 50 * sizeof *perm);
}

/* The mean square deviation of batch means from the channel mean,
 * averaged over every full batch of one order. */
static long double batch_msd(const convpop_t *pop, const size_t *perm,
                             size_t b, size_t f)
{
    size_t rows = b * pop->h * pop->w, nb = pop->m / b;
    long double acc = 0.0L;
    for (size_t k = 0; k < nb; k++) {
        long double s = 0.0L;
        for (size_t i = 0; i < rows; i++)
            s += pop->x[perm[k * rows + i] * pop->c + f];
        long double d = s / rows - pop->mean[f];
        acc += d * d;
    }
    return acc / (long double)nb;
}

/* Rows of samples taken in the order of ids. */
static void expand(const convpop_t *pop, const size_t *ids, size_t *perm)
{
    size_t hw = pop->h * pop->w;
    for (size_t q = 0; q < pop->m; q++)
        for (size_t i = 0; i < hw; i++)
            perm[q * hw + i] = ids[q] * hw + i;
}

/* Every ordering of M = 6 samples of 2 x 2: the average square deviation
 * of a batch mean is var_batch, to rounding (no sampling enters). */
static void test_effective_count_equals_enumeration(void **state)
{
    (void)state;
    static const convpop_channel ch[] = {{0.6, 2.0, 1.0}, {-0.6, 0.0, 3.0}};
    convpop_t pop;
    field_or_fail(6, 2, 2, 2, ch, 4, &pop);
    for (size_t b = 1; b <= 3; b++)
        for (size_t f = 0; f < 2; f++) {
            size_t ids[6], perm[24], count = 0;
            for (size_t q = 0; q < 6; q++)
                ids[q] = q;
            long double sum = 0.0L;
            do {
                expand(&pop, ids, perm);
                sum += batch_msd(&pop, perm, b, f);
                count++;
            } while (test_next_permutation(ids, 6));
            assert_int_equal(count, 720);
            convpop_neff ne;
            assert_int_equal(convpop_effective(&pop, b, f, &ne, NULL), 0);
            long double want = sum / count;
            assert_rel(ne.var_batch, want, 1e-13);
            assert_rel(ne.n_eff, pop.var[f] / want, 1e-13);
        }
    convpop_free(&pop);
}

/* Every ordering of the 6 rows of 3 samples of 1 x 2, rows drawn one by
 * one: a batch of 2 rows has variance var_iid for b = 1 sample. */
static void test_iid_variance_equals_enumeration(void **state)
{
    (void)state;
    static const convpop_channel ch[] = {{0.8, 0.5, 1.5}};
    convpop_t pop;
    field_or_fail(3, 1, 2, 1, ch, 6, &pop);
    size_t perm[6] = {0, 1, 2, 3, 4, 5};
    long double sum = 0.0L;
    size_t count = 0;
    do {
        for (size_t k = 0; k < 3; k++) {
            long double d = ((long double)pop.x[perm[2 * k]] +
                             pop.x[perm[2 * k + 1]]) / 2.0L -
                            pop.mean[0];
            sum += d * d;
        }
        count += 3;
    } while (test_next_permutation(perm, 6));
    convpop_neff ne;
    assert_int_equal(convpop_effective(&pop, 1, 0, &ne, NULL), 0);
    assert_rel(ne.var_iid, sum / count, 1e-13);
    assert_rel(ne.count_fpc, pop.var[0] / (sum / count), 1e-13);
    assert_true(ne.count == 2.0);
    convpop_free(&pop);
}

/* 10^4 orders from convpop_order_groups: the mean square deviation of the
 * batch means within 3.29 standard errors (two-sided 99.9 %) of
 * var_batch, for r > 0, r < 0 and several batch sizes. */
static void test_effective_count_matches_shuffles(void **state)
{
    (void)state;
    static const convpop_channel ch[] = {{0.5, 1.0, 1.0}, {-0.5, 0.0, 2.0}};
    convpop_t pop;
    field_or_fail(64, 4, 4, 2, ch, 12, &pop);
    static const size_t sizes[] = {2, 4, 16};
    const size_t shuffles = 10000;
    size_t *perm = malloc(pop.n * sizeof *perm);
    assert_non_null(perm);
    for (size_t si = 0; si < 3; si++)
        for (size_t f = 0; f < 2; f++) {
            long double sum = 0.0L, sum2 = 0.0L;
            for (size_t seed = 1; seed <= shuffles; seed++) {
                assert_int_equal(convpop_order_groups(pop.n, pop.group, pop.m,
                                                      seed, perm, NULL),
                                 0);
                long double x = batch_msd(&pop, perm, sizes[si], f);
                sum += x;
                sum2 += x * x;
            }
            long double mean = sum / shuffles;
            long double se =
                sqrtl((sum2 - sum * mean) / (shuffles - 1) / shuffles);
            convpop_neff ne;
            assert_int_equal(
                convpop_effective(&pop, sizes[si], f, &ne, NULL), 0);
            long double z = (mean - ne.var_batch) / se;
            if (!(fabsl(z) <= 3.29L))
                fail_msg("B %zu channel %zu: shuffles %.6Lg, closed form "
                         "%.6g, z = %.3Lg",
                         sizes[si], f, mean, ne.var_batch, z);
        }
    free(perm);
    convpop_free(&pop);
}

/* The direction, computed on a population drawn, not assumed: with
 * neighbours moving together (r > 0) the count B H W overstates the
 * information (ratio < 1); with neighbours offsetting each other (r < 0)
 * it understates it (ratio > 1); with r = 0 the ratio is 1 within
 * 5 sqrt(2 / M), the relative standard error of s2 over M samples. */
static void test_count_overstates_for_positive_r(void **state)
{
    (void)state;
    static const convpop_channel ch[] = {
        {0.3, 0.0, 1.0}, {-0.3, 0.0, 1.0}, {0.0, 0.0, 1.0}};
    const size_t m = 500;
    convpop_t pop;
    field_or_fail(m, 6, 6, 3, ch, 2, &pop);
    static const size_t sizes[] = {1, 8, 64, 250};
    convpop_neff first;
    assert_int_equal(convpop_effective(&pop, 1, 0, &first, NULL), 0);
    for (size_t si = 0; si < 4; si++) {
        convpop_neff pos, neg, zero;
        assert_int_equal(convpop_effective(&pop, sizes[si], 0, &pos, NULL), 0);
        assert_int_equal(convpop_effective(&pop, sizes[si], 1, &neg, NULL), 0);
        assert_int_equal(convpop_effective(&pop, sizes[si], 2, &zero, NULL),
                         0);
        assert_true(pos.ratio < 1.0 && pos.n_eff < pos.count_fpc);
        assert_true(neg.ratio > 1.0 && neg.n_eff > neg.count_fpc);
        assert_close(zero.ratio, 1.0, 5.0 * sqrt(2.0 / m), 1.0);
        assert_true(pos.count == (double)(sizes[si] * 36));
        /* The ratio is v (M - 1) / (s2 (N - 1)) whatever B: the two
         * finite-population factors cancel (docs/convolution.md). */
        assert_rel(pos.ratio, first.ratio, 1e-14);
    }
    convpop_free(&pop);
}

/* The edge cases of convpop_effective: a constant channel, and a channel
 * whose every sample has the same mean (r = -1 on 1 x 2 maps: z = e, -e). */
static void test_effective_edges(void **state)
{
    (void)state;
    static const convpop_channel ch[] = {{0.5, 4.0, 0.0}, {-1.0, 0.0, 1.0}};
    convpop_t pop;
    field_or_fail(10, 1, 2, 2, ch, 3, &pop);
    convpop_neff ne;
    assert_int_equal(convpop_effective(&pop, 3, 0, &ne, NULL), 0);
    assert_true(ne.v == 0.0 && ne.var_batch == 0.0);
    assert_true(ne.ratio == 1.0 && ne.n_eff == ne.count_fpc);
    assert_int_equal(convpop_effective(&pop, 3, 1, &ne, NULL), 0);
    assert_true(ne.v > 0.0 && ne.var_batch == 0.0);
    assert_true(isinf(ne.n_eff) && isinf(ne.ratio));
    convpop_free(&pop);
}

int test_convpop_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform_is_exact_odd_multiple),
        cmocka_unit_test(test_filters_are_the_stream_scaled),
        cmocka_unit_test(test_convolution_and_layout),
        cmocka_unit_test(test_bad_input_is_refused),
        cmocka_unit_test(test_field_has_its_correlation),
        cmocka_unit_test(test_field_prefix),
        cmocka_unit_test(test_order_keeps_groups_whole),
        cmocka_unit_test(test_effective_count_equals_enumeration),
        cmocka_unit_test(test_iid_variance_equals_enumeration),
        cmocka_unit_test(test_effective_count_matches_shuffles),
        cmocka_unit_test(test_count_overstates_for_positive_r),
        cmocka_unit_test(test_effective_edges),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("convpop", tests, NULL, NULL);
}
