// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ah.c - address vectors: where a UD address handle or a connected QP's
 * packets go, taken from the core's rdma_ah_attr; and address handles.
 *
 * A user address handle gets a number that the process's UD send WQEs name
 * it by; the send path copies the address vector out under RCU
 * (sroce_ah_lookup()), so a WQE never holds a pointer to an AH.  The
 * number maps to a copy of the address (struct sroce_ah_num) freed after a
 * grace period, not to the AH, which the core frees at once: destroying an
 * AH never waits for a grace period, and a process with thousands of them
 * exits quickly.
 */
#include <net/ipv6.h>
#include <rdma/ib_cache.h>

#include "sroce.h"

/**
 * sroce_av_from_attr() - build an address vector
 * @sdev: the device
 * @av: filled
 * @attr: the core's address, with a source GID of this device's port
 *
 * Context: Any context.
 * Return: 0, or -EINVAL for an address a RoCEv2 port cannot reach.
 */
int sroce_av_from_attr(struct sroce_dev *sdev, struct sroce_av *av,
		       const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);
	const struct ib_gid_attr *sgid = grh->sgid_attr;
	struct net_device *ndev;
	bool v4;

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) || !sgid ||
	    sgid->device != &sdev->ibdev ||
	    sgid->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	v4 = ipv6_addr_v4mapped((struct in6_addr *)sgid->gid.raw);
	if (v4 != ipv6_addr_v4mapped((struct in6_addr *)grh->dgid.raw))
		return -EINVAL;
	memset(av, 0, sizeof(*av));
	av->network_type = v4 ? RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
	av->tos = grh->traffic_class;
	av->ttl = grh->hop_limit ? grh->hop_limit : 64;
	av->flow_label = grh->flow_label & 0xfffff;
	av->sgid_index = grh->sgid_index;
	memcpy(&av->saddr, sgid->gid.raw, sizeof(av->saddr));
	memcpy(&av->daddr, grh->dgid.raw, sizeof(av->daddr));
	if (attr->type == RDMA_AH_ATTR_TYPE_ROCE)
		memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(sgid);
	if (!IS_ERR(ndev))
		av->ifindex = ndev->ifindex;
	rcu_read_unlock();
	return 0;
}

/**
 * sroce_av_to_attr() - describe an address vector to the core
 * @av: the address vector
 * @attr: filled
 *
 * Context: Any context.
 */
void sroce_av_to_attr(const struct sroce_av *av, struct rdma_ah_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, SROCE_PORT);
	rdma_ah_set_grh(attr, (union ib_gid *)&av->daddr, av->flow_label,
			av->sgid_index, av->ttl, av->tos);
	memcpy(attr->roce.dmac, av->dmac, ETH_ALEN);
}

/**
 * sroce_create_ah() - ib_device_ops.create_ah and create_user_ah
 * @ibah: the AH, allocated by the core
 * @init: the address and whether the caller may sleep
 * @udata: user AHs: struct sroce_create_ah_resp out; NULL for kernel AHs
 *
 * Context: Any context for kernel AHs (RDMA_CREATE_AH_SLEEPABLE says
 * whether sleeping is allowed); process context for user AHs.
 * Return: 0, -EINVAL for an unreachable address, -ENOMEM.
 */
int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct sroce_create_ah_resp resp = {};
	struct sroce_ah *ah = to_sah(ibah);
	int err;

	err = sroce_av_from_attr(sdev, &ah->av, init->ah_attr);
	if (err)
		return err;
	if (!udata) {
		sroce_obj_created(SROCE_OBJ_AH);
		return 0;
	}
	err = sroce_udata_none(udata);
	if (err)
		return err;
	ah->num = kmalloc(sizeof(*ah->num), SROCE_GFP_OBJ);
	if (!ah->num)
		return -ENOMEM;
	ah->num->av = ah->av;
	ah->num->pd = ibah->pd;
	err = sroce_pool_add(&sdev->ah_pool, ah->num, &ah->ah_num,
			     SROCE_GFP_OBJ);
	if (err)
		goto err_free_num;
	resp.ah_num = ah->ah_num;
	err = sroce_udata_out(udata, &resp, sizeof(resp));
	if (err)
		goto err_unpublish;
	sroce_obj_created(SROCE_OBJ_AH);
	return 0;

err_unpublish:
	sroce_pool_remove(&sdev->ah_pool, ah->ah_num);
err_free_num:
	kfree_rcu(ah->num, rcu);
	return err;
}

/**
 * sroce_destroy_ah() - ib_device_ops.destroy_ah
 * @ibah: the AH; the core frees it on return
 * @flags: RDMA_DESTROY_AH_SLEEPABLE when the caller may sleep
 *
 * A user AH is unpublished; its number's entry is freed after the RCU
 * readers copying it out are done, without waiting for them.
 *
 * Context: Any context.
 * Return: 0.
 */
int sroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct sroce_ah *ah = to_sah(ibah);

	if (ah->ah_num) {
		sroce_pool_remove(&sdev->ah_pool, ah->ah_num);
		kfree_rcu(ah->num, rcu);
	}
	sroce_obj_destroyed(SROCE_OBJ_AH);
	return 0;
}

/**
 * sroce_query_ah() - ib_device_ops.query_ah
 * @ibah: the AH
 * @attr: filled with its address
 *
 * Context: Any context.
 * Return: 0.
 */
int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	sroce_av_to_attr(&to_sah(ibah)->av, attr);
	return 0;
}

/**
 * sroce_ah_lookup() - copy out the address of a user AH
 * @sdev: the device
 * @ah_num: the number a UD WQE named
 * @pd: the PD the AH must belong to (the QP's)
 * @av: where the address goes
 *
 * Context: Any context.
 * Return: true if @ah_num names a live AH of @pd.
 */
bool sroce_ah_lookup(struct sroce_dev *sdev, u32 ah_num, struct ib_pd *pd,
		     struct sroce_av *av)
{
	struct sroce_ah_num *num;
	bool found = false;

	rcu_read_lock();
	num = sroce_pool_lookup_rcu(&sdev->ah_pool, ah_num);
	if (num && num->pd == pd) {
		*av = num->av;
		found = true;
	}
	rcu_read_unlock();
	return found;
}
