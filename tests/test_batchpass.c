/*
 * The packed passes (model/batchpass.h: two features at a time, SSE2,
 * NEON or plain pairs, whichever this build has) and the scalar ones, one
 * feature at a time, hold to the plain loops the layer had before them
 * (rows outside, features inside), bit for bit: on every case the passes
 * copy (a shift or none, eval mode or not, outputs kept or not, rows
 * asked for early or not, read by index or by addresses made once), at
 * odd and even widths, batches of one chunk and of several, several
 * batches in one pass (bp_outputs_batches), and on values chosen to
 * find a difference where one could hide: random bit patterns
 * (infinities and NaNs among them), subnormals, signed zeros, powers of
 * two, the largest and smallest doubles, and the ordinary values a
 * population has. A NaN matches any NaN (which one an
 * operation passes on is the compiler's choice of operand order, not an
 * arithmetic difference).
 */
#include "helpers.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "base/pair.h"
#include "model/batchpass.h"
#include "model/score.h"

/* One value of the kind k picks. */
static double edge_value(pcg32_t *rng, unsigned k)
{
    static const double edges[] = {0.0,      -0.0,     DBL_MIN, -DBL_MIN,
                                   DBL_MAX,  -DBL_MAX, 1.0,     -1.0,
                                   0x1p-1074, 0x1p-1022, 0x1p+1023, 1e-300};
    uint64_t bits = ((uint64_t)pcg32_next(rng) << 32) | pcg32_next(rng);
    double v;
    switch (k % 6) {
    case 0: /* any bit pattern */
        memcpy(&v, &bits, sizeof v);
        return v;
    case 1: /* a subnormal */
        bits &= 0x800fffffffffffffu;
        memcpy(&v, &bits, sizeof v);
        return v;
    case 2: /* a power of two, either sign */
        return ldexp(bits & 1 ? -1.0 : 1.0, (int)(bits >> 1 & 2047) - 1074);
    case 3:
        return edges[bits % (sizeof edges / sizeof edges[0])];
    default: /* what a population holds */
        return ((double)(bits >> 11) * 0x1p-53 - 0.5) * 8.0 + 3.0;
    }
}

/* n values, of one kind each with probability 1/3 (else ordinary ones),
 * so that a batch has ordinary sums with edges in them. */
static void fill(pcg32_t *rng, double *v, size_t n, int edgy)
{
    for (size_t i = 0; i < n; i++) {
        unsigned k = pcg32_next(rng);
        v[i] = edge_value(rng, edgy && k % 3 == 0 ? k / 3 : 4);
    }
}

