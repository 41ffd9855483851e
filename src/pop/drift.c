/* The drift profiles of drift.h. */
#include "pop/drift.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A decimal count at s, ending at *end; -1 on anything else. */
static int count_at(const char *s, char **end, size_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, end, 10);
    if (errno || v > 1000000000000ULL)
        return -1;
    *out = (size_t)v;
    return 0;
}

int drift_parse(const char *s, drift_spec *d, bn_error *err)
{
    memset(d, 0, sizeof *d);
    char *end;
    if (strcmp(s, "none") == 0)
        return 0;
    if (strncmp(s, "step:", 5) == 0) {
        d->kind = DRIFT_STEP;
        if (count_at(s + 5, &end, &d->t0) == 0 && *end == '\0')
            return 0;
    } else if (strncmp(s, "ramp:", 5) == 0) {
        d->kind = DRIFT_RAMP;
        if (count_at(s + 5, &end, &d->t0) == 0 && *end == ':' &&
            count_at(end + 1, &end, &d->t1) == 0 && *end == '\0' &&
            d->t1 > d->t0)
            return 0;
    }
    return bn_fail(err, "drift '%s': none, step:T0 or ramp:T0:T1 with "
                        "T0 < T1 (update counts)",
                   s);
}

const char *drift_name(const drift_spec *d, char *buf, size_t cap)
{
    switch (d->kind) {
    case DRIFT_NONE:
        snprintf(buf, cap, "none");
        break;
    case DRIFT_STEP:
        snprintf(buf, cap, "step:%zu", d->t0);
        break;
    case DRIFT_RAMP:
        snprintf(buf, cap, "ramp:%zu:%zu", d->t0, d->t1);
        break;
    }
    return buf;
}

double drift_fraction(const drift_spec *d, size_t t)
{
    switch (d->kind) {
    case DRIFT_NONE:
        return 0.0;
    case DRIFT_STEP:
        return t > d->t0 ? 1.0 : 0.0;
    case DRIFT_RAMP:
        if (t <= d->t0)
            return 0.0;
        if (t >= d->t1)
            return 1.0;
        return (double)(t - d->t0) / (double)(d->t1 - d->t0);
    }
    return 0.0;
}
