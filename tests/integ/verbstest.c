/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-verbstest: a libibverbs program of the tests' own, built against
 * Debian's libibverbs and run on xhca by `xhca exec` (tests/integ/verbs.sh),
 * for what the Debian programs do not show: every error status and bad
 * argument of the verbs man pages, and the memory semantics of ibv_reg_mr.
 *
 *   xhca-verbstest local                 checks needing no peer
 *   xhca-verbstest server                waits for a client on TCP 18600
 *   xhca-verbstest client SERVER_IP      runs the two-sided cases
 *   xhca-verbstest hold                  a QP, an MR and a CQ, then sleeps (kill it)
 *   xhca-verbstest nopeer IP             an RC SEND and a UD SEND to IP, an address of
 *                                        this host no xhcad serves (loopback.sh)
 *   xhca-verbstest view                  the device view's files against the verbs
 *                                        (devview.sh)
 *
 * Each check prints "ok - ..." or "not ok - ..."; the exit status is the
 * number of failed checks (capped at 100), 2 for bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define PORT 18600
#define GIDX 1 /* the IPv4 GID */

#include "check.h"

static void die(const char *what)
{
	printf("not ok - %s: %s\n", what, strerror(errno));
	exit(100);
}

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static void open_dev(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);

	if (!l || !l[0])
		die("no device");
	ctx = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	if (!ctx)
		die("open device");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!pd || !cq)
		die("pd/cq");
}

static struct ibv_qp *new_qp(enum ibv_qp_type type, struct ibv_pd *p, struct ibv_cq *c)
{
	struct ibv_qp_init_attr a = {
		.send_cq = c, .recv_cq = c, .qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 3,
			 .max_inline_data = 64 },
	};

	return ibv_create_qp(p, &a);
}

/* the remote access the next QP brought up allows (its qp_access_flags) */
static int qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = (unsigned int)qp_access };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				     IBV_QP_ACCESS_FLAGS);
}

/* What a side tells the other of one QP. */
struct peer {
	uint32_t qpn, psn, rkey, len;
	uint64_t addr;
	union ibv_gid gid;
	char cmd[32];
	int32_t arg;
};

static int to_rts(struct ibv_qp *qp, const struct peer *r, uint8_t timeout, uint8_t retry,
		  uint8_t rnr_retry)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = r->qpn,
		.rq_psn = r->psn, .max_dest_rd_atomic = 4, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = r->gid, .sgid_index = GIDX, .hop_limit = 64 } },
	};

	if (to_init(qp) || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	a.timeout = timeout;
	a.retry_cnt = retry;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static void me(struct ibv_qp *qp, struct peer *p)
{
	p->qpn = qp->qp_num;
	p->psn = 0x100;
	ibv_query_gid(ctx, 1, GIDX, &p->gid);
}

/* One completion within ms, or status -1. */
static struct ibv_wc wait_wc(struct ibv_cq *c, int ms)
{
	struct ibv_wc wc = { .status = (enum ibv_wc_status)-1 };

	for (int i = 0; i < ms * 10; i++) {
		int n = ibv_poll_cq(c, 1, &wc);

		if (n == 1)
			return wc;
		usleep(100);
	}
	wc.status = (enum ibv_wc_status)-1;
	return wc;
}

static int post(struct ibv_qp *qp, enum ibv_wr_opcode op, void *buf, uint32_t len,
		uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t wr_id)
{
	struct ibv_sge g = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct ibv_send_wr w = { .wr_id = wr_id, .sg_list = &g, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;

	w.wr.rdma.remote_addr = raddr;
	w.wr.rdma.rkey = rkey;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		w.wr.atomic.remote_addr = raddr;
		w.wr.atomic.rkey = rkey;
		w.wr.atomic.compare_add = 5;
		w.wr.atomic.swap = 77;
	}
	return ibv_post_send(qp, &w, &bad);
}

static int post_recv(struct ibv_qp *qp, void *buf, uint32_t len, uint32_t lkey, uint64_t id)
{
	struct ibv_sge g = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct ibv_recv_wr w = { .wr_id = id, .sg_list = &g, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &w, &bad);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &i) ? (enum ibv_qp_state)-1 : a.qp_state;
}

/* ---- local checks ---------------------------------------------------------------- */

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static int same(const uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)(seed + i * 7))
			return 0;
	return 1;
}

/* A buffer on the stack registered and deregistered again and again at
 * other places in the page: each time its page (the frames of the calls
 * that register it among them) is copied and swapped under the running
 * thread, which must have written nothing there meanwhile (libxhca's
 * off_stack: a lost write is a lost return address, a crash). */
static void local_stack_again(void)
{
	volatile uint64_t canary = 0x5a5a5a5a12345678ull;
	uint8_t stack[8192];
	int ok = 1;

	memset(stack, 0x3c, sizeof(stack));
	for (int i = 0; i < 100 && ok; i++) {
		struct ibv_mr *mr = ibv_reg_mr(pd, stack + (i * 37) % 4096, 100, IBV_ACCESS_LOCAL_WRITE);

		ok = mr && !ibv_dereg_mr(mr) && stack[(i * 37) % 4096] == 0x3c;
	}
	check(ok && canary == 0x5a5a5a5a12345678ull, "reg_mr and dereg_mr of a stack buffer, "
	      "100 times: the stack as it was");
}

/* ibv_reg_mr on memory of every kind the man page allows keeps its bytes,
 * and ibv_dereg_mr gives it back with them. */
static void local_memory(void)
{
	uint8_t stack[10000];
	uint8_t *heap = malloc(100000), *al = NULL;
	uint8_t *anon = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	static uint8_t data[3000] = { 1 }; /* a program's data: a private file mapping */
	struct { const char *what; uint8_t *p; size_t n; } m[5];

	if (posix_memalign((void **)&al, 4096, 65536))
		die("posix_memalign");
	m[0] = (typeof(m[0])){ "malloc, unaligned start and length", heap + 13, 99977 };
	m[1] = (typeof(m[1])){ "posix_memalign", al, 65536 };
	m[2] = (typeof(m[2])){ "mmap anonymous", anon + 4096, (1 << 20) - 8192 };
	m[3] = (typeof(m[3])){ "the stack", stack + 5, sizeof(stack) - 9 };
	m[4] = (typeof(m[4])){ "a static array", data + 1, sizeof(data) - 1 };
	for (int i = 0; i < 5; i++) {
		struct ibv_mr *mr;

		fill(m[i].p, m[i].n, (uint8_t)i);
		mr = ibv_reg_mr(pd, m[i].p, m[i].n, IBV_ACCESS_LOCAL_WRITE |
						    IBV_ACCESS_REMOTE_WRITE);
		check(mr && same(m[i].p, m[i].n, (uint8_t)i), "reg_mr on %s: registered, bytes kept",
		      m[i].what);
		if (!mr)
			continue;
		check(mr->addr == m[i].p && mr->length == m[i].n && mr->lkey == mr->rkey,
		      "reg_mr on %s: addr, length and keys as asked", m[i].what);
		m[i].p[0] ^= 0xff; /* the application writes its registered memory */
		m[i].p[0] ^= 0xff;
		check(!ibv_dereg_mr(mr) && same(m[i].p, m[i].n, (uint8_t)i),
		      "dereg_mr on %s: bytes kept", m[i].what);
		m[i].p[m[i].n - 1] = 1; /* still the application's memory */
	}
	/* memory the program discarded while registered (an allocator's
	 * MADV_DONTNEED of memory freed, before a lazy dereg: UCX's): its
	 * dereg gives zero pages back, where it read the discarded ones */
	fill(anon, 1 << 20, 7);
	{
		struct ibv_mr *mr = ibv_reg_mr(pd, anon, 1 << 20, IBV_ACCESS_LOCAL_WRITE);
		int z = 1;

		check(mr && !madvise(anon + 8192, 16384, MADV_DONTNEED) && !ibv_dereg_mr(mr),
		      "dereg_mr of pages the program discarded (MADV_DONTNEED) meanwhile");
		for (int i = 0; i < 16384; i++)
			z &= anon[8192 + i] == 0;
		check(z && same(anon, 8192, 7), "... they come back zero, the others with their "
		      "bytes");
	}
	free(heap);
	free(al);
	munmap(anon, 1 << 20);
	local_stack_again();
}

static void local_mr_errors(void)
{
	uint8_t *buf = malloc(8192);
	struct ibv_mr *mr, *a, *b;
	char path[] = "/tmp/xhca-verbstest-XXXXXX";
	int fd = mkstemp(path);
	uint8_t *fm;

	errno = 0;
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_REMOTE_WRITE);
	check(!mr && errno == EINVAL, "reg_mr: remote write without local write: EINVAL (%s)",
	      strerror(errno));
	errno = 0;
	mr = ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE);
	check(!mr && errno == EINVAL, "reg_mr: length 0: EINVAL (%s)", strerror(errno));
	errno = 0;
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED);
	check(!mr && errno == EOPNOTSUPP, "reg_mr: zero-based: EOPNOTSUPP (%s)", strerror(errno));
	if (fd >= 0 && !ftruncate(fd, 8192)) {
		fm = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		fm[0] = 42;
		errno = 0;
		mr = ibv_reg_mr(pd, fm, 8192, IBV_ACCESS_LOCAL_WRITE);
		check(!mr && errno == EOPNOTSUPP && fm[0] == 42,
		      "reg_mr: a shared file mapping: EOPNOTSUPP, the mapping untouched (%s)",
		      strerror(errno));
		munmap(fm, 8192);
		close(fd);
		unlink(path);
	}
	/* a region over pages partly registered already, reaching past them
	 * (and one within): the host memory grows, each keeps its pages */
	{
		uint8_t *big = malloc(40000);
		struct ibv_mr *x, *y, *z;

		fill(big, 40000, 21);
		x = ibv_reg_mr(pd, big + 10, 6000, IBV_ACCESS_LOCAL_WRITE);
		y = ibv_reg_mr(pd, big + 5000, 20000, IBV_ACCESS_LOCAL_WRITE);
		z = ibv_reg_mr(pd, big + 4000, 100, IBV_ACCESS_LOCAL_WRITE);
		check(x && y && z && same(big, 40000, 21), "reg_mr over pages partly registered, "
		      "reaching past them, and one within: all registered, bytes kept");
		big[5500] ^= 0xff; /* the application writes the shared pages */
		big[5500] ^= 0xff;
		check(x && !ibv_dereg_mr(x) && same(big, 40000, 21), "dereg of the first: bytes kept");
		check(y && !ibv_dereg_mr(y) && z && !ibv_dereg_mr(z) && same(big, 40000, 21),
		      "dereg of the others: bytes kept, the memory the application's again");
		big[39999] = 0;
		free(big);
	}

	/* overlapping registrations of the same pages */
	fill(buf, 8192, 9);
	a = ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE);
	b = ibv_reg_mr(pd, buf + 100, 1000, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	check(a && b && a->lkey != b->lkey, "reg_mr twice on the same pages: two regions");
	check(a && !ibv_dereg_mr(a) && same(buf, 8192, 9), "dereg of one: bytes kept");
	check(b && !ibv_dereg_mr(b) && same(buf, 8192, 9), "dereg of the other: bytes kept");
	free(buf);
}

