/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca flowq: the flow queues, their weights.
 */
#include "cli.h"

/* ---- flow queues ---------------------------------------------------------- */

static const struct tbl_col fq_cols[] = {
	{ "FLOWQ", 1 },	 { "WEIGHT", 1 },  { "QPS", 1 },     { "BACKLOG", 1 }, { "GATE", 0 },
	{ "BLOCKED", 0 }, { "FRAMES", 1 }, { "BYTES", 1 },   { "GATE_DROPS", 1 },
	{ "NOSOCK", 1 },  { "KDROPS", 1 },
	/* -v */
	{ "HIGH", 1 },	 { "LOW", 1 },	   { "ENQ", 1 },     { "DEQ", 1 },     { "CLOSES", 1 },
};

static void fq_row(const void *ctx, int row, char c[][TBL_CELL])
{
	const struct xhca_flowq_info *f = (const struct xhca_flowq_info *)ctx + row;

	cell(c[0], "%u", f->flowq);
	cell(c[1], "%u", f->weight);
	cell(c[2], "%u", f->nqps);
	cell(c[3], "%u", f->backlog);
	cell(c[4], "%s", f->gate ? "closed" : "open");
	cell(c[5], "%s", f->blocked ? "yes" : "no");
	cell(c[6], "%llu", (unsigned long long)f->frames);
	cell(c[7], "%llu", (unsigned long long)f->bytes);
	cell(c[8], "%llu", (unsigned long long)f->gate_drops);
	cell(c[9], "%llu", (unsigned long long)f->nosock_drops);
	cell(c[10], "%llu", (unsigned long long)f->kernel_drops);
	cell(c[11], "%u", f->high);
	cell(c[12], "%u", f->low);
	cell(c[13], "%llu", (unsigned long long)f->enq);
	cell(c[14], "%llu", (unsigned long long)f->deq);
	cell(c[15], "%llu", (unsigned long long)f->gate_closes);
}

static void fq_json(const struct xhca_flowq_info *f)
{
	jw_open(NULL, '{');
	jw_u64("flowq", f->flowq);
	jw_u64("weight", f->weight);
	jw_u64("qps", f->nqps);
	jw_u64("backlog", f->backlog);
	jw_bool("gate_closed", f->gate);
	jw_bool("blocked", f->blocked);
	jw_u64("high", f->high);
	jw_u64("low", f->low);
	jw_u64("enq", f->enq);
	jw_u64("deq", f->deq);
	jw_u64("frames", f->frames);
	jw_u64("bytes", f->bytes);
	jw_u64("gate_closes", f->gate_closes);
	jw_u64("gate_drops", f->gate_drops);
	jw_u64("nosock_drops", f->nosock_drops);
	jw_u64("kernel_drops", f->kernel_drops);
	jw_close('}');
}

static void fq_json_any(const void *p)
{
	fq_json(p);
}

static int do_flowq_show(const struct call *call, int argc, char **argv)
{
	const char *op = call->op;
	struct xhca_flowq_info *fi = NULL;
	__u32 n = 0;
	int rc;

	rc = parse_word(call, argc, argv, NULL);
	if (!rc)
		rc = array_request(op, XHCA_CTL_FLOWQ_SHOW, sizeof(*fi), (void **)&fi, &n);
	if (!rc)
		array_print("flowqs", fi, n, sizeof(*fi), fq_json_any, fq_cols, verbose ? 16 : 11,
			    fq_row);
	free(fi);
	return rc;
}

struct flowq_args {
	const char *op;
	struct xhca_flowq_set r;
	int have_weight;
};

static int flowq_opt(void *ctx, int id, const char *name, const char *arg)
{
	struct flowq_args *f = ctx;
	unsigned long long v;
	int rc;

	rc = num_arg(f->op, "--weight", "weight", arg, 32, "1..1000", &v);
	if (rc)
		return rc;
	if (!v || v > XHCA_WEIGHT_MAX)
		return usage_err(f->op, "weight %llu is out of range; use 1..%d", v, XHCA_WEIGHT_MAX);
	f->r.weight = (__u32)v;
	f->have_weight = 1;
	return 0;
}

static const struct xhca_opt flowq_set_opts[] = {
	OPT(O_WEIGHT, "weight", "W", "its DRR weight, 1..1000 (default 1)",
	    .flags = XHCA_OPT_REQUIRED),
	{ 0 },
};

static int do_flowq_set(const struct call *call, int argc, char **argv)
{
	struct flowq_args f = { .op = call->op };
	struct xhca_flowq_info *fi = NULL;
	unsigned long long v;
	char *pos[1];
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(call, argc, argv, flowq_opt, &f, pos, 1, &npos);
	if (rc)
		return rc;
	if (!npos)
		return usage_err(f.op, "missing flow queue; use xhca -i IFNAME flowq set N --weight W");
	rc = num_arg(f.op, NULL, "flow queue", pos[0], 6, "0..63 (see xhca flowq show)", &v);
	if (rc)
		return rc;
	if (!f.have_weight)
		return usage_err(f.op, "nothing to set; give --weight W (1..%d)", XHCA_WEIGHT_MAX);
	f.r.flowq = (__u32)v;
	rc = request(f.op, XHCA_CTL_FLOWQ_SET, &f.r, sizeof(f.r), (void **)&fi, &len);
	if (rc)
		goto out;
	if (len < sizeof(*fi)) {
		rc = short_reply(f.op, len, sizeof(*fi));
		goto out;
	}
	if (json)
		fq_json(fi);
	else
		printf("flow queue %u: weight %u\n", fi->flowq, fi->weight);
out:
	free(fi);
	return rc;
}

const char flowq_text[] =
	"Flow queues are AF_XDP sockets xhcad drains by weighted deficit round robin.";

const struct cmd flowq_cmds[] = {
	{ .name = "show", .fn = do_flowq_show, .summary = "weights, backlog, gate, counters",
	  .text = "Lists the flow queues: weight, QPs, frames waiting, whether the gate (early\n"
		  "drop above the high watermark) is closed, whether xhcad waits for an\n"
		  "application, and frames, bytes and drops. -v adds the watermarks and the\n"
		  "raw counters." },
	{ .name = "set", .fn = do_flowq_set, .args = "N", .opts = flowq_set_opts,
	  .summary = "the share of flow queue N",
	  .text = "Sets the DRR weight of flow queue N: while queues are backlogged, each gets\n"
		  "bytes in proportion to its weight. Prints: flow queue N: weight W." },
	{ 0 },
};
