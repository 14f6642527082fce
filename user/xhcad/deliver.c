/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * From the flow queues to the applications: the scheduler (sched.c) picks
 * the flow queue, this file takes its head frame and places it.
 *
 * A SEND's payload goes into the QP's next posted receive buffer; FIRST,
 * MIDDLE and LAST are reassembled into one buffer; the LAST (or ONLY) writes
 * the completion. UD buffers start with the 40-byte GRH, as verbs and RXE
 * do. A flow queue whose head frame's CQ is full waits (it is "blocked")
 * until the application makes room; the others go on. A bus model
 * (--bus-rate) charges every frame's bytes to a token bucket.
 *
 * Every frame taken ends in exactly one host reason (ctl.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "log.h"
#include "xhcad.h"

#define GRH_LEN 40
#define BTH_LEN ((__u32)sizeof(struct xhca_bth))
#define TOKEN_BURST_MIN (64u << 10)

/* The head frame of each flow queue, as the scheduler last saw it. */
struct head {
	const struct xhca_rx_meta *m;
	const __u8 *data;
	__u32 len;
};
static struct head heads[XHCA_FLOWQ_MAX];

static void count(struct xhcad *d, int reason, __u32 bytes)
{
	d->host[reason].packets++;
	d->host[reason].bytes += bytes;
}

/* What the CQ has been given: written, or (a proxy CQ) promised to the
 * proxy, which writes it in order. */
static __u32 cq_given(const struct cq *cq)
{
	return cq->proxy ? __atomic_load_n(&cq->claimed, __ATOMIC_RELAXED) : cq->ring->prod;
}

__u32 cq_used(struct cq *cq)
{
	return cq_given(cq) - __atomic_load_n(&cq->ring->cons, __ATOMIC_ACQUIRE);
}

__u32 cq_room(const struct cq *cq)
{
	return cq->proxy && cq->depth > PROXY_CQ_INFLIGHT ? PROXY_CQ_INFLIGHT : cq->depth;
}

/* Full, by what the application had consumed when last looked at: the
 * consumer index is read again only when the cached one says full (it
 * lives in a cache line the application writes). */
static int cq_full(struct cq *cq)
{
	if (cq_given(cq) - cq->cons_cache < cq_room(cq))
		return 0;
	cq->cons_cache = __atomic_load_n(&cq->ring->cons, __ATOMIC_ACQUIRE);
	return cq_given(cq) - cq->cons_cache >= cq_room(cq);
}

static __u32 head_cb(void *ctx, __u32 f, __u64 *t)
{
	struct xhcad *d = ctx;
	struct head *h = &heads[f];

	if (!xsk_head(d, f, &h->m, &h->data, &h->len))
		return 0;
	*t = h->m->rx_ns;
	return h->len ? h->len : 1;
}

/* Whether cq has room for a completion. If not, the application is told
 * to ring the CQ's doorbell when it makes some, and looked at again, as it
 * may have made room between the two (ring.h); cq then waits for it. */
int cq_room_or_wait(struct cq *cq)
{
	if (!cq_full(cq))
		return 1;
	__atomic_store_n(&cq->ring->waiting, 1, __ATOMIC_SEQ_CST);
	if (!cq_full(cq)) {
		__atomic_store_n(&cq->ring->waiting, 0, __ATOMIC_RELAXED);
		return 1;
	}
	if (!cq->waiting)
		cq->ring->stalls++;
	cq->waiting = 1;
	return 0;
}

int cq_put(struct xhcad *d, struct cq *cq, const struct xhca_cqe *c)
{
	__u32 prod = cq->ring->prod;

	if (!cq_room_or_wait(cq))
		return -ENOSPC;
	cq->e[prod & (cq->depth - 1)] = *c;
	__atomic_store_n(&cq->ring->prod, prod + 1, __ATOMIC_RELEASE);
	cq->dirty = 1;
	return 0;
}

static struct qp_host *qp_of(struct xhcad *d, const struct xhca_rx_meta *m)
{
	struct qp_host *qh;

	if (m->lidx >= d->max_qps)
		return NULL;
	qh = &d->qh[m->lidx];
	return qh->valid && qh->gen == m->gen && qh->gqpn == m->gqpn ? qh : NULL;
}

/* Whether f's head frame can be placed now: its completion needs a slot.
 * If not, f waits for that CQ's doorbell. */
static int ready_cb(void *ctx, __u32 f)
{
	struct xhcad *d = ctx;
	struct qp_host *qh;
	struct cq *cq;

	if (d->fq[f].blocked)
		return 0;
	qh = qp_of(d, heads[f].m);
	if (!qh || !qh->cq || cq_room_or_wait(qh->cq))
		return 1;
	cq = qh->cq;
	d->fq[f].blocked = 1;
	d->fq[f].blocked_on = cq;
	return 0;
}

static const struct sched_ops ops = { head_cb, ready_cb };

void flowq_unblock(struct xhcad *d, struct cq *cq)
{
	for (__u32 f = 0; f < d->nflowq; f++) {
		if (!d->fq[f].blocked || (cq && d->fq[f].blocked_on != cq))
			continue;
		d->fq[f].blocked = 0;
		d->fq[f].blocked_on = NULL;
	}
	if (cq)
		cq->waiting = 0;
}

void flowq_init(struct xhcad *d)
{
	for (__u32 f = 0; f < XHCA_FLOWQ_MAX; f++) {
		d->fq[f].blocked = 0;
		d->fq[f].blocked_on = NULL;
	}
	d->tokens = TOKEN_BURST_MIN;
	d->tokens_ns = now_ns();
}

/* ---- receive queue and completion queue -------------------------------- */

static int rq_head(struct qp_host *qh, struct xhca_rwqe *w)
{
	__u32 cons, prod;

	if (!qh->rq)
		return 0;
	cons = qh->rq->cons;
	prod = qh->rq_prod_cache;
	if (prod == cons || qh->srq) {
		/* read the application's index only when the cached one is used up */
		prod = qh->rq_prod_cache = __atomic_load_n(&qh->rq->prod, __ATOMIC_ACQUIRE);
		if (prod == cons)
			return 0;
	}
	*w = qh->rqe[cons & (qh->rq_depth - 1)];
	return 1;
}

static void rq_pop(struct qp_host *qh)
{
	__atomic_store_n(&qh->rq->cons, qh->rq->cons + 1, __ATOMIC_RELEASE);
}

/* Writes a completion for the RQ head and consumes it. The ready check left
 * a slot. The application hears of it at the end of the batch (cq_notify).
 * A proxy CQ's goes to the proxy, which writes it in its message's turn
 * (a flushed buffer's, with no message, after the sequence). */
static void complete_rq(struct xhcad *d, struct qp_host *qh, const struct xhca_cqe *c, int flush)
{
	struct cq *cq = qh->cq;
	__u32 prod = cq->ring->prod;

	/* The receive entry is free before the completion says so: an
	 * application that reposts at once must find the room. */
	rq_pop(qh);
	if (cq->proxy) {
		if (flush) {
			proxy_flush_cqe(d, qh, c);
		} else {
			proxy_record(d, qh, qh->px_csn, c);
			qh->px_recorded = 1;
		}
		qh->cnt.completions++;
		return;
	}
	cq->e[prod & (cq->depth - 1)] = *c;
	__atomic_store_n(&cq->ring->prod, prod + 1, __ATOMIC_RELEASE);
	qh->cnt.completions++;
	cq->dirty = 1;
}

static void complete(struct xhcad *d, struct qp_host *qh, const struct xhca_cqe *c)
{
	complete_rq(d, qh, c, 0);
}

/* Signals every CQ that got completions and whose application sleeps on
 * it: once per batch, not per completion (one fence, one write at most). */
static void cq_notify(struct xhcad *d)
{
	/* The application may be going to sleep: see ring.h. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (struct cq *cq = d->cqs; cq; cq = cq->next) {
		__u64 one = 1;

		if (!cq->dirty)
			continue;
		cq->dirty = 0;
		/* (no eventfd: a session waiting to be resumed; it looks
		 * at the ring itself when it comes back) */
		if (cq->efd >= 0 && __atomic_load_n(&cq->ring->armed, __ATOMIC_RELAXED) &&
		    __atomic_exchange_n(&cq->ring->armed, 0, __ATOMIC_SEQ_CST) &&
		    write(cq->efd, &one, sizeof(one)) < 0)
			pr_debug("cq %u: eventfd: %s\n", cq->id, strerror(errno));
	}
}

