/*
 * PCG32's seeding and bounded draw. The step and output function
 * (pcg32_next, inline in pcg32.h) are the published PCG-XSH-RR ones;
 * tests compare them with the reference known answers and with Debian's
 * pcg_random.hpp over a million outputs.
 */
#include "base/pcg32.h"

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
