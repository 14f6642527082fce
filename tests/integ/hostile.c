/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-hostile: an application that attacks the other sessions of its xhcad
 * with everything xhca hands it, and the victim it attacks. Each mode prints
 * JSON lines; tests/integ/hostmem_iso.sh runs them as two users of the group.
 *
 *   victim IF LEN   a buffer of LEN bytes filled with the secret pattern,
 *                   registered (every access), a UD QP with its rings;
 *                   prints {"ready", "alloc", "rkey"}; stdin: "check"
 *                   prints {"intact", "first_diff"} (the buffer, byte by
 *                   byte), "alloc N" allocates N bytes more, "quit" ends it
 *   search IF IP ALLOC RKEY [plant]
 *                   looks for the secret through every descriptor it holds
 *                   (each mapped as far as it goes), asks xhcad for every
 *                   block of host memory, asks the kernel for every BPF map
 *                   by id and for the pinned xhca_hostmem; then posts work
 *                   requests naming the victim's allocation (ALLOC) and
 *                   region (RKEY, a receive's lkey, a SEND to itself through
 *                   the device's address IP): prints what it got; with plant, the
 *                   secret is put in its own memory first (found: the
 *                   search works)
 *   hog IF LEN      allocations of LEN until one is refused: how many, why
 *   limits IF       CQs, QPs, memory regions, sessions until each is refused
 *   trickle IF SECONDS, noread IF SECONDS
 *                   a control connection with half a request sent, or with
 *                   requests sent and no reply read; after SECONDS prints
 *                   whether xhcad closed it
 *   nopoll IF IP SECONDS
 *                   a UD QP SENDs to itself (through the device's address
 *                   IP) into a CQ of 4 it never polls; after SECONDS
 *                   prints whether xhcad overran the CQ, the QP's state
 *   scribble IF SECONDS SEED
 *                   QPs (UD, RC) with send and receive queues, CQs, an SRQ;
 *                   for SECONDS writes random values at random places of
 *                   every piece of host memory it has mapped (rings, their
 *                   control words, scatter lists, buffers), posting and
 *                   polling between; prints how much it wrote
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <xhca/xhca.h>
#include <xhca/ctl.h>
#include <xhca/pkt.h>

#define SECRET "xhca-secret-of-the-victim:"
#define SECRET_LEN (sizeof(SECRET) - 1)

/* The victim's bytes: SECRET and a counter, over and over. */
static __u8 secret_byte(size_t i)
{
	size_t k = i % (SECRET_LEN + 1);

	return k < SECRET_LEN ? (__u8)SECRET[k] : (__u8)(i / (SECRET_LEN + 1));
}

static int victim(const char *ifname, size_t len)
{
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_qp_init_attr qa = { .type = XHCA_QPT_UD, .qkey = 0x1111, .flowq = -1,
					.rq_depth = 16 };
	struct xhca_pd *pd;
	struct xhca_mr *mr;
	struct xhca_cq *cq;
	uint32_t alloc = 0;
	uint64_t off;
	char line[64];
	__u8 *buf;

	if (!ctx) {
		printf("{\"error\": \"open: %s\"}\n", strerror(errno));
		return 1;
	}
	buf = xhca_alloc(ctx, len);
	pd = buf ? xhca_pd_alloc(ctx) : NULL;
	mr = pd ? xhca_mr_reg(pd, buf, len, XHCA_ACCESS_ALL & ~XHCA_ACCESS_MW_BIND) : NULL;
	cq = mr ? xhca_cq_create(ctx, 64) : NULL;
	qa.recv_cq = qa.send_cq = cq;
	qa.sq_depth = 16;
	qa.pd = pd;
	if (!cq || !xhca_qp_create(ctx, &qa) || xhca_mem_lookup(ctx, buf, len, &alloc, &off, NULL)) {
		printf("{\"error\": \"%s\"}\n", xhca_errmsg(ctx));
		return 1;
	}
	for (size_t i = 0; i < len; i++)
		buf[i] = secret_byte(i);
	printf("{\"ready\": 1, \"alloc\": %u, \"rkey\": %u}\n", alloc, xhca_mr_rkey(mr));
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		long diff = -1;

		if (!strncmp(line, "quit", 4))
			break;
		if (!strncmp(line, "alloc ", 6)) {
			void *more = xhca_alloc(ctx, strtoul(line + 6, NULL, 0));

			printf("{\"alloc\": %d, \"msg\": \"%s\"}\n", more != NULL,
			       more ? "" : xhca_errmsg(ctx));
			continue;
		}
		for (size_t i = 0; i < len && diff < 0; i++)
			if (buf[i] != secret_byte(i))
				diff = (long)i;
		printf("{\"intact\": %s, \"first_diff\": %ld}\n", diff < 0 ? "true" : "false",
		       diff);
		fflush(stdout);
	}
	xhca_close(ctx);
	return 0;
}

