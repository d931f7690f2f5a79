/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_sendi.c: the packing step of an immediate send (sendi) of
 * non-contiguous data (tc_ompi.h's inline tc_ompi_sendi_copy does the
 * rest: the upper layer's header, then contiguous payload, into a slot
 * the transport has already reserved; btl_sci, btl_bip, btl_via).
 */
#include "opal_config.h"

#include <string.h>
#include <sys/uio.h>

#include "opal/datatype/opal_convertor.h"

#include "tc_ompi.h"

void tc_ompi_sendi_pack(unsigned char *dst, struct opal_convertor_t *convertor, size_t payload_size)
{
    uint32_t iov_count = 1;
    struct iovec iov = {.iov_base = (IOVBASE_TYPE *) dst, .iov_len = payload_size};
    size_t max_data = payload_size;

    (void) opal_convertor_pack(convertor, &iov, &iov_count, &max_data);
}
