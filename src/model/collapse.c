/* The collapsed-channel closed forms of collapse.h. */
#include "model/collapse.h"

#include <math.h>

#include "model/estimator.h"

double collapse_power(double keep, size_t t)
{
    double r = 1.0, sq = keep;
    while (t) {
        if (t & 1u)
            r *= sq;
        sq *= sq;
        t >>= 1;
    }
    return r;
}

double collapse_running_var(const bn_config *cfg, size_t t, size_t b,
                            double s)
{
    if (t == 0)
        return 1.0;
    /* The same expression bn.c applies to each batch's variance. */
    double su = cfg->variance == BN_VAR_UNBIASED
                    ? s * (double)b / (double)(b - 1)
                    : s;
    /* The estimator's row says it all: a pooling one recomputes the
     * biased pooled variance; a recursive one keeps the initial 1 with
     * its initial weight and gives the rest to the batches' su. For ema
     * the layer's weights sum to p (1 + keep + ... + keep^(T-1)), which
     * is 1 - keep^T up to p + keep rounding to 1. */
    const bn_estimator_def *est = bn_estimator_get(cfg->estimator);
    if (est->pools)
        return s;
    double k = est->init_weight ? est->init_weight(cfg->keep, t) : 0.0;
    return k + (1.0 - k) * su;
}

double collapse_gain(const bn_config *cfg, double rv)
{
    return cfg->gamma / sqrt(rv + cfg->eps);
}

double collapse_train_response(const bn_config *cfg, size_t b, double delta)
{
    double bd = (double)b;
    double var = delta * delta * (bd - 1.0) / (bd * bd);
    return cfg->gamma * (delta * (1.0 - 1.0 / bd)) / sqrt(var + cfg->eps);
}
