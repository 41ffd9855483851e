/*
 * What the fuzz targets that drive a whole command share: a scratch
 * directory on a RAM file system where the input's files are written, a
 * command run with its standard output thrown away and its standard
 * error caught, and the rule every command keeps whatever its input:
 * exit 0, 1 (a claim that fails) or 2, and a refusal (2) says why on
 * exactly one line. Included by one target each, so its functions are
 * static.
 */
#ifndef BN_FUZZ_RUN_H
#define BN_FUZZ_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

/* The scratch directory, made once: /dev/shm when there is one. */
static inline const char *fuzz_dir(void)
{
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/bnstudy-fuzz.XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(dir))
            abort();
    }
    return dir;
}

/* dir/name, in a buffer of the caller's. */
static inline const char *fuzz_path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", fuzz_dir(), name);
    return buf;
}

static inline void fuzz_write(const char *name, const void *bytes, size_t len)
{
    char path[256];
    FILE *fp = fopen(fuzz_path(path, sizeof path, name), "wb");
    if (!fp || fwrite(bytes, 1, len, fp) != len || fclose(fp) != 0)
        abort();
}

/* The first n pieces of data cut at lines "%%" (each piece keeps the
 * newline that ends it; the last takes the rest; pieces past the end are
 * empty). memmem needs _GNU_SOURCE, defined before the first include. */
static inline void fuzz_split(const unsigned char *data, size_t size, size_t n,
                       const unsigned char **piece, size_t *len)
{
    const unsigned char *p = data, *end = data + size;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *m =
            i + 1 < n ? memmem(p, (size_t)(end - p), "\n%%\n", 4) : NULL;
        piece[i] = p;
        len[i] = (size_t)((m ? m + 1 : end) - p);
        p = m ? m + 4 : end;
    }
}

/* cmd(argc, argv) with stdout thrown away: its status, which must be
 * 0, 1 or 2, and a 2 must come with exactly one line on stderr. The
 * command's stdout and stderr are swapped for files (glibc's are
 * variables), not its descriptors, so that a sanitizer's report still
 * reaches the terminal. The budget is the command line's default, afresh
 * for each input. */
static inline int fuzz_command(int (*cmd)(int, char **), int argc, char **argv)
{
    char err_path[256];
    fuzz_path(err_path, sizeof err_path, "stderr");
    FILE *out = stdout, *err = stderr;
    FILE *null = fopen("/dev/null", "w"), *cap = fopen(err_path, "w");
    if (!null || !cap)
        abort();
    fflush(out);
    fflush(err);
    stdout = null;
    stderr = cap;
    cli_default_budget();
    int rc = cmd(argc, argv);
    stdout = out;
    stderr = err;
    fclose(null);
    fclose(cap);
    if (rc != 0 && rc != 1 && rc != 2)
        abort();
    FILE *fp = fopen(err_path, "rb");
    if (!fp)
        abort();
    /* Notes and warnings ("bnstudy CMD: note: ...") go with a run that
     * goes on; a refusal is the one other line. */
    static char line[4 * BN_ERROR_MAX + 256]; /* escapes take 4 bytes */
    int lines = 0;
    while (fgets(line, sizeof line, fp)) {
        if (!strchr(line, '\n'))
            abort(); /* a line past any message's length, or cut */
        const char *after = strncmp(line, "bnstudy ", 8) == 0
                                ? strstr(line + 8, ": ")
                                : NULL;
        lines += !after || (strncmp(after + 2, "note: ", 6) != 0 &&
                            strncmp(after + 2, "warning: ", 9) != 0);
    }
    fclose(fp);
    if ((rc == 2 && lines != 1) || (rc != 2 && lines != 0))
        abort(); /* a refusal says why, on one line */
    return rc;
}

#endif
