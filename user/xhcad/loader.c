/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Loading, attaching and pinning xhca_rx, reusing the maps an earlier xhcad
 * pinned (restart), or adopting a program that `ip` or `xdp-loader` attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "xhca.skel.h"
#include "log.h"
#include "xhcad_device.h"

struct map_desc {
	const char *name;
	__u32 type;
	__u32 key_size;
	__u32 value_size;
	__u32 flags;	/* map flags that are part of the ABI */
	int sized_by;	/* SIZED_* */
	size_t fd_off;
};

enum { SIZED_FIXED, SIZED_QPS, SIZED_HOSTMEM, SIZED_MRS };

#define MAP_DESC(n, t, k, v, fl, q, f) { n, t, k, v, fl, q, offsetof(struct xhca_maps, f) }
static const struct map_desc map_descs[] = {
	MAP_DESC(XHCA_MAP_CAM, BPF_MAP_TYPE_HASH, 4, sizeof(struct xhca_cam_val), 0, SIZED_QPS,
		 cam),
	MAP_DESC(XHCA_MAP_CTX, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct xhca_qp_ctx), BPF_F_MMAPABLE,
		 SIZED_QPS, ctx),
	MAP_DESC(XHCA_MAP_STATS, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct xhca_counter), 0, 0,
		 stats),
	MAP_DESC(XHCA_MAP_QP_STATS, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct xhca_qp_counter), 0,
		 SIZED_QPS, qp_stats),
	MAP_DESC(XHCA_MAP_PKEYS, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct xhca_pkey), 0, 0, pkeys),
	MAP_DESC(XHCA_MAP_XSKS, BPF_MAP_TYPE_XSKMAP, 4, 4, 0, 0, xsks),
	MAP_DESC(XHCA_MAP_FLOWQ, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct xhca_flowq), BPF_F_MMAPABLE, 0,
		 flowq),
	MAP_DESC(XHCA_MAP_FLOWQ_STATS, BPF_MAP_TYPE_PERCPU_ARRAY, 4,
		 sizeof(struct xhca_flowq_counter), 0, 0, fq_stats),
	MAP_DESC(XHCA_MAP_HOSTMEM, BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 0, SIZED_HOSTMEM, hostmem),
	MAP_DESC(XHCA_MAP_MR, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct xhca_mr_ctx), BPF_F_MMAPABLE,
		 SIZED_MRS, mr),
	MAP_DESC(XHCA_MAP_EVENTS, BPF_MAP_TYPE_RINGBUF, 0, 0, 0, 0, events),
	MAP_DESC(XHCA_MAP_MCAST, BPF_MAP_TYPE_HASH, sizeof(struct xhca_mgid),
		 sizeof(struct xhca_mcast_grp), 0, 0, mcast),
	MAP_DESC(XHCA_MAP_MC_STATS, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(struct xhca_mcast_counter),
		 0, 0, mc_stats),
	MAP_DESC(XHCA_MAP_MC_DEVS, BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 0, 0, mc_devs),
	MAP_DESC(XHCA_MAP_PFILT, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct xhca_pfilter_set), 0,
		 SIZED_QPS, pfilt),
	MAP_DESC(XHCA_MAP_PROXY_STATS, BPF_MAP_TYPE_PERCPU_ARRAY, 4,
		 sizeof(struct xhca_proxy_counter), 0, 0, px_stats),
	MAP_DESC(XHCA_MAP_PROXY_RB, BPF_MAP_TYPE_RINGBUF, 0, 0, 0, 0, proxy_rb),
	MAP_DESC(XHCA_MAP_RFAST, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct xhca_rfast), BPF_F_MMAPABLE,
		 SIZED_QPS, rfast),
	MAP_DESC(XHCA_MAP_CQX, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct xhca_cqx), BPF_F_MMAPABLE, 0,
		 cqx),
};
#define NR_MAPS (sizeof(map_descs) / sizeof(map_descs[0]))
#define DSTATE_NAME "xhca_dstate"

