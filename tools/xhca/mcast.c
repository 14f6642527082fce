/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca mcast: multicast groups and their members.
 */
#include "cli.h"

/* ---- mcast --------------------------------------------------------------- */

/* An MGID: an IPv6 multicast address, or an IPv4 one (v4-mapped). */
static int mgid_arg(const char *op, const char *s, struct xhca_mgid *g)
{
	int fam = xhca_ip_parse(s, g->gid);

	if (fam < 0)
		return usage_err(op, "'%s' is not an MGID; give a multicast address, IPv4 "
				 "(239.1.1.1) or IPv6 (ff0e::1)", s);
	if (fam == 4 ? (g->gid[12] & 0xf0) != 0xe0 : g->gid[0] != 0xff)
		return usage_err(op, "%s is not a multicast address; use 224.0.0.0/4 or ff00::/8",
				 s);
	return 0;
}

struct mcast_args {
	const char *op;
	struct xhca_mcast_req r;
};

static int mcast_opt(void *ctx, int id, const char *name, const char *arg)
{
	struct mcast_args *m = ctx;
	unsigned long long v;
	int rc;

	if (id == O_PKEY) {
		rc = num_arg(m->op, "--pkey", "P_Key", arg, 16, "e.g. 0xffff", &v);
		if (rc)
			return rc;
		if (!(v & 0x7fff))
			return usage_err(m->op, "P_Key 0x%04llx is invalid (partition 0); use e.g. "
					 "0xffff", v);
		m->r.pkey = (__u16)v;
		return 0;
	}
	if (strlen(arg) >= sizeof(m->r.dev))
		return usage_err(m->op, "--dev %s: an interface name has at most %zu characters",
				 arg, sizeof(m->r.dev) - 1);
	snprintf(m->r.dev, sizeof(m->r.dev), "%s", arg);
	return 0;
}

static void mcast_json(const void *p)
{
	const struct xhca_mcast_info *mi = p;
	char g[64];

	jw_open(NULL, '{');
	jw_str("mgid", xhca_ip_str(mi->mgid.gid, g, sizeof(g)));
	jw_u64("index", mi->index);
	jw_u64("pkey", mi->pkey);
	jw_bool("auto", !!(mi->flags & XHCA_MCF_AUTO));
	jw_open("members", '[');
	for (__u32 i = 0; i < mi->nmembers && i < XHCA_MCAST_MEMBERS; i++)
		jw_u64(NULL, mi->qpns[i]);
	jw_close(']');
	jw_open("devs", '[');
	for (__u32 i = 0; i < mi->ndevs && i < XHCA_MCAST_DEVS; i++) {
		char n[sizeof(mi->devs[i]) + 1];

		field_str(n, sizeof(n), mi->devs[i], sizeof(mi->devs[i]));
		jw_str(NULL, n);
	}
	jw_close(']');
	jw_u64("packets", mi->packets);
	jw_u64("bytes", mi->bytes);
	jw_u64("dev_packets", mi->dev_packets);
	jw_u64("replicated", mi->replicated);
	jw_u64("copies", mi->copies);
	jw_open("drops", '{');
	jw_u64("threshold", mi->threshold_drops);
	jw_u64("pkey", mi->pkey_drops);
	jw_u64("empty", mi->empty_drops);
	jw_u64("member_state", mi->skip_state);
	jw_u64("member_qkey", mi->skip_qkey);
	jw_u64("member_pkey", mi->skip_pkey);
	jw_u64("loopback", mi->skip_loopback);
	jw_u64("stale", mi->skip_stale);
	jw_u64("rnr", mi->rnr);
	jw_u64("errors", mi->errors);
	jw_close('}');
	jw_close('}');
}

static const struct tbl_col mcast_cols[] = {
	{ "MGID", 0 },	  { "PKEY", 0 },   { "MEMBERS", 1 }, { "DEVS", 1 },   { "PACKETS", 1 },
	{ "COPIES", 1 },  { "DROPS", 1 },
	/* -v */
	{ "INDEX", 1 },	  { "THRESHOLD", 1 }, { "SKIPPED", 1 }, { "RNR", 1 },   { "QPNS", 0 },
};

