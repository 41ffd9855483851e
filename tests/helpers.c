/* The shared test helpers; see helpers.h. */
#include "helpers.h"

/* Here free() is the C library's, helpers_free the one the tests call. */
#undef free

#include "model/order.h"
#include "model/score.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *test_env(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

int test_tmpdir_make(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/bnstudy-test-%s.XXXXXX",
             test_env("TMPDIR", "/tmp"), name);
    return mkdtemp(buf) ? 0 : -1;
}

int test_tmpdir_remove(const char *dir)
{
    return test_shell("rm -rf '%s'", dir) == 0 ? 0 : -1;
}

int test_tmpdir_setup(void **state)
{
    static char dir[4096];
    *state = dir;
    return test_tmpdir_make(dir, sizeof dir, "group");
}

int test_tmpdir_teardown(void **state)
{
    return test_tmpdir_remove(*state);
}

void test_write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
}

int test_shell(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int test_bnstudy(const char *dir, char **out, char **err, const char *fmt,
                 ...)
{
    char exe[4096], cwd[2048], args[4096], cmd[12800], o[4200], e[4200];
    const char *p = test_env("BNSTUDY", "./bnstudy");
    /* Absolute, since it runs in another directory. */
    if (p[0] == '/')
        snprintf(exe, sizeof exe, "%s", p);
    else if (getcwd(cwd, sizeof cwd))
        snprintf(exe, sizeof exe, "%s/%s", cwd, p);
    else
        fail_msg("getcwd failed");
    if (access(exe, X_OK) != 0)
        fail_msg("cannot run bnstudy at %s (set BNSTUDY)", exe);
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    assert_true(len >= 0 && (size_t)len < sizeof args);
    snprintf(o, sizeof o, "%s/bnstudy-out.XXXXXX", test_env("TMPDIR", "/tmp"));
    snprintf(e, sizeof e, "%s/bnstudy-err.XXXXXX", test_env("TMPDIR", "/tmp"));
    int fo = mkstemp(o), fe = mkstemp(e);
    assert_true(fo >= 0 && fe >= 0);
    close(fo);
    close(fe);
    len = snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s >'%s' 2>'%s'", dir,
                   exe, args, o, e);
    assert_true(len >= 0 && (size_t)len < sizeof cmd);
    int st = system(cmd);
    int rc = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    *out = test_slurp(o, NULL);
    *err = test_slurp(e, NULL);
    unlink(o);
    unlink(e);
    assert_true(*out && *err);
    return rc;
}

size_t test_split(char *s, char sep, char **fields, size_t max)
{
    size_t n = 0;
    for (;;) {
        char *e = strchr(s, sep);
        if (n < max)
            fields[n] = s;
        n++;
        if (!e)
            return n;
        *e = '\0';
        s = e + 1;
    }
}

size_t test_column(char *const *header, size_t n, const char *name,
                   const char *file)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(header[k], name) == 0)
            return k;
    fail_msg("%s has no column %s", file, name);
    return 0;
}

int test_next_permutation(size_t *a, size_t n)
{
    size_t i = n - 1;
    while (i > 0 && a[i - 1] >= a[i])
        i--;
    if (i == 0)
        return 0;
    size_t j = n - 1;
    while (a[j] <= a[i - 1])
        j--;
    size_t t = a[i - 1];
    a[i - 1] = a[j];
    a[j] = t;
    for (size_t l = i, r = n - 1; l < r; l++, r--) {
        t = a[l];
        a[l] = a[r];
        a[r] = t;
    }
    return 1;
}

void ld_moments(size_t n, size_t stride, const double *v, long double *mean,
                long double *var)
{
    long double s = 0.0L;
    for (size_t i = 0; i < n; i++)
        s += v[i * stride];
    long double m = s / (long double)n, ss = 0.0L;
    for (size_t i = 0; i < n; i++) {
        long double d = v[i * stride] - m;
        ss += d * d;
    }
    *mean = m;
    *var = ss / (long double)n;
}

static void *xmemdup(const void *p, size_t size)
{
    void *q = malloc(size);
    assert_non_null(q);
    memcpy(q, p, size);
    return q;
}

