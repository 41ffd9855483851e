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
    [KEY_POP_FILE] = {"population", "file", KT_PATH, NULL, 0, 0, 0, 0, 0,
                      NULL, "PATH",
                      "rows read from a CSV, TSV or .npy file instead "
                      "(relative to the experiment file)",
                      0, 0, 0, -1, NULL, NULL},
    [KEY_POP_LABEL] = {"population", "label", KT_COLUMN, NULL, 0, 0, 0, 0,
                       0, NULL, "COLUMN",
                       "the file's column of class labels, kept out of the "
                       "features",
                       0, 0, 0, -1, NULL, NULL},
    [KEY_POP_GROUP] = {"population", "group", KT_COLUMN, NULL, 0, 0, 0, 0,
                       0, NULL, "COLUMN",
                       "the file's column of groups (user, source, time), "
                       "kept out of the features",
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

static const char *origin(const exp_t *e, int k0, int k1);

/* ---- parsing values ---- */

/* The next token of a list into *tok (malloc'd, the caller frees it).
 * Tokens are separated by spaces and commas; a token in double quotes
 * keeps them, with "" for a quote inside (an order on a column whose name
 * has a space: "sorted:worst area"). Returns 1 for a token, 0 at the end,
 * -1 for an unclosed quote or no memory. */
static int next_token(const char **s, char **tok)
{
    const char *p = *s;
    *tok = NULL;
    while (*p && (isspace((unsigned char)*p) || *p == ','))
        p++;
    if (!*p)
        return 0;
    size_t len = strlen(p);
    char *t = malloc(len + 1), *o = t;
    if (!t)
        return -1;
    if (*p == '"') {
        for (p++;; p++) {
            if (!*p) {
                free(t);
                return -1;
            }
            if (*p == '"' && p[1] != '"')
                break;
            if (*p == '"')
                p++;
            *o++ = *p;
        }
        p++;
        if (*p && !isspace((unsigned char)*p) && *p != ',') {
            free(t);
            return -1; /* text glued to the closing quote */
        }
    } else {
        while (*p && !isspace((unsigned char)*p) && *p != ',')
            *o++ = *p++;
    }
    *o = '\0';
    *tok = t;
    *s = p;
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
    char msg[BN_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *origin = w->origin ? w->origin : "the default";
    if (w->name_key)
        return bn_fail(w->err, "%s: %s: %s", origin, w->key, msg);
    return bn_fail(w->err, "%s: %s", origin, msg);
}

/* The first byte of a value that would become structure in a TSV field
 * or a manifest line: any control character in text; in a list, any but
 * a tab between items (written back with spaces), so none inside a
 * quoted item either. NULL when there is none. */
static const char *structure_byte(const char *v, int text)
{
    int quoted = 0, start = 1;
    for (const char *c = v; *c; c++) {
        if (!quoted && start && *c == '"') {
            quoted = 1;
            start = 0;
            continue;
        }
        if (quoted && *c == '"') {
            if (c[1] == '"')
                c++;
            else
                quoted = 0;
            continue;
        }
        if (((unsigned char)*c < 0x20 || *c == 0x7f) &&
            (text || quoted || *c != '\t'))
            return c;
        start = !quoted && (isspace((unsigned char)*c) || *c == ',');
    }
    return NULL;
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
    char *tok[5] = {NULL};
    size_t n = 0;
    int r;
    const char *s = value;
    while (n < 5 && (r = next_token(&s, &tok[n])) == 1)
        n++;
    double mean, sd, rho;
    int bad = r < 0 || n != 4 || parse_real(tok[1], &mean) ||
              parse_real(tok[2], &sd) || parse_real(tok[3], &rho);
    bn_error sub;
    where bare = *w; /* the message names the feature */
    bare.name_key = 0;
    if (!bad && pop_feature_index(p, tok[0]) >= 0)
        bad = 2;
    else if (!bad && pop_check_feature(&(pop_feature){tok[0], mean, sd, rho},
                                       &sub) != 0)
        bad = 3;
    else if (!bad && pop_spec_add(p, tok[0], mean, sd, rho) != 0)
        bad = 4;
    int rc = 0;
    if (bad == 1)
        rc = fail(w, "expected 'NAME MEAN SD RHO', got '%s'", value);
    else if (bad == 2)
        rc = fail(w, "name '%s' given twice", tok[0]);
    else if (bad == 3)
        rc = fail(&bare, "%s", sub.msg);
    else if (bad == 4)
        rc = fail(w, "out of memory");
    for (size_t i = 0; i < 5; i++)
        free(tok[i]);
    return rc;
}

/* Names of a KT_COLUMNS or KT_OUTPUTS key. */
static int set_names(exp_t *e, key_id k, const where *w, const char *value)
{
    char *tok, names[EXP_MAX_COLUMNS][64];
    size_t n = 0;
    unsigned mask = 0;
    int r;
    const char *s = value;
#define BAD(...)                                                            \
    do {                                                                    \
        int rc_ = fail(w, __VA_ARGS__);                                     \
        free(tok);                                                          \
        return rc_;                                                         \
    } while (0)
    while ((r = next_token(&s, &tok)) == 1) {
        if (n == EXP_MAX_COLUMNS)
            BAD("more than %d names", EXP_MAX_COLUMNS);
        /* Every known name is short: a long one is unknown. */
        if (k == KEY_TABLE && (strlen(tok) >= sizeof names[0] ||
                               out_column_find(tok, NULL) != 0))
            BAD("unknown value '%s' (a column of summary.tsv)", tok);
        if (k == KEY_OUTPUTS) {
            int f = out_file_find(tok);
            if (f < 0 || strlen(tok) >= sizeof names[0]) {
                char list[256];
                BAD("unknown value '%s' (%s)", tok,
                    out_file_list(", ", list, sizeof list));
            }
            mask |= 1u << f;
        }
        strcpy(names[n++], tok);
        free(tok);
    }
#undef BAD
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

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

/* An axis: a list of values of the key's type. */
static int set_list(exp_t *e, key_id k, const where *w, const char *value)
{
    const key_def *d = &keys[k];
    key_value *v = NULL;
    size_t n = 0, cap = 0;
    order_spec *orders = NULL;
    char **order_names = NULL;
    size_t n_names = 0;
    char *tok = NULL, range[64];
    int r;
    const char *s = value;
#define BAD(...)                                                            \
    do {                                                                    \
        int rc_ = fail(w, __VA_ARGS__);                                     \
        free(v);                                                            \
        free(orders);                                                       \
        free_names(order_names, n_names);                                   \
        free(tok);                                                          \
        return rc_;                                                         \
    } while (0)
#define PUSH(x)                                                             \
    do {                                                                    \
        if (n == EXP_MAX_VALUES)                                            \
            BAD("more than %d values", EXP_MAX_VALUES);                     \
        if (push(&v, &n, &cap, (x)) != 0)                                   \
            BAD("out of memory");                                           \
    } while (0)
    while ((r = next_token(&s, &tok)) == 1) {
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
             * later in the file; the name is kept whole here. */
            order_spec *no = realloc(orders, (n + 1) * sizeof *no);
            if (no)
                orders = no;
            char **nn = no ? realloc(order_names, (n + 1) * sizeof *nn)
                           : NULL;
            if (!nn)
                BAD("out of memory");
            order_names = nn;
            memset(&orders[n], 0, sizeof *orders);
            order_names[n_names++] = tok;
            tok = NULL;
            x.i = (int)n;
            PUSH(x);
            break;
        }
        default:
            BAD("not a list");
        }
        free(tok);
        tok = NULL;
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
        free_names(e->order_names, e->n_orders);
        e->orders = orders;
        e->order_names = order_names;
        e->n_orders = n;
    }
    return 0;
}

/* A copy of s, or of dir/s when s is a relative path and dir is set. */
static char *join_path(const char *dir, size_t dir_len, const char *s)
{
    size_t n = strlen(s);
    int rel = dir_len > 0 && s[0] != '/';
    char *p = malloc((rel ? dir_len + 1 : 0) + n + 1);
    if (!p)
        return NULL;
    if (rel) {
        memcpy(p, dir, dir_len);
        p[dir_len] = '/';
    }
    memcpy(p + (rel ? dir_len + 1 : 0), s, n + 1);
    return p;
}

static char *copy_text(const char *s) { return join_path(NULL, 0, s); }

/* Where a key was set, kept for the whole-file checks' messages. */
static int set_from(exp_t *e, key_id k, const char *origin)
{
    char *from = copy_text(origin);
    if (!from)
        return -1;
    free(e->from[k]);
    e->from[k] = from;
    return 0;
}

/* The population file's path, relative to the experiment file's
 * directory when there is one. */
static int set_path(exp_t *e, const where *w, const char *value)
{
    if (value[0] == '\0')
        return fail(w, "an empty path names no file");
    for (const char *c = value; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return fail(w, "a control character in the path: the manifest "
                           "could not record it");
    const char *slash = e->source_is_file ? strrchr(e->source, '/') : NULL;
    char *file = copy_text(value);
    char *path = join_path(e->source, slash ? (size_t)(slash - e->source) : 0,
                           value);
    if (!file || !path) {
        free(file);
        free(path);
        return fail(w, "out of memory");
    }
    free(e->popfile.file);
    free(e->popfile.path);
    e->popfile.file = file;
    e->popfile.path = path;
    return 0;
}

static int set_column(exp_t *e, key_id k, const where *w, const char *value)
{
    if (value[0] == '\0')
        return fail(w, "an empty name names no column");
    char *c = copy_text(value);
    if (!c)
        return fail(w, "out of memory");
    char **slot = k == KEY_POP_LABEL ? &e->popfile.label : &e->popfile.group;
    free(*slot);
    *slot = c;
    return 0;
}

int exp_set(exp_t *e, key_id k, const char *value, const char *origin,
            int name_key, bn_error *err)
{
    const key_def *d = &keys[k];
    where w = {origin, d->name, name_key, err};
    uint64_t u;
    int rc;
    /* Values end up in TSV fields and manifest lines, where a tab or a
     * newline would be structure. */
    const char *bad = structure_byte(value, d->type == KT_TEXT);
    if (bad) {
        char name[16];
        return fail(&w, "%s in the value", bn_control_name(*bad, name));
    }
    switch (d->type) {
    case KT_TEXT: {
        char *text = copy_text(value);
        if (!text)
            return fail(&w, "out of memory");
        free(e->description);
        e->description = text;
        rc = 0;
        break;
    }
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
    case KT_PATH:
        rc = set_path(e, &w, value);
        break;
    case KT_COLUMN:
        rc = set_column(e, k, &w, value);
        break;
    case KT_DERIVED:
        return fail(&w, "not a key of an experiment file");
    default:
        rc = set_list(e, k, &w, value);
        break;
    }
    if (rc == 0 && origin && set_from(e, k, origin) != 0)
        return fail(&w, "out of memory");
    return rc;
}

int exp_set_override(exp_t *e, const char *set, int *set_features,
                     bn_error *err)
{
    size_t len = strlen(set);
    if (len > BN_LINE_MAX)
        return bn_fail(err, "--set of %zu characters, more than the limit "
                            "of %d (a line of an experiment file)",
                       len, BN_LINE_MAX);
    const char *bad = bn_control_char(set);
    if (bad) {
        char name[16];
        return bn_fail(err, "--set %s: %s (the manifest records every "
                            "--set on one line)",
                       set, bn_control_name(*bad, name));
    }
    const char *eq = strchr(set, '='), *dot = strchr(set, '.');
    if (!eq || !dot || dot > eq)
        return bn_fail(err, "--set %s: expected section.key=value", set);
    char section[BN_LINE_MAX + 1], name[BN_LINE_MAX + 1];
    snprintf(section, sizeof section, "%.*s", (int)(dot - set), set);
    snprintf(name, sizeof name, "%.*s", (int)(eq - dot - 1), dot + 1);
    char where[BN_LINE_MAX + 8];
    snprintf(where, sizeof where, "--set %s", set);
    int k = exp_key_find(section, name);
    if (k < 0)
        return bn_fail(err, "%s: unknown key '%s' in [%s]", where, name,
                       section);
    /* The first --set feature replaces the file's list, later ones add
     * to it. */
    if (k == KEY_FEATURE && !(*set_features)++)
        pop_spec_clear(&e->pop);
    return exp_set(e, (key_id)k, eq + 1, where, 1, err);
}

int exp_set_overrides(exp_t *e, char *const *sets, size_t n, bn_error *err)
{
    /* A key set twice is refused, as a key given twice in a file is;
     * feature lines add up. */
    int set_features = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < i; j++) {
            const char *a = sets[i], *b = sets[j];
            size_t ka = strcspn(a, "="), kb = strcspn(b, "=");
            if (ka == kb && strncmp(a, b, ka) == 0 &&
                strncmp(a, "population.feature=", 19) != 0)
                return bn_fail(err, "--set %.*s given twice", (int)ka, a);
        }
        if (exp_set_override(e, sets[i], &set_features, err) != 0)
            return -1;
    }
    return 0;
}

