/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rc.h - what the files of sroce_rc_test share: the options, the verdict
 * helpers (failf, skipf, CHECK, TRY), the resources a case makes and
 * their release, the devices, QP pairs, buffers, completions and posting.
 * main.c says what the program does.
 */
#ifndef SROCE_RC_TEST_H
#define SROCE_RC_TEST_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cases.h"
#include "common.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIB (1024u * 1024u)
#define GUARD 64		/* bytes after each buffer that must stay untouched */
#define FILL 0xa5		/* what untouched memory holds */
#define QUIET_MS 300		/* how long "nothing happens" is watched */
#define SKIP 1			/* a case's return value: skipped, "why" says why */

/* The options: main.c reads them. */
struct options {
	const char *dev[2];
	int gidx[2];
	enum ibv_mtu mtu;
	enum ibv_mtu send_mtu;	/* -M: the highest MTU "send" must run at (0: none) */
	int poll_ms;
	int case_timeout;
	uint8_t ack_timeout;
	const char *unreach;
	int qpn_wrap;
	bool verbose;
};

/* main.c */
extern struct options opt;

/* verbs.c */
extern char why[512];

int failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int skipf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Functions return 0 (fine), -1 (failed, "why" set) or SKIP. */
#define CHECK(cond, ...)					\
	do {							\
		if (!(cond))					\
			return failf(__VA_ARGS__);		\
	} while (0)
#define TRY(expr)						\
	do {							\
		int try_ret_ = (expr);				\
		if (try_ret_)					\
			return try_ret_;			\
	} while (0)

const char *estr(int err);

void vlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

long long now_ms(void);
void sleep_ms(int ms);

/* --- resources: everything a case creates is released in reverse order ----- */

enum rkind { R_CTX, R_CH, R_PD, R_CQ, R_QP, R_MR, R_MW, R_MEM, R_TD, R_DM, R_XRCD, R_SRQ,
	     R_MAP };

/* An mmap()ed range (R_MAP): unmapped, and this freed, on release. */
struct mapping {
	void *p;
	size_t len;
};

void *track(enum rkind kind, void *p);
int release_early(void *p);
int release_all(void);

/* --- devices ------------------------------------------------------------------ */

struct dev {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	uint64_t caps_ex;	/* ibv_query_device_ex's device_cap_flags_ex */
	uint64_t max_dm_size;	/* ... and its max_dm_size */
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gidx;
};

extern struct dev devs[2];
extern union ibv_gid unreach_gid;
const char *gid_str(const union ibv_gid *g);
int dev_open(struct dev *d, const char *name, int gidx);
int devs_open(void);
bool has_atomics(void);
bool has_atomic_write(void);
unsigned int mr_access_all(void);
int min_int(int a, int b);

/* --- QPs ------------------------------------------------------------------------ */

struct qp_conf {
	struct ibv_qp_cap cap;
	int cqe;
	bool sig_all;
	bool events;		/* the recv CQ reports to a completion channel */
	bool wr_api;		/* created with ibv_create_qp_ex, for ibv_wr_* */
	bool unreach;		/* A's destination is a GID and QPN nobody has */
	enum ibv_mtu mtu;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t rd_atom;	/* READs/atomics outstanding (0: the default) */
	unsigned int access;	/* QP access flags */
	struct ibv_cq *scq[2], *rcq[2];	/* shared CQs per side, or NULL */
	uint32_t psn_a, psn_b;
};

struct ep {
	struct dev *d;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_qp_cap cap;
	uint32_t psn;
};

struct pair {
	struct ep a, b;
};

void conf_init(struct qp_conf *c);
struct ibv_cq *cq_new(struct dev *d, int cqe, struct ibv_comp_channel *ch);
int ep_create_on(struct ep *e, struct dev *d, int side, const struct qp_conf *c);
int ep_create(struct ep *e, int side, const struct qp_conf *c);
int qp_modify(struct ep *e, struct ibv_qp_attr *a, int mask);
uint8_t rd_atom(int dev_max, uint8_t want);
int qp_to_init(struct ep *e, const struct qp_conf *c);

