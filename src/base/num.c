/*
 * The platform-independent arithmetic of num.h. Each function is built
 * from operations IEEE 754 rounds exactly once (+ - * / sqrt fma) and from
 * frexp, ldexp and floor, which are exact; -ffp-contract=off keeps the
 * compiler from fusing what is written as two roundings into one. The
 * series are cut where the next term is below 2^-70 of the result, and
 * their leading terms are summed in double-double, so the one rounding
 * left that matters is the last.
 */
#include "base/num.h"

#include "base/pair.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- double-double (Dekker, Knuth; products through fma) ---- */

static num_dd two_sum(double a, double b)
{
    double s = a + b, bb = s - a;
    return (num_dd){s, (a - (s - bb)) + (b - bb)};
}

/* Only for |a| >= |b| (or a == 0). */
static num_dd fast_two_sum(double a, double b)
{
    double s = a + b;
    return (num_dd){s, b - (s - a)};
}

static num_dd two_prod(double a, double b)
{
    double p = a * b;
    return (num_dd){p, fma(a, b, -p)};
}

num_dd num_dd_make(double a)
{
    return (num_dd){a, 0.0};
}

/* Inlined even where GCC would not (dd_div and k_ln2 into log's FMA copy
 * below): a call would run the default copy and reach fma through libm,
 * the same bits at a call each. */
#if defined(__GNUC__)
#define NUM_INLINE inline __attribute__((always_inline))
#else
#define NUM_INLINE inline
#endif

/* The operations as inline functions, so that log and exp (the
 * classifier's softmax calls exp for every class of every row) pay no
 * call for each; num_dd_add and the rest are the same code. */
static inline num_dd dd_add(num_dd a, num_dd b)
{
    num_dd s = two_sum(a.hi, b.hi), t = two_sum(a.lo, b.lo);
    s = fast_two_sum(s.hi, s.lo + t.hi);
    return fast_two_sum(s.hi, s.lo + t.lo);
}

static inline num_dd dd_sub(num_dd a, num_dd b)
{
    return dd_add(a, (num_dd){-b.hi, -b.lo});
}

static inline num_dd dd_mul(num_dd a, num_dd b)
{
    num_dd p = two_prod(a.hi, b.hi);
    return fast_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}

static NUM_INLINE num_dd dd_div(num_dd a, num_dd b)
{
    double q1 = a.hi / b.hi;
    num_dd r = dd_sub(a, dd_mul(b, num_dd_make(q1)));
    double q2 = r.hi / b.hi;
    r = dd_sub(r, dd_mul(b, num_dd_make(q2)));
    double q3 = r.hi / b.hi;
    return dd_add(fast_two_sum(q1, q2), num_dd_make(q3));
}

num_dd num_dd_add(num_dd a, num_dd b) { return dd_add(a, b); }
num_dd num_dd_sub(num_dd a, num_dd b) { return dd_sub(a, b); }
num_dd num_dd_mul(num_dd a, num_dd b) { return dd_mul(a, b); }
num_dd num_dd_div(num_dd a, num_dd b) { return dd_div(a, b); }

double num_dd_value(num_dd a)
{
    return a.hi + a.lo;
}

/* ---- log and exp ---- */

/* two_prod's fma is a call into libm on x86-64 unless the compiler may
 * use the FMA instructions, and log and exp (every row of every
 * classifier pass) make several each, with the registers saved around
 * them. Where the CPU has FMA they run a copy compiled for it (GCC's
 * target_clones, chosen once when the program loads): fma is the one
 * correctly rounded IEEE operation either way, and contraction stays off
 * (-ffp-contract=off), so both copies give the same bits. Not with clang
 * (14 emits no symbol for the callers in other files), which calls
 * libm's fma as before. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__FMA__) && defined(__linux__) && !defined(BN_NO_CLONES)
#define NUM_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define NUM_FMA_CLONES
#endif

/* ln 2 = LN2_HI + LN2_LO to 2^-106, and the other constants as the
 * nearest double-doubles to the exact fractions. */
