/* The closed form of expect.h, in double-double (num.h): about 106 bits
 * whatever the platform, where long double would be 64 bits on x86-64 and
 * 113 on aarch64. */
#include "expect.h"

#include <stdlib.h>
#include <string.h>

#include "estimator.h"
#include "num.h"
#include "order.h"

#define D(x) num_dd_make(x)

int expect_mean_err_sq(const pop_t *pop, const run_config *cfg,
                       double *out, bn_error *err)
{
    if (run_validate(cfg, pop, err) != 0)
        return -1;
    if (cfg->model != RUN_MODEL_LAYER)
        return bn_fail(err, "the closed form is of the layer's running "
                            "mean");
    if (!cfg->order.def->uniform)
        return bn_fail(err, "the closed form needs every order equally "
                            "likely, and %s is not",
                       cfg->order.name);
    const bn_estimator_def *est = bn_estimator_get(cfg->layer.estimator);
    if (!est->weights)
        return bn_fail(err, "estimator %s has no closed form", est->name);
    size_t n = pop->n, b = cfg->batch_size;
    size_t nb = run_batches_per_epoch(n, b, cfg->partial);
    num_dd *w = calloc(nb, sizeof *w); /* all-zero bits are 0 + 0 */
    if (!w)
        return bn_fail(err, "out of memory");
    bn_weights_in in = {n, b, nb, cfg->epochs * nb,
                        cfg->precise_batches == 0 ||
                                cfg->precise_batches > nb
                            ? nb
                            : cfg->precise_batches,
                        cfg->layer.p, cfg->layer.keep};
    est->weights(&in, w);
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
