/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-impair: attaches impair.bpf.c to tc ingress of two bridge ports (run
 * it in their namespace), prints "attached" and waits; on SIGTERM or SIGINT
 * it prints what it did in each direction and detaches (removing the
 * clsact qdiscs it made, only its filter from one that was there).
 *
 *   xhca-impair PORT_A PORT_B [--drop PCT] [--dup PCT] [--reorder PCT]
 *
 * PCT: a percentage of the RoCEv2 frames, 0 to 100, e.g. 1 or 0.5.
 * Output, one line per direction:
 *   PORT_A>PORT_B seen N passed N dropped N duplicated N held N reordered N errors N
 * Exit codes: 0 ok, 1 failed (attach), 2 bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "impair.h"
#include "impair.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int usage(const char *msg)
{
	if (msg)
		fprintf(stderr, "xhca-impair: %s\n", msg);
	fprintf(stderr, "usage: xhca-impair PORT_A PORT_B [--drop PCT] [--dup PCT] [--reorder PCT]\n"
		"  PCT: percentage of RoCEv2 frames (0-100) dropped, sent twice, held back\n");
	return 2;
}

/* "1", "0.5", "100" -> parts per million; -1 if not a percentage. */
static long parse_pct(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0 && v <= 100))
		return -1;
	return (long)(v * 10000 + 0.5);
}

static int sum_stats(int fd, __u32 dir, struct impair_stats *out)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	struct impair_stats *v;

	if (ncpu < 1)
		return ncpu;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(out, 0, sizeof(*out));
	if (bpf_map_lookup_elem(fd, &dir, v)) {
		free(v);
		return -errno;
	}
	for (i = 0; i < ncpu; i++) {
		out->seen += v[i].seen;
		out->passed += v[i].passed;
		out->dropped += v[i].dropped;
		out->duplicated += v[i].duplicated;
		out->held += v[i].held;
		out->reordered += v[i].reordered;
		out->errors += v[i].errors;
	}
	free(v);
	return 0;
}

/* The two ports, tc's hooks on them, and what was made there (undone on
 * exit). */
struct ports {
	const char *name[2];
	unsigned int ifi[2];
	struct bpf_tc_hook hook[2];
	struct bpf_tc_opts topt[2];
	int made[2], attached[2];
};

