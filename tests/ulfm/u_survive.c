/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * u_survive.c: a rank dies (SIGKILL, no goodbye) while the job is busy,
 * and the survivors go on (User-Level Failure Mitigation, Open MPI 5.0
 * with mpirun --with-ft ulfm).
 *
 *   u_survive MOMENT      MOMENT: eager, rndv, rma, coll, rmasync
 *
 * After a first checked Allreduce every rank does MOMENT's traffic in a
 * loop: eager exchanges small (512 B) messages with both neighbours of a
 * ring, 8 per direction in flight; rndv 4 MiB + 1 between the victim and
 * every other rank, all in flight at once; rma locks the
 * right neighbour's window, puts, gets and accumulates, unlocks, then
 * meets in a barrier; coll runs Allreduce, Bcast and a non-blocking
 * Allreduce; rmasync runs every kind of one-sided synchronisation with
 * the victim once it died holding an exclusive lock at rank 0 (each must
 * fail, none hang; the lock must be granted to the survivors). The victim
 * (ULFM_VICTIM, default the last rank) raises
 * SIGKILL in round ULFM_ROUND (default from ULFM_SEED) with its own
 * operations in flight, after 0 to 3 MPI_Test calls (ULFM_SEED).
 *
 * A survivor that sees an error revokes MPI_COMM_WORLD; everyone then
 * completes what it had in flight, shrinks the communicator, agrees on a
 * flag, and checks among the survivors: the size of the shrunk
 * communicator (ULFM_DEAD ranks are gone, default 1), that the failed
 * group names the dead, an Allreduce of exact sums, a 64 KiB ring in both
 * directions and 40 eager messages of varying sizes with byte patterns,
 * a Bcast, and (moment rma) a new window's puts and gets. Rank 0 of the
 * survivors prints "PASS ulfm_MOMENT: ..." or "FAIL ...".
 *
 * Timing lines, for the runner (tests/ulfm/run): the victim prints
 * "ULFM death R T" just before it dies, each survivor "ULFM recovered R
 * T" once the checks on the shrunk communicator passed (T: seconds of
 * CLOCK_REALTIME, shared by the fake hosts of one machine). With
 * ULFM_LOG=FILE the same lines are appended to FILE as well (they then
 * do not depend on what the launcher relays of a job that ends).
 *
 * With ULFM_VICTIM=-1 nobody kills himself: rank 0 prints "ULFM armed"
 * once the traffic runs and everyone goes on until others kill ranks or
 * cut a network (tests/ulfm/run's killhost and netcut cases).
 *
 * Without the ULFM extension (Open MPI 4.1), or without --with-ft, the
 * errors are fatal: the job must end; the runner checks that it does.
 */

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tmpi.h"

#if defined(OMPI_HAVE_MPI_EXT_FTMPI) && OMPI_HAVE_MPI_EXT_FTMPI
#define U_HAVE_ULFM 1
#else
#define U_HAVE_ULFM 0
#endif

#define U_SMALL 512
#define U_LARGE ((size_t) 4 * 1024 * 1024 + 1)
#define U_DEPTH 8                /* small messages in flight per neighbour */
#define U_RING (64 * 1024)       /* the ring on the survivors */
#define U_WIN ((size_t) 1 << 20) /* window bytes per rank */
#define U_PUT (64 * 1024)
#define U_GET 4096
#define U_ACC 1024         /* ints */
#define U_COLL (16 * 1024) /* ints per Allreduce */
#define U_BCAST (1024 * 1024)
#define U_ROUNDS_MAX 100000
/* a job whose victim has not died after this long is broken */
#define U_TRAFFIC_MAX_S 120.0

enum u_moment { U_EAGER, U_RNDV, U_RMA, U_COLL_M, U_RMASYNC, U_NMOMENTS };
static const char *const u_moment_names[] = {"eager", "rndv", "rma", "coll", "rmasync"};

static int u_victim;      /* world rank that dies, -1: killed from outside */
static int u_die_round;   /* round in which it dies */
static int u_die_tests;   /* MPI_Test calls on its requests before it dies */
static int u_dead;        /* ranks expected dead */
static const char *u_log; /* ULFM_LOG */
static char u_name[32];

static double u_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* One line on stdout and, with ULFM_LOG, appended to that file. */
static void u_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void u_say(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    if ((size_t) n > sizeof(line) - 2) {
        n = (int) sizeof(line) - 2;
    }
    line[n++] = '\n';
    line[n] = '\0';
    fputs(line, stdout);
    fflush(stdout);
    if (NULL != u_log && '\0' != u_log[0]) {
        int fd = open(u_log, O_WRONLY | O_CREAT | O_APPEND, 0600);

        if (fd >= 0) {
            if (write(fd, line, (size_t) n) < 0) {
                perror(u_log);
            }
            close(fd);
        }
    }
}

static int u_env_int(const char *name, int def)
{
    const char *v = getenv(name);

    return (NULL != v && '\0' != v[0]) ? atoi(v) : def;
}

/* Buffers of the traffic before the failure are freed only after
 * MPI_Finalize: a request that completed with an error (revoked, peer
 * failed) may still have a transfer from a live peer landing in its
 * buffer (Open MPI 5.0.7's ob1 completes a matched receive on a revoked
 * communicator while its rendezvous goes on). */
#define U_KEEP_MAX 16
static void *u_kept[U_KEEP_MAX];
static int u_nkept;

static void u_keep(void *p)
{
    if (u_nkept < U_KEEP_MAX) {
        u_kept[u_nkept++] = p;
    }
}

static void u_free_kept(void)
{
    while (u_nkept > 0) {
        free(u_kept[--u_nkept]);
    }
}

static void u_die(void)
{
    u_say("ULFM death %d %.6f", tmpi_rank, u_now());
    raise(SIGKILL);
}

/* The victim's moment: dies after up to u_die_tests MPI_Test calls on its
 * own requests (so they are in flight at different stages). */
static void u_maybe_die(int round, MPI_Request *reqs, int nreq)
{
    if (tmpi_rank != u_victim || round != u_die_round) {
        return;
    }
    for (int i = 0; i < u_die_tests && nreq > 0; i++) {
        int flag;

        (void) MPI_Test(&reqs[i % nreq], &flag, MPI_STATUS_IGNORE);
    }
    u_die();
}

/* Completes every request in reqs, whatever the outcome (after a revoke
 * they end with an error): the buffers stay ours until then. */
static void u_drain(MPI_Request *reqs, int nreq)
{
    for (int i = 0; i < nreq; i++) {
        if (MPI_REQUEST_NULL != reqs[i]) {
            (void) MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
        }
    }
}

/* The first error of this rank: revoke so that everyone learns of it. */
static int u_failed(MPI_Comm comm, int rc, const char *where, int round, double *t_detect)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, cls = 0;

    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    if (*t_detect <= 0.0) {
        *t_detect = u_now();
    }
    fprintf(stderr, "%s: rank %d: %s in round %d: %s (class %d)\n", u_name, tmpi_rank, where, round,
            msg, cls);
#if U_HAVE_ULFM
    (void) MPIX_Comm_revoke(comm);
#else
    (void) comm;
#endif
    return 1;
}

