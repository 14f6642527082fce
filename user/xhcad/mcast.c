/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Multicast groups and the replication engine (US 8,937,949).
 *
 * xhca_rx stores a multicast packet once: it checks what the whole group
 * shares and redirects the frame to the replication queue (the patent's
 * multicast information FIFO; the UMEM is its payload RAM). The engine here
 * (the multicast inspection engine) takes the frame with one reference of
 * its own, walks the group's members, and for each member that passes its
 * own checks (still the same QP, state, P_Key, Q_Key, loopback) injects a
 * descriptor into that member's flow queue: the same frame, a metadata block
 * of the member's own. Every injected copy holds a reference; delivery
 * (dispatch.c, as for unicast) drops it whatever became of the copy. When
 * all members are done the engine drops its own reference (the patent's
 * dummy copy): the frame goes back only when the last reference goes, and
 * at once if no member was eligible.
 *
 * Flow control, as the patent's two counters: xhca_rx drops new multicast
 * packets while too many wait for replication (the replication queue's
 * backlog counts a frame until it is free, see xsk.c), and each flow queue
 * takes a bounded number of injected copies (credits): with none left the
 * engine stops and waits, it never drops.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/wait.h>
#include <linux/if_link.h>
#include <bpf/libbpf.h>
#include "xhca.skel.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "log.h"
#include "xhcad_mech.h"

struct mc_member {
	__u32 lidx;
	__u32 gen;
	__u32 gqpn;
};

struct mc_group {
	struct xhca_mgid mgid;
	__u32 index;
	__u32 gen;
	__u16 pkey;
	__u16 flags;		/* XHCA_MCF_AUTO */
	__u32 nmembers;
	struct mc_member m[XHCA_MCAST_MEMBERS];
	__u32 ndevs;
	__u32 devs[XHCA_MCAST_DEVS];
	int ports;		/* its DEVMAP_HASH, while it has ports */
	int rep_in;		/* the replication port is in it */
	__u64 replicated, copies;
	__u64 skip_state, skip_qkey, skip_pkey, skip_loopback, skip_stale;
	__u64 rnr, errors;
	__u64 port_sends, port_errors;	/* frames of several buffers sent to the ports here */
};

struct mcast_state {
	struct mc_group *g[XHCA_MCAST_GROUPS];
	__u32 ngroups;
	__u32 gen_seq;
	/* the packet being replicated */
	int busy;
	struct xhca_rx_meta m;
	__u64 addr;
	__u32 len;
	__u32 next;		/* the member to look at next */
	struct mc_group *grp;
	__u16 pkey;
	__u32 qkey, sqp;
	int stalled;		/* waiting for credit, */
	__u32 stall_fq;		/* of this flow queue */
	__u64 credit_stalls, max_refs, stale, replicated;
	/* the replication port: a veth pair, xhca_rep on the peer */
	int rep_ifindex, peer_ifindex;
	char rep_name[IF_NAMESIZE];
	int port_sock;		/* AF_PACKET: the ports' copies of frames of several buffers */
};

static int mgid_eq(const struct xhca_mgid *a, const struct xhca_mgid *b)
{
	return !memcmp(a->gid, b->gid, sizeof(a->gid));
}

static void mgid_str(const struct xhca_mgid *g, char *buf, size_t len)
{
	xhca_ip_str(g->gid, buf, len);
}

static int dev_attach(struct xhcad *d, struct mc_group *g, const struct xhca_mcast_req *r,
		      __u32 owner, char *err, size_t errlen);
static void ports_drop(struct xhcad *d, struct mc_group *g);
static int dev_detach(struct xhcad *d, struct mc_group *g, const struct xhca_mcast_req *r,
		      char *err, size_t errlen);
static void dev_detach_all(struct xhcad *d, struct mc_group *g);
static void ports_sync(struct xhcad *d, struct mc_group *g);
static int rep_up(struct xhcad *d, char *err, size_t errlen);
static void rep_down(struct xhcad *d);

int mcast_init(struct xhcad *d)
{
	d->mc = calloc(1, sizeof(*d->mc));
	if (!d->mc)
		return -ENOMEM;
	d->mc->port_sock = -1;
	return 0;
}

/* Groups in the maps that no record brought back (an earlier xhcad's
 * whose state was lost): their members are not known here. Then the
 * function ports' maps of the groups named in the maps or brought back
 * that have no ports (any other index's entry xhca_rx never reads: a group
 * there has no ports, or xhcad set it anew). Only those: each lookup or
 * delete of an array of maps waits for an RCU grace period (Linux 6.1 even
 * a lookup of an empty entry: all 4096 took 80 s in a guest). */
