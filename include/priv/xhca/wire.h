/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 wire format: BTH and extension headers, opcodes, and the opcode table
 * that says which headers each opcode carries. Used by xhca_rx, the packet
 * builder and the daemon. Multi-byte fields are big-endian on the wire; BTH
 * words are read whole and masked, never through bitfields.
 */
#ifndef XHCA_WIRE_H
#define XHCA_WIRE_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define XHCA_ROCE_UDP_PORT 4791
#define XHCA_ICRC_LEN 4

/* BTH: 12 bytes. */
struct xhca_bth {
	__u8 opcode;
	__u8 flags;	/* SE 0x80 | M 0x40 | PadCnt 0x30 | TVer 0x0f */
	__be16 pkey;
	__be32 qpn;	/* FECN 0x80000000 | BECN 0x40000000 | resv6 | DestQP 24 */
	__be32 apsn;	/* AckReq 0x80000000 | resv7 | PSN 24 */
} __attribute__((packed));
_Static_assert(sizeof(struct xhca_bth) == 12, "bth size");

#define XHCA_BTH_SE 0x80
#define XHCA_BTH_MIG 0x40
#define XHCA_BTH_PAD_MASK 0x30
#define XHCA_BTH_PAD_SHIFT 4
#define XHCA_BTH_TVER_MASK 0x0f
#define XHCA_BTH_FECN 0x80000000u
#define XHCA_BTH_BECN 0x40000000u
#define XHCA_BTH_ACKREQ 0x80000000u
#define XHCA_PSN_MASK 0x00ffffffu

struct xhca_reth {
	__be64 va;
	__be32 rkey;
	__be32 len;
} __attribute__((packed));
_Static_assert(sizeof(struct xhca_reth) == 16, "reth size");

struct xhca_deth {
	__be32 qkey;
	__be32 sqp;	/* resv8 | SrcQP 24 */
} __attribute__((packed));
_Static_assert(sizeof(struct xhca_deth) == 8, "deth size");

struct xhca_aeth {
	__be32 smsn;	/* Syndrome 8 | MSN 24 */
} __attribute__((packed));
_Static_assert(sizeof(struct xhca_aeth) == 4, "aeth size");

struct xhca_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __attribute__((packed));
_Static_assert(sizeof(struct xhca_atmeth) == 28, "atomiceth size");

struct xhca_atmack {
	__be64 orig;
} __attribute__((packed));
_Static_assert(sizeof(struct xhca_atmack) == 8, "atomicacketh size");

/* ImmDt and IETH are one 32-bit word each; CNP carries 16 reserved bytes. */
#define XHCA_IMMDT_LEN 4
#define XHCA_IETH_LEN 4
#define XHCA_CNP_RSVD_LEN 16

/* Opcodes: class (bits 7..5) | operation (bits 4..0). */
#define XHCA_OPC_RC 0x00
#define XHCA_OPC_UC 0x20
#define XHCA_OPC_RD 0x40
#define XHCA_OPC_UD 0x60
#define XHCA_OPC_CNP_CLASS 0x80

enum xhca_op {
	XHCA_OP_SEND_FIRST = 0x00,
	XHCA_OP_SEND_MIDDLE = 0x01,
	XHCA_OP_SEND_LAST = 0x02,
	XHCA_OP_SEND_LAST_IMM = 0x03,
	XHCA_OP_SEND_ONLY = 0x04,
	XHCA_OP_SEND_ONLY_IMM = 0x05,
	XHCA_OP_WRITE_FIRST = 0x06,
	XHCA_OP_WRITE_MIDDLE = 0x07,
	XHCA_OP_WRITE_LAST = 0x08,
	XHCA_OP_WRITE_LAST_IMM = 0x09,
	XHCA_OP_WRITE_ONLY = 0x0a,
	XHCA_OP_WRITE_ONLY_IMM = 0x0b,
	XHCA_OP_READ_REQ = 0x0c,
	XHCA_OP_READ_RESP_FIRST = 0x0d,
	XHCA_OP_READ_RESP_MIDDLE = 0x0e,
	XHCA_OP_READ_RESP_LAST = 0x0f,
	XHCA_OP_READ_RESP_ONLY = 0x10,
	XHCA_OP_ACK = 0x11,
	XHCA_OP_ATOMIC_ACK = 0x12,
	XHCA_OP_CMP_SWAP = 0x13,
	XHCA_OP_FETCH_ADD = 0x14,
	XHCA_OP_SEND_LAST_INV = 0x16,
	XHCA_OP_SEND_ONLY_INV = 0x17,
	XHCA_OP_FLUSH = 0x1c,
	XHCA_OP_ATOMIC_WRITE = 0x1d,
	XHCA_OP_CNP = 0x81,
};

