/*
 * The passes of batchpass.h. A batch is taken a chunk of rows at a time,
 * its rows' addresses first, then one column pair at a time over the
 * chunk (in a big population asking early for the rows ahead, which a
 * shuffled order reads at random: the statistics a share of the next
 * chunk's before each pair, the outputs too for rows of more than
 * BP_SPREAD features and one row every few rows a pair reads for
 * narrower ones), so that a pair's constants and sums stay in registers
 * instead of being reloaded and stored on every element. Every case (a
 * shift or none, eval mode or not, outputs kept or not, rows asked for
 * ahead or not) is its own copy of the loops, chosen outside them.
 */
#include "model/batchpass.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/pair.h"
#include "model/bnlayer.h"
#include "model/selfcheck.h"

/* Rows a chunk: their addresses fit on the stack. */
#define BP_CHUNK 256
/* Features a block of the statistics: the first sums' stack scratch. */
#define BP_BLOCK 128
/* Rows a chunk of the comparison: its squared gaps are summed in order
 * as the next chunk is made, but the last chunk's after everything, so
 * the chunk is short; long enough that a feature pair's constants and
 * sums, loaded and stored once a chunk, cost little a row. */
#define BP_GAP_ROWS 32
/* Rows a chunk of the outputs when a row's length is a whole number of
 * 2 KiB (BP_OUT_WIDE features), which then never take several batches a
 * chunk: a column of such rows falls in one or two sets of the
 * first-level cache (its sets repeat every 4 KiB), and 32 rows (256 in
 * train mode) and their squared gaps are more lines than its ways, so a
 * column pair's lines were gone before the next pair read them.
 * Measured on docs/speed.md's machine, 4 rows against 32 in the
 * comparison: 0.88x to 0.94x the time at 256 to 2048 features, 4096 x
 * 1024 and 65536 x 1024 included; a batch at a time at B 8 and 16, and
 * 4 rows in train mode: 0.86x to 0.96x again. Not at other widths: at
 * 128 features (four sets) 4 rows measured 1.1x, at 300 and 1000
 * (rows over many sets) 1.10x and 1.04x. */
#define BP_OUT_WIDE_ROWS 4
#define BP_OUT_WIDE 256
/* Rows a chunk instead where a row is a whole number of 8 KiB
 * (BP_OUT_WIDER features). Not understood, but measured on two
 * machines: at 1024 features 8 rows took the least time on both (on
 * the second, medians of 5 interleaved rounds against 4 rows: 0.87x and
 * 0.89x at 65536 and 4096 rows, B 64; 0.91x at B 8; 0.88x at 2048
 * features). At 256 and 512 features the second measured 8 rows 0.87x
 * too, but the first 8 rows 1.2x worse than 32 at 512, and 4 best: those
 * widths keep 4. */
#define BP_OUT_WIDER_ROWS 8
#define BP_OUT_WIDER 1024

/* Whether rows of f features crowd the first-level cache's sets
 * (BP_OUT_WIDE_ROWS). */
static int bp_crowded(size_t f)
{
    return f >= BP_OUT_WIDE && f % BP_OUT_WIDE == 0;
}

/* The rows of an outputs chunk for rows that crowd the cache. */
static size_t crowded_rows(size_t f)
{
    return f % BP_OUT_WIDER == 0 ? BP_OUT_WIDER_ROWS : BP_OUT_WIDE_ROWS;
}

/* Rows asked for ahead at least, whatever the chunk. */
#define BP_AHEAD 32
/* Rows past the next chunk from which the outputs' rows are asked for
 * (ahead_spread): measured at 10^6 x 8, 32 to 160 alike within the
 * noise, and 0 (the next chunk's own rows) no better than a burst. */
#define BP_OUT_FAR 64
/* Features up to which the outputs ask so (a row a 64-byte line at
 * most): at 64 features, whose row is asked for in one burst of 8 lines
 * either way, it measured 1.08x at 131072 x 64 and is left as it was. */
#define BP_SPREAD 8

/* A function the compiler keeps apart from its callers. */
#if defined(__GNUC__)
#define BP_APART __attribute__((noinline))
#else
#define BP_APART
#endif

/* Features from which a batch's rows are gathered (stats_wide): a row
 * of 1 KiB or more. */
#define BP_WIDE 128
/* Features a gathered block of the rows: two 64-byte lines a row. */
#define BP_GATHER 16

/* Values on in a wide row that are asked for as a block is gathered
 * (four blocks on), and for its outputs as a column pair is made (half
 * that: they read the row where it is). */
#define BP_WIDE_AHEAD (4 * BP_GATHER)

/* Past about this many bytes of rows, asking for them early pays. */
#define BP_FETCH_BYTES (1u << 20)

int bp_fetch(size_t n, size_t f)
{
    return n > BP_FETCH_BYTES / sizeof(double) / (f ? f : 1);
}

size_t bp_scratch(size_t f)
{
    return 2 * BP_GAP_ROWS * f; /* part_of's two parts */
}

/* Whether r's rows are asked for ahead (bp_fetch's big populations,
 * whose addresses are made a chunk at a time): the cases that take a
 * share before each column pair. */
static int asks_ahead(const bp_rows *r)
{
    return r->fetch && r->rows && !r->at;
}

/* The rows a chunk asks for while it is made (asks_ahead): as far ahead
 * as the chunk is long, at least BP_AHEAD, those of the next chunk or
 * batch, x + rows[i] f for i < n; asked a share at a time (ahead_step)
 * before each column pair, so that the trips to memory run beside the
 * chunk's arithmetic instead of in a burst that fills the CPU's queue of
 * misses and stalls it on the request itself. */
