/* The order table and the permutations; see order.h for the names. */
#include "model/order.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pop/convpop.h"
#include "base/rand.h"
#include "base/pcg32.h"

typedef struct {
    double v;
    size_t i;
} keyed_row;

static int cmp_asc(const void *a, const void *b)
{
    const keyed_row *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static int cmp_desc(const void *a, const void *b)
{
    const keyed_row *x = a, *y = b;
    if (x->v != y->v)
        return x->v > y->v ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Rows sorted stably by one feature. */
static int sort_rows(const pop_t *pop, size_t feature, int descending,
                     size_t *out)
{
    size_t n = pop->n;
    keyed_row *k = malloc(n * sizeof *k);
    if (!k)
        return -1;
    for (size_t i = 0; i < n; i++) {
        k[i].v = pop->x[i * pop->f + feature];
        k[i].i = i;
    }
    /* The row index breaks ties, which makes qsort stable. */
    qsort(k, n, sizeof *k, descending ? cmp_desc : cmp_asc);
    for (size_t i = 0; i < n; i++)
        out[i] = k[i].i;
    free(k);
    return 0;
}

static int make_as_is(const order_spec *o, const pop_t *pop, uint64_t seed,
                      size_t *perm, bn_error *err)
{
    (void)o, (void)pop, (void)seed, (void)perm, (void)err;
    return 0;
}

/* k contiguous groups, each shuffled in turn from one PCG32 stream. */
static int shuffle_groups(const pop_t *pop, uint64_t seed, size_t k,
                          size_t *perm, bn_error *err)
{
    (void)err;
    size_t n = pop->n;
    pcg32_t rng;
    pcg32_seed(&rng, seed, PCG32_INITSEQ_SHUFFLE);
    for (size_t g = 0; g < k; g++) {
        size_t lo = g * n / k, hi = (g + 1) * n / k;
        rand_shuffle(&rng, perm + lo, hi - lo);
    }
    return 0;
}

static int make_shuffled(const order_spec *o, const pop_t *pop,
                         uint64_t seed, size_t *perm, bn_error *err)
{
    (void)o;
    return shuffle_groups(pop, seed, 1, perm, err);
}

static int make_grouped(const order_spec *o, const pop_t *pop, uint64_t seed,
                        size_t *perm, bn_error *err)
{
    return shuffle_groups(pop, seed, o->groups, perm, err);
}

static int make_sorted(const order_spec *o, const pop_t *pop, uint64_t seed,
                       size_t *perm, bn_error *err)
{
    (void)seed;
    if (sort_rows(pop, o->feature, 0, perm) != 0)
        return bn_fail(err, "out of memory for the sort");
    return 0;
}

static int make_sorted_desc(const order_spec *o, const pop_t *pop,
                            uint64_t seed, size_t *perm, bn_error *err)
{
    (void)seed;
    if (sort_rows(pop, o->feature, 1, perm) != 0)
        return bn_fail(err, "out of memory for the sort");
    return 0;
}

/* Batch k takes ranks k, k + nb, ...; with M = nb B rows in full batches,
 * rank r of those maps to sorted position floor(r N / M), so rows a
 * dropped partial batch loses are spread over the range too. */
static int make_interleaved(const order_spec *o, const pop_t *pop,
                            uint64_t seed, size_t *perm, bn_error *err)
{
    (void)seed;
    size_t n = pop->n, b = o->batch_size;
    if (b < 1 || b > n)
        return bn_fail(err, "order interleaved needs a batch size from 1 "
                            "to %zu",
                       n);
    size_t nb = n / b, m = nb * b;
    size_t *sorted = malloc(n * sizeof *sorted);
    unsigned char *used = calloc(n, 1);
    if (!sorted || !used || sort_rows(pop, o->feature, 0, sorted) != 0) {
        free(sorted);
        free(used);
        return bn_fail(err, "out of memory for the interleaving");
    }
    for (size_t k = 0; k < nb; k++)
        for (size_t i = 0; i < b; i++) {
            size_t rank = i * nb + k;
            size_t pos = (size_t)((unsigned long long)rank * n / m);
            perm[k * b + i] = sorted[pos];
            used[pos] = 1;
        }
    size_t t = m;
    for (size_t pos = 0; pos < n; pos++)
        if (!used[pos])
            perm[t++] = sorted[pos];
    free(sorted);
    free(used);
    return 0;
}

/* The rows grouped by a column of categories: levels in index order,
 * rows of a level in their enumerated order (a counting sort), then each
 * level's rows shuffled in turn from one PCG32 stream. */
static int make_by_factor(const pop_factor *fac, const pop_t *pop,
                          uint64_t seed, size_t *perm, bn_error *err)
{
    size_t n = pop->n, k = fac->n_levels;
    size_t *start = calloc(k + 1, sizeof *start);
    if (!start)
        return bn_fail(err, "out of memory for the order");
    pcg32_t rng;
    pcg32_seed(&rng, seed, PCG32_INITSEQ_SHUFFLE);
    for (size_t i = 0; i < n; i++)
        start[fac->of_row[i] + 1]++;
    for (size_t g = 0; g < k; g++)
        start[g + 1] += start[g];
    for (size_t i = 0; i < n; i++)
        perm[start[fac->of_row[i]]++] = i;
    /* start[g] is now where level g ends, level g - 1's too. */
    for (size_t g = 0, lo = 0; g < k; lo = start[g], g++)
        rand_shuffle(&rng, perm + lo, start[g] - lo);
    free(start);
    return 0;
}

static int make_by_label(const order_spec *o, const pop_t *pop,
                         uint64_t seed, size_t *perm, bn_error *err)
{
    (void)o;
    return make_by_factor(&pop->label, pop, seed, perm, err);
}

static int make_by_group(const order_spec *o, const pop_t *pop,
                         uint64_t seed, size_t *perm, bn_error *err)
{
    (void)o;
    return make_by_factor(&pop->group, pop, seed, perm, err);
}

/* Whole samples shuffled (convpop.h): the sample of row i is i / H W. */
static int make_shuffled_samples(const order_spec *o, const pop_t *pop,
                                 uint64_t seed, size_t *perm, bn_error *err)
{
    (void)o;
    size_t hw = pop->sample_rows > 1 ? pop->sample_rows : 1;
    size_t *group = malloc((pop->n ? pop->n : 1) * sizeof *group);
    if (!group)
        return bn_fail(err, "out of memory for the order");
    for (size_t i = 0; i < pop->n; i++)
        group[i] = i / hw;
    int rc = convpop_order_groups(pop->n, group, pop->n / hw, seed, perm,
                                  err);
    free(group);
    return rc;
}

static const order_def table[] = {
    {.name = "as-is", .arg = ORDER_ARG_NONE, .help = "the enumerated order",
     .whole_samples = 1, .make = make_as_is,
     .phrase = "batches in the enumerated order"},
    {.name = "shuffled", .arg = ORDER_ARG_NONE,
     .help = "Fisher-Yates from PCG32(seed, 2)", .uniform = 1,
     .make = make_shuffled, .phrase = "shuffled batches"},
    {.name = "sorted", .arg = ORDER_ARG_FEATURE, .arg_optional = 1,
     .help = "stable ascending by feature NAME (the first)",
     .make = make_sorted, .phrase = "batches sorted by %s"},
    {.name = "sorted-desc", .arg = ORDER_ARG_FEATURE,
     .help = "stable descending by feature NAME", .make = make_sorted_desc,
     .phrase = "batches sorted by %s, descending"},
    {.name = "grouped", .arg = ORDER_ARG_COUNT,
     .help = "K contiguous groups of the enumerated order, each shuffled",
     .make = make_grouped, .phrase = "batches cut from %s contiguous groups"},
    {.name = "interleaved", .arg = ORDER_ARG_NONE,
     .help = "batch k takes evenly spaced ranks of the order sorted by the "
             "first feature",
     .make = make_interleaved, .phrase = "interleaved batches"},
    {.name = "by-label", .arg = ORDER_ARG_LABEL,
     .help = "grouped by the label column, classes in index order, each "
             "shuffled",
     .make = make_by_label, .phrase = "batches grouped by class"},
    {.name = "by-group", .arg = ORDER_ARG_GROUP,
     .help = "grouped by the group column, groups in index order, each "
             "shuffled",
     .make = make_by_group, .phrase = "batches grouped by the group column"},
    /* Every order of the samples is equally likely, not every order of
     * the rows: expect.c's closed form is not its (convpop_effective
     * is). */
    {.name = "shuffled-samples", .arg = ORDER_ARG_NONE,
     .help = "whole samples of feature maps shuffled (PCG32(seed, 2)), each "
             "sample's rows together",
     .whole_samples = 1, .make = make_shuffled_samples,
     .phrase = "shuffled batches of whole samples"},
};
#define N_ORDERS (sizeof table / sizeof *table)

const order_def *order_get(size_t i) { return i < N_ORDERS ? &table[i] : NULL; }

const char *order_phrase(const char *name, char *buf, size_t cap)
{
    const char *colon = strchr(name, ':');
    size_t len = colon ? (size_t)(colon - name) : strlen(name);
    for (size_t i = 0; i < N_ORDERS; i++) {
        const order_def *d = &table[i];
        if (strlen(d->name) != len || strncmp(d->name, name, len) != 0)
            continue;
        const char *arg = colon ? colon + 1 : "the first feature";
        int takes = d->arg == ORDER_ARG_FEATURE || d->arg == ORDER_ARG_COUNT;
        if (!colon && takes && !d->arg_optional)
            break;
        snprintf(buf, cap, d->phrase, arg);
        return buf;
    }
    snprintf(buf, cap, "%s", name);
    return buf;
}

const char *order_list(const char *sep, char *buf, size_t cap)
{
    static const char *const arg_text[] = {"", "", "", ":NAME", ":K"};
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_ORDERS && len < cap; i++) {
        const order_def *d = &table[i];
        if (d->arg_optional)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s",
                                    len ? sep : "", d->name);
        if (len < cap)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s%s",
                                    len ? sep : "", d->name,
                                    arg_text[d->arg]);
    }
    return buf;
}

