/*
 * The report of `bnstudy diagnose DIR` (see report.h), written to any
 * stream: the command's standard output, or the web page's text. The
 * verdict comes first because it is what the user asked; the layers, the
 * fixes measured and the per-feature detail are its evidence.
 */
#include "study/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

void diag_causes_of(unsigned flags, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int c = 0; c < DIAG_N_CAUSES && len < cap; c++)
        if (flags & (1u << c))
            len += (size_t)snprintf(buf + len, cap - len, "%s%s",
                                    len ? "," : "", diag_cause_get(c)->name);
    if (!len)
        snprintf(buf, cap, "-");
}

static void print_acc(FILE *fp, double a)
{
    if (isnan(a))
        fputs("not measured", fp);
    else
        fprintf(fp, "%.3f", a);
}

/* "  measured: F gives evaluation mode A: <what that does>", or where
 * nothing scored it, "  not measured: F (why)". */
static void print_fix_line(FILE *fp, diag_fix f, const verdict_model *m)
{
    if (isnan(m->fix_acc[f])) {
        fprintf(fp, "  not measured: %s (nothing scores it in a recording, "
                    "a dump without evaluation labels, or a TorchScript "
                    "module, whose momentum and eps are constants)\n",
                diag_fix_name(f));
        return;
    }
    fprintf(fp, "  measured: %s gives evaluation mode ", diag_fix_name(f));
    print_acc(fp, m->fix_acc[f]);
    int closes = verdict_closes(m, f);
    fprintf(fp, "%s\n", closes == 1   ? ": it closes the gap"
                        : closes == 0 ? ": it does NOT close the gap"
                        : verdict_lowers(m, f)
                            ? ": it LOWERS evaluation mode"
                        : verdict_raises(m, f)
                            ? ": it raises evaluation mode"
                            : "");
}

/* Evaluation mode at or above training mode is kept as it is: no fix to
 * the statistics may lower it. */
static int keep_eval(const verdict *v)
{
    return !(v->gap > 0.0) && !isnan(v->gap);
}

/* Evaluation mode below training mode by no more than the tolerance a
 * fix is held to, for a cause with no fix recommended: the fix line says
 * there is nothing to fix, and the gap line need not say it again. */
static int none_within_tolerance(const verdict *v)
{
    return v->gap > 0.0 && !(v->gap > DIAG_FIX_CLOSES) &&
           v->cause != DIAG_HEALTHY && v->recommended == DIAG_FIX_NONE;
}

/* A cause whose fix can lower evaluation mode, and it was not measured:
 * the report names nothing it did not measure (a recording, a dump
 * without evaluation labels). `alike` is set for a checkpoint's
 * evidence, where a cause with an alike carries that one's risk. */
static int unmeasured_risk(const verdict *v, const verdict_model *m,
                           const char *alike)
{
    const diag_cause_info *c = diag_cause_get(v->cause);
    return c->risky && (!c->alike || alike) && v->fix != DIAG_FIX_NONE &&
           isnan(m->fix_acc[v->fix]);
}

/* A measured fix that closes the gap where the cause's fix is to retrain
 * (verdict.h's stopgap): named after that fix, as what to ship meanwhile,
 * without the words "measured: ... closes the gap" of a fix to apply. */
static void print_stopgap(FILE *fp, const verdict *v, const verdict_model *m)
{
    if (v->stopgap == DIAG_FIX_NONE)
        return;
    fprintf(fp, "  stopgap until retrained: %s (%s) was measured to give "
                "evaluation mode %.3f, within 0.03 of training mode's %.3f, "
                "but both are the network that learned from grouped "
                "batches: it narrows the two modes' gap and mends nothing\n",
            diag_fix_name(v->stopgap), diag_fix_get(v->stopgap)->words,
            m->fix_acc[v->stopgap], m->train_acc);
}

