/*
 * The classifier as a model of runs and sweeps, and the population stage
 * it needs (docs/definitions.md, "Labels and held-out rows", "The
 * evaluation rows" and "The classifier"): the generated classes and the
 * second draw against GSL's quantile and gaussian on the same PCG32
 * streams; a file's stratified split against GSL's shuffle; the shift and
 * scale against long double; a second file's classes renumbered; a run's
 * scores against net.h driven by hand on the same rows; the last curve
 * row equal to the summary row; the same bytes whatever --jobs is; the
 * population identifiers; and every setting that does not apply to the
 * models an experiment trains refused, naming its line.
 */
#include "helpers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "model/classifier.h"
#include "model/net.h"
#include "pop/evalpop.h"
#include "study/exp.h"
#include "study/outfile.h"
#include "base/tsv.h"
#include "model/order.h"
#include "model/score.h"
#include "pop/popid.h"

static char tmpdir[256];

static int group_setup(void **state)
{
    (void)state;
    return test_tmpdir_make(tmpdir, sizeof tmpdir, "classifier");
}

static int group_teardown(void **state)
{
    (void)state;
    return test_tmpdir_remove(tmpdir);
}

/* ---- labels of the generated population ---- */

typedef struct {
    double t;
    size_t i;
} ranked;

static int by_t(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The definition again with GSL: t_i = z_i + s eta_i, eta from GSL's
 * polar gaussian on PCG32(seed, initseq), z from GSL's quantile; the row
 * of rank r is in class floor(K r / N). */
static void gsl_labels(size_t n, size_t k, double s, uint64_t seed,
                       uint64_t initseq, size_t *label)
{
    gsl_rng *r = pcg32_gsl_alloc(seed, initseq);
    ranked *q = malloc(n * sizeof *q);
    assert_non_null(r);
    assert_non_null(q);
    for (size_t i = 0; i < n; i++) {
        double z = gsl_cdf_ugaussian_Pinv(((double)i + 0.5) / (double)n);
        q[i].t = z + s * gsl_ran_gaussian(r, 1.0);
        q[i].i = i;
    }
    qsort(q, n, sizeof *q, by_t);
    for (size_t j = 0; j < n; j++)
        label[q[j].i] = j * k / n;
    free(q);
    gsl_rng_free(r);
}

static void test_generated_classes(void **state)
{
    (void)state;
    pop_spec spec;
    assert_int_equal(pop_default_spec(&spec), 0);
    pop_t plain, pop, held;
    bn_error err;
    assert_int_equal(pop_generate(&spec, &plain, &err), 0);
    spec.classes = 4;
    spec.label_noise = 0.25;
    assert_int_equal(pop_generate(&spec, &pop, &err), 0);
    size_t n = pop.n, want[512], size[4] = {0};
    /* Labels leave the features as they were. */
    assert_memory_equal(plain.x, pop.x, n * pop.f * sizeof(double));
    assert_null(plain.label.column);
    assert_string_equal(pop.label.column, "label");
    assert_int_equal(pop.label.n_levels, 4);
    gsl_labels(n, 4, 0.25, 1, PCG32_INITSEQ_LABELS, want);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(pop.label.of_row[i], want[i]);
        size[pop.label.of_row[i]]++;
    }
    for (int c = 0; c < 4; c++)
        assert_int_equal(size[c], 128);
    /* Nearly grouped by f0 (the latent itself), not exactly: the noise
     * moves rows near a boundary. */
    size_t off = 0;
    for (size_t i = 0; i < n; i++)
        off += pop.label.of_row[i] != i * 4 / n;
    assert_true(off > 0 && off < n / 4); /* 20% expected */

    /* The second draw: features from PCG32(seed, 5) and labels from
     * PCG32(seed, 6), the same recipe. */
    assert_int_equal(pop_generate_held_out(&spec, &held, &err), 0);
    gsl_rng *r = pcg32_gsl_alloc(1, PCG32_INITSEQ_HELD_OUT);
    assert_non_null(r);
    for (size_t i = 0; i < n; i++) {
        double z = gsl_cdf_ugaussian_Pinv(((double)i + 0.5) / (double)n);
        for (size_t j = 0; j < spec.n_features; j++) {
            const pop_feature *ft = &spec.features[j];
            double e = gsl_ran_gaussian(r, 1.0);
            double x = ft->mean + ft->sd * (ft->rho * z +
                                            sqrt(1 - ft->rho * ft->rho) * e);
            assert_close(held.x[i * held.f + j], x, 1e-13, 1.0 + fabs(x));
        }
    }
    gsl_rng_free(r);
    gsl_labels(n, 4, 0.25, 1, PCG32_INITSEQ_HELD_OUT_LABELS, want);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(held.label.of_row[i], want[i]);
    assert_memory_not_equal(held.x, pop.x, n * pop.f * sizeof(double));
    pop_free(&held);

    /* Without noise the classes are the latent's quantiles exactly. */
    pop_free(&pop);
    spec.label_noise = 0.0;
    spec.classes = 3;
    assert_int_equal(pop_generate(&spec, &pop, &err), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(pop.label.of_row[i], i * 3 / n);
    spec.classes = 1;
    assert_int_equal(pop_generate(&spec, &held, &err), -1);
    assert_non_null(strstr(err.msg, "classes"));
    pop_free(&pop);
    pop_free(&plain);
    pop_spec_free(&spec);
}

/* ---- the split, the shift and a second file ---- */

/* 18 rows of 2 features, classes a (10 rows), b (7) and c (1), from a
 * CSV, as a population file is read. */
static void class_pop(pop_t *pop, const char *levels)
{
    char text[2048];
    size_t len = (size_t)snprintf(text, sizeof text, "u,v,cls\n");
    for (size_t i = 0; i < 18; i++) {
        char c = i < 10 ? levels[0] : i < 17 ? levels[1] : levels[2];
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "%zu.5,%g,%c\n", i, 100.0 - 3.0 * (double)i,
                                c);
    }
    popfile_options opt = {.format = POPFILE_CSV, .label = "cls"};
    popfile pf;
    bn_error err;
    if (popfile_parse("rows.csv", (const unsigned char *)text, len, &opt, &pf,
                      &err) != 0 ||
        pop_from_file(&pf, pop, &err) != 0)
        fail_msg("%s", err.msg);
}

