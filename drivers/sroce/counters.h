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

/**
 * enum sroce_counter - per-device event counters
 * @SROCE_CNT_RX_PACKETS: RoCEv2 datagrams received for this device
 * @SROCE_CNT_RX_DROP_SHORT: dropped, too short for its headers and ICRC
 * @SROCE_CNT_RX_DROP_HEADER: dropped, malformed IP/UDP/BTH (version,
 *	lengths, pad count)
 * @SROCE_CNT_RX_DROP_ICRC: dropped, bad ICRC
 * @SROCE_CNT_RX_DROP_OPCODE: dropped, unknown or unsupported opcode
 * @SROCE_CNT_RX_DROP_NO_QP: dropped, no such destination QP
 * @SROCE_CNT_RX_DROP_QP_TYPE: dropped, opcode of another transport than the
 *	QP's
 * @SROCE_CNT_RX_DROP_QP_STATE: dropped, QP not in a state to receive
 * @SROCE_CNT_RX_DROP_ADDRESS: dropped, RC/UC packet from another address
 *	than the QP's peer
 * @SROCE_CNT_RX_DROP_PKEY: dropped, P_Key mismatch
 * @SROCE_CNT_RX_DROP_QKEY: dropped, Q_Key mismatch (UD)
 * @SROCE_CNT_RX_DROP_NO_RECV: dropped, UD/UC message with no receive WQE
 * @SROCE_CNT_RX_DROP_UC: dropped, UC packet of a message already broken
 * @SROCE_CNT_RX_DROP_RESP: dropped, response or ACK the requester did not
 *	expect
 * @SROCE_CNT_RX_DROP_GAP: dropped, READ or atomic response beyond responses
 *	still missing (go-back-N: the requester asks again from the first
 *	missing one, once until something is acknowledged, and drops what
 *	arrives past it meanwhile)
 * @SROCE_CNT_RX_DUP_RESP: dropped, response or ACK for a PSN already
 *	acknowledged (a duplicate: after a go-back, both transmissions are
 *	answered)
 * @SROCE_CNT_RX_DROP_DUP: duplicate request dropped (after re-ACKing)
 * @SROCE_CNT_STALE_READ_REPLAYS: duplicate READs (counted in rx_drop_dup)
 *	whose answer was given up because the memory they read was gone: its
 *	owner let it go after the READ was answered, so nobody waits for a
 *	second answer; also those the checks of a new READ now refuse (the
 *	QP's remote read access was taken away since)
 * @SROCE_CNT_REJECTED_READ_REPLAYS: duplicate READs (counted in rx_drop_dup)
 *	not answered because they ask for something else than the request
 *	they duplicate: another R_Key, a VA not moved on by the packets
 *	before their PSN, or more than the rest of its data
 * @SROCE_CNT_RX_DROP_MCAST: dropped, multicast datagram for a group no QP
 *	of this device is attached to
 * @SROCE_CNT_RX_DROP_SEQ: dropped without a word, RC request past the
 *	expected PSN while a PSN sequence or RNR NAK is outstanding (the
 *	packet that caused the NAK is counted in seq_naks_sent or
 *	rnr_naks_sent)
 * @SROCE_CNT_RP_CNP_IGNORED: congestion notification packets received; sroce
 *	does not throttle its sending yet, so this is all they do (the name
 *	is the one RoCE NICs give the reaction point's count)
 * @SROCE_CNT_RX_UD_RECV: UD datagrams that consumed a receive WQE (one per
 *	attached QP for multicast), with a successful or an error completion
 * @SROCE_CNT_RX_RC_UC_PACKETS: RC and UC packets that passed every check of
 *	the receive path and reached their QP's responder or completer,
 *	whatever became of them there (used, or counted in rx_drop_dup,
 *	rx_drop_seq, rx_drop_uc, rx_drop_no_recv, rx_drop_resp, rx_drop_gap,
 *	rx_dup_resp or a NAK's counter); a packet the receive path drops
 *	(rx_drop_*, including a responder's QP being destroyed) is not here
 * @SROCE_CNT_TX_PACKETS: packets sent
 * @SROCE_CNT_TX_ERRORS: packets that could not be sent (no route, no memory)
 * @SROCE_CNT_RETRANSMITS: go-back-N retransmissions started
 * @SROCE_CNT_TIMEOUTS: local ACK timeouts
 * @SROCE_CNT_SEQ_NAKS_SENT: PSN sequence error NAKs sent (one held back
 *	behind READ responses counts too, even when the missing packet arrives
 *	and an ACK replaces it)
 * @SROCE_CNT_SEQ_NAKS_RCVD: PSN sequence error NAKs received
 * @SROCE_CNT_RNR_NAKS_SENT: RNR NAKs sent
 * @SROCE_CNT_RNR_NAKS_RCVD: RNR NAKs received
 * @SROCE_CNT_ERR_NAKS_SENT: other NAKs sent (invalid request, remote access,
 *	remote operational)
 * @SROCE_CNT_ERR_NAKS_RCVD: other NAKs received
 * @SROCE_CNT_LINK_DOWNED: port went from ACTIVE to DOWN
 * @SROCE_CNT_CQ_OVERFLOWS: completions lost because their CQ was full (or
 *	its process had published an impossible consumer index); the first
 *	raises IB_EVENT_CQ_ERR and fails the QPs feeding the CQ
 * @SROCE_CNT_MAX: number of counters
 *
 * Every packet sroce drops is counted where it is dropped: in an rx_drop_*
 * counter, rx_dup_resp, or, for an RC request it refuses with a NAK, in
 * the NAK's counter; a CNP it takes no action on in rp_cnp_ignored.  So
 * every datagram in rx_packets ends in exactly one of the receive path's
 * drop counters, rp_cnp_ignored, rx_drop_qkey, rx_drop_no_recv, rx_ud_recv
 * or rx_rc_uc_packets (a multicast datagram in one of them per attached QP).
 */
