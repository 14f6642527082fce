/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-bench: speed figures, each beside a baseline measured in the same run.
 *
 *   xhca-bench prog [-n CALLS] [-r ROUNDS] [-j]
 *	Nanoseconds per packet of xhca_rx under BPF_PROG_TEST_RUN, beside the
 *	empty XDP program xhca_empty, as ratios. Two methods:
 *	- single: one packet per test run, PSN advanced between runs, so an RC
 *	  QP accepts every packet; the kernel's own per-run time (which
 *	  includes its timer reads) is averaged over CALLS runs;
 *	- batch: one test run repeats the same frame CALLS times; only for
 *	  packets whose verdict does not depend on state (the empty program,
 *	  not-RoCE, CAM miss, UD SEND, a UC WRITE ONLY: each a new message).
 *	The WRITE cases placed by xhca_rx (host QPs, a pre-translated region)
 *	check host memory for the payload, and the placement table sets their
 *	batch rate in GB/s beside memcpy of the same chunk into one fixed
 *	buffer (both stay in the cache).
 *	Each figure is the median of ROUNDS rounds; cases are interleaved within
 *	a round, so a slow moment of the machine hits them all.
 *
 *   xhca-bench sched [-n FRAMES] [-j]
 *	Nanoseconds per scheduling decision of xhcad's flow queue scheduler
 *	(user/xhcad/sched.c), DRR beside the FIFO baseline, with 8 backlogged
 *	queues of different weights and frame sizes.
 *
 *   xhca-bench memcpy [-c CHUNK] [-a AREA] [-s SECONDS] [-j]
 *	memcpy bandwidth on this machine, one CPU: CHUNK-byte copies (a WRITE
 *	packet's payload) one after the other through an AREA-byte region (as
 *	the bench's WRITEs walk their region), from a packet-sized source. The
 *	ceiling for placing RDMA WRITE payloads.
 *
 *   xhca-bench crc [-r ROUNDS] [-j]
 *	Nanoseconds per CRC-32 of 64 to 65536 bytes (what each frame's ICRC is
 *	made of, libxhca's xhca_crc32) by each implementation this CPU runs
 *	(sliced by 8, PCLMULQDQ on 128 bits, VPCLMULQDQ on 256 and 512),
 *	beside zlib's crc32() of the same bytes; one buffer, in the cache.
 *
 *   xhca-bench udp-sink [-p PORT] [-s SECONDS] [-i IDLE_MS] [-m GROUP -I IF] [-n N] [-j]
 *	A kernel UDP socket that counts the datagrams it receives: the
 *	baseline for packets per second through the interface. It stops S
 *	seconds after the first datagram, or after MS ms without one. With -m,
 *	N sockets on the port each join the IPv4 group on IF: the kernel's own
 *	multicast fan-out, the baseline for xhca's replication.
 *
 * Exit codes: 0 ok, 1 failed, 2 bad usage.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <zlib.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <xhca/abi.h>
#include <xhca/json.h>
#include <xhca/pkt.h>
#include <xhca/qpctx.h>
#include <xhca/wire.h>
#include "log.h"
#include "opt.h"
#include "xhca.skel.h"
#include "xhca_empty.skel.h"
#include "../user/xhcad/sched.h"

#define BENCH_QPS 64
#define QPN_RC 0x000100u
#define QPN_UD 0x000101u
#define QPN_MISS 0x00abcdu
#define QPN_RC_HOST 0x000102u
#define QPN_UC_HOST 0x000103u
#define UD_QKEY 0x11111111u
#define WRITE_LEN 1024
#define WRITE_MAX 4096		/* the largest path MTU: a WRITE ONLY's most */
/* the pre-translated region the placed WRITEs go to: MR 1, host memory
 * pages 0.., the protection domain of the host QPs */
#define PLACE_MR 1u
#define PLACE_PD 7u
#define PLACE_IOVA 0x100000ull
#define PLACE_PAGES 4u
/* the options' defaults (the commands', and the usage's) */
#define CALLS_DEFAULT 200000
#define ROUNDS_DEFAULT 7
#define FRAMES_DEFAULT 20000000
#define CHUNK_DEFAULT 2048
#define AREA_DEFAULT (32u << 20)
#define IDLE_MS_DEFAULT 2000
#define SOCKETS_DEFAULT 1

static int json;

enum method { SINGLE, BATCH };

struct bcase {
	const char *name;
	int empty;		/* run xhca_empty instead of xhca_rx */
	int rc_psn;		/* an RC QP accepts it: advance the PSN per packet */
	__u32 lidx;		/* ... that QP's: its expected PSN */
	int batch_ok;		/* the verdict does not depend on state */
	int reason;		/* the reason xhca_rx must give */
	__u32 placed;		/* payload bytes xhca_rx places (PLACED cases) */
	__u8 frame[XHCA_PKT_MAX];
	__u32 len;
	double ns[2][64];	/* per method, per round */
};

struct bench {
	struct xhca *rx;
	struct xhca_empty *empty;
	int ncpus;
	__u32 epsn[BENCH_QPS];	/* expected PSN of each RC QP */
	__u8 *hm;		/* host memory, mapped: where the placed WRITEs go */
};

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double tmp[64];

	memcpy(tmp, v, sizeof(double) * (size_t)n);
	qsort(tmp, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* The QPs the cases address, written as xhcad writes them: action drop
 * (accepted, then dropped), or host with the region's protection domain. */
static int qp_setup(struct bench *b, __u32 lidx, __u32 qpn, __u8 type, __u32 qkey, __u8 action)
{
	struct xhca_qp_ctx c = {};
	struct xhca_cam_val v = { .lidx = lidx, .gen = 1 };

	c.gen = 1;
	c.gqpn = qpn;
	c.valid = 1;
	c.type = type;
	c.state = XHCA_QPS_RTS;
	c.action = action;
	c.pd = PLACE_PD;
	c.pkey = XHCA_PKEY_DEFAULT;
	c.qkey = qkey;
	c.mtu_shift = 12;
	xhca_ip_parse("10.0.0.2", c.local_ip);
	xhca_ip_parse("10.0.0.1", c.remote_ip);
	/* Nothing runs the program yet: a plain update is a whole write. */
	if (bpf_map__update_elem(b->rx->maps.xhca_qp_ctx, &lidx, sizeof(lidx), &c, sizeof(c), 0))
		return -errno;
	if (bpf_map__update_elem(b->rx->maps.xhca_qp_cam, &qpn, sizeof(qpn), &v, sizeof(v), 0))
		return -errno;
	return 0;
}

/* Host memory's block 0, as xhcad makes a block; its first pages mapped. */
static int place_block(struct bench *b)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xhca_hm_block", 4, XHCA_PAGE_SIZE,
				XHCA_BLOCK_PAGES, &mo);
	__u32 k = 0;

	if (fd < 0)
		return -errno;
	if (bpf_map__update_elem(b->rx->maps.xhca_hostmem, &k, sizeof(k), &fd, sizeof(fd), 0)) {
		close(fd);
		return -errno;
	}
	b->hm = mmap(NULL, PLACE_PAGES * XHCA_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return b->hm == MAP_FAILED ? (b->hm = NULL, -errno) : 0;
}

/* MR 1: a pre-translated region over the first host memory pages, as
 * xhcad writes it for a contiguous registration (xhca_rx places into it). */
static int mr_setup(struct bench *b)
{
	size_t sz = 2 * sizeof(struct xhca_mr_ctx);
	struct xhca_mr_ctx m = {
		.gen = 1, .valid = 1, .key = 0x11, .pd = PLACE_PD,
		.access = XHCA_ACCESS_REMOTE_WRITE, .iova = PLACE_IOVA,
		.length = PLACE_PAGES * XHCA_PAGE_SIZE, .base = 0,
		.flags = XHCA_MRF_PRETRANSLATED,
	};
	struct xhca_mr_ctx *mrs = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED,
				       bpf_map__fd(b->rx->maps.xhca_mr), 0);

	if (mrs == MAP_FAILED)
		return -errno;
	xhca_mr_store(&mrs[PLACE_MR], &m);
	munmap(mrs, sz);
	return place_block(b);
}

static int load(struct bench *b)
{
	struct xhca_pkey pk = { .pkey = XHCA_PKEY_DEFAULT };
	__u32 k = 0;
	int err;

	b->rx = xhca__open();
	b->empty = xhca_empty__open_and_load();
	if (!b->rx || !b->empty) {
		pr_warn("prog: cannot open the BPF objects: %s; run as root\n", strerror(errno));
		return -errno;
	}
	bpf_map__set_max_entries(b->rx->maps.xhca_qp_cam, BENCH_QPS);
	bpf_map__set_max_entries(b->rx->maps.xhca_qp_ctx, BENCH_QPS);
	bpf_map__set_max_entries(b->rx->maps.xhca_qp_stats, BENCH_QPS);
	bpf_map__set_max_entries(b->rx->maps.xhca_hostmem, 1);
	bpf_map__set_max_entries(b->rx->maps.xhca_mr, 2);
	err = xhca__load(b->rx);
	if (err) {
		pr_warn("prog: cannot load xhca_rx: %s; run as root, with -v for the log\n",
			strerror(-err));
		return err;
	}
	if (bpf_map__update_elem(b->rx->maps.xhca_pkeys, &k, sizeof(k), &pk, sizeof(pk), 0))
		return -errno;
	err = qp_setup(b, 1, QPN_RC, XHCA_QPT_RC, 0, XHCA_ACT_DROP);
	err = err ?: qp_setup(b, 2, QPN_UD, XHCA_QPT_UD, UD_QKEY, XHCA_ACT_DROP);
	err = err ?: qp_setup(b, 3, QPN_RC_HOST, XHCA_QPT_RC, 0, XHCA_ACT_HOST);
	err = err ?: qp_setup(b, 4, QPN_UC_HOST, XHCA_QPT_UC, 0, XHCA_ACT_HOST);
	err = err ?: mr_setup(b);
	b->ncpus = libbpf_num_possible_cpus();
	return err;
}

static int build(struct bcase *c, __u8 opcode, __u32 qpn, __u32 payload, __u16 dport)
{
	struct xhca_pkt_spec s;
	int len;

	xhca_pkt_spec_init(&s, opcode);
	s.dqpn = qpn;
	s.deth_qkey = UD_QKEY;
	s.reth_rkey = PLACE_MR << 8 | 0x11;
	s.reth_va = PLACE_IOVA;
	s.reth_len = payload;
	s.payload_len = payload;
	if (dport)
		s.dport = dport;
	len = xhca_pkt_build(&s, c->frame, sizeof(c->frame));
	if (len < 0)
		return len;
	c->len = (__u32)len;
	return 0;
}

/* The PSN lives in the last three bytes of the BTH's third word. */
static void set_psn(struct bcase *c, __u32 psn)
{
	__u8 *p = c->frame + 14 + 20 + 8 + 9;

	p[0] = (__u8)(psn >> 16);
	p[1] = (__u8)(psn >> 8);
	p[2] = (__u8)psn;
}

static __u64 reason_packets(struct bench *b, int reason)
{
	struct xhca_counter v[b->ncpus];
	__u32 k = (__u32)reason;
	__u64 sum = 0;

	if (bpf_map__lookup_elem(b->rx->maps.xhca_stats, &k, sizeof(k), v, sizeof(v), 0))
		return 0;
	for (int i = 0; i < b->ncpus; i++)
		sum += v[i].packets;
	return sum;
}

/* Runs n packets of c and returns the mean ns per packet, or < 0. Checks
 * that every packet got the reason the case is about: a figure for the
 * wrong path would be worse than none. */
static double measure(struct bench *b, struct bcase *c, enum method m, __u32 n)
{
	int fd = bpf_program__fd(c->empty ? b->empty->progs.xhca_empty : b->rx->progs.xhca_rx);
	__u64 before = c->empty ? 0 : reason_packets(b, c->reason), total = 0;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = c->frame, .data_size_in = c->len);

	if (c->placed)
		memset(b->hm, 0, c->placed);
	if (m == BATCH) {
		o.repeat = n;
		if (bpf_prog_test_run_opts(fd, &o))
			return -errno;
		total = (__u64)o.duration * n;
	} else {
		o.repeat = 1;
		for (__u32 i = 0; i < n; i++) {
			if (c->rc_psn)
				set_psn(c, b->epsn[c->lidx]++ & XHCA_PSN_MASK);
			if (bpf_prog_test_run_opts(fd, &o))
				return -errno;
			total += o.duration;
		}
	}
	if (!c->empty && reason_packets(b, c->reason) - before != n) {
		pr_warn("prog: %s: %llu of %u packets took the intended path; the bench setup is "
			"wrong\n", c->name,
			(unsigned long long)(reason_packets(b, c->reason) - before), n);
		return -EPROTO;
	}
	/* the payload (the frame's bytes before the ICRC) is in host memory */
	if (c->placed && memcmp(b->hm, c->frame + c->len - XHCA_ICRC_LEN - c->placed, c->placed)) {
		pr_warn("prog: %s: host memory does not hold the payload\n", c->name);
		return -EPROTO;
	}
	return (double)total / n;
}

