/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca filter: the proxy QP's filters.
 */
#include "cli.h"

/* ---- proxy QP filters and the proxy --------------------------------------- */

static const struct name_val pf_ops[] = {
	{ "send", XHCA_PF_OP_SEND }, { "read", XHCA_PF_OP_READ },
	{ "cmp-swap", XHCA_PF_OP_CMP_SWAP }, { "fetch-add", XHCA_PF_OP_FETCH_ADD }, { NULL, 0 },
};

static const struct name_val pf_handlers[] = {
	{ "none", XHCA_PXH_NONE }, { "lock", XHCA_PXH_LOCK }, { NULL, 0 },
};

/* The proxy's handler names by id, from xhcad (NULL: it said why). */
static char (*handler_names(void))[16]
{
	struct xhca_proxy_info *pi = NULL;
	char (*names)[16];
	__u32 len = 0;

	if (request("proxy show", XHCA_CTL_PROXY_SHOW, NULL, 0, (void **)&pi, &len) ||
	    len < sizeof(*pi)) {
		free(pi);
		return NULL;
	}
	names = calloc(XHCA_PXH_MAX, 16);
	if (names)
		for (int k = 0; k < XHCA_PXH_MAX; k++)
			field_str(names[k], 16, pi->handlers[k], sizeof(pi->handlers[k]));
	free(pi);
	return names;
}

/* filter show: the names xhcad gave, when it could */
static char (*shown_handlers)[16];

static const char *handler_str(__u8 id, char buf[16])
{
	const char *n = name_of(pf_handlers, id);

	if (shown_handlers && id < XHCA_PXH_MAX && shown_handlers[id][0])
		return shown_handlers[id];
	if (strcmp(n, "?"))
		return n;
	snprintf(buf, 16, "%u", id);
	return buf;
}

struct filter_args {
	const char *op;
	struct xhca_filter r;
	int have_op, have_handler;
};

/* Hex bytes ("4c4f" or "0x4c4f") into out; returns how many, or -1. */
static int hex_bytes(const char *s, __u8 *out, int max)
{
	int n = 0;

	if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2))
		s += 2;
	if (!*s || strlen(s) % 2)
		return -1;
	for (; *s; s += 2) {
		unsigned int v;
		char b[3] = { s[0], s[1], 0 };

		if (n >= max || !strchr("0123456789abcdefABCDEF", s[0]) ||
		    !strchr("0123456789abcdefABCDEF", s[1]) || sscanf(b, "%x", &v) != 1)
			return -1;
		out[n++] = (__u8)v;
	}
	return n;
}

/* --va START-END (END excluded). */
static int va_range_arg(const char *op, const char *arg, struct xhca_pfilter *f)
{
	unsigned long long v, hi;
	char buf[128], *dash;
	int rc;

	snprintf(buf, sizeof(buf), "%s", arg);
	dash = strchr(buf, '-');
	if (!dash)
		return usage_err(op, "--va '%s': give a range START-END (END excluded), e.g. "
				 "0x1000-0x2000", arg);
	*dash = 0;
	rc = num_arg(op, "--va", "start address", buf, 64, "a 64-bit address", &v);
	if (!rc)
		rc = num_arg(op, "--va", "end address", dash + 1, 64, "a 64-bit address", &hi);
	if (rc)
		return rc;
	if (v >= hi)
		return usage_err(op, "--va %s: the range is empty; START must be below END", arg);
	f->va_lo = v;
	f->va_hi = hi;
	f->flags |= XHCA_PF_VA;
	return 0;
}

/* --match VALUE[/MASK] (hex) or text:STRING. */
static int match_arg(const char *op, const char *arg, struct xhca_pfilter *f)
{
	char buf[128], *slash;
	int n;

	if (!strncmp(arg, "text:", 5)) {
		n = (int)strlen(arg + 5);
		if (n < 1 || n > XHCA_PFILT_MATCH_MAX)
			return usage_err(op, "--match text: give 1 to %d characters",
					 XHCA_PFILT_MATCH_MAX);
		memcpy(f->value, arg + 5, (size_t)n);
	} else {
		snprintf(buf, sizeof(buf), "%s", arg);
		slash = strchr(buf, '/');
		if (slash)
			*slash = 0;
		n = hex_bytes(buf, f->value, XHCA_PFILT_MATCH_MAX);
		if (n < 0)
			return usage_err(op, "--match '%s': give 1 to %d bytes in hex (e.g. 4c4f434b, "
					 "or 4c4f434b/000000ff to ignore bits set in the mask), or "
					 "text:STRING", arg, XHCA_PFILT_MATCH_MAX);
		if (slash && hex_bytes(slash + 1, f->mask, XHCA_PFILT_MATCH_MAX) != n)
			return usage_err(op, "--match '%s': the mask must have as many bytes as the "
					 "value (%d)", arg, n);
	}
	f->match_len = (__u8)n;
	f->flags |= XHCA_PF_MATCH;
	return 0;
}

