/*
 * The classifier's test driver, for the PyTorch peer test (peer_clf.py):
 * it trains src/clf.c on a population the peer wrote and writes back what
 * the peer compares. It stands in for `bnstudy run` until the classifier
 * is wired into runs, and is built only by the test targets.
 *
 *   clf_driver --population FILE --classes K --out DIR [settings]
 *
 * FILE is a TSV with a header: one column per feature and an integer
 * column `label`. --train-order and --score-order name TSV files with a
 * column `row`: the permutation to train on (default: the file's order)
 * and the one to score in training mode (default: the training order).
 * --holdout FILE scores a second population too. DIR receives
 *   weights.tsv  stage tensor i j value: stages initial, grad (the first
 *                batch's gradients) and final
 *   steps.tsv    epoch batch rows loss: every training batch's mean loss
 *   scores.tsv   epoch population mode rows correct accuracy loss: after
 *                every epoch (epoch 1..E) and after training (epoch
 *                "final", with the precise estimator's buffers)
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clf.h"
#include "tsv.h"

static void die(const char *fmt, const char *what)
{
    fprintf(stderr, "clf_driver: ");
    fprintf(stderr, fmt, what);
    fputc('\n', stderr);
    exit(2);
}

static double num(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end)
        die("not a number: %s", opt);
    return v;
}

static unsigned long whole(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || *s == '-')
        die("not a whole number: %s", opt);
    return v;
}

typedef struct {
    size_t n, f;
    double *x;
    int *label;
    clf_data d;
} table;

static void read_population(const char *path, size_t k, table *t)
{
    tsv_table tv;
    bn_error err;
    if (tsv_read(path, &tv, &err) != 0)
        die("%s", err.msg);
    int lc = tsv_column(&tv, "label");
    if (lc < 0 || tv.ncol < 2 || tv.nrow < 1)
        die("%s: needs feature columns and a label column", path);
    t->n = tv.nrow;
    t->f = tv.ncol - 1;
    t->x = malloc(t->n * t->f * sizeof *t->x);
    t->label = malloc(t->n * sizeof *t->label);
    if (!t->x || !t->label)
        die("%s: out of memory", path);
    for (size_t i = 0; i < t->n; i++) {
        size_t c2 = 0;
        for (size_t c = 0; c < tv.ncol; c++) {
            const char *cell = tsv_cell(&tv, i, c);
            if ((int)c == lc)
                t->label[i] = (int)whole(path, cell);
            else
                t->x[i * t->f + c2++] = num(path, cell);
        }
    }
    tsv_free(&tv);
    t->d = (clf_data){t->n, t->f, k, t->x, t->label};
}

/* A permutation of n rows from a TSV column `row`, or the identity. */
static size_t *read_order(const char *path, size_t n)
{
    size_t *p = malloc(n * sizeof *p);
    unsigned char *seen = calloc(n, 1);
    if (!p || !seen)
        die("%s", "out of memory");
    if (!path) {
        for (size_t i = 0; i < n; i++)
            p[i] = i;
        free(seen);
        return p;
    }
    tsv_table tv;
    bn_error err;
    if (tsv_read(path, &tv, &err) != 0)
        die("%s", err.msg);
    int rc = tsv_column(&tv, "row");
    if (rc < 0 || tv.nrow != n)
        die("%s: needs a column row with one line per population row", path);
    for (size_t i = 0; i < n; i++) {
        p[i] = whole(path, tsv_cell(&tv, i, (size_t)rc));
        if (p[i] >= n || seen[p[i]]++)
            die("%s: not a permutation", path);
    }
    tsv_free(&tv);
    free(seen);
    return p;
}

typedef struct {
    FILE *steps, *scores, *weights;
    const table *train, *holdout;
    const size_t *score_order, *holdout_order;
    run_partial partial;
} driver;

static void write_scores(driver *dr, const char *epoch, clf_net *net)
{
    const table *pops[] = {dr->train, dr->holdout};
    const size_t *orders[] = {dr->score_order, dr->holdout_order};
    const char *names[] = {"train", "holdout"};
    for (int p = 0; p < 2; p++) {
        if (!pops[p])
            continue;
        clf_score tr, ev;
        bn_error err;
        if (clf_score_train_mode(net, &pops[p]->d, orders[p], dr->partial,
                                 &tr, &err) != 0 ||
            clf_score_eval_mode(net, &pops[p]->d, &ev, &err) != 0)
            die("%s", err.msg);
        fprintf(dr->scores, "%s\t%s\ttrain_mode\t%zu\t%zu\t%.17g\t%.17g\n",
                epoch, names[p], tr.rows, tr.correct, tr.accuracy, tr.loss);
        fprintf(dr->scores, "%s\t%s\teval_mode\t%zu\t%zu\t%.17g\t%.17g\n",
                epoch, names[p], ev.rows, ev.correct, ev.accuracy, ev.loss);
    }
}

static void on_step(void *ctx, const clf_step *s)
{
    driver *dr = ctx;
    fprintf(dr->steps, "%lu\t%zu\t%zu\t%.17g\n", s->epoch + 1, s->index,
            s->b, s->loss);
    if (s->epoch == 0 && s->index == 0)
        clf_write_grads(dr->weights, "grad", (clf_net *)s->net);
}

static void on_epoch(void *ctx, unsigned long epoch, clf_net *net)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lu", epoch + 1);
    write_scores(ctx, buf, net);
}