/* An error in a round of traffic: the round that failed is recorded, the
 * world revoked, and the traffic ends (true). */
static bool u_round_failed(MPI_Comm comm, int rc, const char *where, int round, int *failed_round,
                           double *t_detect)
{
    if (MPI_SUCCESS == rc) {
        return false;
    }
    *failed_round = round;
    u_failed(comm, rc, where, round, t_detect);
    return true;
}

/* After a round that went through: the job armed (said once, for the
 * runner), and the traffic given up (true) once it ran U_TRAFFIC_MAX_S
 * without a failure. */
static bool u_round_timed_out(int round, double t0)
{
    if (0 == tmpi_rank && 2 == round) {
        u_say("ULFM armed %s %d ranks", u_name, tmpi_size);
    }
    if (u_now() - t0 > U_TRAFFIC_MAX_S) {
        tmpi_error("no failure after %.0f s of traffic", U_TRAFFIC_MAX_S);
        return true;
    }
    return false;
}

/* ---- the traffic before the failure ------------------------------------ */

/* eager or rndv: len bytes to and from each of peers[0..npeers-1], depth
 * messages per direction and peer in flight. Returns the round that
 * failed, or -1 when the loop ran out (which the caller reports). */
static int u_traffic_peers(MPI_Comm comm, size_t len, int depth, const int *peers, int npeers,
                           double *t_detect)
{
    int nreq = 2 * depth * npeers;
    MPI_Request *reqs = calloc((size_t) nreq, sizeof(*reqs));
    MPI_Status *sts = calloc((size_t) nreq, sizeof(*sts));
    uint8_t *sbuf = tmpi_malloc(len), *rbuf = tmpi_malloc(len * (size_t) (depth * npeers));
    double t0 = u_now();
    int failed_round = -1;

    for (int round = 0; round < U_ROUNDS_MAX && failed_round < 0; round++) {
        int k = 0, rc;

        tmpi_fill(sbuf, len, tmpi_rank, (uint32_t) round);
        for (int d = 0; d < depth; d++) {
            for (int p = 0; p < npeers; p++) {
                MPI_Irecv(rbuf + (size_t) (d * npeers + p) * len, (int) len, MPI_BYTE, peers[p], d,
                          comm, &reqs[k++]);
            }
        }
        for (int d = 0; d < depth; d++) {
            for (int p = 0; p < npeers; p++) {
                MPI_Isend(sbuf, (int) len, MPI_BYTE, peers[p], d, comm, &reqs[k++]);
            }
        }
        u_maybe_die(round, reqs, k);
        rc = MPI_Waitall(k, reqs, sts);
        if (MPI_SUCCESS != rc) {
            failed_round = round;
            /* the first request that failed tells why */
            for (int i = 0; MPI_ERR_IN_STATUS == rc && i < k; i++) {
                if (MPI_SUCCESS != sts[i].MPI_ERROR && MPI_ERR_PENDING != sts[i].MPI_ERROR) {
                    rc = sts[i].MPI_ERROR;
                }
            }
            u_failed(comm, rc, "Waitall", round, t_detect);
            u_drain(reqs, k);
            break;
        }
        for (int d = 0; d < depth; d++) {
            for (int p = 0; p < npeers; p++) {
                tmpi_check(rbuf + (size_t) (d * npeers + p) * len, len, peers[p], (uint32_t) round,
                           "message");
            }
        }
        if (u_round_timed_out(round, t0)) {
            break;
        }
    }
    free(reqs);
    free(sts);
    u_keep(sbuf);
    u_keep(rbuf);
    return failed_round;
}

