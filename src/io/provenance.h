/*
 * What produced the numbers: the version, the sources (git objects of
 * src/ and the Makefile, and whether either had uncommitted changes), the
 * compiler, its flags and the platform. The manifest of every sweep
 * records these rows, and `bnstudy --version` prints them, so a number can
 * be traced to the code that computed it. Every key but the version starts
 * with "build.": those rows describe this build, not the results, and
 * comparisons of results across builds skip them.
 */
#ifndef BN_PROVENANCE_H
#define BN_PROVENANCE_H

#include <stddef.h>
#include <stdio.h>

typedef struct {
    const char *key, *value;
} provenance_row;

/* The rows, in manifest order; their count in *n. */
const provenance_row *provenance_rows(size_t *n);

/* Each row as "key<TAB>value<NEWLINE>". */
void provenance_print(FILE *fp);

#endif
