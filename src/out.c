/* Atomic files and the TSV formats of docs/definitions.md. */
#include "out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int out_open(out_file *of, const char *path, bn_error *err)
{
    memset(of, 0, sizeof *of);
    if (path[0] == '\0')
        return bn_fail(err, "an empty path names no file");
    if (strlen(path) + 16 > sizeof of->tmp)
        return bn_fail(err, "%s: path too long", path);
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
    }
    return 0;
}


void out_abort(out_file *of)
{
    if (of->fp)
        fclose(of->fp);
    of->fp = NULL;
    if (of->tmp[0])
        unlink(of->tmp);
    of->tmp[0] = '\0';
}

/* The summary columns, in docs/definitions.md's order. One table drives
 * the TSV (%.17g) and the reading tables (4 decimals), so they cannot
 * drift. */
typedef enum { COL_TEXT, COL_INT, COL_REAL } col_kind;

typedef struct {
    col_kind kind;
    const char *text;
    unsigned long long i;
    double r;
    char buf[32]; /* for text made on the spot */
} col_value;

static const char *const summary_columns[] = {
    "experiment", "order", "seed", "batch_size", "momentum",
    "momentum_weights", "new_weight", "variance", "epochs", "estimator",
    "updates", "init_weight", "stats_err", "mean_err", "var_err",
    "worst_var_err", "worst_var_feature", "train_eval_rmse",
    "batch_mean_err", "batch_var_err", "props_pass", "props_total",
    /* Settings the summary does not list, for reading tables. */
    "partial", "precise_batches",
};
#define N_COLUMNS (sizeof summary_columns / sizeof *summary_columns)
#define N_SUMMARY (N_COLUMNS - 2)

int out_summary_column(const char *name)
{
    for (size_t i = 0; i < N_COLUMNS; i++)
        if (strcmp(summary_columns[i], name) == 0)
            return (int)i;
    return -1;
}

static col_value column(size_t c, const pop_t *pop, const run_config *cfg,
                        const run_result *r)
{
    const bn_config *l = &cfg->layer;
    col_value v = {COL_REAL, NULL, 0, 0.0, ""};
#define TEXT(s) (v.kind = COL_TEXT, v.text = (s))
#define INT(x) (v.kind = COL_INT, v.i = (unsigned long long)(x))
    switch (c) {
    case 0: TEXT(cfg->experiment); break;
    case 1: TEXT(cfg->order); break;
    case 2: INT(cfg->seed); break;
    case 3: INT(cfg->batch_size); break;
    case 4: v.r = l->momentum; break;
    case 5: TEXT(bn_weights_name(l->weights)); break;
    case 6: v.r = l->p; break;
    case 7: TEXT(bn_variance_name(l->variance)); break;
    case 8: INT(cfg->epochs); break;
    case 9: {
        /* Copied into buf: a pointer into v would not survive the return. */
        char label[32];
        v.kind = COL_TEXT;
        snprintf(v.buf, sizeof v.buf, "%s",
                 run_estimator_label(cfg, label, sizeof label));
        break;
    }
    case 10: INT(r->updates); break;
    case 11: v.r = r->init_weight; break;
    case 12: v.r = r->stats_err; break;
    case 13: v.r = r->mean_err; break;
    case 14: v.r = r->var_err; break;
    case 15: v.r = r->worst_var_err; break;
    case 16: TEXT(pop->spec.features[r->worst_var_feature].name); break;
    case 17: v.r = r->train_eval_rmse; break;
    case 18: v.r = r->batch_mean_err; break;
    case 19: v.r = r->batch_var_err; break;
    case 20: INT(r->props_pass); break;
    case 21: INT(r->props_total); break;
    case 22: TEXT(run_partial_name(cfg->partial)); break;
    default: INT(cfg->precise_batches); break;
    }
#undef TEXT
#undef INT
    return v;
}

static void print_value(FILE *fp, const col_value *v, const char *real_fmt)
{
    if (v->kind == COL_TEXT)
        fputs(v->text ? v->text : v->buf, fp);
    else if (v->kind == COL_INT)
        fprintf(fp, "%llu", v->i);
    else
        fprintf(fp, real_fmt, v->r);
}

void out_summary_header(FILE *fp)
{
    for (size_t c = 0; c < N_SUMMARY; c++)
        fprintf(fp, "%s%s", c ? "\t" : "", summary_columns[c]);
    fputc('\n', fp);
}

void out_summary_row(FILE *fp, const pop_t *pop, const run_config *cfg,
                     const run_result *r)
{
    for (size_t c = 0; c < N_SUMMARY; c++) {
        if (c)
            fputc('\t', fp);
        col_value v = column(c, pop, cfg, r);
        print_value(fp, &v, "%.17g");
    }
    fputc('\n', fp);
}

void out_table_header(FILE *fp, size_t n, const int *cols)
{
    for (size_t k = 0; k < n; k++)
        fprintf(fp, "| %s ", summary_columns[cols[k]]);
    fputs("|\n", fp);
    for (size_t k = 0; k < n; k++)
        fputs("|---", fp);
    fputs("|\n", fp);
}

void out_table_cell(FILE *fp, int col, const pop_t *pop,
                    const run_config *cfg, const run_result *r)
{
    fputs("| ", fp);
    col_value v = column((size_t)col, pop, cfg, r);
    print_value(fp, &v, "%.4f");
    fputc(' ', fp);
}

void out_table_row(FILE *fp, size_t n, const int *cols, const pop_t *pop,
                   const run_config *cfg, const run_result *r)
{
    for (size_t k = 0; k < n; k++)
        out_table_cell(fp, cols[k], pop, cfg, r);
    fputs("|\n", fp);
}

void out_features_header(FILE *fp)
{
    fputs("experiment\torder\tseed\tbatch_size\tmomentum\tmomentum_weights\t"
          "variance\tepochs\testimator\tfeature\ttrue_mean\ttrue_var\t"
          "running_mean\trunning_var\n",
          fp);
}

void out_features_rows(FILE *fp, const pop_t *pop, const run_config *cfg,
                       const run_result *r)
{
    const bn_config *l = &cfg->layer;
    char est[32];
    for (size_t j = 0; j < pop->f; j++)
        fprintf(fp,
                "%s\t%s\t%llu\t%zu\t%.17g\t%s\t%s\t%lu\t%s\t%s\t%.17g\t%.17g\t"
                "%.17g\t%.17g\n",
                cfg->experiment, cfg->order, (unsigned long long)cfg->seed,
                cfg->batch_size, l->momentum, bn_weights_name(l->weights),
                bn_variance_name(l->variance), cfg->epochs,
                run_estimator_label(cfg, est, sizeof est),
                pop->spec.features[j].name,
                pop->mean[j], pop->var[j], r->running_mean[j],
                r->running_var[j]);
}

void out_population(FILE *fp, const pop_t *pop, const size_t *perm)
{
    fputs("row", fp);
    for (size_t j = 0; j < pop->f; j++)
        fprintf(fp, "\t%s", pop->spec.features[j].name);
    fputc('\n', fp);
    for (size_t k = 0; k < pop->n; k++) {
        size_t i = perm ? perm[k] : k;
        fprintf(fp, "%zu", i);
        for (size_t j = 0; j < pop->f; j++)
            fprintf(fp, "\t%.17g", pop->x[i * pop->f + j]);
        fputc('\n', fp);
    }
}
