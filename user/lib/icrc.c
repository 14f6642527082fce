/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 Invariant CRC, computed the way the Linux soft-RoCE driver (RXE,
 * rxe_icrc.c) does it, so that frames we build are accepted by RXE and frames
 * RXE sends verify here.
 */
#include <errno.h>
#include <pthread.h>
#if defined(__x86_64__)
#include <cpuid.h>
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
#define LRH_ONES 8
/* A payload up to this long is copied behind the pseudo header and the CRC
 * runs over both at once: the 48 to 68 bytes before it alone are too short
 * for the carry-less multiplication (a 64-byte SEND: one run of 112 bytes
 * instead of 48 sliced by 8 and 64) */
#define ICRC_JOIN_MAX 192

/* Slicing by 8: table t[k][b] is the CRC of byte b followed by k zero
 * bytes, so eight bytes are folded per step (xhcad checks the ICRC of every
 * frame it takes: this keeps that near 1 byte per cycle, not 1 per 3). */
static uint32_t crc_tbl[8][256];
static int crc_have;		/* the fastest XHCA_CRC_* this CPU runs */
static int crc_impl;		/* the one in use (xhca_crc32_impl) */
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__)
/* Whether 512-bit instructions cost this CPU no more than 256-bit ones:
 * not Intel's first with VPCLMULQDQ (Ice Lake, Tiger Lake), which lower
 * their clock for them; the kernel's x86 crypto code leaves them out too
 * (its zmm_exclusion_list). */
static int zmm_cheap(void)
{
	static const unsigned int slow[] = { 0x6a, 0x6c, 0x7d, 0x7e, 0x9d, 0x8c, 0x8d };
	unsigned int a, b, c, d, family, model;

	if (!__get_cpuid(0, &a, &b, &c, &d) || b != 0x756e6547) /* "Genu" */
		return 1;
	__get_cpuid(1, &a, &b, &c, &d);
	family = (a >> 8) & 0xf;
	model = ((a >> 4) & 0xf) | ((a >> 12) & 0xf0);
	for (size_t i = 0; family == 6 && i < sizeof(slow) / sizeof(slow[0]); i++)
		if (model == slow[i])
			return 0;
	return 1;
}
#endif

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
	crc_have = XHCA_CRC_SLICE8;
#if defined(__x86_64__)
	/* (libgcc's checks of AVX and AVX-512 include the kernel's saving
	 * of their registers) */
	if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1")) {
		crc_have = XHCA_CRC_CLMUL128;
		if (__builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("avx2")) {
			crc_have = XHCA_CRC_CLMUL256;
			if (__builtin_cpu_supports("avx512f") && zmm_cheap())
				crc_have = XHCA_CRC_CLMUL512;
		}
	}
#endif
	crc_impl = crc_have;
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
 * The same register update by carry-less multiplication (PCLMULQDQ), as in
 * Intel's "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ":
 * 128-bit lanes of the message are folded forward (each lane's two halves
 * multiplied by x^(D+32) and x^(D-32) modulo the reflected polynomial, for
 * a distance of D bits, and added to the lane D bits on), then into one,
 * which is reduced to 32 bits (Barrett: P', mu). The wider instructions
 * (VPCLMULQDQ) fold 2 or 4 lanes at once, 8 or 16 lanes a step; each ends
 * in crc_fold4's four lanes. The constants (x^n mod P, bit-reflected,
 * shifted left by one), by distance: 128 (n 160, 96), 512 (544, 480), 1024
 * (1056, 992), 2048 (2080, 2016); then x^64 and the Barrett pair.
 * Measured on this project's VM (AMD EPYC, a loop over one buffer), a
 * 4 KiB frame: 390-570 ns by 128 bits, 143-150 by 256, 78-114 by 512
 * (make bench: xhca-bench crc). 512 bits where they cost no more
 * (zmm_cheap), else 256.
 */
#define K128 0x0ccaa009ell, 0x1751997d0ll
#define K512 0x1c6e41596ll, 0x154442bd4ll
#define K1024 0x14a7fe880ll, 0x1e88ef372ll
#define K2048 0x1322d1430ll, 0x11542778all
#define LD(q) _mm_loadu_si128((const __m128i *)(q))
/* lane x folded over k's distance into the next data d */
#define FOLD(x, k, d) _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), \
						    _mm_clmulepi64_si128(x, k, 0x11)), d)

