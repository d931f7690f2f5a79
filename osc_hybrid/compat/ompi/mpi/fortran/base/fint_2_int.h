/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * fint_2_int.h: stand-in for an Open MPI header that ompi/op/op.h includes
 * but Debian's libopenmpi-dev does not ship. op.h only needs the scalar
 * conversion between int and MPI_Fint, which on every platform Open MPI
 * 4.1 supports here (MPI_Fint is int) is a cast.
 */

#ifndef OSC_HYBRID_COMPAT_FINT_2_INT_H
#define OSC_HYBRID_COMPAT_FINT_2_INT_H

#define OMPI_INT_2_FINT(a) ((MPI_Fint) (a))
#define OMPI_FINT_2_INT(a) ((int) (a))

#endif /* OSC_HYBRID_COMPAT_FINT_2_INT_H */
