/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * pingpong.c: ping-pong latency and streaming bandwidth between ranks 0
 * and 1, from 0 B to 8 MiB (0 and every power of two). Rank 0 prints one
 * CSV line per size: size,latency_us,bandwidth_MBps.
 *
 * Latency: half the round-trip time of a blocking ping-pong, averaged over
 * the iterations of a batch after a warm-up; the fastest of 5 batches is
 * reported. Bandwidth: rank 0 posts a window of nonblocking sends, rank 1 a
 * window of receives, and rank 1 acknowledges each window with a 0-byte
 * message (the method of OSU's osu_bw); bytes moved per second in the
 * fastest window, MB = 10^6 bytes. bench/run takes the median of these
 * over several runs. Each size is checked once with a data
 * pattern before it is timed, so a fast but wrong transport fails here too.
 * Other ranks, if any, only wait at the barriers.
 *
 * Options: -q quick (fewer iterations), -m MAX largest size in bytes.
 */

#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SIZE_DEFAULT ((size_t) 8 * 1024 * 1024)
#define WINDOW 64
/* Receive buffers of one window stay below this many bytes in total. */
#define WINDOW_BYTES_MAX ((size_t) 64 * 1024 * 1024)
#define TAG_LAT 1
#define TAG_BW 2
#define TAG_ACK 3
#define TAG_CHECK 4
#define BATCHES 5

static int rank;

static uint8_t pattern_byte(size_t pos, int src, size_t size)
{
    uint32_t x =
        (uint32_t) pos * 2654435761u + (uint32_t) src * 0x9e3779b9u + (uint32_t) size * 0x85ebca6bu;
    return (uint8_t) (x >> 24);
}

static void die(const char *msg, size_t size)
{
    fprintf(stderr, "pingpong: rank %d: %s (size %zu)\n", rank, msg, size);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *xmalloc(size_t len)
{
    void *p = malloc(len ? len : 1);

    if (NULL == p) {
        die("out of memory", len);
    }
    return p;
}

/* One patterned message each way, outside the timed loops. */
static void verify(uint8_t *sbuf, uint8_t *rbuf, size_t size)
{
    int peer = 1 - rank;
    MPI_Status st;
    int count;

    for (size_t i = 0; i < size; i++) {
        sbuf[i] = pattern_byte(i, rank, size);
    }
    memset(rbuf, 0, size);
    if (0 == rank) {
        MPI_Send(sbuf, (int) size, MPI_BYTE, peer, TAG_CHECK, MPI_COMM_WORLD);
        MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, TAG_CHECK, MPI_COMM_WORLD, &st);
    } else {
        MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, TAG_CHECK, MPI_COMM_WORLD, &st);
        MPI_Send(sbuf, (int) size, MPI_BYTE, peer, TAG_CHECK, MPI_COMM_WORLD);
    }
    MPI_Get_count(&st, MPI_BYTE, &count);
    if ((size_t) count != size) {
        die("received a wrong byte count", size);
    }
    for (size_t i = 0; i < size; i++) {
        if (rbuf[i] != pattern_byte(i, peer, size)) {
            die("received data does not match the pattern", size);
        }
    }
}

/* The smallest of v[0..n-1] (n >= 1): the fastest batch or window. */
static double best(const double *v, int n)
{
    double m = v[0];

    for (int i = 1; i < n; i++) {
        m = v[i] < m ? v[i] : m;
    }
    return m;
}

static void exchange(uint8_t *sbuf, uint8_t *rbuf, size_t size)
{
    int peer = 1 - rank;

    if (0 == rank) {
        MPI_Send(sbuf, (int) size, MPI_BYTE, peer, TAG_LAT, MPI_COMM_WORLD);
        MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, TAG_LAT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, TAG_LAT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sbuf, (int) size, MPI_BYTE, peer, TAG_LAT, MPI_COMM_WORLD);
    }
}

/* The iterations run in BATCHES batches and the fastest batch is
 * reported: on a shared machine a batch that lost the CPU to another
 * process measures the scheduler, not the transport. A cost paid on every
 * message or every n-th message still shows in every batch. */
