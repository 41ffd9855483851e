/*
 * A figure's tables cut to the columns it can read (plot_cols.h).
 * gnuplot finds a column by the name in the header row, so a script
 * reads only columns whose names its own text or the assignments bnstudy
 * plot gives it spell out: a column whose name occurs as a word in
 * neither is never read, and dropping it changes nothing gnuplot draws.
 * The fields kept are the same bytes in the same rows and the same
 * order, so each row gives gnuplot the same values and the figure is the
 * same to the byte; only the fields it would have converted and thrown
 * away are gone.
 */
#include "cli/plot_cols.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/input.h"
#include "figure/plot.h"
#include "pop/popfile.h"

static int word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
}

/* Whether the n bytes at w occur in s with no word character on either
 * side; a name too long to copy is said to (its column is kept). strstr
 * finds the candidates: a byte-by-byte scan of the scripts for each
 * column's name was a tenth of plot's own time. */
static int occurs(const char *s, const char *w, size_t n)
{
    char word[256];
    if (n >= sizeof word)
        return 1;
    memcpy(word, w, n);
    word[n] = '\0';
    for (const char *p = s; (p = strstr(p, word)) != NULL; p++)
        if ((p == s || !word_char(p[-1])) && !word_char(p[n]))
            return 1;
    return 0;
}

/* Whether a column named by the n bytes at name may be read: its name is
 * a word of the assignments or the scripts, or it is not a plain word
 * (then it is kept, as this cannot tell). */
static int wanted(const char *name, size_t n, const char *assign,
                  const char *text)
{
    if (n == 0)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (!word_char(name[i]))
            return 1;
    return occurs(assign, name, n) || occurs(text, name, n);
}

/* The header's fields to keep into keep (one flag a field, at most
 * max), their count into *nf; how many are kept. */
static size_t header_keep(const char *row, size_t len, const char *assign,
                          const char *text, unsigned char *keep, size_t max,
                          size_t *nf)
{
    size_t kept = 0, i = 0, f = 0;
    while (f < max) {
        size_t e = i;
        while (e < len && row[e] != '\t')
            e++;
        keep[f] = (unsigned char)wanted(row + i, e - i, assign, text);
        kept += keep[f++];
        if (e >= len)
            break;
        i = e + 1;
    }
    *nf = f;
    return kept;
}

/* Row row (len bytes, no newline) with only the kept fields, into out. */
static void row_cut(bn_buf *out, const char *row, size_t len,
                    const unsigned char *keep, size_t nf)
{
    size_t i = 0, f = 0;
    int first = 1;
    while (f < nf) {
        size_t e = i;
        while (e < len && row[e] != '\t')
            e++;
        if (keep[f]) {
            if (!first)
                buf_putc(out, '\t');
            buf_add(out, row + i, e - i);
            first = 0;
        }
        f++;
        if (e >= len)
            break;
        i = e + 1;
    }
}

/* The file's text with only the wanted columns into out: 1 when some
 * column goes, 0 when none does or the text is not one this cuts. */
static int cut(const char *s, size_t len, const char *assign,
               const char *text, bn_buf *out)
{
    /* gnuplot reads a quoted field whole, tabs and all, and skips a
     * comment line: such text is left to it. */
    if (len == 0 || s[0] == '#' || memchr(s, '"', len) || memchr(s, '\r', len))
        return 0;
    size_t h = 0;
    while (h < len && s[h] != '\n')
        h++;
    size_t max = h + 1, nf;
    unsigned char *keep = malloc(max);
    if (!keep)
        return -1;
    size_t kept = header_keep(s, h, assign, text, keep, max, &nf);
    int rc = 0;
    if (kept < nf) {
        for (size_t i = 0; i < len;) {
            size_t e = i;
            while (e < len && s[e] != '\n')
                e++;
            if (e > i && s[i] == '#')
                buf_add(out, s + i, e - i);
            else
                row_cut(out, s + i, e - i, keep, nf);
            if (e < len)
                buf_putc(out, '\n');
            i = e + 1;
        }
        rc = out->failed ? -1 : 1;
    }
    free(keep);
    return rc;
}

/* The path of the assignment's double-quoted value at q (after its
 * opening quote), unescaped as gnuplot reads it, into out; the byte
 * after its closing quote into *end. 0, or -1 when it does not close. */
static int dq_value(const char *q, bn_buf *out, const char **end)
{
    for (; *q && *q != '"'; q++) {
        if (*q == '\\' && q[1]) {
            q++;
            buf_putc(out, *q == 'n' ? '\n' : *q == 't' ? '\t' : *q);
        } else {
            buf_putc(out, *q);
        }
    }
    if (*q != '"')
        return -1;
    *end = q + 1;
    return 0;
}

/* One file: path's copy cut to its wanted columns at copy. 1 written, 0
 * left whole, -1 failed. */
static int narrow_file(const char *path, const char *copy,
                       const char *assign, const char *text)
{
    char *s;
    size_t len;
    bn_error err;
    if (input_read(path, POPFILE_MAX_BYTES, 1, &s, &len, &err) != 0)
        return 0;
    bn_buf out = {0};
    int rc = cut(s, len, assign, text, &out);
    input_free(s, len);
    if (rc == 1) {
        FILE *fp = fopen(copy, "w");
        int ok = fp && fwrite(out.p, 1, out.len, fp) == out.len;
        if (fp && fclose(fp) != 0)
            ok = 0;
        if (!ok) {
            remove(copy);
            rc = -1;
        }
    }
    buf_free(&out);
    return rc;
}

int plot_cols_narrow(const char *assign, const char *text, const char *edir,
                     const char *stem, bn_buf *extra, bn_buf *made)
{
    size_t le = strlen(edir);
    for (const char *a = assign; (a = strstr(a, "= \"")) != NULL;) {
        const char *n1 = a;
        while (n1 > assign && n1[-1] == ' ')
            n1--;
        const char *n0 = n1;
        while (n0 > assign && word_char(n0[-1]))
            n0--;
        bn_buf path = {0};
        const char *end;
        if (dq_value(a + 3, &path, &end) != 0) {
            buf_free(&path);
            return 0;
        }
        a = end;
        const char *p = path.p ? path.p : "";
        if (n0 == n1 || path.failed || strncmp(p, edir, le) != 0 ||
            p[le] != '/' || strchr(p + le + 1, '/') || !p[le + 1]) {
            buf_free(&path);
            continue;
        }
        bn_buf copy = {0};
        buf_printf(&copy, "%s.%.*s.tsv", stem, (int)(n1 - n0), n0);
        int rc = copy.failed ? -1 : narrow_file(p, copy.p, assign, text);
        if (rc == 1) {
            buf_printf(extra, " %.*s = ", (int)(n1 - n0), n0);
            gp_str(extra, copy.p);
            buf_putc(extra, ';');
            buf_printf(made, "%s\n", copy.p);
        }
        buf_free(&copy);
        buf_free(&path);
        if (rc < 0 || extra->failed || made->failed)
            return -1;
    }
    return 0;
}