static void test_held_out_split(void **state)
{
    (void)state;
    pop_t pop, train, held;
    class_pop(&pop, "abc");
    bn_error err;
    assert_int_equal(evalpop_split(&pop, 0.25, 3, &train, &held, &err), 0);
    /* Per class floor(0.25 n + 1/2): 3 of 10, 2 of 7, 0 of 1; chosen by
     * GSL's shuffle of each class's rows on PCG32(3, 7), class by class. */
    unsigned char out[18] = {0};
    gsl_rng *r = pcg32_gsl_alloc(3, PCG32_INITSEQ_SPLIT);
    assert_non_null(r);
    size_t a[10], b[7], c[1] = {17};
    for (size_t i = 0; i < 10; i++)
        a[i] = i;
    for (size_t i = 0; i < 7; i++)
        b[i] = 10 + i;
    gsl_ran_shuffle(r, a, 10, sizeof *a);
    gsl_ran_shuffle(r, b, 7, sizeof *b);
    gsl_ran_shuffle(r, c, 1, sizeof *c);
    gsl_rng_free(r);
    for (size_t i = 0; i < 3; i++)
        out[a[i]] = 1;
    for (size_t i = 0; i < 2; i++)
        out[b[i]] = 1;
    assert_int_equal(held.n, 5);
    assert_int_equal(train.n, 13);
    size_t ih = 0, it = 0;
    for (size_t i = 0; i < 18; i++) {
        pop_t *part = out[i] ? &held : &train;
        size_t at = out[i] ? ih++ : it++;
        assert_int_equal(part->origin[at], i); /* the file's order */
        assert_memory_equal(&part->x[at * 2], &pop.x[i * 2],
                            2 * sizeof(double));
        assert_int_equal(part->label.of_row[at], pop.label.of_row[i]);
    }
    /* Each part's truth is its own rows'. */
    long double m, v;
    ld_moments(held.n, 2, held.x, &m, &v);
    assert_close(held.mean[0], m, 1e-15, fabsl(m));
    assert_close(held.var[0], v, 1e-14, v);
    assert_string_equal(held.label.levels[2], "c");
    pop_free(&train);
    pop_free(&held);
    /* Too few to hold out, or to train on. */
    assert_int_equal(evalpop_split(&pop, 0.04, 3, &train, &held, &err), -1);
    assert_non_null(strstr(err.msg, "holds out 0"));
    assert_int_equal(evalpop_split(&pop, 1.0, 3, &train, &held, &err), -1);
    assert_non_null(strstr(err.msg, "leaving 0 to train on"));
    pop_free(&pop);
}

static void test_shift_and_match(void **state)
{
    (void)state;
    pop_t pop, out, other;
    class_pop(&pop, "abc");
    bn_error err;
    assert_int_equal(evalpop_shift(&pop, 1.0, 2.0, 0.0, &out, &err), 0);
    for (size_t j = 0; j < 2; j++) {
        long double sd = sqrtl(pop.var[j]);
        assert_close(out.mean[j], pop.mean[j] + sd, 1e-14,
                     fabsl(pop.mean[j]) + sd);
        assert_rel(out.var[j], 4.0L * pop.var[j], 1e-13);
        for (size_t i = 0; i < 18; i++) {
            long double x = pop.mean[j] + sd +
                            2.0L * ((long double)pop.x[i * 2 + j] -
                                    pop.mean[j]);
            assert_close(out.x[i * 2 + j], x, 1e-15, fabsl(x) + sd);
        }
    }
    assert_memory_equal(out.label.of_row, pop.label.of_row,
                        18 * sizeof(size_t));
    pop_free(&out);

    /* A second file's classes numbered as the training rows number them:
     * "c", "b" and "a" there are 2, 1 and 0 here. */
    class_pop(&other, "cba");
    assert_int_equal(evalpop_match(&pop, &other, "eval.csv", &err), 0);
    for (size_t i = 0; i < 18; i++)
        assert_int_equal(other.label.of_row[i],
                         i < 10 ? 2u : i < 17 ? 1u : 0u);
    assert_string_equal(other.label.levels[0], "a");
    pop_free(&other);
    class_pop(&other, "abd");
    assert_int_equal(evalpop_match(&pop, &other, "eval.csv", &err), -1);
    assert_non_null(strstr(err.msg, "eval.csv: class 'd'"));
    free(other.names[1]);
    other.names[1] = malloc(2);
    strcpy(other.names[1], "w");
    assert_int_equal(evalpop_match(&pop, &other, "eval.csv", &err), -1);
    assert_non_null(strstr(err.msg, "feature 2 is 'w'"));
    pop_free(&other);
    pop_free(&pop);
}

/* ---- runs ---- */

static void load(exp_t *e, const char *dir, const char *name,
                 const char *text)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    test_write_file(path, text);
    bn_error err;
    if (exp_load(e, path, NULL, &err) != 0)
        fail_msg("%s", err.msg);
}

static int *labels(const pop_t *p)
{
    int *l = malloc(p->n * sizeof *l);
    assert_non_null(l);
    for (size_t i = 0; i < p->n; i++)
        l[i] = (int)p->label.of_row[i];
    return l;
}

/* |w| of a weight tensor, in long double. */
static long double ld_norm(const nn_tensor *t)
{
    long double s = 0;
    for (size_t i = 0; i < t->rows * t->cols; i++)
        s += (long double)t->p[i] * t->p[i];
    return sqrtl(s);
}

/* The default network's radial part by its definition (docs/definitions.md,
 * "The radial part"): over every step and unit j of the linear layer
 * before batch norm, |w_j.g_j| / (|w_j| |g_j|), and the same of w_j.g_j
 * less its exact value gamma_j dgamma_j eps / (v_j + eps). */
typedef struct {
    long double radial, excess;
} radial_ref;

static void radial_step(void *ctx, const net_step *st)
{
    radial_ref *r = ctx;
    const nn_layer *lin = &st->net->l[0], *bn = &st->net->l[1];
    if (bn->mode == NN_BN_RUNNING)
        return;
    const nn_tensor *t = &lin->t[0];
    for (size_t j = 0; j < t->rows; j++) {
        long double dot = 0, ww = 0, gg = 0;
        for (size_t c = 0; c < t->cols; c++) {
            long double p = t->p[j * t->cols + c], g = t->g[j * t->cols + c];
            dot += p * g;
            ww += p * p;
            gg += g * g;
        }
        long double scale = sqrtl(ww) * sqrtl(gg), eps = bn->bn.eps;
        if (!(scale > 0))
            continue;
        long double exact = (long double)bn->t[0].p[j] * bn->t[0].g[j] *
                            (eps / (bn->var[j] + eps));
        r->radial = fmaxl(r->radial, fabsl(dot) / scale);
        r->excess = fmaxl(r->excess, fabsl(dot - exact) / scale);
    }
}