typedef struct {
    const double *x;
    const size_t *rows;
    size_t n, f, at, per; /* asked: at; a step asks per */
    size_t every;         /* ahead_spread's: rows read between two asks */
} bp_ahead;

/* The rows ahead of a chunk of n from i0, to be asked for in steps
 * shares. */
static bp_ahead ahead_of(const bp_rows *r, size_t i0, size_t n, size_t steps)
{
    size_t ahead = n < BP_AHEAD ? BP_AHEAD : n, end = r->b + r->ahead;
    size_t from = i0 + n, m = from >= end ? 0 : end - from;
    if (m > ahead)
        m = ahead;
    bp_ahead a = {r->x, r->rows + from, m, r->f, 0, (m + steps - 1) / steps,
                  0};
    return a;
}

/* The outputs' rows ahead of a chunk of n from i0, for column pairs
 * that ask for one row every a.every rows they read (ahead_one), pairs
 * column pairs reading n rows each: n rows from BP_OUT_FAR past the next
 * chunk (none when the rows end before), what the pairs leave asked at
 * once after them (a.per is all of them: outputs_features). Asked in a
 * burst before each pair, as ahead_step does, the requests filled the
 * CPU's queue of misses while the ones before were still out, and the
 * pass waited on the request instruction itself; one every few rows,
 * they run beside the arithmetic. */
static bp_ahead ahead_spread(const bp_rows *r, size_t i0, size_t n,
                             size_t pairs)
{
    size_t end = r->b + r->ahead, from = i0 + n + BP_OUT_FAR;
    size_t m = from >= end ? 0 : end - from;
    if (m > n)
        m = n;
    /* r->rows + from only when it is in r's rows: from can be up to
     * BP_OUT_FAR past their end, and such a pointer is undefined even
     * unread. */
    bp_ahead a = {r->x, m ? r->rows + from : r->rows, m, r->f, 0, m,
                  SIZE_MAX};
    if (m > 0)
        a.every = pairs * n / m > 1 ? pairs * n / m : 1;
    return a;
}

/* The next of a's rows, if any is left. */
PAIR_INLINE void ahead_one(bp_ahead *a)
{
    if (a->at < a->n) {
        bn_prefetch_far(a->x + a->rows[a->at] * a->f, a->f);
        a->at++;
    }
}

/* The next share of a's rows. */
PAIR_INLINE void ahead_step(bp_ahead *a)
{
    size_t end = a->at + a->per < a->n ? a->at + a->per : a->n, i = a->at;
    for (; i < end; i++)
        bn_prefetch_far(a->x + a->rows[i] * a->f, a->f);
    a->at = end;
}

/* r, or with fetch a copy of it that chunk_rows makes no requests for
 * (q's): ahead_step makes them. */
PAIR_INLINE const bp_rows *quiet(const bp_rows *r, int fetch, bp_rows *q)
{
    if (!fetch)
        return r;
    *q = *r;
    q->fetch = 0;
    return q;
}

/* The steps a chunk's rows ahead are asked for in: one a column pair
 * (or odd feature), batches times. */
static size_t ahead_steps(size_t f, int packed, size_t batches)
{
    return (packed ? (f + 1) / 2 : f) * batches;
}

/* Rows i0 .. i0 + n - 1 of the batch (n at most want, into *got) as
 * addresses: r->at's own when it has them, else made into p, asking
 * meanwhile (with r->fetch) for the rows as far ahead as the chunk is
 * long, at least BP_AHEAD, all at once (stats_block's chunks; the other
 * passes' copies with fetch clear it and ask with ahead_step). (The
 * requests sit in this loop, beside its stores: GCC 12 takes a function
 * or loop that only asks for memory for one without effects, and drops
 * it.) */
static const double *const *chunk_rows(const bp_rows *r, size_t i0,
                                       size_t want, const double **p,
                                       size_t *got)
{
    size_t n = r->b - i0 < want ? r->b - i0 : want, f = r->f;
    *got = n;
    if (r->at)
        return r->at + i0;
    const double *x = r->x; /* a local: p's stores could be r's fields */
    if (!r->rows) {
        for (size_t i = 0; i < n; i++)
            p[i] = x + (i0 + i) * f;
        return p;
    }
    const size_t *rows = r->rows + i0;
    size_t ahead = n < BP_AHEAD ? BP_AHEAD : n, end = r->b + r->ahead;
    if (!r->fetch) {
        PAIR_UNROLL2
        for (size_t i = 0; i < n; i++)
            p[i] = x + rows[i] * f;
        return p;
    }
    for (size_t i = 0; i < n; i++) {
        p[i] = x + rows[i] * f;
        if (i0 + i + ahead < end)
            bn_prefetch(x + rows[i + ahead] * f, f);
    }
    return p;
}

void bp_addresses(const double *x, const size_t *rows, size_t n, size_t f,
                  const double **at)
{
    PAIR_UNROLL2
    for (size_t i = 0; i < n; i++)
        at[i] = x + rows[i] * f;
}

/* Rows i0 .. i0 + b - 1 of r as a batch of their own. */
static bp_rows rows_part(const bp_rows *r, size_t i0, size_t b)
{
    bp_rows q = *r;
    q.b = b, q.ahead = r->ahead + r->b - i0 - b;
    if (r->rows)
        q.rows = r->rows + i0;
    else
        q.x = r->x + i0 * r->f;
    if (r->at)
        q.at = r->at + i0;
    return q;
}

/* ---- the statistics ---- */

