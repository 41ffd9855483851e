/*
 * The platform-independent arithmetic (num.h) and draws (rand.h) against
 * references that are not our code: long double (logl, expl, erfcl), GSL's
 * inverse normal CDF, Gaussian sampler, shuffle, quantile and sort on the
 * same PCG32 stream, exact integer arithmetic, and values worked by hand.
 * Each comparison states its bound in units in the last place (ulp) of the
 * double result; on x86-64 long double carries 11 bits more than double,
 * so a reference rounding error is at most 2^-11 ulp.
 */
#include "helpers.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "base/rand.h"
#include "base/num.h"
#include "base/pcg32.h"

/* The size of one ulp at |r|, for r normal or subnormal. */
static long double ulp_of(long double r)
{
    double d = fabs((double)r);
    if (d == 0.0)
        return 0x1p-1074L;
    return (long double)nextafter(d, INFINITY) - (long double)d;
}

static long double ulp_err(double got, long double want)
{
    return fabsl((long double)got - want) / ulp_of(want);
}

static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* A deterministic spread of doubles: random bit patterns of every
 * exponent, and values near 1 where log is smallest relative to x. */
static double random_positive(pcg32_t *g, size_t i)
{
    if (i % 2) {
        uint64_t b = (uint64_t)pcg32_next(g) << 32 | pcg32_next(g);
        b &= 0x7fffffffffffffffULL;
        double x;
        memcpy(&x, &b, sizeof x);
        return isfinite(x) && x > 0.0 ? x : 1.5;
    }
    return 1.0 + ldexp(pcg32_next(g) / 4294967296.0 - 0.5,
                       -(int)(pcg32_next(g) % 40));
}

/* Correctly rounded to within the reference's own error: 0.5 ulp plus
 * 2^-11 for long double's rounding. glibc's log, which is not correctly
 * rounded, reaches 0.518 ulp on the same inputs, so the bound tells. */
#define CR_BOUND (0.5L + 0x1p-11L)

/* Arguments for the exponential: uniform over three scales, the whole
 * finite range down to where the result is tiny. */
static double random_exponent(pcg32_t *g, size_t i)
{
    double scale = i % 3 == 0 ? 708.0 : (i % 3 == 1 ? 5.0 : 1e-3);
    return (pcg32_next(g) / 4294967296.0 * 2.0 - 1.0) * scale;
}

/* f against its long double reference on a million arguments from gen,
 * failing with the worst one if it is beyond CR_BOUND. */
static void check_correctly_rounded(const char *name, double (*f)(double),
                                    long double (*ref)(long double),
                                    double (*gen)(pcg32_t *, size_t),
                                    uint64_t seed)
{
    pcg32_t g;
    pcg32_seed(&g, seed, 3u);
    long double worst = 0.0L;
    double worst_x = 0.0;
    for (size_t i = 0; i < 1000000; i++) {
        double x = gen(&g, i);
        long double e = ulp_err(f(x), ref((long double)x));
        if (e > worst) {
            worst = e;
            worst_x = x;
        }
    }
    if (worst > CR_BOUND)
        fail_msg("%s(%a) is %.4Lf ulp from long double", name, worst_x, worst);
}

static void test_log_against_long_double(void **state)
{
    (void)state;
    check_correctly_rounded("num_log", num_log, logl, random_positive, 11u);
    /* Subnormals take frexp's other path. */
    for (int k = 1; k <= 52; k++) {
        double x = ldexp(1.0 + k / 64.0, -1022 - k);
        assert_true(ulp_err(num_log(x), logl((long double)x)) <= CR_BOUND);
    }
}

static void test_log_special_values(void **state)
{
    (void)state;
    assert_true(num_log(1.0) == 0.0 && !signbit(num_log(1.0)));
    assert_true(num_log(0.0) == -INFINITY);
    assert_true(num_log(-0.0) == -INFINITY);
    assert_true(num_log(INFINITY) == INFINITY);
    assert_true(isnan(num_log(-1.0)));
    assert_true(isnan(num_log(-INFINITY)));
    assert_true(isnan(num_log(NAN)));
    /* Exact powers of two are k ln 2 rounded once. */
    for (int k = -1074; k <= 1023; k += 7)
        assert_true(ulp_err(num_log(ldexp(1.0, k)), (long double)k *
                                                        0.693147180559945309417232121458176568L) <=
                    CR_BOUND);
}