/* A run's scores are net.h's on the rows the population stage makes,
 * trained in the order's permutation and scored in `shuffled`'s with the
 * run's seed; the evaluation rows shifted as [evaluation] says. */
/* The held-out rows in the order evp, sorted by class by counting
 * (stable), for acc_train_by_class. */
static size_t *by_class(const net_data *d, const size_t *evp)
{
    size_t *out = malloc(d->n * sizeof *out), at = 0;
    assert_non_null(out);
    for (int c = 0; c < (int)d->k; c++)
        for (size_t i = 0; i < d->n; i++)
            if (d->label[evp[i]] == c)
                out[at++] = evp[i];
    assert_int_equal(at, d->n);
    return out;
}

/* The batch-dependence scores from batches made apart (helpers.c): each
 * row's logits in each, in both modes, their ranges in long double, and
 * the rows whose largest logit (the first on a tie) moves. */
static void clf_dependence_ref(net_t *net, const net_data *d,
                               const size_t *evp, const run_config *cfg,
                               const run_result *res, score_refs *ck)
{
    size_t count, b = cfg->batch_size, n = d->n, k = d->k;
    size_t *rows = ref_compositions(n, b, cfg->compositions, cfg->seed,
                                    &count);
    long double *lo = malloc(2 * n * k * sizeof *lo), *hi = lo + n * k;
    double *x = malloc(b * d->f * sizeof *x), *z = malloc(b * k * sizeof *z);
    int *lab = malloc(b * sizeof *lab), *cls = malloc(n * sizeof *cls);
    int *moved = calloc(n, sizeof *moved);
    size_t *seen = calloc(n, sizeof *seen);
    assert_true(lo && x && z && lab && cls && moved && seen);
    for (size_t t = 0; t < count; t++) {
        const size_t *r = &rows[t * b];
        for (size_t i = 0; i < b; i++) {
            memcpy(&x[i * d->f], &d->x[r[i] * d->f], d->f * sizeof *x);
            lab[i] = d->label[r[i]];
        }
        net_forward(net, b, x, lab, NN_BN_RUNNING, 0);
        memcpy(z, net_logits(net), b * k * sizeof *z);
        net_forward(net, b, x, lab, NN_BN_BATCH_KEEP, 0);
        const double *zt = net_logits(net);
        for (size_t i = 0; i < b; i++) {
            /* Evaluation mode: the row alone gives the same logits. */
            net_forward(net, 1, &x[i * d->f], &lab[i], NN_BN_RUNNING, 0);
            assert_memory_equal(net_logits(net), &z[i * k], k * sizeof *z);
            net_forward(net, b, x, lab, NN_BN_BATCH_KEEP, 0);
            size_t best = 0;
            for (size_t c = 0; c < k; c++) {
                size_t at = r[i] * k + c;
                long double v = zt[i * k + c];
                lo[at] = seen[r[i]] == 0 || v < lo[at] ? v : lo[at];
                hi[at] = seen[r[i]] == 0 || v > hi[at] ? v : hi[at];
                if (zt[i * k + c] > zt[i * k + best])
                    best = c;
            }
            if (seen[r[i]]++ > 0 && cls[r[i]] != (int)best)
                moved[r[i]] = 1;
            cls[r[i]] = (int)best;
        }
    }
    long double worst = 0.0L, sum = 0.0L;
    size_t twice = 0, flips = 0;
    for (size_t i = 0; i < n; i++) {
        flips += moved[i];
        if (seen[i] < 2)
            continue;
        long double row = 0.0L;
        for (size_t c = 0; c < k; c++)
            row = fmaxl(row, hi[i * k + c] - lo[i * k + c]);
        worst = fmaxl(worst, row);
        sum += row;
        twice++;
    }
    assert_true(count > 0 && twice > 0);
    assert_true(score_ref(ck, res, "dep_batches") == (double)count);
    assert_close(score_ref(ck, res, "batch_dependence"), worst, 1e-12,
                 worst + 1.0L);
    assert_close(score_ref(ck, res, "batch_dependence_mean"),
                 sum / (long double)twice, 1e-12, worst + 1.0L);
    assert_true(score_ref(ck, res, "batch_dependence_eval") == 0.0);
    assert_true(score_ref(ck, res, "class_flips") ==
                (double)flips / (double)n);
    size_t *sorted = by_class(d, evp);
    net_score s;
    bn_error err;
    assert_int_equal(net_score_train_mode(net, d, sorted, &s, NULL, NULL,
                                          &err),
                     0);
    assert_true(score_ref(ck, res, "acc_train_by_class") == s.accuracy);
    free(sorted);
    free(rows);
    free(lo);
    free(x);
    free(z);
    free(lab);
    free(cls);
    free(moved);
    free(seen);
}

/* acc_train_by_group on a file with a group column: the held-out rows in
 * the shuffled order, stably sorted by group by counting here, scored in
 * training mode by the network the run trained. The groups' names are
 * in neither the rows' order nor the classes' (u2 first), so a sort by
 * row, by class or by name read as the index would score other batches. */