/* A QP through INIT and RTR to RTS. */
static int to_rts(struct xhca_qp *qp)
{
	static const __u8 states[] = { XHCA_QPS_INIT, XHCA_QPS_RTR, XHCA_QPS_RTS };

	for (int i = 0; i < 3; i++) {
		struct xhca_qp_attr a = { .mask = XHCA_QPA_STATE, .state = states[i] };

		if (xhca_qp_modify(qp, &a))
			return -1;
	}
	return 0;
}

static int has_secret(const __u8 *p, size_t n)
{
	return memmem(p, n, SECRET, SECRET_LEN) != NULL;
}

/* fd mapped from offset 0 as far as it goes (largest first, then each
 * further page alone): bytes mapped, and whether the secret is there. */
static size_t search_fd(int fd, int *found)
{
	size_t got = 0, len;
	__u8 *m = MAP_FAILED;

	for (len = (size_t)1 << 34; len >= 4096; len /= 2) {
		m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED)
			break;
	}
	if (m != MAP_FAILED) {
		*found |= has_secret(m, len);
		munmap(m, len);
		got = len;
		/* past it, page by page, a while */
		for (off_t o = (off_t)len; o < (off_t)len + (64 << 20); o += 4096) {
			m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, o);
			if (m == MAP_FAILED)
				continue;
			*found |= has_secret(m, 4096);
			munmap(m, 4096);
			got += 4096;
		}
	}
	return got;
}

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

/* A UD SEND to itself whose scatter list names the victim's allocation,
 * written into the send queue raw (libxhca would refuse it): its
 * completion's status. */
static int post_foreign(struct xhca_qp *qp, struct xhca_cq *cq, uint32_t alloc, int depth)
{
	struct xhca_ring_ctl *sq = xhca_qp_sq(qp);
	struct xhca_swqe *w = (struct xhca_swqe *)(sq + 1), e = {
		.wr_id = 77, .opcode = XHCA_WR_SEND, .flags = XHCA_SEND_SIGNALED, .nsge = 1,
		.len = 64, .dest_qpn = xhca_qp_num(qp), .dest_qkey = 0x2222,
	};
	struct xhca_send_wr wr = { .wr_id = 78, .opcode = XHCA_WR_SEND,
				   .wr.ud = { .remote_qpn = xhca_qp_num(qp), .remote_qkey = 0x2222 } };
	struct xhca_wc wc;
	__u32 prod = sq->prod;

	e.sge[0].alloc = alloc;
	e.sge[0].len = 64;
	e.dest_ip[10] = e.dest_ip[11] = 0xff;
	e.dest_ip[12] = 127;
	e.dest_ip[15] = 1;
	memcpy(wr.wr.ud.dest_ip, e.dest_ip, 16);
	w[prod & (depth - 1)] = e;
	__atomic_store_n(&sq->prod, prod + 1, __ATOMIC_RELEASE);
	xhca_post_send(qp, &wr, NULL); /* (an empty SEND: the doorbell rung) */
	for (int i = 0; i < 300; i++) {
		int n = xhca_poll_cq(cq, &wc, 1);

		if (n == 1 && wc.wr_id == 77)
			return wc.status;
		usleep(10000);
	}
	return -1;
}

/* A receive whose piece names the victim's region (vrkey) as its lkey, on a
 * QP of its own, then a SEND to it through the device's address ip: the
 * receive completion's status. */
