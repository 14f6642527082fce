/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The xhca CLI's insides: what its object files (one per object: status.c,
 * qp.c, stats.c, flowq.c, mr.c, mcast.c, cq.c, filter.c, proxy.c, exec.c)
 * share from common.c: messages, argument parsing, the request to xhcad,
 * the JSON writer and the table printer. main.c dispatches.
 */
#ifndef XHCA_TOOLS_CLI_H
#define XHCA_TOOLS_CLI_H

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <net/if.h>
#include <xhca/abi.h>
#include <xhca/ctl.h>
#include <xhca/pkt.h>
#include "log.h"

#define FIELD_SIZE(type, field) sizeof(((type *)0)->field)
#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2
/* How long to wait for xhcad: it serves one request at a time and none takes
 * long, so silence this long means it is stuck. */
#define CTL_TIMEOUT_S 10

/* -j, -v, -i: set by main.c */
extern int json;
extern int verbose;
extern const char *ifname;

#define XHCA_REASON_STR(name, str, desc) str,
#define XHCA_REASON_DESC(name, str, desc) desc,
#define XHCA_HOST_STR(name, str, desc) str,
#define XHCA_HOST_DESC(name, str, desc) desc,
#define JW_MAX_DEPTH 8
#define TBL_MAX_COLS 32
#define TBL_CELL 96 /* the longest cell: a reason's description */

struct name_val {
	const char *name;
	unsigned int val;
};

struct tbl_col {
	const char *hdr;
	int right; /* numbers are right-aligned */
};

struct opt_def {
	const char *name; /* long name, without "--" */
	int has_arg;
	int id;
};

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);	/* leaf */
	const struct cmd *sub;			/* group */
	const char *usage;
};

/* The ids of every command's options (struct opt_def). */
enum {
	O_TYPE = 1, O_QPN, O_PKEY, O_QKEY, O_STATE, O_EPSN, O_REMOTE_IP, O_LOCAL_IP, O_MTU,
	O_ACTION, O_DEST_QPN, O_QP, O_RESET, O_FLOWQ, O_WEIGHT, O_LEN, O_ACCESS, O_SCATTER,
	O_CONTIG, O_IOVA, O_OFFSET, O_OUT, O_BLOCK_LB, O_DEV, O_PROXY, O_ACK_EVERY, O_RNR_TIMER,
	O_SQ_PSN, O_TIMEOUT, O_RETRY_CNT, O_RNR_RETRY, O_MAX_RD_ATOMIC,
	/* filter add */
	O_F_OP, O_F_BELOW, O_F_ABOVE, O_F_SINGLE, O_F_RKEY, O_F_VA, O_F_SQPN, O_F_MATCH, O_F_INVERT,
	O_F_HANDLER,
	/* cq, and qp create --cq */
	O_CQ, O_RQ_DEPTH, O_BUF_SIZE, O_DEPTH, O_MAX, O_DUMP,
};

/* Fills the cells of one row. */
typedef void (*tbl_row_fn)(const void *ctx, int row, char cell[][TBL_CELL]);

extern const struct name_val qp_types[];
extern const struct name_val qp_states[];
extern const struct name_val qp_actions[];
extern const struct name_val mtus[];
extern const char *const reason_names[XHCA_R_MAX];
extern const char *const reason_descs[XHCA_R_MAX];
extern const char *const host_names[XHCA_H_MAX];
extern const char *const host_descs[XHCA_H_MAX];

int usage_err(const char *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void print_daemon_err(char *msg);
int name_lookup(const struct name_val *t, const char *s, unsigned int *val);
const char *name_of(const struct name_val *t, unsigned int val);
unsigned int mtu_bytes(unsigned int shift);
int ip_is_set(const __u8 ip[16]);
int parse_num(const char *s, unsigned long long max, unsigned long long *out);
int num_arg(const char *op, const char *opt, const char *what, const char *s,
		   unsigned int bits, const char *hint, unsigned long long *out);
int qpn_arg(const char *op, const char *opt, const char *s, __u32 *qpn);
void jw_str_raw(const char *s);
void jw_key(const char *k);
void jw_open(const char *k, char c);
void jw_close(char c);
void jw_u64(const char *k, unsigned long long v);
void jw_bool(const char *k, int v);
void jw_str(const char *k, const char *s);
void cell(char *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tbl_print(const struct tbl_col *cols, int ncols, int nrows, tbl_row_fn fill,
		      const void *ctx);
int need_ifname(const char *op);
int request(const char *op, __u32 code, const void *req, __u32 req_len, void **resp,
		   __u32 *resp_len);
int short_reply(const char *op, __u32 got, size_t want);
int array_request(const char *op, __u32 code, size_t esize, void **out, __u32 *n);
void array_print(const char *key, const void *v, __u32 n, size_t esize,
			void (*jfn)(const void *), const struct tbl_col *cols, int ncols,
			tbl_row_fn row);
int proxy_arg(const char *op, const char *arg, __u8 *flags);
int parse_args(const char *op, int argc, char **argv, const struct opt_def *defs,
		      int (*on_opt)(void *ctx, int id, const char *name, const char *arg),
		      void *ctx, char **pos, int max_pos, int *npos);
int no_opts(void *ctx, int id, const char *name, const char *arg);
void field_str(char *dst, size_t dlen, const char *src, size_t slen);

/* out.c: the output layer: one call writes a value as text or JSON (key
 * NULL: text only; fmt NULL: JSON only); an object is a JSON object, or a
 * text line between its open and close texts. */
void out_u64(const char *key, const char *fmt, unsigned long long v);
void out_str(const char *key, const char *fmt, const char *v);
void out_bool(const char *key, const char *fmt, int v);	/* text: "yes"/"no" for %s */
void out_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void out_open(const char *key, const char *text);
void out_close(const char *text);

/* The objects: their commands and usage texts. */
extern const struct cmd qp_cmds[];
extern const struct cmd flowq_cmds[];
extern const struct cmd mr_cmds[];
extern const struct cmd mcast_cmds[];
extern const struct cmd cq_cmds[];
extern const struct cmd filter_cmds[];
extern const struct cmd proxy_cmds[];
extern const char status_usage[];
extern const char qp_usage[];
extern const char stats_usage[];
extern const char flowq_usage[];
extern const char mr_usage[];
extern const char mcast_usage[];
extern const char cq_usage[];
extern const char filter_usage[];
extern const char proxy_usage[];
extern const char exec_usage[];
int do_status(int argc, char **argv);
int do_stats(int argc, char **argv);
int do_exec(int argc, char **argv);

#endif /* XHCA_CLI_H */