static void group_accuracy_ref(const char *dir, score_refs *ck)
{
    char path[400];
    snprintf(path, sizeof path, "%s/g.tsv", dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("a\tb\ty\tuser\n", fp);
    static const char *users[] = {"u2", "u0", "u3", "u1"};
    for (int i = 0; i < 96; i++) {
        double z = (i - 47.5) / 24.0, u = (double)((i * 7) % 4);
        fprintf(fp, "%.17g\t%.17g\t%d\t%s\n", z + u + 0.1 * ((i * 37) % 11),
                -z + 0.5 * u, i * 3 / 96, users[(i * 7) % 4]);
    }
    assert_int_equal(fclose(fp), 0);
    exp_t *e = malloc(sizeof *e);
    assert_non_null(e);
    load(e, dir, "g.ini",
         "[population]\nfile = g.tsv\nlabel = y\ngroup = user\n"
         "[model]\ntype = classifier\nhidden = 4\nlr = 0.2\n"
         "[sweep]\nbatch_size = 8\nepochs = 2\nseed = 3\n"
         "compositions = 2\n");
    exp_pops pops;
    bn_error err;
    assert_int_equal(exp_populations(e, 1, &pops, &err), 0);
    run_config cfg;
    exp_config(e, 0, &cfg);
    run_result res, own;
    assert_int_equal(run_execute_on(&pops.p, &cfg, NULL, &res, &err), 0);
    const pop_t *tr = pops.p.train, *ev = pops.p.held_out;
    assert_non_null(ev->group.of_row);
    size_t *perm = malloc(tr->n * sizeof *perm);
    size_t *evp = malloc(ev->n * sizeof *evp), *by = malloc(ev->n * sizeof *by);
    assert_true(perm && evp && by);
    order_spec shuffled;
    assert_int_equal(order_parse("shuffled", tr, &shuffled, &err), 0);
    assert_int_equal(order_make(&shuffled, tr, 3, perm, &err), 0);
    assert_int_equal(order_make(&shuffled, ev, 3, evp, &err), 0);
    net_t net;
    assert_int_equal(classifier_train(tr, ev, perm, &cfg, NULL, &net, &own,
                                      &err),
                     0);
    size_t at = 0, k = ev->label.n_levels;
    for (size_t g = 0; g < ev->group.n_levels; g++)
        for (size_t i = 0; i < ev->n; i++)
            if (ev->group.of_row[evp[i]] == g)
                by[at++] = evp[i];
    assert_int_equal(at, ev->n);
    int *le = labels(ev);
    net_data de = {ev->n, ev->f, k, ev->x, le, NULL};
    net_score s;
    assert_int_equal(net_score_train_mode(&net, &de, by, &s, NULL, NULL,
                                          &err),
                     0);
    assert_true(score_ref(ck, &res, "acc_train_by_group") == s.accuracy);
    assert_true(own.acc_train_by_group == s.accuracy);
    /* Batches of one user are not batches of one class. */
    assert_true(s.accuracy != res.acc_train_by_class);
    net_free(&net);
    free(le);
    free(perm);
    free(evp);
    free(by);
    run_result_free(&own);
    run_result_free(&res);
    exp_pops_free(&pops);
    exp_free(e);
    free(e);
}

void ref_classifier_scores(const char *root)
{
    char dir[300];
    test_fresh_dir(root, dir, sizeof dir, "scores");
    exp_t *e = malloc(sizeof *e);
    assert_non_null(e);
    load(e, dir, "s.ini",
         "[population]\nrows = 200\nclasses = 3\n"
         "[evaluation]\nshift = 0.5\nscale = 1.5\n"
         "[model]\ntype = classifier\nhidden = 6\nlr = 0.2\n"
         "[sweep]\nbatch_size = 16\norder = sorted\nepochs = 2\nseed = 4\n"
         "compositions = 3\n");
    exp_pops pops;
    bn_error err;
    assert_int_equal(exp_populations(e, 1, &pops, &err), 0);
    run_config cfg;
    exp_config(e, 0, &cfg);
    run_result res;
    assert_int_equal(run_execute_on(&pops.p, &cfg, NULL, &res, &err), 0);

    /* The same by hand. */
    const pop_t *tr = pops.p.train;
    pop_t ev;
    assert_int_equal(evalpop_shift(pops.p.held_out, 0.5, 1.5, 0.0, &ev, &err), 0);
    size_t *perm = malloc(tr->n * sizeof *perm);
    size_t *fit = malloc(tr->n * sizeof *fit);
    size_t *evp = malloc(ev.n * sizeof *evp);
    order_spec sorted, shuffled;
    assert_int_equal(order_parse("sorted", tr, &sorted, &err), 0);
    assert_int_equal(order_parse("shuffled", tr, &shuffled, &err), 0);
    assert_int_equal(order_make(&sorted, tr, 4, perm, &err), 0);
    assert_int_equal(order_make(&shuffled, tr, 4, fit, &err), 0);
    assert_int_equal(order_make(&shuffled, &ev, 4, evp, &err), 0);
    int *lt = labels(tr), *le = labels(&ev);
    net_data dt = {tr->n, tr->f, 3, tr->x, lt, NULL};
    net_data de = {ev.n, ev.f, 3, ev.x, le, NULL};
    net_t net;
    assert_int_equal(net_init(&net, &cfg, tr->f, 3, &err), 0);
    long double w_norm0 = ld_norm(&net.l[0].t[0]);
    radial_ref rad = {0, 0};
    net_observer watch = {radial_step, NULL, &rad};
    assert_int_equal(net_train(&net, &cfg, &dt, perm, &watch, &err), 0);
    net_score s;
    int *pt = malloc(ev.n * sizeof *pt), *pe = malloc(ev.n * sizeof *pe);
    double *zt = malloc(2 * ev.n * 3 * sizeof *zt), *ze = zt + ev.n * 3;
    /* Each score read by its name through the score table. */
    score_refs ck = {0};
#define REF(name) score_ref(&ck, &res, name)
    assert_int_equal(net_score_train_mode(&net, &de, evp, &s, pt, zt, &err), 0);
    assert_true(REF("acc_train_mode") == s.accuracy);
    assert_true(REF("loss_train_mode") == s.loss);
    assert_int_equal(net_score_eval_mode(&net, &de, &s, pe, ze, &err), 0);
    assert_true(REF("acc_eval_mode") == s.accuracy);
    assert_true(REF("loss_eval_mode") == s.loss);
    /* The largest change the two modes make to a logit. */
    double gap = 0.0;
    for (size_t i = 0; i < ev.n * 3; i++)
        gap = fmax(gap, fabs(zt[i] - ze[i]));
    assert_true(REF("logit_gap") == gap);
    free(zt);
    /* The weights right before batch norm: their norm, and the radial
     * part of their gradient over the steps, in long double. */
    long double w_norm = ld_norm(&net.l[0].t[0]);
    assert_rel(REF("w_norm"), w_norm, 1e-12);
    assert_rel(REF("w_norm_ratio"), w_norm / w_norm0, 1e-12);
    assert_true(rad.radial > 1e-9); /* eps 1e-5: well above rounding */
    assert_true(fabs(REF("radial") - (double)rad.radial) < 1e-12);
    assert_true(fabs(REF("radial_excess") - (double)rad.excess) < 1e-12);
    size_t same = 0, right_t = 0, right_e = 0;
    for (size_t i = 0; i < ev.n; i++) {
        same += pt[i] == pe[i];
        right_t += pt[i] == le[i];
        right_e += pe[i] == le[i];
    }
    assert_true(REF("agreement") == (double)same / (double)ev.n);
    /* The rows' classes are the ones the accuracies count. */
    assert_true(REF("acc_train_mode") == (double)right_t / (double)ev.n);
    assert_true(REF("acc_eval_mode") == (double)right_e / (double)ev.n);
    free(pt);
    free(pe);
    assert_int_equal(net_score_train_mode(&net, &dt, fit, &s, NULL, NULL, &err), 0);
    assert_true(REF("fit_acc_train_mode") == s.accuracy);
    assert_true(REF("fit_loss_train_mode") == s.loss);
    assert_int_equal(net_score_eval_mode(&net, &dt, &s, NULL, NULL, &err), 0);
    assert_true(REF("fit_acc_eval_mode") == s.accuracy);
    assert_true(REF("fit_loss_eval_mode") == s.loss);
    /* The buffers against fc1's moments over the training rows, in long
     * double. */
    long double sm = 0, sv = 0, rm2 = 0, rv2 = 0;
    double *h = malloc(tr->n * sizeof *h);
    size_t hu = net.l[0].out.c;
    const double *w1 = net.l[0].t[0].p, *b1 = net.l[0].t[1].p;
    const bn_layer *bn = &net.l[1].bn;
    for (size_t j = 0; j < hu; j++) {
        for (size_t i = 0; i < tr->n; i++) {
            long double a = b1[j];
            for (size_t c = 0; c < tr->f; c++)
                a += (long double)w1[j * tr->f + c] * tr->x[i * tr->f + c];
            h[i] = (double)a;
        }
        long double m, v;
        ld_moments(tr->n, 1, h, &m, &v);
        sm += (bn->rm[j] - m) * (bn->rm[j] - m);
        sv += (bn->rv[j] - v) * (bn->rv[j] - v);
        rm2 += (bn->rm[j] - m) * (bn->rm[j] - m) / v;
        rv2 += (bn->rv[j] - v) * (bn->rv[j] - v) / (v * v);
    }
    assert_rel(REF("stats_err"), sqrtl((sm + sv) / (2.0L * hu)), 1e-9);
    assert_rel(REF("mean_err_rel"), sqrtl(rm2 / hu), 1e-9);
    assert_rel(REF("var_err_rel"), sqrtl(rv2 / hu), 1e-9);
    assert_rel(REF("stats_err_rel"), sqrtl((rm2 + rv2) / (2.0L * hu)), 1e-9);
    /* One batch-norm layer: the last is the only one. */
    assert_rel(REF("last_stats_err_rel"), sqrtl((rm2 + rv2) / (2.0L * hu)),
               1e-9);
    assert_true(REF("updates") == (double)(2 * (tr->n / 16)));
    /* ema: the initial values keep (1 - p)^T. */
    assert_rel(REF("init_weight"),
               powl(cfg.layer.keep, (long double)(2 * (tr->n / 16))), 1e-12);
    clf_dependence_ref(&net, &de, evp, &cfg, &res, &ck);
    /* No group column here: the accuracy by group is not made. */
    assert_true(res.acc_train_by_group == 0.0);
    group_accuracy_ref(dir, &ck);
    score_refs_all(&ck, &cfg,
                   "ref_classifier_scores in tests/test_classifier.c");
#undef REF
    free(h);
    net_free(&net);
    free(lt);
    free(le);
    free(perm);
    free(fit);
    free(evp);
    pop_free(&ev);
    run_result_free(&res);
    exp_pops_free(&pops);
    exp_free(e);
    free(e);
}

static void test_scores_are_the_networks(void **state)
{
    (void)state;
    ref_classifier_scores(tmpdir);
}

/* Rows of both models in summary text t: each model's rows read "-" in
 * every score and key column of the score and key tables that is not
 * its model's, and a value in every one that is. */
static void assert_only_own_columns(const char *file, const char *t)
{
    tsv_table tb;
    bn_error err;
    if (tsv_parse(file, t, strlen(t), &tb, &err) != 0)
        fail_msg("%s", err.msg);
    size_t seen[RUN_MODEL_COUNT] = {0};
    int ct = tsv_column(&tb, "type");
    assert_true(ct >= 0);
    for (size_t r = 0; r < tb.nrow; r++) {
        int m = -1;
        for (int i = 0; run_model_name(i); i++)
            if (strcmp(tsv_cell(&tb, r, (size_t)ct), run_model_name(i)) == 0)
                m = i;
        if (m < 0)
            fail_msg("%s row %zu: no model '%s'", file, r + 1,
                     tsv_cell(&tb, r, (size_t)ct));
        seen[m]++;
        for (size_t c = 0; c < tb.ncol; c++) {
            const score_def *s = score_find(tb.names[c]);
            int k = exp_key_column(tb.names[c]);
            unsigned models = s ? s->models
                              : k >= 0 ? exp_key((key_id)k)->models
                                       : RUN_MODELS_ALL;
            int own = (models & RUN_MODEL_BIT(m)) != 0;
            const char *cell = tsv_cell(&tb, r, c);
            if (own == (strcmp(cell, "-") == 0))
                fail_msg("%s row %zu (%s): %s reads '%s'", file, r + 1,
                         run_model_name(m), tb.names[c], cell);
        }
    }
    /* clf_ini trains both. */
    assert_true(seen[RUN_MODEL_LAYER] > 0 && seen[RUN_MODEL_CLASSIFIER] > 0);
    tsv_free(&tb);
}

static const char *clf_ini =
    "[experiment]\ntable = order batch_size seed acc_train_mode "
    "acc_eval_mode stats_err_rel\n"
    "[population]\nrows = 120\nclasses = 3\nlabel_noise = 0.1\n"
    "[evaluation]\nshift = 0 1\n"
    "[model]\ntype = classifier layer\nhidden = 5\n"
    "[sweep]\nbatch_size = 8 32\norder = shuffled sorted\nepochs = 3\n"
    "seed = 1 2\n";

/* Every file the same bytes at one thread and at three; the last curve
 * row of each run its summary row's scores; the layer's rows beside the
 * classifier's with "-" in each other's columns. */
static void test_sweep_bytes_and_curve(void **state)
{
    (void)state;
    char dir[300];
    test_fresh_dir(tmpdir, dir, sizeof dir, "jobs");
    char path[400];
    snprintf(path, sizeof path, "%s/c.ini", dir);
    test_write_file(path, clf_ini);
    char *out, *err;
    for (int j = 1; j <= 3; j += 2) {
        int st = test_bnstudy(dir, &out, &err,
                              "sweep c.ini --out r%d --jobs %d", j, j);
        if (st != 0)
            fail_msg("sweep: %s", err);
        free(out);
        free(err);
    }
    /* Every file of the file table that either sweep wrote. */
    size_t compared = 0;
    for (int f = 0; out_file_get(f); f++) {
        char a[500], b[500];
        snprintf(a, sizeof a, "%s/r1/c/%s", dir, out_file_get(f)->file);
        snprintf(b, sizeof b, "%s/r3/c/%s", dir, out_file_get(f)->file);
        size_t la, lb;
        char *ta = test_slurp(a, &la), *tb = test_slurp(b, &lb);
        if (!ta && !tb)
            continue;
        if (!ta || !tb)
            fail_msg("%s written at %s job only", out_file_get(f)->file,
                     ta ? "one" : "three");
        assert_int_equal(la, lb);
        assert_memory_equal(ta, tb, la);
        free(ta);
        free(tb);
        compared++;
    }
    /* summary, curve, table, distribution and the manifest (whose build
     * rows differ in nothing but the jobs, which it does not record). */
    assert_true(compared >= 5);
    snprintf(path, sizeof path, "%s/r1/c/summary.tsv", dir);
    char *summary = test_slurp(path, NULL);
    snprintf(path, sizeof path, "%s/r1/c/curve.tsv", dir);
    char *curve = test_slurp(path, NULL);
    assert_non_null(summary);
    assert_non_null(curve);
    assert_only_own_columns("summary.tsv", summary);
    /* Each classifier row: 3 curve rows, the last with its scores. */
    size_t runs = 0;
    char *save = NULL, *copy = malloc(strlen(summary) + 1);
    char *chdr = malloc(strlen(curve) + 1);
    strcpy(copy, summary);
    strcpy(chdr, curve);
    *strchr(chdr, '\n') = '\0';
    char *hdr = strtok_r(copy, "\n", &save);
    char *cols[64], *ccols[64], *cells[64], *lcells[64];
    size_t nc = test_split(hdr, '\t', cols, 64);
    size_t ncc = test_split(chdr, '\t', ccols, 64);
    size_t epoch = test_column(ccols, ncc, "epoch", "curve.tsv");
    for (char *row = strtok_r(NULL, "\n", &save); row;
         row = strtok_r(NULL, "\n", &save)) {
        if (!strstr(row, "\tclassifier\t"))
            continue;
        runs++;
        char *r = malloc(strlen(row) + 1);
        strcpy(r, row);
        assert_int_equal(test_split(r, '\t', cells, 64), nc);
        /* Exactly one curve row of epoch 3 agrees with it in every
         * column they share: keys and scores. */
        size_t found = 0;
        char *csave = NULL, *ccopy = malloc(strlen(curve) + 1);
        strcpy(ccopy, curve);
        strtok_r(ccopy, "\n", &csave);
        for (char *lc = strtok_r(NULL, "\n", &csave); lc;
             lc = strtok_r(NULL, "\n", &csave)) {
            assert_int_equal(test_split(lc, '\t', lcells, 64), ncc);
            if (strcmp(lcells[epoch], "3") != 0)
                continue;
            size_t same = 0;
            for (size_t c = 0; c < ncc; c++)
                for (size_t k = 0; k < nc; k++)
                    same += strcmp(ccols[c], cols[k]) == 0 &&
                            strcmp(lcells[c], cells[k]) == 0;
            found += same == ncc - 1; /* all but epoch */
        }
        assert_int_equal(found, 1);
        free(ccopy);
        free(r);
    }
    free(chdr);
    assert_int_equal(runs, 16);
    free(copy);
    free(summary);
    free(curve);
}

/* Configurations that differ only in [evaluation] train one network,
 * which the sweep keeps and scores on each one's rows (trained.h): each
 * configuration swept alone, which trains it again, writes the very
 * lines of summary.tsv and curve.tsv the whole sweep wrote for it. */
static const char *kept_ini =
    "[experiment]\ntable = shift scale acc_train_mode acc_eval_mode\n"
    "[population]\nrows = 120\nclasses = 3\nlabel_noise = 0.1\n"
    "[evaluation]\nshift = 0 1\nscale = 1 2\n"
    "[model]\ntype = classifier\nhidden = 5\n"
    "[layer]\nestimator = ema precise\n"
    "[sweep]\nbatch_size = 8\norder = shuffled\nepochs = 3\nseed = 1\n";

/* Lines of the file at path past its header, each found in the text of
 * whole (a line of it, newline and all); their count. */
static size_t lines_found_in(const char *path, const char *whole)
{
    char *t = test_slurp(path, NULL);
    assert_non_null(t);
    size_t n = 0;
    for (char *l = strchr(t, '\n'); l && l[1]; n++) {
        char *e = strchr(l + 1, '\n');
        assert_non_null(e);
        size_t len = (size_t)(e - l) + 1; /* from the newline before it */
        int found = 0;
        for (const char *h = whole; !found && (h = strstr(h, "\n")); h++)
            found = strncmp(h, l, len) == 0;
        if (!found)
            fail_msg("%s: a line not in the whole sweep's: %.*s", path,
                     (int)(len - 1), l + 1);
        l = e;
    }
    free(t);
    return n;
}

static void test_kept_training_is_training_again(void **state)
{
    (void)state;
    char dir[300], path[400];
    test_fresh_dir(tmpdir, dir, sizeof dir, "kept");
    snprintf(path, sizeof path, "%s/k.ini", dir);
    test_write_file(path, kept_ini);
    char *out, *err;
    if (test_bnstudy(dir, &out, &err, "sweep k.ini --out all --jobs 2") != 0)
        fail_msg("sweep: %s", err);
    free(out);
    free(err);
    static const char *files[] = {"summary.tsv", "curve.tsv"};
    size_t want[2] = {4 * 2, 4 * 2 * 3}, got[2] = {0, 0};
    const char *shifts[] = {"0", "1"}, *scales[] = {"1", "2"};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            if (test_bnstudy(dir, &out, &err,
                             "sweep k.ini --out one%d%d --set "
                             "evaluation.shift=%s --set evaluation.scale=%s",
                             a, b, shifts[a], scales[b]) != 0)
                fail_msg("sweep: %s", err);
            free(out);
            free(err);
            for (int f = 0; f < 2; f++) {
                char whole[500], one[500];
                snprintf(whole, sizeof whole, "%s/all/k/%s", dir, files[f]);
                snprintf(one, sizeof one, "%s/one%d%d/k/%s", dir, a, b,
                         files[f]);
                char *w = test_slurp(whole, NULL);
                assert_non_null(w);
                got[f] += lines_found_in(one, w);
                free(w);
            }
        }
    /* Two estimators at each of four evaluations; three epochs each. */
    assert_int_equal(got[0], want[0]);
    assert_int_equal(got[1], want[1]);
}

