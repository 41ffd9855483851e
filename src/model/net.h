/*
 * The classifier: the smallest network in which batch norm's two modes can
 * be seen in a prediction. Linear(F, H), batch norm over the H hidden units
 * (the project's own layer, bn.h, with every setting it has; gamma and beta
 * learned), ReLU, Linear(H, K), softmax cross-entropy averaged over the
 * batch. `norm = none` is the same network without the normalisation.
 * Trained by minibatch SGD with PyTorch's update rule over a given order of
 * the rows, and scored in training mode (each batch normalised by its own
 * statistics) and in evaluation mode (each row alone, with the running
 * statistics). docs/definitions.md defines every step to the letter.
 *
 * Everything is plain loops with sums in index order and no threads, so a
 * run is the same bits wherever it runs; the tensors are laid out as
 * PyTorch lays them out (weight[out][in], row-major) and named as its
 * state_dict names them, so a PyTorch peer can load them directly.
 */
#ifndef BN_NET_H
#define BN_NET_H

#include <stdint.h>
#include <stdio.h>

#include "model/bn.h"
#include "base/common.h"
#include "base/pcg32.h"
#include "model/config.h"

/* What batch norm normalises a forward pass with. */
typedef enum {
    CLF_BN_BATCH,      /* the batch's own statistics; buffers updated */
    CLF_BN_BATCH_KEEP, /* the batch's own statistics; buffers untouched */
    CLF_BN_RUNNING,    /* the buffers (eval mode, and frozen training) */
} net_bn_mode;

/* A bound on the hidden units that keeps the sizes of the classifier's
 * arrays far from overflow; the batch-norm layer itself has none. */
#define CLF_MAX_HIDDEN 65536

/* Rows to train on or score: n x f features, row-major, and a label in
 * [0, k) per row. */
typedef struct {
    size_t n, f, k;
    const double *x;
    const int *label;
} net_data;

/* One parameter tensor (rows x cols, a vector has cols 1), its gradient
 * and its SGD momentum buffer. */
typedef struct {
    const char *name; /* PyTorch's state_dict name, e.g. "fc1.weight" */
    size_t rows, cols;
    double *p, *g, *v;
} net_tensor;

#define CLF_MAX_TENSORS 6

typedef struct {
    size_t f, h, k, bmax;
    size_t cap; /* rows the batch buffers hold, bmax or more */
    net_norm norm;
    bn_layer bn; /* gamma and beta are parameters; rm and rv its buffers */
    double *w1, *b1, *w2, *b2;             /* fc1: H x F, fc2: K x H */
    double *dw1, *db1, *dgamma, *dbeta, *dw2, *db2;
    double *vw1, *vb1, *vgamma, *vbeta, *vw2, *vb2;
    size_t steps; /* SGD steps taken: the first one starts the buffers */
    /* The last forward pass, cap rows at most, kept for the backward. */
    size_t b;
    net_bn_mode mode;
    const double *x; /* the inputs, b x F */
    const int *label;
    double *xbuf; /* a batch gathered from an order, cap x F */
    int *lbuf;    /* and its labels */
    double *hpre; /* fc1's output, b x H */
    double *xhat; /* normalised, b x H (hpre itself when norm is none) */
    double *act;  /* after batch norm's affine step and ReLU, b x H */
    double *z;    /* logits, b x K */
    double *prob; /* softmax, b x K */
    double *loss; /* per row, b */
    double *mean, *var, *sd; /* what batch norm normalised with, H each */
    double *dact, *dh; /* backward scratch, b x H */
    double *dz;        /* b x K */
    double *wt;        /* a weight matrix in pairs of rows, scratch */
    double *block; /* the one allocation the double arrays live in */
} net_t;

/* After the backward pass of one training batch, before the SGD step. */
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

/* Allocate for F inputs, K classes and batches of cfg->batch_size rows,
 * and draw the initial weights: cfg->clf's settings, batch norm's from
 * cfg->layer but for gamma and beta, which start at 1 and 0 (they are
 * learned). The settings' ranges are the model's check's
 * (classifier.h); this checks only what the sizes depend on. */
int net_init(net_t *net, const run_config *cfg, size_t f, size_t k,
             bn_error *err);
void net_free(net_t *net);
/* The parameter tensors in the order they are drawn, stepped and written:
 * fc1.weight, fc1.bias, [bn.weight, bn.bias,] fc2.weight, fc2.bias. */
size_t net_tensors(net_t *net, net_tensor *t);
/* A uniform double in [0, 1) from two draws; see the definition. */
double net_uniform(pcg32_t *rng);

/* Forward b <= cap rows; returns the mean loss. */
double net_forward(net_t *net, size_t b, const double *x, const int *label,
                   net_bn_mode mode);
/* Gradients of that mean loss into the d* arrays. */
void net_backward(net_t *net);
/* Batch norm's training-mode backward, per unit j of b rows x h units:
 *   dx = (gamma/sd) * (dy - mean(dy) - xhat * mean(dy * xhat))
 * with dgamma = sum dy * xhat and dbeta = sum dy. */
void net_bn_train_backward(size_t b, size_t h, const double *xhat,
                           const double *gamma, const double *sd,
                           const double *dy, double *dx, double *dgamma,
                           double *dbeta);
void net_sgd_step(net_t *net, const run_config *cfg);

/* E epochs over perm (d->n indices), then net_finish. cfg is the one the
 * net was made with. */
int net_train(net_t *net, const run_config *cfg, const net_data *d,
              const size_t *perm, const net_observer *obs, bn_error *err);
/* What the estimator does after training (precise: the buffers become
 * the pooled moments of fc1's outputs over the first precise_batches
 * batches of perm); nothing for the others. */
int net_finish(net_t *net, const run_config *cfg, const net_data *d,
               const size_t *perm, bn_error *err);
/* Mean and variance (divisor n) of fc1's outputs, the inputs batch norm
 * sees, over rows[0..n-1] (NULL: the first n rows) under the current
 * weights: the precise estimator's buffers, and the truth a score of the
 * buffers' error compares them with. */
int net_hidden_moments(const net_t *net, const net_data *d,
                       const size_t *rows, size_t n, double *mean,
                       double *var, bn_error *err);
/* Training mode: every row of perm once, in net_score_batches(n, bmax)
 * consecutive batches of nearly equal size, each normalised by its own
 * statistics; the buffers are left as they are. With pred (NULL: none),
 * row i's predicted class goes to pred[i], here and in evaluation mode. */
int net_score_train_mode(net_t *net, const net_data *d, const size_t *perm,
                         net_score *s, int *pred, bn_error *err);
/* The batches a training-mode score cuts n >= 2 rows into: ceil(n / B),
 * the first n mod that many one row larger than the rest, so none is
 * larger than B and none has one row. Batch k's first row is
 * net_score_batch_start(n, nb, k). */
size_t net_score_batches(size_t n, size_t b);
size_t net_score_batch_start(size_t n, size_t nb, size_t k);
/* Evaluation mode: every row alone, with the running statistics. */
int net_score_eval_mode(net_t *net, const net_data *d, net_score *s,
                        int *pred, bn_error *err);

/* Parameters and buffers as TSV rows under CLF_WEIGHTS_HEADER, one value
 * a row, %.17g; net_write_grads the same for the gradients (stage grad:
 * the first training batch's, before its step). */
#define CLF_WEIGHTS_HEADER "stage\ttensor\ti\tj\tvalue\n"
int net_write_weights(FILE *fp, const char *stage, net_t *net);
int net_write_grads(FILE *fp, const char *stage, net_t *net);

#endif
