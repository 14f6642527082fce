/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The interface's queues, and --steer: a QP's frames on its engine's queue.
 *
 * Queue q is engine q % N's (its TX socket is RX queue q's), and with
 * --steer a QP belongs to the engine of the queue its QPN hashes to
 * (steer_queue; qp.c). On a veth
 * a frame arrives on the RX queue of the TX queue it left by at the peer,
 * so a sender that puts the frames for QPN n on TX queue steer_queue(n)
 * delivers them to the peer engine that owns n, when both ends count the
 * same queues and hash alike, as two xhcads on a veth pair do. Another
 * RoCE stack's frames come on whatever queue, and an engine still takes
 * its flow queues' frames from every queue.
 *
 * The frames steered are the UDP GSO runs (gso.c: a QP's requests; the RC
 * responder's READ responses, ACKs, NAKs and ATOMIC ACKs, which go by runs
 * when steering: resp_tx_wire). They leave by a packet socket, whose TX
 * queue the kernel picks after the tc egress hook: each engine has a socket
 * per TX queue, marked XHCA_STEER_MARK | queue, and xhca_steer
 * (bpf/steer.bpf.c), a filter on the interface's clsact egress hook, turns
 * the mark into the queue. The TX ring's frames (UD, the CM, the proxy's)
 * leave by the sending engine's queue as before: an AF_XDP socket is bound
 * to one.
 *
 * The filter is this xhcad's while it runs, at its own handle and priority
 * (XHCA_STEER_HANDLE, XHCA_STEER_PRIO): attached at start (one an earlier
 * xhcad left is replaced), detached at exit even with --keep (the marks
 * are only ever set by its sockets), the clsact qdisc removed when this
 * xhcad added it. `xhcad --unload` takes down one left by a crash.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bpf/libbpf.h>
#include <netlink/route/classifier.h>
#include <netlink/route/qdisc.h>
#include <linux/pkt_sched.h>
#include "log.h"
#include "xhcad_device.h"
#include "steer.skel.h"

void dev_queues(const char *ifname, __u32 *rx, __u32 *tx)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	*rx = *tx = 1;
	if (fd < 0)
		return;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&ch;
	if (!ioctl(fd, SIOCETHTOOL, &ifr)) {
		*rx = ch.rx_count > ch.combined_count ? ch.rx_count : ch.combined_count;
		*tx = ch.tx_count > ch.combined_count ? ch.tx_count : ch.combined_count;
	}
	close(fd);
	*rx = *rx ? (*rx > XHCA_RXQ_MAX ? XHCA_RXQ_MAX : *rx) : 1;
	*tx = *tx ? (*tx > XHCA_RXQ_MAX ? XHCA_RXQ_MAX : *tx) : 1;
}

__u32 steer_hash(__u32 qpn)
{
	return qpn * 2654435761u; /* Fibonacci hashing: neighbours spread */
}

__u32 steer_queue(__u32 qpn, __u32 nq)
{
	return (__u32)(((__u64)steer_hash(qpn) * nq) >> 32);
}

static void hook_of(const struct xhcad *d, struct bpf_tc_hook *h)
{
	memset(h, 0, sizeof(*h));
	h->sz = sizeof(*h);
	h->ifindex = d->ifindex;
	h->attach_point = BPF_TC_EGRESS;
}

static void opts_of(struct bpf_tc_opts *o, int prog_fd)
{
	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->handle = XHCA_STEER_HANDLE;
	o->priority = XHCA_STEER_PRIO;
	o->prog_fd = prog_fd;
}

/* Whether the interface's qdisc at ffff: is a clsact one: an ingress qdisc
 * holds that handle too, and takes a filter meant for clsact's egress onto
 * its own ingress block, where it would steer nothing. */
static int clsact_there(const struct xhcad *d)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct nl_cache *c = NULL;
	struct rtnl_qdisc *q = NULL;
	int yes = 0;

	if (sk && !nl_connect(sk, NETLINK_ROUTE) && !rtnl_qdisc_alloc_cache(sk, &c) &&
	    (q = rtnl_qdisc_get(c, d->ifindex, TC_H_CLSACT & TC_H_MAJ_MASK))) {
		const char *k = rtnl_tc_get_kind(TC_CAST(q));

		yes = k && !strcmp(k, "clsact");
	}
	rtnl_qdisc_put(q);
	nl_cache_free(c);
	nl_socket_free(sk);
	return yes;
}

/* What could not be set up taken down again: with --steer on an error,
 * with auto (a veth) off, said. */
static int start_failed(struct xhcad *d, int err)
{
	steer_stop(d);
	if (!d->steer_auto)
		return err;
	pr_warn("--steer auto: off\n");
	d->steer = STEER_OFF;
	return 0;
}