/* Header bits of an opcode (struct xhca_opinfo.hdrs). */
#define XHCA_H_RETH (1u << 0)
#define XHCA_H_DETH (1u << 1)
#define XHCA_H_AETH (1u << 2)
#define XHCA_H_ATMETH (1u << 3)
#define XHCA_H_ATMACK (1u << 4)
#define XHCA_H_IMM (1u << 5)
#define XHCA_H_IETH (1u << 6)
#define XHCA_H_FETH (1u << 7)
#define XHCA_H_CNP (1u << 8)
/* Semantic bits. */
#define XHCA_O_KNOWN (1u << 9)
#define XHCA_O_REQ (1u << 10)	/* request (responder side) */
#define XHCA_O_RESP (1u << 11)	/* response: ACK, read response, atomic ACK */
#define XHCA_O_READ (1u << 12)
#define XHCA_O_START (1u << 13) /* FIRST or ONLY */
#define XHCA_O_END (1u << 14)	/* LAST or ONLY */
#define XHCA_O_PAYLOAD (1u << 15)

struct xhca_opinfo {
	__u16 flags;	/* XHCA_H_* | XHCA_O_* */
	__u8 hdr_len;	/* BTH and every extension header, in bytes */
	__u8 pad;
};

#define XHCA__OP(f, l) { .flags = (f) | XHCA_O_KNOWN, .hdr_len = (l) }
#define XHCA__RC_UC_OPS(c)                                                                      \
	[(c) | 0x00] = XHCA__OP(XHCA_O_REQ | XHCA_O_START | XHCA_O_PAYLOAD, 12),              \
	[(c) | 0x01] = XHCA__OP(XHCA_O_REQ | XHCA_O_PAYLOAD, 12),                             \
	[(c) | 0x02] = XHCA__OP(XHCA_O_REQ | XHCA_O_END | XHCA_O_PAYLOAD, 12),                \
	[(c) | 0x03] = XHCA__OP(XHCA_O_REQ | XHCA_O_END | XHCA_O_PAYLOAD | XHCA_H_IMM, 16),   \
	[(c) | 0x04] = XHCA__OP(XHCA_O_REQ | XHCA_O_START | XHCA_O_END | XHCA_O_PAYLOAD, 12), \
	[(c) | 0x05] = XHCA__OP(XHCA_O_REQ | XHCA_O_START | XHCA_O_END | XHCA_O_PAYLOAD |     \
				XHCA_H_IMM, 16),                                              \
	[(c) | 0x06] = XHCA__OP(XHCA_O_REQ | XHCA_O_START | XHCA_O_PAYLOAD | XHCA_H_RETH, 28), \
	[(c) | 0x07] = XHCA__OP(XHCA_O_REQ | XHCA_O_PAYLOAD, 12),                             \
	[(c) | 0x08] = XHCA__OP(XHCA_O_REQ | XHCA_O_END | XHCA_O_PAYLOAD, 12),                \
	[(c) | 0x09] = XHCA__OP(XHCA_O_REQ | XHCA_O_END | XHCA_O_PAYLOAD | XHCA_H_IMM, 16),   \
	[(c) | 0x0a] = XHCA__OP(XHCA_O_REQ | XHCA_O_START | XHCA_O_END | XHCA_O_PAYLOAD |     \
				XHCA_H_RETH, 28),                                             \
	[(c) | 0x0b] = XHCA__OP(XHCA_O_REQ | XHCA_O_START | XHCA_O_END | XHCA_O_PAYLOAD |     \
				XHCA_H_RETH | XHCA_H_IMM, 32)