static const num_dd LN2 = {0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56};
static const num_dd TWO_3RDS = {0x1.5555555555555p-1, 0x1.5555555555555p-55};
static const num_dd TWO_5THS = {0x1.999999999999ap-2, -0x1.999999999999ap-56};
static const num_dd TWO_7THS = {0x1.2492492492492p-2, 0x1.2492492492492p-56};

/* k ln 2 as a double-double, for |k| < 2^11. */
static NUM_INLINE num_dd k_ln2(int k)
{
    num_dd p = two_prod((double)k, LN2.hi);
    return dd_add(p, num_dd_make((double)k * LN2.lo));
}

/* 2 / i for i = 27, 25, .. 9: the tail of log's series, each the
 * correctly rounded quotient (tests/test_num.c divides them again). */
const double num_two_over_odd[NUM_TWO_OVER_ODD] = {
    0x1.2f684bda12f68p-4, 0x1.47ae147ae147bp-4, 0x1.642c8590b2164p-4,
    0x1.8618618618618p-4, 0x1.af286bca1af28p-4, 0x1.e1e1e1e1e1e1ep-4,
    0x1.1111111111111p-3, 0x1.3b13b13b13b14p-3, 0x1.745d1745d1746p-3,
    0x1.c71c71c71c71cp-3,
};

/* frexp, from the bits for a normal x (frexp itself otherwise): x = m
 * 2^k, m in [1/2, 1), exactly. */
static double split_exponent(double x, int *k)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    int be = (int)(u >> 52 & 0x7ff);
    if (be == 0 || be == 0x7ff)
        return frexp(x, k);
    *k = be - 1022;
    u = (u & ~(UINT64_C(0x7ff) << 52)) | UINT64_C(1022) << 52;
    memcpy(&x, &u, sizeof x);
    return x;
}

NUM_FMA_CLONES double num_log(double x)
{
    if (isnan(x) || x < 0.0)
        return x < 0.0 ? NAN : x + x;
    if (x == 0.0)
        return -INFINITY;
    if (isinf(x))
        return x;
    /* x = 2^k m with m in [sqrt(1/2), sqrt(2)): frexp is exact, and so is
     * f = m - 1 (Sterbenz) and the double-double 2 + f. */
    int k;
    double m = split_exponent(x, &k);
    if (m < 0x1.6a09e667f3bcdp-1) {
        m *= 2.0;
        k--;
    }
    double f = m - 1.0;
    num_dd d = two_sum(2.0, f);
    /* log m = 2 atanh(s), s = f / (2 + f), |s| <= 0.1716. */
    num_dd s = dd_div(num_dd_make(f), d);
    num_dd z = dd_mul(s, s);
    /* 2 s^3 (1/3 + z/5 + z^2/7 + ...): the terms from z^3 on are under
     * 1e-7 of the result, so plain double is enough for them; z^14 is the
     * last above 2^-70. */
    double zh = z.hi, t = 2.0 / 29.0;
#pragma GCC unroll 10
    for (int i = 27; i >= 9; i -= 2)
        t = t * zh + num_two_over_odd[(27 - i) / 2];
    num_dd c = dd_add(TWO_7THS, dd_mul(z, num_dd_make(t)));
    c = dd_add(TWO_5THS, dd_mul(z, c));
    c = dd_add(TWO_3RDS, dd_mul(z, c));
    num_dd lm = dd_add((num_dd){2.0 * s.hi, 2.0 * s.lo},
                           dd_mul(dd_mul(z, s), c));
    return num_dd_value(dd_add(k_ln2(k), lm));
}

/* 1/k! for k = 0..5 as double-doubles. */
static const num_dd INV_FACT[] = {
    {1.0, 0.0},
    {1.0, 0.0},
    {0.5, 0.0},
    {0x1.5555555555555p-3, 0x1.5555555555555p-57},
    {0x1.5555555555555p-5, 0x1.5555555555555p-59},
    {0x1.1111111111111p-7, 0x1.1111111111111p-63},
};

