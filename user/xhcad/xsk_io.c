/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The AF_XDP layer's data path: a flow queue's frames received (joined
 * when they came in pieces), taken and given back; frames sent on the
 * engine's TX ring (in pieces where they need them) and reclaimed; frames
 * for another interface of this host looped; multicast copies injected
 * into flow queues. The sockets, the UMEM and its frames' ways are set up
 * in xsk.c, whose comment says the whole.
 */
#include "xsk_int.h"

/* (SEQ_CST: the tail is stored so too; an engine going to sleep says so
 * first, then looks here: round_handed) */
int xsk_handed_to(const struct xhcad *d, __u32 f)
{
	const struct xsk_state *xs = d->xs;

	return xs && ((f < d->nflowq &&
		       xs->inj[f].head != __atomic_load_n(&xs->inj[f].tail, __ATOMIC_SEQ_CST)) ||
		      xs->lo[f].head != __atomic_load_n(&xs->lo[f].tail, __ATOMIC_SEQ_CST));
}

int xsk_rx_ready(const struct xhcad *d, __u32 f)
{
	for (__u32 q = 0; d->xs && q < d->fq[f].nsocks; q++) {
		struct fq_sock *s = d->fq[f].socks[q];

		if (s->rx.cached_prod != s->rx.cached_cons ||
		    __atomic_load_n(s->rx.producer, __ATOMIC_ACQUIRE) != s->rx.cached_cons)
			return 1;
	}
	return xsk_handed_to(d, f);
}

int xsk_fds(const struct xhcad *d, __u32 f, int *fds, int max)
{
	int n = 0;

	for (__u32 q = 0; d->xs && q < d->fq[f].nsocks && n < max; q++)
		fds[n++] = d->fq[f].socks[q]->fd;
	return n;
}

/* Room for a frame and its TX ring entries: n pieces (1, or 2 in a jumbo
 * slot, which is contiguous). 0, or -EAGAIN after a kick did not help. */
static int tx_room(struct xhcad *d, __u32 n, __u32 *idx)
{
	struct xsk_state *xs = d->xs;
	struct fq_sock *s = XE(xs)->txs;

	for (int tries = 0; tries < 2; tries++) {
		xsk_tx_reclaim(xs);
		if (!XE(xs)->nfree || (n > 1 && !XE(xs)->ntfree))
			xsk_depot_balance(xs, 1, 0);
		if ((n == 1 ? XE(xs)->nfree : XE(xs)->ntfree) && xsk_ring_prod__reserve(&s->tx, n, idx) == n)
			return 0;
		if (!tries)
			xsk_tx_kick(d);
	}
	XE(xs)->tx_full++;
	return -EAGAIN;
}

void *xsk_tx_alloc(struct xhcad *d, __u32 len)
{
	struct xsk_state *xs = d->xs;
	__u32 n = len > FRAME_SIZE ? 2 : 1;

	if (!len || len > JUMBO_SIZE || (n > 1 && !xs->sg)) {
		errno = EMSGSIZE;
		return NULL;
	}
	if (tx_room(d, n, &XE(xs)->txr_idx)) {
		errno = EAGAIN;
		return NULL;
	}
	XE(xs)->txr_n = n;
	if (n == 1) {
		XE(xs)->txr_addr = XE(xs)->free[--XE(xs)->nfree];
		XE(xs)->held++; /* until the completion ring gives it back */
	} else {
		XE(xs)->txr_addr = XE(xs)->tfree[--XE(xs)->ntfree];
	}
	return (__u8 *)xs->area + XE(xs)->txr_addr;
}

/* The reservation undone: the frame back, the ring entries unused. */
static void tx_cancel(struct xsk_state *xs)
{
	XE(xs)->txs->tx.cached_prod -= XE(xs)->txr_n;
	if (XE(xs)->txr_n == 1) {
		XE(xs)->free[XE(xs)->nfree++] = XE(xs)->txr_addr;
		XE(xs)->held--;
	} else {
		XE(xs)->tfree[XE(xs)->ntfree++] = XE(xs)->txr_addr;
	}
	XE(xs)->txr_n = 0;
}

