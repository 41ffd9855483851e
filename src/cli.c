/* Strict parsing of option values, shared by the commands. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <getopt.h>

#include "exp.h"
#include "order.h"

int cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "bnstudy%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_EXIT_USAGE;
}

int cli_bad_option(const char *cmd, char **argv, int optopt_value)
{
    extern int optind;
    const char *arg = argv[optind - 1];
    if (optopt_value && strncmp(arg, "--", 2) != 0)
        cli_error(cmd, "unknown option '-%c' (see bnstudy %s --help)",
                  optopt_value, cmd);
    else
        cli_error(cmd, "unknown option or missing value '%s' (see bnstudy %s "
                       "--help)",
                  arg, cmd);
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
