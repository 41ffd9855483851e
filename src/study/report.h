/*
 * The diagnosis as `bnstudy diagnose` words it, written to a stream: the
 * model's verdict first, then a line per layer, the fixes measured;
 * --layer NAME and --tsv the per-feature detail. Also the words every
 * report shares. The command writes it to standard output, the web page
 * into its text (web/glue.c), so both say the same.
 */
#ifndef BN_REPORT_H
#define BN_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "model/config.h"
#include "model/diag.h"
#include "model/verdict.h"
#include "study/dumpdir.h"

/* Every cause in flags, comma-separated ("-" for none). */
void diag_causes_of(unsigned flags, char *buf, size_t cap);
/* The verdict's lines: the cause, where, the fix and what it measured;
 * alike, when the evidence is a checkpoint's, why it cannot tell the
 * cause from what the table's `alike` names (NULL: it can). */
void diag_print_verdict(FILE *fp, const verdict *v, const verdict_layer *l,
                        size_t n, const verdict_model *m, const char *alike);
/* One layer of a report: what its lines print, and its evidence. */
typedef struct {
    const char *name, *type;
    size_t f, tracked;
    double momentum, eps; /* momentum NaN: None */
    const double *em, *ev; /* the evaluation data's, for --tsv, or NULL */
    diag_layer in;
} report_layer;

typedef struct {
    size_t n;
    const report_layer *layers; /* in the order they run */
    verdict_model m;
    const char *what; /* lines on what was diagnosed, each ending '\n' */
    const char *alike; /* diag_print_verdict's, or NULL */
} report_in;

/* The verdict, what was diagnosed, a line per layer, the fixes measured,
 * and --layer's table; or with tsv a row per feature of every layer (of
 * the one named), to out. -1 with the message in err (nothing written). */
int diag_report_write(FILE *out, const report_in *in, const char *layer,
                      int tsv, bn_error *err);
/* The whole report of the dump d read from the folder dir (the name its
 * first line gives); layer NULL for all of them. */
int diagnose_dump(FILE *out, const dump_dir *d, const char *dir,
                  const char *layer, int tsv, bn_error *err);

#endif
