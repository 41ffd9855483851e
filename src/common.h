/*
 * Things every module shares: the version and the error record through
 * which every fallible function reports what went wrong. Populations,
 * layers and names have no fixed size: their arrays are allocated to fit.
 * Functions return 0 on success and -1 with err->msg filled on failure; no
 * module prints or exits on its own, only the command line does.
 */
#ifndef BN_COMMON_H
#define BN_COMMON_H

#include <stddef.h>

#define BNSTUDY_VERSION "0.2.0"

typedef struct {
    char msg[512];
} bn_error;

/* Fill err (which may be NULL) from a printf format and return -1. */
int bn_fail(bn_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* name(0), name(1), ... up to the first NULL, joined by sep (last_sep
 * before the last), into buf; returns buf. For the lists of allowed
 * names in help texts and messages, made from the tables. */
const char *bn_join(char *buf, size_t cap, const char *sep,
                    const char *last_sep, const char *(*name)(int i));

#endif
