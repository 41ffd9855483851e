/*
 * Summaries across seeds: for each group of configurations that differ only
 * in batch size and seed (exp_index), each batch size's seeds summarised.
 */
#include "study/dist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/expect.h"
#include "base/num.h"
#include "study/out.h"
#include "model/score.h"

/* A configuration's key columns and the seed count, as the first columns
 * of a row (trail: the key columns after the file's own). */
static void config_columns(bn_buf *fp, const run_config *c, size_t seeds,
                           unsigned models)
{
    exp_key_cells(fp, c, COL_SEEDS, 1, 1, "%.17g", models);
    buf_printf(fp, "\t%zu", seeds);
}

static void config_header(bn_buf *fp, unsigned models)
{
    exp_key_header(fp, COL_SEEDS, 1, 1, models);
    buf_puts(fp, "\tseeds");
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
    /* The three order statistics selected, not the whole group sorted:
     * the same bits (num.h), a sweep's summaries several times sooner. */
    static const double q[3] = {0.05, 0.50, 0.95};
    double p[3];
    if (num_quantiles(v, n, q, 3, p) == 0) {
        s.p05 = p[0], s.p50 = p[1], s.p95 = p[2];
        return s;
    }
    num_sort(v, n);
    s.p05 = num_quantile_sorted(v, n, 0.05);
    s.p50 = num_quantile_sorted(v, n, 0.50);
    s.p95 = num_quantile_sorted(v, n, 0.95);
    return s;
}

/* One group's results: what the summaries need of each configuration
 * (every summarised score, by score, seed and batch size) and the first
 * seed's configuration and result of each batch size, whose key columns
 * and unsummarised cells the rows show. */
struct dist_acc_s {
    const exp_t *e;
    const pop_t *pop;
    unsigned models;
    size_t nb, ns, n_scores;
    double *v;          /* n_scores x ns x nb */
    double *scratch;    /* ns */
    dist_summary *sum;  /* n_scores */
    run_config *cfg0;   /* nb */
    run_result *res0;   /* nb */
    /* The summarised scores that apply to cfg0[ib], by batch size: the
     * same for every seed (group_rows reads every seed's value of them),
     * so found once and not asked of every configuration. */
    size_t *live;       /* nb x n_scores */
    size_t *n_live;     /* nb */
    exp_column cols[EXP_MAX_COLUMNS];
};

size_t dist_bytes(const exp_t *e)
{
    size_t nb = e->n[KEY_BATCH_SIZE], ns = e->n[KEY_SEED], n_scores = 0;
    while (score_get(n_scores))
        n_scores++;
    return sizeof(dist_acc) + (n_scores * ns * nb + ns) * sizeof(double) +
           n_scores * sizeof(dist_summary) +
           nb * (sizeof(run_config) + sizeof(run_result)) +
           nb * (n_scores + 1) * sizeof(size_t);
}

dist_acc *dist_new(const exp_t *e, unsigned models, const pop_t *pop)
{
    dist_acc *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->e = e;
    a->pop = pop;
    a->models = models;
    a->nb = e->n[KEY_BATCH_SIZE];
    a->ns = e->n[KEY_SEED];
    while (score_get(a->n_scores))
        a->n_scores++;
    a->v = malloc(a->n_scores * a->ns * a->nb * sizeof *a->v);
    a->scratch = malloc(a->ns * sizeof *a->scratch);
    a->sum = malloc(a->n_scores * sizeof *a->sum);
    a->cfg0 = malloc(a->nb * sizeof *a->cfg0);
    a->res0 = malloc(a->nb * sizeof *a->res0);
    a->live = malloc(a->nb * a->n_scores * sizeof *a->live);
    a->n_live = calloc(a->nb, sizeof *a->n_live);
    if (!a->v || !a->scratch || !a->sum || !a->cfg0 || !a->res0 ||
        !a->live || !a->n_live) {
        dist_free(a);
        return NULL;
    }
    for (size_t c = 0; c < e->n_table; c++)
        exp_column_find(e->table[c], &a->cols[c]);
    return a;
}

void dist_free(dist_acc *a)
{
    if (!a)
        return;
    free(a->v);
    free(a->scratch);
    free(a->sum);
    free(a->cfg0);
    free(a->res0);
    free(a->live);
    free(a->n_live);
    free(a);
}

void dist_headers(const dist_acc *a, bn_buf *dist, bn_buf *expect,
                  bn_buf *table)
{
    unsigned models = a->models;
    if (dist) {
        config_header(dist, models);
        buf_puts(dist, "\tscore\tmean\tsd\tp05\tp50\tp95");
        exp_key_header(dist, COL_SEEDS, 0, 0, models);
        buf_putc(dist, '\n');
    }
    if (expect) {
        config_header(expect, models);
        buf_puts(expect, "\texpected_mean_err\tmc_mean_err\t"
                         "expected_mean_err_sq\tmc_mean_err_sq\tmc_se\tz\t"
                         "expected_bias");
        exp_key_header(expect, COL_SEEDS, 0, 0, models);
        buf_putc(expect, '\n');
    }
    if (table)
        out_table_header(table, a->e->n_table, a->cols);
}

