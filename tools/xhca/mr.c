/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca mr: memory regions: register, deregister, show, read.
 */
#include "cli.h"

/* ---- mr ----------------------------------------------------------------- */

static const struct name_val access_names[] = {
	{ "local-write", XHCA_ACCESS_LOCAL_WRITE },
	{ "remote-write", XHCA_ACCESS_REMOTE_WRITE },
	{ "remote-read", XHCA_ACCESS_REMOTE_READ },
	{ "remote-atomic", XHCA_ACCESS_REMOTE_ATOMIC },
	{ "mw-bind", XHCA_ACCESS_MW_BIND },
	{ NULL, 0 },
};

/* "local-write,remote-write" or a number (passed on as it is: xhcad
 * checks it). */
static int access_arg(const char *op, const char *arg, __u32 *out)
{
	unsigned long long v;
	char buf[256], *tok, *save = NULL;

	if (arg[0] >= '0' && arg[0] <= '9') {
		int rc = num_arg(op, "--access", "access", arg, 32, "a list of flags", &v);

		if (!rc)
			*out = (__u32)v;
		return rc;
	}
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return usage_err(op, "--access is too long");
	*out = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned int f;

		if (name_lookup(access_names, tok, &f))
			return usage_err(op, "unknown access flag '%s'; use local-write, "
					 "remote-write, remote-read, remote-atomic, mw-bind (comma-separated)",
					 tok);
		*out |= f;
	}
	return 0;
}

static void access_str(__u32 a, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (const struct name_val *f = access_names; f->name; f++)
		if (a & f->val)
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "," : "",
					      f->name);
	if (!n)
		snprintf(buf, len, "none");
}

static void mr_json(const struct xhca_mr_attr *a, const __u32 *owner, const __u32 *gen)
{
	char acc[96];

	access_str(a->access, acc, sizeof(acc));
	jw_open(NULL, '{');
	jw_u64("rkey", a->rkey);
	jw_u64("index", a->rkey >> 8);
	jw_u64("key", a->rkey & 0xff);
	jw_u64("pd", a->pd);
	jw_bool("window", !!(a->flags & XHCA_MRF_MW));
	jw_u64("iova", a->iova);
	jw_u64("length", a->len);
	jw_str("access", acc);
	jw_u64("access_flags", a->access);
	jw_bool("pretranslated", !!(a->flags & XHCA_MRF_PRETRANSLATED));
	jw_u64("pages", a->npages);
	jw_u64("alloc", a->alloc);
	jw_u64("offset", a->off);
	if (owner)
		jw_u64("owner", *owner);
	if (gen)
		jw_u64("gen", *gen);
	jw_close('}');
}

struct mr_args {
	const char *op;
	struct xhca_mr_attr a;
	struct xhca_mr_io io;
	const char *out;
	int have_len, have_access;
};

static int mr_opt(void *ctx, int id, const char *name, const char *arg)
{
	struct mr_args *m = ctx;
	unsigned long long v;
	int rc = 0;

	switch (id) {
	case O_LEN:
		rc = num_arg(m->op, "--len", "length", arg, 32, "1..4294967295 bytes", &v);
		m->a.len = v;
		m->io.len = (__u32)v;
		m->have_len = 1;
		break;
	case O_ACCESS:
		rc = access_arg(m->op, arg, &m->a.access);
		m->have_access = 1;
		break;
	case O_SCATTER:
		m->a.flags |= XHCA_ALLOC_SCATTER;
		break;
	case O_CONTIG:
		m->a.flags |= XHCA_ALLOC_CONTIG;
		break;
	case O_IOVA:
		rc = num_arg(m->op, "--iova", "iova", arg, 64, "a 64-bit address", &v);
		m->a.iova = v;
		break;
	case O_OFFSET:
		rc = num_arg(m->op, "--offset", "offset", arg, 64, "a byte offset", &v);
		m->io.off = v;
		break;
	case O_OUT:
		m->out = arg;
		break;
	}
	return rc;
}

static const struct xhca_opt mr_reg_opts[] = {
	OPT(O_LEN, "len", "N", "bytes, 1 or more", .flags = XHCA_OPT_REQUIRED),
	OPT(O_ACCESS, "access", "LIST", "comma-separated: local-write, remote-write,\n"
	    "remote-read, remote-atomic, or a number (default\n"
	    "local-write,remote-write,remote-read); remote write\n"
	    "and atomic need local-write"),
	OPT(O_SCATTER, "scatter", NULL, "pages apart in host memory: not pre-translated,\n"
	    "xhcad places the WRITEs (the default under xhcad\n"
	    "--fragment); not with --contig"),
	OPT(O_CONTIG, "contig", NULL, "adjacent pages even under xhcad --fragment:\npre-translated"),
	OPT(O_IOVA, "iova", "VA", "the address the remote side uses for byte 0\n(default 0)"),
	{ 0 },
};

