/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-recv: an example application of libxhca. It opens a session on an
 * interface, creates a CQ and a QP, brings the QP to RTR, posts receive
 * buffers in host memory and prints every completion, reposting the buffer.
 *
 * Exit codes: 0 done, 1 failed, 2 bad usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xhca/json.h>
#include <xhca/pkt.h>
#include <xhca/xhca.h>
#include "opt.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct opts {
	const char *ifname;
	struct xhca_qp_init_attr qa;
	int have_type;
	const char *local_ip, *remote_ip;
	uint32_t epsn, mtu_shift;
	unsigned int bufs, buf_size, cq_depth;
	uint64_t count, stop_after;
	double timeout, duration;
	int quiet, json, check_psn;
	uint32_t dump;
	uint8_t mgid[8][16];	/* --mcast: groups to join */
	int nmgid;
	unsigned int cq_flags;	/* --proxy, --proxy-cq */
	uint64_t mr_len;	/* --mr: a region for RDMA WRITE, READ and ATOMIC */
	int latency;		/* --latency: percentiles of rx_ns to poll */
};

#define LAT_MAX (1u << 22)
/* the options' defaults (parse's, and the usage's) */
#define BUFS_DEFAULT 64
#define BUF_SIZE_DEFAULT 4096
#define TIMEOUT_DEFAULT 10

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* ---- options: one table, which also writes the usage text ---------------- */

/* The options' setters (struct xhca_opt's set: ctx is struct opts; v a
 * number already checked against the option's range). */
#define O ((struct opts *)ctx)

static int pow2(unsigned long long v)
{
	return v && !(v & (v - 1));
}

static int secs(const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return !*s || *end || !(*v > 0) ? -EINVAL : 0;
}

XHCA_OPT_SETTER(set_ifname) { O->ifname = arg; return 0; }

XHCA_OPT_SETTER(set_type)
{
	if (!strcmp(arg, "rc"))
		O->qa.type = XHCA_QPT_RC;
	else if (!strcmp(arg, "uc"))
		O->qa.type = XHCA_QPT_UC;
	else if (!strcmp(arg, "ud"))
		O->qa.type = XHCA_QPT_UD;
	else
		return -EINVAL;
	O->have_type = 1;
	return 0;
}

XHCA_OPT_SETTER(set_qpn) { O->qa.qpn = (uint32_t)v; return 0; }
XHCA_OPT_SETTER(set_qkey) { O->qa.qkey = (uint32_t)v; return 0; }
XHCA_OPT_SETTER(set_pkey) { O->qa.pkey = (uint16_t)v; return 0; }
XHCA_OPT_SETTER(set_flowq) { O->qa.flowq = (int)v; return 0; }
XHCA_OPT_SETTER(set_local_ip) { O->local_ip = arg; return 0; }
XHCA_OPT_SETTER(set_remote_ip) { O->remote_ip = arg; return 0; }
XHCA_OPT_SETTER(set_epsn) { O->epsn = (uint32_t)v; return 0; }

XHCA_OPT_SETTER(set_mtu)
{
	O->mtu_shift = (uint32_t)__builtin_ctzll(v);
	return pow2(v) ? 0 : -EINVAL;
}

XHCA_OPT_SETTER(set_bufs) { O->bufs = (unsigned int)v; return pow2(v) ? 0 : -EINVAL; }
XHCA_OPT_SETTER(set_buf_size) { O->buf_size = (unsigned int)v; return 0; }

XHCA_OPT_SETTER(set_cq_depth)
{
	O->cq_depth = (unsigned int)v; /* 0: from --bufs (parse) */
	return !v || pow2(v) ? 0 : -EINVAL;
}

XHCA_OPT_SETTER(set_count) { O->count = v; return 0; }
XHCA_OPT_SETTER(set_timeout) { return secs(arg, &O->timeout); }
XHCA_OPT_SETTER(set_duration) { return secs(arg, &O->duration); }
XHCA_OPT_SETTER(set_stop_after) { O->stop_after = v; return 0; }
XHCA_OPT_SETTER(set_check_psn) { O->check_psn = 1; return 0; }
XHCA_OPT_SETTER(set_dump) { O->dump = (uint32_t)v; return 0; }

