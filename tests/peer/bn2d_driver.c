/*
 * The test driver for the BatchNorm2d peer test (peer_bn2d.py), which
 * reaches what `bnstudy run` does not write (the maps, the filters, the
 * order of samples; tests/test_causes.c ties a run on [maps] to the same
 * order and buffers): it builds a convpop
 * population (a generated field, or images from a file through the PCG32
 * filter bank), trains bnstudy's layer (src/model/bn.c) on batches of whole
 * samples in the order convpop_order_groups gives, and writes what a peer
 * needs to repeat it: the maps, the filters, the order of samples, the
 * buffers and both modes' outputs. With --table it prints the effective
 * count of each channel's batch mean instead (docs/convolution.md).
 * Built by the Makefile's test targets; not part of bnstudy.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/bn.h"
#include "model/run.h"
#include "study/exp.h"
#include "pop/convpop.h"

typedef struct {
    const char *source, *images, *out, *batches;
    size_t m, h, w, ih, iw, k, c, b;
    size_t nch;
    convpop_channel *ch; /* nch of them, one per --channel */
    unsigned long long seed, order_seed;
    unsigned long epochs;
    bn_config layer;
    int table;
} options;

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "bn2d_driver: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    exit(2);
}

static size_t to_size(const char *s, const char *opt)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || s[0] < '0' || s[0] > '9')
        die("%s needs a non-negative integer", opt);
    return (size_t)v;
}

static double to_double(const char *s, const char *opt)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || end == s)
        die("%s needs a number", opt);
    return v;
}

/* An image file: whitespace-separated numbers, ih * iw per image. */
static double *read_images(const char *path, size_t ih, size_t iw,
                           size_t *m)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        die("cannot open %s", path);
    size_t n = 0, cap = 1024;
    double *v = malloc(cap * sizeof *v);
    double x;
    int r;
    while (v && (r = fscanf(fp, "%lf", &x)) == 1) {
        if (n == cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof *v);
            if (!v)
                break;
        }
        v[n++] = x;
    }
    if (!v)
        die("out of memory reading %s", path);
    if (!feof(fp))
        die("%s: not a list of numbers", path);
    fclose(fp);
    if (n == 0 || n % (ih * iw) != 0)
        die("%s: the count of numbers is not a multiple of ih * iw", path);
    *m = n / (ih * iw);
    return v;
}

