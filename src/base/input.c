/* Bounded reads of every input, and the reading budget; see input.h. */
#include "base/input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- sizes ---- */

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

const char *input_size_about(double b, char buf[32])
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4)
        b /= 1024, u++;
    snprintf(buf, 32, u ? "%.3g %s" : "%.0f %s", b, unit[u]);
    return buf;
}

/* ---- the budget ---- */

static struct {
    size_t limit, held;
    const char *option;
} budget = {SIZE_MAX, 0, NULL};

void input_budget_set(size_t limit, const char *option)
{
    budget.limit = limit;
    budget.held = 0;
    budget.option = option;
}

size_t input_held(void) { return budget.held; }

static size_t budget_left(void)
{
    return budget.held < budget.limit ? budget.limit - budget.held : 0;
}

/* " (--max-memory raises it)", or nothing. */
static const char *raises(char buf[64])
{
    buf[0] = '\0';
    if (budget.option)
        snprintf(buf, 64, " (%s raises it)", budget.option);
    return buf;
}

int input_charge(const char *path, size_t bytes, const char *what,
                 bn_error *err)
{
    if (bytes <= budget_left()) {
        budget.held += bytes;
        return 0;
    }
    char a[32], b[32], c[32], opt[64];
    if (budget.held == 0)
        return bn_fail(err, "%s: %s would hold about %s, more than the "
                            "limit of %s%s",
                       path, what, input_size_about((double)bytes, a),
                       input_size_text(budget.limit, c), raises(opt));
    return bn_fail(err, "%s: %s would hold about %s beside the %s the "
                        "inputs hold already, more than the limit of %s%s",
                   path, what, input_size_about((double)bytes, a),
                   input_size_about((double)budget.held, b),
                   input_size_text(budget.limit, c), raises(opt));
}

void input_release(size_t bytes)
{
    budget.held = bytes < budget.held ? budget.held - bytes : 0;
}

/* ---- opening ---- */

/* path opened for reading into *fd, a directory refused, and a regular
 * file's size against max (the file's limit) and the budget before a
 * byte is read; *size its size (0 when not a regular file). */
static int open_bounded(const char *path, size_t max, int *fd,
                        size_t *size, bn_error *err)
{
    char a[32], b[32];
    *size = 0;
    do
        *fd = open(path, O_RDONLY);
    while (*fd < 0 && errno == EINTR);
    if (*fd < 0)
        return bn_fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(*fd, &st) != 0)
        memset(&st, 0, sizeof st);
    int rc = 0;
    if (S_ISDIR(st.st_mode))
        rc = bn_fail(err, "%s: is a directory, not a file", path);
    else if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max)
        rc = bn_fail(err, "%s: a file of %s, larger than the limit of %s",
                     path, input_size_about((double)st.st_size, a),
                     input_size_text(max, b));
    else if (S_ISREG(st.st_mode))
        *size = (size_t)st.st_size;
    if (rc != 0) {
        close(*fd);
        *fd = -1;
    }
    return rc;
}

/* The line of byte i of text (1 for the first). */
static size_t line_of(const char *text, size_t i)
{
    size_t line = 1;
    for (size_t k = 0; k < i; k++)
        line += text[k] == '\n';
    return line;
}

/* More than the file's limit (over_max), or than the budget leaves
 * beside what other inputs hold (own: the bytes this read holds). */
static int too_large(const char *path, size_t max, int over_max, size_t own,
                     bn_error *err)
{
    char a[32], c[32], opt[64];
    size_t others = budget.held > own ? budget.held - own : 0;
    if (over_max)
        return bn_fail(err, "%s: larger than the limit of %s", path,
                       input_size_text(max, a));
    if (others == 0)
        return bn_fail(err, "%s: larger than the limit of %s%s", path,
                       input_size_text(budget.limit, a), raises(opt));
    return bn_fail(err, "%s: larger than the limit of %s, with the %s the "
                        "inputs read before hold%s",
                   path, input_size_text(budget.limit, a),
                   input_size_about((double)others, c), raises(opt));
}

/* ---- whole files ---- */

/* Room for more bytes in *buf (cap of them, n used, all held by the
 * budget): doubled, within max + 2 bytes and what the budget leaves. */
static int grow(const char *path, char **buf, size_t *cap, size_t n,
                size_t max, bn_error *err)
{
    if (*cap - n >= 2)
        return 0;
    size_t most = max > SIZE_MAX - 2 ? SIZE_MAX : max + 2;
    if (most - *cap > budget_left())
        most = *cap + budget_left();
    size_t ncap = *cap > most / 2 ? most : 2 * *cap;
    if (ncap <= *cap)
        return too_large(path, max, 0, *cap, err);
    char *nb = realloc(*buf, ncap);
    if (!nb)
        return bn_fail(err, "%s: out of memory", path);
    budget.held += ncap - *cap;
    *buf = nb;
    *cap = ncap;
    return 0;
}

