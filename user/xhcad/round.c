/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One round of the data path, as the loop (loop.c) runs it: the send queues
 * (request.c), what the proxy sent back and the proxy queue to it
 * (proxy.c), the replication queue (mcast.c), then up to a budget of frames
 * from the flow queues in the order the scheduler (sched.c) picks, each
 * placed by dispatch.c and counted under exactly one host reason (ctl.h); at
 * the round's end the TX ring is kicked, the UMEM frames go back, and the
 * applications and the proxy hear of their completions once. A bus model
 * (--bus-rate) charges every frame's bytes to a token bucket.
 */
#include <string.h>
#include <xhca/wire.h>
#include "xhcad_round.h"

/* The head frame of each flow queue, as the scheduler last saw it. */
struct head {
	const struct xhca_rx_meta *m;
	const __u8 *data;
	__u32 len;
};
static struct head heads[XHCA_FLOWQ_MAX];

static void count(struct xhcad *d, int reason, __u32 bytes)
{
	eng()->host[reason].packets++;
	eng()->host[reason].bytes += bytes;
}

static __u32 head_cb(void *ctx, __u32 f, __u64 *t)
{
	struct xhcad *d = ctx;
	struct head *h = &heads[f];

	if (fq_engine(d, f) != eng()->id || !xsk_head(d, f, &h->m, &h->data, &h->len))
		return 0;
	*t = h->m->rx_ns;
	return h->len ? h->len : 1;
}

/* The CQ a frame of qh may write a completion to: a response's (ACK, READ
 * response, ATOMIC ACK) is the send queue's, whose request it completes; a
 * SEND's or an immediate's the receive queue's; WRITEs without immediate,
 * READ and ATOMIC requests complete nothing, nor does a SEND xhca_rx
 * completed itself and sent on for its ACK (--recv-fast: placed_ack). A
 * frame never waits for a CQ it does not write: an application that polls
 * its send CQ for the ACK of its SEND while its receive CQ is full
 * (perftest's exchange over rdma_cm, one-entry CQs, when the peer's next
 * SEND comes before that ACK) would never see the ACK, and its request
 * would fail with RETRY_EXC_ERR. */
static struct cq *frame_cq(const struct qp_host *qh, const struct xhca_rx_meta *m)
{
	__u16 f = xhca_opinfo_tbl[m->opcode].flags;
	__u8 op = m->opcode & 0x1f;

	if (f & XHCA_O_RESP)
		return qh->sq ? qh->sq->cq : NULL;
	if (m->reason == XHCA_R_PLACED_ACK)
		return NULL;
	if (op <= XHCA_OP_SEND_ONLY_IMM || op == XHCA_OP_SEND_LAST_INV ||
	    op == XHCA_OP_SEND_ONLY_INV || (f & XHCA_H_IMM))
		return qh->cq;
	return NULL;
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
	qh = qp_host_of(d, heads[f].m);
	cq = qh ? frame_cq(qh, heads[f].m) : NULL;
	if (!cq || cq_room_or_wait(cq))
		return 1;
	d->fq[f].blocked = 1;
	d->fq[f].blocked_on = cq;
	eng()->blocked_new = 1;
	return 0;
}

static const struct sched_ops ops = { head_cb, ready_cb };

static void tokens_refill(struct xhcad *d)
{
	__u64 now = now_ns();
	double burst = (double)d->bus.rate / 100;

	if (burst < TOKEN_BURST_MIN)
		burst = TOKEN_BURST_MIN;
	eng()->tokens += (double)(now - eng()->tokens_ns) * (double)d->bus.rate / 1e9;
	if (eng()->tokens > burst)
		eng()->tokens = burst;
	eng()->tokens_ns = now;
}

static void add_u64s(void *to, const void *from, size_t bytes)
{
	__u64 *t = to;
	const __u64 *f = from;

	for (size_t i = 0; i < bytes / sizeof(__u64); i++)
		t[i] += f[i];
}

void round_totals(const struct xhcad *d, struct engine *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (__u32 k = 0; k < d->neng; k++) {
		const struct engine *e = &d->eng[k];

		add_u64s(sum->host, e->host, sizeof(sum->host));
		add_u64s(&sum->resp, &e->resp, sizeof(sum->resp));
		add_u64s(&sum->req, &e->req, sizeof(sum->req));
		sum->naks += e->naks;
		sum->ring_faults += e->ring_faults;
		sum->cq_overruns += e->cq_overruns;
		sum->sleeps += e->sleeps;
		sum->polled += e->polled;
		sum->handbacks += e->handbacks;
		sum->rx_own += e->rx_own;
		sum->rx_other += e->rx_other;
	}
}