static int same(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void expect_same_values(const double *a, const double *b, size_t n,
                               const char *what, const char *where)
{
    for (size_t i = 0; i < n; i++)
        if (!same(a[i], b[i]))
            fail_msg("%s: %s[%zu] is %a, the plain loops' %a", where, what,
                     i, a[i], b[i]);
}

/* One side's results (got) against the reference's (want). */
static void expect_side(const double *want, const double *got, size_t f,
                        size_t b, int eval, int keep, const char *side,
                        const char *case_name)
{
    static const char *const names[] = {"mean", "var", "s1", "s2", "sq"};
    char where[200];
    snprintf(where, sizeof where, "%s, %s", side, case_name);
    for (size_t a = 0; a < 5; a++)
        if (eval || a < 4)
            expect_same_values(got + a * f, want + a * f, f, names[a],
                               where);
    if (eval)
        expect_same_values(got + 5 * f, want + 5 * f, 1, "gap", where);
    if (keep) /* the last pass's (b - 1 rows), over the passes' before */
        expect_same_values(got + 5 * f + 1, want + 5 * f + 1, 2 * b * f,
                           "outputs", where);
}

/* The buffers of one case: the population, its order and each side's
 * results. */
typedef struct {
    size_t n, b, f;
    double *x, *shift, *consts, *out, eps;
    size_t *rows;
    const double **at; /* the rows' addresses in order */
} bp_case;

static void case_make(bp_case *c, pcg32_t *rng, size_t b, size_t f,
                      int edgy)
{
    c->b = b, c->f = f, c->n = 2 * b + 5;
    c->x = malloc(c->n * f * sizeof *c->x);
    c->shift = malloc(f * sizeof *c->shift);
    c->consts = malloc(6 * f * sizeof *c->consts);
    /* per side: mean, var, s1, s2, sq, gap, y, e, dd */
    size_t side = 5 * f + 1 + 2 * b * f + bp_scratch(f);
    c->out = malloc(3 * side * sizeof *c->out);
    c->rows = malloc(c->n * sizeof *c->rows);
    c->at = malloc(c->n * sizeof *c->at);
    assert_non_null(c->x && c->shift && c->consts && c->out && c->rows &&
                    c->at);
    fill(rng, c->x, c->n * f, edgy);
    fill(rng, c->shift, f, edgy);
    fill(rng, c->consts, 6 * f, edgy);
    for (size_t j = 0; j < 2 * f; j++) /* var and the buffers' sd: >= 0 */
        c->consts[f + j] = fabs(c->consts[f + j]);
    c->eps = fabs(edge_value(rng, edgy ? pcg32_next(rng) : 4));
    for (size_t i = 0; i < c->n; i++)
        c->rows[i] = i;
    for (size_t i = c->n; i-- > 1;) {
        size_t k = pcg32_next(rng) % (i + 1), t = c->rows[i];
        c->rows[i] = c->rows[k], c->rows[k] = t;
    }
    bp_addresses(c->x, c->rows, c->n, f, c->at);
}

static void case_free(bp_case *c)
{
    free(c->x);
    free(c->shift);
    free(c->consts);
    free(c->out);
    free(c->rows);
    free((void *)c->at);
}

/* The passes as plain loops, rows outside and features inside, the
 * way the layer computed them before they were packed: the reference
 * both sides are held to. */
static const double *ref_row(const bp_rows *r, size_t i)
{
    return r->at ? r->at[i] : r->x + (r->rows ? r->rows[i] : i) * r->f;
}

static double ref_in(const bp_rows *r, size_t i, size_t j)
{
    return r->shift ? ref_row(r, i)[j] + r->shift[j] : ref_row(r, i)[j];
}

static void ref_stats(const bp_rows *r, double *mean, double *var)
{
    size_t b = r->b, f = r->f;
    for (size_t j = 0; j < f; j++) {
        double m = 0.0, s1 = 0.0, s2 = 0.0;
        for (size_t i = 0; i < b; i++)
            m += ref_in(r, i, j);
        m /= (double)b;
        for (size_t i = 0; i < b; i++) {
            double d = ref_in(r, i, j) - m;
            s1 += d;
            s2 += d * d;
        }
        mean[j] = m + s1 / (double)b;
        var[j] = (s2 - s1 * s1 / (double)b) / (double)b;
    }
}

/* The outputs as the layer made them, the sd of each feature first and
 * the self-checks after, score_checks on the finished sums. */
static void ref_outputs(const bp_rows *r, const bp_layer *l,
                        const bp_sums *s, double *gap)
{
    size_t f = r->f;
    double sd[1024];
    for (size_t j = 0; j < f; j++) {
        s->s1[j] = s->s2[j] = 0.0;
        sd[j] = sqrt(l->var[j] + l->eps);
    }
    for (size_t i = 0; i < r->b; i++)
        for (size_t j = 0; j < f; j++) {
            double in = ref_in(r, i, j), g = l->gamma[j], be = l->beta[j];
            double t = g * ((in - l->mean[j]) / sd[j]) + be;
            s->s1[j] += t - be;
            s->s2[j] += (t - be) * (t - be);
            if (!l->rm)
                continue;
            double v = g * ((in - l->rm[j]) / l->sd_run[j]) + be;
            s->sq[j] += (t - v) * (t - v);
            *gap += (t - v) * (t - v);
            if (s->y && s->e)
                s->y[i * f + j] = t, s->e[i * f + j] = v;
        }
    bn_layer layer = {.f = f, .gamma = (double *)l->gamma,
                      .beta = (double *)l->beta, .eps = l->eps};
    *s->pass += score_checks(&layer, r->b, s->s1, s->s2, l->var);
}

/* The rows of a case as the passes are handed them: contiguous
 * (indexed 0), in the order rows (1), or by the addresses of that order
 * (2). */
static bp_rows case_rows(const bp_case *c, size_t b, int fetch, int indexed,
                         int shifted)
{
    bp_rows r = {b,
                 c->f,
                 c->n - b,
                 fetch,
                 c->x,
                 indexed ? c->rows : NULL,
                 shifted ? c->shift : NULL,
                 indexed == 2 ? c->at : NULL};
    return r;
}

/* Rows i0 on of r, r.b of them. */
static bp_rows rows_from(bp_rows r, size_t i0)
{
    if (r.at)
        r.at += i0;
    if (r.rows)
        r.rows += i0;
    else
        r.x += i0 * r.f;
    return r;
}

/* The reference, the scalar side and the packed side of the statistics
 * and of the outputs, then their bits. */
static void expect_case(const bp_case *c, int shifted, int eval, int keep,
                        int fetch, int indexed)
{
    size_t b = c->b, f = c->f;
    size_t side = 5 * f + 1 + 2 * b * f + bp_scratch(f);
    bp_rows r = case_rows(c, b, fetch, indexed, shifted);
    const double *k = c->consts;
    char where[160];
    size_t pass[3] = {0, 0, 0};
    snprintf(where, sizeof where,
             "B %zu, F %zu, shift %d, eval %d, keep %d, fetch %d, rows %d",
             b, f, shifted, eval, keep, fetch, indexed);
    for (int side_k = 0; side_k < 3; side_k++) {
        int packed = side_k - 1; /* -1: the reference */
        double *o = c->out + (size_t)side_k * side;
        double *sq = o + 4 * f, *gap = o + 5 * f, *y = gap + 1;
        if (packed < 0)
            ref_stats(&r, o, o + f);
        else
            bp_stats(&r, packed, o, o + f);
        bp_layer l = {k, k + f, eval ? k + 2 * f : NULL, k + 3 * f,
                      k + 4 * f, k + 5 * f, c->eps};
        for (size_t j = 0; j < f; j++)
            sq[j] = (double)j; /* added to, as the layer's are */
        bp_gap g = {0.5, 0, 0};
        bp_sums s = {o + 2 * f, o + 3 * f, sq, &g, keep ? y : NULL,
                     keep ? y + b * f : NULL, y + 2 * b * f, &pass[side_k]};
        /* Three passes into one total, as the layer's batches go: the
         * second the first's size (its gaps added as it goes), the third
         * a row fewer (added before it); the last pass's sums and
         * outputs are compared. */
        for (size_t pass = 0; pass < 3; pass++) {
            bp_rows rp = r;
            if (pass == 2 && b > 1)
                rp.b = b - 1, rp.ahead = c->n - rp.b;
            if (packed < 0)
                ref_outputs(&rp, &l, &s, &g.sum);
            else
                bp_outputs(&rp, &l, packed, &s);
        }
        if (packed >= 0)
            bp_gap_flush(&g, s.dd, f);
        *gap = g.sum;
    }
    for (int side_k = 1; side_k < 3; side_k++) {
        const char *name = side_k == 2 ? "packed" : "scalar";
        expect_side(c->out, c->out + (size_t)side_k * side, f, b, eval,
                    keep, name, where);
        if (pass[side_k] != pass[0])
            fail_msg("%s, %s: %zu self-checks passed, score_checks' %zu",
                     name, where, pass[side_k], pass[0]);
    }
}

/* Several batches in one pass, their statistics (bp_stats_batches) and
 * their outputs (bp_outputs_batches), each from its own statistics,
 * against the plain loops batch by batch into one total of gaps: the
 * statistics, the gaps, the self-checks passed and the last batch's
 * sums, bit for bit, on the scalar and the packed side. */
static void expect_batches(const bp_case *c, size_t per, int shifted,
                           int eval, int fetch, int indexed)
{
    size_t f = c->f, nbat = c->n / per, stride = 2 * f + 1;
    double *stats = malloc(3 * nbat * stride * sizeof *stats);
    double *o = malloc(4 * (4 * f + 1 + bp_scratch(f)) * sizeof *o);
    size_t pass[4] = {0, 0, 0, 0};
    assert_non_null(stats && o);
    char where[160];
    snprintf(where, sizeof where,
             "batches of %zu, F %zu, shift %d, eval %d, fetch %d, rows %d",
             per, f, shifted, eval, fetch, indexed);
    bp_rows all = case_rows(c, nbat * per, fetch, indexed, shifted);
    for (size_t q = 0; q < nbat; q++) { /* each batch's own statistics */
        bp_rows r = rows_from(all, q * per);
        r.b = per;
        ref_stats(&r, stats + q * stride, stats + q * stride + f);
    }
    for (int packed = 0; packed < 2; packed++) {
        double *got = stats + (size_t)(1 + packed) * nbat * stride;
        bp_stats_batches(&all, per, stride, packed, got, got + f);
        for (size_t q = 0; q < nbat; q++)
            expect_same_values(got + q * stride, stats + q * stride, 2 * f,
                               "mean, var", where);
    }
    const double *k = c->consts;
    /* sides: the reference, scalar, packed, and packed without the
     * self-checks (pass NULL: a batch at a time) */
    for (int side_k = 0; side_k < 4; side_k++) {
        double *s1 = o + (size_t)side_k * (4 * f + 1 + bp_scratch(f));
        double *s2 = s1 + f, *sq = s2 + f, *gap = sq + f, *dd = gap + 1;
        bp_layer l = {stats, stats + f, eval ? k + 2 * f : NULL, k + 3 * f,
                      k + 4 * f, k + 5 * f, c->eps};
        for (size_t j = 0; j < f; j++)
            sq[j] = (double)j;
        bp_gap g = {0.5, 0, 0};
        bp_sums s = {s1, s2, sq, &g, NULL, NULL, dd,
                     side_k == 3 ? NULL : &pass[side_k]};
        if (side_k == 0) {
            for (size_t q = 0; q < nbat; q++) {
                bp_rows r = rows_from(all, q * per);
                r.b = per;
                l.mean = stats + q * stride, l.var = l.mean + f;
                ref_outputs(&r, &l, &s, &g.sum);
            }
        } else {
            bp_outputs_batches(&all, per, stride, &l,
                               side_k == 3 ? 1 : side_k - 1, &s);
            bp_gap_flush(&g, dd, f);
        }
        *gap = g.sum;
    }
    for (int side_k = 1; side_k < 4; side_k++) {
        const char *name = side_k == 3   ? "packed, unchecked"
                           : side_k == 2 ? "packed"
                                         : "scalar";
        const double *want = o, *got = o + (size_t)side_k *
                                               (4 * f + 1 + bp_scratch(f));
        static const char *const names[] = {"s1", "s2", "sq", "gap"};
        char at[200];
        snprintf(at, sizeof at, "%s, %s", name, where);
        for (size_t a = 0; a < 4; a++)
            if (eval || a < 2)
                expect_same_values(got + a * f, want + a * f,
                                   a == 3 ? 1 : f, names[a], at);
        if (side_k < 3 && pass[side_k] != pass[0])
            fail_msg("%s: %zu self-checks passed, score_checks' %zu", at,
                     pass[side_k], pass[0]);
    }
    free(stats);
    free(o);
}

static void expect_every_case(size_t b, size_t f, uint64_t seed, int edgy)
{
    pcg32_t rng;
    pcg32_seed(&rng, seed, 54);
    bp_case c;
    case_make(&c, &rng, b, f, edgy);
    for (int m = 0; m < 48; m++) {
        int shifted = m & 1, eval = m >> 1 & 1, keep = eval && (m >> 2 & 1);
        int fetch = m >> 3 & 1, indexed = m >> 4;
        if (!eval && (m >> 2 & 1))
            continue;
        expect_case(&c, shifted, eval, keep, fetch, indexed);
        if (!keep)
            for (size_t per = 1; per <= c.n; per += per < 8 ? 1 : per)
                expect_batches(&c, per, shifted, eval, fetch, indexed);
    }
    case_free(&c);
}

static void test_packed_is_scalar_on_edges(void **state)
{
    (void)state;
    static const size_t fs[] = {1, 2, 3, 7, 8, 9, 64, 129, 300};
    static const size_t bs[] = {1, 2, 3, 8, 64, 255, 256, 257, 600};
    uint64_t seed = 1;
    for (size_t a = 0; a < sizeof fs / sizeof fs[0]; a++)
        for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++)
            if (fs[a] * bs[i] <= 40000)
                expect_every_case(bs[i], fs[a], seed++, 1);
}