/* 1/k! for k = 6..17, each the correctly rounded 1.0 / k! (k! is exact
 * in double up to 18!; tests/test_num.c divides them again). */
const double num_inv_fact[NUM_INV_FACT] = {
    0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-16,
    0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26,
    0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33, 0x1.93974a8c07c9dp-37,
    0x1.ae7f3e733b81fp-41, 0x1.ae7f3e733b81fp-45, 0x1.952c77030ad4ap-49,
};

/* v 2^k, as ldexp gives it: a multiplication by 2^k is one correctly
 * rounded operation, as ldexp's result is, wherever 2^k is a normal
 * double; ldexp itself elsewhere. */
static double times_pow2(double v, int k)
{
    if (k < -1022 || k > 1023)
        return ldexp(v, k);
    uint64_t bits = (uint64_t)(k + 1023) << 52;
    double p;
    memcpy(&p, &bits, sizeof p);
    return v * p;
}

NUM_FMA_CLONES double num_exp(double x)
{
    if (isnan(x))
        return x + x;
    if (x > 0x1.62e42fefa39efp+9) /* the largest double below log(DBL_MAX) */
        return INFINITY;
    if (x < -745.13321910194122) /* log(2^-1075): rounds to 0 */
        return 0.0;
    if (x == 0.0)
        return 1.0; /* what the series below gives; every softmax asks */
    /* x = k ln 2 + r, |r| <= ln 2 / 2 (to rounding), r as a double-double.
     * k = floor(y) for |y| < 1100, by conversion: a libm call less. */
    double y = x * 0x1.71547652b82fep+0 + 0.5;
    int k = (int)y;
    k -= (double)k > y;
    num_dd r = dd_sub(num_dd_make(x), k_ln2(k));
    /* exp r = 1 + r + ... + r^5/120 + r^6 (1/6! + r/7! + ...): the
     * second bracket is under 3e-6 of the result, so double will do; r^17
     * is the last term above 2^-70. */
    double qd = 0.0;
    /* Unrolled: the loops' counting was a fifth of exp's instructions. */
#pragma GCC unroll 12
    for (int i = 17; i >= 6; i--)
        qd = qd * r.hi + num_inv_fact[i - 6];
    num_dd c = num_dd_make(qd);
#pragma GCC unroll 6
    for (int i = 5; i >= 0; i--)
        c = dd_add(dd_mul(c, r), INV_FACT[i]);
    return times_pow2(num_dd_value(c), k);
}

/* ---- exp and log, two at a time ---- */

/* num_exp's and num_log's double-doubles on pairs (pair.h): each lane the scalar
 * operation, so each lane of a result has the scalar function's bits.
 * The one operation pair.h has no packed form of, fma, is made lane by
 * lane (in the FMA copy one instruction a lane, no call). */
typedef struct {
    pair_t hi, lo;
} pair_dd;

static NUM_INLINE pair_t lanes_fma(pair_t a, pair_t b, pair_t c)
{
    return pair_set(fma(pair_lo(a), pair_lo(b), pair_lo(c)),
                    fma(pair_hi(a), pair_hi(b), pair_hi(c)));
}

/* -v exactly, signed zeros included: -0 - v. */
static NUM_INLINE pair_t pair_neg(pair_t v)
{
    return pair_sub(pair_dup(-0.0), v);
}

static NUM_INLINE pair_dd pdd_two_sum(pair_t a, pair_t b)
{
    pair_t s = pair_add(a, b), bb = pair_sub(s, a);
    return (pair_dd){s, pair_add(pair_sub(a, pair_sub(s, bb)),
                                 pair_sub(b, bb))};
}

static NUM_INLINE pair_dd pdd_fast_two_sum(pair_t a, pair_t b)
{
    pair_t s = pair_add(a, b);
    return (pair_dd){s, pair_sub(b, pair_sub(s, a))};
}

