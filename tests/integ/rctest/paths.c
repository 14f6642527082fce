/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-rctest paths: FENCE, SOLICITED and max_rd_atomic (the test checks
 * its captures), BAD_RESP_ERR (the test injects the NAK), a READ's buffer
 * freed before its response; pauses for the test. xhca-rctest restart:
 * every RC operation both ways, xhcad on A restarted (--keep) by the test
 * in between; a request in flight across a restart: flushed.
 * xhca-rctest credits: end-to-end credits (scen_credits says how).
 */
#include "rctest.h"

/* Waits for the test's go (a line on stdin) after saying what it waits for. */
static void pause_for(const char *what)
{
	char line[64];

	printf("# pause: %s\n", what);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		exit(2);
}

/* A 128 KiB READ and a 64-byte SEND (with flags) posted in one call, so
 * that xhcad finds both at once (two posts race a slow program: the SEND
 * could come when the READ's responses were in); the READ spans fewer PSNs
 * than the requester's window, which lets a SEND without FENCE go at once.
 * With what, a pause once both are posted (the test lifts its cut of the
 * link then). When the READ completed on a, when the SEND arrived at b
 * (both CLOCK_MONOTONIC). */
static void read_then_send(struct side *a, struct side *b, unsigned int flags, const char *what,
			   __u64 *t_read, __u64 *t_recv)
{
	const size_t n = 128u << 10;
	struct xhca_sge gr = { .addr = (uintptr_t)(a->buf + a->half), .length = (__u32)n };
	struct xhca_sge gs = { .addr = (uintptr_t)a->buf, .length = 64 };
	struct xhca_send_wr send = { .wr_id = 81, .sg_list = &gs, .num_sge = 1,
				     .opcode = XHCA_WR_SEND,
				     .send_flags = XHCA_SEND_SIGNALED | flags };
	struct xhca_send_wr rd = { .wr_id = 80, .sg_list = &gr, .num_sge = 1,
				   .opcode = XHCA_WR_RDMA_READ, .send_flags = XHCA_SEND_SIGNALED,
				   .next = &send };
	struct xhca_wc wc;
	int ok;

	fill(b->buf, n, 77);
	xhca_post_recv(b->qp, 5, b->buf + b->half, 64);
	rd.wr.rdma.remote_addr = (uintptr_t)b->buf;
	rd.wr.rdma.rkey = xhca_mr_rkey(b->mr);
	if (xhca_post_send(a->qp, &rd, NULL))
		die(a, "post READ and SEND");
	if (what)
		pause_for(what);
	ok = !wait_wc(a->scq, &wc) && wc.wr_id == 80 && !wc.status;
	*t_read = wc.rx_ns;
	ok = ok && !wait_wc(a->scq, &wc) && wc.wr_id == 81 && !wc.status;
	ok = ok && !wait_wc(b->rcq, &wc) && !wc.status;
	*t_recv = wc.rx_ns;
	check(ok && first_bad(a->buf + a->half, n, 77) == n,
	      "READ then SEND%s: both complete, the READ's data right", flags ? " with FENCE" : "");
}

static void reads(struct side *a, struct side *b, int n, size_t size, const char *what)
{
	int good = 0;

	fill(b->buf, (size_t)n * size, 88);
	memset(a->buf + a->half, 0, (size_t)n * size);
	for (int i = 0; i < n; i++)
		post(a, XHCA_WR_RDMA_READ, 200 + (__u64)i, a->buf + a->half + i * size, (__u32)size,
		     (uintptr_t)(b->buf + i * size), xhca_mr_rkey(b->mr), 0, XHCA_SEND_SIGNALED);
	for (int i = 0; i < n; i++) {
		struct xhca_wc wc;

		good += !wait_wc(a->scq, &wc) && wc.wr_id == 200 + (__u64)i && !wc.status;
	}
	check(good == n && first_bad(a->buf + a->half, (size_t)n * size, 88) == (size_t)n * size,
	      "%s: %d READs of %zu B complete, in order, every byte right", what, good, size);
}