XHCA_OPT_SETTER(set_mcast)
{
	if (O->nmgid == 8 || xhca_ip_parse(arg, O->mgid[O->nmgid]) < 0)
		return -EINVAL;
	O->nmgid++;
	return 0;
}

XHCA_OPT_SETTER(set_block_lb)
{
	O->qa.create_flags |= XHCA_QP_CREATE_BLOCK_SELF_MCAST_LB;
	return 0;
}

XHCA_OPT_SETTER(set_proxy)
{
	O->cq_flags |= XHCA_CQF_PROXY;
	O->qa.create_flags |= XHCA_QP_CREATE_PROXY;
	return 0;
}

XHCA_OPT_SETTER(set_proxy_cq) { O->cq_flags |= XHCA_CQF_PROXY; return 0; }
XHCA_OPT_SETTER(set_proxy_qp) { O->qa.create_flags |= XHCA_QP_CREATE_PROXY; return 0; }
XHCA_OPT_SETTER(set_mr) { O->mr_len = v; return 0; }
XHCA_OPT_SETTER(set_latency) { O->latency = 1; return 0; }
XHCA_OPT_SETTER(set_quiet) { O->quiet = 1; return 0; }
XHCA_OPT_SETTER(set_json) { O->json = 1; return 0; }
#undef O

#define OPT XHCA_OPT_LONG
#define NUM XHCA_OPT_RANGE
#define STR(x) #x
#define XSTR(x) STR(x)
static const struct xhca_opt options[] = {
	{ .name = "interface", .key = 'i', .arg = "IFNAME", .help = "the interface xhcad serves",
	  .set = set_ifname },
	OPT(0, "type", "rc|uc|ud", "the QP's type", set_type, .hint = "use rc, uc or ud"),
	OPT(1, "qpn", "N", "QPN to ask for (0, the default:\nxhcad picks)", set_qpn,
	  NUM(0, 0xfffffe, 0)),
	OPT(2, "qkey", "K", "UD Q_Key (default 0)", set_qkey, NUM(0, 0xffffffff, 0)),
	OPT(3, "pkey", "P", "P_Key (0, the default: 0xffff)", set_pkey, NUM(0, 0xffff, 0)),
	OPT(4, "flowq", "N", "flow queue (default: a hash of the QPN)", set_flowq,
	  NUM(0, XHCA_FLOWQ_MAX - 1, 0)),
	OPT(5, "local-ip", "A", "RC/UC: this side's address (required for rc and uc)",
	  set_local_ip),
	OPT(6, "remote-ip", "A", "RC/UC: the peer's address, of the same family\n"
	  "(required for rc and uc)", set_remote_ip),
	OPT(7, "epsn", "N", "first expected PSN (default 0)", set_epsn, NUM(0, 0xffffff, 0)),
	OPT(8, "mtu", "N", "path MTU: 256, 512, 1024, 2048 or 4096 (default:\n"
	  "xhcad's)", set_mtu, NUM(256, 4096, 0), .hint = "use 256, 512, 1024, 2048 or 4096"),
	OPT(9, "bufs", "N", "receive buffers posted, a power of 2 (also the RQ\ndepth)",
	  set_bufs, NUM(1, XHCA_RING_DEPTH_MAX, BUFS_DEFAULT),
	  .hint = "give a power of 2 up to " XSTR(XHCA_RING_DEPTH_MAX)),
	OPT(10, "buf-size", "B", "bytes each", set_buf_size, NUM(1, 1u << 30, BUF_SIZE_DEFAULT)),
	OPT(11, "cq-depth", "N", "completion queue depth, a power of 2 (0, the default:\n"
	  "2 x bufs)", set_cq_depth, NUM(0, XHCA_RING_DEPTH_MAX, 0),
	  .hint = "give a power of 2 up to " XSTR(XHCA_RING_DEPTH_MAX) " (0: 2 x bufs)"),
	OPT(12, "count", "N", "exit after N completions (0, the default: no limit)", set_count,
	  XHCA_OPT_RANGE_UNBOUNDED(0, UINT64_MAX >> 1, 0)),
	OPT(13, "timeout", "S", "exit after S seconds without a completion\n"
	  "(default " XSTR(TIMEOUT_DEFAULT) ")", set_timeout,
	  .hint = "give a positive number of seconds"),
	OPT(14, "duration", "S", "exit after S seconds in all", set_duration,
	  .hint = "give a positive number of seconds"),
	OPT(15, "stop-after", "N", "stop polling after N completions and wait (a stalled\n"
	  "application), until --duration or a signal", set_stop_after,
	  XHCA_OPT_RANGE_UNBOUNDED(0, UINT64_MAX >> 1, 0)),
	OPT(16, "check-psn", NULL, "the payload starts with the PSN (xhca-gen --stamp):\n"
	  "count messages that arrive out of order", set_check_psn),
	OPT(17, "dump", "N", "the first N bytes of each message, in hex, in its\nJSON line",
	  set_dump, NUM(0, 65536, 0)),
	OPT(18, "mcast", "MGID", "join a multicast group (UD; IPv4 or IPv6 multicast\n"
	  "address; created if there is none; up to 8)", set_mcast,
	  .hint = "give up to 8 multicast addresses"),
	OPT(19, "block-self-mcast-loopback", NULL, "no copy of multicast packets it sent itself",
	  set_block_lb),
	OPT(20, "proxy", NULL, "a proxy QP on a proxy CQ (US 9,069,633): add filters\n"
	  "with xhca filter add; every completion, RDMA WRITEs\n"
	  "and the proxy's (opcode 257, result) too, comes in\nmessage order", set_proxy),
	OPT(21, "proxy-cq", NULL, "a proxy CQ, the QP not (yet) a proxy QP (xhca qp\n"
	  "modify QPN --proxy on makes it one)", set_proxy_cq),
	OPT(22, "proxy-qp", NULL, "a proxy QP on an ordinary CQ (xhcad refuses it)",
	  set_proxy_qp),
	OPT(23, "mr", "LEN", "register LEN bytes (every remote access) in the QP's\n"
	  "PD; the ready line gives its rkey and\niova", set_mr, NUM(1, 1u << 30, 0)),
	OPT(24, "latency", NULL, "the summary adds the median and 99th percentile of\n"
	  "the time from xhca_rx taking a message's last packet\n"
	  "to this application polling its completion", set_latency),
	{ .name = "quiet", .key = 'q', .help = "the summary only", .set = set_quiet },
	{ .name = "json", .key = 'j', .help = "JSON lines", .set = set_json },
	{ .name = "help", .key = 'h', .help = "this text" },
	{ 0 },
};
#undef XSTR
#undef STR
#undef NUM
#undef OPT