static NUM_INLINE pair_dd pdd_add(pair_dd a, pair_dd b)
{
    pair_dd s = pdd_two_sum(a.hi, b.hi), t = pdd_two_sum(a.lo, b.lo);
    s = pdd_fast_two_sum(s.hi, pair_add(s.lo, t.hi));
    return pdd_fast_two_sum(s.hi, pair_add(s.lo, t.lo));
}

static NUM_INLINE pair_dd pdd_mul(pair_dd a, pair_dd b)
{
    pair_t p = pair_mul(a.hi, b.hi);
    pair_t e = lanes_fma(a.hi, b.hi, pair_neg(p));
    return pdd_fast_two_sum(
        p, pair_add(e, pair_add(pair_mul(a.hi, b.lo), pair_mul(a.lo, b.hi))));
}

static NUM_INLINE pair_dd pdd_make(pair_t a)
{
    return (pair_dd){a, pair_dup(0.0)};
}

static NUM_INLINE pair_dd pdd_sub(pair_dd a, pair_dd b)
{
    return pdd_add(a, (pair_dd){pair_neg(b.hi), pair_neg(b.lo)});
}

static NUM_INLINE pair_dd pdd_div(pair_dd a, pair_dd b)
{
    pair_t q1 = pair_div(a.hi, b.hi);
    pair_dd r = pdd_sub(a, pdd_mul(b, pdd_make(q1)));
    pair_t q2 = pair_div(r.hi, b.hi);
    r = pdd_sub(r, pdd_mul(b, pdd_make(q2)));
    pair_t q3 = pair_div(r.hi, b.hi);
    return pdd_add(pdd_fast_two_sum(q1, q2), pdd_make(q3));
}

/* k_ln2 on each lane. */
static NUM_INLINE pair_dd pdd_k_ln2(pair_t k)
{
    pair_t ph = pair_mul(k, pair_dup(LN2.hi));
    pair_dd p = {ph, lanes_fma(k, pair_dup(LN2.hi), pair_neg(ph))};
    return pdd_add(p, pdd_make(pair_mul(k, pair_dup(LN2.lo))));
}

static NUM_INLINE pair_dd pdd_dup(num_dd a)
{
    return (pair_dd){pair_dup(a.hi), pair_dup(a.lo)};
}

/* num_log of two normal positive x, as the scalar function's operations
 * on each lane. */
static NUM_INLINE void log_pair(double *v)
{
    int k0, k1;
    double m0 = split_exponent(v[0], &k0), m1 = split_exponent(v[1], &k1);
    if (m0 < 0x1.6a09e667f3bcdp-1) {
        m0 *= 2.0;
        k0--;
    }
    if (m1 < 0x1.6a09e667f3bcdp-1) {
        m1 *= 2.0;
        k1--;
    }
    pair_t f = pair_sub(pair_set(m0, m1), pair_dup(1.0));
    pair_dd d = pdd_two_sum(pair_dup(2.0), f);
    pair_dd s = pdd_div(pdd_make(f), d);
    pair_dd z = pdd_mul(s, s);
    pair_t t = pair_dup(2.0 / 29.0);
#pragma GCC unroll 10
    for (int i = 27; i >= 9; i -= 2)
        t = pair_add(pair_mul(t, z.hi),
                     pair_dup(num_two_over_odd[(27 - i) / 2]));
    pair_dd c = pdd_add(pdd_dup(TWO_7THS), pdd_mul(z, pdd_make(t)));
    c = pdd_add(pdd_dup(TWO_5THS), pdd_mul(z, c));
    c = pdd_add(pdd_dup(TWO_3RDS), pdd_mul(z, c));
    pair_dd lm = pdd_add((pair_dd){pair_mul(pair_dup(2.0), s.hi),
                                   pair_mul(pair_dup(2.0), s.lo)},
                         pdd_mul(pdd_mul(z, s), c));
    pair_dd y = pdd_add(pdd_k_ln2(pair_set((double)k0, (double)k1)), lm);
    pair_store(v, pair_add(y.hi, y.lo));
}

