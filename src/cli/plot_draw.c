/*
 * An experiment's figures drawn by one gnuplot (plot_draw.h): the
 * command file that draws them one after the other, each from a clean
 * slate, and gnuplot's output split back into each figure's.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/input.h"
#include "cli/cli.h"
#include "cli/plot_cols.h"
#include "cli/plot_draw.h"

extern char **environ;

static const char *cmd = "plot";

/* `reset session` clears the variables, the functions and the settings,
 * but not an open table (style.gp's with --tables), the output, nor the
 * SVG terminal's own state: the pen it opens each plot's first group
 * with is the last one the process drew with. The plot to /dev/null
 * ends with the pen a fresh gnuplot starts with (width 1, the default
 * colour: gnuplot 5.4's svg.trm), whatever was drawn before it; then a
 * second `reset session` forgets its settings. */
const char plot_draw_prologue[] =
    "unset table\n"
    "unset output\n"
    "reset session\n"
    "set terminal svg\n"
    "set output '/dev/null'\n"
    "unset key\n"
    "unset tics\n"
    "set yrange [0:1]\n"
    "set title ' '\n"
    "plot 0\n"
    "unset output\n"
    "reset session\n";

/* Printed, to gnuplot's standard error and then to its standard output,
 * after each figure: what comes before the k-th is the k-th figure's. */
#define MARKER "@@ bnstudy plot: this figure is drawn @@"

int plot_draw_run(char *const argv[], const char *out, const char *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC,
                                     0666);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC,
                                     0666);
    pid_t pid;
    int e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0) {
        errno = e;
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* ---- the scripts a figure runs ---- */

/* Whether names (one a line) lists name. */
static int listed(const bn_buf *names, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = names->p; p && *p;) {
        const char *e = strchr(p, '\n');
        if ((size_t)(e - p) == n && memcmp(p, name, n) == 0)
            return 1;
        p = e + 1;
    }
    return 0;
}

/* Where the quoted string opening at q (a ' or ") ends, its closing
 * quote, or NULL when it does not end before e. */
static const char *quote_end(const char *q, const char *e)
{
    for (const char *c = q + 1; c < e; c++) {
        if (*q == '"' && *c == '\\' && c + 1 < e)
            c++;
        else if (*c == *q)
            return c;
    }
    return NULL;
}

/* The "NAME.gp" literals of text's `load` and `call` commands, appended
 * to loads one a line: a command that opens a line or follows a `{` or
 * a `;` (`if (...) { load ... }`), its literals up to the command's end;
 * a `#` outside quotes ends the line (a comment's "NAME.gp" is none). */
static void loads_of(const char *text, bn_buf *loads)
{
    for (const char *l = text; *l;) {
        const char *end = strchr(l, '\n');
        const char *e = end ? end : l + strlen(l);
        int start = 1;  /* at a command's start */
        const char *in = NULL; /* in a load's or call's arguments */
        for (const char *c = l; c < e; c++) {
            if (*c == '"' || *c == '\'') {
                const char *q = quote_end(c, e);
                if (!q)
                    break;
                if (in && q - c - 1 > 3 && memcmp(q - 3, ".gp", 3) == 0)
                    buf_printf(loads, "%.*s\n", (int)(q - c - 1), c + 1);
                c = q, start = 0;
            } else if (*c == '#') {
                break;
            } else if (*c == ';' || *c == '{' || *c == '}') {
                start = 1, in = NULL;
            } else if (*c != ' ' && *c != '\t') {
                if (start && (strncmp(c, "load", 4) == 0 ||
                              strncmp(c, "call", 4) == 0) &&
                    (c[4] == ' ' || c[4] == '\t' || c[4] == '"' ||
                     c[4] == '\''))
                    in = c, c += 3;
                start = 0;
            }
        }
        l = e + (end != NULL);
    }
}

