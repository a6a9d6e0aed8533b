// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cc.c - a QP's reaction point and pacer.
 *
 * The reaction point is DCQCN (Zhu et al., SIGCOMM 2015) with ConnectX's
 * parameters (cc.h).  A CNP cuts the current rate Rc by a share that grows
 * with alpha, the estimate of how congested the path is; alpha moves
 * towards 1 in each period of dce_tcp_rtt in which a CNP came and decays
 * towards 0 in the others.  Rate-increase events raise the rate again: one
 * every rpg_time_reset (the timer) and one every rpg_byte_reset bytes sent
 * (the byte counter), counted in stages since the last cut.  While both
 * stage counts are below rpg_threshold, Rc recovers halfway to the target
 * rate Rt (fast recovery); once one of them reaches it, Rt grows by
 * rpg_ai_rate first (additive increase), and by rpg_hai_rate times the
 * stages past the threshold once both have passed it (hyper increase).  A
 * QP whose rate is back at the maximum is no longer cut, nor paced unless
 * it has a rate limit.
 *
 * Nothing but the pacer runs on a timer: the periods that have passed are
 * applied when the QP next sends or takes a CNP (sroce_cc_advance()), so
 * an idle QP costs nothing.  The timer raises only a rate the QP used:
 * however many of its periods passed, they make one event if the pacer
 * held a sender back since the last, none otherwise (as TCP validates its
 * window, RFC 7661).  Hardware always sends at its rate; a soft device's
 * sender can fall short of it for want of CPU, and a rate raised meanwhile
 * would come all at once when the CPU is back (a UD flow behind a 20 Mb/s
 * bottleneck overflowed its queue, 2026-11-29).
 *
 * The pacer holds the QP to the lower of Rc and its rate limit, counting
 * the bytes of each packet from the BTH to the ICRC: a packet may go once
 * the time its predecessors took at that rate has passed.  A sender the
 * pacer holds back stops and is run again when the pacer's hrtimer fires.
 * A QP that let its time pass (an idle spell) may catch up 2 ms or 16 KiB's
 * time, whichever is longer; one the pacer held back, whose timer or
 * sender ran late, up to 20 ms: that time was the pacer's, not the QP's.
 */
#include <linux/math64.h>
#include <linux/sizes.h>

#include "sroce.h"

/* alpha and g^n as binary fractions of this many bits. */
#define SROCE_CC_ALPHA_SHIFT 20
#define SROCE_CC_ALPHA_ONE BIT_ULL(SROCE_CC_ALPHA_SHIFT)
/*
 * How far behind its schedule a paced QP may fall and catch up: 2 ms, or
 * the time 16 KiB take at its rate if that is longer (a few of its largest
 * packets: at low rates a late timer costs more than 2 ms).
 */
#define SROCE_CC_BURST_NS (2 * NSEC_PER_MSEC)
#define SROCE_CC_BURST_BYTES SZ_16K
/*
 * How far behind a QP the pacer held back may be made up: the hrtimer is
 * soft, and a busy CPU can run softirqs and the sender's work item several
 * milliseconds late (a WRITE flow limited to 20 Mb/s ran 6.5% short on a
 * slow emulated machine with the burst allowance alone).
 */
#define SROCE_CC_LATE_NS (20 * NSEC_PER_MSEC)
/* Byte-counter events applied at once; after more, the rate is back up. */
#define SROCE_CC_MAX_EVENTS 64

static u32 sroce_cc_p(struct sroce_qp *qp, enum sroce_cc_param p)
{
	return sroce_cc_param(sroce_qp_dev(qp), p);
}

static u32 sroce_cc_kbps(u64 mbps)
{
	return min_t(u64, mbps * 1000, U32_MAX);
}

/* The highest rate: rpg_max_rate, or the link's. */
static u32 sroce_cc_max_kbps(struct sroce_qp *qp)
{
	u32 mbps = sroce_cc_p(qp, SROCE_CC_RPG_MAX_RATE);

	if (!mbps)
		mbps = READ_ONCE(sroce_qp_dev(qp)->link_mbps);
	return sroce_cc_kbps(mbps);
}

