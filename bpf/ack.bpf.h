/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An RC ACK built by xhca_rx (xhcad --xdp-ack): the request frame rewritten
 * in place into the ACK xhcad would send for it (resp_exec.c's
 * resp_ack_spec: addresses and ports swapped back, the QP's remote QPN and
 * P_Key, TTL 64, don't fragment, no UDP checksum) with its ICRC, to go back
 * out of the interface (XDP_TX). IPv4 without options, a linear frame:
 * anything else is left to xhcad.
 */
#ifndef XHCA_ACK_BPF_H
#define XHCA_ACK_BPF_H

#include "common.bpf.h"

/* The reflected CRC-32 (0xEDB88320) of each byte: the ICRC's, as
 * user/lib/icrc.c's table. */
static const __u32 ack_crc_tbl[256] = {
	0x00000000, 0x77073096, 0xee0e612c, 0x990951ba, 0x076dc419, 0x706af48f,
	0xe963a535, 0x9e6495a3, 0x0edb8832, 0x79dcb8a4, 0xe0d5e91e, 0x97d2d988,
	0x09b64c2b, 0x7eb17cbd, 0xe7b82d07, 0x90bf1d91, 0x1db71064, 0x6ab020f2,
	0xf3b97148, 0x84be41de, 0x1adad47d, 0x6ddde4eb, 0xf4d4b551, 0x83d385c7,
	0x136c9856, 0x646ba8c0, 0xfd62f97a, 0x8a65c9ec, 0x14015c4f, 0x63066cd9,
	0xfa0f3d63, 0x8d080df5, 0x3b6e20c8, 0x4c69105e, 0xd56041e4, 0xa2677172,
	0x3c03e4d1, 0x4b04d447, 0xd20d85fd, 0xa50ab56b, 0x35b5a8fa, 0x42b2986c,
	0xdbbbc9d6, 0xacbcf940, 0x32d86ce3, 0x45df5c75, 0xdcd60dcf, 0xabd13d59,
	0x26d930ac, 0x51de003a, 0xc8d75180, 0xbfd06116, 0x21b4f4b5, 0x56b3c423,
	0xcfba9599, 0xb8bda50f, 0x2802b89e, 0x5f058808, 0xc60cd9b2, 0xb10be924,
	0x2f6f7c87, 0x58684c11, 0xc1611dab, 0xb6662d3d, 0x76dc4190, 0x01db7106,
	0x98d220bc, 0xefd5102a, 0x71b18589, 0x06b6b51f, 0x9fbfe4a5, 0xe8b8d433,
	0x7807c9a2, 0x0f00f934, 0x9609a88e, 0xe10e9818, 0x7f6a0dbb, 0x086d3d2d,
	0x91646c97, 0xe6635c01, 0x6b6b51f4, 0x1c6c6162, 0x856530d8, 0xf262004e,
	0x6c0695ed, 0x1b01a57b, 0x8208f4c1, 0xf50fc457, 0x65b0d9c6, 0x12b7e950,
	0x8bbeb8ea, 0xfcb9887c, 0x62dd1ddf, 0x15da2d49, 0x8cd37cf3, 0xfbd44c65,
	0x4db26158, 0x3ab551ce, 0xa3bc0074, 0xd4bb30e2, 0x4adfa541, 0x3dd895d7,
	0xa4d1c46d, 0xd3d6f4fb, 0x4369e96a, 0x346ed9fc, 0xad678846, 0xda60b8d0,
	0x44042d73, 0x33031de5, 0xaa0a4c5f, 0xdd0d7cc9, 0x5005713c, 0x270241aa,
	0xbe0b1010, 0xc90c2086, 0x5768b525, 0x206f85b3, 0xb966d409, 0xce61e49f,
	0x5edef90e, 0x29d9c998, 0xb0d09822, 0xc7d7a8b4, 0x59b33d17, 0x2eb40d81,
	0xb7bd5c3b, 0xc0ba6cad, 0xedb88320, 0x9abfb3b6, 0x03b6e20c, 0x74b1d29a,
	0xead54739, 0x9dd277af, 0x04db2615, 0x73dc1683, 0xe3630b12, 0x94643b84,
	0x0d6d6a3e, 0x7a6a5aa8, 0xe40ecf0b, 0x9309ff9d, 0x0a00ae27, 0x7d079eb1,
	0xf00f9344, 0x8708a3d2, 0x1e01f268, 0x6906c2fe, 0xf762575d, 0x806567cb,
	0x196c3671, 0x6e6b06e7, 0xfed41b76, 0x89d32be0, 0x10da7a5a, 0x67dd4acc,
	0xf9b9df6f, 0x8ebeeff9, 0x17b7be43, 0x60b08ed5, 0xd6d6a3e8, 0xa1d1937e,
	0x38d8c2c4, 0x4fdff252, 0xd1bb67f1, 0xa6bc5767, 0x3fb506dd, 0x48b2364b,
	0xd80d2bda, 0xaf0a1b4c, 0x36034af6, 0x41047a60, 0xdf60efc3, 0xa867df55,
	0x316e8eef, 0x4669be79, 0xcb61b38c, 0xbc66831a, 0x256fd2a0, 0x5268e236,
	0xcc0c7795, 0xbb0b4703, 0x220216b9, 0x5505262f, 0xc5ba3bbe, 0xb2bd0b28,
	0x2bb45a92, 0x5cb36a04, 0xc2d7ffa7, 0xb5d0cf31, 0x2cd99e8b, 0x5bdeae1d,
	0x9b64c2b0, 0xec63f226, 0x756aa39c, 0x026d930a, 0x9c0906a9, 0xeb0e363f,
	0x72076785, 0x05005713, 0x95bf4a82, 0xe2b87a14, 0x7bb12bae, 0x0cb61b38,
	0x92d28e9b, 0xe5d5be0d, 0x7cdcefb7, 0x0bdbdf21, 0x86d3d2d4, 0xf1d4e242,
	0x68ddb3f8, 0x1fda836e, 0x81be16cd, 0xf6b9265b, 0x6fb077e1, 0x18b74777,
	0x88085ae6, 0xff0f6a70, 0x66063bca, 0x11010b5c, 0x8f659eff, 0xf862ae69,
	0x616bffd3, 0x166ccf45, 0xa00ae278, 0xd70dd2ee, 0x4e048354, 0x3903b3c2,
	0xa7672661, 0xd06016f7, 0x4969474d, 0x3e6e77db, 0xaed16a4a, 0xd9d65adc,
	0x40df0b66, 0x37d83bf0, 0xa9bcae53, 0xdebb9ec5, 0x47b2cf7f, 0x30b5ffe9,
	0xbdbdf21c, 0xcabac28a, 0x53b39330, 0x24b4a3a6, 0xbad03605, 0xcdd70693,
	0x54de5729, 0x23d967bf, 0xb3667a2e, 0xc4614ab8, 0x5d681b02, 0x2a6f2b94,
	0xb40bbe37, 0xc30c8ea1, 0x5a05df1b, 0x2d02ef8d,
};

/* IBA table 44: the receive entries each credit code stands for (wire.h's,
 * whose xhca_credit_count BPF cannot take: its table is a static local). */
static const __u32 ack_credit_tbl[31] = { XHCA_CREDIT_COUNTS };

/* The largest credit code not above posted (wire.h's xhca_credit_code). */
static __always_inline __u8 ack_credit_code(__u32 posted)
{
	__u8 k = 0;

	for (__u32 i = 1; i < 31; i++)
		if (ack_credit_tbl[i] <= posted)
			k = (__u8)i;
	return k;
}

#define ACK_IP4 20
#define ACK_HDRS (ACK_IP4 + 8 + 12 + 4) /* IPv4, UDP, BTH, AETH */
#define ACK_L3_MAX 22			/* Ethernet and two VLAN tags */

/* The CRC of n bytes b. */
static __always_inline __u32 ack_crc(__u32 crc, const __u8 *b, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		__u32 k = crc ^ b[i];

		/* (masked last, where clang cannot move it: Linux 6.1's
		 * verifier learns no bound from an XOR of bounded values) */
		asm volatile("" : "+r"(k));
		crc = ack_crc_tbl[k & 0xff] ^ (crc >> 8);
	}
	return crc;
}

