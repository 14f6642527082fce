/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-verbstest local (main.c runs the local checks of every file): the
 * memory semantics of ibv_reg_mr, bad arguments, state rules, completion
 * channels, extended CQs, threads, the GID table, SRQs, fork.
 */
#include "verbstest.h"

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
void local_memory(void)
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

void local_mr_errors(void)
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

void local_qp_errors(void)
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
void local_channel(void)
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
void local_cq_ex(void)
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

/* The receive time of one SEND between a loopback pair on extended CQ
 * cx (its receive completion read through start/next/end_poll), or -1. */
static int64_t recv_ts(struct ibv_cq_ex *cx, uint8_t *buf, struct ibv_mr *mr)
{
	struct ibv_poll_cq_attr pa = {};
	struct ibv_qp *qa, *qb;
	int64_t ts = -1;

	loop_pair(pd, ibv_cq_ex_to_cq(cx), &qa, &qb);
	post_recv(qb, buf, 64, mr->lkey, 51);
	if (post(qa, IBV_WR_SEND, buf + 64, 64, mr->lkey, 0, 0, 52))
		return unpair(qa, qb), -1;
	for (int tries = 0; tries < 3000 && ts < 0; tries++) {
		if (ibv_start_poll(cx, &pa)) {
			usleep(1000);
			continue;
		}
		do {
			if (cx->wr_id == 51 && cx->status == IBV_WC_SUCCESS)
				ts = (int64_t)ibv_wc_read_completion_ts(cx);
		} while (!ibv_next_poll(cx));
		ibv_end_poll(cx);
	}
	unpair(qa, qb);
	return ts;
}

/* A CQ asking for completion timestamps gets them for a SEND xhca_rx
 * placed itself (--recv-fast); one not asking spares xhca_rx the clock
 * (XHCA_CQF_NO_TS: the value 0, had it been read). */
void local_cq_ts(void)
{
	static uint8_t buf[4096];
	struct ibv_cq_init_attr_ex ts = { .cqe = 8, .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP },
				   nots = { .cqe = 8, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN };
	struct ibv_cq_ex *a = ibv_create_cq_ex(ctx, &ts), *b = ibv_create_cq_ex(ctx, &nots);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	int64_t ta, tb;

	if (!a || !b || !mr)
		die("cq_ts setup");
	ta = recv_ts(a, buf, mr);
	tb = recv_ts(b, buf, mr);
	check(ta > 0, "a CQ with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP: the SEND's receive has "
	      "its time (%lld)", (long long)ta);
	check(tb == 0, "a CQ without it: xhca_rx read no clock for it (%lld)", (long long)tb);
	check(!ibv_destroy_cq(ibv_cq_ex_to_cq(a)) && !ibv_destroy_cq(ibv_cq_ex_to_cq(b)) &&
	      !ibv_dereg_mr(mr), "destroy both CQs");
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
void local_threads(void)
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
void local_gids_srq(void)
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
void local_fork(void)
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
