/*
 * The layer table and what every kind shares: parsing a declared network
 * ("linear:16 batch relu linear:K") against the table, its canonical
 * text, the shapes a network's layers take, building and freeing a layer,
 * and PyTorch's default initial weights. A new kind is a row defined in
 * its own module and one line of `kinds` below.
 */
#include "model/nn.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/carve.h"

static const nn_kind *const kinds[] = {
    &nn_kind_linear, &nn_kind_conv,    &nn_kind_batch,
    &nn_kind_layer,  &nn_kind_group,   &nn_kind_relu,
    &nn_kind_dropout, &nn_kind_none,   &nn_kind_image,
};
#define N_KINDS (sizeof kinds / sizeof *kinds)

const nn_kind *nn_kind_get(size_t i) { return i < N_KINDS ? kinds[i] : NULL; }

const nn_kind *nn_kind_find(const char *name)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (strcmp(kinds[i]->name, name) == 0)
            return kinds[i];
    return NULL;
}

const char *nn_kind_list(const char *sep, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_KINDS && at < size; i++) {
        static const char *const form[] = {
            [NN_ARG_NONE] = "%s%s", [NN_ARG_UNITS] = "%s%s:N",
            [NN_ARG_COUNT] = "%s%s:N", [NN_ARG_SHARE] = "%s%s:P",
            [NN_ARG_SHAPE] = "%s%s:HxW"};
        int w = snprintf(buf + at, size - at, form[kinds[i]->arg],
                         i ? sep : "", kinds[i]->name);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    return buf;
}

/* ------------------------------------------------------------ parsing */

static int parse_count(const char *s, size_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long u = strtoull(s, &end, 10);
    if (errno || *end || u < 1 || u > NN_MAX_UNITS)
        return -1;
    *out = (size_t)u;
    return 0;
}

/* One layer's text, "name" or "name:arg". */
static int parse_layer(const char *tok, nn_spec *s, bn_error *err)
{
    char name[32];
    const char *colon = strchr(tok, ':');
    size_t len = colon ? (size_t)(colon - tok) : strlen(tok);
    char list[256];
    if (len >= sizeof name)
        return bn_fail(err, "unknown layer '%s' (%s)", tok,
                       nn_kind_list(", ", list, sizeof list));
    memcpy(name, tok, len);
    name[len] = '\0';
    memset(s, 0, sizeof *s);
    s->kind = nn_kind_find(name);
    if (!s->kind)
        return bn_fail(err, "unknown layer '%s' (%s)", tok,
                       nn_kind_list(", ", list, sizeof list));
    const char *arg = colon ? colon + 1 : NULL;
    switch (s->kind->arg) {
    case NN_ARG_NONE:
        if (arg)
            return bn_fail(err, "layer '%s' takes no argument", tok);
        return 0;
    case NN_ARG_UNITS:
        if (arg && strcmp(arg, "K") == 0)
            return 0; /* n 0: the classes */
        /* fall through */
    case NN_ARG_COUNT:
        if (!arg || parse_count(arg, &s->n) != 0)
            return bn_fail(err, "layer '%s' needs a count from 1 to %d%s",
                           tok, NN_MAX_UNITS,
                           s->kind->arg == NN_ARG_UNITS ? " or K (the classes)"
                                                        : "");
        return 0;
    case NN_ARG_SHARE: {
        char *end;
        errno = 0;
        s->p = arg ? strtod(arg, &end) : 0.0;
        if (!arg || !*arg || errno || *end || !(s->p >= 0.0 && s->p < 1.0))
            return bn_fail(err, "layer '%s' needs a share in [0, 1)", tok);
        return 0;
    }
    case NN_ARG_SHAPE: {
        char a[24], *x = arg ? strchr(arg, 'x') : NULL;
        size_t la = x ? (size_t)(x - arg) : 0;
        if (!x || la == 0 || la >= sizeof a)
            return bn_fail(err, "layer '%s' needs a shape HxW", tok);
        memcpy(a, arg, la);
        a[la] = '\0';
        if (parse_count(a, &s->n) != 0 || parse_count(x + 1, &s->n2) != 0)
            return bn_fail(err, "layer '%s' needs a shape HxW", tok);
        return 0;
    }
    }
    return 0;
}

int nn_parse(const char *text, nn_net_spec *spec, bn_error *err)
{
    memset(spec, 0, sizeof *spec);
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        const char *q = p;
        while (*q && *q != ' ' && *q != '\t')
            q++;
        char tok[64];
        size_t len = (size_t)(q - p);
        if (len >= sizeof tok)
            return bn_fail(err, "layer '%.20s...' is too long", p);
        memcpy(tok, p, len);
        tok[len] = '\0';
        if (spec->n == NN_MAX_LAYERS)
            return bn_fail(err, "more than %d layers", NN_MAX_LAYERS);
        if (parse_layer(tok, &spec->l[spec->n], err) != 0)
            return -1;
        spec->n++;
        p = q;
    }
    if (spec->n == 0)
        return bn_fail(err, "a network needs at least one layer");
    return 0;
}

