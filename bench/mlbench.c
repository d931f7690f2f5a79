/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * mlbench.c: multi-link experiments between hosts (bench/multilink):
 *
 *   stream   rank 0 streams patterned messages to rank 1 for -t seconds,
 *            a window of -w nonblocking sends of -s bytes at a time; rank 1
 *            checks every byte and counts the bytes received per -b ms
 *            interval (wall clock, so that the interval of a network cut
 *            made by a script can be placed on the same axis). Prints
 *            "bin,time_s,MBps" lines (time = CLOCK_REALTIME of the bin's
 *            start), then a summary: total MB/s, the longest gap between
 *            two received messages, and the number of corrupt messages;
 *            every gap over 200 ms as "gap,start_s,ms" as it happens.
 *            Each rank prints the processor time it took during the
 *            stream: "cpu,rank=R,user_s=U,sys_s=S,wall_s=W".
 *   pingpong rank 0 sends -s bytes to rank 1 and waits for them back, -n
 *            times; prints the median, 99th percentile and maximum round
 *            trip in us, and checks the data of every round trip.
 *   farm     rank 0 hands -n tasks of -s bytes to the other ranks, -w
 *            outstanding per worker (each slot its own tag); a worker
 *            answers a task with a result of the same size computed from
 *            it; rank 0 checks every result. Prints tasks per second.
 *
 * Every mode ends with "errors=N" (N corrupt messages or results); the
 * exit status is 1 when N > 0.
 */

#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define TAG_DATA 1
#define TAG_STOP 2
#define TAG_PING 3
#define TAG_TASK 100 /* + slot */
#define TAG_DONE 99

static double mlbench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* word i of message seq */
static uint32_t mlbench_word(uint64_t seq, size_t i)
{
    return (uint32_t) (seq * 2654435761u) ^ (uint32_t) (i * 40503u + 7u);
}

static void mlbench_fill(uint32_t *buf, size_t words, uint64_t seq)
{
    for (size_t i = 0; i < words; ++i) {
        buf[i] = mlbench_word(seq, i);
    }
}

/* 0 when words [from, words) of buf are those of message seq */
static int mlbench_check_from(const uint32_t *buf, size_t from, size_t words, uint64_t seq)
{
    for (size_t i = from; i < words; ++i) {
        if (buf[i] != mlbench_word(seq, i)) {
            return 1;
        }
    }
    return 0;
}

/* 0 when buf holds message seq */
static int mlbench_check(const uint32_t *buf, size_t words, uint64_t seq)
{
    for (size_t i = 0; i < words; ++i) {
        if (buf[i] != mlbench_word(seq, i)) {
            return 1;
        }
    }
    return 0;
}

/* user and system seconds of this process (every thread) */
static void mlbench_cpu(double *user, double *sys)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *user = (double) ru.ru_utime.tv_sec + (double) ru.ru_utime.tv_usec * 1e-6;
    *sys = (double) ru.ru_stime.tv_sec + (double) ru.ru_stime.tv_usec * 1e-6;
}

static int mlbench_cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* The sequence number travels in the first word of a message as well, so
 * the receiver checks against what the sender meant. */
