/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca's librdmacm.so.1: rdma-core 44's rdma_cm library on xhca. The same
 * SONAME, versioned symbols and structures (Debian's <rdma/rdma_cma.h>), so
 * rping, perftest -R and other rdma_cm programs run unmodified under
 * `xhca exec`, beside xhca's libibverbs.so.1. The library keeps the rdma_cm
 * objects (event channels, ids, addresses, routes, ports) and moves the QPs
 * through their states; xhcad's connection manager (cm.h) speaks the IB CM
 * on the wire and hands the events back.
 *
 * Devices are what xhca's libibverbs lists; the library opens each one it
 * needs (ibv_open_device, as rdma-core's does) and its requests go over
 * that context's xhca session (struct xv_cm_hook of the verbs library), the
 * session of the device whose interface holds the id's source address.
 *
 * Files in layers that call only downward, lowest first (RDMACM_LAYERS in
 * the Makefile, checked by make check-layers):
 *   compat (rsockets, ECE: ENOSYS/EOPNOTSUPP; event names) | addrinfo
 *   (rdma_getaddrinfo) | inet (addresses, routes, interfaces) | port (the
 *   port spaces' bind rules) | qpattr (QP attributes of each state) |
 *   evconv (xhcad's events as rdma_cm's) | device (devices, the session's
 *   requests) | channel (event channels) | id (ids, bind, listen, options)
 *   | qp (QPs, SRQs, their moves) | event (rdma_get_cm_event, sync waits)
 *   | addr (address and route resolution) | conn (connect, accept, reject,
 *   disconnect) | mcast (multicast) | ep (rdma_create_ep, rdma_get_request)
 * The first six are pure: the unit tests take them alone.
 */
#ifndef XHCA_XCM_H
#define XHCA_XCM_H

#include <pthread.h>
#include <stdint.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <xhca/cm.h>

#define XCM_EXPORT __attribute__((visibility("default")))

#define XCM_MAX_PDATA 256	/* librdmacm's event buffer (RDMA_MAX_PRIVATE_DATA) */
#define XCM_REQ_PDATA 56	/* what an application may give: REQ */
#define XCM_REP_PDATA 196	/* REP */
#define XCM_REJ_PDATA 148	/* REJ */
#define XCM_SIDR_REQ_PDATA 180	/* SIDR_REQ */
#define XCM_SIDR_REP_PDATA 136	/* SIDR_REP */
#define XCM_HOP_LIMIT 64	/* the route's: IPv4's default TTL */
/* The path's packet lifetime (4.096 us * 2^18) and what Linux 6.1 puts in
 * a REQ as the QP's local ACK timeout with it: used when xhcad's event has
 * none (cm_spec 3.1, 3.2). */
#define XCM_PKT_LIFETIME 18
#define XCM_ACK_TIMEOUT 19
#define XCM_CONNECT_TIMEOUT_MS 2000 /* rdma_create_ep's resolutions (librdmacm's) */

/* ---- inet.c: addresses as 16 bytes (IPv4 v4-mapped, as xhca's GIDs) --------- */

int xcm_ip_of(const struct sockaddr *sa, uint8_t ip[16], uint16_t *port);
socklen_t xcm_sockaddr(struct sockaddr_storage *ss, const uint8_t ip[16], uint16_t port);
socklen_t xcm_sa_len(const struct sockaddr *sa);
int xcm_ip_is_v4(const uint8_t ip[16]);
int xcm_ip_any(const uint8_t ip[16]);
/* 127.0.0.0/8 or ::1: the loopback interface's, which no xhca device has. */
int xcm_ip_loopback(const uint8_t ip[16]);
void xcm_ip_text(const uint8_t ip[16], char *buf, size_t len);
int xcm_local_if(const uint8_t ip[16], char ifname[IF_NAMESIZE]);
int xcm_route_src(const uint8_t dst[16], uint8_t src[16]);
uint32_t xcm_flow_label(uint16_t src_port, uint16_t dst_port);
void xcm_addr_fill(struct rdma_addr *a, const uint8_t src[16], uint16_t sport,
		   const uint8_t dst[16], uint16_t dport);

/* ---- port.c: a port of a port space, held (the kernel's bind rules) ---------- */

struct xcm_port {
	int fd[2];		/* the reservations (abstract sockets); -1: none */
	uint16_t port;		/* host order; 0: none held */
};

#define XCM_PORT_INIT { { -1, -1 }, 0 }
/* flags: */
#define XCM_PORT_AFONLY (1u << 0)	/* an IPv6 wildcard that does not cover IPv4 */
#define XCM_PORT_REUSE (1u << 1)	/* RDMA_OPTION_ID_REUSEADDR: share, check nothing */
#define XCM_PORT_PRIV (1u << 2)		/* may take a privileged port (tests) */
int xcm_port_take(struct xcm_port *p, uint16_t ps, const uint8_t ip[16], uint16_t port,
		  unsigned int flags);
void xcm_port_drop(struct xcm_port *p);
int xcm_port_range(uint16_t *lo, uint16_t *hi);
int xcm_port_may_bind_low(void);

/* ---- qpattr.c: a connection's values and the QP attributes of each state ----- */

struct xcm_conn {
	uint8_t have;		/* a CM exchange happened (REQ received, REP received) */
	uint8_t ud;
	uint8_t mtu;		/* enum ibv_mtu */
	uint8_t resp_res;	/* ours: RTR's max_dest_rd_atomic; remote READ allowed */
	uint8_t init_depth;	/* ours: RTS's max_rd_atomic */
	uint8_t retry_count;
	uint8_t rnr_retry;
	uint8_t timeout;	/* the local ACK timeout */
	uint32_t rq_psn;	/* ours: the PSN we sent in the REQ or REP, first we receive */
	uint32_t sq_psn;	/* the peer's: its REQ's or REP's, first we send */
	uint32_t remote_qpn;
	uint32_t qkey;		/* UD */
	struct ibv_ah_attr ah;	/* the path to the peer */
};

void xcm_ah_fill(struct ibv_ah_attr *ah, const uint8_t dgid[16], uint8_t sgid_index,
		 uint8_t tclass, uint32_t flow_label);
void xcm_path_fill(struct ibv_sa_path_rec *p, const struct rdma_addr *a, uint8_t mtu,
		   uint8_t tclass, uint8_t lifetime);
int xcm_qp_attr(const struct xcm_conn *c, struct ibv_qp_attr *a, int *mask);

/* ---- evconv.c: xhcad's events as rdma_cm's ------------------------------------- */

uint8_t xcm_mtu_of_ib(uint8_t ib_mtu);
void xcm_event_conv(const struct xhca_cm_event *x, int ud, struct rdma_cm_event *e,
		    uint8_t pdata[XCM_MAX_PDATA]);
void xcm_conn_learn(struct xcm_conn *c, const struct xhca_cm_event *x, int active);

/* ---- device.c ---------------------------------------------------------------- */

struct xcm_dev {
	struct ibv_device *dev;
	struct ibv_context *verbs;	/* opened on first use, kept */
	char ifname[IF_NAMESIZE];
	struct ibv_pd *pd;		/* rdma_create_qp without a PD */
	uint8_t max_resp_res, max_init_depth;
};

void xcm_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int xcm_err(int err);		/* -errno or errno -> errno set, -1 returned */
int xcm_devices(void);
struct xcm_dev *xcm_dev_at(int i);
struct xcm_dev *xcm_dev_of_ip(const uint8_t ip[16], int *err);
struct xcm_dev *xcm_dev_of_verbs(struct ibv_context *verbs);
int xcm_dev_open(struct xcm_dev *d);
int xcm_call(struct xcm_dev *d, uint32_t op, const void *req, uint32_t len, void *resp,
	     uint32_t resp_len, int *recv_fd);
int xcm_gid_index(struct xcm_dev *d, const uint8_t ip[16]);
uint8_t xcm_port_mtu(struct xcm_dev *d);
struct ibv_pd *xcm_dev_pd(struct xcm_dev *d);

/* ---- channel.c: an event channel, one socket per device's xhcad --------------- */

struct xcm_leg {
	struct xcm_dev *dev;
	uint32_t xchan;		/* xhcad's channel on that device's session */
	int fd;			/* its socket (SOCK_SEQPACKET) */
	struct xcm_leg *next;
};

struct xcm_channel {
	struct rdma_event_channel ch;	/* fd: an epoll set of the legs' sockets */
	pthread_mutex_t lock;
	struct xcm_leg *legs;
};

static inline struct xcm_channel *xcm_chan(struct rdma_event_channel *ch)
{
	return (struct xcm_channel *)ch;
}

int xcm_leg_get(struct xcm_channel *ch, struct xcm_dev *d, uint32_t *xchan);
int xcm_chan_read(struct xcm_channel *ch, struct xhca_cm_event *x, struct xcm_dev **dev);

/* ---- id.c -------------------------------------------------------------------- */

/* xhcad's id for an rdma_cm id, on one device (a wildcard listener has one
 * on every device). */
struct xcm_xid {
	struct xcm_dev *dev;
	uint32_t xid;
	struct xcm_xid *next;
};

struct xcm_mc;

struct xcm_id {
	struct rdma_cm_id id;		/* what the application sees */
	struct xcm_dev *dev;		/* the device it is bound to; NULL: none yet */
	struct xcm_xid *xids;
	struct xcm_port port;
	uint8_t sync;			/* made without a channel: calls wait for events */
	uint8_t bound, listening, connect_error, own_cqs;
	uint8_t tos, tos_set, reuseaddr, afonly, ack_timeout;
	struct xcm_conn conn;
	struct ibv_sa_path_rec path;	/* route.path_rec */
	struct ibv_qp_init_attr *qp_init_attr; /* rdma_create_ep's, for rdma_get_request */
	uint8_t connect[XCM_REQ_PDATA];	/* rdma_addrinfo's ai_connect */
	uint8_t connect_len;
	struct xcm_mc *mcs;
	/* events handed out and acknowledged: rdma_destroy_id waits for them */
	pthread_mutex_t mut;
	pthread_cond_t cond;
	uint32_t handed, acked;
	struct xcm_id *next;		/* every id (xcm_id_find) */
};

/* A multicast group an id joined. */
struct xcm_mc {
	uint8_t ip[16];
	struct sockaddr_storage addr;
	void *context;
	uint8_t sgid_index;		/* our address's GID */
	uint8_t sendonly;		/* RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER: no attach */
	uint8_t reported;		/* its MULTICAST_JOIN handed out */
	struct xcm_mc *next;
};

static inline struct xcm_id *xcm_id(struct rdma_cm_id *id)
{
	return (struct xcm_id *)id;
}

/* An event handed to the application: its private data is its own, until
 * rdma_ack_cm_event; it counts on the id it was handed out for (a
 * CONNECT_REQUEST: the listener's). */
struct xcm_event {
	struct rdma_cm_event ev;
	uint8_t pdata[XCM_MAX_PDATA];
	struct xcm_id *owner;
};

int xcm_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **out, void *context,
		  enum rdma_port_space ps, enum ibv_qp_type qp_type);
struct xcm_id *xcm_id_find(struct xcm_dev *d, uint32_t xid);
void xcm_id_acked(struct xcm_id *i);
void xcm_event_free(struct rdma_cm_event *e);
int xcm_id_attach(struct xcm_id *i, struct xcm_dev *d);
uint32_t xcm_id_xid(const struct xcm_id *i);
int xcm_id_call(struct xcm_id *i, uint32_t op, const void *req, uint32_t len);
int xcm_id_notify(struct xcm_id *i, uint32_t event, int32_t status);
int xcm_id_bind(struct xcm_id *i, const uint8_t ip[16], uint16_t port);
struct xcm_id *xcm_id_passive(struct xcm_id *l, struct xcm_dev *d, const struct xhca_cm_event *x);
void xcm_id_drop_xid(struct xcm_dev *d, uint32_t xid);

/* ---- qp.c: the id's QP and its moves ----------------------------------------- */

int xcm_qp_move(struct xcm_id *i, enum ibv_qp_state state);
int xcm_qp_ready(struct xcm_id *i);
int xcm_qp_err(struct xcm_id *i);

/* ---- event.c ----------------------------------------------------------------- */

int xcm_complete(struct xcm_id *i);
int xcm_conn_resp(struct xcm_id *i);

#endif /* XHCA_XCM_H */
