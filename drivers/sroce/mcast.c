// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mcast.c - UD multicast: QPs attached to multicast groups, the IP groups
 * joined on the netdev for them, and the delivery of a multicast datagram
 * to every QP attached to its group.
 *
 * On RoCEv2 a multicast GID is an IP multicast address: IPv4-mapped
 * (::ffff:224.0.0.0/100) for IPv4, ff00::/8 for IPv6, and a datagram for
 * the group is sent to that address with destination QP 0xffffff.  The
 * first QP attached to a group joins the address on the device's netdev
 * (ip_mc_inc_group(), ipv6_dev_mc_inc()), so that the IP stack accepts the
 * group's datagrams, from the wire and looped back from this host's own
 * sends, and hands them to the UDP 4791 socket; the last QP detached
 * leaves it.  The IP layer counts joins, so rdma_cm joining the same IPv4
 * group for its own reasons does not disturb this.
 *
 * Lifetime.  Groups and their member entries are written under
 * sroce_mcast.lock, taken inside rtnl_lock and sroce_bind_lock, and read by
 * the receive path under RCU; both are freed after a grace period.  A
 * member entry points at its QP's handle without a reference: ib_core
 * refuses to destroy a QP that is still attached, and destroy_qp detaches
 * whatever is left anyway (sroce_mcast_qp_detach_all()).  A reader that
 * found the entry before that takes its reference through the handle,
 * which outlives it (struct sroce_qp_handle), and finds none once the QP
 * is being destroyed.
 */
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jhash.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>

#include "sroce.h"

/**
 * struct sroce_mcast_grp - a multicast group with QPs of this device in it
 * @node: entry in sroce_mcast.groups
 * @rcu: frees the group after receive-path readers are done
 * @mgid: the multicast GID: an IPv4-mapped or an IPv6 multicast address
 * @members: struct sroce_mcast_member, RCU list
 * @num_qp: entries in @members, bounded by SROCE_MAX_MCAST_QP_ATTACH
 */
struct sroce_mcast_grp {
	struct hlist_node node;
	struct rcu_head rcu;
	struct in6_addr mgid;
	struct list_head members;
	u32 num_qp;
};

/**
 * struct sroce_mcast_member - one QP attached to a group
 * @node: entry in sroce_mcast_grp.members
 * @rcu: frees the entry after receive-path readers are done
 * @qp: the QP (not referenced; see the file comment), for attach and detach
 * @handle: its handle, for the receive path
 * @count: attach calls not yet matched by a detach; ib_core counts each
 *	in the QP's use count, so each must be undone
 */
struct sroce_mcast_member {
	struct list_head node;
	struct rcu_head rcu;
	struct sroce_qp *qp;
	struct sroce_qp_handle *handle;
	u32 count;
};

static u32 sroce_mcast_hash(const struct in6_addr *mgid)
{
	return jhash(mgid->s6_addr, sizeof(mgid->s6_addr), 0);
}

/**
 * sroce_mcast_init() - a new device has no multicast groups
 * @sdev: the device
 *
 * Context: Process context.
 */
void sroce_mcast_init(struct sroce_dev *sdev)
{
	mutex_init(&sdev->mcast.lock);
	hash_init(sdev->mcast.groups);
}

/**
 * sroce_mcast_uninit() - the device is going away
 * @sdev: the device; every QP is destroyed, so no group is left
 *
 * Context: Process context.
 */
void sroce_mcast_uninit(struct sroce_dev *sdev)
{
	mutex_destroy(&sdev->mcast.lock);
}

static struct sroce_mcast_grp *sroce_mcast_find(struct sroce_dev *sdev,
						const struct in6_addr *mgid)
{
	struct sroce_mcast_grp *grp;

	lockdep_assert_held(&sdev->mcast.lock);
	hash_for_each_possible(sdev->mcast.groups, grp, node,
			       sroce_mcast_hash(mgid))
		if (ipv6_addr_equal(&grp->mgid, mgid))
			return grp;
	return NULL;
}

/* @qp's membership of @grp; NULL if it has none, or there is no @grp. */
static struct sroce_mcast_member *
sroce_mcast_member(struct sroce_mcast_grp *grp, struct sroce_qp *qp)
{
	struct sroce_mcast_member *m;

	if (!grp)
		return NULL;
	list_for_each_entry(m, &grp->members, node)
		if (m->qp == qp)
			return m;
	return NULL;
}

/*
 * Join (or leave) @mgid's IP group on the device's netdev.  Without a
 * netdev (it went away, the device is being removed) there is nothing to
 * join, and nothing left to leave: the netdev's groups died with it.
 */
