/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The connection manager's MADs on the wire: REQ, REP, RTU, REJ, MRA, DREQ,
 * DREP, SIDR_REQ and SIDR_REP built field by field in 256-byte MADs (the
 * data offsets of IBA 12.6 and 12.11), and rdma_cm's header in a REQ's
 * private data written and read. Pure encoding: nothing is sent, no table of
 * xhcad's is read (only the CM's GUID and next TID); cm.c, above it, sends
 * the messages and reads the ones received. cm_int.h holds what the two share.
 */
#include <string.h>
#include <xhca/cm.h>
#include <xhca/wire.h>
#include "cm_int.h"

static void mad_header(struct cm_state_all *cm, __u8 *m, enum cm_attr attr, __u64 tid)
{
	memset(m, 0, MAD_LEN);
	m[0] = 1;
	m[1] = CM_CLASS;
	m[2] = CM_CLASS_VERSION;
	m[3] = CM_SEND;
	put64(m + 8, tid ? tid : (cm->next_tid++ << 32));
	put16(m + 16, (__u16)attr);
}

/* ---- the messages ------------------------------------------------------------ */

/* rdma_cm's header in front of a REQ's private data: version 0, the IP
 * version in the high nibble, the active side's port, the two addresses
 * (IPv4: 12 zero bytes, then the address). */
static void cma_hdr_put(__u8 *p, const struct cm_conn_id *c)
{
	int v4 = xhca_ip_is_v4(c->local_ip);

	p[0] = 0;
	p[1] = (__u8)((v4 ? 4 : 6) << 4);
	put16(p + 2, c->local_port);
	memset(p + 4, 0, 32);
	memcpy(p + (v4 ? 16 : 4), v4 ? c->local_ip + 12 : c->local_ip, v4 ? 4 : 16);
	memcpy(p + (v4 ? 32 : 20), v4 ? c->remote_ip + 12 : c->remote_ip, v4 ? 4 : 16);
}

/* Its addresses back into 16-byte (v4-mapped) form: 0, or -1 for a header
 * that is not rdma_cm's. */
int cm_cma_hdr_get(const __u8 *p, __u8 src[16], __u8 dst[16], __u16 *port)
{
	int ver = p[1] >> 4;

	if (p[0] || (ver != 4 && ver != 6))
		return -1;
	*port = get16(p + 2);
	if (ver == 6) {
		memcpy(src, p + 4, 16);
		memcpy(dst, p + 20, 16);
		return 0;
	}
	memset(src, 0, 16);
	memset(dst, 0, 16);
	src[10] = src[11] = dst[10] = dst[11] = 0xff;
	memcpy(src + 12, p + 16, 4);
	memcpy(dst + 12, p + 32, 4);
	return 0;
}

/* REQ (data offsets of IBA 12.6.5; what Linux puts in them for RoCE). */
void cm_build_req(struct xhcad *d, struct cm_conn_id *c, const struct xhca_cm_conn *k)
{
	__u8 *m = c->mad, *q = m + MAD_DATA;
	__u8 len = k->pdata_len > 56 ? 56 : k->pdata_len;

	mad_header(d->cm, m, ATTR_REQ, 0);
	c->tid = get64(m + 8);
	put32(q + 0, c->local_cid);
	put64(q + 8, c->sid);
	put64(q + 16, d->cm->guid);
	put24(q + 32, c->local_qpn);
	q[35] = k->resp_res;
	q[39] = k->init_depth;
	q[43] = (__u8)(CM_RESP_TIMEOUT_REMOTE << 3 | (c->qp_type == XHCA_QPT_UC ? 1 : 0) << 1 |
		       (k->flow_control & 1));
	put24(q + 44, k->psn);
	q[47] = (__u8)(CM_RESP_TIMEOUT_LOCAL << 3 | (k->retry_count & 7));
	put16(q + 48, XHCA_PKEY_DEFAULT);
	q[50] = (__u8)((k->mtu ? k->mtu : 3) << 4 | (k->rnr_retry & 7));
	q[51] = (__u8)(CM_RETRIES << 4 | (k->srq & 1) << 3);
	put16(q + 52, 0xffff); /* permissive LIDs: RoCE, hop limit over 1 */
	put16(q + 54, 0xffff);
	memcpy(q + 56, c->local_ip, 16);
	memcpy(q + 72, c->remote_ip, 16);
	q[93] = 64; /* hop limit */
	q[95] = (CM_PKT_LIFE + 1) << 3; /* local ACK timeout */
	cma_hdr_put(q + 140, c);
	memcpy(q + 176, k->pdata, len);
}

