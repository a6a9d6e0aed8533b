// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mw.c - memory windows: remote access to part of a memory region, granted
 * and revoked by work requests.
 *
 * A window has a key of its own (indices from SROCE_MW_INDEX_BASE on, in
 * the device's mw_pool).  Binding it (BIND_MW, or ibv_bind_mw() for type 1)
 * references the region and sets the range and rights.  A type 1 window
 * serves the QPs of its PD; it is rebound, or unbound with a zero length.
 * A type 2 window serves only the QP it was bound through (which is in its
 * PD), until LOCAL_INV or a remote SEND with Invalidate through that QP
 * revokes it, or the QP is destroyed.  Lookups take a reference under RCU
 * and read the binding under the window's lock.
 *
 * Type 2 windows outlive no QP.  QP numbers come back (they are handed out
 * cyclically, and "rdma res" shows them to everyone), so a window keeps the
 * serial of the QP it was bound through, which the device never hands out
 * twice, and its check compares that and the PD: a QP that got a destroyed
 * QP's number is another QP.  Destroying a QP unbinds the type 2 windows
 * bound through it, which lets their regions go (sroce_mw_qp_destroyed()):
 * once the QP is dead (it binds nothing more), unpublished and unused, it
 * walks the device's windows, each taken with a reference under RCU like
 * any lookup (a window being deallocated is not found; its dealloc unbinds
 * it), and unbinds those bound through the QP.  No QP lock is held then:
 * only window and region locks, in their usual order.  The walk runs only
 * while the QP counts windows bound through it (struct sroce_qp,
 * @mw2_bound, an upper bound: a dealloc does not touch the QP), so a QP
 * whose windows were invalidated costs nothing, and it stops once it has
 * unbound them all.  A window does not hold its QP instead: destroy_qp
 * would then wait for the application to deallocate its windows.
 */
#include <linux/random.h>

#include "sroce.h"

/**
 * sroce_alloc_mw() - ib_device_ops.alloc_mw
 * @ibmw: the window, allocated by the core (type and PD set)
 * @udata: no driver data
 *
 * Context: Process context. May sleep.
 * Return: 0, -EINVAL for a type other than 1 or 2, -ENOMEM past max_mw.
 */
int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);
	u32 index;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	err = sroce_udata_none(udata);
	if (err)
		return err;
	refcount_set(&mw->ref, 1);
	init_completion(&mw->released);
	spin_lock_init(&mw->lock);
	err = sroce_pool_add(&sdev->mw_pool, mw, &index, SROCE_GFP_OBJ);
	if (err)
		return err;
	mw->key = index << 8 | get_random_u8();
	ibmw->rkey = mw->key;
	sroce_obj_created(SROCE_OBJ_MW);
	return 0;
}

static void sroce_mw_put(struct sroce_mw *mw)
{
	if (refcount_dec_and_test(&mw->ref))
		complete(&mw->released);
}

/* Find a window by the index in @key and take a reference. */
static struct sroce_mw *sroce_mw_get_index(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mw *mw;

	rcu_read_lock();
	mw = sroce_pool_lookup_rcu(&sdev->mw_pool, key >> 8);
	if (mw && !refcount_inc_not_zero(&mw->ref))
		mw = NULL;
	rcu_read_unlock();
	return mw;
}

/* Find a window by its exact current key and take a reference. */
static struct sroce_mw *sroce_mw_get(struct sroce_dev *sdev, u32 rkey)
{
	struct sroce_mw *mw = sroce_mw_get_index(sdev, rkey);

	if (mw && READ_ONCE(mw->key) != rkey) {
		sroce_mw_put(mw);
		mw = NULL;
	}
	return mw;
}

/* Let go of the region a window was bound to (after its lock is dropped). */
static void sroce_mw_release_mr(struct sroce_mr *mr)
{
	if (mr) {
		sroce_mr_bind_put(mr);
		sroce_mr_put(mr);
	}
}

/*
 * Unbind: forget the range.  Caller holds mw->lock, and passes the region
 * returned to sroce_mw_release_mr() after dropping it.
 */
static struct sroce_mr *sroce_mw_unbind_locked(struct sroce_mw *mw)
{
	struct sroce_mr *mr = mw->mr;

	lockdep_assert_held(&mw->lock);
	mw->valid = false;
	mw->mr = NULL;
	mw->length = 0;
	mw->qp_serial = 0;
	return mr;
}

/* Is @mw a bound type 2 window of @qp?  Caller holds mw->lock. */
static bool sroce_mw_bound_through(struct sroce_mw *mw,
				   const struct sroce_qp *qp)
{
	lockdep_assert_held(&mw->lock);
	return mw->ibmw.type == IB_MW_TYPE_2 && mw->valid &&
	       mw->qp_serial == qp->serial && mw->ibmw.pd == qp->ibqp.pd;
}

