/*
 * Reading back the shards of a sweep (`sweep --shard K/N`, sweep.h) for
 * `bnstudy merge`. A shard holds configurations K-1, K-1+N, K-1+2N, ...
 * of the product, each as its summary.tsv row (every score the run made,
 * %.17g, which reads back to the same double), its features.tsv rows (the
 * running statistics) and its curve.tsv rows when the experiment writes
 * them, and a manifest: the sweep's own plus a line `shard K/N`.
 *
 * The merge asks for configuration k in order; the reader takes the next
 * rows of shard k mod N, rebuilds the run's result from them and checks
 * that the sweep's writers give those rows back byte for byte, so a shard
 * of another experiment, a damaged line or a row out of place is refused
 * rather than merged. A value edited into another that the writers would
 * also write is caught by the digests: the shard's manifest records the
 * SHA-256 of each file's rows, as they were written, in blocks of
 * configurations (at most SHARD_BLOCKS a file, so a shard of up to that
 * many configurations has a block each and an edit is named at its line),
 * and every block read is held to its digest. What the sweep then writes
 * from the result is what an unsharded sweep writes. Each file is read a
 * line at a time through input.h, bounded and NUL-free.
 */
#ifndef BN_SHARD_H
#define BN_SHARD_H

#include "base/buf.h"
#include "base/common.h"
#include "pop/pop.h"
#include "model/run.h"

/* The most shards one merge takes: it holds up to four files of each
 * open at once. */
#define SHARD_MAX 256

/* The digests of a shard's rows: for each file of rows, the SHA-256 of
 * the rows of each block of configurations, one manifest line a block,
 * `rows_sha256` then `FILE FIRST LAST HEX` (FIRST and LAST the block's
 * first and last configuration, numbered as the whole sweep numbers
 * them). */
#define SHARD_BLOCKS 64
#define SHARD_DIGEST_KEY "rows_sha256"
/* The configurations of a block of a shard of n. */
size_t shard_block_size(size_t n);
/* The longest line of a shard's files the merge reads (no row a sweep
 * writes comes near it), and the most bytes of one file (256 GiB: past
 * any sweep within the limits of configurations and work, and a bound
 * all the same). The merge holds a line of each file, whatever its
 * size. */
#define SHARD_MAX_LINE ((size_t)1 << 20)
#define SHARD_MAX_FILE ((size_t)1 << 38)

typedef struct shard_set_s shard_set;

/* Open the n shard directories dirs[0..n-1] of one sweep: each manifest
 * must be `manifest` (the manifest of the unsharded sweep, as this build
 * writes it; its build.* rows are not compared) plus its shard line, the
 * shards 1/N .. N/N each given once. files is the mask of out.h's file
 * ids to read besides summary.tsv (features.tsv, curve.tsv); models the
 * models the experiment trains. */
int shard_open(shard_set **set, char *const *dirs, size_t n,
               const bn_buf *manifest, unsigned files, unsigned models,
               bn_error *err);
/* Configuration k (the next in order, k = 0, 1, ...) of configuration
 * cfg on population pop: its scores and running statistics into res
 * (which the caller frees with run_result_free) and its curve.tsv rows
 * appended to curve. */
int shard_next(shard_set *set, size_t k, const pop_t *pop,
               const run_config *cfg, run_result *res, bn_buf *curve,
               bn_error *err);
/* After the last configuration: -1 if a shard has rows left. */
int shard_finish(shard_set *set, bn_error *err);
void shard_close(shard_set *set);

#endif