/* Evaluation mode at or above training mode, whatever the cause: one
 * line, the same for a cause whose fix touches the statistics and one
 * whose fix is to retrain or to ship as it is (docs/diagnose.md, "The
 * report"). */
static void print_keep(FILE *fp, const diag_cause_info *c)
{
    fputs("  fix: none: keep evaluation mode as it is, since it scores at or "
          "above training mode",
          fp);
    if (c->keep)
        fprintf(fp, " (%s)", c->keep);
    fprintf(fp, ". The cause's usual fix: %s\n", c->fix);
}

/* update_bn, which the fixes' words name, runs the whole model in
 * training mode: with dropout before a batch-norm layer it recomputes
 * the statistics with dropout on, and so keeps in them the variance
 * shift dropout gives in training, which recompute-train (dropout off)
 * does not. Said where the report names recomputing, and the dump saw
 * such dropout. */
static void print_update_bn(FILE *fp, const verdict *v,
                            const verdict_model *m)
{
    diag_fix rt = DIAG_FIX_RECOMPUTE_TRAIN;
    if (!m->dropout || !(v->fix == rt || v->recommended == rt ||
                         v->stopgap == rt || v->note != DIAG_HEALTHY))
        return;
    fprintf(fp, "  recompute with dropout off: this model runs %zu dropout "
                "module%s or call%s before its batch-norm layers, and "
                "torch.optim.swa_utils.update_bn puts the whole model in "
                "training mode, so it recomputes the statistics with dropout "
                "on and keeps dropout's variance shift in them; "
                "recompute-train, as measured here, sets model.eval() and "
                "only the batch-norm layers to training mode (momentum None, "
                "buffers reset) over the training batches\n",
            m->dropout, m->dropout == 1 ? "" : "s",
            m->dropout == 1 ? "" : "s");
}

/* The fix: keeping evaluation mode where it needs no statistics fixed
 * (for the cause's own reason), or until a fix that can lower it is
 * measured; the cause's own, or the one measured to close the gap where
 * the cause's own does not, first; then the cause's own as measured. */
static void print_fix(FILE *fp, const verdict *v, const verdict_model *m,
                      const char *alike)
{
    const diag_cause_info *c = diag_cause_get(v->cause);
    if (keep_eval(v) && v->cause != DIAG_HEALTHY &&
        v->recommended == DIAG_FIX_NONE)
        print_keep(fp, c);
    else if (none_within_tolerance(v))
        fprintf(fp, "  fix: none: evaluation mode is within 0.03 of "
                    "training mode, no gap to close. The cause's usual "
                    "fix, should the gap grow: %s\n",
                c->fix);
    else if (unmeasured_risk(v, m, alike))
        fprintf(fp, "  fix: none until measured: keep evaluation mode as it "
                    "is meanwhile, since %s can lower it (%s). Measure it: "
                    "dump the final checkpoint with "
                    "scripts/dump_bn_inputs.py and --eval-inputs, "
                    "--eval-labels (it scores %s; --reload FILE scores a "
                    "checkpoint's buffers). The cause's usual fix: %s\n",
                diag_fix_name(v->fix), c->keep, diag_fix_name(v->fix),
                c->fix);
    else if (v->recommended == DIAG_FIX_NONE || v->recommended == v->fix)
        fprintf(fp, "  fix: %s\n", c->fix);
    else {
        fprintf(fp, "  fix: %s (%s): measured to %s",
                diag_fix_name(v->recommended),
                diag_fix_get(v->recommended)->words,
                keep_eval(v) ? "raise evaluation mode, though it scores at "
                               "or above training mode"
                             : "close the gap");
        if (v->fix != DIAG_FIX_NONE)
            fprintf(fp, ", where %s, the cause's own, does not",
                    diag_fix_name(v->fix));
        fputc('\n', fp);
        print_fix_line(fp, v->recommended, m);
        if (v->retrain_after)
            fprintf(fp, "  then, the cause's own fix: %s\n", c->fix);
    }
    if (v->fix != DIAG_FIX_NONE)
        print_fix_line(fp, v->fix, m);
    print_stopgap(fp, v, m);
    print_update_bn(fp, v, m);
}

