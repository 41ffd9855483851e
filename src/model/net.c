/*
 * The network as plain loops, in the style of llm.c: the layers of nn.h
 * run in order forward and in reverse backward over row-major arrays,
 * then the softmax cross-entropy head, the optimiser's step and the
 * training and scoring loops. Batch norm is bn.h's layer inside the
 * `batch` kind, used only through its public functions.
 */
#include "model/net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/carve.h"
#include "base/num.h"
#include "model/optim.h"
#include "pop/pop.h"

/* The only exp and log in the classifier: num.h's, correctly rounded and
 * the same bits on every platform, where libm's are neither. sqrt needs
 * no such care: IEEE 754 rounds it correctly everywhere. */
static void clf_exp_array(double *v, size_t n) { num_exp_array(v, n); }
static void clf_log_array(double *v, size_t n) { num_log_array(v, n); }

static const char *const norm_names[] = {"batch", "none"};

const char *net_norm_name(int n)
{
    return n >= 0 && n < 2 ? norm_names[n] : NULL;
}

int net_norm_parse(const char *s, net_norm *n)
{
    for (int i = 0; i < 2; i++)
        if (strcmp(s, norm_names[i]) == 0) {
            *n = (net_norm)i;
            return 0;
        }
    return -1;
}

void net_spec_of(const clf_settings *s, nn_net_spec *spec)
{
    if (s->net.n > 0) {
        *spec = s->net;
        return;
    }
    memset(spec, 0, sizeof *spec);
    size_t depth = s->depth < 1 ? 1 : s->depth > CLF_MAX_DEPTH ? CLF_MAX_DEPTH
                                                               : s->depth;
    for (size_t d = 0; d < depth; d++) {
        spec->l[spec->n++] = (nn_spec){&nn_kind_linear, s->hidden, 0, 0.0};
        if (s->norm == CLF_NORM_BATCH)
            spec->l[spec->n++] = (nn_spec){&nn_kind_batch, 0, 0, 0.0};
        spec->l[spec->n++] = (nn_spec){&nn_kind_relu, 0, 0, 0.0};
    }
    spec->l[spec->n++] = (nn_spec){&nn_kind_linear, 0, 0, 0.0};
}

int net_has_batch(const clf_settings *s)
{
    nn_net_spec spec;
    net_spec_of(s, &spec);
    for (size_t i = 0; i < spec.n; i++)
        if (spec.l[i].kind->running)
            return 1;
    return 0;
}

size_t net_weighted_before(const nn_net_spec *spec, size_t i)
{
    if (i >= spec->n || !spec->l[i].kind->running)
        return spec->n;
    while (i-- > 0)
        if (!spec->l[i].kind->identity)
            return spec->l[i].kind->weighted ? i : spec->n;
    return spec->n;
}

int net_spec_scale_invariant(const nn_net_spec *spec, size_t i)
{
    return net_weighted_before(spec, i) < spec->n;
}

int net_has_weights_before_bn(const clf_settings *s)
{
    nn_net_spec spec;
    net_spec_of(s, &spec);
    for (size_t i = 0; i < spec.n; i++)
        if (net_spec_scale_invariant(&spec, i))
            return 1;
    return 0;
}

static int check_data(const net_data *d, size_t f, size_t k, bn_error *err)
{
    if (d->f != f)
        return bn_fail(err, "the rows have %zu features, the classifier %zu",
                       d->f, f);
    if (d->k != k)
        return bn_fail(err, "the rows have %zu classes, the classifier %zu",
                       d->k, k);
    for (size_t i = 0; i < d->n; i++)
        if (d->label[i] < 0 || (size_t)d->label[i] >= k)
            return bn_fail(err, "row %zu: label %d is not in [0, %zu)", i,
                           d->label[i], k);
    return 0;
}

size_t net_tensors(net_t *net, nn_tensor **t)
{
    size_t n = 0;
    for (size_t i = 0; i < net->nl; i++)
        for (size_t a = 0; a < net->l[i].nt; a++)
            t[n++] = &net->l[i].t[a];
    return n;
}

const double *net_logits(const net_t *net) { return net->l[net->nl - 1].y; }

size_t net_batch_layers(const net_t *net)
{
    size_t n = 0;
    for (size_t i = 0; i < net->nl; i++)
        n += net->l[i].kind->running;
    return n;
}

