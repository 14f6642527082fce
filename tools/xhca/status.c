/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca status: the daemon, its program, maps, queues and counters.
 */
#include "cli.h"

/* The connection manager's ids and the MADs it exchanged on QP1. */
static void status_cm(const struct xhca_status *s)
{
	out_open("cm", "cm:           ");
	out_bool("enabled", NULL, !s->no_cm);
	out_text("%s", s->no_cm ? "off (--no-cm), " : "");
	out_u64("ids", "%llu ids", s->cm_ids);
	out_u64("listening", " (%llu listening", s->cm_listening);
	out_u64("established", ", %llu connected)", s->cm_established);
	out_u64("sent", "; %llu MADs sent", s->cm_sent);
	out_u64("resent", " (%llu again)", s->cm_resent);
	out_u64("received", ", %llu received", s->cm_received);
	out_u64("dropped", " (%llu dropped)", s->cm_dropped);
	out_u64("timeouts", ", %llu timeouts", s->cm_timeouts);
	out_u64("rejects", ", %llu rejects\n", s->cm_rejects);
	out_close(NULL);
}

/* Frames to this host's own addresses (loopback.c): never on the wire. */
static void status_lo(const struct xhca_status *s)
{
	out_open("loopback", "loopback:     ");
	out_u64("self", "%llu frames to this interface", s->lo.self);
	out_u64("mcast", ", %llu multicast copies", s->lo.mcast);
	out_u64("mcast_wire", " (%llu multicast frames with no member here)", s->lo.mcast_wire);
	out_u64("peer_sent", ", %llu to other devices of this host", s->lo.peer_sent);
	out_u64("peer_received", ", %llu from them;\n              ", s->lo.peer_received);
	out_u64("to_flowq", "xhca_rx: %llu to flow queues", s->lo.to_flowq);
	out_u64("consumed", ", %llu ended there (placed or dropped)", s->lo.consumed);
	out_u64("passed", ", %llu not RoCE", s->lo.passed);
	out_u64("held", "; %llu held now", s->lo.held);
	out_u64("no_room", ", %llu waits for room", s->lo.no_room);
	out_u64("peer_full", ", %llu for a device's socket", s->lo.peer_full);
	out_u64("peer_unreachable", ";\n              lost: %llu to a device no xhcad serves",
		s->lo.peer_unreachable);
	out_u64("peer_refused", ", %llu from a process not root", s->lo.peer_refused);
	out_u64("peer_too_long", ", %llu too long", s->lo.peer_too_long);
	out_u64("errors", ", %llu failed test runs", s->lo.errors);
	out_u64("runs", NULL, s->lo.runs);
	out_u64("addr_reads", NULL, s->lo.addr_reads);
	out_close("\n");
}

/* Host memory, memory regions and windows, the canary. */
static void status_memory(const struct xhca_status *s)
{
	out_u64("hostmem_used", "hostmem:      %llu", s->hostmem_used);
	out_u64("hostmem_bytes", " of %llu bytes in use", s->hostmem_bytes);
	out_u64("hostmem_blocks", ", %llu blocks of 4 MiB", s->hostmem_blocks);
	out_u64("session_mb", "; a session %llu MiB at most",
		(__u64)s->session_blocks * (XHCA_BLOCK_PAGES * XHCA_PAGE_SIZE >> 20));
	out_u64("hostmem_refused", " (%llu allocations refused)\n", s->hostmem_refused);
	out_open("limits", "limits:       ");
	out_u64("qps", "a session %llu QPs", s->lim_qps);
	out_u64("cqs", ", %llu CQs", s->lim_cqs);
	out_u64("mrs", ", %llu regions and windows (0: the device's)", s->lim_mrs);
	out_u64("user_clients", "; a user %llu connections", s->lim_clients);
	out_u64("refused_clients", " (%llu refused", s->refused_clients);
	out_u64("stalled_clients", ", %llu dropped mid-message)", s->stalled_clients);
	out_close("\n");
	out_u64("ring_faults", "ring faults:  %llu QPs failed for garbage in their queues' "
		"indexes", s->ring_faults);
	out_u64("cq_overruns", "; %llu CQs overrun", s->cq_overruns);
	out_u64("cq_stall_ms", " (full %llu ms)\n", s->cq_stall_ms);
	out_u64("mrs_in_use", "mrs:          %llu", s->mrs_in_use);
	out_u64("max_mrs", " of %llu in use", s->max_mrs);
	out_bool("fragment", NULL, s->fragment);
	out_text("%s", s->fragment ? ", --fragment (none pre-translated)" : "");
	out_u64("barriers", "; %llu invalidation barriers\n", s->barriers);
	out_open("mw", "mws:          ");
	out_u64("in_use", "%llu memory windows", s->mw.in_use);
	out_u64("binds", "; %llu binds", s->mw.binds);
	out_u64("bind_errors", " (%llu refused)", s->mw.bind_errors);
	out_u64("invalidations", ", %llu invalidations", s->mw.invalidations);
	out_u64("inv_unknown", ", %llu SEND with Invalidate naming no window of its QP",
		s->mw.inv_unknown);
	out_close("\n");
	out_bool("canary", NULL, s->canary);
	out_u64("canary_violations", s->canary ? "canary:       on, %llu violations\n" : NULL,
		s->canary_violations);
}