static int do_mr_reg(const struct call *call, int argc, char **argv)
{
	struct mr_args m = { .op = call->op };
	struct xhca_mr_attr *r = NULL;
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(call, argc, argv, mr_opt, &m, NULL, 0, &npos);
	if (rc)
		return rc;
	if (!m.have_len)
		return usage_err(m.op, "--len is required; use xhca -i IFNAME mr reg --len BYTES");
	if ((m.a.flags & XHCA_ALLOC_SCATTER) && (m.a.flags & XHCA_ALLOC_CONTIG))
		return usage_err(m.op, "--scatter and --contig exclude each other; give one");
	if (!m.have_access)
		m.a.access = XHCA_ACCESS_LOCAL_WRITE | XHCA_ACCESS_REMOTE_WRITE |
			     XHCA_ACCESS_REMOTE_READ;
	rc = request(m.op, XHCA_CTL_MR_REG, &m.a, sizeof(m.a), (void **)&r, &len);
	if (rc)
		goto out;
	if (len < sizeof(*r)) {
		rc = short_reply(m.op, len, sizeof(*r));
		goto out;
	}
	if (json) {
		mr_json(r, NULL, NULL);
	} else {
		char acc[96];

		access_str(r->access, acc, sizeof(acc));
		printf("registered mr 0x%08x: %llu bytes at iova 0x%llx, %s, %s (%u pages)\n",
		       r->rkey, (unsigned long long)r->len, (unsigned long long)r->iova, acc,
		       (r->flags & XHCA_MRF_PRETRANSLATED) ? "pre-translated" : "fragmented",
		       r->npages);
	}
out:
	free(r);
	return rc;
}

static int rkey_arg(const char *op, const char *s, __u32 *rkey)
{
	unsigned long long v;
	int rc = num_arg(op, NULL, "R_Key", s, 32, "the R_Key xhca mr show lists", &v);

	if (!rc)
		*rkey = (__u32)v;
	return rc;
}

static int do_mr_dereg(const struct call *call, int argc, char **argv)
{
	const char *op = call->op;
	char *w;
	__u32 rkey;
	int rc = parse_word(call, argc, argv, &w);

	if (rc)
		return rc;
	if (!w)
		return usage_err(op, "missing R_Key; use xhca -i IFNAME mr dereg RKEY");
	rc = rkey_arg(op, w, &rkey);
	if (rc)
		return rc;
	rc = request(op, XHCA_CTL_MR_DEREG, &rkey, sizeof(rkey), NULL, NULL);
	if (rc)
		return rc;
	if (json) {
		jw_open(NULL, '{');
		jw_u64("rkey", rkey);
		jw_bool("deregistered", 1);
		jw_close('}');
	} else {
		printf("deregistered mr 0x%08x\n", rkey);
	}
	return EXIT_OK;
}

static const struct tbl_col mr_cols[] = {
	{ "RKEY", 0 }, { "PD", 1 },    { "OWNER", 1 }, { "IOVA", 0 },	  { "LENGTH", 1 },
	{ "PAGES", 1 }, { "TRANSLATION", 0 }, { "ACCESS", 0 },
	/* -v */
	{ "GEN", 1 },  { "ALLOC", 1 }, { "OFFSET", 1 },
};

static void mr_row(const void *ctx, int row, char c[][TBL_CELL])
{
	const struct xhca_mr_info *mi = (const struct xhca_mr_info *)ctx + row;
	const struct xhca_mr_attr *a = &mi->attr;
	char acc[96];

	access_str(a->access, acc, sizeof(acc));
	cell(c[0], "0x%08x", a->rkey);
	cell(c[1], "%u", a->pd);
	cell(c[2], "%u", mi->owner);
	cell(c[3], "0x%llx", (unsigned long long)a->iova);
	cell(c[4], "%llu", (unsigned long long)a->len);
	cell(c[5], "%u", a->npages);
	cell(c[6], "%s%s", (a->flags & XHCA_MRF_MW) ? "window, " : "",
	     (a->flags & XHCA_MRF_PRETRANSLATED) ? "pre-translated" : "fragmented");
	cell(c[7], "%s", acc);
	cell(c[8], "%u", mi->gen);
	cell(c[9], "0x%x", a->alloc);
	cell(c[10], "%llu", (unsigned long long)a->off);
}

