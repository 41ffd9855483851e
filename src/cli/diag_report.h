/*
 * `bnstudy diagnose DIR`: a dump folder's report, the model's verdict
 * first, then a line per layer, the fixes measured; --layer NAME and --tsv
 * the per-feature detail. Also the words every report shares.
 */
#ifndef BN_DIAG_REPORT_H
#define BN_DIAG_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "model/diag.h"
#include "model/verdict.h"

/* Every cause in flags, comma-separated ("-" for none). */
void diag_causes_of(unsigned flags, char *buf, size_t cap);
/* The verdict's lines: the cause, where, the fix and what it measured. */
void diag_print_verdict(FILE *fp, const verdict *v, const verdict_layer *l,
                        size_t n, const verdict_model *m);
/* The whole report of the folder dir; layer NULL for all of them. */
int diagnose_dir(const char *cmd, const char *dir, const char *layer,
                 int tsv);

#endif
