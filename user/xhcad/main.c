/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad: the embedded processor of the xhca host channel adapter. Loads and
 * attaches xhca_rx (or adopts it), pins its maps, owns every write to them,
 * and serves the control socket.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/utsname.h>
#include <bpf/btf.h>
#include "kfeat.h"
#include "log.h"
#include "opt.h"
#include "xhcad_control.h"

#define RING_SIZE 2048
#define UMEM_FRAMES_DEFAULT 8192
#define USER_CLIENTS_DEFAULT 64
#define CQ_STALL_MS_DEFAULT 2000
#define HIGH_DEFAULT 512
#define MCAST_THRESHOLD_DEFAULT 512
#define MCAST_CREDITS_DEFAULT 1024
#define PROXY_LIMIT_DEFAULT 256
#define PROXY_TIMEOUT_MS_DEFAULT 2000
#define POLL_US_DEFAULT 50

static void on_signal(int sig)
{
	xhcad_stop = sig;
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
		err = cqx_init(d); /* (before the restore: CQs attach to it) */
	if (!err)
		err = mr_init(d);
	if (!err)
		err = resp_init(d);
	if (!err)
		err = mcast_init(d);
	if (!err)
		err = proxy_init(d); /* before the restore attaches QPs to proxy CQs */
	for (int i = 0; !err && i < d->pxc.nspecs; i++)
		err = proxy_handler_load(d, d->pxc.specs[i]);
	if (err)
		return err;
	/* What an earlier xhcad left: sessions that live on keep their
	 * memory, regions, CQs and QPs; every other region goes. */
	state_restore(d, d->maps_reused);
	qp_engines_fix(d);
	mr_sweep(d);
	hm_settle(d);
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
			q->high = d->pxc.high;
			q->low = d->pxc.low;
		}
		__atomic_store_n(&q->deq, __atomic_load_n(&q->enq, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		q->gate = 0;
	}
	for (__u32 k = 0; k < XHCA_ENGINES_MAX; k++)
		sched_init(&d->eng[k].sched, mode, d->nflowq, XSK_FRAME_SIZE);
	flowq_init(d);
	err = lo_init(d);
	if (!err)
		err = xsk_init(d);
	if (!err)
		mcast_start(d);
	return err ? err : proxy_start(d);
}