static void mcast_row(const void *ctx, int row, char c[][TBL_CELL])
{
	const struct xhca_mcast_info *mi = (const struct xhca_mcast_info *)ctx + row;
	char g[64];
	size_t n = 0;

	cell(c[0], "%s", xhca_ip_str(mi->mgid.gid, g, sizeof(g)));
	cell(c[1], "0x%04x", mi->pkey);
	cell(c[2], "%u", mi->nmembers);
	cell(c[3], "%u", mi->ndevs);
	cell(c[4], "%llu", (unsigned long long)mi->packets);
	cell(c[5], "%llu", (unsigned long long)mi->copies);
	cell(c[6], "%llu", (unsigned long long)(mi->threshold_drops + mi->pkey_drops +
						mi->empty_drops));
	cell(c[7], "%u", mi->index);
	cell(c[8], "%llu", (unsigned long long)mi->threshold_drops);
	cell(c[9], "%llu", (unsigned long long)(mi->skip_state + mi->skip_qkey + mi->skip_pkey +
						mi->skip_loopback + mi->skip_stale));
	cell(c[10], "%llu", (unsigned long long)mi->rnr);
	c[11][0] = 0;
	for (__u32 i = 0; i < mi->nmembers && n + 10 < TBL_CELL; i++)
		n += (size_t)snprintf(c[11] + n, TBL_CELL - n, "%s0x%06x", i ? "," : "",
				      mi->qpns[i]);
}

static int do_mcast_show(const struct call *call, int argc, char **argv)
{
	const char *op = call->op;
	struct xhca_mcast_info *mi = NULL;
	__u32 n = 0;
	int rc;

	rc = parse_word(call, argc, argv, NULL);
	if (!rc)
		rc = array_request(op, XHCA_CTL_MCAST_SHOW, sizeof(*mi), (void **)&mi, &n);
	if (!rc)
		array_print("groups", mi, n, sizeof(*mi), mcast_json, mcast_cols, verbose ? 12 : 7,
			    mcast_row);
	free(mi);
	return rc;
}

static const struct xhca_opt create_opts[] = {
	OPT(O_PKEY, "pkey", "P", "the group's partition (default 0xffff), checked\n"
	    "for every packet"),
	{ 0 },
};

/* attach and detach */
static const struct xhca_opt member_opts[] = {
	OPT(O_DEV, "dev", "IFNAME", "a function port in place of a QP: a network interface\n"
	    "that gets a copy of every packet from xhca_rx"),
	{ 0 },
};

