/*
 * Asking for memory before it is read: a hint to the CPU that a line
 * will be wanted soon, so that trips to memory overlap instead of
 * following one another. Only a hint: nothing it does changes a bit of
 * what the program computes, and where the compiler has no such builtin
 * (GCC's and Clang's __builtin_prefetch) it is nothing at all.
 */
#ifndef BN_PREFETCH_H
#define BN_PREFETCH_H

#include <stddef.h>

#if defined(__GNUC__)
/* The line at p, to be written (it is fetched ready to be owned). */
#define bn_prefetch_write(p) __builtin_prefetch((p), 1)
/* The line at p, to be read: one request, for a loop over rows that
 * reads each row where bn_prefetch's loop would cost more than it saves
 * (model/batchpass.c's wide rows measured 1.3x to 1.6x slower with it). */
#define bn_prefetch_line(p) __builtin_prefetch((p))
#else
#define bn_prefetch_write(p) ((void)(p))
#define bn_prefetch_line(p) ((void)(p))
#endif

/* bn_prefetch's and bn_prefetch_far's loop; far a constant at each
 * call, so that each is its own copy (the builtin wants a constant). */
static inline void bn_prefetch_row(const double *p, size_t f, int far)
{
#if defined(__GNUC__)
    /* (This shape of the loop: GCC 12 drops the whole caller's requests
     * for one that starts at 8 with a second bound.) */
    if (f > 64)
        f = 64;
    for (size_t j = 0; j < f; j += 8)
        if (far)
            __builtin_prefetch(p + j, 0, 1);
        else
            __builtin_prefetch(p + j);
#else
    (void)p, (void)f, (void)far;
#endif
}

/* A row of f doubles at p, to be read: its first 64 values (a 64-byte
 * line at a time); the hardware streams the rest of a wider row itself.
 * A shuffled order reads rows at random: past the caches each row is a
 * trip to memory, and asked for early (model/batchpass.c) the trips
 * overlap instead of following one another. */
static inline void bn_prefetch(const double *p, size_t f)
{
    bn_prefetch_row(p, f, 0);
}

/* bn_prefetch's row, asked for to the second-level cache rather than
 * the first: for rows a chunk ahead, which would otherwise share the
 * first level with the chunk being read. Measured, not reasoned: on the
 * Intel Xeon of docs/speed.md's table a big population's run took 0.89x
 * to 0.97x its time with these; on the AMD EPYC before it the first
 * level measured better. */
static inline void bn_prefetch_far(const double *p, size_t f)
{
    bn_prefetch_row(p, f, 1);
}

#endif
