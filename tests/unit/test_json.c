/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The JSON writer (user/lib/json.c) that the CLI and the tools share, byte
 * for byte: strings escaped (quotes, backslashes, control characters),
 * nesting and its separators, numbers, the compact lists of xhca-gen, and
 * the line each outermost value ends.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xhca/json.h>
#include "tests.h"

#define WHY_LEN 240

static FILE *mem;
static char *buf;
static size_t buf_len;

/* The writer's output goes to buf until done(). */
static int start(char *why)
{
	mem = open_memstream(&buf, &buf_len);
	CHECK(mem, "open_memstream failed");
	jw_out(mem);
	return 0;
}

/* Back to stdout; whether the output was want. */
static int done(const char *want, char *why)
{
	int same;

	jw_out(NULL);
	fclose(mem);
	same = !strcmp(buf, want);
	if (!same)
		snprintf(why, WHY_LEN, "wrote '%s', want '%s'", buf, want);
	free(buf);
	return same ? 0 : -1;
}

static int case_escape(char *why)
{
	if (start(why))
		return -1;
	jw_open(NULL, '{');
	jw_str("q", "say \"hi\"");
	jw_str("b", "C:\\dir\\");
	jw_str("c", "a\nb\tc\r\x01\x1f");
	/* DEL, and UTF-8's bytes, go as they are */
	jw_str("u", "\x7f" "caf\xc3\xa9");
	jw_str("k\"ey", "");
	jw_close('}');
	return done("{\"q\": \"say \\\"hi\\\"\", \"b\": \"C:\\\\dir\\\\\", "
		    "\"c\": \"a\\u000ab\\u0009c\\u000d\\u0001\\u001f\", "
		    "\"u\": \"\x7f" "caf\xc3\xa9\", \"k\\\"ey\": \"\"}\n", why);
}

static int case_nesting(char *why)
{
	if (start(why))
		return -1;
	jw_open(NULL, '{');
	jw_open("empty", '{');
	jw_close('}');
	jw_open("none", '[');
	jw_close(']');
	jw_open("list", '[');
	for (int i = 0; i < 2; i++) {
		jw_open(NULL, '{');
		jw_u64("i", (unsigned long long)i);
		jw_open("in", '[');
		jw_open(NULL, '[');
		jw_bool(NULL, i);
		jw_close(']');
		jw_close(']');
		jw_close('}');
	}
	jw_close(']');
	jw_str("after", NULL);
	jw_close('}');
	return done("{\"empty\": {}, \"none\": [], \"list\": [{\"i\": 0, \"in\": [[false]]}, "
		    "{\"i\": 1, \"in\": [[true]]}], \"after\": null}\n", why);
}

static int case_numbers(char *why)
{
	if (start(why))
		return -1;
	jw_open(NULL, '{');
	jw_u64("zero", 0);
	jw_u64("max", ~0ULL);
	jw_float("f2", 2, 6.567);
	jw_float("f6", 6, 0.1);
	jw_float("f0", 0, 2.5);
	jw_float("neg", 3, -1.0 / 3);
	jw_float("big", 1, 1e15);
	jw_float("nan", 3, NAN);
	jw_float("inf", 3, INFINITY);
	jw_float("minf", 3, -HUGE_VAL);
	jw_close('}');
	return done("{\"zero\": 0, \"max\": 18446744073709551615, \"f2\": 6.57, "
		    "\"f6\": 0.100000, \"f0\": 2, \"neg\": -0.333, \"big\": 1000000000000000.0, "
		    "\"nan\": null, \"inf\": null, \"minf\": null}\n", why);
}

/* A float is what printf's "%.Nf" makes of it (the tools' JSON was printf's
 * before the writer, and stays byte for byte what it was). */
static int case_as_printf(char *why)
{
	static const double v[] = { 0, 0.5, 1.5, 2.675, 1e-7, 123456.789, 0.294117647, 99.3194,
				    -5.25, 1e300, DBL_MIN, DBL_MAX };
	char want[512], got[512];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		for (int prec = 0; prec <= 6; prec++) {
			FILE *f = fmemopen(got, sizeof(got), "w");

			CHECK(f, "fmemopen failed");
			jw_out(f);
			jw_float(NULL, prec, v[i]);
			jw_out(NULL);
			fclose(f);
			snprintf(want, sizeof(want), "%.*f", prec, v[i]);
			CHECK(!strcmp(got, want), "%%.%df of %g: '%.60s', printf '%.60s'", prec, v[i],
			      got, want);
		}
	}
	return 0;
}

/* xhca-gen's lists: "," alone between members, ", " around them as ever. */
static int case_compact(char *why)
{
	if (start(why))
		return -1;
	jw_open(NULL, '{');
	jw_open_compact("one", '[');
	jw_u64(NULL, 64);
	jw_close(']');
	jw_open_compact("three", '[');
	jw_u64(NULL, 64);
	jw_u64(NULL, 128);
	jw_u64(NULL, 0);
	jw_close(']');
	jw_open("spaced", '[');
	jw_u64(NULL, 1);
	jw_u64(NULL, 2);
	jw_close(']');
	jw_close('}');
	return done("{\"one\": [64], \"three\": [64,128,0], \"spaced\": [1, 2]}\n", why);
}

/* Each outermost value on a line of its own, with nothing before it. */
static int case_lines(char *why)
{
	if (start(why))
		return -1;
	for (int i = 1; i <= 3; i++) {
		jw_open(NULL, '{');
		jw_u64("n", (unsigned long long)i);
		jw_close('}');
	}
	jw_open(NULL, '[');
	jw_close(']');
	return done("{\"n\": 1}\n{\"n\": 2}\n{\"n\": 3}\n[]\n", why);
}

/* jw_out starts afresh: what a value left open is forgotten. */
static int case_restart(char *why)
{
	if (start(why))
		return -1;
	jw_open(NULL, '{');
	jw_open("half", '[');
	jw_u64(NULL, 1);
	jw_out(NULL);
	jw_out(mem);
	jw_open(NULL, '{');
	jw_bool("ok", 1);
	jw_close('}');
	return done("{\"half\": [1{\"ok\": true}\n", why);
}

static const struct unit_case cases[] = {
	UNIT_CHECK("escape", case_escape,
		   "strings: quotes, backslashes and control characters escaped"),
	UNIT_CHECK("nesting", case_nesting,
		   "nesting: objects in arrays in objects, empty ones, separators"),
	UNIT_CHECK("numbers", case_numbers,
		   "numbers: 0, 2^64-1, floats at a precision, NaN and infinities as null"),
	UNIT_CHECK("as_printf", case_as_printf, "floats as printf's %.Nf, precision 0 to 6"),
	UNIT_CHECK("compact", case_compact,
		   "compact lists: [64,128,0] inside ', '-separated members"),
	UNIT_CHECK("lines", case_lines, "each outermost value on a line of its own"),
	UNIT_CHECK("restart", case_restart, "jw_out starts afresh"),
};

UNIT_FILE(json, NULL, NULL, cases);
