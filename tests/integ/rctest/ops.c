/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-rctest ops TYPE MTU SIZE...: every operation TYPE (rc, uc, ud)
 * carries, at path MTU MTU, for each message SIZE, both ways (the
 * operations are the restart case's too). xhca-rctest ud2 IP2 N: one UD
 * QP's SENDs to two of B's addresses.
 */
#include "rctest.h"

void op_send(struct side *tx, struct side *rx, size_t n, int imm, __u32 seed)
{
	const char *tn = tx->type == XHCA_QPT_RC ? "rc" : tx->type == XHCA_QPT_UC ? "uc" : "ud";
	__u32 grh = tx->type == XHCA_QPT_UD ? 40 : 0;
	__u8 *dst = rx->buf + rx->half;
	struct xhca_wc wc;
	char what[96];
	int r;

	snprintf(what, sizeof(what), "%s SEND%s %zu B %s->%s", tn, imm ? " imm" : "", n,
		 tx->ifname, rx->ifname);
	memset(dst, 0, n + grh);
	fill(tx->buf, n, seed);
	xhca_post_recv(rx->qp, 7, dst, (__u32)(n + grh));
	if (tx->type == XHCA_QPT_UD) {
		struct xhca_sge g = { .addr = (uintptr_t)tx->buf, .length = (__u32)n };
		struct xhca_send_wr wr = {
			.wr_id = 1, .sg_list = &g, .num_sge = 1,
			.opcode = imm ? XHCA_WR_SEND_WITH_IMM : XHCA_WR_SEND,
			.send_flags = XHCA_SEND_SIGNALED, .imm_data = htonl(seed),
		};

		memcpy(wr.wr.ud.dest_ip, rx->ip, 16);
		wr.wr.ud.remote_qpn = xhca_qp_num(rx->qp);
		wr.wr.ud.remote_qkey = QKEY;
		r = xhca_post_send(tx->qp, &wr, NULL);
	} else {
		r = post(tx, imm ? XHCA_WR_SEND_WITH_IMM : XHCA_WR_SEND, 1, tx->buf, (__u32)n, 0, 0,
			 htonl(seed), XHCA_SEND_SIGNALED);
	}
	if (r) {
		check(0, "%s: post_send: %s", what, strerror(-r));
		return;
	}
	expect_send_wc(tx, 1, XHCA_WC_SUCCESS, XHCA_WC_SEND, what);
	r = wait_wc(rx->rcq, &wc);
	check(!r && wc.status == XHCA_WC_SUCCESS && wc.byte_len == n + grh &&
	      wc.opcode == XHCA_WC_RECV && (!imm || (wc.imm_data == htonl(seed) &&
						      (wc.wc_flags & XHCA_WC_WITH_IMM))),
	      "%s: receive completion (status %u len %u)", what, r ? 99 : wc.status,
	      r ? 0 : wc.byte_len);
	check(!r && first_bad(dst + grh, n, seed) == n, "%s: every byte (first bad at %zu)", what,
	      first_bad(dst + grh, n, seed));
	if (grh && tx->v6) /* the GRH's source: the address xhcad sent from */
		check(!r && !memcmp(dst + 8, tx->ip, 16), "%s: the GRH names the sender's address",
		      what);
}

void op_write(struct side *tx, struct side *rx, size_t n, int imm, __u32 seed)
{
	const char *tn = tx->type == XHCA_QPT_RC ? "rc" : "uc";
	__u8 *dst = rx->buf + rx->half;
	struct xhca_wc wc;
	char what[96];
	int r;

	snprintf(what, sizeof(what), "%s WRITE%s %zu B %s->%s", tn, imm ? " imm" : "", n,
		 tx->ifname, rx->ifname);
	memset(dst, 0, n + 1);
	fill(tx->buf, n, seed);
	if (imm)
		xhca_post_recv(rx->qp, 8, rx->buf, 1);
	r = post(tx, imm ? XHCA_WR_RDMA_WRITE_WITH_IMM : XHCA_WR_RDMA_WRITE, 2, tx->buf, (__u32)n,
		 (uintptr_t)dst, xhca_mr_rkey(rx->mr), htonl(seed), XHCA_SEND_SIGNALED);
	if (r) {
		check(0, "%s: post_send: %s", what, strerror(-r));
		return;
	}
	expect_send_wc(tx, 2, XHCA_WC_SUCCESS, XHCA_WC_RDMA_WRITE, what);
	if (imm) {
		r = wait_wc(rx->rcq, &wc);
		check(!r && wc.status == XHCA_WC_SUCCESS && wc.opcode == XHCA_WC_RECV_RDMA_WITH_IMM &&
		      wc.imm_data == htonl(seed) && wc.byte_len == n,
		      "%s: the immediate's completion", what);
	} else if (tx->type == XHCA_QPT_UC) {
		/* UC: done when sent; the bytes may still be on the way */
		usleep(n > 65536 ? 300000 : 50000);
	}
	check(first_bad(dst, n, seed) == n && dst[n] == 0, "%s: every byte (first bad at %zu)",
	      what, first_bad(dst, n, seed));
}

void op_read(struct side *tx, struct side *rx, size_t n, __u32 seed)
{
	__u8 *dst = tx->buf + tx->half;
	char what[96];
	int r;

	snprintf(what, sizeof(what), "rc READ %zu B %s<-%s", n, tx->ifname, rx->ifname);
	fill(rx->buf, n, seed);
	memset(dst, 0, n + 1);
	r = post(tx, XHCA_WR_RDMA_READ, 3, dst, (__u32)n, (uintptr_t)rx->buf, xhca_mr_rkey(rx->mr),
		 0, XHCA_SEND_SIGNALED);
	if (r) {
		check(0, "%s: post_send: %s", what, strerror(-r));
		return;
	}
	expect_send_wc(tx, 3, XHCA_WC_SUCCESS, XHCA_WC_RDMA_READ, what);
	check(first_bad(dst, n, seed) == n && dst[n] == 0, "%s: every byte (first bad at %zu)",
	      what, first_bad(dst, n, seed));
}

void op_atomics(struct side *tx, struct side *rx)
{
	__u64 *word = (__u64 *)(rx->buf + ((rx->len - 64) & ~(size_t)7));
	__u64 *res = (__u64 *)(tx->buf + ((tx->len - 64) & ~(size_t)7));
	__u64 va = (uintptr_t)word;
	__u32 rkey = xhca_mr_rkey(rx->mr);
	struct xhca_sge g = { .addr = (uintptr_t)res, .length = 8 };
	struct xhca_send_wr wr = {
		.wr_id = 4, .sg_list = &g, .num_sge = 1, .send_flags = XHCA_SEND_SIGNALED,
	};

	*word = 1000;
	*res = 0;
	wr.opcode = XHCA_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = va;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = 23;
	check(!xhca_post_send(tx->qp, &wr, NULL), "FETCH_ADD posted");
	expect_send_wc(tx, 4, XHCA_WC_SUCCESS, XHCA_WC_FETCH_ADD, "FETCH_ADD");
	check(*res == 1000 && *word == 1023, "FETCH_ADD: original 1000 back (%llu), word 1023 (%llu)",
	      (unsigned long long)*res, (unsigned long long)*word);
	wr.opcode = XHCA_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 1023;
	wr.wr.atomic.swap = 0x1122334455667788ull;
	check(!xhca_post_send(tx->qp, &wr, NULL), "CMP_SWAP posted");
	expect_send_wc(tx, 4, XHCA_WC_SUCCESS, XHCA_WC_COMP_SWAP, "CMP_SWAP that matches");
	check(*res == 1023 && *word == 0x1122334455667788ull, "CMP_SWAP: swapped, original back");
	wr.wr.atomic.compare_add = 5;
	wr.wr.atomic.swap = 6;
	check(!xhca_post_send(tx->qp, &wr, NULL), "CMP_SWAP posted");
	expect_send_wc(tx, 4, XHCA_WC_SUCCESS, XHCA_WC_COMP_SWAP, "CMP_SWAP that does not match");
	check(*res == 0x1122334455667788ull && *word == 0x1122334455667788ull,
	      "CMP_SWAP: not swapped, original back");
}

void scen_ops(struct side *a, struct side *b, int argc, char **argv)
{
	__u8 type = !strcmp(argv[0], "rc") ? XHCA_QPT_RC : !strcmp(argv[0], "uc") ? XHCA_QPT_UC
										: XHCA_QPT_UD;
	__u32 mtu = (__u32)atoi(argv[1]);
	size_t max = 64;

	if (strcmp(argv[0], "rc") && strcmp(argv[0], "uc") && strcmp(argv[0], "ud")) {
		fprintf(stderr, "xhca-rctest ops: type %s: rc, uc or ud\n", argv[0]);
		exit(2);
	}

	for (int i = 2; i < argc; i++)
		if ((size_t)atol(argv[i]) > max)
			max = (size_t)atol(argv[i]);
	side_open(a, type, max + 4096);
	side_open(b, type, max + 4096);
	connect_pair(a, b, mtu);
	for (int i = 2; i < argc; i++) {
		size_t n = (size_t)atol(argv[i]);
		__u32 seed = (__u32)(i * 7 + n);

		op_send(a, b, n, 0, seed);
		op_send(b, a, n, 1, seed + 1);
		if (type == XHCA_QPT_UD)
			continue;
		op_write(a, b, n, 0, seed + 2);
		op_write(b, a, n, 1, seed + 3);
		if (type != XHCA_QPT_RC)
			continue;
		op_read(a, b, n, seed + 4);
		op_read(b, a, n, seed + 5);
	}
	if (type == XHCA_QPT_RC) {
		op_atomics(a, b);
		op_atomics(b, a);
	}
}

/* xhca-rctest ud2 IP2 N: A's UD QP sends N SENDs of 100 bytes to B at
 * IP_B, N to IP2 (another address of B's), N to IP_B again, all posted in
 * one list (xhcad takes them in one round: the change of address comes
 * while a run of the first N may wait to be sent). B takes them in the
 * order posted, every byte checked (the test reads which of xhcad's ways
 * out they took). */
#define UD2_MAX 32
void scen_ud2(struct side *a, struct side *b, const char *ip2, int n)
{
	enum { SZ = 100, GRH = 40, SLOT = 256 };
	struct xhca_send_wr wr[3 * UD2_MAX];
	struct xhca_sge g[3 * UD2_MAX];
	__u8 ip[2][16];
	struct xhca_wc wc;
	int r, m = 3 * (n > UD2_MAX ? UD2_MAX : n);

	side_open(a, XHCA_QPT_UD, 4096);
	side_open(b, XHCA_QPT_UD, (size_t)m * SLOT);
	connect_pair(a, b, 1024);
	memcpy(ip[0], b->ip, sizeof(ip[0]));
	if (xhca_ip_parse(ip2, ip[1]) < 0)
		die(b, "ud2: IP2");
	for (int i = 0; i < m; i++) {
		__u8 *dst = b->buf + b->half + (size_t)i * SLOT;

		memset(dst, 0, SLOT);
		xhca_post_recv(b->qp, (__u64)i, dst, SZ + GRH);
		fill(a->buf + (size_t)i * SZ, SZ, 7000 + (__u32)i);
		g[i] = (struct xhca_sge){ .addr = (uintptr_t)(a->buf + (size_t)i * SZ), .length = SZ };
		wr[i] = (struct xhca_send_wr){
			.wr_id = (__u64)i, .sg_list = &g[i], .num_sge = 1,
			.opcode = XHCA_WR_SEND_WITH_IMM, .send_flags = XHCA_SEND_SIGNALED,
			.imm_data = htonl((__u32)i), .next = i + 1 < m ? &wr[i + 1] : NULL,
		};
		memcpy(wr[i].wr.ud.dest_ip, ip[i / (m / 3) == 1], 16);
		wr[i].wr.ud.remote_qpn = xhca_qp_num(b->qp);
		wr[i].wr.ud.remote_qkey = QKEY;
	}
	r = xhca_post_send(a->qp, wr, NULL);
	check(!r, "ud2: %d SENDs posted in one list (%s)", m, r ? strerror(-r) : "ok");
	if (r)
		return;
	for (int i = 0; i < m; i++)
		expect_send_wc(a, (__u64)i, XHCA_WC_SUCCESS, XHCA_WC_SEND, "ud2");
	for (int i = 0; i < m; i++) {
		const __u8 *dst = b->buf + b->half + (size_t)i * SLOT + GRH;

		r = wait_wc(b->rcq, &wc);
		check(!r && wc.status == XHCA_WC_SUCCESS && wc.wr_id == (__u64)i &&
		      wc.imm_data == htonl((__u32)i) && wc.byte_len == SZ + GRH &&
		      first_bad(dst, SZ, 7000 + (__u32)i) == SZ,
		      "ud2: SEND %d (to %s) arrived %s, in order, every byte (got %s: wr_id %llu "
		      "imm %u len %u)", i, i / (m / 3) == 1 ? "IP2" : "IP_B",
		      r ? "not" : "whole", r ? "none" : "one", (unsigned long long)wc.wr_id,
		      r ? 0 : ntohl(wc.imm_data), r ? 0 : wc.byte_len);
	}
}
