/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxhca: the application interface of the xhca software HCA.
 *
 * An application opens a session with xhcad for an interface, allocates
 * buffers in its host memory, registers memory regions in them for RDMA
 * WRITE (and later READ and ATOMIC) from the remote side, creates
 * completion queues and queue pairs, posts receive buffers and polls
 * completions. Posting and polling touch only
 * shared memory (include/xhca/ring.h): no system call per work request or
 * completion. Everything the session created is freed by xhcad when the
 * session ends, by xhca_close() or because the process died.
 *
 * Functions returning int return 0 (or a count) on success and -errno on
 * failure; those returning a pointer return NULL and set errno. After a
 * failure xhca_errmsg() tells what xhcad said, in one line; after
 * xhca_open() failed, xhca_errmsg(NULL) tells why (per thread).
 *
 * Not thread-safe per object: use one thread per CQ and per QP, or lock.
 */
#ifndef XHCA_XHCA_H
#define XHCA_XHCA_H

#include <stddef.h>
#include <stdint.h>
#include <xhca/abi.h>
#include <xhca/attr.h>
#include <xhca/ring.h>

struct xhca_ctx;
struct xhca_cq;
struct xhca_qp;
struct xhca_pd;
struct xhca_mr;
struct xhca_srq;
struct xhca_sge;

/* A completion: the CQE layout of the shared ring (ring.h). */
#define xhca_wc xhca_cqe

/* Session. */
struct xhca_ctx *xhca_open(const char *ifname);
void xhca_close(struct xhca_ctx *ctx);
const char *xhca_errmsg(const struct xhca_ctx *ctx);
/* The largest path MTU, in bytes, xhcad carries on this kernel: 4096, or
 * 2048 where AF_XDP lacks multi-buffer (Linux < 6.6). */
int xhca_max_path_mtu(const struct xhca_ctx *ctx);
/* Buffers in host memory, page-aligned, zeroed, mapped into the process
 * page by page: one buffer is contiguous here whether or not its pages are
 * adjacent in host memory. xhca_alloc_ex() takes XHCA_ALLOC_SCATTER (pages
 * apart, as fragmented memory: regions in it are not pre-translated) or
 * XHCA_ALLOC_CONTIG (adjacent even under xhcad --fragment). xhca_free()
 * takes the address xhca_alloc returned; the regions in the buffer are
 * deregistered with it. */
void *xhca_alloc(struct xhca_ctx *ctx, size_t len);
void *xhca_alloc_ex(struct xhca_ctx *ctx, size_t len, unsigned int flags);
int xhca_free(struct xhca_ctx *ctx, void *buf);
/* Where [addr, addr + len) is: its buffer's id and the offset in it, and
 * whether the buffer's pages are adjacent in host memory. -EFAULT if it is
 * not inside one buffer. (For tools and tests; ring.h's receive entries
 * name buffers this way.) */
int xhca_mem_lookup(struct xhca_ctx *ctx, const void *addr, size_t len, uint32_t *alloc,
		    uint64_t *off, int *contiguous);

/*
 * Host memory under memory the application already has (the verbs layer's
 * ibv_reg_mr on any buffer): the pages holding [addr, addr + len) become a
 * buffer of host memory at the same addresses, with the bytes they had, so
 * that regions in it are written by xhca_rx and xhcad where the application
 * reads. Returns the first page's address. The memory must be private
 * private (malloc, posix_memalign, the stack, a program's data, mmap
 * MAP_PRIVATE): -EOPNOTSUPP for a shared or hugetlb mapping, -EFAULT for a
 * hole, -EEXIST when the pages overlap a buffer of xhca_alloc. Pages that
 * adopted memory has already are joined: the new buffer covers the union,
 * holding the same host memory pages there (xhcad's XHCA_ALLOC_JOIN), so
 * the regions of the earlier buffers keep their pages. A forked child
 * gets private copies of these pages. xhca_unadopt() of the buffer that
 * joined the others (and xhca_close()) gives the pages back as private
 * memory with their bytes, and frees the joined ones; deregister the
 * regions in them first.
 */
void *xhca_adopt(struct xhca_ctx *ctx, void *addr, size_t len);
int xhca_unadopt(struct xhca_ctx *ctx, void *base);

/* Protection domains: a QP may use only the memory regions of its PD. */
struct xhca_pd *xhca_pd_alloc(struct xhca_ctx *ctx);
/* -EBUSY while QPs or regions are in it. */
int xhca_pd_dealloc(struct xhca_pd *pd);
uint32_t xhca_pd_id(const struct xhca_pd *pd);

