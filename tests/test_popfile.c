/*
 * Population files (popfile.c): the same rows written as CSV, TSV and .npy
 * in every layout the reader accepts read back as the same bits; labels and
 * groups are numbered in the documented order; a byte order mark and CRLF
 * line ends change nothing; every kind of bad file is refused with a
 * message naming the file, line and column; the size bound of
 * popfile_slurp holds at the byte. The .npy files here are written by the
 * test's own few lines from the format's definition; NumPy's own files are
 * read in tests/peer/peer_popfile.py.
 */
#include "helpers.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pop/popfile.h"

/* ------------------------------------------------------------ builders */

typedef struct {
    char *s;
    size_t len, cap;
} buf_t;

static void put(buf_t *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = 2 * (b->len + n + 1);
        b->s = realloc(b->s, b->cap);
        assert_non_null(b->s);
    }
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void puts_b(buf_t *b, const char *s)
{
    put(b, s, strlen(s));
}

static void printf_b(buf_t *b, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof tmp);
    put(b, tmp, (size_t)n);
}

/* Rows on many scales, with 17-digit values, negatives and a value that
 * is exact zero, from a fixed 64-bit LCG so that nothing depends on the
 * library under test. */
enum { NR = 37, NF = 5 };

static void make_rows(double *x)
{
    uint64_t s = 0x9e3779b97f4a7c15u;
    static const double scale[NF] = {1.0, 1e-3, 1e3, 1e8, 7.25};
    for (size_t i = 0; i < NR; i++)
        for (size_t j = 0; j < NF; j++) {
            s = s * 6364136223846793005u + 1442695040888963407u;
            double u = (double)(s >> 11) / 9007199254740992.0 - 0.5;
            x[i * NF + j] = i == 3 && j == 1 ? 0.0 : scale[j] * u + j;
        }
}

static const char *const names5[NF] = {"alpha", "b eta", "gamma",
                                       "delta/2", "eps"};

static void text_file(buf_t *b, const double *x, char sep, const char *eol)
{
    for (size_t j = 0; j < NF; j++) {
        if (j)
            put(b, &sep, 1);
        puts_b(b, names5[j]);
    }
    puts_b(b, eol);
    for (size_t i = 0; i < NR; i++) {
        for (size_t j = 0; j < NF; j++) {
            if (j)
                put(b, &sep, 1);
            printf_b(b, "%.17g", x[i * NF + j]);
        }
        puts_b(b, eol);
    }
}

/* A .npy file from the format's definition: magic, version 1.0, a
 * little-endian header length, the header dictionary padded with spaces
 * to a multiple of 64 bytes and ended by a newline, then the data. */
static void npy_file(buf_t *b, const char *descr, int fortran, size_t n,
                     size_t f, const double *x)
{
    char head[256];
    int hl = snprintf(head, sizeof head,
                      "{'descr': '%s', 'fortran_order': %s, 'shape': (%zu, "
                      "%zu), }",
                      descr, fortran ? "True" : "False", n, f);
    size_t total = 10 + (size_t)hl + 1;
    size_t pad = (64 - total % 64) % 64;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    size_t hlen = (size_t)hl + pad + 1;
    pre[8] = (unsigned char)(hlen & 0xff);
    pre[9] = (unsigned char)(hlen >> 8);
    put(b, pre, 10);
    put(b, head, (size_t)hl);
    for (size_t k = 0; k < pad; k++)
        put(b, " ", 1);
    put(b, "\n", 1);
    int big = descr[0] == '>', size = descr[2] - '0';
    for (size_t k = 0; k < n * f; k++) {
        size_t i = fortran ? k % n : k / f, j = fortran ? k / n : k % f;
        double v = x[i * f + j];
        unsigned char bytes[8];
        uint64_t u;
        if (size == 8) {
            memcpy(&u, &v, 8);
        } else {
            float fv = (float)v;
            uint32_t u32;
            memcpy(&u32, &fv, 4);
            u = u32;
        }
        for (int m = 0; m < size; m++)
            bytes[big ? size - 1 - m : m] = (unsigned char)(u >> (8 * m));
        put(b, bytes, (size_t)size);
    }
}