/* ---- options: each command's table, which also writes its usage --------- */

#define OPT_JSON { .name = "json", .key = 'j', .help = "print JSON", .set = set_json }
#define OPT_HELP { .name = "help", .key = 'h', .help = "this text" }

/* The options' setters (struct xhca_opt's set: ctx is the command's
 * arguments; v a number already checked against the option's range). */
XHCA_OPT_SETTER(set_json) { json = 1; return 0; }
XHCA_OPT_SETTER(set_verbose) { xhca_log_init("xhca-bench", XHCA_LOG_DEBUG); return 0; }

static int secs(const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return !*s || *end || !(*v > 0) ? -EINVAL : 0;
}

/* ---- memcpy, the ceiling of placement ---------------------------------- */

/* The largest copy: a jumbo frame's payload, from a packet-sized source. */
#define MEMCPY_SRC 9216

/* chunk-byte memcpys one after the other through area bytes (as WRITEs
 * walk their region), from a packet-sized source, for secs seconds: the
 * bytes copied (0 if out of memory), the time taken into *took. */
static __u64 memcpy_run(size_t chunk, size_t area, double secs, double *took)
{
	static __u8 src[MEMCPY_SRC];
	__u8 *dst = malloc(area);
	size_t off = 0;
	__u64 bytes = 0;
	double t0, t;

	if (!dst)
		return 0;
	memset(dst, 0, area);
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (__u8)i;
	t0 = now_sec();
	do {
		for (int k = 0; k < 4096; k++) {
			memcpy(dst + off, src, chunk);
			/* the compiler must not drop the copies */
			__asm__ volatile("" : : "r"(dst + off) : "memory");
			off += chunk;
			if (off + chunk > area)
				off = 0;
		}
		bytes += (__u64)chunk * 4096;
		t = now_sec() - t0;
	} while (t < secs);
	free(dst);
	*took = t;
	return bytes;
}

