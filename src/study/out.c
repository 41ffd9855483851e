/* Atomic files and the TSV formats of docs/definitions.md. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "study/out.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/numread.h"
#include "pop/convpop.h"
#include "study/exp.h"
#include "study/outfile.h"
#include "model/score.h"

int out_open(out_file *of, const char *path, bn_error *err)
{
    memset(of, 0, sizeof *of);
    if (path[0] == '\0')
        return bn_fail(err, "an empty path names no file");
    if (strlen(path) + 16 > sizeof of->tmp)
        return bn_fail(err, "a path of %zu bytes, more than the limit of "
                            "%zu",
                       strlen(path), sizeof of->tmp - 16);
    /* Renaming onto a device, a directory or a link would replace it, not
     * write through it: only regular files (or new ones) are written. */
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return bn_fail(err, "%s: not a regular file", path);
    strcpy(of->path, path);
    snprintf(of->tmp, sizeof of->tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(of->tmp);
    if (fd < 0) {
        int e = errno;
        of->tmp[0] = '\0';
        return bn_fail(err, "%s: cannot write: %s", path, strerror(e));
    }
    of->cleanup = cleanup_remember(of->tmp, 0);
    /* mkstemp makes the file private; results are meant to be read. */
    fchmod(fd, 0644);
    of->fp = fdopen(fd, "w");
    if (!of->fp) {
        int e = errno;
        close(fd);
        unlink(of->tmp);
        of->tmp[0] = '\0';
        return bn_fail(err, "%s: cannot write: %s", path, strerror(e));
    }
    return 0;
}

int out_finish(out_file *of, bn_error *err)
{
    if (!of->fp)
        return 0;
    int bad = ferror(of->fp);
    bad |= fclose(of->fp) != 0;
    of->fp = NULL;
    if (!bad)
        return 0;
    int e = errno;
    unlink(of->tmp);
    of->tmp[0] = '\0';
    cleanup_forget(of->cleanup);
    return bn_fail(err, "%s: cannot write: %s", of->path, strerror(e));
}

int out_commit_all(out_file *files, size_t n, bn_error *err)
{
    /* Every file complete on disk before the first rename, so a failure
     * leaves the old results whole. */
    for (size_t i = 0; i < n; i++)
        if (out_finish(&files[i], err) != 0)
            return -1;
    for (size_t i = 0; i < n; i++) {
        if (!files[i].tmp[0])
            continue;
        if (rename(files[i].tmp, files[i].path) != 0) {
            int e = errno;
            return bn_fail(err, "%s: cannot write: %s", files[i].path,
                           strerror(e));
        }
        files[i].tmp[0] = '\0';
        cleanup_forget(files[i].cleanup);
    }
    return 0;
}


void out_abort(out_file *of)
{
    if (of->fp)
        fclose(of->fp);
    of->fp = NULL;
    if (of->tmp[0]) {
        unlink(of->tmp);
        cleanup_forget(of->cleanup);
    }
    of->tmp[0] = '\0';
}

/* The directory of p, resolved, and its last name. */
static int split_real(const char *p, char dir[PATH_MAX], const char **name)
{
    const char *slash = strrchr(p, '/');
    char head[PATH_MAX];
    *name = slash ? slash + 1 : p;
    if (!slash)
        snprintf(head, sizeof head, ".");
    else if (slash == p)
        snprintf(head, sizeof head, "/");
    else if (snprintf(head, sizeof head, "%.*s", (int)(slash - p), p) >=
             (int)sizeof head)
        return -1;
    return realpath(head, dir) ? 0 : -1;
}

int out_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (strcmp(a, b) == 0)
        return 1;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char da[PATH_MAX], db[PATH_MAX];
    const char *na, *nb;
    return split_real(a, da, &na) == 0 && split_real(b, db, &nb) == 0 &&
           strcmp(da, db) == 0 && strcmp(na, nb) == 0;
}