static int recv_foreign_lkey(struct xhca_ctx *ctx, const char *ip, __u8 *mine, uint32_t vrkey)
{
	struct xhca_cq *cq = xhca_cq_create(ctx, 16);
	struct xhca_qp_init_attr qa = { .type = XHCA_QPT_UD, .qkey = 0x5555, .flowq = -1,
					.rq_depth = 16, .sq_depth = 16, .recv_cq = cq, .send_cq = cq };
	struct xhca_qp *qp = cq ? xhca_qp_create(ctx, &qa) : NULL;
	struct xhca_sge rs = { .addr = (uintptr_t)mine + 8192, .length = 256, .lkey = vrkey };
	struct xhca_sge ss = { .addr = (uintptr_t)mine + 16384, .length = 64 };
	struct xhca_send_wr wr = { .wr_id = 98, .opcode = XHCA_WR_SEND, .sg_list = &ss,
				   .num_sge = 1 };
	struct xhca_wc wc;

	if (!qp || to_rts(qp) || xhca_post_recv_sg(qp, 99, &rs, 1, 0))
		return -1;
	wr.wr.ud.remote_qpn = xhca_qp_num(qp);
	wr.wr.ud.remote_qkey = 0x5555;
	if (xhca_ip_parse(ip, wr.wr.ud.dest_ip) < 0 || xhca_post_send(qp, &wr, NULL))
		return -1;
	for (int i = 0; i < 300; i++) {
		if (xhca_poll_cq(cq, &wc, 1) == 1 && wc.wr_id == 99)
			return wc.status;
		usleep(10000);
	}
	return -1;
}

/* What the search found. */
struct found {
	unsigned int fds, granted, refused, by_id;
	int found, pinned_errno;
	size_t mapped;
};

/* 1. every descriptor it holds */
static void search_fds(struct found *f)
{
	DIR *dir = opendir("/proc/self/fd");

	for (struct dirent *e; dir && (e = readdir(dir));) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd == dirfd(dir))
			continue;
		f->fds++;
		f->mapped += search_fd(fd, &f->found);
	}
	if (dir)
		closedir(dir);
}

/* 2. every block of host memory xhcad might give, and many past the end */
static void search_blocks(struct xhca_ctx *ctx, struct found *f)
{
	for (__u32 b = 0; b < (1u << 12); b++) {
		struct xhca_block_info bi;
		int fd = -1;

		if (xhca_session_call(ctx, XHCA_CTL_BLOCK, &b, sizeof(b), -1, &bi, sizeof(bi),
				      &fd)) {
			f->refused++;
			continue;
		}
		f->granted++;
		f->mapped += search_fd(fd, &f->found);
		close(fd);
	}
}

/* 3. the kernel: every BPF map by id, the pinned host memory map */
static void search_kernel(const char *ifname, struct found *f)
{
	char path[256];
	union bpf_attr a = { .pathname = (__u64)(unsigned long)path };
	long fd;

	for (__u32 id = 1; id < 8192; id++) {
		union bpf_attr b = { .map_id = id };

		fd = sys_bpf(BPF_MAP_GET_FD_BY_ID, &b);
		if (fd >= 0) {
			f->by_id++;
			f->mapped += search_fd((int)fd, &f->found);
			close((int)fd);
		}
	}
	snprintf(path, sizeof(path), "/sys/fs/bpf/xhca/%s/xhca_hostmem", ifname);
	fd = sys_bpf(BPF_OBJ_GET, &a);
	f->pinned_errno = fd < 0 ? errno : 0;
	if (fd >= 0)
		close((int)fd);
}

static int search(const char *ifname, const char *ip, uint32_t valloc, uint32_t vrkey, int plant)
{
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_qp_init_attr qa = { .type = XHCA_QPT_UD, .qkey = 0x2222, .flowq = -1,
					.rq_depth = 16, .sq_depth = 16 };
	struct found f = {};
	struct xhca_cq *cq;
	struct xhca_qp *qp;
	__u8 *mine;
	int st;

	if (!ctx) {
		printf("{\"error\": \"open: %s\"}\n", strerror(errno));
		return 1;
	}
	/* memory of its own: a block of its own */
	mine = xhca_alloc(ctx, 1 << 16);
	cq = mine ? xhca_cq_create(ctx, 64) : NULL;
	qa.recv_cq = qa.send_cq = cq;
	qp = cq ? xhca_qp_create(ctx, &qa) : NULL;
	if (!qp || to_rts(qp)) {
		printf("{\"error\": \"%s\"}\n", xhca_errmsg(ctx));
		return 1;
	}
	/* (the test's own check that a secret in reach is found) */
	if (plant)
		memcpy(mine + 100, SECRET, SECRET_LEN);
	search_fds(&f);
	search_blocks(ctx, &f);
	search_kernel(ifname, &f);
	/* 4. work requests naming the victim's memory: its allocation in a
	 * send's scatter list, its region as a receive's lkey */
	st = post_foreign(qp, cq, valloc, 16);
	printf("{\"fds\": %u, \"mapped\": %zu, \"found\": %d, \"blocks_granted\": %u, "
	       "\"blocks_refused\": %u, \"by_id\": %u, \"pinned_errno\": %d, "
	       "\"foreign_send\": %d, \"foreign_lkey\": %d}\n",
	       f.fds, f.mapped, f.found, f.granted, f.refused, f.by_id, f.pinned_errno, st,
	       recv_foreign_lkey(ctx, ip, mine, vrkey));
	xhca_close(ctx);
	return 0;
}

