/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Option tables: usage text and getopt_long tables from one description.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "opt.h"

static int is_short(int key)
{
	return key > 0 && key < 0x100;
}

/* "-i, --interface IFNAME" */
static void opt_head(const struct xhca_opt *o, char *buf, size_t len)
{
	char sh[8] = "";

	if (is_short(o->key))
		snprintf(sh, sizeof(sh), "-%c, ", o->key);
	snprintf(buf, len, "%s--%s%s%s", sh, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

void xhca_opt_usage(FILE *f, const struct xhca_opt *opts, int col)
{
	for (const struct xhca_opt *o = opts; o->name; o++) {
		const char *h = o->help ? o->help : "";
		char head[96];

		if (o->flags & XHCA_OPT_HIDDEN)
			continue;
		opt_head(o, head, sizeof(head));
		fprintf(f, "  %-*s", col - 3, head);
		if ((int)strlen(head) > col - 3)
			fprintf(f, "\n  %-*s", col - 3, "");
		fputc(' ', f);
		for (;;) {	/* each line of the help, indented */
			const char *nl = strchr(h, '\n');

			fprintf(f, "%.*s", nl ? (int)(nl - h) : (int)strlen(h), h);
			if (!nl)
				break;
			h = nl + 1;
			fprintf(f, "\n%*s", col, "");
		}
		if (o->flags & XHCA_OPT_REQUIRED)
			fputs(" (required)", f);
		if ((o->flags & XHCA_OPT_UNBOUNDED) && o->def)
			fprintf(f, " [default %llu]", o->def);
		else if ((o->flags & XHCA_OPT_NUM) && !(o->flags & XHCA_OPT_UNBOUNDED))
			fprintf(f, o->def ? " [%llu..%llu, default %llu]" : " [%llu..%llu]", o->min,
				o->max, o->def);
		fputc('\n', f);
	}
}

int xhca_opt_names(const struct xhca_opt *opts, char *buf, size_t len)
{
	size_t n = 0, i = 0, off = 0;

	for (const struct xhca_opt *o = opts; o->name; o++)
		n += !(o->flags & XHCA_OPT_HIDDEN);
	buf[0] = 0;
	for (const struct xhca_opt *o = opts; o->name && off < len; o++) {
		if (o->flags & XHCA_OPT_HIDDEN)
			continue;
		i++;
		off += (size_t)snprintf(buf + off, len - off, "%s--%s",
					i == 1 ? "" : i == n ? " or " : ", ", o->name);
	}
	return off < len ? 0 : -ENOSPC;
}

int xhca_opt_getopt(const struct xhca_opt *opts, struct option *lo, size_t nlo, char *sh,
		    size_t nsh)
{
	size_t n = 0, s = 0;

	if (nsh < 2)
		return -ENOSPC;
	sh[s++] = '+';
	for (const struct xhca_opt *o = opts; o->name; o++, n++) {
		if (n + 1 >= nlo)
			return -ENOSPC;
		lo[n] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL,
					 o->key };
		if (is_short(o->key)) {
			if (s + 3 >= nsh)
				return -ENOSPC;
			sh[s++] = (char)o->key;
			if (o->arg)
				sh[s++] = ':';
		}
	}
	lo[n] = (struct option){ 0 };
	sh[s] = 0;
	return 0;
}

const struct xhca_opt *xhca_opt_find(const struct xhca_opt *opts, int key)
{
	for (const struct xhca_opt *o = opts; o->name; o++)
		if (o->key == key)
			return o;
	return NULL;
}

int xhca_opt_num(const struct xhca_opt *o, const char *arg, unsigned long long *v, char *err,
		 size_t errlen)
{
	char *end;

	errno = 0;
	*v = arg && *arg && *arg != '-' ? strtoull(arg, &end, 0) : 0;
	if (!arg || !*arg || *arg == '-' || errno || *end || *v < o->min || *v > o->max) {
		snprintf(err, errlen, "--%s %s: use %llu to %llu", o->name, arg ? arg : "", o->min,
			 o->max);
		return -EINVAL;
	}
	return 0;
}

#define OPT_MAX 96

/* o refused its argument (rc < 0: say why, after what the user wrote,
 * "--name ARG" or "name = ARG", and where: the program or file:line;
 * rc > 0: set said it). */
static int opt_refused(const char *prog, const char *where, const char *what,
		       const struct xhca_opt *o, int rc)
{
	if (rc > 0)
		return XHCA_OPT_BAD;
	if (o->hint)
		fprintf(stderr, "%s: %s: %s\n", where, what, o->hint);
	else if (o->flags & XHCA_OPT_NUM)
		fprintf(stderr, "%s: %s: use %llu to %llu\n", where, what, o->min, o->max);
	else
		fprintf(stderr, "%s: %s: not a value it takes; see %s --help\n", where, what, prog);
	return XHCA_OPT_BAD;
}

/* o takes arg, from the command line or a file alike: the number checked
 * against its range, then its set. 0, or XHCA_OPT_BAD (said why). */
static int opt_take(const char *prog, const char *where, const char *what,
		    const struct xhca_opt *o, const char *arg, void *ctx)
{
	char err[160];
	unsigned long long v = 0;
	int rc;

	if ((o->flags & XHCA_OPT_NUM) && xhca_opt_num(o, arg, &v, err, sizeof(err)))
		return opt_refused(prog, where, what, o, -EINVAL);
	rc = o->set(ctx, o, arg, v);
	return rc ? opt_refused(prog, where, what, o, rc) : 0;
}

int xhca_opt_parse(const char *prog, const struct xhca_opt *opts, int argc, char **argv,
		   unsigned int pflags, void *ctx, int *next)
{
	struct option lo[OPT_MAX];
	char sh[2 * OPT_MAX], what[1024];
	int c;

	if (xhca_opt_getopt(opts, lo, OPT_MAX, sh, sizeof(sh)))
		return XHCA_OPT_BAD;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, (pflags & XHCA_OPT_STOP) ? sh : sh + 1, lo, NULL)) != -1) {
		const struct xhca_opt *o = xhca_opt_find(opts, c);

		if (!o) {
			const struct xhca_opt *want = optopt ? xhca_opt_find(opts, optopt) : NULL;

			if (want && want->arg)
				fprintf(stderr, "%s: --%s needs a value (%s); see %s --help\n", prog,
					want->name, want->arg, prog);
			else
				fprintf(stderr, "%s: unknown option '%s'; see %s --help\n", prog,
					argv[optind - 1], prog);
			return XHCA_OPT_BAD;
		}
		if (!o->set)
			return XHCA_OPT_HELP;
		snprintf(what, sizeof(what), "--%s %s", o->name, optarg ? optarg : "");
		if (opt_take(prog, prog, what, o, optarg, ctx))
			return XHCA_OPT_BAD;
	}
	*next = optind;
	return 0;
}

