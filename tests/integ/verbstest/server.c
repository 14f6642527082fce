/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-verbstest server: the server side of the two-sided cases, on TCP
 * 18600 (the side channel); the client (client.c) names each case.
 */
#include "verbstest.h"

/* The server's "slow" case: a QP whose completions go through a CQ of 4
 * polled late; p->arg messages must all be there, in order, none lost. */
static struct peer serve_slow(struct peer *p, uint8_t *buf, struct ibv_mr *mr)
{
	struct ibv_cq *small = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp *sq = small ? new_qp(IBV_QPT_RC, pd, small) : NULL;
	struct peer q = {}, r = {};
	int n = 0, inorder = 1;

	if (!sq)
		die("slow qp");
	me(sq, &q);
	say(&q);
	hear(p);
	if (to_rts(sq, p, 14, 7, 7))
		die("slow rts");
	for (int i = 0; i < 16; i++)
		post_recv(sq, buf + 7 + 1024 * i, 1024, mr->lkey, (uint64_t)i);
	say(&q); /* ready */
	usleep(300000);
	while (n < p->arg) {
		struct ibv_wc wc = wait_wc(small, 3000);

		if (wc.status != IBV_WC_SUCCESS)
			break;
		inorder &= wc.wr_id == (uint64_t)(n % 16);
		post_recv(sq, buf + 7 + 1024 * (n % 16), 1024, mr->lkey, wc.wr_id);
		n++;
	}
	r.arg = n;
	r.len = (uint32_t)inorder;
	ibv_destroy_qp(sq);
	ibv_destroy_cq(small);
	return r;
}

/* The server's "mcast" case: a UD QP joins 239.1.1.9; the first message
 * must come with the GRH naming the group, then, left, none. */
static struct peer serve_mcast(uint8_t *buf, struct ibv_mr *mr)
{
	struct ibv_cq *c = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp = ud_qp(c, 0x1234);
	struct peer q = {}, p;
	struct ibv_wc wc;
	int ok;

	ok = !ibv_attach_mcast(qp, &mgid, 0);
	post_recv(qp, buf, 2048, mr->lkey, 1);
	post_recv(qp, buf + 2048, 2048, mr->lkey, 2);
	memset(buf, 0, 40 + 100);
	q.qpn = qp->qp_num;
	say(&q);
	hear(&p); /* sent */
	wc = wait_wc(c, 3000);
	q.arg = ok && wc.status == IBV_WC_SUCCESS && wc.byte_len == 40 + 100 &&
		(wc.wc_flags & IBV_WC_GRH) && !memcmp(buf + 20 + 16, &mgid.raw[12], 4) &&
		buf[40] == 0x3c;
	ok = !ibv_detach_mcast(qp, &mgid, 0);
	say(&q);
	hear(&p); /* sent again */
	q.len = ok && (int)wait_wc(c, 500).status < 0; /* nothing for a QP that left */
	ibv_destroy_qp(qp);
	ibv_destroy_cq(c);
	return q;
}

/* What the server has for the case in progress. */
struct srv {
	uint8_t *raw;		/* malloc'd: any memory */
	uint8_t *buf;		/* raw + 7: the region, not aligned */
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	uint8_t *obuf;		/* "ovl": two regions overlapping partly */
	struct ibv_mr *oa, *ob;
};

/* A completion of the case's QP (the flushed buffers of earlier cases'
 * QPs are not news). */
static struct ibv_wc srv_wc(struct srv *v, int ms)
{
	struct ibv_wc wc;

	do
		wc = wait_wc(cq, ms);
	while ((int)wc.status >= 0 && wc.qp_num != v->qp->qp_num);
	return wc;
}

static void srv_drop(struct srv *v)
{
	if (v->qp)
		ibv_destroy_qp(v->qp);
	if (v->mr)
		ibv_dereg_mr(v->mr);
	if (v->oa)
		ibv_dereg_mr(v->oa);
	if (v->ob)
		ibv_dereg_mr(v->ob);
	free(v->raw);
	free(v->obuf);
	*v = (struct srv){};
}