/* --handler lock|none|NAME of one xhcad loaded (its id from xhcad). */
static int handler_arg(const char *op, const char *arg, struct xhca_pfilter *f)
{
	char (*names)[16];
	unsigned int t;
	int k;

	if (!name_lookup(pf_handlers, arg, &t)) {
		f->handler = (__u8)t;
		return 0;
	}
	names = handler_names();
	if (!names)
		return EXIT_FAIL;
	for (k = 0; k < XHCA_PXH_MAX; k++)
		if (names[k][0] && !strcmp(names[k], arg))
			break;
	free(names);
	if (k == XHCA_PXH_MAX)
		return usage_err(op, "--handler '%s': no such handler; lock, none, or one xhcad "
				 "loaded (xhca proxy show lists them)", arg);
	f->handler = (__u8)k;
	return 0;
}

static int filter_opt(void *ctx, int id, const char *name, const char *arg)
{
	struct filter_args *fa = ctx;
	struct xhca_pfilter *f = &fa->r.f;
	const char *op = fa->op;
	unsigned long long v;
	unsigned int t;
	char buf[128], *tok, *save;
	int rc = 0;

	switch (id) {
	case O_F_OP:
		snprintf(buf, sizeof(buf), "%s", arg);
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (name_lookup(pf_ops, tok, &t))
				return usage_err(op, "--op '%s': use send, read, cmp-swap or fetch-add, "
						 "comma-separated", tok);
			f->ops |= (__u8)t;
		}
		fa->have_op = 1;
		break;
	case O_F_BELOW:
	case O_F_ABOVE:
		rc = num_arg(op, id == O_F_BELOW ? "--size-below" : "--size-above", "size", arg, 32,
			     "0..4294967295 bytes", &v);
		f->size = (__u32)v;
		f->flags |= id == O_F_BELOW ? XHCA_PF_SIZE_BELOW : XHCA_PF_SIZE_ABOVE;
		break;
	case O_F_SINGLE:
		f->flags |= XHCA_PF_SINGLE;
		break;
	case O_F_RKEY:
		rc = num_arg(op, "--rkey", "R_Key", arg, 32, "0..0xffffffff", &v);
		f->rkey = (__u32)v;
		f->flags |= XHCA_PF_RKEY;
		break;
	case O_F_VA:
		return va_range_arg(op, arg, f);
	case O_F_SQPN:
		rc = num_arg(op, "--src-qpn", "source QPN", arg, 24, "0..0xffffff", &v);
		f->sqpn = (__u32)v;
		f->flags |= XHCA_PF_SQPN;
		break;
	case O_F_MATCH:
		return match_arg(op, arg, f);
	case O_F_INVERT:
		f->flags |= XHCA_PF_INVERT;
		break;
	case O_F_HANDLER:
		fa->have_handler = 1;
		return handler_arg(op, arg, f);
	}
	return rc;
}

static void ops_str(__u8 ops, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (const struct name_val *t = pf_ops; t->name; t++)
		if (ops & t->val)
			o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s", o ? "," : "",
					      t->name);
}