static void local_qp_errors(void)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 17, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	uint8_t buf[64];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp *qp;
	struct ibv_cq *c2;
	struct ibv_pd *p2;

	errno = 0;
	check(!ibv_create_qp(pd, &ia) && errno == EINVAL, "create_qp: 17 send SGEs (max_sge 16): "
	      "EINVAL");
	ia.cap.max_send_sge = 1;
	ia.cap.max_inline_data = 5000;
	errno = 0;
	check(!ibv_create_qp(pd, &ia) && errno == EINVAL, "create_qp: 5000 inline bytes: EINVAL");
	ia.cap.max_inline_data = 0;
	ia.qp_type = IBV_QPT_RAW_PACKET;
	errno = 0;
	check(!ibv_create_qp(pd, &ia) && errno == EOPNOTSUPP, "create_qp: raw packet: EOPNOTSUPP");
	qp = new_qp(IBV_QPT_RC, pd, cq);
	if (!qp)
		die("create qp");
	check(qp_state(qp) == IBV_QPS_RESET, "create_qp: the QP is in RESET");
	check(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "modify_qp: RESET -> RTR: EINVAL");
	a.qp_state = IBV_QPS_INIT;
	check(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL,
	      "modify_qp: RESET -> INIT without port, P_Key index and access: EINVAL");
	a.port_num = 2;
	check(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS) == EINVAL, "modify_qp: port 2: EINVAL");
	check(post(qp, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, 1) == EINVAL,
	      "post_send in RESET: EINVAL");
	check(post_recv(qp, buf, 8, mr->lkey, 1) == EINVAL, "post_recv in RESET: EINVAL");
	check(!to_init(qp) && qp_state(qp) == IBV_QPS_INIT, "modify_qp: RESET -> INIT");
	check(!post_recv(qp, buf, 8, mr->lkey, 1), "post_recv in INIT: accepted");
	check(post(qp, IBV_WR_SEND, buf, 8, mr->lkey, 0, 0, 1) == EINVAL,
	      "post_send in INIT: EINVAL");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	check(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU) == EINVAL,
	      "modify_qp: INIT -> RTR without address, QPN, PSN: EINVAL");
	a.ah_attr.is_global = 0;
	check(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER) == EINVAL,
	      "modify_qp: an address without a GRH (RoCE needs one): EINVAL");
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.sgid_index = 15;
	check(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER) == EINVAL,
	      "modify_qp: source GID index 15, an empty entry: EINVAL");
	check(qp_state(qp) == IBV_QPS_INIT, "a refused modify changed nothing (still INIT)");
	a.qp_state = IBV_QPS_ERR;
	check(!ibv_modify_qp(qp, &a, IBV_QP_STATE), "modify_qp: INIT -> ERR");
	{
		struct ibv_wc wc = wait_wc(cq, 1000);

		check(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 1,
		      "the posted receive completes flushed (%s)", ibv_wc_status_str(wc.status));
	}
	c2 = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	errno = 0;
	check(!ibv_create_cq(ctx, 0, NULL, NULL, 0) && errno == EINVAL, "create_cq of 0: EINVAL");
	check(!ibv_create_cq(ctx, (1 << 22) + 1, NULL, NULL, 0) && errno == EINVAL,
	      "create_cq over max_cqe (2^22): EINVAL");
	check(ibv_destroy_cq(cq) == EBUSY, "destroy_cq of a CQ a QP uses: EBUSY");
	check(ibv_dealloc_pd(pd) == EBUSY, "dealloc_pd with a QP and an MR in it: EBUSY");
	p2 = ibv_alloc_pd(ctx);
	check(p2 && !ibv_dealloc_pd(p2), "alloc and dealloc of an empty PD");
	check(!ibv_destroy_qp(qp) && !ibv_destroy_cq(c2) && !ibv_dereg_mr(mr), "destroy all");
	{
		struct ibv_async_event ev;
		int fl = fcntl(ctx->async_fd, F_GETFL);

		fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
		errno = 0;
		check(ibv_get_async_event(ctx, &ev) == -1 && errno == EAGAIN,
		      "get_async_event on a non-blocking fd with nothing: EAGAIN");
		fcntl(ctx->async_fd, F_SETFL, fl);
	}
}

/* A completion channel's fd works with poll(2) and O_NONBLOCK, an event
 * comes for the CQ armed, and destroy waits for the acknowledgement. */
static void local_channel(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *c = ch ? ibv_create_cq(ctx, 8, (void *)0x5eed, ch, 0) : NULL;
	struct ibv_qp *qp = c ? new_qp(IBV_QPT_UD, pd, c) : NULL;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11 };
	uint8_t buf[256];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct pollfd p = { .fd = ch ? ch->fd : -1, .events = POLLIN };
	struct ibv_cq *got = NULL;
	void *gctx = NULL;
	struct ibv_wc wc;
	int fl;

	if (!qp || !mr || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_QKEY))
		die("channel setup");
	fl = fcntl(ch->fd, F_GETFL);
	fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK);
	errno = 0;
	check(ibv_get_cq_event(ch, &got, &gctx) == -1 && errno == EAGAIN,
	      "get_cq_event on a non-blocking channel with nothing: EAGAIN");
	check(!ibv_req_notify_cq(c, 0) && poll(&p, 1, 100) == 0,
	      "an armed CQ with nothing in it: its channel's fd is not readable");
	post_recv(qp, buf, sizeof(buf), mr->lkey, 7);
	a.qp_state = IBV_QPS_ERR;
	ibv_modify_qp(qp, &a, IBV_QP_STATE); /* the receive completes, flushed */
	check(poll(&p, 1, 2000) == 1 && (p.revents & POLLIN), "a completion: poll(2) says the "
	      "channel's fd is readable");
	check(!ibv_get_cq_event(ch, &got, &gctx) && got == c && gctx == (void *)0x5eed,
	      "get_cq_event names the CQ and its context");
	check(ibv_poll_cq(c, 1, &wc) == 1 && wc.wr_id == 7 && wc.status == IBV_WC_WR_FLUSH_ERR,
	      "and the completion is there");
	check(ibv_destroy_comp_channel(ch) == EBUSY, "destroy_comp_channel with a CQ on it: EBUSY");
	ibv_ack_cq_events(c, 1);
	check(!ibv_destroy_qp(qp) && !ibv_destroy_cq(c) && !ibv_destroy_comp_channel(ch) &&
	      !ibv_dereg_mr(mr), "destroy the QP, the CQ (every event acknowledged), the channel");
}

/* ibv_create_cq_ex and its polling: three flushed receives of a UD QP,
 * read one by one through start_poll/next_poll/end_poll. */
static void local_cq_ex(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 8, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM |
				      IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_cq_ex *cx = ibv_create_cq_ex(ctx, &ca);
	struct ibv_qp *qp = cx ? new_qp(IBV_QPT_UD, pd, ibv_cq_ex_to_cq(cx)) : NULL;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11 };
	struct ibv_poll_cq_attr pa = {};
	uint8_t buf[256];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	int n = 0, ok = 1, rc;

	ca.wc_flags |= IBV_WC_EX_WITH_TM_INFO;
	errno = 0;
	check(!ibv_create_cq_ex(ctx, &ca) && errno == EOPNOTSUPP,
	      "create_cq_ex asking for tag matching info: EOPNOTSUPP");
	if (!qp || !mr || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_QKEY))
		die("cq_ex setup");
	check(ibv_start_poll(cx, &pa) == ENOENT, "start_poll on an empty CQ: ENOENT");
	for (int i = 0; i < 3; i++)
		post_recv(qp, buf, sizeof(buf), mr->lkey, (uint64_t)(100 + i));
	a.qp_state = IBV_QPS_ERR;
	ibv_modify_qp(qp, &a, IBV_QP_STATE);
	usleep(200000);
	for (rc = ibv_start_poll(cx, &pa); !rc; rc = ibv_next_poll(cx)) {
		ok &= cx->wr_id == (uint64_t)(100 + n) && cx->status == IBV_WC_WR_FLUSH_ERR &&
		      ibv_wc_read_qp_num(cx) == qp->qp_num &&
		      ibv_wc_read_opcode(cx) == IBV_WC_RECV && ibv_wc_read_completion_ts(cx) > 0;
		n++;
	}
	if (n)
		ibv_end_poll(cx);
	check(n == 3 && ok && rc == ENOENT, "create_cq_ex: 3 completions read through "
	      "start/next/end_poll, in order, QP number and timestamp (%d)", n);
	check(!ibv_destroy_qp(qp) && !ibv_destroy_cq(ibv_cq_ex_to_cq(cx)) && !ibv_dereg_mr(mr),
	      "destroy the QP and the extended CQ");
}

struct worker {
	pthread_t t;
	int done;
};

/* One thread's work: regions, CQs and QPs of its own, at the same time
 * as three others. */
static void *work(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < 40; i++) {
		size_t n = 1000 + (size_t)i * 300;
		uint8_t *b = malloc(n);
		struct ibv_mr *mr;
		struct ibv_cq *c;
		struct ibv_qp *qp;

		fill(b, n, (uint8_t)i);
		mr = ibv_reg_mr(pd, b, n, IBV_ACCESS_LOCAL_WRITE);
		c = ibv_create_cq(ctx, 4, NULL, NULL, 0);
		qp = c ? new_qp(IBV_QPT_RC, pd, c) : NULL;
		if (mr && qp && !to_init(qp) && !post_recv(qp, b, (uint32_t)n, mr->lkey, 1) &&
		    !ibv_destroy_qp(qp) && !ibv_destroy_cq(c) && !ibv_dereg_mr(mr) &&
		    same(b, n, (uint8_t)i))
			w->done++;
		free(b);
	}
	return NULL;
}

/* The library is thread-safe: four threads at once. */
static void local_threads(void)
{
	struct worker w[4] = {};
	int done = 0;

	for (int i = 0; i < 4; i++)
		pthread_create(&w[i].t, NULL, work, &w[i]);
	for (int i = 0; i < 4; i++) {
		pthread_join(w[i].t, NULL);
		done += w[i].done;
	}
	check(done == 160, "4 threads, each 40 rounds of reg_mr, create_cq/qp, post_recv, destroy, "
	      "dereg_mr at once: %d of 160 done, every byte kept", done);
}

/* The GID table through every verb that reads it, and an SRQ's limit
 * event. */
static void local_gids_srq(void)
{
	struct ibv_gid_entry e, t[16];
	union ibv_gid g;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_srq_attr at = { .srq_limit = 5 };
	struct ibv_async_event ev = {};
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	uint8_t buf[64];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ssize_t n = ibv_query_gid_table(ctx, t, 16, 0);
	int got = 0;

	ibv_query_gid(ctx, 1, GIDX, &g);
	check(!ibv_query_gid_ex(ctx, 1, GIDX, &e, 0) && !memcmp(&e.gid, &g, 16) &&
	      e.gid_type == IBV_GID_TYPE_ROCE_V2 && e.port_num == 1 && e.ndev_ifindex > 0,
	      "query_gid_ex: GID %d as query_gid has it, RoCEv2, the interface's index", GIDX);
	check(n >= 3 && t[0].gid.raw[0] == 0xfe && t[0].gid.raw[1] == 0x80 &&
	      !memcmp(&t[GIDX].gid, &g, 16) && t[2].gid_type == IBV_GID_TYPE_ROCE_V2,
	      "query_gid_table: %zd entries, the default fe80:: GID first", n);
	errno = 0;
	check(ibv_query_gid_ex(ctx, 1, 15, &e, 0) == ENODATA, "query_gid_ex of an empty entry: "
	      "ENODATA");
	if (!srq || !mr)
		die("srq");
	check(sa.attr.max_wr == 16, "create_srq: max_wr as asked");
	for (int i = 0; i < 2; i++) {
		struct ibv_sge s = { (uintptr_t)buf, sizeof(buf), mr->lkey };
		struct ibv_recv_wr w = { .wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1 }, *bad;

		ibv_post_srq_recv(srq, &w, &bad);
	}
	check(!ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT), "modify_srq: limit 5 with 2 posted");
	while (!got && poll(&p, 1, 1000) == 1 && !ibv_get_async_event(ctx, &ev)) {
		got = ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == srq;
		ibv_ack_async_event(&ev);
	}
	check(got, "IBV_EVENT_SRQ_LIMIT_REACHED for the SRQ");
	check(!ibv_query_srq(srq, &at) && at.srq_limit == 0 && at.max_wr == 16,
	      "query_srq: the limit disarmed after its event");
	at.max_wr = 64;
	check(ibv_modify_srq(srq, &at, IBV_SRQ_MAX_WR) == EINVAL, "modify_srq of max_wr: EINVAL");
	check(!ibv_destroy_srq(srq) && !ibv_dereg_mr(mr), "destroy the SRQ");
}

/* A forked child gets its own copy of registered memory. */
static void local_fork(void)
{
	uint8_t *buf = malloc(20000);
	struct ibv_mr *mr;
	pid_t pid;
	int st = -1;

	fill(buf, 20000, 3);
	mr = ibv_reg_mr(pd, buf, 20000, IBV_ACCESS_LOCAL_WRITE);
	pid = fork();
	if (pid == 0) {
		int ok = same(buf, 20000, 3);

		buf[0] = 0xee; /* its own page: the parent must not see it */
		_exit(ok ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	check(mr && WIFEXITED(st) && WEXITSTATUS(st) == 0 && buf[0] == 3,
	      "fork: the child reads the registered bytes, its writes stay its own");
	ibv_dereg_mr(mr);
	free(buf);
}

/* ---- two sides --------------------------------------------------------------- */

static int sock;

static void say(const struct peer *p)
{
	if (write(sock, p, sizeof(*p)) != sizeof(*p))
		die("side channel write");
}

static void hear(struct peer *p)
{
	size_t got = 0;

	while (got < sizeof(*p)) {
		ssize_t n = read(sock, (char *)p + got, sizeof(*p) - got);

		if (n <= 0)
			die("side channel read");
		got += (size_t)n;
	}
}

/* The server's "slow" case: a QP whose completions go through a CQ of 4
 * polled late; p->arg messages must all be there, in order, none lost. */
static struct peer serve_slow(struct peer *p, uint8_t *buf, struct ibv_mr *mr)
{
	struct ibv_cq *small = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp *sq = small ? new_qp(IBV_QPT_RC, pd, small) : NULL;
	struct peer q = {}, r = {};
	int n = 0, inorder = 1;

	if (!sq)
		die("slow qp");
	me(sq, &q);
	say(&q);
	hear(p);
	if (to_rts(sq, p, 14, 7, 7))
		die("slow rts");
	for (int i = 0; i < 16; i++)
		post_recv(sq, buf + 7 + 1024 * i, 1024, mr->lkey, (uint64_t)i);
	say(&q); /* ready */
	usleep(300000);
	while (n < p->arg) {
		struct ibv_wc wc = wait_wc(small, 3000);

		if (wc.status != IBV_WC_SUCCESS)
			break;
		inorder &= wc.wr_id == (uint64_t)(n % 16);
		post_recv(sq, buf + 7 + 1024 * (n % 16), 1024, mr->lkey, wc.wr_id);
		n++;
	}
	r.arg = n;
	r.len = (uint32_t)inorder;
	ibv_destroy_qp(sq);
	ibv_destroy_cq(small);
	return r;
}

static const union ibv_gid mgid = { .raw = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
					       239, 1, 1, 9 } };

static struct ibv_qp *ud_qp(struct ibv_cq *c, uint32_t qkey)
{
	struct ibv_qp *qp = new_qp(IBV_QPT_UD, pd, c);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey };

	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_QKEY))
		die("ud qp");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("ud rtr");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("ud rts");
	return qp;
}