/* ---- loopback (loopback.c) ---------------------------------------------------- */

static void frame_put_back(struct xsk_state *xs, __u64 frame);

/* A frame (and room for the block in front) for a looped frame of len
 * bytes: an ordinary one, or a jumbo slot; its data's address, or 0. */
static __u64 lo_frame(struct xsk_state *xs, __u32 len)
{
	__u64 a;

	if (!XE(xs)->nfree || !XE(xs)->njfree)
		xsk_depot_balance(xs, 1, xs->sg ? 1 : 0);
	if (len <= FRAME_SIZE - XDP_PACKET_HEADROOM) {
		if (!XE(xs)->nfree)
			return 0;
		a = XE(xs)->free[--XE(xs)->nfree];
		XE(xs)->held++;
		return a + XDP_PACKET_HEADROOM;
	}
	if (len > JUMBO_SIZE - JUMBO_DATA || !XE(xs)->njfree)
		return 0;
	a = XE(xs)->jfree[--XE(xs)->njfree];
	return a + JUMBO_DATA;
}

/* Into f's ring of looped frames (made at its first frame). */
static int lo_push(struct xsk_state *xs, __u32 f, __u64 addr, __u32 len)
{
	struct lo_ring *lr = &xs->lo[f];

	if (!lr->d) {
		lr->d = calloc(xs->lo_cap, sizeof(*lr->d));
		if (!lr->d)
			return -ENOMEM;
	}
	lr->d[lr->tail % xs->lo_cap] = (struct lo_desc){ addr, len };
	__atomic_store_n(&lr->tail, lr->tail + 1, __ATOMIC_SEQ_CST); /* (see xsk_inject) */
	xs->lo_frames++;
	return 0;
}

/* A frame to this interface, as if it came from the wire: xhca_rx runs on
 * it, and a frame it sends to a flow queue goes into that queue's ring of
 * looped frames. -EAGAIN: no room, nothing done (the sender tries again,
 * as with a full TX ring); else 0, whatever xhca_rx decided. */
static int lo_in(struct xhcad *d, const void *frame, __u32 len)
{
	struct xsk_state *xs = d->xs;
	struct xhca_lo_stats *st = &d->lo.stats;
	struct xhca_rx_meta m;
	__u64 a = xs->lo_frames < xs->lo_cap ? lo_frame(xs, len) : 0;
	__u8 *p = (__u8 *)xs->area + a;
	int v;

	if (!a) {
		st->no_room++;
		return -EAGAIN;
	}
	memcpy(p, frame, len);
	v = lo_run(d, p, len, &m);
	if (v == XDP_REDIRECT && (m.flowq < d->nflowq || m.flowq == XHCA_FLOWQ_MCAST ||
				  m.flowq == XHCA_FLOWQ_PROXY)) {
		memcpy(p - META_LEN, &m, META_LEN);
		if (!lo_push(xs, m.flowq, a, len)) {
			struct engine *to = &d->eng[fq_engine(d, m.flowq)];

			xs->lo_mark[a / FRAME_SIZE] = 1;
			st->to_flowq++;
			if (to != eng())
				engine_wake(to, 0); /* (another engine's queue) */
			return 0;
		}
		/* counted into the queue by xhca_rx, and lost after all */
		deq_add(d, m.flowq, 1);
		st->no_room++;
	} else if (v == XDP_PASS) {
		st->passed++;
	} else if (v >= 0) {
		st->consumed++;
	}
	frame_put_back(xs, a - a % FRAME_SIZE);
	return 0;
}

int xsk_lo_recv(struct xhcad *d, int max)
{
	struct xsk_state *xs = d->xs;
	int n = 0, len;

	xsk_depot_balance(xs, 1, 0);
	while (n < max && xs->lo_frames < xs->lo_cap && XE(xs)->nfree &&
	       (len = lo_recv(d, xs->lo_rbuf, JUMBO_SIZE)) > 0) {
		pthread_mutex_lock(&xs->lo_lock);
		lo_in(d, xs->lo_rbuf, (__u32)len);
		pthread_mutex_unlock(&xs->lo_lock);
		n++;
	}
	return n;
}

