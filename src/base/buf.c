/* Growable text buffers; see buf.h. */
#include "base/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/common.h"
#include "base/fmt.h"

/* Room for n more bytes and a NUL: the common case inline (every cell
 * of every row asks), the growth out of line. */
static int grow(bn_buf *b, size_t n);

static inline int reserve(bn_buf *b, size_t n)
{
    if (!b->failed && b->cap - b->len > n)
        return 0;
    return grow(b, n);
}

static int grow(bn_buf *b, size_t n)
{
    if (b->failed)
        return -1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len <= n) {
        if (cap > ((size_t)-1) / 2) {
            b->failed = 1;
            return -1;
        }
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void buf_add(bn_buf *b, const void *p, size_t n)
{
    if (n == 0 || reserve(b, n) != 0)
        return;
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void buf_zeros(bn_buf *b, size_t n)
{
    if (reserve(b, n) != 0)
        return;
    memset(b->p + b->len, 0, n + 1);
    b->len += n;
}

void buf_puts(bn_buf *b, const char *s) { buf_add(b, s, strlen(s)); }

void buf_putc_grow(bn_buf *b, char c)
{
    if (reserve(b, 1) == 0) {
        b->p[b->len++] = c;
        b->p[b->len] = '\0';
    }
}

void buf_printf(bn_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[64];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        buf_add(b, small, (size_t)n);
        return;
    }
    if (reserve(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void buf_g17(bn_buf *b, double v)
{
    if (reserve(b, FMT_G17_MAX) == 0)
        b->len += fmt_g17(b->p + b->len, v);
}

void buf_uint(bn_buf *b, unsigned long long v)
{
    char s[24];
    size_t i = sizeof s;
    do
        s[--i] = (char)('0' + v % 10);
    while (v /= 10);
    buf_add(b, s + i, sizeof s - i);
}

void buf_clear(bn_buf *b)
{
    b->len = 0;
    if (b->p)
        b->p[0] = '\0';
}

void buf_free(bn_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

void buf_json_str(bn_buf *b, const char *s, size_t n)
{
    buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            buf_printf(b, "\\u%04x", c);
        else
            buf_putc(b, (char)c);
    }
    buf_putc(b, '"');
}