/* Memory regions: len bytes at addr, inside one buffer of xhca_alloc;
 * access is XHCA_ACCESS_* (abi.h; remote write and atomic need local write).
 * The remote side addresses the region by its virtual address here (the
 * iova) and the R_Key. When the region's pages are adjacent in host memory
 * xhcad pre-translates it and xhca_rx places WRITEs into it itself; else
 * xhcad places them. Deregistering returns only once no WRITE can reach the
 * region any more. */
struct xhca_mr *xhca_mr_reg(struct xhca_pd *pd, void *addr, size_t len, unsigned int access);
/* As xhca_mr_reg, the remote side naming the region's first byte iova. */
struct xhca_mr *xhca_mr_reg_iova(struct xhca_pd *pd, void *addr, size_t len, uint64_t iova,
				 unsigned int access);
/* The region with a new translation (len bytes at addr, remote iova), PD
 * (of the same session) and access, its key kept: the old ones are no
 * longer used when it returns. On failure it is as it was. */
int xhca_mr_rereg(struct xhca_mr *mr, struct xhca_pd *pd, void *addr, size_t len, uint64_t iova,
		  unsigned int access);
int xhca_mr_dereg(struct xhca_mr *mr);
/* Memory windows (since XHCA_1.1) of type 1 or 2 in pd: the window's R_Key
 * in *rkey, its index its own; unbound until a bind (XHCA_WR_BIND_MW, on a
 * QP of pd) gives it part of a region registered with XHCA_ACCESS_MW_BIND
 * and a new key byte. Remote requests may then use the window's R_Key, a
 * type 2 window's only through the QP that bound it; XHCA_WR_LOCAL_INV or
 * the peer's SEND with Invalidate unbinds a type 2 window, a bind of
 * length 0 a type 1 window. A region cannot be deregistered while windows
 * are bound to it (-EBUSY). */
int xhca_mw_alloc(struct xhca_pd *pd, unsigned int type, uint32_t *rkey);
int xhca_mw_dealloc(struct xhca_pd *pd, uint32_t rkey);
/* The R_Key (= L_Key): index << 8 | a key byte new on every registration. */
uint32_t xhca_mr_rkey(const struct xhca_mr *mr);
int xhca_mr_pretranslated(const struct xhca_mr *mr);

/* Completion queues. depth: a power of 2 up to XHCA_CQ_DEPTH_MAX.
 * xhca_cq_create_ex() takes XHCA_CQF_PROXY (attr.h): a proxy CQ, whose
 * completions the proxy releases in message order; there every RDMA WRITE
 * that lands completes too (XHCA_WC_RECV_RDMA_WRITE), and requests the
 * proxy handled complete as XHCA_WC_PROXY (ring.h). */
struct xhca_cq *xhca_cq_create(struct xhca_ctx *ctx, unsigned int depth);
struct xhca_cq *xhca_cq_create_ex(struct xhca_ctx *ctx, unsigned int depth, unsigned int flags);
int xhca_cq_destroy(struct xhca_cq *cq);
/* The CQ holds depth (a power of 2) entries from now on, its completions
 * kept: -EINVAL when it holds more than depth, -EOPNOTSUPP for a proxy CQ.
 * Not while another thread polls it. */
int xhca_cq_resize(struct xhca_cq *cq, unsigned int depth);
/* Takes QP qpn's completions out of the CQ (those not polled yet; the
 * others keep their order), as a QP reset does on an HCA: how many, or
 * -errno. Not while another thread polls it. (Since XHCA_1.1.) */
int xhca_cq_clean(struct xhca_cq *cq, uint32_t qpn);
/* Up to n completions into wc; returns how many (0: none), or -errno with
 * none taken when the doorbell telling xhcad of room an earlier call made
 * could not be rung (it is rung again at each call). Every 64th empty
 * poll of a CQ in a row yields the CPU (sched_yield), so that a program
 * spinning on it leaves xhcad room on a busy host, and so does the first
 * empty poll after an xhca_post_send that found its send queue idle;
 * XHCA_POLL_YIELD=N in the environment sets N (0: never). */
int xhca_poll_cq(struct xhca_cq *cq, struct xhca_wc *wc, int n);
/* Waits until a completion is there or timeout_ms passes (-1: forever).
 * Returns 1 when completions are ready, 0 on timeout. */
int xhca_cq_wait(struct xhca_cq *cq, int timeout_ms);
/* For epoll: the eventfd that becomes readable after xhca_cq_arm() once a
 * completion arrives. xhca_cq_arm() returns 1 if completions are already
 * there (do not sleep), 0 when armed. Read the eventfd (8 bytes) after it
 * fired. */
int xhca_cq_fd(const struct xhca_cq *cq);
int xhca_cq_arm(struct xhca_cq *cq);
/* Times xhcad found this CQ full and held the QPs' flow queue back. */
uint64_t xhca_cq_stalls(const struct xhca_cq *cq);
/* Since XHCA_1.2: 1 once xhcad gave up on the CQ (full longer than its
 * --cq-stall-ms with completions waiting: it takes no more, its QPs are in
 * the error state), else 0. */