/*
 * Unbind @mw if it is a type 2 window bound through @qp.  Caller holds
 * mw->lock.  Return: the region, for sroce_mw_release_mr() after the lock
 * is dropped, or NULL if the window is not bound through @qp.
 */
static struct sroce_mr *sroce_mw_unbind_from(struct sroce_mw *mw,
					     struct sroce_qp *qp)
{
	if (!sroce_mw_bound_through(mw, qp))
		return NULL;
	atomic_dec(&qp->mw2_bound);
	return sroce_mw_unbind_locked(mw);
}

/**
 * sroce_dealloc_mw() - ib_device_ops.dealloc_mw
 * @ibmw: the window, possibly bound; the core frees it on return
 *
 * Context: Process context. May sleep.
 * Return: 0.
 */
int sroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);
	struct sroce_mr *mr;
	unsigned long flags;

	sroce_pool_remove(&sdev->mw_pool, mw->key >> 8);
	synchronize_rcu();
	sroce_mw_put(mw);
	wait_for_completion(&mw->released);
	spin_lock_irqsave(&mw->lock, flags);
	mr = sroce_mw_unbind_locked(mw);
	spin_unlock_irqrestore(&mw->lock, flags);
	sroce_mw_release_mr(mr);
	sroce_obj_destroyed(SROCE_OBJ_MW);
	return 0;
}

/*
 * Rights a bind may ask for.  Local write and bind are the region's
 * business and are ignored; zero-based windows are not offered.
 */
#define SROCE_MW_BIND_ACCESS						\
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |		\
	 IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC |		\
	 IB_ACCESS_MW_BIND)

/* The region a bind names, checked against the range and rights asked. */
static struct sroce_mr *sroce_mw_bind_mr(struct sroce_qp *qp,
					 const struct sroce_swqe *w)
{
	u32 access = w->bind.access;
	struct sroce_mr *mr;
	u32 need = IB_ACCESS_MW_BIND;

	/* Remote write or atomic rights need local write on the region. */
	if (access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC))
		need |= IB_ACCESS_LOCAL_WRITE;
	mr = sroce_mr_get(sroce_qp_dev(qp), w->bind.mr_lkey);
	if (!mr)
		return NULL;
	if ((mr->type != SROCE_MR_USER && mr->type != SROCE_MR_ODP) ||
	    sroce_mr_check(mr, qp->ibqp.pd, w->bind.addr, w->bind.length,
			   need) || !sroce_mr_bind_get(mr)) {
		sroce_mr_put(mr);
		return NULL;
	}
	return mr;
}

static int sroce_mw_bind_locked(struct sroce_qp *qp, struct sroce_mw *mw,
				const struct sroce_swqe *w,
				struct sroce_mr **old)
{
	bool type2 = mw->ibmw.type == IB_MW_TYPE_2;
	struct sroce_mr *mr = NULL;

	lockdep_assert_held(&mw->lock);
	if (type2 && (mw->valid || !w->bind.length))
		return -EINVAL;
	if (w->bind.length) {
		mr = sroce_mw_bind_mr(qp, w);
		if (!mr)
			return -EACCES;
	}
	*old = sroce_mw_unbind_locked(mw);
	mw->mr = mr;
	mw->addr = w->bind.addr;
	mw->length = w->bind.length;
	mw->access = w->bind.access & (IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_ATOMIC);
	mw->valid = !!mr;
	if (type2) {
		mw->qp_serial = qp->serial;
		atomic_inc(&qp->mw2_bound);
	}
	WRITE_ONCE(mw->key, w->bind.new_rkey);
	return 0;
}

/**
 * sroce_mw_bind() - execute a BIND_MW work request
 * @qp: the QP posting it (RC)
 * @w: the work request
 *
 * Context: Any context. Caller holds qp->sq.lock.
 * The window is named by the index in its key (mw_rkey, normally the key
 * it was allocated with); the key byte the application tracks need not
 * match, the PD must.
 *
 * Return: 0, or a negative errno for which the work request completes with
 * IB_WC_MW_BIND_ERR: no such window, another PD, a new key with another
 * index, unknown rights, a bound type 2 window, a region that cannot
 * grant the range or rights, or a QP being destroyed.
 */