/* ---- prog ---------------------------------------------------------------- */

struct prog_args {
	__u32 calls;
	int rounds;
};

#define A ((struct prog_args *)ctx)
XHCA_OPT_SETTER(set_calls) { A->calls = (__u32)v; return 0; }
XHCA_OPT_SETTER(set_rounds) { A->rounds = (int)v; return 0; }
#undef A

static const struct xhca_opt prog_opts[] = {
	{ .name = "calls", .key = 'n', .arg = "CALLS", .help = "test runs per case and round; batch "
	  "repeats\nten times as many",
	  .set = set_calls, XHCA_OPT_RANGE(1, 100000000, CALLS_DEFAULT) },
	{ .name = "rounds", .key = 'r', .arg = "ROUNDS", .help = "rounds; each figure is their "
	  "median", .set = set_rounds, XHCA_OPT_RANGE(1, 64, ROUNDS_DEFAULT) },
	OPT_JSON,
	{ .name = "verbose", .key = 'v', .help = "libbpf's messages", .set = set_verbose },
	OPT_HELP,
	{ 0 },
};

/* The cases, in the order of the table; the first is the baseline. */
#define PROG_CASES 9
static int prog_cases(struct bcase *cases, int *ncases)
{
	int err;

#define CASE(nm, e, rc, bok, r) \
	(cases[*ncases] = (struct bcase){ .name = nm, .empty = e, .rc_psn = rc, .batch_ok = bok, \
					  .reason = XHCA_R_##r, .lidx = 1 }, &cases[(*ncases)++])
	/* placed: a host QP's WRITE into the pre-translated region, payload
	 * copied into host memory by xhca_rx (no AckReq: nothing for xhcad).
	 * UC takes a repeated WRITE ONLY as a new message, so batch works. */
#define PLACED_CASE(nm, rc, lx, n) \
	(cases[*ncases] = (struct bcase){ .name = nm, .rc_psn = rc, .batch_ok = !rc, \
					  .reason = XHCA_R_PLACED, .lidx = lx, .placed = n }, \
	 &cases[(*ncases)++])
	err = build(CASE("empty XDP program (baseline)", 1, 0, 1, MAX),
		    XHCA_OPC_RC | XHCA_OP_SEND_ONLY, QPN_RC, 64, 0);
	err = err ?: build(CASE("not RoCE (UDP to port 4792): pass", 0, 0, 1, PASS_NOT_ROCE),
			   XHCA_OPC_RC | XHCA_OP_SEND_ONLY, QPN_RC, 64, 4792);
	err = err ?: build(CASE("CAM miss", 0, 0, 1, DROP_CAM_MISS),
			   XHCA_OPC_RC | XHCA_OP_SEND_ONLY, QPN_MISS, 64, 0);
	err = err ?: build(CASE("RC SEND accepted", 0, 1, 0, ACCEPT_DROP),
			   XHCA_OPC_RC | XHCA_OP_SEND_ONLY, QPN_RC, 64, 0);
	err = err ?: build(CASE("RC RDMA WRITE 1 KiB accepted", 0, 1, 0, ACCEPT_DROP),
			   XHCA_OPC_RC | XHCA_OP_WRITE_ONLY, QPN_RC, WRITE_LEN, 0);
	err = err ?: build(CASE("UD SEND accepted", 0, 0, 1, ACCEPT_DROP),
			   XHCA_OPC_UD | XHCA_OP_SEND_ONLY, QPN_UD, 64, 0);
	err = err ?: build(PLACED_CASE("RC RDMA WRITE 1 KiB placed", 1, 3, WRITE_LEN),
			   XHCA_OPC_RC | XHCA_OP_WRITE_ONLY, QPN_RC_HOST, WRITE_LEN, 0);
	err = err ?: build(PLACED_CASE("UC RDMA WRITE 1 KiB placed", 0, 4, WRITE_LEN),
			   XHCA_OPC_UC | XHCA_OP_WRITE_ONLY, QPN_UC_HOST, WRITE_LEN, 0);
	err = err ?: build(PLACED_CASE("UC RDMA WRITE 4 KiB placed", 0, 4, WRITE_MAX),
			   XHCA_OPC_UC | XHCA_OP_WRITE_ONLY, QPN_UC_HOST, WRITE_MAX, 0);
#undef PLACED_CASE
#undef CASE
	if (err)
		pr_warn("prog: build: %s\n", strerror(-err));
	return err;
}

/* Every case by every method it allows, round after round; the cases
 * interleaved within a round, so a slow moment of the machine hits them all. */
static int prog_rounds(struct bench *b, struct bcase *cases, int ncases,
		       const struct prog_args *a)
{
	for (int r = 0; r < a->rounds; r++) {
		for (int i = 0; i < ncases; i++) {
			for (int m = SINGLE; m <= BATCH; m++) {
				double ns;

				if (m == BATCH && !cases[i].batch_ok)
					continue;
				ns = measure(b, &cases[i], m, m == BATCH ? a->calls * 10 : a->calls);
				if (ns < 0) {
					pr_warn("prog: %s: %s\n", cases[i].name, strerror((int)-ns));
					return (int)ns;
				}
				cases[i].ns[m][r] = ns;
			}
		}
	}
	return 0;
}

/* The placed cases' payload rate in batch mode (the frame placed at the
 * same address each time), beside memcpy of the same chunk into one fixed
 * buffer, measured now: how near xhca_rx's placement is to a plain copy.
 * Returns 1 if it wrote a row (in JSON: the array "placement", left open). */
static int prog_placement(const struct bcase *cases, int ncases, const struct prog_args *a)
{
	int first = 1;

	for (int i = 0; i < ncases; i++) {
		double bt, gbs, mc, t;

		if (!cases[i].placed || !cases[i].batch_ok)
			continue;
		bt = median(cases[i].ns[BATCH], a->rounds);
		gbs = bt > 0 ? cases[i].placed / bt : 0;
		mc = (double)memcpy_run(cases[i].placed, cases[i].placed, 0.3, &t) / t / 1e9;
		if (!(mc > 0)) {
			pr_warn("prog: %s: no memory for memcpy's buffer: no placement row\n",
				cases[i].name);
			continue;
		}
		if (json) {
			if (first)
				jw_open("placement", '[');
			jw_open(NULL, '{');
			jw_str("name", cases[i].name);
			jw_float("gbytes_per_s", 3, gbs);
			jw_float("memcpy_gbytes_per_s", 3, mc);
			jw_float("ratio", 3, mc > 0 ? gbs / mc : 0);
			jw_close('}');
		} else {
			if (first)
				printf("\n%-36s %10s %10s %7s\n", "placement (batch), GB/s", "xhca_rx",
				       "memcpy", "ratio");
			printf("%-36s %10.2f %10.2f %6.2fx\n", cases[i].name, gbs, mc,
			       mc > 0 ? gbs / mc : 0);
		}
		first = 0;
	}
	return !first;
}

/* A case's medians in JSON: single, and batch (bt) if it has one (bt >= 0),
 * each beside the baseline's (base). */
static void prog_case_json(const struct bcase *c, double s, double bt, const double base[2])
{
	jw_open(NULL, '{');
	jw_str("name", c->name);
	jw_float("single_ns", 2, s);
	jw_float("single_ratio", 3, s / base[0]);
	if (bt >= 0) {
		jw_float("batch_ns", 2, bt);
		jw_float("batch_ratio", 3, bt / base[1]);
	}
	jw_close('}');
}

/* Each case's medians, beside the baseline's (cases[0]). */
static void prog_print(const struct bcase *cases, int ncases, const struct prog_args *a,
		       double t0)
{
	double base[2] = { median(cases[0].ns[SINGLE], a->rounds),
			   median(cases[0].ns[BATCH], a->rounds) };
	int placed;

	if (json) {
		jw_open(NULL, '{');
		jw_u64("calls", a->calls);
		jw_u64("rounds", (unsigned int)a->rounds);
		jw_open("cases", '[');
	} else {
		printf("%-36s %10s %7s %10s %7s\n", "ns/packet (median of rounds)", "single",
		       "ratio", "batch", "ratio");
	}
	for (int i = 0; i < ncases; i++) {
		double s = median(cases[i].ns[SINGLE], a->rounds);
		double bt = cases[i].batch_ok ? median(cases[i].ns[BATCH], a->rounds) : -1;

		if (json) {
			prog_case_json(&cases[i], s, bt, base);
			continue;
		}
		printf("%-36s %10.1f %6.2fx", cases[i].name, s, s / base[0]);
		if (bt >= 0)
			printf(" %10.1f %6.2fx\n", bt, bt / base[1]);
		else
			printf(" %10s %7s\n", "-", "-");
	}
	if (json)
		jw_close(']');
	placed = prog_placement(cases, ncases, a);
	if (json) {
		if (placed)
			jw_close(']');
		jw_float("seconds", 1, now_sec() - t0);
		jw_close('}');
	} else {
		printf("single: one packet per test run, %u runs; batch: %u repeats of one "
		       "frame;\nratio: against the empty program measured the same way. "
		       "%d rounds, %.1f s.\n", a->calls, a->calls * 10, a->rounds, now_sec() - t0);
	}
}

static int cmd_prog(void *args)
{
	static struct bcase cases[PROG_CASES];
	const struct prog_args *a = args;
	struct bench b = {};
	double t0 = now_sec();
	int err, ncases = 0;

	err = load(&b);
	err = err ?: prog_cases(cases, &ncases);
	err = err ?: prog_rounds(&b, cases, ncases, a);
	if (!err)
		prog_print(cases, ncases, a, t0);
	if (b.hm)
		munmap(b.hm, PLACE_PAGES * XHCA_PAGE_SIZE);
	xhca__destroy(b.rx);
	xhca_empty__destroy(b.empty);
	return err ? 1 : 0;
}

/* ---- sched --------------------------------------------------------------- */

/* 8 queues, always backlogged, of frame sizes 64..4096. */
static __u32 bq_head(void *ctx, __u32 q, __u64 *t)
{
	__u64 *arrival = ctx;

	*t = arrival[q];
	return 64u << (q % 7);
}

static int bq_ready(void *ctx, __u32 q)
{
	return 1;
}

static double sched_ns(enum sched_mode mode, __u32 n, __u64 *check)
{
	static const struct sched_ops ops = { bq_head, bq_ready };
	__u64 arrival[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, sum = 0;
	struct sched s;
	double t0;

	sched_init(&s, mode, 8, XHCA_PAGE_SIZE);
	for (__u32 q = 0; q < 8; q++)
		s.weight[q] = q + 1;
	t0 = now_sec();
	for (__u32 i = 0; i < n; i++) {
		int q = sched_next(&s, &ops, arrival);

		if (q < 0)
			return -1;
		sched_charge(&s, (__u32)q, 64u << (q % 7));
		arrival[q] += 8;
		sum += (__u64)q;
	}
	*check = sum;
	return (now_sec() - t0) * 1e9 / n;
}


XHCA_OPT_SETTER(set_frames) { *(__u32 *)ctx = (__u32)v; return 0; }

static const struct xhca_opt sched_opts[] = {
	{ .name = "frames", .key = 'n', .arg = "FRAMES", .help = "decisions per run; the median of "
	  "five runs\nof each scheduler", .set = set_frames,
	  XHCA_OPT_RANGE(1, UINT32_MAX, FRAMES_DEFAULT) },
	OPT_JSON,
	OPT_HELP,
	{ 0 },
};

static int cmd_sched(void *args)
{
	__u32 n = *(const __u32 *)args;
	double drr[5], fifo[5], d, f;
	__u64 check;

	for (int r = 0; r < 5; r++) {
		drr[r] = sched_ns(FQ_SCHED_DRR, n, &check);
		fifo[r] = sched_ns(FQ_SCHED_FIFO, n, &check);
	}
	d = median(drr, 5);
	f = median(fifo, 5);
	if (json) {
		jw_open(NULL, '{');
		jw_u64("frames", n);
		jw_float("drr_ns", 2, d);
		jw_float("fifo_ns", 2, f);
		jw_float("ratio", 3, d / f);
		jw_close('}');
	} else {
		printf("%-44s %8.2f ns\n%-44s %8.2f ns %6.2fx\n",
		       "FIFO, 8 backlogged queues (baseline)", f,
		       "DRR, 8 backlogged queues, weights 1..8", d, d / f);
	}
	return 0;
}

/* ---- memcpy -------------------------------------------------------------- */

struct memcpy_args {
	size_t chunk, area;
	double secs;
};

#define A ((struct memcpy_args *)ctx)
XHCA_OPT_SETTER(set_chunk) { A->chunk = (size_t)v; return 0; }
XHCA_OPT_SETTER(set_area) { A->area = (size_t)v; return 0; }
XHCA_OPT_SETTER(set_mc_secs) { return secs(arg, &A->secs); }
#undef A

static const struct xhca_opt memcpy_opts[] = {
	{ .name = "chunk", .key = 'c', .arg = "CHUNK", .help = "bytes per copy (WRITE payload)",
	  .set = set_chunk, XHCA_OPT_RANGE(1, MEMCPY_SRC, CHUNK_DEFAULT) },
	{ .name = "area", .key = 'a', .arg = "AREA", .help = "bytes the copies walk through "
	  "(CHUNK\nor more)", .set = set_area, XHCA_OPT_RANGE_UNBOUNDED(1, SIZE_MAX, AREA_DEFAULT) },
	{ .name = "seconds", .key = 's', .arg = "SECONDS", .help = "how long (default 1)",
	  .set = set_mc_secs, .hint = "give a positive number of seconds" },
	OPT_JSON,
	OPT_HELP,
	{ 0 },
};

static int cmd_memcpy(void *args)
{
	const struct memcpy_args *a = args;
	double t;
	__u64 bytes;

	if (a->area < a->chunk) {
		pr_warn("memcpy: --area %zu is smaller than --chunk %zu; give more\n", a->area,
			a->chunk);
		return 2;
	}
	bytes = memcpy_run(a->chunk, a->area, a->secs, &t);
	if (!bytes)
		return 1;
	if (json) {
		jw_open(NULL, '{');
		jw_u64("chunk", a->chunk);
		jw_u64("area", a->area);
		jw_u64("bytes", bytes);
		jw_float("seconds", 6, t);
		jw_float("gbytes_per_s", 3, (double)bytes / t / 1e9);
		jw_close('}');
	} else {
		printf("memcpy of %zu-byte chunks through %zu bytes: %.2f GB/s\n", a->chunk, a->area,
		       (double)bytes / t / 1e9);
	}
	return 0;
}

/* ---- crc ----------------------------------------------------------------- */

#define CRC_BUF 65536
#define CRC_IMPLS (XHCA_CRC_CLMUL512 + 1)

static const size_t crc_sizes[] = { 64, 256, 1024, 4096, 65536 };
static const char *const crc_names[CRC_IMPLS] = { "sliced8", "clmul128", "clmul256",
						  "clmul512" };

static const struct xhca_opt crc_opts[] = {
	{ .name = "rounds", .key = 'r', .arg = "ROUNDS", .help = "rounds; each figure is their "
	  "median", .set = set_rounds, XHCA_OPT_RANGE(1, 64, ROUNDS_DEFAULT) },
	OPT_JSON,
	OPT_HELP,
	{ 0 },
};

/* ns per CRC-32 of n bytes of buf, about 16 MiB's worth of calls: by
 * xhca_crc32 as it is set (impl >= 0), or by zlib. */
static double crc_ns(int impl, const __u8 *buf, size_t n)
{
	unsigned long reps = 1 + (16ul << 20) / n;
	volatile __u32 sink = 0;
	double t0 = now_sec();

	for (unsigned long i = 0; i < reps; i++)
		sink += impl >= 0 ? xhca_crc32((__u32)i, buf, n) : (__u32)crc32(i, buf, (uInt)n);
	(void)sink;
	return (now_sec() - t0) / (double)reps * 1e9;
}

static int cmd_crc(void *args)
{
	const struct prog_args *a = args;
	enum { NS = sizeof(crc_sizes) / sizeof(crc_sizes[0]) };
	static double ns[NS][CRC_IMPLS + 1][64];
	int best = xhca_crc32_impl(-1);
	__u8 *buf = malloc(CRC_BUF);

	if (!buf)
		return 1;
	for (int k = 0; k < CRC_BUF; k++)
		buf[k] = (__u8)(k * 131 + (k >> 7));
	/* rounds interleaved, so a slow moment of the machine hits them all */
	for (int r = 0; r < a->rounds; r++)
		for (int s = 0; s < NS; s++)
			for (int i = -1; i <= best; i++) {
				if (i >= 0)
					xhca_crc32_impl(i);
				ns[s][i + 1][r] = crc_ns(i, buf, crc_sizes[s]);
			}
	xhca_crc32_impl(-1);
	free(buf);
	if (json) {
		jw_open(NULL, '{');
		jw_u64("rounds", (unsigned int)a->rounds);
		jw_str("best", crc_names[best]);
		jw_open("sizes", '[');
	} else {
		printf("%-22s %9s", "ns per CRC-32 (median)", "zlib");
		for (int i = 0; i < CRC_IMPLS; i++)
			printf(" %9s", crc_names[i]);
		printf(" %7s\n", "ratio");
	}
	for (int s = 0; s < NS; s++) {
		double z = median(ns[s][0], a->rounds), b = median(ns[s][best + 1], a->rounds);

		if (json) {
			jw_open(NULL, '{');
			jw_u64("bytes", crc_sizes[s]);
			jw_float("zlib_ns", 1, z);
			for (int i = 0; i <= best; i++)
				jw_float(crc_names[i], 1, median(ns[s][i + 1], a->rounds));
			jw_float("ratio", 3, b / z);
			jw_close('}');
			continue;
		}
		printf("%-22zu %9.1f", crc_sizes[s], z);
		for (int i = 0; i < CRC_IMPLS; i++)
			if (i <= best)
				printf(" %9.1f", median(ns[s][i + 1], a->rounds));
			else
				printf(" %9s", "-");
		printf(" %6.2fx\n", b / z);
	}
	if (json) {
		jw_close(']');
		jw_close('}');
	} else {
		printf("ratio: the best this CPU has (%s) against zlib; '-': the CPU has not "
		       "got it.\n%d rounds.\n", crc_names[best], a->rounds);
	}
	return 0;
}

/* ---- udp-sink ------------------------------------------------------------ */

#define SINK_MAX 64	/* sockets, and datagrams per recvmmsg */

struct sink_args {
	int port, idle_ms, nsock;
	double secs;
	const char *group, *ifname;
};

#define A ((struct sink_args *)ctx)
XHCA_OPT_SETTER(set_port) { A->port = (int)v; return 0; }
XHCA_OPT_SETTER(set_sink_secs) { return secs(arg, &A->secs); }
XHCA_OPT_SETTER(set_idle) { A->idle_ms = (int)v; return 0; }
XHCA_OPT_SETTER(set_group) { A->group = arg; return 0; }
XHCA_OPT_SETTER(set_sink_if) { A->ifname = arg; return 0; }
XHCA_OPT_SETTER(set_nsock) { A->nsock = (int)v; return 0; }
#undef A

static const struct xhca_opt sink_opts[] = {
	{ .name = "port", .key = 'p', .arg = "PORT", .help = "the UDP port", .set = set_port,
	  XHCA_OPT_RANGE(1, 65535, XHCA_ROCE_UDP_PORT) },
	{ .name = "seconds", .key = 's', .arg = "SECONDS", .help = "stop SECONDS after the first "
	  "datagram (default 5)", .set = set_sink_secs,
	  .hint = "give a positive number of seconds" },
	{ .name = "idle-ms", .key = 'i', .arg = "IDLE_MS", .help = "stop after IDLE_MS ms with no "
	  "datagram", .set = set_idle, XHCA_OPT_RANGE_UNBOUNDED(1, INT_MAX, IDLE_MS_DEFAULT) },
	{ .name = "group", .key = 'm', .arg = "GROUP", .help = "every socket joins this IPv4 "
	  "group on -I's\ninterface: the kernel's own multicast fan-out", .set = set_group },
	{ .name = "interface", .key = 'I', .arg = "IF", .help = "the interface of -m's group",
	  .set = set_sink_if },
	{ .name = "sockets", .key = 'n', .arg = "SOCKETS", .help = "sockets on the port",
	  .set = set_nsock, XHCA_OPT_RANGE(1, SINK_MAX, SOCKETS_DEFAULT) },
	OPT_JSON,
	OPT_HELP,
	{ 0 },
};

/* a->nsock sockets bound to the port, each a member of the group if there
 * is one. 0, or -errno with the message printed. */
static int sink_open(const struct sink_args *a, struct pollfd *pfd)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((__u16)a->port) };
	int rcvbuf = 1 << 24, one = 1;

	for (int k = 0; k < a->nsock; k++) {
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		if (fd < 0)
			goto fail;
		pfd[k].fd = fd;
		pfd[k].events = POLLIN;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			pr_warn("udp-sink: bind port %d: %s\n", a->port, strerror(errno));
			goto fail;
		}
		if (a->group) {
			/* every socket joins: the kernel's own fan-out, one copy each */
			struct ip_mreqn mr = { .imr_ifindex = (int)if_nametoindex(a->ifname) };

			if (inet_pton(AF_INET, a->group, &mr.imr_multiaddr) != 1 ||
			    setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr))) {
				pr_warn("udp-sink: join %s on %s: %s\n", a->group, a->ifname,
					strerror(errno));
				goto fail;
			}
		}
	}
	return 0;
