/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * trace.h - sroce's tracepoints (TRACE_SYSTEM sroce): packets sent and
 * received, QP state changes, go-backs and their reasons, local ACK
 * timeouts, RNR waits, NAKs sent and received, CNPs and drops.
 * Documentation/tracing.rst describes each event and its fields.
 *
 * Every event is a plain TRACE_EVENT: a static key guards its call, so a
 * disabled event costs one patched-out branch, and what it records is
 * computed in TP_fast_assign only when it is enabled.  Callers pass the
 * objects they hold (a packet, a QP) rather than values computed for the
 * event.  Multi-byte wire fields are converted to CPU order when recorded.
 *
 * trace.c defines the events (CREATE_TRACE_POINTS); every other file only
 * includes this header.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sroce

#if !defined(SROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SROCE_TRACE_H

#include <linux/skbuff.h>
#include <linux/tracepoint.h>

#include "hdr.h"
#include "opcode.h"
#include "sroce.h"

#ifndef SROCE_TRACE_HELPERS
#define SROCE_TRACE_HELPERS

/*
 * The assignment of the first fields of every QP event, dev and qpn, for
 * TP_fast_assign of an event whose prototype names its QP @qp; the events
 * about a PSN go on with psn, and their TP_printk starts with
 * SROCE_TP_QP_PSN_FMT.
 */
#define SROCE_TP_QP_ASSIGN						\
	do {								\
		sroce_assign_str(dev, dev_name(&qp->ibqp.device->dev));	\
		__entry->qpn = qp->ibqp.qp_num;				\
	} while (0)
#define SROCE_TP_QP_PSN_ASSIGN(psn_)					\
	do {								\
		SROCE_TP_QP_ASSIGN;					\
		__entry->psn = (psn_);					\
	} while (0)
#define SROCE_TP_QP_PSN_FMT "%s qpn=%u psn=%u"

/*
 * The assignment of the fields every packet event (sroce_tx, sroce_rx,
 * sroce_drop) starts with: dev, the opcode and its name, op, for a packet
 * of @sdev_ with opcode @opcode_.
 */
#define SROCE_TP_OP_ASSIGN(sdev_, opcode_)				\
	do {								\
		sroce_assign_str(dev, dev_name(&(sdev_)->ibdev.dev));	\
		__entry->opcode = (opcode_);				\
		sroce_assign_str(op, sroce_trace_opname(__entry->opcode)); \
	} while (0)

/* The cause of a QP state change made by modify_qp (sroce_qp_state). */
#define SROCE_QP_CAUSE_MODIFY (-1)

/* An opcode field's value for a packet too short to hold a BTH. */
#define SROCE_TRACE_NO_OPCODE 0x100

/* The name of an opcode, for the events' "op" field. */
static inline const char *sroce_trace_opname(u16 opcode)
{
	if (opcode == SROCE_TRACE_NO_OPCODE)
		return "-";
	if (opcode == SROCE_OPCODE_CNP)
		return "CNP";
	return sroce_opcode(opcode)->name ?: "?";
}

/* A received packet's opcode, or SROCE_TRACE_NO_OPCODE. */
static inline u16 sroce_trace_pkt_opcode(const struct sroce_pkt *pkt)
{
	return pkt->bth ? pkt->bth->opcode : SROCE_TRACE_NO_OPCODE;
}

/*
 * The sending QP of a received packet, as its DETH says (UD), once the
 * packet has been parsed; U32_MAX where the packet does not say.
 */
static inline u32 sroce_trace_pkt_sqpn(const struct sroce_pkt *pkt)
{
	if (!pkt->payoff || !(pkt->info->flags & SROCE_OPF_DETH))
		return U32_MAX;
	return be32_to_cpu(sroce_pkt_deth(pkt)->sqpn) & SROCE_24BIT_MASK;
}

/* Whether an AETH syndrome is an RNR NAK's (else a NAK's). */
static inline bool sroce_trace_is_rnr(u8 syndrome)
{
	return (syndrome & SROCE_AETH_TYPE_MASK) == SROCE_AETH_RNR_NAK;
}

/* The BTH of a packet being sent, at its data. */
static inline const struct sroce_bth *
sroce_trace_tx_bth(const struct sk_buff *skb)
{
	return (const struct sroce_bth *)skb->data;
}