static unsigned long long rng;

static __u32 rnd(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (__u32)(rng >> 33);
}

/* The pieces of host memory this process has mapped. */
static int own_maps(__u8 **lo, size_t *len, int max)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int n = 0;

	while (f && n < max && fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (!strstr(line, "bpf-map") || sscanf(line, "%lx-%lx", &a, &b) != 2 ||
		    !strstr(line, "rw"))
			continue;
		lo[n] = (__u8 *)a;
		len[n++] = b - a;
	}
	if (f)
		fclose(f);
	return n;
}

static int scribble(const char *ifname, double seconds, unsigned long long seed)
{
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_qp_init_attr ud = { .type = XHCA_QPT_UD, .qkey = 0x3333, .flowq = -1,
					.rq_depth = 64, .sq_depth = 64, .rq_sge = 4 };
	struct xhca_qp_init_attr rc = { .type = XHCA_QPT_RC, .flowq = -1, .rq_depth = 64,
					.sq_depth = 64 };
	struct xhca_cq *cq1, *cq2;
	struct xhca_srq *srq;
	struct xhca_qp *q1, *q2;
	unsigned long long writes = 0, posts = 0, polls = 0;
	struct timespec t0, t;
	__u8 *buf, *lo[64];
	size_t len[64];
	int n;

	rng = seed;
	if (!ctx) {
		printf("{\"error\": \"open: %s\"}\n", strerror(errno));
		return 1;
	}
	buf = xhca_alloc(ctx, 1 << 16);
	cq1 = xhca_cq_create(ctx, 64);
	cq2 = xhca_cq_create(ctx, 64);
	srq = xhca_srq_create(ctx, 64, 2);
	ud.recv_cq = ud.send_cq = cq1;
	rc.recv_cq = cq2;
	rc.send_cq = cq1;
	rc.srq = srq;
	q1 = buf && cq1 && cq2 && srq ? xhca_qp_create(ctx, &ud) : NULL;
	q2 = q1 ? xhca_qp_create(ctx, &rc) : NULL;
	if (!q2 || to_rts(q1)) {
		printf("{\"error\": \"%s\"}\n", xhca_errmsg(ctx));
		return 1;
	}
	n = own_maps(lo, len, 64);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 256; i++) {
			int k = (int)(rnd() % (__u32)n);
			size_t at = (rnd() % (__u32)(len[k] / 4)) * 4;

			*(__u32 *)(lo[k] + at) = rnd() % 4 ? rnd() : rnd() % 64;
			writes++;
		}
		{
			struct xhca_sge sg = { .addr = (uintptr_t)buf, .length = 32 };
			struct xhca_send_wr wr = { .wr_id = writes, .opcode = XHCA_WR_SEND,
						   .sg_list = &sg, .num_sge = 1,
						   .wr.ud = { .remote_qpn = xhca_qp_num(q1),
							      .remote_qkey = 0x3333 } };
			struct xhca_wc wc[8];

			wr.wr.ud.dest_ip[10] = wr.wr.ud.dest_ip[11] = 0xff;
			wr.wr.ud.dest_ip[12] = 127;
			wr.wr.ud.dest_ip[15] = 1;
			posts += !xhca_post_send(q1, &wr, NULL);
			posts += !xhca_post_recv(q1, writes, buf + 4096, 256);
			polls += (unsigned)(xhca_poll_cq(cq1, wc, 8) > 0);
			polls += (unsigned)(xhca_poll_cq(cq2, wc, 8) > 0);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	{
		struct xhca_qp_attr a1 = {}, a2 = {};

		xhca_qp_query(q1, &a1);
		xhca_qp_query(q2, &a2);
		printf("{\"maps\": %d, \"writes\": %llu, \"posts\": %llu, \"polls\": %llu, "
		       "\"states\": [%u, %u]}\n", n, writes, posts, polls, a1.state, a2.state);
	}
	fflush(stdout);
	/* (xhca_close would read the rings it scribbled over: the process
	 * ends, xhcad frees the session) */
	_exit(0);
}

