// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * net.c - sroce's attachment to the network stack.
 *
 *  - UDP 4791 sockets, one IPv4 and one IPv6 per network namespace, opened
 *    with the namespace's first sroce device and closed with its last.
 *  - The binding of each device to its lower netdev: a reference on the
 *    netdev, a table from netdev to device for the receive path, and the
 *    netdev notifier that makes the port follow the netdev and tears the
 *    device down when the netdev goes away (or leaves the namespace).
 *  - The receive entry point (encap_rcv of the sockets).
 */
#include <linux/if_arp.h>
#include <linux/rtnetlink.h>
#include <linux/udp.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "hdr.h"
#include "sroce.h"

/**
 * struct sroce_net - sroce's state in one network namespace
 * @lock: protects @users, @sock4 and @sock6; taken under sroce_bind_lock
 * @users: devices bound to a netdev of this namespace
 * @sock4: the IPv4 UDP 4791 socket while @users > 0
 * @sock6: the IPv6-only UDP 4791 socket while @users > 0, or NULL when the
 *	namespace has no IPv6
 */
struct sroce_net {
	struct mutex lock; /* see above; nests inside sroce_bind_lock */
	unsigned int users;
	struct socket *sock4;
	struct socket *sock6;
};

static unsigned int sroce_net_id __read_mostly;

/*
 * sroce_bind_lock serialises binding and unbinding devices and netdevs, and
 * guards every write to the netdev table, sroce_dev.{ndev,snet,bound,
 * registered,port_state,active_mtu}.  Taken under rtnl_lock when both are
 * needed (the notifier runs with rtnl held); never held across calls into
 * ib_core that can block on device unregistration.
 */
DEFINE_MUTEX(sroce_bind_lock);

/* netdev -> bound device; RCU readers, writers hold sroce_bind_lock. */
static DEFINE_HASHTABLE(sroce_ndev_table, 6);

static struct sroce_dev *sroce_net_lookup_rcu(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	hash_for_each_possible_rcu(sroce_ndev_table, sdev, bind_node,
				   (unsigned long)ndev) {
		if (rcu_access_pointer(sdev->ndev) == ndev)
			return sdev;
	}
	return NULL;
}

static struct sroce_dev *sroce_net_lookup_locked(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	lockdep_assert_held(&sroce_bind_lock);
	hash_for_each_possible(sroce_ndev_table, sdev, bind_node,
			       (unsigned long)ndev) {
		if (rcu_access_pointer(sdev->ndev) == ndev)
			return sdev;
	}
	return NULL;
}

/*
 * Nothing past the device lookup exists yet: the receive pipeline (header
 * validation, ICRC, QP demultiplexing) arrives with the queue pairs.  Until
 * then every datagram is counted and dropped.
 */
static void sroce_net_rx(struct sroce_dev *sdev, struct sk_buff *skb)
{
	sroce_count(sdev, SROCE_CNT_RX_PACKETS);
	if (skb->len < sizeof(struct udphdr) + sizeof(struct sroce_bth) +
		       SROCE_ICRC_SIZE)
		sroce_count(sdev, SROCE_CNT_RX_DROP_SHORT);
	else
		sroce_count(sdev, SROCE_CNT_RX_DROP_NO_QP);
	kfree_skb(skb);
}

/* encap_rcv of the UDP 4791 sockets.  Softirq; consumes the skb. */
static int sroce_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct sroce_dev *sdev;

	rcu_read_lock();
	sdev = sroce_net_lookup_rcu(skb->dev);
	if (sdev && ib_device_try_get(&sdev->ibdev)) {
		rcu_read_unlock();
		sroce_net_rx(sdev, skb);
		ib_device_put(&sdev->ibdev);
		return 0;
	}
	rcu_read_unlock();
	sroce_global_count(SROCE_GCNT_RX_NO_DEVICE);
	kfree_skb(skb);
	return 0;
}

static struct socket *sroce_udp_open(struct net *net, int family)
{
	struct udp_tunnel_sock_cfg tnl = {
		.encap_type = 1,
		.encap_rcv = sroce_udp_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.family = family,
		.local_udp_port = htons(ROCE_V2_UDP_DPORT),
		/* RoCEv2 sends a zero UDP checksum; the ICRC covers it. */
		.use_udp6_rx_checksums = 0,
		.ipv6_v6only = family == AF_INET6,
	};
	struct socket *sock;
	int err;

