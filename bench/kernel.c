/* The bare kernel of kernel.h, two features at a time (base/pair.h) as
 * bnstudy's layer is, every sum in the order bnstudy keeps. Both entry
 * points share the shuffle, the rows' addresses, the statistics and the
 * updates; the pass over the outputs is row by row for the scores alone
 * (the total's order is the loops' own, nothing to hold per feature), and
 * column pair by column pair over chunks of rows for everything, so that
 * the sums per feature the self-checks and the gaps take stay in
 * registers, as bnstudy's pass has them. */
#include "kernel.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/pair.h"
#include "base/rand.h"
#include "base/pcg32.h"

/* Rows a chunk of the complete pass over the outputs (a column pair at
 * a time over a chunk, so that the pair's constants and sums stay in
 * registers): each chunk's squared gaps are added to the total in order
 * (row by row, each row's features in order) while the next chunk is
 * made, so that the chain of additions runs beside the divisions, and
 * the last chunk's after everything, so the chunk is short. */
#define KERNEL_CHUNK 32

size_t kernel_scratch_bytes(size_t n, size_t f, size_t b)
{
    /* the order; each batch's mean, variance and sd; the buffers' sd, a
     * batch's two sums, the last row's eval outputs and its evaluation
     * again (with its sentinel); the pass's two chunks of gaps; the
     * rows' addresses in order */
    return n * sizeof(size_t) +
           (3 * (n / b) * f + 5 * f + 1 + 2 * KERNEL_CHUNK * f) *
               sizeof(double) +
           n * sizeof(const double *);
}

/* One batch's statistics, feature pair by pair over the rows (the last
 * odd feature alone): the mean and biased variance by the corrected two
 * pass formula, as bnstudy's layer has them, into m and v. */
PAIR_INLINE void batch_stats(const double *const *at, size_t b, size_t f,
                             double *m, double *v)
{
    pair_t nb = pair_dup((double)b);
    size_t j = 0;
    for (; j + 1 < f; j += 2) {
        pair_t s = pair_dup(0.0), s1 = s, s2 = s;
        PAIR_UNROLL2
        for (size_t i = 0; i < b; i++)
            s = pair_add(s, pair_load(at[i] + j));
        pair_t mm = pair_div(s, nb);
        PAIR_UNROLL2
        for (size_t i = 0; i < b; i++) {
            pair_t d = pair_sub(pair_load(at[i] + j), mm);
            s1 = pair_add(s1, d);
            s2 = pair_add(s2, pair_mul(d, d));
        }
        pair_store(m + j, pair_add(mm, pair_div(s1, nb)));
        pair_store(v + j, pair_div(pair_sub(s2, pair_div(pair_mul(s1, s1),
                                                         nb)),
                                   nb));
    }
    for (; j < f; j++) {
        double s = 0.0, s1 = 0.0, s2 = 0.0;
        for (size_t i = 0; i < b; i++)
            s += at[i][j];
        double mm = s / (double)b;
        for (size_t i = 0; i < b; i++) {
            double d = at[i][j] - mm;
            s1 += d;
            s2 += d * d;
        }
        m[j] = mm + s1 / (double)b;
        v[j] = (s2 - s1 * s1 / (double)b) / (double)b;
    }
}

/* The squared gaps between the two modes' outputs of one batch, added
 * to sq row by row, each row's features in order. */
static double batch_gaps(const double *const *at, size_t b, size_t f,
                         const double *m, const double *sd,
                         const double *rm, const double *s,
                         const kernel_layer *l, double sq)
{
    pair_t g = pair_dup(l->gamma), be = pair_dup(l->beta);
    for (size_t i = 0; i < b; i++) {
        const double *r = at[i];
        size_t j = 0;
        PAIR_UNROLL2
        for (; j + 1 < f; j += 2) {
            pair_t v = pair_load(r + j);
            pair_t t = pair_add(
                pair_mul(g, pair_div(pair_sub(v, pair_load(m + j)),
                                     pair_load(sd + j))),
                be);
            pair_t e = pair_add(
                pair_mul(g, pair_div(pair_sub(v, pair_load(rm + j)),
                                     pair_load(s + j))),
                be);
            pair_t d = pair_sub(t, e), q = pair_mul(d, d);
            sq += pair_lo(q);
            sq += pair_hi(q);
        }
        for (; j < f; j++) {
            double t = l->gamma * ((r[j] - m[j]) / sd[j]) + l->beta;
            double e = l->gamma * ((r[j] - rm[j]) / s[j]) + l->beta;
            sq += (t - e) * (t - e);
        }
    }
    return sq;
}