int order_parse(const char *name, const pop_t *pop, order_spec *order,
                bn_error *err)
{
    memset(order, 0, sizeof *order);
    order->name = name;
    const char *colon = strchr(name, ':');
    size_t head = colon ? (size_t)(colon - name) : strlen(name);
    const order_def *d = NULL;
    for (size_t i = 0; i < N_ORDERS; i++)
        if (strlen(table[i].name) == head &&
            strncmp(table[i].name, name, head) == 0)
            d = &table[i];
    int takes_arg = d && (d->arg == ORDER_ARG_FEATURE ||
                          d->arg == ORDER_ARG_COUNT);
    if (!d || (colon && !takes_arg) ||
        (!colon && takes_arg && !d->arg_optional)) {
        char list[256];
        return bn_fail(err, "unknown order '%s' (%s)", name,
                       order_list(", ", list, sizeof list));
    }
    order->def = d;
    if (!colon)
        order->name = d->name; /* the table's: it outlives any caller's */
    if (d->arg == ORDER_ARG_LABEL && !pop->label.column)
        return bn_fail(err, "order '%s' needs a population with a label "
                            "column ([population] label = COLUMN)",
                       name);
    if (d->arg == ORDER_ARG_GROUP && !pop->group.column)
        return bn_fail(err, "order '%s' needs a population with a group "
                            "column ([population] group = COLUMN)",
                       name);
    if (!colon)
        return 0; /* the optional argument: the first feature */
    const char *arg = colon + 1;
    if (d->arg == ORDER_ARG_FEATURE) {
        int j = pop_name_index(pop, arg);
        if (j < 0)
            return bn_fail(err, "order '%s': no feature named '%s'", name,
                           arg);
        order->feature = (size_t)j;
    } else {
        char *end;
        unsigned long long k = strtoull(arg, &end, 10);
        if (arg[0] < '1' || arg[0] > '9' || *end || k > pop->n)
            return bn_fail(err,
                           "order '%s': K must be an integer from 1 to the "
                           "population's %zu rows",
                           name, pop->n);
        order->groups = (size_t)k;
    }
    return 0;
}

int order_make(const order_spec *order, const pop_t *pop, uint64_t seed,
               size_t *perm, bn_error *err)
{
    for (size_t i = 0; i < pop->n; i++)
        perm[i] = i;
    if (!order->def)
        return bn_fail(err, "no order given");
    return order->def->make(order, pop, seed, perm, err);
}
