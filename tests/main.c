/*
 * The unit-test binary's entry point: run every group in turn and finish
 * with one line, "N passed, N failed", that scripts can read; the exit
 * status is nonzero when anything failed.
 */
#include <stdio.h>

#include "groups.h"

static const struct {
    int (*run)(size_t *ntests);
} groups[] = {
    {test_pcg32_run},
    {test_num_run},
    {test_pop_run},
    {test_bn_run},
    {test_run_run},
    {test_cli_run},
    {test_study_run},
    {test_shuffles_run},
    {test_tables_run},
    {test_popfile_run},
    {test_diag_run},
    {test_net_run},
    {test_classifier_run},
    {test_convpop_run},
    {test_drift_run},
    {test_collapse_run},
    {test_causes_run},
    {test_provenance_run},
    {test_filepop_run},
    {test_diagnose_run},
    {test_web_run},
    {test_bench_run},
};

int main(void)
{
    size_t total = 0, failed = 0;
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        size_t n = 0;
        int f = groups[g].run(&n);
        /* A failed group setup is reported as an error, not a count: then
         * none of the group's tests can be said to have passed. */
        if (f < 0 || (size_t)f > n)
            f = (int)n;
        total += n;
        failed += (size_t)f;
    }
    fflush(stdout);
    printf("%zu passed, %zu failed\n", total - failed, failed);
    return failed != 0;
}
