/*
 * Building feature-map populations and measuring the information in their
 * batch statistics; see convpop.h for the definitions and
 * docs/convolution.md for the derivations. The order in which random draws
 * are taken is part of the definition.
 */
#include "pop/convpop.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/rand.h"
#include "pop/pop.h"

double convpop_uniform(pcg32_t *rng)
{
    /* An odd integer of magnitude below 2^32 and a power-of-two scale:
     * both exact in a double, so no rounding mode or library enters. */
    int64_t odd = 2 * (int64_t)pcg32_next(rng) + 1 - ((int64_t)1 << 32);
    return (double)odd * 0x1p-32;
}

void convpop_filters(size_t c, size_t k, uint64_t seed, double *w)
{
    pcg32_t rng;
    pcg32_seed(&rng, seed, PCG32_INITSEQ_CONV_FILTERS);
    for (size_t i = 0; i < c * k * k; i++)
        w[i] = convpop_uniform(&rng) / (double)k;
}

/* Storage for m samples of c channels of h x w, groups filled in. */
static int alloc_pop(convpop_t *pop, size_t m, size_t c, size_t h, size_t w,
                     bn_error *err)
{
    memset(pop, 0, sizeof *pop);
    if (m < 2)
        return bn_fail(err, "a feature-map population needs at least 2 "
                            "samples, got %zu",
                       m);
    if (c < 1)
        return bn_fail(err, "a feature-map population needs at least one "
                            "channel");
    if (h < 1 || w < 1 || h > CONVPOP_MAX_SIDE || w > CONVPOP_MAX_SIDE)
        return bn_fail(err, "maps must be 1 to %u on a side, got %zu x %zu",
                       CONVPOP_MAX_SIDE, h, w);
    size_t hw = h * w;
    if (m > 100000000u / hw)
        return bn_fail(err, "%zu samples of %zu x %zu make more than "
                            "100000000 rows",
                       m, h, w);
    size_t n = m * hw;
    if (c > SIZE_MAX / sizeof *pop->x / n)
        return bn_fail(err, "%zu rows of %zu channels do not fit in memory",
                       n, c);
    pop->x = bn_alloc_large(n * c * sizeof *pop->x);
    pop->group = malloc(n * sizeof *pop->group);
    pop->mean = malloc(2 * c * sizeof *pop->mean);
    if (!pop->x || !pop->group || !pop->mean) {
        convpop_free(pop);
        return bn_fail(err, "out of memory for %zu rows of %zu channels", n,
                       c);
    }
    pop->var = pop->mean + c;
    pop->m = m;
    pop->c = c;
    pop->h = h;
    pop->w = w;
    pop->n = n;
    for (size_t i = 0; i < n; i++)
        pop->group[i] = i / hw;
    return 0;
}

static void finish_pop(convpop_t *pop)
{
    for (size_t j = 0; j < pop->c; j++)
        pop_moments(pop->n, pop->c, pop->x + j, &pop->mean[j],
                    &pop->var[j]);
}

int convpop_from_images(const double *img, size_t m, size_t ih, size_t iw,
                        size_t c, size_t k, uint64_t seed, convpop_t *pop,
                        double *filters, bn_error *err)
{
    memset(pop, 0, sizeof *pop);
    if (k < 1 || k > CONVPOP_MAX_KERNEL || k > ih || k > iw)
        return bn_fail(err, "filters of %zu x %zu do not fit images of "
                            "%zu x %zu (1 to %u, at most the image)",
                       k, k, ih, iw, CONVPOP_MAX_KERNEL);
    size_t h = ih - k + 1, w = iw - k + 1;
    if (alloc_pop(pop, m, c, h, w, err) != 0)
        return -1;
    for (size_t i = 0; i < m * ih * iw; i++)
        if (!isfinite(img[i])) {
            convpop_free(pop);
            return bn_fail(err, "image %zu, pixel %zu is not finite",
                           i / (ih * iw), i % (ih * iw));
        }
    double *bank = malloc(c * k * k * sizeof *bank);
    if (!bank) {
        convpop_free(pop);
        return bn_fail(err, "out of memory for %zu filters", c);
    }
    convpop_filters(c, k, seed, bank);
    for (size_t s = 0; s < m; s++) {
        const double *im = img + s * ih * iw;
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++) {
                double *row = pop->x + ((s * h + y) * w + x) * c;
                for (size_t f = 0; f < c; f++) {
                    const double *wf = bank + f * k * k;
                    double acc = 0.0;
                    for (size_t u = 0; u < k; u++)
                        for (size_t v = 0; v < k; v++)
                            acc += wf[u * k + v] * im[(y + u) * iw + x + v];
                    row[f] = acc;
                }
            }
    }
    if (filters)
        memcpy(filters, bank, c * k * k * sizeof *filters);
    free(bank);
    finish_pop(pop);
    return 0;
}

