/*
 * Provenance: `bnstudy --version` and every sweep's manifest carry the
 * rows of provenance.h, and those rows are what git, the compiler and the
 * Makefile say independently: the tree of src/ and the blob of the
 * Makefile at HEAD, whether `git status` shows changes to them, the
 * compiler's target triplet. Without git, from a tarball, each source row
 * reads "unknown" and the header is still written. The version is the
 * one CITATION.cff and CHANGELOG.md name.
 */
#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/common.h"
#include "io/provenance.h"

/* The first line a shell command prints, without its newline ("" if
 * none); the command's exit status in *status. */
static void first_line(const char *cmd, char *buf, size_t size, int *status)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    buf[0] = '\0';
    if (fgets(buf, (int)size, p))
        buf[strcspn(buf, "\n")] = '\0';
    char rest[256];
    while (fgets(rest, sizeof rest, p))
        ;
    *status = pclose(p);
}

static const char *row(const char *key)
{
    size_t n;
    const provenance_row *rows = provenance_rows(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].key, key) == 0)
            return rows[i].value;
    fail_msg("no provenance row %s", key);
    return NULL;
}

static void test_version_prints_the_build_rows(void **state)
{
    const char *tmpdir = *state;
    char cmd[4200], want[4096];
    snprintf(cmd, sizeof cmd, "%s --version > %s/version",
             test_env("BNSTUDY", "./bnstudy"), tmpdir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/version", tmpdir);
    char *text = test_slurp(cmd, NULL);
    assert_non_null(text);
    size_t n, k = (size_t)snprintf(want, sizeof want, "bnstudy %s\n",
                                   BNSTUDY_VERSION);
    const provenance_row *rows = provenance_rows(&n);
    assert_string_equal(rows[0].key, "bnstudy_version");
    assert_string_equal(rows[0].value, BNSTUDY_VERSION);
    for (size_t i = 1; i < n; i++) {
        assert_memory_equal(rows[i].key, "build.", 6);
        k += (size_t)snprintf(want + k, sizeof want - k, "%s\t%s\n",
                              rows[i].key, rows[i].value);
    }
    assert_string_equal(text, want);
    test_slurp_free(text);
}

static void test_rows_name_the_source(void **state)
{
    (void)state;
    char got[256], top[4096], cwd[4096];
    int st;
    first_line("git rev-parse --show-toplevel 2>/dev/null", top, sizeof top,
               &st);
    assert_non_null(getcwd(cwd, sizeof cwd));
    if (st != 0 || strcmp(top, cwd) != 0) {
        /* A tarball: the source rows must say so. */
        assert_string_equal(row("build.src_tree"), "unknown");
        assert_string_equal(row("build.makefile_blob"), "unknown");
        assert_string_equal(row("build.uncommitted_changes"), "unknown");
        return;
    }
    first_line("git rev-parse HEAD:src", got, sizeof got, &st);
    assert_int_equal(st, 0);
    assert_string_equal(row("build.src_tree"), got);
    first_line("git rev-parse HEAD:Makefile", got, sizeof got, &st);
    assert_int_equal(st, 0);
    assert_string_equal(row("build.makefile_blob"), got);
    first_line("git status --porcelain -- src Makefile", got, sizeof got,
               &st);
    assert_int_equal(st, 0);
    assert_string_equal(row("build.uncommitted_changes"),
                        got[0] ? "yes" : "no");
    first_line("${CC:-cc} -dumpmachine", got, sizeof got, &st);
    if (st == 0)
        assert_string_equal(row("build.platform"), got);
    /* The flags that keep results exact are among those recorded. */
    assert_non_null(strstr(row("build.cflags"), "-ffp-contract=off"));
    assert_string_not_equal(row("build.compiler"), "unknown");
}

/* The header script run from a directory that is no git checkout. */
static void test_tarball_build_says_unknown(void **state)
{
    const char *tmpdir = *state;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/tarball/scripts && cp scripts/provenance.sh "
             "%s/tarball/scripts/ && cd %s/tarball && GIT_CEILING_DIRECTORIES=%s "
             "CC=cc FLAGS=-O2 bash scripts/provenance.sh > %s/prov.h",
             tmpdir, tmpdir, tmpdir, tmpdir, tmpdir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/prov.h", tmpdir);
    char *h = test_slurp(cmd, NULL);
    assert_non_null(h);
    assert_non_null(strstr(h, "#define BN_BUILD_SRC_TREE \"unknown\"\n"));
    assert_non_null(strstr(h, "#define BN_BUILD_MAKEFILE \"unknown\"\n"));
    assert_non_null(strstr(h, "#define BN_BUILD_DIRTY \"unknown\"\n"));
    assert_non_null(strstr(h, "#define BN_BUILD_CFLAGS \"-O2\"\n"));
    test_slurp_free(h);
}

/* A sweep's manifest carries every row, in order, after its header. */
static void test_manifest_carries_the_rows(void **state)
{
    const char *tmpdir = *state;
    char cmd[1400], path[400];
    snprintf(path, sizeof path, "%s/tiny.ini", tmpdir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("[population]\nrows = 16\n[sweep]\nbatch_size = 4\n", fp);
    assert_int_equal(fclose(fp), 0);
    snprintf(cmd, sizeof cmd, "%s sweep %s --out %s/out >/dev/null",
             test_env("BNSTUDY", "./bnstudy"), path, tmpdir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/out/tiny/manifest.tsv", tmpdir);
    char *text = test_slurp(path, NULL);
    assert_non_null(text);
    char want[4096];
    size_t n, k = (size_t)snprintf(want, sizeof want, "key\tvalue\n");
    const provenance_row *rows = provenance_rows(&n);
    for (size_t i = 0; i < n; i++)
        k += (size_t)snprintf(want + k, sizeof want - k, "%s\t%s\n",
                              rows[i].key, rows[i].value);
    if (strncmp(text, want, k) != 0)
        fail_msg("manifest starts\n%.*s\nwant\n%s", (int)k, text, want);
    test_slurp_free(text);
}

/* Whether the file at path holds the line "PREFIX VERSION". */
static int has_version_line(const char *path, const char *prefix)
{
    char want[64];
    snprintf(want, sizeof want, "\n%s%s\n", prefix, BNSTUDY_VERSION);
    char *text = test_slurp(path, NULL);
    if (!text)
        fail_msg("cannot read %s", path);
    int found = strstr(text, want) != NULL;
    test_slurp_free(text);
    return found;
}

/* The version is documented where a citation looks for it: CITATION.cff
 * carries the same version and CHANGELOG.md has an entry for it. */
static void test_version_is_documented(void **state)
{
    (void)state;
    if (!has_version_line("CITATION.cff", "version: "))
        fail_msg("CITATION.cff has no line 'version: %s'", BNSTUDY_VERSION);
    if (!has_version_line("CHANGELOG.md", "## "))
        fail_msg("CHANGELOG.md has no entry '## %s'", BNSTUDY_VERSION);
}

int test_provenance_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_prints_the_build_rows),
        cmocka_unit_test(test_rows_name_the_source),
        cmocka_unit_test(test_tarball_build_says_unknown),
        cmocka_unit_test(test_manifest_carries_the_rows),
        cmocka_unit_test(test_version_is_documented),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("provenance", tests, test_tmpdir_setup,
                                       test_tmpdir_teardown);
}
