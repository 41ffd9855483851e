/*
 * fmt_g17 writes what printf's "%.17g" writes, character for character,
 * over millions of doubles: random bit patterns of every exponent, random
 * values where the fast path works (about 1e-17 to 1e18), subnormals,
 * every power of two, the powers of ten and their neighbours, exact
 * halfway cases (few-bit dyadic fractions, whose 18th significant digit
 * is a final 5), integers, values that round up to the next power of ten,
 * signed zeros, infinities and NaNs. printf is the reference: a result
 * file must not change by a character.
 */
#include "helpers.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/fmt.h"

static double from_bits(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static uint64_t bits64(pcg32_t *rng)
{
    return ((uint64_t)pcg32_next(rng) << 32) | pcg32_next(rng);
}

static size_t checked; /* values compared, for the test's message */

static void expect_printf(double v)
{
    char want[64], got[FMT_G17_MAX + 8];
    int n = snprintf(want, sizeof want, "%.17g", v);
    memset(got, 'x', sizeof got);
    size_t len = fmt_g17(got, v);
    checked++;
    if ((size_t)n != len || strcmp(want, got) != 0)
        fail_msg("%a: printf writes \"%s\" (%d), fmt_g17 \"%.*s\" (%zu)", v,
                 want, n, (int)len, got, len);
}

static void expect_both_signs(double v)
{
    expect_printf(v);
    expect_printf(-v);
}

static void test_random_bit_patterns(void **state)
{
    (void)state;
    pcg32_t rng;
    pcg32_seed(&rng, 1, 55);
    for (int i = 0; i < 1000000; i++)
        expect_printf(from_bits(bits64(&rng)));
}

/* Random significands with exponents where the 128-bit path works, and
 * a little past its ends either way. */
static void test_the_fast_range(void **state)
{
    (void)state;
    pcg32_t rng;
    pcg32_seed(&rng, 2, 55);
    for (int i = 0; i < 2000000; i++) {
        uint64_t b = bits64(&rng);
        int e2 = (int)(pcg32_next(&rng) % 130) - 65; /* 2^-65 .. 2^64 */
        double v = ldexp(1.0 + (double)(b >> 12) * 0x1p-52, e2);
        expect_printf(b & 1 ? -v : v);
    }
}

static void test_subnormals_and_edges(void **state)
{
    (void)state;
    pcg32_t rng;
    pcg32_seed(&rng, 3, 55);
    for (int i = 0; i < 200000; i++)
        expect_printf(from_bits(bits64(&rng) & 0x800fffffffffffffu));
    static const double edges[] = {0.0,       DBL_MIN, DBL_MAX, DBL_EPSILON,
                                   0x1p-1074, 1.0,     0.1,     0.5,
                                   1e16,      1e17,    1e-16,   1e-17,
                                   9007199254740993.0, 123456789012345678.0};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        expect_both_signs(edges[i]);
        expect_both_signs(nextafter(edges[i], 0.0));
        expect_both_signs(nextafter(edges[i], INFINITY));
    }
    expect_both_signs(INFINITY);
    expect_printf(NAN);
    expect_printf(-NAN);
}

static void test_powers_of_two_and_ten(void **state)
{
    (void)state;
    for (int e = -1074; e <= 1023; e++)
        expect_both_signs(ldexp(1.0, e));
    for (int k = -330; k <= 310; k++) {
        char s[16];
        snprintf(s, sizeof s, "1e%d", k);
        double v = strtod(s, NULL);
        expect_both_signs(v);
        double up = v, down = v;
        for (int u = 0; u < 40; u++) { /* 9.999...e-k rounds up to 1e-k */
            up = nextafter(up, INFINITY), down = nextafter(down, 0.0);
            expect_both_signs(up);
            expect_both_signs(down);
        }
    }
}

/* Exact ties: odd / 2^j with few bits has a last significant digit 5
 * past the 17th, which printf rounds to even; integers, exact or not. */
static void test_halfway_cases_and_integers(void **state)
{
    (void)state;
    pcg32_t rng;
    pcg32_seed(&rng, 4, 55);
    for (int i = 0; i < 500000; i++) {
        uint64_t odd = (bits64(&rng) >> (11 + pcg32_next(&rng) % 52)) | 1;
        expect_printf(ldexp((double)odd, -(int)(pcg32_next(&rng) % 80)));
    }
    for (int i = 0; i < 300000; i++)
        expect_both_signs((double)(bits64(&rng) >> (pcg32_next(&rng) % 64)));
    for (uint64_t k = 0; k < 20000; k++)
        expect_both_signs((double)k);
    print_message("%zu values, each as printf writes it\n", checked);
}

int test_fmt_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_bit_patterns),
        cmocka_unit_test(test_the_fast_range),
        cmocka_unit_test(test_subnormals_and_edges),
        cmocka_unit_test(test_powers_of_two_and_ten),
        cmocka_unit_test(test_halfway_cases_and_integers),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("%.17g", tests, NULL, NULL);
}
