/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_pack.c: the pack step of every prepare_src and sendi: the
 * convertor's data into a fragment, or (in place) a pointer to the user's
 * contiguous data.
 */
#include "opal_config.h"

#include <sys/uio.h>

#include "opal/constants.h"
#include "opal/datatype/opal_convertor.h"

#include "tc_ompi.h"

int tc_ompi_pack(struct opal_convertor_t *convertor, void *dst, size_t *size, void **inplace)
{
    struct iovec iov;
    uint32_t iov_count = 1;
    size_t max_data = *size;

    /* iov_base NULL asks the convertor for a pointer into the user's
     * buffer instead of a copy */
    iov.iov_base = dst;
    iov.iov_len = max_data;
    if (OPAL_UNLIKELY(opal_convertor_pack(convertor, &iov, &iov_count, &max_data) < 0)) {
        return OPAL_ERROR;
    }
    *size = max_data;
    if (NULL != inplace) {
        *inplace = iov.iov_base;
    }
    return OPAL_SUCCESS;
}
