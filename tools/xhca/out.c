/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The output layer, as iproute2's print_*(PRINT_ANY, ...): one call writes a
 * value as text or as JSON, whichever the user asked for (-j). key names it
 * in JSON (NULL: text only); fmt is its text, a printf format of the one
 * value (NULL: JSON only). An object groups values under a key in JSON and
 * is a line (its prefix, its values, its end) in text.
 */
#include "cli.h"

void out_u64(const char *key, const char *fmt, unsigned long long v)
{
	if (json) {
		if (key)
			jw_u64(key, v);
	} else if (fmt) {
		printf(fmt, v);
	}
}

void out_str(const char *key, const char *fmt, const char *v)
{
	if (json) {
		if (key)
			jw_str(key, v);
	} else if (fmt) {
		printf(fmt, v);
	}
}

void out_bool(const char *key, const char *fmt, int v)
{
	if (json) {
		if (key)
			jw_bool(key, v);
	} else if (fmt) {
		printf(fmt, v ? "yes" : "no");
	}
}

void out_text(const char *fmt, ...)
{
	va_list ap;

	if (json)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

void out_open(const char *key, const char *text)
{
	if (json)
		jw_open(key, '{');
	else if (text)
		fputs(text, stdout);
}

void out_close(const char *text)
{
	if (json)
		jw_close('}');
	else if (text)
		fputs(text, stdout);
}
