/*
 * The shards' files read back, one line at a time, so a merge holds one
 * configuration's rows per shard whatever the number of configurations.
 */
#include "shard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "exp.h"
#include "out.h"
#include "score.h"

/* One file of a shard, read line by line, with one line of lookahead. */
typedef struct {
    FILE *fp;
    char path[BN_PATH_MAX + 32];
    size_t line;  /* of the line in buf */
    char *buf;
    size_t cap;
    size_t len;
    int held;     /* buf holds a line not yet taken */
} reader;

typedef struct {
    char dir[BN_PATH_MAX];
    reader file[3]; /* summary, features, curve */
} shard;

enum { R_SUMMARY, R_FEATURES, R_CURVE };

struct shard_set_s {
    size_t n;
    shard *sh;
    unsigned files, models;
    size_t n_cols;
    const score_def **col_score; /* summary.tsv's columns: a score or NULL */
    size_t feature_col;          /* features.tsv's `feature` column */
    char **cell;                 /* a row split at its tabs */
    size_t cell_cap;
    bn_buf again;                /* a row as the writers make it */
    bn_buf got;                  /* and as the shard has it */
};

/* The next line (without its newline) in r->buf: 1, 0 at the end, -1 on
 * a read error or a line without its newline (a file cut short). */
static int take(reader *r, bn_error *err)
{
    if (r->held) {
        r->held = 0;
        return 1;
    }
    errno = 0;
    ssize_t got = getline(&r->buf, &r->cap, r->fp);
    if (got < 0) {
        if (ferror(r->fp))
            return bn_fail(err, "%s: cannot read: %s", r->path,
                           strerror(errno));
        return 0;
    }
    r->line++;
    if (got == 0 || r->buf[got - 1] != '\n')
        return bn_fail(err, "%s line %zu: the file ends inside the line",
                       r->path, r->line);
    r->buf[--got] = '\0';
    r->len = (size_t)got;
    return 1;
}

static void give_back(reader *r) { r->held = 1; }

static int open_reader(reader *r, const char *dir, const char *file,
                       bn_error *err)
{
    char path[sizeof r->path];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    memcpy(r->path, path, sizeof path);
    if (bn_fault_io() == 0)
        r->fp = fopen(r->path, "r");
    if (!r->fp)
        return bn_fail(err, "%s: cannot open: %s (a shard of this "
                            "experiment has it)",
                       r->path, strerror(errno));
    return 0;
}

/* Split s at its tabs into set->cell; the number of cells, or 0 when
 * out of memory. */
static size_t split(shard_set *set, char *s)
{
    size_t n = 0;
    for (char *p = s;; p++) {
        if (n == set->cell_cap) {
            size_t cap = set->cell_cap ? 2 * set->cell_cap : 64;
            char **c = realloc(set->cell, cap * sizeof *c);
            if (!c)
                return 0;
            set->cell = c;
            set->cell_cap = cap;
        }
        set->cell[n++] = p;
        p = strchr(p, '\t');
        if (!p)
            return n;
        *p = '\0';
    }
}

/* ---- the manifests ---- */

/* Whether the manifest line at p (up to its newline) is compared: the
 * build's rows describe the program, not the results (provenance.h). */
static int compared(const char *p) { return strncmp(p, "build.", 6) != 0; }

static const char *next_line(const char *p)
{
    const char *nl = strchr(p, '\n');
    return nl ? nl + 1 : p + strlen(p);
}

/* The line at p without its newline, for a message. */
static int line_len(const char *p)
{
    size_t n = strcspn(p, "\n");
    return (int)(n > 300 ? 300 : n);
}

/* Read dir's manifest, take its shard line into *k and *n, and hold the
 * rest against want. */
