/* Batch compositions and the range of each row's outputs over them
 * (compose.h): the batches a batch-dependence score runs a model on. */
#include "model/compose.h"

#include <stdlib.h>
#include <string.h>

#include "base/pcg32.h"
#include "base/rand.h"

/* C(n, k), or cap + 1 once it passes cap. C(n, i) grows with i up to
 * n / 2, so the loop may stop at the first value past the cap. */
static size_t binomial_capped(size_t n, size_t k, size_t cap)
{
    if (k > n - k)
        k = n - k;
    size_t c = 1;
    for (size_t i = 0; i < k; i++) {
        if (c > SIZE_MAX / (n - i))
            return cap + 1;
        c = c * (n - i) / (i + 1); /* exact: C(n, i) (n - i) / (i + 1) */
        if (c > cap)
            return cap + 1;
    }
    return c;
}

size_t compose_batches(size_t n, size_t b, size_t samples, int *enumerated)
{
    *enumerated = 0;
    if (b < 2 || b > n)
        return 0;
    size_t per = n / b;
    size_t sampled = samples > SIZE_MAX / per ? SIZE_MAX : samples * per;
    size_t all = binomial_capped(n, b, sampled);
    if (all <= sampled) {
        *enumerated = 1;
        return all;
    }
    return sampled;
}

/* Every b-subset of 0..n-1 in lexicographic order. */
static int each_subset(size_t n, size_t b, size_t *rows, compose_fn fn,
                       void *ctx, bn_error *err)
{
    for (size_t i = 0; i < b; i++)
        rows[i] = i;
    for (;;) {
        if (fn(ctx, b, rows, err) != 0)
            return -1;
        size_t i = b;
        while (i > 0 && rows[i - 1] == n - b + i - 1)
            i--;
        if (i == 0)
            return 0;
        rows[i - 1]++;
        for (size_t j = i; j < b; j++)
            rows[j] = rows[j - 1] + 1;
    }
}

static int each_shuffle(size_t n, size_t b, size_t samples, uint64_t seed,
                        size_t *rows, compose_fn fn, void *ctx, bn_error *err)
{
    pcg32_t rng;
    pcg32_seed(&rng, seed, PCG32_INITSEQ_COMPOSE);
    for (size_t i = 0; i < n; i++)
        rows[i] = i;
    for (size_t m = 0; m < samples; m++) {
        rand_shuffle(&rng, rows, n);
        for (size_t k = 0; k + b <= n; k += b)
            if (fn(ctx, b, &rows[k], err) != 0)
                return -1;
    }
    return 0;
}

int compose_each(size_t n, size_t b, size_t samples, uint64_t seed,
                 compose_fn fn, void *ctx, bn_error *err)
{
    int enumerated;
    if (compose_batches(n, b, samples, &enumerated) == 0)
        return 0;
    size_t *rows = malloc(n * sizeof *rows);
    if (!rows)
        return bn_fail(err, "out of memory");
    int rc = enumerated ? each_subset(n, b, rows, fn, ctx, err)
                        : each_shuffle(n, b, samples, seed, rows, fn, ctx,
                                       err);
    free(rows);
    return rc;
}

int compose_spread_init(compose_spread *s, size_t n, size_t w)
{
    memset(s, 0, sizeof *s);
    s->n = n, s->w = w;
    size_t nw = (n ? n : 1) * (w ? w : 1);
    s->lo = malloc(4 * nw * sizeof *s->lo);
    s->seen = calloc(n ? n : 1, sizeof *s->seen);
    if (!s->lo || !s->seen) {
        compose_spread_free(s);
        return -1;
    }
    s->hi = s->lo + nw, s->elo = s->lo + 2 * nw, s->ehi = s->lo + 3 * nw;
    return 0;
}

void compose_spread_free(compose_spread *s)
{
    free(s->lo);
    free(s->seen);
    memset(s, 0, sizeof *s);
}

void compose_spread_add(compose_spread *s, size_t r, const double *y,
                        const double *e)
{
    double *lo = s->lo + r * s->w, *hi = s->hi + r * s->w;
    double *elo = s->elo + r * s->w, *ehi = s->ehi + r * s->w;
    int first = s->seen[r]++ == 0;
    for (size_t j = 0; j < s->w; j++) {
        if (first) {
            lo[j] = hi[j] = y[j];
            elo[j] = ehi[j] = e[j];
            continue;
        }
        /* A NaN spreads into the range, so that the finite check after
         * the run catches it rather than a comparison hiding it. */
        lo[j] = y[j] < lo[j] || y[j] != y[j] ? y[j] : lo[j];
        hi[j] = y[j] > hi[j] || y[j] != y[j] ? y[j] : hi[j];
        elo[j] = e[j] < elo[j] || e[j] != e[j] ? e[j] : elo[j];
        ehi[j] = e[j] > ehi[j] || e[j] != e[j] ? e[j] : ehi[j];
    }
}

void compose_spread_scores(const compose_spread *s, double *worst,
                           double *mean, double *worst_eval)
{
    double w = 0.0, we = 0.0, sum = 0.0;
    size_t rows = 0;
    for (size_t r = 0; r < s->n; r++) {
        if (s->seen[r] < 2)
            continue;
        double row = 0.0;
        for (size_t j = 0; j < s->w; j++) {
            double d = s->hi[r * s->w + j] - s->lo[r * s->w + j];
            double de = s->ehi[r * s->w + j] - s->elo[r * s->w + j];
            row = d > row || d != d ? d : row;
            we = de > we || de != de ? de : we;
        }
        w = row > w || row != row ? row : w;
        sum += row;
        rows++;
    }
    *worst = w;
    *mean = rows ? sum / (double)rows : 0.0;
    *worst_eval = we;
}