/* Two regions of fresh malloc'd memory registered one after the other:
 * A = [0, 8192), B = [4096, 16384): B's pages partly A's. */
static struct peer srv_ovl(struct srv *v, struct peer *p)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	v->obuf = calloc(1, 20000);
	v->oa = ibv_reg_mr(pd, v->obuf, 8192, acc);
	v->ob = ibv_reg_mr(pd, v->obuf + 4096, 12288, acc);
	if (!v->oa || !v->ob)
		return (struct peer){ .arg = -1 };
	return (struct peer){ .rkey = v->oa->rkey, .len = v->ob->rkey,
			      .addr = (uintptr_t)v->obuf };
}

/* The byte at offset arg of the overlapping regions' memory. */
static struct peer srv_ovlbyte(struct srv *v, struct peer *p)
{
	return (struct peer){ .arg = ((volatile uint8_t *)v->obuf)[p->arg] };
}

static struct peer srv_ovldereg(struct srv *v, struct peer *p)
{
	struct peer r = { .arg = ibv_dereg_mr(v->oa) };

	v->oa = NULL;
	return r;
}

/* A new case: a QP, 64 KiB of malloc'd memory in an MR of the access asked
 * for (arg), len receives of 1024 bytes posted. */
static struct peer srv_setup(struct srv *v, struct peer *p)
{
	struct peer r = {};

	srv_drop(v);
	v->raw = calloc(1, 65536 + 7);
	v->buf = v->raw + 7;
	v->mr = ibv_reg_mr(pd, v->buf, 65536, IBV_ACCESS_LOCAL_WRITE | p->arg);
	v->qp = new_qp(IBV_QPT_RC, pd, cq);
	if (!v->mr || !v->qp)
		die("server setup");
	me(v->qp, &r);
	r.rkey = v->mr->rkey;
	r.addr = (uintptr_t)v->buf;
	/* (the client's rkey, unused otherwise: its QP access, 0x100 set) */
	qp_access = (p->rkey & 0x100) ? (int)(p->rkey & 0xff) : IBV_ACCESS_REMOTE_WRITE |
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if (to_rts(v->qp, p, 14, 7, 7))
		die("server rts");
	for (uint32_t i = 0; i < p->len; i++)
		post_recv(v->qp, v->buf + 1024 * i, 1024, v->mr->lkey, i);
	return r;
}

/* The byte at offset arg, as the application reads it: no verb call
 * between the WRITE and this load. */
static struct peer srv_byte(struct srv *v, struct peer *p)
{
	return (struct peer){ .arg = ((volatile uint8_t *)v->buf)[p->arg] };
}

static struct peer srv_wc_cmd(struct srv *v, struct peer *p)
{
	struct ibv_wc wc = srv_wc(v, p->arg);

	return (struct peer){ .arg = (int32_t)wc.status, .len = wc.byte_len };
}

/* The async event of the case's QP, within a second (the port's, as it
 * came up, are not the case's). */
static struct peer srv_async(struct srv *v, struct peer *p)
{
	struct pollfd pf = { .fd = ctx->async_fd, .events = POLLIN };
	struct peer r = { .arg = -1 };
	struct ibv_async_event ev;

	while (r.arg < 0 && poll(&pf, 1, 1000) == 1 && !ibv_get_async_event(ctx, &ev)) {
		if (ev.event_type != IBV_EVENT_PORT_ACTIVE && ev.event_type != IBV_EVENT_PORT_ERR) {
			r.arg = (int32_t)ev.event_type;
			r.len = ev.element.qp == v->qp;
		}
		ibv_ack_async_event(&ev);
	}
	return r;
}

/* A receive of three pieces apart: 1000 + 1000 + 1500 bytes. */
static struct peer srv_sgl(struct srv *v, struct peer *p)
{
	struct ibv_sge g[3] = {
		{ (uintptr_t)v->buf, 1000, v->mr->lkey },
		{ (uintptr_t)(v->buf + 5000), 1000, v->mr->lkey },
		{ (uintptr_t)(v->buf + 20000), 1500, v->mr->lkey },
	};
	struct ibv_recv_wr w = { .wr_id = 77, .sg_list = g, .num_sge = 3 }, *bad;

