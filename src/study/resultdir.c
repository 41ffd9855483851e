/* Replacing a result set as a whole; see resultdir.h. */
#define _XOPEN_SOURCE 700 /* realpath */
#if defined(__linux__)
#define _GNU_SOURCE /* renameat2 and RENAME_EXCHANGE */
#endif
#include "study/resultdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "study/out.h"
#include "study/outfile.h"

/* A path into a buffer of BN_PATH_MAX bytes; resultdir_begin checks
 * first that every path it makes fits. */
static void set_path(char *buf, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void set_path(char *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, BN_PATH_MAX, fmt, ap);
    va_end(ap);
}

/* ---- what a signal removes ---- */

/* The temporary directory, each file the output table could put in it,
 * and the lock: what SIGINT, SIGTERM or SIGHUP must take away. */
_Static_assert(OUT_FILE_COUNT + 2 <= CLEANUP_MAX,
               "a result set's files, its directory and its lock");

static void arm(resultdir *rd)
{
    char path[BN_PATH_MAX + RESULTDIR_MAX_FILE];
    rd->cleanup[0] = cleanup_remember(rd->tmp, 1);
    rd->cleanup[1] = cleanup_remember(rd->lock, 0);
    for (int i = 0; i < OUT_FILE_COUNT; i++) {
        snprintf(path, sizeof path, "%s/%s", rd->tmp, out_file_get(i)->file);
        rd->cleanup[2 + i] = cleanup_remember(path, 0);
    }
}

static void disarm(resultdir *rd)
{
    for (int i = 0; i < OUT_FILE_COUNT + 2; i++) {
        cleanup_forget(rd->cleanup[i]);
        rd->cleanup[i] = -1;
    }
}

/* ---- removing a result set ---- */

/* Remove dir and the files in it: the output table's names first, which
 * needs no memory, then whatever else a listing finds. */
static int remove_set(const char *dir)
{
    char path[BN_PATH_MAX + RESULTDIR_MAX_FILE];
    for (int i = 0; i < OUT_FILE_COUNT; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, out_file_get(i)->file);
        unlink(path);
    }
    if (rmdir(dir) == 0 || errno == ENOENT)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL)
        if (strcmp(ent->d_name, ".") && strcmp(ent->d_name, ".."))
            unlinkat(dirfd(d), ent->d_name, 0);
    closedir(d);
    return rmdir(dir);
}

/* ---- the steps ---- */

/* mkdir -p out; remembers the first directory it made, so that a failure
 * removes them all again. Shards started at once (a job array's tasks)
 * make the same --out: one that finds a directory made by another between
 * its stat and its mkdir takes it as there, and not as its own. */
static int make_out(resultdir *rd, bn_error *err)
{
    char buf[BN_PATH_MAX];
    set_path(buf, "%s", rd->out);
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        struct stat st;
        if (p[-1] != '/' && stat(buf, &st) != 0) {
            if (bn_fault_io() != 0 || mkdir(buf, 0755) != 0) {
                int e = errno;
                if (e != EEXIST) {
                    *p = c;
                    return bn_fail(err, "%s: cannot create: %s", rd->out,
                                   strerror(e));
                }
            } else if (!rd->made++) {
                set_path(rd->made_dirs, "%s", buf);
            }
        }
        *p = c;
        if (c == '\0')
            break;
    }
    struct stat st;
    if (stat(rd->out, &st) != 0 || !S_ISDIR(st.st_mode))
        return bn_fail(err, "%s: not a directory", rd->out);
    return 0;
}

static void unmake_out(resultdir *rd)
{
    /* The directories made are the first one and those below it, all on
     * the path to out: remove from the deepest up. */
    char buf[BN_PATH_MAX];
    set_path(buf, "%s", rd->out);
    size_t stop = strlen(rd->made_dirs);
    while (rd->made > 0 && strlen(buf) >= stop) {
        rmdir(buf);
        char *slash = strrchr(buf, '/');
        if (!slash)
            break;
        while (slash > buf && slash[-1] == '/')
            slash--;
        *slash = '\0';
    }
    rd->made = 0;
}