/* eager: small messages with both ring neighbours, many in flight */
static int u_traffic_eager(MPI_Comm comm, double *t_detect)
{
    int peers[2] = {(tmpi_rank + tmpi_size - 1) % tmpi_size, (tmpi_rank + 1) % tmpi_size};

    return u_traffic_peers(comm, U_SMALL, U_DEPTH, peers, 2, t_detect);
}

/* rndv: 4 MiB + 1 to and from the victim, which exchanges with everyone
 * (a star): when it dies, every survivor has rendezvous transfers with
 * it in flight, and none with another survivor. Open MPI 5.0.7's ob1
 * does not survive a revoke that cuts into a rendezvous between two live
 * processes (a matched receive completed in error and freed before its
 * data is in: "Recv error after request freed", over any transport). */
static int u_traffic_rndv(MPI_Comm comm, double *t_detect)
{
    int *peers = calloc((size_t) tmpi_size, sizeof(int)), n = 0, rc;

    if (tmpi_rank == u_victim || u_victim < 0) {
        for (int i = 0; i < tmpi_size; i++) {
            if (i != tmpi_rank) {
                peers[n++] = i;
            }
        }
    } else {
        peers[n++] = u_victim;
    }
    rc = u_traffic_peers(comm, U_LARGE, 1, peers, n, t_detect);
    free(peers);
    return rc;
}

/* rma: passive target on the right neighbour, then a barrier. The window
 * is handed back (the caller frees it after the recovery). */
static int u_traffic_rma(MPI_Comm comm, MPI_Win *win, void **winbuf, double *t_detect)
{
    int right = (tmpi_rank + 1) % tmpi_size;
    uint8_t *put = tmpi_malloc(U_PUT), *get = tmpi_malloc(U_GET);
    int *acc = tmpi_malloc(U_ACC * sizeof(int));
    double t0 = u_now();
    int failed_round = -1, rc;

    /* created, not allocated: osc/sm takes allocated windows of one host,
     * and the transports' own one-sided path (osc_hybrid) is the test */
    *winbuf = tmpi_malloc(U_WIN);
    rc = MPI_Win_create(*winbuf, (MPI_Aint) U_WIN, 1, MPI_INFO_NULL, comm, win);
    if (MPI_SUCCESS != rc) {
        tmpi_error("MPI_Win_create failed");
        *win = MPI_WIN_NULL;
        free(put);
        free(get);
        free(acc);
        return -1;
    }
    MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
    memset(*winbuf, 0, U_WIN);
    for (int i = 0; i < U_ACC; i++) {
        acc[i] = 1;
    }
    MPI_Barrier(comm);
    for (int round = 0; round < U_ROUNDS_MAX && failed_round < 0; round++) {
        tmpi_fill(put, U_PUT, tmpi_rank, (uint32_t) round);
        rc = MPI_Win_lock(MPI_LOCK_SHARED, right, 0, *win);
        if (MPI_SUCCESS == rc) {
            rc = MPI_Put(put, U_PUT, MPI_BYTE, right, 0, U_PUT, MPI_BYTE, *win);
        }
        if (MPI_SUCCESS == rc) {
            rc = MPI_Get(get, U_GET, MPI_BYTE, right, U_PUT, U_GET, MPI_BYTE, *win);
        }
        if (MPI_SUCCESS == rc) {
            rc = MPI_Accumulate(acc, U_ACC, MPI_INT, right, U_PUT + U_GET, U_ACC, MPI_INT, MPI_SUM,
                                *win);
        }
        if (tmpi_rank == u_victim && round == u_die_round) {
            if (u_die_tests > 1) {
                (void) MPI_Win_flush(right, *win);
            }
            u_die();
        }
        if (MPI_SUCCESS == rc) {
            rc = MPI_Win_unlock(right, *win);
        } else {
            (void) MPI_Win_unlock(right, *win);
        }
        if (u_round_failed(comm, rc, "window epoch", round, &failed_round, t_detect)) {
            break;
        }
        rc = MPI_Barrier(comm);
        if (u_round_failed(comm, rc, "barrier after the epoch", round, &failed_round, t_detect) ||
            u_round_timed_out(round, t0)) {
            break;
        }
    }
    u_keep(put);
    u_keep(get);
    u_keep(acc);
    return failed_round;
}

