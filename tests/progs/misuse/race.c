// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * race.c - sroce_misuse: ring cases that race the kernel: indices
 * moved while it works, and the scribbler.
 */

#include "misuse.h"

/* --- indices that move while the kernel works ------------------------------------- */

static uint32_t load_idx(struct ring *r, bool producer)
{
	struct sroce_ring_hdr *h = rhdr(r);

	return atomic_load_explicit((_Atomic uint32_t *)(producer ? &h->producer : &h->consumer),
				    memory_order_acquire);
}

/*
 * A race between this thread and another: each on its own CPU, so that the
 * other runs while this one is in the kernel (on one CPU, a thread that
 * stays in the kernel keeps the other from running at all).
 */
static void pin_to_cpu(pthread_t th, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		pthread_setaffinity_np(th, sizeof(set), &set);
}

static void race_apart(pthread_t other)
{
	pin_to_cpu(pthread_self(), 0);
	pin_to_cpu(other, 1);
}

/*
 * Pushes a ring's producer index a full ring past its consumer index, over
 * and over, for at most @ms: whatever the kernel takes is there again at
 * once.
 */
struct pusher {
	struct ring *r;
	uint64_t ms;
	atomic_bool stop;
	atomic_ulong pushes;
};

static void *push_prod(void *arg)
{
	struct pusher *p = arg;
	uint64_t end = now_ms() + p->ms;

	while (!atomic_load(&p->stop) && now_ms() < end) {
		set_prod(p->r, load_idx(p->r, false) + p->r->n);
		atomic_fetch_add(&p->pushes, 1);
	}
	return NULL;
}

/*
 * Ring @door's doorbell of @qp (in ERR) 200 times while a thread keeps
 * @r's producer index a full ring ahead; the most one doorbell took.
 */
static uint32_t doorbells_while_pushed(struct ctx *x, struct qp *qp, struct ring *r,
				       int (*door)(struct ctx *, uint32_t), const char *what)
{
	struct pusher p = { .r = r, .ms = 3000 };
	uint32_t before, took, most = 0;
	pthread_t th;
	int i, err;

	if (pthread_create(&th, NULL, push_prod, &p))
		setup_die("pthread_create");
	race_apart(th);
	while (!atomic_load(&p.pushes))
		sched_yield();
	for (i = 0; i < 200; i++) {
		before = load_idx(r, false);
		err = door(x, qp->handle);
		if (err)
			bad("%s doorbell: %s", what, ename(-err));
		took = load_idx(r, false) - before;
		if (took > most)
			most = took;
	}
	atomic_store(&p.stop, true);
	pthread_join(th, NULL);
	printf("%s: %s: 200 doorbells, %lu pushes, at most %u WQEs flushed by one (ring of %u)\n",
	       cur_case, what, atomic_load(&p.pushes), most, r->n);
	return most;
}

/*
 * A QP in ERR whose process keeps pushing its producer index while it
 * rings the doorbell: each doorbell flushes what the ring held when it
 * rang, one ring's worth at most.  Before that bound the receive doorbell
 * went on taking WQEs for as long as the producer moved, with bottom
 * halves off (a soft lockup from an unprivileged process; issue 19).  The
 * send doorbell is held to the same rule.
 */
void r_flush_race(void)
{
	const struct qp_caps caps = { 1024, 1024, 1, 1, 0 };
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x), most;
	/*
	 * CQs that hold every completion the doorbells can make (200 of at
	 * most 1024 each).  A CQ that overflowed would fail its QPs, and the
	 * flush that schedules (sroce_qp_error() on a QP already in ERR) would
	 * take WQEs while a doorbell is measured: the measure is of one
	 * doorbell.
	 */
	struct cq scq = cq_new(&x, 262143), rcq = cq_new(&x, 262143);
	struct qp v;
	int err;

	/* Rings of 1024: a doorbell drains one for long enough to be raced. */
	err = qp_create(&x, QPT_RC, pd, scq.handle, rcq.handle, -1, &caps, &v);
	if (err || ring_map(&x, &v.drv.sq, &v.sq) || ring_map(&x, &v.drv.rq, &v.rq))
		setup_die("a QP of 1024-entry queues: %s", ename(-err));
	expect("to INIT", qp_to_init(&x, &v), 0);
	expect("to ERR", qp_set_state(&x, v.handle, QPS_ERR), 0);
	most = doorbells_while_pushed(&x, &v, &v.rq, rq_doorbell, "receive");
	if (most > v.rq.n)
		bad("one receive doorbell flushed %u WQEs, more than the ring's %u", most, v.rq.n);
	if (!most)
		bad("no receive doorbell flushed anything");
	most = doorbells_while_pushed(&x, &v, &v.sq, sq_doorbell, "send");
	if (most > v.sq.n)
		bad("one send doorbell flushed %u WQEs, more than the ring's %u", most, v.sq.n);
	if (!most)
		bad("no send doorbell flushed anything");
	ctx_close(&x);
}