static int *map_fd(struct xhcad *d, const struct map_desc *md)
{
	return (int *)((char *)&d->m + md->fd_off);
}

static struct bpf_map *skel_map(struct xhca *skel, const char *name)
{
	return bpf_object__find_map_by_name(skel->obj, name);
}

static int mkdir_p(const char *path)
{
	char tmp[PATH_MAX];
	char *p;

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* A block of host memory: an mmapable array of XHCA_BLOCK_PAGES pages, as
 * xhca_rx's template (struct hm_block) has it, zeroed by the kernel. */
int hostmem_block_new(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xhca_hm_block", 4, XHCA_PAGE_SIZE,
				XHCA_BLOCK_PAGES, &mo);

	return fd < 0 ? -errno : fd;
}

/* xhca_hostmem for pages of host memory, its blocks empty. */
int hostmem_map_new(__u32 pages)
{
	int tmpl = hostmem_block_new(), fd;

	if (tmpl < 0)
		return tmpl;
	LIBBPF_OPTS(bpf_map_create_opts, mo, .inner_map_fd = (__u32)tmpl);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, XHCA_MAP_HOSTMEM, 4, 4,
			    pages / XHCA_BLOCK_PAGES, &mo);
	fd = fd < 0 ? -errno : fd;
	close(tmpl);
	return fd;
}

/* Checks that an existing map is one of ours, of this ABI. */
static int check_map(int fd, const struct map_desc *md, __u32 *max_entries, const char *where)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int err;

	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (err)
		return -errno;
	if (info.type != md->type || info.key_size != md->key_size ||
	    info.value_size != md->value_size || (info.map_flags & BPF_F_MMAPABLE) != md->flags) {
		pr_warn("map %s in %s does not match this xhcad (ABI %d): type %u key %u value %u "
			"flags 0x%x, want type %u key %u value %u flags 0x%x; remove it (rm -r %s) or "
			"use the matching xhcad\n",
			md->name, where, XHCA_ABI_VERSION, info.type, info.key_size, info.value_size,
			info.map_flags, md->type, md->key_size, md->value_size, md->flags, where);
		return -EINVAL;
	}
	if (md->sized_by == SIZED_QPS) {
		if (*max_entries && info.max_entries != *max_entries) {
			pr_warn("map %s in %s has %u entries, other maps %u: remove %s\n", md->name,
				where, info.max_entries, *max_entries, where);
			return -EINVAL;
		}
		*max_entries = info.max_entries;
	}
	return 0;
}

static int open_dstate(struct xhcad *d)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", d->pin_dir, DSTATE_NAME);
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		d->m.dstate = fd;
		return 0;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, DSTATE_NAME, 4, sizeof(struct xhca_dstate), 1,
			    NULL);
	if (fd < 0)
		return -errno;
	if (bpf_obj_pin(fd, path)) {
		int err = -errno;

		close(fd);
		pr_warn("cannot pin %s: %s\n", path, strerror(-err));
		return err;
	}
	d->m.dstate = fd;
	return 0;
}

static int prog_name_of(__u32 id, char *name, size_t len, int *fdp)
{
	struct bpf_prog_info info = {};
	__u32 ilen = sizeof(info);
	int fd, err;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	err = bpf_obj_get_info_by_fd(fd, &info, &ilen);
	if (err) {
		err = -errno;
		close(fd);
		return err;
	}
	snprintf(name, len, "%s", info.name);
	if (fdp)
		*fdp = fd;
	else
		close(fd);
	return 0;
}

static __u32 mode_flags(const struct xhcad *d)
{
	return d->native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
}

/* Whether xhca_rx may go on the interface: no other program is there, or
 * only an earlier xhca_rx in the same mode. */
