/*
 * Several arrays carved from one allocation. A run makes a dozen arrays
 * and lives a few microseconds, so a malloc and a free for each would be
 * a cost it pays every time; one block is cheaper. The price of one block
 * is that AddressSanitizer sees a single object, and an array running
 * over into the next would go unseen. So in a build with ASan every array
 * is followed by a gap of its own, poisoned as malloc's redzones are; in
 * any other build the gaps are zero bytes and the block is laid out
 * exactly as the arrays' sizes and alignments make it.
 *
 *   bn_carve c = {0};
 *   size_t at_x = bn_carve_add(&c, n * sizeof(double), _Alignof(double));
 *   size_t at_i = bn_carve_add(&c, m * sizeof(size_t), _Alignof(size_t));
 *   char *b = bn_carve_alloc(&c);     (NULL when out of memory)
 *   double *x = (double *)(void *)(b + at_x); ...  free(b) when done.
 */
#ifndef BN_CARVE_H
#define BN_CARVE_H

#include <stddef.h>

/* The most arrays one block holds; bn_carve_add asserts it. */
#define BN_CARVE_MAX 16

typedef struct {
    size_t at;                 /* the bytes laid out so far, gaps included */
    size_t n;                  /* the arrays laid out */
    size_t end[BN_CARVE_MAX];  /* where each array ends: its gap starts */
} bn_carve;

/* The bytes after each array that ASan is told no one may touch (0 in a
 * build without ASan). */
size_t bn_carve_gap(void);

/* Lay out an array of `bytes` bytes aligned to `align` (a power of two,
 * at most _Alignof(max_align_t)): its offset in the block. */
size_t bn_carve_add(bn_carve *c, size_t bytes, size_t align);

/* The block (free it with free), each gap poisoned under ASan; NULL when
 * out of memory. */
void *bn_carve_alloc(const bn_carve *c);

/* The common case: n arrays of doubles, counts[a] of them in *arrays[a],
 * each zeroed, laid out as above in a block it returns (free it with
 * free); NULL when out of memory, when the sizes do not fit a size_t or
 * when n is more than BN_CARVE_MAX. */
double *bn_carve_doubles(size_t n, double **const *arrays,
                         const size_t *counts);

#endif
