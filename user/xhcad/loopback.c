/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Loopback: frames to this host's own addresses never go out on the wire.
 * As RXE checks for a local destination before it transmits, xsk.c asks
 * lo_dest() about every frame it is given to send:
 *
 * - to one of this interface's addresses: xhca_rx runs on the frame here,
 *   with BPF_PROG_TEST_RUN, as if the interface had received it (ingress
 *   ifindex and RX queue 0 in its context). Every check, counter, placement
 *   and state change of the receive pipeline is the one a frame from the
 *   wire meets; what the program does not carry out in a test run is the
 *   redirect, which xsk.c does instead (the frame into its flow queue, the
 *   metadata block as the program wrote it);
 * - to an address of another interface of this network namespace: the
 *   frame goes, whole, to that interface's xhcad, as a datagram on its
 *   loopback socket (XHCA_RUN_DIR/IFNAME.lo, root's only: no other user can
 *   inject frames, or read them), and that xhcad runs its own xhca_rx on it;
 * - to a multicast group this interface has QP members in: out on the wire
 *   and a copy here, so the sending device's members get theirs (a member
 *   may refuse its own QP's: IBV_QP_CREATE_BLOCK_SELF_MCAST_LB, mcast.c).
 *
 * The addresses are every interface's of the namespace (getifaddrs), read
 * again when rtnetlink says an address or link changed; net.c reads the
 * interface's own from here.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "log.h"
#include "xhcad_device.h"

#define ETH_HLEN_ 14
#define META_LEN sizeof(struct xhca_rx_meta)

static void v4_mapped(__u8 o[16], const void *a4)
{
	memset(o, 0, 10);
	o[10] = o[11] = 0xff;
	memcpy(o + 12, a4, 4);
}

/* Every address and MAC of the namespace, from getifaddrs. */
static void addrs_read(struct loopback *lo)
{
	struct ifaddrs *ifa, *a;

	lo->naddr = 0;
	lo->nif = 0;
	if (getifaddrs(&ifa)) {
		pr_warn("loopback: cannot read this host's addresses: %s\n", strerror(errno));
		return;
	}
	for (a = ifa; a; a = a->ifa_next) {
		int family = a->ifa_addr ? a->ifa_addr->sa_family : AF_UNSPEC;
		unsigned int ifindex = if_nametoindex(a->ifa_name);

		if (family == AF_PACKET && lo->nif < LO_IFS) {
			const struct sockaddr_ll *ll = (const void *)a->ifa_addr;
			struct lo_if *i = &lo->ifs[lo->nif++];

			i->ifindex = ll->sll_ifindex;
			snprintf(i->name, sizeof(i->name), "%s", a->ifa_name);
			memcpy(i->mac, ll->sll_addr, 6);
		} else if ((family == AF_INET || family == AF_INET6) && lo->naddr < LO_ADDRS) {
			struct lo_addr *o = &lo->addr[lo->naddr++];

			o->ifindex = (int)ifindex;
			if (family == AF_INET)
				v4_mapped(o->ip, &((const struct sockaddr_in *)a->ifa_addr)->sin_addr);
			else
				memcpy(o->ip, &((const struct sockaddr_in6 *)a->ifa_addr)->sin6_addr,
				       16);
		}
	}
	freeifaddrs(ifa);
	lo->stats.addr_reads++;
}

/* rtnetlink: an address or a link changed, the table is read again. */
static int nl_open(void)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR,
	};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int lo_refresh(struct xhcad *d)
{
	struct loopback *lo = &d->lo;
	char buf[8192];
	int changed = !lo->addr_ok;

	for (;;) {
		ssize_t n = lo->watching ? recv(lo->nl_fd, buf, sizeof(buf), MSG_DONTWAIT) : -1;

		if (n > 0) {
			changed = 1;
			continue;
		}
		/* (a socket that overran lost messages: read anyway) */
		if (n < 0 && errno == ENOBUFS)
			changed = 1;
		else
			break;
	}
	if (changed) {
		addrs_read(lo);
		lo->addr_ok = 1;
	}
	return changed;
}

