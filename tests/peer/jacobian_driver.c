/*
 * The test driver for the Jacobian peer check (peer_clf.py): the Jacobian
 * of bnstudy's training-mode batch norm (the network's `batch` layer kind,
 * src/model/nn_batch.c) as its backward pass gives it, row i from the unit
 * vector e_i as the output's gradient, beside the closed form of
 * docs/definitions.md. It reads "B C H W eps" then B C H W inputs (a row's
 * values position-major, channel-minor, as the network holds them) and C
 * gammas from standard input, and writes for each channel j and each pair
 * of its values, "j i k backward closed" with i and k indexing the
 * channel's B H W values in the order the network holds them. Built by the
 * Makefile's test targets; not part of bnstudy.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/nn.h"
#include "model/run.h"
#include "study/exp.h"

static int read_input(size_t *b, nn_shape *s, double *eps, double **x,
                      double **gamma)
{
    if (scanf("%zu %zu %zu %zu %lf", b, &s->c, &s->h, &s->w, eps) != 5 ||
        *b < 2 || *b > 64 || s->c < 1 || s->c > 16 || nn_positions(*s) > 64)
        return -1;
    size_t n = *b * nn_size(*s);
    *x = malloc(n * sizeof **x);
    *gamma = malloc(s->c * sizeof **gamma);
    if (!*x || !*gamma)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (scanf("%lf", &(*x)[i]) != 1)
            return -1;
    for (size_t j = 0; j < s->c; j++)
        if (scanf("%lf", &(*gamma)[j]) != 1)
            return -1;
    return 0;
}

int main(void)
{
    size_t b;
    nn_shape s;
    double eps, *x = NULL, *gamma = NULL;
    if (read_input(&b, &s, &eps, &x, &gamma) != 0) {
        fprintf(stderr, "jacobian_driver: expected B C H W eps, B C H W "
                        "inputs and C gammas\n");
        return 2;
    }
    run_config cfg;
    run_default_config(&cfg);
    cfg.layer.eps = eps;
    nn_net_spec spec;
    bn_error err;
    nn_layer l;
    if (nn_parse("batch", &spec, &err) != 0 ||
        nn_layer_init(&l, &spec.l[0], 0, s, 2, b, &cfg.layer, &err) != 0) {
        fprintf(stderr, "jacobian_driver: %s\n", err.msg);
        return 1;
    }
    for (size_t j = 0; j < s.c; j++)
        l.t[0].p[j] = gamma[j];
    nn_pass ps = {NN_BN_BATCH_KEEP, 0, 0, NULL, 0};
    l.kind->forward(&l, &ps, b, x);
    size_t c = s.c, vals = b * nn_positions(s), n = vals * c;
    double *dy = calloc(n, sizeof *dy), *dx = malloc(n * sizeof *dx);
    if (!dy || !dx)
        return 1;
    for (size_t j = 0; j < c; j++)
        for (size_t i = 0; i < vals; i++) {
            dy[i * c + j] = 1.0;
            l.kind->backward(&l, &ps, b, x, dy, dx);
            dy[i * c + j] = 0.0;
            for (size_t k = 0; k < vals; k++) {
                double xi = l.save[i * c + j], xk = l.save[k * c + j];
                double closed = gamma[j] / l.sd[j] *
                                ((i == k) - 1.0 / (double)vals -
                                 xi * xk / (double)vals);
                printf("%zu\t%zu\t%zu\t%.17g\t%.17g\n", j, i, k,
                       dx[k * c + j], closed);
            }
        }
    free(dy);
    free(dx);
    free(x);
    free(gamma);
    nn_layer_free(&l);
    return 0;
}