size_t net_batch_layer(const net_t *net, size_t i)
{
    for (size_t li = 0; li < net->nl; li++)
        if (net->l[li].kind->running && i-- == 0)
            return li;
    return net->nl;
}

/* The net's own arrays: a batch of inputs, the head's, and the two
 * gradient buffers, each as large as the largest layer input. */
static int alloc_net(net_t *net, const nn_shape *shapes)
{
    size_t cap = net->cap, f = net->f, k = net->k, g = k;
    for (size_t i = 0; i <= net->nl; i++)
        if (nn_size(shapes[i]) > g)
            g = nn_size(shapes[i]);
    double **arrays[] = {&net->xbuf, &net->prob,    &net->dz,
                         &net->loss, &net->grad[0], &net->grad[1]};
    size_t counts[] = {cap * f, cap * k, cap * k, cap, cap * g, cap * g};
    net->block = bn_carve_doubles(sizeof counts / sizeof *counts, arrays,
                                  counts);
    net->lbuf = malloc(cap * sizeof *net->lbuf);
    net->l = calloc(net->nl, sizeof *net->l);
    if (!net->block || !net->lbuf || !net->l)
        return -1;
    return 0;
}

/* PCG32(init_seed, 3) in the order of the layers, each weight then its
 * bias; in float32 each value is then rounded, as a float32 model given
 * these values holds them. */
static void draw_weights(net_t *net, uint64_t seed)
{
    pcg32_t rng;
    pcg32_seed(&rng, seed, PCG32_INITSEQ_WEIGHTS);
    for (size_t i = 0; i < net->nl; i++)
        if (net->l[i].kind->draw)
            net->l[i].kind->draw(&net->l[i], &rng);
    if (!net->f32)
        return;
    nn_tensor *t[2 * NN_MAX_LAYERS];
    size_t nt = net_tensors(net, t);
    for (size_t a = 0; a < nt; a++)
        for (size_t e = 0; e < t[a]->rows * t[a]->cols; e++)
            t[a]->p[e] = nn_r32(t[a]->p[e]);
}

int net_init(net_t *net, const run_config *cfg, size_t f, size_t k,
             bn_error *err)
{
    memset(net, 0, sizeof *net);
    size_t bmax = cfg->batch_size;
    if (f < 1 || k < 2 || bmax < 1)
        return bn_fail(err, "a classifier needs features, 2 classes and a "
                            "batch; got %zu, %zu, %zu",
                       f, k, bmax);
    nn_shape shapes[NN_MAX_LAYERS + 1];
    net_spec_of(&cfg->clf, &net->spec);
    if (nn_shapes(&net->spec, f, k, shapes, NULL, err) != 0)
        return -1;
    net->f = f;
    net->k = k;
    net->bmax = bmax;
    /* A training-mode score of an odd number of rows at B 2 has one
     * batch of three (net_score_batches). */
    net->cap = bmax == 2 ? 3 : bmax;
    net->nl = net->spec.n;
    net->f32 = cfg->clf.dtype == NET_F32;
    if (alloc_net(net, shapes) != 0) {
        net_free(net);
        return bn_fail(err, "out of memory for a classifier of %zu layers "
                            "and batches of %zu",
                       net->spec.n, net->cap);
    }
    for (size_t i = 0; i < net->nl; i++)
        if (nn_layer_init(&net->l[i], &net->spec.l[i], i, shapes[i], k,
                          net->cap, &cfg->layer, err) != 0) {
            net_free(net);
            return -1;
        }
    draw_weights(net, cfg->clf.init_seed);
    pcg32_seed(&net->drop_rng, cfg->clf.init_seed, PCG32_INITSEQ_DROPOUT);
    return 0;
}

void net_free(net_t *net)
{
    for (size_t i = 0; net->l && i < net->nl; i++)
        nn_layer_free(&net->l[i]);
    free(net->l);
    free(net->block);
    free(net->lbuf);
    memset(net, 0, sizeof *net);
}

/* ------------------------------------------------------------ the head */

/* A row's largest logit. */
static double row_max(const double *zi, size_t k)
{
    double m = zi[0];
    for (size_t c = 1; c < k; c++)
        if (zi[c] > m)
            m = zi[c];
    return m;
}