/* The CRC of n bytes of ones: a masked field. */
static __always_inline __u32 ack_crc_ones(__u32 crc, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		__u32 k = crc ^ 0xff;

		asm volatile("" : "+r"(k));
		crc = ack_crc_tbl[k & 0xff] ^ (crc >> 8);
	}
	return crc;
}

/*
 * The ICRC of the ACK's headers h (ACK_HDRS bytes from the IPv4 header on,
 * no payload; in the frame), as user/lib/icrc.c's xhca_icrc: after the 8
 * bytes of ones that stand for the LRH, with TOS, TTL, the IPv4 and UDP
 * checksums and the BTH's FECN/BECN byte as ones. What comes before the
 * source address is the same in every ACK (ack_build writes it so), its CRC
 * ack_crc_pre's, which clang works out while compiling: the CRC runs over
 * the 32 bytes after it alone, and no byte is tested for a mask.
 */
static const __u8 ack_pre[20] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,	/* the LRH */
	0x45, 0xff, 0, ACK_HDRS + XHCA_ICRC_LEN,	/* version, TOS, length */
	0, 0, 0x40, 0,					/* ID 0, don't fragment */
	0xff, 17, 0xff, 0xff,				/* TTL, UDP, checksum */
};

static __always_inline __u32 ack_crc_pre(void)
{
	__u32 crc = 0xffffffffu;

	for (__u32 i = 0; i < sizeof(ack_pre); i++)
		crc = ack_crc_tbl[(crc ^ ack_pre[i]) & 0xff] ^ (crc >> 8);
	return crc;
}