static void test_exp_against_long_double(void **state)
{
    (void)state;
    check_correctly_rounded("num_exp", num_exp, expl, random_exponent, 12u);
    /* Subnormal results are rounded twice (to double, then by ldexp), so
     * they are within one ulp of the subnormal, not half. */
    for (double x = -745.0; x < -708.5; x += 0.37)
        assert_true(ulp_err(num_exp(x), expl((long double)x)) <= 1.0L);
}

static void test_exp_special_values(void **state)
{
    (void)state;
    assert_true(num_exp(0.0) == 1.0);
    assert_true(num_exp(-0.0) == 1.0);
    assert_true(num_exp(INFINITY) == INFINITY);
    assert_true(num_exp(-INFINITY) == 0.0);
    assert_true(isnan(num_exp(NAN)));
    /* The overflow threshold: the largest double below log(DBL_MAX) gives
     * a finite result, the next one infinity. */
    double edge = 0x1.62e42fefa39efp+9;
    assert_true(isfinite(num_exp(edge)));
    assert_true(ulp_err(num_exp(edge), expl((long double)edge)) <= CR_BOUND);
    assert_true(num_exp(nextafter(edge, INFINITY)) == INFINITY);
    /* 2^-1074 is the smallest positive; far below it, 0. */
    assert_true(num_exp(-744.4400719213812) > 0.0);
    assert_true(num_exp(-746.0) == 0.0);
    /* log and exp invert each other to within rounding. */
    for (double x = -700.0; x < 700.0; x += 13.7)
        assert_true(fabs(num_log(num_exp(x)) - x) <= 1e-15 * fabs(x) + 1e-300);
}

/* An argument for num_exp_array: the edges of its paired range (708),
 * of num_exp's (overflow, underflow), zeros, NaN, infinities, tiny
 * values, a softmax's differences (z_c - max z, -40 to 0) and random bit
 * patterns of every exponent and sign. */
static double exp_argument(pcg32_t *g, size_t i)
{
    static const double edges[] = {
        0.0, -0.0, 708.0, -708.0, 0x1.620000000001p+9, -0x1.620000000001p+9,
        0x1.62e42fefa39efp+9, 0x1.62e42fefa39fp+9, -745.13321910194122,
        -745.2, 0x1p-1074, -0x1p-1074, 0x1p-900, -0x1p-1000, 1e-300,
        INFINITY, -INFINITY, NAN, -NAN, 0x1.62e42fefa39efp-2,
        -0x1.62e42fefa39efp-2, 1.0, -1.0,
    };
    size_t ne = sizeof edges / sizeof *edges;
    switch (i % 4) {
    case 0:
        return edges[(pcg32_next(g) % ne)];
    case 1:
        return -40.0 * (pcg32_next(g) / 4294967296.0);
    case 2:
        return 1460.0 * (pcg32_next(g) / 4294967296.0) - 750.0;
    default: {
        uint64_t b = (uint64_t)pcg32_next(g) << 32 | pcg32_next(g);
        double x;
        memcpy(&x, &b, sizeof x);
        return x;
    }
    }
}

/* An argument for num_log_array: normal and subnormal edges, 0, a
 * negative, the infinities and NaN, a softmax's sums (1 to 10), values
 * near 1 and random bit patterns of every exponent. */
static double log_argument(pcg32_t *g, size_t i)
{
    static const double edges[] = {
        0.0, -0.0, -1.0, 0x1p-1074, 0x1p-1022, 0x0.fffffffffffffp-1022,
        DBL_MAX, INFINITY, -INFINITY, NAN, 1.0, 0x1.6a09e667f3bcdp-1,
        0x1.6a09e667f3bccp-1, 0x1.6a09e667f3bcdp+0, 2.0, 0.5,
    };
    size_t ne = sizeof edges / sizeof *edges;
    switch (i % 4) {
    case 0:
        return edges[pcg32_next(g) % ne];
    case 1:
        return 1.0 + 9.0 * (pcg32_next(g) / 4294967296.0);
    default:
        return random_positive(g, i / 4);
    }
}

