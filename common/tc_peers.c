/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_peers.c: the peer table (tc_peers.h): own job by vpid, other jobs'
 * processes appended. The other jobs are few (a spawn, a respawn): a
 * linear search under the lock is enough, and runs only when an
 * endpoint is made or a connection request names a process.
 */
#include <errno.h>
#include <stdlib.h>

#include "tc_peers.h"

int tc_peers_init(tc_peers_t *t, uint32_t jobid, uint32_t njob, uint32_t cap_other)
{
    t->other = NULL;
    t->num_other = 0;
    t->njob = 0;
    if (0 == njob || cap_other > UINT32_MAX - njob) {
        return -EINVAL;
    }
    t->jobid = jobid;
    t->cap_other = cap_other;
    if (cap_other > 0) {
        t->other = calloc(cap_other, sizeof(*t->other));
        if (NULL == t->other) {
            return -ENOMEM;
        }
    }
    if (0 != pthread_mutex_init(&t->lock, NULL)) {
        free(t->other);
        t->other = NULL;
        return -ENOMEM;
    }
    t->njob = njob; /* last: fini frees only a table made whole */
    return 0;
}

void tc_peers_fini(tc_peers_t *t)
{
    if (0 == t->njob) {
        return;
    }
    free(t->other);
    t->other = NULL;
    t->num_other = 0;
    t->njob = 0;
    (void) pthread_mutex_destroy(&t->lock);
}

int tc_peers_index(tc_peers_t *t, uint64_t name, bool add, uint32_t *index)
{
    uint32_t jobid = (uint32_t) (name >> 32), vpid = (uint32_t) name;
    int rc = -ENOENT;

    if (jobid == t->jobid) {
        if (vpid >= t->njob) {
            return -ERANGE;
        }
        *index = vpid;
        return 0;
    }
    pthread_mutex_lock(&t->lock);
    for (uint32_t i = 0; i < t->num_other; ++i) {
        if (t->other[i] == name) {
            *index = t->njob + i;
            rc = 0;
            break;
        }
    }
    if (0 != rc && add) {
        if (t->num_other < t->cap_other) {
            t->other[t->num_other] = name;
            *index = t->njob + t->num_other++;
            rc = 0;
        } else {
            rc = -ENOSPC;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int tc_peers_name_of(tc_peers_t *t, uint32_t index, uint64_t *name)
{
    int rc = -ENOENT;

    if (index < t->njob) {
        *name = tc_peers_name(t->jobid, index);
        return 0;
    }
    pthread_mutex_lock(&t->lock);
    if (index - t->njob < t->num_other) {
        *name = t->other[index - t->njob];
        rc = 0;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}
