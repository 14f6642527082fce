/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-recv: an example application of libxhca. It opens a session on an
 * interface, creates a CQ and a QP, brings the QP to RTR, posts receive
 * buffers in host memory and prints every completion, reposting the buffer.
 *
 * Exit codes: 0 done, 1 failed, 2 bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xhca/pkt.h>
#include <xhca/xhca.h>

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

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xhca-recv -i IFNAME --type rc|uc|ud [options]\n"
		"Receives SENDs on a new QP through xhcad and prints each completion.\n"
		"  --qpn N            QPN to ask for (default: xhcad picks)\n"
		"  --qkey K --pkey P  UD Q_Key, P_Key\n"
		"  --flowq N          flow queue (default: a hash of the QPN)\n"
		"  --local-ip A --remote-ip A   RC/UC addresses (required for rc and uc)\n"
		"  --epsn N           first expected PSN (default 0); --mtu 256..4096\n"
		"  --bufs N           receive buffers posted (default 64, also the RQ depth)\n"
		"  --buf-size B       bytes each (default 4096)\n"
		"  --cq-depth N       completion queue depth (default 2 x bufs)\n"
		"  --count N          exit after N completions\n"
		"  --timeout S        exit after S seconds without a completion (default 10)\n"
		"  --duration S       exit after S seconds in all\n"
		"  --stop-after N     stop polling after N completions and wait (a stalled\n"
		"                     application), until --duration or a signal\n"
		"  --check-psn        the payload starts with the PSN (xhca-gen --stamp): count\n"
		"                     messages that arrive out of order\n"
		"  --dump N           print the first N bytes of each message (hex)\n"
		"  --mcast MGID       join a multicast group (UD; IPv4 or IPv6 multicast address;\n"
		"                     created if there is none; up to 8)\n"
		"  --block-self-mcast-loopback  no copy of multicast packets it sent itself\n"
		"  --proxy            a proxy QP on a proxy CQ (US 9,069,633): add filters with\n"
		"                     xhca filter add; every completion, RDMA WRITEs and the\n"
		"                     proxy's (opcode 257, result) too, comes in message order\n"
		"  --proxy-cq         a proxy CQ, the QP not (yet) a proxy QP (xhca qp modify\n"
		"                     QPN --proxy on makes it one)\n"
		"  --proxy-qp         a proxy QP on an ordinary CQ (xhcad refuses it)\n"
		"  --mr LEN           register LEN bytes (every remote access) in the QP's PD;\n"
		"                     the ready line gives its rkey and iova\n"
		"  --latency          the summary adds the median and 99th percentile of the\n"
		"                     time from xhca_rx taking a message's last packet to this\n"
		"                     application polling its completion\n"
		"  -q                 summary only;  -j  JSON lines\n"
		"Prints 'ready qpn 0xNNNNNN' (or a JSON ready line) once the QP is in RTR.\n");
}

enum { O_TYPE = 256, O_QPN, O_QKEY, O_PKEY, O_FLOWQ, O_LIP, O_RIP, O_EPSN, O_MTU, O_BUFS,
       O_BUFSZ, O_CQD, O_COUNT, O_TIMEOUT, O_DURATION, O_STOPAFTER, O_CHECKPSN, O_DUMP,
       O_MCAST, O_BLOCKLB, O_PROXY, O_PROXY_CQ, O_PROXY_QP, O_MR, O_LATENCY };

static int num(const char *opt, const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (!*s || *end || errno || *s == '-' || *v > max) {
		fprintf(stderr, "xhca-recv: %s '%s' is not a number in 0..%" PRIu64 "\n", opt, s,
			max);
		return -1;
	}
	return 0;
}

static int secs(const char *opt, const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	if (!*s || *end || !(*v > 0)) {
		fprintf(stderr, "xhca-recv: %s '%s' is not a positive number of seconds\n", opt, s);
		return -1;
	}
	return 0;
}

/* xhca-recv's long options (usage() says what each is for). */
static const struct option lo[] = {
	{ "interface", 1, NULL, 'i' }, { "type", 1, NULL, O_TYPE }, { "qpn", 1, NULL, O_QPN },
	{ "qkey", 1, NULL, O_QKEY },   { "pkey", 1, NULL, O_PKEY }, { "flowq", 1, NULL, O_FLOWQ },
	{ "local-ip", 1, NULL, O_LIP }, { "remote-ip", 1, NULL, O_RIP },
	{ "epsn", 1, NULL, O_EPSN },   { "mtu", 1, NULL, O_MTU },   { "bufs", 1, NULL, O_BUFS },
	{ "buf-size", 1, NULL, O_BUFSZ }, { "cq-depth", 1, NULL, O_CQD },
	{ "count", 1, NULL, O_COUNT }, { "timeout", 1, NULL, O_TIMEOUT },
	{ "duration", 1, NULL, O_DURATION }, { "stop-after", 1, NULL, O_STOPAFTER },
	{ "check-psn", 0, NULL, O_CHECKPSN }, { "dump", 1, NULL, O_DUMP },
	{ "mcast", 1, NULL, O_MCAST }, { "block-self-mcast-loopback", 0, NULL, O_BLOCKLB },
	{ "proxy", 0, NULL, O_PROXY }, { "proxy-cq", 0, NULL, O_PROXY_CQ },
	{ "proxy-qp", 0, NULL, O_PROXY_QP }, { "mr", 1, NULL, O_MR },
	{ "latency", 0, NULL, O_LATENCY },
	{ "json", 0, NULL, 'j' },      { "help", 0, NULL, 'h' },    {}
};

