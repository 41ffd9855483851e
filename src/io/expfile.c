/*
 * Reading experiment files: the INI syntax and line numbers come from
 * inifile.h (libinih), the keys and their values from exp.h's table.
 * Here: the file read once (input.h), the name the results are filed
 * under, unknown sections and keys, repeated keys, the features that
 * replace the default eight, the --set overrides, and the population file
 * an experiment names, read once.
 */
#include "study/exp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/digest.h"
#include "io/inifile.h"
#include "base/input.h"
#include "pop/popfile.h"

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
    } else if (c->seen[k] && k != KEY_MAPS_CHANNEL) {
        return bn_fail(err, "%s:%d: key '%s' already given on line %d",
                       c->path, line, name, c->seen[k]), 0;
    }
    c->seen[k] = line;
    char where[BN_PATH_MAX + 16];
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

/* The results are filed under the file's name without .ini, a directory
 * of --out: it must be one name, never the directory itself or its
 * parent, and it is written into every row. */
static int set_stem(exp_t *e, const char *path, bn_error *err)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t n = strlen(base);
    if (n >= 4 && strcmp(base + n - 4, ".ini") == 0)
        n -= 4;
    if (n == 0)
        return bn_fail(err, "%s: no file name to name the results by", path);
    if (n >= sizeof e->stem)
        return bn_fail(err, "%s: the name the results are filed under is "
                            "longer than the limit of %zu characters",
                       path, sizeof e->stem - 1);
    memcpy(e->stem, base, n);
    e->stem[n] = '\0';
    if (strcmp(e->stem, ".") == 0 || strcmp(e->stem, "..") == 0)
        return bn_fail(err, "%s: '%s' cannot name a results directory (it "
                            "would be --out itself or its parent)",
                       path, e->stem);
    const char *bad = bn_control_char(e->stem);
    if (bad) {
        char name[16];
        return bn_fail(err, "%s: %s in the file name, which names the "
                            "results and is written into every row",
                       path, bn_control_name(*bad, name));
    }
    return 0;
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
        return bn_fail(err, "%s: %s", e->from[k] ? e->from[k] : e->source,
                       sub.msg);
    digest_sha256_hex(bytes, len, sha);
    int rc = parse(e, bytes, len, sha, err);
    input_free((char *)bytes, len);
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
    if (e->initfile.file &&
        read_file(e, &e->initfile, KEY_LAYER_INITIAL, exp_initial_bytes,
                  err) != 0)
        return -1;
    if (e->seqfile.file &&
        read_file(e, &e->seqfile, KEY_SEQ_FILE, exp_seqfile_bytes, err) != 0)
        return -1;
    return 0;
}

int exp_load_text(exp_t *e, const char *path, const char *text, size_t len,
                  const exp_overrides *ov, bn_error *err)
{
    static const exp_overrides none = {NULL, 0, NULL, NULL, NULL};
    if (!ov)
        ov = &none;
    if (exp_init(e, err) != 0)
        return -1;
    size_t n = strlen(path) + 1;
    if (n > BN_PATH_MAX)
        return bn_fail(err, "a file name of %zu bytes, more than the limit "
                            "of %d", n - 1, BN_PATH_MAX - 1);
    char *source = malloc(n);
    if (!source)
        return bn_fail(err, "%s: out of memory", path);
    free(e->source);
    e->source = memcpy(source, path, n);
    e->source_is_file = 1;
    if (set_stem(e, path, err) != 0)
        return -1;

    parse_ctx c;
    memset(&c, 0, sizeof c);
    c.e = e;
    c.path = path;
    if (inifile_parse(path, text, len, on_key, on_section, &c, err) != 0)
        return -1;
    /* --set replaces what the file says. */
    if (exp_set_overrides(e, ov->sets, ov->n_sets, err) != 0)
        return -1;
    if (ov->population &&
        exp_set_population(e, ov->population, ov->label, ov->group, err) != 0)
        return -1;
    if (exp_read_population(e, err) != 0)
        return -1;
    return exp_finish(e, err);
}

int exp_load(exp_t *e, const char *path, const exp_overrides *ov,
             bn_error *err)
{
    char *text;
    size_t len;
    memset(e, 0, sizeof *e); /* exp_free is safe whatever happens next */
    if (input_read(path, EXP_MAX_FILE, 1, &text, &len, err) != 0)
        return -1;
    int rc = exp_load_text(e, path, text, len, ov, err);
    e->text = text;
    e->text_len = len;
    return rc;
}
