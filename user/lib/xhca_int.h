/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxhca's own header, never installed (as libbpf's libbpf_internal.h):
 * what the files of its application interface (include/xhca/xhca.h)
 * share. The interface is a session on xhcad's control socket for the
 * slow operations, shared memory for the fast ones. Posting a receive and
 * polling a completion are a few loads and stores on rings in host memory
 * (include/xhca/ring.h).
 *
 * The files: session.c (a session: open, close, one request on it,
 * resumed when xhcad restarted), mem.c (host memory: its blocks mapped,
 * the allocations and their table, PDs and regions), adopt.c (host memory
 * under the application's own pages; a fork's child), cq.c (CQs: polling,
 * waiting), qp.c (QPs and SRQs, multicast, filters), post.c (receives and
 * sends onto the rings). xhca_close (session.c) frees what the others
 * made.
 *
 * The functions and variables declared here are the library's own, named
 * xl_ (as xverbs.h's xv_ and xcm.h's xcm_): in libxhca.a, hidden in
 * libxhca.so.1 (libxhca.map's local: *) and in the verbs library
 * (-fvisibility=hidden).
 */
#ifndef XHCA_LIB_XHCA_INT_H
#define XHCA_LIB_XHCA_INT_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <xhca/xhca.h>
#include <xhca/ctl.h>

/*
 * The library's own mappings (host memory, and moving an application's
 * pages under a region and back) are made with the system calls
 * themselves, not libc's wrappers: a program may hook those (UCX's memory
 * hooks patch mmap, munmap and mremap to hear of the program's unmaps),
 * and would take a region's pages going into host memory, contents kept,
 * for the program unmapping them: UCX's registration cache then
 * deregistered the region it had just registered, its receive buffers
 * left on private pages that no frame reaches.
 */
static inline void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);

	return r < 0 && r > -4096 ? MAP_FAILED : (void *)r;
}

static inline int sys_munmap(void *addr, size_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}

static inline void *sys_mremap(void *old, size_t old_len, size_t len, int flags, void *new_addr)
{
	long r = syscall(SYS_mremap, old, old_len, len, flags, new_addr);

	return r < 0 && r > -4096 ? MAP_FAILED : (void *)r;
}

struct xhca_cq {
	struct xhca_ctx *ctx;
	__u32 id;
	__u32 depth;
	size_t ring_len;
	struct xhca_ring_ctl *ring;
	struct xhca_cqe *e;
	int efd;		/* xhcad signals it when armed */
	int dbfd;		/* we ring it when xhcad waits for room */
	int db_owed;		/* ringing it failed: the next poll rings it first */
	unsigned int empty;	/* polls in a row that found nothing */
	struct xhca_cq *next;
};

/* A ring that takes receive entries: a QP's or an SRQ's, with its table
 * of scatter lists (ring.h's XHCA_RSGL_BYTES) when it takes lists. */
struct rq_ring {
	struct xhca_ring_ctl *ctl;
	struct xhca_rwqe *e;
	__u32 depth;
	__u32 cons_cache;	/* ctl->cons as last read: read again only when
				 * the ring looks full by it (the line is written
				 * by xhcad and xhca_rx) */
	__u32 own_alloc;	/* the ring's allocation: an empty entry names it */
	struct xhca_rsge *sgl;	/* NULL: one piece an entry */
	__u32 sgl_alloc;
	__u32 max_sge;
};

struct xhca_qp {
	struct xhca_ctx *ctx;
	__u32 qpn;
	struct rq_ring rq;	/* ctl NULL: the QP takes an SRQ's buffers */
	size_t rq_len;
	__u8 type;
	__u32 sq_depth;
	__u32 sq_alloc;
	size_t sq_len;
	struct xhca_ring_ctl *sq;	/* NULL: no send queue */
	__u32 sq_cons_cache;		/* sq->cons as last read (rq_ring's cons_cache) */
	struct xhca_swqe *sqe;
	/* direct sends (direct.c): the QP's UDP socket (0: none yet, -1:
	 * none from now on) and what it is bound to */
	int dfd;
	__u32 d_saddr;
	__u16 d_sport;
	struct xhca_qp *next;
};

struct xhca_srq {
	struct xhca_ctx *ctx;
	__u32 id;
	struct rq_ring rq;
	size_t len;
	struct xhca_srq *next;	/* the session's SRQs (xhca_close frees what is left) */
};

struct xhca_pd {
	struct xhca_ctx *ctx;
	__u32 id;
	struct xhca_pd *next;
};

struct xhca_mr {
	struct xhca_pd *pd;
	__u32 rkey;
	__u32 flags;
	void *addr;
	size_t len;
	struct xhca_mr *next;
};

/* An allocation as the application sees it: its pages mapped side by
 * side, wherever they are in host memory. */
struct buf {
	__u8 *va;
	size_t len;		/* whole pages */
	__u32 id;
	__u8 contiguous;
	__u8 adopted;		/* under the application's own pages (xhca_adopt) */
	__u32 parent;		/* joined: the allocation that holds its pages now */
};

