/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The JSON writer (user/lib/json.c) of the CLI (xhca -j) and the tools
 * (xhca-bench -j, xhca-gen -j, xhca-recv -j), one as iproute2's and bpftool's
 * json_writer is theirs: a value (an object, as a rule) on one line,
 * members apart by ", ", a key and its value by ": ", numbers as numbers,
 * strings escaped; a newline once the outermost value closes. One writer
 * per program, on stdout unless jw_out names another stream. In
 * libxhca.a, never in libxhca.so.1.
 */
#ifndef XHCA_JSON_H
#define XHCA_JSON_H

#include <stdio.h>

/* The deepest nesting it keeps track of. */
#define JW_MAX_DEPTH 8

/* Writes to f from now on (NULL: stdout), as at the start: at the top
 * level, nothing open. */
void jw_out(FILE *f);
/* Each value below goes after a key k, in an object, or, k NULL, alone
 * (an array's member, or the outermost value). */
void jw_key(const char *k);
/* Opens an object ('{') or an array ('['), closed by jw_close('}' or ']'). */
void jw_open(const char *k, char c);
/* ... whose members are apart by "," alone (xhca-gen's lists). */
void jw_open_compact(const char *k, char c);
void jw_close(char c);
void jw_u64(const char *k, unsigned long long v);
/* prec digits after the point ("%.*f"); null for NaN or an infinity */
void jw_float(const char *k, int prec, double v);
void jw_bool(const char *k, int v);
/* s escaped; s NULL: null */
void jw_str(const char *k, const char *s);
/* The string s, quoted and escaped, with no key or separator before it:
 * '"' and '\' by a backslash, the control characters as \u00XX. */
void jw_str_raw(const char *s);

#endif /* XHCA_JSON_H */
