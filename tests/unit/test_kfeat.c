/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kfeat.c's decisions with each feature absent: a kernel that lacks a
 * helper xhca_rx calls (or its BTF) is refused with each one named and the
 * release it came in; the releases older than 6.1; the start line and
 * xhca status's text for each optional feature lacked, --no-kfuncs's own.
 */
#include <stdio.h>
#include <string.h>
#include <priv/xhca/ctl.h>
#include "../../user/xhcad/kfeat.h"
#include "tests.h"

static void result(int ok, const char *name)
{
	unit_check(ok, "%s", name);
}

/* A kernel that lacks the need named ctx (NULL: lacks nothing). */
static int has_but(void *ctx, const struct kfeat_need *n)
{
	return !ctx || strcmp(n->name, ctx);
}

static void needs(void)
{
	char buf[512], name[128];

	result(kfeat_missing(has_but, NULL, buf, sizeof(buf)) == 0 && !buf[0],
	       "a kernel with every helper xhca_rx calls: nothing missing");
	for (size_t i = 0; i < kfeat_nneeds; i++) {
		const struct kfeat_need *k = &kfeat_needs[i];
		char want[256];

		snprintf(want, sizeof(want), "%s (%s)", k->name, k->since);
		snprintf(name, sizeof(name), "a kernel without %s: refused, naming it and %s",
			 k->name, k->since);
		result(kfeat_missing(has_but, (void *)k->name, buf, sizeof(buf)) == 1 &&
			       !strcmp(buf, want),
		       name);
	}
	result(kfeat_missing(has_but, "bpf_xdp_load_bytes", buf, 8) == 1 && strlen(buf) == 7,
	       "the names cut to the buffer, the count still right");
}

static int has_none(void *ctx, const struct kfeat_need *n)
{
	(void)ctx;
	(void)n;
	return 0;
}

static void releases(void)
{
	char buf[1024];

	result(!kfeat_older("6.1.0-56-amd64", 6, 1) && !kfeat_older("6.18.0", 6, 1) &&
		       !kfeat_older("7.0", 6, 1),
	       "6.1 (Debian 12's), 6.18 and 7.0 are not older than 6.1");
	result(kfeat_older("5.15.0-91-generic", 6, 1) && kfeat_older("6.0.12", 6, 1) &&
		       kfeat_older("5.14.0-362.el9.x86_64", 6, 1),
	       "5.15 (Ubuntu 22.04), 6.0 and 5.14 (RHEL 9) are");
	result(!kfeat_older("", 6, 1) && !kfeat_older("linux", 6, 1),
	       "a release that does not parse is not called older");
	result(kfeat_missing(has_none, NULL, buf, sizeof(buf)) == (int)kfeat_nneeds &&
		       strstr(buf, "Linux 5.19") && strstr(buf, "kernel BTF"),
	       "a kernel with none of them (4.x): every one named");
}

static void describe(void)
{
	char buf[1024];

	kfeat_describe(0, 0, buf, sizeof(buf));
	result(!strcmp(buf, "has every feature xhca uses"), "nothing lacked: one short line");
	kfeat_describe(XHCA_KF(KFUNC_COPY), 0, buf, sizeof(buf));
	result(!strncmp(buf, "lacks bpf_dynptr_copy (Linux 6.15): ", 36) &&
		       strstr(buf, "xlate_nocopy") && !strstr(buf, "--no-kfuncs") &&
		       !strchr(buf, ';'),
	       "without bpf_dynptr_copy: what xhcad places instead, and its counter");
	kfeat_describe(XHCA_KF(KFUNC_COPY), XHCA_KF(KFUNC_COPY), buf, sizeof(buf));
	result(strstr(buf, "(Linux 6.15; --no-kfuncs)") != NULL,
	       "the kernel has it but --no-kfuncs: said so");
	kfeat_describe(XHCA_KF(XSK_SG), 0, buf, sizeof(buf));
	result(strstr(buf, "AF_XDP multi-buffer (Linux 6.6)") && strstr(buf, "path MTU 2048"),
	       "without AF_XDP multi-buffer: the path MTU it allows");
	kfeat_describe(XHCA_KF(TRAMPOLINE), 0, buf, sizeof(buf));
	result(strstr(buf, "BPF trampolines") && strstr(buf, "only XDP program"),
	       "without BPF trampolines: no dispatcher, xhca_rx alone");
	kfeat_describe(XHCA_KF(KFUNC_COPY) | XHCA_KF(XSK_SG) | XHCA_KF(TRAMPOLINE), 0, buf,
		       sizeof(buf));
	result(strstr(buf, "bpf_dynptr_copy") && strstr(buf, "; AF_XDP multi-buffer") &&
		       strstr(buf, "; BPF trampolines"),
	       "Debian 12's 6.1 in this VM: all three, in one line");
	kfeat_describe(XHCA_KF(XSK_SG), 0, buf, 12);
	result(strlen(buf) == 11, "cut to the buffer");
}

static const struct unit_case cases[] = {
	UNIT_RUN("needs", needs),
	UNIT_RUN("releases", releases),
	UNIT_RUN("describe", describe),
};

UNIT_FILE(kfeat, NULL, NULL, cases);
