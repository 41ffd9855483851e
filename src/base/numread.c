/* Numbers read back exactly as "%.17g" wrote them; see numread.h. */
#include "base/numread.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"

int numread_g17(const char *s, unsigned allow, double *v)
{
    *v = NAN;
    if (strcmp(s, "-") == 0)
        return allow & NUMREAD_DASH ? 1 : -1;
    if (strcmp(s, "inf") == 0) {
        if (!(allow & NUMREAD_INF))
            return -1;
        *v = INFINITY;
        return 0;
    }
    /* Only the characters "%.17g" prints for a finite double: strtod
     * would take "nan", "infinity" and hex, and the round trip below
     * already refuses what it reads differently. */
    size_t n = strspn(s, "0123456789.e+-");
    if (n == 0 || s[n] != '\0' || n >= FMT_G17_MAX)
        return -1;
    char *end;
    double x = strtod(s, &end);
    char again[FMT_G17_MAX];
    /* fmt_g17, not snprintf: the same characters (fmt.h), and printf's
     * exact conversion was most of what `bnstudy plot` spends reading
     * the tables. */
    if (*end != '\0' || !isfinite(x) || fmt_g17(again, x) != n ||
        memcmp(again, s, n) != 0)
        return -1;
    *v = x;
    return 0;
}
