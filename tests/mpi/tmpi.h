/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tmpi.h: helpers shared by the MPI test programs: byte patterns that
 * depend on position, rank and sequence number, their verification, and
 * the one-line result every program prints.
 */

#ifndef TMPI_H
#define TMPI_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

/* The sizes around every protocol threshold of the project's transports
 * (eager limits, ring slots, 64 KiB descriptors, pipeline fragments). */
extern const size_t tmpi_sizes[];
extern const int tmpi_nsizes;

/* Test name, set by tmpi_init and used in every message. */
extern const char *tmpi_name;
extern int tmpi_rank;
extern int tmpi_size;

void tmpi_init(int *argc, char ***argv, const char *name);
/* MPI_Init_thread with the required level; returns the level provided. */
int tmpi_init_thread(int *argc, char ***argv, const char *name, int required);

/* The expected byte at position pos of a buffer sent by rank src with
 * sequence number seq: not periodic in any power of two, so a shifted,
 * truncated or swapped block shows up. */
static inline uint8_t tmpi_byte(size_t pos, int src, uint32_t seq)
{
    uint32_t x = (uint32_t) pos * 2654435761u;
    x ^= (uint32_t) (pos >> 11) * 40503u;
    x += (uint32_t) src * 0x9e3779b9u + seq * 0x85ebca6bu;
    return (uint8_t) (x >> 24);
}

void tmpi_fill(void *buf, size_t len, int src, uint32_t seq);

/* Returns 0 when buf holds the pattern, else reports the first mismatch
 * (with what) and returns 1. */
int tmpi_check(const void *buf, size_t len, int src, uint32_t seq, const char *what);

/* Reports an error from this rank; counts towards the final result. */
void tmpi_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Count of errors seen on this rank so far. */
extern long tmpi_errors;

/* Checks that status holds the expected source, tag and byte count. */
int tmpi_check_status(const MPI_Status *st, int src, int tag, int count, const char *what);

/* Collects the errors of every rank, prints the one-line result on rank 0,
 * finalizes MPI and returns the process exit code. */
int tmpi_finish(const char *detail);

void *tmpi_malloc(size_t len);

#endif /* TMPI_H */
