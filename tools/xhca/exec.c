/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca exec: a libibverbs (or rdma_cm) program, unmodified, on xhca.
 */
#include <dirent.h>
#include "cli.h"
#include "view.h"

/* ---- exec: a verbs program on xhca ------------------------------------------ */

#ifndef XHCA_MULTIARCH
#define XHCA_MULTIARCH "" /* (the Makefile gives the compiler's) */
#endif

/* Where xhca's libibverbs.so.1 is, from xhca's own directory: the build
 * tree (build/verbs), make install (PREFIX/lib/xhca/verbs), the Debian
 * package (/usr/lib/MULTIARCH/xhca/verbs). */
static const char *const verbs_rel[] = {
	"/verbs", "/../lib/xhca/verbs", "/../lib/" XHCA_MULTIARCH "/xhca/verbs",
};

/* The directory of xhca's libibverbs.so.1 (buf: PATH_MAX bytes), or NULL. */
static const char *verbs_dir(char *buf)
{
	const char *env = getenv("XHCA_VERBS_DIR");
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return NULL;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	for (size_t i = 0; i < sizeof(verbs_rel) / sizeof(verbs_rel[0]); i++) {
		char dir[PATH_MAX + 64], lib[PATH_MAX + 96];

		snprintf(dir, sizeof(dir), "%s%s", self, verbs_rel[i]);
		snprintf(lib, sizeof(lib), "%s/libibverbs.so.1", dir);
		if (!access(lib, R_OK) && realpath(dir, buf))
			return buf;
	}
	return NULL;
}

const char exec_text[] =
	"Runs PROGRAM, unmodified, with xhca's libibverbs.so.1 (and librdmacm.so.1 beside\n"
	"it, for rdma_cm programs: rping, perftest -R) in place of the system's\n"
	"(LD_LIBRARY_PATH): its devices are xhca_<ifname>, one per interface of this\n"
	"network namespace that an xhcad serves; with -i, that interface's only.\n"
	"The library is looked for in XHCA_VERBS_DIR, then beside xhca (build/verbs),\n"
	"then in ../lib/xhca/verbs from it (make install), then in\n"
	"../lib/" XHCA_MULTIARCH "/xhca/verbs (the Debian package).\n"
	"The program sees its devices as the kernel shows RDMA devices, in a mount\n"
	"namespace of its own: /dev/infiniband/uverbsN, /sys/class/infiniband/<dev>,\n"
	"/sys/class/infiniband_verbs (UCX, Open MPI and rdma-core's tests look there);\n"
	"a user that is not root needs user namespaces for it (else it runs without,\n"
	"said on stderr). Open MPI is told to take UCX on xhca, unless told otherwise:\n"
	"OMPI_MCA_pml_ucx_devices=any, OMPI_MCA_btl=^openib.\n"
	"Exit: the program's; 1 when it cannot be started, 2 bad usage.";

/* Before the program (CMD_OPTS_FIRST): what follows it is the program's. */
const struct xhca_opt exec_opts[] = {
	OPT(O_PROXY, "proxy", NULL, "its CQs are proxy CQs (XHCA_VERBS_PROXY=1): xhca\n"
	    "qp modify QPN --proxy on and xhca filter add make\n"
	    "its QPs proxy QPs"),
	OPT(O_NO_VIEW, "no-view", NULL, "no device view: the program runs in this\n"
	    "mount namespace, without /dev/infiniband and\n"
	    "/sys/class/infiniband"),
	{ 0 },
};

static int no_view;

static int exec_opt(void *ctx, int id, const char *name, const char *arg)
{
	if (id == O_NO_VIEW)
		no_view = 1;
	else
		setenv("XHCA_VERBS_PROXY", "1", 1); /* --proxy */
	return 0;
}

/* The interfaces whose devices the program gets, as its verbs library will
 * list them: an xhcad's socket in XHCA_RUN_DIR, the interface in this
 * network namespace (-i: that one), by name. Their number (at most max). */
