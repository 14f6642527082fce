/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the running kernel offers xhca (kfeat.c). Required: what xhca_rx
 * cannot load without (helpers of Linux 5.8 to 5.19, kernel BTF); xhcad
 * refuses a kernel that lacks any, naming them. Optional: XHCA_KFEATS
 * (priv/xhca/ctl.h), each with a slower path; xhcad says which it lacks.
 * The decisions are pure functions of what a probe found, so the unit tests
 * (tests/unit/test_kfeat.c) give them any kernel.
 */
#ifndef XHCAD_KFEAT_H
#define XHCAD_KFEAT_H

#include <stddef.h>
#include <linux/types.h>

/* Linux 6.1 (Debian 12's): the oldest kernel xhca is tested on. */
#define KFEAT_MIN_MAJOR 6
#define KFEAT_MIN_MINOR 1

/* One thing xhca_rx needs: a helper (by its BPF_FUNC_ number) or, helper
 * 0, the kernel's BTF. */
struct kfeat_need {
	int helper;
	const char *name;
	const char *since;
};

extern const struct kfeat_need kfeat_needs[];
extern const size_t kfeat_nneeds;

/* Whether the kernel has need n (a probe, or a test's stand-in). */
typedef int (*kfeat_has_fn)(void *ctx, const struct kfeat_need *n);

/* What is missing of kfeat_needs, as "a (Linux x), b (Linux y)" into buf:
 * how many. */
int kfeat_missing(kfeat_has_fn has, void *ctx, char *buf, size_t len);

/* Whether a release ("6.1.0-56-amd64") is older than major.minor; one that
 * does not parse is not. */
int kfeat_older(const char *release, int major, int minor);

/* The start line's text for the XHCA_KF_* bits lacks (forced: those that
 * --no-kfuncs made lack): "every feature xhca uses" or "lacks A (since):
 * cost; B ...". */
void kfeat_describe(__u32 lacks, __u32 forced, char *buf, size_t len);

/* The probes of the running kernel (libbpf): 1 if it has need n; 1 if its
 * BTF (btf__load_vmlinux_btf's, loaded once by the caller) has the kfunc
 * name; 1 if a BPF trampoline attaches. */
struct btf;
int kfeat_probe_need(void *ctx, const struct kfeat_need *n);
int kfeat_has_kfunc(const struct btf *btf, const char *name);
int kfeat_has_trampoline(const struct btf *btf);

#endif
