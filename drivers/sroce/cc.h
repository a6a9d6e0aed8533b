/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cc.h - congestion control: the device's parameters, a QP's reaction
 * point and pacer.
 *
 * Three parts, one file each: the notification point (cnp.c) answers a
 * received packet marked CE with a CNP to the QP that sent it; the reaction
 * point (cc.c) cuts a QP's rate when a CNP arrives and raises it again,
 * DCQCN style, and paces what the QP sends (requests, READ responses) to
 * that rate or to the QP's rate limit, whichever is lower; the parameters
 * (cc_params.c) are per device, in sysfs under the ib_device's cc/
 * directory, named and defaulted as ConnectX's (Documentation/
 * admin-guide.rst has the units and the algorithm).
 */
#ifndef SROCE_CC_H
#define SROCE_CC_H

#include <linux/hrtimer.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/sroce-abi.h>

#include "counters.h"

struct attribute_group;
struct sroce_dev;
struct sroce_pkt;
struct sroce_qp;

/*
 * SROCE_CC_PARAMS - the parameters, an entry
 * SROCE_CC_PARAM(ID, name, default, min, max) each: enum sroce_cc_param
 * (SROCE_CC_<ID>) and the sysfs files (cc_params.c) are made from it.
 * Rates are in Mb/s, times in microseconds, alpha and g in 1/1024ths.
 */
#define SROCE_CC_PARAMS (						\
	SROCE_CC_PARAM(NP_ENABLE, np_enable, 1, 0, 1)			\
	SROCE_CC_PARAM(MIN_TIME_BETWEEN_CNPS, min_time_between_cnps,	\
		       4, 0, 1000000)					\
	SROCE_CC_PARAM(CNP_DSCP, cnp_dscp, 48, 0, 63)			\
	SROCE_CC_PARAM(RP_ENABLE, rp_enable, 1, 0, 1)			\
	SROCE_CC_PARAM(DCE_TCP_G, dce_tcp_g, 1019, 0, 1023)		\
	SROCE_CC_PARAM(DCE_TCP_RTT, dce_tcp_rtt, 1, 1, 131071)		\
	SROCE_CC_PARAM(INITIAL_ALPHA_VALUE, initial_alpha_value,	\
		       1023, 0, 1023)					\
	SROCE_CC_PARAM(RATE_TO_SET_ON_FIRST_CNP,			\
		       rate_to_set_on_first_cnp, 0, 0, 1000000)		\
	SROCE_CC_PARAM(RPG_MIN_DEC_FAC, rpg_min_dec_fac, 50, 0, 100)	\
	SROCE_CC_PARAM(RPG_MIN_RATE, rpg_min_rate, 1, 1, 1000000)	\
	SROCE_CC_PARAM(RPG_GD, rpg_gd, 11, 10, 20)			\
	SROCE_CC_PARAM(RATE_REDUCE_MONITOR_PERIOD,			\
		       rate_reduce_monitor_period, 4, 0, 1000000)	\
	SROCE_CC_PARAM(RPG_TIME_RESET, rpg_time_reset, 300, 1, 1000000)	\
	SROCE_CC_PARAM(RPG_BYTE_RESET, rpg_byte_reset, 32767, 1,	\
		       1073741824)					\
	SROCE_CC_PARAM(RPG_THRESHOLD, rpg_threshold, 1, 1, 31)		\
	SROCE_CC_PARAM(RPG_AI_RATE, rpg_ai_rate, 5, 1, 1000000)		\
	SROCE_CC_PARAM(RPG_HAI_RATE, rpg_hai_rate, 50, 1, 1000000)	\
	SROCE_CC_PARAM(RPG_MAX_RATE, rpg_max_rate, 0, 0, 1000000)	\
	SROCE_CC_PARAM(CLAMP_TGT_RATE, clamp_tgt_rate, 0, 0, 1)	\
	SROCE_CC_PARAM(CLAMP_TGT_RATE_AFTER_TIME_INC,			\
		       clamp_tgt_rate_after_time_inc, 1, 0, 1))

#define SROCE_CC_PARAM(id, name, def, min, max) SROCE_CC_##id,
enum sroce_cc_param {
	SROCE_LIST_EACH(SROCE_CC_PARAMS)
	SROCE_CC_NR_PARAMS
};

#undef SROCE_CC_PARAM