/* Per row: loss = log(sum_c exp(z_c - m)) - (z_y - m) with m = max_c z_c,
 * and, with grads (a backward pass may follow), the softmax
 * exp(z_c - m) / sum, in float64 from the logits (in float32 the results
 * rounded once). The batch's exps are made together, then its logs, two
 * at a time (num_exp_array, num_log_array: num_exp's and num_log's bits);
 * a row's sum waits in loss for its log. */
static void softmax_xent_forward(const nn_pass *ps, size_t b, size_t k,
                                 const double *z, const int *label,
                                 double *prob, double *loss, int grads)
{
    for (size_t i = 0; i < b; i++) {
        double m = row_max(&z[i * k], k);
        for (size_t c = 0; c < k; c++)
            prob[i * k + c] = z[i * k + c] - m;
    }
    clf_exp_array(prob, b * k);
    for (size_t i = 0; i < b; i++) {
        double s = 0.0;
        for (size_t c = 0; c < k; c++)
            s += prob[i * k + c];
        for (size_t c = 0; grads && c < k; c++)
            prob[i * k + c] = nn_round(ps, prob[i * k + c] / s);
        loss[i] = s;
    }
    clf_log_array(loss, b);
    for (size_t i = 0; i < b; i++) {
        const double *zi = &z[i * k];
        loss[i] = nn_round(ps, loss[i] - (zi[label[i]] - row_max(zi, k)));
    }
}

/* ------------------------------------------------------------ the net */

/* net_forward from layer `from` (0, or past the shared layers with
 * their outputs as x), and with grads 0 (a score: no backward pass
 * follows) without the softmax, which only the backward pass reads;
 * same: the parameters are those of the last call's. */
static double forward(net_t *net, size_t from, size_t b, const double *x,
                      const int *label, nn_bn_mode mode, int train,
                      int grads, int same)
{
    nn_pass ps = {mode, net->f32, train, &net->drop_rng, same};
    net->b = b;
    net->mode = mode;
    if (net->f32 && from == 0) {
        /* The rows as a float32 tensor holds them. */
        for (size_t i = 0; i < b * net->f; i++)
            net->xbuf[i] = nn_r32(x[i]);
        x = net->xbuf;
    }
    net->x = x;
    net->label = label;
    const double *in = x;
    for (size_t i = from; i < net->nl; i++) {
        net->l[i].kind->forward(&net->l[i], &ps, b, in);
        in = net->l[i].y;
    }
    softmax_xent_forward(&ps, b, net->k, in, label, net->prob, net->loss,
                         grads);
    double s = 0.0;
    for (size_t i = 0; i < b; i++)
        s += net->loss[i];
    return s / (double)b;
}

double net_forward(net_t *net, size_t b, const double *x, const int *label,
                   nn_bn_mode mode, int train)
{
    return forward(net, 0, b, x, label, mode, train, 1, 0);
}

void net_backward(net_t *net)
{
    nn_pass ps = {net->mode, net->f32, 1, &net->drop_rng, 0};
    size_t b = net->b, k = net->k;
    /* The mean loss: d/dz = (softmax - onehot) / b. */
    for (size_t i = 0; i < b; i++)
        for (size_t c = 0; c < k; c++)
            net->dz[i * k + c] = nn_round(
                &ps, (net->prob[i * k + c] - (c == (size_t)net->label[i])) /
                         (double)b);
    /* Below the first layer with parameters a gradient reaches nothing
     * (the layers there, an image's reshape say, have none to learn), so
     * that layer makes no dx and those below it do not run. */
    size_t first = 0;
    while (first + 1 < net->nl && net->l[first].nt == 0)
        first++;
    const double *dy = net->dz;
    for (size_t i = net->nl; i-- > first;) {
        nn_layer *l = &net->l[i];
        const double *x = i ? net->l[i - 1].y : net->x;
        double *dx = i > first ? net->grad[(net->nl - 1 - i) % 2] : NULL;
        l->kind->backward(l, &ps, b, x, dy, dx);
        dy = dx;
    }
}

