/*
 * PCG32 (PCG-XSH-RR, 64-bit state, 32-bit output), after O'Neill's pcg-c:
 * the state and the stream (increment) are explicit values, so a stream is
 * fully named by (initstate, initseq). bnstudy gives every purpose its own
 * initseq (1 population noise, 2 shuffling, 3 a classifier's initial
 * weights, 4 the label noise of generated classes, 5 and 6 the feature
 * and label noise of a generated population's held-out draw, 7 the
 * held-out split of a population file, 14 convolution filters, 15
 * generated feature maps, 16 dropout's masks, 24 the batch compositions
 * of the batch-dependence scores, 25 the lengths of padded sequences) so the
 * streams never overlap. What the study draws from a stream is in rand.h;
 * the tests also wrap a generator as a gsl_rng (tests/helpers.h) so that
 * GSL's samplers, the independent reference, draw from exactly the same
 * stream.
 */
#ifndef BN_PCG32_H
#define BN_PCG32_H

#include <stdint.h>

typedef struct {
    uint64_t state;
    uint64_t inc; /* always odd */
} pcg32_t;

#define PCG32_INITSEQ_POPULATION 1u
#define PCG32_INITSEQ_SHUFFLE 2u
#define PCG32_INITSEQ_WEIGHTS 3u
#define PCG32_INITSEQ_LABELS 4u
#define PCG32_INITSEQ_HELD_OUT 5u
#define PCG32_INITSEQ_HELD_OUT_LABELS 6u
#define PCG32_INITSEQ_SPLIT 7u
#define PCG32_INITSEQ_CONV_FILTERS 14u
#define PCG32_INITSEQ_CONV_FIELD 15u
#define PCG32_INITSEQ_DROPOUT 16u
#define PCG32_INITSEQ_COMPOSE 24u
#define PCG32_INITSEQ_SEQ_LENGTHS 25u

void pcg32_seed(pcg32_t *rng, uint64_t initstate, uint64_t initseq);

/* The LCG step's multiplier, and the next output (inline: a shuffle
 * draws one an element). */
#define PCG32_MULT 6364136223846793005ULL

static inline uint32_t pcg32_next(pcg32_t *rng)
{
    uint64_t old = rng->state;
    rng->state = old * PCG32_MULT + rng->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    /* (-rot) & 31 keeps the shift defined when rot is 0. */
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

/* Uniform on [0, bound), bound >= 1, without modulo bias (rejection). */
uint32_t pcg32_bounded(pcg32_t *rng, uint32_t bound);

#endif