static void parse_ok(const char *path, const buf_t *b,
                     const popfile_options *opt, popfile *pf)
{
    bn_error err;
    if (popfile_parse(path, (const unsigned char *)b->s, b->len, opt, pf,
                      &err) != 0)
        fail_msg("%s refused: %s", path, err.msg);
}

static void assert_same_values(const popfile *pf, const double *want,
                               size_t n, size_t f, const char *what)
{
    assert_int_equal(pf->n, n);
    assert_int_equal(pf->f, f);
    for (size_t k = 0; k < n * f; k++)
        if (memcmp(&pf->x[k], &want[k], sizeof(double)) != 0)
            fail_msg("%s: value %zu (row %zu, column %zu) = %.17g, want "
                     "%.17g",
                     what, k, k / f + 1, k % f + 1, pf->x[k], want[k]);
}

/* --------------------------------------------------------------- tests */

static void test_formats_agree_bit_for_bit(void **state)
{
    (void)state;
    double x[NR * NF], x32[NR * NF];
    make_rows(x);
    for (size_t k = 0; k < NR * NF; k++)
        x32[k] = (float)x[k];

    static const struct {
        const char *path, *descr;
        int fortran, f32;
    } files[] = {
        {"rows.csv", NULL, 0, 0},      {"rows.tsv", NULL, 0, 0},
        {"c.npy", "<f8", 0, 0},        {"fortran.npy", "<f8", 1, 0},
        {"big.npy", ">f8", 0, 0},      {"bigf.npy", ">f8", 1, 0},
        {"f32.npy", "<f4", 0, 1},      {"f32big.npy", ">f4", 1, 1},
    };
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        buf_t b = {0};
        if (!files[k].descr)
            text_file(&b, x, strstr(files[k].path, ".tsv") ? '\t' : ',',
                      "\n");
        else
            npy_file(&b, files[k].descr, files[k].fortran, NR, NF, x);
        popfile pf;
        parse_ok(files[k].path, &b, NULL, &pf);
        assert_same_values(&pf, files[k].f32 ? x32 : x, NR, NF,
                           files[k].path);
        for (size_t j = 0; j < NF; j++) {
            char want[8];
            snprintf(want, sizeof want, "f%zu", j);
            assert_string_equal(pf.names[j],
                                files[k].descr ? want : names5[j]);
        }
        assert_null(pf.label.column);
        assert_null(pf.group.column);

        /* The truth is pop_moments' over each column, and agrees with
         * long double arithmetic. */
        double mean[NF], var[NF];
        popfile_truth(&pf, mean, var);
        for (size_t j = 0; j < NF; j++) {
            double m, v;
            long double lm, lv;
            pop_moments(pf.n, pf.f, pf.x + j, &m, &v);
            assert_true(memcmp(&m, &mean[j], sizeof m) == 0);
            assert_true(memcmp(&v, &var[j], sizeof v) == 0);
            ld_moments(pf.n, pf.f, pf.x + j, &lm, &lv);
            assert_close(mean[j], lm, 1e-15, sqrtl(lv));
            assert_rel(var[j], lv, 1e-13);
        }
        popfile_free(&pf);
        free(b.s);
    }
}

static void test_bom_and_crlf_change_nothing(void **state)
{
    (void)state;
    double x[NR * NF];
    make_rows(x);
    buf_t b = {0};
    puts_b(&b, "\xef\xbb\xbf");
    text_file(&b, x, ',', "\r\n");
    popfile pf;
    parse_ok("bom-crlf.csv", &b, NULL, &pf);
    assert_same_values(&pf, x, NR, NF, "bom-crlf.csv");
    assert_string_equal(pf.names[0], "alpha"); /* no BOM left in the name */
    assert_string_equal(pf.names[NF - 1], "eps"); /* no CR left either */
    popfile_free(&pf);

    /* No newline at the end, and trailing blank lines, are both fine. */
    free(b.s);
    b = (buf_t){0};
    text_file(&b, x, '\t', "\n");
    b.len--;
    parse_ok("no-final-newline.tsv", &b, NULL, &pf);
    assert_same_values(&pf, x, NR, NF, "no-final-newline.tsv");
    popfile_free(&pf);
    puts_b(&b, "\n\r\n\n");
    parse_ok("blank-tail.tsv", &b, NULL, &pf);
    assert_same_values(&pf, x, NR, NF, "blank-tail.tsv");
    popfile_free(&pf);
    free(b.s);
}