/* Allocations of len until xhcad refuses one: how many, and why. */
static int hog(const char *ifname, size_t len)
{
	struct xhca_ctx *ctx = xhca_open(ifname);
	unsigned int n = 0;
	int err;

	if (!ctx) {
		printf("{\"error\": \"open: %s\"}\n", strerror(errno));
		return 1;
	}
	while (n < 100000 && xhca_alloc(ctx, len))
		n++;
	err = errno;
	printf("{\"allocs\": %u, \"errno\": %d, \"msg\": \"%s\"}\n", n, err,
	       xhca_errmsg(ctx));
	xhca_close(ctx);
	return 0;
}

/* A UD QP whose receive CQ (4 entries) it never polls, SENDs to itself
 * (through the device's address ip) filling it and the flow queue behind
 * it; after seconds, whether xhcad overran the CQ and the QP's state. */
static int nopoll(const char *ifname, const char *ip, double seconds)
{
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_qp_init_attr qa = { .type = XHCA_QPT_UD, .qkey = 0x4444, .flowq = -1,
					.rq_depth = 64, .sq_depth = 64 };
	struct xhca_cq *rcq, *scq;
	struct xhca_qp_attr at = {};
	unsigned int sent = 0;
	struct xhca_qp *qp;
	__u8 *buf;

	if (!ctx) {
		printf("{\"error\": \"open: %s\"}\n", strerror(errno));
		return 1;
	}
	buf = xhca_alloc(ctx, 1 << 16);
	rcq = xhca_cq_create(ctx, 4);
	scq = xhca_cq_create(ctx, 64);
	qa.recv_cq = rcq;
	qa.send_cq = scq;
	qp = buf && rcq && scq ? xhca_qp_create(ctx, &qa) : NULL;
	if (!qp || to_rts(qp)) {
		printf("{\"error\": \"%s\"}\n", xhca_errmsg(ctx));
		return 1;
	}
	for (int i = 0; i < 64; i++)
		xhca_post_recv(qp, (uint64_t)i, buf + i * 1024, 1024);
	for (int i = 0; i < 32; i++) {
		struct xhca_sge sg = { .addr = (uintptr_t)buf + 65536 - 64, .length = 64 };
		struct xhca_send_wr wr = { .wr_id = (uint64_t)i, .opcode = XHCA_WR_SEND,
					   .sg_list = &sg, .num_sge = 1,
					   .wr.ud = { .remote_qpn = xhca_qp_num(qp),
						      .remote_qkey = 0x4444 } };
		struct xhca_wc wc[8];

		if (xhca_ip_parse(ip, wr.wr.ud.dest_ip) < 0)
			return 2;
		sent += !xhca_post_send(qp, &wr, NULL);
		xhca_poll_cq(scq, wc, 8);
	}
	usleep((useconds_t)(seconds * 1e6));
	xhca_qp_query(qp, &at);
	printf("{\"sent\": %u, \"overrun\": %d, \"state\": %u, \"stalls\": %llu}\n", sent,
	       xhca_cq_overrun(rcq), at.state, (unsigned long long)xhca_cq_stalls(rcq));
	xhca_close(ctx);
	return 0;
}

/* A control connection that stalls xhcad if it can: half a request's
 * header, then nothing (trickle); or requests sent without a reply read
 * (noread). Waits seconds, then says whether xhcad closed it. */
static int stall(const char *ifname, int noread, double seconds)
{
	struct xhca_ctl_hdr h = { .magic = XHCA_CTL_MAGIC, .op = XHCA_CTL_STATUS,
				  .version = XHCA_CTL_VERSION };
	int fd = xhca_ctl_connect(ifname), sent = 0;
	char c;

	if (fd < 0) {
		printf("{\"error\": \"connect: %s\"}\n", strerror(-fd));
		return 1;
	}
	if (noread) {
		int one = 1 << 12;

		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one));
		fcntl(fd, F_SETFL, O_NONBLOCK);
		while (sent < 100000 && send(fd, &h, sizeof(h), MSG_NOSIGNAL) == sizeof(h))
			sent++;
	} else {
		sent = (int)send(fd, &h, sizeof(h) / 2, MSG_NOSIGNAL);
	}
	usleep((useconds_t)(seconds * 1e6));
	/* closed by xhcad: the replies it sent, then end of file (or a reset) */
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (read(fd, &c, 1) > 0)
		;
	printf("{\"sent\": %d, \"closed\": %d}\n", sent,
	       recv(fd, &c, 1, MSG_DONTWAIT) == 0 || errno == ECONNRESET);
	close(fd);
	return 0;
}

