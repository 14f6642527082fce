/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A proxy handler of an application's (include/xhca/proxy_handler.h), built
 * as build/px_counter.so and loaded with xhcad --proxy-handler: a shared
 * counter that requests move without the application.
 *
 *   ADD <n>   adds n; the result is the new value
 *   GET       the value
 *   anything else, or a value that would pass LIMIT: declined (nothing
 *   changed), the message goes to the application
 *
 * The argument after ':' is LIMIT (default 1000000). Results are the value
 * + 1, so that 0 (decline) is never one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xhca/proxy_handler.h>

struct counter {
	unsigned long long value, limit;
};

static void *counter_init(const char *arg)
{
	struct counter *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->limit = arg ? strtoull(arg, NULL, 0) : 1000000;
	if (!c->limit) {
		free(c);
		errno = EINVAL;
		return NULL;
	}
	return c;
}

static uint32_t counter_handle(void *state, const struct xhca_px_request *rq)
{
	struct counter *c = state;
	char text[64];
	unsigned long long n;
	char *end;

	if (rq->len >= sizeof(text))
		return XHCA_PX_DECLINE;
	memcpy(text, rq->msg, rq->len);
	text[rq->len] = 0;
	if (!strcmp(text, "GET"))
		return (uint32_t)(c->value + 1);
	if (strncmp(text, "ADD ", 4))
		return XHCA_PX_DECLINE;
	n = strtoull(text + 4, &end, 10);
	if (*end || end == text + 4 || n > c->limit || c->value + n > c->limit)
		return XHCA_PX_DECLINE; /* too much: nothing done */
	c->value += n;
	return (uint32_t)(c->value + 1);
}

static void counter_fini(void *state)
{
	free(state);
}

const struct xhca_px_handler_ops xhca_px_handler = {
	.abi = XHCA_PX_HANDLER_ABI,
	.name = "counter",
	.init = counter_init,
	.handle = counter_handle,
	.fini = counter_fini,
};