/* The server's "mcast" case: a UD QP joins 239.1.1.9; the first message
 * must come with the GRH naming the group, then, left, none. */
static struct peer serve_mcast(uint8_t *buf, struct ibv_mr *mr)
{
	struct ibv_cq *c = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp = ud_qp(c, 0x1234);
	struct peer q = {}, p;
	struct ibv_wc wc;
	int ok;

	ok = !ibv_attach_mcast(qp, &mgid, 0);
	post_recv(qp, buf, 2048, mr->lkey, 1);
	post_recv(qp, buf + 2048, 2048, mr->lkey, 2);
	memset(buf, 0, 40 + 100);
	q.qpn = qp->qp_num;
	say(&q);
	hear(&p); /* sent */
	wc = wait_wc(c, 3000);
	q.arg = ok && wc.status == IBV_WC_SUCCESS && wc.byte_len == 40 + 100 &&
		(wc.wc_flags & IBV_WC_GRH) && !memcmp(buf + 20 + 16, &mgid.raw[12], 4) &&
		buf[40] == 0x3c;
	ok = !ibv_detach_mcast(qp, &mgid, 0);
	say(&q);
	hear(&p); /* sent again */
	q.len = ok && (int)wait_wc(c, 500).status < 0; /* nothing for a QP that left */
	ibv_destroy_qp(qp);
	ibv_destroy_cq(c);
	return q;
}

/* Multicast on one device (loopback): a member on the sending device gets
 * its copy, the sending QP too, unless it asked not to
 * (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB); nothing for a QP not attached. */
static uint8_t mc_sl; /* the last one's sl */

static int mc_got(struct ibv_cq *c, uint32_t qpn, uint8_t *buf, uint8_t v)
{
	struct ibv_wc wc = wait_wc(c, 1000);

	mc_sl = wc.sl;
	return wc.status == IBV_WC_SUCCESS && wc.qp_num == qpn && wc.byte_len == 40 + 64 &&
	       (wc.wc_flags & IBV_WC_GRH) && buf[40] == v && buf[40 + 63] == v;
}

static void local_mcast_loopback(void)
{
	static uint8_t buf[4][4096];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_cq *c[3] = { ibv_create_cq(ctx, 8, NULL, NULL, 0),
				ibv_create_cq(ctx, 8, NULL, NULL, 0),
				ibv_create_cq(ctx, 8, NULL, NULL, 0) };
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = c[2], .recv_cq = c[2], .qp_type = IBV_QPT_UD, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *a = ud_qp(c[0], 0x4321), *b = ud_qp(c[1], 0x4321);
	struct ibv_qp *blk = ibv_create_qp_ex(ctx, &ia);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x4321 };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = mgid, .sgid_index = GIDX, .hop_limit = 8 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	struct ibv_sge g = { .addr = (uintptr_t)buf[3], .length = 64, .lkey = mr ? mr->lkey : 0 };
	struct ibv_send_wr w = { .sg_list = &g, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	int ok;

	if (!mr || !ah || !blk || ibv_modify_qp(blk, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						    IBV_QP_PORT | IBV_QP_QKEY))
		die("mcast loopback");
	at.qp_state = IBV_QPS_RTR;
	ibv_modify_qp(blk, &at, IBV_QP_STATE);
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = 1;
	ibv_modify_qp(blk, &at, IBV_QP_STATE | IBV_QP_SQ_PSN);
	check(!ibv_attach_mcast(a, &mgid, 0) && !ibv_attach_mcast(blk, &mgid, 0),
	      "loopback: two QPs of this device join 239.1.1.9 (one blocks its own)");
	for (int i = 0; i < 3; i++) {
		struct ibv_qp *q = i == 0 ? a : i == 1 ? b : blk;

		post_recv(q, buf[i], 4096, mr->lkey, (uint64_t)i);
	}
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = 0xffffff;
	w.wr.ud.remote_qkey = 0x4321;
	/* from a member that blocks nothing: a copy for itself and blk */
	memset(buf[3], 0x5a, 64);
	ok = !ibv_post_send(a, &w, &bad) && wait_wc(c[0], 2000).opcode == IBV_WC_SEND;
	check(ok && mc_got(c[0], a->qp_num, buf[0], 0x5a),
	      "loopback: the sending QP, a member, gets its own message");
	check(mc_sl == 0xa, "a UD receive's sl: the frame's network header, RoCEv2 over IPv4 "
	      "(0xa, as mlx5; UCX reads it), got 0x%x", mc_sl);
	check(mc_got(c[2], blk->qp_num, buf[2], 0x5a), "loopback: the other member of this "
	      "device gets it");
	check((int)wait_wc(c[1], 300).status < 0, "loopback: a QP not attached gets nothing");
	/* from the member that blocks its own: a's copy only */
	post_recv(a, buf[0], 4096, mr->lkey, 0);
	post_recv(blk, buf[2], 4096, mr->lkey, 2);
	memset(buf[3], 0xa5, 64);
	ok = !ibv_post_send(blk, &w, &bad);
	check(ok && mc_got(c[0], a->qp_num, buf[0], 0xa5), "loopback: a message of the QP "
	      "that blocks its own reaches the other member");
	while (ok && ibv_poll_cq(c[2], 1, &(struct ibv_wc){}) == 0)
		usleep(1000); /* its send completion */
	check((int)wait_wc(c[2], 300).status < 0, "loopback: ... and not the QP itself "
	      "(IBV_QP_CREATE_BLOCK_SELF_MCAST_LB)");
	ibv_detach_mcast(a, &mgid, 0);
	ibv_detach_mcast(blk, &mgid, 0);
	ibv_destroy_ah(ah);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_qp(blk);
	for (int i = 0; i < 3; i++)
		ibv_destroy_cq(c[i]);
	ibv_dereg_mr(mr);
}

/* ibv_resize_cq: a CQ of 4 holding three flushed receives grows to 16
 * (they stay, in order, and more than 4 fit), shrinks to 1 once empty;
 * sizes that cannot take what it holds, or what signaled sends posted
 * will put there, are refused with EINVAL and change nothing. */
static void local_cq_resize(void)
{
	static uint8_t buf[256];
	struct ibv_cq *c = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp *qp = ud_qp(c, 0x77), *q2 = ud_qp(c, 0x77), *q3 = ud_qp(c, 0x77);
	struct ibv_qp *sq = ud_qp(c, 0x77);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = GIDX, .hop_limit = 8 } };
	struct ibv_sge g = { .addr = (uintptr_t)buf, .length = 16 };
	struct ibv_send_wr w = { .sg_list = &g, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_ah *ah;
	struct ibv_wc wc[16];
	int n, ok = 1;

	if (!mr || ibv_query_gid(ctx, 1, GIDX, &aa.grh.dgid) || !(ah = ibv_create_ah(pd, &aa)))
		die("cq resize setup");
	g.lkey = mr->lkey;
	for (int i = 0; i < 3; i++)
		post_recv(qp, buf, sizeof(buf), mr->lkey, (uint64_t)(100 + i));
	ibv_modify_qp(qp, &a, IBV_QP_STATE);
	usleep(200000);
	check(ibv_resize_cq(c, 2) == EINVAL && c->cqe == 4,
	      "resize_cq to 2 of a CQ holding 3 completions: EINVAL, its size kept");
	check(ibv_resize_cq(c, 0) == EINVAL && ibv_resize_cq(c, -1) == EINVAL &&
	      ibv_resize_cq(c, 1 << 30) == EINVAL && c->cqe == 4,
	      "resize_cq to 0, -1, past the largest CQ: EINVAL");
	n = ibv_resize_cq(c, 10);
	check(!n && c->cqe >= 10, "resize_cq from 4 to 10 (cqe %d)", c->cqe);
	check(ibv_poll_cq(c, 1, wc) == 1 && wc[0].wr_id == 100 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR, "the first completion polled after it");
	for (int i = 0; i < 8; i++)
		post_recv(q2, buf, sizeof(buf), mr->lkey, (uint64_t)(200 + i));
	ibv_modify_qp(q2, &a, IBV_QP_STATE);
	usleep(200000);
	n = ibv_poll_cq(c, 16, wc);
	for (int i = 0; i < n; i++)
		ok &= wc[i].wr_id == (uint64_t)(i < 2 ? 101 + i : 200 + i - 2);
	check(n == 10 && ok, "the two left and 8 more, 10 in a CQ that held 4, in order (%d)", n);
	n = ibv_resize_cq(c, 1);
	check(!n && c->cqe >= 1 && c->cqe < 10, "resize_cq of the empty CQ down to 1 (cqe %d)",
	      c->cqe);
	post_recv(q3, buf, sizeof(buf), mr->lkey, 300);
	ibv_modify_qp(q3, &a, IBV_QP_STATE);
	check(wait_wc(c, 1000).wr_id == 300, "a completion through the shrunk CQ");
	/* three signaled sends posted to the CQ of 1: their completions
	 * count, written or not */
	check(!ibv_resize_cq(c, 4), "resize_cq to 4");
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = sq->qp_num;
	w.wr.ud.remote_qkey = 0x77;
	for (int i = 0; i < 3; i++)
		ok &= !ibv_post_send(sq, &w, &bad);
	check(ok && ibv_resize_cq(c, 2) == EINVAL, "resize_cq to 2 right after posting 3 "
	      "signaled sends: EINVAL");
	n = 0;
	for (int i = 0; i < 3; i++)
		n += wait_wc(c, 1000).status == IBV_WC_SUCCESS;
	check(n == 3, "... and their 3 completions come (%d)", n);
	ibv_destroy_ah(ah);
	check(!ibv_destroy_qp(qp) && !ibv_destroy_qp(q2) && !ibv_destroy_qp(q3) &&
	      !ibv_destroy_qp(sq) && !ibv_destroy_cq(c) && !ibv_dereg_mr(mr),
	      "destroy the QPs and the resized CQ");
}

/* Two RC QPs of this device, each connected to the other (loopback). */
static void loop_pair(struct ibv_pd *p, struct ibv_cq *c, struct ibv_qp **a, struct ibv_qp **b)
{
	struct peer pa = {}, pb = {};

	*a = new_qp(IBV_QPT_RC, p, c);
	*b = new_qp(IBV_QPT_RC, p, c);
	if (!*a || !*b)
		die("loopback pair");
	me(*a, &pa);
	me(*b, &pb);
	if (to_rts(*a, &pb, 12, 3, 3) || to_rts(*b, &pa, 12, 3, 3))
		die("loopback pair: to RTS");
}

/* One WRITE of 64 bytes of v from qp to (addr, rkey); its status. */
static enum ibv_wc_status write_lo(struct ibv_qp *qp, struct ibv_cq *c, struct ibv_mr *src,
				   uint64_t addr, uint32_t rkey, uint8_t v)
{
	memset(src->addr, v, 64);
	if (post(qp, IBV_WR_RDMA_WRITE, src->addr, 64, src->lkey, addr, rkey, v))
		return (enum ibv_wc_status)-2;
	return wait_wc(c, 3000).status;
}

/* ibv_rereg_mr's bad arguments: IBV_REREG_MR_ERR_INPUT, EINVAL, and the
 * region (b1, key) as it was: a loopback WRITE from qa still lands. */
static void rereg_bad_args(struct ibv_mr *mr, struct ibv_qp *qa, struct ibv_cq *c,
			   struct ibv_mr *smr, uint8_t *b1, uint32_t key)
{
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	errno = 0;
	check(ibv_rereg_mr(mr, 1 << 3, NULL, NULL, 0, 0) == IBV_REREG_MR_ERR_INPUT &&
	      errno == EINVAL, "rereg_mr with an unknown flag: ERR_INPUT, EINVAL");
	errno = 0;
	check(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 64, 0) ==
	      IBV_REREG_MR_ERR_INPUT && errno == EINVAL, "rereg_mr to address NULL: EINVAL");
	errno = 0;
	check(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, rw) ==
	      IBV_REREG_MR_ERR_INPUT && errno == EINVAL, "rereg_mr with access flags but no "
	      "CHANGE_ACCESS: EINVAL");
	errno = 0;
	check(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0) ==
	      IBV_REREG_MR_ERR_INPUT && errno == EINVAL, "rereg_mr to PD NULL: EINVAL");
	errno = 0;
	check(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_REMOTE_WRITE) == IBV_REREG_MR_ERR_INPUT && errno == EINVAL,
	      "rereg_mr to remote write without local write: EINVAL");
	check(mr->rkey == key && mr->addr == b1 && mr->pd == pd &&
	      write_lo(qa, c, smr, (uintptr_t)b1, key, 0x12) == IBV_WC_SUCCESS && b1[0] == 0x12,
	      "... and the region is as it was");
}

