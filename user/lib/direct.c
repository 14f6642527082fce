/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Direct sends (docs/design.md): a one-packet SEND, or WRITE with
 * immediate, of an RC or UC QP whose send queue is idle leaves from the
 * program itself, through a
 * UDP socket of the QP's, instead of waiting for xhcad to take it: on a
 * host with fewer free CPUs than busy threads that is one hand-over of the
 * CPU fewer on the way (docs/bench.md). The request is posted all the
 * same, marked XHCA_SEND_DIRECT with the PSN it left with, and xhcad takes
 * it as sent when it is what xhcad would have sent (request.c): its
 * completion, its ACK, a retry are xhcad's as for any other.
 *
 * The packet is the one xhcad builds (the path, the P_Key, the next PSN
 * from the ring, ring.h's d_*), the kernel's UDP socket adding IPv4 and UDP:
 * bound to the QP's address and source port, don't fragment, no UDP
 * checksum, so the IPv4 ID is 0 (an unconnected socket's for a packet that
 * may not be fragmented) and the ICRC, computed here over those headers,
 * is the packet's. A socket is what any program may open: it can send
 * nothing through one that it could not send without xhca.
 *
 * XHCA_DIRECT=0 turns it off for the program; xhcad --direct off for the
 * interface (no path in the rings).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "xhca_int.h"

#define DIRECT_MAX 4096 /* payload bytes at most (a path MTU's) */
#define DIRECT_HDRS (14 + 20 + 8) /* Ethernet, IPv4, UDP: the kernel's part */

static int direct_off(void)
{
	static int off = -1;

	if (off < 0) {
		const char *e = getenv("XHCA_DIRECT");

		off = e && !strcmp(e, "0");
	}
	return off;
}

/* The QP's socket, bound to the path's address and port: its fd, or -1
 * (direct sends of the QP stop: the address is not this namespace's, the
 * port is taken, no socket may be opened). */
static int direct_sock(struct xhca_qp *qp, __u32 saddr, __u16 sport, __u32 ifindex)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(sport),
				 .sin_addr.s_addr = saddr };
	int one = 1, pmtu = IP_PMTUDISC_PROBE, fd;
	__u32 oif = htonl(ifindex);

	if (qp->dfd > 0 && qp->d_saddr == saddr && qp->d_sport == sport)
		return qp->dfd;
	if (qp->dfd > 0)
		close(qp->dfd);
	qp->dfd = -1;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd <= 0) { /* (0 stands for none yet) */
		if (!fd)
			close(fd);
		return -1;
	}
	/* (RoCEv2 sends no UDP checksum; DF: the IPv4 ID is 0; out of xhcad's
	 * interface, as xhcad's own packets, or not at all) */
	if (setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) ||
	    setsockopt(fd, IPPROTO_IP, IP_UNICAST_IF, &oif, sizeof(oif)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	qp->dfd = fd;
	qp->d_saddr = saddr;
	qp->d_sport = sport;
	return fd;
}

/* The path and next PSN from the ring, read twice around (ring.h): 0, or
 * -1 when there is none. */
static int direct_path(const struct xhca_ring_ctl *r, struct xhca_pkt_spec *p, __u32 *mtu,
		       __u32 *saddr, __u32 *ifindex)
{
	__u32 psn = __atomic_load_n(&r->d_psn, __ATOMIC_ACQUIRE), daddr;

	if (!(psn & XHCA_DIRECT_OK))
		return -1;
	*saddr = r->d_saddr;
	*ifindex = r->d_ifindex;
	daddr = r->d_daddr;
	p->dqpn = r->d_dqpn & XHCA_QPN_MASK;
	p->pkey = r->d_pkey;
	p->sport = r->d_sport;
	*mtu = r->d_mtu_shift <= 12 ? 1u << r->d_mtu_shift : 0;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&r->d_psn, __ATOMIC_RELAXED) != psn)
		return -1;
	p->psn = psn & XHCA_PSN_MASK;
	memcpy(p->src_ip + 12, saddr, 4);
	memcpy(p->dst_ip + 12, &daddr, 4);
	return 0;
}