static void complete_err(struct xhcad *d, struct qp_host *qh, __u32 status, int reason,
			 const struct xhca_rx_meta *m)
{
	struct xhca_cqe c = {
		.wr_id = qh->wqe.wr_id, .status = status, .opcode = XHCA_WC_RECV,
		.qp_num = qh->gqpn, .vendor_err = (__u32)reason, .rx_ns = m->rx_ns,
	};

	complete(d, qh, &c);
	qh->cnt.errors++;
}

/* The IP header of the frame, in GRH form (RXE's rdma_network_hdr). */
static int make_grh(const __u8 *fr, __u32 len, __u8 grh[GRH_LEN])
{
	__u32 off = 12;
	__u16 type = (__u16)(fr[off] << 8 | fr[off + 1]);

	for (int i = 0; i < 2 && (type == ETH_P_8021Q || type == ETH_P_8021AD); i++) {
		off += 4;
		type = (__u16)(fr[off] << 8 | fr[off + 1]);
	}
	off += 2;
	memset(grh, 0, GRH_LEN);
	if (type == ETH_P_IP && off + 20 <= len) {
		memcpy(grh + 20, fr + off, 20);
		return 0;
	}
	if (type == ETH_P_IPV6 && off + 40 <= len) {
		memcpy(grh, fr + off, 40);
		return 0;
	}
	return -EINVAL;
}

static int is_send(__u8 op)
{
	return op <= XHCA_OP_SEND_ONLY_IMM || op == XHCA_OP_SEND_LAST_INV ||
	       op == XHCA_OP_SEND_ONLY_INV;
}

/* Where the BTH starts: after Ethernet, VLAN tags, IP and UDP (xhca_rx
 * passed IPv6 extension headers to the kernel, so none are here). */
static int bth_offset(const __u8 *fr, __u32 len, __u32 *off)
{
	__u32 o = 12;
	__u16 type = (__u16)(fr[o] << 8 | fr[o + 1]);

	for (int i = 0; i < 2 && (type == ETH_P_8021Q || type == ETH_P_8021AD); i++) {
		o += 4;
		type = (__u16)(fr[o] << 8 | fr[o + 1]);
	}
	o += 2;
	if (type == ETH_P_IP && o + 20 <= len)
		o += (fr[o] & 0xf) * 4u;
	else if (type == ETH_P_IPV6 && o + 40 <= len)
		o += 40;
	else
		return -EINVAL;
	o += 8; /* UDP */
	if (o + BTH_LEN > len)
		return -EINVAL;
	*off = o;
	return 0;
}

