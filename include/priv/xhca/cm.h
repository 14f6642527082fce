/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The connection manager's side of the control protocol (ctl.h): what the
 * rdma_cm library (user/rdmacm/, librdmacm.so.1) asks xhcad's CM
 * (user/xhcad/cm.c) and what it hears back. xhcad speaks the InfiniBand CM
 * (REQ, REP, RTU, REJ, MRA, DREQ, DREP, SIDR) in MADs on QP1 over RoCEv2;
 * the library keeps the rdma_cm objects (ids, channels, addresses) and moves
 * the QPs through INIT, RTR and RTS with the values a connection's
 * messages carried.
 *
 * Every request is an application session's (after HELLO) and names ids of
 * that session only. Events travel on an event channel: a SOCK_SEQPACKET
 * socket whose other end xhcad keeps (XHCA_CTL_CM_CHANNEL hands the
 * library its end), one struct xhca_cm_event per record, in the order they
 * happened for the ids on it: the channel's descriptor is what the
 * application polls (struct rdma_event_channel's fd).
 */
#ifndef XHCA_CM_H
#define XHCA_CM_H

#include <linux/types.h>

/* The rdma_cm port spaces (service ID = ps << 16 | port). */
#define XHCA_CM_PS_TCP 0x0106
#define XHCA_CM_PS_UDP 0x0111
#define XHCA_CM_PS_IB 0x013f

/* Private data the application gives: REQ 56 (after rdma_cm's 36-byte
 * header), REP 196, REJ 148, SIDR_REQ 180, SIDR_REP 136. */
#define XHCA_CM_PDATA_MAX 196

/* XHCA_CTL_CM_ID: a new id on chan; id out. */
struct xhca_cm_id {
	__u32 id;		/* out */
	__u32 chan;
	__u16 ps;		/* port space: XHCA_CM_PS_* */
	__u8 qp_type;		/* XHCA_QPT_RC or XHCA_QPT_UD */
	__u8 pad;
	__u32 pad1;
};

/* XHCA_CTL_CM_LISTEN: id listens on ip:port (ip all zero: any address of
 * the interface, IPv4 ones v4-mapped as the GIDs are). */
struct xhca_cm_listen {
	__u32 id;
	__u32 backlog;
	__u8 ip[16];
	__u16 port;
	__u16 pad;
	__u32 pad1;
};

/*
 * XHCA_CTL_CM_CONNECT (active: REQ, or SIDR_REQ on a UD id) and
 * XHCA_CTL_CM_ACCEPT (passive: REP, or SIDR_REP): the local QP and what the
 * connection parameters say. CONNECT names the addresses and ports
 * (rdma_cm's header goes in front of the private data); ACCEPT's are the
 * id's already. For a UD id: qpn and qkey of the local UD QP.
 */
struct xhca_cm_conn {
	__u32 id;
	__u32 qpn;
	__u32 psn;		/* the message's Starting PSN: as Linux, the PSN the local QP
				 * expects first (its rq_psn); the peer sends from it */
	__u32 qkey;		/* UD */
	__u8 src_ip[16];
	__u8 dst_ip[16];
	__u16 src_port;
	__u16 dst_port;
	__u8 resp_res;		/* responder resources */
	__u8 init_depth;	/* initiator depth */
	__u8 retry_count;
	__u8 rnr_retry;
	__u8 flow_control;
	__u8 srq;
	__u8 mtu;		/* path MTU, IB encoding (1 = 256 .. 5 = 4096) */
	__u8 pdata_len;
	__u8 pdata[XHCA_CM_PDATA_MAX];
	__u32 pad;
};

/* XHCA_CTL_CM_REJECT: REJ reason 28 (consumer) with the private data, or
 * SIDR_REP status 2 on a UD id. */
struct xhca_cm_reject {
	__u32 id;
	__u8 pdata_len;
	__u8 pad[3];
	__u8 pdata[148];
};

/* XHCA_CTL_CM_NOTIFY: an event the library makes itself (address and
 * route resolution, which need no message), queued on the id's channel in
 * its order with the others. */
struct xhca_cm_notify {
	__u32 id;
	__u32 event;		/* XHCA_CM_EV_* */
	__s32 status;
	__u32 pad;
};

/* XHCA_CTL_CM_MIGRATE: the id's events go to chan from now on. */
struct xhca_cm_migrate {
	__u32 id;
	__u32 chan;
};

/* Events: rdma_cm's enum rdma_cm_event_type, by value. */
enum {
	XHCA_CM_EV_ADDR_RESOLVED = 0,
	XHCA_CM_EV_ADDR_ERROR = 1,
	XHCA_CM_EV_ROUTE_RESOLVED = 2,
	XHCA_CM_EV_ROUTE_ERROR = 3,
	XHCA_CM_EV_CONNECT_REQUEST = 4,
	XHCA_CM_EV_CONNECT_RESPONSE = 5,
	XHCA_CM_EV_CONNECT_ERROR = 6,
	XHCA_CM_EV_UNREACHABLE = 7,
	XHCA_CM_EV_REJECTED = 8,
	XHCA_CM_EV_ESTABLISHED = 9,
	XHCA_CM_EV_DISCONNECTED = 10,
	XHCA_CM_EV_DEVICE_REMOVAL = 11,
	XHCA_CM_EV_MULTICAST_JOIN = 12,	/* the library's (NOTIFY) */
	XHCA_CM_EV_MULTICAST_ERROR = 13,
	XHCA_CM_EV_ADDR_CHANGE = 14,
	XHCA_CM_EV_TIMEWAIT_EXIT = 15,
};

/*
 * One event on a channel. CONNECT_REQUEST: id is the new id (made by xhcad
 * on the listener's channel), listen_id the listener; the peer's values
 * and the addresses as the REQ (or SIDR_REQ) carried them (src: the peer's,
 * dst: ours). CONNECT_RESPONSE (active, REP came: the library moves its QP
 * to RTR and RTS, then asks XHCA_CTL_CM_ESTABLISH for the RTU): the REP's.
 * ESTABLISHED: on the passive side when the RTU came; on a UD active id
 * when SIDR_REP came (qpn, qkey: the peer's UD QP). REJECTED: status the
 * REJ reason (or SIDR status), with its private data. UNREACHABLE: status
 * -ETIMEDOUT (no answer after the retries). DISCONNECTED: status 0, or
 * -ETIMEDOUT when no DREP came.
 */
struct xhca_cm_event {
	__u32 event;		/* XHCA_CM_EV_* */
	__u32 id;
	__u32 listen_id;	/* CONNECT_REQUEST: the listener; else 0 */
	__s32 status;
	__u32 qpn;		/* the peer's QPN */
	__u32 psn;		/* the peer's message's Starting PSN: our sq_psn */
	__u32 qkey;		/* UD: the peer's Q_Key */
	__u8 resp_res;		/* the peer's: responder resources */
	__u8 init_depth;	/* ... initiator depth */
	__u8 retry_count;
	__u8 rnr_retry;
	__u8 flow_control;
	__u8 srq;
	__u8 mtu;		/* path MTU, IB encoding */
	__u8 ack_timeout;	/* the QP's local ACK timeout to set (5 bits) */
	__u8 src_ip[16];	/* the peer's */
	__u8 dst_ip[16];	/* ours */
	__u16 src_port;
	__u16 dst_port;
	__u8 pdata_len;
	__u8 pad[3];
	__u8 pdata[XHCA_CM_PDATA_MAX];
	__u32 pad1;
};

#endif /* XHCA_CM_H */
