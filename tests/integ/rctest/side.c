/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-rctest: the two sides (a session with each xhcad, its PD, CQs,
 * buffer and QP), connecting them, posting, completions, and the checks of
 * completions every case makes.
 */
#include "rctest.h"

int die(const struct side *s, const char *what)
{
	fprintf(stderr, "%s on %s: %s (%s)\n", what, s->ifname, strerror(errno),
		s->ctx ? xhca_errmsg(s->ctx) : "");
	exit(2);
}

void side_open(struct side *s, __u8 type, size_t half)
{
	s->type = type;
	if (!s->ctx)
		s->ctx = xhca_open(s->ifname);
	if (!s->ctx)
		die(s, "open");
	if (!s->pd)
		s->pd = xhca_pd_alloc(s->ctx);
	if (!s->scq)
		s->scq = xhca_cq_create(s->ctx, 4096);
	if (!s->rcq)
		s->rcq = xhca_cq_create(s->ctx, 4096);
	if (!s->pd || !s->scq || !s->rcq)
		die(s, "pd/cq");
	if (!s->buf || s->half < half) {
		if (s->mr)
			xhca_mr_dereg(s->mr);
		if (s->buf)
			xhca_free(s->ctx, s->buf);
		s->half = half;
		s->len = 2 * half;
		s->buf = xhca_alloc(s->ctx, s->len);
		s->mr = s->buf ? xhca_mr_reg(s->pd, s->buf, s->len, XHCA_ACCESS_ALL) : NULL;
		if (!s->mr)
			die(s, "buffer");
	}
	{
		struct xhca_qp_init_attr ia = {
			.type = type, .qkey = QKEY, .flowq = -1, .recv_cq = s->rcq, .rq_depth = 1024,
			.pd = s->pd, .send_cq = s->scq, .sq_depth = 1024,
		};

		if (s->qp)
			xhca_qp_destroy(s->qp);
		s->qp = xhca_qp_create(s->ctx, &ia);
		if (!s->qp)
			die(s, "qp create");
	}
}

int modify(struct side *s, __u32 mask, struct xhca_qp_attr *a)
{
	a->mask = mask;
	return xhca_qp_modify(s->qp, a);
}

/* a and b's QPs to RTS, each other's remote, at path MTU mtu. */
void connect_pair(struct side *a, struct side *b, __u32 mtu)
{
	struct side *sd[2] = { a, b };

	for (int i = 0; i < 2; i++) {
		struct side *s = sd[i], *o = sd[1 - i];
		struct xhca_qp_attr at = { .state = XHCA_QPS_INIT };
		__u8 shift = 8;

		while ((1u << shift) < mtu)
			shift++;
		if (modify(s, XHCA_QPA_STATE, &at))
			die(s, "init");
		memset(&at, 0, sizeof(at));
		at.state = XHCA_QPS_RTR;
		at.mtu_shift = shift;
		at.epsn = 0x100 * (i + 1);
		__u32 m = XHCA_QPA_STATE | XHCA_QPA_MTU | XHCA_QPA_EPSN;
		if (s->type != XHCA_QPT_UD) {
			memcpy(at.local_ip, s->ip, 16);
			memcpy(at.remote_ip, o->ip, 16);
			at.flags = s->v6 ? XHCA_QPF_IPV6 : 0;
			at.dest_qpn = xhca_qp_num(o->qp);
			m |= XHCA_QPA_LOCAL_IP | XHCA_QPA_REMOTE_IP | XHCA_QPA_DEST_QPN;
		}
		if (modify(s, m, &at))
			die(s, "rtr");
	}
	for (int i = 0; i < 2; i++) {
		struct xhca_qp_attr at = { .state = XHCA_QPS_RTS, .sq_psn = 0x100 * (2 - i) };

		if (modify(sd[i], XHCA_QPA_STATE | XHCA_QPA_SQ_PSN, &at))
			die(sd[i], "rts");
	}
}

void fill(__u8 *p, size_t n, __u32 seed)
{
	for (size_t k = 0; k < n; k++)
		p[k] = xhca_msg_pattern(seed, k);
}

size_t first_bad(const __u8 *p, size_t n, __u32 seed)
{
	for (size_t k = 0; k < n; k++)
		if (p[k] != xhca_msg_pattern(seed, k))
			return k;
	return n;
}

/* One completion from cq within WAIT_MS; 0, or -1 with none. */
int wait_wc(struct xhca_cq *cq, struct xhca_wc *wc)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = xhca_poll_cq(cq, wc, 1);

		if (n == 1)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 > WAIT_MS)
			return -1;
		xhca_cq_wait(cq, 100);
	}
}

int post(struct side *s, enum xhca_wr_opcode op, __u64 wr_id, void *addr, __u32 len,
	 __u64 raddr, __u32 rkey, __u32 imm, unsigned int flags)
{
	struct xhca_sge g = { .addr = (uintptr_t)addr, .length = len };
	struct xhca_send_wr wr = {
		.wr_id = wr_id, .sg_list = &g, .num_sge = 1, .opcode = op,
		.send_flags = flags, .imm_data = imm,
	};

	if (op == XHCA_WR_ATOMIC_CMP_AND_SWP || op == XHCA_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return xhca_post_send(s->qp, &wr, NULL);
}

/* The sender's completion of wr_id: status and opcode as expected. */
void expect_send_wc(struct side *s, __u64 wr_id, __u32 status, __u32 opcode,
		    const char *what)
{
	struct xhca_wc wc;
	int r = wait_wc(s->scq, &wc);

	check(!r && wc.wr_id == wr_id && wc.status == status && wc.opcode == opcode,
	      "%s: send completion (got %s wr_id %llu status %u opcode %u vendor 0x%x)", what,
	      r ? "none" : "one", (unsigned long long)wc.wr_id, wc.status, wc.opcode,
	      wc.vendor_err);
}

void set_attr(struct side *s, __u32 mask, __u8 timeout, __u8 retry, __u8 rnr)
{
	struct xhca_qp_attr at = { .timeout = timeout, .retry_cnt = retry, .rnr_retry = rnr };

	if (modify(s, mask, &at))
		die(s, "modify");
}

int qp_state(struct side *s)
{
	struct xhca_qp_attr at;

	return xhca_qp_query(s->qp, &at) ? -1 : at.state;
}

/* The next n send completions: wr_ids 100.. in order, all with status. */
void expect_flushed(struct side *s, int n, __u64 first_id, const char *what)
{
	int good = 0;

	for (int i = 0; i < n; i++) {
		struct xhca_wc wc;

		if (!wait_wc(s->scq, &wc) && wc.wr_id == first_id + (__u64)i &&
		    wc.status == XHCA_WC_WR_FLUSH_ERR)
			good++;
	}
	check(good == n, "%s: %d of %d later requests flushed, in order", what, good, n);
}