/* m[j..j+1] += each row's value (moved by sh), rows in order. */
PAIR_INLINE void pair_sums(size_t n, const double *const *p, size_t j,
                           const double *sh, int shifted, double *m)
{
    pair_t acc = pair_load(m), s = shifted ? pair_load(sh) : pair_dup(0.0);
    for (size_t i = 0; i < n; i++) {
        pair_t v = pair_load(p[i] + j);
        acc = pair_add(acc, shifted ? pair_add(v, s) : v);
    }
    pair_store(m, acc);
}

PAIR_INLINE void one_sums(size_t n, const double *const *p, size_t j,
                          const double *sh, int shifted, double *m)
{
    double acc = *m, s = shifted ? *sh : 0.0;
    for (size_t i = 0; i < n; i++)
        acc += shifted ? p[i][j] + s : p[i][j];
    *m = acc;
}

/* The residuals' sum (s1) and squares' (s2) about m. */
PAIR_INLINE void pair_devs(size_t n, const double *const *p, size_t j,
                           const double *sh, int shifted, const double *m,
                           double *s1, double *s2)
{
    pair_t a1 = pair_load(s1), a2 = pair_load(s2), mm = pair_load(m);
    pair_t s = shifted ? pair_load(sh) : pair_dup(0.0);
    for (size_t i = 0; i < n; i++) {
        pair_t v = pair_load(p[i] + j);
        pair_t d = pair_sub(shifted ? pair_add(v, s) : v, mm);
        a1 = pair_add(a1, d);
        a2 = pair_add(a2, pair_mul(d, d));
    }
    pair_store(s1, a1);
    pair_store(s2, a2);
}

PAIR_INLINE void one_devs(size_t n, const double *const *p, size_t j,
                          const double *sh, int shifted, const double *m,
                          double *s1, double *s2)
{
    double a1 = *s1, a2 = *s2, mm = *m, s = shifted ? *sh : 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = (shifted ? p[i][j] + s : p[i][j]) - mm;
        a1 += d;
        a2 += d * d;
    }
    *s1 = a1, *s2 = a2;
}

/* One pass (the sums, or with m the residuals) over features j0 .. j0 +
 * nj - 1 of a chunk: pairs, then a last odd feature alone. */
PAIR_INLINE void stats_chunk(size_t n, const double *const *p, size_t j0,
                             size_t nj, const double *sh, int shifted,
                             int packed, double *m, double *s1, double *s2,
                             int devs)
{
    size_t j = 0;
    for (; packed && j + 1 < nj; j += 2)
        if (devs)
            pair_devs(n, p, j0 + j, sh + j, shifted, m + j, s1 + j, s2 + j);
        else
            pair_sums(n, p, j0 + j, sh + j, shifted, m + j);
    for (; j < nj; j++)
        if (devs)
            one_devs(n, p, j0 + j, sh + j, shifted, m + j, s1 + j, s2 + j);
        else
            one_sums(n, p, j0 + j, sh + j, shifted, m + j);
}

/* A block of features of a batch of more than a chunk: every chunk's
 * sums, the mean, every chunk's residuals, the correction. */
PAIR_INLINE void stats_block(const bp_rows *r, size_t j0, size_t nj,
                             int shifted, int packed, double *m, double *s2)
{
    const double *p[BP_CHUNK];
    double s1[BP_BLOCK];
    const double *sh = shifted ? r->shift + j0 : m; /* m: never read */
    size_t b = r->b, n = 0;
    for (size_t j = 0; j < nj; j++)
        m[j] = s1[j] = s2[j] = 0.0;
    for (size_t i0 = 0; i0 < b; i0 += n) {
        const double *const *at = chunk_rows(r, i0, BP_CHUNK, p, &n);
        stats_chunk(n, at, j0, nj, sh, shifted, packed, m, NULL, NULL, 0);
    }
    for (size_t j = 0; j < nj; j++)
        m[j] /= (double)b;
    for (size_t i0 = 0; i0 < b; i0 += n) {
        const double *const *at = chunk_rows(r, i0, BP_CHUNK, p, &n);
        stats_chunk(n, at, j0, nj, sh, shifted, packed, m, s1, s2, 1);
    }
    for (size_t j = 0; j < nj; j++) {
        m[j] += s1[j] / (double)b;
        s2[j] = (s2[j] - s1[j] * s1[j] / (double)b) / (double)b;
    }
}

/* A batch of one chunk, feature pair by feature pair with every sum in
 * registers: the sums, the mean, the residuals and the correction, as
 * stats_block has them. */
PAIR_INLINE void pair_stats(size_t n, const double *const *p, size_t j,
                            const double *sh, int shifted, double *mean,
                            double *var)
{
    pair_t nb = pair_dup((double)n), zero = pair_dup(0.0);
    pair_t s = shifted ? pair_load(sh + j) : zero, acc = zero;
    PAIR_UNROLL2
    for (size_t i = 0; i < n; i++) {
        pair_t v = pair_load(p[i] + j);
        acc = pair_add(acc, shifted ? pair_add(v, s) : v);
    }
    pair_t m = pair_div(acc, nb), a1 = zero, a2 = zero;
    PAIR_UNROLL2
    for (size_t i = 0; i < n; i++) {
        pair_t v = pair_load(p[i] + j);
        pair_t d = pair_sub(shifted ? pair_add(v, s) : v, m);
        a1 = pair_add(a1, d);
        a2 = pair_add(a2, pair_mul(d, d));
    }
    pair_store(mean + j, pair_add(m, pair_div(a1, nb)));
    pair_store(var + j,
               pair_div(pair_sub(a2, pair_div(pair_mul(a1, a1), nb)), nb));
}