static void sweep_maps(struct xhcad *d)
{
	static __u8 named[XHCA_MCAST_GROUPS];
	struct xhca_mgid k, next;
	struct xhca_mcast_grp v;
	int n = 0;

	memset(named, 0, sizeof(named));
	for (int more = !bpf_map_get_next_key(d->m.mcast, NULL, &next); more;) {
		k = next;
		more = !bpf_map_get_next_key(d->m.mcast, &k, &next);
		if (bpf_map_lookup_elem(d->m.mcast, &k, &v))
			continue;
		if (v.index < XHCA_MCAST_GROUPS)
			named[v.index] = 1;
		if (v.index < XHCA_MCAST_GROUPS && d->mc->g[v.index] &&
		    d->mc->g[v.index]->gen == v.gen)
			continue;
		if (!bpf_map_delete_elem(d->m.mcast, &k))
			n++;
	}
	if (n)
		pr_info("removed %d multicast groups of an earlier xhcad\n", n);
	for (__u32 i = 0; i < XHCA_MCAST_GROUPS; i++)
		if ((named[i] || d->mc->g[i]) && (!d->mc->g[i] || d->mc->g[i]->ports <= 0))
			bpf_map_delete_elem(d->m.mc_devs, &i);
}

void mcast_start(struct xhcad *d)
{
	char err[XHCA_ERRMSG_LEN];

	if (!d->mc)
		return;
	sweep_maps(d);
	for (__u32 i = 0; i < XHCA_MCAST_GROUPS; i++) {
		struct mc_group *g = d->mc->g[i];

		if (!g || g->ports <= 0 || !g->nmembers)
			continue;
		if (rep_up(d, err, sizeof(err)))
			pr_warn("multicast group %u: %s\n", g->index, err);
		ports_sync(d, g);
	}
}

void mcast_fini(struct xhcad *d)
{
	if (!d->mc)
		return;
	for (__u32 i = 0; i < XHCA_MCAST_GROUPS; i++) {
		if (d->mc->g[i] && d->mc->g[i]->ports > 0)
			close(d->mc->g[i]->ports);
		free(d->mc->g[i]);
	}
	rep_down(d);
	if (d->mc->port_sock >= 0)
		close(d->mc->port_sock);
	free(d->mc);
	d->mc = NULL;
}

static struct mc_group *find(struct xhcad *d, const struct xhca_mgid *mgid)
{
	for (__u32 i = 0; i < XHCA_MCAST_GROUPS; i++)
		if (d->mc->g[i] && mgid_eq(&d->mc->g[i]->mgid, mgid))
			return d->mc->g[i];
	return NULL;
}

/* What xhca_rx sees of the group. */
static int publish(struct xhcad *d, struct mc_group *g)
{
	struct xhca_mcast_grp v = { .index = g->index, .gen = g->gen, .nmembers = g->nmembers,
				    .ndevs = g->ndevs, .pkey = g->pkey, .flags = g->flags };

	ports_sync(d, g);
	return bpf_map_update_elem(d->m.mcast, &g->mgid, &v, 0) ? -errno : 0;
}

static int zero_stats(struct xhcad *d, __u32 index)
{
	struct xhca_mcast_counter *z = calloc((size_t)d->ncpus, sizeof(*z));
	int err = 0;

	if (!z)
		return -ENOMEM;
	if (bpf_map_update_elem(d->m.mc_stats, &index, z, 0))
		err = -errno;
	free(z);
	return err;
}

static struct mc_group *create(struct xhcad *d, const struct xhca_mgid *mgid, __u16 pkey,
			       __u16 flags, char *err, size_t errlen)
{
	struct mc_group *g;
	__u32 i;
	int rc;

	for (i = 0; i < XHCA_MCAST_GROUPS && d->mc->g[i]; i++)
		;
	if (i == XHCA_MCAST_GROUPS) {
		errf(err, errlen, -ENOSPC, "mcast: all %d groups are in use; destroy one first",
		     XHCA_MCAST_GROUPS);
		errno = ENOSPC;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		errno = ENOMEM;
		return NULL;
	}
	g->mgid = *mgid;
	g->index = i;
	g->gen = ++d->mc->gen_seq;
	g->pkey = pkey ? pkey : XHCA_PKEY_DEFAULT;
	g->flags = flags;
	rc = zero_stats(d, i);
	if (!rc)
		rc = publish(d, g);
	if (rc) {
		errf(err, errlen, rc, "mcast: cannot add the group to %s: %s", XHCA_MAP_MCAST,
		     strerror(-rc));
		free(g);
		errno = -rc;
		return NULL;
	}
	d->mc->g[i] = g;
	d->mc->ngroups++;
	return g;
}

static void destroy(struct xhcad *d, struct mc_group *g)
{
	/* Frames of it still queued carry its gen: the engine drops them. */
	bpf_map_delete_elem(d->m.mcast, &g->mgid);
	if (d->mc->grp == g)
		d->mc->grp = NULL;
	d->mc->g[g->index] = NULL;
	d->mc->ngroups--;
	free(g);
}

