/*
 * atomic_write.c — every file parplan writes goes through pp_write_files:
 * each file's bytes go to a temporary file in its directory and are flushed
 * to disk; only when every file of the set is written are they renamed over
 * (or linked to) their names, so a reader sees the old files, no files, or
 * the complete new set. If installing one fails, the ones already installed
 * are removed again (or the old file put back), so a set lands whole or not
 * at all. Every destination is checked before anything is written.
 *
 * What may be replaced (docs/errors.md, "Files parplan writes"):
 *   - nothing that exists, unless the caller passes force;
 *   - with force, only a regular file. A symbolic link is refused (parplan
 *     does not write through links: the reason names the link's target), and
 *     so are directories, devices (/dev/full), FIFOs and sockets: an atomic
 *     write replaces a name, which for those would not do what was meant.
 * Errors: a bad destination (missing directory, no permission, exists,
 * not a regular file) is PP_ERR_IO (exit 2); a failure to write the bytes
 * (disk full, file size limit, I/O error) is PP_ERR_INTERNAL (exit 3).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configs/configs.h"

#define SHOWN 200 /* characters of a path quoted in a message */

/* Writes all of buf to fd; 0 on success, else errno. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (w == 0) return EIO;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Makes a fresh name "path.SUFFIX-xxxxxxxx" with open (O_EXCL) or link
 * semantics: make(name, arg) returns 0 or -1 with errno. Returns 0 with the
 * name in out, or an errno. */
static int fresh_name(const char *path, const char *suffix, char *out, size_t cap, int (*make)(const char *, void *),
                      void *arg)
{
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    unsigned long seed = (unsigned long)getpid() * 2654435761UL ^ (unsigned long)(size_t)out;
    for (int attempt = 0; attempt < 100; attempt++) {
        char r8[9];
        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
        unsigned long r = seed >> 16;
        for (int i = 0; i < 8; i++, r /= 36) r8[i] = digits[r % 36];
        r8[8] = '\0';
        if ((size_t)snprintf(out, cap, "%s.%s-%s", path, suffix, r8) >= cap) return ENAMETOOLONG;
        if (make(out, arg) == 0) return 0;
        if (errno != EEXIST) return errno;
    }
    return EEXIST;
}

static int make_temp(const char *name, void *fd)
{
    /* mode 0666 less the umask, as a plain fopen would give */
    *(int *)fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    return *(int *)fd >= 0 ? 0 : -1;
}

static int make_link(const char *name, void *target) { return link((const char *)target, name); }

/* Moves tmp to path. Without force, link() fails with EEXIST when path
 * exists (no window between a check and the rename); file systems without
 * hard links fall back to a check and rename. */
static int install(const char *tmp, const char *path, int force)
{
    if (force) return rename(tmp, path) == 0 ? 0 : errno;
    if (link(tmp, path) == 0) {
        unlink(tmp);
        return 0;
    }
    int e = errno;
    if (e == EEXIST) return e;
    if (e != EPERM && e != ENOTSUP && e != EOPNOTSUPP && e != EXDEV && e != EMLINK) return e;
    struct stat st;
    if (lstat(path, &st) == 0) return EEXIST;
    return rename(tmp, path) == 0 ? 0 : errno;
}

/* Errors that say the destination is wrong (exit 2), not that writing the
 * bytes failed (exit 3). */
static int bad_path_errno(int e)
{
    return e == EACCES || e == EPERM || e == EROFS || e == ENOENT || e == ENOTDIR || e == ENAMETOOLONG ||
           e == ELOOP || e == EISDIR || e == EEXIST || e == EXDEV;
}

static pp_status errno_status(int e) { return bad_path_errno(e) ? PP_ERR_IO : PP_ERR_INTERNAL; }

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISLNK(m)) return "a symbolic link";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

/* The directory part of path ("." when none) into buf. */
static void dir_of(const char *path, char *buf, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(buf, cap, ".");
    else if (slash == path) snprintf(buf, cap, "/");
    else snprintf(buf, cap, "%.*s", (int)(slash - path), path);
}

/* The nearest existing ancestor directory of dir (dir itself when it
 * exists) into buf; 0, or an errno (a component that is not a directory). */
static int existing_ancestor(const char *dir, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", dir);
    struct stat st;
    while (stat(buf, &st) != 0) {
        if (errno != ENOENT) return errno;
        char *slash = strrchr(buf, '/');
        if (!slash) {
            snprintf(buf, cap, ".");
            break;
        }
        if (slash == buf) slash[1] = '\0';
        else *slash = '\0';
    }
    return 0;
}

