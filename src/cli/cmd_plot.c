/*
 * `bnstudy plot [RESULTS_DIR]`: draw every figure the experiments in a
 * results directory support (plot.h chooses them and words them), by
 * running gnuplot on the scripts in scripts/, one gnuplot per experiment
 * (plot_draw.h), into RESULTS_DIR/figures/<experiment>/.
 * An experiment's figures are drawn into a temporary directory beside
 * them and replace the old ones only once all are drawn, so a failure
 * leaves the previous figures as they were.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "cli/cli.h"
#include "cli/plot_draw.h"
#include "base/input.h"
#include "figure/plot.h"
#include "io/digest.h"
#include "pop/popfile.h"

static const char usage_head[] =
    "usage: bnstudy plot [RESULTS_DIR] [--gnuplot PROG] [--scripts DIR]\n"
    "                    [--list] [--tables DIR] [--max-memory SIZE]\n"
    "\n"
    "Draw every figure the experiments in RESULTS_DIR (results) support,\n"
    "each experiment being a directory that `bnstudy sweep --out` wrote,\n"
    "into RESULTS_DIR/figures/<experiment>/NAME.png and NAME.svg. The\n"
    "figures are chosen by each experiment's axes (the settings that vary\n"
    "in its files) and its files, never by its name; titles state a\n"
    "finding only when the numbers bear it out. Prints a line per figure.\n"
    "Exit 1 when gnuplot warned (the figures are kept), 2 when there is\n"
    "nothing to plot or a figure cannot be drawn.\n"
    "\n"
    "  --gnuplot PROG   the gnuplot to run ($GNUPLOT, else gnuplot)\n"
    "  --scripts DIR    where the figure scripts are (scripts)\n"
    "  --list           print the figures and what each draws; draw none\n"
    "  --tables DIR     write the points each figure draws (gnuplot's\n"
    "                   `set table`) to DIR/<experiment>/NAME.png.tab and\n"
    "                   its texts to NAME.N.set instead of images, for\n"
    "                   tests/figures.sh\n"
    "  --max-memory SIZE  refuse results that would hold more than SIZE\n"
    "                   bytes at once, K M G T allowed (2G)\n"
    "  -h, --help       this text\n"
    "\n"
    "figures:\n";

static const struct option options[] = {
    {"gnuplot", required_argument, NULL, 'g'},
    {"scripts", required_argument, NULL, 's'},
    {"list", no_argument, NULL, 'l'},
    {"tables", required_argument, NULL, 't'},
    {"max-memory", required_argument, NULL, 'm'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const char *cmd = "plot";

/* text after a label, wrapped at 78 columns under its first word. */
static void wrapped(const char *label, const char *text)
{
    int col = printf("    %-6s", label);
    while (*text) {
        size_t w = strcspn(text, " ");
        if (col + 1 + (int)w > 78)
            col = printf("\n          ") - 1;
        col += printf(" %.*s", (int)w, text);
        text += w;
        text += strspn(text, " ");
    }
    putchar('\n');
}

static void usage(void)
{
    fputs(usage_head, stdout);
    for (size_t i = 0; plot_kind_get(i); i++) {
        const plot_kind *k = plot_kind_get(i);
        printf("  %s (scripts/%s)\n", k->name, k->script);
        wrapped("needs:", k->needs);
        wrapped("draws:", k->draws);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The experiments of dir: its subdirectories with a manifest.tsv, sorted
 * by name. */
static int experiments(const char *dir, char ***names, size_t *n)
{
    char path[4200];
    *names = NULL;
    *n = 0;
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    if (cli_exists(path, 0))
        return cli_error(cmd,
                         "%s is one experiment's directory (it has "
                         "manifest.tsv): give the results directory that "
                         "holds it",
                         dir);
    DIR *d = opendir(dir);
    if (!d)
        return cli_error(cmd, "cannot read %s: %s", dir, strerror(errno));
    size_t cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/manifest.tsv", dir, e->d_name);
        if (!cli_exists(path, 0))
            continue;
        if (strcmp(e->d_name, "figures") == 0) {
            rc = cli_error(cmd,
                           "%s/figures holds an experiment's results, and "
                           "that is where plot draws: name the experiment "
                           "file otherwise",
                           dir);
            break;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **v = realloc(*names, cap * sizeof *v);
            if (!v) {
                rc = cli_error(cmd, "out of memory");
                break;
            }
            *names = v;
        }
        if (!((*names)[*n] = strdup(e->d_name))) {
            rc = cli_error(cmd, "out of memory");
            break;
        }
        (*n)++;
    }
    closedir(d);
    if (*n)
        qsort(*names, *n, sizeof **names, cmp_str);
    return rc;
}

/* A directory of files only (the figures'), and the directory. */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4400];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

