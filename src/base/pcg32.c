/*
 * PCG32. The step and output function are the published PCG-XSH-RR ones;
 * tests compare them with the reference known answers and with Debian's
 * pcg_random.hpp over a million outputs.
 */
#include "base/pcg32.h"

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