/* ibv_rereg_mr: the region's translation, PD and access change, its keys
 * stay; a peer's WRITE (a loopback QP of this device) follows: into the
 * new pages, not the old; refused while the region is of another PD or
 * lacks remote write. Bad arguments: IBV_REREG_MR_ERR_INPUT, EINVAL, and
 * the region as it was. */
static void local_rereg(void)
{
	uint8_t *b1 = aligned_alloc(4096, 4096), *b2 = aligned_alloc(4096, 8192);
	static uint8_t src[4096];
	struct ibv_cq *c = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mr *mr, *smr = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_qp *qa, *qb;
	uint32_t key;

	if (!b1 || !b2 || !c || !pd2 || !smr)
		die("rereg setup");
	memset(b1, 0, 4096);
	memset(b2, 0, 8192);
	mr = ibv_reg_mr(pd, b1, 4096, rw);
	if (!mr)
		die("rereg: reg_mr");
	key = mr->rkey;
	loop_pair(pd, c, &qa, &qb);
	check(write_lo(qa, c, smr, (uintptr_t)b1, key, 0x11) == IBV_WC_SUCCESS && b1[63] == 0x11,
	      "rereg: a loopback WRITE into the region");
	rereg_bad_args(mr, qa, c, smr, b1, key);
	/* its pages */
	check(!ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b2 + 4096, 4096, 0) &&
	      mr->lkey == key && mr->rkey == key && mr->addr == b2 + 4096 && mr->length == 4096,
	      "rereg_mr to other pages: keys kept, address and length new");
	check(write_lo(qa, c, smr, (uintptr_t)(b2 + 4096), key, 0x21) == IBV_WC_SUCCESS &&
	      b2[4096 + 63] == 0x21 && b1[0] == 0x12 && !b2[0],
	      "a WRITE to the new address lands in the new pages, nothing in the old");
	check(write_lo(qa, c, smr, (uintptr_t)b1, key, 0x22) == IBV_WC_REM_ACCESS_ERR &&
	      b1[0] == 0x12, "a WRITE to the old address: REM_ACCESS_ERR, the old pages untouched");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	/* its access */
	loop_pair(pd, c, &qa, &qb);
	check(!ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_LOCAL_WRITE),
	      "rereg_mr to local write only");
	check(write_lo(qa, c, smr, (uintptr_t)(b2 + 4096), key, 0x31) == IBV_WC_REM_ACCESS_ERR &&
	      b2[4096] == 0x21, "a WRITE then: REM_ACCESS_ERR, nothing written");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	/* its PD (with its access back) */
	loop_pair(pd, c, &qa, &qb);
	check(!ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS, pd2, NULL, 0,
			    rw) && mr->pd == pd2, "rereg_mr to another PD, remote write again");
	errno = 0;
	check(ibv_dealloc_pd(pd2) == EBUSY, "that PD cannot go while the region is in it");
	check(write_lo(qa, c, smr, (uintptr_t)(b2 + 4096), key, 0x41) == IBV_WC_REM_ACCESS_ERR &&
	      b2[4096] == 0x21, "a WRITE from a QP of the first PD: REM_ACCESS_ERR");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	loop_pair(pd, c, &qa, &qb);
	check(!ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd, NULL, 0, 0) &&
	      write_lo(qa, c, smr, (uintptr_t)(b2 + 4096), key, 0x51) == IBV_WC_SUCCESS &&
	      b2[4096 + 10] == 0x51, "rereg_mr back to the first PD: the WRITE lands");
	check(!ibv_dealloc_pd(pd2), "and the other PD can go");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	check(!ibv_dereg_mr(mr) && !ibv_dereg_mr(smr) && !ibv_destroy_cq(c),
	      "dereg the re-registered region");
	free(b1);
	free(b2);
}

/* One request on qp: its completion (status -2: refused when posted). */
static struct ibv_wc post_wait(struct ibv_qp *qp, struct ibv_cq *c, struct ibv_send_wr *w)
{
	struct ibv_send_wr *bad;

	w->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(qp, w, &bad))
		return (struct ibv_wc){ .status = (enum ibv_wc_status)-2 };
	return wait_wc(c, 3000);
}

static void unpair(struct ibv_qp *a, struct ibv_qp *b)
{
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
}

/* IBV_WR_BIND_MW of type 2 window mw (its R_Key was key) to 2048 bytes at
 * addr of mr, remote write, through qp: the new R_Key, the completion in *wc. */
static uint32_t bind2(struct ibv_qp *qp, struct ibv_cq *c, struct ibv_mw *mw, uint32_t key,
		      struct ibv_mr *mr, uint64_t addr, struct ibv_wc *wc)
{
	struct ibv_send_wr w = { .wr_id = 81, .opcode = IBV_WR_BIND_MW };

	w.bind_mw.mw = mw;
	w.bind_mw.rkey = ibv_inc_rkey(key);
	w.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = mr, .addr = addr, .length = 2048,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	*wc = post_wait(qp, c, &w);
	return w.bind_mw.rkey;
}

/* A SEND with Invalidate of key from qp to its peer: whether both complete
 * and the receive says WITH_INV with the key. */
static int send_inv(struct ibv_qp *qp, struct ibv_qp *peer, struct ibv_cq *c, struct ibv_mr *smr,
		    uint32_t key)
{
	struct ibv_send_wr w = { .wr_id = 84, .opcode = IBV_WR_SEND_WITH_INV, .invalidate_rkey = key };
	struct ibv_wc a, b;

	post_recv(peer, (uint8_t *)smr->addr + 2048, 64, smr->lkey, 85);
	a = post_wait(qp, c, &w);
	b = wait_wc(c, 3000);
	if (a.opcode == IBV_WC_RECV) {
		struct ibv_wc t = a;

		a = b;
		b = t;
	}
	return a.status == IBV_WC_SUCCESS && a.wr_id == 84 && b.status == IBV_WC_SUCCESS &&
	       b.wr_id == 85 && (b.wc_flags & IBV_WC_WITH_INV) && b.invalidated_rkey == key;
}

/* Memory windows (ibv_alloc_mw, ibv_bind_mw, IBV_WR_BIND_MW, LOCAL_INV,
 * SEND with Invalidate) between loopback QPs of this device: a WRITE
 * through a window lands in its part of the region and nowhere else, only
 * while it is bound, a type 2 window's only through the QP that bound it;
 * what the rules refuse completes MW_BIND_ERR. */
/* The memory windows' test: a region with IBV_ACCESS_MW_BIND (8 KiB), the
 * window's place in it, a region without, a window of each type. */
struct mwt {
	uint8_t *buf;
	struct ibv_cq *c;
	struct ibv_mr *smr, *mr, *plain;
	struct ibv_mw *w1, *w2;
	uint64_t win;
	uint32_t key;		/* the type 2 window's R_Key, last */
};

/* type 1: ibv_bind_mw, a WRITE through it, outside it, unbound */
static void mw_type1(struct mwt *e)
{
	struct ibv_qp *qa, *qb;
	struct ibv_wc wc;
	uint32_t k;
	int n;

	loop_pair(pd, e->c, &qa, &qb);
	k = e->w1->rkey;
	{
		struct ibv_mw_bind b = { .wr_id = 71, .send_flags = IBV_SEND_SIGNALED,
					 .bind_info = { .mr = e->mr, .addr = e->win, .length = 1024,
							.mw_access_flags = IBV_ACCESS_REMOTE_WRITE } };

		n = ibv_bind_mw(qa, e->w1, &b);
		check(!n && e->w1->rkey != k && (e->w1->rkey >> 8) == (k >> 8),
		      "bind_mw of the type 1 window: a new key byte (0x%x -> 0x%x)", k, e->w1->rkey);
	}
	wc = wait_wc(e->c, 3000);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 71,
	      "... its completion: BIND_MW, success");
	check(write_lo(qb, e->c, e->smr, e->win + 1024 - 64, e->w1->rkey, 0x61) ==
	      IBV_WC_SUCCESS && e->buf[2048 - 1] == 0x61 && !e->buf[2048],
	      "a WRITE through the window lands at its end");
	check(write_lo(qb, e->c, e->smr, e->win - 64, e->w1->rkey, 0x62) == IBV_WC_REM_ACCESS_ERR &&
	      !e->buf[1023], "a WRITE before the window: REM_ACCESS_ERR, nothing written");
	unpair(qa, qb);
	loop_pair(pd, e->c, &qa, &qb);
	check(write_lo(qb, e->c, e->smr, e->win, k, 0x63) == IBV_WC_REM_ACCESS_ERR &&
	      !e->buf[1024], "a WRITE with the window's R_Key of before the bind: REM_ACCESS_ERR");
	unpair(qa, qb);
	loop_pair(pd, e->c, &qa, &qb);
	errno = 0;
	check(ibv_dereg_mr(e->mr) == EBUSY, "dereg_mr of the region a window is bound to: EBUSY");
	{
		struct ibv_mw_bind b = { .wr_id = 72, .send_flags = IBV_SEND_SIGNALED,
					 .bind_info = { .mr = e->mr, .addr = e->win, .length = 0 } };

		check(!ibv_bind_mw(qa, e->w1, &b) && wait_wc(e->c, 3000).status == IBV_WC_SUCCESS,
		      "bind_mw of length 0: the type 1 window unbound");
	}
	check(write_lo(qb, e->c, e->smr, e->win, e->w1->rkey, 0x64) == IBV_WC_REM_ACCESS_ERR &&
	      !e->buf[1024], "a WRITE through it then: REM_ACCESS_ERR");
	unpair(qa, qb);

}

/* type 2: IBV_WR_BIND_MW, only its QP may use it, LOCAL_INV, SEND with
 * Invalidate */
static void mw_type2(struct mwt *e)
{
	struct ibv_qp *qa, *qb, *qc, *qd;
	struct ibv_wc wc;
	uint32_t k;

	loop_pair(pd, e->c, &qa, &qb);
	loop_pair(pd, e->c, &qc, &qd);
	k = bind2(qa, e->c, e->w2, e->w2->rkey, e->mr, e->win, &wc);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 81,
	      "IBV_WR_BIND_MW of the type 2 window through QP A");
	check(write_lo(qb, e->c, e->smr, e->win, k, 0x71) == IBV_WC_SUCCESS &&
	      e->buf[1024 + 63] == 0x71,
	      "a WRITE to QP A through it lands");
	check(write_lo(qc, e->c, e->smr, e->win + 64, k, 0x72) == IBV_WC_REM_ACCESS_ERR &&
	      !e->buf[1024 + 64], "a WRITE to another QP (D) through it: REM_ACCESS_ERR "
	      "(drop_mw_qp), nothing written");
	unpair(qc, qd);
	loop_pair(pd, e->c, &qc, &qd);
	check(send_inv(qc, qd, e->c, e->smr, k), "SEND with Invalidate of it to QP D: delivered, "
	      "the key "
	      "in the completion");
	check(write_lo(qb, e->c, e->smr, e->win + 128, k, 0x73) == IBV_WC_SUCCESS &&
	      e->buf[1024 + 128] == 0x73, "... and the window, not bound through D, still takes "
	      "A's WRITEs");
	unpair(qc, qd);
	{
		struct ibv_send_wr w = { .wr_id = 82, .opcode = IBV_WR_LOCAL_INV,
					 .invalidate_rkey = k };

		wc = post_wait(qa, e->c, &w);
	}
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV,
	      "LOCAL_INV of the type 2 window on QP A");
	check(write_lo(qb, e->c, e->smr, e->win + 192, k, 0x74) == IBV_WC_REM_ACCESS_ERR &&
	      !e->buf[1024 + 192], "a WRITE through it then: REM_ACCESS_ERR");
	unpair(qa, qb);
	/* the peer's SEND with Invalidate */
	loop_pair(pd, e->c, &qa, &qb);
	k = bind2(qa, e->c, e->w2, k, e->mr, e->win, &wc);
	check(wc.status == IBV_WC_SUCCESS, "the type 2 window bound again, through a new QP A");
	check(send_inv(qb, qa, e->c, e->smr, k), "B's SEND with Invalidate of it to A: delivered, "
	      "the key "
	      "in the completion");
	check(write_lo(qb, e->c, e->smr, e->win + 256, k, 0x75) == IBV_WC_REM_ACCESS_ERR &&
	      !e->buf[1024 + 256], "... and the window unbound: a WRITE through it: REM_ACCESS_ERR");
	unpair(qa, qb);
	loop_pair(pd, e->c, &qa, &qb);
	k = bind2(qa, e->c, e->w2, k, e->mr, e->win, &wc);
	check(wc.status == IBV_WC_SUCCESS, "bound once more");
	bind2(qa, e->c, e->w2, k, e->mr, e->win, &wc);
	check(wc.status == IBV_WC_MW_BIND_ERR && qp_state(qa) == IBV_QPS_ERR,
	      "binding it again while bound: MW_BIND_ERR, the QP in error");
	unpair(qa, qb);

	e->key = k;
}

