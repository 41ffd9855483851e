/*
 * The network's layers as data: a layer kind is one row of the layer
 * table (nn_table.c), defined with designated initialisers in a module of
 * its own (nn_linear.c, nn_conv.c, nn_batch.c, nn_norm.c for layer and
 * group normalisation, nn_pointwise.c for relu, dropout, none and the
 * image reshape), with its forward and backward passes in plain loops.
 * A network as an experiment declares it (`linear:16 batch relu
 * linear:K`) is a list of specs, each a kind and its argument; net.c runs
 * the list. Nothing here knows the classifier's scores or the run
 * pipeline.
 *
 * Activations are held row by row, each row's values position-major and
 * channel-minor (a 1-d row is its C values; an image row is H x W
 * positions of C channels each), so batch normalisation over channels
 * reads a (B x H x W) x C matrix, exactly the batch-norm layer's input.
 * Parameters are laid out as PyTorch's state_dict lays them out (a
 * linear weight [out][in] with in in PyTorch's flattened C x H x W
 * order, a convolution weight [out][in][3][3]), so a PyTorch peer loads
 * them as they are.
 *
 * Precision: in float32 every value a layer stores (its outputs, its
 * parameters' gradients, what it keeps for its backward) is rounded to
 * float32 after each elementwise operation, and every sum is accumulated
 * in float64 and rounded once (docs/definitions.md, "float32"). Rounding
 * a float64 result of +, -, *, / or sqrt of float32 operands to float32
 * gives the float32 operation's own correctly rounded result, so this is
 * float32 arithmetic, the same bits on every IEEE 754 platform.
 */
#ifndef BN_NN_H
#define BN_NN_H

#include <stddef.h>
#include <stdint.h>

#include "base/common.h"
#include "base/pcg32.h"
#include "model/bn.h"

/* The most layers a network declares, and the most parameter tensors a
 * layer has (a weight and a bias). */
#define NN_MAX_LAYERS 32
#define NN_MAX_LAYER_TENSORS 2
/* A bound on a layer's units or channels that keeps the arrays' sizes far
 * from overflow. */
#define NN_MAX_UNITS 65536

/* What a layer's argument is, after its name and a colon. */
typedef enum {
    NN_ARG_NONE,  /* `relu` */
    NN_ARG_UNITS, /* `linear:16`, or `linear:K` for the classes */
    NN_ARG_COUNT, /* `conv:8`, `group:4`: a number */
    NN_ARG_SHARE, /* `dropout:0.5`: a share in [0, 1) */
    NN_ARG_SHAPE, /* `image:8x8`: H x W */
} nn_arg;

/* A row's shape: C channels at H x W positions (a 1-d row has H = W = 1). */
typedef struct {
    size_t c, h, w;
} nn_shape;

static inline size_t nn_size(nn_shape s) { return s.c * s.h * s.w; }
static inline size_t nn_positions(nn_shape s) { return s.h * s.w; }

struct nn_kind;

/* One layer as declared: its kind and its argument (n, or n x n2, or p;
 * `linear:K` has n 0). */
typedef struct {
    const struct nn_kind *kind;
    size_t n, n2;
    double p;
} nn_spec;

/* A network as declared, in order. */
typedef struct {
    size_t n;
    nn_spec l[NN_MAX_LAYERS];
} nn_net_spec;

/* What batch norm normalises a forward pass with. */
typedef enum {
    NN_BN_BATCH,      /* the batch's own statistics; buffers updated */
    NN_BN_BATCH_KEEP, /* the batch's own statistics; buffers untouched */
    NN_BN_RUNNING,    /* the buffers (eval mode, and frozen training) */
} nn_bn_mode;

/* How one pass runs: batch norm's mode, the precision, whether it is a
 * training step (dropout drops only then, from rng), and whether the
 * parameters are those of the layer's last forward pass (a score's
 * batches after its first), so that what it made of them may stand. */
typedef struct {
    nn_bn_mode mode;
    int f32;
    int train;
    pcg32_t *rng;
    int same_weights;
} nn_pass;

/* float32 rounding when the pass is in float32; nothing in float64. */
static inline double nn_r32(double x) { return (double)(float)x; }
static inline double nn_round(const nn_pass *ps, double x)
{
    return ps->f32 ? nn_r32(x) : x;
}

/* One parameter tensor (rows x cols, a vector has cols 1), its gradient
 * and the optimiser's two state arrays (SGD's momentum buffer is m;
 * Adam's moments m and v). */
typedef struct {
    char name[24]; /* the state_dict name, "0.weight" */
    size_t rows, cols;
    double *p, *g, *m, *v;
} nn_tensor;

/* A layer of a network, as built: its shapes, its tensors and what its
 * last forward pass kept for the backward. */
