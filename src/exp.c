/*
 * The key table, values of keys as an experiment holds them, the checks
 * that need every key, and the decoding of configuration k. Reading the
 * INI file is expfile.c's job; this file knows nothing of libinih.
 */
#include "exp.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "out.h"
#include "popid.h"

/* ---- applying a value to a configuration, and reading it back ---- */

static void set_text(key_cell *c, const char *s)
{
    c->kind = CELL_TEXT;
    c->text = s;
}

static void set_int(key_cell *c, unsigned long long u)
{
    c->kind = CELL_INT;
    c->u = u;
}

static void set_real(key_cell *c, double r)
{
    c->kind = CELL_REAL;
    c->r = r;
}

#define APPLY(fn, stmt)                                                     \
    static void apply_##fn(run_config *c, const exp_t *e, key_value v)       \
    {                                                                       \
        (void)e;                                                            \
        stmt;                                                               \
    }
#define GET(fn, stmt)                                                       \
    static void get_##fn(const run_config *c, key_cell *out) { stmt; }

APPLY(gamma, c->layer.gamma = v.r)
APPLY(beta, c->layer.beta = v.r)
APPLY(eps, c->layer.eps = v.r)
APPLY(momentum, c->layer.momentum = v.r)
APPLY(weights, c->layer.weights = (bn_weights)v.i)
APPLY(variance, c->layer.variance = (bn_variance)v.i)
APPLY(estimator, c->layer.estimator = (bn_estimator)v.i)
APPLY(batch_size, c->batch_size = (size_t)v.u)
APPLY(order, c->order = e->orders[v.i])
APPLY(seed, c->seed = v.u)
APPLY(epochs, c->epochs = (unsigned long)v.u)
APPLY(partial, c->partial = (run_partial)v.i)
APPLY(precise, c->precise_batches = (size_t)v.u)

GET(gamma, set_real(out, c->layer.gamma))
GET(beta, set_real(out, c->layer.beta))
GET(eps, set_real(out, c->layer.eps))
GET(momentum, set_real(out, c->layer.momentum))
GET(weights, set_text(out, bn_weights_name((int)c->layer.weights)))
GET(variance, set_text(out, bn_variance_name((int)c->layer.variance)))
GET(estimator, set_text(out, bn_estimator_name(c->layer.estimator)))
GET(batch_size, set_int(out, c->batch_size))
GET(order, set_text(out, c->order.name))
GET(seed, set_int(out, c->seed))
GET(epochs, set_int(out, c->epochs))
GET(partial, set_text(out, run_partial_name((int)c->partial)))
GET(precise, set_int(out, c->precise_batches))
GET(experiment, set_text(out, c->experiment))
GET(population, set_text(out, c->population))
GET(new_weight, set_real(out, c->layer.p))

#define ALL (COL_SUMMARY | COL_FEATURES | COL_SEEDS)
#define M_LAYER RUN_MODEL_LAYER

/* In section order, which the manifest keeps. The column numbers 1..10
 * are the published study's; nest orders the product (batch size varies fastest,
 * then the seed: exp_index and the many-seed files rely on both). */