void round_totals_reset(struct xhcad *d)
{
	for (__u32 k = 0; k < d->neng; k++)
		memset(d->eng[k].host, 0, sizeof(d->eng[k].host));
}

/* Whether a flow queue this engine's round takes from holds frames by
 * holds(): engine 0's multicast queue (unless replication is pending)
 * and the proxy queue (while the proxy takes), the engine's own flow
 * queues not blocked on a full CQ. */
static int queues_hold(struct xhcad *d, int (*holds)(const struct xhcad *, __u32))
{
	if (!eng()->id && ((!mcast_pending(d) && holds(d, XHCA_FLOWQ_MCAST)) ||
			   (proxy_taking(d) && holds(d, XHCA_FLOWQ_PROXY))))
		return 1;
	for (__u32 f = eng()->id; f < d->nflowq; f += d->neng)
		if (!d->fq[f].blocked && holds(d, f))
			return 1;
	return 0;
}

int round_ready(struct xhcad *d)
{
	return sq_ready(d) || resp_credit_due(d) || queues_hold(d, xsk_rx_ready);
}

int round_handed(struct xhcad *d)
{
	return queues_hold(d, xsk_handed_to);
}

int round_busy_poll(struct xhcad *d, __u64 until, int (*side)(struct xhcad *d))
{
	for (unsigned int i = 1;; i++) {
		int r;

		if (round_ready(d))
			return 1;
		if (i == 1) {
			/* a round done and nothing more ready (the loop
			 * polls only after a round): the program whose post
			 * it sent, if it shares this CPU, waits for its
			 * answer (libxhca yielded to this xhcad after the
			 * post, cq.c): its CPU back now, not 16 looks later */
			eng()->handbacks++;
			sched_yield();
		} else if (!(i & 15)) {
			if (now_ns() >= until || xhcad_stop)
				return 0;
			if (side && (r = side(d)))
				return r > 0;
			sched_yield();
		}
		__builtin_ia32_pause();
	}
}

/* Engine 0's own: what the proxy sent back and the proxy queue to it;
 * multicast, whose copies join the flow queues they are for. */
static int eng0_run(struct xhcad *d, int budget)
{
	int n = proxy_serve(d);

	n += proxy_drain(d, budget);
	return n + mcast_run(d, budget);
}

int round_run(struct xhcad *d, int budget, __u64 *wait_ns, int *work)
{
	int n = 0, taken;

	*wait_ns = 0;
	eng()->in_round = 1; /* (completions staged until its end: cq_write) */
	/* The send queues: new requests, retransmissions, completions. */
	taken = sq_run(d, budget, &eng()->sq.more, &eng()->sq.deadline);
	if (!eng()->id)
		taken += eng0_run(d, budget);
	if (d->bus.rate)
		tokens_refill(d);
	while (n < budget) {
		struct xhca_rx_meta m;
		const __u8 *fr;
		__u32 len, group;
		int f = sched_next(&eng()->sched, &ops, d), r;

		if (f < 0)
			break;
		len = heads[f].len;
		if (d->bus.rate && eng()->tokens < len) {
			*wait_ns = (__u64)(((double)len - eng()->tokens) * 1e9 / (double)d->bus.rate) + 1;
			break;
		}
		m = *heads[f].m;
		fr = heads[f].data;
		xsk_take(d, (__u32)f);
		recv_owe_note(d, &m);
		r = deliver_frame(d, (__u32)f, &m, fr, len);
		count(d, r, len);
		if (xsk_taken_copy(d, &group))
			mcast_delivered(d, group, r);
		xsk_done(d);
		d->fq[f].frames++;
		sched_charge(&eng()->sched, (__u32)f, len);
		if (d->bus.rate)
			eng()->tokens -= len;
		n++;
	}
	taken += resp_credits_run(d);
	if (eng()->sq.kick) {
		int more;

		eng()->sq.kick = 0;
		taken += sq_run(d, budget, &more, &eng()->sq.deadline);
		eng()->sq.more |= more;
	}
	*work = n || taken;
	if (n || taken || eng()->nstage) {
		resp_flush_acks(d); /* the ACKs the round owes: one per QP */
		gso_flush(d, NULL); /* the READ responses of the round's last run */
		xsk_tx_kick(d); /* the round's responses, one syscall */
		xsk_flush(d);
		recv_fast_done(); /* (after their completions) */
		recv_owe_done(d); /* (after its answers) */
		cq_notify(d);
		if (!eng()->id)
			proxy_kick(d); /* and the completion records of proxy CQs */
	}
	eng()->in_round = 0;
	/* (every round: another engine's frames may have drained a fill
	 * ring, its own frames come back from the others) */
	xsk_refill(d);
	return n;
}