static pp_status check_dest(const char *path, unsigned flags, pp_error *err)
{
    int force = (flags & PP_WRITE_FORCE) != 0;
    if (!path || !*path) return pp__fail(err, PP_ERR_INPUT, "output file: expected a path");
    if (path[strlen(path) - 1] == '/')
        return pp__fail(err, PP_ERR_IO, "%.*s: ends in '/': expected a file name", SHOWN, path);
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            char to[PATH_MAX];
            ssize_t n = readlink(path, to, sizeof to - 1);
            to[n > 0 ? n : 0] = '\0';
            return pp__fail(err, PP_ERR_IO, "%.*s: is a symbolic link (to %.*s): parplan does not write through "
                            "links, even with --force; give the target's path", SHOWN, path, SHOWN, to);
        }
        if (!S_ISREG(st.st_mode))
            return pp__fail(err, PP_ERR_IO, "%.*s: is %s: parplan writes only regular files (atomically: a "
                            "temporary file renamed into place), even with --force; give a file name",
                            SHOWN, path, kind_of(st.st_mode));
        if (!force)
            return pp__fail(err, PP_ERR_IO, "%.*s: already exists; not overwritten (use --force to replace it)",
                            SHOWN, path);
    } else if (errno != ENOENT && errno != ENOTDIR) {
        return pp__fail(err, PP_ERR_IO, "%.*s: cannot check the destination: %s", SHOWN, path, strerror(errno));
    }
    char dir[PATH_MAX], have[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    if ((flags & PP_WRITE_MKDIRS) && stat(dir, &st) != 0 && errno == ENOENT) {
        int e = existing_ancestor(dir, have, sizeof have); /* created on writing; must be a writable directory */
        if (e) return pp__fail(err, PP_ERR_IO, "%.*s: directory %.*s: %s", SHOWN, path, SHOWN, dir, strerror(e));
        snprintf(dir, sizeof dir, "%s", have);
    }
    if (stat(dir, &st) != 0)
        return pp__fail(err, PP_ERR_IO, "%.*s: directory %.*s: %s", SHOWN, path, SHOWN, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return pp__fail(err, PP_ERR_IO, "%.*s: %.*s is not a directory", SHOWN, path, SHOWN, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return pp__fail(err, PP_ERR_IO, "%.*s: cannot create files in %.*s: %s", SHOWN, path, SHOWN, dir,
                        strerror(errno));
    return PP_OK;
}

pp_status pp_write_check(const char *path, int force, pp_error *err)
{
    PP__C_NUMERIC;
    return check_dest(path, force ? PP_WRITE_FORCE : 0, err);
}

/* Directories made for a set, to remove again if it fails. */
typedef struct made {
    char *path[64];
    int n;
} made;

/* mkdir -p of the directory of path, recording what it created. */
static int make_dirs(const char *path, made *md)
{
    char dir[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    struct stat st;
    if (stat(dir, &st) == 0) return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
    for (char *p = dir + 1; ; p++) {
        char c = *p;
        if (c != '/' && c != '\0') continue;
        *p = '\0';
        if (mkdir(dir, 0777) == 0) {
            if (md->n == 64) return ENAMETOOLONG;
            if (!(md->path[md->n] = strdup(dir))) return ENOMEM;
            md->n++;
        } else if (errno != EEXIST) {
            return errno;
        }
        *p = c;
        if (!c) return 0;
    }
}

static void made_undo(made *md, int remove)
{
    for (int i = md->n - 1; i >= 0; i--) {
        if (remove) rmdir(md->path[i]);
        free(md->path[i]);
    }
    md->n = 0;
}

/* The same destination twice in one set (by directory identity and name). */
static int same_destination(const char *a, const char *b)
{
    const char *ba = strrchr(a, '/'), *bb = strrchr(b, '/');
    if (strcmp(ba ? ba + 1 : a, bb ? bb + 1 : b) != 0) return 0;
    char da[PATH_MAX], db[PATH_MAX];
    struct stat sa, sb;
    dir_of(a, da, sizeof da);
    dir_of(b, db, sizeof db);
    if (stat(da, &sa) != 0 || stat(db, &sb) != 0) return strcmp(da, db) == 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* One destination being written: its temporary, and a hard link to the old
 * file it replaces (with force, in a set of two or more) to put back. */
typedef struct slot {
    char *tmp, *backup;
    int installed;
    int keep_backup;   /* the old file could not be put back: its copy stays */
} slot;

static void slots_free(slot *s, int n)
{
    for (int i = 0; s && i < n; i++) {
        if (s[i].tmp) unlink(s[i].tmp);
        if (s[i].backup && !s[i].keep_backup) unlink(s[i].backup);
        free(s[i].tmp);
        free(s[i].backup);
    }
    free(s);
}

/* Writes file f to a fresh temporary next to it. */
static pp_status write_temp(const pp_out_file *f, slot *s, pp_error *err)
{
    size_t cap = strlen(f->path) + 32;
    s->tmp = malloc(cap);
    if (!s->tmp) return pp__fail(err, PP_ERR_NOMEM, "%.*s: out of memory", SHOWN, f->path);
    int fd = -1, e = fresh_name(f->path, "tmp", s->tmp, cap, make_temp, &fd);
    if (e) {
        free(s->tmp);
        s->tmp = NULL;
        return pp__fail(err, errno_status(e), "%.*s: cannot create a file in its directory: %s", SHOWN, f->path,
                        strerror(e));
    }
    e = write_all(fd, f->data, f->len);
    if (!e && fsync(fd) != 0 && errno != EINVAL && errno != EROFS) e = errno;
    if (close(fd) != 0 && !e) e = errno;
    if (e) return pp__fail(err, PP_ERR_INTERNAL, "%.*s: write failed: %s (nothing written)", SHOWN, f->path, strerror(e));
    return PP_OK;
}

/* Puts the set back as it was: installed files removed, old files restored. */
static void roll_back(const pp_out_file *f, slot *s, int n)
{
    for (int i = 0; i < n; i++) {
        if (!s[i].installed) continue;
        if (s[i].backup && rename(s[i].backup, f[i].path) == 0) {
            free(s[i].backup);
            s[i].backup = NULL;
        } else if (s[i].backup) {
            s[i].keep_backup = 1; /* never lose the old file: it stays under its .old- name */
        } else {
            unlink(f[i].path);
        }
        s[i].installed = 0;
    }
}

pp_status pp__write_files_ex(const pp_out_file *files, int n, unsigned flags, pp_error *err,
                             void (*before_install)(int i, void *user), void *user)
{
    int force = (flags & PP_WRITE_FORCE) != 0;
    if (n < 1 || !files) return pp__fail(err, PP_ERR_INPUT, "output files: expected at least one");
    for (int i = 0; i < n; i++) {
        pp_status st = check_dest(files[i].path, flags, err);
        if (st != PP_OK) return st;
        for (int j = 0; j < i; j++)
            if (same_destination(files[i].path, files[j].path))
                return pp__fail(err, PP_ERR_INPUT, "%.*s: given twice as an output file", SHOWN, files[i].path);
    }
    slot *s = calloc((size_t)n, sizeof *s);
    if (!s) return pp__fail(err, PP_ERR_NOMEM, "out of memory writing %d files", n);
    pp_status st = PP_OK;
    made md = {{0}, 0};
    for (int i = 0; i < n && st == PP_OK; i++) {
        int e = flags & PP_WRITE_MKDIRS ? make_dirs(files[i].path, &md) : 0;
        if (e) st = pp__fail(err, errno_status(e), "%.*s: cannot create its directory: %s", SHOWN, files[i].path,
                             strerror(e));
        else st = write_temp(&files[i], &s[i], err);
    }
    for (int i = 0; i < n && st == PP_OK; i++) {
        if (before_install) before_install(i, user);
        struct stat old;
        if (n > 1 && force && lstat(files[i].path, &old) == 0 && S_ISREG(old.st_mode)) {
            size_t cap = strlen(files[i].path) + 32;
            s[i].backup = malloc(cap);
            int e = s[i].backup ? fresh_name(files[i].path, "old", s[i].backup, cap, make_link, (void *)files[i].path)
                                : ENOMEM;
            if (e) { /* no hard links here: the old file cannot be put back, so keep it */
                free(s[i].backup);
                s[i].backup = NULL;
                st = pp__fail(err, errno_status(e), "%.*s: cannot keep the old file while replacing the set: %s "
                              "(nothing written)", SHOWN, files[i].path, strerror(e));
                break;
            }
        }
        int e = install(s[i].tmp, files[i].path, force);
        if (e == EEXIST)
            st = pp__fail(err, PP_ERR_IO, "%.*s: already exists; not overwritten (use --force to replace it)",
                          SHOWN, files[i].path);
        else if (e)
            st = pp__fail(err, errno_status(e), "%.*s: cannot rename the finished file into place: %s", SHOWN,
                          files[i].path, strerror(e));
        if (e) break;
        free(s[i].tmp);
        s[i].tmp = NULL;
        s[i].installed = 1;
    }
    if (st != PP_OK && n > 1) {
        int k = 0;
        for (int i = 0; i < n; i++) k += s[i].installed;
        roll_back(files, s, n);
        if (k && err) {
            size_t used = strlen(err->msg);
            snprintf(err->msg + used, sizeof err->msg - used, "; the %d file%s of the set already in place %s "
                     "removed again", k, k == 1 ? "" : "s", k == 1 ? "was" : "were");
        }
    }
    slots_free(s, n);
    made_undo(&md, st != PP_OK);
    return st;
}

pp_status pp_write_files(const pp_out_file *files, int n, unsigned flags, pp_error *err)
{
    PP__C_NUMERIC;
    return pp__write_files_ex(files, n, flags, err, NULL, NULL);
}

pp_status pp_write_file(const char *path, const char *data, size_t len, int force, pp_error *err)
{
    PP__C_NUMERIC;
    pp_out_file f = {path, data, len};
    return pp_write_files(&f, 1, force ? PP_WRITE_FORCE : 0, err);
}