/* The RC responder and the requester (respond.c, request.c). */
static void status_rr(const struct xhca_status *s)
{
	out_open("responder", "responder:    ");
	out_u64("acks", "%llu ACKs", s->resp.acks);
	out_u64("seq_naks", ", %llu sequence NAKs", s->resp.seq_naks);
	out_u64("rnr_naks", ", %llu RNR NAKs", s->resp.rnr_naks);
	out_u64("dups", ", %llu duplicates answered", s->resp.dups);
	out_u64("replays", " (%llu responses sent again", s->resp.replays);
	out_u64("dup_unknown", ", %llu unknown)", s->resp.dup_unknown);
	out_u64("rewinds", ", %llu rewinds", s->resp.rewinds);
	out_u64("bad_icrc", ", %llu bad ICRC", s->resp.bad_icrc);
	out_u64("credit_acks", ", %llu credit updates", s->resp.credit_acks);
	out_u64("gso_frames", ", %llu READ response packets in GSO sends", s->resp.gso_frames);
	out_close("\n");
	out_open("requester", "requester:    ");
	out_u64("wqes", "%llu send requests", s->req.wqes);
	out_u64("packets", ", %llu packets", s->req.packets);
	out_u64("ackreqs", " (%llu asking for an ACK", s->req.ackreqs);
	out_u64("gso_frames", ", %llu in", s->req.gso_frames);
	out_u64("gso_sends", " %llu GSO sends", s->req.gso_sends);
	out_u64("gso_fallbacks", " (%llu refused,", s->req.gso_fallbacks);
	out_u64("gso_lost", " %llu frames lost,", s->req.gso_lost);
	out_u64("gso_drops", " %llu dropped by the interface)", s->req.gso_drops);
	out_u64("bytes", ", %llu payload bytes", s->req.bytes);
	out_u64("retransmits", ", %llu sent again)", s->req.retransmits);
	out_u64("completions", ", %llu completions;\n              ", s->req.completions);
	out_u64("timeouts", "%llu timeouts", s->req.timeouts);
	out_u64("seq_naks", ", %llu sequence NAKs", s->req.seq_naks);
	out_u64("rnr_naks", " and %llu RNR NAKs received", s->req.rnr_naks);
	out_u64("errors", ", %llu errors", s->req.errors);
	out_u64("stale", ", %llu stale responses", s->req.stale);
	out_u64("no_neigh", ", %llu waits for a neighbour", s->req.no_neigh);
	out_u64("credit_waits", ", %llu waits for credits", s->req.credit_waits);
	out_u64("credit_updates", " (%llu updates taken)", s->req.credit_updates);
	out_u64("direct", ";\n              %llu sent by programs themselves", s->req.direct);
	out_u64("direct_refused", " (%llu refused)", s->req.direct_refused);
	out_close("\n");
}

/* The running kernel and what it lacks of what xhca uses (XHCA_KFEATS):
 * JSON says per feature whether it has it. */
#define KF_ROW(n, k, w, s, c) { k, w, s, c },
static const struct {
	const char *key, *what, *since, *cost;
} kf_rows[] = { XHCA_KFEATS(KF_ROW) };
#undef KF_ROW

