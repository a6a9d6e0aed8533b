/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * misuse.h - what the files of sroce_misuse share: the uverbs ABI
 * constants it uses, the objects it makes (contexts, CQs, QPs, SRQs, MRs,
 * their rings), the helpers that make them through the write(), extended
 * write() and ioctl() entry points, and the failure reporting of the
 * running case.  main.c says what the program does.
 */
#ifndef SROCE_MISUSE_H
#define SROCE_MISUSE_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/sroce-abi.h>

#include "cases.h"

/* enum ib_qp_state, enum ib_qp_attr_mask, ib_wc_status (kernel numbering,
 * which uverbs passes through unchanged).
 */
enum { QPS_RESET, QPS_INIT, QPS_RTR, QPS_RTS, QPS_SQD, QPS_SQE, QPS_ERR };
enum {
	M_STATE = 1 << 0, M_CUR_STATE = 1 << 1, M_EN_SQD = 1 << 2,
	M_ACCESS = 1 << 3, M_PKEY = 1 << 4, M_PORT = 1 << 5, M_QKEY = 1 << 6,
	M_AV = 1 << 7, M_MTU = 1 << 8, M_TIMEOUT = 1 << 9, M_RETRY = 1 << 10,
	M_RNR_RETRY = 1 << 11, M_RQ_PSN = 1 << 12, M_MAX_RD = 1 << 13,
	M_ALT_PATH = 1 << 14, M_MIN_RNR = 1 << 15, M_SQ_PSN = 1 << 16,
	M_MAX_DEST_RD = 1 << 17, M_MIG = 1 << 18, M_CAP = 1 << 19,
	M_DEST_QPN = 1 << 20,
};
enum { WC_SUCCESS = 0, WC_LOC_LEN_ERR = 1, WC_LOC_QP_OP_ERR = 2,
       WC_LOC_PROT_ERR = 4, WC_WR_FLUSH_ERR = 5 };
enum { QPT_RC = 2, QPT_UC = 3, QPT_UD = 4 };
enum { EV_CQ_ERR = 0, EV_QP_FATAL = 1, EV_QP_REQ_ERR = 2 };
#define ACC_LW 1
#define ACC_RW 2
#define ACC_RR 4
#define BAD_HANDLE 0x7ffffff0u
#define KERNEL_ADDR 0xffff888000000000ull

/* main.c */
extern const char *dev_name;
extern int gid_index;
extern uint8_t gid[16];
extern char uverbs_path[300];
extern int scribble_secs;
extern const char *cur_case;
extern int case_failed;

/* uverbs.c */
void setup_die(const char *fmt, ...);
void bad(const char *fmt, ...);
const char *ename(int e);

/* expect(what, got, want): got is 0 or a negative errno. */
#define expect(what, got, want) expect_one(what, got, want, __LINE__)
/* map_fails(what, fd, len, prot, off, want): a shared mmap must fail so. */
#define map_fails(what, fd, len, prot, off, want) \
	map_fails_at(what, fd, len, prot, (off_t)(off), want, __LINE__)

bool expect_one(const char *what, int got, int want, int line);
void map_fails_at(const char *what, int fd, size_t len, int prot, off_t off, int want,
		  int line);
uint64_t now_ms(void);
int cmd_write(int fd, uint32_t command, const void *req, size_t reqlen,
	      size_t resplen);

/* The command and its driver data in one buffer (driver data must follow
 * the core command directly).
 */
#define CMD(fd, c, req, resplen) cmd_write(fd, c, &(req), sizeof(req), resplen)

struct ctx {
	int fd;
	int async_fd;
};

int ctx_open_raw(void);

struct get_context_cmd {
	struct ib_uverbs_get_context core;
	struct sroce_alloc_ucontext_req drv;
};

struct get_context_resp {
	struct ib_uverbs_get_context_resp core;
	struct sroce_alloc_ucontext_resp drv;
};

struct ctx ctx_open(void);
void ctx_close(struct ctx *x);
int pd_alloc(struct ctx *x, uint32_t *pd);
uint32_t pd_new(struct ctx *x);
int pd_dealloc(struct ctx *x, uint32_t pd);

