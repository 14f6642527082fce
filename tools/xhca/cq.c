/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca cq: the CLI's completion queues: create, destroy, poll, show.
 */
#include "cli.h"

/* ---- cq: the CLI's completion queues ---------------------------------------- */

struct cq_args {
	const char *op;
	struct xhca_cq_attr a;
	struct xhca_cq_poll p;
};

static int cq_opt(void *ctx, int id, const char *name, const char *arg)
{
	struct cq_args *ca = ctx;
	unsigned long long v;
	int rc = 0;

	switch (id) {
	case O_DEPTH:
		rc = num_arg(ca->op, "--depth", "depth", arg, 17, "a power of 2 up to 65536", &v);
		if (!rc && (!v || v > XHCA_RING_DEPTH_MAX || (v & (v - 1))))
			return usage_err(ca->op, "--depth %s: give a power of 2 from 1 to %d", arg,
					 XHCA_RING_DEPTH_MAX);
		ca->a.depth = (__u32)v;
		break;
	case O_PROXY:
		ca->a.flags |= XHCA_CQF_PROXY;
		break;
	case O_MAX:
		rc = num_arg(ca->op, "--max", "count", arg, 13, "1..4096", &v);
		if (!rc && (!v || v > 4096))
			return usage_err(ca->op, "--max %s: give 1 to 4096", arg);
		ca->p.max = (__u32)v;
		break;
	case O_DUMP:
		rc = num_arg(ca->op, "--dump", "bytes", arg, 7, "0..64", &v);
		if (!rc && v > XHCA_CQ_DUMP_MAX)
			return usage_err(ca->op, "--dump %s: at most %d bytes", arg, XHCA_CQ_DUMP_MAX);
		ca->p.dump = (__u32)v;
		break;
	}
	return rc;
}

static const struct xhca_opt cq_create_opts[] = {
	OPT(O_DEPTH, "depth", "N", "entries, a power of 2 up to 65536 (default 256)"),
	OPT(O_PROXY, "proxy", NULL, "a proxy CQ: its completions are released by the proxy\n"
	    "thread in message order; a proxy QP needs one"),
	{ 0 },
};

static int do_cq_create(const struct call *call, int argc, char **argv)
{
	struct cq_args ca = { .op = call->op, .a = { .depth = 256 } };
	struct xhca_cq_attr *r = NULL;
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(call, argc, argv, cq_opt, &ca, NULL, 0, &npos);
	if (rc)
		return rc;
	rc = request(ca.op, XHCA_CTL_CQ_CREATE, &ca.a, sizeof(ca.a), (void **)&r, &len);
	if (rc)
		goto out;
	if (len < sizeof(*r)) {
		rc = short_reply(ca.op, len, sizeof(*r));
		goto out;
	}
	if (json) {
		jw_open(NULL, '{');
		jw_u64("cq", r->cq);
		jw_u64("depth", r->depth);
		jw_bool("proxy", !!(r->flags & XHCA_CQF_PROXY));
		jw_close('}');
	} else {
		printf("created cq %u (depth %u%s)\n", r->cq, r->depth,
		       (r->flags & XHCA_CQF_PROXY) ? ", proxy" : "");
	}
out:
	free(r);
	return rc;
}

/* The CQ id of destroy and poll, after their options. */
static int cq_id_arg(const struct call *call, int argc, char **argv, struct cq_args *ca,
		     __u32 *id)
{
	const char *op = call->op;
	unsigned long long v;
	char *pos[1];
	int rc, npos;

	rc = parse_args(call, argc, argv, cq_opt, ca, pos, 1, &npos);
	if (rc)
		return rc;
	if (!npos)
		return usage_err(op, "missing CQ id; list them with: xhca -i IFNAME cq show");
	rc = num_arg(op, NULL, "CQ id", pos[0], 32, "a CQ id (xhca cq show)", &v);
	if (!rc && !v)
		return usage_err(op, "CQ ids start at 1; list them with: xhca cq show");
	*id = (__u32)v;
	return rc;
}

static int do_cq_destroy(const struct call *call, int argc, char **argv)
{
	struct cq_args ca = { .op = call->op };
	__u32 id;
	int rc = cq_id_arg(call, argc, argv, &ca, &id);

	if (rc)
		return rc;
	rc = request(ca.op, XHCA_CTL_CQ_DESTROY, &id, sizeof(id), NULL, NULL);
	if (!rc && !json)
		printf("destroyed cq %u\n", id);
	return rc;
}

static void wc_print(const struct xhca_cq_entry *e)
{
	const struct xhca_cqe *c = &e->c;

	if (json) {
		char hex[2 * XHCA_CQ_DUMP_MAX + 1];

		for (__u32 i = 0; i < e->data_len && i < XHCA_CQ_DUMP_MAX; i++)
			snprintf(hex + 2 * i, 3, "%02x", e->data[i]);
		hex[2 * (e->data_len < XHCA_CQ_DUMP_MAX ? e->data_len : XHCA_CQ_DUMP_MAX)] = 0;
		jw_open(NULL, '{');
		jw_u64("wr_id", c->wr_id);
		jw_u64("status", c->status);
		jw_u64("opcode", c->opcode);
		jw_u64("byte_len", c->byte_len);
		jw_u64("qp_num", c->qp_num);
		jw_u64("src_qp", c->src_qp);
		jw_u64("flags", c->wc_flags);
		if (c->opcode == XHCA_WC_PROXY)
			jw_u64("result", c->imm_data);
		else if (c->wc_flags & XHCA_WC_WITH_IMM)
			jw_u64("imm", __builtin_bswap32(c->imm_data));
		if (e->data_len)
			jw_str("data", hex);
		jw_close('}');
		return;
	}
	printf("wr %llu status %u opcode %u bytes %u qp 0x%06x", (unsigned long long)c->wr_id,
	       c->status, c->opcode, c->byte_len, c->qp_num);
	if (c->opcode == XHCA_WC_PROXY)
		printf(" result %u", c->imm_data);
	else if (c->wc_flags & XHCA_WC_WITH_IMM)
		printf(" imm 0x%08x", __builtin_bswap32(c->imm_data));
	if (e->data_len) {
		printf(" data ");
		for (__u32 i = 0; i < e->data_len && i < XHCA_CQ_DUMP_MAX; i++)
			printf("%02x", e->data[i]);
	}
	putchar('\n');
}

