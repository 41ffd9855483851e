/*
 * The shards' files read back, one line at a time, so a merge holds one
 * configuration's rows per shard whatever the number of configurations.
 */
#include "study/shard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "study/exp.h"
#include "study/out.h"
#include "study/outfile.h"
#include "model/score.h"

/* One file of a shard, read line by line. */
typedef struct {
    FILE *fp;
    char path[BN_PATH_MAX + 32];
    size_t line;  /* of the line in buf */
    char *buf;
    size_t cap;
    size_t len;
} reader;

enum { R_SUMMARY, R_FEATURES, R_CURVE, R_EFFECTIVE, R_COUNT };
/* Each reader's file, as out.h knows it. */
static const int of_file[R_COUNT] = {OUT_SUMMARY, OUT_FEATURES, OUT_CURVE,
                                     OUT_EFFECTIVE};

typedef struct {
    char dir[BN_PATH_MAX];
    reader file[R_COUNT];
} shard;

struct shard_set_s {
    size_t n;
    shard *sh;
    unsigned files, models;
    size_t n_cols;
    const score_def **col_score; /* summary.tsv's columns: a score or NULL */
    size_t n_curve_cols;
    const score_def **curve_score; /* and curve.tsv's */
    size_t feature_col;          /* features.tsv's `feature` column */
    char **cell;                 /* a row split at its tabs */
    size_t cell_cap;
    bn_buf again;                /* a row as the writers make it */
    bn_buf got;                  /* and as the shard has it */
    bn_buf lead;                 /* a configuration's leading key cells */
};

/* The next line (without its newline) in r->buf: 1, 0 at the end, -1 on
 * a read error or a line without its newline (a file cut short). */