static void status_kernel(const struct xhca_status *s, const char *release)
{
	out_open("kernel", "kernel:       ");
	out_str("release", "%s", release);
	out_text("%s", s->kern_lacks ? "" : ", has every feature xhca uses");
	for (int i = 0; i < XHCA_KF_NR; i++) {
		int lacks = !!(s->kern_lacks & (1u << i));

		out_bool(kf_rows[i].key, NULL, !lacks);
		if (lacks)
			out_text(";\n              lacks %s (%s%s): %s", kf_rows[i].what,
				 kf_rows[i].since,
				 (s->kern_forced & (1u << i)) ? "; --no-kfuncs" : "",
				 kf_rows[i].cost);
	}
	out_close("\n");
}

/* Multicast replication and the UMEM's frames. */
static void status_mcast_umem(const struct xhca_status *s)
{
	out_open("mcast", "mcast:        ");
	out_u64("groups", "%llu groups", s->mcast_groups);
	out_u64("waiting", ", %llu packets waiting for replication", s->mcast_waiting);
	out_u64("threshold", s->mcast_threshold ? " (threshold %llu),\n              "
						: " (threshold %llu: none),\n              ",
		s->mcast_threshold);
	out_u64("replicated", "%llu replicated", s->mcast_replicated);
	out_u64("max_refs", ", largest reference count %llu", s->mcast_max_refs);
	out_u64("credit_stalls", ", %llu credit stalls", s->mcast_credit_stalls);
	out_u64("credits", " (%llu credits a flow queue)", s->mcast_credits);
	out_u64("stale", NULL, s->mcast_stale);
	out_close("\n");
	out_open("umem", "umem frames:  ");
	out_u64("frames", "%llu", s->umem_frames);
	out_u64("free", " = %llu free", s->frames_free);
	out_u64("fill", " + %llu fill", s->frames_fill);
	out_u64("kernel", " + %llu kernel", s->frames_kernel);
	out_u64("rx", " + %llu rx", s->frames_rx);
	out_u64("held", " + %llu held\n", s->frames_held);
	out_u64("jumbo_slots", "jumbo slots:  %llu", s->jumbo_slots);
	out_u64("jumbo_free", " (%llu free)", s->jumbo_free);
	out_u64("jumbo_frames", ": %llu frames made one", s->jumbo_frames);
	out_u64("jumbo_drops", ", %llu dropped (no slot free, or over one)\n", s->jumbo_drops);
	out_close(NULL);
}

