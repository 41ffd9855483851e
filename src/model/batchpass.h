/*
 * The layer's passes over one batch, where a run spends nearly all its
 * time: the batch's statistics, and its train-mode (and eval-mode)
 * outputs with the sums the comparison takes and the self-checks made
 * on them (selfcheck.h) as the batch's last rows leave them. They go
 * column by column, two features at a time (base/pair.h: one packed
 * division for two), each feature's sums over the rows in row order and
 * the comparison's total over each row's features in order, so that the
 * bits are those of the plain loops bnlayer.h's expression describes.
 * packed 0 runs the same passes one feature at a time: the scalar path
 * the tests hold the packed one to, bit for bit.
 */
#ifndef BN_BATCHPASS_H
#define BN_BATCHPASS_H

#include <stddef.h>

/* A batch's b rows (b at least 1): row i is x + rows[i] f (x + i f when
 * rows is NULL), or at[i] when at is not NULL (bp_addresses made once
 * for an order read again and again), each feature j moved by shift[j]
 * (none when shift is NULL). rows has ahead more entries past the batch
 * (the next batch's); with fetch set, and rows read by index (at NULL),
 * they are asked for early (bp_fetch). */
typedef struct {
    size_t b, f, ahead;
    int fetch;
    const double *x;
    const size_t *rows;
    const double *shift;
    const double *const *at;
} bp_rows;

/* What the outputs are made with, per feature: the batch's mean and
 * biased variance (train mode, whose sd, bn_sd(var, eps), the pass makes
 * two features at a time), the buffers' mean and sd (eval mode; rm NULL
 * for train mode alone), gamma and beta. */
typedef struct {
    const double *mean, *var, *rm, *sd_run, *gamma, *beta;
    double eps;
} bp_layer;

/* The comparison's total of (y - e)^2 over the rows and each row's
 * features in order, across the passes of a run: sum, and the last
 * chunk's squared gaps not added yet (n of them, in part half of the
 * scratch), which the next chunk adds as it goes. bp_gap_flush adds
 * them; call it before reading sum. Start it as {0.0, 0, 0} (or another
 * sum: not -0). */
typedef struct {
    double sum;
    size_t n;
    int half;
} bp_gap;

/* What a pass over the outputs leaves: per feature, the sums of
 * y - beta and of its square (set), and with eval mode the sum of
 * (y - e)^2 (added to sq) and their total (gap). With y and e not NULL
 * (eval mode only) the B x F outputs themselves. dd is eval mode's
 * scratch of bp_scratch(f) doubles, the same from pass to pass while gap
 * has gaps pending. With pass not NULL, the self-checks of the train
 * outputs that depend on their values (score.h's score_checks, on the
 * sums as the batch's last rows leave them in registers): the number
 * that pass is added to *pass. */
typedef struct {
    double *s1, *s2, *sq;
    bp_gap *gap;
    double *y, *e, *dd;
    size_t *pass;
} bp_sums;

void bp_gap_flush(bp_gap *g, const double *dd, size_t f);

/* Whether rows read in a shuffled order from n x f values are worth
 * asking for early: past the caches each is a trip to memory, where the
 * trips should overlap; within them the asking is work for nothing. */
int bp_fetch(size_t n, size_t f);

/* The addresses of n rows of f values of x in the order rows, into at:
 * the passes then read them instead of making them at every pass. */
void bp_addresses(const double *x, const size_t *rows, size_t n, size_t f,
                  const double **at);

/* The scratch bp_outputs needs in eval mode, in doubles. */
size_t bp_scratch(size_t f);

/* Mean and biased variance of each feature of the batch, by the
 * corrected two-pass formula. */
void bp_stats(const bp_rows *r, int packed, double *mean, double *var);

/* The statistics of r->b / per batches of per rows each, one after the
 * other in r's rows, as bp_stats makes each: batch q's a q stride
 * further in mean and var. */
void bp_stats_batches(const bp_rows *r, size_t per, size_t stride,
                      int packed, double *mean, double *var);

/* The batch's outputs under l into the sums of s. */
void bp_outputs(const bp_rows *r, const bp_layer *l, int packed,
                const bp_sums *s);

/* The outputs of r->b / per batches of per rows each, one after the
 * other in r's rows, as bp_outputs makes each (the same bits, the gaps
 * added in the same order, each batch's self-checks), in one pass:
 * batch q's mean and var are l's a q stride further; s's sums (s1, s2)
 * are left the last batch's. r->b is a multiple of per. What a batch
 * costs beyond its values (a call, the rows' addresses, a chunk's
 * set-up) is then paid once for as many batches as fit a chunk, which
 * small batches feel. Without s->pass (no self-checks) the batches go
 * one at a time, so that the pass of several makes its checks without
 * testing whether to. */
void bp_outputs_batches(const bp_rows *r, size_t per, size_t stride,
                        const bp_layer *l, int packed, const bp_sums *s);

#endif
