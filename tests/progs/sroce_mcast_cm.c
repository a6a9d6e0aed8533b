// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_mcast_cm - UD multicast through rdma_cm, sized the way programs
 * written for hardware size it: a receiver whose CQ is asked for fewer
 * entries than the receives it posts.
 *
 * usage: sroce_mcast_cm -b LOCAL_IP -m GROUP_IP [-s] [-n COUNT] [-c CQE]
 *                       [-l SIZE]
 *
 * Both ends resolve GROUP_IP from LOCAL_IP and join the group with
 * rdma_join_multicast(); the QP is rdma_cm's UD QP, created with
 * rdma_create_qp() on a CQ of CQE entries (default 2) the program makes
 * itself.
 *
 * Receiver (default): posts COUNT receives (default 4), joins, prints
 * "joined", then reads a line from stdin (the test writes one once the
 * sender is done: every datagram has arrived before the first poll, as on
 * a machine too busy to poll) and polls COUNT completions, each within 10
 * s.  Each must be a successful receive of SIZE bytes (default 64) after
 * the 40-byte GRH, whose bytes are the sender's pattern for its index; the
 * indices 0..COUNT-1 must each arrive once.  Prints "received COUNT of
 * COUNT, every byte checked".
 *
 * Sender (-s): joins, then sends COUNT datagrams of SIZE bytes to the
 * group, one at a time, each completed before the next; prints "sent
 * COUNT".
 *
 * Exit status 0 on success; 1 with "FAIL: ..." on stderr otherwise.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "common.h"

#define GRH_BYTES 40
#define MAX_COUNT 64
#define TIMEOUT_MS 10000

struct mc {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint8_t *buf;
	size_t slot;		/* bytes a receive slot takes: GRH + size */
	int count, cqe, size;
	struct sockaddr_storage local, group;
};

static void resolve(const char *ip, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST }, *res;

	if (getaddrinfo(ip, NULL, &hints, &res))
		die("not a numeric address: %s", ip);
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
}

/* The next rdma_cm event, which must be @want; acked by the caller. */
static struct rdma_cm_event *expect_event(struct mc *mc,
					  enum rdma_cm_event_type want)
{
	struct pollfd p = { .fd = mc->ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, TIMEOUT_MS) != 1)
		die("no rdma_cm event in %d ms (waiting for %s)", TIMEOUT_MS,
		    rdma_event_str(want));
	if (rdma_get_cm_event(mc->ec, &ev))
		die("rdma_get_cm_event: %s", strerror(errno));
	if (ev->event != want)
		die("rdma_cm event %s (status %d), expected %s",
		    rdma_event_str(ev->event), ev->status, rdma_event_str(want));
	return ev;
}

static void setup(struct mc *mc)
{
	struct ibv_qp_init_attr attr = { 0 };

	mc->ec = rdma_create_event_channel();
	if (!mc->ec)
		die("rdma_create_event_channel: %s", strerror(errno));
	if (rdma_create_id(mc->ec, &mc->id, NULL, RDMA_PS_UDP))
		die("rdma_create_id: %s", strerror(errno));
	if (rdma_resolve_addr(mc->id, (struct sockaddr *)&mc->local,
			      (struct sockaddr *)&mc->group, TIMEOUT_MS))
		die("rdma_resolve_addr: %s", strerror(errno));
	rdma_ack_cm_event(expect_event(mc, RDMA_CM_EVENT_ADDR_RESOLVED));

	mc->pd = ibv_alloc_pd(mc->id->verbs);
	if (!mc->pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	mc->cq = ibv_create_cq(mc->id->verbs, mc->cqe, NULL, NULL, 0);
	if (!mc->cq)
		die("ibv_create_cq(%d): %s", mc->cqe, strerror(errno));
	attr.qp_type = IBV_QPT_UD;
	attr.send_cq = mc->cq;
	attr.recv_cq = mc->cq;
	attr.cap.max_send_wr = 1;
	attr.cap.max_recv_wr = mc->count;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	if (rdma_create_qp(mc->id, mc->pd, &attr))
		die("rdma_create_qp: %s", strerror(errno));

	mc->slot = GRH_BYTES + mc->size;
	mc->buf = calloc(mc->count, mc->slot);
	if (!mc->buf)
		die("out of memory");
	mc->mr = rdma_reg_msgs(mc->id, mc->buf, mc->count * mc->slot);
	if (!mc->mr)
		die("rdma_reg_msgs: %s", strerror(errno));
}

static void join(struct mc *mc)
{
	struct rdma_cm_event *ev;

	if (rdma_join_multicast(mc->id, (struct sockaddr *)&mc->group, NULL))
		die("rdma_join_multicast: %s", strerror(errno));
	ev = expect_event(mc, RDMA_CM_EVENT_MULTICAST_JOIN);
	mc->remote_qpn = ev->param.ud.qp_num;
	mc->remote_qkey = ev->param.ud.qkey;
	mc->ah = ibv_create_ah(mc->pd, &ev->param.ud.ah_attr);
	rdma_ack_cm_event(ev);
	if (!mc->ah)
		die("ibv_create_ah for the group: %s", strerror(errno));
}

/* The next completion, within TIMEOUT_MS. */
static void next_wc(struct mc *mc, struct ibv_wc *wc)
{
	struct timespec t0, t;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(mc->cq, 1, wc);
		if (n < 0)
			die("ibv_poll_cq: %d", n);
		if (n == 1)
			return;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000 > TIMEOUT_MS)
			die("no completion in %d ms", TIMEOUT_MS);
		usleep(1000);
	}
}

