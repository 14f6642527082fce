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
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/if_xdp.h>
#include <linux/sockios.h>
#include <bpf/bpf.h>
#include <xdp/xsk.h>
#include "log.h"
#include "xhcad.h"

#define FRAME_SIZE XSK_FRAME_SIZE
#define META_LEN sizeof(struct xhca_rx_meta)

#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4) /* Linux 6.6; Debian 12's headers are older */
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif
/* A jumbo slot: two frames; data where the kernel puts a frame's. */
#define JUMBO_SIZE (2 * FRAME_SIZE)
#define TX_JUMBO 256		/* jumbo slots for frames sent over one UMEM frame */
#define JUMBO_DATA XDP_PACKET_HEADROOM
/* xhcad's marks in an RX descriptor it made one of several (the kernel's
 * options use bit 0 only): joined, and how many descriptors follow it. */
#define OPT_JOINED (1u << 31)
#define OPT_SKIP(o) (((o) & OPT_JOINED) ? ((o) >> 8) & 0xffu : 0)
#define TX_DESC_MAX 4 /* a frame of XHCA_PKT_MAX bytes */
/* The running engine's share. */
#define XE(xs) (&(xs)->e[eng()->id])

struct mapping {
	void *p;
	size_t len;
};

struct fq_sock {
	int fd;			/* -1: not created */
	struct xsk_ring_cons rx;
	struct mapping rx_map;
	struct xsk_ring_prod tx;	/* the first socket of RX queue 0 only: responses */
	struct mapping tx_map;
	__u32 rxq;
	__u32 taken;		/* consumed, not yet released to the kernel */
	__u64 drops_seen;	/* kernel drops at the last xsk_sync_drops() */
};

struct xsk_rxq {
	int fill_lock;			/* engines refill it (xsk_refill) */
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	struct mapping fill_map, comp_map;
};

/* A copy of a multicast frame for one member: the frame's data and a
 * metadata block of its own (the member's QP, flow queue, the group). */
struct inj_desc {
	struct xhca_rx_meta m;
	__u64 addr;
	__u32 len;
	__u32 group;
};

/* The injected descriptors of one flow queue: a ring, its credits. */
struct inj_ring {
	struct inj_desc *d;
	__u32 head, tail;	/* free running */
};

/* A frame looped back (loopback.c): in a UMEM frame (or jumbo slot) of its
 * own, the block xhca_rx wrote in its test run in front of it, as the
 * kernel lays out a frame it receives; per flow queue, as its RX rings
 * would hold it. */
struct lo_desc {
	__u64 addr;		/* of the data */
	__u32 len;
};

struct lo_ring {
	struct lo_desc *d;	/* lo_cap entries, made at first use */
	__u32 head, tail;	/* free running */
};

/* An engine's share of the UMEM (its frames, jumbo slots, its TX socket)
 * and the frame it is processing. The UMEM is one for all RX queues (the
 * kernel takes one per queue, and a flow queue has a socket on every
 * queue), so its frames are any engine's: each keeps a free stack of its
 * own (what it needs now and a few more), refills whichever fill rings are
 * low (a lock per ring, tried: a queue's owner may sleep while another
 * engine takes its frames), sends on its own socket (the first of RX
 * queue id: its completion ring is that queue's), and gives frames to or
 * takes them from a depot shared under a lock when it has too many or too
 * few (a frame looped by one engine to another's flow queue is freed by
 * the one that is done with it). */
struct xsk_eng {
	__u64 *free;			/* stack of frame addresses */
	__u32 nfree;
	__u32 held;			/* taken from the stack, not yet back */
	__u64 *jfree;			/* stack of free jumbo slots */
	__u32 njfree;
	__u64 *tfree;			/* ... of jumbo slots for sending */
	__u32 ntfree;
	struct fq_sock *txs;		/* its TX socket */
	struct xsk_ring_cons *comp;	/* and that one's completion ring */
	__u32 tx_pending;	/* frames put on the TX ring since the last kick */
	/* the frame xsk_tx_alloc() handed out to be built in place: its
	 * TX ring entries reserved (idx, n), its UMEM address */
	__u32 txr_idx, txr_n;
	__u64 txr_addr;
	__u64 tx_frames, tx_full;
	__u64 taken;			/* address of the frame being processed */
	int have_taken;			/* ... if any */
	int taken_inj;			/* the frame being processed is an injected copy */
	struct inj_desc taken_desc;
	int taken_lo;			/* the frame taken last was a looped one */
	__u64 jumbo_frames;		/* made one */
	__u64 jumbo_drops;		/* no slot free, or over one: dropped */
};