/* fd's bytes into *buf until the end. */
static int read_all(const char *path, int fd, size_t max, int want_text,
                    char **buf, size_t *cap, size_t *n, bn_error *err)
{
    for (;;) {
        if (grow(path, buf, cap, *n, max, err) != 0)
            return -1;
        ssize_t got = read(fd, *buf + *n, *cap - *n - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return bn_fail(err, "%s: read error: %s", path, strerror(errno));
        if (got == 0)
            return 0;
        const char *nul = want_text ? memchr(*buf + *n, '\0', (size_t)got)
                                    : NULL;
        if (nul)
            return bn_fail(err, "%s:%zu: a NUL byte: not a text file", path,
                           line_of(*buf, (size_t)(nul - *buf)));
        *n += (size_t)got;
        if (*n > max)
            return too_large(path, max, 1, *cap, err);
    }
}

int input_read(const char *path, size_t max, int want_text, char **text,
               size_t *len, bn_error *err)
{
    *text = NULL;
    *len = 0;
    int fd;
    size_t size;
    if (open_bounded(path, max, &fd, &size, err) != 0)
        return -1;
    /* A regular file says how big it is; anything else is read until it
     * ends or passes the limit. */
    size_t cap = size ? size + 1 : 65536;
    if (cap - 2 > max)
        cap = max + 2;
    char *buf = NULL;
    size_t n = 0;
    int rc = -1;
    if (input_charge(path, cap, size ? "reading it" : "reading it so far",
                     err) != 0)
        goto done;
    if (!(buf = malloc(cap))) {
        input_release(cap);
        bn_fail(err, "%s: out of memory", path);
        goto done;
    }
    if (read_all(path, fd, max, want_text, &buf, &cap, &n, err) != 0) {
        free(buf);
        input_release(cap);
        goto done;
    }
    buf[n] = '\0';
    /* Only what was read stays held (a shrink that fails is out of
     * memory like any other allocation: the budget counts the bytes). */
    char *fit = n + 1 < cap ? realloc(buf, n + 1) : buf;
    if (!fit) {
        free(buf);
        input_release(cap);
        bn_fail(err, "%s: out of memory", path);
        goto done;
    }
    input_release(cap - (n + 1));
    buf = fit;
    *text = buf;
    *len = n;
    rc = 0;
done:
    close(fd);
    return rc;
}

void input_free(char *text, size_t len)
{
    if (!text)
        return;
    free(text);
    input_release(len + 1);
}

/* ---- a line at a time ---- */

int input_lines_open(input_lines *r, const char *path, size_t max,
                     size_t max_line, bn_error *err)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
    snprintf(r->path, sizeof r->path, "%s", path);
    size_t size;
    if (open_bounded(path, max, &r->fd, &size, err) != 0)
        return -1;
    r->max = max;
    r->max_line = max_line;
    if (input_charge(path, 4096, "its line buffer", err) != 0) {
        input_lines_close(r);
        return -1;
    }
    if (!(r->buf = malloc(4096))) {
        input_release(4096);
        input_lines_close(r);
        return bn_fail(err, "%s: out of memory", path);
    }
    r->cap = 4096;
    return 0;
}

static int long_line(const input_lines *r, bn_error *err)
{
    char a[32];
    return bn_fail(err, "%s:%zu: a line longer than the limit of %s", r->path,
                   r->line + 1, input_size_text(r->max_line, a));
}

/* More of the file into r->buf after what is not yet returned. */
static int fill(input_lines *r, bn_error *err)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    if (r->end + 1 >= r->cap) {
        if (r->cap > r->max_line + 1)
            return long_line(r, err);
        size_t ncap = 2 * r->cap;
        if (input_charge(r->path, r->cap, "its line buffer", err) != 0)
            return -1;
        char *nb = realloc(r->buf, ncap);
        if (!nb) {
            input_release(r->cap);
            return bn_fail(err, "%s: out of memory", r->path);
        }
        r->buf = nb;
        r->cap = ncap;
    }
    ssize_t got;
    do
        got = read(r->fd, r->buf + r->end, r->cap - r->end - 1);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return bn_fail(err, "%s: cannot read: %s", r->path, strerror(errno));
    if (got == 0) {
        r->eof = 1;
        return 0;
    }
    const char *nul = memchr(r->buf + r->end, '\0', (size_t)got);
    if (nul)
        return bn_fail(err, "%s:%zu: a NUL byte: not a text file", r->path,
                       r->line + line_of(r->buf, (size_t)(nul - r->buf)));
    r->end += (size_t)got;
    r->got += (size_t)got;
    if (r->got > r->max)
        return too_large(r->path, r->max, 1, r->cap, err);
    return 0;
}

int input_lines_next(input_lines *r, char **line, size_t *len, bn_error *err)
{
    for (;;) {
        char *nl = memchr(r->buf + r->start, '\n', r->end - r->start);
        if (nl) {
            *line = r->buf + r->start;
            *len = (size_t)(nl - *line);
            if (*len > r->max_line)
                return long_line(r, err);
            *nl = '\0';
            r->start += *len + 1;
            r->line++;
            return 1;
        }
        if (r->eof)
            return r->start == r->end
                       ? 0
                       : bn_fail(err, "%s line %zu: the file ends inside "
                                      "the line",
                                 r->path, r->line + 1);
        if (fill(r, err) != 0)
            return -1;
    }
}

void input_lines_close(input_lines *r)
{
    if (r->fd >= 0)
        close(r->fd);
    if (r->buf)
        input_release(r->cap);
    free(r->buf);
    r->fd = -1;
    r->buf = NULL;
}