static int mkdir_p(const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST)
        return cli_exists(dir, 1) ? 0 : -1;
    return -1;
}

/* ---- figures whose inputs did not change ---- */

/* The file beside an experiment's figures naming what they were drawn
 * from. */
#define STAMP_FILE "inputs.sha256"

/* Append the SHA-256 of the file at path (its lines that open with
 * "build." left out when skip_build: a manifest's build rows name the
 * build, and no figure reads them) and its name to t. */
static int stamp_file(bn_buf *t, const char *path, const char *name,
                      int skip_build)
{
    char *bytes;
    size_t len;
    bn_error err;
    if (input_read(path, POPFILE_MAX_BYTES, 0, &bytes, &len, &err) != 0)
        return -1;
    size_t held = len;
    if (skip_build) {
        size_t o = 0;
        for (size_t i = 0; i < len;) {
            size_t e = i;
            while (e < len && bytes[e] != '\n')
                e++;
            e += e < len;
            if (e - i < 6 || memcmp(bytes + i, "build.", 6) != 0) {
                memmove(bytes + o, bytes + i, e - i);
                o += e - i;
            }
            i = e;
        }
        len = o;
    }
    char hex[65];
    digest_sha256_hex((const unsigned char *)bytes, len, hex);
    input_free(bytes, held);
    buf_printf(t, "%s  %s\n", hex, name);
    return 0;
}

/* The regular files of dir but hidden ones, sorted, into *names
 * (NULL-terminated, the caller frees). */
static int files_of(const char *dir, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    size_t cap = 0;
    char path[4400];
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || !cli_exists(path, 0))
            continue;
        if (*n + 1 >= cap) {
            cap = cap ? 2 * cap : 16;
            char **v = realloc(*names, cap * sizeof *v);
            if (!v) {
                rc = -1;
                break;
            }
            *names = v;
        }
        if (!((*names)[*n] = strdup(e->d_name)))
            rc = -1;
        else
            (*names)[++*n] = NULL;
    }
    closedir(d);
    if (*n)
        qsort(*names, *n, sizeof **names, cmp_str);
    return rc;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* The scripts experiment e's figures run, each figure's own and those it
 * loads, each once, hashed into t. */
static int stamp_scripts(bn_buf *t, const char *scripts, const char *e,
                         const plot_list *l)
{
    bn_buf names = {0};
    bn_error err;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < l->n; i++)
        if (strcmp(l->fig[i].experiment, e) == 0)
            rc = plot_draw_scripts(scripts, l->fig[i].script, &names, NULL,
                                   &err);
    if (names.failed)
        rc = -1;
    for (char *p = names.p; rc == 0 && p && *p;) {
        char *end = strchr(p, '\n'), path[4200];
        *end = '\0';
        snprintf(path, sizeof path, "%s/%s", scripts, p);
        rc = stamp_file(t, path, p, 0);
        p = end + 1;
    }
    buf_free(&names);
    return rc;
}

/* What plot.c tells each of experiment e's figures, into t, with the
 * experiment's own directory (edir, ending in '/') left out of the paths. */
