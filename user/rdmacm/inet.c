/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Addresses: an IP address is 16 bytes here, IPv4 v4-mapped (::ffff:a.b.c.d),
 * as xhca's GIDs and cm.h's fields are; the interface that holds one, and
 * the source address the kernel's routing would give a destination (this
 * network namespace's, the one the program runs in).
 */
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "xcm.h"

int xcm_ip_is_v4(const uint8_t ip[16])
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(ip, pfx, sizeof(pfx));
}

/* 0.0.0.0 or :: */
int xcm_ip_any(const uint8_t ip[16])
{
	static const uint8_t zero[16];

	return !memcmp(ip, zero, 16) || (xcm_ip_is_v4(ip) && !memcmp(ip + 12, zero, 4));
}

int xcm_ip_loopback(const uint8_t ip[16])
{
	static const uint8_t one6[16] = { [15] = 1 };

	return (xcm_ip_is_v4(ip) && ip[12] == 127) || !memcmp(ip, one6, 16);
}

/* sa's address as 16 bytes and its port (host order); -EAFNOSUPPORT for
 * another family than IPv4's and IPv6's (AF_IB too: no InfiniBand here). */
int xcm_ip_of(const struct sockaddr *sa, uint8_t ip[16], uint16_t *port)
{
	if (!sa)
		return -EINVAL;
	memset(ip, 0, 16);
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)sa;

		ip[10] = ip[11] = 0xff;
		memcpy(ip + 12, &s->sin_addr, 4);
		if (port)
			*port = ntohs(s->sin_port);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)sa;

		memcpy(ip, &s->sin6_addr, 16);
		if (port)
			*port = ntohs(s->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

socklen_t xcm_sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET ? sizeof(struct sockaddr_in)
	       : sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : 0;
}

/* ip and port as a sockaddr_in (v4-mapped) or sockaddr_in6 in ss. */
socklen_t xcm_sockaddr(struct sockaddr_storage *ss, const uint8_t ip[16], uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (xcm_ip_is_v4(ip)) {
		struct sockaddr_in *s = (void *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		memcpy(&s->sin_addr, ip + 12, 4);
		return sizeof(*s);
	}
	struct sockaddr_in6 *s6 = (void *)ss;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	memcpy(&s6->sin6_addr, ip, 16);
	return sizeof(*s6);
}

void xcm_ip_text(const uint8_t ip[16], char *buf, size_t len)
{
	if (xcm_ip_is_v4(ip))
		inet_ntop(AF_INET, ip + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, ip, buf, (socklen_t)len);
}

/* The interface of this namespace that holds ip: 0, or -EADDRNOTAVAIL (no
 * interface has it, as bind(2) says). */
int xcm_local_if(const uint8_t ip[16], char ifname[IF_NAMESIZE])
{
	struct ifaddrs *ifa, *i;
	int rc = -EADDRNOTAVAIL;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		uint8_t a[16];

		if (!i->ifa_addr || xcm_ip_of(i->ifa_addr, a, NULL) || memcmp(a, ip, 16))
			continue;
		snprintf(ifname, IF_NAMESIZE, "%s", i->ifa_name);
		rc = 0;
		break;
	}
	freeifaddrs(ifa);
	return rc;
}

/* The source address the kernel's routing picks for dst: a UDP socket
 * connected there (no packet leaves) tells it. -ENETUNREACH and the like
 * when there is no route. */
int xcm_route_src(const uint8_t dst[16], uint8_t src[16])
{
	struct sockaddr_storage ss, me;
	socklen_t len = xcm_sockaddr(&ss, dst, 9), mlen = sizeof(me);
	int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&ss, len) ||
	    getsockname(fd, (struct sockaddr *)&me, &mlen))
		rc = -errno;
	else
		rc = xcm_ip_of((struct sockaddr *)&me, src, NULL);
	close(fd);
	return rc;
}

/* RoCEv2's flow label of an IPv4 connection, as Linux's rdma_cm makes it
 * from the two rdma_cm ports (its UDP source port comes from it). */
uint32_t xcm_flow_label(uint16_t src_port, uint16_t dst_port)
{
	return ((uint32_t)src_port * 31 + dst_port) & 0xfffff;
}

/* The addresses of a route, as rdma_cm's struct rdma_addr has them. */
void xcm_addr_fill(struct rdma_addr *a, const uint8_t src[16], uint16_t sport,
		   const uint8_t dst[16], uint16_t dport)
{
	xcm_sockaddr(&a->src_storage, src, sport);
	xcm_sockaddr(&a->dst_storage, dst, dport);
	memcpy(a->addr.ibaddr.sgid.raw, src, 16);
	memcpy(a->addr.ibaddr.dgid.raw, dst, 16);
	a->addr.ibaddr.pkey = htons(0xffff);
}
