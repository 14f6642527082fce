/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Proxy QP filters (US 9,069,633, the patent's "filter criteria"): up to
 * XHCA_PFILT_PER_QP per proxy QP, in xhca_pfilt at the QP's local index,
 * written whole with the context's generation (a QP made again in the slot
 * does not inherit them). xhca_rx evaluates them at the first packet of
 * each message (bpf/proxy.bpf.h, xhca_pf_eval). xhcad keeps what it wrote
 * (d->flt.set) and reads it back at start, for a restart keeps the QPs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "log.h"
#include "xhcad_mech.h"

#define PF_OPS (XHCA_PF_OP_SEND | XHCA_PF_OP_READ | XHCA_PF_OP_CMP_SWAP | XHCA_PF_OP_FETCH_ADD)
#define PF_FLAGS 0xffu

static int set_write(struct xhcad *d, __u32 lidx)
{
	return bpf_map_update_elem(d->m.pfilt, &lidx, &d->flt.set[lidx], 0) ? -errno : 0;
}

int filter_init(struct xhcad *d)
{
	d->flt.set = calloc(d->max_qps, sizeof(*d->flt.set));
	if (!d->flt.set)
		return -ENOMEM;
	d->flt.next = 0;
	d->flt.n = 0;
	for (__u32 l = 0; l < d->max_qps; l++) {
		struct xhca_pfilter_set *fs = &d->flt.set[l];
		const struct qp_host *qh = &d->qh[l];

		if (bpf_map_lookup_elem(d->m.pfilt, &l, fs))
			memset(fs, 0, sizeof(*fs));
		if (!qh->valid || fs->gen != qh->gen) {
			/* another QP's, or none: nothing of it may match */
			if (fs->gen) {
				memset(fs, 0, sizeof(*fs));
				set_write(d, l);
			}
			continue;
		}
		for (int i = 0; i < XHCA_PFILT_PER_QP; i++) {
			if (!fs->f[i].id)
				continue;
			d->flt.n++;
			if (fs->f[i].id > d->flt.next)
				d->flt.next = fs->f[i].id;
		}
		d->qh[l].px.handler = filter_handler(d, l);
	}
	return 0;
}

void filter_fini(struct xhcad *d)
{
	free(d->flt.set);
	d->flt.set = NULL;
}

__u8 filter_handler(const struct xhcad *d, __u32 lidx)
{
	const struct xhca_pfilter_set *fs = &d->flt.set[lidx];

	for (int i = 0; i < XHCA_PFILT_PER_QP; i++)
		if (fs->f[i].id && (fs->f[i].ops & XHCA_PF_OP_SEND))
			return fs->f[i].handler;
	return XHCA_PXH_NONE;
}

/* What makes no filter: criteria that cannot hold, or cannot be told. */
static int check(const struct xhcad *d, const struct xhca_pfilter *f,
		 const struct xhca_qp_ctx *c, __u8 handler, char *err, size_t errlen)
{
	if (!f->ops || (f->ops & ~PF_OPS))
		return errf(err, errlen, -EINVAL,
			    "filter add: give the requests it takes: send, read, cmp-swap, "
			    "fetch-add (--op)");
	if ((f->flags & XHCA_PF_SIZE_BELOW) && (f->flags & XHCA_PF_SIZE_ABOVE))
		return errf(err, errlen, -EINVAL,
			    "filter add: one size threshold per filter: --size-below or "
			    "--size-above, not both (two filters make a range's outside)");
	if ((f->flags & XHCA_PF_MATCH) && (f->match_len < 1 || f->match_len > XHCA_PFILT_MATCH_MAX))
		return errf(err, errlen, -EINVAL,
			    "filter add: a value/mask match covers 1..%d payload bytes, not %u",
			    XHCA_PFILT_MATCH_MAX, f->match_len);
	if ((f->flags & XHCA_PF_INVERT) && !(f->flags & XHCA_PF_MATCH))
		return errf(err, errlen, -EINVAL,
			    "filter add: --invert inverts a value/mask match; give --match too");
	if ((f->flags & (XHCA_PF_RKEY | XHCA_PF_VA)) && (f->ops & XHCA_PF_OP_SEND))
		return errf(err, errlen, -EINVAL,
			    "filter add: SENDs carry no R_Key or address: --rkey and --va take "
			    "read, cmp-swap and fetch-add only");
	if ((f->flags & XHCA_PF_VA) && f->va_lo >= f->va_hi)
		return errf(err, errlen, -EINVAL,
			    "filter add: the address range is empty (its start is not below its end)");
	if ((f->flags & XHCA_PF_SQPN) && (c->type != XHCA_QPT_UD || f->sqpn > XHCA_QPN_MASK))
		return errf(err, errlen, -EINVAL,
			    c->type != XHCA_QPT_UD ? "filter add: --src-qpn is for UD QPs"
						  : "filter add: source QPN out of range (24 bits)");
	if (!proxy_handler_known(d, f->handler))
		return errf(err, errlen, -EINVAL,
			    "filter add: no handler %u; xhca proxy show lists them (lock, none and "
			    "those xhcad loaded with --proxy-handler)", f->handler);
	if (f->handler && !(f->ops & XHCA_PF_OP_SEND))
		return errf(err, errlen, -EINVAL,
			    "filter add: a handler takes SENDs; the proxy executes READ and ATOMIC "
			    "itself");
	if ((f->ops & XHCA_PF_OP_SEND) && handler != 0xff && handler != f->handler)
		return errf(err, errlen, -EINVAL,
			    "filter add: the QP's SEND filters share one handler; it has handler %u",
			    handler);
	if ((f->ops & (XHCA_PF_OP_READ | XHCA_PF_OP_CMP_SWAP | XHCA_PF_OP_FETCH_ADD)) &&
	    c->type != XHCA_QPT_RC)
		return errf(err, errlen, -EINVAL,
			    "filter add: READ and ATOMIC are RC requests; this QP is not RC");
	return 0;
}