int mcast_create(struct xhcad *d, const struct xhca_mcast_req *r, struct xhca_mcast_info *out,
		 char *err, size_t errlen)
{
	char s[64];
	struct mc_group *g;

	mgid_str(&r->mgid, s, sizeof(s));
	if (!xhca_ip_is_mcast(r->mgid.gid))
		return errf(err, errlen, -EINVAL, "mcast create: %s is not a multicast address "
			    "(IPv4 224.0.0.0/4 or IPv6 ff00::/8)", s);
	if (r->pkey && !(r->pkey & 0x7fff))
		return errf(err, errlen, -EINVAL, "mcast create: P_Key 0x%04x is invalid "
			    "(partition 0)", r->pkey);
	if (find(d, &r->mgid))
		return errf(err, errlen, -EEXIST, "mcast create: group %s exists already", s);
	g = create(d, &r->mgid, r->pkey, 0, err, errlen);
	if (!g)
		return -errno;
	mcast_info(d, g->index, out);
	pr_info("multicast group %s (index %u)\n", s, g->index);
	return 0;
}

int mcast_destroy(struct xhcad *d, const struct xhca_mcast_req *r, char *err, size_t errlen)
{
	struct mc_group *g = find(d, &r->mgid);
	char s[64];

	mgid_str(&r->mgid, s, sizeof(s));
	if (!g)
		return errf(err, errlen, -ENOENT, "mcast destroy: no group %s; list them with: "
			    "xhca -i %s mcast show", s, d->ifname);
	dev_detach_all(d, g);
	destroy(d, g);
	return 0;
}

/* The member's place in g, or -1. */
static int member_of(const struct mc_group *g, __u32 lidx)
{
	for (__u32 i = 0; i < g->nmembers; i++)
		if (g->m[i].lidx == lidx)
			return (int)i;
	return -1;
}

/* In order: the packet being replicated goes on where it was. */
static void member_remove(struct xhcad *d, struct mc_group *g, int i)
{
	memmove(&g->m[i], &g->m[i + 1], (g->nmembers - (__u32)i - 1) * sizeof(g->m[0]));
	g->nmembers--;
	if (d->mc->grp == g && d->mc->next > (__u32)i)
		d->mc->next--;
	publish(d, g);
}

int mcast_attach(struct xhcad *d, const struct xhca_mcast_req *r, __u32 owner, char *err,
		 size_t errlen)
{
	struct mc_group *g = find(d, &r->mgid);
	struct xhca_cam_val v;
	struct qp_host *qh;
	char s[64];
	__u32 qpn = r->qpn;

	mgid_str(&r->mgid, s, sizeof(s));
	if (r->dev[0])
		return dev_attach(d, g, r, owner, err, errlen);
	if (!xhca_ip_is_mcast(r->mgid.gid))
		return errf(err, errlen, -EINVAL, "mcast attach: %s is not a multicast address", s);
	if (bpf_map_lookup_elem(d->m.cam, &qpn, &v) || v.lidx >= d->max_qps ||
	    !d->qh[v.lidx].valid || d->qh[v.lidx].gen != v.gen)
		return errf(err, errlen, -ENOENT, "mcast attach: no QP 0x%06x on %s", qpn,
			    d->ifname);
	qh = &d->qh[v.lidx];
	if (owner && qh->owner != owner)
		return errf(err, errlen, -EPERM, "mcast attach: QP 0x%06x belongs to another "
			    "session", qpn);
	if (qh->type != XHCA_QPT_UD)
		return errf(err, errlen, -EINVAL, "mcast attach: QP 0x%06x is %s; only UD QPs join "
			    "multicast groups", qpn, qh->type == XHCA_QPT_RC ? "RC" : "UC");
	if (!g) {
		if (!(r->flags & XHCA_MCF_CREATE))
			return errf(err, errlen, -ENOENT, "mcast attach: no group %s; create it "
				    "with: xhca -i %s mcast create %s", s, d->ifname, s);
		g = create(d, &r->mgid, 0, XHCA_MCF_AUTO, err, errlen);
		if (!g)
			return -errno;
	}
	if (member_of(g, v.lidx) >= 0)
		return errf(err, errlen, -EEXIST, "mcast attach: QP 0x%06x is a member of %s "
			    "already", qpn, s);
	if (g->nmembers == XHCA_MCAST_MEMBERS)
		return errf(err, errlen, -ENOSPC, "mcast attach: group %s has %d members, the "
			    "most it may", s, XHCA_MCAST_MEMBERS);
	g->m[g->nmembers++] = (struct mc_member){ v.lidx, v.gen, qpn };
	return publish(d, g);
}

