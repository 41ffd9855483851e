/*
 * Things every module shares: the version and the error record through
 * which every fallible function reports what went wrong. Populations,
 * layers and names have no fixed size: their arrays are allocated to fit.
 * Functions return 0 on success and -1 with err->msg filled on failure; no
 * module prints or exits on its own, only the command line does.
 */
#ifndef BN_COMMON_H
#define BN_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#define BNSTUDY_VERSION "0.5.1"

/* The longest path bnstudy takes or makes, terminating NUL included. */
#define BN_PATH_MAX 4096
/* The longest line of an experiment or claims file, and of a --set. */
#define BN_LINE_MAX 4093

/* A message quotes at most a few inputs, each bounded (a path by
 * BN_PATH_MAX, a value by BN_LINE_MAX, a TSV cell by TSV_MAX_CELL), so
 * this holds every message whole. A message that would not fit is a bug:
 * it aborts in test builds and says it was cut otherwise. */
#define BN_ERROR_MAX 16384

typedef struct {
    char msg[BN_ERROR_MAX];
} bn_error;

/* Fill err (which may be NULL) from a printf format and return -1. The
 * arguments must not point into err->msg. */
int bn_fail(bn_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

int bn_vfail(bn_error *err, const char *fmt, va_list ap);

/* name(0), name(1), ... up to the first NULL, joined by sep (last_sep
 * before the last), into buf; returns buf. For the lists of allowed
 * names in help texts and messages, made from the tables. */
const char *bn_join(char *buf, size_t cap, const char *sep,
                    const char *last_sep, const char *(*name)(int i));

/* The first byte of s that is a control character (below 0x20, or 0x7f),
 * or NULL. Names and values that reach a TSV field or a manifest line
 * must have none: a tab or a newline would change the file's structure. */
const char *bn_control_char(const char *s);
/* A control character as a reader would type it: "a tab", "a newline",
 * "byte 0x1b". */
const char *bn_control_name(char c, char buf[16]);

/* Whether two of the n strings s[0..n-1] are the same, for a file's
 * names given twice: 1 with the earliest repeat in their order in
 * *again and the index of the string it repeats in *first; 0 when all
 * differ; -1 out of memory. */
int bn_find_repeat(const char *const *s, size_t n, size_t *first,
                   size_t *again);

/* An array of bytes that a shuffled order reads at random (a population's
 * rows, an order): past the caches, with the system's 4 KiB pages, nearly
 * every row read is a TLB miss as well as a trip to memory. From 2 MiB
 * up, on Linux, it is aligned to 2 MiB and the kernel is asked for
 * transparent huge pages (madvise; a hint it may ignore). Elsewhere, and
 * below 2 MiB, it is malloc. Freed with free(); no byte of a result
 * depends on it. */
void *bn_alloc_large(size_t bytes);

#include "base/fault.h"

#endif
