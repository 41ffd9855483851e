/*
 * The fuzz target of the experiment-file and --set paths. An input is an
 * experiment file, optionally followed by a line "%%" and one --set per
 * line after it. It is loaded as `bnstudy sweep` loads a file (exp_load's
 * text path), and when it loads, everything a sweep does before running
 * is done too: the estimate, the manifest, the first and last
 * configuration and their key columns. What must hold whatever the input:
 * no crash or sanitizer report, a failure has a one-line message (BN_STRICT
 * aborts on one that would not fit), and every manifest line is one key,
 * a tab and one value, so no name or value can forge a line or a field.
 */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/exp.h"
#include "io/sweep.h"

#define MAX_SETS 16

static void check_manifest(const exp_t *e)
{
    bn_buf b = {0};
    exp_manifest(&b, e);
    if (b.failed)
        abort();
    for (const char *line = b.p; line && *line;) {
        const char *nl = strchr(line, '\n');
        if (!nl)
            abort(); /* every line ends */
        size_t tabs = 0;
        for (const char *c = line; c < nl; c++)
            tabs += *c == '\t';
        if (tabs != 1)
            abort(); /* one key, one value */
        line = nl + 1;
    }
    buf_free(&b);
}

static void check_row(const exp_t *e, size_t k)
{
    run_config cfg;
    exp_config(e, k, &cfg);
    bn_buf b = {0};
    exp_key_cells(&b, &cfg, COL_SUMMARY, 1, 1, "%.17g", e->models);
    if (b.failed || (b.p && strchr(b.p, '\n')))
        abort();
    buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* input_read refuses a NUL byte before anything parses. */
    if (memchr(data, '\0', size))
        return 0;
    /* A population file would be read from disk (any path: /dev/stdin
     * blocks); the file reader has its own tests. */
    if (size >= 4 && memmem(data, size, "file", 4))
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *sets[MAX_SETS];
    size_t n_sets = 0, len = size;
    char *mark = strstr(text, "\n%%\n");
    if (mark) {
        len = (size_t)(mark - text) + 1;
        mark[1] = '\0';
        for (char *s = mark + 4; *s && n_sets < MAX_SETS;) {
            char *nl = strchr(s, '\n');
            if (nl)
                *nl = '\0';
            sets[n_sets++] = s;
            if (!nl)
                break;
            s = nl + 1;
        }
    }
    static exp_t e;
    static bn_error err;
    exp_overrides ov = {sets, n_sets, NULL, NULL, NULL};
    if (exp_load_text(&e, "fuzz.ini", text, len, &ov, &err) == 0) {
        sweep_estimate est;
        sweep_estimate_of(&e, 2, 1, &est);
        sweep_limits lim = {SWEEP_MAX_WORK, SWEEP_MAX_MEMORY};
        sweep_check_limits(&e, &est, &lim, "sweep", &err);
        check_manifest(&e);
        check_row(&e, 0);
        check_row(&e, exp_count(&e) - 1);
    } else if (err.msg[0] == '\0' || strchr(err.msg, '\n')) {
        abort(); /* a failure says why, on one line */
    }
    exp_free(&e);
    free(text);
    return 0;
}
