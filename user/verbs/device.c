/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Devices and contexts: one device per interface of this network namespace
 * that an xhcad serves (its control socket in /run/xhca), named
 * xhca_<ifname>, with one Ethernet port whose GID table is the interface's
 * addresses as RoCEv2 GIDs (read again at every query: it follows address
 * changes). XHCA_DEVICES=if1,if2 (set by `xhca exec -i`) narrows the list.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <xhca/ctl.h>
#include <xhca/port.h>
#include "xverbs.h"

static struct xv_device *devices;	/* every device seen; never freed (apps keep pointers) */
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;

int xv_errno(int err)
{
	errno = err < 0 ? -err : err;
	return errno;
}

uint32_t xv_pow2(uint32_t n)
{
	uint32_t p = 1;

	while (p < n && p < (1u << 31))
		p <<= 1;
	return p;
}

/* XHCA_VERBS_DEBUG=1: why a verb failed, on stderr (applications print only
 * the errno). */
void xv_log(struct xv_context *c, const char *fmt, ...)
{
	static int on = -1;
	va_list ap;

	if (on < 0)
		on = getenv("XHCA_VERBS_DEBUG") != NULL;
	if (!on)
		return;
	fprintf(stderr, "xhca verbs%s%s: ", c ? " " : "", c ? c->dev->dev.name : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (c)
		fprintf(stderr, " (%s)", xhca_errmsg(c->x));
	fputc('\n', stderr);
}

static int wanted(const char *ifname)
{
	const char *list = getenv("XHCA_DEVICES");
	size_t n = strlen(ifname);

	if (!list || !*list)
		return 1;
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l == n && !strncmp(p, ifname, n))
			return 1;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

/* Names from the device view `xhca exec` gives its program (a kernel-like
 * /sys/class/infiniband_verbs/uverbsN whose ibdev is the device's name:
 * tools/xhca/view.c), as rdma-core's library takes them from sysfs;
 * without one, xhcad's socket. */
static void view_names(struct xv_device *d)
{
	DIR *dir = opendir(XV_SYSFS_VERBS);
	struct dirent *e;

	while (dir && (e = readdir(dir))) {
		char path[512], name[IBV_SYSFS_NAME_MAX] = "";
		FILE *f;

		if (strncmp(e->d_name, "uverbs", 6) || strlen(e->d_name) >= 32)
			continue;
		snprintf(path, sizeof(path), "%s/%s/ibdev", XV_SYSFS_VERBS, e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(name, sizeof(name), f))
			name[0] = 0;
		fclose(f);
		name[strcspn(name, "\n")] = 0;
		if (strcmp(name, d->dev.name))
			continue;
		snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "%.32s", e->d_name);
		snprintf(d->dev.dev_path, sizeof(d->dev.dev_path), "%s/%.32s", XV_SYSFS_VERBS,
			 e->d_name);
		snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path), "%s/%s", XV_SYSFS_IB,
			 d->dev.name);
		break;
	}
	if (dir)
		closedir(dir);
}

struct xv_device *xv_device_find(const char *ifname)
{
	struct xv_device *d;

	for (d = devices; d; d = d->next)
		if (!strcmp(d->ifname, ifname))
			return d;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	snprintf(d->ifname, sizeof(d->ifname), "%s", ifname);
	d->dev.node_type = IBV_NODE_CA;
	d->dev.transport_type = IBV_TRANSPORT_IB;
	snprintf(d->dev.name, sizeof(d->dev.name), "xhca_%s", ifname);
	snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "xhca_%s", ifname);
	snprintf(d->dev.dev_path, sizeof(d->dev.dev_path), "%s/%s.sock", XHCA_RUN_DIR, ifname);
	snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path), "%s/%s.sock", XHCA_RUN_DIR,
		 ifname);
	view_names(d);
	d->next = devices;
	devices = d;
	return d;
}

/* An xhcad answers on ifname's socket, and the interface is in this
 * namespace (every namespace sees /run/xhca). A socket this user may not
 * use (xhcad --group, a group the user is not in) is a device all the
 * same, as a uverbs device file without permission: opening it fails with
 * EACCES; stderr says so once, as libibverbs' warnings do. */
static int served(const char *ifname)
{
	static int warned;
	int fd;

	if (!if_nametoindex(ifname))
		return 0;
	fd = xhca_ctl_connect(ifname);
	if (fd == -EACCES && !warned++)
		fprintf(stderr, "libibverbs: Warning: no permission to use xhca_%s (%s/%s.sock): "
			"xhcad --group GROUP lets a group's members in\n", ifname, XHCA_RUN_DIR,
			ifname);
	if (fd < 0)
		return fd == -EACCES;
	close(fd);
	return 1;
}