/* An array function makes two at a time what its scalar function makes
 * one at a time: the same bits for every argument, each kind of
 * argument paired with the others, an odd length every other round. */
static void check_array_is_scalar(const char *name,
                                  void (*array)(double *, size_t),
                                  double (*scalar)(double),
                                  double (*argument)(pcg32_t *, size_t),
                                  uint64_t seed)
{
    pcg32_t g;
    pcg32_seed(&g, seed, 7u);
    enum { N = 4001 };
    static double x[N], v[N];
    size_t bad = 0;
    for (int round = 0; round < 100; round++) {
        for (size_t i = 0; i < N; i++)
            x[i] = argument(&g, i * 7 + (size_t)round);
        size_t n = N - (size_t)round % 2;
        memcpy(v, x, n * sizeof *v);
        array(v, n);
        for (size_t i = 0; i < n; i++)
            if (!same_bits(v[i], scalar(x[i])) && bad++ < 5)
                print_message("%s(%a) = %a, not %a\n", name, x[i], v[i],
                              scalar(x[i]));
    }
    assert_int_equal(bad, 0);
}

static void test_exp_array_is_exp(void **state)
{
    (void)state;
    check_array_is_scalar("num_exp_array", num_exp_array, num_exp,
                          exp_argument, 29u);
}

static void test_log_array_is_log(void **state)
{
    (void)state;
    check_array_is_scalar("num_log_array", num_log_array, num_log,
                          log_argument, 31u);
}

/* Products of two 53-bit integers are exact in 106 bits: the
 * double-double's hi + lo must be that integer exactly. */
/* cos(pi x) against cosl(pi r) in long double, r = x - 2 round(x / 2)
 * (exact), within 1 ulp over [-4, 4], and at the values it must hit. */
static void test_cos_pi(void **state)
{
    (void)state;
    const long double pi = 3.141592653589793238462643383279502884L;
    for (int i = -4000; i <= 4000; i++) {
        double x = (double)i / 1000.0 + (double)i * 1e-7;
        long double r = (long double)x - 2.0L * roundl((long double)x / 2.0L);
        long double want = cosl(pi * r);
        double got = num_cos_pi(x);
        /* Near a zero of cos an ulp of the result is tiny: the bound is
         * relative to the argument's ulp there instead. */
        long double scale = fabsl(want) > 1e-3L ? 0.0L : 1e-15L;
        if (!(ulp_err(got, want) <= 1.0L || fabsl(got - want) <= scale))
            fail_msg("num_cos_pi(%.17g) = %.17g, cosl %.20Lg", x, got, want);
    }
    assert_true(num_cos_pi(0.0) == 1.0 && num_cos_pi(2.0) == 1.0);
    assert_true(num_cos_pi(1.0) == -1.0 && num_cos_pi(-1.0) == -1.0);
    assert_true(num_cos_pi(0.5) == 0.0 && num_cos_pi(1.5) == 0.0);
    assert_true(fabs(num_cos_pi(1.0 / 3.0) - 0.5) <= 2e-16);
    assert_true(isnan(num_cos_pi(INFINITY)) && isnan(num_cos_pi(NAN)));
}