struct xhca_ctx {
	char ifname[IF_NAMESIZE];
	int fd;
	pthread_mutex_t call_lock;	/* one request at a time on fd: threads share a session */
	/* host memory: the session's blocks, each a map of its own
	 * (XHCA_CTL_BLOCK), fetched as its allocations come to them */
	int *bfd;		/* by block; -1: not fetched */
	__u32 nblocks;
	pthread_mutex_t block_lock;
	__u32 session;
	__u32 max_mtu;		/* the largest path MTU xhcad carries */
	struct buf *bufs;	/* sorted by va */
	__u32 nbufs, cap;
	/* adopted buffers another one joined (xhca_adopt): out of the table,
	 * their allocations kept for their regions until the joiner goes */
	struct buf *joined;
	__u32 njoined;
	__u32 last;		/* the last one looked up */
	struct xhca_cq *cqs;
	struct xhca_qp *qps;
	struct xhca_srq *srqs;
	struct xhca_pd *pds;
	struct xhca_pd *dflt_pd; /* for QPs created without one */
	struct xhca_mr *mrs;
	int sq_dbfd;		/* the send doorbell: rung when xhcad sleeps (ring.h) */
	int handover;		/* a post found its send queue idle: the next empty
				 * CQ poll yields at once (cq.c) */
	char err[XHCA_ERRMSG_LEN];
	struct xhca_ctx *next_session;	/* sessions with adopted memory (fork) */
	int in_sessions;
};

static inline int conn_lost(int err)
{
	return err == -ECONNRESET || err == -EPIPE || err == -ENOTCONN;
}

static inline __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

static inline size_t pages_of(__u64 len)
{
	return (size_t)((len + XHCA_PAGE_SIZE - 1) / XHCA_PAGE_SIZE) * XHCA_PAGE_SIZE;
}

/* An error of the session: its message kept for xhca_errmsg(), err
 * returned (session.c). */
int xl_fail(struct xhca_ctx *ctx, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* One request on the session (session.c): resumed first when its xhcad
 * restarted; resp gets exactly resp_len bytes. 0 or -errno, the message
 * kept. */
int xl_call(struct xhca_ctx *ctx, __u32 op, const void *req, __u32 len, int send_fd,
	    void *resp, __u32 resp_len, int *recv_fd);
/* The session taken again from a restarted xhcad (session.c); 0 or
 * -errno, the message kept. */
int xl_resume(struct xhca_ctx *ctx);

/* Host memory (mem.c): pages [page, page + count) mapped at va
 * (reserved), 0 or -1 with errno; a contiguous piece (a ring) mapped where
 * the kernel likes, or NULL with errno. */
int xl_map_host(struct xhca_ctx *ctx, __u8 *va, __u64 page, __u64 count);
void *xl_map_ring(struct xhca_ctx *ctx, __u64 off, __u64 len);
/* The table of allocations (mem.c): the one holding [p, p + len), or
 * NULL; one in and one out, under xl_sessions_lock (a fork's child reads
 * the table). */
struct buf *xl_buf_find(struct xhca_ctx *ctx, const void *p, size_t len);
int xl_buf_add(struct xhca_ctx *ctx, const struct buf *nb);
void xl_buf_del(struct xhca_ctx *ctx, struct buf *b);
/* Every session with adopted memory, for the fork handler (adopt.c), and
 * the lock of theirs and of every buffer table (mem.c). */
extern struct xhca_ctx *xl_sessions;
extern pthread_mutex_t xl_sessions_lock;
/* ALLOC (mem.c), with njoin earlier allocations to hold (XHCA_ALLOC_JOIN):
 * the reply (malloc'd, free it) in *reply, the allocation in *a; and an
 * allocation (id; 0: none) freed again. */
int xl_alloc_join_call(struct xhca_ctx *ctx, size_t len, unsigned int flags,
		       const struct xhca_alloc_join *join, __u32 njoin, struct xhca_alloc *a,
		       void **reply);
void xl_alloc_undo(struct xhca_ctx *ctx, __u32 id);

/* A direct send (direct.c): the packet of request w, filled from wr into
 * its slot, built into d from the path in the ring, w marked
 * (XHCA_SEND_DIRECT, the PSN): 0, or -1 when the request goes through
 * xhcad (not one packet of a SEND or WRITE, no path, no socket). Then,
 * with w posted, the packet sent: where it cannot be, w is unmarked (or,
 * taken already, sent again after the QP's timeout). The caller knows
 * the queue idle (every request completed). */
struct xl_direct {
	__u8 frame[4352];	/* Ethernet, IPv4, UDP: the UDP payload after 42 bytes */
	__u32 len;		/* the UDP payload's */
	struct sockaddr_in to;
};
int xl_direct_build(struct xhca_qp *qp, const struct xhca_send_wr *wr, struct xhca_swqe *w,
		    struct xl_direct *d);
void xl_direct_send(struct xhca_qp *qp, struct xhca_swqe *w, const struct xl_direct *d);
void xl_direct_close(struct xhca_qp *qp);

/* The adopted buffer at b back to private memory with its bytes, if the
 * application still has host memory there (adopt.c). */
void xl_unadopt_pages(struct buf *b);

#endif
