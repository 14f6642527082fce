/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An xhca device's port as both its views show it: the verbs library
 * (ibv_query_port, ibv_query_gid) and the kernel-like device view xhcad
 * writes for `xhca exec` (XHCA_RUN_DIR/IFNAME.ib, bound at
 * /sys/class/infiniband/xhca_IFNAME). One function each, so the two agree.
 */
#ifndef XHCA_PORT_H
#define XHCA_PORT_H

#include <stdint.h>

#define XHCA_GID_TBL_LEN 16	/* a port's GID table */
#define XHCA_PORT_WIDTH 1	/* 1X */
#define XHCA_PORT_SPEED 32	/* EDR: 25 Gb/s a lane */
#define XHCA_PORT_RATE "25 Gb/sec (1X EDR)" /* what sysfs says of the two */

struct xhca_gid_ent {
	uint8_t gid[16];
	uint8_t v4;		/* an IPv4 address, v4-mapped */
};

/* The node GUID: the interface's MAC as an EUI-64 (network order in g). 0,
 * or -errno (g zero). */
int xhca_node_guid(const char *ifname, uint8_t g[8]);

/*
 * The GID table, as the kernel's RoCE GID cache has it: index 0 is the
 * default GID, fe80:: with the MAC as an EUI-64 (there whether or not the
 * kernel has added that address yet: indices do not move when it does),
 * then each IPv4 address v4-mapped, then the other IPv6 addresses; every
 * entry RoCE v2. Read from the interface each call. The entries filled (at
 * least 1 when max > 0).
 */
int xhca_gid_table(const char *ifname, struct xhca_gid_ent *t, int max);

/* The link: running (IFF_RUNNING) and its MTU (1500 when unknown). */
int xhca_link_up(const char *ifname);
int xhca_link_mtu(const char *ifname);

#endif /* XHCA_PORT_H */
