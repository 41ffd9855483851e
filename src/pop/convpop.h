/*
 * A population of feature maps (issue 14, docs/convolution.md): M samples,
 * each C channels of H x W, laid out for the existing layer so that batch
 * norm per channel over every sample and position (PyTorch's BatchNorm2d)
 * is exactly bn.c on these rows:
 *     row (s, y, x) = (s H + y) W + x,   feature c = channel c,
 *     group[row] = s (the sample the row belongs to).
 * A batch of B whole samples is then B H W consecutive rows of an order
 * that keeps each sample's rows together (convpop_order_groups).
 *
 * Two sources, both reproducible to the bit on every platform:
 *   convpop_from_images  the caller's images through C filters of k x k,
 *                        'valid' cross-correlation, weights from PCG32
 *                        (seed, PCG32_INITSEQ_CONV_FILTERS);
 *   convpop_field        maps with a separable AR(1) correlation r between
 *                        neighbours, innovations from PCG32(seed,
 *                        PCG32_INITSEQ_CONV_FIELD).
 * No transcendental function is used: uniforms come from integer
 * arithmetic and one exact scaling, the field's innovations are sums of
 * three uniforms, and the only other operations are +, *, / and sqrt,
 * which IEEE 754 rounds correctly everywhere.
 *
 * convpop_effective gives the effective number of values behind a batch
 * statistic of B whole samples, against the count B H W.
 */
#ifndef BN_CONVPOP_H
#define BN_CONVPOP_H

#include <stdint.h>

#include "base/common.h"
#include "base/pcg32.h"
#include "pop/pop.h"

typedef struct {
    size_t m, c, h, w; /* samples, channels, map height and width */
    size_t n;          /* rows: m h w */
    double *x;         /* n x c, row-major, rows in the layout above */
    size_t *group;     /* the sample of each row */
    double *mean; /* c values: per channel over all n rows */
    double *var;  /* c values: the population variance, divisor n */
} convpop_t;

/* One channel of a generated population: AR(1) coefficient r between
 * horizontal and between vertical neighbours (in [-1, 1]), then the
 * stationary unit-variance field z becomes mean + sd z. */
typedef struct {
    double r, mean, sd;
} convpop_channel;

/* The largest map side and filter size accepted; a bound, not a need. */
#define CONVPOP_MAX_SIDE 4096u
#define CONVPOP_MAX_KERNEL 15u

/* A PCG32 draw u as the double (2u + 1 - 2^32) 2^-32: the 2^32 odd
 * multiples of 2^-32 in (-1, 1), equally likely. Mean exactly 0, variance
 * (1 - 2^-64) / 3. */
double convpop_uniform(pcg32_t *rng);

/* The filter bank: c filters of k x k, filter f's weight (u, v) at
 * w[(f k + u) k + v], each convpop_uniform / k, so uniform on
 * (-1/k, 1/k) like PyTorch's default Conv2d initialisation for one input
 * channel (bound 1/sqrt(fan_in)); drawn filter by filter, row by row. */
void convpop_filters(size_t c, size_t k, uint64_t seed, double *w);

/* m images of ih x iw pixels (img[(s ih + y) iw + x]) through the bank
 * of c filters of k x k for seed: H = ih - k + 1, W = iw - k + 1 and
 *     map[s][f][y][x] = sum_{u, v < k} w_f[u][v] img[s][y + u][x + v]
 * summed u-major, no bias (batch norm removes it). filters (c k k values)
 * receives the weights when not NULL. */
int convpop_from_images(const double *img, size_t m, size_t ih, size_t iw,
                        size_t c, size_t k, uint64_t seed, convpop_t *pop,
                        double *filters, bn_error *err);

/* m samples of c channels of h x w, channel f from ch[f]. Per sample and
 * channel (samples outer, so a population of m samples is the first m of
 * a larger one), e[y][x] = the sum of three convpop_uniform draws taken
 * row by row (variance 1 - 2^-64, on (-3, 3), excess kurtosis -0.4); then
 *     a[y][0] = e[y][0],  a[y][x] = r a[y][x-1] + s e[y][x]
 *     z[0][x] = a[0][x],  z[y][x] = r z[y-1][x] + s a[y][x]
 * with s = sqrt(1 - r^2), so that Corr(z[y][x], z[y'][x']) =
 * r^|y-y'| r^|x-x'| and every z has the innovations' variance. */
int convpop_field(size_t m, size_t h, size_t w, size_t c,
                  const convpop_channel *ch, uint64_t seed, convpop_t *pop,
                  bn_error *err);

void convpop_free(convpop_t *pop);

/* An order that shuffles whole groups: the group indices 0..G-1 are
 * shuffled by rand_shuffle (gsl_ran_shuffle's algorithm) from PCG32(seed,
 * PCG32_INITSEQ_SHUFFLE) and each group's rows follow in their
 * enumerated order. With groups of H W rows, consecutive chunks of B H W
 * rows are batches of B whole samples; with one row per group it is the
 * `shuffled` order. group[i] < g for every row; every group must have a
 * row. */
int convpop_order_groups(size_t n, const size_t *group, size_t g,
                         uint64_t seed, size_t *perm, bn_error *err);

/* The information in the batch mean of one channel, for batches of b whole
 * samples drawn without replacement (every ordering of the samples equally
 * likely; docs/convolution.md). */
typedef struct {
    double v;         /* the channel's variance over all rows, divisor n */
    double s2;        /* variance of the m per-sample means, divisor m */
    double var_batch; /* exact variance of the batch mean over orderings:
                         (s2 / b) (m - b) / (m - 1) */
    double var_iid;   /* what b h w rows drawn without replacement would
                         give: v / (b h w) (n - b h w) / (n - 1) */
    double count;     /* b h w */
    double count_fpc; /* v / var_iid: the count, corrected */
    double n_eff;     /* v / var_batch: the effective count */
    double ratio;     /* n_eff / count_fpc = var_iid / var_batch; below 1
                         the count overstates the information */
} convpop_neff;

/* For 1 <= b < m. When var_batch is 0 (every sample has the same mean)
 * n_eff and ratio are +infinity, unless v is 0 too (a constant channel),
 * where every batch mean is exact either way: n_eff = count_fpc, ratio 1. */
int convpop_effective(const convpop_t *pop, size_t b, size_t channel,
                      convpop_neff *out, bn_error *err);
/* The same on n rows x c channels laid out as above, hw rows a sample, v
 * the channel's variance over the n rows (divisor n): what a population
 * of pop.h with sample_rows = hw holds. hw = 1 is plain rows, where the
 * ratio is 1. */
int convpop_effective_rows(const double *x, size_t n, size_t c,
                           size_t hw, size_t channel, double v, size_t b,
                           convpop_neff *out, bn_error *err);

/* The maps as a population of pop.h (sample_rows = H W, features named
 * names[0..c-1], the truth computed as pop_truth does): cp's rows are
 * moved into out and cp is freed, whatever happens (out is freed with
 * pop_free on failure too). */
int convpop_take(convpop_t *cp, const char *const *names, pop_t *out,
                 bn_error *err);

#endif