int xhca_cq_overrun(const struct xhca_cq *cq);

/* Queue pairs. */
struct xhca_qp_init_attr {
	uint8_t type;		/* XHCA_QPT_RC, _UC or _UD */
	uint32_t qpn;		/* 0: xhcad picks one */
	uint16_t pkey;		/* 0: 0xffff */
	uint32_t qkey;		/* UD */
	int flowq;		/* -1: a hash of the QPN */
	struct xhca_cq *recv_cq;
	unsigned int rq_depth;	/* receive queue slots, a power of 2 */
	struct xhca_pd *pd;	/* NULL: one PD the session's QPs share */
	unsigned int create_flags; /* XHCA_QP_CREATE_* */
	struct xhca_cq *send_cq; /* NULL: no send queue (receive only) */
	unsigned int sq_depth;	/* send queue slots, a power of 2 (with send_cq) */
	struct xhca_srq *srq;	/* receive buffers from this SRQ (rq_depth unused) */
	unsigned int rq_sge;	/* pieces a receive's scatter list may have (0, 1: one;
				 * up to XHCA_SGE_MAX, xhca_post_recv_sg) */
};

/* No copy of the multicast packets this QP sent itself (source address of
 * this host, source QPN its own), as IBV_QP_CREATE_BLOCK_SELF_MCAST_LB. */
#define XHCA_QP_CREATE_BLOCK_SELF_MCAST_LB (1u << 1)

/* A proxy QP (US 9,069,633): its filters may offload messages to xhcad's
 * proxy thread. Its recv_cq must be a proxy CQ. */
#define XHCA_QP_CREATE_PROXY (1u << 2)

struct xhca_qp *xhca_qp_create(struct xhca_ctx *ctx, const struct xhca_qp_init_attr *attr);
uint32_t xhca_qp_num(const struct xhca_qp *qp);
/* attr->mask says which fields change (XHCA_QPA_* in attr.h); attr->qpn is
 * filled in. On success attr holds the QP as xhcad has it now. */
int xhca_qp_modify(struct xhca_qp *qp, struct xhca_qp_attr *attr);
int xhca_qp_query(struct xhca_qp *qp, struct xhca_qp_attr *attr);
/* Proxy on or off (the QP must be on a proxy CQ). Off: no new message is
 * offloaded; what the proxy has is finished, and completions stay in order. */
int xhca_qp_set_proxy(struct xhca_qp *qp, int on);
/* A filter on a proxy QP (abi.h, struct xhca_pfilter; set f->handler to
 * XHCA_PXH_LOCK for SENDs to the lock service). Returns its id (also in
 * f->id), or -errno. */
int xhca_filter_add(struct xhca_qp *qp, struct xhca_pfilter *f);
int xhca_filter_del(struct xhca_ctx *ctx, uint32_t id);
int xhca_qp_destroy(struct xhca_qp *qp);
/* The receive queue ring (ring.h), for tools and tests that write entries
 * themselves. */
struct xhca_ring_ctl *xhca_qp_rq(struct xhca_qp *qp);

/* Multicast (UD QPs): joins or leaves the group of mgid, 16 bytes, an IPv6
 * multicast address or an IPv4 one v4-mapped (::ffff:239.1.1.1). A group
 * that does not exist is created, as verbs do, and goes with its last
 * member. Each member gets its own copy of every packet, with the GRH
 * naming the group. */
int xhca_mcast_attach(struct xhca_qp *qp, const uint8_t mgid[16]);
int xhca_mcast_detach(struct xhca_qp *qp, const uint8_t mgid[16]);
/*
 * Shared receive queues: the QPs created with one (xhca_qp_init_attr.srq)
 * take their receive buffers from it, each message the next posted buffer
 * whatever QP it came to; xhca_post_recv on such a QP is -EINVAL. Buffers
 * posted to an SRQ are not flushed when one of its QPs goes to the error
 * state. xhca_srq_destroy: -EBUSY while QPs use it. The ring (its prod and
 * cons) tells how many buffers are posted.
 */
struct xhca_srq *xhca_srq_create(struct xhca_ctx *ctx, unsigned int depth, unsigned int max_sge);
int xhca_srq_destroy(struct xhca_srq *srq);
int xhca_post_srq_recv_sg(struct xhca_srq *srq, uint64_t wr_id, const struct xhca_sge *sg, int n,
			  unsigned int flags);
struct xhca_ring_ctl *xhca_srq_ring(struct xhca_srq *srq);