static void mr_info_json(const void *p)
{
	const struct xhca_mr_info *mi = p;

	mr_json(&mi->attr, &mi->owner, &mi->gen);
}

static int do_mr_show(const struct call *call, int argc, char **argv)
{
	const char *op = call->op;
	struct xhca_mr_info *mi = NULL;
	__u32 n = 0;
	int rc;

	rc = parse_word(call, argc, argv, NULL);
	if (!rc)
		rc = array_request(op, XHCA_CTL_MR_SHOW, sizeof(*mi), (void **)&mi, &n);
	if (!rc)
		array_print("mrs", mi, n, sizeof(*mi), mr_info_json, mr_cols, verbose ? 11 : 8,
			    mr_row);
	free(mi);
	return rc;
}

static const struct xhca_opt mr_read_opts[] = {
	OPT(O_LEN, "len", "N", "bytes, at most 8 MiB at a time", .flags = XHCA_OPT_REQUIRED),
	OPT(O_OFFSET, "offset", "N", "from this byte of the region (default 0)"),
	OPT(O_OUT, "out", "FILE|-", "the bytes raw to FILE (- for stdout), not as hex"),
	{ 0 },
};

static int do_mr_read(const struct call *call, int argc, char **argv)
{
	struct mr_args m = { .op = call->op };
	__u8 *b = NULL;
	char *pos[1];
	__u32 len = 0;
	int rc, npos;

	rc = parse_args(call, argc, argv, mr_opt, &m, pos, 1, &npos);
	if (rc)
		return rc;
	if (!npos)
		return usage_err(m.op, "missing R_Key; use xhca -i IFNAME mr read RKEY --len N");
	rc = rkey_arg(m.op, pos[0], &m.io.rkey);
	if (rc)
		return rc;
	if (!m.have_len)
		return usage_err(m.op, "--len is required (at most %u bytes)", XHCA_MR_READ_MAX);
	if (m.io.len > XHCA_MR_READ_MAX)
		return usage_err(m.op, "--len %u is more than %u bytes; read in pieces", m.io.len,
				 XHCA_MR_READ_MAX);
	rc = request(m.op, XHCA_CTL_MR_READ, &m.io, sizeof(m.io), (void **)&b, &len);
	if (rc)
		goto out;
	if (len != m.io.len) {
		rc = short_reply(m.op, len, m.io.len);
		goto out;
	}
	if (m.out) {
		FILE *f = strcmp(m.out, "-") ? fopen(m.out, "wb") : stdout;

		if (!f || fwrite(b, 1, len, f) != len || (f != stdout && fclose(f))) {
			pr_warn("%s: cannot write %s: %s\n", m.op, m.out, strerror(errno));
			rc = EXIT_FAIL;
		}
		goto out;
	}
	/* as xxd does: offset, 16 bytes in hex */
	for (__u32 i = 0; i < len; i += 16) {
		printf("%08llx:", (unsigned long long)(m.io.off + i));
		for (__u32 k = i; k < i + 16 && k < len; k++)
			printf("%s%02x", (k - i) % 2 ? "" : " ", b[k]);
		putchar('\n');
	}
out:
	free(b);
	return rc;
}

const char mr_text[] =
	"Memory regions: host memory registered for remote access. Regions the CLI\n"
	"registers are xhcad's own (PD 0, for the CLI's QPs with action host); xhcad\n"
	"allocates their host memory.";

const struct cmd mr_cmds[] = {
	{ .name = "show", .alias = "list", .fn = do_mr_show,
	  .summary = "every memory region, applications' too",
	  .text = "Lists every memory region, applications' too: R_Key, PD, owner, iova,\n"
		  "length, pages, translation, access; -v adds the generation, allocation\n"
		  "and offset." },
	{ .name = "reg", .fn = do_mr_reg, .opts = mr_reg_opts,
	  .summary = "register N bytes of host memory",
	  .text = "Allocates N bytes of host memory and registers them as a memory region of\n"
		  "PD 0. Prints the R_Key: index << 8 | a key byte that changes on every\n"
		  "registration." },
	{ .name = "dereg", .fn = do_mr_dereg, .args = "RKEY", .summary = "deregister a region",
	  .text = "Invalidates the region, waits until xhca_rx cannot use it any more, then\n"
		  "frees it (and its memory, for the CLI's own regions). The CLI may\n"
		  "deregister an application's region too." },
	{ .name = "read", .fn = do_mr_read, .args = "RKEY", .opts = mr_read_opts,
	  .summary = "the bytes of a region, as hex or raw",
	  .text = "Shows N bytes of the region from --offset as hex (as xxd), or writes them\n"
		  "raw to FILE." },
	{ 0 },
};