static void host_fini(struct xhcad *d)
{
	cm_fini(d); /* (its last messages leave through the sockets) */
	proxy_fini(d);
	filter_fini(d);
	xsk_fini(d);
	lo_fini(d);
	mcast_fini(d);
	resp_fini(d);
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

/* ---- options: one table, which also writes the usage text ---------------- */

/* What the options set: the daemon's settings, and a few that main keeps. */
struct opts {
	struct xhcad *d;
	__u32 max_qps, high, low, mtu;
	enum sched_mode mode;
	int verbose;
	int check;		/* --check-config */
	int unload;		/* --unload */
	const char *config;	/* --config FILE */
	char conf[PATH_MAX];	/* the file the settings came from, if one */
	char *conf_text;	/* its text, which settings point into */
};

/* The options' setters (struct xhca_opt's set: ctx is struct opts; v a
 * number already checked against the option's range). */
#define SETTER XHCA_OPT_SETTER
#define O ((struct opts *)ctx)

/* An option of two settings: 1 when arg is a word of yes ("a|b": either),
 * 0 when one of no's, else -1 (the option's hint says which). */
static int either(const char *arg, const char *yes, const char *no)
{
	for (int i = 0; i < 2; i++) {
		const char *w = i ? no : yes;

		for (size_t n; *w; w += n + !!w[n]) {
			n = strcspn(w, "|");
			if (strlen(arg) == n && !strncmp(arg, w, n))
				return !i;
		}
	}
	return -1;
}

SETTER(set_mode)
{
	int native = either(arg, "native|drv", "skb|generic");

	if (native < 0)
		return -EINVAL;
	O->d->native = native;
	O->d->mode_set = 1;
	return 0;
}

SETTER(set_pin_dir)
{
	return snprintf(O->d->pin_dir, sizeof(O->d->pin_dir), "%s", arg) >=
		       (int)sizeof(O->d->pin_dir) ? -EINVAL : 0;
}

SETTER(set_max_qps) { O->max_qps = (__u32)v; return 0; }
SETTER(set_adopt) { O->d->adopt = 1; return 0; }
SETTER(set_keep) { O->d->keep = 1; return 0; }
SETTER(set_flowqs) { O->d->nflowq = (__u32)v; return 0; }

SETTER(set_sched)
{
	int drr = either(arg, "drr", "fifo");

	if (drr < 0)
		return -EINVAL;
	O->mode = drr ? FQ_SCHED_DRR : FQ_SCHED_FIFO;
	return 0;
}

SETTER(set_bus_rate) { return parse_rate(arg, &O->d->bus.rate); }

SETTER(set_watermarks)
{
	char buf[64], *comma;

	snprintf(buf, sizeof(buf), "%s", arg);
	comma = strchr(buf, ',');
	if (!comma)
		return -EINVAL;
	*comma = 0;
	if (parse_u32(buf, &O->high) || parse_u32(comma + 1, &O->low) || !O->high ||
	    O->low >= O->high || O->high > RING_SIZE / 2)
		return -EINVAL;
	return 0;
}

/* whole blocks: MiB rounded up to 4 */
static __u32 mb_blocks(__u64 mb)
{
	return (__u32)((mb * (1024 * 1024 / XHCA_PAGE_SIZE) + XHCA_BLOCK_PAGES - 1) /
		       XHCA_BLOCK_PAGES);
}

SETTER(set_hostmem) { O->d->hm.pages = mb_blocks(v) * XHCA_BLOCK_PAGES; return 0; }
SETTER(set_session_mb) { O->d->hm.session_blocks = mb_blocks(v); return 0; }
SETTER(set_session_qps) { O->d->app.lim_qps = (__u32)v; return 0; }
SETTER(set_session_cqs) { O->d->app.lim_cqs = (__u32)v; return 0; }
SETTER(set_session_mrs) { O->d->app.lim_mrs = (__u32)v; return 0; }
SETTER(set_user_clients) { O->d->app.lim_clients = (__u32)v; return 0; }
SETTER(set_cq_stall) { O->d->cq_stall_ns = v * 1000000ull; return 0; }
SETTER(set_umem) { O->d->umem_frames = (__u32)v; return 0; }
SETTER(set_jumbo) { O->d->jumbo_slots = (int)v; return 0; }
SETTER(set_max_mrs) { O->d->mr.max = (__u32)v + 1; /* index 0 is never used */ return 0; }
SETTER(set_fragment) { O->d->hm.fragment = 1; return 0; }
SETTER(set_canary) { O->d->hm.canary = 1; return 0; }
SETTER(set_mc_thresh) { O->d->mcast_threshold = (__u32)v; return 0; }
SETTER(set_mc_credits) { O->d->mcast_credits = (__u32)v; return 0; }

SETTER(set_px_limit)
{
	O->d->pxc.high = (__u32)v;
	O->d->pxc.low = (__u32)v / 2;
	return 0;
}

SETTER(set_px_timeout) { O->d->pxc.timeout_ns = v * 1000000ull; return 0; }

SETTER(set_px_handler)
{
	if (O->d->pxc.nspecs == XHCA_PXH_MAX - 2)
		return -ENOSPC;
	O->d->pxc.specs[O->d->pxc.nspecs++] = arg;
	return 0;
}

/* *flag: 1 for yes, 0 for no (either's words), else -EINVAL. */
static int set_either(int *flag, const char *arg, const char *yes, const char *no)
{
	int v = either(arg, yes, no);

	if (v < 0)
		return -EINVAL;
	*flag = v;
	return 0;
}

SETTER(set_gso) { return set_either(&O->d->gso, arg, "on", "off"); }
SETTER(set_direct) { return set_either(&O->d->direct, arg, "on", "off"); }
SETTER(set_recv_fast) { return set_either(&O->d->recv_fast, arg, "on", "off"); }
SETTER(set_xdp_ack)
{
	if (!strcmp(arg, "auto")) {
		O->d->xdp_ack = XDP_ACK_AUTO;
		return 0;
	}
	return set_either(&O->d->xdp_ack, arg, "on", "off");
}
SETTER(set_steer)
{
	if (!strcmp(arg, "auto")) {
		O->d->steer = STEER_AUTO;
		return 0;
	}
	return set_either(&O->d->steer, arg, "on", "off");
}
SETTER(set_icrc) { return set_either(&O->d->icrc_first, arg, "first", "after"); }

SETTER(set_group)
{
	struct group *g = getgrnam(arg);
	char *end;
	unsigned long gid = strtoul(arg, &end, 10);

	if (!g && (!*arg || *end || gid >= (gid_t)-1))
		return -ENOENT;
	O->d->ctl_group = 1;
	O->d->ctl_gid = g ? (__u32)g->gr_gid : (__u32)gid;
	return 0;
}

SETTER(set_poll) { O->d->poll_ns = v * 1000ull; return 0; }
SETTER(set_engines) { O->d->neng = (__u32)v; return 0; }

SETTER(set_no_cm) { O->d->no_cm = 1; return 0; }
SETTER(set_no_kfuncs) { O->d->no_kfuncs = 1; return 0; }

SETTER(set_verbose) { O->verbose++; return 0; }
SETTER(set_config) { O->config = arg; return 0; }
SETTER(set_check) { O->check = 1; return 0; }
SETTER(set_unload) { O->unload = 1; return 0; }
SETTER(set_mtu) { O->mtu = (__u32)v; return 0; }
#undef O

#define NUM XHCA_OPT_RANGE
#define OPT XHCA_OPT_LONG
static const struct xhca_opt xopts[] = {
	OPT(0, "mode", "native|skb", "XDP attach mode (default native, skb where the driver\n"
	  "refuses native: said at start)", set_mode,
	  .hint = "use native or skb"),
	OPT(1, "pin-dir", "DIR", "where maps are pinned (default " XHCA_PIN_ROOT "/IFNAME)",
	  set_pin_dir, .hint = "the path is too long"),
	OPT(2, "max-qps", "N", "local QPs; fixed once maps are pinned", set_max_qps,
	  NUM(1, XHCA_MAX_QPS_LIMIT, XHCA_MAX_QPS_DEFAULT)),
	OPT(3, "adopt", NULL, "take over xhca_rx attached by ip or xdp-loader", set_adopt),
	OPT(4, "keep", NULL, "leave the program attached and maps pinned on exit", set_keep),
	OPT(5, "flowqs", "N", "flow queues (two more are the multicast replication queue and\n"
	  "the proxy queue)", set_flowqs, NUM(1, XHCA_FLOWQ_PROXY, XHCA_FLOWQ_DEFAULT)),
	OPT(6, "sched", "drr|fifo", "flow queue scheduling (default drr)", set_sched,
	  .hint = "use drr or fifo"),
	OPT(7, "bus-rate", "BYTES", "model a host bus of BYTES/s (k, M, G suffixes; default off)",
	  set_bus_rate, .hint = "give bytes per second, 1k to 1000G, e.g. 20M"),
	OPT(8, "watermarks", "H,L", "backpressure per flow queue, frames (default 512,128)",
	  set_watermarks, .hint = "give HIGH,LOW frames with 0 < LOW < HIGH <= 1024"),
	OPT(9, "hostmem-mb", "N", "host memory, MiB (in blocks of 4); fixed once maps are pinned",
	  set_hostmem, NUM(1, 16384, XHCA_HOSTMEM_PAGES_DEFAULT * XHCA_PAGE_SIZE >> 20)),
	OPT(28, "session-mb", "N", "the most host memory one session holds, MiB (in blocks\n"
	  "of 4; default and at most: all of it)", set_session_mb, NUM(4, 16384, 0)),
	OPT(29, "session-qps", "N", "the most QPs one session holds (default 0: no limit\n"
	  "but the device's)", set_session_qps, NUM(0, XHCA_MAX_QPS_LIMIT, 0)),
	OPT(30, "session-cqs", "N", "the most CQs one session holds (default 0: no limit)",
	  set_session_cqs, NUM(0, 1u << 20, 0)),
	OPT(31, "session-mrs", "N", "the most memory regions and windows one session holds\n"
	  "(default 0: no limit but --max-mrs)", set_session_mrs,
	  NUM(0, XHCA_MR_MAX_LIMIT, 0)),
	OPT(32, "user-clients", "N", "control connections (sessions, CLIs) of one user; root's\n"
	  "are not counted (default 64, at most 256)", set_user_clients, NUM(1, 256, USER_CLIENTS_DEFAULT)),
	OPT(33, "cq-stall-ms", "N", "a CQ that stays full this long with completions waiting\n"
	  "overruns: its QPs go to the error state, its flow queue goes\n"
	  "on (0: it waits for ever)", set_cq_stall, NUM(0, 3600000, CQ_STALL_MS_DEFAULT)),
	OPT(10, "umem-frames", "N", "AF_XDP UMEM frames of 4 KiB", set_umem,
	  NUM(256, 1048576, UMEM_FRAMES_DEFAULT)),
	OPT(11, "jumbo-slots", "N", "8 KiB slots for received frames over one UMEM frame (path\n"
	  "MTU 4096; default: a 16th of the frames)", set_jumbo, NUM(0, 65536, 0)),
	OPT(12, "max-mrs", "N", "memory regions; fixed once maps are pinned", set_max_mrs,
	  NUM(1, XHCA_MR_MAX_LIMIT - 1, XHCA_MR_MAX_DEFAULT - 1)),
	OPT(13, "fragment", NULL, "scatter every allocation over host memory: no region is\n"
	  "pre-translated, xhcad places every RDMA WRITE", set_fragment),
	OPT(14, "canary", NULL, "fill freed host memory with a pattern and report writes into it\n"
	  "(canary_violations in xhca status)", set_canary),
	OPT(15, "mcast-threshold", "N", "multicast packets that may wait for replication; above,\n"
	  "new ones are dropped (0: no limit)", set_mc_thresh,
	  NUM(0, RING_SIZE, MCAST_THRESHOLD_DEFAULT)),
	OPT(16, "mcast-credits", "N", "multicast copies a flow queue may hold; the replication\n"
	  "waits when they are used up", set_mc_credits, NUM(1, 65536, MCAST_CREDITS_DEFAULT)),
	OPT(17, "proxy-limit", "N", "the proxy's load limit: with N requests waiting for it,\n"
	  "xhca_rx stops offloading until it is down to N/2", set_px_limit,
	  NUM(2, RING_SIZE / 2, PROXY_LIMIT_DEFAULT)),
	OPT(18, "proxy-timeout-ms", "N", "a proxy CQ's completion missing this long completes\n"
	  "with an error and its QP goes to error", set_px_timeout,
	  NUM(10, 600000, PROXY_TIMEOUT_MS_DEFAULT)),
	OPT(19, "proxy-handler", "FILE.so[:ARG]", "load an application's proxy handler\n"
	  "(include/xhca/proxy_handler.h); filters name it (up to 6)", set_px_handler,
	  .hint = "6 at most", .flags = XHCA_OPT_REPEAT),
	OPT(20, "icrc", "first|after", "first: no byte is placed or executed before its ICRC\n"
	  "checked (xhcad places every WRITE); after: xhca_rx places WRITEs\n"
	  "into pre-translated regions at once, the ICRC checked by xhcad\n"
	  "for the frames it takes (default after: docs/running.md)", set_icrc,
	  .hint = "use first or after"),
	OPT(36, "gso", "on|off", "on: where AF_XDP copies, request packets go\n"
	  "through a packet socket, runs of a QP's equal-sized packets\n"
	  "as one UDP GSO send that the kernel segments (Linux 6.2; it\n"
	  "turns itself off on an older one); off: every frame through\n"
	  "the AF_XDP TX ring (default on: docs/running.md)",
	  set_gso, .hint = "use on or off"),
	OPT(37, "recv-fast", "on|off", "on: xhca_rx places a one-packet SEND (RC, UC, UD) into\n"
	  "its receive buffer and writes its completion itself where it can\n"
	  "(a buffer in a pre-translated region, room in the CQ); off:\n"
	  "xhcad places every SEND (default on: docs/running.md)",
	  set_recv_fast, .hint = "use on or off"),
	OPT(38, "xdp-ack", "auto|on|off", "on: xhca_rx also sends the ACK of an RC SEND or WRITE\n"
	  "it placed (XDP_TX) when nothing of the QP's waits in xhcad: for\n"
	  "a NIC, or a veth whose peer runs an XDP program (else its frames\n"
	  "wait or are dropped: xhcad turns it off when the interface\n"
	  "counts drops); off: xhcad sends every ACK; auto (default): on\n"
	  "but where xhca_rx runs native on a veth (whose peer xhcad\n"
	  "cannot see)",
	  set_xdp_ack, .hint = "use auto, on or off"),
	OPT(40, "direct", "on|off", "on: a program sends a one-packet SEND, or WRITE with\n"
	  "immediate, of an RC or UC QP itself, through a UDP socket of\n"
	  "its own, when its send queue is idle (no hand-over to xhcad on\n"
	  "the way); off: xhcad sends every request (default on:\n"
	  "docs/running.md)",
	  set_direct, .hint = "use on or off"),
	OPT(39, "steer", "auto|on|off", "on: each request run (--gso) leaves by the TX queue whose\n"
	  "RX queue at a veth's peer its destination QP's engine reads\n"
	  "(a tc egress filter, xhca_steer, turns the sockets' marks into\n"
	  "queues); auto (default): on for a veth of several queues",
	  set_steer, .hint = "use auto, on or off"),
	OPT(22, "poll-us", "N", "busy poll the rings this long after work before sleeping:\n"
	  "no wakeup and no doorbell while traffic flows; idle costs N us\n"
	  "of CPU after each burst (0: sleep at once)", set_poll,
	  NUM(0, 1000000, POLL_US_DEFAULT)),
	OPT(34, "engines", "N", "data path threads: engine k runs flow queues k, k+N, ...\n"
	  "(their QPs, sockets, send queues); at most the interface's\n"
	  "RX queues and the flow queues (default 0: one per CPU)", set_engines,
	  NUM(0, XHCA_ENGINES_MAX, 0)),
	OPT(21, "group", "GROUP", "the control socket is this group's too (mode 0660): its\n"
	  "members run verbs programs, each on its own objects only;\n"
	  "default: root alone (0600)", set_group,
	  .hint = "no such group (see getent group)"),
	OPT(23, "mtu", "N", "set IFNAME's MTU at start (path MTU 4096 needs 4200 at least;\n"
	  "default: leave it)", set_mtu, NUM(68, 65535, 0)),
	OPT(24, "config", "FILE", "read the settings from FILE (default " XHCA_CONF_DIR
	  "/IFNAME.conf\nif it is there): NAME = VALUE lines, NAME a long option;\n"
	  "the command line overrides them", set_config, .flags = XHCA_OPT_CMDLINE),
	OPT(26, "no-cm", NULL, "no connection manager: QP1 is not taken, rdma_cm programs\n"
	  "cannot connect (the CLI may make QP1 itself)", set_no_cm),
	OPT(35, "no-kfuncs", NULL, "load xhca_rx as on a kernel without the kfuncs it may use\n"
	  "(bpf_dynptr_copy, Linux 6.15): xhcad places what they would\n"
	  "(xlate_nocopy in xhca stats); for tests and comparisons",
	  set_no_kfuncs),
	OPT(25, "check-config", NULL, "check the file of IFNAME (or --config FILE) and exit:\n"
	  "each mistake with its line, exit 1 on any", set_check,
	  .flags = XHCA_OPT_CMDLINE),
	OPT(27, "unload", NULL, "take down what --keep left on IFNAME and exit: xhca_rx\n"
	  "detached if it is the one on the maps pinned (--pin-dir,\n"
	  "IFNAME.conf's), the pins removed; refused while an xhcad\n"
	  "serves IFNAME or another program is attached", set_unload,
	  .flags = XHCA_OPT_CMDLINE),
	{ .name = "verbose", .key = 'v', .help = "more detail (libbpf and libxdp debug output)",
	  .set = set_verbose },
	{ .name = "help", .key = 'h', .help = "this text" },
	{ 0 },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: xhcad IFNAME [options]\n"
		   "       xhcad --check-config [IFNAME | --config FILE]\n"
		   "       xhcad --unload IFNAME [--pin-dir DIR]\n"
		   "Loads xhca_rx on IFNAME, pins its maps and serves " XHCA_RUN_DIR
		   "/IFNAME.sock.\n");
	xhca_opt_usage(f, xopts, 25);
}