void scen_paths(struct side *a, struct side *b)
{
	struct xhca_qp_attr at = {};
	__u64 tr, tv;
	struct xhca_wc wc;
	int r;

	side_open(a, XHCA_QPT_RC, (4u << 20) + 4096);
	side_open(b, XHCA_QPT_RC, (4u << 20) + 4096);
	connect_pair(a, b, 1024);

	/* FENCE: the SEND waits for the READ before it; without, it goes.
	 * Where the SEND request is on the wire against the READ's responses
	 * is the shell's check (captures). Without FENCE the test cuts the
	 * link while both are posted, so no response can come: what a sends
	 * then is the requester's doing alone, whatever the two hosts'
	 * threads were given of the CPUs (the READ's requests, then the
	 * SEND; held, it would follow the responses). The timeout outlasts
	 * the cut, so the READ is sent again once, after it. With FENCE, b
	 * can only see the SEND after a completed the READ (cause and
	 * effect). The READ's requests on the wire at once (max_rd_atomic
	 * 128): without FENCE the SEND follows them at once. */
	at.max_rd_atomic = XHCA_MAX_RD_ATOMIC;
	if (modify(a, XHCA_QPA_MAX_RD_ATOMIC, &at))
		die(a, "max_rd_atomic");
	set_attr(a, XHCA_QPA_TIMEOUT, 18, 0, 0); /* 1.07 s */
	pause_for("cut the link, capture READ then SEND without FENCE");
	read_then_send(a, b, 0, "lift the cut, capture READ then SEND with FENCE", &tr, &tv);
	printf("# without FENCE: the SEND arrived %lld us after the READ completed\n",
	       ((long long)tv - (long long)tr) / 1000);
	set_attr(a, XHCA_QPA_TIMEOUT, XHCA_TIMEOUT_DEFAULT, 0, 0);
	read_then_send(a, b, XHCA_SEND_FENCE, NULL, &tr, &tv);
	check(tv > tr, "with FENCE the SEND is sent after the READ completed (%lld us after)",
	      ((long long)tv - (long long)tr) / 1000);

	/* SOLICITED: the shell counts the SE bits of the capture */
	pause_for("capture the SOLICITED SENDs and max_rd_atomic 1");
	for (int i = 0; i < 3; i++) {
		xhca_post_recv(b->qp, 6, b->buf + b->half, 64);
		post(a, XHCA_WR_SEND, 90 + (__u64)i, a->buf, 64, 0, 0, 0,
		     XHCA_SEND_SIGNALED | (i == 1 ? XHCA_SEND_SOLICITED : 0));
		r = wait_wc(a->scq, &wc) || wait_wc(b->rcq, &wc);
		check(!r, "SEND %d of 3%s delivered", i + 1, i == 1 ? " (SOLICITED)" : "");
	}
	/* max_rd_atomic 1: one READ request on the wire at a time */
	at.max_rd_atomic = 1;
	if (modify(a, XHCA_QPA_MAX_RD_ATOMIC, &at))
		die(a, "max_rd_atomic");
	reads(a, b, 4, 256 << 10, "max_rd_atomic 1");
	pause_for("a second capture: max_rd_atomic 16");
	at.max_rd_atomic = 16;
	if (modify(a, XHCA_QPA_MAX_RD_ATOMIC, &at))
		die(a, "max_rd_atomic");
	reads(a, b, 4, 256 << 10, "max_rd_atomic 16");

	/* A NAK with a code RC does not know (0x64, invalid RD request):
	 * BAD_RESP_ERR, the NAK's syndrome in vendor_err, the rest flushed */
	set_attr(a, XHCA_QPA_TIMEOUT, 21, 0, 0);
	pause_for("cut the link");
	if (xhca_qp_query(a->qp, &at))
		die(a, "query");
	post(a, XHCA_WR_SEND, 95, a->buf, 100, 0, 0, 0, XHCA_SEND_SIGNALED);
	post(a, XHCA_WR_SEND, 96, a->buf, 100, 0, 0, 0, XHCA_SEND_SIGNALED);
	printf("# inject qpn 0x%06x psn %u\n", xhca_qp_num(a->qp), at.sq_psn);
	pause_for("inject the NAK");
	r = wait_wc(a->scq, &wc);
	check(!r && wc.wr_id == 95 && wc.status == XHCA_WC_BAD_RESP_ERR && wc.vendor_err == 0x64,
	      "a NAK 0x64: BAD_RESP_ERR with vendor_err 0x64 (wr_id %llu status %u vendor 0x%x)",
	      (unsigned long long)wc.wr_id, wc.status, wc.vendor_err);
	expect_flushed(a, 1, 96, "after BAD_RESP_ERR");
	check(qp_state(a) == XHCA_QPS_ERR, "after BAD_RESP_ERR the QP is in the error state");

	/* A READ's buffer freed while the READ waits for its response (the
	 * link still cut): when the response comes, LOC_PROT_ERR, nothing
	 * written anywhere, xhcad goes on. */
	side_open(a, XHCA_QPT_RC, (4u << 20) + 4096);
	side_open(b, XHCA_QPT_RC, (4u << 20) + 4096);
	connect_pair(a, b, 1024);
	set_attr(a, XHCA_QPA_TIMEOUT, 14, 0, 0);
	{
		__u8 *small = xhca_alloc(a->ctx, 4096);

		if (!small)
			die(a, "alloc");
		post(a, XHCA_WR_RDMA_READ, 97, small, 64, (uintptr_t)b->buf, xhca_mr_rkey(b->mr), 0,
		     XHCA_SEND_SIGNALED);
		usleep(20000);
		check(!xhca_free(a->ctx, small), "a READ's buffer freed while the READ is on its way");
	}
	pause_for("mend the link");
	r = wait_wc(a->scq, &wc);
	check(!r && wc.wr_id == 97 && wc.status == XHCA_WC_LOC_PROT_ERR,
	      "the READ's response for a freed buffer: LOC_PROT_ERR (wr_id %llu status %u)",
	      (unsigned long long)wc.wr_id, wc.status);
	check(xhca_qp_query(a->qp, &at) == 0 && at.state == XHCA_QPS_ERR,
	      "xhcad goes on; the QP is in the error state");
}

