/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Request packets and READ responses as UDP GSO (--gso, default on): a QP's
 * request packets for the wire (a UD QP's while it sends to one address:
 * request.c's packet_out), and the READ responses
 * (resp_exec.c's resp_tx_wire), go through a packet socket with a
 * virtio-net header instead of the AF_XDP TX ring. A run of frames of one
 * flow (the same Ethernet, IP and UDP headers but for lengths, IPv4 ID and
 * checksums) whose UDP payloads have one size, the last perhaps shorter, is one send
 * of up to GSO_MAX_SEGS frames that the kernel cuts into them (UDP_L4
 * segmentation: lengths and checksums per segment, IPv4 IDs counted up from
 * the first). Each frame is built as the segment the kernel will make of
 * it, its ICRC over its own lengths and its ID (its index in the run), so
 * the run's payload is the frames' UDP payloads one after another: frame i
 * is built in place after the frames before it, its headers over the last
 * bytes of the one before, which are kept aside and put back.
 *
 * One send of a run costs the sender about what one frame through the
 * AF_XDP copy path does (an skb, a copy, the driver), and the kernel's
 * segments are cheap: docs/bench.md has the figures. A QP's requests keep
 * to one path, so they stay in order; a responder's READ responses and its
 * frames on the TX ring are kept in order by resp_exec.c (design.md, "Two
 * ways out"). A frame for this host (loopback.c), a VLAN's, goes through
 * the TX ring; a group's with no member here is counted as the TX ring's
 * (mcast_wire). Linux 6.2 took UDP_L4 in the virtio-net
 * header; a kernel that refuses the send turns the path off, and a run that
 * could not be sent goes frame by frame through the TX ring. A run the
 * qdisc or the device dropped (ENOBUFS, EAGAIN) never goes around the qdisc:
 * gso_flush gives its first PSN back for the RC QP to send again from
 * (sq_refused); UC's runs and READ responses are lost, as on the wire.
 * With --steer (steer.c) an engine has a socket per TX queue, marked, and a
 * run goes by the one of its destination QPN's queue.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <xhca/wire.h>
#include "log.h"
#include "xhcad_device.h"

struct gso {
	int fd[XHCA_RXQ_MAX];	/* a socket, or (--steer) one per TX queue */
	__u32 nfd;
	struct gso_run run;
};


/* ---- the run (pure) ------------------------------------------------------------ */

static void put16(__u8 *p, __u32 v)
{
	p[0] = (__u8)(v >> 8);
	p[1] = (__u8)v;
}

static __u32 get16(const __u8 *p)
{
	return (__u32)p[0] << 8 | p[1];
}

static __u32 fold(__u32 s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

/* The UDP header's offset in an untagged IPv4 or IPv6 frame; 0 for others. */
static __u32 udp_off(const __u8 *fr, __u32 len)
{
	__u32 et = len >= 14 ? get16(fr + 12) : 0;

	if (et == ETH_P_IP && len > 42 && fr[14] == 0x45 && fr[23] == IPPROTO_UDP)
		return 34;
	if (et == ETH_P_IPV6 && len > 62 && fr[20] == IPPROTO_UDP)
		return 54;
	return 0;
}

/* Whether fr has the run's headers but for the lengths, ID and checksums. */
static int same_flow(const struct gso_run *r, const __u8 *fr)
{
	const __u8 *h = r->hdr;

	if (r->hl == 42) /* IPv4: version..TOS, flags..protocol, addresses, ports */
		return !memcmp(fr, h, 16) && !memcmp(fr + 20, h + 20, 4) &&
		       !memcmp(fr + 26, h + 26, 12);
	return !memcmp(fr, h, 18) && !memcmp(fr + 20, h + 20, 38); /* IPv6 */
}

int gso_run_add(struct gso_run *r, struct xhca_pkt_spec *s)
{
	__u32 hl = s->ipv6 ? 62 : 42, pl;
	__u8 keep[GSO_HDR_MAX], *at;
	int len = xhca_pkt_len(s);

	if (s->nvlan || (s->ipv6 && s->ipv6_nexthdr))
		return 1;
	if (len <= (int)hl || (__u32)len > XHCA_PKT_MAX)
		return len < 0 ? len : -EMSGSIZE;
	pl = (__u32)len - hl;
	/* (a run is one destination QP's: --steer sends it by that QP's queue) */
	if (r->n && (hl != r->hl || pl > r->seg || r->last < r->seg || r->n >= GSO_MAX_SEGS ||
		     r->len + pl > GSO_MAX_BYTES || s->dqpn != r->dqpn))
		return 2; /* the run is full, or of another kind: send it first */
	/* built where its UDP payload goes, its headers over the bytes
	 * before (kept aside: another frame's, or nothing) */
	s->ip_id = (__u16)r->n;
	at = r->buf + GSO_HDR_MAX + r->len - hl;
	memcpy(keep, at, hl);
	len = xhca_pkt_build(s, at, (size_t)len);
	if (len < 0 || udp_off(at, (__u32)len) + 8 != hl || (r->n && !same_flow(r, at))) {
		memcpy(at, keep, hl);
		return len < 0 ? len : r->n ? 2 : 1;
	}
	if (!r->n) {
		r->psn0 = s->psn;
		r->dqpn = s->dqpn;
		memcpy(r->hdr, at, hl);
		r->hl = hl;
		r->seg = pl;
	}
	memcpy(at, keep, hl);
	r->last = pl;
	r->len += pl;
	r->n++;
	r->nresp += xhca_op_read_resp(s->opcode & 0x1f);
	return 0;
}

void gso_run_super(const struct gso_run *r, struct virtio_net_hdr *vh, __u8 *hdr)
{
	__u32 ul = 8 + r->len, s = 0, u = r->hl - 8;

	memset(vh, 0, sizeof(*vh));
	memcpy(hdr, r->hdr, r->hl);
	if (r->n < 2)
		return; /* one frame: as built */
	if (u == 34) {
		put16(hdr + 16, 20 + ul);
		put16(hdr + 24, 0);
		put16(hdr + 24, xhca_ipv4_csum(hdr + 14, 20));
	} else {
		put16(hdr + 18, ul);
	}
	put16(hdr + u + 4, ul);
	/* the pseudo header's sum, for the kernel to finish per segment */
	s = IPPROTO_UDP + ul;
	for (__u32 i = u == 34 ? 26 : 22; i < u; i += 2)
		s += get16(hdr + i);
	put16(hdr + u + 6, fold(s));
	vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh->gso_type = GSO_UDP_L4;
	vh->hdr_len = (__u16)r->hl;
	vh->gso_size = (__u16)r->seg;
	vh->csum_start = (__u16)u;
	vh->csum_offset = 6;
}

__u32 gso_run_frame(const struct gso_run *r, __u32 i, __u8 *out)
{
	__u32 u = r->hl - 8, pl = i + 1 < r->n ? r->seg : r->last;

	memcpy(out, r->hdr, r->hl);
	memcpy(out + r->hl, r->buf + GSO_HDR_MAX + i * r->seg, pl);
	if (u == 34) {
		put16(out + 16, 28 + pl);
		put16(out + 18, get16(r->hdr + 18) + i);
		put16(out + 24, 0);
		put16(out + 24, xhca_ipv4_csum(out + 14, 20));
	} else {
		put16(out + 18, 8 + pl);
	}
	put16(out + u + 4, 8 + pl);
	return r->hl + pl;
}

/* ---- the socket -------------------------------------------------------------- */

/* A packet socket for the runs; with mark (--steer), marked so that
 * xhca_steer sends its frames by TX queue mark & XHCA_STEER_QMASK. */
static int gso_socket(struct xhcad *d, __u32 mark)
{
	int one = 1, buf = 4 << 20, fd;
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_ifindex = d->ifindex };

	/* protocol 0: it receives nothing */
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) ||
	    (mark && setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark))) ||
	    bind(fd, (void *)&ll, sizeof(ll))) {
		int e = -errno;

		close(fd);
		errno = -e;
		return e;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	return fd;
}