static const key_def keys[KEY_COUNT] = {
    [KEY_DESCRIPTION] = {"experiment", "description", KT_TEXT, "", 0, 0, 0,
                         0, 0, NULL, "TEXT",
                         "what the experiment shows, copied into the "
                         "manifest", 0, 0, 0, -1, NULL, NULL},
    [KEY_TABLE] = {"experiment", "table", KT_COLUMNS,
                   "order batch_size updates stats_err train_eval_rmse "
                   "batch_mean_err init_weight",
                   0, 0, 0, 0, 0, NULL, "COLUMN ...",
                   "the reading table's columns (summary.tsv's)", 0, 0, 0,
                   -1, NULL, NULL},
    [KEY_OUTPUTS] = {"experiment", "outputs", KT_OUTPUTS,
                     "summary features table manifest distribution "
                     "expectation",
                     0, 0, 0, 0, 0, NULL, "FILE ...",
                     "the files a sweep writes (the many-seed ones only "
                     "with many seeds)", 0, 0, 0, -1, NULL, NULL},
    [KEY_ROWS] = {"population", "rows", KT_UINT, "512", 0, 0, 0, 2,
                  100000000, NULL, "N", "rows of the population", 0, 0, 0,
                  -1, NULL, NULL},
    [KEY_POP_SEED] = {"population", "seed", KT_UINT, "1", 0, 0, 0, 0,
                      UINT64_MAX, NULL, "S",
                      "PCG32 initstate of the population noise", 0, 0, 0,
                      -1, NULL, NULL},
    [KEY_FEATURE] = {"population", "feature", KT_FEATURE, NULL, 0, 0, 0, 0,
                     0, NULL, "NAME MEAN SD RHO",
                     "one feature per line; any replaces the default eight",
                     0, 0, 0, -1, NULL, NULL},
    [KEY_GAMMA] = {"layer", "gamma", KT_REALS, "1", -DBL_MAX, DBL_MAX, 0, 0,
                   0, NULL, "G", "the affine scale", 14, ALL, 2, M_LAYER,
                   apply_gamma, get_gamma},
    [KEY_BETA] = {"layer", "beta", KT_REALS, "0", -DBL_MAX, DBL_MAX, 0, 0,
                  0, NULL, "B0", "the affine shift", 15, ALL, 3, M_LAYER,
                  apply_beta, get_beta},
    [KEY_EPS] = {"layer", "eps", KT_REALS, "1e-05", 0, DBL_MAX, 1, 0, 0,
                 NULL, "E", "added to the variance", 13, ALL, 1, M_LAYER,
                 apply_eps, get_eps},
    [KEY_MOMENTUM] = {"layer", "momentum", KT_REALS, "0.9", 0, 1, 1, 0, 0,
                      NULL, "M", "the moving average's momentum", 5, ALL, 8,
                      M_LAYER, apply_momentum, get_momentum},
    [KEY_WEIGHTS] = {"layer", "momentum_weights", KT_CHOICES, "old", 0, 0,
                     0, 0, 0, bn_weights_name, "W",
                     "the value M weighs (old: Keras, the study; new: "
                     "PyTorch)",
                     6, ALL, 7, M_LAYER, apply_weights, get_weights},
    [KEY_VARIANCE] = {"layer", "variance", KT_CHOICES, "biased", 0, 0, 0, 0,
                      0, bn_variance_name, "V",
                      "the variance the buffer update takes", 8, ALL, 6,
                      M_LAYER, apply_variance, get_variance},
    [KEY_ESTIMATOR] = {"layer", "estimator", KT_CHOICES, "ema", 0, 0, 0, 0,
                       0, bn_estimator_name_at, "E",
                       "the running statistics' estimator", 10, ALL, 4,
                       M_LAYER, apply_estimator, get_estimator},
    [KEY_BATCH_SIZE] = {"sweep", "batch_size", KT_UINTS, "256", 0, 0, 0, 2,
                        100000000, NULL, "B",
                        "rows per batch, up to the population's", 4, ALL,
                        13, -1, apply_batch_size, get_batch_size},
    [KEY_ORDER] = {"sweep", "order", KT_ORDERS, "shuffled", 0, 0, 0, 0, 0,
                   NULL, "ORDER", "the order the batches are cut from", 2,
                   ALL, 5, -1, apply_order, get_order},
    [KEY_SEED] = {"sweep", "seed", KT_UINTS, "1", 0, 0, 0, 0, UINT64_MAX,
                  NULL, "S", "the shuffle's seed, PCG32 initstate", 3,
                  COL_SUMMARY | COL_FEATURES, 12, -1, apply_seed, get_seed},
    [KEY_EPOCHS] = {"sweep", "epochs", KT_UINTS, "1", 0, 0, 0, 1, 1000000,
                    NULL, "E", "passes over the same order", 9, ALL, 9, -1,
                    apply_epochs, get_epochs},
    [KEY_PARTIAL] = {"sweep", "partial", KT_CHOICES, "drop", 0, 0, 0, 0, 0,
                     run_partial_name, "P",
                     "drop or keep a last partial batch", 11, ALL, 10, -1,
                     apply_partial, get_partial},
    [KEY_PRECISE] = {"sweep", "precise_batches", KT_UINTS, "0", 0, 0, 0, 0,
                     100000000, NULL, "K",
                     "batches the precise estimator pools, 0 all", 12, ALL,
                     11, M_LAYER, apply_precise, get_precise},
    [KEY_EXPERIMENT] = {NULL, "experiment", KT_DERIVED, NULL, 0, 0, 0, 0, 0,
                        NULL, NULL, "the experiment file's stem", 1, ALL, 0,
                        -1, NULL, get_experiment},
    [KEY_POPULATION] = {NULL, "population", KT_DERIVED, NULL, 0, 0, 0, 0, 0,
                        NULL, NULL,
                        "the population's identifier (popid.h)", 16, ALL,
                        0, -1, NULL, get_population},
    [KEY_NEW_WEIGHT] = {NULL, "new_weight", KT_DERIVED, NULL, 0, 0, 0, 0, 0,
                        NULL, NULL,
                        "p, the new value's weight, from momentum and "
                        "momentum_weights",
                        7, COL_SUMMARY | COL_SEEDS, 0, M_LAYER, NULL,
                        get_new_weight},
};