/* (g/1024)^n as a fraction of SROCE_CC_ALPHA_ONE, by repeated squaring. */
static u64 sroce_cc_pow(u32 g, u64 n)
{
	u64 r = SROCE_CC_ALPHA_ONE;
	u64 b = (u64)g << (SROCE_CC_ALPHA_SHIFT - 10);

	while (n && r) {
		if (n & 1)
			r = (r * b) >> SROCE_CC_ALPHA_SHIFT;
		b = (b * b) >> SROCE_CC_ALPHA_SHIFT;
		n >>= 1;
	}
	return r;
}

/* The time @bytes take at @kbps. */
static u64 sroce_cc_ns(u64 bytes, u32 kbps)
{
	return div_u64(bytes * 8 * USEC_PER_SEC, kbps);
}

static void sroce_cc_update_pace(struct sroce_qp_cc *cc)
{
	u32 rate = cc->cut ? cc->rc_kbps : 0;

	if (cc->limit_kbps && (!rate || cc->limit_kbps < rate))
		rate = cc->limit_kbps;
	WRITE_ONCE(cc->pace_kbps, rate);
}

static void sroce_cc_recovered(struct sroce_qp_cc *cc, u32 max)
{
	cc->cut = false;
	cc->rc_kbps = max;
	cc->rt_kbps = max;
}

/* One rate-increase event, after its stage count went up. */
static void sroce_cc_increase(struct sroce_qp *qp, struct sroce_qp_cc *cc,
			      u32 max)
{
	u32 f = sroce_cc_p(qp, SROCE_CC_RPG_THRESHOLD);
	u32 hi = max(cc->t_stage, cc->b_stage);
	u32 lo = min(cc->t_stage, cc->b_stage);
	u64 rt = cc->rt_kbps;

	if (lo > f)
		rt += (u64)sroce_cc_kbps(sroce_cc_p(qp, SROCE_CC_RPG_HAI_RATE)) *
		      (lo - f);
	else if (hi >= f)
		rt += sroce_cc_kbps(sroce_cc_p(qp, SROCE_CC_RPG_AI_RATE));
	cc->rt_kbps = min_t(u64, rt, max);
	cc->rc_kbps = ((u64)cc->rc_kbps + cc->rt_kbps) / 2;
	if (cc->rc_kbps >= max - max / 1024)
		sroce_cc_recovered(cc, max);
}

/* The alpha periods that have ended: decay for each without a CNP. */
static void sroce_cc_advance_alpha(struct sroce_qp *qp, struct sroce_qp_cc *cc,
				   u64 now)
{
	u64 period = (u64)sroce_cc_p(qp, SROCE_CC_DCE_TCP_RTT) * NSEC_PER_USEC;
	u64 n;

	if (now < cc->alpha_ns + period)
		return;
	n = div64_u64(now - cc->alpha_ns, period);
	cc->alpha_ns += n * period;
	/* The period a CNP came in raised alpha when it came. */
	if (cc->cnp_in_period)
		n--;
	cc->cnp_in_period = false;
	cc->alpha = ((u64)cc->alpha *
		     sroce_cc_pow(sroce_cc_p(qp, SROCE_CC_DCE_TCP_G), n)) >>
		    SROCE_CC_ALPHA_SHIFT;
}

/* The timer's rate-increase events that are due. */
static void sroce_cc_advance_timer(struct sroce_qp *qp, struct sroce_qp_cc *cc,
				   u64 now, u32 max)
{
	u64 period = (u64)sroce_cc_p(qp, SROCE_CC_RPG_TIME_RESET) *
		     NSEC_PER_USEC;
	u64 n;

	if (now < cc->inc_ns + period)
		return;
	n = div64_u64(now - cc->inc_ns, period);
	cc->inc_ns += n * period;
	/*
	 * A QP that did not use its rate (no sender held back since the
	 * last event: an idle QP, or one whose sender is short of CPU) gets
	 * no more: once the CPU is back it would send at a rate the path
	 * never confirmed, all at once.  Nor does one that used it in some
	 * of the periods that passed: "held" says that it did in one, not in
	 * which, so one event is all it earns.  (Every period counting, a
	 * QP held once before its machine stalled for 2 s would come back
	 * 66 events higher: at full rate, unpaced.)
	 */
	if (!cc->held || !cc->cut)
		return;
	cc->held = false;
	cc->t_stage++;
	cc->time_inc = true;
	sroce_cc_increase(qp, cc, max);
}

