/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The neighbour table (ARP, NDP) over rtnetlink, by libnl-route: where a
 * frame for an IP address goes (xhca-gen's frames, xhcad's responses and
 * NAKs). The kernel is asked for the one entry (RTM_GETNEIGH without
 * NLM_F_DUMP, with the address and the interface: Linux 5.0 and later), on
 * a socket of the call's own and with nothing static: any thread may look
 * up at any time, and the table's size costs nothing. A kernel without that
 * request (EOPNOTSUPP) gets a dump of the table, which libnl filters.
 */
#include <errno.h>
#include <string.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/addr.h>
#include <netlink/route/neighbour.h>
#include <xhca/pkt.h>

/* what counts as resolved: a MAC the kernel would send to (INCOMPLETE,
 * FAILED and NONE have none, or none it trusts) */
#define NUD_USABLE (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP)

struct want {
	int ifindex;
	int family;
	const uint8_t *addr;	/* 4 or 16 bytes */
	size_t len;
	uint8_t *mac;
	int err;		/* -ENOENT until an entry is taken, or the kernel's error */
	int answered;
};

/* n is a usable entry of the address on the interface: its MAC taken. */
static int take(struct rtnl_neigh *n, struct want *w)
{
	struct nl_addr *dst = rtnl_neigh_get_dst(n), *ll = rtnl_neigh_get_lladdr(n);
	int state = rtnl_neigh_get_state(n);

	if (rtnl_neigh_get_ifindex(n) != w->ifindex || !dst || nl_addr_get_family(dst) != w->family ||
	    nl_addr_get_len(dst) != w->len || memcmp(nl_addr_get_binary_addr(dst), w->addr, w->len) ||
	    state < 0 || !(state & NUD_USABLE) || !ll || nl_addr_get_len(ll) != 6)
		return -ENOENT;
	memcpy(w->mac, nl_addr_get_binary_addr(ll), 6);
	return 0;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct want *w = arg;
	struct nlmsghdr *nh = nlmsg_hdr(msg);
	struct rtnl_neigh *n;

	w->answered = 1;
	if (nh->nlmsg_type != RTM_NEWNEIGH || rtnl_neigh_parse(nh, &n) < 0)
		return NL_SKIP;
	w->err = take(n, w);
	rtnl_neigh_put(n);
	return NL_OK;
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct want *w = arg;

	w->answered = 1;
	w->err = e->error;
	return NL_SKIP;
}

/* A socket of the caller's own (libnl gives each one a port of its own). */
static struct nl_sock *sock_open(int *err)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk) {
		*err = -ENOMEM;
		return NULL;
	}
	errno = 0;
	if (nl_connect(sk, NETLINK_ROUTE) < 0) {
		*err = errno ? -errno : -EIO;
		nl_socket_free(sk);
		return NULL;
	}
	return sk;
}

/* One RTM_GETNEIGH for the address on the interface: 0 with the MAC,
 * -ENOENT without a usable entry, -EOPNOTSUPP from a kernel before 5.0. */
static int get_one(struct nl_sock *sk, struct want *w)
{
	struct ndmsg nd = { .ndm_family = (__u8)w->family, .ndm_ifindex = w->ifindex };
	struct nl_msg *msg;
	int err;

	/* the reply or an error, nothing after it (no ACK asked for) */
	nl_socket_disable_auto_ack(sk);
	if (nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_valid, w) < 0 ||
	    nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, on_error, w) < 0)
		return -ENOMEM;
	msg = nlmsg_alloc_simple(RTM_GETNEIGH, NLM_F_REQUEST);
	if (!msg)
		return -ENOMEM;
	if (nlmsg_append(msg, &nd, sizeof(nd), NLMSG_ALIGNTO) < 0 ||
	    nla_put(msg, NDA_DST, (int)w->len, w->addr) < 0) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	errno = 0;
	err = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (err < 0)
		return errno ? -errno : -EIO;
	/* one datagram: the entry (RTM_NEWNEIGH) or the kernel's error */
	errno = 0;
	err = nl_recvmsgs_default(sk);
	if (!w->answered)
		return err < 0 && errno ? -errno : -EIO;
	switch (w->err) {
	case -ENODEV:	    /* no such interface: no entry on it */
	case -EAFNOSUPPORT: /* no such table (IPv6 off): no entry in it */
		return -ENOENT;
	}
	return w->err;
}

/* The table dumped into a cache of the call's own, the entry looked up in
 * it by libnl. */
static int get_dump(struct nl_sock *sk, struct want *w)
{
	struct nl_cache *cache;
	struct nl_addr *dst;
	struct rtnl_neigh *n;

	if (rtnl_neigh_alloc_cache(sk, &cache) < 0)
		return -EIO;
	dst = nl_addr_build(w->family, w->addr, w->len);
	if (!dst) {
		nl_cache_free(cache);
		return -ENOMEM;
	}
	n = rtnl_neigh_get(cache, w->ifindex, dst);
	w->err = n ? take(n, w) : -ENOENT;
	if (n)
		rtnl_neigh_put(n);
	nl_addr_put(dst);
	nl_cache_free(cache);
	return w->err;
}

static int lookup(int ifindex, const uint8_t ip[16], int ipv6, uint8_t mac[6], int dump)
{
	uint8_t got[6];
	struct want w = {
		.ifindex = ifindex,
		.family = ipv6 ? AF_INET6 : AF_INET,
		.addr = ipv6 ? ip : ip + 12,
		.len = ipv6 ? 16 : 4,
		.mac = got,
		.err = -ENOENT,
	};
	struct nl_sock *sk;
	int err;

	if (ifindex <= 0) /* no interface has it: no entry either */
		return -ENOENT;
	err = -EOPNOTSUPP;
	if (!dump) {
		sk = sock_open(&err);
		if (!sk)
			return err;
		err = get_one(sk, &w);
		nl_socket_free(sk);
	}
	/* (a socket of its own: the one above has this request's callbacks) */
	if (err == -EOPNOTSUPP) {
		sk = sock_open(&err);
		if (!sk)
			return err;
		w.err = -ENOENT;
		err = get_dump(sk, &w);
		nl_socket_free(sk);
	}
	if (!err)
		memcpy(mac, got, 6);
	return err;
}

int xhca_neigh_lookup(int ifindex, const uint8_t ip[16], int ipv6, uint8_t mac[6])
{
	return lookup(ifindex, ip, ipv6, mac, 0);
}

int xhca_neigh_lookup_dump(int ifindex, const uint8_t ip[16], int ipv6, uint8_t mac[6])
{
	return lookup(ifindex, ip, ipv6, mac, 1);
}
