/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_pattern.h: the byte pattern the unit tests fill buffers with and
 * verify: it depends on the position and a seed and is not periodic in
 * small powers of two, so a shifted, truncated or mixed-up block shows;
 * and the pseudo-random numbers of the randomised and fuzz tests.
 */
#ifndef TEST_PATTERN_H
#define TEST_PATTERN_H

#include <stddef.h>
#include <stdint.h>

static inline unsigned char test_pattern_byte(size_t i, unsigned seed)
{
    return (unsigned char) (seed * 131u + i * 7u + (i >> 9));
}

static inline void test_pattern_fill(unsigned char *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; ++i) {
        buf[i] = test_pattern_byte(i, seed);
    }
}

/* 1 when buf holds the pattern of seed. */
static inline int test_pattern_check(const unsigned char *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; ++i) {
        if (buf[i] != test_pattern_byte(i, seed)) {
            return 0;
        }
    }
    return 1;
}

/* The randomised and fuzz tests' numbers: xorshift64 from a fixed seed,
 * so that a failing case repeats exactly from run to run. Define
 * TEST_RANDOM_SEED before the include for another sequence. */
#ifndef TEST_RANDOM_SEED
#define TEST_RANDOM_SEED 0x9e3779b97f4a7c15ULL
#endif
static uint64_t test_random_state = TEST_RANDOM_SEED;

static inline uint64_t test_rnd(void)
{
    test_random_state ^= test_random_state << 13;
    test_random_state ^= test_random_state >> 7;
    test_random_state ^= test_random_state << 17;
    return test_random_state;
}

#endif /* TEST_PATTERN_H */
