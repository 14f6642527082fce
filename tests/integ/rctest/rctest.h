/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-rctest's files (main.c says what the program does): what they
 * share. side.c: the two sides, connecting them, posting, completions;
 * a file of its own for each topic of cases: ops.c, stress.c, errors.c
 * (errors, post), more.c, paths.c (paths, restart, credits); main.c: the
 * cases' table and the command line.
 */
#ifndef XHCA_TESTS_INTEG_RCTEST_H
#define XHCA_TESTS_INTEG_RCTEST_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <xhca/pkt.h>
#include <xhca/xhca.h>
#define CHECK_SHARED
#include "../check.h"

#define QKEY 0x11223344u
#define WAIT_MS 30000

struct side {
	const char *ifname;
	__u8 ip[16];
	int v6;
	struct xhca_ctx *ctx;
	struct xhca_pd *pd;
	struct xhca_cq *scq, *rcq;
	struct xhca_qp *qp;
	__u8 *buf;
	size_t len;		/* two halves: [0, half) and [half, len) */
	size_t half;
	struct xhca_mr *mr;
	__u8 type;
};

/* side.c */
int die(const struct side *s, const char *what);
void side_open(struct side *s, __u8 type, size_t half);
int modify(struct side *s, __u32 mask, struct xhca_qp_attr *a);
void connect_pair(struct side *a, struct side *b, __u32 mtu);
void fill(__u8 *p, size_t n, __u32 seed);
size_t first_bad(const __u8 *p, size_t n, __u32 seed);
int wait_wc(struct xhca_cq *cq, struct xhca_wc *wc);
int post(struct side *s, enum xhca_wr_opcode op, __u64 wr_id, void *addr, __u32 len,
	 __u64 raddr, __u32 rkey, __u32 imm, unsigned int flags);
void expect_send_wc(struct side *s, __u64 wr_id, __u32 status, __u32 opcode,
		    const char *what);
void set_attr(struct side *s, __u32 mask, __u8 timeout, __u8 retry, __u8 rnr);
int qp_state(struct side *s);
void expect_flushed(struct side *s, int n, __u64 first_id, const char *what);

/* ops.c */
void op_send(struct side *tx, struct side *rx, size_t n, int imm, __u32 seed);
void op_write(struct side *tx, struct side *rx, size_t n, int imm, __u32 seed);
void op_read(struct side *tx, struct side *rx, size_t n, __u32 seed);
void op_atomics(struct side *tx, struct side *rx);
void scen_ud2(struct side *a, struct side *b, const char *ip2, int n);
void scen_ops(struct side *a, struct side *b, int argc, char **argv);

/* stress.c */
void scen_stress(struct side *a, struct side *b, size_t n, size_t size, __u32 mtu);

/* errors.c */
void scen_errors(struct side *a, struct side *b);
void scen_post(struct side *a, struct side *b);

/* more.c */
extern int mcast_4k;
void scen_more(struct side *a, struct side *b);

/* paths.c */
void scen_paths(struct side *a, struct side *b);
void scen_restart(struct side *a, struct side *b);
void scen_credits(struct side *a, struct side *b);
void scen_credit_probe(struct side *a, struct side *b);

#endif
