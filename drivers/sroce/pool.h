/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pool.h - numbered objects: QP numbers, memory key indices, address
 * handle numbers.  An index is taken when the object is complete and
 * published (sroce_pool_add()), found locklessly under RCU
 * (sroce_pool_lookup_rcu()), and given back first thing on destroy
 * (sroce_pool_remove()).  The objects carry their own reference counts; the
 * pool only maps numbers to pointers and bounds how many exist.
 */
#ifndef SROCE_POOL_H
#define SROCE_POOL_H

#include <linux/atomic.h>
#include <linux/xarray.h>

/**
 * struct sroce_pool - one number space
 * @xa: index -> object; its lock is taken with interrupts off because some
 *	objects are created and destroyed in atomic context
 * @limit: the indices handed out
 * @next: where the cyclic allocation resumes
 * @count: objects in the pool
 * @max: the most objects the pool holds
 */
struct sroce_pool {
	struct xarray xa;
	struct xa_limit limit;
	u32 next;
	atomic_t count;
	u32 max;
};

void sroce_pool_init(struct sroce_pool *pool, u32 min, u32 max_index,
		     u32 max_count);
void sroce_pool_uninit(struct sroce_pool *pool);
int sroce_pool_add(struct sroce_pool *pool, void *obj, u32 *index, gfp_t gfp);
int sroce_pool_insert(struct sroce_pool *pool, void *obj, u32 index,
		      gfp_t gfp);
void sroce_pool_remove(struct sroce_pool *pool, u32 index);
void *sroce_pool_replace(struct sroce_pool *pool, u32 index, void *obj);

/* Caller holds rcu_read_lock() and takes its own reference on the result. */
static inline void *sroce_pool_lookup_rcu(struct sroce_pool *pool, u32 index)
{
	return xa_load(&pool->xa, index);
}

/*
 * The object with the lowest index at or after *@index, which is set to
 * that index; NULL if none.  Caller holds rcu_read_lock() and takes its own
 * reference on the result.
 */
static inline void *sroce_pool_next_rcu(struct sroce_pool *pool,
					unsigned long *index)
{
	return xa_find(&pool->xa, index, ULONG_MAX, XA_PRESENT);
}

#endif /* SROCE_POOL_H */
