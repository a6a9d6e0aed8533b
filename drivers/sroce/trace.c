// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * trace.c - the tracepoints' definitions (trace.h), and the two functions
 * through which every dropped packet is counted and traced, so that each
 * sroce_drop event has its counter and each count its event.
 */
#include "sroce.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

/**
 * sroce_drop_pkt() - count and trace a received packet that is dropped
 * @pkt: the packet; its BTH, if it was long enough to have one, names the
 *	QP, opcode and PSN the event records
 * @why: the drop counter, which is also the event's reason
 *
 * The caller frees the packet (or leaves it to its caller).
 *
 * Context: Any context.
 */
void sroce_drop_pkt(const struct sroce_pkt *pkt, enum sroce_counter why)
{
	const struct sroce_bth *bth = pkt->bth;

	sroce_count(pkt->sdev, why);
	trace_sroce_drop(pkt->sdev, bth ? sroce_bth_qpn(bth) : 0,
			 sroce_trace_pkt_opcode(pkt),
			 bth ? sroce_bth_psn(bth) : 0, why);
}

/**
 * sroce_drop() - count and trace a drop no received packet stands for
 * @sdev: the device
 * @qpn: the QP of this device concerned
 * @psn: the PSN concerned, or 0
 * @why: the drop counter, which is also the event's reason
 *
 * For a packet that could not be sent (tx_errors: the sroce_tx event
 * before it shows the packet) and a READ answer given up while it was
 * being sent (stale_read_replays).
 *
 * Context: Any context.
 */
void sroce_drop(struct sroce_dev *sdev, u32 qpn, u32 psn,
		enum sroce_counter why)
{
	sroce_count(sdev, why);
	trace_sroce_drop(sdev, qpn, SROCE_TRACE_NO_OPCODE, psn, why);
}