/* Parses the options into o; returns 0 to go on, or main's exit code + 1. */
static int parse_opts(int argc, char **argv, struct opts *o, int *next)
{
	switch (xhca_opt_parse("xhcad", xopts, argc, argv, 0, o, next)) {
	case 0:
		return 0;
	case XHCA_OPT_HELP:
		usage(stdout);
		return 1;
	default:
		return 3;
	}
}

/* ---- the configuration file ---------------------------------------------- */

/* --config FILE, else IFNAME's file in XHCA_CONF_DIR; NULL: neither given. */
static const char *conf_path(const char *file, const char *ifname, char *buf, size_t len)
{
	if (file)
		return file;
	if (!ifname || snprintf(buf, len, XHCA_CONF_DIR "/%s.conf", ifname) >= (int)len)
		return NULL;
	return buf;
}

/* xhcad --check-config [IFNAME | --config FILE]: main's exit code. */
static int check_config(const char *file, const char *ifname)
{
	char buf[PATH_MAX];
	const char *path = conf_path(file, ifname, buf, sizeof(buf));
	struct xhcad *scratch = calloc(1, sizeof(*scratch));
	struct opts o = { .d = scratch };
	int n;

	if (!path || !scratch) {
		fprintf(stderr, "xhcad: --check-config: give IFNAME or --config FILE\n");
		free(scratch);
		return 2;
	}
	n = xhca_opt_file("xhcad", xopts, path, &o, &o.conf_text);
	free(o.conf_text);
	free(scratch);
	if (n == -ENOENT && !file)
		fprintf(stderr, "xhcad: %s: no such file (xhcad %s starts with the defaults)\n",
			path, ifname);
	else if (n < 0)
		fprintf(stderr, "xhcad: %s: cannot read it: %s\n", path, strerror(-n));
	else if (n)
		fprintf(stderr, "xhcad: %s: %d mistake%s\n", path, n, n == 1 ? "" : "s");
	else
		printf("xhcad: %s: no mistakes\n", path);
	return n ? 1 : 0;
}

