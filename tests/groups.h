/*
 * The test groups, one per file. Each runs its tests through
 * cmocka_run_group_tests_name, stores how many tests it has in *ntests and
 * returns how many failed. A new group is one file here and one line in
 * main.c's table.
 */
#ifndef BN_TESTS_GROUPS_H
#define BN_TESTS_GROUPS_H

#include <stddef.h>

int test_pcg32_run(size_t *ntests);
int test_pop_run(size_t *ntests);
int test_bn_run(size_t *ntests);
int test_run_run(size_t *ntests);
int test_cli_run(size_t *ntests);
int test_study_run(size_t *ntests);
int test_shuffles_run(size_t *ntests);
int test_tables_run(size_t *ntests);
int test_popfile_run(size_t *ntests);
int test_diag_run(size_t *ntests);
int test_net_run(size_t *ntests);
int test_layers_run(size_t *ntests);
int test_classifier_run(size_t *ntests);
int test_convpop_run(size_t *ntests);
int test_drift_run(size_t *ntests);
int test_collapse_run(size_t *ntests);
int test_causes_run(size_t *ntests);
int test_initial_run(size_t *ntests);
int test_devices_run(size_t *ntests);
int test_num_run(size_t *ntests);
int test_provenance_run(size_t *ntests);
int test_filepop_run(size_t *ntests);
int test_diagnose_run(size_t *ntests);
int test_verdict_run(size_t *ntests);
int test_dumpdir_run(size_t *ntests);
int test_web_run(size_t *ntests);
int test_bench_run(size_t *ntests);
int test_input_run(size_t *ntests);
int test_batchpass_run(size_t *ntests);
int test_fmt_run(size_t *ntests);

#endif
