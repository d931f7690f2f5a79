/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_manyreq.c: hundreds of outstanding nonblocking requests per peer. Every
 * rank posts NREQ receives and NREQ sends to every other rank at once
 * (mostly small, every 16th one large), then completes them with Waitall,
 * and in a second round with a Testsome loop, checking every message.
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>

#define NREQ 300

static size_t msg_len(int i)
{
    if (i % 16 == 15) {
        return 65536 + 4097 * (size_t) (i % 5);
    }
    return (size_t) (i * 37) % 3000;
}

static uint32_t msg_seq(int round, int dst, int i)
{
    return (uint32_t) (round * 1000000 + dst * 10000 + i);
}

static void one_round(int round, uint8_t **sbufs, uint8_t **rbufs, MPI_Request *reqs,
                      MPI_Status *sts)
{
    int nreq = 0, done = 0;
    int *idx;
    MPI_Status *tmp;

    /* Receives first for half the peers, sends first for the others, so
     * both the expected and the unexpected paths fill up. */
    for (int p = 0, k = 0; p < tmpi_size; p++) {
        if (p == tmpi_rank) {
            continue;
        }
        for (int i = 0; i < NREQ; i++, k++) {
            MPI_Irecv(rbufs[k], (int) msg_len(i), MPI_BYTE, p, i % 100, MPI_COMM_WORLD,
                      &reqs[nreq++]);
        }
    }
    for (int p = 0, k = 0; p < tmpi_size; p++) {
        if (p == tmpi_rank) {
            continue;
        }
        for (int i = 0; i < NREQ; i++, k++) {
            tmpi_fill(sbufs[k], msg_len(i), tmpi_rank, msg_seq(round, p, i));
            MPI_Isend(sbufs[k], (int) msg_len(i), MPI_BYTE, p, i % 100, MPI_COMM_WORLD,
                      &reqs[nreq++]);
        }
    }

    if (0 == round) {
        MPI_Waitall(nreq, reqs, sts);
    } else {
        idx = tmpi_malloc(sizeof(int) * nreq);
        tmp = tmpi_malloc(sizeof(MPI_Status) * nreq);
        while (done < nreq) {
            int outcount;

            MPI_Testsome(nreq, reqs, &outcount, idx, tmp);
            if (MPI_UNDEFINED == outcount) {
                tmpi_error("testsome: no active request with %d of %d done", done, nreq);
                break;
            }
            for (int j = 0; j < outcount; j++) {
                sts[idx[j]] = tmp[j];
            }
            done += outcount;
        }
        free(tmp);
        free(idx);
    }

    for (int p = 0, k = 0; p < tmpi_size; p++) {
        if (p == tmpi_rank) {
            continue;
        }
        for (int i = 0; i < NREQ; i++, k++) {
            if (0 == tmpi_check_status(&sts[k], p, i % 100, (int) msg_len(i), "manyreq status")) {
                tmpi_check(rbufs[k], msg_len(i), p, msg_seq(round, tmpi_rank, i), "manyreq data");
            }
        }
    }
}

int main(int argc, char **argv)
{
    int nbuf;
    uint8_t **sbufs, **rbufs;
    MPI_Request *reqs;
    MPI_Status *sts;
    char detail[80];

    tmpi_init(&argc, &argv, "manyreq");
    if (tmpi_size < 2) {
        tmpi_error("needs at least 2 ranks");
        return tmpi_finish(NULL);
    }
    nbuf = NREQ * (tmpi_size - 1);
    sbufs = tmpi_malloc(sizeof(*sbufs) * nbuf);
    rbufs = tmpi_malloc(sizeof(*rbufs) * nbuf);
    for (int k = 0; k < nbuf; k++) {
        sbufs[k] = tmpi_malloc(msg_len(k % NREQ));
        rbufs[k] = tmpi_malloc(msg_len(k % NREQ));
    }
    reqs = tmpi_malloc(sizeof(MPI_Request) * 2 * nbuf);
    sts = tmpi_malloc(sizeof(MPI_Status) * 2 * nbuf);

    one_round(0, sbufs, rbufs, reqs, sts);
    MPI_Barrier(MPI_COMM_WORLD);
    one_round(1, sbufs, rbufs, reqs, sts);

    for (int k = 0; k < nbuf; k++) {
        free(sbufs[k]);
        free(rbufs[k]);
    }
    free(sbufs);
    free(rbufs);
    free(reqs);
    free(sts);
    snprintf(detail, sizeof(detail),
             "%d sends + %d receives outstanding per peer, waitall/testsome", NREQ, NREQ);
    return tmpi_finish(detail);
}