#undef ibv_get_device_list /* verbs.h: an inline for static providers */
XV_EXPORT struct ibv_device **ibv_get_device_list(int *num)
{
	struct ibv_device **list = NULL;
	struct dirent *e;
	int n = 0, cap = 0;
	DIR *dir;

	if (num)
		*num = 0;
	list = calloc(1, sizeof(*list));
	if (!list)
		return NULL;
	dir = opendir(XHCA_RUN_DIR);
	if (!dir)
		return list; /* no xhcad anywhere: no device, as with no HCA */
	pthread_mutex_lock(&devices_lock);
	while ((e = readdir(dir))) {
		char ifname[IF_NAMESIZE] = "";
		size_t l = strlen(e->d_name);
		struct xv_device *d;

		if (l < 6 || l - 5 >= sizeof(ifname) || strcmp(e->d_name + l - 5, ".sock"))
			continue;
		memcpy(ifname, e->d_name, l - 5);
		if (!wanted(ifname) || !served(ifname))
			continue;
		d = xv_device_find(ifname);
		if (!d)
			continue;
		if (n + 2 > cap) {
			struct ibv_device **nl;

			cap = cap ? cap * 2 : 4;
			nl = realloc(list, (size_t)cap * sizeof(*list));
			if (!nl)
				break;
			list = nl;
		}
		list[n++] = &d->dev;
		list[n] = NULL;
	}
	pthread_mutex_unlock(&devices_lock);
	closedir(dir);
	/* a stable order: by name */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && strcmp(list[j - 1]->name, list[j]->name) > 0; j--) {
			struct ibv_device *t = list[j];

			list[j] = list[j - 1];
			list[j - 1] = t;
		}
	if (num)
		*num = n;
	return list;
}
XV_V11(ibv_get_device_list);

XV_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}
XV_V11(ibv_free_device_list);

XV_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}
XV_V11(ibv_get_device_name);

static struct xv_device *xdev(struct ibv_device *d)
{
	return (struct xv_device *)d;
}

/* The node GUID: the interface's MAC as an EUI-64, in network order. */
static __be64 node_guid(const char *ifname)
{
	uint8_t g[8];
	__be64 v;

	xhca_node_guid(ifname, g);
	memcpy(&v, g, 8);
	return v;
}

XV_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	return node_guid(xdev(device)->ifname);
}
XV_V11(ibv_get_device_guid);

XV_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	return (int)if_nametoindex(xdev(device)->ifname) ?: -1;
}

int xv_link_mtu(struct xv_context *c)
{
	return xhca_link_mtu(c->dev->ifname);
}

int xv_link_up(struct xv_context *c)
{
	return xhca_link_up(c->dev->ifname);
}

/* The largest IB MTU whose packets fit the link: headers of IPv6, UDP, BTH,
 * RETH and ICRC (84 bytes), as xhcad checks a QP's path MTU. */
enum ibv_mtu xv_active_mtu(int link)
{
	enum ibv_mtu m = IBV_MTU_4096;

	while (m > IBV_MTU_256 && (128 << m) + 84 > link)
		m--;
	return m;
}

/* The largest path MTU xhcad carries (4096, or 2048 on a kernel whose
 * AF_XDP lacks multi-buffer), as an IB MTU. */
enum ibv_mtu xv_max_mtu(struct xv_context *c)
{
	int max = c->x ? xhca_max_path_mtu(c->x) : 0;

	return max && max < 4096 ? (enum ibv_mtu)(__builtin_ctz((unsigned int)max) - 7)
				 : IBV_MTU_4096;
}

/* The port's active MTU: what fits the link and xhcad carries. */
enum ibv_mtu xv_port_mtu(struct xv_context *c)
{
	enum ibv_mtu link = xv_active_mtu(xv_link_mtu(c)), max = xv_max_mtu(c);

	return link < max ? link : max;
}

/* The GID table (port.c: as xhcad's device view has it). */
int xv_gid_table(struct xv_context *c, struct xv_gid *t, int max)
{
	struct xhca_gid_ent e[XV_MAX_GID];
	int n = xhca_gid_table(c->dev->ifname, e, max < XV_MAX_GID ? max : XV_MAX_GID);

	for (int i = 0; i < n; i++) {
		memcpy(t[i].gid.raw, e[i].gid, 16);
		t[i].v4 = e[i].v4;
	}
	return n;
}

int xv_gid_ip(struct xv_context *c, int index, uint8_t ip[16])
{
	struct xv_gid t[XV_MAX_GID];
	int n = xv_gid_table(c, t, XV_MAX_GID);

	if (index < 0 || index >= n)
		return -EINVAL;
	memcpy(ip, t[index].gid.raw, 16);
	return 0;
}

