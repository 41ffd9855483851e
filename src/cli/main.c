/*
 * bnstudy's entry point: dispatch to a command. Library code never exits or
 * prints.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "base/common.h"
#include "io/provenance.h"

static const char usage[] =
    "usage: bnstudy COMMAND [OPTIONS]\n"
    "\n"
    "Measure exactly why a batch-normalized layer gives different answers in\n"
    "training mode and in evaluation mode.\n"
    "\n"
    "commands:\n"
    "  run          train one configuration, print its scores\n"
    "  population   print the enumerated population's rows\n"
    "  sweep        run an experiment file, write its results\n"
    "  merge        join the shards of a sweep run apart (sweep --shard)\n"
    "  verify       check the study's claims against the results\n"
    "  diagnose     say why a layer's running statistics are off, feature by\n"
    "               feature (a run, or a real checkpoint's statistics)\n"
    "  plot         draw every figure a results directory supports\n"
    "\n"
    "  bnstudy COMMAND --help   options of a command\n"
    "  bnstudy --version        the version and what built it\n";

typedef struct {
    const char *name;
    int (*fn)(int, char **);
} command;

static const command commands[] = {
    {.name = "run", .fn = cmd_run},
    {.name = "population", .fn = cmd_population},
    {.name = "sweep", .fn = cmd_sweep},
    {.name = "merge", .fn = cmd_merge},
    {.name = "verify", .fn = cmd_verify},
    {.name = "diagnose", .fn = cmd_diagnose},
    {.name = "plot", .fn = cmd_plot},
};

/* A full disk or a closed pipe must not pass for success; a command
 * that failed has said so already, and one fault is one message. */
static int finish(int rc)
{
    errno = 0;
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
        cli_error(NULL, "standard output: cannot write: %s",
                  errno ? strerror(errno) : "a write failed");
        return CLI_EXIT_USAGE;
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return fputs(usage, stderr), CLI_EXIT_USAGE;
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        if (argc > 2)
            return cli_error(NULL, "%s takes no argument, got '%s'", argv[1],
                             argv[2]);
        return fputs(usage, stdout), finish(0);
    }
    if (strcmp(argv[1], "--version") == 0) {
        if (argc > 2)
            return cli_error(NULL, "--version takes no argument, got '%s'",
                             argv[2]);
        /* The version, then the manifest's build rows. */
        size_t n;
        const provenance_row *rows = provenance_rows(&n);
        printf("bnstudy %s\n", BNSTUDY_VERSION);
        for (size_t i = 0; i < n; i++)
            if (strncmp(rows[i].key, "build.", 6) == 0)
                printf("%s\t%s\n", rows[i].key, rows[i].value);
        return finish(0);
    }
    cli_default_budget();
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return finish(commands[i].fn(argc - 1, argv + 1));
    return cli_error(NULL, "unknown command '%s' (see bnstudy --help)",
                     argv[1]);
}
