/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-gen: the options' values, parsed and checked one by one: numbers,
 * MACs, VLAN tags, sizes, the AETH, the payload and opcode names.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "gen.h"

/* A setter whose check said why it refused (bad_usage) returns 1, so that
 * xhca_opt_parse adds no second line. */
int said(int err)
{
	return err ? 1 : 0;
}

/* The number parsers keep their own messages (tests/integ/gen.sh checks
 * them); x names the option. */
int parse_u64(const struct xhca_opt *x, const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (!*s || *end || errno || *s == '-')
		return bad_usage("--%s '%s' is not a number; give a decimal or 0x hex value\n",
				 x->name, s);
	if (v > max)
		return bad_usage("--%s %s is out of range; give 0..%#" PRIx64 "\n", x->name, s, max);
	*out = v;
	return 0;
}

int parse_u32(const struct xhca_opt *x, const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v;
	int err;

	err = parse_u64(x, s, max, &v);
	if (!err)
		*out = (uint32_t)v;
	return err;
}

int parse_pos_double(const struct xhca_opt *x, const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !(v > 0) || v > 1e12)
		return bad_usage("--%s '%s' is not a positive number; give e.g. 1.5\n", x->name, s);
	*out = v;
	return 0;
}

int parse_mac(const struct xhca_opt *x, const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6)
		return bad_usage("--%s '%s' is not a MAC address; give e.g. 02:77:00:00:00:01\n",
				 x->name, s);
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

int parse_vlans(const struct xhca_opt *x, const char *s, struct xhca_pkt_spec *spec)
{
	char buf[64], *save = NULL, *tok;
	uint32_t id;
	int n = 0, err;

	if (strlen(s) >= sizeof(buf))
		return bad_usage("--vlan '%s' is too long; give ID or ID,ID\n", s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == 2)
			return bad_usage("--vlan '%s' has more than two tags; give ID or ID,ID\n", s);
		err = parse_u32(x, tok, 4095, &id);
		if (err)
			return err;
		spec->vlan_tci[n++] = (uint16_t)id;
	}
	if (!n)
		return bad_usage("--vlan '%s' has no VLAN ID; give ID or ID,ID\n", s);
	spec->nvlan = n;
	return 0;
}

int parse_sizes(const struct xhca_opt *x, const char *s, struct gen_opts *o)
{
	char buf[256], *save = NULL, *tok;
	int err;

	if (strlen(s) >= sizeof(buf))
		return bad_usage("--size '%s' is too long; give at most %d sizes\n", s, MAX_SIZES);
	strcpy(buf, s);
	o->nsizes = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == MAX_SIZES)
			return bad_usage("--size '%s' has more than %d sizes\n", s, MAX_SIZES);
		err = parse_u32(x, tok, XHCA_PKT_MAX, &o->sizes[o->nsizes]);
		if (err)
			return err;
		o->nsizes++;
	}
	if (!o->nsizes)
		return bad_usage("--size '%s' has no size; give e.g. 64 or 64,1024\n", s);
	return 0;
}

/* --aeth SYN[:MSN] */
int parse_aeth(const struct xhca_opt *x, const char *s, struct xhca_pkt_spec *spec)
{
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	char syn[16];
	uint32_t v;
	int err;

	snprintf(syn, sizeof(syn), "%.*s", (int)(n < sizeof(syn) ? n : sizeof(syn) - 1), s);
	err = parse_u32(x, syn, 0xff, &v);
	if (err)
		return err;
	spec->aeth_syndrome = (uint8_t)v;
	return colon ? parse_u32(x, colon + 1, 0xffffff, &spec->aeth_msn) : 0;
}

/* --payload text:STRING, or bytes in hex: the payload and its size. */
int parse_payload(const char *s, struct gen_opts *o)
{
	const char *h = !strncmp(s, "0x", 2) ? s + 2 : s;
	size_t n = 0;

	if (!strncmp(s, "text:", 5)) {
		n = strlen(s + 5);
		if (n > 4096)
			return bad_usage("--payload: at most 4096 bytes\n");
		memcpy(o->payload, s + 5, n);
	} else {
		if (!*h || strlen(h) % 2 || strlen(h) / 2 > 4096 ||
		    strspn(h, "0123456789abcdefABCDEF") != strlen(h))
			return bad_usage("--payload '%s': give text:STRING or bytes in hex "
					 "(up to 4096)\n", s);
		for (; *h; h += 2, n++) {
			char b[3] = { h[0], h[1], 0 };

			o->payload[n] = (uint8_t)strtoul(b, NULL, 16);
		}
	}
	o->have_payload = 1;
	o->sizes[0] = (uint32_t)n;
	o->nsizes = 1;
	return 0;
}

/* Opcode names as the verbs and the spec spell them ("rc-rdma-write-only",
 * "rc-read-request", "ud-send-only-with-immediate") are accepted beside the
 * builder's short ones ("rc-write-only", "rc-read-req"): scripts use both. */
int opcode_parse(const char *arg, uint8_t *opcode)
{
	static const char *const words[][2] = {
		{ "rdma-", "" }, { "rdma_", "" }, { "request", "req" }, { "response", "resp" },
		{ "immediate", "imm" }, { "invalidate", "inv" }, { "with-", "" }, { "with_", "" },
	};
	char buf[64], tmp[64], *p;

	if (!xhca_opcode_parse(arg, opcode))
		return 0;
	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	for (size_t i = 0; i <= strlen(arg); i++)
		buf[i] = (char)tolower((unsigned char)arg[i]);
	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
		while ((p = strstr(buf, words[w][0]))) {
			snprintf(tmp, sizeof(tmp), "%.*s%s%s", (int)(p - buf), buf, words[w][1],
				 p + strlen(words[w][0]));
			strcpy(buf, tmp);
		}
	}
	return xhca_opcode_parse(buf, opcode);
}
