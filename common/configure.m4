# Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause
# common/configure.m4: the helper libraries the components link: the core
# (common/, no Open MPI) and the Open MPI glue (common/ompi). Always built;
# they need no optional library.

AC_CONFIG_FILES([common/Makefile common/ompi/Makefile])
TC_SUMMARY_ROW([common], [yes], [helper library (credits, rcache, shm, rings, hash)])
TC_SUMMARY_ROW([common/ompi], [yes], [Open MPI glue (btl selection, parameters, pack, errors, output, hooks)])