int xsk_lo_room(const struct xhcad *d)
{
	const struct xsk_state *xs = d->xs;

	/* (more engines: frames from the depot, see xsk_lo_recv) */
	return xs && xs->lo_frames < xs->lo_cap && (xs->neng > 1 || XE(xs)->nfree);
}

__u32 xsk_lo_held(const struct xhcad *d)
{
	return d->xs ? __atomic_load_n(&d->xs->lo_frames, __ATOMIC_RELAXED) : 0;
}

int xsk_frame_looped(const struct xhcad *d, __u64 addr)
{
	return d->xs->lo_mark[addr / FRAME_SIZE];
}

/* Where a frame given to send goes (loopback.c): the wire, or this host. */
static int tx_loop(struct xhcad *d, __u32 len, int *wire)
{
	struct xsk_state *xs = d->xs;
	const __u8 *fr = (const __u8 *)xs->area + XE(xs)->txr_addr;
	int ifindex = 0, r = 0;
	enum lo_dest where = lo_dest(d, fr, len, &ifindex);

	*wire = 1;
	if (where == LO_WIRE) {
		if (fr[0] & 1) /* (a group's MAC; engines count at once) */
			__atomic_fetch_add(&d->lo.stats.mcast_wire, 1, __ATOMIC_RELAXED);
		return 0;
	}
	/* (one engine at a time: looped frames go to any engine's flow
	 * queues, through loopback.c's scratch area and connections) */
	pthread_mutex_lock(&xs->lo_lock);
	switch (where) {
	case LO_WIRE:
		break;
	case LO_MCAST: /* and a copy for the members here */
		if (!lo_in(d, fr, len))
			d->lo.stats.mcast++;
		pthread_mutex_unlock(&xs->lo_lock);
		return 0;
	case LO_SELF:
		r = lo_in(d, fr, len);
		if (!r)
			d->lo.stats.self++;
		break;
	case LO_PEER:
		r = lo_forward(d, ifindex, fr, len);
		break;
	}
	pthread_mutex_unlock(&xs->lo_lock);
	*wire = 0;
	if (r)
		XE(xs)->tx_full++;
	tx_cancel(xs);
	return r;
}

int xsk_tx_submit(struct xhcad *d, __u32 len)
{
	struct xsk_state *xs = d->xs;
	struct fq_sock *s = XE(xs)->txs;
	__u32 off = 0;
	int r, wire;

	if (!XE(xs)->txr_n)
		return -EINVAL;
	if (!len || len > XE(xs)->txr_n * FRAME_SIZE) {
		tx_cancel(xs);
		return -EMSGSIZE;
	}
	r = tx_loop(d, len, &wire);
	if (!wire)
		return r;
	for (__u32 i = 0; i < XE(xs)->txr_n; i++) {
		struct xdp_desc *desc = xsk_ring_prod__tx_desc(&s->tx, XE(xs)->txr_idx + i);
		__u32 part = len - off < FRAME_SIZE ? len - off : FRAME_SIZE;

		desc->addr = XE(xs)->txr_addr + off;
		desc->len = part;
		desc->options = i + 1 < XE(xs)->txr_n ? XDP_PKT_CONTD : 0;
		off += part;
	}
	if (off < len || (XE(xs)->txr_n == 2 && len <= FRAME_SIZE)) { /* (a jumbo slot for one frame) */
		tx_cancel(xs);
		return -EMSGSIZE;
	}
	xsk_ring_prod__submit(&s->tx, XE(xs)->txr_n);
	XE(xs)->tx_pending += XE(xs)->txr_n;
	XE(xs)->tx_frames++;
	XE(xs)->txr_n = 0;
	return 0;
}

void xsk_tx_abort(struct xhcad *d)
{
	if (XE(d->xs)->txr_n)
		tx_cancel(d->xs);
}

int xsk_tx(struct xhcad *d, const void *frame, __u32 len)
{
	void *p = xsk_tx_alloc(d, len);

	if (!p)
		return -errno;
	memcpy(p, frame, len);
	return xsk_tx_submit(d, len);
}