static void test_double_double_exact(void **state)
{
    (void)state;
    pcg32_t g;
    pcg32_seed(&g, 13u, 3u);
    for (int i = 0; i < 100000; i++) {
        uint64_t a = ((uint64_t)pcg32_next(&g) << 32 | pcg32_next(&g)) >> 11;
        uint64_t b = ((uint64_t)pcg32_next(&g) << 32 | pcg32_next(&g)) >> 11;
        __extension__ typedef unsigned __int128 u128;
        __extension__ typedef __int128 i128;
        u128 want = (u128)a * b;
        num_dd p = num_dd_mul(num_dd_make((double)a), num_dd_make((double)b));
        /* Both parts are integers here: hi is a multiple of its ulp >= 1
         * and lo is the exact remainder. */
        i128 got = (i128)(u128)p.hi + (i128)p.lo;
        if ((u128)got != want)
            fail_msg("%llu * %llu: double-double is off",
                     (unsigned long long)a, (unsigned long long)b);
        /* Sums are exact too: a < 2^40 plus a multiple of 2^-20 needs 60
         * bits, which long double holds. */
        double a40 = (double)(a >> 13), c = (double)(b >> 33) * 0x1p-20;
        num_dd s = num_dd_add(num_dd_make(a40), num_dd_make(c));
        assert_true(s.hi == a40 + c);
        assert_true((long double)s.hi + s.lo == (long double)a40 + c);
    }
    /* 1/3 to 106 bits: the nearest double, then the nearest double to what
     * it leaves, whose bits are known by hand. */
    num_dd third = num_dd_div(num_dd_make(1.0), num_dd_make(3.0));
    assert_true(third.hi == 0x1.5555555555555p-2);
    assert_true(third.lo == 0x1.5555555555555p-56);
    /* Division undoes multiplication to far below double's precision. */
    for (int i = 0; i < 1000; i++) {
        num_dd a = {1.0 + pcg32_next(&g) / 4294967296.0, 0x1p-60 * (pcg32_next(&g) / 4294967296.0)};
        num_dd b = {0.5 + pcg32_next(&g) / 4294967296.0, 0.0};
        num_dd back = num_dd_div(num_dd_mul(a, b), b);
        num_dd diff = num_dd_sub(back, a);
        assert_true(fabs(num_dd_value(diff)) <= 0x1p-100);
    }
}

/* Phi^-1 in long double: two Newton steps from GSL's value, each squaring
 * the relative error. Near the median Phi(x) - 1/2 is taken through erf,
 * so that its absolute error stays relative to x. */
static long double norm_inv_ld(double p)
{
    long double x = gsl_cdf_ugaussian_Pinv(p);
    for (int k = 0; k < 2; k++) {
        long double z = x / sqrtl(2.0L), f;
        if (fabsl(x) < 1.0L)
            f = 0.5L * erfl(z) - ((long double)p - 0.5L);
        else
            f = 0.5L * erfcl(-z) - (long double)p;
        long double pdf = expl(-0.5L * x * x) /
                          sqrtl(2.0L * 3.141592653589793238462643383279503L);
        x -= f / pdf;
    }
    return x;
}

/* AS 241 is a rational approximation good to about 1e-16 relative
 * (Wichura's claim); measured here, within 7 ulp in each of its three
 * regions, so the bound is 8. Evaluated in the same order as GSL's, it
 * gives GSL's bits wherever the logarithm inside agrees with glibc's. */
static void test_norm_inv(void **state)
{
    (void)state;
    long double worst = 0.0L;
    double worst_p = 0.0;
    size_t differ = 0, n = 200000;
    for (size_t i = 0; i < n; i++) {
        double p = ((double)i + 0.5) / (double)n;
        if (i % 4 == 3)
            p = ldexp(p, -(int)(i % 1000)); /* deep into the lower tail */
        double got = num_norm_inv(p), gsl = gsl_cdf_ugaussian_Pinv(p);
        long double e = ulp_err(got, norm_inv_ld(p));
        if (e > worst) {
            worst = e;
            worst_p = p;
        }
        if (!same_bits(got, gsl)) {
            differ++;
            double q = p < 0.5 ? p : 1.0 - p;
            if (fabs(p - 0.5) <= 0.425 || num_log(q) == log(q))
                fail_msg("num_norm_inv(%a) = %a, GSL %a, with the same "
                         "logarithm",
                         p, got, gsl);
            assert_true(ulp_err(got, gsl) <= 4.0L);
        }
        /* Symmetric: Phi^-1(1 - p) = -Phi^-1(p), where 1 - p is exact. */
        if (p >= 0.5)
            assert_true(num_norm_inv(1.0 - p) == -got);
    }
    if (worst > 8.0L)
        fail_msg("num_norm_inv(%a) is %.3Lf ulp from the long double "
                 "inverse", worst_p, worst);
    if (differ > n / 1000)
        fail_msg("num_norm_inv differs from GSL's in %zu of %zu", differ, n);
    assert_true(num_norm_inv(0.5) == 0.0);
    assert_true(num_norm_inv(0.0) == -INFINITY);
    assert_true(num_norm_inv(1.0) == INFINITY);
    assert_true(isnan(num_norm_inv(-0.1)) && isnan(num_norm_inv(1.5)) &&
                isnan(num_norm_inv(NAN)));
    /* Three textbook values. */
    assert_true(fabs(num_norm_inv(0.975) - 1.959963984540054) < 1e-15);
    assert_true(fabs(num_norm_inv(0.84134474606854293) - 1.0) < 1e-15);
    assert_true(fabs(num_norm_inv(0.001) + 3.090232306167813) < 1e-14);
}

