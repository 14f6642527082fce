/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca: command line client of xhcad's control socket, in the style of ip and
 * bpftool. Every value is checked here before a request is sent, so a typo
 * never reaches the daemon; what only the daemon can know (a QPN that exists,
 * a full table, a state transition) comes back as its own message.
 *
 * Exit codes: 0 ok, 1 the request failed, 2 bad usage (nothing was sent).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <net/if.h>
#include <xhca/abi.h>
#include <xhca/ctl.h>
#include <xhca/pkt.h>
#include "log.h"

#define FIELD_SIZE(type, field) sizeof(((type *)0)->field)

#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2

/* How long to wait for xhcad: it serves one request at a time and none takes
 * long, so silence this long means it is stuck. */
#define CTL_TIMEOUT_S 10

static int json;
static int verbose;
static const char *ifname;

/* ---- messages ---------------------------------------------------------- */

/* One line on stderr: "xhca: OP: what is wrong; what to do". */
static int usage_err(const char *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_err(const char *op, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (op)
		pr_warn("%s: %s\n", op, msg);
	else
		pr_warn("%s\n", msg);
	return EXIT_USAGE;
}

/* The daemon's message is shown as is, but on one line: scripts (and the
 * tests) rely on one error line per failure. */
static void print_daemon_err(char *msg)
{
	size_t n = strlen(msg);
	char *p;

	while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	for (p = msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	pr_warn("%s\n", msg);
}

/* ---- names ------------------------------------------------------------- */

struct name_val {
	const char *name;
	unsigned int val;
};

static const struct name_val qp_types[] = {
	{ "rc", XHCA_QPT_RC }, { "uc", XHCA_QPT_UC }, { "ud", XHCA_QPT_UD }, { NULL, 0 },
};

static const struct name_val qp_states[] = {
	{ "reset", XHCA_QPS_RESET }, { "init", XHCA_QPS_INIT }, { "rtr", XHCA_QPS_RTR },
	{ "rts", XHCA_QPS_RTS },     { "sqd", XHCA_QPS_SQD },   { "sqe", XHCA_QPS_SQE },
	{ "err", XHCA_QPS_ERR },     { NULL, 0 },
};

static const struct name_val qp_actions[] = {
	{ "pass", XHCA_ACT_PASS }, { "drop", XHCA_ACT_DROP }, { "host", XHCA_ACT_HOST }, { NULL, 0 },
};

static const struct name_val mtus[] = {
	{ "256", 8 }, { "512", 9 }, { "1024", 10 }, { "2048", 11 }, { "4096", 12 }, { NULL, 0 },
};

#define XHCA_REASON_STR(name, str, desc) str,
static const char *const reason_names[XHCA_R_MAX] = { XHCA_REASONS(XHCA_REASON_STR) };
#undef XHCA_REASON_STR
#define XHCA_REASON_DESC(name, str, desc) desc,
static const char *const reason_descs[XHCA_R_MAX] = { XHCA_REASONS(XHCA_REASON_DESC) };
#undef XHCA_REASON_DESC
#define XHCA_HOST_STR(name, str, desc) str,
static const char *const host_names[XHCA_H_MAX] = { XHCA_HOST_REASONS(XHCA_HOST_STR) };
#undef XHCA_HOST_STR
#define XHCA_HOST_DESC(name, str, desc) desc,
static const char *const host_descs[XHCA_H_MAX] = { XHCA_HOST_REASONS(XHCA_HOST_DESC) };
#undef XHCA_HOST_DESC

static int name_lookup(const struct name_val *t, const char *s, unsigned int *val)
{
	for (; t->name; t++) {
		if (!strcmp(t->name, s)) {
			*val = t->val;
			return 0;
		}
	}
	return -ENOENT;
}

/* Names for values that come back from the daemon: a value this xhca does
 * not know is shown, not hidden. */
static const char *name_of(const struct name_val *t, unsigned int val)
{
	for (; t->name; t++)
		if (t->val == val)
			return t->name;
	return "?";
}

static unsigned int mtu_bytes(unsigned int shift)
{
	return shift >= 8 && shift <= 12 ? 1u << shift : 0;
}

static int ip_is_set(const __u8 ip[16])
{
	static const __u8 zero[16];

	return memcmp(ip, zero, 16) != 0;
}

/* ---- numbers ----------------------------------------------------------- */

/* Decimal or 0x hex; no sign, no octal, no trailing characters. Returns 0,
 * -EINVAL (not a number) or -ERANGE (above max). */
static int parse_num(const char *s, unsigned long long max, unsigned long long *out)
{
	unsigned long long v;
	int base = 10;
	char *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s || !(base == 16 ? !!strchr("0123456789abcdefABCDEF", *s) : (*s >= '0' && *s <= '9')))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* Parses a numeric option; prints the usage error itself. what is the name
 * shown ("QPN", "Q_Key"), bits the width for the range message. */
static int num_arg(const char *op, const char *opt, const char *what, const char *s,
		   unsigned int bits, const char *hint, unsigned long long *out)
{
	unsigned long long max = bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
	int err = parse_num(s, max, out);

	if (err == -EINVAL)
		return usage_err(op, "%s '%s' is not a number; use decimal or 0x hex", opt ? opt : what,
				 s);
	if (err == -ERANGE)
		return usage_err(op, "%s %s is out of range (%u bits); use %s", what, s, bits, hint);
	return 0;
}

/* A QPN that names an existing QP (modify, destroy, show, stats --qp).
 * 0 never exists on RoCE, and would mean "all" on the wire. */
static int qpn_arg(const char *op, const char *opt, const char *s, __u32 *qpn)
{
	unsigned long long v;
	int rc = num_arg(op, opt, "QPN", s, 24, "1..0xfffffe", &v);

	if (rc)
		return rc;
	if (!v)
		return usage_err(op, "QPN 0 is the SMI QP, which RoCE does not have; use 1..0xfffffe "
				 "(list QPs with: xhca -i %s qp show)", ifname ? ifname : "IFNAME");
	*qpn = v;
	return 0;
}

/* ---- JSON -------------------------------------------------------------- */

/* A tiny writer: one object per command, on one line; numbers as numbers. */
#define JW_MAX_DEPTH 8
static int jw_depth;
static int jw_first[JW_MAX_DEPTH + 1] = { 1 };

static void jw_str_raw(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void jw_key(const char *k)
{
	if (!jw_first[jw_depth])
		fputs(", ", stdout);
	jw_first[jw_depth] = 0;
	if (k) {
		jw_str_raw(k);
		fputs(": ", stdout);
	}
}

static void jw_open(const char *k, char c)
{
	jw_key(k);
	putchar(c);
	if (jw_depth < JW_MAX_DEPTH)
		jw_depth++;
	jw_first[jw_depth] = 1;
}

static void jw_close(char c)
{
	putchar(c);
	if (jw_depth)
		jw_depth--;
	if (!jw_depth)
		putchar('\n');
}

static void jw_u64(const char *k, unsigned long long v)
{
	jw_key(k);
	printf("%llu", v);
}

static void jw_bool(const char *k, int v)
{
	jw_key(k);
	fputs(v ? "true" : "false", stdout);
}

static void jw_str(const char *k, const char *s)
{
	jw_key(k);
	if (s)
		jw_str_raw(s);
	else
		fputs("null", stdout);
}

/* ---- tables ------------------------------------------------------------ */

#define TBL_MAX_COLS 32
#define TBL_CELL 96 /* the longest cell: a reason's description */

struct tbl_col {
	const char *hdr;
	int right; /* numbers are right-aligned */
};

/* Fills the cells of one row. */
typedef void (*tbl_row_fn)(const void *ctx, int row, char cell[][TBL_CELL]);

static void cell(char *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cell(char *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c, TBL_CELL, fmt, ap);
	va_end(ap);
}

/* Two passes over the rows, one to size the columns and one to print: a table
 * of 65536 QPs then costs no more memory than one row. */
static void tbl_print(const struct tbl_col *cols, int ncols, int nrows, tbl_row_fn fill,
		      const void *ctx)
{
	char cells[TBL_MAX_COLS][TBL_CELL];
	int w[TBL_MAX_COLS], r, c;

	for (c = 0; c < ncols; c++)
		w[c] = strlen(cols[c].hdr);
	for (r = 0; r < nrows; r++) {
		memset(cells, 0, sizeof(cells));
		fill(ctx, r, cells);
		for (c = 0; c < ncols; c++)
			if ((int)strlen(cells[c]) > w[c])
				w[c] = strlen(cells[c]);
	}
	for (r = -1; r < nrows; r++) {
		memset(cells, 0, sizeof(cells));
		if (r < 0)
			for (c = 0; c < ncols; c++)
				snprintf(cells[c], TBL_CELL, "%s", cols[c].hdr);
		else
			fill(ctx, r, cells);
		for (c = 0; c < ncols; c++) {
			int last = c == ncols - 1;

			if (cols[c].right)
				printf("%*s", w[c], cells[c]);
			else
				printf("%-*s", last ? 0 : w[c], cells[c]);
			fputs(last ? "\n" : "  ", stdout);
		}
	}
}

/* ---- the control socket ------------------------------------------------- */

static int need_ifname(const char *op)
{
	if (!ifname)
		return usage_err(op, "no interface given; use xhca -i IFNAME %s ...", op);
	return 0;
}

/* Sends one request and waits for its reply. Returns an exit code; prints
 * every failure. On success *resp (may be NULL) is malloc'd. */
static int request(const char *op, __u32 code, const void *req, __u32 req_len, void **resp,
		   __u32 *resp_len)
{
	struct timeval tv = { .tv_sec = CTL_TIMEOUT_S };
	char errmsg[XHCA_ERRMSG_LEN];
	int fd, err, rc;

	rc = need_ifname(op);
	if (rc)
		return rc;
	fd = xhca_ctl_connect(ifname);
	if (fd == -EACCES || fd == -EPERM) {
		pr_warn("cannot reach xhcad for %s (%s/%s.sock): %s; run xhca as root, or as the "
			"user that runs xhcad\n", ifname, XHCA_RUN_DIR, ifname, strerror(-fd));
		return EXIT_FAIL;
	}
	if (fd < 0) {
		/* ENOENT (no socket) or ECONNREFUSED (a socket left by a crash) */
		pr_warn("cannot reach xhcad for %s (%s/%s.sock): %s; start it with: xhcad %s\n",
			ifname, XHCA_RUN_DIR, ifname, strerror(-fd), ifname);
		return EXIT_FAIL;
	}
	rc = EXIT_FAIL;
	/* Both directions: a daemon that stopped reading must not hang us. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	pr_debug("%s: request %u (%u bytes) on %s/%s.sock\n", op, code, req_len, XHCA_RUN_DIR,
		 ifname);
	err = xhca_ctl_call(fd, code, req, req_len, resp, resp_len, errmsg, sizeof(errmsg));
	if (!err) {
		rc = EXIT_OK;
		goto out;
	}
	if (errmsg[0]) {
		/* The daemon answered: its message names the operation. */
		print_daemon_err(errmsg);
		goto out;
	}
	switch (err) {
	case -EAGAIN:
		pr_warn("%s: xhcad for %s did not answer within %d s; check that it is alive and "
			"read its log\n", op, ifname, CTL_TIMEOUT_S);
		break;
	case -ECONNRESET:
	case -EPIPE:
		pr_warn("%s: xhcad for %s closed the connection without answering; check whether "
			"it is still running and read its log\n", op, ifname);
		break;
	case -EPROTO:
	case -EBADMSG:
	case -EMSGSIZE:
		pr_warn("%s: malformed reply from xhcad for %s (%s); xhca and xhcad versions may "
			"differ\n", op, ifname, strerror(-err));
		break;
	default:
		pr_warn("%s: talking to xhcad for %s failed: %s; check that it is running\n", op,
			ifname, strerror(-err));
	}
out:
	close(fd);
	return rc;
}

/* A reply shorter than what this xhca knows is a version mismatch, not
 * something to read past the end of. */
static int short_reply(const char *op, __u32 got, size_t want)
{
	pr_warn("%s: reply from xhcad is %u bytes, expected %zu; xhca and xhcad versions differ\n",
		op, got, want);
	return EXIT_FAIL;
}

/* A request without arguments whose reply is an array of esize-byte records. */
static int array_request(const char *op, __u32 code, size_t esize, void **out, __u32 *n)
{
	__u32 len = 0;
	int rc;

	*out = NULL;
	rc = request(op, code, NULL, 0, out, &len);
	if (rc)
		return rc;
	if (len % esize) {
		free(*out);
		*out = NULL;
		return short_reply(op, len, (len / esize + 1) * esize);
	}
	*n = (__u32)(len / esize);
	return 0;
}

/* The records as {"key": [...]} with -j, else as a table. */
static void array_print(const char *key, const void *v, __u32 n, size_t esize,
			void (*jfn)(const void *), const struct tbl_col *cols, int ncols,
			tbl_row_fn row)
{
	if (!json) {
		tbl_print(cols, ncols, (int)n, row, v);
		return;
	}
	jw_open(NULL, '{');
	jw_open(key, '[');
	for (__u32 i = 0; i < n; i++)
		jfn((const char *)v + i * esize);
	jw_close(']');
	jw_close('}');
}

/* ---- options ----------------------------------------------------------- */

enum {
	O_TYPE = 1, O_QPN, O_PKEY, O_QKEY, O_STATE, O_EPSN, O_REMOTE_IP, O_LOCAL_IP, O_MTU,
	O_ACTION, O_DEST_QPN, O_QP, O_RESET, O_FLOWQ, O_WEIGHT, O_LEN, O_ACCESS, O_SCATTER,
	O_CONTIG, O_IOVA, O_OFFSET, O_OUT, O_BLOCK_LB, O_DEV, O_PROXY, O_ACK_EVERY, O_RNR_TIMER,
	O_SQ_PSN, O_TIMEOUT, O_RETRY_CNT, O_RNR_RETRY, O_MAX_RD_ATOMIC,
	/* filter add */
	O_F_OP, O_F_BELOW, O_F_ABOVE, O_F_SINGLE, O_F_RKEY, O_F_VA, O_F_SQPN, O_F_MATCH, O_F_INVERT,
	O_F_HANDLER,
	/* cq, and qp create --cq */
	O_CQ, O_RQ_DEPTH, O_BUF_SIZE, O_DEPTH, O_MAX, O_DUMP,
};

/* --proxy on|off: the flag in flags, the answer in *on. */
static int proxy_arg(const char *op, const char *arg, __u8 *flags)
{
	if (!strcmp(arg, "on"))
		*flags |= XHCA_QPF_PROXY;
	else if (!strcmp(arg, "off"))
		*flags &= (__u8)~XHCA_QPF_PROXY;
	else
		return usage_err(op, "--proxy '%s': use on or off", arg);
	return 0;
}

struct opt_def {
	const char *name; /* long name, without "--" */
	int has_arg;
	int id;
};

/* Walks argv (the words after the command): global options may appear here
 * too (lib.sh runs "xhca stats -j"); the command's options are reported by id
 * to on_opt; other words are positional. Returns 0 or an exit code. */
static int parse_args(const char *op, int argc, char **argv, const struct opt_def *defs,
		      int (*on_opt)(void *ctx, int id, const char *name, const char *arg),
		      void *ctx, char **pos, int max_pos, int *npos)
{
	int i, only_pos = 0;

	*npos = 0;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *val = NULL, *eq;
		const struct opt_def *d;
		char name[64];
		int rc;

		if (only_pos || a[0] != '-' || !a[1]) {
			if (*npos >= max_pos)
				return usage_err(op, "unexpected argument '%s'; see xhca %s --help", a,
						 op);
			pos[(*npos)++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			json = 1;
			continue;
		}
		if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose++;
			xhca_log_init("xhca", verbose);
			continue;
		}
		if (a[1] != '-')
			return usage_err(op, "unknown option '%s'; see xhca %s --help", a, op);
		eq = strchr(a, '=');
		snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - a - 2) : (int)strlen(a + 2),
			 a + 2);
		for (d = defs; d && d->name; d++)
			if (!strcmp(d->name, name))
				break;
		if (!d || !d->name)
			return usage_err(op, "unknown option '%s'; see xhca %s --help", a, op);
		if (d->has_arg) {
			if (eq)
				val = eq + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else
				return usage_err(op, "--%s needs a value; see xhca %s --help", name, op);
			if (!*val)
				return usage_err(op, "--%s needs a value, got an empty one; see xhca %s "
						 "--help", name, op);
		} else if (eq) {
			return usage_err(op, "--%s takes no value; see xhca %s --help", name, op);
		}
		rc = on_opt(ctx, d->id, name, val);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- status ------------------------------------------------------------ */

static int no_opts(void *ctx, int id, const char *name, const char *arg)
{
	return 0;
}

/* Copies a fixed-size string field that the daemon should have terminated. */
static void field_str(char *dst, size_t dlen, const char *src, size_t slen)
{
	snprintf(dst, dlen, "%.*s", (int)strnlen(src, slen), src);
}

static int do_status(int argc, char **argv)
{
	const char *op = "status";
	char ifn[FIELD_SIZE(struct xhca_status, ifname) + 1];
	char pin[FIELD_SIZE(struct xhca_status, pin_dir) + 1];
	char mode[FIELD_SIZE(struct xhca_status, mode) + 1];
	char by[FIELD_SIZE(struct xhca_status, attached_by) + 1];
	char sch[FIELD_SIZE(struct xhca_status, sched) + 1];
	char xm[FIELD_SIZE(struct xhca_status, xsk_mode) + 1];
	struct xhca_status *s = NULL;
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(op, argc, argv, NULL, no_opts, NULL, NULL, 0, &npos);
	if (rc)
		return rc;
	rc = request(op, XHCA_CTL_STATUS, NULL, 0, (void **)&s, &len);
	if (rc)
		goto out;
	if (len < sizeof(*s)) {
		rc = short_reply(op, len, sizeof(*s));
		goto out;
	}
	field_str(ifn, sizeof(ifn), s->ifname, sizeof(s->ifname));
	field_str(pin, sizeof(pin), s->pin_dir, sizeof(s->pin_dir));
	field_str(mode, sizeof(mode), s->mode, sizeof(s->mode));
	field_str(by, sizeof(by), s->attached_by, sizeof(s->attached_by));
	field_str(sch, sizeof(sch), s->sched, sizeof(s->sched));
	field_str(xm, sizeof(xm), s->xsk_mode, sizeof(s->xsk_mode));
	if (s->abi_version != XHCA_ABI_VERSION)
		pr_warn("warning: xhcad uses map ABI %u, this xhca was built for %u; update one of "
			"them\n", s->abi_version, XHCA_ABI_VERSION);
	if (json) {
		jw_open(NULL, '{');
		jw_str("ifname", ifn);
		jw_str("pin_dir", pin);
		jw_str("mode", mode);
		jw_str("attached_by", by);
		jw_u64("ifindex", s->ifindex);
		jw_u64("prog_id", s->prog_id);
		jw_u64("max_qps", s->max_qps);
		jw_u64("qps_in_use", s->qps_in_use);
		jw_u64("abi_version", s->abi_version);
		jw_u64("pid", s->pid);
		jw_u64("uptime_ms", s->uptime_ms);
		jw_u64("next_qpn", s->next_qpn);
		jw_u64("keep", s->keep);
		jw_u64("repaired", s->repaired);
		jw_u64("sessions", s->sessions);
		jw_u64("flowqs", s->nflowq);
		jw_u64("rx_queues", s->nrxq);
		jw_str("sched", sch);
		jw_str("xsk_mode", xm);
		jw_u64("bus_rate", s->bus_rate);
		jw_u64("hostmem_bytes", s->hostmem_bytes);
		jw_u64("hostmem_used", s->hostmem_used);
		jw_u64("max_mrs", s->max_mrs);
		jw_u64("mrs_in_use", s->mrs_in_use);
		jw_bool("fragment", s->fragment);
		jw_bool("canary", s->canary);
		jw_u64("canary_violations", s->canary_violations);
		jw_u64("barriers", s->barriers);
		jw_u64("naks", s->naks);
		jw_u64("tx_frames", s->tx_frames);
		jw_u64("tx_full", s->tx_full);
		jw_open("responder", '{');
		jw_u64("acks", s->resp.acks);
		jw_u64("seq_naks", s->resp.seq_naks);
		jw_u64("rnr_naks", s->resp.rnr_naks);
		jw_u64("dups", s->resp.dups);
		jw_u64("replays", s->resp.replays);
		jw_u64("dup_unknown", s->resp.dup_unknown);
		jw_u64("rewinds", s->resp.rewinds);
		jw_u64("bad_icrc", s->resp.bad_icrc);
		jw_close('}');
		jw_open("requester", '{');
		jw_u64("wqes", s->req.wqes);
		jw_u64("packets", s->req.packets);
		jw_u64("bytes", s->req.bytes);
		jw_u64("completions", s->req.completions);
		jw_u64("retransmits", s->req.retransmits);
		jw_u64("timeouts", s->req.timeouts);
		jw_u64("seq_naks", s->req.seq_naks);
		jw_u64("rnr_naks", s->req.rnr_naks);
		jw_u64("errors", s->req.errors);
		jw_u64("stale", s->req.stale);
		jw_u64("no_neigh", s->req.no_neigh);
		jw_close('}');
		jw_open("mcast", '{');
		jw_u64("groups", s->mcast_groups);
		jw_u64("threshold", s->mcast_threshold);
		jw_u64("credits", s->mcast_credits);
		jw_u64("waiting", s->mcast_waiting);
		jw_u64("max_refs", s->mcast_max_refs);
		jw_u64("credit_stalls", s->mcast_credit_stalls);
		jw_u64("replicated", s->mcast_replicated);
		jw_u64("stale", s->mcast_stale);
		jw_close('}');
		jw_open("umem", '{');
		jw_u64("frames", s->umem_frames);
		jw_u64("free", s->frames_free);
		jw_u64("fill", s->frames_fill);
		jw_u64("kernel", s->frames_kernel);
		jw_u64("rx", s->frames_rx);
		jw_u64("held", s->frames_held);
		jw_u64("jumbo_slots", s->jumbo_slots);
		jw_u64("jumbo_free", s->jumbo_free);
		jw_u64("jumbo_frames", s->jumbo_frames);
		jw_u64("jumbo_drops", s->jumbo_drops);
		jw_close('}');
		jw_close('}');
		goto out;
	}
	printf("ifname:       %s\n", ifn);
	printf("ifindex:      %u\n", s->ifindex);
	printf("prog_id:      %u\n", s->prog_id);
	printf("mode:         %s\n", mode);
	printf("attached_by:  %s\n", by);
	printf("pin_dir:      %s\n", pin);
	printf("socket:       %s/%s.sock\n", XHCA_RUN_DIR, ifname);
	printf("pid:          %u\n", s->pid);
	printf("uptime:       %llu.%03llu s\n", (unsigned long long)s->uptime_ms / 1000,
	       (unsigned long long)s->uptime_ms % 1000);
	printf("qps_in_use:   %u\n", s->qps_in_use);
	printf("max_qps:      %u\n", s->max_qps);
	printf("next_qpn:     0x%06x\n", s->next_qpn);
	printf("abi_version:  %u\n", s->abi_version);
	printf("keep:         %s\n", s->keep ? "yes (program stays attached on exit)" : "no");
	printf("repaired:     %u\n", s->repaired);
	printf("sessions:     %u\n", s->sessions);
	printf("flowqs:       %u on %u RX queues, AF_XDP %s mode, scheduler %s\n", s->nflowq,
	       s->nrxq, xm, sch);
	if (s->bus_rate)
		printf("bus_rate:     %llu bytes/s\n", (unsigned long long)s->bus_rate);
	else
		printf("bus_rate:     unlimited\n");
	printf("hostmem:      %llu of %llu bytes in use\n", (unsigned long long)s->hostmem_used,
	       (unsigned long long)s->hostmem_bytes);
	printf("mrs:          %u of %u in use%s; %llu invalidation barriers\n", s->mrs_in_use,
	       s->max_mrs, s->fragment ? ", --fragment (none pre-translated)" : "",
	       (unsigned long long)s->barriers);
	if (s->canary)
		printf("canary:       on, %llu violations\n",
		       (unsigned long long)s->canary_violations);
	/* every frame xhcad sent: requests, responses, ACKs and NAKs */
	printf("transmit:     %llu frames sent (requests, responses, ACKs, NAKs), %llu not sent "
	       "(TX ring full); %llu of them NAKs\n",
	       (unsigned long long)s->tx_frames, (unsigned long long)s->tx_full,
	       (unsigned long long)s->naks);
	printf("responder:    %llu ACKs, %llu sequence NAKs, %llu RNR NAKs, %llu duplicates "
	       "answered (%llu responses sent again, %llu unknown), %llu rewinds, %llu bad ICRC\n",
	       (unsigned long long)s->resp.acks, (unsigned long long)s->resp.seq_naks,
	       (unsigned long long)s->resp.rnr_naks, (unsigned long long)s->resp.dups,
	       (unsigned long long)s->resp.replays, (unsigned long long)s->resp.dup_unknown,
	       (unsigned long long)s->resp.rewinds, (unsigned long long)s->resp.bad_icrc);
	printf("requester:    %llu send requests, %llu packets (%llu payload bytes, %llu sent "
	       "again), %llu completions;\n              %llu timeouts, %llu sequence NAKs and "
	       "%llu RNR NAKs received, %llu errors, %llu stale responses, %llu waits for a "
	       "neighbour\n",
	       (unsigned long long)s->req.wqes, (unsigned long long)s->req.packets,
	       (unsigned long long)s->req.bytes, (unsigned long long)s->req.retransmits,
	       (unsigned long long)s->req.completions, (unsigned long long)s->req.timeouts,
	       (unsigned long long)s->req.seq_naks, (unsigned long long)s->req.rnr_naks,
	       (unsigned long long)s->req.errors, (unsigned long long)s->req.stale,
	       (unsigned long long)s->req.no_neigh);
	printf("mcast:        %u groups, %u packets waiting for replication (threshold %u%s),\n"
	       "              %llu replicated, largest reference count %llu, %llu credit stalls "
	       "(%u credits a flow queue)\n", s->mcast_groups, s->mcast_waiting,
	       s->mcast_threshold, s->mcast_threshold ? "" : ": none",
	       (unsigned long long)s->mcast_replicated, (unsigned long long)s->mcast_max_refs,
	       (unsigned long long)s->mcast_credit_stalls, s->mcast_credits);
	printf("umem frames:  %u = %u free + %u fill + %u kernel + %u rx + %u held\n",
	       s->umem_frames, s->frames_free, s->frames_fill, s->frames_kernel, s->frames_rx,
	       s->frames_held);
	printf("jumbo slots:  %u (%u free): %llu frames made one, %llu dropped (no slot free, "
	       "or over one)\n", s->jumbo_slots, s->jumbo_free, (unsigned long long)s->jumbo_frames,
	       (unsigned long long)s->jumbo_drops);
out:
	free(s);
	return rc;
}

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

static int do_qp_create(int argc, char **argv)
{
	static const struct opt_def defs[] = {
		{ "type", 1, O_TYPE }, { "qpn", 1, O_QPN }, { "pkey", 1, O_PKEY },
		{ "qkey", 1, O_QKEY }, { "flowq", 1, O_FLOWQ },
		{ "block-self-mcast-loopback", 0, O_BLOCK_LB }, { "proxy", 1, O_PROXY },
		{ "cq", 1, O_CQ }, { "rq-depth", 1, O_RQ_DEPTH }, { "buf-size", 1, O_BUF_SIZE },
		{ NULL, 0, 0 },
	};
	struct create_args c = { .op = "qp create" };
	struct xhca_qp_attr *r = NULL;
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(c.op, argc, argv, defs, create_opt, &c, NULL, 0, &npos);
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

static int modify_opt(void *ctx, int id, const char *name, const char *arg)
{
	struct modify_args *m = ctx;
	struct xhca_qp_attr *a = &m->a;
	const char *op = m->op;
	unsigned long long v;
	unsigned int t;
	__u32 bit = 0;
	int rc = 0;

	switch (id) {
	case O_STATE: bit = XHCA_QPA_STATE; break;
	case O_EPSN: bit = XHCA_QPA_EPSN; break;
	case O_REMOTE_IP: bit = XHCA_QPA_REMOTE_IP; break;
	case O_LOCAL_IP: bit = XHCA_QPA_LOCAL_IP; break;
	case O_MTU: bit = XHCA_QPA_MTU; break;
	case O_ACTION: bit = XHCA_QPA_ACTION; break;
	case O_QKEY: bit = XHCA_QPA_QKEY; break;
	case O_PKEY: bit = XHCA_QPA_PKEY; break;
	case O_DEST_QPN: bit = XHCA_QPA_DEST_QPN; break;
	case O_PROXY: bit = XHCA_QPA_PROXY; break;
	case O_ACK_EVERY: bit = XHCA_QPA_ACK_EVERY; break;
	case O_RNR_TIMER: bit = XHCA_QPA_RNR_TIMER; break;
	case O_SQ_PSN: bit = XHCA_QPA_SQ_PSN; break;
	case O_TIMEOUT: bit = XHCA_QPA_TIMEOUT; break;
	case O_RETRY_CNT: bit = XHCA_QPA_RETRY_CNT; break;
	case O_RNR_RETRY: bit = XHCA_QPA_RNR_RETRY; break;
	case O_MAX_RD_ATOMIC: bit = XHCA_QPA_MAX_RD_ATOMIC; break;
	}
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

static int do_qp_modify(int argc, char **argv)
{
	static const struct opt_def defs[] = {
		{ "state", 1, O_STATE },	 { "epsn", 1, O_EPSN },	    { "remote-ip", 1, O_REMOTE_IP },
		{ "local-ip", 1, O_LOCAL_IP }, { "mtu", 1, O_MTU },	    { "action", 1, O_ACTION },
		{ "qkey", 1, O_QKEY },	 { "pkey", 1, O_PKEY },	    { "dest-qpn", 1, O_DEST_QPN },
		{ "proxy", 1, O_PROXY }, { "ack-every", 1, O_ACK_EVERY },
		{ "rnr-timer", 1, O_RNR_TIMER }, { "sq-psn", 1, O_SQ_PSN }, { "timeout", 1, O_TIMEOUT },
		{ "retry-cnt", 1, O_RETRY_CNT }, { "rnr-retry", 1, O_RNR_RETRY },
		{ "max-rd-atomic", 1, O_MAX_RD_ATOMIC }, { NULL, 0, 0 },
	};
	struct modify_args m = { .op = "qp modify" };
	struct xhca_qp_attr *r = NULL;
	char *pos[1], lb[64], rb[64];
	const char *l, *rm;
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(m.op, argc, argv, defs, modify_opt, &m, pos, 1, &npos);
	if (rc)
		return rc;
	if (!npos)
		return usage_err(m.op, "missing QPN; use xhca -i IFNAME qp modify QPN [options]");
	rc = qpn_arg(m.op, NULL, pos[0], &m.a.qpn);
	if (rc)
		return rc;
	if (!m.a.mask)
		return usage_err(m.op, "nothing to change; give at least one of --state, --epsn, "
				 "--local-ip, --remote-ip, --mtu, --action, --qkey, --pkey, --dest-qpn, "
				 "--proxy, --ack-every, --rnr-timer, --sq-psn, --timeout, --retry-cnt, "
				 "--rnr-retry, --max-rd-atomic");
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

static int do_qp_destroy(int argc, char **argv)
{
	const char *op = "qp destroy";
	char *pos[1];
	__u32 qpn;
	int rc, npos;

	rc = parse_args(op, argc, argv, NULL, no_opts, NULL, pos, 1, &npos);
	if (rc)
		return rc;
	if (!npos)
		return usage_err(op, "missing QPN; use xhca -i IFNAME qp destroy QPN");
	rc = qpn_arg(op, NULL, pos[0], &qpn);
	if (rc)
		return rc;
	rc = request(op, XHCA_CTL_QP_DESTROY, &qpn, sizeof(qpn), NULL, NULL);
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

static int do_qp_show(int argc, char **argv)
{
	const char *op = "qp show";
	struct xhca_qp_info *qi = NULL;
	__u32 qpn = 0, len = 0, n;
	char *pos[1];
	int rc, npos;

	rc = parse_args(op, argc, argv, NULL, no_opts, NULL, pos, 1, &npos);
	if (rc)
		return rc;
	if (npos) {
		rc = qpn_arg(op, NULL, pos[0], &qpn);
		if (rc)
			return rc;
	}
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

static int do_stats(int argc, char **argv)
{
	static const struct opt_def defs[] = {
		{ "qp", 1, O_QP }, { "reset", 0, O_RESET }, { NULL, 0, 0 },
	};
	static const struct tbl_col cols[] = {
		{ "REASON", 0 }, { "PACKETS", 1 }, { "BYTES", 1 }, { "DESCRIPTION", 0 },
	};
	static const struct tbl_col hcols[] = {
		{ "HOST", 0 }, { "FRAMES", 1 }, { "BYTES", 1 }, { "DESCRIPTION", 0 },
	};
	struct stats_args s = { .op = "stats" };
	struct xhca_stats_reply *r = NULL;
	unsigned long long tp = 0, tb = 0;
	char name[32];
	__u32 len = 0, i;
	int rc, npos;

	rc = parse_args(s.op, argc, argv, defs, stats_opt, &s, NULL, 0, &npos);
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
		jw_open(NULL, '{');
		jw_open("reasons", '{');
		for (i = 0; i < XHCA_R_MAX; i++) {
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
		for (i = 0; i < XHCA_H_MAX; i++) {
			jw_open(host_names[i], '{');
			jw_u64("frames", r->host[i].packets);
			jw_u64("bytes", r->host[i].bytes);
			jw_close('}');
		}
		jw_close('}');
		if (s.rq.flags & XHCA_STATS_F_QP) {
			jw_open("qp", '{');
			jw_u64("qpn", s.rq.qpn);
			jw_u64("accepted", r->qp.accepted);
			jw_u64("accepted_bytes", r->qp.accepted_bytes);
			jw_u64("dropped", r->qp.dropped);
			jw_u64("dropped_bytes", r->qp.dropped_bytes);
			jw_close('}');
		}
		if (s.rq.flags & XHCA_STATS_F_RESET)
			jw_bool("reset", 1);
		jw_close('}');
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

static int do_flowq_show(int argc, char **argv)
{
	const char *op = "flowq show";
	struct xhca_flowq_info *fi = NULL;
	__u32 n = 0;
	int rc, npos;

	rc = parse_args(op, argc, argv, NULL, no_opts, NULL, NULL, 0, &npos);
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

static int do_flowq_set(int argc, char **argv)
{
	static const struct opt_def defs[] = { { "weight", 1, O_WEIGHT }, { NULL, 0, 0 } };
	struct flowq_args f = { .op = "flowq set" };
	struct xhca_flowq_info *fi = NULL;
	unsigned long long v;
	char *pos[1];
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(f.op, argc, argv, defs, flowq_opt, &f, pos, 1, &npos);
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

/* ---- mr ----------------------------------------------------------------- */

static const struct name_val access_names[] = {
	{ "local-write", XHCA_ACCESS_LOCAL_WRITE },
	{ "remote-write", XHCA_ACCESS_REMOTE_WRITE },
	{ "remote-read", XHCA_ACCESS_REMOTE_READ },
	{ "remote-atomic", XHCA_ACCESS_REMOTE_ATOMIC },
	{ NULL, 0 },
};

/* "local-write,remote-write" or a number (passed on as it is: xhcad
 * checks it). */
static int access_arg(const char *op, const char *arg, __u32 *out)
{
	unsigned long long v;
	char buf[256], *tok, *save = NULL;

	if (arg[0] >= '0' && arg[0] <= '9') {
		int rc = num_arg(op, "--access", "access", arg, 32, "a list of flags", &v);

		if (!rc)
			*out = (__u32)v;
		return rc;
	}
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return usage_err(op, "--access is too long");
	*out = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned int f;

		if (name_lookup(access_names, tok, &f))
			return usage_err(op, "unknown access flag '%s'; use local-write, "
					 "remote-write, remote-read, remote-atomic (comma-separated)",
					 tok);
		*out |= f;
	}
	return 0;
}

static void access_str(__u32 a, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (const struct name_val *f = access_names; f->name; f++)
		if (a & f->val)
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "," : "",
					      f->name);
	if (!n)
		snprintf(buf, len, "none");
}

static void mr_json(const struct xhca_mr_attr *a, const __u32 *owner, const __u32 *gen)
{
	char acc[96];

	access_str(a->access, acc, sizeof(acc));
	jw_open(NULL, '{');
	jw_u64("rkey", a->rkey);
	jw_u64("index", a->rkey >> 8);
	jw_u64("key", a->rkey & 0xff);
	jw_u64("pd", a->pd);
	jw_bool("block_self_mcast_loopback", !!(a->flags & XHCA_QPF_BLOCK_MC_LOOPBACK));
	jw_u64("iova", a->iova);
	jw_u64("length", a->len);
	jw_str("access", acc);
	jw_u64("access_flags", a->access);
	jw_bool("pretranslated", !!(a->flags & XHCA_MRF_PRETRANSLATED));
	jw_u64("pages", a->npages);
	jw_u64("alloc", a->alloc);
	jw_u64("offset", a->off);
	if (owner)
		jw_u64("owner", *owner);
	if (gen)
		jw_u64("gen", *gen);
	jw_close('}');
}

struct mr_args {
	const char *op;
	struct xhca_mr_attr a;
	struct xhca_mr_io io;
	const char *out;
	int have_len, have_access;
};

static int mr_opt(void *ctx, int id, const char *name, const char *arg)
{
	struct mr_args *m = ctx;
	unsigned long long v;
	int rc = 0;

	switch (id) {
	case O_LEN:
		rc = num_arg(m->op, "--len", "length", arg, 32, "1..4294967295 bytes", &v);
		m->a.len = v;
		m->io.len = (__u32)v;
		m->have_len = 1;
		break;
	case O_ACCESS:
		rc = access_arg(m->op, arg, &m->a.access);
		m->have_access = 1;
		break;
	case O_SCATTER:
		m->a.flags |= XHCA_ALLOC_SCATTER;
		break;
	case O_CONTIG:
		m->a.flags |= XHCA_ALLOC_CONTIG;
		break;
	case O_IOVA:
		rc = num_arg(m->op, "--iova", "iova", arg, 64, "a 64-bit address", &v);
		m->a.iova = v;
		break;
	case O_OFFSET:
		rc = num_arg(m->op, "--offset", "offset", arg, 64, "a byte offset", &v);
		m->io.off = v;
		break;
	case O_OUT:
		m->out = arg;
		break;
	}
	return rc;
}

static int do_mr_reg(int argc, char **argv)
{
	static const struct opt_def defs[] = {
		{ "len", 1, O_LEN }, { "access", 1, O_ACCESS }, { "scatter", 0, O_SCATTER },
		{ "contig", 0, O_CONTIG }, { "iova", 1, O_IOVA }, { NULL, 0, 0 },
	};
	struct mr_args m = { .op = "mr reg" };
	struct xhca_mr_attr *r = NULL;
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(m.op, argc, argv, defs, mr_opt, &m, NULL, 0, &npos);
	if (rc)
		return rc;
	if (!m.have_len)
		return usage_err(m.op, "--len is required; use xhca -i IFNAME mr reg --len BYTES");
	if ((m.a.flags & XHCA_ALLOC_SCATTER) && (m.a.flags & XHCA_ALLOC_CONTIG))
		return usage_err(m.op, "--scatter and --contig exclude each other; give one");
	if (!m.have_access)
		m.a.access = XHCA_ACCESS_LOCAL_WRITE | XHCA_ACCESS_REMOTE_WRITE |
			     XHCA_ACCESS_REMOTE_READ;
	rc = request(m.op, XHCA_CTL_MR_REG, &m.a, sizeof(m.a), (void **)&r, &len);
	if (rc)
		goto out;
	if (len < sizeof(*r)) {
		rc = short_reply(m.op, len, sizeof(*r));
		goto out;
	}
	if (json) {
		mr_json(r, NULL, NULL);
	} else {
		char acc[96];

		access_str(r->access, acc, sizeof(acc));
		printf("registered mr 0x%08x: %llu bytes at iova 0x%llx, %s, %s (%u pages)\n",
		       r->rkey, (unsigned long long)r->len, (unsigned long long)r->iova, acc,
		       (r->flags & XHCA_MRF_PRETRANSLATED) ? "pre-translated" : "fragmented",
		       r->npages);
	}
out:
	free(r);
	return rc;
}

static int rkey_arg(const char *op, const char *s, __u32 *rkey)
{
	unsigned long long v;
	int rc = num_arg(op, NULL, "R_Key", s, 32, "the R_Key xhca mr show lists", &v);

	if (!rc)
		*rkey = (__u32)v;
	return rc;
}

static int do_mr_dereg(int argc, char **argv)
{
	const char *op = "mr dereg";
	char *pos[1];
	__u32 rkey;
	int rc, npos;

	rc = parse_args(op, argc, argv, NULL, no_opts, NULL, pos, 1, &npos);
	if (rc)
		return rc;
	if (!npos)
		return usage_err(op, "missing R_Key; use xhca -i IFNAME mr dereg RKEY");
	rc = rkey_arg(op, pos[0], &rkey);
	if (rc)
		return rc;
	rc = request(op, XHCA_CTL_MR_DEREG, &rkey, sizeof(rkey), NULL, NULL);
	if (rc)
		return rc;
	if (json) {
		jw_open(NULL, '{');
		jw_u64("rkey", rkey);
		jw_bool("deregistered", 1);
		jw_close('}');
	} else {
		printf("deregistered mr 0x%08x\n", rkey);
	}
	return EXIT_OK;
}

static const struct tbl_col mr_cols[] = {
	{ "RKEY", 0 }, { "PD", 1 },    { "OWNER", 1 }, { "IOVA", 0 },	  { "LENGTH", 1 },
	{ "PAGES", 1 }, { "TRANSLATION", 0 }, { "ACCESS", 0 },
	/* -v */
	{ "GEN", 1 },  { "ALLOC", 1 }, { "OFFSET", 1 },
};

static void mr_row(const void *ctx, int row, char c[][TBL_CELL])
{
	const struct xhca_mr_info *mi = (const struct xhca_mr_info *)ctx + row;
	const struct xhca_mr_attr *a = &mi->attr;
	char acc[96];

	access_str(a->access, acc, sizeof(acc));
	cell(c[0], "0x%08x", a->rkey);
	cell(c[1], "%u", a->pd);
	cell(c[2], "%u", mi->owner);
	cell(c[3], "0x%llx", (unsigned long long)a->iova);
	cell(c[4], "%llu", (unsigned long long)a->len);
	cell(c[5], "%u", a->npages);
	cell(c[6], "%s", (a->flags & XHCA_MRF_PRETRANSLATED) ? "pre-translated" : "fragmented");
	cell(c[7], "%s", acc);
	cell(c[8], "%u", mi->gen);
	cell(c[9], "0x%x", a->alloc);
	cell(c[10], "%llu", (unsigned long long)a->off);
}

static void mr_info_json(const void *p)
{
	const struct xhca_mr_info *mi = p;

	mr_json(&mi->attr, &mi->owner, &mi->gen);
}

static int do_mr_show(int argc, char **argv)
{
	const char *op = "mr show";
	struct xhca_mr_info *mi = NULL;
	__u32 n = 0;
	int rc, npos;

	rc = parse_args(op, argc, argv, NULL, no_opts, NULL, NULL, 0, &npos);
	if (!rc)
		rc = array_request(op, XHCA_CTL_MR_SHOW, sizeof(*mi), (void **)&mi, &n);
	if (!rc)
		array_print("mrs", mi, n, sizeof(*mi), mr_info_json, mr_cols, verbose ? 11 : 8,
			    mr_row);
	free(mi);
	return rc;
}

static int do_mr_read(int argc, char **argv)
{
	static const struct opt_def defs[] = {
		{ "offset", 1, O_OFFSET }, { "len", 1, O_LEN }, { "out", 1, O_OUT },
		{ NULL, 0, 0 },
	};
	struct mr_args m = { .op = "mr read" };
	__u8 *b = NULL;
	char *pos[1];
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(m.op, argc, argv, defs, mr_opt, &m, pos, 1, &npos);
	if (rc)
		return rc;
	if (!npos)
		return usage_err(m.op, "missing R_Key; use xhca -i IFNAME mr read RKEY --len N");
	rc = rkey_arg(m.op, pos[0], &m.io.rkey);
	if (rc)
		return rc;
	if (!m.have_len)
		return usage_err(m.op, "--len is required (at most %u bytes)", XHCA_MR_READ_MAX);
	if (m.io.len > XHCA_MR_READ_MAX)
		return usage_err(m.op, "--len %u is more than %u bytes; read in pieces", m.io.len,
				 XHCA_MR_READ_MAX);
	rc = request(m.op, XHCA_CTL_MR_READ, &m.io, sizeof(m.io), (void **)&b, &len);
	if (rc)
		goto out;
	if (len != m.io.len) {
		rc = short_reply(m.op, len, m.io.len);
		goto out;
	}
	if (m.out) {
		FILE *f = strcmp(m.out, "-") ? fopen(m.out, "wb") : stdout;

		if (!f || fwrite(b, 1, len, f) != len || (f != stdout && fclose(f))) {
			pr_warn("%s: cannot write %s: %s\n", m.op, m.out, strerror(errno));
			rc = EXIT_FAIL;
		}
		goto out;
	}
	/* as xxd does: offset, 16 bytes in hex */
	for (__u32 i = 0; i < len; i += 16) {
		printf("%08llx:", (unsigned long long)(m.io.off + i));
		for (__u32 k = i; k < i + 16 && k < len; k++)
			printf("%s%02x", (k - i) % 2 ? "" : " ", b[k]);
		putchar('\n');
	}
out:
	free(b);
	return rc;
}

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

static int do_mcast_show(int argc, char **argv)
{
	const char *op = "mcast show";
	struct xhca_mcast_info *mi = NULL;
	__u32 n = 0;
	int rc, npos;

	rc = parse_args(op, argc, argv, NULL, no_opts, NULL, NULL, 0, &npos);
	if (!rc)
		rc = array_request(op, XHCA_CTL_MCAST_SHOW, sizeof(*mi), (void **)&mi, &n);
	if (!rc)
		array_print("groups", mi, n, sizeof(*mi), mcast_json, mcast_cols, verbose ? 12 : 7,
			    mcast_row);
	free(mi);
	return rc;
}

/* create, destroy, attach, detach: MGID [QPN] [--dev IF] [--pkey P] */
static int mcast_cmd(const char *op, __u32 code, int argc, char **argv)
{
	static const struct opt_def create_defs[] = { { "pkey", 1, O_PKEY }, { NULL, 0, 0 } };
	static const struct opt_def member_defs[] = { { "dev", 1, O_DEV }, { NULL, 0, 0 } };
	int member = code == XHCA_CTL_MCAST_ATTACH || code == XHCA_CTL_MCAST_DETACH;
	struct mcast_args m = { .op = op };
	struct xhca_mcast_info *mi = NULL;
	char *pos[2];
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(op, argc, argv,
			code == XHCA_CTL_MCAST_CREATE ? create_defs : member ? member_defs : NULL,
			mcast_opt, &m, pos, member ? 2 : 1, &npos);
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

static int do_mcast_create(int argc, char **argv)
{
	return mcast_cmd("mcast create", XHCA_CTL_MCAST_CREATE, argc, argv);
}

static int do_mcast_destroy(int argc, char **argv)
{
	return mcast_cmd("mcast destroy", XHCA_CTL_MCAST_DESTROY, argc, argv);
}

static int do_mcast_attach(int argc, char **argv)
{
	return mcast_cmd("mcast attach", XHCA_CTL_MCAST_ATTACH, argc, argv);
}

static int do_mcast_detach(int argc, char **argv)
{
	return mcast_cmd("mcast detach", XHCA_CTL_MCAST_DETACH, argc, argv);
}

/* ---- commands ----------------------------------------------------------- */

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);	/* leaf */
	const struct cmd *sub;			/* group */
	const char *usage;
};



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

static int do_cq_create(int argc, char **argv)
{
	static const struct opt_def defs[] = {
		{ "depth", 1, O_DEPTH }, { "proxy", 0, O_PROXY }, { NULL, 0, 0 },
	};
	struct cq_args ca = { .op = "cq create", .a = { .depth = 256 } };
	struct xhca_cq_attr *r = NULL;
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(ca.op, argc, argv, defs, cq_opt, &ca, NULL, 0, &npos);
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

static int cq_id_arg(const char *op, int argc, char **argv, const struct opt_def *defs,
		     struct cq_args *ca, __u32 *id)
{
	unsigned long long v;
	char *pos[1];
	int rc, npos;

	rc = parse_args(op, argc, argv, defs, cq_opt, ca, pos, 1, &npos);
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

static int do_cq_destroy(int argc, char **argv)
{
	struct cq_args ca = { .op = "cq destroy" };
	__u32 id;
	int rc = cq_id_arg(ca.op, argc, argv, NULL, &ca, &id);

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

static int do_cq_poll(int argc, char **argv)
{
	static const struct opt_def defs[] = {
		{ "max", 1, O_MAX }, { "dump", 1, O_DUMP }, { NULL, 0, 0 },
	};
	struct cq_args ca = { .op = "cq poll" };
	struct xhca_cq_entry *v = NULL;
	__u32 len = 0, n;
	int rc = cq_id_arg(ca.op, argc, argv, defs, &ca, &ca.p.cq);

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
	jw_close('}');
}

static int do_cq_show(int argc, char **argv)
{
	const char *op = "cq show";
	struct xhca_cq_info *v = NULL;
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(op, argc, argv, NULL, no_opts, NULL, NULL, 0, &npos);
	if (rc)
		return rc;
	rc = request(op, XHCA_CTL_CQ_SHOW, NULL, 0, (void **)&v, &len);
	if (!rc)
		array_print("cqs", v, (__u32)(len / sizeof(*v)), sizeof(*v), cq_json, cq_cols, 7,
			    cq_row);
	free(v);
	return rc;
}

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

static int filter_opt(void *ctx, int id, const char *name, const char *arg)
{
	struct filter_args *fa = ctx;
	struct xhca_pfilter *f = &fa->r.f;
	const char *op = fa->op;
	unsigned long long v, hi;
	unsigned int t;
	char buf[128], *tok, *save, *dash;
	int rc = 0, n;

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
			return usage_err(op, "--va %s: the range is empty; START must be below END",
					 arg);
		f->va_lo = v;
		f->va_hi = hi;
		f->flags |= XHCA_PF_VA;
		break;
	case O_F_SQPN:
		rc = num_arg(op, "--src-qpn", "source QPN", arg, 24, "0..0xffffff", &v);
		f->sqpn = (__u32)v;
		f->flags |= XHCA_PF_SQPN;
		break;
	case O_F_MATCH:
		/* VALUE[/MASK], hex; or text:STRING */
		if (!strncmp(arg, "text:", 5)) {
			n = (int)strlen(arg + 5);
			if (n < 1 || n > XHCA_PFILT_MATCH_MAX)
				return usage_err(op, "--match text: give 1 to %d characters",
						 XHCA_PFILT_MATCH_MAX);
			memcpy(f->value, arg + 5, (size_t)n);
		} else {
			char *slash;

			snprintf(buf, sizeof(buf), "%s", arg);
			slash = strchr(buf, '/');
			if (slash)
				*slash = 0;
			n = hex_bytes(buf, f->value, XHCA_PFILT_MATCH_MAX);
			if (n < 0)
				return usage_err(op, "--match '%s': give 1 to %d bytes in hex (e.g. "
						 "4c4f434b, or 4c4f434b/000000ff to ignore bits set in "
						 "the mask), or text:STRING", arg, XHCA_PFILT_MATCH_MAX);
			if (slash) {
				int m = hex_bytes(slash + 1, f->mask, XHCA_PFILT_MATCH_MAX);

				if (m != n)
					return usage_err(op, "--match '%s': the mask must have as many "
							 "bytes as the value (%d)", arg, n);
			}
		}
		f->match_len = (__u8)n;
		f->flags |= XHCA_PF_MATCH;
		break;
	case O_F_INVERT:
		f->flags |= XHCA_PF_INVERT;
		break;
	case O_F_HANDLER:
		if (!name_lookup(pf_handlers, arg, &t)) {
			f->handler = (__u8)t;
		} else {
			/* one xhcad loaded (--proxy-handler): its id from xhcad */
			char (*names)[16] = handler_names();
			int k;

			for (k = 0; names && k < XHCA_PXH_MAX; k++)
				if (names[k][0] && !strcmp(names[k], arg))
					break;
			free(names);
			if (!names)
				return EXIT_FAIL;
			if (k == XHCA_PXH_MAX)
				return usage_err(op, "--handler '%s': no such handler; lock, none, or one "
						 "xhcad loaded (xhca proxy show lists them)", arg);
			f->handler = (__u8)k;
		}
		fa->have_handler = 1;
		break;
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

static int do_filter_add(int argc, char **argv)
{
	static const struct opt_def defs[] = {
		{ "op", 1, O_F_OP }, { "size-below", 1, O_F_BELOW }, { "size-above", 1, O_F_ABOVE },
		{ "single", 0, O_F_SINGLE }, { "rkey", 1, O_F_RKEY }, { "va", 1, O_F_VA },
		{ "src-qpn", 1, O_F_SQPN }, { "match", 1, O_F_MATCH }, { "invert", 0, O_F_INVERT },
		{ "handler", 1, O_F_HANDLER }, { NULL, 0, 0 },
	};
	struct filter_args fa = { .op = "filter add" };
	struct xhca_filter *r = NULL;
	char *pos[1];
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(fa.op, argc, argv, defs, filter_opt, &fa, pos, 1, &npos);
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

static int do_filter_del(int argc, char **argv)
{
	const char *op = "filter del";
	unsigned long long v;
	char *pos[1];
	__u32 id;
	int rc, npos;

	rc = parse_args(op, argc, argv, NULL, no_opts, NULL, pos, 1, &npos);
	if (rc)
		return rc;
	if (!npos)
		return usage_err(op, "missing filter ID; list them with: xhca -i IFNAME filter show");
	rc = num_arg(op, NULL, "filter ID", pos[0], 32, "1..4294967295", &v);
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

static int do_filter_show(int argc, char **argv)
{
	const char *op = "filter show";
	struct xhca_filter *v = NULL;
	__u32 qpn = 0, len = 0;
	char *pos[1];
	int rc, npos;

	rc = parse_args(op, argc, argv, NULL, no_opts, NULL, pos, 1, &npos);
	if (rc)
		return rc;
	if (npos) {
		rc = qpn_arg(op, NULL, pos[0], &qpn);
		if (rc)
			return rc;
	}
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

static void proxy_print(const struct xhca_proxy_info *p)
{
	if (json) {
		jw_open(NULL, '{');
		jw_bool("paused", p->paused);
		jw_u64("qps", p->qps);
		jw_u64("filters", p->filters);
		jw_u64("limit_high", p->limit_high);
		jw_u64("limit_low", p->limit_low);
		jw_bool("no_offload_mode", p->gate);
		jw_u64("backlog", p->backlog);
		jw_u64("timeout_ms", p->timeout_ms);
		jw_u64("offloaded", p->offloaded);
		jw_u64("normal", p->normal);
		jw_u64("no_offload", p->no_offload);
		jw_u64("gate_closes", p->gate_closes);
		jw_u64("records", p->records);
		jw_u64("record_fail", p->record_fail);
		jw_u64("frames", p->frames);
		jw_u64("reads", p->reads);
		jw_u64("atomics", p->atomics);
		jw_u64("sends", p->sends);
		jw_u64("declined", p->declined);
		jw_u64("replayed", p->replayed);
		jw_u64("lock_granted", p->lock_granted);
		jw_u64("lock_refused", p->lock_refused);
		jw_u64("lock_released", p->lock_released);
		jw_u64("lock_undone", p->lock_undone);
		jw_u64("released", p->released);
		jw_u64("skipped", p->skipped);
		jw_u64("late", p->late);
		jw_u64("gaps", p->gaps);
		jw_u64("lost", p->lost);
		jw_u64("tx_frames", p->tx_frames);
		jw_u64("acks", p->acks);
		jw_u64("handled", p->handled);
		jw_open("handlers", '[');
		for (int k = 0; k < XHCA_PXH_MAX; k++) {
			char n[17];

			field_str(n, sizeof(n), p->handlers[k], sizeof(p->handlers[k]));
			if (!n[0])
				continue;
			jw_open(NULL, '{');
			jw_u64("id", (unsigned long long)k);
			jw_str("name", n);
			jw_close('}');
		}
		jw_close(']');
		jw_close('}');
		return;
	}
	printf("proxy:        %s, %u QPs on proxy CQs, %u filters\n",
	       p->paused ? "paused (taking no requests)" : "running", p->qps, p->filters);
	printf("load limit:   %u requests waiting stop offloading, %u start it again; now %u "
	       "waiting%s (%llu times closed)\n", p->limit_high, p->limit_low, p->backlog,
	       p->gate ? ", no offload mode" : "", (unsigned long long)p->gate_closes);
	printf("xhca_rx:      %llu offloaded, %llu normal, %llu held back by the load limit, "
	       "%llu WRITE records (%llu lost)\n", (unsigned long long)p->offloaded,
	       (unsigned long long)p->normal, (unsigned long long)p->no_offload,
	       (unsigned long long)p->records, (unsigned long long)p->record_fail);
	printf("executed:     %llu frames: %llu READs, %llu ATOMICs, %llu SENDs (%llu declined, "
	       "%llu frames replayed), %llu response frames (%llu ACKs)\n",
	       (unsigned long long)p->frames,
	       (unsigned long long)p->reads, (unsigned long long)p->atomics,
	       (unsigned long long)p->sends, (unsigned long long)p->declined,
	       (unsigned long long)p->replayed, (unsigned long long)p->tx_frames,
	       (unsigned long long)p->acks);
	printf("locks:        %llu granted, %llu refused, %llu released, %llu undone\n",
	       (unsigned long long)p->lock_granted, (unsigned long long)p->lock_refused,
	       (unsigned long long)p->lock_released, (unsigned long long)p->lock_undone);
	printf("handlers:    ");
	for (int k = 0; k < XHCA_PXH_MAX; k++) {
		char n[17];

		field_str(n, sizeof(n), p->handlers[k], sizeof(p->handlers[k]));
		if (n[0])
			printf(" %d=%s", k, n);
	}
	printf("; %llu SENDs taken by loaded ones\n", (unsigned long long)p->handled);
	printf("completions:  %llu released in order, %llu no-ops, %llu late, %llu gaps timed "
	       "out (after %u ms), %llu lost\n", (unsigned long long)p->released,
	       (unsigned long long)p->skipped, (unsigned long long)p->late,
	       (unsigned long long)p->gaps, p->timeout_ms, (unsigned long long)p->lost);
}

static int proxy_cmd(const char *op, int argc, char **argv, int set, __u32 paused)
{
	struct xhca_proxy_set r = { .paused = paused };
	struct xhca_proxy_info *p = NULL;
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(op, argc, argv, NULL, no_opts, NULL, NULL, 0, &npos);
	if (rc)
		return rc;
	rc = set ? request(op, XHCA_CTL_PROXY_SET, &r, sizeof(r), (void **)&p, &len)
		 : request(op, XHCA_CTL_PROXY_SHOW, NULL, 0, (void **)&p, &len);
	if (rc)
		goto out;
	if (len < sizeof(*p)) {
		rc = short_reply(op, len, sizeof(*p));
		goto out;
	}
	proxy_print(p);
out:
	free(p);
	return rc;
}

static int do_proxy_show(int argc, char **argv)
{
	return proxy_cmd("proxy show", argc, argv, 0, 0);
}

static int do_proxy_pause(int argc, char **argv)
{
	return proxy_cmd("proxy pause", argc, argv, 1, 1);
}

static int do_proxy_resume(int argc, char **argv)
{
	return proxy_cmd("proxy resume", argc, argv, 1, 0);
}

#define USAGE_TOP                                                                          \
	"Usage: xhca [-j|--json] [-v] -i|--interface IFNAME COMMAND ...\n"                  \
	"Client of xhcad, the daemon of the xhca software RoCEv2 HCA.\n"                    \
	"Commands:\n"                                                                       \
	"  status                        the daemon, its program and maps\n"               \
	"  qp create|modify|destroy|show queue pairs (see xhca qp --help)\n"               \
	"  stats [--qp QPN] [--reset]    reason counters of xhca_rx and xhcad\n"           \
	"  flowq show|set                flow queues (see xhca flowq --help)\n"            \
	"  mr reg|dereg|show|read        memory regions (see xhca mr --help)\n"            \
	"  mcast create|destroy|attach|detach|show   multicast groups (xhca mcast --help)\n" \
	"  cq create|destroy|poll|show   completion queues (see xhca cq --help)\n"        \
	"  filter add|del|show           proxy QP filters (see xhca filter --help)\n"      \
	"  proxy show|pause|resume       the proxy thread (see xhca proxy --help)\n"       \
	"  exec [--] PROGRAM [ARGS...]   run a libibverbs program on xhca (xhca exec --help)\n" \
	"Options:\n"                                                                        \
	"  -i, --interface IFNAME        the interface xhcad serves\n"                     \
	"  -j, --json                    one JSON object on stdout\n"                      \
	"  -v, --verbose                 more detail (more columns; twice: protocol trace)\n" \
	"  -h, --help                    this text (also after any command)\n"            \
	"Numbers are decimal or 0x hex. Exit codes: 0 ok, 1 failed, 2 bad usage.\n"

#define USAGE_EXEC                                                                         \
	"Usage: xhca [-i IFNAME] exec [--proxy] [--] PROGRAM [ARGS...]\n"                    \
	"Runs PROGRAM, unmodified, with xhca's libibverbs.so.1 in place of the system's\n"  \
	"(LD_LIBRARY_PATH): its devices are xhca_<ifname>, one per interface of this\n"      \
	"network namespace that an xhcad serves; with -i, that interface's only.\n"         \
	"  --proxy   its CQs are proxy CQs (XHCA_VERBS_PROXY=1): xhca qp modify QPN\n"      \
	"            --proxy on and xhca filter add make its QPs proxy QPs\n"               \
	"The library is looked for in XHCA_VERBS_DIR, then beside xhca (build/verbs),\n"    \
	"then in ../lib/xhca/verbs from it (make install).\n"                               \
	"Exit: the program's; 1 when it cannot be started, 2 bad usage.\n"

#define USAGE_QP                                                                           \
	"Usage: xhca -i IFNAME qp COMMAND ...\n"                                            \
	"  qp create --type rc|uc|ud [--qpn N] [--pkey P] [--qkey K] [--flowq N]\n"       \
	"            [--block-self-mcast-loopback] [--cq ID [--rq-depth N] [--buf-size B]]\n" \
	"            [--proxy on|off]\n"                                                    \
	"  qp modify QPN [--state S] [--epsn N] [--local-ip A] [--remote-ip A] [--mtu M]\n"  \
	"                [--action pass|drop|host] [--qkey K] [--pkey P] [--dest-qpn N]\n"      \
	"                [--proxy on|off] [--ack-every N] [--rnr-timer T] [--sq-psn N]\n"   \
	"                [--timeout T] [--retry-cnt N] [--rnr-retry N] [--max-rd-atomic N]\n" \
	"  qp destroy QPN\n"                                                                \
	"  qp show [QPN]                 (the default)\n"                                  \
	"QPNs are global 24-bit queue pair numbers.\n"

#define USAGE_QP_CREATE                                                                    \
	"Usage: xhca -i IFNAME qp create --type rc|uc|ud [--qpn N] [--pkey P] [--qkey K]\n" \
	"                                [--flowq N]\n"                                      \
	"Creates a QP in state reset.\n"                                                    \
	"  --type rc|uc|ud   transport (required)\n"                                       \
	"  --qpn N           global QPN, 2..0xfffffe (1, the GSI QP, for ud only);\n"      \
	"                    default: the daemon picks a free one\n"                        \
	"  --pkey P          partition key, 16 bits (default 0xffff)\n"                    \
	"  --qkey K          UD Q_Key, 32 bits (default 0)\n"                              \
	"  --flowq N         flow queue of its packets with action host (default: a hash\n" \
	"                    of the QPN)\n"                                                 \
	"  --block-self-mcast-loopback  no copy of multicast packets it sent itself\n"     \
	"                    (source address of this host, source QPN its own)\n"           \
	"  --cq ID           deliver to CQ ID, one of the CLI's (xhca cq create): the QP's\n" \
	"                    action is host, xhcad posts --rq-depth N (default 64)\n"       \
	"                    receive buffers of --buf-size B bytes (default 4096) for it,\n" \
	"                    xhca cq poll takes the completions and posts them again\n"    \
	"  --proxy on|off    a proxy QP: its CQ must be a proxy CQ (cq create --proxy)\n"   \
	"Prints: created qp 0xNNNNNN (TYPE, flow queue N); with -j the QP as JSON.\n"

#define STR_(x) #x
#define XSTR(x) STR_(x)

#define USAGE_QP_MODIFY                                                                    \
	"Usage: xhca -i IFNAME qp modify QPN [options]\n"                                   \
	"Changes only what is given; a refused change changes nothing.\n"                  \
	"  --state reset|init|rtr|rts|sqd|sqe|err\n"                                       \
	"                    IB order: reset > init > rtr > rts; any state > reset|err\n"  \
	"  --epsn N          expected PSN of the next request, 24 bits\n"                  \
	"  --local-ip A      our address, IPv4 or IPv6 (RC/UC)\n"                          \
	"  --remote-ip A     the peer's address, same family (RC/UC)\n"                    \
	"  --mtu 256|512|1024|2048|4096  path MTU\n"                                        \
	"  --action pass|drop|host  what happens to accepted packets: the kernel gets\n" \
	"                    them, they are consumed, or xhcad delivers them (AF_XDP)\n"  \
	"  --qkey K          UD Q_Key, 32 bits\n"                                          \
	"  --pkey P          partition key, 16 bits\n"                                     \
	"  --dest-qpn N      the peer's QPN (RC/UC), 24 bits\n"                          \
	"  --proxy on|off    proxy QP: its filters offload messages to the proxy thread;\n" \
	"                    its completions must go to a proxy CQ (xhca_cq_create_ex\n"   \
	"                    with XHCA_CQF_PROXY, or xhca-recv --proxy). Off: no new\n"    \
	"                    message is offloaded; none in flight is lost or reordered\n" \
	"  --ack-every N     RC responder: an ACK at least every N request packets, and\n" \
	"                    at each AckReq (0: only at AckReq; default " XSTR(XHCA_ACK_EVERY_DEFAULT) ")\n" \
	"  --rnr-timer T     RC responder: the timer code of its RNR NAKs, 0..31 (IBA\n"   \
	"                    table 45: 1 = 0.01 ms ... 14 = 1.28 ms ... 0 = 655 ms;\n"    \
	"                    default " XSTR(XHCA_RNR_TIMER_DEFAULT) ")\n"                  \
	"A QP with a send queue (an application's, xhca_post_send):\n"                   \
	"  --sq-psn N        the PSN of its next new request packet, 24 bits\n"          \
	"  --timeout T       RC: no response in 4.096 us * 2^T is a retry, 0..31 (0: no\n" \
	"                    timer; default " XSTR(XHCA_TIMEOUT_DEFAULT) " = 67 ms)\n"      \
	"  --retry-cnt N     RC: retries after a timeout or sequence NAK, 0..7 (default\n" \
	"                    " XSTR(XHCA_RETRY_CNT_DEFAULT) "), then RETRY_EXC_ERR\n"       \
	"  --rnr-retry N     RC: retries after an RNR NAK, 0..7 (7, the default: no end)\n" \
	"  --max-rd-atomic N RC: READ/ATOMIC requests outstanding at once, 1..128 (default\n" \
	"                    " XSTR(XHCA_MAX_RD_ATOMIC_DEFAULT) ")\n"

#define USAGE_QP_DESTROY                                                                   \
	"Usage: xhca -i IFNAME qp destroy QPN\n"                                            \
	"Removes the QP; packets for it are then dropped as drop_cam_miss.\n"

#define USAGE_QP_SHOW                                                                      \
	"Usage: xhca [-j] [-v] -i IFNAME qp show [QPN]\n"                                   \
	"Lists every QP (or one) with its counters; -v adds DEST_QPN, GEN, byte counts,\n"  \
	"the owning session, its CQ and what xhcad delivered (frames, completions, RNR\n"   \
	"drops, errors).\n"

#define USAGE_STATUS                                                                       \
	"Usage: xhca [-j] -i IFNAME status\n"                                               \
	"Shows the daemon: interface, program, attach mode, pinned maps, QPs in use.\n"

#define USAGE_STATS                                                                        \
	"Usage: xhca [-j] [-v] -i IFNAME stats [--qp QPN] [--reset]\n"                      \
	"Shows every reason counter of xhca_rx (packets, bytes) and their total, then\n"   \
	"what xhcad did with the frames it took from the flow queues.\n"                  \
	"  --qp QPN   also the accepted/dropped counters of one QP\n"                      \
	"  --reset    zero the counters after reading them (with --qp: that QP's only)\n"  \
	"-v adds a description of each reason.\n"

#define USAGE_FLOWQ                                                                        \
	"Usage: xhca -i IFNAME flowq COMMAND ...\n"                                        \
	"  flowq show                    (the default) weights, backlog, gate, counters\n" \
	"  flowq set N --weight W        the share of flow queue N, 1..1000\n"           \
	"Flow queues are AF_XDP sockets xhcad drains by weighted deficit round robin.\n"

#define USAGE_FLOWQ_SHOW                                                                   \
	"Usage: xhca [-j] [-v] -i IFNAME flowq show\n"                                      \
	"Lists the flow queues: weight, QPs, frames waiting, whether the gate (early drop\n" \
	"above the high watermark) is closed, whether xhcad waits for an application, and\n" \
	"frames, bytes and drops. -v adds the watermarks and the raw counters.\n"

#define USAGE_FLOWQ_SET                                                                    \
	"Usage: xhca -i IFNAME flowq set N --weight W\n"                                    \
	"Sets the DRR weight of flow queue N (1..1000, default 1): while queues are\n"     \
	"backlogged, each gets bytes in proportion to its weight.\n"

#define USAGE_MR                                                                           \
	"Usage: xhca -i IFNAME mr COMMAND ...\n"                                            \
	"  mr show                       (the default) every memory region, applications'\n" \
	"                                too: R_Key, PD, owner, iova, length, translation\n" \
	"  mr reg --len N [--access LIST] [--scatter|--contig] [--iova VA]\n"              \
	"  mr dereg RKEY\n"                                                                  \
	"  mr read RKEY --len N [--offset N] [--out FILE|-]\n"                              \
	"Regions the CLI registers are xhcad's own (PD 0, for the CLI's QPs with action\n" \
	"host); xhcad allocates their host memory.\n"

#define USAGE_MR_REG                                                                       \
	"Usage: xhca -i IFNAME mr reg --len N [--access LIST] [--scatter|--contig] [--iova VA]\n" \
	"Allocates N bytes of host memory and registers them as a memory region of PD 0.\n" \
	"  --len N          bytes, 1 or more\n"                                            \
	"  --access LIST    comma-separated: local-write, remote-write, remote-read,\n"    \
	"                   remote-atomic (default local-write,remote-write,remote-read);\n" \
	"                   remote write and atomic need local-write\n"                    \
	"  --scatter        pages apart in host memory: not pre-translated, xhcad places\n" \
	"                   the WRITEs (the default under xhcad --fragment)\n"            \
	"  --contig         adjacent pages even under xhcad --fragment: pre-translated\n"   \
	"  --iova VA        the address the remote side uses for byte 0 (default 0)\n"    \
	"Prints the R_Key: index << 8 | a key byte that changes on every registration.\n"

#define USAGE_MR_DEREG                                                                     \
	"Usage: xhca -i IFNAME mr dereg RKEY\n"                                              \
	"Invalidates the region, waits until xhca_rx cannot use it any more, then frees\n" \
	"it (and its memory, for the CLI's own regions). The CLI may deregister an\n"     \
	"application's region too.\n"

#define USAGE_MR_SHOW                                                                      \
	"Usage: xhca [-j] [-v] -i IFNAME mr show\n"                                          \
	"Lists every memory region; -v adds the generation, allocation and offset.\n"

#define USAGE_MR_READ                                                                      \
	"Usage: xhca -i IFNAME mr read RKEY --len N [--offset N] [--out FILE|-]\n"           \
	"Shows N bytes of the region from --offset (default 0) as hex, or writes them\n"   \
	"raw to FILE (- for stdout). At most 8 MiB at a time.\n"

#define USAGE_MCAST                                                                        \
	"Usage: xhca -i IFNAME mcast COMMAND ...\n"                                         \
	"  mcast show                    (the default) groups, members, counters\n"        \
	"  mcast create MGID [--pkey P]\n"                                                   \
	"  mcast destroy MGID\n"                                                             \
	"  mcast attach MGID QPN | --dev IFNAME\n"                                          \
	"  mcast detach MGID QPN | --dev IFNAME\n"                                          \
	"An MGID is a multicast address: IPv4 (239.1.1.1, kept v4-mapped) or IPv6 (ff0e::1).\n" \
	"Members are UD QPs (a copy each, the payload stored once) and function ports:\n"  \
	"interfaces xhca_rx sends the packet to, in the kernel.\n"

#define USAGE_MCAST_CREATE                                                                 \
	"Usage: xhca -i IFNAME mcast create MGID [--pkey P]\n"                               \
	"Creates an empty group; packets to it are dropped (drop_mcast_empty) until a\n"   \
	"member attaches. --pkey: the group's partition (default 0xffff), checked for\n"   \
	"every packet.\n"

#define USAGE_MCAST_DESTROY                                                                \
	"Usage: xhca -i IFNAME mcast destroy MGID\n"                                         \
	"Removes the group and its members; copies already made are still delivered.\n"

#define USAGE_MCAST_ATTACH                                                                 \
	"Usage: xhca -i IFNAME mcast attach MGID QPN | --dev IFNAME\n"                       \
	"Adds a UD QP (its Q_Key, P_Key and state are checked per packet), or a function\n" \
	"port: a network interface that gets a copy of every packet from xhca_rx.\n"

#define USAGE_MCAST_DETACH                                                                 \
	"Usage: xhca -i IFNAME mcast detach MGID QPN | --dev IFNAME\n"                       \
	"Removes a member; a destroyed QP leaves its groups by itself.\n"

#define USAGE_MCAST_SHOW                                                                   \
	"Usage: xhca [-j] [-v] -i IFNAME mcast show\n"                                       \
	"Lists the groups: P_Key, members, function ports, packets, copies delivered and\n" \
	"drops; -v adds the index, threshold drops, members skipped (state, Q_Key, P_Key,\n" \
	"loopback, gone), copies without a receive buffer and the member QPNs.\n"


#define USAGE_FILTER                                                                       \
	"Usage: xhca -i IFNAME filter COMMAND ...\n"                                        \
	"  filter add QPN --op OPS [criteria]   offload matching messages to the proxy\n"  \
	"  filter del ID\n"                                                                 \
	"  filter show [QPN]             (the default)\n"

#define USAGE_FILTER_ADD                                                                   \
	"Usage: xhca -i IFNAME filter add QPN --op OPS [criteria]\n"                         \
	"A filter of proxy QP QPN (at most 4): a message is offloaded to the proxy when\n"  \
	"one filter matches at its first packet, all of that filter's criteria holding.\n"  \
	"  --op send,read,cmp-swap,fetch-add   the requests it takes (required)\n"          \
	"  --size-below N    message size < N bytes (a multi-packet SEND's size is not\n"  \
	"                    known at its first packet: it never is below)\n"              \
	"  --size-above N    message size >= N bytes\n"                                     \
	"  --single          single-packet messages only\n"                                 \
	"  --rkey K          READ/ATOMIC: the request's R_Key\n"                            \
	"  --va START-END    READ/ATOMIC: the whole access within [START, END)\n"           \
	"  --src-qpn N       UD: the sender's QPN\n"                                        \
	"  --match HEX[/MASK] | text:STRING  the first payload bytes (up to 16); mask\n"  \
	"                    bits set are ignored (the patent's TCAM)\n"                    \
	"  --invert          offload when --match does NOT match\n"                        \
	"  --handler NAME    what the proxy does with a SEND: lock (the default, the lock\n" \
	"                    service), none (declined to the normal path), or a handler\n" \
	"                    xhcad loaded with --proxy-handler (xhca proxy show)\n"       \
	"Prints: added filter ID to qp 0xNNNNNN.\n"

#define USAGE_FILTER_DEL                                                                   \
	"Usage: xhca -i IFNAME filter del ID\n"                                              \
	"Removes a filter; messages already offloaded are still finished by the proxy.\n"

#define USAGE_FILTER_SHOW                                                                  \
	"Usage: xhca [-j] -i IFNAME filter show [QPN]\n"                                     \
	"Lists the filters (of one QP): ID, QPN, requests, handler, criteria.\n"

#define USAGE_PROXY                                                                        \
	"Usage: xhca [-j] -i IFNAME proxy show|pause|resume\n"                               \
	"The proxy thread: its load limit, what xhca_rx offloaded, what it executed and\n" \
	"the completions it released in order. pause: it takes no new requests (they\n"    \
	"wait in the proxy queue, whose backlog then closes the load limit's gate: no\n"   \
	"offload mode); resume: it takes them again.\n"


#define USAGE_CQ                                                                           \
	"Usage: xhca -i IFNAME cq COMMAND ...\n"                                            \
	"  cq create [--depth N] [--proxy]   a CQ of the CLI's (xhcad owns it)\n"          \
	"  cq destroy ID\n"                                                                  \
	"  cq poll ID [--max N] [--dump B]   take completions out of one of the CLI's CQs\n" \
	"  cq show                       (the default) every CQ, applications' too\n"     \
	"The CLI's QPs deliver to a CQ given at create (qp create --cq ID [--rq-depth N]\n" \
	"[--buf-size B]): xhcad posts their receive buffers and posts them again when\n"   \
	"cq poll takes their completions.\n"

#define USAGE_CQ_CREATE                                                                    \
	"Usage: xhca -i IFNAME cq create [--depth N] [--proxy]\n"                            \
	"  --depth N   entries, a power of 2 (default 256)\n"                               \
	"  --proxy     a proxy CQ: its completions are released by the proxy thread in\n"  \
	"              message order; a proxy QP needs one\n"                               \
	"Prints: created cq ID (depth N[, proxy]).\n"

#define USAGE_CQ_POLL                                                                      \
	"Usage: xhca [-j] -i IFNAME cq poll ID [--max N] [--dump B]\n"                        \
	"Takes up to N completions (default 64) out of one of the CLI's CQs, with the first\n" \
	"B bytes (at most 64) of each received message, and posts their buffers again.\n"  \
	"One line each: wr, status, opcode (128 receive, 129 WRITE with immediate, 256\n"  \
	"WRITE landed and 257 done by the proxy, on a proxy CQ), bytes, QP, result/imm.\n"

static const struct cmd cq_cmds[] = {
	{ "show", do_cq_show, NULL, USAGE_CQ },
	{ "list", do_cq_show, NULL, USAGE_CQ },
	{ "create", do_cq_create, NULL, USAGE_CQ_CREATE },
	{ "destroy", do_cq_destroy, NULL, USAGE_CQ },
	{ "poll", do_cq_poll, NULL, USAGE_CQ_POLL },
	{ NULL, NULL, NULL, NULL },
};

static const struct cmd filter_cmds[] = {
	{ "show", do_filter_show, NULL, USAGE_FILTER_SHOW },
	{ "list", do_filter_show, NULL, USAGE_FILTER_SHOW },
	{ "add", do_filter_add, NULL, USAGE_FILTER_ADD },
	{ "del", do_filter_del, NULL, USAGE_FILTER_DEL },
	{ "delete", do_filter_del, NULL, USAGE_FILTER_DEL },
	{ NULL, NULL, NULL, NULL },
};

static const struct cmd proxy_cmds[] = {
	{ "show", do_proxy_show, NULL, USAGE_PROXY },
	{ "pause", do_proxy_pause, NULL, USAGE_PROXY },
	{ "resume", do_proxy_resume, NULL, USAGE_PROXY },
	{ NULL, NULL, NULL, NULL },
};

static const struct cmd mcast_cmds[] = {
	{ "show", do_mcast_show, NULL, USAGE_MCAST_SHOW },
	{ "list", do_mcast_show, NULL, USAGE_MCAST_SHOW },
	{ "create", do_mcast_create, NULL, USAGE_MCAST_CREATE },
	{ "destroy", do_mcast_destroy, NULL, USAGE_MCAST_DESTROY },
	{ "attach", do_mcast_attach, NULL, USAGE_MCAST_ATTACH },
	{ "detach", do_mcast_detach, NULL, USAGE_MCAST_DETACH },
	{ NULL, NULL, NULL, NULL },
};

static const struct cmd mr_cmds[] = {
	{ "show", do_mr_show, NULL, USAGE_MR_SHOW },
	{ "list", do_mr_show, NULL, USAGE_MR_SHOW },
	{ "reg", do_mr_reg, NULL, USAGE_MR_REG },
	{ "dereg", do_mr_dereg, NULL, USAGE_MR_DEREG },
	{ "read", do_mr_read, NULL, USAGE_MR_READ },
	{ NULL, NULL, NULL, NULL },
};

static const struct cmd flowq_cmds[] = {
	{ "show", do_flowq_show, NULL, USAGE_FLOWQ_SHOW },
	{ "set", do_flowq_set, NULL, USAGE_FLOWQ_SET },
	{ NULL, NULL, NULL, NULL },
};

static const struct cmd qp_cmds[] = {
	{ "show", do_qp_show, NULL, USAGE_QP_SHOW }, /* first: the default */
	{ "list", do_qp_show, NULL, USAGE_QP_SHOW },
	{ "create", do_qp_create, NULL, USAGE_QP_CREATE },
	{ "modify", do_qp_modify, NULL, USAGE_QP_MODIFY },
	{ "destroy", do_qp_destroy, NULL, USAGE_QP_DESTROY },
	{ NULL, NULL, NULL, NULL },
};

/* ---- exec: a verbs program on xhca ------------------------------------------ */

/* The directory of xhca's libibverbs.so.1, or NULL. */
static const char *verbs_dir(char *buf, size_t len)
{
	const char *env = getenv("XHCA_VERBS_DIR");
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return NULL;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	for (int i = 0; i < 2; i++) {
		char lib[PATH_MAX + 64];

		if (snprintf(buf, len, "%.*s%s", PATH_MAX - 32, self,
			     i ? "/../lib/xhca/verbs" : "/verbs") >= (int)len)
			return NULL;
		snprintf(lib, sizeof(lib), "%s/libibverbs.so.1", buf);
		if (!access(lib, R_OK))
			return buf;
	}
	return NULL;
}

static int do_exec(int argc, char **argv)
{
	char dir[PATH_MAX], path[2 * PATH_MAX];
	const char *d, *old = getenv("LD_LIBRARY_PATH");

	if (argc && !strcmp(argv[0], "--proxy")) {
		setenv("XHCA_VERBS_PROXY", "1", 1);
		argc--;
		argv++;
	}
	if (argc && !strcmp(argv[0], "--")) {
		argc--;
		argv++;
	} else if (argc && argv[0][0] == '-') {
		return usage_err("exec", "unknown option '%s'; --proxy is the one (then --, then "
				 "the program)", argv[0]);
	}
	if (!argc)
		return usage_err("exec", "no program given; e.g. xhca -i eth0 exec -- ibv_devinfo");
	if (ifname) {
		int fd = xhca_ctl_connect(ifname);

		if (fd < 0) {
			pr_warn("exec: no xhcad serves %s (%s); start one: xhcad %s\n", ifname,
				strerror(-fd), ifname);
			return EXIT_FAIL;
		}
		close(fd);
		setenv("XHCA_DEVICES", ifname, 1);
	}
	d = verbs_dir(dir, sizeof(dir));
	if (!d) {
		pr_warn("exec: xhca's libibverbs.so.1 is not beside xhca nor installed; build it "
			"(make) or set XHCA_VERBS_DIR\n");
		return EXIT_FAIL;
	}
	snprintf(path, sizeof(path), "%s%s%s", d, old && *old ? ":" : "", old && *old ? old : "");
	setenv("LD_LIBRARY_PATH", path, 1);
	execvp(argv[0], argv);
	pr_warn("exec: %s: %s\n", argv[0], strerror(errno));
	return EXIT_FAIL;
}

static const struct cmd top_cmds[] = {
	{ "status", do_status, NULL, USAGE_STATUS },
	{ "qp", NULL, qp_cmds, USAGE_QP },
	{ "stats", do_stats, NULL, USAGE_STATS },
	{ "flowq", NULL, flowq_cmds, USAGE_FLOWQ },
	{ "mr", NULL, mr_cmds, USAGE_MR },
	{ "mcast", NULL, mcast_cmds, USAGE_MCAST },
	{ "cq", NULL, cq_cmds, USAGE_CQ },
	{ "filter", NULL, filter_cmds, USAGE_FILTER },
	{ "proxy", NULL, proxy_cmds, USAGE_PROXY },
	{ "exec", do_exec, NULL, USAGE_EXEC },
	{ NULL, NULL, NULL, NULL },
};

static int is_help(const char *s)
{
	return !strcmp(s, "-h") || !strcmp(s, "--help") || !strcmp(s, "help");
}

/* path: the words that led here ("qp"), for messages. A group without a
 * subcommand (or with only options) runs its first entry, as "ip link" does. */
static int dispatch(const char *path, const char *usage, const struct cmd *cmds, int argc,
		    char **argv)
{
	const struct cmd *c = NULL;
	char sub[64];
	int i;

	if (argc && is_help(argv[0])) {
		fputs(usage, stdout);
		return EXIT_OK;
	}
	if (!argc || argv[0][0] == '-') {
		if (!path)
			return usage_err(NULL, "no command given; use status, qp, stats, flowq, mr, "
					 "mcast, cq, filter, proxy or exec (see xhca --help)");
		c = &cmds[0];
	} else {
		for (c = cmds; c->name; c++)
			if (!strcmp(c->name, argv[0]))
				break;
		if (!c->name) {
			if (!path)
				return usage_err(NULL, "unknown command '%s'; use status, qp, stats, "
						 "flowq, mr, mcast, cq, filter, proxy or exec (see xhca "
						 "--help)",
						 argv[0]);
			if (!strcmp(path, "flowq"))
				return usage_err(path, "unknown command '%s'; use show or set (see xhca "
						 "flowq --help)", argv[0]);
			if (!strcmp(path, "mr"))
				return usage_err(path, "unknown command '%s'; use reg, dereg, show or "
						 "read (see xhca mr --help)", argv[0]);
			if (!strcmp(path, "mcast"))
				return usage_err(path, "unknown command '%s'; use create, destroy, "
						 "attach, detach or show (see xhca mcast --help)",
						 argv[0]);
			if (!strcmp(path, "cq"))
				return usage_err(path, "unknown command '%s'; use create, destroy, poll "
						 "or show (see xhca cq --help)", argv[0]);
			if (!strcmp(path, "filter"))
				return usage_err(path, "unknown command '%s'; use add, del or show "
						 "(see xhca filter --help)", argv[0]);
			if (!strcmp(path, "proxy"))
				return usage_err(path, "unknown command '%s'; use show, pause or resume "
						 "(see xhca proxy --help)", argv[0]);
			return usage_err(path, "unknown command '%s'; use create, modify, destroy or "
					 "show (see xhca %s --help)", argv[0], path);
		}
		argc--;
		argv++;
	}
	snprintf(sub, sizeof(sub), "%s%s%s", path ? path : "", path ? " " : "", c->name);
	if (c->sub)
		return dispatch(sub, c->usage, c->sub, argc, argv);
	/* --help anywhere wins over everything else, as in ip and bpftool. */
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(c->usage, stdout);
			return EXIT_OK;
		}
	}
	return c->fn(argc, argv);
}

static int set_ifname(const char *s)
{
	if (!*s)
		return usage_err(NULL, "-i needs an interface name; see ip link");
	if (strlen(s) >= IFNAMSIZ)
		return usage_err(NULL, "interface name '%s' is longer than %d characters; use the "
				 "name shown by ip link", s, IFNAMSIZ - 1);
	if (strpbrk(s, "/: \t\n") || !strcmp(s, ".") || !strcmp(s, ".."))
		return usage_err(NULL, "'%s' is not a valid interface name; use the name shown by "
				 "ip link", s);
	ifname = s;
	return 0;
}

int main(int argc, char **argv)
{
	int i, rc;

	xhca_log_init("xhca", XHCA_LOG_WARN);
	/* Global options, up to the first word that is not one. */
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose++;
		} else if (!strcmp(a, "-vv")) {
			verbose += 2;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(USAGE_TOP, stdout);
			return EXIT_OK;
		} else if (!strcmp(a, "-i") || !strcmp(a, "--interface")) {
			if (i + 1 >= argc)
				return usage_err(NULL, "%s needs an interface name; e.g. xhca -i eth0 "
						 "status", a);
			rc = set_ifname(argv[++i]);
			if (rc)
				return rc;
		} else if (!strncmp(a, "--interface=", 12)) {
			rc = set_ifname(a + 12);
			if (rc)
				return rc;
		} else if (!strncmp(a, "-i", 2)) {
			rc = set_ifname(a + 2);
			if (rc)
				return rc;
		} else if (a[0] == '-' && a[1]) {
			return usage_err(NULL, "unknown option '%s'; see xhca --help", a);
		} else {
			break;
		}
	}
	xhca_log_init("xhca", verbose);
	return dispatch(NULL, USAGE_TOP, top_cmds, argc - i, argv + i);
}
