/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Option tables for xhcad and the tools (as xdp-tools' params): one table
 * per program or command names every option once, with its argument and
 * help; getopt_long's tables and the usage text are made from it, so no
 * usage string is kept apart from the options it describes.
 */
#ifndef XHCA_OPT_H
#define XHCA_OPT_H

#include <getopt.h>
#include <stdio.h>

/* A number's range is checked by xhca_opt_num and shown in the usage. */
#define XHCA_OPT_NUM (1u << 0)
/* Left out of the usage text (an alias, or a test-only knob). */
#define XHCA_OPT_HIDDEN (1u << 1)
/* The command needs it: the usage says so, and a synopsis shows it without
 * brackets. The program checks that it was given (xhca_opt_parse does not). */
#define XHCA_OPT_REQUIRED (1u << 2)
/* With XHCA_OPT_NUM: max is only the type's limit (a count up to 2^63), so
 * the usage shows the default alone, not a range nobody reads. */
#define XHCA_OPT_UNBOUNDED (1u << 3)
/* Only on the command line: a configuration file may not give it
 * (xhca_opt_file). */
#define XHCA_OPT_CMDLINE (1u << 4)
/* Each time it is given adds one (a list): a configuration file may give it
 * on several lines; any other setting only once. */
#define XHCA_OPT_REPEAT (1u << 5)

struct xhca_opt {
	const char *name;	/* long name, without "--"; NULL ends a table */
	int key;		/* what getopt_long returns: a short option's
				 * character (-x shown too), or an id >= 0x100 */
	const char *arg;	/* the argument's name ("N", "IFNAME"); NULL: none */
	const char *help;	/* lines joined by \n */
	unsigned int flags;	/* XHCA_OPT_* */
	unsigned long long min, max, def; /* XHCA_OPT_NUM: range, default (def
					   * shown when not 0) */
	const char *hint;	/* what to give instead of a bad argument (else,
				 * for a number, "give MIN to MAX") */
	/* xhca_opt_parse: takes the option (v: the number, XHCA_OPT_NUM);
	 * 0; -errno for a bad argument (the parser says so, with hint); or
	 * 1 when set printed its own message. NULL: the help option. */
	int (*set)(void *ctx, const struct xhca_opt *o, const char *arg, unsigned long long v);
};

#define XHCA_OPT_KEY(i) (0x100 + (i))	/* an id for an option with no short form */

/* For writing tables: a set function (its parameters named ctx, x, arg and
 * v), an option with no short form (i: its XHCA_OPT_KEY), and a number's
 * range and default (..._UNBOUNDED: not shown). */
#define XHCA_OPT_SETTER(fn) \
	static int fn(void *ctx, const struct xhca_opt *x, const char *arg, unsigned long long v)
#define XHCA_OPT_LONG(i, n, a, h, fn, ...) \
	{ .name = (n), .key = XHCA_OPT_KEY(i), .arg = (a), .help = (h), .set = (fn), __VA_ARGS__ }
#define XHCA_OPT_RANGE(lo, hi, d) .flags = XHCA_OPT_NUM, .min = (lo), .max = (hi), .def = (d)
#define XHCA_OPT_RANGE_UNBOUNDED(lo, hi, d) \
	.flags = XHCA_OPT_NUM | XHCA_OPT_UNBOUNDED, .min = (lo), .max = (hi), .def = (d)

/* Usage lines of the options, the help at column col (wrapped lines
 * indented to it; a long head gets a line of its own). */
void xhca_opt_usage(FILE *f, const struct xhca_opt *opts, int col);
/* The options' names as "--a, --b or --c" (for "unknown option; use ..."). */
int xhca_opt_names(const struct xhca_opt *opts, char *buf, size_t len);
/* getopt_long's tables: lo (room for every option and the end), short
 * options into sh after a "+" (sh + 1: without it). */
int xhca_opt_getopt(const struct xhca_opt *opts, struct option *lo, size_t nlo, char *sh,
		    size_t nsh);
/* The table's entry for what getopt_long returned; NULL: none. */
const struct xhca_opt *xhca_opt_find(const struct xhca_opt *opts, int key);
/* Parses argv by the table, calling each option's set (ctx passed on);
 * words that are not options are moved to the end (*next: the first of
 * them), or with XHCA_OPT_STOP parsing stops at the first. Returns 0,
 * XHCA_OPT_HELP (the help option: print the usage, exit 0) or XHCA_OPT_BAD
 * (a one-line message "prog: ..." went to stderr). */
#define XHCA_OPT_HELP 1
#define XHCA_OPT_BAD 2
#define XHCA_OPT_STOP (1u << 0)
int xhca_opt_parse(const char *prog, const struct xhca_opt *opts, int argc, char **argv,
		   unsigned int pflags, void *ctx, int *next);
/* xhca_opt_parse for a program or command that takes options alone: a word
 * that is not an option is bad usage too. */
int xhca_opt_parse_all(const char *prog, const struct xhca_opt *opts, int argc, char **argv,
		       void *ctx);
/* Reads the configuration file path by the table: "name = value" lines,
 * name a long option (without --), an option without an argument taking
 * yes or no; blank lines and lines starting with # are skipped. Each value
 * goes through the option's range check and set, as on the command line.
 * Every mistake goes to stderr as "path:line: what is wrong: what to give",
 * and reading goes on. The values given to set point into *text, the
 * file's text (as argv's do into argv): free it once the settings are no
 * longer used. Returns the number of mistakes, or -errno when the file
 * cannot be read (nothing printed, *text NULL). */
int xhca_opt_file(const char *prog, const struct xhca_opt *opts, const char *path, void *ctx,
		  char **text);
/* arg as a number in o's range (decimal or 0x hex): 0, or -EINVAL with a
 * one-line message in err ("--name ARG: use MIN to MAX"). */
int xhca_opt_num(const struct xhca_opt *o, const char *arg, unsigned long long *v, char *err,
		 size_t errlen);

#endif /* XHCA_OPT_H */
