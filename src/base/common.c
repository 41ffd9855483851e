/* The error record's helper, joining a table's names, control bytes, and
 * the allocation of large arrays read at random. */
/* madvise and MADV_HUGEPAGE are not in POSIX. */
#define _DEFAULT_SOURCE
#include "base/common.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#endif

int bn_fail(bn_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bn_vfail(err, fmt, ap);
    va_end(ap);
    return -1;
}

int bn_vfail(bn_error *err, const char *fmt, va_list ap)
{
    if (err) {
        int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        if (n < 0 || (size_t)n >= sizeof err->msg) {
#ifdef BN_STRICT
            abort(); /* tests and fuzzing: a message that does not fit */
#else
            static const char cut[] = " [message cut: a bnstudy bug]";
            memcpy(err->msg + sizeof err->msg - sizeof cut, cut, sizeof cut);
#endif
        }
    }
    return -1;
}

const char *bn_join(char *buf, size_t cap, const char *sep,
                    const char *last_sep, const char *(*name)(int i))
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; name(i) && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s",
                                i == 0 ? "" : name(i + 1) ? sep : last_sep,
                                name(i));
    return buf;
}

const char *bn_control_char(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return s;
    return NULL;
}

const char *bn_control_name(char c, char buf[16])
{
    if (c == '\t')
        return "a tab";
    if (c == '\n')
        return "a newline";
    if (c == '\r')
        return "a carriage return";
    snprintf(buf, 16, "byte 0x%02x", (unsigned)(unsigned char)c);
    return buf;
}

void *bn_alloc_large(size_t bytes)
{
    /* A fault-injection build counts this allocation as malloc. */
#if defined(__linux__) && !defined(__EMSCRIPTEN__) && \
    defined(MADV_HUGEPAGE) && !defined(BN_FAULT)
    const size_t huge = (size_t)2 << 20;
    if (bytes >= huge) {
        void *p;
        if (posix_memalign(&p, huge, bytes) != 0)
            return NULL;
        (void)madvise(p, bytes, MADV_HUGEPAGE);
        return p;
    }
#endif
    return malloc(bytes ? bytes : 1);
}

typedef struct {
    const char *s;
    size_t at;
} repeat_entry;

static int cmp_repeat(const void *a, const void *b)
{
    const repeat_entry *x = a, *y = b;
    int c = strcmp(x->s, y->s);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

int bn_find_repeat(const char *const *s, size_t n, size_t *first,
                   size_t *again)
{
    repeat_entry *e = malloc((n ? n : 1) * sizeof *e);
    if (!e)
        return -1;
    for (size_t i = 0; i < n; i++)
        e[i] = (repeat_entry){s[i], i};
    /* Sorted by (string, index), a string's first use comes first and its
     * first repeat right after it; of those, the earliest is reported. */
    qsort(e, n, sizeof *e, cmp_repeat);
    *again = SIZE_MAX;
    for (size_t k = 1; k < n; k++)
        if (strcmp(e[k].s, e[k - 1].s) == 0 && e[k].at < *again &&
            (k == 1 || strcmp(e[k - 1].s, e[k - 2].s) != 0)) {
            *first = e[k - 1].at;
            *again = e[k].at;
        }
    free(e);
    return *again != SIZE_MAX;
}