int mcast_detach(struct xhcad *d, const struct xhca_mcast_req *r, __u32 owner, char *err,
		 size_t errlen)
{
	struct mc_group *g = find(d, &r->mgid);
	char s[64];
	int i = -1;

	mgid_str(&r->mgid, s, sizeof(s));
	if (!g)
		return errf(err, errlen, -ENOENT, "mcast detach: no group %s", s);
	if (r->dev[0])
		return dev_detach(d, g, r, err, errlen);
	for (__u32 k = 0; k < g->nmembers; k++)
		if (g->m[k].gqpn == r->qpn)
			i = (int)k;
	if (i < 0)
		return errf(err, errlen, -ENOENT, "mcast detach: QP 0x%06x is not a member of %s",
			    r->qpn, s);
	if (owner && d->qh[g->m[i].lidx].owner != owner)
		return errf(err, errlen, -EPERM, "mcast detach: QP 0x%06x belongs to another "
			    "session", r->qpn);
	member_remove(d, g, i);
	if ((g->flags & XHCA_MCF_AUTO) && !g->nmembers && !g->ndevs)
		destroy(d, g);
	return 0;
}

void mcast_qp_gone(struct xhcad *d, __u32 lidx)
{
	for (__u32 k = 0; d->mc && k < XHCA_MCAST_GROUPS; k++) {
		struct mc_group *g = d->mc->g[k];
		int i;

		if (!g || (i = member_of(g, lidx)) < 0)
			continue;
		member_remove(d, g, i);
		if ((g->flags & XHCA_MCF_AUTO) && !g->nmembers && !g->ndevs)
			destroy(d, g);
	}
}

void mcast_info(struct xhcad *d, __u32 index, struct xhca_mcast_info *mi)
{
	const struct mc_group *g = d->mc->g[index];
	struct xhca_mcast_counter v[d->ncpus > 0 ? d->ncpus : 1];

	memset(mi, 0, sizeof(*mi));
	if (!g)
		return;
	mi->mgid = g->mgid;
	mi->index = g->index;
	mi->gen = g->gen;
	mi->pkey = g->pkey;
	mi->flags = g->flags;
	mi->nmembers = g->nmembers;
	mi->ndevs = g->ndevs;
	if (!bpf_map_lookup_elem(d->m.mc_stats, &index, v)) {
		for (int c = 0; c < d->ncpus; c++) {
			mi->packets += v[c].packets;
			mi->bytes += v[c].bytes;
			mi->dev_packets += v[c].dev_packets;
			mi->threshold_drops += v[c].threshold_drops;
			mi->pkey_drops += v[c].pkey_drops;
			mi->empty_drops += v[c].empty_drops;
		}
	}
	mi->replicated = g->replicated;
	mi->copies = g->copies;
	mi->skip_state = g->skip_state;
	mi->skip_qkey = g->skip_qkey;
	mi->skip_pkey = g->skip_pkey;
	mi->skip_loopback = g->skip_loopback;
	mi->skip_stale = g->skip_stale;
	mi->rnr = g->rnr;
	mi->errors = g->errors + g->port_errors;
	mi->dev_packets += g->port_sends;
	for (__u32 i = 0; i < g->nmembers; i++)
		mi->qpns[i] = g->m[i].gqpn;
	for (__u32 i = 0; i < g->ndevs; i++)
		if (!if_indextoname(g->devs[i], mi->devs[i]))
			snprintf(mi->devs[i], sizeof(mi->devs[i]), "#%u", g->devs[i]);
}

/* The counters a record keeps, in its cnt[] order. */
#define MC_COUNTERS(g) { &(g)->replicated, &(g)->copies, &(g)->skip_state, &(g)->skip_qkey, \
			 &(g)->skip_pkey, &(g)->skip_loopback, &(g)->skip_stale, &(g)->rnr, \
			 &(g)->errors, &(g)->port_sends, &(g)->port_errors }

int mcast_save(const struct xhcad *d, __u32 i, struct mcast_rec *r)
{
	struct mc_group *g = d->mc && i < XHCA_MCAST_GROUPS ? d->mc->g[i] : NULL;

	if (!g)
		return -ENOENT;
	__u64 *cnt[] = MC_COUNTERS(g);

	_Static_assert(sizeof(cnt) / sizeof(cnt[0]) == MCAST_REC_COUNTERS, "mcast_rec counters");
	memset(r, 0, sizeof(*r));
	r->mgid = g->mgid;
	r->index = g->index;
	r->gen = g->gen;
	r->gen_seq = d->mc->gen_seq;
	r->pkey = g->pkey;
	r->flags = g->flags;
	r->nmembers = g->nmembers;
	r->ndevs = g->ndevs;
	for (int k = 0; k < MCAST_REC_COUNTERS; k++)
		r->cnt[k] = *cnt[k];
	for (__u32 k = 0; k < g->nmembers; k++) {
		r->m[k].lidx = g->m[k].lidx;
		r->m[k].gen = g->m[k].gen;
		r->m[k].gqpn = g->m[k].gqpn;
	}
	memcpy(r->devs, g->devs, sizeof(r->devs));
	return 0;
}

/* The group's port map as the earlier xhcad left it in xhca_mc_devs (the
 * kernel took the ports that went away out of it). */