/* The buffer of the receive in progress, if it is still the session's and
 * [off, off + n) is inside it (the application may have freed it since). */
/* The pieces of the receive entry a message goes into (qh->wqe): its
 * buffer, or the scatter list it names (ring.h), each checked; wqe.len
 * becomes their sum. 0, or -EFAULT: an allocation that is not the
 * session's, a piece outside its allocation. */
static int rq_load(struct xhcad *d, struct qp_host *qh)
{
	const struct xhca_rwqe *w = &qh->wqe;
	__u64 total = 0;

	if (w->nsge <= 1) {
		qh->seg[0] = (struct xhca_rsge){ .off = w->off, .len = w->len, .alloc = w->alloc };
		qh->nseg = 1;
	} else {
		const struct hm_alloc *l = hm_find(d, w->alloc);

		if (w->nsge > XHCA_SGE_MAX || !l || l->owner != qh->owner ||
		    !hm_range(l, w->off, w->nsge * sizeof(struct xhca_rsge)))
			return -EFAULT;
		hm_read(d, l, w->off, qh->seg, w->nsge * sizeof(struct xhca_rsge));
		qh->nseg = w->nsge;
	}
	for (__u32 i = 0; i < qh->nseg; i++) {
		const struct hm_alloc *a = hm_find(d, qh->seg[i].alloc);

		if (!a || a->owner != qh->owner || !hm_range(a, qh->seg[i].off, qh->seg[i].len))
			return -EFAULT;
		total += qh->seg[i].len;
	}
	if (total > 0xffffffffull)
		return -EFAULT;
	qh->wqe.len = (__u32)total;
	return 0;
}

/* n bytes at byte off of the message's buffer, across its pieces. -EFAULT
 * when an allocation went away meanwhile (the application freed it). */
static int rq_write(struct xhcad *d, const struct qp_host *qh, __u64 off, const void *src,
		    __u64 n)
{
	const __u8 *s = src;

	for (__u32 i = 0; i < qh->nseg && n; i++) {
		const struct xhca_rsge *g = &qh->seg[i];
		const struct hm_alloc *a;
		__u64 k;

		if (off >= g->len) {
			off -= g->len;
			continue;
		}
		k = n < g->len - off ? n : g->len - off;
		a = hm_find(d, g->alloc);
		if (!a || a->owner != qh->owner || !hm_range(a, g->off + off, k))
			return -EFAULT;
		hm_write(d, a, g->off + off, s, k);
		s += k;
		n -= k;
		off = 0;
	}
	return n ? -EFAULT : 0;
}

/* Ends the message in progress with an error; the rest of it, if any, is
 * dropped under the same reason. */
static int msg_fail(struct qp_host *qh, int end, int reason)
{
	qh->in_msg = MSG_NONE;
	qh->discard = end ? 0 : reason;
	return reason;
}

/* A MIDDLE or LAST: -1 when it goes on the message of this kind in
 * progress, else its reason (the rest of a broken message, or no message). */
static int msg_continues(struct qp_host *qh, int kind, int end)
{
	if (qh->discard) {
		int r = qh->discard;

		if (end)
			qh->discard = 0;
		return r;
	}
	if (qh->in_msg != kind) {
		qh->cnt.errors++;
		return msg_fail(qh, end, XHCA_H_SEQ_ERR);
	}
	return -1;
}

