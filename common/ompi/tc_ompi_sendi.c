/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_sendi.c: the copy step of an immediate send (sendi): the upper
 * layer's header, then the payload taken from the convertor, into a slot
 * the transport has already reserved (btl_sci, btl_bip).
 */
#include "opal_config.h"

#include <string.h>
#include <sys/uio.h>

#include "opal/datatype/opal_convertor.h"

#include "tc_ompi.h"

void tc_ompi_sendi_copy(unsigned char *dst, const void *header, size_t header_size,
                        struct opal_convertor_t *convertor, size_t payload_size)
{
    memcpy(dst, header, header_size);
    if (payload_size) {
        if (OPAL_LIKELY(!opal_convertor_need_buffers(convertor))) {
            void *src;
            opal_convertor_get_current_pointer(convertor, &src);
            memcpy(dst + header_size, src, payload_size);
        } else {
            uint32_t iov_count = 1;
            struct iovec iov = {.iov_base = (IOVBASE_TYPE *) (dst + header_size),
                                .iov_len = payload_size};
            size_t max_data = payload_size;

            (void) opal_convertor_pack(convertor, &iov, &iov_count, &max_data);
        }
    }
}