/*
 * Indexed by the BTH opcode. Entries without XHCA_O_KNOWN are unknown opcodes:
 * reserved RC codes, all of RD (no RD QPs exist), XRC and the rest.
 */
static const struct xhca_opinfo xhca_opinfo_tbl[256] = {
	XHCA__RC_UC_OPS(XHCA_OPC_RC),
	[0x0c] = XHCA__OP(XHCA_O_REQ | XHCA_O_READ | XHCA_O_START | XHCA_O_END | XHCA_H_RETH, 28),
	[0x0d] = XHCA__OP(XHCA_O_RESP | XHCA_O_START | XHCA_O_PAYLOAD | XHCA_H_AETH, 16),
	[0x0e] = XHCA__OP(XHCA_O_RESP | XHCA_O_PAYLOAD, 12),
	[0x0f] = XHCA__OP(XHCA_O_RESP | XHCA_O_END | XHCA_O_PAYLOAD | XHCA_H_AETH, 16),
	[0x10] = XHCA__OP(XHCA_O_RESP | XHCA_O_START | XHCA_O_END | XHCA_O_PAYLOAD | XHCA_H_AETH,
			  16),
	[0x11] = XHCA__OP(XHCA_O_RESP | XHCA_O_START | XHCA_O_END | XHCA_H_AETH, 16),
	[0x12] = XHCA__OP(XHCA_O_RESP | XHCA_O_START | XHCA_O_END | XHCA_H_AETH | XHCA_H_ATMACK,
			  24),
	[0x13] = XHCA__OP(XHCA_O_REQ | XHCA_O_START | XHCA_O_END | XHCA_H_ATMETH, 40),
	[0x14] = XHCA__OP(XHCA_O_REQ | XHCA_O_START | XHCA_O_END | XHCA_H_ATMETH, 40),
	[0x16] = XHCA__OP(XHCA_O_REQ | XHCA_O_END | XHCA_O_PAYLOAD | XHCA_H_IETH, 16),
	[0x17] = XHCA__OP(XHCA_O_REQ | XHCA_O_START | XHCA_O_END | XHCA_O_PAYLOAD | XHCA_H_IETH,
			  16),
	[0x1c] = XHCA__OP(XHCA_O_REQ | XHCA_O_START | XHCA_O_END | XHCA_H_FETH | XHCA_H_RETH, 32),
	[0x1d] = XHCA__OP(XHCA_O_REQ | XHCA_O_START | XHCA_O_END | XHCA_O_PAYLOAD | XHCA_H_RETH,
			  28),
	XHCA__RC_UC_OPS(XHCA_OPC_UC),
	[0x64] = XHCA__OP(XHCA_O_REQ | XHCA_O_START | XHCA_O_END | XHCA_O_PAYLOAD | XHCA_H_DETH, 20),
	[0x65] = XHCA__OP(XHCA_O_REQ | XHCA_O_START | XHCA_O_END | XHCA_O_PAYLOAD | XHCA_H_DETH |
				  XHCA_H_IMM,
			  24),
	[0x81] = XHCA__OP(XHCA_H_CNP, 28),
};

/* Byte offsets of the extension headers from the start of the BTH, in wire
 * order: BTH, [DETH], [RETH | AtomicETH | FETH+RETH], [AETH], [AtomicAckETH],
 * [ImmDt | IETH]. Valid only for headers the opcode carries. */
static inline __attribute__((always_inline)) unsigned int xhca_deth_off(void)
{
	return 12;
}

