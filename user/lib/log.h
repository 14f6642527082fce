/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One logging module for xhcad and the tools; libbpf and libxdp print
 * through it. */
#ifndef XHCA_LOG_H
#define XHCA_LOG_H

enum xhca_log_level {
	XHCA_LOG_WARN = 0,
	XHCA_LOG_INFO = 1,
	XHCA_LOG_DEBUG = 2,
};

/* prog: prefix of every line ("xhcad"); level: highest level printed. */
void xhca_log_init(const char *prog, int level);
void xhca_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int xhca_log_level(void);

#define pr_warn(...) xhca_log(XHCA_LOG_WARN, __VA_ARGS__)
#define pr_info(...) xhca_log(XHCA_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) xhca_log(XHCA_LOG_DEBUG, __VA_ARGS__)

#endif /* XHCA_LOG_H */