/* A ring as the process sees it. */
struct ring {
	uint8_t *base;
	size_t size;
	uint32_t n, slot;
	uint32_t mine;		/* the index this process owns */
};

struct sroce_ring_hdr *rhdr(struct ring *r);
void *rslot(struct ring *r, uint32_t i);
int ring_map(struct ctx *x, const struct sroce_ring_info *info,
	     struct ring *r);

struct cq {
	uint32_t handle;
	struct sroce_ring_info info;
	struct ring ring;
};

struct create_cq_resp {
	struct ib_uverbs_create_cq_resp core;
	struct sroce_create_cq_resp drv;
};

int cq_create(struct ctx *x, uint32_t cqe, uint32_t vector,
	      int32_t channel, struct cq *cq);
struct cq cq_new(struct ctx *x, uint32_t cqe);
int cq_destroy(struct ctx *x, uint32_t h);
int cq_resize(struct ctx *x, uint32_t h, uint32_t cqe,
	      struct sroce_ring_info *info);
int cq_arm(struct ctx *x, uint32_t h);
bool cq_poll(struct cq *cq, struct ib_uverbs_wc *wc, int ms);
int cq_wait(struct cq *cq, uint64_t wr_id, int ms);

struct qp {
	uint32_t handle, qpn, type;
	struct sroce_create_qp_resp drv;
	struct ring sq, rq;
	uint32_t max_send_sge, max_recv_sge, max_inline;
};

struct qp_caps {
	uint32_t send_wr, recv_wr, send_sge, recv_sge, inline_data;
};

extern const struct qp_caps default_caps;
int qp_create(struct ctx *x, uint32_t type, uint32_t pd, uint32_t scq,
	      uint32_t rcq, int64_t srq, const struct qp_caps *caps,
	      struct qp *qp);
struct qp qp_new(struct ctx *x, uint32_t type, uint32_t pd,
		 uint32_t scq, uint32_t rcq, int64_t srq);
int qp_destroy(struct ctx *x, uint32_t h);
int qp_modify(struct ctx *x, struct ib_uverbs_modify_qp *m);
int qp_state(struct ctx *x, uint32_t h);
bool qp_wait_state(struct ctx *x, uint32_t h, int state, int ms);
void dest_fill(struct ib_uverbs_qp_dest *d);
int qp_to_init(struct ctx *x, struct qp *qp);
int qp_to_rtr(struct ctx *x, struct qp *qp, uint32_t dest_qpn);
int qp_to_rts(struct ctx *x, struct qp *qp, uint8_t timeout);
void qp_connect(struct ctx *x, struct qp *qp, uint32_t dest_qpn,
		uint8_t timeout);
int qp_set_state(struct ctx *x, uint32_t h, int state);
int sq_doorbell(struct ctx *x, uint32_t qp);
int rq_doorbell(struct ctx *x, uint32_t qp);

struct srq {
	uint32_t handle, max_sge;
	struct sroce_ring_info info;
	struct ring ring;
};

int srq_create(struct ctx *x, uint32_t pd, uint32_t max_wr,
	       uint32_t max_sge, uint32_t limit, struct srq *s);
struct srq srq_new(struct ctx *x, uint32_t pd);
int srq_destroy(struct ctx *x, uint32_t h);

struct mr {
	uint32_t handle, lkey, rkey;
};

int mr_reg(struct ctx *x, uint32_t pd, uint64_t start, uint64_t len,
	   uint64_t iova, uint32_t access, struct mr *mr);
struct mr mr_new(struct ctx *x, uint32_t pd, void *buf, size_t len);
int mr_dereg(struct ctx *x, uint32_t h);
int ah_create(struct ctx *x, uint32_t pd, uint8_t sgid, uint8_t port,
	      uint8_t global, uint32_t *handle, uint32_t *ah_num);
int ah_destroy(struct ctx *x, uint32_t h);
void sq_put(struct qp *qp, const struct sroce_send_wqe *w,
	    const struct sroce_sge *sge, uint32_t nsge);
