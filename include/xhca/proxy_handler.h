/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Proxy handlers (US 9,069,633): what the proxy does with a SEND a proxy QP's
 * filter offloaded. The lock service is built in (XHCA_PXH_LOCK); an
 * application registers its own as a shared library that xhcad loads at
 * start (xhcad --proxy-handler FILE.so[:ARG]) and that exports
 * `xhca_px_handler`. Filters name it (xhca filter add ... --handler NAME).
 *
 * The proxy thread calls handle() once per offloaded message, whole (all its
 * packets), in the order the messages came on each QP. It returns the
 * result the application's completion carries (XHCA_WC_PROXY, imm_data), a
 * nonzero number, or XHCA_PX_DECLINE: the request is "too complicated"; the
 * handler has undone whatever it did, and the message goes to the
 * application through the normal path, still in its place. handle() runs
 * on the proxy thread only: it must not block.
 */
#ifndef XHCA_PROXY_HANDLER_H
#define XHCA_PROXY_HANDLER_H

#include <stdint.h>

#define XHCA_PX_HANDLER_ABI 1
#define XHCA_PX_DECLINE 0u
#define XHCA_PX_NAME_MAX 16	/* with the NUL */

struct xhca_px_request {
	uint32_t qpn;		/* the proxy QP */
	uint32_t len;		/* payload bytes */
	const uint8_t *msg;	/* the payload, the message's packets joined */
	uint64_t rx_ns;		/* when xhca_rx took its last packet */
};

struct xhca_px_handler_ops {
	uint32_t abi;		/* XHCA_PX_HANDLER_ABI */
	const char *name;	/* what filters call it, [a-z0-9-], < XHCA_PX_NAME_MAX */
	/* optional: state for the handler, from the text after ':' (or NULL);
	 * NULL with errno set refuses to load */
	void *(*init)(const char *arg);
	uint32_t (*handle)(void *state, const struct xhca_px_request *rq);
	void (*fini)(void *state);	/* optional */
};

/* The one symbol a handler library exports. */
extern const struct xhca_px_handler_ops xhca_px_handler;

#endif /* XHCA_PROXY_HANDLER_H */