fail:
	for (int k = 0; k < a->nsock && pfd[k].fd >= 0; k++)
		close(pfd[k].fd);
	return -EIO;
}

struct sink_count {
	unsigned long long n, bytes;
	double first, last;
};

/* Counts datagrams until a->secs after the first, or a->idle_ms without one. */
static void sink_run(const struct sink_args *a, struct pollfd *pfd, struct sink_count *c)
{
	static char bufs[SINK_MAX][2048];
	struct mmsghdr msgs[SINK_MAX];
	struct iovec iov[SINK_MAX];

	for (int i = 0; i < SINK_MAX; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = sizeof(bufs[i]);
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	for (;;) {
		int r = poll(pfd, (nfds_t)a->nsock, a->idle_ms), got;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break; /* idle timeout */
		for (int k = 0; k < a->nsock; k++) {
			if (!pfd[k].revents)
				continue;
			got = recvmmsg(pfd[k].fd, msgs, SINK_MAX, MSG_DONTWAIT, NULL);
			if (got <= 0)
				continue;
			c->last = now_sec();
			if (!c->n)
				c->first = c->last;
			c->n += (unsigned long long)got;
			for (int i = 0; i < got; i++)
				c->bytes += msgs[i].msg_len;
		}
		if (c->n && c->last - c->first >= a->secs)
			break;
	}
}

static int cmd_udp_sink(void *args)
{
	const struct sink_args *a = args;
	struct pollfd pfd[SINK_MAX];
	struct sink_count c = {};

	if (a->group && !a->ifname) {
		pr_warn("udp-sink: -m %s needs -I IFNAME, the interface to join it on\n", a->group);
		return 2;
	}
	for (int k = 0; k < SINK_MAX; k++)
		pfd[k].fd = -1;
	if (sink_open(a, pfd))
		return 1;
	/* Ready: the caller waits for this line before it starts sending. */
	fprintf(stderr, "udp-sink: listening on port %d (%d sockets)\n", a->port, a->nsock);
	sink_run(a, pfd, &c);
	for (int k = 0; k < a->nsock; k++)
		close(pfd[k].fd);
	if (json) {
		jw_open(NULL, '{');
		jw_u64("received", c.n);
		jw_u64("bytes", c.bytes);
		jw_float("seconds", 6, c.last - c.first);
		jw_close('}');
	} else {
		printf("received %llu datagrams (%llu bytes) in %.3f s\n", c.n, c.bytes,
		       c.last - c.first);
	}
	return 0;
}

/* ---- tcp-pingpong -------------------------------------------------------- */

#define PP_PORT_DEFAULT 11112
#define PP_COUNT_DEFAULT 20000
#define PP_SIZE_DEFAULT 64
#define PP_SIZE_MAX 65536

struct pp_args {
	const char *listen, *connect;
	int port, size, count, spin;
};

#define A ((struct pp_args *)ctx)
XHCA_OPT_SETTER(set_pp_listen) { A->listen = arg; return 0; }
XHCA_OPT_SETTER(set_pp_connect) { A->connect = arg; return 0; }
XHCA_OPT_SETTER(set_pp_port) { A->port = (int)v; return 0; }
XHCA_OPT_SETTER(set_pp_size) { A->size = (int)v; return 0; }
XHCA_OPT_SETTER(set_pp_count) { A->count = (int)v; return 0; }
XHCA_OPT_SETTER(set_pp_spin) { A->spin = 1; return 0; }
#undef A

static const struct xhca_opt pp_opts[] = {
	{ .name = "listen", .key = 'l', .arg = "ADDR", .help = "the server: echo every message of "
	  "one\nconnection on ADDR until it closes", .set = set_pp_listen },
	{ .name = "connect", .key = 'c', .arg = "ADDR", .help = "the client: COUNT messages to "
	  "ADDR, each\nwaiting for its echo", .set = set_pp_connect },
	{ .name = "port", .key = 'p', .arg = "PORT", .help = "the TCP port", .set = set_pp_port,
	  XHCA_OPT_RANGE(1, 65535, PP_PORT_DEFAULT) },
	{ .name = "size", .key = 'm', .arg = "SIZE", .help = "bytes per message",
	  .set = set_pp_size, XHCA_OPT_RANGE(1, PP_SIZE_MAX, PP_SIZE_DEFAULT) },
	{ .name = "count", .key = 'n', .arg = "COUNT", .help = "round trips (client)",
	  .set = set_pp_count, XHCA_OPT_RANGE(1, 10000000, PP_COUNT_DEFAULT) },
	{ .name = "spin", .key = 's', .help = "wait on a non-blocking socket, polling it\n"
	  "without sleeping (as perftest polls its CQ); else\nsleep in a blocking read",
	  .set = set_pp_spin },
	OPT_JSON,
	OPT_HELP,
	{ 0 },
};

/* All n bytes through fd (TCP_NODELAY, blocking or not): 0, or -1 when the
 * peer closed or an error other than EAGAIN came. */
static int pp_io(int fd, char *b, int n, int rd)
{
	for (int got = 0; got < n;) {
		ssize_t r = rd ? recv(fd, b + got, (size_t)(n - got), 0)
			       : send(fd, b + got, (size_t)(n - got), MSG_NOSIGNAL);

		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0)
			return -1;
		got += (int)r;
	}
	return 0;
}