NUM_FMA_CLONES void num_log_array(double *v, size_t n)
{
    size_t i = 0;
    for (; i + 1 < n; i += 2) {
        if (v[i] >= DBL_MIN && v[i] <= DBL_MAX && v[i + 1] >= DBL_MIN &&
            v[i + 1] <= DBL_MAX) {
            log_pair(&v[i]);
        } else {
            v[i] = num_log(v[i]);
            v[i + 1] = num_log(v[i + 1]);
        }
    }
    if (i < n)
        v[i] = num_log(v[i]);
}

/* A lane's k of num_exp (floor(x / ln 2 + 1/2), by conversion) as a
 * double, and 2^k. */
static NUM_INLINE double exp_k(double y, double *pow2)
{
    int k = (int)y;
    k -= (double)k > y;
    uint64_t bits = (uint64_t)(k + 1023) << 52;
    memcpy(pow2, &bits, sizeof *pow2);
    return (double)k;
}

/* num_exp of *a and *b, two x in [-708, 708] but 0, where k is within
 * 2^k's normal range (times_pow2's multiplication), as the scalar
 * function's operations on each lane. */
static NUM_INLINE void exp_pair(double *a, double *b)
{
    pair_t x = pair_set(*a, *b);
    pair_t y = pair_add(pair_mul(x, pair_dup(0x1.71547652b82fep+0)),
                        pair_dup(0.5));
    double p0, p1;
    double k0 = exp_k(pair_lo(y), &p0), k1 = exp_k(pair_hi(y), &p1);
    pair_dd r = pdd_sub(pdd_make(x), pdd_k_ln2(pair_set(k0, k1)));
    pair_t qd = pair_dup(0.0);
#pragma GCC unroll 12
    for (int i = 17; i >= 6; i--)
        qd = pair_add(pair_mul(qd, r.hi), pair_dup(num_inv_fact[i - 6]));
    pair_dd c = pdd_make(qd);
#pragma GCC unroll 6
    for (int i = 5; i >= 0; i--)
        c = pdd_add(pdd_mul(c, r), pdd_dup(INV_FACT[i]));
    pair_t e = pair_mul(pair_add(c.hi, c.lo), pair_set(p0, p1));
    *a = pair_lo(e);
    *b = pair_hi(e);
}

/* The arguments that need the series are paired wherever they are, so
 * that a softmax's 0 (its largest logit's, 1 at once as num_exp gives
 * it) takes no lane; NaN, the infinities and the arguments beyond the
 * paired range go one at a time. */
NUM_FMA_CLONES void num_exp_array(double *v, size_t n)
{
    double *wait = NULL; /* a paired argument without its partner yet */
    for (size_t i = 0; i < n; i++) {
        if (v[i] == 0.0) {
            v[i] = 1.0;
        } else if (!(fabs(v[i]) <= 708.0)) {
            v[i] = num_exp(v[i]);
        } else if (!wait) {
            wait = &v[i];
        } else {
            exp_pair(wait, &v[i]);
            wait = NULL;
        }
    }
    if (wait)
        *wait = num_exp(*wait);
}

/* ---- cos(pi x) ---- */

/* pi to 2^-106. */
static const num_dd PI = {0x1.921fb54442d18p+1, 0x1.1a62633145c07p-53};

/* cos t (sine 0) or sin t (sine 1) for |t| <= pi/4, in double-double:
 * Taylor terms up to t^26 / 26!, below 2^-110 there. */
static double cos_sin_dd(num_dd t, int sine)
{
    num_dd t2 = num_dd_mul(t, t), sum = num_dd_make(0.0);
    /* Horner from the highest term: 1/k! for the powers k of the kind. */
    for (int k = 26 - sine; k >= 0; k -= 2) {
        num_dd fact = num_dd_make(1.0);
        for (int i = 2; i <= k; i++)
            fact = num_dd_mul(fact, num_dd_make((double)i));
        num_dd c = num_dd_div(num_dd_make((k / 2) % 2 ? -1.0 : 1.0), fact);
        sum = num_dd_add(num_dd_mul(sum, t2), c);
    }
    return num_dd_value(sine ? num_dd_mul(sum, t) : sum);
}

