/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * bip_device.h: the BIP device API that the btl_bip protocol code calls.
 *
 * Shaped after BIP (Basic Interface for Parallelism, Myrinet):
 *   bip_open / bip_close           bip_init / bip_end
 *   bip_peer_connect               (BIP's static routing to node i)
 *   bip_ssend_reserve + _publish   bip_smallsend / bip_tsmallsend: a small
 *                                  message lands in the receiver's static
 *                                  receive queue (one per process, shared
 *                                  by every sender)
 *   bip_srecv_peek + _release      bip_smallrecv / bip_tsmallrecv
 *   bip_post_recv / bip_recv_test  bip_trecv (posted large receive, one per
 *                                  tag) / bip_recvprobe
 *   bip_send_large                 bip_tsend: a large send that only goes
 *                                  once the matching receive is posted
 * docs/btl_bip.md holds the table.
 *
 * Limits are reported as BIP reported them: a full queue is -EAGAIN (the
 * protocol above holds credits, so it treats that as a protocol error); a
 * post beyond max_posted receives is -EAGAIN (the protocol queues the
 * receive in its software FIFO).
 *
 * Providers (bip_provider.c): shm (same host: a shared segment and CMA)
 * and ofi (other hosts: libfabric, bip_ofi.c), each an ops table; a
 * device opens the ones params->provider asks for and every peer is
 * reached through one of them (bip_peer_connect_info).
 *
 * Errors: 0 or a negative errno (tc_common.h). No Open MPI header here:
 * the unit tests build the device alone.
 */

#ifndef BIP_DEVICE_H
#define BIP_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bip_dev bip_dev_t;   /* this process's device */
typedef struct bip_peer bip_peer_t; /* a connection to a peer's queue */
struct tc_mpring;

typedef struct bip_dev_params {
    const char *dir;         /* shm provider: where the queue file lives */
    const char *job_key;     /* names this job's files apart */
    uint32_t rank;           /* this process's node-local rank */
    uint32_t expected_peers; /* connections after which the file is unlinked */
    uint32_t nslots;         /* static receive queue: slots (power of two >= 2) */
    uint32_t slot_size;      /* bytes per slot */
    uint32_t max_posted;     /* posted large receives at a time (1..4096) */
    size_t frag_size;        /* bytes per fragment of a large send */
    /* provider choice (NULL: "shm", as before the ofi provider existed):
     * "shm" same-host peers only; "ofi" every peer over libfabric; "auto"
     * shm for same-host peers and ofi for the others (opened only when
     * remote_peers > 0) */
    const char *provider;
    const char *ofi_prov;   /* libfabric provider name (NULL: "tcp") */
    const char *ofi_domain; /* libfabric domain, e.g. an interface (NULL: first) */
    uint32_t stamp;         /* the sender rank ofi messages carry (job rank) */
    uint32_t remote_peers;  /* peers on other hosts */
    uint32_t ofi_timeout;   /* seconds a large transfer may wait for a peer
                               before it is reported gone (0: 60) */
    uint32_t credits;       /* N per peer (0: 64): the ofi queue holds the
                               N x remote_peers messages the credits allow */
    uint32_t ofi_slot_size; /* ofi: bytes of its largest message (0: slot_size) */
    size_t ofi_prefault;    /* ofi: bytes of the receive buffers written in at open
                               (tc_mem_prefault's budget; 0: none) */
    /* processes of other jobs (ofi only): the own jobid that ofi messages
     * carry, and the mapping of another job's sender (jobid, vpid) to
     * the stamp its messages are reported with (0, or the message is
     * dropped); NULL: messages of other jobs are dropped */
    uint32_t jobid;
    int (*resolve)(uint32_t jobid, uint32_t vpid, uint32_t *stamp);
    uint32_t other_jobs; /* ofi opened in auto mode for them too (> 0) */
} bip_dev_params_t;

/* how a peer is reached: its stamp (the src its messages report), its
 * node-local rank for shm (-1: another host) and its ofi address */
typedef struct bip_peer_info {
    uint32_t rank;
    int32_t local_rank;
    const void *addr;
    size_t addrlen;
} bip_peer_info_t;

/* a registration's key as the reading peer needs it (provider-opaque:
 * shm ignores it; ofi: the memory region's key and its base address) */
typedef struct bip_rkey {
    uint64_t key;
    uint64_t base;
} bip_rkey_t;

#define BIP_ADDR_MAX 128

/* --- device ------------------------------------------------------------- */
int bip_open(const bip_dev_params_t *params, bip_dev_t **dev);
/* unlink the file (if still there), unmap, free */
void bip_close(bip_dev_t *dev);
const char *bip_provider_name(void);
/* Is moving large data possible on this host (CMA)? 0 or -errno. */
int bip_probe_large(bip_dev_t *dev);
/* The queue file is removed once every expected peer connected: call now
 * and then (cheap); returns 1 once removed. */
int bip_unlink_when_connected(bip_dev_t *dev);

/* --- peers -------------------------------------------------------------- */
/* Map peer `rank`'s queue. -ENOENT: not created yet (try again later). */
int bip_peer_connect(bip_dev_t *dev, uint32_t rank, bip_peer_t **peer);
void bip_peer_disconnect(bip_peer_t *peer);
/* Connect through the provider that reaches the peer: shm when
 * info->local_rank >= 0 and shm is open, else ofi. -ENETUNREACH: no open
 * provider reaches it. */
int bip_peer_connect_info(bip_dev_t *dev, const bip_peer_info_t *info, bip_peer_t **peer);
/* this device's ofi address for the modex (*len 0: no ofi provider open);
 * buf holds BIP_ADDR_MAX bytes */
int bip_dev_address(bip_dev_t *dev, void *buf, size_t *len);
/* the provider a peer is reached by ("shm" or "ofi"), and the providers
 * the device opened ("shm", "ofi", "shm+ofi") */
const char *bip_peer_provider(const bip_peer_t *peer);
const char *bip_dev_providers(const bip_dev_t *dev);
/* the libfabric provider and domain the ofi provider opened (e.g.
 * "tcp/eth0", "net/eth0", "tcp;ofi_rxm/lo"), or "" without ofi */
const char *bip_dev_ofi_fabric(const bip_dev_t *dev);
/* 0 while the peer process lives, -ESRCH once it is gone */
int bip_peer_alive(bip_peer_t *peer);
/* The peer is gone for good (a process the runtime reports dead): from now
 * on bip_peer_alive says -ESRCH and a call waiting for room towards it
 * gives up. Safe from any thread; nothing for shm, whose sends never wait
 * for the peer. */
void bip_peer_lost(bip_peer_t *peer);

/* --- small messages: the static receive queue ---------------------------- */
/* Reserve the next slot of the peer's queue: -EAGAIN when full. Then write
 * up to slot_size bytes at *buf and publish. One reservation at a time
 * per peer handle. */
int bip_ssend_reserve(bip_peer_t *peer, void **buf);
int bip_ssend_publish(bip_peer_t *peer, uint32_t len);
/* A message to the peer's queue sent from the caller's memory: head_len
 * bytes at head (at most BIP_GATHER_HEAD_MAX, copied) then the iov
 * pieces (at most 2), sent in place; the receiver sees the same message
 * as reserve + publish would give it. 0: sent (the memory is free at
 * once); 1: in flight, the iov memory must stay until bip_ssend_reap
 * reports cookie; -ENOTSUP: the peer's provider cannot (use reserve +
 * publish); -EMSGSIZE (more than slot_size); -ESRCH (peer gone). Not
 * while a reservation to the peer is open. */
#define BIP_GATHER_HEAD_MAX 64
int bip_ssend_gather(bip_peer_t *peer, const void *head, uint32_t head_len, const struct iovec *iov,
                     int iovcnt, void *cookie);
/* One finished gathered send: 1 with its cookie and *status (0, or
 * -ESRCH: the peer failed or did not take it within the timeout), 0 when
 * none finished. Reads the completion queue; thread safe. */
int bip_ssend_reap(bip_dev_t *dev, void **cookie, int *status);
/* Sole-sender mode (docs/common.md, tc_mpring). Promise that this handle
 * is the only sender into the peer's queue for the rest of its life (two processes on the node; threads serialized by
 * the caller), and that the caller's credits never let it write a slot
 * the receiver has not consumed: the reservation then claims its slot
 * with plain stores and without reading the slot, and a full queue is no
 * longer reported. The receiver must call bip_srecv_set_sole_sender.
 * Call before the first reserve. */
void bip_peer_set_sole_sender(bip_peer_t *peer);
/* This process's queue has exactly one sender, which uses
 * bip_peer_set_sole_sender: bip_srecv_release frees a slot without
 * writing it. Call before the first message arrives. */
void bip_srecv_set_sole_sender(bip_dev_t *dev);

/* The shm receive queue when it is the device's only queue (NULL when
 * ofi is open): the protocol's progress may peek and release it itself
 * (tc_mpring_peek, tc_mpring_release: the empty poll is a receiver's
 * inner loop) instead of bip_srecv_peek / _release; the slot's tag is
 * then the sender's shm stamp, which *map (*map_len entries, written
 * before that sender connects) turns into its job rank. */
struct tc_mpring *bip_dev_shm_only_queue(bip_dev_t *dev, const uint32_t **map, uint32_t *map_len);
/* The same whatever else is open (NULL: shm not open), for a protocol
 * that reads the ofi queue itself only now and then while no process
 * reaches it (ofi opened for other jobs on one host): a message it then
 * peeks with bip_srecv_peek_other is released with bip_srecv_release. */
struct tc_mpring *bip_dev_shm_queue(bip_dev_t *dev, const uint32_t **map, uint32_t *map_len);
/* bip_srecv_peek of the queues other than shm's (-EAGAIN: none) */
int bip_srecv_peek_other(bip_dev_t *dev, const void **msg, uint32_t *len, uint32_t *src);

/* Next message of our queue, in place: 0, -EAGAIN (empty) or -EPROTO
 * (corrupt slot). *src is the sender's rank as the device stamped it
 * (validate it against your peers). Valid until bip_srecv_release. */
int bip_srecv_peek(bip_dev_t *dev, const void **msg, uint32_t *len, uint32_t *src);
void bip_srecv_release(bip_dev_t *dev);

/* --- large messages: posted receives and large sends ---------------------- */
/* Publish buf[0..len) as a posted receive. *handle names it to the sender
 * (index and generation). -EAGAIN when max_posted are posted already. */
int bip_post_recv(bip_dev_t *dev, void *buf, size_t len, uint32_t *handle);
/* Bytes that arrived so far into a posted receive (== len: complete), or
 * -EINVAL for a handle not posted. */
long bip_recv_test(bip_dev_t *dev, uint32_t handle);
/* Withdraw a posted receive (complete or not). */
void bip_recv_unpost(bip_dev_t *dev, uint32_t handle);
/* The same for a receive that one peer will fill: posted at the provider
 * that reaches it (the handle is that provider's). */
int bip_peer_post_recv(bip_peer_t *peer, void *buf, size_t len, uint32_t *handle);
long bip_peer_recv_test(bip_peer_t *peer, uint32_t handle);
void bip_peer_recv_unpost(bip_peer_t *peer, uint32_t handle);

/* Write len bytes (gathered from iov) into the peer's posted receive
 * `handle`, at offset, in fragments of frag_size bytes; each fragment is
 * published to the receiver as it lands. Checked against the published
 * receive: -EINVAL (not posted / stale handle), -ERANGE (outside it),
 * -ESRCH (peer gone), -EFAULT (bad local memory). */
int bip_send_large(bip_peer_t *peer, uint32_t handle, size_t offset, const struct iovec *iov,
                   int iovcnt, size_t len);

/* Receiver-driven large transfer (no BIP counterpart: a DMA read of the
 * sender's memory, as a NIC with remote read would do it): copy len bytes
 * at the peer's address src into dst, in fragments of frag_size. -ESRCH
 * (peer gone), -EFAULT (an address outside either process's memory). */
int bip_read_large(bip_peer_t *peer, void *dst, uint64_t src, size_t len);
/* The same with the key of the peer's registration of src (ofi: the peer
 * registered it with bip_mem_register; shm ignores the key). */
int bip_read_large_key(bip_peer_t *peer, void *dst, uint64_t src, const bip_rkey_t *key,
                       size_t len);
/* The same, asynchronous: 0 when the read completed within the call
 * (shm: CMA), 1 when it is in flight (bip_read_reap reports it with
 * cookie), or -errno as bip_read_large_key. dst must stay valid until
 * it is reaped. */
int bip_read_start(bip_peer_t *peer, void *dst, uint64_t src, const bip_rkey_t *key, size_t len,
                   void *cookie);
/* One finished asynchronous read: 1 with its cookie and *status (0,
 * -ESRCH: peer gone or no answer within the timeout, -EFAULT: refused),
 * 0 when none finished. Reads the completion queue; thread safe. */
int bip_read_reap(bip_dev_t *dev, void **cookie, int *status);
/* Does bip_read_large (no key: any address of the peer) work on the
 * peer's provider? 1 (shm: CMA) or 0 (ofi: only registrations, by
 * bip_read_large_key). */
int bip_peer_can_read(const bip_peer_t *peer);
/* Register addr[0..len) for reads by peers of provider ofi: *key for the
 * reader, *reg to deregister. Without ofi: key 0, *reg NULL, 0. */
int bip_mem_register(bip_dev_t *dev, void *addr, size_t len, bip_rkey_t *key, void **reg);
void bip_mem_deregister(bip_dev_t *dev, void *reg);

/* geometry as created (for the modex) */
uint32_t bip_dev_nslots(const bip_dev_t *dev);
uint32_t bip_dev_slot_size(const bip_dev_t *dev);

#ifdef __cplusplus
}
#endif

#endif /* BIP_DEVICE_H */
