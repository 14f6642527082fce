/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-verbstest: what every case uses: the device, QPs brought up,
 * posting, completions, the side channel to the other side, QP pairs of
 * this device.
 */
#include "verbstest.h"

void die(const char *what)
{
	printf("not ok - %s: %s\n", what, strerror(errno));
	exit(100);
}

struct ibv_context *ctx;
struct ibv_pd *pd;
struct ibv_cq *cq;

void open_dev(void)
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

struct ibv_qp *new_qp(enum ibv_qp_type type, struct ibv_pd *p, struct ibv_cq *c)
{
	struct ibv_qp_init_attr a = {
		.send_cq = c, .recv_cq = c, .qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 3,
			 .max_inline_data = 64 },
	};

	return ibv_create_qp(p, &a);
}

/* the remote access the next QP brought up allows (its qp_access_flags) */
int qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = (unsigned int)qp_access };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				     IBV_QP_ACCESS_FLAGS);
}

int to_rts(struct ibv_qp *qp, const struct peer *r, uint8_t timeout, uint8_t retry,
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

void me(struct ibv_qp *qp, struct peer *p)
{
	p->qpn = qp->qp_num;
	p->psn = 0x100;
	ibv_query_gid(ctx, 1, GIDX, &p->gid);
}

/* One completion within ms, or status -1. */
struct ibv_wc wait_wc(struct ibv_cq *c, int ms)
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

int post(struct ibv_qp *qp, enum ibv_wr_opcode op, void *buf, uint32_t len,
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

int post_recv(struct ibv_qp *qp, void *buf, uint32_t len, uint32_t lkey, uint64_t id)
{
	struct ibv_sge g = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct ibv_recv_wr w = { .wr_id = id, .sg_list = &g, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &w, &bad);
}

enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &i) ? (enum ibv_qp_state)-1 : a.qp_state;
}

void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

int same(const uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)(seed + i * 7))
			return 0;
	return 1;
}

int sock;

void say(const struct peer *p)
{
	if (write(sock, p, sizeof(*p)) != sizeof(*p))
		die("side channel write");
}

void hear(struct peer *p)
{
	size_t got = 0;

	while (got < sizeof(*p)) {
		ssize_t n = read(sock, (char *)p + got, sizeof(*p) - got);

		if (n <= 0)
			die("side channel read");
		got += (size_t)n;
	}
}

const union ibv_gid mgid = { .raw = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
					       239, 1, 1, 9 } };

struct ibv_qp *ud_qp(struct ibv_cq *c, uint32_t qkey)
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

/* Two RC QPs of this device, each connected to the other (loopback). */
void loop_pair(struct ibv_pd *p, struct ibv_cq *c, struct ibv_qp **a, struct ibv_qp **b)
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
enum ibv_wc_status write_lo(struct ibv_qp *qp, struct ibv_cq *c, struct ibv_mr *src,
			    uint64_t addr, uint32_t rkey, uint8_t v)
{
	memset(src->addr, v, 64);
	if (post(qp, IBV_WR_RDMA_WRITE, src->addr, 64, src->lkey, addr, rkey, v))
		return (enum ibv_wc_status)-2;
	return wait_wc(c, 3000).status;
}

/* One request on qp: its completion (status -2: refused when posted). */
struct ibv_wc post_wait(struct ibv_qp *qp, struct ibv_cq *c, struct ibv_send_wr *w)
{
	struct ibv_send_wr *bad;

	w->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(qp, w, &bad))
		return (struct ibv_wc){ .status = (enum ibv_wc_status)-2 };
	return wait_wc(c, 3000);
}

void unpair(struct ibv_qp *a, struct ibv_qp *b)
{
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
}
