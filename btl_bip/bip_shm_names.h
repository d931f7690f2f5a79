/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * bip_shm_names.h: included first into bip_shm.c only (the Makefile's
 * -include): the shm provider keeps implementing the BIP device API
 * under its own names (bip_shm_*), which bip_provider.c puts in the shm
 * ops table; the API's own names belong to bip_provider.c, which picks
 * a provider per peer.
 */

#ifndef BIP_SHM_NAMES_H
#define BIP_SHM_NAMES_H

#define bip_dev bip_shm_dev
#define bip_peer bip_shm_peer
#define bip_open bip_shm_open
#define bip_close bip_shm_close
#define bip_provider_name bip_shm_provider_name
#define bip_probe_large bip_shm_probe_large
#define bip_unlink_when_connected bip_shm_unlink_when_connected
#define bip_peer_connect bip_shm_peer_connect
#define bip_peer_disconnect bip_shm_peer_disconnect
#define bip_peer_alive bip_shm_peer_alive
#define bip_peer_set_sole_sender bip_shm_peer_set_sole_sender
#define bip_srecv_set_sole_sender bip_shm_srecv_set_sole_sender
#define bip_ssend_reserve bip_shm_ssend_reserve
#define bip_ssend_publish bip_shm_ssend_publish
#define bip_srecv_peek bip_shm_srecv_peek
#define bip_srecv_release bip_shm_srecv_release
#define bip_post_recv bip_shm_post_recv
#define bip_recv_test bip_shm_recv_test
#define bip_recv_unpost bip_shm_recv_unpost
#define bip_send_large bip_shm_send_large
#define bip_read_large bip_shm_read_large
#define bip_dev_nslots bip_shm_dev_nslots
#define bip_dev_slot_size bip_shm_dev_slot_size

#endif /* BIP_SHM_NAMES_H */
