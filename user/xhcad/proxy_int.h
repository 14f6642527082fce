/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The proxy's insides, shared by its three files and by no other: pxq.c
 * (the main thread's side of the mailbox: what every layer above it tells
 * the proxy), proxy_thread.c (the proxy thread) and proxy.c (the main
 * thread's service of it: frames handed over, what comes back). See proxy.c
 * for the design.
 */
#ifndef XHCAD_PROXY_INT_H
#define XHCAD_PROXY_INT_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xhca/proxy_handler.h>
#include "locksvc.h"
#include "log.h"
#include "reorder.h"
#include "xhcad_device.h" /* (proxy.c, proxy_thread.c include their own layer's too) */

#define PX_QUEUE 65536		/* entries of each direction's queue, a power of 2 */
#define PX_FRAMES_MAX 1024	/* requests handed over, not yet taken by the proxy */
#define PX_MSG_MAX 65536	/* bytes of a SEND a handler takes; longer: declined */
#define PX_SYNC_WAIT_NS 2000000000ull

#include <limits.h>

/* ---- a single-producer single-consumer queue of pointers ---------------- */

struct spsc {
	void **v;
	__u32 head;	/* the consumer's */
	__u32 tail;	/* the producer's */
};

static inline int spsc_push(struct spsc *q, void *p)
{
	__u32 t = q->tail, h = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);

	if (t - h >= PX_QUEUE)
		return -ENOBUFS;
	q->v[t & (PX_QUEUE - 1)] = p;
	__atomic_store_n(&q->tail, t + 1, __ATOMIC_RELEASE);
	return 0;
}

static inline void *spsc_pop(struct spsc *q)
{
	__u32 h = q->head, t = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
	void *p;

	if (h == t)
		return NULL;
	p = q->v[h & (PX_QUEUE - 1)];
	__atomic_store_n(&q->head, h + 1, __ATOMIC_RELEASE);
	return p;
}

/* ---- what travels between the threads -------------------------------------- */

enum px_type {
	/* main -> proxy */
	PX_FRAME = 1,	/* a frame of an offloaded SEND */
	PX_JOB,		/* an offloaded READ or ATOMIC, resolved */
	PX_REC,		/* the normal path's end of a message: a completion, or none */
	PX_FLUSH,	/* a flushed receive buffer's completion: after the sequence */
	PX_QP_ADD,
	PX_QP_DEL,
	PX_SYNC,
	/* proxy -> main */
	PX_TX,		/* a response frame to send */
	PX_REPLAY,	/* a declined message: its frames (next), for the normal path */
	PX_QP_ERR,	/* a gap timed out: the QP to the error state */
};

struct px_msg {
	struct px_msg *next;	/* a message's frames; a QP's flushed completions */
	struct px_msg *qnext;	/* main: the declined messages waiting */
	__u8 type;
	__u8 kind;		/* PX_REC: enum ro_kind */
	__u8 handler;		/* PX_FRAME: XHCA_PXH_* */
	__u16 csn;
	__u32 lidx, gen, gqpn;
	__u64 seq;		/* PX_SYNC */
	struct cq *cq;		/* PX_QP_ADD, with qtype */
	__u8 qtype;
	struct xhca_cqe cqe;	/* PX_REC, PX_FLUSH */
	struct xhca_rx_meta m;	/* PX_FRAME */
	struct resp_job job;	/* PX_JOB */
	__u32 len;
	__u8 data[];		/* PX_FRAME, PX_TX: the frame */
};

static inline struct px_msg *msg_new(__u8 type, __u32 len)
{
	struct px_msg *x = malloc(sizeof(*x) + len);

	if (!x)
		return NULL;
	memset(x, 0, sizeof(*x));
	x->type = type;
	x->len = len;
	return x;
}

static inline void msg_free(struct px_msg *x)
{
	while (x) {
		struct px_msg *n = x->next;

		if (x->type == PX_JOB)
			resp_job_free(&x->job);
		free(x);
		x = n;
	}
}

/* A QP on a proxy CQ, as the proxy keeps it. */
struct pxqp {
	int active;
	__u32 gen, gqpn;
	__u8 type;		/* XHCA_QPT_*: what a lost message means */
	int failed;		/* an expired gap moved it to the error state */
	struct cq *cq;
	struct reorder ro;
	int dirty;		/* completions written since the last notification */
	struct px_msg *flush, *flush_last; /* flushed buffers, after the sequence */
	/* the offloaded SEND being received */
	struct px_msg *first, *last;
	__u32 nbytes;
	int in_msg;
	__u16 csn;
};

struct proxy {
	struct xhcad *d;
	const struct px_msg *tagging; /* the job whose frames tx_out sends now */
	pthread_t th;
	int started;
	int stop;
	struct spsc in, out;
	int in_lock;		/* in's producers: the main thread, an engine's proxy_sync */
	int in_efd, out_efd;
	struct pxqp *qp;	/* by local index */
	__u32 *act;		/* local indexes of the active ones */
	__u32 nact;
	struct locksvc ls;
	struct ring_buffer *rb;
	__u64 sync_seq;		/* main: the last sync asked for */
	__u64 sync_done;	/* proxy: the last one done (atomic) */
	__u64 done;		/* proxy: requests finished (atomic) */
	__u64 done_seen;	/* main: what has gone into the proxy queue's deq */
	__u32 handed;		/* requests in the inbox (atomic: main +, proxy -) */
	int woke;		/* main: pushed since the last wakeup */
	int out_woke;		/* proxy: the same, the other way */
	int paused;
	struct px_msg *replay, *replay_last; /* main: declined messages waiting their turn */
	struct xhca_proxy_info st;	/* the proxy's counters (main reads them relaxed) */
	__u64 lost_main;
	/* handlers by id: 0 none, 1 the lock service, 2.. loaded (--proxy-handler) */
	struct px_handler {
		char name[XHCA_PX_NAME_MAX];
		const struct xhca_px_handler_ops *ops;
		void *state;
		void *dl;
	} h[XHCA_PXH_MAX];
};

#define CNT(p, f) __atomic_fetch_add(&(p)->st.f, 1, __ATOMIC_RELAXED)
/* proxy_info() copies the proxy's counters as one run, frames .. acks */
_Static_assert(offsetof(struct xhca_proxy_info, acks) -
		       offsetof(struct xhca_proxy_info, frames) == 17 * sizeof(__u64),
	       "the proxy's counters are 18 __u64 one after another");

static inline void wake(int fd)
{
	__u64 one = 1;

	if (write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pr_debug("proxy: eventfd: %s\n", strerror(errno));
}

/* A completion the proxy itself promises the CQ (counted before it is
 * written, as the main thread's are). */
static inline void claim(struct cq *cq, int n)
{
	__atomic_fetch_add(&cq->claimed, (__u32)n, __ATOMIC_RELAXED);
}

/* The mailbox to the proxy (pxq.c): a message it may lose (counted), and
 * the wakeup of what was pushed. */
int px_in_push(struct proxy *p, struct px_msg *x);
void px_in_wake(struct proxy *p);

/* The proxy thread (proxy_thread.c), as proxy.c starts and stops it: its
 * loop (pthread_create's), xhca_rx's records (the ring buffer's callback,
 * consumed on the thread), a QP's state dropped (at the end, the thread
 * stopped). */
void *px_thread(void *arg);
int px_on_record(void *ctx, void *data, size_t len);
void px_qp_del(struct proxy *p, __u32 lidx);

#endif /* XHCAD_PROXY_INT_H */