int convpop_field(size_t m, size_t h, size_t w, size_t c,
                  const convpop_channel *ch, uint64_t seed, convpop_t *pop,
                  bn_error *err)
{
    memset(pop, 0, sizeof *pop);
    for (size_t f = 0; f < c; f++) {
        if (!(ch[f].r >= -1.0 && ch[f].r <= 1.0))
            return bn_fail(err, "channel %zu: r must be in [-1, 1], got %g",
                           f, ch[f].r);
        if (!isfinite(ch[f].mean) || !isfinite(ch[f].sd) || ch[f].sd < 0.0)
            return bn_fail(err, "channel %zu: mean must be finite and sd "
                                "finite and >= 0",
                           f);
    }
    if (alloc_pop(pop, m, c, h, w, err) != 0)
        return -1;
    double *z = malloc(h * w * sizeof *z);
    if (!z) {
        convpop_free(pop);
        return bn_fail(err, "out of memory for a %zu x %zu map", h, w);
    }
    pcg32_t rng;
    pcg32_seed(&rng, seed, PCG32_INITSEQ_CONV_FIELD);
    for (size_t s = 0; s < m; s++)
        for (size_t f = 0; f < c; f++) {
            double r = ch[f].r, sr = sqrt(1.0 - r * r);
            for (size_t i = 0; i < h * w; i++) {
                double e = convpop_uniform(&rng);
                e += convpop_uniform(&rng);
                z[i] = e + convpop_uniform(&rng);
            }
            /* Along each row, then down each column: each pass keeps the
             * variance (r^2 + s^2 = 1) and multiplies the correlation at
             * lag d along its axis by r^d. */
            for (size_t y = 0; y < h; y++)
                for (size_t x = 1; x < w; x++)
                    z[y * w + x] = r * z[y * w + x - 1] + sr * z[y * w + x];
            for (size_t y = 1; y < h; y++)
                for (size_t x = 0; x < w; x++)
                    z[y * w + x] = r * z[(y - 1) * w + x] + sr * z[y * w + x];
            for (size_t i = 0; i < h * w; i++)
                pop->x[(s * h * w + i) * c + f] = ch[f].mean + ch[f].sd * z[i];
        }
    free(z);
    finish_pop(pop);
    return 0;
}

void convpop_free(convpop_t *pop)
{
    free(pop->x);
    free(pop->group);
    free(pop->mean);
    pop->x = NULL;
    pop->group = NULL;
    pop->mean = pop->var = NULL;
}

