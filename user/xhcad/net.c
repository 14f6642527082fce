/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The interface as the frames xhcad builds need it: its addresses (a UD
 * send's source, multicast's "from this host"), its MAC, and the MAC of a
 * destination (a multicast one from the address, else the kernel's
 * neighbour table, which is asked to resolve what it does not know).
 */
#include <errno.h>
#include <stdio.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <xhca/pkt.h>
#include "log.h"
#include "xhcad_queues.h"

int if_addrs(struct xhcad *d, const __u8 (**out)[16])
{
	static __thread __u8 laddr[16][16]; /* (each engine's) */

	*out = (const __u8 (*)[16])laddr;
	return lo_if_addrs(d, d->ifindex, laddr, 16);
}

int net_is_local(struct xhcad *d, const __u8 ip[16])
{
	const __u8(*a)[16];
	int n = if_addrs(d, &a);

	for (int i = 0; i < n; i++)
		if (!memcmp(a[i], ip, 16))
			return 1;
	return 0;
}

/* A UD send's source: the interface's first address of the destination's
 * family (IPv6: not link-local, unless the destination is). */
static int is_ll6(const __u8 ip[16])
{
	return ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80;
}

int net_ud_source(struct xhcad *d, const __u8 dst[16], __u8 src[16])
{
	const __u8(*a)[16];
	int n = if_addrs(d, &a), v4 = xhca_ip_is_v4(dst), ll = !v4 && is_ll6(dst);

	/* the scope of the destination (RFC 6724): a link-local one from a
	 * link-local address, else from one that is not */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < n; i++) {
			if (xhca_ip_is_v4(a[i]) != v4)
				continue;
			if (!v4 && is_ll6(a[i]) != ll && (pass == 0 || !ll))
				continue;
			memcpy(src, a[i], 16);
			return 0;
		}
	}
	return -EADDRNOTAVAIL;
}

int net_local_mac(struct xhcad *d)
{
	struct ifreq ifr = {};
	int fd;

	if (d->net.mac_ms)
		return 0;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", d->ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		close(fd);
		return -errno;
	}
	close(fd);
	memcpy(d->net.mac, ifr.ifr_hwaddr.sa_data, 6);
	d->net.mac_ms = now_ms();
	return 0;
}

/* Makes the kernel resolve ip (one datagram to the discard port). */
static void neigh_poke(const struct xhcad *d, const __u8 ip[16])
{
	struct sockaddr_storage ss = {};
	socklen_t sl;
	int fd;

	if (xhca_ip_is_v4(ip)) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(9);
		memcpy(&a->sin_addr, ip + 12, 4);
		sl = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(9);
		memcpy(&a->sin6_addr, ip, 16);
		/* a link-local address means nothing without its link */
		if (is_ll6(ip))
			a->sin6_scope_id = (__u32)d->ifindex;
		sl = sizeof(*a);
	}
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return;
	/* resolved on this interface, whatever the routes say */
	setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, d->ifname, (socklen_t)strlen(d->ifname));
	if (sendto(fd, "", 0, 0, (struct sockaddr *)&ss, sl) < 0)
		pr_debug("neighbour of a destination: %s\n", strerror(errno));
	close(fd);
}

/* The destination MAC of ip: a multicast one from the address, else the
 * neighbour table. UD destinations are kept a second. */
static __thread struct {	/* (each engine's) */
	__u8 ip[16];
	__u8 mac[6];
	__u64 ms;
} ncache[16];

int net_dest_mac(struct xhcad *d, const __u8 ip[16], __u8 mac[6])
{
	__u64 now = now_ms();
	int v4 = xhca_ip_is_v4(ip), slot = 0;

	if (xhca_ip_is_mcast(ip)) { /* RFC 1112, RFC 2464 */
		const __u8 m4[6] = { 0x01, 0x00, 0x5e, ip[13] & 0x7f, ip[14], ip[15] };
		const __u8 m6[6] = { 0x33, 0x33, ip[12], ip[13], ip[14], ip[15] };

		memcpy(mac, v4 ? m4 : m6, 6);
		return 0;
	}
	/* an address of this host: its interface's own MAC (loopback.c
	 * delivers it without the wire) */
	if (!lo_local_mac(d, ip, mac))
		return 0;
	for (int i = 0; i < 16; i++) {
		if (ncache[i].ms && now - ncache[i].ms < 1000 && !memcmp(ncache[i].ip, ip, 16)) {
			memcpy(mac, ncache[i].mac, 6);
			return 0;
		}
		if (ncache[i].ms < ncache[slot].ms)
			slot = i;
	}
	if (xhca_neigh_lookup(d->ifindex, ip, !v4, mac)) {
		neigh_poke(d, ip);
		eng()->req.no_neigh++;
		return -EHOSTUNREACH;
	}
	memcpy(ncache[slot].ip, ip, 16);
	memcpy(ncache[slot].mac, mac, 6);
	ncache[slot].ms = now;
	return 0;
}

/* One ETHTOOL_* request of the interface's; 0 or -1. */
static int ethtool_req(int fd, const char *ifname, void *req)
{
	struct ifreq ifr = {};

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = req;
	return ioctl(fd, SIOCETHTOOL, &ifr);
}

int net_driver(const char *ifname, char *drv, size_t len)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = -1;

	if (len)
		*drv = 0;
	if (fd < 0)
		return -1;
	if (!ethtool_req(fd, ifname, &di) && di.driver[0]) {
		snprintf(drv, len, "%.*s", (int)sizeof(di.driver), di.driver);
		err = 0;
	}
	close(fd);
	return err;
}

int net_xdp_tx_errors(const char *ifname, __u64 *errs)
{
	struct {
		struct ethtool_sset_info hdr;
		__u32 n;
	} ss = { .hdr = { .cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ull << ETH_SS_STATS } };
	struct ethtool_gstrings *names = NULL;
	struct ethtool_stats *vals = NULL;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = -1;
	__u32 n;

	*errs = 0;
	if (fd < 0)
		return -1;
	if (ethtool_req(fd, ifname, &ss) || !(ss.hdr.sset_mask & (1ull << ETH_SS_STATS)))
		goto out;
	n = ss.n;
	names = calloc(1, sizeof(*names) + (size_t)n * ETH_GSTRING_LEN);
	vals = calloc(1, sizeof(*vals) + (size_t)n * sizeof(__u64));
	if (!names || !vals)
		goto out;
	names->cmd = ETHTOOL_GSTRINGS;
	names->string_set = ETH_SS_STATS;
	names->len = n;
	vals->cmd = ETHTOOL_GSTATS;
	vals->n_stats = n;
	if (ethtool_req(fd, ifname, names) || ethtool_req(fd, ifname, vals))
		goto out;
	for (__u32 i = 0; i < n && i < names->len && i < vals->n_stats; i++) {
		char name[ETH_GSTRING_LEN + 1] = "";

		memcpy(name, names->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
		if (strstr(name, "xdp_tx_err"))
			*errs += vals->data[i];
	}
	err = 0;
out:
	free(names);
	free(vals);
	close(fd);
	return err;
}
