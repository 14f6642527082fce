/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-verbstest view: the device view (xhca exec): each file as the verbs
 * have it (devview.sh).
 */
#include "verbstest.h"

/* The first line of a file, "" if it cannot be read. */
static const char *line_of(const char *fmt, ...)
{
	static char buf[256];
	char path[512];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	buf[0] = 0;
	f = fopen(path, "re");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

static void gid_str(const union ibv_gid *g, char *out)
{
	for (int i = 0; i < 8; i++)
		sprintf(out + i * 5, "%02x%02x%s", g->raw[2 * i], g->raw[2 * i + 1],
			i < 7 ? ":" : "");
}

void view(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_device *dev = l ? l[0] : NULL;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct stat st;
	char path[300], want[64], ifn[IF_NAMESIZE] = "";
	const uint8_t *g;
	int gids_ok = 1, nset = 0;

	if (!dev)
		die("no device");
	check(!strncmp(dev->dev_name, "uverbs", 6), "ibv_device.dev_name: %s, a uverbs device",
	      dev->dev_name);
	snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%s", dev->dev_name);
	check(!strcmp(dev->dev_path, path), "dev_path: %s", dev->dev_path);
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s", dev->name);
	check(!strcmp(dev->ibdev_path, path), "ibdev_path: %s", dev->ibdev_path);
	snprintf(path, sizeof(path), "/dev/infiniband/%s", dev->dev_name);
	check(!stat(path, &st) && S_ISCHR(st.st_mode) && !access(path, R_OK | W_OK),
	      "%s: a character device it may open", path);
	snprintf(want, sizeof(want), "%u:%u", major(st.st_rdev), minor(st.st_rdev));
	check(!strcmp(line_of("%s/dev", dev->dev_path), want), "%s/dev: %s, the node's",
	      dev->dev_path, want);
	check(!strcmp(line_of("%s/ibdev", dev->dev_path), dev->name), "%s/ibdev: %s",
	      dev->dev_path, dev->name);
	if (ibv_query_device(ctx, &da) || ibv_query_port(ctx, 1, &pa))
		die("query");
	g = (const uint8_t *)&da.node_guid;
	snprintf(want, sizeof(want), "%02x%02x:%02x%02x:%02x%02x:%02x%02x", g[0], g[1], g[2],
		 g[3], g[4], g[5], g[6], g[7]);
	check(!strcmp(line_of("%s/node_guid", dev->ibdev_path), want) &&
	      !strcmp(line_of("%s/sys_image_guid", dev->ibdev_path), want),
	      "node_guid, sys_image_guid: %s, as ibv_query_device's", want);
	check(!strcmp(line_of("%s/fw_ver", dev->ibdev_path), da.fw_ver), "fw_ver: %s",
	      da.fw_ver);
	snprintf(want, sizeof(want), "%d: %s", pa.state, pa.state == IBV_PORT_ACTIVE ? "ACTIVE" :
		 "DOWN");
	check(!strcmp(line_of("%s/ports/1/state", dev->ibdev_path), want),
	      "ports/1/state: %s, as ibv_query_port's", want);
	check(!strcmp(line_of("%s/ports/1/link_layer", dev->ibdev_path),
		      pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand"),
	      "ports/1/link_layer, as ibv_query_port's");
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid gid;
		struct ibv_gid_entry e;
		char text[48];
		int set;

		if (ibv_query_gid(ctx, 1, i, &gid))
			die("query_gid");
		set = !ibv_query_gid_ex(ctx, 1, (uint32_t)i, &e, 0);
		gid_str(&gid, text);
		gids_ok &= !strcmp(line_of("%s/ports/1/gids/%d", dev->ibdev_path, i), text);
		if (!set) {
			snprintf(path, sizeof(path), "%s/ports/1/gid_attrs/types/%d",
				 dev->ibdev_path, i);
			gids_ok &= access(path, F_OK) != 0;
			continue;
		}
		nset++;
		if_indextoname(e.ndev_ifindex, ifn);
		gids_ok &= !strcmp(line_of("%s/ports/1/gid_attrs/types/%d", dev->ibdev_path, i),
				   e.gid_type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : "IB/RoCE v1");
		gids_ok &= !strcmp(line_of("%s/ports/1/gid_attrs/ndevs/%d", dev->ibdev_path, i),
				   ifn);
	}
	check(gids_ok && nset >= 2, "ports/1/gids/0..%d, gid_attrs/types and ndevs: as "
	      "ibv_query_gid(_ex) (%d in use, on %s)", pa.gid_tbl_len - 1, nset, ifn);
	snprintf(path, sizeof(path), "%s/device/net/%s", dev->ibdev_path, ifn);
	check(!lstat(path, &st), "device/net/%s: the interface of the GIDs", ifn);
	ibv_free_device_list(l);
}
