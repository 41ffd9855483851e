/*
 * Reading experiment files: the keys of each section, their values and the
 * checks that need the whole file. The INI syntax and line numbers come
 * from inifile.h.
 */
#include "exp.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inifile.h"
#include "order.h"
#include "out.h"

typedef enum {
    K_DESCRIPTION, K_TABLE, K_ROWS, K_POP_SEED, K_FEATURE, K_GAMMA, K_BETA,
    K_EPS, K_MOMENTUM, K_WEIGHTS, K_VARIANCE, K_ESTIMATOR, K_BATCH_SIZE,
    K_ORDER, K_SEED, K_EPOCHS, K_PARTIAL, K_PRECISE, K_COUNT
} key_id;

static const struct {
    const char *section, *name;
} keys[K_COUNT] = {
    [K_DESCRIPTION] = {"experiment", "description"},
    [K_TABLE] = {"experiment", "table"},
    [K_ROWS] = {"population", "rows"},
    [K_POP_SEED] = {"population", "seed"},
    [K_FEATURE] = {"population", "feature"},
    [K_GAMMA] = {"layer", "gamma"},
    [K_BETA] = {"layer", "beta"},
    [K_EPS] = {"layer", "eps"},
    [K_MOMENTUM] = {"layer", "momentum"},
    [K_WEIGHTS] = {"layer", "momentum_weights"},
    [K_VARIANCE] = {"layer", "variance"},
    [K_ESTIMATOR] = {"layer", "estimator"},
    [K_BATCH_SIZE] = {"sweep", "batch_size"},
    [K_ORDER] = {"sweep", "order"},
    [K_SEED] = {"sweep", "seed"},
    [K_EPOCHS] = {"sweep", "epochs"},
    [K_PARTIAL] = {"sweep", "partial"},
    [K_PRECISE] = {"sweep", "precise_batches"},
};

static const char *const sections[] = {"experiment", "population", "layer",
                                       "sweep"};

typedef struct {
    exp_t *e;
    const char *where; /* file name, or "--set" */
    int line;          /* current line, 0 for --set */
    int seen[K_COUNT]; /* line a key was given on, to refuse repeats */
    int override;      /* --set replaces instead of refusing */
    int failed;
    bn_error *err;
} parse_ctx;

/* Record the first error, prefixed by where it is; returns 0 so that a
 * handler can return it to stop libinih. */
static int fail_at(parse_ctx *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int fail_at(parse_ctx *c, const char *fmt, ...)
{
    if (c->failed)
        return 0;
    c->failed = 1;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->line > 0)
        bn_fail(c->err, "%s:%d: %s", c->where, c->line, msg);
    else
        bn_fail(c->err, "%s: %s", c->where, msg);
    return 0;
}

/* Where the current setting comes from, kept for the whole-file checks. */
static void note_origin(const parse_ctx *c, char *dst, size_t cap)
{
    if (c->line > 0)
        snprintf(dst, cap, "%s:%d", c->where, c->line);
    else
        snprintf(dst, cap, "%s", c->where);
}

/* Split a list value into tokens on spaces and commas. */
static size_t tokens(const char *value, char tok[][64], size_t max,
                     int *too_long)
{
    size_t n = 0;
    *too_long = 0;
    const char *s = value;
    while (*s) {
        while (*s && (isspace((unsigned char)*s) || *s == ','))
            s++;
        if (!*s)
            break;
        size_t len = 0;
        while (s[len] && !isspace((unsigned char)s[len]) && s[len] != ',')
            len++;
        if (len >= 64 || n == max) {
            *too_long = 1;
            return n;
        }
        memcpy(tok[n], s, len);
        tok[n][len] = '\0';
        n++;
        s += len;
    }
    return n;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)s[0]))
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno == ERANGE)
        return -1;
    *out = v;
    return 0;
}