static int exec_devs(char (*devs)[IF_NAMESIZE], int max)
{
	DIR *dir = opendir(XHCA_RUN_DIR);
	struct dirent *e;
	int n = 0;

	while (dir && (e = readdir(dir)) && n < max) {
		size_t l = strlen(e->d_name);

		if (l < 6 || l - 5 >= IF_NAMESIZE || strcmp(e->d_name + l - 5, ".sock"))
			continue;
		memcpy(devs[n], e->d_name, l - 5);
		devs[n][l - 5] = 0;
		if ((ifname && strcmp(devs[n], ifname)) || !if_nametoindex(devs[n]))
			continue;
		n++;
	}
	if (dir)
		closedir(dir);
	for (int i = 1; i < n; i++) /* the library's order */
		for (int j = i; j > 0 && strcmp(devs[j - 1], devs[j]) > 0; j--) {
			char t[IF_NAMESIZE];

			memcpy(t, devs[j], IF_NAMESIZE);
			memcpy(devs[j], devs[j - 1], IF_NAMESIZE);
			memcpy(devs[j - 1], t, IF_NAMESIZE);
		}
	return n;
}

/* The device view (view.c), or a line saying why there is none. */
static void exec_view(void)
{
	char devs[64][IF_NAMESIZE], why[256];
	const char *names[64];
	int n = exec_devs(devs, 64);

	for (int i = 0; i < n; i++)
		names[i] = devs[i];
	if (view_enter(names, n, why, sizeof(why)))
		pr_warn("exec: no device view (/dev/infiniband, /sys/class/infiniband): %s; the "
			"program runs without it (UCX and Open MPI will not find xhca's devices)\n",
			why);
}

/* Only a daemon that is there: a program that found no device would say less. */
static int exec_ifname(void)
{
	int fd;

	if (!ifname)
		return 0;
	fd = xhca_ctl_connect(ifname);
	if (fd == -EACCES) {
		pr_warn("exec: no permission to use xhca_%s (%s/%s.sock): xhcad --group GROUP "
			"lets that group's members in\n", ifname, XHCA_RUN_DIR, ifname);
		return EXIT_FAIL;
	}
	if (fd < 0) {
		pr_warn("exec: no xhcad serves %s (%s); start one: xhcad %s\n", ifname,
			strerror(-fd), ifname);
		return EXIT_FAIL;
	}
	close(fd);
	setenv("XHCA_DEVICES", ifname, 1);
	return 0;
}

int do_exec(const struct call *call, int argc, char **argv)
{
	char dir[PATH_MAX], path[2 * PATH_MAX];
	const char *d, *old = getenv("LD_LIBRARY_PATH");
	/* the program and its arguments, NULL-terminated for execvp */
	char **prog = calloc(argc + 1, sizeof(*prog));
	int rc, n;

	if (!prog) {
		pr_warn("exec: out of memory\n");
		return EXIT_FAIL;
	}
	rc = parse_args(call, argc, argv, exec_opt, NULL, prog, argc, &n);
	if (!rc && !n)
		rc = usage_err("exec", "no program given; e.g. xhca -i eth0 exec -- ibv_devinfo");
	if (!rc)
		rc = exec_ifname();
	if (rc)
		goto out;
	d = verbs_dir(dir);
	if (!d) {
		pr_warn("exec: xhca's libibverbs.so.1 is not beside xhca nor installed; build it "
			"(make) or set XHCA_VERBS_DIR\n");
		rc = EXIT_FAIL;
		goto out;
	}
	snprintf(path, sizeof(path), "%s%s%s", d, old && *old ? ":" : "", old && *old ? old : "");
	setenv("LD_LIBRARY_PATH", path, 1);
	if (!no_view)
		exec_view();
	/* Open MPI takes UCX on a device whose driver is Mellanox's only
	 * (pml_ucx_devices "mlx*"), and its openib BTL cannot use RoCE */
	setenv("OMPI_MCA_pml_ucx_devices", "any", 0);
	setenv("OMPI_MCA_btl", "^openib", 0);
	execvp(prog[0], prog);
	pr_warn("exec: %s: %s\n", prog[0], strerror(errno));
	rc = EXIT_FAIL;
out:
	free(prog);
	return rc;
}