/*
 * Switches a CQ's consumer index between two possible values while
 * @armed: lo (two entries unpolled) and lo + 1 (one).  To stop it, the
 * main thread clears @armed, then bumps @round and waits for @ack to
 * reach it (flipper_stop()): the flipper acknowledges a round only in an
 * iteration that read the round first and then found @armed clear, so
 * once it has, no store to the ring is in flight or to come, and the
 * ring may be unmapped.  (A flag the flipper set when it found @armed
 * clear could be set late, from a reading made before the main thread
 * armed it, and let the ring go while a store to it was under way.)
 */
struct flipper {
	struct ring *_Atomic r;
	_Atomic uint32_t lo, round, ack;
	atomic_bool armed, stop;
	unsigned long flips;
};

static void *flip_cons(void *arg)
{
	struct flipper *f = arg;
	uint32_t round;

	while (!atomic_load(&f->stop)) {
		round = atomic_load(&f->round);
		if (!atomic_load(&f->armed)) {
			atomic_store(&f->ack, round);
			continue;
		}
		set_cons(atomic_load(&f->r), atomic_load(&f->lo) + (f->flips++ & 1));
	}
	return NULL;
}

/* The flipper stops, with no store to its ring left in flight. */
static void flipper_stop(struct flipper *f)
{
	uint32_t round;

	atomic_store(&f->armed, false);
	round = atomic_fetch_add(&f->round, 1) + 1;
	while (atomic_load(&f->ack) != round)
		;
}

/* Two received messages a -> b, their CQEs left unpolled in cb. */
static void two_unpolled(struct world *w, uint64_t tag)
{
	struct sroce_sge s = sge_of(w, 0, 8), r = sge_of(w, 32768, 8);
	struct sroce_send_wqe sw = send_wqe(tag);
	uint32_t want = w->cb.ring.mine + 2;
	uint64_t end = now_ms() + 20000;
	int k;

	sw.num_sge = 1;
	for (k = 0; k < 2; k++) {
		rq_put(&w->b.rq, tag + (uint64_t)k, &r, 1);
		sw.wr_id = tag + (uint64_t)k;
		sq_put(&w->a, &sw, &s, 1);
	}
	expect("doorbell", sq_doorbell(&w->x, w->a.handle), 0);
	for (k = 0; k < 2; k++)
		if (cq_wait(&w->ca, tag + (uint64_t)k, 20000) != WC_SUCCESS)
			setup_die("send %#llx failed", (unsigned long long)(tag + (uint64_t)k));
	while (load_idx(&w->cb.ring, true) != want)
		if (now_ms() > end)
			setup_die("the receive CQEs of %#llx did not come", (unsigned long long)tag);
}

/*
 * RESIZE_CQ while another thread switches the consumer index between two
 * possible values: the new ring must hold the tail of the old one as one
 * reading of the index gives it, both entries or the second alone.  RESIZE_CQ
 * once counted the entries from one reading and copied them from another:
 * an entry already polled, or a slot past the last, came back.
 */
#define RESIZE_RACES 1000

void r_cq_resize_race(void)
{
	struct flipper f = { .r = NULL };
	struct sroce_ring_info info;
	struct ib_uverbs_wc wc[2];
	uint32_t n, i, wrong = 0, got[3] = { 0 };
	uint64_t tag;
	struct world w;
	struct ring old;
	pthread_t th;
	int k;

	world_open(&w, QPT_RC);
	if (pthread_create(&th, NULL, flip_cons, &f))
		setup_die("pthread_create");
	race_apart(th);
	for (k = 0; k < RESIZE_RACES; k++) {
		tag = 0x7000 + 2 * (uint64_t)k;
		two_unpolled(&w, tag);
		atomic_store(&f.r, &w.cb.ring);
		atomic_store(&f.lo, w.cb.ring.mine);
		atomic_store(&f.armed, true);
		expect("RESIZE_CQ", cq_resize(&w.x, w.cb.handle, 64, &info), 0);
		flipper_stop(&f);
		old = w.cb.ring;
		if (ring_map(&w.x, &info, &w.cb.ring))
			setup_die("mapping the new ring: %s", strerror(errno));
		munmap(old.base, old.size);
		n = load_idx(&w.cb.ring, true);
		got[n < 3 ? n : 0]++;
		for (i = 0; i < n && i < 2; i++)
			memcpy(&wc[i], rslot(&w.cb.ring, i), sizeof(wc[i]));
		/* The tail of (tag, tag + 1): both, or the second alone. */
		if ((n == 2 && (wc[0].wr_id != tag || wc[1].wr_id != tag + 1)) ||
		    (n == 1 && wc[0].wr_id != tag + 1) || n < 1 || n > 2) {
			if (!wrong++)
				bad("resize %d: %u entries, wr_ids %#llx %#llx, expected the tail of %#llx %#llx",
				    k, n, (unsigned long long)(n > 0 ? wc[0].wr_id : 0),
				    (unsigned long long)(n > 1 ? wc[1].wr_id : 0),
				    (unsigned long long)tag, (unsigned long long)tag + 1);
		}
		w.cb.ring.mine = n;
		set_cons(&w.cb.ring, n);
	}
	atomic_store(&f.stop, true);
	pthread_join(th, NULL);
	printf("%s: %d resizes, %lu flips, new rings of 2 entries: %u, of 1: %u; %u wrong\n",
	       cur_case, RESIZE_RACES, f.flips, got[2], got[1], wrong);
	if (wrong)
		bad("%u of %d resizes moved entries of another reading of the index", wrong,
		    RESIZE_RACES);
	if (!got[1] || !got[2])
		bad("the flipper never raced a resize (%u of 2 entries, %u of 1)", got[2], got[1]);
	world_close(&w);
}