static long mlbench_stream(int rank, size_t size, int window, double secs, int bin_ms)
{
    size_t words = size / 4;
    uint32_t *bufs = malloc((size_t) window * words * 4);
    MPI_Request *req = malloc((size_t) window * sizeof(MPI_Request));
    long errors = 0;
    double u0, s0, u1, s1, w0;

    if (NULL == bufs || NULL == req || words < 2) {
        fprintf(stderr, "mlbench: no memory or size < 8\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mlbench_cpu(&u0, &s0);
    w0 = mlbench_now();
    if (0 == rank) {
        uint64_t seq = 0;
        double end = mlbench_now() + secs;
        int stop = 0;
        while (!stop) {
            for (int w = 0; w < window; ++w) {
                uint32_t *b = bufs + (size_t) w * words;
                mlbench_fill(b, words, seq);
                b[0] = (uint32_t) seq;
                ++seq;
                MPI_Isend(b, (int) size, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &req[w]);
            }
            MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
            stop = mlbench_now() >= end;
        }
        MPI_Send(&seq, 8, MPI_BYTE, 1, TAG_STOP, MPI_COMM_WORLD);
    } else if (1 == rank) {
        size_t maxbins = (size_t) (secs * 1000.0 / bin_ms) + 1000;
        double *bins = calloc(maxbins, sizeof(double));
        double t0, last, maxgap = 0, total = 0;
        uint64_t expect = 0, sent = 0;
        MPI_Status st;
        if (NULL == bins) {
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        t0 = last = mlbench_now();
        for (;;) {
            double t;
            size_t bin;
            MPI_Recv(bufs, (int) size, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            t = mlbench_now();
            if (TAG_STOP == st.MPI_TAG) {
                memcpy(&sent, bufs, 8);
                break;
            }
            /* word 0 carries the sequence; the rest is the pattern */
            if (bufs[0] != (uint32_t) expect || mlbench_check_from(bufs, 1, words, expect)) {
                ++errors;
            }
            ++expect;
            total += (double) size;
            if (t - last > maxgap) {
                maxgap = t - last;
            }
            if (t - last > 0.2) {
                printf("gap,%.3f,%.1f\n", last, (t - last) * 1000.0);
            }
            last = t;
            bin = (size_t) ((t - t0) * 1000.0 / bin_ms);
            if (bin < maxbins) {
                bins[bin] += (double) size;
            }
        }
        if (sent != expect) {
            fprintf(stderr, "mlbench: sent %llu messages, received %llu\n",
                    (unsigned long long) sent, (unsigned long long) expect);
            ++errors;
        }
        size_t nb = (size_t) ((last - t0) * 1000.0 / bin_ms) + 1;
        for (size_t b = 0; b < nb && b < maxbins; ++b) {
            printf("bin,%.3f,%.3f\n", t0 + (double) b * bin_ms / 1000.0,
                   bins[b] / 1e6 / (bin_ms / 1000.0));
        }
        printf("stream,size=%zu,messages=%llu,MBps=%.3f,maxgap_ms=%.1f\n", size,
               (unsigned long long) expect, total / 1e6 / (last - t0), maxgap * 1000.0);
        free(bins);
    }
    mlbench_cpu(&u1, &s1);
    if (rank < 2) {
        printf("cpu,rank=%d,user_s=%.3f,sys_s=%.3f,wall_s=%.3f\n", rank, u1 - u0, s1 - s0,
               mlbench_now() - w0);
        fflush(stdout);
    }
    free(bufs);
    free(req);
    return errors;
}

static long mlbench_pingpong(int rank, size_t size, long iters)
{
    size_t words = size / 4 > 0 ? size / 4 : 1;
    uint32_t *buf = malloc(words * 4);
    double *rtt = malloc((size_t) iters * sizeof(double));
    long errors = 0;

    if (NULL == buf || NULL == rtt) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = 0; i < iters; ++i) {
        if (0 == rank) {
            double t = mlbench_now();
            mlbench_fill(buf, words, (uint64_t) i);
            MPI_Send(buf, (int) (words * 4), MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD);
            MPI_Recv(buf, (int) (words * 4), MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            rtt[i] = (mlbench_now() - t) * 1e6;
            errors += mlbench_check(buf, words, (uint64_t) i + 1);
        } else if (1 == rank) {
            MPI_Recv(buf, (int) (words * 4), MPI_BYTE, 0, TAG_PING, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            errors += mlbench_check(buf, words, (uint64_t) i);
            mlbench_fill(buf, words, (uint64_t) i + 1);
            MPI_Send(buf, (int) (words * 4), MPI_BYTE, 0, TAG_PING, MPI_COMM_WORLD);
        }
    }
    if (0 == rank) {
        qsort(rtt, (size_t) iters, sizeof(double), mlbench_cmp);
        printf("pingpong,size=%zu,iters=%ld,median_us=%.1f,p99_us=%.1f,max_us=%.1f\n", size, iters,
               rtt[iters / 2], rtt[(size_t) ((double) iters * 0.99)], rtt[iters - 1]);
    }
    free(buf);
    free(rtt);
    return errors;
}

/* The result of a task: its data transformed so that a wrong or stale
 * buffer cannot pass. */
static void mlbench_work(uint32_t *b, size_t words)
{
    for (size_t i = 0; i < words; ++i) {
        b[i] = b[i] * 3u + 1u;
    }
}

static long mlbench_farm(int rank, int nprocs, size_t size, long ntasks, int window)
{
    size_t words = size / 4 > 1 ? size / 4 : 2;
    long errors = 0;

    MPI_Barrier(MPI_COMM_WORLD);
    if (nprocs < 2) {
        return 0;
    }
    if (0 == rank) {
        int nw = nprocs - 1, nslots = nw * window;
        uint32_t *bufs = malloc((size_t) nslots * words * 4);
        long *task = malloc((size_t) nslots * sizeof(long));
        MPI_Request *req = malloc((size_t) nslots * sizeof(MPI_Request));
        long next = 0, done = 0;
        double t0 = mlbench_now(), t;
        if (NULL == bufs || NULL == task || NULL == req) {
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        /* slot s: worker 1 + s / window, tag TAG_TASK + s % window */
        for (int s = 0; s < nslots; ++s) {
            uint32_t *b = bufs + (size_t) s * words;
            int w = 1 + s / window, tag = TAG_TASK + s % window;
            req[s] = MPI_REQUEST_NULL;
            if (next < ntasks) {
                task[s] = next++;
                mlbench_fill(b, words, (uint64_t) task[s]);
                MPI_Send(b, (int) (words * 4), MPI_BYTE, w, tag, MPI_COMM_WORLD);
                MPI_Irecv(b, (int) (words * 4), MPI_BYTE, w, tag, MPI_COMM_WORLD, &req[s]);
            }
        }
        while (done < ntasks) {
            int s;
            MPI_Waitany(nslots, req, &s, MPI_STATUS_IGNORE);
            uint32_t *b = bufs + (size_t) s * words;
            int w = 1 + s / window, tag = TAG_TASK + s % window;
            for (size_t i = 0; i < words; ++i) {
                if (b[i] != mlbench_word((uint64_t) task[s], i) * 3u + 1u) {
                    ++errors;
                    break;
                }
            }
            ++done;
            if (next < ntasks) {
                task[s] = next++;
                mlbench_fill(b, words, (uint64_t) task[s]);
                MPI_Send(b, (int) (words * 4), MPI_BYTE, w, tag, MPI_COMM_WORLD);
                MPI_Irecv(b, (int) (words * 4), MPI_BYTE, w, tag, MPI_COMM_WORLD, &req[s]);
            }
        }
        t = mlbench_now() - t0;
        for (int w = 1; w < nprocs; ++w) {
            MPI_Send(NULL, 0, MPI_BYTE, w, TAG_DONE, MPI_COMM_WORLD);
        }
        printf("farm,workers=%d,window=%d,size=%zu,tasks=%ld,seconds=%.3f,tasks_per_s=%.1f\n", nw,
               window, size, ntasks, t, (double) ntasks / t);
        free(bufs);
        free(task);
        free(req);
    } else {
        uint32_t *b = malloc(words * 4);
        MPI_Status st;
        if (NULL == b) {
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (;;) {
            MPI_Recv(b, (int) (words * 4), MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (TAG_DONE == st.MPI_TAG) {
                break;
            }
            mlbench_work(b, words);
            MPI_Send(b, (int) (words * 4), MPI_BYTE, 0, st.MPI_TAG, MPI_COMM_WORLD);
        }
        free(b);
    }
    return errors;
}

int main(int argc, char **argv)
{
    int rank, nprocs, opt, window = 8, bin_ms = 100;
    size_t size = 0;
    long n = 0, errors = 0, all = 0;
    double secs = 10;
    const char *mode;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    while ((opt = getopt(argc, argv, "s:w:t:b:n:")) != -1) {
        switch (opt) {
        case 's':
            size = (size_t) strtoul(optarg, NULL, 0);
            break;
        case 'w':
            window = atoi(optarg);
            break;
        case 't':
            secs = atof(optarg);
            break;
        case 'b':
            bin_ms = atoi(optarg);
            break;
        case 'n':
            n = atol(optarg);
            break;
        default:
            break;
        }
    }
    mode = optind < argc ? argv[optind] : "stream";
    if (window < 1 || bin_ms < 1 || nprocs < 2) {
        if (0 == rank) {
            fprintf(stderr,
                    "usage: mlbench [-s B] [-w W] [-t S] [-b MS] [-n N] "
                    "stream|pingpong|farm (2+ ranks)\n");
        }
        MPI_Finalize();
        return 2;
    }
    if (0 == strcmp(mode, "stream")) {
        errors = mlbench_stream(rank, size ? size : 262144, window, secs, bin_ms);
    } else if (0 == strcmp(mode, "pingpong")) {
        errors = mlbench_pingpong(rank, size ? size : 64, n ? n : 10000);
    } else if (0 == strcmp(mode, "farm")) {
        errors =
            mlbench_farm(rank, nprocs, size ? size : 1024, n ? n : 20000, window > 0 ? window : 4);
    } else {
        if (0 == rank) {
            fprintf(stderr, "mlbench: unknown mode %s\n", mode);
        }
        MPI_Finalize();
        return 2;
    }
    MPI_Reduce(&errors, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("errors=%ld\n", all);
        fflush(stdout);
    }
    MPI_Finalize();
    return all > 0 ? 1 : 0;
}
