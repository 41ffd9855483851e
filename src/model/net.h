/*
 * The classifier's network: a sequence of layers declared as data (nn.h's
 * layer table: `[model] layers = linear:16 batch relu linear:K`; without
 * it Linear(F, H), batch norm over the H hidden units, ReLU, Linear(H, K)),
 * then softmax cross-entropy averaged over the batch. Batch norm is the
 * project's own layer (bn.h, with every setting it has; gamma and beta
 * learned). Trained by an optimiser of optim.h with PyTorch's update rules
 * over a given order of the rows, in float64 or float32, and scored in
 * training mode (each batch normalised by its own statistics) and in
 * evaluation mode (each row alone, with the running statistics).
 * docs/definitions.md defines every step to the letter.
 *
 * Everything is plain loops with sums in index order and no threads, so a
 * run is the same bits wherever it runs; the tensors are laid out as
 * PyTorch lays them out and named as an nn.Sequential of the layers would
 * name them in its state_dict ("0.weight"), so a PyTorch peer can load
 * them directly.
 */
#ifndef BN_NET_H
#define BN_NET_H

#include <stdint.h>
#include <stdio.h>

#include "base/common.h"
#include "base/pcg32.h"
#include "model/bn.h"
#include "model/config.h"
#include "model/nn.h"

/* A bound on the hidden units that keeps the sizes of the classifier's
 * arrays far from overflow; the batch-norm layer itself has none. */
#define CLF_MAX_HIDDEN NN_MAX_UNITS
/* The default network's hidden blocks, at most: 3 layers each and the
 * last fit NN_MAX_LAYERS. */
#define CLF_MAX_DEPTH 8

/* Rows to train on or score: n x f features, row-major, and a label in
 * [0, k) per row. */
typedef struct {
    size_t n, f, k;
    const double *x;
    const int *label;
    /* NULL, or the rows through the layers below the first batch norm
     * (net_share_rows), where a pass starts instead of at x. */
    double *shared;
} net_data;

typedef struct {
    size_t f, k, bmax;
    size_t cap; /* rows the batch buffers hold, bmax or more */
    int f32;    /* dtype float32 */
    size_t nl;
    nn_layer *l; /* the layers, nl of them */
    nn_net_spec spec;
    pcg32_t drop_rng; /* dropout's masks */
    size_t steps; /* optimiser steps taken: the first one starts SGD's
                   * buffers, Adam's t is steps + 1 */
    unsigned long epoch; /* the epoch being trained, for the schedule */
    /* The last forward pass, cap rows at most, kept for the backward. */
    size_t b;
    nn_bn_mode mode;
    const double *x; /* the inputs, b x F (float32 values in float32) */
    const int *label;
    double *xbuf; /* a batch gathered from an order, cap x F */
    int *lbuf;    /* and its labels */
    double *prob; /* softmax, b x K */
    double *loss; /* per row, b */
    double *dz;   /* b x K */
    double *grad[2]; /* the backward's gradients between layers */
    double *block; /* the one allocation the net's own arrays live in */
} net_t;

/* After the backward pass of one training batch, before the optimiser's
 * step. */
typedef struct {
    unsigned long epoch; /* from 0 */
    size_t index, b;     /* batch index in the epoch, its rows */
    const size_t *rows;  /* the batch's row indices */
    double loss;         /* the batch's mean loss */
    const net_t *net;  /* parameters before the step, gradients */
} net_step;

typedef struct {
    void (*on_step)(void *ctx, const net_step *s);
    /* After epoch `epoch` (from 0): the net as it then is. */
    void (*on_epoch)(void *ctx, unsigned long epoch, net_t *net);
    void *ctx;
} net_observer;

typedef struct {
    size_t rows, correct;
    double accuracy; /* correct / rows */
    double loss;     /* mean cross-entropy over the rows */
} net_score;

/* "batch" and "none" by value, NULL past the last. */
const char *net_norm_name(int n);
int net_norm_parse(const char *s, net_norm *n);
/* The layers cfg's network has: [model] layers, or the network of hidden,
 * norm and depth. */
void net_spec_of(const clf_settings *s, nn_net_spec *spec);

/* Whether s's network has a batch-norm layer; one right after a linear or
 * conv layer (whose weights' scale it normalises away). */
int net_has_batch(const clf_settings *s);
int net_has_weights_before_bn(const clf_settings *s);
/* Whether layer i of spec is a batch norm right after a weighted layer
 * (none layers between count for nothing), and that layer's index
 * (spec->n when it is not). */
int net_spec_scale_invariant(const nn_net_spec *spec, size_t i);
size_t net_weighted_before(const nn_net_spec *spec, size_t i);

