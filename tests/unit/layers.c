/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the tests of xhcad's layers share (layers.h): the functions of
 * xsk.c and xsk_io.c the layers above them call (frames are kept, nothing leaves), host
 * memory in plain memory, a CQ's next completion, xhca_rx's metadata. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xhca/wire.h>
#include "layers.h"

__u8 fx_frame[FX_MAX][XHCA_PKT_MAX];
__u32 fx_len[FX_MAX];
int fx_n;

void fx_reset(void)
{
	fx_n = 0;
}

int fx_tx_full;

int xsk_tx(struct xhcad *d, const void *frame, __u32 len)
{
	if (fx_tx_full)
		return -EAGAIN;
	if (fx_n < FX_MAX && len <= XHCA_PKT_MAX) {
		memcpy(fx_frame[fx_n], frame, len);
		fx_len[fx_n] = len;
	}
	fx_n++;
	return 0;
}

/* Built in place: in the next kept frame's room. */
static __u8 fx_room[XHCA_PKT_MAX + 4096];

void *xsk_tx_alloc(struct xhcad *d, __u32 len)
{
	if (fx_tx_full) {
		errno = EAGAIN;
		return NULL;
	}
	return len <= sizeof(fx_room) ? fx_room : NULL;
}

int xsk_tx_submit(struct xhcad *d, __u32 len)
{
	return xsk_tx(d, fx_room, len);
}

void xsk_tx_abort(struct xhcad *d)
{
}

void xsk_tx_kick(struct xhcad *d)
{
}

int xsk_tx_pending(const struct xhcad *d)
{
	return 0;
}

__u32 xsk_backlog(const struct xhcad *d, __u32 f)
{
	return 0;
}

/* Host memory here is plain memory, every page there (hm.blocks NULL):
 * no block is ever made. */
int hostmem_block_new(void)
{
	return -ENOSYS;
}

int fx_hostmem(struct xhcad *d, __u32 pages)
{
	d->hm.pages = pages;
	d->hm.bytes = (__u64)pages * XHCA_PAGE_SIZE;
	d->hm.base = aligned_alloc(XHCA_PAGE_SIZE, d->hm.bytes);
	d->hm.page_ref = calloc(pages, sizeof(*d->hm.page_ref));
	d->hm.allocs = calloc(HM_SLOTS, sizeof(*d->hm.allocs));
	if (!d->hm.base || !d->hm.page_ref || !d->hm.allocs)
		return -1;
	memset(d->hm.base, 0, d->hm.bytes);
	return 0;
}

int fx_take_cqe(struct cq *cq, struct xhca_cqe *c)
{
	__u32 cons = cq->ring->cons;

	cq_flush(); /* (the round's end: its staged completions written) */

	if (__atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE) == cons)
		return -1;
	*c = cq->e[cons & (cq->depth - 1)];
	__atomic_store_n(&cq->ring->cons, cons + 1, __ATOMIC_RELEASE);
	return 0;
}

void fx_meta_payload(struct xhca_rx_meta *m, const __u8 *fr, __u32 len, __u32 plen)
{
	__u32 off = 0;

	if (recv_bth_offset(fr, len, &off))
		off = 0;
	m->payload_off = (__u16)(off + xhca_opinfo_tbl[m->opcode].hdr_len);
	m->payload_len = (__u16)plen;
}

int fx_zerocopy;

int xsk_zerocopy(const struct xhcad *d)
{
	(void)d;
	return fx_zerocopy;
}
