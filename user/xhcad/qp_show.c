/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The QPs shown (xhca qp show) and the counters (xhca stats): a QP's
 * attributes as its context and xhcad's host side hold them, its per-CPU
 * counters summed, the reasons' and host reasons' totals, and their reset.
 * Above the QP verbs (qp.c), whose attribute readers it uses (qp_int.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <xhca/wire.h>
#include "qp_int.h"

static int qp_counters(struct xhcad *d, __u32 lidx, struct xhca_qp_counter *sum)
{
	struct xhca_qp_counter *v;
	int i;

	memset(sum, 0, sizeof(*sum));
	v = calloc(d->ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(d->m.qp_stats, &lidx, v)) {
		free(v);
		return -errno;
	}
	for (i = 0; i < d->ncpus; i++) {
		sum->accepted += v[i].accepted;
		sum->accepted_bytes += v[i].accepted_bytes;
		sum->dropped += v[i].dropped;
		sum->dropped_bytes += v[i].dropped_bytes;
	}
	free(v);
	return 0;
}

static void info_of(struct xhcad *d, __u32 lidx, const struct xhca_qp_ctx *c,
		    struct xhca_qp_info *qi)
{
	memset(qi, 0, sizeof(*qi));
	qp_attr_from_ctx(c, &qi->attr);
	qp_attr_from_host(d, &d->qh[lidx], &qi->attr);
	qi->gen = c->gen;
	qp_counters(d, lidx, &qi->cnt);
	if (d->qh[lidx].valid)
		qi->host = d->qh[lidx].cnt;
	/* and the SENDs xhca_rx completed (--recv-fast; recv_fast_off adds
	 * them to the QP's own count) */
	if (d->qh[lidx].valid && d->qh[lidx].rcv.rf)
		qi->host.completions += __atomic_load_n(&d->qh[lidx].rcv.rf->placed, __ATOMIC_RELAXED);
}

int qp_show(struct xhcad *d, __u32 qpn, __u32 owner, struct xhca_qp_info **out, __u32 *n,
	    char *err, size_t errlen)
{
	struct xhca_qp_info *qi;
	struct xhca_qp_ctx c;
	__u32 lidx, cnt = 0;
	int rc;

	if (qpn) {
		rc = qp_find(d, "qp show", qpn, owner, &lidx, &c, err, errlen);
		if (rc)
			return rc;
		qi = calloc(1, sizeof(*qi));
		if (!qi)
			return -ENOMEM;
		info_of(d, lidx, &c, qi);
		*out = qi;
		*n = 1;
		return 0;
	}
	qi = calloc(d->qps_in_use ? d->qps_in_use : 1, sizeof(*qi));
	if (!qi)
		return -ENOMEM;
	for (lidx = 0; lidx < d->max_qps && cnt < d->qps_in_use; lidx++) {
		if (!bm_test(d->bitmap, lidx) || qp_ctx_read(d, lidx, &c) || !c.valid ||
		    (owner && d->qh[lidx].owner != owner))
			continue; /* a session sees its own QPs only */
		info_of(d, lidx, &c, &qi[cnt++]);
	}
	*out = qi;
	*n = cnt;
	return 0;
}

int stats_get(struct xhcad *d, const struct xhca_stats_req *rq, __u32 owner,
	      struct xhca_stats_reply *out, char *err, size_t errlen)
{
	struct xhca_counter *v;
	struct xhca_qp_ctx c;
	struct engine tot;
	__u32 r, lidx = 0;
	int i, rc = 0;

	memset(out, 0, sizeof(*out));
	out->nr_reasons = XHCA_R_MAX;
	out->nr_host = XHCA_H_MAX;
	round_totals(d, &tot);
	memcpy(out->host, tot.host, sizeof(out->host));
	if (rq->flags & XHCA_STATS_F_QP) {
		rc = qp_find(d, "stats", rq->qpn, owner, &lidx, &c, err, errlen);
		if (rc)
			return rc;
		out->qpn = rq->qpn;
		qp_counters(d, lidx, &out->qp);
	}
	v = calloc(d->ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (r = 0; r < XHCA_R_MAX; r++) {
		if (bpf_map_lookup_elem(d->m.stats, &r, v)) {
			rc = errf(err, errlen, -errno, "stats: read counters: %s", strerror(errno));
			goto out;
		}
		for (i = 0; i < d->ncpus; i++) {
			out->reason[r].packets += v[i].packets;
			out->reason[r].bytes += v[i].bytes;
		}
	}
	/* --reset with --qp zeroes that QP's counters; alone, all of them. */
	if ((rq->flags & XHCA_STATS_F_RESET) && (rq->flags & XHCA_STATS_F_QP)) {
		qp_percpu_zero(d, d->m.qp_stats, lidx, sizeof(struct xhca_qp_counter));
	} else if (rq->flags & XHCA_STATS_F_RESET) {
		round_totals_reset(d);
		for (r = 0; r < XHCA_R_MAX; r++)
			qp_percpu_zero(d, d->m.stats, r, sizeof(struct xhca_counter));
		for (lidx = 0; lidx < d->max_qps; lidx++)
			if (bm_test(d->bitmap, lidx))
				qp_percpu_zero(d, d->m.qp_stats, lidx, sizeof(struct xhca_qp_counter));
	}
out:
	free(v);
	return rc;
}
