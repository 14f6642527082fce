/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The unit test binary: runs every test file's entry (or, with --only NAME,
 * that file's: pkt, rx, sched, reorder, locksvc, resp, req, recv, rdmacm, kfeat, json) and exits 1
 * if any case failed. tests/run.sh counts the "ok"/"not ok"/"skip" lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests.h"

int main(int argc, char **argv)
{
	int fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* test_unit --fuzz N [SEED]: only the fuzzer (make fuzz) */
	if (argc >= 3 && !strcmp(argv[1], "--fuzz"))
		return test_rx_fuzz(strtoul(argv[2], NULL, 0),
				    argc >= 4 ? strtoull(argv[3], NULL, 0) : 1) ? 1 : 0;
	static const struct {
		const char *name;
		int (*run)(void);
	} files[] = {
		{ "pkt", test_pkt_run },	 { "rx", test_rx_run },
		{ "sched", test_sched_run },	 { "reorder", test_reorder_run },
		{ "locksvc", test_locksvc_run }, { "resp", test_resp_run },
		{ "req", test_req_run },	 { "recv", test_recv_run },
		{ "rdmacm", test_rdmacm_run },	 { "kfeat", test_kfeat_run },
		{ "json", test_json_run },
	};
	const char *only = argc >= 3 && !strcmp(argv[1], "--only") ? argv[2] : NULL;
	int ran = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (only && strcmp(only, files[i].name))
			continue;
		fails += files[i].run();
		ran++;
	}
	if (!ran) {
		fprintf(stderr, "test_unit: no unit test file %s; there are pkt, rx, sched, reorder, "
			"locksvc, resp, req, recv, rdmacm, kfeat and json\n", only);
		return 2;
	}
	return fails ? 1 : 0;
}
