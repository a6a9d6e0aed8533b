// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * domain.c - thread domains and parent domains, the provider's own
 * objects: the kernel never hears of them.
 *
 * A thread domain is the application's promise that the objects created
 * in it are used from one thread at a time (ibv_alloc_td(3)); a parent
 * domain joins a PD with a thread domain and, optionally, memory
 * allocators (ibv_alloc_parent_domain(3)).  A parent domain goes wherever
 * a PD goes: it carries its PD's kernel handle, so every command naming it
 * names the PD.  QPs, SRQs and CQs created in a parent domain with a
 * thread domain take no locks (struct sroce_spin).  The allocators are
 * accepted and never called: sroce's queue buffers are the kernel's,
 * mapped into the process (ring.h), so the provider allocates none.
 */
#include <errno.h>
#include <stdlib.h>

#include "sroce.h"

/* alloc_parent_domain attributes the provider honours. */
#define SROCE_PARENT_DOMAIN_COMP_MASK					\
	(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |			\
	 IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)

/**
 * sroce_td_alloc() - alloc_td op
 * @ibctx: context
 * @attr: attributes; no comp_mask bit is defined
 *
 * Context: takes no lock.
 * Return: the new thread domain, or NULL with errno set (EOPNOTSUPP for a
 * comp_mask bit, ENOMEM).
 */
struct ibv_td *sroce_td_alloc(struct ibv_context *ibctx,
			      struct ibv_td_init_attr *attr)
{
	struct sroce_td *td;

	if (attr->comp_mask) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td)
		return NULL;
	td->ibv_td.context = ibctx;
	return &td->ibv_td;
}

/**
 * sroce_td_dealloc() - dealloc_td op
 * @ibtd: thread domain from sroce_td_alloc()
 *
 * Return: 0, or EBUSY while a parent domain names the thread domain.
 */
int sroce_td_dealloc(struct ibv_td *ibtd)
{
	struct sroce_td *td = to_std(ibtd);

	if (atomic_load(&td->users))
		return EBUSY;
	free(td);
	return 0;
}

/*
 * Return: 0, EOPNOTSUPP for a comp_mask bit the provider does not know,
 * or EINVAL for a PD that is missing, a parent domain itself or another
 * context's, or a thread domain of another context.
 */
static int parent_domain_check(struct ibv_context *ibctx,
			       const struct ibv_parent_domain_init_attr *attr)
{
	if (attr->comp_mask & ~(uint32_t)SROCE_PARENT_DOMAIN_COMP_MASK)
		return EOPNOTSUPP;
	if (!attr->pd || attr->pd->context != ibctx || to_spd(attr->pd)->pd)
		return EINVAL;
	if (attr->td && attr->td->context != ibctx)
		return EINVAL;
	return 0;
}

/**
 * sroce_parent_domain_alloc() - alloc_parent_domain op
 * @ibctx: context
 * @attr: the PD (required, not itself a parent domain), the thread domain
 *	(optional) and the allocators (accepted, never called: see above)
 *
 * The PD and the thread domain cannot be freed while the parent domain
 * exists.
 *
 * Context: takes no lock.
 * Return: the parent domain, an ibv_pd, or NULL with errno set (as
 * parent_domain_check() says, or ENOMEM).
 */
struct ibv_pd *sroce_parent_domain_alloc(struct ibv_context *ibctx,
					 struct ibv_parent_domain_init_attr *attr)
{
	struct sroce_pd *parent;
	int ret;

	ret = parent_domain_check(ibctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	parent = calloc(1, sizeof(*parent));
	if (!parent)
		return NULL;
	parent->ibv_pd.context = ibctx;
	parent->ibv_pd.handle = attr->pd->handle;
	parent->pd = to_spd(attr->pd);
	atomic_fetch_add(&parent->pd->users, 1);
	if (attr->td) {
		parent->td = to_std(attr->td);
		atomic_fetch_add(&parent->td->users, 1);
	}
	return &parent->ibv_pd;
}

/**
 * sroce_parent_domain_dealloc() - dealloc_pd of a parent domain
 * @parent: from sroce_parent_domain_alloc()
 *
 * Return: 0, or EBUSY while objects created in the parent domain exist
 * (they name it as their PD).
 */
int sroce_parent_domain_dealloc(struct sroce_pd *parent)
{
	if (atomic_load(&parent->users))
		return EBUSY;
	atomic_fetch_sub(&parent->pd->users, 1);
	if (parent->td)
		atomic_fetch_sub(&parent->td->users, 1);
	free(parent);
	return 0;
}

/**
 * sroce_pd_hold() - count a new object created in @ibpd
 * @ibpd: the PD or parent domain a QP, SRQ, CQ, MR, MW or AH was created in
 *
 * Only a parent domain counts its objects; the kernel counts a PD's.
 */
void sroce_pd_hold(struct ibv_pd *ibpd)
{
	struct sroce_pd *pd = to_spd(ibpd);

	if (pd->pd)
		atomic_fetch_add(&pd->users, 1);
}

/**
 * sroce_pd_put() - undo sroce_pd_hold() for an object now destroyed
 * @ibpd: the PD or parent domain the object was created in
 */
void sroce_pd_put(struct ibv_pd *ibpd)
{
	struct sroce_pd *pd = to_spd(ibpd);

	if (pd->pd)
		atomic_fetch_sub(&pd->users, 1);
}

/**
 * sroce_pd_single_threaded() - is @ibpd a parent domain with a thread domain?
 * @ibpd: a PD or a parent domain
 *
 * Return: true if objects created in @ibpd are used from one thread at a
 * time, and may do without locks.
 */
bool sroce_pd_single_threaded(struct ibv_pd *ibpd)
{
	return to_spd(ibpd)->td != NULL;
}