const key_def *exp_key(key_id k) { return &keys[k]; }

int exp_key_find(const char *section, const char *name)
{
    for (int k = 0; k < KEY_COUNT; k++)
        if (keys[k].section && strcmp(keys[k].section, section) == 0 &&
            strcmp(keys[k].name, name) == 0)
            return k;
    return -1;
}

/* ---- parsing values ---- */

/* The next token of a list (separated by spaces and commas) into tok;
 * returns 0 at the end, -1 if a token is too long. */
static int next_token(const char **s, char tok[64])
{
    const char *p = *s;
    while (*p && (isspace((unsigned char)*p) || *p == ','))
        p++;
    if (!*p)
        return 0;
    size_t len = 0;
    while (p[len] && !isspace((unsigned char)p[len]) && p[len] != ',')
        len++;
    if (len >= 64)
        return -1;
    memcpy(tok, p, len);
    tok[len] = '\0';
    *s = p + len;
    return 1;
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

/* A real key's range as words: "in (0, 1]", "> 0", "finite". */
static const char *range_text(const key_def *d, char *buf, size_t cap)
{
    if (d->lo == -DBL_MAX && d->hi == DBL_MAX)
        snprintf(buf, cap, "a finite number");
    else if (d->hi == DBL_MAX)
        snprintf(buf, cap, "a number %s %g", d->lo_open ? ">" : ">=",
                 d->lo);
    else
        snprintf(buf, cap, "a number in %c%g, %g]", d->lo_open ? '(' : '[',
                 d->lo, d->hi);
    return buf;
}

static int in_range(const key_def *d, double x)
{
    return (d->lo_open ? x > d->lo : x >= d->lo) && x <= d->hi;
}

typedef struct {
    const char *origin, *key;
    int name_key;
    bn_error *err;
} where;

static int fail(const where *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int fail(const where *w, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (w->name_key)
        return bn_fail(w->err, "%s: %s: %s", w->origin, w->key, msg);
    return bn_fail(w->err, "%s: %s", w->origin, msg);
}

/* Grow a list by one value. */
static int push(key_value **v, size_t *n, size_t *cap, key_value x)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 8;
        key_value *nv = realloc(*v, c * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = c;
    }
    (*v)[(*n)++] = x;
    return 0;
}

static int add_feature(exp_t *e, const where *w, const char *value)
{
    pop_spec *p = &e->pop;
    char tok[5][64];
    size_t n = 0;
    int r;
    const char *s = value;
    while (n < 5 && (r = next_token(&s, tok[n])) == 1)
        n++;
    pop_feature ft;
    if (r < 0 || n != 4 || strlen(tok[0]) >= BN_NAME_MAX ||
        parse_real(tok[1], &ft.mean) || parse_real(tok[2], &ft.sd) ||
        parse_real(tok[3], &ft.rho))
        return fail(w, "expected 'NAME MEAN SD RHO', got '%s'", value);
    strcpy(ft.name, tok[0]);
    if (p->n_features == BN_MAX_FEATURES)
        return fail(w, "more than %d features", BN_MAX_FEATURES);
    if (pop_feature_index(p, ft.name) >= 0)
        return fail(w, "name '%s' given twice", ft.name);
    if (!(ft.sd >= 0) || !(ft.rho >= -1 && ft.rho <= 1))
        return fail(w, "%s: sd must be >= 0 and rho in [-1, 1]", ft.name);
    p->features[p->n_features++] = ft;
    return 0;
}

/* Names of a KT_COLUMNS or KT_OUTPUTS key. */
static int set_names(exp_t *e, key_id k, const where *w, const char *value)
{
    char tok[64], names[EXP_MAX_COLUMNS][64];
    size_t n = 0;
    unsigned mask = 0;
    int r;
    const char *s = value;
    while ((r = next_token(&s, tok)) == 1) {
        if (n == EXP_MAX_COLUMNS)
            return fail(w, "more than %d names", EXP_MAX_COLUMNS);
        if (k == KEY_TABLE && out_column_find(tok, NULL) != 0)
            return fail(w, "unknown value '%s' (a column of summary.tsv)",
                        tok);
        if (k == KEY_OUTPUTS) {
            int f = out_file_find(tok);
            if (f < 0) {
                char list[256];
                return fail(w, "unknown value '%s' (%s)", tok,
                            out_file_list(", ", list, sizeof list));
            }
            mask |= 1u << f;
        }
        strcpy(names[n++], tok);
    }
    if (r < 0 || n == 0)
        return fail(w, "expected a list of names, got '%s'", value);
    if (k == KEY_OUTPUTS) {
        e->outputs = mask;
    } else {
        memcpy(e->table, names, sizeof names);
        e->n_table = n;
    }
    return 0;
}

/* An axis: a list of values of the key's type. */
static int set_list(exp_t *e, key_id k, const where *w, const char *value)
{
    const key_def *d = &keys[k];
    key_value *v = NULL;
    size_t n = 0, cap = 0;
    order_spec *orders = NULL;
    char tok[64], range[64];
    int r;
    const char *s = value;
#define BAD(...) do { free(v); free(orders); return fail(w, __VA_ARGS__); } while (0)
#define PUSH(x)                                                             \
    do {                                                                    \
        if (n == EXP_MAX_VALUES)                                            \
            BAD("more than %d values", EXP_MAX_VALUES);                     \
        if (push(&v, &n, &cap, (x)) != 0)                                   \
            BAD("out of memory");                                           \
    } while (0)
    while ((r = next_token(&s, tok)) == 1) {
        key_value x = {0};
        switch (d->type) {
        case KT_REALS:
            if (parse_real(tok, &x.r) || !in_range(d, x.r))
                BAD("'%s' is not %s", tok, range_text(d, range, sizeof range));
            PUSH(x);
            break;
        case KT_UINTS: {
            uint64_t a, b;
            char *dots = strstr(tok, "..");
            if (dots) {
                *dots = '\0';
                if (parse_u64(tok, &a) || parse_u64(dots + 2, &b) || b < a)
                    BAD("'%s' is not a range A..B", value);
            } else if (parse_u64(tok, &a) == 0) {
                b = a;
            } else {
                BAD("'%s' is not an integer", tok);
            }
            if (a < d->min || b > d->max)
                BAD("values must be from %llu to %llu",
                    (unsigned long long)d->min, (unsigned long long)d->max);
            for (uint64_t u = a;; u++) {
                x.u = u;
                PUSH(x);
                if (u == b)
                    break;
            }
            break;
        }
        case KT_CHOICES: {
            int i = 0;
            while (d->choice(i) && strcmp(d->choice(i), tok) != 0)
                i++;
            if (!d->choice(i)) {
                char list[256];
                BAD("unknown value '%s' (%s)", tok,
                    bn_join(list, sizeof list, ", ", " or ", d->choice));
            }
            x.i = i;
            PUSH(x);
            break;
        }
        case KT_ORDERS: {
            /* Parsed against the population in exp_finish, which may come
             * later in the file. */
            order_spec *no = realloc(orders, (n + 1) * sizeof *no);
            if (!no)
                BAD("out of memory");
            orders = no;
            memset(&orders[n], 0, sizeof *orders);
            snprintf(orders[n].name, sizeof orders[n].name, "%s", tok);
            x.i = (int)n;
            PUSH(x);
            break;
        }
        default:
            BAD("not a list");
        }
    }
    if (r < 0 || n == 0)
        BAD("expected a list of values, got '%s'", value);
#undef PUSH
#undef BAD
    free(e->v[k]);
    e->v[k] = v;
    e->n[k] = n;
    if (d->type == KT_ORDERS) {
        free(e->orders);
        e->orders = orders;
        e->n_orders = n;
    }
    return 0;
}

int exp_set(exp_t *e, key_id k, const char *value, const char *origin,
            int name_key, bn_error *err)
{
    const key_def *d = &keys[k];
    where w = {origin, d->name, name_key, err};
    uint64_t u;
    int rc;
    switch (d->type) {
    case KT_TEXT:
        snprintf(e->description, sizeof e->description, "%s", value);
        rc = 0;
        break;
    case KT_COLUMNS:
    case KT_OUTPUTS:
        rc = set_names(e, k, &w, value);
        break;
    case KT_UINT:
        if (parse_u64(value, &u) || u < d->min || u > d->max)
            return fail(&w, "expected an integer from %llu to %llu, got '%s'",
                        (unsigned long long)d->min,
                        (unsigned long long)d->max, value);
        if (k == KEY_ROWS)
            e->pop.n_rows = (size_t)u;
        else
            e->pop.seed = u;
        rc = 0;
        break;
    case KT_FEATURE:
        rc = add_feature(e, &w, value);
        break;
    case KT_DERIVED:
        return fail(&w, "not a key of an experiment file");
    default:
        rc = set_list(e, k, &w, value);
        break;
    }
    if (rc == 0 && origin)
        snprintf(e->from[k], sizeof e->from[k], "%s", origin);
    return rc;
}

int exp_init(exp_t *e, bn_error *err)
{
    memset(e, 0, sizeof *e);
    strcpy(e->stem, "run");
    strcpy(e->source, "run");
    pop_default_spec(&e->pop);
    for (int k = 0; k < KEY_COUNT; k++)
        if (keys[k].dflt && exp_set(e, (key_id)k, keys[k].dflt,
                                    "the default", 1, err) != 0)
            return -1;
    /* Defaults were not set by anyone. */
    memset(e->from, 0, sizeof e->from);
    return 0;
}

void exp_free(exp_t *e)
{
    for (int k = 0; k < KEY_COUNT; k++) {
        free(e->v[k]);
        e->v[k] = NULL;
        e->n[k] = 0;
    }
    free(e->orders);
    e->orders = NULL;
    e->n_orders = 0;
}

/* ---- the product ---- */

/* The axes, slowest first. */
static size_t axes(key_id *out)
{
    size_t n = 0;
    for (int rank = 1; rank <= KEY_COUNT; rank++)
        for (int k = 0; k < KEY_COUNT; k++)
            if (keys[k].nest == rank)
                out[n++] = (key_id)k;
    return n;
}

size_t exp_count(const exp_t *e)
{
    key_id ax[KEY_COUNT];
    size_t na = axes(ax), total = 1;
    for (size_t i = 0; i < na; i++)
        total *= e->n[ax[i]];
    return total;
}

size_t exp_index(const exp_t *e, size_t r, size_t is, size_t ib)
{
    return ib + e->n[KEY_BATCH_SIZE] * (is + e->n[KEY_SEED] * r);
}

/* Apply the axes' values at index pos[] to cfg. */
static void config_at(const exp_t *e, const key_id *ax, size_t na,
                      const size_t *pos, run_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    snprintf(cfg->experiment, sizeof cfg->experiment, "%s", e->stem);
    memcpy(cfg->population, e->pop_id, sizeof cfg->population);
    cfg->model = RUN_MODEL_LAYER;
    for (size_t i = 0; i < na; i++)
        keys[ax[i]].apply(cfg, e, e->v[ax[i]][pos[i]]);
    /* p and keep follow from momentum and its convention together; a
     * momentum out of range is left for run_check to name. */
    bn_set_momentum(&cfg->layer, cfg->layer.momentum, cfg->layer.weights,
                    NULL);
}

void exp_config(const exp_t *e, size_t k, run_config *cfg)
{
    key_id ax[KEY_COUNT];
    size_t na = axes(ax), pos[KEY_COUNT];
    for (size_t i = na; i-- > 0;) {
        pos[i] = k % e->n[ax[i]];
        k /= e->n[ax[i]];
    }
    config_at(e, ax, na, pos, cfg);
}

/* ---- the checks that need every key ---- */

static const char *origin(const exp_t *e, int k0, int k1)
{
    if (k0 >= 0 && e->from[k0][0])
        return e->from[k0];
    if (k1 >= 0 && e->from[k1][0])
        return e->from[k1];
    return e->source;
}

/* The blamed keys' values in cfg, "momentum 1, estimator ema-debiased: ",
 * for keys that have more than one value (which one failed is news). */
static void blamed_values(const exp_t *e, const run_config *cfg,
                          const int *blame, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < 2; i++) {
        int k = blame[i];
        if (k < 0 || !keys[k].get || e->n[k] < 2 || len >= cap)
            continue;
        key_cell c;
        memset(&c, 0, sizeof c);
        keys[k].get(cfg, &c);
        if (c.kind == CELL_TEXT)
            len += (size_t)snprintf(buf + len, cap - len, "%s %s, ",
                                    keys[k].name, c.text);
        else if (c.kind == CELL_INT)
            len += (size_t)snprintf(buf + len, cap - len, "%s %llu, ",
                                    keys[k].name, c.u);
        else
            len += (size_t)snprintf(buf + len, cap - len, "%s %g, ",
                                    keys[k].name, c.r);
    }
    if (len >= 2 && len < cap)
        buf[len - 2] = ':', buf[len - 1] = ' ';
}

