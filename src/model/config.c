/* The helpers of a run's plain values (config.h). */
#include "model/config.h"

#include <stdlib.h>
#include <string.h>

const char *run_partial_name(int p)
{
    static const char *const names[] = {"drop", "keep"};
    return p >= 0 && p < 2 ? names[p] : NULL;
}

int run_partial_parse(const char *s, run_partial *p)
{
    for (int i = 0; run_partial_name(i); i++)
        if (strcmp(s, run_partial_name(i)) == 0) {
            *p = (run_partial)i;
            return 0;
        }
    return -1;
}

size_t run_batches_per_epoch(size_t n, size_t b, run_partial partial)
{
    return n / b + (partial == RUN_PARTIAL_KEEP && n % b != 0);
}

int run_result_arrays(run_result *res, size_t f)
{
    res->running_mean = calloc(6 * (f ? f : 1), sizeof *res->running_mean);
    if (!res->running_mean)
        return -1;
    res->running_var = res->running_mean + f;
    res->true_mean = res->running_mean + 2 * f;
    res->true_var = res->running_mean + 3 * f;
    res->train_eval = res->running_mean + 4 * f;
    res->batch_mean_sq = res->running_mean + 5 * f;
    return 0;
}

void run_result_free(run_result *res)
{
    free(res->running_mean);
    res->running_mean = res->running_var = NULL;
    res->true_mean = res->true_var = NULL;
    res->train_eval = res->batch_mean_sq = NULL;
}
