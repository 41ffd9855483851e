/* Atomic files and the TSV formats of STUDY.md section 7. */
#include "out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int out_open(out_file *of, const char *path, bn_error *err)
{
    memset(of, 0, sizeof *of);
    if (strlen(path) + 16 > sizeof of->tmp)
        return bn_fail(err, "%s: path too long", path);
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

int out_commit(out_file *of, bn_error *err)
{
    int bad = ferror(of->fp);
    bad |= fclose(of->fp) != 0;
    of->fp = NULL;
    if (!bad && rename(of->tmp, of->path) == 0) {
        of->tmp[0] = '\0';
        return 0;
    }
    int e = errno;
    unlink(of->tmp);
    of->tmp[0] = '\0';
    return bn_fail(err, "%s: cannot write: %s", of->path, strerror(e));
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

void out_summary_header(FILE *fp)
{
    fputs("experiment\torder\tseed\tbatch_size\tmomentum\tmomentum_weights\t"
          "new_weight\tvariance\tepochs\testimator\tupdates\tinit_weight\t"
          "stats_err\tmean_err\tvar_err\tworst_var_err\tworst_var_feature\t"
          "train_eval_rmse\tbatch_mean_err\tbatch_var_err\tprops_pass\t"
          "props_total\n",
          fp);
}

void out_summary_row(FILE *fp, const pop_t *pop, const run_config *cfg,
                     const run_result *r)
{
    const bn_config *l = &cfg->layer;
    fprintf(fp,
            "%s\t%s\t%llu\t%zu\t%.17g\t%s\t%.17g\t%s\t%lu\t%s\t%zu\t%.17g\t"
            "%.17g\t%.17g\t%.17g\t%.17g\t%s\t%.17g\t%.17g\t%.17g\t%zu\t%zu\n",
            cfg->experiment, cfg->order, (unsigned long long)cfg->seed,
            cfg->batch_size, l->momentum, bn_weights_name(l->weights), l->p,
            bn_variance_name(l->variance), cfg->epochs,
            bn_estimator_name(l->estimator), r->updates, r->init_weight,
            r->stats_err, r->mean_err, r->var_err, r->worst_var_err,
            pop->spec.features[r->worst_var_feature].name,
            r->train_eval_rmse, r->batch_mean_err, r->batch_var_err,
            r->props_pass, r->props_total);
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
    for (size_t j = 0; j < pop->f; j++)
        fprintf(fp,
                "%s\t%s\t%llu\t%zu\t%.17g\t%s\t%s\t%lu\t%s\t%s\t%.17g\t%.17g\t"
                "%.17g\t%.17g\n",
                cfg->experiment, cfg->order, (unsigned long long)cfg->seed,
                cfg->batch_size, l->momentum, bn_weights_name(l->weights),
                bn_variance_name(l->variance), cfg->epochs,
                bn_estimator_name(l->estimator), pop->spec.features[j].name,
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