static int gso_open(struct xhcad *d, struct gso **g)
{
	*g = calloc(1, sizeof(**g));
	if (!*g)
		return -ENOMEM;
	(*g)->nfd = d->steer == STEER_ON ? d->steer_txq : 1;
	for (__u32 q = 0; q < (*g)->nfd; q++)
		(*g)->fd[q] = -1;
	for (__u32 q = 0; q < (*g)->nfd; q++) {
		int fd = gso_socket(d, d->steer == STEER_ON ? XHCA_STEER_MARK | q : 0);

		if (fd < 0) {
			gso_close(g);
			errno = -fd;
			return fd;
		}
		(*g)->fd[q] = fd;
	}
	return 0;
}

/* Its socket for engine e, at start: none where the sockets are zero-copy
 * (the TX ring copies nothing there) or --gso is off. */
void gso_start(struct xhcad *d, struct engine *e)
{
	if (!d->gso)
		return;
	if (xsk_zerocopy(d)) {
		d->gso = 0;
		return;
	}
	if (gso_open(d, &e->gso)) {
		pr_info("--gso: no packet socket (%s): off\n", strerror(errno));
		d->gso = 0;
	}
}

void gso_close(struct gso **g)
{
	if (!*g)
		return;
	for (__u32 q = 0; q < (*g)->nfd; q++)
		if ((*g)->fd[q] >= 0)
			close((*g)->fd[q]);
	free(*g);
	*g = NULL;
}

