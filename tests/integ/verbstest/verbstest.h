/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-verbstest's files (main.c says what the program does): what they
 * share. common.c: the device, QPs brought up, posting, completions, the
 * side channel to the other side; local.c: the local checks of memory,
 * bad arguments and state rules; loopback.c: those between QPs of this
 * device, and nopeer; mw.c: memory windows; view.c: the device view;
 * server.c, client.c: the two sides; main.c: the cases' table and the
 * command line.
 */
#ifndef XHCA_TESTS_INTEG_VERBSTEST_H
#define XHCA_TESTS_INTEG_VERBSTEST_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define PORT 18600
#define GIDX 1 /* the IPv4 GID */

#define CHECK_SHARED
#include "../check.h"

/* What a side tells the other of one QP. */
struct peer {
	uint32_t qpn, psn, rkey, len;
	uint64_t addr;
	union ibv_gid gid;
	char cmd[32];
	int32_t arg;
};

/* common.c */
void die(const char *what);
extern struct ibv_context *ctx;
extern struct ibv_pd *pd;
extern struct ibv_cq *cq;
void open_dev(void);
struct ibv_qp *new_qp(enum ibv_qp_type type, struct ibv_pd *p, struct ibv_cq *c);
extern int qp_access;
int to_init(struct ibv_qp *qp);
int to_rts(struct ibv_qp *qp, const struct peer *r, uint8_t timeout, uint8_t retry,
	   uint8_t rnr_retry);
void me(struct ibv_qp *qp, struct peer *p);
struct ibv_wc wait_wc(struct ibv_cq *c, int ms);
int post(struct ibv_qp *qp, enum ibv_wr_opcode op, void *buf, uint32_t len,
	 uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t wr_id);
int post_recv(struct ibv_qp *qp, void *buf, uint32_t len, uint32_t lkey, uint64_t id);
enum ibv_qp_state qp_state(struct ibv_qp *qp);
void fill(uint8_t *p, size_t n, uint8_t seed);
int same(const uint8_t *p, size_t n, uint8_t seed);
extern int sock;
void say(const struct peer *p);
void hear(struct peer *p);
extern const union ibv_gid mgid;
struct ibv_qp *ud_qp(struct ibv_cq *c, uint32_t qkey);
void loop_pair(struct ibv_pd *p, struct ibv_cq *c, struct ibv_qp **a, struct ibv_qp **b);
enum ibv_wc_status write_lo(struct ibv_qp *qp, struct ibv_cq *c, struct ibv_mr *src,
			    uint64_t addr, uint32_t rkey, uint8_t v);
struct ibv_wc post_wait(struct ibv_qp *qp, struct ibv_cq *c, struct ibv_send_wr *w);
void unpair(struct ibv_qp *a, struct ibv_qp *b);

/* local.c */
void local_memory(void);
void local_mr_errors(void);
void local_qp_errors(void);
void local_channel(void);
void local_cq_ex(void);
void local_cq_ts(void);
void local_threads(void);
void local_gids_srq(void);
void local_fork(void);

/* loopback.c */
void local_mcast_loopback(void);
void local_cq_resize(void);
void local_rereg(void);
void local_recv_lkey(void);
void local_atomic_write(void);
void nopeer(const char *ip);

/* mw.c */
void local_mw(void);

/* view.c */
void view(void);

/* server.c */
int server(void);

/* client.c */
int client(const char *ip);

#endif
