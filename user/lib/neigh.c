/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The neighbour table (ARP, NDP) over rtnetlink: where a frame for an IP
 * address goes (xhca-gen's frames, xhcad's responses and NAKs).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <xhca/pkt.h>

int xhca_neigh_lookup(int ifindex, const uint8_t ip[16], int ipv6, uint8_t mac[6])
{
	struct {
		struct nlmsghdr nh;
		struct ndmsg nd;
	} req = {
		.nh = {
			.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg)),
			.nlmsg_type = RTM_GETNEIGH,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			.nlmsg_seq = 1,
		},
		.nd = { .ndm_family = ipv6 ? AF_INET6 : AF_INET },
	};
	const uint8_t *want = ipv6 ? ip : ip + 12;
	size_t want_len = ipv6 ? 16 : 4;
	const __u16 usable = NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT |
			     NUD_NOARP;
	static char buf[32768];
	int fd, err = -ENOENT, done = 0;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0) {
		err = -errno;
		goto out;
	}
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nh;

		if (n < 0) {
			err = -errno;
			goto out;
		}
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n); nh = NLMSG_NEXT(nh, n)) {
			struct ndmsg *nd = NLMSG_DATA(nh);
			struct rtattr *rta;
			int len, dst_ok = 0, mac_ok = 0;
			uint8_t lladdr[6];

			if (nh->nlmsg_type == NLMSG_DONE || nh->nlmsg_type == NLMSG_ERROR) {
				done = 1;
				break;
			}
			if (nh->nlmsg_type != RTM_NEWNEIGH || nd->ndm_ifindex != ifindex ||
			    !(nd->ndm_state & usable))
				continue;
			len = (int)RTM_PAYLOAD(nh);
			for (rta = RTM_RTA(nd); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
				if (rta->rta_type == NDA_DST && RTA_PAYLOAD(rta) == want_len)
					dst_ok = !memcmp(RTA_DATA(rta), want, want_len);
				if (rta->rta_type == NDA_LLADDR && RTA_PAYLOAD(rta) == 6) {
					memcpy(lladdr, RTA_DATA(rta), 6);
					mac_ok = 1;
				}
			}
			if (dst_ok && mac_ok && err == -ENOENT) {
				memcpy(mac, lladdr, 6);
				err = 0; /* keep reading: the dump must be drained */
			}
		}
	}
out:
	close(fd);
	return err;
}