void xsk_tx_kick(struct xhcad *d)
{
	struct xsk_state *xs = d->xs;

	struct xsk_ring_prod *tx = &XE(xs)->txs->tx;

	if (!XE(xs)->tx_pending)
		return;
	/* Copy mode: the kernel sends on this call, at most 32 frames (its TX
	 * batch), and says EAGAIN when more wait: call again until it took
	 * the ring's every frame (frames left there would wait for the next
	 * kick, which may be a retransmission timer away). */
	for (int i = 0; i < 256; i++) {
		__u32 was = __atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE);
		int err = sendto(XE(xs)->txs->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 ? errno : 0;

		if (err && err != EAGAIN && err != EBUSY && err != ENOBUFS) {
			pr_debug("AF_XDP TX: %s\n", strerror(err));
			break;
		}
		xsk_tx_reclaim(xs); /* room in the completion ring for the next batch */
		if (__atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE) == *tx->producer)
			break;
		/* busy, or out of buffers, and nothing taken: the next kick */
		if (err && err != EAGAIN && __atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE) == was)
			break;
	}
	XE(xs)->tx_pending = __atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE) != *tx->producer;
}

int xsk_tx_pending(const struct xhcad *d)
{
	return d->xs && XE(d->xs)->tx_pending;
}

void xsk_tx_stats(const struct xhcad *d, __u64 *frames, __u64 *full)
{
	*frames = *full = 0;
	for (__u32 k = 0; d->xs && k < d->xs->neng; k++) {
		*frames += d->xs->e[k].tx_frames;
		*full += d->xs->e[k].tx_full;
	}
}

/* A frame back to where it came from: the free stack or the jumbo slots. */
static void frame_put_back(struct xsk_state *xs, __u64 frame)
{
	xs->lo_mark[frame / FRAME_SIZE] = 0;
	if (frame >= xs->jumbo_base) {
		XE(xs)->jfree[XE(xs)->njfree++] = frame;
		return;
	}
	XE(xs)->held--;
	XE(xs)->free[XE(xs)->nfree++] = frame;
}

/* The i-th descriptor after the head of s's RX ring. */
static const struct xdp_desc *rx_desc(struct fq_sock *s, __u32 i)
{
	return xsk_ring_cons__rx_desc(&s->rx, s->rx.cached_cons + i);
}

/* Drops the head frame of s's ring, of n descriptors (flow queue f). */
/* The frames of the first n descriptors of s's ring back to the free stack
 * (never held: they were in the RX ring). */
static void rx_free_pieces(struct xsk_state *xs, struct fq_sock *s, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		const struct xdp_desc *p = rx_desc(s, i);

		XE(xs)->free[XE(xs)->nfree++] = p->addr - p->addr % FRAME_SIZE;
	}
}

static void rx_drop_head(struct xhcad *d, struct fq_sock *s, __u32 f, __u32 n)
{
	rx_free_pieces(d->xs, s, n);
	s->rx.cached_cons += n;
	s->taken += n;
	XE(d->xs)->jumbo_drops++;
	deq_add(d, f, 1);
}

/* The descriptor at the head of s's RX ring (flow queue f), NULL when it
 * is empty. A frame of several descriptors is made one first (see above). */
