/*
 * Asking for memory before it is read: a hint to the CPU that a line
 * will be wanted soon, so that trips to memory overlap instead of
 * following one another. Only a hint: nothing it does changes a bit of
 * what the program computes, and where the compiler has no such builtin
 * (GCC's and Clang's __builtin_prefetch) it is nothing at all.
 */
#ifndef BN_PREFETCH_H
#define BN_PREFETCH_H

#if defined(__GNUC__)
/* The line at p, to be read (bn_prefetch_read) or written
 * (bn_prefetch_write, which fetches it ready to be owned). */
#define bn_prefetch_read(p) __builtin_prefetch((p), 0)
#define bn_prefetch_write(p) __builtin_prefetch((p), 1)
#else
#define bn_prefetch_read(p) ((void)(p))
#define bn_prefetch_write(p) ((void)(p))
#endif

#endif