static int check_attached(struct xhcad *d)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char name[BPF_OBJ_NAME_LEN] = "";

	if (bpf_xdp_query(d->ifindex, 0, &q) || !q.prog_id)
		return 0;
	prog_name_of(q.prog_id, name, sizeof(name), NULL);
	if (strcmp(name, "xhca_rx")) {
		pr_warn("%s already has XDP program %u (%s); detach it first (ip link set dev "
			"%s xdp off) or stop the tool that attached it\n",
			d->ifname, q.prog_id, name, d->ifname);
		return -EBUSY;
	}
	if (!d->mode_set) /* the earlier xhcad's mode (skb where the driver refused) */
		d->native = q.attach_mode == XDP_ATTACHED_DRV;
	if ((q.attach_mode == XDP_ATTACHED_DRV) != d->native) {
		pr_warn("%s has xhca_rx attached in %s mode; start xhcad with --mode %s, "
			"--adopt, or detach it first\n",
			d->ifname, d->native ? "skb" : "native", d->native ? "skb" : "native");
		return -EBUSY;
	}
	pr_info("replacing xhca_rx program %u on %s\n", q.prog_id, d->ifname);
	return 0;
}

/* Restart: the maps an earlier xhcad pinned, with their state, are reused
 * (all or none: reused[] says which); else the new ones are sized. */
static int reuse_maps(struct xhcad *d, struct xhca *skel, int reused[NR_MAPS])
{
	__u32 pinned_qps = 0;
	char path[PATH_MAX];
	int nreused = 0, err;
	size_t i;

	for (i = 0; i < NR_MAPS; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/%s", d->pin_dir, map_descs[i].name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		err = check_map(fd, &map_descs[i], &pinned_qps, d->pin_dir);
		if (!err)
			err = bpf_map__reuse_fd(skel_map(skel, map_descs[i].name), fd);
		close(fd);
		if (err)
			return err;
		reused[i] = 1;
		nreused++;
	}
	if (nreused && nreused != (int)NR_MAPS) {
		pr_warn("%s holds only some of xhca's maps; remove it (rm -r %s) and start again\n",
			d->pin_dir, d->pin_dir);
		return -EINVAL;
	}
	if (nreused) {
		if (d->max_qps && d->max_qps != pinned_qps)
			pr_warn("pinned maps in %s hold %u QPs: --max-qps %u ignored\n", d->pin_dir,
				pinned_qps, d->max_qps);
		d->max_qps = pinned_qps;
		d->maps_reused = 1;
		pr_info("reusing pinned maps in %s\n", d->pin_dir);
		return 0;
	}
	for (i = 0; i < NR_MAPS; i++) {
		struct bpf_map *m = skel_map(skel, map_descs[i].name);

		if (map_descs[i].sized_by == SIZED_QPS)
			bpf_map__set_max_entries(m, d->max_qps);
		if (map_descs[i].sized_by == SIZED_HOSTMEM && d->hm.pages)
			bpf_map__set_max_entries(m, d->hm.pages / XHCA_BLOCK_PAGES);
		if (map_descs[i].sized_by == SIZED_MRS && d->mr.max)
			bpf_map__set_max_entries(m, d->mr.max);
	}
	return 0;
}

/* The pins of the maps and the state file, and their directory. */
static void unpin_all(const struct xhcad *d)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < NR_MAPS; i++) {
		snprintf(path, sizeof(path), "%s/%s", d->pin_dir, map_descs[i].name);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/%s", d->pin_dir, DSTATE_NAME);
	unlink(path);
	rmdir(d->pin_dir);
}

/* Loaded: the maps' descriptors kept, the new ones pinned, the program
 * attached. */
