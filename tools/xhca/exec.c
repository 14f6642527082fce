/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca exec: a libibverbs (or rdma_cm) program, unmodified, on xhca.
 */
#include "cli.h"

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
	"Exit: the program's; 1 when it cannot be started, 2 bad usage.";

/* Before the program (CMD_OPTS_FIRST): what follows it is the program's. */
const struct xhca_opt exec_opts[] = {
	OPT(O_PROXY, "proxy", NULL, "its CQs are proxy CQs (XHCA_VERBS_PROXY=1): xhca\n"
	    "qp modify QPN --proxy on and xhca filter add make\n"
	    "its QPs proxy QPs"),
	{ 0 },
};

static int exec_opt(void *ctx, int id, const char *name, const char *arg)
{
	setenv("XHCA_VERBS_PROXY", "1", 1);	/* --proxy, its one option */
	return 0;
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
	execvp(prog[0], prog);
	pr_warn("exec: %s: %s\n", prog[0], strerror(errno));
	rc = EXIT_FAIL;
out:
	free(prog);
	return rc;
}
