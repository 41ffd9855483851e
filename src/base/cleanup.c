/* The temporaries a signal removes; see cleanup.h. */
#include "base/cleanup.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Written before a slot is marked in use and read only then, by the
 * handler, which calls nothing but unlink, rmdir, signal and raise (all
 * async-signal-safe). */
static char paths[CLEANUP_MAX][BN_PATH_MAX];
static volatile sig_atomic_t in_use[CLEANUP_MAX], is_dir[CLEANUP_MAX];
static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_SIGNALS (sizeof signals / sizeof *signals)
static int installed;

static void on_signal(int sig)
{
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < CLEANUP_MAX; i++)
            if (in_use[i] && is_dir[i] == pass) {
                if (pass)
                    rmdir(paths[i]);
                else
                    unlink(paths[i]);
            }
    signal(sig, SIG_DFL);
    raise(sig);
}

int cleanup_remember(const char *path, int dir)
{
    if (!installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < N_SIGNALS; i++)
            sigaddset(&sa.sa_mask, signals[i]);
        for (size_t i = 0; i < N_SIGNALS; i++)
            sigaction(signals[i], &sa, NULL);
        installed = 1;
    }
    if (strlen(path) >= BN_PATH_MAX)
        return -1;
    for (int i = 0; i < CLEANUP_MAX; i++)
        if (!in_use[i]) {
            memcpy(paths[i], path, strlen(path) + 1);
            is_dir[i] = dir != 0;
            in_use[i] = 1;
            return i;
        }
    return -1;
}

void cleanup_forget(int handle)
{
    if (handle >= 0 && handle < CLEANUP_MAX)
        in_use[handle] = 0;
}

void cleanup_hold(sigset_t *saved)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < N_SIGNALS; i++)
        sigaddset(&set, signals[i]);
    pthread_sigmask(SIG_BLOCK, &set, saved);
}

void cleanup_release(const sigset_t *saved)
{
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}