/* Batch-dependence with training mode below evaluation mode. */
static void print_batch_drop(FILE *fp, const verdict *v,
                             const verdict_model *m)
{
    fprintf(fp, "  training mode trails it by %.3f, and %.3f of the "
                "evaluation rows change their training-mode prediction "
                "when batched in another order: the batch dependence "
                "evaluation mode removes, with running statistics that "
                "match fresh ones; ship and score in evaluation mode\n",
            -v->gap, m->batch_dependence);
}

/* Whether there is a gap, where the fix lines have not said. */
static void print_gap(FILE *fp, const verdict *v, const verdict_model *m)
{
    if (keep_eval(v)) {
        if (v->cause == DIAG_HEALTHY)
            fputs("  evaluation mode scores at or above training mode: keep "
                  "it as it is\n", fp);
        if (v->batch_drop)
            print_batch_drop(fp, v, m);
    } else if (!(v->gap > DIAG_FIX_CLOSES)) {
        if (!none_within_tolerance(v))
            fputs("  evaluation mode is within 0.03 of training mode: no "
                  "gap to close\n", fp);
    } else if (v->recommended == DIAG_FIX_NONE && v->best_closes == 0) {
        fputs("  no measured fix closes the gap\n", fp);
    }
}

/* A cause its size would name that the dump measured to cost nothing
 * (verdict_harmless): a note beside the verdict, not the cause. */
static void print_note(FILE *fp, const verdict *v, const verdict_layer *l,
                       size_t n, const verdict_model *m)
{
    if (v->note == DIAG_HEALTHY)
        return;
    const verdict_layer *r = &l[v->note_root];
    diag_fix own = verdict_cause_fix(v->note, m);
    fprintf(fp, "  note: %s in %zu of %zu layer%s, first %s, by its size "
                "(%.2f of the outputs' spread there), but %s, its own fix, "
                "was measured to move evaluation mode by %+.3f, and the two "
                "modes agree within 0.03: the error is real, and costs "
                "nothing the evaluation data can measure, so it is not the "
                "cause (its usual fix: %s)\n",
            diag_cause_get(v->note)->name, v->note_with, n, n == 1 ? "" : "s",
            r->name, r->effect[v->note],
            diag_fix_name(own), m->fix_acc[own] - m->eval_acc,
            diag_cause_get(v->note)->fix);
}

void diag_print_verdict(FILE *fp, const verdict *v, const verdict_layer *l,
                        size_t n, const verdict_model *m, const char *alike)
{
    const diag_cause_info *c = diag_cause_get(v->cause);
    fprintf(fp, "verdict: %s", c->name);
    if (v->root < n) {
        fprintf(fp, ", in %zu of %zu layer%s, first %s", v->with, n,
                n == 1 ? "" : "s", l[v->root].name);
        if (v->with > 1) {
            fputs(" (", fp);
            for (size_t i = 0, k = 0; i < n; i++)
                if (l[i].cause == v->cause)
                    fprintf(fp, "%s%s", k++ ? ", " : "", l[i].name);
            fputc(')', fp);
        }
    }
    fprintf(fp, "\n  %s.\n", c->words);
    print_note(fp, v, l, n, m);
    if (v->lags_too)
        fprintf(fp, "  and lagging, in %zu of these layers, first %s: with "
                    "the initial values' part taken out, the buffers are "
                    "still off (in %zu of its %zu features, by %.2f of the "
                    "outputs' spread), so the activations also moved while "
                    "the average followed them (data that changed during "
                    "training, or the weights); the same fix mends both.\n",
                v->lags_too, l[v->lags_first].name,
                l[v->lags_first].lag_count, l[v->lags_first].f,
                l[v->lags_first].lag_effect);
    if (c->alike && alike)
        fprintf(fp, "  %s; %s.\n", c->alike, alike);
    if (!isnan(m->train_acc) || !isnan(m->eval_acc)) {
        fputs("  accuracy on the evaluation data: training mode ", fp);
        print_acc(fp, m->train_acc);
        fputs(", evaluation mode ", fp);
        print_acc(fp, m->eval_acc);
        fputc('\n', fp);
    }
    if (verdict_poor(m))
        fprintf(fp, "  the model is poor in both modes: the better scores "
                    "%.3f, less than half-way from the majority class's "
                    "share (%.3f) to 1, so closing the gap between the modes "
                    "(%.3f) leaves a poor model, and batch norm's gap is not "
                    "the main problem. Candidates this dump cannot test: the "
                    "order of the training batches (sorted or grouped by "
                    "class, which the exchange test sees only in layers whose "
                    "batch means depend on the class), too little training, "
                    "or the model itself\n",
                fmax(m->train_acc, m->eval_acc), m->majority,
                fabs(m->train_acc - m->eval_acc));
    print_fix(fp, v, m, alike);
    if (!isnan(v->gap))
        print_gap(fp, v, m);
    if (v->downstream)
        fprintf(fp, "  %zu later layer%s with another cause: downstream of "
                    "%s, whose inputs it changes\n",
                v->downstream, v->downstream == 1 ? "" : "s",
                l[v->root].name);
}

