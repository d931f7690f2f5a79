/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_lazyvi.c: btl_via makes a VI at the first use of a peer, not one per
 * rank at start-up.  Under MPI_THREAD_MULTIPLE:
 *   1. pairs (r, r^1): two threads of each rank send to the partner at
 *      once, and both partners at once (both sides connect together, two
 *      threads of a side find the same new peer);
 *   2. a ring: r sends to r+1 and receives from r-1 (r-1's VI at r is made
 *      by r-1's connection request alone: r never sends to it first), an
 *      eager message and a 256 KiB one (rendezvous: its ACK and RDMA go
 *      back over the accepted VI).
 * Then, before any collective, the pvar btl_via_vis_created is read: it
 * must equal the peers this rank talked to ("lazy", the default) or
 * size-1 ("eager": a provider without connection requests).  Every byte
 * is checked.  No rank enters the closing MPI_Allreduce before every rank
 * has read its pvar: two token rounds along the ring (its VIs exist
 * already) stand between the read and the collective, whose messages to
 * new peers (recursive doubling: r and r^2) would otherwise make a third
 * VI at a rank still finishing the ring.  Usage: t_lazyvi [lazy|eager]
 */
#include <mpi.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 2
#define SMALL 64
#define LARGE (256 * 1024)

static int rank, size;
static int errors;
static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;

static uint8_t t_lazyvi_pat(int from, int to, int tag, size_t i)
{
    return (uint8_t) (from * 37 + to * 11 + tag * 5 + i * 13 + (i >> 8));
}

static void t_lazyvi_fail(const char *what, int peer, int tag)
{
    pthread_mutex_lock(&err_lock);
    ++errors;
    pthread_mutex_unlock(&err_lock);
    fprintf(stderr, "rank %d: %s (peer %d, tag %d)\n", rank, what, peer, tag);
}

/* send to `to` and receive from `from` with one tag, data checked */
static void t_lazyvi_exchange(int to, int from, int tag, size_t len)
{
    uint8_t *s = malloc(len), *r = malloc(len);
    MPI_Request req[2];

    if (NULL == s || NULL == r) {
        t_lazyvi_fail("out of memory", to, tag);
        free(s);
        free(r);
        return;
    }
    for (size_t i = 0; i < len; ++i) {
        s[i] = t_lazyvi_pat(rank, to, tag, i);
    }
    memset(r, 0, len);
    MPI_Irecv(r, (int) len, MPI_BYTE, from, tag, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(s, (int) len, MPI_BYTE, to, tag, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    for (size_t i = 0; i < len; ++i) {
        if (r[i] != t_lazyvi_pat(from, rank, tag, i)) {
            t_lazyvi_fail("data mismatch", from, tag);
            break;
        }
    }
    free(s);
    free(r);
}

static void *t_lazyvi_pair_thread(void *arg)
{
    int t = (int) (intptr_t) arg;
    int partner = rank ^ 1;

    t_lazyvi_exchange(partner, partner, t, t ? LARGE : SMALL);
    return NULL;
}

/* returns once every rank called it, with messages along the ring only:
 * a token goes round twice (first round: every rank is here; second:
 * rank 0 says so) */
static void t_lazyvi_ring_barrier(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    for (int round = 0; round < 2; ++round) {
        int token = round;

        if (0 == rank) {
            MPI_Send(&token, 1, MPI_INT, next, 20 + round, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, 20 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, 20 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&token, 1, MPI_INT, next, 20 + round, MPI_COMM_WORLD);
        }
        if (token != round) {
            t_lazyvi_fail("bad ring token", prev, 20 + round);
        }
    }
}

/* the pvar's value, -1 when it does not exist */
static long long t_lazyvi_read_pvar(const char *want)
{
    int num = 0, idx = -1;
    unsigned long long value = 0;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    int count;

    MPI_T_pvar_get_num(&num);
    for (int i = 0; i < num && idx < 0; ++i) {
        char name[256], desc[1024];
        int nlen = sizeof(name), dlen = sizeof(desc), verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum et;

        if (MPI_SUCCESS ==
                MPI_T_pvar_get_info(i, name, &nlen, &verb, &cls, &dt, &et, desc, &dlen, &bind, &ro,
                                    &cont, &atomic) &&
            0 == strcmp(name, want)) {
            idx = i;
        }
    }
    if (idx < 0 || MPI_SUCCESS != MPI_T_pvar_session_create(&session)) {
        return -1;
    }
    if (MPI_SUCCESS != MPI_T_pvar_handle_alloc(session, idx, NULL, &handle, &count) ||
        MPI_SUCCESS != MPI_T_pvar_read(session, handle, &value)) {
        MPI_T_pvar_session_free(&session);
        return -1;
    }
    MPI_T_pvar_handle_free(session, &handle);
    MPI_T_pvar_session_free(&session);
    return (long long) value;
}

int main(int argc, char **argv)
{
    int provided, tprov, total = 0;
    int eager = argc > 1 && 0 == strcmp(argv[1], "eager");
    long long vis, expect;
    pthread_t th[NTHREADS];

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &tprov);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || 0 != size % 2) {
        if (0 == rank) {
            printf("SKIP lazyvi: needs an even number of ranks\n");
        }
        MPI_T_finalize();
        MPI_Finalize();
        return 0;
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        if (0 == rank) {
            printf("SKIP lazyvi: MPI_THREAD_MULTIPLE not provided\n");
        }
        MPI_T_finalize();
        MPI_Finalize();
        return 0;
    }

    /* 1: both partners, two threads each, at once */
    for (int t = 0; t < NTHREADS; ++t) {
        pthread_create(&th[t], NULL, t_lazyvi_pair_thread, (void *) (intptr_t) t);
    }
    for (int t = 0; t < NTHREADS; ++t) {
        pthread_join(th[t], NULL);
    }
    /* 2: the ring */
    t_lazyvi_exchange((rank + 1) % size, (rank + size - 1) % size, 10, SMALL);
    t_lazyvi_exchange((rank + 1) % size, (rank + size - 1) % size, 11, LARGE);

    /* the partner is a ring neighbour: 1 peer at 2 ranks, else 2 */
    vis = t_lazyvi_read_pvar("btl_via_vis_created");
    expect = eager ? size - 1 : (2 == size ? 1 : 2);
    if (vis != expect) {
        fprintf(stderr, "rank %d: btl_via_vis_created %lld, expected %lld (%s)\n", rank, vis,
                expect, eager ? "eager" : "lazy");
        ++errors;
    }
    /* the collective's messages to peers not talked to yet must not
     * reach a rank that has not read its count */
    t_lazyvi_ring_barrier();
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("%s lazyvi: %d ranks, %lld VIs per rank (%s, %d of %d peers talked to), "
               "%d errors\n",
               0 == total ? "PASS" : "FAIL", size, vis, eager ? "eager" : "lazy", 2 == size ? 1 : 2,
               size - 1, total);
    }
    MPI_T_finalize();
    MPI_Finalize();
    return 0 == total ? 0 : 1;
}
