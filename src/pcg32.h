/*
 * PCG32 (PCG-XSH-RR, 64-bit state, 32-bit output), after O'Neill's pcg-c:
 * the state and the stream (increment) are explicit values, so a stream is
 * fully named by (initstate, initseq). bnstudy gives every purpose its own
 * initseq (1 population noise, 2 shuffling, 3 a classifier's initial
 * weights, 14 convolution filters, 15 generated feature maps) so the
 * streams never overlap.
 *
 * pcg32_gsl_alloc() wraps a generator as a gsl_rng so GSL's samplers
 * (gsl_ran_gaussian, gsl_ran_shuffle) draw from exactly this stream.
 */
#ifndef BN_PCG32_H
#define BN_PCG32_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

typedef struct {
    uint64_t state;
    uint64_t inc; /* always odd */
} pcg32_t;

#define PCG32_INITSEQ_POPULATION 1u
#define PCG32_INITSEQ_SHUFFLE 2u
#define PCG32_INITSEQ_WEIGHTS 3u
#define PCG32_INITSEQ_CONV_FILTERS 14u
#define PCG32_INITSEQ_CONV_FIELD 15u

void pcg32_seed(pcg32_t *rng, uint64_t initstate, uint64_t initseq);
uint32_t pcg32_next(pcg32_t *rng);
/* Uniform on [0, bound), bound >= 1, without modulo bias (rejection). */
uint32_t pcg32_bounded(pcg32_t *rng, uint32_t bound);

/* GSL's view of PCG32: range [0, 2^32 - 1]. gsl_rng_set(r, s) seeds
 * initstate = s on stream initseq 0; use pcg32_gsl_alloc to name both. */
extern const gsl_rng_type *gsl_rng_pcg32;
/* A gsl_rng on stream (initstate, initseq), or NULL when out of memory. */
gsl_rng *pcg32_gsl_alloc(uint64_t initstate, uint64_t initseq);

#endif
