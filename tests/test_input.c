/*
 * Reading inputs: the bounded reader and its budget (input.h), the strict
 * number reader (numread.h), a TSV's limits (tsv.h) and the SHA-256 a
 * shard's manifest records (digest.h). The references are independent of
 * the code: which texts are a number as "%.17g" writes one is what
 * Python's own formatter says ('%.17g' % float(s) == s, its dtoa and not
 * glibc's printf); SHA-256 is FIPS 180-2's known answer; "a regular
 * file's size is checked before a byte is read" is a sparse file of 1 GiB
 * refused with no byte of the budget taken.
 */
#include "helpers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/input.h"
#include "base/numread.h"
#include "base/pcg32.h"
#include "base/tsv.h"
#include "io/digest.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/bnstudy-test-input.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    input_budget_set(SIZE_MAX, NULL);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *write_file(const char *name, const char *text, size_t n)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(text, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
    return path;
}

/* ---- numbers ---- */

/* Each text, and whether Python's '%.17g' % float(s) gives it back. */
static const struct {
    const char *s;
    int number;
} g17[] = {
    {"0", 1}, {"-0", 1}, {"256", 1}, {"0.10000000000000001", 1},
    {"1.0000000000000001e-05", 1}, {"1.7976931348623157e+308", 1},
    {"4.9406564584124654e-324", 1}, {"2.2250738585072014e-308", 1},
    {"1e+100", 1}, {"0.5", 1}, {"-2.5", 1}, {"1e+17", 1},
    {"10000000000000000", 1}, {"9007199254740992", 1},
    {"1e+300", 0}, {"1e-05", 0}, {"0.1", 0}, {"5e-324", 0}, {"1E+100", 0},
    {"1.", 0}, {".5", 0}, {"00", 0}, {"+0.5", 0}, {"1e400", 0}, {"0x10", 0},
    {" 0.5", 0}, {"0.5 ", 0}, {"infinity", 0}, {"1e+16", 0},
    {"100000000000000000", 0}, {"123456789012345678", 0},
    {"9007199254740993", 0}, {"", 0}, {"nan", 0}, {"NaN", 0}, {"-nan", 0},
    {"abc", 0},
};

static void test_numread_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof g17 / sizeof *g17; i++) {
        double v;
        int rc = numread_g17(g17[i].s, NUMREAD_DASH | NUMREAD_INF, &v);
        if ((rc == 0) != g17[i].number)
            fail_msg("'%s': numread_g17 gives %d, Python says %s", g17[i].s,
                     rc, g17[i].number ? "a number" : "not one");
        if (rc == 0 && strtod(g17[i].s, NULL) != v)
            fail_msg("'%s' read as %.17g", g17[i].s, v);
    }
}

/* The stand-ins only where allowed: "-" a row without the value, "inf"
 * +infinity; "-inf" never, no writer writes it. */
static void test_numread_stand_ins(void **state)
{
    (void)state;
    double v;
    assert_int_equal(numread_g17("-", 0, &v), -1);
    assert_int_equal(numread_g17("-", NUMREAD_DASH, &v), 1);
    assert_true(isnan(v));
    assert_int_equal(numread_g17("inf", 0, &v), -1);
    assert_int_equal(numread_g17("inf", NUMREAD_INF, &v), 0);
    assert_true(isinf(v) && v > 0);
    assert_int_equal(numread_g17("-inf", NUMREAD_INF | NUMREAD_DASH, &v), -1);
}

/* Every double's %.17g reads back to its very bits: random bit patterns
 * (subnormals, both zeros, every exponent) and random integers. */
static void test_numread_round_trip(void **state)
{
    (void)state;
    pcg32_t rng;
    pcg32_seed(&rng, 23, 5);
    for (int i = 0; i < 200000; i++) {
        uint64_t u = (uint64_t)pcg32_next(&rng) << 32 | pcg32_next(&rng);
        double x;
        if (i % 4 == 3)
            x = (double)(u >> (u % 64));
        else
            memcpy(&x, &u, sizeof x);
        if (!isfinite(x))
            continue;
        char s[40];
        snprintf(s, sizeof s, "%.17g", x);
        double y;
        if (numread_g17(s, 0, &y) != 0 || memcmp(&x, &y, sizeof x) != 0)
            fail_msg("%s did not read back to its bits", s);
    }
}