int xhca_opt_parse_all(const char *prog, const struct xhca_opt *opts, int argc, char **argv,
		       void *ctx)
{
	int next, rc = xhca_opt_parse(prog, opts, argc, argv, 0, ctx, &next);

	if (!rc && next < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'; see %s --help\n", prog, argv[next],
			prog);
		return XHCA_OPT_BAD;
	}
	return rc;
}

/* ---- configuration files: the table's options as "name = value" lines ------ */

#define CONF_LINE_MAX 1024

struct conf {
	const char *prog, *path;
	const struct xhca_opt *opts;
	void *ctx;
	int line;
	int seen[OPT_MAX];	/* the line each option was given on (0: none) */
};

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* One mistake of the current line, "path:line: ...". Returns 1. */
__attribute__((format(printf, 2, 3)))
static int conf_err(const struct conf *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: ", c->path, c->line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* A setting a file may give. */
static int conf_allowed(const struct xhca_opt *o)
{
	return o->set && !(o->flags & XHCA_OPT_CMDLINE);
}

/* The setting an unknown name may have meant: the same with - for _, or
 * one name inside the other (hostmem for hostmem-mb). */
static const struct xhca_opt *conf_suggest(const struct xhca_opt *opts, const char *name)
{
	char alt[64];
	size_t i;

	for (i = 0; name[i] && i < sizeof(alt) - 1; i++)
		alt[i] = name[i] == '_' ? '-' : (char)tolower((unsigned char)name[i]);
	alt[i] = 0;
	if (i < 3)
		return NULL;
	for (const struct xhca_opt *o = opts; o->name; o++)
		if (conf_allowed(o) && !(o->flags & XHCA_OPT_HIDDEN) &&
		    (strstr(o->name, alt) || strstr(alt, o->name)))
			return o;
	return NULL;
}

/* The option a line names; NULL when it is not one a file may give (said
 * why). */
static const struct xhca_opt *conf_find(struct conf *c, const char *name)
{
	const struct xhca_opt *o = c->opts, *s;

	if (!strncmp(name, "--", 2)) {
		conf_err(c, "'%s': write the name without --", name);
		return NULL;
	}
	while (o->name && strcmp(o->name, name))
		o++;
	if (!o->name) {
		s = conf_suggest(c->opts, name);
		if (s)
			conf_err(c, "unknown setting '%s'; did you mean %s?", name, s->name);
		else
			conf_err(c, "unknown setting '%s': the settings are the long options of "
				 "%s --help, without --", name, c->prog);
		return NULL;
	}
	if (!conf_allowed(o)) {
		conf_err(c, "'%s' is for the command line only (%s --%s)", name, c->prog, name);
		return NULL;
	}
	if (c->seen[o - c->opts] && !(o->flags & XHCA_OPT_REPEAT)) {
		conf_err(c, "%s is given again (first on line %d): give it once", name,
			 c->seen[o - c->opts]);
		return NULL;
	}
	c->seen[o - c->opts] = c->line;
	return o;
}

/* A line without "=": what it should have been. */
static int conf_no_eq(const struct conf *c, const char *s)
{
	size_t n = strcspn(s, " \t");
	const char *rest = s + n + strspn(s + n, " \t");

	for (const struct xhca_opt *o = c->opts; o->name; o++)
		if (conf_allowed(o) && strlen(o->name) == n && !strncmp(o->name, s, n))
			return conf_err(c, "'%s' is not NAME = VALUE: write %s = %s", s, o->name,
					*rest ? rest : o->arg ? o->arg : "yes");
	return conf_err(c, "'%s' is not NAME = VALUE (NAME: a long option of %s --help, "
			"without --)", s, c->prog);
}

/* One line. Returns 1 for a mistake (said), else 0. */
static int conf_line(struct conf *c, char *text)
{
	char *s = trim(text), *eq, *name, *val, where[PATH_MAX + 16], what[CONF_LINE_MAX + 8];
	const struct xhca_opt *o;

	if (!*s || *s == '#')
		return 0;
	eq = strchr(s, '=');
	if (!eq)
		return conf_no_eq(c, s);
	*eq = 0;
	name = trim(s);
	val = trim(eq + 1);
	o = conf_find(c, name);
	if (!o)
		return 1;
	if (o->arg && !*val)
		return conf_err(c, "%s needs a value (%s)", name, o->arg);
	if (!o->arg && strcmp(val, "yes"))
		return strcmp(val, "no") ? conf_err(c, "%s = %s: give yes or no", name, val) : 0;
	snprintf(where, sizeof(where), "%s:%d", c->path, c->line);
	snprintf(what, sizeof(what), "%s = %s", name, val);
	return opt_take(c->prog, where, what, o, o->arg ? val : NULL, c->ctx) ? 1 : 0;
}

/* The whole file, NUL-terminated (at most 1 MiB); NULL with errno set. */
static char *conf_text(FILE *f)
{
	size_t len = 0, cap = 4096, n;
	char *buf = malloc(cap), *more;

	while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 < cap)
			continue;
		more = cap < (1u << 20) ? realloc(buf, cap * 2) : NULL;
		if (!more) {
			free(buf);
			errno = cap < (1u << 20) ? ENOMEM : EFBIG;
			return NULL;
		}
		buf = more;
		cap *= 2;
	}
	if (buf && ferror(f)) {
		n = errno ? errno : EIO; /* (a directory: EISDIR) */
		free(buf);
		errno = (int)n;
		return NULL;
	}
	if (buf)
		buf[len] = 0;
	return buf;
}

int xhca_opt_file(const char *prog, const struct xhca_opt *opts, const char *path, void *ctx,
		  char **text)
{
	struct conf c = { .prog = prog, .path = path, .opts = opts, .ctx = ctx };
	FILE *f;
	char *buf, *line, *nl;
	size_t n = 0;
	int bad = 0;

	*text = NULL;
	while (opts[n].name)
		if (++n >= OPT_MAX)
			return -ENOSPC;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	buf = conf_text(f);
	n = errno;
	fclose(f);
	if (!buf)
		return -(int)n;
	for (line = buf; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = 0;
		else if (!*line)
			break;	/* (after the last newline) */
		c.line++;
		if (strlen(line) > CONF_LINE_MAX)
			bad += conf_err(&c, "the line is longer than %d characters", CONF_LINE_MAX);
		else
			bad += conf_line(&c, line);
	}
	*text = buf;
	return bad;
}
