/*
 * The population identifier: a short, stable name for the population a
 * row was computed on, so that rows of different populations never share
 * their key columns. It is the FNV-1a 64-bit hash of the population's
 * canonical description, printed as 16 lowercase hex digits. FNV-1a is
 * ten lines of integer arithmetic, so the web page (which has no nettle)
 * prints the same identifier; it names, it does not authenticate (the
 * manifest's SHA-256 of the experiment file does that).
 */
#ifndef BN_POPID_H
#define BN_POPID_H

#include <stddef.h>
#include <stdint.h>

#include "pop.h"

/* The canonical description: a version line, then "rows N", "seed S" and
 * one "feature NAME MEAN SD RHO" line per feature, numbers %.17g, each
 * line ending in a newline. Returns its length (it is cut at cap - 1). */
size_t pop_describe(const pop_spec *spec, char *buf, size_t cap);
uint64_t pop_fnv1a64(const void *data, size_t len);
/* 16 hex digits and a NUL. */
void pop_id(const pop_spec *spec, char out[17]);

#endif