/* ---- restart ---------------------------------------------------------------- */

static void restart_ops(struct side *a, struct side *b, __u32 seed)
{
	op_send(a, b, 5000, 0, seed);
	op_send(b, a, 3000, 1, seed + 1);
	op_write(a, b, 70000, 0, seed + 2);
	op_write(b, a, 70000, 1, seed + 3);
	op_read(a, b, 100000, seed + 4);
	op_read(b, a, 9000, seed + 5);
	op_atomics(a, b);
	op_atomics(b, a);
}

/*
 * xhcad on a's side restarts (--keep) between the steps: an idle send
 * queue goes on where it was (its PSN from the QP context), in both
 * directions; a request in flight across the restart (the link cut by the
 * test meanwhile) completes flushed, the QP in the error state.
 */
void scen_restart(struct side *a, struct side *b)
{
	struct xhca_wc wc;
	int r;

	side_open(a, XHCA_QPT_RC, 200000);
	side_open(b, XHCA_QPT_RC, 200000);
	connect_pair(a, b, 1024);
	restart_ops(a, b, 900);
	pause_for("restart xhcad on A");
	restart_ops(a, b, 950);
	set_attr(a, XHCA_QPA_TIMEOUT, 21, 0, 0); /* 8.6 s: still in flight at the restart */
	pause_for("cut the link");
	xhca_post_recv(b->qp, 7, b->buf + b->half, 4096);
	check(!post(a, XHCA_WR_SEND, 77, a->buf, 4000, 0, 0, 0, XHCA_SEND_SIGNALED),
	      "restart: a SEND posted into a cut link");
	post(a, XHCA_WR_SEND, 78, a->buf, 100, 0, 0, 0, XHCA_SEND_SIGNALED);
	usleep(300000);
	check(xhca_poll_cq(a->scq, &wc, 1) == 0, "restart: the SEND is in flight, not completed");
	pause_for("restart xhcad on A and mend the link");
	/* (the completion taken before check() reads it for its message) */
	r = wait_wc(a->scq, &wc);
	check(!r && wc.wr_id == 77 && wc.status == XHCA_WC_WR_FLUSH_ERR,
	      "restart: the SEND in flight across the restart completes flushed (wr_id %llu status %u)",
	      (unsigned long long)wc.wr_id, wc.status);
	r = wait_wc(a->scq, &wc);
	check(!r && wc.wr_id == 78 && wc.status == XHCA_WC_WR_FLUSH_ERR,
	      "restart: the one behind it too, in order (wr_id %llu status %u)",
	      (unsigned long long)wc.wr_id, wc.status);
	check(qp_state(a) == XHCA_QPS_ERR, "restart: the QP in the error state (%d)", qp_state(a));
}

/* A and B connected, n messages of 64 bytes filled at A (pattern seed +
 * i); B's 2 buffers taken by A's first 2 SENDs, so their ACK gives A no
 * credit. */