static void test_quotes_and_spaces(void **state)
{
    (void)state;
    const char *csv = "\"a, quoted\", b ,\"say \"\"hi\"\"\",lab\n"
                      " 1 ,\"2.5\",-3e-2,\"x,y\"\n"
                      "4,5, 6,z\n";
    buf_t b = {0};
    puts_b(&b, csv);
    popfile_options opt = {.format = POPFILE_AUTO, .label = "lab"};
    popfile pf;
    parse_ok("quoted.csv", &b, &opt, &pf);
    assert_int_equal(pf.f, 3);
    assert_string_equal(pf.names[0], "a, quoted");
    assert_string_equal(pf.names[1], "b");
    assert_string_equal(pf.names[2], "say \"hi\"");
    double want[] = {1, 2.5, -3e-2, 4, 5, 6};
    assert_same_values(&pf, want, 2, 3, "quoted.csv");
    assert_string_equal(pf.label.levels[0], "x,y");
    assert_string_equal(pf.label.levels[1], "z");
    popfile_free(&pf);
    free(b.s);
}

static void test_labels_and_groups(void **state)
{
    (void)state;
    /* Integer labels in numeric order ("2" before "10"; "01" is "1"),
     * string groups in byte order ("B" before "a"), both out of the
     * features wherever their columns stand. */
    const char *csv = "g,x,y,lab\n"
                      "a,1,2,10\n"
                      "B,3,4,2\n"
                      "a,5,6,01\n"
                      "c,7,8,1\n"
                      "B,9,10,-3\n";
    buf_t b = {0};
    puts_b(&b, csv);
    popfile_options opt = {.format = POPFILE_AUTO, .label = "lab",
                           .group = "g"};
    popfile pf;
    parse_ok("lab.csv", &b, &opt, &pf);
    assert_int_equal(pf.f, 2);
    assert_string_equal(pf.names[0], "x");
    assert_string_equal(pf.names[1], "y");
    double want[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    assert_same_values(&pf, want, 5, 2, "lab.csv");

    assert_string_equal(pf.label.column, "lab");
    assert_int_equal(pf.label.n_levels, 4);
    const char *lv[] = {"-3", "1", "2", "10"};
    for (size_t k = 0; k < 4; k++)
        assert_string_equal(pf.label.levels[k], lv[k]);
    size_t lrow[] = {3, 2, 1, 1, 0};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(pf.label.of_row[i], lrow[i]);

    assert_string_equal(pf.group.column, "g");
    assert_int_equal(pf.group.n_levels, 3);
    const char *gv[] = {"B", "a", "c"};
    for (size_t k = 0; k < 3; k++)
        assert_string_equal(pf.group.levels[k], gv[k]);
    size_t grow[] = {1, 0, 1, 2, 0};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(pf.group.of_row[i], grow[i]);
    popfile_free(&pf);

    /* One column as both label and group ("grouped by class"); a label
     * that is a number with a point is a string, in byte order. */
    free(b.s);
    b = (buf_t){0};
    puts_b(&b, "x\tc\n1\t2.0\n2\t10.0\n3\t2.0\n");
    opt = (popfile_options){.format = POPFILE_AUTO, .label = "c",
                            .group = "c"};
    parse_ok("both.tsv", &b, &opt, &pf);
    assert_int_equal(pf.f, 1);
    assert_int_equal(pf.label.n_levels, 2);
    assert_string_equal(pf.label.levels[0], "10.0");
    assert_string_equal(pf.group.levels[1], "2.0");
    assert_int_equal(pf.label.of_row[0], 1);
    assert_int_equal(pf.group.of_row[1], 0);
    popfile_free(&pf);
    free(b.s);
}

/* Long names and many features: nothing has a fixed size. */
static void test_no_fixed_limits(void **state)
{
    (void)state;
    enum { F = 1500, LONG = 5000 };
    buf_t b = {0};
    char *longname = malloc(LONG + 1);
    assert_non_null(longname);
    memset(longname, 'n', LONG);
    longname[LONG] = '\0';
    puts_b(&b, longname);
    for (size_t j = 1; j < F; j++)
        printf_b(&b, ",c%zu", j);
    puts_b(&b, ",label\n");
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < F; j++)
            printf_b(&b, "%s%zu.5", j ? "," : "", i * F + j);
        puts_b(&b, ",");
        puts_b(&b, longname); /* a long class name */
        printf_b(&b, "%zu\n", i % 2);
    }
    popfile_options opt = {.format = POPFILE_AUTO, .label = "label"};
    popfile pf;
    parse_ok("wide.csv", &b, &opt, &pf);
    assert_int_equal(pf.n, 3);
    assert_int_equal(pf.f, F);
    assert_int_equal(strlen(pf.names[0]), LONG);
    assert_string_equal(pf.names[F - 1], "c1499");
    assert_true(pf.x[2 * F + F - 1] == (double)(2 * F + F - 1) + 0.5);
    assert_int_equal(pf.label.n_levels, 2);
    assert_int_equal(strlen(pf.label.levels[1]), LONG + 1);
    popfile_free(&pf);
    free(longname);
    free(b.s);
}

