/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca qp: create, modify, destroy, show queue pairs.
 */
#include "cli.h"

#define STR_(x) #x
#define XSTR(x) STR_(x)

/* ---- qp ---------------------------------------------------------------- */

static const char *ip_str(const __u8 ip[16], char *buf, size_t len)
{
	if (!ip_is_set(ip))
		return NULL;
	return xhca_ip_str(ip, buf, len);
}

/* The attribute fields every QP object has in JSON. */
static void json_attr(const struct xhca_qp_attr *a)
{
	char lb[64], rb[64];

	jw_u64("qpn", a->qpn);
	jw_str("type", name_of(qp_types, a->type));
	jw_str("state", name_of(qp_states, a->state));
	jw_str("action", name_of(qp_actions, a->action));
	jw_u64("pkey", a->pkey);
	jw_u64("qkey", a->qkey);
	jw_u64("epsn", a->epsn);
	jw_u64("mtu", mtu_bytes(a->mtu_shift));
	jw_u64("dest_qpn", a->dest_qpn);
	jw_str("local_ip", ip_str(a->local_ip, lb, sizeof(lb)));
	jw_str("remote_ip", ip_str(a->remote_ip, rb, sizeof(rb)));
	jw_u64("flowq", a->flowq);
	if (a->type == XHCA_QPT_RC) {
		jw_u64("ack_every", a->ack_every);
		jw_u64("rnr_timer", a->rnr_timer);
	}
	jw_u64("pd", a->pd);
	jw_bool("block_self_mcast_loopback", !!(a->flags & XHCA_QPF_BLOCK_MC_LOOPBACK));
	jw_bool("proxy", !!(a->flags & XHCA_QPF_PROXY));
	jw_bool("proxy_cq", !!(a->flags & XHCA_QPF_PROXY_CQ));
	jw_u64("owner", a->owner);
	jw_u64("cq", a->cq);
	if (a->sq_depth) {
		jw_open("send_queue", '{');
		jw_u64("send_cq", a->send_cq);
		jw_u64("depth", a->sq_depth);
		jw_u64("sq_psn", a->sq_psn);
		if (a->type == XHCA_QPT_RC) {
			jw_u64("timeout", a->timeout);
			jw_u64("retry_cnt", a->retry_cnt);
			jw_u64("rnr_retry", a->rnr_retry);
			jw_u64("max_rd_atomic", a->max_rd_atomic);
		}
		jw_close('}');
	}
}

struct create_args {
	const char *op;
	struct xhca_qp_attr a;
	int have_type;
};

