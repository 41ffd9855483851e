/*
 * fmt.h's %.17g. A finite double is m 2^e with m an integer below 2^53;
 * its 17 significant digits are n = v 10^s rounded to the nearest integer
 * (half to even, as printf rounds), s chosen so that 10^16 <= n < 10^17.
 * For s from 0 to 32 (v from about 1e-16 to 1e17, where nearly every
 * number bnstudy writes falls) that product is m 5^s 2^(e+s), exact in
 * 128 bits, so n, the remainder and so the rounding are exact: the digits
 * are printf's. Everything else (larger and smaller values, subnormals,
 * infinities, NaN) goes to printf itself.
 */
#include "base/fmt.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static size_t by_printf(char *out, double v)
{
    int n = snprintf(out, FMT_G17_MAX, "%.17g", v);
    return n > 0 ? (size_t)n : 0;
}

#if defined(__SIZEOF_INT128__)

__extension__ typedef unsigned __int128 u128;

static const uint64_t POW5[28] = {
    1u, 5u, 25u, 125u, 625u, 3125u, 15625u, 78125u, 390625u, 1953125u,
    9765625u, 48828125u, 244140625u, 1220703125u, 6103515625u,
    30517578125u, 152587890625u, 762939453125u, 3814697265625u,
    19073486328125u, 95367431640625u, 476837158203125u, 2384185791015625u,
    11920928955078125u, 59604644775390625u, 298023223876953125u,
    1490116119384765625u, 7450580596923828125u};

#define TEN16 10000000000000000u
#define TEN17 100000000000000000u

/* m 2^e 10^s rounded to the nearest integer, half to even, for s in
 * [0, 32]; UINT64_MAX when it does not fit in 64 bits. */
static uint64_t scaled(uint64_t m, int e, int s)
{
    u128 p5 = s <= 27 ? (u128)POW5[s] : (u128)POW5[27] * POW5[s - 27];
    u128 p = (u128)m * p5; /* m < 2^53, so p < 2^53 5^32 < 2^128 */
    int t = e + s;
    if (t >= 0) {
        if (t >= 64 || p >> (64 - t) != 0)
            return UINT64_MAX;
        return (uint64_t)(p << t);
    }
    int sh = -t;
    if (sh >= 127)
        return 0; /* below 1: only a sign that s is too small */
    /* r's last bit is the first one shifted out; the rest are shifted out
     * exactly when r shifted back is p. */
    u128 r = p >> (sh - 1), q = r >> 1;
    int above = (r << (sh - 1)) != p;
    if ((r & 1) && (above || (q & 1)))
        q++;
    return q >> 64 ? UINT64_MAX : (uint64_t)q;
}

/* v < 10^8 as eight digits, two at a time. */
static void put8(char *d, uint32_t v)
{
    static const char two[] = "00010203040506070809101112131415161718192021222324"
                              "25262728293031323334353637383940414243444546474849"
                              "50515253545556575859606162636465666768697071727374"
                              "75767778798081828384858687888990919293949596979899";
    uint32_t hi = v / 10000, lo = v % 10000; /* four digits each */
    uint32_t a = hi / 100, b = hi % 100, c = lo / 100, e = lo % 100;
    d[0] = two[2 * a], d[1] = two[2 * a + 1];
    d[2] = two[2 * b], d[3] = two[2 * b + 1];
    d[4] = two[2 * c], d[5] = two[2 * c + 1];
    d[6] = two[2 * e], d[7] = two[2 * e + 1];
}

/* The %.17g text of the 17 digits n with decimal exponent x (the value
 * is n 10^(x - 16)): %e's layout when x < -4 or x >= 17, %f's otherwise,
 * trailing zeros and a bare point removed either way. The text is made in
 * t with copies of a fixed 17 bytes (the part past what counts is written
 * over or left past the end), then FMT_G17_MAX bytes go to out. */
static size_t layout(char *out, int neg, uint64_t n, int x)
{
    char d[34] = {0}, t[64];
    uint64_t hi = n / 100000000u; /* below 10^9 */
    d[0] = (char)('0' + hi / 100000000u);
    put8(d + 1, (uint32_t)(hi % 100000000u));
    put8(d + 9, (uint32_t)(n % 100000000u));
    int last = 16; /* the last digit that is not a trailing zero */
    while (last > 0 && d[last] == '0')
        last--;
    size_t len = 0;
    if (neg)
        t[len++] = '-';
    if (x < -4 || x >= 17) {
        t[len++] = d[0];
        if (last > 0) {
            t[len++] = '.';
            memcpy(t + len, d + 1, 17);
            len += (size_t)last;
        }
        int ax = x < 0 ? -x : x;
        t[len++] = 'e';
        t[len++] = x < 0 ? '-' : '+';
        if (ax >= 100)
            t[len++] = (char)('0' + ax / 100);
        t[len++] = (char)('0' + ax / 10 % 10);
        t[len++] = (char)('0' + ax % 10);
    } else if (x >= 0) {
        memcpy(t + len, d, 17);
        len += (size_t)x + 1;
        if (last > x) {
            t[len++] = '.';
            memcpy(t + len, d + x + 1, 17);
            len += (size_t)(last - x);
        }
    } else {
        memcpy(t + len, "0.000000", 8);
        len += 1 - (size_t)x; /* "0." and -x - 1 zeros */
        memcpy(t + len, d, 17);
        len += (size_t)last + 1;
    }
    t[len] = '\0';
    memcpy(out, t, FMT_G17_MAX);
    return len;
}

size_t fmt_g17(char *out, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int neg = (int)(bits >> 63), be = (int)(bits >> 52 & 0x7ff);
    if (be == 0 || be == 0x7ff) {
        if (v != 0.0)
            return by_printf(out, v); /* subnormal, inf, NaN */
        return neg ? (memcpy(out, "-0", 3), 2) : (memcpy(out, "0", 2), 1);
    }
    uint64_t m = (bits & ((UINT64_C(1) << 52) - 1)) | UINT64_C(1) << 52;
    int e = be - 1075; /* v = m 2^e */
    /* floor(log10 v) is this or one more; the digits say which.
     * 78913 / 2^18 is log10 2 to within 2^-19, enough for |e| < 1100;
     * the floor of the quotient by a shift of the sum made positive. */
    uint32_t a = (uint32_t)((e + 52) * 78913 + (1 << 30));
    int x = (int)(a >> 18) - (1 << 12);
    for (int tries = 0; tries < 3; tries++) {
        int s = 16 - x;
        if (s < 0 || s > 32)
            break;
        uint64_t n = scaled(m, e, s);
        if (n >= TEN17)
            x++;
        else if (n < TEN16)
            x--;
        else
            return layout(out, neg, n, x);
    }
    return by_printf(out, v);
}

#else

size_t fmt_g17(char *out, double v)
{
    return by_printf(out, v);
}

#endif