/* ------------------------------------------------------------ bad files */

static void expect_bad_opt(const char *path, const char *bytes, size_t len,
                           const popfile_options *opt, const char *want)
{
    bn_error err;
    err.msg[0] = '\0';
    popfile pf;
    if (popfile_parse(path, (const unsigned char *)bytes, len, opt, &pf,
                      &err) == 0) {
        popfile_free(&pf);
        fail_msg("%s was accepted; want the refusal '%s'", path, want);
    }
    if (!strstr(err.msg, want))
        fail_msg("%s: message '%s' lacks '%s'", path, err.msg, want);
    assert_null(pf.x);
    assert_null(pf.names);
    assert_null(pf.label.levels);
    assert_null(pf.group.levels);
}

static void expect_bad(const char *path, const char *text, const char *want)
{
    expect_bad_opt(path, text, strlen(text), NULL, want);
}

static void test_bad_text_files(void **state)
{
    (void)state;
    expect_bad("e.csv", "", "e.csv: empty file");
    expect_bad("e.csv", "\xef\xbb\xbf\r\n\n", "e.csv: empty file");
    expect_bad("h.csv", "a,b\n", "h.csv: 0 data rows; a population needs "
                                 "at least 2");
    expect_bad("one.csv", "a,b\n1,2\n", "one.csv: 1 data row;");
    expect_bad("short.csv", "a,b,c\n1,2,3\n4,5\n",
               "short.csv:3:3: the row ends after 2 cells; the header has 3");
    expect_bad("one-cell.csv", "a,b\n1,2\n3\n",
               "one-cell.csv:3:2: the row ends after 1 cell; the header");
    expect_bad("long.csv", "a,b\n1,2\n3,4,5\n",
               "long.csv:3:3: more cells than the header's 2 columns");
    expect_bad("nan.csv", "a,b\n1,2\n3,NaN\n",
               "nan.csv:3:2: column 'b': NaN is not a number (NaN)");
    expect_bad("nan.tsv", "a\tb\n1\t-nan\n3\t4\n",
               "nan.tsv:2:2: column 'b': -nan is not a number (NaN)");
    expect_bad("inf.csv", "a,b\n1,2\n-inf,4\n",
               "inf.csv:3:1: column 'a': -inf is infinite");
    expect_bad("huge.csv", "a,b\n1,2\n1e999,4\n",
               "huge.csv:3:1: column 'a': 1e999 is beyond the range of a "
               "double");
    expect_bad("word.csv", "a,b\n1,2\n3,four\n",
               "word.csv:3:2: column 'b': 'four' is not a number");
    expect_bad("slash.csv", "a,b\n1,2\n3,4\\5\n",
               "slash.csv:3:2: column 'b': '4\\\\5' is not a number");
    expect_bad("hex.csv", "a,b\n1,2\n3,0x1p3\n",
               "hex.csv:3:2: column 'b': '0x1p3' is not a number");
    expect_bad("comma.csv", "a,b\n1,2\n3,4.5.6\n",
               "comma.csv:3:2: column 'b': '4.5.6' is not a number");
    expect_bad("empty-cell.csv", "a,b\n1,\n3,4\n",
               "empty-cell.csv:2:2: column 'b': empty cell");
    expect_bad("dup.csv", "a,b,c,b,a\n1,2,3,4,5\n6,7,8,9,0\n",
               "dup.csv:1:4: the column name 'b' is already the name of "
               "column 2");
    expect_bad("noname.csv", "a,,c\n1,2,3\n4,5,6\n",
               "noname.csv:1:2: column 2 has no name");
    expect_bad("noname.tsv", "a\t\n1\t2\n4\t5\n",
               "noname.tsv:1:2: column 2 has no name");
    expect_bad("tabname.csv", "a,b\tc\n1,2\n3,4\n",
               "tabname.csv:1:2: the column name 'b\\x09c' holds the "
               "control character 0x09");
    expect_bad("ctlname.csv", "a,\"b\x01\"\n1,2\n3,4\n",
               "ctlname.csv:1:2: the column name 'b\\x01' holds the "
               "control character 0x01");
    expect_bad("blank-header.csv", "\na,b\n1,2\n",
               "blank-header.csv:1: the header line is empty");
    expect_bad("blank.csv", "a,b\n1,2\n\n3,4\n", "blank.csv:3: empty line");
    expect_bad("quote.csv", "a,b\n1,\"2\n3,4\n",
               "quote.csv:2:2: the quote is not closed on this line");
    expect_bad("after.csv", "a,b\n1,\"2\"x\n3,4\n",
               "after.csv:2:2: text after the closing quote");
    expect_bad("inner.csv", "a,b\n1,2\"\n3,4\n",
               "inner.csv:2:2: a quote inside an unquoted cell");
    expect_bad("utf16.csv", "\xff\xfe" "a\0,\0b\0",
               "utf16.csv: the file is UTF-16; save it as UTF-8");
    expect_bad("rows.txt", "a,b\n1,2\n3,4\n",
               "rows.txt: cannot tell the format from the name");
    /* A NUL inside a number cell is not silently where the number ends. */
    expect_bad_opt("nul.csv", "a,b\n1,2\n3,4\0" "5\n", 14, NULL,
                   "nul.csv:3:2: column 'b': '4\\x005' is not a number");

    popfile_options lab = {.format = POPFILE_AUTO, .label = "label"};
    const char *two = "a,label\n1,x\n2,y\n";
    expect_bad_opt("nolabel.csv", "a,b\n1,2\n3,4\n", 12, &lab,
                   "nolabel.csv:1: there is no column named 'label' for the "
                   "label; the header has 2 columns, the first 'a'");
    expect_bad_opt("oneclass.csv", "a,label\n1,x\n2,x\n3,x\n", 20, &lab,
                   "oneclass.csv: the label column 'label' has one class "
                   "('x') in all 3 rows");
    expect_bad_opt("emptylabel.csv", "a,label\n1,x\n2,\n", 15, &lab,
                   "emptylabel.csv:3:2: column 'label': empty cell");
    expect_bad_opt("ctllabel.csv", "a,label\n1,x\n2,\"y\x7f\"\n", 19, &lab,
                   "ctllabel.csv:3:2: column 'label': 'y\\x7f' holds the "
                   "control character 0x7f");
    expect_bad_opt("onlylabel.csv", "label\nx\ny\n", 10, &lab,
                   "onlylabel.csv:1: no feature columns");
    popfile_options grp = {.format = POPFILE_AUTO, .group = "user"};
    expect_bad_opt("nogroup.csv", two, strlen(two), &grp,
                   "nogroup.csv:1: there is no column named 'user' for the "
                   "group");
}

