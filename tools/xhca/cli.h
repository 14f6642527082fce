/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The xhca CLI's insides: what its object files (one per object: status.c,
 * qp.c, stats.c, flowq.c, mr.c, mcast.c, cq.c, filter.c, proxy.c, exec.c)
 * share from common.c: messages, argument parsing, the request to xhcad
 * and the table printer; from help.c: the usage texts, made from the
 * command and option tables. main.c dispatches. JSON is written by
 * libxhca's writer (xhca/json.h), which the tools share.
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
#include <xhca/json.h>
#include <xhca/pkt.h>
#include "log.h"
#include "opt.h"

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

struct call;

/* A command's handler: argv holds the words after its name. Returns an exit
 * code. */
typedef int (*cmd_fn)(const struct call *call, int argc, char **argv);

/* One command, or an object and its commands (sub), as the dispatcher walks
 * them; the usage texts are made from these fields (help.c), so no usage
 * string is kept apart from what it describes. */
struct cmd {
	const char *name;
	const char *alias;		/* another name it answers to ("list"), or NULL */
	cmd_fn fn;			/* a command; NULL for an object */
	const struct cmd *sub;		/* an object's commands: the first is its default */
	const char *args;		/* its positional words ("RKEY", "[QPN]"), or NULL */
	const char *summary;		/* one line, for the list of its object's commands */
	const char *text;		/* what it does and prints, lines joined by \n; NULL:
					 * its usage shows the summary */
	const struct xhca_opt *opts;	/* its options (OPT() below), or NULL */
	unsigned int flags;		/* CMD_* */
};

/* The first word that is not an option ends the options, and every word from
 * it on is positional: exec's are the program's, and before a command they
 * are the command's. */
#define CMD_OPTS_FIRST (1u << 0)
/* Runs without -i (exec: -i only narrows it): the usage shows it in brackets. */
#define CMD_ANY_IF (1u << 1)
/* Not run without a command (the top level): no default. */
#define CMD_NO_DEFAULT (1u << 2)

/* A command as the dispatcher found it. */
struct call {
	const char *op;			/* "mr reg": the words that name it, for messages */
	const struct cmd *cmd;		/* its entry: the options parse_args walks */
};

/* What a command's options tell it: id is the O_* id the option's entry
 * names (a global option's: its letter), name its long name, arg its value
 * (NULL: it takes none). Returns 0 or an exit code (parsing stops). */
typedef int (*opt_fn)(void *ctx, int id, const char *name, const char *arg);

/* A command's option: its O_* id, long name, argument's name (NULL: none)
 * and help (lines joined by \n); then, optionally, .flags =
 * XHCA_OPT_REQUIRED. The key is XHCA_OPT_KEY(id): opt.h keeps the keys below
 * 0x100 for short options, which only the global options have. */
#define OPT(id, n, a, h, ...) \
	{ .name = (n), .key = XHCA_OPT_KEY(id), .arg = (a), .help = (h), __VA_ARGS__ }

/* The ids of every command's options (OPT()'s id: what its callback gets). */
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
	/* exec */
	O_NO_VIEW,
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
extern const struct xhca_opt global_opts[];
int global_opt(void *ctx, int id, const char *name, const char *arg);
int parse_args(const struct call *call, int argc, char **argv, opt_fn on_opt, void *ctx,
	       char **pos, int max_pos, int *npos);
int parse_word(const struct call *call, int argc, char **argv, char **word);
int parse_qpn(const struct call *call, int argc, char **argv, int need, __u32 *qpn);
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

/* help.c: the usage texts, made from the tables. */
void cmd_help(FILE *f, const char *path, const struct cmd *c);
int cmd_names(const struct cmd *cmds, char *buf, size_t len);
const struct cmd *cmd_find(const struct cmd *cmds, const char *name);

/* The objects (their commands, and what their usage says besides) and the
 * commands of the top level, for main.c's table. */
extern const struct cmd qp_cmds[];
extern const struct cmd flowq_cmds[];
extern const struct cmd mr_cmds[];
extern const struct cmd mcast_cmds[];
extern const struct cmd cq_cmds[];
extern const struct cmd filter_cmds[];
extern const struct cmd proxy_cmds[];
extern const char qp_text[];
extern const char flowq_text[];
extern const char mr_text[];
extern const char mcast_text[];
extern const char cq_text[];
extern const char filter_text[];
extern const char proxy_text[];
extern const char status_text[];
extern const char stats_text[];
extern const char exec_text[];
extern const struct xhca_opt stats_opts[];
extern const struct xhca_opt exec_opts[];
int do_status(const struct call *call, int argc, char **argv);
int do_stats(const struct call *call, int argc, char **argv);
int do_exec(const struct call *call, int argc, char **argv);

#endif /* XHCA_CLI_H */
