/*
 * The claims verifier. Claims are data (an INI file, one section per claim)
 * and each is a test on the results' TSV files:
 *
 *   [id]
 *   claim     = the wording
 *   published = the published figure it echoes
 *   test      = value | ratio | all | within | increasing | decreasing
 *               | pairwise | worst-feature | fraction
 *   a, b      = selectors "EXPERIMENT: COLUMN @ key=value, key=value",
 *               rows of EXPERIMENT/summary.tsv; "EXPERIMENT/NAME: ..."
 *               reads EXPERIMENT/NAME.tsv (features, distribution, ...);
 *               a filter value may list alternatives, feature=f0|f1
 *   op        = >= > <= < ==     value = the bound
 *   over      = the column(s) that order or pair rows (batch_size)
 *   at        = optional values of `over` to keep
 *   tolerance = absolute slack for ==
 *   each      = fraction's per-seed test: an op (a op factor x b) or
 *               increasing | decreasing (a's rows ordered by over)
 *   factor    = fraction's and pairwise's multiplier of b (1)
 *   by        = the column fraction pairs and groups rows by (seed)
 *
 * value: a op value.  ratio: a / b op value.  all: every row of a op
 * value.  within: every row of a has |a| <= value.  increasing, decreasing:
 * a's rows, ordered by over, strictly so.  pairwise: a op factor x b for
 * each value of over, the rows matched on it.  worst-feature: every row of
 * a names as its worst_var_feature the feature whose true variance is
 * farthest from the running variance's initial 1 (from the experiment's
 * features.tsv).
 * fraction: the share of the values of `by` (the seeds) in which `each`
 * holds, op value.
 *
 * Each test kind is a function behind the table in verify.c; the file is
 * parsed whole (kinds and ops to enums, selectors to their parts) before
 * any claim is evaluated, so a malformed claim stops everything. A cell
 * that must be a number and is not is an error naming the file, its line
 * and the column, never a 0.
 */
#ifndef BN_VERIFY_H
#define BN_VERIFY_H

#include <stdio.h>

#include "base/common.h"

typedef struct {
    int passed, failed;
} verify_counts;

/* Print one line per claim to out; -1 when a claim or its results cannot
 * be read (err says which), else 0 with the counts filled. */
/* The name of claim test kind i (the claims file's `test =`), NULL past
 * the last: for the tests, which hold each kind to cases of its own. */
const char *verify_kind_name(size_t i);

int verify_claims(const char *claims_path, const char *results_dir,
                  FILE *out, verify_counts *counts, bn_error *err);

#endif
