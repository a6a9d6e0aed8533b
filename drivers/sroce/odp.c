// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * odp.c - on-demand paging: user memory regions whose pages are not
 * pinned but looked up when an access needs them, and let go when the
 * process unmaps or the kernel moves them.
 *
 * A region registered with IB_ACCESS_ON_DEMAND holds an ib_umem_odp (an
 * explicit region) or, registered over the whole address space (address 0,
 * length U64_MAX), an implicit root with one child umem per
 * SROCE_ODP_CHILD_SIZE slice of the address space, made when an access
 * first needs it.  ib_core keeps each umem's page table: a page is there
 * (sroce_odp_page_va()) from a fault until an invalidation takes it away.
 *
 * The data path (any context) never faults.  Under the region's lock it
 * finds every page it needs present, with write access if it writes, and
 * copies; or it finds one missing, queues a fault on the QP it works for
 * (sroce_odp_fault_queue(): one per QP at a time, in process context) and
 * says -EAGAIN.  What waits then depends on who asked: the requester
 * stops until the fault is resolved, which runs it again; the responder
 * answers with an RNR NAK (RC) or drops the packet (UC, UD), and the peer
 * sends it again; READ responses wait for the fault and resume; a READ or
 * atomic response for the requester's own memory is treated as lost, and
 * the requester asks again once its memory is there.  A fault that fails
 * (an address the process has not mapped, a read-only mapping written) is
 * remembered as the region's bad range (one per region: the last): the next access that finds a
 * page of it missing fails with -EFAULT, an access error, instead of
 * waiting for ever.
 *
 * Invalidation (the umem's mmu interval notifier, process context) takes
 * ib_core's umem_mutex and then the region's lock around unmapping the
 * pages, so a copy under the lock finishes before its pages go, and one
 * after finds them gone.  Lock order: umem_mutex, then mr->lock.
 */
#include <linux/hmm.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <rdma/ib_umem_odp.h>

#include "sroce.h"

/*
 * An implicit region's child umems each cover this much address space, and
 * a region has this many at most (64 GiB of it touched).  A child's page
 * tables are ib_core's, 16 bytes per page, whether the pages exist or not,
 * and not charged to anyone: the cap bounds them (64 MiB per region).
 */
#define SROCE_ODP_CHILD_SHIFT 24
#define SROCE_ODP_CHILD_SIZE BIT_ULL(SROCE_ODP_CHILD_SHIFT)
#define SROCE_ODP_MAX_CHILDREN 4096

/* A READ or atomic's own memory is made present this far ahead at most. */
#define SROCE_ODP_PREFAULT_MAX SZ_256K
/* A fault brings in this much more after what the access needs, if it can. */
#define SROCE_ODP_FAULT_AHEAD SZ_64K

/*
 * The region's device, through its PD: ib_core sets ibmr.device only once
 * registration has returned, and an invalidation can come before.
 */
static struct sroce_dev *sroce_odp_dev(struct sroce_mr *mr)
{
	return to_sdev(mr->ibmr.pd->device);
}

static bool sroce_odp_invalidate(struct mmu_interval_notifier *mni,
				 const struct mmu_notifier_range *range,
				 unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	struct sroce_mr *mr;
	unsigned long flags;
	u64 start, end;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max_t(u64, range->start, ib_umem_start(odp));
	end = min_t(u64, range->end, ib_umem_end(odp));
	/* Before publication no page has been faulted in: nothing to undo. */
	mr = READ_ONCE(odp->private);
	if (mr && start < end) {
		spin_lock_irqsave(&mr->lock, flags);
		ib_umem_odp_unmap_dma_pages(odp, start, end);
		spin_unlock_irqrestore(&mr->lock, flags);
		sroce_count(sroce_odp_dev(mr), SROCE_CNT_ODP_INVALIDATIONS);
	}
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops sroce_odp_ops = {
	.invalidate = sroce_odp_invalidate,
};

static bool sroce_odp_is_implicit(const struct sroce_mr *mr)
{
	return mr->odp->is_implicit_odp;
}

/**
 * sroce_odp_mr_init() - give a new region its on-demand memory
 * @mr: the region, not yet published; its iova and length are set
 * @ibdev: the device
 * @start: the first user address, or 0 with length U64_MAX for the
 *	whole address space (implicit: then iova must be 0 too)
 * @access: IB_ACCESS_* flags, with IB_ACCESS_ON_DEMAND
 *
 * Nothing is pinned or charged to RLIMIT_MEMLOCK: pages are faulted in as
 * accesses need them.
 *
 * Context: Process context of the registering task. May sleep.
 * Return: 0, -EINVAL for an implicit region at another iova or huge pages
 * asked for implicitly, -EFAULT for an address range that overflows, or
 * -ENOMEM.
 */
int sroce_odp_mr_init(struct sroce_mr *mr, struct ib_device *ibdev,
		      u64 start, int access)
{
	struct ib_umem_odp *odp;

	if (!start && mr->length == U64_MAX) {
		if (mr->iova)
			return -EINVAL;
		odp = ib_umem_odp_alloc_implicit(ibdev, access);
	} else {
		if (start + mr->length < start)
			return -EFAULT;
		odp = ib_umem_odp_get(ibdev, start, mr->length, access,
				      &sroce_odp_ops);
	}
	if (IS_ERR(odp))
		return PTR_ERR(odp);
	mr->odp = odp;
	mr->odp_start = start;
	xa_init(&mr->odp_children);
	mutex_init(&mr->odp_grow);
	WRITE_ONCE(odp->private, mr);
	atomic_inc(&to_sdev(ibdev)->num_odp_mr);
	return 0;
}

/**
 * sroce_odp_mr_release() - let a region's on-demand memory go
 * @mr: the region, unpublished, with no references left
 *
 * Context: Process context. May sleep.
 */
void sroce_odp_mr_release(struct sroce_mr *mr)
{
	struct ib_umem_odp *child;
	unsigned long i;

	xa_for_each(&mr->odp_children, i, child)
		ib_umem_odp_release(child);
	xa_destroy(&mr->odp_children);
	mutex_destroy(&mr->odp_grow);
	atomic_dec(&to_sdev(mr->odp->umem.ibdev)->num_odp_mr);
	ib_umem_odp_release(mr->odp);
}

/**
 * sroce_odp_mapped_pages() - pages of a region present now
 * @mr: an on-demand region
 *
 * Context: Any context. Caller holds mr->lock.
 * Return: the count ("rdma res show mr -dd").
 */
u64 sroce_odp_mapped_pages(struct sroce_mr *mr)
{
	struct ib_umem_odp *child;
	unsigned long i;
	u64 n = 0;

	lockdep_assert_held(&mr->lock);
	if (!sroce_odp_is_implicit(mr))
		return READ_ONCE(mr->odp->npages);
	xa_for_each(&mr->odp_children, i, child)
		n += READ_ONCE(child->npages);
	return n;
}

/* The umem holding @iova (a user address), or NULL: no child there yet. */
static struct ib_umem_odp *sroce_odp_umem(struct sroce_mr *mr, u64 uva)
{
	if (!sroce_odp_is_implicit(mr))
		return mr->odp;
	return xa_load(&mr->odp_children, uva >> SROCE_ODP_CHILD_SHIFT);
}

/* The user address of region address @iova. */
static u64 sroce_odp_uva(const struct sroce_mr *mr, u64 iova)
{
	return iova - mr->iova + mr->odp_start;
}

/*
 * The kernel address of user address @uva, and the bytes from it in the
 * same page, or NULL if that page is not present (writable for @write).
 */
static void *sroce_odp_va(struct sroce_mr *mr, u64 uva, bool write, u32 *room)
{
	struct ib_umem_odp *odp = sroce_odp_umem(mr, uva);
	u64 off, page_size;
	void *va;

	lockdep_assert_held(&mr->lock);
	if (!odp || uva < ib_umem_start(odp) || uva >= ib_umem_end(odp))
		return NULL;
	page_size = BIT_ULL(odp->page_shift);
	off = uva - ib_umem_start(odp);
	va = sroce_odp_page_va(odp, off >> odp->page_shift, write);
	if (!va)
		return NULL;
	*room = page_size - (off & (page_size - 1));
	return va + (off & (page_size - 1));
}

/*
 * Whether all of @len bytes from @uva are present; if not, *@miss is the
 * first user address that is not.
 */
static bool sroce_odp_present(struct sroce_mr *mr, u64 uva, u64 len,
			      bool write, u64 *miss)
{
	u32 room;

	while (len) {
		if (!sroce_odp_va(mr, uva, write, &room)) {
			*miss = uva;
			return false;
		}
		if (room >= len)
			break;
		uva += room;
		len -= room;
	}
	return true;
}

/*
 * An access found @uva missing: -EFAULT if a fault there has failed since
 * the last access that learnt it (the bad range is forgotten then, so the
 * process may map the memory and try again), else -EAGAIN with a fault
 * queued on @qp for the rest of the access.
 */
static int sroce_odp_missing(struct sroce_qp *qp, struct sroce_mr *mr,
			     u64 uva, u64 end, bool write)
{
	lockdep_assert_held(&mr->lock);
	if (mr->odp_bad_end > uva && mr->odp_bad_start < end) {
		mr->odp_bad_start = 0;
		mr->odp_bad_end = 0;
		return -EFAULT;
	}
	sroce_odp_fault_queue(qp, mr, uva, end - uva, write);
	return -EAGAIN;
}

/**
 * sroce_odp_copy() - move data into or out of an on-demand region
 * @qp: the QP the copy is for: a fault it needs is queued there
 * @mr: the region; the caller checked the range with sroce_mr_check()
 * @iova: the first address
 * @buf: kernel buffer
 * @len: bytes
 * @dir: which way
 *
 * Nothing is copied unless every page is present.
 *
 * Context: Any context.
 * Return: 0, -EAGAIN with a fault queued on @qp, or -EFAULT where the
 * process has no such memory.
 */
int sroce_odp_copy(struct sroce_qp *qp, struct sroce_mr *mr, u64 iova,
		   void *buf, u32 len, enum sroce_copy_dir dir)
{
	bool write = dir == SROCE_TO_MR;
	u64 uva = sroce_odp_uva(mr, iova);
	unsigned long flags;
	u32 chunk, room;
	int err = 0;
	void *va;
	u64 miss;

	spin_lock_irqsave(&mr->lock, flags);
	if (!sroce_odp_present(mr, uva, len, write, &miss)) {
		err = sroce_odp_missing(qp, mr, miss, uva + len, write);
		goto out_unlock;
	}
	while (len) {
		va = sroce_odp_va(mr, uva, write, &room);
		chunk = min(len, room);
		if (write)
			memcpy(va, buf, chunk);
		else
			memcpy(buf, va, chunk);
		buf += chunk;
		uva += chunk;
		len -= chunk;
	}
out_unlock:
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}

/**
 * sroce_odp_atomic() - an atomic operation on an on-demand region
 * @qp: the QP it is for
 * @mr: the region; the caller checked the 8 bytes
 * @iova: the 8-byte aligned address
 * @op: which operation
 * @compare_add: the compare value, or the addend
 * @swap: the swap value, or the value an atomic write stores
 * @orig: the value before the operation
 *
 * Context: Any context.
 * Return: 0, or as sroce_odp_copy().
 */
int sroce_odp_atomic(struct sroce_qp *qp, struct sroce_mr *mr, u64 iova,
		     enum sroce_atomic_op op, u64 compare_add, u64 swap,
		     u64 *orig)
{
	u64 uva = sroce_odp_uva(mr, iova);
	unsigned long flags;
	int err = 0;
	u32 room;
	u64 *p;

	spin_lock_irqsave(&mr->lock, flags);
	p = sroce_odp_va(mr, uva, true, &room);
	if (p)
		*orig = sroce_atomic_do(p, op, compare_add, swap);
	else
		err = sroce_odp_missing(qp, mr, uva, uva + sizeof(*p), true);
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}

/**
 * sroce_odp_prepare() - make sure memory an answer will land in is there
 * @qp: the QP whose READ or atomic it is
 * @mr: an on-demand region
 * @iova: the first address
 * @len: bytes; only the first SROCE_ODP_PREFAULT_MAX are looked at
 *
 * Context: Any context.
 * Return: 0 if present, else as sroce_odp_copy().
 */
int sroce_odp_prepare(struct sroce_qp *qp, struct sroce_mr *mr, u64 iova,
		      u64 len)
{
	u64 uva = sroce_odp_uva(mr, iova);
	unsigned long flags;
	int err = 0;
	u64 miss;

	len = min_t(u64, len, SROCE_ODP_PREFAULT_MAX);
	spin_lock_irqsave(&mr->lock, flags);
	if (!sroce_odp_present(mr, uva, len, true, &miss))
		err = sroce_odp_missing(qp, mr, miss, uva + len, true);
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}

/*
 * The child umem of an implicit region for @uva, made if need be: -EFAULT
 * outside user space, -ENOMEM past SROCE_ODP_MAX_CHILDREN.
 */
static struct ib_umem_odp *sroce_odp_child(struct sroce_mr *mr, u64 uva)
{
	unsigned long index = uva >> SROCE_ODP_CHILD_SHIFT;
	struct ib_umem_odp *child;
	int err;

	if (uva >= TASK_SIZE_MAX)
		return ERR_PTR(-EFAULT);
	mutex_lock(&mr->odp_grow);
	child = xa_load(&mr->odp_children, index);
	if (child)
		goto out_unlock;
	if (mr->odp_nchildren >= SROCE_ODP_MAX_CHILDREN) {
		child = ERR_PTR(-ENOMEM);
		goto out_unlock;
	}
	child = ib_umem_odp_alloc_child(mr->odp, index << SROCE_ODP_CHILD_SHIFT,
					SROCE_ODP_CHILD_SIZE, &sroce_odp_ops);
	if (IS_ERR(child))
		goto out_unlock;
	WRITE_ONCE(child->private, mr);
	err = xa_err(xa_store(&mr->odp_children, index, child, SROCE_GFP_OBJ));
	if (err) {
		ib_umem_odp_release(child);
		child = ERR_PTR(err);
	} else {
		mr->odp_nchildren++;
	}
out_unlock:
	mutex_unlock(&mr->odp_grow);
	return child;
}

/* Fault in, or with !@fault map what is already there, of one umem. */
static int sroce_odp_map(struct ib_umem_odp *odp, u64 uva, u64 len,
			 bool write, bool fault)
{
	int ret;

	ret = ib_umem_odp_map_dma_and_lock(odp, uva, len,
					   sroce_odp_access_mask(write), fault);
	if (ret < 0)
		return ret;
	mutex_unlock(&odp->umem_mutex);
	return 0;
}

/**
 * sroce_odp_fault() - make part of an on-demand region present
 * @mr: the region, referenced by the caller
 * @uva: the first user address
 * @len: bytes
 * @write: writable
 * @fault: fault pages in; false: map only what the process has already
 *	(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
 *
 * Context: Process context. May sleep.
 * Return: 0, -EFAULT outside the region or for memory the process cannot
 * give (as hmm_range_fault() says), or -ENOMEM.
 */
int sroce_odp_fault(struct sroce_mr *mr, u64 uva, u64 len, bool write,
		    bool fault)
{
	struct ib_umem_odp *odp = mr->odp;
	u64 end = uva + len, chunk;
	int err = 0;

	if (end < uva)
		return -EFAULT;
	while (!err && uva < end) {
		chunk = end - uva;
		if (sroce_odp_is_implicit(mr)) {
			odp = sroce_odp_child(mr, uva);
			if (IS_ERR(odp))
				return PTR_ERR(odp);
			chunk = min(chunk, ib_umem_end(odp) - uva);
		}
		err = sroce_odp_map(odp, uva, chunk, write, fault);
		uva += chunk;
	}
	return err;
}

/* The end of the umem @uva is in: a fault-ahead goes no further. */
static u64 sroce_odp_umem_end(struct sroce_mr *mr, u64 uva)
{
	if (sroce_odp_is_implicit(mr))
		return round_up(uva + 1, SROCE_ODP_CHILD_SIZE);
	return ib_umem_end(mr->odp);
}

/*
 * The fault a QP waits for, then up to SROCE_ODP_FAULT_AHEAD bytes after
 * it in the same umem: a multi-packet access would fault page by page
 * otherwise, each a round trip.  What the ahead part cannot fault in is
 * left (the memory may end there); a failure of the fault itself is
 * remembered as the region's bad range.
 */
static void sroce_odp_fault_for(struct sroce_mr *mr, u64 uva, u64 len,
				bool write)
{
	struct sroce_dev *sdev = sroce_odp_dev(mr);
	u64 end = uva + len, ahead;
	unsigned long flags;

	if (sroce_odp_fault(mr, uva, len, write, true)) {
		spin_lock_irqsave(&mr->lock, flags);
		mr->odp_bad_start = uva;
		mr->odp_bad_end = end;
		spin_unlock_irqrestore(&mr->lock, flags);
		sroce_count(sdev, SROCE_CNT_ODP_FAULT_ERRORS);
		return;
	}
	sroce_count(sdev, SROCE_CNT_ODP_FAULTS);
	ahead = min(sroce_odp_umem_end(mr, end - 1) - end,
		    (u64)SROCE_ODP_FAULT_AHEAD);
	if (ahead)
		sroce_odp_fault(mr, end, ahead, write, true);
}

/**
 * sroce_odp_fault_queue() - have a QP's page fault resolved
 * @qp: the QP that waits for it
 * @mr: the region, referenced by the caller
 * @uva: the first user address missing
 * @len: bytes from it
 * @write: writable
 *
 * A QP has one fault queued at a time: a second is not queued (its
 * access, made again, queues it once the first is resolved).  The work
 * runs the QP's requester and sends what its responder owes when done.
 *
 * Context: Any context.
 */
void sroce_odp_fault_queue(struct sroce_qp *qp, struct sroce_mr *mr, u64 uva,
			   u64 len, bool write)
{
	struct sroce_odp_fault *f = &qp->fault;

	if (READ_ONCE(qp->dead) || test_and_set_bit_lock(0, &f->busy))
		return;
	refcount_inc(&mr->ref);
	f->mr = mr;
	f->uva = uva;
	f->len = len;
	f->write = write;
	sroce_qp_get(qp);
	if (!queue_work(sroce_wq, &f->work)) {
		/* Cannot happen while busy was clear; undone all the same. */
		sroce_mr_put(mr);
		clear_bit_unlock(0, &f->busy);
		sroce_qp_put(qp);
	}
}

/**
 * sroce_odp_fault_work() - resolve a QP's page fault
 * @work: qp->fault.work; the work holds a QP and a region reference
 *
 * Context: Process context (sroce_wq).
 */
void sroce_odp_fault_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, fault.work);
	struct sroce_odp_fault *f = &qp->fault;
	struct sroce_mr *mr = f->mr;

	sroce_odp_fault_for(mr, f->uva, f->len, f->write);
	f->mr = NULL;
	sroce_mr_put(mr);
	clear_bit_unlock(0, &f->busy);
	sroce_qp_sched_req(qp);
	if (sroce_qp_reliable(qp) && qp->ibqp.qp_type != IB_QPT_XRC_INI)
		sroce_resp_kick(qp);
	sroce_qp_put(qp);
}

