/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * counters.h - event counters of a device (shown by "rdma statistic" and in
 * sysfs hw_counters) and the module-wide object accounting that tests use to
 * prove teardown leaves nothing behind.
 */
#ifndef SROCE_COUNTERS_H
#define SROCE_COUNTERS_H

#include <linux/percpu.h>
#include <linux/types.h>

struct ib_device;
struct rdma_hw_stats;
struct sroce_dev;

/*
 * SROCE_COUNTERS - the per-device event counters, in order: an entry
 * SROCE_COUNTER(ID, label) each, in parentheses.  enum sroce_counter
 * (SROCE_CNT_<ID>), the names "rdma statistic" and sysfs hw_counters show
 * (counters.c) and the reasons the sroce_drop tracepoint prints (trace.h)
 * are all made from this one list, so that a counter and its name, or a
 * drop's reason and its counter, cannot disagree.  A user defines
 * SROCE_COUNTER(), expands SROCE_LIST_EACH(SROCE_COUNTERS) and undefines
 * it again.
 *
 * rx_packets: RoCEv2 datagrams received for this device
 * rx_drop_short: dropped, too short for its headers and ICRC
 * rx_drop_header: dropped, malformed IP/UDP/BTH (version, lengths, pad
 *	count)
 * rx_drop_icrc: dropped, bad ICRC
 * rx_drop_opcode: dropped, unknown or unsupported opcode
 * rx_drop_no_qp: dropped, no such destination QP
 * rx_drop_qp_type: dropped, opcode of another transport than the QP's
 * rx_drop_qp_state: dropped, QP not in a state to receive
 * rx_drop_address: dropped, RC/UC packet from another address than the
 *	QP's peer
 * rx_drop_pkey: dropped, P_Key mismatch
 * rx_drop_qkey: dropped, Q_Key mismatch (UD)
 * rx_drop_no_recv: dropped, UD/UC message with no receive WQE
 * rx_drop_uc: dropped, UC packet of a message already broken
 * rx_drop_resp: dropped, response or ACK the requester did not expect
 * rx_drop_gap: dropped, READ or atomic response beyond responses still
 *	missing (go-back-N: the requester asks again from the first missing
 *	one, once until something is acknowledged, and drops what arrives
 *	past it meanwhile)
 * rx_dup_resp: dropped, response or ACK for a PSN already acknowledged (a
 *	duplicate: after a go-back, both transmissions are answered)
 * rx_drop_dup: duplicate request dropped (after re-ACKing)
 * stale_read_replays: duplicate READs (counted in rx_drop_dup) whose
 *	answer was given up because the memory they read was gone: its owner
 *	let it go after the READ was answered, so nobody waits for a second
 *	answer; also those the checks of a new READ now refuse (the QP's
 *	remote read access was taken away since)
 * rejected_read_replays: duplicate READs (counted in rx_drop_dup) not
 *	answered because they ask for something else than the request they
 *	duplicate: another R_Key, a VA not moved on by the packets before
 *	their PSN, or more than the rest of its data
 * rx_drop_mcast: dropped, multicast datagram for a group no QP of this
 *	device is attached to
 * rx_drop_seq: dropped without a word, RC request past the expected PSN
 *	while a PSN sequence or RNR NAK is outstanding (the packet that
 *	caused the NAK is counted in seq_naks_sent or rnr_naks_sent)
 * rp_cnp_ignored: congestion notification packets (CNPs) received and not
 *	acted on: the reaction point is off (cc/rp_enable), or the CNP names
 *	no QP of this device that sends, or comes from another address than
 *	a connected QP's peer
 * rp_cnp_handled: CNPs the reaction point took (cc.c)
 * rp_rate_cuts: rate cuts they caused (at most one per QP per
 *	rate_reduce_monitor_period)
 * np_ecn_marked_roce_packets: packets received marked CE (congestion
 *	experienced) that passed every check of the receive path for their QP
 * np_cnp_sent: CNPs the notification point sent for them (cnp.c)
 * rx_ud_recv: UD datagrams that consumed a receive WQE (one per attached
 *	QP for multicast), with a successful or an error completion
 * rx_rc_uc_packets: RC and UC packets that passed every check of the
 *	receive path and reached their QP's responder or completer, whatever
 *	became of them there (used, or counted in rx_drop_dup, rx_drop_seq,
 *	rx_drop_uc, rx_drop_no_recv, rx_drop_resp, rx_drop_gap, rx_dup_resp
 *	or a NAK's counter); a packet the receive path drops (rx_drop_*,
 *	including a responder's QP being destroyed) is not here
 * tx_packets: packets sent
 * tx_errors: packets that could not be sent (no route, no memory)
 * retransmits: go-back-N retransmissions started
 * timeouts: local ACK timeouts
 * seq_naks_sent: PSN sequence error NAKs sent (one held back behind READ
 *	responses counts too, even when the missing packet arrives and an
 *	ACK replaces it)
 * seq_naks_rcvd: PSN sequence error NAKs received
 * rnr_naks_sent: RNR NAKs sent
 * rnr_naks_rcvd: RNR NAKs received
 * err_naks_sent: other NAKs sent (invalid request, remote access, remote
 *	operational)
 * err_naks_rcvd: other NAKs received
 * link_downed: port went from ACTIVE to DOWN
 * cq_overflows: completions lost because their CQ was full (or its
 *	process had published an impossible consumer index); the first
 *	raises IB_EVENT_CQ_ERR and fails the QPs feeding the CQ
 * rx_drop_page_fault: dropped, UC or UD message, or READ or atomic
 *	response, for on-demand memory not present (odp.c); a fault is
 *	queued.  An RC request for such memory is RNR-NAKed (rnr_naks_sent)
 * odp_faults: page faults resolved for on-demand regions (each may bring
 *	in many pages)
 * odp_fault_errors: page faults that failed (memory the process does not
 *	have, or cannot give with the access asked): the access waiting for
 *	one completes in error
 * odp_invalidations: invalidations (the process unmapped, or the kernel
 *	moved, memory of an on-demand region) that took pages away
 *
 * Every packet sroce drops is counted where it is dropped: in an rx_drop_*
 * counter, rx_dup_resp, or, for an RC request it refuses with a NAK, in
 * the NAK's counter; a CNP in rp_cnp_ignored or rp_cnp_handled.  So
 * every datagram in rx_packets ends in exactly one of the receive path's
 * drop counters, rp_cnp_ignored, rp_cnp_handled, rx_drop_qkey, rx_drop_no_recv, rx_ud_recv
 * or rx_rc_uc_packets (a multicast datagram in one of them per attached QP).
 */
