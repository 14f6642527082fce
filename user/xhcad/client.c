/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An application's end: its session's QPs, CQs, SRQs, memory regions, PDs
 * and host memory go when it does, whether it closed its connection or died
 * (the kernel closes the socket either way), or, after a restart, when the
 * process it waited for ended. High in xhcad's layers: it undoes what every
 * layer below made for the session.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "log.h"
#include "xhcad_verbs.h"

/* Everything the session owned goes: QPs first (their CQs and rings are
 * in use until then), then CQs, then the rest of its host memory. */
void session_close(struct xhcad *d, __u32 id)
{
	struct session **pp, *s = NULL;
	char err[XHCA_ERRMSG_LEN];
	__u32 nqp = 0, ncq = 0;

	for (pp = &d->app.sessions; *pp; pp = &(*pp)->next) {
		if ((*pp)->id == id) {
			s = *pp;
			*pp = s->next;
			break;
		}
	}
	if (!s)
		return;
	cm_session_gone(d, id); /* before its QPs: a peer hears of it first */
	for (__u32 l = 0; l < d->max_qps; l++) {
		if (!d->qh[l].valid || d->qh[l].owner != id)
			continue;
		if (!qp_destroy(d, d->qh[l].gqpn, id, err, sizeof(err)))
			nqp++;
	}
	ncq = cq_free_owner(d, id);
	mr_drop_owner(d, id);
	mem_free_owner(d, id);
	pd_drop_owner(d, id);
	if (s->pidfd >= 0)
		close(s->pidfd);
	if (s->sq_dbfd >= 0)
		close(s->sq_dbfd);
	d->app.nsessions--;
	d->state_dirty = 1;
	pr_info("session %u (%s) ended: freed %u QPs, %u CQs, its memory regions and host memory\n", id, s->name,
		nqp, ncq);
	free(s);
}
