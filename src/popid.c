/* The population identifier; see popid.h. */
#include "popid.h"

#include <stdio.h>

size_t pop_describe(const pop_spec *spec, char *buf, size_t cap)
{
    size_t len = 0;
#define PUT(...)                                                            \
    do {                                                                    \
        if (len < cap)                                                      \
            len += (size_t)snprintf(buf + len, cap - len, __VA_ARGS__);     \
    } while (0)
    PUT("bnstudy population 1\nrows %zu\nseed %llu\n", spec->n_rows,
        (unsigned long long)spec->seed);
    for (size_t j = 0; j < spec->n_features; j++) {
        const pop_feature *f = &spec->features[j];
        PUT("feature %s %.17g %.17g %.17g\n", f->name, f->mean, f->sd,
            f->rho);
    }
#undef PUT
    return len < cap ? len : cap - 1;
}

uint64_t pop_fnv1a64(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

void pop_id(const pop_spec *spec, char out[17])
{
    /* 64 features of 31-character names and three %.17g numbers fit. */
    char buf[8192];
    size_t len = pop_describe(spec, buf, sizeof buf);
    snprintf(out, 17, "%016llx",
             (unsigned long long)pop_fnv1a64(buf, len));
}
