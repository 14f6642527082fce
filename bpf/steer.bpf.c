/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca_steer: the TX queue of xhcad's UDP GSO runs (--steer, steer.c). On a
 * veth the peer receives a frame on the RX queue of the TX queue it left
 * by, and xhcad sends a QP's requests and the responder's frames to the
 * queue whose engine at the peer owns the destination QP. A packet socket's frames get
 * the kernel's choice of TX queue (a hash with a random seed), made after
 * this hook (tc clsact egress): each engine sends by a socket per TX queue,
 * marked XHCA_STEER_MARK | queue, and this program turns the mark into the
 * queue. It sets queue_mapping to queue + 1, which the kernel's pick reads
 * as a recorded queue (skb_tx_hash: queue_mapping - 1), and clears the
 * mark, ours alone. Any other frame goes on as it came; every frame goes on
 * to the filters after this one (TC_ACT_UNSPEC).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <xhca/abi.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define TC_ACT_UNSPEC (-1)

SEC("tc")
int xhca_steer(struct __sk_buff *skb)
{
	__u32 m = skb->mark;

	if ((m & ~XHCA_STEER_QMASK) == XHCA_STEER_MARK) {
		skb->queue_mapping = (m & XHCA_STEER_QMASK) + 1;
		skb->mark = 0;
	}
	return TC_ACT_UNSPEC;
}