/* what the rules refuse */
static void mw_refused(struct mwt *e)
{
	struct ibv_qp *qa, *qb;
	struct ibv_wc wc;
	uint32_t k = e->key;

	loop_pair(pd, e->c, &qa, &qb);
	{
		/* (the type 2 window free again first: bound, a bind fails anyway) */
		struct ibv_send_wr w = { .wr_id = 90, .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = k };

		check(post_wait(qa, e->c, &w).status == IBV_WC_SUCCESS, "LOCAL_INV of the type 2 "
		      "window through another QP of its PD");
	}
	{
		struct ibv_send_wr w = { .wr_id = 91, .opcode = IBV_WR_BIND_MW };

		w.bind_mw.mw = e->w2;
		w.bind_mw.rkey = ibv_inc_rkey(k);
		w.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = e->plain,
			.addr = (uintptr_t)e->buf, .length = 64,
			.mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
		wc = post_wait(qa, e->c, &w);
		check(wc.status == IBV_WC_MW_BIND_ERR && qp_state(qa) == IBV_QPS_ERR,
		      "a bind to a region without IBV_ACCESS_MW_BIND: MW_BIND_ERR, the QP in error");
	}
	unpair(qa, qb);
	loop_pair(pd, e->c, &qa, &qb);
	{
		struct ibv_send_wr w = { .wr_id = 92, .opcode = IBV_WR_BIND_MW };

		w.bind_mw.mw = e->w2;
		w.bind_mw.rkey = ibv_inc_rkey(k);
		w.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = e->mr, .addr = e->win + 4096,
			.length = 4096, .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
		check(post_wait(qa, e->c, &w).status == IBV_WC_MW_BIND_ERR,
		      "a window past the end of its region: MW_BIND_ERR");
	}
	unpair(qa, qb);
	{
		struct ibv_qp *ud = ud_qp(e->c, 0x99);
		struct ibv_send_wr w = { .wr_id = 93, .opcode = IBV_WR_BIND_MW }, *bad;

		w.bind_mw.mw = e->w2;
		w.bind_mw.rkey = ibv_inc_rkey(k);
		w.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = e->mr, .addr = e->win,
			.length = 64, .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
		check(ibv_post_send(ud, &w, &bad) == EINVAL, "IBV_WR_BIND_MW on a UD QP: EINVAL");
		ibv_destroy_qp(ud);
	}
}

static void local_mw(void)
{
	static uint8_t src[4096];
	struct mwt t = { .buf = aligned_alloc(4096, 8192), .c = ibv_create_cq(ctx, 16, NULL, NULL, 0),
			 .smr = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE) };
	struct ibv_device_attr da;
	int n;

	if (!t.buf || !t.c || !t.smr)
		die("mw setup");
	memset(t.buf, 0, 8192);
	memset(&da, 0, sizeof(da));
	n = ibv_query_device(ctx, &da);
	check(!n && (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
	      (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) && da.max_mw > 0,
	      "query_device: memory windows of type 1 and 2B, max_mw %d", da.max_mw);
	t.mr = ibv_reg_mr(pd, t.buf, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	t.plain = ibv_reg_mr(pd, t.buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	t.w1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	t.w2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	check(t.mr && t.plain && t.w1 && t.w2 && t.w1->type == IBV_MW_TYPE_1 && t.w2->rkey &&
	      t.w2->rkey != t.w1->rkey, "reg_mr with IBV_ACCESS_MW_BIND; alloc_mw of type 1 and 2");
	if (!t.mr || !t.plain || !t.w1 || !t.w2)
		die("mw setup");
	errno = 0;
	check(!ibv_alloc_mw(pd, (enum ibv_mw_type)3) && errno == EINVAL, "alloc_mw of type 3: EINVAL");
	t.win = (uintptr_t)t.buf + 1024;
	mw_type1(&t);
	mw_type2(&t);
	mw_refused(&t);
	errno = 0;
	check(ibv_dealloc_pd(pd) == EBUSY, "dealloc_pd with windows in it: EBUSY");
	check(!ibv_dealloc_mw(t.w1) && !ibv_dealloc_mw(t.w2) && !ibv_dereg_mr(t.mr) &&
	      !ibv_dereg_mr(t.plain) && !ibv_dereg_mr(t.smr) && !ibv_destroy_cq(t.c),
	      "dealloc_mw, then the region goes");
	free(t.buf);
}

/* A receive's lkey is checked when a message takes it, as on an HCA: its
 * region deregistered since it was posted (the pages kept by another), or
 * moved to another PD, the receive completes LOC_PROT_ERR and the sender
 * REM_OP_ERR. A reset QP leaves nothing of its own in its CQ; another
 * QP's completions there stay. */
static void local_recv_lkey(void)
{
	static uint8_t rb[4096], sb[4096];
	struct ibv_cq *c = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mr *m1 = ibv_reg_mr(pd, rb, sizeof(rb), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *m2 = ibv_reg_mr(pd, rb, sizeof(rb), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *smr = ibv_reg_mr(pd, sb, sizeof(sb), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp *qa, *qb, *ud;
	struct ibv_wc w[4];
	int n, ok = 1;

	if (!c || !pd2 || !m1 || !m2 || !smr)
		die("recv lkey setup");
	/* deregistered after the post */
	loop_pair(pd, c, &qa, &qb);
	post_recv(qb, rb, 64, m1->lkey, 41);
	check(!ibv_dereg_mr(m1), "dereg the receive's region (another keeps its pages)");
	check(post(qa, IBV_WR_SEND, sb, 64, smr->lkey, 0, 0, 42) == 0, "a SEND to it");
	n = 0;
	for (int i = 0; i < 2; i++) {
		w[i] = wait_wc(c, 3000);
		n += (w[i].wr_id == 41 && w[i].status == IBV_WC_LOC_PROT_ERR) ||
		     (w[i].wr_id == 42 && w[i].status == IBV_WC_REM_OP_ERR);
	}
	check(n == 2, "the receive: LOC_PROT_ERR, the SEND: REM_OP_ERR (%d/2)", n);
	unpair(qa, qb);
	while (ibv_poll_cq(c, 4, w) > 0)
		; /* (their flushes) */
	/* moved to another PD after the post */
	loop_pair(pd, c, &qa, &qb);
	post_recv(qb, rb, 64, m2->lkey, 43);
	check(!ibv_rereg_mr(m2, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0),
	      "rereg the receive's region to another PD");
	post(qa, IBV_WR_SEND, sb, 64, smr->lkey, 0, 0, 44);
	n = 0;
	for (int i = 0; i < 2; i++) {
		w[i] = wait_wc(c, 3000);
		n += (w[i].wr_id == 43 && w[i].status == IBV_WC_LOC_PROT_ERR) ||
		     (w[i].wr_id == 44 && w[i].status == IBV_WC_REM_OP_ERR);
	}
	check(n == 2, "the receive: LOC_PROT_ERR, the SEND: REM_OP_ERR (%d/2)", n);
	/* the pair's flushes in the CQ, a UD QP's after them */
	ud = ud_qp(c, 0x5);
	post_recv(qb, rb, 64, m2->lkey, 45);
	post_recv(qa, sb, 64, smr->lkey, 46);
	post_recv(ud, sb, 64, smr->lkey, 47);
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

		ibv_modify_qp(ud, &a, IBV_QP_STATE);
		usleep(200000);
		a.qp_state = IBV_QPS_RESET;
		check(!ibv_modify_qp(qa, &a, IBV_QP_STATE) && !ibv_modify_qp(qb, &a, IBV_QP_STATE),
		      "both QPs of the pair to RESET");
	}
	n = ibv_poll_cq(c, 4, w);
	for (int i = 0; i < n; i++)
		ok &= w[i].qp_num == ud->qp_num;
	check(n == 1 && ok && w[0].wr_id == 47, "the CQ holds the UD QP's flushed receive only "
	      "(%d completions)", n);
	post_recv(ud, sb, 64, smr->lkey, 48);
	check(wait_wc(c, 2000).wr_id == 48, "a receive posted to the QP in the error state: "
	      "it completes flushed (as on an HCA)");
	ibv_destroy_qp(ud);
	unpair(qa, qb);
	check(!ibv_dereg_mr(m2) && !ibv_dereg_mr(smr) && !ibv_dealloc_pd(pd2) && !ibv_destroy_cq(c),
	      "clean up");
}

/* ATOMIC WRITE (IBA 1.5, RC): 8 bytes stored whole at an aligned address
 * of a region with remote write, through ibv_wr_atomic_write and
 * ibv_post_send's IBV_WR_ATOMIC_WRITE (its 8 bytes from the scatter list,
 * read when posted); misaligned: REM_INV_REQ_ERR, a region without remote
 * write: REM_ACCESS_ERR, nothing stored; not 8 bytes, or on UD: EINVAL. */
static void local_atomic_write(void)
{
	static uint64_t dst[8] __attribute__((aligned(64)));
	static uint64_t src[2];
	struct ibv_cq *c = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_mr *dmr = ibv_reg_mr(pd, dst, sizeof(dst),
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_mr *ro = ibv_reg_mr(pd, dst, sizeof(dst),
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	struct ibv_mr *smr = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = c, .recv_cq = c, .qp_type = IBV_QPT_RC, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_WRITE,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 1 },
	};
	struct ibv_qp *qa = ibv_create_qp_ex(ctx, &ia), *qb = new_qp(IBV_QPT_RC, pd, c), *ud;
	struct ibv_qp_ex *x = qa ? ibv_qp_to_qp_ex(qa) : NULL;
	const uint8_t word[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct ibv_sge g = { .addr = (uintptr_t)src, .length = 8 };
	struct ibv_send_wr w = { .wr_id = 61, .opcode = IBV_WR_ATOMIC_WRITE, .sg_list = &g,
				 .num_sge = 1 }, *bad;
	struct peer pa = {}, pb = {};
	struct ibv_wc wc;

	if (!c || !dmr || !ro || !smr || !x || !qb)
		die("atomic write setup");
	g.lkey = smr->lkey;
	me(qa, &pa);
	me(qb, &pb);
	if (to_rts(qa, &pb, 12, 3, 3) || to_rts(qb, &pa, 12, 3, 3))
		die("atomic write: to RTS");
	ibv_wr_start(x);
	x->wr_id = 60;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, dmr->rkey, (uintptr_t)&dst[1], word);
	check(!ibv_wr_complete(x), "ibv_wr_atomic_write posted");
	wc = wait_wc(c, 3000);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_ATOMIC_WRITE && wc.wr_id == 60 &&
	      !memcmp(&dst[1], word, 8) && !dst[0] && !dst[2], "... completes ATOMIC_WRITE: "
	      "the 8 bytes there, as they were, nothing beside them");
	src[0] = 0x1122334455667788ull;
	w.wr.rdma.remote_addr = (uintptr_t)&dst[1];
	w.wr.rdma.rkey = dmr->rkey;
	wc = post_wait(qa, c, &w);
	src[0] = 0; /* (read when posted: what the completion stored is the old value) */
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_ATOMIC_WRITE &&
	      dst[3] == 0 && dst[1] == 0x1122334455667788ull,
	      "ibv_post_send IBV_WR_ATOMIC_WRITE: its scatter list's 8 bytes stored (%d)", wc.status);
	g.length = 4;
	w.wr.rdma.remote_addr = (uintptr_t)&dst[2];
	w.wr.rdma.rkey = dmr->rkey;
	check(ibv_post_send(qa, &w, &bad) == EINVAL, "IBV_WR_ATOMIC_WRITE of 4 bytes: EINVAL");
	g.length = 8;
	w.wr.rdma.remote_addr = (uintptr_t)&dst[4] + 4;
	src[0] = ~0ull;
	wc = post_wait(qa, c, &w);
	check(wc.status == IBV_WC_REM_INV_REQ_ERR && !dst[4] && !dst[5],
	      "to an address not 8-byte aligned: REM_INV_REQ_ERR, nothing stored");
	unpair(qa, qb);
	loop_pair(pd, c, &qa, &qb);
	w.wr.rdma.remote_addr = (uintptr_t)&dst[6];
	w.wr.rdma.rkey = ro->rkey;
	wc = post_wait(qa, c, &w);
	check(wc.status == IBV_WC_REM_ACCESS_ERR && !dst[6], "to a region without remote write: "
	      "REM_ACCESS_ERR, nothing stored");
	unpair(qa, qb);
	ud = ud_qp(c, 0x3);
	check(ibv_post_send(ud, &w, &bad) == EINVAL, "IBV_WR_ATOMIC_WRITE on a UD QP: EINVAL");
	ibv_destroy_qp(ud);
	check(!ibv_dereg_mr(dmr) && !ibv_dereg_mr(ro) && !ibv_dereg_mr(smr) && !ibv_destroy_cq(c),
	      "clean up");
}

/* A local address no xhcad serves (loopback.sh): frames to it are lost,
 * counted in xhcad's status, and the requests fail as with a dead peer. */
static void nopeer(const char *ip)
{
	static uint8_t buf[256];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp *rc = new_qp(IBV_QPT_RC, pd, cq), *ud = ud_qp(cq, 0x99);
	struct peer r = { .qpn = 0x123, .psn = 0x100 };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = GIDX, .hop_limit = 8 } };
	struct ibv_ah *ah;
	struct ibv_sge g = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr ? mr->lkey : 0 };
	struct ibv_send_wr w = { .wr_id = 2, .sg_list = &g, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;

	r.gid.raw[10] = r.gid.raw[11] = 0xff;
	if (!mr || !rc || inet_pton(AF_INET, ip, &r.gid.raw[12]) != 1)
		die("nopeer");
	aa.grh.dgid = r.gid;
	ah = ibv_create_ah(pd, &aa);
	check(!to_rts(rc, &r, 8, 1, 7), "an RC QP to QPN 0x123 at %s", ip);
	check(!post(rc, IBV_WR_SEND, buf, 64, mr->lkey, 0, 0, 1) &&
	      wait_wc(cq, 8000).status == IBV_WC_RETRY_EXC_ERR,
	      "its SEND: RETRY_EXC_ERR (timeout 8, retry 1), as with a dead peer");
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = 0x123;
	w.wr.ud.remote_qkey = 0x99;
	check(ah && !ibv_post_send(ud, &w, &bad) && wait_wc(cq, 2000).status == IBV_WC_SUCCESS,
	      "a UD SEND to it: sent (lost, as on a wire)");
	if (ah)
		ibv_destroy_ah(ah);
	ibv_destroy_qp(rc);
	ibv_destroy_qp(ud);
	ibv_dereg_mr(mr);
}

