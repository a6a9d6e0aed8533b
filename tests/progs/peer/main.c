// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_peer - plays the far end of an RC or UC connection packet by packet.
 *
 * usage: sroce_peer -d DEV -g GIDINDEX -t VICTIM_IP -a PEER_IP [-N NETNS]
 *                   [-s NAME[,NAME...]] [-q QUIET_MS] [-T TIMEOUT_MS] [-v]
 *        sroce_peer -l
 *
 * The victim is an RC (or UC) QP on the sroce device DEV, made through
 * libibverbs (PD, CQ, memory regions with known contents, receive WQEs as
 * the scenario wants), brought to RTS with its destination = PEER_IP (GID index
 * GIDINDEX is its own address, VICTIM_IP) and a QPN the peer claims, path
 * MTU 1024.  The peer is a plain UDP socket bound to PEER_IP port 4791,
 * opened inside the network namespace NETNS (a path such as
 * /run/netns/NAME; sroce itself holds UDP 4791 in its netdev's namespace,
 * so the peer must live elsewhere).  The peer builds every header and the
 * ICRC itself (roce_wire.h) and checks each packet sroce answers with:
 * opcode, PSN, destination QP, AETH syndrome and MSN, payload bytes; and,
 * over IPv6 where the whole pseudo-header is known, the ICRC (over IPv4
 * the IP ID sroce's packets carry is not visible to a UDP socket).
 *
 * Two halves.  In the first the victim is the responder: the peer sends
 * requests (duplicates, gaps, bad keys, opcodes out of sequence, ...) and
 * checks each packet sroce answers with, as above.  In the second (the
 * scenarios named req_*) the victim is the requester: it posts SENDs,
 * WRITEs, READs and atomics to the peer, which checks every request sroce
 * sends (opcode, PSN, AckReq, RETH or AtomicETH, payload bytes, a resend
 * byte for byte the same as the first transmission and no sooner than the
 * timer allows, by the socket's receive timestamps) and answers with the
 * ACKs, NAKs, READ responses and atomic ACKs the scenario wants: coalesced
 * ACKs, silence (local ACK timeout, retries exhausted), PSN sequence, RNR
 * and remote error NAKs, ACKs for PSNs never sent or long acknowledged,
 * READ responses with a gap or of the wrong length, a plain ACK for an
 * atomic, a READ response acknowledging the SENDs before it.  In the uc_*
 * scenarios the victim is a UC QP: messages cut short by lost packets,
 * no receive posted, bad keys, a SEND too long, a repeated Only, other
 * transports' opcodes (the peer checks that sroce answers none of them),
 * and the victim as a UC requester.
 *
 * Each scenario runs on a fresh victim QP and CQ and prints one line,
 * "NAME: pass" or "NAME: FAIL what differed".  Besides the packets it
 * checks the victim's completions, its QP state (ibv_query_qp) and async
 * events where the scenario makes them, and the device's counters
 * (sysfs hw_counters, what "rdma statistic show link DEV/1" prints): every
 * counter in cnt_names moves by exactly what the scenario says (zero when
 * it says nothing), rx_packets by the datagrams the peer sent and
 * tx_packets by the ones it received.  So the device must be idle but for
 * this program.  req_ack_timeout writes the module parameter
 * /sys/module/sroce/parameters/min_ack_timeout and puts its value back.
 * Exit status 0 if every scenario passed, 1 otherwise, 2 on
 * a usage or setup error.
 */

#include "peer.h"

struct options opt = { .gid_index = -1, .quiet_ms = 1000, .timeout_ms = 10000 };

/* A requester scenario's attributes: timeout code, retry_cnt, rnr_retry. */
#define REQ_ATTRS(t, r, n) .req_attrs = true, .timeout = (t), .retry_cnt = (r), .rnr_retry = (n)

static const struct scenario {
	const char *name;
	int (*run)(const struct vconf *c);
	struct vconf conf;
	const char *counters;	/* "name=N ...": how they must move (or cnt_want) */
} scenarios[] = {
	{ "read_replay_new_read", sc_read_replay_new_read,
	  { .epsn = 0x1000, .rd_atomic = 1 }, "rx_drop_dup=1" },
	{ "atomics_behind_read", sc_atomics_behind_read,
	  { .epsn = 0x1800, .rd_atomic = 3, .rate_kbps = 4000 }, "" },
	{ "fatal_nak_behind_seq_nak", sc_fatal_nak_behind_seq_nak,
	  { .epsn = 0x1c00, .rd_atomic = 1, .rate_kbps = 1000 },
	  "seq_naks_sent=1 err_naks_sent=1" },
	{ "reaimed_read_over_limit", sc_reaimed_read_over_limit,
	  { .epsn = 0x1e00, .rd_atomic = 1 }, NULL /* cnt_want */ },
	{ "dup_send", sc_dup_send, { .epsn = 0x2000, .nrecv = 2 }, "rx_drop_dup=1" },
	{ "dup_middle", sc_dup_middle, { .epsn = 0x2100, .nrecv = 1, .recv_len = 3 * PMTU },
	  "rx_drop_dup=2" },
	{ "dup_read", sc_dup_read, { .epsn = 0xfffffe, .rd_atomic = 2, .nrecv = 1 },
	  "rx_drop_dup=2" },
	{ "dup_read_stale", sc_dup_read_stale, { .epsn = 0x2200, .rd_atomic = 1, .nrecv = 1 },
	  "rx_drop_dup=1 stale_read_replays=1" },
	{ "dup_read_mismatch", sc_dup_read_mismatch,
	  { .epsn = 0xfffffe, .rd_atomic = 1, .nrecv = 1 }, "rx_drop_dup=5 rejected_read_replays=4" },
	{ "dup_read_no_access", sc_dup_read_no_access,
	  { .epsn = 0x2300, .rd_atomic = 1, .nrecv = 1 },
	  "rx_drop_dup=1 stale_read_replays=1 err_naks_sent=1" },
	{ "seq_gap", sc_seq_gap, { .epsn = 0x3000, .nrecv = 4 },
	  "seq_naks_sent=2 rx_drop_seq=2" },
	{ "write_bad_rkey", sc_write_bad_rkey, { .epsn = 0x4000, .nrecv = 1 },
	  "err_naks_sent=1" },
	{ "read_past_end", sc_read_past_end, { .epsn = 0x4100, .nrecv = 1 }, "err_naks_sent=1" },
	{ "write_no_remote_write", sc_write_no_remote_write, { .epsn = 0x4200, .nrecv = 1 },
	  "err_naks_sent=1" },
	{ "write_middle_alone", sc_write_middle_alone, { .epsn = 0x4300, .nrecv = 1 },
	  "err_naks_sent=1" },
	{ "send_last_alone", sc_send_last_alone, { .epsn = 0x4400, .nrecv = 1 },
	  "err_naks_sent=1" },
	{ "write_len_mismatch", sc_write_len_mismatch, { .epsn = 0x4500, .nrecv = 1 },
	  "err_naks_sent=1" },
	{ "write_first_pad", sc_write_first_pad, { .epsn = 0x4600, .nrecv = 1 },
	  "err_naks_sent=1" },
	{ "send_too_long", sc_send_too_long, { .epsn = 0x4700, .nrecv = 2, .recv_len = 64 },
	  "err_naks_sent=1" },
	{ "rnr", sc_rnr, { .epsn = 0x5000, .min_rnr_timer = 14 },
	  "rnr_naks_sent=2 rx_drop_seq=1" },
	{ "atomics", sc_atomics, { .epsn = 0xfffffe, .rd_atomic = 2 }, "rx_drop_dup=2" },
	{ "atomic_write", sc_atomic_write, { .epsn = 0x5080, .rd_atomic = 2 },
	  "rx_drop_dup=2 err_naks_sent=1" },
	{ "flush", sc_flush, { .epsn = 0x50c0, .rd_atomic = 2 }, "rx_drop_dup=2" },
	{ "flush_persistent", sc_flush_persistent, { .epsn = 0x50d0, .rd_atomic = 2 },
	  "err_naks_sent=1" },
	{ "flush_bad_level", sc_flush_bad_level, { .epsn = 0x50e0, .rd_atomic = 2 },
	  "err_naks_sent=1" },
	{ "flush_pmem", sc_flush_pmem, { .epsn = 0x50f0, .rd_atomic = 2 }, "" },
	{ "cnp", sc_cnp, { .epsn = 0x5100, .nrecv = 1 }, "rp_cnp_handled=1 rp_rate_cuts=1 rx_drop_short=1" },
	/* the victim as the requester */
	{ "req_ack_coalesced", sc_req_ack_coalesced,
	  { .sq_psn = 0xfffffd, REQ_ATTRS(19, 7, 7) }, "" },
	{ "req_ack_timeout", sc_req_ack_timeout, { .sq_psn = 0x6000, REQ_ATTRS(16, 7, 7) },
	  NULL /* cnt_want: timeouts=retransmits=the copies the peer saw, 2 or more */ },
	{ "req_retry_exceeded", sc_req_retry_exceeded, { .sq_psn = 0x6100, REQ_ATTRS(12, 2, 7) },
	  "timeouts=3 retransmits=2" },
	{ "req_nak_psn_seq", sc_req_nak_psn_seq, { .sq_psn = 0xfffffe, REQ_ATTRS(19, 7, 7) },
	  "seq_naks_rcvd=1 retransmits=1" },
	{ "req_rnr_nak", sc_req_rnr_nak, { .sq_psn = 0x6200, REQ_ATTRS(19, 7, 2) },
	  "rnr_naks_rcvd=5 retransmits=4" },
	{ "req_rnr_late", sc_req_rnr_late, { .sq_psn = 0x6280, REQ_ATTRS(18, 3, 7) },
	  NULL /* cnt_want: rnr_naks_rcvd, timeouts, retransmits as the peer saw them */ },
	{ "req_nak_remote_access", sc_req_nak_remote_access,
	  { .sq_psn = 0x6300, REQ_ATTRS(19, 7, 7) }, "err_naks_rcvd=1" },
	{ "req_nak_invalid_request", sc_req_nak_invalid_request,
	  { .sq_psn = 0x6400, REQ_ATTRS(19, 7, 7) }, "err_naks_rcvd=1" },
	{ "req_nak_remote_op", sc_req_nak_remote_op, { .sq_psn = 0x6500, REQ_ATTRS(19, 7, 7) },
	  "err_naks_rcvd=1" },
	{ "req_ack_unsent_psn", sc_req_ack_unsent_psn, { .sq_psn = 0x6600, REQ_ATTRS(19, 7, 7) },
	  "rx_drop_resp=2 rx_dup_resp=2" },
	{ "req_read_response", sc_req_read_response, { .sq_psn = 0xfffffc, REQ_ATTRS(16, 7, 7) },
	  "retransmits=3 timeouts=2 rx_drop_resp=2 rx_drop_gap=1" },
	{ "req_atomic_response", sc_req_atomic_response,
	  { .sq_psn = 0x6700, REQ_ATTRS(19, 7, 7) }, "retransmits=1" },
	{ "req_implicit_ack_by_read_response", sc_req_implicit_ack_by_read_response,
	  { .sq_psn = 0x6800, REQ_ATTRS(19, 7, 7) }, "" },
	/* UC (receives of 3 KiB overlap the next slot: each is checked before the next fills) */
	{ "uc_lost_middle", sc_uc_lost_middle,
	  { .uc = true, .epsn = 0xfffffe, .nrecv = 2, .recv_len = 3 * PMTU }, "rx_drop_uc=1" },
	{ "uc_interrupted", sc_uc_interrupted,
	  { .uc = true, .epsn = 0x7100, .nrecv = 2, .recv_len = 3 * PMTU }, "" },
	{ "uc_lost_first", sc_uc_lost_first, { .uc = true, .epsn = 0x7200 }, "rx_drop_uc=3" },
	{ "uc_no_recv", sc_uc_no_recv, { .uc = true, .epsn = 0x7300 },
	  "rx_drop_no_recv=3 rx_drop_uc=1" },
	{ "uc_bad_access", sc_uc_bad_access, { .uc = true, .epsn = 0x7400, .nrecv = 1 },
	  "rx_drop_uc=5" },
	{ "uc_send_too_long", sc_uc_send_too_long,
	  { .uc = true, .epsn = 0x7500, .nrecv = 2, .recv_len = 64 }, "rx_drop_uc=4" },
	{ "uc_dup_only", sc_uc_dup_only, { .uc = true, .epsn = 0x7600, .nrecv = 3 }, "" },
	{ "uc_foreign_opcodes", sc_uc_foreign_opcodes, { .uc = true, .epsn = 0x7700, .nrecv = 1 },
	  "rx_drop_qp_type=2 rx_drop_opcode=2" },
	{ "uc_req_messages", sc_uc_req_messages, { .uc = true, .sq_psn = 0xfffffe }, "" },
};
#define NSCEN (sizeof(scenarios) / sizeof(scenarios[0]))

/* Run scenario @idx on a fresh victim. */
static enum case_verdict run_scenario(size_t idx, char *msg, size_t len)
{
	const struct scenario *s = &scenarios[idx];
	long long before[NCNT];
	struct rsp junk;
	uint16_t jport;
	size_t jn;
	int rc;

	why[0] = 0;
	cnt_want[0] = 0;
	before[0] = -1;
	peer.qpn = 0x5e0000 + idx;
	tport = s->conf.uc ? UC_OPS : 0;
	vic_fill(idx);
	rc = vic_up(&s->conf);
	while (!rc && dgram_recv(junk.raw, sizeof(junk.raw), &jn, &jport, 0) > 0)
		;	/* nothing left over from an earlier scenario */
	why[0] = 0;
	peer.sent = peer.rcvd = peer.reordered = 0;
	if (!rc)
		rc = cnt_read(before);
	if (!rc) {
		vlog("%s: victim QPN 0x%06x, peer QPN 0x%06x\n", s->name, vic.qpn, peer.qpn);
		rc = s->run(&s->conf);
	}
	if (!rc)
		rc = expect_quiet("the scenario");
	if (!rc)
		rc = expect_no_wc("the scenario");
	if (!rc) {
		rc = cnt_check(before, cnt_want[0] ? cnt_want : s->counters);
	} else if (before[0] >= 0) {
		long long after[NCNT];

		if (!cnt_read(after))
			cnt_dump(before, after);
	}
	vic_down();
	if (peer.reordered)
		fprintf(stderr, "%s: %lu READ response packets came out of order\n", s->name,
			peer.reordered);
	if (!rc)
		return CASE_PASS;
	snprintf(msg, len, "%s", why[0] ? why : "(no reason recorded)");
	return CASE_FAIL;
}

static const char *scenario_name(size_t idx)
{
	return scenarios[idx].name;
}

static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr,
		"usage: sroce_peer -d DEV -g GIDINDEX -t VICTIM_IP -a PEER_IP [-N NETNS]\n"
		"                  [-P DAX_DEVICE] [-s NAME[,NAME...]] [-q QUIET_MS]\n"
		"                  [-T TIMEOUT_MS] [-v]\n"
		"       sroce_peer -l\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct runner r = {
		.ncases = NSCEN, .name = scenario_name, .run = run_scenario, .timed = true,
	};
	const char *victim_ip = NULL, *peer_ip = NULL;
	unsigned int i, j;
	int c;

	while ((c = getopt(argc, argv, "d:g:t:a:N:P:s:q:T:lv")) != -1) {
		switch (c) {
		case 'd': opt.dev = optarg; break;
		case 'g': opt.gid_index = atoi(optarg); break;
		case 't': victim_ip = optarg; break;
		case 'a': peer_ip = optarg; break;
		case 'N': opt.netns = optarg; break;
		case 'P': opt.pmem = optarg; break;
		case 's': r.only = optarg; break;
		case 'q': opt.quiet_ms = atoi(optarg); break;
		case 'T': opt.timeout_ms = atoi(optarg); break;
		case 'v': opt.verbose = true; break;
		case 'l':
			cases_list(&r);
			return 0;
		default: usage();
		}
	}
	if (!opt.dev || opt.gid_index < 0 || !victim_ip || !peer_ip || optind != argc)
		usage();
	if (r.only && !cases_wanted(&r))
		die("no scenario in '%s' (-l lists them)", r.only);
	if (wire_init())
		return 2;
	for (i = 0; i < 4; i++)
		for (j = 0; j < sizeof(msg[i]); j++)
			msg[i][j] = (uint8_t)(j * (i + 3) + 0x40 * i + 1);
	for (j = 0; j < sizeof(rdata); j++)
		rdata[j] = (uint8_t)(j * 11 + (j >> 8) * 5 + 0x33);
	peer_open(peer_ip, victim_ip);
	vic_open();
	cases_run(&r);
	printf("%u scenarios, %u passed, %u failed\n", r.ran, r.passed, r.failed);
	return r.failed ? 1 : 0;
}