/* A SEND (any of its packets) into the QP's receive buffer. */
static int place_send(struct xhcad *d, __u32 f, struct qp_host *qh,
		      const struct xhca_rx_meta *m, const __u8 *fr, __u32 len)
{
	const struct xhca_opinfo *oi = &xhca_opinfo_tbl[m->opcode];
	const __u8 *payload = fr + m->payload_off;
	__u32 plen = m->payload_len;
	int start = !!(oi->flags & XHCA_O_START), end = !!(oi->flags & XHCA_O_END);

	if (start) {
		if (qh->in_msg) /* the last message never ended */
			qh->cnt.errors++;
		qh->in_msg = MSG_NONE;
		qh->discard = 0;
		if (!rq_head(qh, &qh->wqe)) {
			qh->cnt.rnr++;
			return msg_fail(qh, end, XHCA_H_RNR);
		}
		if (rq_load(d, qh)) {
			complete_err(d, qh, XHCA_WC_LOC_PROT_ERR, XHCA_H_BAD_BUF, m);
			return msg_fail(qh, end, XHCA_H_BAD_BUF);
		}
		qh->msg_off = 0;
		qh->in_msg = MSG_SEND;
		if (qh->type == XHCA_QPT_UD) {
			__u8 grh[GRH_LEN];

			if (qh->wqe.len < GRH_LEN || make_grh(fr, len, grh)) {
				complete_err(d, qh, XHCA_WC_LOC_LEN_ERR, XHCA_H_LEN_ERR, m);
				return msg_fail(qh, end, XHCA_H_LEN_ERR);
			}
			if (rq_write(d, qh, 0, grh, GRH_LEN)) {
				complete_err(d, qh, XHCA_WC_LOC_PROT_ERR, XHCA_H_BAD_BUF, m);
				return msg_fail(qh, end, XHCA_H_BAD_BUF);
			}
			qh->msg_off = GRH_LEN;
		}
	} else {
		int r = msg_continues(qh, MSG_SEND, end);

		if (r >= 0)
			return r;
	}

	if (plen > qh->wqe.len - qh->msg_off) {
		complete_err(d, qh, XHCA_WC_LOC_LEN_ERR, XHCA_H_LEN_ERR, m);
		return msg_fail(qh, end, XHCA_H_LEN_ERR);
	}
	if (rq_write(d, qh, qh->msg_off, payload, plen)) {
		complete_err(d, qh, XHCA_WC_LOC_PROT_ERR, XHCA_H_BAD_BUF, m);
		return msg_fail(qh, end, XHCA_H_BAD_BUF);
	}
	qh->msg_off += plen;
	d->fq[f].bytes += plen;

	if (end) {
		struct xhca_cqe c = {
			.wr_id = qh->wqe.wr_id, .status = XHCA_WC_SUCCESS, .opcode = XHCA_WC_RECV,
			.byte_len = qh->msg_off, .qp_num = qh->gqpn, .rx_ns = m->rx_ns,
		};

		if (oi->flags & XHCA_H_IMM) {
			memcpy(&c.imm_data, payload - 4, 4); /* network order, as verbs */
			c.wc_flags |= XHCA_WC_WITH_IMM;
		} else if (oi->flags & XHCA_H_IETH) {
			c.imm_data = be32(payload - 4);
			c.wc_flags |= XHCA_WC_WITH_INV;
		}
		if (qh->type == XHCA_QPT_UD) {
			const __u8 *deth = payload - oi->hdr_len + BTH_LEN;

			c.src_qp = be32(deth + 4) & XHCA_QPN_MASK;
			c.wc_flags |= XHCA_WC_GRH;
		}
		complete(d, qh, &c);
		qh->in_msg = MSG_NONE;
	}
	return XHCA_H_PLACED;
}

/* The completion of a WRITE with immediate: it takes a receive buffer (and
 * writes nothing into it), as verbs say. */
static int complete_imm(struct xhcad *d, struct qp_host *qh, const struct xhca_rx_meta *m,
			__u32 imm, __u32 byte_len, int reason)
{
	struct xhca_cqe c = {
		.status = XHCA_WC_SUCCESS, .opcode = XHCA_WC_RECV_RDMA_WITH_IMM,
		.byte_len = byte_len, .imm_data = imm, .wc_flags = XHCA_WC_WITH_IMM,
		.qp_num = qh->gqpn, .rx_ns = m->rx_ns,
	};

	if (!rq_head(qh, &qh->wqe)) {
		qh->cnt.rnr++;
		return XHCA_H_RNR;
	}
	c.wr_id = qh->wqe.wr_id;
	complete(d, qh, &c);
	return reason;
}

/* A WRITE into a region that is not pre-translated: the translation
 * manager's side. xhca_rx checked the R_Key, the bounds and the sequence;
 * the region may have been deregistered since, which is looked at again on
 * every packet. The payload goes page by page (hm_write). */
static int place_write(struct xhcad *d, __u32 f, struct qp_host *qh,
		       const struct xhca_rx_meta *m, const __u8 *fr)
{
	const struct xhca_opinfo *oi = &xhca_opinfo_tbl[m->opcode];
	const __u8 *payload = fr + m->payload_off, *bth = payload - oi->hdr_len;
	__u32 plen = m->payload_len;
	int start = !!(oi->flags & XHCA_O_START), end = !!(oi->flags & XHCA_O_END);
	struct mr_rt *mr;

	if (start) {
		const __u8 *reth = bth + BTH_LEN;
		__u64 va = be64(reth);
		__u32 dlen = be32(reth + 12);

		if (qh->in_msg)
			qh->cnt.errors++;
		qh->in_msg = MSG_NONE;
		qh->discard = 0;
		mr = mr_find(d, be32(reth + 8));
		if (!mr || !mr->e.valid || va < mr->e.iova || dlen > mr->e.length ||
		    va - mr->e.iova > mr->e.length - dlen) {
			qh->cnt.errors++;
			return msg_fail(qh, end, XHCA_H_XLATE_ERR);
		}
		qh->wr_rkey = mr->rkey;
		qh->wr_off = va - mr->e.iova;
		qh->wr_left = dlen;
		qh->wr_len = dlen;
		qh->in_msg = MSG_WRITE;
	} else {
		int r = msg_continues(qh, MSG_WRITE, end);

		if (r >= 0)
			return r;
	}
	mr = mr_find(d, qh->wr_rkey);
	if (!mr || !mr->e.valid || plen > qh->wr_left) {
		qh->cnt.errors++;
		return msg_fail(qh, end, XHCA_H_XLATE_ERR);
	}
	hm_write(d, hm_find(d, mr->alloc), mr->off + qh->wr_off, payload, plen);
	qh->wr_off += plen;
	qh->wr_left -= plen;
	d->fq[f].bytes += plen;
	if (!end)
		return XHCA_H_XLATE_PLACED;
	qh->in_msg = MSG_NONE;
	if (oi->flags & XHCA_H_IMM) {
		__u32 imm;

		memcpy(&imm, payload - 4, 4);
		return complete_imm(d, qh, m, imm, qh->wr_len, XHCA_H_XLATE_PLACED);
	}
	if (qh->px) {
		/* a proxy CQ sees every WRITE land, in order (as xhca_rx's
		 * records of the WRITEs it places) */
		struct xhca_cqe c = {
			.status = XHCA_WC_SUCCESS, .opcode = XHCA_WC_RECV_RDMA_WRITE,
			.byte_len = qh->wr_len, .qp_num = qh->gqpn, .rx_ns = m->rx_ns,
		};

		proxy_record(d, qh, qh->px_csn, &c);
		qh->px_recorded = 1;
	}
	return XHCA_H_XLATE_PLACED;
}

