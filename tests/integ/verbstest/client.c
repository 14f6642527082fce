/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-verbstest client SERVER_IP: the two-sided cases, each with a QP and
 * a region of the server's (server.c): data, the work request API, split
 * CQs, multicast, overlapping regions, local, remote access and responder
 * errors, a peer gone.
 */
#include "verbstest.h"

struct cside {
	struct ibv_qp *qp;
	struct peer srv;
	uint8_t *buf;
	struct ibv_mr *mr;
	struct ibv_mr *omr;	/* of another PD */
	uint64_t *word;		/* an ATOMIC's result */
	uint64_t waddr;		/* an 8-byte aligned word of the server's region */
};

static struct peer ask(const char *cmd, int arg)
{
	struct peer p = { .arg = arg };

	snprintf(p.cmd, sizeof(p.cmd), "%s", cmd);
	say(&p);
	hear(&p);
	return p;
}

/* The server's answer to "setup": its new region (at a new address: a
 * freed buffer need not come back at the same place, as under ASan's
 * quarantine), and the 8-byte aligned word in it the ATOMICs use. */
static void hear_srv(struct cside *c)
{
	hear(&c->srv);
	c->waddr = (c->srv.addr + 71) & ~7ull;
}

/* A fresh pair: the server's buffer registered with access, nrecv receives
 * posted there; the client's QP with these retry settings. */
static void pair_qp(struct cside *c, int access, int srv_qp_access, int nrecv, uint8_t timeout,
		    uint8_t retry, uint8_t rnr)
{
	struct peer p = { .arg = access, .len = (uint32_t)nrecv };

	if (c->qp)
		ibv_destroy_qp(c->qp);
	c->qp = new_qp(IBV_QPT_RC, pd, cq);
	if (!c->qp)
		die("client qp");
	me(c->qp, &p);
	if (srv_qp_access >= 0)
		p.rkey = 0x100 | (uint32_t)srv_qp_access;
	snprintf(p.cmd, sizeof(p.cmd), "setup");
	say(&p);
	hear_srv(c);
	if (to_rts(c->qp, &c->srv, timeout, retry, rnr))
		die("client rts");
}

/* a QP pair with the server's region of access (its QP allowing all) */
static void pair(struct cside *c, int access, int nrecv, uint8_t timeout, uint8_t retry,
		 uint8_t rnr)
{
	pair_qp(c, access, -1, nrecv, timeout, retry, rnr);
}

static void expect(struct cside *c, const char *what, enum ibv_wc_status want, int ms)
{
	struct ibv_wc wc = wait_wc(cq, ms);

	check(wc.status == want, "%s: %s (got %s, vendor_err 0x%x)", what,
	      ibv_wc_status_str(want), (int)wc.status < 0 ? "nothing" : ibv_wc_status_str(wc.status),
	      wc.vendor_err);
}

/* What arrives: a WRITE seen by a plain load, FETCH_ADD and READ. */
static void client_data(struct cside *c)
{
	struct peer r;

	/* a WRITE lands in the server's malloc'd buffer, seen by a plain load */
	pair(c, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, 2,
	     14, 7, 7);
	fill(c->buf, 65536, 5);
	post(c->qp, IBV_WR_RDMA_WRITE, c->buf, 65536, c->mr->lkey, c->srv.addr, c->srv.rkey, 1);
	expect(c, "RDMA WRITE of 64 KiB", IBV_WC_SUCCESS, 5000);
	r = ask("byte", 65535);
	check(r.arg == c->buf[65535], "the server reads the WRITE's last byte in its own buffer "
	      "(0x%02x), no verb call", r.arg);
	c->word = (uint64_t *)(c->buf + 1024);
	post(c->qp, IBV_WR_ATOMIC_FETCH_AND_ADD, c->word, 8, c->mr->lkey, c->waddr, c->srv.rkey, 2);
	expect(c, "FETCH_AND_ADD", IBV_WC_SUCCESS, 5000);
	post(c->qp, IBV_WR_RDMA_READ, c->buf + 2048, 8, c->mr->lkey, c->waddr, c->srv.rkey, 3);
	expect(c, "READ back", IBV_WC_SUCCESS, 5000);
	check(*(uint64_t *)(c->buf + 2048) == *c->word + 5,
	      "FETCH_AND_ADD returned the old c->word, the c->word grew by 5");
}

/* A QP with a send CQ and a receive CQ of its own, the receive CQ full
 * (the server's SENDs, not polled), the application polling its send CQ
 * for its own SEND: the ACK is not held back behind the full receive CQ
 * (perftest's exchange over rdma_cm waits so, with one-entry CQs). */
