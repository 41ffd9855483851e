/* The counters of fault.h: empty unless built with -DBN_FAULT. */
#include "base/fault.h"

#ifdef BN_FAULT
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#undef malloc
#undef calloc
#undef realloc

static atomic_ulong n_alloc, n_io;
static unsigned long fail_alloc, fail_io, kill_io;
static int fail_errno = ENOSPC;
static const char *count_path;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static unsigned long env_count(const char *name)
{
    const char *s = getenv(name);
    return s ? strtoul(s, NULL, 10) : 0;
}

static void report(void)
{
    FILE *fp = fopen(count_path, "w");
    if (fp) {
        fprintf(fp, "alloc %lu\nio %lu\n", (unsigned long)n_alloc,
                (unsigned long)n_io);
        fclose(fp);
    }
}

static void init(void)
{
    fail_alloc = env_count("BN_FAULT_ALLOC");
    fail_io = env_count("BN_FAULT_IO");
    kill_io = env_count("BN_FAULT_KILL");
    if (env_count("BN_FAULT_ERRNO"))
        fail_errno = (int)env_count("BN_FAULT_ERRNO");
    count_path = getenv("BN_FAULT_COUNT");
    if (count_path)
        atexit(report);
}

/* Whether this allocation is the one to fail. */
static int alloc_fails(void)
{
    pthread_once(&once, init);
    return atomic_fetch_add(&n_alloc, 1) + 1 == fail_alloc;
}

void *bn_fault_malloc(size_t n)
{
    return alloc_fails() ? NULL : malloc(n);
}

void *bn_fault_calloc(size_t n, size_t size)
{
    return alloc_fails() ? NULL : calloc(n, size);
}

void *bn_fault_realloc(void *p, size_t n)
{
    return alloc_fails() ? NULL : realloc(p, n);
}

int bn_fault_no_exchange(void)
{
    return getenv("BN_FAULT_NO_EXCHANGE") != NULL;
}

int bn_fault_io(void)
{
    pthread_once(&once, init);
    unsigned long k = atomic_fetch_add(&n_io, 1) + 1;
    if (k == kill_io)
        raise(SIGKILL);
    if (k == fail_io) {
        errno = fail_errno;
        return -1;
    }
    return 0;
}
#else
/* ISO C wants something in every translation unit. */
typedef int bn_fault_unused;
#endif