static int pin_and_attach(struct xhcad *d, struct xhca *skel, const int reused[NR_MAPS])
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int err;

	d->prog_fd = bpf_program__fd(skel->progs.xhca_rx);
	for (size_t i = 0; i < NR_MAPS; i++) {
		struct bpf_map *map = skel_map(skel, map_descs[i].name);

		*map_fd(d, &map_descs[i]) = bpf_map__fd(map);
		if (reused[i])
			continue;
		snprintf(path, sizeof(path), "%s/%s", d->pin_dir, map_descs[i].name);
		err = bpf_map__pin(map, path);
		if (err) {
			pr_warn("cannot pin %s: %s\n", path, strerror(-err));
			return err;
		}
	}
	err = open_dstate(d);
	if (err)
		return err;
	err = bpf_xdp_attach(d->ifindex, d->prog_fd, mode_flags(d), NULL);
	if (err && d->native && !d->mode_set) {
		/* e.g. a driver without XDP multi-buffer at a link MTU over a
		 * page (virtio_net before Linux 6.3): skb mode, which has it */
		pr_warn("%s's driver refuses native XDP (%s): xhca_rx in skb mode, slower "
			"(--mode native insists)\n", d->ifname, strerror(-err));
		d->native = 0;
		err = bpf_xdp_attach(d->ifindex, d->prog_fd, mode_flags(d), NULL);
	}
	if (err) {
		pr_warn("cannot attach xhca_rx to %s in %s mode: %s%s\n", d->ifname,
			d->native ? "native" : "skb", strerror(-err),
			d->native ? " (try --mode skb)" : "");
		if (!reused[0]) /* maps of its own: nothing to come back to */
			unpin_all(d);
		return err;
	}
	if (!bpf_obj_get_info_by_fd(d->prog_fd, &info, &len))
		d->prog_id = info.id;
	return 0;
}

int xhcad_load(struct xhcad *d)
{
	int reused[NR_MAPS] = {};
	struct xhca *skel;
	int err;

	err = mkdir_p(d->pin_dir);
	if (err) {
		pr_warn("cannot create pin directory %s: %s\n", d->pin_dir, strerror(-err));
		return err;
	}
	/* Refuse to replace somebody else's XDP program. */
	err = check_attached(d);
	if (err)
		return err;
	skel = xhca__open();
	if (!skel) {
		err = -errno;
		pr_warn("cannot open the xhca_rx object: %s\n", strerror(-err));
		return err;
	}
	err = reuse_maps(d, skel, reused);
	if (err)
		goto out;
	err = xhca__load(skel);
	if (err) {
		pr_warn("cannot load xhca_rx: %s (run with -v for the verifier log)\n", strerror(-err));
		goto out;
	}
	skel->bss->xhca_no_kfuncs = (__u8)d->no_kfuncs;
	err = pin_and_attach(d, skel, reused);
	if (err)
		goto out;
	d->attached = 1;
	d->skel = skel;
	return 0;
out:
	xhca__destroy(skel);
	return err;
}

/* Finds xhca_rx on the interface: attached alone, or behind a libxdp
 * dispatcher (other kernels; this one falls back to a single program). */
static int find_attached(struct xhcad *d, int *prog_fd)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char name[BPF_OBJ_NAME_LEN] = "";
	struct xdp_multiprog *mp;
	struct xdp_program *p;
	int err;

	err = bpf_xdp_query(d->ifindex, 0, &q);
	if (err || !q.prog_id) {
		pr_warn("adopt: no XDP program on %s; attach it first (ip link set dev %s xdpdrv obj "
			"build/bpf/xhca.bpf.o sec xdp.frags) or start xhcad without --adopt\n",
			d->ifname, d->ifname);
		return -ENOENT;
	}
	d->native = q.attach_mode == XDP_ATTACHED_DRV;
	err = prog_name_of(q.prog_id, name, sizeof(name), prog_fd);
	if (err)
		return err;
	if (!strcmp(name, "xhca_rx")) {
		d->prog_id = q.prog_id;
		return 0;
	}
	close(*prog_fd);
	mp = xdp_multiprog__get_from_ifindex(d->ifindex);
	if (!libxdp_get_error(mp) && mp) {
		for (p = xdp_multiprog__next_prog(NULL, mp); p; p = xdp_multiprog__next_prog(p, mp)) {
			if (strcmp(xdp_program__name(p), "xhca_rx"))
				continue;
			d->prog_id = xdp_program__id(p);
			*prog_fd = bpf_prog_get_fd_by_id(d->prog_id);
			xdp_multiprog__close(mp);
			return *prog_fd < 0 ? -errno : 0;
		}
		xdp_multiprog__close(mp);
	}
	pr_warn("adopt: the XDP program on %s is %s (id %u), not xhca_rx\n", d->ifname, name,
		q.prog_id);
	return -ENOENT;
}

