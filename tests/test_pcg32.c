/*
 * PCG32 against sources that are not our code: the generator's published
 * known answers (tests/data/pcg32-check.out), Debian's
 * pcg_random.hpp over a million outputs per stream, GSL's view of the same
 * stream, and a chi-square test that pcg32_bounded has no modulo bias.
 */
#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>

#include "base/pcg32.h"

/* The next whitespace-separated word of *p (advanced past it), or NULL. */
static const char *next_word(char **p)
{
    char *s = *p;
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    if (!*s)
        return NULL;
    char *e = s;
    while (*e && *e != ' ' && *e != '\t' && *e != '\n')
        e++;
    if (*e)
        *e++ = '\0';
    *p = e;
    return s;
}

/* The words after "  LABEL:" in one round's text, continuation lines
 * (which start with a tab) included, copied into buf. */
static char *field(const char *round, const char *label, char *buf,
                   size_t size)
{
    char mark[32];
    snprintf(mark, sizeof mark, "  %s:", label);
    const char *at = strstr(round, mark);
    if (!at)
        fail_msg("no '%s' line in the known answers", label);
    at += strlen(mark);
    size_t k = 0;
    for (; *at && k + 1 < size; at++) {
        if (*at == '\n' && at[1] != '\t')
            break;
        buf[k++] = *at;
    }
    buf[k] = '\0';
    return buf;
}

/* PCG32's published reference output (tests/data/README.md names its
 * source): five rounds from initstate 42, initseq 54, each six raw
 * outputs, coins, dice and a shuffled deck from the bounded draw. */
static void test_known_answers(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/pcg32-check.out",
             test_env("TEST_DATA", "tests/data"));
    char *text = test_slurp(path, NULL);
    if (!text)
        fail_msg("cannot read %s", path);
    static const char rank[] = "A23456789TJQK", suit[] = "hcds";
    pcg32_t rng;
    pcg32_seed(&rng, 42u, 54u);
    int rounds = 0;
    char buf[1024], *p;
    const char *w;
    for (char *round = strstr(text, "Round "); round;
         round = strstr(round + 1, "Round ")) {
        rounds++;
        char *end = strstr(round + 1, "Round ");
        if (end)
            end[-1] = '\0';
        uint32_t raw[6];
        p = field(round, "32bit", buf, sizeof buf);
        for (int k = 0; k < 6; k++) {
            raw[k] = pcg32_next(&rng);
            w = next_word(&p);
            assert_non_null(w);
            if (strtoul(w, NULL, 16) != raw[k])
                fail_msg("round %d output %d: got 0x%08x, want %s", rounds,
                         k, raw[k], w);
        }
        /* "Again" steps the generator back six and replays them. */
        p = field(round, "Again", buf, sizeof buf);
        for (int k = 0; k < 6; k++) {
            w = next_word(&p);
            assert_non_null(w);
            assert_true(strtoul(w, NULL, 16) == raw[k]);
        }
        p = field(round, "Coins", buf, sizeof buf);
        w = next_word(&p);
        assert_non_null(w);
        assert_int_equal(strlen(w), 65);
        for (int k = 0; k < 65; k++)
            if ((pcg32_bounded(&rng, 2) ? 'H' : 'T') != w[k])
                fail_msg("round %d coin %d differs", rounds, k);
        p = field(round, "Rolls", buf, sizeof buf);
        for (int k = 0; k < 33; k++) {
            w = next_word(&p);
            assert_non_null(w);
            assert_int_equal(pcg32_bounded(&rng, 6) + 1, atoi(w));
        }
        int cards[52];
        for (int i = 0; i < 52; i++)
            cards[i] = i;
        for (int i = 52; i > 1; i--) {
            int c = (int)pcg32_bounded(&rng, (uint32_t)i), t = cards[c];
            cards[c] = cards[i - 1];
            cards[i - 1] = t;
        }
        p = field(round, "Cards", buf, sizeof buf);
        for (int i = 0; i < 52; i++) {
            w = next_word(&p);
            assert_non_null(w);
            char want[3] = {rank[cards[i] / 4], suit[cards[i] % 4], '\0'};
            if (strcmp(w, want) != 0)
                fail_msg("round %d card %d: got %s, want %s", rounds, i,
                         want, w);
        }
        assert_null(next_word(&p));
        if (end)
            end[-1] = '\n';
    }
    test_slurp_free(text);
    assert_int_equal(rounds, 5);
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