void net_optim_step(net_t *net, const run_config *cfg)
{
    nn_tensor *t[2 * NN_MAX_LAYERS];
    size_t nt = net_tensors(net, t);
    double lr = optim_lr(&cfg->clf, net->steps, net->epoch, cfg->epochs);
    const optim_def *o = optim_get(cfg->clf.optimizer);
    for (size_t a = 0; a < nt; a++)
        o->step(&cfg->clf, t[a], net->steps, lr, net->f32);
    net->steps++;
}

/* ------------------------------------------------------------ training */

size_t net_shared_layers(const net_t *net)
{
    size_t p = 0;
    while (p + 1 < net->nl && !net->l[p].kind->running)
        p++;
    return p;
}

/* The values a row has at layer `from`'s input (0: the row itself). */
static size_t width_at(const net_t *net, size_t from)
{
    return from ? nn_size(net->l[from - 1].out) : net->f;
}

/* Where a pass over d to layer li's input (net->nl: the logits) starts:
 * past the shared layers where d has their outputs, else at 0. */
static size_t start_layer(const net_t *net, const net_data *d, size_t li)
{
    size_t p = net_shared_layers(net);
    return d->shared && li >= p ? p : 0;
}

/* Gather rows perm[0..b-1] (b <= cap; perm NULL: rows first ..
 * first + b - 1) as layer `from` takes them: the rows into the net's
 * batch buffer, or from 0 on their shared outputs into the gradient
 * buffer, which no score or moment pass uses; the labels into lbuf. */
static const double *gather_rows(net_t *net, const net_data *d,
                                 const size_t *perm, size_t first, size_t b,
                                 size_t from)
{
    size_t w = width_at(net, from);
    const double *src = from ? d->shared : d->x;
    double *dst = from ? net->grad[0] : net->xbuf;
    for (size_t i = 0; i < b; i++) {
        size_t r = perm ? perm[i] : first + i;
        memcpy(&dst[i * w], &src[r * w], w * sizeof *dst);
        net->lbuf[i] = d->label[r];
    }
    return dst;
}

static void gather(net_t *net, const net_data *d, const size_t *perm,
                   size_t b)
{
    gather_rows(net, d, perm, 0, b, 0);
}

void net_layer_inputs(net_t *net, const net_data *d, const size_t *rows,
                      size_t n, size_t li, double *out)
{
    size_t size = width_at(net, li), from = start_layer(net, d, li);
    nn_pass ps = {NN_BN_RUNNING, net->f32, 0, &net->drop_rng, 0};
    for (size_t at = 0; at < n; at += net->cap) {
        size_t b = n - at < net->cap ? n - at : net->cap;
        ps.same_weights = at > 0;
        const double *in =
            gather_rows(net, d, rows ? &rows[at] : NULL, at, b, from);
        if (net->f32 && from == 0)
            for (size_t i = 0; i < b * net->f; i++)
                net->xbuf[i] = nn_r32(net->xbuf[i]);
        for (size_t i = from; i < li; i++) {
            net->l[i].kind->forward(&net->l[i], &ps, b, in);
            in = net->l[i].y;
        }
        memcpy(out + at * size, in, b * size * sizeof *out);
    }
}

int net_share_rows(net_t *net, net_data *d, bn_error *err)
{
    size_t p = net_shared_layers(net);
    d->shared = NULL;
    if (p == 0)
        return 0;
    double *h = malloc((d->n ? d->n : 1) * width_at(net, p) * sizeof *h);
    if (!h)
        return bn_fail(err, "out of memory");
    net_layer_inputs(net, d, NULL, d->n, p, h);
    d->shared = h;
    return 0;
}

int net_layer_moments(net_t *net, const net_data *d, const size_t *rows,
                      size_t n, size_t li, double *mean, double *var,
                      bn_error *err)
{
    nn_shape in = net->l[li].in;
    size_t size = nn_size(in), c = in.c, np = nn_positions(in);
    /* The first n rows' shared outputs where they are layer li's inputs. */
    int there = d->shared && !rows && start_layer(net, d, li) == li;
    double *hs = there ? NULL : malloc((n ? n : 1) * size * sizeof *hs);
    if (!there && !hs)
        return bn_fail(err, "out of memory");
    if (!there)
        net_layer_inputs(net, d, rows, n, li, hs);
    /* Every channel at once, each summed as pop_moments sums one column
     * (the same bits), with the loop's cost shared. */
    num_moments_cols(n * np, c, c, there ? d->shared : hs, NULL, mean, var);
    for (size_t j = 0; j < c; j++)
        var[j] /= (double)(n * np); /* as pop_moments divides */
    free(hs);
    return 0;
}

