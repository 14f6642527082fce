/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad's device layer: the device: the program and its maps, this host's
 * addresses, the device view, the AF_XDP sockets, READ/ATOMIC execution
 * (pure), the proxy's mailbox. A file of this layer includes this header;
 * it declares the layers below too, never those above (docs/design.md:
 * xhcad in layers).
 */
#ifndef XHCAD_DEVICE_H
#define XHCAD_DEVICE_H

#include "xhcad_util.h"

/* loader.c */
int xhcad_load(struct xhcad *d);
int xhcad_adopt(struct xhcad *d);
int hostmem_block_new(void);	/* a block's map: its descriptor, or -errno */
int hostmem_map_new(__u32 pages); /* xhca_hostmem, empty */
void xhcad_unload(struct xhcad *d);
/* xhcad --unload: what it did */
struct unload_done {
	__u32 prog_id;		/* the xhca_rx detached (0: none was attached) */
	const char *mode;	/* its XDP mode */
	int behind_dispatcher;	/* it was a component of libxdp's dispatcher */
	int pins;		/* pins removed */
	int dir_gone;		/* and the pin directory */
};
/* What a --keep left for d->ifname taken down: xhca_rx detached if it is
 * the one on the maps pinned in d->pin_dir, then those pins. 0: done (u
 * says what); -ENOENT: nothing pinned there; -EBUSY: another program is
 * attached, or the maps are in use elsewhere (said why; nothing changed). */
int xhcad_unload_kept(struct xhcad *d, struct unload_done *u);

/* steer.c: the interface's queues; --steer */
/* Its RX and TX queues (ethtool's channels), 1 to XHCA_RXQ_MAX each. */
void dev_queues(const char *ifname, __u32 *rx, __u32 *tx);
/* The queue, of nq, of QPN qpn: the one its frames are steered to, whose
 * engine owns it (qp.c); steer_hash its hash, whose low bits are left
 * for the flow queue within the engine. */
__u32 steer_hash(__u32 qpn);
__u32 steer_queue(__u32 qpn, __u32 nq);
/* With d->steer on (resolved from auto by main.c): xhca_steer loaded and
 * attached to the interface's egress, d->steer_txq set (in any case), or
 * -errno (said why; from auto: off, nothing left behind). Turned off,
 * said why, where there is nothing to steer (one TX queue, --gso off). */
int steer_start(struct xhcad *d);
void steer_stop(struct xhcad *d);
/* xhcad --unload: an xhca_steer left on the interface detached; 1 if one
 * was there. */
int steer_unload(struct xhcad *d);

/* pxq.c: the proxy's mailbox, as the layers above tell the proxy thread
 * (no-ops while there is no proxy) */
/* A QP on a proxy CQ: its reorderer, from the CSN xhca_rx counts now. */
/* The QP (on a proxy CQ) to the proxy: its completions in order from CSN
 * first (a new QP: the count xhca_rx keeps; a QP a restart kept: where the
 * proxy had released up to, px_csn). */
void proxy_qp_add(struct xhcad *d, __u32 lidx, __u16 first);
void proxy_qp_del(struct xhcad *d, __u32 lidx);
/* The normal path's end of a message of a QP on a proxy CQ: its
 * completion, or (c NULL) none. A flushed buffer's completion (no CSN)
 * goes after the sequence. */
void proxy_record(struct xhcad *d, struct qp_host *qh, __u16 csn, const struct xhca_cqe *c);
void proxy_flush_cqe(struct xhcad *d, struct qp_host *qh, const struct xhca_cqe *c);
/* Wakes the proxy for what was handed to it since the last kick (once per
 * round, as cq_notify). */
void proxy_kick(struct xhcad *d);
/* Returns once the proxy is done with every request given to it so far
 * (the host memory a READ or ATOMIC named may go). */
void proxy_sync(struct xhcad *d);

/* loopback.c: this namespace's addresses; frames to them (xsk.c asks) */
int lo_init(struct xhcad *d);
void lo_fini(struct xhcad *d);
/* What the loop polls (at most max): rtnetlink, the socket other xhcads of
 * this host connect to (lo_service when one is readable) and, with frames,
 * their connections (xsk_lo_recv). */