static void on_batch(void *ctx, const run_batch *rb)
{
    recorder *rec = ctx;
    if (rec->n == rec->cap) {
        rec->cap = rec->cap ? 2 * rec->cap : 64;
        rec->batches = realloc(rec->batches, rec->cap * sizeof *rec->batches);
        assert_non_null(rec->batches);
    }
    rec->f = rb->f;
    rec_batch *b = &rec->batches[rec->n++];
    b->epoch = rb->epoch;
    b->index = rb->index;
    b->b = rb->b;
    b->rows = xmemdup(rb->rows, rb->b * sizeof *rb->rows);
    b->mean = xmemdup(rb->mean, rb->f * sizeof *rb->mean);
    b->var = xmemdup(rb->var, rb->f * sizeof *rb->var);
    b->x = xmemdup(rb->x, rb->b * rb->f * sizeof *rb->x);
    b->y = xmemdup(rb->y, rb->b * rb->f * sizeof *rb->y);
}

/* The rows arrive a batch at a time, in order. */
static void on_outputs(void *ctx, size_t first, size_t n, size_t f,
                       const size_t *rows, const double *y_train,
                       const double *y_eval)
{
    recorder *rec = ctx;
    assert_int_equal(first, rec->out_n);
    size_t all = first + n;
    rec->out_rows = realloc(rec->out_rows, all * sizeof *rec->out_rows);
    rec->out_train = realloc(rec->out_train, all * f * sizeof *y_train);
    rec->out_eval = realloc(rec->out_eval, all * f * sizeof *y_eval);
    assert_non_null(rec->out_rows);
    assert_non_null(rec->out_train);
    assert_non_null(rec->out_eval);
    memcpy(rec->out_rows + first, rows, n * sizeof *rows);
    memcpy(rec->out_train + first * f, y_train, n * f * sizeof *y_train);
    memcpy(rec->out_eval + first * f, y_eval, n * f * sizeof *y_eval);
    rec->out_n = all;
}

run_observer recorder_observer(recorder *rec)
{
    memset(rec, 0, sizeof *rec);
    run_observer obs = {on_batch, on_outputs, NULL, rec, NULL, NULL};
    return obs;
}

void recorder_free(recorder *rec)
{
    for (size_t k = 0; k < rec->n; k++) {
        free(rec->batches[k].rows);
        free(rec->batches[k].mean);
        free(rec->batches[k].var);
        free(rec->batches[k].x);
        free(rec->batches[k].y);
    }
    free(rec->batches);
    free(rec->out_rows);
    free(rec->out_train);
    free(rec->out_eval);
    memset(rec, 0, sizeof *rec);
}

/* Feature j's mean over the population's rows. */
static long double ld_mean_of(const pop_t *pop, size_t j)
{
    long double mean, var;
    ld_moments(pop->n, pop->f, pop->x + j, &mean, &var);
    return mean;
}

long double ld_running_mean(const pop_t *pop, const run_config *cfg,
                            const size_t *perm, size_t j,
                            const drift_spec *drift, double offset)
{
    size_t n = pop->n, f = pop->f, b = cfg->batch_size;
    size_t nb = n / b + (cfg->partial == RUN_PARTIAL_KEEP && n % b);
    long double p = cfg->layer.p, keep = cfg->layer.keep;
    long double rm = 0.0L, acc = 0.0L, keep_t = 1.0L, pooled_sum = 0.0L;
    size_t t = 0, pooled = 0;
    for (size_t e = 0; e < cfg->epochs; e++)
        for (size_t k = 0; k < nb; k++) {
            size_t lo = k * b, hi = lo + b < n ? lo + b : n;
            long double s = 0.0L;
            for (size_t i = lo; i < hi; i++)
                s += pop->x[perm[i] * f + j];
            long double m = s / (long double)(hi - lo);
            t++;
            if (drift)
                m += (long double)drift_fraction(drift, t) * offset;
            keep_t *= keep;
            switch (cfg->layer.estimator) {
            case BN_EST_EMA:
                rm = keep * rm + p * m;
                break;
            case BN_EST_EMA_DEBIASED:
                acc = keep * acc + p * m;
                rm = acc / (1.0L - keep_t);
                break;
            case BN_EST_CUMULATIVE:
                rm += (m - rm) / (long double)t;
                break;
            case BN_EST_PRECISE:
                if (e == 0 && (cfg->precise_batches == 0 ||
                               k < cfg->precise_batches)) {
                    pooled_sum += s;
                    pooled += hi - lo;
                }
                rm = pooled_sum / (long double)pooled;
                break;
            case BN_EST_INITIAL:
                break; /* never updated: the initial 0 stays */
            case BN_EST_ADAPTIVE:
                /* The mean of the rows evaluation sees: the population
                 * as the drift leaves it at the last update. */
                rm = ld_mean_of(pop, j) +
                     (drift ? (long double)drift_fraction(drift, t) * offset
                            : 0.0L);
                break;
            default:
                fail_msg("estimator %s has no long-double reference: add its "
                         "case to ld_running_mean in tests/helpers.c",
                         bn_estimator_name(cfg->layer.estimator));
            }
        }
    return rm;
}

