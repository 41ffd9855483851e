/*
 * One gnuplot draws all of an experiment's figures (cmd_plot.c runs this
 * once per experiment): with a gnuplot per figure, starting it (linking,
 * fontconfig, the terminals) was a fifth of the figures' time. The
 * figures go into one command file, each after `reset session` and a
 * warm-up plot that leaves gnuplot's SVG terminal as a fresh gnuplot has
 * it, so that no figure's bytes depend on the figures drawn before it;
 * a marker printed after each figure splits gnuplot's output by figure,
 * so that a warning or an error is still told of the figure that made
 * it. Also the scripts a figure script loads, which the figures' stamp
 * hashes and whose words say which columns a figure can read.
 */
#ifndef BN_PLOT_DRAW_H
#define BN_PLOT_DRAW_H

#include <stddef.h>

#include "base/buf.h"
#include "base/common.h"
#include "figure/plot.h"

/* The commands written before each figure's own (the stamp hashes them:
 * they take part in every figure's bytes). */
extern const char plot_draw_prologue[];

/* Run argv with standard input from /dev/null, its standard output
 * written to the file out and its standard error to err (each replaced;
 * they may be the same file only when it is /dev/null). Returns the exit
 * status, 128 + the signal that ended it, or -1 with errno set when it
 * could not be started. */
int plot_draw_run(char *const argv[], const char *out, const char *err);

/* Append to names, one a line and each once, the name of script (a file
 * of the directory scripts) and of every script it loads, theirs
 * included: a `load` or `call` command (opening a line, or after a `{`
 * or a `;`) names a script as a quoted "NAME.gp", as `load scriptdir .
 * "style.gp"` does; a comment names none. When text is not
 * NULL each file's bytes are appended to it too, with a newline. -1
 * with err filled when a file cannot be read. */
int plot_draw_scripts(const char *scripts, const char *script,
                      bn_buf *names, bn_buf *text, bn_error *err);

/* Draw figures figs[0..n), all of the experiment whose files are in
 * edir, with the gnuplot gnuplot and the scripts of scripts, into the
 * directory figdir; or with tables set, their tables into the directory
 * tables (figdir is then /dev/null). gnuplot's work files (its command
 * file, its output) go to tables or figdir, hidden, and are removed.
 * Returns 0 when all were drawn cleanly, 1 when gnuplot warned (the
 * warnings printed under the figure that gave them), 2 when one could not
 * be drawn (a message naming it printed). */
int plot_draw(const char *gnuplot, const char *scripts,
              const plot_figure *const *figs, size_t n, const char *edir,
              const char *figdir, const char *tables);

#endif