/* Bytes of payload of a packet being sent: data from its BTH to its ICRC. */
static inline u32 sroce_trace_tx_paylen(const struct sk_buff *skb)
{
	const struct sroce_bth *bth = sroce_trace_tx_bth(skb);
	u32 around = sroce_opcode(bth->opcode)->hdr_len +
		     sroce_bth_padcnt(bth) + SROCE_ICRC_SIZE;

	return skb->len > around ? skb->len - around : 0;
}

#endif /* SROCE_TRACE_HELPERS */

/* The transport of an opcode (its bits 7:5), printed before its name. */
#define sroce_show_transport(opcode)					\
	__print_symbolic((opcode) >> 5,					\
			 { 0, "RC" }, { 1, "UC" }, { 2, "RD" },		\
			 { 3, "UD" }, { 4, "CNP" }, { 5, "XRC" },	\
			 { 8, "none" })

/* Drop reasons: enum sroce_counter, named as its counter. */
TRACE_DEFINE_ENUM(SROCE_CNT_RX_PACKETS);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_SHORT);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_HEADER);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_ICRC);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_OPCODE);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_NO_QP);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_QP_TYPE);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_QP_STATE);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_ADDRESS);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_PKEY);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_QKEY);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_NO_RECV);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_UC);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_RESP);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_GAP);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DUP_RESP);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_DUP);
TRACE_DEFINE_ENUM(SROCE_CNT_STALE_READ_REPLAYS);
TRACE_DEFINE_ENUM(SROCE_CNT_REJECTED_READ_REPLAYS);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_MCAST);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_DROP_SEQ);
TRACE_DEFINE_ENUM(SROCE_CNT_RP_CNP_IGNORED);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_UD_RECV);
TRACE_DEFINE_ENUM(SROCE_CNT_RX_RC_UC_PACKETS);
TRACE_DEFINE_ENUM(SROCE_CNT_TX_PACKETS);
TRACE_DEFINE_ENUM(SROCE_CNT_TX_ERRORS);
TRACE_DEFINE_ENUM(SROCE_CNT_RETRANSMITS);
TRACE_DEFINE_ENUM(SROCE_CNT_TIMEOUTS);
TRACE_DEFINE_ENUM(SROCE_CNT_SEQ_NAKS_SENT);
TRACE_DEFINE_ENUM(SROCE_CNT_SEQ_NAKS_RCVD);
TRACE_DEFINE_ENUM(SROCE_CNT_RNR_NAKS_SENT);
TRACE_DEFINE_ENUM(SROCE_CNT_RNR_NAKS_RCVD);
TRACE_DEFINE_ENUM(SROCE_CNT_ERR_NAKS_SENT);
TRACE_DEFINE_ENUM(SROCE_CNT_ERR_NAKS_RCVD);
TRACE_DEFINE_ENUM(SROCE_CNT_LINK_DOWNED);
TRACE_DEFINE_ENUM(SROCE_CNT_CQ_OVERFLOWS);
TRACE_DEFINE_ENUM(SROCE_CNT_MAX);

/* The names come from the counters' list itself (counters.h). */
#undef SROCE_COUNTER
#define SROCE_COUNTER(id, label) { SROCE_CNT_##id, #label },
#define sroce_show_reason(why)						\
	__print_symbolic(why, SROCE_LIST_EACH(SROCE_COUNTERS)		\
			 { SROCE_CNT_MAX, "none" })

TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);

#define sroce_show_qp_state(state)					\
	__print_symbolic(state,						\
			 { IB_QPS_RESET, "RESET" }, { IB_QPS_INIT, "INIT" }, \
			 { IB_QPS_RTR, "RTR" }, { IB_QPS_RTS, "RTS" },	\
			 { IB_QPS_SQD, "SQD" }, { IB_QPS_SQE, "SQE" },	\
			 { IB_QPS_ERR, "ERR" })

TRACE_DEFINE_ENUM(IB_EVENT_CQ_ERR);
TRACE_DEFINE_ENUM(IB_EVENT_QP_FATAL);
TRACE_DEFINE_ENUM(IB_EVENT_QP_REQ_ERR);
TRACE_DEFINE_ENUM(IB_EVENT_QP_ACCESS_ERR);

