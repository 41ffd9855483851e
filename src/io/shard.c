/*
 * The shards' files read back, one line at a time (input.h), so a merge
 * holds one configuration's rows per shard whatever the number of
 * configurations, and each file's rows held to the digests its manifest
 * records.
 */
#include "io/shard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "base/input.h"
#include "base/numread.h"
#include "io/digest.h"
#include "study/exp.h"
#include "study/out.h"
#include "study/outfile.h"
#include "model/score.h"

/* A block of configurations' rows of one file and its digest, as the
 * shard's manifest records it. */
typedef struct {
    size_t first, last;
    char hex[65];
} block;

/* One file of a shard, read line by line, and its digests. */
typedef struct {
    input_lines in;
    int open;
    char *buf;    /* the line last taken */
    size_t len;
    block *blocks; /* the manifest's, in order */
    size_t n_blocks, at; /* the block being read */
    size_t block_line;   /* the first line of the block being read */
    digest_sha256 sha;   /* of its rows so far */
} reader;

enum { R_SUMMARY, R_FEATURES, R_CURVE, R_EFFECTIVE, R_COUNT };
/* Each reader's file, as out.h knows it. */
static const int of_file[R_COUNT] = {OUT_SUMMARY, OUT_FEATURES, OUT_CURVE,
                                     OUT_EFFECTIVE};