typedef struct nn_layer {
    const struct nn_kind *kind;
    nn_spec spec;
    size_t index; /* in the network, for the tensors' names */
    nn_shape in, out;
    size_t nt;
    nn_tensor t[NN_MAX_LAYER_TENSORS];
    bn_layer bn;  /* batch: its buffers; gamma and beta are t[0].p, t[1].p */
    double *y;    /* the last forward pass's output, cap x out */
    double *save; /* what the backward needs (xhat, a dropout mask), cap x in */
    double *mean, *var, *sd; /* per channel, row or group, as the kind has it */
    nn_bn_mode mode;         /* the last forward pass's */
    size_t *map;  /* linear on an image: input column -> its value's place */
    double *wt;   /* linear: its weights transposed, for the forward's pairs */
    double *block;
} nn_layer;

/* A row of the layer table. */
typedef struct nn_kind {
    const char *name;
    nn_arg arg;
    const char *help;
    /* A normalisation: eps applies to it. */
    int normalises;
    /* Keeps running statistics (batch norm): its training-mode output
     * depends on the batch, and the [layer] keys are its settings. */
    int running;
    /* Has weights a following batch norm normalises away the scale of
     * (linear, conv): the weights whose gradient has no radial part. */
    int weighted;
    /* The identity: a batch norm after it normalises what the layer before
     * it gives. */
    int identity;
    /* The output shape for this input (k: the classes), or -1 with a
     * message when the kind cannot take it. */
    int (*shape)(const nn_spec *s, nn_shape in, size_t k, nn_shape *out,
                 bn_error *err);
    /* Allocate for batches of cap rows: the output, the tensors, what the
     * backward needs; bn is batch norm's settings. -1: out of memory. */
    int (*init)(nn_layer *l, size_t cap, const bn_config *bn);
    /* Draw the initial parameters (NULL: none drawn). */
    void (*draw)(nn_layer *l, pcg32_t *rng);
    void (*forward)(nn_layer *l, const nn_pass *ps, size_t b,
                    const double *x);
    /* Gradients of the loss into the tensors' g from dy (b x out), and
     * into dx (b x in) unless dx is NULL. */
    void (*backward)(nn_layer *l, const nn_pass *ps, size_t b,
                     const double *x, const double *dy, double *dx);
    /* Multiply-adds per row of a forward pass, about. */
    double (*work)(const nn_layer *l);
} nn_kind;

/* The layer table: kind i, NULL past the last. */
const nn_kind *nn_kind_get(size_t i);
const nn_kind *nn_kind_find(const char *name);
/* "linear, conv, batch, ..." into buf. */
const char *nn_kind_list(const char *sep, char *buf, size_t size);

/* The kinds, each a row defined in its module. */
extern const nn_kind nn_kind_linear, nn_kind_conv, nn_kind_batch,
    nn_kind_layer, nn_kind_group, nn_kind_relu, nn_kind_dropout,
    nn_kind_none, nn_kind_image;

/* Parse "linear:16 batch relu linear:K" (layers separated by spaces). */
int nn_parse(const char *text, nn_net_spec *spec, bn_error *err);
/* The canonical text of spec ("linear:16 batch relu linear:K"). */
void nn_format(const nn_net_spec *spec, char *buf, size_t size);
/* The output shape of every layer of spec on rows of f values and k
 * classes, checked: the last layer must give k values. shapes[i] is
 * layer i's input, shapes[spec->n] the output (NULL: not kept). */
int nn_shapes(const nn_net_spec *spec, size_t f, size_t k, nn_shape *shapes,
              size_t *bad, bn_error *err);

/* Build layer `index` of spec for input shape in, batches of cap rows:
 * the kind's init and the tensors' names. nn_layer_free frees it (also
 * after a failure). */
int nn_layer_init(nn_layer *l, const nn_spec *s, size_t index, nn_shape in,
                  size_t k, size_t cap, const bn_config *bn, bn_error *err);
void nn_layer_free(nn_layer *l);
/* Carve a layer's arrays from one block (base/carve.h: under ASan a
 * poisoned gap after each), every array zeroed: n_arrays pointers and
 * their sizes in doubles, at most BN_CARVE_MAX. -1: out of memory. */
int nn_alloc(nn_layer *l, double **const *arrays, const size_t *sizes,
             size_t n_arrays);
/* Name tensor i ("<index>.<what>") and give it its shape and arrays. */
void nn_tensor_set(nn_layer *l, size_t i, const char *what, size_t rows,
                   size_t cols, double *p, double *g, double *m, double *v);

/* PyTorch's default initial weights for a layer of fan_in inputs,
 * U(-1/sqrt(fan_in), 1/sqrt(fan_in)), from two draws a value
 * (docs/definitions.md). */
double nn_uniform(pcg32_t *rng);
void nn_draw_uniform(pcg32_t *rng, size_t n, size_t fan_in, double *p);

/* Batch norm's training-mode backward over b rows of h channels, in
 * float64: per channel j,
 *   dx = (gamma/sd) (dy - mean(dy) - xhat mean(dy xhat)),
 * dgamma = sum dy xhat and dbeta = sum dy: the layer kind's own loop. */
void nn_batch_train_backward(size_t b, size_t h, const double *xhat,
                             const double *gamma, const double *sd,
                             const double *dy, double *dx, double *dgamma,
                             double *dbeta);


#endif
