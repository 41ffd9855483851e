/* The draws of rand.h, with num.h's logarithm. */
#include "base/rand.h"

#include <math.h>

#include "base/num.h"

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

uint32_t rand_index(pcg32_t *rng, uint32_t n)
{
    /* scale copies of [0, n) fit in the generator's range; an output
     * beyond the last whole copy is drawn again. */
    uint32_t scale = UINT32_MAX / n, k;
    do
        k = pcg32_next(rng) / scale;
    while (k >= n);
    return k;
}

void rand_shuffle(pcg32_t *rng, size_t *v, size_t n)
{
    for (size_t i = n; i-- > 1;) {
        size_t j = rand_index(rng, (uint32_t)(i + 1)), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}
