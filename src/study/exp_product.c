/*
 * The product of an experiment's axes: how many configurations it has,
 * the k-th of them decoded (the axes nested by their rank in the key
 * table, batch size fastest, then the seed), the work it takes, and the
 * shape of the population its configurations run on.
 */
#include "study/exp.h"

#include <stdio.h>
#include <string.h>

#include "study/exp_parts.h"

/* ---- the product ---- */

/* The axes, slowest first: each axis's rank is its place (the ranks are
 * 1..n, each once: tests/test_tables.c). */
static size_t find_axes(key_id *out)
{
    int at[KEY_COUNT + 1];
    for (int r = 0; r <= KEY_COUNT; r++)
        at[r] = -1;
    for (int k = 0; k < KEY_COUNT; k++)
        if (keys[k].nest > 0 && keys[k].nest <= KEY_COUNT)
            at[keys[k].nest] = k;
    size_t n = 0;
    for (int r = 1; r <= KEY_COUNT; r++)
        if (at[r] >= 0)
            out[n++] = (key_id)at[r];
    return n;
}

/* find_axes, whose answer is the key table's: every configuration's
 * decoding asks, so it is found once per thread. */
size_t axes(key_id *out)
{
    static _Thread_local size_t n;
    static _Thread_local key_id found[KEY_COUNT];
    if (n == 0)
        n = find_axes(found);
    memcpy(out, found, n * sizeof *out);
    return n;
}

size_t exp_count(const exp_t *e)
{
    key_id ax[KEY_COUNT];
    size_t na = axes(ax), total = 1;
    for (size_t i = 0; i < na; i++)
        total *= e->n[ax[i]];
    return total;
}

int exp_maps_active(const exp_t *e)
{
    return e->maps.image_h > 0 || e->maps.size_h > 0;
}

/* The maps' samples, height, width and channels (a file's samples once it
 * is read); 0 where a kernel does not fit. */
void maps_shape(const exp_t *e, size_t *m, size_t *h, size_t *w,
                size_t *c)
{
    const exp_maps *mp = &e->maps;
    if (mp->image_h) {
        *m = e->popfile.pop ? e->popfile.pop->n : 0;
        *h = mp->kernel <= mp->image_h ? mp->image_h - mp->kernel + 1 : 0;
        *w = mp->kernel <= mp->image_w ? mp->image_w - mp->kernel + 1 : 0;
        *c = mp->filters;
    } else {
        *m = mp->samples;
        *h = mp->size_h;
        *w = mp->size_w;
        *c = mp->n_ch;
    }
}

size_t exp_rows(const exp_t *e)
{
    if (exp_maps_active(e)) {
        size_t m, h, w, c;
        maps_shape(e, &m, &h, &w, &c);
        return m * h * w;
    }
    return e->popfile.pop ? e->popfile.pop->n : e->pop.n_rows;
}

size_t exp_features(const exp_t *e)
{
    if (exp_maps_active(e)) {
        size_t m, h, w, c;
        maps_shape(e, &m, &h, &w, &c);
        return c;
    }
    return e->popfile.pop ? e->popfile.pop->f : e->pop.n_features;
}

size_t exp_classes(const exp_t *e)
{
    if (exp_maps_active(e))
        return 0;
    if (e->popfile.pop)
        return e->popfile.pop->label.column ? e->popfile.pop->label.n_levels
                                            : 0;
    return e->pop.classes;
}

double exp_work(const exp_t *e)
{
    /* The work varies with the model, its network (hidden units, layers,
     * depth) and the epochs; every other axis multiplies it. */
    size_t rows = exp_rows(e), f = exp_features(e), k = exp_classes(e);
    size_t nt = e->n[KEY_MODEL], nh = e->n[KEY_HIDDEN], ne = e->n[KEY_EPOCHS];
    size_t nl = e->n[KEY_LAYERS], nd = e->n[KEY_DEPTH];
    run_config cfg;
    exp_config(e, 0, &cfg);
    double w = 0.0;
    for (size_t it = 0; it < nt; it++)
        for (size_t ih = 0; ih < nh; ih++)
            for (size_t il = 0; il < nl; il++)
                for (size_t id = 0; id < nd; id++)
                    for (size_t ie = 0; ie < ne; ie++) {
                        cfg.model = (run_model_id)e->v[KEY_MODEL][it].i;
                        cfg.clf.hidden = (size_t)e->v[KEY_HIDDEN][ih].u;
                        cfg.clf.net = e->nets[e->v[KEY_LAYERS][il].i];
                        cfg.clf.depth = (size_t)e->v[KEY_DEPTH][id].u;
                        cfg.epochs = (unsigned long)e->v[KEY_EPOCHS][ie].u;
                        w += run_work(&cfg, rows, f, k);
                    }
    return w * (double)(exp_count(e) / (nt * nh * nl * nd * ne));
}

size_t exp_index(const exp_t *e, size_t r, size_t is, size_t ib)
{
    return ib + e->n[KEY_BATCH_SIZE] * (is + e->n[KEY_SEED] * r);
}

/* Apply the axes' values at index pos[] to cfg. */
void config_at(const exp_t *e, const key_id *ax, size_t na,
               const size_t *pos, run_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    /* as snprintf "%s" would, cut to fit, without its cost */
    memcpy(cfg->experiment, e->stem,
           strnlen(e->stem, sizeof cfg->experiment - 1));
    cfg->model = RUN_MODEL_LAYER;
    cfg->initial = e->initfile.file ? &e->initial : NULL;
    cfg->seq.file = e->seqfile.file ? e->seqfile.pop : NULL;
    cfg->seq.file_name = e->seqfile.file;
    for (size_t i = 0; i < na; i++)
        keys[ax[i]].apply(cfg, e, e->v[ax[i]][pos[i]]);
    /* A held-out model's rows are the population and its held-out rows. */
    memcpy(cfg->population,
           run_model_get(cfg->model)->held_out ? e->held_id : e->eval_id,
           sizeof cfg->population);
    /* p and keep follow from momentum and its convention together; a
     * momentum out of range is left for run_check to name. */
    bn_set_momentum(&cfg->layer, cfg->layer.momentum, cfg->layer.weights,
                    NULL);
}

void exp_config(const exp_t *e, size_t k, run_config *cfg)
{
    key_id ax[KEY_COUNT];
    size_t na = axes(ax), pos[KEY_COUNT];
    for (size_t i = na; i-- > 0;) {
        pos[i] = k % e->n[ax[i]];
        k /= e->n[ax[i]];
    }
    config_at(e, ax, na, pos, cfg);
}