/* --drop, --dup, --reorder into ppm; -1 to go on, else main's exit code. */
static int parse_opts(int argc, char **argv, long ppm[3])
{
	static const struct option opts[] = {
		{ "drop", required_argument, NULL, 'd' },
		{ "dup", required_argument, NULL, 'u' },
		{ "reorder", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		int k = c == 'd' ? 0 : c == 'u' ? 1 : c == 'r' ? 2 : -1;

		if (c == 'h') {
			usage(NULL);
			return 0;
		}
		if (k < 0)
			return usage(NULL);
		ppm[k] = parse_pct(optarg);
		if (ppm[k] < 0) {
			fprintf(stderr, "xhca-impair: --%s %s: not a percentage from 0 to 100\n",
				opts[k].name, optarg);
			return 2;
		}
	}
	return -1;
}

/* The program on both ports' ingress (a clsact qdisc made where none was). */
static int ports_attach(struct ports *pt, int prog_fd)
{
	for (int i = 0; i < 2; i++) {
		int err;

		pt->hook[i].ifindex = pt->ifi[i];
		pt->hook[i].attach_point = BPF_TC_INGRESS;
		err = bpf_tc_hook_create(&pt->hook[i]);
		if (err && err != -EEXIST) {
			fprintf(stderr, "xhca-impair: clsact on %s: %s\n", pt->name[i], strerror(-err));
			return -1;
		}
		pt->made[i] = !err;
		pt->topt[i].prog_fd = prog_fd;
		err = bpf_tc_attach(&pt->hook[i], &pt->topt[i]);
		pt->attached[i] = !err;
		if (err) {
			fprintf(stderr, "xhca-impair: attach to %s ingress: %s\n", pt->name[i],
				strerror(-err));
			return -1;
		}
	}
	return 0;
}

/* A clsact qdisc made here goes, with the filter; one that was there keeps
 * what else it has, the filter only goes. */
static void ports_detach(struct ports *pt)
{
	for (int i = 0; i < 2; i++) {
		if (pt->made[i]) {
			pt->hook[i].attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
			bpf_tc_hook_destroy(&pt->hook[i]);
		} else if (pt->attached[i]) {
			pt->topt[i].prog_fd = 0;
			pt->topt[i].prog_id = 0;
			pt->topt[i].flags = 0;
			bpf_tc_detach(&pt->hook[i], &pt->topt[i]);
		}
	}
}

/* What each direction saw and did; 0, or 1 when the counters cannot be read. */
static int report(const struct ports *pt, int stats_fd)
{
	int rc = 0;

	for (int i = 0; i < 2; i++) {
		struct impair_stats s;
		int err = sum_stats(stats_fd, i, &s);

		if (err) {
			fprintf(stderr, "xhca-impair: read the counters: %s\n", strerror(-err));
			rc = 1;
			continue;
		}
		printf("%s>%s seen %llu passed %llu dropped %llu duplicated %llu held %llu "
		       "reordered %llu errors %llu\n", pt->name[i], pt->name[!i],
		       (unsigned long long)s.seen, (unsigned long long)s.passed,
		       (unsigned long long)s.dropped, (unsigned long long)s.duplicated,
		       (unsigned long long)s.held, (unsigned long long)s.reordered,
		       (unsigned long long)s.errors);
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct ports pt = {
		.hook = { { .sz = sizeof(pt.hook[0]) }, { .sz = sizeof(pt.hook[0]) } },
		.topt = { { .sz = sizeof(pt.topt[0]) }, { .sz = sizeof(pt.topt[0]) } },
	};
	long ppm[3] = { 0, 0, 0 };
	struct impair_bpf *skel;
	int rc, err;

	xhca_log_init("xhca-impair", XHCA_LOG_WARN);
	rc = parse_opts(argc, argv, ppm);
	if (rc >= 0)
		return rc;
	if (argc - optind != 2)
		return usage("two ports are needed");
	for (int i = 0; i < 2; i++) {
		pt.name[i] = argv[optind + i];
		pt.ifi[i] = if_nametoindex(pt.name[i]);
		if (!pt.ifi[i]) {
			fprintf(stderr, "xhca-impair: port %s: %s (run it in the ports' namespace)\n",
				pt.name[i], strerror(errno));
			return 2;
		}
	}
	if (pt.ifi[0] == pt.ifi[1])
		return usage("the two ports must differ");
	skel = impair_bpf__open();
	if (!skel) {
		fprintf(stderr, "xhca-impair: open the BPF object: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->ifindex_a = pt.ifi[0];
	skel->rodata->ifindex_b = pt.ifi[1];
	skel->rodata->drop_ppm = ppm[0];
	skel->rodata->dup_ppm = ppm[1];
	skel->rodata->reorder_ppm = ppm[2];
	rc = 1;
	err = impair_bpf__load(skel);
	if (err) {
		fprintf(stderr, "xhca-impair: load the BPF program: %s\n", strerror(-err));
		goto out;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (ports_attach(&pt, bpf_program__fd(skel->progs.impair)))
		goto out;
	printf("attached: %s %s drop %.4f%% dup %.4f%% reorder %.4f%%\n", pt.name[0], pt.name[1],
	       ppm[0] / 1e4, ppm[1] / 1e4, ppm[2] / 1e4);
	fflush(stdout);
	while (!stop)
		pause();
	rc = report(&pt, bpf_map__fd(skel->maps.stats));
out:
	ports_detach(&pt);
	impair_bpf__destroy(skel);
	return rc;
}
