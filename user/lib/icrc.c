/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 Invariant CRC, computed the way the Linux soft-RoCE driver (RXE,
 * rxe_icrc.c) does it, so that frames we build are accepted by RXE and frames
 * RXE sends verify here.
 */
#include <errno.h>
#include <pthread.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <string.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>

#define ETH_HDR_LEN 14
#define ETHTYPE_IPV4 0x0800
#define ETHTYPE_IPV6 0x86dd
#define ETHTYPE_VLAN 0x8100
#define ETHTYPE_QINQ 0x88a8
#define IPV4_BASE_LEN 20
#define IPV6_BASE_LEN 40
#define UDP_LEN 8
#define BTH_LEN 12

/* Slicing by 8: table t[k][b] is the CRC of byte b followed by k zero
 * bytes, so eight bytes are folded per step (xhcad checks the ICRC of every
 * frame it takes: this keeps that near 1 byte per cycle, not 1 per 3). */
static uint32_t crc_tbl[8][256];
static int have_clmul;		/* the CPU multiplies without carry (PCLMULQDQ) */
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* Reflected CRC-32 (poly 0xEDB88320). Built once, on first use, so that
 * callers from several threads see a complete table. */
static void crc_tbl_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0xedb88320u : c >> 1;
		crc_tbl[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			crc_tbl[k][i] = crc_tbl[0][crc_tbl[k - 1][i] & 0xff] ^ (crc_tbl[k - 1][i] >> 8);
#if defined(__x86_64__)
	have_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
}

/* Raw register update, 8 bytes a step: no pre- or post-inversion (like the
 * kernel's crc32_le). */
static uint32_t crc_slice8(uint32_t crc, const uint8_t *p, size_t n)
{
	for (; n >= 8; n -= 8, p += 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);

		crc = crc_tbl[7][lo & 0xff] ^ crc_tbl[6][(lo >> 8) & 0xff] ^
		      crc_tbl[5][(lo >> 16) & 0xff] ^ crc_tbl[4][lo >> 24] ^ crc_tbl[3][p[4]] ^
		      crc_tbl[2][p[5]] ^ crc_tbl[1][p[6]] ^ crc_tbl[0][p[7]];
	}
	while (n--)
		crc = crc_tbl[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__)
/*
 * The same register update by carry-less multiplication (PCLMULQDQ), 64
 * bytes a step: four 128-bit lanes are folded forward over 512 bits, then
 * into one, then reduced to 32 bits (Barrett), as in Intel's "Fast CRC
 * Computation for Generic Polynomials Using PCLMULQDQ". The constants are
 * powers of x modulo the reflected CRC-32 polynomial for those distances,
 * and the Barrett pair (P', mu). Measured here: 14.5 GB/s on 4 KiB against
 * 2.5 GB/s sliced by 8 (and zlib's 3.0): a 4 KiB frame's ICRC in 0.3 us,
 * not 1.6. n >= 64; the last n % 16 bytes by slices.
 */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc_clmul(uint32_t crc, const uint8_t *p, size_t n)
{
	const __m128i k512 = _mm_set_epi64x(0x1c6e41596ll, 0x154442bd4ll);
	const __m128i k128 = _mm_set_epi64x(0x0ccaa009ell, 0x1751997d0ll);
	const __m128i k64 = _mm_set_epi64x(0, 0x163cd6124ll);
	const __m128i pmu = _mm_set_epi64x(0x1f7011641ll, 0x1db710641ll);
	const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i a, b, c, e, t;

#define LD(q) _mm_loadu_si128((const __m128i *)(q))
	/* lane x folded over k's distance into the next data d */
#define FOLD(x, k, d) _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), \
						    _mm_clmulepi64_si128(x, k, 0x11)), d)
	a = _mm_xor_si128(LD(p), _mm_cvtsi32_si128((int)crc));
	b = LD(p + 16);
	c = LD(p + 32);
	e = LD(p + 48);
	for (p += 64, n -= 64; n >= 64; n -= 64, p += 64) {
		a = FOLD(a, k512, LD(p));
		b = FOLD(b, k512, LD(p + 16));
		c = FOLD(c, k512, LD(p + 32));
		e = FOLD(e, k512, LD(p + 48));
	}
	a = FOLD(FOLD(FOLD(a, k128, b), k128, c), k128, e);
	for (; n >= 16; n -= 16, p += 16)
		a = FOLD(a, k128, LD(p));
#undef FOLD
#undef LD
	/* 128 bits to 64, 64 to 32, then Barrett's reduction */
	a = _mm_xor_si128(_mm_clmulepi64_si128(a, k128, 0x10), _mm_srli_si128(a, 8));
	a = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(a, low32), k64, 0x00),
			  _mm_srli_si128(a, 4));
	t = a;
	a = _mm_clmulepi64_si128(_mm_and_si128(a, low32), pmu, 0x10);
	a = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(a, low32), pmu, 0x00), t);
	return crc_slice8((uint32_t)_mm_extract_epi32(a, 1), p, n);
}
#endif

/* Raw register update: by PCLMULQDQ where the CPU has it and the run is
 * long enough to pay for the reduction, else sliced by 8. */
static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
#if defined(__x86_64__)
	if (have_clmul && n >= 64)
		return crc_clmul(crc, p, n);
#endif
	return crc_slice8(crc, p, n);
}

uint32_t xhca_crc32(uint32_t crc, const void *p, size_t n)
{
	pthread_once(&crc_once, crc_tbl_init);
	return ~crc_update(~crc, p, n);
}

/* Offset of the UDP header from the start of an IPv6 header: extension
 * headers that the builder can insert (and that carry a length) are
 * skipped; anything else is taken to be the UDP header. */