/* Posts a receive buffer (inside one buffer of xhca_alloc). -ENOMEM: the
 * receive queue is full; -EFAULT: not inside a buffer of xhca_alloc;
 * -ESHUTDOWN: the QP was destroyed (by xhcad or the CLI). A QP in the error
 * state completes its posted buffers with XHCA_WC_WR_FLUSH_ERR. */
int xhca_post_recv(struct xhca_qp *qp, uint64_t wr_id, void *addr, uint32_t len);
/* flags: XHCA_RECV_EMPTY: len 0 is a buffer of no bytes (a WRITE with
 * immediate or an empty SEND completes into it); XHCA_RECV_LOC_PROT_ERR:
 * an entry that completes with XHCA_WC_LOC_PROT_ERR when a message wants it
 * (the verbs layer's failed lkey check, reported where a real HCA does). */
#define XHCA_RECV_EMPTY (1u << 0)
#define XHCA_RECV_LOC_PROT_ERR (1u << 1)
int xhca_post_recv_ex(struct xhca_qp *qp, uint64_t wr_id, void *addr, uint32_t len,
		      unsigned int flags);
/* A scatter list of n pieces (up to the QP's rq_sge), each inside one
 * buffer of xhca_alloc: a message fills them in turn. n 0 with
 * XHCA_RECV_EMPTY: a buffer of no bytes. -EINVAL: more pieces than the QP
 * takes. */
int xhca_post_recv_sg(struct xhca_qp *qp, uint64_t wr_id, const struct xhca_sge *sg, int n,
		      unsigned int flags);

/* The opcodes (enum xhca_wr_opcode) and send_flags (XHCA_SEND_*): ring.h.
 * One more send flag, for libxhca only: the request completes with
 * XHCA_WC_LOC_PROT_ERR in its turn, its scatter list unread (the verbs
 * layer's failed lkey check). */
#define XHCA_SEND_LOC_PROT_ERR (1u << 7)

/* Bytes at addr inside one buffer of xhca_alloc. */
struct xhca_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;	/* a receive's (since XHCA_1.1): the region xhcad checks the
			 * piece against when a message takes it (a region of the
			 * QP's PD allowing local write, holding the piece), else
			 * XHCA_WC_LOC_PROT_ERR; 0: none checked */
};

struct xhca_send_wr {
	uint64_t wr_id;
	struct xhca_send_wr *next;
	struct xhca_sge *sg_list;
	int num_sge;			/* up to XHCA_SGE_MAX (ring.h) */
	enum xhca_wr_opcode opcode;
	unsigned int send_flags;	/* XHCA_SEND_* */
	uint32_t imm_data;		/* network order; SEND_WITH_INV, LOCAL_INV: the R_Key
					 * (host order) */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;	/* FETCH_ADD: the addend; ATOMIC_WRITE
						 * (since XHCA_1.1): the 8 bytes stored,
						 * as in memory, no scatter list */
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			uint8_t dest_ip[16];	/* IPv4 v4-mapped, as xhca_ip_parse */
			uint32_t remote_qpn;	/* 0xffffff with a multicast address */
			uint32_t remote_qkey;
		} ud;
		struct {			/* XHCA_WR_BIND_MW (since XHCA_1.1) */
			uint32_t mw_rkey;	/* the window's R_Key from now on */
			uint32_t mr_lkey;	/* the region it is bound to */
			uint64_t addr;		/* its first byte there (the region's iova) */
			uint64_t length;	/* 0: unbound */
			unsigned int access;	/* XHCA_ACCESS_REMOTE_* */
		} bind;
	} wr;
};

/*
 * Posts a chain of send requests (the QP needs a send_cq). xhcad builds the
 * packets through the QP's context (path MTU, addresses, P_Key, PSN) and
 * sends them; an RC request completes when it is acknowledged (READ data
 * and ATOMIC results are in the scatter list first), after retransmissions
 * as the QP's timeout, retry_cnt and rnr_retry allow; UC and UD ones when
 * sent. Completions, in posting order, go to the send CQ: every failed
 * request, and successful ones with XHCA_SEND_SIGNALED. Returns 0, or
 * -errno with *bad_wr the first request not posted: -EINVAL (an opcode the
 * QP type cannot send, too many SGEs, an ATOMIC without 8 bytes), -EFAULT
 * (an SGE outside the buffers of xhca_alloc), -ENOMEM (the send queue is
 * full), -ESHUTDOWN (the QP was destroyed). A QP in the error state
 * completes what is posted with XHCA_WC_WR_FLUSH_ERR.
 */
int xhca_post_send(struct xhca_qp *qp, struct xhca_send_wr *wr, struct xhca_send_wr **bad_wr);
/* The send queue ring (ring.h), for tools and tests. */
struct xhca_ring_ctl *xhca_qp_sq(struct xhca_qp *qp);

#endif /* XHCA_XHCA_H */
