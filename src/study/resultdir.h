/*
 * A result set replaced as a whole. A sweep writes its files into a fresh
 * temporary directory beside the target, OUT/.STEM.tmp-XXXXXX, and swaps
 * it in at the end (renameat2's RENAME_EXCHANGE where the system has it,
 * two renames otherwise), so OUT/STEM holds the old complete set or the
 * new one, never a mix, and no file of an earlier run survives beside new
 * ones. While it works, a lock (OUT/.STEM.lock, an fcntl lock the system
 * drops when the process dies) refuses a second sweep into the same
 * target, naming the process that holds it. SIGINT, SIGTERM and SIGHUP
 * remove the temporary directory before the process dies of them
 * (cleanup.h); after
 * SIGKILL the next sweep into the target removes what was left (and puts
 * back an old set that two renames had moved aside).
 *
 * The target may only be replaced if it is absent or holds nothing but
 * files of the output table (out.h), or a set of an older version beside
 * its manifest: anything else in it would be deleted, so it is refused
 * instead, and so is a target that holds one of the sweep's own inputs
 * (the swap would delete it). A new set that is the old one, byte for
 * byte but for the manifest's build rows, leaves the old one in place,
 * manifest and all. One result directory per process.
 */
#ifndef BN_RESULTDIR_H
#define BN_RESULTDIR_H

#include "base/cleanup.h"
#include "base/common.h"
#include "study/out.h"

typedef struct {
    char out[BN_PATH_MAX];    /* OUT */
    char target[BN_PATH_MAX]; /* OUT/STEM */
    char tmp[BN_PATH_MAX];    /* OUT/.STEM.tmp-XXXXXX, once made */
    char lock[BN_PATH_MAX];   /* OUT/.STEM.lock */
    char stem[64];
    int lock_fd;
    int made;                 /* how many directories of OUT were made */
    char made_dirs[BN_PATH_MAX]; /* the first of them, to remove on failure */
    int cleanup[CLEANUP_MAX]; /* cleanup.h's handles: tmp, lock, files */
    int unchanged;            /* commit kept the target: the same set */
} resultdir;

/* The longest name of a file a result set can hold. */
#define RESULTDIR_MAX_FILE 32

/* Make OUT (and its parents), take the lock, clean what an earlier killed
 * sweep left, check the target against the inputs (ins may be NULL), make
 * the temporary directory and arm the signal handlers. On failure nothing
 * is left but what was there before. */
int resultdir_begin(resultdir *rd, const char *out, const char *stem,
                    const out_inputs *ins, bn_error *err);
/* The path of file name in the temporary directory. */
int resultdir_path(const resultdir *rd, const char *name, char *buf,
                   size_t cap, bn_error *err);
/* Swap the temporary directory in, remove the old set and the lock. When
 * the new set is the target's, byte for byte but for the manifest's
 * build rows, the target is kept as it is instead (rd->unchanged), so that
 * results that did not change keep every byte, the manifest's included. */
int resultdir_commit(resultdir *rd, bn_error *err);
/* Remove the temporary directory, the lock and the directories begin
 * made; safe after a failed begin or commit. */
void resultdir_abort(resultdir *rd);

#endif