int exp_finish(exp_t *e, bn_error *err)
{
    bn_error sub;
    if (pop_validate(&e->pop, &sub) != 0)
        return bn_fail(err, "%s: %s", origin(e, KEY_FEATURE, KEY_ROWS),
                       sub.msg);
    for (size_t i = 0; i < e->n_orders; i++) {
        char name[64];
        memcpy(name, e->orders[i].name, sizeof name);
        if (order_parse(name, &e->pop, &e->orders[i], &sub) != 0)
            return bn_fail(err, "%s: %s", origin(e, KEY_ORDER, -1), sub.msg);
    }
    pop_id(&e->pop, e->pop_id);

    key_id ax[KEY_COUNT];
    size_t na = axes(ax), total = 1;
    for (size_t i = 0; i < na; i++) {
        if (total > EXP_MAX_CONFIGS / e->n[ax[i]])
            return bn_fail(err, "%s: more than %d configurations", e->source,
                           EXP_MAX_CONFIGS);
        total *= e->n[ax[i]];
    }

    /* Every combination through the validator `run` uses, with the seed
     * at its first value: no check depends on the seed. */
    pop_t shape;
    memset(&shape, 0, sizeof shape);
    shape.spec = e->pop;
    shape.n = e->pop.n_rows;
    shape.f = e->pop.n_features;
    size_t pos[KEY_COUNT] = {0};
    for (;;) {
        run_config cfg;
        config_at(e, ax, na, pos, &cfg);
        int blame[2] = {-1, -1};
        if (run_check(&cfg, &shape, blame, &sub) != 0) {
            char values[200];
            blamed_values(e, &cfg, blame, values, sizeof values);
            return bn_fail(err, "%s: %s%s", origin(e, blame[0], blame[1]),
                           values, sub.msg);
        }
        size_t i = na;
        while (i-- > 0) {
            if (ax[i] == KEY_SEED)
                continue;
            if (++pos[i] < e->n[ax[i]])
                break;
            pos[i] = 0;
        }
        if (i == (size_t)-1)
            break;
    }
    return 0;
}

