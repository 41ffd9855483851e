/* Building the permutations; see order.h for the names. */
#include "order.h"

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

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
    } else if (strncmp(name, "sorted-desc:", 12) == 0) {
        order->kind = ORDER_SORTED;
        order->descending = 1;
        feat = name + 12;
    } else {
        return bn_fail(err,
                       "unknown order '%s' (as-is, shuffled, sorted, "
                       "sorted:NAME, sorted-desc:NAME)",
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

int order_uses_seed(const order_spec *order)
{
    return order->kind == ORDER_SHUFFLED;
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

int order_make(const order_spec *order, const pop_t *pop, uint64_t seed,
               size_t *perm, bn_error *err)
{
    size_t n = pop->n;
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    if (order->kind == ORDER_SHUFFLED) {
        gsl_rng *rng = pcg32_gsl_alloc(seed, PCG32_INITSEQ_SHUFFLE);
        if (!rng)
            return bn_fail(err, "out of memory for the shuffle");
        gsl_ran_shuffle(rng, perm, n, sizeof *perm);
        gsl_rng_free(rng);
    } else if (order->kind == ORDER_SORTED) {
        keyed_row *k = malloc(n * sizeof *k);
        if (!k)
            return bn_fail(err, "out of memory for the sort");
        for (size_t i = 0; i < n; i++) {
            k[i].v = pop->x[i * pop->f + order->feature];
            k[i].i = i;
        }
        /* The row index breaks ties, which makes qsort stable. */
        qsort(k, n, sizeof *k, order->descending ? cmp_desc : cmp_asc);
        for (size_t i = 0; i < n; i++)
            perm[i] = k[i].i;
        free(k);
    }
    return 0;
}
