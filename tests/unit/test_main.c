/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The unit test binary: runs every test file's entry and exits 1 if any case
 * failed. tests/run.sh counts the "ok"/"not ok"/"skip" lines. */
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
	fails += test_pkt_run();
	fails += test_rx_run();
	fails += test_sched_run();
	fails += test_reorder_run();
	fails += test_locksvc_run();
	return fails ? 1 : 0;
}