double score_ref(score_refs *refs, const run_result *r, const char *name)
{
    const score_def *s = score_find(name);
    if (!s)
        fail_msg("no score %s in the score table", name);
    if (refs->n < sizeof refs->names / sizeof *refs->names)
        refs->names[refs->n++] = name;
    return score_value(s, r);
}

void score_refs_all(const score_refs *refs, const run_config *cfg,
                    const char *where)
{
    for (size_t i = 0; score_get(i); i++) {
        const score_def *s = score_get(i);
        if (!score_applies(s, cfg))
            continue;
        size_t k = 0;
        while (k < refs->n && strcmp(refs->names[k], s->name) != 0)
            k++;
        if (k == refs->n)
            fail_msg("score %s of the %s has no reference: add one to %s",
                     s->name, run_model_get(cfg->model)->name, where);
    }
}

void small_pop(pop_t *pop, size_t n, uint64_t seed, size_t f,
               const pop_feature *features)
{
    pop_spec spec;
    pop_spec_init(&spec);
    spec.n_rows = n;
    spec.seed = seed;
    for (size_t j = 0; j < f; j++)
        assert_int_equal(pop_spec_add(&spec, features[j].name,
                                      features[j].mean, features[j].sd,
                                      features[j].rho),
                         0);
    bn_error err;
    int rc = pop_generate(&spec, pop, &err);
    pop_spec_free(&spec);
    if (rc != 0)
        fail_msg("%s", err.msg);
}

void run_or_fail(const pop_t *pop, const run_config *cfg,
                 const run_observer *obs, run_result *res)
{
    bn_error err;
    if (run_execute(pop, cfg, obs, res, &err) != 0)
        fail_msg("run_execute: %s", err.msg);
}

size_t checks_of(const bn_layer *layer, size_t b, const double *y,
                 const double *var)
{
    size_t f = layer->f;
    double s1[64], s2[64];
    for (size_t j = 0; j < f; j++) {
        s1[j] = s2[j] = 0.0;
        for (size_t i = 0; i < b; i++) {
            double d = y[i * f + j] - layer->beta[j];
            s1[j] += d;
            s2[j] += d * d;
        }
    }
    return score_checks(layer, b, s1, s2, var);
}

void default_pop(pop_t *pop)
{
    pop_spec spec;
    bn_error err;
    assert_int_equal(pop_default_spec(&spec), 0);
    int rc = pop_generate(&spec, pop, &err);
    pop_spec_free(&spec);
    if (rc != 0)
        fail_msg("pop_generate: %s", err.msg);
}

void ld_buffers(bn_estimator est, long double p, long double keep,
                size_t t_count, size_t f, const long double *stat_m,
                const long double *stat_v, long double *rm, long double *rv,
                long double *scale_m, long double *scale_v)
{
    if (est != BN_EST_EMA && est != BN_EST_EMA_DEBIASED &&
        est != BN_EST_CUMULATIVE)
        fail_msg("estimator %s has no closed-form buffers: add them to "
                 "ld_buffers in tests/helpers.c",
                 bn_estimator_name(est));
    long double kt = powl(keep, (long double)t_count);
    for (size_t j = 0; j < f; j++) {
        long double sm = 0.0L, sv = 0.0L, am = 0.0L, av = 0.0L;
        for (size_t t = 1; t <= t_count; t++) {
            long double w = est == BN_EST_CUMULATIVE
                                ? 1.0L / (long double)t_count
                                : p * powl(keep, (long double)(t_count - t));
            long double m = stat_m[(t - 1) * f + j];
            long double v = stat_v[(t - 1) * f + j];
            sm += w * m;
            sv += w * v;
            am += w * fabsl(m);
            av += w * fabsl(v);
        }
        if (est == BN_EST_EMA_DEBIASED) {
            sm /= 1.0L - kt;
            sv /= 1.0L - kt;
            am /= 1.0L - kt;
            av /= 1.0L - kt;
        } else if (est != BN_EST_CUMULATIVE) {
            /* The initial values 0 and 1 with what weight they keep. */
            sv += kt;
            av += kt;
        }
        rm[j] = sm;
        rv[j] = sv;
        scale_m[j] = am;
        scale_v[j] = av;
    }
}

