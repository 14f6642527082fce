/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Entry points of the unit test files; test_main.c calls each. Every entry
 * prints one "ok - ..." / "not ok - ..." line per case and returns the number
 * of failures. */
#ifndef XHCA_TESTS_H
#define XHCA_TESTS_H

/* A case's check: when cond fails, the file's why (char[WHY_LEN]) says
 * what, formatted, and the case returns -1. */
#define CHECK(cond, ...)                                   \
	do {                                               \
		if (!(cond)) {                             \
			snprintf(why, WHY_LEN, __VA_ARGS__); \
			return -1;                         \
		}                                          \
	} while (0)

int test_pkt_run(void);
int test_rx_run(void);
/* make fuzz: n mutated frames from seed through xhca_rx (test_rx.c) */
int test_rx_fuzz(unsigned long n, unsigned long long seed);
int test_sched_run(void);
int test_reorder_run(void);
int test_locksvc_run(void);
/* the RC responder of xhcad, without a network (test_resp.c) */
int test_resp_run(void);
/* its requester and completer, without a network (test_req.c) */
int test_req_run(void);
/* its receive side: placement and completions, without a network (test_recv.c) */
int test_recv_run(void);
/* xhca's librdmacm: its pure parts (test_rdmacm.c) */
int test_rdmacm_run(void);
/* what xhcad decides from the kernel's features (test_kfeat.c) */
int test_kfeat_run(void);
/* the JSON writer of the CLI and the tools (test_json.c) */
int test_json_run(void);

#endif /* XHCA_TESTS_H */
