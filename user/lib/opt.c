/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Option tables: usage text and getopt_long tables from one description.
 */
#include <errno.h>
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

/* o's argument was refused (rc < 0: say why; > 0: set said it). */
static int opt_refused(const char *prog, const struct xhca_opt *o, const char *arg, int rc)
{
	if (rc > 0)
		return XHCA_OPT_BAD;
	if (o->hint)
		fprintf(stderr, "%s: --%s %s: %s\n", prog, o->name, arg ? arg : "", o->hint);
	else if (o->flags & XHCA_OPT_NUM)
		fprintf(stderr, "%s: --%s %s: use %llu to %llu\n", prog, o->name, arg ? arg : "",
			o->min, o->max);
	else
		fprintf(stderr, "%s: --%s %s: not a value it takes; see %s --help\n", prog, o->name,
			arg ? arg : "", prog);
	return XHCA_OPT_BAD;
}

int xhca_opt_parse(const char *prog, const struct xhca_opt *opts, int argc, char **argv,
		   unsigned int pflags, void *ctx, int *next)
{
	struct option lo[OPT_MAX];
	char sh[2 * OPT_MAX], err[160];
	int c, rc;

	if (xhca_opt_getopt(opts, lo, OPT_MAX, sh, sizeof(sh)))
		return XHCA_OPT_BAD;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, (pflags & XHCA_OPT_STOP) ? sh : sh + 1, lo, NULL)) != -1) {
		const struct xhca_opt *o = xhca_opt_find(opts, c);
		unsigned long long v = 0;

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
		if ((o->flags & XHCA_OPT_NUM) && xhca_opt_num(o, optarg, &v, err, sizeof(err)))
			return opt_refused(prog, o, optarg, -EINVAL);
		rc = o->set(ctx, o, optarg, v);
		if (rc)
			return opt_refused(prog, o, optarg, rc);
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
