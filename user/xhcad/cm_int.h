/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The connection manager's insides, shared by its two files and by no other:
 * cm_wire.c (the MADs built, field by field) and cm.c (the state machine:
 * ids, listeners, timers, event channels, the messages received, the
 * library's requests). See cm.c for the design.
 */
#ifndef XHCAD_CM_INT_H
#define XHCAD_CM_INT_H

#include <xhca/cm.h>
#include "xhcad_transport.h"

#define MAD_LEN 256
#define MAD_DATA 24		/* where the CM message starts in the MAD */
#define CM_CLASS 0x07
#define CM_CLASS_VERSION 2
#define CM_SEND 0x03

enum cm_attr {
	ATTR_REQ = 0x0010, ATTR_MRA = 0x0011, ATTR_REJ = 0x0012, ATTR_REP = 0x0013,
	ATTR_RTU = 0x0014, ATTR_DREQ = 0x0015, ATTR_DREP = 0x0016, ATTR_SIDR_REQ = 0x0017,
	ATTR_SIDR_REP = 0x0018,
};

/* SIDR_REP's status (IBA 12.11.2) */
#define SIDR_OK 0
#define SIDR_UNSUPPORTED 1	/* no listener for the service ID */
#define SIDR_REJECT 2		/* the consumer's */

#define REJ_TIMEOUT 4		/* the active side gave up (its id destroyed) */
#define REJ_INVALID_SID 8
#define REJ_STALE 10
#define REJ_CONSUMER 28

/* Ours in the REQ: the peer answers within 4.096 us * 2^16 (268 ms) and we
 * within 2^20 (4.3 s, as Linux); a packet lives 2^14 (67 ms). Sent again
 * CM_RETRIES times. */
#define CM_RESP_TIMEOUT_REMOTE 16
#define CM_RESP_TIMEOUT_LOCAL 20
#define CM_PKT_LIFE 14
#define CM_RETRIES 15
#define CM_MRA_TIMEOUT 24	/* what an MRA of ours asks for (Linux's) */

enum cm_state {
	CM_IDLE, CM_LISTEN, CM_REQ_SENT, CM_REQ_RCVD, CM_REP_SENT, CM_REP_RCVD,
	CM_ESTABLISHED, CM_DREQ_SENT, CM_TIMEWAIT,
	/* UD: service ID resolution, one request and its answer */
	CM_SIDR_REQ_SENT, CM_SIDR_REQ_RCVD, CM_SIDR_REP_SENT,
};

struct cm_conn_id {
	__u32 id, session, chan;
	__u16 ps;
	__u8 qp_type;
	enum cm_state state;
	/* a listener: its address and port, its backlog of requests */
	__u8 lip[16];
	__u16 lport;
	__u32 backlog, pending;
	/* a connection */
	__u32 listen_id;	/* passive: the listener it came to */
	__u32 local_cid, remote_cid;
	__u64 remote_guid, tid;
	__u32 local_qpn, remote_qpn;
	__u8 local_ip[16], remote_ip[16];
	__u16 local_port, remote_port;
	__u64 sid;
	__u8 req_local_timeout; /* passive: the REQ's Local CM Response Timeout */
	/* the message that waits for an answer, sent again on its timer */
	__u8 mad[MAD_LEN];
	int mad_live;
	__u64 deadline, wait_ns;
	int tries;
	struct cm_conn_id *next;
};

struct cm_state_all {
	struct cm_chan *chans;
	struct cm_conn_id *ids;
	__u32 next_id, next_chan;
	__u64 guid;		/* our CA GUID: the MAC as an EUI-64 */
	__u64 next_tid;
	__u32 sq_psn;		/* QP1's: each MAD the next, as any UD QP's */
	struct {
		__u64 sent, received, resent, events, events_lost, send_failed;
		__u64 bad, ignored, rejects_sent, timeouts;
	} st;
};

/* ---- big-endian fields of a MAD -------------------------------------------- */

static inline void put16(__u8 *p, __u16 v) { p[0] = (__u8)(v >> 8); p[1] = (__u8)v; }
static inline void put32(__u8 *p, __u32 v) { put16(p, (__u16)(v >> 16)); put16(p + 2, (__u16)v); }
static inline void put64(__u8 *p, __u64 v) { put32(p, (__u32)(v >> 32)); put32(p + 4, (__u32)v); }
static inline __u16 get16(const __u8 *p) { return (__u16)(p[0] << 8 | p[1]); }
static inline __u32 get32(const __u8 *p) { return (__u32)get16(p) << 16 | get16(p + 2); }
static inline __u64 get64(const __u8 *p) { return (__u64)get32(p) << 32 | get32(p + 4); }
/* A 24-bit field in the top of a word (QPN, PSN). */
static inline void put24(__u8 *p, __u32 v) { p[0] = (__u8)(v >> 16); p[1] = (__u8)(v >> 8); p[2] = (__u8)v; }
static inline __u32 get24(const __u8 *p) { return (__u32)p[0] << 16 | (__u32)p[1] << 8 | p[2]; }

/* cm_wire.c: the messages, each a whole MAD: REQ, REP and SIDR_REQ into
 * c->mad (the message that waits for its answer; a REQ's and a SIDR_REQ's
 * new TID kept in c->tid), the others into m. The answers echo c->tid; a
 * DREQ has a new TID; cm_build_ids takes one (0: a new one). */
int cm_cma_hdr_get(const __u8 *p, __u8 src[16], __u8 dst[16], __u16 *port);
void cm_build_req(struct xhcad *d, struct cm_conn_id *c, const struct xhca_cm_conn *k);
void cm_build_rep(struct xhcad *d, struct cm_conn_id *c, const struct xhca_cm_conn *k);
void cm_build_ids(struct xhcad *d, const struct cm_conn_id *c, __u8 *m, enum cm_attr attr,
		  __u64 tid);
void cm_build_rej(struct xhcad *d, const struct cm_conn_id *c, __u8 *m, __u16 reason, int msg,
		  const __u8 *pdata, __u8 len);
void cm_build_mra(struct xhcad *d, const struct cm_conn_id *c, __u8 *m, int msg);
void cm_build_dreq(struct xhcad *d, const struct cm_conn_id *c, __u8 *m);
void cm_build_sidr_req(struct xhcad *d, struct cm_conn_id *c, const struct xhca_cm_conn *k);
void cm_build_sidr_rep(struct xhcad *d, const struct cm_conn_id *c, __u8 *m, __u8 status,
		       __u32 qpn, __u32 qkey, const __u8 *pdata, __u8 len);

#endif /* XHCAD_CM_INT_H */
