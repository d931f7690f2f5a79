/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_swf_hdr.h: what btl_swf puts on the SockModel wire.
 *
 * A fragment is one SockModel SEND: destination = the peer's simulated
 * node (its MPI rank), payload = the fragment's bytes exactly as ob1 laid
 * them out, tag = a 24-bit marker plus ob1's 8-bit active-message tag.
 * The marker lets the receiver refuse messages that some other SockModel
 * client sent to its node. There is no header inside the payload: the
 * simulator already carries source, tag and length.
 *
 * The modex publishes, in network byte order, the node number and the
 * simulation's identity (a hash of its job token, or of its address when
 * it has none): a process of another job is reached only when it is a
 * node of the same simulation (a job started by MPI_Comm_spawn joins its
 * parent's, SOCKMODEL_RANK_JOIN).
 *
 * The simulator's node-down notice (SockModel WATCH, docs/sockmodel.md)
 * is a message of length 0 from the dead node with the tag
 * MCA_BTL_SWF_TAG_NODE_DOWN, which btl_swf asks for at init.
 */
#ifndef MCA_BTL_SWF_HDR_H
#define MCA_BTL_SWF_HDR_H

#include <stdint.h>

#define MCA_BTL_SWF_TAG_MARKER 0x53574600u /* "SWF\0" */
#define MCA_BTL_SWF_TAG_MASK 0xFFFFFF00u
/* The tag of the simulator's node-down notices (SockModel WATCH): a
 * message of length 0 from a node that died. Outside the marker's range,
 * so no fragment ever carries it. */
#define MCA_BTL_SWF_TAG_NODE_DOWN 0x5357444Eu /* "SWDN" */

/* The modex entry: node number and simulation identity, big endian. */
typedef struct mca_btl_swf_modex {
    uint32_t node_be;
    uint32_t sim_hi_be;
    uint32_t sim_lo_be;
} mca_btl_swf_modex_t;
_Static_assert(sizeof(mca_btl_swf_modex_t) == 12, "modex entry: three 32-bit words");

/* Largest node number a peer may claim: the simulator's nodes (at most
 * SOCKMODEL_MAX_NODES) and as many joined ones (--max-joined). */
#define MCA_BTL_SWF_MAX_NODE (2u * SOCKMODEL_MAX_NODES)

static inline uint32_t mca_btl_swf_tag_encode(uint8_t am_tag)
{
    return MCA_BTL_SWF_TAG_MARKER | (uint32_t) am_tag;
}

/* 1 and *am_tag when wire_tag came from btl_swf, 0 otherwise. */
static inline int mca_btl_swf_tag_decode(uint32_t wire_tag, uint8_t *am_tag)
{
    if (MCA_BTL_SWF_TAG_MARKER != (wire_tag & MCA_BTL_SWF_TAG_MASK)) {
        return 0;
    }
    *am_tag = (uint8_t) (wire_tag & 0xFFu);
    return 1;
}

/* The marker leaves the low byte to ob1's tag, and the mask covers it. */
_Static_assert(0 == (MCA_BTL_SWF_TAG_MARKER & ~MCA_BTL_SWF_TAG_MASK) &&
                   0xFFu == (uint32_t) ~MCA_BTL_SWF_TAG_MASK,
               "swf wire tag: 24-bit marker above an 8-bit active-message tag");

_Static_assert(MCA_BTL_SWF_TAG_MARKER != (MCA_BTL_SWF_TAG_NODE_DOWN & MCA_BTL_SWF_TAG_MASK),
               "the node-down tag is no fragment's tag");

#endif /* MCA_BTL_SWF_HDR_H */
