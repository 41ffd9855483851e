/* Strict parsing of option values, shared by the commands. */
#include "cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <getopt.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/input.h"
#include "io/sweep.h"
#include "study/exp.h"
#include "model/order.h"

/* Print text on stderr with every control character written out, so that
 * a message quoting a name or a value stays one line. */
static void put_escaped(const char *text)
{
    for (const char *c = text; *c; c++) {
        if (*c == '\t')
            fputs("\\t", stderr);
        else if (*c == '\n')
            fputs("\\n", stderr);
        else if (*c == '\r')
            fputs("\\r", stderr);
        else if ((unsigned char)*c < 0x20 || *c == 0x7f)
            fprintf(stderr, "\\x%02x", (unsigned)(unsigned char)*c);
        else
            fputc(*c, stderr);
    }
}

int cli_exists(const char *path, int want_dir)
{
    struct stat st;
    return stat(path, &st) == 0 &&
           (want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

int cli_error(const char *cmd, const char *fmt, ...)
{
    static bn_error msg; /* only the main thread prints */
    va_list ap;
    va_start(ap, fmt);
    bn_vfail(&msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "bnstudy%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    put_escaped(msg.msg);
    fputc('\n', stderr);
    return CLI_EXIT_USAGE;
}

static int bad_option(const char *cmd, char **argv, int optopt_value)
{
    const char *arg = argv[optind - 1];
    if (optopt_value && strncmp(arg, "--", 2) != 0)
        cli_error(cmd, "unknown option '-%c' (see bnstudy %s --help)",
                  optopt_value, cmd);
    else
        cli_error(cmd, "unknown option or missing value '%s' (see bnstudy %s "
                       "--help)",
                  arg, cmd);
    return '?';
}

static int repeatable(const cli_parser *p, const char *name)
{
    for (size_t i = 0; p->repeatable && p->repeatable[i]; i++)
        if (strcmp(p->repeatable[i], name) == 0)
            return 1;
    return 0;
}

/* The option a long argument names, or -1 after a message. */
static int long_option(const cli_parser *p, const char *arg)
{
    const char *name = arg + 2;
    size_t len = strcspn(name, "="), n_opts = 0, found = 0;
    int match = -1;
    while (p->opts[n_opts].name)
        n_opts++;
    for (size_t j = 0; j < n_opts; j++) {
        if (strncmp(p->opts[j].name, name, len) != 0)
            continue;
        if (strlen(p->opts[j].name) == len)
            return (int)j;
        match = (int)j;
        found++;
    }
    if (found == 1)
        return match;
    if (found == 0) {
        cli_error(p->cmd, "unknown option '--%.*s' (see bnstudy %s --help)",
                  (int)len, name, p->cmd);
        return -1;
    }
    /* A prefix of several: say which, so the fix is plain. */
    char list[1024] = "";
    size_t at = 0;
    for (size_t j = 0; j < n_opts && at < sizeof list; j++)
        if (strncmp(p->opts[j].name, name, len) == 0)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s--%s",
                                   at ? ", " : "", p->opts[j].name);
    cli_error(p->cmd, "ambiguous option '--%.*s' (%s)", (int)len, name, list);
    return -1;
}

void cli_note_constant(const char *cmd, const pop_t *pop)
{
    int j = pop_constant_feature(pop);
    if (j >= 0)
        fprintf(stderr,
                "bnstudy %s: note: feature '%s' has zero variance, so "
                "stats_err_rel and worst_var_rel are inf (see "
                "docs/definitions.md)\n",
                cmd, pop->names[j]);
}

void cli_warn_swamped(const char *cmd, const exp_t *e)
{
    char why[512];
    if (exp_swamped(e, why, sizeof why))
        fprintf(stderr, "bnstudy %s: warning: %s\n", cmd, why);
}

/* The whole command line against the option table, left to right as
 * getopt_long reads it; seen marks each option met. */
static int check_args(const cli_parser *p, unsigned char *seen)
{
    for (int i = 1; i < p->argc; i++) {
        const char *a = p->argv[i];
        if (strcmp(a, "--") == 0)
            break;
        if (a[0] != '-' || a[1] == '\0')
            continue; /* an operand */
        if (a[1] != '-') {
            for (const char *c = a + 1; *c; c++)
                if (!strchr(p->shorts, *c) || *c == ':') {
                    cli_error(p->cmd, "unknown option '-%c' (see bnstudy %s "
                                      "--help)",
                              *c, p->cmd);
                    return -1;
                }
            continue;
        }
        int j = long_option(p, a);
        if (j < 0)
            return -1;
        const struct option *o = &p->opts[j];
        int has_value = strchr(a, '=') != NULL;
        if (seen[j] && !repeatable(p, o->name)) {
            cli_error(p->cmd, "option --%s given twice", o->name);
            return -1;
        }
        seen[j] = 1;
        if (o->has_arg == no_argument && has_value) {
            cli_error(p->cmd, "option --%s takes no value", o->name);
            return -1;
        }
        if (o->has_arg == required_argument && !has_value &&
            ++i == p->argc) {
            cli_error(p->cmd, "option --%s needs a value", o->name);
            return -1;
        }
    }
    return 0;
}

static int check_line(const cli_parser *p)
{
    size_t n_opts = 0;
    while (p->opts[n_opts].name)
        n_opts++;
    unsigned char *seen = calloc(n_opts + 1, 1);
    if (!seen) {
        cli_error(p->cmd, "out of memory");
        return -1;
    }
    int rc = check_args(p, seen);
    free(seen);
    return rc;
}

int cli_next(cli_parser *p, int *idx)
{
    char optstring[64];
    snprintf(optstring, sizeof optstring, ":%s", p->shorts);
    if (!p->started) {
        p->started = 1;
        optind = 1;
        opterr = 0;
        if (check_line(p) != 0)
            return '?';
    }
    int i = -1;
    int c = getopt_long(p->argc, p->argv, optstring, p->opts, &i);
    if (c == '?' || c == ':')
        return bad_option(p->cmd, p->argv, optopt);
    if (idx)
        *idx = i;
    return c;
}

int cli_parse_count(const char *cmd, const char *opt, const char *s,
                    double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= 1.0) || v > 1e300) {
        cli_error(cmd, "%s: must be a number of at least 1, got '%s'", opt,
                  s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_size(const char *cmd, const char *opt, const char *s,
                   double *out)
{
    char *end;
    double v = strtod(s, &end);
    static const char units[] = "KMGT";
    const char *u = *end ? strchr(units, *end) : NULL;
    if (u && end[1] == '\0')
        for (const char *k = units; k <= u; k++)
            v *= 1024.0;
    if (end == s || (*end && (!u || end[1] != '\0')) || !(v >= 1.0) ||
        v > 1e300) {
        cli_error(cmd, "%s: must be a size in bytes, with K, M, G or T for "
                       "powers of 1024 (e.g. 4G), got '%s'",
                  opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* The budget of size bytes, as a size_t can hold it. */
static void set_budget(double size)
{
    input_budget_set(size >= (double)SIZE_MAX ? SIZE_MAX : (size_t)size,
                     "--max-memory");
}

void cli_default_budget(void) { set_budget(SWEEP_MAX_MEMORY); }

int cli_max_memory(const char *cmd, const char *s, double *bytes)
{
    double v;
    if (cli_parse_size(cmd, "--max-memory", s, &v) != 0)
        return -1;
    if (bytes)
        *bytes = v;
    set_budget(v);
    return 0;
}

int cli_parse_u64(const char *cmd, const char *opt, const char *s,
                  uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno == ERANGE ||
        v < min || v > max) {
        cli_error(cmd, "%s: must be an integer from %llu to %llu, got '%s'",
                  opt, (unsigned long long)min, (unsigned long long)max, s);
        return -1;
    }
    *out = v;
    return 0;
}

size_t cli_key_options(struct option *opts, char names[][40])
{
    size_t n = 0;
    for (int k = 0; k < KEY_COUNT; k++) {
        const key_def *d = exp_key((key_id)k);
        if (!d->nest)
            continue;
        snprintf(names[n], 40, "%s", d->name);
        for (char *c = names[n]; *c; c++)
            if (*c == '_')
                *c = '-';
        opts[n].name = names[n];
        opts[n].has_arg = required_argument;
        opts[n].flag = NULL;
        opts[n].val = CLI_KEY_BASE + k;
        n++;
    }
    return n;
}

void cli_key_help(FILE *fp)
{
    for (int k = 0; k < KEY_COUNT; k++) {
        const key_def *d = exp_key((key_id)k);
        if (!d->nest)
            continue;
        char opt[64], list[256] = "";
        int len = snprintf(opt, sizeof opt, "--%s %s", d->name, d->arg);
        for (int i = 2; i < len; i++)
            if (opt[i] == '_')
                opt[i] = '-';
        list[0] = ':', list[1] = ' ';
        if (d->type == KT_CHOICES)
            bn_join(list + 2, sizeof list - 2, ", ", ", ", d->choice);
        else if (d->type == KT_ORDERS)
            order_list(", ", list + 2, sizeof list - 2);
        else
            list[0] = '\0';
        fprintf(fp, "  %-22s %s%s (%s)\n", opt, d->help, list, d->dflt);
    }
}

int cli_take_key_option(const char *cmd, exp_t *e, int c, const char *name,
                        const char *arg)
{
    if (c < CLI_KEY_BASE || c >= CLI_KEY_BASE + KEY_COUNT)
        return 0;
    char origin[64];
    bn_error err;
    snprintf(origin, sizeof origin, "--%s", name);
    if (exp_set(e, (key_id)(c - CLI_KEY_BASE), arg, origin, 0, &err) != 0)
        return cli_error(cmd, "%s", err.msg);
    return 1;
}

int cli_one_configuration(const char *cmd, const exp_t *e, int argc,
                          char **argv)
{
    extern int optind;
    if (optind < argc)
        return cli_error(cmd, "unexpected argument '%s'", argv[optind]);
    for (int k = 0; k < KEY_COUNT; k++)
        if (e->n[k] > 1)
            return cli_error(cmd, "%s: one value at a time (a sweep takes "
                                  "lists)",
                             e->from[k]);
    return 0;
}

size_t cli_pop_option_table(struct option *opts)
{
    static const char *const names[CLI_POP_OPTIONS] = {"population", "label",
                                                       "group"};
    for (int i = 0; i < CLI_POP_OPTIONS; i++)
        opts[i] = (struct option){names[i], required_argument, NULL,
                                  CLI_POP_BASE + i};
    return CLI_POP_OPTIONS;
}

int cli_take_pop_option(int c, const char *arg, cli_pop_options *po)
{
    const char **slot[CLI_POP_OPTIONS] = {&po->population, &po->label,
                                          &po->group};
    if (c < CLI_POP_BASE || c >= CLI_POP_BASE + CLI_POP_OPTIONS)
        return 0;
    *slot[c - CLI_POP_BASE] = arg;
    return 1;
}

int cli_apply_pop_options(const char *cmd, exp_t *e, const cli_pop_options *po)
{
    bn_error err;
    if (!po->population && (po->label || po->group))
        return cli_error(cmd, "%s: names a column of a population file, and "
                              "no --population is given",
                         po->label ? "--label" : "--group");
    if (po->population &&
        (exp_set_population(e, po->population, po->label, po->group,
                            &err) != 0 ||
         exp_read_population(e, &err) != 0))
        return cli_error(cmd, "%s", err.msg);
    return 0;
}

void cli_pop_help(FILE *fp)
{
    fputs("  --population FILE      rows from a CSV, TSV or .npy file "
          "instead of the\n"
          "                         embedded population "
          "(docs/population-files.md)\n"
          "  --label COLUMN         the file's class-label column (not a "
          "feature)\n"
          "  --group COLUMN         the file's group column (user, source, "
          "time; not a\n"
          "                         feature)\n",
          fp);
}