/* xhcad's limits (max QPs, MRs) from its status. */
static void daemon_limits(struct xv_context *c, uint32_t *max_qps, uint32_t *max_mrs)
{
	struct xhca_status *st = NULL;
	__u32 len = 0;
	int fd = xhca_ctl_connect(c->dev->ifname);

	*max_qps = 1024;
	*max_mrs = 1024;
	if (fd < 0)
		return;
	if (!xhca_ctl_call(fd, XHCA_CTL_STATUS, NULL, 0, (void **)&st, &len, NULL, 0) &&
	    len >= sizeof(*st)) {
		*max_qps = st->max_qps;
		*max_mrs = st->max_mrs;
	}
	free(st);
	close(fd);
}

static void device_attr(struct xv_context *c, struct ibv_device_attr *a)
{
	uint32_t max_qps, max_mrs;

	daemon_limits(c, &max_qps, &max_mrs);
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "xhca %d", XHCA_SESSION_VERSION);
	a->node_guid = node_guid(c->dev->ifname);
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = 1ull << 31;
	a->page_size_cap = XHCA_PAGE_SIZE;
	a->vendor_id = XV_VENDOR_ID;
	a->vendor_part_id = XV_VENDOR_PART;
	a->hw_ver = 1;
	a->max_qp = (int)max_qps;
	a->max_qp_wr = XHCA_RING_DEPTH_MAX / 2;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
			      IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_sge = XV_MAX_SGE;
	a->max_sge_rd = XV_MAX_SGE;
	a->max_cq = 65536;
	a->max_cqe = (int)XHCA_CQ_DEPTH_MAX;
	a->max_mr = (int)max_mrs;
	a->max_mw = (int)max_mrs; /* (regions and windows share xhcad's table) */
	a->max_pd = 65536;
	a->max_qp_rd_atom = XV_MAX_RD_ATOM;
	a->max_res_rd_atom = XV_MAX_RD_ATOM * a->max_qp;
	a->max_qp_init_rd_atom = XV_MAX_RD_ATOM;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_srq = 1024;
	a->max_srq_wr = XHCA_RING_DEPTH_MAX / 2;
	a->max_srq_sge = XV_MAX_SGE;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	a->max_mcast_grp = XHCA_MCAST_GROUPS;
	a->max_mcast_qp_attach = XHCA_MCAST_MEMBERS;
	a->max_total_mcast_qp_attach = XHCA_MCAST_GROUPS * XHCA_MCAST_MEMBERS;
}

XV_EXPORT int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	device_attr(xv_ctx(ctx), a);
	return 0;
}
XV_V11(ibv_query_device);

int xv_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
		       struct ibv_device_attr_ex *a, size_t len)
{
	struct ibv_device_attr_ex ex;

	if (in && in->comp_mask)
		return EINVAL;
	if (len < sizeof(a->orig_attr))
		return EINVAL;
	memset(&ex, 0, sizeof(ex));
	device_attr(xv_ctx(ctx), &ex.orig_attr);
	ex.max_dm_size = 0;
	ex.phys_port_cnt_ex = 1;
	memcpy(a, &ex, len < sizeof(ex) ? len : sizeof(ex));
	return 0;
}

int xv_query_port_ex(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a,
		     size_t len)
{
	struct xv_context *c = xv_ctx(ctx);
	struct ibv_port_attr p = {};
	int up;

	if (port != 1)
		return EINVAL;
	up = xv_link_up(c);
	p.state = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	p.max_mtu = xv_max_mtu(c);
	p.active_mtu = xv_port_mtu(c);
	p.gid_tbl_len = XHCA_GID_TBL_LEN;
	p.port_cap_flags = 0;
	p.max_msg_sz = 1u << 31;
	p.pkey_tbl_len = 1;
	p.lmc = 0;
	p.max_vl_num = 1;
	p.active_width = XHCA_PORT_WIDTH;
	p.active_speed = XHCA_PORT_SPEED;
	p.phys_state = up ? 5 : 3; /* LinkUp : Disabled */
	p.link_layer = IBV_LINK_LAYER_ETHERNET;
	memcpy(a, &p, len < sizeof(p) ? len : sizeof(p));
	return 0;
}

#undef ibv_query_port /* verbs.h: the inline that calls query_port_ex */
XV_EXPORT int ibv_query_port(struct ibv_context *ctx, uint8_t port,
			     struct _compat_ibv_port_attr *a)
{
	/* the compat entry: callers built before query_port grew pass the
	 * smaller struct _compat_ibv_port_attr, which ends before flags */
	return xv_query_port_ex(ctx, port, (struct ibv_port_attr *)a,
			     offsetof(struct ibv_port_attr, flags));
}
XV_V11(ibv_query_port);

