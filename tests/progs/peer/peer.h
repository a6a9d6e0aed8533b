/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * peer.h - what the files of sroce_peer share: the options, the failure
 * of the running scenario (failf, CHECK, TRY), the peer's socket and the
 * packets it sends and expects, the victim QP and its completions, and
 * the device's counters.  main.c says what the program does.
 */
#ifndef SROCE_PEER_H
#define SROCE_PEER_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cases.h"
#include "common.h"
#include "roce_wire.h"

#define PMTU 1024
#define MR_SIZE (512 * 1024)
#define RO_SIZE 4096
#define PM_SIZE (2 * 1024 * 1024)	/* a device-DAX mapping's alignment */
#define RECV_SLOT 2048
#define RECV_SLOTS 16
#define MAX_PKT 2048

/* --- options and the failure of the scenario running ------------------------ */

struct options {
	const char *dev, *netns;
	const char *pmem;	/* a device-DAX file: persistent memory */
	int gid_index;
	int quiet_ms, timeout_ms;
	bool verbose;
};

/* main.c */
extern struct options opt;

/* wire.c */
extern char why[1024];
extern char cnt_want[128];
int __attribute__((format(printf, 1, 2))) failf(const char *fmt, ...);

#define TRY(x) do { if ((x) < 0) return -1; } while (0)
#define CHECK(cond, ...) do { if (!(cond)) return failf(__VA_ARGS__); } while (0)

void vlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

uint32_t psn_add(uint32_t psn, uint32_t n);

/* --- the victim's objects ---------------------------------------------------- */

struct victim {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;		/* MR_SIZE, every remote access */
	struct ibv_mr *ro;		/* RO_SIZE, remote read only */
	struct ibv_mr *rmr;		/* receive buffers, local write */
	struct ibv_mr *pm;		/* PM_SIZE of persistent memory (-P), or NULL */
	uint8_t *buf, *robuf, *rbuf, *pmbuf;
	union ibv_gid peer_gid;
	/* per scenario */
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint32_t qpn;
};

/* victim.c */
extern struct victim vic;

/* --- the peer: a UDP socket on port 4791 in another namespace --------------- */

struct peer {
	int family;
	int sock;
	struct sockaddr_storage victim;	/* where requests go */
	socklen_t victim_len;
	uint8_t victim_addr[16], peer_addr[16];
	struct roce_pseudo tx;		/* ICRC of what the peer sends */
	uint32_t qpn;			/* the QPN the peer claims */
	unsigned long sent, rcvd;	/* datagrams, this scenario */
	unsigned long reordered;	/* READ responses that came out of order */
	long rx_ms;			/* when the last datagram arrived (rt_ms()) */
};

/* wire.c */
extern struct peer peer;
int wire_init(void);
void peer_open(const char *ip, const char *victim_ip);

/*
 * A packet the peer sends: a request to the victim's responder, or a
 * response (ACK, NAK, READ response, atomic ACK) to its requester; the
 * opcode decides which fields are used.
 */
struct req {
	uint8_t op;
	uint32_t psn;
	bool ackreq;
	int padcnt;		/* -1: the right one for len */
	uint32_t feth;		/* FLUSH: the FETH */
	uint64_t va;		/* RETH, AtomicETH */
	uint32_t rkey;
	uint32_t dmalen;	/* RETH */
	uint64_t swap_add, compare;
	uint32_t imm;		/* network order, as it goes on the wire */
	uint8_t syn;		/* AETH */
	uint32_t msn;		/* AETH */
	uint64_t orig;		/* AtomicAckETH */
	const uint8_t *data;
	uint32_t len;
};

/*
 * The transport bits of the victim's opcodes, for the scenario running:
 * 0 (RC) or UC_OPS.  Requests are built from the RC opcode names; UC() is
 * the same operation on UC.
 */
#define UC_OPS 0x20
#define UC(op) ((uint8_t)((op) | UC_OPS))

extern uint8_t tport;
bool op_has_reth(uint8_t op);
bool op_has_imm(uint8_t op);
int req_send_n(const struct req *r, unsigned int n);
int req_send(const struct req *r);