static void criteria_str(const struct xhca_pfilter *f, char *buf, size_t len)
{
	size_t o = 0;

#define ADD(...) (o += (size_t)snprintf(buf + o, o < len ? len - o : 0, __VA_ARGS__))
	buf[0] = 0;
	if (f->flags & XHCA_PF_SIZE_BELOW)
		ADD("%ssize<%u", o ? " " : "", f->size);
	if (f->flags & XHCA_PF_SIZE_ABOVE)
		ADD("%ssize>=%u", o ? " " : "", f->size);
	if (f->flags & XHCA_PF_SINGLE)
		ADD("%ssingle", o ? " " : "");
	if (f->flags & XHCA_PF_RKEY)
		ADD("%srkey=0x%x", o ? " " : "", f->rkey);
	if (f->flags & XHCA_PF_VA)
		ADD("%sva=0x%llx-0x%llx", o ? " " : "", (unsigned long long)f->va_lo,
		    (unsigned long long)f->va_hi);
	if (f->flags & XHCA_PF_SQPN)
		ADD("%ssrc_qpn=0x%06x", o ? " " : "", f->sqpn);
	if (f->flags & XHCA_PF_MATCH) {
		ADD("%s%smatch=", o ? " " : "", (f->flags & XHCA_PF_INVERT) ? "!" : "");
		for (int i = 0; i < f->match_len && i < XHCA_PFILT_MATCH_MAX; i++)
			ADD("%02x", f->value[i]);
		ADD("/");
		for (int i = 0; i < f->match_len && i < XHCA_PFILT_MATCH_MAX; i++)
			ADD("%02x", f->mask[i]);
	}
	if (!o)
		ADD("any");
#undef ADD
}

static void filter_json(const struct xhca_filter *x)
{
	char ops[64], crit[256], hb[16];

	ops_str(x->f.ops, ops, sizeof(ops));
	criteria_str(&x->f, crit, sizeof(crit));
	jw_open(NULL, '{');
	jw_u64("id", x->f.id);
	jw_u64("qpn", x->qpn);
	jw_str("ops", ops);
	jw_str("criteria", crit);
	jw_u64("flags", x->f.flags);
	jw_u64("size", x->f.size);
	jw_str("handler", handler_str(x->f.handler, hb));
	jw_close('}');
}

/* --op, then the criteria. */
static const struct xhca_opt add_opts[] = {
	OPT(O_F_OP, "op", "OPS", "the requests it takes, comma-separated: send, read,\n"
	    "cmp-swap, fetch-add", .flags = XHCA_OPT_REQUIRED),
	OPT(O_F_BELOW, "size-below", "N", "message size < N bytes (a multi-packet SEND's size is\n"
	    "not known at its first packet: it never is below)"),
	OPT(O_F_ABOVE, "size-above", "N", "message size >= N bytes (not with --size-below)"),
	OPT(O_F_SINGLE, "single", NULL, "single-packet messages only"),
	OPT(O_F_RKEY, "rkey", "K", "READ/ATOMIC: the request's R_Key"),
	OPT(O_F_VA, "va", "START-END", "READ/ATOMIC: the whole access within [START, END)"),
	OPT(O_F_SQPN, "src-qpn", "N", "UD: the sender's QPN"),
	OPT(O_F_MATCH, "match", "HEX[/MASK]|text:STRING", "the first payload bytes (up to 16);\n"
	    "mask bits set are ignored (the patent's\n"
	    "TCAM)"),
	OPT(O_F_INVERT, "invert", NULL, "offload when --match does NOT match"),
	OPT(O_F_HANDLER, "handler", "NAME", "what the proxy does with a SEND: lock (the default,\n"
	    "the lock service), none (declined to the normal\n"
	    "path), or a handler xhcad loaded with\n"
	    "--proxy-handler (xhca proxy show)"),
	{ 0 },
};

static int do_filter_add(const struct call *call, int argc, char **argv)
{
	struct filter_args fa = { .op = call->op };
	struct xhca_filter *r = NULL;
	char *pos[1];
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(call, argc, argv, filter_opt, &fa, pos, 1, &npos);
	if (rc)
		return rc;
	if (!npos)
		return usage_err(fa.op, "missing QPN; use xhca -i IFNAME filter add QPN --op OPS "
				 "[criteria]");
	rc = qpn_arg(fa.op, NULL, pos[0], &fa.r.qpn);
	if (rc)
		return rc;
	if (!fa.have_op)
		return usage_err(fa.op, "--op is required: which requests the filter offloads "
				 "(send, read, cmp-swap, fetch-add)");
	if ((fa.r.f.flags & XHCA_PF_SIZE_BELOW) && (fa.r.f.flags & XHCA_PF_SIZE_ABOVE))
		return usage_err(fa.op, "give --size-below or --size-above, not both");
	if ((fa.r.f.flags & XHCA_PF_INVERT) && !(fa.r.f.flags & XHCA_PF_MATCH))
		return usage_err(fa.op, "--invert inverts --match; give --match too");
	if ((fa.r.f.ops & XHCA_PF_OP_SEND) && !fa.have_handler)
		fa.r.f.handler = XHCA_PXH_LOCK; /* the one there is */
	rc = request(fa.op, XHCA_CTL_FILTER_ADD, &fa.r, sizeof(fa.r), (void **)&r, &len);
	if (rc)
		goto out;
	if (len < sizeof(*r)) {
		rc = short_reply(fa.op, len, sizeof(*r));
		goto out;
	}
	if (json)
		filter_json(r);
	else
		printf("added filter %u to qp 0x%06x\n", r->f.id, r->qpn);
out:
	free(r);
	return rc;
}

