/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The rest of rdma-core 44's export set: the string and rate helpers, and
 * the symbols a software HCA has no use for but a program may be linked to.
 * Applications and the provider libraries they link (perftest links libmlx5
 * and libefa, whose constructors register drivers through
 * verbs_register_driver_34) are linked with BIND_NOW: every symbol must be
 * there. A driver's registration is accepted and ignored; the kernel
 * command interface (ibv_cmd_*) and the 1.0 ABI fail with EOPNOTSUPP.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "xverbs.h"

XV_EXPORT const char *ibv_node_type_str(enum ibv_node_type t)
{
	static const char *const s[] = {
		[IBV_NODE_CA] = "InfiniBand channel adapter", [IBV_NODE_SWITCH] = "InfiniBand switch",
		[IBV_NODE_ROUTER] = "InfiniBand router", [IBV_NODE_RNIC] = "iWARP NIC",
		[IBV_NODE_USNIC] = "usNIC", [IBV_NODE_USNIC_UDP] = "usNIC UDP",
		[IBV_NODE_UNSPECIFIED] = "unspecified",
	};

	return t >= 0 && (size_t)t < sizeof(s) / sizeof(s[0]) && s[t] ? s[t] : "unknown";
}

XV_EXPORT const char *ibv_port_state_str(enum ibv_port_state st)
{
	static const char *const s[] = { "PORT_NOP", "PORT_DOWN", "PORT_INIT", "PORT_ARMED",
					 "PORT_ACTIVE", "PORT_ACTIVE_DEFER" };

	return st >= 0 && (size_t)st < sizeof(s) / sizeof(s[0]) ? s[st] : "unknown";
}

XV_EXPORT const char *ibv_event_type_str(enum ibv_event_type e)
{
	static const char *const s[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error", [IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
		[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
		[IBV_EVENT_COMM_EST] = "communication established",
		[IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated",
		[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[IBV_EVENT_PORT_ACTIVE] = "port active", [IBV_EVENT_PORT_ERR] = "port error",
		[IBV_EVENT_LID_CHANGE] = "LID change", [IBV_EVENT_PKEY_CHANGE] = "P_Key change",
		[IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[IBV_EVENT_GID_CHANGE] = "GID table change", [IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};

	return e >= 0 && (size_t)e < sizeof(s) / sizeof(s[0]) && s[e] ? s[e] : "unknown";
}

XV_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status st)
{
	static const char *const s[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};

	return st >= 0 && (size_t)st < sizeof(s) / sizeof(s[0]) && s[st] ? s[st] : "unknown";
}

/* ---- rates (IBA table 202 and the extended ones) --------------------------- */

static const struct {
	enum ibv_rate rate;
	int mult;
	int mbps;
} rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 }, { IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 }, { IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 }, { IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 }, { IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 }, { IBV_RATE_14_GBPS, 5, 14062 },
	{ IBV_RATE_56_GBPS, 22, 56250 }, { IBV_RATE_112_GBPS, 45, 112500 },
	{ IBV_RATE_168_GBPS, 67, 168750 }, { IBV_RATE_25_GBPS, 10, 25781 },
	{ IBV_RATE_100_GBPS, 40, 103125 }, { IBV_RATE_200_GBPS, 80, 206250 },
	{ IBV_RATE_300_GBPS, 120, 309375 }, { IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 }, { IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },
};

#define NRATES (sizeof(rates) / sizeof(rates[0]))

XV_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].rate == rate)
			return rates[i].mult;
	return -1;
}

XV_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].mult == mult)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

XV_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

XV_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/* ---- what a software HCA has no kernel side for ------------------------------ */

XV_EXPORT const char *ibv_get_sysfs_path(void)
{
	return "/sys";
}

XV_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	return -1;
}

XV_EXPORT int ibv_read_ibdev_sysfs_file(char *buf, size_t size, void *sysfs_dev,
					const char *fnfmt, ...)
{
	errno = ENOENT;
	return -1;
}

/* the kernel uverbs structures: nothing is ever copied from a kernel here */
XV_EXPORT void ibv_copy_qp_attr_from_kern(void *dst, void *src) {}
XV_EXPORT void ibv_copy_ah_attr_from_kern(void *dst, void *src) {}
XV_EXPORT void ibv_copy_path_rec_from_kern(void *dst, void *src) {}
XV_EXPORT void ibv_copy_path_rec_to_kern(void *dst, void *src) {}

XV_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	errno = EOPNOTSUPP;
	return NULL;
}

XV_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *ctx, uint32_t handle)
{
	errno = EOPNOTSUPP;
	return NULL;
}

XV_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t handle)
{
	errno = EOPNOTSUPP;
	return NULL;
}

XV_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *ctx, uint32_t handle)
{
	errno = EOPNOTSUPP;
	return NULL;
}

XV_EXPORT void ibv_unimport_pd(struct ibv_pd *pd) {}
XV_EXPORT void ibv_unimport_mr(struct ibv_mr *mr) {}
XV_EXPORT void ibv_unimport_dm(struct ibv_dm *dm) {}

XV_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return EOPNOTSUPP;
}

XV_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return EOPNOTSUPP;
}

/* ---- IBVERBS_PRIVATE_34: the providers' interface ----------------------------- */

/* A provider library's constructor registers its driver: accepted, never
 * matched (no kernel device here). */
