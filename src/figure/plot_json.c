/*
 * A figure as JSON, for the web page: its kind, its script, what it
 * draws, and the assignments its script would read, each by its name.
 * The assignments are plot.c's own writing (as_str, as_num, as_strs,
 * as_nums and the row functions), so this reads that writing back: a
 * string (gp_str's escapes undone), a number (null for NaN or an
 * infinity), an array of them, or a function of a row ("skey(d)") as its
 * gnuplot text. Texts keep gnuplot's enhanced-text markup ("stats\_err",
 * "{/:Bold ...}"), which the page takes off as it shows them.
 */
#include "figure/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The gnuplot string at *s (gp_str's) into b as JSON; *s past it. */
static int json_gp_str(const char **s, bn_buf *b)
{
    const char *p = *s;
    if (*p != '"')
        return -1;
    bn_buf raw = {0};
    for (p++; *p && *p != '"'; p++) {
        char c = *p;
        if (c == '\\') {
            c = *++p;
            c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
            if (!c)
                break;
        }
        buf_putc(&raw, c);
    }
    int ok = *p == '"' && !raw.failed;
    if (ok)
        buf_json_str(b, raw.p ? raw.p : "", raw.len);
    buf_free(&raw);
    *s = p + 1;
    return ok ? 0 : -1;
}

/* A value at *s: a string, or a number up to the next ',', ']' or ';'. */
static int json_value(const char **s, bn_buf *b)
{
    if (**s == '"')
        return json_gp_str(s, b);
    size_t n = strcspn(*s, ",]; ");
    if (n == 0)
        return -1;
    char *end;
    double v = strtod(*s, &end);
    if (end != *s + n)
        return -1;
    if (isfinite(v))
        buf_add(b, *s, n);
    else
        buf_puts(b, "null");
    *s += n;
    return 0;
}

/* "[v, v, ...]" at *s into b. */
static int json_array(const char **s, bn_buf *b)
{
    if (**s != '[')
        return -1;
    buf_putc(b, '[');
    for (++*s; **s != ']';) {
        if (json_value(s, b) != 0)
            return -1;
        if (strncmp(*s, ", ", 2) == 0) {
            *s += 2;
            buf_putc(b, ',');
        } else if (**s != ']') {
            return -1;
        }
    }
    buf_putc(b, ']');
    ++*s;
    return 0;
}

/* A function's text, up to the "; " that ends it outside a string. */
static int json_function(const char **s, bn_buf *b)
{
    const char *p = *s;
    int quoted = 0;
    for (; *p && (quoted || strncmp(p, "; ", 2) != 0); p++) {
        if (*p == '\\' && quoted && p[1])
            p++;
        else if (*p == '"')
            quoted = !quoted;
    }
    if (!*p)
        return -1;
    buf_json_str(b, *s, (size_t)(p - *s));
    *s = p;
    return 0;
}

/* One assignment at *s ("name = v; ", "array name[n] = [...]; ",
 * "name(d) = ...; ") into b as "name":value. */
static int json_assignment(const char **s, bn_buf *b)
{
    int array = strncmp(*s, "array ", 6) == 0;
    const char *name = *s + (array ? 6 : 0);
    size_t n = strcspn(name, " [");
    int function = n > 3 && strncmp(name + n - 3, "(d)", 3) == 0;
    const char *eq = strstr(name, " = ");
    if (n == 0 || !eq)
        return -1;
    buf_json_str(b, name, n);
    buf_putc(b, ':');
    *s = eq + 3;
    int rc = array ? json_array(s, b)
             : function ? json_function(s, b)
                        : json_value(s, b);
    if (rc != 0 || strncmp(*s, "; ", 2) != 0)
        return -1;
    *s += 2;
    return 0;
}

int plot_json(const plot_figure *f, bn_buf *out)
{
    buf_puts(out, "{\"name\":");
    buf_json_str(out, f->name, strlen(f->name));
    buf_puts(out, ",\"script\":");
    buf_json_str(out, f->script, strlen(f->script));
    buf_puts(out, ",\"what\":");
    buf_json_str(out, f->what, strlen(f->what));
    buf_puts(out, ",\"values\":{");
    for (const char *s = f->assign; *s;) {
        if (s != f->assign)
            buf_putc(out, ',');
        if (json_assignment(&s, out) != 0)
            return -1;
    }
    buf_puts(out, "}}");
    return out->failed ? -1 : 0;
}