/* What the pass needs of the layer, made once a run. */
typedef struct {
    pair_t g, be, gg, tol_m, e2, ib; /* gamma^2, the mean check's
                                      * tolerance, eps, 1/b */
    double gamma, beta, eps, inv_b;
} pass_consts;

/* The pass over the outputs across chunks: the total of squared gaps,
 * the last chunk's gaps not added yet (n of them, in half `half` of dd,
 * two halves of KERNEL_CHUNK f); and kernel_run_all's: per feature a
 * batch's sums of y - beta and its square (a1, a2) and the run's sum of
 * (t - e)^2 (sq), the last row's eval outputs (e), the checks passed. */
typedef struct {
    double tot;
    size_t n;
    int half;
    double *dd, *a1, *a2, *sq, *e;
    pair_tally_t tally;
    size_t pass;
} gap_pass;

/* acc + v[0] + ... + v[n - 1], in order. */
static double sum_in_order(double acc, size_t n, const double *v)
{
    for (size_t k = 0; k < n; k++)
        acc += v[k];
    return acc;
}

/* The two self-checks of a batch's train outputs, features j, j + 1
 * (docs/definitions.md): the mean within 1e-9 (|gamma| + |beta|) of
 * beta, the variance within 1e-9 of gamma^2 v / (v + eps) plus 1e-12,
 * from the sums a1, a2 of y - beta and its square over the batch (sv its
 * variances); each lane's passes added to t. */
PAIR_INLINE pair_tally_t check_pair(pair_tally_t t, const pass_consts *c,
                                    pair_t sv, pair_t a1, pair_t a2)
{
    pair_t m = pair_add(c->be, pair_mul(a1, c->ib));
    pair_t v = pair_mul(pair_sub(a2, pair_mul(pair_mul(a1, a1), c->ib)),
                        c->ib);
    pair_t want = pair_div(pair_mul(c->gg, sv), pair_add(sv, c->e2));
    t = pair_tally_le(t, pair_abs(pair_sub(m, c->be)), c->tol_m);
    return pair_tally_le(
        t, pair_abs(pair_sub(v, want)),
        pair_add(pair_mul(pair_dup(1e-9), want), pair_dup(1e-12)));
}

PAIR_INLINE size_t check_one(const pass_consts *c, double sv, double a1,
                             double a2)
{
    double m = c->beta + a1 * c->inv_b;
    double v = (a2 - a1 * a1 * c->inv_b) * c->inv_b;
    double want = c->gamma * c->gamma * sv / (sv + c->eps);
    return (size_t)(fabs(m - c->beta) <=
                    1e-9 * (fabs(c->gamma) + fabs(c->beta))) +
           (fabs(v - want) <= 1e-9 * want + 1e-12);
}

/* Where a chunk's rows are: n rows, in segments of seg (the last may
 * be shorter), each a batch's or a part of one, the first segment's
 * mean, variance and sd at m (f apart) and each next one's a stride
 * further; whether the first segment starts its batch and the last ends
 * it (with several segments each is a whole batch); with keep, the
 * chunk's last row's eval outputs are kept (the code checks'). */
typedef struct {
    const double *const *at;
    size_t n, seg, stride;
    const double *m;
    int first, last, keep;
} chunk_rows;

/* Column pair j of a chunk: (t - e)^2 into dd (row i at i f) and, with
 * pend, the last chunk's gaps added to the total, two a row; with all,
 * each batch's sums (from 0 where it starts, checked where it ends) and
 * the run's (t - e)^2. */
