/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-rctest stress N SIZE MTU: N (1-250) rounds of SEND, WRITE, READ of
 * SIZE bytes and FETCH_ADD, posted at once from both sides (run under loss
 * and reordering): every byte right, each ATOMIC executed once.
 */
#include "rctest.h"

/*
 * Each side posts n rounds at once, without waiting: a SEND, a WRITE and a
 * READ of size bytes and a FETCH_ADD of 1 on a counter in the other side's
 * memory. Both sides at the same time, so requests, responses and ACKs of
 * both directions share the link (and its impairment). Every completion in
 * posting order, every byte where it belongs; the counters end at n and the
 * FETCH_ADDs returned 0 ... n-1 in order: each ATOMIC executed once.
 */
struct stress_map {
	size_t size, n;
	__u8 *src, *wdst, *sdst, *rdst;
	__u64 *res, *counter;
};

static void stress_map(struct side *s, size_t n, size_t size, struct stress_map *m)
{
	m->size = size;
	m->n = n;
	m->src = s->buf;			/* my data: sent, written, read by the peer */
	m->res = (__u64 *)(s->buf + ((n * size + 7) & ~(size_t)7)); /* FETCH_ADD results */
	m->wdst = s->buf + s->half;		/* the peer's WRITEs */
	m->sdst = m->wdst + n * size;		/* the peer's SENDs */
	m->rdst = m->sdst + n * size;		/* my READs of the peer's data */
	m->counter = (__u64 *)(s->buf + ((s->len - 64) & ~(size_t)7));
}

static int stress_post(struct side *s, const struct stress_map *m, __u32 seed)
{
	for (size_t i = 0; i < m->n; i++) {
		if (xhca_post_recv(s->qp, 100 + i, m->sdst + i * m->size, (__u32)m->size))
			return -1;
		fill(m->src + i * m->size, m->size, seed + (__u32)i);
		m->res[i] = ~0ull;
	}
	*m->counter = 0;
	return 0;
}

static int stress_send(struct side *s, const struct stress_map *m, const struct stress_map *pm,
		       __u32 rkey, size_t i)
{
	__u64 id = (__u64)i * 4;
	size_t off = i * m->size;
	__u32 n = (__u32)m->size;
	int r;

	r = post(s, XHCA_WR_SEND, id, m->src + off, n, 0, 0, 0, XHCA_SEND_SIGNALED);
	if (!r)
		r = post(s, XHCA_WR_RDMA_WRITE, id + 1, m->src + off, n, (uintptr_t)(pm->wdst + off),
			 rkey, 0, XHCA_SEND_SIGNALED);
	if (!r)
		r = post(s, XHCA_WR_RDMA_READ, id + 2, m->rdst + off, n, (uintptr_t)(pm->src + off),
			 rkey, 0, XHCA_SEND_SIGNALED);
	if (!r) {
		struct xhca_sge g = { .addr = (uintptr_t)&m->res[i], .length = 8 };
		struct xhca_send_wr wr = {
			.wr_id = id + 3, .sg_list = &g, .num_sge = 1, .send_flags = XHCA_SEND_SIGNALED,
			.opcode = XHCA_WR_ATOMIC_FETCH_AND_ADD,
		};

		wr.wr.atomic.remote_addr = (uintptr_t)pm->counter;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
		r = xhca_post_send(s->qp, &wr, NULL);
	}
	return r;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

void scen_stress(struct side *a, struct side *b, size_t n, size_t size, __u32 mtu)
{
	static const __u32 wc_op[4] = { XHCA_WC_SEND, XHCA_WC_RDMA_WRITE, XHCA_WC_RDMA_READ,
					XHCA_WC_FETCH_ADD };
	struct side *sd[2] = { a, b };
	struct stress_map m[2];
	size_t got[2] = { 0, 0 }, rgot[2] = { 0, 0 }, order_bad[2] = { 0, 0 };
	size_t sbad[2] = { 0, 0 }, rbad[2] = { 0, 0 };
	size_t half = 3 * n * size + 8 * n + 4096;
	double t0;

	side_open(a, XHCA_QPT_RC, half);
	side_open(b, XHCA_QPT_RC, half);
	connect_pair(a, b, mtu);
	for (int k = 0; k < 2; k++)
		stress_map(sd[k], n, size, &m[k]);
	for (int k = 0; k < 2; k++)
		if (stress_post(sd[k], &m[k], 5000 * (k + 1)))
			die(sd[k], "post_recv");
	/* interleaved: both directions busy from the start */
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 2; k++)
			if (stress_send(sd[k], &m[k], &m[1 - k], xhca_mr_rkey(sd[1 - k]->mr), i))
				die(sd[k], "post_send");
	t0 = now_s();
	while ((got[0] < 4 * n || got[1] < 4 * n || rgot[0] < n || rgot[1] < n) &&
	       now_s() - t0 < WAIT_MS / 1000.0 * 2) {
		int idle = 1;

		for (int k = 0; k < 2; k++) {
			struct xhca_wc wc[64];
			int c = xhca_poll_cq(sd[k]->scq, wc, 64);

			for (int j = 0; j < c; j++, got[k]++) {
				idle = 0;
				if (wc[j].wr_id != got[k] || wc[j].status != XHCA_WC_SUCCESS ||
				    wc[j].opcode != wc_op[got[k] % 4]) {
					if (!order_bad[k]++)
						fprintf(stderr, "%s: completion %zu: wr_id %llu status %u opcode %u\n",
							sd[k]->ifname, got[k], (unsigned long long)wc[j].wr_id,
							wc[j].status, wc[j].opcode);
				}
			}
			c = xhca_poll_cq(sd[k]->rcq, wc, 64);
			for (int j = 0; j < c; j++, rgot[k]++) {
				idle = 0;
				if (wc[j].wr_id != 100 + rgot[k] || wc[j].status != XHCA_WC_SUCCESS ||
				    wc[j].byte_len != size)
					order_bad[k]++;
			}
		}
		if (idle)
			usleep(200);
	}
	for (int k = 0; k < 2; k++) {
		struct side *s = sd[k], *p = sd[1 - k];
		const struct stress_map *me = &m[k], *pm = &m[1 - k];
		size_t res_bad = 0, wbad = 0;

		check(got[k] == 4 * n && rgot[k] == n && !order_bad[k],
		      "stress %zu x %zu B from %s: %zu of %zu send and %zu of %zu receive completions, "
		      "all successful and in posting order (%zu not)", n, size, s->ifname, got[k],
		      4 * n, rgot[k], n, order_bad[k]);
		for (size_t i = 0; i < n; i++) {
			size_t off = i * size;
			__u32 pseed = 5000 * (2 - k) + (__u32)i;

			sbad[k] += first_bad(me->sdst + off, size, pseed) != size;
			wbad += first_bad(me->wdst + off, size, pseed) != size;
			rbad[k] += first_bad(me->rdst + off, size, pseed) != size;
			res_bad += me->res[i] != i;
		}
		check(!sbad[k] && !wbad && !rbad[k],
		      "stress: every byte on %s: the SENDs and WRITEs from %s, its READs of %s "
		      "(%zu, %zu, %zu messages wrong)", s->ifname, p->ifname, p->ifname, sbad[k], wbad,
		      rbad[k]);
		check(*pm->counter == n && !res_bad,
		      "stress: %s's FETCH_ADDs on %s's counter: it is %llu (%zu), they returned 0..%zu "
		      "in order (%zu did not): each executed once", s->ifname, p->ifname,
		      (unsigned long long)*pm->counter, n, n - 1, res_bad);
	}
}