/* A TCP socket to or from addr:port, TCP_NODELAY, non-blocking with spin
 * once connected. -1 with the message printed. */
static int pp_socket(const struct pp_args *a)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((__u16)a->port) };
	const char *addr = a->listen ? a->listen : a->connect;
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c;

	if (fd < 0 || inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		pr_warn("tcp-pingpong: %s: not an IPv4 address, or no socket\n", addr);
		goto fail;
	}
	if (a->listen) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1)) {
			pr_warn("tcp-pingpong: listen on %s:%d: %s\n", addr, a->port,
				strerror(errno));
			goto fail;
		}
		c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		close(fd);
		fd = c;
		if (fd < 0) {
			pr_warn("tcp-pingpong: accept: %s\n", strerror(errno));
			return -1;
		}
	} else if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		pr_warn("tcp-pingpong: connect to %s:%d: %s\n", addr, a->port, strerror(errno));
		goto fail;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (a->spin && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)) {
		pr_warn("tcp-pingpong: a non-blocking socket: %s\n", strerror(errno));
		goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The client's round trips; prints one way (half the round trip, as
 * sockperf and perftest report it), median and 99th percentile. */
static int pp_client(const struct pp_args *a, int fd, char *buf)
{
	double *rtt = malloc(sizeof(*rtt) * (size_t)a->count);
	double p50, p99;

	if (!rtt)
		return 1;
	for (int i = 0; i < a->count; i++) {
		double t0 = now_sec();

		buf[0] = (char)i;
		if (pp_io(fd, buf, a->size, 0) || pp_io(fd, buf, a->size, 1) || buf[0] != (char)i) {
			pr_warn("tcp-pingpong: round trip %d: %s\n", i,
				buf[0] != (char)i ? "not its echo" : "the connection broke");
			free(rtt);
			return 1;
		}
		rtt[i] = now_sec() - t0;
	}
	qsort(rtt, (size_t)a->count, sizeof(*rtt), cmp_double);
	p50 = rtt[a->count / 2] / 2 * 1e6;
	p99 = rtt[(size_t)a->count * 99 / 100] / 2 * 1e6;
	if (json) {
		jw_open(NULL, '{');
		jw_u64("count", (unsigned int)a->count);
		jw_u64("size", (unsigned int)a->size);
		jw_u64("spin", (unsigned int)a->spin);
		jw_float("p50_us", 3, p50);
		jw_float("p99_us", 3, p99);
		jw_close('}');
	} else {
		printf("%d round trips of %d bytes (%s): one way %.2f us median, %.2f us 99th "
		       "percentile\n", a->count, a->size, a->spin ? "spinning" : "blocking", p50, p99);
	}
	free(rtt);
	return 0;
}