void rq_put(struct ring *r, uint64_t wr_id,
	    const struct sroce_sge *sge, uint32_t nsge);
void set_prod(struct ring *r, uint32_t v);
void set_cons(struct ring *r, uint32_t v);

/* --- a connected world for the ring cases ---------------------------------------- */

#define BUF_SIZE 65536

/*
 * One context with a PD, a registered buffer, and two RC QPs connected to
 * each other (a: CQ ca, b: CQ cb), plus optionally more.
 */
struct world {
	struct ctx x;
	uint32_t pd;
	uint8_t *buf;
	struct mr mr;
	struct cq ca, cb;
	struct qp a, b;
};

void world_open(struct world *w, uint32_t type);
void world_close(struct world *w);
struct sroce_sge sge_of(struct world *w, uint32_t off, uint32_t len);
struct sroce_send_wqe send_wqe(uint64_t wr_id);
bool world_send_ok(struct world *w, uint32_t len, uint64_t tag);
bool async_wait(struct ctx *x, uint32_t type, int ms);

/* ==== the ioctl ABI ================================================================= */

/*
 * One RDMA_VERBS_IOCTL request as <rdma/rdma_user_ioctl_cmds.h> lays it
 * out: the header, then its attributes.  ioc_add() keeps hdr.length and
 * hdr.num_attrs right; cases that want them wrong change them afterwards.
 */
#define IOC_MAX_ATTRS 16
struct ioc {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attr[IOC_MAX_ATTRS];
};

/* ioctl.c */
void ioc_init(struct ioc *c, uint16_t object, uint16_t method);
struct ib_uverbs_attr *ioc_add(struct ioc *c, uint16_t id, size_t len, uint64_t data);
struct ib_uverbs_attr *ioc_in(struct ioc *c, uint16_t id, const void *p, size_t len);
struct ib_uverbs_attr *ioc_const(struct ioc *c, uint16_t id, uint64_t v);
struct ib_uverbs_attr *ioc_u32(struct ioc *c, uint16_t id, uint32_t v);
struct ib_uverbs_attr *ioc_out(struct ioc *c, uint16_t id, void *p, size_t len);
struct ib_uverbs_attr *ioc_obj(struct ioc *c, uint16_t id, int64_t h);
struct ib_uverbs_attr *ioc_find(struct ioc *c, uint16_t id);
void ioc_drop(struct ioc *c, uint16_t id);
int ioc_send(int fd, struct ioc *c);

/* Driver data of an ioctl: UHW_IN and UHW_OUT, each left out if NULL. */
struct uhw {
	const void *in;
	size_t inlen;
	void *out;
	size_t outlen;
};

int ioc_destroy(struct ctx *x, uint16_t obj, uint16_t method, int64_t h,
		void *resp, size_t resplen);
int ioc_cq_destroy(struct ctx *x, int64_t h);
int ioc_pd_destroy(struct ctx *x, int64_t h);
int ioc_count(struct ctx *x, uint16_t obj);
void ioc_port(struct ioc *c, uint64_t port, struct ib_uverbs_query_port_resp_ex *resp);
int ioc_get_context(int fd, const struct uhw *u, uint32_t *num_comp);

/*
 * CQ_CREATE, built (not sent): @cqe entries on vector 0, no channel, the
 * driver response into q->drv.  The new handle comes back in the HANDLE
 * attribute's data (ioc_cq_handle()).
 */
struct ioc_cq {
	struct ioc c;
	uint64_t user_handle;
	uint32_t resp_cqe;
	struct sroce_create_cq_resp drv;
};

void ioc_cq_build(struct ioc_cq *q, uint32_t cqe);
uint32_t ioc_cq_handle(struct ioc_cq *q);

/*
 * QP_CREATE, built (not sent): a QP of @type on @pd with CQ @cq for both
 * queues and the default caps (q->cap, read by pointer, so a case may
 * change it after the build; the user handle is inline, in its
 * attribute's data).  The new handle comes back in the HANDLE
 * attribute's data (ioc_qp_handle()).
 */
