/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "log.h"

static const char *log_prog = "xhca";
static int log_max = XHCA_LOG_WARN;

int xhca_log_level(void)
{
	return log_max;
}

static void vlog(int level, const char *fmt, va_list ap)
{
	if (level > log_max)
		return;
	fprintf(stderr, "%s: ", log_prog);
	vfprintf(stderr, fmt, ap);
}

void xhca_log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

/* libbpf and libxdp are chatty about probes that fail by design (the libxdp
 * dispatcher on a kernel without trampolines): one level lower than theirs. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	vlog(level == LIBBPF_WARN ? XHCA_LOG_INFO : XHCA_LOG_DEBUG, fmt, ap);
	return 0;
}

static int libxdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	vlog(level == LIBXDP_WARN ? XHCA_LOG_INFO : XHCA_LOG_DEBUG, fmt, ap);
	return 0;
}

void xhca_log_init(const char *prog, int level)
{
	log_prog = prog;
	log_max = level;
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);
}