/* The daemon's status: one call per value, text or JSON (out.c). */
static void status_print(const struct xhca_status *s, const char *ifn, const char *pin,
			 const char *mode, const char *by, const char *sch, const char *xm,
			 const char *kern)
{
	typedef unsigned long long ull;

	out_open(NULL, NULL);
	out_str("ifname", "ifname:       %s\n", ifn);
	out_u64("ifindex", "ifindex:      %llu\n", s->ifindex);
	out_u64("prog_id", "prog_id:      %llu\n", s->prog_id);
	out_str("mode", "mode:         %s\n", mode);
	out_str("attached_by", "attached_by:  %s\n", by);
	out_str("pin_dir", "pin_dir:      %s\n", pin);
	out_text("socket:       %s/%s.sock\n", XHCA_RUN_DIR, ifname);
	out_u64("pid", "pid:          %llu\n", s->pid);
	out_u64("uptime_ms", NULL, s->uptime_ms);
	out_text("uptime:       %llu.%03llu s\n", (ull)s->uptime_ms / 1000,
		 (ull)s->uptime_ms % 1000);
	out_u64("qps_in_use", "qps_in_use:   %llu\n", s->qps_in_use);
	out_u64("max_qps", "max_qps:      %llu\n", s->max_qps);
	out_u64("next_qpn", "next_qpn:     0x%06llx\n", s->next_qpn);
	out_u64("abi_version", "abi_version:  %llu\n", s->abi_version);
	out_u64("keep", NULL, s->keep);
	out_text("keep:         %s\n", s->keep ? "yes (program stays attached on exit)" : "no");
	out_u64("repaired", "repaired:     %llu\n", s->repaired);
	out_u64("sessions", "sessions:     %llu\n", s->sessions);
	out_u64("flowqs", "flowqs:       %llu", s->nflowq);
	out_u64("rx_queues", " on %llu RX queues", s->nrxq);
	out_str("xsk_mode", ", AF_XDP %s mode", xm);
	out_str("sched", ", scheduler %s", sch);
	out_u64("engines", ", %llu engine(s)\n", s->engines);
	status_kernel(s, kern);
	out_u64("bus_rate", s->bus_rate ? "bus_rate:     %llu bytes/s\n" : "bus_rate:     unlimited\n",
		s->bus_rate);
	status_memory(s);
	/* every frame xhcad sent: requests, responses, ACKs and NAKs */
	out_u64("tx_frames", "transmit:     %llu frames sent (requests, responses, ACKs, NAKs)",
		s->tx_frames);
	out_u64("tx_full", ", %llu not sent (TX ring full)", s->tx_full);
	out_u64("naks", "; %llu of them NAKs\n", s->naks);
	out_u64("poll_us", "loop:         busy poll %llu us after work", s->poll_us);
	out_u64("sleeps", "; %llu sleeps", s->sleeps);
	out_u64("polled", ", %llu wakeups spared by polling", s->polled);
	out_u64("handbacks", ", the CPU yielded %llu times as work ran out\n", s->handbacks);
	out_u64("xdp_ack", NULL, s->xdp_ack);
	out_text("xdp_ack:      %s\n",
		 s->xdp_ack == 1   ? "on (xhca_rx sends the ACKs of the SENDs and WRITEs it places: recv_acked, placed_acked)"
		 : s->xdp_ack == 2 ? "off: the interface dropped frames sent by XDP_TX"
				   : "off");
	out_u64("steer", NULL, s->steer);
	out_text("steer:        %s", s->steer ? "on (request runs to the peer engine's TX queue)"
					      : "off");
	out_u64("tx_queues", " of %llu TX queues", s->tx_queues);
	out_u64("rx_own", "; frames taken from the engines' own RX queues %llu", s->rx_own);
	out_u64("rx_other", ", from the others' %llu\n", s->rx_other);
	status_rr(s);
	status_mcast_umem(s);
	status_lo(s);
	status_cm(s);
	out_close(NULL);
}

const char status_text[] =
	"Shows the daemon: interface, program, attach mode, pinned maps, QPs in use,\n"
	"host memory, memory regions, what it transmitted, its responder and\n"
	"requester counters, multicast, UMEM frames.";

int do_status(const struct call *call, int argc, char **argv)
{
	const char *op = call->op;
	char ifn[FIELD_SIZE(struct xhca_status, ifname) + 1];
	char pin[FIELD_SIZE(struct xhca_status, pin_dir) + 1];
	char mode[FIELD_SIZE(struct xhca_status, mode) + 1];
	char by[FIELD_SIZE(struct xhca_status, attached_by) + 1];
	char sch[FIELD_SIZE(struct xhca_status, sched) + 1];
	char xm[FIELD_SIZE(struct xhca_status, xsk_mode) + 1];
	char kern[FIELD_SIZE(struct xhca_status, kernel) + 1];
	struct xhca_status *s = NULL;
	__u32 len = 0;
	int rc;

	rc = parse_word(call, argc, argv, NULL);
	if (rc)
		return rc;
	rc = request(op, XHCA_CTL_STATUS, NULL, 0, (void **)&s, &len);
	if (rc)
		goto out;
	if (len < sizeof(*s)) {
		rc = short_reply(op, len, sizeof(*s));
		goto out;
	}
	field_str(ifn, sizeof(ifn), s->ifname, sizeof(s->ifname));
	field_str(pin, sizeof(pin), s->pin_dir, sizeof(s->pin_dir));
	field_str(mode, sizeof(mode), s->mode, sizeof(s->mode));
	field_str(by, sizeof(by), s->attached_by, sizeof(s->attached_by));
	field_str(sch, sizeof(sch), s->sched, sizeof(s->sched));
	field_str(xm, sizeof(xm), s->xsk_mode, sizeof(s->xsk_mode));
	field_str(kern, sizeof(kern), s->kernel, sizeof(s->kernel));
	if (s->abi_version != XHCA_ABI_VERSION)
		pr_warn("warning: xhcad uses map ABI %u, this xhca was built for %u; update one of "
			"them\n", s->abi_version, XHCA_ABI_VERSION);
	status_print(s, ifn, pin, mode, by, sch, xm, kern);
out:
	free(s);
	return rc;
}
