/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * t_multihome.c: traffic that must survive the loss of a network path.
 *
 * Rank 0 sends patterned messages (8 B to 1 MiB) to rank 1, which checks
 * every byte and answers with the message's sequence number. When the file
 * named by argv[1] appears (the test script has cut a path), rank 0 runs
 * another argv[2] round trips and stops. Rank 0 creates argv[1].run once
 * traffic flows, so the script knows when to cut.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned char pat(long seq, size_t i)
{
    return (unsigned char) (seq * 31 + (long) i * 7 + (long) (i >> 10));
}

int main(int argc, char **argv)
{
    const size_t sizes[] = {8, 1000, 4096, 65536, 200000, 1 << 20};
    const int nsizes = sizeof(sizes) / sizeof(sizes[0]);
    unsigned char *buf = malloc(1 << 20);
    int rank, errors = 0;
    long seq = 0, after_cut = -1, extra;
    char runfile[4096];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3 || NULL == buf) {
        fprintf(stderr, "usage: t_multihome CUTFILE EXTRA_ROUNDS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    extra = atol(argv[2]);
    snprintf(runfile, sizeof(runfile), "%s.run", argv[1]);

    for (;;) {
        long hdr[2]; /* seq, stop */
        size_t len = sizes[seq % nsizes];
        if (0 == rank) {
            long ack;
            int stop = 0;
            if (after_cut < 0 && 0 == access(argv[1], F_OK)) {
                after_cut = seq;
                printf("t_multihome: path cut seen at message %ld\n", seq);
                fflush(stdout);
            }
            if (after_cut >= 0 && seq >= after_cut + extra) {
                stop = 1;
            }
            if (seq > 2000000) {
                fprintf(stderr, "t_multihome: the cut never came\n");
                stop = 1;
                errors++;
            }
            hdr[0] = seq;
            hdr[1] = stop;
            for (size_t i = 0; i < len; ++i) {
                buf[i] = pat(seq, i);
            }
            MPI_Send(hdr, 2, MPI_LONG, 1, 1, MPI_COMM_WORLD);
            MPI_Send(buf, (int) len, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
            MPI_Recv(&ack, 1, MPI_LONG, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (ack != seq) {
                fprintf(stderr, "t_multihome: ack %ld for message %ld\n", ack, seq);
                errors++;
            }
            if (200 == seq) {
                FILE *f = fopen(runfile, "w");
                if (f) {
                    fclose(f);
                }
            }
            ++seq;
            if (stop) {
                break;
            }
        } else if (1 == rank) {
            long bad = 0;
            MPI_Recv(hdr, 2, MPI_LONG, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            len = sizes[hdr[0] % nsizes];
            MPI_Recv(buf, (int) len, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t i = 0; i < len; ++i) {
                if (buf[i] != pat(hdr[0], i)) {
                    bad++;
                }
            }
            if (bad || hdr[0] != seq) {
                fprintf(stderr, "t_multihome: message %ld (expected %ld): %ld bad bytes\n", hdr[0],
                        seq, bad);
                errors++;
            }
            MPI_Send(&hdr[0], 1, MPI_LONG, 0, 3, MPI_COMM_WORLD);
            ++seq;
            if (hdr[1]) {
                break;
            }
        } else {
            break;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("t_multihome: %ld messages, %ld after the cut, %d errors\n", seq,
               after_cut >= 0 ? seq - after_cut : 0, errors);
    }
    free(buf);
    MPI_Finalize();
    return errors ? 1 : 0;
}