/* One synchronisation involving the dead rank: it must return (the caller
 * only gets here once it did) and some call of it must fail. */
static void u_rma_expect_error(int rc_a, int rc_b, const char *what, double *t_detect)
{
    if (MPI_SUCCESS == rc_a && MPI_SUCCESS == rc_b) {
        tmpi_error("%s with the dead rank %d succeeded", what, u_victim);
    } else if (*t_detect <= 0.0) {
        *t_detect = u_now();
    }
}

/* rmasync: the victim takes an exclusive lock on rank 0's window, puts,
 * meets everyone in a barrier and dies with the lock held. Each survivor
 * then takes the exclusive lock on rank 0 (granted once rank 0 has
 * released the dead origin's lock), puts its own pattern and reads it
 * back; and runs every kind of synchronisation with the dead rank, each
 * of which must fail and none hang: a shared lock with a put, a lock_all
 * with an Rget, a flush after a put, start and post/wait on a group of
 * the dead rank alone, and a fence. Then the window is handed back and
 * the world revoked. (u_die_round and u_die_tests are not used.) */
static int u_rma_sync(MPI_Comm comm, MPI_Win *win, void **winbuf, double *t_detect)
{
    const int slot = 4096, r0 = 0;
    uint8_t *buf = tmpi_malloc(slot), *back = tmpi_malloc(slot);
    MPI_Group wg, dead;
    MPI_Request req;
    int rc, rc2, v = u_victim;

    if (u_victim == r0 || u_victim < 0) {
        tmpi_error("rmasync needs a victim other than rank 0");
        return -1;
    }
    *winbuf = tmpi_malloc((size_t) slot * (size_t) tmpi_size);
    memset(*winbuf, 0, (size_t) slot * (size_t) tmpi_size);
    rc = MPI_Win_create(*winbuf, (MPI_Aint) slot * tmpi_size, 1, MPI_INFO_NULL, comm, win);
    if (MPI_SUCCESS != rc) {
        tmpi_error("MPI_Win_create failed");
        *win = MPI_WIN_NULL;
        return -1;
    }
    MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
    MPI_Comm_group(comm, &wg);
    MPI_Group_incl(wg, 1, &v, &dead);
    tmpi_fill(buf, slot, tmpi_rank, 5000);
    if (tmpi_rank == u_victim) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r0, 0, *win);
        MPI_Put(buf, slot, MPI_BYTE, r0, (MPI_Aint) slot * tmpi_rank, slot, MPI_BYTE, *win);
        MPI_Win_flush(r0, *win);
        MPI_Barrier(comm);
        u_die();
    }
    MPI_Barrier(comm);
    if (0 == tmpi_rank) {
        u_say("ULFM armed %s %d ranks", u_name, tmpi_size);
    }

    /* the lock the dead origin held at rank 0 is released */
    rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r0, 0, *win);
    if (MPI_SUCCESS == rc) {
        rc = MPI_Put(buf, slot, MPI_BYTE, r0, (MPI_Aint) slot * tmpi_rank, slot, MPI_BYTE, *win);
        rc2 = MPI_Win_unlock(r0, *win);
        rc = MPI_SUCCESS != rc ? rc : rc2;
    }
    if (MPI_SUCCESS != rc) {
        tmpi_error("exclusive lock at rank 0 after the death of its holder: rc %d", rc);
    } else {
        rc = MPI_Win_lock(MPI_LOCK_SHARED, r0, 0, *win);
        if (MPI_SUCCESS == rc) {
            rc = MPI_Get(back, slot, MPI_BYTE, r0, (MPI_Aint) slot * tmpi_rank, slot, MPI_BYTE,
                         *win);
            rc2 = MPI_Win_unlock(r0, *win);
            rc = MPI_SUCCESS != rc ? rc : rc2;
        }
        if (MPI_SUCCESS != rc) {
            tmpi_error("reading back from rank 0: rc %d", rc);
        } else {
            tmpi_check(back, slot, tmpi_rank, 5000, "put at rank 0 after the death");
        }
    }

    /* a shared lock on the dead rank, a put */
    rc = MPI_Win_lock(MPI_LOCK_SHARED, v, 0, *win);
    rc2 = MPI_ERR_OTHER;
    if (MPI_SUCCESS == rc) {
        (void) MPI_Put(buf, slot, MPI_BYTE, v, 0, slot, MPI_BYTE, *win);
        rc2 = MPI_Win_unlock(v, *win);
    }
    u_rma_expect_error(rc, rc2, "lock, put, unlock", t_detect);

    /* lock_all, an Rget from the dead rank */
    rc = MPI_Win_lock_all(0, *win);
    rc2 = MPI_SUCCESS;
    if (MPI_SUCCESS == rc) {
        rc = MPI_Rget(back, slot, MPI_BYTE, v, 0, slot, MPI_BYTE, *win, &req);
        if (MPI_SUCCESS == rc) {
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        rc2 = MPI_Win_unlock_all(*win);
    }
    u_rma_expect_error(rc, rc2, "lock_all, Rget, unlock_all", t_detect);

    /* a flush after a put (the lock without a message) */
    rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, *win);
    rc2 = MPI_SUCCESS;
    if (MPI_SUCCESS == rc) {
        (void) MPI_Put(buf, slot, MPI_BYTE, v, 0, slot, MPI_BYTE, *win);
        rc = MPI_Win_flush(v, *win);
        rc2 = MPI_Win_unlock_all(*win);
    }
    u_rma_expect_error(rc, rc2, "put, flush", t_detect);

    /* general active target with the dead rank alone */
    rc = MPI_Win_start(dead, 0, *win);
    rc2 = MPI_SUCCESS;
    if (MPI_SUCCESS == rc) {
        rc2 = MPI_Win_complete(*win);
    }
    u_rma_expect_error(rc, rc2, "start, complete", t_detect);
    rc = MPI_Win_post(dead, 0, *win);
    rc2 = MPI_SUCCESS;
    if (MPI_SUCCESS == rc) {
        rc2 = MPI_Win_wait(*win);
    }
    u_rma_expect_error(rc, rc2, "post, wait", t_detect);

    /* a fence is collective over the window's group */
    rc = MPI_Win_fence(0, *win);
    u_rma_expect_error(rc, MPI_SUCCESS == rc ? MPI_Win_fence(MPI_MODE_NOSUCCEED, *win) : rc,
                       "fence", t_detect);

    MPI_Group_free(&dead);
    MPI_Group_free(&wg);
    u_keep(buf);
    u_keep(back);