static const struct xdp_desc *rx_peek(struct xhcad *d, struct fq_sock *s, __u32 f)
{
	struct xsk_state *xs = d->xs;

	while (xsk_cons_nb_avail(&s->rx, 1)) {
		/* (ours until released: the ring is mapped writable) */
		struct xdp_desc *h = (struct xdp_desc *)rx_desc(s, 0);
		__u32 n = 0, total = 0, avail;
		__u8 *to;
		__u64 j;

		if (!(h->options & XDP_PKT_CONTD) || (h->options & OPT_JOINED))
			return h;
		/* The kernel publishes a frame's descriptors together. */
		avail = s->rx.cached_prod - s->rx.cached_cons;
		for (;;) {
			const struct xdp_desc *p;

			if (n == avail || n > 0xff)
				break;
			p = rx_desc(s, n++);
			total += p->len;
			if (!(p->options & XDP_PKT_CONTD))
				break;
		}
		if (n == avail && (rx_desc(s, n - 1)->options & XDP_PKT_CONTD)) {
			s->rx.cached_prod = __atomic_load_n(s->rx.producer, __ATOMIC_ACQUIRE);
			if (s->rx.cached_prod - s->rx.cached_cons > avail)
				continue; /* more came meanwhile: look again */
			return NULL;  /* cannot happen: the rest is not there yet */
		}
		if (!XE(xs)->njfree)
			xsk_depot_balance(xs, 0, 1);
		if (!XE(xs)->njfree || total > JUMBO_SIZE - JUMBO_DATA || n > 0xff) {
			rx_drop_head(d, s, f, n);
			continue;
		}
		j = XE(xs)->jfree[--XE(xs)->njfree];
		to = (__u8 *)xs->area + j + JUMBO_DATA;
		memcpy(to - META_LEN, (const __u8 *)xs->area + h->addr - META_LEN, META_LEN);
		for (__u32 i = 0, off = 0; i < n; i++) {
			const struct xdp_desc *p = rx_desc(s, i);

			memcpy(to + off, (const __u8 *)xs->area + p->addr, p->len);
			off += p->len;
		}
		rx_free_pieces(xs, s, n);
		h->addr = j + JUMBO_DATA;
		h->len = total;
		h->options = OPT_JOINED | (n - 1) << 8;
		XE(xs)->jumbo_frames++;
		return h;
	}
	return NULL;
}

int xsk_head(struct xhcad *d, __u32 f, const struct xhca_rx_meta **meta, const __u8 **data,
	     __u32 *len)
{
	struct xsk_state *xs = d->xs;
	const struct xhca_rx_meta *best_m = NULL;
	const struct xdp_desc *best = NULL;
	struct lo_ring *lr = &xs->lo[f];

	xs->cand[f] = NULL;
	xs->cand_inj[f] = 0;
	xs->cand_lo[f] = 0;
	if (f < d->nflowq && xs->inj[f].head != __atomic_load_n(&xs->inj[f].tail, __ATOMIC_ACQUIRE)) {
		struct inj_desc *id = &xs->inj[f].d[xs->inj[f].head % xs->inj_cap];

		best_m = &id->m;
		xs->cand_inj[f] = 1;
	}
	if (lr->head != __atomic_load_n(&lr->tail, __ATOMIC_ACQUIRE)) {
		struct lo_desc *ld = &lr->d[lr->head % xs->lo_cap];
		const struct xhca_rx_meta *m = (const void *)((const __u8 *)xs->area + ld->addr -
							      META_LEN);

		if (!best_m || m->rx_ns < best_m->rx_ns) {
			best_m = m;
			xs->cand_inj[f] = 0;
			xs->cand_lo[f] = 1;
		}
	}
	for (__u32 q = 0; q < d->fq[f].nsocks; q++) {
		struct fq_sock *s = d->fq[f].socks[q];
		const struct xdp_desc *desc = rx_peek(d, s, f);
		const struct xhca_rx_meta *m;

		if (!desc)
			continue;
		m = (const void *)((const __u8 *)xs->area + desc->addr - META_LEN);
		/* Oldest first over the RX queues of one flow queue, its
		 * injected multicast copies and its looped frames. */
		if (!best_m || m->rx_ns < best_m->rx_ns) {
			best = desc;
			best_m = m;
			xs->cand[f] = s;
			xs->cand_inj[f] = 0;
			xs->cand_lo[f] = 0;
		}
	}
	if (xs->cand_inj[f]) {
		struct inj_desc *id = &xs->inj[f].d[xs->inj[f].head % xs->inj_cap];

		*meta = &id->m;
		*data = (const __u8 *)xs->area + id->addr;
		*len = id->len;
		return 1;
	}
	if (xs->cand_lo[f]) {
		struct lo_desc *ld = &lr->d[lr->head % xs->lo_cap];

		*meta = best_m;
		*data = (const __u8 *)xs->area + ld->addr;
		*len = ld->len;
		return 1;
	}
	if (!best)
		return 0;
	*meta = best_m;
	*data = (const __u8 *)xs->area + best->addr;
	*len = best->len;
	return 1;
}