static int take_lock(resultdir *rd, bn_error *err)
{
    for (;;) {
        int fd = bn_fault_io() != 0 ? -1
                                    : open(rd->lock, O_RDWR | O_CREAT, 0644);
        if (fd < 0)
            return bn_fail(err, "%s: cannot create the lock: %s", rd->lock,
                           strerror(errno));
        struct flock fl;
        memset(&fl, 0, sizeof fl);
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        if (fcntl(fd, F_SETLK, &fl) != 0) {
            int e = errno;
            if (e == EACCES || e == EAGAIN) {
                memset(&fl, 0, sizeof fl);
                fl.l_type = F_WRLCK;
                fl.l_whence = SEEK_SET;
                if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type == F_UNLCK) {
                    close(fd); /* let go in between: try again */
                    continue;
                }
                close(fd);
                return bn_fail(err, "%s: another sweep (process %ld) is "
                                    "writing it; wait for it to finish",
                               rd->target, (long)fl.l_pid);
            }
            close(fd);
            return bn_fail(err, "%s: cannot lock: %s", rd->lock,
                           strerror(e));
        }
        /* The holder before us removes the file when it is done: a lock
         * on a file no longer at the path locks nothing. */
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(rd->lock, &b) == 0 &&
            a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            rd->lock_fd = fd;
            return 0;
        }
        close(fd);
    }
}

static void drop_lock(resultdir *rd)
{
    if (rd->lock_fd < 0)
        return;
    unlink(rd->lock);
    close(rd->lock_fd);
    rd->lock_fd = -1;
}

/* name is ".STEM.KIND-XXXXXX", XXXXXX as mkdtemp makes them. */
static int is_temporary(const char *name, const char *stem, const char *kind)
{
    size_t ls = strlen(stem), lk = strlen(kind);
    if (name[0] != '.' || strncmp(name + 1, stem, ls) != 0 ||
        name[1 + ls] != '.' || strncmp(name + 2 + ls, kind, lk) != 0)
        return 0;
    const char *x = name + 2 + ls + lk;
    size_t n = 0;
    while (x[n] && ((x[n] >= '0' && x[n] <= '9') ||
                    (x[n] >= 'a' && x[n] <= 'z') ||
                    (x[n] >= 'A' && x[n] <= 'Z')))
        n++;
    return n == 6 && x[n] == '\0';
}

/* What a killed sweep left: temporary directories go, and an old set that
 * two renames had moved aside comes back if the target is missing. */
static int clean_stale(resultdir *rd, bn_error *err)
{
    DIR *d = opendir(rd->out);
    if (!d)
        return bn_fail(err, "%s: cannot read: %s", rd->out, strerror(errno));
    struct dirent *ent;
    char path[BN_PATH_MAX + 256];
    int rc = 0;
    while (rc == 0 && (ent = readdir(d)) != NULL) {
        int tmp = is_temporary(ent->d_name, rd->stem, "tmp-");
        int old = is_temporary(ent->d_name, rd->stem, "old-");
        if (!tmp && !old)
            continue;
        snprintf(path, sizeof path, "%s/%s", rd->out, ent->d_name);
        struct stat st;
        if (old && lstat(rd->target, &st) != 0 && errno == ENOENT &&
            rename(path, rd->target) == 0)
            continue;
        if (remove_set(path) != 0)
            rc = bn_fail(err, "%s: cannot remove what an interrupted sweep "
                              "left: %s",
                         path, strerror(errno));
    }
    closedir(d);
    return rc;
}

/* The real path of p, or "" when it has none (a pipe, a missing file). */
static void real(const char *p, char out[PATH_MAX])
{
    if (!realpath(p, out))
        out[0] = '\0';
}

/* -1 with a message when path is one of the inputs, by device and
 * inode, so that no spelling of it (a hard link) gets past. */
static int is_input(const resultdir *rd, const out_inputs *ins,
                    const char *path, bn_error *err)
{
    struct stat st;
    if (!ins || lstat(path, &st) != 0)
        return 0;
    for (size_t i = 0; i < ins->n; i++)
        if ((unsigned long long)st.st_dev == ins->file[i].dev &&
            (unsigned long long)st.st_ino == ins->file[i].ino)
            return bn_fail(err, "%s is the input file %s: the sweep "
                                "replaces %s as a whole, so it will not "
                                "(move the file out of the way first)",
                           path, ins->file[i].path, rd->target);
    return 0;
}

/* The output table's name of the file called name, or NULL when it is
 * not one of its files. */
static const char *table_file(const char *name)
{
    for (int i = 0; i < OUT_FILE_COUNT; i++)
        if (strcmp(name, out_file_get(i)->file) == 0)
            return out_file_get(i)->file;
    return NULL;
}

/* Whether dir (a directory) is a result set: it holds a manifest.tsv, or
 * only files of the output table, a TSV among them (a set written
 * without its manifest). *file names the file that tells. */
