/*
 * Growable text: what the writers format rows into, so that a row can be
 * made in one thread and written in another, whole, with one write. A
 * buffer that could not grow remembers it (failed), and everything after
 * is dropped, so a writer checks once at the end instead of at each cell.
 */
#ifndef BN_BUF_H
#define BN_BUF_H

#include <stddef.h>

typedef struct {
    char *p;     /* NUL-terminated when len > 0 */
    size_t len, cap;
    int failed;  /* an allocation failed: the text is incomplete */
} bn_buf;

void buf_printf(bn_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* v as "%.17g" and as "%llu" write it (base/fmt.h), without printf's
 * cost: the cells of every result row. (The settings a sweep writes again
 * on every row are kept as written by exp_manifest.c's key cells.) */
void buf_g17(bn_buf *b, double v);
void buf_uint(bn_buf *b, unsigned long long v);
void buf_puts(bn_buf *b, const char *s);
/* buf_putc's growth, out of line; the common case is inline: a tab or
 * newline between the cells of every row a sweep writes. */
void buf_putc_grow(bn_buf *b, char c);
static inline void buf_putc(bn_buf *b, char c)
{
    if (!b->failed && b->cap - b->len > 1) {
        b->p[b->len++] = c;
        b->p[b->len] = '\0';
        return;
    }
    buf_putc_grow(b, c);
}
void buf_add(bn_buf *b, const void *p, size_t n);
/* s as a JSON string, n bytes of it: quotes, backslashes and control
 * characters escaped, every other byte as it is (UTF-8 stays UTF-8). */
void buf_json_str(bn_buf *b, const char *s, size_t n);
/* n zero bytes, room for a header laid out later. */
void buf_zeros(bn_buf *b, size_t n);
/* Forget the text, keep the memory. */
void buf_clear(bn_buf *b);
void buf_free(bn_buf *b);

#endif