	err = udp_sock_create(net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	sroce_udp_tunnel_setup(net, sock, &tnl);
	return sock;
}

static void sroce_net_close(struct sroce_net *snet)
{
	lockdep_assert_held(&snet->lock);
	if (snet->sock6)
		sroce_udp_tunnel_release(snet->sock6);
	sroce_udp_tunnel_release(snet->sock4);
	snet->sock4 = NULL;
	snet->sock6 = NULL;
	sroce_obj_destroyed(SROCE_OBJ_NETNS_SOCKETS);
}

static int sroce_net_open(struct sroce_net *snet, struct net *net)
{
	struct socket *sock;

	lockdep_assert_held(&snet->lock);
	sock = sroce_udp_open(net, AF_INET);
	if (IS_ERR(sock))
		return PTR_ERR(sock);
	snet->sock4 = sock;

	/* A namespace without IPv6 still carries RoCEv2 over IPv4. */
	sock = sroce_udp_open(net, AF_INET6);
	if (IS_ERR(sock) && PTR_ERR(sock) != -EAFNOSUPPORT) {
		sroce_udp_tunnel_release(snet->sock4);
		snet->sock4 = NULL;
		return PTR_ERR(sock);
	}
	snet->sock6 = IS_ERR(sock) ? NULL : sock;
	sroce_obj_created(SROCE_OBJ_NETNS_SOCKETS);
	return 0;
}

static struct sroce_net *sroce_net_get(struct net *net)
{
	struct sroce_net *snet = net_generic(net, sroce_net_id);
	int err = 0;

	mutex_lock(&snet->lock);
	if (!snet->users)
		err = sroce_net_open(snet, net);
	if (!err)
		snet->users++;
	mutex_unlock(&snet->lock);
	return err ? ERR_PTR(err) : snet;
}

static void sroce_net_put(struct sroce_net *snet)
{
	mutex_lock(&snet->lock);
	if (!--snet->users)
		sroce_net_close(snet);
	mutex_unlock(&snet->lock);
}

static int sroce_net_check_lower(struct net_device *ndev)
{
	struct sroce_dev *other;

	ASSERT_RTNL();
	lockdep_assert_held(&sroce_bind_lock);
	if (ndev->reg_state != NETREG_REGISTERED)
		return -ENODEV;
	if (ndev->type != ARPHRD_ETHER) {
		pr_info_ratelimited("%s: not an Ethernet device\n", ndev->name);
		return -EPROTONOSUPPORT;
	}
	other = sroce_net_lookup_locked(ndev);
	if (other) {
		pr_info_ratelimited("%s: already carries %s\n", ndev->name,
				    dev_name(&other->ibdev.dev));
		return -EEXIST;
	}
	return 0;
}

/**
 * sroce_net_bind() - bind a new device to its lower netdev
 * @sdev: the device, not yet registered
 * @ndev: the netdev; the caller holds a reference for the duration
 *
 * Checks that @ndev can carry sroce, opens the namespace's sockets if this
 * is its first device, takes sroce's own reference on @ndev and publishes
 * the device to the receive path.  The port state is initialised from the
 * netdev; no event is raised before registration.
 *
 * Context: Process context. Takes rtnl_lock and sroce_bind_lock.
 * Return: 0, -ENODEV if @ndev is going away, -EPROTONOSUPPORT if it is not
 * Ethernet, -EEXIST if it already carries an sroce device, or the error
 * from opening UDP port 4791 (-EADDRINUSE if another driver holds it).
 */
int sroce_net_bind(struct sroce_dev *sdev, struct net_device *ndev)
{
	struct sroce_net *snet;
	int err;

	rtnl_lock();
	mutex_lock(&sroce_bind_lock);
	err = sroce_net_check_lower(ndev);
	if (err)
		goto out_unlock;
	snet = sroce_net_get(dev_net(ndev));
	if (IS_ERR(snet)) {
		err = PTR_ERR(snet);
		pr_info_ratelimited("%s: cannot open UDP port %u: %d\n",
				    ndev->name, ROCE_V2_UDP_DPORT, err);
		goto out_unlock;
	}
	sdev->snet = snet;
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	rcu_assign_pointer(sdev->ndev, ndev);
	hash_add_rcu(sroce_ndev_table, &sdev->bind_node, (unsigned long)ndev);
	sdev->bound = true;
	sroce_dev_port_update(sdev, ndev);
out_unlock:
	mutex_unlock(&sroce_bind_lock);
	rtnl_unlock();
	return err;
}

static void sroce_net_unbind_locked(struct sroce_dev *sdev)
{
	struct net_device *ndev;

	lockdep_assert_held(&sroce_bind_lock);
	if (!sdev->bound)
		return;
	ndev = rcu_dereference_protected(sdev->ndev,
					 lockdep_is_held(&sroce_bind_lock));
	hash_del_rcu(&sdev->bind_node);
	RCU_INIT_POINTER(sdev->ndev, NULL);
	sdev->bound = false;
	sroce_net_put(sdev->snet);
	sdev->snet = NULL;
	/*
	 * Receive-path readers that found the device before the unhash only
	 * use it under their own device reference; readers of sdev->ndev are
	 * RCU readers, and the netdev is freed only after an RCU grace period.
	 */
	netdev_put(ndev, &sdev->ndev_tracker);
}

/**
 * sroce_net_unbind() - undo sroce_net_bind(), if it is still in effect
 * @sdev: the device
 *
 * Context: Process context. Takes sroce_bind_lock.
 */
void sroce_net_unbind(struct sroce_dev *sdev)
{
	mutex_lock(&sroce_bind_lock);
	sroce_net_unbind_locked(sdev);
	mutex_unlock(&sroce_bind_lock);
}

/**
 * sroce_net_mark_registered() - note that ib_register_device() completed
 * @sdev: the device
 *
 * From now on the netdev notifier raises port events and unregisters the
 * device if its netdev goes away.  If that already happened while the
 * device was being registered, the caller must unregister it.
 *
 * Context: Process context. Takes sroce_bind_lock.
 * Return: true if the device is still bound to its netdev.
 */
bool sroce_net_mark_registered(struct sroce_dev *sdev)
{
	bool bound;

	mutex_lock(&sroce_bind_lock);
	sdev->registered = true;
	bound = sdev->bound;
	mutex_unlock(&sroce_bind_lock);
	return bound;
}

static void sroce_net_lower_gone(struct sroce_dev *sdev)
{
	lockdep_assert_held(&sroce_bind_lock);
	sroce_dbg(sdev, "lower netdev going away, removing the device\n");
	sroce_net_unbind_locked(sdev);
	if (!sdev->registered)
		return;	/* sroce_dev_newlink() sees !bound and cleans up */
	/*
	 * No reference means the device is already being unregistered (by
	 * "rdma link delete" or rmmod); that path finishes the job.
	 */
	if (ib_device_try_get(&sdev->ibdev)) {
		ib_unregister_device_queued(&sdev->ibdev);
		ib_device_put(&sdev->ibdev);
	}
}

static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct sroce_dev *sdev;

	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
	case NETDEV_UNREGISTER:
		break;
	default:
		return NOTIFY_DONE;
	}

	mutex_lock(&sroce_bind_lock);
	sdev = sroce_net_lookup_locked(ndev);
	if (sdev && event == NETDEV_UNREGISTER)
		sroce_net_lower_gone(sdev);
	else if (sdev)
		sroce_dev_port_update(sdev, ndev);
	mutex_unlock(&sroce_bind_lock);
	return NOTIFY_DONE;
}

