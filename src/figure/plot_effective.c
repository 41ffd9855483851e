/*
 * The effective figure (scripts/effective.gp): for feature maps, the
 * effective number of values behind a batch mean per channel against the
 * batch size, beside the count B H W and what independent values give.
 */
#include "figure/plot_parts.h"

#include <math.h>

/* ---- the effective number of values behind a batch statistic ---- */

/* One series a channel, each its own colour and point type
 * (scripts/style.gp has 8 point types). */
#define MAX_CHANNELS 8

/* effective.tsv: per channel, the effective number of values behind a
 * batch mean against the batch size, beside the count B H W and what
 * independent values would give (the count with the finite-population
 * correction), of one configuration (every other varying axis at its
 * first value). */
int kind_effective(const plot_exp *x, figure_out *o, bn_error *err)
{
    const table_t *tb = &x->eff;
    int cf = column(tb, "feature"), cn = column(tb, "n_eff"),
        cr = column(tb, "ratio");
    const axis_t *ba = axis_of(tb, KEY_BATCH_SIZE);
    int cc = column(tb, "count");
    if (!tb->ok || cf < 0 || cn < 0 || cr < 0 || cc < 0 ||
        column(tb, "count_fpc") < 0 || !varies(ba))
        return 0;
    selection sel;
    select_first(tb, &sel);
    strlist names = {0}, labels = {0};
    double rlo[MAX_CHANNELS], rhi[MAX_CHANNELS];
    double ylo = INFINITY, yhi = 0;
    for (size_t row = 0; row < tb->t.nrow; row++) {
        if (!selected(tb, row, &sel))
            continue;
        const char *f = tsv_cell(&tb->t, row, (size_t)cf);
        size_t i = sl_find(&names, f);
        if (i == names.n) {
            if (names.n == MAX_CHANNELS) {
                sl_free(&names);
                return 0;
            }
            sl_push(&names, f);
            rlo[i] = INFINITY;
            rhi[i] = 0;
        }
        double r = cell_num(tb, row, cr), n = cell_num(tb, row, cn);
        double cnt = cell_num(tb, row, cc);
        rlo[i] = r < rlo[i] ? r : rlo[i];
        rhi[i] = r > rhi[i] ? r : rhi[i];
        for (int k = 0; k < 2; k++) {
            double v = k ? cnt : n;
            ylo = v > 0 && v < ylo ? v : ylo;
            yhi = v > yhi ? v : yhi;
        }
    }
    size_t nc = names.n;
    int rc = -1;
    bn_buf t = {0}, w = {0};
    if (nc == 0 || names.oom) {
        rc = names.oom ? bn_fail(err, "out of memory") : 0;
        goto done;
    }
    /* Each channel's entry gives its ratio to independent values: one
     * number where it is the same at every B (whole samples shuffled
     * make it so), else its range. The farthest channel on each side of
     * 1 makes the title. */
    size_t over = nc, under = nc;
    for (size_t i = 0; i < nc; i++) {
        buf_clear(&t);
        tx(&t, names.v[i]);
        if (same(rlo[i], rhi[i]))
            buf_printf(&t, ": %.2g×", rlo[i]);
        else
            buf_printf(&t, ": %.2g–%.2g×", rlo[i], rhi[i]);
        sl_push(&labels, sb_str(&t));
        if (rlo[i] < 1 && (over == nc || rlo[i] < rlo[over]))
            over = i;
        if (rhi[i] > 1 && (under == nc || rhi[i] > rhi[under]))
            under = i;
    }
    bn_buf *a = &o->assign;
    as_str(a, "f", tb->path);
    as_num(a, "nc", (double)nc);
    as_strs(a, "cn", names.v, nc);
    as_strs(a, "cl", labels.v, nc);
    as_num(a, "ylo", ylo);
    as_num(a, "yhi", yhi);
    as_selection(a, &sel);
    x_axis(a, ba);

    buf_clear(&t);
    if (over < nc || under < nc) {
        tx(&t, "The count B·H·W ");
        if (over < nc) {
            txf(&t, "overstates a batch mean's information up to %.2g× (",
                1 / rlo[over]);
            tx(&t, names.v[over]);
            buf_printf(&t, ")");
        }
        if (under < nc) {
            buf_printf(&t, over < nc ? "\nand " : "");
            txf(&t, "understates %s up to %.2g× (",
                over < nc ? "it" : "a batch mean's information",
                rhi[under]);
            tx(&t, names.v[under]);
            buf_printf(&t, ")");
        }
    } else {
        tx(&t, "The effective number of values behind a batch mean, per "
               "channel");
    }
    as_str(a, "title", sb_str(&t));
    buf_clear(&t);
    tx(&t, "batch size B (samples");
    if (x_is_log(ba))
        tx(&t, "; log₂ scale");
    for (size_t i = 0; i < sel.nfix; i++) {
        buf_printf(&t, "; ");
        value_words(&t, x, sel.fix[i], first_value(tb, sel.fix[i]), 1);
    }
    facts(&w, x, tb, NULL);
    if (w.len)
        buf_printf(&t, "; %s", sb_str(&w));
    buf_printf(&t, ")");
    as_str(a, "xlabel", sb_str(&t));
    buf_printf(&o->what, "n_eff against batch_size per channel, beside count "
                         "and count_fpc");
    rc = t.failed || w.failed || labels.oom ? bn_fail(err, "out of memory") : 1;
done:
    sl_free(&names);
    sl_free(&labels);
    buf_free(&t);
    buf_free(&w);
    return rc;
}