static int create_opt(void *ctx, int id, const char *name, const char *arg)
{
	struct create_args *c = ctx;
	const char *op = c->op;
	unsigned long long v;
	unsigned int t;
	int rc;

	switch (id) {
	case O_TYPE:
		if (name_lookup(qp_types, arg, &t))
			return usage_err(op, "unknown QP type '%s'; use rc, uc or ud", arg);
		c->a.type = t;
		c->have_type = 1;
		return 0;
	case O_QPN:
		rc = num_arg(op, "--qpn", "QPN", arg, 24, "2..0xfffffe", &v);
		if (rc)
			return rc;
		if (!v)
			return usage_err(op, "QPN 0 is the SMI QP, which RoCE does not have; use "
					 "2..0xfffffe, or omit --qpn to get a free one");
		if (v == XHCA_QPN_MCAST)
			return usage_err(op, "QPN 0xffffff is the multicast QPN; use 2..0xfffffe");
		c->a.qpn = v;
		return 0;
	case O_PKEY:
		rc = num_arg(op, "--pkey", "P_Key", arg, 16, "e.g. 0xffff", &v);
		if (rc)
			return rc;
		/* On the wire 0 means "default"; an explicit partition 0 is a mistake. */
		if (!(v & 0x7fff))
			return usage_err(op, "P_Key 0x%04llx is invalid (partition 0); use e.g. 0xffff",
					 v);
		c->a.pkey = v;
		return 0;
	case O_QKEY:
		rc = num_arg(op, "--qkey", "Q_Key", arg, 32, "0..0xffffffff", &v);
		if (rc)
			return rc;
		c->a.qkey = v;
		return 0;
	case O_FLOWQ:
		rc = num_arg(op, "--flowq", "flow queue", arg, 6, "0..63 (xhca status shows how "
			     "many xhcad has)", &v);
		if (rc)
			return rc;
		c->a.flowq = (__u8)v;
		c->a.mask |= XHCA_QPA_FLOWQ;
		return 0;
	case O_BLOCK_LB:
		c->a.flags |= XHCA_QPF_BLOCK_MC_LOOPBACK;
		return 0;
	case O_PROXY:
		return proxy_arg(op, arg, &c->a.flags);
	case O_CQ:
		rc = num_arg(op, "--cq", "CQ", arg, 32, "a CQ id (xhca cq show)", &v);
		if (!rc && !v)
			return usage_err(op, "--cq 0: CQ ids start at 1 (xhca cq show)");
		c->a.cq = (__u32)v;
		return rc;
	case O_RQ_DEPTH:
		rc = num_arg(op, "--rq-depth", "receive queue depth", arg, 17, "a power of 2 up to 65536",
			     &v);
		if (!rc && (!v || v > XHCA_RING_DEPTH_MAX || (v & (v - 1))))
			return usage_err(op, "--rq-depth %s: give a power of 2 from 1 to %d", arg,
					 XHCA_RING_DEPTH_MAX);
		c->a.rq_depth = (__u32)v;
		return rc;
	case O_BUF_SIZE:
		rc = num_arg(op, "--buf-size", "buffer size", arg, 21, "1..1048576 bytes", &v);
		if (!rc && (!v || v > (1u << 20)))
			return usage_err(op, "--buf-size %s: give 1 to 1048576 bytes", arg);
		c->a.buf_size = (__u32)v;
		return rc;
	}
	return 0;
}

static const struct xhca_opt create_opts[] = {
	OPT(O_TYPE, "type", "rc|uc|ud", "transport", .flags = XHCA_OPT_REQUIRED),
	OPT(O_QPN, "qpn", "N", "global QPN, 2..0xfffffe (1, the GSI QP, for ud only);\n"
	    "default: the daemon picks a free one"),
	OPT(O_PKEY, "pkey", "P", "partition key, 16 bits (default 0xffff)"),
	OPT(O_QKEY, "qkey", "K", "UD Q_Key, 32 bits (default 0)"),
	OPT(O_FLOWQ, "flowq", "N", "flow queue of its packets with action host\n"
	    "(default: a hash of the QPN)"),
	OPT(O_BLOCK_LB, "block-self-mcast-loopback", NULL, "no copy of multicast packets it sent\n"
	    "itself (source address of this host, source\n"
	    "QPN its own)"),
	OPT(O_CQ, "cq", "ID", "deliver to CQ ID, one of the CLI's (xhca cq\n"
	    "create): the QP's action is host, xhcad posts\n"
	    "receive buffers for it, xhca cq poll takes the\n"
	    "completions and posts them again"),
	OPT(O_RQ_DEPTH, "rq-depth", "N", "with --cq: how many receive buffers, a power of 2 up\n"
	    "to 65536 (default 64)"),
	OPT(O_BUF_SIZE, "buf-size", "B", "with --cq: their size, 1 to 1048576 bytes (default\n"
	    "4096)"),
	OPT(O_PROXY, "proxy", "on|off", "a proxy QP: its CQ must be a proxy CQ (cq create\n"
	    "--proxy)"),
	{ 0 },
};

