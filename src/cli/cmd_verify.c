/*
 * `bnstudy verify [RESULTS_DIR]`: check the study's claims against the
 * results. Exit 0 when every claim holds, 1 when one fails, 2 when the
 * claims or the results cannot be read.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "claim/verify.h"

static const char usage[] =
    "usage: bnstudy verify [RESULTS_DIR] [--claims FILE] [--max-memory SIZE]\n"
    "\n"
    "Evaluate each claim of the claims file against the summary.tsv files in\n"
    "RESULTS_DIR (results), print a line per claim with the measured figure\n"
    "and PASS or FAIL, then 'N passed, N failed'. Exit 1 if a claim fails,\n"
    "2 if the claims or results cannot be read.\n"
    "\n"
    "  --claims FILE   the claims (experiments/claims.ini)\n"
    "  --max-memory SIZE  refuse results that would hold more than SIZE\n"
    "                  bytes at once, K M G T allowed (2G)\n"
    "  -h, --help      this text\n";

static const struct option options[] = {
    {"claims", required_argument, NULL, 'c'},
    {"max-memory", required_argument, NULL, 'm'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int cmd_verify(int argc, char **argv)
{
    const char *cmd = "verify", *claims = "experiments/claims.ini";
    const char *dir = "results";
    int c;
    cli_parser p = {cmd, argc, argv, options, "h", NULL, 0};
    while ((c = cli_next(&p, NULL)) != -1) {
        if (c == 'h')
            return fputs(usage, stdout), 0;
        if (c == 'c')
            claims = optarg;
        else if (c != 'm' || cli_max_memory(cmd, optarg, NULL) != 0)
            return CLI_EXIT_USAGE;
    }
    if (optind < argc)
        dir = argv[optind++];
    if (optind < argc)
        return cli_error(cmd, "unexpected argument '%s'", argv[optind]);
    /* The report reaches stdout only whole: a claim that cannot be read
     * stops everything with nothing printed. */
    verify_counts n;
    static bn_error err;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return cli_error(cmd, "out of memory");
    int rc = verify_claims(claims, dir, mem, &n, &err);
    fclose(mem);
    if (rc != 0) {
        free(text);
        return cli_error(cmd, "%s", err.msg);
    }
    fputs(text, stdout);
    free(text);
    printf("%d passed, %d failed\n", n.passed, n.failed);
    return n.failed ? 1 : 0;
}
