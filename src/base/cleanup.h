/*
 * What an interrupted process must not leave behind. Temporary files and
 * directories are registered here while they exist; SIGINT, SIGTERM and
 * SIGHUP remove them (files first, then directories) before the process
 * dies of the signal as it would have. SIGKILL cannot be caught: for that
 * the result directory's next sweep cleans up (resultdir.h).
 */
#ifndef BN_CLEANUP_H
#define BN_CLEANUP_H

#include <signal.h>

#include "base/common.h"

/* Paths registered at once, at most: a result set's files, its
 * directory and its lock, or run's two output files. */
#define CLEANUP_MAX 16

/* Register path (a directory when is_dir) for removal on a signal; a
 * handle for cleanup_forget, or -1 when CLEANUP_MAX are registered or the
 * path is longer than BN_PATH_MAX. */
int cleanup_remember(const char *path, int is_dir);
/* The path is gone or kept: a signal no longer touches it. */
void cleanup_forget(int handle);
/* Hold the signals back (while a set is swapped in), and let them come. */
void cleanup_hold(sigset_t *saved);
void cleanup_release(const sigset_t *saved);

#endif
