// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cq_ts.c - sroce_rc_test: completion timestamps of extended CQs
 * (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP and _WALLCLOCK) and the device
 * clock of ibv_query_rt_values_ex(), against the host's own clocks.
 */

#include <time.h>

#include "rc.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* An extended CQ with both timestamps; 1 if the device has none. */
static int ts_cq(struct dev *d, struct ibv_cq_ex **cqx)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 16,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};

	*cqx = ibv_create_cq_ex(d->ctx, &a);
	if (!*cqx && errno == EOPNOTSUPP)
		return 1;
	CHECK(*cqx, "ibv_create_cq_ex(%s, timestamps): %s", d->name, strerror(errno));
	track(R_CQ, ibv_cq_ex_to_cq(*cqx));
	return 0;
}

struct stamp {
	uint64_t ts, wall;
};

/* The next completion of @cqx is @wr_id's, successful; its times in @st. */
static int ts_poll(struct ibv_cq_ex *cqx, uint64_t wr_id, struct stamp *st, const char *what)
{
	enum ibv_wc_status s;
	uint64_t id;

	TRY(cqx_start(cqx, what));
	id = cqx->wr_id;
	s = cqx->status;
	st->ts = ibv_wc_read_completion_ts(cqx);
	st->wall = ibv_wc_read_completion_wallclock_ns(cqx);
	ibv_end_poll(cqx);
	CHECK(id == wr_id && s == IBV_WC_SUCCESS, "%s: wr_id %llu, status %s", what,
	      (unsigned long long)id, ibv_wc_status_str(s));
	return 0;
}

/* @v within [@lo, @hi]. */
static int within(uint64_t v, uint64_t lo, uint64_t hi, const char *what)
{
	CHECK(lo <= v && v <= hi, "%s %llu outside [%llu, %llu]", what, (unsigned long long)v,
	      (unsigned long long)lo, (unsigned long long)hi);
	return 0;
}

/*
 * The device clock is CLOCK_MONOTONIC_RAW in nanoseconds (hca_core_clock
 * 1 GHz, a 64-bit timestamp mask): a SEND's receive and send completions
 * carry device times and wall times between the host's readings before
 * the post and after the polls, the receive's no later than the send's
 * (its ACK completes the send), and the device clock read through
 * ibv_query_rt_values_ex() lies between them too.
 */
int case_cq_timestamps(void)
{
	struct ibv_device_attr_ex ax = {};
	struct ibv_values_ex rt = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_cq_ex *ca, *cb;
	uint64_t raw0, real0, raw1, real1;
	struct stamp snd, rcv;
	struct buf src, dst;
	struct qp_conf c;
	struct pair p;
	int i, err;

	err = ibv_query_device_ex(devs[0].ctx, NULL, &ax);
	CHECK(!err, "ibv_query_device_ex: %s", estr(err));
	if (!ax.completion_timestamp_mask)
		return skipf("no completion timestamps (completion_timestamp_mask 0)");
	CHECK(ax.hca_core_clock == 1000000 && ax.completion_timestamp_mask == UINT64_MAX,
	      "hca_core_clock %llu kHz, timestamp mask 0x%llx: not the 1 GHz, 64-bit clock",
	      (unsigned long long)ax.hca_core_clock,
	      (unsigned long long)ax.completion_timestamp_mask);
	if (ts_cq(&devs[0], &ca) || ts_cq(&devs[1], &cb))
		return skipf("the device refuses CQs with timestamps");
	conf_init(&c);
	c.scq[0] = c.rcq[0] = ibv_cq_ex_to_cq(ca);
	c.scq[1] = c.rcq[1] = ibv_cq_ex_to_cq(cb);
	TRY(pair_up(&p, &c));
	TRY(buf_new(&src, &devs[0], 4096, IBV_ACCESS_LOCAL_WRITE));
	TRY(buf_new(&dst, &devs[1], 4096, IBV_ACCESS_LOCAL_WRITE));
	for (i = 0; i < 3; i++) {
		pattern(src.p, 4096, (uint32_t)i);
		raw0 = clock_ns(CLOCK_MONOTONIC_RAW);
		real0 = clock_ns(CLOCK_REALTIME);
		TRY(post_recv_buf(&p.b, 10 + i, &dst, 0, 4096));
		TRY(post_send_buf(&p.a, 20 + i, IBV_WR_SEND, &src, 4096, 0));
		TRY(ts_poll(cb, 10 + i, &rcv, "the receive"));
		TRY(ts_poll(ca, 20 + i, &snd, "the send"));
		err = ibv_query_rt_values_ex(devs[0].ctx, &rt);
		raw1 = clock_ns(CLOCK_MONOTONIC_RAW);
		real1 = clock_ns(CLOCK_REALTIME);
		TRY(check_buf(&dst, 0, src.p, 4096, "a SEND with timestamps"));
		TRY(within(rcv.ts, raw0, raw1, "the receive's device time"));
		TRY(within(snd.ts, rcv.ts, raw1, "the send's device time"));
		TRY(within(rcv.wall, real0, real1, "the receive's wall time"));
		TRY(within(snd.wall, rcv.wall, real1, "the send's wall time"));
		CHECK(!err && (rt.comp_mask & IBV_VALUES_MASK_RAW_CLOCK),
		      "ibv_query_rt_values_ex: %s, comp_mask 0x%x", estr(err), rt.comp_mask);
		CHECK(rt.raw_clock.tv_sec == 0, "raw_clock.tv_sec %lld, not 0 (the count is in tv_nsec)",
		      (long long)rt.raw_clock.tv_sec);
		TRY(within((uint64_t)rt.raw_clock.tv_nsec, snd.ts, raw1, "the device clock"));
	}
	return 0;
}