/* The Marsaglia polar draws are GSL's, on the same stream: the same
 * uniforms are consumed (the streams stay in step) and the bits agree
 * wherever num_log and glibc's log agree on r^2; elsewhere they differ by
 * the logarithm's last bit, carried through sqrt. */
static void test_gaussian_is_gsl_algorithm(void **state)
{
    (void)state;
    static const uint64_t seeds[][2] = {{1u, 1u}, {5u, 1u}, {12345u, 7u}};
    for (size_t s = 0; s < 3; s++) {
        pcg32_t ours, shadow;
        pcg32_seed(&ours, seeds[s][0], seeds[s][1]);
        pcg32_seed(&shadow, seeds[s][0], seeds[s][1]);
        gsl_rng *r = pcg32_gsl_alloc(seeds[s][0], seeds[s][1]);
        assert_non_null(r);
        size_t n = 300000, differ = 0;
        for (size_t i = 0; i < n; i++) {
            double got = rand_gaussian(&ours), want = gsl_ran_gaussian(r, 1.0);
            /* r^2 of the accepted pair, from a third copy of the stream. */
            double x, y, r2;
            do {
                x = -1.0 + 2.0 * rand_uniform_pos(&shadow);
                y = -1.0 + 2.0 * rand_uniform_pos(&shadow);
                r2 = x * x + y * y;
            } while (r2 > 1.0 || r2 == 0.0);
            if (same_bits(got, want))
                continue;
            differ++;
            if (num_log(r2) == log(r2))
                fail_msg("draw %zu: %a, GSL %a, with the same log(%a)", i,
                         got, want, r2);
            assert_true(ulp_err(got, want) <= 2.0L);
        }
        /* Still in step: the next raw output agrees. */
        assert_int_equal(pcg32_next(&ours), gsl_rng_get(r));
        assert_true(differ < n / 500);
        gsl_rng_free(r);
    }
    /* The moments of a million draws: mean 0, variance 1, kurtosis 3,
     * within five standard errors. */
    pcg32_t g;
    pcg32_seed(&g, 2024u, 1u);
    long double s1 = 0, s2 = 0, s4 = 0;
    size_t n = 1000000;
    for (size_t i = 0; i < n; i++) {
        long double e = rand_gaussian(&g);
        s1 += e;
        s2 += e * e;
        s4 += e * e * e * e;
    }
    assert_true(fabsl(s1 / n) < 5.0L / sqrtl(n));
    assert_true(fabsl(s2 / n - 1.0L) < 5.0L * sqrtl(2.0L / n));
    assert_true(fabsl(s4 / n - 3.0L) < 5.0L * sqrtl(96.0L / n));
}

/* Integer draws and shuffles are GSL's, output for output. */
static void test_shuffle_is_gsl_shuffle(void **state)
{
    (void)state;
    static const uint32_t bounds[] = {1, 2, 3, 6, 7, 100, 512, 1u << 31,
                                      (1u << 31) + 1, 3u << 30, UINT32_MAX};
    pcg32_t g;
    pcg32_seed(&g, 77u, 2u);
    gsl_rng *r = pcg32_gsl_alloc(77u, 2u);
    assert_non_null(r);
    for (size_t b = 0; b < sizeof bounds / sizeof *bounds; b++)
        for (int k = 0; k < 2000; k++) {
            uint32_t got = rand_index(&g, bounds[b]);
            unsigned long want = gsl_rng_uniform_int(r, bounds[b]);
            if (got != want)
                fail_msg("rand_index(%u) = %u, GSL %lu", bounds[b], got, want);
        }
    gsl_rng_free(r);
    /* GSL's loop cannot take 0 elements; ours leaves them alone. */
    pcg32_seed(&g, 8u, 2u);
    rand_shuffle(&g, NULL, 0);
    /* Past 32768 elements the draws are made ahead of the swaps
     * (rand.c's far path): its edge, and a size no power of two. */
    static const size_t sizes[] = {1,     2,     3,      10,    512,
                                   32768, 32769, 100000, 300007};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s];
        size_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
        assert_non_null(a);
        assert_non_null(b);
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] = i * 3 + 1;
        pcg32_seed(&g, 9u + s, 2u);
        rand_shuffle(&g, a, n);
        r = pcg32_gsl_alloc(9u + s, 2u);
        gsl_ran_shuffle(r, b, n, sizeof *b);
        int same = memcmp(a, b, n * sizeof *a) == 0;
        int step = pcg32_next(&g) == gsl_rng_get(r);
        gsl_rng_free(r);
        free(a);
        free(b);
        if (!same || !step)
            fail_msg("shuffle of %zu differs from gsl_ran_shuffle", n);
    }
}