/* Four lanes a, b, c, e (64 bytes) folded on over the rest of the message
 * (p, n), into one, then reduced: the register. */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc_fold4(__m128i a, __m128i b, __m128i c, __m128i e, const uint8_t *p, size_t n)
{
	const __m128i k512 = _mm_set_epi64x(K512), k128 = _mm_set_epi64x(K128);
	const __m128i k64 = _mm_set_epi64x(0, 0x163cd6124ll);
	const __m128i pmu = _mm_set_epi64x(0x1f7011641ll, 0x1db710641ll);
	const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i t;

	for (; n >= 64; n -= 64, p += 64) {
		a = FOLD(a, k512, LD(p));
		b = FOLD(b, k512, LD(p + 16));
		c = FOLD(c, k512, LD(p + 32));
		e = FOLD(e, k512, LD(p + 48));
	}
	a = FOLD(FOLD(FOLD(a, k128, b), k128, c), k128, e);
	for (; n >= 16; n -= 16, p += 16)
		a = FOLD(a, k128, LD(p));
	/* 128 bits to 64, 64 to 32, then Barrett's reduction */
	a = _mm_xor_si128(_mm_clmulepi64_si128(a, k128, 0x10), _mm_srli_si128(a, 8));
	a = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(a, low32), k64, 0x00),
			  _mm_srli_si128(a, 4));
	t = a;
	a = _mm_clmulepi64_si128(_mm_and_si128(a, low32), pmu, 0x10);
	a = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(a, low32), pmu, 0x00), t);
	return crc_slice8((uint32_t)_mm_extract_epi32(a, 1), p, n);
}

/* n >= 64 */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc_clmul128(uint32_t crc, const uint8_t *p, size_t n)
{
	return crc_fold4(_mm_xor_si128(LD(p), _mm_cvtsi32_si128((int)crc)), LD(p + 16),
			 LD(p + 32), LD(p + 48), p + 64, n - 64);
}

/* n >= 128: 4 registers of 2 lanes, 128 bytes a step */
__attribute__((target("avx2,vpclmulqdq,pclmul,sse4.1")))
static uint32_t crc_clmul256(uint32_t crc, const uint8_t *p, size_t n)
{
	const __m256i k1024 = _mm256_set_epi64x(K1024, K1024);
	const __m256i k512 = _mm256_set_epi64x(K512, K512);
	__m256i y0, y1, y2, y3;
	__m128i a, b, c, e;

#define LDY(q) _mm256_loadu_si256((const __m256i *)(q))
#define FOLDY(x, k, d) _mm256_xor_si256(_mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00), \
							 _mm256_clmulepi64_epi128(x, k, 0x11)), d)
	y0 = _mm256_xor_si256(LDY(p), _mm256_castsi128_si256(_mm_cvtsi32_si128((int)crc)));
	y1 = LDY(p + 32);
	y2 = LDY(p + 64);
	y3 = LDY(p + 96);
	for (p += 128, n -= 128; n >= 128; n -= 128, p += 128) {
		y0 = FOLDY(y0, k1024, LDY(p));
		y1 = FOLDY(y1, k1024, LDY(p + 32));
		y2 = FOLDY(y2, k1024, LDY(p + 64));
		y3 = FOLDY(y3, k1024, LDY(p + 96));
	}
	/* the first 64 bytes over the last 64 */
	y2 = FOLDY(y0, k512, y2);
	y3 = FOLDY(y1, k512, y3);
#undef FOLDY
#undef LDY
	a = _mm256_castsi256_si128(y2);
	b = _mm256_extracti128_si256(y2, 1);
	c = _mm256_castsi256_si128(y3);
	e = _mm256_extracti128_si256(y3, 1);
	/* the upper halves cleared for crc_fold4's SSE (not VEX encoded),
	 * which Intel makes pay after them: GCC makes this call a jump and
	 * puts no vzeroupper before it itself (integ/build checks it) */
	_mm256_zeroupper();
	return crc_fold4(a, b, c, e, p, n);
}