int net_finish(net_t *net, const run_config *cfg, const net_data *d,
               const size_t *perm, bn_error *err)
{
    if (!bn_estimator_get(cfg->layer.estimator)->pools)
        return 0;
    size_t b = cfg->batch_size, k = cfg->precise_batches;
    if (k == 0)
        k = run_batches_per_epoch(d->n, b, cfg->partial);
    size_t rows = k * b < d->n ? k * b : d->n; /* the kept partial batch */
    /* Layer by layer: each sees the layers before it with their new
     * buffers. */
    for (size_t i = 0; i < net_batch_layers(net); i++) {
        nn_layer *l = &net->l[net_batch_layer(net, i)];
        if (net_layer_moments(net, d, perm, rows, l->index, l->bn.rm,
                              l->bn.rv, err) != 0)
            return -1;
        for (size_t j = 0; net->f32 && j < l->in.c; j++) {
            l->bn.rm[j] = nn_r32(l->bn.rm[j]);
            l->bn.rv[j] = nn_r32(l->bn.rv[j]);
        }
    }
    return 0;
}

int net_train(net_t *net, const run_config *cfg, const net_data *d,
              const size_t *perm, const net_observer *obs, bn_error *err)
{
    if (check_data(d, net->f, net->k, err) != 0)
        return -1;
    if (cfg->batch_size != net->bmax || d->n < net->bmax)
        return bn_fail(err, "the configuration is not the one the "
                            "classifier was made with, or there are fewer "
                            "rows than a batch");
    size_t bmax = cfg->batch_size;
    size_t nb = run_batches_per_epoch(d->n, bmax, cfg->partial);
    unsigned long e0 = cfg->clf.freeze_after;
    for (unsigned long ep = 0; ep < cfg->epochs; ep++) {
        int frozen = e0 == CLF_FREEZE_START || (e0 > 0 && ep >= e0);
        nn_bn_mode mode = frozen ? NN_BN_RUNNING : NN_BN_BATCH;
        net->epoch = ep;
        for (size_t k = 0; k < nb; k++) {
            size_t start = k * bmax;
            size_t b = start + bmax <= d->n ? bmax : d->n - start;
            gather(net, d, &perm[start], b);
            double loss = net_forward(net, b, net->xbuf, net->lbuf, mode, 1);
            if (!isfinite(loss))
                return bn_fail(err, "training diverged: the loss of epoch "
                                    "%lu, batch %zu is not finite (lr too "
                                    "large?)",
                               ep + 1, k + 1);
            net_backward(net);
            if (obs && obs->on_step) {
                net_step s = {ep, k, b, &perm[start], loss, net};
                obs->on_step(obs->ctx, &s);
            }
            net_optim_step(net, cfg);
        }
        if (obs && obs->on_epoch)
            obs->on_epoch(obs->ctx, ep, net);
    }
    return net_finish(net, cfg, d, perm, err);
}

/* ------------------------------------------------------------ scores */

/* Count the rows of the last forward pass whose largest logit (the first
 * one on a tie, as torch.argmax) is their label, and add their losses;
 * with pred, each row's class goes to pred[rows[i]] (rows NULL: to
 * pred[first + i]). */
static void tally(const net_t *net, net_score *s, double *loss_sum,
                  int *pred, double *logits, const size_t *rows, size_t first)
{
    const double *z = net_logits(net);
    for (size_t i = 0; i < net->b; i++) {
        const double *zi = &z[i * net->k];
        if (logits)
            memcpy(&logits[(rows ? rows[i] : first + i) * net->k], zi,
                   net->k * sizeof *logits);
        size_t best = 0;
        for (size_t c = 1; c < net->k; c++)
            if (zi[c] > zi[best])
                best = c;
        s->correct += best == (size_t)net->label[i];
        *loss_sum += net->loss[i];
        if (pred)
            pred[rows ? rows[i] : first + i] = (int)best;
    }
    s->rows += net->b;
}

static void finish(net_score *s, double loss_sum)
{
    s->accuracy = (double)s->correct / (double)s->rows;
    s->loss = loss_sum / (double)s->rows;
}