/* ---- the device view (xhca exec): each file as the verbs have it ---------------- */

/* The first line of a file, "" if it cannot be read. */
static const char *line_of(const char *fmt, ...)
{
	static char buf[256];
	char path[512];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	buf[0] = 0;
	f = fopen(path, "re");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

static void gid_str(const union ibv_gid *g, char *out)
{
	for (int i = 0; i < 8; i++)
		sprintf(out + i * 5, "%02x%02x%s", g->raw[2 * i], g->raw[2 * i + 1],
			i < 7 ? ":" : "");
}

static void view(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_device *dev = l ? l[0] : NULL;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct stat st;
	char path[300], want[64], ifn[IF_NAMESIZE] = "";
	const uint8_t *g;
	int gids_ok = 1, nset = 0;

	if (!dev)
		die("no device");
	check(!strncmp(dev->dev_name, "uverbs", 6), "ibv_device.dev_name: %s, a uverbs device",
	      dev->dev_name);
	snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%s", dev->dev_name);
	check(!strcmp(dev->dev_path, path), "dev_path: %s", dev->dev_path);
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s", dev->name);
	check(!strcmp(dev->ibdev_path, path), "ibdev_path: %s", dev->ibdev_path);
	snprintf(path, sizeof(path), "/dev/infiniband/%s", dev->dev_name);
	check(!stat(path, &st) && S_ISCHR(st.st_mode) && !access(path, R_OK | W_OK),
	      "%s: a character device it may open", path);
	snprintf(want, sizeof(want), "%u:%u", major(st.st_rdev), minor(st.st_rdev));
	check(!strcmp(line_of("%s/dev", dev->dev_path), want), "%s/dev: %s, the node's",
	      dev->dev_path, want);
	check(!strcmp(line_of("%s/ibdev", dev->dev_path), dev->name), "%s/ibdev: %s",
	      dev->dev_path, dev->name);
	if (ibv_query_device(ctx, &da) || ibv_query_port(ctx, 1, &pa))
		die("query");
	g = (const uint8_t *)&da.node_guid;
	snprintf(want, sizeof(want), "%02x%02x:%02x%02x:%02x%02x:%02x%02x", g[0], g[1], g[2],
		 g[3], g[4], g[5], g[6], g[7]);
	check(!strcmp(line_of("%s/node_guid", dev->ibdev_path), want) &&
	      !strcmp(line_of("%s/sys_image_guid", dev->ibdev_path), want),
	      "node_guid, sys_image_guid: %s, as ibv_query_device's", want);
	check(!strcmp(line_of("%s/fw_ver", dev->ibdev_path), da.fw_ver), "fw_ver: %s",
	      da.fw_ver);
	snprintf(want, sizeof(want), "%d: %s", pa.state, pa.state == IBV_PORT_ACTIVE ? "ACTIVE" :
		 "DOWN");
	check(!strcmp(line_of("%s/ports/1/state", dev->ibdev_path), want),
	      "ports/1/state: %s, as ibv_query_port's", want);
	check(!strcmp(line_of("%s/ports/1/link_layer", dev->ibdev_path),
		      pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand"),
	      "ports/1/link_layer, as ibv_query_port's");
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid gid;
		struct ibv_gid_entry e;
		char text[48];
		int set;

		if (ibv_query_gid(ctx, 1, i, &gid))
			die("query_gid");
		set = !ibv_query_gid_ex(ctx, 1, (uint32_t)i, &e, 0);
		gid_str(&gid, text);
		gids_ok &= !strcmp(line_of("%s/ports/1/gids/%d", dev->ibdev_path, i), text);
		if (!set) {
			snprintf(path, sizeof(path), "%s/ports/1/gid_attrs/types/%d",
				 dev->ibdev_path, i);
			gids_ok &= access(path, F_OK) != 0;
			continue;
		}
		nset++;
		if_indextoname(e.ndev_ifindex, ifn);
		gids_ok &= !strcmp(line_of("%s/ports/1/gid_attrs/types/%d", dev->ibdev_path, i),
				   e.gid_type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : "IB/RoCE v1");
		gids_ok &= !strcmp(line_of("%s/ports/1/gid_attrs/ndevs/%d", dev->ibdev_path, i),
				   ifn);
	}
	check(gids_ok && nset >= 2, "ports/1/gids/0..%d, gid_attrs/types and ndevs: as "
	      "ibv_query_gid(_ex) (%d in use, on %s)", pa.gid_tbl_len - 1, nset, ifn);
	snprintf(path, sizeof(path), "%s/device/net/%s", dev->ibdev_path, ifn);
	check(!lstat(path, &st), "device/net/%s: the interface of the GIDs", ifn);
	ibv_free_device_list(l);
}

/* What the server has for the case in progress. */
struct srv {
	uint8_t *raw;		/* malloc'd: any memory */
	uint8_t *buf;		/* raw + 7: the region, not aligned */
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	uint8_t *obuf;		/* "ovl": two regions overlapping partly */
	struct ibv_mr *oa, *ob;
};

/* A completion of the case's QP (the flushed buffers of earlier cases'
 * QPs are not news). */
static struct ibv_wc srv_wc(struct srv *v, int ms)
{
	struct ibv_wc wc;

	do
		wc = wait_wc(cq, ms);
	while ((int)wc.status >= 0 && wc.qp_num != v->qp->qp_num);
	return wc;
}

static void srv_drop(struct srv *v)
{
	if (v->qp)
		ibv_destroy_qp(v->qp);
	if (v->mr)
		ibv_dereg_mr(v->mr);
	if (v->oa)
		ibv_dereg_mr(v->oa);
	if (v->ob)
		ibv_dereg_mr(v->ob);
	free(v->raw);
	free(v->obuf);
	*v = (struct srv){};
}

/* Two regions of fresh malloc'd memory registered one after the other:
 * A = [0, 8192), B = [4096, 16384): B's pages partly A's. */
static struct peer srv_ovl(struct srv *v, struct peer *p)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	v->obuf = calloc(1, 20000);
	v->oa = ibv_reg_mr(pd, v->obuf, 8192, acc);
	v->ob = ibv_reg_mr(pd, v->obuf + 4096, 12288, acc);
	if (!v->oa || !v->ob)
		return (struct peer){ .arg = -1 };
	return (struct peer){ .rkey = v->oa->rkey, .len = v->ob->rkey,
			      .addr = (uintptr_t)v->obuf };
}

/* The byte at offset arg of the overlapping regions' memory. */
static struct peer srv_ovlbyte(struct srv *v, struct peer *p)
{
	return (struct peer){ .arg = ((volatile uint8_t *)v->obuf)[p->arg] };
}

static struct peer srv_ovldereg(struct srv *v, struct peer *p)
{
	struct peer r = { .arg = ibv_dereg_mr(v->oa) };

	v->oa = NULL;
	return r;
}

/* A new case: a QP, 64 KiB of malloc'd memory in an MR of the access asked
 * for (arg), len receives of 1024 bytes posted. */
static struct peer srv_setup(struct srv *v, struct peer *p)
{
	struct peer r = {};

	srv_drop(v);
	v->raw = calloc(1, 65536 + 7);
	v->buf = v->raw + 7;
	v->mr = ibv_reg_mr(pd, v->buf, 65536, IBV_ACCESS_LOCAL_WRITE | p->arg);
	v->qp = new_qp(IBV_QPT_RC, pd, cq);
	if (!v->mr || !v->qp)
		die("server setup");
	me(v->qp, &r);
	r.rkey = v->mr->rkey;
	r.addr = (uintptr_t)v->buf;
	/* (the client's rkey, unused otherwise: its QP access, 0x100 set) */
	qp_access = (p->rkey & 0x100) ? (int)(p->rkey & 0xff) : IBV_ACCESS_REMOTE_WRITE |
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if (to_rts(v->qp, p, 14, 7, 7))
		die("server rts");
	for (uint32_t i = 0; i < p->len; i++)
		post_recv(v->qp, v->buf + 1024 * i, 1024, v->mr->lkey, i);
	return r;
}

/* The byte at offset arg, as the application reads it: no verb call
 * between the WRITE and this load. */
static struct peer srv_byte(struct srv *v, struct peer *p)
{
	return (struct peer){ .arg = ((volatile uint8_t *)v->buf)[p->arg] };
}

static struct peer srv_wc_cmd(struct srv *v, struct peer *p)
{
	struct ibv_wc wc = srv_wc(v, p->arg);

	return (struct peer){ .arg = (int32_t)wc.status, .len = wc.byte_len };
}

/* The async event of the case's QP, within a second (the port's, as it
 * came up, are not the case's). */
static struct peer srv_async(struct srv *v, struct peer *p)
{
	struct pollfd pf = { .fd = ctx->async_fd, .events = POLLIN };
	struct peer r = { .arg = -1 };
	struct ibv_async_event ev;

	while (r.arg < 0 && poll(&pf, 1, 1000) == 1 && !ibv_get_async_event(ctx, &ev)) {
		if (ev.event_type != IBV_EVENT_PORT_ACTIVE && ev.event_type != IBV_EVENT_PORT_ERR) {
			r.arg = (int32_t)ev.event_type;
			r.len = ev.element.qp == v->qp;
		}
		ibv_ack_async_event(&ev);
	}
	return r;
}

/* A receive of three pieces apart: 1000 + 1000 + 1500 bytes. */
static struct peer srv_sgl(struct srv *v, struct peer *p)
{
	struct ibv_sge g[3] = {
		{ (uintptr_t)v->buf, 1000, v->mr->lkey },
		{ (uintptr_t)(v->buf + 5000), 1000, v->mr->lkey },
		{ (uintptr_t)(v->buf + 20000), 1500, v->mr->lkey },
	};
	struct ibv_recv_wr w = { .wr_id = 77, .sg_list = g, .num_sge = 3 }, *bad;

	memset(v->buf, 0, 65536);
	return (struct peer){ .arg = ibv_post_recv(v->qp, &w, &bad) };
}

/* ... what came into it: each piece in turn, nothing between them. */
static struct peer srv_sglcheck(struct srv *v, struct peer *p)
{
	struct ibv_wc wc = srv_wc(v, 2000);
	int ok = 1;

	for (int i = 0; i < 3000; i++) {
		size_t at = i < 1000 ? (size_t)i : i < 2000 ? (size_t)(5000 + i - 1000)
							: (size_t)(20000 + i - 2000);

		ok &= v->buf[at] == (uint8_t)(i * 7 + 1);
	}
	return (struct peer){
		.arg = wc.status == IBV_WC_SUCCESS && wc.wr_id == 77 && wc.byte_len == 3000 && ok,
		.len = v->buf[1000] == 0 && v->buf[20000 + 1000] == 0,
	};
}

static struct peer srv_slow(struct srv *v, struct peer *p)
{
	return serve_slow(p, v->buf, v->mr);
}

static struct peer srv_mcast(struct srv *v, struct peer *p)
{
	return serve_mcast(v->buf, v->mr);
}

/* A receive whose lkey is another's. */
static struct peer srv_badrecv(struct srv *v, struct peer *p)
{
	return (struct peer){ .arg = post_recv(v->qp, v->buf, 1024, v->mr->lkey + 0x100, 99) };
}

static struct peer srv_dereg(struct srv *v, struct peer *p)
{
	struct peer r = { .arg = ibv_dereg_mr(v->mr) };