/*
 * 16384 send WQEs (the largest send queue) published at once on a QP in
 * ERR, one doorbell: every one must complete, flushed, in order.  The
 * harness counts, with a kprobe, how many holds of the send queue's lock
 * the kernel took them in: a batch at a time, never the whole ring with
 * interrupts off (issue 19).
 */
void r_sq_full_flush(void)
{
	const struct qp_caps caps = { 16384, 16, 1, 1, 0 };
	struct sroce_send_wqe sw = send_wqe(0);
	struct ctx x = ctx_open();
	uint32_t pd = pd_new(&x), i, n = 0;
	struct cq cq = cq_new(&x, 16384);
	struct ib_uverbs_wc wc;
	struct qp qp;
	int err;

	err = qp_create(&x, QPT_RC, pd, cq.handle, cq.handle, -1, &caps, &qp);
	if (err || ring_map(&x, &qp.drv.sq, &qp.sq) || ring_map(&x, &qp.drv.rq, &qp.rq))
		setup_die("a QP of 16384 send WQEs: %s", ename(-err));
	if (qp.sq.n != 16384)
		setup_die("the send ring has %u slots, not 16384", qp.sq.n);
	expect("to INIT", qp_to_init(&x, &qp), 0);
	expect("to ERR", qp_set_state(&x, qp.handle, QPS_ERR), 0);
	for (i = 0; i < qp.sq.n; i++) {
		sw.wr_id = 0x100000 + (uint64_t)i;
		sq_put(&qp, &sw, NULL, 0);
	}
	expect("one doorbell", sq_doorbell(&x, qp.handle), 0);
	while (n < qp.sq.n && cq_poll(&cq, &wc, 20000)) {
		if (wc.wr_id != 0x100000 + (uint64_t)n || wc.status != WC_WR_FLUSH_ERR) {
			bad("completion %u: wr_id %#llx status %u", n,
			    (unsigned long long)wc.wr_id, wc.status);
			break;
		}
		n++;
	}
	printf("%s: %u of %u flushed\n", cur_case, n, qp.sq.n);
	if (n != qp.sq.n)
		bad("%u of %u send WQEs flushed", n, qp.sq.n);
	ctx_close(&x);
}

/* --- the racing scribbler ------------------------------------------------------------- */

struct scribble {
	struct ring *rings[8];
	int n;
	atomic_bool stop;
	unsigned long passes;
};

static void *scribbler(void *arg)
{
	struct scribble *s = arg;
	unsigned int seed = 12345;

	while (!atomic_load(&s->stop)) {
		int k;

		for (k = 0; k < s->n; k++) {
			struct ring *r = s->rings[k];
			uint32_t *p = (uint32_t *)r->base;
			size_t words = r->size / 4, j;

			for (j = 0; j < 64; j++)
				p[(size_t)rand_r(&seed) % words] = (uint32_t)rand_r(&seed) *
					(rand_r(&seed) & 1 ? 1 : 0x10001u);
			/* the indices most of all */
			set_prod(r, (uint32_t)rand_r(&seed) % (r->n * 3));
			set_cons(r, (uint32_t)rand_r(&seed));
		}
		s->passes++;
	}
	return NULL;
}

/*
 * One thread scribbles random words over every ring of victim QPs (an RC
 * QP's send and receive rings, a UD QP on an SRQ, the SRQ, their CQ),
 * another rings doorbells, arms the CQ, resets and reconnects the victims
 * and feeds them messages, while a well-behaved pair of the same process,
 * on its own CQs, sends verified data.  The victims may fail in any way
 * the ABI allows; every command must still answer 0 or a clean error, and
 * every good send must arrive intact.
 */