void cm_build_rep(struct xhcad *d, struct cm_conn_id *c, const struct xhca_cm_conn *k)
{
	__u8 *m = c->mad, *q = m + MAD_DATA;

	mad_header(d->cm, m, ATTR_REP, c->tid);
	put32(q + 0, c->local_cid);
	put32(q + 4, c->remote_cid);
	put24(q + 12, c->local_qpn);
	put24(q + 20, k->psn);
	q[24] = k->resp_res;
	q[25] = k->init_depth;
	q[26] = (__u8)(CM_PKT_LIFE << 3 | (k->flow_control & 1)); /* target ACK delay */
	q[27] = (__u8)((k->rnr_retry & 7) << 5 | (k->srq & 1) << 4);
	put64(q + 28, d->cm->guid);
	memcpy(q + 36, k->pdata, k->pdata_len > 196 ? 196 : k->pdata_len);
}

/* A message that carries the two comm IDs only, and maybe more after. */
void cm_build_ids(struct xhcad *d, const struct cm_conn_id *c, __u8 *m, enum cm_attr attr,
		  __u64 tid)
{
	mad_header(d->cm, m, attr, tid);
	put32(m + MAD_DATA, c->local_cid);
	put32(m + MAD_DATA + 4, c->remote_cid);
}

/* REJ: reason, which message, private data. */
void cm_build_rej(struct xhcad *d, const struct cm_conn_id *c, __u8 *m, __u16 reason, int msg,
		  const __u8 *pdata, __u8 len)
{
	cm_build_ids(d, c, m, ATTR_REJ, c->tid);
	m[MAD_DATA + 8] = (__u8)(msg << 6);
	put16(m + MAD_DATA + 10, reason);
	if (pdata)
		memcpy(m + MAD_DATA + 84, pdata, len > 148 ? 148 : len);
	if (reason == REJ_TIMEOUT) {
		m[MAD_DATA + 9] = 8 << 1;
		put64(m + MAD_DATA + 12, d->cm->guid);
	}
}

/* MRA: the ids, which message (0 a REQ, 1 a REP) waits longer, and how
 * long (CM_MRA_TIMEOUT). */
void cm_build_mra(struct xhcad *d, const struct cm_conn_id *c, __u8 *m, int msg)
{
	cm_build_ids(d, c, m, ATTR_MRA, c->tid);
	m[MAD_DATA + 8] = (__u8)(msg << 6);
	m[MAD_DATA + 9] = CM_MRA_TIMEOUT << 3;
}

/* DREQ: the ids and the peer's QPN, a new TID. */
void cm_build_dreq(struct xhcad *d, const struct cm_conn_id *c, __u8 *m)
{
	cm_build_ids(d, c, m, ATTR_DREQ, 0);
	put24(m + MAD_DATA + 8, c->remote_qpn);
}

/* SIDR_REQ (IBA 12.11.1): the request ID is our comm ID; rdma_cm's header
 * and 180 bytes of private data. */
void cm_build_sidr_req(struct xhcad *d, struct cm_conn_id *c, const struct xhca_cm_conn *k)
{
	__u8 *m = c->mad, *q = m + MAD_DATA;

	mad_header(d->cm, m, ATTR_SIDR_REQ, 0);
	c->tid = get64(m + 8);
	put32(q + 0, c->local_cid);
	put16(q + 4, XHCA_PKEY_DEFAULT);
	put64(q + 8, c->sid);
	cma_hdr_put(q + 16, c);
	memcpy(q + 52, k->pdata, k->pdata_len > 180 ? 180 : k->pdata_len);
}

/* SIDR_REP (IBA 12.11.2) into m: the request's ID and TID echoed, status;
 * accepted, the UD QP and its Q_Key; 136 bytes of private data. */
void cm_build_sidr_rep(struct xhcad *d, const struct cm_conn_id *c, __u8 *m, __u8 status,
		       __u32 qpn, __u32 qkey, const __u8 *pdata, __u8 len)
{
	__u8 *q = m + MAD_DATA;

	mad_header(d->cm, m, ATTR_SIDR_REP, c->tid);
	put32(q + 0, c->remote_cid);
	q[4] = status;
	put24(q + 8, qpn);
	put64(q + 12, c->sid);
	put32(q + 20, qkey);
	if (pdata)
		memcpy(q + 96, pdata, len > 136 ? 136 : len);
}