/* What one side learns from the other (what the pingpongs exchange by TCP). */
struct peer_info {
	uint32_t qpn, psn;
	union ibv_gid gid;
};

int qp_to_rtr(struct ep *e, const struct peer_info *pi, const struct qp_conf *c);
int qp_to_rts(struct ep *e, const struct qp_conf *c);
int qp_to_err(struct ep *e);
struct peer_info info_of(const struct ep *e);
int ep_connect(struct ep *e, const struct peer_info *pi, const struct qp_conf *c);
int pair_create(struct pair *p, const struct qp_conf *c);
int pair_up(struct pair *p, const struct qp_conf *c);
int expect_state(const struct ep *e, enum ibv_qp_state want, const char *what);
int query_cap(const struct ep *e, struct ibv_qp_cap *cap);
int probe_inline(struct dev *d, uint32_t *max);

/* --- buffers and data ------------------------------------------------------ */

/*
 * A registered buffer: @len bytes at @p, or (@zero_based: a region in
 * device memory, dm.c) at the region's addresses 0 to @len, @p NULL.
 */
struct buf {
	uint8_t *p;
	size_t len;
	struct ibv_mr *mr;
	bool zero_based;
};

/* data.c */
int buf_reg_in(struct buf *b, struct dev *d, struct ibv_pd *pd, size_t len, size_t reg_len,
	       unsigned int access);
int buf_reg(struct buf *b, struct dev *d, size_t len, size_t reg_len, unsigned int access);
int buf_new(struct buf *b, struct dev *d, size_t len, unsigned int access);
void buf_clear(struct buf *b);
uint64_t addr_of(const struct buf *b, size_t off);
struct ibv_sge sge_of(const struct buf *b, size_t off, size_t len);
void pattern(uint8_t *p, size_t n, uint32_t seed);
int check_bytes(const uint8_t *got, const uint8_t *want, size_t n, const char *what);
int check_fill(const uint8_t *p, size_t n, const char *what);
int check_buf(const struct buf *b, size_t off, const uint8_t *want, size_t n,
	      const char *what);
uint64_t load64(const uint8_t *p);
void store64(uint8_t *p, uint64_t v);

/* --- completions ------------------------------------------------------------ */

struct want {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t qp_num;
	int64_t byte_len;	/* -1: not checked */
	int imm;		/* -1: not checked; 0: no IBV_WC_WITH_IMM; 1: with imm_data */
	uint32_t imm_data;
};

const char *wc_desc(const struct ibv_wc *wc);
int poll_wc(struct ibv_cq *cq, struct ibv_wc *wc, int ms, const char *what);
int check_wc(const struct ibv_wc *wc, const struct want *w, const char *what);
int expect_wc(struct ibv_cq *cq, const struct want *w, const char *what);
int expect_empty(struct ibv_cq *cq, int ms, const char *what);
struct want w_ok(uint64_t wr_id, enum ibv_wc_opcode op, const struct ep *e);
struct want w_recv(uint64_t wr_id, const struct ep *e, uint32_t len);
struct want w_recv_imm(uint64_t wr_id, const struct ep *e, uint32_t len,
		       enum ibv_wc_opcode op, uint32_t imm);
int want_send(const struct ep *e, uint64_t wr_id, enum ibv_wc_opcode op, const char *what);
int cqx_start(struct ibv_cq_ex *cqx, const char *what);
int want_recv(const struct ep *e, uint64_t wr_id, uint32_t len, const char *what);
int want_err(const struct ep *e, struct ibv_cq *cq, uint64_t wr_id,
	     enum ibv_wc_status st, const char *what);
int arm(struct ibv_cq *cq, int solicited_only);
int expect_event(struct ibv_comp_channel *ch, struct ibv_cq *want, const char *what);
int expect_no_event(struct ibv_comp_channel *ch, const char *what);

