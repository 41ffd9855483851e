/*
 * What an experiment writes of its keys: the manifest's line for every
 * key, as resolved, and the key columns of every file (their names, and
 * a configuration's cells) in the published study's order.
 */
#include "study/exp.h"

#include <stdint.h>
#include <string.h>

#include "base/fmt.h"
#include "model/score.h"
#include "study/exp_parts.h"
#include "study/outfile.h"

/* ---- the manifest and the key columns ---- */

static void print_ints(bn_buf *fp, const key_def *d, const key_value *v,
                       size_t n)
{
    /* Runs of consecutive values print as A..B, as they may be written. */
    for (size_t i = 0; i < n;) {
        if (d->word && v[i].u == d->word_value) {
            buf_printf(fp, "%s%s", i ? " " : "", d->word);
            i++;
            continue;
        }
        size_t j = i;
        while (j + 1 < n && v[j].u != UINT64_MAX && v[j + 1].u == v[j].u + 1)
            j++;
        buf_printf(fp, "%s%llu", i ? " " : "", (unsigned long long)v[i].u);
        if (j > i + 1)
            buf_printf(fp, "..%llu", (unsigned long long)v[j].u);
        else if (j == i + 1)
            buf_printf(fp, " %llu", (unsigned long long)v[j].u);
        i = j + 1;
    }
}

/* Whether the manifest has a line for key k: the keys of a generated
 * population or of a file, never both; a model's keys when it trains;
 * the classes' and the held-out split's only when they make rows. */
static int in_manifest(const exp_t *e, int k)
{
    const key_def *d = &keys[k];
    int file = e->popfile.file != NULL;
    if (!d->section || !run_models_show(d->models, e->models))
        return 0;
    switch (k) {
    case KEY_ROWS:
    case KEY_POP_SEED:
    case KEY_FEATURE:
        return !file && !e->maps.size_h;
    case KEY_MAPS_IMAGE:
    case KEY_MAPS_FILTERS:
    case KEY_MAPS_KERNEL:
        return e->maps.image_h > 0;
    case KEY_MAPS_SIZE:
    case KEY_MAPS_SAMPLES:
    case KEY_MAPS_CHANNEL:
        return e->maps.size_h > 0;
    case KEY_MAPS_SEED:
        return exp_maps_active(e);
    case KEY_POP_CLASSES:
    case KEY_POP_LABEL_NOISE:
        return !file && e->pop.classes;
    case KEY_POP_FILE:
    case KEY_POP_LABEL:
    case KEY_POP_GROUP:
        return file;
    case KEY_HOLDOUT:
    case KEY_HOLDOUT_SEED:
        return file && !e->evalfile.file;
    case KEY_EVAL_FILE:
        return e->evalfile.file != NULL;
    case KEY_LAYER_INITIAL:
        return e->initfile.file != NULL;
    case KEY_SEQ_FILE:
        return e->seqfile.file != NULL;
    case KEY_MODEL: /* the study's files are the layer's alone */
        return (e->models & RUN_MODELS_ALL) != RUN_MODEL_BIT(RUN_MODEL_LAYER);
    default:
        return 1;
    }
}

/* The lines of a key that are not "section.key\tvalue" once: a file's
 * (its name, SHA-256 and rows), a column's when named, each channel's
 * and each feature's, a shape's. 0 when key k is not one of them. */
static int manifest_lines(bn_buf *fp, const exp_t *e, int k)
{
    const key_def *d = &keys[k];
    switch (d->type) {
    case KT_PATH: {
        const exp_popfile *pf = exp_file_of(e, (key_id)k);
        buf_printf(fp, "%s.%s\t%s\n", d->section, d->name, pf->file);
        buf_printf(fp, "%s.%s_sha256\t%s\n", d->section, d->name, pf->sha256);
        /* What the file held, which the experiment does not say:
         * figures give the rows in their axis labels. */
        if (pf->pop)
            buf_printf(fp, "%s.%s_rows\t%zu\n", d->section, d->name,
                       pf->pop->n);
        if (k == KEY_LAYER_INITIAL)
            buf_printf(fp, "%s.%s_features\t%zu\n", d->section, d->name,
                       e->initial.n);
        return 1;
    }
    case KT_COLUMN: {
        const char *c = k == KEY_POP_LABEL ? e->popfile.label
                                           : e->popfile.group;
        if (c)
            buf_printf(fp, "%s.%s\t%s\n", d->section, d->name, c);
        return 1;
    }
    case KT_CHANNEL:
        for (size_t j = 0; j < e->maps.n_ch; j++) {
            const convpop_channel *c = &e->maps.ch[j];
            buf_printf(fp, "%s.%s\t%s %.17g %.17g %.17g\n", d->section,
                       d->name, e->maps.ch_names[j], c->mean, c->sd, c->r);
        }
        return 1;
    case KT_SHAPE: {
        const size_t *hw =
            k == KEY_MAPS_IMAGE ? &e->maps.image_h : &e->maps.size_h;
        buf_printf(fp, "%s.%s\t%zu %zu\n", d->section, d->name, hw[0], hw[1]);
        return 1;
    }
    case KT_FEATURE:
        for (size_t j = 0; j < e->pop.n_features; j++) {
            const pop_feature *f = &e->pop.features[j];
            buf_printf(fp, "%s.%s\t%s %.17g %.17g %.17g\n", d->section,
                       d->name, f->name, f->mean, f->sd, f->rho);
        }
        return 1;
    default:
        return 0;
    }
}

