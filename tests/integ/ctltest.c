/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-ctltest: xhcad's control socket as a hostile client uses it. JSON
 * lines on stdout.
 *
 *   isolate IF      two application sessions, raw: A makes one of each
 *                   object (allocation, PD, region, CQ, proxy CQ, proxy QP,
 *                   filter); B tries every request on A's ids and keys, and
 *                   looks at every view; a line per try ({"case", "rc",
 *                   "msg", "sees"}), then whether A's objects are intact
 *   fuzz IF N SEED [session]
 *                   N messages: headers and payloads mutated from valid
 *                   ones, truncated ones, garbage, lies about the length,
 *                   descriptors passed along; with session each connection
 *                   says hello first. Prints what came back.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <xhca/xhca.h>
#include <xhca/ctl.h>
#include <xhca/pkt.h>

struct raw {
	int fd;
	__u32 session;
};

static int hello(struct raw *r, const char *ifname, const char *name)
{
	struct xhca_hello h = { .version = XHCA_SESSION_VERSION, .pid = (__u32)getpid() };
	struct xhca_hello_reply *rp = NULL;
	__u32 got = 0;
	int hm = -1, rc;

	snprintf(h.name, sizeof(h.name), "%s", name);
	r->fd = xhca_ctl_connect(ifname);
	if (r->fd < 0)
		return r->fd;
	rc = xhca_ctl_call_fd(r->fd, XHCA_CTL_HELLO, &h, sizeof(h), -1, (void **)&rp, &got, &hm,
			      NULL, 0);
	if (!rc && got >= sizeof(*rp))
		r->session = rp->session;
	if (hm >= 0)
		close(hm);
	free(rp);
	return rc;
}

/* One request; rc, and the reply in out (up to outlen bytes). */
static int call(struct raw *r, __u32 op, const void *in, __u32 len, void *out, __u32 outlen,
		char *msg, size_t msglen)
{
	void *rp = NULL;
	__u32 got = 0;
	int rc = xhca_ctl_call(r->fd, op, in, len, &rp, &got, msg, msglen);

	if (!rc && out)
		memcpy(out, rp, got < outlen ? got : outlen);
	free(rp);
	return rc;
}

/* A CQ of the session (its eventfd along). */
static int cq_make(struct raw *r, __u32 flags, __u32 *id)
{
	struct xhca_cq_attr a = { .depth = 16, .flags = flags }, *rp = NULL;
	int efd = eventfd(0, EFD_CLOEXEC), dbfd = -1, rc;
	__u32 got = 0;

	rc = xhca_ctl_call_fd(r->fd, XHCA_CTL_CQ_CREATE, &a, sizeof(a), efd, (void **)&rp, &got,
			      &dbfd, NULL, 0);
	if (!rc && got >= sizeof(*rp))
		*id = rp->cq;
	free(rp);
	close(efd);
	if (dbfd >= 0)
		close(dbfd);
	return rc;
}

struct objs {
	__u32 alloc, pd, rkey, cq, pcq, qpn, filter;
};

