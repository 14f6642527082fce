/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdma_getaddrinfo: getaddrinfo(3) in rdma_cm's terms, as rdma-core's
 * addrinfo.c: the QP type stands for the socket type (RC, UC: stream; UD:
 * datagram) and the port space for the protocol (TCP; UDP, IPoIB: UDP);
 * one answer, the first; RAI_PASSIVE fills the source address, else the
 * destination (and the hints' source is copied). With neither a node nor
 * a service, the answer is the hints' addresses (libfabric's verbs
 * provider asks so once it has them). No route or connect data:
 * those come from ibacm, which RoCE has no use for (ai_route, ai_connect
 * stay empty). AF_IB is not served.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include "xcm.h"

static void to_ai(struct addrinfo *ai, const struct rdma_addrinfo *h)
{
	memset(ai, 0, sizeof(*ai));
	if (!h)
		return;
	if (h->ai_flags & RAI_PASSIVE)
		ai->ai_flags |= AI_PASSIVE;
	if (h->ai_flags & RAI_NUMERICHOST)
		ai->ai_flags |= AI_NUMERICHOST;
	if (h->ai_family != AF_IB)
		ai->ai_family = h->ai_family;
	switch (h->ai_qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
		ai->ai_socktype = SOCK_STREAM;
		break;
	case IBV_QPT_UD:
		ai->ai_socktype = SOCK_DGRAM;
		break;
	}
	switch (h->ai_port_space) {
	case RDMA_PS_TCP:
		ai->ai_protocol = IPPROTO_TCP;
		break;
	case RDMA_PS_IPOIB:
	case RDMA_PS_UDP:
		ai->ai_protocol = IPPROTO_UDP;
		break;
	case RDMA_PS_IB:
		ai->ai_protocol = ai->ai_socktype == SOCK_STREAM ? IPPROTO_TCP
				 : ai->ai_socktype == SOCK_DGRAM ? IPPROTO_UDP : 0;
		break;
	}
}

static int copy_addr(struct sockaddr **dst, socklen_t *dlen, const struct sockaddr *src,
		     socklen_t len)
{
	*dst = malloc(len);
	if (!*dst)
		return EAI_MEMORY;
	memcpy(*dst, src, len);
	*dlen = len;
	return 0;
}

static int copy_name(char **dst, const char *src)
{
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : EAI_MEMORY;
}

/* The first answer of getaddrinfo as rai. */
static int from_ai(struct rdma_addrinfo *rai, const struct rdma_addrinfo *h,
		   const struct addrinfo *ai)
{
	if (h) {
		rai->ai_qp_type = h->ai_qp_type;
		rai->ai_port_space = h->ai_port_space;
	}
	if (!rai->ai_qp_type)
		rai->ai_qp_type = ai->ai_socktype == SOCK_DGRAM ? IBV_QPT_UD : IBV_QPT_RC;
	if (!rai->ai_port_space)
		rai->ai_port_space = ai->ai_protocol == IPPROTO_UDP ? RDMA_PS_UDP : RDMA_PS_TCP;
	rai->ai_family = ai->ai_family;
	if ((ai->ai_flags & AI_PASSIVE) || (rai->ai_flags & RAI_PASSIVE)) {
		rai->ai_flags |= RAI_PASSIVE;
		return copy_addr(&rai->ai_src_addr, &rai->ai_src_len, ai->ai_addr,
				 ai->ai_addrlen) ?:
		       copy_name(&rai->ai_src_canonname, ai->ai_canonname);
	}
	return copy_addr(&rai->ai_dst_addr, &rai->ai_dst_len, ai->ai_addr, ai->ai_addrlen) ?:
	       copy_name(&rai->ai_dst_canonname, ai->ai_canonname);
}

/* No node, no service: the hints, their addresses copied (rdma-core's). */
static int from_hints(const struct rdma_addrinfo *h, struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *rai = calloc(1, sizeof(*rai));
	int ret = 0;

	if (!rai)
		return EAI_MEMORY;
	rai->ai_flags = h->ai_flags;
	rai->ai_family = h->ai_family;
	rai->ai_qp_type = h->ai_qp_type;
	rai->ai_port_space = h->ai_port_space;
	if (h->ai_dst_len && h->ai_dst_addr)
		ret = copy_addr(&rai->ai_dst_addr, &rai->ai_dst_len, h->ai_dst_addr, h->ai_dst_len);
	if (!ret && h->ai_src_len && h->ai_src_addr)
		ret = copy_addr(&rai->ai_src_addr, &rai->ai_src_len, h->ai_src_addr, h->ai_src_len);
	if (ret) {
		rdma_freeaddrinfo(rai);
		return ret;
	}
	*res = rai;
	return 0;
}

XCM_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
				const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *rai;
	struct addrinfo aih, *ai;
	int ret;

	if (!res || (!node && !service && !hints)) {
		errno = EINVAL;
		return -1;
	}
	if (hints && hints->ai_family == AF_IB) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	if (!node && !service)
		return from_hints(hints, res);
	to_ai(&aih, hints);
	ret = getaddrinfo(node, service, &aih, &ai);
	if (ret)
		return ret;
	rai = calloc(1, sizeof(*rai));
	if (!rai) {
		freeaddrinfo(ai);
		return EAI_MEMORY;
	}
	rai->ai_flags = hints ? hints->ai_flags : 0;
	ret = from_ai(rai, hints, ai);
	if (!ret && !rai->ai_src_len && hints && hints->ai_src_len && hints->ai_src_addr)
		ret = copy_addr(&rai->ai_src_addr, &rai->ai_src_len, hints->ai_src_addr,
				hints->ai_src_len);
	freeaddrinfo(ai);
	if (ret) {
		rdma_freeaddrinfo(rai);
		return ret;
	}
	*res = rai;
	return 0;
}

XCM_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = next;
	}
}