double num_cos_pi(double x)
{
    if (!isfinite(x))
        return NAN;
    /* The period 2, then the symmetries, each step exact. */
    x = fabs(x);
    x -= 2.0 * floor(x / 2.0);
    if (x > 1.0)
        x = 2.0 - x;
    double sign = 1.0;
    if (x > 0.5) {
        sign = -1.0;
        x = 1.0 - x;
    }
    /* cos(pi x) = sin(pi (1/2 - x)) past 1/4. */
    int sine = x > 0.25;
    num_dd t = num_dd_mul(PI, num_dd_make(sine ? 0.5 - x : x));
    return sign * cos_sin_dd(t, sine);
}

/* ---- the normal quantile ---- */

/* c[0] + c[1] x + ... + c[n-1] x^(n-1) by Horner's rule. */
static double horner(const double *c, int n, double x)
{
    double y = c[n - 1];
    for (int i = n - 2; i >= 0; i--)
        y = y * x + c[i];
    return y;
}

/* Wichura (1988), Algorithm AS 241, Applied Statistics 37, 477-484: the
 * PPND16 coefficients, for |p - 1/2| <= 0.425, then r = sqrt(-log(min(p,
 * 1-p))) up to 5, then beyond. */
static const double AS241_A[8] = {
    3.387132872796366608,   133.14166789178437745,  1971.5909503065514427,
    13731.693765509461125,  45921.953931549871457,  67265.770927008700853,
    33430.575583588128105,  2509.0809287301226727};
static const double AS241_B[8] = {
    1.0,                   42.313330701600911252,  687.1870074920579083,
    5394.1960214247511077, 21213.794301586595867,  39307.89580009271061,
    28729.085735721942674, 5226.495278852854561};
static const double AS241_C[8] = {
    1.42343711074968357734,  4.6303378461565452959,
    5.7694972214606914055,   3.64784832476320460504,
    1.27045825245236838258,  0.24178072517745061177,
    0.0227238449892691845833, 7.7454501427834140764e-4};
static const double AS241_D[8] = {
    1.0,                     2.05319162663775882187,
    1.6763848301838038494,   0.68976733498510000455,
    0.14810397642748007459,  0.0151986665636164571966,
    5.475938084995344946e-4, 1.05075007164441684324e-9};
static const double AS241_E[8] = {
    6.6579046435011037772,    5.4637849111641143699,
    1.7848265399172913358,    0.29656057182850489123,
    0.026532189526576123093,  0.0012426609473880784386,
    2.71155556874348757815e-5, 2.01033439929228813265e-7};
static const double AS241_F[8] = {
    1.0,                      0.59983220655588793769,
    0.13692988092273580531,   0.0148753612908506148525,
    7.868691311456132591e-4,  1.8463183175100546818e-5,
    1.4215117583164458887e-7, 2.04426310338993978564e-15};

double num_norm_inv(double p)
{
    if (!(p >= 0.0 && p <= 1.0))
        return NAN;
    if (p == 0.0)
        return -INFINITY;
    if (p == 1.0)
        return INFINITY;
    double q = p - 0.5;
    if (fabs(q) <= 0.425) {
        double r = 0.180625 - q * q;
        return q * (horner(AS241_A, 8, r) / horner(AS241_B, 8, r));
    }
    double r = sqrt(-num_log(q < 0.0 ? p : 1.0 - p)), x;
    if (r <= 5.0) {
        r -= 1.6;
        x = horner(AS241_C, 8, r) / horner(AS241_D, 8, r);
    } else {
        r -= 5.0;
        x = horner(AS241_E, 8, r) / horner(AS241_F, 8, r);
    }
    return q < 0.0 ? -x : x;
}

/* ---- summaries ---- */

