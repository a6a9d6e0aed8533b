/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * runner.h - one runner at a time, and no request for a run lost.
 *
 * The requester runs from two places: the send doorbell of a user QP, in
 * the system call (sroce_req_kick()), and the QP's work item.  It must not
 * run in both at once: each packet is built under qp->sq.lock and sent
 * after the lock is dropped, so two runners could put packets on the wire
 * out of PSN order.  And a request made while it runs must not be lost: a
 * runner that has already looked at the send queue would miss a work
 * request posted after it looked.  struct sroce_runner gives both with two
 * bits of one word and no lock:
 *
 *   RUNNING  taken by the one runner, as a bit lock
 *   AGAIN    a pass was asked for since the runner's current pass began
 *
 * Every caller asks for a pass and tries to become the runner
 * (sroce_runner_start()).  If another runner holds RUNNING, that one sees
 * AGAIN and goes round once more, and the caller is done.  The runner
 * clears AGAIN as it begins each pass (sroce_runner_pass()) and may look
 * at it after a pass (sroce_runner_asked()).  To stop, it gives up
 * RUNNING (sroce_runner_stop()) and then looks at AGAIN once more
 * (sroce_runner_resume()): set, it tries to take RUNNING back and, if it
 * does, makes another pass.  What a pass does, and when to stop with work
 * left (a budget), is the caller's business (req.c).
 *
 * Memory order.  RUNNING is taken with test_and_set_bit_lock() (ACQUIRE)
 * and given up with clear_bit_unlock() (RELEASE), so what one runner did
 * before it stopped is seen by the next.  No request is lost between a
 * caller that sets AGAIN, then reads RUNNING, and a runner that clears
 * RUNNING, then reads AGAIN: both bits are in one word and every write to
 * it is an atomic read-modify-write, so the two writes are ordered in that
 * word's modification order, and each side's later read of the word sees
 * at least its own write.  If the caller's write comes first, the runner's
 * read sees AGAIN; if the runner's does, the caller's read sees RUNNING
 * clear and it runs.  sroce_runner_stop() also issues a full barrier
 * (smp_mb__after_atomic()) between giving up RUNNING and reading AGAIN, so
 * the order does not rest on the two bits sharing a word.  The requester's
 * own state needs none of this: qp->sq.lock guards it.
 */
#ifndef SROCE_RUNNER_H
#define SROCE_RUNNER_H

#include <linux/bitops.h>
#include <linux/types.h>

enum sroce_runner_bit {
	SROCE_RUNNER_RUNNING,
	SROCE_RUNNER_AGAIN,
};

/**
 * struct sroce_runner - serialises the runs of a piece of work
 * @bits: SROCE_RUNNER_RUNNING and SROCE_RUNNER_AGAIN; zero when idle
 */
struct sroce_runner {
	unsigned long bits;
};

/**
 * sroce_runner_start() - ask for a pass, and become the runner if there is
 *	none
 * @r: the runner
 *
 * Context: Any context.
 * Return: true if the caller is now the runner and must make the pass;
 * false if another runner will make it.
 */
static inline bool sroce_runner_start(struct sroce_runner *r)
{
	set_bit(SROCE_RUNNER_AGAIN, &r->bits);
	return !test_and_set_bit_lock(SROCE_RUNNER_RUNNING, &r->bits);
}

/**
 * sroce_runner_pass() - the runner begins a pass
 * @r: the runner, held by the caller
 *
 * Requests made from here on ask for another pass.
 *
 * Context: Any context.
 */
static inline void sroce_runner_pass(struct sroce_runner *r)
{
	clear_bit(SROCE_RUNNER_AGAIN, &r->bits);
}

/**
 * sroce_runner_asked() - was a pass asked for since the current one began?
 * @r: the runner, held by the caller
 *
 * Context: Any context.
 * Return: true if so.
 */
static inline bool sroce_runner_asked(const struct sroce_runner *r)
{
	return test_bit(SROCE_RUNNER_AGAIN, &r->bits);
}

/**
 * sroce_runner_stop() - the runner stops running
 * @r: the runner, held by the caller
 *
 * Context: Any context.
 */
static inline void sroce_runner_stop(struct sroce_runner *r)
{
	clear_bit_unlock(SROCE_RUNNER_RUNNING, &r->bits);
	smp_mb__after_atomic(); /* RUNNING clear before AGAIN is read */
}

/**
 * sroce_runner_resume() - after sroce_runner_stop(): become the runner
 *	again if a pass was asked for meanwhile
 * @r: the runner
 *
 * Context: Any context.
 * Return: true if a pass was asked for and the caller is the runner again;
 * false if none was, or another caller has become the runner.
 */
static inline bool sroce_runner_resume(struct sroce_runner *r)
{
	return test_bit(SROCE_RUNNER_AGAIN, &r->bits) &&
	       !test_and_set_bit_lock(SROCE_RUNNER_RUNNING, &r->bits);
}

#endif /* SROCE_RUNNER_H */