static int cmd_tcp_pingpong(void *args)
{
	const struct pp_args *a = args;
	static char buf[PP_SIZE_MAX];
	int fd, rc = 0;

	if (!a->listen == !a->connect) {
		pr_warn("tcp-pingpong: give -l ADDR (the server) or -c ADDR (the client)\n");
		return 2;
	}
	fd = pp_socket(a);
	if (fd < 0)
		return 1;
	if (a->connect)
		rc = pp_client(a, fd, buf);
	else
		while (!pp_io(fd, buf, a->size, 1) && !pp_io(fd, buf, a->size, 0))
			;
	close(fd);
	return rc;
}

/* ---- commands ------------------------------------------------------------ */

static struct prog_args prog_args = { .calls = CALLS_DEFAULT, .rounds = ROUNDS_DEFAULT };
static struct prog_args crc_args = { .rounds = ROUNDS_DEFAULT }; /* (only its rounds) */
static __u32 sched_frames = FRAMES_DEFAULT;
static struct memcpy_args memcpy_args = {
	.chunk = CHUNK_DEFAULT, .area = AREA_DEFAULT, .secs = 1,
};
static struct sink_args sink_args = {
	.port = XHCA_ROCE_UDP_PORT, .idle_ms = IDLE_MS_DEFAULT, .nsock = SOCKETS_DEFAULT, .secs = 5,
};
static struct pp_args pp_args = {
	.port = PP_PORT_DEFAULT, .size = PP_SIZE_DEFAULT, .count = PP_COUNT_DEFAULT,
};