PAIR_INLINE void pair_chunk(const chunk_rows *k, size_t f, size_t j,
                            const double *rm, const double *s,
                            const pass_consts *c, gap_pass *g,
                            const double *pend, double *dd, int multi)
{
    pair_t zero = pair_dup(0.0), r = pair_load(rm + j), sr = pair_load(s + j);
    pair_t a1 = zero, a2 = zero, e = zero;
    const double *const *at = k->at;
    const double *m = k->m + j;
    size_t n = k->n, seg = multi ? k->seg : n;
    if (!multi && !k->first)
        a1 = pair_load(g->a1 + j), a2 = pair_load(g->a2 + j);
    pair_t aq = pair_load(g->sq + j);
    double tot = g->tot;
    for (size_t i0 = 0; i0 < n; i0 += seg, m += k->stride) {
        pair_t mm = pair_load(m), sd = pair_load(m + 2 * f);
        if (multi)
            a1 = a2 = zero;
        PAIR_UNROLL2
        for (size_t i = i0; i < i0 + seg; i++) {
            if (pend) {
                tot += pend[2 * i];
                tot += pend[2 * i + 1];
            }
            pair_t v = pair_load(at[i] + j);
            pair_t t = pair_add(
                pair_mul(c->g, pair_div(pair_sub(v, mm), sd)), c->be);
            e = pair_add(pair_mul(c->g, pair_div(pair_sub(v, r), sr)),
                         c->be);
            pair_t d = pair_sub(t, e), q = pair_mul(d, d);
            pair_store(dd + i * f + j, q);
            pair_t y = pair_sub(t, c->be);
            a1 = pair_add(a1, y);
            a2 = pair_add(a2, pair_mul(y, y));
            aq = pair_add(aq, q);
        }
        if (multi || k->last)
            g->tally = check_pair(g->tally, c, pair_load(m + f), a1, a2);
    }
    g->tot = tot;
    pair_store(g->sq + j, aq);
    if (k->keep)
        pair_store(g->e + j, e);
    if (!multi && !k->last)
        pair_store(g->a1 + j, a1), pair_store(g->a2 + j, a2);
}

/* The same for a last odd feature j: one pending gap a row. */
PAIR_INLINE void one_chunk(const chunk_rows *k, size_t f, size_t j,
                           const double *rm, const double *s,
                           const pass_consts *c, gap_pass *g,
                           const double *pend, double *dd, int multi)
{
    const double *const *at = k->at;
    const double *m = k->m + j;
    size_t n = k->n, seg = multi ? k->seg : n;
    double r = rm[j], sr = s[j], a1 = 0.0, a2 = 0.0, e = 0.0;
    if (!multi && !k->first)
        a1 = g->a1[j], a2 = g->a2[j];
    double aq = g->sq[j], tot = g->tot;
    for (size_t i0 = 0; i0 < n; i0 += seg, m += k->stride) {
        double mm = *m, sd = m[2 * f];
        if (multi)
            a1 = a2 = 0.0;
        for (size_t i = i0; i < i0 + seg; i++) {
            if (pend)
                tot += pend[i];
            double v = at[i][j];
            double t = c->gamma * ((v - mm) / sd) + c->beta;
            e = c->gamma * ((v - r) / sr) + c->beta;
            double q = (t - e) * (t - e);
            dd[i * f + j] = q;
            a1 += t - c->beta;
            a2 += (t - c->beta) * (t - c->beta);
            aq += q;
        }
        if (multi || k->last)
            g->pass += check_one(c, m[f], a1, a2);
    }
    g->tot = tot;
    g->sq[j] = aq;
    if (k->keep)
        g->e[j] = e;
    if (!multi && !k->last)
        g->a1[j] = a1, g->a2[j] = a2;
}

/* Every column of a chunk: pairs, then a last odd feature alone; with
 * lag, the last chunk's gaps (pend, n f of them) added as they go. */
PAIR_INLINE void chunk_columns(const chunk_rows *k, size_t f,
                               const double *rm, const double *s,
                               const pass_consts *c, gap_pass *g,
                               const double *pend, double *dd, int multi,
                               int lag)
{
    size_t j = 0, n = k->n;
    for (; j + 1 < f; j += 2)
        pair_chunk(k, f, j, rm, s, c, g, lag ? pend + j * n : NULL, dd,
                   multi);
    for (; j < f; j++)
        one_chunk(k, f, j, rm, s, c, g, lag ? pend + j * n : NULL, dd,
                  multi);
}

/* One chunk: its outputs, its gaps into a half of dd, the last chunk's
 * added as they go when it had as many (else first). */
PAIR_INLINE void chunk(const chunk_rows *k, size_t f, const double *rm,
                       const double *s, const pass_consts *c, gap_pass *g,
                       int multi)
{
    size_t part = KERNEL_CHUNK * f;
    const double *pend = g->dd + (size_t)g->half * part;
    double *dd = g->dd + (size_t)(1 - g->half) * part;
    if (g->n == k->n * f) {
        chunk_columns(k, f, rm, s, c, g, pend, dd, multi, 1);
    } else {
        g->tot = sum_in_order(g->tot, g->n, pend);
        chunk_columns(k, f, rm, s, c, g, pend, dd, multi, 0);
    }
    g->n = k->n * f, g->half = 1 - g->half;
}

