/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The QP table rebuilt at start (a restart, an adopted device) from the maps
 * an earlier xhcad left: every CAM entry checked against its context, what
 * is broken removed, the QPs that are left xhcad's own until a session takes
 * them back (state.c), the QPN cursor where it was; and the kept QPs that
 * engine 0 must run moved to its flow queues. Above the QP verbs (qp.c),
 * whose slot invalidation it uses (qp_int.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <xhca/qpctx.h>
#include <xhca/wire.h>
#include "log.h"
#include "qp_int.h"

void qp_engines_fix(struct xhcad *d)
{
	for (__u32 l = 0; d->neng > 1 && l < d->max_qps; l++) {
		struct qp_host *qh = &d->qh[l];
		struct xhca_qp_ctx c;
		__u32 f;

		if (!qh->valid || !qp_engine0_only(qh->gqpn, qh->cq) || !fq_engine(d, qh->flowq) ||
		    qp_ctx_read(d, l, &c))
			continue;
		f = qp_default_flowq(d, qh->gqpn, 1);
		pr_info("QP 0x%06x: flow queue %u -> %u (engine 0's: xhcad --engines %u now)\n",
			qh->gqpn, qh->flowq, f, d->neng);
		if (qh->flowq < d->nflowq)
			d->fq[qh->flowq].nqps--;
		d->fq[f].nqps++;
		c.flowq = (__u8)f;
		qp_ctx_write(d, l, &c, 0);
		sq_move(d, qh, f);
	}
}

/*
 * Rebuilds the QP table from the maps (restart, adopt) and removes what is
 * broken: CAM entries whose context does not point back with the same
 * generation, contexts no CAM entry points at, impossible field values.
 */
int qp_reconcile(struct xhcad *d)
{
	__u32 key, next, *keys = NULL, nkeys = 0, i, max_qpn = 0;
	struct xhca_dstate ds;
	uint8_t *claimed;
	int err = 0;

	claimed = calloc(d->max_qps, 1);
	keys = calloc(d->max_qps + 1, sizeof(*keys));
	if (!claimed || !keys) {
		err = -ENOMEM;
		goto out;
	}
	/* Collect first: deleting while iterating a hash map restarts the walk. */
	if (!bpf_map_get_next_key(d->m.cam, NULL, &key)) {
		do {
			if (nkeys > d->max_qps)
				break;
			keys[nkeys++] = key;
		} while (!bpf_map_get_next_key(d->m.cam, &key, &next) && ((key = next), 1));
	}
	for (i = 0; i < nkeys; i++) {
		__u32 qpn = keys[i];
		struct xhca_cam_val v;
		struct xhca_qp_ctx c;
		const char *why = NULL;

		if (qp_cam_lookup(d, qpn, &v))
			continue;
		if (qpn == XHCA_QPN_SMI || qpn > QPN_LAST)
			why = "reserved QPN";
		else if (v.lidx >= d->max_qps)
			why = "local index out of range";
		else if (qp_ctx_read(d, v.lidx, &c))
			why = "context unreadable";
		else if (xhca_qpctx_torn(&d->ctxm[v.lidx]))
			why = "context left half-written";
		else if (!c.valid)
			why = "context not valid";
		else if (c.gqpn != qpn)
			why = "context belongs to another QPN";
		else if (c.gen != v.gen)
			why = "generation mismatch";
		else if (claimed[v.lidx])
			why = "local index claimed twice";
		else if (c.type != XHCA_QPT_RC && c.type != XHCA_QPT_UC && c.type != XHCA_QPT_UD)
			why = "bad QP type";
		else if (c.state > XHCA_QPS_ERR)
			why = "bad QP state";
		else if (c.pkey_index >= XHCA_PKEY_TBL_LEN)
			why = "bad P_Key index";
		if (why) {
			pr_warn("removed broken CAM entry for QPN 0x%06x: %s\n", qpn, why);
			bpf_map_delete_elem(d->m.cam, &qpn);
			d->repaired++;
			continue;
		}
		claimed[v.lidx] = 1;
		if (qpn > max_qpn)
			max_qpn = qpn;
	}
	for (i = 0; i < d->max_qps; i++) {
		struct xhca_qp_ctx c;

		if (qp_ctx_read(d, i, &c))
			continue;
		if (claimed[i]) {
			bm_set(d->bitmap, i, 1);
			d->qps_in_use++;
			/* this xhcad's --icrc, whatever the last one's was */
			if (!!(c.flags & XHCA_QPF_ICRC_FIRST) != !!d->icrc_first) {
				c.flags ^= XHCA_QPF_ICRC_FIRST;
				qp_ctx_write(d, i, &c, 0);
			}
			/* Sessions did not survive the restart: the QP is
			 * xhcad's now, with nowhere to deliver (RNR). */
			qp_host_attach(d, i, c.gen, c.gqpn, c.type, c.flowq, 0, NULL, NULL, 0, NULL);
		} else if (c.valid || xhca_qpctx_torn(&d->ctxm[i])) {
			pr_warn("removed QP context %u (QPN 0x%06x): no CAM entry points at it\n", i,
				c.gqpn);
			qp_invalidate_slot(d, i, &c);
			d->repaired++;
		}
	}
	key = 0;
	if (!bpf_map_lookup_elem(d->m.dstate, &key, &ds) && ds.next_qpn >= QPN_FIRST &&
	    ds.next_qpn <= QPN_LAST)
		d->next_qpn = ds.next_qpn;
	else if (max_qpn >= QPN_FIRST)
		d->next_qpn = max_qpn + 1 > QPN_LAST ? QPN_FIRST : max_qpn + 1;
	if (d->qps_in_use || d->repaired)
		pr_info("restored %u QPs, removed %u broken entries\n", d->qps_in_use, d->repaired);
out:
	free(claimed);
	free(keys);
	return err;
}