int sroce_mw_bind(struct sroce_qp *qp, const struct sroce_swqe *w)
{
	struct sroce_mr *old = NULL;
	struct sroce_mw *mw;
	unsigned long flags;
	int err;

	lockdep_assert_held(&qp->sq.lock);
	/* Destroy unbinds what was bound before it marked the QP dead. */
	if (qp->dead)
		return -EINVAL;
	if ((w->bind.new_rkey >> 8) != (w->bind.mw_rkey >> 8) ||
	    (w->bind.access & ~SROCE_MW_BIND_ACCESS))
		return -EINVAL;
	mw = sroce_mw_get_index(sroce_qp_dev(qp), w->bind.mw_rkey);
	if (!mw)
		return -EINVAL;
	if (mw->ibmw.pd != qp->ibqp.pd) {
		sroce_mw_put(mw);
		return -EACCES;
	}
	spin_lock_irqsave(&mw->lock, flags);
	err = sroce_mw_bind_locked(qp, mw, w, &old);
	spin_unlock_irqrestore(&mw->lock, flags);
	sroce_mw_release_mr(old);
	sroce_mw_put(mw);
	return err;
}

/**
 * sroce_mw_invalidate() - revoke a type 2 window (LOCAL_INV, or a SEND
 *	with Invalidate received)
 * @qp: the QP doing it: the one the window was bound through
 * @rkey: the window's current key
 *
 * Context: Any context.
 * Return: 0, or -EINVAL for no such bound type 2 window of this QP.
 */
int sroce_mw_invalidate(struct sroce_qp *qp, u32 rkey)
{
	struct sroce_mr *old;
	struct sroce_mw *mw;
	unsigned long flags;

	mw = sroce_mw_get(sroce_qp_dev(qp), rkey);
	if (!mw)
		return -EINVAL;
	spin_lock_irqsave(&mw->lock, flags);
	old = sroce_mw_unbind_from(mw, qp);
	spin_unlock_irqrestore(&mw->lock, flags);
	sroce_mw_release_mr(old);
	sroce_mw_put(mw);
	return old ? 0 : -EINVAL;
}

/**
 * sroce_mw_resolve() - the region behind a window, for a remote access
 * @qp: the QP the access arrives on
 * @rkey: the window's key
 * @va: the first address
 * @len: bytes
 * @access: the IB_ACCESS_REMOTE_* right needed
 *
 * Context: Any context. Caller holds qp->resp.lock.
 * Return: the region, referenced, if the window is bound, serves this QP
 * (type 2: bound through it, the same QP and not one that got its number
 * since) or the responder's PD (type 1: resp.pd), grants @access and
 * covers the range; else NULL.
 */
struct sroce_mr *sroce_mw_resolve(struct sroce_qp *qp, u32 rkey, u64 va,
				  u64 len, u32 access)
{
	struct sroce_mr *mr = NULL;
	struct sroce_mw *mw;
	unsigned long flags;
	bool ok;

	mw = sroce_mw_get(sroce_qp_dev(qp), rkey);
	if (!mw)
		return NULL;
	spin_lock_irqsave(&mw->lock, flags);
	ok = mw->valid && (mw->access & access) == access &&
	     va >= mw->addr && va - mw->addr <= mw->length &&
	     len <= mw->length - (va - mw->addr) &&
	     (mw->ibmw.type == IB_MW_TYPE_2 ? sroce_mw_bound_through(mw, qp) :
					     mw->ibmw.pd == qp->resp.pd);
	if (ok && refcount_inc_not_zero(&mw->mr->ref))
		mr = mw->mr;
	spin_unlock_irqrestore(&mw->lock, flags);
	sroce_mw_put(mw);
	return mr;
}

/* The first window at or after *@index (set to its index), referenced. */
static struct sroce_mw *sroce_mw_get_next(struct sroce_dev *sdev,
					  unsigned long *index)
{
	struct sroce_mw *mw;

	rcu_read_lock();
	for (;;) {
		mw = sroce_pool_next_rcu(&sdev->mw_pool, index);
		if (!mw || refcount_inc_not_zero(&mw->ref))
			break;
		(*index)++;
	}
	rcu_read_unlock();
	return mw;
}

/**
 * sroce_mw_qp_destroyed() - unbind the type 2 windows bound through a QP
 *	being destroyed, so that their regions can go
 * @qp: the QP: dead (it binds nothing more), unpublished, and unused
 *
 * Windows bound through other QPs are left alone, and so are windows being
 * deallocated, which their dealloc unbinds.  See the file comment.
 *
 * Context: Process context. May sleep. Takes window and region locks.
 */
void sroce_mw_qp_destroyed(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	unsigned long index = 0;
	struct sroce_mr *old;
	struct sroce_mw *mw;
	unsigned long flags;

	might_sleep();
	while (atomic_read(&qp->mw2_bound) > 0) {
		mw = sroce_mw_get_next(sdev, &index);
		if (!mw)
			break;
		spin_lock_irqsave(&mw->lock, flags);
		old = sroce_mw_unbind_from(mw, qp);
		spin_unlock_irqrestore(&mw->lock, flags);
		sroce_mw_release_mr(old);
		sroce_mw_put(mw);
		index++;
		cond_resched();
	}
}