int plot_draw_scripts(const char *scripts, const char *script,
                      bn_buf *names, bn_buf *text, bn_error *err)
{
    if (listed(names, script))
        return 0;
    char path[4200], *s;
    size_t len;
    snprintf(path, sizeof path, "%s/%s", scripts, script);
    if (input_read(path, (size_t)1 << 20, 1, &s, &len, err) != 0)
        return -1;
    buf_printf(names, "%s\n", script);
    if (text) {
        buf_add(text, s, len);
        buf_putc(text, '\n');
    }
    bn_buf loads = {0};
    loads_of(s, &loads);
    input_free(s, len);
    int rc = loads.failed ? bn_fail(err, "out of memory") : 0;
    for (char *p = loads.p; rc == 0 && p && *p;) {
        char *e = strchr(p, '\n');
        *e = '\0';
        rc = plot_draw_scripts(scripts, p, names, text, err);
        p = e + 1;
    }
    buf_free(&loads);
    return rc;
}

/* ---- the command file ---- */

/* Figure f's part of the command file, into c: the prologue, its
 * assignments (the tables cut to the columns it can read, made beside
 * its log in work, listed in made), its script, the markers. -1 with a
 * message printed when it cannot be written. */
static int figure_commands(bn_buf *c, bn_buf *made, const char *scripts,
                           const plot_figure *f, const char *edir,
                           const char *figdir, const char *tables,
                           const char *work)
{
    bn_buf text = {0}, names = {0}, extra = {0};
    bn_error err;
    if (plot_draw_scripts(scripts, f->script, &names, &text, &err) != 0) {
        buf_free(&text), buf_free(&names);
        cli_error(cmd, "%s", err.msg);
        return -1;
    }
    char stem[4300];
    snprintf(stem, sizeof stem, "%s/.%s", work, f->name);
    int cut = text.failed ? -1
                          : plot_cols_narrow(f->assign, text.p ? text.p : "",
                                             edir, stem, &extra, made);
    buf_free(&text), buf_free(&names);
    if (cut != 0) {
        buf_free(&extra);
        cli_error(cmd, "%s/%s: cannot write a table for gnuplot",
                  f->experiment, f->name);
        return -1;
    }
    buf_printf(c, "%s%s%s name = ", plot_draw_prologue, f->assign,
               extra.p ? extra.p : "");
    buf_free(&extra);
    gp_str(c, f->name);
    buf_puts(c, "; figdir = ");
    gp_str(c, figdir);
    buf_putc(c, ';');
    if (tables) {
        buf_puts(c, " tables = ");
        gp_str(c, tables);
        buf_putc(c, ';');
    }
    char script[4200];
    snprintf(script, sizeof script, "%s/%s", scripts, f->script);
    buf_puts(c, "\nload ");
    gp_str(c, script);
    buf_puts(c, "\nset print\nprint \"" MARKER "\"\n"
                "set print \"-\"\nprint \"" MARKER "\"\nset print\n");
    return 0;
}

/* Write text to path (replaced). 0, or -1 with errno set. */
static int write_file(const char *path, const bn_buf *text)
{
    FILE *fp = fopen(path, "w");
    if (!fp)
        return -1;
    int ok = fwrite(text->p, 1, text->len, fp) == text->len;
    int e = errno;
    if (fclose(fp) != 0 || !ok) {
        errno = ok ? errno : e;
        return -1;
    }
    return 0;
}

/* Remove the files made lists, one a line. */
static void remove_made(bn_buf *made)
{
    for (char *p = made->p; p && *p;) {
        char *e = strchr(p, '\n');
        *e = '\0';
        unlink(p);
        p = e + 1;
    }
    buf_free(made);
}

/* ---- gnuplot's output, figure by figure ---- */

/* What gnuplot wrote to one stream, read back from path and removed: a
 * warning's text is short, a megabyte is not one. */
typedef struct {
    char *text;
    size_t len;
} stream;

static int stream_read(stream *s, const char *path, bn_error *err)
{
    int rc = input_read(path, (size_t)1 << 20, 0, &s->text, &s->len, err);
    if (rc != 0)
        s->text = NULL, s->len = 0;
    unlink(path);
    return rc;
}

/* Piece k of s (what comes after the k-th marker, 0-based, and before the
 * next or the end), as its start and length; *ends whether a marker ends
 * it. */
static const char *piece(const stream *s, size_t k, size_t *len, int *ends)
{
    const char *p = s->text ? s->text : "";
    for (size_t i = 0; i < k && p; i++) {
        p = strstr(p, MARKER "\n");
        if (p)
            p += sizeof MARKER;
    }
    if (!p) {
        *len = 0, *ends = 0;
        return "";
    }
    const char *m = strstr(p, MARKER "\n");
    *ends = m != NULL;
    *len = m ? (size_t)(m - p) : strlen(p);
    return p;
}

