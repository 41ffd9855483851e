/*
 * The population identifier: a short, stable name for the population a
 * row was computed on, so that rows of different populations never share
 * their key columns. It is the FNV-1a 64-bit hash of the population's
 * canonical description, printed as 16 lowercase hex digits. FNV-1a is
 * ten lines of integer arithmetic, so the web page (which has no nettle)
 * prints the same identifier; it names, it does not authenticate (the
 * manifest's SHA-256 of the experiment file, and of a population file,
 * does that).
 */
#ifndef BN_POPID_H
#define BN_POPID_H

#include <stddef.h>
#include <stdint.h>

#include "pop.h"

/* A population read from a file, as its identifier sees it: the file's
 * bytes (by their FNV-1a 64), how they were read (the same bytes read as
 * CSV or as TSV are different rows), and the columns kept out of the
 * features. */
typedef struct {
    uint64_t bytes_fnv;
    const char *format;        /* "csv", "tsv" or "npy" */
    const char *label, *group; /* the columns' names, or NULL */
} pop_file_desc;

/* The canonical description of a generated population: a version line,
 * then "rows N", "seed S" and one "feature NAME MEAN SD RHO" line per
 * feature, numbers %.17g, each line ending in a newline. Of a population
 * read from a file: the version line, then "file FNV FORMAT" (the bytes'
 * hash in 16 hex digits), then "label NAME" and "group NAME" when the file
 * has them. Like snprintf, at most cap - 1 characters and a NUL go to buf
 * and the whole description's length is returned. */
size_t pop_describe(const pop_spec *spec, char *buf, size_t cap);
size_t pop_describe_file(const pop_file_desc *d, char *buf, size_t cap);
uint64_t pop_fnv1a64(const void *data, size_t len);
/* FNV-1a 64 continued over len more bytes from the hash h. */
uint64_t pop_fnv1a64_more(uint64_t h, const void *data, size_t len);
/* The hash of the whole description, however long: 16 hex digits and a
 * NUL. */
void pop_id(const pop_spec *spec, char out[17]);
void pop_id_file(const pop_file_desc *d, char out[17]);

#endif