/* The depot: frames and slots no engine holds (a lock: taken per batch). */
struct xsk_depot {
	pthread_mutex_t lock;
	__u64 *free, *jfree, *tfree;
	__u32 nfree, njfree, ntfree;
};

struct xsk_state {
	void *area;
	__u64 area_len;
	__u32 nframes;
	__u32 nrxq;
	__u32 nsq;			/* sockets per RX queue: the flow queues, replication, proxy */
	struct xsk_rxq *rxq;
	struct fq_sock *socks;		/* [rxq * nsq + local flow queue] */
	__u16 *refs;			/* per frame: references of a multicast frame */
	struct inj_ring inj[XHCA_FLOWQ_MAX];
	__u32 inj_cap;			/* descriptors per flow queue (credits) */
	int cand_inj[XHCA_FLOWQ_MAX];	/* xsk_head() found f's head among the injected */
	struct lo_ring lo[XHCA_FLOWQ_MAX];
	__u32 lo_cap;			/* looped frames held, in all (and per ring) */
	__u32 lo_frames;		/* held now */
	int cand_lo[XHCA_FLOWQ_MAX];	/* ... among the looped */
	__u8 *lo_rbuf;			/* a frame from another xhcad */
	__u8 *lo_mark;			/* per frame: a looped one */
	pthread_mutex_t lo_lock;	/* the looped frames' rings: any engine loops */
	/* the replication port's socket (mcast.c makes the port) */
	struct xsk_rxq rep_rxq;
	struct fq_sock rep;
	int rep_ifindex;
	__u32 fill_target;		/* per RX queue */
	struct fq_sock *cand[XHCA_FLOWQ_MAX]; /* where xsk_head() found f's head */
	__u32 deq_pending[XHCA_FLOWQ_MAX]; /* taken, not yet added to deq */
	int zerocopy;
	int sg;				/* frames of several descriptors (XDP_USE_SG) */
	/* jumbo slots, after the frames: a frame of several RX descriptors
	 * made one */
	__u64 jumbo_base;
	__u32 njumbo;
	struct xsk_eng e[XHCA_ENGINES_MAX];
	struct xsk_depot depot;
	__u32 neng;
	/* jumbo slots for sending, after those: frames over one UMEM frame
	 * built in place (xsk_tx_alloc), apart from the receive side's */
	__u64 tjumbo_base;
};

/* RX queues of the device, from ethtool (sysfs may show another namespace). */
static __u32 device_rxqs(const char *ifname)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr = {};
	__u32 n = 1;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&ch;
	if (!ioctl(fd, SIOCETHTOOL, &ifr)) {
		n = ch.rx_count > ch.combined_count ? ch.rx_count : ch.combined_count;
		if (!n)
			n = 1;
	}
	close(fd);
	return n > XHCA_RXQ_MAX ? XHCA_RXQ_MAX : n;
}

static __u32 ring_level(const __u32 *prod, const __u32 *cons)
{
	return __atomic_load_n(prod, __ATOMIC_ACQUIRE) - __atomic_load_n(cons, __ATOMIC_ACQUIRE);
}

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
	__u32 nrxq = device_rxqs(d->ifname);
	__u32 n = d->neng ? d->neng : cpus > 0 ? (__u32)cpus : 1, most = nrxq;

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

/* Frames out of f's backlog (xhca_rx adds, any engine takes away). */
static void deq_add(struct xhcad *d, __u32 f, __u64 n)
{
	__atomic_fetch_add(&d->fqm[f].deq, n, __ATOMIC_RELEASE);
}

