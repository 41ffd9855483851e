/*
 * The C side of `make bench` (bench/bench.py drives it): bnstudy's own
 * run of one configuration, the bare kernel of kernel.h and the
 * classifier, timed on request, so that the Python side can interleave
 * them with numpy and PyTorch; and one configuration at a size of the
 * scaling table. Not part of the program.
 *
 *   driver serve       reads commands on standard input, one answer line
 *                      each:
 *     layer B REPS       seconds per configuration of bnstudy's layer (the
 *                        default study's: shuffled, seed 1, one epoch)
 *     kernel B REPS      the same of the bare kernel, the scores alone
 *     kernelall B REPS   the same of the complete kernel (the scores, the
 *                        self-checks, the gap per feature and the final
 *                        buffers' errors)
 *     same B             "same" when both kernels give bnstudy's bits at
 *                        batch size B, else "differs" and what
 *     clf B E REPS       seconds per run of the classifier of
 *                        experiments/clf-batch-size.ini for E epochs
 *     clfshape           its training rows, features, hidden units and
 *                        classes: "N F H K"
 *   driver scale N F B REPS
 *                      one configuration on N rows of F features at batch
 *                      size B, once and then REPS times: "N F B
 *                      ns_per_value peak_rss_kib population_kib
 *                      first_ns_per_value" (the median of the REPS, and
 *                      the first run, timed apart and left out of it)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "study/exp.h"
#include "kernel.h"
#include "pop/pop.h"
#include "model/run.h"

/* This thread's CPU time: what a neighbour's work on a shared machine
 * leaves alone, where the clock on the wall counts the time it took the
 * core away too. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *what, const bn_error *err)
{
    fprintf(stderr, "bench driver: %s: %s\n", what, err ? err->msg : "");
    exit(2);
}

/* The default features, cycled to f of them, on n rows. */
static void make_pop(size_t n, size_t f, pop_t *pop)
{
    pop_spec def, spec;
    bn_error err;
    if (pop_default_spec(&def) != 0)
        die("out of memory", NULL);
    pop_spec_init(&spec);
    spec.n_rows = n;
    spec.seed = def.seed;
    for (size_t j = 0; j < f; j++) {
        const pop_feature *d = &def.features[j % def.n_features];
        char name[32];
        snprintf(name, sizeof name, "f%zu", j);
        if (pop_spec_add(&spec, name, d->mean, d->sd, d->rho) != 0)
            die("out of memory", NULL);
    }
    if (pop_generate(&spec, pop, &err) != 0)
        die("population", &err);
    pop_spec_free(&def);
    pop_spec_free(&spec);
}

static void layer_config(size_t b, run_config *cfg)
{
    run_default_config(cfg);
    cfg->batch_size = b;
}

static double time_layer(const pop_t *pop, size_t b, long reps)
{
    run_config cfg;
    layer_config(b, &cfg);
    bn_error err;
    double t0 = now();
    for (long r = 0; r < reps; r++) {
        run_result res;
        if (run_execute(pop, &cfg, NULL, &res, &err) != 0)
            die("run", &err);
        run_result_free(&res);
    }
    return (now() - t0) / (double)reps;
}

static kernel_layer kernel_settings(const run_config *cfg)
{
    kernel_layer l = {cfg->layer.gamma, cfg->layer.beta, cfg->layer.eps,
                      cfg->layer.keep, cfg->layer.p};
    return l;
}

/* The kernel's settings and buffers for one batch size. */
typedef struct {
    run_config cfg;
    kernel_layer l;
    void *scratch;
    double *buf;
    kernel_out out;
    int all; /* kernel_run_all */
} kernel_call;

static void kernel_prepare(const pop_t *pop, size_t b, int all,
                           kernel_call *k)
{
    k->all = all;
    layer_config(b, &k->cfg);
    k->l = kernel_settings(&k->cfg);
    k->scratch = malloc(kernel_scratch_bytes(pop->n, pop->f, b));
    k->buf = malloc(3 * pop->f * sizeof *k->buf);
    if (!k->scratch || !k->buf)
        die("out of memory", NULL);
    kernel_out out = {.rm = k->buf, .rv = k->buf + pop->f,
                      .gap = k->buf + 2 * pop->f};
    k->out = out;
}

static void kernel_call_run(const pop_t *pop, kernel_call *k)
{
    (k->all ? kernel_run_all : kernel_run)(
        pop->x, pop->n, pop->f, pop->mean, pop->var, k->cfg.batch_size,
        k->cfg.seed, &k->l, k->scratch, &k->out);
}

static void kernel_release(kernel_call *k)
{
    free(k->scratch);
    free(k->buf);
}

static double time_kernel(const pop_t *pop, size_t b, int all, long reps)
{
    kernel_call k;
    kernel_prepare(pop, b, all, &k);
    double t0 = now();
    for (long r = 0; r < reps; r++)
        kernel_call_run(pop, &k);
    double t = (now() - t0) / (double)reps;
    kernel_release(&k);
    return t;
}

/* Whether both kernels' numbers are bnstudy's, bit for bit: "same", or
 * the first that differs (and in which kernel). */
static void same_bits(const pop_t *pop, size_t b)
{
    const char *what = NULL;
    int all = 0;
    for (; !what && all < 2; all++) {
        kernel_call k;
        kernel_prepare(pop, b, all, &k);
        bn_error err;
        run_result res;
        if (run_execute(pop, &k.cfg, NULL, &res, &err) != 0)
            die("run", &err);
        kernel_call_run(pop, &k);
        what = kernel_differs(&k.out, pop->f, all, &res);
        run_result_free(&res);
        kernel_release(&k);
    }
    if (what)
        printf("differs: %s (the %s kernel)\n", what,
               all == 1 ? "scores-only" : "complete");
    else
        puts("same");
}