/* Rows wide enough that the passes gather them a block at a time and ask
 * for each row's next blocks (batchpass.c's BP_WIDE): whole blocks, a
 * last one of an odd width, batches of several blocks' rows; and rows of
 * a whole number of 2 KiB, whose outputs go a few rows a chunk and never
 * several batches (bp_crowded), in batches that are not a whole number
 * of chunks. */
static void test_packed_is_scalar_on_wide_rows(void **state)
{
    (void)state;
    static const size_t fs[] = {1024, 521, 768};
    static const size_t bs[] = {64, 9, 9};
    for (size_t a = 0; a < 3; a++)
        expect_every_case(bs[a], fs[a], 77 + a, a == 1);
}

/* Many ordinary batches, where the sums are the study's. */
static void test_packed_is_scalar_on_populations(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 200; seed++)
        expect_every_case(1 + seed % 70, 1 + seed % 17, 1000 + seed, 0);
}

/* compare()'s (model/layer.c) sequence of passes into one total of
 * gaps, at rows of 256 features or more (the comparison's four-row
 * chunks; eight-row ones at 1024): with rows of the training order,
 * every batch but the last in one pass of several batches, then the
 * last, its outputs kept, from whatever that pass left pending (a chunk
 * lags the pass's last chunk when that had as many rows); with
 * evaluation rows of their own, batch after batch from its own
 * statistics, the last shorter, until one of fewer than two rows.
 * Against the plain loops: the last batch's sums, the sums per feature,
 * the total, its outputs, the self-checks. */