/* Bring a cut QP's state up to @now; a reaction point turned off ends it. */
static void sroce_cc_advance(struct sroce_qp *qp, struct sroce_qp_cc *cc,
			     u64 now)
{
	u32 max = sroce_cc_max_kbps(qp);

	lockdep_assert_held(&cc->lock);
	if (!cc->cut)
		return;
	if (!sroce_cc_p(qp, SROCE_CC_RP_ENABLE) || cc->rt_kbps > max)
		sroce_cc_recovered(cc, max);
	else
		sroce_cc_advance_alpha(qp, cc, now);
	sroce_cc_advance_timer(qp, cc, now, max);
	sroce_cc_update_pace(cc);
}

/* Rate-increase stages begin anew at @now: at the first CNP, and at a cut. */
static void sroce_cc_new_stage(struct sroce_qp_cc *cc, u64 now)
{
	cc->t_stage = 0;
	cc->b_stage = 0;
	cc->bytes = 0;
	cc->time_inc = false;
	cc->held = false;
	cc->inc_ns = now;
}

/* The first CNP since the QP was last at full rate. */
static void sroce_cc_start(struct sroce_qp *qp, struct sroce_qp_cc *cc,
			   u64 now)
{
	u32 first = sroce_cc_p(qp, SROCE_CC_RATE_TO_SET_ON_FIRST_CNP);
	u32 max = sroce_cc_max_kbps(qp);

	cc->cut = true;
	cc->rc_kbps = first ? min(sroce_cc_kbps(first), max) : max;
	cc->rt_kbps = cc->rc_kbps;
	cc->alpha = ((u64)sroce_cc_p(qp, SROCE_CC_INITIAL_ALPHA_VALUE) <<
		     SROCE_CC_ALPHA_SHIFT) / 1024;
	cc->cnp_in_period = false;
	cc->alpha_ns = now;
	sroce_cc_new_stage(cc, now);
}

/* A CNP in this alpha period: alpha = g * alpha + (1 - g), once. */
static void sroce_cc_raise_alpha(struct sroce_qp *qp, struct sroce_qp_cc *cc)
{
	u64 g = sroce_cc_p(qp, SROCE_CC_DCE_TCP_G);

	if (cc->cnp_in_period)
		return;
	cc->cnp_in_period = true;
	cc->alpha = (g * cc->alpha + (1024 - g) * SROCE_CC_ALPHA_ONE) / 1024;
}

/* Rc -= Rc * alpha / 2^(rpg_gd - 10), within rpg_min_dec_fac and rpg_min_rate. */
static void sroce_cc_cut(struct sroce_qp *qp, struct sroce_qp_cc *cc, u64 now)
{
	u32 shift = sroce_cc_p(qp, SROCE_CC_RPG_GD) - 10 + SROCE_CC_ALPHA_SHIFT;
	u64 rc = cc->rc_kbps;
	u64 floor = div_u64(rc * sroce_cc_p(qp, SROCE_CC_RPG_MIN_DEC_FAC), 100);

	if (sroce_cc_p(qp, SROCE_CC_CLAMP_TGT_RATE) ||
	    (sroce_cc_p(qp, SROCE_CC_CLAMP_TGT_RATE_AFTER_TIME_INC) &&
	     cc->time_inc))
		cc->rt_kbps = rc;
	rc -= (rc * cc->alpha) >> shift;
	rc = max3(rc, floor,
		  (u64)sroce_cc_kbps(sroce_cc_p(qp, SROCE_CC_RPG_MIN_RATE)));
	cc->rc_kbps = min_t(u64, rc, cc->rc_kbps);
	sroce_cc_new_stage(cc, now);
	cc->cut_ns = now;
}

/**
 * sroce_cc_cnp() - the reaction point: a CNP arrived for a QP
 * @qp: the QP the CNP names, checked by the receive path (its type, state
 *	and, for a connected QP, that the CNP came from its peer)
 *
 * Raises alpha (once per alpha period) and cuts the rate, unless the last
 * cut was less than rate_reduce_monitor_period ago; the first CNP after
 * the QP was at full rate starts DCQCN afresh.  Each cut is counted in
 * rp_rate_cuts.
 *
 * Context: Softirq, or process context with BH disabled.  Takes qp->cc.lock.
 * Return: true if the device's reaction point is on and took the CNP.
 */
