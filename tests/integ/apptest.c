/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-apptest: what the integration tests need an application to do that a
 * well-behaved one (xhca-recv) never does. Each mode prints JSON lines; the
 * shell test drives it through stdin ("go" lines) and reads its output.
 *
 *   badbuf IF   post_recv outside host memory (refused by libxhca); raw
 *               receive entries pointing past host memory and into another
 *               session's pages (error completions from xhcad)
 *   cqwait IF   a UD QP on an armed CQ; after "go" (the test sent it one
 *               SEND) takes the completion by polling alone, leaving the
 *               CQ's doorbell rung, then xhca_cq_wait(cq, 300) with nothing
 *               coming: prints its result and how long it waited
 *   spin IF     polls an empty CQ 640 times; prints how many times libxhca
 *               yielded the CPU meanwhile (this program's sched_yield counts)
 *   handover IF IP
 *               a UD QP (its own send CQ) and an empty CQ; after "go" (the
 *               test stopped xhcad) a SEND to QPN itself at IP, two polls of
 *               the empty CQ, a second SEND, a poll: the yields of each
 *               poll; after the next "go" (xhcad going again) both
 *               completions, a third SEND and a poll
 *   join IF     XHCA_CTL_ALLOC with XHCA_ALLOC_JOIN, raw: wrong joins refused
 *   sqdb IF     the send doorbell request (XHCA_CTL_SQ_DOORBELL) as a raw
 *               client: without a session, and in one without an eventfd;
 *               prints each error and message, then whether xhcad answers
 *   dead IF     a UD QP with a send queue; wait for "go" (the CLI destroyed
 *               the QP), then post_recv, post_send and destroy the handle
 *   hold IF     create a UD QP with a small CQ, never poll, wait for "go",
 *               then poll everything that arrived (a full CQ must stall the
 *               flow queue, not lose completions)
 *   dbgone IF F as hold (flow queue F), but after "go" closes its CQ's doorbell
 *               descriptor (as a program closing every descriptor might), so
 *               libxhca cannot tell xhcad of the room it makes; then polls
 *               twice: the completions there must come all the same, the
 *               doorbell's error with the next call
 *   crash IF    allocate, create a QP, print ready and wait to be killed
 *   mr IF LEN [scatter|contig]
 *               a buffer of LEN bytes registered whole as a memory region
 *               (every access), an RC QP in its PD with receive buffers;
 *               prints the bad-input results of the MR calls, then ready;
 *               stdin: "drain N", "dereg", "reg", "post N", "pd", "quit"
 *   mcast IF MGID NQPS BUFS SEED [hold] [block:K] [nobuf:K] [flowq:F] [cq:N] [nocheck] [stamp]
 *               NQPS UD QPs (Q_Key 0x5151) in one session joined to MGID, BUFS
 *               receive buffers each (none for QP K with nobuf:K; QP K with
 *               block:K blocks its own multicast loopback); polls (after "go"
 *               with hold) until 1.5 s pass without a completion, reposting,
 *               and checks every copy: the payload is xhca_msg_pattern(SEED),
 *               the GRH names the group, the source QPN is 0x77; with hold,
 *               waits for a last line before it closes the session; with
 *               stamp, prints each copy's CLOCK_REALTIME nanoseconds as it
 *               polls it ({"copy": N, "ns": T})
 *   atomic2 IF LOCAL REMOTE
 *               two RC proxy QPs on one proxy CQ, in one PD with one region of
 *               4096 bytes (every access), in RTR with these addresses; prints
 *               the ready line (qpn, qpn2, rkey, iova); stdin: "watch N"
 *               spins on the word at offset 256 until N was added to it
 *               and prints the nanoseconds from its first change to its
 *               last (the bench's ATOMIC rate); "quit" or EOF ends it
 *   spray IF DMAC DST SRC QPN INDEX SECONDS MRLEN
 *               sends UC WRITE ONLY packets through a packet socket, the
 *               R_Key's key byte cycling through all 256 values of INDEX
 *               (the invalidation soak: only a registered key may land),
 *               for SECONDS or until SIGTERM; prints {"sent": N}
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <xhca/ctl.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include <xhca/xhca.h>

#define QKEY 0x5151

/* A QP made from ia brought to state (XHCA_QPS_INIT on), or NULL. */
static struct xhca_qp *qp_up_to(struct xhca_ctx *ctx, const struct xhca_qp_init_attr *ia,
				int state)
{
	struct xhca_qp *qp = xhca_qp_create(ctx, ia);

	for (int st = XHCA_QPS_INIT; qp && st <= state; st++) {
		/* (a reply overwrites a with the QP as it is now: a new one each time) */
		struct xhca_qp_attr a = { .mask = XHCA_QPA_STATE, .state = st };

		if (xhca_qp_modify(qp, &a))
			return NULL;
	}
	return qp;
}

/* A UD QP receiving into cq (depth entries), in RTR. */
static struct xhca_qp *ud_qp(struct xhca_ctx *ctx, struct xhca_cq *cq, unsigned int depth,
			     int flowq)
{
	struct xhca_qp_init_attr ia = {
		.type = XHCA_QPT_UD, .qkey = QKEY, .flowq = flowq, .recv_cq = cq, .rq_depth = depth,
	};

	return qp_up_to(ctx, &ia, XHCA_QPS_RTR);
}

static int wait_go(void)
{
	char line[64];

	return fgets(line, sizeof(line), stdin) && !strncmp(line, "go", 2) ? 0 : -1;
}

/* Polls until n completions or timeout_ms without one. */
static int drain(struct xhca_cq *cq, struct xhca_wc *wc, int n, int timeout_ms)
{
	int got = 0;

	while (got < n) {
		int k = xhca_poll_cq(cq, wc + got, n - got);

		if (k < 0)
			return k;
		if (k) {
			got += k;
			continue;
		}
		if (xhca_cq_wait(cq, timeout_ms) <= 0)
			break;
	}
	return got;
}

static int mode_badbuf(const char *ifname)
{
	struct xhca_ctx *ctx = xhca_open(ifname), *other = xhca_open(ifname);
	struct xhca_wc wc[4];
	struct xhca_cq *cq;
	struct xhca_qp *qp;
	struct xhca_rwqe *rqe;
	struct xhca_ring_ctl *rq;
	uint32_t their_id, our_id;
	__u8 *theirs, *ours;
	char stack_buf[64];
	int r_stack, r_null, r_past, n;

	if (!ctx || !other)
		return 1;
	theirs = xhca_alloc(other, 4096);
	ours = xhca_alloc(ctx, 4096);
	cq = xhca_cq_create(ctx, 16);
	qp = cq ? ud_qp(ctx, cq, 16, -1) : NULL;
	if (!theirs || !ours || !qp || xhca_mem_lookup(other, theirs, 1, &their_id, NULL, NULL) ||
	    xhca_mem_lookup(ctx, ours, 1, &our_id, NULL, NULL)) {
		fprintf(stderr, "apptest: %s\n", xhca_errmsg(ctx));
		return 1;
	}
	/* libxhca refuses what it can see is wrong */
	r_stack = xhca_post_recv(qp, 1, stack_buf, sizeof(stack_buf));
	r_null = xhca_post_recv(qp, 2, ours, 0);
	r_past = xhca_post_recv(qp, 3, ours + 100, 4096);
	printf("{\"stack\": %d, \"zero_len\": %d, \"past_end\": %d}\n", r_stack, r_null, r_past);
	/* an application that writes the ring itself: xhcad checks again */
	rq = xhca_qp_rq(qp);
	rqe = (struct xhca_rwqe *)(rq + 1);
	rqe[0] = (struct xhca_rwqe){ .wr_id = 10, .alloc = 0x12345, .off = 0, .len = 4096 };
	rqe[1] = (struct xhca_rwqe){ .wr_id = 11, .alloc = their_id, .off = 0, .len = 4096 };
	rqe[2] = (struct xhca_rwqe){ .wr_id = 12, .alloc = our_id, .off = 100, .len = 4096 };
	rqe[3] = (struct xhca_rwqe){ .wr_id = 13, .alloc = our_id, .off = 0, .len = 4096 };
	__atomic_store_n(&rq->prod, rq->prod + 4, __ATOMIC_RELEASE);
	printf("{\"ready\": true, \"qpn\": %u}\n", xhca_qp_num(qp));
	fflush(stdout);
	n = drain(cq, wc, 4, 5000);
	for (int i = 0; i < n; i++)
		printf("{\"wr_id\": %llu, \"status\": %u, \"vendor_err\": %u, \"byte_len\": %u}\n",
		       (unsigned long long)wc[i].wr_id, wc[i].status, wc[i].vendor_err,
		       wc[i].byte_len);
	/* their page was not written */
	printf("{\"theirs_untouched\": %s}\n",
	       theirs[0] == 0 && !memcmp(theirs, theirs + 1, 4095) ? "true" : "false");
	xhca_close(other);
	xhca_close(ctx);
	return 0;
}

static int mode_dead(const char *ifname)
{
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_cq *cq;
	struct xhca_qp *qp = NULL;
	__u8 *buf;
	int r_post, r_send, r_destroy, r_cq;

	if (!ctx)
		return 1;
	buf = xhca_alloc(ctx, 4096);
	cq = xhca_cq_create(ctx, 16);
	if (cq) {
		/* with a send queue too: its ring goes with the handle */
		struct xhca_qp_init_attr ia = {
			.type = XHCA_QPT_UD, .qkey = QKEY, .flowq = -1, .recv_cq = cq, .rq_depth = 16,
			.send_cq = cq, .sq_depth = 16,
		};

		qp = xhca_qp_create(ctx, &ia);
	}
	if (!buf || !cq || !qp)
		return 1;
	printf("{\"ready\": true, \"qpn\": %u}\n", xhca_qp_num(qp));
	fflush(stdout);
	if (wait_go())
		return 1;
	r_post = xhca_post_recv(qp, 1, buf, 4096);
	{
		struct xhca_sge g = { .addr = (uintptr_t)buf, .length = 64 };
		struct xhca_send_wr wr = { .wr_id = 2, .sg_list = &g, .num_sge = 1,
					   .opcode = XHCA_WR_SEND };

		r_send = xhca_post_send(qp, &wr, NULL);
	}
	r_destroy = xhca_qp_destroy(qp);
	r_cq = xhca_cq_destroy(cq);
	printf("{\"post\": %d, \"send\": %d, \"destroy\": %d, \"cq_destroy\": %d}\n", r_post,
	       r_send, r_destroy, r_cq);
	xhca_close(ctx);
	return 0;
}

static int mode_cqwait(const char *ifname)
{
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_cq *cq = ctx ? xhca_cq_create(ctx, 16) : NULL;
	struct xhca_qp *qp = cq ? ud_qp(ctx, cq, 16, -1) : NULL;
	__u8 *buf = ctx ? xhca_alloc(ctx, 4096) : NULL;
	struct timespec t0, t1;
	struct xhca_wc wc;
	int r, n = 0;

	if (!qp || !buf || xhca_post_recv(qp, 1, buf, 4096) || xhca_cq_arm(cq))
		return 1;
	printf("{\"ready\": true, \"qpn\": %u}\n", xhca_qp_num(qp));
	fflush(stdout);
	if (wait_go())
		return 1;
	for (int i = 0; i < 2000 && !n; i++) {
		n = xhca_poll_cq(cq, &wc, 1);
		if (!n)
			usleep(1000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = xhca_cq_wait(cq, 300);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("{\"polled\": %d, \"wait\": %d, \"ms\": %lld}\n", n, r,
	       (long long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
	xhca_close(ctx);
	return 0;
}

/* libxhca's calls to sched_yield land here (it is linked in statically). */
static unsigned long yields;

int sched_yield(void)
{
	yields++;
	return (int)syscall(SYS_sched_yield);
}

static int mode_spin(const char *ifname)
{
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_cq *cq = ctx ? xhca_cq_create(ctx, 16) : NULL;
	struct xhca_wc wc;
	int found = 0;

	if (!cq)
		return 1;
	for (int i = 0; i < 640; i++)
		found += xhca_poll_cq(cq, &wc, 1);
	printf("{\"polls\": 640, \"found\": %d, \"yields\": %lu}\n", found, yields);
	xhca_close(ctx);
	return 0;
}

/* A signaled UD SEND of 64 bytes from buf to QPN qpn at ip: its return. */
static int send_to(struct xhca_qp *qp, void *buf, const __u8 *ip, __u32 qpn)
{
	struct xhca_sge g = { .addr = (uintptr_t)buf, .length = 64 };
	struct xhca_send_wr wr = { .wr_id = 1, .sg_list = &g, .num_sge = 1,
				   .opcode = XHCA_WR_SEND, .send_flags = XHCA_SEND_SIGNALED };

	memcpy(wr.wr.ud.dest_ip, ip, 16);
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = QKEY;
	return xhca_post_send(qp, &wr, NULL);
}

/* How many times one poll of cq, empty, yielded the CPU (1000: it was not
 * empty). */
static unsigned long poll_yields(struct xhca_cq *cq)
{
	unsigned long y = yields;
	struct xhca_wc wc;

	return xhca_poll_cq(cq, &wc, 1) ? 1000 : yields - y;
}

static int mode_handover(const char *ifname, const char *ip)
{
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_cq *cq = ctx ? xhca_cq_create(ctx, 16) : NULL;
	struct xhca_cq *scq = ctx ? xhca_cq_create(ctx, 16) : NULL;
	struct xhca_qp_init_attr ia = {
		.type = XHCA_QPT_UD, .qkey = QKEY, .flowq = -1, .recv_cq = scq, .rq_depth = 16,
		.send_cq = scq, .sq_depth = 16,
	};
	struct xhca_qp *qp = cq && scq ? qp_up_to(ctx, &ia, XHCA_QPS_RTS) : NULL;
	__u8 *buf = qp ? xhca_alloc(ctx, 4096) : NULL;
	__u8 dst[16];
	struct xhca_wc wc[2];
	unsigned long first, again, busy;
	int r1, r2;

	if (!buf || xhca_ip_parse(ip, dst) != 4)
		return 1;
	printf("{\"ready\": true, \"qpn\": %u}\n", xhca_qp_num(qp));
	if (wait_go()) /* (xhcad stopped: what is posted stays outstanding) */
		return 1;
	r1 = send_to(qp, buf, dst, xhca_qp_num(qp));
	first = poll_yields(cq);
	again = poll_yields(cq);
	r2 = send_to(qp, buf, dst, xhca_qp_num(qp));
	busy = poll_yields(cq);
	printf("{\"post\": [%d, %d], \"first\": %lu, \"again\": %lu, \"busy\": %lu}\n", r1, r2,
	       first, again, busy);
	if (wait_go()) /* (xhcad going again) */
		return 1;
	r1 = drain(scq, wc, 2, 2000);
	r2 = send_to(qp, buf, dst, xhca_qp_num(qp));
	printf("{\"completed\": %d, \"post\": %d, \"idle\": %lu}\n", r1, r2, poll_yields(cq));
	drain(scq, wc, 1, 2000);
	xhca_close(ctx);
	return 0;
}

/* Mappings of this process of host memory or its rings (bpf maps). */
static int bpf_maps_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, "bpf-map") != NULL;
	if (f)
		fclose(f);
	return f ? n : -1;
}

/* An application that closes its session with everything in it alive: a
 * buffer, CQs, an SRQ, a QP on it and one with a queue of its own.
 * xhca_close unmaps all of it (xhcad frees the session's side). */
static int mode_leave(const char *ifname)
{
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_cq *cq = ctx ? xhca_cq_create(ctx, 16) : NULL;
	struct xhca_srq *srq = cq ? xhca_srq_create(ctx, 16, 1) : NULL;
	struct xhca_qp_init_attr rc = { .type = XHCA_QPT_RC, .flowq = -1, .recv_cq = cq,
					.send_cq = cq, .srq = srq, .sq_depth = 16 };
	struct xhca_qp *q1 = srq && xhca_alloc(ctx, 65536) ? xhca_qp_create(ctx, &rc) : NULL;
	struct xhca_qp *q2 = q1 ? ud_qp(ctx, cq, 16, -1) : NULL;
	int before, after;

	if (!q2) {
		printf("{\"error\": \"%s\"}\n", ctx ? xhca_errmsg(ctx) : strerror(errno));
		return 1;
	}
	before = bpf_maps_mapped();
	xhca_close(ctx);
	after = bpf_maps_mapped();
	printf("{\"mapped_before\": %d, \"mapped_after\": %d}\n", before, after);
	return 0;
}

static int mode_sqdb(const char *ifname)
{
	struct xhca_hello h = { .version = XHCA_SESSION_VERSION, .pid = (__u32)getpid(),
				.name = "sqdb" };
	char m1[256] = "", m2[256] = "", m3[256] = "";
	int fd = xhca_ctl_connect(ifname), r1, r2, r3;
	void *rp = NULL;
	__u32 got = 0;

	if (fd < 0)
		return 1;
	r1 = xhca_ctl_call(fd, XHCA_CTL_SQ_DOORBELL, NULL, 0, NULL, NULL, m1, sizeof(m1));
	r2 = xhca_ctl_call(fd, XHCA_CTL_HELLO, &h, sizeof(h), &rp, &got, m2, sizeof(m2));
	free(rp);
	if (!r2)
		r2 = xhca_ctl_call(fd, XHCA_CTL_SQ_DOORBELL, NULL, 0, NULL, NULL, m2, sizeof(m2));
	/* the session still works after the refusal */
	r3 = xhca_ctl_call(fd, XHCA_CTL_FLOWQ_SHOW, NULL, 0, &rp, &got, m3, sizeof(m3));
	free(rp);
	printf("{\"no_session\": %d, \"no_session_msg\": \"%s\", \"no_fd\": %d, "
	       "\"no_fd_msg\": \"%s\", \"after\": %d}\n", r1, m1, r2, m2, r3);
	close(fd);
	return 0;
}

/* XHCA_CTL_ALLOC with XHCA_ALLOC_JOIN, raw: an allocation of 3 pages, then
 * joins that are wrong (an allocation not there, two at the same place, no
 * list, one that does not fit) and one that is right, each answer printed,
 * and the host memory in use after. */
static int join_call(int fd, __u64 len, const struct xhca_alloc_join *j, __u32 n, __u32 lie,
		     struct xhca_alloc *out)
{
	__u8 q[sizeof(struct xhca_alloc) + 4 * sizeof(*j)];
	struct xhca_alloc a = { .len = len, .flags = XHCA_ALLOC_JOIN, .nruns = n + lie };
	void *rp = NULL;
	__u32 got = 0;
	int r;

	memcpy(q, &a, sizeof(a));
	memcpy(q + sizeof(a), j, n * sizeof(*j));
	r = xhca_ctl_call(fd, XHCA_CTL_ALLOC, q, (__u32)(sizeof(a) + n * sizeof(*j)), &rp, &got,
			  NULL, 0);
	if (!r && out && got >= sizeof(*out))
		memcpy(out, rp, sizeof(*out));
	free(rp);
	return r;
}

static __u64 used_bytes(const char *ifname)
{
	struct xhca_status *st = NULL;
	__u32 got = 0;
	int fd = xhca_ctl_connect(ifname);
	__u64 u = 0;

	if (fd >= 0 && !xhca_ctl_call(fd, XHCA_CTL_STATUS, NULL, 0, (void **)&st, &got, NULL, 0))
		u = st->hostmem_used;
	free(st);
	if (fd >= 0)
		close(fd);
	return u;
}

static int mode_join(const char *ifname)
{
	struct xhca_hello h = { .version = XHCA_SESSION_VERSION, .pid = (__u32)getpid(),
				.name = "join" };
	struct xhca_alloc a = { .len = 3 * XHCA_PAGE_SIZE }, b = {};
	int fd = xhca_ctl_connect(ifname), r[5];
	void *rp = NULL;
	__u32 got = 0;
	__u64 u0, u1;

	if (fd < 0 || xhca_ctl_call(fd, XHCA_CTL_HELLO, &h, sizeof(h), &rp, &got, NULL, 0))
		return 1;
	free(rp);
	if (xhca_ctl_call(fd, XHCA_CTL_ALLOC, &a, sizeof(a), &rp, &got, NULL, 0))
		return 1;
	memcpy(&a, rp, sizeof(a));
	free(rp);
	u0 = used_bytes(ifname);
	{
		struct xhca_alloc_join none = { .id = 0x12340001, .page = 0 };
		struct xhca_alloc_join twice[2] = { { a.id, 0 }, { a.id, 1 } };
		struct xhca_alloc_join past = { .id = a.id, .page = 3 };
		struct xhca_alloc_join ok = { .id = a.id, .page = 2 };

		r[0] = join_call(fd, 8 * XHCA_PAGE_SIZE, &none, 1, 0, NULL);
		r[1] = join_call(fd, 8 * XHCA_PAGE_SIZE, twice, 2, 0, NULL);
		r[2] = join_call(fd, 8 * XHCA_PAGE_SIZE, &ok, 1, 1, NULL);
		r[3] = join_call(fd, 5 * XHCA_PAGE_SIZE, &past, 1, 0, NULL);
		u1 = used_bytes(ifname);
		r[4] = join_call(fd, 8 * XHCA_PAGE_SIZE, &ok, 1, 0, &b);
	}
	/* the join holds a's 3 pages and 5 new ones */
	printf("{\"unknown\": %d, \"twice\": %d, \"no_list\": %d, \"past\": %d, "
	       "\"refused_used\": %lld, \"ok\": %d, \"pages\": %u, \"new_used\": %lld}\n",
	       r[0], r[1], r[2], r[3], (long long)(u1 - u0), r[4], b.npages,
	       (long long)(used_bytes(ifname) - u0));
	close(fd);
	return 0;
}

static int mode_hold(const char *ifname, int flowq)
{
	static struct xhca_wc wc[256];
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_cq *cq;
	struct xhca_qp *qp;
	__u8 *bufs;
	int n;

	if (!ctx)
		return 1;
	bufs = xhca_alloc(ctx, 64 * 2048);
	cq = xhca_cq_create(ctx, 4);
	qp = cq ? ud_qp(ctx, cq, 64, flowq) : NULL;
	if (!bufs || !qp)
		return 1;
	for (int i = 0; i < 64; i++)
		if (xhca_post_recv(qp, (uint64_t)i, bufs + i * 2048, 2048))
			return 1;
	printf("{\"ready\": true, \"qpn\": %u}\n", xhca_qp_num(qp));
	fflush(stdout);
	if (wait_go())
		return 1;
	n = drain(cq, wc, 256, 1000);
	printf("{\"received\": %d, \"stalls\": %llu, \"ok\": %s}\n", n,
	       (unsigned long long)xhca_cq_stalls(cq), n > 0 && wc[0].status == 0 ? "true" : "false");
	xhca_close(ctx);
	return 0;
}

/* The descriptors open now, as a bit set of the first 1024. */
static void open_fds(unsigned char set[128])
{
	memset(set, 0, 128);
	for (int fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			set[fd / 8] |= (unsigned char)(1u << (fd % 8));
}

static int mode_dbgone(const char *ifname, int flowq)
{
	static struct xhca_wc wc[64];
	unsigned char before[128], after[128];
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_cq *cq;
	struct xhca_qp *qp;
	__u8 *bufs;
	int db = -1, ndb = 0, first, second, third;

	if (!ctx)
		return 1;
	bufs = xhca_alloc(ctx, 64 * 2048);
	open_fds(before);
	cq = xhca_cq_create(ctx, 4);
	open_fds(after);
	qp = cq ? ud_qp(ctx, cq, 64, flowq) : NULL;
	if (!bufs || !qp)
		return 1;
	/* the descriptors the CQ brought but its event fd: its doorbell */
	for (int fd = 0; fd < 1024; fd++)
		if ((after[fd / 8] & ~before[fd / 8]) & (1u << (fd % 8)) && fd != xhca_cq_fd(cq)) {
			db = fd;
			ndb++;
		}
	for (int i = 0; i < 64; i++)
		if (xhca_post_recv(qp, (uint64_t)i, bufs + i * 2048, 2048))
			return 1;
	printf("{\"ready\": true, \"qpn\": %u, \"doorbells\": %d}\n", xhca_qp_num(qp), ndb);
	fflush(stdout);
	if (wait_go() || ndb != 1)
		return 1;
	close(db);
	first = xhca_poll_cq(cq, wc, 64);
	second = xhca_poll_cq(cq, wc, 64);
	third = xhca_poll_cq(cq, wc, 64);
	printf("{\"first\": %d, \"second\": %d, \"third\": %d, \"ok\": %s}\n", first, second,
	       third, first > 0 && wc[0].status == 0 ? "true" : "false");
	xhca_close(ctx);
	return 0;
}

static int mode_crash(const char *ifname, int flowq)
{
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_cq *cq;
	struct xhca_qp *qp;
	__u8 *bufs;

	if (!ctx)
		return 1;
	bufs = xhca_alloc(ctx, 1 << 20);
	cq = xhca_cq_create(ctx, 4);
	qp = cq ? ud_qp(ctx, cq, 64, flowq) : NULL;
	if (!bufs || !qp)
		return 1;
	for (int i = 0; i < 64; i++)
		xhca_post_recv(qp, (uint64_t)i, bufs + i * 4096, 4096);
	printf("{\"ready\": true, \"qpn\": %u}\n", xhca_qp_num(qp));
	fflush(stdout);
	for (;;)
		pause();
}

static void print_wc(const struct xhca_wc *w)
{
	printf("{\"wr_id\": %llu, \"status\": %u, \"opcode\": %u, \"byte_len\": %u, "
	       "\"imm\": %u, \"flags\": %u, \"vendor_err\": %u}\n",
	       (unsigned long long)w->wr_id, w->status, w->opcode, w->byte_len,
	       ntohl(w->imm_data), w->wc_flags, w->vendor_err);
}

#define MR_ACCESS_ALL (XHCA_ACCESS_LOCAL_WRITE | XHCA_ACCESS_REMOTE_WRITE | \
		       XHCA_ACCESS_REMOTE_READ | XHCA_ACCESS_REMOTE_ATOMIC)

static int mode_mr(const char *ifname, size_t len, const char *how)
{
	unsigned int flags = !how ? 0 : !strcmp(how, "scatter") ? XHCA_ALLOC_SCATTER
								 : XHCA_ALLOC_CONTIG;
	struct xhca_ctx *ctx = xhca_open(ifname), *other = xhca_open(ifname);
	struct xhca_qp_init_attr ia = { .type = XHCA_QPT_RC, .flowq = -1, .rq_depth = 64 };
	struct xhca_pd *pd, *opd;
	struct xhca_mr *mr, *bad;
	struct xhca_cq *cq;
	struct xhca_qp *qp;
	__u8 *buf, *rbufs, *obuf;
	char line[64];
	int posted = 0, r_len0, r_out, r_past, r_flags, r_nolw, r_otherpd;

	if (!ctx || !other)
		return 1;
	buf = xhca_alloc_ex(ctx, len, flags);
	rbufs = xhca_alloc(ctx, 64 * 256);
	obuf = xhca_alloc(other, 4096);
	pd = xhca_pd_alloc(ctx);
	opd = xhca_pd_alloc(other);
	if (!buf || !rbufs || !obuf || !pd || !opd) {
		fprintf(stderr, "apptest: %s\n", xhca_errmsg(ctx));
		return 1;
	}
	/* bad input: each refused, with its errno */
#define TRY(expr) ((bad = (expr)) ? (xhca_mr_dereg(bad), 0) : -errno)
	r_len0 = TRY(xhca_mr_reg(pd, buf, 0, MR_ACCESS_ALL));
	r_out = TRY(xhca_mr_reg(pd, line, sizeof(line), MR_ACCESS_ALL));
	r_past = TRY(xhca_mr_reg(pd, buf + 8, len, MR_ACCESS_ALL));
	r_flags = TRY(xhca_mr_reg(pd, buf, len, 0x100));
	r_nolw = TRY(xhca_mr_reg(pd, buf, len, XHCA_ACCESS_REMOTE_WRITE));
	r_otherpd = TRY(xhca_mr_reg(opd, buf, len, MR_ACCESS_ALL));
#undef TRY
	printf("{\"len0\": %d, \"outside\": %d, \"past_end\": %d, \"bad_flags\": %d, "
	       "\"no_local_write\": %d, \"other_pd\": %d}\n", r_len0, r_out, r_past, r_flags,
	       r_nolw, r_otherpd);
	mr = xhca_mr_reg(pd, buf, len, MR_ACCESS_ALL);
	cq = xhca_cq_create(ctx, 256);
	ia.recv_cq = cq;
	ia.pd = pd;
	qp = mr && cq ? xhca_qp_create(ctx, &ia) : NULL;
	if (!qp) {
		fprintf(stderr, "apptest: %s\n", xhca_errmsg(ctx));
		return 1;
	}
	for (; posted < 16; posted++)
		xhca_post_recv(qp, (uint64_t)posted, rbufs + (posted % 256) * 64, 64);
	printf("{\"ready\": true, \"qpn\": %u, \"rkey\": %u, \"iova\": %llu, \"len\": %zu, "
	       "\"pretranslated\": %s, \"pd\": %u}\n", xhca_qp_num(qp),
	       xhca_mr_rkey(mr), (unsigned long long)(uintptr_t)buf, len,
	       xhca_mr_pretranslated(mr) ? "true" : "false", xhca_pd_id(pd));
	while (fgets(line, sizeof(line), stdin)) {
		struct xhca_wc wc[64];
		int n;

		if (!strncmp(line, "drain", 5)) {
			n = drain(cq, wc, atoi(line + 6) > 64 ? 64 : atoi(line + 6), 2000);
			for (int i = 0; i < n; i++)
				print_wc(&wc[i]);
			printf("{\"drained\": %d}\n", n);
		} else if (!strncmp(line, "dereg", 5)) {
			printf("{\"dereg\": %d}\n", mr ? xhca_mr_dereg(mr) : -ENOENT);
			mr = NULL;
		} else if (!strncmp(line, "reg", 3)) {
			mr = xhca_mr_reg(pd, buf, len, MR_ACCESS_ALL);
			printf("{\"rkey\": %u}\n", mr ? xhca_mr_rkey(mr) : 0);
		} else if (!strncmp(line, "post", 4)) {
			int k = atoi(line + 5), r = 0;

			for (int i = 0; i < k && !r; i++, posted++)
				r = xhca_post_recv(qp, (uint64_t)posted, rbufs + (posted % 256) * 64,
						   64);
			printf("{\"post\": %d}\n", r);
		} else if (!strncmp(line, "pd", 2)) {
			printf("{\"pd_dealloc\": %d}\n", xhca_pd_dealloc(pd));
		} else {
			break;
		}
	}
	xhca_close(other);
	xhca_close(ctx);
	return 0;
}

static int mode_atomic2(const char *ifname, const char *lip, const char *rip)
{
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_qp_init_attr ia = { .type = XHCA_QPT_RC, .flowq = -1, .rq_depth = 16,
					.create_flags = XHCA_QP_CREATE_PROXY };
	struct xhca_qp *qp[2] = { NULL, NULL };
	struct xhca_pd *pd = ctx ? xhca_pd_alloc(ctx) : NULL;
	__u8 *buf = pd ? xhca_alloc_ex(ctx, 4096, XHCA_ALLOC_CONTIG) : NULL;
	struct xhca_mr *mr = buf ? xhca_mr_reg(pd, buf, 4096, MR_ACCESS_ALL) : NULL;
	char line[64];

	ia.recv_cq = mr ? xhca_cq_create_ex(ctx, 64, XHCA_CQF_PROXY) : NULL;
	ia.pd = pd;
	for (int i = 0; i < 2 && ia.recv_cq; i++) {
		struct xhca_qp_attr a = { .mask = XHCA_QPA_STATE, .state = XHCA_QPS_INIT };

		qp[i] = xhca_qp_create(ctx, &ia);
		if (!qp[i] || xhca_qp_modify(qp[i], &a))
			break;
		memset(&a, 0, sizeof(a));
		a.mask = XHCA_QPA_STATE | XHCA_QPA_LOCAL_IP | XHCA_QPA_REMOTE_IP;
		a.state = XHCA_QPS_RTR;
		if (xhca_ip_parse(lip, a.local_ip) != 4 || xhca_ip_parse(rip, a.remote_ip) != 4 ||
		    xhca_qp_modify(qp[i], &a))
			qp[i] = NULL;
	}
	if (!qp[0] || !qp[1]) {
		fprintf(stderr, "apptest: %s\n", ctx ? xhca_errmsg(ctx) : strerror(errno));
		return 1;
	}
	printf("{\"ready\": true, \"qpn\": %u, \"qpn2\": %u, \"rkey\": %u, \"iova\": %llu}\n",
	       xhca_qp_num(qp[0]), xhca_qp_num(qp[1]), xhca_mr_rkey(mr),
	       (unsigned long long)(uintptr_t)buf);
	while (fgets(line, sizeof(line), stdin)) {
		volatile __u64 *w = (volatile __u64 *)(buf + 256);
		__u64 n = strtoull(line + 6, NULL, 0), v0 = *w, t0, t1, until;
		struct timespec ts;

		if (!strncmp(line, "quit", 4))
			break;
		if (strncmp(line, "watch", 5))
			continue;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		until = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec + 10000000000ull;
		t0 = t1 = 0;
		printf("{\"watching\": %llu}\n", (unsigned long long)n);
		for (;;) {
			__u64 v = *w, now;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			now = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
			if (v != v0 && !t0)
				t0 = now;
			if (v - v0 >= n) {
				t1 = now;
				break;
			}
			if (now > until)
				break;
		}
		printf("{\"n\": %llu, \"ns\": %llu, \"done\": %s}\n", (unsigned long long)n,
		       (unsigned long long)(t1 && t0 ? t1 - t0 : 0), t1 ? "true" : "false");
	}
	xhca_close(ctx);
	return 0;
}

/* mcast: nq UD QPs in one group, each with bufs receive buffers, and what
 * their copies came with. */
struct mc_app {
	struct xhca_ctx *ctx;
	uint8_t mgid[16];
	int fam, nq, bufs, hold, block, nobuf, flowq, nocheck, stamp;
	unsigned int cqd;
	uint32_t seed;
	struct xhca_qp **qp;
	struct xhca_cq *cq;
	uint8_t *mem;
	uint64_t *per, copies, bad_payload, bad_grh, bad_src, errors;
};

static void mc_args(struct mc_app *m, char **a, int argc)
{
	m->block = m->nobuf = m->flowq = -1;
	for (int i = 5; i < argc; i++) {
		if (!strcmp(a[i], "hold"))
			m->hold = 1;
		else if (!strncmp(a[i], "block:", 6))
			m->block = atoi(a[i] + 6);
		else if (!strncmp(a[i], "nobuf:", 6))
			m->nobuf = atoi(a[i] + 6);
		else if (!strncmp(a[i], "flowq:", 6))
			m->flowq = atoi(a[i] + 6);
		else if (!strncmp(a[i], "cq:", 3))
			m->cqd = (unsigned int)atoi(a[i] + 3);
		else if (!strcmp(a[i], "nocheck"))
			m->nocheck = 1;
		else if (!strcmp(a[i], "stamp"))
			m->stamp = 1;
	}
}

/* QP i: created, to RTR, in the group, its buffers posted (QP nobuf: none). */
static int mc_qp(struct mc_app *m, int i)
{
	struct xhca_qp_init_attr ia = {
		.type = XHCA_QPT_UD, .qkey = QKEY, .flowq = m->flowq, .recv_cq = m->cq,
		.rq_depth = 1,
	};
	struct xhca_qp_attr at = { .mask = XHCA_QPA_STATE, .state = XHCA_QPS_INIT };

	while (ia.rq_depth < (unsigned int)m->bufs)
		ia.rq_depth <<= 1;
	if (i == m->block)
		ia.create_flags = XHCA_QP_CREATE_BLOCK_SELF_MCAST_LB;
	m->qp[i] = xhca_qp_create(m->ctx, &ia);
	if (!m->qp[i] || xhca_qp_modify(m->qp[i], &at))
		return -1;
	at.mask = XHCA_QPA_STATE;
	at.state = XHCA_QPS_RTR;
	if (xhca_qp_modify(m->qp[i], &at) || xhca_mcast_attach(m->qp[i], m->mgid))
		return -1;
	for (int b = 0; b < m->bufs && i != m->nobuf; b++)
		if (xhca_post_recv(m->qp[i], (uint64_t)i << 32 | (uint64_t)b,
				   m->mem + ((size_t)i * m->bufs + b) * 2048, 2048))
			return -1;
	return 0;
}

/* One copy's completion: counted, its source, GRH and payload checked, its
 * buffer posted again. */
static void mc_copy(struct mc_app *m, const struct xhca_wc *wc)
{
	int i = (int)(wc->wr_id >> 32), b = (int)(wc->wr_id & 0xffffffff), ok = 1;
	uint8_t *buf;

	if (wc->status || i >= m->nq) {
		m->errors++;
		return;
	}
	buf = m->mem + ((size_t)i * m->bufs + b) * 2048;
	m->copies++;
	if (m->stamp) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		printf("{\"copy\": %llu, \"ns\": %lld}\n", (unsigned long long)m->copies,
		       (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec);
		fflush(stdout);
	}
	m->per[i]++;
	if (!m->nocheck) {
		if (wc->qp_num != xhca_qp_num(m->qp[i]) || wc->src_qp != 0x77)
			m->bad_src++;
		if (memcmp(buf + (m->fam == 4 ? 36 : 24), m->mgid + (m->fam == 4 ? 12 : 0),
			   m->fam == 4 ? 4 : 16))
			m->bad_grh++;
		for (uint32_t j = 0; j + 40 < wc->byte_len && ok; j++)
			ok = buf[40 + j] == xhca_msg_pattern(m->seed, j);
		if (!ok || wc->byte_len < 41)
			m->bad_payload++;
	}
	xhca_post_recv(m->qp[i], wc->wr_id, buf, 2048);
}

static void mc_report(const struct mc_app *m)
{
	printf("{\"copies\": %llu, \"errors\": %llu, \"bad_payload\": %llu, \"bad_grh\": %llu, "
	       "\"bad_src\": %llu, \"per_qp\": [", (unsigned long long)m->copies,
	       (unsigned long long)m->errors, (unsigned long long)m->bad_payload,
	       (unsigned long long)m->bad_grh, (unsigned long long)m->bad_src);
	for (int i = 0; i < m->nq; i++)
		printf("%s%llu", i ? ", " : "", (unsigned long long)m->per[i]);
	printf("]}\n");
	fflush(stdout);
}

static int mode_mcast(char **a, int argc)
{
	struct mc_app m = { .ctx = xhca_open(a[0]), .nq = atoi(a[2]), .bufs = atoi(a[3]),
			    .seed = (uint32_t)strtoul(a[4], NULL, 0) };
	unsigned int depth = 1;
	int rc = 1;

	m.fam = xhca_ip_parse(a[1], m.mgid);
	mc_args(&m, a, argc);
	if (!m.ctx || m.fam < 0 || m.nq < 1 || m.bufs < 1)
		return 2;
	while (depth < (unsigned int)(m.nq * m.bufs) && depth < XHCA_RING_DEPTH_MAX)
		depth <<= 1;
	m.cq = xhca_cq_create(m.ctx, m.cqd ? m.cqd : depth);
	m.mem = xhca_alloc(m.ctx, (size_t)m.nq * m.bufs * 2048);
	m.qp = calloc((size_t)m.nq, sizeof(*m.qp));
	m.per = calloc((size_t)m.nq, sizeof(*m.per));
	for (int i = 0; m.cq && m.mem && m.qp && m.per && i < m.nq; i++)
		if (mc_qp(&m, i))
			goto fail;
	if (!m.cq || !m.mem || !m.qp || !m.per)
		goto fail;
	printf("{\"ready\": true, \"qpn\": %u, \"qpns\": [", xhca_qp_num(m.qp[0]));
	for (int i = 0; i < m.nq; i++)
		printf("%s%u", i ? ", " : "", xhca_qp_num(m.qp[i]));
	printf("]}\n");
	fflush(stdout);
	if (m.hold && wait_go())
		goto out;
	for (;;) {
		struct xhca_wc wc[64];
		int n = xhca_poll_cq(m.cq, wc, 64);

		if (n < 0)
			goto out;
		if (!n) {
			if (xhca_cq_wait(m.cq, 1500) <= 0)
				break;
			continue;
		}
		for (int k = 0; k < n; k++)
			mc_copy(&m, &wc[k]);
	}
	mc_report(&m);
	if (m.hold)
		wait_go();
	xhca_close(m.ctx);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "apptest: %s\n", xhca_errmsg(m.ctx));
out:
	free(m.qp);
	free(m.per);
	return rc;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile sig_atomic_t spray_stop;

static void spray_on_term(int sig)
{
	(void)sig;
	spray_stop = 1;
}

static int mode_spray(char **a)
{
	struct sockaddr_ll sa = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	struct xhca_pkt_spec s;
	struct ifreq ifr = {};
	static uint8_t frame[XHCA_PKT_MAX], payload[256];
	unsigned int m[6];
	uint64_t sent = 0, mrlen = strtoull(a[7], NULL, 0);
	uint32_t index = (uint32_t)strtoul(a[5], NULL, 0);
	double end = now_s() + atof(a[6]);
	int fd, len;

	xhca_pkt_spec_init(&s, XHCA_OPC_UC | XHCA_OP_WRITE_ONLY);
	if (sscanf(a[1], "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6 ||
	    xhca_ip_parse(a[2], s.dst_ip) != 4 || xhca_ip_parse(a[3], s.src_ip) != 4 ||
	    mrlen <= sizeof(payload))
		return 2;
	for (int i = 0; i < 6; i++)
		s.dmac[i] = (uint8_t)m[i];
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", a[0]);
	if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr) || ioctl(fd, SIOCGIFINDEX, &ifr)) {
		perror("spray");
		return 1;
	}
	ioctl(fd, SIOCGIFHWADDR, &ifr);
	memcpy(s.smac, ifr.ifr_hwaddr.sa_data, 6);
	ioctl(fd, SIOCGIFINDEX, &ifr);
	sa.sll_ifindex = ifr.ifr_ifindex;
	memset(payload, 0xa5, sizeof(payload));
	signal(SIGTERM, spray_on_term);
	s.dqpn = (uint32_t)strtoul(a[4], NULL, 0);
	s.payload = payload;
	s.payload_len = sizeof(payload);
	s.reth_len = sizeof(payload);
	while (!spray_stop && now_s() < end) {
		for (int i = 0; i < 256; i++, sent++) {
			s.psn = (uint32_t)sent & 0xffffff;
			s.reth_rkey = index << 8 | (uint32_t)((sent * 7) & 0xff);
			s.reth_va = (sent * 4093) % (mrlen - sizeof(payload));
			len = xhca_pkt_build(&s, frame, sizeof(frame));
			if (len < 0 || sendto(fd, frame, (size_t)len, 0, (struct sockaddr *)&sa,
					      sizeof(sa)) < 0) {
				if (errno == ENOBUFS || errno == EINTR) {
					usleep(100);
					continue;
				}
				perror("spray: send");
				return 1;
			}
		}
	}
	printf("{\"sent\": %llu}\n", (unsigned long long)sent);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	int flowq = argc > 3 ? atoi(argv[3]) : -1;

	if (argc < 3) {
		fprintf(stderr, "usage: xhca-apptest badbuf|dead|hold|dbgone|crash|mr|mcast|atomic2|spray|sqdb|cqwait|spin|handover|leave IFNAME ...\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "badbuf"))
		return mode_badbuf(argv[2]);
	if (!strcmp(argv[1], "dead"))
		return mode_dead(argv[2]);
	if (!strcmp(argv[1], "sqdb"))
		return mode_sqdb(argv[2]);
	if (!strcmp(argv[1], "join"))
		return mode_join(argv[2]);
	if (!strcmp(argv[1], "cqwait"))
		return mode_cqwait(argv[2]);
	if (!strcmp(argv[1], "spin"))
		return mode_spin(argv[2]);
	if (!strcmp(argv[1], "handover") && argc >= 4)
		return mode_handover(argv[2], argv[3]);
	if (!strcmp(argv[1], "leave"))
		return mode_leave(argv[2]);
	if (!strcmp(argv[1], "hold"))
		return mode_hold(argv[2], flowq);
	if (!strcmp(argv[1], "crash"))
		return mode_crash(argv[2], flowq);
	if (!strcmp(argv[1], "dbgone"))
		return mode_dbgone(argv[2], flowq);
	if (!strcmp(argv[1], "mr") && argc >= 4)
		return mode_mr(argv[2], strtoull(argv[3], NULL, 0), argc > 4 ? argv[4] : NULL);
	if (!strcmp(argv[1], "atomic2") && argc >= 5)
		return mode_atomic2(argv[2], argv[3], argv[4]);
	if (!strcmp(argv[1], "spray") && argc >= 10)
		return mode_spray(argv + 2);
	if (!strcmp(argv[1], "mcast") && argc >= 7)
		return mode_mcast(argv + 2, argc - 2);
	fprintf(stderr, "xhca-apptest: unknown mode %s\n", argv[1]);
	return 2;
}
