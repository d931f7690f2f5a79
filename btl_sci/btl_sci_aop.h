/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sci_aop.h: the target side of btl_sci's emulated atomics: one
 * operation of the wire's MCA_BTL_SCI_AOP_* set applied to a 32- or 64-bit
 * word with a CPU atomic, without Open MPI (the unit tests call it).
 * MIN and MAX compare as signed integers, Open MPI's convention for
 * MPI_MIN/MPI_MAX on integer windows (vader's emulation does the same).
 */

#ifndef MCA_BTL_SCI_AOP_H
#define MCA_BTL_SCI_AOP_H

#include <stdbool.h>
#include <stdint.h>

#include "btl_sci_hdr.h"
#include "tc_atomic.h"

/* apply op with operand (and compare for CSWAP) to *p; returns the value
 * *p held before. T: the word's type, S: its signed twin. */
#define MCA_BTL_SCI_AOP_APPLY(T, S, p, op, operand, compare) \
    do {                                                     \
        T v_ = (T) (operand), o_, n_;                        \
        switch (op) {                                        \
        case MCA_BTL_SCI_AOP_ADD:                            \
            return tc_atomic_fetch_add(p, v_);               \
        case MCA_BTL_SCI_AOP_AND:                            \
            return tc_atomic_fetch_and(p, v_);               \
        case MCA_BTL_SCI_AOP_OR:                             \
            return tc_atomic_fetch_or(p, v_);                \
        case MCA_BTL_SCI_AOP_XOR:                            \
            return tc_atomic_fetch_xor(p, v_);               \
        case MCA_BTL_SCI_AOP_SWAP:                           \
            return tc_atomic_swap(p, v_);                    \
        case MCA_BTL_SCI_AOP_CSWAP:                          \
            o_ = (T) (compare);                              \
            (void) tc_atomic_cswap(p, &o_, v_);              \
            return o_;                                       \
        default:                                             \
            break;                                           \
        }                                                    \
        o_ = tc_atomic_load_acquire(p);                      \
        do {                                                 \
            switch (op) {                                    \
            case MCA_BTL_SCI_AOP_MIN:                        \
                n_ = (S) o_ < (S) v_ ? o_ : v_;              \
                break;                                       \
            case MCA_BTL_SCI_AOP_MAX:                        \
                n_ = (S) o_ > (S) v_ ? o_ : v_;              \
                break;                                       \
            case MCA_BTL_SCI_AOP_LAND:                       \
                n_ = (T) (o_ && v_);                         \
                break;                                       \
            case MCA_BTL_SCI_AOP_LOR:                        \
                n_ = (T) (o_ || v_);                         \
                break;                                       \
            default:                                         \
                n_ = (T) (!o_ != !v_);                       \
                break; /* LXOR */                            \
            }                                                \
        } while (!tc_atomic_cswap_weak(p, &o_, n_));         \
        return o_;                                           \
    } while (0)

static inline uint32_t mca_btl_sci_aop_apply32(uint32_t op, uint32_t *p, uint64_t operand,
                                               uint64_t compare)
{
    MCA_BTL_SCI_AOP_APPLY(uint32_t, int32_t, p, op, operand, compare);
}

static inline uint64_t mca_btl_sci_aop_apply64(uint32_t op, uint64_t *p, uint64_t operand,
                                               uint64_t compare)
{
    MCA_BTL_SCI_AOP_APPLY(uint64_t, int64_t, p, op, operand, compare);
}

/* is op one of the set (the caller refuses others) */
static inline bool mca_btl_sci_aop_valid(uint32_t op)
{
    return op >= MCA_BTL_SCI_AOP_ADD && op <= MCA_BTL_SCI_AOP_LXOR;
}

#endif /* MCA_BTL_SCI_AOP_H */