/* n >= 256: 4 registers of 4 lanes, 256 bytes a step */
__attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1")))
static uint32_t crc_clmul512(uint32_t crc, const uint8_t *p, size_t n)
{
	const __m512i k2048 = _mm512_set4_epi64(K2048, K2048);
	const __m512i k512 = _mm512_set4_epi64(K512, K512);
	__m512i z0, z1, z2, z3;
	__m128i a, b, c, e;

#define LDZ(q) _mm512_loadu_si512((const void *)(q))
	/* (0x96: the three-way XOR) */
#define FOLDZ(x, k, d) _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), \
						 _mm512_clmulepi64_epi128(x, k, 0x11), d, 0x96)
	z0 = _mm512_xor_si512(LDZ(p), _mm512_castsi128_si512(_mm_cvtsi32_si128((int)crc)));
	z1 = LDZ(p + 64);
	z2 = LDZ(p + 128);
	z3 = LDZ(p + 192);
	for (p += 256, n -= 256; n >= 256; n -= 256, p += 256) {
		z0 = FOLDZ(z0, k2048, LDZ(p));
		z1 = FOLDZ(z1, k2048, LDZ(p + 64));
		z2 = FOLDZ(z2, k2048, LDZ(p + 128));
		z3 = FOLDZ(z3, k2048, LDZ(p + 192));
	}
	/* each 64 bytes over the next */
	z0 = FOLDZ(FOLDZ(FOLDZ(z0, k512, z1), k512, z2), k512, z3);
#undef FOLDZ
#undef LDZ
	a = _mm512_extracti32x4_epi32(z0, 0);
	b = _mm512_extracti32x4_epi32(z0, 1);
	c = _mm512_extracti32x4_epi32(z0, 2);
	e = _mm512_extracti32x4_epi32(z0, 3);
	_mm256_zeroupper(); /* (as in crc_clmul256) */
	return crc_fold4(a, b, c, e, p, n);
}
#undef FOLD
#undef LD
#endif

/* Raw register update: by the widest carry-less multiplication in use that
 * the run is long enough for (it pays for the reduction), else sliced by 8. */
static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
#if defined(__x86_64__)
	int impl = __atomic_load_n(&crc_impl, __ATOMIC_RELAXED);

	if (impl >= XHCA_CRC_CLMUL512 && n >= 256)
		return crc_clmul512(crc, p, n);
	if (impl >= XHCA_CRC_CLMUL256 && n >= 128)
		return crc_clmul256(crc, p, n);
	if (impl >= XHCA_CRC_CLMUL128 && n >= 64)
		return crc_clmul128(crc, p, n);
#endif
	return crc_slice8(crc, p, n);
}

int xhca_crc32_impl(int impl)
{
	pthread_once(&crc_once, crc_tbl_init);
	if (impl >= 0)
		__atomic_store_n(&crc_impl, impl < crc_have ? impl : crc_have, __ATOMIC_RELAXED);
	else if (impl == -1)
		__atomic_store_n(&crc_impl, crc_have, __ATOMIC_RELAXED);
	return __atomic_load_n(&crc_impl, __ATOMIC_RELAXED);
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
	size_t base = ipv6 ? IPV6_BASE_LEN : IPV4_BASE_LEN, hl = LRH_ONES + base + UDP_LEN + BTH_LEN;
	/* the LRH's ones, the pseudo header, then a short payload after them */
	uint8_t buf[LRH_ONES + IPV6_BASE_LEN + UDP_LEN + BTH_LEN + ICRC_JOIN_MAX];
	uint8_t *pshdr = buf + LRH_ONES;
	size_t bth_off, n;
	uint32_t crc;
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
	memset(buf, 0xff, LRH_ONES);
	n = len - bth_off - BTH_LEN;
	if (n <= ICRC_JOIN_MAX) {
		memcpy(buf + hl, ip + bth_off + BTH_LEN, n);
		return ~crc_update(0xffffffffu, buf, hl + n);
	}
	crc = crc_update(0xffffffffu, buf, hl);
	return ~crc_update(crc, ip + bth_off + BTH_LEN, n);
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