	memset(v->buf, 0, 65536);
	return (struct peer){ .arg = ibv_post_recv(v->qp, &w, &bad) };
}

/* ... what came into it: each piece in turn, nothing between them. */
static struct peer srv_sglcheck(struct srv *v, struct peer *p)
{
	struct ibv_wc wc = srv_wc(v, 2000);
	int ok = 1;

	for (int i = 0; i < 3000; i++) {
		size_t at = i < 1000 ? (size_t)i : i < 2000 ? (size_t)(5000 + i - 1000)
							: (size_t)(20000 + i - 2000);

		ok &= v->buf[at] == (uint8_t)(i * 7 + 1);
	}
	return (struct peer){
		.arg = wc.status == IBV_WC_SUCCESS && wc.wr_id == 77 && wc.byte_len == 3000 && ok,
		.len = v->buf[1000] == 0 && v->buf[20000 + 1000] == 0,
	};
}

static struct peer srv_slow(struct srv *v, struct peer *p)
{
	return serve_slow(p, v->buf, v->mr);
}

static struct peer srv_mcast(struct srv *v, struct peer *p)
{
	return serve_mcast(v->buf, v->mr);
}

/* A receive whose lkey is another's. */
static struct peer srv_badrecv(struct srv *v, struct peer *p)
{
	return (struct peer){ .arg = post_recv(v->qp, v->buf, 1024, v->mr->lkey + 0x100, 99) };
}

static struct peer srv_dereg(struct srv *v, struct peer *p)
{
	struct peer r = { .arg = ibv_dereg_mr(v->mr) };

	v->mr = NULL;
	return r;
}

/* arg SENDs of 8 bytes to the case's peer, each acknowledged (the count
 * of successful completions back). */
static struct peer srv_sends(struct srv *v, struct peer *p)
{
	struct peer r = {};

	for (int i = 0; i < p->arg; i++)
		if (post(v->qp, IBV_WR_SEND, v->buf + 60000, 8, v->mr->lkey, 0, 0, 50 + i))
			return r;
	for (int i = 0; i < p->arg; i++)
		r.arg += srv_wc(v, 5000).status == IBV_WC_SUCCESS;
	return r;
}

static struct peer srv_kill(struct srv *v, struct peer *p)
{
	struct peer r = { .arg = ibv_destroy_qp(v->qp) };

	v->qp = NULL;
	return r;
}

/* The server: for each case the client names ("setup"), a QP and a region;
 * then it answers the client's questions about its memory, completions and
 * events, or does what the case asks of its side. */
static const struct {
	const char *cmd;
	struct peer (*fn)(struct srv *v, struct peer *p);
} srv_cmds[] = {
	{ "setup", srv_setup }, { "byte", srv_byte }, { "wc", srv_wc_cmd },
	{ "slow", srv_slow }, { "async", srv_async }, { "sgl", srv_sgl },
	{ "sglcheck", srv_sglcheck }, { "mcast", srv_mcast }, { "badrecv", srv_badrecv },
	{ "dereg", srv_dereg }, { "kill", srv_kill }, { "ovl", srv_ovl },
	{ "ovlbyte", srv_ovlbyte }, { "ovldereg", srv_ovldereg }, { "sends", srv_sends },
};

int server(void)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	struct srv v = {};

	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1))
		die("listen");
	sock = accept(ls, NULL, NULL);
	if (sock < 0)
		die("accept");
	for (;;) {
		struct peer p, r = {};

		hear(&p);
		if (!strcmp(p.cmd, "bye"))
			break;
		for (size_t i = 0; i < sizeof(srv_cmds) / sizeof(srv_cmds[0]); i++)
			if (!strcmp(p.cmd, srv_cmds[i].cmd))
				r = srv_cmds[i].fn(&v, &p);
		say(&r);
	}
	srv_drop(&v);
	return 0;
}
