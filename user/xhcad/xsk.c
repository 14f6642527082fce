/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The flow queues' sockets: one UMEM shared by an AF_XDP socket per RX queue
 * and flow queue (the kernel lets several sockets bind one queue with a
 * shared UMEM; each keeps its own RX ring, which is the flow queue's ring for
 * that RX queue). The sockets of one RX queue share its fill ring. Copy mode
 * on veth; zero-copy where the driver offers it.
 *
 * UMEM frames are in exactly one place: xhcad's free stack, a fill ring, the
 * kernel (taken from a fill ring, not yet in an RX ring), an RX ring, or
 * held by xhcad while it processes one. A multicast frame is held from the
 * moment the replication engine takes it until its reference count (the
 * patent's payload reference counter) falls to zero: one reference of its
 * own while the engine injects descriptors, one per descriptor injected
 * into a member's flow queue, each dropped when that copy was delivered or
 * refused. Then it goes back, once.
 *
 * Each RX queue has one socket per flow queue, one for the replication
 * queue (XHCA_FLOWQ_MCAST), at local index nflowq, and one for the proxy
 * queue (XHCA_FLOWQ_PROXY), at nflowq + 1. The proxy queue's frames leave
 * its backlog when the proxy thread has finished them (proxy.c), not when
 * they are taken: its backlog is the proxy's, which the load limit reads.
 *
 * The sockets are set up here with the raw AF_XDP calls: libxdp's
 * xsk_socket__create_shared() always names the UMEM's first socket as the
 * one to share with, which the kernel reads as "another queue, bring your
 * own fill ring" for every socket after the first on queues other than 0.
 * A second socket on a queue must name that queue's first socket. Enough frames stay out of the fill
 * rings that every flow queue can hold its high watermark without starving
 * the others of fill buffers (the patent's per-port minimum buffer).
 *
 * Frames larger than a UMEM frame (path MTU 4096: up to 4.2 KB, where a
 * frame holds 3840 bytes after the kernel's headroom) travel as several
 * descriptors (XDP_USE_SG, Linux 6.6), XDP_PKT_CONTD on all but the last.
 * On receive xhcad makes them one when such a frame reaches the head of its
 * ring: it copies the pieces into a jumbo slot (two adjacent UMEM frames
 * after the ordinary ones, never in a fill ring), gives the pieces' frames
 * back at once and rewrites the head descriptor to name the slot (the
 * kernel never reads an RX descriptor back); from there on the frame is
 * one like any other, multicast references included. No slot free, or a
 * frame over a slot's 7936 bytes (a link MTU over that): the frame is
 * dropped, counted (jumbo_drops), as a full ring would. On send a
 * frame goes out in as many descriptors as it needs.
 */
#include "xsk_int.h"

int xsk_nrxq(const struct xhcad *d)
{
	return d->xs ? (int)d->xs->nrxq : 0;
}

int xsk_zerocopy(const struct xhcad *d)
{
	return d->xs && d->xs->zerocopy;
}

int xsk_multibuf(const struct xhcad *d)
{
	return d->xs && d->xs->sg;
}

__u32 xsk_max_path_mtu(const struct xhcad *d)
{
	/* without multi-buffer a frame is one UMEM frame's 3840 bytes */
	return xsk_multibuf(d) ? 4096 : 2048;
}

static int sock_zerocopy(int fd)
{
	struct xdp_options o = {};
	socklen_t len = sizeof(o);

	return !getsockopt(fd, SOL_XDP, XDP_OPTIONS, &o, &len) && (o.flags & XDP_OPTIONS_ZEROCOPY);
}

/* Maps one of a socket's rings and points the libxdp ring struct at it. */
static int map_ring(int fd, off_t pgoff, const struct xdp_ring_offset *ro, __u32 n, size_t esize,
		    struct mapping *mp, __u32 **prod, __u32 **cons, void **ring, __u32 **flags)
{
	mp->len = ro->desc + (size_t)n * esize;
	mp->p = mmap(NULL, mp->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, pgoff);
	if (mp->p == MAP_FAILED) {
		mp->p = NULL;
		return -errno;
	}
	*prod = (__u32 *)((char *)mp->p + ro->producer);
	*cons = (__u32 *)((char *)mp->p + ro->consumer);
	*ring = (char *)mp->p + ro->desc;
	*flags = (__u32 *)((char *)mp->p + ro->flags);
	return 0;
}

static void unmap(struct mapping *mp)
{
	if (mp->p)
		munmap(mp->p, mp->len);
	mp->p = NULL;
}

/*
 * One socket of queue q. first: the queue's first socket, which owns its
 * fill and completion rings; umem_fd: the socket that registered the UMEM
 * (shared with for another queue); peer_fd: the queue's first socket (shared
 * with for the same queue).
 */
static int sock_open(struct xhcad *d, int ifindex, struct fq_sock *s, struct xsk_rxq *rq, __u32 q,
		     int first, int umem_fd, int peer_fd)
{
	struct sockaddr_xdp sxdp = { .sxdp_family = AF_XDP, .sxdp_ifindex = (__u32)ifindex,
				     .sxdp_queue_id = q };
	struct xdp_mmap_offsets off;
	socklen_t olen = sizeof(off);
	__u32 n = d->ring_size;
	int err;

	if (s->fd < 0) {
		s->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
		if (s->fd < 0)
			return -errno;
	}
	if (first && (setsockopt(s->fd, SOL_XDP, XDP_UMEM_FILL_RING, &n, sizeof(n)) ||
		      setsockopt(s->fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &n, sizeof(n))))
		return -errno;
	if (setsockopt(s->fd, SOL_XDP, XDP_RX_RING, &n, sizeof(n)) ||
	    (s->tx_map.len == 1 && setsockopt(s->fd, SOL_XDP, XDP_TX_RING, &n, sizeof(n))) ||
	    getsockopt(s->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &olen))
		return -errno;
	if (first) {
		err = map_ring(s->fd, XDP_UMEM_PGOFF_FILL_RING, &off.fr, n, sizeof(__u64),
			       &rq->fill_map, &rq->fill.producer, &rq->fill.consumer,
			       &rq->fill.ring, &rq->fill.flags);
		if (!err)
			err = map_ring(s->fd, XDP_UMEM_PGOFF_COMPLETION_RING, &off.cr, n,
				       sizeof(__u64), &rq->comp_map, &rq->comp.producer,
				       &rq->comp.consumer, &rq->comp.ring, &rq->comp.flags);
		if (err)
			return err;
		rq->fill.mask = rq->comp.mask = n - 1;
		rq->fill.size = rq->comp.size = n;
		rq->fill.cached_prod = *rq->fill.producer;
		rq->fill.cached_cons = *rq->fill.consumer + n; /* libxdp's convention */
		rq->comp.cached_prod = *rq->comp.producer;
		rq->comp.cached_cons = *rq->comp.consumer;
	}
	err = map_ring(s->fd, XDP_PGOFF_RX_RING, &off.rx, n, sizeof(struct xdp_desc), &s->rx_map,
		       &s->rx.producer, &s->rx.consumer, &s->rx.ring, &s->rx.flags);
	if (err)
		return err;
	if (s->tx_map.len == 1) {
		/* asked for (xsk_init): a TX ring, for the responses xhcad sends */
		err = map_ring(s->fd, XDP_PGOFF_TX_RING, &off.tx, n, sizeof(struct xdp_desc),
			       &s->tx_map, &s->tx.producer, &s->tx.consumer, &s->tx.ring,
			       &s->tx.flags);
		if (err)
			return err;
		s->tx.mask = n - 1;
		s->tx.size = n;
		s->tx.cached_prod = *s->tx.producer;
		s->tx.cached_cons = *s->tx.consumer + n;
	}
	s->rx.mask = n - 1;
	s->rx.size = n;
	s->rx.cached_prod = *s->rx.producer;
	s->rx.cached_cons = *s->rx.consumer;
	if (s->fd != umem_fd) {
		/* (the UMEM's flags, SG too, hold for every socket sharing it) */
		sxdp.sxdp_flags = XDP_SHARED_UMEM;
		sxdp.sxdp_shared_umem_fd = (__u32)(first ? umem_fd : peer_fd);
	} else {
		sxdp.sxdp_flags = XDP_USE_SG;
		if (!bind(s->fd, (struct sockaddr *)&sxdp, sizeof(sxdp))) {
			d->xs->sg = 1;
			return 0;
		}
		if (errno != EINVAL)
			return -errno;
		sxdp.sxdp_flags = 0; /* (Linux < 6.6: said at start, kfeat.c) */
	}
	if (bind(s->fd, (struct sockaddr *)&sxdp, sizeof(sxdp)))
		return -errno;
	return 0;
}

void xsk_engines(struct xhcad *d)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	__u32 nrxq, ntxq, n, most;

	dev_queues(d->ifname, &nrxq, &ntxq);
	n = d->neng ? d->neng : cpus > 0 ? (__u32)cpus : 1;
	most = nrxq;
	if (d->nflowq < most)
		most = d->nflowq;
	if (most > XHCA_ENGINES_MAX)
		most = XHCA_ENGINES_MAX;
	if (n > most) {
		if (d->neng)
			pr_warn("--engines %u: %s has %u RX queues and xhcad %u flow queues; "
				"running %u engines\n", d->neng, d->ifname, nrxq, d->nflowq, most);
		n = most;
	}
	d->neng = n ? n : 1;
}



/* Every engine's stacks (each can hold every frame or slot: a frame is
 * freed by whichever engine is done with it), and the depot's. */
static int stacks_alloc(struct xsk_state *xs)
{
	struct xsk_depot *dp = &xs->depot;

	for (__u32 k = 0; k < xs->neng; k++) {
		struct xsk_eng *e = &xs->e[k];

		e->free = calloc(xs->nframes, sizeof(*e->free));
		e->jfree = calloc(xs->njumbo + 1, sizeof(*e->jfree));
		e->tfree = calloc(TX_JUMBO, sizeof(*e->tfree));
		if (!e->free || !e->jfree || !e->tfree)
			return -ENOMEM;
	}
	dp->free = calloc(xs->nframes, sizeof(*dp->free));
	dp->jfree = calloc(xs->njumbo + 1, sizeof(*dp->jfree));
	if (!dp->free || !dp->jfree)
		return -ENOMEM;
	pthread_mutex_init(&dp->lock, NULL);
	return 0;
}

static void stacks_free(struct xsk_state *xs)
{
	for (__u32 k = 0; k < XHCA_ENGINES_MAX; k++) {
		free(xs->e[k].free);
		free(xs->e[k].jfree);
		free(xs->e[k].tfree);
	}
	free(xs->depot.free);
	free(xs->depot.jfree);
}

static void stack_push(struct xsk_state *xs, __u32 k, int jumbo, __u64 a)
{
	struct xsk_eng *e = &xs->e[k];

	if (jumbo)
		e->jfree[e->njfree++] = a;
	else
		e->free[e->nfree++] = a;
}

/* Moves up to n entries from one stack to another. */
static __u32 stack_move(__u64 *to, __u32 *nto, __u64 *from, __u32 *nfrom, __u32 n)
{
	if (n > *nfrom)
		n = *nfrom;
	memcpy(to + *nto, from + *nfrom - n, n * sizeof(*to));
	*nto += n;
	*nfrom -= n;
	return n;
}

#define CACHE 64		/* frames an engine keeps beyond what it needs now */
#define JCACHE 8		/* ... jumbo slots */

/* The running engine's stacks: at least need frames and jneed slots (as
 * far as the depot has them), at most CACHE (JCACHE) beyond that twice
 * over; the rest back to the depot. So no engine holds frames another
 * needs: an engine that sleeps holds a few at most. */
void xsk_depot_balance(struct xsk_state *xs, __u32 need, __u32 jneed)
{
	struct xsk_eng *e = XE(xs);
	struct xsk_depot *dp = &xs->depot;

	if (xs->neng == 1)
		return;
	if (e->nfree >= need && e->nfree <= need + 2 * CACHE && e->njfree >= jneed &&
	    e->njfree <= jneed + 2 * JCACHE)
		return;
	pthread_mutex_lock(&dp->lock);
	if (e->nfree < need)
		stack_move(e->free, &e->nfree, dp->free, &dp->nfree, need + CACHE - e->nfree);
	else if (e->nfree > need + 2 * CACHE)
		stack_move(dp->free, &dp->nfree, e->free, &e->nfree, e->nfree - need - CACHE);
	if (e->njfree < jneed)
		stack_move(e->jfree, &e->njfree, dp->jfree, &dp->njfree, jneed + JCACHE - e->njfree);
	else if (e->njfree > jneed + 2 * JCACHE)
		stack_move(dp->jfree, &dp->njfree, e->jfree, &e->njfree, e->njfree - jneed - JCACHE);
	pthread_mutex_unlock(&dp->lock);
}

/* Frames the kernel has sent come back from queue 0's completion ring: an
 * ordinary frame to the free stack, a jumbo slot (its first piece; the
 * second names the same slot) to its own. */
void xsk_tx_reclaim(struct xsk_state *xs)
{
	struct xsk_ring_cons *comp = XE(xs)->comp;
	__u32 idx, n = xsk_ring_cons__peek(comp, 64, &idx);

	for (__u32 i = 0; i < n; i++) {
		__u64 a = *xsk_ring_cons__comp_addr(comp, idx + i);

		if (a >= xs->tjumbo_base) {
			if (!((a - xs->tjumbo_base) % JUMBO_SIZE))
				XE(xs)->tfree[XE(xs)->ntfree++] = a;
			continue;
		}
		XE(xs)->free[XE(xs)->nfree++] = a - a % FRAME_SIZE;
		XE(xs)->held--;
	}
	if (n)
		xsk_ring_cons__release(comp, n);
}

void xsk_refill(struct xhcad *d)
{
	struct xsk_state *xs = d->xs;

	xsk_tx_reclaim(xs);
	/* Every queue's: an engine that takes frames from a queue refills it
	 * (its owner may sleep); one engine at a time (a lock, tried: another
	 * has it in hand) */
	for (__u32 q = 0; q < xs->nrxq; q++) {
		struct xsk_rxq *r = &xs->rxq[q];
		__u32 level;

		if (xs->neng == 1) {
			xsk_refill_ring(xs, &r->fill, xs->fill_target);
			continue;
		}
		level = ring_level(r->fill.producer, r->fill.consumer);
		if (level >= xs->fill_target ||
		    __atomic_exchange_n(&r->fill_lock, 1, __ATOMIC_ACQUIRE))
			continue;
		xsk_depot_balance(xs, xs->fill_target - level, 0);
		xsk_refill_ring(xs, &r->fill, xs->fill_target);
		spin_unlock(&r->fill_lock);
	}
	xsk_depot_balance(xs, 0, 0);
	if (xs->rep.fd >= 0 && !eng()->id)
		xsk_refill_ring(xs, &xs->rep_rxq.fill, REP_FILL);
}

/* The UMEM's area (frames, then jumbo slots) and the free stacks. */
static int umem_alloc(struct xhcad *d, struct xsk_state *xs)
{
	/* Fill rings get what the flow queues' watermarks leave: each flow
	 * queue can hold high frames without touching the fill buffers. */
	__u32 reserve = d->nflowq * d->fqm[0].high + d->fqm[XHCA_FLOWQ_MCAST].high +
			d->fqm[XHCA_FLOWQ_PROXY].high;

	if (reserve + xs->nrxq * 64 > xs->nframes) {
		pr_warn("--umem-frames %u is too few for %u flow queues on %u RX queues; give at "
			"least %u\n", xs->nframes, d->nflowq, xs->nrxq, reserve + xs->nrxq * 64);
		return -EINVAL;
	}
	xs->fill_target = (xs->nframes - reserve) / xs->nrxq;
	if (xs->fill_target > d->ring_size)
		xs->fill_target = d->ring_size;
	/* a jumbo slot for every 16 frames: frames of several descriptors
	 * waiting at a ring's head, or held for multicast */
	xs->njumbo = d->jumbo_slots >= 0 ? (__u32)d->jumbo_slots : xs->nframes / 16;
	xs->jumbo_base = (__u64)xs->nframes * FRAME_SIZE;
	xs->tjumbo_base = xs->jumbo_base + (__u64)xs->njumbo * JUMBO_SIZE;
	xs->area_len = xs->tjumbo_base + (__u64)TX_JUMBO * xs->neng * JUMBO_SIZE;
	xs->area = mmap(NULL, xs->area_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (xs->area == MAP_FAILED) {
		xs->area = NULL;
		return -errno;
	}
	xs->refs = calloc(xs->area_len / FRAME_SIZE, sizeof(*xs->refs));
	xs->rxq = calloc(xs->nrxq, sizeof(*xs->rxq));
	xs->nsq = d->nflowq + 2;
	xs->socks = calloc(xs->nrxq * xs->nsq, sizeof(*xs->socks));
	if (!xs->refs || !xs->rxq || !xs->socks || stacks_alloc(xs))
		return -ENOMEM;
	/* the frames and slots dealt out: an engine's share each, the
	 * rest in the depot; the slots for sending, TX_JUMBO each */
	for (__u32 i = 0; i < xs->nframes; i++)
		stack_push(xs, i % xs->neng, 0, (__u64)(xs->nframes - 1 - i) * FRAME_SIZE);
	for (__u32 i = 0; i < xs->njumbo; i++)
		stack_push(xs, i % xs->neng, 1, xs->jumbo_base + (__u64)(xs->njumbo - 1 - i) * JUMBO_SIZE);
	for (__u32 k = 0; k < xs->neng; k++)
		for (__u32 i = 0; i < TX_JUMBO; i++)
			xs->e[k].tfree[xs->e[k].ntfree++] =
				xs->tjumbo_base + ((__u64)k * TX_JUMBO + TX_JUMBO - 1 - i) * JUMBO_SIZE;
	/* looped frames: at most a ring's worth, and a quarter of the frames
	 * (the fill rings keep the rest) */
	xs->lo_cap = d->ring_size < xs->nframes / 4 ? d->ring_size : xs->nframes / 4;
	xs->lo_rbuf = malloc(JUMBO_SIZE);
	xs->lo_mark = calloc(xs->area_len / FRAME_SIZE, 1);
	if (!xs->lo_rbuf || !xs->lo_mark)
		return -ENOMEM;
	xs->inj_cap = d->mcast_credits;
	for (__u32 f = 0; f < d->nflowq; f++) {
		xs->inj[f].d = calloc(xs->inj_cap, sizeof(*xs->inj[f].d));
		if (!xs->inj[f].d)
			return -ENOMEM;
	}
	for (__u32 i = 0; i < xs->nrxq * xs->nsq; i++)
		xs->socks[i].fd = -1;
	return 0;
}

/* The first socket registers the UMEM; it also sends (a TX ring). */
static int umem_register(struct xsk_state *xs)
{
	struct xdp_umem_reg mr = {};
	int err, fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	xs->socks[0].fd = fd;
	xs->socks[0].tx_map.len = 1;
	mr.addr = (__u64)(unsigned long)xs->area;
	mr.len = xs->area_len;
	mr.chunk_size = FRAME_SIZE;
	if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &mr, sizeof(mr))) {
		err = -errno;
		pr_warn("cannot register the AF_XDP UMEM (%u frames): %s\n", xs->nframes,
			strerror(-err));
		return err;
	}
	return fd;
}

/* A socket per RX queue and flow queue, bound and put in xhca_xsks. */
static int socks_open(struct xhcad *d, struct xsk_state *xs, int umem_fd)
{
	int err;

	for (__u32 q = 0; q < xs->nrxq; q++) {
		for (__u32 i = 0; i < xs->nsq; i++) {
			struct fq_sock *s = &xs->socks[q * xs->nsq + i];
			__u32 f = key_fq(d, i), key = q * XHCA_FLOWQ_MAX + f;

			s->rxq = q;
			err = sock_open(d, d->ifindex, s, &xs->rxq[q], q, i == 0, umem_fd,
					xs->socks[q * xs->nsq].fd);
			if (err) {
				pr_warn("cannot bind an AF_XDP socket to %s queue %u (flow queue "
					"%u): %s\n", d->ifname, q, f, strerror(-err));
				return err;
			}
			if (bpf_map_update_elem(d->m.xsks, &key, &s->fd, 0)) {
				err = -errno;
				pr_warn("cannot add the socket of flow queue %u, RX queue %u to %s: "
					"%s\n", f, q, XHCA_MAP_XSKS, strerror(-err));
				return err;
			}
		}
	}
	for (__u32 i = 0; i < xs->nsq; i++) {
		__u32 f = key_fq(d, i);

		/* (one more for the replication queue: the replication port's) */
		d->fq[f].socks = calloc(xs->nrxq + 1, sizeof(*d->fq[f].socks));
		if (!d->fq[f].socks)
			return -ENOMEM;
		for (__u32 q = 0; q < xs->nrxq; q++)
			d->fq[f].socks[q] = &xs->socks[q * xs->nsq + i];
		d->fq[f].nsocks = xs->nrxq;
	}
	return 0;
}

int xsk_init(struct xhcad *d)
{
	struct xsk_state *xs = calloc(1, sizeof(*xs));
	__u32 ntxq;
	int err, umem_fd;

	if (!xs)
		return -ENOMEM;
	d->xs = xs;
	xs->rep.fd = -1;
	dev_queues(d->ifname, &xs->nrxq, &ntxq);
	if (!d->neng || d->neng > xs->nrxq)
		return -EINVAL; /* (xsk_engines first) */
	xs->neng = d->neng;
	xs->nframes = d->umem_frames;
	pthread_mutex_init(&xs->lo_lock, NULL);
	err = umem_alloc(d, xs);
	if (err)
		return err;
	umem_fd = umem_register(xs);
	if (umem_fd < 0)
		return umem_fd;
	for (__u32 k = 1; k < xs->neng; k++)
		xs->socks[k * xs->nsq].tx_map.len = 1; /* engine k's: queue k's first */
	err = socks_open(d, xs, umem_fd);
	if (err)
		return err;
	for (__u32 k = 0; k < xs->neng; k++) {
		xs->e[k].txs = &xs->socks[k * xs->nsq];
		xs->e[k].comp = &xs->rxq[k].comp;
	}
	xs->zerocopy = sock_zerocopy(umem_fd);
	for (__u32 k = 0; k < xs->neng; k++) {
		struct engine *was = eng_self;

		eng_self = &d->eng[k];
		xsk_refill(d);
		eng_self = was;
		if (!xs->sg)
			xs->e[k].njfree = 0;
	}
	pr_info("%u flow queues on %u RX queues: %u AF_XDP sockets (%s mode), %u UMEM frames, "
		"%u in each fill ring, %u jumbo slots; %u engine%s\n", d->nflowq, xs->nrxq,
		xs->nrxq * xs->nsq, xs->zerocopy ? "zero-copy" : "copy", xs->nframes,
		xs->fill_target, xs->sg ? xs->njumbo : 0, xs->neng, xs->neng > 1 ? "s" : "");
	return 0;
}

void xsk_fini(struct xhcad *d)
{
	struct xsk_state *xs = d->xs;

	if (!xs)
		return;
	xsk_rep_close(d);
	for (__u32 i = 0; xs->socks && i < xs->nrxq * xs->nsq; i++) {
		struct fq_sock *s = &xs->socks[i];
		__u32 key = s->rxq * XHCA_FLOWQ_MAX + key_fq(d, i % xs->nsq);

		if (s->fd < 0)
			continue;
		bpf_map_delete_elem(d->m.xsks, &key);
		unmap(&s->rx_map);
		if (s->tx_map.p)
			unmap(&s->tx_map);
	}
	for (__u32 q = 0; xs->rxq && q < xs->nrxq; q++) {
		unmap(&xs->rxq[q].fill_map);
		unmap(&xs->rxq[q].comp_map);
	}
	/* Sockets after the rings; the UMEM goes with its last socket. */
	for (__u32 i = 0; xs->socks && i < xs->nrxq * xs->nsq; i++)
		if (xs->socks[i].fd >= 0)
			close(xs->socks[i].fd);
	if (xs->area)
		munmap(xs->area, xs->area_len);
	for (__u32 f = 0; f < XHCA_FLOWQ_MAX; f++) {
		free(d->fq[f].socks);
		d->fq[f].socks = NULL;
	}
	for (__u32 f = 0; f < XHCA_FLOWQ_MAX; f++) {
		free(xs->inj[f].d);
		free(xs->lo[f].d);
	}
	free(xs->lo_rbuf);
	free(xs->lo_mark);
	free(xs->socks);
	free(xs->rxq);
	stacks_free(xs);
	free(xs->refs);
	free(xs);
	d->xs = NULL;
}

void xsk_refill_ring(struct xsk_state *xs, struct xsk_ring_prod *fill, __u32 target)
{
	__u32 level = ring_level(fill->producer, fill->consumer), want, idx;

	if (level >= target || !XE(xs)->nfree)
		return;
	want = target - level;
	if (want > XE(xs)->nfree)
		want = XE(xs)->nfree;
	if (xsk_ring_prod__reserve(fill, want, &idx) != want)
		return;
	for (__u32 i = 0; i < want; i++)
		*xsk_ring_prod__fill_addr(fill, idx + i) = XE(xs)->free[--XE(xs)->nfree];
	xsk_ring_prod__submit(fill, want);
}

int xsk_rep_open(struct xhcad *d, int ifindex)
{
	struct xsk_state *xs = d->xs;
	__u32 key = XHCA_XSK_REP_KEY;
	int err;

	if (xs->rep.fd >= 0)
		return 0;
	/* another device: a fill and completion ring of its own */
	err = sock_open(d, ifindex, &xs->rep, &xs->rep_rxq, 0, 1, xs->socks[0].fd, -1);
	if (!err && bpf_map_update_elem(d->m.xsks, &key, &xs->rep.fd, 0))
		err = -errno;
	if (err) {
		xsk_rep_close(d);
		return err;
	}
	xs->rep_ifindex = ifindex;
	d->fq[XHCA_FLOWQ_MCAST].socks[xs->nrxq] = &xs->rep;
	d->fq[XHCA_FLOWQ_MCAST].nsocks = xs->nrxq + 1;
	xsk_refill_ring(xs, &xs->rep_rxq.fill, REP_FILL);
	return 0;
}

void xsk_rep_close(struct xhcad *d)
{
	struct xsk_state *xs = d->xs;
	__u32 key = XHCA_XSK_REP_KEY;

	if (!xs || xs->rep.fd < 0)
		return;
	bpf_map_delete_elem(d->m.xsks, &key);
	if (d->fq[XHCA_FLOWQ_MCAST].socks)
		d->fq[XHCA_FLOWQ_MCAST].nsocks = xs->nrxq;
	/* (only when xhcad stops: frames in its rings are not counted back) */
	unmap(&xs->rep.rx_map);
	unmap(&xs->rep_rxq.fill_map);
	unmap(&xs->rep_rxq.comp_map);
	close(xs->rep.fd);
	xs->rep.fd = -1;
	xs->rep_ifindex = 0;
}

void xsk_sync_drops(struct xhcad *d)
{
	struct xsk_state *xs = d->xs;

	for (__u32 q = 0; xs && q <= xs->nrxq; q++) {
		for (__u32 i = 0; i < xs->nsq; i++) {
			__u32 f = key_fq(d, i);
			struct fq_sock *s;

			if (q >= d->fq[f].nsocks)
				continue;
			s = d->fq[f].socks[q];
			struct xdp_statistics st = {};
			socklen_t len = sizeof(st);
			__u64 now, delta;

			if (getsockopt(s->fd, SOL_XDP, XDP_STATISTICS, &st, &len))
				continue;
			now = st.rx_dropped + st.rx_ring_full;
			delta = now - s->drops_seen;
			if (!delta)
				continue;
			s->drops_seen = now;
			d->fq[f].kernel_drops += delta;
			deq_add(d, f, delta);
		}
	}
}

__u32 xsk_backlog(const struct xhcad *d, __u32 f)
{
	__u64 enq = __atomic_load_n(&d->fqm[f].enq, __ATOMIC_ACQUIRE);

	return (__u32)(enq - d->fqm[f].deq);
}

void xsk_account(const struct xhcad *d, struct xhca_status *st)
{
	const struct xsk_state *xs = d->xs;
	__u32 used;

	if (!xs)
		return;
	st->umem_frames = xs->nframes;
	st->frames_free = xs->depot.nfree;
	for (__u32 k = 0; k < xs->neng; k++) {
		st->frames_free += xs->e[k].nfree;
		st->frames_held += xs->e[k].held;
		st->jumbo_free += xs->e[k].njfree;
		st->jumbo_frames += xs->e[k].jumbo_frames;
		st->jumbo_drops += xs->e[k].jumbo_drops;
	}
	st->jumbo_free += xs->depot.njfree;
	for (__u32 q = 0; q < xs->nrxq; q++)
		st->frames_fill += ring_level(xs->rxq[q].fill.producer, xs->rxq[q].fill.consumer);
	for (__u32 i = 0; i < xs->nrxq * xs->nsq; i++)
		st->frames_rx += ring_level(xs->socks[i].rx.producer, xs->socks[i].rx.consumer);
	if (xs->rep.fd >= 0) {
		st->frames_fill += ring_level(xs->rep_rxq.fill.producer, xs->rep_rxq.fill.consumer);
		st->frames_rx += ring_level(xs->rep.rx.producer, xs->rep.rx.consumer);
	}
	used = st->frames_free + st->frames_held + st->frames_fill + st->frames_rx;
	st->frames_kernel = used <= xs->nframes ? xs->nframes - used : 0;
	st->jumbo_slots = xs->sg ? xs->njumbo : 0;
}

