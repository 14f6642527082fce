/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-rc: an application on each of two xhca hosts, through libxhca only,
 * connected perftest-style (a TCP connection carries the QP numbers, PSNs,
 * addresses and R_Keys, and keeps the two sides in step). One side is the
 * server (no --connect), the other the client:
 *
 *   ping-pong  the client SENDs --pingpong messages of 64 B, the server
 *              SENDs each back; the client prints the round-trip times
 *   write      the client RDMA WRITEs --write-mib MiB into the server's
 *              memory (1 MiB requests, the last with immediate), and SENDs
 *              its hash; the server hashes what it got and compares
 *   read       the client RDMA READs it all back and compares hashes
 *   counter    a counter in the server's memory: the client adds 1 with
 *              --counter FETCH_ADDs while the server adds 1 as many times
 *              with the CPU's atomic add, at the same time (xhca executes
 *              ATOMICs with the CPU's atomics: the two compose); the total
 *              is exact and the client's FETCH_ADDs returned distinct values
 *   multicast  the server's two UD QPs join --mcast; the client's UD QP
 *              SENDs --mcast-msgs messages to the group; each member gets
 *              each (UD is unreliable: --expect-all makes a loss a failure)
 *
 *   xhca-rc -i IFNAME -a LOCAL_IP [-c SERVER_IP] [-p PORT] [--mtu N]
 *           [--write-mib N] [--pingpong N] [--counter N] [--mcast GROUP]
 *           [--mcast-msgs N] [--expect-all] [--bench SECONDS]
 *
 * --bench SECONDS: instead, speed beside TCP on the same path (the side
 * channel): 64 B ping-pong round trips, 64 B SENDs per second beside a
 * stream of 64 B messages, 64 KiB WRITE bandwidth beside a 64 KiB stream;
 * the client prints the table.
 *
 * Exit codes: 0 every check passed, 1 a check failed or an error (named on
 * stderr), 2 bad usage.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <xhca/pkt.h>
#include <xhca/xhca.h>
#include "opt.h"

#define QKEY 0x2c0ffee5u
#define CHUNK (1u << 20)
#define WAIT_S 60
#define SPIN_S 50e-6	/* a completion wait polls this long before it sleeps */
#define HELLO_MAGIC 0x78726331u /* "xrc1" */
/* the options' defaults (main's, and the usage's) */
#define PORT_DEFAULT 18515
#define MTU_DEFAULT 1024
#define WRITE_MIB_DEFAULT 64
#define PINGPONG_DEFAULT 1000
#define COUNTER_DEFAULT 1000
#define MCAST_MSGS_DEFAULT 100

struct hello {
	uint32_t magic, qpn, psn, mtu;
	uint64_t va, len, counter_va;
	uint32_t rkey, pad;
};

static const char *role = "xhca-rc";
static int failed;
static int side_fd = -1;	/* the side channel: its end means the peer is gone */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", role);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static void verdict(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void verdict(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s: %s ", role, ok ? "ok:" : "FAILED:");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failed |= !ok;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* ---- the TCP side channel ------------------------------------------------ */

static void xfer(int fd, void *buf, size_t n, int out)
{
	uint8_t *p = buf;

	while (n) {
		struct pollfd pf = { .fd = fd, .events = out ? POLLOUT : POLLIN };
		ssize_t r;

		if (poll(&pf, 1, WAIT_S * 1000) != 1)
			die("the peer went quiet for %d s (side channel)", WAIT_S);
		r = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
		if (r == 0)
			die("the peer closed the side channel");
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("side channel: %s", strerror(errno));
		}
		p += r;
		n -= (size_t)r;
	}
}

/* Both sides reached the same step; a value goes each way. */
static uint64_t sync_step(int fd, uint64_t mine)
{
	uint64_t theirs;

	xfer(fd, &mine, sizeof(mine), 1);
	xfer(fd, &theirs, sizeof(theirs), 0);
	return theirs;
}

static int side_channel(const char *local, const char *server, int port)
{
	struct sockaddr_storage ss = {};
	socklen_t sl;
	int fd, one = 1, v6;
	const char *ip = server ? server : local;

	v6 = strchr(ip, ':') != NULL;
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, ip, &a->sin6_addr) != 1)
			die("%s: not an IPv6 address", ip);
		sl = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, ip, &a->sin_addr) != 1)
			die("%s: not an IPv4 address", ip);
		sl = sizeof(*a);
	}
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	if (server) {
		double t0 = now_s();

		/* the server may not listen yet: try for a while */
		while (connect(fd, (struct sockaddr *)&ss, sl)) {
			if (now_s() - t0 > 10)
				die("connect to %s port %d: %s", server, port, strerror(errno));
			close(fd);
			usleep(100000);
			fd = socket(ss.ss_family, SOCK_STREAM, 0);
		}
	} else {
		int l = fd;

		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(l, (struct sockaddr *)&ss, sl) || listen(l, 1))
			die("listen on %s port %d: %s", local, port, strerror(errno));
		say("listening on %s port %d\n", local, port);
		{
			struct pollfd pf = { .fd = l, .events = POLLIN };

			if (poll(&pf, 1, WAIT_S * 1000) != 1)
				die("no client connected in %d s", WAIT_S);
		}
		fd = accept(l, NULL, NULL);
		if (fd < 0)
			die("accept: %s", strerror(errno));
		close(l);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* ---- verbs ---------------------------------------------------------------- */