/* The pass over every batch's outputs: batches of fewer rows than a
 * chunk (multi) as many whole ones a chunk as fit, so that what a column
 * pair costs to set up is paid once for them; longer ones in chunks of
 * their own rows. */
PAIR_INLINE void outputs_pass(const double *const *at, size_t nb, size_t b,
                              size_t f, const double *stats, size_t stride,
                              const double *rm, const double *s,
                              const pass_consts *c, gap_pass *g,
                              int multi)
{
    size_t rows = multi ? KERNEL_CHUNK - KERNEL_CHUNK % b : KERNEL_CHUNK;
    size_t end = nb * b;
    chunk_rows k = {.seg = b, .stride = stride};
    for (size_t i0 = 0; i0 < end; i0 += k.n) {
        size_t in = i0 % b; /* where in its batch the chunk starts */
        k.n = end - i0 < rows ? end - i0 : rows;
        if (!multi && k.n > b - in)
            k.n = b - in;
        k.at = at + i0, k.m = stats + i0 / b * stride;
        k.first = in == 0, k.last = in + k.n >= b, k.keep = i0 + k.n == end;
        chunk(&k, f, rm, s, c, g, multi);
    }
}

/* What each of nb batches leaves once its statistics are made (batch
 * k's mean, variance and sd k stride further), batch by batch and
 * feature pair by pair (the last odd feature alone): its sd beside the
 * statistics, the buffers' ema update, and the squared errors of its
 * statistics against the truth, added to dm2 and dv2 in the batches'
 * and the features' order. */
PAIR_INLINE void updates(const kernel_layer *l, size_t f, size_t nb,
                         size_t stride, double *m, const double *mu,
                         const double *var, double *restrict rm,
                         double *restrict rv, double *dm2, double *dv2)
{
    double sm = *dm2, sv = *dv2;
    pair_t k2 = pair_dup(l->keep), p2 = pair_dup(l->p), e2 = pair_dup(l->eps);
    for (size_t k = 0; k < nb; k++, m += stride) {
        const double *v = m + f;
        double *sd = m + 2 * f;
        size_t j = 0;
        for (; j + 1 < f; j += 2) {
            pair_t mm = pair_load(m + j), vv = pair_load(v + j);
            pair_store(sd + j, pair_sqrt(pair_add(vv, e2)));
            pair_store(rm + j, pair_add(pair_mul(k2, pair_load(rm + j)),
                                        pair_mul(p2, mm)));
            pair_store(rv + j, pair_add(pair_mul(k2, pair_load(rv + j)),
                                        pair_mul(p2, vv)));
            pair_t dm = pair_sub(mm, pair_load(mu + j));
            pair_t dv = pair_sub(vv, pair_load(var + j));
            pair_t qm = pair_mul(dm, dm), qv = pair_mul(dv, dv);
            sm += pair_lo(qm);
            sm += pair_hi(qm);
            sv += pair_lo(qv);
            sv += pair_hi(qv);
        }
        for (; j < f; j++) {
            sd[j] = sqrt(v[j] + l->eps);
            rm[j] = l->keep * rm[j] + l->p * m[j];
            rv[j] = l->keep * rv[j] + l->p * v[j];
            sm += (m[j] - mu[j]) * (m[j] - mu[j]);
            sv += (v[j] - var[j]) * (v[j] - var[j]);
        }
    }
    *dm2 = sm, *dv2 = sv;
}

/* A sentinel no arithmetic produces (a NaN with a payload), around the
 * row evaluated again by the code checks. */
static const uint64_t sentinel = 0x7ff4a5a5a5a5a5a5ULL;

/* The two self-checks that are properties of the code (the last row
 * compared, evaluated again on its own, fills exactly its f outputs and
 * gives the bits the pass gave it, e): each counts for every batch and
 * feature, nb f, when it passes. y is f + 1 doubles of scratch. */
static size_t code_checks(const double *r, size_t f, const double *rm,
                          const double *s, const kernel_layer *l,
                          const double *e, double *y, size_t nb)
{
    for (size_t j = 0; j <= f; j++)
        memcpy(y + j, &sentinel, sizeof sentinel);
    for (size_t j = 0; j < f; j++)
        y[j] = l->gamma * ((r[j] - rm[j]) / s[j]) + l->beta;
    int shape = memcmp(y + f, &sentinel, sizeof sentinel) == 0;
    for (size_t j = 0; j < f; j++)
        shape = shape && memcmp(y + j, &sentinel, sizeof sentinel) != 0;
    return (shape + (memcmp(y, e, f * sizeof *y) == 0)) * nb * f;
}