/* Buffers test_slurp handed out and not yet given back. A failing
 * assertion jumps out of a test before it frees what it read, so they stay
 * reachable here and are freed at exit: a failed test leaks nothing. */
static char **slurped;
static size_t n_slurped, cap_slurped;

static void free_slurped(void)
{
    for (size_t k = 0; k < n_slurped; k++)
        free(slurped[k]);
    free(slurped);
    slurped = NULL;
    n_slurped = cap_slurped = 0;
}

char *test_slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    if (n_slurped == cap_slurped) {
        if (!slurped)
            atexit(free_slurped);
        cap_slurped = cap_slurped ? 2 * cap_slurped : 16;
        slurped = realloc(slurped, cap_slurped * sizeof *slurped);
        assert_non_null(slurped);
    }
    size_t cap = 4096, n = 0, got;
    char *s = malloc(cap + 1);
    assert_non_null(s);
    slurped[n_slurped++] = s;
    while ((got = fread(s + n, 1, cap - n, fp)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            s = realloc(s, cap + 1);
            assert_non_null(s);
            slurped[n_slurped - 1] = s;
        }
    }
    fclose(fp);
    s[n] = '\0';
    if (len)
        *len = n;
    return s;
}

void helpers_free(void *p)
{
    for (size_t k = n_slurped; k-- > 0;)
        if (slurped[k] == p) {
            slurped[k] = slurped[--n_slurped];
            break;
        }
    free(p);
}

void test_slurp_free(char *s)
{
    helpers_free(s);
}

static void gsl_pcg32_set(void *state, unsigned long seed)
{
    pcg32_seed(state, (uint64_t)seed, 0u);
}

static unsigned long gsl_pcg32_get(void *state)
{
    return pcg32_next(state);
}

static double gsl_pcg32_get_double(void *state)
{
    return pcg32_next(state) / 4294967296.0;
}

static const gsl_rng_type pcg32_type = {
    "pcg32", 0xffffffffUL, 0UL, sizeof(pcg32_t),
    gsl_pcg32_set, gsl_pcg32_get, gsl_pcg32_get_double,
};

const gsl_rng_type *gsl_rng_pcg32 = &pcg32_type;

gsl_rng *pcg32_gsl_alloc(uint64_t initstate, uint64_t initseq)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_pcg32);
    if (r)
        pcg32_seed(r->state, initstate, initseq);
    return r;
}

void default_layer(bn_config *cfg)
{
    run_config r;
    run_default_config(&r);
    *cfg = r.layer;
}

void set_order(run_config *cfg, const char *name)
{
    pop_t pop;
    bn_error err;
    default_pop(&pop);
    int rc = order_parse(name, &pop, &cfg->order, &err);
    pop_free(&pop);
    if (rc != 0)
        fail_msg("order %s: %s", name, err.msg);
}

void test_fresh_dir(const char *root, char *dir, size_t cap, const char *name)
{
    snprintf(dir, cap, "%s/%s", root, name);
    assert_int_equal(test_shell("rm -rf '%s' && mkdir -p '%s'", dir, dir), 0);
}

void test_expect_refused(const char *dir, const char *args,
                         const char *needle)
{
    char *out, *err;
    int rc = test_bnstudy(dir, &out, &err, "%s", args);
    size_t lines = 0;
    for (const char *c = err; *c; c++)
        lines += *c == '\n';
    if (rc != 2 || out[0] || lines != 1 || !strstr(err, needle))
        fail_msg("%s: status %d, stdout '%.60s', stderr '%s', want '%s'",
                 args, rc, out, err, needle);
    test_slurp_free(out);
    test_slurp_free(err);
}