/* ------------------------------------------------------- the report */

typedef struct {
    const report_in *in;
    diag_feature **feat;
    verdict_layer *vl;
    verdict v;
} report;

static void report_free(report *r)
{
    for (size_t i = 0; r->feat && i < r->in->n; i++)
        free(r->feat[i]);
    free(r->feat);
    free(r->vl);
}

static int report_make(const report_in *in, report *r, bn_error *err)
{
    memset(r, 0, sizeof *r);
    r->in = in;
    size_t n = in->n;
    r->feat = calloc(n, sizeof *r->feat);
    r->vl = calloc(n, sizeof *r->vl);
    if (!r->feat || !r->vl)
        return bn_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const report_layer *l = &in->layers[i];
        if (!(r->feat[i] = malloc(l->f * sizeof **r->feat)))
            return bn_fail(err, "out of memory");
        if (diag_layer_run(&l->in, r->feat[i], err) != 0) {
            bn_error sub = *err;
            return bn_fail(err, "%s: %s", l->name, sub.msg);
        }
        r->vl[i] = (verdict_layer){.name = l->name, .f = l->f,
                                   .d = r->feat[i]};
        verdict_layer_sum(&r->vl[i], &in->m);
    }
    verdict_make(r->vl, n, &in->m, &r->v);
    return 0;
}

static void print_layers(FILE *out, const report *r)
{
    int w = (int)strlen("layer");
    for (size_t i = 0; i < r->in->n; i++)
        if ((int)strlen(r->vl[i].name) > w)
            w = (int)strlen(r->vl[i].name);
    fprintf(out, "\n%-*s  %-12s %8s %8s  %-16s %s\n", w, "layer", "type",
           "features", "tracked", "cause", "features by cause");
    for (size_t i = 0; i < r->in->n; i++) {
        const report_layer *l = &r->in->layers[i];
        fprintf(out, "%-*s  %-12s %8zu %8zu  %-16s", w, l->name, l->type, l->f,
               l->tracked, diag_cause_get(r->vl[i].cause)->name);
        for (int c = 0, k = 0; c < DIAG_N_CAUSES; c++)
            if (r->vl[i].count[c])
                fprintf(out, "%s%s %zu%s", k++ ? ", " : " ",
                       diag_cause_get(c)->name, r->vl[i].count[c],
                       c == DIAG_HEALTHY || r->vl[i].material & (1u << c)
                           ? ""
                       : r->vl[i].harmless & (1u << c)
                           ? " (measured to cost nothing)"
                           : " (immaterial)");
        fputc('\n', out);
    }
}

