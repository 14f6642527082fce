/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The unit test binary: runs every case of every test file, in order, or
 * those that -t selects, and exits 1 if any failed (2: nothing selected, or
 * a wrong argument).
 *
 *   test_unit [-t PATTERN]...   the cases FILE/CASE that match a PATTERN
 *                               (fnmatch: rx/seq_*, resp/acks; a PATTERN
 *                               without '/' also matches FILE: rx, r*; a
 *                               leading unit/ is dropped)
 *   test_unit --only FILE       -t FILE (as tests/run.sh ran one file before -t)
 *   test_unit -l [-t ...]       the cases, FILE/CASE one a line; runs nothing
 *   test_unit --fuzz N [SEED]   rx/fuzz of N frames from SEED (make fuzz)
 *
 * The output is TAP: the plan "1..N" (the cases selected) first, then each
 * case's checks as comments, "# ok - FILE: ...", "# not ok - FILE: ...
 * (why)", "# skip - FILE: ...: why" (tests/run.sh counts these), and its
 * line, "ok N - FILE/CASE", "not ok N - FILE/CASE" (a check failed) or
 * "ok N - FILE/CASE # SKIP why" (every check skipped); last the counts, as
 * a comment. */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"

static const struct unit_file *const files[] = {
	&unit_pkt,  &unit_rx,  &unit_sched, &unit_reorder, &unit_locksvc,
	&unit_resp, &unit_req, &unit_recv,  &unit_rdmacm,  &unit_kfeat, &unit_json, &unit_gso,
};
#define NFILES (sizeof(files) / sizeof(files[0]))
#define MAX_CASES 64 /* of one file */

static unsigned char sel[NFILES][MAX_CASES]; /* selected */
static unsigned char ran[NFILES][MAX_CASES];

/* The running case: its file, its index, its checks (set-up's passed
 * ones apart: a case whose own checks were all skipped is skipped). */
static struct {
	size_t f, c;
	int ok, fail, skip, setup_ok;
	char skip_why[UNIT_WHY_LEN];
} cur;
static int n_ok, n_fail, n_skip; /* checks, all cases */

static void vline(const char *res, const char *fmt, va_list ap)
{
	printf("# %s - %s: ", res, files[cur.f]->name);
	vprintf(fmt, ap);
	putchar('\n');
}

int unit_check(int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(ok ? "ok" : "not ok", fmt, ap);
	va_end(ap);
	if (ok)
		cur.ok++;
	else
		cur.fail++;
	return !ok;
}

void unit_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("skip", fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	vsnprintf(cur.skip_why, sizeof(cur.skip_why), fmt, ap);
	va_end(ap);
	cur.skip++;
}

int unit_after_all(void)
{
	for (size_t c = 0; c < cur.c; c++)
		if (!ran[cur.f][c])
			return 0;
	return 1;
}

/* A case of one check (struct unit_case's check). */
static void run_check(const struct unit_case *k)
{
	char why[UNIT_WHY_LEN] = "";
	int rc;

	errno = 0;
	rc = k->check(why);
	if (rc == UNIT_SKIP)
		unit_skip("%s: %s", k->desc, why);
	else if (rc)
		unit_check(0, "%s (%s)", k->desc, why[0] ? why : strerror(errno));
	else
		unit_check(1, "%s", k->desc);
}