static int check_manifest(const char *dir, const bn_buf *want, unsigned *k,
                          unsigned *n, bn_error *err)
{
    char path[BN_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    FILE *fp = bn_fault_io() == 0 ? fopen(path, "r") : NULL;
    if (!fp)
        return bn_fail(err, "%s: cannot open: %s (is %s a shard, written "
                            "by sweep --shard K/N?)",
                       path, strerror(errno), dir);
    bn_buf text = {0};
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, fp)) > 0)
        buf_add(&text, chunk, got);
    int bad = ferror(fp);
    fclose(fp);
    if (bad || text.failed) {
        buf_free(&text);
        return bn_fail(err, "%s: cannot read: %s", path,
                       bad ? "a read error" : "out of memory");
    }
    buf_putc(&text, '\0');
    *k = *n = 0;
    int rc = 0;
    const char *p = text.p, *q = want->p ? want->p : "";
    size_t line = 0;
    for (;;) {
        /* The next compared line of each; the shard line taken out. */
        while (*p && (!compared(p) || strncmp(p, "shard\t", 6) == 0)) {
            line++;
            if (strncmp(p, "shard\t", 6) == 0) {
                char tail;
                if (sscanf(p + 6, "%u/%u%c", k, n, &tail) != 3 ||
                    tail != '\n' || *n < 1 || *n > SHARD_MAX || *k < 1 ||
                    *k > *n) {
                    rc = bn_fail(err, "%s line %zu: '%.*s' is not a shard "
                                      "K/N with 1 <= K <= N <= %d",
                                 path, line, line_len(p), p, SHARD_MAX);
                    goto done;
                }
            }
            p = next_line(p);
        }
        while (*q && !compared(q))
            q = next_line(q);
        if (!*p && !*q)
            break;
        line++;
        int lp = (int)strcspn(p, "\n"), lq = (int)strcspn(q, "\n");
        if (lp != lq || memcmp(p, q, (size_t)lp) != 0) {
            rc = bn_fail(err, "%s line %zu: '%.*s' where this experiment "
                              "file and these settings give '%.*s': the "
                              "shard is of another sweep",
                         path, line, line_len(p), p, line_len(q), q);
            goto done;
        }
        p = next_line(p);
        q = next_line(q);
    }
    if (*n == 0)
        rc = bn_fail(err, "%s: no shard line: %s is not a shard (sweep "
                          "--shard K/N writes one)",
                     path, dir);
done:
    buf_free(&text);
    return rc;
}

/* ---- opening ---- */

/* The header line of r must be the writers' own. */
static int check_header(reader *r, const bn_buf *want, bn_error *err)
{
    int rc = take(r, err);
    if (rc < 0)
        return -1;
    if (rc == 0 || want->failed || r->len + 1 != want->len ||
        memcmp(r->buf, want->p, r->len) != 0)
        return bn_fail(err, "%s line 1: not the header this experiment's "
                            "sweep writes",
                       r->path);
    return 0;
}

static int layout(shard_set *set, bn_error *err)
{
    bn_buf h = {0};
    out_summary_header(&h, set->models);
    size_t n = h.failed ? 0 : split(set, h.p);
    set->col_score = n ? calloc(n, sizeof *set->col_score) : NULL;
    if (!set->col_score) {
        buf_free(&h);
        return bn_fail(err, "out of memory");
    }
    set->n_cols = n;
    for (size_t i = 0; i < n; i++) {
        char *nl = strchr(set->cell[i], '\n');
        if (nl)
            *nl = '\0';
        if (exp_key_column(set->cell[i]) < 0)
            set->col_score[i] = score_find(set->cell[i]);
    }
    buf_clear(&h);
    out_features_header(&h, set->models);
    n = h.failed ? 0 : split(set, h.p);
    set->feature_col = 0;
    while (set->feature_col < n &&
           strcmp(set->cell[set->feature_col], "feature") != 0)
        set->feature_col++;
    buf_free(&h);
    return 0;
}

int shard_open(shard_set **out, char *const *dirs, size_t n,
               const bn_buf *manifest, unsigned files, unsigned models,
               bn_error *err)
{
    *out = NULL;
    shard_set *set = calloc(1, sizeof *set);
    size_t *given = calloc(n ? n : 1, sizeof *given);
    if (!set || !given) {
        free(set);
        free(given);
        return bn_fail(err, "out of memory");
    }
    set->files = files;
    set->models = models;
    unsigned total = 0, first = 0;
    int rc = -1;
    /* Every manifest first: a set that does not belong together is
     * refused before a row is read. */
    for (size_t i = 0; i < n; i++) {
        unsigned k, m;
        if (check_manifest(dirs[i], manifest, &k, &m, err) != 0)
            goto done;
        if (i == 0) {
            total = m;
            set->sh = calloc(m, sizeof *set->sh);
            free(given);
            given = calloc(m, sizeof *given);
            if (!set->sh || !given) {
                bn_fail(err, "out of memory");
                goto done;
            }
            set->n = m;
            first = k;
        } else if (m != total) {
            bn_fail(err, "%s is shard %u/%u but %s is shard %u/%u: the "
                         "shards of one sweep split it the same way",
                    dirs[0], first, total, dirs[i], k, m);
            goto done;
        }
        if (given[k - 1]) {
            bn_fail(err, "%s and %s are both shard %u/%u", dirs[given[k - 1] - 1],
                    dirs[i], k, m);
            goto done;
        }
        given[k - 1] = i + 1;
        snprintf(set->sh[k - 1].dir, sizeof set->sh[k - 1].dir, "%s",
                 dirs[i]);
    }
    if (n == 0) {
        bn_fail(err, "no shard directories given");
        goto done;
    }
    for (unsigned k = 0; k < total; k++)
        if (!given[k]) {
            bn_fail(err, "shard %u/%u is missing (%zu of %u shards given)",
                    k + 1, total, n, total);
            goto done;
        }
    if (layout(set, err) != 0)
        goto done;
    bn_buf h[3] = {{0}, {0}, {0}};
    out_summary_header(&h[R_SUMMARY], models);
    out_features_header(&h[R_FEATURES], models);
    out_curve_header(&h[R_CURVE]);
    static const char *const name[3] = {"summary.tsv", "features.tsv",
                                        "curve.tsv"};
    int wanted[3] = {1, (files >> OUT_FEATURES) & 1,
                     (files >> OUT_CURVE) & 1};
    int bad = 0;
    for (size_t i = 0; i < set->n && !bad; i++)
        for (int f = 0; f < 3 && !bad; f++)
            if (wanted[f])
                bad = open_reader(&set->sh[i].file[f], set->sh[i].dir,
                                  name[f], err) != 0 ||
                      check_header(&set->sh[i].file[f], &h[f], err) != 0;
    for (int f = 0; f < 3; f++)
        buf_free(&h[f]);
    if (!bad)
        rc = 0;
done:
    free(given);
    if (rc != 0)
        shard_close(set);
    else
        *out = set;
    return rc;
}