static void stamp_assign(bn_buf *t, const char *e, const char *edir,
                         const plot_list *l)
{
    size_t le = strlen(edir);
    for (size_t i = 0; i < l->n; i++) {
        const plot_figure *f = &l->fig[i];
        if (strcmp(f->experiment, e) != 0)
            continue;
        buf_printf(t, "figure %s %s\n", f->name, f->script);
        for (const char *a = f->assign; *a;) {
            const char *hit = strstr(a, edir);
            size_t k = hit ? (size_t)(hit - a) : strlen(a);
            buf_printf(t, "%.*s", (int)k, a);
            a += k + (hit ? le : 0);
        }
        buf_putc(t, '\n');
    }
}

/* Everything experiment e's figures are drawn from, as one SHA-256: the
 * bytes of its files (the manifest's build rows aside), of the scripts its
 * figures run (a script no figure of e runs, such as the bench's
 * scaling.gp, does not move it), of the commands run before each figure,
 * and what plot.c tells each script (with the experiment's own directory
 * left out of the paths, so the same results anywhere give the same
 * stamp). Not gnuplot's version: figures drawn from the same inputs are
 * kept whatever gnuplot would make of them now. -1 when a file cannot be
 * read (the figures are then drawn). */
static int stamp(const char *scripts, const char *dir, const char *e,
                 const plot_list *l, char hex[65])
{
    bn_buf t = {0};
    char edir[4200], path[8700];
    snprintf(edir, sizeof edir - 1, "%s/%s", dir, e);
    char **names;
    size_t n;
    int rc = files_of(edir, &names, &n) != 0 ? -1 : 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", edir, names[i]);
        rc = stamp_file(&t, path, names[i], !strcmp(names[i], "manifest.tsv"));
    }
    free_names(names, n);
    if (rc == 0)
        rc = stamp_scripts(&t, scripts, e, l);
    buf_printf(&t, "before each figure\n%s", plot_draw_prologue);
    strcat(edir, "/");
    stamp_assign(&t, e, edir, l);
    if (rc == 0 && t.failed)
        rc = -1;
    if (rc == 0)
        digest_sha256_hex((const unsigned char *)(t.p ? t.p : ""), t.len,
                          hex);
    buf_free(&t);
    return rc;
}

/* Whether final holds experiment e's figures drawn from these very
 * inputs: its stamp is hex, and it holds each figure and nothing else. */
static int still_drawn(const char *final, const char *e, const plot_list *l,
                       const char *hex)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", final, STAMP_FILE);
    char *old;
    size_t len;
    bn_error err;
    if (input_read(path, 4096, 0, &old, &len, &err) != 0)
        return 0;
    int same = len >= 64 && memcmp(old, hex, 64) == 0;
    input_free(old, len);
    size_t want = 1;
    for (size_t i = 0; same && i < l->n; i++) {
        if (strcmp(l->fig[i].experiment, e) != 0)
            continue;
        for (int x = 0; x < 2 && same; x++) {
            snprintf(path, sizeof path, "%s/%s.%s", final, l->fig[i].name,
                     x ? "svg" : "png");
            same = cli_exists(path, 0);
        }
        want += 2;
    }
    char **names;
    size_t n;
    if (same && files_of(final, &names, &n) == 0) {
        same = n == want;
        free_names(names, n);
    } else {
        same = 0;
    }
    return same;
}

/* Experiment e's figures of l, drawn by one gnuplot (plot_draw). */
static int draw_figures(const char *gnuplot, const char *scripts,
                        const plot_list *l, const char *e, const char *edir,
                        const char *figdir, const char *tables)
{
    const plot_figure **figs = malloc((l->n ? l->n : 1) * sizeof *figs);
    if (!figs)
        return cli_error(cmd, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->fig[i].experiment, e) == 0)
            figs[n++] = &l->fig[i];
    int rc = plot_draw(gnuplot, scripts, figs, n, edir, figdir, tables);
    free(figs);
    return rc;
}