bool sroce_cc_cnp(struct sroce_qp *qp)
{
	struct sroce_qp_cc *cc = &qp->cc;
	unsigned long flags;
	bool first, cut;
	u64 now, period;

	if (!sroce_cc_p(qp, SROCE_CC_RP_ENABLE))
		return false;
	period = (u64)sroce_cc_p(qp, SROCE_CC_RATE_REDUCE_MONITOR_PERIOD) *
		 NSEC_PER_USEC;
	spin_lock_irqsave(&cc->lock, flags);
	now = ktime_get_ns();
	sroce_cc_advance(qp, cc, now);
	first = !cc->cut;
	if (first)
		sroce_cc_start(qp, cc, now);
	sroce_cc_raise_alpha(qp, cc);
	cut = first || now - cc->cut_ns >= period;
	if (cut)
		sroce_cc_cut(qp, cc, now);
	sroce_cc_update_pace(cc);
	spin_unlock_irqrestore(&cc->lock, flags);
	if (cut)
		sroce_count(sroce_qp_dev(qp), SROCE_CNT_RP_RATE_CUTS);
	return true;
}

/**
 * sroce_cc_may_send() - may a QP's sender put its next packet on the wire?
 * @qp: the QP
 * @who: the sender asking
 *
 * A QP the pacer does not hold back may always send.  One it does may send
 * once its schedule allows; until then the pacer's timer is set to run the
 * sender again when it does, and the sender must stop.
 *
 * Context: Any context; the requester calls it under qp->sq.lock, the
 * responder under qp->resp.lock.  Takes qp->cc.lock.
 * Return: true if the packet may go now.
 */
bool sroce_cc_may_send(struct sroce_qp *qp, enum sroce_cc_sender who)
{
	struct sroce_qp_cc *cc = &qp->cc;
	unsigned long flags;
	bool go;
	u64 now;

	if (!READ_ONCE(cc->pace_kbps))
		return true;
	spin_lock_irqsave(&cc->lock, flags);
	now = ktime_get_ns();
	sroce_cc_advance(qp, cc, now);
	go = !cc->pace_kbps || cc->next_ns <= now;
	if (!go) {
		cc->behind = true;
		cc->held = true;
		set_bit(who, &cc->waiting);
		hrtimer_start(&cc->pacer, ns_to_ktime(cc->next_ns),
			      HRTIMER_MODE_ABS_SOFT);
	}
	spin_unlock_irqrestore(&cc->lock, flags);
	return go;
}

/* The byte counter's rate-increase events for @bytes more sent. */
static void sroce_cc_count_bytes(struct sroce_qp *qp, struct sroce_qp_cc *cc,
				 unsigned int bytes)
{
	u32 reset = sroce_cc_p(qp, SROCE_CC_RPG_BYTE_RESET);
	u32 max = sroce_cc_max_kbps(qp);
	u64 total = (u64)cc->bytes + bytes;
	u64 n = div_u64(total, reset);

	cc->bytes = total - n * reset;
	if (n > SROCE_CC_MAX_EVENTS) {
		sroce_cc_recovered(cc, max);
		return;
	}
	while (n-- && cc->cut) {
		cc->b_stage++;
		sroce_cc_increase(qp, cc, max);
	}
}

/**
 * sroce_cc_sent() - account a packet a QP has sent
 * @qp: the QP
 * @bytes: the packet's size, BTH to ICRC
 *
 * Moves the pacer's schedule on by the packet's time at the QP's rate and
 * feeds the byte counter of a cut QP.
 *
 * Context: Any context, as sroce_cc_may_send().  Takes qp->cc.lock.
 */
void sroce_cc_sent(struct sroce_qp *qp, unsigned int bytes)
{
	struct sroce_qp_cc *cc = &qp->cc;
	unsigned long flags;
	u64 now, start, lag;

	if (!READ_ONCE(cc->pace_kbps))
		return;
	spin_lock_irqsave(&cc->lock, flags);
	if (cc->pace_kbps) {
		now = ktime_get_ns();
		lag = cc->behind ? SROCE_CC_LATE_NS :
		      max_t(u64, SROCE_CC_BURST_NS,
			    sroce_cc_ns(SROCE_CC_BURST_BYTES, cc->pace_kbps));
		start = max(cc->next_ns, now - min(now, lag));
		cc->next_ns = start + sroce_cc_ns(bytes, cc->pace_kbps);
		cc->behind = cc->behind && cc->next_ns < now;
	}
	if (cc->cut)
		sroce_cc_count_bytes(qp, cc, bytes);
	sroce_cc_update_pace(cc);
	spin_unlock_irqrestore(&cc->lock, flags);
}

