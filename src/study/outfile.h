/*
 * The files a sweep can write: one row each (its name in `[experiment]
 * outputs`, its file, whether it needs many seeds, the one model it has
 * rows of, its help). The experiment checks `outputs` against it, the
 * sweep opens by it, and the result directory knows its files by it; the
 * writers of each file are out.h's.
 */
#ifndef BN_OUTFILE_H
#define BN_OUTFILE_H

#include <stddef.h>

/* The files a sweep can write, for `[experiment] outputs`. */
typedef enum {
    OUT_SUMMARY, OUT_FEATURES, OUT_TABLE, OUT_MANIFEST, OUT_DISTRIBUTION,
    OUT_EXPECTATION, OUT_CURVE, OUT_EFFECTIVE, OUT_FILE_COUNT
} out_file_id;

typedef struct {
    const char *name; /* as `outputs` names it */
    const char *file; /* in DIR/<stem>/ */
    int many_seeds;   /* written only when the seed axis has many values */
    int model;        /* -1, or the only model whose runs it has rows of */
    const char *help;
} out_file_def;

/* Row i of the file table, NULL past the last. */
const out_file_def *out_file_get(int i);
/* The file called name, or -1. */
int out_file_find(const char *name);
const char *out_file_list(const char *sep, char *buf, size_t cap);

#endif
