/* Copyright (c) 2026, the ompi-transports authors. SPDX-License-Identifier: BSD-3-Clause */
/*
 * btl_sctp_sock_seg.c: SCTP packets larger than a datagram, for the user
 * stack's UDP layer.
 *
 * usrsctp's work is mostly per packet (each packet is built, checked,
 * acknowledged and freed on its own), so at a 1500-byte MTU it cost each
 * side about twice its cost with 64 KB packets. So the stack cuts SCTP
 * packets of up to 64 KB, and this layer cuts each into datagrams of the
 * path's size, each with a 12-byte segment header (mca_btl_sctp_seg_t,
 * btl_sctp_hdr.h). The segments of a packet leave as one UDP_SEGMENT
 * message (btl_sctp_sock_gso.c), cross a veth or a capable NIC as one
 * buffer and usually arrive as one GRO buffer; there they are put back
 * together in place (btl_sctp_seg_whole). Segments that arrive apart (no
 * GRO, a buffer cut by the kernel) are gathered in the path's reassembly
 * buffer (btl_sctp_seg_add). A packet with a segment missing is lost as a
 * whole, and SCTP retransmits its chunks, as for any lost packet.
 *
 * Everything here works on byte buffers only (no socket), so that the
 * unit tests drive it directly.
 */
#include "tc_config.h"

#if TC_HAVE_USRSCTP

#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "btl_sctp_hdr.h"
#include "btl_sctp_sock_user.h"

#define SEG_HDR MCA_BTL_SCTP_SEG_HDR_SIZE

int btl_sctp_seg_parse(const unsigned char *d, size_t n, btl_sctp_seg_info_t *s)
{
    mca_btl_sctp_seg_t h;
    size_t len, seg_len;

    if (n <= SEG_HDR) {
        return -1;
    }
    memcpy(&h, d, sizeof(h));
    if (0 != h.zero || MCA_BTL_SCTP_SEGMENT != h.kind || 0 != h.pad || h.count < 2 ||
        h.count > MCA_BTL_SCTP_SEG_MAX || h.index >= h.count) {
        return -1;
    }
    seg_len = ntohs(h.seg_len);
    len = n - SEG_HDR;
    if (0 == seg_len || (h.index + 1u < h.count ? len != seg_len : len > seg_len)) {
        return -1;
    }
    /* the whole packet fits the reassembly buffer (no overflow: both
     * factors are at most 64 and 65535) */
    if ((size_t) (h.count - 1) * seg_len + (h.index + 1u == h.count ? len : 1) >
        MCA_BTL_SCTP_SEG_PKT_MAX) {
        return -1;
    }
    s->id = ntohl(h.id);
    s->index = h.index;
    s->count = h.count;
    s->seg_len = (unsigned) seg_len;
    s->off = (size_t) h.index * seg_len;
    s->len = len;
    s->data = d + SEG_HDR;
    return 0;
}

unsigned btl_sctp_seg_count(size_t len, size_t dgram)
{
    size_t per;
    if (dgram <= SEG_HDR) {
        return 0;
    }
    per = dgram - SEG_HDR;
    return (unsigned) ((len + per - 1) / per);
}

size_t btl_sctp_seg_write(unsigned char *out, size_t cap, const void *buf, size_t len,
                          size_t dgram, uint32_t id)
{
    unsigned count = btl_sctp_seg_count(len, dgram);
    size_t per = dgram - SEG_HDR, total, o = 0;
    mca_btl_sctp_seg_t h;

    if (count < 2 || count > MCA_BTL_SCTP_SEG_MAX || per > UINT16_MAX ||
        len > MCA_BTL_SCTP_SEG_PKT_MAX) {
        return 0;
    }
    total = len + (size_t) count * SEG_HDR;
    if (total > cap) {
        return 0;
    }
    memset(&h, 0, sizeof(h));
    h.kind = MCA_BTL_SCTP_SEGMENT;
    h.count = (uint8_t) count;
    h.seg_len = htons((uint16_t) per);
    h.id = htonl(id);
    for (unsigned i = 0; i < count; ++i) {
        size_t take = i + 1 < count ? per : len - (size_t) i * per;
        h.index = (uint8_t) i;
        memcpy(out + o, &h, SEG_HDR);
        memcpy(out + o + SEG_HDR, (const unsigned char *) buf + (size_t) i * per, take);
        o += SEG_HDR + take;
    }
    return total;
}

size_t btl_sctp_seg_add(user_reasm_t *ra, const btl_sctp_seg_info_t *s)
{
    uint64_t bit = (uint64_t) 1 << s->index;
    size_t len;

    if (!ra->busy || ra->id != s->id || ra->count != s->count || ra->seg_len != s->seg_len) {
        /* another packet: the one gathered so far lost a segment */
        ra->busy = 1;
        ra->id = s->id;
        ra->count = s->count;
        ra->seg_len = s->seg_len;
        ra->have = 0;
        ra->got = 0;
        ra->len = 0;
    }
    if (ra->have & bit) {
        return 0; /* a duplicate */
    }
    /* s->off + s->len <= MCA_BTL_SCTP_SEG_PKT_MAX (btl_sctp_seg_parse) */
    memcpy(ra->buf + s->off, s->data, s->len);
    ra->have |= bit;
    ra->got++;
    if (s->index + 1 == s->count) {
        ra->len = s->off + s->len;
    }
    if (ra->got < ra->count) {
        return 0;
    }
    len = ra->len;
    ra->busy = 0;
    return len;
}

int btl_sctp_seg_whole(unsigned char *base, const size_t *off, const size_t *len, int n, int i,
                       unsigned char **pkt, size_t *pktlen)
{
    btl_sctp_seg_info_t first, s;
    unsigned char *dst;
    size_t at = 0;

    if (0 != btl_sctp_seg_parse(base + off[i], len[i], &first) || 0 != first.index ||
        first.count > (unsigned) (n - i)) {
        return 0;
    }
    for (unsigned k = 1; k < first.count; ++k) {
        if (0 != btl_sctp_seg_parse(base + off[i + (int) k], len[i + (int) k], &s) ||
            s.id != first.id || s.count != first.count || s.seg_len != first.seg_len ||
            s.index != k) {
            return 0;
        }
    }
    /* The packet's bytes move down over the headers: each piece lands
     * below where it was (the segments lie in order in the buffer). */
    dst = base + off[i];
    for (unsigned k = 0; k < first.count; ++k) {
        size_t plen = len[i + (int) k] - SEG_HDR;
        memmove(dst + at, base + off[i + (int) k] + SEG_HDR, plen);
        at += plen;
    }
    *pkt = dst;
    *pktlen = at;
    return (int) first.count;
}

size_t btl_sctp_seg_packet_size(size_t dgram)
{
    size_t per, n;
    if (dgram >= USER_LOOPBACK_MTU) {
        return USER_LOOPBACK_MTU;
    }
    if (dgram <= SEG_HDR + 512) {
        return dgram > USER_UDP_SLACK + 512 ? dgram - USER_UDP_SLACK : 512;
    }
    /* as many segments as one GSO message may carry */
    per = dgram - SEG_HDR;
    n = USER_TX_GSO_BYTES / dgram;
    if (n > MCA_BTL_SCTP_SEG_MAX) {
        n = MCA_BTL_SCTP_SEG_MAX;
    }
    return n * per - USER_UDP_SLACK;
}

#endif /* TC_HAVE_USRSCTP */
