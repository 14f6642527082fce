/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The JSON writer (include/priv/xhca/json.h): the program's one, its state
 * the depth and, at each depth, whether a member was written yet (the next
 * one then goes after a separator) and how members are separated.
 */
#include <math.h>
#include <xhca/json.h>

static FILE *jw_f;
static int jw_depth;
static int jw_first[JW_MAX_DEPTH + 1] = { 1 };
static int jw_compact[JW_MAX_DEPTH + 1];

static FILE *out(void)
{
	return jw_f ? jw_f : stdout;
}

void jw_out(FILE *f)
{
	jw_f = f;
	jw_depth = 0;
	jw_first[0] = 1;
	jw_compact[0] = 0;
}

void jw_str_raw(const char *s)
{
	FILE *f = out();

	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void jw_key(const char *k)
{
	if (!jw_first[jw_depth])
		fputs(jw_compact[jw_depth] ? "," : ", ", out());
	jw_first[jw_depth] = 0;
	if (k) {
		jw_str_raw(k);
		fputs(": ", out());
	}
}

void jw_open(const char *k, char c)
{
	jw_key(k);
	fputc(c, out());
	if (jw_depth < JW_MAX_DEPTH)
		jw_depth++;
	jw_first[jw_depth] = 1;
	jw_compact[jw_depth] = 0;
}

void jw_open_compact(const char *k, char c)
{
	jw_open(k, c);
	jw_compact[jw_depth] = 1;
}

/* The outermost value's end ends the line; a value after it starts one
 * of its own. */
void jw_close(char c)
{
	fputc(c, out());
	if (jw_depth)
		jw_depth--;
	if (!jw_depth) {
		fputc('\n', out());
		jw_first[0] = 1;
	}
}

void jw_u64(const char *k, unsigned long long v)
{
	jw_key(k);
	fprintf(out(), "%llu", v);
}

void jw_float(const char *k, int prec, double v)
{
	jw_key(k);
	if (isfinite(v))
		fprintf(out(), "%.*f", prec, v);
	else
		fputs("null", out());
}

void jw_bool(const char *k, int v)
{
	jw_key(k);
	fputs(v ? "true" : "false", out());
}

void jw_str(const char *k, const char *s)
{
	jw_key(k);
	if (s)
		jw_str_raw(s);
	else
		fputs("null", out());
}