XV_EXPORT int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	uint8_t ip[16];

	if (port != 1 || index < 0 || index >= XV_MAX_GID)
		return -1;
	if (xv_gid_ip(xv_ctx(ctx), index, ip))
		memset(gid, 0, sizeof(*gid)); /* an empty entry, as the kernel's table */
	else
		memcpy(gid->raw, ip, 16);
	return 0;
}
XV_V11(ibv_query_gid);

XV_EXPORT int ibv_query_pkey(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey)
{
	if (port != 1 || index != 0)
		return -1;
	*pkey = htons(XHCA_PKEY_DEFAULT);
	return 0;
}
XV_V11(ibv_query_pkey);

XV_EXPORT int ibv_get_pkey_index(struct ibv_context *ctx, uint8_t port, __be16 pkey)
{
	if (port != 1 || (ntohs(pkey) & 0x7fff) != 0x7fff)
		return -1;
	return 0;
}

XV_EXPORT int ibv_query_gid_type(struct ibv_context *ctx, uint8_t port, unsigned int index,
				 enum ibv_gid_type *type)
{
	uint8_t ip[16];

	if (port != 1 || xv_gid_ip(xv_ctx(ctx), (int)index, ip))
		return -1;
	/* the private interface's numbering (rdma-core's ibv_gid_type_sysfs:
	 * 0 IB/RoCE v1, 1 RoCE v2), not the public enum ibv_gid_type's */
	*(int *)type = 1;
	return 0;
}

static void gid_entry(struct xv_context *c, const struct xv_gid *g, uint32_t index,
		      struct ibv_gid_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->gid = g->gid;
	e->gid_index = index;
	e->port_num = 1;
	e->gid_type = IBV_GID_TYPE_ROCE_V2;
	e->ndev_ifindex = if_nametoindex(c->dev->ifname);
}

XV_EXPORT int _ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
				struct ibv_gid_entry *entry, uint32_t flags, size_t len)
{
	struct xv_context *c = xv_ctx(ctx);
	struct xv_gid t[XV_MAX_GID];
	int n;

	if (flags || len < sizeof(*entry))
		return EINVAL;
	if (port != 1)
		return EINVAL;
	n = xv_gid_table(c, t, XV_MAX_GID);
	if (n < 0)
		return -n;
	if (index >= (uint32_t)n)
		return ENODATA;
	gid_entry(c, &t[index], index, entry);
	return 0;
}

XV_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *entries,
				       size_t max, uint32_t flags, size_t len)
{
	struct xv_context *c = xv_ctx(ctx);
	struct xv_gid t[XV_MAX_GID];
	int n;

	if (flags || len < sizeof(*entries))
		return -EINVAL;
	n = xv_gid_table(c, t, XV_MAX_GID);
	if (n < 0)
		return n;
	if ((size_t)n > max)
		return -EINVAL;
	for (int i = 0; i < n; i++)
		gid_entry(c, &t[i], (uint32_t)i, (struct ibv_gid_entry *)((uint8_t *)entries + (size_t)i * len));
	return n;
}

/* ---- async events --------------------------------------------------------- */

void xv_async_post(struct xv_context *c, const struct ibv_async_event *ev)
{
	struct xv_async *a = calloc(1, sizeof(*a));
	__u64 one = 1;

	if (!a)
		return;
	a->ev = *ev;
	pthread_mutex_lock(&c->async_lock);
	if (c->async_tail)
		c->async_tail->next = a;
	else
		c->async_head = a;
	c->async_tail = a;
	pthread_mutex_unlock(&c->async_lock);
	if (write(c->vctx.context.async_fd, &one, sizeof(one)) < 0)
		xv_log(c, "async event: %s", strerror(errno));
}

XV_EXPORT int ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	struct xv_context *c = xv_ctx(ctx);
	struct xv_async *a;
	__u64 v;

	if (read(ctx->async_fd, &v, sizeof(v)) != sizeof(v))
		return -1; /* errno: EAGAIN on a non-blocking fd, EINTR */
	pthread_mutex_lock(&c->async_lock);
	a = c->async_head;
	if (a) {
		c->async_head = a->next;
		if (!c->async_head)
			c->async_tail = NULL;
	}
	pthread_mutex_unlock(&c->async_lock);
	if (!a) {
		errno = EIO;
		return -1;
	}
	*event = a->ev;
	free(a);
	return 0;
}
XV_V11(ibv_get_async_event);

XV_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	/* Events are copies: nothing waits for their acknowledgement. */
	(void)event;
}
XV_V11(ibv_ack_async_event);