static void usage(FILE *f)
{
	fprintf(f, "Usage: xhca-recv -i IFNAME --type rc|uc|ud [options]\n"
		   "Receives SENDs on a new QP through xhcad and prints each completion.\n");
	xhca_opt_usage(f, options, 25);
	fprintf(f, "Prints 'ready qpn 0xNNNNNN' (or a JSON ready line) once the QP is in RTR.\n");
}

/* What the options must say together; the CQ's depth from the buffers'. */
static int parse_check(struct opts *o)
{
	if (!o->ifname || !o->have_type) {
		fprintf(stderr, "xhca-recv: give -i IFNAME and --type rc|uc|ud\n");
		return -EINVAL;
	}
	if (o->qa.type != XHCA_QPT_UD && (!o->local_ip || !o->remote_ip)) {
		fprintf(stderr, "xhca-recv: rc and uc need --local-ip and --remote-ip\n");
		return -EINVAL;
	}
	if (!o->cq_depth)
		o->cq_depth = o->bufs * 2 > XHCA_RING_DEPTH_MAX ? XHCA_RING_DEPTH_MAX : o->bufs * 2;
	return 0;
}

/* The options into o. 0; XHCA_OPT_HELP (the usage is printed); else bad
 * usage (one line said why). */
static int parse(int argc, char **argv, struct opts *o)
{
	int err;

	memset(o, 0, sizeof(*o));
	o->qa.flowq = -1;
	o->bufs = BUFS_DEFAULT;
	o->buf_size = BUF_SIZE_DEFAULT;
	o->timeout = TIMEOUT_DEFAULT;
	err = xhca_opt_parse_all("xhca-recv", options, argc, argv, o);
	if (err == XHCA_OPT_HELP)
		usage(stdout);
	return err ?: parse_check(o);
}

