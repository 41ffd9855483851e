/*
 * Two doubles at a time: the packed arithmetic the layer's passes use,
 * SSE2 on x86 (divpd, addpd, ...), NEON on aarch64 (fdiv v.2d, ...) and
 * two plain doubles elsewhere. Each operation is the IEEE operation on
 * each lane, correctly rounded as the scalar one is, so a pair computes
 * the bits two scalar expressions compute: a packed division gives what
 * two divisions give, a packed square root what two sqrt() give, and no
 * operation here fuses or reorders. Sums that run across lanes are the
 * caller's to keep in order (pair_lo, pair_hi).
 */
#ifndef BN_PAIR_H
#define BN_PAIR_H

#include <stddef.h>

#if defined(__SSE2__) && !defined(BN_PAIR_PLAIN)
#include <emmintrin.h>
#define PAIR_KIND "sse2"
typedef __m128d pair_t;
static inline pair_t pair_load(const double *p) { return _mm_loadu_pd(p); }
static inline pair_t pair_load_dup(const double *p) { return _mm_load1_pd(p); }
static inline void pair_store(double *p, pair_t a) { _mm_storeu_pd(p, a); }
static inline pair_t pair_set(double lo, double hi)
{
    return _mm_set_pd(hi, lo);
}
static inline pair_t pair_add(pair_t a, pair_t b) { return _mm_add_pd(a, b); }
static inline pair_t pair_sub(pair_t a, pair_t b) { return _mm_sub_pd(a, b); }
static inline pair_t pair_mul(pair_t a, pair_t b) { return _mm_mul_pd(a, b); }
static inline pair_t pair_div(pair_t a, pair_t b) { return _mm_div_pd(a, b); }
static inline pair_t pair_sqrt(pair_t a) { return _mm_sqrt_pd(a); }
static inline pair_t pair_abs(pair_t a)
{
    return _mm_andnot_pd(_mm_set1_pd(-0.0), a);
}
/* maxpd returns its second operand unless the first is greater (a NaN or
 * two zeros included), which is pair_max's a > b ? a : b. */