PAIR_INLINE void one_stats(size_t n, const double *const *p, size_t j,
                           const double *sh, int shifted, double *mean,
                           double *var)
{
    double s = shifted ? sh[j] : 0.0, acc = 0.0;
    for (size_t i = 0; i < n; i++)
        acc += shifted ? p[i][j] + s : p[i][j];
    double m = acc / (double)n, a1 = 0.0, a2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = (shifted ? p[i][j] + s : p[i][j]) - m;
        a1 += d;
        a2 += d * d;
    }
    mean[j] = m + a1 / (double)n;
    var[j] = (a2 - a1 * a1 / (double)n) / (double)n;
}

/* With fetch, the rows ahead are asked for a share before each column
 * pair. */
PAIR_INLINE void stats_one_chunk(const bp_rows *r, int shifted, int packed,
                                 int fetch, double *mean, double *var)
{
    const double *buf[BP_CHUNK];
    size_t n, j = 0, f = r->f;
    bp_rows q;
    const double *const *p = chunk_rows(quiet(r, fetch, &q), 0, BP_CHUNK,
                                        buf, &n);
    bp_ahead a = {0};
    if (fetch)
        a = ahead_of(r, 0, n, ahead_steps(f, packed, 1));
    for (; packed && j + 1 < f; j += 2) {
        if (fetch)
            ahead_step(&a);
        pair_stats(n, p, j, r->shift, shifted, mean, var);
    }
    for (; j < f; j++) {
        if (fetch)
            ahead_step(&a);
        one_stats(n, p, j, r->shift, shifted, mean, var);
    }
}

/* Columns 0 .. w - 1 of one batch's rows p[0 .. per - 1]: two at a time
 * where packed, then one; with fetch, the rows ahead asked a share before
 * each: a batch's columns, or a gathered block's. */
PAIR_INLINE void columns_stats(size_t per, const double *const *p, size_t w,
                               const double *shift, int shifted, int packed,
                               int fetch, bp_ahead *a, double *mean,
                               double *var)
{
    size_t j = 0;
    for (; packed && j + 1 < w; j += 2) {
        if (fetch)
            ahead_step(a);
        pair_stats(per, p, j, shift, shifted, mean, var);
    }
    for (; j < w; j++) {
        if (fetch)
            ahead_step(a);
        one_stats(per, p, j, shift, shifted, mean, var);
    }
}

/* Features j0 .. j0 + w - 1 of rows p[0 .. n - 1] (of f features) copied
 * into g, row i at i w, and g's rows' addresses into pg: the same
 * values, one after the other. Each row's block BP_WIDE_AHEAD values on
 * is asked for as this one is copied: a batch's rows are more streams
 * at once than the hardware's own prefetching follows. */
static void gather(size_t n, const double *const *p, size_t j0, size_t w,
                   size_t f, double *g, const double **pg)
{
    /* a row's last blocks ask for its own again: nothing past the row */
    size_t ja = j0 + BP_WIDE_AHEAD + BP_GATHER <= f ? j0 + BP_WIDE_AHEAD : j0;
    if (w == BP_GATHER) /* a fixed size: copied in registers */
        for (size_t i = 0; i < n; i++) {
            memcpy(g + i * BP_GATHER, p[i] + j0, BP_GATHER * sizeof *g);
            bn_prefetch(p[i] + ja, BP_GATHER);
            pg[i] = g + i * BP_GATHER;
        }
    else
        for (size_t i = 0; i < n; i++) {
            memcpy(g + i * w, p[i] + j0, w * sizeof *g);
            pg[i] = g + i * w;
        }
}

/* Whole batches of per rows (per at most a chunk), as many as fit a
 * chunk at a time: batch q's statistics a q stride further. Wide rows
 * (wide, for BP_WIDE features) take each batch a block of BP_GATHER
 * features at a time, its rows' block gathered first into a buffer of
 * their own. A wide row's column pairs lie a row apart, 8 KiB at 1024
 * features, so a batch's rows at one column fall in one set of the
 * first-level cache, which holds few of them, and a chunk's rows are
 * more streams at once than the hardware's own prefetching follows:
 * gathered, each line is read once, and each row's next blocks are asked
 * for as it is copied (gathering alone measured no better). */
PAIR_INLINE void stats_batches(const bp_rows *r, size_t per, size_t stride,
                               int shifted, int packed, int fetch, int wide,
                               double *mean, double *var)
{
    const double *buf[BP_CHUNK], *pg[BP_CHUNK];
    double g[BP_CHUNK * BP_GATHER];
    size_t rows = BP_CHUNK - BP_CHUNK % per, n, f = r->f;
    bp_rows q;
    const bp_rows *rq = quiet(r, fetch, &q);
    bp_ahead a = {0};
    for (size_t i0 = 0; i0 < r->b; i0 += n) {
        const double *const *p = chunk_rows(rq, i0, rows, buf, &n);
        if (fetch)
            a = ahead_of(r, i0, n,
                         ahead_steps(f, packed, (n + per - 1) / per));
        for (size_t q0 = 0; q0 < n; q0 += per) {
            double *mq = mean + (i0 + q0) / per * stride;
            double *vq = var + (i0 + q0) / per * stride;
            for (size_t j0 = 0; wide && j0 < f; j0 += BP_GATHER) {
                size_t w = f - j0 < BP_GATHER ? f - j0 : BP_GATHER;
                const double *sh = shifted ? r->shift + j0 : NULL;
                gather(per, p + q0, j0, w, f, g, pg);
                columns_stats(per, pg, w, sh, shifted, packed, fetch, &a,
                              mq + j0, vq + j0);
            }
            if (!wide)
                columns_stats(per, p + q0, f, r->shift, shifted, packed,
                              fetch, &a, mq, vq);
        }
    }
}