/* The rows of a complete group, batch size by batch size. */
static int group_rows(dist_acc *a, bn_buf *dist, bn_buf *expect,
                      bn_buf *table, bn_error *err)
{
    const exp_t *e = a->e;
    size_t nb = a->nb, ns = a->ns, n_scores = a->n_scores;
    unsigned models = a->models;
    double *v = a->scratch;
    dist_summary *sum = a->sum;
    for (size_t ib = 0; ib < nb; ib++) {
        const run_config *c = &a->cfg0[ib];
        for (size_t s = 0; s < n_scores; s++) {
            const score_def *sd = score_get(s);
            if (!sd->summarised || !score_applies(sd, c) ||
                !run_models_show(sd->models, models))
                continue;
            for (size_t is = 0; is < ns; is++)
                v[is] = a->v[(s * ns + is) * nb + ib];
            sum[s] = dist_summarise(v, ns);
            if (!dist)
                continue;
            config_columns(dist, c, ns, models);
            buf_printf(dist, "\t%s\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g",
                       sd->name, sum[s].mean, sum[s].sd, sum[s].p05,
                       sum[s].p50, sum[s].p95);
            exp_key_cells(dist, c, COL_SEEDS, 0, 0, "%.17g", models);
            buf_putc(dist, '\n');
        }
        /* The reading table: mean [p5, p95] for the summarised scores,
         * the first seed's value for the rest. */
        for (size_t k = 0; table && k < e->n_table; k++) {
            const score_def *sd = a->cols[k].score;
            if (sd && sd->summarised && score_applies(sd, c)) {
                size_t s = (size_t)(sd - score_get(0));
                buf_printf(table, "| %.4f [%.4f, %.4f] ", sum[s].mean,
                           sum[s].p05, sum[s].p95);
            } else {
                out_table_cell(table, &a->cols[k], a->pop, c, &a->res0[ib]);
            }
        }
        if (table)
            buf_puts(table, "|\n");

        /* The closed form exists for some orders only, and for rows
         * evaluated as the stream leaves them. */
        double want, bias_sq;
        if (!expect || !expect_applies(c, a->pop) || e->evalfile.file)
            continue;
        if (expect_summary(a->pop, c, &want, &bias_sq, err) != 0)
            return -1;
        const score_def *me = score_find("mean_err");
        size_t sm = (size_t)(me - score_get(0));
        for (size_t is = 0; is < ns; is++) {
            double m = a->v[(sm * ns + is) * nb + ib];
            v[is] = m * m;
        }
        double mc, sd;
        mean_sd(v, ns, &mc, &sd);
        double se = sd / sqrt((double)ns);
        config_columns(expect, c, ns, models);
        buf_printf(expect, "\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t",
                   sqrt(want), sqrt(mc), want, mc, se);
        /* Where every ordering recovers the mean exactly, the shuffles'
         * spread is rounding and a deviation in it means nothing. */
        if (want > 0.0 && se > 0.0)
            buf_printf(expect, "%.17g", (mc - want) / se);
        else
            buf_puts(expect, "nan");
        buf_printf(expect, "\t%.17g", sqrt(bias_sq));
        exp_key_cells(expect, c, COL_SEEDS, 0, 0, "%.17g", models);
        buf_putc(expect, '\n');
    }
    return 0;
}

int dist_add(dist_acc *a, size_t k, const run_config *cfg,
             const run_result *res, bn_buf *dist, bn_buf *expect,
             bn_buf *table, bn_error *err)
{
    size_t nb = a->nb, ns = a->ns, in_group = k % (nb * ns);
    size_t ib = in_group % nb, is = in_group / nb;
    const score_def *sd = score_get(0); /* the table, in order */
    size_t *live = a->live + ib * a->n_scores;
    if (is == 0) {
        /* The table's cells are the result's scores, never its buffers,
         * which the sweep reuses. */
        a->cfg0[ib] = *cfg;
        a->res0[ib] = *res;
        a->res0[ib].running_mean = a->res0[ib].running_var = NULL;
        a->n_live[ib] = 0;
        for (size_t s = 0; s < a->n_scores; s++)
            if (sd[s].summarised && score_applies(&sd[s], cfg))
                live[a->n_live[ib]++] = s;
    }
    for (size_t i = 0; i < a->n_live[ib]; i++) {
        size_t s = live[i];
        a->v[(s * ns + is) * nb + ib] = score_value(&sd[s], res);
    }
    if (in_group == nb * ns - 1)
        return group_rows(a, dist, expect, table, err);
    return 0;
}