void nn_format(const nn_net_spec *spec, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < spec->n && at < size; i++) {
        const nn_spec *s = &spec->l[i];
        const char *sep = i ? " " : "";
        int w;
        switch (s->kind->arg) {
        case NN_ARG_UNITS:
            w = s->n ? snprintf(buf + at, size - at, "%s%s:%zu", sep,
                                s->kind->name, s->n)
                     : snprintf(buf + at, size - at, "%s%s:K", sep,
                                s->kind->name);
            break;
        case NN_ARG_COUNT:
            w = snprintf(buf + at, size - at, "%s%s:%zu", sep, s->kind->name,
                         s->n);
            break;
        case NN_ARG_SHARE: {
            /* The shortest decimal that reads back as p, as written. */
            char num[32];
            for (int prec = 1; prec <= 17; prec++) {
                snprintf(num, sizeof num, "%.*g", prec, s->p);
                if (strtod(num, NULL) == s->p)
                    break;
            }
            w = snprintf(buf + at, size - at, "%s%s:%s", sep, s->kind->name,
                         num);
            break;
        }
        case NN_ARG_SHAPE:
            w = snprintf(buf + at, size - at, "%s%s:%zux%zu", sep,
                         s->kind->name, s->n, s->n2);
            break;
        default:
            w = snprintf(buf + at, size - at, "%s%s", sep, s->kind->name);
        }
        if (w < 0)
            return;
        at += (size_t)w;
    }
}

int nn_shapes(const nn_net_spec *spec, size_t f, size_t k, nn_shape *shapes,
              size_t *bad, bn_error *err)
{
    nn_shape s = {f, 1, 1};
    for (size_t i = 0; i < spec->n; i++) {
        if (shapes)
            shapes[i] = s;
        nn_shape out;
        if (spec->l[i].n > NN_MAX_UNITS || spec->l[i].n2 > NN_MAX_UNITS) {
            if (bad)
                *bad = i;
            return bn_fail(err, "layer %zu (%s): %zu is more than %d",
                           i + 1, spec->l[i].kind->name, spec->l[i].n,
                           NN_MAX_UNITS);
        }
        if (spec->l[i].kind->shape(&spec->l[i], s, k, &out, err) != 0) {
            if (bad)
                *bad = i;
            return -1;
        }
        if (nn_size(out) > (size_t)NN_MAX_UNITS * 64) {
            if (bad)
                *bad = i;
            return bn_fail(err, "layer %zu (%s) would give %zu values a row, "
                                "more than %d",
                           i + 1, spec->l[i].kind->name, nn_size(out),
                           NN_MAX_UNITS * 64);
        }
        s = out;
    }
    if (shapes)
        shapes[spec->n] = s;
    if (bad)
        *bad = spec->n ? spec->n - 1 : 0;
    if (s.h != 1 || s.w != 1 || s.c != k)
        return bn_fail(err, "the network must end with the %zu classes' "
                            "outputs (linear:K); its last layer gives %zu x "
                            "%zu x %zu",
                       k, s.c, s.h, s.w);
    return 0;
}

/* ------------------------------------------------------------ layers */

int nn_alloc(nn_layer *l, double **const *arrays, const size_t *sizes,
             size_t n_arrays)
{
    l->block = bn_carve_doubles(n_arrays, arrays, sizes);
    return l->block ? 0 : -1;
}

void nn_tensor_set(nn_layer *l, size_t i, const char *what, size_t rows,
                   size_t cols, double *p, double *g, double *m, double *v)
{
    nn_tensor *t = &l->t[i];
    snprintf(t->name, sizeof t->name, "%zu.%s", l->index, what);
    t->rows = rows, t->cols = cols;
    t->p = p, t->g = g, t->m = m, t->v = v;
    if (i + 1 > l->nt)
        l->nt = i + 1;
}

int nn_layer_init(nn_layer *l, const nn_spec *s, size_t index, nn_shape in,
                  size_t k, size_t cap, const bn_config *bn, bn_error *err)
{
    memset(l, 0, sizeof *l);
    l->kind = s->kind;
    l->spec = *s;
    l->index = index;
    l->in = in;
    if (s->kind->shape(s, in, k, &l->out, err) != 0)
        return -1;
    if (s->kind->arg == NN_ARG_UNITS && l->spec.n == 0)
        l->spec.n = k;
    if (s->kind->init(l, cap, bn) != 0) {
        nn_layer_free(l);
        return bn_fail(err, "out of memory for layer %zu (%s) and batches "
                            "of %zu",
                       index, s->kind->name, cap);
    }
    return 0;
}

void nn_layer_free(nn_layer *l)
{
    free(l->block);
    free(l->map);
    if (l->bn.block)
        bn_free(&l->bn);
    memset(l, 0, sizeof *l);
}

double nn_uniform(pcg32_t *rng)
{
    /* 53 random bits, 27 from the first draw and 26 from the second, as an
     * integer m < 2^53 (exact in a double), then scaled by 2^-53: the one
     * rounding-free scaling. The result is k / 2^53 for a uniform k. */
    uint64_t a = pcg32_next(rng) >> 5, b = pcg32_next(rng) >> 6;
    return (double)((a << 26) | b) * 0x1p-53;
}

/* PyTorch's nn.Linear and nn.Conv2d default: kaiming_uniform_(a =
 * sqrt(5)) for the weight, which is U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
 * and the same bound for the bias. 2u - 1 is exact for u on the 2^-53
 * grid, so each value is bound * (2u - 1) with one rounding. */
void nn_draw_uniform(pcg32_t *rng, size_t n, size_t fan_in, double *p)
{
    double bound = 1.0 / sqrt((double)fan_in);
    for (size_t i = 0; i < n; i++)
        p[i] = bound * (2.0 * nn_uniform(rng) - 1.0);
}
