/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_shm.c: named shared-memory segment files (see tc_shm.h).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tc_shm.h"

static void tc_shm_reset(tc_shm_seg_t *seg)
{
    seg->base = NULL;
    seg->size = 0;
    seg->fd = -1;
    seg->creator = false;
}

int tc_shm_make_path(tc_shm_seg_t *seg, const char *dir, const char *name)
{
    int n;

    if (NULL == dir || NULL == name || '\0' == dir[0] || '\0' == name[0] ||
        NULL != strchr(name, '/') || 0 == strcmp(name, ".") || 0 == strcmp(name, "..")) {
        return -EINVAL;
    }
    n = snprintf(seg->path, sizeof(seg->path), "%s/%s", dir, name);
    if (n < 0 || (size_t) n >= sizeof(seg->path)) {
        seg->path[0] = '\0';
        return -ENAMETOOLONG;
    }
    return 0;
}

int tc_shm_create(tc_shm_seg_t *seg, const char *dir, const char *name, size_t size)
{
    int fd, rc;
    void *base;

    tc_shm_reset(seg);
    if (0 == size || size > (size_t) INT64_MAX) {
        return -EINVAL;
    }
    rc = tc_shm_make_path(seg, dir, name);
    if (0 != rc) {
        return rc;
    }
    fd = open(seg->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        return -errno;
    }
    /* The umask may have cleared bits we want, or the directory's default
     * ACL added some we do not want: set the mode explicitly. */
    if (0 != fchmod(fd, 0600) || 0 != ftruncate(fd, (off_t) size)) {
        rc = -errno;
        goto fail;
    }
    /* Reserve the blocks now: a full file system should fail here, not
     * with SIGBUS on a later store. Not every file system supports it. */
    rc = posix_fallocate(fd, 0, (off_t) size);
    if (0 != rc && EOPNOTSUPP != rc && EINVAL != rc) {
        rc = -rc;
        goto fail;
    }
    base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == base) {
        rc = -errno;
        goto fail;
    }
    seg->base = base;
    seg->size = size;
    seg->fd = fd;
    seg->creator = true;
    return 0;

fail:
    close(fd);
    unlink(seg->path);
    return rc;
}

int tc_shm_attach(tc_shm_seg_t *seg, const char *dir, const char *name, size_t expected_size)
{
    struct stat st;
    int fd, rc;
    void *base;

    tc_shm_reset(seg);
    rc = tc_shm_make_path(seg, dir, name);
    if (0 != rc) {
        return rc;
    }
    fd = open(seg->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        /* ELOOP: the name is a symbolic link, which we never create. */
        return ELOOP == errno ? -EPERM : -errno;
    }
    if (0 != fstat(fd, &st)) {
        rc = -errno;
        goto fail;
    }
    /* Only our own private segments: another user's file, or one that
     * others could write, is not one of ours. */
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 07777) != 0600) {
        rc = -EPERM;
        goto fail;
    }
    if (st.st_size <= 0 ||
        (0 != expected_size && (uint64_t) st.st_size != (uint64_t) expected_size)) {
        rc = -EINVAL;
        goto fail;
    }
    base = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == base) {
        rc = -errno;
        goto fail;
    }
    seg->base = base;
    seg->size = (size_t) st.st_size;
    seg->fd = fd;
    seg->creator = false;
    return 0;

fail:
    close(fd);
    return rc;
}

int tc_shm_detach(tc_shm_seg_t *seg)
{
    int rc = 0;

    if (NULL != seg->base) {
        if (0 != munmap(seg->base, seg->size)) {
            rc = -errno;
        }
        seg->base = NULL;
    }
    if (seg->fd >= 0) {
        close(seg->fd);
        seg->fd = -1;
    }
    return rc;
}

int tc_shm_unlink(tc_shm_seg_t *seg)
{
    if ('\0' == seg->path[0]) {
        return 0;
    }
    if (0 != unlink(seg->path) && ENOENT != errno) {
        return -errno;
    }
    return 0;
}

int tc_shm_attach_header(tc_shm_seg_t *seg, const char *dir, const char *name, size_t hdr_size)
{
    int rc = tc_shm_attach(seg, dir, name, 0);

    if (0 != rc) {
        /* -EINVAL: an empty file, created but not sized yet */
        return -EINVAL == rc ? -ENOENT : rc;
    }
    if (seg->size < hdr_size) {
        (void) tc_shm_detach(seg);
        return -ENOENT;
    }
    return 0;
}

bool tc_shm_count_attach(tc_shm_seg_t *seg, uint32_t *attached, uint32_t expected)
{
    if (tc_atomic_add_fetch(attached, 1u) == expected) {
        (void) tc_shm_unlink(seg);
        return true;
    }
    return false;
}

bool tc_shm_unlink_when_attached(tc_shm_seg_t *seg, uint32_t *attached, uint32_t expected)
{
    if (tc_atomic_load_acquire(attached) >= expected) {
        /* the last peer removed it already, or nobody will attach */
        (void) tc_shm_unlink(seg);
        return true;
    }
    return false;
}