enum sroce_counter {
	SROCE_CNT_RX_PACKETS,
	SROCE_CNT_RX_DROP_SHORT,
	SROCE_CNT_RX_DROP_HEADER,
	SROCE_CNT_RX_DROP_ICRC,
	SROCE_CNT_RX_DROP_OPCODE,
	SROCE_CNT_RX_DROP_NO_QP,
	SROCE_CNT_RX_DROP_QP_TYPE,
	SROCE_CNT_RX_DROP_QP_STATE,
	SROCE_CNT_RX_DROP_ADDRESS,
	SROCE_CNT_RX_DROP_PKEY,
	SROCE_CNT_RX_DROP_QKEY,
	SROCE_CNT_RX_DROP_NO_RECV,
	SROCE_CNT_RX_DROP_UC,
	SROCE_CNT_RX_DROP_RESP,
	SROCE_CNT_RX_DROP_GAP,
	SROCE_CNT_RX_DUP_RESP,
	SROCE_CNT_RX_DROP_DUP,
	SROCE_CNT_STALE_READ_REPLAYS,
	SROCE_CNT_REJECTED_READ_REPLAYS,
	SROCE_CNT_RX_DROP_MCAST,
	SROCE_CNT_RX_DROP_SEQ,
	SROCE_CNT_RP_CNP_IGNORED,
	SROCE_CNT_RX_UD_RECV,
	SROCE_CNT_RX_RC_UC_PACKETS,
	SROCE_CNT_TX_PACKETS,
	SROCE_CNT_TX_ERRORS,
	SROCE_CNT_RETRANSMITS,
	SROCE_CNT_TIMEOUTS,
	SROCE_CNT_SEQ_NAKS_SENT,
	SROCE_CNT_SEQ_NAKS_RCVD,
	SROCE_CNT_RNR_NAKS_SENT,
	SROCE_CNT_RNR_NAKS_RCVD,
	SROCE_CNT_ERR_NAKS_SENT,
	SROCE_CNT_ERR_NAKS_RCVD,
	SROCE_CNT_LINK_DOWNED,
	SROCE_CNT_CQ_OVERFLOWS,
	SROCE_CNT_MAX
};

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