static void test_bad_npy_files(void **state)
{
    (void)state;
    double x[6] = {1, 2, 3, 4, 5, 6};
    buf_t good = {0};
    npy_file(&good, "<f8", 0, 3, 2, x);
    popfile pf;
    parse_ok("good.npy", &good, NULL, &pf);
    popfile_free(&pf);

    /* Cut anywhere: in the magic, the header, the data. */
    expect_bad_opt("cut.npy", good.s, 5, NULL, "cut.npy: not a .npy file");
    expect_bad_opt("cut.npy", good.s, 9, NULL,
                   "cut.npy: truncated in the .npy header");
    expect_bad_opt("cut.npy", good.s, 40, NULL,
                   "cut.npy: truncated: the .npy header says it is 118 "
                   "bytes long, the file has 30");
    expect_bad_opt("cut.npy", good.s, good.len - 1, NULL,
                   "cut.npy: truncated: the .npy shape (3, 2) of float64 "
                   "needs 3 x 2 x 8 bytes of data, the file has 47");
    buf_t more = {0};
    put(&more, good.s, good.len);
    put(&more, "\0\0\0\0", 4);
    expect_bad_opt("more.npy", more.s, more.len, NULL,
                   "more.npy: 4 bytes follow the .npy array's data");
    expect_bad_opt("magic.npy", "a,b\n1,2\n3,4\n", 12, NULL,
                   "magic.npy: not a .npy file: it does not begin with the "
                   "bytes \\x93NUMPY");

    static const struct {
        const char *header, *want;
    } bad[] = {
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }",
         "the .npy array is 1-D, shape (6,); bnstudy reads a 2-D array"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 3), }",
         "the .npy array is 3-D, shape (1, 2, 3); bnstudy reads a 2-D "
         "array of rows by features (for convolutional activations"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
         "the .npy array is 0-D, shape ()"},
        {"{'descr': '<i8', 'fortran_order': False, 'shape': (3, 2), }",
         "the .npy dtype is '<i8'; bnstudy reads float64 and float32"},
        {"{'descr': '<f2', 'fortran_order': False, 'shape': (3, 2), }",
         "the .npy dtype is '<f2'"},
        {"{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (3,), }",
         "the .npy array has a structured dtype"},
        {"{'descr': '<f8', 'shape': (3, 2), }",
         "the .npy header lacks fortran_order"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), "
         "'extra': 1}",
         "the .npy header has the unknown key 'extra'"},
        {"{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, "
         "'shape': (3, 2)}",
         "the .npy header has a second key 'descr'"},
        {"{'descr': '<f8', 'fortran_order': maybe, 'shape': (3, 2), }",
         ".npy header, character 35: expected True or False, found "
         "'maybe, "},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), } x",
         "expected the end of the header, found 'x"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }",
         "the .npy array, shape (1, 2), has 1 row; a population needs at "
         "least 2"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 0), }",
         "the .npy array, shape (3, 0), has no features"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        buf_t b = {0};
        unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
        size_t hl = strlen(bad[k].header) + 1;
        pre[8] = (unsigned char)hl;
        put(&b, pre, 10);
        puts_b(&b, bad[k].header);
        puts_b(&b, "\n");
        put(&b, x, sizeof x);
        expect_bad_opt("bad.npy", b.s, b.len, NULL, bad[k].want);
        free(b.s);
    }

    /* A NaN or an infinity anywhere, in float64 and in float32. */
    double withnan[6] = {1, 2, 3, 4, NAN, 6};
    buf_t b = {0};
    npy_file(&b, "<f8", 0, 3, 2, withnan);
    expect_bad_opt("nan.npy", b.s, b.len, NULL,
                   "nan.npy: row 3, column 1: the value is NaN");
    free(b.s);
    double withinf[6] = {1, 2, 3, -INFINITY, 5, 6};
    b = (buf_t){0};
    npy_file(&b, ">f4", 1, 3, 2, withinf);
    expect_bad_opt("inf.npy", b.s, b.len, NULL,
                   "inf.npy: row 2, column 2: the value is infinite");
    free(b.s);

    popfile_options lab = {.format = POPFILE_AUTO, .label = "label"};
    expect_bad_opt("lab.npy", good.s, good.len, &lab,
                   "lab.npy: a .npy array has no named columns, so it cannot "
                   "have a label column");
    /* Version 2.0 (a four-byte header length) reads; 4.0 does not. */
    buf_t v2 = {0};
    unsigned char pre2[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0};
    size_t hl = (size_t)((unsigned char)good.s[8]);
    pre2[8] = (unsigned char)(hl + 2);
    put(&v2, pre2, 12);
    put(&v2, good.s + 10, hl - 1);
    put(&v2, "  \n", 3);
    put(&v2, good.s + 10 + hl, good.len - 10 - hl);
    parse_ok("v2.npy", &v2, NULL, &pf);
    assert_same_values(&pf, x, 3, 2, "v2.npy");
    popfile_free(&pf);
    v2.s[6] = 4;
    expect_bad_opt("v4.npy", v2.s, v2.len, NULL,
                   "v4.npy: .npy format version 4.0; bnstudy reads 1.0, 2.0 "
                   "and 3.0");
    free(v2.s);
    free(more.s);
    free(good.s);
}

