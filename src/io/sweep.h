/*
 * The sweep: every configuration of an experiment file's product, run on
 * one population, and the files that record them in DIR/<stem>/: those
 * `[experiment] outputs` names (out.h's file table: summary.tsv,
 * features.tsv, table.md and manifest.tsv, and with many seeds the
 * summaries across them, dist.h).
 *
 * Before anything runs, the work and the memory are estimated and held
 * against limits (sweep_limits). Configurations run on threads and are
 * written in configuration order as they finish, through a window of a
 * few per thread: a thread that runs ahead waits for the writer, so memory
 * does not grow with the number of configurations, and the files are the
 * same bytes however many threads ran them. The whole result set is
 * replaced at once (resultdir.h).
 *
 * A sweep can be split into shards that run apart (on other machines) and
 * merged into the files the whole sweep writes, byte for byte: the merge
 * reads the shards' rows back (shard.h) and hands them to the same
 * writers in configuration order.
 */
#ifndef BN_SWEEP_H
#define BN_SWEEP_H

#include "base/common.h"
#include "study/exp.h"
#include "study/out.h"

/* What a sweep or a run may take unless told otherwise: work in row
 * passes (epochs x rows x features, summed over the configurations) and
 * the bytes held at once. */
#define SWEEP_MAX_WORK 1e9
#define SWEEP_MAX_MEMORY (2.0 * 1024 * 1024 * 1024)

typedef struct {
    double work;   /* row passes */
    double bytes;  /* the most held at once */
} sweep_limits;

typedef struct {
    const char *out_dir;
    char *const *sets; /* the --set overrides, recorded in the manifest */
    size_t n_sets;
    int progress;      /* progress on stderr (when it is a terminal) */
    unsigned jobs;     /* threads; 0 or 1 runs in this thread */
    sweep_limits limits;
    /* Files the sweep reads, which its result directory may not hold
     * (the swap would delete them), or NULL. */
    const out_inputs *inputs;
    /* Called once the population exists (NULL: not called). */
    void (*on_population)(const pop_t *pop);
    /* A shard (shards > 0): configurations shard - 1, shard - 1 + shards,
     * ... only, into DIR/<stem>.shard-K-of-N/, as their summary.tsv,
     * features.tsv and curve.tsv rows and a manifest that says which
     * shard it is (shard.h); the files made across configurations are
     * left to the merge. */
    unsigned shard, shards;
    /* A merge (n_merge > 0): the files of the whole sweep made from the
     * shard directories merge[0..n_merge-1] instead of from runs. */
    char *const *merge;
    size_t n_merge;
} sweep_options;

/* The estimate of a sweep of e on jobs threads (files: whether it writes
 * result files), its parts for the message. */
typedef struct {
    double work, bytes;
    double population, per_thread, writing; /* bytes */
    unsigned threads;
    size_t window; /* configurations run ahead of the writer, in all */
} sweep_estimate;

void sweep_estimate_of(const exp_t *e, unsigned jobs, int files,
                       sweep_estimate *est);
/* 0, or -1 with a message giving the estimate, the limit and the option
 * that raises it. what names the command ("sweep", "run"). */
int sweep_check_limits(const exp_t *e, const sweep_estimate *est,
                       const sweep_limits *lim, const char *what,
                       bn_error *err);

int sweep_run(const exp_t *e, const sweep_options *opt, bn_error *err);

#endif