static const struct xhca_opt cq_poll_opts[] = {
	OPT(O_MAX, "max", "N", "completions to take, 1..4096 (default 64)"),
	OPT(O_DUMP, "dump", "B", "the first B bytes of each received message, at\n"
	    "most 64 (default 0)"),
	{ 0 },
};

static int do_cq_poll(const struct call *call, int argc, char **argv)
{
	struct cq_args ca = { .op = call->op };
	struct xhca_cq_entry *v = NULL;
	__u32 len = 0, n;
	int rc = cq_id_arg(call, argc, argv, &ca, &ca.p.cq);

	if (rc)
		return rc;
	rc = request(ca.op, XHCA_CTL_CQ_POLL, &ca.p, sizeof(ca.p), (void **)&v, &len);
	if (rc)
		goto out;
	n = len / sizeof(*v);
	if (json) {
		jw_open(NULL, '{');
		jw_open("completions", '[');
	}
	for (__u32 i = 0; i < n; i++)
		wc_print(&v[i]);
	if (json) {
		jw_close(']');
		jw_close('}');
	}
out:
	free(v);
	return rc;
}

static const struct tbl_col cq_cols[] = {
	{ "CQ", 1 }, { "OWNER", 1 }, { "DEPTH", 1 }, { "USED", 1 }, { "QPS", 1 }, { "STALLS", 1 },
	{ "KIND", 0 },
};

static void cq_row(const void *ctx, int row, char c[][TBL_CELL])
{
	const struct xhca_cq_info *x = (const struct xhca_cq_info *)ctx + row;

	cell(c[0], "%u", x->cq);
	cell(c[1], "%u", x->owner);
	cell(c[2], "%u", x->depth);
	cell(c[3], "%u", x->used);
	cell(c[4], "%u", x->nqps);
	cell(c[5], "%llu", (unsigned long long)x->stalls);
	cell(c[6], "%s", (x->flags & XHCA_CQF_PROXY) ? "proxy" : "-");
}

static void cq_json(const void *p)
{
	const struct xhca_cq_info *x = p;

	jw_open(NULL, '{');
	jw_u64("cq", x->cq);
	jw_u64("owner", x->owner);
	jw_u64("depth", x->depth);
	jw_u64("used", x->used);
	jw_u64("qps", x->nqps);
	jw_u64("stalls", x->stalls);
	jw_bool("proxy", !!(x->flags & XHCA_CQF_PROXY));
	jw_bool("timestamps", !(x->flags & XHCA_CQF_NO_TS));
	jw_close('}');
}

static int do_cq_show(const struct call *call, int argc, char **argv)
{
	const char *op = call->op;
	struct xhca_cq_info *v = NULL;
	__u32 len = 0;
	int rc;

	rc = parse_word(call, argc, argv, NULL);
	if (rc)
		return rc;
	rc = request(op, XHCA_CTL_CQ_SHOW, NULL, 0, (void **)&v, &len);
	if (!rc)
		array_print("cqs", v, (__u32)(len / sizeof(*v)), sizeof(*v), cq_json, cq_cols, 7,
			    cq_row);
	free(v);
	return rc;
}

const char cq_text[] =
	"Completion queues. The CLI's QPs deliver to a CQ given at create (qp create\n"
	"--cq ID [--rq-depth N] [--buf-size B]): xhcad posts their receive buffers and\n"
	"posts them again when cq poll takes their completions.";

const struct cmd cq_cmds[] = {
	{ .name = "show", .alias = "list", .fn = do_cq_show,
	  .summary = "every CQ, applications' too",
	  .text = "Lists every CQ, applications' too: owner, depth, completions not yet\n"
		  "consumed, QPs, stalls, whether it is a proxy CQ." },
	{ .name = "create", .fn = do_cq_create, .opts = cq_create_opts,
	  .summary = "a CQ of the CLI's (xhcad owns it)",
	  .text = "Creates a CQ of the CLI's, which xhcad owns.\n"
		  "Prints: created cq ID (depth N[, proxy])." },
	{ .name = "destroy", .fn = do_cq_destroy, .args = "ID",
	  .summary = "remove one of the CLI's CQs",
	  .text = "Removes one of the CLI's CQs; xhcad refuses one that QPs still complete on." },
	{ .name = "poll", .fn = do_cq_poll, .args = "ID", .opts = cq_poll_opts,
	  .summary = "take completions out of one of the CLI's CQs",
	  .text = "Takes up to N completions out of one of the CLI's CQs, with the first B\n"
		  "bytes of each received message, and posts their buffers again.\n"
		  "One line each: wr, status, opcode (128 receive, 129 WRITE with immediate,\n"
		  "256 WRITE landed and 257 done by the proxy, on a proxy CQ), bytes, QP,\n"
		  "result/imm." },
	{ 0 },
};