/* What names the rows: the population's identifier for the layer's, and
 * for the classifier's the population with its held-out rows. */
static void test_population_ids(void **state)
{
    (void)state;
    char dir[300];
    test_fresh_dir(tmpdir, dir, sizeof dir, "ids");
    exp_t *e = malloc(sizeof *e);
    assert_non_null(e);
    load(e, dir, "a.ini", "[model]\ntype = layer classifier\n"
                          "[population]\nclasses = 2\n");
    pop_spec spec;
    assert_int_equal(pop_default_spec(&spec), 0);
    char id[17], buf[1024];
    pop_id(&spec, id);
    assert_string_not_equal(e->pop_id, id); /* the classes are named */
    spec.classes = 2;
    spec.label_noise = 0.25;
    pop_id(&spec, id);
    assert_string_equal(e->pop_id, id);
    pop_describe(&spec, buf, sizeof buf);
    assert_non_null(strstr(buf, "\nclasses 2\nlabel_noise 0.25\n"));
    pop_held_desc h = {POP_HELD_DRAW, 0, 0, 0, NULL};
    pop_id_held(&spec, NULL, &h, id);
    assert_string_equal(e->held_id, id);
    /* A second draw of the default 512 rows: as many to evaluate on. */
    assert_int_equal(e->train_rows, 512);
    assert_int_equal(e->held_rows, 512);
    pop_describe_held(&spec, NULL, &h, buf, sizeof buf);
    size_t len = strlen(buf);
    assert_string_equal(buf + len - 14, "held-out draw\n");
    run_config c0, c1;
    exp_config(e, 0, &c0);
    exp_config(e, 1, &c1);
    assert_int_equal(c0.model, RUN_MODEL_LAYER);
    assert_string_equal(c0.population, e->pop_id);
    assert_string_equal(c1.population, e->held_id);
    exp_free(e);
    /* A file's split: its fraction and seed are in the identifier. */
    char csv[400];
    snprintf(csv, sizeof csv, "%s/p.csv", dir);
    test_write_file(csv, "a,b,y\n1,2,0\n2,3,1\n3,5,0\n4,4,1\n5,1,0\n"
                         "6,0,1\n7,2,0\n8,1,1\n");
    load(e, dir, "b.ini", "[model]\ntype = classifier\n"
                          "[population]\nfile = p.csv\nlabel = y\n"
                          "holdout = 0.5\nholdout_seed = 9\n"
                          "[sweep]\nbatch_size = 2\n");
    pop_file_desc d = {e->popfile.fnv, "csv", "y", NULL};
    pop_held_desc hs = {POP_HELD_SPLIT, 0.5, 9, 0, NULL};
    pop_describe_held(NULL, &d, &hs, buf, sizeof buf);
    assert_non_null(strstr(buf, "\nlabel y\nheld-out split 0.5 9\n"));
    pop_id_held(NULL, &d, &hs, id);
    assert_string_equal(e->held_id, id);
    /* Half of each class of four held out: four rows each way, which the
     * manifest states (the figures' labels give the rows trained on). */
    assert_int_equal(e->train_rows, 4);
    assert_int_equal(e->held_rows, 4);
    hs.seed = 10;
    pop_id_held(NULL, &d, &hs, id);
    assert_string_not_equal(e->held_id, id);
    exp_free(e);
    pop_spec_free(&spec);
    free(e);
}