/* Piece k of both streams, on standard error. */
static void put_piece(const stream *err, const stream *out, size_t k)
{
    size_t n;
    int ends;
    const char *p = piece(err, k, &n, &ends);
    fwrite(p, 1, n, stderr);
    p = piece(out, k, &n, &ends);
    fwrite(p, 1, n, stderr);
}

static int piece_empty(const stream *err, const stream *out, size_t k)
{
    size_t a, b;
    int ends;
    piece(err, k, &a, &ends);
    piece(out, k, &b, &ends);
    return a + b == 0;
}

/* What gnuplot said, figure by figure, given its exit status st (and
 * errno, started, when it could not start): each figure whose part holds
 * anything warned; the first one whose marker never came failed, unless
 * gnuplot ended cleanly after the last. */
static int report(const plot_figure *const *figs, size_t n, int st,
                  int started, const stream *err, const stream *out)
{
    if (st < 0)
        return cli_error(cmd, "%s: gnuplot could not start: %s",
                         figs[0]->experiment, strerror(started));
    int rc = 0;
    size_t k = 0, len;
    int ends = 1;
    for (; k <= n; k++) {
        piece(err, k, &len, &ends);
        if (!ends)
            break;
        if (k < n && !piece_empty(err, out, k)) {
            fprintf(stderr, "bnstudy plot: %s/%s: gnuplot warned:\n",
                    figs[k]->experiment, figs[k]->name);
            put_piece(err, out, k);
            rc = 1;
        }
    }
    if (k < n) {
        if (st != 0)
            cli_error(cmd, "%s/%s: gnuplot failed:", figs[k]->experiment,
                      figs[k]->name);
        else
            cli_error(cmd, "%s/%s: gnuplot stopped before drawing it",
                      figs[k]->experiment, figs[k]->name);
        put_piece(err, out, k);
        return 2;
    }
    if (st != 0 || !piece_empty(err, out, n)) {
        if (st != 0)
            cli_error(cmd, "%s: gnuplot failed after its last figure:",
                      figs[0]->experiment);
        else
            fprintf(stderr, "bnstudy plot: %s: gnuplot warned after its "
                            "last figure:\n",
                    figs[0]->experiment);
        put_piece(err, out, n);
        return st != 0 ? 2 : 1;
    }
    return rc;
}

int plot_draw(const char *gnuplot, const char *scripts,
              const plot_figure *const *figs, size_t n, const char *edir,
              const char *figdir, const char *tables)
{
    const char *work = tables ? tables : figdir;
    bn_buf c = {0}, made = {0};
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (figure_commands(&c, &made, scripts, figs[i], edir, figdir,
                            tables, work) != 0) {
            remove_made(&made);
            buf_free(&c);
            return 2;
        }
    char file[4300], out[4300], errs[4300];
    snprintf(file, sizeof file, "%s/.gnuplot.gp", work);
    snprintf(out, sizeof out, "%s/.gnuplot.out", work);
    snprintf(errs, sizeof errs, "%s/.gnuplot.err", work);
    if (c.failed || write_file(file, &c) != 0) {
        int e = c.failed ? ENOMEM : errno;
        unlink(file);
        remove_made(&made);
        buf_free(&c);
        return cli_error(cmd, "%s: cannot write: %s", file, strerror(e));
    }
    buf_free(&c);
    char *argv[] = {(char *)gnuplot, file, NULL};
    int st = plot_draw_run(argv, out, errs);
    int started = errno;
    unlink(file);
    remove_made(&made);
    stream so, se;
    bn_error e1, e2;
    int r1 = stream_read(&so, out, &e1), r2 = stream_read(&se, errs, &e2);
    int rc;
    if (st >= 0 && (r1 != 0 || r2 != 0)) {
        /* Without its output no figure can be told apart. */
        cli_error(cmd, "%s: what gnuplot said cannot be read: %s",
                  figs[0]->experiment, r1 != 0 ? e1.msg : e2.msg);
        rc = st == 0 ? 1 : 2;
    } else {
        rc = report(figs, n, st, started, &se, &so);
    }
    input_free(so.text, so.len);
    input_free(se.text, se.len);
    return rc;
}