/* A packet sroce sent the peer, parsed. */
struct rsp {
	uint8_t op;
	uint32_t psn;
	uint8_t syn;		/* AETH, if any */
	uint32_t msn;
	uint64_t orig;		/* AtomicAckETH */
	const uint8_t *data;
	uint32_t len;
	uint8_t raw[MAX_PKT + 64];
};

int hdr_check(const uint8_t *p, size_t n, uint16_t sport);
long now_ms(void);
long rt_ms(void);
int dgram_recv(uint8_t *raw, size_t cap, size_t *n, uint16_t *sport, int ms);
const char *rsp_str(const struct rsp *r);
int rsp_recv(struct rsp *r, int ms);
int rsp_expect(struct rsp *r, const char *what);
int expect_quiet_ms(const char *after, int ms);
int expect_quiet(const char *after);
int expect_ack(uint8_t syn, uint32_t psn, uint32_t msn, const char *what);
int expect_atomic_ack(uint32_t psn, uint64_t orig, uint32_t msn, uint32_t msn_alt,
		      const char *what);
uint8_t read_op(uint32_t i, uint32_t n);
int psn_index(uint32_t psn, uint32_t first, uint32_t n);
int take_read_pkt(const struct rsp *r, uint32_t first, uint32_t n, uint32_t off,
		  uint32_t total, uint32_t msn, bool mid, bool *got, uint32_t *next,
		  const char *what);
int expect_read(uint32_t first, uint32_t off, uint32_t total, uint32_t msn, bool mid,
		const char *what);

/* --- the victim ------------------------------------------------------------- */

/* What a scenario wants of its victim QP. */
struct vconf {
	bool uc;		/* a UC QP (else RC) */
	uint32_t epsn;		/* the victim's expected PSN (rq_psn) */
	uint32_t sq_psn;
	uint8_t rd_atomic;	/* max_dest_rd_atomic */
	uint8_t min_rnr_timer;
	unsigned int nrecv;	/* receive WQEs posted at the start */
	uint32_t recv_len;	/* their length (default RECV_SLOT) */
	/* the requester's attributes: if !req_attrs, timeout 14, retries 7 */
	bool req_attrs;
	uint8_t timeout;	/* local ACK timeout code */
	uint8_t retry_cnt, rnr_retry;
	uint32_t rate_kbps;	/* the QP's rate limit (0: none) */
};

/* victim.c */
extern uint32_t recv_len;
void vic_fill(unsigned int seed);
void vic_open(void);
int post_recv(uint32_t len);
int qp_modify(struct ibv_qp_attr *a, int mask, const char *what);
int vic_up(const struct vconf *c);
void vic_down(void);
int expect_event(enum ibv_event_type want);
int expect_state(enum ibv_qp_state want);
int expect_wc(uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op,
	      uint32_t byte_len, bool imm, uint32_t imm_data, const char *what);
int expect_no_wc_now(const char *after);
int expect_no_wc(const char *after);
int check_recv(uint32_t slot, const uint8_t *data, uint32_t len, const char *what);
int expect_flushed(uint32_t from);

/* --- the device's counters --------------------------------------------------- */

/* The counters every scenario accounts for (other than rx/tx_packets). */
static const char *const cnt_names[] = {
	"rx_drop_dup", "rx_drop_seq", "seq_naks_sent", "rnr_naks_sent", "err_naks_sent",
	"rx_drop_short", "rx_drop_header", "rx_drop_icrc", "rx_drop_opcode", "rx_drop_no_qp",
	"rx_drop_qp_type", "rx_drop_qp_state", "rx_drop_address", "rx_drop_pkey",
	"rx_drop_resp", "rx_drop_gap", "rx_dup_resp", "retransmits", "timeouts", "seq_naks_rcvd",
	"rnr_naks_rcvd", "err_naks_rcvd", "rx_drop_uc", "rx_drop_no_recv", "rp_cnp_ignored",
	"stale_read_replays", "rejected_read_replays", "rx_packets", "tx_packets",
};
#define NCNT (sizeof(cnt_names) / sizeof(cnt_names[0]))

int cnt_get(const char *name, long long *v);
int cnt_read(long long *v);
int cnt_wait(const char *name, long long want, const char *what);
void cnt_dump(const long long *before, const long long *after);
int cnt_check(const long long *before, const char *want);