/* INIT, then RTR with the addresses and the first ePSN. */
static int bring_up(struct xhca_qp *qp, const struct opts *o)
{
	struct xhca_qp_attr a = { .mask = XHCA_QPA_STATE, .state = XHCA_QPS_INIT };
	int err;

	err = xhca_qp_modify(qp, &a);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.mask = XHCA_QPA_STATE | XHCA_QPA_EPSN;
	a.state = XHCA_QPS_RTR;
	a.epsn = o->epsn;
	if (o->mtu_shift) {
		a.mask |= XHCA_QPA_MTU;
		a.mtu_shift = (__u8)o->mtu_shift;
	}
	if (o->qa.type != XHCA_QPT_UD) {
		int fl = xhca_ip_parse(o->local_ip, a.local_ip), fr = xhca_ip_parse(o->remote_ip,
										     a.remote_ip);

		if (fl < 0 || fr < 0 || fl != fr) {
			fprintf(stderr, "xhca-recv: --local-ip and --remote-ip must be addresses of one "
				"family\n");
			return -EINVAL;
		}
		a.mask |= XHCA_QPA_LOCAL_IP | XHCA_QPA_REMOTE_IP;
		if (fl == 6)
			a.flags |= XHCA_QPF_IPV6;
	}
	return xhca_qp_modify(qp, &a);
}

/* n bytes as hex into out (2n + 1 bytes). */
static void hex_of(const uint8_t *p, uint32_t n, char *out)
{
	static const char hx[] = "0123456789abcdef";

	for (uint32_t i = 0; i < n; i++) {
		out[2 * i] = hx[p[i] >> 4];
		out[2 * i + 1] = hx[p[i] & 15];
	}
	out[2 * n] = '\0';
}

/* The receiver: its session, queues and buffers, and what it counted. */
struct rx {
	struct opts o;
	struct xhca_ctx *ctx;
	struct xhca_cq *cq;
	struct xhca_qp *qp;
	uint8_t *bufs, *mrbuf;
	struct xhca_mr *mr;
	uint64_t got, bytes, errors, ooo;
	uint32_t last_psn, nlat;
	int have_psn;
	uint64_t *lat;
	double tlast, tfirst;
};

/* The session, buffers, an optional MR, the CQ and the QP, brought up with
 * every buffer posted. 0, or -1 with the message printed. */
static int rx_setup(struct rx *r)
{
	struct opts *o = &r->o;
	int err;

	r->ctx = xhca_open(o->ifname);
	if (!r->ctx) {
		fprintf(stderr, "xhca-recv: %s\n", xhca_errmsg(NULL));
		return -1;
	}
	r->bufs = xhca_alloc(r->ctx, (size_t)o->bufs * o->buf_size);
	if (r->bufs && o->mr_len) {
		struct xhca_pd *pd = xhca_pd_alloc(r->ctx);

		r->mrbuf = pd ? xhca_alloc_ex(r->ctx, o->mr_len, XHCA_ALLOC_CONTIG) : NULL;
		r->mr = r->mrbuf ? xhca_mr_reg(pd, r->mrbuf, o->mr_len, XHCA_ACCESS_ALL) : NULL;
		if (!r->mr) {
			fprintf(stderr, "xhca-recv: --mr: %s\n", xhca_errmsg(r->ctx));
			return -1;
		}
		o->qa.pd = pd;
	}
	r->cq = r->bufs ? xhca_cq_create_ex(r->ctx, o->cq_depth, o->cq_flags) : NULL;
	o->qa.recv_cq = r->cq;
	o->qa.rq_depth = o->bufs;
	r->qp = r->cq ? xhca_qp_create(r->ctx, &o->qa) : NULL;
	err = r->qp ? bring_up(r->qp, o) : -1;
	for (int i = 0; !err && i < o->nmgid; i++)
		err = xhca_mcast_attach(r->qp, o->mgid[i]);
	if (err) {
		fprintf(stderr, "xhca-recv: %s\n", xhca_errmsg(r->ctx));
		return -1;
	}
	for (unsigned int i = 0; i < o->bufs; i++) {
		err = xhca_post_recv(r->qp, i, r->bufs + (size_t)i * o->buf_size, o->buf_size);
		if (err) {
			fprintf(stderr, "xhca-recv: post buffer %u: %s\n", i, strerror(-err));
			return -1;
		}
	}
	if (o->latency && !(r->lat = malloc(LAT_MAX * sizeof(*r->lat)))) {
		fprintf(stderr, "xhca-recv: --latency: out of memory\n");
		return -1;
	}
	return 0;
}

