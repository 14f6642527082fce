/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The device as the kernel shows an RDMA device, for the programs `xhca
 * exec` runs (UCX, Open MPI and rdma-core's tests read sysfs, not only the
 * verbs): xhcad keeps XHCA_RUN_DIR/IFNAME.ib, the files of
 * /sys/class/infiniband/xhca_IFNAME, which `xhca exec` binds there in the
 * program's own mount namespace (tools/xhca/view.c). Written at start, and
 * again when rtnetlink says an address or the link changed (loopback.c
 * watches it), so a GID added while a program runs is there as it is in
 * ibv_query_gid (both from include/priv/xhca/port.h). Each file is written
 * whole and renamed into place: a reader sees the old or the new one.
 *
 *   node_guid sys_image_guid node_type node_desc fw_ver
 *   ports/1/{state,phys_state,link_layer,rate,lid,sm_lid,lid_mask_count,
 *            sm_sl,cap_mask,gids/I,gid_attrs/types/I,gid_attrs/ndevs/I,
 *            pkeys/0}
 *   device -> the interface's device (its bus address, ethtool), or a
 *             directory of our own for one with none (veth): net/IFNAME,
 *             numa_node, local_cpus, driver -> ../drivers/DRIVER
 *
 * A GID entry not in use has gids/I all zeros and no types/I or ndevs/I
 * (the kernel refuses to read them).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <xhca/port.h>
#include "log.h"
#include "xhcad_device.h"

static int put(const char *root, const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* root/rel, written whole: a temporary file renamed into place. */
static int put(const char *root, const char *rel, const char *fmt, ...)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], buf[256];
	va_list ap;
	int fd, n, err = 0;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, (size_t)n) != n)
		err = -EIO;
	close(fd);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

static void dir(const char *root, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdir(path, 0755);
}

/* rel a symlink to target (replaced). */
static void link_to(const char *root, const char *rel, const char *target)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	unlink(tmp);
	if (symlink(target, tmp) || rename(tmp, path))
		unlink(tmp);
}

static void gone(const char *root, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	unlink(path);
}

static void gid_text(const uint8_t g[16], char *out)
{
	for (int i = 0; i < 8; i++)
		sprintf(out + i * 5, "%02x%02x%s", g[2 * i], g[2 * i + 1], i < 7 ? ":" : "");
}

/* The driver and bus address of the interface (ethtool). */
static void drvinfo(const char *ifname, struct ethtool_drvinfo *di)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memset(di, 0, sizeof(*di));
	di->cmd = ETHTOOL_GDRVINFO;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)di;
	if (fd >= 0) {
		if (ioctl(fd, SIOCETHTOOL, &ifr))
			memset(di, 0, sizeof(*di));
		close(fd);
	}
}

/* The online CPUs as a sysfs cpumask ("ff", "ffffffff,ffffffff"). */
static void cpumask(char *out, size_t len)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	int words = (int)((n + 31) / 32), o = 0;

	if (n < 1)
		n = 1;
	for (int w = words - 1; w >= 0 && o < (int)len - 10; w--) {
		long bits = n - (long)w * 32;
		unsigned int v = bits >= 32 ? 0xffffffffu : (1u << bits) - 1;

		o += snprintf(out + o, len - (size_t)o, w == words - 1 ? "%x" : ",%08x", v);
	}
}

/* device: the interface's own (a bus device, from ethtool's bus address),
 * else a directory of ours, as sysfs would have one. */
static void device(const char *root, const char *ifname)
{
	struct ethtool_drvinfo di;
	char path[PATH_MAX], real[PATH_MAX], cpus[128], rel[64];
	struct stat st;

	drvinfo(ifname, &di);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", di.bus_info);
	if (di.bus_info[0] && realpath(path, real) && !stat(real, &st)) {
		link_to(root, "device", real);
		return;
	}
	snprintf(path, sizeof(path), "%s/device", root);
	if (!lstat(path, &st) && S_ISLNK(st.st_mode))
		unlink(path);
	dir(root, "device");
	dir(root, "device/net");
	snprintf(rel, sizeof(rel), "device/net/%s", ifname);
	snprintf(path, sizeof(path), "/sys/class/net/%s", ifname);
	link_to(root, rel, path);
	put(root, "device/numa_node", "-1\n");
	cpumask(cpus, sizeof(cpus));
	put(root, "device/local_cpus", "%s\n", cpus);
	dir(root, "drivers");
	snprintf(rel, sizeof(rel), "drivers/%s", di.driver[0] ? (char *)di.driver : "xhca");
	dir(root, rel);
	snprintf(path, sizeof(path), "../%s", rel);
	link_to(root, "device/driver", path);
}

