/*
 * Fault injection, as SQLite tests itself: a build with -DBN_FAULT counts
 * every allocation bnstudy makes and every change it makes to the file
 * system, and fails the k-th one when the environment asks:
 *   BN_FAULT_ALLOC=k   the k-th malloc, calloc or realloc returns NULL
 *   BN_FAULT_IO=k      the k-th file-system change (mkdir, create, write,
 *                      fsync, rename, lock) fails with BN_FAULT_ERRNO
 *                      (default ENOSPC, a full disk)
 *   BN_FAULT_KILL=k    the process gets SIGKILL at the k-th change instead
 *   BN_FAULT_NO_EXCHANGE=1  a result set is swapped in by two renames, as
 *                      where the system has no RENAME_EXCHANGE
 * and BN_FAULT_COUNT=FILE writes how many of each there were at exit, so a
 * test can walk k over all of them (tests/faults.sh). In other builds
 * bn_fault_io() is 0 and allocation is the C library's.
 */
#ifndef BN_FAULT_H
#define BN_FAULT_H

#include <stddef.h>
#include <stdlib.h>

#ifdef BN_FAULT
void *bn_fault_malloc(size_t n);
void *bn_fault_calloc(size_t n, size_t size);
void *bn_fault_realloc(void *p, size_t n);
/* 0, or -1 with errno set: the caller fails as the change would have. */
int bn_fault_io(void);
int bn_fault_no_exchange(void);
#define malloc(n) bn_fault_malloc(n)
#define calloc(n, s) bn_fault_calloc(n, s)
#define realloc(p, n) bn_fault_realloc(p, n)
#else
#define bn_fault_io() 0
#define bn_fault_no_exchange() 0
#endif

#endif