static void sock_name(const struct xhcad *d, const char *ifname, struct sockaddr_un *sa)
{
	const char *dir_end = strrchr(d->sock_path, '/');
	int dl = dir_end ? (int)(dir_end - d->sock_path) : 0;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "%.*s/%s.lo", dl, d->sock_path, ifname);
}

/* The socket other xhcads of this namespace connect to, to send this
 * interface's frames: a message each, whole. Root's only (0600), and the
 * peer's credentials checked when it connects. Connected SOCK_SEQPACKET,
 * not datagrams: a datagram socket holds net.unix.max_dgram_qlen
 * messages (10 by the kernel's default), a burst of a READ's responses
 * more; a connection holds its send buffer's bytes. */
static int listen_open(struct xhcad *d)
{
	struct loopback *lo = &d->lo;
	struct sockaddr_un sa;
	int fd;

	sock_name(d, d->ifname, &sa);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(sa.sun_path); /* an earlier xhcad's */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(sa.sun_path, 0600) ||
	    listen(fd, LO_PEERS)) {
		int err = -errno;

		pr_warn("loopback: cannot make %s: %s (frames from this host's other xhca devices "
			"will not arrive)\n", sa.sun_path, strerror(-err));
		close(fd);
		unlink(sa.sun_path);
		return err;
	}
	snprintf(lo->sock_path, sizeof(lo->sock_path), "%s", sa.sun_path);
	lo->listen_fd = fd;
	return 0;
}

int lo_init(struct xhcad *d)
{
	struct loopback *lo = &d->lo;
	int fd;

	lo->nl_fd = lo->listen_fd = -1;
	for (int i = 0; i < LO_PEERS; i++)
		lo->in[i] = -1;
	for (int i = 0; i < LO_IFS; i++)
		lo->out[i].fd = -1;
	lo->buf = malloc(LO_BUF);
	if (!lo->buf)
		return -ENOMEM;
	fd = nl_open();
	if (fd < 0)
		pr_warn("loopback: no rtnetlink (%s): addresses read every second\n",
			strerror(-fd));
	lo->nl_fd = fd;
	lo->watching = fd >= 0;
	lo->addr_ok = 0;
	lo_refresh(d);
	listen_open(d);
	return 0;
}

void lo_fini(struct xhcad *d)
{
	struct loopback *lo = &d->lo;

	if (lo->listen_fd >= 0) {
		close(lo->listen_fd);
		unlink(lo->sock_path);
	}
	for (int i = 0; i < LO_PEERS; i++)
		if (lo->in[i] >= 0)
			close(lo->in[i]);
	for (int i = 0; i < LO_IFS; i++)
		if (lo->out[i].fd >= 0)
			close(lo->out[i].fd);
	if (lo->watching)
		close(lo->nl_fd);
	lo->listen_fd = lo->nl_fd = -1;
	lo->watching = 0;
	free(lo->buf);
	lo->buf = NULL;
}

int lo_fds(const struct xhcad *d, int *fds, int max, int frames)
{
	const struct loopback *lo = &d->lo;
	int n = 0;

	if (lo->watching && n < max)
		fds[n++] = lo->nl_fd;
	if (lo->listen_fd >= 0 && n < max)
		fds[n++] = lo->listen_fd;
	for (int i = 0; frames && i < LO_PEERS && n < max; i++)
		if (lo->in[i] >= 0)
			fds[n++] = lo->in[i];
	return n;
}

/* Another xhcad of this host connects: root's (or our user's) only. */
static void peer_accept(struct loopback *lo)
{
	for (;;) {
		struct ucred cr;
		socklen_t crl = sizeof(cr);
		int fd = accept4(lo->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), i;

		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) ||
		    (cr.uid != 0 && cr.uid != geteuid())) {
			lo->stats.peer_refused++;
			close(fd);
			continue;
		}
		for (i = 0; i < LO_PEERS && lo->in[i] >= 0; i++)
			;
		if (i == LO_PEERS) {
			pr_warn("loopback: more than %d devices of this host send frames here; "
				"one refused\n", LO_PEERS);
			lo->stats.peer_refused++;
			close(fd);
			continue;
		}
		lo->in[i] = fd;
		lo->nin++;
	}
}

