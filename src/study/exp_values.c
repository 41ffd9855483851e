/*
 * The values of keys as an experiment holds them: each key's text
 * parsed by its row of the key table (a list of an axis's values, a
 * feature line, a path, names of columns or files), the overrides of a
 * command line, and an experiment's defaults and its release. Reading
 * the INI file is expfile.c's job; this file knows nothing of libinih.
 */
#include "study/exp.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "model/order.h"
#include "study/exp_parts.h"
#include "study/outfile.h"

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

/* A line of a name and three numbers (a feature, a channel): the tokens
 * into tok[0..4] (the caller frees them), the numbers into x; 1 when the
 * line is not that. */
static int name_and_three(const char *value, char *tok[5], double x[3])
{
    size_t n = 0;
    int r;
    const char *s = value;
    while (n < 5 && (r = next_token(&s, &tok[n])) == 1)
        n++;
    return r < 0 || n != 4 || parse_real(tok[1], &x[0]) ||
           parse_real(tok[2], &x[1]) || parse_real(tok[3], &x[2]);
}

static int add_feature(exp_t *e, const where *w, const char *value)
{
    pop_spec *p = &e->pop;
    char *tok[5] = {NULL};
    double x[3] = {0.0, 0.0, 0.0};
    int bad = name_and_three(value, tok, x);
    double mean = x[0], sd = x[1], rho = x[2];
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

/* A generated feature-map channel, NAME MEAN SD R (convpop.h). */
static int add_channel(exp_t *e, const where *w, const char *value)
{
    exp_maps *m = &e->maps;
    char *tok[5] = {NULL};
    double x[3] = {0.0, 0.0, 0.0};
    int bad = name_and_three(value, tok, x);
    convpop_channel ch = {.mean = x[0], .sd = x[1], .r = x[2]};
    for (size_t i = 0; !bad && i < m->n_ch; i++)
        if (strcmp(m->ch_names[i], tok[0]) == 0)
            bad = 2;
    if (!bad && (!(ch.sd >= 0.0) || !(ch.r >= -1.0 && ch.r <= 1.0) ||
                 fabs(ch.mean) + 64.0 * ch.sd > POP_MAX_SCALE))
        bad = 3;
    if (!bad && m->n_ch == m->cap_ch) {
        size_t cap = m->cap_ch ? 2 * m->cap_ch : 4;
        convpop_channel *nc = realloc(m->ch, cap * sizeof *nc);
        if (nc)
            m->ch = nc;
        char **nn = nc ? realloc(m->ch_names, cap * sizeof *nn) : NULL;
        if (nn) {
            m->ch_names = nn;
            m->cap_ch = cap;
        } else {
            bad = 4;
        }
    }
    int rc = 0;
    if (bad == 1)
        rc = fail(w, "expected 'NAME MEAN SD R', got '%s'", value);
    else if (bad == 2)
        rc = fail(w, "name '%s' given twice", tok[0]);
    else if (bad == 3)
        rc = fail(w, "channel '%s': sd must be >= 0, R in [-1, 1] and "
                     "|mean| + 64 sd at most %g",
                  tok[0], POP_MAX_SCALE);
    else if (bad == 4)
        rc = fail(w, "out of memory");
    if (!bad) {
        m->ch[m->n_ch] = ch;
        m->ch_names[m->n_ch++] = tok[0];
        tok[0] = NULL;
    }
    for (size_t i = 0; i < 5; i++)
        free(tok[i]);
    return rc;
}

/* Two integers H W, each in the key's range. */
static int set_shape(exp_t *e, key_id k, const where *w, const char *value)
{
    const key_def *d = &keys[k];
    char *tok[3] = {NULL};
    size_t n = 0;
    int r;
    uint64_t v[2] = {0, 0};
    const char *s = value;
    while (n < 3 && (r = next_token(&s, &tok[n])) == 1)
        n++;
    int bad = r < 0 || n != 2 || parse_u64(tok[0], &v[0]) ||
              parse_u64(tok[1], &v[1]) || v[0] < d->min || v[0] > d->max ||
              v[1] < d->min || v[1] > d->max;
    for (size_t i = 0; i < 3; i++)
        free(tok[i]);
    if (bad)
        return fail(w, "expected two integers H W from %llu to %llu, got "
                       "'%s'",
                    (unsigned long long)d->min, (unsigned long long)d->max,
                    value);
    size_t *hw = k == KEY_MAPS_IMAGE ? &e->maps.image_h : &e->maps.size_h;
    hw[0] = (size_t)v[0];
    hw[1] = (size_t)v[1];
    return 0;
}

/* Names of a KT_COLUMNS or KT_OUTPUTS key. */
int set_names(exp_t *e, key_id k, const where *w, const char *value)
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
                               exp_column_find(tok, NULL) != 0))
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

