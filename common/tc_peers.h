/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_peers.h: the peer table of a component that reaches processes of
 * other jobs (MPI_Comm_spawn, connect/accept): a dense index per full
 * process name (jobid, vpid). A process of the own job has its vpid as
 * index; the processes of other jobs follow from njob on, in the order
 * they were met, up to a fixed count (no array is ever moved, so an
 * index stays valid for the life of the table). Thread-safe; no Open MPI.
 */
#ifndef TC_PEERS_H
#define TC_PEERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct tc_peers {
    uint32_t jobid;     /* the own job */
    uint32_t njob;      /* its processes: indexes 0 .. njob - 1 */
    uint32_t cap_other; /* most processes of other jobs */
    uint32_t num_other; /* met so far: indexes njob .. njob + num_other - 1 */
    uint64_t *other;    /* their names, (jobid << 32) | vpid */
    pthread_mutex_t lock;
} tc_peers_t;

/* a full name in one word, as the table and the wire carry it */
static inline uint64_t tc_peers_name(uint32_t jobid, uint32_t vpid)
{
    return ((uint64_t) jobid << 32) | vpid;
}

/* 0, or -EINVAL (njob 0, or njob + cap_other beyond 32 bits), -ENOMEM */
int tc_peers_init(tc_peers_t *t, uint32_t jobid, uint32_t njob, uint32_t cap_other);
void tc_peers_fini(tc_peers_t *t);

/* every index the table can give: njob + cap_other */
static inline uint32_t tc_peers_capacity(const tc_peers_t *t)
{
    return t->njob + t->cap_other;
}

/* the index of a process (added when add and it is of another job, not
 * met yet): 0; -ENOENT (not met and !add), -ERANGE (own job, vpid beyond
 * njob), -ENOSPC (cap_other processes of other jobs met already) */
int tc_peers_index(tc_peers_t *t, uint64_t name, bool add, uint32_t *index);

/* the name of an index given out: 0, or -ENOENT */
int tc_peers_name_of(tc_peers_t *t, uint32_t index, uint64_t *name);

#endif /* TC_PEERS_H */
