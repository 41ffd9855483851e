/*
 * The effective figure (scripts/effective.gp): for feature maps, the
 * effective number of values behind a batch mean per channel against the
 * batch size, beside the count B H W and what independent values give.
 */
#include "figure/plot_parts.h"

#include <math.h>

/* One series a channel, each its own colour and point type
 * (scripts/style.gp has 8 point types). */
#define MAX_CHANNELS 8

/* The effective figure as kind_effective builds it. */
typedef struct {
    const plot_exp *x;
    const table_t *tb; /* effective.tsv */
    selection sel;     /* its configuration */
    strlist names;     /* the channels */
    /* each channel's ratio n_eff / count_fpc, its least and greatest */
    double rlo[MAX_CHANNELS], rhi[MAX_CHANNELS];
    double ylo, yhi;   /* n_eff's and the count's range */
} effective_t;

/* The configuration's channels and their ranges: 0 when there are more
 * than MAX_CHANNELS, 1 otherwise. */
static int read_channels(effective_t *e, int cf, int cn, int cr, int cc)
{
    const table_t *tb = e->tb;
    e->ylo = INFINITY;
    e->yhi = 0;
    for (size_t row = 0; row < tb->t.nrow; row++) {
        if (!selected(tb, row, &e->sel))
            continue;
        const char *f = tsv_cell(&tb->t, row, (size_t)cf);
        size_t i = sl_find(&e->names, f);
        if (i == e->names.n) {
            if (e->names.n == MAX_CHANNELS)
                return 0;
            sl_push(&e->names, f);
            e->rlo[i] = INFINITY;
            e->rhi[i] = 0;
        }
        double r = cell_num(tb, row, cr), n = cell_num(tb, row, cn);
        double cnt = cell_num(tb, row, cc);
        e->rlo[i] = r < e->rlo[i] ? r : e->rlo[i];
        e->rhi[i] = r > e->rhi[i] ? r : e->rhi[i];
        for (int k = 0; k < 2; k++) {
            double v = k ? cnt : n;
            e->ylo = v > 0 && v < e->ylo ? v : e->ylo;
            e->yhi = v > e->yhi ? v : e->yhi;
        }
    }
    return 1;
}

/* Each channel's entry gives its ratio to independent values: one number
 * where it is the same at every B (whole samples shuffled make it so),
 * else its range. The farthest channel on each side of 1 (*over below
 * it, *under above it; nc for none) makes the title. -1 when out of
 * memory. */
static int as_channels(const effective_t *e, bn_buf *a, bn_buf *t,
                       size_t *over, size_t *under)
{
    size_t nc = e->names.n;
    strlist labels = {0};
    *over = *under = nc;
    for (size_t i = 0; i < nc; i++) {
        buf_clear(t);
        tx(t, e->names.v[i]);
        if (same(e->rlo[i], e->rhi[i]))
            buf_printf(t, ": %.2g×", e->rlo[i]);
        else
            buf_printf(t, ": %.2g–%.2g×", e->rlo[i], e->rhi[i]);
        sl_push(&labels, sb_str(t));
        if (e->rlo[i] < 1 && (*over == nc || e->rlo[i] < e->rlo[*over]))
            *over = i;
        if (e->rhi[i] > 1 && (*under == nc || e->rhi[i] > e->rhi[*under]))
            *under = i;
    }
    as_str(a, "f", e->tb->path);
    as_num(a, "nc", (double)nc);
    as_strs(a, "cn", e->names.v, nc);
    as_strs(a, "cl", labels.v, nc);
    int oom = labels.oom;
    sl_free(&labels);
    return oom ? -1 : 0;
}

/* "The count B·H·W overstates a batch mean's information up to 20×
 * (smooth) and understates it up to 6.3× (alternating)", either part
 * alone when only one exists, else what the figure draws. */
static void effective_title(const effective_t *e, size_t over, size_t under,
                            bn_buf *t)
{
    size_t nc = e->names.n;
    buf_clear(t);
    if (over == nc && under == nc) {
        tx(t, "The effective number of values behind a batch mean, per "
              "channel");
        return;
    }
    tx(t, "The count B·H·W ");
    if (over < nc) {
        txf(t, "overstates a batch mean's information up to %.2g× (",
            1 / e->rlo[over]);
        tx(t, e->names.v[over]);
        buf_printf(t, ")");
    }
    if (under < nc) {
        buf_printf(t, over < nc ? "\nand " : "");
        txf(t, "understates %s up to %.2g× (",
            over < nc ? "it" : "a batch mean's information", e->rhi[under]);
        tx(t, e->names.v[under]);
        buf_printf(t, ")");
    }
}

/* The x axis's label: the samples, the configuration's values and the
 * settings no axis shows. */
static void as_effective_xlabel(const effective_t *e, const axis_t *ba,
                                bn_buf *a, bn_buf *t)
{
    bn_buf w = {0};
    buf_clear(t);
    tx(t, "batch size B (samples");
    if (x_is_log(ba))
        tx(t, "; log₂ scale");
    for (size_t i = 0; i < e->sel.nfix; i++) {
        buf_printf(t, "; ");
        value_words(t, e->x, e->sel.fix[i],
                    first_value(e->tb, e->sel.fix[i]), 1);
    }
    facts(&w, e->x, e->tb, NULL);
    if (w.len)
        buf_printf(t, "; %s", sb_str(&w));
    buf_printf(t, ")");
    as_str(a, "xlabel", sb_str(t));
    t->failed |= w.failed;
    buf_free(&w);
}

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
    effective_t e = {.x = x, .tb = tb};
    select_first(tb, &e.sel);
    int rc = read_channels(&e, cf, cn, cr, cc);
    if (rc == 0 || e.names.n == 0 || e.names.oom) {
        rc = e.names.oom ? bn_fail(err, "out of memory") : 0;
        sl_free(&e.names);
        return rc;
    }
    bn_buf *a = &o->assign, t = {0};
    size_t over, under;
    int oom = as_channels(&e, a, &t, &over, &under) != 0;
    as_num(a, "ylo", e.ylo);
    as_num(a, "yhi", e.yhi);
    as_selection(a, &e.sel);
    x_axis(a, ba);
    effective_title(&e, over, under, &t);
    as_str(a, "title", sb_str(&t));
    as_effective_xlabel(&e, ba, a, &t);
    buf_printf(&o->what, "n_eff against batch_size per channel, beside count "
                         "and count_fpc");
    rc = oom || t.failed ? bn_fail(err, "out of memory") : 1;
    sl_free(&e.names);
    buf_free(&t);
    return rc;
}
