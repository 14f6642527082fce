/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The integration tests' own programs (xhca-verbstest, xhca-rdmacmtest,
 * xhca-cmtest, xhca-rctest, xhca-neightest) report as the shell tests read
 * them: one line per check, "ok - ..." or "not ok - ...", and count the
 * failures in fails.
 */
#ifndef XHCA_TESTS_INTEG_CHECK_H
#define XHCA_TESTS_INTEG_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int fails;

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));
static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	fails += !ok;
}

#endif