static void credits_used_up(struct side *a, struct side *b, int n, __u32 seed, const char *what)
{
	struct xhca_wc wc;
	int sent = 0, got = 0;

	side_open(a, XHCA_QPT_RC, 65536);
	side_open(b, XHCA_QPT_RC, 65536);
	connect_pair(a, b, 1024);
	for (__u64 i = 0; i < (__u64)n; i++)
		fill(a->buf + i * 64, 64, seed + (__u32)i);
	for (__u64 i = 0; i < 2; i++) {
		xhca_post_recv(b->qp, i, b->buf + b->half + i * 64, 64);
		post(a, XHCA_WR_SEND, i, a->buf + i * 64, 64, 0, 0, 0, XHCA_SEND_SIGNALED);
	}
	for (int i = 0; i < 2; i++) {
		sent += !wait_wc(a->scq, &wc) && wc.status == XHCA_WC_SUCCESS;
		got += !wait_wc(b->rcq, &wc) && wc.status == XHCA_WC_SUCCESS;
	}
	check(sent == 2 && got == 2, "%s: 2 SENDs into B's 2 buffers (%d sent, %d received)", what,
	      sent, got);
}

/* A's n SENDs after the first 2 (posted already): each completes at A
 * and arrives at B, every byte as credits_used_up filled it. */
static void credits_arrive(struct side *a, struct side *b, int n, __u32 seed, const char *what)
{
	struct xhca_wc wc;
	int sent = 0, got = 0, bad = 0;

	for (int i = 0; i < n; i++) {
		sent += !wait_wc(a->scq, &wc) && wc.status == XHCA_WC_SUCCESS;
		if (wait_wc(b->rcq, &wc) || wc.status != XHCA_WC_SUCCESS)
			continue;
		got++;
		bad += first_bad(b->buf + b->half + wc.wr_id * 64, 64, seed + (__u32)wc.wr_id) != 64;
	}
	check(sent == n && got == n && !bad,
	      "%s: A's %d SENDs all received, every byte right (%d sent, %d received, %d wrong)",
	      what, n, sent, got, bad);
}

/*
 * End-to-end credits (IBA 9.7.7.2.5): B's receive queue holds 2 buffers and
 * A's 2 SENDs take them, so their ACK gives A no credit and B's xhcad
 * watches the QP. B posts CR_MORE more and asks its xhcad something (a QP
 * query: posting a receive rings no doorbell, the request wakes it), whose
 * round sends the last ACK again with the new count; then A's CR_MORE
 * SENDs all arrive, every byte right. The test reads the counters of the
 * update (responder.credit_acks on B, requester.credit_updates on A).
 */
#define CR_MORE 300

void scen_credits(struct side *a, struct side *b)
{
	credits_used_up(a, b, 2 + CR_MORE, 0, "credits");
	for (__u64 i = 2; i < 2 + CR_MORE; i++)
		xhca_post_recv(b->qp, i, b->buf + b->half + i * 64, 64);
	check(qp_state(b) == XHCA_QPS_RTS, "credits: %d more posted, B's xhcad asked for its QP",
	      CR_MORE);
	usleep(200000); /* the update on its way to A's xhcad */
	for (__u64 i = 2; i < 2 + CR_MORE; i++)
		post(a, XHCA_WR_SEND, i, a->buf + i * 64, 64, 0, 0, 0, XHCA_SEND_SIGNALED);
	credits_arrive(a, b, CR_MORE, 0, "credits");
}

/*
 * The probe (IBA 9.7.7.2.5): B's 2 buffers taken, their ACK gives A no
 * credit. B posts 3 more; 3 are fewer than a quarter of its ring, so its
 * xhcad sends no update. A's 3 SENDs, posted as one list (one round of
 * A's xhcad): the first goes alone, the probe; its ACK brings the count
 * (2) and the other two go then. All arrive. The test reads A's
 * requester counters: one credit wait, no RNR NAK.
 */
void scen_credit_probe(struct side *a, struct side *b)
{
	struct xhca_sge g[3];
	struct xhca_send_wr wr[3];
	int r;

	credits_used_up(a, b, 5, 100, "probe");
	for (__u64 i = 2; i < 5; i++)
		xhca_post_recv(b->qp, i, b->buf + b->half + i * 64, 64);
	for (int i = 0; i < 3; i++) {
		g[i] = (struct xhca_sge){ .addr = (uintptr_t)(a->buf + (size_t)(i + 2) * 64),
					  .length = 64 };
		wr[i] = (struct xhca_send_wr){
			.wr_id = (__u64)i + 2, .sg_list = &g[i], .num_sge = 1,
			.opcode = XHCA_WR_SEND, .send_flags = XHCA_SEND_SIGNALED,
			.next = i < 2 ? &wr[i + 1] : NULL,
		};
	}
	r = xhca_post_send(a->qp, wr, NULL);
	check(!r, "probe: 3 SENDs posted in one list (%s)", r ? strerror(-r) : "ok");
	if (!r)
		credits_arrive(a, b, 3, 100, "probe");
}
