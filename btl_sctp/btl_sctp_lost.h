/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_lost.h: word that a process died, from the runtime or from the
 * end of a TCP connection to it (tc_ompi_watch), under MPI fault tolerance
 * (btl_sctp_lost.c).
 */
#ifndef MCA_BTL_SCTP_LOST_H
#define MCA_BTL_SCTP_LOST_H

/* add_procs (outside the component's lock): watch every process of the job */
void mca_btl_sctp_lost_watch_start(void);
/* finalize (outside the component's lock): stop watching */
void mca_btl_sctp_lost_watch_stop(void);
/* progress, under the component's lock: fail the endpoint of each process
 * reported dead since the last call; the number failed */
int mca_btl_sctp_lost_progress(void);

#endif /* MCA_BTL_SCTP_LOST_H */