/* The configuration file into o: --config FILE, or IFNAME's if it is
 * there. Returns 0, or main's exit code + 1 (2: bad usage, which the
 * unit does not restart on). */
static int read_config(struct opts *o, const char *file, const char *ifname)
{
	char buf[PATH_MAX];
	const char *path = conf_path(file, ifname, buf, sizeof(buf));
	int n = path ? xhca_opt_file("xhcad", xopts, path, o, &o->conf_text) : -ENOENT;

	if (n == -ENOENT && !file)
		return 0; /* no file: the defaults */
	if (n < 0)
		fprintf(stderr, "xhcad: %s: cannot read it: %s\n", path, strerror(-n));
	else if (n)
		fprintf(stderr, "xhcad: %s: %d mistake%s (xhcad --check-config); not started\n",
			path, n, n == 1 ? "" : "s");
	else
		snprintf(o->conf, sizeof(o->conf), "%s", path);
	return n ? 3 : 0;
}

/* The settings: the command line's over the configuration file's. The
 * command line is read first into scratch settings, for --config,
 * --check-config and the interface, then again after the file. Returns 0
 * to go on (*next: the interface's argument), or main's exit code + 1. */
static int configure(int argc, char **argv, struct opts *o, int *next)
{
	struct xhcad *scratch = calloc(1, sizeof(*scratch));
	struct opts first = { .d = scratch };
	const char *ifname;
	int rc = scratch ? parse_opts(argc, argv, &first, next) : 2;

	free(scratch); /* (what the first reading keeps points into argv) */
	if (rc)
		return rc;
	ifname = *next == argc - 1 ? argv[*next] : NULL;
	if (*next < argc - 1 || (!ifname && !first.check)) {
		fprintf(stderr, "xhcad: give exactly one interface name (xhcad IFNAME)\n");
		usage(stderr);
		return 3;
	}
	if (first.check)
		return check_config(first.config, ifname) + 1;
	rc = read_config(o, first.config, ifname);
	return rc ? rc : parse_opts(argc, argv, o, next);
}

