/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_pattern.h: the byte pattern the unit tests fill buffers with and
 * verify: it depends on the position and a seed and is not periodic in
 * small powers of two, so a shifted, truncated or mixed-up block shows.
 */
#ifndef TEST_PATTERN_H
#define TEST_PATTERN_H

#include <stddef.h>

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

#endif /* TEST_PATTERN_H */