static inline __attribute__((always_inline)) unsigned int xhca_reth_off(__u16 flags)
{
	return 12 + ((flags & XHCA_H_FETH) ? 4 : 0) + ((flags & XHCA_H_DETH) ? 8 : 0);
}

/* Whether an RC request (its opcode without the class) is answered by a
 * response of its own, which the responder executes and keeps for its
 * duplicates: READ (READ responses), CMP_SWAP and FETCH_ADD (an ATOMIC
 * ACK), ATOMIC WRITE (IBA 1.5: a READ RESPONSE ONLY of no bytes). */
static inline __attribute__((always_inline)) int xhca_op_responded(__u8 op)
{
	return op == XHCA_OP_READ_REQ || op == XHCA_OP_CMP_SWAP || op == XHCA_OP_FETCH_ADD ||
	       op == XHCA_OP_ATOMIC_WRITE;
}

/* Whether an opcode (without the class) is a READ RESPONSE: FIRST, MIDDLE,
 * LAST or ONLY. */
static inline __attribute__((always_inline)) int xhca_op_read_resp(__u8 op)
{
	return op >= XHCA_OP_READ_RESP_FIRST && op <= XHCA_OP_READ_RESP_ONLY;
}

/* 24-bit serial-number comparison: <0 a before b, 0 equal, >0 a after b. */
static inline __attribute__((always_inline)) int xhca_psn_cmp(__u32 a, __u32 b)
{
	return (int)((a - b) << 8);
}

/* The signed distance from b to a in 24-bit PSN space (-2^23 .. 2^23-1). */
static inline __attribute__((always_inline)) int xhca_psn_diff(__u32 a, __u32 b)
{
	return (int)((a - b) << 8) >> 8;
}

/* AETH syndromes (IBA 9.7.5.2.1): the top three bits say ACK, RNR NAK or
 * NAK; an ACK's low five bits are its credit count (31: none given), an
 * RNR NAK's its timer code (IBA table 45), a NAK's its code. */
#define XHCA_AETH_ACK_NO_CREDIT 0x1f
#define XHCA_AETH_RNR 0x20
#define XHCA_AETH_NAK_SEQ 0x60		/* PSN sequence error */
#define XHCA_AETH_NAK_INVALID 0x61	/* invalid request */
#define XHCA_AETH_NAK_ACCESS 0x62	/* remote access error */
#define XHCA_AETH_NAK_REMOTE_OP 0x63	/* remote operational error */
#define XHCA_AETH_KIND(syn) ((syn) & 0x60)

/* IBA 9.7.7.2.5 (table 44): receive WQEs an ACK's credit code (0 to 30)
 * stands for; XHCA_AETH_ACK_NO_CREDIT says nothing. The responder sends
 * the largest code not above what it has posted (xhca_credit_code), the
 * requester reads it back (xhca_credit_count). The table as a list, for
 * xhca_rx's copy too (ack.bpf.h: BPF takes no static local). */
#define XHCA_CREDIT_COUNTS                                                                   \
	0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, \
		1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768

#ifndef __bpf__
static inline __u32 xhca_credit_count(__u8 code)
{
	static const __u32 tbl[31] = { XHCA_CREDIT_COUNTS };

	return code < 31 ? tbl[code] : 0;
}

static inline __u8 xhca_credit_code(__u32 posted)
{
	__u8 k = 0;

	while (k < 30 && xhca_credit_count(k + 1) <= posted)
		k++;
	return k;
}
#endif

/* InfiniBand P_Key matching: same partition (low 15 bits, not 0), and at
 * least one side a full member (bit 15). */
static inline __attribute__((always_inline)) int xhca_pkey_match(__u16 a, __u16 b)
{
	return (a & 0x7fff) != 0 && (a & 0x7fff) == (b & 0x7fff) && ((a | b) & 0x8000);
}

#endif /* XHCA_WIRE_H */
