/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * tc_ompi_errno.c: errno values (as libtransports_common and the device
 * layers return them, negative) mapped onto OPAL_ERR_* codes, so that
 * every component reports a given failure with the same code.
 */
#include "opal_config.h"

#include <errno.h>

#include "opal/constants.h"

#include "tc_ompi.h"

int tc_ompi_errno_to_opal(int err)
{
    switch (err < 0 ? -err : err) {
    case 0:
        return OPAL_SUCCESS;
    case ENOMEM:
    case ENOBUFS:
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case EMFILE:
    case ENFILE:
        return OPAL_ERR_OUT_OF_RESOURCE;
    case EAGAIN:
    case EINTR:
        return OPAL_ERR_TEMP_OUT_OF_RESOURCE;
    case EBUSY:
        return OPAL_ERR_RESOURCE_BUSY;
    case EINVAL:
    case EFAULT:
    case EBADF:
        return OPAL_ERR_BAD_PARAM;
    case EMSGSIZE:
    case E2BIG:
    case ERANGE:
    case EOVERFLOW:
        return OPAL_ERR_VALUE_OUT_OF_BOUNDS;
    case EACCES:
    case EPERM:
    case EROFS:
        return OPAL_ERR_PERM;
    case ENOENT:
        return OPAL_ERR_NOT_FOUND;
    case EEXIST:
        return OPAL_EXISTS;
    case ENOTSUP:
    case ENOSYS:
    case EAFNOSUPPORT:
    case EPROTONOSUPPORT:
        return OPAL_ERR_NOT_SUPPORTED;
    case ETIMEDOUT:
        return OPAL_ERR_TIMEOUT;
    case ECONNREFUSED:
    case ECONNRESET:
    case ECONNABORTED:
    case EPIPE:
    case ENOTCONN:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ENETDOWN:
    case ESRCH:
        return OPAL_ERR_UNREACH;
    case EPROTO:
    case EBADMSG:
        return OPAL_ERR_UNPACK_FAILURE;
    default:
        return OPAL_ERROR;
    }
}