size_t net_score_batches(size_t n, size_t b)
{
    size_t nb = n / b + (n % b != 0);
    return nb <= n / 2 ? nb : n / 2; /* B 2, n odd: one batch of 3 */
}

size_t net_score_batch_start(size_t n, size_t nb, size_t k)
{
    size_t q = n / nb, r = n % nb;
    return k * q + (k < r ? k : r);
}

int net_score_train_mode(net_t *net, const net_data *d, const size_t *perm,
                         net_score *s, int *pred, double *logits,
                         bn_error *err)
{
    memset(s, 0, sizeof *s);
    if (check_data(d, net->f, net->k, err) != 0)
        return -1;
    if (d->n < 2)
        return bn_fail(err, "%zu rows: training mode needs at least two",
                       d->n);
    size_t nb = net_score_batches(d->n, net->bmax);
    size_t from = start_layer(net, d, net->nl);
    double loss_sum = 0.0;
    for (size_t k = 0; k < nb; k++) {
        size_t start = net_score_batch_start(d->n, nb, k);
        size_t b = net_score_batch_start(d->n, nb, k + 1) - start;
        const double *in = gather_rows(net, d, &perm[start], 0, b, from);
        forward(net, from, b, in, net->lbuf, NN_BN_BATCH_KEEP, 0, 0, k > 0);
        tally(net, s, &loss_sum, pred, logits, &perm[start], 0);
    }
    finish(s, loss_sum);
    return 0;
}

int net_score_eval_mode(net_t *net, const net_data *d, net_score *s,
                        int *pred, double *logits, bn_error *err)
{
    memset(s, 0, sizeof *s);
    if (check_data(d, net->f, net->k, err) != 0)
        return -1;
    if (d->n == 0)
        return bn_fail(err, "no rows to score");
    /* Rows go through in chunks only to share the loops: in evaluation
     * mode every row's arithmetic is its own, whatever the chunk. */
    size_t from = start_layer(net, d, net->nl), w = width_at(net, from);
    const double *x = from ? d->shared : d->x;
    double loss_sum = 0.0;
    for (size_t start = 0; start < d->n; start += net->cap) {
        size_t b = d->n - start < net->cap ? d->n - start : net->cap;
        forward(net, from, b, &x[start * w], &d->label[start], NN_BN_RUNNING,
                0, 0, start > 0);
        tally(net, s, &loss_sum, pred, logits, NULL, start);
    }
    finish(s, loss_sum);
    return 0;
}

/* ------------------------------------------------------------ files */

static void write_rows(FILE *fp, const char *stage, const char *name,
                       size_t rows, size_t cols, const double *v)
{
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            fprintf(fp, "%s\t%s\t%zu\t%zu\t%.17g\n", stage, name, i, j,
                    v[i * cols + j]);
}

int net_write_weights(FILE *fp, const char *stage, net_t *net)
{
    nn_tensor *t[2 * NN_MAX_LAYERS];
    size_t nt = net_tensors(net, t);
    for (size_t a = 0; a < nt; a++)
        write_rows(fp, stage, t[a]->name, t[a]->rows, t[a]->cols, t[a]->p);
    for (size_t i = 0; i < net_batch_layers(net); i++) {
        const nn_layer *l = &net->l[net_batch_layer(net, i)];
        char name[40];
        double tracked = (double)l->bn.updates;
        snprintf(name, sizeof name, "%zu.running_mean", l->index);
        write_rows(fp, stage, name, l->in.c, 1, l->bn.rm);
        snprintf(name, sizeof name, "%zu.running_var", l->index);
        write_rows(fp, stage, name, l->in.c, 1, l->bn.rv);
        snprintf(name, sizeof name, "%zu.num_batches_tracked", l->index);
        write_rows(fp, stage, name, 1, 1, &tracked);
    }
    return ferror(fp) ? -1 : 0;
}

int net_write_grads(FILE *fp, const char *stage, net_t *net)
{
    nn_tensor *t[2 * NN_MAX_LAYERS];
    size_t nt = net_tensors(net, t);
    for (size_t a = 0; a < nt; a++)
        write_rows(fp, stage, t[a]->name, t[a]->rows, t[a]->cols, t[a]->g);
    return ferror(fp) ? -1 : 0;
}