static int ports_reopen(struct xhcad *d, struct mc_group *g)
{
	__u32 id;

	if (bpf_map_lookup_elem(d->m.mc_devs, &g->index, &id))
		return -errno;
	g->ports = bpf_map_get_fd_by_id(id);
	if (g->ports < 0) {
		g->ports = 0;
		return -errno;
	}
	return 0;
}

int mcast_restore(struct xhcad *d, const struct mcast_rec *r)
{
	struct xhca_mcast_grp v;
	struct mc_group *g;

	if (r->index >= XHCA_MCAST_GROUPS || d->mc->g[r->index] ||
	    r->nmembers > XHCA_MCAST_MEMBERS || r->ndevs > XHCA_MCAST_DEVS)
		return -EINVAL;
	if (bpf_map_lookup_elem(d->m.mcast, &r->mgid, &v) || v.index != r->index || v.gen != r->gen)
		return -ESTALE; /* the maps moved on after the record was written */
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->mgid = r->mgid;
	g->index = r->index;
	g->gen = r->gen;
	g->pkey = r->pkey;
	g->flags = r->flags;
	__u64 *cnt[] = MC_COUNTERS(g);

	for (int k = 0; k < MCAST_REC_COUNTERS; k++)
		*cnt[k] = r->cnt[k];
	/* members whose QP came back (a session that ended took its QPs) */
	for (__u32 k = 0; k < r->nmembers; k++) {
		const struct qp_host *qh = r->m[k].lidx < d->max_qps ? &d->qh[r->m[k].lidx] : NULL;

		if (qh && qh->valid && qh->gen == r->m[k].gen && qh->gqpn == r->m[k].gqpn)
			g->m[g->nmembers++] = (struct mc_member){ r->m[k].lidx, r->m[k].gen,
								  r->m[k].gqpn };
	}
	/* ports still there, in the port map the group had */
	if (r->ndevs && !ports_reopen(d, g)) {
		for (__u32 k = 0; k < r->ndevs; k++) {
			char name[IF_NAMESIZE];
			__u32 ifx = r->devs[k];

			if (if_indextoname(ifx, name) && !bpf_map_update_elem(g->ports, &ifx, &ifx, 0))
				g->devs[g->ndevs++] = ifx;
		}
	}
	if (!g->ndevs && g->ports > 0)
		ports_drop(d, g);
	if (r->gen_seq > d->mc->gen_seq)
		d->mc->gen_seq = r->gen_seq;
	d->mc->g[g->index] = g;
	d->mc->ngroups++;
	if ((g->flags & XHCA_MCF_AUTO) && !g->nmembers && !g->ndevs) {
		destroy(d, g); /* made by an attach, its last member gone */
		return 0;
	}
	return publish(d, g) ? -EIO : 0;
}

int mcast_show(struct xhcad *d, struct xhca_mcast_info **out, __u32 *n)
{
	struct xhca_mcast_info *mi = calloc(d->mc->ngroups ? d->mc->ngroups : 1, sizeof(*mi));
	__u32 k = 0;

	if (!mi)
		return -ENOMEM;
	for (__u32 i = 0; i < XHCA_MCAST_GROUPS && k < d->mc->ngroups; i++)
		if (d->mc->g[i])
			mcast_info(d, i, &mi[k++]);
	*out = mi;
	*n = k;
	return 0;
}

void mcast_status(const struct xhcad *d, struct xhca_status *s)
{
	const struct mcast_state *mc = d->mc;

	if (!mc)
		return;
	s->mcast_groups = mc->ngroups;
	s->mcast_threshold = d->mcast_threshold;
	s->mcast_credits = d->mcast_credits;
	s->mcast_waiting = xsk_backlog(d, XHCA_FLOWQ_MCAST);
	s->mcast_max_refs = mc->max_refs;
	s->mcast_credit_stalls = mc->credit_stalls;
	s->mcast_replicated = mc->replicated;
	s->mcast_stale = mc->stale;
}

/* ---- the replication engine --------------------------------------------------- */

/* What the members are checked against: from the stored frame. */
static int pkt_fields(struct mcast_state *mc, const __u8 *fr, __u32 len)
{
	const struct xhca_opinfo *oi = &xhca_opinfo_tbl[mc->m.opcode];
	const __u8 *bth;

	if ((__u32)mc->m.payload_off + mc->m.payload_len > len || mc->m.payload_off < oi->hdr_len ||
	    !(oi->flags & XHCA_H_DETH))
		return -EINVAL;
	bth = fr + mc->m.payload_off - oi->hdr_len;
	mc->pkey = (__u16)(bth[2] << 8 | bth[3]);
	mc->qkey = be32(bth + 12);
	mc->sqp = be32(bth + 16) & XHCA_QPN_MASK;
	return 0;
}