/* A: one of each object. */
static int make_objs(struct raw *a, struct objs *o)
{
	struct xhca_alloc al = { .len = 8192 };
	struct xhca_mr_attr mr = { .len = 4096, .access = XHCA_ACCESS_LOCAL_WRITE |
							    XHCA_ACCESS_REMOTE_WRITE };
	struct xhca_qp_attr q = { .type = XHCA_QPT_RC, .flags = XHCA_QPF_PROXY, .rq_depth = 4 };
	struct xhca_filter f = { .f = { .ops = XHCA_PF_OP_SEND, .match_len = 1 } };
	__u8 rbuf[256];
	int rc;

	rc = call(a, XHCA_CTL_ALLOC, &al, sizeof(al), rbuf, sizeof(rbuf), NULL, 0);
	memcpy(&al, rbuf, sizeof(al));
	o->alloc = al.id;
	rc = rc ?: call(a, XHCA_CTL_PD_ALLOC, NULL, 0, &o->pd, sizeof(o->pd), NULL, 0);
	mr.pd = o->pd;
	mr.alloc = o->alloc;
	rc = rc ?: call(a, XHCA_CTL_MR_REG, &mr, sizeof(mr), &mr, sizeof(mr), NULL, 0);
	o->rkey = mr.rkey;
	rc = rc ?: cq_make(a, 0, &o->cq);
	rc = rc ?: cq_make(a, XHCA_CQF_PROXY, &o->pcq);
	q.cq = o->pcq;
	q.pd = o->pd;
	rc = rc ?: call(a, XHCA_CTL_QP_CREATE, &q, sizeof(q), &q, sizeof(q), NULL, 0);
	o->qpn = q.qpn;
	f.qpn = o->qpn;
	f.f.value[0] = 'L';
	rc = rc ?: call(a, XHCA_CTL_FILTER_ADD, &f, sizeof(f), &f, sizeof(f), NULL, 0);
	o->filter = f.f.id;
	return rc;
}

static void report(const char *name, int rc, const char *msg)
{
	printf("{\"case\": \"%s\", \"rc\": %d, \"msg\": \"", name, rc);
	for (const char *p = msg; *p; p++)
		putchar(*p == '"' || *p == '\\' ? '\'' : *p);
	printf("\"}\n");
}

/* B's request on A's id: reported. */
static void try_op(struct raw *b, const char *name, __u32 op, const void *in, __u32 len)
{
	char msg[XHCA_ERRMSG_LEN] = "";
	int rc = call(b, op, in, len, NULL, 0, msg, sizeof(msg));

	report(name, rc, msg);
}

/* How many entries of a view name one of A's objects (key at off, esize
 * each); -errno if the view was refused. */
static int view(struct raw *b, __u32 op, const void *in, __u32 len, size_t esize, size_t off,
		__u32 key)
{
	void *rp = NULL;
	__u32 got = 0, n = 0;
	int rc = xhca_ctl_call(b->fd, op, in, len, &rp, &got, NULL, 0);

	if (rc)
		return rc;
	for (size_t i = 0; i + esize <= got; i += esize)
		n += !memcmp((__u8 *)rp + i + off, &key, sizeof(key));
	free(rp);
	return (int)n;
}