/* The head of f's looped frames out of its ring (held already: no
 * ring slot to release). Its address. */
static __u64 lo_pop(struct xsk_state *xs, __u32 f)
{
	struct lo_ring *lr = &xs->lo[f];
	__u64 addr = lr->d[lr->head % xs->lo_cap].addr;

	pthread_mutex_lock(&xs->lo_lock);
	lr->head++;
	xs->lo_frames--;
	pthread_mutex_unlock(&xs->lo_lock);
	xs->cand_lo[f] = 0;
	return addr;
}

void xsk_take(struct xhcad *d, __u32 f)
{
	struct xsk_state *xs = d->xs;
	struct fq_sock *s = xs->cand[f];
	const struct xdp_desc *desc;

	XE(xs)->taken_inj = 0;
	XE(xs)->taken_lo = 0;
	if (xs->cand_inj[f]) {
		/* a multicast copy: the frame is held already, by its references */
		XE(xs)->taken_desc = xs->inj[f].d[xs->inj[f].head % xs->inj_cap];
		/* (engine 0 injects, f's engine takes) */
		__atomic_store_n(&xs->inj[f].head, xs->inj[f].head + 1, __ATOMIC_RELEASE);
		XE(xs)->taken_inj = 1;
		xs->cand_inj[f] = 0;
		return;
	}
	if (xs->cand_lo[f]) {
		__u64 a = lo_pop(xs, f);

		XE(xs)->taken = a - a % FRAME_SIZE;
		XE(xs)->have_taken = 1;
		XE(xs)->taken_lo = 1;
		if (f != XHCA_FLOWQ_MCAST && f != XHCA_FLOWQ_PROXY)
			xs->deq_pending[f]++;
		return;
	}
	if (!s)
		return;
	desc = xsk_ring_cons__rx_desc(&s->rx, s->rx.cached_cons);
	XE(xs)->taken = desc->addr - desc->addr % FRAME_SIZE;
	XE(xs)->have_taken = 1;
	s->rx.cached_cons += 1 + OPT_SKIP(desc->options);
	s->taken += 1 + OPT_SKIP(desc->options);
	if (f < d->nflowq) /* (a QP's flow queue: --steer) */
		*(s->rxq % xs->neng == eng()->id ? &eng()->rx_own : &eng()->rx_other) += 1;
	if (XE(xs)->taken < xs->jumbo_base)
		XE(xs)->held++;
	xs->cand[f] = NULL;
	/* the replication queue's: when the frame is free; the proxy's: when
	 * the proxy has done it */
	if (f != XHCA_FLOWQ_MCAST && f != XHCA_FLOWQ_PROXY)
		xs->deq_pending[f]++;
}

void xsk_flush(struct xhcad *d)
{
	struct xsk_state *xs = d->xs;

	for (__u32 i = 0; i < xs->nrxq * xs->nsq; i++) {
		if (fq_engine(d, key_fq(d, i % xs->nsq)) != eng()->id || !xs->socks[i].taken)
			continue;
		xsk_ring_cons__release(&xs->socks[i].rx, xs->socks[i].taken);
		xs->socks[i].taken = 0;
	}
	if (xs->rep.fd >= 0 && xs->rep.taken && !eng()->id) {
		xsk_ring_cons__release(&xs->rep.rx, xs->rep.taken);
		xs->rep.taken = 0;
	}
	/* The frames left their flow queues: the backlogs fall. */
	for (__u32 f = eng()->id; f < d->nflowq; f += xs->neng) {
		if (!xs->deq_pending[f])
			continue;
		deq_add(d, f, xs->deq_pending[f]);
		xs->deq_pending[f] = 0;
	}
}

/* Back to the free stack, and out of the replication queue's backlog. */
static void frame_release(struct xhcad *d, __u64 frame)
{
	struct xsk_state *xs = d->xs;

	frame_put_back(xs, frame);
	deq_add(d, XHCA_FLOWQ_MCAST, 1);
}

