/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The three functions of xsk.c the responder and the requester call (see
 * fake_xsk.h): frames are kept, nothing leaves. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "fake_xsk.h"

struct xhcad;

__u8 fx_frame[FX_MAX][XHCA_PKT_MAX];
__u32 fx_len[FX_MAX];
int fx_n;

void fx_reset(void)
{
	fx_n = 0;
}

int xsk_tx(struct xhcad *d, const void *frame, __u32 len);
void xsk_tx_kick(struct xhcad *d);
__u32 xsk_backlog(const struct xhcad *d, __u32 f);

int xsk_tx(struct xhcad *d, const void *frame, __u32 len)
{
	if (fx_n < FX_MAX && len <= XHCA_PKT_MAX) {
		memcpy(fx_frame[fx_n], frame, len);
		fx_len[fx_n] = len;
	}
	fx_n++;
	return 0;
}

void xsk_tx_kick(struct xhcad *d)
{
}

__u32 xsk_backlog(const struct xhcad *d, __u32 f)
{
	return 0;
}

int fx_check(const char *who, int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - %s: ", ok ? "ok" : "not ok", who);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	return !ok;
}