static __always_inline __u32 ack_icrc(const __u8 *h)
{
	__u32 crc = ack_crc_pre();

	crc = ack_crc(crc, h + 12, 14);			/* addresses, ports, UDP length */
	crc = ack_crc_ones(crc, 2);			/* UDP checksum */
	crc = ack_crc(crc, h + ACK_IP4 + 8, 4);		/* BTH: opcode, flags, P_Key */
	crc = ack_crc_ones(crc, 1);			/* FECN, BECN */
	crc = ack_crc(crc, h + ACK_IP4 + 13, ACK_HDRS - ACK_IP4 - 13); /* QPN, PSN, AETH */
	return ~crc;
}

static __always_inline __u16 ack_ip_csum(const __u8 *h)
{
	__u32 sum = 0;

	for (int i = 0; i < ACK_IP4; i += 2)
		sum += (__u32)h[i] << 8 | h[i + 1];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

static __always_inline void put_be16(__u8 *b, __u32 v)
{
	b[0] = (__u8)(v >> 8);
	b[1] = (__u8)v;
}

static __always_inline void put_be32(__u8 *b, __u32 v)
{
	put_be16(b, v >> 16);
	put_be16(b + 2, v & 0xffff);
}

/* Return values of ack_build other than 0 (the frame is the ACK). */
#define ACK_UNTOUCHED (-1) /* the frame is as it came: it goes on to xhcad */
#define ACK_LOST (-2)	   /* the frame was cut and could not be written */

/* Rewrites the request frame p into the ACK of its PSN with MSN msn and
 * the AETH syndrome syn, to its QP's (c's) remote QPN with its P_Key: what
 * it needs of the request read first, then the frame cut to the ACK's
 * length and written, its ICRC read back from it (no copy on the stack).
 * A global function: its stack is not added to each caller's. */
__noinline int ack_build(struct xdp_md *ctx, const struct roce_pkt *p, struct xhca_qp_ctx *c,
			 __u32 msn, __u32 syn)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 l3, len, saddr, daddr, icrc;
	__u8 mac[12], *ip, *f;
	__u16 sport;
	int delta;

	if (!p || !c)
		return ACK_UNTOUCHED;
	l3 = p->l3_off;
	len = (__u32)bpf_xdp_get_buff_len(ctx);
	if ((p->mflags & XHCA_MF_IPV6) || l3 > ACK_L3_MAX || end - data != (long)len)
		return ACK_UNTOUCHED;
	l3 &= 31;
	ip = data + l3;
	if (data + 12 > end || (void *)(ip + ACK_IP4 + 8) > end || ip[0] != 0x45)
		return ACK_UNTOUCHED;
	__builtin_memcpy(&saddr, ip + 12, 4);
	__builtin_memcpy(&daddr, ip + 16, 4);
	__builtin_memcpy(&sport, ip + ACK_IP4, 2); /* the flow's entropy, back */
	__builtin_memcpy(mac, data + 6, 6);
	__builtin_memcpy(mac + 6, data, 6);
	delta = (int)(l3 + ACK_HDRS + XHCA_ICRC_LEN) - (int)len;
	if (delta && bpf_xdp_adjust_tail(ctx, delta))
		return ACK_UNTOUCHED;
	/* (the flow queue's block, made when it admitted the frame: the
	 * peer's xhca_rx would find it in front of the ACK) */
	if (meta_clear(ctx))
		return ACK_LOST;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	f = data;
	ip = f + l3;
	if ((void *)(f + 12) > end || (void *)(ip + ACK_HDRS + XHCA_ICRC_LEN) > end)
		return ACK_LOST;
	__builtin_memcpy(f, mac, 12);
	__builtin_memset(ip, 0, ACK_HDRS);
	/* (up to the source address as ack_pre has it: its CRC is
	 * ack_crc_pre's) */
	ip[0] = 0x45;
	put_be16(ip + 2, ACK_HDRS + XHCA_ICRC_LEN);
	put_be16(ip + 6, 0x4000);	/* don't fragment */
	ip[8] = 64;
	ip[9] = 17;
	__builtin_memcpy(ip + 12, &daddr, 4);
	__builtin_memcpy(ip + 16, &saddr, 4);
	put_be16(ip + 10, ack_ip_csum(ip));
	__builtin_memcpy(ip + ACK_IP4, &sport, 2);
	put_be16(ip + ACK_IP4 + 2, XHCA_ROCE_UDP_PORT);
	put_be16(ip + ACK_IP4 + 4, ACK_HDRS - ACK_IP4 + XHCA_ICRC_LEN);
	ip[ACK_IP4 + 8] = XHCA_OPC_RC | XHCA_OP_ACK;
	put_be16(ip + ACK_IP4 + 10, READ_ONCE16(c->pkey));
	put_be32(ip + ACK_IP4 + 12, READ_ONCE32(c->dest_qpn) & XHCA_QPN_MASK);
	put_be32(ip + ACK_IP4 + 16, p->psn & XHCA_PSN_MASK);
	put_be32(ip + ACK_IP4 + 20, (syn & 0xff) << 24 | (msn & XHCA_PSN_MASK));
	icrc = ack_icrc(ip);
	/* little-endian on the wire, as RXE stores it */
	ip[ACK_HDRS] = (__u8)icrc;
	ip[ACK_HDRS + 1] = (__u8)(icrc >> 8);
	ip[ACK_HDRS + 2] = (__u8)(icrc >> 16);
	ip[ACK_HDRS + 3] = (__u8)(icrc >> 24);
	return 0;
}

#endif /* XHCA_ACK_BPF_H */