static void expect_compare(const bp_case *c, size_t ne, size_t per, int own,
                           int shifted, int fetch, int indexed)
{
    size_t f = c->f, nbe = (ne + per - 1) / per;
    size_t stride = 2 * f, side = 3 * f + 1 + 2 * per * f + bp_scratch(f);
    double *stats = malloc(nbe * stride * sizeof *stats);
    double *o = calloc(3 * side, sizeof *o); /* per 1 compares none */
    size_t pass[3] = {0, 0, 0};
    assert_non_null(stats && o);
    char where[160];
    snprintf(where, sizeof where,
             "compare: B %zu of %zu, F %zu, own %d, shift %d, fetch %d, "
             "rows %d", per, ne, f, own, shifted, fetch, indexed);
    bp_rows all = case_rows(c, ne, fetch, indexed, shifted);
    for (size_t q = 0; q < nbe; q++) {
        bp_rows r = rows_from(all, q * per);
        r.b = q + 1 < nbe ? per : ne - q * per;
        ref_stats(&r, stats + q * stride, stats + q * stride + f);
    }
    const double *k = c->consts;
    for (int side_k = 0; side_k < 3; side_k++) {
        int packed = side_k - 1;
        double *s1 = o + (size_t)side_k * side, *s2 = s1 + f, *sq = s2 + f;
        double *gap = sq + f, *y = gap + 1, *e = y + per * f;
        double *dd = e + per * f, emean[1024], evar[1024];
        bp_layer l = {stats, stats + f, k + 2 * f, k + 3 * f, k + 4 * f,
                      k + 5 * f, c->eps};
        for (size_t j = 0; j < f; j++)
            sq[j] = (double)j;
        memset(y, 0, 2 * per * f * sizeof *y);
        bp_gap g = {0.5, 0, 0};
        bp_sums s = {s1, s2, sq, &g, NULL, NULL, dd, &pass[side_k]};
        size_t q = 0, ncmp = nbe;
        if (!own && (per < 2 || ne - (nbe - 1) * per < 2))
            ncmp = per < 2 ? 0 : nbe - 1;
        if (own && packed >= 0 && nbe > 1) {
            bp_rows r = all;
            r.b = (nbe - 1) * per, r.ahead = ne - r.b, r.shift = NULL;
            bp_outputs_batches(&r, per, stride, &l, packed, &s);
            q = nbe - 1;
        }
        for (; q < ncmp; q++) {
            bp_rows r = rows_from(all, q * per);
            r.b = q + 1 < nbe ? per : ne - q * per;
            r.ahead = ne - q * per - r.b;
            if (own && nbe > 1 && q + 1 < nbe)
                r.shift = NULL; /* as the pass of several batches */
            l.mean = stats + q * stride, l.var = l.mean + f;
            if (!own) {
                if (packed < 0)
                    ref_stats(&r, emean, evar);
                else
                    bp_stats(&r, packed, emean, evar);
                l.mean = emean, l.var = evar;
            }
            int keep = q + 1 == ncmp;
            s.y = keep ? y : NULL, s.e = keep ? e : NULL;
            if (packed < 0)
                ref_outputs(&r, &l, &s, &g.sum);
            else
                bp_outputs(&r, &l, packed, &s);
        }
        if (packed >= 0)
            bp_gap_flush(&g, dd, f);
        *gap = g.sum;
    }
    static const char *const names[] = {"s1", "s2", "sq", "gap",
                                        "outputs"};
    const size_t at_of[] = {0, f, 2 * f, 3 * f, 3 * f + 1};
    for (int side_k = 1; side_k < 3; side_k++) {
        const double *want = o, *got = o + (size_t)side_k * side;
        char at[200];
        snprintf(at, sizeof at, "%s, %s", side_k == 2 ? "packed" : "scalar",
                 where);
        for (size_t a = 0; a < 5; a++)
            expect_same_values(got + at_of[a], want + at_of[a],
                               a == 3 ? 1 : a == 4 ? 2 * per * f : f,
                               names[a], at);
        if (pass[side_k] != pass[0])
            fail_msg("%s: %zu self-checks passed, score_checks' %zu", at,
                     pass[side_k], pass[0]);
    }
    free(stats);
    free(o);
}