static int parse_check(struct opts *o);

static int parse(int argc, char **argv, struct opts *o)
{
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->qa.flowq = -1;
	o->bufs = 64;
	o->buf_size = 4096;
	o->timeout = 10;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:qjh", lo, NULL)) != -1) {
		switch (c) {
		case 'i': o->ifname = optarg; break;
		case 'q': o->quiet = 1; break;
		case 'j': o->json = 1; break;
		case 'h': usage(stdout); exit(0);
		case O_TYPE:
			if (!strcmp(optarg, "rc"))
				o->qa.type = XHCA_QPT_RC;
			else if (!strcmp(optarg, "uc"))
				o->qa.type = XHCA_QPT_UC;
			else if (!strcmp(optarg, "ud"))
				o->qa.type = XHCA_QPT_UD;
			else {
				fprintf(stderr, "xhca-recv: --type %s: use rc, uc or ud\n", optarg);
				return -1;
			}
			o->have_type = 1;
			break;
		case O_QPN: if (num("--qpn", optarg, 0xfffffe, &v)) return -1; o->qa.qpn = (uint32_t)v; break;
		case O_QKEY: if (num("--qkey", optarg, 0xffffffff, &v)) return -1; o->qa.qkey = (uint32_t)v; break;
		case O_PKEY: if (num("--pkey", optarg, 0xffff, &v)) return -1; o->qa.pkey = (uint16_t)v; break;
		case O_FLOWQ: if (num("--flowq", optarg, XHCA_FLOWQ_MAX - 1, &v)) return -1; o->qa.flowq = (int)v; break;
		case O_LIP: o->local_ip = optarg; break;
		case O_RIP: o->remote_ip = optarg; break;
		case O_EPSN: if (num("--epsn", optarg, 0xffffff, &v)) return -1; o->epsn = (uint32_t)v; break;
		case O_MTU:
			if (num("--mtu", optarg, 4096, &v) || v < 256 || (v & (v - 1))) {
				fprintf(stderr, "xhca-recv: --mtu: use 256, 512, 1024, 2048 or 4096\n");
				return -1;
			}
			o->mtu_shift = (uint32_t)__builtin_ctzll(v);
			break;
		case O_BUFS:
			if (num("--bufs", optarg, XHCA_RING_DEPTH_MAX, &v) || !v || (v & (v - 1))) {
				fprintf(stderr, "xhca-recv: --bufs: a power of 2 up to %d\n",
					XHCA_RING_DEPTH_MAX);
				return -1;
			}
			o->bufs = (unsigned int)v;
			break;
		case O_BUFSZ: if (num("--buf-size", optarg, 1u << 30, &v) || !v) return -1; o->buf_size = (unsigned int)v; break;
		case O_CQD: if (num("--cq-depth", optarg, XHCA_RING_DEPTH_MAX, &v)) return -1; o->cq_depth = (unsigned int)v; break;
		case O_COUNT: if (num("--count", optarg, UINT64_MAX >> 1, &v)) return -1; o->count = v; break;
		case O_TIMEOUT: if (secs("--timeout", optarg, &o->timeout)) return -1; break;
		case O_DURATION: if (secs("--duration", optarg, &o->duration)) return -1; break;
		case O_STOPAFTER: if (num("--stop-after", optarg, UINT64_MAX >> 1, &v)) return -1; o->stop_after = v; break;
		case O_CHECKPSN: o->check_psn = 1; break;
		case O_DUMP: if (num("--dump", optarg, 65536, &v)) return -1; o->dump = (uint32_t)v; break;
		case O_MCAST:
			if (o->nmgid == 8 || xhca_ip_parse(optarg, o->mgid[o->nmgid]) < 0) {
				fprintf(stderr, "xhca-recv: --mcast %s: give up to 8 multicast "
					"addresses\n", optarg);
				return -1;
			}
			o->nmgid++;
			break;
		case O_BLOCKLB: o->qa.create_flags |= XHCA_QP_CREATE_BLOCK_SELF_MCAST_LB; break;
		case O_PROXY:
			o->cq_flags |= XHCA_CQF_PROXY;
			o->qa.create_flags |= XHCA_QP_CREATE_PROXY;
			break;
		case O_PROXY_CQ: o->cq_flags |= XHCA_CQF_PROXY; break;
		case O_PROXY_QP: o->qa.create_flags |= XHCA_QP_CREATE_PROXY; break;
		case O_LATENCY: o->latency = 1; break;
		case O_MR:
			if (num("--mr", optarg, 1ull << 30, &o->mr_len) || !o->mr_len)
				return -1;
			break;
		case ':':
			fprintf(stderr, "xhca-recv: option '%s' needs a value\n", argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, "xhca-recv: unknown option '%s'; see xhca-recv --help\n",
				argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "xhca-recv: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return parse_check(o);
}

/* What the options must say together; the CQ's depth from the buffers'. */
static int parse_check(struct opts *o)
{
	if (!o->ifname || !o->have_type) {
		fprintf(stderr, "xhca-recv: give -i IFNAME and --type rc|uc|ud\n");
		return -1;
	}
	if (o->qa.type != XHCA_QPT_UD && (!o->local_ip || !o->remote_ip)) {
		fprintf(stderr, "xhca-recv: rc and uc need --local-ip and --remote-ip\n");
		return -1;
	}
	if (!o->cq_depth)
		o->cq_depth = o->bufs * 2 > XHCA_RING_DEPTH_MAX ? XHCA_RING_DEPTH_MAX : o->bufs * 2;
	if (o->cq_depth & (o->cq_depth - 1)) {
		fprintf(stderr, "xhca-recv: --cq-depth: a power of 2\n");
		return -1;
	}
	return 0;
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

static void print_hex(const uint8_t *p, uint32_t n)
{
	static const char hx[] = "0123456789abcdef";

	for (uint32_t i = 0; i < n; i++) {
		putchar(hx[p[i] >> 4]);
		putchar(hx[p[i] & 15]);
	}
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
		fprintf(stderr, "xhca-recv: cannot open a session on %s: %s; is xhcad running (xhcad "
			"%s)?\n", o->ifname, strerror(errno), o->ifname);
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

	if (r->o.json && r->mr)
		printf("{\"ready\": true, \"qpn\": %u, \"rkey\": %u, \"iova\": %" PRIu64 "}\n", qpn,
		       xhca_mr_rkey(r->mr), (uint64_t)(uintptr_t)r->mrbuf);
	else if (r->o.json)
		printf("{\"ready\": true, \"qpn\": %u}\n", qpn);
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
	printf("{\"wr_id\": %" PRIu64 ", \"status\": %u, \"opcode\": %u, \"byte_len\": %u, "
	       "\"qp_num\": %u, \"src_qp\": %u, \"flags\": %u, \"vendor_err\": %u",
	       (uint64_t)wc->wr_id, wc->status, wc->opcode, wc->byte_len, wc->qp_num, wc->src_qp,
	       wc->wc_flags, wc->vendor_err);
	if (wc->wc_flags & XHCA_WC_WITH_IMM)
		printf(", \"imm\": %u", __builtin_bswap32(wc->imm_data));
	if (wc->wc_flags & XHCA_WC_WITH_INV)
		printf(", \"inv_rkey\": %u", wc->imm_data);
	if (wc->opcode == XHCA_WC_PROXY)
		printf(", \"result\": %u", wc->imm_data);
	printf(", \"rx_ns\": %" PRIu64, (uint64_t)wc->rx_ns);
	if (o->dump && data) {
		printf(", \"data\": \"");
		print_hex(data, dlen < o->dump ? dlen : o->dump);
		putchar('"');
	}
	printf("}\n");
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
	if (r->o.json)
		printf("{\"received\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"errors\": %" PRIu64
		       ", \"out_of_order\": %" PRIu64 ", \"seconds\": %.6f, \"msgs_per_s\": %.1f, "
		       "\"cq_stalls\": %" PRIu64 ", \"lat_p50_ns\": %" PRIu64 ", \"lat_p99_ns\": %"
		       PRIu64 "}\n", r->got, r->bytes, r->errors, r->ooo, span, rate,
		       xhca_cq_stalls(r->cq), p50, p99);
	else
		printf("received %" PRIu64 " messages, %" PRIu64 " bytes, %" PRIu64 " errors, %" PRIu64
		       " out of order, %.0f msgs/s\n", r->got, r->bytes, r->errors, r->ooo, rate);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct rx r = {};
	int rc = 1;

	if (parse(argc, argv, &r.o)) {
		usage(stderr);
		return 2;
	}
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