static void print_fixes(FILE *out, const report *r)
{
    const verdict_model *m = &r->in->m;
    int any = 0;
    for (int f = 1; f < DIAG_N_FIXES; f++)
        any |= !isnan(m->fix_acc[f]);
    if (!any)
        return;
    fprintf(out, "\nevaluation-mode accuracy on the evaluation data, each fix on "
           "a copy (training mode: ");
    print_acc(out, m->train_acc);
    fprintf(out, ")\n  %-16s ", "as it is");
    print_acc(out, m->eval_acc);
    fputc('\n', out);
    for (int f = 1; f < DIAG_N_FIXES; f++)
        if (!isnan(m->fix_acc[f])) {
            fprintf(out, "  %-16s ", diag_fix_name(f));
            print_acc(out, m->fix_acc[f]);
            fprintf(out, "%s\n", verdict_closes(m, f) == 1 ? "  closes the gap"
                            : verdict_lowers(m, f) ? "  lowers evaluation mode"
                                                   : "");
        }
    if (!isnan(m->batch_dependence))
        fprintf(out, "training mode: %.3f of the evaluation rows change their "
               "prediction when batched in another order\n",
               m->batch_dependence);
}

/* Trained on K devices: training mode's score above is a device
 * batch's; over whole batches it is what synchronised statistics give. */
static void print_devices(FILE *out, const verdict_model *m)
{
    if (m->devices < 2)
        return;
    fprintf(out, "trained on %zu devices: training mode above normalised "
                 "each device's share of a batch; over whole batches (what "
                 "SyncBatchNorm gives) it scores ",
            m->devices);
    print_acc(out, m->sync_acc);
    fputc('\n', out);
}

static void print_features_tsv(FILE *out, const report_layer *l,
                               const diag_feature *d, int head)
{
    if (head)
        fputs("layer\tfeature\ttrue_mean\ttrue_var\trunning_mean\t"
              "running_var\teval_mean\teval_var\tshift\tscale\teval_shift\t"
              "eval_scale\teval_ks\teval_out\tupdates\tinit_weight\t"
              "exchange\tamplification\ttrend_lag\toff_mean\toff_var\t"
              "off_ks\teffect\tcause\tcauses\tpad_shift\tpad_scale\t"
              "pad_explained\texchange_robust\texchange_trend\t"
              "label_exchange\n",
              out);
    for (size_t j = 0; j < l->f; j++) {
        char all[200];
        diag_causes_of(d[j].flags, all, sizeof all);
        fprintf(out, "%s\tf%zu\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t"
               "%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%zu\t%.17g\t%.17g\t"
               "%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%s\t"
               "%s\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\n",
               l->name, j, d[j].true_mean, d[j].true_var, d[j].running_mean,
               d[j].running_var, l->em ? l->em[j] : NAN,
               l->ev ? l->ev[j] : NAN, d[j].shift, d[j].scale,
               d[j].eval_shift, d[j].eval_scale, d[j].eval_ks, d[j].eval_out,
               d[j].updates, d[j].init_weight, d[j].exchange,
               d[j].amplification, d[j].trend_lag, d[j].off_mean,
               d[j].off_var, d[j].off_ks, d[j].effect,
               diag_cause_get(d[j].cause)->name, all, d[j].pad_shift,
               d[j].pad_scale, d[j].pad_explained, d[j].exchange_robust,
               d[j].exchange_trend, d[j].label_exchange);
    }
}