int xhcad_adopt(struct xhcad *d)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ids[32], i, j, qps = 0;
	char path[PATH_MAX];
	int prog_fd = -1, err;

	err = mkdir_p(d->pin_dir);
	if (err) {
		pr_warn("cannot create pin directory %s: %s\n", d->pin_dir, strerror(-err));
		return err;
	}
	err = find_attached(d, &prog_fd);
	if (err)
		return err;
	info.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len)) {
		err = -errno;
		goto out;
	}
	for (i = 0; i < NR_MAPS; i++)
		*map_fd(d, &map_descs[i]) = -1;
	for (j = 0; j < info.nr_map_ids && j < sizeof(ids) / sizeof(ids[0]); j++) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[j]);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &mi, &mlen)) {
			close(fd);
			continue;
		}
		for (i = 0; i < NR_MAPS; i++)
			if (!strcmp(mi.name, map_descs[i].name))
				break;
		if (i == NR_MAPS) {
			close(fd);
			continue;
		}
		err = check_map(fd, &map_descs[i], &qps, "the attached program");
		if (err) {
			close(fd);
			goto out;
		}
		*map_fd(d, &map_descs[i]) = fd;
	}
	for (i = 0; i < NR_MAPS; i++) {
		int fd = *map_fd(d, &map_descs[i]);

		/* A map the program does not use yet is not bound to it, so
		 * it cannot be found from the program: host memory (xhca_rx
		 * does not touch it before RDMA WRITE placement). */
		if (fd < 0 && map_descs[i].sized_by == SIZED_HOSTMEM) {
			fd = hostmem_map_new(d->hm.pages ? d->hm.pages : XHCA_HOSTMEM_PAGES_DEFAULT);
			if (fd < 0) {
				err = fd;
				pr_warn("adopt: cannot create %s: %s\n", map_descs[i].name,
					strerror(-err));
				goto out;
			}
			*map_fd(d, &map_descs[i]) = fd;
		}
		if (fd < 0) {
			pr_warn("adopt: the attached xhca_rx has no map %s: not this version of "
				"xhca\n",
				map_descs[i].name);
			err = -EINVAL;
			goto out;
		}
		/* Replace whatever an earlier run left under our names. */
		snprintf(path, sizeof(path), "%s/%s", d->pin_dir, map_descs[i].name);
		unlink(path);
		if (bpf_obj_pin(fd, path)) {
			err = -errno;
			pr_warn("cannot pin %s: %s\n", path, strerror(-err));
			goto out;
		}
	}
	err = open_dstate(d);
	if (err)
		goto out;
	d->max_qps = qps;
	d->maps_reused = 1; /* the state file says whether they are the same maps */
	d->prog_fd = prog_fd;
	d->attached = 1;
	pr_info("adopted xhca_rx (id %u) on %s, %u QPs\n", d->prog_id, d->ifname, qps);
	return 0;
out:
	close(prog_fd);
	return err;
}

void xhcad_unload(struct xhcad *d)
{
	size_t i;

	if (d->attached && !d->keep) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = d->prog_fd);

		/* Only if it is still ours: another tool may have replaced it. */
		if (bpf_xdp_detach(d->ifindex, mode_flags(d) | XDP_FLAGS_REPLACE, &o))
			pr_warn("detach from %s: %s\n", d->ifname, strerror(errno));
		unpin_all(d);
	}
	if (d->skel) {
		xhca__destroy(d->skel);
		d->skel = NULL;
	} else {
		for (i = 0; i < NR_MAPS; i++)
			if (*map_fd(d, &map_descs[i]) >= 0)
				close(*map_fd(d, &map_descs[i]));
		if (d->prog_fd >= 0)
			close(d->prog_fd);
	}
	if (d->m.dstate >= 0)
		close(d->m.dstate);
	d->prog_fd = -1;
}