/* The stamp hex into dir's STAMP_FILE. 0, or 2 with a message. */
static int write_stamp(const char *dir, const char *hex)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, STAMP_FILE);
    FILE *fp = fopen(path, "w");
    if (!fp || fprintf(fp, "%s  the figures' inputs: the experiment's "
                           "files, the scripts, the settings\n",
                       hex) < 0 ||
        fclose(fp) != 0) {
        cli_error(cmd, "%s: cannot write: %s", path, strerror(errno));
        return 2;
    }
    return 0;
}

/* Put the directory tmp in final's place (final's old figures removed).
 * 0, or 2 with a message and tmp removed. */
static int replace_dir(const char *tmp, const char *final, const char *dir,
                       const char *e)
{
    char old[4300];
    int had = cli_exists(final, 1);
    if (had) {
        snprintf(old, sizeof old, "%s/figures/.%s.old.XXXXXX", dir, e);
        if (!mkdtemp(old) || rmdir(old) != 0 || rename(final, old) != 0) {
            remove_tree(tmp);
            return cli_error(cmd, "cannot replace %s: %s", final,
                             strerror(errno));
        }
    }
    if (rename(tmp, final) != 0) {
        int e2 = errno;
        if (had)
            rename(old, final);
        remove_tree(tmp);
        return cli_error(cmd, "cannot create %s: %s", final, strerror(e2));
    }
    if (had)
        remove_tree(old);
    return 0;
}

/* Draw experiment e's figures into a new directory beside figures/E,
 * then put it in E's place; when figures/E holds them drawn from the same
 * inputs already (stamp), leave it as it is. With tables, their tables
 * into tables/E instead. Returns plot_draw's status. */
static int draw_experiment(const char *gnuplot, const char *scripts,
                           const char *dir, const char *e,
                           const plot_list *l, const char *tables)
{
    char final[4200], tmp[4300], edir[4200];
    snprintf(edir, sizeof edir, "%s/%s", dir, e);
    if (tables) {
        snprintf(final, sizeof final, "%s/%s", tables, e);
        if (mkdir_p(tables) != 0 || mkdir_p(final) != 0)
            return cli_error(cmd, "cannot create %s: %s", final,
                             strerror(errno));
        return draw_figures(gnuplot, scripts, l, e, edir, "/dev/null",
                            final);
    }
    snprintf(final, sizeof final, "%s/figures/%s", dir, e);
    char hex[65];
    int stamped = stamp(scripts, dir, e, l, hex) == 0;
    if (stamped && still_drawn(final, e, l, hex))
        return 0;
    snprintf(tmp, sizeof tmp, "%s/figures/.%s.XXXXXX", dir, e);
    if (!mkdtemp(tmp))
        return cli_error(cmd, "cannot create a directory in %s/figures: %s",
                         dir, strerror(errno));
    /* mkdtemp makes it private; the figures are for whoever reads the
     * results. */
    mode_t mask = umask(0);
    umask(mask);
    chmod(tmp, 0777 & ~mask);
    int worst = draw_figures(gnuplot, scripts, l, e, edir, tmp, NULL);
    /* Figures drawn with a warning are not stamped, so the next plot
     * draws them again and shows the warning again. */
    if (worst == 0 && stamped)
        worst = write_stamp(tmp, hex);
    if (worst >= 2) {
        remove_tree(tmp);
        return worst;
    }
    int r = replace_dir(tmp, final, dir, e);
    return r ? r : worst;
}

/* Whether gnuplot runs and every script the figures of l run can be
 * read: 0, or CLI_EXIT_USAGE with a message. */