/* --mtu: the interface's MTU, before xhca_rx is attached or taken back
 * (an MTU it has already is left alone). */
static int link_set_mtu(const char *ifname, __u32 mtu)
{
	struct ifreq ifr = { 0 };
	int err = 0, fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (!ioctl(fd, SIOCGIFMTU, &ifr) && ifr.ifr_mtu == (int)mtu)
		goto out;
	ifr.ifr_mtu = (int)mtu;
	if (ioctl(fd, SIOCSIFMTU, &ifr)) {
		err = -errno;
		pr_warn("--mtu %u: %s refuses it: %s (ip -d link show %s: minmtu, maxmtu)\n", mtu,
			ifname, strerror(-err), ifname);
	}
out:
	close(fd);
	return err;
}

/* What xhca_rx needs of the kernel: a kernel that lacks any is refused,
 * naming it. */
static int kernel_check(struct xhcad *d)
{
	struct utsname u;
	char miss[512];

	if (!uname(&u))
		snprintf(d->kernel, sizeof(d->kernel), "%s", u.release);
	if (kfeat_missing(kfeat_probe_need, NULL, miss, sizeof(miss))) {
		pr_warn("this kernel (%s) lacks what xhca_rx needs: %s; xhca needs Linux %d.%d or "
			"later\n", d->kernel, miss, KFEAT_MIN_MAJOR, KFEAT_MIN_MINOR);
		return -ENOTSUP;
	}
	if (kfeat_older(d->kernel, KFEAT_MIN_MAJOR, KFEAT_MIN_MINOR))
		pr_warn("Linux %s is older than %d.%d, the oldest xhca is tested on\n", d->kernel,
			KFEAT_MIN_MAJOR, KFEAT_MIN_MINOR);
	return 0;
}

