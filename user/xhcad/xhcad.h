/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* xhcad internals: the device (program, maps, pins) and the QP table. */
#ifndef XHCAD_H
#define XHCAD_H

#include <limits.h>
#include <stdint.h>
#include <linux/types.h>
#include <xhca/abi.h>
#include <xhca/ctl.h>

struct xhca;

/* File descriptors of the maps xhcad writes; from the skeleton when xhcad
 * loads the object, from the attached program when it adopts one. */
struct xhca_maps {
	int cam;
	int ctx;
	int stats;
	int qp_stats;
	int pkeys;
	int dstate; /* daemon state: QPN cursor (userspace only) */
};

/* xhca_dstate value: what xhcad must remember across restarts. */
struct xhca_dstate {
	__u32 next_qpn;
	__u32 pad;
};

struct xhcad {
	char ifname[16];
	int ifindex;
	int native;		/* XDP mode: 1 native (driver), 0 skb (generic) */
	int adopt;
	int keep;
	__u32 max_qps;
	char pin_dir[256];
	char sock_path[108];	/* sun_path */

	struct xhca *skel;	/* NULL when adopted */
	int prog_fd;
	__u32 prog_id;
	int attached;		/* we attached it (or adopted it): detach on exit */
	struct xhca_maps m;
	int ncpus;

	/* QP table (rebuilt from the maps at start) */
	uint64_t *bitmap;	/* local index in use */
	struct xhca_qp_ctx *ctxm; /* the xhca_qp_ctx map, mapped (user/lib/qpctx.c) */
	__u32 qps_in_use;
	__u32 next_qpn;		/* allocator cursor: moves forward, wraps */
	__u32 repaired;
	__u64 start_ms;
};

/* loader.c */
int xhcad_load(struct xhcad *d);
int xhcad_adopt(struct xhcad *d);
void xhcad_unload(struct xhcad *d);

/* qp.c */
int qp_table_init(struct xhcad *d);
void qp_table_free(struct xhcad *d);
int qp_reconcile(struct xhcad *d);
int qp_create(struct xhcad *d, struct xhca_qp_attr *a, char *err, size_t errlen);
int qp_modify(struct xhcad *d, struct xhca_qp_attr *a, char *err, size_t errlen);
int qp_destroy(struct xhcad *d, __u32 qpn, char *err, size_t errlen);
int qp_show(struct xhcad *d, __u32 qpn, struct xhca_qp_info **out, __u32 *n, char *err,
	    size_t errlen);
int stats_get(struct xhcad *d, const struct xhca_stats_req *rq, struct xhca_stats_reply *out,
	      char *err, size_t errlen);

/* ctl_server.c */
int ctl_listen(struct xhcad *d);
int ctl_serve(struct xhcad *d, int lfd);

__u64 now_ms(void);

#endif /* XHCAD_H */
