/*
 * btl_swf_recv.c: progress and delivery. The simulator's time only moves
 * when nodes talk to it, so progress must ask: it PROBEs a few times and
 * then parks in WAITING_START with a timeout that grows with every idle
 * wait (the SWORDFISH report's strategy). A queued message is fetched
 * with RECV into one reusable buffer and handed to the active-message
 * callback of its tag; a simulator that offers it hands the message over
 * with the WAITING_START answer instead (SOCKMODEL_FEATURE_WAIT_RECV).
 */

#include "opal_config.h"

#include <stdio.h>
#include <string.h>

#include "opal/util/output.h"

#include "btl_swf.h"
#include "btl_swf_hdr.h"

/* Hand the message in rx_buf (info) to the callback of its tag.
 * 1 when delivered, 0 when dropped. */
static int swf_dispatch(mca_btl_swf_module_t *m, const swf_msg_info_t *info)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    const mca_btl_active_message_callback_t *reg;
    mca_btl_base_segment_t seg;
    uint8_t am_tag;

    if (!mca_btl_swf_tag_decode(info->tag, &am_tag)) {
        opal_output_verbose(1, c->output,
                            "btl:swf: dropped a %u-byte message from node %u with foreign tag 0x%08x",
                            info->len, info->src, info->tag);
        return 0;
    }
    reg = mca_btl_base_active_message_trigger + am_tag;
    if (OPAL_UNLIKELY(NULL == reg->cbfunc)) {
        opal_output_verbose(1, c->output,
                            "btl:swf: dropped a %u-byte message from node %u for unregistered tag %u",
                            info->len, info->src, (unsigned) am_tag);
        return 0;
    }
    m->frags_recv++;
    m->bytes_recv += info->len;
    opal_output_verbose(10, c->output, "btl:swf: %u bytes from node %u, tag %u", info->len,
                        info->src, (unsigned) am_tag);

    seg.seg_addr.pval = m->rx_buf;
    seg.seg_len = info->len;
    /* the callback may send: let it have the connection */
    OPAL_THREAD_UNLOCK(&m->lock);
    tc_ompi_deliver(reg, &m->super, NULL, am_tag, &seg, 1);
    OPAL_THREAD_LOCK(&m->lock);
    return 1;
}

/* RECV the message announced by info and hand it to its callback; a
 * PROBE rides along and tells (*more, *announced) whether another message
 * is queued. 1 when delivered, 0 when dropped, -1 after a fatal error. */
static int swf_deliver(mca_btl_swf_module_t *m, swf_msg_info_t *announced, int *more)
{
    swf_msg_info_t info;

    if (announced->len > m->rx_buf_size) {
        /* a peer can never produce this: the stream is not ours */
        snprintf(m->conn.error, sizeof(m->conn.error),
                 "a queued message of %u bytes from node %u exceeds the largest fragment (%zu)",
                 announced->len, announced->src, m->rx_buf_size);
        mca_btl_swf_fatal(m, "receiving a message");
        return -1;
    }
    *more = 0;
    if (swf_conn_recv(&m->conn, m->rx_buf, m->rx_buf_size, &info, announced, more) < 0) {
        mca_btl_swf_fatal(m, "receiving a message");
        return -1;
    }
    return swf_dispatch(m, &info);
}

/* One WAITING_START of m->wait_ms: 0 when it expired, 1 when a message is
 * announced (*info), 2 when it came with the answer and was delivered
 * (*count), negative on a broken connection. */
static int swf_wait(mca_btl_swf_module_t *m, swf_msg_info_t *info, int *count)
{
    uint32_t timeout_us = (uint32_t) m->wait_ms * 1000u;
    int rc;

#ifdef SOCKMODEL_FEATURE_WAIT_RECV
    if (m->conn.features & SOCKMODEL_FEATURE_WAIT_RECV) {
        /* the message comes with the answer: no RECV round trip */
        rc = swf_conn_wait_recv(&m->conn, timeout_us, m->rx_buf, m->rx_buf_size, info);
        if (rc > 0) {
            *count += swf_dispatch(m, info);
            return 2;
        }
        return rc;
    }
#endif
    (void) count;
    rc = swf_conn_wait(&m->conn, timeout_us, info);
    return rc;
}

int mca_btl_swf_component_progress(void)
{
    mca_btl_swf_component_t *c = &mca_btl_swf_component;
    mca_btl_swf_module_t *m = c->module;
    swf_msg_info_t info;
    int rc, count = 0;

    if (NULL == m || !m->connected || m->failed) {
        return 0;
    }
    if (0 != OPAL_THREAD_TRYLOCK(&m->lock)) {
        return 0;   /* another thread is progressing */
    }
    if (m->in_progress) {
        OPAL_THREAD_UNLOCK(&m->lock);
        return 0;
    }
    /* a callback may send, but must not re-enter a command exchange */
    m->in_progress = true;

    if (m->idle_probes < (unsigned) c->probe_count) {
        rc = swf_conn_probe(&m->conn, &info);
        if (0 == rc) {
            m->idle_probes++;
        }
    } else {
        int wait_max = c->wait_max_ms > 0 ? c->wait_max_ms : 1;

        if (m->wait_ms > wait_max) {
            m->wait_ms = wait_max;
        }
        m->waits++;
        rc = swf_wait(m, &info, &count);
        if (0 == rc) {
            m->wait_timeouts++;
            /* idle again: wait longer next time, up to the bound */
            m->wait_ms += c->wait_step_ms > 0 ? c->wait_step_ms : 1;
        }
    }

    if (rc < 0) {
        mca_btl_swf_fatal(m, "polling for messages (PROBE/WAITING_START)");
    } else if (2 == rc) {
        /* delivered with the wait's answer */
        m->idle_probes = 0;
        m->wait_ms = c->wait_step_ms > 0 ? c->wait_step_ms : 1;
    } else if (rc > 0) {
        int more = 1, i;

        m->idle_probes = 0;
        m->wait_ms = c->wait_step_ms > 0 ? c->wait_step_ms : 1;
        /* drain what is queued, one round trip per message, but return to
         * the caller now and then */
        for (i = 0; more && i < 64 && !m->failed; i++) {
            rc = swf_deliver(m, &info, &more);
            if (rc < 0) {
                break;
            }
            count += rc;
        }
    }
    m->in_progress = false;
    OPAL_THREAD_UNLOCK(&m->lock);
    return count;
}