/* Columns at a time, rows outside and columns inside, so that a row-major
 * table is read in the order it is laid out; each column's sums run over
 * the rows in order, as a loop down one column would. */
#define NUM_BLOCK 128

void num_moments_cols(size_t n, size_t nc, size_t stride, const double *v,
                      const size_t *rows, double *mean, double *ss)
{
    double s[NUM_BLOCK], c[NUM_BLOCK], s1[NUM_BLOCK];
    for (size_t j0 = 0; j0 < nc; j0 += NUM_BLOCK) {
        size_t nj = nc - j0 < NUM_BLOCK ? nc - j0 : NUM_BLOCK;
        for (size_t j = 0; j < nj; j++)
            s[j] = c[j] = 0.0;
        for (size_t i = 0; i < n; i++) {
            const double *r = v + (rows ? rows[i] : i) * stride + j0;
            for (size_t j = 0; j < nj; j++) {
                double x = r[j], t = s[j] + x;
                if (fabs(s[j]) >= fabs(x))
                    c[j] += (s[j] - t) + x;
                else
                    c[j] += (x - t) + s[j];
                s[j] = t;
            }
        }
        /* The first sum would be 0 with an exact mean; subtracting its
         * square removes what the mean's rounding left in the second. */
        double *m = mean + j0, *s2 = ss + j0;
        for (size_t j = 0; j < nj; j++) {
            m[j] = (s[j] + c[j]) / (double)n;
            s1[j] = s2[j] = 0.0;
        }
        for (size_t i = 0; i < n; i++) {
            const double *r = v + (rows ? rows[i] : i) * stride + j0;
            for (size_t j = 0; j < nj; j++) {
                double d = r[j] - m[j];
                s1[j] += d;
                s2[j] += d * d;
            }
        }
        for (size_t j = 0; j < nj; j++)
            s2[j] = s2[j] - s1[j] * s1[j] / (double)n;
    }
}

void num_moments(size_t n, size_t stride, const double *v, double *mean,
                 double *ss)
{
    num_moments_cols(n, 1, stride, v, NULL, mean, ss);
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    if (a < b)
        return -1;
    if (a > b)
        return 1;
    /* Equal or unordered: -0 before +0, numbers before NaN, so qsort's
     * instability cannot show in the output. */
    int na = isnan(a), nb = isnan(b);
    if (na != nb)
        return na - nb;
    return (signbit(b) != 0) - (signbit(a) != 0);
}

/* The key whose unsigned order is cmp_double's: a number's bits with the
 * sign flipped (and, for a negative one, every bit), so that -0 comes
 * just before +0; a NaN above every number, -NaN before NaN (which NaN
 * of a sign it was is not kept: no output tells them apart). */
static uint64_t sort_key(double x)
{
    uint64_t u;
    if (isnan(x))
        return signbit(x) ? UINT64_MAX - 1 : UINT64_MAX;
    memcpy(&u, &x, sizeof u);
    return u >> 63 ? ~u : u ^ UINT64_C(1) << 63;
}