static int do_qp_create(const struct call *call, int argc, char **argv)
{
	struct create_args c = { .op = call->op };
	struct xhca_qp_attr *r = NULL;
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(call, argc, argv, create_opt, &c, NULL, 0, &npos);
	if (rc)
		return rc;
	if (!c.have_type)
		return usage_err(c.op, "--type is required; use --type rc, uc or ud");
	if ((c.a.rq_depth || c.a.buf_size) && !c.a.cq)
		return usage_err(c.op, "--rq-depth and --buf-size go with --cq: the QP's receive "
				 "buffers complete on that CQ");
	if (c.a.cq && !c.a.rq_depth)
		c.a.rq_depth = 64;
	rc = request(c.op, XHCA_CTL_QP_CREATE, &c.a, sizeof(c.a), (void **)&r, &len);
	if (rc)
		goto out;
	if (len < sizeof(*r)) {
		rc = short_reply(c.op, len, sizeof(*r));
		goto out;
	}
	if (json) {
		jw_open(NULL, '{');
		json_attr(r);
		jw_close('}');
	} else {
		printf("created qp 0x%06x (%s, flow queue %u)\n", r->qpn, name_of(qp_types, r->type),
		       r->flowq);
	}
out:
	free(r);
	return rc;
}

struct modify_args {
	const char *op;
	struct xhca_qp_attr a;
	int local_fam, remote_fam; /* 4 or 6 when given */
};

static int ip_opt(const char *op, const char *opt, const char *arg, __u8 out[16], int *fam)
{
	int rc = xhca_ip_parse(arg, out);

	if (rc != 4 && rc != 6)
		return usage_err(op, "%s '%s' is not an IPv4 or IPv6 address; use e.g. 10.0.0.2 or "
				 "fd00::2", opt, arg);
	*fam = rc;
	return 0;
}

/* The attribute each option of qp modify sets (its bit of the mask). */
static const __u32 qpa_of[O_MAX_RD_ATOMIC + 1] = {
	[O_STATE] = XHCA_QPA_STATE, [O_EPSN] = XHCA_QPA_EPSN,
	[O_REMOTE_IP] = XHCA_QPA_REMOTE_IP, [O_LOCAL_IP] = XHCA_QPA_LOCAL_IP,
	[O_MTU] = XHCA_QPA_MTU, [O_ACTION] = XHCA_QPA_ACTION, [O_QKEY] = XHCA_QPA_QKEY,
	[O_PKEY] = XHCA_QPA_PKEY, [O_DEST_QPN] = XHCA_QPA_DEST_QPN,
	[O_PROXY] = XHCA_QPA_PROXY, [O_ACK_EVERY] = XHCA_QPA_ACK_EVERY,
	[O_RNR_TIMER] = XHCA_QPA_RNR_TIMER, [O_SQ_PSN] = XHCA_QPA_SQ_PSN,
	[O_TIMEOUT] = XHCA_QPA_TIMEOUT, [O_RETRY_CNT] = XHCA_QPA_RETRY_CNT,
	[O_RNR_RETRY] = XHCA_QPA_RNR_RETRY, [O_MAX_RD_ATOMIC] = XHCA_QPA_MAX_RD_ATOMIC,
};