int convpop_order_groups(size_t n, const size_t *group, size_t g,
                         uint64_t seed, size_t *perm, bn_error *err)
{
    if (g < 1)
        return bn_fail(err, "an order of whole groups needs a group");
    size_t *start = calloc(g + 1, sizeof *start);
    size_t *ids = malloc(g * sizeof *ids);
    pcg32_t rng;
    pcg32_seed(&rng, seed, PCG32_INITSEQ_SHUFFLE);
    int rc = -1;
    if (!start || !ids) {
        bn_fail(err, "out of memory for an order of %zu groups", g);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (group[i] >= g) {
            bn_fail(err, "row %zu: group %zu is not below %zu", i, group[i],
                    g);
            goto done;
        }
        start[group[i] + 1]++;
    }
    for (size_t q = 0; q < g; q++) {
        if (start[q + 1] == 0) {
            bn_fail(err, "group %zu has no rows", q);
            goto done;
        }
        start[q + 1] += start[q];
    }
    /* Rows grouped by a stable counting sort, so each group keeps its
     * enumerated order; then the groups are dealt out shuffled. */
    size_t *fill = malloc(g * sizeof *fill);
    if (!fill) {
        bn_fail(err, "out of memory for an order of %zu groups", g);
        goto done;
    }
    memcpy(fill, start, g * sizeof *fill);
    size_t *sorted = malloc(n * sizeof *sorted);
    if (!sorted) {
        free(fill);
        bn_fail(err, "out of memory for an order of %zu rows", n);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        sorted[fill[group[i]]++] = i;
    free(fill);
    for (size_t q = 0; q < g; q++)
        ids[q] = q;
    rand_shuffle(&rng, ids, g);
    size_t t = 0;
    for (size_t q = 0; q < g; q++)
        for (size_t i = start[ids[q]]; i < start[ids[q] + 1]; i++)
            perm[t++] = sorted[i];
    free(sorted);
    rc = 0;
done:
    free(start);
    free(ids);
    return rc;
}

int convpop_effective_rows(const double *x, size_t n, size_t c,
                           size_t hw, size_t channel, double v, size_t b,
                           convpop_neff *out, bn_error *err)
{
    memset(out, 0, sizeof *out);
    size_t m = hw ? n / hw : 0;
    if (hw < 1 || n % hw != 0 || m < 2)
        return bn_fail(err, "%zu rows are not at least two samples of %zu",
                       n, hw);
    if (b < 1 || b >= m)
        return bn_fail(err, "batches of whole samples must hold 1 to %zu "
                            "of the %zu samples, got %zu",
                       m - 1, m, b);
    if (channel >= c)
        return bn_fail(err, "no channel %zu (the maps have %zu)", channel,
                       c);
    double *g = malloc(m * sizeof *g);
    if (!g)
        return bn_fail(err, "out of memory for %zu sample means", m);
    for (size_t s = 0; s < m; s++) {
        double unused;
        pop_moments(hw, c, x + s * hw * c + channel, &g[s], &unused);
    }
    double gm;
    pop_moments(m, 1, g, &gm, &out->s2);
    free(g);
    double nd = (double)n, cnt = (double)(b * hw);
    out->v = v;
    out->count = cnt;
    out->var_batch = out->s2 / (double)b * (double)(m - b) / (double)(m - 1);
    out->var_iid = v / cnt * (nd - cnt) / (nd - 1.0);
    /* b < m, so n - cnt > 0 and the corrected count is finite. */
    out->count_fpc = cnt * (nd - 1.0) / (nd - cnt);
    if (out->var_batch > 0.0) {
        out->n_eff = v / out->var_batch;
        out->ratio = out->var_iid / out->var_batch;
    } else if (v > 0.0) {
        out->n_eff = INFINITY;
        out->ratio = INFINITY;
    } else {
        out->n_eff = out->count_fpc;
        out->ratio = 1.0;
    }
    return 0;
}

int convpop_effective(const convpop_t *pop, size_t b, size_t channel,
                      convpop_neff *out, bn_error *err)
{
    if (channel >= pop->c) {
        memset(out, 0, sizeof *out);
        return bn_fail(err, "no channel %zu (the maps have %zu)", channel,
                       pop->c);
    }
    return convpop_effective_rows(pop->x, pop->n, pop->c, pop->h * pop->w,
                                  channel, pop->var[channel], b, out, err);
}

int convpop_take(convpop_t *cp, const char *const *names, pop_t *out,
                 bn_error *err)
{
    memset(out, 0, sizeof *out);
    out->n = cp->n;
    out->f = cp->c;
    out->names = calloc(cp->c, sizeof *out->names);
    int bad = !out->names;
    for (size_t j = 0; !bad && j < cp->c; j++) {
        size_t len = strlen(names[j]) + 1;
        out->names[j] = malloc(len);
        bad = !out->names[j];
        if (!bad)
            memcpy(out->names[j], names[j], len);
    }
    if (bad) {
        convpop_free(cp);
        pop_free(out);
        return bn_fail(err, "out of memory for %zu channel names", cp->c);
    }
    out->x = cp->x;
    cp->x = NULL;
    out->sample_rows = cp->h * cp->w;
    convpop_free(cp);
    /* The same pop_moments as the maps' own truth, so the same bits. */
    if (pop_truth(out, err) != 0) {
        pop_free(out);
        return -1;
    }
    return 0;
}
