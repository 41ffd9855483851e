/* Several arrays in one allocation, with ASan's redzones between them in
 * a build that has ASan (carve.h says why). */
#include "base/carve.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"

#if defined(__SANITIZE_ADDRESS__)
#define BN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BN_ASAN 1
#endif
#endif

#ifdef BN_ASAN
#include <sanitizer/asan_interface.h>
/* Four of ASan's 8-byte granules: an index one past an array's end, or a
 * few, lands in the gap. */
#define GAP 32
#else
#define GAP 0
#endif

size_t bn_carve_gap(void)
{
    return GAP;
}

size_t bn_carve_add(bn_carve *c, size_t bytes, size_t align)
{
    assert(c->n < BN_CARVE_MAX);
    assert(align && (align & (align - 1)) == 0 &&
           align <= _Alignof(max_align_t));
    /* The gap starts at a granule's edge, so that ASan can poison all of
     * it and none of the array. */
    size_t edge = GAP ? 8 : 1;
    size_t at = (c->at + align - 1) / align * align;
    size_t end = at + bytes;
    c->end[c->n++] = end;
    c->at = (end + edge - 1) / edge * edge + GAP;
    return at;
}

/* The block, its gaps poisoned after; with calloc, zeroed gaps and
 * all. */
static void *carve_block(const bn_carve *c, int zeroed)
{
    size_t bytes = c->at ? c->at : 1;
    char *b = zeroed ? calloc(bytes, 1) : malloc(bytes);
#ifdef BN_ASAN
    for (size_t i = 0; b && i < c->n; i++) {
        size_t from = (c->end[i] + 7) / 8 * 8;
        ASAN_POISON_MEMORY_REGION(b + from, GAP);
    }
#endif
    return b;
}

void *bn_carve_alloc(const bn_carve *c)
{
    return carve_block(c, 0);
}

/* From this size on calloc zeroes for less than memset: the fresh pages
 * it gets from the system need no clearing (a classifier's arrays at B
 * 256). Below it, malloc and a memset an array cost less than calloc (a
 * batch-norm layer's). */
#define CALLOC_FROM 4096

double *bn_carve_doubles(size_t n, double **const *arrays,
                         const size_t *counts)
{
    bn_carve c = {0};
    size_t at[BN_CARVE_MAX];
    /* at and c.end hold BN_CARVE_MAX: refused here too, where a build
     * with NDEBUG has no assert to stop it */
    if (n > BN_CARVE_MAX)
        return NULL;
    for (size_t a = 0; a < n; a++) {
        /* a quarter of size_t's range at most, gaps and alignment
         * included, checked before each array is added */
        if (c.at > SIZE_MAX / 4 ||
            counts[a] > (SIZE_MAX / 4 - c.at) / sizeof(double))
            return NULL;
        at[a] = bn_carve_add(&c, counts[a] * sizeof(double),
                             _Alignof(double));
    }
    int big = c.at >= CALLOC_FROM;
    char *b = carve_block(&c, big);
    if (!b)
        return NULL;
    for (size_t a = 0; a < n; a++) {
        *arrays[a] = (double *)(void *)(b + at[a]);
        if (!big)
            memset(*arrays[a], 0, counts[a] * sizeof(double));
    }
    return (double *)(void *)b;
}