/* The requests sent directly: those the peer's program learns of from a
 * completion, which it polls (and, sharing its CPU with its xhcad, yields
 * as it polls). Not an RDMA WRITE without immediate: a peer that spins on
 * its memory for it never yields, and where the scheduler had put a
 * program's xhcad on the CPU of the peer's spinning program, the direct
 * WRITE's completion (its ACK in that xhcad) waited for the peer's next
 * post: ib_write_lat on 2 CPUs went from 2.31-2.38 to 2.44-3.88 us
 * (docs/bench.md). Through xhcad a WRITE cannot go before its xhcad runs,
 * and the scheduler keeps the two together. */
static __u8 direct_op(enum xhca_wr_opcode op)
{
	switch (op) {
	case XHCA_WR_SEND:
		return XHCA_OP_SEND_ONLY;
	case XHCA_WR_SEND_WITH_IMM:
		return XHCA_OP_SEND_ONLY_IMM;
	case XHCA_WR_RDMA_WRITE_WITH_IMM:
		return XHCA_OP_WRITE_ONLY_IMM;
	default:
		return 0xff;
	}
}

int xl_direct_build(struct xhca_qp *qp, const struct xhca_send_wr *wr, struct xhca_swqe *w,
		    struct xl_direct *out)
{
	static const __u8 v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	__u8 op = direct_op(wr->opcode), none = 0;
	struct xhca_pkt_spec p;
	__u32 mtu, saddr, ifindex;
	int n;

	/* (its payload one piece of the program's own memory, as swqe_fill
	 * checked it, taken where it is; a gathered one goes through xhcad) */
	if (direct_off() || qp->dfd < 0 || op == 0xff || w->len > DIRECT_MAX || wr->num_sge > 1 ||
	    (qp->type != XHCA_QPT_RC && qp->type != XHCA_QPT_UC) ||
	    (wr->send_flags & XHCA_SEND_LOC_PROT_ERR))
		return -1;
	xhca_pkt_spec_init(&p, (__u8)(qp->type << 5) | op);
	memcpy(p.src_ip, v4mapped, 12);
	memcpy(p.dst_ip, v4mapped, 12);
	if (direct_path(qp->sq, &p, &mtu, &saddr, &ifindex) || w->len > mtu)
		return -1;
	p.payload_len = w->len;
	p.payload = w->len ? (const void *)(uintptr_t)wr->sg_list[0].addr : &none;
	p.reth_va = w->remote_va;
	p.reth_rkey = w->rkey;
	p.reth_len = w->len;
	p.imm = ntohl(w->imm);
	p.se = !!(w->flags & XHCA_SEND_SOLICITED);
	p.ackreq = qp->type == XHCA_QPT_RC; /* (alone: its completion waits for it) */
	n = xhca_pkt_build(&p, out->frame, sizeof(out->frame));
	if (n <= DIRECT_HDRS || direct_sock(qp, saddr, p.sport, ifindex) < 0)
		return -1;
	out->len = (__u32)n - DIRECT_HDRS;
	out->to = (struct sockaddr_in){ .sin_family = AF_INET,
					.sin_port = htons(XHCA_ROCE_UDP_PORT) };
	memcpy(&out->to.sin_addr, p.dst_ip + 12, 4);
	w->flags |= XHCA_SEND_DIRECT;
	w->psn = p.psn;
	return 0;
}

void xl_direct_send(struct xhca_qp *qp, struct xhca_swqe *w, const struct xl_direct *dr)
{
	if (sendto(qp->dfd, dr->frame + DIRECT_HDRS, dr->len, 0, (const struct sockaddr *)&dr->to,
		   sizeof(dr->to)) == (ssize_t)dr->len)
		return;
	/* not sent: xhcad sends it, unless it took it already (then the
	 * responder never answers and it goes again after the QP's timeout,
	 * as a packet lost on the wire) */
	__atomic_and_fetch(&w->flags, (__u8)~XHCA_SEND_DIRECT, __ATOMIC_RELEASE);
	if (errno != EAGAIN && errno != ENOBUFS) {
		close(qp->dfd);
		qp->dfd = -1; /* (this QP's direct sends end) */
	}
}

void xl_direct_close(struct xhca_qp *qp)
{
	if (qp->dfd > 0)
		close(qp->dfd);
	qp->dfd = -1;
}