/* Byte @i of datagram @idx. */
static uint8_t pattern(int idx, int i)
{
	return (uint8_t)(idx * 37 + i * 7 + 1);
}

static void receiver(struct mc *mc)
{
	int seen[MAX_COUNT] = { 0 };
	struct ibv_wc wc;
	char line[16];
	uint8_t *p;
	int i, k, idx;

	for (i = 0; i < mc->count; i++)
		if (rdma_post_recv(mc->id, (void *)(uintptr_t)i,
				   mc->buf + i * mc->slot, mc->slot, mc->mr))
			die("rdma_post_recv %d: %s", i, strerror(errno));
	join(mc);
	printf("joined\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		die("stdin closed before the sender was done");
	for (k = 0; k < mc->count; k++) {
		next_wc(mc, &wc);
		if (wc.status != IBV_WC_SUCCESS)
			die("receive %d: %s", k, ibv_wc_status_str(wc.status));
		if (wc.opcode != IBV_WC_RECV)
			die("receive %d: opcode %d", k, wc.opcode);
		if (wc.byte_len != mc->slot)
			die("receive %d: %u bytes, expected %zu", k, wc.byte_len, mc->slot);
		p = mc->buf + wc.wr_id * mc->slot + GRH_BYTES;
		idx = p[0];
		if (idx >= mc->count || seen[idx]++)
			die("receive %d: datagram index %d repeated or unknown", k, idx);
		for (i = 1; i < mc->size; i++)
			if (p[i] != pattern(idx, i))
				die("datagram %d: byte %d is 0x%02x, expected 0x%02x",
				    idx, i, p[i], pattern(idx, i));
	}
	if (ibv_poll_cq(mc->cq, 1, &wc) != 0)
		die("a completion more than the %d datagrams sent", mc->count);
	printf("received %d of %d, every byte checked\n", mc->count, mc->count);
}

static void sender(struct mc *mc)
{
	struct ibv_wc wc;
	uint8_t *p = mc->buf;
	int idx, i;

	join(mc);
	for (idx = 0; idx < mc->count; idx++) {
		p[0] = idx;
		for (i = 1; i < mc->size; i++)
			p[i] = pattern(idx, i);
		if (rdma_post_ud_send(mc->id, NULL, p, mc->size, mc->mr,
				      IBV_SEND_SIGNALED, mc->ah, mc->remote_qpn))
			die("rdma_post_ud_send %d: %s", idx, strerror(errno));
		next_wc(mc, &wc);
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_SEND)
			die("send %d: %s, opcode %d", idx,
			    ibv_wc_status_str(wc.status), wc.opcode);
	}
	printf("sent %d\n", mc->count);
}

static void teardown(struct mc *mc)
{
	rdma_leave_multicast(mc->id, (struct sockaddr *)&mc->group);
	ibv_destroy_ah(mc->ah);
	rdma_dereg_mr(mc->mr);
	rdma_destroy_qp(mc->id);
	ibv_destroy_cq(mc->cq);
	ibv_dealloc_pd(mc->pd);
	rdma_destroy_id(mc->id);
	rdma_destroy_event_channel(mc->ec);
	free(mc->buf);
}

int main(int argc, char **argv)
{
	struct mc mc = { .count = 4, .cqe = 2, .size = 64 };
	const char *local = NULL, *group = NULL;
	int send = 0, o;

	while ((o = getopt(argc, argv, "b:m:sn:c:l:")) != -1) {
		switch (o) {
		case 'b': local = optarg; break;
		case 'm': group = optarg; break;
		case 's': send = 1; break;
		case 'n': mc.count = atoi(optarg); break;
		case 'c': mc.cqe = atoi(optarg); break;
		case 'l': mc.size = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (!local || !group || mc.count < 1 || mc.count > MAX_COUNT ||
	    mc.cqe < 1 || mc.size < 1 || mc.size > 1024)
		goto usage;
	resolve(local, &mc.local);
	resolve(group, &mc.group);
	setup(&mc);
	if (send)
		sender(&mc);
	else
		receiver(&mc);
	teardown(&mc);
	return 0;
usage:
	fprintf(stderr, "usage: %s -b LOCAL_IP -m GROUP_IP [-s] [-n COUNT] [-c CQE] [-l SIZE]\n",
		argv[0]);
	return 2;
}
