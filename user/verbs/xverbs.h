/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca's libibverbs.so.1: the verbs of rdma-core's libibverbs, translated to
 * libxhca (include/xhca/xhca.h). Applications built against Debian's
 * <infiniband/verbs.h> find the same SONAME, the same versioned symbols and
 * the same structures; many verbs are static inline functions of verbs.h
 * that call through ibv_context.ops and struct verbs_context, so every
 * object here begins with the structure the application reads.
 *
 * Files in layers that call only downward, lowest first: compat.c (strings,
 * rates, the private and compat symbols of rdma-core 44; calls nothing) ->
 * device.c (devices, GIDs, queries, async events, the errno and debug
 * helpers) -> mem.c (PDs, MRs, host memory under the application's pages,
 * the lkey checks) -> srq.c (SRQs, their limit event) -> cq.c (CQs,
 * completion channels) -> wr.c (the extended post API: it posts through
 * ibv_context.ops) -> qp.c (QPs, AHs, multicast, posting) -> context.c
 * (ibv_open_device: it fills the operations with the others' functions).
 */
#ifndef XHCA_XVERBS_H
#define XHCA_XVERBS_H

#include <pthread.h>
#include <stdint.h>
#include <net/if.h>
#include <infiniband/verbs.h>
#include <xhca/port.h>
#include <xhca/xhca.h>

#define XV_EXPORT __attribute__((visibility("default")))
/* A verb that also has a 1.0 version (compat.c): its default version,
 * IBVERBS_1.1, given beside its definition. */
#define XV_V11(name)                                                                     \
	extern __typeof__(name) xv_v11_##name                                            \
		__attribute__((alias(#name), visibility("default")));                    \
	__asm__(".symver xv_v11_" #name "," #name "@@IBVERBS_1.1")

#define XV_MAX_GID XHCA_GID_TBL_LEN
#define XV_SYSFS_VERBS "/sys/class/infiniband_verbs"	/* the device view's */
#define XV_SYSFS_IB "/sys/class/infiniband"
#define XV_MAX_INLINE 1024	/* bytes of IBV_SEND_INLINE data a QP can take */
#define XV_MAX_SGE XHCA_SGE_MAX
#define XV_MAX_RD_ATOM XHCA_MAX_RD_ATOMIC /* READ/ATOMIC a responder keeps (RESP_RES in xhcad) */
#define XV_VENDOR_ID 0x0058	/* neither Mellanox (0x02c9) nor Amazon (0x1d0f) */
#define XV_VENDOR_PART 0x4341

struct xv_device {
	struct ibv_device dev;		/* what the application sees */
	/* the rest of rdma-core's struct verbs_device (driver.h, not
	 * installed): programs that probe for a provider read past the
	 * ibv_device (UCX through mlx5dv_is_supported, libfabric through
	 * efadv_query_device: ops); none of theirs here */
	const void *ops;
	int refcount;
	void *entry[2];
	void *sysfs;
	uint64_t core_support;
	char ifname[IF_NAMESIZE];
	struct xv_device *next;
};
_Static_assert(__builtin_offsetof(struct xv_device, ops) == sizeof(struct ibv_device),
	       "verbs_device's ops right after the ibv_device");

struct xv_gid {
	union ibv_gid gid;
	uint8_t v4;			/* an IPv4 address, v4-mapped */
};

struct xv_async {
	struct ibv_async_event ev;
	struct xv_async *next;
};

struct xv_mr;
struct xv_area;

/*
 * What xhca's librdmacm (user/rdmacm/) reaches through an ibv_context of
 * this library beyond the verbs: the context's xhca session, for the
 * connection manager's requests (cm.h), which must go over the session of
 * the device an rdma_cm id is bound to. Not a symbol: the export set stays
 * rdma-core's. It sits right after the verbs context, magic first, so that
 * librdmacm can tell a context of this library from another's.
 */
#define XV_CM_MAGIC 0x78636d31u /* "xcm1" */
struct xv_cm_hook {
	uint32_t magic;
	/* One control request on the context's session, under its lock: 0 or
	 * -errno with xhcad's message in err. */
	int (*call)(struct ibv_context *ctx, uint32_t op, const void *req, uint32_t len,
		    void *resp, uint32_t resp_len, int *recv_fd, char *err, size_t errlen);
};

struct xv_context {
	struct verbs_context vctx;	/* ibv_context is its last field */
	struct xv_cm_hook cm;		/* for librdmacm: keep it here */
	struct xv_device *dev;
	struct xhca_ctx *x;
	pthread_mutex_t lock;		/* the session's control socket, the tables */
	/* MRs by index (lkey >> 8), for the lkey checks of posting */
	struct xv_mr **mrs;
	uint32_t nmrs;
	struct xv_area *areas;		/* host memory under the application's pages */
	struct xv_srq *srqs;
	int srq_armed;			/* SRQs with a limit armed: polling checks them */
	struct xv_qp *qps;		/* for the watcher's QP errors */
	struct xv_cq *cqs;		/* ... and CQ overruns */
	/* the watcher (context.c): async events for QP errors and the port */
	pthread_t watcher;
	int watch_stop;			/* an eventfd: written to stop it */
	int port_up;
	/* async events: a queue, its count in an eventfd (async_fd) */
	pthread_mutex_t async_lock;
	struct xv_async *async_head, *async_tail;
};

static inline struct xv_context *xv_ctx(struct ibv_context *c)
{
	return (struct xv_context *)verbs_get_ctx(c);
}

struct xv_pd {
	struct ibv_pd pd;
	struct xhca_pd *x;
};

struct xv_mr {
	struct ibv_mr mr;
	struct xhca_mr *x;
	struct xv_area *area;
	unsigned int access;
	uint64_t iova;			/* the remote side's address of its first byte */
};

struct xv_cq {
	struct ibv_cq_ex ex;		/* begins with struct ibv_cq */
	struct xhca_cq *x;
	struct xhca_cq *xs;		/* proxy mode: send completions (cq.c) */
	pthread_spinlock_t lock;
	uint32_t events;		/* completion events handed out */
	/* ibv_cq_ex polling: the completions taken, the current one */
	struct xhca_wc batch[16];
	int nbatch, cur;
	uint32_t wc_flags;		/* ibv_create_cq_ex's */
	int overrun_seen;		/* its IBV_EVENT_CQ_ERR went */
	struct xv_cq *next;		/* the context's, for the watcher */
};

struct xv_wrb;

struct xv_srq {
	struct ibv_srq srq;
	struct xhca_srq *x;
	pthread_spinlock_t lock;
	uint32_t depth, max_sge;
	uint32_t limit;			/* armed (IBV_SRQ_LIMIT) when not 0 */
	struct xv_srq *next;		/* the context's */
};

struct xv_qp {
	struct ibv_qp_ex ex;		/* begins with struct ibv_qp */
	struct xhca_qp *x;
	pthread_spinlock_t sq_lock, rq_lock;
	struct ibv_qp_attr attr;	/* what modify set, for query */
	struct ibv_qp_cap cap;
	int sq_sig_all;
	uint8_t *inl;			/* IBV_SEND_INLINE staging: a slot per send queue entry */
	uint32_t inl_slot;
	struct xv_srq *srq;
	/* ibv_wr_* (the extended post API, wr.c): the requests being built */
	struct xv_wrb *wrb;
	uint32_t wr_n, wr_cap;
	int wr_err;
	struct xv_qp *next;		/* the context's */
	uint32_t err_seen;		/* the error its async event told */
};

struct xv_ah {
	struct ibv_ah ah;
	struct ibv_ah_attr attr;
	uint8_t ip[16];
};

/* device.c */
int xv_query_port_ex(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a,
		     size_t len);
int xv_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
		       struct ibv_device_attr_ex *a, size_t len);
struct xv_device *xv_device_find(const char *ifname);
int xv_gid_table(struct xv_context *c, struct xv_gid *t, int max);
int xv_gid_ip(struct xv_context *c, int index, uint8_t ip[16]);
int xv_link_mtu(struct xv_context *c);
int xv_link_up(struct xv_context *c);
enum ibv_mtu xv_active_mtu(int link_mtu);
enum ibv_mtu xv_max_mtu(struct xv_context *c);
enum ibv_mtu xv_port_mtu(struct xv_context *c); /* min of the two */
void xv_async_post(struct xv_context *c, const struct ibv_async_event *ev);

/* mem.c */
void xv_mem_close(struct xv_context *c);
struct xv_mr *xv_mr_of(struct xv_context *c, uint32_t lkey);
int xv_sge_ok(struct xv_context *c, struct ibv_pd *pd, const struct ibv_sge *g,
	      unsigned int need);
typedef int (*xv_post_one_fn)(void *ring, uint64_t wr_id, const struct xhca_sge *sg, int n,
			      unsigned int flags);
int xv_post_recv_chain(struct xv_context *c, struct ibv_pd *pd, struct ibv_recv_wr *wr,
		       uint32_t max_sge, xv_post_one_fn post, void *ring, struct ibv_recv_wr **bad);

/* srq.c */
void xv_srq_check(struct xv_context *c);
struct ibv_srq *xv_create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *a);
int xv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

/* qp.c */
struct ibv_qp *xv_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a);
/* wr.c: the qp_ex's function pointers */
int xv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int xv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
void xv_wr_init(struct xv_qp *q);

/* cq.c */
int xv_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int xv_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void xv_cq_ex_init(struct xv_cq *q);
struct ibv_cq_ex *xv_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a);

/* util */
/* cq.c: a reset QP's completions out of its CQ */
void xv_cq_clean(struct ibv_cq *cq, uint32_t qpn);
/* mem.c: memory windows, the context's ops */
struct ibv_mw *xv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int xv_dealloc_mw(struct ibv_mw *mw);
int xv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b);
int xv_errno(int err);	/* -errno of libxhca -> errno set, returns it */
void xv_log(struct xv_context *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint32_t xv_pow2(uint32_t n);

#endif /* XHCA_XVERBS_H */