/* --- posting ---------------------------------------------------------------- */

struct op {
	enum ibv_wr_opcode op;
	struct ibv_sge *sg;
	int nsge;
	unsigned int flags;	/* IBV_SEND_*; SIGNALED is added unless .unsignaled */
	bool unsignaled;
	uint32_t imm;
	uint64_t raddr;
	uint32_t rkey;
	uint64_t cmp, swp;	/* atomics: compare (or add) and swap */
	uint32_t srqn;		/* XRC send QPs: the remote SRQ */
};

void wr_fill(struct ibv_send_wr *wr, uint64_t wr_id, const struct op *o);
int post_op(const struct ep *e, uint64_t wr_id, const struct op *o);
int post_recv(const struct ep *e, uint64_t wr_id, struct ibv_sge *sg, int nsge);
int post_recv_buf(const struct ep *e, uint64_t wr_id, const struct buf *b, size_t off,
		  size_t len);
int post_send_buf(const struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op,
		  const struct buf *src, size_t len, uint32_t imm);
int post_rdma(const struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op,
	      const struct buf *loc, size_t loff, const struct buf *rem, size_t roff,
	      size_t len, uint32_t imm);
int post_atomic(const struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op,
		const struct buf *loc, size_t loff, const struct buf *rem, size_t roff,
		uint64_t cmp, uint64_t swp);
int expect_post_send_fails(const struct ep *e, struct ibv_send_wr *wr,
			   struct ibv_send_wr *want_bad, int want_err, const char *what);
int expect_post_recv_fails(const struct ep *e, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr *want_bad, int want_err, const char *what);

/* send.c */
int case_send(void);
int case_send_imm(void);
int case_send_sge(void);
int case_send_inline(void);
int case_send_solicited(void);
int case_flush_solicited(void);
int case_send_unsignaled(void);

/* rdma.c */
int case_rdma_write(void);
int case_rdma_write_imm(void);
int case_rdma_write_zero(void);
int read_one(struct pair *p, struct buf *loc, struct buf *rem, size_t off, size_t len,
	     uint64_t id);
int case_rdma_read(void);
int case_read_stream(void);
int case_rdma_read_sge(void);
int check_result(const struct buf *loc, size_t i, uint64_t want, const char *what);
int case_atomic_cas(void);
int case_atomic_faa(void);
int case_atomic_unaligned(void);
int case_atomic_unaligned_wr(void);
int case_atomic_write(void);
int case_atomic_write_errors(void);
int case_cq_timestamps(void);

/* dm.c */
int case_device_memory(void);
int case_device_memory_misuse(void);

/* wr.c */
int case_wr_api(void);
int case_wr_api_sge_list(void);
int case_wr_api_inline(void);
int case_fill_sq(void);
int case_sq_one_deep(void);
int case_many_qps(void);

/* errors.c */
int case_err_rkey(void);
int case_err_read_range(void);
int case_err_write_access(void);
int case_rnr_infinite(void);
int case_rnr_exceeded(void);
int case_retry_exceeded(void);
int case_flush(void);
int case_flush_recv_in_err(void);
int case_recv_too_small(void);
int case_qp_caps(void);
int case_post_bad_state(void);
int case_post_too_many_sge(void);
int case_post_inline_too_big(void);
int case_post_recv_too_many_sge(void);

/* mw.c */
int case_mw2_qp_gone(void);

/* xrc.c */
int case_xrc(void);
int case_xrc_errors(void);

/* tm.c */
int case_tm(void);
int case_tm_errors(void);

/* import.c */
int case_import(void);

/* odp.c */
int case_odp(void);
int case_odp_implicit(void);
int case_odp_remap(void);
int case_odp_memlock(void);
int case_odp_errors(void);

/* domains.c */
int case_parent_domain(void);
int case_parent_domain_busy(void);

#endif