/*
 * Why a QP's state changed: modify_qp, or the async event a failure raises
 * (IB_EVENT_CQ_ERR, never a QP event, stands for none).
 */
#define sroce_show_qp_cause(event)					\
	__print_symbolic(event,						\
			 { SROCE_QP_CAUSE_MODIFY, "modify_qp" },		\
			 { IB_EVENT_CQ_ERR, "no_event" },		\
			 { IB_EVENT_QP_FATAL, "QP_FATAL" },		\
			 { IB_EVENT_QP_REQ_ERR, "QP_REQ_ERR" },		\
			 { IB_EVENT_QP_ACCESS_ERR, "QP_ACCESS_ERR" })

TRACE_DEFINE_ENUM(SROCE_RETRY_TIMEOUT);
TRACE_DEFINE_ENUM(SROCE_RETRY_SEQ_NAK);
TRACE_DEFINE_ENUM(SROCE_RETRY_GAP);
TRACE_DEFINE_ENUM(SROCE_RETRY_ACK_PAST_RD);
TRACE_DEFINE_ENUM(SROCE_RETRY_RNR);
TRACE_DEFINE_ENUM(SROCE_RETRY_PAGE_FAULT);

#define sroce_show_retry(why)						\
	__print_symbolic(why,						\
			 { SROCE_RETRY_TIMEOUT, "timeout" },		\
			 { SROCE_RETRY_SEQ_NAK, "seq_nak" },		\
			 { SROCE_RETRY_GAP, "gap" },			\
			 { SROCE_RETRY_ACK_PAST_RD, "ack_past_read" },	\
			 { SROCE_RETRY_RNR, "rnr_nak" },		\
			 { SROCE_RETRY_PAGE_FAULT, "page_fault" })

TRACE_DEFINE_ENUM(SROCE_NAK_PSN_SEQ_ERR);
TRACE_DEFINE_ENUM(SROCE_NAK_INVALID_REQ);
TRACE_DEFINE_ENUM(SROCE_NAK_REM_ACCESS);
TRACE_DEFINE_ENUM(SROCE_NAK_REM_OP);
TRACE_DEFINE_ENUM(SROCE_NAK_INVALID_RD);

#define sroce_show_nak_code(code)					\
	__print_symbolic(code,						\
			 { SROCE_NAK_PSN_SEQ_ERR, "psn_seq_err" },	\
			 { SROCE_NAK_INVALID_REQ, "invalid_req" },	\
			 { SROCE_NAK_REM_ACCESS, "rem_access" },	\
			 { SROCE_NAK_REM_OP, "rem_op" },		\
			 { SROCE_NAK_INVALID_RD, "invalid_rd" })

TRACE_EVENT(sroce_tx,
	    TP_PROTO(const struct sroce_dev *sdev, const struct sroce_qp *qp,
		     const struct sk_buff *skb),
	    TP_ARGS(sdev, qp, skb),
	    TP_STRUCT__entry(__string(dev, dev_name(&sdev->ibdev.dev))
			     __string(op, sroce_trace_opname(skb->data[0]))
			     __field(u32, qpn)
			     __field(u32, dqpn)
			     __field(u32, psn)
			     __field(u32, paylen)
			     __field(u8, opcode)
			     __field(bool, ackreq)),
	    TP_fast_assign(SROCE_TP_OP_ASSIGN(sdev, skb->data[0]);
			   __entry->qpn = qp ? qp->ibqp.qp_num : 0;
			   __entry->dqpn = sroce_bth_qpn(sroce_trace_tx_bth(skb));
			   __entry->psn = sroce_bth_psn(sroce_trace_tx_bth(skb));
			   __entry->paylen = sroce_trace_tx_paylen(skb);
			   __entry->ackreq = sroce_bth_ackreq(sroce_trace_tx_bth(skb));),
	    TP_printk("%s qpn=%u dqpn=%u %s %s psn=%u len=%u%s",
		      __get_str(dev), __entry->qpn, __entry->dqpn,
		      sroce_show_transport(__entry->opcode), __get_str(op),
		      __entry->psn, __entry->paylen,
		      __entry->ackreq ? " ackreq" : ""));