/* bp_stats_batches for wide rows (BP_WIDE), each case its copy. */
BP_APART static void stats_wide(const bp_rows *r, size_t per, size_t stride,
                                int packed, double *mean, double *var)
{
    int sh = r->shift != NULL;
    if (asks_ahead(r))
        sh ? stats_batches(r, per, stride, 1, packed, 1, 1, mean, var)
           : stats_batches(r, per, stride, 0, packed, 1, 1, mean, var);
    else
        sh ? stats_batches(r, per, stride, 1, packed, 0, 1, mean, var)
           : stats_batches(r, per, stride, 0, packed, 0, 1, mean, var);
}

/* bp_stats_batches for rows not asked for ahead: a function apart from
 * the copies that ask (one test around them made GCC 12 allocate this
 * one's registers otherwise, and a small population's run cost more). */
BP_APART static void stats_batches_plain(const bp_rows *r, size_t per,
                                         size_t stride, int packed,
                                         double *mean, double *var)
{
    if (per <= BP_CHUNK) {
        if (r->shift)
            stats_batches(r, per, stride, 1, packed, 0, 0, mean, var);
        else
            stats_batches(r, per, stride, 0, packed, 0, 0, mean, var);
        return;
    }
    for (size_t i0 = 0; i0 < r->b; i0 += per) {
        bp_rows q = rows_part(r, i0, per);
        bp_stats(&q, packed, mean, var);
        mean += stride, var += stride;
    }
}

void bp_stats_batches(const bp_rows *r, size_t per, size_t stride,
                      int packed, double *mean, double *var)
{
    if (per <= BP_CHUNK && r->f >= BP_WIDE)
        stats_wide(r, per, stride, packed, mean, var);
    else if (per > BP_CHUNK || !asks_ahead(r))
        stats_batches_plain(r, per, stride, packed, mean, var);
    else if (r->shift)
        stats_batches(r, per, stride, 1, packed, 1, 0, mean, var);
    else
        stats_batches(r, per, stride, 0, packed, 1, 0, mean, var);
}

void bp_stats(const bp_rows *r, int packed, double *mean, double *var)
{
    if (r->b <= BP_CHUNK) {
        if (asks_ahead(r))
            r->shift ? stats_one_chunk(r, 1, packed, 1, mean, var)
                     : stats_one_chunk(r, 0, packed, 1, mean, var);
        else
            r->shift ? stats_one_chunk(r, 1, packed, 0, mean, var)
                     : stats_one_chunk(r, 0, packed, 0, mean, var);
        return;
    }
    for (size_t j0 = 0; j0 < r->f; j0 += BP_BLOCK) {
        size_t nj = r->f - j0 < BP_BLOCK ? r->f - j0 : BP_BLOCK;
        if (r->shift)
            stats_block(r, j0, nj, 1, packed, mean + j0, var + j0);
        else
            stats_block(r, j0, nj, 0, packed, mean + j0, var + j0);
    }
}

/* ---- the outputs ---- */

/* What a pass over the outputs reads and adds to, copied out of bp_rows,
 * bp_layer and bp_sums into a local that nothing stored through a
 * double * can reach: loaded once a pass instead of once a column pair.
 * A pass covers one batch or several of per rows each, batch q's mean
 * and var stride doubles after batch q - 1's. tally and pass count the
 * self-checks passed (when checks). */
typedef struct {
    size_t f, per, stride;
    const double *shift;
    bp_layer l;
    double *s1, *s2, *sq;
    double inv_b; /* 1/per, the checks' */
    int checks;
    pair_tally_t tally; /* the pairs' checks passed */
    size_t pass;        /* the odd feature's */
} out_pass;

/* One chunk of a pass: its n rows, in segments of seg rows (the last
 * may be shorter), each a batch's or a part of one: the first segment
 * from mean and var, each next one's a stride further; whether the
 * first segment starts its batch (its sums start from 0) and whether the
 * last ends it (the checks are made); every other segment is a whole
 * batch. In eval mode where its squared gaps go (dd, row i at i f), the
 * last chunk's still to add (pend, when it had as many) and the total
 * they go to; with keep, where its outputs go (y and e, row i at i f). */
typedef struct {
    size_t n, seg;
    const double *const *p;
    const double *mean, *var;
    int first, last;
    double *dd, *y, *e, *total;
    const double *pend;
} out_chunk;

/* A pair's constants, in registers for a column: the batch's mean, sd,
 * variance and variance + eps (set for each batch), the buffers' mean
 * and sd, gamma, beta, the shift. */
typedef struct {
    pair_t m, sd, sv, ve, rm, sdr, g, be, sh;
} pair_consts;

PAIR_INLINE void pair_batch(const out_pass *o, pair_consts *c,
                            const double *mean, const double *var)
{
    c->sv = pair_load(var), c->m = pair_load(mean);
    c->ve = pair_add(c->sv, pair_dup(o->l.eps)); /* bn_sd's */
    c->sd = pair_sqrt(c->ve);
}

PAIR_INLINE pair_consts pair_of(const out_pass *o, size_t j, int eval,
                                int shifted)
{
    const bp_layer *l = &o->l;
    pair_t zero = pair_dup(0.0);
    pair_consts c = {zero, zero, zero, zero, zero, zero,
                     pair_load(l->gamma + j), pair_load(l->beta + j), zero};
    if (eval)
        c.rm = pair_load(l->rm + j), c.sdr = pair_load(l->sd_run + j);
    if (shifted)
        c.sh = pair_load(o->shift + j);
    return c;
}