/* Whether member mb gets a copy; if not, counted in g. */
static int eligible(struct xhcad *d, struct mc_group *g, const struct mc_member *mb)
{
	struct mcast_state *mc = d->mc;
	const struct qp_host *qh = &d->qh[mb->lidx];
	const struct xhca_qp_ctx *c = &d->ctxm[mb->lidx];

	if (!qh->valid || qh->gen != mb->gen || c->gen != mb->gen || !c->valid) {
		__atomic_fetch_add(&g->skip_stale, 1, __ATOMIC_RELAXED);
		return 0;
	}
	if (c->state < XHCA_QPS_RTR || c->state >= XHCA_QPS_ERR) {
		g->skip_state++;
		return 0;
	}
	if (!xhca_pkey_match(mc->pkey, c->pkey)) {
		g->skip_pkey++;
		return 0;
	}
	if (mc->qkey != (mb->gqpn == XHCA_QPN_GSI ? XHCA_GSI_QKEY : c->qkey)) {
		g->skip_qkey++;
		return 0;
	}
	/* its own QP's message, looped back to this device (loopback.c) */
	if ((c->flags & XHCA_QPF_BLOCK_MC_LOOPBACK) && mc->sqp == mb->gqpn &&
	    xsk_frame_looped(d, mc->addr)) {
		g->skip_loopback++;
		return 0;
	}
	return 1;
}

/* Goes on with the packet being replicated; returns 1 when it is done,
 * 0 when a member's flow queue has no credit left. */
static int replicate(struct xhcad *d)
{
	struct mcast_state *mc = d->mc;
	struct mc_group *g = mc->grp;

	while (g && mc->next < g->nmembers) {
		const struct mc_member *mb = &g->m[mc->next];
		struct xhca_rx_meta m;
		__u32 refs;

		if (!eligible(d, g, mb)) {
			mc->next++;
			continue;
		}
		m = mc->m;
		m.gqpn = mb->gqpn;
		m.lidx = mb->lidx;
		m.gen = mb->gen;
		m.flowq = d->qh[mb->lidx].flowq;
		m.reason = XHCA_R_TO_FLOWQ;
		m.flags |= XHCA_MF_MCAST;
		if (d->qh[mb->lidx].px.on && xsk_injected(d, m.flowq) < d->mcast_credits) {
			/* a member on a proxy CQ: its copy is a message of the QP's,
			 * numbered in the count xhca_rx keeps (atomic with it) */
			m.csn = (__u16)__atomic_fetch_add(&d->ctxm[mb->lidx].msn, 1,
							  __ATOMIC_SEQ_CST);
			m.flags |= XHCA_MF_CSN;
		}
		/* the copy's reference first: its engine may take the copy and
		 * drop it as soon as it is injected */
		refs = xsk_frame_get(d, mc->addr);
		if ((d->qh[mb->lidx].px.on && !(m.flags & XHCA_MF_CSN)) ||
		    xsk_inject(d, m.flowq, &m, mc->addr, mc->len, g->index)) {
			/* no credit: wait for the flow queue to drain, drop
			 * nothing (the payload's own reference keeps the frame) */
			xsk_frame_put(d, mc->addr);
			if (!mc->stalled)
				mc->credit_stalls++;
			mc->stalled = 1;
			mc->stall_fq = m.flowq;
			return 0;
		}
		mc->stalled = 0;
		if (refs > mc->max_refs)
			mc->max_refs = refs;
		mc->next++;
	}
	if (g) {
		g->replicated++;
		mc->replicated++;
	}
	/* The stored payload's own reference: with no eligible member the
	 * frame goes back now, else with its last copy. */
	xsk_frame_put(d, mc->addr);
	mc->busy = 0;
	mc->grp = NULL;
	return 1;
}

/* A frame of several buffers for a group with ports (xhca_rx's
 * to_mcast_ports: the kernel's broadcast cannot copy it): each port gets
 * its copy from the one stored frame, a send each, as the broadcast would
 * have given it (the QP members' copies follow as for any group). */
static void ports_send(struct xhcad *d, struct mc_group *g, const __u8 *fr, __u32 len)
{
	struct mcast_state *mc = d->mc;

	if (mc->port_sock < 0)
		mc->port_sock = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0); /* sends only */
	for (__u32 i = 0; i < g->ndevs; i++) {
		struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_ifindex = (int)g->devs[i],
					  .sll_halen = ETH_ALEN };

		memcpy(to.sll_addr, fr, ETH_ALEN);
		if (mc->port_sock >= 0 && sendto(mc->port_sock, fr, len, MSG_DONTWAIT,
						 (struct sockaddr *)&to, sizeof(to)) == (ssize_t)len)
			g->port_sends++;
		else
			g->port_errors++;
	}
}

