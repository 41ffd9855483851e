/*
 * libinih with line numbers, on text already in memory (input.h reads it
 * once). Debian's libinih does not pass the line to handlers, so a
 * counting reader feeds it instead; the reader also shows every section
 * header to the caller, so that a header with no keys under it is still
 * checked, and refuses what libinih would let through: a line longer than
 * BN_LINE_MAX, a header with text after its ']', a section name longer
 * than libinih keeps whole. Handlers fill err themselves and return 0 to
 * stop.
 */
#ifndef BN_INIFILE_H
#define BN_INIFILE_H

#include <stddef.h>

#include "base/common.h"

/* libinih keeps a section's name in a buffer of 50 bytes. */
#define INIFILE_MAX_SECTION 49

typedef int (*inifile_key_fn)(void *user, const char *section,
                              const char *name, const char *value, int line,
                              bn_error *err);
typedef int (*inifile_section_fn)(void *user, const char *section, int line,
                                  bn_error *err);

/* Parse text (len bytes, NUL-terminated, no NUL inside), named path in
 * messages. 0 on success; -1 with err naming path and line otherwise. */
int inifile_parse(const char *path, const char *text, size_t len,
                  inifile_key_fn on_key, inifile_section_fn on_section,
                  void *user, bn_error *err);

#endif