static int place_qp(struct xhcad *d, __u32 f, struct qp_host *qh, const struct xhca_rx_meta *m,
		    const __u8 *fr, __u32 len, __u32 bth);

/* Places one frame; returns its host reason. */
static int place(struct xhcad *d, __u32 f, const struct xhca_rx_meta *m, const __u8 *fr,
		 __u32 len)
{
	const struct xhca_opinfo *oi = &xhca_opinfo_tbl[m->opcode];
	__u8 op = m->opcode & 0x1f;
	struct qp_host *qh;
	__u32 bth = 0;

	if (m->flowq != f || !(oi->flags & XHCA_O_KNOWN))
		return XHCA_H_BAD_META;
	if (m->reason == XHCA_R_PLACED_TO_FLOWQ) {
		if (!(m->flags & XHCA_MF_PLACED) || !(oi->flags & XHCA_H_IMM) ||
		    bth_offset(fr, len, &bth) || bth + oi->hdr_len > len)
			return XHCA_H_BAD_META;
	} else if (m->reason == XHCA_R_PLACED_ACK) {
		if (!(m->flags & XHCA_MF_PLACED) || op < XHCA_OP_WRITE_FIRST ||
		    op > XHCA_OP_WRITE_ONLY)
			return XHCA_H_BAD_META;
	} else if (m->reason == XHCA_R_DUP_TO_FLOWQ || m->reason == XHCA_R_SEQ_NAK_TO_FLOWQ) {
		if (!(oi->flags & XHCA_O_REQ) || (m->opcode >> 5) != XHCA_QPT_RC)
			return XHCA_H_BAD_META;
	} else if (m->reason == XHCA_R_TO_FLOWQ && (m->flags & XHCA_MF_MSN)) {
		/* READ, ATOMIC: no payload; respond() finds the headers */
		if (!(oi->flags & (XHCA_O_READ | XHCA_H_ATMETH)))
			return XHCA_H_BAD_META;
	} else if ((m->reason != XHCA_R_TO_FLOWQ && m->reason != XHCA_R_TO_XLATE) ||
		   (m->flags & XHCA_MF_PLACED) || (__u32)m->payload_off + m->payload_len > len ||
		   m->payload_off < oi->hdr_len) {
		return XHCA_H_BAD_META;
	}
	qh = qp_of(d, m);
	if (!qh)
		return XHCA_H_STALE;
	qh->cnt.frames++;
	if (!(oi->flags & XHCA_O_REQ)) {
		/* a response to this QP's requests: the requester's */
		if (xhca_icrc_check_frame(fr, len)) {
			d->resp.bad_icrc++;
			return XHCA_H_BAD_ICRC;
		}
		return sq_response(d, qh, m, fr);
	}
	/* the ICRC, which xhca_rx does not check */
	if (!(m->flags & XHCA_MF_MCAST) && xhca_icrc_check_frame(fr, len)) {
		if (qh->type != XHCA_QPT_RC && (qh->in_msg || !(oi->flags & XHCA_O_END)))
			msg_fail(qh, !!(oi->flags & XHCA_O_END), XHCA_H_BAD_ICRC);
		return resp_bad_icrc(d, qh, m);
	}
	if (qh->type == XHCA_QPT_RC) {
		int r = resp_before(d, qh, m, fr, len);

		if (r >= 0)
			return r;
		return resp_after(d, qh, m, fr, len, place_qp(d, f, qh, m, fr, len, bth));
	}
	return place_qp(d, f, qh, m, fr, len, bth);
}

/* place() for the frame's QP, qh. */
static int place_qp(struct xhcad *d, __u32 f, struct qp_host *qh, const struct xhca_rx_meta *m,
		    const __u8 *fr, __u32 len, __u32 bth)
{
	const struct xhca_opinfo *oi = &xhca_opinfo_tbl[m->opcode];
	__u8 op = m->opcode & 0x1f;

	/* RC and UC: a PSN that does not follow means a frame of this message
	 * was lost between xhca_rx and here (an RX ring full): the message
	 * cannot complete. WRITEs xhca_rx placed itself leave gaps here
	 * between messages, never inside one. */
	if (qh->type != XHCA_QPT_UD) {
		int start = !!(oi->flags & XHCA_O_START), end = !!(oi->flags & XHCA_O_END);

		/* RC: inside a message, any frame, a later message's too,
		 * must be the next */
		if (qh->psn_valid && m->psn != qh->next_psn && qh->in_msg &&
		    (!start || (qh->type == XHCA_QPT_RC && !qh->px))) {
			qh->cnt.errors++;
			/* RC: what came before is placed (and may be
			 * acknowledged); the message goes on from the
			 * missing packet (rewind_msg) */
			if (qh->type == XHCA_QPT_RC && !qh->px)
				return XHCA_H_SEQ_ERR;
			qh->next_psn = (m->psn + 1) & XHCA_PSN_MASK;
			return msg_fail(qh, end, XHCA_H_SEQ_ERR);
		}
		qh->psn_valid = 1;
		qh->next_psn = (m->psn + 1) & XHCA_PSN_MASK;
	}
	if (m->reason == XHCA_R_PLACED_ACK)
		return XHCA_H_ACKED; /* xhca_rx placed it: resp_after() acknowledges */
	if (m->reason == XHCA_R_PLACED_TO_FLOWQ) {
		__u32 imm;

		if (qh->in_msg)
			qh->cnt.errors++;
		qh->in_msg = MSG_NONE;
		memcpy(&imm, fr + bth + oi->hdr_len - 4, 4);
		return complete_imm(d, qh, m, imm, m->msg_len, XHCA_H_IMM_DONE);
	}
	if (m->reason == XHCA_R_TO_XLATE) {
		if (op < XHCA_OP_WRITE_FIRST || op > XHCA_OP_WRITE_ONLY_IMM)
			return XHCA_H_BAD_META;
		return place_write(d, f, qh, m, fr);
	}
	if (op == XHCA_OP_READ_REQ || op == XHCA_OP_CMP_SWAP || op == XHCA_OP_FETCH_ADD)
		return respond(d, qh, m, fr, len);
	if (!is_send(op) || !(oi->flags & XHCA_O_REQ))
		return XHCA_H_UNSUPPORTED;
	return place_send(d, f, qh, m, fr, len);
}

