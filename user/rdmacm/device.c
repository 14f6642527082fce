/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Devices: xhca's libibverbs lists one per interface an xhcad serves
 * (xhca_<ifname>); the library opens those it needs, once, and keeps them
 * (rdma_get_devices gives them all), as rdma-core's librdmacm does. An
 * id's requests go over the xhca session of its device's context, through
 * the hook the verbs library leaves in it (struct xv_cm_hook).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xhca/ctl.h>
#include "../verbs/xverbs.h"
#include "xcm.h"

static struct xcm_dev *devs;
static int ndevs = -1;
static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;

/* XHCA_VERBS_DEBUG=1: why a call failed, on stderr (applications print
 * only the errno), as the verbs library does. */
void xcm_log(const char *fmt, ...)
{
	static int on = -1;
	va_list ap;

	if (on < 0)
		on = getenv("XHCA_VERBS_DEBUG") != NULL;
	if (!on)
		return;
	fputs("xhca rdmacm: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int xcm_err(int err)
{
	errno = err < 0 ? -err : err;
	return -1;
}

/* The devices, listed once: their number. */
int xcm_devices(void)
{
	struct ibv_device **list;
	int n = 0;

	pthread_mutex_lock(&devs_lock);
	if (ndevs >= 0)
		goto out;
	list = ibv_get_device_list(&n);
	devs = list && n > 0 ? calloc((size_t)n, sizeof(*devs)) : NULL;
	ndevs = devs ? n : 0;
	for (int i = 0; i < ndevs; i++) {
		const char *name = ibv_get_device_name(list[i]);

		devs[i].dev = list[i];
		/* xhca_<ifname>: the interface */
		snprintf(devs[i].ifname, sizeof(devs[i].ifname), "%s",
			 strncmp(name, "xhca_", 5) ? name : name + 5);
	}
	if (list)
		ibv_free_device_list(list);
out:
	n = ndevs;
	pthread_mutex_unlock(&devs_lock);
	return n;
}

struct xcm_dev *xcm_dev_at(int i)
{
	return i >= 0 && i < xcm_devices() ? &devs[i] : NULL;
}

static const struct xv_cm_hook *hook(struct xcm_dev *d)
{
	struct xv_context *c = xv_ctx(d->verbs);

	return c && c->cm.magic == XV_CM_MAGIC ? &c->cm : NULL;
}

static void dev_limits(struct xcm_dev *d)
{
	struct ibv_device_attr a;

	d->max_resp_res = d->max_init_depth = 1;
	if (ibv_query_device(d->verbs, &a))
		return;
	d->max_resp_res = a.max_qp_rd_atom > 255 ? 255 : (uint8_t)a.max_qp_rd_atom;
	d->max_init_depth = a.max_qp_init_rd_atom > 255 ? 255 : (uint8_t)a.max_qp_init_rd_atom;
}

/* d's context, opened on first use: 0 or -errno. */
int xcm_dev_open(struct xcm_dev *d)
{
	int rc = 0;

	pthread_mutex_lock(&devs_lock);
	if (d->verbs)
		goto out;
	d->verbs = ibv_open_device(d->dev);
	if (!d->verbs) {
		rc = -errno;
		xcm_log("open %s: %s", d->dev->name, strerror(errno));
		goto out;
	}
	if (!hook(d)) {
		/* another libibverbs than xhca's: LD_LIBRARY_PATH names
		 * xhca's librdmacm.so.1 but not its libibverbs.so.1 */
		xcm_log("open %s: not a context of xhca's libibverbs: run the program with "
			"`xhca exec`", d->dev->name);
		ibv_close_device(d->verbs);
		d->verbs = NULL;
		rc = -ENODEV;
		goto out;
	}
	dev_limits(d);
out:
	pthread_mutex_unlock(&devs_lock);
	return rc;
}

/* The device of the interface that holds ip: NULL with *err -EADDRNOTAVAIL
 * (no interface has it) or -ENODEV (no xhcad serves it). */
struct xcm_dev *xcm_dev_of_ip(const uint8_t ip[16], int *err)
{
	char ifname[IF_NAMESIZE];
	int n = xcm_devices();

	*err = xcm_local_if(ip, ifname);
	if (*err)
		return NULL;
	for (int i = 0; i < n; i++) {
		if (strcmp(devs[i].ifname, ifname))
			continue;
		*err = xcm_dev_open(&devs[i]);
		return *err ? NULL : &devs[i];
	}
	xcm_log("%s has no xhca device: no xhcad serves it (or XHCA_DEVICES leaves it out)",
		ifname);
	*err = -ENODEV;
	return NULL;
}

struct xcm_dev *xcm_dev_of_verbs(struct ibv_context *verbs)
{
	int n = xcm_devices();

	for (int i = 0; verbs && i < n; i++)
		if (devs[i].verbs == verbs)
			return &devs[i];
	return NULL;
}

/* One request on d's session: 0 or -errno (xhcad's message in the debug log). */
int xcm_call(struct xcm_dev *d, uint32_t op, const void *req, uint32_t len, void *resp,
	     uint32_t resp_len, int *recv_fd)
{
	char msg[XHCA_ERRMSG_LEN] = "";
	int rc = xcm_dev_open(d);

	if (rc)
		return rc;
	rc = hook(d)->call(d->verbs, op, req, len, resp, resp_len, recv_fd, msg, sizeof(msg));
	if (rc == -EOPNOTSUPP)
		xcm_log("%s: xhcad does not serve this (no connection manager, or not this part "
			"of it): request %u: %s", d->dev->name, op, msg);
	else if (rc)
		xcm_log("%s: request %u: %s", d->dev->name, op, msg);
	return rc;
}

/* ip's index in d's GID table (IPv4 v4-mapped: xhca's RoCEv2 GIDs), or
 * -ENODEV. */
int xcm_gid_index(struct xcm_dev *d, const uint8_t ip[16])
{
	struct ibv_gid_entry t[XV_MAX_GID];
	ssize_t n;

	if (xcm_dev_open(d))
		return -ENODEV;
	n = ibv_query_gid_table(d->verbs, t, XV_MAX_GID, 0);
	for (ssize_t k = 0; k < n; k++)
		if (!memcmp(t[k].gid.raw, ip, 16))
			return (int)t[k].gid_index;
	return -ENODEV;
}

/* The port's active MTU (enum ibv_mtu): the route's. */
uint8_t xcm_port_mtu(struct xcm_dev *d)
{
	struct ibv_port_attr a;

	if (xcm_dev_open(d) || ibv_query_port(d->verbs, 1, &a))
		return IBV_MTU_1024;
	return (uint8_t)a.active_mtu;
}

/* A PD of the device for QPs made without one (librdmacm's ucma_get_pd). */
struct ibv_pd *xcm_dev_pd(struct xcm_dev *d)
{
	pthread_mutex_lock(&devs_lock);
	if (!d->pd && d->verbs)
		d->pd = ibv_alloc_pd(d->verbs);
	pthread_mutex_unlock(&devs_lock);
	return d->pd;
}

XCM_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	int n = xcm_devices(), k = 0;
	struct ibv_context **list = calloc((size_t)n + 1, sizeof(*list));

	if (!list) {
		if (num_devices)
			*num_devices = 0;
		return NULL;
	}
	for (int i = 0; i < n; i++)
		if (!xcm_dev_open(&devs[i]))
			list[k++] = devs[i].verbs;
	if (num_devices)
		*num_devices = k;
	return list;
}

XCM_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