/* One "what": how many it made before the refusal, its errno and message. */
static void made(const char *what, unsigned int n, int err, const char *msg, int last)
{
	printf("\"%s\": {\"n\": %u, \"errno\": %d, \"msg\": \"%s\"}%s", what, n, err, msg,
	       last ? "}\n" : ", ");
}

/* Each per-session limit, reached: CQs, QPs, memory regions, then control
 * connections (sessions) of this user. */
static int limits(const char *ifname)
{
	struct xhca_ctx *ctx = xhca_open(ifname), *more[300];
	struct xhca_qp_init_attr qa = { .type = XHCA_QPT_UD, .qkey = 1, .flowq = -1,
					.rq_depth = 2 };
	unsigned int n;
	struct xhca_pd *pd;
	struct xhca_cq *cq;
	__u8 *buf;

	if (!ctx) {
		printf("{\"error\": \"open: %s\"}\n", strerror(errno));
		return 1;
	}
	printf("{");
	{
		/* a queue's ring: its session may not free it under xhcad */
		struct xhca_srq_attr sa = { .depth = 16 };
		int rc = xhca_session_call(ctx, XHCA_CTL_SRQ_CREATE, &sa, sizeof(sa), -1, &sa,
					   sizeof(sa), NULL);

		if (!rc)
			rc = xhca_session_call(ctx, XHCA_CTL_FREE, &sa.alloc, sizeof(sa.alloc), -1,
					       NULL, 0, NULL);
		printf("\"ring_free\": {\"rc\": %d, \"msg\": \"%s\"}, ", rc, xhca_errmsg(ctx));
	}
	cq = xhca_cq_create(ctx, 4);
	for (n = cq != NULL; n < 100000 && xhca_cq_create(ctx, 4); n++)
		;
	made("cqs", n, errno, xhca_errmsg(ctx), 0);
	qa.recv_cq = cq;
	for (n = 0; n < 100000 && xhca_qp_create(ctx, &qa); n++)
		;
	made("qps", n, errno, xhca_errmsg(ctx), 0);
	buf = xhca_alloc(ctx, 4096);
	pd = xhca_pd_alloc(ctx);
	for (n = 0; buf && pd && n < 100000 && xhca_mr_reg(pd, buf, 4096, XHCA_ACCESS_REMOTE_READ);
	     n++)
		;
	made("mrs", n, errno, xhca_errmsg(ctx), 0);
	{
		/* a memory window counts with the regions */
		uint32_t rkey;
		int rc = pd ? xhca_mw_alloc(pd, 1, &rkey) : -ENOENT;

		made("mw", (unsigned)(rc == 0), -rc, xhca_errmsg(ctx), 0);
	}
	for (n = 0; n < 300 && (more[n] = xhca_open(ifname)); n++)
		;
	made("sessions", n + 1, errno, strerror(errno), 1);
	while (n--)
		xhca_close(more[n]);
	xhca_close(ctx);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "victim"))
		return victim(argv[2], strtoul(argv[3], NULL, 0));
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "search"))
		return search(argv[2], argv[3], (uint32_t)strtoul(argv[4], NULL, 0),
			      (uint32_t)strtoul(argv[5], NULL, 0), argc == 7);
	if (argc == 4 && (!strcmp(argv[1], "trickle") || !strcmp(argv[1], "noread")))
		return stall(argv[2], !strcmp(argv[1], "noread"), atof(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "nopoll"))
		return nopoll(argv[2], argv[3], atof(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "limits"))
		return limits(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "hog"))
		return hog(argv[2], strtoul(argv[3], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "scribble"))
		return scribble(argv[2], atof(argv[3]), strtoull(argv[4], NULL, 0));
	fprintf(stderr, "usage: xhca-hostile victim IF LEN | search IF ALLOC RKEY |\n"
			"       scribble IF SECONDS SEED\n");
	return 2;
}