static void b_tries(struct raw *b, const struct objs *o)
{
	struct xhca_qp_attr q = { .qpn = o->qpn, .mask = XHCA_QPA_STATE, .state = XHCA_QPS_INIT };
	struct xhca_stats_req st = { .flags = XHCA_STATS_F_QP, .qpn = o->qpn };
	struct xhca_mr_io io = { .rkey = o->rkey, .len = 16 };
	struct xhca_mr_attr mr = { .alloc = o->alloc, .len = 4096,
				   .access = XHCA_ACCESS_LOCAL_WRITE };
	struct xhca_qp_attr q2 = { .type = XHCA_QPT_UD, .cq = o->cq, .rq_depth = 4 };
	struct xhca_filter f = { .qpn = o->qpn, .f = { .ops = XHCA_PF_OP_SEND, .match_len = 1 } };
	struct xhca_mcast_req mc = { .qpn = o->qpn, .flags = XHCA_MCF_CREATE };

	xhca_ip_parse("239.7.7.7", mc.mgid.gid);
	call(b, XHCA_CTL_PD_ALLOC, NULL, 0, &mr.pd, sizeof(mr.pd), NULL, 0); /* B's own */
	try_op(b, "qp modify", XHCA_CTL_QP_MODIFY, &q, sizeof(q));
	try_op(b, "qp destroy", XHCA_CTL_QP_DESTROY, &o->qpn, sizeof(o->qpn));
	try_op(b, "qp show QPN", XHCA_CTL_QP_SHOW, &o->qpn, sizeof(o->qpn));
	try_op(b, "stats --qp", XHCA_CTL_STATS, &st, sizeof(st));
	try_op(b, "mr dereg", XHCA_CTL_MR_DEREG, &o->rkey, sizeof(o->rkey));
	try_op(b, "mr read", XHCA_CTL_MR_READ, &io, sizeof(io));
	try_op(b, "mr reg in its allocation", XHCA_CTL_MR_REG, &mr, sizeof(mr));
	mr.alloc = 0;
	mr.pd = o->pd;
	try_op(b, "mr reg in its PD", XHCA_CTL_MR_REG, &mr, sizeof(mr));
	try_op(b, "free", XHCA_CTL_FREE, &o->alloc, sizeof(o->alloc));
	try_op(b, "pd dealloc", XHCA_CTL_PD_DEALLOC, &o->pd, sizeof(o->pd));
	try_op(b, "qp create on its CQ", XHCA_CTL_QP_CREATE, &q2, sizeof(q2));
	try_op(b, "cq destroy", XHCA_CTL_CQ_DESTROY, &o->cq, sizeof(o->cq));
	try_op(b, "cq rebind", XHCA_CTL_CQ_REBIND, &o->cq, sizeof(o->cq));
	try_op(b, "filter del", XHCA_CTL_FILTER_DEL, &o->filter, sizeof(o->filter));
	try_op(b, "filter show QPN", XHCA_CTL_FILTER_SHOW, &o->qpn, sizeof(o->qpn));
	try_op(b, "filter add", XHCA_CTL_FILTER_ADD, &f, sizeof(f));
	try_op(b, "mcast attach", XHCA_CTL_MCAST_ATTACH, &mc, sizeof(mc));
	printf("{\"sees\": {\"qps\": %d, \"mrs\": %d, \"cqs\": %d, \"filters\": %d}}\n",
	       view(b, XHCA_CTL_QP_SHOW, NULL, 0, sizeof(struct xhca_qp_info),
		    offsetof(struct xhca_qp_info, attr.qpn), o->qpn),
	       view(b, XHCA_CTL_MR_SHOW, NULL, 0, sizeof(struct xhca_mr_info),
		    offsetof(struct xhca_mr_info, attr.rkey), o->rkey),
	       view(b, XHCA_CTL_CQ_SHOW, NULL, 0, sizeof(struct xhca_cq_info),
		    offsetof(struct xhca_cq_info, cq), o->cq),
	       view(b, XHCA_CTL_FILTER_SHOW, &(__u32){ 0 }, sizeof(__u32),
		    sizeof(struct xhca_filter), offsetof(struct xhca_filter, qpn), o->qpn));
}

/* What only root's client may do, tried by a session. */
static void b_admin(struct raw *b)
{
	struct xhca_flowq_set fs = { .flowq = 0, .weight = 2 };
	struct xhca_proxy_set ps = { .paused = 1 };
	struct xhca_cq_poll cp = { .cq = 1, .max = 1 };
	struct xhca_mcast_req mc = { 0 };
	struct xhca_stats_req st = { .flags = XHCA_STATS_F_RESET };

	xhca_ip_parse("239.7.7.8", mc.mgid.gid);
	try_op(b, "flowq set", XHCA_CTL_FLOWQ_SET, &fs, sizeof(fs));
	try_op(b, "proxy set", XHCA_CTL_PROXY_SET, &ps, sizeof(ps));
	try_op(b, "cq poll", XHCA_CTL_CQ_POLL, &cp, sizeof(cp));
	try_op(b, "mcast create", XHCA_CTL_MCAST_CREATE, &mc, sizeof(mc));
	try_op(b, "mcast destroy", XHCA_CTL_MCAST_DESTROY, &mc, sizeof(mc));
	try_op(b, "stats --reset", XHCA_CTL_STATS, &st, sizeof(st));
}