/* ---- the rows ---- */

/* A row that the writers do not give back from what was read of it. */
static int not_ours(const reader *r, bn_error *err, size_t k)
{
    return bn_fail(err, "%s line %zu: not configuration %zu's row as this "
                        "experiment's sweep writes it (a damaged or edited "
                        "shard?)",
                   r->path, r->line, k);
}

static int same(const reader *r, const bn_buf *again, size_t from)
{
    size_t n = again->len - from;
    return !again->failed && n == r->len + 1 &&
           memcmp(again->p + from, r->buf, r->len) == 0 &&
           again->p[again->len - 1] == '\n';
}

static int read_cell(const score_def *s, const pop_t *pop, const char *c,
                     run_result *res)
{
    char *end;
    char *at = (char *)res + s->offset;
    if (!*c)
        return -1;
    switch (s->kind) {
    case SCORE_REAL: {
        double v = strtod(c, &end);
        if (*end)
            return -1;
        memcpy(at, &v, sizeof v);
        return 0;
    }
    case SCORE_COUNT: {
        unsigned long long u = strtoull(c, &end, 10);
        size_t z = (size_t)u;
        if (*end || *c == '-')
            return -1;
        memcpy(at, &z, sizeof z);
        return 0;
    }
    case SCORE_FEATURE:
        for (size_t j = 0; j < pop->f; j++)
            if (strcmp(pop->names[j], c) == 0) {
                memcpy(at, &j, sizeof j);
                return 0;
            }
        return -1;
    }
    return -1;
}

static int read_summary(shard_set *set, reader *r, size_t k,
                        const pop_t *pop, const run_config *cfg,
                        run_result *res, bn_error *err)
{
    int rc = take(r, err);
    if (rc <= 0)
        return rc < 0 ? -1
                      : bn_fail(err, "%s: ends before configuration %zu's "
                                     "row",
                                r->path, k);
    char *line = malloc(r->len + 1);
    if (!line)
        return bn_fail(err, "out of memory");
    memcpy(line, r->buf, r->len + 1);
    size_t n = split(set, line);
    int ok = n == set->n_cols;
    for (size_t i = 0; ok && i < n; i++) {
        const score_def *s = set->col_score[i];
        if (s && score_applies(s, cfg))
            ok = read_cell(s, pop, set->cell[i], res) == 0;
    }
    free(line);
    buf_clear(&set->again);
    if (ok)
        out_summary_row(&set->again, set->models, pop, cfg, res);
    return ok && same(r, &set->again, 0) ? 0 : not_ours(r, err, k);
}

