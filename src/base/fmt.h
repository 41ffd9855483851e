/*
 * A double as printf's "%.17g" writes it, character for character, at a
 * fraction of the cost: every real number in a result file is written
 * this way, and in a sweep printf's own conversion (exact, through big
 * integers) was most of the time spent outside the runs. Where the fast
 * path cannot be sure of a digit, or is not built (no 128-bit integers),
 * the answer is printf's own.
 */
#ifndef BN_FMT_H
#define BN_FMT_H

#include <stddef.h>

/* Room for any %.17g, its NUL included: "-1.2345678901234567e-308". */
#define FMT_G17_MAX 32

/* Writes v as snprintf(out, FMT_G17_MAX, "%.17g", v) does (in the
 * default rounding mode) and returns its length. */
size_t fmt_g17(char *out, double v);

#endif
