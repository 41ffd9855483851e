/*
 * The sweep: every configuration of an experiment file's product, run on
 * one population, and the files that record them in DIR/<stem>/: those
 * `[experiment] outputs` names (out.h's file table: summary.tsv,
 * features.tsv, table.md and manifest.tsv, and with many seeds the
 * summaries across them, dist.h). Configurations are
 * independent and their results are stored by index, so the files are the
 * same bytes however many threads ran them and in whatever order.
 */
#ifndef BN_SWEEP_H
#define BN_SWEEP_H

#include "common.h"
#include "exp.h"
#include "out.h"

typedef struct {
    const char *out_dir;
    char *const *sets; /* the --set overrides, recorded in the manifest */
    size_t n_sets;
    int progress;      /* report progress on stderr after a second */
    unsigned jobs;     /* threads; 0 or 1 runs in this thread */
    const out_inputs *inputs; /* files no output may replace, or NULL */
    /* Called once the population exists (NULL: not called). */
    void (*on_population)(const pop_t *pop);
} sweep_options;

int sweep_run(const exp_t *e, const sweep_options *opt, bn_error *err);

/* SHA-256 of a file as 64 hex digits. */
int sweep_sha256_file(const char *path, char hex[65], bn_error *err);

#endif
