// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pool.c - numbered objects, see pool.h.
 */
#include "pool.h"

/**
 * sroce_pool_init() - set up a number space
 * @pool: the pool
 * @min: the lowest index handed out
 * @max_index: the highest index handed out
 * @max_count: the most objects at once
 *
 * Context: Any context.
 */
void sroce_pool_init(struct sroce_pool *pool, u32 min, u32 max_index,
		     u32 max_count)
{
	xa_init_flags(&pool->xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	pool->limit = XA_LIMIT(min, max_index);
	pool->next = min;
	atomic_set(&pool->count, 0);
	pool->max = max_count;
}

/**
 * sroce_pool_uninit() - tear down an empty number space
 * @pool: the pool; every object has been removed
 *
 * Context: Any context.
 */
void sroce_pool_uninit(struct sroce_pool *pool)
{
	xa_destroy(&pool->xa);
}

static bool sroce_pool_reserve(struct sroce_pool *pool)
{
	if (atomic_inc_return(&pool->count) <= pool->max)
		return true;
	atomic_dec(&pool->count);
	return false;
}

/**
 * sroce_pool_add() - publish an object under a new index
 * @pool: the pool
 * @obj: the object, complete: lookups may find it as soon as this returns
 * @index: where the index goes
 * @gfp: allocation flags (GFP_ATOMIC from atomic context)
 *
 * Context: Any context.
 * Return: 0, or -ENOMEM when the pool is full or memory is short.
 */
int sroce_pool_add(struct sroce_pool *pool, void *obj, u32 *index, gfp_t gfp)
{
	unsigned long flags;
	int err;

	if (!sroce_pool_reserve(pool))
		return -ENOMEM;
	xa_lock_irqsave(&pool->xa, flags);
	err = __xa_alloc_cyclic(&pool->xa, index, obj, pool->limit,
				&pool->next, gfp);
	xa_unlock_irqrestore(&pool->xa, flags);
	if (err < 0) {
		atomic_dec(&pool->count);
		return err == -EBUSY ? -ENOMEM : err;
	}
	return 0;
}

/**
 * sroce_pool_insert() - publish an object under a fixed index
 * @pool: the pool
 * @obj: the object, complete
 * @index: the index, outside the range sroce_pool_add() hands out
 * @gfp: allocation flags
 *
 * Context: Process context.
 * Return: 0, -EBUSY if the index is taken, or -ENOMEM.
 */
int sroce_pool_insert(struct sroce_pool *pool, void *obj, u32 index,
		      gfp_t gfp)
{
	int err;

	if (!sroce_pool_reserve(pool))
		return -ENOMEM;
	err = xa_insert_irq(&pool->xa, index, obj, gfp);
	if (err)
		atomic_dec(&pool->count);
	return err;
}

/**
 * sroce_pool_replace() - publish @obj in place of the object at @index
 * @pool: the pool
 * @index: an index in use
 * @obj: the new object, complete
 *
 * Lookups from now on find @obj; those that started before may still
 * return the old object.  The old object is never removed: it just stops
 * being published.
 *
 * Context: Any context.
 * Return: the old object.
 */
void *sroce_pool_replace(struct sroce_pool *pool, u32 index, void *obj)
{
	unsigned long flags;
	void *old;

	/* Overwriting a present entry allocates nothing. */
	xa_lock_irqsave(&pool->xa, flags);
	old = __xa_store(&pool->xa, index, obj, GFP_ATOMIC);
	xa_unlock_irqrestore(&pool->xa, flags);
	return old;
}

/**
 * sroce_pool_remove() - unpublish an object
 * @pool: the pool
 * @index: its index
 *
 * Lookups that started before may still return the object: the caller
 * waits for them (an RCU grace period) before freeing it.
 *
 * Context: Any context.
 */
void sroce_pool_remove(struct sroce_pool *pool, u32 index)
{
	unsigned long flags;

	xa_lock_irqsave(&pool->xa, flags);
	__xa_erase(&pool->xa, index);
	xa_unlock_irqrestore(&pool->xa, flags);
	atomic_dec(&pool->count);
}
