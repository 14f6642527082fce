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
 *	  not-RoCE, CAM miss, UD SEND, RC duplicate).
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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xhca/abi.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "log.h"
#include "xhca.skel.h"
#include "xhca_empty.skel.h"
#include "../user/xhcad/sched.h"

#define BENCH_QPS 64
#define QPN_RC 0x000100u
#define QPN_UD 0x000101u
#define QPN_MISS 0x00abcdu
#define UD_QKEY 0x11111111u
#define WRITE_LEN 1024

static int json;

enum method { SINGLE, BATCH };

struct bcase {
	const char *name;
	int empty;		/* run xhca_empty instead of xhca_rx */
	int rc_psn;		/* an RC QP accepts it: advance the PSN per packet */
	int batch_ok;		/* the verdict does not depend on state */
	int reason;		/* the reason xhca_rx must give */
	__u8 frame[XHCA_PKT_MAX];
	__u32 len;
	double ns[2][64];	/* per method, per round */
};

struct bench {
	struct xhca *rx;
	struct xhca_empty *empty;
	int ncpus;
	__u32 epsn;		/* expected PSN of the RC QP */
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

/* The QPs the cases address, written as xhcad writes them. */
static int qp_setup(struct bench *b, __u32 lidx, __u32 qpn, __u8 type, __u32 qkey)
{
	struct xhca_qp_ctx c = {};
	struct xhca_cam_val v = { .lidx = lidx, .gen = 1 };

	c.gen = 1;
	c.gqpn = qpn;
	c.valid = 1;
	c.type = type;
	c.state = XHCA_QPS_RTS;
	c.action = XHCA_ACT_DROP;
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
	err = xhca__load(b->rx);
	if (err) {
		pr_warn("prog: cannot load xhca_rx: %s; run as root, with -v for the log\n",
			strerror(-err));
		return err;
	}
	if (bpf_map__update_elem(b->rx->maps.xhca_pkeys, &k, sizeof(k), &pk, sizeof(pk), 0))
		return -errno;
	err = qp_setup(b, 1, QPN_RC, XHCA_QPT_RC, 0);
	if (!err)
		err = qp_setup(b, 2, QPN_UD, XHCA_QPT_UD, UD_QKEY);
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

	if (m == BATCH) {
		o.repeat = n;
		if (bpf_prog_test_run_opts(fd, &o))
			return -errno;
		total = (__u64)o.duration * n;
	} else {
		o.repeat = 1;
		for (__u32 i = 0; i < n; i++) {
			if (c->rc_psn)
				set_psn(c, b->epsn++ & XHCA_PSN_MASK);
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
	return (double)total / n;
}

static int cmd_prog(int argc, char **argv)
{
	static struct bcase cases[6];
	struct bench b = {};
	__u32 calls = 200000;
	int rounds = 7, c, err = 0, ncases = 0;
	double t0 = now_sec();

	while ((c = getopt(argc, argv, "n:r:jv")) != -1) {
		switch (c) {
		case 'n':
			calls = (__u32)strtoul(optarg, NULL, 0);
			if (!calls || calls > 100000000) {
				pr_warn("prog: -n %s: give 1..100000000 calls\n", optarg);
				return 2;
			}
			break;
		case 'r':
			rounds = atoi(optarg);
			if (rounds < 1 || rounds > 64) {
				pr_warn("prog: -r %s: give 1..64 rounds\n", optarg);
				return 2;
			}
			break;
		case 'j':
			json = 1;
			break;
		case 'v':
			xhca_log_init("xhca-bench", XHCA_LOG_DEBUG);
			break;
		default:
			pr_warn("prog: usage: xhca-bench prog [-n CALLS] [-r ROUNDS] [-j]\n");
			return 2;
		}
	}
	err = load(&b);
	if (err)
		goto out;
#define CASE(nm, e, rc, bok, r) \
	(cases[ncases] = (struct bcase){ .name = nm, .empty = e, .rc_psn = rc, .batch_ok = bok, \
					 .reason = XHCA_R_##r }, &cases[ncases++])
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
#undef CASE
	if (err) {
		pr_warn("prog: build: %s\n", strerror(-err));
		goto out;
	}
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < ncases; i++) {
			for (int m = SINGLE; m <= BATCH; m++) {
				double ns;

				if (m == BATCH && !cases[i].batch_ok)
					continue;
				ns = measure(&b, &cases[i], m, m == BATCH ? calls * 10 : calls);
				if (ns < 0) {
					err = (int)ns;
					pr_warn("prog: %s: %s\n", cases[i].name, strerror(-err));
					goto out;
				}
				cases[i].ns[m][r] = ns;
			}
		}
	}
	{
		double base[2] = { median(cases[0].ns[SINGLE], rounds),
				   median(cases[0].ns[BATCH], rounds) };

		if (json)
			printf("{\"calls\": %u, \"rounds\": %d, \"cases\": [", calls, rounds);
		else
			printf("%-36s %10s %7s %10s %7s\n", "ns/packet (median of rounds)", "single",
			       "ratio", "batch", "ratio");
		for (int i = 0; i < ncases; i++) {
			double s = median(cases[i].ns[SINGLE], rounds);
			double bt = cases[i].batch_ok ? median(cases[i].ns[BATCH], rounds) : -1;

			if (json) {
				printf("%s{\"name\": \"%s\", \"single_ns\": %.2f, \"single_ratio\": "
				       "%.3f", i ? ", " : "", cases[i].name, s, s / base[0]);
				if (bt >= 0)
					printf(", \"batch_ns\": %.2f, \"batch_ratio\": %.3f", bt,
					       bt / base[1]);
				printf("}");
				continue;
			}
			printf("%-36s %10.1f %6.2fx", cases[i].name, s, s / base[0]);
			if (bt >= 0)
				printf(" %10.1f %6.2fx\n", bt, bt / base[1]);
			else
				printf(" %10s %7s\n", "-", "-");
		}
		if (json)
			printf("], \"seconds\": %.1f}\n", now_sec() - t0);
		else
			printf("single: one packet per test run, %u runs; batch: %u repeats of one "
			       "frame;\nratio: against the empty program measured the same way. "
			       "%d rounds, %.1f s.\n", calls, calls * 10, rounds, now_sec() - t0);
	}
out:
	xhca__destroy(b.rx);
	xhca_empty__destroy(b.empty);
	return err ? 1 : 0;
}

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

static int cmd_sched(int argc, char **argv)
{
	__u32 n = 20000000;
	double drr[5], fifo[5];
	__u64 check;
	int c;

	while ((c = getopt(argc, argv, "n:j")) != -1) {
		if (c == 'n') {
			n = (__u32)strtoul(optarg, NULL, 0);
			if (!n) {
				pr_warn("sched: -n %s: give a number of frames\n", optarg);
				return 2;
			}
		} else if (c == 'j') {
			json = 1;
		} else {
			pr_warn("sched: usage: xhca-bench sched [-n FRAMES] [-j]\n");
			return 2;
		}
	}
	for (int r = 0; r < 5; r++) {
		drr[r] = sched_ns(FQ_SCHED_DRR, n, &check);
		fifo[r] = sched_ns(FQ_SCHED_FIFO, n, &check);
	}
	{
		double d = median(drr, 5), f = median(fifo, 5);

		if (json)
			printf("{\"frames\": %u, \"drr_ns\": %.2f, \"fifo_ns\": %.2f, \"ratio\": "
			       "%.3f}\n", n, d, f, d / f);
		else
			printf("%-44s %8.2f ns\n%-44s %8.2f ns %6.2fx\n",
			       "FIFO, 8 backlogged queues (baseline)", f,
			       "DRR, 8 backlogged queues, weights 1..8", d, d / f);
	}
	return 0;
}

static int cmd_memcpy(int argc, char **argv)
{
	size_t chunk = 2048, area = 32u << 20;
	double secs = 1, t0, t;
	__u64 bytes = 0;
	__u8 *dst, src[9216];
	size_t off = 0;
	int c;

	while ((c = getopt(argc, argv, "c:a:s:j")) != -1) {
		if (c == 'c')
			chunk = strtoul(optarg, NULL, 0);
		else if (c == 'a')
			area = strtoul(optarg, NULL, 0);
		else if (c == 's')
			secs = atof(optarg);
		else if (c == 'j')
			json = 1;
		else
			chunk = 0;
	}
	if (!chunk || chunk > sizeof(src) || area < chunk || !(secs > 0)) {
		pr_warn("memcpy: usage: xhca-bench memcpy [-c CHUNK (1..9216)] [-a AREA] [-s SECONDS] "
			"[-j]\n");
		return 2;
	}
	dst = malloc(area);
	if (!dst)
		return 1;
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
	if (json)
		printf("{\"chunk\": %zu, \"area\": %zu, \"bytes\": %llu, \"seconds\": %.6f, "
		       "\"gbytes_per_s\": %.3f}\n", chunk, area, (unsigned long long)bytes, t,
		       (double)bytes / t / 1e9);
	else
		printf("memcpy of %zu-byte chunks through %zu bytes: %.2f GB/s\n", chunk, area,
		       (double)bytes / t / 1e9);
	free(dst);
	return 0;
}

static int cmd_udp_sink(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	static char bufs[64][2048];
	struct mmsghdr msgs[64];
	struct iovec iov[64];
	struct pollfd pfd[64];
	double seconds = 5, first = 0, last = 0;
	unsigned long long n = 0, bytes = 0;
	int port = XHCA_ROCE_UDP_PORT, idle_ms = 2000, c, nsock = 1, rcvbuf = 1 << 24, one = 1;
	const char *group = NULL, *ifname = NULL;

	while ((c = getopt(argc, argv, "p:s:i:m:n:I:j")) != -1) {
		switch (c) {
		case 'p':
			port = atoi(optarg);
			break;
		case 's':
			seconds = atof(optarg);
			break;
		case 'i':
			idle_ms = atoi(optarg);
			break;
		case 'm':
			group = optarg;
			break;
		case 'n':
			nsock = atoi(optarg);
			break;
		case 'I':
			ifname = optarg;
			break;
		case 'j':
			json = 1;
			break;
		default:
			pr_warn("udp-sink: usage: xhca-bench udp-sink [-p PORT] [-s SECONDS] "
				"[-i IDLE_MS] [-m GROUP -I IFNAME] [-n SOCKETS] [-j]\n");
			return 2;
		}
	}
	if (port < 1 || port > 65535 || !(seconds > 0) || idle_ms < 1 || nsock < 1 || nsock > 64 ||
	    (group && !ifname)) {
		pr_warn("udp-sink: give a port 1..65535, seconds > 0, idle ms > 0, 1..64 sockets, "
			"and -I with -m\n");
		return 2;
	}
	sa.sin_port = htons((__u16)port);
	for (int k = 0; k < nsock; k++) {
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		if (fd < 0)
			return 1;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			pr_warn("udp-sink: bind port %d: %s\n", port, strerror(errno));
			return 1;
		}
		if (group) {
			/* every socket joins: the kernel's own fan-out, one copy each */
			struct ip_mreqn mr = { .imr_ifindex = (int)if_nametoindex(ifname) };

			if (inet_pton(AF_INET, group, &mr.imr_multiaddr) != 1 ||
			    setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr))) {
				pr_warn("udp-sink: join %s on %s: %s\n", group, ifname,
					strerror(errno));
				return 1;
			}
		}
		pfd[k].fd = fd;
		pfd[k].events = POLLIN;
	}
	for (int i = 0; i < 64; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = sizeof(bufs[i]);
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	/* Ready: the caller waits for this line before it starts sending. */
	fprintf(stderr, "udp-sink: listening on port %d (%d sockets)\n", port, nsock);
	for (;;) {
		int r = poll(pfd, (nfds_t)nsock, idle_ms), got;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break; /* idle timeout */
		for (int k = 0; k < nsock; k++) {
			if (!pfd[k].revents)
				continue;
			got = recvmmsg(pfd[k].fd, msgs, 64, MSG_DONTWAIT, NULL);
			if (got <= 0)
				continue;
			last = now_sec();
			if (!n)
				first = last;
			n += (unsigned long long)got;
			for (int i = 0; i < got; i++)
				bytes += msgs[i].msg_len;
		}
		if (n && last - first >= seconds)
			break;
	}
	for (int k = 0; k < nsock; k++)
		close(pfd[k].fd);
	if (json)
		printf("{\"received\": %llu, \"bytes\": %llu, \"seconds\": %.6f}\n", n, bytes,
		       last - first);
	else
		printf("received %llu datagrams (%llu bytes) in %.3f s\n", n, bytes, last - first);
	return 0;
}

int main(int argc, char **argv)
{
	xhca_log_init("xhca-bench", XHCA_LOG_WARN);
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(argc < 2 ? stderr : stdout,
			"Usage: xhca-bench prog [-n CALLS] [-r ROUNDS] [-j]\n"
			"       xhca-bench sched [-n FRAMES] [-j]\n"
			"       xhca-bench memcpy [-c CHUNK] [-a AREA] [-s SECONDS] [-j]\n"
			"       xhca-bench udp-sink [-p PORT] [-s SECONDS] [-i IDLE_MS] [-m GROUP -I IF]\n"
			"                           [-n SOCKETS] [-j]\n"
			"make bench runs both and the veth throughput comparison.\n");
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "prog"))
		return cmd_prog(argc - 1, argv + 1);
	if (!strcmp(argv[1], "udp-sink"))
		return cmd_udp_sink(argc - 1, argv + 1);
	if (!strcmp(argv[1], "sched"))
		return cmd_sched(argc - 1, argv + 1);
	if (!strcmp(argv[1], "memcpy"))
		return cmd_memcpy(argc - 1, argv + 1);
	pr_warn("unknown command '%s'; use prog, sched, memcpy or udp-sink\n", argv[1]);
	return 2;
}