/**
 * enum sroce_cc_sender - which of a QP's senders the pacer holds back
 * @SROCE_CC_REQ: the requester (request packets)
 * @SROCE_CC_RESP: the responder (READ response packets)
 */
enum sroce_cc_sender {
	SROCE_CC_REQ,
	SROCE_CC_RESP,
};

/**
 * struct sroce_qp_cc - a QP's reaction point and pacer (cc.c)
 * @lock: guards every field below; the innermost lock: taken inside
 *	qp->sq.lock and qp->resp.lock, with interrupts off
 * @pacer: fires when a paced sender may send again
 * @pace_kbps: the rate the pacer holds the QP to, 0 when it does not pace;
 *	also read without @lock, to skip the pacer
 * @limit_kbps: the rate limit set through IB_QP_RATE_LIMIT, 0 for none
 * @cut: the reaction point has cut the rate, which has not yet recovered
 *	to the maximum
 * @rc_kbps: DCQCN's current rate
 * @rt_kbps: DCQCN's target rate
 * @alpha: congestion estimate, SROCE_CC_ALPHA_ONE meaning 1
 * @cnp_in_period: a CNP arrived in the current alpha period
 * @time_inc: a timer event raised the rate since the last cut
 * @held: the pacer held a sender back since the timer's last event or the
 *	last cut: the QP used its rate, which the timer may raise
 * @t_stage: rate-increase events of the timer since the last cut
 * @b_stage: rate-increase events of the byte counter since the last cut
 * @bytes: bytes sent since the last byte-counter event
 * @alpha_ns: when the current alpha period began
 * @inc_ns: when the current rate-increase timer period began
 * @cut_ns: when the rate was last cut
 * @next_ns: the pacer's next send time
 * @behind: the pacer held a sender back and the QP has not caught up with
 *	its schedule since: the time it is behind was the pacer's
 * @waiting: BIT(enum sroce_cc_sender) of the senders the pacer holds back
 * @cnp_ns: when the notification point last sent this QP's peer a CNP
 */
struct sroce_qp_cc {
	spinlock_t lock; /* see above */
	struct hrtimer pacer;
	u32 pace_kbps;
	u32 limit_kbps;
	bool cut;
	u32 rc_kbps;
	u32 rt_kbps;
	u32 alpha;
	bool cnp_in_period;
	bool time_inc;
	bool held;
	u32 t_stage;
	u32 b_stage;
	u32 bytes;
	u64 alpha_ns;
	u64 inc_ns;
	u64 cut_ns;
	u64 next_ns;
	bool behind;
	unsigned long waiting;
	u64 cnp_ns;
};

/**
 * struct sroce_cc_res - a QP's rates, for "rdma resource show qp -dd"
 * @pace_kbps: the rate it is paced to, 0 for none
 * @limit_kbps: its rate limit, 0 for none
 * @rc_kbps: DCQCN's current rate (the maximum when not cut)
 * @rt_kbps: DCQCN's target rate
 * @alpha: congestion estimate, in 1/1024ths
 */
struct sroce_cc_res {
	u32 pace_kbps;
	u32 limit_kbps;
	u32 rc_kbps;
	u32 rt_kbps;
	u32 alpha;
};

/* The QP rate limits IB_QP_RATE_LIMIT takes, in kb/s (0: none). */
#define SROCE_CC_LIMIT_MIN_KBPS SROCE_RATE_LIMIT_MIN_KBPS
#define SROCE_CC_LIMIT_MAX_KBPS SROCE_RATE_LIMIT_MAX_KBPS

extern const struct attribute_group sroce_cc_attr_group;

void sroce_cc_params_init(struct sroce_dev *sdev);

void sroce_cc_qp_init(struct sroce_qp *qp);
void sroce_cc_qp_stop(struct sroce_qp *qp);
bool sroce_cc_may_send(struct sroce_qp *qp, enum sroce_cc_sender who);
void sroce_cc_sent(struct sroce_qp *qp, unsigned int bytes);
bool sroce_cc_cnp(struct sroce_qp *qp);
void sroce_cc_set_limit(struct sroce_qp *qp, u32 kbps);
void sroce_cc_reset(struct sroce_qp *qp);
void sroce_cc_res(struct sroce_qp *qp, struct sroce_cc_res *res);

void sroce_cnp_rx_ce(struct sroce_pkt *pkt);

#endif