/* ---- whole files and the budget ---- */

static void test_read_regular_size_first(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/sparse", dir);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(ftruncate(fileno(fp), (off_t)1 << 30), 0);
    fclose(fp);
    input_budget_set((size_t)1 << 20, "--max-memory");
    char *text;
    size_t len;
    bn_error err;
    assert_int_equal(input_read(path, (size_t)1 << 31, 0, &text, &len, &err),
                     -1);
    /* Nothing held, nothing read: the size came first. */
    assert_int_equal(input_held(), 0);
    assert_non_null(strstr(err.msg, "reading it would hold about 1 GiB, "
                                    "more than the limit of 1 MiB "
                                    "(--max-memory raises it)"));
    /* The file's own limit names the file's size. */
    input_budget_set(SIZE_MAX, NULL);
    assert_int_equal(input_read(path, 1000, 0, &text, &len, &err), -1);
    assert_non_null(strstr(err.msg, "a file of 1 GiB, larger than the limit "
                                    "of 1000 bytes"));
    unlink(path);
}

static void test_read_budget_held(void **state)
{
    (void)state;
    const char *path = write_file("t.txt", "a\nbb\n", 5);
    input_budget_set(100, NULL);
    char *text, *again;
    size_t len, len2;
    bn_error err;
    assert_int_equal(input_read(path, 50, 1, &text, &len, &err), 0);
    assert_int_equal(len, 5);
    assert_string_equal(text, "a\nbb\n");
    assert_int_equal(input_held(), 6);
    /* What is held counts against the next read: 4 bytes left, and the
     * file's 6 are refused. */
    assert_int_equal(input_charge("x", 90, "its values", &err), 0);
    assert_int_equal(input_read(path, 50, 1, &again, &len2, &err), -1);
    assert_non_null(strstr(err.msg, "beside the 96 bytes the inputs hold "
                                    "already, more than the limit of 100 "
                                    "bytes"));
    input_release(90);
    input_free(text, len);
    assert_int_equal(input_held(), 0);
    input_budget_set(SIZE_MAX, NULL);
}

static void test_read_nul_line(void **state)
{
    (void)state;
    const char *path = write_file("nul.txt", "a\nb\nc\0d\n", 8);
    char *text;
    size_t len;
    bn_error err;
    assert_int_equal(input_read(path, 100, 1, &text, &len, &err), -1);
    assert_non_null(strstr(err.msg, "nul.txt:3: a NUL byte: not a text file"));
    /* Binary is read whole when text is not wanted. */
    assert_int_equal(input_read(path, 100, 0, &text, &len, &err), 0);
    assert_int_equal(len, 8);
    input_free(text, len);
}

/* ---- a line at a time ---- */

static void test_lines(void **state)
{
    (void)state;
    const char *path = write_file("l.txt", "one\ntwo\n\nfour\n", 14);
    input_lines r;
    bn_error err;
    char *line;
    size_t len;
    assert_int_equal(input_lines_open(&r, path, 100, 10, &err), 0);
    const char *want[] = {"one", "two", "", "four"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(input_lines_next(&r, &line, &len, &err), 1);
        assert_string_equal(line, want[i]);
        assert_int_equal(len, strlen(want[i]));
        assert_int_equal(r.line, (size_t)i + 1);
    }
    assert_int_equal(input_lines_next(&r, &line, &len, &err), 0);
    input_lines_close(&r);
    assert_int_equal(input_held(), 0);
}

