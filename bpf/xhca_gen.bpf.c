/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca_gen: the XDP half of xhca-gen. xhca-gen runs it with
 * BPF_PROG_TEST_RUN and BPF_F_TEST_XDP_LIVE_FRAMES on a frame it built;
 * XDP_TX sends every run out of the interface named in ctx_in. It is loaded
 * but never attached.
 *
 * A live-frames run repeats one frame, but frames with different PSNs have
 * different ICRCs. Rather than one syscall per frame, this program rewrites
 * the PSN of frame number seq and patches the ICRC itself: a CRC is affine
 * over GF(2), so for a fixed length
 *	ICRC(psn) = ICRC(psn_first) ^ XOR{ icrc_delta[i] : bit i of psn ^ psn_first }
 * where icrc_delta[i] = ICRC(psn_first ^ 1 << i) ^ ICRC(psn_first) comes
 * from the userspace packet builder. xhca-gen checks the result against the
 * builder before it sends anything.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by xhca-gen before load; the verifier sees them as constants. */
const volatile __u32 psn_off;	/* offset of the BTH AckReq|PSN word */
const volatile __u32 stamp_off;	/* offset of the PSN stamp in the payload; 0 = none */
const volatile __u32 icrc_off;	/* offset of the ICRC */
const volatile __u32 csum_off;	/* offset of the UDP checksum; 0 = it is 0, leave it */
const volatile __u32 psn_first;
const volatile __u32 psn_step;	/* 0: every frame is the same, only count */
const volatile __u32 icrc_first; /* ICRC bytes of the first frame, as a host word */
const volatile __u32 icrc_delta[24];
/* --va-step: the low 32 bits of the RETH VA of frame k are
 * va_first_lo + (k * va_step) % va_span, the ICRC patched the same way. */
const volatile __u32 va_off;	/* offset of the low VA word; 0 = the VA stays */
const volatile __u32 va_first_lo;
const volatile __u32 va_step;
const volatile __u32 va_span;
const volatile __u32 va_delta[32];

/* Frames run so far. Plain increments are enough: the program is never
 * attached, and a test run executes on one CPU at a time, serially, for the
 * single thread of xhca-gen. It also gives the exact count of frames handed
 * to XDP_TX when a run is interrupted by a signal. */
__u64 seq;

#define OFF_MASK 0x3fff /* frames are under a page: keeps offsets provably bounded */

struct u32_unaligned {
	__u32 v;
} __attribute__((packed));

struct u16_unaligned {
	__u16 v;
} __attribute__((packed));

SEC("xdp")
int xhca_gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct u32_unaligned *icrc;
	struct u16_unaligned *csum;
	__be32 old[2], new[2];
	__u8 *apsn;
	__u32 k, psn, diff, x, sum;
	int i;

	k = (__u32)seq++;
	if (!psn_step && !va_off)
		return XDP_TX;

	apsn = data + (psn_off & OFF_MASK);
	icrc = data + (icrc_off & OFF_MASK);
	if ((void *)(apsn + 4) > end || (void *)(icrc + 1) > end)
		return XDP_ABORTED;

	/* Modulo 2^32 then masked: the same as modulo 2^24. */
	psn = (psn_first + k * psn_step) & 0xffffff;
	diff = psn ^ psn_first;
	x = icrc_first;
	for (i = 0; i < 24; i++)
		if (diff & (1u << i))
			x ^= icrc_delta[i];

	/* Live frames recycle their pages without copying the input again,
	 * so the frame holds some earlier PSN: the checksum update works from
	 * what is there, not from the first frame. */
	old[0] = ((struct u32_unaligned *)apsn)->v;
	old[1] = icrc->v;
	apsn[1] = psn >> 16;
	apsn[2] = psn >> 8;
	apsn[3] = psn;
	if (stamp_off) {
		/* The ICRC deltas include these bytes: the builder made them
		 * with the stamp. The UDP checksum is 0 then (checked by
		 * xhca-gen), so nothing else to patch. */
		__u8 *st = data + (stamp_off & OFF_MASK);

		if ((void *)(st + 4) > end)
			return XDP_ABORTED;
		st[1] = psn >> 16;
		st[2] = psn >> 8;
		st[3] = psn;
	}
	if (va_off && va_span) {
		__u8 *vp = data + (va_off & OFF_MASK);
		__u32 lo = va_first_lo + (__u32)(((__u64)k * va_step) % va_span);

		if ((void *)(vp + 4) > end)
			return XDP_ABORTED;
		diff = lo ^ va_first_lo;
		for (i = 0; i < 32; i++)
			if (diff & (1u << i))
				x ^= va_delta[i];
		vp[0] = lo >> 24;
		vp[1] = lo >> 16;
		vp[2] = lo >> 8;
		vp[3] = lo;
	}
	icrc->v = x;
	if (!csum_off)
		return XDP_TX;

	csum = data + (csum_off & OFF_MASK);
	if ((void *)(csum + 1) > end)
		return XDP_ABORTED;
	new[0] = ((struct u32_unaligned *)apsn)->v;
	new[1] = icrc->v;
	/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), the sum of ~m + m' by
	 * bpf_csum_diff, seeded with ~HC. The BTH and the ICRC start at even
	 * offsets from the UDP header, so these are checksum words; all in
	 * the frame's byte order, which a ones' complement sum does not mind
	 * (RFC 1071). Folded here: by kernel and architecture the helper
	 * returns the sum folded to 16 bits or as a 32-bit partial sum. */
	sum = (__u32)bpf_csum_diff(old, sizeof(old), new, sizeof(new), (__u16)~csum->v);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (__u16)~sum;
	if (!sum)
		sum = 0xffff; /* UDP: 0 would mean "no checksum" */
	csum->v = (__u16)sum;
	return XDP_TX;
}
