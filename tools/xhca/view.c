/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The device view of `xhca exec`: what a program finds of an RDMA device
 * outside the verbs, as the kernel would show it, in a mount namespace of
 * the program's own (nothing any other process sees changes):
 *
 *   /dev/infiniband/uverbsN   a character device it may open (/dev/null
 *                             bound there: xhca's verbs need no device
 *                             file; UCX only checks that it is one)
 *   /dev/infiniband/rdma_cm   the same
 *   /sys/class/infiniband/xhca_IF        xhcad's XHCA_RUN_DIR/IF.ib, bound:
 *                             live (user/xhcad/ibview.c)
 *   /sys/class/infiniband_verbs/uverbsN/{ibdev,abi_version,dev}, abi_version
 *
 * N is the device's place in ibv_get_device_list's order; the verbs
 * library takes its dev_name, dev_path and ibdev_path from here.
 * /sys/class and /dev are sysfs and devtmpfs, where nobody may make a
 * directory: each becomes a tmpfs holding every entry it had, bound back
 * from the original (reached through a descriptor opened before), and ours
 * beside them.
 *
 * Root makes the mount namespace; anyone else (a member of group xhca)
 * first makes a user namespace that maps only its own user and group,
 * which lets it mount there and nowhere else. Without user namespaces
 * (kernel.unprivileged_userns_clone=0, an AppArmor or seccomp policy that
 * refuses them) there is no view: the caller says so and runs the program
 * without it. docs/running.md weighs this against a set-user-ID helper.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "cli.h"
#include "view.h"

#define WHY(...) (snprintf(why, whylen, __VA_ARGS__), -1)

static int write_file(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int write_file(const char *path, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int fd, n, rc;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
	if (fd < 0)
		return -1;
	rc = write(fd, buf, (size_t)n) == n ? 0 : -1;
	close(fd);
	return rc;
}

/* A user namespace of our user and group only, for mounting (not root). */
static int userns(char *why, size_t whylen)
{
	uid_t u = geteuid();
	gid_t g = getegid();

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
		return WHY("cannot make a user namespace: %s (kernel.unprivileged_userns_clone, "
			   "user.max_user_namespaces or an AppArmor policy refuses it)",
			   strerror(errno));
	if (write_file("/proc/self/setgroups", "deny") ||
	    write_file("/proc/self/uid_map", "%u %u 1", u, u) ||
	    write_file("/proc/self/gid_map", "%u %u 1", g, g))
		return WHY("cannot map user %u in its namespace: %s", u, strerror(errno));
	return 0;
}

/*
 * dir (/sys/class, /dev) as a tmpfs with every entry it had (but those in
 * skip), each bound back from the original: directories with what is
 * mounted under them, files (device nodes) one by one, symbolic links made
 * again. *orig: a descriptor of the original, for more binds from it.
 */
static int overlay(const char *dir, const char *const *skip, int *orig, char *why,
		   size_t whylen)
{
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), lfd, n = 0;
	char (*names)[NAME_MAX + 1] = NULL;
	unsigned char *types = NULL;
	struct dirent *e;
	DIR *d;

	*orig = fd;
	lfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = lfd >= 0 ? fdopendir(lfd) : NULL;
	if (fd < 0 || !d)
		return WHY("%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		int skipped = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");

		for (const char *const *s = skip; *s && !skipped; s++)
			skipped = !strcmp(e->d_name, *s);
		if (skipped)
			continue;
		names = realloc(names, (size_t)(n + 1) * sizeof(*names));
		types = realloc(types, (size_t)(n + 1));
		if (!names || !types)
			break;
		snprintf(names[n], sizeof(names[n]), "%s", e->d_name);
		types[n] = e->d_type;
		if (types[n] == DT_UNKNOWN) {
			struct stat st;

			types[n] = fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ? DT_REG :
				   S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK :
				   DT_REG;
		}
		n++;
	}
	closedir(d);
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1m")) {
		free(names);
		free(types);
		return WHY("a tmpfs on %s: %s", dir, strerror(errno));
	}
	for (int i = 0; i < n; i++) {
		char to[PATH_MAX], from[64 + NAME_MAX], target[PATH_MAX];
		ssize_t l;
		int bad = 0;

		snprintf(to, sizeof(to), "%s/%s", dir, names[i]);
		snprintf(from, sizeof(from), "/proc/self/fd/%d/%s", fd, names[i]);
		switch (types[i]) {
		case DT_LNK:
			l = readlinkat(fd, names[i], target, sizeof(target) - 1);
			if (l >= 0)
				target[l] = 0;
			bad = l < 0 || symlink(target, to);
			break;
		case DT_DIR:
			bad = mkdir(to, 0755) || mount(from, to, NULL, MS_BIND | MS_REC, NULL);
			break;
		default: /* a file: a device node, a socket, a FIFO */
			bad = write_file(to, "%s", "") || mount(from, to, NULL, MS_BIND, NULL);
		}
		/* (one that cannot be had is missing from the view: say which) */
		if (bad && verbose)
			pr_warn("exec: the device view lacks %s: %s\n", to, strerror(errno));
	}
	free(names);
	free(types);
	return 0;
}