static int result_set(const char *dir, const char **file)
{
    char path[BN_PATH_MAX + RESULTDIR_MAX_FILE];
    struct stat st;
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    *file = "manifest.tsv";
    if (lstat(path, &st) == 0)
        return 1;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int only_ours = 1, tsv = 0;
    struct dirent *ent;
    while (only_ours && (ent = readdir(d)) != NULL) {
        const char *name = ent->d_name;
        if (!strcmp(name, ".") || !strcmp(name, ".."))
            continue;
        const char *ours = table_file(name);
        size_t n = strlen(name);
        only_ours = ours != NULL;
        if (ours && !tsv && strcmp(name + n - 4, ".tsv") == 0) {
            tsv = 1;
            *file = ours;
        }
    }
    closedir(d);
    return only_ours && tsv;
}

static int in_result_set(const resultdir *rd, const char *dir,
                         const char *file, bn_error *err)
{
    if (strcmp(dir, rd->out) == 0)
        return bn_fail(err, "--out %s is a result set (it holds %s): a "
                            "result set holds the files of one sweep only, "
                            "so it will not (choose another --out)",
                       rd->out, file);
    return bn_fail(err, "--out %s is inside the result set %s (it holds "
                        "%s): a result set holds the files of one sweep "
                        "only, so it will not (choose another --out)",
                   rd->out, dir, file);
}

/* Whether dir is a directory that is a result set (*file: why). */
static int result_dir(const char *dir, const char **file)
{
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
           result_set(dir, file);
}

/* --out must not be in a result set, nor be one: a set within a set is
 * a directory the outer set may not hold, so the next sweep there would
 * be refused, and replacing the outer one would take the inner with it.
 * Every directory on the way to --out is looked at: as --out spells them,
 * then, for a relative --out, the current directory and up to /. */
static int check_out(const resultdir *rd, bn_error *err)
{
    char p[BN_PATH_MAX], up[PATH_MAX];
    const char *file;
    set_path(p, "%s", rd->out);
    for (;;) {
        if (result_dir(p, &file))
            return in_result_set(rd, p, file, err);
        char *slash = strrchr(p, '/');
        if (!slash || strcmp(p, "/") == 0)
            break;
        while (slash > p && slash[-1] == '/')
            slash--;
        slash[slash == p] = '\0'; /* "/a" goes up to "/" */
    }
    if (p[0] == '/' || !realpath(".", up))
        return 0;
    for (;;) {
        if (result_dir(up, &file))
            return in_result_set(rd, up, file, err);
        char *slash = strrchr(up, '/');
        if (!slash || strcmp(up, "/") == 0)
            return 0;
        slash[slash == up] = '\0';
    }
}

/* The directories the command reads (a merge's shards): none may be the
 * target, which the swap replaces whole, by any spelling. */
static int check_input_dirs(const resultdir *rd, const out_inputs *ins,
                            bn_error *err)
{
    struct stat t, st;
    if (!ins || stat(rd->target, &t) != 0)
        return 0;
    for (size_t i = 0; i < ins->n_dirs; i++)
        if (stat(ins->dirs[i], &st) == 0 && st.st_dev == t.st_dev &&
            st.st_ino == t.st_ino)
            return bn_fail(err, "%s is the shard directory %s this merge "
                                "reads: it replaces %s as a whole, so it "
                                "will not (merge into another --out)",
                           rd->target, ins->dirs[i], rd->target);
    return 0;
}