/* err / scale, where a scale of exactly 0 leaves an exact statistic
 * right and any other infinitely far off (score.c's). */
static double relative(double err, double scale)
{
    if (scale == 0.0)
        return err == 0.0 ? 0.0 : INFINITY;
    return err / scale;
}

/* The final buffers' errors against the truth mu, var (summary.tsv's
 * stats_err ... worst_var_rel, each sum over the features in order), and
 * the updates and the initial values' weight left, keep^nb. */
static void buffer_scores(const kernel_layer *l, size_t f, size_t nb,
                          const double *mu, const double *var,
                          kernel_out *out)
{
    double sm = 0.0, sv = 0.0, worst = -1.0, rel = 0.0, worst_rel = 0.0;
    size_t wj = 0;
    for (size_t j = 0; j < f; j++) {
        double dm = out->rm[j] - mu[j], dv = out->rv[j] - var[j];
        sm += dm * dm;
        sv += dv * dv;
        if (fabs(dv) > worst)
            worst = fabs(dv), wj = j;
        double am = relative(dm, sqrt(var[j])), av = relative(dv, var[j]);
        rel += am * am + av * av;
        if (fabs(av) > worst_rel)
            worst_rel = fabs(av);
    }
    out->stats_err = sqrt((sm + sv) / (2.0 * (double)f));
    out->mean_err = sqrt(sm / (double)f);
    out->var_err = sqrt(sv / (double)f);
    out->worst_var_err = worst, out->worst_var_feature = wj;
    out->stats_err_rel = sqrt(rel / (2.0 * (double)f));
    out->worst_var_rel = worst_rel;
    double w = 1.0;
    for (size_t t = 0; w != 0.0 && t < nb; t++)
        w *= l->keep;
    out->updates = nb, out->init_weight = w;
}

/* The scores-only pass: every batch's outputs row by row;
 * train_eval_rmse. */
static double scores_pass(const double *const *at, size_t nb, size_t b,
                          size_t f, const double *stats, size_t stride,
                          const double *rm, const double *s,
                          const kernel_layer *l)
{
    double sq = 0.0;
    for (size_t k = 0; k < nb; k++) {
        const double *m = stats + k * stride, *sd = m + 2 * f;
        sq = batch_gaps(at + k * b, b, f, m, sd, rm, s, l, sq);
    }
    return sqrt(sq / (double)(nb * b * f));
}

/* The complete pass: every batch's outputs column pair by column pair,
 * into out's train_eval_rmse, gaps per feature and self-checks (the
 * scratch past s: a batch's two sums, the last row's eval outputs and
 * its evaluation again; dd, the pass's two chunks of gaps). */
static void complete_pass(const double *const *at, size_t nb, size_t b,
                          size_t f, const double *stats, size_t stride,
                          const double *rm, double *s, const kernel_layer *l,
                          double *dd, kernel_out *out)
{
    double inv_b = 1.0 / (double)b, g2 = l->gamma * l->gamma;
    double tol_m = 1e-9 * (fabs(l->gamma) + fabs(l->beta));
    pass_consts pc = {pair_dup(l->gamma), pair_dup(l->beta), pair_dup(g2),
                      pair_dup(tol_m),    pair_dup(l->eps),  pair_dup(inv_b),
                      l->gamma,           l->beta,           l->eps,
                      inv_b};
    gap_pass g = {0.0, 0, 0, dd, s + f, s + 2 * f, out->gap, s + 3 * f,
                  pair_tally_zero(), 0};
    for (size_t j = 0; j < f; j++)
        g.sq[j] = 0.0;
    if (b < KERNEL_CHUNK)
        outputs_pass(at, nb, b, f, stats, stride, rm, s, &pc, &g, 1);
    else
        outputs_pass(at, nb, b, f, stats, stride, rm, s, &pc, &g, 0);
    g.tot = sum_in_order(g.tot, g.n, dd + (size_t)g.half * KERNEL_CHUNK * f);
    out->train_eval_rmse = sqrt(g.tot / (double)(nb * b * f));
    size_t pass = g.pass + pair_tally_sum(g.tally);
    if (nb > 0)
        pass += code_checks(at[nb * b - 1], f, rm, s, l, g.e, s + 4 * f, nb);
    out->props_pass = pass;
    out->props_total = 4 * nb * f;
    for (size_t j = 0; j < f; j++)
        out->gap[j] = sqrt(g.sq[j] / (double)(nb * b));
}

