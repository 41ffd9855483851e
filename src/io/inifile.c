/* The counting reader between libinih and bnstudy's INI files. */
#include "io/inifile.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <ini.h>

typedef struct {
    const char *path;
    const char *at, *end; /* what is left of the text */
    int line, failed;
    inifile_key_fn on_key;
    inifile_section_fn on_section;
    void *user;
    bn_error *err;
} reader_ctx;

static int stop(reader_ctx *c) { return c->failed = 1, 0; }

/* A section header, "[name]" then nothing but spaces or a comment. */
static int header(reader_ctx *c, const char *s, size_t len)
{
    const char *close = memchr(s, ']', len);
    if (!close)
        return bn_fail(c->err, "%s:%d: section header without ']'", c->path,
                       c->line), stop(c);
    const char *rest = close + 1, *end = s + len;
    while (rest < end && isspace((unsigned char)*rest))
        rest++;
    if (rest < end && *rest != ';')
        return bn_fail(c->err, "%s:%d: text after the section header: "
                               "'%.*s'",
                       c->path, c->line, (int)(end - rest), rest), stop(c);
    size_t n = (size_t)(close - s - 1);
    if (n > INIFILE_MAX_SECTION)
        return bn_fail(c->err, "%s:%d: section name of %zu characters, "
                               "more than the limit of %d",
                       c->path, c->line, n, INIFILE_MAX_SECTION), stop(c);
    if (!c->on_section)
        return 1;
    char name[INIFILE_MAX_SECTION + 1];
    memcpy(name, s + 1, n);
    name[n] = '\0';
    return c->on_section(c->user, name, c->line, c->err) ? 1 : stop(c);
}

static char *reader(char *str, int num, void *stream)
{
    reader_ctx *c = stream;
    if (c->failed || c->at >= c->end)
        return NULL;
    const char *nl = memchr(c->at, '\n', (size_t)(c->end - c->at));
    size_t len = nl ? (size_t)(nl - c->at) : (size_t)(c->end - c->at);
    c->line++;
    if (len > BN_LINE_MAX || len + 2 > (size_t)num)
        return bn_fail(c->err, "%s:%d: line of %zu characters, more than "
                               "the limit of %d",
                       c->path, c->line, len, BN_LINE_MAX), stop(c), NULL;
    memcpy(str, c->at, len);
    str[len] = '\n';
    str[len + 1] = '\0';
    const char *s = c->at, *e = c->at + len;
    c->at = nl ? nl + 1 : c->end;
    if (c->line == 1 && len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
        s += 3; /* libinih skips a byte-order mark */
    while (s < e && isspace((unsigned char)*s))
        s++;
    if (s < e && *s == '[' && !header(c, s, (size_t)(e - s)))
        return NULL;
    return str;
}

static int handler(void *user, const char *section, const char *name,
                   const char *value)
{
    reader_ctx *c = user;
    if (c->failed)
        return 0;
    if (!c->on_key(c->user, section, name, value, c->line, c->err))
        c->failed = 1;
    return !c->failed;
}

int inifile_parse(const char *path, const char *text, size_t len,
                  inifile_key_fn on_key, inifile_section_fn on_section,
                  void *user, bn_error *err)
{
    /* Debian's libinih takes its settings at run time: lines up to
     * BN_LINE_MAX on the heap, and no continuation lines, so that an
     * indented key is a key and not part of the value before it. */
    ini_use_stack = false;
    ini_max_line = BN_LINE_MAX + 2;
    ini_initial_alloc = BN_LINE_MAX + 2;
    ini_allow_multiline = false;
    ini_stop_on_first_error = true;
    reader_ctx c = {0};
    c.path = path;
    c.at = text;
    c.end = text + len;
    c.on_key = on_key;
    c.on_section = on_section;
    c.user = user;
    c.err = err;
    int rc = ini_parse_stream(reader, &c, handler, &c);
    if (c.failed)
        return -1;
    if (rc == -2)
        return bn_fail(err, "%s: out of memory", path);
    if (rc != 0)
        return bn_fail(err, "%s:%d: not a [section] header or a key = value "
                            "line",
                       path, rc);
    return 0;
}
