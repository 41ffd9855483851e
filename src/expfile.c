/*
 * Reading experiment files: the INI syntax and line numbers come from
 * inifile.h (libinih), the keys and their values from exp.h's table.
 * Here: unknown sections and keys, repeated keys, the features that
 * replace the default eight, the --set overrides, and the population file
 * an experiment names, read once.
 */
#include "exp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "inifile.h"
#include "popfile.h"

typedef struct {
    exp_t *e;
    const char *path;
    int seen[KEY_COUNT]; /* line a key was given on, to refuse repeats */
} parse_ctx;

static int on_key(void *user, const char *section, const char *name,
                  const char *value, int line, bn_error *err)
{
    parse_ctx *c = user;
    int k = exp_key_find(section, name);
    if (k < 0) {
        if (section[0] == '\0')
            return bn_fail(err, "%s:%d: key '%s' outside any section",
                           c->path, line, name), 0;
        return bn_fail(err, "%s:%d: unknown key '%s' in [%s]", c->path, line,
                       name, section), 0;
    }
    if (k == KEY_FEATURE) {
        if (!c->seen[k])
            pop_spec_clear(&c->e->pop); /* the file's replace the default */
    } else if (c->seen[k]) {
        return bn_fail(err, "%s:%d: key '%s' already given on line %d",
                       c->path, line, name, c->seen[k]), 0;
    }
    c->seen[k] = line;
    char where[300];
    snprintf(where, sizeof where, "%s:%d", c->path, line);
    return exp_set(c->e, (key_id)k, value, where, 1, err) == 0;
}

static int on_section(void *user, const char *section, int line,
                      bn_error *err)
{
    parse_ctx *c = user;
    for (int k = 0; k < KEY_COUNT; k++) {
        const key_def *d = exp_key((key_id)k);
        if (d->section && strcmp(section, d->section) == 0)
            return 1;
    }
    return bn_fail(err, "%s:%d: unknown section [%s]", c->path, line,
                   section), 0;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* A file the experiment names, read whole and hashed, then parsed. */
static int read_file(exp_t *e, const exp_popfile *f, key_id k,
                     int (*parse)(exp_t *, const unsigned char *, size_t,
                                  const char *, bn_error *),
                     bn_error *err)
{
    unsigned char *bytes;
    size_t len;
    char sha[65];
    bn_error sub;
    if (popfile_slurp(f->path, POPFILE_MAX_BYTES, &bytes, &len, &sub) != 0)
        return bn_fail(err, "%s: %s", e->from[k], sub.msg);
    digest_sha256_hex(bytes, len, sha);
    int rc = parse(e, bytes, len, sha, err);
    free(bytes);
    return rc;
}

int exp_read_population(exp_t *e, bn_error *err)
{
    if (e->popfile.file &&
        read_file(e, &e->popfile, KEY_POP_FILE, exp_population_bytes,
                  err) != 0)
        return -1;
    if (e->evalfile.file &&
        read_file(e, &e->evalfile, KEY_EVAL_FILE, exp_evaluation_bytes,
                  err) != 0)
        return -1;
    return 0;
}

int exp_load(exp_t *e, const char *path, const exp_overrides *ov,
             bn_error *err)
{
    static const exp_overrides none = {NULL, 0, NULL, NULL, NULL};
    if (!ov)
        ov = &none;
    char *const *sets = ov->sets;
    size_t n_sets = ov->n_sets;
    if (exp_init(e, err) != 0)
        return -1;
    e->source_is_file = 1;
    snprintf(e->source, sizeof e->source, "%s", path);
    snprintf(e->stem, sizeof e->stem, "%s", base_name(path));
    char *dot = strrchr(e->stem, '.');
    if (dot && strcmp(dot, ".ini") == 0)
        *dot = '\0';
    if (strlen(base_name(path)) >= sizeof e->stem)
        return bn_fail(err, "%s: file name too long", path);
    if (e->stem[0] == '\0')
        return bn_fail(err, "%s: no file name to name the results by", path);

    parse_ctx c;
    memset(&c, 0, sizeof c);
    c.e = e;
    c.path = path;
    if (inifile_parse(path, on_key, on_section, &c, err) != 0)
        return -1;

    /* --set replaces what the file says; the first --set feature replaces
     * the file's list, later ones add to it. */
    int set_features = 0;
    for (size_t i = 0; i < n_sets; i++) {
        char buf[1024], *eq, *dotp;
        snprintf(buf, sizeof buf, "%s", sets[i]);
        eq = strchr(buf, '=');
        dotp = strchr(buf, '.');
        if (!eq || !dotp || dotp > eq)
            return bn_fail(err, "--set %s: expected section.key=value",
                           sets[i]);
        *eq = '\0';
        *dotp = '\0';
        char where[300];
        snprintf(where, sizeof where, "--set %s", sets[i]);
        int k = exp_key_find(buf, dotp + 1);
        if (k < 0)
            return bn_fail(err, "%s: unknown key '%s' in [%s]", where,
                           dotp + 1, buf);
        if (k == KEY_FEATURE && !set_features++)
            pop_spec_clear(&e->pop);
        if (exp_set(e, (key_id)k, eq + 1, where, 1, err) != 0)
            return -1;
    }
    if (ov->population &&
        exp_set_population(e, ov->population, ov->label, ov->group, err) != 0)
        return -1;
    if (exp_read_population(e, err) != 0)
        return -1;
    return exp_finish(e, err);
}