/* ---- the manifest and the key columns ---- */

static void print_ints(FILE *fp, const key_value *v, size_t n)
{
    /* Runs of consecutive values print as A..B, as they may be written. */
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && v[j].u != UINT64_MAX && v[j + 1].u == v[j].u + 1)
            j++;
        fprintf(fp, "%s%llu", i ? " " : "", (unsigned long long)v[i].u);
        if (j > i + 1)
            fprintf(fp, "..%llu", (unsigned long long)v[j].u);
        else if (j == i + 1)
            fprintf(fp, " %llu", (unsigned long long)v[j].u);
        i = j + 1;
    }
}

void exp_manifest(FILE *fp, const exp_t *e)
{
    for (int k = 0; k < KEY_COUNT; k++) {
        const key_def *d = &keys[k];
        if (!d->section)
            continue;
        if (d->type == KT_FEATURE) {
            for (size_t j = 0; j < e->pop.n_features; j++) {
                const pop_feature *f = &e->pop.features[j];
                fprintf(fp, "%s.%s\t%s %.17g %.17g %.17g\n", d->section,
                        d->name, f->name, f->mean, f->sd, f->rho);
            }
            continue;
        }
        fprintf(fp, "%s.%s\t", d->section, d->name);
        switch (d->type) {
        case KT_TEXT:
            fputs(e->description, fp);
            break;
        case KT_COLUMNS:
            for (size_t i = 0; i < e->n_table; i++)
                fprintf(fp, "%s%s", i ? " " : "", e->table[i]);
            break;
        case KT_OUTPUTS:
            for (int f = 0, first = 1; out_file_get(f); f++)
                if (e->outputs & (1u << f)) {
                    fprintf(fp, "%s%s", first ? "" : " ",
                            out_file_get(f)->name);
                    first = 0;
                }
            break;
        case KT_UINT:
            fprintf(fp, "%llu",
                    (unsigned long long)(k == KEY_ROWS ? e->pop.n_rows
                                                       : e->pop.seed));
            break;
        case KT_REALS:
            for (size_t i = 0; i < e->n[k]; i++)
                fprintf(fp, "%s%.17g", i ? " " : "", e->v[k][i].r);
            break;
        case KT_UINTS:
            print_ints(fp, e->v[k], e->n[k]);
            break;
        case KT_CHOICES:
            for (size_t i = 0; i < e->n[k]; i++)
                fprintf(fp, "%s%s", i ? " " : "", d->choice(e->v[k][i].i));
            break;
        case KT_ORDERS:
            for (size_t i = 0; i < e->n[k]; i++)
                fprintf(fp, "%s%s", i ? " " : "",
                        e->orders[e->v[k][i].i].name);
            break;
        default:
            break;
        }
        fputc('\n', fp);
    }
}