static int sroce_mcast_ip(struct sroce_dev *sdev, const struct in6_addr *mgid,
			  bool join)
{
	struct net_device *ndev;
	struct in_device *in_dev;
	int err;

	ASSERT_RTNL();
	ndev = rcu_dereference_protected(sdev->ndev,
					 lockdep_is_held(&sroce_bind_lock));
	if (!ndev)
		return join ? -ENODEV : 0;
	if (ipv6_addr_v4mapped(mgid)) {
		in_dev = __in_dev_get_rtnl(ndev);
		if (!in_dev)
			return join ? -ENODEV : 0;
		if (join)
			ip_mc_inc_group(in_dev, mgid->s6_addr32[3]);
		else
			ip_mc_dec_group(in_dev, mgid->s6_addr32[3]);
		return 0;
	}
	if (join)
		return ipv6_dev_mc_inc(ndev, mgid);
	err = ipv6_dev_mc_dec(ndev, mgid);
	if (err)
		sroce_dbg(sdev, "leaving %pI6: %d\n", mgid, err);
	return 0;
}

static struct sroce_mcast_grp *sroce_mcast_grp_create(struct sroce_dev *sdev,
						      const struct in6_addr *mgid)
{
	struct sroce_mcast_grp *grp;
	int err;

	if (sdev->mcast.num_grp >= SROCE_MAX_MCAST_GRP)
		return ERR_PTR(-ENOMEM);
	grp = kzalloc(sizeof(*grp), SROCE_GFP_OBJ);
	if (!grp)
		return ERR_PTR(-ENOMEM);
	err = sroce_mcast_ip(sdev, mgid, true);
	if (err) {
		kfree(grp);
		return ERR_PTR(err);
	}
	grp->mgid = *mgid;
	INIT_LIST_HEAD(&grp->members);
	hash_add_rcu(sdev->mcast.groups, &grp->node, sroce_mcast_hash(mgid));
	sdev->mcast.num_grp++;
	sroce_obj_created(SROCE_OBJ_MCAST);
	sroce_dbg(sdev, "group %pI6 created\n", mgid);
	return grp;
}

static void sroce_mcast_grp_destroy(struct sroce_dev *sdev,
				    struct sroce_mcast_grp *grp)
{
	lockdep_assert_held(&sdev->mcast.lock);
	hash_del_rcu(&grp->node);
	sdev->mcast.num_grp--;
	sroce_mcast_ip(sdev, &grp->mgid, false);
	sroce_dbg(sdev, "group %pI6 destroyed\n", &grp->mgid);
	kfree_rcu(grp, rcu);
	sroce_obj_destroyed(SROCE_OBJ_MCAST);
}

static int sroce_mcast_attach_locked(struct sroce_dev *sdev,
				     struct sroce_qp *qp,
				     const struct in6_addr *mgid)
{
	struct sroce_mcast_grp *grp = sroce_mcast_find(sdev, mgid);
	struct sroce_mcast_member *m = sroce_mcast_member(grp, qp);

	if (m) {
		m->count++;
		return 0;
	}
	if ((grp && grp->num_qp >= SROCE_MAX_MCAST_QP_ATTACH) ||
	    sdev->mcast.num_attach >= SROCE_MAX_TOTAL_MCAST_QP_ATTACH)
		return -ENOMEM;
	m = kzalloc(sizeof(*m), SROCE_GFP_OBJ);
	if (!m)
		return -ENOMEM;
	if (!grp) {
		grp = sroce_mcast_grp_create(sdev, mgid);
		if (IS_ERR(grp)) {
			kfree(m);
			return PTR_ERR(grp);
		}
	}
	m->qp = qp;
	m->handle = qp->handle;
	m->count = 1;
	list_add_tail_rcu(&m->node, &grp->members);
	grp->num_qp++;
	sdev->mcast.num_attach++;
	qp->num_mcast++;
	return 0;
}

static void sroce_mcast_member_remove(struct sroce_dev *sdev,
				      struct sroce_mcast_grp *grp,
				      struct sroce_mcast_member *m)
{
	lockdep_assert_held(&sdev->mcast.lock);
	list_del_rcu(&m->node);
	m->qp->num_mcast--;
	kfree_rcu(m, rcu);
	sdev->mcast.num_attach--;
	if (!--grp->num_qp)
		sroce_mcast_grp_destroy(sdev, grp);
}

static int sroce_mcast_detach_locked(struct sroce_dev *sdev,
				     struct sroce_qp *qp,
				     const struct in6_addr *mgid)
{
	struct sroce_mcast_grp *grp = sroce_mcast_find(sdev, mgid);
	struct sroce_mcast_member *m = sroce_mcast_member(grp, qp);

	if (!m)
		return -EINVAL;
	if (!--m->count)
		sroce_mcast_member_remove(sdev, grp, m);
	return 0;
}

static void sroce_mcast_lock(struct sroce_dev *sdev)
{
	rtnl_lock();
	mutex_lock(&sroce_bind_lock);
	mutex_lock(&sdev->mcast.lock);
}

static void sroce_mcast_unlock(struct sroce_dev *sdev)
{
	mutex_unlock(&sdev->mcast.lock);
	mutex_unlock(&sroce_bind_lock);
	rtnl_unlock();
}