TRACE_EVENT(sroce_rx,
	    TP_PROTO(const struct sroce_pkt *pkt),
	    TP_ARGS(pkt),
	    TP_STRUCT__entry(__string(dev, dev_name(&pkt->sdev->ibdev.dev))
			     __string(op, sroce_trace_opname(sroce_trace_pkt_opcode(pkt)))
			     __field(u32, qpn)
			     __field(u32, sqpn)
			     __field(u32, psn)
			     __field(u32, paylen)
			     __field(u16, opcode)),
	    TP_fast_assign(SROCE_TP_OP_ASSIGN(pkt->sdev, sroce_trace_pkt_opcode(pkt));
			   __entry->qpn = pkt->bth ? sroce_bth_qpn(pkt->bth) : 0;
			   __entry->sqpn = sroce_trace_pkt_sqpn(pkt);
			   __entry->psn = pkt->bth ? sroce_bth_psn(pkt->bth) : 0;
			   __entry->paylen = pkt->payoff ? pkt->paylen : 0;),
	    TP_printk("%s qpn=%u sqpn=%d %s %s psn=%u len=%u",
		      __get_str(dev), __entry->qpn, (int)__entry->sqpn,
		      sroce_show_transport(__entry->opcode), __get_str(op),
		      __entry->psn, __entry->paylen));

TRACE_EVENT(sroce_drop,
	    TP_PROTO(const struct sroce_dev *sdev, u32 qpn, u16 opcode, u32 psn,
		     enum sroce_counter why),
	    TP_ARGS(sdev, qpn, opcode, psn, why),
	    TP_STRUCT__entry(__string(dev, dev_name(&sdev->ibdev.dev))
			     __string(op, sroce_trace_opname(opcode))
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(u16, opcode)
			     __field(u16, reason)),
	    TP_fast_assign(SROCE_TP_OP_ASSIGN(sdev, opcode);
			   __entry->qpn = qpn;
			   __entry->psn = psn;
			   __entry->reason = why;),
	    TP_printk("%s qpn=%u %s %s psn=%u reason=%s",
		      __get_str(dev), __entry->qpn,
		      sroce_show_transport(__entry->opcode), __get_str(op),
		      __entry->psn, sroce_show_reason(__entry->reason)));

TRACE_EVENT(sroce_cnp,
	    TP_PROTO(const struct sroce_pkt *pkt),
	    TP_ARGS(pkt),
	    TP_STRUCT__entry(__string(dev, dev_name(&pkt->sdev->ibdev.dev))
			     __field(u32, qpn)
			     __field(bool, becn)),
	    TP_fast_assign(sroce_assign_str(dev, dev_name(&pkt->sdev->ibdev.dev));
			   __entry->qpn = sroce_bth_qpn(pkt->bth);
			   __entry->becn = be32_to_cpu(pkt->bth->qpn) & SROCE_BTH_BECN;),
	    TP_printk("%s qpn=%u%s", __get_str(dev), __entry->qpn,
		      __entry->becn ? " becn" : ""));

TRACE_EVENT(sroce_qp_state,
	    TP_PROTO(const struct sroce_qp *qp, u32 old, u32 new, int event,
		     unsigned long caller),
	    TP_ARGS(qp, old, new, event, caller),
	    TP_STRUCT__entry(__string(dev, dev_name(&qp->ibqp.device->dev))
			     __field(u32, qpn)
			     __field(u8, old)
			     __field(u8, new)
			     __field(int, event)
			     __field(unsigned long, caller)),
	    TP_fast_assign(SROCE_TP_QP_ASSIGN;
			   __entry->old = old;
			   __entry->new = new;
			   __entry->event = event;
			   __entry->caller = caller;),
	    TP_printk("%s qpn=%u %s -> %s cause=%s from=%pS",
		      __get_str(dev), __entry->qpn,
		      sroce_show_qp_state(__entry->old),
		      sroce_show_qp_state(__entry->new),
		      sroce_show_qp_cause(__entry->event), (void *)__entry->caller));