static void parse(int argc, char **argv, options *o)
{
    static const struct option longs[] = {
        {"source", required_argument, 0, 's'},
        {"images", required_argument, 0, 'I'},
        {"ih", required_argument, 0, 'Y'},
        {"iw", required_argument, 0, 'X'},
        {"kernel", required_argument, 0, 'k'},
        {"channels", required_argument, 0, 'c'},
        {"channel", required_argument, 0, 'C'},
        {"samples", required_argument, 0, 'm'},
        {"height", required_argument, 0, 'H'},
        {"width", required_argument, 0, 'W'},
        {"seed", required_argument, 0, 'S'},
        {"order-seed", required_argument, 0, 'O'},
        {"batch", required_argument, 0, 'b'},
        {"epochs", required_argument, 0, 'E'},
        {"momentum", required_argument, 0, 'M'},
        {"momentum-weights", required_argument, 0, 'w'},
        {"variance", required_argument, 0, 'v'},
        {"estimator", required_argument, 0, 'e'},
        {"eps", required_argument, 0, 'p'},
        {"gamma", required_argument, 0, 'g'},
        {"beta", required_argument, 0, 'B'},
        {"out", required_argument, 0, 'o'},
        {"table", required_argument, 0, 't'},
        {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->source = "field";
    o->k = 3;
    o->c = 4;
    o->seed = 1;
    o->order_seed = 1;
    o->b = 4;
    o->epochs = 1;
    double momentum = 0.9;
    bn_weights weights = BN_WEIGHTS_OLD;
    run_config rc;
    run_default_config(&rc);
    o->layer = rc.layer;
    int opt;
    while ((opt = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (opt) {
        case 's': o->source = optarg; break;
        case 'I': o->images = optarg; break;
        case 'Y': o->ih = to_size(optarg, "--ih"); break;
        case 'X': o->iw = to_size(optarg, "--iw"); break;
        case 'k': o->k = to_size(optarg, "--kernel"); break;
        case 'c': o->c = to_size(optarg, "--channels"); break;
        case 'C': {
            convpop_channel *more =
                realloc(o->ch, (o->nch + 1) * sizeof *o->ch);
            if (!more)
                die("%s", "out of memory");
            o->ch = more;
            convpop_channel *ch = &o->ch[o->nch];
            if (sscanf(optarg, "%lf,%lf,%lf", &ch->r, &ch->mean, &ch->sd) !=
                3)
                die("--channel needs r,mean,sd, got %s", optarg);
            o->nch++;
            break;
        }
        case 'm': o->m = to_size(optarg, "--samples"); break;
        case 'H': o->h = to_size(optarg, "--height"); break;
        case 'W': o->w = to_size(optarg, "--width"); break;
        case 'S': o->seed = to_size(optarg, "--seed"); break;
        case 'O': o->order_seed = to_size(optarg, "--order-seed"); break;
        case 'b': o->b = to_size(optarg, "--batch"); break;
        case 'E': o->epochs = to_size(optarg, "--epochs"); break;
        case 'M': momentum = to_double(optarg, "--momentum"); break;
        case 'w':
            if (bn_weights_parse(optarg, &weights) != 0)
                die("--momentum-weights: old or new, got %s", optarg);
            break;
        case 'v':
            if (bn_variance_parse(optarg, &o->layer.variance) != 0)
                die("--variance: biased or unbiased, got %s", optarg);
            break;
        case 'e':
            if (bn_estimator_parse(optarg, &o->layer.estimator) != 0 ||
                o->layer.estimator == BN_EST_PRECISE)
                die("--estimator: ema, ema-debiased or cumulative, got %s",
                    optarg);
            break;
        case 'p': o->layer.eps = to_double(optarg, "--eps"); break;
        case 'g': o->layer.gamma = to_double(optarg, "--gamma"); break;
        case 'B': o->layer.beta = to_double(optarg, "--beta"); break;
        case 'o': o->out = optarg; break;
        case 't':
            o->table = 1;
            o->batches = optarg;
            break;
        default: exit(2);
        }
    }
    if (optind != argc)
        die("unexpected argument %s", argv[optind]);
    bn_error err;
    if (bn_set_momentum(&o->layer, momentum, weights, &err) != 0 ||
        bn_validate(&o->layer, &err) != 0)
        die("%s", err.msg);
    if (!o->table && !o->out)
        die("%s", "--out DIR or --table B1,B2,... is needed");
}

static FILE *open_out(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    if (!fp)
        die("cannot write %s", path);
    return fp;
}

static void close_out(FILE *fp)
{
    if (ferror(fp) || fclose(fp) != 0)
        die("%s", "write error");
}

static void print_table(const convpop_t *pop, const char *list)
{
    printf("channel\tB\tcount\tcount_fpc\tn_eff\tratio\n");
    for (size_t f = 0; f < pop->c; f++) {
        const char *s = list;
        while (*s) {
            char *end;
            unsigned long long b = strtoull(s, &end, 10);
            if (end == s || (*end && *end != ','))
                die("--table needs batch sizes like 1,8,64, got %s", list);
            convpop_neff ne;
            bn_error err;
            if (convpop_effective(pop, (size_t)b, f, &ne, &err) != 0)
                die("%s", err.msg);
            printf("%zu\t%llu\t%.0f\t%.6g\t%.6g\t%.6g\n", f, b, ne.count,
                   ne.count_fpc, ne.n_eff, ne.ratio);
            s = *end ? end + 1 : end;
        }
    }
}

/* Train on batches of o->b whole samples, then evaluate the rows trained
 * on in the last epoch, as bnstudy's run does. */
static void train_and_write(const convpop_t *pop, const options *o)
{
    size_t hw = pop->h * pop->w, c = pop->c, rows = o->b * hw;
    size_t nb = pop->m / o->b, kept = nb * rows;
    if (o->b < 1 || nb < 1 || rows < 2)
        die("%s", "--batch must be 1 to the samples, with at least 2 rows");
    size_t *perm = malloc(pop->n * sizeof *perm);
    double *y = malloc(pop->n * c * sizeof *y);
    double *xs = malloc(pop->n * c * sizeof *xs);
    double *ye = malloc(pop->n * c * sizeof *ye);
    if (!perm || !y || !xs || !ye)
        die("%s", "out of memory");
    bn_error err;
    if (convpop_order_groups(pop->n, pop->group, pop->m, o->order_seed, perm,
                             &err) != 0)
        die("%s", err.msg);
    bn_layer layer;
    double *mean = malloc(2 * c * sizeof *mean), *var = mean + c;
    if (!mean || bn_init(&layer, c, &o->layer) != 0)
        die("%s", "out of memory");
    for (unsigned long e = 0; e < o->epochs; e++)
        for (size_t k = 0; k < nb; k++) {
            for (size_t i = 0; i < rows; i++)
                memcpy(&xs[(k * rows + i) * c],
                       &pop->x[perm[k * rows + i] * c], c * sizeof *xs);
            bn_train_forward(&layer, rows, &xs[k * rows * c],
                             &y[k * rows * c], mean, var);
        }
    bn_eval_forward(&layer, kept, xs, ye);

    FILE *fp = open_out(o->out, "order.tsv");
    fprintf(fp, "sample\n");
    for (size_t q = 0; q < pop->m; q++)
        fprintf(fp, "%zu\n", pop->group[perm[q * hw]]);
    close_out(fp);
    fp = open_out(o->out, "buffers.tsv");
    fprintf(fp, "channel\trunning_mean\trunning_var\tupdates\n");
    for (size_t f = 0; f < c; f++)
        fprintf(fp, "%zu\t%.17g\t%.17g\t%zu\n", f, layer.rm[f], layer.rv[f],
                layer.updates);
    close_out(fp);
    fp = open_out(o->out, "outputs.tsv");
    fprintf(fp, "row");
    for (size_t f = 0; f < c; f++)
        fprintf(fp, "\ttrain_c%zu", f);
    for (size_t f = 0; f < c; f++)
        fprintf(fp, "\teval_c%zu", f);
    fprintf(fp, "\n");
    for (size_t i = 0; i < kept; i++) {
        fprintf(fp, "%zu", perm[i]);
        for (size_t f = 0; f < c; f++)
            fprintf(fp, "\t%.17g", y[i * c + f]);
        for (size_t f = 0; f < c; f++)
            fprintf(fp, "\t%.17g", ye[i * c + f]);
        fprintf(fp, "\n");
    }
    close_out(fp);
    bn_free(&layer);
    free(mean);
    free(perm);
    free(y);
    free(xs);
    free(ye);
}

static void write_maps(const convpop_t *pop, const char *dir)
{
    FILE *fp = open_out(dir, "maps.tsv");
    fprintf(fp, "sample\ty\tx");
    for (size_t f = 0; f < pop->c; f++)
        fprintf(fp, "\tc%zu", f);
    fprintf(fp, "\n");
    for (size_t i = 0; i < pop->n; i++) {
        size_t pos = i % (pop->h * pop->w);
        fprintf(fp, "%zu\t%zu\t%zu", pop->group[i], pos / pop->w,
                pos % pop->w);
        for (size_t f = 0; f < pop->c; f++)
            fprintf(fp, "\t%.17g", pop->x[i * pop->c + f]);
        fprintf(fp, "\n");
    }
    close_out(fp);
}

int main(int argc, char **argv)
{
    options o;
    parse(argc, argv, &o);
    convpop_t pop;
    bn_error err;
    double *filters = NULL;
    int images = strcmp(o.source, "images") == 0;
    if (images) {
        if (!o.images || !o.ih || !o.iw)
            die("%s", "--source images needs --images FILE --ih --iw");
        size_t m;
        double *img = read_images(o.images, o.ih, o.iw, &m);
        filters = malloc(o.c * o.k * o.k * sizeof *filters + 1);
        if (!filters)
            die("%s", "out of memory");
        if (convpop_from_images(img, m, o.ih, o.iw, o.c, o.k, o.seed, &pop,
                                filters, &err) != 0)
            die("%s", err.msg);
        free(img);
    } else if (strcmp(o.source, "field") == 0) {
        if (convpop_field(o.m, o.h, o.w, o.nch, o.ch, o.seed, &pop, &err) !=
            0)
            die("%s", err.msg);
    } else {
        die("--source: field or images, got %s", o.source);
    }
    if (o.table) {
        print_table(&pop, o.batches);
    } else {
        write_maps(&pop, o.out);
        if (images) {
            FILE *fp = open_out(o.out, "filters.tsv");
            fprintf(fp, "channel\tu\tv\tweight\n");
            for (size_t f = 0; f < pop.c; f++)
                for (size_t u = 0; u < o.k; u++)
                    for (size_t v = 0; v < o.k; v++)
                        fprintf(fp, "%zu\t%zu\t%zu\t%.17g\n", f, u, v,
                                filters[(f * o.k + u) * o.k + v]);
            close_out(fp);
        }
        train_and_write(&pop, &o);
    }
    convpop_free(&pop);
    free(filters);
    free(o.ch);
    return 0;
}