int exp_set_population(exp_t *e, const char *path, const char *label,
                       const char *group, bn_error *err)
{
    int from_file = e->source_is_file;
    e->source_is_file = 0; /* the command line's path: the current dir */
    int rc = exp_set(e, KEY_POP_FILE, path, "--population", 0, err);
    e->source_is_file = from_file;
    const char *opt[2] = {"--label", "--group"}, *val[2] = {label, group};
    key_id key[2] = {KEY_POP_LABEL, KEY_POP_GROUP};
    for (int i = 0; rc == 0 && i < 2; i++) {
        char **slot = i ? &e->popfile.group : &e->popfile.label;
        free(*slot);
        *slot = NULL;
        free(e->from[key[i]]);
        e->from[key[i]] = NULL;
        if (val[i])
            rc = exp_set(e, key[i], val[i], opt[i], 0, err);
    }
    return rc;
}

int exp_init(exp_t *e, bn_error *err)
{
    memset(e, 0, sizeof *e);
    strcpy(e->stem, "run");
    if (!(e->source = copy_text("run")) || pop_default_spec(&e->pop) != 0)
        return bn_fail(err, "out of memory");
    /* Defaults are set by no one: they have no origin. */
    for (int k = 0; k < KEY_COUNT; k++)
        if (keys[k].dflt &&
            exp_set(e, (key_id)k, keys[k].dflt, NULL, 1, err) != 0)
            return -1;
    return 0;
}