/* One row is no population (no variance), but a table of per-batch
 * values, such as full-batch training's one batch mean, asks for it:
 * min_rows 1 takes it in both formats, and still refuses none. */
static void test_min_rows(void **state)
{
    (void)state;
    double x[2] = {1.5, -2.0};
    buf_t one = {0};
    npy_file(&one, "<f8", 0, 1, 2, x);
    expect_bad_opt("one.npy", one.s, one.len, NULL,
                   "one.npy: the .npy array, shape (1, 2), has 1 row; a "
                   "population needs at least 2");
    popfile_options table = {.format = POPFILE_AUTO, .min_rows = 1};
    popfile pf;
    parse_ok("one.npy", &one, &table, &pf);
    assert_same_values(&pf, x, 1, 2, "one.npy");
    popfile_free(&pf);
    buf_t text = {0};
    put(&text, "a,b\n1.5,-2\n", 11);
    parse_ok("one.csv", &text, &table, &pf);
    assert_same_values(&pf, x, 1, 2, "one.csv");
    popfile_free(&pf);
    expect_bad_opt("none.csv", "a,b\n", 4, &table,
                   "none.csv: 0 data rows; the table needs at least 1");
    free(one.s);
    free(text.s);
}

static void test_slurp_bound(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/bnstudy-popfile-XXXXXX",
             test_env("TMPDIR", "/tmp"));
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "wb");
    assert_non_null(fp);
    enum { SIZE = 200000 }; /* past the first 64 KiB buffer */
    for (size_t i = 0; i < SIZE; i++)
        fputc('a' + (int)(i % 26), fp);
    assert_int_equal(fclose(fp), 0);

    unsigned char *bytes;
    size_t len;
    bn_error err;
    assert_int_equal(popfile_slurp(path, SIZE, &bytes, &len, &err), 0);
    assert_int_equal(len, SIZE);
    assert_int_equal(bytes[SIZE - 1], 'a' + (SIZE - 1) % 26);
    assert_int_equal(bytes[SIZE], '\0');
    free(bytes);
    assert_int_equal(popfile_slurp(path, POPFILE_MAX_BYTES, &bytes, &len,
                                   &err),
                     0);
    assert_int_equal(len, SIZE);
    free(bytes);

    assert_int_equal(popfile_slurp(path, SIZE - 1, &bytes, &len, &err), -1);
    assert_null(bytes);
    if (!strstr(err.msg, "larger than the limit of 199999 bytes"))
        fail_msg("message: %s", err.msg);
    assert_int_equal(popfile_slurp(path, 10, &bytes, &len, &err), -1);
    assert_int_equal(remove(path), 0);
    assert_int_equal(popfile_slurp(path, 10, &bytes, &len, &err), -1);
    if (!strstr(err.msg, "cannot open"))
        fail_msg("message: %s", err.msg);
}

int test_popfile_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formats_agree_bit_for_bit),
        cmocka_unit_test(test_bom_and_crlf_change_nothing),
        cmocka_unit_test(test_quotes_and_spaces),
        cmocka_unit_test(test_labels_and_groups),
        cmocka_unit_test(test_no_fixed_limits),
        cmocka_unit_test(test_bad_text_files),
        cmocka_unit_test(test_bad_npy_files),
        cmocka_unit_test(test_min_rows),
        cmocka_unit_test(test_slurp_bound),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("popfile", tests, NULL, NULL);
}