/* rand_scale's quotient by the floating-point divider is the integer
 * division's for every n: all n up to 2^24, the top 2^20 (the smallest
 * quotients, where one unit is the largest share of q), both sides of
 * every power of two and a million more at random. */
static void test_scale_is_integer_division(void **state)
{
    (void)state;
    size_t bad = 0;
    uint32_t first = 0;
#define SCALE_CHECK(n)                                                    \
    do {                                                                  \
        uint32_t n_ = (n);                                                \
        if (n_ && rand_scale(n_) != UINT32_MAX / n_ && bad++ == 0)        \
            first = n_;                                                   \
    } while (0)
    for (uint32_t n = 1; n <= 1u << 24; n++)
        SCALE_CHECK(n);
    for (uint32_t n = UINT32_MAX - (1u << 20); n != 0; n++)
        SCALE_CHECK(n);
    for (int e = 1; e < 32; e++)
        for (uint32_t d = 0; d < 3; d++) {
            SCALE_CHECK((1u << e) - d);
            SCALE_CHECK((1u << e) + d);
        }
    pcg32_t g;
    pcg32_seed(&g, 31u, 9u);
    for (int k = 0; k < 1000000; k++) {
        uint32_t n = pcg32_next(&g);
        SCALE_CHECK(n);
    }
#undef SCALE_CHECK
    if (bad)
        fail_msg("rand_scale differs from UINT32_MAX / n at %zu n, first %u",
                 bad, first);
}

static void test_moments(void **state)
{
    (void)state;
    pcg32_t g;
    pcg32_seed(&g, 3u, 3u);
    static double v[3000];
    for (size_t i = 0; i < 3000; i++)
        v[i] = 1e8 + rand_gaussian(&g);
    for (size_t stride = 1; stride <= 3; stride++) {
        size_t n = 3000 / stride;
        double m, ss;
        num_moments(n, stride, v, &m, &ss);
        long double lm, lv;
        ld_moments(n, stride, v, &lm, &lv);
        assert_rel(m, lm, 1e-16);
        assert_rel(ss / (double)n, lv, 1e-12);
        /* GSL's long double running sd, on the same data. */
        double gsd = gsl_stats_sd_m(v, stride, n, m);
        assert_rel(sqrt(ss / (double)(n - 1)), gsd, 1e-9);
    }
    /* By hand: 1 2 3 4 has mean 2.5 and squared deviations summing to 5. */
    double h[] = {4, 1, 3, 2}, m, ss;
    num_moments(4, 1, h, &m, &ss);
    assert_true(m == 2.5 && ss == 5.0);
    num_moments(1, 1, h, &m, &ss);
    assert_true(m == 4.0 && ss == 0.0);
    /* By hand, where the mean is not a double: 1e8 and twice 1e8 + u (u
     * its ulp) have mean 1e8 + 2u/3, which lands on 1e8 or 1e8 + u. The
     * squared deviations from either sum to 2u^2 or u^2, the true sum is
     * 4u^2/9 + 2u^2/9 = 2u^2/3, and only the correction term (s1^2 / n)
     * gets there. */
    double u = ldexp(1.0, -26), t[] = {1e8, 1e8 + u, 1e8 + u};
    num_moments(3, 1, t, &m, &ss);
    assert_true(m == 1e8 || m == 1e8 + u);
    assert_rel(ss, 2.0L / 3.0L * u * u, 1e-15);
}