#if U_HAVE_ULFM
    (void) MPIX_Comm_revoke(comm);
#endif
    return 0;
}

/* coll: Allreduce, Bcast from a rotating root, a non-blocking Allreduce. */
static int u_traffic_coll(MPI_Comm comm, double *t_detect)
{
    int *in = tmpi_malloc(U_COLL * sizeof(int)), *out = tmpi_malloc(U_COLL * sizeof(int));
    uint8_t *bc = tmpi_malloc(U_BCAST);
    double t0 = u_now();
    int failed_round = -1, rc;

    for (int round = 0; round < U_ROUNDS_MAX && failed_round < 0; round++) {
        int root = round % tmpi_size;
        MPI_Request req;

        for (int i = 0; i < U_COLL; i++) {
            in[i] = tmpi_rank + i + round;
        }
        rc = MPI_Allreduce(in, out, U_COLL, MPI_INT, MPI_SUM, comm);
        if (u_round_failed(comm, rc, "Allreduce", round, &failed_round, t_detect)) {
            break;
        }
        for (int i = 0; i < U_COLL; i++) {
            long want = (long) tmpi_size * (tmpi_size - 1) / 2 + (long) tmpi_size * (i + round);

            if (out[i] != (int) want) {
                tmpi_error("Allreduce round %d: element %d is %d, want %ld", round, i, out[i],
                           want);
                break;
            }
        }
        if (tmpi_rank == root) {
            tmpi_fill(bc, U_BCAST, root, (uint32_t) round);
        }
        rc = MPI_Bcast(bc, U_BCAST, MPI_BYTE, root, comm);
        if (u_round_failed(comm, rc, "Bcast", round, &failed_round, t_detect)) {
            break;
        }
        tmpi_check(bc, U_BCAST, root, (uint32_t) round, "Bcast");
        rc = MPI_Iallreduce(in, out, U_COLL, MPI_INT, MPI_MAX, comm, &req);
        if (MPI_SUCCESS == rc) {
            u_maybe_die(round, &req, 1);
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        if (u_round_failed(comm, rc, "Iallreduce", round, &failed_round, t_detect) ||
            u_round_timed_out(round, t0)) {
            break;
        }
    }
    u_keep(in);
    u_keep(out);
    u_keep(bc);
    return failed_round;
}

/* ---- among the survivors ------------------------------------------------ */

#if U_HAVE_ULFM
/* The checks on the shrunk communicator sh; wrank[i] is the world rank of
 * sh's rank i. Returns the number of errors seen here. */
static long u_check_survivors(MPI_Comm sh, const int *wrank, int moment)
{
    int me, n, right, left, rc;
    long before = tmpi_errors, sum = 0, want = 0;
    uint8_t *sbuf, *rbuf;

    MPI_Comm_rank(sh, &me);
    MPI_Comm_size(sh, &n);
    right = (me + 1) % n;
    left = (me + n - 1) % n;

    /* exact sums */
    {
        long v = tmpi_rank + 1;

        rc = MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, sh);
        for (int i = 0; i < n; i++) {
            want += wrank[i] + 1;
        }
        if (MPI_SUCCESS != rc || sum != want) {
            tmpi_error("Allreduce on the survivors: rc %d, sum %ld, want %ld", rc, sum, want);
        }
    }

    /* the 64 KiB ring, both directions, three rounds */
    sbuf = tmpi_malloc(U_RING);
    rbuf = tmpi_malloc(2 * U_RING);
    for (uint32_t round = 0; round < 3; round++) {
        MPI_Request r[4];

        tmpi_fill(sbuf, U_RING, tmpi_rank, 1000 + round);
        MPI_Irecv(rbuf, U_RING, MPI_BYTE, left, 11, sh, &r[0]);
        MPI_Irecv(rbuf + U_RING, U_RING, MPI_BYTE, right, 12, sh, &r[1]);
        MPI_Isend(sbuf, U_RING, MPI_BYTE, right, 11, sh, &r[2]);
        MPI_Isend(sbuf, U_RING, MPI_BYTE, left, 12, sh, &r[3]);
        rc = MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
        if (MPI_SUCCESS != rc) {
            tmpi_error("64 KiB ring round %u on the survivors: rc %d", round, rc);
            u_drain(r, 4);
            break;
        }
        tmpi_check(rbuf, U_RING, wrank[left], 1000 + round, "survivors' ring from the left");
        tmpi_check(rbuf + U_RING, U_RING, wrank[right], 1000 + round,
                   "survivors' ring from the right");
    }

    /* 40 eager messages of varying sizes to the right, in order */
    for (uint32_t i = 0; i < 40 && tmpi_errors == before; i++) {
        size_t len = (i * 97) % 4096;
        MPI_Status st;

        tmpi_fill(sbuf, len, tmpi_rank, 2000 + i);
        rc = MPI_Sendrecv(sbuf, (int) len, MPI_BYTE, right, 20, rbuf, U_RING, MPI_BYTE, left, 20,
                          sh, &st);
        if (MPI_SUCCESS != rc) {
            tmpi_error("eager message %u on the survivors: rc %d", i, rc);
            break;
        }
        tmpi_check_status(&st, left, 20, (int) len, "survivors' eager message");
        tmpi_check(rbuf, len, wrank[left], 2000 + i, "survivors' eager message");
    }

    /* a Bcast from the last survivor */
    if (n - 1 == me) {
        tmpi_fill(rbuf, U_RING, tmpi_rank, 3000);
    }
    rc = MPI_Bcast(rbuf, U_RING, MPI_BYTE, n - 1, sh);
    if (MPI_SUCCESS != rc) {
        tmpi_error("Bcast on the survivors: rc %d", rc);
    } else {
        tmpi_check(rbuf, U_RING, wrank[n - 1], 3000, "survivors' Bcast");
    }

    /* one-sided among the survivors: put to the right, get from the left */
    if (U_RMA == moment || U_RMASYNC == moment) {
        uint8_t *base = tmpi_malloc(2 * U_RING);
        MPI_Win win;

        rc = MPI_Win_create(base, 2 * U_RING, 1, MPI_INFO_NULL, sh, &win);
        if (MPI_SUCCESS != rc) {
            tmpi_error("MPI_Win_create on the survivors: rc %d", rc);
        } else {
            tmpi_fill(base, U_RING, tmpi_rank, 4000);
            tmpi_fill(sbuf, U_RING, tmpi_rank, 4001);
            MPI_Win_fence(0, win);
            MPI_Put(sbuf, U_RING, MPI_BYTE, right, U_RING, U_RING, MPI_BYTE, win);
            MPI_Get(rbuf, U_RING, MPI_BYTE, left, 0, U_RING, MPI_BYTE, win);
            rc = MPI_Win_fence(0, win);
            if (MPI_SUCCESS != rc) {
                tmpi_error("fence on the survivors' window: rc %d", rc);
            } else {
                tmpi_check((uint8_t *) base + U_RING, U_RING, wrank[left], 4001, "survivors' put");
                tmpi_check(rbuf, U_RING, wrank[left], 4000, "survivors' get");
            }
            MPI_Win_free(&win);
        }
        free(base);
    }
    rc = MPI_Barrier(sh);
    if (MPI_SUCCESS != rc) {
        tmpi_error("Barrier on the survivors: rc %d", rc);
    }
    free(sbuf);
    free(rbuf);
    return tmpi_errors - before;
}

