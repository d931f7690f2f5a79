/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bip_ofi.h: what the tests of btl_bip's ofi provider share
 * (test_bip_ofi, test_bip_ofi_jobs): the libfabric provider and interface
 * under test (BIP_TEST_OFI_PROVIDER, BIP_TEST_OFI_DOMAIN; loopback and
 * libfabric's tcp by default) and the connection of one device to
 * another's address. Include after <cmocka.h>.
 */
#ifndef TEST_BIP_OFI_H
#define TEST_BIP_OFI_H

#include <stdio.h>
#include <stdlib.h>

#include <rdma/fabric.h>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define TEST_UNDER_VALGRIND() RUNNING_ON_VALGRIND
#else
#define TEST_UNDER_VALGRIND() 0
#endif

#include "bip_device.h"

static inline const char *test_domain(void)
{
    const char *d = getenv("BIP_TEST_OFI_DOMAIN");

    return NULL != d ? d : "lo";
}

/* The libfabric provider under test: BIP_TEST_OFI_PROVIDER, else tcp
 * (the tcp provider's own endpoint, as the BTL takes it). Under valgrind
 * with libfabric before 1.18, whose own endpoint ("net") leaks an fi_info
 * per endpoint and the state of every refused connection (fixed in 1.18:
 * "prov/net: Fix memory leaks with RDM"), tcp;ofi_rxm: the leaks are
 * libfabric's, and the code under test is the same over both. */
static inline const char *test_provider(void)
{
    static int said;
    const char *p = getenv("BIP_TEST_OFI_PROVIDER");

    if (NULL != p && '\0' != p[0]) {
        return p;
    }
    if (TEST_UNDER_VALGRIND() && !FI_VERSION_GE(fi_version(), FI_VERSION(1, 18))) {
        if (!said) {
            said = 1;
            printf("under valgrind on libfabric %u.%u: over tcp;ofi_rxm (its own tcp endpoint "
                   "leaks inside libfabric; docs/btl_bip.md, section 8)\n",
                   FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
        }
        return "tcp;ofi_rxm";
    }
    return "tcp";
}

/* `from` connects to `to`'s address as the peer of stamp `to_stamp` */
static inline void test_bip_connect_to(bip_dev_t *from, bip_dev_t *to, uint32_t to_stamp,
                                       bip_peer_t **peer)
{
    unsigned char addr[BIP_ADDR_MAX];
    size_t len = 0;
    bip_peer_info_t info;

    assert_int_equal(bip_dev_address(to, addr, &len), 0);
    assert_true(len > 0 && len <= BIP_ADDR_MAX);
    info.rank = to_stamp;
    info.local_rank = -1;
    info.addr = addr;
    info.addrlen = len;
    assert_int_equal(bip_peer_connect_info(from, &info, peer), 0);
    assert_string_equal(bip_peer_provider(*peer), "ofi");
}

/* 1, after one line on stderr, when `rc` (a device's open) says there is
 * no usable provider */
static inline int test_bip_no_ofi(const char *test, int rc)
{
    if (0 != rc) {
        fprintf(stderr, "%s: no libfabric %s provider on %s (%s): skipped\n", test,
                test_provider(), test_domain(), strerror(-rc));
        return 1;
    }
    return 0;
}

#endif