/* place(), and on a proxy CQ the message's end told to the proxy: its
 * completion went there, or it has none (no receive buffer, a READ or
 * ATOMIC answered, a broken message): a no-op in the sequence. */
int deliver_frame(struct xhcad *d, __u32 f, const struct xhca_rx_meta *m, const __u8 *fr,
		  __u32 len)
{
	struct qp_host *qh = (m->flags & XHCA_MF_CSN) ? qp_of(d, m) : NULL;
	int r;

	/* A duplicate or a gap's NAK completes nothing; a WRITE xhca_rx
	 * placed and sends on for its ACK has its record from xhca_rx. */
	if (qh && (!qh->px || m->reason == XHCA_R_DUP_TO_FLOWQ ||
		   m->reason == XHCA_R_SEQ_NAK_TO_FLOWQ || m->reason == XHCA_R_PLACED_ACK))
		qh = NULL;
	if (qh && (!qh->px_open || m->csn != qh->px_csn)) {
		if (qh->px_open && !qh->px_recorded) /* a message that never ended */
			proxy_record(d, qh, qh->px_csn, NULL);
		qh->px_csn = m->csn;
		qh->px_open = 1;
		qh->px_recorded = 0;
	}
	r = place(d, f, m, fr, len);
	if (qh && qh->valid && qh->px_open &&
	    (xhca_opinfo_tbl[m->opcode].flags & XHCA_O_END) && r != XHCA_H_BAD_META) {
		if (!qh->px_recorded)
			proxy_record(d, qh, qh->px_csn, NULL);
		qh->px_open = 0;
	}
	return r;
}

/* ---- the CLI's receive side ---------------------------------------------- */

void cli_post(struct xhcad *d, struct qp_host *qh, __u32 i)
{
	struct hm_alloc *a = hm_find(d, qh->cli_bufs);
	__u32 prod = qh->rq->prod;
	struct xhca_rwqe w = {
		.wr_id = i, .off = (__u64)i * qh->cli_buf_size, .len = qh->cli_buf_size,
		.alloc = qh->cli_bufs,
	};

	if (!a || prod - qh->rq->cons >= qh->rq_depth)
		return;
	qh->rqe[prod & (qh->rq_depth - 1)] = w;
	__atomic_store_n(&qh->rq->prod, prod + 1, __ATOMIC_RELEASE);
}

/* The CLI QP a completion is for, if it has xhcad's buffers. */
static struct qp_host *cli_qp(struct xhcad *d, __u32 qpn)
{
	struct xhca_qp_ctx c;
	char err[XHCA_ERRMSG_LEN];
	__u32 lidx;

	if (qp_find(d, "cq poll", qpn, 0, &lidx, &c, err, sizeof(err)))
		return NULL;
	return d->qh[lidx].valid && d->qh[lidx].cli_bufs ? &d->qh[lidx] : NULL;
}

int cq_poll(struct xhcad *d, const struct xhca_cq_poll *r, struct xhca_cq_entry **out, __u32 *n,
	    char *err, size_t errlen)
{
	struct cq *cq = cq_find(d, r->cq);
	struct xhca_cq_entry *v;
	__u32 cons, prod, k = 0, max = r->max ? r->max : 64;

	if (!cq || cq->owner) {
		snprintf(err, errlen, cq ? "cq poll: CQ %u is an application's: it polls it"
					 : "cq poll: no CQ %u; list them with: xhca cq show", r->cq);
		return cq ? -EPERM : -ENOENT;
	}
	if (max > 4096)
		max = 4096;
	cons = cq->ring->cons;
	prod = __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE);
	if (prod - cons < max)
		max = prod - cons;
	v = calloc(max ? max : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (; k < max; k++) {
		const struct xhca_cqe *c = &cq->e[(cons + k) & (cq->depth - 1)];
		/* the completions that took a buffer (an error in a proxy CQ's
		 * gap and a flushed one do not want it back) */
		int took = (c->opcode == XHCA_WC_RECV || c->opcode == XHCA_WC_RECV_RDMA_WITH_IMM) &&
			   c->status != XHCA_WC_RESP_TIMEOUT_ERR && c->status != XHCA_WC_WR_FLUSH_ERR;
		struct qp_host *qh = took ? cli_qp(d, c->qp_num) : NULL;

		v[k].c = *c;
		if (!qh || c->wr_id >= qh->rq_depth)
			continue;
		if (c->opcode == XHCA_WC_RECV && !c->status && r->dump) {
			__u32 len = c->byte_len < r->dump ? c->byte_len : r->dump;

			if (len > XHCA_CQ_DUMP_MAX)
				len = XHCA_CQ_DUMP_MAX;
			hm_read(d, hm_find(d, qh->cli_bufs), c->wr_id * qh->cli_buf_size, v[k].data,
				len);
			v[k].data_len = len;
		}
		cli_post(d, qh, (__u32)c->wr_id);
	}
	__atomic_store_n(&cq->ring->cons, cons + k, __ATOMIC_RELEASE);
	if (k)
		flowq_unblock(d, cq); /* room again: what waited for it goes on */
	*out = v;
	*n = k;
	return 0;
}

