/*
 * libinih with line numbers. Debian's libinih does not pass the line to
 * handlers, so a counting reader feeds it instead, and also shows every
 * section header to the caller, so that a header with no keys under it is
 * still checked. Handlers fill err themselves and return 0 to stop.
 */
#ifndef BN_INIFILE_H
#define BN_INIFILE_H

#include "common.h"

typedef int (*inifile_key_fn)(void *user, const char *section,
                              const char *name, const char *value, int line,
                              bn_error *err);
typedef int (*inifile_section_fn)(void *user, const char *section, int line,
                                  bn_error *err);

/* 0 on success; -1 with err naming path and line otherwise. */
int inifile_parse(const char *path, inifile_key_fn on_key,
                  inifile_section_fn on_section, void *user, bn_error *err);

#endif