/* What the kernel lacks of what xhca uses where it has a slower path
 * (XHCA_KFEATS), once the sockets are made: in one line. */
static void kernel_features(struct xhcad *d)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int copy = kfeat_has_kfunc(btf, "bpf_dynptr_copy");
	char line[1024];

	d->kern_lacks = (!copy || d->no_kfuncs ? XHCA_KF(KFUNC_COPY) : 0) |
			(xsk_multibuf(d) ? 0 : XHCA_KF(XSK_SG)) |
			(kfeat_has_trampoline(btf) ? 0 : XHCA_KF(TRAMPOLINE));
	d->kern_forced = copy && d->no_kfuncs ? XHCA_KF(KFUNC_COPY) : 0;
	btf__free(btf);
	kfeat_describe(d->kern_lacks, d->kern_forced, line, sizeof(line));
	pr_info("kernel %s %s\n", d->kernel, line);
}

/* --xdp-ack auto: on, but where xhca_rx runs native on a veth. A veth
 * hands a frame XDP_TX sends to its peer's NAPI, which the peer has only
 * when it runs an XDP program (or GRO, which holds the frame until its next
 * packet): xhcad cannot see the peer, so xhcad sends the ACKs there. In skb
 * mode XDP_TX goes out as any packet does; a NIC sends it itself. */
static void xdp_ack_auto(struct xhcad *d, const char *drv)
{
	if (d->xdp_ack != XDP_ACK_AUTO)
		return;
	d->xdp_ack = d->native && !strcmp(drv, "veth") ? XDP_ACK_OFF : XDP_ACK_ON;
	if (d->recv_fast)
		pr_info("--xdp-ack auto: %s (driver %s, %s mode)%s\n",
			d->xdp_ack == XDP_ACK_ON ? "on" : "off", drv,
			d->native ? "native" : "skb",
			d->xdp_ack == XDP_ACK_ON ? ""
						 : ": a veth's peer may run no XDP program, "
						   "xhcad sends the ACKs");
}

/* --steer auto: on for a veth, where a frame's TX queue is its RX queue
 * at the peer; a NIC's receiver hashes the frame to a queue itself. */
static void steer_auto(struct xhcad *d, const char *drv)
{
	if (d->steer != STEER_AUTO)
		return;
	d->steer = !strcmp(drv, "veth") ? STEER_ON : STEER_OFF;
	d->steer_auto = 1;
}