int lo_fds(const struct xhcad *d, int *fds, int max, int frames);
/* 1 when the addresses or links changed (the device view is out of date). */
int lo_service(struct xhcad *d);
int lo_refresh(struct xhcad *d);
/* Where a frame goes; LO_PEER: *ifindex is the interface's. */
enum lo_dest lo_dest(struct xhcad *d, const void *frame, __u32 len, int *ifindex);
/* xhca_rx on the frame as if ifindex had received it: the XDP verdict
 * (XDP_REDIRECT: m is the block it wrote), or -errno. */
int lo_run(struct xhcad *d, const void *frame, __u32 len, struct xhca_rx_meta *m);
/* The frame to the xhcad of ifindex: 0 (sent, or lost: counted), -EAGAIN. */
int lo_forward(struct xhcad *d, int ifindex, const void *frame, __u32 len);
/* A frame from another xhcad of this namespace: its length, 0 when none
 * waits. */
int lo_recv(struct xhcad *d, void *buf, __u32 cap);
/* The addresses of interface ifindex (at most max), v4-mapped. */
int lo_if_addrs(struct xhcad *d, int ifindex, __u8 (*out)[16], int max);
/* The MAC of the interface of this namespace that has ip; -ENOENT. */
int lo_local_mac(struct xhcad *d, const __u8 ip[16], __u8 mac[6]);

/* ibview.c: the device as sysfs would show it, for xhca exec */
/* Writes (again) every file of d->view_dir from the interface now. */
int ibview_update(struct xhcad *d);
void ibview_remove(struct xhcad *d);

/* xsk.c: the UMEM, the flow queue sockets and their rings, the free
 * stacks: set up, torn down, accounted */
/* How many engines run (d->neng): --engines, or (0) one per CPU; at most
 * one per RX queue of the interface (an engine sends on a queue of its
 * own) and per flow queue. */
void xsk_engines(struct xhcad *d);
int xsk_init(struct xhcad *d);
void xsk_fini(struct xhcad *d);
int xsk_nrxq(const struct xhcad *d);
int xsk_zerocopy(const struct xhcad *d);
int xsk_multibuf(const struct xhcad *d); /* AF_XDP frames of several descriptors (Linux 6.6) */
__u32 xsk_max_path_mtu(const struct xhcad *d); /* 4096, or 2048 without multi-buffer */
void xsk_refill(struct xhcad *d);
/* Frames lost by the kernel after xhca_rx redirected them, since the last
 * call, per flow queue: added to deq so backlog and gate stay true. */
void xsk_sync_drops(struct xhcad *d);
void xsk_account(const struct xhcad *d, struct xhca_status *s);
__u32 xsk_backlog(const struct xhcad *d, __u32 f);
/* The replication port's socket (queue 0 of ifindex), on the UMEM, into
 * xhca_xsks at XHCA_XSK_REP_KEY, drained as the replication queue. */
int xsk_rep_open(struct xhcad *d, int ifindex);
void xsk_rep_close(struct xhcad *d);

/* xsk_io.c: the AF_XDP data path: frames received, taken, sent, looped,
 * injected (its insides and xsk.c's: xsk_int.h) */
/* Poll set: the RX socket fds of flow queue f. */
int xsk_fds(const struct xhcad *d, __u32 f, int *fds, int max);
/* The head frame of flow queue f (oldest over its RX queues): its metadata,
 * data and length, or 0 when f is empty. */
int xsk_head(struct xhcad *d, __u32 f, const struct xhca_rx_meta **meta, const __u8 **data,
	     __u32 *len);
/* Takes the head frame of f out of its ring; xsk_done() gives it back.
 * The ring slots and the flow queue's deq are released by xsk_flush(), once
 * per batch. */
void xsk_take(struct xhcad *d, __u32 f);
void xsk_done(struct xhcad *d);
void xsk_flush(struct xhcad *d);
/* Whether the frame being processed is a multicast copy, and of which group. */
int xsk_taken_copy(const struct xhcad *d, __u32 *group);
/* A frame waits in one of flow queue f's sockets (the rings looked at, no
 * system call). */
int xsk_rx_ready(const struct xhcad *d, __u32 f);
/* The replication queue's head frame, taken and held with one reference
 * (the stored payload's); 0 when it is empty. */
int xsk_mcast_take(struct xhcad *d, const struct xhca_rx_meta **meta, const __u8 **data,
		   __u32 *len, __u64 *addr);
/* A reference more to the multicast frame at addr (returns the count), or
 * one less: at zero it goes back to the free stack, once. */