TRACE_EVENT(sroce_retransmit,
	    TP_PROTO(const struct sroce_qp *qp, u32 psn, u32 max_psn,
		     enum sroce_retry_why why),
	    TP_ARGS(qp, psn, max_psn, why),
	    TP_STRUCT__entry(__string(dev, dev_name(&qp->ibqp.device->dev))
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(u32, max_psn)
			     __field(u8, why)
			     __field(u8, left)),
	    TP_fast_assign(SROCE_TP_QP_PSN_ASSIGN(psn);
			   __entry->max_psn = max_psn;
			   __entry->why = why;
			   __entry->left = why == SROCE_RETRY_RNR ?
					   qp->comp.rnr_left : qp->comp.retry_left;),
	    TP_printk(SROCE_TP_QP_PSN_FMT " max_psn=%u left=%u reason=%s",
		      __get_str(dev), __entry->qpn, __entry->psn, __entry->max_psn,
		      __entry->left, sroce_show_retry(__entry->why)));

TRACE_EVENT(sroce_ack_timeout,
	    TP_PROTO(const struct sroce_qp *qp),
	    TP_ARGS(qp),
	    TP_STRUCT__entry(__string(dev, dev_name(&qp->ibqp.device->dev))
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(u8, retry_left)),
	    TP_fast_assign(SROCE_TP_QP_PSN_ASSIGN(qp->comp.psn);
			   __entry->retry_left = qp->comp.retry_left;),
	    TP_printk(SROCE_TP_QP_PSN_FMT " retry_left=%u",
		      __get_str(dev), __entry->qpn, __entry->psn,
		      __entry->retry_left));

DECLARE_EVENT_CLASS(sroce_nak_class,
		    TP_PROTO(const struct sroce_qp *qp, u8 syndrome, u32 psn),
		    TP_ARGS(qp, syndrome, psn),
		    TP_STRUCT__entry(__string(dev, dev_name(&qp->ibqp.device->dev))
				     __field(u32, qpn)
				     __field(u32, psn)
				     __field(u8, syndrome)),
		    TP_fast_assign(SROCE_TP_QP_PSN_ASSIGN(psn);
				   __entry->syndrome = syndrome;),
		    TP_printk(SROCE_TP_QP_PSN_FMT " %s %s%u",
			      __get_str(dev), __entry->qpn, __entry->psn,
			      sroce_trace_is_rnr(__entry->syndrome) ? "rnr" :
			      sroce_show_nak_code(__entry->syndrome & SROCE_AETH_CODE_MASK),
			      sroce_trace_is_rnr(__entry->syndrome) ? "timer=" : "code=",
			      __entry->syndrome & SROCE_AETH_CODE_MASK));

DEFINE_EVENT(sroce_nak_class, sroce_nak_sent,
	     TP_PROTO(const struct sroce_qp *qp, u8 syndrome, u32 psn),
	     TP_ARGS(qp, syndrome, psn));

DEFINE_EVENT(sroce_nak_class, sroce_nak_rcvd,
	     TP_PROTO(const struct sroce_qp *qp, u8 syndrome, u32 psn),
	     TP_ARGS(qp, syndrome, psn));

TRACE_EVENT(sroce_rnr_wait,
	    TP_PROTO(const struct sroce_qp *qp, u32 usecs),
	    TP_ARGS(qp, usecs),
	    TP_STRUCT__entry(__string(dev, dev_name(&qp->ibqp.device->dev))
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(u32, usecs)),
	    TP_fast_assign(SROCE_TP_QP_PSN_ASSIGN(qp->comp.psn);
			   __entry->usecs = usecs;),
	    TP_printk(SROCE_TP_QP_PSN_FMT " wait=%uus",
		      __get_str(dev), __entry->qpn, __entry->psn,
		      __entry->usecs));

TRACE_EVENT(sroce_rnr_timer,
	    TP_PROTO(const struct sroce_qp *qp),
	    TP_ARGS(qp),
	    TP_STRUCT__entry(__string(dev, dev_name(&qp->ibqp.device->dev))
			     __field(u32, qpn)),
	    TP_fast_assign(SROCE_TP_QP_ASSIGN;),
	    TP_printk("%s qpn=%u", __get_str(dev), __entry->qpn));

#undef SROCE_COUNTER

#endif /* SROCE_TRACE_H */

/* Module code: define_trace.h includes this file again by its path. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
