/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The integration tests' own programs (xhca-verbstest, xhca-rdmacmtest,
 * xhca-cmtest, xhca-rctest, xhca-neightest) report as the shell tests read
 * them: one line per check, "ok - ..." or "not ok - ...", and count the
 * failures in fails.
 *
 * A program of one file has its own (static) fails and check. A program of
 * several files (xhca-rctest, xhca-verbstest) defines CHECK_SHARED in each:
 * one fails and one check for all of them, defined in the file that defines
 * CHECK_MAIN too.
 */
#ifndef XHCA_TESTS_INTEG_CHECK_H
#define XHCA_TESTS_INTEG_CHECK_H

#include <stdarg.h>
#include <stdio.h>

#ifdef CHECK_SHARED
#define CHECK_LINKAGE
extern int fails;
void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#else
#define CHECK_LINKAGE static
static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));
#endif

#if !defined(CHECK_SHARED) || defined(CHECK_MAIN)
CHECK_LINKAGE int fails;

CHECK_LINKAGE void check(int ok, const char *fmt, ...)
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

#endif