static size_t ipv6_l4_off(const uint8_t *ip, size_t len, uint8_t *proto)
{
	size_t off = IPV6_BASE_LEN;
	uint8_t nh = ip[6];

	for (int i = 0; i < 8 && off + 8 <= len; i++) {
		if (nh == 0 || nh == 43 || nh == 60) {		/* HBH, routing, dest opts */
			uint8_t next = ip[off];

			off += ((size_t)ip[off + 1] + 1) * 8;
			nh = next;
		} else if (nh == 44) {				/* fragment header */
			nh = ip[off];
			off += 8;
		} else {
			break;
		}
	}
	*proto = nh;
	return off;
}

/*
 * RXE's pseudo header: it copies sizeof(iphdr or ipv6hdr) + sizeof(udphdr)
 * contiguous bytes from the start of the IP header and masks the variant
 * fields in that copy, then appends the BTH found through the real UDP
 * header. With IPv4 options (or an IPv6 extension header) the 8 bytes after
 * the base header are therefore the first option bytes, not the UDP header,
 * and the UDP header is not covered at all. We follow RXE on purpose, since
 * RXE is the peer we must interoperate with; scapy, which copies the whole
 * IPv4 header, gets a different ICRC for such frames.
 */
uint32_t xhca_icrc(const void *l3, size_t len, int ipv6)
{
	const uint8_t *ip = l3;
	size_t base = ipv6 ? IPV6_BASE_LEN : IPV4_BASE_LEN;
	uint8_t pshdr[IPV6_BASE_LEN + UDP_LEN + BTH_LEN];
	static const uint8_t lrh_ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	size_t bth_off, n;
	uint32_t crc = 0xffffffffu;
	uint8_t proto;

	pthread_once(&crc_once, crc_tbl_init);
	if (len < base + UDP_LEN + BTH_LEN)
		return 0;	/* not a RoCEv2 packet; callers check lengths first */

	if (ipv6)
		bth_off = ipv6_l4_off(ip, len, &proto) + UDP_LEN;
	else
		bth_off = (size_t)(ip[0] & 0x0f) * 4 + UDP_LEN;
	if (bth_off < base + UDP_LEN || bth_off + BTH_LEN > len)
		return 0;

	memcpy(pshdr, ip, base + UDP_LEN);
	if (ipv6) {
		pshdr[0] |= 0x0f;			/* traffic class, high nibble */
		memset(pshdr + 1, 0xff, 3);		/* traffic class low nibble + flow label */
		pshdr[7] = 0xff;			/* hop limit */
	} else {
		pshdr[1] = 0xff;			/* TOS */
		pshdr[8] = 0xff;			/* TTL */
		pshdr[10] = pshdr[11] = 0xff;		/* header checksum */
	}
	pshdr[base + 6] = pshdr[base + 7] = 0xff;	/* UDP checksum */
	memcpy(pshdr + base + UDP_LEN, ip + bth_off, BTH_LEN);
	pshdr[base + UDP_LEN + 4] = 0xff;		/* FECN, BECN, reserved */

	/* The 8 bytes of ones stand for the masked LRH of native InfiniBand. */
	crc = crc_update(crc, lrh_ones, sizeof(lrh_ones));
	crc = crc_update(crc, pshdr, base + UDP_LEN + BTH_LEN);
	n = len - bth_off - BTH_LEN;
	crc = crc_update(crc, ip + bth_off + BTH_LEN, n);
	return ~crc;
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

int xhca_icrc_check_frame(const void *frame, size_t len)
{
	const uint8_t *f = frame, *ip;
	size_t off = ETH_HDR_LEN, l3len, l4;
	uint16_t type;
	uint32_t want, got;
	uint8_t proto;
	int ipv6, tags = 0;

	if (len < ETH_HDR_LEN)
		return -EINVAL;
	type = rd16(f + 12);
	while ((type == ETHTYPE_VLAN || type == ETHTYPE_QINQ) && tags < 2) {
		if (off + 4 > len)
			return -EINVAL;
		type = rd16(f + off + 2);
		off += 4;
		tags++;
	}
	if (type != ETHTYPE_IPV4 && type != ETHTYPE_IPV6)
		return -EINVAL;
	ipv6 = type == ETHTYPE_IPV6;
	ip = f + off;

	/* The IP length, not the frame length, ends the packet: short frames
	 * are padded to 60 bytes on the wire. */
	if (ipv6) {
		if (off + IPV6_BASE_LEN > len || (ip[0] >> 4) != 6)
			return -EINVAL;
		l3len = IPV6_BASE_LEN + (size_t)rd16(ip + 4);
		if (off + l3len > len)
			return -EINVAL;
		l4 = ipv6_l4_off(ip, l3len, &proto);
	} else {
		if (off + IPV4_BASE_LEN > len || (ip[0] >> 4) != 4 || (ip[0] & 0x0f) < 5)
			return -EINVAL;
		l3len = rd16(ip + 2);
		if (off + l3len > len)
			return -EINVAL;
		l4 = (size_t)(ip[0] & 0x0f) * 4;
		proto = ip[9];
	}
	if (proto != 17 || l4 + UDP_LEN + BTH_LEN + XHCA_ICRC_LEN > l3len ||
	    rd16(ip + l4 + 2) != XHCA_ROCE_UDP_PORT)
		return -EINVAL;

	want = xhca_icrc(ip, l3len - XHCA_ICRC_LEN, ipv6);
	got = (uint32_t)ip[l3len - 4] | (uint32_t)ip[l3len - 3] << 8 |
	      (uint32_t)ip[l3len - 2] << 16 | (uint32_t)ip[l3len - 1] << 24;
	return got == want ? 0 : -EBADMSG;
}