/* Column pair j over a chunk, a segment at a time: the train outputs'
 * sums into s1 and s2 (checked where a batch ends) and, in eval mode,
 * (t - v)^2 into sq and into dd, the outputs into y and e when kept.
 * With spread, one of a's rows is asked for every a->every rows read. */
PAIR_INLINE void pair_outputs(out_pass *o, const out_chunk *k, size_t j,
                              int shifted, int eval, int keep, int lag,
                              int multi, int wide, int spread, bp_ahead *a)
{
    pair_consts cs = pair_of(o, j, eval, shifted), *c = &cs;
    size_t n = k->n, f = o->f, seg = k->seg, stride = o->stride;
    const double *const *p = k->p, *pend = lag ? k->pend + j * n : NULL;
    const double *mean = k->mean + j, *var = k->var + j;
    double *dd = k->dd, *y = k->y, *e = k->e;
    size_t jf = wide && j + BP_WIDE_AHEAD / 2 < f ? j + BP_WIDE_AHEAD / 2 : j;
    pair_t zero = pair_dup(0.0);
    pair_t a1 = k->first ? zero : pair_load(o->s1 + j);
    pair_t a2 = k->first ? zero : pair_load(o->s2 + j);
    pair_t aq = eval ? pair_load(o->sq + j) : zero;
    double tot = eval ? *k->total : 0.0;
    size_t every = spread ? a->every : 0, due = every;
    /* a batch a segment: the checks' constants once for all of them */
    selfcheck_consts ck = {zero, zero};
    if (multi)
        ck = selfcheck_pair_consts(c->g, c->be);
    for (size_t i0 = 0, end; i0 < n; i0 = end) {
        end = multi ? i0 + seg : n;
        if (multi)
            a1 = a2 = zero;
        pair_batch(o, c, mean, var);
        mean += stride, var += stride;
        PAIR_UNROLL2
        for (size_t i = i0; i < end; i++) {
            if (lag) { /* two of the last chunk's gaps, in their order */
                tot += pend[2 * i];
                tot += pend[2 * i + 1];
            }
            pair_t in = pair_load(p[i] + j);
            if (wide)
                bn_prefetch_line(p[i] + jf);
            if (spread && --due == 0) {
                due = every;
                ahead_one(a);
            }
            if (shifted)
                in = pair_add(in, c->sh);
            pair_t t = pair_add(
                pair_mul(c->g, pair_div(pair_sub(in, c->m), c->sd)), c->be);
            pair_t d = pair_sub(t, c->be);
            a1 = pair_add(a1, d);
            a2 = pair_add(a2, pair_mul(d, d));
            if (eval) {
                pair_t v = pair_add(
                    pair_mul(c->g, pair_div(pair_sub(in, c->rm), c->sdr)),
                    c->be);
                pair_t g = pair_sub(t, v), q = pair_mul(g, g);
                aq = pair_add(aq, q);
                pair_store(dd + i * f + j, q);
                if (keep)
                    pair_store(y + i * f + j, t),
                        pair_store(e + i * f + j, v);
            }
        }
        if (o->checks && (multi || k->last)) { /* a batch ends here */
            /* its variance + eps again, rather than held in registers
             * the rows' loop wants */
            pair_t sv = pair_load(var - stride);
            pair_t ve = pair_add(sv, pair_dup(o->l.eps));
            o->tally =
                multi ? selfcheck_pair_with(o->tally, ck, c->be, sv, ve, a1,
                                            a2, pair_dup(o->inv_b))
                      : selfcheck_pair(o->tally, c->g, c->be, sv, ve, a1, a2,
                                       pair_dup(o->inv_b));
        }
    }
    pair_store(o->s1 + j, a1);
    pair_store(o->s2 + j, a2);
    if (eval)
        pair_store(o->sq + j, aq), *k->total = tot;
}

PAIR_INLINE void one_outputs(out_pass *o, const out_chunk *k, size_t j,
                             int shifted, int eval, int keep, int lag,
                             int multi)
{
    const bp_layer *l = &o->l;
    size_t n = k->n, f = o->f, seg = k->seg, stride = o->stride;
    const double *const *p = k->p, *pend = lag ? k->pend + j * n : NULL;
    const double *mean = k->mean + j, *var = k->var + j;
    double *dd = k->dd, *y = k->y, *e = k->e;
    double g = l->gamma[j], be = l->beta[j];
    double rm = eval ? l->rm[j] : 0.0, sdr = eval ? l->sd_run[j] : 0.0;
    double sh = shifted ? o->shift[j] : 0.0;
    double a1 = k->first ? 0.0 : o->s1[j], a2 = k->first ? 0.0 : o->s2[j];
    double aq = eval ? o->sq[j] : 0.0;
    double tot = eval ? *k->total : 0.0;
    for (size_t i0 = 0, end; i0 < n; i0 = end) {
        end = multi ? i0 + seg : n;
        if (multi)
            a1 = a2 = 0.0;
        double m = *mean, sv = *var, ve = sv + l->eps;
        double sd = sqrt(ve); /* bn_sd's */
        mean += stride, var += stride;
        for (size_t i = i0; i < end; i++) {
            if (lag)
                tot += pend[i];
            double in = shifted ? p[i][j] + sh : p[i][j];
            double t = bn_normalize_value(in, m, sd, g, be);
            double d = t - be;
            a1 += d;
            a2 += d * d;
            if (eval) {
                double v = bn_normalize_value(in, rm, sdr, g, be);
                double q = (t - v) * (t - v);
                aq += q;
                dd[i * f + j] = q;
                if (keep)
                    y[i * f + j] = t, e[i * f + j] = v;
            }
        }
        if (o->checks && (multi || k->last))
            o->pass += (size_t)selfcheck_one(g, be, sv, ve, a1, a2, o->inv_b);
    }
    o->s1[j] = a1, o->s2[j] = a2;
    if (eval)
        o->sq[j] = aq, *k->total = tot;
}