static int check_tools(const char *gnuplot, const char *scripts,
                       const plot_list *l)
{
    char *vargv[] = {(char *)gnuplot, "--version", NULL};
    int st = plot_draw_run(vargv, "/dev/null", "/dev/null");
    if (st != 0)
        return cli_error(cmd,
                         "cannot run gnuplot ('%s'%s%s): install it "
                         "(make deps) or name it with --gnuplot",
                         gnuplot, st < 0 ? ": " : ": exit status",
                         st < 0 ? strerror(errno) : "");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < l->n; i++) {
        bn_buf names = {0};
        bn_error err;
        if (plot_draw_scripts(scripts, l->fig[i].script, &names, NULL,
                              &err) != 0)
            rc = cli_error(cmd,
                           "%s (run from bnstudy's directory, or give "
                           "--scripts DIR)",
                           err.msg);
        buf_free(&names);
    }
    return rc;
}

int cmd_plot(int argc, char **argv)
{
    const char *dir = "results", *scripts = "scripts", *tables = NULL;
    const char *gnuplot = getenv("GNUPLOT");
    int list_only = 0, c;
    if (!gnuplot || !gnuplot[0])
        gnuplot = "gnuplot";
    cli_parser p = {cmd, argc, argv, options, "h", NULL, 0};
    while ((c = cli_next(&p, NULL)) != -1) {
        if (c == 'h')
            return usage(), 0;
        if (c == 'g')
            gnuplot = optarg;
        else if (c == 's')
            scripts = optarg;
        else if (c == 'l')
            list_only = 1;
        else if (c == 't')
            tables = optarg;
        else if (c != 'm' || cli_max_memory(cmd, optarg, NULL) != 0)
            return CLI_EXIT_USAGE;
    }
    if (optind < argc)
        dir = argv[optind++];
    if (optind < argc)
        return cli_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!cli_exists(dir, 1))
        return cli_error(cmd, "%s: no such directory", dir);

    char **names;
    size_t ne;
    int rc = experiments(dir, &names, &ne);
    plot_list l = {0};
    for (size_t i = 0; rc == 0 && i < ne; i++) {
        char path[4200];
        bn_error err;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (plot_experiment(path, names[i], &l, &err) < 0)
            rc = cli_error(cmd, "%s", err.msg);
    }
    if (rc == 0 && l.n == 0)
        rc = cli_error(cmd,
                       ne ? "nothing to plot in %s: no figure fits its "
                            "experiments (each needs a setting that varies, "
                            "features.tsv or many seeds; see bnstudy plot "
                            "--help)"
                          : "nothing to plot in %s: it holds no "
                            "experiment's results (a directory with "
                            "manifest.tsv, as bnstudy sweep --out writes)",
                       dir);
    if (rc == 0 && list_only) {
        for (size_t i = 0; i < l.n; i++)
            printf("%s/%s: %s\n", l.fig[i].experiment, l.fig[i].name,
                   l.fig[i].what);
        goto done;
    }
    /* Everything a figure needs, before anything is drawn. */
    if (rc == 0)
        rc = check_tools(gnuplot, scripts, &l);
    if (rc == 0 && !tables) {
        char path[4200];
        snprintf(path, sizeof path, "%s/figures", dir);
        if (mkdir_p(path) != 0)
            rc = cli_error(cmd, "cannot create %s: %s", path,
                           strerror(errno));
    }
    int worst = 0;
    for (size_t i = 0; rc == 0 && i < ne; i++) {
        int r = draw_experiment(gnuplot, scripts, dir, names[i], &l, tables);
        if (r >= 2)
            rc = CLI_EXIT_USAGE;
        worst = r > worst ? r : worst;
        for (size_t k = 0; r < 2 && !tables && k < l.n; k++)
            if (strcmp(l.fig[k].experiment, names[i]) == 0)
                printf("%s/figures/%s/%s.png, .svg: %s\n", dir, names[i],
                       l.fig[k].name, l.fig[k].what);
    }
    if (rc == 0)
        rc = worst;
done:
    plot_list_free(&l);
    for (size_t i = 0; i < ne; i++)
        free(names[i]);
    free(names);
    return rc;
}