static struct notifier_block sroce_netdev_notifier = {
	.notifier_call = sroce_netdev_event,
};

static int __net_init sroce_net_init_ns(struct net *net)
{
	struct sroce_net *snet = net_generic(net, sroce_net_id);

	mutex_init(&snet->lock);
	return 0;
}

/*
 * Every netdev of a dying namespace is unregistered or moved out by the
 * pernet device operations, which run before this subsystem's exit, and
 * each such netdev unbinds its sroce device.  So no device uses the
 * sockets any more here.
 */
static void __net_exit sroce_net_exit_ns(struct net *net)
{
	struct sroce_net *snet = net_generic(net, sroce_net_id);

	WARN_ON_ONCE(snet->users);
	mutex_destroy(&snet->lock);
}

static struct pernet_operations sroce_net_ops = {
	.init = sroce_net_init_ns,
	.exit = sroce_net_exit_ns,
	.id = &sroce_net_id,
	.size = sizeof(struct sroce_net),
};

/**
 * sroce_net_init() - attach sroce to the network stack
 *
 * Context: Process context (module init).
 * Return: 0 or a negative errno.
 */
int sroce_net_init(void)
{
	int err;

	err = register_pernet_subsys(&sroce_net_ops);
	if (err)
		return err;
	err = register_netdevice_notifier(&sroce_netdev_notifier);
	if (err)
		goto err_unregister_pernet;
	return 0;

err_unregister_pernet:
	unregister_pernet_subsys(&sroce_net_ops);
	return err;
}

/**
 * sroce_net_uninit() - detach sroce from the network stack
 *
 * Context: Process context (module exit).
 *
 * Called after every device is gone, so every socket is closed.  The final
 * synchronize_net() waits out receive handlers still running on other
 * CPUs before the module text goes away.
 */
void sroce_net_uninit(void)
{
	unregister_netdevice_notifier(&sroce_netdev_notifier);
	unregister_pernet_subsys(&sroce_net_ops);
	synchronize_net();
}