static void test_sort_and_quantiles(void **state)
{
    (void)state;
    /* By hand: n = 5, (n - 1) q = 0.2, 2, 3.8. */
    double h[] = {50, 10, 40, 20, 30};
    num_sort(h, 5);
    for (int i = 0; i < 5; i++)
        assert_true(h[i] == 10.0 * (i + 1));
    assert_true(num_quantile_sorted(h, 5, 0.05) == 12.0);
    assert_true(num_quantile_sorted(h, 5, 0.5) == 30.0);
    assert_true(fabs(num_quantile_sorted(h, 5, 0.95) - 48.0) < 1e-13);
    assert_true(num_quantile_sorted(h, 5, 0.0) == 10.0);
    assert_true(num_quantile_sorted(h, 5, 1.0) == 50.0);
    assert_true(num_quantile_sorted(h, 1, 0.7) == 10.0);
    /* Signed zeros in a fixed order whatever qsort does with equal keys. */
    double z[] = {0.0, -0.0, 0.0, -0.0, -1.0};
    num_sort(z, 5);
    assert_true(z[0] == -1.0 && signbit(z[1]) && signbit(z[2]) &&
                !signbit(z[3]) && !signbit(z[4]));
    /* GSL's sort and interpolation, bit for bit, on 1000 shuffled-looking
     * values and every percentile. */
    pcg32_t g;
    pcg32_seed(&g, 4u, 3u);
    static double a[1000], b[1000];
    for (size_t i = 0; i < 1000; i++)
        a[i] = b[i] = rand_gaussian(&g) * 3.0 + 1.0;
    num_sort(a, 1000);
    gsl_sort(b, 1, 1000);
    assert_memory_equal(a, b, sizeof a);
    for (int k = 0; k <= 100; k++) {
        double q = k / 100.0;
        double got = num_quantile_sorted(a, 1000, q);
        double want = gsl_stats_quantile_from_sorted_data(b, 1, 1000, q);
        if (!same_bits(got, want))
            fail_msg("quantile %g: %a, GSL %a", q, got, want);
    }
}

/* num_exp's table of 1/k! against the divisions it stands for: k! is
 * exact in double (below 2^53 up to 18!), so 1.0 / k! is the correctly
 * rounded value, and each entry must be its bits. */
static void test_exp_factorials(void **state)
{
    (void)state;
    double fk = 120.0;
    for (int k = 6; k < 6 + NUM_INV_FACT; k++) {
        fk *= (double)k;
        double want = 1.0 / fk;
        if (!same_bits(num_inv_fact[k - 6], want))
            fail_msg("1/%d!: the table has %a, 1.0 / %.0f is %a", k,
                     num_inv_fact[k - 6], fk, want);
    }
}

/* num_log's table of 2 / i, against the divisions it stands for. */
static void test_log_quotients(void **state)
{
    (void)state;
    for (int n = 0; n < NUM_TWO_OVER_ODD; n++) {
        int i = 27 - 2 * n;
        double want = 2.0 / (double)i;
        if (!same_bits(num_two_over_odd[n], want))
            fail_msg("2/%d: the table has %a, the division %a", i,
                     num_two_over_odd[n], want);
    }
}

/* The total order num_sort keeps, as a comparison: -0 before +0,
 * numbers before NaN, -NaN before NaN. */
static int total_order(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    int na = isnan(a), nb = isnan(b);
    if (na || nb)
        return na != nb ? na - nb : (signbit(b) != 0) - (signbit(a) != 0);
    if (a != b)
        return a < b ? -1 : 1;
    return (signbit(b) != 0) - (signbit(a) != 0);
}

/* num_sort (a radix sort from 64 values on) against qsort with that
 * order, on values with every edge in them and many repeats: the same
 * bits in the same places, a NaN matching a NaN of its sign. */