/* The value of key k as its one line has it. */
static void manifest_value(bn_buf *fp, const exp_t *e, int k)
{
    const key_def *d = &keys[k];
    switch (d->type) {
    case KT_TEXT:
        buf_puts(fp, e->description ? e->description : "");
        break;
    case KT_COLUMNS:
        for (size_t i = 0; i < e->n_table; i++)
            buf_printf(fp, "%s%s", i ? " " : "", e->table[i]);
        break;
    case KT_OUTPUTS:
        /* The files of the models trained: the rest are never made. */
        for (int f = 0, first = 1; out_file_get(f); f++)
            if ((e->outputs & (1u << f)) &&
                (out_file_get(f)->model < 0 ||
                 (e->models & RUN_MODEL_BIT(out_file_get(f)->model)))) {
                buf_printf(fp, "%s%s", first ? "" : " ",
                           out_file_get(f)->name);
                first = 0;
            }
        break;
    case KT_UINT:
        buf_printf(fp, "%llu", (unsigned long long)uint_of(e, (key_id)k));
        break;
    case KT_REAL:
        buf_printf(fp, "%.17g", real_of(e, (key_id)k));
        break;
    case KT_REALS:
        for (size_t i = 0; i < e->n[k]; i++)
            buf_printf(fp, "%s%.17g", i ? " " : "", e->v[k][i].r);
        break;
    case KT_UINTS:
        print_ints(fp, d, e->v[k], e->n[k]);
        break;
    case KT_CHOICES:
        for (size_t i = 0; i < e->n[k]; i++)
            buf_printf(fp, "%s%s", i ? " " : "", d->choice(e->v[k][i].i));
        break;
    case KT_ORDERS:
        for (size_t i = 0; i < e->n[k]; i++)
            buf_printf(fp, "%s%s", i ? " " : "",
                       e->orders[e->v[k][i].i].name);
        break;
    case KT_DRIFTS:
        for (size_t i = 0; i < e->n[k]; i++)
            buf_printf(fp, "%s%s", i ? " " : "",
                       e->drift_names[e->v[k][i].i]);
        break;
    case KT_NETS:
        for (size_t i = 0; i < e->n[k]; i++) {
            char text[1024] = "";
            if (e->nets[e->v[k][i].i].n)
                nn_format(&e->nets[e->v[k][i].i], text, sizeof text);
            buf_printf(fp, "%s%s", i ? ", " : "", text);
        }
        break;
    default:
        break;
    }
}

void exp_manifest(bn_buf *fp, const exp_t *e)
{
    for (int k = 0; k < KEY_COUNT; k++) {
        if (!in_manifest(e, k) || manifest_lines(fp, e, k))
            continue;
        buf_printf(fp, "%s.%s\t", keys[k].section, keys[k].name);
        manifest_value(fp, e, k);
        buf_putc(fp, '\n');
    }
}

/* The key columns of file, lead or trail, of the models trained, in
 * column order. Called for every row a sweep writes, so one pass over
 * the table putting each key at its column (the columns are 1..n, each
 * once: tests/test_tables.c), then one over the columns. */
static size_t find_columns(unsigned file, int lead, unsigned models,
                           key_id *out)
{
    int at[KEY_COUNT + 1];
    for (int c = 0; c <= KEY_COUNT; c++)
        at[c] = -1;
    for (int k = 0; k < KEY_COUNT; k++) {
        int col = keys[k].col;
        if (col >= 1 && col <= KEY_COUNT && (keys[k].files & file) &&
            (col <= KEY_LEAD_COLUMNS) == (lead != 0) &&
            run_models_show(keys[k].models, models) &&
            /* the study's files are the layer's alone */
            !(k == KEY_MODEL &&
              (models & RUN_MODELS_ALL) == RUN_MODEL_BIT(RUN_MODEL_LAYER)))
            at[col] = k;
    }
    size_t n = 0;
    for (int c = 1; c <= KEY_COUNT; c++)
        if (at[c] >= 0)
            out[n++] = (key_id)at[c];
    return n;
}

int exp_key_column(const char *name)
{
    for (int k = 0; k < KEY_COUNT; k++)
        if (keys[k].col && strcmp(keys[k].name, name) == 0)
            return k;
    return -1;
}