int mcast_run(struct xhcad *d, int budget)
{
	struct mcast_state *mc = d->mc;
	int n = 0, taken = 0;

	if (!mc)
		return 0;
	while (n < budget) {
		const struct xhca_rx_meta *m;
		const __u8 *fr;
		struct mc_group *g;

		if (!mc->busy) {
			if (!xsk_mcast_take(d, &m, &fr, &mc->len, &mc->addr))
				break;
			taken++;
			mc->m = *m;
			mc->busy = 1;
			mc->next = 0;
			g = m->lidx < XHCA_MCAST_GROUPS ? mc->g[m->lidx] : NULL;
			if ((m->reason != XHCA_R_TO_MCAST && m->reason != XHCA_R_TO_MCAST_PORTS) ||
			    !g || g->gen != m->gen || pkt_fields(mc, fr, mc->len)) {
				mc->stale++; /* destroyed (or re-created) since */
				g = NULL;
			} else if (xhca_icrc_check_frame(fr, mc->len)) {
				eng()->resp.bad_icrc++; /* checked once here, for every copy */
				g = NULL;
			} else if (m->reason == XHCA_R_TO_MCAST_PORTS) {
				ports_send(d, g, fr, mc->len);
			}
			mc->grp = g;
		}
		if (!replicate(d))
			break;
		n++;
	}
	return taken;
}

int mcast_pending(const struct xhcad *d)
{
	const struct mcast_state *mc = d->mc;

	/* A flow queue that waits for its application's CQ drains with the
	 * doorbell, not by looking again. */
	return mc && mc->busy && !(mc->stalled && d->fq[mc->stall_fq].blocked);
}

void mcast_delivered(struct xhcad *d, __u32 group, int reason)
{
	struct mc_group *g = group < XHCA_MCAST_GROUPS && d->mc ? d->mc->g[group] : NULL;

	if (!g)
		return;
	switch (reason) {
	case XHCA_H_PLACED:
		__atomic_fetch_add(&g->copies, 1, __ATOMIC_RELAXED); /* (its member's engine) */
		break;
	case XHCA_H_RNR:
		__atomic_fetch_add(&g->rnr, 1, __ATOMIC_RELAXED);
		break;
	case XHCA_H_STALE:
		g->skip_stale++;
		break;
	default:
		__atomic_fetch_add(&g->errors, 1, __ATOMIC_RELAXED);
	}
}

/* ---- function ports ------------------------------------------------------------ */

/* Runs ip(8) with args; 0 when it exits 0. */
static int run_ip(char *const argv[])
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -errno;
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execvp("ip", argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -EIO;
}

/*
 * The replication port, for groups with both function ports and QP
 * members: xhca_rx's broadcast reaches the QPs through it. A veth pair
 * xhr<ifindex> (in the groups' devmaps) and xhr<ifindex>p, where xhca_rep
 * hands every copy to the replication queue through a socket of its own.
 */
static int rep_up(struct xhcad *d, char *err, size_t errlen)
{
	struct mcast_state *mc = d->mc;
	char peer[IF_NAMESIZE + 2];
	int fd, rc;

	if (mc->rep_ifindex)
		return 0;
	if (!d->skel)
		return errf(err, errlen, -EOPNOTSUPP, "mcast attach --dev: a group with QP members "
			    "and ports needs the replication port, which xhcad sets up only when "
			    "it loads xhca_rx itself (not with --adopt)");
	snprintf(mc->rep_name, sizeof(mc->rep_name), "xhr%d", d->ifindex);
	snprintf(peer, sizeof(peer), "%sp", mc->rep_name);
	{
		char *del[] = { "ip", "link", "del", mc->rep_name, NULL };
		/* (MTU 9000: frames at path MTU 4096 pass; xhca_rep takes
		 * multi-buffer frames) */
		char *add[] = { "ip", "link", "add", mc->rep_name, "mtu", "9000", "numtxqueues", "1",
				"numrxqueues", "1", "type", "veth", "peer", "name", peer, "mtu",
				"9000", "numtxqueues", "1", "numrxqueues", "1", NULL };
		char *up1[] = { "ip", "link", "set", mc->rep_name, "up", NULL };
		char *up2[] = { "ip", "link", "set", peer, "up", NULL };

		run_ip(del); /* left by a crash */
		rc = run_ip(add);
		if (!rc)
			rc = run_ip(up1);
		if (!rc)
			rc = run_ip(up2);
	}
	if (rc)
		return errf(err, errlen, rc, "mcast attach --dev: cannot make the replication port "
			    "%s (ip link add ... type veth): %s", mc->rep_name, strerror(-rc));
	mc->rep_ifindex = (int)if_nametoindex(mc->rep_name);
	mc->peer_ifindex = (int)if_nametoindex(peer);
	fd = bpf_program__fd(d->skel->progs.xhca_rep);
	rc = bpf_xdp_attach(mc->peer_ifindex, fd, XDP_FLAGS_DRV_MODE, NULL);
	if (!rc)
		rc = xsk_rep_open(d, mc->peer_ifindex);
	if (rc) {
		rep_down(d);
		return errf(err, errlen, rc, "mcast attach --dev: the replication port %s: %s",
			    peer, strerror(-rc));
	}
	pr_info("replication port %s <-> %s\n", mc->rep_name, peer);
	return 0;
}