/* The classifier of experiments/clf-batch-size.ini at one batch size and
 * epoch count. */
static const char clf_ini[] =
    "[population]\nclasses = 4\n"
    "[model]\ntype = classifier\nlr = 0.1\nsgd_momentum = 0.9\n"
    "[layer]\nmomentum = 0.1\nmomentum_weights = new\nvariance = unbiased\n"
    "[sweep]\norder = shuffled\nseed = 1\nbatch_size = %zu\nepochs = %lu\n";

/* The classifier's experiment at one batch size and epoch count, loaded
 * with its populations; exits on failure. */
static exp_t *clf_load(size_t b, unsigned long epochs, exp_pops *pops,
                       run_config *cfg)
{
    char text[sizeof clf_ini + 64];
    snprintf(text, sizeof text, clf_ini, b, epochs);
    exp_t *e = malloc(sizeof *e);
    bn_error err;
    memset(pops, 0, sizeof *pops);
    if (!e)
        die("out of memory", NULL);
    memset(e, 0, sizeof *e);
    if (exp_load_text(e, "clf-bench.ini", text, strlen(text), NULL, &err) ||
        exp_populations(e, 1, pops, &err))
        die("the classifier's experiment", &err);
    exp_config(e, 0, cfg);
    return e;
}

static void net_free(exp_t *e, exp_pops *pops)
{
    exp_pops_free(pops);
    exp_free(e);
    free(e);
}

static double time_clf(size_t b, unsigned long epochs, long reps)
{
    exp_pops pops;
    run_config cfg;
    bn_error err;
    exp_t *e = clf_load(b, epochs, &pops, &cfg);
    double t0 = now();
    for (long r = 0; r < reps; r++) {
        run_result res;
        if (run_execute_on(&pops.p, &cfg, NULL, &res, &err) != 0)
            die("classifier run", &err);
        run_result_free(&res);
    }
    double t = (now() - t0) / (double)reps;
    net_free(e, &pops);
    return t;
}

/* What the PyTorch side needs to build the same network: training rows,
 * features, hidden units, classes. */
static void clf_shape(void)
{
    exp_pops pops;
    run_config cfg;
    exp_t *e = clf_load(8, 1, &pops, &cfg);
    printf("%zu %zu %zu %zu\n", pops.p.train->n, pops.p.train->f,
           cfg.clf.hidden, pops.p.train->label.n_levels);
    net_free(e, &pops);
}

static int serve(void)
{
    pop_t pop;
    make_pop(512, 8, &pop);
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        char what[16];
        size_t b;
        long reps;
        unsigned long epochs;
        if (sscanf(line, "layer %zu %ld", &b, &reps) == 2)
            printf("%.9g\n", time_layer(&pop, b, reps));
        else if (sscanf(line, "kernel %zu %ld", &b, &reps) == 2)
            printf("%.9g\n", time_kernel(&pop, b, 0, reps));
        else if (sscanf(line, "kernelall %zu %ld", &b, &reps) == 2)
            printf("%.9g\n", time_kernel(&pop, b, 1, reps));
        else if (sscanf(line, "same %zu", &b) == 1)
            same_bits(&pop, b);
        else if (sscanf(line, "clf %zu %lu %ld", &b, &epochs, &reps) == 3)
            printf("%.9g\n", time_clf(b, epochs, reps));
        else if (strncmp(line, "clfshape", 8) == 0)
            clf_shape();
        else if (sscanf(line, "%15s", what) == 1)
            printf("unknown command %s\n", what);
        fflush(stdout);
    }
    pop_free(&pop);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Peak resident memory in KiB: Linux's VmHWM, which starts afresh at
 * exec, where getrusage's maxrss keeps the peak of the process that
 * started this one (a Python with PyTorch loaded, say). */
static long peak_kib(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (fp && fgets(line, sizeof line, fp))
        if (sscanf(line, "VmHWM: %ld", &kib) == 1)
            break;
    if (fp)
        fclose(fp);
    if (kib < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        kib = ru.ru_maxrss;
    }
    return kib;
}

static int scale(size_t n, size_t f, size_t b, int reps)
{
    pop_t pop;
    make_pop(n, f, &pop);
    double t[64];
    if (reps < 1 || reps > 64)
        reps = 3;
    /* Runs of small populations repeated to about 4M values, so that a
     * sample is long enough for the clock. */
    double values = (double)n * (double)f;
    long inner = values < 4e6 ? (long)(4e6 / values) : 1;
    /* The first sample pays once for what later ones reuse: the pages of
     * the run's arrays, which glibc maps afresh for a big population's
     * first runs and keeps from then on. A small population's sample of
     * thousands of runs spreads that over all of them; a big one's is a
     * single run. So every size's median is of samples after the first,
     * and the first is printed apart. */
    double first = time_layer(&pop, b, inner);
    for (int r = 0; r < reps; r++)
        t[r] = time_layer(&pop, b, inner);
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    printf("%zu\t%zu\t%zu\t%.4g\t%ld\t%.0f\t%.4g\n", n, f, b,
           1e9 * t[reps / 2] / values, peak_kib(),
           values * sizeof(double) / 1024.0, 1e9 * first / values);
    pop_free(&pop);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "serve") == 0)
        return serve();
    if (argc == 6 && strcmp(argv[1], "scale") == 0)
        return scale(strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10),
                     strtoul(argv[4], NULL, 10), atoi(argv[5]));
    fputs("usage: driver serve | driver scale N F B REPS\n", stderr);
    return 2;
}
