/*
 * The optimiser table and the schedules. Each update follows PyTorch's
 * single-tensor implementation (torch/optim/sgd.py, adam.py, adamw.py,
 * foreach off) operation by operation, so that in float64 the two differ
 * only where their libraries round differently (pow, sqrt of a sum), far
 * below what a wrong formula moves. In float32 the settings enter as
 * PyTorch passes them to a float32 tensor's operations, as float32
 * numbers, and every stored value is rounded to float32.
 */
#include "model/optim.h"

#include <math.h>

#include "base/num.h"

static double r(int f32, double x) { return f32 ? nn_r32(x) : x; }

/* torch.optim.SGD, dampening 0: weight decay adds wd p to the gradient
 * (biases and normalisations' parameters too, as PyTorch does unless
 * parameter groups say otherwise); the momentum buffer starts as the first
 * gradient and is then momentum buf + g; Nesterov steps along
 * g + momentum buf. */
static void sgd_update(const clf_settings *s, nn_tensor *t, size_t step,
                       double lr, int f32, int nesterov)
{
    double mom = r(f32, s->sgd_momentum), wd = r(f32, s->weight_decay);
    lr = r(f32, lr);
    for (size_t e = 0; e < t->rows * t->cols; e++) {
        double g = t->g[e];
        if (wd != 0.0)
            g = r(f32, g + r(f32, wd * t->p[e]));
        if (mom != 0.0) {
            t->m[e] = step == 0 ? g : r(f32, r(f32, mom * t->m[e]) + g);
            g = nesterov ? r(f32, g + r(f32, mom * t->m[e])) : t->m[e];
        }
        t->p[e] = r(f32, t->p[e] - r(f32, lr * g));
    }
}

static void sgd_step(const clf_settings *s, nn_tensor *t, size_t step,
                     double lr, int f32)
{
    sgd_update(s, t, step, lr, f32, 0);
}

static void nesterov_step(const clf_settings *s, nn_tensor *t, size_t step,
                          double lr, int f32)
{
    sgd_update(s, t, step, lr, f32, 1);
}

/* torch.optim.Adam (amsgrad off): at step t = step + 1,
 *   g <- g + wd p                       (Adam's L2; AdamW decays p instead)
 *   m <- m beta1 + (1 - beta1) g,   v <- v beta2 + (1 - beta2) g g
 *   p <- p + (-lr / (1 - beta1^t)) m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 * with the bias corrections in float64 as Python computes them. */
static void adam_update(const clf_settings *s, nn_tensor *t, size_t step,
                        double lr, int f32, int decoupled)
{
    double b1 = s->beta1, b2 = s->beta2;
    double bc1 = 1.0 - optim_power(b1, step + 1);
    double bc2 = 1.0 - optim_power(b2, step + 1);
    double step_size = lr / bc1, bc2_sqrt = sqrt(bc2);
    double keep1 = r(f32, b1), new1 = r(f32, 1.0 - b1);
    double keep2 = r(f32, b2), new2 = r(f32, 1.0 - b2);
    double wd = r(f32, s->weight_decay), eps = r(f32, s->adam_eps);
    double decay = r(f32, 1.0 - lr * s->weight_decay);
    double neg = r(f32, -step_size), bc2s = r(f32, bc2_sqrt);
    for (size_t e = 0; e < t->rows * t->cols; e++) {
        double g = t->g[e];
        if (decoupled)
            t->p[e] = r(f32, t->p[e] * decay);
        else if (wd != 0.0)
            g = r(f32, g + r(f32, wd * t->p[e]));
        t->m[e] = r(f32, r(f32, t->m[e] * keep1) + r(f32, g * new1));
        t->v[e] = r(f32, r(f32, t->v[e] * keep2) +
                             r(f32, r(f32, new2 * g) * g));
        double denom = r(f32, r(f32, r(f32, sqrt(t->v[e])) / bc2s) + eps);
        t->p[e] = r(f32, t->p[e] + r(f32, r(f32, neg * t->m[e]) / denom));
    }
}

static void adam_step(const clf_settings *s, nn_tensor *t, size_t step,
                      double lr, int f32)
{
    adam_update(s, t, step, lr, f32, 0);
}

static void adamw_step(const clf_settings *s, nn_tensor *t, size_t step,
                       double lr, int f32)
{
    adam_update(s, t, step, lr, f32, 1);
}

static const optim_def table[] = {
    [NET_OPT_SGD] = {.name = "sgd",
                     .help = "torch.optim.SGD: momentum sgd_momentum, "
                             "dampening 0, weight decay added to the "
                             "gradient",
                     .momentum = 1, .step = sgd_step},
    [NET_OPT_NESTEROV] = {.name = "nesterov",
                          .help = "torch.optim.SGD(nesterov=True): SGD "
                                  "stepping along g + momentum buf",
                          .momentum = 1, .step = nesterov_step},
    [NET_OPT_ADAM] = {.name = "adam",
                      .help = "torch.optim.Adam: betas adam_beta1, "
                              "adam_beta2, eps adam_eps, weight decay added "
                              "to the gradient",
                      .adam = 1, .step = adam_step},
    [NET_OPT_ADAMW] = {.name = "adamw",
                       .help = "torch.optim.AdamW: Adam with the weights "
                               "decayed by 1 - lr weight_decay before the "
                               "step",
                       .adam = 1, .step = adamw_step},
};

const optim_def *optim_get(net_optimizer o) { return &table[o]; }

const char *optim_name(int i)
{
    return i >= 0 && i < NET_OPT_COUNT ? table[i].name : NULL;
}

const char *optim_schedule_name(int i)
{
    static const char *const names[] = {"constant", "step", "cosine"};
    return i >= 0 && i < 3 ? names[i] : NULL;
}

const char *net_dtype_name(int i)
{
    static const char *const names[] = {"float64", "float32"};
    return i >= 0 && i < 2 ? names[i] : NULL;
}

double optim_power(double x, unsigned long long n)
{
    double y = 1.0;
    for (; n; n >>= 1, x *= x)
        if (n & 1)
            y *= x;
    return y;
}

double optim_lr(const clf_settings *s, size_t t, unsigned long e,
                unsigned long epochs)
{
    double warm = 1.0, sched = 1.0;
    if (s->warmup > 0 && t < s->warmup)
        warm = (double)(t + 1) / (double)s->warmup;
    if (s->schedule == NET_SCHED_STEP)
        sched = optim_power(s->step_factor, e / s->step_epochs);
    else if (s->schedule == NET_SCHED_COSINE)
        sched = (1.0 + num_cos_pi((double)e / (double)epochs)) / 2.0;
    if (warm == 1.0 && sched == 1.0)
        return s->lr; /* the constant rate, as it was written */
    return s->lr * (warm * sched);
}