static void rx_ready(const struct rx *r)
{
	uint32_t qpn = xhca_qp_num(r->qp);

	if (r->o.json) {
		jw_open(NULL, '{');
		jw_bool("ready", 1);
		jw_u64("qpn", qpn);
		if (r->mr) {
			jw_u64("rkey", xhca_mr_rkey(r->mr));
			jw_u64("iova", (uint64_t)(uintptr_t)r->mrbuf);
		}
		jw_close('}');
	}
	else if (r->mr)
		printf("ready qpn 0x%06x rkey 0x%08x iova 0x%" PRIx64 "\n", qpn, xhca_mr_rkey(r->mr),
		       (uint64_t)(uintptr_t)r->mrbuf);
	else
		printf("ready qpn 0x%06x\n", qpn);
}

/* One completion, as a line of text or JSON (data: its message, dlen bytes,
 * or NULL). */
static void wc_print(const struct opts *o, const struct xhca_wc *wc, const uint8_t *data,
		     uint32_t dlen)
{
	if (!o->json) {
		printf("wr %" PRIu64 " status %u opcode %u bytes %u qp 0x%06x src_qp 0x%06x flags "
		       "0x%x", (uint64_t)wc->wr_id, wc->status, wc->opcode, wc->byte_len, wc->qp_num,
		       wc->src_qp, wc->wc_flags);
		if (wc->wc_flags & XHCA_WC_WITH_IMM)
			printf(" imm 0x%08x", __builtin_bswap32(wc->imm_data));
		if (wc->wc_flags & XHCA_WC_WITH_INV)
			printf(" inv_rkey 0x%08x", wc->imm_data);
		if (wc->opcode == XHCA_WC_PROXY)
			printf(" result %u", wc->imm_data);
		putchar('\n');
		return;
	}
	jw_open(NULL, '{');
	jw_u64("wr_id", wc->wr_id);
	jw_u64("status", wc->status);
	jw_u64("opcode", wc->opcode);
	jw_u64("byte_len", wc->byte_len);
	jw_u64("qp_num", wc->qp_num);
	jw_u64("src_qp", wc->src_qp);
	jw_u64("flags", wc->wc_flags);
	jw_u64("vendor_err", wc->vendor_err);
	if (wc->wc_flags & XHCA_WC_WITH_IMM)
		jw_u64("imm", __builtin_bswap32(wc->imm_data));
	if (wc->wc_flags & XHCA_WC_WITH_INV)
		jw_u64("inv_rkey", wc->imm_data);
	if (wc->opcode == XHCA_WC_PROXY)
		jw_u64("result", wc->imm_data);
	jw_u64("rx_ns", wc->rx_ns);
	if (o->dump && data) {
		uint32_t n = dlen < o->dump ? dlen : o->dump;
		char *hex = malloc(2 * (size_t)n + 1);

		if (hex) {
			hex_of(data, n, hex);
			jw_str("data", hex);
			free(hex);
		}
	}
	jw_close('}');
}

/* A batch of completions: counted, checked, printed, their buffers posted
 * again. 0, or -1 with the message printed. */