static void client_cq_split(struct cside *c)
{
	struct ibv_cq *scq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = { .send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 64,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct peer p = { .len = 1 }, r;
	struct ibv_qp *qp = scq && rcq ? ibv_create_qp(pd, &ia) : NULL;
	struct ibv_wc wc;
	int n, got = 0;

	if (!qp)
		die("split CQ qp");
	me(qp, &p);
	snprintf(p.cmd, sizeof(p.cmd), "setup");
	say(&p);
	hear_srv(c);
	if (to_rts(qp, &c->srv, 14, 3, 7))
		die("split CQ rts");
	n = rcq->cqe < 64 ? rcq->cqe : 64;
	for (int i = 0; i < n; i++)
		post_recv(qp, c->buf + 1024 * i, 1024, c->mr->lkey, 100 + i);
	r = ask("sends", n);
	check(r.arg == n, "the server's %d SENDs acknowledged: the receive CQ (%d entries) full, "
	      "not polled", r.arg, rcq->cqe);
	post(qp, IBV_WR_SEND, c->buf + 60000, 8, c->mr->lkey, 0, 0, 7);
	wc = wait_wc(scq, 5000);
	check(wc.status == IBV_WC_SUCCESS && wc.wr_id == 7, "our SEND completes on the send CQ "
	      "meanwhile (got %s)", (int)wc.status < 0 ? "nothing" : ibv_wc_status_str(wc.status));
	while (got < n + 1 && ibv_poll_cq(rcq, 1, &wc) == 1)
		got += wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV;
	check(got == n, "then the receive CQ: the %d receives (%d)", n, got);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
}

/* The extended post API. */
static void client_wr_api(struct cside *c)
{
	struct peer r;

	/* the extended post API: a WRITE, an inline SEND, a FETCH_ADD in one
	 * batch, on a QP made with send ops flags */
	{
		struct ibv_qp_init_attr_ex ia = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
				 .max_recv_sge = 1, .max_inline_data = 64 },
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.pd = pd,
			.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND |
					  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
		};
		struct ibv_qp *q2 = ibv_create_qp_ex(ctx, &ia);
		struct ibv_qp_ex *x = q2 ? ibv_qp_to_qp_ex(q2) : NULL;
		int n = 0, good = 0, err;

		check(x != NULL && ibv_qp_to_qp_ex(c->qp) == NULL,
		      "ibv_qp_to_qp_ex: the QP made with send ops flags has the wr_* API, "
		      "an ibv_create_qp one not");
		if (x) {
			struct peer p = { .arg = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
					  .len = 2 };

			ibv_destroy_qp(c->qp);
			c->qp = q2;
			me(q2, &p);
			snprintf(p.cmd, sizeof(p.cmd), "setup");
			say(&p);
			hear_srv(c);
			if (to_rts(q2, &c->srv, 14, 7, 7))
				die("wr qp rts");
			fill(c->buf, 4096, 11);
			ibv_wr_start(x);
			x->wr_id = 31;
			x->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_rdma_write(x, c->srv.rkey, c->srv.addr + 8192);
			ibv_wr_set_sge(x, c->mr->lkey, (uintptr_t)c->buf, 4096);
			x->wr_id = 32;
			ibv_wr_send(x);
			ibv_wr_set_inline_data(x, "inline!", 8);
			x->wr_id = 33;
			ibv_wr_atomic_fetch_add(x, c->srv.rkey, c->waddr, 3);
			ibv_wr_set_sge(x, c->mr->lkey, (uintptr_t)c->word, 8);
			err = ibv_wr_complete(x);
			for (n = 0; n < 3; n++) {
				struct ibv_wc w = wait_wc(cq, 5000);

				good += w.status == IBV_WC_SUCCESS && w.wr_id == (uint64_t)(31 + n);
			}
			r = ask("byte", 8192 + 4095);
			check(!err && good == 3 && r.arg == c->buf[4095],
			      "ibv_wr_*: WRITE, inline SEND and FETCH_ADD in one batch: %d of 3 "
			      "completed in order, the WRITE's last byte there", good);
			r = ask("wc", 2000);
			check(r.arg == IBV_WC_SUCCESS && r.len == 8, "... the SEND arrived, 8 bytes");
			ibv_wr_start(x);
			ibv_wr_send(x);
			ibv_wr_set_inline_data(x, c->buf, 65); /* over the QP's 64 */
			check(ibv_wr_complete(x) == EINVAL && (int)wait_wc(cq, 200).status < 0,
			      "ibv_wr_complete of a batch with inline data over max_inline_data: "
			      "EINVAL, nothing posted");
		}
	}
}