/* ---- the bus model ---------------------------------------------------- */

static void tokens_refill(struct xhcad *d)
{
	__u64 now = now_ns();
	double burst = (double)d->bus_rate / 100;

	if (burst < TOKEN_BURST_MIN)
		burst = TOKEN_BURST_MIN;
	d->tokens += (double)(now - d->tokens_ns) * (double)d->bus_rate / 1e9;
	if (d->tokens > burst)
		d->tokens = burst;
	d->tokens_ns = now;
}

int flowq_run(struct xhcad *d, int budget, __u64 *wait_ns)
{
	int n = 0, taken;

	*wait_ns = 0;
	/* The send queues: new requests, retransmissions, completions. */
	taken = sq_run(d, budget, &d->sq_more, &d->sq_deadline);
	/* What the proxy sent back, and the proxy queue to it. */
	taken += proxy_serve(d);
	taken += proxy_drain(d, budget);
	/* Multicast first: its copies join the flow queues they are for. */
	taken += mcast_run(d, budget);
	if (d->bus_rate)
		tokens_refill(d);
	while (n < budget) {
		struct xhca_rx_meta m;
		const __u8 *fr;
		__u32 len, group;
		int f = sched_next(&d->sched, &ops, d), r;

		if (f < 0)
			break;
		len = heads[f].len;
		if (d->bus_rate && d->tokens < len) {
			*wait_ns = (__u64)(((double)len - d->tokens) * 1e9 / (double)d->bus_rate) + 1;
			break;
		}
		m = *heads[f].m;
		fr = heads[f].data;
		xsk_take(d, (__u32)f);
		r = deliver_frame(d, (__u32)f, &m, fr, len);
		count(d, r, len);
		if (xsk_taken_copy(d, &group))
			mcast_delivered(d, group, r);
		xsk_done(d);
		d->fq[f].frames++;
		sched_charge(&d->sched, (__u32)f, len);
		if (d->bus_rate)
			d->tokens -= len;
		n++;
	}
	if (d->sq_kick) {
		int more;

		d->sq_kick = 0;
		taken += sq_run(d, budget, &more, &d->sq_deadline);
		d->sq_more |= more;
	}
	if (n || taken) {
		xsk_tx_kick(d); /* the round's responses, one syscall */
		xsk_flush(d);
		xsk_refill(d);
		cq_notify(d);
		proxy_kick(d); /* and the completion records of proxy CQs */
	}
	return n;
}

/* ---- flow queue configuration and view ----------------------------------- */

void flowq_info(const struct xhcad *d, __u32 f, struct xhca_flowq_info *fi)
{
	const struct xhca_flowq *q = &d->fqm[f];
	struct xhca_flowq_counter v[d->ncpus > 0 ? d->ncpus : 1];

	memset(fi, 0, sizeof(*fi));
	fi->flowq = f;
	fi->weight = d->sched.weight[f];
	fi->high = q->high;
	fi->low = q->low;
	fi->gate = __atomic_load_n(&q->gate, __ATOMIC_RELAXED);
	fi->backlog = xsk_backlog(d, f);
	fi->blocked = d->fq[f].blocked;
	fi->nqps = d->fq[f].nqps;
	fi->enq = __atomic_load_n(&q->enq, __ATOMIC_RELAXED);
	fi->deq = q->deq;
	fi->gate_closes = __atomic_load_n(&q->gate_closes, __ATOMIC_RELAXED);
	fi->bytes = d->fq[f].bytes;
	fi->frames = d->fq[f].frames;
	fi->kernel_drops = d->fq[f].kernel_drops;
	if (!bpf_map_lookup_elem(d->m.fq_stats, &f, v)) {
		for (int i = 0; i < d->ncpus; i++) {
			fi->gate_drops += v[i].gate_drops;
			fi->nosock_drops += v[i].nosock_drops;
		}
	}
}

int flowq_set(struct xhcad *d, const struct xhca_flowq_set *r, char *err, size_t errlen)
{
	if (r->flowq >= d->nflowq) {
		snprintf(err, errlen, "flowq set: flow queue %u does not exist; xhcad has %u (0..%u)",
			 r->flowq, d->nflowq, d->nflowq - 1);
		return -ENOENT;
	}
	if (!r->weight || r->weight > XHCA_WEIGHT_MAX) {
		snprintf(err, errlen, "flowq set: weight %u is out of range; use 1..%u", r->weight,
			 XHCA_WEIGHT_MAX);
		return -EINVAL;
	}
	d->sched.weight[r->flowq] = r->weight;
	return 0;
}