/* Allocate for F inputs, K classes and batches of cfg->batch_size rows,
 * and draw the initial weights: cfg->clf's settings, batch norm's from
 * cfg->layer but for gamma and beta, which start at 1 and 0 (they are
 * learned). The settings' ranges are the model's check's
 * (classifier.h); this checks the layers' shapes and what the sizes
 * depend on. */
int net_init(net_t *net, const run_config *cfg, size_t f, size_t k,
             bn_error *err);
void net_free(net_t *net);
/* The parameter tensors in the order they are drawn, stepped and written
 * (layer by layer, weight then bias); at most 2 NN_MAX_LAYERS. */
size_t net_tensors(net_t *net, nn_tensor **t);
/* The logits of the last forward pass, b x K. */
const double *net_logits(const net_t *net);
/* The batch-norm layers (kind batch): how many, and the i-th's index in
 * net->l. */
size_t net_batch_layers(const net_t *net);
size_t net_batch_layer(const net_t *net, size_t i);

/* Forward b <= cap rows; returns the mean loss. A training pass (train)
 * draws dropout's masks. In float32 the rows are rounded to float32 as
 * they enter (x is then net->xbuf's copy). */
double net_forward(net_t *net, size_t b, const double *x, const int *label,
                   nn_bn_mode mode, int train);
/* Gradients of that mean loss into the tensors' g. */
void net_backward(net_t *net);
/* One optimiser step (cfg's optimiser, its learning rate for this step
 * and epoch). */
void net_optim_step(net_t *net, const run_config *cfg);

/* E epochs over perm (d->n indices), then net_finish. cfg is the one the
 * net was made with. */
int net_train(net_t *net, const run_config *cfg, const net_data *d,
              const size_t *perm, const net_observer *obs, bn_error *err);
/* What the estimator does after training (precise: each batch-norm
 * layer's buffers become the pooled moments of its inputs, in evaluation
 * mode up to it, over the first precise_batches batches of perm, layer by
 * layer); nothing for the others. */
int net_finish(net_t *net, const run_config *cfg, const net_data *d,
               const size_t *perm, bn_error *err);
/* Mean and variance (divisor: the values) per channel of what layer li
 * sees, over rows[0..n-1] (NULL: the first n rows) under the current
 * weights, the layers before it in evaluation mode: the precise
 * estimator's buffers, and the truth a score of the buffers' error
 * compares them with. */
int net_layer_moments(net_t *net, const net_data *d, const size_t *rows,
                      size_t n, size_t li, double *mean, double *var,
                      bn_error *err);
/* The inputs of layer li (n x its input size, as net_layer_moments sees
 * them) for rows[0..n-1] into out. */
void net_layer_inputs(net_t *net, const net_data *d, const size_t *rows,
                      size_t n, size_t li, double *out);
/* The layers below the first batch norm (at most all but the last):
 * each row's outputs there are its own and the same in both modes, so
 * the scores compute them once for a set of rows. */
size_t net_shared_layers(const net_t *net);
/* d->shared: d's rows (n x the shared layers' output size) through them
 * under the current weights, or NULL where there are none; free() it.
 * While set, the score and moment passes over d start from it. */
int net_share_rows(net_t *net, net_data *d, bn_error *err);
/* Training mode: every row of perm once, in net_score_batches(n, bmax)
 * consecutive batches of nearly equal size, each normalised by its own
 * statistics; the buffers are left as they are. With pred (NULL: none),
 * row i's predicted class goes to pred[i], and with logits its K logits
 * to logits[i K ...], here and in evaluation mode. */
int net_score_train_mode(net_t *net, const net_data *d, const size_t *perm,
                         net_score *s, int *pred, double *logits,
                         bn_error *err);
/* The batches a training-mode score cuts n >= 2 rows into: ceil(n / B),
 * the first n mod that many one row larger than the rest, so none is
 * larger than B and none has one row. Batch k's first row is
 * net_score_batch_start(n, nb, k). */
size_t net_score_batches(size_t n, size_t b);
size_t net_score_batch_start(size_t n, size_t nb, size_t k);
/* Evaluation mode: every row alone, with the running statistics. */
int net_score_eval_mode(net_t *net, const net_data *d, net_score *s,
                        int *pred, double *logits, bn_error *err);

/* Parameters and buffers as TSV rows under CLF_WEIGHTS_HEADER, one value
 * a row, %.17g; net_write_grads the same for the gradients (stage grad:
 * the first training batch's, before its step). */
#define CLF_WEIGHTS_HEADER "stage\ttensor\ti\tj\tvalue\n"
int net_write_weights(FILE *fp, const char *stage, net_t *net);
int net_write_grads(FILE *fp, const char *stage, net_t *net);

#endif