void r_scribble(bool forever)
{
	struct world good, bad_w;
	struct srq srq;
	struct cq vcq;
	struct qp vud, feed;
	uint32_t ah, num;
	struct scribble s = { .n = 0 };
	pthread_t th;
	uint64_t end = now_ms() + (uint64_t)scribble_secs * 1000;
	uint64_t tag = 0x1000;
	unsigned long rounds = 0;
	struct sroce_sge fs;
	struct sroce_send_wqe fw = send_wqe(0xfeed);
	int err;

	world_open(&good, QPT_RC);
	world_open(&bad_w, QPT_RC);
	srq = srq_new(&bad_w.x, bad_w.pd);
	vcq = cq_new(&bad_w.x, 32);
	vud = qp_new(&bad_w.x, QPT_UD, bad_w.pd, vcq.handle, vcq.handle, srq.handle);
	feed = qp_new(&bad_w.x, QPT_UD, bad_w.pd, bad_w.cb.handle, bad_w.cb.handle, -1);
	qp_connect(&bad_w.x, &vud, 0, 0);
	qp_connect(&bad_w.x, &feed, 0, 0);
	if (ah_create(&bad_w.x, bad_w.pd, (uint8_t)gid_index, 1, 1, &ah, &num))
		setup_die("CREATE_AH");
	fs = sge_of(&bad_w, 0, 32);
	fw.num_sge = 1;
	fw.wr.ud.ah_num = num;
	fw.wr.ud.remote_qpn = vud.qpn;
	fw.wr.ud.remote_qkey = 0x11111111;
	s.rings[s.n++] = &bad_w.a.sq;
	s.rings[s.n++] = &bad_w.a.rq;
	s.rings[s.n++] = &bad_w.ca.ring;
	s.rings[s.n++] = &vud.sq;
	s.rings[s.n++] = &srq.ring;
	s.rings[s.n++] = &vcq.ring;
	if (pthread_create(&th, NULL, scribbler, &s))
		setup_die("pthread_create");
	if (forever) {
		printf("scribbling\n");
		fflush(stdout);
	}
	while (forever || now_ms() < end) {
#define OK(what, call) do {							\
		err = (call);							\
		if (err)							\
			bad("%s: %s during the scribble", what, ename(-err));	\
	} while (0)
		OK("send doorbell", sq_doorbell(&bad_w.x, bad_w.a.handle));
		OK("receive doorbell", rq_doorbell(&bad_w.x, bad_w.a.handle));
		OK("UD doorbell", sq_doorbell(&bad_w.x, vud.handle));
		OK("REQ_NOTIFY_CQ", cq_arm(&bad_w.x, bad_w.ca.handle));
		OK("REQ_NOTIFY_CQ", cq_arm(&bad_w.x, vcq.handle));
		/* the feeder is well-behaved; its CQ is drained as it goes */
		sq_put(&feed, &fw, &fs, 1);
		OK("feeder doorbell", sq_doorbell(&bad_w.x, feed.handle));
		{
			struct ib_uverbs_wc wc;

			while (cq_poll(&bad_w.cb, &wc, 0))
				;
		}
		if (rounds % 16 == 15) {
			/* back to life, to be broken again */
			OK("RC victim to RESET", qp_set_state(&bad_w.x, bad_w.a.handle, QPS_RESET));
			OK("RC victim to INIT", qp_to_init(&bad_w.x, &bad_w.a));
			OK("RC victim to RTR", qp_to_rtr(&bad_w.x, &bad_w.a, bad_w.b.qpn));
			OK("RC victim to RTS", qp_to_rts(&bad_w.x, &bad_w.a, 14));
			OK("UD victim to RESET", qp_set_state(&bad_w.x, vud.handle, QPS_RESET));
			OK("UD victim to INIT", qp_to_init(&bad_w.x, &vud));
			OK("UD victim to RTR", qp_to_rtr(&bad_w.x, &vud, 0));
			OK("UD victim to RTS", qp_to_rts(&bad_w.x, &vud, 0));
		}
		if (!forever && rounds % 4 == 0 && !world_send_ok(&good, 1 + (uint32_t)(tag % 3000), tag))
			break;
		tag++;
		rounds++;
#undef OK
	}
	atomic_store(&s.stop, true);
	pthread_join(th, NULL);
	printf("%s: %lu rounds, %lu scribble passes, %llu verified sends\n", cur_case, rounds,
	       s.passes, (unsigned long long)(tag - 0x1000) / 4);
	if (qp_state(&good.x, good.a.handle) != QPS_RTS || qp_state(&good.x, good.b.handle) != QPS_RTS)
		bad("the good QPs left RTS");
	world_close(&bad_w);
	if (!world_send_ok(&good, 4096, 0xe0d))
		bad("the good pair failed after the scribble");
	world_close(&good);
}

void r_scribble_timed(void)
{
	r_scribble(false);
}
