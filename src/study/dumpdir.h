/*
 * Reading a dump folder back (scripts/dump_bn_inputs.py, docs/diagnose.md
 * "The dump"): the model's keys, its layers in the order they ran, the
 * fixes it scored, and per layer the checkpoint's buffers and settings
 * with the fresh statistics of the training and evaluation data; or a
 * recording over training (BNRecorder), whose layers hold the rows each
 * training-mode call normalised. Every file is read bounded, and every
 * refusal names the file and line.
 */
#ifndef BN_DUMPDIR_H
#define BN_DUMPDIR_H

#include <stddef.h>

#include "base/common.h"
#include "model/diag.h"

typedef struct {
    char *name, *type, *dtype;
    size_t f;
    double *rm, *rv, *m0, *v0;   /* m0, v0: a recording's start, or NULL */
    double *tm, *tv, *uv;        /* the training data's, fresh */
    double *bv;                  /* the batches' mean unbiased variance */
    double *em, *ev;             /* the evaluation data's, or NULL */
    double *bm;                  /* n_batches x f batch means, or NULL */
    size_t *bunits, n_batches, units;
    double *lag;                 /* a recording's trend lag, or NULL */
    /* From the rows kept (diag.h's diag_layer says what each is). */
    double *kurt, *eshift, *escale, *eks, *eout, *tout;
    double *tem, *tev;           /* the training data's in evaluation mode */
    size_t tracked, updates, steps;
    /* A recording's: the count when it began, its training-mode calls,
     * and those of them that left the buffers as they were. */
    size_t tracked_before, calls, unmoved, eval_grad, eval_nograd;
    size_t batch_size, rows_per_sample, train_samples, eval_samples;
    size_t largest_batch;        /* samples, when batches differed; or 0 */
    double momentum;             /* PyTorch's; NaN for None */
    double dropout;              /* dropout_before: 0 when absent */
    double eps;
    int training_as_saved, fresh_fixed, recorded, unmoved_known;
    /* A recording: the rows and batches, for the replay. */
    double *x;
    size_t n_rows, *batch_rows;
    /* Padded sequences (--train-lengths, or a recording's
     * BNRecorder.batch): the training data's real positions' and
     * padding's statistics (NULL without), the padded
     * shares (NaN: unknown), and the positions training mode normalised
     * over (diag_layer's norm_real). */
    double *real_m, *real_v, *pad_m, *pad_v;
    double *real_bv; /* the batches' real positions' unbiased variance */
    double pad_train, pad_eval;
    int norm_real;
} dump_layer;

typedef struct {
    int recording;               /* BNRecorder's folder, not a dump */
    int hooked;                  /* the layers' inputs were taken */
    char *model, *loaded, *notes;
    char *batches_file;          /* --batches FILE's name, or "-" */
    size_t steps, batch_size, train_rows, eval_rows, max_rows;
    int weights_moved;
    double train_acc, eval_acc, batch_dependence;
    double majority; /* majority_rate: NaN when absent (older dumps) */
    /* --devices K (0 when absent) and training mode's accuracy over whole
     * batches then (sync_mode_accuracy; NaN when absent). */
    size_t devices;
    double sync_acc;
    /* dropout_before_bn: dropout modules or calls that run before a
     * batch-norm layer; 0 when absent (older dumps, recordings,
     * TorchScript). */
    size_t dropout;
    /* label_exchange: the training batches' class counts against random
     * batches' (diag.h's diag_layer); NaN when absent (no --labels, a
     * recording, older dumps). */
    double label_exchange;
    double fix_acc[DIAG_N_FIXES];
    dump_layer *layers;
    size_t n;
} dump_dir;

int dumpdir_read(const char *dir, dump_dir *d, bn_error *err);
/* The same of files held in memory (the web page's, dropped), each named
 * by its path as dumpdir_read would open it ("DIR/model.tsv"); every
 * message names that path. */
typedef struct {
    const char *path;
    const unsigned char *bytes;
    size_t len;
} dump_file;
int dumpdir_read_files(const char *dir, const dump_file *files, size_t n,
                       dump_dir *d, bn_error *err);

/* A layer's settings file (NAME.layer.tsv, key and value columns):
 * PyTorch's momentum, the new value's weight (NaN for None, the
 * cumulative average), eps, and the buffers' dtype ("float64" when the
 * file has no dtype row); PyTorch's running variance is the unbiased
 * one. recorded: the file is a recording's (BNRecorder writes a
 * `recorded` row, the dumper none). */
typedef struct {
    double momentum, eps;
    char dtype[16];
    int recorded;
} dump_settings;
int dumpdir_settings(const char *path, dump_settings *s, bn_error *err);
void dumpdir_free(dump_dir *d);
/* The layer's evidence for diag_layer_run (pointers into the layer). */
void dumpdir_evidence(const dump_layer *l, diag_layer *in);
/* The layer named name, or NULL. */
const dump_layer *dumpdir_find(const dump_dir *d, const char *name);

#endif