static int modify_opt(void *ctx, int id, const char *name, const char *arg)
{
	struct modify_args *m = ctx;
	struct xhca_qp_attr *a = &m->a;
	const char *op = m->op;
	unsigned long long v;
	unsigned int t;
	__u32 bit = id >= 0 && id <= O_MAX_RD_ATOMIC ? qpa_of[id] : 0;
	int rc = 0;

	/* Which of two values was meant is a guess; refuse it. */
	if (a->mask & bit)
		return usage_err(op, "--%s is given twice; give it once", name);
	switch (id) {
	case O_STATE:
		if (name_lookup(qp_states, arg, &t))
			return usage_err(op, "unknown state '%s'; use reset, init, rtr, rts, sqd, sqe "
					 "or err", arg);
		a->state = t;
		break;
	case O_EPSN:
		rc = num_arg(op, "--epsn", "ePSN", arg, 24, "0..0xffffff", &v);
		a->epsn = v;
		break;
	case O_REMOTE_IP:
		rc = ip_opt(op, "--remote-ip", arg, a->remote_ip, &m->remote_fam);
		break;
	case O_LOCAL_IP:
		rc = ip_opt(op, "--local-ip", arg, a->local_ip, &m->local_fam);
		break;
	case O_MTU:
		if (name_lookup(mtus, arg, &t))
			return usage_err(op, "MTU '%s' is not an IB MTU; use 256, 512, 1024, 2048 or "
					 "4096", arg);
		a->mtu_shift = t;
		break;
	case O_ACTION:
		if (name_lookup(qp_actions, arg, &t))
			return usage_err(op, "unknown action '%s'; use pass, drop or host", arg);
		a->action = t;
		break;
	case O_QKEY:
		rc = num_arg(op, "--qkey", "Q_Key", arg, 32, "0..0xffffffff", &v);
		a->qkey = v;
		break;
	case O_PKEY:
		rc = num_arg(op, "--pkey", "P_Key", arg, 16, "e.g. 0xffff", &v);
		if (!rc && !(v & 0x7fff))
			return usage_err(op, "P_Key 0x%04llx is invalid (partition 0); use e.g. 0xffff",
					 v);
		a->pkey = v;
		break;
	case O_DEST_QPN:
		rc = num_arg(op, "--dest-qpn", "dest QPN", arg, 24, "0..0xffffff", &v);
		a->dest_qpn = v;
		break;
	case O_PROXY:
		rc = proxy_arg(op, arg, &a->flags);
		break;
	case O_ACK_EVERY:
		rc = num_arg(op, "--ack-every", "packets per ACK", arg, 16, "0..65535", &v);
		a->ack_every = (__u16)v;
		break;
	case O_RNR_TIMER:
		rc = num_arg(op, "--rnr-timer", "RNR timer code", arg, 5, "0..31 (IBA table 45)", &v);
		a->rnr_timer = (__u8)v;
		break;
	case O_SQ_PSN:
		rc = num_arg(op, "--sq-psn", "send PSN", arg, 24, "0..0xffffff", &v);
		a->sq_psn = (__u32)v;
		break;
	case O_TIMEOUT:
		rc = num_arg(op, "--timeout", "timeout code", arg, 5, "0..31 (4.096 us * 2^T, 0: none)",
			     &v);
		a->timeout = (__u8)v;
		break;
	case O_RETRY_CNT:
		rc = num_arg(op, "--retry-cnt", "retry count", arg, 3, "0..7", &v);
		a->retry_cnt = (__u8)v;
		break;
	case O_RNR_RETRY:
		rc = num_arg(op, "--rnr-retry", "RNR retry count", arg, 3, "0..7 (7: no end)", &v);
		a->rnr_retry = (__u8)v;
		break;
	case O_MAX_RD_ATOMIC:
		rc = num_arg(op, "--max-rd-atomic", "READ/ATOMIC outstanding", arg, 5, "1..128", &v);
		if (!rc && (v < 1 || v > XHCA_MAX_RD_ATOMIC))
			return usage_err(op, "--max-rd-atomic %llu is out of range; use 1..128", v);
		a->max_rd_atomic = (__u8)v;
		break;
	}
	if (!rc)
		a->mask |= bit;
	return rc;
}