static void test_compare_sequence_on_wide_rows(void **state)
{
    (void)state;
    static const size_t fs[] = {256, 257, 1024};
    static const size_t pers[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 31, 32, 33};
    for (size_t a = 0; a < 3; a++) {
        pcg32_t rng;
        pcg32_seed(&rng, 90 + a, 54);
        bp_case c;
        case_make(&c, &rng, 20 + a, fs[a], 0); /* 45, 47 and 49 rows */
        /* of 40 rows in batches of 4 (of 8 at 1024 features), the pass of
         * nine batches (four) ends on a chunk of four (eight), which the
         * last batch's first chunk lags; rows asked for early only by
         * index (batchpass.c's asks_ahead) */
        for (size_t ne = 40; ne <= c.n; ne += c.n - 40)
            for (size_t p = 0; p < sizeof pers / sizeof pers[0]; p++)
                for (int m = 0; m < 24; m++)
                    if (!(m >> 2 & 1) || m >> 3 == 1)
                        expect_compare(&c, ne, pers[p], m & 1, m >> 1 & 1,
                                       m >> 2 & 1, m >> 3);
        case_free(&c);
    }
}

/* The lane operations themselves against the scalar ones (max and the
 * select as the C expressions relu writes, the square root as libm's
 * sqrt) on each value pair, the edges included. */
