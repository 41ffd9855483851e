/* The draws of rand.h, with num.h's logarithm. */
#include "base/rand.h"

#include <math.h>

#include "base/num.h"
#include "base/prefetch.h"

/* Past this many elements (256 KiB of size_t, the size of an L2) a
 * swap's far element j is a miss, and the loop waits for it before the
 * next swap can retire: the draws are made SHUFFLE_AHEAD positions ahead
 * of the swaps (the same draws in the same order: they read nothing the
 * swaps write) and each far element asked for as it is drawn. */
#define SHUFFLE_FAR 32768
#define SHUFFLE_AHEAD 16 /* a power of two: the ring's slot is a mask */

double rand_uniform_pos(pcg32_t *rng)
{
    uint32_t u;
    do
        u = pcg32_next(rng);
    while (u == 0);
    return u / 4294967296.0;
}

double rand_gaussian(pcg32_t *rng)
{
    double x, y, r2;
    do {
        x = -1.0 + 2.0 * rand_uniform_pos(rng);
        y = -1.0 + 2.0 * rand_uniform_pos(rng);
        r2 = x * x + y * y;
    } while (r2 > 1.0 || r2 == 0.0);
    return y * sqrt(-2.0 * num_log(r2) / r2);
}

uint32_t rand_scale(uint32_t n)
{
    /* UINT32_MAX / n, made by the floating-point divider, so that a
     * shuffle's two divisions an element run on two units rather than
     * queue for the integer one (which bound it: 4.1 ns an element
     * against 2.5). The same integer for every n >= 1: the quotient q =
     * a / b of two integers below 2^32 is rounded correctly, and when q
     * is not whole it lies at least 1/b below the next whole number, more
     * than half an ulp of q (at most q 2^-53, under 1/b as a < 2^53):
     * rounding never carries it there, nor below floor(q), a double
     * itself, so truncation gives floor(q). (a is UINT32_MAX, b is n; q
     * is at most a, so the conversion is defined.) */
    return (uint32_t)(4294967295.0 / (double)n);
}

uint32_t rand_index(pcg32_t *rng, uint32_t n)
{
    /* scale copies of [0, n) fit in the generator's range; an output
     * beyond the last whole copy is drawn again. */
    uint32_t scale = rand_scale(n), k;
    do
        k = pcg32_next(rng) / scale;
    while (k >= n);
    return k;
}

/* Fisher-Yates over n > SHUFFLE_FAR elements with the draws ahead: the
 * draw for position i waits in ring[(n - 1 - i) % SHUFFLE_AHEAD]. */
static void shuffle_far(pcg32_t *rng, size_t *v, size_t n)
{
    size_t ring[SHUFFLE_AHEAD], i = n - 1, mask = SHUFFLE_AHEAD - 1;
    for (size_t k = 0; k < SHUFFLE_AHEAD; k++) {
        ring[k] = rand_index(rng, (uint32_t)(i - k + 1));
        bn_prefetch_write(v + ring[k]);
    }
    for (; i > SHUFFLE_AHEAD; i--) {
        size_t slot = (n - 1 - i) & mask, j = ring[slot], t = v[i];
        size_t next = rand_index(rng, (uint32_t)(i - SHUFFLE_AHEAD + 1));
        ring[slot] = next;
        bn_prefetch_write(v + next);
        v[i] = v[j];
        v[j] = t;
    }
    for (; i > 0; i--) {
        size_t j = ring[(n - 1 - i) & mask], t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

void rand_shuffle(pcg32_t *rng, size_t *v, size_t n)
{
    if (n > SHUFFLE_FAR) {
        shuffle_far(rng, v, n);
        return;
    }
    for (size_t i = n; i-- > 1;) {
        size_t j = rand_index(rng, (uint32_t)(i + 1)), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}