static const struct xhca_opt modify_opts[] = {
	OPT(O_STATE, "state", "reset|init|rtr|rts|sqd|sqe|err",
	    "IB order: reset > init > rtr > rts; any state >\nreset|err"),
	OPT(O_EPSN, "epsn", "N", "expected PSN of the next request, 24 bits"),
	OPT(O_LOCAL_IP, "local-ip", "A", "our address, IPv4 or IPv6 (RC/UC)"),
	OPT(O_REMOTE_IP, "remote-ip", "A", "the peer's address, same family (RC/UC)"),
	OPT(O_MTU, "mtu", "256|512|1024|2048|4096", "path MTU"),
	OPT(O_ACTION, "action", "pass|drop|host", "what happens to accepted packets: the\n"
	    "kernel gets them, they are consumed, or\n"
	    "xhcad delivers them (AF_XDP)"),
	OPT(O_QKEY, "qkey", "K", "UD Q_Key, 32 bits"),
	OPT(O_PKEY, "pkey", "P", "partition key, 16 bits"),
	OPT(O_DEST_QPN, "dest-qpn", "N", "the peer's QPN (RC/UC), 24 bits"),
	OPT(O_PROXY, "proxy", "on|off", "proxy QP: its filters offload messages to the proxy\n"
	    "thread; its completions must go to a proxy CQ\n"
	    "(xhca_cq_create_ex with XHCA_CQF_PROXY, or xhca-recv\n"
	    "--proxy). Off: no new message is offloaded; none in\n"
	    "flight is lost or reordered"),
	OPT(O_ACK_EVERY, "ack-every", "N", "RC responder: an ACK at least every N request\n"
	    "packets, and at each AckReq (0: only at AckReq;\n"
	    "default " XSTR(XHCA_ACK_EVERY_DEFAULT) ")"),
	OPT(O_RNR_TIMER, "rnr-timer", "T", "RC responder: the timer code of its RNR NAKs, 0..31\n"
	    "(IBA table 45: 1 = 0.01 ms ... 14 = 1.28 ms ... 0 =\n"
	    "655 ms; default " XSTR(XHCA_RNR_TIMER_DEFAULT) ")"),
	OPT(O_SQ_PSN, "sq-psn", "N", "send queue: the PSN of its next new request packet,\n"
	    "24 bits"),
	OPT(O_TIMEOUT, "timeout", "T", "send queue, RC: no response in 4.096 us * 2^T is a\n"
	    "retry, 0..31 (0: no timer; default " XSTR(XHCA_TIMEOUT_DEFAULT) " = 67 ms)"),
	OPT(O_RETRY_CNT, "retry-cnt", "N", "send queue, RC: retries after a timeout or sequence\n"
	    "NAK, 0..7 (default " XSTR(XHCA_RETRY_CNT_DEFAULT) "), then RETRY_EXC_ERR"),
	OPT(O_RNR_RETRY, "rnr-retry", "N", "send queue, RC: retries after an RNR NAK, 0..7 (7,\n"
	    "the default: no end)"),
	OPT(O_MAX_RD_ATOMIC, "max-rd-atomic", "N", "send queue, RC: READ/ATOMIC requests\n"
	    "outstanding at once, 1..128 (default " XSTR(XHCA_MAX_RD_ATOMIC_DEFAULT) ")"),
	{ 0 },
};

static int do_qp_modify(const struct call *call, int argc, char **argv)
{
	struct modify_args m = { .op = call->op };
	struct xhca_qp_attr *r = NULL;
	char *pos[1], lb[64], rb[64], names[512];
	const char *l, *rm;
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(call, argc, argv, modify_opt, &m, pos, 1, &npos);
	if (rc)
		return rc;
	if (!npos)
		return usage_err(m.op, "missing QPN; use xhca -i IFNAME qp modify QPN [options]");
	rc = qpn_arg(m.op, NULL, pos[0], &m.a.qpn);
	if (rc)
		return rc;
	if (!m.a.mask) {
		xhca_opt_names(call->cmd->opts, names, sizeof(names));
		return usage_err(m.op, "nothing to change; give at least one of %s", names);
	}
	if (m.local_fam && m.remote_fam && m.local_fam != m.remote_fam)
		return usage_err(m.op, "--local-ip is IPv%d but --remote-ip is IPv%d; give both "
				 "addresses in the same family", m.local_fam, m.remote_fam);
	if (m.local_fam == 6 || m.remote_fam == 6)
		m.a.flags |= XHCA_QPF_IPV6;
	rc = request(m.op, XHCA_CTL_QP_MODIFY, &m.a, sizeof(m.a), (void **)&r, &len);
	if (rc)
		goto out;
	if (len < sizeof(*r)) {
		rc = short_reply(m.op, len, sizeof(*r));
		goto out;
	}
	if (json) {
		jw_open(NULL, '{');
		json_attr(r);
		jw_close('}');
		goto out;
	}
	l = ip_str(r->local_ip, lb, sizeof(lb));
	rm = ip_str(r->remote_ip, rb, sizeof(rb));
	printf("modified qp 0x%06x (%s): state %s, action %s, pkey 0x%04x, qkey 0x%08x, epsn %u, "
	       "mtu %u, dest_qpn 0x%06x, local %s, remote %s, proxy %s\n",
	       r->qpn, name_of(qp_types, r->type), name_of(qp_states, r->state),
	       name_of(qp_actions, r->action), r->pkey, r->qkey, r->epsn, mtu_bytes(r->mtu_shift),
	       r->dest_qpn, l ? l : "-", rm ? rm : "-",
	       (r->flags & XHCA_QPF_PROXY) ? "on" : "off");
out:
	free(r);
	return rc;
}

