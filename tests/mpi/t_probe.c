/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_probe.c: synchronous sends and probes between the ranks of each pair
 * (0,1), (2,3), ...:
 *   - Issend must not complete before the receiver has posted its receive
 *     (the receiver posts only after the sender has tested and told it so),
 *   - blocking Ssend into a receive posted later,
 *   - Probe and Iprobe with ANY_TAG report the right tag and count,
 *   - Mprobe/Mrecv and Improbe/Imrecv take the probed message out of the
 *     matching queue so a second probe sees the next one.
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>

#define TAG_SSEND 21
#define TAG_TESTED 22
#define TAG_MPROBE 23
#define TESTS_BEFORE_POST 20

static const size_t probe_sizes[] = {
    0, 1, 63, 2047, 2049, 4097, 12289, 65535, 65537, 131073, 1048577, 8 * 1024 * 1024,
};
#define NPROBE ((int) (sizeof(probe_sizes) / sizeof(probe_sizes[0])))
#define MAXLEN ((size_t) 8 * 1024 * 1024)

static void ssend_early_completion(int peer, int sender, uint8_t *buf, int i)
{
    size_t len = probe_sizes[i];
    MPI_Status st;

    if (sender) {
        MPI_Request req;
        int flag = 0;

        tmpi_fill(buf, len, tmpi_rank, (uint32_t) i);
        MPI_Issend(buf, (int) len, MPI_BYTE, peer, TAG_SSEND, MPI_COMM_WORLD, &req);
        for (int t = 0; t < TESTS_BEFORE_POST && !flag; t++) {
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        }
        if (flag) {
            tmpi_error("issend of %zu B completed before the receive was "
                       "posted",
                       len);
        }
        MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_TESTED, MPI_COMM_WORLD);
        if (!flag) {
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
    } else {
        MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_TESTED, MPI_COMM_WORLD, &st);
        MPI_Recv(buf, (int) len, MPI_BYTE, peer, TAG_SSEND, MPI_COMM_WORLD, &st);
        if (0 == tmpi_check_status(&st, peer, TAG_SSEND, (int) len, "issend status")) {
            tmpi_check(buf, len, peer, (uint32_t) i, "issend data");
        }
    }
}

static void ssend_blocking(int peer, int sender, uint8_t *buf, int i)
{
    size_t len = probe_sizes[i];
    MPI_Status st;

    if (sender) {
        tmpi_fill(buf, len, tmpi_rank, 100 + (uint32_t) i);
        MPI_Ssend(buf, (int) len, MPI_BYTE, peer, TAG_SSEND, MPI_COMM_WORLD);
    } else {
        MPI_Recv(buf, (int) len, MPI_BYTE, peer, TAG_SSEND, MPI_COMM_WORLD, &st);
        if (0 == tmpi_check_status(&st, peer, TAG_SSEND, (int) len, "ssend status")) {
            tmpi_check(buf, len, peer, 100 + (uint32_t) i, "ssend data");
        }
    }
}

/* The sender sends every size with tag = its index; the receiver learns
 * tag and size by probing and only then receives. */
static void probes(int peer, int sender, uint8_t *buf, int blocking)
{
    MPI_Status st;
    uint32_t base = blocking ? 200 : 300;

    if (sender) {
        for (int i = 0; i < NPROBE; i++) {
            tmpi_fill(buf, probe_sizes[i], tmpi_rank, base + (uint32_t) i);
            MPI_Send(buf, (int) probe_sizes[i], MPI_BYTE, peer, i, MPI_COMM_WORLD);
        }
        return;
    }
    for (int i = 0; i < NPROBE; i++) {
        int flag = 0;
        uint8_t *rbuf;

        if (blocking) {
            MPI_Probe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        } else {
            while (!flag) {
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            }
        }
        if (tmpi_check_status(&st, peer, i, (int) probe_sizes[i], blocking ? "probe" : "iprobe")) {
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        /* Exactly the probed size, with no room to spare. */
        rbuf = tmpi_malloc(probe_sizes[i]);
        MPI_Recv(rbuf, (int) probe_sizes[i], MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
                 &st);
        tmpi_check(rbuf, probe_sizes[i], peer, base + (uint32_t) i,
                   blocking ? "probe data" : "iprobe data");
        free(rbuf);
    }
}

/* Two messages with one tag: a matched probe removes the first, so an
 * ordinary probe afterwards sees the second. */
static void mprobes(int peer, int sender, uint8_t *buf, int blocking)
{
    size_t len1 = blocking ? 2049 : 131073, len2 = blocking ? 65537 : 5;
    uint32_t base = blocking ? 400 : 500;
    MPI_Status st;

    if (sender) {
        /* Both in flight at once: the receiver probes the second before it
         * receives the first, which may need a rendezvous. */
        MPI_Request reqs[2];

        tmpi_fill(buf, len1, tmpi_rank, base);
        tmpi_fill(buf + len1, len2, tmpi_rank, base + 1);
        MPI_Isend(buf, (int) len1, MPI_BYTE, peer, TAG_MPROBE, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(buf + len1, (int) len2, MPI_BYTE, peer, TAG_MPROBE, MPI_COMM_WORLD, &reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    } else {
        MPI_Message msg;
        int flag = 0;

        if (blocking) {
            MPI_Mprobe(peer, TAG_MPROBE, MPI_COMM_WORLD, &msg, &st);
        } else {
            while (!flag) {
                MPI_Improbe(peer, TAG_MPROBE, MPI_COMM_WORLD, &flag, &msg, &st);
            }
        }
        tmpi_check_status(&st, peer, TAG_MPROBE, (int) len1, "mprobe");
        /* The second message is still in the queue and must be next. */
        MPI_Probe(peer, TAG_MPROBE, MPI_COMM_WORLD, &st);
        tmpi_check_status(&st, peer, TAG_MPROBE, (int) len2, "probe after mprobe");
        if (blocking) {
            MPI_Mrecv(buf, (int) len1, MPI_BYTE, &msg, &st);
        } else {
            MPI_Request req;

            MPI_Imrecv(buf, (int) len1, MPI_BYTE, &msg, &req);
            MPI_Wait(&req, &st);
        }
        if (0 == tmpi_check_status(&st, peer, TAG_MPROBE, (int) len1, "mrecv status")) {
            tmpi_check(buf, len1, peer, base, "mrecv data");
        }
        MPI_Recv(buf, (int) len2, MPI_BYTE, peer, TAG_MPROBE, MPI_COMM_WORLD, &st);
        if (0 == tmpi_check_status(&st, peer, TAG_MPROBE, (int) len2, "recv after mrecv status")) {
            tmpi_check(buf, len2, peer, base + 1, "recv after mrecv data");
        }
    }
}

int main(int argc, char **argv)
{
    int peer;
    uint8_t *buf;

    tmpi_init(&argc, &argv, "probe");
    peer = tmpi_rank ^ 1;
    buf = tmpi_malloc(MAXLEN);

    if (peer < tmpi_size) {
        /* Both directions: each rank of the pair is the sender once. */
        for (int dir = 0; dir < 2; dir++) {
            int sender = (tmpi_rank < peer) == (dir == 0);

            for (int i = 0; i < NPROBE; i++) {
                ssend_early_completion(peer, sender, buf, i);
                ssend_blocking(peer, sender, buf, i);
            }
            probes(peer, sender, buf, 1);
            probes(peer, sender, buf, 0);
            mprobes(peer, sender, buf, 1);
            mprobes(peer, sender, buf, 0);
        }
    }

    free(buf);
    return tmpi_finish("issend/ssend/probe/iprobe/mprobe/improbe");
}
