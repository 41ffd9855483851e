/*
 * PCG32 against sources that are not our code: the generator's published
 * known answers (read from the shared test vectors), Debian's
 * pcg_random.hpp over a million outputs per stream, GSL's view of the same
 * stream, and a chi-square test that pcg32_bounded has no modulo bias.
 */
#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>

#include "pcg32.h"

/* The vectors file names its seed in a comment ("initstate=42
 * initseq=54") and lists the outputs on the one line that is not a
 * comment; reading both keeps this test from retyping either. */
static void test_known_answers(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/test-vectors/pcg32.txt",
             test_env("SHARED", "../shared"));
    FILE *fp = fopen(path, "r");
    if (!fp)
        fail_msg("cannot open %s (set SHARED)", path);
    unsigned long long initstate = 0, initseq = 0;
    int have_seed = 0;
    uint32_t want[16];
    size_t nwant = 0;
    char line[1024];
    while (fgets(line, sizeof line, fp)) {
        const char *s = strstr(line, "initstate=");
        if (line[0] == '#') {
            if (s && sscanf(s, "initstate=%llu initseq=%llu", &initstate,
                            &initseq) == 2)
                have_seed = 1;
            continue;
        }
        char *p = line, *end;
        for (;;) {
            unsigned long v = strtoul(p, &end, 16);
            if (end == p)
                break;
            assert_true(nwant < 16);
            want[nwant++] = (uint32_t)v;
            p = end;
        }
    }
    fclose(fp);
    assert_true(have_seed);
    assert_int_equal(nwant, 6);

    pcg32_t rng;
    pcg32_seed(&rng, initstate, initseq);
    for (size_t k = 0; k < nwant; k++) {
        uint32_t got = pcg32_next(&rng);
        if (got != want[k])
            fail_msg("output %zu: got 0x%08x, want 0x%08x", k, got, want[k]);
    }
}

/* Shell-quote s into buf as one word. */
static void shell_quote(char *buf, size_t size, const char *s)
{
    size_t k = 0;
    buf[k++] = '\'';
    for (; *s && k + 5 < size; s++) {
        if (*s == '\'') {
            memcpy(buf + k, "'\\''", 4);
            k += 4;
        } else {
            buf[k++] = *s;
        }
    }
    buf[k++] = '\'';
    buf[k] = '\0';
}

static void compare_with_reference(uint64_t initstate, uint64_t initseq,
                                   size_t n)
{
    char exe[4096], cmd[4300];
    shell_quote(exe, sizeof exe, test_env("PCG_REF", "build/pcg_ref"));
    snprintf(cmd, sizeof cmd, "%s %llu %llu %zu", exe,
             (unsigned long long)initstate, (unsigned long long)initseq, n);
    FILE *fp = popen(cmd, "r");
    if (!fp)
        fail_msg("cannot run %s", cmd);
    pcg32_t rng;
    pcg32_seed(&rng, initstate, initseq);
    unsigned char buf[4096];
    size_t k = 0, got;
    size_t first_bad = SIZE_MAX;
    uint32_t bad_ours = 0, bad_ref = 0;
    while ((got = fread(buf, 1, sizeof buf, fp)) > 0) {
        assert_int_equal(got % 4, 0);
        for (size_t i = 0; i < got; i += 4, k++) {
            uint32_t ref = (uint32_t)buf[i] | (uint32_t)buf[i + 1] << 8 |
                           (uint32_t)buf[i + 2] << 16 |
                           (uint32_t)buf[i + 3] << 24;
            uint32_t ours = pcg32_next(&rng);
            if (ours != ref && first_bad == SIZE_MAX) {
                first_bad = k;
                bad_ours = ours;
                bad_ref = ref;
            }
        }
    }
    int status = pclose(fp);
    if (status != 0)
        fail_msg("%s: exit status %d", cmd, status);
    if (k != n)
        fail_msg("%s: %zu outputs, want %zu", cmd, k, n);
    if (first_bad != SIZE_MAX)
        fail_msg("stream (%llu, %llu) output %zu: ours 0x%08x, "
                 "pcg_random.hpp 0x%08x",
                 (unsigned long long)initstate, (unsigned long long)initseq,
                 first_bad, bad_ours, bad_ref);
}

static void test_matches_pcg_random_hpp(void **state)
{
    (void)state;
    compare_with_reference(42u, 54u, 1000000);
    compare_with_reference(1u, 1u, 1000000);
    compare_with_reference(0xdeadbeefcafef00dULL, 2u, 1000000);
}

