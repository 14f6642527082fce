/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad: the embedded processor of the xhca host channel adapter. Loads and
 * attaches xhca_rx (or adopts it), pins its maps, owns every write to them,
 * and serves the control socket.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include "log.h"
#include "xhcad.h"

#define RING_SIZE 2048
#define UMEM_FRAMES_DEFAULT 8192
#define HIGH_DEFAULT 512
#define MCAST_THRESHOLD_DEFAULT 512
#define MCAST_CREDITS_DEFAULT 1024
#define PROXY_LIMIT_DEFAULT 256
#define PROXY_TIMEOUT_MS_DEFAULT 2000

static void on_signal(int sig)
{
	xhcad_stop = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xhcad IFNAME [options]\n"
		"Loads xhca_rx on IFNAME, pins its maps and serves /run/xhca/IFNAME.sock.\n"
		"  --mode native|skb   XDP attach mode (default native)\n"
		"  --pin-dir DIR       where maps are pinned (default " XHCA_PIN_ROOT "/IFNAME)\n"
		"  --max-qps N         local QPs, 1..%d (default %d); fixed once maps are pinned\n"
		"  --adopt             take over xhca_rx attached by ip or xdp-loader\n"
		"  --keep              leave the program attached and maps pinned on exit\n"
		"  --flowqs N          flow queues, 1..%d (default %d; two more are the\n"
		"                      multicast replication queue and the proxy queue)\n"
		"  --sched drr|fifo    flow queue scheduling (default drr)\n"
		"  --bus-rate BYTES    model a host bus of BYTES/s (k, M, G suffixes; default off)\n"
		"  --watermarks H,L    backpressure per flow queue, frames (default %d,%d)\n"
		"  --hostmem-mb N      host memory, MiB (default %d); fixed once maps are pinned\n"
		"  --umem-frames N     AF_XDP UMEM frames of 4 KiB (default %d)\n"
		"  --jumbo-slots N     8 KiB slots for received frames over one UMEM frame\n"
		"                      (path MTU 4096), 0..65536 (default: a 16th of the frames)\n"
		"  --max-mrs N         memory regions, 1..%d (default %d); fixed once maps are pinned\n"
		"  --fragment          scatter every allocation over host memory: no region is\n"
		"                      pre-translated, xhcad places every RDMA WRITE\n"
		"  --canary            fill freed host memory with a pattern and report writes\n"
		"                      into it (canary_violations in xhca status)\n"
		"  --mcast-threshold N multicast packets that may wait for replication; above,\n"
		"                      new ones are dropped (default %d, 0: no limit)\n"
		"  --mcast-credits N   multicast copies a flow queue may hold; the replication\n"
		"                      waits when they are used up (default %d)\n"
		"  --proxy-limit N     the proxy's load limit: with N requests waiting for it,\n"
		"                      xhca_rx stops offloading until it is down to N/2\n"
		"                      (default %d)\n"
		"  --proxy-timeout-ms N  a proxy CQ's completion missing this long completes\n"
		"                      with an error and its QP goes to error (default %d)\n"
		"  --proxy-handler FILE.so[:ARG]  load an application's proxy handler (include/\n"
		"                      xhca/proxy_handler.h); filters name it (up to 6)\n"
		"  -v, --verbose       more detail (libbpf and libxdp debug output)\n"
		"  -h, --help          this text\n",
		XHCA_MAX_QPS_LIMIT, XHCA_MAX_QPS_DEFAULT, XHCA_FLOWQ_PROXY, XHCA_FLOWQ_DEFAULT,
		HIGH_DEFAULT, HIGH_DEFAULT / 4,
		XHCA_HOSTMEM_PAGES_DEFAULT * XHCA_PAGE_SIZE >> 20, UMEM_FRAMES_DEFAULT,
		XHCA_MR_MAX_LIMIT - 1, XHCA_MR_MAX_DEFAULT - 1, MCAST_THRESHOLD_DEFAULT,
		MCAST_CREDITS_DEFAULT, PROXY_LIMIT_DEFAULT, PROXY_TIMEOUT_MS_DEFAULT);
}

/* "20M" -> 20000000; decimal suffixes, as rates are given. */
static int parse_rate(const char *s, __u64 *v)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(s, &end);
	if (errno || end == s || !(x > 0))
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		x *= 1e3, end++;
	else if (*end == 'M')
		x *= 1e6, end++;
	else if (*end == 'G')
		x *= 1e9, end++;
	if (*end || x < 1e3 || x > 1e12)
		return -EINVAL;
	*v = (__u64)x;
	return 0;
}

