/*
 * The unit-test binary's entry point: run every group in turn and finish
 * with one line, "N passed, N failed", that scripts can read; the exit
 * status is nonzero when anything failed. Names on the command line run
 * those groups only; --list prints the names.
 */
#include <stdio.h>
#include <string.h>

#include "groups.h"

static const struct {
    const char *name; /* tests/test_NAME.c */
    int (*run)(size_t *ntests);
} groups[] = {
    {.name = "pcg32", .run = test_pcg32_run},
    {.name = "num", .run = test_num_run},
    {.name = "input", .run = test_input_run},
    {.name = "pop", .run = test_pop_run},
    {.name = "bn", .run = test_bn_run},
    {.name = "run", .run = test_run_run},
    {.name = "cli", .run = test_cli_run},
    {.name = "study", .run = test_study_run},
    {.name = "shuffles", .run = test_shuffles_run},
    {.name = "tables", .run = test_tables_run},
    {.name = "popfile", .run = test_popfile_run},
    {.name = "diag", .run = test_diag_run},
    {.name = "net", .run = test_net_run},
    {.name = "layers", .run = test_layers_run},
    {.name = "classifier", .run = test_classifier_run},
    {.name = "convpop", .run = test_convpop_run},
    {.name = "drift", .run = test_drift_run},
    {.name = "collapse", .run = test_collapse_run},
    {.name = "causes", .run = test_causes_run},
    {.name = "initial", .run = test_initial_run},
    {.name = "devices", .run = test_devices_run},
    {.name = "provenance", .run = test_provenance_run},
    {.name = "filepop", .run = test_filepop_run},
    {.name = "diagnose", .run = test_diagnose_run},
    {.name = "verdict", .run = test_verdict_run},
    {.name = "dumpdir", .run = test_dumpdir_run},
    {.name = "web", .run = test_web_run},
    {.name = "bench", .run = test_bench_run},
    {.name = "batchpass", .run = test_batchpass_run},
    {.name = "fmt", .run = test_fmt_run},
};
#define N_GROUPS (sizeof groups / sizeof groups[0])

static int group_index(const char *name)
{
    for (size_t g = 0; g < N_GROUPS; g++)
        if (strcmp(groups[g].name, name) == 0)
            return (int)g;
    return -1;
}

/* With no argument every group runs; with names, those groups in the
 * order given (make unit T="bn run"). An unknown name is refused before
 * any test runs, with the list of the names there are. */
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (size_t g = 0; g < N_GROUPS; g++)
            puts(groups[g].name);
        return 0;
    }
    for (int a = 1; a < argc; a++)
        if (group_index(argv[a]) < 0) {
            fprintf(stderr, "unit_tests: no test group called '%s'; the "
                            "groups are:", argv[a]);
            for (size_t g = 0; g < N_GROUPS; g++)
                fprintf(stderr, " %s", groups[g].name);
            fputc('\n', stderr);
            return 2;
        }
    size_t total = 0, failed = 0;
    size_t n_run = argc > 1 ? (size_t)(argc - 1) : N_GROUPS;
    for (size_t i = 0; i < n_run; i++) {
        size_t g = argc > 1 ? (size_t)group_index(argv[i + 1]) : i;
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