__u32 xsk_frame_get(struct xhcad *d, __u64 addr);
void xsk_frame_put(struct xhcad *d, __u64 addr);
/* A copy of the frame at addr into flow queue f, with its own metadata;
 * -ENOBUFS when f has no credit left. */
int xsk_inject(struct xhcad *d, __u32 f, const struct xhca_rx_meta *m, __u64 addr, __u32 len,
	       __u32 group);
__u32 xsk_injected(const struct xhcad *d, __u32 f);
/* Sends a frame out of RX queue 0's socket (copied into a UMEM frame);
 * xsk_tx_kick() hands what was queued to the kernel. */
int xsk_tx(struct xhcad *d, const void *frame, __u32 len);
/* A frame built in place, not copied: xsk_tx_alloc() gives room for len
 * bytes in the UMEM (a jumbo slot over one frame) with its TX ring entries
 * held, NULL with errno EAGAIN (nothing free after a kick) or EMSGSIZE;
 * xsk_tx_submit() queues what was built there (len: its length, at most
 * the room asked for), xsk_tx_abort() gives the room back. One at a time. */
void *xsk_tx_alloc(struct xhcad *d, __u32 len);
int xsk_tx_submit(struct xhcad *d, __u32 len);
void xsk_tx_abort(struct xhcad *d);
void xsk_tx_kick(struct xhcad *d);
/* Whether frames wait on the running engine's TX ring for a kick. */
int xsk_tx_pending(const struct xhcad *d);

/* gso.c: request packets and READ responses as UDP GSO sends through a
 * packet socket (--gso).
 * A run: frames of one flow and UDP payload size (the last may be shorter)
 * one after another, each built as the kernel's segment of the run. */
#define GSO_HDR_MAX 62		/* Ethernet, IPv6, UDP */
#define GSO_MAX_SEGS 64		/* the kernel's UDP_MAX_SEGMENTS before 6.9 */
#define GSO_MAX_BYTES 65507	/* UDP payload of a run: IPv4 total length 65535 */
#define GSO_UDP_L4 5		/* VIRTIO_NET_HDR_GSO_UDP_L4 (Linux 6.2 headers) */
struct gso_run {
	__u32 hl;		/* a frame's headers, through UDP: 42 (IPv4) or 62 */
	__u32 n, seg, last;	/* frames; their UDP payload size, the last one's */
	__u32 nresp;		/* of the frames, READ responses (the rest: requests) */
	__u32 len;		/* UDP payload bytes so far */
	__u32 psn0;		/* the first frame's PSN */
	__u32 dqpn;		/* the destination QP of them all (--steer: its queue) */
	__u8 hdr[GSO_HDR_MAX];	/* the first frame's headers */
	/* the frames' UDP payloads, from GSO_HDR_MAX on (a frame is built
	 * with its headers before its payload) */
	__u8 buf[GSO_HDR_MAX + GSO_MAX_BYTES + XHCA_PKT_MAX];
};
struct virtio_net_hdr;
/* s built as the run's next frame (its ip_id set): 0; 1 no frame for a run
 * (not untagged IPv4/IPv6 UDP); 2 it does not fit: send the run first; or
 * -errno */
int gso_run_add(struct gso_run *r, struct xhca_pkt_spec *s);
/* The one send of the run: its virtio-net header and the headers (hdr:
 * GSO_HDR_MAX bytes) with the whole run's lengths */
void gso_run_super(const struct gso_run *r, struct virtio_net_hdr *vh, __u8 *hdr);
/* Frame i of the run, as the kernel's segmentation makes it, into out: its
 * length */
__u32 gso_run_frame(const struct gso_run *r, __u32 i, __u8 *out);
/* The running engine's: s queued for the wire (0), not for this path (1: the
 * TX ring's), or -errno; gso_flush sends what is queued. A run the
 * interface dropped (its qdisc or device queue full): with psn0, -ENOBUFS
 * and its first frame's PSN there (gso_put: s not taken), for the caller
 * to send again; without, lost as on the wire. */
int gso_put(struct xhcad *d, struct xhca_pkt_spec *s, __u32 *psn0);
int gso_flush(struct xhcad *d, __u32 *psn0);
void gso_start(struct xhcad *d, struct engine *e);
void gso_close(struct gso **g);
/* Frames from other xhcads of this namespace (loopback.c), up to max, into
 * their flow queues; whether there is room for one; looped frames held. */