static void rep_down(struct xhcad *d)
{
	struct mcast_state *mc = d->mc;
	char *del[] = { "ip", "link", "del", mc->rep_name, NULL };

	if (!mc->rep_name[0])
		return;
	xsk_rep_close(d);
	if (mc->peer_ifindex)
		bpf_xdp_detach(mc->peer_ifindex, XDP_FLAGS_DRV_MODE, NULL);
	run_ip(del);
	mc->rep_ifindex = mc->peer_ifindex = 0;
	mc->rep_name[0] = 0;
}

/* The replication port is in a group's devmap exactly while it has both
 * ports and QP members. */
static void ports_sync(struct xhcad *d, struct mc_group *g)
{
	__u32 k = (__u32)d->mc->rep_ifindex;
	int want = g->ports > 0 && g->nmembers && k;

	if (want == g->rep_in)
		return;
	if (want ? bpf_map_update_elem(g->ports, &k, &k, 0) : bpf_map_delete_elem(g->ports, &k))
		pr_warn("multicast group %u: replication port: %s\n", g->index, strerror(errno));
	else
		g->rep_in = want;
}

static int dev_attach(struct xhcad *d, struct mc_group *g, const struct xhca_mcast_req *r,
		      __u32 owner, char *err, size_t errlen)
{
	char s[64];
	__u32 ifx;
	int rc;

	mgid_str(&r->mgid, s, sizeof(s));
	if (owner)
		return errf(err, errlen, -EPERM, "mcast attach --dev: function ports are the CLI's "
			    "to attach");
	if (!g)
		return errf(err, errlen, -ENOENT, "mcast attach: no group %s; create it with: xhca "
			    "-i %s mcast create %s", s, d->ifname, s);
	ifx = if_nametoindex(r->dev);
	if (!ifx)
		return errf(err, errlen, -ENOENT, "mcast attach --dev: no interface %s where xhcad "
			    "runs (its network namespace)", r->dev);
	if ((int)ifx == d->ifindex || (int)ifx == d->mc->rep_ifindex ||
	    (int)ifx == d->mc->peer_ifindex)
		return errf(err, errlen, -EINVAL, "mcast attach --dev: %s is xhca's own interface",
			    r->dev);
	for (__u32 i = 0; i < g->ndevs; i++)
		if (g->devs[i] == ifx)
			return errf(err, errlen, -EEXIST, "mcast attach --dev: %s is a port of %s "
				    "already", r->dev, s);
	if (g->ndevs == XHCA_MCAST_DEVS)
		return errf(err, errlen, -ENOSPC, "mcast attach --dev: group %s has %d ports, the "
			    "most it may", s, XHCA_MCAST_DEVS);
	rc = rep_up(d, err, errlen);
	if (rc)
		return rc;
	if (g->ports <= 0) {
		g->ports = bpf_map_create(BPF_MAP_TYPE_DEVMAP_HASH, "xhca_mc_ports", 4, 4,
					  XHCA_MCAST_DEVS + 1, NULL);
		if (g->ports < 0 || bpf_map_update_elem(d->m.mc_devs, &g->index, &g->ports, 0)) {
			rc = -errno;
			if (g->ports >= 0)
				close(g->ports);
			g->ports = 0;
			return errf(err, errlen, rc, "mcast attach --dev: the group's port map: %s",
				    strerror(-rc));
		}
		g->rep_in = 0;
	}
	if (bpf_map_update_elem(g->ports, &ifx, &ifx, 0))
		return errf(err, errlen, -errno, "mcast attach --dev: xhca_rx cannot send to %s: "
			    "%s (a veth needs an XDP program or GRO on its peer)", r->dev,
			    strerror(errno));
	g->devs[g->ndevs++] = ifx;
	return publish(d, g);
}

static void ports_drop(struct xhcad *d, struct mc_group *g)
{
	if (g->ports <= 0)
		return;
	bpf_map_delete_elem(d->m.mc_devs, &g->index);
	close(g->ports);
	g->ports = 0;
	g->rep_in = 0;
}

static int dev_detach(struct xhcad *d, struct mc_group *g, const struct xhca_mcast_req *r,
		      char *err, size_t errlen)
{
	__u32 ifx = if_nametoindex(r->dev);
	char s[64];

	mgid_str(&r->mgid, s, sizeof(s));
	for (__u32 i = 0; ifx && i < g->ndevs; i++) {
		if (g->devs[i] != ifx)
			continue;
		g->devs[i] = g->devs[--g->ndevs];
		bpf_map_delete_elem(g->ports, &ifx);
		/* the map first says no ports, then the devmap goes */
		publish(d, g);
		if (!g->ndevs)
			ports_drop(d, g);
		return 0;
	}
	return errf(err, errlen, -ENOENT, "mcast detach --dev: %s is not a port of %s", r->dev, s);
}

static void dev_detach_all(struct xhcad *d, struct mc_group *g)
{
	g->ndevs = 0;
	publish(d, g);
	ports_drop(d, g);
}