int steer_start(struct xhcad *d)
{
	struct bpf_tc_hook h;
	struct bpf_tc_opts o;
	__u32 rx;
	int err;

	dev_queues(d->ifname, &rx, &d->steer_txq);
	if (d->steer != STEER_ON)
		return 0;
	if (d->steer_txq < 2 || !d->gso) {
		pr_info("--steer %s: nothing to steer (%s): off\n", d->steer_auto ? "auto" : "on",
			d->gso ? "the interface has one TX queue" : "--gso is off");
		d->steer = STEER_OFF;
		return 0;
	}
	d->steer_skel = steer__open_and_load();
	if (!d->steer_skel) {
		err = -errno;
		pr_warn("--steer: cannot load xhca_steer: %s\n", strerror(-err));
		return start_failed(d, err);
	}
	hook_of(d, &h);
	err = bpf_tc_hook_create(&h);
	d->steer_qdisc = !err; /* ours to remove; -EEXIST: another's, kept */
	if (err && err != -EEXIST) {
		pr_warn("--steer: cannot add the clsact qdisc to %s: %s%s\n", d->ifname,
			strerror(-err), err == -ENOENT ? " (the kernel has no clsact: "
			"modprobe sch_ingress)" : "");
		return start_failed(d, err);
	}
	if (err && !clsact_there(d)) {
		pr_warn("--steer: cannot attach xhca_steer to %s's egress: another qdisc holds "
			"ffff: (an ingress one? tc qdisc show dev %s)\n", d->ifname, d->ifname);
		return start_failed(d, -EBUSY);
	}
	opts_of(&o, bpf_program__fd(d->steer_skel->progs.xhca_steer));
	o.flags = BPF_TC_F_REPLACE;
	err = bpf_tc_attach(&h, &o);
	if (err) {
		pr_warn("--steer: cannot attach xhca_steer to %s's egress: %s%s\n", d->ifname,
			strerror(-err), err == -ENOENT ? " (the kernel has no BPF classifier: "
			"modprobe cls_bpf)" : "");
		return start_failed(d, err);
	}
	d->steer_attached = 1;
	pr_info("--steer: on: request runs to the peer engine's queue of %u (tc egress "
		"filter xhca_steer, prog id %u)\n", d->steer_txq, o.prog_id);
	return 0;
}

/* Our filter off the hook, if it is there: 0, or -ENOENT. */
static int filter_detach(const struct xhcad *d)
{
	struct bpf_tc_hook h;
	struct bpf_tc_opts o;

	hook_of(d, &h);
	opts_of(&o, 0);
	if (bpf_tc_query(&h, &o))
		return -ENOENT;
	opts_of(&o, 0);
	return bpf_tc_detach(&h, &o);
}

/* Whether the clsact hook holds no filter, ingress or egress (a filter
 * dump through libnl-route); 0 when it cannot be told. */
static int hook_empty(const struct xhcad *d)
{
	static const __u32 parents[] = { TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS),
					 TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS) };
	struct nl_sock *sk = nl_socket_alloc();
	int empty = sk && !nl_connect(sk, NETLINK_ROUTE);

	for (size_t i = 0; empty && i < sizeof(parents) / sizeof(parents[0]); i++) {
		struct nl_cache *c = NULL;

		empty = !rtnl_cls_alloc_cache(sk, d->ifindex, parents[i], &c) &&
			!nl_cache_nitems(c);
		nl_cache_free(c);
	}
	nl_socket_free(sk);
	return empty;
}

void steer_stop(struct xhcad *d)
{
	struct bpf_tc_hook h;
	int err;

	if (d->steer_attached && (err = filter_detach(d)))
		pr_warn("--steer: detach xhca_steer from %s: %s\n", d->ifname, strerror(-err));
	d->steer_attached = 0;
	if (d->steer_qdisc) {
		/* (only when the hook holds nothing of anyone else's: a
		 * filter added meanwhile keeps the qdisc) */
		hook_of(d, &h);
		h.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		if (!hook_empty(d))
			pr_info("--steer: the clsact qdisc on %s holds other filters: kept\n",
				d->ifname);
		else if ((err = bpf_tc_hook_destroy(&h)))
			pr_warn("--steer: remove the clsact qdisc of %s: %s\n", d->ifname,
				strerror(-err));
		d->steer_qdisc = 0;
	}
	if (d->steer_skel)
		steer__destroy(d->steer_skel);
	d->steer_skel = NULL;
}

int steer_unload(struct xhcad *d)
{
	return filter_detach(d) ? 0 : 1;
}