/**
 * sroce_odp_fault_cancel() - drop a QP's queued fault as the QP dies
 * @qp: the QP, dead
 *
 * Context: Process context. May sleep.
 */
void sroce_odp_fault_cancel(struct sroce_qp *qp)
{
	struct sroce_odp_fault *f = &qp->fault;

	if (!cancel_work_sync(&f->work))
		return;
	sroce_mr_put(f->mr);
	f->mr = NULL;
	clear_bit_unlock(0, &f->busy);
	sroce_qp_put(qp);
}

/* One SGE of an advice: a region of @pd's, on demand, with the rights. */
static struct sroce_mr *sroce_odp_advice_mr(struct ib_pd *pd,
					    const struct ib_sge *sge,
					    bool write)
{
	struct sroce_mr *mr = sroce_mr_get(to_sdev(pd->device), sge->lkey);

	if (!mr)
		return ERR_PTR(-ENOENT);
	if (mr->type != SROCE_MR_ODP ||
	    sroce_mr_check(mr, pd, sge->addr, sge->length,
			   write ? IB_ACCESS_LOCAL_WRITE : 0)) {
		sroce_mr_put(mr);
		return ERR_PTR(-EINVAL);
	}
	return mr;
}

/**
 * sroce_advise_mr() - ib_device_ops.advise_mr: prefetch on-demand memory
 * @pd: the PD of the regions
 * @advice: IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH (readable),
 *	_PREFETCH_WRITE (writable) or _PREFETCH_NO_FAULT (map what the
 *	process already has, fault nothing in)
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH or not: sroce always prefetches
 *	before it returns, which is what the flag asks and what "may return
 *	at once" allows
 * @sg_list: the ranges, each in an on-demand region of @pd (lkey)
 * @num_sge: entries in @sg_list
 * @attrs: no driver attributes
 *
 * Context: Process context. May sleep.
 * Return: 0, -ENOENT for an unknown lkey, -EINVAL for a region that is not
 * on demand, of another PD, without the rights or shorter than the range,
 * -EOPNOTSUPP for other advice, or as sroce_odp_fault().
 */
int sroce_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs)
{
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	struct sroce_mr *mr;
	int err = 0;
	u32 i;

	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	for (i = 0; i < num_sge && !err; i++) {
		mr = sroce_odp_advice_mr(pd, &sg_list[i], write);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		if (sg_list[i].length)
			err = sroce_odp_fault(mr, sroce_odp_uva(mr,
								sg_list[i].addr),
					      sg_list[i].length, write, fault);
		sroce_mr_put(mr);
	}
	return err;
}
