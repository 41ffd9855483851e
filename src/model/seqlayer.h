/*
 * The batch-norm layer on padded sequences (docs/definitions.md,
 * "Padded sequences"): the population's rows, L consecutive rows a
 * sequence, each sequence i real at positions 0..l_i - 1 and padding
 * (the value 0) after, l_i uniform on min_length..L from PCG32(the run's
 * seed, PCG32_INITSEQ_SEQ_LENGTHS); or, with [sequence] file, real where
 * the file says: its l_i (one column) or its 0/1 mask (L columns, the
 * real positions anywhere in the sequence). A batch is B whole sequences, cut
 * from a shuffle of the sequences (PCG32 stream 2 from the run's seed,
 * as `shuffled` shuffles rows). The mask policy says which positions a
 * batch's statistics are taken over: the real ones (real), all of them
 * (padded: nn.BatchNorm1d on (N, C, L)), or the two in turn (mismatch:
 * training normalises over the real positions while the buffers average
 * every one). Only real positions' outputs are scored, against the real
 * positions' truth. No GSL: the web page shares it.
 */
#ifndef BN_SEQLAYER_H
#define BN_SEQLAYER_H

#include <stddef.h>
#include <stdint.h>

#include "base/common.h"
#include "model/config.h"
#include "pop/pop.h"

typedef enum { SEQ_MASK_REAL, SEQ_MASK_PADDED, SEQ_MASK_MISMATCH } seq_mask;

/* "real", "padded", "mismatch" by value; NULL past the last. */
const char *seq_mask_name(int m);
/* The n lengths of sequences of at most len positions, at least min. */
void seq_lengths(uint64_t seed, size_t n, size_t len, size_t min,
                 size_t *out);
/* The checks of [sequence]'s settings against the population; blame as
 * run_check's. */
int seq_check(const run_config *cfg, const pop_t *pop, int *blame,
              bn_error *err);
/* Train on pop's sequences and fill the layer's scores (res's arrays
 * allocated here, as layer_run's). */
int seq_run(const pop_t *pop, const run_config *cfg, run_result *res,
            bn_error *err);

#endif