/* ---- xhcad --unload: what a --keep left -------------------------------------- */

/* The id of the map pinned in the pin directory under name, 0 if none.
 * By name alone, not checked against this ABI: the pins an older xhcad
 * left must go as well. */
static __u32 pinned_map_id(const struct xhcad *d, const char *name)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), id = 0;
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", d->pin_dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		id = info.id;
	close(fd);
	return id;
}

/* Whether program id is an xhca_rx that works on the map cam_id (the CAM
 * pinned in the pin directory): the program a --keep left, not another
 * instance's xhca_rx nor anybody else's program. *fdp: the program, if it
 * is (NULL: closed). */
static int is_kept_prog(__u32 id, __u32 cam_id, int *fdp)
{
	__u32 ids[64], len, i;
	struct bpf_prog_info info = {};
	int fd = bpf_prog_get_fd_by_id(id), yes = 0;

	if (fd < 0 || !cam_id) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	len = sizeof(info);
	info.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	info.map_ids = (__u64)(unsigned long)ids;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, "xhca_rx"))
		for (i = 0; i < info.nr_map_ids && i < sizeof(ids) / sizeof(ids[0]); i++)
			yes |= ids[i] == cam_id;
	if (yes && fdp)
		*fdp = fd;
	else
		close(fd);
	return yes;
}

/* What is attached to the interface, mode by mode, and how it goes. */
struct kept_slot {
	__u32 id;		/* attached in this mode (0: nothing) */
	__u32 flag;		/* XDP_FLAGS_*_MODE */
	const char *mode;
	int fd;			/* the kept xhca_rx attached alone (ip, xhcad, libxdp's
				 * fallback to a single program) */
	struct xdp_multiprog *mp; /* or behind libxdp's dispatcher: its */
	struct xdp_program *comp; /* component */
};

/* The kept xhca_rx behind libxdp's dispatcher (xdp-loader, then xhcad
 * --adopt --keep, on kernels with freplace; this one falls back to a
 * single program, which the caller finds). 1 if found. */
static int find_component(struct xhcad *d, struct kept_slot *s, __u32 cam_id)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(d->ifindex);
	struct xdp_program *p;

	if (libxdp_get_error(mp) || !mp)
		return 0;
	if (!xdp_multiprog__is_legacy(mp))
		for (p = xdp_multiprog__next_prog(NULL, mp); p; p = xdp_multiprog__next_prog(p, mp))
			if (is_kept_prog(xdp_program__id(p), cam_id, NULL)) {
				s->mp = mp;
				s->comp = p;
				s->id = xdp_program__id(p);
				return 1;
			}
	xdp_multiprog__close(mp);
	return 0;
}

/* Sorts out what is attached to the interface: the kept xhca_rx, or
 * somebody else's program (-EBUSY: left alone, nothing is changed). */
static int find_kept(struct xhcad *d, struct kept_slot s[3], __u32 cam_id)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char name[BPF_OBJ_NAME_LEN] = "";

	if (!d->ifindex || bpf_xdp_query(d->ifindex, 0, &q))
		return 0; /* the interface is gone, and its program with it */
	s[0] = (struct kept_slot){ .id = q.drv_prog_id, .flag = XDP_FLAGS_DRV_MODE,
				   .mode = "native", .fd = -1 };
	s[1] = (struct kept_slot){ .id = q.skb_prog_id, .flag = XDP_FLAGS_SKB_MODE,
				   .mode = "skb", .fd = -1 };
	s[2] = (struct kept_slot){ .id = q.hw_prog_id, .flag = XDP_FLAGS_HW_MODE,
				   .mode = "offload", .fd = -1 };
	for (int i = 0; i < 3; i++) {
		if (!s[i].id || is_kept_prog(s[i].id, cam_id, &s[i].fd) ||
		    find_component(d, &s[i], cam_id))
			continue;
		prog_name_of(s[i].id, name, sizeof(name), NULL);
		pr_warn("%s has XDP program %u (%s, %s mode), not the xhca_rx of the maps in %s: "
			"left alone, nothing changed\n",
			d->ifname, s[i].id, name[0] ? name : "?", s[i].mode, d->pin_dir);
		return -EBUSY;
	}
	return 0;
}