static void test_gsl_view_is_the_same_stream(void **state)
{
    (void)state;
    static const uint64_t seeds[][2] = {
        {42u, 54u}, {1u, 1u}, {1u, 2u}, {0xdeadbeefcafef00dULL, 2u}};
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        gsl_rng *r = pcg32_gsl_alloc(seeds[s][0], seeds[s][1]);
        assert_non_null(r);
        assert_int_equal(gsl_rng_min(r), 0);
        assert_int_equal(gsl_rng_max(r), 0xffffffffUL);
        pcg32_t a, b;
        pcg32_seed(&a, seeds[s][0], seeds[s][1]);
        pcg32_seed(&b, seeds[s][0], seeds[s][1]);
        for (int k = 0; k < 100000; k++) {
            unsigned long got = gsl_rng_get(r);
            if (got != pcg32_next(&a))
                fail_msg("gsl_rng_get output %d differs", k);
        }
        /* The stream's next outputs, as doubles: exactly v / 2^32. */
        for (int k = 0; k < 100000; k++)
            pcg32_next(&b);
        for (int k = 0; k < 100000; k++) {
            double u = gsl_rng_uniform(r);
            double want = (double)pcg32_next(&b) / 4294967296.0;
            if (u != want)
                fail_msg("gsl_rng_uniform %d: %.17g, want %.17g", k, u, want);
            assert_true(u >= 0.0 && u < 1.0);
        }
        gsl_rng_free(r);
    }
}

/* Pearson's chi-square p-value of counts against equal expectations. */
static double chisq_uniform_p(const size_t *count, size_t bins, size_t n)
{
    double e = (double)n / (double)bins, chi = 0.0;
    for (size_t k = 0; k < bins; k++) {
        double d = (double)count[k] - e;
        chi += d * d / e;
    }
    return gsl_cdf_chisq_Q(chi, (double)(bins - 1));
}

/* The bound 3 * 2^30 is chosen so that modulo bias is as large as it can
 * be: 2^32 = bound + 2^30, so a plain r % bound maps two outputs onto each
 * value below 2^30 and one onto the rest, and the first of the three equal
 * bins [0, 2^30), [2^30, 2^31), [2^31, 3 * 2^30) would hold half the draws
 * instead of a third. The same counts from r % bound must fail, which shows
 * the test can tell. The seeds are fixed, so the p-values are too. */
static void test_bounded_large_bound_unbiased(void **state)
{
    (void)state;
    const uint32_t bound = 3u << 30;
    const size_t n = 300000;
    size_t count[3] = {0}, naive[3] = {0};
    pcg32_t rng, raw;
    pcg32_seed(&rng, 7u, 54u);
    pcg32_seed(&raw, 7u, 54u);
    for (size_t k = 0; k < n; k++) {
        uint32_t v = pcg32_bounded(&rng, bound);
        if (v >= bound)
            fail_msg("pcg32_bounded(%u) gave %u", bound, v);
        count[v >> 30]++;
        naive[(pcg32_next(&raw) % bound) >> 30]++;
    }
    double p = chisq_uniform_p(count, 3, n);
    double p_naive = chisq_uniform_p(naive, 3, n);
    if (!(p > 1e-6))
        fail_msg("bounded: counts %zu %zu %zu, p = %g", count[0], count[1],
                 count[2], p);
    if (!(p_naive < 1e-6))
        fail_msg("plain modulo was not caught: p = %g", p_naive);
}

static void test_bounded_small_bound(void **state)
{
    (void)state;
    const size_t n = 600000;
    size_t count[6] = {0};
    pcg32_t rng;
    pcg32_seed(&rng, 42u, 54u);
    for (size_t k = 0; k < n; k++) {
        uint32_t v = pcg32_bounded(&rng, 6);
        if (v >= 6)
            fail_msg("pcg32_bounded(6) gave %u", v);
        count[v]++;
    }
    double p = chisq_uniform_p(count, 6, n);
    if (!(p > 1e-6))
        fail_msg("bound 6: p = %g", p);
    for (int k = 0; k < 100; k++)
        assert_int_equal(pcg32_bounded(&rng, 1), 0);
}

int test_pcg32_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_matches_pcg_random_hpp),
        cmocka_unit_test(test_gsl_view_is_the_same_stream),
        cmocka_unit_test(test_bounded_large_bound_unbiased),
        cmocka_unit_test(test_bounded_small_bound),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("pcg32", tests, NULL, NULL);
}