static int take(reader *r, bn_error *err)
{
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

static int open_reader(reader *r, const char *dir, const char *file,
                       bn_error *err)
{
    char path[sizeof r->path];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    memcpy(r->path, path, sizeof path);
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
    FILE *fp = fopen(path, "r");
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

/* The score of each column of a header (NULL: a key column, or the
 * epoch), into *score and their count into *n. */
static int score_columns(shard_set *set, bn_buf *h, const score_def ***score,
                         size_t *n, bn_error *err)
{
    if (!h->failed && h->len)
        h->p[h->len - 1] = '\0'; /* the newline */
    *n = h->failed ? 0 : split(set, h->p);
    *score = *n ? calloc(*n, sizeof **score) : NULL;
    if (!*score)
        return bn_fail(err, "out of memory");
    for (size_t i = 0; i < *n; i++)
        if (exp_key_column(set->cell[i]) < 0)
            (*score)[i] = score_find(set->cell[i]);
    return 0;
}

static int layout(shard_set *set, bn_error *err)
{
    bn_buf h = {0};
    out_summary_header(&h, set->models);
    int rc = score_columns(set, &h, &set->col_score, &set->n_cols, err);
    buf_clear(&h);
    out_curve_header(&h, set->models);
    if (rc == 0)
        rc = score_columns(set, &h, &set->curve_score, &set->n_curve_cols,
                           err);
    buf_clear(&h);
    out_features_header(&h, set->models);
    size_t n = h.failed ? 0 : split(set, h.p);
    set->feature_col = 0;
    while (set->feature_col < n &&
           strcmp(set->cell[set->feature_col], "feature") != 0)
        set->feature_col++;
    buf_free(&h);
    return rc;
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
        size_t len = strlen(dirs[i]);
        if (len > BN_PATH_MAX - 32) {
            bn_fail(err, "%.200s...: a path of %zu bytes, more than the "
                         "limit of %d for a shard directory",
                    dirs[i], len, BN_PATH_MAX - 32);
            goto done;
        }
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
            bn_fail(err, "%s and %s are both shard %u/%u",
                    dirs[given[k - 1] - 1], dirs[i], k, m);
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
    int wanted[R_COUNT];
    /* Only the headers of files read: a failed allocation is then always
     * one that matters. */
    bn_buf h[R_COUNT] = {{0}, {0}, {0}, {0}};
    for (int f = 0; f < R_COUNT; f++) {
        wanted[f] = f == R_SUMMARY || (files >> of_file[f] & 1);
        if (wanted[f])
            out_rows_header(&h[f], of_file[f], models);
    }
    int bad = 0;
    for (size_t i = 0; i < set->n && !bad; i++)
        for (int f = 0; f < R_COUNT && !bad; f++)
            if (wanted[f])
                bad = open_reader(&set->sh[i].file[f], set->sh[i].dir,
                                  out_file_get(of_file[f])->file, err) != 0 ||
                      check_header(&set->sh[i].file[f], &h[f], err) != 0;
    for (int f = 0; f < R_COUNT; f++)
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

/* The next row of configuration k: appended to set->got as it is, then
 * split at its tabs in place (set->cell, their count in *n). */
static int take_row(shard_set *set, reader *r, size_t k, size_t *n,
                    bn_error *err)
{
    int rc = take(r, err);
    if (rc <= 0)
        return rc < 0 ? -1
                      : bn_fail(err, "%s: ends before configuration %zu's "
                                     "rows",
                                r->path, k);
    buf_add(&set->got, r->buf, r->len);
    buf_putc(&set->got, '\n');
    *n = split(set, r->buf);
    return set->got.failed || *n == 0 ? bn_fail(err, "out of memory") : 0;
}

/* The rows read (set->got) against the writers' text of the result
 * rebuilt from them (set->again); first is the first row's line. */
static int check_rows(const shard_set *set, const reader *r, size_t first,
                      size_t k, bn_error *err)
{
    if (set->again.failed)
        return bn_fail(err, "out of memory");
    if (set->again.len == set->got.len &&
        memcmp(set->again.p, set->got.p, set->got.len) == 0)
        return 0;
    if (first == r->line)
        return bn_fail(err, "%s line %zu: not configuration %zu's row as "
                            "this experiment's sweep writes it (a damaged "
                            "or edited shard?)",
                       r->path, first, k);
    return bn_fail(err, "%s lines %zu to %zu: not configuration %zu's rows "
                        "as this experiment's sweep writes them (a damaged "
                        "or edited shard?)",
                   r->path, first, r->line, k);
}

/* A row's score cells (split in set->cell, n of them) into res, when
 * the row has the header's n_cols columns. */
static void read_cells(const shard_set *set, const score_def **score,
                       size_t n_cols, size_t n, const pop_t *pop,
                       const run_config *cfg, run_result *res)
{
    for (size_t i = 0; n == n_cols && i < n; i++)
        if (score[i] && score_applies(score[i], cfg))
            read_cell(score[i], pop, set->cell[i], res);
}

static int read_summary(shard_set *set, reader *r, size_t k,
                        const pop_t *pop, const run_config *cfg,
                        run_result *res, bn_error *err)
{
    size_t n;
    buf_clear(&set->got);
    if (take_row(set, r, k, &n, err) != 0)
        return -1;
    /* A cell that does not read leaves its score 0, which the check
     * below finds. */
    read_cells(set, set->col_score, set->n_cols, n, pop, cfg, res);
    buf_clear(&set->again);
    out_summary_row(&set->again, set->models, pop, cfg, res);
    return check_rows(set, r, r->line, k, err);
}

/* The layer's per-feature arrays, in one allocation as layer.c makes
 * them (run_result_free frees it), zeroed. */
static int per_feature(size_t f, run_result *res, bn_error *err)
{
    if (res->running_mean)
        return 0;
    res->running_mean = calloc(6 * (f ? f : 1), sizeof(double));
    if (!res->running_mean)
        return bn_fail(err, "out of memory");
    res->running_var = res->running_mean + f;
    res->true_mean = res->running_mean + 2 * f;
    res->true_var = res->running_mean + 3 * f;
    res->train_eval = res->running_mean + 4 * f;
    res->batch_mean_sq = res->running_mean + 5 * f;
    return 0;
}

/* Cell c of the row just split, as a number (0 when missing: the check
 * that writes the row again finds it). */
static double cell_at(const shard_set *set, size_t n, size_t c)
{
    return n > c ? strtod(set->cell[c], NULL) : 0.0;
}

/* features.tsv's or effective.tsv's rows (file R_FEATURES or
 * R_EFFECTIVE), one a feature, read back and written again. Of
 * effective.tsv's only the run's own batch_mean_sq is read back, the rest
 * is the population's and written again from it. Its leading key columns
 * are features.tsv's, so the feature is in the same column. */
static int read_feature_rows(shard_set *set, shard *sh, int file, size_t k,
                             const pop_t *pop, const run_config *cfg,
                             run_result *res, bn_error *err)
{
    reader *r = &sh->file[file];
    size_t f = pop->f, first = r->line + 1, c = set->feature_col;
    if (per_feature(f, res, err) != 0)
        return -1;
    buf_clear(&set->got);
    for (size_t j = 0; j < f; j++) {
        size_t n;
        if (take_row(set, r, k, &n, err) != 0)
            return -1;
        if (file == R_EFFECTIVE) {
            res->batch_mean_sq[j] = cell_at(set, n, c + 7);
            continue;
        }
        res->true_mean[j] = cell_at(set, n, c + 1);
        res->true_var[j] = cell_at(set, n, c + 2);
        res->running_mean[j] = cell_at(set, n, c + 3);
        res->running_var[j] = cell_at(set, n, c + 4);
        res->train_eval[j] = cell_at(set, n, c + 5);
    }
    buf_clear(&set->again);
    (file == R_EFFECTIVE ? out_effective_rows : out_features_rows)(
        &set->again, set->models, pop, cfg, res);
    return check_rows(set, r, first, k, err);
}

/* A classifier's curve.tsv rows: epochs 1 .. cfg->epochs of this
 * configuration (a run that ends has a row for every epoch), known by its
 * leading key columns and the epoch, each read and written again as
 * summary.tsv's rows are. */
static int read_curve(shard_set *set, reader *r, size_t k, const pop_t *pop,
                      const run_config *cfg, bn_buf *curve, bn_error *err)
{
    buf_clear(&set->lead);
    exp_key_cells(&set->lead, cfg, COL_SUMMARY, 1, 1, "%.17g",
                  RUN_MODEL_BIT(RUN_MODEL_CLASSIFIER));
    if (set->lead.failed)
        return bn_fail(err, "out of memory");
    size_t lead = set->lead.len;
    for (unsigned long epoch = 1; epoch <= cfg->epochs; epoch++) {
        size_t n;
        buf_clear(&set->got);
        if (take_row(set, r, k, &n, err) != 0)
            return -1;
        /* The row as it is (r->buf is split at its tabs now). */
        char e[32];
        int le = snprintf(e, sizeof e, "\t%lu\t", epoch);
        if (r->len < lead + (size_t)le ||
            memcmp(set->got.p, set->lead.p, lead) != 0 ||
            memcmp(set->got.p + lead, e, (size_t)le) != 0)
            return bn_fail(err, "%s line %zu: not configuration %zu's row "
                                "of epoch %lu (a damaged or edited shard?)",
                           r->path, r->line, k, epoch);
        run_result at;
        memset(&at, 0, sizeof at);
        read_cells(set, set->curve_score, set->n_curve_cols, n, pop, cfg,
                   &at);
        buf_clear(&set->again);
        out_curve_row(&set->again, set->models, pop, cfg, epoch, &at);
        if (check_rows(set, r, r->line, k, err) != 0)
            return -1;
        buf_add(curve, set->got.p, set->got.len);
    }
    return 0;
}

int shard_next(shard_set *set, size_t k, const pop_t *pop,
               const run_config *cfg, run_result *res, bn_buf *curve,
               bn_error *err)
{
    shard *sh = &set->sh[k % set->n];
    memset(res, 0, sizeof *res);
    if (read_summary(set, &sh->file[R_SUMMARY], k, pop, cfg, res, err) != 0)
        return -1;
    if ((set->files >> OUT_FEATURES & 1) && cfg->model == RUN_MODEL_LAYER &&
        read_feature_rows(set, sh, R_FEATURES, k, pop, cfg, res, err) != 0)
        return -1;
    if ((set->files >> OUT_EFFECTIVE & 1) && cfg->model == RUN_MODEL_LAYER &&
        read_feature_rows(set, sh, R_EFFECTIVE, k, pop, cfg, res, err) != 0)
        return -1;
    if ((set->files >> OUT_CURVE & 1) && cfg->model == RUN_MODEL_CLASSIFIER)
        return read_curve(set, &sh->file[R_CURVE], k, pop, cfg, curve, err);
    return 0;
}

int shard_finish(shard_set *set, bn_error *err)
{
    for (size_t i = 0; i < set->n; i++)
        for (int f = 0; f < R_COUNT; f++) {
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
        for (int f = 0; f < R_COUNT; f++) {
            if (set->sh[i].file[f].fp)
                fclose(set->sh[i].file[f].fp);
            free(set->sh[i].file[f].buf);
        }
    free(set->sh);
    free(set->col_score);
    free(set->curve_score);
    buf_free(&set->lead);
    free(set->cell);
    buf_free(&set->again);
    buf_free(&set->got);
    free(set);
}