int lo_service(struct xhcad *d)
{
	int changed = lo_refresh(d);

	if (d->lo.listen_fd >= 0)
		peer_accept(&d->lo);
	return changed;
}

/* Read once; without rtnetlink (or lo_init), again every second. */
static void addrs_fresh(struct xhcad *d)
{
	struct loopback *lo = &d->lo;
	__u64 now;

	if (lo->addr_ok && lo->watching)
		return;
	now = now_ms();
	if (!lo->addr_ok || now - lo->addr_ms >= 1000) {
		addrs_read(lo);
		lo->addr_ok = 1;
		lo->addr_ms = now;
	}
}

int lo_if_addrs(struct xhcad *d, int ifindex, __u8 (*out)[16], int max)
{
	int n = 0;

	addrs_fresh(d);
	for (int i = 0; i < d->lo.naddr && n < max; i++)
		if (d->lo.addr[i].ifindex == ifindex)
			memcpy(out[n++], d->lo.addr[i].ip, 16);
	return n;
}

/* The interface that has ip, 0 if none of this namespace. */
static int addr_owner(struct xhcad *d, const __u8 ip[16])
{
	const struct loopback *lo = &d->lo;

	for (int i = 0; i < lo->naddr; i++)
		if (!memcmp(lo->addr[i].ip, ip, 16))
			return lo->addr[i].ifindex;
	return 0;
}

static const struct lo_if *if_of(const struct xhcad *d, int ifindex)
{
	for (int i = 0; i < d->lo.nif; i++)
		if (d->lo.ifs[i].ifindex == ifindex)
			return &d->lo.ifs[i];
	return NULL;
}

int lo_local_mac(struct xhcad *d, const __u8 ip[16], __u8 mac[6])
{
	const struct lo_if *i;
	int ifx;

	addrs_fresh(d);
	ifx = addr_owner(d, ip);
	i = ifx ? if_of(d, ifx) : NULL;
	if (!i)
		return -ENOENT;
	memcpy(mac, i->mac, 6);
	return 0;
}

/* The destination address of an Ethernet frame (up to two VLAN tags),
 * v4-mapped for IPv4. 0, or -1 when it is neither IPv4 nor IPv6. */
static int frame_dst(const __u8 *f, __u32 len, __u8 ip[16])
{
	__u32 off = 12;
	__u16 type;

	for (int tags = 0;; tags++) {
		if (off + 2 > len)
			return -1;
		type = (__u16)(f[off] << 8 | f[off + 1]);
		if ((type != 0x8100 && type != 0x88a8) || tags == 2)
			break;
		off += 4;
	}
	off += 2;
	if (type == 0x0800 && off + 20 <= len) {
		v4_mapped(ip, f + off + 16);
		return 0;
	}
	if (type == 0x86dd && off + 40 <= len) {
		memcpy(ip, f + off + 24, 16);
		return 0;
	}
	return -1;
}

/* A group of this interface with QP members (and no function ports: the
 * kernel's broadcast to them is what a test run cannot do). */
static int mcast_local(struct xhcad *d, const __u8 ip[16])
{
	struct xhca_mcast_grp g;

	if (bpf_map_lookup_elem(d->m.mcast, ip, &g))
		return 0;
	return g.nmembers && !g.ndevs;
}

enum lo_dest lo_dest(struct xhcad *d, const void *frame, __u32 len, int *ifindex)
{
	__u8 ip[16];
	int ifx;

	if (frame_dst(frame, len, ip))
		return LO_WIRE;
	if (xhca_ip_is_mcast(ip))
		return mcast_local(d, ip) ? LO_MCAST : LO_WIRE;
	addrs_fresh(d);
	ifx = addr_owner(d, ip);
	if (!ifx)
		return LO_WIRE;
	*ifindex = ifx;
	return ifx == d->ifindex ? LO_SELF : LO_PEER;
}

