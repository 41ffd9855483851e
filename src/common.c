/* The error record's helper, and joining a table's names. */
#include "common.h"

#include <stdarg.h>
#include <stdio.h>

int bn_fail(bn_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
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
