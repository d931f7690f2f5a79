/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * bip_provider.h: the ops table every provider of the BIP device API
 * fills (shm: bip_shm.c through bip_provider.c's adapters; ofi:
 * bip_ofi.c). bip_provider.c owns the device the protocol sees and calls
 * the provider of each peer through this table. Handles are the
 * provider's own (void *): one provider never sees another's.
 */

#ifndef BIP_PROVIDER_H
#define BIP_PROVIDER_H

#include "bip_device.h"

typedef struct bip_ops {
    const char *name;
    int (*open)(const bip_dev_params_t *params, void **dev);
    void (*close)(void *dev);
    int (*probe_large)(void *dev);
    int (*unlink_when_connected)(void *dev);
    int (*address)(void *dev, void *buf, size_t *len);
    int (*peer_connect)(void *dev, const bip_peer_info_t *info, void **peer);
    void (*peer_disconnect)(void *peer);
    int (*peer_alive)(void *peer);
    void (*peer_lost)(void *peer); /* optional: the peer is gone, stop waiting for it */
    void (*set_sole_sender)(void *peer);
    void (*set_queue_sole_sender)(void *dev);
    int (*ssend_reserve)(void *peer, void **buf);
    int (*ssend_publish)(void *peer, uint32_t len);
    /* optional (NULL: -ENOTSUP): a message sent in place, and the
     * reaping of finished ones on the provider's device */
    int (*ssend_gather)(void *peer, const void *head, uint32_t head_len, const struct iovec *iov,
                        int iovcnt, void *cookie);
    int (*ssend_reap)(void *dev, void **cookie, int *status);
    int (*srecv_peek)(void *dev, const void **msg, uint32_t *len, uint32_t *src);
    void (*srecv_release)(void *dev);
    int (*post_recv)(void *dev, void *buf, size_t len, uint32_t *handle);
    long (*recv_test)(void *dev, uint32_t handle);
    void (*recv_unpost)(void *dev, uint32_t handle);
    int (*send_large)(void *peer, uint32_t handle, size_t offset, const struct iovec *iov,
                      int iovcnt, size_t len);
    int (*read_large)(void *peer, void *dst, uint64_t src, const bip_rkey_t *key, size_t len);
    /* asynchronous read (NULL: read_large, done within the call) and the
     * reaping of finished ones on the provider's device (NULL: none) */
    int (*read_start)(void *peer, void *dst, uint64_t src, const bip_rkey_t *key, size_t len,
                      void *cookie);
    int (*read_reap)(void *dev, void **cookie, int *status);
    int (*mem_register)(void *dev, void *addr, size_t len, bip_rkey_t *key, void **reg);
    void (*mem_deregister)(void *dev, void *reg);
    void *(*peer_dev)(void *peer); /* the provider device a peer belongs to */
    /* what the provider runs on, for diagnostics (NULL: nothing to say) */
    const char *(*fabric)(const void *dev);
} bip_ops_t;

extern const bip_ops_t bip_shm_ops;
#ifdef TC_HAVE_BIP_OFI
extern const bip_ops_t bip_ofi_ops;
/* the check of one message of the multi-receive buffer (got bytes at
 * buf, from the wire): 0 and the protocol's message, or -EPROTO */
int bip_ofi_msg_check(const void *buf, size_t got, uint32_t slot_size, const void **msg,
                      uint32_t *len, uint32_t *src);
#endif

#endif /* BIP_PROVIDER_H */