int filter_add(struct xhcad *d, struct xhca_filter *r, __u32 owner, char *err, size_t errlen)
{
	struct xhca_pfilter_set *fs;
	struct xhca_qp_ctx c;
	__u8 handler = 0xff;
	__u32 lidx;
	int slot = -1, rc;

	rc = qp_find(d, "filter add", r->qpn, owner, &lidx, &c, err, errlen);
	if (rc)
		return rc;
	if (!(c.flags & XHCA_QPF_PROXY))
		return errf(err, errlen, -EINVAL,
			    "filter add: QP 0x%06x is not a proxy QP; make it one first (xhca qp "
			    "modify 0x%06x --proxy on)", r->qpn, r->qpn);
	fs = &d->flt.set[lidx];
	if (fs->gen != c.gen)
		memset(fs, 0, sizeof(*fs));
	for (int i = 0; i < XHCA_PFILT_PER_QP; i++) {
		if (!fs->f[i].id) {
			if (slot < 0)
				slot = i;
		} else if (fs->f[i].ops & XHCA_PF_OP_SEND) {
			handler = fs->f[i].handler;
		}
	}
	rc = check(d, &r->f, &c, handler, err, errlen);
	if (rc)
		return rc;
	if (slot < 0)
		return errf(err, errlen, -ENOSPC,
			    "filter add: QP 0x%06x has %d filters already (the most); delete one "
			    "(xhca filter del ID)", r->qpn, XHCA_PFILT_PER_QP);
	if (++d->flt.next == 0)
		d->flt.next = 1;
	r->f.id = d->flt.next;
	r->f.pad = 0;
	fs->gen = c.gen;
	fs->f[slot] = r->f;
	rc = set_write(d, lidx);
	if (rc) {
		memset(&fs->f[slot], 0, sizeof(fs->f[slot]));
		return errf(err, errlen, rc, "filter add: %s: %s", XHCA_MAP_PFILT, strerror(-rc));
	}
	d->flt.n++;
	d->qh[lidx].px.handler = filter_handler(d, lidx);
	return 0;
}

int filter_del(struct xhcad *d, __u32 id, __u32 owner, char *err, size_t errlen)
{
	for (__u32 l = 0; id && l < d->max_qps; l++) {
		struct xhca_pfilter_set *fs = &d->flt.set[l];

		if (!fs->gen)
			continue;
		for (int i = 0; i < XHCA_PFILT_PER_QP; i++) {
			if (fs->f[i].id != id)
				continue;
			if (owner && d->qh[l].owner != owner)
				return errf(err, errlen, -EPERM,
					    "filter del: filter %u is on another session's QP", id);
			memset(&fs->f[i], 0, sizeof(fs->f[i]));
			set_write(d, l);
			d->flt.n--;
			d->qh[l].px.handler = filter_handler(d, l);
			return 0;
		}
	}
	return errf(err, errlen, -ENOENT, "filter del: no filter %u; list them with: xhca filter "
		    "show", id);
}

int filter_show(struct xhcad *d, __u32 qpn, __u32 owner, struct xhca_filter **out, __u32 *n,
		char *err, size_t errlen)
{
	struct xhca_filter *v = calloc(d->flt.n ? d->flt.n : 1, sizeof(*v));
	struct xhca_qp_ctx c;
	__u32 k = 0, want = 0;

	if (!v)
		return -ENOMEM;
	if (qpn) {
		int rc = qp_find(d, "filter show", qpn, owner, &want, &c, err, errlen);

		if (rc) {
			free(v);
			return rc;
		}
	}
	for (__u32 l = 0; l < d->max_qps && k < d->flt.n; l++) {
		const struct xhca_pfilter_set *fs = &d->flt.set[l];

		if (!fs->gen || (qpn && l != want) || (owner && d->qh[l].owner != owner))
			continue; /* a session sees its own QPs' filters only */
		for (int i = 0; i < XHCA_PFILT_PER_QP; i++) {
			if (!fs->f[i].id)
				continue;
			v[k].qpn = d->qh[l].gqpn;
			v[k++].f = fs->f[i];
		}
	}
	*out = v;
	*n = k;
	return 0;
}

void filter_clear(struct xhcad *d, __u32 lidx)
{
	struct xhca_pfilter_set *fs;

	if (!d->flt.set)
		return; /* (the restore, before filter_init: it drops other QPs' sets) */
	fs = &d->flt.set[lidx];
	if (!fs->gen)
		return;
	for (int i = 0; i < XHCA_PFILT_PER_QP; i++)
		if (fs->f[i].id)
			d->flt.n--;
	memset(fs, 0, sizeof(*fs));
	set_write(d, lidx);
}
