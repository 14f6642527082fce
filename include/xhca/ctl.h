/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad control protocol, spoken over the stream socket /run/xhca/<ifname>.sock.
 * Each message is a struct xhca_ctl_hdr followed by hdr.len bytes. A reply
 * has the request's op; err is 0 or -errno, and on error the payload is a
 * NUL-terminated message for the user ("qp create: ...; do this").
 * The local QP index never appears here: clients see global QPNs only.
 */
#ifndef XHCA_CTL_H
#define XHCA_CTL_H

#include <stddef.h>
#include <linux/types.h>
#include <xhca/abi.h>

#define XHCA_RUN_DIR "/run/xhca"
#define XHCA_PIN_ROOT "/sys/fs/bpf/xhca"
#define XHCA_CTL_MAGIC 0x58484341u /* "XHCA" */
#define XHCA_CTL_MAX_PAYLOAD (16u << 20)
#define XHCA_ERRMSG_LEN 256

enum xhca_ctl_op {
	XHCA_CTL_STATUS = 1,	/* -> struct xhca_status */
	XHCA_CTL_QP_CREATE,	/* struct xhca_qp_attr -> struct xhca_qp_attr */
	XHCA_CTL_QP_MODIFY,	/* struct xhca_qp_attr (mask) -> struct xhca_qp_attr */
	XHCA_CTL_QP_DESTROY,	/* __u32 qpn -> nothing */
	XHCA_CTL_QP_SHOW,	/* __u32 qpn (0 = all) -> struct xhca_qp_info[] */
	XHCA_CTL_STATS,		/* struct xhca_stats_req -> struct xhca_stats_reply */
};

struct xhca_ctl_hdr {
	__u32 magic;
	__u32 op;
	__u32 len;
	__s32 err;
};

/* Which fields of struct xhca_qp_attr a modify sets. */
#define XHCA_QPA_STATE (1u << 0)
#define XHCA_QPA_EPSN (1u << 1)
#define XHCA_QPA_REMOTE_IP (1u << 2)
#define XHCA_QPA_LOCAL_IP (1u << 3)
#define XHCA_QPA_MTU (1u << 4)
#define XHCA_QPA_ACTION (1u << 5)
#define XHCA_QPA_QKEY (1u << 6)
#define XHCA_QPA_PKEY (1u << 7)
#define XHCA_QPA_DEST_QPN (1u << 8)

struct xhca_qp_attr {
	__u32 mask;		/* XHCA_QPA_*: modify only */
	__u32 qpn;		/* create: 0 = allocate */
	__u8 type;		/* enum xhca_qp_type */
	__u8 state;		/* enum xhca_qp_state */
	__u8 action;		/* enum xhca_qp_action */
	__u8 mtu_shift;		/* 8..12 (256..4096) */
	__u16 pkey;		/* create: 0 = 0xffff */
	__u8 flags;		/* XHCA_QPF_IPV6 */
	__u8 pad0;
	__u32 qkey;
	__u32 epsn;
	__u32 dest_qpn;
	__u8 local_ip[16];
	__u8 remote_ip[16];
	__u32 pad1;
};
_Static_assert(sizeof(struct xhca_qp_attr) == 64, "xhca_qp_attr size");

struct xhca_qp_info {
	struct xhca_qp_attr attr;
	__u32 gen;
	__u32 pad0;
	struct xhca_qp_counter cnt; /* summed over CPUs */
};
_Static_assert(sizeof(struct xhca_qp_info) == 104, "xhca_qp_info size");

#define XHCA_STATS_F_RESET (1u << 0) /* zero the counters after reading */
#define XHCA_STATS_F_QP (1u << 1)    /* also return the counters of qpn */

struct xhca_stats_req {
	__u32 flags;
	__u32 qpn;
};

struct xhca_stats_reply {
	__u32 nr_reasons;	/* XHCA_R_MAX of the daemon */
	__u32 qpn;		/* 0 unless XHCA_STATS_F_QP */
	struct xhca_qp_counter qp;
	struct xhca_counter reason[XHCA_R_MAX];
};

struct xhca_status {
	char ifname[16];
	char pin_dir[256];
	char mode[8];		/* "native" or "skb" */
	char attached_by[16];	/* "xhcad", "adopted" */
	__u32 ifindex;
	__u32 prog_id;
	__u32 max_qps;
	__u32 qps_in_use;
	__u32 abi_version;
	__u32 pid;
	__u64 uptime_ms;
	__u32 next_qpn;		/* allocator cursor */
	__u32 keep;		/* 1: program stays attached on SIGTERM */
	__u32 repaired;		/* broken entries removed at start */
	__u32 pad0;
};

/* libxhca control client (user/lib/ctl.c). */
int xhca_ctl_connect(const char *ifname);	/* fd or -errno */
/* Sends op with req, waits for the reply. On success returns 0 and, when
 * resp is not NULL, a malloc'd payload in *resp (free it) and its length.
 * On a daemon error returns its -errno and copies its message to errmsg. */
int xhca_ctl_call(int fd, __u32 op, const void *req, __u32 req_len, void **resp,
		  __u32 *resp_len, char *errmsg, size_t errlen);
/* Server side helpers (also used by the client). */
int xhca_ctl_send(int fd, __u32 op, __s32 err, const void *buf, __u32 len);
int xhca_ctl_recv(int fd, struct xhca_ctl_hdr *hdr, void **buf);

#endif /* XHCA_CTL_H */
