/*
 * Output files. Every file bnstudy writes goes to a temporary name in the
 * destination's directory and is renamed into place only once complete, so
 * a failure never leaves a half-written result. The TSV writers print the
 * columns of docs/definitions.md, numbers with %.17g.
 */
#ifndef BN_OUT_H
#define BN_OUT_H

#include <stdio.h>

#include "common.h"
#include "pop.h"
#include "run.h"

typedef struct {
    FILE *fp;
    char path[4096];
    char tmp[4096];
} out_file;

/* Create a temporary file beside path; err names path on failure. */
int out_open(out_file *of, const char *path, bn_error *err);
/* Flush and close, keeping the temporary; on failure it is removed. */
int out_finish(out_file *of, bn_error *err);
/* Finish every file of files[0..n-1] (those never opened are skipped),
 * then rename each into place: no rename happens unless all were written.
 * On failure the caller's out_abort removes what is left. */
int out_commit_all(out_file *files, size_t n, bn_error *err);
/* Close and remove the temporary (safe on a file never opened). */
void out_abort(out_file *of);

void out_summary_header(FILE *fp);
void out_summary_row(FILE *fp, const pop_t *pop, const run_config *cfg,
                     const run_result *res);
/* Index of a summary column by name, or -1; reading tables may also name
 * the settings partial and precise_batches. */
int out_summary_column(const char *name);
/* A Markdown reading table of the given summary columns, reals rounded to
 * 4 decimals as the published table is. */
void out_table_header(FILE *fp, size_t n, const int *cols);
void out_table_cell(FILE *fp, int col, const pop_t *pop,
                    const run_config *cfg, const run_result *r);
void out_table_row(FILE *fp, size_t n, const int *cols, const pop_t *pop,
                   const run_config *cfg, const run_result *r);
void out_features_header(FILE *fp);
void out_features_rows(FILE *fp, const pop_t *pop, const run_config *cfg,
                       const run_result *res);
/* The population's rows in the given order: header `row` then features. */
void out_population(FILE *fp, const pop_t *pop, const size_t *perm);

#endif