void xsk_done(struct xhcad *d)
{
	struct xsk_state *xs = d->xs;

	if (XE(xs)->taken_inj) {
		XE(xs)->taken_inj = 0;
		xsk_frame_put(d, XE(xs)->taken_desc.addr);
		return;
	}
	if (!XE(xs)->have_taken)
		return;
	XE(xs)->have_taken = 0;
	frame_put_back(xs, XE(xs)->taken);
}

int xsk_taken_copy(const struct xhcad *d, __u32 *group)
{
	if (!XE(d->xs)->taken_inj)
		return 0;
	*group = XE(d->xs)->taken_desc.group;
	return 1;
}

/* ---- the replication queue --------------------------------------------------- */

int xsk_mcast_take(struct xhcad *d, const struct xhca_rx_meta **meta, const __u8 **data,
		   __u32 *len, __u64 *addr)
{
	struct xsk_state *xs = d->xs;
	struct fq_sock *s;
	const struct xdp_desc *desc;

	if (!xsk_head(d, XHCA_FLOWQ_MCAST, meta, data, len))
		return 0;
	if (xs->cand_lo[XHCA_FLOWQ_MCAST]) {
		/* held already; its stored copy's one reference */
		*addr = lo_pop(xs, XHCA_FLOWQ_MCAST);
		xs->refs[*addr / FRAME_SIZE] = 1;
		XE(xs)->taken_lo = 1;
		return 1;
	}
	XE(xs)->taken_lo = 0;
	s = xs->cand[XHCA_FLOWQ_MCAST];
	desc = xsk_ring_cons__rx_desc(&s->rx, s->rx.cached_cons);
	*addr = desc->addr;
	s->rx.cached_cons += 1 + OPT_SKIP(desc->options);
	s->taken += 1 + OPT_SKIP(desc->options);
	if (desc->addr < xs->jumbo_base)
		XE(xs)->held++;
	xs->cand[XHCA_FLOWQ_MCAST] = NULL;
	xs->refs[desc->addr / FRAME_SIZE] = 1; /* stored: the payload's own reference */
	return 1;
}

__u32 xsk_frame_get(struct xhcad *d, __u64 addr)
{
	/* (engine 0 adds references, the members' engines drop them) */
	return __atomic_add_fetch(&d->xs->refs[addr / FRAME_SIZE], 1, __ATOMIC_RELAXED);
}

void xsk_frame_put(struct xhcad *d, __u64 addr)
{
	struct xsk_state *xs = d->xs;
	__u16 *r = &xs->refs[addr / FRAME_SIZE], was = __atomic_load_n(r, __ATOMIC_RELAXED);

	do {
		if (!was) {
			pr_warn("multicast frame 0x%llx released twice\n", (unsigned long long)addr);
			return;
		}
	} while (!__atomic_compare_exchange_n(r, &was, (__u16)(was - 1), 0, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	if (was == 1)
		frame_release(d, addr - addr % FRAME_SIZE);
}

int xsk_inject(struct xhcad *d, __u32 f, const struct xhca_rx_meta *m, __u64 addr, __u32 len,
	       __u32 group)
{
	struct xsk_state *xs = d->xs;
	struct inj_ring *r = &xs->inj[f];
	struct inj_desc *id;

	if (f >= d->nflowq || r->tail - r->head >= xs->inj_cap)
		return -ENOBUFS;
	id = &r->d[r->tail % xs->inj_cap];
	id->m = *m;
	id->addr = addr;
	id->len = len;
	id->group = group;
	/* (f's engine takes it; it may sleep: the store before the look at
	 * whether it does, as it says so before it looks at the ring) */
	__atomic_store_n(&r->tail, r->tail + 1, __ATOMIC_SEQ_CST);
	if (fq_engine(d, f) != eng()->id)
		engine_wake(&d->eng[fq_engine(d, f)], 0);
	return 0;
}

__u32 xsk_injected(const struct xhcad *d, __u32 f)
{
	return d->xs->inj[f].tail - __atomic_load_n(&d->xs->inj[f].head, __ATOMIC_ACQUIRE);
}

