/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The rest of rdma-core 44's export set: the event names, and what xhca's
 * rdma_cm does not do. Programs are linked with BIND_NOW against every
 * symbol they import, so each must be there; calling one fails cleanly:
 *   - rsockets (rsocket ... riowrite): ENOSYS. Their streams over RC QPs
 *     are a library of their own on top of rdma_cm; nothing here runs them.
 *   - ECE (rdma_set_local_ece, rdma_get_remote_ece, rdma_reject_ece):
 *     EOPNOTSUPP, as on a device without ECE (RXE): xhcad's CM sends no
 *     ECE fields.
 */
#include <errno.h>
#include <rdma/rsocket.h>
#include "xcm.h"

XCM_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	return event >= 0 && (size_t)event < sizeof(names) / sizeof(names[0]) ? names[event]
									       : "UNKNOWN EVENT";
}

/* ---- ECE ------------------------------------------------------------------------ */

static int no_ece(void)
{
	errno = EOPNOTSUPP;
	return -1;
}

XCM_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	return no_ece();
}

XCM_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	return no_ece();
}

XCM_EXPORT int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
			       uint8_t private_data_len)
{
	return no_ece();
}

/* ---- rsockets ------------------------------------------------------------------- */

static int nosys(void)
{
	errno = ENOSYS;
	return -1;
}

XCM_EXPORT int rsocket(int domain, int type, int protocol)
{
	return nosys();
}

XCM_EXPORT int rbind(int s, const struct sockaddr *a, socklen_t l)
{
	return nosys();
}

XCM_EXPORT int rlisten(int s, int backlog)
{
	return nosys();
}

XCM_EXPORT int raccept(int s, struct sockaddr *a, socklen_t *l)
{
	return nosys();
}

XCM_EXPORT int rconnect(int s, const struct sockaddr *a, socklen_t l)
{
	return nosys();
}

XCM_EXPORT int rshutdown(int s, int how)
{
	return nosys();
}

XCM_EXPORT int rclose(int s)
{
	return nosys();
}

XCM_EXPORT ssize_t rrecv(int s, void *b, size_t n, int f)
{
	return nosys();
}

XCM_EXPORT ssize_t rrecvfrom(int s, void *b, size_t n, int f, struct sockaddr *a, socklen_t *l)
{
	return nosys();
}

XCM_EXPORT ssize_t rrecvmsg(int s, struct msghdr *m, int f)
{
	return nosys();
}

XCM_EXPORT ssize_t rsend(int s, const void *b, size_t n, int f)
{
	return nosys();
}

XCM_EXPORT ssize_t rsendto(int s, const void *b, size_t n, int f, const struct sockaddr *a,
			   socklen_t l)
{
	return nosys();
}

XCM_EXPORT ssize_t rsendmsg(int s, const struct msghdr *m, int f)
{
	return nosys();
}

XCM_EXPORT ssize_t rread(int s, void *b, size_t n)
{
	return nosys();
}

XCM_EXPORT ssize_t rreadv(int s, const struct iovec *v, int n)
{
	return nosys();
}

XCM_EXPORT ssize_t rwrite(int s, const void *b, size_t n)
{
	return nosys();
}

XCM_EXPORT ssize_t rwritev(int s, const struct iovec *v, int n)
{
	return nosys();
}

XCM_EXPORT int rpoll(struct pollfd *fds, nfds_t n, int timeout)
{
	return nosys();
}

XCM_EXPORT int rselect(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t)
{
	return nosys();
}

XCM_EXPORT int rgetpeername(int s, struct sockaddr *a, socklen_t *l)
{
	return nosys();
}

XCM_EXPORT int rgetsockname(int s, struct sockaddr *a, socklen_t *l)
{
	return nosys();
}

XCM_EXPORT int rsetsockopt(int s, int level, int name, const void *v, socklen_t l)
{
	return nosys();
}

XCM_EXPORT int rgetsockopt(int s, int level, int name, void *v, socklen_t *l)
{
	return nosys();
}

XCM_EXPORT int rfcntl(int s, int cmd, ...)
{
	return nosys();
}

XCM_EXPORT off_t riomap(int s, void *b, size_t n, int prot, int flags, off_t off)
{
	return nosys();
}

XCM_EXPORT int riounmap(int s, void *b, size_t n)
{
	return nosys();
}

XCM_EXPORT size_t riowrite(int s, const void *b, size_t n, off_t off, int flags)
{
	/* size_t: rdma-core's; -1 as its errors are */
	return (size_t)nosys();
}