static void print_features(FILE *out, const report_layer *l,
                           const diag_feature *d)
{
    fprintf(out, "\nlayer %s (%s, %zu features): %zu batches tracked, momentum ",
           l->name, l->type, l->f, l->tracked);
    if (isnan(l->momentum))
        fprintf(out, "None");
    else
        fprintf(out, "%g", l->momentum);
    fprintf(out, ", eps %g; a mean is off beyond %.3g against the training "
           "data (a scale's limit grows with the kurtosis: --tsv), the "
           "evaluation data beyond a distance of %.3g\n",
           l->eps, d[0].off_mean, d[0].off_ks);
    fprintf(out, "%-8s %11s %11s %11s %11s  %7s %6s %7s %6s %6s  %8s "
                 "%8s  %s\n",
           "feature", "mean", "running", "var", "running", "shift", "scale",
           "e.shift", "e.scl", "e.dist", "exchange", "less one",
           "cause (and others that apply)");
    for (size_t j = 0; j < l->f; j++) {
        fprintf(out, "f%-7zu %11.4g %11.4g %11.4g %11.4g  %7.3g %6.3g %7.3g %6.3g "
               "%6.3g  %8.3g %8.3g  %s",
               j, d[j].true_mean, d[j].running_mean, d[j].true_var,
               d[j].running_var, d[j].shift, d[j].scale, d[j].eval_shift,
               d[j].eval_scale, d[j].eval_ks, d[j].exchange,
               d[j].exchange_robust,
               diag_cause_get(d[j].cause)->name);
        for (int c = d[j].cause + 1; c < DIAG_N_CAUSES; c++)
            if (d[j].flags & (1u << c))
                fprintf(out, " +%s", diag_cause_get(c)->name);
        fputc('\n', out);
    }
    fprintf(out, "\nshift, scale: the running statistics against the training "
           "data's own; e.shift, e.scl: the evaluation data against the "
           "training data,\nboth in evaluation mode; e.dist: the share of "
           "rows on which their distributions disagree most "
           "(Kolmogorov-Smirnov).\n");
}

int diag_report_write(FILE *out, const report_in *in, const char *layer,
                      int tsv, bn_error *err)
{
    report r;
    if (report_make(in, &r, err) != 0) {
        report_free(&r);
        return -1;
    }
    const report_layer *one = NULL;
    for (size_t i = 0; layer && i < in->n; i++)
        if (strcmp(in->layers[i].name, layer) == 0)
            one = &in->layers[i];
    if (layer && !one) {
        report_free(&r);
        return bn_fail(err, "--layer %s: no such layer", layer);
    }
    if (tsv) {
        for (size_t i = 0, head = 1; i < in->n; i++)
            if (!one || one == &in->layers[i]) {
                print_features_tsv(out, &in->layers[i], r.feat[i], (int)head);
                head = 0;
            }
    } else {
        diag_print_verdict(out, &r.v, r.vl, in->n, &in->m, in->alike);
        fprintf(out, "\n%s", in->what);
        print_layers(out, &r);
        print_fixes(out, &r);
        print_devices(out, &in->m);
        for (size_t i = 0; one && i < in->n; i++)
            if (one == &in->layers[i])
                print_features(out, one, r.feat[i]);
    }
    report_free(&r);
    return 0;
}

/* ------------------------------------------------------- a dump folder */