/* ---- jit-lines ----------------------------------------------------------- */

/* A loaded program's line information: n lines of rs bytes each (*li),
 * where each starts in the JIT image (*addr), its BTF for their text. 0,
 * or -1 with the reason told. */
struct jit_lines {
	__u32 n, rs;
	void *li;
	__u64 *addr;
	struct btf *btf;
};

static int jl_fetch(int fd, __u32 id, struct jit_lines *j)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		pr_warn("jit-lines: program %u: %s\n", id, strerror(errno));
		return -1;
	}
	j->n = info.nr_line_info;
	j->rs = info.line_info_rec_size;
	if (!j->n || info.nr_jited_line_info != j->n || j->rs < sizeof(struct bpf_line_info) ||
	    !info.btf_id) {
		pr_warn("jit-lines: program %u has no line information (%u lines, %u JIT "
			"addresses, BTF %u)\n", id, j->n, info.nr_jited_line_info, info.btf_id);
		return -1;
	}
	j->li = calloc(j->n, j->rs);
	j->addr = calloc(j->n, sizeof(*j->addr));
	if (!j->li || !j->addr)
		return -1;
	memset(&info, 0, sizeof(info));
	info.nr_line_info = j->n;
	info.line_info_rec_size = j->rs;
	info.line_info = (__u64)(unsigned long)j->li;
	info.nr_jited_line_info = j->n;
	info.jited_line_info_rec_size = sizeof(*j->addr);
	info.jited_line_info = (__u64)(unsigned long)j->addr;
	len = sizeof(info);
	j->btf = bpf_obj_get_info_by_fd(fd, &info, &len) ? NULL
							 : btf__load_from_kernel_by_id(info.btf_id);
	if (!j->btf) {
		pr_warn("jit-lines: program %u: its lines or BTF: %s\n", id, strerror(errno));
		return -1;
	}
	return 0;
}