struct host {
	struct xhca_ctx *ctx;
	struct xhca_pd *pd;
	struct xhca_cq *scq, *rcq;
	struct xhca_qp *qp;
	uint8_t *buf;		/* server: [data | msgs | counter]; client: [src | back | msgs] */
	size_t len;
	struct xhca_mr *mr;
	uint8_t *msgs;		/* 64 KiB for SENDs, results */
	uint8_t ip[16];
	int v6;
};

/* One completion of cq. It polls for SPIN_S first (libxhca yields the CPU
 * every 64 empty polls), as a verbs application spinning on its CQ does
 * (perftest), then sleeps on the CQ's eventfd: a wakeup costs more than a
 * short spin. */
static void wc_wait(struct xhca_cq *cq, struct xhca_wc *wc, const char *what)
{
	double t0 = now_s();

	for (;;) {
		if (xhca_poll_cq(cq, wc, 1) == 1) {
			if (wc->status != XHCA_WC_SUCCESS)
				die("%s: completion status %u (vendor 0x%x)", what, wc->status,
				    wc->vendor_err);
			return;
		}
		if (now_s() - t0 < SPIN_S)
			continue;
		if (now_s() - t0 > WAIT_S)
			die("%s: no completion in %d s", what, WAIT_S);
		if (side_fd >= 0) {
			struct pollfd pf = { .fd = side_fd, .events = POLLRDHUP };

			if (poll(&pf, 1, 0) == 1 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR)))
				die("%s: the peer closed the side channel", what);
		}
		xhca_cq_wait(cq, 100);
	}
}