/* ---- refusals ---- */

typedef struct {
    const char *text;
    const char *says;
} refusal;

static void test_settings_that_do_not_apply(void **state)
{
    (void)state;
    char dir[300];
    test_fresh_dir(tmpdir, dir, sizeof dir, "refuse");
    char csv[400];
    snprintf(csv, sizeof csv, "%s/p.csv", dir);
    test_write_file(csv, "a,b,y\n1,2,0\n2,3,1\n3,5,0\n4,4,1\n5,1,0\n"
                         "6,0,1\n7,2,0\n8,1,1\n");
    snprintf(csv, sizeof csv, "%s/e.csv", dir);
    test_write_file(csv, "a,b,y\n1,2,0\n2,3,2\n");
    static const refusal cases[] = {
        {"[model]\nhidden = 8\n",
         ":2: hidden is a setting of the classifier, and this experiment "
         "trains only the layer"},
        {"[population]\nclasses = 2\n[model]\ntype = classifier\n"
         "[layer]\ngamma = 2\n",
         ":6: gamma is a setting of the layer, and this experiment trains "
         "only the classifier (the classifier learns gamma and beta"},
        {"[population]\nclasses = 2\n[model]\ntype = classifier\n"
         "[sweep]\ndrift = step:2\n",
         ":6: drift is a setting of the layer, and this experiment trains "
         "only the classifier"},
        {"[evaluation]\nfile = e.csv\n",
         ":2: e.csv: 3 features, the training rows have 8"},
        {"[population]\nclasses = 2\nholdout = 0.5\n[model]\n"
         "type = classifier\n",
         ":3: holdout splits a population file"},
        {"[population]\nlabel_noise = 0.1\n",
         ":2: label_noise applies to classes"},
        {"[population]\nfile = p.csv\nlabel = y\nclasses = 2\n",
         ":4: classes does not apply to a population read from a file"},
        {"[experiment]\noutputs = summary curve\n",
         ":2: outputs: curve is a file of the classifier"},
        {"[experiment]\ntable = order acc_eval_mode\n",
         ":2: table: acc_eval_mode is a column of the classifier"},
        {"[population]\nclasses = 2\n[model]\ntype = classifier\n"
         "norm = none\n[layer]\nmomentum = 0.5\n",
         ":7: momentum is used by no configuration: the classifier without "
         "batch norm"},
        {"[population]\nclasses = 2\n[model]\ntype = classifier\n"
         "[sweep]\nprecise_batches = 1\n",
         ":6: precise_batches is used by no configuration: precise_batches "
         "applies to the estimator precise"},
        {"[model]\ntype = classifier\n",
         ":2: the classifier needs class labels"},
        {"[population]\nclasses = 2\n[model]\ntype = classifier\n"
         "sgd_momentum = 1\n",
         ":5: sgd_momentum must be in [0, 1)"},
        {"[population]\nfile = p.csv\nlabel = y\nholdout = 0.1\n"
         "[model]\ntype = classifier\n[sweep]\nbatch_size = 2\n",
         ":4: holdout 0.1 of 8 rows holds out 0"},
        {"[population]\nfile = p.csv\nlabel = y\n[evaluation]\n"
         "file = e.csv\n[model]\ntype = classifier\n[sweep]\n"
         "batch_size = 2\n",
         ":5: e.csv: class '2' of column 'y' is not a class of the "
         "training rows"},
        {"[population]\nfile = p.csv\nlabel = y\n[model]\n"
         "type = classifier\n[sweep]\nbatch_size = 2\norder = grouped:7\n",
         ":8: order 'grouped:7': K must be an integer from 1 to the 6 rows "
         "trained on"},
        {"[population]\nfile = p.csv\nlabel = y\n[model]\n"
         "type = classifier\n[sweep]\nbatch_size = 8\n",
         ":7: batch size must be from 2 to the population's 6 rows"},
    };
    size_t failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[400];
        snprintf(path, sizeof path, "%s/r%zu.ini", dir, i);
        test_write_file(path, cases[i].text);
        exp_t *e = malloc(sizeof *e);
        bn_error err;
        int rc = exp_load(e, path, NULL, &err);
        if (rc == 0 || !strstr(err.msg, cases[i].says)) {
            print_error("case %zu: %s\n  want '%s'\n", i,
                        rc ? err.msg : "accepted", cases[i].says);
            failures++;
        }
        exp_free(e);
        free(e);
    }
    if (failures)
        fail_msg("%zu refusals misbehaved", failures);
}