/* Load (or adopt) the program, rebuild the tables, serve until a signal,
 * and take it all down again. Returns main's exit code. */
static int serve(struct xhcad *d, const struct opts *o, int lfd)
{
	int err = o->mtu ? link_set_mtu(d->ifname, o->mtu) : 0;
	char drv[32]; /* (the driver: what --xdp-ack and --steer auto go by) */

	if (!err)
		err = kernel_check(d);
	if (!err)
		err = d->adopt ? xhcad_adopt(d) : xhcad_load(d);
	if (err)
		return 1;
	if (net_driver(d->ifname, drv, sizeof(drv)))
		snprintf(drv, sizeof(drv), "%s", "unknown");
	xdp_ack_auto(d, drv); /* (the mode known, before the QPs) */
	steer_auto(d, drv);
	xsk_engines(d); /* (before the QPs: each goes to its engine) */
	err = qp_table_init(d);
	if (!err)
		err = qp_reconcile(d);
	if (err)
		pr_warn("cannot read the QP table: %s\n", strerror(-err));
	if (!err) {
		err = host_init(d, o->mode, o->high, o->low);
		if (err)
			pr_warn("cannot set up the host interface: %s\n", strerror(-err));
	}
	if (!err)
		net_local_mac(d); /* (once: every engine reads it) */
	if (!err && !d->no_cm) { /* the connection manager: QP1's MADs */
		err = cm_init(d);
		err = err ?: qp_gsi_ensure(d);
	}
	if (!err)
		ibview_update(d); /* (after lo_init: it watches the addresses) */
	if (!err) {
		kernel_features(d);
		pr_info("serving %s: xhca_rx id %u (%s mode), %u local QPs, control %s\n",
			d->ifname, d->prog_id, d->native ? "native" : "skb", d->max_qps,
			d->sock_path);
		err = xhcad_run(d, lfd);
		if (err)
			pr_warn("main loop: %s\n", strerror(-err));
		pr_info("stopping (%s)%s\n", strsignal(xhcad_stop ? xhcad_stop : SIGTERM),
			d->keep ? ": program and maps kept" : "");
	}
	host_fini(d); /* the proxy still reaches CQs: sessions after */
	sq_fini(d);
	cq_fini(d);
	session_fini(d);
	qp_table_free(d);
	if (!d->keep) {
		state_remove(d); /* the maps go: nothing to come back to */
		ibview_remove(d); /* (kept: views bound now see the next xhcad's) */
	}
	xhcad_unload(d);
	return err ? 1 : 0;
}

/* The names that follow from the interface's: pin directory, socket. */
static int names(struct xhcad *d, const char *ifname)
{
	if (strlen(ifname) >= sizeof(d->ifname)) {
		fprintf(stderr, "xhcad: interface name %s is too long\n", ifname);
		return -ENAMETOOLONG;
	}
	strcpy(d->ifname, ifname);
	if (!d->pin_dir[0])
		snprintf(d->pin_dir, sizeof(d->pin_dir), XHCA_PIN_ROOT "/%s", d->ifname);
	snprintf(d->sock_path, sizeof(d->sock_path), XHCA_RUN_DIR "/%s.sock", d->ifname);
	snprintf(d->view_dir, sizeof(d->view_dir), XHCA_RUN_DIR "/%s.ib", d->ifname);
	return 0;
}

/* The interface and the names that follow from it; main's exit code, or 0. */
static int interface(struct xhcad *d, const struct opts *o, const char *ifname)
{
	if (names(d, ifname))
		return 2;
	d->ifindex = if_nametoindex(d->ifname);
	if (!d->ifindex) {
		fprintf(stderr, "xhcad: interface %s not found (ip link show)\n", d->ifname);
		return 1;
	}
	d->max_qps = o->max_qps ? o->max_qps : XHCA_MAX_QPS_DEFAULT;
	if (d->adopt && o->max_qps)
		pr_warn("--max-qps is ignored with --adopt: the maps exist already\n");
	if (d->adopt && d->no_kfuncs) {
		pr_warn("--no-kfuncs is ignored with --adopt: the program is the one attached\n");
		d->no_kfuncs = 0;
	}
	return 0;
}

/* Everything after the settings: main's exit code. */
static int run(struct xhcad *d, struct opts *o, const char *ifname)
{
	/* Kernels before 5.11 charge BPF memory to RLIMIT_MEMLOCK. */
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	struct sigaction sa = { .sa_handler = on_signal };
	int lfd, err;

	xhca_log_init("xhcad", o->verbose ? XHCA_LOG_DEBUG : XHCA_LOG_INFO);
	if (o->conf[0])
		pr_info("settings from %s (the command line over them)\n", o->conf);
	err = interface(d, o, ifname);
	if (err)
		return err;
	d->start_ms = now_ms();
	setrlimit(RLIMIT_MEMLOCK, &rl);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (ensure_bpffs(d->pin_dir))
		return 1;
	/* Claim the socket first: a second xhcad for the same interface must
	 * not touch the program or the maps. */
	lfd = ctl_listen(d);
	if (lfd < 0)
		return 1;
	err = serve(d, o, lfd);
	close(lfd);
	unlink(d->sock_path);
	return err;
}

