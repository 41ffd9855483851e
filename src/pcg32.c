/*
 * PCG32 and its gsl_rng_type. The step and output function are the
 * published PCG-XSH-RR ones; tests compare them with the reference known
 * answers and with Debian's pcg_random.hpp over a million outputs.
 */
#include "pcg32.h"

#include <stdlib.h>

#define PCG32_MULT 6364136223846793005ULL

uint32_t pcg32_next(pcg32_t *rng)
{
    uint64_t old = rng->state;
    rng->state = old * PCG32_MULT + rng->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    /* (-rot) & 31 keeps the shift defined when rot is 0. */
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

void pcg32_seed(pcg32_t *rng, uint64_t initstate, uint64_t initseq)
{
    rng->state = 0u;
    rng->inc = (initseq << 1u) | 1u;
    pcg32_next(rng);
    rng->state += initstate;
    pcg32_next(rng);
}

uint32_t pcg32_bounded(pcg32_t *rng, uint32_t bound)
{
    /* Reject the 2^32 mod bound smallest outputs so that what remains is a
     * whole number of copies of [0, bound). */
    uint32_t threshold = (uint32_t)(-bound) % bound;
    for (;;) {
        uint32_t r = pcg32_next(rng);
        if (r >= threshold)
            return r % bound;
    }
}

static void gsl_pcg32_set(void *state, unsigned long seed)
{
    pcg32_seed(state, (uint64_t)seed, 0u);
}

static unsigned long gsl_pcg32_get(void *state)
{
    return pcg32_next(state);
}

static double gsl_pcg32_get_double(void *state)
{
    return pcg32_next(state) / 4294967296.0;
}

static const gsl_rng_type pcg32_type = {
    "pcg32", 0xffffffffUL, 0UL, sizeof(pcg32_t),
    gsl_pcg32_set, gsl_pcg32_get, gsl_pcg32_get_double,
};

const gsl_rng_type *gsl_rng_pcg32 = &pcg32_type;

gsl_rng *pcg32_gsl_alloc(uint64_t initstate, uint64_t initseq)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_pcg32);
    if (r)
        pcg32_seed(r->state, initstate, initseq);
    return r;
}
