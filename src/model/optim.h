/*
 * The optimisers and the learning-rate schedules of the classifier: a row
 * of the optimiser table per torch.optim class (SGD, SGD with Nesterov
 * momentum, Adam, AdamW), each step PyTorch's single-tensor update
 * formula in its order of operations (docs/definitions.md), and the
 * learning rate of each step as a warm-up over the first steps times a
 * schedule over the epochs.
 */
#ifndef BN_OPTIM_H
#define BN_OPTIM_H

#include <stddef.h>

#include "model/config.h"
#include "model/nn.h"

typedef struct {
    const char *name;
    const char *help;
    /* Uses sgd_momentum; uses adam_beta1, adam_beta2 and adam_eps. */
    int momentum, adam;
    /* One step on tensor t, the run's step number (0 for the first) at
     * learning rate lr; f32 rounds every stored value to float32. */
    void (*step)(const clf_settings *s, nn_tensor *t, size_t step, double lr,
                 int f32);
} optim_def;

const optim_def *optim_get(net_optimizer o);
/* Optimiser i's name, NULL past the last (the key's choices). */
const char *optim_name(int i);
const char *optim_schedule_name(int i);
const char *net_dtype_name(int i);

/* The learning rate of step t (from 0) in epoch e (from 0) of E:
 * lr x (warm-up(t) x schedule(e)). */
double optim_lr(const clf_settings *s, size_t t, unsigned long e,
                unsigned long epochs);
/* x^n by repeated squaring: the same products everywhere (libm's pow is
 * not), within a few ulp for the powers a run takes. */
double optim_power(double x, unsigned long long n);

#endif