typedef struct {
    char dir[BN_PATH_MAX];
    unsigned k;  /* shard k of the set's n */
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

size_t shard_block_size(size_t n)
{
    return n > SHARD_BLOCKS ? (n + SHARD_BLOCKS - 1) / SHARD_BLOCKS : 1;
}

static const char *path_of(const reader *r) { return r->in.path; }

/* The next line (without its newline) in r->buf: 1, 0 at the end, -1 on
 * a read error, a NUL byte, a line over the limit or one without its
 * newline (a file cut short). A row is added to the digest of its
 * block. */
static int take(reader *r, bn_error *err)
{
    int rc = input_lines_next(&r->in, &r->buf, &r->len, err);
    if (rc > 0 && r->in.line > 1) {
        digest_add(&r->sha, r->buf, r->len);
        digest_add(&r->sha, "\n", 1);
    }
    return rc;
}

static int open_reader(reader *r, const char *dir, const char *file,
                       bn_error *err)
{
    char path[BN_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    bn_error sub;
    if (input_lines_open(&r->in, path, SHARD_MAX_FILE, SHARD_MAX_LINE,
                         &sub) != 0)
        return bn_fail(err, "%s (a shard of this experiment has it)",
                       sub.msg);
    r->open = 1;
    digest_begin(&r->sha);
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

/* The digests a manifest records, file by file (R_*). */
typedef struct {
    block *b[R_COUNT];
    size_t n[R_COUNT];
} digests;

static void digests_free(digests *d)
{
    for (int f = 0; f < R_COUNT; f++)
        free(d->b[f]);
    memset(d, 0, sizeof *d);
}

/* A shard's manifest is at most this: its sweep's, and a digest line per
 * block of each file. */
#define MANIFEST_MAX ((size_t)4 << 20)

/* Whether the manifest line at p (up to its newline) is compared: the
 * build's rows describe the program, not the results (provenance.h), and
 * the shard's own lines (which shard, its digests) are read apart. */
static int compared(const char *p)
{
    return strncmp(p, "build.", 6) != 0 && strncmp(p, "shard\t", 6) != 0 &&
           strncmp(p, SHARD_DIGEST_KEY "\t", sizeof SHARD_DIGEST_KEY) != 0;
}

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

/* A configuration number: digits only, no leading zero. */
static int config_number(const char *s, size_t len, size_t *out)
{
    size_t v = 0;
    if (len == 0 || len > 12 || (s[0] == '0' && len > 1))
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = 10 * v + (size_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

/* The value of a digest line, "FILE FIRST LAST HEX" (up to its newline),
 * into d. */
static int digest_line(const char *v, digests *d)
{
    const char *w[4];
    size_t len[4], n = 0;
    for (const char *p = v; n < 4 && *p && *p != '\n';) {
        w[n] = p;
        len[n] = strcspn(p, " \n");
        p += len[n];
        n++;
        if (*p == ' ')
            p++;
    }
    if (n != 4 || v[strcspn(v, "\n")] == '\0' ||
        w[3] + len[3] != v + strcspn(v, "\n") || len[3] != 64 ||
        strspn(w[3], "0123456789abcdef") < 64)
        return -1;
    int f = 0;
    while (f < R_COUNT &&
           (strlen(out_file_get(of_file[f])->file) != len[0] ||
            memcmp(out_file_get(of_file[f])->file, w[0], len[0]) != 0))
        f++;
    block b;
    if (f == R_COUNT || d->n[f] == SHARD_BLOCKS ||
        config_number(w[1], len[1], &b.first) != 0 ||
        config_number(w[2], len[2], &b.last) != 0 || b.last < b.first)
        return -1;
    memcpy(b.hex, w[3], 64);
    b.hex[64] = '\0';
    if (!d->b[f] && !(d->b[f] = malloc(SHARD_BLOCKS * sizeof *d->b[f])))
        return -2;
    d->b[f][d->n[f]++] = b;
    return 0;
}

/* A line of the shard's own (which shard it is, a digest) into *k, *n
 * and d. */
static int own_line(const char *path, size_t line, const char *p,
                    unsigned *k, unsigned *n, digests *d, bn_error *err)
{
    if (strncmp(p, "shard\t", 6) == 0) {
        char tail;
        if (sscanf(p + 6, "%u/%u%c", k, n, &tail) != 3 || tail != '\n' ||
            *n < 1 || *n > SHARD_MAX || *k < 1 || *k > *n)
            return bn_fail(err, "%s line %zu: '%.*s' is not a shard K/N "
                                "with 1 <= K <= N <= %d",
                           path, line, line_len(p), p, SHARD_MAX);
        return 0;
    }
    if (strncmp(p, SHARD_DIGEST_KEY "\t", sizeof SHARD_DIGEST_KEY) != 0)
        return 0;
    int rc = digest_line(p + sizeof SHARD_DIGEST_KEY, d);
    if (rc == -2)
        return bn_fail(err, "out of memory");
    if (rc != 0)
        return bn_fail(err, "%s line %zu: '%.*s' is not a digest of a "
                            "shard's rows (FILE FIRST LAST SHA-256, at most "
                            "%d a file)",
                       path, line, line_len(p), p, SHARD_BLOCKS);
    return 0;
}

/* Read dir's manifest, take its shard line into *k and *n and its digests
 * into d, and hold the rest against want. */
static int check_manifest(const char *dir, const bn_buf *want, unsigned *k,
                          unsigned *n, digests *d, bn_error *err)
{
    char path[BN_PATH_MAX + 16], *text;
    size_t len;
    bn_error sub;
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    if (input_read(path, MANIFEST_MAX, 1, &text, &len, &sub) != 0)
        return bn_fail(err, "%s (is %s a shard, written by sweep --shard "
                            "K/N?)",
                       sub.msg, dir);
    *k = *n = 0;
    int rc = 0;
    const char *p = text, *q = want->p ? want->p : "";
    size_t line = 0;
    for (;;) {
        /* The next compared line of each; the shard's own taken out. */
        while (rc == 0 && *p && !compared(p)) {
            rc = own_line(path, ++line, p, k, n, d, err);
            p = next_line(p);
        }
        while (*q && !compared(q))
            q = next_line(q);
        if (rc != 0 || (!*p && !*q))
            break;
        line++;
        int lp = (int)strcspn(p, "\n"), lq = (int)strcspn(q, "\n");
        if (lp != lq || memcmp(p, q, (size_t)lp) != 0) {
            rc = bn_fail(err, "%s line %zu: '%.*s' where this experiment "
                              "file and these settings give '%.*s': the "
                              "shard is of another sweep",
                         path, line, line_len(p), p, line_len(q), q);
            break;
        }
        p = next_line(p);
        q = next_line(q);
    }
    if (rc == 0 && *n == 0)
        rc = bn_fail(err, "%s: no shard line: %s is not a shard (sweep "
                          "--shard K/N writes one)",
                     path, dir);
    input_free(text, len);
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
                       path_of(r));
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
        digests d;
        memset(&d, 0, sizeof d);
        size_t len = strlen(dirs[i]);
        if (len > BN_PATH_MAX - 32) {
            bn_fail(err, "%.200s...: a path of %zu bytes, more than the "
                         "limit of %d for a shard directory",
                    dirs[i], len, BN_PATH_MAX - 32);
            goto done;
        }
        if (check_manifest(dirs[i], manifest, &k, &m, &d, err) != 0) {
            digests_free(&d);
            goto done;
        }
        if (i == 0) {
            total = m;
            set->sh = calloc(m, sizeof *set->sh);
            free(given);
            given = calloc(m, sizeof *given);
            if (!set->sh || !given) {
                digests_free(&d);
                bn_fail(err, "out of memory");
                goto done;
            }
            set->n = m;
            first = k;
        } else if (m != total) {
            digests_free(&d);
            bn_fail(err, "%s is shard %u/%u but %s is shard %u/%u: the "
                         "shards of one sweep split it the same way",
                    dirs[0], first, total, dirs[i], k, m);
            goto done;
        }
        if (given[k - 1]) {
            digests_free(&d);
            bn_fail(err, "%s and %s are both shard %u/%u",
                    dirs[given[k - 1] - 1], dirs[i], k, m);
            goto done;
        }
        given[k - 1] = i + 1;
        shard *sh = &set->sh[k - 1];
        snprintf(sh->dir, sizeof sh->dir, "%s", dirs[i]);
        sh->k = k;
        for (int f = 0; f < R_COUNT; f++) {
            sh->file[f].blocks = d.b[f];
            sh->file[f].n_blocks = d.n[f];
        }
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
        double v;
        if (numread_g17(c, s->relative ? NUMREAD_INF : 0, &v) != 0)
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
                                path_of(r), k);
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
    if (first == r->in.line)
        return bn_fail(err, "%s line %zu: not configuration %zu's row as "
                            "this experiment's sweep writes it (a damaged "
                            "or edited shard?)",
                       path_of(r), first, k);
    return bn_fail(err, "%s lines %zu to %zu: not configuration %zu's rows "
                        "as this experiment's sweep writes them (a damaged "
                        "or edited shard?)",
                   path_of(r), first, r->in.line, k);
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
    return check_rows(set, r, r->in.line, k, err);
}

/* The layer's per-feature arrays, in one allocation as layer.c makes
 * them (run_result_free frees it), zeroed. */
static int per_feature(size_t f, run_result *res, bn_error *err)
{
    if (res->running_mean)
        return 0;
    return run_result_arrays(res, f) != 0 ? bn_fail(err, "out of memory") : 0;
}

/* Cell c of the row just split, as a number (0 when missing: the check
 * that writes the row again finds it). */
static double cell_at(const shard_set *set, size_t n, size_t c)
{
    double v;
    return n > c && numread_g17(set->cell[c], 0, &v) == 0 ? v : 0.0;
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
    size_t f = pop->f, first = r->in.line + 1, c = set->feature_col;
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
                           path_of(r), r->in.line, k, epoch);
        run_result at;
        memset(&at, 0, sizeof at);
        read_cells(set, set->curve_score, set->n_curve_cols, n, pop, cfg,
                   &at);
        buf_clear(&set->again);
        out_curve_row(&set->again, set->models, pop, cfg, epoch, &at);
        if (check_rows(set, r, r->in.line, k, err) != 0)
            return -1;
        buf_add(curve, set->got.p, set->got.len);
    }
    return 0;
}

/* ---- the digests ---- */

/* "s/b.shard-2-of-2/manifest.tsv", for a message. */
static const char *manifest_of(const shard *sh, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/manifest.tsv", sh->dir);
    return buf;
}

/* Before configuration k's rows of r: the block k begins, if it begins
 * one, must be the next the manifest records. */
static int block_begin(const shard *sh, reader *r, size_t k, bn_error *err)
{
    if (r->block_line)
        return 0; /* within a block */
    char m[BN_PATH_MAX + 16];
    if (r->at == r->n_blocks || r->blocks[r->at].first != k)
        return bn_fail(err, "%s: no digest of %s's rows of configuration "
                            "%zu: written by an older bnstudy, or edited "
                            "(sweep the shard again)",
                       manifest_of(sh, m, sizeof m),
                       out_file_get(of_file[r - sh->file])->file, k);
    r->block_line = r->in.line + 1;
    digest_begin(&r->sha);
    return 0;
}

/* After configuration k's rows of r: a block that ends there is held to
 * its digest. */
static int block_end(const shard *sh, reader *r, size_t k, bn_error *err)
{
    const block *b = &r->blocks[r->at];
    if (b->last != k)
        return 0;
    char hex[65], m[BN_PATH_MAX + 16];
    digest_end(&r->sha, hex);
    size_t first = r->block_line, last = r->in.line;
    r->block_line = 0;
    r->at++;
    if (strcmp(hex, b->hex) == 0)
        return 0;
    if (first > last)
        return bn_fail(err, "%s: the digest of %s's configurations %zu to "
                            "%zu is not that of their rows, which are none "
                            "(an edited manifest?)",
                       manifest_of(sh, m, sizeof m),
                       out_file_get(of_file[r - sh->file])->file, b->first,
                       b->last);
    if (first == last)
        return bn_fail(err, "%s line %zu: not the row the shard's manifest "
                            "records (its SHA-256 differs): an edited or "
                            "damaged shard",
                       path_of(r), first);
    return bn_fail(err, "%s lines %zu to %zu: not the rows the shard's "
                        "manifest records for configurations %zu to %zu "
                        "(their SHA-256 differs): an edited or damaged "
                        "shard",
                   path_of(r), first, last, b->first, b->last);
}

/* Configuration k's rows of every file of sh that is read. */
static int read_rows(shard_set *set, shard *sh, size_t k, const pop_t *pop,
                     const run_config *cfg, run_result *res, bn_buf *curve,
                     bn_error *err)
{
    int layer = cfg->model == RUN_MODEL_LAYER;
    if (read_summary(set, &sh->file[R_SUMMARY], k, pop, cfg, res, err) != 0)
        return -1;
    if (sh->file[R_FEATURES].open && layer &&
        read_feature_rows(set, sh, R_FEATURES, k, pop, cfg, res, err) != 0)
        return -1;
    if (sh->file[R_EFFECTIVE].open && layer &&
        read_feature_rows(set, sh, R_EFFECTIVE, k, pop, cfg, res, err) != 0)
        return -1;
    if (sh->file[R_CURVE].open && cfg->model == RUN_MODEL_CLASSIFIER)
        return read_curve(set, &sh->file[R_CURVE], k, pop, cfg, curve, err);
    return 0;
}

int shard_next(shard_set *set, size_t k, const pop_t *pop,
               const run_config *cfg, run_result *res, bn_buf *curve,
               bn_error *err)
{
    shard *sh = &set->sh[k % set->n];
    memset(res, 0, sizeof *res);
    for (int f = 0; f < R_COUNT; f++)
        if (sh->file[f].open && block_begin(sh, &sh->file[f], k, err) != 0)
            return -1;
    if (read_rows(set, sh, k, pop, cfg, res, curve, err) != 0)
        return -1;
    for (int f = 0; f < R_COUNT; f++)
        if (sh->file[f].open && block_end(sh, &sh->file[f], k, err) != 0)
            return -1;
    return 0;
}

int shard_finish(shard_set *set, bn_error *err)
{
    char m[BN_PATH_MAX + 16];
    for (size_t i = 0; i < set->n; i++)
        for (int f = 0; f < R_COUNT; f++) {
            shard *sh = &set->sh[i];
            reader *r = &sh->file[f];
            if (!r->open)
                continue;
            int rc = take(r, err);
            if (rc < 0)
                return -1;
            if (rc > 0)
                return bn_fail(err, "%s line %zu: a row past the shard's "
                                    "last configuration",
                               path_of(r), r->in.line);
            if (r->block_line || r->at < r->n_blocks)
                return bn_fail(err, "%s: a digest of %s's configurations "
                                    "%zu to %zu, past the shard's own (an "
                                    "edited manifest?)",
                               manifest_of(sh, m, sizeof m),
                               out_file_get(of_file[f])->file,
                               r->blocks[r->at].first,
                               r->blocks[r->at].last);
        }
    return 0;
}

void shard_close(shard_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; set->sh && i < set->n; i++)
        for (int f = 0; f < R_COUNT; f++) {
            reader *r = &set->sh[i].file[f];
            if (r->open)
                input_lines_close(&r->in);
            free(r->blocks);
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