static int do_filter_del(const struct call *call, int argc, char **argv)
{
	const char *op = call->op;
	unsigned long long v;
	char *w;
	__u32 id;
	int rc = parse_word(call, argc, argv, &w);

	if (rc)
		return rc;
	if (!w)
		return usage_err(op, "missing filter ID; list them with: xhca -i IFNAME filter show");
	rc = num_arg(op, NULL, "filter ID", w, 32, "1..4294967295", &v);
	if (rc)
		return rc;
	if (!v)
		return usage_err(op, "filter IDs start at 1; list them with: xhca filter show");
	id = (__u32)v;
	rc = request(op, XHCA_CTL_FILTER_DEL, &id, sizeof(id), NULL, NULL);
	if (!rc && !json)
		printf("deleted filter %u\n", id);
	return rc;
}

static const struct tbl_col filter_cols[] = {
	{ "ID", 1 }, { "QPN", 0 }, { "OPS", 0 }, { "HANDLER", 0 }, { "CRITERIA", 0 },
};

static void filter_row(const void *ctx, int row, char c[][TBL_CELL])
{
	const struct xhca_filter *x = (const struct xhca_filter *)ctx + row;

	cell(c[0], "%u", x->f.id);
	cell(c[1], "0x%06x", x->qpn);
	ops_str(x->f.ops, c[2], TBL_CELL);
	char hb[16];

	cell(c[3], "%s", (x->f.ops & XHCA_PF_OP_SEND) ? handler_str(x->f.handler, hb) : "-");
	criteria_str(&x->f, c[4], TBL_CELL);
}

static void filter_json_v(const void *x)
{
	filter_json(x);
}

static int do_filter_show(const struct call *call, int argc, char **argv)
{
	const char *op = call->op;
	struct xhca_filter *v = NULL;
	__u32 qpn = 0, len = 0;
	int rc = parse_qpn(call, argc, argv, 0, &qpn);

	if (rc)
		return rc;
	rc = request(op, XHCA_CTL_FILTER_SHOW, &qpn, sizeof(qpn), (void **)&v, &len);
	if (!rc) {
		shown_handlers = handler_names();
		array_print("filters", v, (__u32)(len / sizeof(*v)), sizeof(*v), filter_json_v,
			    filter_cols, 5, filter_row);
		free(shown_handlers);
		shown_handlers = NULL;
	}
	free(v);
	return rc;
}

const char filter_text[] =
	"Proxy QP filters: which messages of a proxy QP go to the proxy thread.";

const struct cmd filter_cmds[] = {
	{ .name = "show", .alias = "list", .fn = do_filter_show, .args = "[QPN]",
	  .summary = "the filters (of one QP)",
	  .text = "Lists the filters (of one QP): ID, QPN, requests, handler, criteria." },
	{ .name = "add", .fn = do_filter_add, .args = "QPN", .opts = add_opts,
	  .summary = "offload matching messages to the proxy",
	  .text = "A filter of proxy QP QPN (at most 4): a message is offloaded to the proxy\n"
		  "when one filter matches at its first packet, all of that filter's criteria\n"
		  "(the options after --op) holding.\n"
		  "Prints: added filter ID to qp 0xNNNNNN." },
	{ .name = "del", .alias = "delete", .fn = do_filter_del, .args = "ID",
	  .summary = "remove a filter",
	  .text = "Removes a filter; messages already offloaded are still finished by the\n"
		  "proxy." },
	{ 0 },
};