static void post_one(struct host *h, enum xhca_wr_opcode op, uint64_t id, void *addr,
		     uint32_t len, uint64_t raddr, uint32_t rkey, uint32_t imm, const char *what)
{
	struct xhca_sge g = { .addr = (uintptr_t)addr, .length = len };
	struct xhca_send_wr wr = {
		.wr_id = id, .sg_list = &g, .num_sge = 1, .opcode = op,
		.send_flags = XHCA_SEND_SIGNALED, .imm_data = htonl(imm),
	};
	int r;

	if (op == XHCA_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	r = xhca_post_send(h->qp, &wr, NULL);
	if (r)
		die("%s: post_send: %s", what, strerror(-r));
}

static void host_open(struct host *h, const char *ifname, size_t len)
{
	struct xhca_qp_init_attr ia = {
		.type = XHCA_QPT_RC, .flowq = -1, .rq_depth = 1024, .sq_depth = 1024,
	};

	h->ctx = xhca_open(ifname);
	if (!h->ctx)
		die("%s", xhca_errmsg(NULL));
	h->pd = xhca_pd_alloc(h->ctx);
	h->scq = xhca_cq_create(h->ctx, 4096);
	h->rcq = xhca_cq_create(h->ctx, 4096);
	if (!h->pd || !h->scq || !h->rcq)
		die("pd/cq: %s", xhca_errmsg(h->ctx));
	h->len = len;
	h->buf = xhca_alloc(h->ctx, len);
	if (!h->buf)
		die("xhca_alloc %zu MiB: %s", len >> 20, xhca_errmsg(h->ctx));
	h->mr = xhca_mr_reg(h->pd, h->buf, len, XHCA_ACCESS_ALL);
	if (!h->mr)
		die("mr reg: %s", xhca_errmsg(h->ctx));
	ia.pd = h->pd;
	ia.send_cq = h->scq;
	ia.recv_cq = h->rcq;
	h->qp = xhca_qp_create(h->ctx, &ia);
	if (!h->qp)
		die("qp create: %s", xhca_errmsg(h->ctx));
}

static void host_connect(struct host *h, const struct hello *me, const struct hello *peer,
			 const uint8_t peer_ip[16])
{
	struct xhca_qp_attr a = { .state = XHCA_QPS_INIT };
	uint8_t shift = 8;

	while ((1u << shift) < me->mtu)
		shift++;
	a.mask = XHCA_QPA_STATE;
	if (xhca_qp_modify(h->qp, &a))
		die("qp init: %s", xhca_errmsg(h->ctx));
	memset(&a, 0, sizeof(a));
	a.state = XHCA_QPS_RTR;
	a.mtu_shift = shift;
	a.epsn = peer->psn;
	memcpy(a.local_ip, h->ip, 16);
	memcpy(a.remote_ip, peer_ip, 16);
	a.flags = h->v6 ? XHCA_QPF_IPV6 : 0;
	a.dest_qpn = peer->qpn;
	a.mask = XHCA_QPA_STATE | XHCA_QPA_MTU | XHCA_QPA_EPSN | XHCA_QPA_LOCAL_IP |
		 XHCA_QPA_REMOTE_IP | XHCA_QPA_DEST_QPN;
	if (xhca_qp_modify(h->qp, &a))
		die("qp rtr: %s", xhca_errmsg(h->ctx));
	memset(&a, 0, sizeof(a));
	a.state = XHCA_QPS_RTS;
	a.sq_psn = me->psn;
	a.mask = XHCA_QPA_STATE | XHCA_QPA_SQ_PSN;
	if (xhca_qp_modify(h->qp, &a))
		die("qp rts: %s", xhca_errmsg(h->ctx));
}

static struct xhca_qp *ud_qp(struct host *h, struct xhca_cq *cq, int mtu)
{
	struct xhca_qp_init_attr ia = {
		.type = XHCA_QPT_UD, .qkey = QKEY, .flowq = -1, .recv_cq = cq, .rq_depth = 1024,
		.pd = h->pd, .send_cq = h->scq, .sq_depth = 1024,
	};
	struct xhca_qp *qp = xhca_qp_create(h->ctx, &ia);
	struct xhca_qp_attr a = { .state = XHCA_QPS_INIT, .mask = XHCA_QPA_STATE };

	if (!qp || xhca_qp_modify(qp, &a))
		die("ud qp: %s", xhca_errmsg(h->ctx));
	a.state = XHCA_QPS_RTR;
	a.mask = XHCA_QPA_STATE | XHCA_QPA_MTU;
	while ((1 << a.mtu_shift) < mtu)
		a.mtu_shift++;
	if (xhca_qp_modify(qp, &a))
		die("ud qp rtr: %s", xhca_errmsg(h->ctx));
	a.mask = XHCA_QPA_STATE;
	a.state = XHCA_QPS_RTS;
	if (xhca_qp_modify(qp, &a))
		die("ud qp rts: %s", xhca_errmsg(h->ctx));
	return qp;
}

/* ---- the phases ------------------------------------------------------------ */

struct opts {
	const char *ifname, *local, *server;
	int port, mtu, pingpong, counter, mcast_msgs, expect_all, bench;
	unsigned int write_mib;
	uint8_t local_ip[16], group[16];
	const char *group_str;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pingpong(struct host *h, int fd, int n, int client)
{
	double med = 0;
	uint8_t *out = h->msgs, *in = h->msgs + 4096;
	double *rtt = calloc((size_t)n, sizeof(*rtt));
	struct xhca_wc wc;
	int bad = 0;

	if (!rtt)
		die("out of memory");
	if (xhca_post_recv(h->qp, 1, in, 64))
		die("post_recv");
	sync_step(fd, 0);
	for (int i = 0; i < n; i++) {
		double t0 = now_s();

		if (client) {
			memset(out, i & 0xff, 64);
			post_one(h, XHCA_WR_SEND, 1, out, 64, 0, 0, 0, "ping");
			wc_wait(h->rcq, &wc, "pong");
			rtt[i] = now_s() - t0;
			bad += wc.byte_len != 64 || in[0] != (i & 0xff) || in[63] != (i & 0xff);
			if (i + 1 < n && xhca_post_recv(h->qp, 1, in, 64))
				die("post_recv");
			wc_wait(h->scq, &wc, "ping sent");
		} else {
			wc_wait(h->rcq, &wc, "ping");
			memcpy(out, in, 64);
			if (i + 1 < n && xhca_post_recv(h->qp, 1, in, 64))
				die("post_recv");
			post_one(h, XHCA_WR_SEND, 1, out, 64, 0, 0, 0, "pong");
			wc_wait(h->scq, &wc, "pong sent");
		}
	}
	if (client) {
		double sum = 0;

		qsort(rtt, (size_t)n, sizeof(*rtt), cmp_double);
		for (int i = 0; i < n; i++)
			sum += rtt[i];
		verdict(!bad, "ping-pong: %d SENDs of 64 B each way, every one back intact (%d not); "
			"round trip min %.1f us, median %.1f us, mean %.1f us", n, bad, rtt[0] * 1e6,
			rtt[n / 2] * 1e6, sum / n * 1e6);
		med = rtt[n / 2];
	}
	sync_step(fd, 0);
	free(rtt);
	return med;
}

/* Message bytes as the tests' (pkt.h): each byte's place shows. */
static void fill_pattern(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = xhca_msg_pattern(seed, i);
}

static void client_write_read(struct host *h, int fd, const struct hello *peer, size_t len)
{
	uint8_t *src = h->buf, *back = h->buf + len;
	size_t chunks = (len + CHUNK - 1) / CHUNK, done = 0;
	uint64_t hash, theirs;
	struct xhca_wc wc;
	double t0, t;

	fill_pattern(src, len, (uint32_t)getpid());
	hash = fnv1a(src, len);
	sync_step(fd, 0);
	t0 = now_s();
	for (size_t i = 0; i < chunks; i++) {
		uint32_t n = (uint32_t)(len - i * CHUNK < CHUNK ? len - i * CHUNK : CHUNK);

		post_one(h, i + 1 == chunks ? XHCA_WR_RDMA_WRITE_WITH_IMM : XHCA_WR_RDMA_WRITE, i,
			 src + i * CHUNK, n, peer->va + i * CHUNK, peer->rkey, (uint32_t)chunks,
			 "write");
	}
	for (done = 0; done < chunks; done++)
		wc_wait(h->scq, &wc, "write");
	t = now_s() - t0;
	say("wrote %zu MiB in %zu RDMA WRITEs of 1 MiB in %.3f s (%.0f MB/s), hash %016llx\n",
	    len >> 20, chunks, t, len / t / 1e6, (unsigned long long)hash);
	theirs = sync_step(fd, hash);
	verdict(theirs == hash, "write: the server's hash of its %zu MiB is %016llx, the client's "
		"%016llx", len >> 20, (unsigned long long)theirs, (unsigned long long)hash);

	memset(back, 0, len);
	t0 = now_s();
	for (size_t i = 0; i < chunks; i++) {
		uint32_t n = (uint32_t)(len - i * CHUNK < CHUNK ? len - i * CHUNK : CHUNK);

		post_one(h, XHCA_WR_RDMA_READ, i, back + i * CHUNK, n, peer->va + i * CHUNK,
			 peer->rkey, 0, "read");
	}
	for (done = 0; done < chunks; done++)
		wc_wait(h->scq, &wc, "read");
	t = now_s() - t0;
	theirs = fnv1a(back, len);
	verdict(theirs == hash, "read: %zu MiB read back in %zu RDMA READs in %.3f s (%.0f MB/s), "
		"hash %016llx, written %016llx", len >> 20, chunks, t, len / t / 1e6,
		(unsigned long long)theirs, (unsigned long long)hash);
	sync_step(fd, 0);
}

static void server_write_read(struct host *h, int fd, size_t len)
{
	struct xhca_wc wc;
	uint64_t mine, theirs;

	if (xhca_post_recv(h->qp, 2, h->msgs, 64))
		die("post_recv");
	memset(h->buf, 0, len);
	sync_step(fd, 0);
	wc_wait(h->rcq, &wc, "the WRITE's immediate");
	if (wc.opcode != XHCA_WC_RECV_RDMA_WITH_IMM)
		die("write: completion opcode %u, want RECV_RDMA_WITH_IMM", wc.opcode);
	mine = fnv1a(h->buf, len);
	theirs = sync_step(fd, mine);
	verdict(mine == theirs, "write: %zu MiB arrived (immediate %u = the number of WRITEs), "
		"hash %016llx, the client's %016llx", len >> 20, ntohl(wc.imm_data),
		(unsigned long long)mine, (unsigned long long)theirs);
	sync_step(fd, 0); /* the client's READs */
}

static void counter(struct host *h, int fd, const struct hello *peer, int n, int client)
{
	uint64_t *res = (uint64_t *)(h->msgs + 8192), *ctr = (uint64_t *)(h->buf + h->len - 64);
	struct xhca_wc wc;

	if (!client)
		__atomic_store_n(ctr, 0, __ATOMIC_SEQ_CST);
	sync_step(fd, 0);
	if (client) {
		int posted = 0, done = 0, dup = 0;

		while (done < n) {
			while (posted < n && posted - done < 64) {
				res[posted] = ~0ull;
				post_one(h, XHCA_WR_ATOMIC_FETCH_AND_ADD, (uint64_t)posted, &res[posted], 8,
					 peer->counter_va, peer->rkey, 0, "fetch_add");
				posted++;
			}
			wc_wait(h->scq, &wc, "fetch_add");
			done++;
		}
		/* distinct values: each FETCH_ADD executed once, atomically */
		qsort(res, (size_t)n, sizeof(*res), cmp_u64);
		for (int i = 1; i < n; i++)
			dup += res[i] == res[i - 1];
		verdict(!dup && res[n - 1] < (uint64_t)2 * n,
			"counter: %d FETCH_ADDs from the client returned %d distinct values below %d",
			n, n - dup, 2 * n);
		sync_step(fd, 0);
	} else {
		for (int i = 0; i < n; i++) {
			__atomic_fetch_add(ctr, 1, __ATOMIC_SEQ_CST);
			if (i % 16 == 0)
				usleep(10); /* spread over the client's run */
		}
		sync_step(fd, 0);
		verdict(__atomic_load_n(ctr, __ATOMIC_SEQ_CST) == (uint64_t)2 * n,
			"counter: %llu = %d FETCH_ADDs from the client + %d atomic adds here",
			(unsigned long long)__atomic_load_n(ctr, __ATOMIC_SEQ_CST), n, n);
	}
	sync_step(fd, 0);
}

/* The client: its UD QP SENDs o->mcast_msgs messages to the group. */
static void mcast_send(struct host *h, int fd, const struct opts *o)
{
	struct xhca_qp *qp = ud_qp(h, h->rcq, o->mtu);
	int k = o->mcast_msgs;
	uint8_t *out = h->msgs;
	struct xhca_wc wc;

	sync_step(fd, 0); /* the members have joined */
	for (int i = 0; i < k; i++) {
		struct xhca_sge g = { .addr = (uintptr_t)(out + (i % 32) * 128), .length = 100 };
		struct xhca_send_wr wr = {
			.wr_id = (uint64_t)i, .sg_list = &g, .num_sge = 1,
			.opcode = XHCA_WR_SEND_WITH_IMM, .send_flags = XHCA_SEND_SIGNALED,
			.imm_data = htonl((uint32_t)i),
		};
		int r;

		fill_pattern(out + (i % 32) * 128, 100, (uint32_t)i);
		memcpy(wr.wr.ud.dest_ip, o->group, 16);
		wr.wr.ud.remote_qpn = 0xffffff;
		wr.wr.ud.remote_qkey = QKEY;
		r = xhca_post_send(qp, &wr, NULL);
		if (r)
			die("multicast: post_send: %s", strerror(-r));
		wc_wait(h->scq, &wc, "multicast send");
		usleep(200); /* UD has no flow control: a message every 0.2 ms */
	}
	say("multicast: %d UD SENDs of 100 B to %s\n", k, o->group_str);
	sync_step(fd, 0);
	xhca_qp_destroy(qp);
}

/* The server: two members, each checks every message it gets. */
static void mcast_receive(struct host *h, int fd, const struct opts *o)
{
	int k = o->mcast_msgs, got[2] = { 0, 0 }, bad = 0;
	struct xhca_cq *cq[2];
	struct xhca_qp *qp[2];
	struct xhca_wc wc;
	double t0;

	for (int m = 0; m < 2; m++) {
		cq[m] = xhca_cq_create(h->ctx, 2048);
		if (!cq[m])
			die("cq: %s", xhca_errmsg(h->ctx));
		qp[m] = ud_qp(h, cq[m], o->mtu);
		if (xhca_mcast_attach(qp[m], o->group))
			die("join %s: %s", o->group_str, xhca_errmsg(h->ctx));
		for (int i = 0; i < k && i < 1000; i++)
			if (xhca_post_recv(qp[m], (uint64_t)i, h->msgs + 16384 + (m * 1000 + i) * 160,
					   160))
				die("post_recv");
	}
	say("multicast: two UD QPs (0x%06x, 0x%06x) joined %s\n", xhca_qp_num(qp[0]),
	    xhca_qp_num(qp[1]), o->group_str);
	sync_step(fd, 0);
	sync_step(fd, 0); /* the client sent them all */
	t0 = now_s();
	while ((got[0] < k || got[1] < k) && now_s() - t0 < 2) {
		int idle = 1;

		for (int m = 0; m < 2; m++) {
			while (xhca_poll_cq(cq[m], &wc, 1) == 1) {
				uint8_t want[100];
				const uint8_t *p = h->msgs + 16384 + (m * 1000 + wc.wr_id) * 160 + 40;

				idle = 0;
				got[m]++;
				fill_pattern(want, 100, ntohl(wc.imm_data));
				bad += wc.status || wc.byte_len != 140 || memcmp(p, want, 100);
			}
		}
		if (idle)
			usleep(1000);
	}
	verdict(!bad && got[0] && got[1] && (!o->expect_all || (got[0] == k && got[1] == k)),
		"multicast: member 1 got %d of %d, member 2 got %d, every byte right (%d not)%s",
		got[0], k, got[1], bad, o->expect_all ? "" : " (UD: a loss is allowed)");
	for (int m = 0; m < 2; m++) {
		xhca_mcast_detach(qp[m], o->group);
		xhca_qp_destroy(qp[m]);
		xhca_cq_destroy(cq[m]);
	}
}

/* ---- --bench: xhca RC beside TCP on the same path ---------------------- */

/* TCP ping-pong of 64 B on the side channel: the median round trip. */
static double tcp_pingpong(int fd, int n, int client)
{
	double *rtt = calloc((size_t)n, sizeof(*rtt)), med = 0;
	uint8_t m[64] = { 0 };

	if (!rtt)
		die("out of memory");
	sync_step(fd, 0);
	for (int i = 0; i < n; i++) {
		double t0 = now_s();

		if (client) {
			xfer(fd, m, sizeof(m), 1);
			xfer(fd, m, sizeof(m), 0);
			rtt[i] = now_s() - t0;
		} else {
			xfer(fd, m, sizeof(m), 0);
			xfer(fd, m, sizeof(m), 1);
		}
	}
	if (client) {
		qsort(rtt, (size_t)n, sizeof(*rtt), cmp_double);
		med = rtt[n / 2];
	}
	free(rtt);
	sync_step(fd, 0);
	return med;
}

/* A TCP stream of size-byte messages for secs: messages per second as the
 * server counted them. The first byte of each says whether more follow. */
static double tcp_stream(int fd, size_t size, double secs, int client)
{
	uint8_t *m = calloc(1, size);
	uint64_t n = 0;
	double t0, rate = 0;

	if (!m)
		die("out of memory");
	sync_step(fd, 0);
	t0 = now_s();
	if (client) {
		while (now_s() - t0 < secs) {
			m[0] = 0;
			for (int k = 0; k < 16; k++)
				xfer(fd, m, size, 1);
		}
		m[0] = 1;
		xfer(fd, m, size, 1);
		n = sync_step(fd, 0);
		rate = n / (now_s() - t0);
	} else {
		do {
			xfer(fd, m, size, 0);
			n += !m[0];
		} while (!m[0]);
		sync_step(fd, n);
	}
	free(m);
	return rate;
}

/* RC SENDs of 64 B for secs, up to 512 outstanding: messages per second
 * the server received. The last, with immediate ~0, says stop. */
static double rc_send_rate(struct host *h, int fd, double secs, int client)
{
	struct xhca_wc wc[64];
	uint64_t posted = 0, done = 0, n = 0;
	double t0, rate = 0;

	if (!client)
		for (int i = 0; i < 1000; i++)
			if (xhca_post_recv(h->qp, (uint64_t)i, h->msgs + 16384 + i * 64, 64))
				die("post_recv");
	sync_step(fd, 0);
	t0 = now_s();
	if (client) {
		int stop = 0;

		while (!stop || done < posted) {
			int c;

			while (!stop && posted - done < 512) {
				stop = now_s() - t0 >= secs;
				post_one(h, stop ? XHCA_WR_SEND_WITH_IMM : XHCA_WR_SEND, posted, h->msgs, 64,
					 0, 0, ~0u, "send");
				posted++;
			}
			c = xhca_poll_cq(h->scq, wc, 64);
			for (int j = 0; j < c; j++)
				if (wc[j].status)
					die("send: completion status %u", wc[j].status);
			done += (uint64_t)(c > 0 ? c : 0);
			if (now_s() - t0 > secs + WAIT_S)
				die("send: stuck, %llu of %llu completed", (unsigned long long)done,
				    (unsigned long long)posted);
		}
		n = sync_step(fd, 0);
		rate = n / (now_s() - t0);
	} else {
		int stop = 0;

		while (!stop) {
			int c = xhca_poll_cq(h->rcq, wc, 64);

			for (int j = 0; j < c; j++) {
				if (wc[j].status)
					die("receive: completion status %u", wc[j].status);
				n++;
				stop |= (wc[j].wc_flags & XHCA_WC_WITH_IMM) != 0;
				if (xhca_post_recv(h->qp, wc[j].wr_id, h->msgs + 16384 + wc[j].wr_id * 64, 64))
					die("post_recv");
			}
			if (now_s() - t0 > secs + WAIT_S)
				die("receive: stuck after %llu", (unsigned long long)n);
		}
		sync_step(fd, n);
	}
	sync_step(fd, 0);
	return rate;
}

/* RC WRITEs of 64 KiB into the server's buffer for secs, up to 32
 * outstanding: bytes per second acknowledged. */
static double rc_write_bw(struct host *h, int fd, const struct hello *peer, double secs,
			  int client)
{
	const uint32_t sz = 64 << 10;
	uint64_t posted = 0, done = 0, slots = peer->len / sz - 1;
	struct xhca_wc wc[64];
	double t0, rate = 0;

	sync_step(fd, 0);
	if (client) {
		t0 = now_s();
		while (done < posted || now_s() - t0 < secs) {
			int c;

			while (posted - done < 32 && now_s() - t0 < secs) {
				post_one(h, XHCA_WR_RDMA_WRITE, posted, h->buf + (posted % slots) * sz, sz,
					 peer->va + (posted % slots) * sz, peer->rkey, 0, "write");
				posted++;
			}
			c = xhca_poll_cq(h->scq, wc, 64);
			for (int j = 0; j < c; j++)
				if (wc[j].status)
					die("write: completion status %u", wc[j].status);
			done += (uint64_t)(c > 0 ? c : 0);
		}
		rate = done * (double)sz / (now_s() - t0);
	}
	sync_step(fd, 0);
	return rate;
}

static void bench(struct host *h, int fd, const struct hello *peer, int mtu, double secs,
		  int client)
{
	double t_rtt, r_rtt, t_msg, r_msg, t_bw, r_bw;

	t_rtt = tcp_pingpong(fd, 2000, client);
	r_rtt = pingpong(h, fd, 2000, client);
	t_msg = tcp_stream(fd, 64, secs, client);
	r_msg = rc_send_rate(h, fd, secs, client);
	t_bw = tcp_stream(fd, 64 << 10, secs, client) * (64 << 10);
	r_bw = rc_write_bw(h, fd, peer, secs, client);
	if (!client)
		return;
	printf("\n%-44s %12s %12s %8s\n", "two hosts, each figure beside TCP", "xhca RC", "TCP",
	       "ratio");
	printf("%-44s %12.1f %12.1f %7.2fx\n", "64 B ping-pong, median round trip (us)",
	       r_rtt * 1e6, t_rtt * 1e6, t_rtt ? r_rtt / t_rtt : 0);
	printf("%-44s %12.0f %12.0f %7.2fx\n", "64 B messages per second (SEND / stream)", r_msg,
	       t_msg, t_msg ? r_msg / t_msg : 0);
	printf("%-44s %12.0f %12.0f %7.2fx\n", "64 KiB bandwidth, MB/s (WRITE / stream)", r_bw / 1e6,
	       t_bw / 1e6, t_bw ? r_bw / t_bw : 0);
	printf("(path MTU %d; TCP on the same veth pair, the side channel; %.0f s each)\n", mtu, secs);
	fflush(stdout);
}

/* ---- options: one table, which also writes the usage text ---------------- */

/* The options' setters (struct xhca_opt's set: ctx is struct opts; v a
 * number already checked against the option's range). */
#define O ((struct opts *)ctx)

XHCA_OPT_SETTER(set_ifname) { O->ifname = arg; return 0; }

XHCA_OPT_SETTER(set_local)
{
	O->local = arg;
	return xhca_ip_parse(arg, O->local_ip) < 0 ? -EINVAL : 0;
}

XHCA_OPT_SETTER(set_server) { O->server = arg; return 0; }
XHCA_OPT_SETTER(set_port) { O->port = (int)v; return 0; }
XHCA_OPT_SETTER(set_mtu) { O->mtu = (int)v; return v & (v - 1) ? -EINVAL : 0; }
XHCA_OPT_SETTER(set_write_mib) { O->write_mib = (unsigned int)v; return 0; }
XHCA_OPT_SETTER(set_pingpong) { O->pingpong = (int)v; return 0; }
XHCA_OPT_SETTER(set_counter) { O->counter = (int)v; return 0; }

XHCA_OPT_SETTER(set_mcast)
{
	O->group_str = arg;
	return xhca_ip_parse(arg, O->group) < 0 || !xhca_ip_is_mcast(O->group) ? -EINVAL : 0;
}

XHCA_OPT_SETTER(set_mcast_msgs) { O->mcast_msgs = (int)v; return 0; }
XHCA_OPT_SETTER(set_expect_all) { O->expect_all = 1; return 0; }
XHCA_OPT_SETTER(set_bench) { O->bench = (int)v; return 0; }
#undef O

#define OPT XHCA_OPT_LONG
#define NUM XHCA_OPT_RANGE
static const struct xhca_opt options[] = {
	{ .name = "interface", .key = 'i', .arg = "IFNAME", .help = "the interface xhcad serves",
	  .set = set_ifname },
	{ .name = "address", .key = 'a', .arg = "LOCAL_IP", .help = "this side's address (its "
	  "QP's and the side\nchannel's)", .set = set_local, .hint = "not an IP address" },
	{ .name = "connect", .key = 'c', .arg = "SERVER_IP", .help = "be the client of the "
	  "server at SERVER_IP (without\n-c: the server)", .set = set_server },
	{ .name = "port", .key = 'p', .arg = "PORT", .help = "the side channel's TCP port",
	  .set = set_port, NUM(1, 65535, PORT_DEFAULT) },
	OPT(0, "mtu", "N", "path MTU: 256, 512, 1024, 2048 or 4096 (the\nsame on both sides)",
	  set_mtu, NUM(256, 4096, MTU_DEFAULT), .hint = "use 256, 512, 1024, 2048 or 4096"),
	OPT(1, "write-mib", "N", "MiB the client RDMA WRITEs into the server's\nmemory and "
	  "reads back", set_write_mib, NUM(1, 1024, WRITE_MIB_DEFAULT)),
	OPT(2, "pingpong", "N", "64 B SENDs of the client, each sent\nback", set_pingpong,
	  NUM(1, 1000000, PINGPONG_DEFAULT)),
	OPT(3, "counter", "N", "FETCH_ADDs of the client and atomic adds of\nthe server, at "
	  "the same time", set_counter, NUM(1, 1000, COUNTER_DEFAULT)),
	OPT(4, "mcast", "GROUP", "the multicast group the server's two UD QPs\njoin "
	  "(default 239.1.1.1)", set_mcast,
	  .hint = "give an IPv4 or IPv6 multicast address"),
	OPT(5, "mcast-msgs", "N", "UD SENDs of the client to the group (0: no\nmulticast)",
	  set_mcast_msgs, NUM(0, 1000, MCAST_MSGS_DEFAULT)),
	OPT(6, "expect-all", NULL, "a multicast message lost is a failure (UD is\n"
	  "unreliable: by default a loss is allowed)", set_expect_all),
	OPT(7, "bench", "SECONDS", "instead of the checks, speed beside TCP on\nthe same "
	  "path, SECONDS each; the client prints\nthe table", set_bench, NUM(1, 60, 0)),
	{ .name = "help", .key = 'h', .help = "this text" },
	{ 0 },
};
#undef NUM
#undef OPT

static void usage(FILE *f)
{
	fprintf(f, "Usage: xhca-rc -i IFNAME -a LOCAL_IP [-c SERVER_IP] [options]\n"
		   "ping-pong, write, read, counter and multicast between two xhca hosts:\n"
		   "the server (without -c) and the client (-c the server's address).\n");
	xhca_opt_usage(f, options, 25);
}

/* The options into o: -1 to go on, else main's exit code. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int err;

	/* the default group is parsed as --mcast's would be */
	xhca_ip_parse(o->group_str, o->group);
	err = xhca_opt_parse_all("xhca-rc", options, argc, argv, o);
	if (err == XHCA_OPT_HELP)
		usage(stdout);
	if (err)
		return err == XHCA_OPT_HELP ? 0 : 2;
	if (!o->ifname || !o->local) {
		fprintf(stderr, "xhca-rc: -i and -a are needed; see xhca-rc --help\n");
		return 2;
	}
	return -1;
}

/* The peer's address as the side channel sees it (IPv4 v4-mapped). */
static void peer_addr(int fd, uint8_t ip[16])
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	getpeername(fd, (struct sockaddr *)&ss, &sl);
	if (ss.ss_family == AF_INET) {
		memset(ip, 0, 10);
		ip[10] = ip[11] = 0xff;
		memcpy(ip + 12, &((struct sockaddr_in *)&ss)->sin_addr, 4);
	} else {
		memcpy(ip, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	}
}

int main(int argc, char **argv)
{
	struct opts o = {
		.port = PORT_DEFAULT, .mtu = MTU_DEFAULT, .pingpong = PINGPONG_DEFAULT,
		.counter = COUNTER_DEFAULT, .mcast_msgs = MCAST_MSGS_DEFAULT,
		.write_mib = WRITE_MIB_DEFAULT, .group_str = "239.1.1.1",
	};
	struct hello me = { .magic = HELLO_MAGIC }, peer;
	uint8_t peer_ip[16];
	struct host h = {};
	int fd, client, rc;
	size_t write_len;

	rc = parse_opts(argc, argv, &o);
	if (rc >= 0)
		return rc;
	write_len = (size_t)o.write_mib << 20;
	memcpy(h.ip, o.local_ip, sizeof(h.ip));
	h.v6 = !xhca_ip_is_v4(h.ip);
	client = o.server != NULL;
	role = client ? "client" : "server";

	/* server: [data | msgs 64 KiB+ | counter]; client: [src | back | msgs] */
	host_open(&h, o.ifname, (client ? 2 * write_len : write_len) + (1u << 20));
	h.msgs = h.buf + (client ? 2 * write_len : write_len);
	fd = side_channel(o.local, o.server, o.port);
	side_fd = fd;
	me.qpn = xhca_qp_num(h.qp);
	me.psn = (uint32_t)(getpid() * 2654435761u) & 0xffffff;
	me.mtu = (uint32_t)o.mtu;
	me.va = (uintptr_t)h.buf;
	me.len = h.len;
	me.rkey = xhca_mr_rkey(h.mr);
	me.counter_va = (uintptr_t)(h.buf + h.len - 64);
	xfer(fd, &me, sizeof(me), 1);
	xfer(fd, &peer, sizeof(peer), 0);
	if (peer.magic != HELLO_MAGIC || peer.mtu != me.mtu)
		die("the peer is not an xhca-rc of the same --mtu");
	peer_addr(fd, peer_ip);
	host_connect(&h, &me, &peer, peer_ip);
	say("RC QP 0x%06x connected to the peer's 0x%06x, path MTU %d\n", me.qpn, peer.qpn, o.mtu);

	if (o.bench) {
		bench(&h, fd, &peer, o.mtu, o.bench, client);
		close(fd);
		xhca_close(h.ctx);
		return 0;
	}
	pingpong(&h, fd, o.pingpong, client);
	if (client)
		client_write_read(&h, fd, &peer, write_len);
	else
		server_write_read(&h, fd, write_len);
	counter(&h, fd, &peer, o.counter, client);
	if (o.mcast_msgs && client)
		mcast_send(&h, fd, &o);
	else if (o.mcast_msgs)
		mcast_receive(&h, fd, &o);
	/* the verdicts of both sides: each exits 1 if either failed */
	if (sync_step(fd, (uint64_t)failed))
		failed = 1;
	say("%s\n", failed ? "FAILED" : "all checks passed");
	close(fd);
	xhca_close(h.ctx);
	return failed ? 1 : 0;
}
