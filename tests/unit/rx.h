/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the unit tests of xhca_rx share (rx_env.c): the program loaded with
 * BPF_PROG_TEST_RUN, the QPs every case starts from, run() and its checks of
 * every packet, the memory regions and host memory, the flow queue socket.
 * The tests by topic: test_rx.c (the table of single packets, and the
 * file's cases and set-up: rx/table, rx/seq_*, rx/fuzz, rx/every_reason),
 * rx_seq_psn.c, rx_seq_flowq.c, rx_seq_write.c, rx_seq_proxy.c,
 * rx_seq_mcast.c, rx_seq_recv.c (sequences that need state: each sets up
 * its QPs itself),
 * rx_fuzz.c (rx/fuzz; make fuzz).
 */
#ifndef XHCA_TESTS_RX_H
#define XHCA_TESTS_RX_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/bpf.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xhca/abi.h>
#include <xhca/pkt.h>
#include <xhca/qpctx.h>
#include <xhca/wire.h>
#include "xhca.skel.h"
#include "tests.h"

/* The tables name their first fields by position and leave the rest zero. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define TQ 64 /* local QPs of the object under test */
#define HM_PAGES 16 /* its host memory: of block 0 */
#define HM_BLOCKS 2 /* block 1 not there */
#define WHY_LEN 256

#define XHCA_REASON_STR(name, str, desc) str,
#define FQ_SOCK 3	/* the flow queue with a socket (on lo, RX queue 0) */
#define FQ_NOSOCK 5
#define QPN(l) (0x100u + (l))
#define EPSN0 0x000500u /* expected PSN every RC/UC QP starts with */
#define UD_QKEY 0x11111111u

#define ANY_QP 0xffffffffu /* run's qp_lidx: the QP the frame names, whichever */

/* memory regions and host memory of the WRITE tests */
#define CANARY 0xaa
#define MR_PRE 1		/* pre-translated, crossing pages, REMOTE_WRITE|READ|ATOMIC */
#define MR_SLOW 2		/* not pre-translated, REMOTE_WRITE */
#define MR_OTHERPD 3
#define MR_RONLY 4		/* REMOTE_READ only */
#define MR_MW_QP 5		/* a type 2 memory window, bound through QP 0x777 */
#define MR_NOBLOCK 6		/* pre-translated, in host memory's block 1 (not there) */
#define PRE_IOVA 0x10000ull
#define PRE_BASE (4 * 4096 + 100ull)
#define PRE_LEN (3 * 4096 + 100ull)

enum {
	L_RC = 1, L_UC, L_UD, L_RC6, L_GSI, L_RC_RESET, L_RC_INIT, L_RC_RTS, L_RC_SQD, L_RC_ERR,
	L_RC_PASS, L_RC_LIM, L_UD_LIM, L_STALE, L_INVALID, L_UD_HOST, L_RC_HOST, L_RCW, L_UCW,
	L_NQP,
};

struct qp_def {
	__u32 qpn;
	__u8 type, state, action, v6;
	__u16 pkey;
	__u32 qkey;
	int cam_gen_off; /* CAM generation minus context generation */
	int invalid;
	__u8 flowq;
	__u32 pd;
};

struct snap {
	struct xhca_counter r[XHCA_R_MAX];
	struct xhca_qp_counter q[L_NQP];
	struct xhca_flowq_counter fq;	/* summed over the flow queues */
	__u64 enq;			/* the flow queues' enq, summed */
};

struct rx_env {
	struct xhca *skel;
	int prog, cam, ctx, stats, qp_stats, pkeys;
	struct xhca_qp_ctx *ctxm; /* the context map, mapped as xhcad maps it */
	int ncpus;
	unsigned char hit[XHCA_R_MAX]; /* reasons some case produced */
};

/* SEND ONLY of each transport */
#define RC_SEND (XHCA_OPC_RC | XHCA_OP_SEND_ONLY)
#define UC_SEND (XHCA_OPC_UC | XHCA_OP_SEND_ONLY)
#define UD_SEND (XHCA_OPC_UD | XHCA_OP_SEND_ONLY)

extern struct rx_env E;
extern __u8 next_flowq;			/* the flow queue of the next qp_write */
extern struct xhca_rx_meta last_meta;	/* of the last packet sent to a flow queue */
extern __u8 last_tx[XHCA_PKT_MAX];	/* the last frame sent back (XDP_TX) */
extern __u32 last_tx_len;
extern struct xhca_mr_ctx *mrm;		/* the MR map, mapped as xhcad maps it */
extern __u8 *hm;			/* host memory, mapped */
extern const char *const rname[XHCA_R_MAX];
extern const struct qp_def qps[L_NQP];
extern __u32 next_pd;
extern int xsk_fd;
extern void *xsk_area;
extern int events_seen;

void addr(__u8 out[16], int v6, int local);
int qp_write(__u32 lidx, __u32 qpn, __u32 ctx_gen, __u32 cam_gen, int valid, __u8 type,
		    __u8 state, __u8 action, __u16 pkey, __u32 qkey, int v6, __u32 epsn);
int qps_reset(void);
__u32 lidx_of(__u32 qpn);
int ctx_get(__u32 lidx, struct xhca_qp_ctx *c);
int ctx_set_epsn(__u32 lidx, __u32 epsn);
int snap_take(struct snap *s);
int is_pass_reason(int r);
int is_redirect_reason(int r);
int flowq_reason(int r);
int answered_reason(int r);
int qp_accepted_reason(int r);
int qp_dropped_reason(int r);
int run(const void *frame, __u32 len, int want, __u32 qp_lidx, char *why);
/* a check of the running case (unit_check) */
#define result(ok, ...) unit_check((ok), __VA_ARGS__)
int step(struct xhca_pkt_spec *s, int want, __u32 lidx, long long want_epsn, char *why);
void spec_to(struct xhca_pkt_spec *s, __u8 opcode, __u32 lidx, __u32 psn);
int xsk_on_lo(char *why);
int fq_set(__u32 f, __u32 high, __u32 low, __u64 deq);
int fq_get(__u32 f, struct xhca_flowq *q);
__u32 rkey_of(__u32 idx);
void mr_put(__u32 idx, __u32 pd, __u32 access, int pretx, __u64 iova, __u64 len,
		   __u64 base, __u32 gen);
void mrs_reset(void);
int hm_only(__u64 off, const __u8 *want, __u32 n, char *why);
void wspec(struct xhca_pkt_spec *s, __u32 lidx, __u8 op, __u32 psn, __u32 mr, __u64 va,
		  __u32 dma_len, __u32 payload);
int on_event(void *ctx, void *data, size_t len);
__u32 rx_word(__u32 lidx);
int env_open(char *why);
int quiet(enum libbpf_print_level level, const char *fmt, va_list ap);

/* test_rx.c */
void ip4_csum_fix(__u8 *ip);

/* the topics */
int fuzz_frames(unsigned long n, unsigned long long seed);
void rx_fuzz(void);
int seq_psn_wrap(char *why);
int seq_multi_packet(char *why);
int seq_uc_gap(char *why);
int seq_destroy_recreate(char *why);
int seq_truncation(char *why);
int seq_all_opcodes(char *why);
int seq_sizing(char *why);
int seq_torn_context(char *why);
int seq_concurrent_writer(char *why);
int seq_concurrent_psn(char *why);
int seq_flowq_meta(char *why);
int seq_flowq_gate(char *why);
int seq_flowq_no_meta_room(char *why);
int seq_flowq_late_drop(char *why);
int seq_write_placed(char *why);
int seq_recv_placed(char *why);
int seq_recv_ud(char *why);
int seq_recv_fallback(char *why);
int seq_recv_pend(char *why);
int seq_recv_cached(char *why);
int seq_recv_no_ts(char *why);
int seq_recv_xdp_ack(char *why);
int seq_recv_xdp_ack_frames(char *why);
void recv_maps_off(void);
int seq_write_placed_4k(char *why);
int seq_write_slow(char *why);
int seq_write_nocopy(char *why);
int seq_write_icrc_first(char *why);
int seq_write_errors(char *why);
int seq_write_invalidated(char *why);
int seq_write_no_block(char *why);
int seq_op_sequence(char *why);
int seq_ack_nak(char *why);
int seq_read_atomic(char *why);
int seq_proxy(char *why);
int seq_mcast_ports(char *why);
int seq_mcast(char *why);

#endif /* XHCA_TESTS_RX_H */
