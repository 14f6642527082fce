/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-gen's insides, one file per role: parse.c (the options' values),
 * opts.c (the option table and usage), check.c (the options checked
 * together), frame.c (frame building), prog.c (the xhca_gen program: loaded,
 * self-checked, run), iface.c (the interface and the packet socket), send.c
 * (a block of frames, sent or written), msg.c (--msg-len's messages) and
 * main.c (the summary, main). What they share is here.
 */
#ifndef XHCA_TOOLS_GEN_H
#define XHCA_TOOLS_GEN_H

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <xhca/pkt.h>
#include "log.h"
#include "opt.h"
#include "xhca_gen.skel.h"

#define PSN_MASK 0xffffffu
/*
 * How frames are split into test runs. A run of more than one frame costs two
 * RCU grace periods on top of its frames (bpf_prog_test_run_xdp swaps the XDP
 * dispatcher in and out: bpf_dispatcher_change_prog -> synchronize_rcu, about
 * 20 ms on the 2-core 6.18 machine); a run of one frame skips that and takes
 * about 0.1 ms. So paced traffic goes out one frame per run up to
 * SINGLE_RATE_MAX, and above it in bursts every PACED_RUN_SEC; traffic bounded
 * by --duration alone goes in runs of about UNPACED_RUN_SEC.
 */
#define SINGLE_RATE_MAX 2000.0
#define PACED_RUN_SEC 0.05
#define UNPACED_RUN_SEC 0.25
#define FIRST_DURATION_RUN 65536u
/* BPF_PROG_TEST_RUN takes a 32-bit repeat. */
#define MAX_REPEAT 0x40000000u
#define MAX_SIZES 16
/* The largest frame live frames carry: a page less the kernel's headroom
 * and shared info (x86-64). */
#define LIVE_FRAME_MAX 3408

struct gen_opts {
	const char *ifname;
	const char *pcap;
	int have_op, have_qpn, have_count, have_smac, have_dmac, have_reth_len, have_aeth;
	int have_src, have_dst;
	uint64_t count;
	double duration;	/* 0 = bounded by count */
	double rate;		/* 0 = as fast as the kernel goes */
	uint32_t psn, psn_step;
	uint32_t sizes[MAX_SIZES];	/* payload bytes, one block of frames each */
	int nsizes;
	uint32_t batch;
	const char *src, *dst;
	int json;
	int verbose;
	/* --msg-len: whole messages, split into FIRST/MIDDLE/LAST by mtu */
	uint64_t msg_len;
	uint32_t mtu;
	uint32_t seed;
	/* --payload: these bytes in every frame */
	uint8_t payload[XHCA_PKT_MAX];
	int have_payload;
	/* --va-step/--va-span: the RETH VA moves on per frame */
	uint32_t va_step, va_span;
	struct xhca_pkt_spec spec;
};

struct gen_result {
	uint64_t sent;
	double seconds;
	int frame_len;
};

/* Offsets the XDP program patches, found by walking the built frame. */
struct frame_offs {
	uint32_t psn;	/* BTH AckReq|PSN word */
	uint32_t icrc;
	uint32_t csum;	/* UDP checksum; 0 when the checksum is 0 */
	uint32_t payload; /* first payload byte */
};

/* main.c: set by SIGINT and SIGTERM while sending */
extern volatile sig_atomic_t stop;
/* Set by every usage error, so that main exits 2 for those and 1 otherwise. */
extern int usage_error;

/* Every usage error is one line: what is wrong, then what to do. */
#define bad_usage(...)                    \
	({                                \
		pr_warn(__VA_ARGS__);     \
		usage_error = 1;          \
		-EINVAL;                  \
	})

/* parse.c */
int said(int err);
int parse_u64(const struct xhca_opt *x, const char *s, uint64_t max, uint64_t *out);
int parse_u32(const struct xhca_opt *x, const char *s, uint32_t max, uint32_t *out);
int parse_pos_double(const struct xhca_opt *x, const char *s, double *out);
int parse_mac(const struct xhca_opt *x, const char *s, uint8_t mac[6]);
int parse_vlans(const struct xhca_opt *x, const char *s, struct xhca_pkt_spec *spec);
int parse_sizes(const struct xhca_opt *x, const char *s, struct gen_opts *o);
int parse_aeth(const struct xhca_opt *x, const char *s, struct xhca_pkt_spec *spec);
int parse_payload(const char *s, struct gen_opts *o);
int opcode_parse(const char *arg, uint8_t *opcode);

/* opts.c */
extern const struct xhca_opt options[];
void usage(FILE *f);

/* check.c */
void set_size(struct gen_opts *o, int i);
int parse_args(int argc, char **argv, struct gen_opts *o);

/* frame.c */
int frame_offsets(const uint8_t *f, size_t len, struct frame_offs *fo);
int psn_varies(const struct gen_opts *o);
uint64_t va_of(const struct gen_opts *o, uint64_t k);
uint32_t psn_of(const struct gen_opts *o, uint64_t k);
int build_va(const struct gen_opts *o, uint32_t psn, uint64_t va, uint8_t *buf);
int build(const struct gen_opts *o, uint32_t psn, uint8_t *buf);
int build_k(const struct gen_opts *o, uint64_t k, uint8_t *buf);
uint32_t icrc_word(const uint8_t *frame, const struct frame_offs *fo);
int msg_build(const struct gen_opts *o, const uint8_t *msg, uint64_t i, uint64_t n,
	      uint32_t psn, uint8_t *frame);

/* prog.c */
int gen_load(const struct gen_opts *o, const uint8_t *frame0, size_t len,
	     struct xhca_gen **out);
int gen_self_check(const struct gen_opts *o, struct xhca_gen *skel, const uint8_t *frame0,
		   size_t len);
int send_run(const struct gen_opts *o, int prog_fd, int ifindex, const uint8_t *frame,
	     size_t len, uint32_t n);

/* iface.c */
int if_info(const char *ifname, uint8_t mac[6], int *mtu, int *up);
int iface_setup(struct gen_opts *so, int *ifindex, int *mtu);
int packet_open(int ifindex);
int packet_send(int fd, const char *ifname, const uint8_t *frame, size_t len);

/* send.c */
double now_sec(void);
int send_frames(const struct gen_opts *o, struct gen_result *res);
int write_pcap(const struct gen_opts *o, FILE *f, struct gen_result *res);

/* msg.c */
int send_messages(const struct gen_opts *o, FILE *pcap, struct gen_result *res);

#endif /* XHCA_TOOLS_GEN_H */