static void test_pair_operations(void **state)
{
    (void)state;
    pcg32_t rng;
    pcg32_seed(&rng, 7, 54);
    for (int i = 0; i < 200000; i++) {
        double a[2], b[2], r[2];
        for (int l = 0; l < 2; l++)
            a[l] = edge_value(&rng, pcg32_next(&rng)),
            b[l] = edge_value(&rng, pcg32_next(&rng));
        pair_t pa = pair_load(a), pb = pair_load(b);
        pair_t got[7] = {pair_add(pa, pb), pair_sub(pa, pb), pair_mul(pa, pb),
                         pair_div(pa, pb), pair_max(pa, pb),
                         pair_where_gt(pa, pb, pb), pair_sqrt(pa)};
        for (int op = 0; op < 7; op++) {
            pair_store(r, got[op]);
            for (int l = 0; l < 2; l++) {
                double want = op == 0   ? a[l] + b[l]
                              : op == 1 ? a[l] - b[l]
                              : op == 2 ? a[l] * b[l]
                              : op == 3 ? a[l] / b[l]
                              : op == 4 ? (a[l] > b[l] ? a[l] : b[l])
                              : op == 5 ? (a[l] > b[l] ? b[l] : 0.0)
                                        : sqrt(a[l]);
                if (!same(r[l], want))
                    fail_msg("%s: op %d on %a, %a: %a, scalar %a", PAIR_KIND,
                             op, a[l], b[l], r[l], want);
            }
        }
        int le = (fabs(a[0]) <= b[0]) + (fabs(a[1]) <= b[1]);
        pair_tally_t t = pair_tally_le(pair_tally_zero(), pair_abs(pa), pb);
        t = pair_tally_le(t, pb, pa);
        assert_int_equal(pair_tally_sum(t), le + (b[0] <= a[0]) +
                                                (b[1] <= a[1]));
        assert_true(same(pair_lo(pa), a[0]) && same(pair_hi(pa), a[1]));
    }
}

int test_batchpass_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pair_operations),
        cmocka_unit_test(test_packed_is_scalar_on_edges),
        cmocka_unit_test(test_packed_is_scalar_on_wide_rows),
        cmocka_unit_test(test_compare_sequence_on_wide_rows),
        cmocka_unit_test(test_packed_is_scalar_on_populations),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("packed passes (" PAIR_KIND ")",
                                       tests, NULL, NULL);
}