void exp_free(exp_t *e)
{
    for (int k = 0; k < KEY_COUNT; k++) {
        free(e->v[k]);
        free(e->from[k]);
        e->v[k] = NULL;
        e->from[k] = NULL;
        e->n[k] = 0;
    }
    free(e->source);
    free(e->text);
    free(e->description);
    e->source = e->text = e->description = NULL;
    free(e->orders);
    free_names(e->order_names, e->n_orders);
    e->orders = NULL;
    e->order_names = NULL;
    e->n_orders = 0;
    pop_spec_free(&e->pop);
    exp_popfile *pf = &e->popfile;
    free(pf->file);
    free(pf->path);
    free(pf->label);
    free(pf->group);
    if (pf->pop) {
        pop_free(pf->pop);
        free(pf->pop);
    }
    memset(pf, 0, sizeof *pf);
}

static int file_excludes(const exp_t *e, bn_error *err);

int exp_population_bytes(exp_t *e, const unsigned char *bytes, size_t len,
                         const char *sha256, bn_error *err)
{
    exp_popfile *f = &e->popfile;
    if (file_excludes(e, err) != 0)
        return -1; /* the keys' conflict before the file's faults */
    if (f->pop) {
        pop_free(f->pop);
        free(f->pop);
        f->pop = NULL;
    }
    popfile_options opt = {POPFILE_AUTO, f->label, f->group};
    popfile pf;
    bn_error sub;
    if (popfile_parse(f->path, bytes, len, &opt, &pf, &sub) != 0)
        return bn_fail(err, "%s: %s", origin(e, KEY_POP_FILE, -1), sub.msg);
    f->pop = malloc(sizeof *f->pop);
    if (!f->pop || pop_from_file(&pf, f->pop, &sub) != 0) {
        popfile_free(&pf);
        free(f->pop);
        f->pop = NULL;
        return bn_fail(err, "%s: out of memory", f->path);
    }
    /* The format as the parser told it: .npy by its magic bytes. */
    snprintf(f->format, sizeof f->format, "%s",
             popfile_format_name(popfile_detect(f->path, bytes, len)));
    snprintf(f->sha256, sizeof f->sha256, "%s", sha256);
    pop_file_desc d = {pop_fnv1a64(bytes, len), f->format, f->label,
                       f->group};
    pop_id_file(&d, e->pop_id);
    return 0;
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

size_t exp_rows(const exp_t *e)
{
    return e->popfile.pop ? e->popfile.pop->n : e->pop.n_rows;
}

size_t exp_features(const exp_t *e)
{
    return e->popfile.pop ? e->popfile.pop->f : e->pop.n_features;
}

double exp_work(const exp_t *e)
{
    double epochs = 0.0;
    for (size_t i = 0; i < e->n[KEY_EPOCHS]; i++)
        epochs += (double)e->v[KEY_EPOCHS][i].u;
    return epochs * (double)(exp_count(e) / e->n[KEY_EPOCHS]) *
           (double)exp_rows(e) * (double)exp_features(e);
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
    if (k0 >= 0 && e->from[k0])
        return e->from[k0];
    if (k1 >= 0 && e->from[k1])
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

static int finish_checks(exp_t *e, const pop_t *shape, bn_error *err);

int exp_blame(const exp_t *e, const run_config *cfg, const int *blame,
              const char *msg, bn_error *err)
{
    char values[200];
    blamed_values(e, cfg, blame, values, sizeof values);
    return bn_fail(err, "%s: %s%s", origin(e, blame[0], blame[1]), values,
                   msg);
}

/* A population read from a file has no rows, seed or feature lines: the
 * first of them set is named beside the file's line. */
static int file_excludes(const exp_t *e, bn_error *err)
{
    static const key_id generated[] = {KEY_ROWS, KEY_POP_SEED, KEY_FEATURE};
    size_t n_generated = sizeof generated / sizeof *generated;
    for (size_t i = 0; e->popfile.file && i < n_generated; i++) {
        key_id k = generated[i];
        if (e->from[k])
            return bn_fail(err,
                           "%s: %s does not apply to a population read from "
                           "a file (%s: file = %s)",
                           e->from[k], keys[k].name,
                           origin(e, KEY_POP_FILE, -1), e->popfile.file);
    }
    for (key_id k = KEY_POP_LABEL; k <= KEY_POP_GROUP; k++)
        if (!e->popfile.file && e->from[k])
            return bn_fail(err,
                           "%s: %s names a column of a population file, "
                           "and no file is given",
                           e->from[k], keys[k].name);
    return 0;
}

int exp_finish(exp_t *e, bn_error *err)
{
    bn_error sub;
    e->models = 0;
    if (file_excludes(e, err) != 0)
        return -1;
    /* The shape the orders and the checks see: the file's rows, or the
     * spec's names without any rows. */
    pop_t shape;
    memset(&shape, 0, sizeof shape);
    char **names = NULL;
    if (e->popfile.file) {
        if (!e->popfile.pop)
            return bn_fail(err, "%s: the population file %s was not read",
                           origin(e, KEY_POP_FILE, -1), e->popfile.file);
        shape = *e->popfile.pop;
    } else {
        if (pop_validate(&e->pop, &sub) != 0)
            return bn_fail(err, "%s: %s", origin(e, KEY_FEATURE, KEY_ROWS),
                           sub.msg);
        names = malloc(e->pop.n_features * sizeof *names);
        if (!names)
            return bn_fail(err, "out of memory");
        for (size_t j = 0; j < e->pop.n_features; j++)
            names[j] = e->pop.features[j].name;
        shape.n = e->pop.n_rows;
        shape.f = e->pop.n_features;
        shape.names = names;
        pop_id(&e->pop, e->pop_id);
    }
    int rc = finish_checks(e, &shape, err);
    free(names);
    return rc;
}

/* The orders against the population, and every combination of the axes
 * against run_check. */
static int finish_checks(exp_t *e, const pop_t *shape, bn_error *err)
{
    bn_error sub;
    for (size_t i = 0; i < e->n_orders; i++)
        if (order_parse(e->order_names[i], shape, &e->orders[i], &sub) != 0)
            return bn_fail(err, "%s: %s", origin(e, KEY_ORDER, -1), sub.msg);

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
    size_t pos[KEY_COUNT] = {0};
    for (;;) {
        run_config cfg;
        config_at(e, ax, na, pos, &cfg);
        int blame[2] = {-1, -1};
        if (run_check(&cfg, shape, blame, &sub) != 0)
            return exp_blame(e, &cfg, blame, sub.msg, err);
        e->models |= 1u << cfg.model;
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

const pop_t *exp_population(const exp_t *e, pop_t *tmp, bn_error *err)
{
    memset(tmp, 0, sizeof *tmp);
    if (e->popfile.file)
        return e->popfile.pop;
    return pop_generate(&e->pop, tmp, err) == 0 ? tmp : NULL;
}

/* ---- the manifest and the key columns ---- */

static void print_ints(bn_buf *fp, const key_value *v, size_t n)
{
    /* Runs of consecutive values print as A..B, as they may be written. */
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && v[j].u != UINT64_MAX && v[j + 1].u == v[j].u + 1)
            j++;
        buf_printf(fp, "%s%llu", i ? " " : "", (unsigned long long)v[i].u);
        if (j > i + 1)
            buf_printf(fp, "..%llu", (unsigned long long)v[j].u);
        else if (j == i + 1)
            buf_printf(fp, " %llu", (unsigned long long)v[j].u);
        i = j + 1;
    }
}

void exp_manifest(bn_buf *fp, const exp_t *e)
{
    for (int k = 0; k < KEY_COUNT; k++) {
        const key_def *d = &keys[k];
        if (!d->section)
            continue;
        /* A generated population's keys, or a file's: never both. */
        int file_key = d->type == KT_PATH || d->type == KT_COLUMN;
        if (k == KEY_ROWS || k == KEY_POP_SEED || file_key) {
            if ((e->popfile.file != NULL) != file_key)
                continue;
        }
        if (d->type == KT_FEATURE && e->popfile.file)
            continue;
        if (d->type == KT_PATH) {
            buf_printf(fp, "%s.%s\t%s\n", d->section, d->name, e->popfile.file);
            buf_printf(fp, "%s.%s_sha256\t%s\n", d->section, d->name,
                    e->popfile.sha256);
            /* What the file held, which the experiment does not say:
             * figures give the rows in their axis labels. */
            if (e->popfile.pop)
                buf_printf(fp, "%s.%s_rows\t%zu\n", d->section, d->name,
                           e->popfile.pop->n);
            continue;
        }
        if (d->type == KT_COLUMN) {
            const char *c = k == KEY_POP_LABEL ? e->popfile.label
                                               : e->popfile.group;
            if (c)
                buf_printf(fp, "%s.%s\t%s\n", d->section, d->name, c);
            continue;
        }
        if (d->type == KT_FEATURE) {
            for (size_t j = 0; j < e->pop.n_features; j++) {
                const pop_feature *f = &e->pop.features[j];
                buf_printf(fp, "%s.%s\t%s %.17g %.17g %.17g\n", d->section,
                        d->name, f->name, f->mean, f->sd, f->rho);
            }
            continue;
        }
        buf_printf(fp, "%s.%s\t", d->section, d->name);
        switch (d->type) {
        case KT_TEXT:
            buf_puts(fp, e->description ? e->description : "");
            break;
        case KT_COLUMNS:
            for (size_t i = 0; i < e->n_table; i++)
                buf_printf(fp, "%s%s", i ? " " : "", e->table[i]);
            break;
        case KT_OUTPUTS:
            for (int f = 0, first = 1; out_file_get(f); f++)
                if (e->outputs & (1u << f)) {
                    buf_printf(fp, "%s%s", first ? "" : " ",
                            out_file_get(f)->name);
                    first = 0;
                }
            break;
        case KT_UINT:
            buf_printf(fp, "%llu",
                    (unsigned long long)(k == KEY_ROWS ? e->pop.n_rows
                                                       : e->pop.seed));
            break;
        case KT_REALS:
            for (size_t i = 0; i < e->n[k]; i++)
                buf_printf(fp, "%s%.17g", i ? " " : "", e->v[k][i].r);
            break;
        case KT_UINTS:
            print_ints(fp, e->v[k], e->n[k]);
            break;
        case KT_CHOICES:
            for (size_t i = 0; i < e->n[k]; i++)
                buf_printf(fp, "%s%s", i ? " " : "", d->choice(e->v[k][i].i));
            break;
        case KT_ORDERS:
            for (size_t i = 0; i < e->n[k]; i++)
                buf_printf(fp, "%s%s", i ? " " : "",
                        e->orders[e->v[k][i].i].name);
            break;
        default:
            break;
        }
        buf_putc(fp, '\n');
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

void exp_cell_print(bn_buf *fp, const key_cell *c, const char *real_fmt)
{
    if (c->kind == CELL_TEXT)
        buf_puts(fp, c->text ? c->text : c->buf);
    else if (c->kind == CELL_INT)
        buf_printf(fp, "%llu", c->u);
    else
        buf_printf(fp, real_fmt, c->r);
}

void exp_key_header(bn_buf *fp, unsigned file, int lead, int first,
                    unsigned models)
{
    key_id col[KEY_COUNT];
    size_t n = columns(file, lead, models, col);
    for (size_t i = 0; i < n; i++)
        buf_printf(fp, "%s%s", i == 0 && first ? "" : "\t", keys[col[i]].name);
}

void exp_key_cells(bn_buf *fp, const run_config *cfg, unsigned file, int lead,
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
            buf_putc(fp, '\t');
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