/* resp.c */
extern uint8_t msg[4][2 * PMTU];
struct req rq_send(uint8_t op, uint32_t psn, const uint8_t *data, uint32_t len);
struct req rq_rdma(uint8_t op, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t dmalen);
uint64_t va_of(uint32_t off);
int sc_read_replay_new_read(const struct vconf *c);
int sc_atomics_behind_read(const struct vconf *c);
int sc_fatal_nak_behind_seq_nak(const struct vconf *c);
int sc_reaimed_read_over_limit(const struct vconf *c);
int sc_dup_send(const struct vconf *c);
int sc_dup_middle(const struct vconf *c);
int sc_dup_read(const struct vconf *c);
int sc_dup_read_stale(const struct vconf *c);
int sc_dup_read_mismatch(const struct vconf *c);
int sc_dup_read_no_access(const struct vconf *c);
int sc_seq_gap(const struct vconf *c);
int sc_write_bad_rkey(const struct vconf *c);
int sc_read_past_end(const struct vconf *c);
int sc_write_no_remote_write(const struct vconf *c);
int sc_write_middle_alone(const struct vconf *c);
int sc_send_last_alone(const struct vconf *c);
int sc_write_len_mismatch(const struct vconf *c);
int sc_write_first_pad(const struct vconf *c);
int sc_send_too_long(const struct vconf *c);
int sc_rnr(const struct vconf *c);
int sc_atomics(const struct vconf *c);
int sc_atomic_write(const struct vconf *c);
int sc_flush(const struct vconf *c);
int sc_flush_persistent(const struct vconf *c);
int sc_flush_bad_level(const struct vconf *c);
int sc_flush_pmem(const struct vconf *c);

/* --- the victim as the requester ---------------------------------------------- */

/*
 * In the scenarios below the victim's send queue talks to the peer, which
 * plays the responder: it takes the requests sroce sends, checks each one
 * (opcode, PSN, AckReq, RETH or AtomicETH, payload bytes) and answers with
 * the ACKs, NAKs, READ responses and atomic ACKs the scenario wants.  The
 * peer's "memory" is only a claim: REMOTE_VA and REMOTE_RKEY go in the
 * victim's work requests, and the peer answers READs from rdata.
 */
#define REMOTE_VA 0x00007f1234560000ull
#define REMOTE_RKEY 0x00c0ffeeu

/* req.c */
extern uint8_t rdata[8 * PMTU];
uint8_t msg_op(bool write, uint32_t i, uint32_t n);
int expect_msg(bool write, uint32_t psn, uint32_t from, uint32_t off, uint32_t len,
	       const char *what);
int post_send_wr(uint64_t wr_id, enum ibv_wr_opcode op, uint32_t off, uint32_t len,
		 uint32_t roff);
int expect_swc(uint64_t wr_id, enum ibv_wc_opcode op, uint32_t byte_len, const char *what);
int expect_no_event(const char *after);
int sc_req_ack_coalesced(const struct vconf *c);
int sc_req_ack_timeout(const struct vconf *c);
int sc_req_retry_exceeded(const struct vconf *c);
int sc_req_nak_psn_seq(const struct vconf *c);
int sc_req_rnr_nak(const struct vconf *c);
int sc_req_rnr_late(const struct vconf *c);
int sc_req_nak_remote_access(const struct vconf *c);
int sc_req_nak_invalid_request(const struct vconf *c);
int sc_req_nak_remote_op(const struct vconf *c);
int sc_req_ack_unsent_psn(const struct vconf *c);
int sc_req_read_response(const struct vconf *c);
int sc_req_atomic_response(const struct vconf *c);
int sc_req_implicit_ack_by_read_response(const struct vconf *c);

/* uc.c */
int sc_uc_lost_middle(const struct vconf *c);
int sc_uc_interrupted(const struct vconf *c);
int sc_uc_lost_first(const struct vconf *c);
int sc_uc_no_recv(const struct vconf *c);
int sc_uc_bad_access(const struct vconf *c);
int sc_uc_send_too_long(const struct vconf *c);
int sc_uc_dup_only(const struct vconf *c);
int sc_uc_foreign_opcodes(const struct vconf *c);
int sc_uc_req_messages(const struct vconf *c);
int sc_cnp(const struct vconf *c);

#endif
