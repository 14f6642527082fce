/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The usage texts, made from the command tables (struct cmd) and their
 * option tables (struct xhca_opt, listed by opt.c as xhcad's are): the
 * synopsis, the list of an object's commands, the options and the
 * dispatcher's "use a, b or c" all come from the one description, so none
 * can fall behind what the parser takes.
 */
#include "cli.h"

#define HELP_WIDTH 80	/* synopses wrap before it */
#define HELP_LIST_COL 33 /* where a command's summary starts in a list */
#define HELP_OPT_COL 27	/* where an option's help starts */

/* A line being written: words wrap to column indent past HELP_WIDTH. */
struct line {
	FILE *f;
	int col;
	int indent;
};

/* One word of a synopsis, after a space. */
static void put_word(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_word(struct line *l, const char *fmt, ...)
{
	char w[160];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(w, sizeof(w), fmt, ap);
	va_end(ap);
	if (l->col > l->indent && l->col + 1 + n > HELP_WIDTH)
		l->col = fprintf(l->f, "\n%*s", l->indent - 1, "") - 1;
	l->col += fprintf(l->f, " %s", w);
}

/* "--len N", "[--iova VA]", "-i IFNAME", "[-j]": the short form when there is one. */
static void put_opt(struct line *l, const struct xhca_opt *o, int bare)
{
	char head[96];

	if (o->key > 0 && o->key < 0x100)
		snprintf(head, sizeof(head), "-%c%s%s", o->key, o->arg ? " " : "",
			 o->arg ? o->arg : "");
	else
		snprintf(head, sizeof(head), "--%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
	put_word(l, bare ? "%s" : "[%s]", head);
}

/* The names of cmds joined by sep, last before the last one. */
static int join_names(const struct cmd *cmds, const char *sep, const char *last, char *buf,
		      size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (const struct cmd *c = cmds; c->name && off < len; c++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					c == cmds ? "" : c[1].name ? sep : last, c->name);
	return off < len ? 0 : -ENOSPC;
}

int cmd_names(const struct cmd *cmds, char *buf, size_t len)
{
	return join_names(cmds, ", ", " or ", buf, len);
}

const struct cmd *cmd_find(const struct cmd *cmds, const char *name)
{
	for (const struct cmd *c = cmds; c->name; c++)
		if (!strcmp(c->name, name) || (c->alias && !strcmp(c->alias, name)))
			return c;
	return NULL;
}

/* What follows a command's name: an object's commands ("show|reg|dereg" in a
 * list, "COMMAND ..." in its usage), or the command's words and options
 * (CMD_OPTS_FIRST: options first, as they are parsed). */
static void put_synopsis(struct line *l, const struct cmd *c, int in_list)
{
	char names[256];

	if (c->sub && in_list) {
		join_names(c->sub, "|", "|", names, sizeof(names));
		put_word(l, "%s", names);
		return;
	}
	if (c->sub) {
		put_word(l, "COMMAND ...");
		return;
	}
	if (c->args && !(c->flags & CMD_OPTS_FIRST))
		put_word(l, "%s", c->args);
	for (const struct xhca_opt *o = c->opts; o && o->name; o++)
		if (!(o->flags & XHCA_OPT_HIDDEN))
			put_opt(l, o, o->flags & XHCA_OPT_REQUIRED);
	if (c->args && (c->flags & CMD_OPTS_FIRST))
		put_word(l, "%s", c->args);
}

/* "Usage: xhca -i IFNAME [-j] [-v] mr reg --len N [--access LIST] ...": the
 * global options from their table (-i, their one with a value, in brackets
 * where the command runs without it; -h goes with anything and is left
 * out), then the words that named the command (path), then its synopsis. */
static void put_usage(FILE *f, const char *path, const struct cmd *c)
{
	struct line l = { f, 0, 0 };

	l.col = fprintf(f, "Usage: xhca");
	l.indent = l.col + 1;
	for (const struct xhca_opt *o = global_opts; o->name; o++)
		if (o->key != 'h')
			put_opt(&l, o, o->arg && !(c->flags & CMD_ANY_IF));
	if (path)
		put_word(&l, "%s", path);
	put_synopsis(&l, c, 0);
	fputc('\n', f);
}

/* One command of an object's list: its names ("show|list"), its synopsis,
 * then its summary at HELP_LIST_COL (on a line of its own when the synopsis
 * reaches it). */
static void put_list_entry(FILE *f, const struct cmd *c)
{
	struct line l = { f, 0, 0 };

	l.col = fprintf(f, "  %s%s%s", c->name, c->alias ? "|" : "", c->alias ? c->alias : "");
	l.indent = l.col + 1;
	put_synopsis(&l, c, 1);
	if (l.col > HELP_LIST_COL - 2) {
		fputc('\n', f);
		l.col = 0;
	}
	fprintf(f, "%*s%s\n", HELP_LIST_COL - l.col, "", c->summary ? c->summary : "");
}

/* The usage of a command or an object (path: the words that name it, NULL
 * for the top level): synopsis, what it does, its commands, its options. */
void cmd_help(FILE *f, const char *path, const struct cmd *c)
{
	const char *sp = path ? " " : "";

	put_usage(f, path, c);
	if (c->text || c->summary)
		fprintf(f, "%s\n", c->text ? c->text : c->summary);
	if (c->sub) {
		fputs("Commands:\n", f);
		for (const struct cmd *s = c->sub; s->name; s++)
			put_list_entry(f, s);
	}
	if (c->opts) {
		fputs("Options:\n", f);
		xhca_opt_usage(f, c->opts, HELP_OPT_COL);
	}
	if (c->sub && !(c->flags & CMD_NO_DEFAULT))
		fprintf(f, "xhca %s alone runs xhca %s %s.\n", path, path, c->sub->name);
	if (c->sub)
		fprintf(f, "The usage of a command: xhca %s%sCOMMAND --help.\n", path ? path : "", sp);
}