static int check_target(resultdir *rd, const out_inputs *ins,
                        bn_error *err)
{
    struct stat st;
    if (lstat(rd->target, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        return bn_fail(err, "%s: %s", rd->target, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return bn_fail(err, "%s exists and is not a directory: a sweep "
                            "writes its result set there",
                       rd->target);
    /* Only files; named as the output table names them, or beside a
     * manifest of bnstudy's (an older version's set may have others).
     * No input among them, under any name (a hard link): the swap would
     * take it away. */
    DIR *d = opendir(rd->target);
    if (!d)
        return bn_fail(err, "%s: cannot read: %s", rd->target,
                       strerror(errno));
    struct dirent *ent;
    int rc = 0;
    char path[BN_PATH_MAX + 256], foreign[256] = "";
    while (rc == 0 && (ent = readdir(d)) != NULL) {
        const char *name = ent->d_name;
        if (!strcmp(name, ".") || !strcmp(name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", rd->target, name);
        if ((rc = is_input(rd, ins, path, err)) != 0)
            break;
        int ours = table_file(name) != NULL;
        if (!(ours && lstat(path, &st) == 0 && S_ISREG(st.st_mode)) &&
            !foreign[0])
            snprintf(foreign, sizeof foreign, "%s", name);
    }
    closedir(d);
    if (rc != 0)
        return rc;
    char t[PATH_MAX], in[PATH_MAX];
    real(rd->target, t);
    size_t lt = strlen(t);
    for (size_t i = 0; ins && i < ins->n; i++) {
        real(ins->file[i].path, in);
        if (lt && strncmp(in, t, lt) == 0 && in[lt] == '/')
            return bn_fail(err, "%s is inside %s, which the sweep replaces "
                                "as a whole: move it out of the way first",
                           ins->file[i].path, rd->target);
    }
    if (foreign[0])
        return bn_fail(err, "%s holds '%s', which is not a result file of "
                            "bnstudy: a sweep replaces the whole directory, "
                            "so it will not (move it, or choose another "
                            "--out)",
                       rd->target, foreign);
    return 0;
}

int resultdir_begin(resultdir *rd, const char *out, const char *stem,
                    const out_inputs *ins, bn_error *err)
{
    memset(rd, 0, sizeof *rd);
    rd->lock_fd = -1;
    for (int i = 0; i < OUT_FILE_COUNT + 2; i++)
        rd->cleanup[i] = -1;
    /* Room for OUT/.STEM.tmp-XXXXXX/FILE within the limit, checked before
     * anything is made. */
    size_t lo = strlen(out), ls = strlen(stem);
    if (lo == 0)
        return bn_fail(err, "--out: an empty path names no directory");
    if (lo + ls + RESULTDIR_MAX_FILE + 16 >= BN_PATH_MAX)
        return bn_fail(err, "--out: a path of %zu bytes; with '/.%s.tmp-"
                            "XXXXXX/' and a file name it passes the limit "
                            "of %d bytes",
                       lo, stem, BN_PATH_MAX - 1);
    while (lo > 1 && out[lo - 1] == '/')
        lo--;
    set_path(rd->out, "%.*s", (int)lo, out);
    snprintf(rd->stem, sizeof rd->stem, "%s", stem);
    set_path(rd->target, "%s/%s", rd->out, stem);
    set_path(rd->lock, "%s/.%s.lock", rd->out, stem);
    if (check_out(rd, err) != 0 || make_out(rd, err) != 0 ||
        take_lock(rd, err) != 0 || clean_stale(rd, err) != 0 ||
        check_input_dirs(rd, ins, err) != 0 ||
        check_target(rd, ins, err) != 0)
        goto fail;
    set_path(rd->tmp, "%s/.%s.tmp-XXXXXX", rd->out, stem);
    if (bn_fault_io() != 0 || !mkdtemp(rd->tmp)) {
        bn_fail(err, "%s: cannot create a directory: %s", rd->out,
                strerror(errno));
        rd->tmp[0] = '\0';
        goto fail;
    }
    /* mkdtemp makes it private; results are meant to be read. */
    arm(rd);
    if (bn_fault_io() != 0 || chmod(rd->tmp, 0755) != 0) {
        bn_fail(err, "%s: %s", rd->tmp, strerror(errno));
        goto fail;
    }
    return 0;
fail:
    resultdir_abort(rd);
    return -1;
}

int resultdir_path(const resultdir *rd, const char *name, char *buf,
                   size_t cap, bn_error *err)
{
    if (snprintf(buf, cap, "%s/%s", rd->tmp, name) >= (int)cap)
        return bn_fail(err, "%s/%s: longer than the limit of %zu bytes",
                       rd->tmp, name, cap - 1);
    return 0;
}

/* ---- a set that did not change ---- */

/* Whether files a and b hold the same bytes, read a block at a time. With
 * skip_build, lines that open with "build." are left out on both sides:
 * a manifest's provenance rows name the build that wrote the set, not the
 * results (provenance.h). */
static int same_file(const char *a, const char *b, int skip_build)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    if (same && skip_build) {
        /* A manifest is a few KiB; a line longer than this is no row of
         * one, and the sets are then told apart, never cut short. */
        char la[4096], lb[4096];
        for (;;) {
            char *ra, *rb;
            while ((ra = fgets(la, sizeof la, fa)) && !strncmp(la, "build.", 6))
                ;
            while ((rb = fgets(lb, sizeof lb, fb)) && !strncmp(lb, "build.", 6))
                ;
            if (!ra || !rb) {
                same = !ra && !rb && !ferror(fa) && !ferror(fb);
                break;
            }
            if (strcmp(la, lb) != 0 || !strchr(la, '\n')) {
                same = 0;
                break;
            }
        }
    } else if (same) {
        char ba[1 << 14], bb[1 << 14];
        for (;;) {
            size_t na = fread(ba, 1, sizeof ba, fa);
            size_t nb = fread(bb, 1, sizeof bb, fb);
            if (na != nb || memcmp(ba, bb, na) != 0) {
                same = 0;
                break;
            }
            if (na < sizeof ba) {
                same = feof(fa) && feof(fb) && !ferror(fa) && !ferror(fb);
                break;
            }
        }
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

/* Whether the new set at rd->tmp is the target's, file for file and byte
 * for byte but for the manifest's build rows. Then the target is kept,
 * manifest and all: regenerating results that did not change, with
 * another compiler or after a change of the source that moved no number,
 * leaves every byte of them as it was. The new set holds only files of
 * the output table, so the target must hold exactly those too. */
static int same_set(const resultdir *rd)
{
    char a[BN_PATH_MAX + RESULTDIR_MAX_FILE], b[sizeof a];
    int files = 0;
    for (int i = 0; i < OUT_FILE_COUNT; i++) {
        const char *name = out_file_get(i)->file;
        struct stat sa, sb;
        snprintf(a, sizeof a, "%s/%s", rd->tmp, name);
        snprintf(b, sizeof b, "%s/%s", rd->target, name);
        int ha = lstat(a, &sa) == 0, hb = lstat(b, &sb) == 0;
        if (ha != hb || (ha && (!S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode))))
            return 0;
        if (!ha)
            continue;
        if (i != OUT_MANIFEST && sa.st_size != sb.st_size)
            return 0;
        if (!same_file(a, b, i == OUT_MANIFEST))
            return 0;
        files++;
    }
    /* Nothing but those files in the target (a user's file would make it
     * no set of ours; check_target refused that already, but the two
     * listings must agree for the sets to be the same). */
    DIR *d = opendir(rd->target);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL)
        if (strcmp(ent->d_name, ".") && strcmp(ent->d_name, ".."))
            n++;
    closedir(d);
    return n == files;
}

/* Put the new set at the target and the old one at the temporary path. */
static int swap(resultdir *rd, int exists)
{
    if (bn_fault_io() != 0)
        return -1;
    if (!exists)
        return rename(rd->tmp, rd->target) == 0 ? (rd->tmp[0] = '\0', 0)
                                                 : -1;
#if defined(RENAME_EXCHANGE)
    if (!bn_fault_no_exchange()) {
        if (renameat2(AT_FDCWD, rd->tmp, AT_FDCWD, rd->target,
                      RENAME_EXCHANGE) == 0)
            return 0;
        if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
            return -1;
    }
#endif
    /* Two renames, the old set moved aside under a name the next sweep
     * recognises, so that a kill between them loses nothing. */
    char old[BN_PATH_MAX];
    set_path(old, "%s/.%s.old-XXXXXX", rd->out, rd->stem);
    if (bn_fault_io() != 0 || !mkdtemp(old))
        return -1;
    if (bn_fault_io() != 0 || rename(rd->target, old) != 0) {
        int e = errno;
        rmdir(old);
        errno = e;
        return -1;
    }
    if (bn_fault_io() != 0 || rename(rd->tmp, rd->target) != 0) {
        int e = errno;
        rename(old, rd->target);
        errno = e;
        return -1;
    }
    set_path(rd->tmp, "%s", old);
    return 0;
}

int resultdir_commit(resultdir *rd, bn_error *err)
{
    sigset_t mask;
    cleanup_hold(&mask);
    struct stat st;
    int exists = lstat(rd->target, &st) == 0;
    rd->unchanged = exists && S_ISDIR(st.st_mode) && same_set(rd);
    if (rd->unchanged) {
        /* The old set stays; the new one, the same bytes, goes. */
    } else if (swap(rd, exists) != 0) {
        int e = errno;
        cleanup_release(&mask);
        return bn_fail(err, "%s: cannot put the new results in place: %s",
                       rd->target, strerror(e));
    }
    /* The new set is in place: what follows cannot fail the sweep. */
    if (rd->tmp[0])
        remove_set(rd->tmp);
    rd->tmp[0] = '\0';
    drop_lock(rd);
    disarm(rd);
    cleanup_release(&mask);
    return 0;
}

void resultdir_abort(resultdir *rd)
{
    sigset_t mask;
    cleanup_hold(&mask);
    if (rd->tmp[0])
        remove_set(rd->tmp);
    rd->tmp[0] = '\0';
    drop_lock(rd);
    unmake_out(rd);
    disarm(rd);
    cleanup_release(&mask);
}