int xsk_lo_recv(struct xhcad *d, int max);
int xsk_lo_room(const struct xhcad *d);
__u32 xsk_lo_held(const struct xhcad *d);
/* Whether flow queue f holds frames another thread handed over: multicast
 * copies (a flow queue's, not the replication queue's), looped frames. No
 * socket wakes an engine for them: the thread that hands one over wakes
 * its engine if it says it sleeps. */
int xsk_handed_to(const struct xhcad *d, __u32 f);
/* The frame at addr was looped back, not received from the wire. */
int xsk_frame_looped(const struct xhcad *d, __u64 addr);
void xsk_tx_stats(const struct xhcad *d, __u64 *frames, __u64 *full);

/* resp_exec.c: READ and ATOMIC executed, acknowledgements built (pure:
 * either thread) */
/* Sends the frame of spec s: each thread builds it where it sends it from
 * (the main thread in the UMEM, the proxy in its message to it). */
typedef int (*resp_tx_fn)(void *arg, const struct xhca_pkt_spec *s);
/* A READ or ATOMIC with its region resolved: what executing it takes,
 * with no look at xhcad's tables (the proxy thread executes these). */
struct resp_job {
	struct xhca_pkt_spec s;	/* the response's frame (addresses, QPN, MSN) */
	__u8 op;
	__u32 psn, mtu, dlen;
	__u64 arg, cmp;		/* ATOMIC operands; ATOMIC WRITE: the word, as it came */
	__u64 *word;		/* ATOMIC: the host word */
	struct { __u64 hoff; __u32 len; } *span; /* READ: its bytes in host memory, in order */
	__u32 nspan;
};
/* Executes j: READ RESPONSE packets, or the ATOMIC (WRITE) and its answer,
 * to tx. */
int resp_execute(const __u8 *hostmem, struct resp_job *j, resp_tx_fn tx, void *arg);
/* j->s becomes the answer of an ATOMIC executed (orig: the word before),
 * or of an ATOMIC WRITE (a READ RESPONSE ONLY of no bytes). */
void resp_done_spec(struct resp_job *j, __u64 orig);
void resp_job_free(struct resp_job *j);
/* The response's frame around the request fr: addresses and tags swapped,
 * the QP's remote QPN and P_Key; returns the BTH offset. */
int resp_reply_spec(const __u8 *fr, __u32 len, const struct xhca_qp_ctx *c,
		    struct xhca_pkt_spec *s, __u8 opcode);
/* Hands the frame of s to tx. */
int resp_send_spec(const struct xhca_pkt_spec *s, resp_tx_fn tx, void *arg);
/* Builds the frame of s in the UMEM and queues it (xsk_tx_alloc): the
 * engines' resp_tx_fn (arg: xhcad) for all but READ responses; a GSO run
 * the engine holds goes first (a QP's responses leave in order).
 * resp_tx_wire: the RC responder's frames: a READ response into the
 * engine's GSO run (gso_put, after what waits on the TX ring), and with
 * --steer every frame (ACKs, NAKs, ATOMIC ACKs too), so that they leave by
 * the TX queue of the requester's engine (steer.c); else as resp_tx_umem. */
int resp_tx_umem(void *arg, const struct xhca_pkt_spec *s);
int resp_tx_wire(void *arg, const struct xhca_pkt_spec *s);
/* The 24-bit MSN of c whose low 16 bits xhca_rx put in a frame's metadata
 * (csn): its count now is at or after it. */
__u32 resp_msn(const struct xhca_qp_ctx *c, __u16 low);
/* An ACKNOWLEDGE (syndrome: AETH, ACK with credits, RNR or NAK) at psn
 * with msn, back the way the request frame fr came: its spec in *s (0, or
 * -EINVAL for a frame it cannot answer); resp_aeth sends it through tx
 * (either thread). */
int resp_ack_spec(const struct xhca_qp_ctx *c, const __u8 *fr, __u32 len, __u32 psn, __u32 msn,
		  __u8 syndrome, struct xhca_pkt_spec *s);
int resp_aeth(const struct xhca_qp_ctx *c, const __u8 *fr, __u32 len, __u32 psn, __u32 msn,
	      __u8 syndrome, resp_tx_fn tx, void *arg);

#endif