/* `run`'s files of the other model are refused; the weights file has
 * the three stages; `population --part` gives the split. */
static void test_run_and_population_commands(void **state)
{
    (void)state;
    char dir[300];
    test_fresh_dir(tmpdir, dir, sizeof dir, "cli");
    char csv[400];
    snprintf(csv, sizeof csv, "%s/p.csv", dir);
    test_write_file(csv, "a,b,y\n1,2,0\n2,3,1\n3,5,0\n4,4,1\n5,1,0\n"
                         "6,0,1\n7,2,0\n8,1,1\n");
    char *out, *err;
    int st = test_bnstudy(dir, &out, &err, "run --write-weights w.tsv");
    assert_int_equal(st, 2);
    assert_non_null(strstr(err, "--write-weights: a file of the classifier, "
                                "and this run trains the layer"));
    free(out);
    free(err);
    st = test_bnstudy(dir, &out, &err,
                      "run --population p.csv --label y --type classifier "
                      "--batch-size 2 --write-features f.tsv");
    assert_int_equal(st, 2);
    assert_non_null(strstr(err, "--write-features: a file of the layer"));
    free(out);
    free(err);
    st = test_bnstudy(dir, &out, &err,
                      "run --population p.csv --label y --type classifier "
                      "--batch-size 2 --write-weights w.tsv "
                      "--write-curve ./w.tsv");
    assert_int_equal(st, 2); /* ./w.tsv is w.tsv, though it is new... */
    free(out);
    free(err);
    st = test_bnstudy(dir, &out, &err,
                      "run --population p.csv --label y --type classifier "
                      "--batch-size 2 --write-weights w.tsv "
                      "--write-curve w.tsv");
    assert_int_equal(st, 2); /* ...and the same name is */
    assert_non_null(strstr(err, "--write-weights: 'w.tsv' is the file "
                                "--write-curve writes too"));
    free(out);
    free(err);
    st = test_bnstudy(dir, &out, &err,
                      "run --population p.csv --label y --type classifier "
                      "--batch-size 2 --hidden 3 --write-weights w.tsv "
                      "--write-curve -");
    if (st != 0)
        fail_msg("%s", err);
    assert_non_null(strstr(out, "\n\nexperiment\torder"));
    free(out);
    free(err);
    snprintf(csv, sizeof csv, "%s/w.tsv", dir);
    char *w = test_slurp(csv, NULL);
    assert_non_null(w);
    assert_true(strncmp(w, CLF_WEIGHTS_HEADER, strlen(CLF_WEIGHTS_HEADER)) ==
                0);
    assert_non_null(strstr(w, "\ninitial\t0.weight\t2\t1\t"));
    assert_non_null(strstr(w, "\ngrad\t1.bias\t2\t0\t"));
    assert_non_null(strstr(w, "\nfinal\t1.num_batches_tracked\t0\t0\t3\n"));
    free(w);
    st = test_bnstudy(dir, &out, &err,
                      "population --population p.csv --label y "
                      "--part held-out");
    assert_int_equal(st, 0);
    char *lines[16];
    assert_int_equal(test_split(out, '\n', lines, 16), 4); /* 2 and "" */
    free(out);
    free(err);
}

int test_classifier_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_classes),
        cmocka_unit_test(test_held_out_split),
        cmocka_unit_test(test_shift_and_match),
        cmocka_unit_test(test_scores_are_the_networks),
        cmocka_unit_test(test_sweep_bytes_and_curve),
        cmocka_unit_test(test_kept_training_is_training_again),
        cmocka_unit_test(test_population_ids),
        cmocka_unit_test(test_settings_that_do_not_apply),
        cmocka_unit_test(test_run_and_population_commands),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("classifier", tests, group_setup,
                                       group_teardown);
}