void free_names(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

/* An axis's values as they are parsed: the list, and for orders and
 * drift profiles their specs and the names as written. */
typedef struct {
    key_value *v;
    size_t n, cap;
    order_spec *orders;
    drift_spec *drifts;
    char **names;
    size_t n_names;
} value_list;

static void value_list_free(value_list *l)
{
    free(l->v);
    free(l->orders);
    free(l->drifts);
    free_names(l->names, l->n_names);
}

static int list_push(value_list *l, const where *w, key_value x)
{
    if (l->n == EXP_MAX_VALUES)
        return fail(w, "more than %d values", EXP_MAX_VALUES);
    if (push(&l->v, &l->n, &l->cap, x) != 0)
        return fail(w, "out of memory");
    return 0;
}

static int list_real(value_list *l, const key_def *d, const where *w,
                     const char *tok)
{
    key_value x = {0};
    char range[64];
    if (parse_real(tok, &x.r) || !in_range(d, x.r))
        return fail(w, "'%s' is not %s", tok,
                    range_text(d, range, sizeof range));
    return list_push(l, w, x);
}

/* An integer, or a range A..B of them (value: the whole list, which the
 * message quotes). */
static int list_uints(value_list *l, const key_def *d, const where *w,
                      char *tok, const char *value)
{
    uint64_t a, b;
    char *dots = strstr(tok, "..");
    if (d->word && strcmp(tok, d->word) == 0) {
        key_value x = {.u = d->word_value};
        return list_push(l, w, x);
    }
    if (dots) {
        *dots = '\0';
        if (parse_u64(tok, &a) || parse_u64(dots + 2, &b) || b < a)
            return fail(w, "'%s' is not a range A..B", value);
    } else if (parse_u64(tok, &a) == 0) {
        b = a;
    } else {
        return fail(w, d->word ? "'%s' is not an integer or '%s'"
                               : "'%s' is not an integer%s",
                    tok, d->word ? d->word : "");
    }
    if (a < d->min || b > d->max)
        return fail(w, "values must be from %llu to %llu",
                    (unsigned long long)d->min, (unsigned long long)d->max);
    for (uint64_t u = a;; u++) {
        key_value x = {.u = u};
        if (list_push(l, w, x) != 0)
            return -1;
        if (u == b)
            return 0;
    }
}

static int list_choice(value_list *l, const key_def *d, const where *w,
                       const char *tok)
{
    int i = 0;
    while (d->choice(i) && strcmp(d->choice(i), tok) != 0)
        i++;
    if (!d->choice(i)) {
        char list[256];
        return fail(w, "unknown value '%s' (%s)", tok,
                    bn_join(list, sizeof list, ", ", " or ", d->choice));
    }
    key_value x = {.i = i};
    return list_push(l, w, x);
}

/* A name kept whole, taken from *tok, beside its spec (an order's or a
 * drift profile's) at index n: the spec arrays grow by one. */
static int list_name(value_list *l, const where *w, char **tok, int drift)
{
    size_t n = l->n;
    if (drift) {
        drift_spec *nd = realloc(l->drifts, (n + 1) * sizeof *nd);
        if (nd)
            l->drifts = nd;
        if (!nd)
            return fail(w, "out of memory");
    } else {
        order_spec *no = realloc(l->orders, (n + 1) * sizeof *no);
        if (no)
            l->orders = no;
        if (!no)
            return fail(w, "out of memory");
    }
    char **nn = realloc(l->names, (n + 1) * sizeof *nn);
    if (!nn)
        return fail(w, "out of memory");
    l->names = nn;
    l->names[l->n_names++] = *tok;
    *tok = NULL;
    key_value x = {.i = (int)n};
    return list_push(l, w, x);
}

/* An order, parsed against the population in exp_finish, which may come
 * later in the file: the name is kept whole here. */
static int list_order(value_list *l, const where *w, char **tok)
{
    size_t n = l->n;
    if (list_name(l, w, tok, 0) != 0)
        return -1;
    memset(&l->orders[n], 0, sizeof *l->orders);
    return 0;
}

/* A drift profile, parsed now (a profile needs nothing else); its name
 * kept as written, for the files. */
static int list_drift(value_list *l, const where *w, char **tok)
{
    bn_error sub;
    drift_spec dspec;
    if (drift_parse(*tok, &dspec, &sub) != 0)
        return fail(w, "%s", sub.msg);
    size_t n = l->n;
    if (list_name(l, w, tok, 1) != 0)
        return -1;
    l->drifts[n] = dspec;
    return 0;
}

/* One token of an axis of key d's type into l. */
static int list_token(value_list *l, const key_def *d, const where *w,
                      char **tok, const char *value)
{
    switch (d->type) {
    case KT_REALS:
        return list_real(l, d, w, *tok);
    case KT_UINTS:
        return list_uints(l, d, w, *tok, value);
    case KT_CHOICES:
        return list_choice(l, d, w, *tok);
    case KT_ORDERS:
        return list_order(l, w, tok);
    case KT_DRIFTS:
        return list_drift(l, w, tok);
    default:
        return fail(w, "not a list");
    }
}

/* An axis: a list of values of the key's type. */
static int set_list(exp_t *e, key_id k, const where *w, const char *value)
{
    const key_def *d = &keys[k];
    value_list l = {0};
    char *tok = NULL;
    int r;
    const char *s = value;
    while ((r = next_token(&s, &tok)) == 1) {
        int bad = list_token(&l, d, w, &tok, value);
        free(tok);
        tok = NULL;
        if (bad) {
            value_list_free(&l);
            return -1;
        }
    }
    if (r < 0 || l.n == 0) {
        int rc = fail(w, "expected a list of values, got '%s'", value);
        value_list_free(&l);
        free(tok);
        return rc;
    }
    free(e->v[k]);
    e->v[k] = l.v;
    e->n[k] = l.n;
    if (d->type == KT_ORDERS) {
        free(e->orders);
        free_names(e->order_names, e->n_orders);
        e->orders = l.orders;
        e->order_names = l.names;
        e->n_orders = l.n;
    } else if (d->type == KT_DRIFTS) {
        free(e->drifts);
        free_names(e->drift_names, e->n_drifts);
        e->drifts = l.drifts;
        e->drift_names = l.names;
        e->n_drifts = l.n;
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

char *copy_text(const char *s) { return join_path(NULL, 0, s); }

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
static exp_popfile *file_of(exp_t *e, key_id k)
{
    return (exp_popfile *)exp_file_of(e, k);
}

const exp_popfile *exp_file_of(const exp_t *e, key_id k)
{
    return k == KEY_EVAL_FILE       ? &e->evalfile
           : k == KEY_LAYER_INITIAL ? &e->initfile
           : k == KEY_SEQ_FILE      ? &e->seqfile
                                    : &e->popfile;
}

static int set_path(exp_t *e, key_id k, const where *w, const char *value)
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
    exp_popfile *pf = file_of(e, k);
    free(pf->file);
    free(pf->path);
    pf->file = file;
    pf->path = path;
    return 0;
}

/* Where the one-value keys keep their values. */
static void set_uint(exp_t *e, key_id k, uint64_t u)
{
    if (k == KEY_ROWS)
        e->pop.n_rows = (size_t)u;
    else if (k == KEY_POP_SEED)
        e->pop.seed = u;
    else if (k == KEY_POP_CLASSES)
        e->pop.classes = (size_t)u;
    else if (k == KEY_MAPS_FILTERS)
        e->maps.filters = (size_t)u;
    else if (k == KEY_MAPS_KERNEL)
        e->maps.kernel = (size_t)u;
    else if (k == KEY_MAPS_SAMPLES)
        e->maps.samples = (size_t)u;
    else if (k == KEY_MAPS_SEED)
        e->maps.seed = u;
    else
        e->holdout_seed = u;
}

uint64_t uint_of(const exp_t *e, key_id k)
{
    return k == KEY_ROWS           ? e->pop.n_rows
           : k == KEY_POP_SEED     ? e->pop.seed
           : k == KEY_POP_CLASSES  ? e->pop.classes
           : k == KEY_MAPS_FILTERS ? e->maps.filters
           : k == KEY_MAPS_KERNEL  ? e->maps.kernel
           : k == KEY_MAPS_SAMPLES ? e->maps.samples
           : k == KEY_MAPS_SEED    ? e->maps.seed
                                   : e->holdout_seed;
}

static double *real_slot(exp_t *e, key_id k)
{
    return k == KEY_POP_LABEL_NOISE ? &e->pop.label_noise : &e->holdout;
}

double real_of(const exp_t *e, key_id k)
{
    return k == KEY_POP_LABEL_NOISE ? e->pop.label_noise : e->holdout;
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

/* An axis of networks: the value's networks separated by commas, each
 * its layers separated by spaces; an empty value is one network, the one
 * of hidden and norm. */
static int set_nets(exp_t *e, const where *w, const char *value)
{
    size_t n = 1;
    for (const char *c = value; *c; c++)
        n += *c == ',';
    if (n > EXP_MAX_VALUES)
        return fail(w, "more than %d values", EXP_MAX_VALUES);
    nn_net_spec *nets = calloc(n, sizeof *nets);
    key_value *v = calloc(n, sizeof *v);
    if (!nets || !v) {
        free(nets);
        free(v);
        return fail(w, "out of memory");
    }
    const char *p = value;
    int empty = 1;
    for (const char *c = value; *c; c++)
        empty &= isspace((unsigned char)*c) != 0;
    for (size_t i = 0; i < n && !empty; i++) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char *one = malloc(len + 1);
        bn_error sub;
        int bad = !one;
        if (one) {
            memcpy(one, p, len);
            one[len] = '\0';
            bad = nn_parse(one, &nets[i], &sub) != 0;
        }
        free(one);
        if (bad) {
            free(nets);
            free(v);
            return one ? fail(w, "network %zu: %s", i + 1, sub.msg)
                       : fail(w, "out of memory");
        }
        v[i].i = (int)i;
        p = end ? end + 1 : p + len;
    }
    free(e->v[KEY_LAYERS]);
    free(e->nets);
    e->v[KEY_LAYERS] = v;
    e->n[KEY_LAYERS] = n;
    e->nets = nets;
    e->n_nets = n;
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
        set_uint(e, k, u);
        rc = 0;
        break;
    case KT_REAL: {
        double r;
        char range[64];
        if (parse_real(value, &r) || !in_range(d, r))
            return fail(&w, "'%s' is not %s", value,
                        range_text(d, range, sizeof range));
        *real_slot(e, k) = r;
        rc = 0;
        break;
    }
    case KT_FEATURE:
        rc = add_feature(e, &w, value);
        break;
    case KT_CHANNEL:
        rc = add_channel(e, &w, value);
        break;
    case KT_SHAPE:
        rc = set_shape(e, k, &w, value);
        break;
    case KT_PATH:
        rc = set_path(e, k, &w, value);
        break;
    case KT_COLUMN:
        rc = set_column(e, k, &w, value);
        break;
    case KT_NETS:
        rc = set_nets(e, &w, value);
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
    /* The first --set feature (channel) replaces the file's list, later
     * ones add to it. */
    if (k == KEY_FEATURE && !(*set_features & 1)) {
        *set_features |= 1;
        pop_spec_clear(&e->pop);
    }
    if (k == KEY_MAPS_CHANNEL && !(*set_features & 2)) {
        *set_features |= 2;
        free_names(e->maps.ch_names, e->maps.n_ch);
        e->maps.ch_names = NULL;
        e->maps.n_ch = e->maps.cap_ch = 0;
    }
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
                strncmp(a, "population.feature=", 19) != 0 &&
                strncmp(a, "maps.channel=", 13) != 0)
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
    free(e->drifts);
    free_names(e->drift_names, e->n_drifts);
    e->drifts = NULL;
    e->drift_names = NULL;
    e->n_drifts = 0;
    free(e->nets);
    e->nets = NULL;
    e->n_nets = 0;
    free(e->maps.ch);
    free_names(e->maps.ch_names, e->maps.n_ch);
    memset(&e->maps, 0, sizeof e->maps);
    pop_spec_free(&e->pop);
    bn_initial_free(&e->initial);
    exp_popfile *files[4] = {&e->popfile, &e->evalfile, &e->initfile,
                             &e->seqfile};
    for (int i = 0; i < 4; i++) {
        exp_popfile *pf = files[i];
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
}