	v->mr = NULL;
	return r;
}

/* arg SENDs of 8 bytes to the case's peer, each acknowledged (the count
 * of successful completions back). */
static struct peer srv_sends(struct srv *v, struct peer *p)
{
	struct peer r = {};

	for (int i = 0; i < p->arg; i++)
		if (post(v->qp, IBV_WR_SEND, v->buf + 60000, 8, v->mr->lkey, 0, 0, 50 + i))
			return r;
	for (int i = 0; i < p->arg; i++)
		r.arg += srv_wc(v, 5000).status == IBV_WC_SUCCESS;
	return r;
}

static struct peer srv_kill(struct srv *v, struct peer *p)
{
	struct peer r = { .arg = ibv_destroy_qp(v->qp) };

	v->qp = NULL;
	return r;
}

/* The server: for each case the client names ("setup"), a QP and a region;
 * then it answers the client's questions about its memory, completions and
 * events, or does what the case asks of its side. */
static const struct {
	const char *cmd;
	struct peer (*fn)(struct srv *v, struct peer *p);
} srv_cmds[] = {
	{ "setup", srv_setup }, { "byte", srv_byte }, { "wc", srv_wc_cmd },
	{ "slow", srv_slow }, { "async", srv_async }, { "sgl", srv_sgl },
	{ "sglcheck", srv_sglcheck }, { "mcast", srv_mcast }, { "badrecv", srv_badrecv },
	{ "dereg", srv_dereg }, { "kill", srv_kill }, { "ovl", srv_ovl },
	{ "ovlbyte", srv_ovlbyte }, { "ovldereg", srv_ovldereg }, { "sends", srv_sends },
};

static int server(void)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	struct srv v = {};

	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1))
		die("listen");
	sock = accept(ls, NULL, NULL);
	if (sock < 0)
		die("accept");
	for (;;) {
		struct peer p, r = {};

		hear(&p);
		if (!strcmp(p.cmd, "bye"))
			break;
		for (size_t i = 0; i < sizeof(srv_cmds) / sizeof(srv_cmds[0]); i++)
			if (!strcmp(p.cmd, srv_cmds[i].cmd))
				r = srv_cmds[i].fn(&v, &p);
		say(&r);
	}
	srv_drop(&v);
	return 0;
}

struct cside {
	struct ibv_qp *qp;
	struct peer srv;
	uint8_t *buf;
	struct ibv_mr *mr;
	struct ibv_mr *omr;	/* of another PD */
	uint64_t *word;		/* an ATOMIC's result */
	uint64_t waddr;		/* an 8-byte aligned word of the server's region */
};

static struct peer ask(const char *cmd, int arg)
{
	struct peer p = { .arg = arg };

	snprintf(p.cmd, sizeof(p.cmd), "%s", cmd);
	say(&p);
	hear(&p);
	return p;
}

/* The server's answer to "setup": its new region (at a new address: a
 * freed buffer need not come back at the same place, as under ASan's
 * quarantine), and the 8-byte aligned word in it the ATOMICs use. */
static void hear_srv(struct cside *c)
{
	hear(&c->srv);
	c->waddr = (c->srv.addr + 71) & ~7ull;
}

/* A fresh pair: the server's buffer registered with access, nrecv receives
 * posted there; the client's QP with these retry settings. */
static void pair_qp(struct cside *c, int access, int srv_qp_access, int nrecv, uint8_t timeout,
		    uint8_t retry, uint8_t rnr)
{
	struct peer p = { .arg = access, .len = (uint32_t)nrecv };

	if (c->qp)
		ibv_destroy_qp(c->qp);
	c->qp = new_qp(IBV_QPT_RC, pd, cq);
	if (!c->qp)
		die("client qp");
	me(c->qp, &p);
	if (srv_qp_access >= 0)
		p.rkey = 0x100 | (uint32_t)srv_qp_access;
	snprintf(p.cmd, sizeof(p.cmd), "setup");
	say(&p);
	hear_srv(c);
	if (to_rts(c->qp, &c->srv, timeout, retry, rnr))
		die("client rts");
}

/* a QP pair with the server's region of access (its QP allowing all) */
static void pair(struct cside *c, int access, int nrecv, uint8_t timeout, uint8_t retry,
		 uint8_t rnr)
{
	pair_qp(c, access, -1, nrecv, timeout, retry, rnr);
}

static void expect(struct cside *c, const char *what, enum ibv_wc_status want, int ms)
{
	struct ibv_wc wc = wait_wc(cq, ms);

	check(wc.status == want, "%s: %s (got %s, vendor_err 0x%x)", what,
	      ibv_wc_status_str(want), (int)wc.status < 0 ? "nothing" : ibv_wc_status_str(wc.status),
	      wc.vendor_err);
}

/* What arrives: a WRITE seen by a plain load, FETCH_ADD and READ. */
static void client_data(struct cside *c)
{
	struct peer r;

	/* a WRITE lands in the server's malloc'd buffer, seen by a plain load */
	pair(c, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, 2,
	     14, 7, 7);
	fill(c->buf, 65536, 5);
	post(c->qp, IBV_WR_RDMA_WRITE, c->buf, 65536, c->mr->lkey, c->srv.addr, c->srv.rkey, 1);
	expect(c, "RDMA WRITE of 64 KiB", IBV_WC_SUCCESS, 5000);
	r = ask("byte", 65535);
	check(r.arg == c->buf[65535], "the server reads the WRITE's last byte in its own buffer "
	      "(0x%02x), no verb call", r.arg);
	c->word = (uint64_t *)(c->buf + 1024);
	post(c->qp, IBV_WR_ATOMIC_FETCH_AND_ADD, c->word, 8, c->mr->lkey, c->waddr, c->srv.rkey, 2);
	expect(c, "FETCH_AND_ADD", IBV_WC_SUCCESS, 5000);
	post(c->qp, IBV_WR_RDMA_READ, c->buf + 2048, 8, c->mr->lkey, c->waddr, c->srv.rkey, 3);
	expect(c, "READ back", IBV_WC_SUCCESS, 5000);
	check(*(uint64_t *)(c->buf + 2048) == *c->word + 5,
	      "FETCH_AND_ADD returned the old c->word, the c->word grew by 5");
}

/* A QP with a send CQ and a receive CQ of its own, the receive CQ full
 * (the server's SENDs, not polled), the application polling its send CQ
 * for its own SEND: the ACK is not held back behind the full receive CQ
 * (perftest's exchange over rdma_cm waits so, with one-entry CQs). */
static void client_cq_split(struct cside *c)
{
	struct ibv_cq *scq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = { .send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 64,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct peer p = { .len = 1 }, r;
	struct ibv_qp *qp = scq && rcq ? ibv_create_qp(pd, &ia) : NULL;
	struct ibv_wc wc;
	int n, got = 0;

	if (!qp)
		die("split CQ qp");
	me(qp, &p);
	snprintf(p.cmd, sizeof(p.cmd), "setup");
	say(&p);
	hear_srv(c);
	if (to_rts(qp, &c->srv, 14, 3, 7))
		die("split CQ rts");
	n = rcq->cqe < 64 ? rcq->cqe : 64;
	for (int i = 0; i < n; i++)
		post_recv(qp, c->buf + 1024 * i, 1024, c->mr->lkey, 100 + i);
	r = ask("sends", n);
	check(r.arg == n, "the server's %d SENDs acknowledged: the receive CQ (%d entries) full, "
	      "not polled", r.arg, rcq->cqe);
	post(qp, IBV_WR_SEND, c->buf + 60000, 8, c->mr->lkey, 0, 0, 7);
	wc = wait_wc(scq, 5000);
	check(wc.status == IBV_WC_SUCCESS && wc.wr_id == 7, "our SEND completes on the send CQ "
	      "meanwhile (got %s)", (int)wc.status < 0 ? "nothing" : ibv_wc_status_str(wc.status));
	while (got < n + 1 && ibv_poll_cq(rcq, 1, &wc) == 1)
		got += wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV;
	check(got == n, "then the receive CQ: the %d receives (%d)", n, got);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
}

/* The extended post API. */
static void client_wr_api(struct cside *c)
{
	struct peer r;

	/* the extended post API: a WRITE, an inline SEND, a FETCH_ADD in one
	 * batch, on a QP made with send ops flags */
	{
		struct ibv_qp_init_attr_ex ia = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
				 .max_recv_sge = 1, .max_inline_data = 64 },
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.pd = pd,
			.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND |
					  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
		};
		struct ibv_qp *q2 = ibv_create_qp_ex(ctx, &ia);
		struct ibv_qp_ex *x = q2 ? ibv_qp_to_qp_ex(q2) : NULL;
		int n = 0, good = 0, err;

		check(x != NULL && ibv_qp_to_qp_ex(c->qp) == NULL,
		      "ibv_qp_to_qp_ex: the QP made with send ops flags has the wr_* API, "
		      "an ibv_create_qp one not");
		if (x) {
			struct peer p = { .arg = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
					  .len = 2 };

			ibv_destroy_qp(c->qp);
			c->qp = q2;
			me(q2, &p);
			snprintf(p.cmd, sizeof(p.cmd), "setup");
			say(&p);
			hear_srv(c);
			if (to_rts(q2, &c->srv, 14, 7, 7))
				die("wr qp rts");
			fill(c->buf, 4096, 11);
			ibv_wr_start(x);
			x->wr_id = 31;
			x->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_rdma_write(x, c->srv.rkey, c->srv.addr + 8192);
			ibv_wr_set_sge(x, c->mr->lkey, (uintptr_t)c->buf, 4096);
			x->wr_id = 32;
			ibv_wr_send(x);
			ibv_wr_set_inline_data(x, "inline!", 8);
			x->wr_id = 33;
			ibv_wr_atomic_fetch_add(x, c->srv.rkey, c->waddr, 3);
			ibv_wr_set_sge(x, c->mr->lkey, (uintptr_t)c->word, 8);
			err = ibv_wr_complete(x);
			for (n = 0; n < 3; n++) {
				struct ibv_wc w = wait_wc(cq, 5000);

				good += w.status == IBV_WC_SUCCESS && w.wr_id == (uint64_t)(31 + n);
			}
			r = ask("byte", 8192 + 4095);
			check(!err && good == 3 && r.arg == c->buf[4095],
			      "ibv_wr_*: WRITE, inline SEND and FETCH_ADD in one batch: %d of 3 "
			      "completed in order, the WRITE's last byte there", good);
			r = ask("wc", 2000);
			check(r.arg == IBV_WC_SUCCESS && r.len == 8, "... the SEND arrived, 8 bytes");
			ibv_wr_start(x);
			ibv_wr_send(x);
			ibv_wr_set_inline_data(x, c->buf, 65); /* over the QP's 64 */
			check(ibv_wr_complete(x) == EINVAL && (int)wait_wc(cq, 200).status < 0,
			      "ibv_wr_complete of a batch with inline data over max_inline_data: "
			      "EINVAL, nothing posted");
		}
	}
}

/* WRITE through a region, on pages a later region took in: each region
 * writes where the application reads, before and after the other goes. */
static int ovl_write(struct cside *c, uint32_t rkey, uint64_t addr, uint8_t v, uint64_t id)
{
	memset(c->buf, v, 4);
	return !post(c->qp, IBV_WR_RDMA_WRITE, c->buf, 4, c->mr->lkey, addr, rkey, id) &&
	       wait_wc(cq, 3000).status == IBV_WC_SUCCESS;
}

static void client_overlap(struct cside *c)
{
	struct peer o, r;
	int ok;

	pair(c, IBV_ACCESS_REMOTE_WRITE, 0, 14, 7, 7);
	o = ask("ovl", 0);
	check(o.arg == 0, "the server registers B over pages of its region A and past them");
	ok = ovl_write(c, o.rkey, o.addr + 100, 0x11, 50) &&
	     ovl_write(c, o.rkey, o.addr + 5000, 0x33, 51) &&
	     ovl_write(c, o.len, o.addr + 12000, 0x22, 52);
	r = ask("ovlbyte", 100);
	ok &= r.arg == 0x11;
	r = ask("ovlbyte", 5000);
	ok &= r.arg == 0x33;
	r = ask("ovlbyte", 12000);
	check(ok && r.arg == 0x22, "WRITEs through A (alone and on the shared pages) and B: each "
	      "where the server reads");
	ask("ovldereg", 0);
	ok = ovl_write(c, o.len, o.addr + 5004, 0x44, 53);
	r = ask("ovlbyte", 5004);
	check(ok && r.arg == 0x44, "A deregistered: a WRITE through B on the pages they shared "
	      "still lands");
}

/* UD to a multicast group: the server's QP attached gets it with the
 * group's GRH; detached, it gets nothing. */
