/*
 * atomic_write.c — every file parplan writes goes through pp_write_file: the
 * bytes go to a temporary file in the target's directory, are flushed to
 * disk, and the temporary is then renamed over (or linked to) the target,
 * so a reader sees the old file, no file, or the complete new one. An
 * existing target is replaced only when the caller passes force.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configs/configs.h"

/* Writes all of buf to fd; 0 on success, else errno. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Opens a fresh temporary name next to path (mode 0666 less the umask, as
 * a plain fopen would give). Returns the fd or -1 with errno. */
static int open_temp(const char *path, char *tmp, size_t cap)
{
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    unsigned long seed = (unsigned long)getpid() * 2654435761UL ^ (unsigned long)(size_t)tmp;
    for (int attempt = 0; attempt < 100; attempt++) {
        char suffix[9];
        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
        unsigned long r = seed >> 16;
        for (int i = 0; i < 8; i++, r /= 36) suffix[i] = digits[r % 36];
        suffix[8] = '\0';
        if ((size_t)snprintf(tmp, cap, "%s.tmp-%s", path, suffix) >= cap) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}

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

pp_status pp_write_file(const char *path, const char *data, size_t len, int force, pp_error *err)
{
    if (!path || !*path) return pp__fail(err, PP_ERR_INPUT, "output file: expected a path");
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return pp__fail(err, PP_ERR_IO, "%s: is a directory: expected a file name", path);
        if (!force)
            return pp__fail(err, PP_ERR_IO, "%s: already exists; not overwritten (use --force to replace it)", path);
    }
    size_t cap = strlen(path) + 32;
    char *tmp = malloc(cap);
    if (!tmp) return pp__fail(err, PP_ERR_NOMEM, "%s: out of memory", path);
    pp_status rc = PP_OK;
    int fd = open_temp(path, tmp, cap);
    if (fd < 0) {
        rc = pp__fail(err, PP_ERR_IO, "%s: cannot create a file in its directory: %s", path, strerror(errno));
        goto cleanup;
    }
    int e = write_all(fd, data, len);
    if (!e && fsync(fd) != 0) e = errno;
    if (close(fd) != 0 && !e) e = errno;
    if (e) {
        unlink(tmp);
        rc = pp__fail(err, PP_ERR_IO, "%s: write failed: %s", path, strerror(e));
        goto cleanup;
    }
    e = install(tmp, path, force);
    if (e) {
        unlink(tmp);
        if (e == EEXIST)
            rc = pp__fail(err, PP_ERR_IO, "%s: already exists; not overwritten (use --force to replace it)", path);
        else
            rc = pp__fail(err, PP_ERR_IO, "%s: cannot rename the finished file into place: %s", path, strerror(e));
    }
cleanup:
    free(tmp);
    return rc;
}