/* The flow queue of the i-th socket of an RX queue. */
static __u32 key_fq(const struct xhcad *d, __u32 i)
{
	return i == d->nflowq ? XHCA_FLOWQ_MCAST : i == d->nflowq + 1 ? XHCA_FLOWQ_PROXY : i;
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
static void depot_balance(struct xsk_state *xs, __u32 need, __u32 jneed)
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
	int err, umem_fd;

	if (!xs)
		return -ENOMEM;
	d->xs = xs;
	xs->rep.fd = -1;
	xs->nrxq = device_rxqs(d->ifname);
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

int xsk_rx_ready(const struct xhcad *d, __u32 f)
{
	for (__u32 q = 0; d->xs && q < d->fq[f].nsocks; q++) {
		struct fq_sock *s = d->fq[f].socks[q];

		if (s->rx.cached_prod != s->rx.cached_cons ||
		    __atomic_load_n(s->rx.producer, __ATOMIC_ACQUIRE) != s->rx.cached_cons)
			return 1;
	}
	return d->xs && ((f < d->nflowq && d->xs->inj[f].head !=
					      __atomic_load_n(&d->xs->inj[f].tail, __ATOMIC_ACQUIRE)) ||
			 d->xs->lo[f].head != __atomic_load_n(&d->xs->lo[f].tail, __ATOMIC_ACQUIRE));
}

int xsk_fds(const struct xhcad *d, __u32 f, int *fds, int max)
{
	int n = 0;

	for (__u32 q = 0; d->xs && q < d->fq[f].nsocks && n < max; q++)
		fds[n++] = d->fq[f].socks[q]->fd;
	return n;
}

/* A fill ring kept at target frames. */
static void refill_ring(struct xsk_state *xs, struct xsk_ring_prod *fill, __u32 target)
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

#define REP_FILL 256

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
	refill_ring(xs, &xs->rep_rxq.fill, REP_FILL);
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

/* Frames the kernel has sent come back from queue 0's completion ring: an
 * ordinary frame to the free stack, a jumbo slot (its first piece; the
 * second names the same slot) to its own. */
static void tx_reclaim(struct xsk_state *xs)
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

/* Room for a frame and its TX ring entries: n pieces (1, or 2 in a jumbo
 * slot, which is contiguous). 0, or -EAGAIN after a kick did not help. */
static int tx_room(struct xhcad *d, __u32 n, __u32 *idx)
{
	struct xsk_state *xs = d->xs;
	struct fq_sock *s = XE(xs)->txs;

	for (int tries = 0; tries < 2; tries++) {
		tx_reclaim(xs);
		if (!XE(xs)->nfree || (n > 1 && !XE(xs)->ntfree))
			depot_balance(xs, 1, 0);
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
		depot_balance(xs, 1, xs->sg ? 1 : 0);
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
	__atomic_store_n(&lr->tail, lr->tail + 1, __ATOMIC_RELEASE); /* (its engine reads it) */
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

	depot_balance(xs, 1, 0);
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
	if (where == LO_WIRE)
		return 0;
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
		tx_reclaim(xs); /* room in the completion ring for the next batch */
		if (__atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE) == *tx->producer)
			break;
		/* busy, or out of buffers, and nothing taken: the next kick */
		if (err && err != EAGAIN && __atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE) == was)
			break;
	}
	XE(xs)->tx_pending = __atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE) != *tx->producer;
}

void xsk_tx_stats(const struct xhcad *d, __u64 *frames, __u64 *full)
{
	*frames = *full = 0;
	for (__u32 k = 0; d->xs && k < d->xs->neng; k++) {
		*frames += d->xs->e[k].tx_frames;
		*full += d->xs->e[k].tx_full;
	}
}

void xsk_refill(struct xhcad *d)
{
	struct xsk_state *xs = d->xs;

	tx_reclaim(xs);
	/* Every queue's: an engine that takes frames from a queue refills it
	 * (its owner may sleep); one engine at a time (a lock, tried: another
	 * has it in hand) */
	for (__u32 q = 0; q < xs->nrxq; q++) {
		struct xsk_rxq *r = &xs->rxq[q];
		__u32 level;

		if (xs->neng == 1) {
			refill_ring(xs, &r->fill, xs->fill_target);
			continue;
		}
		level = ring_level(r->fill.producer, r->fill.consumer);
		if (level >= xs->fill_target ||
		    __atomic_exchange_n(&r->fill_lock, 1, __ATOMIC_ACQUIRE))
			continue;
		depot_balance(xs, xs->fill_target - level, 0);
		refill_ring(xs, &r->fill, xs->fill_target);
		spin_unlock(&r->fill_lock);
	}
	depot_balance(xs, 0, 0);
	if (xs->rep.fd >= 0 && !eng()->id)
		refill_ring(xs, &xs->rep_rxq.fill, REP_FILL);
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
			depot_balance(xs, 0, 1);
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
	__atomic_store_n(&r->tail, r->tail + 1, __ATOMIC_RELEASE); /* (f's engine takes it) */
	return 0;
}

__u32 xsk_injected(const struct xhcad *d, __u32 f)
{
	return d->xs->inj[f].tail - __atomic_load_n(&d->xs->inj[f].head, __ATOMIC_ACQUIRE);
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