static double latency_us(uint8_t *sbuf, uint8_t *rbuf, size_t size, int iters, int warmup)
{
    int per = iters / BATCHES > 0 ? iters / BATCHES : 1;
    double t[BATCHES];

    for (int i = 0; i < warmup; i++) {
        exchange(sbuf, rbuf, size);
    }
    for (int b = 0; b < BATCHES; b++) {
        double t0 = MPI_Wtime();

        for (int i = 0; i < per; i++) {
            exchange(sbuf, rbuf, size);
        }
        t[b] = (MPI_Wtime() - t0) * 1e6 / (2.0 * per);
    }
    return best(t, BATCHES);
}

/* Each window (sends plus the acknowledgement) is timed alone and the
 * fastest window is reported, for the same reason as above. */
static double bandwidth_MBps(uint8_t *sbuf, uint8_t **rbufs, size_t size, int window, int loops,
                             int warmup)
{
    int peer = 1 - rank;
    MPI_Request reqs[WINDOW];
    double *t = xmalloc(sizeof(double) * loops), fastest;

    for (int l = 0; l < warmup + loops; l++) {
        double t0 = MPI_Wtime();

        if (0 == rank) {
            /* Sends only read the buffer, so one buffer serves the window. */
            for (int w = 0; w < window; w++) {
                MPI_Isend(sbuf, (int) size, MPI_BYTE, peer, TAG_BW, MPI_COMM_WORLD, &reqs[w]);
            }
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int w = 0; w < window; w++) {
                MPI_Irecv(rbufs[w], (int) size, MPI_BYTE, peer, TAG_BW, MPI_COMM_WORLD, &reqs[w]);
            }
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD);
        }
        if (l >= warmup) {
            t[l - warmup] = MPI_Wtime() - t0;
        }
    }
    fastest = best(t, loops);
    free(t);
    return (double) size * window / fastest / 1e6;
}

static int clamp(size_t v, int lo, int hi)
{
    return v < (size_t) lo ? lo : (v > (size_t) hi ? hi : (int) v);
}

int main(int argc, char **argv)
{
    size_t max = MAX_SIZE_DEFAULT;
    int quick = 0, nranks, opt;
    uint8_t *sbuf, *region, *rbufs[WINDOW];
    size_t region_len;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    while ((opt = getopt(argc, argv, "qm:")) != -1) {
        switch (opt) {
        case 'q':
            quick = 1;
            break;
        case 'm':
            max = (size_t) strtoull(optarg, NULL, 0);
            break;
        default:
            if (0 == rank) {
                fprintf(stderr, "usage: pingpong [-q] [-m max_bytes]\n");
            }
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (nranks < 2) {
        if (0 == rank) {
            fprintf(stderr, "pingpong: needs 2 ranks\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* One region holds the receive buffers of a window side by side. */
    region_len = max > WINDOW_BYTES_MAX ? max : WINDOW_BYTES_MAX;
    sbuf = xmalloc(max);
    region = xmalloc(region_len);
    memset(region, 0, region_len);

    if (0 == rank) {
        printf("size,latency_us,bandwidth_MBps\n");
        fflush(stdout);
    }
    for (size_t size = 0; size <= max; size = size ? size * 2 : 1) {
        /* Iteration counts scale down with size: about the same number of
         * bytes per size, within bounds. */
        size_t s = size ? size : 1;
        int lat_iters = quick ? clamp(((size_t) 4 << 20) / s, BATCHES, 250)
                              : clamp(((size_t) 64 << 20) / s, 2 * BATCHES, 2000);
        int window = clamp(region_len / s, 1, WINDOW);
        int loops = quick ? clamp(((size_t) 16 << 20) / (s * window), 3, 20)
                          : clamp(((size_t) 256 << 20) / (s * window), 5, 100);
        double lat = 0.0, bw = 0.0;

        for (int w = 0; w < window; w++) {
            rbufs[w] = region + (size_t) w * size;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank < 2) {
            verify(sbuf, rbufs[0], size);
            lat = latency_us(sbuf, rbufs[0], size, lat_iters, lat_iters / 10 + 2);
            if (size > 0) {
                bw = bandwidth_MBps(sbuf, rbufs, size, window, loops, 1);
            }
        }
        if (0 == rank) {
            printf("%zu,%.3f,%.2f\n", size, lat, bw);
            fflush(stdout);
        }
    }

    free(region);
    free(sbuf);
    MPI_Finalize();
    return 0;
}
