/*
 * The words of a classifier's figures: its x axis named, a value of an
 * axis in words, and the finding on the gap between train-mode and
 * eval-mode accuracy (the largest, where it is, whether it closes).
 */
#include "figure/plot_parts.h"

#include <math.h>

/* Train-mode and eval-mode accuracy this close read as agreement: the
 * "point or two" of the background essays, with room (5 rows in 100).
 * Gaps are worded to two significant digits. */
#define GAP_NEAR 0.05

/* How a classifier's numeric x axes are named and drawn. */
static const x_word_row clf_x_words[] = {
    {.key = KEY_BATCH_SIZE, .noun = "batch size", .sym = "B",
     .label = "batch size B"},
    {.key = KEY_EPOCHS, .noun = "number of epochs", .sym = "E",
     .label = "epochs E"},
    {.key = KEY_DEVICES, .noun = "number of devices", .sym = "K",
     .label = "devices K (B/K rows each)"},
    {.key = KEY_EVAL_SHIFT, .noun = "shift", .sym = "shift",
     .label = "held-out rows' shift, in sd"},
    {.key = KEY_EVAL_SCALE, .noun = "scale", .sym = "scale",
     .label = "held-out rows' spread, × sd"},
};

void cx_words(const cview *v, const char **noun, const char **sym,
              const char **label)
{
    *noun = *sym = *label = v->xcol;
    if (!v->x) {
        *noun = *sym = *label = "epoch";
    } else if (v->kind == CX_K) {
        *noun = *sym = "K";
        *label = "K of grouped:K, shuffled = 1";
    } else if (v->kind == CX_CAT) {
        *noun = axis_noun(v->x);
    } else {
        for (size_t i = 0; i < COUNT(clf_x_words); i++)
            if (clf_x_words[i].key == v->x->key) {
                *noun = clf_x_words[i].noun;
                *sym = clf_x_words[i].sym;
                *label = clf_x_words[i].label;
            }
    }
}

/* A value of an axis in words: "B = 256" for those of clf_x_words, an
 * order by its name ("grouped:8", short enough for a panel's title), the
 * rest as every figure says them. */
static void clf_value_words(bn_buf *b, const plot_exp *x, const axis_t *a,
                            const char *cell)
{
    for (size_t i = 0; i < COUNT(clf_x_words); i++)
        if (clf_x_words[i].key == a->key) {
            txf(b, "%s = %g", clf_x_words[i].sym, num(cell));
            return;
        }
    if (a->key == KEY_ORDER)
        tx(b, cell);
    else
        value_words(b, x, a, cell, 1);
}

/* "B = 256", "epoch 3", "K = 8", "batches grouped by class", "ema". */
static void cx_at(bn_buf *b, const plot_exp *x, const cview *v, size_t xi)
{
    const char *noun, *sym, *label, *c = v->xc[xi];
    cx_words(v, &noun, &sym, &label);
    if (!v->x)
        txf(b, "epoch %g", num(c));
    else if (v->kind == CX_K && grouped_k(c) > 0)
        txf(b, "K = %g", grouped_k(c));
    else
        clf_value_words(b, x, v->x, c);
}

/* The values of key (tab-joined cells of axes a) in words. */
void key_words(bn_buf *b, const plot_exp *x, const axis_t *const *a,
               size_t n, const char *key)
{
    char buf[600];
    for (size_t i = 0; i < n; i++) {
        buf_printf(b, i ? ", " : "");
        clf_value_words(b, x, a[i], key_field(key, i, buf, sizeof buf));
    }
}

/* name(d): a row's cells of axes a joined by tabs, as cv_key joins them. */
void as_key_fn(bn_buf *b, const char *name, const axis_t *const *a,
               size_t n)
{
    buf_printf(b, "%s(d) = ", name);
    for (size_t i = 0; i < n; i++)
        buf_printf(b, "%sstrcol(\"%s\")", i ? " . \"\\t\" . " : "", a[i]->col);
    buf_printf(b, n ? "; " : "\"\"; ");
}

gap_t gap_over(const cview *v, const double *tr, const double *ev,
               size_t p0, size_t p1)
{
    gap_t g = {0, 1, -INFINITY, 0, 0, 0};
    size_t ns = v->sk.n, nx = v->nx;
    for (size_t p = p0; p < p1; p++)
        for (size_t s = 0; s < ns; s++)
            for (size_t xi = 0; xi < nx; xi++) {
                size_t i = (p * ns + s) * nx + xi;
                if (isnan(tr[i]) || isnan(ev[i]))
                    continue;
                double d = tr[i] - ev[i];
                g.any = 1;
                g.near = g.near && fabs(d) <= GAP_NEAR;
                if (d > g.worst) {
                    g.worst = d;
                    g.p = p;
                    g.s = s;
                    g.xi = xi;
                }
            }
    return g;
}

