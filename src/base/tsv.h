/*
 * Reading bnstudy's own TSV files back (for the claims verifier and the
 * figures; from memory for the web page's figures): a header row naming
 * the columns, then rows of tab-separated cells, all kept as text so
 * that nothing is rounded on the way in.
 */
#ifndef BN_TSV_H
#define BN_TSV_H

#include <stddef.h>

#include "base/common.h"

typedef struct {
    size_t ncol, nrow;
    char **names;  /* ncol */
    char **cells;  /* nrow x ncol, row-major */
    char *buf;     /* the file's bytes, which names and cells point into */
    size_t held;   /* bytes of the reading budget (input.h) it holds */
} tsv_table;

/* The limits of what is read: the file, and one field (messages quote
 * fields whole). The file and its fields' pointers are held within the
 * reading budget too (input.h). A column named twice is refused: a reader
 * by name would see only the first. */
#define TSV_MAX_BYTES (512u << 20)
#define TSV_MAX_FIELD 4096

int tsv_read(const char *path, tsv_table *t, bn_error *err);
/* The same of len bytes of text held in memory (copied; at most
 * TSV_MAX_BYTES, no NUL), name standing for the file in messages. */
int tsv_parse(const char *name, const char *text, size_t len, tsv_table *t,
              bn_error *err);
void tsv_free(tsv_table *t);
/* Column index by name, or -1. */
int tsv_column(const tsv_table *t, const char *name);
const char *tsv_cell(const tsv_table *t, size_t row, size_t col);
/* A cell that must be a finite number, or a count (a whole number from 0
 * to 1e15); the message names path, the line and the column. */
int tsv_number(const tsv_table *t, const char *path, size_t row, int col,
               double *out, bn_error *err);
int tsv_count(const tsv_table *t, const char *path, size_t row, int col,
              size_t *out, bn_error *err);
/* The index of the column name in *col, or a message naming path. */
int tsv_need_column(const tsv_table *t, const char *path, const char *name,
                    int *col, bn_error *err);

#endif
