/*
 * Summaries across seeds: for each group of configurations that differ only
 * in batch size and seed (exp_index), each batch size's seeds summarised.
 */
#include "dist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "num.h"
#include "out.h"
#include "score.h"

/* A configuration's key columns and the seed count, as the first columns
 * of a row (trail: the key columns after the file's own). */
static void config_columns(FILE *fp, const run_config *c, size_t seeds,
                           unsigned models)
{
    exp_key_cells(fp, c, COL_SEEDS, 1, 1, "%.17g", models);
    fprintf(fp, "\t%zu", seeds);
}

static void config_header(FILE *fp, unsigned models)
{
    exp_key_header(fp, COL_SEEDS, 1, 1, models);
    fputs("\tseeds", fp);
}

/* Mean and sd (divisor n - 1) by num_moments, in the seeds' order. */
static void mean_sd(const double *v, size_t n, double *mean, double *sd)
{
    double ss;
    num_moments(n, 1, v, mean, &ss);
    *sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
}

dist_summary dist_summarise(double *v, size_t n)
{
    dist_summary s;
    mean_sd(v, n, &s.mean, &s.sd);
    num_sort(v, n);
    s.p05 = num_quantile_sorted(v, n, 0.05);
    s.p50 = num_quantile_sorted(v, n, 0.50);
    s.p95 = num_quantile_sorted(v, n, 0.95);
    return s;
}

int dist_write(const exp_t *e, unsigned models, const pop_t *pop,
               const run_config *cfgs,
               const run_result *res, FILE *dist, FILE *expect, FILE *table,
               bn_error *err)
{
    size_t nb = e->n[KEY_BATCH_SIZE], ns = e->n[KEY_SEED];
    size_t groups = exp_count(e) / (nb * ns);
    size_t n_scores = 0;
    while (score_get(n_scores))
        n_scores++;
    double *v = malloc(ns * sizeof *v);
    dist_summary *sum = malloc(n_scores * sizeof *sum);
    if (!v || !sum) {
        free(v);
        free(sum);
        return bn_fail(err, "out of memory");
    }
    if (dist) {
        config_header(dist, models);
        fputs("\tscore\tmean\tsd\tp05\tp50\tp95", dist);
        exp_key_header(dist, COL_SEEDS, 0, 0, models);
        fputc('\n', dist);
    }
    if (expect) {
        config_header(expect, models);
        fputs("\texpected_mean_err\tmc_mean_err\texpected_mean_err_sq\t"
              "mc_mean_err_sq\tmc_se\tz", expect);
        exp_key_header(expect, COL_SEEDS, 0, 0, models);
        fputc('\n', expect);
    }
    out_column cols[EXP_MAX_COLUMNS];
    for (size_t c = 0; c < e->n_table; c++)
        out_column_find(e->table[c], &cols[c]);
    if (table)
        out_table_header(table, e->n_table, cols);

    for (size_t r = 0; r < groups; r++) {
        for (size_t ib = 0; ib < nb; ib++) {
            const run_config *c = &cfgs[exp_index(e, r, 0, ib)];
            for (size_t s = 0; s < n_scores; s++) {
                const score_def *sd = score_get(s);
                if (!sd->summarised || !score_applies(sd, c))
                    continue;
                for (size_t is = 0; is < ns; is++)
                    v[is] = score_value(sd, &res[exp_index(e, r, is, ib)]);
                sum[s] = dist_summarise(v, ns);
                if (!dist)
                    continue;
                config_columns(dist, c, ns, models);
                fprintf(dist, "\t%s\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g",
                        sd->name, sum[s].mean, sum[s].sd, sum[s].p05,
                        sum[s].p50, sum[s].p95);
                exp_key_cells(dist, c, COL_SEEDS, 0, 0, "%.17g", models);
                fputc('\n', dist);
            }
            /* The reading table: mean [p5, p95] for the summarised scores,
             * the first seed's value for the rest. */
            for (size_t k = 0; table && k < e->n_table; k++) {
                const score_def *sd = cols[k].score;
                if (sd && sd->summarised && score_applies(sd, c)) {
                    size_t s = (size_t)(sd - score_get(0));
                    fprintf(table, "| %.4f [%.4f, %.4f] ", sum[s].mean,
                            sum[s].p05, sum[s].p95);
                } else {
                    out_table_cell(table, &cols[k], pop, c,
                                   &res[exp_index(e, r, 0, ib)]);
                }
            }
            if (table)
                fputs("|\n", table);

            /* The closed form exists for some orders only, and says so. */
            double want;
            if (!expect || expect_mean_err_sq(pop, c, &want, NULL) != 0)
                continue;
            for (size_t is = 0; is < ns; is++) {
                double m = res[exp_index(e, r, is, ib)].mean_err;
                v[is] = m * m;
            }
            double mc, sd;
            mean_sd(v, ns, &mc, &sd);
            double se = sd / sqrt((double)ns);
            config_columns(expect, c, ns, models);
            fprintf(expect, "\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t",
                    sqrt(want), sqrt(mc), want, mc, se);
            /* Where every ordering recovers the mean exactly, the shuffles'
             * spread is rounding and a deviation in it means nothing. */
            if (want > 0.0 && se > 0.0)
                fprintf(expect, "%.17g", (mc - want) / se);
            else
                fputs("nan", expect);
            exp_key_cells(expect, c, COL_SEEDS, 0, 0, "%.17g", models);
            fputc('\n', expect);
        }
    }
    free(sum);
    free(v);
    return 0;
}