/* WRITE through a region, on pages a later region took in: each region
 * writes where the application reads, before and after the other goes. */
static int ovl_write(struct cside *c, uint32_t rkey, uint64_t addr, uint8_t v, uint64_t id)
{
	memset(c->buf, v, 4);
	return !post(c->qp, IBV_WR_RDMA_WRITE, c->buf, 4, c->mr->lkey, addr, rkey, id) &&
	       wait_wc(cq, 3000).status == IBV_WC_SUCCESS;
}

static void client_overlap(struct cside *c)
{
	struct peer o, r;
	int ok;

	pair(c, IBV_ACCESS_REMOTE_WRITE, 0, 14, 7, 7);
	o = ask("ovl", 0);
	check(o.arg == 0, "the server registers B over pages of its region A and past them");
	ok = ovl_write(c, o.rkey, o.addr + 100, 0x11, 50) &&
	     ovl_write(c, o.rkey, o.addr + 5000, 0x33, 51) &&
	     ovl_write(c, o.len, o.addr + 12000, 0x22, 52);
	r = ask("ovlbyte", 100);
	ok &= r.arg == 0x11;
	r = ask("ovlbyte", 5000);
	ok &= r.arg == 0x33;
	r = ask("ovlbyte", 12000);
	check(ok && r.arg == 0x22, "WRITEs through A (alone and on the shared pages) and B: each "
	      "where the server reads");
	ask("ovldereg", 0);
	ok = ovl_write(c, o.len, o.addr + 5004, 0x44, 53);
	r = ask("ovlbyte", 5004);
	check(ok && r.arg == 0x44, "A deregistered: a WRITE through B on the pages they shared "
	      "still lands");
}

/* UD to a multicast group: the server's QP attached gets it with the
 * group's GRH; detached, it gets nothing. */
static void client_mcast(struct cside *c)
{
	struct ibv_qp *qp = ud_qp(cq, 0x77);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = mgid, .sgid_index = GIDX, .hop_limit = 8 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	struct ibv_sge g = { .addr = (uintptr_t)c->buf, .length = 100, .lkey = c->mr->lkey };
	struct ibv_send_wr w = { .wr_id = 40, .sg_list = &g, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct peer p = { .cmd = "mcast" }, r;
	int sent;

	memset(c->buf, 0x3c, 100);
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = 0xffffff;
	w.wr.ud.remote_qkey = 0x1234;
	say(&p);
	hear(&r); /* its QP joined */
	sent = ah && !ibv_post_send(qp, &w, &bad) && wait_wc(cq, 3000).status == IBV_WC_SUCCESS;
	say(&p);
	hear(&r);
	check(sent && r.arg == 1, "UD SEND to 239.1.1.9: the attached QP got it, its GRH "
	      "naming the group");
	w.wr_id = 41;
	sent = !ibv_post_send(qp, &w, &bad) && wait_wc(cq, 3000).status == IBV_WC_SUCCESS;
	say(&p);
	hear(&r);
	check(sent && r.len == 1, "after ibv_detach_mcast: nothing for that QP");
	check(ibv_attach_mcast(c->qp, &mgid, 0) == EINVAL, "attach_mcast of an RC QP: EINVAL");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
}

/* What the requester refuses: LOC_PROT_ERR and the flush after it. */
static void client_local_errors(struct cside *c)
{
	struct peer r;

	/* an ATOMIC on an address not 8-byte aligned */
	pair(c, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC, 2, 14, 7, 7);
	post(c->qp, IBV_WR_ATOMIC_CMP_AND_SWP, c->word, 8, c->mr->lkey, c->waddr + 4, c->srv.rkey, 21);
	expect(c, "CMP_AND_SWP on an address 4 bytes off alignment", IBV_WC_REM_INV_REQ_ERR,
	       3000);
	r = ask("async", 0);
	check(r.arg == IBV_EVENT_QP_REQ_ERR && r.len == 1, "... the responder's application: "
	      "async event %s for its QP", r.arg < 0 ? "none" :
	      ibv_event_type_str((enum ibv_event_type)r.arg));

	/* a SEND from memory of another PD */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 2, 14, 7, 7);
	post(c->qp, IBV_WR_SEND, c->buf + 65536, 64, c->omr->lkey, 0, 0, 4);
	expect(c, "SEND with an lkey of another PD", IBV_WC_LOC_PROT_ERR, 2000);
	post(c->qp, IBV_WR_SEND, c->buf, 64, c->mr->lkey, 0, 0, 5);
	expect(c, "the next request after the error", IBV_WC_WR_FLUSH_ERR, 2000);
	check(qp_state(c->qp) == IBV_QPS_ERR, "the QP is in the error state");

	/* an SGE beyond its region */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 2, 14, 7, 7);
	post(c->qp, IBV_WR_SEND, c->buf + 69000, 2000, c->mr->lkey, 0, 0, 6);
	expect(c, "SEND whose SGE runs past its region", IBV_WC_LOC_PROT_ERR, 2000);
}

