/*
 * The fuzz target of what `bnstudy verify` (and `bnstudy plot`) read of
 * a result set: an input is its summary.tsv and features.tsv, cut at a
 * line "%%", after one byte that picks the claim checked (each test kind
 * in turn). verify runs on them as a user would, and plot_tables makes
 * the experiment's figures of the same texts, as the web page does.
 * Whatever the tables: no crash or sanitizer report; verify exits 0 (the
 * claim holds), 1 (it does not) or 2 with one line; plot_tables draws
 * figures or says why on one line.
 */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "figure/plot.h"
#include "fuzz_run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One claim of each test kind, on the columns a sweep writes. */
static const char *const claims[] = {
    "[c]\ntest = value\na = e: stats_err @ batch_size=8\nop = >\nvalue = 0\n",
    "[c]\ntest = ratio\na = e: stats_err @ batch_size=16\n"
    "b = e: stats_err @ batch_size=8\nop = >\nvalue = 1\n",
    "[c]\ntest = all\na = e: train_eval_rmse\nop = >=\nvalue = 0\n",
    "[c]\ntest = within\na = e: stats_err_rel\nvalue = 10\n",
    "[c]\ntest = increasing\na = e: stats_err\nover = batch_size\n",
    "[c]\ntest = pairwise\na = e: stats_err @ order=sorted\n"
    "b = e: stats_err @ order=shuffled\nover = batch_size\nop = >\n",
    "[c]\ntest = worst-feature\na = e: worst_var_feature\n",
    "[c]\ntest = fraction\na = e: stats_err @ batch_size=16\n"
    "b = e: stats_err @ batch_size=8\nby = seed\neach = >\nop = >=\n"
    "value = 0.5\n",
};
#define N_CLAIMS (sizeof claims / sizeof *claims)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const unsigned char *piece[2];
    size_t len[2];
    fuzz_split(data + 1, size - 1, 2, piece, len);
    const char *c = claims[data[0] % N_CLAIMS];
    char dir[256], path[256];
    fuzz_write("claims.ini", c, strlen(c));
    fuzz_path(dir, sizeof dir, "r/e");
    mkdir(fuzz_path(path, sizeof path, "r"), 0755);
    mkdir(dir, 0755);
    fuzz_write("r/e/summary.tsv", piece[0], len[0]);
    fuzz_write("r/e/features.tsv", piece[1], len[1]);
    char claims_path[256], results[256];
    fuzz_path(claims_path, sizeof claims_path, "claims.ini");
    fuzz_path(results, sizeof results, "r");
    char *argv[] = {"verify", results, "--claims", claims_path, NULL};
    fuzz_command(cmd_verify, 4, argv);

    plot_file f[2] = {{"summary.tsv", (const char *)piece[0], len[0]},
                      {"features.tsv", (const char *)piece[1], len[1]}};
    plot_list l = {0};
    bn_error err;
    cli_default_budget();
    if (plot_tables(f, 2, "e", &l, &err) < 0 &&
        (!err.msg[0] || strchr(err.msg, '\n')))
        abort();
    plot_list_free(&l);
    return 0;
}