/* Each way a line-read file is refused, at its line. */
static void test_lines_refused(void **state)
{
    (void)state;
    static const struct {
        const char *name, *text;
        size_t n, max, max_line;
        const char *msg;
    } cases[] = {
        {"nul", "a\nb\0\n", 5, 100, 10, "nul:2: a NUL byte"},
        {"cut", "a\nb", 3, 100, 10, "cut line 2: the file ends inside"},
        {"long", "a\n0123456789abc\n", 16, 100, 10,
         "long:2: a line longer than the limit of 10 bytes"},
        {"big", "a\nb\nc\n", 6, 4, 10, "a file of 6 bytes, larger than "
                                       "the limit of 4 bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *path = write_file(cases[i].name, cases[i].text,
                                      cases[i].n);
        input_lines r;
        bn_error err;
        char *line;
        size_t len;
        int rc = input_lines_open(&r, path, cases[i].max, cases[i].max_line,
                                  &err);
        while (rc == 0 && (rc = input_lines_next(&r, &line, &len, &err)) > 0)
            rc = 0;
        input_lines_close(&r);
        if (rc != -1 || !strstr(err.msg, cases[i].msg))
            fail_msg("%s: %d '%s', want '%s'", cases[i].name, rc,
                     rc == -1 ? err.msg : "", cases[i].msg);
    }
}

/* A long line beyond the first buffer grows it, and gives it back. */
static void test_lines_grow(void **state)
{
    (void)state;
    size_t n = 100000;
    char *text = malloc(n + 3);
    assert_non_null(text);
    memset(text, 'x', n);
    memcpy(text + n, "\ny\n", 3);
    const char *path = write_file("grow", text, n + 3);
    free(text);
    input_lines r;
    bn_error err;
    char *line;
    size_t len;
    assert_int_equal(input_lines_open(&r, path, 1 << 20, 1 << 20, &err), 0);
    assert_int_equal(input_lines_next(&r, &line, &len, &err), 1);
    assert_int_equal(len, n);
    assert_int_equal(input_lines_next(&r, &line, &len, &err), 1);
    assert_string_equal(line, "y");
    input_lines_close(&r);
    assert_int_equal(input_held(), 0);
}

/* ---- TSV ---- */

static void test_tsv_limits(void **state)
{
    (void)state;
    tsv_table t;
    bn_error err;
    assert_int_equal(tsv_parse("d.tsv", "a\tb\ta\n1\t2\t3\n", 12, &t, &err),
                     -1);
    assert_string_equal(err.msg, "d.tsv:1: column 'a' named twice (columns "
                                 "1 and 3)");
    /* A text of fields holds a pointer a field: within the budget. */
    input_budget_set(50, NULL);
    assert_int_equal(tsv_parse("f.tsv", "a\t\t\t\t\t\t\t\t\t\t\n", 12, &t,
                               &err),
                     -1);
    assert_non_null(strstr(err.msg, "f.tsv: its fields would hold about "
                                    "88 bytes"));
    assert_int_equal(input_held(), 0);
    input_budget_set(1000, NULL);
    assert_int_equal(tsv_parse("g.tsv", "a\tb\n1\t2\n", 8, &t, &err), 0);
    assert_int_equal(input_held(), 9 + 4 * sizeof(char *));
    tsv_free(&t);
    assert_int_equal(input_held(), 0);
    input_budget_set(SIZE_MAX, NULL);
}

/* ---- SHA-256 ---- */

static void test_digest_known_answer(void **state)
{
    (void)state;
    /* FIPS 180-2, appendix B.1 and B.2. */
    static const char abc[] =
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    static const char two[] =
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
    char hex[65];
    digest_sha256_hex((const unsigned char *)"abc", 3, hex);
    assert_string_equal(hex, abc);
    /* In pieces, and twice over: digest_end begins again. */
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    digest_sha256 d;
    digest_begin(&d);
    for (int round = 0; round < 2; round++) {
        size_t n = strlen(m);
        for (size_t at = 0; at < n; at += 5)
            digest_add(&d, m + at, n - at < 5 ? n - at : 5);
        digest_end(&d, hex);
        assert_string_equal(hex, two);
    }
}

int test_input_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numread_table),
        cmocka_unit_test(test_numread_stand_ins),
        cmocka_unit_test(test_numread_round_trip),
        cmocka_unit_test(test_read_regular_size_first),
        cmocka_unit_test(test_read_budget_held),
        cmocka_unit_test(test_read_nul_line),
        cmocka_unit_test(test_lines),
        cmocka_unit_test(test_lines_refused),
        cmocka_unit_test(test_lines_grow),
        cmocka_unit_test(test_tsv_limits),
        cmocka_unit_test(test_digest_known_answer),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("input", tests, setup, teardown);
}