/* What the responder refuses: REM_ACCESS_ERR. */
static void client_remote_access(struct cside *c)
{
	struct peer r;

	/* the server's region has no remote write */
	pair(c, IBV_ACCESS_REMOTE_READ, 2, 14, 7, 7);
	post(c->qp, IBV_WR_RDMA_WRITE, c->buf, 64, c->mr->lkey, c->srv.addr, c->srv.rkey, 7);
	expect(c, "WRITE to a region without remote write", IBV_WC_REM_ACCESS_ERR, 3000);
	r = ask("byte", 0);
	check(r.arg == 0, "nothing was written there");
	r = ask("async", 0);
	check(r.arg == IBV_EVENT_QP_ACCESS_ERR && r.len == 1, "... the responder's application: "
	      "async event %s for its QP", r.arg < 0 ? "none" :
	      ibv_event_type_str((enum ibv_event_type)r.arg));

	pair(c, IBV_ACCESS_REMOTE_WRITE, 2, 14, 7, 7);
	post(c->qp, IBV_WR_RDMA_WRITE, c->buf, 64, c->mr->lkey, c->srv.addr + 65536 - 32, c->srv.rkey, 8);
	expect(c, "WRITE past the end of the region", IBV_WC_REM_ACCESS_ERR, 3000);

	pair(c, IBV_ACCESS_REMOTE_WRITE, 2, 14, 7, 7);
	post(c->qp, IBV_WR_RDMA_WRITE, c->buf, 64, c->mr->lkey, c->srv.addr, c->srv.rkey ^ 0x5500, 9);
	expect(c, "WRITE with a wrong R_Key", IBV_WC_REM_ACCESS_ERR, 3000);

	/* the region allows it, the server's QP (qp_access_flags) does not:
	 * NAKed invalid request, as RXE */
	pair_qp(c, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_READ, 2, 14,
		7, 7);
	post(c->qp, IBV_WR_RDMA_WRITE, c->buf, 64, c->mr->lkey, c->srv.addr, c->srv.rkey, 10);
	expect(c, "WRITE to a QP without remote write (qp_access_flags)", IBV_WC_REM_INV_REQ_ERR,
	       3000);
	r = ask("byte", 0);
	check(r.arg == 0, "nothing was written there");
	pair_qp(c, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_WRITE, 2, 14,
		7, 7);
	post(c->qp, IBV_WR_RDMA_READ, c->buf, 64, c->mr->lkey, c->srv.addr, c->srv.rkey, 11);
	expect(c, "READ from a QP without remote read", IBV_WC_REM_INV_REQ_ERR, 3000);
}

/* A SEND too long for the receive, none posted, a slow receiver. */
static void client_responder_errors(struct cside *c)
{
	struct peer r;

	/* a SEND longer than the server's receive buffer (1024) */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 2, 14, 7, 7);
	post(c->qp, IBV_WR_SEND, c->buf, 3000, c->mr->lkey, 0, 0, 10);
	expect(c, "SEND longer than the receive buffer", IBV_WC_REM_INV_REQ_ERR, 3000);
	r = ask("wc", 2000);
	check(r.arg == IBV_WC_LOC_LEN_ERR, "... the receiver: %s",
	      ibv_wc_status_str((enum ibv_wc_status)r.arg));

	/* no receive posted: RNR NAKs, one retry */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 0, 14, 7, 1);
	post(c->qp, IBV_WR_SEND, c->buf, 100, c->mr->lkey, 0, 0, 11);
	expect(c, "SEND with no receive posted, rnr_retry 1", IBV_WC_RNR_RETRY_EXC_ERR, 5000);

	/* 48 SENDs into a receiver whose CQ has 4 entries and is polled late:
	 * xhca holds the QP's frames back (no CQ overrun), nothing is lost */
	{
		struct ibv_qp *q2 = new_qp(IBV_QPT_RC, pd, cq);
		struct peer p = { .arg = 48 }, s2;
		int ok = 1;

		snprintf(p.cmd, sizeof(p.cmd), "slow");
		say(&p);
		hear(&s2);
		me(q2, &p);
		say(&p);
		if (to_rts(q2, &s2, 14, 7, 7))
			die("slow client rts");
		hear(&s2); /* its receives are posted */
		for (int i = 0; i < 48 && ok; i++) {
			ok = !post(q2, IBV_WR_SEND, c->buf, 100, c->mr->lkey, 0, 0, 100 + i) &&
			     wait_wc(cq, 5000).status == IBV_WC_SUCCESS;
		}
		hear(&r);
		check(ok && r.arg == 48 && r.len == 1, "48 SENDs through a receiver's CQ of 4 "
		      "polled late: %d received, in order: %s", r.arg, r.len ? "yes" : "no");
		ibv_destroy_qp(q2);
	}
}