/* Revoke, shrink, agree and check; prints the result line. */
static int u_recover(int moment, int failed_round, double t_detect)
{
    MPI_Comm sh = MPI_COMM_NULL;
    MPI_Group wg, sg, fg;
    int n = 0, flag = 0x5a, rc, nfailed = 0, *wrank, *idx;
    long errors, total = 0;
    double t_rec, t_max = 0.0, t_first = 0.0, t_det = t_detect > 0.0 ? t_detect : u_now();

    (void) MPIX_Comm_revoke(MPI_COMM_WORLD);
    rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &sh);
    if (MPI_SUCCESS != rc) {
        tmpi_error("MPIX_Comm_shrink: rc %d", rc);
        return 1;
    }
    MPI_Comm_set_errhandler(sh, MPI_ERRORS_RETURN);
    MPI_Comm_size(sh, &n);
    if (n != tmpi_size - u_dead) {
        tmpi_error("the shrunk communicator has %d ranks, want %d", n, tmpi_size - u_dead);
    }
    rc = MPIX_Comm_agree(sh, &flag);
    if (MPI_SUCCESS != rc || 0x5a != flag) {
        tmpi_error("MPIX_Comm_agree: rc %d, flag 0x%x, want 0x5a", rc, (unsigned) flag);
    }
    /* who is in the shrunk communicator, by world rank */
    wrank = calloc((size_t) n, sizeof(int));
    idx = calloc((size_t) n, sizeof(int));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(sh, &sg);
    for (int i = 0; i < n; i++) {
        idx[i] = i;
    }
    MPI_Group_translate_ranks(sg, n, idx, wg, wrank);
    /* the failed group names the victim */
    rc = MPIX_Comm_get_failed(MPI_COMM_WORLD, &fg);
    if (MPI_SUCCESS == rc) {
        MPI_Group_size(fg, &nfailed);
        if (nfailed < u_dead) {
            tmpi_error("the failed group has %d ranks, want at least %d", nfailed, u_dead);
        }
        if (u_victim >= 0) {
            int v = u_victim, in_fg = MPI_UNDEFINED;

            MPI_Group_translate_ranks(wg, 1, &v, fg, &in_fg);
            if (MPI_UNDEFINED == in_fg) {
                tmpi_error("the failed group does not name rank %d", u_victim);
            }
        }
        MPI_Group_free(&fg);
    } else {
        tmpi_error("MPIX_Comm_get_failed: rc %d", rc);
    }
    for (int i = 0; i < n; i++) {
        if (u_victim >= 0 && wrank[i] == u_victim) {
            tmpi_error("the victim (rank %d) is among the survivors", u_victim);
        }
    }

    errors = u_check_survivors(sh, wrank, moment);
    t_rec = u_now();
    u_say("ULFM recovered %d %.6f", tmpi_rank, t_rec);
    (void) errors;
    MPI_Allreduce(&tmpi_errors, &total, 1, MPI_LONG, MPI_SUM, sh);
    MPI_Allreduce(&t_rec, &t_max, 1, MPI_DOUBLE, MPI_MAX, sh);
    MPI_Allreduce(&t_det, &t_first, 1, MPI_DOUBLE, MPI_MIN, sh);
    {
        int me;

        MPI_Comm_rank(sh, &me);
        if (0 == me) {
            u_say("%s %s: np=%d survivors=%d failed=%d first error in round %d, recovered %.2f s "
                  "after the first error",
                  0 == total ? "PASS" : "FAIL", u_name, tmpi_size, n, nfailed, failed_round,
                  t_max - t_first);
        }
    }
    MPI_Group_free(&wg);
    MPI_Group_free(&sg);
    free(wrank);
    free(idx);
    MPI_Comm_free(&sh);
    return 0 == total ? 0 : 1;
}
#endif /* U_HAVE_ULFM */

