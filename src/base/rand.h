/*
 * What the study draws from a PCG32 stream: uniform deviates, standard
 * normal noise and shuffles. Each reproduces the algorithm of the GSL
 * function named beside it, draw for draw on the same stream, so a stream
 * (initstate, initseq) names the same numbers as it did through GSL; the
 * arithmetic is num.h's, so they are the same bits on every platform.
 */
#ifndef BN_RAND_H
#define BN_RAND_H

#include <stddef.h>
#include <stdint.h>

#include "base/pcg32.h"

/* Uniform on (0, 1): u / 2^32, redrawn while 0 (gsl_rng_uniform_pos). */
double rand_uniform_pos(pcg32_t *rng);

/* Standard normal by Marsaglia's polar method, the y coordinate
 * (gsl_ran_gaussian with sigma 1). */
double rand_gaussian(pcg32_t *rng);

/* UINT32_MAX / n for 1 <= n <= 2^32 - 1: rand_index's scale, the same
 * integer by the floating-point divider (rand.c says why). */
uint32_t rand_scale(uint32_t n);

/* Uniform on [0, n), 1 <= n <= 2^32 - 1, by division and rejection
 * (gsl_rng_uniform_int). */
uint32_t rand_index(pcg32_t *rng, uint32_t n);

/* Fisher-Yates from the last element down (gsl_ran_shuffle); past
 * 32768 elements the draws are made ahead of the swaps, the same draws. */
void rand_shuffle(pcg32_t *rng, size_t *v, size_t n);

#endif