static int do_qp_destroy(const struct call *call, int argc, char **argv)
{
	__u32 qpn;
	int rc = parse_qpn(call, argc, argv, 1, &qpn);

	if (rc)
		return rc;
	rc = request(call->op, XHCA_CTL_QP_DESTROY, &qpn, sizeof(qpn), NULL, NULL);
	if (rc)
		return rc;
	if (json) {
		jw_open(NULL, '{');
		jw_u64("qpn", qpn);
		jw_bool("destroyed", 1);
		jw_close('}');
	} else {
		printf("destroyed qp 0x%06x\n", qpn);
	}
	return EXIT_OK;
}

static int cmp_info(const void *x, const void *y)
{
	const struct xhca_qp_info *a = x, *b = y;

	return a->attr.qpn < b->attr.qpn ? -1 : a->attr.qpn > b->attr.qpn;
}

static const struct tbl_col show_cols[] = {
	{ "QPN", 0 },	  { "TYPE", 0 },	{ "STATE", 0 },	   { "ACTION", 0 },
	{ "PKEY", 0 },	  { "QKEY", 0 },	{ "EPSN", 1 },	   { "MTU", 1 },
	{ "LOCAL", 0 },	  { "REMOTE", 0 },	{ "FLOWQ", 1 },	   { "ACCEPTED", 1 },
	{ "DROPPED", 1 },
	/* -v */
	{ "DEST_QPN", 0 }, { "GEN", 1 },	{ "ACC_BYTES", 1 }, { "DROP_BYTES", 1 },
	{ "OWNER", 1 },	  { "CQ", 1 },		{ "FRAMES", 1 },   { "COMPLETIONS", 1 },
	{ "RNR", 1 },	  { "ERRORS", 1 },	{ "SEND_CQ", 1 },  { "SQ_DEPTH", 1 },
	{ "SQ_PSN", 1 },  { "TIMEOUT", 1 },	{ "RETRY", 1 },	   { "RNR_RETRY", 1 },
	{ "RD_ATOMIC", 1 },
};
#define SHOW_COLS 13

static void show_row(const void *ctx, int row, char c[][TBL_CELL])
{
	const struct xhca_qp_info *qi = (const struct xhca_qp_info *)ctx + row;
	const struct xhca_qp_attr *a = &qi->attr;
	char ip[64];
	const char *s;

	cell(c[0], "0x%06x", a->qpn);
	cell(c[1], "%s", name_of(qp_types, a->type));
	cell(c[2], "%s", name_of(qp_states, a->state));
	cell(c[3], "%s", name_of(qp_actions, a->action));
	cell(c[4], "0x%04x", a->pkey);
	cell(c[5], "0x%08x", a->qkey);
	cell(c[6], "%u", a->epsn);
	cell(c[7], "%u", mtu_bytes(a->mtu_shift));
	s = ip_str(a->local_ip, ip, sizeof(ip));
	cell(c[8], "%s", s ? s : "-");
	s = ip_str(a->remote_ip, ip, sizeof(ip));
	cell(c[9], "%s", s ? s : "-");
	cell(c[10], "%u", a->flowq);
	cell(c[11], "%llu", (unsigned long long)qi->cnt.accepted);
	cell(c[12], "%llu", (unsigned long long)qi->cnt.dropped);
	cell(c[13], "0x%06x", a->dest_qpn);
	cell(c[14], "%u", qi->gen);
	cell(c[15], "%llu", (unsigned long long)qi->cnt.accepted_bytes);
	cell(c[16], "%llu", (unsigned long long)qi->cnt.dropped_bytes);
	cell(c[17], "%u", a->owner);
	cell(c[18], "%u", a->cq);
	cell(c[19], "%llu", (unsigned long long)qi->host.frames);
	cell(c[20], "%llu", (unsigned long long)qi->host.completions);
	cell(c[21], "%llu", (unsigned long long)qi->host.rnr);
	cell(c[22], "%llu", (unsigned long long)qi->host.errors);
	if (!a->sq_depth) {
		for (int k = 23; k < 30; k++)
			cell(c[k], "-");
		return;
	}
	cell(c[23], "%u", a->send_cq);
	cell(c[24], "%u", a->sq_depth);
	cell(c[25], "%u", a->sq_psn);
	cell(c[26], "%u", a->timeout);
	cell(c[27], "%u", a->retry_cnt);
	cell(c[28], "%u", a->rnr_retry);
	cell(c[29], "%u", a->max_rd_atomic);
}