size_t *ref_compositions(size_t n, size_t b, size_t m, uint64_t seed,
                         size_t *count)
{
    *count = 0;
    if (b < 2 || b > n)
        return NULL;
    double all = gsl_sf_choose((unsigned)n, (unsigned)b);
    size_t sampled = m * (n / b);
    if (all <= (double)sampled) {
        assert_true(n < 64);
        size_t *rows = malloc((size_t)all * b * sizeof *rows), at = 0;
        assert_non_null(rows);
        for (uint64_t bits = 0; bits < (UINT64_C(1) << n); bits++) {
            if ((size_t)__builtin_popcountll(bits) != b)
                continue;
            for (size_t i = 0; i < n; i++)
                if (bits >> i & 1)
                    rows[at++] = i;
        }
        *count = at / b;
        assert_int_equal(*count, (size_t)all);
        return rows;
    }
    size_t per = n / b, *rows = malloc(sampled * b * sizeof *rows);
    size_t *v = malloc(n * sizeof *v);
    gsl_rng *r = pcg32_gsl_alloc(seed, PCG32_INITSEQ_COMPOSE);
    assert_true(rows && v && r);
    for (size_t i = 0; i < n; i++)
        v[i] = i;
    for (size_t s = 0; s < m; s++) {
        gsl_ran_shuffle(r, v, n, sizeof *v);
        memcpy(&rows[s * per * b], v, per * b * sizeof *rows);
    }
    gsl_rng_free(r);
    free(v);
    *count = sampled;
    return rows;
}

void ref_layer_dependence(const double *x, size_t n, size_t f, size_t b,
                          size_t m, uint64_t seed, const bn_config *l,
                          const double *rm, const double *rv,
                          ref_dependence *out)
{
    size_t count;
    size_t *rows = ref_compositions(n, b, m, seed, &count);
    long double *lo = malloc(4 * n * f * sizeof *lo);
    size_t *seen = calloc(n, sizeof *seen);
    assert_true(lo && seen);
    long double *hi = lo + n * f, *elo = hi + n * f, *ehi = elo + n * f;
    double col[b];
    for (size_t k = 0; k < count; k++) {
        const size_t *r = &rows[k * b];
        for (size_t j = 0; j < f; j++) {
            long double mu, v;
            for (size_t i = 0; i < b; i++)
                col[i] = x[r[i] * f + j];
            ld_moments(b, 1, col, &mu, &v);
            for (size_t i = 0; i < b; i++) {
                long double y = l->gamma * ((col[i] - mu) / sqrtl(v + l->eps)) +
                                l->beta;
                long double e =
                    l->gamma * ((col[i] - rm[j]) / sqrtl(rv[j] + l->eps)) +
                    l->beta;
                size_t at = r[i] * f + j;
                int first = seen[r[i]] == 0;
                lo[at] = first || y < lo[at] ? y : lo[at];
                hi[at] = first || y > hi[at] ? y : hi[at];
                elo[at] = first || e < elo[at] ? e : elo[at];
                ehi[at] = first || e > ehi[at] ? e : ehi[at];
            }
        }
        for (size_t i = 0; i < b; i++)
            seen[r[i]]++;
    }
    long double worst = 0.0L, worst_e = 0.0L, sum = 0.0L;
    size_t twice = 0;
    for (size_t i = 0; i < n; i++) {
        if (seen[i] < 2)
            continue;
        long double row = 0.0L;
        for (size_t j = 0; j < f; j++) {
            row = fmaxl(row, hi[i * f + j] - lo[i * f + j]);
            worst_e = fmaxl(worst_e, ehi[i * f + j] - elo[i * f + j]);
        }
        worst = fmaxl(worst, row);
        sum += row;
        twice++;
    }
    out->worst = worst;
    out->mean = twice ? sum / (long double)twice : 0.0L;
    out->worst_eval = worst_e;
    out->batches = count;
    free(rows);
    free(lo);
    free(seen);
}

double test_rnd(pcg32_t *rng)
{
    return (double)pcg32_next(rng) / 2147483648.0 - 1.0;
}

void test_rows_free(test_rows *r)
{
    free(r->x);
    free(r->label);
}
