/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_killpeer.c: a rank dies by SIGKILL in the middle of communication. The
 * last rank starts a large send and receive in a ring shift and kills
 * itself; the survivors are then blocked in transfers with a dead peer.
 * The job must end (mpirun reports the death and exits non-zero), never
 * hang. The runner passes this test when mpirun exits non-zero before its
 * timeout and the "armed" line below was printed, which proves that MPI
 * came up and traffic was flowing before the kill.
 *
 * With TRANSPORTS_KILLPEER_EXTERNAL=1 in the environment no rank kills
 * itself: rank 0 prints the armed line once traffic flows and every rank
 * goes on until someone else kills ranks (tests/cluster/killhost.sh kills
 * every rank of one host).
 */

#include "tmpi.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LEN ((size_t) 4 * 1024 * 1024 + 1)
#define ROUNDS_BEFORE_KILL 5
/* Far more rounds than could ever finish: survivors must not run out. */
#define ROUNDS_MAX 1000000

int main(int argc, char **argv)
{
    uint8_t *sbuf, *rbuf;
    int right, left, victim;

    tmpi_init(&argc, &argv, "killpeer");
    right = (tmpi_rank + 1) % tmpi_size;
    left = (tmpi_rank + tmpi_size - 1) % tmpi_size;
    victim = tmpi_size - 1;
    if (NULL != getenv("TRANSPORTS_KILLPEER_EXTERNAL") &&
        0 == strcmp(getenv("TRANSPORTS_KILLPEER_EXTERNAL"), "1")) {
        victim = -1;
    }
    sbuf = tmpi_malloc(LEN);
    rbuf = tmpi_malloc(LEN);

    for (int round = 0; round < ROUNDS_MAX; round++) {
        MPI_Request reqs[2];
        /* Alternate small and large messages so both paths are busy. */
        size_t len = (round % 2) ? LEN : 100;

        tmpi_fill(sbuf, len, tmpi_rank, (uint32_t) round);
        MPI_Irecv(rbuf, (int) len, MPI_BYTE, left, 3, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(sbuf, (int) len, MPI_BYTE, right, 3, MPI_COMM_WORLD, &reqs[1]);
        if (victim < 0 && 0 == tmpi_rank && round == ROUNDS_BEFORE_KILL) {
            printf("KILLTEST armed: %d ranks in a ring, waiting to be killed\n", tmpi_size);
            fflush(stdout);
        }
        if (tmpi_rank == victim && round == ROUNDS_BEFORE_KILL) {
            printf("KILLTEST armed: rank %d of %d kills itself in round %d "
                   "with transfers in flight\n",
                   tmpi_rank, tmpi_size, round);
            fflush(stdout);
            raise(SIGKILL);
        }
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        tmpi_check(rbuf, len, left, (uint32_t) round, "kill ring");
    }
    /* Only reached if the kill did not happen. */
    tmpi_error("survived %d rounds: the victim never died", ROUNDS_MAX);
    free(sbuf);
    free(rbuf);
    return tmpi_finish(NULL);
}
