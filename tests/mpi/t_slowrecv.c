/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_slowrecv.c: flooding a receiver that sleeps must not grow the sender
 * without bound. Each odd rank sleeps before it posts a single receive
 * (a receiver that is busy elsewhere, not a synchronisation: nothing here
 * depends on how long it sleeps), while its even partner sends a stream
 * of small eager messages with MPI_Send. A transport that copies and
 * queues every message it cannot put on the wire yet (and tells the PML
 * it was sent) lets MPI_Send return at once and grows the sender by one
 * fragment per message; one with back-pressure makes MPI_Send wait. The
 * sender's data segment (VmData) must grow by less than a bound far below
 * what the flood would take unbounded; then every message is received and
 * checked.
 */

#include "tmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOWRECV_MSGS 100000
#define SLOWRECV_LEN 200 /* small: the PML sends it with btl_sendi */
#define SLOWRECV_SLEEP_S 3
/* unbounded, the flood queues SLOWRECV_MSGS fragments (the messages
 * are 20 MB, an eager buffer each takes gigabytes of address space) */
#define SLOWRECV_BOUND_KIB (64 * 1024)

/* VmData of this process in KiB (0 if unknown) */
static long slowrecv_vmdata_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = 0;

    if (NULL == f) {
        return 0;
    }
    while (NULL != fgets(line, sizeof(line), f)) {
        if (1 == sscanf(line, "VmData: %ld kB", &kib)) {
            break;
        }
    }
    fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    uint8_t *buf;
    int peer;
    char detail[128] = "";

    tmpi_init(&argc, &argv, "slowrecv");
    buf = tmpi_malloc(SLOWRECV_LEN);
    peer = tmpi_rank ^ 1;

    if (peer < tmpi_size && 0 == (tmpi_rank & 1)) {
        long before, grown;

        /* warm up: connections and first fragments exist before we measure */
        tmpi_fill(buf, SLOWRECV_LEN, tmpi_rank, 0);
        MPI_Send(buf, SLOWRECV_LEN, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        before = slowrecv_vmdata_kib();
        for (int i = 1; i <= SLOWRECV_MSGS; ++i) {
            tmpi_fill(buf, SLOWRECV_LEN, tmpi_rank, (uint32_t) i);
            MPI_Send(buf, SLOWRECV_LEN, MPI_BYTE, peer, i, MPI_COMM_WORLD);
        }
        grown = slowrecv_vmdata_kib() - before;
        if (grown > SLOWRECV_BOUND_KIB) {
            tmpi_error("the sender grew by %ld KiB while flooding a sleeping receiver with %d "
                       "messages of %d B (bound %d KiB)",
                       grown, SLOWRECV_MSGS, SLOWRECV_LEN, SLOWRECV_BOUND_KIB);
        }
        snprintf(detail, sizeof(detail), "%d messages, rank %d grew by %ld KiB", SLOWRECV_MSGS,
                 tmpi_rank, grown);
    } else if (peer < tmpi_size) {
        MPI_Status st;

        MPI_Recv(buf, SLOWRECV_LEN, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &st);
        tmpi_check(buf, SLOWRECV_LEN, peer, 0, "warm-up");
        sleep(SLOWRECV_SLEEP_S);
        for (int i = 1; i <= SLOWRECV_MSGS; ++i) {
            MPI_Recv(buf, SLOWRECV_LEN, MPI_BYTE, peer, i, MPI_COMM_WORLD, &st);
            tmpi_check_status(&st, peer, i, SLOWRECV_LEN, "flood");
            tmpi_check(buf, SLOWRECV_LEN, peer, (uint32_t) i, "flood");
        }
    }
    free(buf);
    /* rank 0 reports its own growth; every rank's errors count */
    return tmpi_finish(0 == tmpi_rank ? detail : NULL);
}