/* "(B = 256, epochs = 1)": where the largest gap is; a panel's title
 * leaves out the panel's own values. */
static void gap_at(bn_buf *b, const plot_exp *x, const cview *v,
                   const gap_t *g, int title)
{
    buf_printf(b, "(");
    cx_at(b, x, v, g->xi);
    if (v->nsa) {
        buf_printf(b, ", ");
        key_words(b, x, v->sa, v->nsa, v->sk.v[g->s]);
    }
    if (title && v->npa) {
        buf_printf(b, ", ");
        key_words(b, x, v->pa, v->npa, v->pk.v[g->p]);
    }
    buf_printf(b, ")");
}

/* The finding on the gap, train mode minus eval mode, of a figure
 * (title) or of one of its panels (lower case, shorter to fit a third of
 * the canvas: "eval below train mode by up to 0.53", then where):
 *   every gap within GAP_NEAR: "Eval-mode accuracy within 0.05 of
 *     train-mode at every batch size";
 *   else the largest above GAP_NEAR: "Eval mode falls below train mode by
 *     up to 0.53 (B = 256, epochs = 1)";
 *   else none above 0: "Eval mode at or above train mode at every ...";
 *   else: "Eval mode at most 0.03 below train mode (...)". */
void gap_words(bn_buf *b, const plot_exp *x, const cview *v,
               const gap_t *g, int title)
{
    const char *noun, *sym, *label;
    cx_words(v, &noun, &sym, &label);
    bn_buf every = {0};
    if (!v->x)
        buf_printf(&every, "after every epoch");
    else
        txf(&every, "%s every %s", v->kind == CX_CAT ? "for" : "at", noun);
    if (!g->any)
        ;
    else if (g->near && title)
        buf_printf(b, "Eval-mode accuracy within %g of train-mode %s", GAP_NEAR,
                   sb_str(&every));
    else if (g->near)
        buf_printf(b, "eval within %g of train mode", GAP_NEAR);
    else if (g->worst > GAP_NEAR) {
        buf_printf(b, title ? "Eval mode falls below train mode by up to %.2g "
                            : "eval below train mode by up to %.2g\n",
                   g->worst);
        gap_at(b, x, v, g, title);
    } else if (g->worst <= 0 && title)
        buf_printf(b, "Eval mode at or above train mode %s", sb_str(&every));
    else if (g->worst <= 0)
        buf_printf(b, "eval at or above train mode");
    else {
        buf_printf(b, title ? "Eval mode at most %.2g below train mode "
                            : "eval at most %.2g below train mode\n",
                   g->worst);
        gap_at(b, x, v, g, title);
    }
    b->failed |= every.failed;
    buf_free(&every);
}

/* How a curve's gap closes: "within 0.05 from epoch 12 on", when it is
 * wider before and stays within over two epochs or more. */
void closes_words(bn_buf *b, const cview *v, const double *tr,
                  const double *ev, size_t p)
{
    size_t nx = v->nx, from = nx;
    for (size_t xi = nx; xi-- > 0;) {
        size_t i = p * v->sk.n * nx + xi;
        if (isnan(tr[i]) || isnan(ev[i]))
            continue;
        if (fabs(tr[i] - ev[i]) > GAP_NEAR)
            break;
        from = xi;
    }
    if (from > 0 && from + 1 < nx)
        buf_printf(b, "\nwithin %g from epoch %g on", GAP_NEAR,
                   num(v->xc[from]));
}

/* "427 rows, 3 epochs, momentum 0.1 new, 142 held out; ema, shift = 0":
 * the settings the figure's axes do not show. */
void clf_facts(bn_buf *b, const plot_exp *x, const cview *v,
               const roles_t *r)
{
    facts(b, x, v->tb, r);
    const char *held = manifest_value(x, "held_out_rows");
    if (held)
        txf(b, "%s%s held out", b->len ? ", " : "", held);
    for (size_t i = 0; i < v->nfa; i++) {
        buf_printf(b, i ? ", " : b->len ? "; " : "");
        clf_value_words(b, x, v->fa[i], first_value(v->tb, v->fa[i]));
    }
}
