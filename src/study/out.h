/*
 * Output files. Every file bnstudy writes goes to a temporary name in the
 * destination's directory and is renamed into place only once complete, so
 * a failure never leaves a half-written result. The file table says which
 * files a sweep can write; the TSV writers print the key columns of the
 * key table (exp.h) and the scores of the score table (score.h), the
 * published study's columns first (docs/definitions.md), numbers with
 * %.17g.
 */
#ifndef BN_OUT_H
#define BN_OUT_H

#include <stdio.h>

#include "base/buf.h"
#include "study/exp.h"
#include "base/common.h"
#include "pop/pop.h"
#include "model/run.h"

typedef struct {
    FILE *fp;
    char path[4096];
    char tmp[4096];
    int cleanup; /* cleanup.h's handle of tmp */
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
/* Whether paths a and b name one file (the same file, or the same name in
 * the same directory), so that two outputs never overwrite each other. */
int out_same_file(const char *a, const char *b);

/* The files a command reads, which no output may replace: known by device
 * and inode, so no spelling of a path (./x, a hard link) gets past; and
 * the directories it reads (a merge's shards), which no result set may
 * replace. */
typedef struct {
    size_t n;
    struct {
        const char *path;
        unsigned long long dev, ino;
    } file[4];
    char *const *dirs;
    size_t n_dirs;
} out_inputs;

/* Add the file at path (NULL is skipped) to ins. */
int out_inputs_add(out_inputs *ins, const char *path, bn_error *err);
/* -1, with a message naming both, when path is one of ins's files. */
int out_check_not_input(const out_inputs *ins, const char *path,
                        bn_error *err);

/* summary.tsv: the study's key columns, the scores, bnstudy's other key
 * columns, each only if its model is in the mask `models` (bit m:
 * run_model_id m is trained in the file; "-" in the rows of the other
 * models); reals %.17g. */
void out_summary_header(bn_buf *fp, unsigned models);
void out_summary_row(bn_buf *fp, unsigned models, const pop_t *pop,
                     const run_config *cfg, const run_result *res);
/* A Markdown reading table of the given summary columns, reals rounded to
 * 4 decimals as the published table is. */
void out_table_header(bn_buf *fp, size_t n, const exp_column *cols);
void out_table_cell(bn_buf *fp, const exp_column *col, const pop_t *pop,
                    const run_config *cfg, const run_result *r);
void out_table_row(bn_buf *fp, size_t n, const exp_column *cols,
                   const pop_t *pop, const run_config *cfg,
                   const run_result *r);
/* curve.tsv: one row per classifier configuration and epoch (1..E),
 * summary.tsv's key columns around `epoch` and the classifier's scores as
 * they were after that epoch (run.h's on_epoch). */
void out_curve_header(bn_buf *fp, unsigned models);
void out_curve_row(bn_buf *fp, unsigned models, const pop_t *pop,
                   const run_config *cfg, unsigned long epoch,
                   const run_result *r);
/* features.tsv: one row per feature, the same key columns around the
 * feature's truth (the evaluation rows'), running statistics and its own
 * train/eval RMS. */
void out_features_header(bn_buf *fp, unsigned models);
void out_features_rows(bn_buf *fp, unsigned models, const pop_t *pop,
                       const run_config *cfg, const run_result *res);
/* effective.tsv: one row per feature (a channel of feature maps), the
 * same key columns around what a batch mean of batch_size whole samples
 * knows (convpop_effective_rows over pop's rows: the count of values, the
 * count with the finite-population correction, the exact variance of the
 * batch mean over orderings of the samples, the effective count and its
 * ratio to the count) and the run's own mean squared batch-mean error
 * over its last epoch. */
void out_effective_header(bn_buf *fp, unsigned models);
void out_effective_rows(bn_buf *fp, unsigned models, const pop_t *pop,
                        const run_config *cfg, const run_result *res);
/* The header line of a file of rows, one a configuration or more
 * (summary, features, curve or effective: file is its out_file_id);
 * nothing for the other files, whose first lines are made elsewhere. */
void out_rows_header(bn_buf *fp, int file, unsigned models);
/* What the writers put in the column called name of bnstudy's TSV files
 * (summary, features, curve, effective, distribution, expectation), for
 * the readers that take numbers back (numread.h): OUT_CELL_TEXT for a
 * column of names (a text setting, a feature, a score's name), else a
 * number and the stand-ins the writers may put there instead,
 * NUMREAD_DASH where a row has no value (a setting or a score of another
 * model) and NUMREAD_INF where a relative score or its summary across
 * seeds is infinite. A name no writer writes reads as a number. */
#define OUT_CELL_TEXT 0x100u
unsigned out_column_cells(const char *name);
/* The population's rows in the given order: header `row` then the
 * features, then the label and group columns when the population has them
 * (a column both label and group once), cells their level's name. */
void out_population(bn_buf *fp, const pop_t *pop, const size_t *perm);

#endif
