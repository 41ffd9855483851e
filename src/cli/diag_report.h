/*
 * `bnstudy diagnose`'s reports on standard output (study/report.h writes
 * them): a dump folder's, and the classifier's.
 */
#ifndef BN_DIAG_REPORT_H
#define BN_DIAG_REPORT_H

#include "model/config.h"
#include "study/report.h"

/* diag_report_write to standard output: 0, or CLI_EXIT_USAGE with the
 * message printed. */
int diag_report(const char *cmd, const report_in *in, const char *layer,
                int tsv);
/* The classifier of cfg (a finished experiment's configuration) trained
 * and its batch norm diagnosed, as `bnstudy run` would train it. */
struct exp_s;
int diagnose_classifier(const char *cmd, const struct exp_s *e,
                        const run_config *cfg, int tsv);
/* The whole report of the dump folder dir; layer NULL for all of them. */
int diagnose_dir(const char *cmd, const char *dir, const char *layer,
                 int tsv);

#endif
