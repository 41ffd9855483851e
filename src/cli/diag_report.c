/*
 * `bnstudy diagnose`'s reports on standard output: study/report.c words
 * them, this says a failure as the command says every failure.
 */
#include "cli/diag_report.h"

#include <stdio.h>

#include "cli/cli.h"
#include "study/dumpdir.h"

int diag_report(const char *cmd, const report_in *in, const char *layer,
                int tsv)
{
    bn_error err;
    if (diag_report_write(stdout, in, layer, tsv, &err) != 0)
        return cli_error(cmd, "%s", err.msg);
    return 0;
}

int diagnose_dir(const char *cmd, const char *dir, const char *layer,
                 int tsv)
{
    dump_dir d;
    bn_error err;
    int rc = dumpdir_read(dir, &d, &err) != 0 ||
                     diagnose_dump(stdout, &d, dir, layer, tsv, &err) != 0
                 ? cli_error(cmd, "%s", err.msg)
                 : 0;
    dumpdir_free(&d);
    return rc;
}
