/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The QP table as every layer reads it: the contexts xhca_rx reads (the
 * xhca_qp_ctx map, mapped; written in seqcount sections, user/lib/qpctx.c),
 * the QP CAM (global QPN to local index and generation), the host state per
 * local index (struct qp_host), and the one change every layer may make: a
 * QP to the error state. Making, changing and destroying QPs is qp.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xhca/qpctx.h>
#include "log.h"
#include "xhcad_qps.h"

int qp_ctx_read(struct xhcad *d, __u32 lidx, struct xhca_qp_ctx *c)
{
	if (lidx >= d->max_qps)
		return -ENOENT;
	xhca_qpctx_load(&d->ctxm[lidx], c);
	return 0;
}

/* set_rx: also the receive state (create, reset, a new ePSN); otherwise
 * xhca_rx keeps advancing it undisturbed. */
void qp_ctx_write(struct xhcad *d, __u32 lidx, const struct xhca_qp_ctx *c, int set_rx)
{
	xhca_qpctx_store(&d->ctxm[lidx], c, set_rx);
}

int qp_cam_lookup(struct xhcad *d, __u32 qpn, struct xhca_cam_val *v)
{
	return bpf_map_lookup_elem(d->m.cam, &qpn, v) ? -errno : 0;
}

int qp_table_init(struct xhcad *d)
{
	struct xhca_pkey e;
	__u32 k = 0;

	d->bitmap = calloc((d->max_qps + 63) / 64, sizeof(uint64_t));
	d->qh = calloc(d->max_qps, sizeof(*d->qh));
	if (!d->bitmap || !d->qh)
		return -ENOMEM;
	d->ctxm = xhca_qpctx_map(d->m.ctx, d->max_qps);
	if (!d->ctxm) {
		pr_warn("cannot map %s: %s\n", XHCA_MAP_CTX, strerror(errno));
		return -errno;
	}
	/* xhca_rfast: an earlier xhcad's entries go (xhca_rx may be in one:
	 * its lock); receive.c sets those of the QPs it serves that way */
	d->rfm = mmap(NULL, (size_t)d->max_qps * sizeof(*d->rfm), PROT_READ | PROT_WRITE, MAP_SHARED,
		      d->m.rfast, 0);
	if (d->rfm == MAP_FAILED) {
		d->rfm = NULL;
		pr_warn("cannot map %s: %s\n", XHCA_MAP_RFAST, strerror(errno));
		return -errno;
	}
	for (__u32 i = 0; i < d->max_qps; i++) {
		struct xhca_rfast *rf = &d->rfm[i];

		if (!__atomic_load_n(&rf->gen, __ATOMIC_RELAXED))
			continue;
		spin_lock((int *)&rf->lock);
		rf->gen = 0;
		spin_unlock((int *)&rf->lock);
	}
	d->ncpus = libbpf_num_possible_cpus();
	if (d->ncpus < 0)
		return d->ncpus;
	/* P_Key index 0 is the default partition. */
	if (bpf_map_lookup_elem(d->m.pkeys, &k, &e) || e.pkey != XHCA_PKEY_DEFAULT) {
		e.pkey = XHCA_PKEY_DEFAULT;
		e.pad = 0;
		if (bpf_map_update_elem(d->m.pkeys, &k, &e, 0))
			return -errno;
	}
	d->next_qpn = QPN_FIRST;
	return 0;
}

void qp_table_free(struct xhcad *d)
{
	free(d->bitmap);
	d->bitmap = NULL;
	free(d->qh);
	d->qh = NULL;
	xhca_qpctx_unmap(d->ctxm, d->max_qps);
	d->ctxm = NULL;
	if (d->rfm)
		munmap(d->rfm, (size_t)d->max_qps * sizeof(*d->rfm));
	d->rfm = NULL;
}

/* A session acts on its own QPs only; the CLI (owner 0) on any. */
static int check_owner(struct xhcad *d, const char *op, __u32 qpn, __u32 lidx, __u32 owner,
		       char *err, size_t errlen)
{
	if (owner && d->qh[lidx].owner != owner)
		return errf(err, errlen, -EPERM, "%s: QP 0x%06x belongs to another session", op,
			    qpn);
	return 0;
}

static int find_qp(struct xhcad *d, const char *op, __u32 qpn, __u32 *lidx,
		   struct xhca_qp_ctx *c, char *err, size_t errlen)
{
	struct xhca_cam_val v;
	int rc;

	if (qpn > XHCA_QPN_MASK)
		return errf(err, errlen, -ERANGE, "%s: QPN 0x%x is out of range (24 bits)", op, qpn);
	if (qp_cam_lookup(d, qpn, &v))
		return errf(err, errlen, -ENOENT,
			    "%s: no QP 0x%06x on %s; list them with: xhca -i %s qp show", op, qpn,
			    d->ifname, d->ifname);
	rc = qp_ctx_read(d, v.lidx, c);
	if (rc || !c->valid || c->gen != v.gen || c->gqpn != qpn)
		return errf(err, errlen, -EIO, "%s: QP 0x%06x has a broken context; restart xhcad "
			    "to repair", op, qpn);
	*lidx = v.lidx;
	return 0;
}

int qp_find(struct xhcad *d, const char *op, __u32 qpn, __u32 owner, __u32 *lidx,
	    struct xhca_qp_ctx *c, char *err, size_t errlen)
{
	int rc = find_qp(d, op, qpn, lidx, c, err, errlen);

	return rc ? rc : check_owner(d, op, qpn, *lidx, owner, err, errlen);
}

int qp_set_error(struct xhcad *d, __u32 lidx, __u32 gen)
{
	struct xhca_qp_ctx c;

	if (qp_ctx_read(d, lidx, &c) || !c.valid || c.gen != gen)
		return -ENOENT;
	if (c.state != XHCA_QPS_ERR) {
		c.state = XHCA_QPS_ERR;
		qp_ctx_write(d, lidx, &c, 0);
	}
	return 0;
}