/* A bad receive lkey, a deregistered region, a peer QP gone. */
static void client_gone(struct cside *c)
{
	struct peer r;
	struct ibv_wc wc;

	/* a receive's scatter list of three pieces apart */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 0, 14, 7, 7);
	r = ask("sgl", 0);
	check(r.arg == 0, "post_recv with a scatter list of 3 pieces apart: accepted");
	for (int i = 0; i < 3000; i++)
		c->buf[i] = (uint8_t)(i * 7 + 1);
	post(c->qp, IBV_WR_SEND, c->buf, 3000, c->mr->lkey, 0, 0, 15);
	expect(c, "SEND of 3000 bytes into it", IBV_WC_SUCCESS, 3000);
	r = ask("sglcheck", 0);
	check(r.arg == 1 && r.len == 1, "the receiver: one completion of 3000 bytes, each piece "
	      "filled in turn, nothing between them");

	/* a receive whose lkey is not the server's */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 0, 14, 7, 7);
	r = ask("badrecv", 0);
	check(r.arg == 0, "post_recv with a wrong lkey: accepted (reported when used)");
	post(c->qp, IBV_WR_SEND, c->buf, 100, c->mr->lkey, 0, 0, 12);
	r = ask("wc", 2000);
	check(r.arg == IBV_WC_LOC_PROT_ERR, "... a message for it: the receiver gets %s",
	      (int)r.arg < 0 ? "nothing" : ibv_wc_status_str((enum ibv_wc_status)r.arg));
	wc = wait_wc(cq, 3000);
	check(wc.status != IBV_WC_SUCCESS && (int)wc.status >= 0, "... the sender gets an error "
	      "(%s)", (int)wc.status < 0 ? "nothing" : ibv_wc_status_str(wc.status));

	/* after ibv_dereg_mr no remote byte reaches the memory */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 0, 14, 7, 7);
	r = ask("dereg", 0);
	check(r.arg == 0, "the server deregisters its region");
	post(c->qp, IBV_WR_RDMA_WRITE, c->buf, 64, c->mr->lkey, c->srv.addr, c->srv.rkey, 13);
	expect(c, "WRITE to a deregistered region", IBV_WC_REM_ACCESS_ERR, 3000);
	r = ask("byte", 0);
	check(r.arg == 0, "its memory is unchanged");

	/* the peer's QP gone: no answer, transport retries exceeded */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 2, 8, 1, 7);
	ask("kill", 0);
	post(c->qp, IBV_WR_SEND, c->buf, 100, c->mr->lkey, 0, 0, 14);
	expect(c, "SEND to a QP destroyed meanwhile (timeout 8, retry 1)", IBV_WC_RETRY_EXC_ERR,
	       5000);
}

int client(const char *ip)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	struct peer bye = { .cmd = "bye" };
	struct ibv_pd *other = ibv_alloc_pd(ctx);
	struct cside c = {};

	inet_pton(AF_INET, ip, &sa.sin_addr);
	sock = socket(AF_INET, SOCK_STREAM, 0);
	for (int i = 0; i < 100 && connect(sock, (struct sockaddr *)&sa, sizeof(sa)); i++)
		usleep(100000);
	c.buf = malloc(70000);
	c.mr = ibv_reg_mr(pd, c.buf, 70000, IBV_ACCESS_LOCAL_WRITE);
	c.omr = ibv_reg_mr(other, c.buf + 65536, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!c.mr || !c.omr)
		die("client mr");
	client_data(&c);
	client_wr_api(&c);
	client_cq_split(&c);
	client_mcast(&c);
	client_overlap(&c);
	client_local_errors(&c);
	client_remote_access(&c);
	client_responder_errors(&c);
	client_gone(&c);
	say(&bye);
	ibv_destroy_qp(c.qp);
	ibv_dereg_mr(c.mr);
	ibv_dereg_mr(c.omr);
	ibv_dealloc_pd(other);
	free(c.buf);
	return 0;
}
