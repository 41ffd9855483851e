/*
 * The command line: one function per command, sharing the strict parsers
 * below. Every parser prints one line naming the command, the option and
 * the reason, and returns -1; the command then exits with status 2 before
 * anything is written.
 */
#ifndef BN_CLI_H
#define BN_CLI_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "model/bn.h"
#include "pop/pop.h"
#include "model/run.h"

#define CLI_EXIT_USAGE 2

int cmd_population(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_plot(int argc, char **argv);

/* path names a regular file (want_dir 0) or a directory (1). */
int cli_exists(const char *path, int want_dir);

/* Report "bnstudy CMD: message" on stderr; returns CLI_EXIT_USAGE. */
int cli_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A command's options, read with cli_next. Before the first option is
 * returned the whole command line is checked against opts, so that every
 * command gets the same rules whatever its table holds: a long option is
 * its exact name or a prefix of exactly one name (glibc would take a
 * prefix of several that share a value), given at most once unless named
 * in repeatable, with a value if and only if it takes one. Short options
 * (shorts, getopt's letters) take no value. */
struct option;
typedef struct {
    const char *cmd;
    int argc;
    char **argv;
    const struct option *opts;
    const char *shorts;
    const char *const *repeatable; /* NULL-terminated long names, or NULL */
    int started;
} cli_parser;

/* The next option's val (and its index in opts in *idx), -1 after the
 * last, or '?' once a message has been printed. */
int cli_next(cli_parser *p, int *idx);

/* A note on stderr when pop has a feature of zero variance: the relative
 * scores (stats_err_rel, worst_var_rel) are then infinite, which the
 * command says rather than leave to be found in the files. */
void cli_note_constant(const char *cmd, const pop_t *pop);
struct exp_s;
/* A warning on stderr when e's results would mean nothing (exp_swamped:
 * a beta that swamps the outputs); the command still runs. */
void cli_warn_swamped(const char *cmd, const struct exp_s *e);

int cli_parse_u64(const char *cmd, const char *opt, const char *s,
                  uint64_t min, uint64_t max, uint64_t *out);
/* A positive number ("1e12" too) for --max-work. */
int cli_parse_count(const char *cmd, const char *opt, const char *s,
                    double *out);
/* A size in bytes with an optional K, M, G or T (powers of 1024), for
 * --max-memory. */
int cli_parse_size(const char *cmd, const char *opt, const char *s,
                   double *out);
/* --max-memory SIZE: the memory a command may hold, its inputs' reading
 * budget (base/input.h) among it; main sets the default (2G) before any
 * command runs. Parsed into *bytes (NULL: not kept) and set as the
 * budget; -1 after a message when SIZE is not one. */
#define CLI_MAX_MEMORY_HELP                                                 \
    "  --max-memory SIZE      refuse inputs that would hold more than SIZE\n" \
    "                         bytes, K M G T allowed (2G)\n"
int cli_max_memory(const char *cmd, const char *s, double *bytes);
void cli_default_budget(void);

/* The options of the experiment keys that are axes (exp.h's table):
 * "--batch-size" for batch_size. Fills opts (room for KEY_COUNT + extra
 * entries) with the key's id in val + CLI_KEY_BASE, and returns how many
 * it added. */
#define CLI_KEY_BASE 2000
size_t cli_key_options(struct option *opts, char names[][40]);
/* Their help lines, from the table: "  --batch-size B   help (256)". */
void cli_key_help(FILE *fp);

struct exp_s;
/* A key option getopt_long returned (c, from cli_key_options, named
 * name): its value set in e as from "--name". 1 when c is one, 0 when it
 * is not, CLI_EXIT_USAGE (message printed) when the value is refused. */
int cli_take_key_option(const char *cmd, struct exp_s *e, int c,
                        const char *name, const char *arg);
/* After the options of a command that runs one configuration: no
 * argument left, one value per key. 0, or CLI_EXIT_USAGE with the message
 * printed. */
int cli_one_configuration(const char *cmd, const struct exp_s *e, int argc,
                          char **argv);

/* --population FILE, --label COLUMN and --group COLUMN, the options of
 * every command that reads a population (values CLI_POP_BASE + 0..2). */
#define CLI_POP_BASE 3000
#define CLI_POP_OPTIONS 3
typedef struct {
    const char *population, *label, *group;
} cli_pop_options;
/* Fill opts with the three entries; returns 3. */
size_t cli_pop_option_table(struct option *opts);
/* 1 when c is one of them (its value taken from arg), else 0. */
int cli_take_pop_option(int c, const char *arg, cli_pop_options *po);
/* Name the file in e and read it (nothing when no --population); on a
 * refusal the message is printed and CLI_EXIT_USAGE returned. */
int cli_apply_pop_options(const char *cmd, struct exp_s *e,
                          const cli_pop_options *po);
/* Their help lines. */
void cli_pop_help(FILE *fp);

#endif