static int parse_real(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int set_ints(parse_ctx *c, const char *key, const char *value,
                    exp_ints *dst, uint64_t min, uint64_t max)
{
    char tok[256][64];
    int long_tok;
    size_t n = tokens(value, tok, 256, &long_tok);
    if (long_tok || n == 0)
        return fail_at(c, "%s: expected a list of integers, got '%s'", key,
                       value);
    dst->n = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t a, b;
        char *dots = strstr(tok[i], "..");
        if (dots) {
            *dots = '\0';
            if (parse_u64(tok[i], &a) || parse_u64(dots + 2, &b) || b < a)
                return fail_at(c, "%s: '%s' is not a range A..B", key,
                               value);
        } else if (parse_u64(tok[i], &a) == 0) {
            b = a;
        } else {
            return fail_at(c, "%s: '%s' is not an integer", key, tok[i]);
        }
        if (a < min || b > max)
            return fail_at(c, "%s: values must be from %llu to %llu", key,
                           (unsigned long long)min, (unsigned long long)max);
        for (uint64_t v = a;; v++) {
            if (dst->n == EXP_MAX_VALUES)
                return fail_at(c, "%s: more than %d values", key,
                               EXP_MAX_VALUES);
            dst->v[dst->n++] = v;
            if (v == b)
                break;
        }
    }
    return 1;
}

static int set_names(parse_ctx *c, const char *key, const char *value,
                     exp_names *dst, int (*check)(const char *))
{
    int long_tok;
    exp_names tmp;
    tmp.n = tokens(value, tmp.v, 16, &long_tok);
    if (long_tok || tmp.n == 0)
        return fail_at(c, "%s: expected a list of at most 16 names, got '%s'",
                       key, value);
    for (size_t i = 0; i < tmp.n; i++)
        if (check && check(tmp.v[i]) != 0)
            return fail_at(c, "%s: unknown value '%s'", key, tmp.v[i]);
    *dst = tmp;
    return 1;
}

static int check_weights(const char *s) { bn_weights w; return bn_weights_parse(s, &w); }
static int check_variance(const char *s) { bn_variance v; return bn_variance_parse(s, &v); }
static int check_estimator(const char *s) { bn_estimator x; return bn_estimator_parse(s, &x); }
static int check_partial(const char *s) { run_partial p; return run_partial_parse(s, &p); }
static int check_column(const char *s) { return out_summary_column(s) < 0 ? -1 : 0; }

static int set_scalar(parse_ctx *c, const char *key, const char *value,
                      double *dst)
{
    if (parse_real(value, dst) != 0)
        return fail_at(c, "%s: expected a finite number, got '%s'", key,
                       value);
    return 1;
}

static int add_feature(parse_ctx *c, const char *value)
{
    pop_spec *p = &c->e->pop;
    char tok[5][64];
    int long_tok;
    size_t n = tokens(value, tok, 5, &long_tok);
    pop_feature ft;
    if (long_tok || n != 4 || strlen(tok[0]) >= BN_NAME_MAX ||
        parse_real(tok[1], &ft.mean) || parse_real(tok[2], &ft.sd) ||
        parse_real(tok[3], &ft.rho))
        return fail_at(c, "feature: expected 'NAME MEAN SD RHO', got '%s'",
                       value);
    strcpy(ft.name, tok[0]);
    if (p->n_features == BN_MAX_FEATURES)
        return fail_at(c, "feature: more than %d features", BN_MAX_FEATURES);
    if (pop_feature_index(p, ft.name) >= 0)
        return fail_at(c, "feature: name '%s' given twice", ft.name);
    if (!(ft.sd >= 0) || !(ft.rho >= -1 && ft.rho <= 1))
        return fail_at(c, "feature %s: sd must be >= 0 and rho in [-1, 1]",
                       ft.name);
    p->features[p->n_features++] = ft;
    return 1;
}