static FILE *create(const char *dir, const char *name, const char *header)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    if (!fp)
        die("cannot write %s", path);
    fputs(header, fp);
    return fp;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"population", 1, 0, 'p'},   {"classes", 1, 0, 'K'},
        {"out", 1, 0, 'o'},          {"train-order", 1, 0, 't'},
        {"score-order", 1, 0, 's'},  {"holdout", 1, 0, 'H'},
        {"holdout-order", 1, 0, 'S'}, {"hidden", 1, 0, 'h'},
        {"norm", 1, 0, 'n'},         {"batch-size", 1, 0, 'b'},
        {"epochs", 1, 0, 'e'},       {"partial", 1, 0, 'P'},
        {"momentum", 1, 0, 'm'},     {"momentum-weights", 1, 0, 'w'},
        {"variance", 1, 0, 'v'},     {"estimator", 1, 0, 'E'},
        {"precise-batches", 1, 0, 'k'}, {"eps", 1, 0, 'x'},
        {"freeze-after", 1, 0, 'F'}, {"lr", 1, 0, 'l'},
        {"sgd-momentum", 1, 0, 'M'}, {"weight-decay", 1, 0, 'd'},
        {"init-seed", 1, 0, 'i'},    {0, 0, 0, 0},
    };
    clf_config cfg;
    clf_default_config(&cfg);
    const char *pop = NULL, *out = NULL, *torder = NULL, *sorder = NULL;
    const char *hold = NULL, *horder = NULL;
    size_t k = 0;
    double momentum = cfg.bn.momentum;
    bn_weights weights = cfg.bn.weights;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'p': pop = optarg; break;
        case 'K': k = whole("--classes", optarg); break;
        case 'o': out = optarg; break;
        case 't': torder = optarg; break;
        case 's': sorder = optarg; break;
        case 'H': hold = optarg; break;
        case 'S': horder = optarg; break;
        case 'h': cfg.hidden = whole("--hidden", optarg); break;
        case 'n':
            if (clf_norm_parse(optarg, &cfg.norm) != 0)
                die("--norm: %s", optarg);
            break;
        case 'b': cfg.batch_size = whole("--batch-size", optarg); break;
        case 'e': cfg.epochs = whole("--epochs", optarg); break;
        case 'P':
            if (run_partial_parse(optarg, &cfg.partial) != 0)
                die("--partial: %s", optarg);
            break;
        case 'm': momentum = num("--momentum", optarg); break;
        case 'w':
            if (bn_weights_parse(optarg, &weights) != 0)
                die("--momentum-weights: %s", optarg);
            break;
        case 'v':
            if (bn_variance_parse(optarg, &cfg.bn.variance) != 0)
                die("--variance: %s", optarg);
            break;
        case 'E':
            if (bn_estimator_parse(optarg, &cfg.bn.estimator) != 0)
                die("--estimator: %s", optarg);
            break;
        case 'k':
            cfg.precise_batches = whole("--precise-batches", optarg);
            break;
        case 'x': cfg.bn.eps = num("--eps", optarg); break;
        case 'F': cfg.freeze_after = whole("--freeze-after", optarg); break;
        case 'l': cfg.lr = num("--lr", optarg); break;
        case 'M': cfg.sgd_momentum = num("--sgd-momentum", optarg); break;
        case 'd': cfg.weight_decay = num("--weight-decay", optarg); break;
        case 'i': cfg.init_seed = whole("--init-seed", optarg); break;
        default: die("%s", "unknown option");
        }
    }
    if (!pop || !out || k == 0 || optind != argc)
        die("%s", "usage: clf_driver --population FILE --classes K --out "
                  "DIR [settings]");
    bn_error err;
    if (bn_set_momentum(&cfg.bn, momentum, weights, &err) != 0)
        die("%s", err.msg);

    table train, holdout;
    read_population(pop, k, &train);
    size_t *order = read_order(torder, train.n);
    size_t *score_order = sorder ? read_order(sorder, train.n) : order;
    size_t *holdout_order = NULL;
    if (hold) {
        read_population(hold, k, &holdout);
        holdout_order = read_order(horder, holdout.n);
    }
    if (clf_validate(&cfg, &train.d, &err) != 0)
        die("%s", err.msg);

    driver dr = {
        create(out, "steps.tsv", "epoch\tbatch\trows\tloss\n"),
        create(out, "scores.tsv",
               "epoch\tpopulation\tmode\trows\tcorrect\taccuracy\tloss\n"),
        create(out, "weights.tsv", CLF_WEIGHTS_HEADER),
        &train, hold ? &holdout : NULL, score_order, holdout_order,
        cfg.partial,
    };
    clf_net net;
    if (clf_init(&net, &cfg, train.f, k, &err) != 0)
        die("%s", err.msg);
    clf_write_weights(dr.weights, "initial", &net);
    clf_observer obs = {on_step, on_epoch, &dr};
    if (clf_train(&net, &cfg, &train.d, order, &obs, &err) != 0)
        die("%s", err.msg);
    clf_write_weights(dr.weights, "final", &net);
    write_scores(&dr, "final", &net);
    if (fclose(dr.steps) || fclose(dr.scores) || fclose(dr.weights))
        die("%s", "write error");
    clf_free(&net);
    if (score_order != order)
        free(score_order);
    free(order);
    free(train.x);
    free(train.label);
    if (hold) {
        free(holdout_order);
        free(holdout.x);
        free(holdout.label);
    }
    return 0;
}
