/* The closed form of expect.h, in double-double (num.h): about 106 bits
 * whatever the platform, where long double would be 64 bits on x86-64 and
 * 113 on aarch64. */
#include "expect.h"

#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "order.h"

#define D(x) num_dd_make(x)

int expect_mean_err_sq(const pop_t *pop, const run_config *cfg,
                       double *out, bn_error *err)
{
    order_spec ord;
    if (run_validate(cfg, pop, err) != 0)
        return -1;
    order_parse(cfg->order, &pop->spec, &ord, err);
    if (ord.kind != ORDER_SHUFFLED)
        return bn_fail(err, "the closed form is for shuffled order only");
    size_t n = pop->n, b = cfg->batch_size;
    size_t nb = run_batches_per_epoch(n, b, cfg->partial);
    num_dd *w = calloc(nb, sizeof *w); /* all-zero bits are 0 + 0 */
    if (!w)
        return bn_fail(err, "out of memory");
    const bn_config *l = &cfg->layer;
    num_dd p = D(l->p), keep = D(l->keep);
    size_t t_count = cfg->epochs * nb;
    if (l->estimator == BN_EST_PRECISE) {
        /* One pooled sample of the first k batches' rows. */
        size_t k = cfg->precise_batches == 0 || cfg->precise_batches > nb
                       ? nb
                       : cfg->precise_batches;
        size_t rows = k * b < n ? k * b : n;
        for (size_t i = 0; i < k; i++) {
            size_t bi = i * b + b <= n ? b : n - i * b;
            w[i] = num_dd_div(D((double)bi), D((double)rows));
        }
    } else {
        for (size_t t = 1; t <= t_count; t++) {
            size_t cur = (t - 1) % nb;
            num_dd keep_now = keep, p_now = p;
            if (l->estimator == BN_EST_CUMULATIVE) {
                p_now = num_dd_div(D(1.0), D((double)t));
                keep_now = num_dd_sub(D(1.0), p_now);
            }
            for (size_t i = 0; i < nb; i++)
                w[i] = num_dd_mul(w[i], keep_now);
            w[cur] = num_dd_add(w[cur], p_now);
        }
        /* Debiasing divides by the weights' own sum, 1 - keep^T. */
        num_dd wsum = D(0.0);
        for (size_t i = 0; i < nb; i++)
            wsum = num_dd_add(wsum, w[i]);
        if (l->estimator == BN_EST_EMA_DEBIASED)
            for (size_t i = 0; i < nb; i++)
                w[i] = num_dd_div(w[i], wsum);
    }
    num_dd total = D(0.0);
    for (size_t i = 0; i < nb; i++)
        total = num_dd_add(total, w[i]);
    num_dd sum = D(0.0), scale = D(0.0), nm1 = D((double)(n - 1));
    for (size_t j = 0; j < pop->f; j++) {
        num_dd v = D(pop->var[j]), mu = D(pop->mean[j]);
        num_dd a = num_dd_mul(num_dd_sub(total, D(1.0)), mu);
        num_dd aa = num_dd_mul(a, a);
        num_dd cross = num_dd_div(num_dd_mul(num_dd_mul(total, total), v), nm1);
        num_dd e = num_dd_sub(aa, cross);
        scale = num_dd_add(scale, num_dd_add(aa, cross));
        num_dd v_n = num_dd_div(v, nm1);
        for (size_t i = 0; i < nb; i++) {
            size_t bi = i * b + b <= n ? b : n - i * b;
            num_dd var_b = num_dd_div(
                num_dd_mul(num_dd_div(v, D((double)bi)), D((double)(n - bi))),
                nm1);
            num_dd term = num_dd_mul(num_dd_mul(w[i], w[i]),
                                     num_dd_add(var_b, v_n));
            e = num_dd_add(e, term);
            scale = num_dd_add(scale, term);
        }
        sum = num_dd_add(sum, e);
    }
    free(w);
    /* When every row is pooled once (cumulative over whole epochs, precise
     * over all batches) the terms cancel exactly and what is left is
     * rounding: anything within 1e-14 of the terms' own size is that
     * zero. */
    double s = num_dd_value(sum);
    *out = s > 1e-14 * num_dd_value(scale)
               ? num_dd_value(num_dd_div(sum, D((double)pop->f)))
               : 0.0;
    return 0;
}