static double key_value(uint64_t k)
{
    if (k >= UINT64_MAX - 1)
        return k == UINT64_MAX ? NAN : -NAN;
    uint64_t u = k >> 63 ? k ^ UINT64_C(1) << 63 : ~k;
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* One pass of a least-significant-digit radix sort: a to b by the byte
 * at shift, keeping the order of equal bytes; 0 when every key has the
 * same byte there and nothing moved. */
static int radix_pass(const uint64_t *a, uint64_t *b, size_t n, int shift)
{
    size_t count[256] = {0};
    for (size_t i = 0; i < n; i++)
        count[a[i] >> shift & 255]++;
    if (count[a[0] >> shift & 255] == n)
        return 0;
    for (size_t d = 0, at = 0; d < 256; d++) {
        size_t c = count[d];
        count[d] = at;
        at += c;
    }
    for (size_t i = 0; i < n; i++)
        b[count[a[i] >> shift & 255]++] = a[i];
    return 1;
}

void num_sort(double *v, size_t n)
{
    /* A summary sorts a score's value over every seed of a group: a radix
     * sort of their keys is several times quicker than qsort's calls of
     * the comparison, with the same order (cmp_double's, a total one, so
     * the result does not depend on the algorithm). */
    uint64_t *a = n >= 64 ? malloc(2 * n * sizeof *a) : NULL;
    if (!a) {
        qsort(v, n, sizeof *v, cmp_double);
        return;
    }
    uint64_t *b = a + n;
    for (size_t i = 0; i < n; i++)
        a[i] = sort_key(v[i]);
    for (int shift = 0; shift < 64; shift += 8)
        if (radix_pass(a, b, n, shift)) {
            uint64_t *t = a;
            a = b, b = t;
        }
    for (size_t i = 0; i < n; i++)
        v[i] = key_value(a[i]);
    free(a < b ? a : b);
}

/* Rearranges a[lo .. hi - 1] so that a[k] holds the key a sort would put
 * there, none before it greater and none after it smaller (Hoare's
 * selection, the middle of three as the pivot). */
static void select_key(uint64_t *a, size_t lo, size_t hi, size_t k)
{
    while (hi - lo > 2) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t x = a[lo], y = a[mid], z = a[hi - 1], t;
        uint64_t pivot = x < y ? (y < z ? y : x < z ? z : x)
                               : (x < z ? x : y < z ? z : y);
        size_t i = lo, j = hi - 1;
        for (;;) { /* a[lo..i) <= pivot <= a(j..hi) */
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i >= j)
                break;
            t = a[i], a[i] = a[j], a[j] = t;
            i++, j--;
        }
        if (k <= j)
            hi = j + 1;
        else
            lo = j + 1;
    }
    if (hi - lo == 2 && a[lo] > a[lo + 1]) {
        uint64_t t = a[lo];
        a[lo] = a[lo + 1], a[lo + 1] = t;
    }
}

/* The two order statistics a quantile interpolates between, k and k + 1
 * (k + 1 < n), selected from a[from .. n - 1] where a[0 .. from - 1]
 * holds the smaller ones: the second is the least key past the first. */
static void select_pair(uint64_t *a, size_t from, size_t n, size_t k,
                        uint64_t *lo, uint64_t *hi)
{
    select_key(a, from, n, k);
    uint64_t m = a[k + 1];
    for (size_t i = k + 2; i < n; i++)
        m = a[i] < m ? a[i] : m;
    *lo = a[k], *hi = m;
}

int num_quantiles(double *v, size_t n, const double *q, size_t nq,
                  double *out)
{
    uint64_t *a = n > 0 ? malloc(n * sizeof *a) : NULL;
    if (!a)
        return -1;
    for (size_t i = 0; i < n; i++)
        a[i] = sort_key(v[i]);
    size_t from = 0; /* a[0 .. from - 1]: keys below the last selected */
    for (size_t i = 0; i < nq; i++) {
        double index = q[i] * (double)(n - 1);
        size_t lhs = (size_t)index;
        if (lhs < from)
            from = 0; /* a smaller q than the one before */
        if (lhs >= n - 1) { /* the largest value */
            size_t top = from;
            for (size_t j = from; j < n; j++)
                top = a[j] > a[top] ? j : top;
            out[i] = key_value(a[top]);
            continue;
        }
        uint64_t kl, kh;
        select_pair(a, from, n, lhs, &kl, &kh);
        double delta = index - (double)lhs;
        out[i] = (1.0 - delta) * key_value(kl) + delta * key_value(kh);
        from = lhs;
    }
    free(a);
    return 0;
}

double num_quantile_sorted(const double *v, size_t n, double q)
{
    double index = q * (double)(n - 1);
    size_t lhs = (size_t)index;
    if (lhs >= n - 1)
        return v[n - 1];
    double delta = index - (double)lhs;
    return (1.0 - delta) * v[lhs] + delta * v[lhs + 1];
}