/* ---- QP host state -------------------------------------------------------- */

void qp_host_attach(struct xhcad *d, __u32 lidx, __u32 gen, __u32 gqpn, __u8 type, __u8 flowq,
		    __u32 owner, struct cq *cq, struct hm_alloc *rq, __u32 rq_depth,
		    struct srq *srq)
{
	struct qp_host *qh = &d->qh[lidx];

	memset(qh, 0, sizeof(*qh));
	qh->valid = 1;
	qh->gen = gen;
	qh->gqpn = gqpn;
	qh->type = type;
	qh->flowq = flowq;
	qh->owner = owner;
	qh->cq = cq;
	if (cq && srq) {
		cq->nqps++;
		srq->nqps++;
		qh->srq = srq;
		qh->rq_depth = srq->depth;
		qh->rq = srq->ring;
		qh->rqe = srq->e;
	} else if (cq && rq) {
		cq->nqps++;
		qh->rq_alloc = rq->id;
		qh->rq_depth = rq_depth;
		qh->rq = hm_contig_ptr(d, rq);
		qh->rqe = (struct xhca_rwqe *)(qh->rq + 1);
		qh->rq->depth = rq_depth;
	} else {
		qh->cq = NULL;
	}
	if (flowq < d->nflowq)
		d->fq[flowq].nqps++;
	if (qh->cq && qh->cq->proxy)
		proxy_qp_add(d, lidx);
}

void qp_host_detach(struct xhcad *d, __u32 lidx)
{
	struct qp_host *qh = &d->qh[lidx];

	if (!qh->valid)
		return;
	proxy_qp_del(d, lidx);
	if (qh->cq) {
		qh->cq->nqps--;
		/* Its flow queue may wait on this CQ for the QP's frames, which
		 * are stale now: look again. */
		flowq_unblock(d, qh->cq);
	}
	if (qh->srq)
		qh->srq->nqps--; /* the ring lives on for its other QPs */
	else if (qh->rq)
		__atomic_store_n(&qh->rq->dead, 1, __ATOMIC_RELEASE);
	qh->srq = NULL;
	sq_detach(d, qh);
	if (qh->flowq < d->nflowq)
		d->fq[qh->flowq].nqps--;
	if (qh->flush)
		d->nflush--;
	qh->flush = 0;
	qh->valid = 0;
	qh->cq = NULL;
	qh->rq = NULL;
}

/* Completes every posted receive buffer of the QP with WR_FLUSH_ERR, as
 * far as its CQ has room; returns 1 when some are left. */
static int flush_rq(struct xhcad *d, struct qp_host *qh)
{
	struct xhca_rwqe w;

	while (rq_head(qh, &w)) {
		struct xhca_cqe c = {
			.wr_id = w.wr_id, .status = XHCA_WC_WR_FLUSH_ERR, .opcode = XHCA_WC_RECV,
			.qp_num = qh->gqpn, .rx_ns = now_ns(),
		};

		if (!cq_room_or_wait(qh->cq))
			return 1; /* the doorbell tells when there is room */
		complete_rq(d, qh, &c, 1);
	}
	return 0;
}

void qp_flush_run(struct xhcad *d)
{
	for (__u32 l = 0; d->nflush && l < d->max_qps; l++) {
		struct qp_host *qh = &d->qh[l];

		if (!qh->valid || !qh->flush || flush_rq(d, qh))
			continue;
		qh->flush = 0;
		d->nflush--;
	}
	cq_notify(d);
	proxy_kick(d);
}

#define REASON_STR(name, str, desc) str,
static const char *const reason_names[] = { XHCA_REASONS(REASON_STR) };

void qp_host_error(struct xhcad *d, const struct xhca_event *e)
{
	struct qp_host *qh;

	if (e->type != XHCA_EV_QP_ERR || e->lidx >= d->max_qps)
		return;
	qh = &d->qh[e->lidx];
	if (!qh->valid || qh->gen != e->gen || qh->gqpn != e->gqpn)
		return; /* destroyed or re-created since */
	if (qp_set_error(d, e->lidx, e->gen))
		return;
	resp_error_at(qh, e->psn);
	if (qh->sq) /* the application's async event (ring.h) */
		__atomic_store_n(&qh->sq->ring->qp_err,
				 e->reason >= XHCA_R_DROP_MR_RKEY && e->reason <= XHCA_R_DROP_MR_BOUNDS
					 ? XHCA_QPE_ACCESS : XHCA_QPE_REQ, __ATOMIC_RELEASE);
	pr_info("QP 0x%06x: error state (%s at PSN 0x%06x)\n", qh->gqpn,
		e->reason < XHCA_R_MAX ? reason_names[e->reason] : "?", e->psn);
	respond_nak(d, e);
	qp_host_to_error(d, qh);
}

void qp_host_to_error(struct xhcad *d, struct qp_host *qh)
{
	qh->in_msg = MSG_NONE;
	qh->discard = 0;
	/* an SRQ's buffers are its other QPs' too: they stay (verbs) */
	if (qh->rq && !qh->srq && !qh->flush) {
		qh->flush = 1;
		d->nflush++;
	}
	sq_to_error(d, qh); /* and its send requests, flushed by sq_run */
	qp_flush_run(d);
}