int exp_column_find(const char *name, exp_column *col)
{
    exp_column c = {exp_key_column(name), NULL};
    if (c.key < 0 || !(exp_key((key_id)c.key)->files & COL_SUMMARY)) {
        c.key = -1;
        c.score = score_find(name);
        if (!c.score)
            return -1;
    }
    if (col)
        *col = c;
    return 0;
}

const char *exp_column_name(const exp_column *col)
{
    return col->score ? col->score->name : exp_key((key_id)col->key)->name;
}

/* find_columns, whose answer depends on the key table alone: a row asks
 * for its lead columns and then its trailing ones, and every row of a
 * file the same, so the last answer for each is kept, per thread. */
static size_t columns(unsigned file, int lead, unsigned models, key_id *out)
{
    static _Thread_local struct {
        unsigned file, models;
        int valid;
        size_t n;
        key_id col[KEY_COUNT];
    } last[2];
    int w = lead != 0;
    if (!last[w].valid || last[w].file != file ||
        last[w].models != models) {
        last[w].n = find_columns(file, lead, models, last[w].col);
        last[w].file = file, last[w].models = models, last[w].valid = 1;
    }
    memcpy(out, last[w].col, last[w].n * sizeof *out);
    return last[w].n;
}

/* Whether fmt is "%.17g" (without a call, for every cell). */
static int is_g17(const char *f)
{
    return f[0] == '%' && f[1] == '.' && f[2] == '1' && f[3] == '7' &&
           f[4] == 'g' && f[5] == '\0';
}

void exp_cell_print(bn_buf *fp, const key_cell *c, const char *real_fmt)
{
    if (c->kind == CELL_TEXT)
        buf_puts(fp, c->text ? c->text : c->buf);
    else if (c->kind == CELL_INT)
        buf_uint(fp, c->u);
    else if (is_g17(real_fmt))
        buf_g17(fp, c->r); /* the same characters, much sooner */
    else
        buf_printf(fp, real_fmt, c->r);
}

void exp_key_header(bn_buf *fp, unsigned file, int lead, int first,
                    unsigned models)
{
    key_id col[KEY_COUNT];
    size_t n = columns(file, lead, models, col);
    for (size_t i = 0; i < n; i++)
        buf_printf(fp, "%s%s", i == 0 && first ? "" : "\t", keys[col[i]].name);
}

/* A key's last number cell as written, its tab first, per thread: most
 * key columns hold the same value on every row of a sweep, and a number's
 * kind and bits decide its text, so the text is made once per change. */
typedef struct {
    int kind; /* CELL_INT or CELL_REAL; CELL_TEXT (the start): none yet */
    uint64_t bits;
    size_t len;
    char text[1 + FMT_G17_MAX]; /* also the 20 digits of a uint64 */
} kept_cell;

static void kept_make(kept_cell *k, const key_cell *c)
{
    k->text[0] = '\t';
    if (c->kind == CELL_REAL) {
        k->len = 1 + fmt_g17(k->text + 1, c->r);
        return;
    }
    char s[24];
    size_t i = sizeof s;
    unsigned long long v = c->u;
    do
        s[--i] = (char)('0' + v % 10);
    while (v /= 10);
    memcpy(k->text + 1, s + i, sizeof s - i);
    k->len = 1 + sizeof s - i;
}

static void put_kept(bn_buf *fp, key_id key, const key_cell *c, int tab)
{
    static _Thread_local kept_cell kept[KEY_COUNT];
    kept_cell *k = &kept[key];
    uint64_t bits = c->u;
    if (c->kind == CELL_REAL)
        memcpy(&bits, &c->r, sizeof bits);
    if (k->kind != (int)c->kind || k->bits != bits) {
        kept_make(k, c);
        k->kind = (int)c->kind, k->bits = bits;
    }
    buf_add(fp, k->text + !tab, k->len - !tab);
}

void exp_key_cells(bn_buf *fp, const run_config *cfg, unsigned file, int lead,
                   int first, const char *real_fmt, unsigned models)
{
    key_id col[KEY_COUNT];
    size_t n = columns(file, lead, models, col);
    int g17 = is_g17(real_fmt);
    for (size_t i = 0; i < n; i++) {
        key_cell c;
        key_cell_clear(&c);
        /* Another model's setting. One the model does not use (momentum
         * without batch norm) still shows its value: two runs that differ
         * only there are two rows, and each is named by its values. */
        if (!(keys[col[i]].models & RUN_MODEL_BIT(cfg->model)))
            c.text = "-";
        else
            keys[col[i]].get(cfg, &c);
        int tab = i > 0 || !first;
        if (c.kind == CELL_INT || (c.kind == CELL_REAL && g17)) {
            put_kept(fp, col[i], &c, tab);
            continue;
        }
        if (tab)
            buf_putc(fp, '\t');
        exp_cell_print(fp, &c, real_fmt);
    }
}