static void jl_print(const struct jit_lines *j, __u32 id)
{
	if (json) {
		jw_open(NULL, '{');
		jw_u64("prog", id);
		jw_open("lines", '[');
	}
	for (__u32 i = 0; i < j->n; i++) {
		const struct bpf_line_info *l = (const void *)((const char *)j->li + (size_t)i * j->rs);
		const char *file = btf__name_by_offset(j->btf, l->file_name_off);
		const char *text = btf__name_by_offset(j->btf, l->line_off);
		const char *base = file ? strrchr(file, '/') : NULL;

		base = base ? base + 1 : file ? file : "?";
		text = text ? text : "";
		if (json) {
			jw_open(NULL, '{');
			jw_u64("addr", j->addr[i]);
			jw_str("file", base);
			jw_u64("line", BPF_LINE_INFO_LINE_NUM(l->line_col));
			jw_str("text", text);
			jw_close('}');
		} else {
			printf("%llx %s:%u %s\n", (unsigned long long)j->addr[i], base,
			       BPF_LINE_INFO_LINE_NUM(l->line_col), text);
		}
	}
	if (json) {
		jw_close(']');
		jw_close('}');
	}
}

/* Where each source line of a loaded BPF program starts in its JIT image:
 * the kernel's jited_line_info beside line_info, the lines' text from the
 * program's BTF. perf names a sample in a program by its address only
 * (perf annotate needs libopcode for BPF); bench_profile.sh maps its
 * samples to lines with this. */
static int cmd_jit_lines(void *args)
{
	__u32 id = *(const __u32 *)args;
	struct jit_lines j = {};
	int fd, err;

	if (!id) {
		pr_warn("jit-lines: which program? --prog ID\n");
		return 2;
	}
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0) {
		pr_warn("jit-lines: program %u: %s\n", id, strerror(errno));
		return 1;
	}
	err = jl_fetch(fd, id, &j);
	if (!err)
		jl_print(&j, id);
	btf__free(j.btf);
	free(j.li);
	free(j.addr);
	close(fd);
	return err ? 1 : 0;
}

XHCA_OPT_SETTER(set_prog_id) { *(__u32 *)ctx = (__u32)v; return 0; }

static const struct xhca_opt jl_opts[] = {
	{ .name = "prog", .key = 'p', .arg = "ID", .help = "the loaded program (bpftool prog, "
	  "xhca status's prog_id)", .set = set_prog_id, XHCA_OPT_RANGE(1, UINT32_MAX, 0) },
	OPT_JSON,
	OPT_HELP,
	{ 0 },
};

static __u32 jl_prog;

static const struct cmd {
	const char *name, *what;
	const struct xhca_opt *opts;
	void *args;		/* the options' ctx, holding their defaults */
	int (*run)(void *args);
} cmds[] = {
	{ "prog", "ns per packet of xhca_rx under BPF_PROG_TEST_RUN, beside the empty\n"
	  "XDP program", prog_opts, &prog_args, cmd_prog },
	{ "sched", "ns per decision of xhcad's flow queue scheduler, DRR beside FIFO",
	  sched_opts, &sched_frames, cmd_sched },
	{ "memcpy", "memcpy bandwidth on one CPU: CHUNK-byte copies through AREA bytes",
	  memcpy_opts, &memcpy_args, cmd_memcpy },
	{ "crc", "ns per CRC-32 (the ICRC's) by each implementation this CPU has, beside\n"
	  "zlib's", crc_opts, &crc_args, cmd_crc },
	{ "udp-sink", "a kernel UDP socket counting the datagrams it receives: the baseline\n"
	  "through the interface", sink_opts, &sink_args, cmd_udp_sink },
	{ "tcp-pingpong", "TCP ping-pong of SIZE-byte messages: one way latency, median and\n"
	  "99th percentile; --spin polls the socket as perftest polls its CQ",
	  pp_opts, &pp_args, cmd_tcp_pingpong },
	{ "jit-lines", "where each source line of a loaded BPF program starts in its JIT image\n"
	  "(perf's addresses in a program to lines: tests/bench_profile.sh)",
	  jl_opts, &jl_prog, cmd_jit_lines },
};

static void cmd_usage(FILE *f, const struct cmd *c)
{
	fprintf(f, "xhca-bench %s [options]\n%s\n", c->name, c->what);
	xhca_opt_usage(f, c->opts, 25);
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: xhca-bench COMMAND [options], each figure beside a baseline\n"
		   "measured in the same run; make bench runs them and the veth throughput\n"
		   "comparison.\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		fputc('\n', f);
		cmd_usage(f, &cmds[i]);
	}
}

int main(int argc, char **argv)
{
	char prog[32];

	xhca_log_init("xhca-bench", XHCA_LOG_WARN);
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const struct cmd *c = &cmds[i];

		if (strcmp(argv[1], c->name))
			continue;
		snprintf(prog, sizeof(prog), "xhca-bench %s", c->name);
		switch (xhca_opt_parse_all(prog, c->opts, argc - 1, argv + 1, c->args)) {
		case 0:
			return c->run(c->args);
		case XHCA_OPT_HELP:
			cmd_usage(stdout, c);
			return 0;
		default:
			return 2;
		}
	}
	pr_warn("unknown command '%s'; use prog, sched, memcpy, crc, udp-sink, tcp-pingpong or "
		"jit-lines\n",
		argv[1]);
	return 2;
}