static inline pair_t pair_max(pair_t a, pair_t b) { return _mm_max_pd(a, b); }
static inline pair_t pair_where_gt(pair_t a, pair_t b, pair_t v)
{
    return _mm_and_pd(_mm_cmpgt_pd(a, b), v);
}
typedef __m128i pair_tally_t;
static inline pair_tally_t pair_tally_zero(void)
{
    return _mm_setzero_si128();
}
/* a <= b is all ones, -1, in a lane where it holds */
static inline pair_tally_t pair_tally_le(pair_tally_t t, pair_t a, pair_t b)
{
    return _mm_sub_epi64(t, _mm_castpd_si128(_mm_cmple_pd(a, b)));
}
static inline size_t pair_tally_sum(pair_tally_t t)
{
    unsigned long long n[2];
    _mm_storeu_si128((__m128i *)n, t);
    return (size_t)(n[0] + n[1]);
}
static inline double pair_lo(pair_t a) { return _mm_cvtsd_f64(a); }
static inline double pair_hi(pair_t a)
{
    return _mm_cvtsd_f64(_mm_unpackhi_pd(a, a));
}
#elif defined(__aarch64__) && defined(__ARM_NEON) && !defined(BN_PAIR_PLAIN)
#include <arm_neon.h>
#define PAIR_KIND "neon"
typedef float64x2_t pair_t;
static inline pair_t pair_load(const double *p) { return vld1q_f64(p); }
static inline pair_t pair_load_dup(const double *p) { return vld1q_dup_f64(p); }
static inline void pair_store(double *p, pair_t a) { vst1q_f64(p, a); }
static inline pair_t pair_set(double lo, double hi)
{
    return vcombine_f64(vdup_n_f64(lo), vdup_n_f64(hi));
}
static inline pair_t pair_add(pair_t a, pair_t b) { return vaddq_f64(a, b); }
static inline pair_t pair_sub(pair_t a, pair_t b) { return vsubq_f64(a, b); }
static inline pair_t pair_mul(pair_t a, pair_t b) { return vmulq_f64(a, b); }
static inline pair_t pair_div(pair_t a, pair_t b) { return vdivq_f64(a, b); }
static inline pair_t pair_sqrt(pair_t a) { return vsqrtq_f64(a); }
static inline pair_t pair_abs(pair_t a) { return vabsq_f64(a); }
/* Not vmaxq_f64, which prefers +0 to -0 and passes NaNs on: a select. */
static inline pair_t pair_max(pair_t a, pair_t b)
{
    return vbslq_f64(vcgtq_f64(a, b), a, b);
}
static inline pair_t pair_where_gt(pair_t a, pair_t b, pair_t v)
{
    return vbslq_f64(vcgtq_f64(a, b), v, vdupq_n_f64(0.0));
}
typedef uint64x2_t pair_tally_t;
static inline pair_tally_t pair_tally_zero(void) { return vdupq_n_u64(0); }
/* a <= b is all ones, -1, in a lane where it holds */
static inline pair_tally_t pair_tally_le(pair_tally_t t, pair_t a, pair_t b)
{
    return vsubq_u64(t, vcleq_f64(a, b));
}
static inline size_t pair_tally_sum(pair_tally_t t)
{
    return (size_t)(vgetq_lane_u64(t, 0) + vgetq_lane_u64(t, 1));
}
static inline double pair_lo(pair_t a) { return vgetq_lane_f64(a, 0); }
static inline double pair_hi(pair_t a) { return vgetq_lane_f64(a, 1); }
#else
#include <math.h>
#define PAIR_KIND "plain"
typedef struct {
    double lo, hi;
} pair_t;
static inline pair_t pair_load(const double *p)
{
    return (pair_t){p[0], p[1]};
}
static inline pair_t pair_load_dup(const double *p)
{
    return (pair_t){p[0], p[0]};
}
static inline void pair_store(double *p, pair_t a)
{
    p[0] = a.lo, p[1] = a.hi;
}
static inline pair_t pair_set(double lo, double hi)
{
    return (pair_t){lo, hi};
}
static inline pair_t pair_add(pair_t a, pair_t b)
{
    return (pair_t){a.lo + b.lo, a.hi + b.hi};
}
static inline pair_t pair_sub(pair_t a, pair_t b)
{
    return (pair_t){a.lo - b.lo, a.hi - b.hi};
}
static inline pair_t pair_mul(pair_t a, pair_t b)
{
    return (pair_t){a.lo * b.lo, a.hi * b.hi};
}
static inline pair_t pair_div(pair_t a, pair_t b)
{
    return (pair_t){a.lo / b.lo, a.hi / b.hi};
}
static inline pair_t pair_sqrt(pair_t a)
{
    return (pair_t){sqrt(a.lo), sqrt(a.hi)};
}
static inline pair_t pair_abs(pair_t a)
{
    return (pair_t){fabs(a.lo), fabs(a.hi)};
}
static inline pair_t pair_max(pair_t a, pair_t b)
{
    return (pair_t){a.lo > b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
}
static inline pair_t pair_where_gt(pair_t a, pair_t b, pair_t v)
{
    return (pair_t){a.lo > b.lo ? v.lo : 0.0, a.hi > b.hi ? v.hi : 0.0};
}
typedef struct {
    size_t lo, hi;
} pair_tally_t;
static inline pair_tally_t pair_tally_zero(void)
{
    return (pair_tally_t){0, 0};
}
static inline pair_tally_t pair_tally_le(pair_tally_t t, pair_t a, pair_t b)
{
    return (pair_tally_t){t.lo + (a.lo <= b.lo), t.hi + (a.hi <= b.hi)};
}
static inline size_t pair_tally_sum(pair_tally_t t) { return t.lo + t.hi; }
static inline double pair_lo(pair_t a) { return a.lo; }
static inline double pair_hi(pair_t a) { return a.hi; }
#endif

static inline pair_t pair_dup(double v) { return pair_set(v, v); }
/* pair_abs is |a| on each lane; pair_tally_le adds 1 to each lane's
 * count of t where a <= b (none holds with a NaN), and pair_tally_sum
 * is the two lanes' counts; pair_max is a > b ? a : b on each lane
 * (b when either is a NaN, b of two zeros), exactly the C expression;
 * pair_where_gt is a > b ? v : +0. */

/* For the loops that must be copied once per case (a shift or none,
 * outputs kept or not) so that no case is tested per element: the
 * compiler inlines these wherever it can. */
#if defined(__GNUC__)
#define PAIR_INLINE static inline __attribute__((always_inline))
#else
#define PAIR_INLINE static inline
#endif

/* Before a loop over rows whose body is short: two turns of it a pass,
 * one after the other, so that the loop's own count and jump are paid
 * half as often. The order of the operations is the loop's. */
#if defined(__GNUC__) && !defined(__clang__)
#define PAIR_UNROLL2 _Pragma("GCC unroll 2")
#elif defined(__clang__)
#define PAIR_UNROLL2 _Pragma("clang loop unroll_count(2)")
#else
#define PAIR_UNROLL2
#endif

/* Before a loop over the few pairs of sums a block keeps (a constant
 * count, at most 4): every turn of it written out, so that the pairs can
 * stay in registers. The order of the operations is the loop's. */
#if defined(__GNUC__) && !defined(__clang__)
#define PAIR_UNROLL4 _Pragma("GCC unroll 4")
#elif defined(__clang__)
#define PAIR_UNROLL4 _Pragma("clang loop unroll(full)")
#else
#define PAIR_UNROLL4
#endif

/* For a block of np pairs of sums (np a constant, at most 4) that each
 * take one more term: s[q] += v[2q .. 2q + 1] a, one multiply and one add
 * a lane, so that each sum keeps its own order. */
PAIR_INLINE void pair_add_products(size_t np, pair_t *s, pair_t a,
                                   const double *v)
{
    PAIR_UNROLL4
    for (size_t q = 0; q < np; q++)
        s[q] = pair_add(s[q], pair_mul(pair_load(v + 2 * q), a));
}

/* The block's sums from (init NULL: 0) and into p. */
PAIR_INLINE void pair_block_start(size_t np, pair_t *s, const double *init)
{
    PAIR_UNROLL4
    for (size_t q = 0; q < np; q++)
        s[q] = init ? pair_load(init + 2 * q) : pair_dup(0.0);
}

PAIR_INLINE void pair_block_store(size_t np, double *p, const pair_t *s)
{
    PAIR_UNROLL4
    for (size_t q = 0; q < np; q++)
        pair_store(p + 2 * q, s[q]);
}

#endif