/* The host interface: host memory, flow queue state, scheduler, sockets. */
static int host_init(struct xhcad *d, enum sched_mode mode, __u32 high, __u32 low)
{
	int err;

	err = hostmem_init(d);
	if (!err)
		err = mr_init(d);
	if (!err)
		err = mcast_init(d);
	if (!err)
		err = proxy_init(d); /* before the restore attaches QPs to proxy CQs */
	for (int i = 0; !err && i < d->n_px_specs; i++)
		err = proxy_handler_load(d, d->px_specs[i]);
	if (err)
		return err;
	/* What an earlier xhcad left: sessions that live on keep their
	 * memory, regions, CQs and QPs; every other region goes. */
	state_restore(d, d->maps_reused);
	mr_sweep(d);
	err = filter_init(d);
	if (err)
		return err;
	hm_canary_fill(d);
	d->fqm = mmap(NULL, XHCA_FLOWQ_MAX * sizeof(struct xhca_flowq), PROT_READ | PROT_WRITE,
		      MAP_SHARED, d->m.flowq, 0);
	if (d->fqm == MAP_FAILED) {
		d->fqm = NULL;
		pr_warn("cannot map %s: %s\n", XHCA_MAP_FLOWQ, strerror(errno));
		return -errno;
	}
	/* Nothing is queued now: whatever an earlier run counted is gone. */
	for (__u32 f = 0; f < XHCA_FLOWQ_MAX; f++) {
		struct xhca_flowq *q = &d->fqm[f];

		q->high = f < d->nflowq ? high : 0;
		q->low = f < d->nflowq ? low : 0;
		if (f == XHCA_FLOWQ_MCAST) {
			/* the threshold: no hysteresis */
			q->high = d->mcast_threshold;
			q->low = d->mcast_threshold ? d->mcast_threshold - 1 : 0;
		}
		if (f == XHCA_FLOWQ_PROXY) {
			/* the load limit: no offload mode from high until low */
			q->high = d->proxy_high;
			q->low = d->proxy_low;
		}
		__atomic_store_n(&q->deq, __atomic_load_n(&q->enq, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		q->gate = 0;
	}
	sched_init(&d->sched, mode, d->nflowq, XSK_FRAME_SIZE);
	flowq_init(d);
	err = xsk_init(d);
	return err ? err : proxy_start(d);
}

static void host_fini(struct xhcad *d)
{
	proxy_fini(d);
	filter_fini(d);
	xsk_fini(d);
	mcast_fini(d);
	mr_fini(d);
	if (d->fqm)
		munmap(d->fqm, XHCA_FLOWQ_MAX * sizeof(struct xhca_flowq));
	d->fqm = NULL;
	hostmem_fini(d);
}

/* bpffs is not mounted at boot on every system. */
static int ensure_bpffs(const char *pin_dir)
{
	struct statfs st;

	if (strncmp(pin_dir, "/sys/fs/bpf", 11))
		return 0;
	if (!statfs("/sys/fs/bpf", &st) && st.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		pr_warn("cannot mount bpffs on /sys/fs/bpf: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

static int parse_u32(const char *s, __u32 *v)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(s, &end, 0);
	if (errno || !*s || *end || x > 0xffffffffUL || *s == '-')
		return -EINVAL;
	*v = x;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "max-qps", required_argument, NULL, 'q' },
		{ "adopt", no_argument, NULL, 'a' },
		{ "keep", no_argument, NULL, 'k' },
		{ "flowqs", required_argument, NULL, 'F' },
		{ "sched", required_argument, NULL, 'S' },
		{ "bus-rate", required_argument, NULL, 'B' },
		{ "watermarks", required_argument, NULL, 'W' },
		{ "hostmem-mb", required_argument, NULL, 'H' },
		{ "umem-frames", required_argument, NULL, 'U' },
		{ "jumbo-slots", required_argument, NULL, 'J' },
		{ "max-mrs", required_argument, NULL, 'M' },
		{ "fragment", no_argument, NULL, 'f' },
		{ "canary", no_argument, NULL, 'c' },
		{ "mcast-threshold", required_argument, NULL, 'T' },
		{ "mcast-credits", required_argument, NULL, 'C' },
		{ "proxy-limit", required_argument, NULL, 'L' },
		{ "proxy-timeout-ms", required_argument, NULL, 'O' },
		{ "proxy-handler", required_argument, NULL, 'P' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct xhcad d = { .native = 1, .prog_fd = -1, .m = { .dstate = -1 }, .barrier_fd = -1,
			   .barrier_inner = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	int verbose = 0, c, lfd = -1, err;
	__u32 max_qps = 0, v, high = HIGH_DEFAULT, low = HIGH_DEFAULT / 4;
	enum sched_mode mode = FQ_SCHED_DRR;

	d.nflowq = XHCA_FLOWQ_DEFAULT;
	d.mcast_threshold = MCAST_THRESHOLD_DEFAULT;
	d.mcast_credits = MCAST_CREDITS_DEFAULT;
	d.umem_frames = UMEM_FRAMES_DEFAULT;
	d.jumbo_slots = -1;
	d.ring_size = RING_SIZE;
	d.proxy_high = PROXY_LIMIT_DEFAULT;
	d.proxy_low = PROXY_LIMIT_DEFAULT / 2;
	d.proxy_timeout_ns = PROXY_TIMEOUT_MS_DEFAULT * 1000000ull;

	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "native") || !strcmp(optarg, "drv"))
				d.native = 1;
			else if (!strcmp(optarg, "skb") || !strcmp(optarg, "generic"))
				d.native = 0;
			else {
				fprintf(stderr, "xhcad: --mode %s: use native or skb\n", optarg);
				return 2;
			}
			break;
		case 'p':
			if (snprintf(d.pin_dir, sizeof(d.pin_dir), "%s", optarg) >=
			    (int)sizeof(d.pin_dir)) {
				fprintf(stderr, "xhcad: --pin-dir is too long\n");
				return 2;
			}
			break;
		case 'q':
			if (parse_u32(optarg, &max_qps) || !max_qps || max_qps > XHCA_MAX_QPS_LIMIT) {
				fprintf(stderr, "xhcad: --max-qps %s: use a number from 1 to %d\n",
					optarg, XHCA_MAX_QPS_LIMIT);
				return 2;
			}
			break;
		case 'F':
			if (parse_u32(optarg, &v) || !v || v > XHCA_FLOWQ_PROXY) {
				fprintf(stderr, "xhcad: --flowqs %s: use a number from 1 to %d\n", optarg,
					XHCA_FLOWQ_PROXY);
				return 2;
			}
			d.nflowq = v;
			break;
		case 'S':
			if (!strcmp(optarg, "drr"))
				mode = FQ_SCHED_DRR;
			else if (!strcmp(optarg, "fifo"))
				mode = FQ_SCHED_FIFO;
			else {
				fprintf(stderr, "xhcad: --sched %s: use drr or fifo\n", optarg);
				return 2;
			}
			break;
		case 'B':
			if (parse_rate(optarg, &d.bus_rate)) {
				fprintf(stderr, "xhcad: --bus-rate %s: give bytes per second, 1k to "
					"1000G, e.g. 20M\n", optarg);
				return 2;
			}
			break;
		case 'W': {
			char *comma = strchr(optarg, ',');

			if (!comma || (*comma = 0, parse_u32(optarg, &high)) ||
			    parse_u32(comma + 1, &low) || !high || low >= high ||
			    high > RING_SIZE / 2) {
				fprintf(stderr, "xhcad: --watermarks: give HIGH,LOW frames with 0 < "
					"LOW < HIGH <= %d\n", RING_SIZE / 2);
				return 2;
			}
			break;
		}
		case 'H':
			if (parse_u32(optarg, &v) || !v || v > 16384) {
				fprintf(stderr, "xhcad: --hostmem-mb %s: use 1 to 16384\n", optarg);
				return 2;
			}
			d.hostmem_pages = v * (1024 * 1024 / XHCA_PAGE_SIZE);
			break;
		case 'U':
			if (parse_u32(optarg, &v) || v < 256 || v > 1048576) {
				fprintf(stderr, "xhcad: --umem-frames %s: use 256 to 1048576\n", optarg);
				return 2;
			}
			d.umem_frames = v;
			break;
		case 'J':
			if (parse_u32(optarg, &v) || v > 65536) {
				fprintf(stderr, "xhcad: --jumbo-slots %s: use 0 to 65536\n",
					optarg);
				return 2;
			}
			d.jumbo_slots = (int)v;
			break;
		case 'M':
			if (parse_u32(optarg, &v) || !v || v >= XHCA_MR_MAX_LIMIT) {
				fprintf(stderr, "xhcad: --max-mrs %s: use 1 to %d\n", optarg,
					XHCA_MR_MAX_LIMIT - 1);
				return 2;
			}
			d.max_mrs = v + 1; /* index 0 is never used */
			break;
		case 'T':
			if (parse_u32(optarg, &v) || v > RING_SIZE) {
				fprintf(stderr, "xhcad: --mcast-threshold %s: use 0 (no limit) to %d\n",
					optarg, RING_SIZE);
				return 2;
			}
			d.mcast_threshold = v;
			break;
		case 'C':
			if (parse_u32(optarg, &v) || !v || v > 65536) {
				fprintf(stderr, "xhcad: --mcast-credits %s: use 1 to 65536\n", optarg);
				return 2;
			}
			d.mcast_credits = v;
			break;
		case 'L':
			if (parse_u32(optarg, &v) || v < 2 || v > RING_SIZE / 2) {
				fprintf(stderr, "xhcad: --proxy-limit %s: use 2 to %d requests\n",
					optarg, RING_SIZE / 2);
				return 2;
			}
			d.proxy_high = v;
			d.proxy_low = v / 2;
			break;
		case 'O':
			if (parse_u32(optarg, &v) || v < 10 || v > 600000) {
				fprintf(stderr, "xhcad: --proxy-timeout-ms %s: use 10 to 600000\n",
					optarg);
				return 2;
			}
			d.proxy_timeout_ns = v * 1000000ull;
			break;
		case 'P':
			if (d.n_px_specs == XHCA_PXH_MAX - 2) {
				fprintf(stderr, "xhcad: --proxy-handler: %d at most\n",
					XHCA_PXH_MAX - 2);
				return 2;
			}
			d.px_specs[d.n_px_specs++] = optarg;
			break;
		case 'f': d.fragment = 1; break;
		case 'c': d.canary = 1; break;
		case 'a': d.adopt = 1; break;
		case 'k': d.keep = 1; break;
		case 'v': verbose++; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "xhcad: give exactly one interface name (xhcad IFNAME)\n");
		usage(stderr);
		return 2;
	}
	xhca_log_init("xhcad", verbose ? XHCA_LOG_DEBUG : XHCA_LOG_INFO);
	if (strlen(argv[optind]) >= sizeof(d.ifname)) {
		fprintf(stderr, "xhcad: interface name %s is too long\n", argv[optind]);
		return 2;
	}
	strcpy(d.ifname, argv[optind]);
	d.ifindex = if_nametoindex(d.ifname);
	if (!d.ifindex) {
		fprintf(stderr, "xhcad: interface %s not found (ip link show)\n", d.ifname);
		return 1;
	}
	if (!d.pin_dir[0])
		snprintf(d.pin_dir, sizeof(d.pin_dir), XHCA_PIN_ROOT "/%s", d.ifname);
	snprintf(d.sock_path, sizeof(d.sock_path), XHCA_RUN_DIR "/%s.sock", d.ifname);
	d.max_qps = max_qps ? max_qps : XHCA_MAX_QPS_DEFAULT;
	if (d.adopt && max_qps)
		pr_warn("--max-qps is ignored with --adopt: the maps exist already\n");
	d.start_ms = now_ms();

	{
		/* Kernels before 5.11 charge BPF memory to RLIMIT_MEMLOCK. */
		struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

		setrlimit(RLIMIT_MEMLOCK, &rl);
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	err = ensure_bpffs(d.pin_dir);
	if (err)
		return 1;
	/* Claim the socket first: a second xhcad for the same interface must
	 * not touch the program or the maps. */
	lfd = ctl_listen(&d);
	if (lfd < 0)
		return 1;
	err = d.adopt ? xhcad_adopt(&d) : xhcad_load(&d);
	if (err)
		goto out_sock;
	err = qp_table_init(&d);
	if (!err)
		err = qp_reconcile(&d);
	if (err) {
		pr_warn("cannot read the QP table: %s\n", strerror(-err));
		goto out;
	}
	err = host_init(&d, mode, high, low);
	if (err) {
		pr_warn("cannot set up the host interface: %s\n", strerror(-err));
		goto out;
	}
	pr_info("serving %s: xhca_rx id %u (%s mode), %u local QPs, control %s\n", d.ifname,
		d.prog_id, d.native ? "native" : "skb", d.max_qps, d.sock_path);
	err = xhcad_run(&d, lfd);
	if (err)
		pr_warn("main loop: %s\n", strerror(-err));
	pr_info("stopping (%s)%s\n", strsignal(xhcad_stop ? xhcad_stop : SIGTERM),
		d.keep ? ": program and maps kept" : "");
out:
	host_fini(&d); /* the proxy still reaches CQs: sessions after */
	sq_fini(&d);
	session_fini(&d);
	qp_table_free(&d);
	if (!d.keep)
		state_remove(&d); /* the maps go: nothing to come back to */
	xhcad_unload(&d);
out_sock:
	close(lfd);
	unlink(d.sock_path);
	return err ? 1 : 0;
}
