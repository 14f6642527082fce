/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The lowest layer of xhcad: clocks, the control reply's error text, and
 * what /proc says of a process. Nothing here calls another file of xhcad.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "log.h"
#include "xhcad_util.h"

volatile sig_atomic_t xhcad_stop; /* a signal: the loops end (main.c) */

/* The running thread's engine (xhcad_util.h: eng()). */
__thread struct engine *eng_self;

void engine_wake(struct engine *e, int always)
{
	__u64 one = 1;

	if (e->wake_fd < 0 || (!always && !__atomic_load_n(&e->sleeping, __ATOMIC_SEQ_CST)))
		return;
	if (write(e->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pr_debug("engine %u: wake: %s\n", e->id, strerror(errno));
}

/* CLOCK_MONOTONIC, as bpf_ktime_get_ns() in the metadata. */
__u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

__u64 now_ms(void)
{
	return now_ns() / 1000000;
}

int errf(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return rc;
}

/* The start time of a process (field 22 of /proc/PID/stat), 0 if gone. */
__u64 proc_start_time(__u32 pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* after the command name, which may hold spaces and parentheses */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu", &start) != 1)
		return 0;
	return start;
}