/* create, destroy, attach, detach: MGID [QPN] [--dev IF] [--pkey P] */
static int mcast_cmd(const struct call *call, __u32 code, int argc, char **argv)
{
	int member = code == XHCA_CTL_MCAST_ATTACH || code == XHCA_CTL_MCAST_DETACH;
	const char *op = call->op;
	struct mcast_args m = { .op = op };
	struct xhca_mcast_info *mi = NULL;
	char *pos[2];
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(call, argc, argv, mcast_opt, &m, pos, member ? 2 : 1, &npos);
	if (rc)
		return rc;
	if (!npos)
		return usage_err(op, "missing MGID; use xhca -i IFNAME %s MGID%s", op,
				 member ? " QPN|--dev IFNAME" : "");
	rc = mgid_arg(op, pos[0], &m.r.mgid);
	if (rc)
		return rc;
	if (member) {
		if (npos == 2 && m.r.dev[0])
			return usage_err(op, "give a QPN or --dev IFNAME, not both");
		if (npos < 2 && !m.r.dev[0])
			return usage_err(op, "missing QPN; use xhca -i IFNAME %s MGID QPN (or --dev "
					 "IFNAME)", op);
		if (npos == 2) {
			rc = qpn_arg(op, NULL, pos[1], &m.r.qpn);
			if (rc)
				return rc;
		}
	}
	rc = request(op, code, &m.r, sizeof(m.r), (void **)&mi, &len);
	if (rc)
		return rc;
	if (code == XHCA_CTL_MCAST_CREATE && len >= sizeof(*mi)) {
		if (json)
			mcast_json(mi);
		else
			printf("created group %s (index %u, P_Key 0x%04x)\n", pos[0], mi->index,
			       mi->pkey);
	} else if (json) {
		jw_open(NULL, '{');
		jw_str("mgid", pos[0]);
		if (member && m.r.dev[0])
			jw_str("dev", m.r.dev);
		else if (member)
			jw_u64("qpn", m.r.qpn);
		jw_bool(code == XHCA_CTL_MCAST_DESTROY ? "destroyed"
			: code == XHCA_CTL_MCAST_ATTACH ? "attached" : "detached", 1);
		jw_close('}');
	} else if (member && m.r.dev[0]) {
		printf("%s %s %s group %s\n", code == XHCA_CTL_MCAST_ATTACH ? "attached" : "detached",
		       m.r.dev, code == XHCA_CTL_MCAST_ATTACH ? "to" : "from", pos[0]);
	} else if (member) {
		printf("%s qp 0x%06x %s group %s\n",
		       code == XHCA_CTL_MCAST_ATTACH ? "attached" : "detached", m.r.qpn,
		       code == XHCA_CTL_MCAST_ATTACH ? "to" : "from", pos[0]);
	} else {
		printf("destroyed group %s\n", pos[0]);
	}
	free(mi);
	return EXIT_OK;
}

static int do_mcast_create(const struct call *call, int argc, char **argv)
{
	return mcast_cmd(call, XHCA_CTL_MCAST_CREATE, argc, argv);
}

static int do_mcast_destroy(const struct call *call, int argc, char **argv)
{
	return mcast_cmd(call, XHCA_CTL_MCAST_DESTROY, argc, argv);
}

static int do_mcast_attach(const struct call *call, int argc, char **argv)
{
	return mcast_cmd(call, XHCA_CTL_MCAST_ATTACH, argc, argv);
}

static int do_mcast_detach(const struct call *call, int argc, char **argv)
{
	return mcast_cmd(call, XHCA_CTL_MCAST_DETACH, argc, argv);
}

const char mcast_text[] =
	"Multicast groups. An MGID is a multicast address: IPv4 (239.1.1.1, kept\n"
	"v4-mapped) or IPv6 (ff0e::1). Members are UD QPs (a copy each, the payload\n"
	"stored once) and function ports: interfaces xhca_rx sends the packet to, in\n"
	"the kernel.";

const struct cmd mcast_cmds[] = {
	{ .name = "show", .alias = "list", .fn = do_mcast_show,
	  .summary = "groups, members, counters",
	  .text = "Lists the groups: P_Key, members, function ports, packets, copies delivered\n"
		  "and drops; -v adds the index, threshold drops, members skipped (state,\n"
		  "Q_Key, P_Key, loopback, gone), copies without a receive buffer and the\n"
		  "member QPNs." },
	{ .name = "create", .fn = do_mcast_create, .args = "MGID", .opts = create_opts,
	  .summary = "an empty group",
	  .text = "Creates an empty group; packets to it are dropped (drop_mcast_empty) until\n"
		  "a member attaches." },
	{ .name = "destroy", .fn = do_mcast_destroy, .args = "MGID",
	  .summary = "remove a group and its members",
	  .text = "Removes the group and its members; copies already made are still\n"
		  "delivered." },
	{ .name = "attach", .fn = do_mcast_attach, .args = "MGID [QPN]", .opts = member_opts,
	  .summary = "add a UD QP, or a port with --dev",
	  .text = "Adds a UD QP (its Q_Key, P_Key and state are checked per packet), or a\n"
		  "function port: give a QPN or --dev, not both." },
	{ .name = "detach", .fn = do_mcast_detach, .args = "MGID [QPN]", .opts = member_opts,
	  .summary = "remove a member",
	  .text = "Removes a member (a QPN or --dev, not both); a destroyed QP leaves its\n"
		  "groups by itself." },
	{ 0 },
};