/* A's objects as A made them: each still in A's views. */
static int intact(struct raw *a, const struct objs *o)
{
	struct xhca_qp_info qi;

	return !call(a, XHCA_CTL_QP_SHOW, &o->qpn, sizeof(o->qpn), &qi, sizeof(qi), NULL, 0) &&
	       qi.attr.state == XHCA_QPS_RESET &&
	       view(a, XHCA_CTL_MR_SHOW, NULL, 0, sizeof(struct xhca_mr_info),
		    offsetof(struct xhca_mr_info, attr.rkey), o->rkey) == 1 &&
	       view(a, XHCA_CTL_CQ_SHOW, NULL, 0, sizeof(struct xhca_cq_info),
		    offsetof(struct xhca_cq_info, cq), o->cq) == 1 &&
	       view(a, XHCA_CTL_FILTER_SHOW, &o->qpn, sizeof(o->qpn), sizeof(struct xhca_filter),
		    offsetof(struct xhca_filter, qpn), o->qpn) == 1;
}

static int mode_isolate(const char *ifname)
{
	struct raw a, b;
	struct objs o = { 0 };
	int rc;

	if (hello(&a, ifname, "iso-a") || hello(&b, ifname, "iso-b")) {
		printf("{\"error\": \"hello\"}\n");
		return 1;
	}
	rc = make_objs(&a, &o);
	printf("{\"a\": {\"rc\": %d, \"qpn\": %u, \"rkey\": %u, \"cq\": %u, \"filter\": %u, "
	       "\"sessions\": [%u, %u]}}\n", rc, o.qpn, o.rkey, o.cq, o.filter, a.session,
	       b.session);
	if (rc)
		return 1;
	b_tries(&b, &o);
	b_admin(&b);
	printf("{\"intact\": %s}\n", intact(&a, &o) ? "true" : "false");
	fflush(stdout);
	close(b.fd);
	close(a.fd);
	return 0;
}

/* ---- fuzz ---------------------------------------------------------------------- */

static unsigned long long rng;

static __u32 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (__u32)(rng >> 11);
}

/* The sizes a request's payload is meant to have, to start a mutation from. */
static const __u32 sizes[] = {
	0, 4, sizeof(struct xhca_qp_attr), sizeof(struct xhca_stats_req), sizeof(struct xhca_hello),
	sizeof(struct xhca_alloc), sizeof(struct xhca_cq_attr), sizeof(struct xhca_flowq_set),
	sizeof(struct xhca_mr_attr), sizeof(struct xhca_mr_io), sizeof(struct xhca_mcast_req),
	sizeof(struct xhca_filter), sizeof(struct xhca_proxy_set), sizeof(struct xhca_cq_poll),
	sizeof(struct xhca_srq_attr),
};

struct fuzz {
	const char *ifname;
	int session, fd;
	unsigned long replies, errors, closed, fds_sent;
};

static int reconnect(struct fuzz *z)
{
	struct raw r = { .fd = -1 };

	if (z->fd >= 0)
		close(z->fd);
	z->closed++;
	if (z->session) {
		hello(&r, z->ifname, "fuzz");
		z->fd = r.fd;
	} else {
		z->fd = xhca_ctl_connect(z->ifname);
	}
	return z->fd < 0 ? -1 : 0;
}

/* Sends hdr + n bytes of p (a descriptor along, sometimes). */
static int send_raw(struct fuzz *z, const struct xhca_ctl_hdr *h, const void *p, size_t n,
		    int pass)
{
	struct iovec iov[2] = { { (void *)h, sizeof(*h) }, { (void *)p, n } };
	char cbuf[CMSG_SPACE(2 * sizeof(int))] = { 0 };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = n ? 2 : 1 };
	int efd[2] = { -1, -1 };
	ssize_t w;

	/* pass descriptors along: one, or (2) two in one message */
	for (int i = 0; i < pass && i < 2; i++)
		efd[i] = eventfd(0, EFD_CLOEXEC);
	if (pass > 0 && efd[0] >= 0 && (pass < 2 || efd[1] >= 0)) {
		struct cmsghdr *c;

		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE((size_t)pass * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)pass * sizeof(int));
		memcpy(CMSG_DATA(c), efd, (size_t)pass * sizeof(int));
		z->fds_sent += (unsigned long)pass;
	}
	w = sendmsg(z->fd, &mh, MSG_NOSIGNAL);
	for (int i = 0; i < 2; i++)
		if (efd[i] >= 0)
			close(efd[i]);
	return w == (ssize_t)(sizeof(*h) + n) ? 0 : -1;
}

