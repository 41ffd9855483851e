/*
 * The arithmetic that must round the same way on every platform. Every
 * number that reaches a committed file passes through IEEE double
 * operations only: + - * / sqrt, the exact fma, frexp, ldexp and floor,
 * which the C standard and IEEE 754 define to the bit. Nothing here calls
 * libm's log, exp or pow, whose last bit depends on the library and the
 * CPU, nor uses long double, whose width depends on the architecture. The
 * tests compare each function with GSL, with long double and with closed
 * forms, and state the ulp bound each one meets.
 *
 * That promise needs double arithmetic to be done in double: on i386 the
 * x87 unit keeps 80-bit intermediates (FLT_EVAL_METHOD 2), so the build
 * refuses it and asks for SSE2.
 */
#ifndef BN_NUM_H
#define BN_NUM_H

#include <float.h>
#include <stddef.h>

#if defined(__i386__) && !defined(__SSE2_MATH__)
#error "bnstudy needs SSE2 double arithmetic on i386: build with CFLAGS='-O2 -msse2 -mfpmath=sse'"
#elif !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "bnstudy needs FLT_EVAL_METHOD 0 (double evaluated in double, not wider)"
#endif

/* A double-double: the unevaluated sum hi + lo with |lo| <= ulp(hi) / 2,
 * about 106 bits of precision from double operations and fma alone. */
typedef struct {
    double hi, lo;
} num_dd;

num_dd num_dd_make(double a);
num_dd num_dd_add(num_dd a, num_dd b);
num_dd num_dd_sub(num_dd a, num_dd b);
num_dd num_dd_mul(num_dd a, num_dd b);
num_dd num_dd_div(num_dd a, num_dd b);
/* hi + lo rounded to the nearest double. */
double num_dd_value(num_dd a);

/* The natural logarithm and the exponential, within 0.501 ulp of the true
 * value (nearly always the correctly rounded one; the tests measure how
 * often not) with IEEE special cases: num_log of a negative or NaN is NaN,
 * of 0 is -inf, of +inf is +inf; num_exp overflows to +inf above
 * log(DBL_MAX) and underflows to 0 below log of half the smallest
 * subnormal. */
double num_log(double x);
double num_exp(double x);
/* v[i] = num_exp(v[i]) (num_log(v[i])) for i < n, with its bits, two at
 * a time. */
void num_exp_array(double *v, size_t n);
void num_log_array(double *v, size_t n);

/* cos(pi x) for finite x, within 1 ulp (a double-double Taylor series on
 * [0, 1/4] after exact reductions by the period and the symmetries), the
 * same bits everywhere, where libm's cos is neither; NaN for a non-finite
 * x. The classifier's cosine learning-rate schedule needs it. */
double num_cos_pi(double x);

/* 1/k! for k = 6 .. 5 + NUM_INV_FACT, the tail of num_exp's series,
 * each the correctly rounded quotient 1 / k!. */
#define NUM_INV_FACT 12
extern const double num_inv_fact[NUM_INV_FACT];

/* 2 / i for i = 27, 25, .. 9, the tail of num_log's series, each the
 * correctly rounded quotient. */
#define NUM_TWO_OVER_ODD 10
extern const double num_two_over_odd[NUM_TWO_OVER_ODD];

/* Phi^-1(p), the standard normal quantile, by Wichura's algorithm AS 241
 * (PPND16) with num_log: within 8 ulp of the true quantile (not correctly
 * rounded, but the same bits everywhere); -inf at 0, +inf at 1, NaN
 * outside [0, 1]. */
double num_norm_inv(double p);

/* Mean and sum of squared deviations of n values spaced stride apart: the
 * mean by Neumaier's compensated sum, the squares by the corrected two-pass
 * formula, each summed in index order. Exact to rounding even when the
 * mean dwarfs the spread; divide ss by n or n - 1 for a variance. */
void num_moments(size_t n, size_t stride, const double *v, double *mean,
                 double *ss);
/* num_moments of each of nc columns of n rows at once: row i starts at
 * v + rows[i] stride (v + i stride when rows is NULL), column j is its
 * j-th value; mean and ss receive nc values each. */
void num_moments_cols(size_t n, size_t nc, size_t stride, const double *v,
                      const size_t *rows, double *mean, double *ss);

/* Sort ascending (a total order: -0 before +0, NaN last). */
void num_sort(double *v, size_t n);

/* num_quantile_sorted of each of q[0..nq-1] (ascending is quickest) into
 * out, of n >= 1 values in any order, without sorting them: each pair of
 * order statistics a quantile takes is selected in the order num_sort
 * sorts by, so the results are the bits sort and interpolation give
 * (a NaN of its sign). v is left as it was. -1 when out of memory. */
int num_quantiles(double *v, size_t n, const double *q, size_t nq,
                  double *out);

/* The q-quantile of n >= 1 sorted values by linear interpolation between
 * the order statistics at (n - 1) q, as GSL's
 * gsl_stats_quantile_from_sorted_data defines it, rounded without
 * contraction. */
double num_quantile_sorted(const double *v, size_t n, double q);

#endif
