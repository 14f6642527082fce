/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca stats: the reason counters of xhca_rx and xhcad.
 */
#include "cli.h"

/* ---- stats ------------------------------------------------------------- */

struct stats_args {
	const char *op;
	struct xhca_stats_req rq;
};

static int stats_opt(void *ctx, int id, const char *name, const char *arg)
{
	struct stats_args *s = ctx;
	int rc;

	if (id == O_RESET) {
		s->rq.flags |= XHCA_STATS_F_RESET;
		return 0;
	}
	rc = qpn_arg(s->op, "--qp", arg, &s->rq.qpn);
	if (!rc)
		s->rq.flags |= XHCA_STATS_F_QP;
	return rc;
}

static void reason_name(__u32 r, char *buf, size_t len)
{
	/* A newer daemon may count reasons this xhca has no name for. */
	if (r < XHCA_R_MAX)
		snprintf(buf, len, "%s", reason_names[r]);
	else
		snprintf(buf, len, "reason_%u", r);
}

struct stats_rows {
	const struct xhca_counter *cnt;
	__u32 n; /* reasons; row n is the total */
	unsigned long long tp, tb;
};

static void stats_row(const void *ctx, int row, char c[][TBL_CELL])
{
	const struct stats_rows *s = ctx;
	__u32 i = row;

	if (i == s->n) {
		cell(c[0], "total");
		cell(c[1], "%llu", s->tp);
		cell(c[2], "%llu", s->tb);
		cell(c[3], "every packet xhca_rx saw");
		return;
	}
	reason_name(i, c[0], TBL_CELL);
	cell(c[1], "%llu", (unsigned long long)s->cnt[i].packets);
	cell(c[2], "%llu", (unsigned long long)s->cnt[i].bytes);
	cell(c[3], "%s", i < XHCA_R_MAX ? reason_descs[i] : "");
}

struct host_rows {
	const struct xhca_counter *cnt;
};

static void host_row(const void *ctx, int row, char c[][TBL_CELL])
{
	const struct host_rows *h = ctx;

	cell(c[0], "%s", host_names[row]);
	cell(c[1], "%llu", (unsigned long long)h->cnt[row].packets);
	cell(c[2], "%llu", (unsigned long long)h->cnt[row].bytes);
	cell(c[3], "%s", host_descs[row]);
}

const char stats_text[] =
	"Shows every reason counter of xhca_rx (packets, bytes) and their total, then\n"
	"what xhcad did with the frames it took from the flow queues. -v adds a\n"
	"description of each reason.";

const struct xhca_opt stats_opts[] = {
	OPT(O_QP, "qp", "QPN", "also the accepted/dropped counters of one QP"),
	OPT(O_RESET, "reset", NULL, "zero the counters after reading them (with --qp:\n"
	    "that QP's only)"),
	{ 0 },
};

/* The reply as one JSON object; tp, tb: the reasons' total. */
static void stats_json(const struct xhca_stats_req *rq, const struct xhca_stats_reply *r,
		       unsigned long long tp, unsigned long long tb)
{
	char name[32];

	jw_open(NULL, '{');
	jw_open("reasons", '{');
	for (__u32 i = 0; i < XHCA_R_MAX; i++) {
		reason_name(i, name, sizeof(name));
		jw_open(name, '{');
		jw_u64("packets", r->reason[i].packets);
		jw_u64("bytes", r->reason[i].bytes);
		jw_close('}');
	}
	jw_close('}');
	jw_open("total", '{');
	jw_u64("packets", tp);
	jw_u64("bytes", tb);
	jw_close('}');
	jw_open("host", '{');
	for (__u32 i = 0; i < XHCA_H_MAX; i++) {
		jw_open(host_names[i], '{');
		jw_u64("frames", r->host[i].packets);
		jw_u64("bytes", r->host[i].bytes);
		jw_close('}');
	}
	jw_close('}');
	if (rq->flags & XHCA_STATS_F_QP) {
		jw_open("qp", '{');
		jw_u64("qpn", rq->qpn);
		jw_u64("accepted", r->qp.accepted);
		jw_u64("accepted_bytes", r->qp.accepted_bytes);
		jw_u64("dropped", r->qp.dropped);
		jw_u64("dropped_bytes", r->qp.dropped_bytes);
		jw_close('}');
	}
	if (rq->flags & XHCA_STATS_F_RESET)
		jw_bool("reset", 1);
	jw_close('}');
}

int do_stats(const struct call *call, int argc, char **argv)
{
	static const struct tbl_col cols[] = {
		{ "REASON", 0 }, { "PACKETS", 1 }, { "BYTES", 1 }, { "DESCRIPTION", 0 },
	};
	static const struct tbl_col hcols[] = {
		{ "HOST", 0 }, { "FRAMES", 1 }, { "BYTES", 1 }, { "DESCRIPTION", 0 },
	};
	struct stats_args s = { .op = call->op };
	struct xhca_stats_reply *r = NULL;
	unsigned long long tp = 0, tb = 0;
	__u32 len = 0, i;
	int rc, npos;

	rc = parse_args(call, argc, argv, stats_opt, &s, NULL, 0, &npos);
	if (rc)
		return rc;
	rc = request(s.op, XHCA_CTL_STATS, &s.rq, sizeof(s.rq), (void **)&r, &len);
	if (rc)
		goto out;
	if (len < sizeof(*r) || r->nr_reasons != XHCA_R_MAX || r->nr_host != XHCA_H_MAX) {
		rc = short_reply(s.op, len, sizeof(*r));
		goto out;
	}
	for (i = 0; i < XHCA_R_MAX; i++) {
		tp += r->reason[i].packets;
		tb += r->reason[i].bytes;
	}
	if (json) {
		stats_json(&s.rq, r, tp, tb);
		goto out;
	}
	tbl_print(cols, verbose ? 4 : 3, XHCA_R_MAX + 1, stats_row,
		  &(struct stats_rows){ .cnt = r->reason, .n = XHCA_R_MAX, .tp = tp, .tb = tb });
	putchar('\n');
	tbl_print(hcols, verbose ? 4 : 3, XHCA_H_MAX, host_row, &(struct host_rows){ r->host });
	if (s.rq.flags & XHCA_STATS_F_QP)
		printf("qp 0x%06x: accepted %llu packets (%llu bytes), dropped %llu packets "
		       "(%llu bytes)\n", s.rq.qpn, (unsigned long long)r->qp.accepted,
		       (unsigned long long)r->qp.accepted_bytes, (unsigned long long)r->qp.dropped,
		       (unsigned long long)r->qp.dropped_bytes);
	if (s.rq.flags & XHCA_STATS_F_RESET)
		printf("counters reset%s\n", s.rq.flags & XHCA_STATS_F_QP ? " (this QP only)" : "");
out:
	free(r);
	return rc;
}