/* acc + v[0] + v[1] + ... + v[n - 1], left to right: eight to a turn of
 * the loop, the additions one after another all the same. */
static double sum_in_order(double acc, size_t n, const double *v)
{
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        acc += v[k];
        acc += v[k + 1];
        acc += v[k + 2];
        acc += v[k + 3];
        acc += v[k + 4];
        acc += v[k + 5];
        acc += v[k + 6];
        acc += v[k + 7];
    }
    for (; k < n; k++)
        acc += v[k];
    return acc;
}

/* The scratch's two parts of a width f, each a chunk's squared gaps
 * (this chunk's, the last one's). */
static size_t part_of(size_t f)
{
    return BP_GAP_ROWS * f;
}

void bp_gap_flush(bp_gap *g, const double *dd, size_t f)
{
    g->sum = sum_in_order(g->sum, g->n, dd + (size_t)g->half * part_of(f));
    g->n = 0;
}

/* Every feature of a chunk: pairs, then a last odd feature alone; with
 * lag, the last chunk's squared gaps (pend) added to the total as they
 * go, in their order: two in each turn of a pair's loop and one in an
 * odd feature's, n f in all. */
PAIR_INLINE void outputs_features(out_pass *o, const out_chunk *k,
                                  bp_ahead *a, int shifted, int eval,
                                  int keep, int packed, int lag, int multi,
                                  int fetch)
{
    size_t f = o->f, j = 0;
    int spread = fetch && packed && f <= BP_SPREAD;
    for (; packed && j + 1 < f; j += 2) {
        if (fetch && !spread)
            ahead_step(a);
        if (fetch && f >= BP_WIDE)
            pair_outputs(o, k, j, shifted, eval, keep, lag, multi, 1, 0, a);
        else if (spread)
            pair_outputs(o, k, j, shifted, eval, keep, lag, multi, 0, 1, a);
        else
            pair_outputs(o, k, j, shifted, eval, keep, lag, multi, 0, 0, a);
    }
    if (spread) /* what the pairs left, all at once */
        ahead_step(a);
    for (; j < f; j++) {
        if (fetch)
            ahead_step(a);
        one_outputs(o, k, j, shifted, eval, keep, lag, multi);
    }
}

/* A chunk's outputs and, in eval mode, its squared gaps, which the next
 * chunk adds to the total as it goes, as this one adds the last one's
 * (when it had as many; else they are added first): the chain of
 * additions, each after the one before to keep the order, then runs
 * beside a chunk's divisions rather than after them. With multi the
 * chunk is whole batches of o->per rows; else it is in one batch. */
PAIR_INLINE void outputs_chunk(out_pass *o, const bp_sums *s, size_t i0,
                               size_t b, out_chunk *k, bp_ahead *a,
                               int shifted, int eval, int keep, int packed,
                               int multi, int fetch)
{
    size_t f = o->f, n = k->n, part = part_of(f), per = o->per;
    k->first = multi || i0 == 0, k->last = multi || i0 + n == b;
    k->seg = per;
    k->mean = o->l.mean + (multi ? i0 / per * o->stride : 0);
    k->var = o->l.var + (multi ? i0 / per * o->stride : 0);
    k->y = keep ? s->y + i0 * f : NULL, k->e = keep ? s->e + i0 * f : NULL;
    if (!eval) {
        outputs_features(o, k, a, shifted, 0, 0, packed, 0, multi, fetch);
        return;
    }
    bp_gap *g = s->gap;
    k->dd = s->dd + (size_t)(1 - g->half) * part, k->total = &g->sum;
    if (g->n == n * f) {
        k->pend = s->dd + (size_t)g->half * part;
        outputs_features(o, k, a, shifted, 1, keep, packed, 1, multi, fetch);
    } else {
        bp_gap_flush(g, s->dd, f);
        outputs_features(o, k, a, shifted, 1, keep, packed, 0, multi, fetch);
    }
    g->n = n * f, g->half = 1 - g->half;
}

/* A chunk is its pass's rows (multi 0: one batch) or as many whole
 * batches of per rows as fit in them (multi 1). */
PAIR_INLINE void outputs_case(const bp_rows *r, size_t per, size_t stride,
                              const bp_layer *l, const bp_sums *s,
                              int shifted, int eval, int keep, int packed,
                              int multi, int fetch)
{
    const double *p[BP_CHUNK];
    /* several batches a pass are always checked (several): a constant
     * here, no test a batch */
    out_pass o = {r->f, per, stride, r->shift, *l, s->s1, s->s2, s->sq,
                  1.0 / (double)per, multi || s->pass != NULL,
                  pair_tally_zero(), 0};
    out_chunk k = {.n = 0};
    bp_ahead a = {0};
    bp_rows q;
    const bp_rows *rq = quiet(r, fetch, &q);
    size_t rows = eval ? BP_GAP_ROWS : BP_CHUNK;
    if (multi)
        rows -= rows % per;
    else if (bp_crowded(r->f))
        rows = crowded_rows(r->f);
    for (size_t i0 = 0; i0 < r->b; i0 += k.n) {
        k.p = chunk_rows(rq, i0, rows, p, &k.n);
        if (fetch && packed && r->f <= BP_SPREAD)
            a = ahead_spread(r, i0, k.n, r->f / 2);
        else if (fetch)
            a = ahead_of(r, i0, k.n, ahead_steps(r->f, packed, 1));
        outputs_chunk(&o, s, i0, r->b, &k, &a, shifted, eval, keep, packed,
                      multi, fetch);
    }
    if (s->pass)
        *s->pass += o.pass + pair_tally_sum(o.tally);
}