static int handler(void *user, const char *section, const char *name,
                   const char *value)
{
    parse_ctx *c = user;
    exp_t *e = c->e;
    if (c->failed)
        return 0;
    int k;
    for (k = 0; k < K_COUNT; k++)
        if (strcmp(keys[k].section, section) == 0 &&
            strcmp(keys[k].name, name) == 0)
            break;
    if (k == K_COUNT) {
        if (section[0] == '\0')
            return fail_at(c, "key '%s' outside any section", name);
        return fail_at(c, "unknown key '%s' in [%s]", name, section);
    }
    if (k == K_FEATURE) {
        if (!c->seen[k])
            e->pop.n_features = 0; /* the file's features replace the default */
    } else if (c->seen[k] && !c->override) {
        return fail_at(c, "key '%s' already given on line %d", name,
                       c->seen[k]);
    }
    c->seen[k] = c->line > 0 ? c->line : -1;
    uint64_t u;
    switch ((key_id)k) {
    case K_DESCRIPTION:
        snprintf(e->description, sizeof e->description, "%s", value);
        return 1;
    case K_TABLE:
        return set_names(c, name, value, &e->table, check_column);
    case K_ROWS:
        if (parse_u64(value, &u) || u < 2 || u > 100000000)
            return fail_at(c, "rows: expected an integer from 2 to 100000000, "
                              "got '%s'", value);
        e->pop.n_rows = (size_t)u;
        note_origin(c, e->from_rows, sizeof e->from_rows);
        return 1;
    case K_POP_SEED:
        if (parse_u64(value, &u))
            return fail_at(c, "seed: expected an integer, got '%s'", value);
        e->pop.seed = u;
        return 1;
    case K_FEATURE:
        note_origin(c, e->from_features, sizeof e->from_features);
        return add_feature(c, value);
    case K_GAMMA:
        return set_scalar(c, name, value, &e->gamma);
    case K_BETA:
        return set_scalar(c, name, value, &e->beta);
    case K_EPS:
        if (!set_scalar(c, name, value, &e->eps))
            return 0;
        if (!(e->eps > 0))
            return fail_at(c, "eps: must be > 0, got '%s'", value);
        return 1;
    case K_MOMENTUM: {
        note_origin(c, e->from_momentum, sizeof e->from_momentum);
        char tok[64][64];
        int long_tok;
        size_t n = tokens(value, tok, 64, &long_tok);
        if (long_tok || n == 0)
            return fail_at(c, "momentum: expected a list of at most 64 "
                              "numbers, got '%s'", value);
        for (size_t i = 0; i < n; i++) {
            double m;
            if (parse_real(tok[i], &m) || !(m > 0 && m <= 1))
                return fail_at(c, "momentum: '%s' is not in (0, 1]", tok[i]);
            e->momentum.v[i] = m;
        }
        e->momentum.n = n;
        return 1;
    }
    case K_WEIGHTS:
        return set_names(c, name, value, &e->momentum_weights, check_weights);
    case K_VARIANCE:
        return set_names(c, name, value, &e->variance, check_variance);
    case K_ESTIMATOR:
        return set_names(c, name, value, &e->estimator, check_estimator);
    case K_BATCH_SIZE:
        note_origin(c, e->from_batch_size, sizeof e->from_batch_size);
        return set_ints(c, name, value, &e->batch_size, 2, 100000000);
    case K_ORDER:
        note_origin(c, e->from_order, sizeof e->from_order);
        return set_names(c, name, value, &e->order, NULL);
    case K_SEED:
        return set_ints(c, name, value, &e->seed, 0, UINT64_MAX);
    case K_EPOCHS:
        return set_ints(c, name, value, &e->epochs, 1, 1000000);
    case K_PARTIAL:
        note_origin(c, e->from_partial, sizeof e->from_partial);
        return set_names(c, name, value, &e->partial, check_partial);
    case K_PRECISE:
        note_origin(c, e->from_precise, sizeof e->from_precise);
        return set_ints(c, name, value, &e->precise_batches, 0, 100000000);
    case K_COUNT:
        break;
    }
    return 0;
}

static int on_key(void *user, const char *section, const char *name,
                  const char *value, int line, bn_error *err)
{
    parse_ctx *c = user;
    (void)err; /* c->err is the same record */
    c->line = line;
    return handler(c, section, name, value);
}

static int on_section(void *user, const char *section, int line,
                      bn_error *err)
{
    parse_ctx *c = user;
    (void)err;
    c->line = line;
    for (size_t i = 0; i < sizeof sections / sizeof *sections; i++)
        if (strcmp(section, sections[i]) == 0)
            return 1;
    return fail_at(c, "unknown section [%s]", section);
}

static void defaults(exp_t *e)
{
    bn_config l;
    run_config r;
    bn_default_config(&l);
    run_default_config(&r);
    pop_default_spec(&e->pop);
    e->gamma = l.gamma;
    e->beta = l.beta;
    e->eps = l.eps;
    e->momentum.n = 1;
    e->momentum.v[0] = l.momentum;
    e->momentum_weights.n = 1;
    strcpy(e->momentum_weights.v[0], bn_weights_name(l.weights));
    e->variance.n = 1;
    strcpy(e->variance.v[0], bn_variance_name(l.variance));
    e->estimator.n = 1;
    strcpy(e->estimator.v[0], bn_estimator_name(l.estimator));
    e->batch_size.n = 1;
    e->batch_size.v[0] = r.batch_size;
    e->order.n = 1;
    strcpy(e->order.v[0], r.order);
    e->seed.n = 1;
    e->seed.v[0] = r.seed;
    e->epochs.n = 1;
    e->epochs.v[0] = r.epochs;
    e->partial.n = 1;
    strcpy(e->partial.v[0], run_partial_name(r.partial));
    e->precise_batches.n = 1;
    e->precise_batches.v[0] = r.precise_batches;
    /* The published table's columns, for files that name none. */
    static const char *const cols[] = {"order", "batch_size", "updates",
                                       "stats_err", "train_eval_rmse",
                                       "batch_mean_err", "init_weight"};
    e->table.n = sizeof cols / sizeof *cols;
    for (size_t i = 0; i < e->table.n; i++)
        strcpy(e->table.v[i], cols[i]);
}

