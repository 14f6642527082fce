/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the CLI's objects share: messages, argument parsing, the request to
 * xhcad and the table printer.
 */
#include "cli.h"

int json;
int verbose;
const char *ifname;

/* ---- messages ---------------------------------------------------------- */

/* One line on stderr: "xhca: OP: what is wrong; what to do". */
int usage_err(const char *op, const char *fmt, ...)
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
void print_daemon_err(char *msg)
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

const struct name_val qp_types[] = {
	{ "rc", XHCA_QPT_RC }, { "uc", XHCA_QPT_UC }, { "ud", XHCA_QPT_UD }, { NULL, 0 },
};

const struct name_val qp_states[] = {
	{ "reset", XHCA_QPS_RESET }, { "init", XHCA_QPS_INIT }, { "rtr", XHCA_QPS_RTR },
	{ "rts", XHCA_QPS_RTS },     { "sqd", XHCA_QPS_SQD },   { "sqe", XHCA_QPS_SQE },
	{ "err", XHCA_QPS_ERR },     { NULL, 0 },
};

const struct name_val qp_actions[] = {
	{ "pass", XHCA_ACT_PASS }, { "drop", XHCA_ACT_DROP }, { "host", XHCA_ACT_HOST }, { NULL, 0 },
};

const struct name_val mtus[] = {
	{ "256", 8 }, { "512", 9 }, { "1024", 10 }, { "2048", 11 }, { "4096", 12 }, { NULL, 0 },
};

const char *const reason_names[XHCA_R_MAX] = { XHCA_REASONS(XHCA_REASON_STR) };
#undef XHCA_REASON_STR
const char *const reason_descs[XHCA_R_MAX] = { XHCA_REASONS(XHCA_REASON_DESC) };
#undef XHCA_REASON_DESC
const char *const host_names[XHCA_H_MAX] = { XHCA_HOST_REASONS(XHCA_HOST_STR) };
#undef XHCA_HOST_STR
const char *const host_descs[XHCA_H_MAX] = { XHCA_HOST_REASONS(XHCA_HOST_DESC) };
#undef XHCA_HOST_DESC

int name_lookup(const struct name_val *t, const char *s, unsigned int *val)
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
const char *name_of(const struct name_val *t, unsigned int val)
{
	for (; t->name; t++)
		if (t->val == val)
			return t->name;
	return "?";
}

unsigned int mtu_bytes(unsigned int shift)
{
	return shift >= 8 && shift <= 12 ? 1u << shift : 0;
}

int ip_is_set(const __u8 ip[16])
{
	static const __u8 zero[16];

	return memcmp(ip, zero, 16) != 0;
}

/* ---- numbers ----------------------------------------------------------- */

/* Decimal or 0x hex; no sign, no octal, no trailing characters. Returns 0,
 * -EINVAL (not a number) or -ERANGE (above max). */
int parse_num(const char *s, unsigned long long max, unsigned long long *out)
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
int num_arg(const char *op, const char *opt, const char *what, const char *s,
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
int qpn_arg(const char *op, const char *opt, const char *s, __u32 *qpn)
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

/* ---- tables ------------------------------------------------------------ */

/* Fills one cell of a row. */
void cell(char *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c, TBL_CELL, fmt, ap);
	va_end(ap);
}

/* Two passes over the rows, one to size the columns and one to print: a table
 * of 65536 QPs then costs no more memory than one row. */