/* The cases for rows asked for ahead (asks_ahead): outputs_case's copy
 * for each shift, eval and keep (keep only with eval, and not with
 * multi), a function of their own so that the small populations' code is
 * what it was. */
static void outputs_fetched(const bp_rows *r, size_t per, size_t stride,
                            const bp_layer *l, const bp_sums *s, int eval,
                            int keep, int packed, int multi)
{
    size_t q = per, t = stride;
    if (multi && !eval)
        r->shift ? outputs_case(r, q, t, l, s, 1, 0, 0, packed, 1, 1)
                 : outputs_case(r, q, t, l, s, 0, 0, 0, packed, 1, 1);
    else if (multi)
        r->shift ? outputs_case(r, q, t, l, s, 1, 1, 0, packed, 1, 1)
                 : outputs_case(r, q, t, l, s, 0, 1, 0, packed, 1, 1);
    else if (!eval)
        r->shift ? outputs_case(r, q, t, l, s, 1, 0, 0, packed, 0, 1)
                 : outputs_case(r, q, t, l, s, 0, 0, 0, packed, 0, 1);
    else if (!keep)
        r->shift ? outputs_case(r, q, t, l, s, 1, 1, 0, packed, 0, 1)
                 : outputs_case(r, q, t, l, s, 0, 1, 0, packed, 0, 1);
    else
        r->shift ? outputs_case(r, q, t, l, s, 1, 1, 1, packed, 0, 1)
                 : outputs_case(r, q, t, l, s, 0, 1, 1, packed, 0, 1);
}

void bp_outputs(const bp_rows *r, const bp_layer *l, int packed,
                const bp_sums *s)
{
    int eval = l->rm != NULL, keep = eval && s->y && s->e;
    size_t b = r->b;
    if (asks_ahead(r)) {
        outputs_fetched(r, b, 0, l, s, eval, keep, packed, 0);
        return;
    }
    if (!eval)
        r->shift ? outputs_case(r, b, 0, l, s, 1, 0, 0, packed, 0, 0)
                 : outputs_case(r, b, 0, l, s, 0, 0, 0, packed, 0, 0);
    else if (!keep)
        r->shift ? outputs_case(r, b, 0, l, s, 1, 1, 0, packed, 0, 0)
                 : outputs_case(r, b, 0, l, s, 0, 1, 0, packed, 0, 0);
    else
        r->shift ? outputs_case(r, b, 0, l, s, 1, 1, 1, packed, 0, 0)
                 : outputs_case(r, b, 0, l, s, 0, 1, 1, packed, 0, 0);
}

/* Whether bp_outputs_batches takes several batches a chunk (only with
 * the self-checks, which outputs_case then makes without a test; never
 * rows that crowd the cache, which go a few rows a chunk). */
static int several(size_t f, size_t per, int eval, int keep,
                   const bp_sums *s)
{
    return !bp_crowded(f) && s->pass && !keep &&
           per < (eval ? BP_GAP_ROWS : BP_CHUNK);
}

/* bp_outputs_batches for rows not asked for ahead, a function apart as
 * stats_batches_plain is. */
BP_APART static void outputs_batches_plain(const bp_rows *r, size_t per,
                                           size_t stride, const bp_layer *l,
                                           int packed, const bp_sums *s)
{
    int eval = l->rm != NULL, keep = eval && s->y && s->e;
    if (several(r->f, per, eval, keep, s)) {
        /* each case spelled out here: through a function of the
         * cases shared with outputs_fetched, GCC 12 made these loops
         * costlier */
        size_t q = per, t = stride;
        if (!eval)
            r->shift ? outputs_case(r, q, t, l, s, 1, 0, 0, packed, 1, 0)
                     : outputs_case(r, q, t, l, s, 0, 0, 0, packed, 1, 0);
        else
            r->shift ? outputs_case(r, q, t, l, s, 1, 1, 0, packed, 1, 0)
                     : outputs_case(r, q, t, l, s, 0, 1, 0, packed, 1, 0);
        return;
    }
    /* Batches of a chunk or more gain nothing, and outputs kept are an
     * observer's: one at a time. */
    bp_layer lq = *l;
    bp_sums sq = *s;
    for (size_t i0 = 0; i0 < r->b; i0 += per) {
        bp_rows rq = rows_part(r, i0, per);
        if (keep)
            sq.y = s->y + i0 * r->f, sq.e = s->e + i0 * r->f;
        bp_outputs(&rq, &lq, packed, &sq);
        lq.mean += stride, lq.var += stride;
    }
}

void bp_outputs_batches(const bp_rows *r, size_t per, size_t stride,
                        const bp_layer *l, int packed, const bp_sums *s)
{
    int eval = l->rm != NULL, keep = eval && s->y && s->e;
    if (asks_ahead(r) && several(r->f, per, eval, keep, s))
        outputs_fetched(r, per, stride, l, s, eval, 0, packed, 1);
    else
        outputs_batches_plain(r, per, stride, l, packed, s);
}