/* Another xhca_rx on the pinned maps than those found on the interface:
 * attached to an interface in another network namespace, or held by a
 * process. Its id, 0 if none. */
static __u32 other_user(__u32 cam_id, const struct kept_slot s[3])
{
	__u32 id = 0;

	while (!bpf_prog_get_next_id(id, &id))
		if (id != s[0].id && id != s[1].id && id != s[2].id &&
		    is_kept_prog(id, cam_id, NULL))
			return id;
	return 0;
}

/* Detaches the kept xhca_rx in every mode it is attached in; the first
 * error stops it. */
static int detach_kept(struct xhcad *d, struct kept_slot s[3], struct unload_done *u)
{
	int err = 0;

	for (int i = 0; i < 3 && !err; i++) {
		if (s[i].fd >= 0) {
			/* Only if it is still ours: it may have been replaced
			 * since it was looked at. */
			LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = s[i].fd);

			err = bpf_xdp_detach(d->ifindex, s[i].flag | XDP_FLAGS_REPLACE, &o) ? -errno
											    : 0;
		} else if (s[i].comp) {
			/* libxdp takes the dispatcher down (and its pins in
			 * bpffs) when xhca_rx was its last program */
			err = xdp_program__detach(s[i].comp, d->ifindex,
						  xdp_multiprog__attach_mode(s[i].mp), 0);
		} else {
			continue;
		}
		if (err) {
			pr_warn("cannot detach xhca_rx (id %u) from %s: %s\n", s[i].id, d->ifname,
				strerror(-err));
			break;
		}
		u->prog_id = s[i].id;
		u->mode = s[i].mode;
		u->behind_dispatcher = !!s[i].comp;
	}
	return err;
}

/* The pins of our names in the pin directory, and the directory if that
 * leaves it empty (another file in it stays, and so does it). */
static void remove_pins(struct xhcad *d, struct unload_done *u)
{
	char path[PATH_MAX];

	for (size_t i = 0; i <= NR_MAPS; i++) {
		snprintf(path, sizeof(path), "%s/%s", d->pin_dir,
			 i < NR_MAPS ? map_descs[i].name : DSTATE_NAME);
		u->pins += !unlink(path);
	}
	u->dir_gone = !rmdir(d->pin_dir);
	if (!u->dir_gone && errno != ENOENT)
		pr_warn("%s stays: %s\n", d->pin_dir, strerror(errno));
}

int xhcad_unload_kept(struct xhcad *d, struct unload_done *u)
{
	struct kept_slot s[3] = { { .fd = -1 }, { .fd = -1 }, { .fd = -1 } };
	__u32 cam_id = pinned_map_id(d, XHCA_MAP_CAM), other;
	int err, kept = !!cam_id;

	/* Without the CAM pinned no program can be told to be ours: only
	 * the pins of our other names, if any, go (a start that failed) */
	for (size_t i = 0; i <= NR_MAPS && !kept; i++)
		kept = !!pinned_map_id(d, i < NR_MAPS ? map_descs[i].name : DSTATE_NAME);
	if (!kept)
		return -ENOENT;
	err = find_kept(d, s, cam_id);
	other = err ? 0 : other_user(cam_id, s);
	if (other) {
		pr_warn("the maps in %s are used by xhca_rx (id %u) elsewhere: on an interface "
			"of another network namespace, or held by a process (bpftool prog show "
			"id %u); left alone, nothing changed\n",
			d->pin_dir, other, other);
		err = -EBUSY;
	}
	if (!err)
		err = detach_kept(d, s, u);
	if (!err)
		remove_pins(d, u);
	for (int i = 0; i < 3; i++) {
		if (s[i].fd >= 0)
			close(s[i].fd);
		if (s[i].mp)
			xdp_multiprog__close(s[i].mp);
	}
	return err;
}
