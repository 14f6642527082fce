/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-gen: the interface: its index, MTU, state and MAC, the neighbour
 * entry of the destination, and the packet socket for frames over
 * LIVE_FRAME_MAX.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "gen.h"

/* Source MAC, MTU and state of the interface, from the kernel of our network
 * namespace (sysfs may show another one under nsenter). */
int if_info(const char *ifname, uint8_t mac[6], int *mtu, int *up)
{
	struct ifreq ifr;
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		err = -errno;
		goto out;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0) {
		err = -errno;
		goto out;
	}
	*mtu = ifr.ifr_mtu;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		err = -errno;
		goto out;
	}
	*up = !!(ifr.ifr_flags & IFF_UP);
out:
	close(fd);
	return err;
}

/* The interface's index and MTU, and the MACs the options left out: the
 * interface's own and the neighbour entry of the destination. 0, or -errno
 * with the message printed. */
int iface_setup(struct gen_opts *so, int *ifindex, int *mtu)
{
	char ip[INET6_ADDRSTRLEN];
	uint8_t ifmac[6];
	int up = 0, err;

	*ifindex = (int)if_nametoindex(so->ifname);
	if (!*ifindex)
		return bad_usage("interface '%s' not found in this network namespace; check the "
				 "name (ip link)\n", so->ifname);
	err = if_info(so->ifname, ifmac, mtu, &up);
	if (err) {
		pr_warn("interface %s: cannot read its address: %s\n", so->ifname, strerror(-err));
		return err;
	}
	if (!up) {
		pr_warn("interface %s is down; bring it up (ip link set %s up)\n", so->ifname,
			so->ifname);
		return -ENETDOWN;
	}
	if (!so->have_smac)
		memcpy(so->spec.smac, ifmac, 6);
	if (!so->have_dmac &&
	    xhca_neigh_lookup(*ifindex, so->spec.dst_ip, so->spec.ipv6, so->spec.dmac))
		return bad_usage("no neighbour entry for %s on %s; give --dst-mac (or add one: ip "
				 "neigh replace %s lladdr MAC dev %s)\n",
				 xhca_ip_str(so->spec.dst_ip, ip, sizeof(ip)), so->ifname, ip,
				 so->ifname);
	return 0;
}

/* A packet socket on ifindex, for frames over LIVE_FRAME_MAX. */
int packet_open(int ifindex)
{
	struct sockaddr_ll a = { .sll_family = AF_PACKET, .sll_ifindex = ifindex };
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		int err = -errno;

		pr_warn("packet socket: %s; run as root\n", strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	return fd;
}

/* One frame out of the packet socket (the device's queue full: again). */
int packet_send(int fd, const char *ifname, const uint8_t *frame, size_t len)
{
	for (int tries = 0; tries < 1000; tries++) {
		if (send(fd, frame, len, 0) == (ssize_t)len)
			return 0;
		if (errno == EMSGSIZE)
			return bad_usage("send on %s: the %zu B frame exceeds its MTU; raise it "
					 "(ip link set %s mtu N)\n", ifname, len, ifname);
		if (errno != ENOBUFS && errno != EAGAIN)
			break;
		usleep(100);
	}
	pr_warn("send on %s: %s\n", ifname, strerror(errno));
	return -errno;
}