/* xhcad --unload IFNAME: main's exit code (0: taken down, or nothing was
 * kept; 1: refused or failed, nothing changed). What it did on stdout. */
static int unload(struct xhcad *d, const struct opts *o, const char *ifname)
{
	struct unload_done u = { 0 };
	int lfd, err;

	xhca_log_init("xhcad", o->verbose ? XHCA_LOG_DEBUG : XHCA_LOG_INFO);
	if (names(d, ifname))
		return 2;
	/* 0: the interface is gone, and its program with it; the pins stay
	 * until removed */
	d->ifindex = (int)if_nametoindex(d->ifname);
	/* The socket claimed as a starting xhcad claims it: refused while an
	 * xhcad serves the interface, and none can start meanwhile. */
	lfd = ctl_listen(d);
	if (lfd < 0) {
		fprintf(stderr, "xhcad: --unload %s: refused, nothing changed (systemctl stop "
			"xhcad@%s, or stop the xhcad that serves it, first)\n",
			d->ifname, d->ifname);
		return 1;
	}
	if (d->ifindex && steer_unload(d))
		printf("xhcad: %s: detached xhca_steer from the egress hook\n", d->ifname);
	err = xhcad_unload_kept(d, &u);
	if (err == -ENOENT)
		printf("xhcad: %s: nothing kept: no xhca maps pinned in %s; nothing done\n",
		       d->ifname, d->pin_dir);
	else if (err == -EBUSY)
		fprintf(stderr, "xhcad: --unload %s: refused, nothing changed\n", d->ifname);
	else if (err)
		fprintf(stderr, "xhcad: --unload %s: failed: %s\n", d->ifname, strerror(-err));
	else if (u.prog_id)
		printf("xhcad: %s: detached xhca_rx (id %u, %s mode%s); removed %d pins%s%s\n",
		       d->ifname, u.prog_id, u.mode,
		       u.behind_dispatcher ? ", from libxdp's dispatcher" : "", u.pins,
		       u.dir_gone ? " and " : " in ", d->pin_dir);
	else
		printf("xhcad: %s: no xhca_rx of the pinned maps attached (%s); removed %d "
		       "pins%s%s\n", d->ifname,
		       d->ifindex ? "nothing to detach" : "no such interface here",
		       u.pins, u.dir_gone ? " and " : " in ", d->pin_dir);
	if (!err || err == -ENOENT)
		state_remove(d); /* the restart record of maps that are gone */
	close(lfd);
	unlink(d->sock_path);
	return err && err != -ENOENT ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct xhcad d = {
		.native = 1, .prog_fd = -1, .m = { .dstate = -1 },
		.mr = { .barrier_fd = -1, .barrier_inner = -1 },
		.nflowq = XHCA_FLOWQ_DEFAULT, .mcast_threshold = MCAST_THRESHOLD_DEFAULT,
		.mcast_credits = MCAST_CREDITS_DEFAULT, .umem_frames = UMEM_FRAMES_DEFAULT,
		.jumbo_slots = -1, .ring_size = RING_SIZE, .poll_ns = POLL_US_DEFAULT * 1000ull,
		.pxc = { .high = PROXY_LIMIT_DEFAULT, .low = PROXY_LIMIT_DEFAULT / 2,
			 .timeout_ns = PROXY_TIMEOUT_MS_DEFAULT * 1000000ull },
		.app = { .lim_clients = USER_CLIENTS_DEFAULT },
		.cq_stall_ns = CQ_STALL_MS_DEFAULT * 1000000ull, .gso = 1, .direct = 1, .recv_fast = 1,
		.xdp_ack = XDP_ACK_AUTO,
		.steer = STEER_AUTO,
	};
	struct opts o = { .d = &d, .high = HIGH_DEFAULT, .low = HIGH_DEFAULT / 4,
			  .mode = FQ_SCHED_DRR };
	int err, next;

	d.neng = 0; /* (--engines: one per CPU) */
	for (__u32 k = 0; k < XHCA_ENGINES_MAX; k++) {
		d.eng[k].id = k;
		d.eng[k].wake_fd = -1;
	}
	eng_self = &d.eng[0]; /* (the main thread is engine 0) */

	err = configure(argc, argv, &o, &next);
	if (err)
		err = err - 1;
	else
		err = o.unload ? unload(&d, &o, argv[next]) : run(&d, &o, argv[next]);
	free(o.conf_text); /* (the settings' strings: xhcad is done with them) */
	return err;
}