/**
 * sroce_attach_mcast() - ib_device_ops.attach_mcast
 * @ibqp: a UD QP
 * @gid: the multicast GID
 * @lid: unused on RoCE
 *
 * The QP receives the group's datagrams from now on.  The first QP of a
 * group joins its IP group on the netdev.  Attaching a QP again only
 * counts: it stays attached until as many detaches.
 *
 * Context: Process context. May sleep. Takes rtnl_lock, sroce_bind_lock
 * and sdev->mcast.lock.
 * Return: 0; -EINVAL for a QP that is not UD or a GID that is not a
 * multicast address; -ENOMEM past SROCE_MAX_MCAST_GRP groups, past
 * SROCE_MAX_MCAST_QP_ATTACH QPs in the group or past
 * SROCE_MAX_TOTAL_MCAST_QP_ATTACH attachments, or without memory; -ENODEV
 * if the netdev (or its IPv4 configuration) is gone; or the error from
 * joining the IPv6 group.
 */
int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	int err;

	might_sleep();
	/* ib_attach_mcast() checks both; a check is cheap where QPs join. */
	if (ibqp->qp_type != IB_QPT_UD ||
	    !rdma_is_multicast_addr((struct in6_addr *)gid->raw))
		return -EINVAL;
	sroce_mcast_lock(sdev);
	err = sroce_mcast_attach_locked(sdev, qp, (struct in6_addr *)gid->raw);
	sroce_mcast_unlock(sdev);
	sroce_dbg_qp(qp, "attach %pI6: %d\n", gid->raw, err);
	return err;
}

/**
 * sroce_detach_mcast() - ib_device_ops.detach_mcast
 * @ibqp: a UD QP
 * @gid: the multicast GID
 * @lid: unused on RoCE
 *
 * Undoes one sroce_attach_mcast(); the last QP of a group leaves its IP
 * group.
 *
 * Context: Process context. May sleep. Takes rtnl_lock, sroce_bind_lock
 * and sdev->mcast.lock.
 * Return: 0, or -EINVAL if the QP is not attached to the group.
 */
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	int err;

	might_sleep();
	sroce_mcast_lock(sdev);
	err = sroce_mcast_detach_locked(sdev, qp, (struct in6_addr *)gid->raw);
	sroce_mcast_unlock(sdev);
	sroce_dbg_qp(qp, "detach %pI6: %d\n", gid->raw, err);
	return err;
}

/**
 * sroce_mcast_qp_detach_all() - detach a QP being destroyed from every group
 * @qp: the QP; called before the grace period of its destruction
 *
 * ib_core does not destroy an attached QP, so normally there is nothing to
 * do; this keeps the receive path from ever finding a freed QP regardless.
 *
 * Context: Process context. May sleep.
 */
void sroce_mcast_qp_detach_all(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	struct sroce_mcast_member *m, *mtmp;
	struct sroce_mcast_grp *grp;
	struct hlist_node *tmp;
	int bkt;

	if (qp->ibqp.qp_type != IB_QPT_UD || !READ_ONCE(qp->num_mcast))
		return;
	sroce_mcast_lock(sdev);
	hash_for_each_safe(sdev->mcast.groups, bkt, tmp, grp, node) {
		list_for_each_entry_safe(m, mtmp, &grp->members, node) {
			if (m->qp == qp) {
				sroce_mcast_member_remove(sdev, grp, m);
				break;
			}
		}
	}
	sroce_mcast_unlock(sdev);
}

/* The group a received datagram is for: its IP destination. */
static void sroce_mcast_pkt_mgid(const struct sk_buff *skb,
				 struct in6_addr *mgid)
{
	if (skb->protocol == htons(ETH_P_IP))
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr, mgid);
	else
		*mgid = ipv6_hdr(skb)->daddr;
}

/**
 * sroce_mcast_rx() - deliver a datagram for QP 0xffffff to its group
 * @pkt: the packet, validated up to the QP (rx.c); pkt->qp is set to each
 *	attached QP in turn and NULL again on return; the caller keeps the skb
 *
 * Each attached QP checks the packet as if it had been sent to it alone
 * (transport, state, P_Key, then the responder's Q_Key check).  A datagram
 * for a group without QPs on this device is dropped and counted.
 *
 * Context: Softirq, or process context with BH disabled.
 */
void sroce_mcast_rx(struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = pkt->sdev;
	struct sroce_mcast_member *m;
	struct sroce_mcast_grp *grp;
	struct in6_addr mgid;
	struct sroce_qp *qp;
	bool found = false;

	sroce_mcast_pkt_mgid(pkt->skb, &mgid);
	rcu_read_lock();
	hash_for_each_possible_rcu(sdev->mcast.groups, grp, node,
				   sroce_mcast_hash(&mgid)) {
		if (!ipv6_addr_equal(&grp->mgid, &mgid))
			continue;
		list_for_each_entry_rcu(m, &grp->members, node) {
			qp = sroce_qp_handle_get(m->handle);
			if (!qp)
				continue;
			found = true;
			pkt->qp = qp;
			sroce_rx_to_qp(pkt);
			sroce_qp_put(qp);
		}
		break;
	}
	rcu_read_unlock();
	pkt->qp = NULL;
	if (!found)
		sroce_drop_pkt(pkt, SROCE_CNT_RX_DROP_MCAST);
}