static void client_mcast(struct cside *c)
{
	struct ibv_qp *qp = ud_qp(cq, 0x77);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = mgid, .sgid_index = GIDX, .hop_limit = 8 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	struct ibv_sge g = { .addr = (uintptr_t)c->buf, .length = 100, .lkey = c->mr->lkey };
	struct ibv_send_wr w = { .wr_id = 40, .sg_list = &g, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct peer p = { .cmd = "mcast" }, r;
	int sent;

	memset(c->buf, 0x3c, 100);
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = 0xffffff;
	w.wr.ud.remote_qkey = 0x1234;
	say(&p);
	hear(&r); /* its QP joined */
	sent = ah && !ibv_post_send(qp, &w, &bad) && wait_wc(cq, 3000).status == IBV_WC_SUCCESS;
	say(&p);
	hear(&r);
	check(sent && r.arg == 1, "UD SEND to 239.1.1.9: the attached QP got it, its GRH "
	      "naming the group");
	w.wr_id = 41;
	sent = !ibv_post_send(qp, &w, &bad) && wait_wc(cq, 3000).status == IBV_WC_SUCCESS;
	say(&p);
	hear(&r);
	check(sent && r.len == 1, "after ibv_detach_mcast: nothing for that QP");
	check(ibv_attach_mcast(c->qp, &mgid, 0) == EINVAL, "attach_mcast of an RC QP: EINVAL");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
}

/* What the requester refuses: LOC_PROT_ERR and the flush after it. */
static void client_local_errors(struct cside *c)
{
	struct peer r;

	/* an ATOMIC on an address not 8-byte aligned */
	pair(c, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC, 2, 14, 7, 7);
	post(c->qp, IBV_WR_ATOMIC_CMP_AND_SWP, c->word, 8, c->mr->lkey, c->waddr + 4, c->srv.rkey, 21);
	expect(c, "CMP_AND_SWP on an address 4 bytes off alignment", IBV_WC_REM_INV_REQ_ERR,
	       3000);
	r = ask("async", 0);
	check(r.arg == IBV_EVENT_QP_REQ_ERR && r.len == 1, "... the responder's application: "
	      "async event %s for its QP", r.arg < 0 ? "none" :
	      ibv_event_type_str((enum ibv_event_type)r.arg));

	/* a SEND from memory of another PD */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 2, 14, 7, 7);
	post(c->qp, IBV_WR_SEND, c->buf + 65536, 64, c->omr->lkey, 0, 0, 4);
	expect(c, "SEND with an lkey of another PD", IBV_WC_LOC_PROT_ERR, 2000);
	post(c->qp, IBV_WR_SEND, c->buf, 64, c->mr->lkey, 0, 0, 5);
	expect(c, "the next request after the error", IBV_WC_WR_FLUSH_ERR, 2000);
	check(qp_state(c->qp) == IBV_QPS_ERR, "the QP is in the error state");

	/* an SGE beyond its region */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 2, 14, 7, 7);
	post(c->qp, IBV_WR_SEND, c->buf + 69000, 2000, c->mr->lkey, 0, 0, 6);
	expect(c, "SEND whose SGE runs past its region", IBV_WC_LOC_PROT_ERR, 2000);
}

/* What the responder refuses: REM_ACCESS_ERR. */
static void client_remote_access(struct cside *c)
{
	struct peer r;

	/* the server's region has no remote write */
	pair(c, IBV_ACCESS_REMOTE_READ, 2, 14, 7, 7);
	post(c->qp, IBV_WR_RDMA_WRITE, c->buf, 64, c->mr->lkey, c->srv.addr, c->srv.rkey, 7);
	expect(c, "WRITE to a region without remote write", IBV_WC_REM_ACCESS_ERR, 3000);
	r = ask("byte", 0);
	check(r.arg == 0, "nothing was written there");
	r = ask("async", 0);
	check(r.arg == IBV_EVENT_QP_ACCESS_ERR && r.len == 1, "... the responder's application: "
	      "async event %s for its QP", r.arg < 0 ? "none" :
	      ibv_event_type_str((enum ibv_event_type)r.arg));

	pair(c, IBV_ACCESS_REMOTE_WRITE, 2, 14, 7, 7);
	post(c->qp, IBV_WR_RDMA_WRITE, c->buf, 64, c->mr->lkey, c->srv.addr + 65536 - 32, c->srv.rkey, 8);
	expect(c, "WRITE past the end of the region", IBV_WC_REM_ACCESS_ERR, 3000);

	pair(c, IBV_ACCESS_REMOTE_WRITE, 2, 14, 7, 7);
	post(c->qp, IBV_WR_RDMA_WRITE, c->buf, 64, c->mr->lkey, c->srv.addr, c->srv.rkey ^ 0x5500, 9);
	expect(c, "WRITE with a wrong R_Key", IBV_WC_REM_ACCESS_ERR, 3000);

	/* the region allows it, the server's QP (qp_access_flags) does not:
	 * NAKed invalid request, as RXE */
	pair_qp(c, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_READ, 2, 14,
		7, 7);
	post(c->qp, IBV_WR_RDMA_WRITE, c->buf, 64, c->mr->lkey, c->srv.addr, c->srv.rkey, 10);
	expect(c, "WRITE to a QP without remote write (qp_access_flags)", IBV_WC_REM_INV_REQ_ERR,
	       3000);
	r = ask("byte", 0);
	check(r.arg == 0, "nothing was written there");
	pair_qp(c, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_WRITE, 2, 14,
		7, 7);
	post(c->qp, IBV_WR_RDMA_READ, c->buf, 64, c->mr->lkey, c->srv.addr, c->srv.rkey, 11);
	expect(c, "READ from a QP without remote read", IBV_WC_REM_INV_REQ_ERR, 3000);
}

/* A SEND too long for the receive, none posted, a slow receiver. */
static void client_responder_errors(struct cside *c)
{
	struct peer r;

	/* a SEND longer than the server's receive buffer (1024) */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 2, 14, 7, 7);
	post(c->qp, IBV_WR_SEND, c->buf, 3000, c->mr->lkey, 0, 0, 10);
	expect(c, "SEND longer than the receive buffer", IBV_WC_REM_INV_REQ_ERR, 3000);
	r = ask("wc", 2000);
	check(r.arg == IBV_WC_LOC_LEN_ERR, "... the receiver: %s",
	      ibv_wc_status_str((enum ibv_wc_status)r.arg));

	/* no receive posted: RNR NAKs, one retry */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 0, 14, 7, 1);
	post(c->qp, IBV_WR_SEND, c->buf, 100, c->mr->lkey, 0, 0, 11);
	expect(c, "SEND with no receive posted, rnr_retry 1", IBV_WC_RNR_RETRY_EXC_ERR, 5000);

	/* 48 SENDs into a receiver whose CQ has 4 entries and is polled late:
	 * xhca holds the QP's frames back (no CQ overrun), nothing is lost */
	{
		struct ibv_qp *q2 = new_qp(IBV_QPT_RC, pd, cq);
		struct peer p = { .arg = 48 }, s2;
		int ok = 1;

		snprintf(p.cmd, sizeof(p.cmd), "slow");
		say(&p);
		hear(&s2);
		me(q2, &p);
		say(&p);
		if (to_rts(q2, &s2, 14, 7, 7))
			die("slow client rts");
		hear(&s2); /* its receives are posted */
		for (int i = 0; i < 48 && ok; i++) {
			ok = !post(q2, IBV_WR_SEND, c->buf, 100, c->mr->lkey, 0, 0, 100 + i) &&
			     wait_wc(cq, 5000).status == IBV_WC_SUCCESS;
		}
		hear(&r);
		check(ok && r.arg == 48 && r.len == 1, "48 SENDs through a receiver's CQ of 4 "
		      "polled late: %d received, in order: %s", r.arg, r.len ? "yes" : "no");
		ibv_destroy_qp(q2);
	}
}

/* A bad receive lkey, a deregistered region, a peer QP gone. */
static void client_gone(struct cside *c)
{
	struct peer r;
	struct ibv_wc wc;

	/* a receive's scatter list of three pieces apart */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 0, 14, 7, 7);
	r = ask("sgl", 0);
	check(r.arg == 0, "post_recv with a scatter list of 3 pieces apart: accepted");
	for (int i = 0; i < 3000; i++)
		c->buf[i] = (uint8_t)(i * 7 + 1);
	post(c->qp, IBV_WR_SEND, c->buf, 3000, c->mr->lkey, 0, 0, 15);
	expect(c, "SEND of 3000 bytes into it", IBV_WC_SUCCESS, 3000);
	r = ask("sglcheck", 0);
	check(r.arg == 1 && r.len == 1, "the receiver: one completion of 3000 bytes, each piece "
	      "filled in turn, nothing between them");

	/* a receive whose lkey is not the server's */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 0, 14, 7, 7);
	r = ask("badrecv", 0);
	check(r.arg == 0, "post_recv with a wrong lkey: accepted (reported when used)");
	post(c->qp, IBV_WR_SEND, c->buf, 100, c->mr->lkey, 0, 0, 12);
	r = ask("wc", 2000);
	check(r.arg == IBV_WC_LOC_PROT_ERR, "... a message for it: the receiver gets %s",
	      (int)r.arg < 0 ? "nothing" : ibv_wc_status_str((enum ibv_wc_status)r.arg));
	wc = wait_wc(cq, 3000);
	check(wc.status != IBV_WC_SUCCESS && (int)wc.status >= 0, "... the sender gets an error "
	      "(%s)", (int)wc.status < 0 ? "nothing" : ibv_wc_status_str(wc.status));

	/* after ibv_dereg_mr no remote byte reaches the memory */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 0, 14, 7, 7);
	r = ask("dereg", 0);
	check(r.arg == 0, "the server deregisters its region");
	post(c->qp, IBV_WR_RDMA_WRITE, c->buf, 64, c->mr->lkey, c->srv.addr, c->srv.rkey, 13);
	expect(c, "WRITE to a deregistered region", IBV_WC_REM_ACCESS_ERR, 3000);
	r = ask("byte", 0);
	check(r.arg == 0, "its memory is unchanged");

	/* the peer's QP gone: no answer, transport retries exceeded */
	pair(c, IBV_ACCESS_REMOTE_WRITE, 2, 8, 1, 7);
	ask("kill", 0);
	post(c->qp, IBV_WR_SEND, c->buf, 100, c->mr->lkey, 0, 0, 14);
	expect(c, "SEND to a QP destroyed meanwhile (timeout 8, retry 1)", IBV_WC_RETRY_EXC_ERR,
	       5000);
}

static int client(const char *ip)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	struct peer bye = { .cmd = "bye" };
	struct ibv_pd *other = ibv_alloc_pd(ctx);
	struct cside c = {};

	inet_pton(AF_INET, ip, &sa.sin_addr);
	sock = socket(AF_INET, SOCK_STREAM, 0);
	for (int i = 0; i < 100 && connect(sock, (struct sockaddr *)&sa, sizeof(sa)); i++)
		usleep(100000);
	c.buf = malloc(70000);
	c.mr = ibv_reg_mr(pd, c.buf, 70000, IBV_ACCESS_LOCAL_WRITE);
	c.omr = ibv_reg_mr(other, c.buf + 65536, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!c.mr || !c.omr)
		die("client mr");
	client_data(&c);
	client_wr_api(&c);
	client_cq_split(&c);
	client_mcast(&c);
	client_overlap(&c);
	client_local_errors(&c);
	client_remote_access(&c);
	client_responder_errors(&c);
	client_gone(&c);
	say(&bye);
	ibv_destroy_qp(c.qp);
	ibv_dereg_mr(c.mr);
	ibv_dereg_mr(c.omr);
	ibv_dealloc_pd(other);
	free(c.buf);
	return 0;
}

/* Resources, then nothing until killed: xhcad must free them all. */
static __attribute__((noreturn)) void hold(void)
{
	static uint8_t buf[1 << 16];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp *qp = new_qp(IBV_QPT_RC, pd, cq);

	if (!mr || !qp)
		die("hold");
	printf("holding\n");
	fflush(stdout);
	for (;;) {
		struct ibv_async_event ev;

		if (ibv_get_async_event(ctx, &ev))
			pause();
		printf("async event: %s\n", ibv_event_type_str(ev.event_type));
		fflush(stdout);
		ibv_ack_async_event(&ev);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: xhca-verbstest local|server|client IP|hold|nopeer IP|view\n");
		return 2;
	}
	open_dev();
	if (!strcmp(argv[1], "local")) {
		local_memory();
		local_mr_errors();
		local_fork();
		local_channel();
		local_cq_ex();
		local_cq_resize();
		local_rereg();
		local_mw();
		local_recv_lkey();
		local_atomic_write();
		local_gids_srq();
		local_threads();
		local_qp_errors();
		local_mcast_loopback();
	} else if (!strcmp(argv[1], "view")) {
		view();
	} else if (!strcmp(argv[1], "nopeer") && argc > 2) {
		nopeer(argv[2]);
	} else if (!strcmp(argv[1], "server")) {
		server();
	} else if (!strcmp(argv[1], "client") && argc > 2) {
		client(argv[2]);
	} else if (!strcmp(argv[1], "hold")) {
		hold();
	} else {
		fprintf(stderr, "usage: xhca-verbstest local|server|client IP|hold|nopeer IP|view\n");
		return 2;
	}
	return fails > 100 ? 100 : fails;
}