static void show_json(const struct xhca_qp_info *qi, __u32 n)
{
	__u32 i;

	jw_open(NULL, '{');
	jw_open("qps", '[');
	for (i = 0; i < n; i++) {
		jw_open(NULL, '{');
		json_attr(&qi[i].attr);
		jw_u64("gen", qi[i].gen);
		jw_u64("accepted", qi[i].cnt.accepted);
		jw_u64("accepted_bytes", qi[i].cnt.accepted_bytes);
		jw_u64("dropped", qi[i].cnt.dropped);
		jw_u64("dropped_bytes", qi[i].cnt.dropped_bytes);
		jw_open("host", '{');
		jw_u64("frames", qi[i].host.frames);
		jw_u64("completions", qi[i].host.completions);
		jw_u64("rnr", qi[i].host.rnr);
		jw_u64("errors", qi[i].host.errors);
		jw_close('}');
		jw_close('}');
	}
	jw_close(']');
	jw_close('}');
}

static int do_qp_show(const struct call *call, int argc, char **argv)
{
	const char *op = call->op;
	struct xhca_qp_info *qi = NULL;
	__u32 qpn = 0, len = 0, n;
	int rc = parse_qpn(call, argc, argv, 0, &qpn);

	if (rc)
		return rc;
	rc = request(op, XHCA_CTL_QP_SHOW, &qpn, sizeof(qpn), (void **)&qi, &len);
	if (rc)
		goto out;
	if (len % sizeof(*qi)) {
		rc = short_reply(op, len, (len / sizeof(*qi) + 1) * sizeof(*qi));
		goto out;
	}
	n = len / sizeof(*qi);
	if (n > 1)
		qsort(qi, n, sizeof(*qi), cmp_info);
	if (json)
		show_json(qi, n);
	else
		tbl_print(show_cols, verbose ? (int)(sizeof(show_cols) / sizeof(show_cols[0])) : SHOW_COLS,
			  n, show_row, qi);
out:
	free(qi);
	return rc;
}

const char qp_text[] = "Queue pairs. QPNs are global 24-bit queue pair numbers.";

const struct cmd qp_cmds[] = {
	{ .name = "show", .alias = "list", .fn = do_qp_show, .args = "[QPN]",
	  .summary = "every QP (or one) with its counters",
	  .text = "Lists every QP (or one) with its counters; -v adds DEST_QPN, GEN, byte\n"
		  "counts, the owning session, its CQ, what xhcad delivered (frames,\n"
		  "completions, RNR drops, errors) and an application's send queue." },
	{ .name = "create", .fn = do_qp_create, .opts = create_opts,
	  .summary = "a QP in state reset",
	  .text = "Creates a QP in state reset, owned by xhcad (it stays when xhca exits).\n"
		  "Prints: created qp 0xNNNNNN (TYPE, flow queue N); with -j the QP as JSON." },
	{ .name = "modify", .fn = do_qp_modify, .args = "QPN", .opts = modify_opts,
	  .summary = "change what is given",
	  .text = "Changes only what is given; a refused change changes nothing. The send\n"
		  "queue's options are for a QP with one (an application's, xhca_post_send).\n"
		  "Prints the QP's attributes after the change." },
	{ .name = "destroy", .fn = do_qp_destroy, .args = "QPN", .summary = "remove a QP",
	  .text = "Removes the QP; packets for it are then dropped as drop_cam_miss." },
	{ 0 },
};