XV_EXPORT void verbs_register_driver_34(const void *ops) {}
XV_EXPORT void verbs_set_ops(void *vctx, const void *ops) {}
XV_EXPORT void verbs_uninit_context(void *vctx) {}
XV_EXPORT void __verbs_log(void *ctx, uint32_t level, const char *fmt, ...) {}
XV_EXPORT bool verbs_allow_disassociate_destroy;

XV_EXPORT unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, void *link)
{
	return num_attrs;
}

static void *fail_null(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

static int fail_eopnotsupp(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

#define XV_UNSUPPORTED_PTR(name) XV_EXPORT void *name(void) __attribute__((alias("fail_null")));
#define XV_UNSUPPORTED_INT(name) XV_EXPORT int name(void) __attribute__((alias("fail_eopnotsupp")));

XV_UNSUPPORTED_PTR(_verbs_init_and_alloc_context)
XV_UNSUPPORTED_PTR(verbs_open_device)
XV_UNSUPPORTED_INT(verbs_init_cq)
XV_UNSUPPORTED_INT(execute_ioctl)

#define XV_CMDS(X) X(advise_mr) X(alloc_dm) X(alloc_mw) X(alloc_pd) X(attach_mcast) X(close_xrcd) \
	X(create_ah) X(create_counters) X(create_cq) X(create_cq_ex) X(create_flow)           \
	X(create_flow_action_esp) X(create_qp) X(create_qp_ex) X(create_qp_ex2)              \
	X(create_rwq_ind_table) X(create_srq) X(create_srq_ex) X(create_wq) X(dealloc_mw)    \
	X(dealloc_pd) X(dereg_mr) X(destroy_ah) X(destroy_counters) X(destroy_cq)            \
	X(destroy_flow) X(destroy_flow_action) X(destroy_qp) X(destroy_rwq_ind_table)        \
	X(destroy_srq) X(destroy_wq) X(detach_mcast) X(free_dm) X(get_context) X(modify_cq)  \
	X(modify_flow_action_esp) X(modify_qp) X(modify_qp_ex) X(modify_srq) X(modify_wq)    \
	X(open_qp) X(open_xrcd) X(poll_cq) X(post_recv) X(post_send) X(post_srq_recv)        \
	X(query_context) X(query_device_any) X(query_mr) X(query_port) X(query_qp)           \
	X(query_srq) X(read_counters) X(reg_dm_mr) X(reg_dmabuf_mr) X(reg_mr)                \
	X(req_notify_cq) X(rereg_mr) X(resize_cq)

#define XV_CMD_UNSUPPORTED(n) XV_UNSUPPORTED_INT(ibv_cmd_##n)
XV_CMDS(XV_CMD_UNSUPPORTED)

/* ---- the compat versions ----------------------------------------------------- */

/* ibv_*@IBVERBS_1.0: libibverbs 1.0's ABI, whose structures differ from
 * today's; programs linked to it fail cleanly. */
#define XV_COMPAT(name, ver, type, fn)                                             \
	XV_EXPORT type xv_compat_##name(void) __attribute__((alias(#fn)));         \
	__asm__(".symver xv_compat_" #name "," #name "@" ver);

#define XV_COMPAT_PTR(name) XV_COMPAT(name, "IBVERBS_1.0", void *, fail_null)
#define XV_COMPAT_INT(name) XV_COMPAT(name, "IBVERBS_1.0", int, fail_eopnotsupp)

XV_COMPAT_PTR(ibv_get_device_list)
XV_COMPAT_INT(ibv_free_device_list)
XV_COMPAT_PTR(ibv_get_device_name)
XV_COMPAT_INT(ibv_get_device_guid)
XV_COMPAT_PTR(ibv_open_device)
XV_COMPAT_INT(ibv_close_device)
XV_COMPAT_INT(ibv_get_async_event)
XV_COMPAT_INT(ibv_ack_async_event)
XV_COMPAT_INT(ibv_query_device)
XV_COMPAT_INT(ibv_query_port)
XV_COMPAT_INT(ibv_query_gid)
XV_COMPAT_INT(ibv_query_pkey)
XV_COMPAT_PTR(ibv_alloc_pd)
XV_COMPAT_INT(ibv_dealloc_pd)
XV_COMPAT_PTR(ibv_reg_mr)
XV_COMPAT_INT(ibv_dereg_mr)
XV_COMPAT_PTR(ibv_create_cq)
XV_COMPAT_INT(ibv_resize_cq)
XV_COMPAT_INT(ibv_destroy_cq)
XV_COMPAT_INT(ibv_get_cq_event)
XV_COMPAT_INT(ibv_ack_cq_events)
XV_COMPAT_PTR(ibv_create_srq)
XV_COMPAT_INT(ibv_modify_srq)
XV_COMPAT_INT(ibv_query_srq)
XV_COMPAT_INT(ibv_destroy_srq)
XV_COMPAT_PTR(ibv_create_qp)
XV_COMPAT_INT(ibv_query_qp)
XV_COMPAT_INT(ibv_modify_qp)
XV_COMPAT_INT(ibv_destroy_qp)
XV_COMPAT_PTR(ibv_create_ah)
XV_COMPAT_INT(ibv_destroy_ah)
XV_COMPAT_INT(ibv_attach_mcast)
XV_COMPAT_INT(ibv_detach_mcast)
XV_COMPAT(ibv_register_driver, "IBVERBS_1.1", int, fail_eopnotsupp)