/* kernel_run's work, and with all kernel_run_all's. */
PAIR_INLINE void run(const double *x, size_t n, size_t f, const double *mu,
                     const double *var, size_t b, uint64_t seed,
                     const kernel_layer *l, void *scratch, kernel_out *out,
                     int all)
{
    /* each batch's mean, variance and sd, side by side */
    size_t nb = n / b, *perm = scratch, stride = 3 * f;
    double *stats = (double *)(perm + n), *s = stats + nb * stride;
    double *rm = out->rm, *rv = out->rv;
    double *dd = s + 5 * f + 1; /* the complete pass's two halves */
    const double **at =
        (const double **)(void *)(dd + 2 * KERNEL_CHUNK * f);
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    pcg32_t rng;
    pcg32_seed(&rng, seed, PCG32_INITSEQ_SHUFFLE);
    rand_shuffle(&rng, perm, n);
    for (size_t i = 0; i < n; i++)
        at[i] = x + perm[i] * f;
    for (size_t j = 0; j < f; j++)
        rm[j] = 0.0, rv[j] = 1.0;

    for (size_t k = 0; k < nb; k++) {
        double *m = stats + k * stride;
        batch_stats(at + k * b, b, f, m, m + f);
    }
    /* then every batch's update, in order: a batch's statistics read
     * nothing the updates write */
    double dm2 = 0.0, dv2 = 0.0;
    updates(l, f, nb, stride, stats, mu, var, rm, rv, &dm2, &dv2);

    for (size_t j = 0; j < f; j++)
        s[j] = sqrt(rv[j] + l->eps);
    if (all) {
        complete_pass(at, nb, b, f, stats, stride, rm, s, l, dd, out);
        buffer_scores(l, f, nb, mu, var, out);
    } else
        out->train_eval_rmse = scores_pass(at, nb, b, f, stats, stride, rm,
                                           s, l);
    out->batch_mean_err = sqrt(dm2 / (double)(nb * f));
    out->batch_var_err = sqrt(dv2 / (double)(nb * f));
}

void kernel_run(const double *x, size_t n, size_t f, const double *mu,
                const double *var, size_t b, uint64_t seed,
                const kernel_layer *l, void *scratch, kernel_out *out)
{
    run(x, n, f, mu, var, b, seed, l, scratch, out, 0);
}

void kernel_run_all(const double *x, size_t n, size_t f, const double *mu,
                    const double *var, size_t b, uint64_t seed,
                    const kernel_layer *l, void *scratch, kernel_out *out)
{
    run(x, n, f, mu, var, b, seed, l, scratch, out, 1);
}

const char *kernel_differs(const kernel_out *out, size_t f, int all,
                           const run_result *res)
{
    size_t bytes = f * sizeof(double);
    const char *scores =
        memcmp(out->rm, res->running_mean, bytes) ? "running_mean"
        : memcmp(out->rv, res->running_var, bytes) ? "running_var"
        : out->train_eval_rmse != res->train_eval_rmse ? "train_eval_rmse"
        : out->batch_mean_err != res->batch_mean_err ? "batch_mean_err"
        : out->batch_var_err != res->batch_var_err ? "batch_var_err"
                                                   : NULL;
    if (scores || !all)
        return scores;
    /* != would call two NaNs different */
#define SAME(a, b) (memcmp(&(a), &(b), sizeof(a)) == 0)
    return out->props_pass != res->props_pass ? "props_pass"
           : out->props_total != res->props_total ? "props_total"
           : memcmp(out->gap, res->train_eval, bytes) ? "train_eval"
           : out->updates != res->updates ? "updates"
           : !SAME(out->init_weight, res->init_weight) ? "init_weight"
           : !SAME(out->stats_err, res->stats_err) ? "stats_err"
           : !SAME(out->mean_err, res->mean_err) ? "mean_err"
           : !SAME(out->var_err, res->var_err) ? "var_err"
           : !SAME(out->worst_var_err, res->worst_var_err) ? "worst_var_err"
           : out->worst_var_feature != res->worst_var_feature
               ? "worst_var_feature"
           : !SAME(out->stats_err_rel, res->stats_err_rel) ? "stats_err_rel"
           : !SAME(out->worst_var_rel, res->worst_var_rel) ? "worst_var_rel"
                                                           : NULL;
#undef SAME
}
