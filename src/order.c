/* Building the permutations; see order.h for the names. */
#include "order.h"

#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "pcg32.h"

int order_parse(const char *name, const pop_spec *pop, order_spec *order,
                bn_error *err)
{
    memset(order, 0, sizeof *order);
    const char *feat = NULL;
    if (strcmp(name, "as-is") == 0) {
        order->kind = ORDER_AS_IS;
    } else if (strcmp(name, "shuffled") == 0) {
        order->kind = ORDER_SHUFFLED;
    } else if (strcmp(name, "sorted") == 0) {
        order->kind = ORDER_SORTED;
        order->feature = 0;
    } else if (strncmp(name, "sorted:", 7) == 0) {
        order->kind = ORDER_SORTED;
        feat = name + 7;
    } else if (strcmp(name, "interleaved") == 0) {
        order->kind = ORDER_INTERLEAVED;
        order->feature = 0;
    } else if (strncmp(name, "grouped:", 8) == 0) {
        char *end;
        unsigned long long k = strtoull(name + 8, &end, 10);
        order->kind = ORDER_GROUPED;
        if (name[8] < '1' || name[8] > '9' || *end || k > pop->n_rows)
            return bn_fail(err,
                           "order '%s': K must be an integer from 1 to the "
                           "population's %zu rows",
                           name, pop->n_rows);
        order->groups = (size_t)k;
    } else if (strncmp(name, "sorted-desc:", 12) == 0) {
        order->kind = ORDER_SORTED;
        order->descending = 1;
        feat = name + 12;
    } else {
        return bn_fail(err,
                       "unknown order '%s' (as-is, shuffled, sorted, "
                       "sorted:NAME, sorted-desc:NAME, grouped:K, "
                       "interleaved)",
                       name);
    }
    if (feat) {
        int j = pop_feature_index(pop, feat);
        if (j < 0)
            return bn_fail(err, "order '%s': no feature named '%s'", name,
                           feat);
        order->feature = (size_t)j;
    }
    return 0;
}

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

/* Batch k takes ranks k, k + nb, ...; with M = nb B rows in full batches,
 * rank r of those maps to sorted position floor(r N / M), so rows a
 * dropped partial batch loses are spread over the range too. */
static int interleave(const pop_t *pop, size_t feature, size_t b,
                      size_t *perm)
{
    size_t n = pop->n, nb = n / b, m = nb * b;
    size_t *sorted = malloc(n * sizeof *sorted);
    unsigned char *used = calloc(n, 1);
    if (!sorted || !used || sort_rows(pop, feature, 0, sorted) != 0) {
        free(sorted);
        free(used);
        return -1;
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

int order_make(const order_spec *order, const pop_t *pop, uint64_t seed,
               size_t *perm, bn_error *err)
{
    size_t n = pop->n;
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    switch (order->kind) {
    case ORDER_AS_IS:
        break;
    case ORDER_SHUFFLED:
    case ORDER_GROUPED: {
        pcg32_t rng;
        pcg32_seed(&rng, seed, PCG32_INITSEQ_SHUFFLE);
        size_t k = order->kind == ORDER_SHUFFLED ? 1 : order->groups;
        for (size_t g = 0; g < k; g++) {
            size_t lo = g * n / k, hi = (g + 1) * n / k;
            draw_shuffle(&rng, perm + lo, hi - lo);
        }
        break;
    }
    case ORDER_SORTED:
        if (sort_rows(pop, order->feature, order->descending, perm) != 0)
            return bn_fail(err, "out of memory for the sort");
        break;
    case ORDER_INTERLEAVED:
        if (order->batch_size < 1 || order->batch_size > n)
            return bn_fail(err, "order interleaved needs a batch size from "
                                "1 to %zu",
                           n);
        if (interleave(pop, order->feature, order->batch_size, perm) != 0)
            return bn_fail(err, "out of memory for the interleaving");
        break;
    }
    return 0;
}
