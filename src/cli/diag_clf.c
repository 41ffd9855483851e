/*
 * `bnstudy diagnose --type classifier ...`: the classifier of a run
 * trained as `bnstudy run` trains it, its batch-norm layer diagnosed with
 * the table a real model's are (model/clf_diag.h), and the same report.
 */
#include "cli/diag_report.h"

#include <math.h>
#include <string.h>

#include "base/buf.h"
#include "cli/cli.h"
#include "model/clf_diag.h"
#include "model/run.h"
#include "study/exp.h"

static void clf_what(const exp_t *e, const run_config *cfg,
                     const clf_evidence *ev, bn_buf *b)
{
    buf_printf(b, "%s: bnstudy's classifier (hidden %zu, %lu epoch%s, "
                  "batch size %zu, order %s, seed %llu), trained here; its "
                  "batch norm diagnosed on %zu training rows and %zu "
                  "held-out rows\n",
               e->popfile.file ? e->popfile.file : "the generated population",
               cfg->clf.hidden, cfg->epochs, cfg->epochs == 1 ? "" : "s",
               cfg->batch_size, cfg->order.name,
               (unsigned long long)cfg->seed, ev->n, ev->m);
}

int diagnose_classifier(const char *cmd, const exp_t *e,
                        const run_config *cfg, int tsv)
{
    exp_pops pops;
    run_setup s;
    clf_evidence ev;
    bn_error err, sub;
    bn_buf what = {0};
    int blame[2] = {-1, -1}, rc;
    memset(&s, 0, sizeof s);
    memset(&ev, 0, sizeof ev);
    if (exp_populations(e, 1, &pops, &err) != 0) {
        rc = cli_error(cmd, "%s", err.msg);
        goto done;
    }
    if (run_setup_make(&pops.p, cfg, blame, &s, &sub) != 0) {
        exp_blame(e, cfg, blame, sub.msg, &err);
        rc = cli_error(cmd, "%s", err.msg);
        goto done;
    }
    if (clf_diag(s.train, s.eval, s.perm, &s.rows, &ev, &err) != 0) {
        rc = cli_error(cmd, "%s", err.msg);
        goto done;
    }
    clf_what(e, &s.rows, &ev, &what);
    if (what.failed) {
        rc = cli_error(cmd, "out of memory");
        goto done;
    }
    report_layer l = {.name = "bn", .type = "classifier", .f = ev.h,
                      .tracked = ev.tracked,
                      .momentum = ev.cumulative ? NAN : ev.p, .eps = ev.eps,
                      .em = ev.em, .ev = ev.ev};
    clf_evidence_layer(&ev, &l.in);
    report_in in = {.n = 1, .layers = &l, .m = ev.model, .what = what.p};
    rc = diag_report(cmd, &in, NULL, tsv);
done:
    buf_free(&what);
    clf_evidence_free(&ev);
    run_setup_free(&s);
    exp_pops_free(&pops);
    return rc;
}