/* /dev/infiniband: the devices' uverbsN and rdma_cm, /dev/null each. */
static int dev_view(int ndev, char *why, size_t whylen)
{
	static const char *const skip[] = { "infiniband", NULL };
	char from[64], to[64];
	int orig;

	if (overlay("/dev", skip, &orig, why, whylen))
		return -1;
	if (mkdir("/dev/infiniband", 0755))
		return WHY("/dev/infiniband: %s", strerror(errno));
	snprintf(from, sizeof(from), "/proc/self/fd/%d/null", orig);
	for (int i = 0; i <= ndev; i++) {
		if (i < ndev)
			snprintf(to, sizeof(to), "/dev/infiniband/uverbs%d", i);
		else
			snprintf(to, sizeof(to), "/dev/infiniband/rdma_cm");
		if (write_file(to, "%s", "") || mount(from, to, NULL, MS_BIND, NULL))
			return WHY("%s: %s", to, strerror(errno));
	}
	close(orig);
	return 0;
}

/* /sys/class/infiniband and infiniband_verbs, for devs (interface names,
 * in the device list's order). */
static int sys_view(const char *const *devs, int ndev, char *why, size_t whylen)
{
	static const char *const skip[] = { "infiniband", "infiniband_verbs", NULL };
	struct stat null;
	int orig;

	if (stat("/dev/null", &null))
		return WHY("/dev/null: %s", strerror(errno));
	if (overlay("/sys/class", skip, &orig, why, whylen))
		return -1;
	close(orig);
	if (mkdir("/sys/class/infiniband", 0755) || mkdir("/sys/class/infiniband_verbs", 0755) ||
	    write_file("/sys/class/infiniband_verbs/abi_version", "6\n"))
		return WHY("/sys/class/infiniband: %s", strerror(errno));
	for (int i = 0; i < ndev; i++) {
		char tree[PATH_MAX], to[PATH_MAX], uv[64], f[96];

		snprintf(tree, sizeof(tree), XHCA_RUN_DIR "/%s.ib", devs[i]);
		snprintf(to, sizeof(to), "/sys/class/infiniband/xhca_%s", devs[i]);
		if (mkdir(to, 0755) || mount(tree, to, NULL, MS_BIND, NULL))
			return WHY("%s (from %s, xhcad's): %s", to, tree, strerror(errno));
		snprintf(uv, sizeof(uv), "/sys/class/infiniband_verbs/uverbs%d", i);
		mkdir(uv, 0755);
		snprintf(f, sizeof(f), "%s/ibdev", uv);
		write_file(f, "xhca_%s\n", devs[i]);
		snprintf(f, sizeof(f), "%s/abi_version", uv);
		write_file(f, "1\n");
		snprintf(f, sizeof(f), "%s/dev", uv);
		write_file(f, "%u:%u\n", major(null.st_rdev), minor(null.st_rdev));
	}
	/* read-only, as sysfs is to a user */
	if (mount(NULL, "/sys/class", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID |
		  MS_NOEXEC, NULL))
		return WHY("/sys/class read-only: %s", strerror(errno));
	return 0;
}

int view_enter(const char *const *devs, int ndev, char *why, size_t whylen)
{
	if (geteuid() != 0 ? userns(why, whylen) : unshare(CLONE_NEWNS) ?
	    WHY("cannot make a mount namespace: %s", strerror(errno)) : 0)
		return -1;
	/* nothing done here reaches the host's namespace */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL))
		return WHY("cannot keep the mounts to this namespace: %s", strerror(errno));
	if (sys_view(devs, ndev, why, whylen) || dev_view(ndev, why, whylen))
		return -1;
	return 0;
}