struct ioc_qp {
	struct ioc c;
	struct ib_uverbs_qp_cap cap, resp_cap;
	uint32_t qpn;
	struct sroce_create_qp_resp drv;
};

void ioc_qp_build(struct ioc_qp *q, uint32_t type, uint32_t pd, uint32_t cq);
uint32_t ioc_qp_handle(struct ioc_qp *q);
int ioc_qp_destroy(struct ctx *x, int64_t h, uint32_t *events);

/* SRQ_CREATE, built (not sent): a basic SRQ of @pd, 16 WRs of 2 SGEs. */
struct ioc_srq {
	struct ioc c;
	uint32_t resp_wr, resp_sge;
	struct sroce_create_srq_resp drv;
};

void ioc_srq_build(struct ioc_srq *q, uint32_t pd);
uint32_t ioc_srq_handle(struct ioc_srq *q);
int ioc_srq_destroy(struct ctx *x, int64_t h);
int ioc_async_alloc(struct ctx *x);

/* ==== extended write commands ======================================================= */

/* The two headers of an extended write() command. */
struct ex_hdrs {
	struct ib_uverbs_cmd_hdr h;
	struct ib_uverbs_ex_cmd_hdr x;
};

struct ex_hdrs ex_hdrs(uint32_t command, size_t reqlen, void *resp, size_t resplen,
		       size_t drvlen, size_t drvout);
int ex_write(int fd, const struct ex_hdrs *e, const void *req, size_t reqlen);
int cmd_ex(int fd, uint32_t command, const void *req, size_t reqlen, void *resp,
	   size_t resplen, size_t drvout);

#define CMD_EX(fd, c, req, resp, drvout) \
	cmd_ex(fd, c, &(req), sizeof(req), &(resp), sizeof(resp), drvout)

int ex_query_device(struct ctx *x, struct ib_uverbs_ex_query_device_resp *resp);
uint32_t max_cqe(struct ctx *x);
struct ib_uverbs_ex_create_qp ex_qp_req(uint32_t pd, uint32_t cq);

struct ex_qp_resp {
	struct ib_uverbs_ex_create_qp_resp core;
	struct sroce_create_qp_resp drv;
};

int ex_qp_create(struct ctx *x, const struct ib_uverbs_ex_create_qp *c,
		 struct ex_qp_resp *resp);

struct ex_cq_resp {
	struct ib_uverbs_ex_create_cq_resp core;
	struct sroce_create_cq_resp drv;
};

struct ib_uverbs_ex_create_cq ex_cq_req(uint32_t cqe);
int ex_cq_create(struct ctx *x, const struct ib_uverbs_ex_create_cq *c,
		 struct ex_cq_resp *resp);

/* cmd.c */
void c_get_context(void);
void c_headers(void);
void c_pd(void);
void c_cq(void);
void c_qp_create(void);
void c_qp_modify(void);
void c_post(void);
void c_srq(void);
void c_mr(void);
void c_mw_ah(void);
void c_mmap(void);
void c_cross_context(void);

/* dm.c */
void c_dm(void);

/* cmd_ioctl.c */
void c_ioctl_hdr(void);
void c_ioctl_device(void);
void c_ioctl_cq(void);
void c_ioctl_qp(void);
void c_ioctl_srq(void);
int comp_channel(struct ctx *x);
void c_ioctl_events(void);
void c_ioctl_objects(void);
void c_ioctl_write(void);

/* tm.c */
void c_tm(void);

/* cmd_ex.c */
void c_ex_query(void);
void c_ex_cq(void);
void c_ex_qp(void);
void c_ex_unsupported(void);

/* ring.c */
void r_sq_prod_huge(void);
void r_sq_prod_backwards(void);
void r_bad_send_wqes(void);
void r_ud_bad_ah(void);
void r_bad_recv_wqes(void);
void r_srq_garbage(void);
void r_cq_cons_wild(void);
void r_cq_resize(void);
void r_reset_wild(void);
void r_err_doorbells(void);

/* race.c */
void r_flush_race(void);
void r_cq_resize_race(void);
void r_sq_full_flush(void);
void r_scribble(bool forever);
void r_scribble_timed(void);

#endif
