/*
 * Populations read from a file: a table of rows by features that a user
 * dumped from their own data or their own layer. Three formats: CSV and TSV
 * with a header row, and NumPy's .npy (a 2-D float64 or float32 array, either
 * byte order, C or Fortran order). A CSV or TSV may name a label column
 * (class labels) and a group column (any metadata: user, source, time);
 * both are kept out of the features and mapped to indices.
 *
 * The parser works on bytes already in memory, so that the caller reads a
 * file once and can hash the very bytes it parsed. Every refusal names the
 * file, the line and the column. Nothing has a fixed size: names, cells and
 * the number of features are bounded only by the input (and by the byte
 * bound the caller gives popfile_slurp). The rules, and the order classes
 * and groups are numbered in, are in docs/population-files.md.
 */
#ifndef BN_POPFILE_H
#define BN_POPFILE_H

#include <stddef.h>

#include "base/common.h"
#include "pop/pop.h"

typedef enum {
    POPFILE_AUTO, /* .npy by its magic bytes, else by the name's extension */
    POPFILE_CSV,
    POPFILE_TSV,
    POPFILE_NPY,
} popfile_format;

typedef struct {
    popfile_format format;
    const char *label; /* the label column's name, or NULL for none */
    const char *group; /* the group column's name, or NULL for none */
    /* The fewest data rows accepted; 0 for a population's 2 (a mean and
     * a variance). A table of per-batch values, such as a dump's batch
     * means, may hold one row: full-batch training has one batch. */
    size_t min_rows;
} popfile_options;

typedef struct {
    size_t n, f;
    double *x;      /* row-major n x f, every value finite */
    char **names;   /* f feature names: the header's, or f0, f1, ... */
    pop_factor label, group;
    size_t held; /* bytes of the reading budget (input.h) x and the
                  * columns hold; pop_from_file hands them to the
                  * population, for the command's life */
} popfile;

/* The default bound on a file's size for popfile_slurp: 1 GiB. */
#define POPFILE_MAX_BYTES ((size_t)1 << 30)

/* Read the whole file at path into *bytes (with a NUL after the last byte
 * that *len does not count; freed with input_free, input.h). A file
 * longer than max_bytes, or than the reading budget leaves, is refused
 * with the bound in the message (a regular file before it is read),
 * never cut short. popfile_parse then holds the values within the budget
 * too, beside the bytes. */
int popfile_slurp(const char *path, size_t max_bytes, unsigned char **bytes,
                  size_t *len, bn_error *err);

/* Parse len bytes of the file called path (the name is used for messages
 * and, with POPFILE_AUTO, for the extension). opt may be NULL: no label,
 * no group, format by name. On failure pf holds nothing to free. */
int popfile_parse(const char *path, const unsigned char *bytes, size_t len,
                  const popfile_options *opt, popfile *pf, bn_error *err);

/* The format POPFILE_AUTO picks for these bytes of the file called path
 * (POPFILE_AUTO when it cannot tell), and a format's name: "csv", "tsv",
 * "npy" ("auto"). */
popfile_format popfile_detect(const char *path, const unsigned char *bytes,
                              size_t len);
const char *popfile_format_name(popfile_format f);

void popfile_free(popfile *pf);
/* A population of the rows of pf, which it takes over: pf is left empty
 * (and must still be freed on failure). */
int pop_from_file(popfile *pf, pop_t *pop, bn_error *err);

/* The truth: each feature's mean and variance (divisor n), by pop_moments.
 * mean and var receive f values each. */
void popfile_truth(const popfile *pf, double *mean, double *var);

#endif