int out_inputs_add(out_inputs *ins, const char *path, bn_error *err)
{
    if (!path)
        return 0;
    struct stat st;
    if (stat(path, &st) != 0)
        return bn_fail(err, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = sizeof ins->file / sizeof ins->file[0];
    if (ins->n == cap)
        return bn_fail(err, "more than %zu input files", cap);
    ins->file[ins->n].path = path;
    ins->file[ins->n].dev = (unsigned long long)st.st_dev;
    ins->file[ins->n].ino = (unsigned long long)st.st_ino;
    ins->n++;
    return 0;
}

int out_check_not_input(const out_inputs *ins, const char *path,
                        bn_error *err)
{
    struct stat st;
    if (!ins || stat(path, &st) != 0)
        return 0; /* a file that does not exist is no input */
    for (size_t i = 0; i < ins->n; i++)
        if ((unsigned long long)st.st_dev == ins->file[i].dev &&
            (unsigned long long)st.st_ino == ins->file[i].ino)
            return bn_fail(err,
                           "%s is the input file %s: an output never "
                           "replaces an input",
                           path, ins->file[i].path);
    return 0;
}

unsigned out_column_cells(const char *name)
{
    /* distribution.tsv's summaries of a score across seeds. */
    static const char *const across[] = {"mean", "sd", "p05", "p50", "p95"};
    int k = exp_key_column(name);
    if (k >= 0) {
        const key_def *d = exp_key((key_id)k);
        run_config cfg;
        key_cell c;
        run_default_config(&cfg);
        memset(&c, 0, sizeof c);
        d->get(&cfg, &c);
        if (c.kind == CELL_TEXT || d->word)
            return OUT_CELL_TEXT;
        return d->models != RUN_MODEL_BIT(RUN_MODEL_COUNT) - 1
                   ? NUMREAD_DASH : 0;
    }
    const score_def *s = score_find(name);
    if (s && s->kind == SCORE_FEATURE)
        return OUT_CELL_TEXT;
    if (s)
        return NUMREAD_DASH | (s->relative ? NUMREAD_INF : 0);
    if (strcmp(name, "feature") == 0 || strcmp(name, "score") == 0)
        return OUT_CELL_TEXT;
    /* effective.tsv's: `-` where the batch is every sample and no ordering
     * moves its mean (out_effective_rows). */
    static const char *const effective[] = {"count_fpc", "n_eff", "ratio"};
    for (size_t i = 0; i < sizeof effective / sizeof *effective; i++)
        if (strcmp(name, effective[i]) == 0)
            return NUMREAD_DASH;
    for (size_t i = 0; i < sizeof across / sizeof *across; i++)
        if (strcmp(name, across[i]) == 0)
            return NUMREAD_INF;
    return 0;
}

static void column_cell(const exp_column *col, const pop_t *pop,
                        const run_config *cfg, const run_result *r,
                        key_cell *c)
{
    key_cell_clear(c);
    if (!col->score) {
        exp_key((key_id)col->key)->get(cfg, c);
        return;
    }
    const score_def *s = col->score;
    const char *at = (const char *)r + s->offset;
    if (!score_applies(s, cfg)) {
        c->kind = CELL_TEXT;
        c->text = "-"; /* another model's score */
        return;
    }
    size_t u;
    switch (s->kind) {
    case SCORE_REAL:
        c->kind = CELL_REAL;
        memcpy(&c->r, at, sizeof c->r);
        break;
    case SCORE_COUNT:
        memcpy(&u, at, sizeof u);
        c->kind = CELL_INT;
        c->u = u;
        break;
    case SCORE_FEATURE:
        memcpy(&u, at, sizeof u);
        c->kind = CELL_TEXT;
        c->text = pop->names[u];
        break;
    }
}

/* The scores shown for models, in column order; NULL if there are more
 * than kept holds. Every row of a file asks the same, so the last answer
 * is kept, per thread. */
static const score_def *const *shown_scores(unsigned models, size_t *n)
{
    static _Thread_local struct {
        unsigned models;
        int valid;
        size_t n;
        const score_def *s[128];
    } last;
    if (!last.valid || last.models != models) {
        const score_def *sd;
        size_t k = 0;
        last.valid = 0; /* the list is rewritten: an overflow leaves none */
        for (size_t i = 0; (sd = score_get(i)) != NULL; i++) {
            if (!run_models_show(sd->models, models))
                continue;
            if (k == sizeof last.s / sizeof *last.s)
                return NULL;
            last.s[k++] = sd;
        }
        last.n = k, last.models = models, last.valid = 1;
    }
    *n = last.n;
    return last.s;
}

static void score_cell(bn_buf *fp, const score_def *sd, const pop_t *pop,
                       const run_config *cfg, const run_result *r)
{
    exp_column col = {-1, sd};
    key_cell c;
    column_cell(&col, pop, cfg, r, &c);
    buf_putc(fp, '\t');
    if (c.kind == CELL_REAL)
        buf_g17(fp, c.r); /* exp_cell_print's, without asking the format */
    else
        exp_cell_print(fp, &c, "%.17g");
}

static void score_cells(bn_buf *fp, unsigned models, const pop_t *pop,
                        const run_config *cfg, const run_result *r)
{
    size_t n;
    const score_def *const *shown = shown_scores(models, &n);
    if (shown) {
        for (size_t i = 0; i < n; i++)
            score_cell(fp, shown[i], pop, cfg, r);
        return;
    }
    const score_def *sd;
    for (size_t i = 0; (sd = score_get(i)) != NULL; i++)
        if (run_models_show(sd->models, models))
            score_cell(fp, sd, pop, cfg, r);
}

/* A row of summary.tsv's columns, or curve.tsv's, which has `epoch`
 * after the study's key columns: its header (cfg NULL) or its cells. */
static void summary_line(bn_buf *fp, unsigned models, const pop_t *pop,
                         const run_config *cfg, const char *epoch,
                         const run_result *r)
{
    if (cfg)
        exp_key_cells(fp, cfg, COL_SUMMARY, 1, 1, "%.17g", models);
    else
        exp_key_header(fp, COL_SUMMARY, 1, 1, models);
    if (epoch)
        buf_printf(fp, "\t%s", epoch);
    const score_def *sd;
    for (size_t i = 0; !cfg && (sd = score_get(i)) != NULL; i++)
        if (run_models_show(sd->models, models))
            buf_printf(fp, "\t%s", sd->name);
    if (cfg)
        score_cells(fp, models, pop, cfg, r);
    if (cfg)
        exp_key_cells(fp, cfg, COL_SUMMARY, 0, 0, "%.17g", models);
    else
        exp_key_header(fp, COL_SUMMARY, 0, 0, models);
    buf_putc(fp, '\n');
}

void out_summary_header(bn_buf *fp, unsigned models)
{
    summary_line(fp, models, NULL, NULL, NULL, NULL);
}

void out_summary_row(bn_buf *fp, unsigned models, const pop_t *pop,
                     const run_config *cfg, const run_result *r)
{
    summary_line(fp, models, pop, cfg, NULL, r);
}

/* curve.tsv has only the classifier's rows, with a declared network's
 * and the devices' columns when the experiment's models have them. The
 * batch-dependence scores are made once, after training, not an epoch's,
 * so they are not its columns (RUN_DEP_EXT stays out). */
#define CURVE_MODELS(m)                                                    \
    (RUN_MODEL_BIT(RUN_MODEL_CLASSIFIER) | ((m) & (RUN_NET_EXT | RUN_DEV_EXT)))

void out_curve_header(bn_buf *fp, unsigned models)
{
    summary_line(fp, CURVE_MODELS(models), NULL, NULL, "epoch", NULL);
}

void out_curve_row(bn_buf *fp, unsigned models, const pop_t *pop,
                   const run_config *cfg, unsigned long epoch,
                   const run_result *r)
{
    char e[24];
    snprintf(e, sizeof e, "%lu", epoch);
    summary_line(fp, CURVE_MODELS(models), pop, cfg, e, r);
}

void out_table_header(bn_buf *fp, size_t n, const exp_column *cols)
{
    for (size_t k = 0; k < n; k++)
        buf_printf(fp, "| %s ", exp_column_name(&cols[k]));
    buf_puts(fp, "|\n");
    for (size_t k = 0; k < n; k++)
        buf_puts(fp, "|---");
    buf_puts(fp, "|\n");
}

void out_table_cell(bn_buf *fp, const exp_column *col, const pop_t *pop,
                    const run_config *cfg, const run_result *r)
{
    key_cell c;
    column_cell(col, pop, cfg, r, &c);
    buf_puts(fp, "| ");
    exp_cell_print(fp, &c, "%.4f");
    buf_putc(fp, ' ');
}

void out_table_row(bn_buf *fp, size_t n, const exp_column *cols,
                   const pop_t *pop, const run_config *cfg,
                   const run_result *r)
{
    for (size_t k = 0; k < n; k++)
        out_table_cell(fp, &cols[k], pop, cfg, r);
    buf_puts(fp, "|\n");
}

void out_features_header(bn_buf *fp, unsigned models)
{
    exp_key_header(fp, COL_FEATURES, 1, 1, models);
    buf_puts(fp, "\tfeature\ttrue_mean\ttrue_var\trunning_mean\trunning_var"
                 "\ttrain_eval_rmse");
    exp_key_header(fp, COL_FEATURES, 0, 0, models);
    buf_putc(fp, '\n');
}

void out_features_rows(bn_buf *fp, unsigned models, const pop_t *pop,
                       const run_config *cfg, const run_result *r)
{
    for (size_t j = 0; j < pop->f; j++) {
        exp_key_cells(fp, cfg, COL_FEATURES, 1, 1, "%.17g", models);
        buf_printf(fp, "\t%s\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g",
                pop->names[j], r->true_mean[j], r->true_var[j],
                r->running_mean[j], r->running_var[j], r->train_eval[j]);
        exp_key_cells(fp, cfg, COL_FEATURES, 0, 0, "%.17g", models);
        buf_putc(fp, '\n');
    }
}

void out_effective_header(bn_buf *fp, unsigned models)
{
    exp_key_header(fp, COL_FEATURES, 1, 1, models);
    buf_puts(fp, "\tfeature\ttrue_var\tcount\tcount_fpc\tbatch_mean_var"
                 "\tn_eff\tratio\tbatch_mean_sq");
    exp_key_header(fp, COL_FEATURES, 0, 0, models);
    buf_putc(fp, '\n');
}

void out_effective_rows(bn_buf *fp, unsigned models, const pop_t *pop,
                        const run_config *cfg, const run_result *r)
{
    size_t hw = pop->sample_rows > 1 ? pop->sample_rows : 1;
    for (size_t j = 0; j < pop->f; j++) {
        exp_key_cells(fp, cfg, COL_FEATURES, 1, 1, "%.17g", models);
        buf_printf(fp, "\t%s\t%.17g", pop->names[j], pop->var[j]);
        convpop_neff ne;
        bn_error err;
        /* A batch of every sample is the population itself: no ordering
         * moves its mean, and there is no count to set against. */
        if (convpop_effective_rows(pop->x, pop->n, pop->f, hw, j,
                                   pop->var[j], cfg->batch_size, &ne,
                                   &err) == 0)
            buf_printf(fp, "\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g", ne.count,
                       ne.count_fpc, ne.var_batch, ne.n_eff, ne.ratio);
        else
            buf_printf(fp, "\t%zu\t-\t0\t-\t-", pop->n);
        buf_printf(fp, "\t%.17g", r->batch_mean_sq[j]);
        exp_key_cells(fp, cfg, COL_FEATURES, 0, 0, "%.17g", models);
        buf_putc(fp, '\n');
    }
}

void out_rows_header(bn_buf *fp, int file, unsigned models)
{
    switch (file) {
    case OUT_SUMMARY:
        out_summary_header(fp, models);
        break;
    case OUT_FEATURES:
        out_features_header(fp, models);
        break;
    case OUT_CURVE:
        out_curve_header(fp, models);
        break;
    case OUT_EFFECTIVE:
        out_effective_header(fp, models);
        break;
    }
}

void out_population(bn_buf *fp, const pop_t *pop, const size_t *perm)
{
    /* The label and group columns after the features, each once. */
    const pop_factor *fac[2] = {&pop->label, &pop->group};
    int show[2] = {pop->label.column != NULL,
                   pop->group.column != NULL &&
                       !(pop->label.column &&
                         strcmp(pop->label.column, pop->group.column) == 0)};
    buf_puts(fp, "row");
    for (size_t j = 0; j < pop->f; j++)
        buf_printf(fp, "\t%s", pop->names[j]);
    for (int c = 0; c < 2; c++)
        if (show[c])
            buf_printf(fp, "\t%s", fac[c]->column);
    buf_putc(fp, '\n');
    for (size_t k = 0; k < pop->n; k++) {
        size_t i = perm ? perm[k] : k;
        buf_printf(fp, "%zu", pop->origin ? pop->origin[i] : i);
        for (size_t j = 0; j < pop->f; j++)
            buf_printf(fp, "\t%.17g", pop->x[i * pop->f + j]);
        for (int c = 0; c < 2; c++)
            if (show[c])
                buf_printf(fp, "\t%s", fac[c]->levels[fac[c]->of_row[i]]);
        buf_putc(fp, '\n');
    }
}