static int rx_batch(struct rx *r, const struct xhca_wc *wc, int n)
{
	const struct opts *o = &r->o;

	if (r->lat) {
		uint64_t t = mono_ns();

		for (int i = 0; i < n && r->nlat < LAT_MAX; i++)
			if (wc[i].rx_ns && t > wc[i].rx_ns)
				r->lat[r->nlat++] = t - wc[i].rx_ns;
	}
	for (int i = 0; i < n; i++) {
		uint8_t *buf = r->bufs + wc[i].wr_id * o->buf_size;
		/* a proxy CQ's WRITE and proxy completions take no buffer */
		int nobuf = wc[i].opcode == XHCA_WC_RECV_RDMA_WRITE || wc[i].opcode == XHCA_WC_PROXY ||
			    wc[i].status == XHCA_WC_RESP_TIMEOUT_ERR, err;
		uint32_t hdr = (wc[i].wc_flags & XHCA_WC_GRH) ? 40 : 0;
		uint32_t dlen = wc[i].byte_len > hdr ? wc[i].byte_len - hdr : 0;

		r->got++;
		if (wc[i].status) {
			r->errors++;
		} else {
			r->bytes += dlen;
			if (o->check_psn && dlen >= 4 && !nobuf) {
				uint8_t *p = buf + hdr;
				uint32_t psn = (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];

				if (r->have_psn && (int32_t)((psn - r->last_psn) << 8) <= 0)
					r->ooo++;
				r->last_psn = psn;
				r->have_psn = 1;
			}
		}
		if (!o->quiet)
			wc_print(o, &wc[i], !wc[i].status && !nobuf ? buf + hdr : NULL, dlen);
		err = nobuf ? 0 : xhca_post_recv(r->qp, wc[i].wr_id, buf, o->buf_size);
		if (err) {
			fprintf(stderr, "xhca-recv: repost: %s\n", strerror(-err));
			return -1;
		}
	}
	return 0;
}

/* Polls until --count, --duration, the timeout or a signal. */
static int rx_loop(struct rx *r)
{
	const struct opts *o = &r->o;
	double t0 = now_sec();

	r->tlast = t0;
	while (!stop) {
		struct xhca_wc wc[64];
		double now = now_sec();
		int n;

		if ((o->duration && now - t0 >= o->duration) || (o->count && r->got >= o->count))
			break;
		if (o->stop_after && r->got >= o->stop_after) {
			/* A stalled application: the session stays, nothing is polled. */
			usleep(10000);
			continue;
		}
		if (!o->duration && now - r->tlast >= o->timeout)
			break;
		n = xhca_poll_cq(r->cq, wc, o->stop_after && o->stop_after - r->got < 64
						    ? (int)(o->stop_after - r->got) : 64);
		if (n < 0) {
			fprintf(stderr, "xhca-recv: poll: %s\n", strerror(-n));
			return -1;
		}
		if (!n) {
			n = xhca_cq_wait(r->cq, 100);
			if (n < 0) {
				fprintf(stderr, "xhca-recv: the CQ is gone: %s\n", strerror(-n));
				return -1;
			}
			continue;
		}
		r->tlast = now_sec();
		if (!r->got)
			r->tfirst = r->tlast;
		if (rx_batch(r, wc, n))
			return -1;
	}
	return 0;
}

static void rx_summary(struct rx *r)
{
	double span = r->got > 1 ? r->tlast - r->tfirst : 0;
	double rate = span > 0 ? (double)(r->got - 1) / span : 0;
	uint64_t p50 = 0, p99 = 0;

	if (r->nlat) {
		qsort(r->lat, r->nlat, sizeof(*r->lat), cmp_u64);
		p50 = r->lat[r->nlat / 2];
		p99 = r->lat[(uint64_t)r->nlat * 99 / 100];
	}
	if (r->o.json) {
		jw_open(NULL, '{');
		jw_u64("received", r->got);
		jw_u64("bytes", r->bytes);
		jw_u64("errors", r->errors);
		jw_u64("out_of_order", r->ooo);
		jw_float("seconds", 6, span);
		jw_float("msgs_per_s", 1, rate);
		jw_u64("cq_stalls", xhca_cq_stalls(r->cq));
		jw_u64("lat_p50_ns", p50);
		jw_u64("lat_p99_ns", p99);
		jw_close('}');
	}
	else
		printf("received %" PRIu64 " messages, %" PRIu64 " bytes, %" PRIu64 " errors, %" PRIu64
		       " out of order, %.0f msgs/s\n", r->got, r->bytes, r->errors, r->ooo, rate);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct rx r = {};
	int rc = 1;

	rc = parse(argc, argv, &r.o);
	if (rc)
		return rc == XHCA_OPT_HELP ? 0 : 2;
	rc = 1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!rx_setup(&r)) {
		rx_ready(&r);
		if (!rx_loop(&r)) {
			rx_summary(&r);
			rc = 0;
		}
	}
	free(r.lat);
	xhca_close(r.ctx);
	return rc;
}
