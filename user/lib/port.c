/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An xhca device's port, as the verbs library and xhcad's device view both
 * show it (include/priv/xhca/port.h).
 */
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <xhca/port.h>

static int if_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -errno;
	memset(ifr, 0, sizeof(*ifr));
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", ifname);
	rc = ioctl(fd, req, ifr) ? -errno : 0;
	close(fd);
	return rc;
}

int xhca_node_guid(const char *ifname, uint8_t g[8])
{
	struct ifreq ifr;
	const uint8_t *m;
	int err = if_ioctl(ifname, SIOCGIFHWADDR, &ifr);

	memset(g, 0, 8);
	if (err)
		return err;
	m = (const uint8_t *)ifr.ifr_hwaddr.sa_data;
	g[0] = m[0] ^ 2;
	g[1] = m[1];
	g[2] = m[2];
	g[3] = 0xff;
	g[4] = 0xfe;
	g[5] = m[3];
	g[6] = m[4];
	g[7] = m[5];
	return 0;
}

int xhca_gid_table(const char *ifname, struct xhca_gid_ent *t, int max)
{
	struct ifaddrs *ifa, *i;
	int n;

	if (max < 1)
		return 0;
	memset(&t[0], 0, sizeof(t[0]));
	t[0].gid[0] = 0xfe;
	t[0].gid[1] = 0x80;
	xhca_node_guid(ifname, &t[0].gid[8]);
	n = 1;
	if (getifaddrs(&ifa))
		return n;
	for (int pass = 0; pass < 2; pass++) {
		for (i = ifa; i && n < max; i = i->ifa_next) {
			struct xhca_gid_ent *g = &t[n];

			if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
				continue;
			if (i->ifa_addr->sa_family == AF_INET && pass == 0) {
				const struct sockaddr_in *s = (const void *)i->ifa_addr;

				memset(g, 0, sizeof(*g));
				g->gid[10] = g->gid[11] = 0xff;
				memcpy(&g->gid[12], &s->sin_addr, 4);
				g->v4 = 1;
				n++;
			} else if (i->ifa_addr->sa_family == AF_INET6 && pass == 1) {
				const struct sockaddr_in6 *s = (const void *)i->ifa_addr;

				if (!memcmp(&s->sin6_addr, t[0].gid, 16))
					continue; /* the default GID */
				memset(g, 0, sizeof(*g));
				memcpy(g->gid, &s->sin6_addr, 16);
				n++;
			}
		}
	}
	freeifaddrs(ifa);
	return n;
}

int xhca_link_up(const char *ifname)
{
	struct ifreq ifr;

	return !if_ioctl(ifname, SIOCGIFFLAGS, &ifr) && (ifr.ifr_flags & IFF_RUNNING);
}

int xhca_link_mtu(const char *ifname)
{
	struct ifreq ifr;

	return if_ioctl(ifname, SIOCGIFMTU, &ifr) ? 1500 : ifr.ifr_mtu;
}
