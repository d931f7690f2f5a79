/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_swf_send.c: descriptors and sends. Every fragment becomes one
 * SockModel SEND, written to the simulator before the call returns, so
 * sends always complete inline (return 1) and nothing is queued here.
 */

#include "opal_config.h"

#include <string.h>
#include <sys/uio.h>

#include "opal/datatype/opal_convertor.h"
#include "opal/util/output.h"

#include "btl_swf.h"
#include "btl_swf_frag.h"
#include "btl_swf_hdr.h"

mca_btl_base_descriptor_t *mca_btl_swf_alloc(struct mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *endpoint,
                                             uint8_t order, size_t size, uint32_t flags)
{
    mca_btl_swf_frag_t *frag;

    (void) btl;
    (void) order;
    frag = mca_btl_swf_frag_get(size);
    if (OPAL_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    frag->endpoint = endpoint;
    frag->base.des_flags = flags;
    return &frag->base;
}

int mca_btl_swf_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    (void) btl;
    mca_btl_swf_frag_return((mca_btl_swf_frag_t *) des);
    return OPAL_SUCCESS;
}

mca_btl_base_descriptor_t *mca_btl_swf_prepare_src(struct mca_btl_base_module_t *btl,
                                                   struct mca_btl_base_endpoint_t *endpoint,
                                                   struct opal_convertor_t *convertor,
                                                   uint8_t order, size_t reserve, size_t *size,
                                                   uint32_t flags)
{
    mca_btl_swf_frag_t *frag;
    size_t max_data = tc_ompi_payload(reserve, *size, btl->btl_max_send_size);

    (void) order;
    frag = mca_btl_swf_frag_get(reserve + max_data);
    if (OPAL_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    if (OPAL_UNLIKELY(OPAL_SUCCESS !=
                      tc_ompi_pack(convertor,
                                   (unsigned char *) frag->segment.seg_addr.pval + reserve,
                                   &max_data, NULL))) {
        mca_btl_swf_frag_return(frag);
        return NULL;
    }
    *size = max_data;
    frag->segment.seg_len = reserve + max_data;
    frag->endpoint = endpoint;
    frag->base.des_flags = flags;
    return &frag->base;
}

/* Write one SockModel SEND; a failure ends the job (the simulator is
 * gone or broken, nothing can be delivered any more). */
static int swf_send_iov(mca_btl_swf_module_t *m, struct mca_btl_base_endpoint_t *endpoint,
                        mca_btl_base_tag_t tag, struct iovec *iov, int iovcnt, size_t len)
{
    int rc;

    /* the command exchange, the failure flag and the counters are all
     * under the lock: any thread may send */
    OPAL_THREAD_LOCK(&m->lock);
    if (OPAL_UNLIKELY(m->failed || endpoint->failed)) {
        /* the simulator is gone, or this peer: the caller keeps its
         * descriptor, ob1 fails the request (MPI_ERR_PROC_FAILED under
         * ULFM) rather than queue it */
        OPAL_THREAD_UNLOCK(&m->lock);
        return TC_OMPI_LOST_STATUS;
    }
    rc = tc_sockmodel_conn_send(&m->conn, endpoint->node, mca_btl_swf_tag_encode(tag), iov, iovcnt,
                                (uint32_t) len);
    if (OPAL_UNLIKELY(0 != rc)) {
        mca_btl_swf_fatal(m, "sending a message");
        OPAL_THREAD_UNLOCK(&m->lock);
        return OPAL_ERR_UNREACH;
    }
    m->frags_sent++;
    m->bytes_sent += len;
    OPAL_THREAD_UNLOCK(&m->lock);
    return OPAL_SUCCESS;
}

int mca_btl_swf_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag)
{
    mca_btl_swf_module_t *m = (mca_btl_swf_module_t *) btl;
    mca_btl_swf_frag_t *frag = (mca_btl_swf_frag_t *) descriptor;
    struct iovec iov;
    int rc, btl_ownership;

    iov.iov_base = frag->segment.seg_addr.pval;
    iov.iov_len = frag->segment.seg_len;
    rc = swf_send_iov(m, endpoint, tag, &iov, 1, frag->segment.seg_len);
    if (OPAL_UNLIKELY(OPAL_SUCCESS != rc)) {
        return rc;
    }
    /* the simulator copied the bytes: the send is complete */
    btl_ownership = (descriptor->des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
    if (descriptor->des_flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK) {
        descriptor->des_cbfunc(btl, endpoint, descriptor, OPAL_SUCCESS);
    }
    if (btl_ownership) {
        mca_btl_swf_frag_return(frag);
    }
    return 1;
}

int mca_btl_swf_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      struct opal_convertor_t *convertor, void *header, size_t header_size,
                      size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                      mca_btl_base_descriptor_t **descriptor)
{
    mca_btl_swf_module_t *m = (mca_btl_swf_module_t *) btl;
    size_t total = header_size + payload_size;
    struct iovec iov[2];
    void *data_ptr = NULL;
    int rc;

    (void) order;
    (void) flags;
    /* never a descriptor: Open MPI 5.0's ob1 reads *descriptor after every
     * failed sendi (a control message to a dead peer under ULFM) and
     * packs into it unless it is NULL */
    if (NULL != descriptor) {
        *descriptor = NULL;
    }
    if (OPAL_UNLIKELY(total > btl->btl_eager_limit)) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    iov[0].iov_base = header;
    iov[0].iov_len = header_size;
    if (0 == payload_size) {
        return swf_send_iov(m, endpoint, tag, iov, 1, total);
    }
    if (!opal_convertor_need_buffers(convertor)) {
        /* contiguous: the socket write gathers straight from the user buffer */
        opal_convertor_get_current_pointer(convertor, &data_ptr);
        iov[1].iov_base = data_ptr;
        iov[1].iov_len = payload_size;
        return swf_send_iov(m, endpoint, tag, iov, 2, total);
    } else {
        mca_btl_swf_frag_t *frag = mca_btl_swf_frag_get(total);
        size_t max_data = payload_size;

        if (OPAL_UNLIKELY(NULL == frag)) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        memcpy(frag->segment.seg_addr.pval, header, header_size);
        rc = tc_ompi_pack(convertor, (unsigned char *) frag->segment.seg_addr.pval + header_size,
                          &max_data, NULL);
        if (OPAL_UNLIKELY(OPAL_SUCCESS != rc || max_data != payload_size)) {
            mca_btl_swf_frag_return(frag);
            return OPAL_ERROR;
        }
        iov[0].iov_base = frag->segment.seg_addr.pval;
        iov[0].iov_len = total;
        rc = swf_send_iov(m, endpoint, tag, iov, 1, total);
        mca_btl_swf_frag_return(frag);
        return rc;
    }
}