/* Where a setting came from: its own origin, else the next best (for a
 * default that the file's other settings make wrong), else the file. */
static const char *origin(const exp_t *e, const char *own, const char *alt)
{
    return own[0] ? own : alt && alt[0] ? alt : e->source;
}

/* Checks that need the whole file: the population, and the axes against
 * it. Each message names the line (or --set) the setting came from. */
static int validate(exp_t *e, bn_error *err)
{
    bn_error sub;
    if (pop_validate(&e->pop, &sub) != 0)
        return bn_fail(err, "%s: %s",
                       origin(e, e->from_features, e->from_rows), sub.msg);
    const char *at_b = origin(e, e->from_batch_size, e->from_rows);
    for (size_t i = 0; i < e->batch_size.n; i++) {
        uint64_t b = e->batch_size.v[i];
        if (b > e->pop.n_rows)
            return bn_fail(err,
                           "%s: batch_size %llu is larger than the "
                           "population's %zu rows",
                           at_b, (unsigned long long)b, e->pop.n_rows);
        for (size_t k = 0; k < e->partial.n; k++)
            if (strcmp(e->partial.v[k], "keep") == 0 &&
                e->pop.n_rows % b == 1)
                return bn_fail(err,
                               "%s: partial keep with batch_size %llu "
                               "leaves a last batch of one row",
                               origin(e, e->from_partial, at_b),
                               (unsigned long long)b);
        for (size_t q = 0; q < e->partial.n; q++) {
            run_partial part;
            run_partial_parse(e->partial.v[q], &part);
            size_t nb = run_batches_per_epoch(e->pop.n_rows, (size_t)b, part);
            for (size_t k = 0; k < e->precise_batches.n; k++)
                if (e->precise_batches.v[k] > nb)
                    return bn_fail(err,
                                   "%s: precise_batches %llu is more than "
                                   "the %zu batches of %llu rows (partial "
                                   "%s)",
                                   origin(e, e->from_precise, at_b),
                                   (unsigned long long)e->precise_batches.v[k],
                                   nb, (unsigned long long)b,
                                   e->partial.v[q]);
        }
    }
    for (size_t i = 0; i < e->order.n; i++) {
        order_spec o;
        if (order_parse(e->order.v[i], &e->pop, &o, &sub) != 0)
            return bn_fail(err, "%s: %s", origin(e, e->from_order, NULL),
                           sub.msg);
    }
    /* Layer settings that are fine alone but not together. */
    for (size_t m = 0; m < e->momentum.n; m++)
        for (size_t w = 0; w < e->momentum_weights.n; w++)
            for (size_t k = 0; k < e->estimator.n; k++) {
                bn_config l;
                bn_weights wt;
                bn_default_config(&l);
                bn_weights_parse(e->momentum_weights.v[w], &wt);
                bn_set_momentum(&l, e->momentum.v[m], wt, NULL);
                bn_estimator_parse(e->estimator.v[k], &l.estimator);
                l.gamma = e->gamma;
                l.beta = e->beta;
                l.eps = e->eps;
                if (bn_validate(&l, &sub) != 0)
                    return bn_fail(err, "%s: momentum %g %s: %s",
                                   origin(e, e->from_momentum, NULL),
                                   e->momentum.v[m],
                                   e->momentum_weights.v[w], sub.msg);
            }
    /* The product, counted without overflow. */
    const size_t axes[] = {
        e->estimator.n, e->order.n,      e->variance.n, e->momentum_weights.n,
        e->momentum.n,  e->epochs.n,     e->partial.n,  e->precise_batches.n,
        e->seed.n,      e->batch_size.n,
    };
    size_t total = 1;
    for (size_t i = 0; i < sizeof axes / sizeof *axes; i++) {
        if (total > EXP_MAX_CONFIGS / axes[i])
            return bn_fail(err, "%s: more than %d configurations", e->source,
                           EXP_MAX_CONFIGS);
        total *= axes[i];
    }
    return 0;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int exp_load(exp_t *e, const char *path, char *const *sets, size_t n_sets,
             bn_error *err)
{
    memset(e, 0, sizeof *e);
    defaults(e);
    snprintf(e->source, sizeof e->source, "%s", path);
    snprintf(e->stem, sizeof e->stem, "%s", base_name(path));
    char *dot = strrchr(e->stem, '.');
    if (dot && strcmp(dot, ".ini") == 0)
        *dot = '\0';
    if (strlen(base_name(path)) >= sizeof e->stem)
        return bn_fail(err, "%s: file name too long", path);
    if (e->stem[0] == '\0')
        return bn_fail(err, "%s: no file name to name the results by", path);

    parse_ctx c = {0};
    c.e = e;
    c.where = path;
    c.err = err;
    if (inifile_parse(path, on_key, on_section, &c, err) != 0)
        return -1;

    c.override = 1;
    c.line = 0;
    int set_features = 0;
    c.where = "--set";
    for (size_t i = 0; i < n_sets; i++) {
        char buf[1024], *eq, *dotp;
        snprintf(buf, sizeof buf, "%s", sets[i]);
        eq = strchr(buf, '=');
        dotp = strchr(buf, '.');
        if (!eq || !dotp || dotp > eq)
            return bn_fail(err, "--set %s: expected section.key=value",
                           sets[i]);
        *eq = '\0';
        *dotp = '\0';
        char where[300];
        snprintf(where, sizeof where, "--set %s", sets[i]);
        c.where = where;
        /* The first --set feature replaces the file's list; later ones
         * add to it. */
        int feature = !strcmp(buf, "population") && !strcmp(dotp + 1, "feature");
        if (feature && !set_features)
            c.seen[K_FEATURE] = 0;
        if (!handler(&c, buf, dotp + 1, eq + 1))
            return -1;
        set_features |= feature;
    }
    return validate(e, err);
}

size_t exp_count(const exp_t *e)
{
    return e->estimator.n * e->order.n * e->variance.n *
           e->momentum_weights.n * e->momentum.n * e->epochs.n *
           e->partial.n * e->precise_batches.n * e->seed.n * e->batch_size.n;
}

size_t exp_index(const exp_t *e, size_t r, size_t is, size_t ib)
{
    return ib + e->batch_size.n * (is + e->seed.n * r);
}

void exp_config(const exp_t *e, size_t k, run_config *cfg)
{
    /* Batch size varies fastest, so each block of rows reads as a curve
     * over batch size; then the seed (exp_index relies on both); the
     * estimator varies slowest. */
    size_t ib = k % e->batch_size.n; k /= e->batch_size.n;
    size_t is = k % e->seed.n; k /= e->seed.n;
    size_t ipb = k % e->precise_batches.n; k /= e->precise_batches.n;
    size_t ip = k % e->partial.n; k /= e->partial.n;
    size_t iep = k % e->epochs.n; k /= e->epochs.n;
    size_t im = k % e->momentum.n; k /= e->momentum.n;
    size_t iw = k % e->momentum_weights.n; k /= e->momentum_weights.n;
    size_t iv = k % e->variance.n; k /= e->variance.n;
    size_t io = k % e->order.n; k /= e->order.n;
    size_t ie = k % e->estimator.n;

    run_default_config(cfg);
    snprintf(cfg->experiment, sizeof cfg->experiment, "%s", e->stem);
    snprintf(cfg->order, sizeof cfg->order, "%s", e->order.v[io]);
    cfg->seed = e->seed.v[is];
    cfg->batch_size = (size_t)e->batch_size.v[ib];
    cfg->epochs = (unsigned long)e->epochs.v[iep];
    run_partial_parse(e->partial.v[ip], &cfg->partial);
    cfg->precise_batches = (size_t)e->precise_batches.v[ipb];
    bn_config *l = &cfg->layer;
    bn_weights w;
    bn_weights_parse(e->momentum_weights.v[iw], &w);
    bn_set_momentum(l, e->momentum.v[im], w, NULL);
    bn_variance_parse(e->variance.v[iv], &l->variance);
    bn_estimator_parse(e->estimator.v[ie], &l->estimator);
    l->gamma = e->gamma;
    l->beta = e->beta;
    l->eps = e->eps;
}