#define SROCE_COUNTERS (						\
	SROCE_COUNTER(RX_PACKETS, rx_packets)				\
	SROCE_COUNTER(RX_DROP_SHORT, rx_drop_short)			\
	SROCE_COUNTER(RX_DROP_HEADER, rx_drop_header)			\
	SROCE_COUNTER(RX_DROP_ICRC, rx_drop_icrc)			\
	SROCE_COUNTER(RX_DROP_OPCODE, rx_drop_opcode)			\
	SROCE_COUNTER(RX_DROP_NO_QP, rx_drop_no_qp)			\
	SROCE_COUNTER(RX_DROP_QP_TYPE, rx_drop_qp_type)			\
	SROCE_COUNTER(RX_DROP_QP_STATE, rx_drop_qp_state)		\
	SROCE_COUNTER(RX_DROP_ADDRESS, rx_drop_address)			\
	SROCE_COUNTER(RX_DROP_PKEY, rx_drop_pkey)			\
	SROCE_COUNTER(RX_DROP_QKEY, rx_drop_qkey)			\
	SROCE_COUNTER(RX_DROP_NO_RECV, rx_drop_no_recv)			\
	SROCE_COUNTER(RX_DROP_UC, rx_drop_uc)				\
	SROCE_COUNTER(RX_DROP_RESP, rx_drop_resp)			\
	SROCE_COUNTER(RX_DROP_GAP, rx_drop_gap)				\
	SROCE_COUNTER(RX_DUP_RESP, rx_dup_resp)				\
	SROCE_COUNTER(RX_DROP_DUP, rx_drop_dup)				\
	SROCE_COUNTER(STALE_READ_REPLAYS, stale_read_replays)		\
	SROCE_COUNTER(REJECTED_READ_REPLAYS, rejected_read_replays)	\
	SROCE_COUNTER(RX_DROP_MCAST, rx_drop_mcast)			\
	SROCE_COUNTER(RX_DROP_SEQ, rx_drop_seq)				\
	SROCE_COUNTER(RX_DROP_PAGE_FAULT, rx_drop_page_fault)		\
	SROCE_COUNTER(RP_CNP_IGNORED, rp_cnp_ignored)			\
	SROCE_COUNTER(RP_CNP_HANDLED, rp_cnp_handled)			\
	SROCE_COUNTER(RP_RATE_CUTS, rp_rate_cuts)			\
	SROCE_COUNTER(NP_ECN_MARKED, np_ecn_marked_roce_packets)	\
	SROCE_COUNTER(NP_CNP_SENT, np_cnp_sent)				\
	SROCE_COUNTER(RX_UD_RECV, rx_ud_recv)				\
	SROCE_COUNTER(RX_RC_UC_PACKETS, rx_rc_uc_packets)		\
	SROCE_COUNTER(TX_PACKETS, tx_packets)				\
	SROCE_COUNTER(TX_ERRORS, tx_errors)				\
	SROCE_COUNTER(RETRANSMITS, retransmits)				\
	SROCE_COUNTER(TIMEOUTS, timeouts)				\
	SROCE_COUNTER(SEQ_NAKS_SENT, seq_naks_sent)			\
	SROCE_COUNTER(SEQ_NAKS_RCVD, seq_naks_rcvd)			\
	SROCE_COUNTER(RNR_NAKS_SENT, rnr_naks_sent)			\
	SROCE_COUNTER(RNR_NAKS_RCVD, rnr_naks_rcvd)			\
	SROCE_COUNTER(ERR_NAKS_SENT, err_naks_sent)			\
	SROCE_COUNTER(ERR_NAKS_RCVD, err_naks_rcvd)			\
	SROCE_COUNTER(LINK_DOWNED, link_downed)				\
	SROCE_COUNTER(CQ_OVERFLOWS, cq_overflows)			\
	SROCE_COUNTER(ODP_FAULTS, odp_faults)				\
	SROCE_COUNTER(ODP_FAULT_ERRORS, odp_fault_errors)		\
	SROCE_COUNTER(ODP_INVALIDATIONS, odp_invalidations))