/* A reply, if one comes within a second: 1, 0 none, -1 closed. */
static int read_reply(struct fuzz *z)
{
	struct pollfd p = { .fd = z->fd, .events = POLLIN };
	struct xhca_ctl_hdr h;
	void *buf = NULL;
	int rfd = -1, rc;

	if (poll(&p, 1, 1000) <= 0)
		return 0;
	rc = xhca_ctl_recv_fd(z->fd, &h, &buf, &rfd);
	free(buf);
	if (rfd >= 0)
		close(rfd);
	if (rc)
		return -1;
	z->replies++;
	z->errors += h.err != 0;
	return 1;
}

/* One message: mostly a header that is right but for what is mutated, and
 * a payload of a request's size, random or zero with a few bytes set. */
static void one(struct fuzz *z)
{
	static __u8 pl[8192];
	struct xhca_ctl_hdr h = { .magic = XHCA_CTL_MAGIC, .version = XHCA_CTL_VERSION };
	__u32 kind = rnd() % 100, n = sizes[rnd() % (sizeof(sizes) / sizeof(sizes[0]))];
	int truncate = 0;

	h.op = (__u16)(rnd() % (XHCA_CTL_SRQ_DESTROY + 4));
	if (rnd() % 4)
		memset(pl, 0, n);
	else
		for (__u32 i = 0; i < n; i++)
			pl[i] = (__u8)rnd();
	for (int k = rnd() % 4; k > 0 && n; k--)	/* a few fields set */
		pl[rnd() % n] = (__u8)rnd();
	if (kind < 8)
		n = rnd() % sizeof(pl);			/* any size */
	h.len = n;
	if (kind >= 8 && kind < 14)
		h.len = n + 1 + rnd() % 64;		/* says more than comes */
	if (kind >= 14 && kind < 17)
		h.len = kind == 14 ? 0xffffffffu : XHCA_CTL_MAX_PAYLOAD + 1;
	if (kind >= 17 && kind < 20)
		h.magic = rnd();
	if (kind >= 20 && kind < 23)
		h.version = (__u16)rnd();
	if (kind >= 23 && kind < 26) {			/* garbage, no header */
		for (int i = 0; i < 16; i++)
			((__u8 *)&h)[i % sizeof(h)] = (__u8)rnd();
		truncate = 1;
	}
	truncate |= h.len != n;
	if (send_raw(z, &h, pl, n, kind >= 26 && kind < 30 ? 1 + (kind == 29) : 0) || truncate ||
	    read_reply(z) < 0 || h.len > XHCA_CTL_MAX_PAYLOAD) {
		reconnect(z);				/* the connection is done */
		return;
	}
}

static int mode_fuzz(const char *ifname, unsigned long n, unsigned long long seed, int session)
{
	struct fuzz z = { .ifname = ifname, .session = session, .fd = -1 };

	rng = seed ? seed : 1;
	if (reconnect(&z))
		return 1;
	z.closed = 0;
	for (unsigned long i = 0; i < n; i++)
		one(&z);
	close(z.fd);
	printf("{\"sent\": %lu, \"replies\": %lu, \"errors\": %lu, \"connections\": %lu, "
	       "\"fds_sent\": %lu}\n", n, z.replies, z.errors, z.closed + 1, z.fds_sent);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "isolate"))
		return mode_isolate(argv[2]);
	if (argc >= 5 && !strcmp(argv[1], "fuzz"))
		return mode_fuzz(argv[2], strtoul(argv[3], NULL, 0), strtoull(argv[4], NULL, 0),
				 argc > 5 && !strcmp(argv[5], "session"));
	fprintf(stderr, "usage: xhca-ctltest isolate IF | fuzz IF N SEED [session]\n");
	return 2;
}
