/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the unit test files and test_main.c share. A file (FILE: pkt, rx,
 * ...) is a table of cases (struct unit_file), each of which runs alone
 * (test_unit -t FILE/CASE): a case sets up what it needs itself, but for
 * what its file's set-up made before the first case of the file that runs.
 * A case's checks are result lines, "# ok - FILE: ...", "# not ok - FILE:
 * ... (why)" or "# skip - FILE: ...: why" (unit_check, unit_skip); the case
 * is TAP's "ok N - FILE/CASE" when none failed (test_main.c). */
#ifndef XHCA_TESTS_H
#define XHCA_TESTS_H

#include <stddef.h>

/* A case's check: when cond fails, the file's why (char[WHY_LEN]) says
 * what, formatted, and the case returns -1. */
#define CHECK(cond, ...)                                   \
	do {                                               \
		if (!(cond)) {                             \
			snprintf(why, WHY_LEN, __VA_ARGS__); \
			return -1;                         \
		}                                          \
	} while (0)

/* The why a case of one check (or a set-up) is given: no file's WHY_LEN
 * is larger. */
#define UNIT_WHY_LEN 256

struct unit_case {
	const char *name;	/* CASE of FILE/CASE: lower case, digits, '_' */
	/* the case: any number of checks (unit_check, unit_skip) ... */
	void (*run)(void);
	/* ... or, instead, a case of one check, described by desc: 0 passed,
	 * UNIT_SKIP skipped, anything else failed; why (char[UNIT_WHY_LEN])
	 * says why */
	int (*check)(char *why);
	const char *desc;
};

#define UNIT_SKIP 77

#define UNIT_RUN(name, fn) { name, fn, NULL, NULL }
#define UNIT_CHECK(name, fn, desc) { name, NULL, fn, desc }

struct unit_file {
	const char *name;
	/* Run before the first of its cases that runs, as part of it (its
	 * checks are that case's): 0, 1 when every case of the file is to be
	 * skipped, -1 when none can run; why (char[UNIT_WHY_LEN]) says why.
	 * NULL: none. */
	int (*setup)(char *why);
	/* After the last that ran, when setup was called (and did not skip):
	 * what it made, gone. NULL: none. */
	void (*teardown)(void);
	const struct unit_case *cases;
	size_t ncases;
};

#define UNIT_FILE(fname, su, td, table)          \
	const struct unit_file unit_##fname = { \
		#fname, su, td, table, sizeof(table) / sizeof((table)[0]) }

/* The running case's check: "# ok - FILE: ..." or "# not ok - FILE: ...";
 * returns 1 when it failed. */
int unit_check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* ... skipped: "# skip - FILE: ..." (the text says why). */
void unit_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whether every case of the running case's file before it ran in this
 * process (a check over all of them: rx's reasons). */
int unit_after_all(void);

extern const struct unit_file unit_pkt, unit_rx, unit_sched, unit_reorder, unit_locksvc,
	unit_resp, unit_req, unit_recv, unit_rdmacm, unit_kfeat, unit_json, unit_gso;

/* test_unit --fuzz N SEED: rx/fuzz of N frames from SEED (make fuzz; the
 * full run's is 20000 from 1) */
extern unsigned long rx_fuzz_n;
extern unsigned long long rx_fuzz_seed;

#endif /* XHCA_TESTS_H */
