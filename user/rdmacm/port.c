/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ports of the rdma_cm port spaces, held as the kernel's rdma_cm holds them
 * (cma_get_port): per network namespace, every process's, apart from TCP's
 * and UDP's. A port held is an abstract unix socket bound to a name
 * "xhca-rdmacm:PS:PORT:ADDR" (ADDR an address, or any4/any6 for a
 * wildcard): the abstract namespace is per network namespace, a name is
 * anyone's to see (/proc/net/unix) and goes when its socket does, with the
 * process too. The rules (bind(2)'s): an address and a port once; a
 * wildcard takes the port on every address of its family, and an IPv6
 * wildcard that is not AF-only IPv4's too (it holds any4 as well); a port
 * taken on one address cannot go to the wildcard and the other way round.
 * With REUSEADDR nothing is held or checked. Checks and binds are not one
 * step: two binds at the same moment may both pass (the kernel's would not).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include "xcm.h"

#define PFX "xhca-rdmacm:"
#define CAP_NET_BIND_SERVICE_BIT 10
#define NAME_LEN 96		/* fits a unix address after its NUL */

static socklen_t addr_of(struct sockaddr_un *sa, const char *name)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "%s", name);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
}

static void name_of(char *buf, size_t len, uint16_t ps, uint16_t port, const char *addr)
{
	snprintf(buf, len, PFX "%04x:%u:%s", ps, port, addr);
}

/* The name held by a socket of ours: its fd, or -EADDRINUSE. */
static int hold(const char *name)
{
	struct sockaddr_un sa;
	socklen_t len = addr_of(&sa, name);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, len)) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* Whether anyone holds name: a datagram socket connects only to a bound one. */
static int held(const char *name)
{
	struct sockaddr_un sa;
	socklen_t len = addr_of(&sa, name);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return 0;
	rc = !connect(fd, (struct sockaddr *)&sa, len);
	close(fd);
	return rc;
}

/* Whether a port of ps is held on a single address of a family (v4, v6)
 * by anyone in this namespace. */
static int held_on_address(uint16_t ps, uint16_t port, int v4, int v6)
{
	char want[NAME_LEN], line[512];
	FILE *f = fopen("/proc/net/unix", "r");
	int found = 0;

	if (!f)
		return 0;
	name_of(want, sizeof(want), ps, port, "");
	while (!found && fgets(line, sizeof(line), f)) {
		char *n = strstr(line, " @" PFX);
		const char *a;

		if (!n || strncmp(n + 2, want, strlen(want)))
			continue;
		a = n + 2 + strlen(want);
		if (!strncmp(a, "any", 3))
			continue;
		found = strchr(a, '.') ? v4 : v6;
	}
	fclose(f);
	return found;
}

void xcm_port_drop(struct xcm_port *p)
{
	for (int k = 0; k < 2; k++) {
		if (p->fd[k] >= 0)
			close(p->fd[k]);
		p->fd[k] = -1;
	}
	p->port = 0;
}

static int take_wildcard(struct xcm_port *p, uint16_t ps, int v4, uint16_t port,
			 unsigned int flags)
{
	int afonly = v4 || (flags & XCM_PORT_AFONLY);
	char name[NAME_LEN];

	name_of(name, sizeof(name), ps, port, v4 ? "any4" : "any6");
	p->fd[0] = hold(name);
	if (p->fd[0] < 0)
		return p->fd[0];
	if (!afonly) {
		name_of(name, sizeof(name), ps, port, "any4");
		p->fd[1] = hold(name);
		if (p->fd[1] < 0)
			return -EADDRINUSE;
	}
	if (held_on_address(ps, port, v4 || !afonly, !v4))
		return -EADDRINUSE;
	return 0;
}

static int take_address(struct xcm_port *p, uint16_t ps, const uint8_t ip[16], uint16_t port)
{
	char name[NAME_LEN], text[INET6_ADDRSTRLEN];

	name_of(name, sizeof(name), ps, port, xcm_ip_is_v4(ip) ? "any4" : "any6");
	if (held(name))
		return -EADDRINUSE;
	xcm_ip_text(ip, text, sizeof(text));
	name_of(name, sizeof(name), ps, port, text);
	p->fd[0] = hold(name);
	return p->fd[0] < 0 ? p->fd[0] : 0;
}

static int take_one(struct xcm_port *p, uint16_t ps, const uint8_t ip[16], uint16_t port,
		    unsigned int flags)
{
	int rc;

	if (flags & XCM_PORT_REUSE)
		rc = 0;
	else if (xcm_ip_any(ip))
		rc = take_wildcard(p, ps, xcm_ip_is_v4(ip), port, flags);
	else
		rc = take_address(p, ps, ip, port);
	if (rc) {
		xcm_port_drop(p);
		return rc;
	}
	p->port = port;
	return 0;
}

/* The namespace's ephemeral range (ip_local_port_range: rdma_cm's too). */
int xcm_port_range(uint16_t *lo, uint16_t *hi)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	unsigned int a = 32768, b = 60999;

	if (f) {
		if (fscanf(f, "%u %u", &a, &b) != 2 || !a || a > b || b > 65535) {
			a = 32768;
			b = 60999;
		}
		fclose(f);
	}
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
}

/* A random start in the range, then upward (the kernel's search). */
static int take_ephemeral(struct xcm_port *p, uint16_t ps, const uint8_t ip[16],
			  unsigned int flags)
{
	uint16_t lo, hi;
	uint32_t r = 0, n;

	xcm_port_range(&lo, &hi);
	n = (uint32_t)(hi - lo) + 1;
	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)getpid();
	for (uint32_t k = 0; k < n; k++) {
		uint16_t port = (uint16_t)(lo + (r + k) % n);
		int rc = take_one(p, ps, ip, port, flags & ~XCM_PORT_REUSE);

		if (rc != -EADDRINUSE)
			return rc;
	}
	return -EADDRNOTAVAIL;
}

/* CAP_NET_BIND_SERVICE in the effective set. */
int xcm_port_may_bind_low(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long long caps = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return !!(caps & (1ull << CAP_NET_BIND_SERVICE_BIT));
}

static unsigned int unprivileged_start(void)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_unprivileged_port_start", "r");
	unsigned int v = 1024;

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 1024;
		fclose(f);
	}
	return v;
}

/*
 * Takes port of ps on ip (16 bytes; a wildcard for any address) for p: 0,
 * -EADDRINUSE (held already, by anyone), -EACCES (a privileged port without
 * CAP_NET_BIND_SERVICE), or for port 0 an ephemeral port, -EADDRNOTAVAIL
 * when none is free.
 */
int xcm_port_take(struct xcm_port *p, uint16_t ps, const uint8_t ip[16], uint16_t port,
		  unsigned int flags)
{
	p->fd[0] = p->fd[1] = -1;
	p->port = 0;
	if (!port)
		return take_ephemeral(p, ps, ip, flags);
	if (port < unprivileged_start() && !(flags & XCM_PORT_PRIV) && !xcm_port_may_bind_low())
		return -EACCES;
	return take_one(p, ps, ip, port, flags);
}