/* The entries of a parenthesised list such as SROCE_COUNTERS. */
#define SROCE_UNPAREN(...) __VA_ARGS__
#define SROCE_LIST_EACH(list) SROCE_UNPAREN(SROCE_UNPAREN list)

/*
 * enum sroce_counter - the per-device event counters: SROCE_CNT_<ID> for
 * each entry of SROCE_COUNTERS, in its order, then SROCE_CNT_MAX, their
 * number.
 */
#define SROCE_COUNTER(id, label) SROCE_CNT_##id,
enum sroce_counter {
	SROCE_LIST_EACH(SROCE_COUNTERS)
	SROCE_CNT_MAX
};

#undef SROCE_COUNTER

struct sroce_stats {
	u64 cnt[SROCE_CNT_MAX];
};

/**
 * enum sroce_obj - object kinds counted module-wide
 * @SROCE_OBJ_DEV: devices (struct sroce_dev)
 * @SROCE_OBJ_UCONTEXT: user contexts
 * @SROCE_OBJ_PD: protection domains
 * @SROCE_OBJ_NETNS_SOCKETS: namespaces with open UDP 4791 sockets
 * @SROCE_OBJ_CQ: completion queues
 * @SROCE_OBJ_QP: queue pairs
 * @SROCE_OBJ_SRQ: shared receive queues
 * @SROCE_OBJ_MR: memory regions
 * @SROCE_OBJ_AH: address handles
 * @SROCE_OBJ_MW: memory windows
 * @SROCE_OBJ_MCAST: multicast groups with QPs attached
 * @SROCE_OBJ_DM: device memory allocations
 * @SROCE_OBJ_XRCD: XRC domains
 * @SROCE_OBJ_MAX: number of kinds
 *
 * Read through debugfs (sroce/objects); after a test tears everything down
 * every count must be back to zero.
 */
enum sroce_obj {
	SROCE_OBJ_DEV,
	SROCE_OBJ_UCONTEXT,
	SROCE_OBJ_PD,
	SROCE_OBJ_NETNS_SOCKETS,
	SROCE_OBJ_CQ,
	SROCE_OBJ_QP,
	SROCE_OBJ_SRQ,
	SROCE_OBJ_MR,
	SROCE_OBJ_AH,
	SROCE_OBJ_MW,
	SROCE_OBJ_MCAST,
	SROCE_OBJ_DM,
	SROCE_OBJ_XRCD,
	SROCE_OBJ_MAX
};

/**
 * enum sroce_global_counter - events that belong to no device
 * @SROCE_GCNT_RX_NO_DEVICE: datagrams to UDP 4791 that arrived on a netdev
 *	carrying no sroce device, dropped
 * @SROCE_GCNT_MAX: number of counters
 */
enum sroce_global_counter {
	SROCE_GCNT_RX_NO_DEVICE,
	SROCE_GCNT_MAX
};

/* Any context. */
#define sroce_count(sdev, c) this_cpu_inc((sdev)->stats->cnt[c])

int sroce_counters_init(void);
void sroce_counters_uninit(void);
struct sroce_stats __percpu *sroce_stats_alloc(void);
void sroce_stats_free(struct sroce_stats __percpu *stats);
void sroce_obj_created(enum sroce_obj kind);
void sroce_obj_destroyed(enum sroce_obj kind);
void sroce_global_count(enum sroce_global_counter c);
struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port_num);
int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port_num, int index);

#endif /* SROCE_COUNTERS_H */