void tbl_print(const struct tbl_col *cols, int ncols, int nrows, tbl_row_fn fill,
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

int need_ifname(const char *op)
{
	if (!ifname)
		return usage_err(op, "no interface given; use xhca -i IFNAME %s ...", op);
	return 0;
}

/* Sends one request and waits for its reply. Returns an exit code; prints
 * every failure. On success *resp (may be NULL) is malloc'd. */
int request(const char *op, __u32 code, const void *req, __u32 req_len, void **resp,
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
int short_reply(const char *op, __u32 got, size_t want)
{
	pr_warn("%s: reply from xhcad is %u bytes, expected %zu; xhca and xhcad versions differ\n",
		op, got, want);
	return EXIT_FAIL;
}

/* A request without arguments whose reply is an array of esize-byte records. */
int array_request(const char *op, __u32 code, size_t esize, void **out, __u32 *n)
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
void array_print(const char *key, const void *v, __u32 n, size_t esize,
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

/* --proxy on|off: the flag in flags, the answer in *on. */
int proxy_arg(const char *op, const char *arg, __u8 *flags)
{
	if (!strcmp(arg, "on"))
		*flags |= XHCA_QPF_PROXY;
	else if (!strcmp(arg, "off"))
		*flags &= (__u8)~XHCA_QPF_PROXY;
	else
		return usage_err(op, "--proxy '%s': use on or off", arg);
	return 0;
}

/* ---- the argv walker ------------------------------------------------------ */

/* Before the command (main.c) and, those that take no value, anywhere after
 * it. The interface comes first: the usage shows it before the command. */
const struct xhca_opt global_opts[] = {
	{ .name = "interface", .key = 'i', .arg = "IFNAME",
	  .help = "the interface xhcad serves (exec runs without:\nthen all of them)" },
	{ .name = "json", .key = 'j', .help = "one JSON object on stdout" },
	{ .name = "verbose", .key = 'v', .help = "more detail (more columns; twice: protocol trace)" },
	{ .name = "help", .key = 'h', .help = "this text (also after any command)" },
	{ 0 },
};

static int set_ifname(const char *s)
{
	if (strlen(s) >= IFNAMSIZ)
		return usage_err(NULL, "interface name '%s' is longer than %d characters; use the "
				 "name shown by ip link", s, IFNAMSIZ - 1);
	if (strpbrk(s, "/: \t\n") || !strcmp(s, ".") || !strcmp(s, ".."))
		return usage_err(NULL, "'%s' is not a valid interface name; use the name shown by "
				 "ip link", s);
	ifname = s;
	return 0;
}

/* -h is the dispatcher's (and main.c's, before the command). */
int global_opt(void *ctx, int id, const char *name, const char *arg)
{
	switch (id) {
	case 'i':
		return set_ifname(arg);
	case 'j':
		json = 1;
		break;
	case 'v':
		verbose++;
		xhca_log_init("xhca", verbose);
		break;
	}
	return 0;
}

struct walk {
	const struct call *call;
	opt_fn on_opt;
	void *ctx;
	int argc;
	char **argv;
	int i;		/* the word being read */
};

/* "see xhca mr reg --help" (before a command: "see xhca --help") */
#define SEE "; see xhca %s%s--help"
#define SEE_ARGS(c) (c)->op ? (c)->op : "", (c)->op ? " " : ""

/* The entry of the option a word names, by long name (name, n long) or, name
 * NULL, by short key: in the command's table, then, after a command, among
 * the global options that take no value (-j, -v: they change how anything
 * prints, wherever they are; -i names the daemon, before the command).
 * *global: found there. */
static const struct xhca_opt *opt_lookup(const struct call *call, const char *name, size_t n,
					 int key, int *global)
{
	const struct xhca_opt *tabs[2] = {
		call->cmd->opts, call->cmd->opts == global_opts ? NULL : global_opts,
	};

	for (int t = 0; t < 2; t++) {
		for (const struct xhca_opt *o = tabs[t]; o && o->name; o++) {
			if (t && o->arg)
				continue;
			if (name ? strlen(o->name) == n && !strncmp(o->name, name, n)
				 : o->key == key) {
				*global = t;
				return o;
			}
		}
	}
	return NULL;
}

/* "unknown option '--x'; use --a, --b or --c": the command's table names them. */
static int opt_unknown(const struct call *call, const char *word)
{
	char names[512];

	if (!call->cmd->opts)
		return usage_err(call->op, "unknown option '%s'; %s takes none (see xhca %s --help)",
				 word, call->op, call->op);
	xhca_opt_names(call->cmd->opts, names, sizeof(names));
	return usage_err(call->op, "unknown option '%s'; use %s (see xhca %s%s--help)", word,
			 names, SEE_ARGS(call));
}

/* Gives the option o (as the user wrote it: word) and its value to whoever
 * takes it. */
static int opt_take(const struct walk *w, const struct xhca_opt *o, int global, const char *word,
		    const char *val)
{
	const struct call *c = w->call;

	if (o->arg && !val)
		return usage_err(c->op, "%s needs a value (%s)" SEE, word, o->arg, SEE_ARGS(c));
	if (o->arg && !*val)
		return usage_err(c->op, "%s needs a value, got an empty one" SEE, word, SEE_ARGS(c));
	if (global)
		return global_opt(NULL, o->key, o->name, val);
	/* opt.h's keys of options without a short form start at 0x100 */
	return w->on_opt(w->ctx, o->key >= XHCA_OPT_KEY(0) ? o->key - XHCA_OPT_KEY(0) : o->key,
			 o->name, val);
}

/* "--name", "--name=value" or "--name value". */
static int walk_long(struct walk *w)
{
	const char *a = w->argv[w->i], *eq = strchr(a, '='), *val = NULL;
	size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
	char word[64];
	const struct xhca_opt *o;
	int global;

	snprintf(word, sizeof(word), "--%.*s", (int)n, a + 2);
	o = opt_lookup(w->call, a + 2, n, 0, &global);
	if (!o)
		return opt_unknown(w->call, a);
	if (!o->arg && eq)
		return usage_err(w->call->op, "%s takes no value" SEE, word, SEE_ARGS(w->call));
	if (o->arg)
		val = eq ? eq + 1 : w->i + 1 < w->argc ? w->argv[++w->i] : NULL;
	return opt_take(w, o, global, word, val);
}

/* "-jv", "-i IFNAME", "-iIFNAME": short options, as getopt reads them. */
static int walk_short(struct walk *w)
{
	const char *a = w->argv[w->i];

	for (const char *k = a + 1; *k; k++) {
		char word[3] = { '-', *k, 0 };
		const struct xhca_opt *o;
		int global, rc;

		o = opt_lookup(w->call, NULL, 0, (unsigned char)*k, &global);
		if (!o)
			return opt_unknown(w->call, a);
		if (o->arg)
			return opt_take(w, o, global, word,
					k[1] ? k + 1 : w->i + 1 < w->argc ? w->argv[++w->i] : NULL);
		rc = opt_take(w, o, global, word, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

/* Walks argv (the words after the command) by the command's option table:
 * options may follow positional words, and "--" ends them (CMD_OPTS_FIRST:
 * the first positional word does); the global -j and -v may be anywhere
 * (lib.sh runs "xhca stats -j"). The options go by id to on_opt; at most
 * max_pos positional words go to pos. Returns 0 or an exit code. */
int parse_args(const struct call *call, int argc, char **argv, opt_fn on_opt, void *ctx,
	       char **pos, int max_pos, int *npos)
{
	struct walk w = { .call = call, .on_opt = on_opt, .ctx = ctx, .argc = argc, .argv = argv };
	int only_pos = 0, rc;

	*npos = 0;
	for (w.i = 0; w.i < argc; w.i++) {
		const char *a = argv[w.i];

		if (only_pos || a[0] != '-' || !a[1]) {
			if (*npos >= max_pos)
				return usage_err(call->op, "unexpected argument '%s'" SEE, a,
						 SEE_ARGS(call));
			pos[(*npos)++] = argv[w.i];
			only_pos = !!(call->cmd->flags & CMD_OPTS_FIRST);
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		rc = a[1] == '-' ? walk_long(&w) : walk_short(&w);
		if (rc)
			return rc;
	}
	return 0;
}

/* A command without options, and its one positional word (word NULL: it
 * takes none; *word NULL: none was given). Returns 0 or an exit code. */
int parse_word(const struct call *call, int argc, char **argv, char **word)
{
	int n;

	if (word)
		*word = NULL;
	return parse_args(call, argc, argv, NULL, NULL, word, word ? 1 : 0, &n);
}

/* ... and that word a QPN (need: it must be there; else *qpn stays). */
int parse_qpn(const struct call *call, int argc, char **argv, int need, __u32 *qpn)
{
	char *w;
	int rc = parse_word(call, argc, argv, &w);

	if (!rc && !w && need)
		return usage_err(call->op, "missing QPN; use xhca -i IFNAME %s %s", call->op,
				 call->cmd->args);
	if (!rc && w)
		rc = qpn_arg(call->op, NULL, w, qpn);
	return rc;
}

/* ---- strings ----------------------------------------------------------- */

/* Copies a fixed-size string field that the daemon should have terminated. */
void field_str(char *dst, size_t dlen, const char *src, size_t slen)
{
	snprintf(dst, dlen, "%.*s", (int)strnlen(src, slen), src);
}
