/*
 * Figures for any results: which figures an experiment's files support,
 * and what each one draws and says. An experiment is a directory of
 * results (manifest.tsv, summary.tsv, and features.tsv, distribution.tsv,
 * expectation.tsv when it wrote them); its figures are chosen by its axes
 * (the key columns whose values vary, read from the files) and its
 * columns, never by its name, from the figure-kind table in plot.c. Each
 * figure comes out as a gnuplot script of scripts/ and the assignments
 * that tell it what to draw: the files, the columns, the series and the
 * panels, and every title, label and annotation, worded from the numbers
 * (a title states a finding only when the numbers bear it out).
 * cmd_plot.c runs gnuplot on them; the web page reads the same figures
 * of tables it holds in memory (plot_tables, plot_json). Reads files;
 * never prints or exits.
 */
#ifndef BN_PLOT_H
#define BN_PLOT_H

#include <stddef.h>

#include "base/buf.h"
#include "base/common.h"

typedef struct {
    char *experiment;   /* the experiment's directory name */
    const char *name;   /* the figure kind's name: the files' stem */
    const char *script; /* under the scripts directory */
    char *assign;       /* gnuplot commands setting the script's inputs */
    char *what;         /* one line: what the figure draws */
} plot_figure;

typedef struct {
    plot_figure *fig;
    size_t n, cap;
} plot_list;

/* A row of the figure-kind table: a figure, the script that draws it,
 * and in words what it needs and what it draws (for --help and
 * docs/architecture.md). */
typedef struct {
    const char *name;
    const char *script;
    const char *needs;
    const char *draws;
} plot_kind;

/* text as a gnuplot double-quoted string, byte for byte: a line break
 * as \n, so that a command file holds any path on one line. */
void gp_str(bn_buf *b, const char *text);

/* Row i of the table, NULL past the last. */
const plot_kind *plot_kind_get(size_t i);

/* Append to list the figures of the experiment whose files are in
 * directory dir (name: the directory's own name, as the figures' folder
 * is named). Returns how many it added, or -1 with err filled (a file
 * that cannot be read or is not what bnstudy writes). */
int plot_experiment(const char *dir, const char *name, plot_list *list,
                    bn_error *err);
/* An experiment's file held in memory: its name in the directory
 * ("summary.tsv") and its len bytes. */
typedef struct {
    const char *name;
    const char *text;
    size_t len;
} plot_file;
/* The same for the n files of an experiment held in memory (the web
 * page's tables): a file not among them is one the experiment did not
 * write, and each figure names its files as they are named here. */
int plot_tables(const plot_file *files, size_t n, const char *name,
                plot_list *list, bn_error *err);
void plot_list_free(plot_list *list);
/* Figure f as a JSON object appended to out (plot_json.c): "name",
 * "script", "what", and "values", each assignment its script reads by
 * its name. -1 when the assignments are not plot.c's writing, or out of
 * memory. */
int plot_json(const plot_figure *f, bn_buf *out);

#endif
