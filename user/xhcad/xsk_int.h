/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The AF_XDP layer's insides, shared by its two files and by no other:
 * xsk.c (the UMEM, the sockets, the free stacks and depot: set up, torn
 * down, accounted) and xsk_io.c above it (the data path: frames received,
 * sent, looped, injected). See xsk.c for the design.
 */
#ifndef XHCAD_XSK_INT_H
#define XHCAD_XSK_INT_H

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
#include "xhcad_device.h"

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

#define REP_FILL 256		/* the replication socket's fill ring's level */

static inline __u32 ring_level(const __u32 *prod, const __u32 *cons)
{
	return __atomic_load_n(prod, __ATOMIC_ACQUIRE) - __atomic_load_n(cons, __ATOMIC_ACQUIRE);
}

/* Frames out of f's backlog (xhca_rx adds, any engine takes away). */
static inline void deq_add(struct xhcad *d, __u32 f, __u64 n)
{
	__atomic_fetch_add(&d->fqm[f].deq, n, __ATOMIC_RELEASE);
}

/* The flow queue of the i-th socket of an RX queue. */
static inline __u32 key_fq(const struct xhcad *d, __u32 i)
{
	return i == d->nflowq ? XHCA_FLOWQ_MCAST : i == d->nflowq + 1 ? XHCA_FLOWQ_PROXY : i;
}

/* xsk.c */
/* A fill ring kept at target frames. */
void xsk_refill_ring(struct xsk_state *xs, struct xsk_ring_prod *fill, __u32 target);
/* The running engine's free stacks evened out with the depot: at least
 * need frames and jneed jumbo slots where it has them. */
void xsk_depot_balance(struct xsk_state *xs, __u32 need, __u32 jneed);
/* Frames the kernel has sent, back from the engine's completion ring. */
void xsk_tx_reclaim(struct xsk_state *xs);

#endif
