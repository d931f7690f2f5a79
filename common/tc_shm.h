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
 *
 * The publication sequence, one rule for every segment that one owner
 * creates and a known number of peers map (btl_sci, btl_bip, btl_via):
 *   owner  tc_shm_create (zero filled: the attachment count starts at 0);
 *          format the header and the rest, the number of peers expected
 *          included; tc_shm_publish the magic word last;
 *          tc_shm_unlink_when_attached at once (expected 0: nobody will
 *          attach, the name goes now) and whenever it likes to know
 *          (idempotent); tc_shm_unlink at close in any case.
 *   peer   tc_shm_attach_header (-ENOENT: not there yet, try later);
 *          tc_shm_published, else detach: not formatted yet; validate
 *          the header; tc_shm_count_attach: the attachment that brings
 *          the count to the number expected removes the name, so nothing
 *          stays on disk while the job runs.
 */
#ifndef TC_SHM_H
#define TC_SHM_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_atomic.h"
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

/* ---- the publication sequence (see the top of this file) ---- */

/* Owner: the header is complete; store the magic word last, with a
 * release store (type-generic: 32- or 64-bit magic words). */
#define tc_shm_publish(magic_word, magic) tc_atomic_store_release((magic_word), (magic))

/* Peer: true when the owner published (an acquire load that pairs with
 * tc_shm_publish: the header reads after it see the owner's stores). */
#define tc_shm_published(magic_word, magic) (tc_atomic_load_acquire(magic_word) == (magic))

/* Peer: tc_shm_attach of a segment whose header is hdr_size bytes. A file
 * that does not exist, is still empty (created, not sized yet) or is
 * smaller than the header is -ENOENT: not there yet, like a name that
 * does not exist. Other errors as tc_shm_attach's. */
int tc_shm_attach_header(tc_shm_seg_t *seg, const char *dir, const char *name, size_t hdr_size);

/* Peer, once its header checks passed: count this attachment in the
 * owner's *attached word; the attachment that makes it reach expected
 * removes the name. true when this call removed it. */
bool tc_shm_count_attach(tc_shm_seg_t *seg, uint32_t *attached, uint32_t expected);

/* Owner: remove the name once *attached reached expected (at once when
 * expected is 0). true when the name is gone (now or earlier, by the
 * last peer). Idempotent, one load when not yet. */
bool tc_shm_unlink_when_attached(tc_shm_seg_t *seg, uint32_t *attached, uint32_t expected);

#ifdef __cplusplus
}
#endif

#endif /* TC_SHM_H */