static int read_features(shard_set *set, reader *r, size_t k,
                         const pop_t *pop, const run_config *cfg,
                         run_result *res, bn_error *err)
{
    size_t f = pop->f, first = r->line + 1;
    res->running_mean = malloc(2 * (f ? f : 1) * sizeof(double));
    if (!res->running_mean)
        return bn_fail(err, "out of memory");
    res->running_var = res->running_mean + f;
    buf_clear(&set->got);
    for (size_t j = 0; j < f; j++) {
        int rc = take(r, err);
        if (rc <= 0)
            return rc < 0 ? -1
                          : bn_fail(err, "%s: ends inside configuration "
                                         "%zu's rows",
                                    r->path, k);
        buf_add(&set->got, r->buf, r->len);
        buf_putc(&set->got, '\n');
        char *line = malloc(r->len + 1);
        if (!line)
            return bn_fail(err, "out of memory");
        memcpy(line, r->buf, r->len + 1);
        size_t n = split(set, line), c = set->feature_col;
        char *e1 = NULL, *e2 = NULL;
        if (n > c + 4) {
            res->running_mean[j] = strtod(set->cell[c + 3], &e1);
            res->running_var[j] = strtod(set->cell[c + 4], &e2);
        }
        int ok = e1 && !*e1 && e2 && !*e2;
        free(line);
        if (!ok)
            return not_ours(r, err, k);
    }
    /* The rows as the writers make them from what was read. */
    buf_clear(&set->again);
    out_features_rows(&set->again, set->models, pop, cfg, res);
    if (set->again.failed || set->got.failed)
        return bn_fail(err, "out of memory");
    if (set->again.len != set->got.len ||
        memcmp(set->again.p, set->got.p, set->got.len) != 0)
        return bn_fail(err, "%s lines %zu to %zu: not configuration %zu's "
                            "rows as this experiment's sweep writes them "
                            "(a damaged or edited shard?)",
                       r->path, first, r->line, k);
    return 0;
}

/* A classifier's curve.tsv rows: epochs 1, 2, ... of this configuration,
 * known by its leading key columns and the epoch. */
static int read_curve(shard_set *set, reader *r, size_t k,
                      const run_config *cfg, bn_buf *curve, bn_error *err)
{
    buf_clear(&set->again);
    exp_key_cells(&set->again, cfg, COL_SUMMARY, 1, 1, "%.17g",
                  RUN_MODEL_BIT(RUN_MODEL_CLASSIFIER));
    if (set->again.failed)
        return bn_fail(err, "out of memory");
    size_t lead = set->again.len;
    for (unsigned long epoch = 1;; epoch++) {
        int rc = take(r, err);
        if (rc < 0)
            return -1;
        char e[32];
        int le = snprintf(e, sizeof e, "\t%lu\t", epoch);
        if (rc == 0 || r->len < lead + (size_t)le ||
            memcmp(r->buf, set->again.p, lead) != 0 ||
            memcmp(r->buf + lead, e, (size_t)le) != 0) {
            if (rc)
                give_back(r);
            if (epoch == 1)
                return rc ? not_ours(r, err, k)
                          : bn_fail(err, "%s: ends before configuration "
                                         "%zu's rows",
                                    r->path, k);
            return 0;
        }
        buf_add(curve, r->buf, r->len);
        buf_putc(curve, '\n');
    }
}

int shard_next(shard_set *set, size_t k, const pop_t *pop,
               const run_config *cfg, run_result *res, bn_buf *curve,
               bn_error *err)
{
    shard *sh = &set->sh[k % set->n];
    memset(res, 0, sizeof *res);
    if (read_summary(set, &sh->file[R_SUMMARY], k, pop, cfg, res, err) != 0)
        return -1;
    if ((set->files >> OUT_FEATURES & 1) && cfg->model == RUN_MODEL_LAYER) {
        reader *r = &sh->file[R_FEATURES];
        if (read_features(set, r, k, pop, cfg, res, err) != 0)
            return -1;
    }
    if ((set->files >> OUT_CURVE & 1) && cfg->model == RUN_MODEL_CLASSIFIER)
        return read_curve(set, &sh->file[R_CURVE], k, cfg, curve, err);
    return 0;
}

int shard_finish(shard_set *set, bn_error *err)
{
    for (size_t i = 0; i < set->n; i++)
        for (int f = 0; f < 3; f++) {
            reader *r = &set->sh[i].file[f];
            if (!r->fp)
                continue;
            int rc = take(r, err);
            if (rc < 0)
                return -1;
            if (rc > 0)
                return bn_fail(err, "%s line %zu: a row past the shard's "
                                    "last configuration",
                               r->path, r->line);
        }
    return 0;
}

void shard_close(shard_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; set->sh && i < set->n; i++)
        for (int f = 0; f < 3; f++) {
            if (set->sh[i].file[f].fp)
                fclose(set->sh[i].file[f].fp);
            free(set->sh[i].file[f].buf);
        }
    free(set->sh);
    free(set->col_score);
    free(set->cell);
    buf_free(&set->again);
    buf_free(&set->got);
    free(set);
}