static void test_sort_total_order(void **state)
{
    (void)state;
    static const double edges[] = {0.0, -0.0, 1.0, -1.0, 0x1p-1074,
                                   -0x1p-1074, DBL_MAX, -DBL_MAX,
                                   INFINITY, -INFINITY, NAN, -NAN};
    pcg32_t g;
    pcg32_seed(&g, 9u, 3u);
    static double a[3000], b[3000];
    for (size_t n = 0; n <= 3000; n += n < 130 ? 1 : 997) {
        for (size_t i = 0; i < n; i++) {
            uint32_t k = pcg32_next(&g);
            uint64_t bits = ((uint64_t)pcg32_next(&g) << 32) | pcg32_next(&g);
            double r;
            memcpy(&r, &bits, sizeof r);
            a[i] = k % 4 == 0   ? edges[k / 4 % 12]
                   : k % 4 == 1 ? r
                   : k % 4 == 2 ? (double)(k % 7) - 3.0
                                : rand_gaussian(&g);
            b[i] = a[i];
        }
        num_sort(a, n);
        qsort(b, n, sizeof *b, total_order);
        for (size_t i = 0; i < n; i++)
            if (!(isnan(a[i]) ? isnan(b[i]) && !signbit(a[i]) == !signbit(b[i])
                              : same_bits(a[i], b[i])))
                fail_msg("n %zu, [%zu]: %a, qsort %a", n, i, a[i], b[i]);
    }
}

/* num_quantiles, which selects, against num_sort and
 * num_quantile_sorted, which sort: the same bits (a NaN its sign) for
 * every size from 1 to 130 and a few larger, values with edges, repeats
 * and NaNs in them, the quantiles in order and out of it, and v left as
 * it was. */
static void test_quantiles_select_as_sort_does(void **state)
{
    (void)state;
    static const double edges[] = {0.0, -0.0, 1.0, -1.0, 0x1p-1074,
                                   DBL_MAX, -INFINITY, INFINITY, NAN, -NAN};
    static const double qs[] = {0.05, 0.5, 0.95, 0.0, 1.0, 0.25, 0.999, 0.1};
    pcg32_t g;
    pcg32_seed(&g, 11u, 3u);
    static double v[3000], w[3000], keep[3000];
    for (size_t n = 1; n <= 3000; n += n < 130 ? 1 : 719) {
        for (int rep = 0; rep < 4; rep++) {
            for (size_t i = 0; i < n; i++) {
                uint32_t k = pcg32_next(&g);
                v[i] = rep == 0   ? (double)(k % 5)
                       : k % 9 == 0 ? edges[k / 9 % 10]
                                    : rand_gaussian(&g);
                w[i] = keep[i] = v[i];
            }
            double got[8];
            assert_int_equal(num_quantiles(v, n, qs, 8, got), 0);
            assert_memory_equal(v, keep, n * sizeof *v);
            num_sort(w, n);
            for (int i = 0; i < 8; i++) {
                double want = num_quantile_sorted(w, n, qs[i]);
                if (!(isnan(want) ? isnan(got[i]) &&
                                        !signbit(got[i]) == !signbit(want)
                                  : same_bits(got[i], want)))
                    fail_msg("n %zu, rep %d, q %g: %a, sorted %a", n, rep,
                             qs[i], got[i], want);
            }
        }
    }
}

int test_num_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_against_long_double),
        cmocka_unit_test(test_log_special_values),
        cmocka_unit_test(test_exp_against_long_double),
        cmocka_unit_test(test_exp_special_values),
        cmocka_unit_test(test_exp_array_is_exp),
        cmocka_unit_test(test_log_array_is_log),
        cmocka_unit_test(test_cos_pi),
        cmocka_unit_test(test_double_double_exact),
        cmocka_unit_test(test_norm_inv),
        cmocka_unit_test(test_sort_total_order),
        cmocka_unit_test(test_exp_factorials),
        cmocka_unit_test(test_log_quotients),
        cmocka_unit_test(test_quantiles_select_as_sort_does),
        cmocka_unit_test(test_gaussian_is_gsl_algorithm),
        cmocka_unit_test(test_shuffle_is_gsl_shuffle),
        cmocka_unit_test(test_scale_is_integer_division),
        cmocka_unit_test(test_moments),
        cmocka_unit_test(test_sort_and_quantiles),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("num", tests, NULL, NULL);
}