static void dump_what(const dump_dir *d, const char *dir, bn_buf *b)
{
    if (d->recording)
        buf_printf(b, "%s: %zu batch-norm layer%s\n", dir, d->n,
                   d->n == 1 ? "" : "s");
    else
        buf_printf(b, "%s: %s, %s; %zu batch-norm layer%s\n", dir, d->model,
                   d->loaded, d->n, d->n == 1 ? "" : "s");
    if (strcmp(d->notes, "-"))
        buf_printf(b, "  %s\n", d->notes);
    if (!d->hooked)
        buf_printf(b, "  no layer's inputs could be taken (a TorchScript "
                      "module takes no forward hooks): only the buffers' "
                      "own causes can show; save the model whole or as a "
                      "state_dict for the full diagnosis\n");
    else if (d->recording) {
        buf_printf(b, "  a recording over training (BNRecorder): the "
                      "training-mode calls' inputs%s; the statistics are "
                      "the model's as the recording ended\n",
                   d->weights_moved ? ", under weights that moved between "
                                      "calls (so no exchangeability test)"
                                    : "");
        for (size_t i = 0; i < d->n; i++) {
            const dump_layer *l = &d->layers[i];
            buf_printf(b, "  %s: %zu training-mode calls", l->name,
                       l->calls);
            if (l->unmoved_known)
                buf_printf(b, " (%zu left the buffers as they were)",
                           l->unmoved);
            buf_printf(b, ", %zu in evaluation mode under autograd, %zu "
                          "without; batches tracked %zu -> %zu\n",
                       l->eval_grad, l->eval_nograd, l->tracked_before,
                       l->tracked);
        }
    } else {
        buf_printf(b, "  the statistics diagnosed are the checkpoint's own, "
                      "as saved: the dump took every input on copies, so "
                      "nothing was re-trained or replayed; %zu rows of "
                      "training data in ",
                   d->train_rows);
        if (strcmp(d->batches_file, "-"))
            buf_printf(b, "the batches of %s", d->batches_file);
        else
            buf_printf(b, "batches of %zu", d->batch_size);
        buf_printf(b, "%s%s\n",
                   d->steps ? "" : ", training's steps not given (--epochs "
                                   "or --steps)",
                   d->eval_rows ? "" : ", no evaluation data");
    }
}

/* Why a checkpoint cannot tell a cause from what the table's `alike`
 * names: what the count of batches tracked says, and cannot. */
static void dump_alike(const dump_dir *d, bn_buf *b)
{
    size_t most = 0;
    for (size_t i = 0; i < d->n; i++)
        if (d->layers[i].tracked > most)
            most = d->layers[i].tracked;
    if (!d->steps)
        buf_printf(b, "training's steps were not given (--epochs or "
                      "--steps), so the batches tracked cannot tell either");
    else if (most > d->steps)
        buf_printf(b, "here the layers tracked up to %zu batches, more than "
                      "the %zu steps given: batches tracked before this "
                      "training (a fine-tune's pretraining), or several "
                      "passes a step, hide how many of these steps they "
                      "tracked",
                   most, d->steps);
    else
        buf_printf(b, "num_batches_tracked counts every training-mode "
                      "pass, at momentum 0 too");
}

int diagnose_dump(FILE *out, const dump_dir *d, const char *dir,
                  const char *layer, int tsv, bn_error *err)
{
    report_layer *rl = calloc(d->n ? d->n : 1, sizeof *rl);
    bn_buf what = {0}, alike = {0};
    int rc = -1;
    if (!rl) {
        bn_fail(err, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < d->n; i++) {
        const dump_layer *l = &d->layers[i];
        rl[i] = (report_layer){.name = l->name, .type = l->type, .f = l->f,
                               .tracked = l->tracked,
                               .momentum = l->momentum, .eps = l->eps,
                               .em = l->em, .ev = l->ev};
        dumpdir_evidence(l, &rl[i].in);
        rl[i].in.label_exchange = d->label_exchange;
    }
    dump_what(d, dir, &what);
    if (!d->recording)
        dump_alike(d, &alike);
    if (what.failed || alike.failed) {
        bn_fail(err, "out of memory");
        goto done;
    }
    report_in in = {.n = d->n, .layers = rl, .what = what.p,
                    .alike = alike.p};
    in.m.train_acc = d->train_acc;
    in.m.eval_acc = d->eval_acc;
    in.m.batch_dependence = d->batch_dependence;
    in.m.majority = d->majority;
    in.m.devices = d->devices;
    in.m.sync_acc = d->sync_acc;
    in.m.dropout = d->dropout;
    in.m.label_exchange = d->label_exchange;
    memcpy(in.m.fix_acc, d->fix_acc, sizeof in.m.fix_acc);
    if (layer && !dumpdir_find(d, layer))
        bn_fail(err, "--layer %s: no such layer in %s/layers.tsv", layer, dir);
    else
        rc = diag_report_write(out, &in, layer, tsv, err);
done:
    buf_free(&what);
    buf_free(&alike);
    free(rl);
    return rc;
}