/* The key columns of file, lead or trail, of the models trained, in
 * column order. */
static size_t columns(unsigned file, int lead, unsigned models, key_id *out)
{
    size_t n = 0;
    for (int col = 1; col <= KEY_COUNT; col++)
        for (int k = 0; k < KEY_COUNT; k++)
            if (keys[k].col == col && (keys[k].files & file) &&
                (col <= KEY_LEAD_COLUMNS) == (lead != 0) &&
                (keys[k].model < 0 || (models & (1u << keys[k].model))))
                out[n++] = (key_id)k;
    return n;
}

int exp_key_column(const char *name)
{
    for (int k = 0; k < KEY_COUNT; k++)
        if (keys[k].col && strcmp(keys[k].name, name) == 0)
            return k;
    return -1;
}

void exp_cell_print(FILE *fp, const key_cell *c, const char *real_fmt)
{
    if (c->kind == CELL_TEXT)
        fputs(c->text ? c->text : c->buf, fp);
    else if (c->kind == CELL_INT)
        fprintf(fp, "%llu", c->u);
    else
        fprintf(fp, real_fmt, c->r);
}

void exp_key_header(FILE *fp, unsigned file, int lead, int first,
                    unsigned models)
{
    key_id col[KEY_COUNT];
    size_t n = columns(file, lead, models, col);
    for (size_t i = 0; i < n; i++)
        fprintf(fp, "%s%s", i == 0 && first ? "" : "\t", keys[col[i]].name);
}

void exp_key_cells(FILE *fp, const run_config *cfg, unsigned file, int lead,
                   int first, const char *real_fmt, unsigned models)
{
    key_id col[KEY_COUNT];
    size_t n = columns(file, lead, models, col);
    for (size_t i = 0; i < n; i++) {
        key_cell c;
        memset(&c, 0, sizeof c);
        if (keys[col[i]].model >= 0 && keys[col[i]].model != (int)cfg->model)
            c.text = "-"; /* another model's setting */
        else
            keys[col[i]].get(cfg, &c);
        if (i > 0 || !first)
            fputc('\t', fp);
        exp_cell_print(fp, &c, real_fmt);
    }
}

/* ---- the defaults of a single run ---- */

void run_default_config(run_config *cfg)
{
    exp_t e;
    bn_error err;
    /* The defaults are the table's, which a unit test checks are valid. */
    if (exp_init(&e, &err) != 0 || exp_finish(&e, &err) != 0) {
        memset(cfg, 0, sizeof *cfg);
        exp_free(&e);
        return;
    }
    exp_config(&e, 0, cfg);
    exp_free(&e);
}
