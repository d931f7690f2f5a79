/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_shm.h: named shared-memory segments backed by files in a directory
 * the caller chooses (BTLs pass opal_process_info.job_session_dir, so the
 * runtime removes the files even after a crash).
 *
 * create: open(O_CREAT|O_EXCL|O_NOFOLLOW, 0600), fchmod 0600 (umask does
 *         not matter), ftruncate + fallocate, mmap MAP_SHARED.
 * attach: open(O_NOFOLLOW), refuse anything that is not a regular file
 *         owned by our effective uid with mode 0600 and of the expected
 *         size, then mmap. The peer cannot resize the file under us after
 *         the check only if it cooperates: callers validate every index and
 *         length read from the mapping anyway.
 * unlink: explicit; a segment stays mapped after its file is unlinked.
 */
#ifndef TC_SHM_H
#define TC_SHM_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "tc_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

typedef struct tc_shm_seg {
    void *base; /* mapping, NULL when not mapped */
    size_t size;
    int fd;       /* -1 once detached */
    bool creator; /* created by this process */
    char path[PATH_MAX];
} tc_shm_seg_t;

/* Build "dir/name" into seg->path. name must be non-empty, contain no '/'
 * and not be "." or "..". Returns 0, -EINVAL or -ENAMETOOLONG. */
int tc_shm_make_path(tc_shm_seg_t *seg, const char *dir, const char *name);

/* Create a new segment of `size` bytes (> 0), zero filled. Fails with
 * -EEXIST if the file exists. On failure nothing is left behind. */
int tc_shm_create(tc_shm_seg_t *seg, const char *dir, const char *name, size_t size);

/* Map an existing segment. expected_size 0 accepts any non-zero size
 * (seg->size tells which). Errors: -ENOENT, -EPERM (foreign owner or mode
 * other than 0600, not a regular file), -EINVAL (size differs), or the
 * errno of open/mmap. */
int tc_shm_attach(tc_shm_seg_t *seg, const char *dir, const char *name, size_t expected_size);

/* Unmap and close (the file stays). Idempotent. */
int tc_shm_detach(tc_shm_seg_t *seg);

/* Remove the file (the mapping, if any, stays valid). Idempotent:
 * a missing file is not an error. */
int tc_shm_unlink(tc_shm_seg_t *seg);

#ifdef __cplusplus
}
#endif

#endif /* TC_SHM_H */
