/*
 * The columns a figure reads (cmd_plot.c): gnuplot converts every field
 * of every row it reads, and a figure script reads its table once per
 * series, panel and output, so that most of a figure's time went to
 * columns it never draws. Before gnuplot runs, each table a figure's
 * assignments name is copied with only the columns it can read.
 */
#ifndef BN_PLOT_COLS_H
#define BN_PLOT_COLS_H

#include <stddef.h>

#include "base/buf.h"

/* For each assignment NAME = "PATH" in assign whose PATH is a file
 * directly in directory edir: a copy of it holding only the columns whose
 * header names occur as a word in assign or in text (the scripts), at
 * stem.NAME.tsv, and " NAME = "copy";" appended to extra (the path as
 * gp_str writes it). The copies' paths are appended to made, one a line,
 * for the caller to remove. A file that cannot be read, or that this
 * does not take apart exactly as gnuplot does (a quote, a carriage
 * return, a comment line), is not copied: gnuplot reads it whole.
 * Returns 0, or -1 when out of memory or a copy cannot be written. */
int plot_cols_narrow(const char *assign, const char *text, const char *edir,
                     const char *stem, bn_buf *extra, bn_buf *made);

#endif