int main(int argc, char **argv)
{
    int moment = -1, seed, rc, failed_round = -1, ft = 0;
    double t_detect = 0.0;
    MPI_Win win = MPI_WIN_NULL;
    void *winbuf = NULL;

    for (int m = 0; argc > 1 && m < U_NMOMENTS; m++) {
        if (0 == strcmp(argv[1], u_moment_names[m])) {
            moment = m;
        }
    }
    snprintf(u_name, sizeof(u_name), "ulfm_%s", moment >= 0 ? u_moment_names[moment] : "?");
    tmpi_init(&argc, &argv, u_name);
    if (moment < 0) {
        if (0 == tmpi_rank) {
            fprintf(stderr, "usage: u_survive eager|rndv|rma|coll|rmasync\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    u_log = getenv("ULFM_LOG");
    seed = u_env_int("ULFM_SEED", 0);
    u_victim = u_env_int("ULFM_VICTIM", tmpi_size - 1);
    u_dead = u_env_int("ULFM_DEAD", u_victim >= 0 ? 1 : 0);
    u_die_round = u_env_int("ULFM_ROUND", 3 + seed % 5);
    u_die_tests = (seed / 5) % 4;
    if (u_victim >= tmpi_size || tmpi_size < 2) {
        if (0 == tmpi_rank) {
            fprintf(stderr, "%s: needs 2 ranks or more and a victim below %d\n", u_name, tmpi_size);
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
#if U_HAVE_ULFM
    {
        int *val = NULL;

        /* MPI_FT says whether this run tolerates failures (--with-ft) */
        if (MPI_SUCCESS == MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &val, &ft) && ft) {
            ft = *val;
        }
    }
    if (ft) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        /* Open MPI 5.0.7's btl/tcp writes to a dead peer's socket with
         * writev: the second write after the peer's death raises SIGPIPE,
         * whose default action kills a survivor (the ranks inherit it)
         * before its receive event sees the connection closed. A program
         * that must survive a failure ignores it (docs/fault-tolerance.md) */
        signal(SIGPIPE, SIG_IGN);
    }
#endif
    if (0 == tmpi_rank) {
        u_say("ULFM %s: np=%d victim %d in round %d after %d tests, failure tolerance %s", u_name,
              tmpi_size, u_victim, u_die_round, u_die_tests, ft ? "on" : "off");
    }

    /* a first collective, checked */
    {
        long v = tmpi_rank, sum = -1;

        rc = MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (MPI_SUCCESS != rc || sum != (long) tmpi_size * (tmpi_size - 1) / 2) {
            tmpi_error("the first Allreduce: rc %d, sum %ld", rc, sum);
        }
    }

    switch (moment) {
    case U_EAGER:
        failed_round = u_traffic_eager(MPI_COMM_WORLD, &t_detect);
        break;
    case U_RNDV:
        failed_round = u_traffic_rndv(MPI_COMM_WORLD, &t_detect);
        break;
    case U_RMA:
        failed_round = u_traffic_rma(MPI_COMM_WORLD, &win, &winbuf, &t_detect);
        break;
    case U_RMASYNC:
        failed_round = u_rma_sync(MPI_COMM_WORLD, &win, &winbuf, &t_detect);
        break;
    default:
        failed_round = u_traffic_coll(MPI_COMM_WORLD, &t_detect);
        break;
    }

#if U_HAVE_ULFM
    if (ft) {
        rc = u_recover(moment, failed_round, t_detect);
        if (MPI_WIN_NULL != win) {
            /* collective over a group with a dead member: an error, no hang */
            (void) MPI_Win_free(&win);
        }
        MPI_Finalize();
        free(winbuf);
        u_free_kept();
        return rc;
    }
#endif
    /* without failure tolerance the job must have ended by now */
    tmpi_error("the traffic ended (round %d) without failure tolerance", failed_round);
    u_free_kept();
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 3;
}
