/* The counting reader between libinih and bnstudy's INI files. */
#include "inifile.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <ini.h>

#define INIFILE_MAX_LINE 4096

typedef struct {
    FILE *fp;
    const char *path;
    int line, at_line_start, failed;
    inifile_key_fn on_key;
    inifile_section_fn on_section;
    void *user;
    bn_error *err;
} reader_ctx;

static char *reader(char *str, int num, void *stream)
{
    reader_ctx *c = stream;
    if (!fgets(str, num, c->fp))
        return NULL;
    if (c->at_line_start)
        c->line++;
    size_t len = strlen(str);
    c->at_line_start = len > 0 && str[len - 1] == '\n';
    if (!c->at_line_start && !feof(c->fp) && !c->failed) {
        bn_fail(c->err, "%s:%d: line longer than %d characters", c->path,
                c->line, INIFILE_MAX_LINE - 3);
        c->failed = 1;
    }
    const char *s = str;
    while (isspace((unsigned char)*s))
        s++;
    const char *close = *s == '[' ? strchr(s, ']') : NULL;
    if (*s == '[' && !close && !c->failed) {
        bn_fail(c->err, "%s:%d: section header without ']'", c->path,
                c->line);
        c->failed = 1;
    }
    if (close && !c->failed && c->on_section) {
        char name[128];
        size_t n = (size_t)(close - s - 1);
        if (n >= sizeof name)
            n = sizeof name - 1;
        memcpy(name, s + 1, n);
        name[n] = '\0';
        if (!c->on_section(c->user, name, c->line, c->err))
            c->failed = 1;
    }
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

int inifile_parse(const char *path, inifile_key_fn on_key,
                  inifile_section_fn on_section, void *user, bn_error *err)
{
    /* Debian's libinih takes its settings at run time: lines up to
     * INIFILE_MAX_LINE on the heap, and no continuation lines, so that an
     * indented key is a key and not part of the value before it. */
    ini_use_stack = false;
    ini_max_line = INIFILE_MAX_LINE;
    ini_initial_alloc = INIFILE_MAX_LINE;
    ini_allow_multiline = false;
    reader_ctx c = {0};
    c.fp = fopen(path, "r");
    if (!c.fp)
        return bn_fail(err, "%s: cannot open: %s", path, strerror(errno));
    c.path = path;
    c.at_line_start = 1;
    c.on_key = on_key;
    c.on_section = on_section;
    c.user = user;
    c.err = err;
    int rc = ini_parse_stream(reader, &c, handler, &c);
    int read_error = ferror(c.fp);
    fclose(c.fp);
    if (c.failed)
        return -1;
    if (read_error)
        return bn_fail(err, "%s: read error", path);
    if (rc != 0)
        return bn_fail(err, "%s:%d: not a [section] header or a key = value "
                            "line",
                       path, rc);
    return 0;
}