static void port(const char *root, const char *ifname)
{
	struct xhca_gid_ent t[XHCA_GID_TBL_LEN];
	int up = xhca_link_up(ifname), n = xhca_gid_table(ifname, t, XHCA_GID_TBL_LEN);
	char rel[64], text[48];

	dir(root, "ports");
	dir(root, "ports/1");
	dir(root, "ports/1/gids");
	dir(root, "ports/1/gid_attrs");
	dir(root, "ports/1/gid_attrs/types");
	dir(root, "ports/1/gid_attrs/ndevs");
	dir(root, "ports/1/pkeys");
	put(root, "ports/1/state", up ? "4: ACTIVE\n" : "1: DOWN\n");
	put(root, "ports/1/phys_state", up ? "5: LinkUp\n" : "3: Disabled\n");
	put(root, "ports/1/link_layer", "Ethernet\n");
	put(root, "ports/1/rate", "%s\n", XHCA_PORT_RATE);
	put(root, "ports/1/lid", "0x0\n");
	put(root, "ports/1/sm_lid", "0x0\n");
	put(root, "ports/1/lid_mask_count", "0\n");
	put(root, "ports/1/sm_sl", "0\n");
	put(root, "ports/1/cap_mask", "0x00000000\n");
	put(root, "ports/1/pkeys/0", "0xffff\n");
	for (int i = 0; i < XHCA_GID_TBL_LEN; i++) {
		uint8_t zero[16] = {};

		gid_text(i < n ? t[i].gid : zero, text);
		snprintf(rel, sizeof(rel), "ports/1/gids/%d", i);
		put(root, rel, "%s\n", text);
		snprintf(rel, sizeof(rel), "ports/1/gid_attrs/types/%d", i);
		if (i < n)
			put(root, rel, "RoCE v2\n");
		else
			gone(root, rel);
		snprintf(rel, sizeof(rel), "ports/1/gid_attrs/ndevs/%d", i);
		if (i < n)
			put(root, rel, "%s\n", ifname);
		else
			gone(root, rel);
	}
}

int ibview_update(struct xhcad *d)
{
	const char *root = d->view_dir;
	uint8_t g[8];
	char host[64] = "", guid[24];

	if (!root[0])
		return 0;
	if (mkdir(root, 0755) && errno != EEXIST) {
		pr_warn("device view: cannot make %s: %s (xhca exec's programs will not see "
			"/sys/class/infiniband/xhca_%s)\n", root, strerror(errno), d->ifname);
		return -errno;
	}
	xhca_node_guid(d->ifname, g);
	snprintf(guid, sizeof(guid), "%02x%02x:%02x%02x:%02x%02x:%02x%02x", g[0], g[1], g[2],
		 g[3], g[4], g[5], g[6], g[7]);
	gethostname(host, sizeof(host) - 1);
	put(root, "node_guid", "%s\n", guid);
	put(root, "sys_image_guid", "%s\n", guid);
	put(root, "node_type", "1: CA\n");
	put(root, "node_desc", "%s xhca_%s\n", host, d->ifname);
	put(root, "fw_ver", "xhca %d\n", XHCA_SESSION_VERSION);
	port(root, d->ifname);
	device(root, d->ifname);
	d->view_writes++;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	remove(path);
	return 0;
}

void ibview_remove(struct xhcad *d)
{
	/* (depth first, links as links: nothing outside the tree is touched) */
	if (d->view_dir[0])
		nftw(d->view_dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}