/* Runs the selected cases, numbered from 1 on; returns how many failed. */
static int run_selected(void)
{
	int n = 0, failed = 0;

	for (size_t f = 0; f < NFILES; f++) {
		const struct unit_file *uf = files[f];
		int set = 0, su = 0; /* set: setup called; su: its result */
		char why[UNIT_WHY_LEN] = "";

		for (size_t c = 0; c < uf->ncases; c++) {
			const struct unit_case *k = &uf->cases[c];

			if (!sel[f][c])
				continue;
			memset(&cur, 0, sizeof(cur));
			cur.f = f;
			cur.c = c;
			if (!set && uf->setup) {
				set = 1;
				su = uf->setup(why);
				if (su < 0)
					unit_check(0, "%s", why);
				else if (su > 0)
					unit_skip("%s", why);
				cur.setup_ok = cur.ok;
				cur.ok = 0;
			}
			n++;
			if (su > 0) {
				printf("ok %d - %s/%s # SKIP %s\n", n, uf->name, k->name, why);
				n_skip += cur.skip;
				continue;
			}
			if (su < 0) {
				printf("not ok %d - %s/%s\n#   not run: the set-up of %s failed\n", n,
				       uf->name, k->name, uf->name);
			} else {
				ran[f][c] = 1;
				if (k->run)
					k->run();
				else
					run_check(k);
				if (!cur.ok && !cur.fail && !cur.skip)
					unit_check(0, "%s made no check", k->name);
				if (cur.fail)
					printf("not ok %d - %s/%s\n", n, uf->name, k->name);
				else if (!cur.ok)
					printf("ok %d - %s/%s # SKIP %s\n", n, uf->name, k->name,
					       cur.skip_why);
				else
					printf("ok %d - %s/%s\n", n, uf->name, k->name);
			}
			failed += cur.fail || su < 0;
			n_ok += cur.ok + cur.setup_ok;
			n_fail += cur.fail;
			n_skip += cur.skip;
		}
		if (set && su <= 0 && uf->teardown)
			uf->teardown();
	}
	return failed;
}

/* Selects the cases pattern matches; returns how many. */
static int select_cases(const char *pattern)
{
	char full[128];
	int n = 0;

	if (!strncmp(pattern, "unit/", 5))
		pattern += 5;
	for (size_t f = 0; f < NFILES; f++) {
		int file_match = !strchr(pattern, '/') && !fnmatch(pattern, files[f]->name, 0);

		for (size_t c = 0; c < files[f]->ncases; c++) {
			snprintf(full, sizeof(full), "%s/%s", files[f]->name, files[f]->cases[c].name);
			if (file_match || !fnmatch(pattern, full, 0)) {
				sel[f][c] = 1;
				n++;
			}
		}
	}
	return n;
}

static int usage(const char *msg)
{
	fprintf(stderr,
		"test_unit: %s\nusage: test_unit [-l] [-t PATTERN]... | --only FILE | --fuzz N [SEED]\n",
		msg);
	return 2;
}

int main(int argc, char **argv)
{
	int list = 0, patterns = 0, total = 0, failed;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t f = 0; f < NFILES; f++)
		if (files[f]->ncases > MAX_CASES) {
			fprintf(stderr, "test_unit: %s has more than %d cases\n", files[f]->name,
				MAX_CASES);
			return 2;
		}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-l") || !strcmp(a, "--list")) {
			list = 1;
		} else if (!strcmp(a, "-t") || !strcmp(a, "--only")) {
			if (++i == argc)
				return usage("-t and --only take a pattern");
			patterns++;
			if (!select_cases(argv[i])) {
				fprintf(stderr, "test_unit: no unit test case matches %s; there are ",
					argv[i]);
				for (size_t f = 0; f < NFILES; f++)
					fprintf(stderr, "%s%s", files[f]->name,
						f + 2 < NFILES ? ", " : f + 1 < NFILES ? " and " : "");
				fprintf(stderr, " (test_unit -l lists their cases)\n");
				return 2;
			}
		} else if (!strcmp(a, "--fuzz")) {
			if (i + 1 == argc)
				return usage("--fuzz takes a number of frames");
			rx_fuzz_n = strtoul(argv[++i], NULL, 0);
			if (i + 1 < argc && argv[i + 1][0] != '-')
				rx_fuzz_seed = strtoull(argv[++i], NULL, 0);
			patterns++;
			select_cases("rx/fuzz");
		} else {
			return usage("unknown argument");
		}
	}
	if (!patterns)
		select_cases("*");
	for (size_t f = 0; f < NFILES; f++)
		for (size_t c = 0; c < files[f]->ncases; c++) {
			if (!sel[f][c])
				continue;
			total++;
			if (list)
				printf("%s/%s\n", files[f]->name, files[f]->cases[c].name);
		}
	if (list)
		return 0;
	printf("1..%d\n", total);
	failed = run_selected();
	printf("# %d checks: %d passed, %d failed, %d skipped; %d of %d cases failed\n",
	       n_ok + n_fail + n_skip, n_ok, n_fail, n_skip, failed, total);
	return failed ? 1 : 0;
}