int lo_run(struct xhcad *d, const void *frame, __u32 len, struct xhca_rx_meta *m)
{
	struct loopback *lo = &d->lo;
	struct xdp_md ctx = { .data_end = len, .ingress_ifindex = (__u32)d->ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = len,
		    .data_out = lo->buf, .data_size_out = LO_BUF, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .ctx_out = &ctx, .ctx_size_out = sizeof(ctx),
		    .repeat = 1);

	if (bpf_prog_test_run_opts(d->prog_fd, &o)) {
		int err = -errno;

		lo->stats.errors++;
		pr_debug("loopback: test run of xhca_rx: %s\n", strerror(-err));
		return err;
	}
	lo->stats.runs++;
	/* The output starts at data_meta; ctx.data is the block's length. */
	if (o.retval == XDP_REDIRECT && ctx.data == META_LEN && o.data_size_out >= META_LEN)
		memcpy(m, lo->buf, META_LEN);
	else if (o.retval == XDP_REDIRECT)
		return XDP_ABORTED; /* a redirect without a block: to the function ports */
	return (int)o.retval;
}

/* A connection to the xhcad of interface i, made at its first frame and
 * kept; -1 when none can be made (no xhcad serves it). */
static int peer_conn(struct xhcad *d, const struct lo_if *i)
{
	struct loopback *lo = &d->lo;
	struct lo_out *o = NULL;
	struct sockaddr_un sa;
	int fd, sz = LO_SNDBUF;

	for (int k = 0; k < LO_IFS; k++) {
		if (lo->out[k].fd >= 0 && lo->out[k].ifindex == i->ifindex)
			return lo->out[k].fd;
		if (!o && lo->out[k].fd < 0)
			o = &lo->out[k];
	}
	if (!o)
		return -1;
	sock_name(d, i->name, &sa);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		pr_debug("loopback: %s: %s\n", sa.sun_path, strerror(errno));
		close(fd);
		return -1;
	}
	/* room for bursts (a READ's responses): xhcad is root */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	o->fd = fd;
	o->ifindex = i->ifindex;
	return fd;
}

static void peer_close(struct loopback *lo, int fd)
{
	for (int k = 0; k < LO_IFS; k++)
		if (lo->out[k].fd == fd)
			lo->out[k].fd = -1;
	close(fd);
}

int lo_forward(struct xhcad *d, int ifindex, const void *frame, __u32 len)
{
	struct loopback *lo = &d->lo;
	const struct lo_if *i = if_of(d, ifindex);

	/* (a connection its xhcad closed, restarted: a new one, once) */
	for (int tries = 0; i && tries < 2; tries++) {
		int fd = peer_conn(d, i), err;

		if (fd < 0)
			break;
		if (send(fd, frame, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len) {
			lo->stats.peer_sent++;
			return 0;
		}
		err = errno;
		if (err == EAGAIN || err == ENOBUFS) {
			lo->stats.peer_full++;
			return -EAGAIN;
		}
		pr_debug("loopback: to %s: %s\n", i->name, strerror(err));
		peer_close(lo, fd);
	}
	/* no xhcad there: lost, as on a wire */
	lo->stats.peer_unreachable++;
	return 0;
}

int lo_recv(struct xhcad *d, void *buf, __u32 cap)
{
	struct loopback *lo = &d->lo;

	/* the connections in turn, from where the last call left off */
	for (int k = 0; k < LO_PEERS; k++) {
		int i = (lo->next_in + k) % LO_PEERS;
		ssize_t n;

		if (lo->in[i] < 0)
			continue;
		n = recv(lo->in[i], buf, cap, MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) { /* that xhcad went */
			close(lo->in[i]);
			lo->in[i] = -1;
			lo->nin--;
			continue;
		}
		lo->next_in = (i + 1) % LO_PEERS;
		if ((size_t)n > cap) {
			lo->stats.peer_too_long++;
			k = -1; /* look at every connection again */
			continue;
		}
		lo->stats.peer_received++;
		return (int)n;
	}
	return 0;
}

void lo_account(const struct xhcad *d, struct xhca_lo_stats *st)
{
	*st = d->lo.stats;
}