/* Wake the senders the pacer held back: their time has come. */
static enum hrtimer_restart sroce_cc_pacer_fire(struct hrtimer *t)
{
	struct sroce_qp *qp = container_of(t, struct sroce_qp, cc.pacer);
	unsigned long waiting = xchg(&qp->cc.waiting, 0);

	if (waiting & BIT(SROCE_CC_REQ))
		sroce_qp_sched_req(qp);
	if (waiting & BIT(SROCE_CC_RESP))
		sroce_resp_kick(qp);
	return HRTIMER_NORESTART;
}

/**
 * sroce_cc_set_limit() - set a QP's rate limit (IB_QP_RATE_LIMIT)
 * @qp: the QP
 * @kbps: the limit, SROCE_CC_LIMIT_MIN_KBPS to SROCE_CC_LIMIT_MAX_KBPS, or
 *	0 for none (checked by the caller)
 *
 * Takes effect with the next packet; a sender waiting for the pacer is run
 * at once and waits again if the new rate says so.
 *
 * Context: Process context. Takes qp->cc.lock.
 */
void sroce_cc_set_limit(struct sroce_qp *qp, u32 kbps)
{
	struct sroce_qp_cc *cc = &qp->cc;
	unsigned long flags;

	spin_lock_irqsave(&cc->lock, flags);
	WRITE_ONCE(cc->limit_kbps, kbps);
	sroce_cc_update_pace(cc);
	if (READ_ONCE(cc->waiting))
		hrtimer_start(&cc->pacer, 0, HRTIMER_MODE_REL_SOFT);
	spin_unlock_irqrestore(&cc->lock, flags);
}

/**
 * sroce_cc_reset() - a QP back in RESET: no longer cut, not paced
 * @qp: the QP
 *
 * Its rate limit stays: it is an attribute, like the others.
 *
 * Context: Process context. Takes qp->cc.lock.
 */
void sroce_cc_reset(struct sroce_qp *qp)
{
	struct sroce_qp_cc *cc = &qp->cc;
	unsigned long flags;

	spin_lock_irqsave(&cc->lock, flags);
	sroce_cc_recovered(cc, sroce_cc_max_kbps(qp));
	cc->next_ns = 0;
	cc->behind = false;
	cc->cnp_ns = 0;
	sroce_cc_update_pace(cc);
	spin_unlock_irqrestore(&cc->lock, flags);
}

/**
 * sroce_cc_res() - a QP's rates, for "rdma resource show qp -dd"
 * @qp: the QP
 * @res: filled in
 *
 * Context: Process context. Takes qp->cc.lock.
 */
void sroce_cc_res(struct sroce_qp *qp, struct sroce_cc_res *res)
{
	struct sroce_qp_cc *cc = &qp->cc;
	unsigned long flags;

	spin_lock_irqsave(&cc->lock, flags);
	sroce_cc_advance(qp, cc, ktime_get_ns());
	res->pace_kbps = cc->pace_kbps;
	res->limit_kbps = cc->limit_kbps;
	res->rc_kbps = cc->cut ? cc->rc_kbps : sroce_cc_max_kbps(qp);
	res->rt_kbps = cc->cut ? cc->rt_kbps : res->rc_kbps;
	res->alpha = cc->cut ? cc->alpha >> (SROCE_CC_ALPHA_SHIFT - 10) : 0;
	spin_unlock_irqrestore(&cc->lock, flags);
}

/**
 * sroce_cc_qp_init() - a new QP: full rate, no limit, not paced
 * @qp: the QP
 *
 * Context: Process context.
 */
void sroce_cc_qp_init(struct sroce_qp *qp)
{
	spin_lock_init(&qp->cc.lock);
	sroce_hrtimer_setup(&qp->cc.pacer, sroce_cc_pacer_fire,
			    CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
}

/**
 * sroce_cc_qp_stop() - stop a dying QP's pacer
 * @qp: the QP, dead: no sender arms the pacer any more
 *
 * Waits for a firing pacer to finish; what it scheduled sees the QP dead.
 *
 * Context: Process context. May sleep.
 */
void sroce_cc_qp_stop(struct sroce_qp *qp)
{
	hrtimer_cancel(&qp->cc.pacer);
}
