/* Bounded whole-input reads; see input.h. */
#include "base/input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *input_size_text(size_t n, char buf[32])
{
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(buf, 32, "%zu MiB", n >> 20);
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(buf, 32, "%zu KiB", n >> 10);
    else
        snprintf(buf, 32, "%zu bytes", n);
    return buf;
}

/* The line of byte i of text (1 for the first). */
static size_t line_of(const char *text, size_t i)
{
    size_t line = 1;
    for (size_t k = 0; k < i; k++)
        line += text[k] == '\n';
    return line;
}

int input_read(const char *path, size_t max, int want_text, char **text,
               size_t *len, bn_error *err)
{
    *text = NULL;
    *len = 0;
    int fd;
    do
        fd = open(path, O_RDONLY);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return bn_fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    char size[32];
    if (fstat(fd, &st) != 0)
        memset(&st, 0, sizeof st);
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return bn_fail(err, "%s: is a directory, not a file", path);
    }
    if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max) {
        close(fd);
        return bn_fail(err, "%s: larger than the limit of %s", path,
                       input_size_text(max, size));
    }
    /* A regular file says how big it is; anything else is read until it
     * ends or passes the limit. */
    size_t cap = 65536;
    if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size < cap)
        cap = (size_t)st.st_size + 1;
    char *buf = malloc(cap);
    size_t n = 0;
    int rc = -1;
    if (!buf) {
        bn_fail(err, "%s: out of memory", path);
        goto done;
    }
    for (;;) {
        if (cap - n < 2) {
            size_t ncap = cap > max / 2 ? max + 2 : 2 * cap;
            char *nb = ncap > cap ? realloc(buf, ncap) : NULL;
            if (!nb) {
                bn_fail(err, "%s: out of memory", path);
                goto done;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t got = read(fd, buf + n, cap - n - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            bn_fail(err, "%s: read error: %s", path, strerror(errno));
            goto done;
        }
        if (got == 0)
            break;
        const char *nul = want_text ? memchr(buf + n, '\0', (size_t)got)
                                    : NULL;
        if (nul) {
            bn_fail(err, "%s:%zu: a NUL byte: not a text file", path,
                    line_of(buf, (size_t)(nul - buf)));
            goto done;
        }
        n += (size_t)got;
        if (n > max) {
            bn_fail(err, "%s: larger than the limit of %s", path,
                    input_size_text(max, size));
            goto done;
        }
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    buf = NULL;
    rc = 0;
done:
    free(buf);
    close(fd);
    return rc;
}