/* The run's socket: the one of the TX queue its destination QP's engine
 * at the peer reads (--steer). */
static int run_fd(const struct gso *g)
{
	return g->fd[g->nfd < 2 ? 0 : steer_queue(g->run.dqpn, g->nfd)];
}

/* The run, empty: its frames sent or taken back. */
static void run_clear(struct gso_run *r)
{
	r->n = r->len = r->nresp = 0;
}

/* The run frame by frame through the TX ring (the kernel refused it). */
static void run_by_frames(struct xhcad *d, const struct gso_run *r)
{
	__u8 fr[XHCA_PKT_MAX];

	for (__u32 i = 0; i < r->n; i++)
		if (xsk_tx(d, fr, gso_run_frame(r, i, fr)))
			eng()->req.gso_lost++;
	eng()->req.gso_fallbacks++;
}

int gso_flush(struct xhcad *d, __u32 *psn0)
{
	struct gso *g = eng()->gso;
	struct gso_run *r = g ? &g->run : NULL;
	struct virtio_net_hdr vh;
	__u8 hdr[GSO_HDR_MAX];
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_ifindex = d->ifindex };
	struct iovec iov[3];
	struct msghdr mh = { .msg_name = &ll, .msg_namelen = sizeof(ll), .msg_iov = iov,
			     .msg_iovlen = 3 };

	if (!r || !r->n)
		return 0;
	gso_run_super(r, &vh, hdr);
	iov[0] = (struct iovec){ &vh, sizeof(vh) };
	iov[1] = (struct iovec){ hdr, r->hl };
	iov[2] = (struct iovec){ r->buf + GSO_HDR_MAX, r->len };
	ll.sll_protocol = htons(r->hl == 42 ? ETH_P_IP : ETH_P_IPV6);
	if (d->gso && sendmsg(run_fd(g), &mh, MSG_DONTWAIT) >= 0) {
		eng()->req.gso_sends++;
		eng()->req.gso_frames += r->n - r->nresp;
		eng()->resp.gso_frames += r->nresp;
	} else if (d->gso && (errno == ENOBUFS || errno == EAGAIN || errno == ENOMEM)) {
		/* Dropped on the way out, whole or in part: the interface's
		 * qdisc or its device's queue was full (ENOBUFS), or the
		 * socket's buffer (EAGAIN). Not around the qdisc through the
		 * TX ring, where the frames would overtake the runs it still
		 * holds: the caller sends them again (a QP's requests) or
		 * they are lost as on the wire (READ responses). */
		eng()->req.gso_drops++;
		if (psn0)
			*psn0 = r->psn0;
		run_clear(r);
		return -ENOBUFS;
	} else {
		if (d->gso && (errno == EINVAL || errno == EOPNOTSUPP || errno == EPROTONOSUPPORT)) {
			pr_info("--gso: the kernel refused a UDP GSO send (%s): off\n",
				strerror(errno));
			d->gso = 0;
		}
		run_by_frames(d, r);
	}
	run_clear(r);
	return 0;
}

int gso_put(struct xhcad *d, struct xhca_pkt_spec *s, __u32 *psn0)
{
	struct gso *g = eng()->gso;
	int r, ifindex;

	if (!g)
		return 1;
	r = gso_run_add(&g->run, s);
	if (r == 2) {
		if (gso_flush(d, psn0) && psn0)
			return -ENOBUFS;
		r = gso_run_add(&g->run, s);
	}
	if (r)
		return r;
	/* a run's first frame: to the wire? */
	if (g->run.n == 1 && lo_dest(d, g->run.hdr, g->run.hl, &ifindex) != LO_WIRE) {
		run_clear(&g->run);
		return 1;
	}
	if (g->run.hdr[0] & 1) /* a group's, no member here: the wire's only, as on the TX ring */
		__atomic_fetch_add(&d->lo.stats.mcast_wire, 1, __ATOMIC_RELAXED);
	return 0;
}
