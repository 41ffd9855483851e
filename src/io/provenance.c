/* The build's rows; the values come from the header scripts/provenance.sh
 * writes at build time, and from the compiler's own macros. */
#include "io/provenance.h"

#include "base/common.h"
#include "provenance_build.h"

#define BN_STR_(x) #x
#define BN_STR(x) BN_STR_(x)
#if defined(__clang__)
#define BN_BUILD_COMPILER                                                     \
    "clang " BN_STR(__clang_major__) "." BN_STR(__clang_minor__) "."          \
        BN_STR(__clang_patchlevel__)
#elif defined(__GNUC__)
#define BN_BUILD_COMPILER "gcc " __VERSION__
#elif defined(__VERSION__)
#define BN_BUILD_COMPILER __VERSION__
#else
#define BN_BUILD_COMPILER "unknown"
#endif

static const provenance_row rows[] = {
    {.key = "bnstudy_version", .value = BNSTUDY_VERSION},
    {.key = "build.src_tree", .value = BN_BUILD_SRC_TREE},
    {.key = "build.makefile_blob", .value = BN_BUILD_MAKEFILE},
    {.key = "build.uncommitted_changes", .value = BN_BUILD_DIRTY},
    {.key = "build.compiler", .value = BN_BUILD_COMPILER},
    {.key = "build.cflags", .value = BN_BUILD_CFLAGS},
    {.key = "build.platform", .value = BN_BUILD_PLATFORM},
};

const provenance_row *provenance_rows(size_t *n)
{
    *n = sizeof rows / sizeof *rows;
    return rows;
}

void provenance_print(FILE *fp)
{
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        fprintf(fp, "%s\t%s\n", rows[i].key, rows[i].value);
}
